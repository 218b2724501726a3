//! cargo-fuzz target `diff`: libFuzzer's bytes drive the program generator
//! (`lanejit::fuzz::generate`); the program runs on every engine and the full snapshots
//! (registers, mask, LC0BASE, trip, memory, tile, trap, retired count) must be identical. On a
//! divergence the case is shrunk and the panic message is the `.s` reproducer that
//! `lanejit fuzz --replay` re-runs.
//!
//! JIT lifetime: `vm::run` builds a fresh `Jit` (and Cranelift module) for every run and frees
//! its code when the run ends, so no module outlives one input and nothing accumulates across
//! libFuzzer iterations; there is no long-lived module to recreate.
#![no_main]

use lanejit::fuzz::{self, generate};
use lanejit::vm::Engine;
use libfuzzer_sys::fuzz_target;

const ENGINES: [Engine; 3] = Engine::ALL;

fuzz_target!(|data: &[u8]| {
    let mut u = arbitrary::Unstructured::new(data);
    let Ok(case) = generate::generate(&mut u) else { return };
    if fuzz::diverges(&case.build(), case.config(), &ENGINES).is_some() {
        let d = fuzz::check_case(&case, &ENGINES).expect("the case diverges");
        panic!(
            "{} and {} diverge after {} instructions ({})\n{}",
            fuzz::engine_name(d.a.0),
            fuzz::engine_name(d.b.0),
            d.first_diff_after,
            fuzz::diff_summary(&d.a.1, &d.b.1),
            fuzz::reproducer(&d)
        );
    }
});
