//! How a tiered run's background compiles are paced: when a compile may run ([`Pacer`]),
//! from what the run has lasted and what its counted loops say it will last still
//! ([`known_ahead`]). Only timing depends on it, never a result.

use lanejit_interp::interp::Decoded;
use lanejit_interp::isa::{Cond, Inst, SOrImm, SReg};
use lanejit_interp::machine::Machine;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A background run's compiler thread spends at most one part in this many of the run's
/// time so far compiling (see [`Pacer`]).
pub const COMPILE_SHARE: u32 = 2;

/// How often a compile waiting for its turn ([`Pacer::wait`]) looks at the clock.
const PACE_POLL: Duration = Duration::from_micros(200);

/// Paces a background run's compiles, so that compiling never costs the run much more than
/// what the compiled code can have won back.
///
/// On this project's 2-vCPU hosts a busy second CPU slows the first: the interpreter runs
/// lut32 over 1 MiB at 176 Melem/s alone, at 103 Melem/s beside a shell spinning in a loop.
/// A compile in the background is then no longer free: while it runs, the run interprets
/// at about 60% of its speed. Started at a fixed time (1 ms after the run's start, as
/// before), a compile that ends about when the run does makes the run slower than the
/// interpreter alone (lut32 at 1 MiB: 0.53-0.57x the interpreter's speed; gather32,
/// scatter32, dot8 and tile_stage at 1-2 MiB: 0.78-0.90x); started later, the long runs
/// lose what the early compile gained (stencil5_vaddr at 4 MiB: 3.95x the interpreter
/// started after 1 ms, 2.63x after 3 ms), and a larger region's compile ends later anyway.
///
/// So each compile waits until the run has lasted [`COMPILE_SHARE`] times the compile time
/// spent so far plus the compile's own estimate (its IR size times the measured cost per IR
/// instruction of its settings, `lanejit_jit::CompileJob::estimated_us`): a rent-or-buy
/// rule, which bounds the time compiling takes from the run by what the run has already
/// spent without it, whatever the region's size. Or it goes once the run is known to go on
/// for [`COMPILE_SHARE`] times its estimate still ([`known_ahead`]: the loops around the
/// region have that much work left): paced by the past only, long runs whose loops take
/// long to compile started late (fir8_vaddr at 4 MiB: 4.51x the interpreter compiled at
/// 1 ms, 2.31x paced by the past, 5.32x with the loops' counts; matmul256 4.9-6x, 4.3x,
/// 7.5x). The first compiles (the compiler thread's) and the loops' optimising recompiles
/// (the optimiser thread's, which run only when a CPU is otherwise idle) share one pace:
/// both threads' compile time counts as spent ([`Pacer::sibling`]). Off under the test hook
/// that delays compiles at random (`VmOptions::compile_delay_seed`), whose runs must
/// compile; after the run has ended a compile waiting for its turn is dropped, unless a code
/// cache wants it for the next run.
pub(crate) struct Pacer {
    /// When the run started.
    began: Instant,
    /// Set when the run has ended.
    ended: Arc<AtomicBool>,
    /// Whether compiles wait their turn at all.
    on: bool,
    /// Whether a compile goes on after the run's end (a code cache stores its code).
    after_end: bool,
    /// Compile time spent so far, in nanoseconds, by the compiles [`Pacer::wait`] let go,
    /// this pacer's and its siblings' ([`Pacer::sibling`]).
    spent: Arc<AtomicU64>,
    /// When the compile in hand was let go.
    go: std::cell::Cell<Option<Instant>>,
}

impl Pacer {
    /// The pace of a run that began at `began` and sets `ended` when it ends; `on`: compiles
    /// wait their turn; `after_end`: one still waiting at the end goes on (for a code cache).
    pub(crate) fn new(began: Instant, ended: Arc<AtomicBool>, on: bool, after_end: bool) -> Pacer {
        Pacer {
            began,
            ended,
            on,
            after_end,
            spent: Default::default(),
            go: Default::default(),
        }
    }

    /// The pace of another thread's compiles in the same run: the same run and the same
    /// compile time spent (both threads' compiles count against one share of the run).
    pub(crate) fn sibling(&self) -> Pacer {
        Pacer {
            spent: Arc::clone(&self.spent),
            go: Default::default(),
            ..Pacer::new(self.began, Arc::clone(&self.ended), self.on, self.after_end)
        }
    }

    /// Compile time spent so far.
    fn spent(&self) -> Duration {
        Duration::from_nanos(self.spent.load(Ordering::Relaxed))
    }

    /// Whether the run has ended.
    pub(crate) fn ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    /// Wait until a compile estimated at `us` microseconds may run: `false` when it is not
    /// to run (the run has ended, or `interrupt` returned `true`). `ahead`: the run is known
    /// to go on at least until then ([`known_ahead`]).
    pub(crate) fn wait(
        &self,
        us: u64,
        ahead: Option<Instant>,
        interrupt: impl FnMut() -> bool,
    ) -> bool {
        self.wait_seeing(us, || ahead, interrupt)
    }

    /// [`Pacer::wait`] with what is known of the run's future looked at again at every poll
    /// (`ahead`: a loop whose progress is measured as it runs, [`LoopWatch`]).
    pub(crate) fn wait_seeing(
        &self,
        us: u64,
        mut ahead: impl FnMut() -> Option<Instant>,
        mut interrupt: impl FnMut() -> bool,
    ) -> bool {
        if self.on {
            let est = Duration::from_micros(us);
            let due = (self.spent() + est) * COMPILE_SHARE;
            loop {
                if self.ended() {
                    if !self.after_end {
                        return false;
                    }
                    break;
                }
                let now = self.began.elapsed();
                // What the run has lasted, or what it is known to last still, pays for it.
                let left = ahead().map(|t| t.saturating_duration_since(Instant::now()));
                if now >= due || left.is_some_and(|l| l >= est * COMPILE_SHARE) {
                    break;
                }
                if interrupt() {
                    return false;
                }
                std::thread::sleep((due - now).min(PACE_POLL));
            }
        }
        self.go.set(Some(Instant::now()));
        true
    }

    /// The compile let go last has finished: its time counts as spent.
    pub(crate) fn done(&self) {
        if let Some(t) = self.go.take() {
            let ns = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
            self.spent.fetch_add(ns, Ordering::Relaxed);
        }
    }
}

/// Until when a loop running its baseline code is known to go on, from where its stretch
/// headers said it stood at two moments (`lanejit_jit::abi::TierWords::progress`: LC0BASE
/// against the trip count): a single counted loop whose optimised code would take as long
/// to compile as it has left to run is not worth recompiling, and one with much left is
/// (fir8_lc0 over 64 MiB: its strip-mined baseline ran 20 ms, the optimised code compiled
/// after 14 ms, when the pace by the run's past allowed, and ran only after the loop).
pub(crate) struct LoopWatch {
    tier: Arc<lanejit_jit::abi::TierWords>,
    /// The first look at the loop: its region's pc, LC0BASE, when.
    first: Option<(u64, u64, Instant)>,
}

impl LoopWatch {
    pub(crate) fn new(tier: Arc<lanejit_jit::abi::TierWords>) -> LoopWatch {
        LoopWatch { tier, first: None }
    }

    /// Until when the loop of the region at `pc` goes on at the rate it has gone at since
    /// the first look (`None` before a second look that saw it move, or when another loop
    /// runs).
    pub(crate) fn ahead(&mut self, pc: u64) -> Option<Instant> {
        let (at, lc, trip) = self.tier.progress()?;
        if at != pc {
            return None;
        }
        let now = Instant::now();
        match self.first {
            Some((p, l, t)) if p == pc && lc > l => {
                let rate = (lc - l) as f64 / now.duration_since(t).as_secs_f64().max(1e-9);
                Some(after(trip.saturating_sub(lc) as f64, rate))
            }
            // Not moved yet: keep the first look.
            Some((p, l, _)) if p == pc && lc == l => None,
            _ => {
                self.first = Some((pc, lc, now));
                None
            }
        }
    }
}

/// Until when a run that made the region at `pc` hot is known to go on: the instructions
/// the loops around `pc` have left ([`hardware_loop_left`], [`branch_loop_left`]; the
/// larger), at `rate` instructions a second (what the interpreter runs the region at until
/// its code is ready: [`Progress::rate`], else [`run_rate`]). `None` when no loop around
/// `pc` is known to have work left. The ISA's counted loops tell a future a generic JIT must
/// guess: a region whose loop has long to go is worth compiling early.
pub(crate) fn known_ahead(s: &mut Shapes<'_>, pc: u64, m: &Machine, rate: f64) -> Option<Instant> {
    Some(after(loops_left(s, pc, m)? as f64, rate))
}

/// The instructions a second a run that began at `began` has retired so far (`None` before
/// it has retired any).
pub(crate) fn run_rate(m: &Machine, began: Instant) -> Option<f64> {
    let secs = began.elapsed().as_secs_f64();
    (m.retired != 0 && secs > 0.0).then(|| m.retired as f64 / secs)
}

/// When a run will have run `left` more instructions at `rate` instructions a second.
fn after(left: f64, rate: f64) -> Instant {
    in_secs(left / rate.max(1.0))
}

/// `secs` seconds from now, at most an hour (a NaN counts as none: `from_secs_f64` would
/// panic on it).
fn in_secs(secs: f64) -> Instant {
    let secs = if secs.is_nan() { 0.0 } else { secs };
    Instant::now() + Duration::from_secs_f64(secs.clamp(0.0, 3600.0))
}

/// Shortest stretch since a [`Progress`] mark whose instruction rate stands for the
/// interpreter's ([`Progress::rate`]): about 5,000 instructions interpreted, against a clock
/// read of well under a microsecond.
pub(crate) const MARK_SPAN: Duration = Duration::from_micros(20);

/// Where a background run stood at a mark: when, its instructions retired, and the running
/// hardware loop's LC0BASE and trip count. Marked at the run's first entry count, for the
/// loop's progress since ([`Progress::ahead`]), and at the first entry count after compiled
/// code last ran, for the rate the run interprets at ([`Progress::rate`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Progress {
    at: Instant,
    retired: u64,
    lc0base: u64,
    trip: u64,
    /// The scalar registers, for a counted branch loop's counter ([`Progress::branch_ahead`]).
    s: [u64; 32],
}

impl Progress {
    /// `m` now.
    pub(crate) fn of(m: &Machine) -> Progress {
        Progress {
            at: Instant::now(),
            retired: m.retired,
            lc0base: m.regs.lc0base,
            trip: m.regs.trip,
            s: m.regs.s,
        }
    }

    /// The instructions a second the run has retired since this mark, taken where it
    /// began interpreting (at the first entry count after compiled code last ran): what a
    /// region hot now runs at until its code is ready. `None` within [`MARK_SPAN`] of the
    /// mark or with nothing retired since. The run's rate so far ([`run_rate`]) mixes in its
    /// compiled stretches: after a first loop compiled and ran 20-50x faster than the
    /// interpreter, the next loop's interpreted time left looked that much shorter, and its
    /// compile waited for the rent-or-buy rule (a lookup-table transform after two loops
    /// filling its inputs, 1M elements: hot at 2.5 ms, compiled from 5.5 ms, `lanejit run
    /// --timeline`).
    pub(crate) fn rate(self, m: &Machine) -> Option<f64> {
        let secs = self.at.elapsed();
        (secs >= MARK_SPAN && m.retired > self.retired)
            .then(|| (m.retired - self.retired) as f64 / secs.as_secs_f64())
    }

    /// Until when the run is known to go on, measured on the innermost counted branch loop
    /// around the instruction at `pc` ([`counted_loop`]): the iterations its counter has
    /// moved since this mark, at the time they took, for the iterations it has left. The
    /// static count converts instructions to time at an instruction rate, which does not
    /// see what an instruction costs: a branch loop of gathers and scatters over 32 lanes
    /// (`V.ADD v1, v9, s7; V.LW [s1 + (v1 << 2)]; ...; S.ADD s7, s7, VL; BLT s7, s8, top`)
    /// interprets at about 40M instructions a second, where the set-up before it ran at
    /// 90M, and its compile waited for the rent-or-buy rule. `None` when no such loop is
    /// around `pc` or its counter has not moved forward since the mark (a mark taken before
    /// the loop set its counter may count more iterations than it ran, so the time per
    /// iteration comes out short: a later end, never an earlier one, is what that gives).
    pub(crate) fn branch_ahead(self, s: &mut Shapes<'_>, pc: u64, m: &Machine) -> Option<Instant> {
        let at = (pc / 8) as usize;
        let c = counted_loop(s, at, at, None, m)?;
        let moved =
            (m.regs.s[c.reg.0 as usize] as i64).wrapping_sub(self.s[c.reg.0 as usize] as i64);
        // Checked: any register values (i64::MIN / -1 overflows).
        let done = moved.checked_div(c.step).filter(|&n| n > 0)?;
        let per = self.at.elapsed().as_secs_f64() / done as f64;
        Some(in_secs(c.iters as f64 * per))
    }

    /// Until when the run is known to go on, measured: when the hardware loop running at
    /// this mark is still running (the same trip count, LC0BASE further on), its elements
    /// left at the time per element it took since (compiled and interpreted stretches
    /// alike, as they come). Where the static count of [`loops_left`] sees only one pass
    /// over the body, this sees whatever the body runs per element: a row loop around a
    /// data-dependent branch loop (SpMV's rows, 16 steps of a branch loop each), whose static
    /// count was 1/13 of the real one, so its region's compile waited for the rent-or-buy
    /// rule (8 ms of a 32 ms run, `lanejit run spmv_csr.s --set N=65536 --timeline`). `None`
    /// when no loop has progressed since the mark.
    pub(crate) fn ahead(self, m: &Machine) -> Option<Instant> {
        let (lc, trip) = (m.regs.lc0base, m.regs.trip);
        if trip != self.trip || lc <= self.lc0base || lc >= trip {
            return None;
        }
        let per = self.at.elapsed().as_secs_f64() / (lc - self.lc0base) as f64;
        Some(in_secs((trip - lc) as f64 * per))
    }
}

/// The later of two ends a run is known to reach.
pub(crate) fn later(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// What the scans for loops ([`loops_left`]) read of one instruction, in plain fields: a
/// copy is two aligned 16-byte moves (an `Option` of the operand types, 56 bytes at odd
/// offsets, was copied with overlapping moves that stalled on store forwarding, and the
/// cache saved nothing).
#[derive(Clone, Copy, Default)]
struct Fact {
    /// What a scalar step adds to `step_reg`.
    step: i64,
    /// The scalar registers the instruction writes.
    writes_s: u32,
    /// A conditional branch's target (an instruction index).
    target: u32,
    /// A conditional branch's right operand when it is an immediate.
    imm: i32,
    /// Words the instruction occupies; 0 until taken from the decoding, and where the word
    /// does not decode (a scan stops there).
    words: u8,
    /// Whether it has been taken from the decoding.
    known: bool,
    kind: Kind,
    /// A `LOOP`'s count register, or a branch's left operand.
    reg: u8,
    /// A branch's right register (`NONE`: an immediate).
    reg_b: u8,
    /// The register a scalar step adds to (`NONE`: not a step).
    step_reg: u8,
    /// A conditional branch's condition (`None`: not a conditional branch).
    cond: Option<Cond>,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Kind {
    #[default]
    Other,
    Loop,
    Endloop,
}

/// No register (`Fact::reg_b`, `Fact::step_reg`).
const NONE: u8 = u8::MAX;

impl Fact {
    fn of(inst: &Inst) -> Fact {
        let mut f = Fact {
            words: inst.opcode().words() as u8,
            known: true,
            writes_s: inst.effects().writes_s,
            reg_b: NONE,
            step_reg: NONE,
            ..Fact::default()
        };
        if let Some((r, c)) = inst.scalar_step() {
            (f.step_reg, f.step) = (r.0, c);
        }
        match inst {
            Inst::Loop(l) => (f.kind, f.reg) = (Kind::Loop, l.sa.0),
            Inst::Endloop(_) => f.kind = Kind::Endloop,
            _ => {
                if let Some((b, c)) = inst.cond_branch() {
                    (f.reg, f.target, f.cond) = (b.sa.0, b.target.0, Some(c));
                    match b.sb {
                        SOrImm::Reg(r) => f.reg_b = r.0,
                        SOrImm::Imm(k) => f.imm = k,
                    }
                }
            }
        }
        f
    }

    /// A `LOOP`'s count register.
    fn count(&self) -> Option<SReg> {
        (self.kind == Kind::Loop).then_some(SReg(self.reg))
    }

    /// A conditional branch's left operand, right operand, target index and condition.
    fn branch(&self) -> Option<(SReg, SOrImm, usize, Cond)> {
        let sb = match self.reg_b {
            NONE => SOrImm::Imm(self.imm),
            r => SOrImm::Reg(SReg(r)),
        };
        let c = self.cond?;
        Some((SReg(self.reg), sb, self.target as usize, c))
    }

    /// The register a scalar step adds to and what it adds.
    fn step(&self) -> Option<(SReg, i64)> {
        (self.step_reg != NONE).then_some((SReg(self.step_reg), self.step))
    }
}

/// The [`Fact`]s of a program's instructions, each taken from its decoding the first time a
/// scan reaches it. A run interpreting its start looks at the loops around its pc every
/// other slice ([`loops_left`]), walking the same loops again each time; from the decoded
/// instructions (`Inst::effects`, `Opcode::sem` and friends, out-of-line matches over the
/// whole ISA) a look took 0.6-1.1 us in matmul256's three nested loops (2 us in a cold
/// run, where a slice takes about 30 us), which cost matmul256 at 16 KiB, a 0.3 ms run,
/// about 3.5% against the interpreter (tiered / interp 0.960-0.968 in three runs). Through
/// the facts a look there takes 0.16-0.28 us (1,000 looks at each of eight points of its
/// run); a look past a program's end or 4,096 instructions of straight code (`SCAN`) reads
/// each decoding once per run instead of once per look.
pub(crate) struct Shapes<'d> {
    d: &'d Decoded,
    /// Per instruction index up to the farthest one a scan reached.
    facts: Vec<Fact>,
}

impl<'d> Shapes<'d> {
    /// The shapes of the program `d` (nothing taken from it yet).
    pub(crate) fn new(d: &'d Decoded) -> Shapes<'d> {
        Shapes {
            d,
            facts: Vec::new(),
        }
    }

    /// The fact of the instruction at index `i` (`None` past the program or where the word
    /// does not decode).
    #[inline]
    fn get(&mut self, i: usize) -> Option<&Fact> {
        if !self.facts.get(i).is_some_and(|f| f.known) {
            self.learn(i)?;
        }
        let f = &self.facts[i];
        (f.words != 0).then_some(f)
    }

    /// Take the fact of instruction `i` from the decoding (`None` past the program).
    #[cold]
    fn learn(&mut self, i: usize) -> Option<()> {
        if i >= self.d.len() {
            return None;
        }
        if i >= self.facts.len() {
            self.facts.resize(i + 1, Fact::default());
        }
        self.facts[i] = match self.d.inst(i) {
            Some(inst) => Fact::of(inst),
            None => Fact {
                known: true,
                ..Fact::default()
            },
        };
        Some(())
    }
}

/// Instructions the loops around the instruction at `pc` are known to have left
/// ([`hardware_loop_left`], [`branch_loop_left`]; the larger), `None` when no loop around it
/// is known to have work left.
pub(crate) fn loops_left(s: &mut Shapes<'_>, pc: u64, m: &Machine) -> Option<u64> {
    let at = (pc / 8) as usize;
    match (hardware_loop_left(s, at, m), branch_loop_left(s, at, m)) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// Instructions left in the hardware loop around instruction `at`: the elements it has left
/// (at a `LOOP`, its count register; inside a loop, the latched trip count less LC0BASE), VL
/// to an iteration, each iteration the instructions from `at` to the first `ENDLOOP` (fewer
/// than the body's when `at` is inside it). `None` when no loop is running (a finished loop
/// leaves fewer than VL elements) or no `ENDLOOP` follows within [`SCAN`] instructions.
fn hardware_loop_left(s: &mut Shapes<'_>, at: usize, m: &Machine) -> Option<u64> {
    let vl = u64::from(m.config.vl.max(1));
    if let Some(sa) = s.get(at).and_then(|f| f.count()) {
        let count = m.regs.s[sa.0 as usize];
        if count.div_ceil(vl) < 2 {
            return None;
        }
        // Its iterations, not the `LOOP` itself, which runs once.
        return loop_work(s, at, count, m).map(|(work, _)| work - 1);
    }
    let iters = m.regs.trip.saturating_sub(m.regs.lc0base).div_ceil(vl);
    if iters < 2 {
        return None;
    }
    let (body, _) = to_endloop(s, at)?;
    Some(iters.saturating_mul(body))
}

/// The instructions the `LOOP` at index `at` runs for `count` elements (itself once, then VL
/// elements to an iteration of its body), and the index after its `ENDLOOP`.
fn loop_work(s: &mut Shapes<'_>, at: usize, count: u64, m: &Machine) -> Option<(u64, usize)> {
    let first = at + usize::from(s.get(at)?.words);
    let (body, next) = to_endloop(s, first)?;
    let iters = count.div_ceil(u64::from(m.config.vl.max(1)));
    Some((iters.saturating_mul(body).saturating_add(1), next))
}

/// Most instructions a scan for the end of a loop looks at.
const SCAN: u64 = 4096;

/// The instructions from index `from` to the first `ENDLOOP`, that one included, and the
/// index after it.
fn to_endloop(s: &mut Shapes<'_>, mut from: usize) -> Option<(u64, usize)> {
    let mut n = 0u64;
    loop {
        let f = s.get(from)?;
        n += 1;
        from += usize::from(f.words);
        if f.kind == Kind::Endloop {
            return Some((n, from));
        }
        if n >= SCAN {
            return None;
        }
    }
}

/// Instructions left in the counted branch loops around instruction `at` (up to
/// [`NEST_DEPTH`] of them, each enclosing the last): for each, the first backward branch past
/// the last one whose target is at or before `at`, comparing a register the loop changes
/// once, by adding or subtracting an immediate, with an immediate or a register the loop
/// does not write (`S.ADD s8, s8, 1; BLT s8, s20, top`, `S.SUB s4, s4, 1; BNE s4, 0, top`:
/// the rows of a stencil, the rows and blocks of a matrix product). Its iterations left (from
/// the register's value now), each its own instructions, an inner `LOOP` counted with the
/// iterations its count register gives now, and the loop it encloses with the work that
/// loop has left now (a lower bound of what it does in each later iteration, which runs it
/// whole). The most of them; `None` when no such loop is around `at`.
fn branch_loop_left(s: &mut Shapes<'_>, at: usize, m: &Machine) -> Option<u64> {
    let (mut from, mut inner, mut most) = (at, None, None);
    for _ in 0..NEST_DEPTH {
        let Some(c) = counted_loop(s, at, from, inner, m) else {
            break;
        };
        most = Some(c.left);
        inner = Some((c.top, c.end, c.left));
        from = c.end + s.get(c.end).map_or(1, |f| usize::from(f.words));
    }
    most
}

/// A counted branch loop around an instruction, as [`counted_loop`] finds it.
struct Counted {
    /// Its first and last instruction (the backward branch).
    top: usize,
    end: usize,
    /// Its instructions left ([`branch_loop_left`]).
    left: u64,
    /// The register the branch compares, the one step the loop adds to it, and the
    /// iterations left until the branch falls through.
    reg: SReg,
    step: i64,
    iters: u64,
}

/// Most counted branch loops [`branch_loop_left`] looks at around an instruction.
const NEST_DEPTH: usize = 4;

/// The counted branch loop around `at` whose branch is the first backward one from `from`
/// on reaching back to `at` or before (see [`branch_loop_left`]): its first and last
/// instruction and its instructions left, `inner` (a loop it holds: first, last, work left)
/// counted as its work left.
fn counted_loop(
    s: &mut Shapes<'_>,
    at: usize,
    mut from: usize,
    inner: Option<(usize, usize, u64)>,
    m: &Machine,
) -> Option<Counted> {
    let mut n = 0u64;
    let (end, (counter, sb, top, cond)) = loop {
        let f = s.get(from)?;
        if let Some(br) = f.branch() {
            if br.2 <= at {
                break (from, br);
            }
        }
        from += usize::from(f.words);
        n += 1;
        if n >= SCAN {
            return None;
        }
    };
    let limit_reg = match sb {
        SOrImm::Reg(r) => Some(r),
        SOrImm::Imm(_) => None,
    };
    let (mut step, mut per_iter, mut j) = (None, 0u64, top);
    while j <= end {
        if let Some((_, e, left)) = inner.filter(|&(t, _, _)| t == j) {
            // The loop inside, by its work left; its instructions are not looked at again.
            per_iter = per_iter.saturating_add(left);
            j = e + usize::from(s.get(e)?.words);
            continue;
        }
        let f = s.get(j)?;
        let w = f.writes_s;
        if limit_reg.is_some_and(|r| w & (1 << r.0) != 0) {
            return None;
        }
        if w & (1 << counter.0) != 0 {
            match (step, f.step()) {
                (None, Some((r, c))) if r == counter && c != 0 => step = Some(c),
                _ => return None,
            }
        }
        if let Some(count) = f.count() {
            let (work, next) = loop_work(s, j, m.regs.s[count.0 as usize], m)?;
            per_iter = per_iter.saturating_add(work);
            j = next;
        } else {
            per_iter = per_iter.saturating_add(1);
            j += usize::from(f.words);
        }
    }
    let a = m.regs.s[counter.0 as usize];
    let limit = match sb {
        SOrImm::Reg(r) => m.regs.s[r.0 as usize],
        SOrImm::Imm(c) => i64::from(c) as u64,
    };
    let step = step?;
    // Iterations until the branch falls through, counting up to or down to the limit (the
    // distance as the branch compares, signed or unsigned; any register values).
    let (sa, sl) = (a as i64, limit as i64);
    let gap = match cond {
        Cond::Lt | Cond::Ne if step > 0 && sa < sl => sl.abs_diff(sa),
        Cond::Ltu if step > 0 && a < limit => limit - a,
        Cond::Ne | Cond::Ge if step < 0 && sa > sl => sa.abs_diff(sl),
        Cond::Geu if step < 0 && a > limit => a - limit,
        _ => return None,
    };
    let iters = gap.div_ceil(step.unsigned_abs());
    Some(Counted {
        top,
        end,
        left: iters.saturating_mul(per_iter),
        reg: counter,
        step,
        iters,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lanejit_interp::machine::Config;

    fn pacer(began: Instant, on: bool, after_end: bool) -> Pacer {
        Pacer::new(began, Arc::new(AtomicBool::new(false)), on, after_end)
    }

    /// A compile goes once the run has lasted `COMPILE_SHARE` times what compiling has
    /// spent plus its estimate; the time it runs counts as spent for the next one.
    #[test]
    fn compiles_wait_for_their_share_of_the_run() {
        let long_ago = Instant::now() - Duration::from_millis(400);
        let p = pacer(long_ago, true, false);
        // Due at 2 x 10 ms: long past.
        let t = Instant::now();
        assert!(p.wait(10_000, None, || panic!("no wait expected")));
        assert!(t.elapsed() < Duration::from_millis(100));
        std::thread::sleep(Duration::from_millis(5));
        p.done();
        assert!(p.spent() >= Duration::from_millis(5));
        // A compile estimated at 10 s is not due for 20 s: a new region interrupts the wait.
        let mut polls = 0;
        assert!(!p.wait(10_000_000, None, || {
            polls += 1;
            polls == 3
        }));
        assert_eq!(polls, 3);
        // A short one is due: what was spent (5 ms or more) plus 1 ms, twice, is before 400 ms.
        assert!(p.wait(1_000, None, || panic!("no wait expected")));
        // Due in 2 x (spent + 50 ms) from a run that just began: it waits.
        let p = pacer(Instant::now(), true, false);
        let t = Instant::now();
        assert!(p.wait(50_000, None, || false));
        assert!(
            t.elapsed() >= Duration::from_millis(95),
            "{:?}",
            t.elapsed()
        );
        // A run known to go on for a minute more pays for it at once; one known to go on
        // for 10 ms does not (the wait goes on until interrupted).
        let p = pacer(Instant::now(), true, false);
        let minute = Some(Instant::now() + Duration::from_secs(60));
        assert!(p.wait(50_000, minute, || panic!("no wait expected")));
        let soon = Some(Instant::now() + Duration::from_millis(10));
        assert!(!p.wait(50_000, soon, || true));
    }

    /// The run goes on at least as long as the running hardware loop's iterations left take
    /// at the given instruction rate; nothing is known outside a loop.
    #[test]
    fn a_running_loop_tells_how_long_the_run_goes_on() {
        let src = "        S.LI s3, 4000\n        LOOP s3\n        V.ADD v1, v1, 1\n        \
                   V.ADD v2, v2, 1\n        ENDLOOP\n        HALT\n";
        let p = lanejit_interp::asm::assemble(src, "loop.s").expect("assembles");
        let d = Decoded::new(&p.code);
        let mut m = Machine::new(&p, Config::for_program(&p, Some(8))).expect("machine");
        let lp = (0..d.len())
            .find(|&i| matches!(d.inst(i), Some(lanejit_interp::isa::Inst::Loop(_))))
            .expect("a LOOP") as u64
            * 8;
        // 1000 instructions in the first millisecond: 1 us each.
        m.retired = 1000;
        let rate = run_rate(&m, Instant::now() - Duration::from_millis(1)).expect("a rate");
        assert!((900_000.0..=1_000_000.0).contains(&rate), "{rate}");
        let ahead = |m: &Machine, pc| {
            known_ahead(&mut Shapes::new(&d), pc, m, rate)
                .map(|t| t.saturating_duration_since(Instant::now()))
        };
        // At the LOOP: 4000 elements, 500 iterations of 3 instructions: about 1.5 ms.
        m.regs.s[3] = 4000;
        let at_loop = ahead(&m, lp).expect("a loop ahead");
        assert!(at_loop > Duration::from_millis(1), "{at_loop:?}");
        assert!(at_loop < Duration::from_millis(2), "{at_loop:?}");
        // In the body with 800 elements left: 100 iterations of 3, about 0.3 ms.
        m.regs.trip = 4000;
        m.regs.lc0base = 3200;
        let inside = ahead(&m, lp + 8).expect("a loop ahead");
        assert!(inside < Duration::from_micros(400), "{inside:?}");
        assert!(inside > Duration::from_micros(150), "{inside:?}");
        // The loop has ended: nothing known.
        m.regs.lc0base = 4000;
        assert_eq!(ahead(&m, lp + 8), None);
    }

    /// Once the run has ended a waiting compile is dropped, unless a code cache wants its
    /// code; unpaced (the test hook), nothing waits.
    #[test]
    fn compiles_after_the_end_go_only_to_a_code_cache() {
        let now = Instant::now();
        let p = pacer(now, true, false);
        p.ended.store(true, Ordering::Release);
        assert!(!p.wait(10_000_000, None, || false));
        let p = pacer(now, true, true);
        p.ended.store(true, Ordering::Release);
        assert!(p.wait(10_000_000, None, || false));
        let p = pacer(now, false, false);
        assert!(p.wait(10_000_000, None, || panic!("unpaced")));
    }

    fn program(src: &str) -> (Decoded, Machine, usize) {
        let p = lanejit_interp::asm::assemble(src, "nest.s").expect("assembles");
        let d = Decoded::new(&p.code);
        let m = Machine::new(&p, Config::for_program(&p, Some(8))).expect("machine");
        let lp = (0..d.len())
            .find(|&i| matches!(d.inst(i), Some(Inst::Loop(_))))
            .expect("a LOOP");
        (d, m, lp)
    }

    /// The rows of a nest, counted down or up by a register the loop steps once: each row the
    /// inner loop's iterations (from its count register now) and the row's own instructions.
    #[test]
    fn counted_branch_loops_tell_their_work_left() {
        let down = "        S.LI s3, 64\n        S.LI s4, 10\nrow:    LOOP s3\n        \
                    V.ADD v1, v1, 1\n        ENDLOOP\n        S.SUB s4, s4, 1\n        \
                    BNE s4, 0, row\n        HALT\n";
        let (d, mut m, row) = program(down);
        m.regs.s[3] = 64;
        m.regs.s[4] = 10;
        // A row: LOOP, 8 iterations of V.ADD and ENDLOOP, S.SUB, BNE: 19; ten rows left.
        assert_eq!(branch_loop_left(&mut Shapes::new(&d), row, &m), Some(190));
        // From inside the inner loop, the same rows.
        assert_eq!(
            branch_loop_left(&mut Shapes::new(&d), row + 1, &m),
            Some(190)
        );
        // The inner loop alone: 8 iterations of 2.
        assert_eq!(hardware_loop_left(&mut Shapes::new(&d), row, &m), Some(16));
        m.regs.s[4] = 0;
        assert_eq!(
            branch_loop_left(&mut Shapes::new(&d), row, &m),
            None,
            "counted down already"
        );
        let up = "        S.LI s3, 64\n        S.LI s20, 10\nrow:    LOOP s3\n        \
                  V.ADD v1, v1, 1\n        ENDLOOP\n        S.ADD s8, s8, 2\n        \
                  BLT s8, s20, row\n        HALT\n";
        let (d, mut m, row) = program(up);
        m.regs.s[3] = 64;
        m.regs.s[20] = 10;
        m.regs.s[8] = 3;
        // (10 - 3) / 2 rounded up: 4 rows.
        assert_eq!(
            branch_loop_left(&mut Shapes::new(&d), row, &m),
            Some(4 * 19)
        );
        // A limit the loop writes, or a counter stepped twice, is not counted.
        let moving = up.replace("S.ADD s8, s8, 2", "S.ADD s20, s20, 2");
        let (d, m, row) = program(&moving);
        assert_eq!(branch_loop_left(&mut Shapes::new(&d), row, &m), None);
        let twice = up.replace(
            "S.ADD s8, s8, 2",
            "S.ADD s8, s8, 1\n        S.ADD s8, s8, 1",
        );
        let (d, m, row) = program(&twice);
        assert_eq!(branch_loop_left(&mut Shapes::new(&d), row, &m), None);
        // Blocks of rows: the outer loop's iterations left, each its two own instructions,
        // its reset of the row counter and the rows' work left now.
        let blocks = "        S.LI s3, 64\n        S.LI s20, 10\n        S.LI s21, 6\nblk:    \
                      S.MOV s8, s0\nrow:    LOOP s3\n        V.ADD v1, v1, 1\n        \
                      ENDLOOP\n        S.ADD s8, s8, 2\n        BLT s8, s20, row\n        \
                      S.ADD s9, s9, 1\n        BLT s9, s21, blk\n        HALT\n";
        let (d, mut m, row) = program(blocks);
        m.regs.s[3] = 64;
        m.regs.s[20] = 10;
        m.regs.s[21] = 6;
        m.regs.s[8] = 3;
        m.regs.s[9] = 1;
        // Rows: 4 x 19 = 76; blocks: 5 left, each S.MOV, 76, S.ADD, BLT: 79.
        assert_eq!(
            branch_loop_left(&mut Shapes::new(&d), row, &m),
            Some(5 * 79)
        );
        // Whatever the registers hold, a count and never an overflow.
        m.regs.s[8] = i64::MIN as u64;
        m.regs.s[20] = i64::MAX as u64;
        m.regs.s[9] = 0;
        m.regs.s[21] = u64::MAX;
        m.regs.s[3] = u64::MAX;
        m.retired = 1000;
        assert_eq!(
            branch_loop_left(&mut Shapes::new(&d), row, &m),
            Some(u64::MAX)
        );
        assert!(
            known_ahead(&mut Shapes::new(&d), 8 * row as u64, &m, 1e6)
                .is_some_and(|t| t > Instant::now() + Duration::from_secs(60))
        );
    }

    /// The measured end: a row loop that took 1 ms for 8 elements since the mark, with
    /// 1,000 elements left, goes on for about 125 ms more; none once the loop is another (a
    /// new trip count) or has not moved.
    #[test]
    fn a_running_loop_measures_what_it_has_left() {
        let p = lanejit_interp::asm::assemble("        HALT\n", "t.s").expect("assembles");
        let mut m = Machine::new(&p, Config::for_program(&p, Some(8))).expect("machine");
        m.regs.trip = 1_080;
        m.regs.lc0base = 72;
        let mark = Progress {
            at: Instant::now() - Duration::from_millis(1),
            ..Progress::of(&m)
        };
        assert!(mark.ahead(&m).is_none(), "no progress yet");
        m.regs.lc0base = 80;
        let t = mark.ahead(&m).expect("measured");
        let ms = t.duration_since(Instant::now()).as_secs_f64() * 1e3;
        // 125 ms for the millisecond the mark is old, more if the test is slow to get here.
        assert!((120.0..=1_000.0).contains(&ms), "{ms}");
        m.regs.trip = 2_000;
        assert!(mark.ahead(&m).is_none(), "another loop");
        let began = Instant::now() - Duration::from_millis(1);
        assert_eq!(later(None, Some(t)), Some(t));
        assert_eq!(later(Some(began), Some(t)), Some(t));
    }

    /// A counted branch loop measured on its counter: 10 iterations in the millisecond since
    /// the mark, 90 left, about 9 ms more; none when the counter has not moved forward since
    /// the mark, or outside such a loop.
    #[test]
    fn a_branch_loop_measures_what_it_has_left_on_its_counter() {
        let src = "        V.LANEID v9\n        S.MOV s7, s0\n        S.LI s8, 3200\n\
                   top:    V.ADD v1, v9, s7\n        V.LW [s1 + (v1 << 2)], ->v2\n        \
                   V.SW v2, [s2 + (v1 << 2)]\n        S.ADD s7, s7, 32\n        \
                   BLT s7, s8, top\n        HALT\n";
        let p = lanejit_interp::asm::assemble(src, "branch.s").expect("assembles");
        let d = Decoded::new(&p.code);
        let mut m = Machine::new(&p, Config::for_program(&p, Some(32))).expect("machine");
        let top = (0..d.len())
            .find_map(|i| d.inst(i).and_then(|x| x.cond_branch()))
            .map(|(br, _)| u64::from(br.target.0) * 8)
            .expect("the loop's branch");
        m.regs.s[8] = 3200;
        let mark = Progress {
            at: Instant::now() - Duration::from_millis(1),
            ..Progress::of(&m)
        };
        assert!(
            mark.branch_ahead(&mut Shapes::new(&d), top, &m).is_none(),
            "no iteration yet"
        );
        m.regs.s[7] = 320;
        let t = mark
            .branch_ahead(&mut Shapes::new(&d), top, &m)
            .expect("measured");
        let ms = t.duration_since(Instant::now()).as_secs_f64() * 1e3;
        // 9 ms for the millisecond the mark is old, more if the test is slow to get here.
        assert!((8.5..=100.0).contains(&ms), "{ms}");
        let later_mark = Progress {
            at: Instant::now() - Duration::from_millis(1),
            ..Progress::of(&m)
        };
        m.regs.s[7] = 0;
        assert!(
            later_mark
                .branch_ahead(&mut Shapes::new(&d), top, &m)
                .is_none(),
            "counter went back"
        );
        assert!(
            mark.branch_ahead(&mut Shapes::new(&d), 0, &m).is_none(),
            "no loop around the first instruction"
        );
        // Counting down by one, with any register values: never an overflow.
        let down = "top:    V.ADD v1, v1, 1\n        S.SUB s4, s4, 1\n        BNE s4, 0, top\n\
                    HALT\n";
        let p = lanejit_interp::asm::assemble(down, "down.s").expect("assembles");
        let d = Decoded::new(&p.code);
        let mut m = Machine::new(&p, Config::for_program(&p, Some(32))).expect("machine");
        // Moved by i64::MIN (wrapping) to a counter with 5 iterations left.
        m.regs.s[4] = (i64::MIN as u64).wrapping_add(5);
        let mark = Progress {
            at: Instant::now() - Duration::from_millis(1),
            ..Progress::of(&m)
        };
        m.regs.s[4] = 5;
        assert!(
            mark.branch_ahead(&mut Shapes::new(&d), 0, &m).is_none(),
            "i64::MIN / -1"
        );
        m.regs.s[4] = 90;
        let mark = Progress {
            at: Instant::now() - Duration::from_millis(1),
            ..Progress::of(&m)
        };
        m.regs.s[4] = 80;
        assert!(
            mark.branch_ahead(&mut Shapes::new(&d), 0, &m).is_some(),
            "10 iterations down, 80 left"
        );
    }

    /// The rate since a mark is the stretch's own, not the run's: a run that retired
    /// 1,000,000 instructions in its first millisecond (compiled code) and 1,000 in the
    /// stretch since the mark runs at about what that stretch took; within `MARK_SPAN` of the
    /// mark, or with nothing retired since, there is no measure yet.
    #[test]
    fn the_rate_since_the_mark_is_the_interpreted_stretch() {
        let p = lanejit_interp::asm::assemble("        HALT\n", "t.s").expect("assembles");
        let mut m = Machine::new(&p, Config::for_program(&p, Some(8))).expect("machine");
        m.retired = 1_000_000;
        let mark = Progress::of(&m);
        assert_eq!(mark.rate(&m), None, "nothing retired since the mark");
        m.retired += 1_000;
        let young = Progress {
            at: Instant::now(),
            ..mark
        };
        assert_eq!(young.rate(&m), None, "too recent a mark");
        let old = Progress {
            at: Instant::now() - Duration::from_millis(1),
            ..mark
        };
        let rate = old.rate(&m).expect("a rate");
        // 1,000 in a millisecond or more, not the run's 1,001,000 in its time.
        assert!((1_000.0..=1_000_000.0).contains(&rate), "{rate}");
        let run = run_rate(&m, Instant::now() - Duration::from_millis(2)).expect("a rate");
        assert!(run > 10.0 * rate, "{run} vs {rate}");
    }

    /// A run's looks reuse one `Shapes`, which fills in as scans reach new instructions:
    /// every look at every slice of the bench and example kernels (their loops, nests and
    /// straight code) gives what a look from a fresh one gives, at VL 8 and 32.
    #[test]
    fn looks_through_one_shapes_agree_with_fresh_ones() {
        let mut files: Vec<std::path::PathBuf> = Vec::new();
        for dir in ["seeds/kernels", "seeds/kernels/bench"] {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
            for e in std::fs::read_dir(&dir).expect("kernels") {
                let path = e.expect("entry").path();
                if path.extension().is_some_and(|x| x == "s") {
                    files.push(path);
                }
            }
        }
        files.sort();
        assert!(files.len() >= 20, "{files:?}");
        let mut looked = 0;
        for path in &files {
            let src = std::fs::read_to_string(path).expect("reads");
            let name = path.display().to_string();
            let p = lanejit_interp::asm::assemble(&src, &name).expect("assembles");
            let d = Decoded::new(&p.code);
            for vl in [8, 32] {
                let mut m = Machine::new(&p, Config::for_program(&p, Some(vl))).expect("machine");
                let mut shapes = Shapes::new(&d);
                for _ in 0..200 {
                    m.config.max_instructions = Some(m.retired + 37);
                    let e = lanejit_interp::interp::run(&mut m, &d);
                    let kept = loops_left(&mut shapes, m.pc, &m);
                    let fresh = loops_left(&mut Shapes::new(&d), m.pc, &m);
                    assert_eq!(kept, fresh, "{name} VL {vl} at {:#x}", m.pc);
                    looked += usize::from(kept.is_some());
                    if e != lanejit_interp::machine::Exit::Limit {
                        break;
                    }
                }
            }
        }
        assert!(looked > 100, "{looked} looks saw a loop");
    }
}
