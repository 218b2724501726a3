//! `lanejit compare FILE [run flags] [--engines interp,jit,tiered]`: run one program on
//! several engines, time each, and either say that they all agree or name the first retired
//! instruction after which two of them differ (the fuzzer's bisection,
//! [`lanejit::fuzz::bisect_runs`]) with the state that differs there. Exit 0 when they agree,
//! 1 when they do not, 2 on bad input.
//!
//! In debug builds (the test binary), `LANEJIT_TEST_CORRUPT=ENGINE:N` makes every run of
//! ENGINE that retires at least N instructions end with `s31` flipped: a fault hook for the
//! tests of the disagreeing case, since the real engines agree.

use crate::cli::{CliError, ProgramArgs, Setup};
use crate::inspect::{self, Places};
use lanejit::fuzz::{self, Snapshot};
use lanejit::vm::{Engine, VmOptions};
use lanejit_interp::interp::{self, Decoded};
use lanejit_interp::machine::Config;
use lanejit_interp::program::Space;
use std::io::Write as _;

/// The flags of `lanejit compare`.
#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    prog: ProgramArgs,
    /// Engines to run, the first being the reference.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "interp,jit,tiered"
    )]
    engines: Vec<Engine>,
}

/// The test-only fault hook (see the module docs): the engine and count to corrupt after.
fn corruption() -> Option<(Engine, u64)> {
    if !cfg!(debug_assertions) {
        return None;
    }
    let spec = std::env::var("LANEJIT_TEST_CORRUPT").ok()?;
    let (e, n) = spec.split_once(':')?;
    let engine = <Engine as clap::ValueEnum>::from_str(e, true).ok()?;
    Some((engine, n.parse().ok()?))
}

/// `snap` of a run on `engine`, with the test-only corruption applied.
fn corrupted(mut snap: Snapshot, engine: Engine, corrupt: Option<(Engine, u64)>) -> Snapshot {
    if corrupt.is_some_and(|(e, n)| e == engine && snap.result.instructions >= n) {
        snap.result.scalars[31] ^= 1;
    }
    snap
}

/// Run `compare`.
pub fn cmd(args: &CompareArgs, order: &[(Space, usize)]) -> Result<i32, CliError> {
    let mut engines = args.engines.clone();
    engines.dedup();
    if engines.len() < 2 {
        return Err(CliError::BadFlag(
            "--engines needs at least two engines".into(),
        ));
    }
    let setup = Setup::new(&args.prog, order)?;
    let decoded = Decoded::new(&setup.program.code);
    let opts = VmOptions {
        jit_threshold: args.prog.jit_threshold,
    };
    let corrupt = corruption();
    // Build the machine first (with any --load files): a bad input fails before a run.
    setup.machine()?;
    let run = |fuel: Option<Option<u64>>, engine: Engine| -> Option<Snapshot> {
        let config = match fuel {
            Some(f) => Config {
                max_instructions: f,
                ..setup.config
            },
            None => setup.config,
        };
        let m = setup.machine_with(config).ok()?;
        let snap = fuzz::run_machine(m, &decoded, engine, &opts, &setup.dumps);
        Some(corrupted(snap, engine, corrupt))
    };

    let mut out = std::io::stdout().lock();
    let mut snaps = Vec::new();
    for &e in &engines {
        let start = std::time::Instant::now();
        let snap = fuzz::run_machine(setup.machine()?, &decoded, e, &opts, &setup.dumps);
        let snap = corrupted(snap, e, corrupt);
        let secs = start.elapsed().as_secs_f64();
        let r = &snap.result;
        let _ = writeln!(
            out,
            "{:<7} {:>10}  {}, {} instructions",
            e.name(),
            inspect::duration(secs),
            r.status.name(),
            r.instructions
        );
        snaps.push((e, snap));
    }
    let (ref_engine, reference) = &snaps[0];
    let Some((other, _)) = snaps[1..].iter().find(|(_, s)| s != reference) else {
        let _ = writeln!(out, "all agree");
        return Ok(0);
    };
    let (a, b) = (*ref_engine, *other);
    let n = fuzz::bisect_runs(setup.config.max_instructions, |f, e| run(Some(f), e), a, b);
    let places = Places::new(&setup.program, &decoded);
    let _ = writeln!(
        out,
        "{} and {} differ: their states first differ after {n} retired instructions",
        a.name(),
        b.name()
    );
    // The instruction that retired as number n: where the reference interpreter is after
    // n - 1.
    if n > 0
        && let Ok(mut m) = setup.machine_with(Config {
            max_instructions: Some(n - 1),
            ..setup.config
        })
    {
        let _ = interp::run(&mut m, &decoded);
        let _ = writeln!(
            out,
            "instruction #{n} at {}: {}{}",
            places.pc(m.pc),
            places.inst(m.pc),
            places.source(m.pc)
        );
    }
    let (sa, sb) = (run(Some(Some(n)), a), run(Some(Some(n)), b));
    if let (Some(sa), Some(sb)) = (sa, sb) {
        let _ = writeln!(out, "state after {n} instructions:");
        for (what, x, y) in fuzz::diff_items(&sa, &sb) {
            let _ = writeln!(out, "  {what:<14} {}: {x:<20} {}: {y}", a.name(), b.name());
        }
    }
    Ok(1)
}
