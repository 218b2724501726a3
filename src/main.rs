//! The `lanejit` command: `run`, `asm`, `disasm` (see `cli`). Exit status: 0 halted, 1 trapped,
//! 3 instruction limit, 2 bad input (with a message on stderr and nothing on stdout).

mod cli;

fn main() {
    std::process::exit(cli::main());
}
