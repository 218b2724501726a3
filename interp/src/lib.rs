//! `lanejit-interp`: the lanejit ISA as an executable specification.
//!
//! This crate owns everything that defines what a lanejit program means, and nothing that is
//! only about running it fast: the ISA table ([`isa`]), the program model ([`program`]), the
//! binary container ([`container`]), the assembler ([`asm`]) and disassembler ([`disasm`]),
//! the machine state and guest memory ([`machine`], [`memory`]) and the reference interpreter
//! ([`interp`]). It does not depend on Cranelift.

pub mod isa;
pub mod program;
