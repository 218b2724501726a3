//! Every example kernel in `seeds/kernels/` runs on the reference interpreter and meets the
//! expectations written in its header (`; expect ...` lines, computed independently of
//! lanejit, read by [`lanejit_interp::expect`], as `lanejit run --check` reads them). The
//! root crate's engine harness runs the same kernels on every engine.

use lanejit_interp::asm::assemble;
use lanejit_interp::expect;
use lanejit_interp::interp::{self, Decoded};
use lanejit_interp::machine::{Config, Machine};
use lanejit_interp::result::RunResult;
use std::path::{Path, PathBuf};

/// The example kernels, and the long ones of `seeds/kernels/long/` (which the engine
/// harness runs at VL 32 and 64 only).
fn kernels() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../seeds/kernels");
    let mut v: Vec<PathBuf> = [root.clone(), root.join("long")]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).expect("seeds/kernels exists"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "s"))
        .collect();
    v.sort();
    v
}

#[test]
fn example_kernels_meet_their_expectations() {
    let files = kernels();
    assert!(
        files.len() >= 8,
        "expected at least 8 example kernels, found {}",
        files.len()
    );
    for path in files {
        let name = path.display().to_string();
        let src = std::fs::read_to_string(&path).unwrap();
        let program = assemble(&src, &name).unwrap_or_else(|e| panic!("{e}"));
        let expects = expect::parse(&src, &program).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(expects.len() >= 2, "{name}: needs expectations");
        let mut m = Machine::new(&program, Config::for_program(&program, None)).unwrap();
        let exit = interp::run(&mut m, &Decoded::new(&program.code));
        let r = RunResult::capture(&m, exit, &expect::dumps(&expects));
        for e in &expects {
            if let Err(got) = e.check(&r, &r.dumps) {
                panic!("{name}:{}: expect {}: {got}", e.line, e.text);
            }
        }
    }
}
