//! Differential fuzzing: run generated programs on several engines and compare everything
//! bit for bit; on a divergence, shrink the program, bisect to the first retired instruction
//! at which the states differ, and write a reproducer that replays to the same divergence.
//!
//! What is compared ([`Snapshot`]): the contract's [`RunResult`] (status, pc, retired count,
//! trap, mask, LC0BASE, every register), the hidden latched trip count, every mapped page of
//! memory and the whole tile, regions that failed to compile, and whether the engine
//! panicked (caught by [`run_snapshot`]: a panic is a divergence with its own reproducer).
//! Engine statistics are not compared.
//!
//! A case of several groups (`.groups`, see [`generate`]) is a launch: every engine runs it
//! in reference order (`--threads 1`) and must give the interpreter's result, reported group
//! and its whole tile, and memory (the trip count of a launch's reported group is not part of
//! its result and is compared as 0). If the interpreter's `--check-races` run finds no race,
//! that run must give the same snapshot, and every engine must also give it at
//! [`FUZZ_THREADS`] threads; a racing launch is compared in reference order only, since its
//! result at more threads is unspecified.
//!
//! A campaign ([`campaign`]) is deterministic for a seed: case `i` is generated from its own
//! ChaCha stream ([`case_bytes`]), independently of every other case, so cases can run in
//! parallel (rayon) and a campaign reports the same divergences whatever the thread count.
//!
//! A campaign can be cut into shards ([`Shard`], [`campaign_shard`]) that separate machines
//! run with no coordinator; each writes its cases' verdicts as JSON lines ([`records`]) that
//! merge with `cat` and summarise with [`records::Summary`].
//!
//! A case that crashes the process (a fault in compiled code) cannot write a reproducer; the
//! campaign's fatal-signal handler names the cases in flight instead ([`crash`]).
//!
//! A reproducer ([`reproducer`]) is canonical assembly (the program's `.vl`, map, tile
//! protections and data included) behind a comment header; its `; fuzz-config:` line carries
//! the run flags (`--vl`, `--strict-align`, `--max-instructions`), which [`ReproConfig`]
//! parses back and [`replay`] honours.
//!
//! Not fuzzed, and why:
//! - backward branches: they would need a termination argument per program; loops come from
//!   `LOOP`/`ENDLOOP`, whose trip counts are bounded, and fuel bounds everything else;
//! - memory limits other than the default, and maps larger than the data pages plus one table
//!   of 1 to 8 MiB (in a third of the cases, see [`shapes`]): the limit only moves where
//!   `page_fault` starts, which the holes and the top-of-address-space bases cover, and the
//!   permitted-run tables that prove a span are exact whatever its size, so a larger map would
//!   only cost snapshot time;
//! - tile sizes above 4 KiB: bounds checks are size-independent;
//! - the assembler and container: their own cargo-fuzz targets (`roundtrip`, `asm`,
//!   `run_bytes`) cover them.

pub mod crash;
pub mod generate;
pub mod records;
pub mod shapes;
pub mod shrink;

use crate::launch::{LaunchOptions, launch};
use crate::vm::{self, Engine, VmOptions};
use arbitrary::Unstructured;
use generate::GenProgram;
use lanejit_interp::interp::Decoded;
use lanejit_interp::machine::{Config, Machine, valid_vl};
use lanejit_interp::program::{PAGE_SIZE, Program, Space};
use lanejit_interp::result::{DumpRequest, GroupCounts, RunResult};
use rand::{RngCore, SeedableRng};
use rayon::prelude::*;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

/// Everything compared between engines after a run: the fuzzer's, `compare`'s and the
/// engine tests' one notion of "the same result".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// The contract's result.
    pub result: RunResult,
    /// The latched trip count (not in the JSON, but part of the state).
    pub trip: u64,
    /// Every mapped page (address, bytes); a page of zeros has no bytes.
    pub memory: Vec<(u64, Vec<u8>)>,
    /// The whole tile.
    pub tile: Vec<u8>,
    /// Regions that failed to compile (always 0 on the interpreter): a JIT that falls back
    /// to the interpreter on IR it cannot build is a finding, even with the right result.
    pub compile_errors: u64,
    /// The message of a panic that ended the engine's run ([`run_snapshot`] catches it: a
    /// bug of lanejit's, in the translator say, is a finding like a wrong result, which the
    /// campaign shrinks and writes a reproducer for; the rest of the snapshot is then the
    /// machine's reset state). `None` for a run that ended.
    pub panicked: Option<String>,
}

/// A page of zeros: what a [`Snapshot`] page without bytes holds.
static ZERO_PAGE: [u8; PAGE_SIZE as usize] = [0; PAGE_SIZE as usize];

/// The tiered engine's threshold under fuzzing: low, so that short programs mix interpreted
/// and compiled execution of the same region.
pub const FUZZ_JIT_THRESHOLD: u32 = 2;

/// The thread counts a race-free launch is also compared at.
pub const FUZZ_THREADS: [usize; 2] = [2, 3];

/// The name of an engine.
pub fn engine_name(e: Engine) -> &'static str {
    e.name()
}

/// Run `program` with `config` on `engine` and capture the snapshot. `None` when the machine
/// cannot be built (the generator never produces such programs; replays might).
///
/// A panic of the engine is caught here and becomes the snapshot's [`Snapshot::panicked`]
/// (the test hook `LANEJIT_FUZZ_TEST_PANIC=<engine>` raises one in every run of that engine).
pub fn run_snapshot(program: &Program, config: Config, engine: Engine) -> Option<Snapshot> {
    let run = || {
        if test_panic() == Some(engine) {
            panic!("LANEJIT_FUZZ_TEST_PANIC: {}", engine.name());
        }
        match program.groups {
            Some(g) if g > 1 => launch_snapshot(program, config, engine, 1, false),
            _ => single_snapshot(program, config, engine),
        }
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(s) => s,
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            let m = Machine::new(program, config).ok()?;
            let mut s = Snapshot::capture(&m, lanejit_interp::machine::Exit::Halted, &[]);
            s.panicked = Some(msg);
            Some(s)
        }
    }
}

/// The test hook's engine (`LANEJIT_FUZZ_TEST_PANIC`), read once.
fn test_panic() -> Option<Engine> {
    static AT: std::sync::OnceLock<Option<Engine>> = std::sync::OnceLock::new();
    *AT.get_or_init(|| {
        let v = std::env::var("LANEJIT_FUZZ_TEST_PANIC").ok()?;
        Engine::ALL.into_iter().find(|e| e.name() == v)
    })
}

/// Every mapped page of `mem`, a page of zeros as an empty vector (no copy, no allocation).
fn pages(mem: &lanejit_interp::memory::Memory) -> Vec<(u64, Vec<u8>)> {
    mem.mapped_pages()
        .map(|(a, b)| {
            // (A slice comparison is a memcmp, fast in the debug profile too.)
            let zero = b == &ZERO_PAGE[..];
            (a, if zero { Vec::new() } else { b.to_vec() })
        })
        .collect()
}

/// The snapshot of a launch of `program.groups` groups on `threads` threads (with
/// `--check-races` when `check_races`): its result, the reported group's whole tile, memory.
fn launch_snapshot(
    program: &Program,
    config: Config,
    engine: Engine,
    threads: usize,
    check_races: bool,
) -> Option<Snapshot> {
    let m = Machine::new(program, config).ok()?;
    let opts = LaunchOptions {
        engine,
        vm: VmOptions::foreground(FUZZ_JIT_THRESHOLD),
        groups: program.groups.unwrap_or(1),
        threads,
        check_races,
        timeline: false,
    };
    Some(launch_machine(m, &Decoded::new(&program.code), &opts, &[]))
}

/// Launch from machine `m` (group 0's, in its reset state; program `d`) as `opts` says and
/// capture the snapshot: the result with `dumps`, the reported group's whole tile, memory
/// after the launch (no latched trip: groups have one each).
pub fn launch_machine(
    m: Machine,
    d: &Decoded,
    opts: &LaunchOptions,
    dumps: &[DumpRequest],
) -> Snapshot {
    let mut all = dumps.to_vec();
    all.push(DumpRequest {
        space: Space::Tile,
        addr: 0,
        len: m.tile.size(),
        ty: None,
    });
    let (l, m) = launch(m, d, &all, opts);
    let mut result = l.result;
    let tile = result.dumps.pop().map(|d| d.bytes).unwrap_or_default();
    Snapshot {
        result,
        trip: 0,
        memory: pages(&m.mem),
        tile,
        compile_errors: l.stats.compile_errors,
        panicked: None,
    }
}

/// The snapshot of the launch `program` under `--check-races` if it is race-free (the
/// interpreted race-checked run ends without a `data_race` trap): then it must equal the
/// ordinary launch's.
fn race_free_snapshot(program: &Program, config: Config) -> Option<Snapshot> {
    launch_snapshot(program, config, Engine::Interp, 1, true).filter(|s| {
        s.result
            .trap
            .is_none_or(|t| t.kind != lanejit_interp::machine::TrapKind::DataRace)
    })
}

fn single_snapshot(program: &Program, config: Config, engine: Engine) -> Option<Snapshot> {
    let m = Machine::new(program, config).ok()?;
    let d = Decoded::new(&program.code);
    // Tiered runs loops on their quick (baseline) code, jit on their optimised code: both
    // are compared with the interpreter. Half the programs (by a hash of their words) run
    // tiered with strip-mined loops that would step on the step's code instead
    // (`VmOptions::step_loops`): the same IR as the baseline, optimised.
    let tiered = engine == Engine::Tiered;
    let half = program.code.iter().fold(0u64, |h, w| h.rotate_left(7) ^ w) & 1 == 1;
    let opts = VmOptions {
        quick_loops: tiered,
        step_loops: tiered && half,
        ..VmOptions::foreground(FUZZ_JIT_THRESHOLD)
    };
    Some(run_machine(m, &d, engine, &opts, &[]))
}

/// Run machine `m` (in its reset state, program `d`) on `engine` and capture the snapshot,
/// with `dumps` in its result.
pub fn run_machine(
    mut m: Machine,
    d: &Decoded,
    engine: Engine,
    opts: &VmOptions,
    dumps: &[DumpRequest],
) -> Snapshot {
    let (exit, stats) = vm::run(engine, &mut m, d, opts);
    let mut s = Snapshot::capture(&m, exit, dumps);
    s.compile_errors = stats.compile_errors;
    s
}

impl Snapshot {
    /// What a report shows of the run, on one line: its result as JSON, or `panicked:` and
    /// the panic's message.
    pub fn verdict(&self) -> String {
        match &self.panicked {
            Some(msg) => format!("panicked: {}", msg.replace('\n', " ")),
            None => self.result.to_json().to_string(),
        }
    }

    /// How the run ended, as the machine said it.
    pub fn exit(&self) -> lanejit_interp::machine::Exit {
        self.result.exit()
    }

    /// The snapshot of machine `m` after a run that ended with `exit` (the result with
    /// `dumps`, the latched trip, every mapped page, the tile; no compile errors: the caller
    /// sets them from the engine's statistics).
    pub fn capture(
        m: &Machine,
        exit: lanejit_interp::machine::Exit,
        dumps: &[DumpRequest],
    ) -> Snapshot {
        Snapshot {
            result: RunResult::capture(m, exit, dumps),
            trip: m.regs.trip,
            memory: pages(&m.mem),
            tile: m.tile.as_bytes().to_vec(),
            compile_errors: 0,
            panicked: None,
        }
    }
}

/// Two engines whose snapshots of the same run differ: (reference, other).
pub type Pair = ((Engine, Snapshot), (Engine, Snapshot));

/// A divergence between two engines on one program.
#[derive(Clone, Debug)]
pub struct Divergence {
    /// The (shrunk) case.
    pub case: GenProgram,
    /// The reference engine and its snapshot.
    pub a: (Engine, Snapshot),
    /// The diverging engine and its snapshot.
    pub b: (Engine, Snapshot),
    /// The number of retired instructions after which the states first differ: they agree
    /// after `first_diff_after - 1` and differ after `first_diff_after`.
    pub first_diff_after: u64,
}

/// The first pair of engines (reference = first) whose snapshots differ.
pub fn diverges(program: &Program, config: Config, engines: &[Engine]) -> Option<Pair> {
    let reference = run_snapshot(program, config, *engines.first()?)?;
    for &e in &engines[1..] {
        let s = run_snapshot(program, config, e)?;
        if s != reference {
            return Some(((engines[0], reference), (e, s)));
        }
    }
    if program.groups.unwrap_or(1) > 1 {
        // A racing launch is compared in reference order only.
        let checked = race_free_snapshot(program, config)?;
        if checked != reference {
            return Some(((engines[0], reference), (Engine::Interp, checked)));
        }
        for &e in engines {
            for threads in FUZZ_THREADS {
                let s = launch_snapshot(program, config, e, threads, false)?;
                if s != reference {
                    return Some(((engines[0], reference), (e, s)));
                }
            }
        }
    }
    None
}

/// The smallest instruction budget under which engines `a` and `b` already disagree on
/// `program` run with `config`: the states agree after `n - 1` retired instructions and
/// differ after `n`. Without a budget in `config`, the search starts from one more than the
/// longer of the two runs (which behaves like no budget). If the engines agree, the upper end
/// of the search is returned.
pub fn bisect_program(program: &Program, config: Config, a: Engine, b: Engine) -> u64 {
    let snap = |fuel: Option<u64>, e: Engine| {
        run_snapshot(
            program,
            Config {
                max_instructions: fuel,
                ..config
            },
            e,
        )
    };
    bisect_runs(config.max_instructions, snap, a, b)
}

/// The bisection of [`bisect_program`] over any way to run: `snap(fuel, engine)` runs the
/// program on `engine` with an instruction budget of `fuel` (none: `limit`).
pub fn bisect_runs(
    limit: Option<u64>,
    snap: impl Fn(Option<u64>, Engine) -> Option<Snapshot>,
    a: Engine,
    b: Engine,
) -> u64 {
    let differs = |fuel: u64| snap(Some(fuel), a) != snap(Some(fuel), b);
    let hi = match limit {
        Some(f) => f,
        None => {
            let r = |e| snap(None, e).map_or(0, |s| s.result.instructions);
            r(a).max(r(b)).saturating_add(1)
        }
    };
    first_true(hi, differs)
}

/// Binary search for the transition of `differs` in `0..=hi`: the smallest `n` with
/// `differs(n)` and `!differs(n - 1)` found by bisection from `hi`; `hi` itself when
/// `!differs(hi)`, 0 when `differs(0)`.
fn first_true(hi: u64, differs: impl Fn(u64) -> bool) -> u64 {
    if !differs(hi) {
        return hi;
    }
    if differs(0) {
        return 0;
    }
    // invariant: differs(hi), !differs(lo)
    let mut lo = 0u64;
    let mut hi = hi;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if differs(mid) { hi = mid } else { lo = mid }
    }
    hi
}

/// [`bisect_program`] for a generated case.
pub fn bisect(g: &GenProgram, a: Engine, b: Engine) -> u64 {
    bisect_program(&g.build(), g.config(), a, b)
}

/// The case for index `i` of a campaign with `seed`: deterministic, independent of others.
pub fn case_bytes(seed: u64, i: u64) -> Vec<u8> {
    let mut rng =
        rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut bytes = vec![0u8; 8192];
    rng.fill_bytes(&mut bytes);
    bytes
}

/// Generate case `i` of campaign `seed`.
pub fn case(seed: u64, i: u64) -> GenProgram {
    let bytes = case_bytes(seed, i);
    generate::generate(&mut Unstructured::new(&bytes))
        .expect("the generator does not fail on a full buffer")
}

/// Run one case on `engines`; on divergence, shrink (which also lowers the fuel to the
/// bisected instruction count) and bisect the shrunk case.
pub fn check_case(g: &GenProgram, engines: &[Engine]) -> Option<Divergence> {
    let program = g.build();
    let (a, b) = diverges(&program, g.config(), engines)?;
    minimize(g, [a.0, b.0]).or_else(|| check_case_unshrunk(g, engines))
}

/// Run one case on `engines`; on divergence, bisect it without shrinking.
pub fn check_case_unshrunk(g: &GenProgram, engines: &[Engine]) -> Option<Divergence> {
    let (a, b) = diverges(&g.build(), g.config(), engines)?;
    let first_diff_after = bisect(g, a.0, b.0);
    Some(Divergence {
        case: g.clone(),
        a,
        b,
        first_diff_after,
    })
}

/// Shrink a case diverging between `pair` and describe the result (`None` if, against
/// expectation, the shrunk case no longer diverges).
fn minimize(g: &GenProgram, pair: [Engine; 2]) -> Option<Divergence> {
    let case = shrink::shrink(g, &pair);
    let ((ea, sa), (eb, sb)) = diverges(&case.build(), case.config(), &pair)?;
    let first_diff_after = bisect(&case, ea, eb);
    Some(Divergence {
        case,
        a: (ea, sa),
        b: (eb, sb),
        first_diff_after,
    })
}

/// Ranges of cases checked by [`campaign`] between progress callbacks.
const CHUNK: u64 = 64;

/// One of `count` shares of a campaign (`lanejit fuzz --shard INDEX/COUNT`, 0-based): case
/// `k` belongs to shard `k % count`, so `count` machines running shards `0..count` with the
/// same seed and case count run every case of the campaign exactly once, with no
/// coordinator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shard {
    /// This shard, `0..count`.
    pub index: u64,
    /// How many shards the campaign is cut into (at least 1).
    pub count: u64,
}

/// A `--shard` argument that names no shard.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// Not `INDEX/COUNT` with two numbers.
    #[error("`{0}`: expected INDEX/COUNT, such as 0/4 (shards count from 0)")]
    Syntax(String),
    /// `COUNT` is 0 or `INDEX` is not below it.
    #[error("`{0}`: the shard INDEX must be from 0 to COUNT-1 (shards count from 0)")]
    Range(String),
}

impl Shard {
    /// The whole campaign: one shard of one.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Parse `INDEX/COUNT` (decimal, 0-based: `0/3`, `1/3` and `2/3` make a campaign).
    pub fn parse(text: &str) -> Result<Shard, ShardError> {
        let syntax = || ShardError::Syntax(text.to_string());
        let (i, n) = text.split_once('/').ok_or_else(syntax)?;
        let index: u64 = i.trim().parse().map_err(|_| syntax())?;
        let count: u64 = n.trim().parse().map_err(|_| syntax())?;
        if index >= count {
            return Err(ShardError::Range(text.to_string()));
        }
        Ok(Shard { index, count })
    }

    /// Whether case `k` is this shard's.
    pub fn owns(self, k: u64) -> bool {
        k % self.count == self.index
    }

    /// How many of the cases `0..cases` are this shard's.
    pub fn len(self, cases: u64) -> u64 {
        cases.saturating_sub(self.index).div_ceil(self.count)
    }

    /// Whether none of the cases `0..cases` is this shard's.
    pub fn is_empty(self, cases: u64) -> bool {
        self.len(cases) == 0
    }

    /// The `j`-th case of this shard (`j < self.len(cases)`): `index + j * count`.
    pub fn case(self, j: u64) -> u64 {
        self.index + j * self.count
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Run cases `0..cases` of campaign `seed` on `engines`, in parallel on the current rayon
/// pool. `progress(done)` is called as cases finish (from any thread); `found(i, d)` is
/// called once per divergence, as soon as it is shrunk. Returns the divergences sorted by
/// case index: the same list for the same arguments, whatever the thread count.
pub fn campaign(
    seed: u64,
    cases: u64,
    engines: &[Engine],
    progress: &(dyn Fn(u64) + Sync),
    found: &(dyn Fn(u64, &Divergence) + Sync),
) -> Vec<(u64, Divergence)> {
    campaign_shard(seed, cases, Shard::WHOLE, engines, progress, &|i, d| {
        if let Some(d) = d {
            found(i, d);
        }
    })
}

/// As [`campaign`], for `shard`'s cases of `0..cases` only (the same cases, generated the
/// same way, as the whole campaign runs). `checked(i, divergence)` is called once per case as
/// it finishes (from any thread), with its shrunk divergence if it has one.
pub fn campaign_shard(
    seed: u64,
    cases: u64,
    shard: Shard,
    engines: &[Engine],
    progress: &(dyn Fn(u64) + Sync),
    checked: &(dyn Fn(u64, Option<&Divergence>) + Sync),
) -> Vec<(u64, Divergence)> {
    let done = AtomicU64::new(0);
    let mine = shard.len(cases);
    let chunks = mine.div_ceil(CHUNK);
    let mut out: Vec<(u64, Divergence)> = (0..chunks)
        .into_par_iter()
        .flat_map_iter(|c| {
            let range = c * CHUNK..((c + 1) * CHUNK).min(mine);
            let mut local = Vec::new();
            for i in range.map(|j| shard.case(j)) {
                let running = crash::running(i);
                let d = check_case(&case(seed, i), engines);
                drop(running);
                checked(i, d.as_ref());
                if let Some(d) = d {
                    local.push((i, d));
                }
                progress(done.fetch_add(1, Ordering::Relaxed) + 1);
            }
            local
        })
        .collect();
    out.sort_by_key(|(i, _)| *i);
    out
}

/// The run flags a reproducer carries in its `; fuzz-config:` header line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReproConfig {
    /// `--vl N` (the program's `.vl` applies when absent).
    pub vl: Option<u32>,
    /// `--strict-align`.
    pub strict_align: bool,
    /// `--max-instructions N`.
    pub max_instructions: Option<u64>,
}

impl ReproConfig {
    /// The configuration of case `g`.
    pub fn of(g: &GenProgram) -> ReproConfig {
        ReproConfig {
            vl: Some(g.vl),
            strict_align: g.strict_align,
            max_instructions: Some(g.fuel),
        }
    }

    /// Parse the last `; fuzz-config:` line of `src` (defaults when there is none, or for
    /// flags it does not mention). Every such line must hold only `--vl N` (a power of two
    /// from 1 to 64), `--strict-align` and `--max-instructions N` (decimal or `0x` hex), each
    /// at most once; anything else is an error.
    pub fn parse(src: &str) -> Result<ReproConfig, ConfigError> {
        let mut rc = ReproConfig::default();
        for (i, line) in src.lines().enumerate() {
            let Some(rest) = line.trim().strip_prefix("; fuzz-config:") else {
                continue;
            };
            rc = Self::parse_flags(rest).map_err(|what| ConfigError { line: i + 1, what })?;
        }
        Ok(rc)
    }

    fn parse_flags(rest: &str) -> Result<ReproConfig, String> {
        let mut rc = ReproConfig::default();
        let mut seen: Vec<&str> = Vec::new();
        let mut w = rest.split_whitespace();
        while let Some(flag) = w.next() {
            if seen.contains(&flag) {
                return Err(format!("`{flag}` is given twice"));
            }
            let mut number = || -> Result<u64, String> {
                let v = w.next().ok_or_else(|| format!("`{flag}` needs a value"))?;
                let n = match v.strip_prefix("0x") {
                    Some(h) => u64::from_str_radix(h, 16),
                    None => v.parse::<u64>(),
                };
                n.map_err(|_| format!("`{flag} {v}`: not a number"))
            };
            match flag {
                "--vl" => {
                    let v = number()?;
                    match u32::try_from(v) {
                        Ok(v) if valid_vl(v) => rc.vl = Some(v),
                        _ => {
                            return Err(format!(
                                "`--vl {v}`: VL must be a power of two from 1 to 64"
                            ));
                        }
                    }
                }
                "--max-instructions" => rc.max_instructions = Some(number()?),
                "--strict-align" => rc.strict_align = true,
                _ => return Err(format!("unknown flag `{flag}`")),
            }
            seen.push(flag);
        }
        Ok(rc)
    }

    /// The header line (without the newline).
    pub fn header(&self) -> String {
        let mut s = String::from("; fuzz-config:");
        if let Some(vl) = self.vl {
            let _ = write!(s, " --vl {vl}");
        }
        if self.strict_align {
            s.push_str(" --strict-align");
        }
        if let Some(n) = self.max_instructions {
            let _ = write!(s, " --max-instructions {n}");
        }
        s
    }

    /// The machine configuration for `program` under these flags.
    pub fn config(&self, program: &Program) -> Config {
        Config {
            strict_align: self.strict_align,
            max_instructions: self.max_instructions,
            ..Config::for_program(program, self.vl)
        }
    }
}

/// The reproducer text: a header (engines, configuration, first differing instruction, what
/// differs, both results) and the program as canonical assembly.
pub fn reproducer(d: &Divergence) -> String {
    let program = d.case.build();
    let mut s = String::new();
    s.push_str("; lanejit fuzz reproducer\n");
    let _ = writeln!(
        s,
        "; engines: {} vs {}",
        engine_name(d.a.0),
        engine_name(d.b.0)
    );
    let _ = writeln!(s, "{}", ReproConfig::of(&d.case).header());
    let _ = writeln!(
        s,
        "; states first differ after {} retired instructions{}",
        d.first_diff_after,
        describe_inst(&program, d.case.config(), d.first_diff_after)
    );
    let _ = writeln!(s, "; differs: {}", diff_summary(&d.a.1, &d.b.1));
    for (e, snap) in [&d.a, &d.b] {
        let _ = writeln!(s, "; {}: {}", engine_name(*e), snap.verdict());
    }
    s.push_str(&lanejit_interp::disasm::disassemble(&program));
    s
}

/// What differs between two snapshots, briefly: `status`, `s3`, `v7[2]`, `memory 0x10000`,
/// `tile 0x40`, ... (the first few of each).
pub fn diff_summary(a: &Snapshot, b: &Snapshot) -> String {
    let d = diff_items(a, b);
    if d.is_empty() {
        "nothing".into()
    } else {
        d.iter()
            .map(|x| x.0.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What differs between two snapshots, with both values: (what, value in `a`, value in
/// `b`), in the order of [`diff_summary`] (the first eight vector lanes, the first differing
/// byte of each page and of the tile).
pub fn diff_items(a: &Snapshot, b: &Snapshot) -> Vec<(String, String, String)> {
    let (ra, rb) = (&a.result, &b.result);
    let mut d: Vec<(String, String, String)> = Vec::new();
    let mut item = |what: String, x: String, y: String| d.push((what, x, y));
    let hex = |v: u64| format!("{v:#x}");
    if a.panicked != b.panicked {
        let said = |p: &Option<String>| p.clone().unwrap_or_else(|| "-".into());
        item("panic".into(), said(&a.panicked), said(&b.panicked));
    }
    if ra.status != rb.status {
        item(
            "status".into(),
            ra.status.name().into(),
            rb.status.name().into(),
        );
    }
    for (what, x, y) in [
        ("pc", ra.pc, rb.pc),
        ("instructions", ra.instructions, rb.instructions),
    ] {
        if x != y {
            item(what.into(), hex(x), hex(y));
        }
    }
    if ra.group != rb.group {
        item("group".into(), ra.group.to_string(), rb.group.to_string());
    }
    if ra.groups != rb.groups {
        let counts = |g: Option<GroupCounts>| {
            g.map_or_else(
                || "-".into(),
                |g| format!("{}/{}/{}", g.halted, g.trapped, g.limit),
            )
        };
        item("groups h/t/l".into(), counts(ra.groups), counts(rb.groups));
    }
    if ra.race != rb.race {
        item(
            "race".into(),
            format!("{:?}", ra.race),
            format!("{:?}", rb.race),
        );
    }
    if ra.trap != rb.trap {
        item(
            "trap".into(),
            format!("{:?}", ra.trap),
            format!("{:?}", rb.trap),
        );
    }
    for (what, x, y) in [
        ("mask", ra.mask, rb.mask),
        ("lc0", ra.lc0, rb.lc0),
        ("trip", a.trip, b.trip),
    ] {
        if x != y {
            item(what.into(), hex(x), hex(y));
        }
    }
    for (i, (x, y)) in ra.scalars.iter().zip(&rb.scalars).enumerate() {
        if x != y {
            item(format!("s{i}"), hex(*x), hex(*y));
        }
    }
    let mut lanes = 0;
    for (r, (x, y)) in ra.vectors.iter().zip(&rb.vectors).enumerate() {
        for (l, (p, q)) in x.iter().zip(y).enumerate() {
            if p != q {
                lanes += 1;
                if lanes <= 8 {
                    item(format!("v{r}[{l}]"), hex(*p), hex(*q));
                }
            }
        }
    }
    if lanes > 8 {
        item(
            format!("(+{} lanes)", lanes - 8),
            String::new(),
            String::new(),
        );
    }
    let first_byte = |x: &[u8], y: &[u8]| {
        // An empty page stands for a page of zeros.
        let x = if x.is_empty() { &ZERO_PAGE[..] } else { x };
        let y = if y.is_empty() { &ZERO_PAGE[..] } else { y };
        x.iter().zip(y).position(|(p, q)| p != q)
    };
    let byte = |x: &[u8], o: usize| format!("{:#04x}", x.get(o).copied().unwrap_or(0));
    if a.memory.len() != b.memory.len() {
        item(
            "memory map".into(),
            format!("{} pages", a.memory.len()),
            format!("{} pages", b.memory.len()),
        );
    }
    for ((pa, x), (_, y)) in a.memory.iter().zip(&b.memory) {
        if let Some(o) = first_byte(x, y) {
            item(
                format!("memory {:#x}", pa + o as u64),
                byte(x, o),
                byte(y, o),
            );
        }
    }
    if let Some(o) = first_byte(&a.tile, &b.tile) {
        item(format!("tile {o:#x}"), byte(&a.tile, o), byte(&b.tile, o));
    }
    d
}

/// " (instruction #n at pc P: TEXT)" for the n-th instruction the reference interpreter
/// retires (or would retire) under `config`.
pub fn describe_inst(program: &Program, config: Config, n: u64) -> String {
    if n == 0 {
        return String::new();
    }
    let config = Config {
        max_instructions: Some(n - 1),
        ..config
    };
    let Ok(mut m) = Machine::new(program, config) else {
        return String::new();
    };
    let d = Decoded::new(&program.code);
    let _ = lanejit_interp::interp::run(&mut m, &d);
    let idx = (m.pc / 8) as usize;
    let text = program
        .code
        .get(idx..)
        .and_then(|w| lanejit_interp::isa::Inst::decode(w).ok())
        .map_or_else(|| "(no instruction)".to_string(), |i| i.to_string());
    format!(" (instruction #{n} at pc {:#x}: {text})", m.pc)
}

/// The outcome of replaying a reproducer (or any program) on several engines.
#[derive(Clone, Debug)]
pub enum Replay {
    /// Every engine produced the same snapshot.
    Agree(Box<Snapshot>),
    /// Two engines differ.
    Diverge {
        /// Reference and other engine, with snapshots.
        pair: Box<Pair>,
        /// As [`Divergence::first_diff_after`].
        first_diff_after: u64,
        /// [`describe_inst`] of that instruction.
        at: String,
    },
}

/// An invalid `; fuzz-config:` line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: invalid `; fuzz-config:` line: {what}")]
pub struct ConfigError {
    /// 1-based line of the source.
    pub line: usize,
    /// What is wrong.
    pub what: String,
}

/// Why a replay could not run.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The source does not assemble.
    #[error("{0}")]
    Asm(#[from] lanejit_interp::asm::AsmErrors),
    /// The `; fuzz-config:` line is invalid.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// The machine could not be built (map beyond the limit, say).
    #[error("cannot set up the machine for this program")]
    Machine,
    /// No engine given.
    #[error("no engines to compare")]
    NoEngines,
}

/// Assemble `src` (named `file` in messages), run it on `engines` under its `; fuzz-config:`
/// flags, and compare; on a divergence, bisect to the first differing instruction.
pub fn replay(src: &str, file: &str, engines: &[Engine]) -> Result<Replay, ReplayError> {
    let program = lanejit_interp::asm::assemble(src, file)?;
    let config = ReproConfig::parse(src)?.config(&program);
    let first = *engines.first().ok_or(ReplayError::NoEngines)?;
    match diverges(&program, config, engines) {
        None => run_snapshot(&program, config, first)
            .map(|s| Replay::Agree(Box::new(s)))
            .ok_or(ReplayError::Machine),
        Some(pair) => {
            let n = bisect_program(&program, config, pair.0.0, pair.1.0);
            Ok(Replay::Diverge {
                at: describe_inst(&program, config, n),
                pair: Box::new(pair),
                first_diff_after: n,
            })
        }
    }
}

/// Whether the reproducer of `d` re-assembles and replays to the same divergence: the same
/// two snapshots from the same two engines.
pub fn reproducer_replays(d: &Divergence) -> bool {
    let text = reproducer(d);
    match replay(&text, "reproducer.s", &[d.a.0, d.b.0]) {
        Ok(Replay::Diverge { pair, .. }) => pair.0 == d.a && pair.1 == d.b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lanejit_interp::machine::TrapKind;
    use lanejit_interp::result::Status;
    use std::collections::HashMap;

    #[test]
    fn shards_partition_the_cases() {
        for cases in [0, 1, 5, 64, 65, 200] {
            for count in 1..=7 {
                let mut all = Vec::new();
                for index in 0..count {
                    let sh = Shard::parse(&format!("{index}/{count}")).unwrap();
                    let mine: Vec<u64> = (0..sh.len(cases)).map(|j| sh.case(j)).collect();
                    assert!(
                        mine.iter().all(|&k| k < cases && sh.owns(k)),
                        "{sh} {cases}"
                    );
                    assert_eq!(sh.is_empty(cases), mine.is_empty());
                    all.extend(mine);
                }
                all.sort_unstable();
                assert_eq!(all, (0..cases).collect::<Vec<_>>(), "{count} shards");
            }
        }
        assert_eq!(Shard::parse(" 2 / 3"), Ok(Shard { index: 2, count: 3 }));
        for bad in ["3/3", "0/0", "1", "a/2", "1/2/3", "-1/2"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    /// A sixth of the cases are launches of 2 to 4 groups; among them, race-free ones (then
    /// compared at several thread counts), racing ones, and ones where groups end
    /// differently (some trap or reach the limit while others halt).
    #[test]
    fn generated_launches_include_race_free_racing_and_mixed_ones() {
        let (mut launches, mut free, mut racing, mut mixed) = (0, 0, 0, 0);
        for i in 0..600 {
            let g = case(7, i);
            if g.groups < 2 {
                continue;
            }
            launches += 1;
            let p = g.build();
            assert_eq!(p.groups, Some(g.groups));
            if race_free_snapshot(&p, g.config()).is_some() {
                free += 1;
            } else {
                racing += 1;
            }
            let snap = run_snapshot(&p, g.config(), Engine::Interp).expect("machine builds");
            let counts = snap.result.groups.expect("a launch reports its groups");
            assert_eq!(
                counts.halted + counts.trapped + counts.limit,
                u64::from(g.groups)
            );
            if counts.halted > 0 && counts.halted < u64::from(g.groups) {
                mixed += 1;
            }
        }
        assert!(
            (60..=150).contains(&launches),
            "{launches} launches in 600 cases"
        );
        assert!(free >= 20, "{free} race-free launches");
        assert!(racing >= 5, "{racing} racing launches");
        assert!(mixed >= 5, "{mixed} launches whose groups end differently");
    }

    /// The generator reaches every outcome the fuzzer must cover: halts, limits, and every
    /// kind of trap, including faults inside hardware loops, on the first and the last lane.
    #[test]
    fn generated_cases_cover_every_outcome() {
        let mut status: HashMap<&str, u32> = HashMap::new();
        let mut traps: HashMap<&str, u32> = HashMap::new();
        let mut in_loop_faults = 0;
        let (mut lane0, mut last_lane) = (0, 0);
        for i in 0..1500 {
            let g = case(7, i);
            let p = g.build();
            let snap = run_snapshot(&p, g.config(), Engine::Interp).expect("machine builds");
            *status.entry(snap.result.status.name()).or_default() += 1;
            if let Some(t) = snap.result.trap {
                *traps.entry(t.kind.name()).or_default() += 1;
                if snap.result.status == Status::Trapped && snap.result.lc0 > 0 {
                    in_loop_faults += 1;
                }
                if let Some(mf) = t.mem {
                    if mf.lane == 0 {
                        lane0 += 1;
                    }
                    if g.vl > 1 && mf.lane == g.vl - 1 {
                        last_lane += 1;
                    }
                }
            }
        }
        for s in ["halted", "trapped", "limit"] {
            assert!(status.get(s).copied().unwrap_or(0) >= 15, "{s}: {status:?}");
        }
        for k in [
            TrapKind::PageFault,
            TrapKind::PermissionFault,
            TrapKind::TileOutOfBounds,
            TrapKind::TileUnauthorized,
            TrapKind::Misaligned,
            TrapKind::IllegalInstruction,
            TrapKind::CodeOutOfBounds,
        ] {
            assert!(
                traps.get(k.name()).copied().unwrap_or(0) >= 3,
                "{}: {traps:?}",
                k.name()
            );
        }
        assert!(
            in_loop_faults >= 10,
            "faults after loop iterations: {in_loop_faults}"
        );
        assert!(lane0 >= 10 && last_lane >= 10, "{lane0} {last_lane}");
    }

    #[test]
    fn campaigns_are_deterministic() {
        let a: Vec<GenProgram> = (0..20).map(|i| case(3, i)).collect();
        let b: Vec<GenProgram> = (0..20).map(|i| case(3, i)).collect();
        assert_eq!(a, b);
        assert_ne!(case(3, 0), case(4, 0));
        assert_ne!(case(3, 0), case(3, 1));
    }

    #[test]
    fn repro_config_round_trips() {
        for rc in [
            ReproConfig::default(),
            ReproConfig {
                vl: Some(8),
                strict_align: true,
                max_instructions: Some(17),
            },
            ReproConfig {
                vl: Some(64),
                strict_align: false,
                max_instructions: Some(0),
            },
        ] {
            let src = format!("; lanejit fuzz reproducer\n{}\nHALT\n", rc.header());
            assert_eq!(ReproConfig::parse(&src), Ok(rc));
        }
        assert_eq!(ReproConfig::parse("HALT\n"), Ok(ReproConfig::default()));
        assert_eq!(
            ReproConfig::parse("; fuzz-config: --max-instructions 0x10\n"),
            Ok(ReproConfig {
                max_instructions: Some(16),
                ..ReproConfig::default()
            })
        );
    }

    /// Invalid values are refused, naming the line and what is wrong (they used to be
    /// ignored silently).
    #[test]
    fn repro_config_refuses_invalid_values() {
        for (src, what) in [
            (
                "; fuzz-config: --vl 3 --max-instructions x\n",
                "`--vl 3`: VL must be a power of two from 1 to 64",
            ),
            (
                "; fuzz-config: --vl 128",
                "`--vl 128`: VL must be a power of two from 1 to 64",
            ),
            ("; fuzz-config: --vl", "`--vl` needs a value"),
            (
                "; fuzz-config: --max-instructions x",
                "`--max-instructions x`: not a number",
            ),
            (
                "; fuzz-config: --max-instructions -1",
                "`--max-instructions -1`: not a number",
            ),
            (
                "; fuzz-config: --strict-align --strict-align",
                "`--strict-align` is given twice",
            ),
            ("; fuzz-config: --engine jit", "unknown flag `--engine`"),
        ] {
            assert_eq!(
                ReproConfig::parse(&format!("HALT\n{src}")),
                Err(ConfigError {
                    line: 2,
                    what: what.into()
                }),
                "{src}"
            );
        }
        assert!(matches!(
            replay("; fuzz-config: --vl 3\nHALT\n", "r.s", &[Engine::Interp]),
            Err(ReplayError::Config(_))
        ));
    }

    /// The reproducer of a case re-assembles to the same program and replays to the same
    /// snapshot, for generated cases of every shape (including `.inst` words and labels).
    #[test]
    fn reproducers_reassemble_to_the_same_run() {
        for i in 0..30 {
            let g = case(11, i);
            let program = g.build();
            let snap = run_snapshot(&program, g.config(), Engine::Interp).unwrap();
            let d = Divergence {
                case: g.clone(),
                a: (Engine::Interp, snap.clone()),
                b: (Engine::Interp, snap.clone()),
                first_diff_after: 0,
            };
            let text = reproducer(&d);
            let back = lanejit_interp::asm::assemble(&text, "r.s")
                .unwrap_or_else(|e| panic!("case {i}: {e}\n{text}"));
            assert_eq!(back.code, program.code, "case {i}");
            assert_eq!(ReproConfig::parse(&text).unwrap().config(&back), g.config());
            match replay(&text, "r.s", &[Engine::Interp]).unwrap() {
                Replay::Agree(s) => assert_eq!(*s, snap, "case {i}"),
                Replay::Diverge { .. } => panic!("one engine cannot diverge"),
            }
        }
    }

    #[test]
    fn bisection_finds_the_transition() {
        for t in [1u64, 2, 3, 17, 99, 100] {
            assert_eq!(first_true(100, |n| n >= t), t);
        }
        assert_eq!(first_true(100, |_| true), 0);
        assert_eq!(first_true(100, |_| false), 100);
        assert_eq!(first_true(0, |_| true), 0);
        let g = case(5, 0);
        assert_eq!(bisect(&g, Engine::Interp, Engine::Interp), g.fuel);
    }
}
