//! `lanejit-interp`: the lanejit ISA as an executable specification.
//!
//! This crate owns everything that defines what a lanejit program means, and nothing that is
//! only about running it fast: the ISA table ([`isa`]), the program model ([`program`]), the
//! assembler ([`asm`]), the binary container ([`container`]), the disassembler ([`disasm`]),
//! guest memory and tile space ([`memory`]), the machine state and trap types ([`machine`]),
//! the reference interpreter ([`interp`]), the race checker of multi-group launches
//! ([`races`]), the contract's JSON result ([`result`]), typed views of bytes ([`view`]) and
//! the `; expect` lines of a kernel ([`expect`]) and the line table that maps code words to
//! source lines ([`lines`]).
//! It does not depend on Cranelift; the JIT uses it as its oracle and fallback.
//!
//! # Using it as a library
//!
//! Load a program (assemble source or read a container), configure a machine, run it, and read
//! the result:
//!
//! ```
//! use lanejit_interp::{asm, interp, machine::{Config, Exit, Machine}, result::RunResult};
//!
//! let src = "
//!         .mem  0x1000, 0x1000, rw
//!         .data 0x1000
//! xs:     .word 1, 2, 3, 4, 5
//!         .text
//!         S.LI  s1, xs
//!         S.LI  s2, 5
//!         LOOP  s2
//!         V.LW  [s1, lc0<<2, 0], ->v1     ; contiguous load, sign-extended
//!         V.ADD v2, v2, v1
//!         ENDLOOP
//!         V.REDSUM s3, v2
//!         HALT
//! ";
//! let program = asm::assemble(src, "sum.s").expect("assembles");
//! let mut config = Config::for_program(&program, Some(4)); // VL 4 (overrides any .vl)
//! config.max_instructions = Some(1_000);
//! let mut machine = Machine::new(&program, config).expect("memory map fits");
//! let exit = interp::run(&mut machine, &interp::Decoded::new(&program.code));
//! assert_eq!(exit, Exit::Halted);
//! assert_eq!(machine.regs.s[3], 15);
//! let result = RunResult::capture(&machine, exit, &[]);
//! assert_eq!(result.to_json()["scalars"][3], "0xf");
//! ```

pub mod asm;
pub mod container;
pub mod disasm;
pub mod expect;
pub mod interp;
pub mod isa;
pub mod lines;
pub mod machine;
pub mod memory;
pub mod program;
pub mod races;
pub mod result;
pub mod view;
