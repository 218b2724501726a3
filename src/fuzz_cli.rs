//! `lanejit fuzz`: its flags, the differential campaign with its progress and reproducers,
//! and `--replay` of one reproducer. The fuzzing itself (generation, comparison, bisection,
//! shrinking) is `lanejit::fuzz`.

use crate::cli::{CliError, io_err, parse_u64, parse_u64_usize, read_source};
use crate::diag;
use clap::Args;
use lanejit::EXIT_OUTPUT_FAILED;
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
}

/// Run `lanejit fuzz`: a campaign, or the replay of one reproducer.
pub fn cmd(args: &FuzzArgs) -> Result<i32, CliError> {
    use lanejit::fuzz;
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
                let _ = writeln!(out, "{}: {}", fuzz::engine_name(ea), a.result.to_json());
                let _ = writeln!(out, "{}: {}", fuzz::engine_name(eb), b.result.to_json());
                Ok(1)
            }
        };
    }
    if engines.len() < 2 {
        return Err(CliError::BadFlag(
            "--engines needs at least two engines".into(),
        ));
    }
    // Reproducers go here: make sure it can be created before spending the campaign.
    std::fs::create_dir_all(&args.out).map_err(io_err(&args.out))?;
    if let Some(j) = args.jobs {
        // Only fails if a global pool exists already, which nothing here builds.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .build_global();
    }
    let bar = indicatif::ProgressBar::new(args.cases);
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
                        "{done}/{} cases, {:.0} cases/s, {} divergences",
                        args.cases,
                        done as f64 / secs.max(1e-9),
                        found.load(std::sync::atomic::Ordering::Relaxed)
                    );
                }
            }
        }
    };
    let write_err = std::sync::Mutex::new(None::<CliError>);
    let on_found = |i: u64, d: &fuzz::Divergence| {
        let n = found.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        bar.set_message(format!("{n} divergences"));
        match write_reproducer(&args.out, args.seed, i, d) {
            Ok(msg) => bar.println(msg),
            Err(e) => {
                if let Ok(mut w) = write_err.lock() {
                    w.get_or_insert(e);
                }
            }
        }
    };
    let divergences = fuzz::campaign(args.seed, args.cases, &engines, &progress, &on_found);
    bar.finish_and_clear();
    let secs = start.elapsed().as_secs_f64();
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
    let _ = writeln!(
        out,
        "{} cases, {} divergences, {:.1} s, {:.0} cases/s (seed {}, engines {})",
        args.cases,
        divergences.len(),
        secs,
        args.cases as f64 / secs.max(1e-9),
        args.seed,
        engines
            .iter()
            .map(|&e| fuzz::engine_name(e))
            .collect::<Vec<_>>()
            .join(",")
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

fn reproducer_name(seed: u64, i: u64) -> String {
    format!("div-{seed:x}-{i}.s")
}

/// Write the reproducer of case `i` (and, if the shrunk one does not replay to the same
/// divergence, the unshrunk case beside it); return the line to print.
fn write_reproducer(
    dir: &Path,
    seed: u64,
    i: u64,
    d: &lanejit::fuzz::Divergence,
) -> Result<String, CliError> {
    use lanejit::fuzz;
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
