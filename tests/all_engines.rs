//! One harness, every engine: the interpreter's semantic tests (`interp/tests/semantics.rs`),
//! trap tests (`interp/tests/traps.rs`) and every example kernel run here on the interpreter,
//! the JIT (compile on first entry) and the tiered engine (low threshold). Each run compares the
//! full machine state against the interpreter — registers, mask, LC0BASE, trip, pc, retired
//! count, exit/trap, every mapped page and the tile — and hands the interpreter's result back
//! to the test's own assertions.

// Both included files declare `mod support;`: each gets its own copy of the helpers, on purpose.
#![allow(clippy::duplicate_mod)]

#[path = "../interp/tests/semantics.rs"]
mod semantics;
#[path = "../interp/tests/traps.rs"]
mod traps;

use lanejit::vm::{self, Engine, VmOptions};
use lanejit_interp::interp::Decoded;
use lanejit_interp::machine::{Config, Exit, Machine};
use lanejit_interp::program::Program;

/// The full comparable state of a finished run.
#[derive(Debug, PartialEq, Eq)]
struct State {
    exit: Exit,
    pc: u64,
    retired: u64,
    s: [u64; 32],
    v: Vec<Vec<u64>>,
    mask: u64,
    lc0base: u64,
    trip: u64,
    memory: Vec<(u64, Vec<u8>)>,
    tile: Vec<u8>,
}

fn state(m: &Machine, exit: Exit) -> State {
    State {
        exit,
        pc: m.pc,
        retired: m.retired,
        s: m.regs.s,
        v: m.regs.v.iter().map(|l| l[..m.vl()].to_vec()).collect(),
        mask: m.regs.mask,
        lc0base: m.regs.lc0base,
        trip: m.regs.trip,
        memory: m.mem.mapped_pages().map(|(a, b)| (a, b.to_vec())).collect(),
        tile: m.tile.as_bytes().to_vec(),
    }
}

/// Run `prog` on `engine` after `prep`.
fn run_on(
    engine: Engine,
    threshold: u32,
    prog: &Program,
    cfg: Config,
    prep: &dyn Fn(&mut Machine),
) -> (Machine, Exit, vm::EngineStats) {
    let mut m = Machine::new(prog, cfg).expect("machine");
    prep(&mut m);
    let (exit, stats) = vm::run(
        engine,
        &mut m,
        &Decoded::new(&prog.code),
        &VmOptions {
            jit_threshold: threshold,
        },
    );
    assert_eq!(
        stats.compile_errors, 0,
        "a region failed to compile on {engine:?}"
    );
    (m, exit, stats)
}

/// The engines and thresholds every test runs on besides the interpreter.
const OTHERS: [(Engine, u32); 3] = [(Engine::Jit, 0), (Engine::Tiered, 1), (Engine::Tiered, 3)];

/// `Setup::run` of the included tests: every engine, compared with the interpreter.
fn run_setup(prog: &Program, cfg: Config, prep: &dyn Fn(&mut Machine)) -> (Machine, Exit) {
    let (m, exit, _) = run_on(Engine::Interp, 0, prog, cfg, prep);
    let reference = state(&m, exit);
    for (engine, threshold) in OTHERS {
        let (m2, exit2, stats) = run_on(engine, threshold, prog, cfg, prep);
        let got = state(&m2, exit2);
        if got != reference {
            panic!(
                "{engine:?} (threshold {threshold}) diverges from the interpreter\n\
                 reference: exit {:?} pc {:#x} retired {}\n\
                 {engine:?}: exit {:?} pc {:#x} retired {} ({stats:?})\n\
                 first differing field: {}",
                reference.exit,
                reference.pc,
                reference.retired,
                got.exit,
                got.pc,
                got.retired,
                first_difference(&reference, &got)
            );
        }
        assert_eq!(
            stats.jit_retired + stats.interp_retired,
            m2.retired,
            "{engine:?}: every retired instruction is counted by exactly one tier"
        );
    }
    (m, exit)
}

fn first_difference(a: &State, b: &State) -> String {
    if a.exit != b.exit {
        return format!("exit {:?} vs {:?}", a.exit, b.exit);
    }
    if (a.pc, a.retired) != (b.pc, b.retired) {
        return format!(
            "pc/retired {:#x}/{} vs {:#x}/{}",
            a.pc, a.retired, b.pc, b.retired
        );
    }
    if let Some(i) = (0..32).find(|&i| a.s[i] != b.s[i]) {
        return format!("s{i}: {:#x} vs {:#x}", a.s[i], b.s[i]);
    }
    if let Some(i) = (0..32).find(|&i| a.v[i] != b.v[i]) {
        return format!("v{i}: {:x?} vs {:x?}", a.v[i], b.v[i]);
    }
    if (a.mask, a.lc0base, a.trip) != (b.mask, b.lc0base, b.trip) {
        return format!(
            "mask/lc0base/trip {:#x}/{:#x}/{:#x} vs {:#x}/{:#x}/{:#x}",
            a.mask, a.lc0base, a.trip, b.mask, b.lc0base, b.trip
        );
    }
    for ((pa, ba), (_, bb)) in a.memory.iter().zip(&b.memory) {
        if let Some(off) = (0..ba.len()).find(|&k| ba[k] != bb[k]) {
            return format!(
                "memory at {:#x}: {:#x} vs {:#x}",
                pa + off as u64,
                ba[off],
                bb[off]
            );
        }
    }
    if let Some(off) = (0..a.tile.len()).find(|&k| a.tile[k] != b.tile[k]) {
        return format!("tile at {off:#x}: {:#x} vs {:#x}", a.tile[off], b.tile[off]);
    }
    "none".into()
}

/// Every example kernel, on every engine, at every VL and with strict alignment on and off.
#[test]
fn example_kernels_agree_on_every_engine_vl_and_alignment() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/kernels");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "s"))
        .collect();
    files.sort();
    assert!(files.len() >= 8);
    for path in files {
        let src = std::fs::read_to_string(&path).unwrap();
        let prog = lanejit_interp::asm::assemble(&src, &path.display().to_string())
            .unwrap_or_else(|e| panic!("{e}"));
        for vl in [1, 2, 4, 8, 16, 32, 64] {
            for strict_align in [false, true] {
                let cfg = Config {
                    vl,
                    strict_align,
                    ..Config::for_program(&prog, None)
                };
                run_setup(&prog, cfg, &|_| {});
            }
        }
    }
}
