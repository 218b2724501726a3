//! `lanejit bench FILE...`: time the user's own kernels on every engine. Each repetition is a
//! whole run from the reset state (machine set-up excluded), after one warm-up run, on one of
//! the engines of [`BenchEngine`]: `interp`; `jit` and `tiered` cold, as one `lanejit run` pays
//! them (a fresh JIT per run, its compiles included); `jit-warm`, the JIT in steady state (one
//! JIT kept across the runs, every region compiled in the warm-up run, as the suite's jit
//! column); `tiered+cache`, tiered with a code cache the warm-up run filled (what a second
//! `lanejit run --code-cache DIR` costs, in a warm process). The report gives min, median and
//! max, a 95% confidence interval of the median (percentile bootstrap, as criterion computes
//! its intervals, with a fixed seed), instructions and elements per second when the kernel's
//! element count is known (`--elements N`, or a `; bench: elements=VALUE` line whose VALUE is a
//! number or an `.equ` name, so `--set` changes it), and the median compile time inside a run.
//! Progress goes to stderr: a bar on a terminal, a line per measurement otherwise.
//! `--save-baseline NAME` stores the medians, `--baseline NAME` compares with stored ones as a
//! change in percent; baselines are JSON files in `.lanejit-baselines/` under the current
//! directory. `--json` prints the measurements in the baseline's (serde-derived) form instead
//! of the table.

use crate::cli::{CliError, ProgramArgs, Setup};
use lanejit::bench::{JitRunner, TempCodeCache, median};
use lanejit::vm::{self, Engine, VmOptions};
use lanejit_interp::interp::Decoded;
use lanejit_interp::machine::Machine;
use rand::{Rng as _, SeedableRng as _};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The directory baselines live in (under the current directory).
pub const BASELINE_DIR: &str = ".lanejit-baselines";

/// What a user kernel is timed on (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchEngine {
    /// `vm::run` on the engine, cold: a fresh JIT per run, compiles included.
    Cold(Engine),
    /// The JIT in steady state: one JIT kept across the runs (compiles in the warm-up run).
    JitWarm,
    /// Tiered with a code cache of its own, filled by the warm-up run.
    TieredCache,
}

impl BenchEngine {
    /// Every engine, in report order (the default).
    pub const ALL: [BenchEngine; 5] = [
        BenchEngine::Cold(Engine::Interp),
        BenchEngine::Cold(Engine::Jit),
        BenchEngine::JitWarm,
        BenchEngine::Cold(Engine::Tiered),
        BenchEngine::TieredCache,
    ];

    /// The name on the command line and in reports and baselines.
    pub const fn name(self) -> &'static str {
        match self {
            BenchEngine::Cold(e) => e.name(),
            BenchEngine::JitWarm => "jit-warm",
            BenchEngine::TieredCache => "tiered+cache",
        }
    }

    /// The engine named `s` (case-insensitive).
    pub fn parse(s: &str) -> Option<BenchEngine> {
        Self::ALL
            .into_iter()
            .find(|e| e.name().eq_ignore_ascii_case(s.trim()))
    }
}

/// One engine's state across the runs of one kernel.
enum Runner {
    Cold(Engine),
    /// `None` without a code generator for this host (the interpreter runs instead, as
    /// `vm::run` does).
    Warm(Option<Box<JitRunner>>),
    Cached(TempCodeCache),
}

impl Runner {
    /// The state of `e` for `setup`'s program, decoded as `d` (a machine is made only for
    /// the JIT kept across runs, which takes its configuration).
    fn new(e: BenchEngine, setup: &Setup, d: &Decoded) -> Result<Runner, CliError> {
        Ok(match e {
            BenchEngine::Cold(engine) => Runner::Cold(engine),
            BenchEngine::JitWarm => {
                let m = setup.machine()?;
                Runner::Warm(JitRunner::new(d, &m, 0).ok().map(Box::new))
            }
            BenchEngine::TieredCache => {
                Runner::Cached(TempCodeCache::new().map_err(|e| CliError::BadFlag(e.to_string()))?)
            }
        })
    }

    /// Run `m` to its end: the compile time inside the run, seconds (`None` on the
    /// interpreter).
    fn run(&mut self, m: &mut Machine, d: &Decoded, opts: &VmOptions) -> Option<f64> {
        let us = match self {
            Runner::Cold(Engine::Interp) | Runner::Warm(None) => {
                let _ = vm::run(Engine::Interp, m, d, opts);
                return None;
            }
            Runner::Cold(engine) => vm::run(*engine, m, d, opts).1.compile_us,
            Runner::Warm(Some(jit)) => {
                let before = jit.stats().compile_us;
                let _ = jit.run(m, d);
                jit.stats().compile_us - before
            }
            Runner::Cached(c) => vm::run(Engine::Tiered, m, d, c.opts()).1.compile_us,
        };
        Some(us as f64 * 1e-6)
    }
}

/// What `bench FILE...` measures.
#[derive(Clone, Debug)]
pub struct UserBench {
    /// The kernels.
    pub files: Vec<PathBuf>,
    /// `.equ` overrides for every kernel.
    pub set: Vec<(String, String)>,
    /// Element count for every kernel (else each file's `; bench:` line).
    pub elements: Option<u64>,
    /// Engines.
    pub engines: Vec<BenchEngine>,
    /// Repetitions per engine.
    pub reps: usize,
    /// VL (else each program's own).
    pub vl: Option<u32>,
    /// Save the medians under this name.
    pub save_baseline: Option<String>,
    /// Compare with this saved baseline.
    pub baseline: Option<String>,
    /// Print the measurements as JSON (a [`Baseline`] named `run`) instead of the table.
    pub json: bool,
}

/// One kernel on one engine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// The kernel's file as given.
    pub file: String,
    /// The engine.
    pub engine: String,
    /// Seconds per run: every repetition.
    pub samples: Vec<f64>,
    /// Fastest run, seconds.
    pub min: f64,
    /// Median run, seconds.
    pub median: f64,
    /// Slowest run, seconds.
    pub max: f64,
    /// 95% confidence interval of the median, seconds.
    pub ci: (f64, f64),
    /// Retired instructions per run.
    pub instructions: u64,
    /// Elements per run, when known.
    pub elements: Option<u64>,
    /// Median compile time inside a run, seconds (`None` on the interpreter and in baselines
    /// saved before it was measured).
    #[serde(default)]
    pub compile: Option<f64>,
}

/// A saved baseline: the measurements of one `bench FILE...` run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// Its name.
    pub name: String,
    /// What was measured.
    pub measurements: Vec<Measurement>,
}

/// The element count of a kernel: `; bench: elements=VALUE`, VALUE a number or an `.equ`.
fn elements_of(src: &str, equs: &[(String, i128)], name: &str) -> Result<Option<u64>, CliError> {
    for (i, line) in src.lines().enumerate() {
        let Some(rest) = line.trim().strip_prefix("; bench:") else {
            continue;
        };
        let bad =
            |why: String| CliError::BadFlag(format!("{name}:{}: `{}`: {why}", i + 1, line.trim()));
        let value = rest
            .trim()
            .strip_prefix("elements=")
            .ok_or_else(|| bad("expected `; bench: elements=VALUE`".into()))?
            .trim();
        let v = match crate::cli::parse_u64(value) {
            Ok(v) => v,
            Err(_) => {
                let v = equs
                    .iter()
                    .find(|(n, _)| n == value)
                    .map(|&(_, v)| v)
                    .ok_or_else(|| bad(format!("`{value}` is neither a number nor an .equ")))?;
                u64::try_from(v).map_err(|_| bad(format!("`{value}` is {v}")))?
            }
        };
        return Ok(Some(v));
    }
    Ok(None)
}

/// A 95% percentile-bootstrap confidence interval of the median of `v` (1000 resamples,
/// seeded, so the same samples give the same interval).
pub fn bootstrap_ci(v: &[f64]) -> (f64, f64) {
    if v.len() < 2 {
        let x = v.first().copied().unwrap_or(0.0);
        return (x, x);
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed);
    let mut medians: Vec<f64> = (0..1000)
        .map(|_| {
            let resample: Vec<f64> = (0..v.len())
                .map(|_| v[rng.random_range(0..v.len())])
                .collect();
            median(&resample)
        })
        .collect();
    medians.sort_by(f64::total_cmp);
    (medians[25], medians[974])
}

fn baseline_path(name: &str) -> Result<PathBuf, CliError> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        || name.starts_with('.')
    {
        return Err(CliError::BadFlag(format!(
            "baseline name `{name}`: use letters, digits, `-`, `_` and `.`"
        )));
    }
    Ok(Path::new(BASELINE_DIR).join(format!("{name}.json")))
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CliError + '_ {
    move |err| CliError::Io {
        path: path.display().to_string(),
        err,
    }
}

/// Run the benchmark and print the report; returns the exit status.
pub fn run(b: &UserBench) -> Result<i32, CliError> {
    // Everything that can fail on input fails before anything is measured.
    let base = match &b.baseline {
        Some(name) => {
            let path = baseline_path(name)?;
            let text = std::fs::read_to_string(&path).map_err(io(&path))?;
            let base: Baseline = serde_json::from_str(&text).map_err(|e| {
                CliError::BadFlag(format!("{}: not a lanejit baseline: {e}", path.display()))
            })?;
            Some(base)
        }
        None => None,
    };
    let save = b.save_baseline.as_deref().map(baseline_path).transpose()?;
    let mut setups = Vec::new();
    for f in &b.files {
        let prog = ProgramArgs::for_bench(f, &b.set, b.vl);
        let setup = Setup::new(&prog, &[])?;
        let elements = match (b.elements, &setup.source) {
            (Some(n), _) => Some(n),
            (None, Some((src, map))) => elements_of(src, &map.equs, &setup.name)?,
            (None, None) => None,
        };
        setup.machine()?;
        setups.push((f.display().to_string(), setup, elements));
    }

    let steps = (setups.len() * b.engines.len()) as u64;
    let bar = indicatif::ProgressBar::new(steps);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let plain = bar.is_hidden();
    let mut results = Vec::new();
    let opts = VmOptions::default();
    for (file, setup, elements) in &setups {
        let decoded = Decoded::new(&setup.program.code);
        for &engine in &b.engines {
            bar.set_message(format!("{file} on {}", engine.name()));
            let mut instructions = 0;
            let mut samples = Vec::with_capacity(b.reps);
            let mut compiles = Vec::with_capacity(b.reps);
            let mut runner = Runner::new(engine, setup, &decoded)?;
            for rep in 0..=b.reps {
                let mut m = setup.machine()?;
                let start = std::time::Instant::now();
                let compile = runner.run(&mut m, &decoded, &opts);
                let secs = start.elapsed().as_secs_f64();
                // A tiered run's compile left in hand finishes untimed before the next run
                // (with a code cache, it goes to the cache).
                vm::wait_for_compilers();
                instructions = m.retired;
                // Repetition 0 warms up (page faults, caches; jit-warm's compiles, the code
                // cache's entries).
                if rep > 0 {
                    samples.push(secs);
                    compiles.extend(compile);
                }
            }
            drop(runner);
            bar.inc(1);
            let sorted = {
                let mut s = samples.clone();
                s.sort_by(f64::total_cmp);
                s
            };
            let meas = Measurement {
                file: file.clone(),
                engine: engine.name().into(),
                min: sorted[0],
                median: median(&samples),
                max: sorted[sorted.len() - 1],
                ci: bootstrap_ci(&samples),
                samples,
                instructions,
                elements: *elements,
                compile: (!compiles.is_empty()).then(|| median(&compiles)),
            };
            if plain {
                eprintln!(
                    "bench: {file} on {}: median {}",
                    engine.name(),
                    crate::inspect::duration(meas.median)
                );
            }
            results.push(meas);
        }
    }
    bar.finish_and_clear();
    if b.json {
        let all = Baseline {
            name: "run".into(),
            measurements: results.clone(),
        };
        println!("{}", serde_json::to_string(&all).unwrap_or_default());
    } else {
        print!("{}", report(&results, base.as_ref()));
    }
    if let Some(path) = save {
        let name = b.save_baseline.clone().unwrap_or_default();
        let text = serde_json::to_string_pretty(&Baseline {
            name,
            measurements: results,
        })
        .map_err(|e| CliError::BadFlag(format!("cannot serialize the baseline: {e}")))?;
        let written =
            std::fs::create_dir_all(BASELINE_DIR).and_then(|()| std::fs::write(&path, text + "\n"));
        if let Err(e) = written {
            crate::diag::error(&format!(
                "{}: {e} (the benchmarks finished; the report is above)",
                path.display()
            ));
            return Ok(lanejit::EXIT_OUTPUT_FAILED);
        }
        eprintln!("bench: baseline saved to {}", path.display());
    }
    Ok(0)
}

/// The report table.
pub fn report(results: &[Measurement], base: Option<&Baseline>) -> String {
    use crate::inspect::{duration, rate};
    let mut s = String::new();
    let kw = results
        .iter()
        .map(|m| m.file.len())
        .max()
        .unwrap_or(0)
        .max(6);
    let _ = write!(
        s,
        "{:<kw$} {:<12} {:>10} {:>10} {:>10} {:>23} {:>12} {:>11} {:>10}",
        "kernel",
        "engine",
        "min",
        "median",
        "max",
        "95% CI of median",
        "instr/s",
        "elements/s",
        "compile"
    );
    if base.is_some() {
        s.push_str("  vs baseline");
    }
    s.push('\n');
    for m in results {
        let per = |n: u64| rate(n as f64 / m.median.max(1e-12));
        let ci = format!("{} .. {}", duration(m.ci.0), duration(m.ci.1));
        let _ = write!(
            s,
            "{:<kw$} {:<12} {:>10} {:>10} {:>10} {:>23} {:>12} {:>11} {:>10}",
            m.file,
            m.engine,
            duration(m.min),
            duration(m.median),
            duration(m.max),
            ci,
            per(m.instructions),
            m.elements.map_or("-".to_string(), per),
            m.compile.map_or("-".to_string(), duration)
        );
        if let Some(b) = base {
            let old = b
                .measurements
                .iter()
                .find(|o| o.file == m.file && o.engine == m.engine);
            match old {
                Some(o) if o.median > 0.0 => {
                    let pct = (m.median / o.median - 1.0) * 100.0;
                    let _ = write!(s, "  {pct:+.1}%");
                }
                _ => s.push_str("  (not in baseline)"),
            }
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_interval_brackets_the_median() {
        let v = [5.0, 1.0, 3.0, 2.0, 4.0, 3.0, 3.5];
        let (lo, hi) = bootstrap_ci(&v);
        assert!(lo <= median(&v) && median(&v) <= hi, "{lo} {hi}");
        assert!(lo >= 1.0 && hi <= 5.0);
        assert_eq!(bootstrap_ci(&[2.0]), (2.0, 2.0));
        assert_eq!(bootstrap_ci(&v), bootstrap_ci(&v), "seeded");
    }

    #[test]
    fn elements_lines() {
        let equs = [("N".to_string(), 64)];
        let e = |src: &str| elements_of(src, &equs, "k.s");
        assert_eq!(e("; bench: elements=N\n").unwrap(), Some(64));
        assert_eq!(e("; bench: elements=0x10\n").unwrap(), Some(16));
        assert_eq!(e("HALT\n").unwrap(), None);
        assert!(e("; bench: elements=M\n").is_err());
        assert!(e("; bench: size=4\n").is_err());
        assert!(baseline_path("../x").is_err());
        assert!(baseline_path("main-1").is_ok());
    }
}
