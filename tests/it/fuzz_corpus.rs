//! The seed corpus, replayed on every engine: the example kernels (`seeds/kernels/`) and every
//! reproducer the fuzzer ever found (`seeds/fuzz/`, each with a `; caught:` line saying what
//! it caught). All of them must give bit-identical snapshots on the interpreter, the JIT and
//! the tiered VM, under the flags of their `; fuzz-config:` line.
//!
//! `seeds/fuzz/open/` holds reproducers of bugs not fixed yet: they are replayed and reported
//! (so a fix shows up in the test output) but not asserted; move a file up to `seeds/fuzz/`
//! once its bug is fixed.

use lanejit::fuzz::{self, Replay};
use lanejit::vm::Engine;
use std::path::{Path, PathBuf};

const ENGINES: [Engine; 3] = Engine::ALL;

fn sources(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = entries
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "s"))
        .collect();
    v.sort();
    v
}

fn replay(path: &Path) -> Replay {
    let src = std::fs::read_to_string(path).expect("readable");
    fuzz::replay(&src, &path.display().to_string(), &ENGINES)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn describe(r: &Replay) -> String {
    match r {
        Replay::Agree(_) => "engines agree".into(),
        Replay::Diverge {
            pair,
            first_diff_after,
            at,
        } => format!(
            "{} and {} diverge after {first_diff_after} instructions{at}: {}",
            fuzz::engine_name(pair.0.0),
            fuzz::engine_name(pair.1.0),
            fuzz::diff_summary(&pair.0.1, &pair.1.1)
        ),
    }
}

#[test]
fn example_kernels_agree_on_every_engine() {
    let files = sources("seeds/kernels");
    assert!(files.len() >= 5, "kernels: {files:?}");
    for f in files {
        let r = replay(&f);
        assert!(
            matches!(r, Replay::Agree(_)),
            "{}: {}",
            f.display(),
            describe(&r)
        );
    }
}

#[test]
fn fuzz_reproducers_agree_on_every_engine() {
    // Empty until the first divergence is found and fixed; every file must then agree.
    for f in sources("seeds/fuzz") {
        let src = std::fs::read_to_string(&f).expect("readable");
        assert!(
            src.lines().any(|l| l.starts_with("; caught:")),
            "{}: a `; caught:` line says what the reproducer caught",
            f.display()
        );
        let r = replay(&f);
        assert!(
            matches!(r, Replay::Agree(_)),
            "{}: {}",
            f.display(),
            describe(&r)
        );
    }
}

/// Open bugs: replayed and reported, not asserted (they must still assemble and run).
#[test]
fn open_reproducers_are_reported() {
    for f in sources("seeds/fuzz/open") {
        eprintln!("open: {}: {}", f.display(), describe(&replay(&f)));
    }
}
