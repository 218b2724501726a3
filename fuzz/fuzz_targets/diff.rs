//! cargo-fuzz target `diff`: libFuzzer's bytes drive the program generator; the program runs
//! on every engine and the full snapshots must be identical.
#![no_main]

use lanejit::fuzz::{self, generate};
use lanejit::vm::Engine;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut u = arbitrary::Unstructured::new(data);
    let Ok(case) = generate::generate(&mut u) else { return };
    let program = case.build();
    if let Some(((a, sa), (b, sb))) =
        fuzz::diverges(&program, case.config(), &[Engine::Interp, Engine::Jit, Engine::Tiered])
    {
        panic!(
            "{} and {} diverge\n{}\n{}\n{}",
            fuzz::engine_name(a),
            fuzz::engine_name(b),
            sa.result.to_json(),
            sb.result.to_json(),
            lanejit_interp::disasm::disassemble(&program)
        );
    }
});
