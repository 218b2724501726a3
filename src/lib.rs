//! `lanejit`: the tiered VM ([`vm`]) and launches of many groups on many threads ([`launch`]) on top of the reference interpreter (`lanejit-interp`)
//! and the Cranelift JIT (`lanejit-jit`), the embedding API ([`embed`]: start there to run
//! programs from Rust), plus, with the default `cli` feature, the differential fuzzing
//! support (`fuzz`) and the benchmark kernels and harness (`bench`).

#[cfg(feature = "cli")]
pub mod bench;
pub mod embed;
#[cfg(feature = "cli")]
pub mod fuzz;
pub mod launch;
pub mod pace;
pub mod regions;
pub mod timeline;
pub mod vm;

/// Exit status of a command whose work finished and whose result was printed, but one of
/// whose output files (`run --save`, `bench --plot`/`--readme`, `fuzz --out` reproducers)
/// could not be written.
pub const EXIT_OUTPUT_FAILED: i32 = 4;

/// Exit status of `run --check` when one of the source's `; expect` lines does not hold (the
/// result was printed and every failure reported on stderr).
pub const EXIT_CHECK_FAILED: i32 = 5;
