//! Launches of many groups (contract section 9): every kernel in `seeds/kernels/groups/` runs
//! on every engine at 1, 2 and 3 threads, meets the expectations in its header (computed by
//! hand, independently of lanejit; read by [`lanejit_interp::expect`], as `lanejit run
//! --check` reads them) and gives the same result, bit for bit, as the interpreter's
//! reference-order run: the JSON object and every mapped page of memory. The jit compiles the
//! same regions at every thread count (its code is shared by the threads).

use lanejit::launch::{LaunchOptions, launch};
use lanejit::vm::{Engine, VmOptions};
use lanejit_interp::asm::assemble;
use lanejit_interp::expect::{self, Expectation};
use lanejit_interp::interp::Decoded;
use lanejit_interp::machine::{Config, Machine};
use lanejit_interp::program::Program;
use lanejit_interp::result::{DumpRequest, RunResult};
use std::path::PathBuf;

fn kernels() -> Vec<PathBuf> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/seeds/kernels/groups");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("seeds/kernels/groups")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "s"))
        .collect();
    v.sort();
    v
}

/// A launch of `p` with `flags` on `engine` (tiered: compile after one entry, so tier-up
/// happens across groups) at `threads`; returns the result and every mapped page after it.
fn run(
    p: &Program,
    flags: &[String],
    dumps: &[DumpRequest],
    engine: Engine,
    threads: usize,
) -> (RunResult, Vec<(u64, Vec<u8>)>, u64) {
    let mut cfg = Config::for_program(p, None);
    let mut check_races = false;
    let mut it = flags.iter();
    while let Some(f) = it.next() {
        match f.as_str() {
            "--check-races" => check_races = true,
            "--max-instructions" => {
                cfg.max_instructions = it.next().and_then(|n| n.parse().ok());
                assert!(cfg.max_instructions.is_some(), "--max-instructions N");
            }
            other => panic!("unknown flag {other} in a kernel's flags"),
        }
    }
    let m = Machine::new(p, cfg).expect("machine");
    let opts = LaunchOptions {
        engine,
        vm: VmOptions::foreground(1),
        groups: p.groups.unwrap_or(1),
        threads,
        check_races,
        timeline: false,
    };
    let (l, m) = launch(m, &Decoded::new(&p.code), dumps, &opts);
    assert_eq!(
        l.stats.compile_errors, 0,
        "a region failed to compile on {engine:?}"
    );
    let pages = m.mem.mapped_pages().map(|(a, b)| (a, b.to_vec())).collect();
    (l.result, pages, l.stats.compiled_regions)
}

fn check(name: &str, r: &RunResult, expects: &[Expectation]) {
    for e in expects {
        if let Err(got) = e.check(r, &r.dumps) {
            panic!("{name}:{}: expect {}: {got}", e.line, e.text);
        }
    }
}

#[test]
fn launch_kernels_meet_their_expectations_on_every_engine_and_thread_count() {
    let files = kernels();
    assert!(files.len() >= 8, "found {} launch kernels", files.len());
    for path in files {
        let name = path.display().to_string();
        let src = std::fs::read_to_string(&path).expect("read");
        let p = assemble(&src, &name).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            p.groups.unwrap_or(1) > 1,
            "{name}: a launch kernel has .groups"
        );
        let expects = expect::parse(&src, &p).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(expects.len() >= 3, "{name}: needs expectations");
        let flags = expect::flags(&src);
        let dumps = expect::dumps(&expects);
        let (reference, ref_pages, _) = run(&p, &flags, &dumps, Engine::Interp, 1);
        check(&name, &reference, &expects);
        let mut jit_regions = None;
        for engine in Engine::ALL {
            for threads in [1, 2, 3] {
                let (r, pages, regions) = run(&p, &flags, &dumps, engine, threads);
                if engine == Engine::Jit && !flags.iter().any(|f| f == "--check-races") {
                    // One JIT serves every thread: a region is compiled once, whatever the
                    // thread count (per-thread JITs would compile it once per thread).
                    assert!(regions > 0, "{name}: the jit compiles");
                    assert_eq!(
                        *jit_regions.get_or_insert(regions),
                        regions,
                        "{name}: regions compiled at {threads} threads"
                    );
                }
                assert_eq!(
                    r.to_json(),
                    reference.to_json(),
                    "{name}: {engine:?} at {threads} threads differs from the reference"
                );
                assert_eq!(r, reference, "{name}: {engine:?} at {threads} threads");
                assert!(
                    pages == ref_pages,
                    "{name}: {engine:?} at {threads} threads: memory differs"
                );
            }
        }
    }
}
