//! The `lanejit` command: `run`, `compare`, `debug`, `asm`, `disasm`, `fuzz`, `bench` (see
//! `cli`; what `run` shows beside the contract's result is `inspect`, `compare` is `compare`,
//! the debugger is `debug`; errors are rendered by `diag`). Exit status: 0 halted, 1 trapped,
//! 3 instruction limit, 2 bad input (with a message on stderr and nothing on stdout),
//! 4 an output file could not be written, 5 `run --check` found a failing expectation.

mod cli;
mod compare;
mod debug;
mod diag;
mod fuzz_cli;
mod inspect;
mod userbench;

fn main() {
    std::process::exit(cli::main());
}
