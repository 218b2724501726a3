//! `lanejit compare FILE [run flags] [--groups G] [--threads N] [--engines interp,jit,tiered]`:
//! run one program on several engines, time each, and either say that they all agree or show
//! where two of them first differ. Exit 0 when they agree, 1 when they do not, 2 on bad input.
//!
//! One group: the first retired instruction after which two engines' states differ (the
//! fuzzer's bisection, [`lanejit::fuzz::bisect_runs`]), with the state that differs there.
//!
//! A launch of several groups (`--groups G` or `.groups`): each engine runs the whole launch
//! on `--threads` threads and the launch results (the contract's result with `group` and
//! `groups`, memory after the launch, the reported group's tile) are compared. When two
//! differ, the fields that differ are listed, and the disagreement is then located in the
//! contract's reference order: both engines run the groups one at a time, group 0 to its end,
//! then group 1, and so on ([`lanejit::launch::InOrder`], which is how a launch runs on one
//! thread), and after each group its state (registers, trap, retired count, tile) and memory
//! are compared. Up to the first group that differs, both engines have left the same memory,
//! so that group starts from the same state on both, and the bisection runs on it alone: the
//! earlier groups run in full, then that group under an instruction budget. The report names
//! the group, the instruction of that group after which the states first differ, and the
//! state there. When every group agrees in reference order, the launches differ only in how
//! they ran their groups together (for a racing launch on several threads the result is
//! unspecified: `run --check-races` finds the race); the report says so.
//!
//! In debug builds (the test binary), `LANEJIT_TEST_CORRUPT=ENGINE:N` makes every run of
//! ENGINE that retires at least N instructions end with `s31` flipped (in a launch: the
//! launch's result when all its groups together retire N, and every group that retires N
//! itself): a fault hook for the tests of the disagreeing case, since the real engines agree.

use crate::cli::{CliError, LaunchArgs, ProgramArgs, Setup};
use crate::inspect::{self, Places};
use lanejit::fuzz::{self, Snapshot};
use lanejit::launch::{InOrder, LaunchOptions};
use lanejit::vm::{Engine, VmOptions};
use lanejit_interp::interp::{self, Decoded};
use lanejit_interp::machine::{Config, Exit, Machine};
use lanejit_interp::program::Space;
use lanejit_interp::result::RunResult;
use std::io::Write as _;

/// The flags of `lanejit compare`.
#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    prog: ProgramArgs,
    #[command(flatten)]
    launch: LaunchArgs,
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

/// The test-only corruption of one group's machine on `engine` after it ran.
fn corrupt_group(m: &mut Machine, engine: Engine, corrupt: Option<(Engine, u64)>) {
    if corrupt.is_some_and(|(e, n)| e == engine && m.retired >= n) {
        m.regs.s[31] ^= 1;
    }
}

/// What every part of the comparison needs.
struct Ctx<'a> {
    setup: &'a Setup,
    decoded: &'a Decoded,
    vm: VmOptions,
    corrupt: Option<(Engine, u64)>,
    groups: u32,
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
    let (groups, threads) = args.launch.resolve(&setup.program)?;
    let decoded = Decoded::new(&setup.program.code);
    let cx = Ctx {
        setup: &setup,
        decoded: &decoded,
        vm: args.prog.vm_options()?,
        corrupt: corruption(),
        groups,
    };
    // Build the machine first (with any --load files): a bad input fails before a run.
    setup.machine()?;

    let mut out = std::io::stdout().lock();
    let mut snaps = Vec::new();
    for &e in &engines {
        let start = std::time::Instant::now();
        let snap = if groups == 1 {
            fuzz::run_machine(setup.machine()?, &decoded, e, &cx.vm, &setup.dumps)
        } else {
            let opts = LaunchOptions {
                engine: e,
                vm: cx.vm.clone(),
                groups,
                threads,
                check_races: false,
                timeline: false,
            };
            fuzz::launch_machine(setup.machine()?, &decoded, &opts, &setup.dumps)
        };
        let snap = corrupted(snap, e, cx.corrupt);
        let secs = start.elapsed().as_secs_f64();
        let r = &snap.result;
        let launch = if groups > 1 {
            format!(
                ", {groups} groups on {} threads",
                threads.min(groups as usize)
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{:<7} {:>10}  {}, {} instructions{launch}",
            e.name(),
            inspect::duration(secs),
            r.status.name(),
            r.instructions
        );
        snaps.push((e, snap));
    }
    let (ref_engine, reference) = &snaps[0];
    let Some((other, different)) = snaps[1..].iter().find(|(_, s)| s != reference) else {
        let _ = writeln!(out, "all agree");
        return Ok(0);
    };
    let (a, b) = (*ref_engine, *other);
    if groups == 1 {
        single(&cx, &mut out, a, b);
    } else {
        let _ = writeln!(
            out,
            "{} and {} differ on the launch of {groups} groups:",
            a.name(),
            b.name()
        );
        diff(&mut out, a, b, reference, different);
        in_order(&cx, &mut out, a, b);
    }
    Ok(1)
}

/// The differing state of `x` (on `a`) and `y` (on `b`), a line an item.
fn diff(out: &mut impl std::io::Write, a: Engine, b: Engine, x: &Snapshot, y: &Snapshot) {
    for (what, p, q) in fuzz::diff_items(x, y) {
        let _ = writeln!(out, "  {what:<14} {}: {p:<20} {}: {q}", a.name(), b.name());
    }
}

/// `instruction #N{of} at PC <label>: TEXT (file:line)`: the instruction at `pc`, which
/// retired (or would retire) as number `n`.
fn instruction(places: &Places<'_>, n: u64, of: &str, pc: u64) -> String {
    format!(
        "instruction #{n}{of} at {}: {}{}",
        places.pc(pc),
        places.inst(pc),
        places.source(pc)
    )
}

/// The report for one group: the bisection to the first differing instruction.
fn single(cx: &Ctx<'_>, out: &mut impl std::io::Write, a: Engine, b: Engine) {
    let setup = cx.setup;
    let run = |fuel: Option<u64>, engine: Engine| -> Option<Snapshot> {
        let config = Config {
            max_instructions: fuel,
            ..setup.config
        };
        let m = setup.machine_with(config).ok()?;
        let snap = fuzz::run_machine(m, cx.decoded, engine, &cx.vm, &setup.dumps);
        Some(corrupted(snap, engine, cx.corrupt))
    };
    let n = fuzz::bisect_runs(setup.config.max_instructions, run, a, b);
    let places = Places::new(&setup.program, cx.decoded);
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
        let _ = interp::run(&mut m, cx.decoded);
        let _ = writeln!(out, "{}", instruction(&places, n, "", m.pc));
    }
    if let (Some(sa), Some(sb)) = (run(Some(n), a), run(Some(n), b)) {
        let _ = writeln!(out, "state after {n} instructions:");
        diff(out, a, b, &sa, &sb);
    }
}

/// Whether two engines' machines agree after running the same group: its result (registers,
/// pc, retired count, trap), latched trip, tile, and all of memory.
fn same_group(x: &Machine, ex: Exit, y: &Machine, ey: Exit) -> bool {
    RunResult::capture(x, ex, &[]) == RunResult::capture(y, ey, &[])
        && x.regs.trip == y.regs.trip
        && x.tile.as_bytes() == y.tile.as_bytes()
        && x.mem.mapped_pages().eq(y.mem.mapped_pages())
}

/// The launch report's second part: the first group that differs in reference order, and the
/// bisection within it.
fn in_order(cx: &Ctx<'_>, out: &mut impl std::io::Write, a: Engine, b: Engine) {
    let setup = cx.setup;
    let stepper = |e: Engine, m: Machine| InOrder::new(m, cx.decoded, e, &cx.vm, cx.groups);
    let (Ok(ma), Ok(mb)) = (setup.machine(), setup.machine()) else {
        return;
    };
    let (mut sa, mut sb) = (stepper(a, ma), stepper(b, mb));
    let first = loop {
        let (Some((gid, ea)), Some((_, eb))) = (sa.step(None), sb.step(None)) else {
            break None;
        };
        corrupt_group(sa.machine_mut(), a, cx.corrupt);
        corrupt_group(sb.machine_mut(), b, cx.corrupt);
        if !same_group(sa.machine(), ea, sb.machine(), eb) {
            break Some(gid);
        }
    };
    let Some(k) = first else {
        let _ = writeln!(
            out,
            "run one group at a time in reference order, every group agrees: the launches \
             differ only in how they ran their groups together (on several threads a racing \
             launch's result is unspecified: `lanejit run --check-races` finds a race)"
        );
        return;
    };
    // Group k on `e` under a budget of `fuel` after groups 0..k in full. Compiled code is
    // specialised for runs with or without a limit: every group runs with one.
    let limit = setup.config.max_instructions;
    let config = Config {
        max_instructions: Some(limit.unwrap_or(u64::MAX)),
        ..setup.config
    };
    let group_k = |fuel: Option<u64>, e: Engine| -> Option<(Machine, Exit)> {
        let mut s = stepper(e, setup.machine_with(config).ok()?);
        for _ in 0..k {
            s.step(None)?;
        }
        let (_, exit) = s.step(fuel.or(config.max_instructions))?;
        let mut m = s.into_machine();
        corrupt_group(&mut m, e, cx.corrupt);
        Some((m, exit))
    };
    let snap = |fuel: Option<u64>, e: Engine| {
        group_k(fuel, e).map(|(m, exit)| Snapshot::capture(&m, exit, &setup.dumps))
    };
    let n = fuzz::bisect_runs(limit, snap, a, b);
    let _ = writeln!(
        out,
        "in reference order they first differ in group {k}: its states first differ after {n} \
         of its retired instructions"
    );
    let places = Places::new(&setup.program, cx.decoded);
    if n > 0
        && let Some((m, _)) = group_k(Some(n - 1), Engine::Interp)
    {
        let of = format!(" of group {k}");
        let _ = writeln!(out, "{}", instruction(&places, n, &of, m.pc));
    }
    match (snap(Some(n), a), snap(Some(n), b)) {
        (Some(x), Some(y)) if x != y => {
            let _ = writeln!(out, "state of group {k} after {n} instructions:");
            diff(out, a, b, &x, &y);
        }
        _ => {
            let _ = writeln!(
                out,
                "(under an instruction budget group {k} runs the same on both: the difference \
                 shows only in an unlimited run)"
            );
        }
    }
}
