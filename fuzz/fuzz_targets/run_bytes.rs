//! cargo-fuzz target `run_bytes`: arbitrary bytes as a container, and arbitrary words as code,
//! never panic the loader or any engine; and on the raw-words program (any encoding, backward
//! branches and all, bounded by a budget) the interpreter, the JIT and the tiered VM agree.
#![no_main]

use lanejit::fuzz;
use lanejit::vm::Engine;
use lanejit_interp::interp::{self, Decoded};
use lanejit_interp::machine::{Config, Machine};
use lanejit_interp::program::{MemPerm, MemRange, Program};
use libfuzzer_sys::fuzz_target;

const ENGINES: [Engine; 3] = Engine::ALL;

fuzz_target!(|data: &[u8]| {
    let config = Config { max_instructions: Some(10_000), ..Config::default() };
    if let Ok(p) = lanejit_interp::container::read(data) {
        if let Ok(mut m) = Machine::new(&p, config) {
            let _ = interp::run(&mut m, &Decoded::new(&p.code));
        }
    }
    // The first byte picks VL and alignment; the rest, 8 bytes a word, is the code.
    let (vl, strict, words) = match data.split_first() {
        Some((&b, rest)) => (1u32 << (b % 7), b & 0x80 != 0, rest),
        None => (32, false, data),
    };
    let code: Vec<u64> = words
        .chunks(8)
        .map(|c| c.iter().rev().fold(0u64, |a, &b| (a << 8) | b as u64))
        .collect();
    let p = Program {
        code,
        mem_map: vec![
            MemRange { start: 0, len: 0x8000, perm: MemPerm::Rw },
            MemRange { start: 0x8000, len: 0x1000, perm: MemPerm::R },
        ],
        ..Program::default()
    };
    let config = Config { vl, strict_align: strict, max_instructions: Some(2_000), ..Config::default() };
    if let Some(((a, sa), (b, sb))) = fuzz::diverges(&p, config, &ENGINES) {
        let n = fuzz::bisect_program(&p, config, a, b);
        panic!(
            "{} and {} diverge after {n} instructions{} ({})\nvl {vl} strict {strict}\n{}",
            fuzz::engine_name(a),
            fuzz::engine_name(b),
            fuzz::describe_inst(&p, config, n),
            fuzz::diff_summary(&sa, &sb),
            lanejit_interp::disasm::disassemble(&p)
        );
    }
});
