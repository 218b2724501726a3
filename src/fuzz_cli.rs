//! `lanejit fuzz`: its flags, the differential campaign (or one `--shard` of it) with its
//! progress, reproducers and `--jsonl` results, `--replay` of one reproducer, and
//! `--summary` of merged results. The fuzzing itself (generation, comparison, bisection,
//! shrinking) is `lanejit::fuzz`.

use crate::cli::{CliError, io_err, parse_u64, parse_u64_usize, read_source};
use crate::diag;
use clap::Args;
use lanejit::EXIT_OUTPUT_FAILED;
use lanejit::fuzz::{self, records};
use lanejit::vm::Engine;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Flags of `lanejit fuzz`.
#[derive(Args, Debug)]
pub struct FuzzArgs {
    /// Number of generated cases.
    #[arg(long, default_value = "1000", value_parser = parse_u64)]
    cases: u64,
    /// Campaign seed (the same seed gives the same cases).
    #[arg(long, default_value = "0", value_parser = parse_u64)]
    seed: u64,
    /// Engines to compare, the first being the reference.
    #[arg(long, value_delimiter = ',', default_value = "interp,jit,tiered")]
    engines: Vec<Engine>,
    /// Where to write reproducers.
    #[arg(long, default_value = "fuzz-out")]
    out: PathBuf,
    /// Re-run one reproducer (`.s` written by a campaign, or any program) on the engines
    /// instead, under the flags of its `; fuzz-config:` line.
    #[arg(long, value_name = "FILE")]
    replay: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long, value_parser = parse_u64_usize)]
    jobs: Option<usize>,
    /// Run only shard INDEX of COUNT (0-based): the cases k of the campaign with
    /// k % COUNT == INDEX, so COUNT machines run one campaign together.
    #[arg(long, value_name = "INDEX/COUNT", value_parser = parse_shard)]
    shard: Option<fuzz::Shard>,
    /// Write one JSON line per case (and one for the shard when it finishes) to FILE; the
    /// files of a campaign's shards merge with `cat`.
    #[arg(long, value_name = "FILE")]
    jsonl: Option<PathBuf>,
    /// Summarise JSON-lines results (`--jsonl` files, merged or not; `-` is standard input)
    /// instead of running a campaign.
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with_all = ["replay", "shard", "jsonl"])]
    summary: Vec<PathBuf>,
}

fn parse_shard(s: &str) -> Result<fuzz::Shard, String> {
    fuzz::Shard::parse(s).map_err(|e| e.to_string())
}

/// Run `lanejit fuzz`: a campaign, or the replay of one reproducer.
pub fn cmd(args: &FuzzArgs) -> Result<i32, CliError> {
    if !args.summary.is_empty() {
        return summary(&args.summary);
    }
    let engines: Vec<Engine> = args.engines.clone();
    if let Some(path) = &args.replay {
        if engines.is_empty() {
            return Err(CliError::BadFlag("--engines needs an engine".into()));
        }
        let src = read_source(path)?;
        let name = path.display().to_string();
        let mut out = std::io::stdout().lock();
        return match fuzz::replay(&src, &name, &engines) {
            Err(fuzz::ReplayError::Asm(e)) => Err(CliError::Asm(e)),
            Err(err) => Err(CliError::Replay { path: name, err }),
            Ok(fuzz::Replay::Agree(s)) => {
                let _ = writeln!(
                    out,
                    "{name}: engines agree ({}, {} instructions)",
                    s.result.status.name(),
                    s.result.instructions
                );
                Ok(0)
            }
            Ok(fuzz::Replay::Diverge {
                pair,
                first_diff_after,
                at,
            }) => {
                let ((ea, a), (eb, b)) = *pair;
                let _ = writeln!(
                    out,
                    "{name}: {} and {} diverge; states first differ after {first_diff_after} \
                     retired instructions{at}",
                    fuzz::engine_name(ea),
                    fuzz::engine_name(eb),
                );
                let _ = writeln!(out, "differs: {}", fuzz::diff_summary(&a, &b));
                let _ = writeln!(out, "{}: {}", fuzz::engine_name(ea), a.verdict());
                let _ = writeln!(out, "{}: {}", fuzz::engine_name(eb), b.verdict());
                Ok(1)
            }
        };
    }
    if engines.len() < 2 {
        return Err(CliError::BadFlag(
            "--engines needs at least two engines".into(),
        ));
    }
    // Reproducers go here: make sure it can be created before spending the campaign, and
    // open the results file too.
    std::fs::create_dir_all(&args.out).map_err(io_err(&args.out))?;
    let jsonl = match &args.jsonl {
        Some(path) => Some(std::sync::Mutex::new(std::io::BufWriter::new(
            std::fs::File::create(path).map_err(io_err(path))?,
        ))),
        None => None,
    };
    if let Some(j) = args.jobs {
        // Only fails if a global pool exists already, which nothing here builds.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .build_global();
    }
    let shard = args.shard.unwrap_or(fuzz::Shard::WHOLE);
    let mine = shard.len(args.cases);
    let bar = indicatif::ProgressBar::new(mine);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{elapsed_precise} [{bar:40}] {pos}/{len} cases, {per_sec}, {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_message("0 divergences");
    let start = std::time::Instant::now();
    let found = std::sync::atomic::AtomicU64::new(0);
    // Without a terminal the bar is hidden: print a plain progress line every 10 s instead.
    let plain = bar.is_hidden();
    let last_line = std::sync::Mutex::new(std::time::Instant::now());
    let progress = |done: u64| {
        bar.set_position(done);
        if plain {
            if let Ok(mut t) = last_line.lock() {
                if t.elapsed().as_secs() >= 10 {
                    *t = std::time::Instant::now();
                    let secs = start.elapsed().as_secs_f64();
                    eprintln!(
                        "{done}/{mine} cases, {:.0} cases/s, {} divergences",
                        done as f64 / secs.max(1e-9),
                        found.load(std::sync::atomic::Ordering::Relaxed)
                    );
                }
            }
        }
    };
    let write_err = std::sync::Mutex::new(None::<CliError>);
    let fail = |e: CliError| {
        if let Ok(mut w) = write_err.lock() {
            w.get_or_insert(e);
        }
    };
    let line = |rec: &records::Record| {
        if let (Some(j), Some(path)) = (&jsonl, &args.jsonl) {
            let text = serde_json::to_string(rec).unwrap_or_default();
            if let Ok(mut w) = j.lock() {
                if let Err(e) = writeln!(w, "{text}") {
                    fail(io_err(path)(e));
                }
            }
        }
    };
    let checked = |i: u64, d: Option<&fuzz::Divergence>| {
        let divergence = d.map(|d| {
            let n = found.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            bar.set_message(format!("{n} divergences"));
            match write_reproducer(&args.out, args.seed, i, d) {
                Ok(msg) => bar.println(msg),
                Err(e) => fail(e),
            }
            records::DivergenceRecord {
                engines: [
                    fuzz::engine_name(d.a.0).into(),
                    fuzz::engine_name(d.b.0).into(),
                ],
                first_diff_after: d.first_diff_after,
                differs: fuzz::diff_summary(&d.a.1, &d.b.1),
                reproducer: args
                    .out
                    .join(reproducer_name(args.seed, i))
                    .display()
                    .to_string(),
            }
        });
        line(&records::Record::Case {
            seed: args.seed,
            case: i,
            outcome: if d.is_some() {
                records::Outcome::Diverge
            } else {
                records::Outcome::Agree
            },
            divergence,
        });
    };
    // A case that crashes the process is named on standard error (`fuzz::crash`).
    fuzz::crash::install(args.seed, args.cases);
    let divergences =
        fuzz::campaign_shard(args.seed, args.cases, shard, &engines, &progress, &checked);
    bar.finish_and_clear();
    let secs = start.elapsed().as_secs_f64();
    let engine_names: Vec<&str> = engines.iter().map(|&e| fuzz::engine_name(e)).collect();
    line(&records::Record::Shard {
        seed: args.seed,
        cases: args.cases,
        shard,
        engines: engine_names.iter().map(|&e| e.into()).collect(),
        ran: mine,
        divergences: divergences.len() as u64,
        secs,
    });
    if let (Some(j), Some(path)) = (jsonl, &args.jsonl) {
        if let Ok(mut w) = j.into_inner() {
            if let Err(e) = w.flush() {
                fail(io_err(path)(e));
            }
        }
    }
    let mut out = std::io::stdout().lock();
    for (i, d) in &divergences {
        let _ = writeln!(
            out,
            "case {i}: {} vs {}, first differ after {} instructions: {}",
            fuzz::engine_name(d.a.0),
            fuzz::engine_name(d.b.0),
            d.first_diff_after,
            args.out.join(reproducer_name(args.seed, *i)).display()
        );
    }
    let of_shard = match args.shard {
        Some(sh) => format!(" (shard {sh} of {} cases)", args.cases),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "{mine} cases{of_shard}, {} divergences, {:.1} s, {:.0} cases/s (seed {}, engines {})",
        divergences.len(),
        secs,
        mine as f64 / secs.max(1e-9),
        args.seed,
        engine_names.join(",")
    );
    let _ = out.flush();
    if let Some(e) = write_err.into_inner().ok().flatten() {
        diag::error(&format!(
            "{e} (the campaign finished; its summary is above)"
        ));
        return Ok(EXIT_OUTPUT_FAILED);
    }
    Ok(if divergences.is_empty() { 0 } else { 1 })
}

/// `lanejit fuzz --summary FILE...`: read every file's JSON lines (`-`: standard input),
/// print the summary, exit 1 if a case diverged.
fn summary(files: &[PathBuf]) -> Result<i32, CliError> {
    let mut sum = records::Summary::default();
    for path in files {
        let name = path.display().to_string();
        let added = if path == Path::new("-") {
            sum.add_reader("<stdin>", std::io::stdin().lock())
        } else {
            let f = std::fs::File::open(path).map_err(io_err(path))?;
            sum.add_reader(&name, std::io::BufReader::new(f))
        };
        added.map_err(|e| CliError::BadFlag(e.to_string()))?;
    }
    let _ = write!(std::io::stdout().lock(), "{}", sum.report());
    Ok(if sum.diverged() { 1 } else { 0 })
}

fn reproducer_name(seed: u64, i: u64) -> String {
    format!("div-{seed:x}-{i}.s")
}

/// Write the reproducer of case `i` (and, if the shrunk one does not replay to the same
/// divergence, the unshrunk case beside it); return the line to print.
fn write_reproducer(
    dir: &Path,
    seed: u64,
    i: u64,
    d: &fuzz::Divergence,
) -> Result<String, CliError> {
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let file = dir.join(reproducer_name(seed, i));
    std::fs::write(&file, fuzz::reproducer(d)).map_err(io_err(&file))?;
    let mut msg = format!(
        "case {i}: {} and {} diverge after {} instructions ({}); reproducer {}",
        fuzz::engine_name(d.a.0),
        fuzz::engine_name(d.b.0),
        d.first_diff_after,
        fuzz::diff_summary(&d.a.1, &d.b.1),
        file.display()
    );
    if !fuzz::reproducer_replays(d) {
        let orig = fuzz::check_case_unshrunk(&fuzz::case(seed, i), &[d.a.0, d.b.0]);
        if let Some(o) = orig {
            let f = dir.join(format!("div-{seed:x}-{i}-unshrunk.s"));
            std::fs::write(&f, fuzz::reproducer(&o)).map_err(io_err(&f))?;
            msg.push_str(&format!(
                "\n  warning: the reproducer does not replay to the same divergence; \
                 unshrunk case in {}",
                f.display()
            ));
        }
    }
    Ok(msg)
}
