//! The tiered VM: one dispatcher that runs a program on the interpreter, the JIT, or both.
//!
//! * [`Engine::Interp`] runs `interp::run` and never compiles.
//! * [`Engine::Jit`] compiles the region at every dispatch pc on first entry.
//! * [`Engine::Tiered`] counts entries per region start and compiles a region once its count
//!   passes [`VmOptions::jit_threshold`].
//!
//! Dispatch points are the pcs where control arrives after a control instruction, after a
//! compiled region returns, or after the interpreter executed an instruction a region
//! declined. At a dispatch point with compiled code the VM enters it; a region that returns
//! "interpreter next" (declined instruction, failed check, budget too small) gets exactly one
//! `interp::step`, which also raises precise traps. Otherwise the interpreter runs one block
//! (`interp::run_block`). The final state is the interpreter's, bit for bit, whichever engine
//! runs.
//!
//! One dispatch loop serves three places to find compiled code: a [`Dispatcher`]'s own JIT
//! (one run, or one thread), [`SharedCode`], one JIT behind a reader-writer lock shared by
//! the worker threads of a launch, whose entry counts add up across all groups, and a
//! tiered run's background compiler ([`VmOptions::background`]): the run hands each hot
//! region to a compiler thread and goes on interpreting; the region runs compiled from its
//! first entry after its code is ready (loops first on quick baseline code, which the compiler
//! thread replaces with optimised code when it has nothing else to do; see
//! `lanejit_jit::Jit::set_baseline`). Compiled code and the interpreter agree bit for bit
//! and leave the state exact at every region boundary, so the result does not depend on when
//! a compile finishes; only the engine statistics do. A hot inner loop of a loop nest that
//! compiles about as fast as it asks for the nest instead ([`Redirect`]): the rows go on in
//! the interpreter until the nest's code arrives, and the inner loop is not compiled twice
//! (the 5-point stencils at 16 MiB, tiered: 4-7% faster, one compile instead of four).
//!
//! Guest memory's page tables are filled 16 MiB at a time on first use for large maps; a
//! region compiled on the run's thread first gets them filled where the scalar registers
//! point ([`fill_tables_at_registers`]), so that its first entry check does not read an
//! unfilled chunk as unmapped.

use crate::pace::{LoopWatch, Pacer, Progress, Shapes, known_ahead, later, run_rate};
use lanejit_interp::interp::{self, Decoded, DecodedCode};
use lanejit_interp::machine::{Config, Exit, Machine};
use lanejit_jit::diskcache::DiskCache;
use lanejit_jit::observe::Observer;
use lanejit_jit::shared::{Baselines, Recompile, SharedJit};
use lanejit_jit::{Jit, JitError, JitStats, RegionExit};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Whether the JIT tier is built (it is; kept for the CLI).
pub const JIT_AVAILABLE: bool = true;

/// Which engine runs a program (also the values of `--engine` and `--engines`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Engine {
    /// The reference interpreter only.
    Interp,
    /// Compile every region on first entry.
    Jit,
    /// Interpret, and compile regions that become hot (the default).
    Tiered,
}

impl Engine {
    /// Every engine, the reference (the interpreter) first: the order engines are compared in.
    pub const ALL: [Engine; 3] = [Engine::Interp, Engine::Jit, Engine::Tiered];

    /// The name on the command line (`interp`, `jit`, `tiered`).
    pub const fn name(self) -> &'static str {
        match self {
            Engine::Interp => "interp",
            Engine::Jit => "jit",
            Engine::Tiered => "tiered",
        }
    }
}

/// VM tuning.
#[derive(Clone, Debug)]
pub struct VmOptions {
    /// Entries of a region before [`Engine::Tiered`] compiles it.
    pub jit_threshold: u32,
    /// [`Engine::Tiered`] (one group) compiles on a compiler thread while the run goes on
    /// interpreting (the default); else it stops to compile, as [`Engine::Jit`] always does.
    pub background: bool,
    /// A test hook: with `background`, the compiler thread sleeps a pseudo-random 0-2 ms
    /// (drawn from this seed) before each compile, and the run waits for the compile of about
    /// every other region it hands over, so tests see compiled code enter at varied points of
    /// a run (short test programs would otherwise end before any compile does).
    pub compile_delay_seed: Option<u64>,
    /// The on-disk code cache (`--code-cache DIR`, `LANEJIT_CODE_CACHE`): compiled regions
    /// are taken from it and stored in it (see `lanejit_jit::diskcache`).
    pub code_cache: Option<Arc<DiskCache>>,
    /// What to observe of compiled code ([`lanejit_jit::observe`]: profiler symbols, the
    /// region report's counters, dumps); shown every region the run's JITs compile.
    pub observer: Option<Arc<Observer>>,
    /// With `background`: how long [`run`] interprets on the plain interpreter before it
    /// counts entries and its first hot region starts the compiler thread ([`COMPILE_AFTER`]
    /// by default; not at all under `compile_delay_seed`). A [`Resumable`] run, which the
    /// embedding API slices, counts from its first instruction.
    pub compile_after: std::time::Duration,
    /// Without `background`: compile loops as baselines only, as the background
    /// tier's baseline does before their optimised code is ready (the fuzzer's tiered runs,
    /// so that both codes of a loop are compared with the interpreter).
    pub quick_loops: bool,
    /// With `quick_loops`: a strip-mined loop whose optimiser-thread recompile starts with a
    /// step (`lanejit_jit::Baseline::steps`) runs that step's code instead, so that it is
    /// compared with the interpreter too.
    pub step_loops: bool,
}

/// How long a tiered run interprets before it starts compiling: starting a compiler thread
/// and a JIT costs 0.1-0.3 ms of the run's time (the spawn, then page faults and code
/// memory mappings the whole process shares), and its first loop takes a millisecond or
/// more to compile, so a run shorter than this is fastest interpreted throughout. With a
/// code cache the start is shorter ([`CACHED_START`]): nothing needs compiling. A run whose
/// loops are known to go on for long ([`EARLY_AHEAD`]) starts sooner (`interpret_start`).
pub const COMPILE_AFTER: std::time::Duration = std::time::Duration::from_millis(1);

impl Default for VmOptions {
    fn default() -> Self {
        VmOptions {
            jit_threshold: 16,
            background: true,
            compile_delay_seed: None,
            code_cache: None,
            observer: None,
            compile_after: COMPILE_AFTER,
            quick_loops: false,
            step_loops: false,
        }
    }
}

impl VmOptions {
    /// Tiered compiles in the foreground after `jit_threshold` entries (reproducible engine
    /// statistics: the fuzzer's and most tests' setting).
    pub const fn foreground(jit_threshold: u32) -> VmOptions {
        VmOptions {
            jit_threshold,
            background: false,
            compile_delay_seed: None,
            code_cache: None,
            observer: None,
            compile_after: std::time::Duration::ZERO,
            quick_loops: false,
            step_loops: false,
        }
    }
}

/// What the engines did (not part of the comparison between engines); serialized as the
/// `engine_stats` of `run --json`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EngineStats {
    /// Regions compiled.
    pub compiled_regions: u64,
    /// Instructions retired in compiled code.
    pub jit_retired: u64,
    /// Instructions retired by the interpreter.
    pub interp_retired: u64,
    /// Total compile time, microseconds.
    pub compile_us: u64,
    /// Regions the translator or Cranelift failed on (they run on the interpreter, so the
    /// result is still right; tests require none).
    pub compile_errors: u64,
    /// Regions taken from the on-disk code cache instead of compiled (`--code-cache`).
    #[serde(default)]
    pub cached_regions: u64,
    /// Loops of a tiered run whose quick (baseline) code the compiler thread has replaced by
    /// optimised code, a strip-mined step and the register form after it counted apart (not
    /// counted in `compiled_regions`; their compile time is in `compile_us`).
    #[serde(default)]
    pub optimized_regions: u64,
}

/// Run `m` from its pc on `engine` until it halts, traps or reaches its instruction limit.
pub fn run(engine: Engine, m: &mut Machine, d: &Decoded, opts: &VmOptions) -> (Exit, EngineStats) {
    let threshold = match engine {
        Engine::Interp => return run_interp(m, d),
        Engine::Jit => 0,
        Engine::Tiered => opts.jit_threshold,
    };
    if engine == Engine::Tiered && opts.background {
        return run_background(m, d, threshold, opts);
    }
    match Dispatcher::new(d, m, threshold) {
        Ok(mut disp) => {
            if let Some(o) = &opts.observer {
                disp.jit_mut().set_observer(o.clone());
            }
            disp.jit_mut().set_disk_cache(opts.code_cache.clone());
            disp.jit_mut().set_baseline(opts.quick_loops);
            disp.jit_mut().set_step_first(opts.step_loops);
            let exit = disp.run(m, d);
            (exit, disp.stats())
        }
        // No code generator for this host: the interpreter gives the same result.
        Err(_) => run_interp(m, d),
    }
}

/// A tiered run with a background compiler (see the module docs). Nothing is set up until a
/// region gets hot: then a compiler thread starts, creates the JIT (which takes a
/// millisecond or two: not on the run's path), takes hot regions over a channel and ends once
/// the run has ended and the compile in hand, if any, is done (the run does not wait).
fn run_background(
    m: &mut Machine,
    d: &Decoded,
    threshold: u32,
    opts: &VmOptions,
) -> (Exit, EngineStats) {
    let (mut jit_retired, mut interp_retired) = (0, 0);
    // When the run began, for its pace: the end of its first slice when it interprets its
    // start (a run that ends within that slice reads no clock: a read cost about 300 ns on
    // this project's earlier hosts, 3% of a 16 KiB kernel's run; 20-25 ns where the kernel's
    // clocksource is the TSC), else now.
    let mut began = None;
    // Until compiling is worth it, the plain interpreter (no tier set up, no entry counts,
    // no dispatch); with a code cache, until making the JIT that installs the cached regions
    // is (`CACHED_START`).
    let start = match opts.code_cache {
        Some(_) => opts.compile_after.min(CACHED_START),
        None => opts.compile_after,
    };
    if opts.compile_delay_seed.is_none() && !start.is_zero() {
        if let Some(e) = interpret_start(m, d, start, &mut interp_retired, &mut began) {
            let stats = EngineStats {
                interp_retired,
                ..EngineStats::default()
            };
            return (e, stats);
        }
    }
    let began = began.unwrap_or_else(std::time::Instant::now);
    let mut tier = BackgroundTier::new(d, m, threshold, opts, began);
    let exit = dispatch(&mut tier, m, d, &mut jit_retired, &mut interp_retired);
    let mut stats = tier.compile_stats();
    stats.jit_retired = jit_retired;
    stats.interp_retired = interp_retired;
    (exit, stats)
}

/// How long a tiered run with a code cache interprets before it makes its JIT, which then
/// installs the cached regions (see [`COMPILE_AFTER`]): about what making it costs, so that a
/// run too short to gain from compiled code is not slowed by it, and a longer one pays at most
/// twice that for waiting.
pub const CACHED_START: std::time::Duration = std::time::Duration::from_micros(200);

/// Instructions the interpreter runs between reads of the clock while a background-tier run
/// interprets its start (see [`COMPILE_AFTER`]).
const START_SLICE: u64 = 1024;

/// Interpret up to `n` instructions of `m` under its instruction limit: the run's exit if it
/// ended, else `None` with the machine exactly where the interpreter paused (the budget is
/// only a pause, as the embedding API's stop slices).
fn interpret_slice(m: &mut Machine, d: &Decoded, n: u64) -> Option<Exit> {
    let limit = m.config.max_instructions;
    let cap = limit.unwrap_or(u64::MAX);
    m.config.max_instructions = Some(m.retired.saturating_add(n).min(cap));
    let e = interp::run(m, d);
    m.config.max_instructions = limit;
    (e != Exit::Limit || m.retired >= cap).then_some(e)
}

/// Interpret `m` in slices of [`START_SLICE`] instructions (an instruction budget that is
/// only a pause, as the embedding API's stop slices) for about `time`, measured from the end
/// of the first slice (a short run reads no clock; `first` is set to that end): the run's
/// exit if it ended by then, else `None` (the machine exactly where the interpreter paused).
/// Sooner when the loops the run is in are known to go on for [`EARLY_AHEAD`] more at the
/// rate of the slices so far ([`crate::pace::loops_left`], looked at every [`EARLY_EVERY`]
/// slices): such a run gains from compiled code, and the time the plain interpreter spends
/// first only delays it.
fn interpret_start(
    m: &mut Machine,
    d: &Decoded,
    time: std::time::Duration,
    interp_retired: &mut u64,
    first: &mut Option<std::time::Instant>,
) -> Option<Exit> {
    let mut slices = 0u64;
    let mut at_first = 0u64;
    let mut shapes = Shapes::new(d);
    loop {
        let before = m.retired;
        let e = interpret_slice(m, d, START_SLICE);
        *interp_retired += m.retired - before;
        if e.is_some() {
            return e;
        }
        let now = std::time::Instant::now();
        let start = *first.get_or_insert_with(|| {
            at_first = m.retired;
            now
        });
        if now >= start + time {
            return None;
        }
        slices += 1;
        if slices % EARLY_EVERY == 0 {
            let secs = (now - start).as_secs_f64();
            let done = m.retired - at_first;
            let left = crate::pace::loops_left(&mut shapes, m.pc, m).unwrap_or(0);
            if secs > 0.0 && done > 0 && left as f64 * secs >= done as f64 * EARLY_AHEAD {
                return None;
            }
        }
    }
}

/// Known work left, in seconds of the run's interpretation so far, from which a run starts
/// its tier before [`COMPILE_AFTER`] (see [`interpret_start`]): about twice a loop's
/// baseline compile (1-2 ms at VL 32) plus the compiler's start-up.
const EARLY_AHEAD: f64 = 0.004;

/// Slices between looks at the known work left while a run interprets its start.
const EARLY_EVERY: u64 = 2;

/// Where a background run's compiler thread runs (see [`ThreadPlace::place`]).
///
/// Linux starts a new thread on its parent's CPU, and while the parent keeps that CPU busy
/// (a run interpreting) the new thread waits for the scheduler's load balancing to move it
/// to an idle CPU: 3.9 ms on this project's 2-vCPU hosts, measured from the spawn to the
/// thread's first instruction with the parent spinning, which is longer than a 16 MiB
/// kernel's whole compiled run. Letting it run on the parent's CPU (the parent waiting until
/// it is up) is not enough: the two then share that CPU for ~2.8 ms. So the parent, right
/// after the spawn, sets the new thread's affinity to its own without the parent's CPU (the
/// kernel moves the not yet running thread to an idle CPU at once), and the thread, once it
/// runs, takes the parent's affinity back (which does not move it again): up 80-140 us after
/// the spawn, the parent back at work after the spawn's own 40-50 us.
struct ThreadPlace {
    /// The parent's CPU and affinity when it spawned the thread (Linux only).
    #[cfg(target_os = "linux")]
    at: Option<(usize, libc::cpu_set_t)>,
    /// Set by the parent once it placed the thread (or gave up), so that the thread takes
    /// the parent's affinity back only after that.
    placed: AtomicBool,
}

impl ThreadPlace {
    /// The calling thread's CPU and affinity, for a thread it is about to spawn.
    fn here() -> Arc<ThreadPlace> {
        #[cfg(target_os = "linux")]
        // SAFETY: `sched_getcpu` takes no arguments and only reads the calling thread's CPU;
        // `cpu_set_t` is plain bits, valid all-zero, and `sched_getaffinity` with pid 0
        // writes the calling thread's affinity into it, of the size given.
        let at = unsafe {
            let cpu = libc::sched_getcpu();
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            let size = std::mem::size_of::<libc::cpu_set_t>();
            (cpu >= 0
                && (cpu as usize) < libc::CPU_SETSIZE as usize
                && libc::sched_getaffinity(0, size, &mut set) == 0)
                .then_some((cpu as usize, set))
        };
        Arc::new(ThreadPlace {
            #[cfg(target_os = "linux")]
            at,
            placed: AtomicBool::new(false),
        })
    }

    /// In the parent, right after spawning `thread`: move it off the parent's CPU when its
    /// affinity has another one.
    fn place<T>(&self, thread: &std::thread::JoinHandle<T>) {
        #[cfg(target_os = "linux")]
        if let Some((cpu, set)) = &self.at {
            use std::os::unix::thread::JoinHandleExt;
            let mut away = *set;
            // SAFETY: `CPU_CLR` and `CPU_COUNT` only touch the set given (`cpu` is below
            // `CPU_SETSIZE`, checked in `here`); `pthread_setaffinity_np` reads a set of the
            // size given and changes the affinity of `thread`, which has not been joined or
            // detached yet, so its handle is valid.
            unsafe {
                libc::CPU_CLR(*cpu, &mut away);
                if libc::CPU_COUNT(&away) > 0 {
                    let size = std::mem::size_of::<libc::cpu_set_t>();
                    libc::pthread_setaffinity_np(thread.as_pthread_t(), size, &away);
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = thread;
        self.placed.store(true, Ordering::Release);
    }

    /// In the new thread, first thing: wait until the parent placed it, then take the
    /// parent's affinity back.
    fn settle(&self) {
        while !self.placed.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
        #[cfg(target_os = "linux")]
        if let Some((_, set)) = &self.at {
            // SAFETY: `sched_setaffinity` with pid 0 sets the calling thread's affinity from
            // a set of the size given, read only.
            unsafe {
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set);
            }
        }
    }
}

/// How often a background run's idle compiler thread looks for hot straight-line regions
/// the run queued in the JIT (`lanejit_jit::Jit::set_defer_hot`).
const HOT_POLL: std::time::Duration = std::time::Duration::from_millis(1);

/// A hot region handed to a background run's compiler thread: its pc, the hints of the entry
/// that made it hot, and until when the run is known to go on ([`known_ahead`]); for a loop
/// nest asked for in place of its hot inner loop ([`Redirect`]), the inner loop's pc and
/// hints, compiled instead when the nest is not.
struct Request {
    pc: u64,
    hints: lanejit_jit::region::Hints,
    ahead: Option<std::time::Instant>,
    fallback: Option<(u64, lanejit_jit::region::Hints)>,
}

/// A hot inner loop whose loop nest was asked for instead (`region::nest_around`): the run
/// interprets the inner loop until its row ends and enters the nest's code at the next row.
/// A tiered run used to compile the inner loop first (it gets hot within the first row) and
/// the nest when its rows had got hot too: two optimised compiles of the same loop, and the
/// nest's arriving late (a 5-point stencil's nest at 16 MiB: requested 8 ms into an 18 ms
/// run). Should the row not end, the inner loop is asked for after all: when it has been
/// entered [`REDIRECT_PATIENCE`] times since the nest's start last was.
struct Redirect {
    inner: u64,
    nest: u64,
    since: u32,
    /// The compiler thread's count of finished requests once the nest's is done.
    ticket: u64,
}

/// Entries of a redirected inner loop without one of its nest's start, after which the inner
/// loop is compiled itself (a row of a few hundred thousand iterations: about 1,000 of them
/// interpreted more, at most a millisecond or two).
const REDIRECT_PATIENCE: u32 = 1024;

/// Compiler threads of background runs still working (see [`wait_for_compilers`]).
static COMPILERS: AtomicU32 = AtomicU32::new(0);

/// Wait until the compiler threads of earlier background runs have finished the compiles
/// they had in hand (benchmarks call it between cold runs, untimed).
pub fn wait_for_compilers() {
    while COMPILERS.load(Ordering::Acquire) != 0 {
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
}

/// Counts a compiler thread in [`COMPILERS`] while it lives.
struct CompilerAlive;

impl CompilerAlive {
    fn new() -> CompilerAlive {
        COMPILERS.fetch_add(1, Ordering::AcqRel);
        CompilerAlive
    }
}

impl Drop for CompilerAlive {
    fn drop(&mut self) {
        COMPILERS.fetch_sub(1, Ordering::AcqRel);
    }
}

/// What a background run's compiler thread gets from the run: hot pcs with their hints,
/// the count of compiles it has finished to raise, and its pace.
struct FromRun {
    rx: std::sync::mpsc::Receiver<Request>,
    done: Arc<AtomicU64>,
    pacer: Pacer,
    /// The pc of the compiled region the run is in now, plus one (0: none; see
    /// [`BackgroundTier::running`]).
    running: Arc<AtomicU64>,
}

/// The test hook's delay of a compiler or optimiser thread (`VmOptions::compile_delay_seed`):
/// a pseudo-random 0-2 ms from `rng`, or none without the hook.
fn test_delay(rng: &mut Option<ChaCha8Rng>) {
    if let Some(r) = rng.as_mut() {
        let us = r.random_range(0..2000);
        std::thread::sleep(std::time::Duration::from_micros(us));
    }
}

/// How often an idle optimiser thread ([`optimizer_thread`]) looks for a baseline to
/// replace.
const OPTIMIZE_POLL: std::time::Duration = std::time::Duration::from_micros(250);

/// The optimiser thread of a background run, started by its compiler thread after its first
/// compile: replaces the baseline of the loop the run is in (`running`) by its optimised
/// code (for a strip-mined baseline whose register form is large, first by the same IR
/// optimised, then by the register form: `lanejit_jit::Baseline::steps`), each recompile
/// when `pacer` lets it go (paced by how far the loop has to go, [`LoopWatch`]), until the
/// run ends.
///
/// The compiler thread did the recompiles itself when no region waited, and a region the
/// run asked for during one waited for its end: 1.8-2.5 ms for the kernel loops of a dot
/// product and a branchy saxpy that follow a fill loop (whose optimised compile had just
/// begun), which ran interpreted meanwhile, and in one run of the dot product the kernel
/// loop was never compiled before the run's end. On its own thread, the recompile shares
/// the host with the first compile and the run (on this project's 2-vCPU hosts the
/// interpreter runs at about 60% of its speed beside one compile, see [`Pacer`]), and the
/// first compile no longer waits.
///
/// Why `SCHED_IDLE`: a CPU running only idle-class threads counts as idle where Linux
/// places a waking thread, so the compiler thread woken by a request runs at once. At
/// normal priority, or at nice 10, the woken compiler thread waited behind the run and the
/// recompile for 1.7-2.3 ms (saxpy_branch's and dot_i32's kernel loops, `--timeline`). The
/// price is on a host busy with other work, where an idle-class thread gets almost no CPU
/// and a loop may keep its baseline to the end. Tiered ms at N = 1M, medians of three
/// (`lanejit bench --reps 5 --engine tiered`; before = `e2b4d3f`, with its baselines
/// optimised and its recompiles on the compiler thread; idle, nice 10, normal), quiet host:
/// saxpy_branch 7.67 / 6.37 / 6.53 / 6.74, dot_i32 5.31 / 4.27 / 5.05 / 4.90, fir_unfused
/// 5.21 / 4.36 / 4.62 / 4.62, lut 5.53 / 5.08 / 5.12 / 5.41; beside a process spinning on
/// one of the two CPUs: 8.21 / 10.66 / 9.68 / 10.04, 8.35 / 8.14 / 7.69 / 7.47, 5.46 / 7.04
/// / 7.60 / 4.82, 8.52 / 7.76 / 6.49 / 6.11 (noisier). An unprivileged thread cannot leave
/// the idle class again (`RLIMIT_NICE`), so the policy is not switched per compile.
fn optimizer_thread(
    code: &SharedCode,
    pacer: &Pacer,
    running: &AtomicU64,
    delay_seed: Option<u64>,
) {
    #[cfg(target_os = "linux")]
    // SAFETY: `sched_setscheduler` with pid 0 changes the calling thread's policy, reading
    // the parameter given (priority 0, the only one `SCHED_IDLE` takes).
    unsafe {
        let param = libc::sched_param { sched_priority: 0 };
        libc::sched_setscheduler(0, libc::SCHED_IDLE, &param);
    }
    // How far a loop running its baseline has to go (its recompile's pace).
    let mut watch = code.jit.tier_words().map(LoopWatch::new);
    let mut rng = delay_seed.map(ChaCha8Rng::seed_from_u64);
    loop {
        test_delay(&mut rng);
        // Only code the run is in when its turn comes: a loop that has ended (a fill loop
        // before the kernel's own) may never run again. Not in compiled code, or in code
        // whose baseline does not wait: no recompile now (and no exclusive hold of the JIT
        // to find that out). The loop leaves its baseline at its next header for the
        // optimised code (`lanejit_jit::abi::TierWords`).
        let which = match running.load(Ordering::Relaxed).checked_sub(1) {
            Some(pc) => Baselines::Of(pc),
            None => Baselines::Not,
        };
        let waits = |us, pc| {
            let ahead = || watch.as_mut().and_then(|w| w.ahead(pc));
            pacer.wait_seeing(us, ahead, || false)
        };
        match code.jit.optimize_one_paced(which, waits) {
            Recompile::Done => {
                pacer.done();
                continue;
            }
            // The pace says no only once the run has ended.
            Recompile::Deferred => break,
            Recompile::Nothing => {}
        }
        if pacer.ended() {
            break;
        }
        std::thread::sleep(OPTIMIZE_POLL);
    }
}

/// The compiler thread of a background run: create the JIT into `cell` (with the code cache
/// and observer of `opts`), then compile every pc received, each when `run.pacer` lets it
/// go, after a pseudo-random delay of 0-2 ms when `opts.compile_delay_seed` is given (a
/// test hook). Without a code generator it ends at once (everything stays interpreted).
fn compiler_thread(
    cell: Arc<std::sync::OnceLock<SharedCode>>,
    program: &DecodedCode,
    config: &Config,
    threshold: u32,
    opts: VmOptions,
    run: FromRun,
) {
    let FromRun {
        rx,
        done,
        pacer,
        running,
    } = run;
    let VmOptions {
        compile_delay_seed: delay_seed,
        code_cache,
        observer,
        ..
    } = opts;
    let has_cache = code_cache.is_some();
    let code = match cell.get() {
        // Made by the run already (a code cache).
        Some(code) => code,
        None => {
            let Ok(code) = SharedCode::for_config(program, config, threshold) else {
                done.store(u64::MAX, Ordering::Release);
                return;
            };
            if let Some(o) = observer {
                code.set_observer(o);
            }
            code.set_code_cache(code_cache);
            cell.get_or_init(|| code)
        }
    };
    // Loops get quick code first; their optimised code replaces it later, compiled by an
    // optimiser thread (`optimizer_thread`) so that a region the run asks for meanwhile is
    // compiled at once. Hot straight-line regions are recompiled here too, not on the run's
    // path: a hot recompile of 8 instructions at VL 64 (a branch loop's body) took the run
    // 2.9 ms.
    code.jit.set_baseline(true);
    code.jit.set_defer_hot(true);
    let mut rng = delay_seed.map(ChaCha8Rng::seed_from_u64);
    let mut delay = || test_delay(&mut rng);
    let mut optimizer: Option<std::thread::JoinHandle<()>> = None;
    loop {
        let Request {
            pc,
            hints,
            ahead,
            fallback,
        } = match rx.try_recv() {
            Ok(job) => job,
            Err(std::sync::mpsc::TryRecvError::Empty) => {
                delay();
                // Nothing asked for: a hot straight-line region's recompile (its first
                // compile runs vector work on helpers), else the next region the run asks
                // for, or, every millisecond, a look at what the run's entries queued in the
                // JIT.
                if code.jit.optimize_one_paced(Baselines::Not, |_, _| true) == Recompile::Done {
                    continue;
                }
                match rx.recv_timeout(HOT_POLL) {
                    Ok(job) => job,
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
            Err(std::sync::mpsc::TryRecvError::Disconnected) => break,
        };
        delay();
        // Declined or failed pcs stay requested: the run interprets them.
        let nest = code
            .jit
            .compile_paced(pc, hints, |us| pacer.wait(us, ahead, || false));
        if let (Ok(None), Some((inner, hints))) = (nest, fallback) {
            // A nest asked for in place of its inner loop, and not compiled: the inner loop.
            let _ = code
                .jit
                .compile_paced(inner, hints, |us| pacer.wait(us, ahead, || false));
        }
        pacer.done();
        done.fetch_add(1, Ordering::Release);
        // The first compile made a baseline (or will soon): its optimiser thread, started
        // after this compile, not before it.
        if optimizer.is_none() {
            let cell = Arc::clone(&cell);
            let pacer = pacer.sibling();
            let running = Arc::clone(&running);
            // Its own draws of the test hook's delays.
            let seed = delay_seed.map(|k| k.rotate_left(17) ^ 0x5851_f42d_4c95_7f2d);
            let alive = CompilerAlive::new();
            optimizer = std::thread::Builder::new()
                .name("lanejit-optimizer".into())
                .spawn(move || {
                    let _alive = alive;
                    if let Some(code) = cell.get() {
                        optimizer_thread(code, &pacer, &running, seed);
                    }
                })
                .ok();
        }
    }
    // The run has ended. With a code cache, the optimised code of every loop still running
    // its baseline goes to the cache for the next run (`run` waits for it), once the
    // optimiser thread has placed the one it has in hand; else it is not worth the work.
    if has_cache {
        if let Some(t) = optimizer {
            let _ = t.join();
        }
        code.jit.discard_hot();
        while code.jit.optimize_one() {}
    }
    done.store(u64::MAX, Ordering::Release);
}

/// Entry counts of a tiered run with a background compiler (see [`run_background`]); a hot
/// region is sent to the compiler thread once and marked requested.
struct BackgroundTier<'d> {
    d: &'d Decoded,
    /// The loops around a pc, as the pace's scans read them.
    shapes: Shapes<'d>,
    counts: Vec<u32>,
    threshold: u32,
    /// The run's options (the compiler thread's code cache).
    opts: VmOptions,
    /// The test hook's draws of when to wait for a compile (from `opts.compile_delay_seed`).
    wait_rng: Option<ChaCha8Rng>,
    /// The JIT, once the compiler thread (or, with a code cache, the run) has created it.
    code: Option<std::sync::Arc<std::sync::OnceLock<SharedCode>>>,
    /// To the compiler thread, once started: hot pcs, each with the hints of the entry that
    /// made it hot (a loop tail ahead or not, lane vectors; `lanejit_jit::region::Hints`).
    tx: Option<std::sync::mpsc::Sender<Request>>,
    /// No code generator or no thread: everything is interpreted.
    failed: bool,
    /// Regions handed over, and compiles the compiler thread has finished (`u64::MAX` once
    /// it has ended).
    sent: u64,
    done: std::sync::Arc<AtomicU64>,
    /// Block starts looked at in a row without compiled code there (see [`SAMPLE_SLICE`]).
    misses: u32,
    /// When the run started, and whether it has ended (for the compiler thread's [`Pacer`]).
    began: std::time::Instant,
    ended: Arc<AtomicBool>,
    /// The program as the JIT's region discovery reads it, made at the first hot region.
    regions: Option<lanejit_jit::region::Code>,
    /// Hot inner loops whose nests were asked for instead.
    redirects: Vec<Redirect>,
    /// Where the run stood at its first entry count (see [`Progress::ahead`]).
    progress: Option<Progress>,
    /// Where the run stood at its first entry count since compiled code last ran (see
    /// [`Progress::rate`]).
    stretch: Option<Progress>,
    /// The pc of the compiled region the run is in now, plus one, 0 outside compiled code:
    /// the compiler thread recompiles a baseline only while the run is in it.
    running: Arc<AtomicU64>,
}

impl Drop for BackgroundTier<'_> {
    fn drop(&mut self) {
        self.ended.store(true, Ordering::Release);
    }
}

/// After this many block starts in a row without compiled code, a background run's dispatch
/// loop samples instead of looking at every block start (see [`SAMPLE_SLICE`]).
const SAMPLE_AFTER_MISSES: u32 = 64;

/// Instructions a background run interprets between two looks at a block start while
/// nothing compiled is being entered (after [`SAMPLE_AFTER_MISSES`] misses in a row; the
/// first hit looks at every block start again). Looking at each one (the compiled-code
/// lookup, the entry count, an interpreter call per block) made an interpreted stretch of a
/// tiered run 3-7% slower than the plain interpreter, for loops of a few instructions
/// (saxpy32, tile_stage). Sampled, entry counts grow with the time spent at a block rather
/// than with its entries (a region gets hot after about `jit_threshold` slices of about
/// 10 us each), and a loop whose code is ready is entered at most a slice late.
const SAMPLE_SLICE: u64 = 1024;

/// The entry count of a region start handed to the compiler thread.
const REQUESTED: u32 = u32::MAX - 1;

impl<'d> BackgroundTier<'d> {
    /// No compiler thread yet, and nothing compiled (but what a code cache holds) for `d` on
    /// machines configured as `m` is.
    fn new(
        d: &'d Decoded,
        m: &Machine,
        threshold: u32,
        opts: &VmOptions,
        began: std::time::Instant,
    ) -> BackgroundTier<'d> {
        let mut tier = BackgroundTier {
            d,
            shapes: Shapes::new(d),
            counts: vec![0; d.len()],
            threshold,
            opts: opts.clone(),
            wait_rng: opts
                .compile_delay_seed
                .map(|k| ChaCha8Rng::seed_from_u64(!k)),
            code: None,
            tx: None,
            failed: false,
            sent: 0,
            done: std::sync::Arc::new(AtomicU64::new(0)),
            misses: 0,
            began,
            ended: Arc::new(AtomicBool::new(false)),
            regions: None,
            redirects: Vec::new(),
            progress: None,
            stretch: None,
            running: Arc::new(AtomicU64::new(0)),
        };
        if opts.code_cache.is_some() {
            // With a code cache the JIT is made with the tier (after the run's interpreted
            // start, `CACHED_START`; making it takes 0.2-0.5 ms): it installs the regions the
            // cache holds for this program, which then run compiled from their next entry; the
            // compiler thread still starts at the first hot region.
            if let Ok(code) = SharedCode::for_config(d.program(), &m.config, threshold) {
                // The observer first: a counting JIT takes nothing from the cache.
                if let Some(o) = &opts.observer {
                    code.set_observer(o.clone());
                }
                code.set_code_cache(opts.code_cache.clone());
                let cell = std::sync::OnceLock::new();
                let _ = cell.set(code);
                tier.code = Some(std::sync::Arc::new(cell));
            }
        }
        tier
    }

    /// The compile statistics so far (not waiting for a compile still in progress).
    fn compile_stats(&self) -> EngineStats {
        let mut stats = EngineStats::default();
        if let Some(code) = self.code.as_ref().and_then(|c| c.get()) {
            let cs = code.jit.try_stats();
            stats.compiled_regions = cs.compiled_regions;
            stats.compile_us = cs.compile_us;
            stats.compile_errors = cs.compile_errors;
            stats.cached_regions = cs.cached_regions;
            stats.optimized_regions = cs.optimized_regions;
        }
        stats
    }

    /// Until when the run is known to go on, for a region at `pc` hot now: what the loops'
    /// counts say ([`known_ahead`], at the rate the run has interpreted at since compiled code
    /// last ran: [`Progress::rate`], or the run's rate so far when that stretch is too short)
    /// or what the running hardware loop's progress since counting began says
    /// ([`Progress::ahead`]) or the innermost counted branch loop's since that stretch began
    /// ([`Progress::branch_ahead`]), the latest.
    fn ahead(&mut self, pc: u64, m: &Machine) -> Option<std::time::Instant> {
        let shapes = &mut self.shapes;
        let measured = later(
            self.progress.and_then(|p| p.ahead(m)),
            self.stretch.and_then(|p| p.branch_ahead(shapes, pc, m)),
        );
        let rate = self
            .stretch
            .and_then(|p| p.rate(m))
            .or_else(|| run_rate(m, self.began));
        let counted = rate.and_then(|r| known_ahead(&mut self.shapes, pc, m, r));
        later(counted, measured)
    }

    /// The program as the JIT's region discovery reads it (made on first need).
    fn regions(&mut self) -> &lanejit_jit::region::Code {
        let d = self.d;
        self.regions
            .get_or_insert_with(|| lanejit_jit::region::Code::of(d.program()))
    }

    /// The hints of an entry at `pc` with `m`'s registers (`Hints::at`, as the JIT's
    /// `hints_for`).
    fn hints_at(&mut self, pc: u64, m: &Machine) -> lanejit_jit::region::Hints {
        let vl = m.config.vl;
        lanejit_jit::region::Hints::at(self.regions(), pc, &m.regs, vl)
    }

    /// Hand `req` to the compiler thread (a closed channel, the compiler thread gone, leaves
    /// its pc interpreted).
    fn send(&mut self, req: Request) {
        if let Some(tx) = &self.tx {
            if tx.send(req).is_ok() {
                self.sent += 1;
            }
        }
    }

    /// The block at `pc` with redirected inner loops (see [`Redirect`]): an entry of a nest's
    /// start restarts its inner loop's patience; an entry of a redirected inner loop uses it
    /// up, and at its end asks for the inner loop itself. Whether `pc` is such an inner loop
    /// (counted here, not as a region start).
    fn redirected(&mut self, pc: u64, m: &Machine) -> bool {
        for r in self.redirects.iter_mut().filter(|r| r.nest == pc) {
            r.since = 0;
        }
        let Some(i) = self.redirects.iter().position(|r| r.inner == pc) else {
            return false;
        };
        // Once the nest's compile is done, every block start is looked at while the row goes
        // on (no sampling, see `SAMPLE_SLICE`): the row's end at the nest's start is where
        // its code is entered, a block that slices of a fixed length may never stop at.
        // Not before: a run too short for the compile (the pacer holds it back) would
        // interpret its rest 3-7% slower (stencil5_lc0 at 1 MiB, tiered: 0.92-0.96x the
        // interpreter, 0.98-1.01x before the redirect).
        if self.done.load(Ordering::Acquire) >= self.redirects[i].ticket {
            self.misses = 0;
        }
        self.redirects[i].since += 1;
        if self.redirects[i].since > REDIRECT_PATIENCE {
            self.redirects.swap_remove(i);
            let req = Request {
                pc,
                hints: self.hints_at(pc, m),
                ahead: self.ahead(pc, m),
                fallback: None,
            };
            self.send(req);
        }
        true
    }

    /// Start the compiler thread (first hot region).
    fn start(&mut self, m: &Machine) {
        let cell =
            (self.code.clone()).unwrap_or_else(|| std::sync::Arc::new(std::sync::OnceLock::new()));
        let (tx, rx) = std::sync::mpsc::channel::<Request>();
        let compiler = std::sync::Arc::clone(&cell);
        let (threshold, config) = (self.threshold, m.config);
        let d = self.d;
        let program = d.program().clone();
        let opts = self.opts.clone();
        let run = FromRun {
            rx,
            done: Arc::clone(&self.done),
            pacer: Pacer::new(
                self.began,
                Arc::clone(&self.ended),
                opts.compile_delay_seed.is_none(),
                opts.code_cache.is_some(),
            ),
            running: Arc::clone(&self.running),
        };
        let alive = CompilerAlive::new();
        let place = ThreadPlace::here();
        let settle = Arc::clone(&place);
        let spawned = std::thread::Builder::new()
            .name("lanejit-compiler".into())
            .spawn(move || {
                let _alive = alive;
                settle.settle();
                compiler_thread(compiler, &program, &config, threshold, opts, run)
            });
        if let Ok(thread) = &spawned {
            place.place(thread);
        }
        match spawned {
            Ok(_) => {
                self.code = Some(cell);
                self.tx = Some(tx);
            }
            Err(_) => self.failed = true,
        }
    }
}

impl Tier for BackgroundTier<'_> {
    fn enter(&mut self, m: &mut Machine) -> Option<RegionExit> {
        let jit = &self.code.as_ref()?.get()?.jit;
        // Wrapping: a pc of 2^64 - 1 (never compiled code) reads as none.
        self.running.store(m.pc.wrapping_add(1), Ordering::Relaxed);
        let exit = jit.try_run_at(m);
        self.running.store(0, Ordering::Relaxed);
        if exit.is_some() {
            // Compiled code ran: the interpreted stretch the pace measures starts again at
            // the next entry count.
            self.stretch = None;
        }
        exit
    }

    fn slice(&mut self, hit: bool) -> u64 {
        if hit {
            self.misses = 0;
            return 0;
        }
        self.misses = self.misses.saturating_add(1);
        if self.misses >= SAMPLE_AFTER_MISSES {
            SAMPLE_SLICE
        } else {
            0
        }
    }

    fn count(&mut self, pc: u64, m: &Machine) -> bool {
        if !self.redirects.is_empty() && self.redirected(pc, m) {
            return false;
        }
        let Some(n) = self.counts.get_mut((pc / 8) as usize) else {
            return false;
        };
        if *n >= REQUESTED {
            return false;
        }
        *n += 1;
        // Marked at a count that can make a region hot, not at every interpreted block start
        // after compiled code: a clock read cost about 300 ns on this project's earlier hosts
        // (20-25 ns with the TSC as the kernel's clocksource), and
        // a row loop whose inner loop alone is compiled returns to the interpreter every row.
        // The run's first count marks both (nothing is redirected or requested before it).
        if self.stretch.is_none() {
            let mark = Progress::of(m);
            self.progress.get_or_insert(mark);
            self.stretch = Some(mark);
        }
        if !hot(*n, self.threshold) {
            return false;
        }
        *n = REQUESTED;
        if let Some(o) = &self.opts.observer {
            o.requested(pc);
        }
        if self.tx.is_none() && !self.failed {
            self.start(m);
        }
        if self.tx.is_some() {
            let hints = self.hints_at(pc, m);
            let ahead = self.ahead(pc, m);
            let vl = m.config.vl;
            let req = match lanejit_jit::region::nest_around(self.regions(), pc, vl) {
                Some(nest) => {
                    self.redirects.push(Redirect {
                        inner: pc,
                        nest,
                        since: 0,
                        ticket: self.sent + 1,
                    });
                    Request {
                        pc: nest,
                        hints: self.hints_at(nest, m),
                        ahead,
                        fallback: Some((pc, hints)),
                    }
                }
                None => Request {
                    pc,
                    hints,
                    ahead,
                    fallback: None,
                },
            };
            self.send(req);
        }
        if let Some(r) = self.wait_rng.as_mut() {
            // The test hook: wait for this compile about every other time.
            if r.random_bool(0.5) {
                while self.done.load(Ordering::Acquire) < self.sent {
                    std::thread::sleep(std::time::Duration::from_micros(20));
                }
            }
        }
        false
    }
}

/// A run on one engine that can be continued after it ends: the embedding API
/// ([`crate::embed`]) runs a program in slices of instructions (to poll a stop handle) and
/// resumes it after a trap handler changed the machine. The engine's compiled code, entry
/// counts and background compiler are kept from one [`Resumable::run`] to the next.
///
/// The machine's configuration must not change between calls in anything compiled code
/// depends on: VL, alignment mode, and whether there is an instruction limit (its value may
/// change).
pub struct Resumable<'d> {
    d: &'d Decoded,
    tier: ResumableTier<'d>,
    jit_retired: u64,
    interp_retired: u64,
}

enum ResumableTier<'d> {
    Interp,
    Own(Box<Dispatcher>),
    Background(Box<BackgroundTier<'d>>),
    Shared(&'d SharedCode),
}

impl<'d> Resumable<'d> {
    /// `engine` ready to run `d` on machines configured as `m` is.
    pub fn new(engine: Engine, m: &Machine, d: &'d Decoded, opts: &VmOptions) -> Resumable<'d> {
        let tier = match engine {
            Engine::Interp => ResumableTier::Interp,
            Engine::Tiered if opts.background => ResumableTier::Background(Box::new(
                BackgroundTier::new(d, m, opts.jit_threshold, opts, std::time::Instant::now()),
            )),
            Engine::Jit | Engine::Tiered => {
                let threshold = if engine == Engine::Jit {
                    0
                } else {
                    opts.jit_threshold
                };
                match Dispatcher::new(d, m, threshold) {
                    Ok(mut disp) => {
                        if let Some(o) = &opts.observer {
                            disp.jit_mut().set_observer(o.clone());
                        }
                        disp.jit_mut().set_disk_cache(opts.code_cache.clone());
                        ResumableTier::Own(Box::new(disp))
                    }
                    // No code generator for this host: the interpreter gives the same result.
                    Err(_) => ResumableTier::Interp,
                }
            }
        };
        Resumable {
            d,
            tier,
            jit_retired: 0,
            interp_retired: 0,
        }
    }

    /// `d` on `code` (compiled code shared with other runs: the groups of a launch), or on the
    /// interpreter when `None`.
    pub fn shared(code: Option<&'d SharedCode>, d: &'d Decoded) -> Resumable<'d> {
        Resumable {
            d,
            tier: code.map_or(ResumableTier::Interp, ResumableTier::Shared),
            jit_retired: 0,
            interp_retired: 0,
        }
    }

    /// Run `m` from its pc until it halts, traps or reaches its instruction limit.
    pub fn run(&mut self, m: &mut Machine) -> Exit {
        match &mut self.tier {
            ResumableTier::Interp => {
                let before = m.retired;
                let exit = interp::run(m, self.d);
                self.interp_retired += m.retired - before;
                exit
            }
            ResumableTier::Own(disp) => disp.run(m, self.d),
            ResumableTier::Background(tier) => dispatch(
                &mut **tier,
                m,
                self.d,
                &mut self.jit_retired,
                &mut self.interp_retired,
            ),
            ResumableTier::Shared(code) => dispatch(
                &mut SharedTier { code },
                m,
                self.d,
                &mut self.jit_retired,
                &mut self.interp_retired,
            ),
        }
    }

    /// What the engines did over every run so far (for shared code, the instructions this
    /// runner retired; the compile statistics are the [`SharedCode`]'s).
    pub fn stats(&self) -> EngineStats {
        match &self.tier {
            ResumableTier::Own(disp) => disp.stats(),
            ResumableTier::Interp | ResumableTier::Shared(_) => EngineStats {
                jit_retired: self.jit_retired,
                interp_retired: self.interp_retired,
                ..EngineStats::default()
            },
            ResumableTier::Background(tier) => {
                let mut stats = tier.compile_stats();
                stats.jit_retired = self.jit_retired;
                stats.interp_retired = self.interp_retired;
                stats
            }
        }
    }
}

fn run_interp(m: &mut Machine, d: &Decoded) -> (Exit, EngineStats) {
    let before = m.retired;
    let exit = interp::run(m, d);
    let stats = EngineStats {
        interp_retired: m.retired - before,
        ..EngineStats::default()
    };
    (exit, stats)
}

/// The dispatch loop of the JIT engines over one [`Jit`], which may be kept across runs of
/// the same program and configuration (the benchmarks do, to measure compiled code alone).
pub struct Dispatcher {
    jit: Jit,
    counts: Vec<u32>,
    threshold: u32,
    compiled: Vec<u64>,
    jit_retired: u64,
    interp_retired: u64,
}

impl Dispatcher {
    /// A dispatcher for program `d` under `m`'s configuration that compiles a region once it
    /// has been entered more than `threshold` times (0: on first entry).
    pub fn new(d: &Decoded, m: &Machine, threshold: u32) -> Result<Dispatcher, JitError> {
        Ok(Dispatcher {
            jit: Jit::new(d.program(), m)?,
            counts: vec![0; d.len()],
            threshold,
            compiled: Vec::new(),
            jit_retired: 0,
            interp_retired: 0,
        })
    }

    /// The JIT (for direct compiles).
    pub fn jit_mut(&mut self) -> &mut Jit {
        &mut self.jit
    }

    /// Start pcs of the regions the dispatcher had compiled, in compile order.
    pub fn compiled_pcs(&self) -> &[u64] {
        &self.compiled
    }

    /// Compilation statistics so far.
    pub fn jit_stats(&self) -> JitStats {
        self.jit.stats()
    }

    /// Engine statistics over every run so far.
    pub fn stats(&self) -> EngineStats {
        let js = self.jit.stats();
        EngineStats {
            compiled_regions: js.compiled_regions,
            jit_retired: self.jit_retired,
            interp_retired: self.interp_retired,
            compile_us: js.compile_us,
            compile_errors: js.compile_errors,
            cached_regions: js.cached_regions,
            optimized_regions: js.optimized_regions,
        }
    }

    /// Run `m` from its pc until it halts, traps or reaches its instruction limit.
    pub fn run(&mut self, m: &mut Machine, d: &Decoded) -> Exit {
        let mut tier = OwnTier {
            jit: &mut self.jit,
            counts: &mut self.counts,
            threshold: self.threshold,
            compiled: &mut self.compiled,
        };
        dispatch(
            &mut tier,
            m,
            d,
            &mut self.jit_retired,
            &mut self.interp_retired,
        )
    }
}

/// Where the dispatch loop finds compiled code: a dispatcher's own JIT, or one shared by the
/// threads of a launch.
trait Tier {
    /// Run the compiled region at `m.pc`, if there is one.
    fn enter(&mut self, m: &mut Machine) -> Option<RegionExit>;
    /// Count an entry at `pc` (a multiple of 8) of `m` and compile the region there once it
    /// is hot: whether compiled code is there now.
    fn count(&mut self, pc: u64, m: &Machine) -> bool;
    /// After [`Tier::enter`] found compiled code at a block's start (`hit`) or none: how many
    /// instructions the interpreter may run before the next block start is looked at (0:
    /// the next one is).
    fn slice(&mut self, hit: bool) -> u64 {
        let _ = hit;
        0
    }
}

/// Before a region is compiled on the run's thread (its code runs next): fill guest memory's
/// page tables where the scalar registers point. A large map's tables are filled 16 MiB at a
/// time on first use (`Memory::fill_at`), and compiled code reads an entry not filled yet as
/// unmapped: a loop's entry check that starts in such a chunk proves no iteration and the
/// iteration leaves for the interpreter. On `--engine jit`, which compiles every region it
/// meets, that first exit also compiled the rest of the loop as a region of its own: a
/// stencil's row loop (8 ms) and tail on top of its nest, the tail and the code after it of
/// every bench kernel. The registers at this point hold the bases those checks start from
/// (at most 32 chunks, each filled once per run; a value outside the map costs a compare).
fn fill_tables_at_registers(m: &Machine) {
    for &s in &m.regs.s {
        m.mem.fill_at(s);
    }
}

/// One more entry on `n`, the entry count of a region start: whether the region is hot now
/// (more than `threshold` entries); `u32::MAX` marks a pc left to the interpreter for good.
fn hot(n: u32, threshold: u32) -> bool {
    n != u32::MAX && n > threshold
}

/// The dispatch loop (see the module docs) over `tier`.
fn dispatch(
    tier: &mut impl Tier,
    m: &mut Machine,
    d: &Decoded,
    jit_retired: &mut u64,
    interp_retired: &mut u64,
) -> Exit {
    loop {
        let pc = m.pc;
        let entered = tier.enter(m);
        let slice = tier.slice(entered.is_some());
        if let Some(r) = entered {
            *jit_retired += r.retired;
            if r.interp_next {
                let before = m.retired;
                let e = interp::step(m, d);
                *interp_retired += m.retired - before;
                if let Some(e) = e {
                    return e;
                }
            }
            continue;
        }
        if pc % 8 == 0 && tier.count(pc, m) {
            continue;
        }
        let before = m.retired;
        if slice > 0 {
            // A pause, not a limit: then on to the end of the block.
            if let Some(e) = interpret_slice(m, d, slice) {
                *interp_retired += m.retired - before;
                return e;
            }
        }
        let e = interp::run_block(m, d);
        *interp_retired += m.retired - before;
        if let Some(e) = e {
            return e;
        }
    }
}

/// A dispatcher's own JIT and entry counts.
struct OwnTier<'a> {
    jit: &'a mut Jit,
    counts: &'a mut [u32],
    threshold: u32,
    compiled: &'a mut Vec<u64>,
}

impl Tier for OwnTier<'_> {
    fn enter(&mut self, m: &mut Machine) -> Option<RegionExit> {
        let c = self.jit.lookup(m.pc)?;
        Some(self.jit.run(c, m))
    }

    fn count(&mut self, pc: u64, m: &Machine) -> bool {
        let Some(n) = self.counts.get_mut((pc / 8) as usize) else {
            return false;
        };
        if *n == u32::MAX {
            return false;
        }
        *n += 1;
        if !hot(*n, self.threshold) {
            return false;
        }
        fill_tables_at_registers(m);
        match self.jit.compile_for(pc, &m.regs) {
            Ok(Some(_)) => {
                self.compiled.push(pc);
                true
            }
            // Declined, or the translator failed: interpret this pc for good.
            Ok(None) | Err(_) => {
                *n = u32::MAX;
                false
            }
        }
    }
}

/// Compiled code shared by every worker thread of a launch (see [`SharedJit`]): a region is
/// compiled once for every group, and entry counts (tier-up) add up across groups and
/// threads.
pub struct SharedCode {
    jit: SharedJit,
    counts: Vec<AtomicU32>,
    threshold: u32,
}

impl SharedCode {
    /// Shared code for program `d` under `m`'s configuration, compiling a region once it has
    /// been entered more than `threshold` times in all (0: on first entry).
    pub fn new(d: &Decoded, m: &Machine, threshold: u32) -> Result<SharedCode, JitError> {
        Self::for_config(d.program(), &m.config, threshold)
    }

    /// As [`SharedCode::new`], for decoded program `program` and machines of configuration
    /// `config`.
    pub fn for_config(
        program: &DecodedCode,
        config: &Config,
        threshold: u32,
    ) -> Result<SharedCode, JitError> {
        Ok(SharedCode {
            jit: SharedJit::new(Jit::for_config(program, config)?),
            counts: (0..program.len()).map(|_| AtomicU32::new(0)).collect(),
            threshold,
        })
    }

    /// Compile statistics (regions, time), to add to the workers' [`EngineStats`].
    pub fn stats(&self) -> EngineStats {
        let js = self.jit.stats();
        EngineStats {
            compiled_regions: js.compiled_regions,
            compile_us: js.compile_us,
            compile_errors: js.compile_errors,
            cached_regions: js.cached_regions,
            optimized_regions: js.optimized_regions,
            ..EngineStats::default()
        }
    }

    /// Show every region compiled from now on to `obs` (see [`lanejit_jit::observe`]).
    pub fn set_observer(&self, obs: Arc<Observer>) {
        self.jit.set_observer(obs);
    }

    /// Use the on-disk code cache `cache` (or none) from now on.
    pub fn set_code_cache(&self, cache: Option<Arc<DiskCache>>) {
        self.jit.set_disk_cache(cache);
    }

    /// Run `m` from its pc until it halts, traps or reaches its instruction limit, adding the
    /// instructions each tier retired to `stats`.
    pub fn run(&self, m: &mut Machine, d: &Decoded, stats: &mut EngineStats) -> Exit {
        let mut tier = SharedTier { code: self };
        dispatch(
            &mut tier,
            m,
            d,
            &mut stats.jit_retired,
            &mut stats.interp_retired,
        )
    }
}

struct SharedTier<'a> {
    code: &'a SharedCode,
}

impl Tier for SharedTier<'_> {
    fn enter(&mut self, m: &mut Machine) -> Option<RegionExit> {
        self.code.jit.run_at(m)
    }

    fn count(&mut self, pc: u64, m: &Machine) -> bool {
        let Some(n) = self.code.counts.get((pc / 8) as usize) else {
            return false;
        };
        if n.load(Ordering::Relaxed) == u32::MAX {
            return false;
        }
        if !hot(
            n.fetch_add(1, Ordering::Relaxed).wrapping_add(1),
            self.code.threshold,
        ) {
            return false;
        }
        fill_tables_at_registers(m);
        match self.code.jit.compile_for(pc, &m.regs) {
            Ok(Some(_)) => true,
            Ok(None) | Err(_) => {
                n.store(u32::MAX, Ordering::Relaxed);
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lanejit_interp::machine::Config;
    use std::time::{Duration, Instant};

    fn machine(src: &str) -> (Decoded, Machine) {
        let p = lanejit_interp::asm::assemble(src, "start.s").expect("assembles");
        let d = Decoded::new(&p.code);
        let m = Machine::new(&p, Config::for_program(&p, Some(8))).expect("machine");
        (d, m)
    }

    /// Interpret `src` from its start for at most `time` ([`interpret_start`]): how long it
    /// took and the instructions it retired (checked against the machine's count).
    fn start(src: &str, time: Duration) -> (Duration, u64) {
        let (d, mut m) = machine(src);
        let (mut retired, mut first) = (0, None);
        let t = Instant::now();
        let e = interpret_start(&mut m, &d, time, &mut retired, &mut first);
        assert_eq!(e, None, "{src}");
        assert_eq!(retired, m.retired);
        (t.elapsed(), retired)
    }

    /// A run in a hardware loop with far more work left than [`EARLY_AHEAD`] leaves the plain
    /// interpreter after a few slices, long before the time it was given; a loop whose end
    /// is not known (a branch on a value it multiplies) interprets until that time.
    #[test]
    fn a_long_counted_loop_starts_its_tier_early() {
        let counted = "        S.LI s3, 0x7fffffff\n        LOOP s3\n        \
                       V.ADD v1, v1, 1\n        V.ADD v2, v2, v1\n        ENDLOOP\n        HALT\n";
        let (took, retired) = start(counted, Duration::from_secs(20));
        assert!(took < Duration::from_secs(1), "{took:?}");
        assert!(retired <= 16 * START_SLICE, "{retired}");
        // Never 1000: nothing known, the whole 50 ms.
        let unknown = "        S.LI s2, 5\ntop:    V.ADD v1, v1, 1\n        S.MUL s2, s2, 3\n\
                       \x20       S.AND s2, s2, 255\n        BNE s2, 1000, top\n        HALT\n";
        let (took, _) = start(unknown, Duration::from_millis(50));
        assert!(took >= Duration::from_millis(50), "{took:?}");
    }

    /// A hot inner loop of a stencil-like nest asks for the nest (with the inner loop as the
    /// fallback), is not asked for again while the nest's start keeps being entered, and is
    /// asked for itself after [`REDIRECT_PATIENCE`] entries without one (a row that does not
    /// end). The requests are read from the channel the compiler thread would.
    #[test]
    fn a_hot_inner_loop_asks_for_its_nest_and_itself_only_when_its_row_goes_on() {
        let src = "
        .mem 0x10000, 0x1000, rw
        S.LI s1, 0x10000
        S.LI s3, 64
        S.LI s4, 100
row:    LOOP s3
body:   V.LW [s1, lc0<<2, 0], ->v1
        V.ADD v1, v1, 1
        V.SW v1, [s1, lc0<<2, 0]
        ENDLOOP
        S.SUB s4, s4, 1
        BNE s4, 0, row
        HALT
";
        let p = lanejit_interp::asm::assemble(src, "rows.s").expect("assembles");
        let (row, body) = (
            p.symbol("row").unwrap().value,
            p.symbol("body").unwrap().value,
        );
        let d = Decoded::new(&p.code);
        let m = Machine::new(&p, Config::for_program(&p, Some(8))).expect("machine");
        let mut tier = BackgroundTier::new(&d, &m, 2, &VmOptions::default(), Instant::now());
        let (tx, rx) = std::sync::mpsc::channel();
        tier.tx = Some(tx);
        for _ in 0..3 {
            tier.count(body, &m);
        }
        let r = rx.try_recv().expect("a request when hot");
        assert_eq!(r.pc, row, "the nest");
        assert_eq!(r.fallback.map(|(pc, _)| pc), Some(body));
        // Rows that end: the nest's start entered every 8 entries of the inner loop.
        for i in 0..4 * REDIRECT_PATIENCE {
            tier.count(body, &m);
            if i % 8 == 7 {
                tier.count(row, &m);
            }
        }
        // (The nest's start gets hot itself, and is asked for: the compiler finds its code.)
        assert!(
            rx.try_iter().all(|r| r.pc == row),
            "not the inner loop while rows end"
        );
        // A row that goes on: the inner loop itself.
        for _ in 0..=REDIRECT_PATIENCE {
            tier.count(body, &m);
        }
        let r = rx.try_recv().expect("the inner loop after its patience");
        assert_eq!((r.pc, r.fallback.is_none()), (body, true));
        assert!(tier.redirects.is_empty());
        for _ in 0..4 * REDIRECT_PATIENCE {
            tier.count(body, &m);
        }
        assert!(rx.try_recv().is_err(), "asked for once");
    }

    /// On `--engine jit`, a loop into a large map (tables filled 16 MiB at a time) runs all
    /// its iterations in its one region: the tables where the registers point are filled
    /// before it is compiled ([`fill_tables_at_registers`]). Before, its first entry check
    /// read the unfilled chunk as unmapped, the iteration left for the interpreter, and the
    /// loop's tail and the code after it were compiled as regions of their own (5 in all).
    #[test]
    fn a_loop_into_a_large_map_runs_in_its_one_region() {
        let src = "
        .mem 0x10000000, 0x4400000, rw
        .mem 0x20000000, 0x4400000, rw
        S.LI s1, 0x10000000
        S.LI s2, 0x20000000
        S.LI s3, 1024
        LOOP s3
        V.LW [s1, lc0<<2, 0], ->v1
        V.SW v1, [s2, lc0<<2, 0]
        ENDLOOP
        HALT
";
        let (d, mut m) = machine(src);
        let (e, stats) = run(Engine::Jit, &mut m, &d, &VmOptions::default());
        assert_eq!(e, Exit::Halted);
        assert_eq!(stats.compiled_regions, 2, "{stats:?}");
        assert_eq!(stats.interp_retired, 1, "only the HALT: {stats:?}");
    }
}
