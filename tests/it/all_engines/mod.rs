//! One harness, every engine: the interpreter's semantic tests (`interp/tests/semantics.rs`),
//! trap tests (`interp/tests/traps.rs`) and every example kernel run here on the interpreter,
//! the JIT (compile on first entry) and the tiered engine (low thresholds; compiling in the
//! foreground, and in the background with the compiler thread delayed at random). Each run
//! compares the
//! full machine state against the interpreter — registers, mask, LC0BASE, trip, pc, retired
//! count, exit/trap, every mapped page and the tile — and hands the interpreter's result back
//! to the test's own assertions.

// Both included files declare `mod support;`: each gets its own copy of the helpers, on purpose.
#![allow(clippy::duplicate_mod)]

#[path = "../../../interp/tests/semantics.rs"]
mod semantics;
#[path = "../../../interp/tests/traps.rs"]
mod traps;

use lanejit::fuzz::{self, Snapshot};
use lanejit::vm::{self, Engine, VmOptions};
use lanejit_interp::interp::Decoded;
use lanejit_interp::machine::{Config, Exit, Machine};
use lanejit_interp::program::Program;

/// Run `prog` on `engine` after `prep`.
fn run_on(
    engine: Engine,
    vm: VmOptions,
    prog: &Program,
    cfg: Config,
    prep: &dyn Fn(&mut Machine),
) -> (Machine, Exit, vm::EngineStats) {
    let mut m = Machine::new(prog, cfg).expect("machine");
    prep(&mut m);
    let (exit, stats) = vm::run(engine, &mut m, &Decoded::new(&prog.code), &vm);
    assert_eq!(
        stats.compile_errors, 0,
        "a region failed to compile on {engine:?}"
    );
    (m, exit, stats)
}

/// The engines and options every test runs on besides the interpreter.
fn others() -> [(Engine, VmOptions); 6] {
    [
        (Engine::Jit, VmOptions::foreground(0)),
        (Engine::Tiered, VmOptions::foreground(1)),
        (Engine::Tiered, VmOptions::foreground(3)),
        // A background compiler whose compiles finish at random points of the run.
        (
            Engine::Tiered,
            VmOptions {
                jit_threshold: 1,
                background: true,
                compile_delay_seed: Some(0x13),
                code_cache: None,
                observer: None,
                compile_after: std::time::Duration::ZERO,
                quick_loops: false,
                step_loops: false,
            },
        ),
        // Loops on their quick (baseline) code only, as a background tier runs them first.
        (
            Engine::Tiered,
            VmOptions {
                quick_loops: true,
                ..VmOptions::foreground(1)
            },
        ),
        // The same, strip-mined loops that step on their step's code (`Baseline::steps`).
        (
            Engine::Tiered,
            VmOptions {
                quick_loops: true,
                step_loops: true,
                ..VmOptions::foreground(1)
            },
        ),
    ]
}

/// `Setup::run` of the included tests: every engine, compared with the interpreter.
pub(crate) fn run_setup(
    prog: &Program,
    cfg: Config,
    prep: &dyn Fn(&mut Machine),
) -> (Machine, Exit) {
    let (m, exit, _) = run_on(Engine::Interp, VmOptions::foreground(0), prog, cfg, prep);
    let reference = Snapshot::capture(&m, exit, &[]);
    for (engine, vm) in others() {
        let (m2, exit2, stats) = run_on(engine, vm.clone(), prog, cfg, prep);
        let got = Snapshot::capture(&m2, exit2, &[]);
        if got != reference {
            panic!(
                "{engine:?} ({vm:?}) diverges from the interpreter\n\
                 reference: exit {exit:?} pc {:#x} retired {}\n\
                 {engine:?}: exit {exit2:?} pc {:#x} retired {} ({stats:?})\n\
                 differs: {}",
                reference.result.pc,
                reference.result.instructions,
                got.result.pc,
                got.result.instructions,
                fuzz::diff_summary(&reference, &got)
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

/// The assembled kernels of `seeds/<sub>` (sorted by file name).
pub(crate) fn kernels(sub: &str) -> Vec<Program> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("seeds")
        .join(sub);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "s"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|path| {
            let src = std::fs::read_to_string(path).unwrap();
            lanejit_interp::asm::assemble(&src, &path.display().to_string())
                .unwrap_or_else(|e| panic!("{e}"))
        })
        .collect()
}

/// The long kernels (`seeds/kernels/long/`: millions of elements, too many for VL 1 in a
/// debug build), on every engine at VL 32 and 64, the VLs whose lanes fill whole vectors.
#[test]
fn long_kernels_agree_on_every_engine_at_vl_32_and_64() {
    let progs = kernels("kernels/long");
    assert!(!progs.is_empty());
    for prog in progs {
        for vl in [32, 64] {
            let cfg = Config {
                vl,
                ..Config::for_program(&prog, None)
            };
            run_setup(&prog, cfg, &|_| {});
        }
    }
}

/// Every example kernel, on every engine, at every VL and with strict alignment on and off.
#[test]
fn example_kernels_agree_on_every_engine_vl_and_alignment() {
    let progs = kernels("kernels");
    assert!(progs.len() >= 8);
    for prog in progs {
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
