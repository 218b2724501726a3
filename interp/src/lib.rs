//! `lanejit-interp`: the lanejit ISA as an executable specification.
//!
//! This crate owns everything that defines what a lanejit program means, and nothing that is
//! only about running it fast: the ISA table ([`isa`]), the program model ([`program`]), the
//! guest memory and tile space ([`memory`]), the machine state and trap types ([`machine`]).
//! It does not depend on Cranelift.

pub mod asm;
pub mod container;
pub mod disasm;
pub mod interp;
pub mod isa;
pub mod machine;
pub mod memory;
pub mod program;
pub mod result;
