//! The code cache across runs (`--code-cache DIR`, `lanejit_jit::diskcache`): a second run
//! compiles nothing and agrees with the interpreter; damaged entries are ignored; processes
//! share a directory safely.

use lanejit::fuzz::Snapshot;
use lanejit::vm::{self, Engine, EngineStats, VmOptions};
use lanejit_interp::interp::Decoded;
use lanejit_interp::machine::{Config, Machine};
use lanejit_interp::program::Program;
use lanejit_jit::diskcache::DiskCache;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lanejit-cc-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn run(
    p: &Program,
    cfg: Config,
    engine: Engine,
    cache: Option<&Arc<DiskCache>>,
) -> (Snapshot, EngineStats) {
    let mut m = Machine::new(p, cfg).expect("machine");
    let opts = VmOptions {
        code_cache: cache.cloned(),
        ..VmOptions::foreground(0)
    };
    let (exit, stats) = vm::run(engine, &mut m, &Decoded::new(&p.code), &opts);
    assert_eq!(stats.compile_errors, 0);
    (Snapshot::capture(&m, exit, &[]), stats)
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("cache dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "ljc"))
        .collect();
    v.sort();
    v
}

/// Every example kernel at VL 8 and 32, twice on the jit engine with one cache: the second run
/// compiles nothing, takes every region from the cache, and agrees with the interpreter; then
/// a tiered run (background compiler) with the warm cache runs compiled code at once.
#[test]
fn second_runs_compile_nothing_and_agree() {
    let dir = temp_dir("second");
    let cache = Arc::new(DiskCache::open(&dir).expect("dir"));
    let mut cached = 0;
    for p in crate::all_engines::kernels("kernels") {
        for vl in [8, 32] {
            let cfg = Config::for_program(&p, Some(vl));
            let (reference, _) = run(&p, cfg, Engine::Interp, None);
            let (first, s1) = run(&p, cfg, Engine::Jit, Some(&cache));
            assert_eq!(first, reference);
            let (second, s2) = run(&p, cfg, Engine::Jit, Some(&cache));
            assert_eq!(second, reference);
            assert_eq!(s2.compiled_regions, 0, "{s1:?} then {s2:?}");
            assert_eq!(s2.cached_regions, s1.compiled_regions);
            assert_eq!(s2.jit_retired, s1.jit_retired);
            cached += s2.cached_regions;
            // Tiered with its background compiler: the regions of the manifest are installed
            // before the run, so they run compiled from their first entry.
            let mut m = Machine::new(&p, cfg).expect("machine");
            let opts = VmOptions {
                code_cache: Some(Arc::clone(&cache)),
                // No interpreted start: these short kernels would end within it.
                compile_after: std::time::Duration::ZERO,
                ..VmOptions::default()
            };
            let (exit, s3) = vm::run(Engine::Tiered, &mut m, &Decoded::new(&p.code), &opts);
            assert_eq!(Snapshot::capture(&m, exit, &[]), reference);
            assert_eq!(s3.compiled_regions, 0, "{s3:?}");
            assert!(s1.compiled_regions == 0 || s3.cached_regions > 0, "{s3:?}");
            assert!(s1.compiled_regions == 0 || s3.jit_retired > 0, "{s3:?}");
        }
    }
    assert!(cached > 20, "only {cached} regions came from the cache");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Truncated, corrupted and foreign entries are ignored: the regions are compiled again and
/// the run is still right.
#[test]
fn damaged_entries_are_ignored() {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/seeds/kernels/saxpy.s"
    ))
    .expect("kernel");
    let p = lanejit_interp::asm::assemble(&src, "saxpy.s").expect("assembles");
    let cfg = Config::for_program(&p, Some(8));
    let (reference, _) = run(&p, cfg, Engine::Interp, None);
    let dir = temp_dir("damaged");
    let cache = Arc::new(DiskCache::open(&dir).expect("dir"));
    let (_, s1) = run(&p, cfg, Engine::Jit, Some(&cache));
    assert!(s1.compiled_regions >= 2);
    let files = entries(&dir);
    assert_eq!(files.len() as u64, s1.compiled_regions);
    // Every way of damaging every entry: each run must compile every region again.
    type Damage<'a> = &'a dyn Fn(&[u8]) -> Vec<u8>;
    let damage: [Damage; 4] = [
        &|b| b[..b.len() / 2].to_vec(),
        &|b| {
            let mut b = b.to_vec();
            let n = b.len() / 2;
            b[n] ^= 0x40;
            b
        },
        &|b| {
            let mut b = b.to_vec();
            b[7] ^= 1; // the format version
            b
        },
        &|_| b"not an entry".to_vec(),
    ];
    for (k, d) in damage.iter().enumerate() {
        for f in &files {
            let good = std::fs::read(f).expect("entry");
            std::fs::write(f, d(&good)).expect("damage");
        }
        let fresh = Arc::new(DiskCache::open(&dir).expect("dir"));
        let (got, s) = run(&p, cfg, Engine::Jit, Some(&fresh));
        assert_eq!(got, reference, "damage {k}");
        assert_eq!(s.cached_regions, 0, "damage {k}");
        assert_eq!(s.compiled_regions, s1.compiled_regions, "damage {k}");
        // Each damaged entry is rejected (the manifest's preload may try it first).
        assert!(
            fresh
                .stats
                .rejected
                .load(std::sync::atomic::Ordering::Relaxed)
                >= s1.compiled_regions,
            "damage {k}"
        );
        // The recompiles replaced the damaged entries.
        let (_, again) = run(&p, cfg, Engine::Jit, Some(&fresh));
        assert_eq!(again.cached_regions, s1.compiled_regions, "damage {k}");
    }
    // An entry of another program under this one's name is foreign.
    let other = temp_dir("damaged-other");
    let oc = Arc::new(DiskCache::open(&other).expect("dir"));
    let vadd =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/seeds/kernels/vadd.s"))
            .expect("kernel");
    let q = lanejit_interp::asm::assemble(&vadd, "vadd.s").expect("assembles");
    run(&q, Config::for_program(&q, Some(8)), Engine::Jit, Some(&oc));
    let foreign = entries(&other);
    for (f, g) in files.iter().zip(foreign.iter().cycle()) {
        std::fs::copy(g, f).expect("copy");
    }
    let fresh = Arc::new(DiskCache::open(&dir).expect("dir"));
    let (got, s) = run(&p, cfg, Engine::Jit, Some(&fresh));
    assert_eq!(got, reference);
    assert_eq!(s.cached_regions, 0);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&other);
}

/// Two processes on one cache directory at the same time both finish with the right result,
/// and a third run (the `LANEJIT_CODE_CACHE` variable instead of the flag) compiles nothing.
#[test]
fn processes_share_a_cache_directory() {
    let dir = temp_dir("procs");
    let kernel = concat!(env!("CARGO_MANIFEST_DIR"), "/seeds/kernels/stencil.s");
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_lanejit"))
            .args(["run", kernel, "--engine", "jit", "--json", "--code-cache"])
            .arg(&dir)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("lanejit")
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (
        a.wait_with_output().expect("a"),
        b.wait_with_output().expect("b"),
    );
    assert!(a.status.success() && b.status.success());
    let json = |o: &[u8]| -> serde_json::Value { serde_json::from_slice(o).expect("json") };
    let (ja, jb) = (json(&a.stdout), json(&b.stdout));
    let reference = Command::new(env!("CARGO_BIN_EXE_lanejit"))
        .args(["run", kernel, "--engine", "interp", "--json"])
        .output()
        .expect("lanejit");
    let jr = json(&reference.stdout);
    let result = |j: &serde_json::Value| {
        let mut j = j.clone();
        j.as_object_mut().expect("object").remove("engine_stats");
        j
    };
    assert_eq!(result(&ja), result(&jr));
    assert_eq!(result(&jb), result(&jr));
    let third = Command::new(env!("CARGO_BIN_EXE_lanejit"))
        .args(["run", kernel, "--engine", "jit", "--json"])
        .env("LANEJIT_CODE_CACHE", &dir)
        .output()
        .expect("lanejit");
    let jt = json(&third.stdout);
    assert_eq!(result(&jt), result(&jr));
    assert_eq!(jt["engine_stats"]["compiled_regions"], 0);
    assert!(jt["engine_stats"]["cached_regions"].as_u64() > Some(0));
    // No temporary file is left behind.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name())
        .filter(|n| n.to_string_lossy().starts_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A directory that cannot be created is a bad flag (exit 2), not a panic.
#[test]
fn an_unusable_cache_directory_is_a_bad_flag() {
    let file = temp_dir("file");
    std::fs::write(&file, b"x").expect("file");
    let out = Command::new(env!("CARGO_BIN_EXE_lanejit"))
        .args([
            "run",
            concat!(env!("CARGO_MANIFEST_DIR"), "/seeds/kernels/saxpy.s"),
            "--code-cache",
        ])
        .arg(file.join("sub"))
        .output()
        .expect("lanejit");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--code-cache"));
    let _ = std::fs::remove_file(&file);
}
