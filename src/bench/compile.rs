//! Region compile latency over whole programs (`lanejit bench --compile-latency FILE|DIR...`):
//! each program runs to its end on the JIT engine (every region compiled on first entry,
//! loop tails included), `rounds` times with a fresh JIT each time, and every region reports
//! the fastest of its compiles (the one least disturbed by other load on the machine). The
//! median over all regions of all programs is the figure issue 3's target names ("median
//! region compile time over the example kernels", run as `--compile-latency seeds/kernels`).

use super::BenchError;
use crate::vm::Dispatcher;
use lanejit_interp::asm::assemble;
use lanejit_interp::interp::Decoded;
use lanejit_interp::machine::{Config, Machine};
use lanejit_jit::{RegionKind, RegionStat};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The compile latency of every region of one program.
#[derive(Clone, Debug)]
pub struct ProgramLatency {
    /// The program's file.
    pub file: PathBuf,
    /// Lanes it ran with (its `.vl`, or the `--vl` given).
    pub vl: u32,
    /// Its regions in compile order, each with its fastest compile time.
    pub regions: Vec<RegionStat>,
}

/// The assembly files named by `paths` (a directory stands for its `*.s` files, sorted).
pub fn program_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, BenchError> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let rd = std::fs::read_dir(p).map_err(|e| io(p, e))?;
            let mut files: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.is_file() && f.extension().is_some_and(|x| x == "s"))
                .collect();
            files.sort();
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn io(p: &Path, e: std::io::Error) -> BenchError {
    BenchError::Io {
        path: p.display().to_string(),
        err: e,
    }
}

/// Measure one program: `rounds` cold JIT runs, the fastest compile of each region.
pub fn measure(file: &Path, vl: Option<u32>, rounds: usize) -> Result<ProgramLatency, BenchError> {
    let src = std::fs::read_to_string(file).map_err(|e| io(file, e))?;
    let name = file.display().to_string();
    let program = assemble(&src, &name).map_err(|e| BenchError::Program {
        file: name.clone(),
        msg: e.to_string(),
    })?;
    let config = Config::for_program(&program, vl);
    let d = Decoded::new(&program.code);
    let mut best: Vec<RegionStat> = Vec::new();
    for _ in 0..rounds.max(1) {
        let mut m = Machine::new(&program, config).map_err(|e| BenchError::Program {
            file: name.clone(),
            msg: e.to_string(),
        })?;
        let mut disp = Dispatcher::new(&d, &m, 0).map_err(|e| BenchError::Jit(e.to_string()))?;
        disp.run(&mut m, &d);
        let regions = disp.jit_stats().regions;
        if best.is_empty() {
            best = regions;
        } else {
            for (b, r) in best.iter_mut().zip(&regions) {
                b.us = b.us.min(r.us);
            }
        }
    }
    Ok(ProgramLatency {
        file: file.to_path_buf(),
        vl: config.vl,
        regions: best,
    })
}

fn kind_name(k: RegionKind) -> &'static str {
    match k {
        RegionKind::Straight => "straight",
        RegionKind::Loop => "loop",
        RegionKind::Tail => "tail",
    }
}

fn median_us(v: &mut [u64]) -> Option<u64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2
    })
}

/// The report: one line per program (its regions), then medians overall and per kind, and
/// the target.
pub fn text(progs: &[ProgramLatency], rounds: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Region compile latency, us (fastest of {rounds} cold runs on the jit engine):"
    );
    for p in progs {
        let _ = write!(s, "{} (VL {}):", p.file.display(), p.vl);
        for r in &p.regions {
            let _ = write!(
                s,
                " {:#x} {} {}i {}B {};",
                r.pc,
                kind_name(r.kind),
                r.insts,
                r.code_bytes,
                r.us
            );
        }
        s.push('\n');
    }
    let all: Vec<&RegionStat> = progs.iter().flat_map(|p| &p.regions).collect();
    for (label, filter) in [
        ("all regions", None),
        ("straight-line", Some(RegionKind::Straight)),
        ("loops", Some(RegionKind::Loop)),
        ("loop tails", Some(RegionKind::Tail)),
    ] {
        let mut v: Vec<u64> = all
            .iter()
            .filter(|r| filter.is_none_or(|k| r.kind == k))
            .map(|r| r.us)
            .collect();
        let n = v.len();
        if let Some(m) = median_us(&mut v) {
            let _ = writeln!(s, "median {label}: {m} us over {n}");
        }
    }
    let mut v: Vec<u64> = all.iter().map(|r| r.us).collect();
    if let Some(m) = median_us(&mut v) {
        let _ = writeln!(
            s,
            "{} median region compile us <= 100: {m}",
            if m <= 100 { "met " } else { "MISS" }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_kernel_reports_every_region_kind() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/kernels");
        let files = program_files(&[dir]).expect("kernel directory");
        assert!(files.iter().any(|f| f.ends_with("copy.s")), "{files:?}");
        let copy = files
            .iter()
            .find(|f| f.ends_with("copy.s"))
            .expect("copy.s");
        let p = measure(copy, None, 1).expect("measures");
        let kinds: Vec<RegionKind> = p.regions.iter().map(|r| r.kind).collect();
        // Prologue, the loop, its tail (70 words at VL 32), the epilogue.
        assert_eq!(
            kinds,
            [
                RegionKind::Straight,
                RegionKind::Loop,
                RegionKind::Tail,
                RegionKind::Straight
            ]
        );
        assert!(p.regions.iter().all(|r| r.code_bytes > 0 && r.insts > 0));
        let t = text(&[p], 1);
        assert!(t.contains("median all regions:"), "{t}");
        assert!(t.contains("0x38 loop"), "{t}");
        assert!(measure(Path::new("/nonexistent.s"), None, 1).is_err());
    }
}
