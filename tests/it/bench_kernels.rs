//! The bench kernels (`seeds/kernels/bench/*.s`) at small sizes: each assembles as written,
//! and on every engine (interpreter, JIT, tiered) gives exactly the output of its plain Rust
//! reference loop, on the same data, at several VLs and at sizes that leave a masked tail.

use lanejit::bench::{DST, IDX, Kernel, Which, Workload, permutation};
use lanejit::vm::{self, Engine, VmOptions};
use lanejit_interp::asm::assemble;
use lanejit_interp::interp::Decoded;
use lanejit_interp::machine::{Config, Exit, Machine};

#[test]
fn every_kernel_file_assembles_and_halts_as_written() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/kernels/bench");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("bench kernel dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "s"))
        .collect();
    files.sort();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let mut expected: Vec<&str> = Kernel::ALL.iter().map(|k| k.name()).collect();
    expected.sort();
    assert_eq!(names, expected, "one file per kernel");
    for k in Kernel::ALL {
        let on_disk = std::fs::read_to_string(dir.join(format!("{}.s", k.name()))).unwrap();
        assert_eq!(on_disk, k.source(), "{} is embedded as on disk", k.name());
        let p = assemble(k.source(), k.name()).unwrap_or_else(|e| panic!("{e}"));
        let mut m = Machine::new(&p, Config::for_program(&p, None)).expect("machine");
        let (exit, _) = vm::run(
            Engine::Interp,
            &mut m,
            &Decoded::new(&p.code),
            &VmOptions::default(),
        );
        assert_eq!(exit, Exit::Halted, "{}", k.name());
        assert!(m.retired > 10, "{}: the loop ran", k.name());
    }
}

#[test]
fn equ_n_is_rewritten() {
    for k in Kernel::ALL {
        let s = k.source_with_n(12345);
        assert!(s.contains(".equ    N, 12345\n"), "{}", k.name());
        assert_eq!(s.matches(".equ    N,").count(), 1);
        assert_eq!(s.lines().count(), k.source().lines().count());
    }
}

#[test]
fn params_and_elements() {
    assert_eq!(Kernel::Copy32.param(16 << 10, 32).unwrap(), 4096);
    assert_eq!(Kernel::Widensum8.param(16 << 10, 32).unwrap(), 16384);
    assert_eq!(Kernel::Strided32.param(16 << 10, 32).unwrap(), 256);
    assert_eq!(Kernel::TileStage.param(16 << 10, 32).unwrap(), 64);
    assert_eq!(Kernel::TileStage.param(64 << 20, 32).unwrap(), 4096);
    assert_eq!(Kernel::TileStage.elements(64), 4096);
    assert!(Kernel::TileStage.param(64, 32).is_err());
    assert!(Kernel::Copy32.param((64 << 20) + 4, 32).is_err());
    // Issue 11's kernels: grid width, outputs, rows, matrix dimension, structs, bytes.
    assert_eq!(Kernel::Stencil5Lc0.param(256 << 10, 32).unwrap(), 256);
    assert_eq!(Kernel::Stencil5Vaddr.param(16 << 20, 32).unwrap(), 2048);
    assert_eq!(Kernel::Stencil5Lc0.elements(256), 254 * 254);
    assert!(Kernel::Stencil5Lc0.param(32, 32).is_err());
    assert_eq!(Kernel::Fir8Lc0.param(256 << 10, 32).unwrap(), 65536 - 7);
    assert!(Kernel::Fir8Vaddr.param(28, 32).is_err());
    assert_eq!(Kernel::SpmvCsr.param(48 << 10, 32).unwrap(), 1024);
    let nnz = Kernel::SpmvCsr.elements(1024);
    assert!((8 * 1024..=16 * 1024).contains(&nnz), "{nnz}");
    for size in [256 << 10, 16 << 20, 64 << 20] {
        assert_eq!(Kernel::Matmul256.param(size, 32).unwrap(), 256);
    }
    assert_eq!(Kernel::Matmul256.param(4096, 32).unwrap(), 32);
    assert_eq!(Kernel::Matmul256.elements(256), 1 << 24);
    assert!(Kernel::Matmul256.param(1000, 32).is_err());
    assert_eq!(Kernel::Lut32.param(16 << 20, 32).unwrap(), 4 << 20);
    assert_eq!(Kernel::AosSoaVaddr.param(16 << 20, 32).unwrap(), 1 << 20);
    assert_eq!(Kernel::Dot8.param(256 << 10, 32).unwrap(), 256 << 10);
    for k in Kernel::ALL {
        assert_eq!(Kernel::from_name(k.name()).unwrap(), k);
    }
    assert!(Kernel::from_name("nope").is_err());
    assert_eq!(Kernel::from_name("tile_stage").unwrap(), Kernel::TileStage);
}

#[test]
fn permutation_is_a_permutation() {
    for n in [1u64, 2, 1003, 4096] {
        let mut p = permutation(n);
        assert_eq!(p.len() as u64, n);
        p.sort_unstable();
        assert!(p.iter().enumerate().all(|(i, &v)| i as u32 == v), "n = {n}");
    }
    // Not the identity: consecutive lanes are far apart.
    let p = permutation(4096);
    assert!(p[1].abs_diff(p[0]) > 1000);
}

/// Every engine against the native loop (Workload::verify fails on any byte of difference).
#[test]
fn engines_match_native_at_small_sizes() {
    for k in Kernel::ALL {
        for (size, vl) in [(4096, 32), (4012, 8), (4012, 32), (4096, 1), (16384, 64)] {
            if k == Kernel::TileStage && k.param(size, vl).is_err() {
                continue; // fewer than VL rows (4012 bytes at VL 32)
            }
            let mut w = Workload::new(k, size, vl).unwrap_or_else(|e| panic!("{e}"));
            w.verify().unwrap_or_else(|e| panic!("{e}"));
            // Timed runs (no restore between them) keep halting on every engine.
            for e in [Which::Interp, Which::Jit, Which::Native] {
                w.run(e).unwrap_or_else(|err| panic!("{err}"));
            }
        }
    }
}

/// The lc0 and vector-address forms of a kernel compute the same output from the same data.
#[test]
fn both_forms_give_the_same_output() {
    for (a, b) in [
        (Kernel::Stencil5Lc0, Kernel::Stencil5Vaddr),
        (Kernel::Fir8Lc0, Kernel::Fir8Vaddr),
        (Kernel::Fir8Lc0, Kernel::Fir8Taps),
        (Kernel::Fir8Lc0, Kernel::Fir8Bump),
        (Kernel::AosSoaLc0, Kernel::AosSoaVaddr),
    ] {
        let out = |k: Kernel| {
            let mut w = Workload::new(k, 8192, 16).unwrap();
            w.verify().unwrap();
            let len = 8192;
            w.machine().mem.bytes(DST, len).unwrap().to_vec()
        };
        let (x, y) = (out(a), out(b));
        assert!(x.iter().any(|&b| b != 0), "{}", a.name());
        assert_eq!(x, y, "{} vs {}", a.name(), b.name());
    }
}

/// lut32's 4 MiB table holds data on every page (an untouched guest page would read the
/// host's zero page and flatter every engine).
#[test]
fn the_lookup_table_is_filled() {
    let w = Workload::new(Kernel::Lut32, 4096, 32).unwrap();
    let table = w.machine().mem.bytes(IDX, 4 << 20).unwrap();
    assert!(table.chunks(4096).all(|p| p.iter().any(|&b| b != 0)));
}

#[test]
fn jit_compiles_the_loop_and_runs_it_natively() {
    for k in Kernel::ALL {
        let mut w = Workload::new(k, 4096, 32).unwrap();
        w.verify().unwrap();
        assert!(!w.compile_times_us.is_empty(), "{}", k.name());
        let stats = w.jit_runner().stats();
        assert!(stats.compiled_regions >= 1, "{}", k.name());
        // The dispatcher compiles regions at their starts; the JIT adds loop tails and hot
        // recompiles of straight-line code on its own.
        assert!(
            w.jit_runner().compiled_pcs().len() as u64 <= stats.compiled_regions,
            "{}",
            k.name()
        );
        assert_eq!(
            stats.regions.len() as u64,
            stats.compiled_regions,
            "{}",
            k.name()
        );
    }
}
