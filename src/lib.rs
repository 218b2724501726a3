//! `lanejit`: the tiered VM ([`vm`]) on top of the reference interpreter (`lanejit-interp`)
//! and the Cranelift JIT (`lanejit-jit`), plus the differential fuzzing support ([`fuzz`])
//! and the benchmark kernels and harness ([`bench`]).

pub mod bench;
pub mod fuzz;
pub mod vm;
