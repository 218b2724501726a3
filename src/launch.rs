//! Launches of many groups (contract section 9) on every engine and on several threads.
//!
//! [`launch`] runs groups `0..G` of one program over one guest memory. One group runs exactly as
//! a single-group run always has. Several run on `threads` worker threads (the calling thread
//! is worker 0): each has its own machine (register file, pc, retired count, tile) and shares
//! the launch's compiled code ([`SharedCode`]: a region compiled once serves every group on
//! every thread, tier-up counts across groups), and takes groups in chunks from one shared
//! atomic counter, in the
//! manner of PoCL's work-group scheduler: a worker's first chunk is one group; after each chunk
//! it sizes the next so that a chunk takes about [`CHUNK_TARGET`], but never more than a
//! `1 / (2 * threads)` share of the groups not handed out yet, so the last chunks are small
//! and the threads finish together. With one thread the counter hands groups out in reference
//! order, which is the reference run.
//!
//! A group's result does not depend on the thread that ran it (its own registers and tile; for
//! a race-free launch, memory bytes that no other group writes), and the reported group is
//! chosen by the section's rules from every thread's [`Tally`], so the result is the reference
//! result bit for bit whatever the thread count.
//!
//! On more than one thread the interpreter moves guest memory bytes with relaxed atomics
//! ([`Decoded::for_shared_memory`]); see `lanejit_interp::memory` ("Sharing") for the host
//! memory model a racing launch relies on.
//!
//! `--check-races` runs [`lanejit_interp::races::check_races`]: reference order on the
//! interpreter, whatever the engine, so its trap is the same on every engine.
//!
//! With a timeline requested, every worker records one [`Span`] per chunk; without, nothing
//! is recorded or timed beyond the chunk sizing.

use crate::vm::{self, Engine, EngineStats, SharedCode, VmOptions};
use lanejit_interp::interp::Decoded;
use lanejit_interp::machine::{Exit, Machine};
use lanejit_interp::races::check_races;
use lanejit_interp::result::{DumpRequest, RunResult, Tally};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The most worker threads a launch starts (`--threads` above it is bad input).
pub const MAX_THREADS: usize = 1024;

/// How long a worker's chunk of groups should take (PoCL aims at 100-200 µs).
pub const CHUNK_TARGET: Duration = Duration::from_micros(150);

/// How to launch.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    /// The engine every group runs on.
    pub engine: Engine,
    /// VM tuning.
    pub vm: VmOptions,
    /// G, 1..=2^24.
    pub groups: u32,
    /// Worker threads (at least 1; more than G are not started).
    pub threads: usize,
    /// `--check-races`.
    pub check_races: bool,
    /// Record a [`Span`] per chunk.
    pub timeline: bool,
}

/// One chunk of groups one worker ran (for `--timeline`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    /// The worker.
    pub thread: usize,
    /// First group.
    pub first: u32,
    /// One past the last group.
    pub end: u32,
    /// Start, microseconds since the launch began.
    pub start_us: f64,
    /// Duration, microseconds.
    pub dur_us: f64,
    /// Regions the worker's engine had compiled when the chunk ended.
    pub compiled: u64,
}

/// What a launch gives back.
#[derive(Debug)]
pub struct Launched {
    /// The contract's result.
    pub result: RunResult,
    /// What the engines did, summed over the workers.
    pub stats: EngineStats,
    /// Chunks, when a timeline was requested (by worker, then time).
    pub timeline: Vec<Span>,
    /// When the launch began (the time origin of `timeline`).
    pub t0: Instant,
    /// Worker threads that ran.
    pub threads: usize,
}

/// One worker's engine: the interpreter, or the launch's [`SharedCode`] (one JIT for every
/// worker: a region compiled once serves every group, and tier-up counts across groups).
pub struct Runner<'a> {
    code: Option<&'a SharedCode>,
    stats: EngineStats,
}

impl<'a> Runner<'a> {
    /// A runner on `code`, or on the interpreter when `None`.
    pub fn new(code: Option<&'a SharedCode>) -> Runner<'a> {
        Runner {
            code,
            stats: EngineStats::default(),
        }
    }

    /// Run `m` from its pc to its end.
    pub fn run(&mut self, m: &mut Machine, d: &Decoded) -> Exit {
        match self.code {
            Some(code) => code.run(m, d, &mut self.stats),
            None => {
                let before = m.retired;
                let exit = lanejit_interp::interp::run(m, d);
                self.stats.interp_retired += m.retired - before;
                exit
            }
        }
    }

    /// Regions compiled so far (by any worker).
    fn compiled(&self) -> u64 {
        self.code.map_or(0, |c| c.stats().compiled_regions)
    }

    /// The instructions this worker retired in each tier.
    pub fn stats(&self) -> EngineStats {
        self.stats
    }
}

/// Launch `opts.groups` groups of `d` starting from `m` (group 0's machine: memory and tile laid
/// out, `--load` applied). `dumps` are the `--dump-mem`/`--dump-tile` requests, validated.
/// Returns the result and `m`, whose memory holds the launch's final memory.
pub fn launch(
    m: Machine,
    d: &Decoded,
    dumps: &[DumpRequest],
    opts: &LaunchOptions,
) -> (Launched, Machine) {
    launch_reusing(m, d, dumps, opts, None)
}

/// [`launch`], with the compiled code of an earlier launch of the same program under the
/// same configuration when `reuse` is given (for a JIT engine with more than one group; the
/// bench's steady state). Its statistics are then those of every launch that used it.
pub fn launch_reusing(
    mut m: Machine,
    d: &Decoded,
    dumps: &[DumpRequest],
    opts: &LaunchOptions,
    reuse: Option<&SharedCode>,
) -> (Launched, Machine) {
    let g = opts.groups.max(1);
    if g == 1 {
        // The single-group run, exactly as before launches existed.
        let t0 = Instant::now();
        let (exit, stats) = vm::run(opts.engine, &mut m, d, &opts.vm);
        let timeline = if opts.timeline {
            vec![Span {
                thread: 0,
                first: 0,
                end: 1,
                start_us: 0.0,
                dur_us: t0.elapsed().as_secs_f64() * 1e6,
                compiled: stats.compiled_regions,
            }]
        } else {
            Vec::new()
        };
        let launched = Launched {
            result: RunResult::capture(&m, exit, dumps),
            stats,
            timeline,
            t0,
            threads: 1,
        };
        return (launched, m);
    }
    if opts.check_races {
        let t0 = Instant::now();
        let result = check_races(&mut m, d, g, dumps);
        let stats = EngineStats {
            interp_retired: result.instructions,
            ..EngineStats::default()
        };
        let timeline = if opts.timeline {
            vec![Span {
                thread: 0,
                first: 0,
                end: result.group.saturating_add(1),
                start_us: 0.0,
                dur_us: t0.elapsed().as_secs_f64() * 1e6,
                compiled: 0,
            }]
        } else {
            Vec::new()
        };
        let launched = Launched {
            result,
            stats,
            timeline,
            t0,
            threads: 1,
        };
        return (launched, m);
    }
    let threads = opts.threads.clamp(1, g as usize);
    let shared;
    let d = if threads > 1 {
        shared = Decoded::new(d.words()).for_shared_memory();
        &shared
    } else {
        d
    };
    let template = m.tile.clone();
    // One JIT for every worker (none for the interpreter, or without a code generator).
    let own = match (opts.engine, reuse) {
        (Engine::Interp, _) | (_, Some(_)) => None,
        (engine, None) => shared_code(engine, d, &m, &opts.vm),
    };
    let code = match opts.engine {
        Engine::Interp => None,
        _ => reuse.or(own.as_ref()),
    };
    let next = AtomicU64::new(0);
    let t0 = Instant::now();
    let work = Work {
        d,
        dumps,
        opts,
        groups: g,
        threads,
        next: &next,
        template: &template,
        writes_tile: d.writes_tile(),
        t0,
        code,
    };
    let mut outs = std::thread::scope(|s| {
        // A worker the host cannot start is simply missing: the others take its groups.
        let handles: Vec<_> = (1..threads)
            .filter_map(|t| {
                let mut mt = m.sibling(&template);
                let work = &work;
                std::thread::Builder::new()
                    .name(format!("lanejit-group-worker-{t}"))
                    .spawn_scoped(s, move || work.run(t, &mut mt))
                    .ok()
            })
            .collect();
        let mut outs = vec![work.run(0, &mut m)];
        // A worker that panicked is a bug: propagate it rather than report a partial launch.
        outs.extend(handles.into_iter().map(|h| match h.join() {
            Ok(o) => o,
            Err(p) => std::panic::resume_unwind(p),
        }));
        outs
    });
    let mut tally = Tally::default();
    let mut stats = code.map(SharedCode::stats).unwrap_or_default();
    let mut timeline = Vec::new();
    for o in outs.drain(..) {
        tally.merge(o.tally);
        stats.jit_retired += o.stats.jit_retired;
        stats.interp_retired += o.stats.interp_retired;
        timeline.extend(o.spans);
    }
    let result = tally
        .finish(&m.mem)
        .unwrap_or_else(|| RunResult::capture(&m, Exit::Halted, dumps));
    let launched = Launched {
        result,
        stats,
        timeline,
        t0,
        threads,
    };
    (launched, m)
}

/// The compiled code a launch on `engine` shares between its workers (none for the
/// interpreter, or when the code generator cannot start).
pub fn shared_code(engine: Engine, d: &Decoded, m: &Machine, vm: &VmOptions) -> Option<SharedCode> {
    let code = match engine {
        Engine::Interp => None,
        Engine::Jit => SharedCode::new(d, m, 0).ok(),
        Engine::Tiered => SharedCode::new(d, m, vm.jit_threshold).ok(),
    }?;
    if let Some(o) = &vm.observer {
        code.set_observer(o.clone());
    }
    code.set_code_cache(vm.code_cache.clone());
    Some(code)
}

/// The groups of a launch run one at a time in reference order on one engine, exactly as
/// [`launch`] runs them on one thread (one shared code for every group, tier-up counting
/// across groups), with a look at the machine after each group: `lanejit compare` steps two
/// engines side by side this way to find the first group in which they differ.
pub struct InOrder<'d> {
    m: Machine,
    d: &'d Decoded,
    code: Option<SharedCode>,
    template: lanejit_interp::memory::Tile,
    groups: u32,
    next: u32,
}

impl<'d> InOrder<'d> {
    /// Groups `0..groups` of `d` on `engine`, from `m` (group 0's machine: memory and tile
    /// laid out, `--load` applied).
    pub fn new(m: Machine, d: &'d Decoded, engine: Engine, vm: &VmOptions, groups: u32) -> Self {
        InOrder {
            code: shared_code(engine, d, &m, vm),
            template: m.tile.clone(),
            m,
            d,
            groups,
            next: 0,
        }
    }

    /// Run the next group to its end, under an instruction limit of `budget` instead of the
    /// configured one when both are given (compiled code is specialised for runs with and
    /// without a limit, so a machine configured without one ignores `budget`); its id and
    /// how it ended, `None` once every group has run.
    pub fn step(&mut self, budget: Option<u64>) -> Option<(u32, Exit)> {
        let gid = self.next;
        if gid >= self.groups {
            return None;
        }
        self.next += 1;
        self.m.start_group(gid, self.groups, &self.template, true);
        let configured = self.m.config.max_instructions;
        if budget.is_some() && configured.is_some() {
            self.m.config.max_instructions = budget;
        }
        let exit = Runner::new(self.code.as_ref()).run(&mut self.m, self.d);
        self.m.config.max_instructions = configured;
        Some((gid, exit))
    }

    /// The machine: after a step, the group's registers and tile and memory after it.
    pub fn machine(&self) -> &Machine {
        &self.m
    }

    /// The machine, to change (a test's fault hook).
    pub fn machine_mut(&mut self) -> &mut Machine {
        &mut self.m
    }

    /// The machine, the stepping done.
    pub fn into_machine(self) -> Machine {
        self.m
    }
}

/// What every worker shares.
struct Work<'a> {
    d: &'a Decoded,
    dumps: &'a [DumpRequest],
    opts: &'a LaunchOptions,
    groups: u32,
    threads: usize,
    next: &'a AtomicU64,
    template: &'a lanejit_interp::memory::Tile,
    writes_tile: bool,
    t0: Instant,
    code: Option<&'a SharedCode>,
}

/// One worker's share of the result.
struct WorkerOut {
    tally: Tally,
    stats: EngineStats,
    spans: Vec<Span>,
}

impl Work<'_> {
    /// Worker `t`: take chunks until every group has been handed out.
    fn run(&self, t: usize, m: &mut Machine) -> WorkerOut {
        let g = u64::from(self.groups);
        let mut runner = Runner::new(self.code);
        let mut tally = Tally::default();
        let mut spans = Vec::new();
        let mut chunk = 1u64;
        // The worker's tile is fresh until a group of it may have written it.
        let mut dirty = false;
        loop {
            let first = self.next.fetch_add(chunk, Ordering::Relaxed);
            if first >= g {
                break;
            }
            let end = (first + chunk).min(g);
            let start = Instant::now();
            for gid in first..end {
                m.start_group(gid as u32, self.groups, self.template, dirty);
                dirty = self.writes_tile;
                let exit = runner.run(m, self.d);
                tally.group_ended(m, exit, self.dumps);
            }
            let took = start.elapsed();
            if self.opts.timeline {
                spans.push(Span {
                    thread: t,
                    first: first as u32,
                    end: end as u32,
                    start_us: (start - self.t0).as_secs_f64() * 1e6,
                    dur_us: took.as_secs_f64() * 1e6,
                    compiled: runner.compiled(),
                });
            }
            chunk = next_chunk(
                took,
                end - first,
                self.next.load(Ordering::Relaxed),
                g,
                self,
            );
        }
        WorkerOut {
            tally,
            stats: runner.stats(),
            spans,
        }
    }
}

/// The size of a worker's next chunk after `done` groups took `took`: about [`CHUNK_TARGET`]
/// of work, at most a `1 / (2 * threads)` share of the groups left, at least one.
fn next_chunk(took: Duration, done: u64, handed: u64, g: u64, w: &Work<'_>) -> u64 {
    let per_group = (took.as_nanos() as u64 / done.max(1)).max(1);
    let want = CHUNK_TARGET.as_nanos() as u64 / per_group;
    let left = g.saturating_sub(handed);
    let share = left / (2 * w.threads as u64);
    want.min(share).max(1)
}
