//! `lanejit bench`: runs the bench suite side by side (every engine and the native loop on
//! the same workload, repetitions interleaved across engines), with a progress bar on stderr,
//! and prints the table (or JSON), optionally an SVG chart and a README table section.

use super::report::{Report, Row, cpu_name, size_name, utc_now};
use super::{BenchError, Kernel, SIZES, Which, Workload, median};
use crate::vm::Engine;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// Flags of `lanejit bench`.
#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// Your own kernels to time on every engine (assembly or containers); without them the
    /// built-in suite runs.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// With FILEs: override an `.equ` of every kernel (repeatable), as `run --set` does.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// With FILEs: elements per run, for elements/s (else each kernel's
    /// `; bench: elements=VALUE` line).
    #[arg(long, value_name = "N")]
    pub elements: Option<u64>,
    /// With FILEs: save the medians as baseline NAME (in `.lanejit-baselines/`).
    #[arg(long, value_name = "NAME")]
    pub save_baseline: Option<String>,
    /// With FILEs: compare with the saved baseline NAME, as a change in percent.
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// The suite: also print the project's own speed targets (met or missed).
    #[arg(long)]
    pub targets: bool,
    /// Fast smoke run: 16 KiB and 256 KiB only, 3 short repetitions.
    #[arg(long)]
    pub quick: bool,
    /// Print the report as one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Only these kernels (repeatable or comma-separated): copy32 widensum8 gather32
    /// scatter32 strided32 saxpy32 tile_stage stencil5_lc0 stencil5_vaddr fir8_lc0
    /// fir8_vaddr fir8_taps fir8_bump spmv_csr matmul256 matmul_ikj lut32 aos_soa_lc0
    /// aos_soa_vaddr dot8.
    #[arg(long = "kernel", value_name = "K", value_delimiter = ',')]
    pub kernel: Vec<String>,
    /// Also draw the table as an SVG bar chart into this file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Source-data sizes (default 16K,256K,64M; suffixes K and M are KiB and MiB).
    #[arg(long, value_delimiter = ',', value_parser = parse_size)]
    pub sizes: Vec<u64>,
    /// Repetitions per measurement (default 7, or 3 with --quick; with FILEs 10, or 3); the
    /// median is reported.
    #[arg(long)]
    pub reps: Option<usize>,
    /// Lanes per group [default: 32; with --compile-latency, each program's own].
    #[arg(long, value_parser = parse_vl)]
    pub vl: Option<u32>,
    /// Rewrite the table section of this README (between the bench-table markers).
    #[arg(long, value_name = "FILE")]
    pub readme: Option<PathBuf>,
    /// Measure only these engines (interp, jit, tiered, native, tiered+cache; comma-separated), e.g. to
    /// profile one under callgrind. Every engine is still verified once. With FILEs: interp,
    /// jit and tiered cold (compiles included), jit-warm (steady state), tiered+cache.
    #[arg(long = "engine", value_name = "E", value_delimiter = ',')]
    pub engines: Vec<String>,
    /// Fixed runs per repetition instead of calibrating to a duration (for instruction
    /// counts under callgrind).
    #[arg(long, value_name = "N")]
    pub iters: Option<u64>,
    /// Instead of the suite: the compile latency of every region of these programs
    /// (assembly files, or directories of them, e.g. seeds/kernels), on the jit engine at
    /// their own VL (or --vl if given explicitly), fastest of --reps cold runs (default 5).
    #[arg(long = "compile-latency", value_name = "FILE|DIR", num_args = 1..)]
    pub compile_latency: Vec<PathBuf>,
    /// Instead of the suite: launches of G groups of the race-free launch kernels
    /// (`seeds/kernels/bench/groups/`) at every --threads count, against a native
    /// reference on as many threads; --sizes gives the source bytes in all (default 16M).
    #[arg(long, value_name = "G")]
    pub groups: Option<u32>,
    /// Thread counts for --groups (default: 1 and the host's available parallelism).
    #[arg(long, value_name = "N", value_delimiter = ',')]
    pub threads: Vec<usize>,
}

fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mul) = match t.char_indices().last() {
        Some((i, 'K' | 'k')) => (&t[..i], 1u64 << 10),
        Some((i, 'M' | 'm')) => (&t[..i], 1u64 << 20),
        _ => (t, 1),
    };
    let n: u64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: expected a size like 4096, 16K or 64M"))?;
    n.checked_mul(mul)
        .filter(|&v| v > 0 && v <= super::MAX_SIZE)
        .ok_or_else(|| format!("`{s}`: sizes are 1 byte to 64M"))
}

fn parse_vl(s: &str) -> Result<u32, String> {
    let v: u32 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if lanejit_interp::machine::valid_vl(v) {
        Ok(v)
    } else {
        Err(format!("--vl {v}: VL must be a power of two from 1 to 64"))
    }
}

/// What the suite runs.
#[derive(Clone, Debug)]
pub struct SuiteOptions {
    /// Kernels, in order.
    pub kernels: Vec<Kernel>,
    /// Source sizes, in order.
    pub sizes: Vec<u64>,
    /// VL.
    pub vl: u32,
    /// Repetitions per measurement.
    pub reps: usize,
    /// Target duration of one repetition (runs are repeated until it is reached).
    pub target: Duration,
    /// The command line, for the report.
    pub command: String,
    /// Engines measured (the others' columns stay empty).
    pub engines: Vec<Which>,
    /// Fixed runs per repetition (no calibration).
    pub iters: Option<u64>,
}

impl SuiteOptions {
    /// The options `args` select.
    pub fn from_args(args: &BenchArgs) -> Result<SuiteOptions, BenchError> {
        let kernels = if args.kernel.is_empty() {
            Kernel::ALL.to_vec()
        } else {
            args.kernel
                .iter()
                .map(|k| Kernel::from_name(k.trim()))
                .collect::<Result<_, _>>()?
        };
        let sizes = if !args.sizes.is_empty() {
            args.sizes.clone()
        } else if args.quick {
            SIZES[..2].to_vec()
        } else {
            SIZES.to_vec()
        };
        let engines = if args.engines.is_empty() {
            Which::ENGINES.to_vec()
        } else {
            args.engines
                .iter()
                .map(|e| {
                    Which::ENGINES
                        .into_iter()
                        .find(|w| w.name() == e.trim())
                        .ok_or_else(|| BenchError::UnknownEngine(e.clone()))
                })
                .collect::<Result<_, _>>()?
        };
        let command = std::iter::once("lanejit".to_string())
            .chain(std::env::args().skip(1))
            .collect::<Vec<_>>()
            .join(" ");
        Ok(SuiteOptions {
            kernels,
            sizes,
            vl: args.vl.unwrap_or(32),
            reps: args.reps.unwrap_or(if args.quick { 3 } else { 7 }).max(1),
            target: Duration::from_millis(if args.quick { 2 } else { 25 }),
            command,
            engines,
            iters: args.iters.map(|n| n.max(1)),
        })
    }
}

/// Run the suite; `tick` is called once per measured step with a message.
pub fn run_suite(opts: &SuiteOptions, tick: &mut dyn FnMut(&str)) -> Result<Report, BenchError> {
    let mut rows = Vec::new();
    let mut all_compiles = Vec::new();
    for &kernel in &opts.kernels {
        for &size in &opts.sizes {
            tick(&format!("{} {}: setup", kernel.name(), size_name(size)));
            let mut w = Workload::new(kernel, size, opts.vl)?;
            w.verify()?;
            let mut engines = Which::ENGINES.to_vec();
            if kernel == Kernel::Copy32 {
                engines.push(Which::Memcpy);
            }
            let measured = |e: Which| {
                opts.engines.contains(&e)
                    || (e == Which::Memcpy && opts.engines.contains(&Which::Native))
            };
            let mut iters = Vec::new();
            for &e in &engines {
                // Warm-up run (page faults, caches, the JIT's cache), then calibration.
                if measured(e) {
                    w.run(e)?;
                    iters.push(match opts.iters {
                        Some(n) => n,
                        None => w.calibrate(e, opts.target)?,
                    });
                } else {
                    iters.push(0);
                }
            }
            let mut samples = vec![Vec::with_capacity(opts.reps); engines.len()];
            for rep in 0..opts.reps {
                tick(&format!(
                    "{} {}: repetition {}/{}",
                    kernel.name(),
                    size_name(size),
                    rep + 1,
                    opts.reps
                ));
                for (i, &e) in engines.iter().enumerate() {
                    if measured(e) {
                        samples[i].push(w.time_once(e, iters[i])?);
                    }
                }
            }
            let elements = w.elements();
            let melem = |i: usize| {
                (!samples[i].is_empty())
                    .then(|| elements as f64 * 1e3 / median(&samples[i]).max(1e-3))
            };
            let compiles: Vec<f64> = w.compile_times_us.iter().map(|&u| u as f64).collect();
            all_compiles.extend_from_slice(&w.compile_times_us);
            rows.push(Row {
                kernel: kernel.name().into(),
                size,
                elements,
                melem: [melem(0), melem(1), melem(2), melem(3), melem(4)],
                compile_us_median: (!compiles.is_empty()).then(|| median(&compiles)),
                compile_us_total: w.compile_times_us.iter().sum(),
                compile_us_max: w.compile_times_us.iter().copied().max().unwrap_or(0),
                regions: compiles.len(),
                tiered_compile_us: w.tiered_compile.0,
                code_bytes: w.code_bytes,
            });
            if kernel == Kernel::Copy32 {
                rows.push(Row {
                    kernel: "memcpy".into(),
                    size,
                    elements,
                    melem: [None, None, None, melem(5), None],
                    compile_us_median: None,
                    compile_us_total: 0,
                    compile_us_max: 0,
                    regions: 0,
                    tiered_compile_us: 0,
                    code_bytes: 0,
                });
            }
        }
    }
    Ok(Report {
        date: utc_now(),
        cpu: format!("{}; native loops {}", cpu_name(), super::native::isa()),
        command: opts.command.clone(),
        vl: opts.vl,
        reps: opts.reps,
        rows,
        compile_times_us: all_compiles,
    })
}

fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> BenchError + '_ {
    move |err| BenchError::Io {
        path: path.display().to_string(),
        err,
    }
}

/// `lanejit bench`: returns the exit status (0; errors exit 2 through the caller).
pub fn cmd(args: &BenchArgs) -> Result<i32, BenchError> {
    if !args.compile_latency.is_empty() {
        let rounds = args.reps.unwrap_or(5);
        let vl = args.vl;
        let progs = super::compile::program_files(&args.compile_latency)?
            .iter()
            .map(|f| super::compile::measure(f, vl, rounds))
            .collect::<Result<Vec<_>, _>>()?;
        print!("{}", super::compile::text(&progs, rounds));
        return Ok(0);
    }
    if let Some(groups) = args.groups {
        return launch_cmd(args, groups);
    }
    let opts = SuiteOptions::from_args(args)?;
    // Output files are opened (the plot created, the README checked writable) before the
    // suite runs, so an unwritable path costs no measurement.
    let mut plot = match &args.plot {
        Some(path) => Some((path, std::fs::File::create(path).map_err(io(path))?)),
        None => None,
    };
    if let Some(path) = &args.readme {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(io(path))?;
    }
    let steps = (opts.kernels.len() * opts.sizes.len() * (opts.reps + 1)) as u64;
    let bar = indicatif::ProgressBar::new(steps);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let report = run_suite(&opts, &mut |msg| {
        bar.set_message(msg.to_string());
        bar.inc(1);
    });
    bar.finish_and_clear();
    let report = report?;
    if args.json {
        // (Serializing plain structs with string keys cannot fail.)
        println!("{}", serde_json::to_string(&report).unwrap_or_default());
    } else {
        print!("{}", report.text(args.targets));
    }
    // The report is out: a write that fails now is reported with its own exit status.
    let mut failed = Vec::new();
    if let Some((path, f)) = &mut plot {
        use std::io::Write as _;
        if let Err(e) = f.write_all(report.svg().as_bytes()) {
            failed.push(io(path)(e));
        }
    }
    if let Some(path) = &args.readme {
        let old = std::fs::read_to_string(path).unwrap_or_default();
        if let Err(e) = std::fs::write(path, report.update_readme(&old)) {
            failed.push(io(path)(e));
        }
    }
    for e in &failed {
        eprintln!("lanejit: {e} (the benchmarks finished; the report is above)");
    }
    Ok(if failed.is_empty() {
        0
    } else {
        crate::EXIT_OUTPUT_FAILED
    })
}

/// `lanejit bench --groups G`: the launch benchmarks of [`super::launch`].
fn launch_cmd(args: &BenchArgs, groups: u32) -> Result<i32, BenchError> {
    let bad = |why: &str| BenchError::BadSize {
        kernel: "launch",
        size: 0,
        why: why.to_string(),
    };
    if !(1..=lanejit_interp::program::MAX_GROUPS).contains(&groups) {
        return Err(bad("--groups must be from 1 to 2^24"));
    }
    let mut threads = args.threads.clone();
    if threads.is_empty() {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        threads = if n > 1 { vec![1, n] } else { vec![1] };
    }
    if threads
        .iter()
        .any(|t| !(1..=crate::launch::MAX_THREADS).contains(t))
    {
        return Err(bad("--threads must be from 1 to 1024"));
    }
    let kernels = if args.kernel.is_empty() {
        super::launch::KERNEL_NAMES.map(String::from).to_vec()
    } else {
        let mut kernels = Vec::new();
        for k in &args.kernel {
            let k = k.trim();
            if !super::launch::KERNEL_NAMES.contains(&k) {
                return Err(BenchError::UnknownKernel(format!(
                    "{k} (with --groups: {})",
                    super::launch::KERNEL_NAMES.join(", ")
                )));
            }
            kernels.push(k.to_string());
        }
        kernels
    };
    let all = Engine::ALL;
    let mut engines = Vec::new();
    for e in &args.engines {
        match (e.trim(), all.iter().find(|x| x.name() == e.trim())) {
            ("native", _) => {}
            (_, Some(&x)) => engines.push(x),
            (_, None) => return Err(BenchError::UnknownEngine(e.clone())),
        }
    }
    if args.engines.is_empty() {
        engines = all.to_vec();
    }
    let opts = super::launch::LaunchBenchOptions {
        kernels,
        engines,
        groups,
        threads,
        bytes: args.sizes.first().copied().unwrap_or(16 << 20),
        reps: args.reps.unwrap_or(if args.quick { 3 } else { 5 }),
        tiny_groups: if args.quick { 100_000 } else { 1_000_000 },
    };
    let bar = indicatif::ProgressBar::new_spinner();
    let text = super::launch::run(&opts, &mut |msg| bar.set_message(msg.to_string()))?;
    bar.finish_and_clear();
    print!("{text}");
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("16K"), Ok(16 << 10));
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("65M").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("x").is_err());
        assert_eq!(parse_vl("8"), Ok(8));
        assert!(parse_vl("3").is_err());
    }
}
