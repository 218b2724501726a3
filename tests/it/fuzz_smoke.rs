//! Smoke run of the differential fuzzer (issue 4): 3000 generated cases (a fixed seed, so the
//! same cases every run) on the interpreter, the JIT and the tiered VM, with zero divergences.
//! About a sixth of them are launches of 2 to 4 groups, compared in reference order and, when
//! race-free, at 2 and 3 threads as well (see `lanejit::fuzz`).
//! A divergence fails the test with its shrunk reproducer; save it in `seeds/fuzz/` (with a
//! `; caught:` line) so `tests/it/fuzz_corpus.rs` keeps it as a regression test.

use lanejit::fuzz;
use lanejit::vm::Engine;

/// Cases per run: enough to hit every trap kind many times over, bounded to a couple of
/// minutes in the debug test profile on two cores. `LANEJIT_FUZZ_SMOKE_CASES` overrides it
/// (for a longer local run, or to time a shorter one).
const CASES: u64 = 3000;
/// The smoke run's campaign seed.
const SEED: u64 = 0x5eed_0004;

#[test]
fn three_thousand_generated_cases_agree_on_every_engine() {
    let cases = std::env::var("LANEJIT_FUZZ_SMOKE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES);
    let engines = Engine::ALL;
    let divergences = fuzz::campaign(SEED, cases, &engines, &|_| {}, &|_, _| {});
    let report: Vec<String> = divergences
        .iter()
        .take(3)
        .map(|(i, d)| format!("case {i}:\n{}", fuzz::reproducer(d)))
        .collect();
    assert!(
        divergences.is_empty(),
        "{} of {cases} cases diverge (seed {SEED:#x}); first reproducers:\n{}",
        divergences.len(),
        report.join("\n")
    );
}
