//! cargo-fuzz target `run_bytes`: arbitrary bytes as a container, and arbitrary words as code,
//! never panic the loader or the interpreter.
#![no_main]

use lanejit_interp::interp::{self, Decoded};
use lanejit_interp::machine::{Config, Machine};
use lanejit_interp::program::{MemPerm, MemRange, Program};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let config = Config { max_instructions: Some(10_000), ..Config::default() };
    if let Ok(p) = lanejit_interp::container::read(data) {
        if let Ok(mut m) = Machine::new(&p, config) {
            let _ = interp::run(&mut m, &Decoded::new(&p.code));
        }
    }
    let code: Vec<u64> = data
        .chunks(8)
        .map(|c| c.iter().rev().fold(0u64, |a, &b| (a << 8) | b as u64))
        .collect();
    let p = Program {
        code,
        mem_map: vec![MemRange { start: 0, len: 0x10000, perm: MemPerm::Rw }],
        ..Program::default()
    };
    let mut m = Machine::new(&p, config).expect("a small map always fits");
    let _ = interp::run(&mut m, &Decoded::new(&p.code));
});
