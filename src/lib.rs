//! The `lanejit` crate: the tiered VM ([`vm`]) that runs programs on the interpreter and the
//! JIT, and the differential fuzzer ([`fuzz`]). The `lanejit` binary's CLI is in `main.rs`.

pub mod fuzz;
pub mod vm;
