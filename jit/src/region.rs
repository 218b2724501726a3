//! Region discovery: which guest instructions one compiled function covers.
//!
//! A region is a straight run of lowerable instructions starting at some pc. It ends with (and
//! includes) a control instruction — `J`, `Bxx`, `ENDLOOP`, or a `LOOP` that is not the first
//! instruction — or just before an instruction the JIT declines (`HALT`, an undecodable word,
//! the end of the code), or after [`MAX_REGION_LEN`] instructions. A `LOOP` as first
//! instruction is a prologue: the run continues into its body. When the final control
//! instruction's taken target is the region start (or, after a `LOOP` prologue, the first body
//! instruction), the region is a loop and its back edge is compiled natively. Such an
//! `ENDLOOP` loop (entered at its `LOOP`, or at straight instructions before it) that a
//! straight epilogue after its `ENDLOOP` closes with a branch back to the region's start is
//! a *loop nest*, one region with both loops ([`Region::body`], [`discover_for`]); so is a
//! branch loop inside the body of an `ENDLOOP` loop entered at that body's start.
//!
//! A run that ends in a `J` or `Bxx` not returning to its start may still be a loop: the
//! runs after that branch (and after later ones) that lead back to the start make one
//! *trace* ([`trace`], [`Region::trace`]), a branch loop whose other branch edges leave the
//! region (side exits, `Tx::side_exit`): a loop with its test at the top, an `if` in its body,
//! an early exit.
//!
//! A nest is entered at its start from its first row on: a straight run that reaches the
//! start of a nest (a kernel's set-up before its rows' label) stops there ([`discover`]), so
//! no row runs in the inner loop's region alone; an entry there knows the count of the nest's
//! `LOOP` when its prologue sets it with `S.LI` ([`prologue_tail`]); a tiered run whose inner
//! loop gets hot first asks for the nest that holds it ([`nest_around`]) when that compiles
//! about as fast. `lanejit run --engine jit` on the bench and example kernels compiles 87
//! functions where it compiled 154 (with the filling of guest memory's page tables before a
//! compile, `vm`): per program, spmv_csr 9 -> 2, matmul256 15 -> 8, the 5-point stencils
//! 7 -> 2, their total compile time 42-50 -> 24-39 ms, 25-31 -> 17-21 ms and 12-21 -> 7-11
//! ms (`lanejit bench --compile-latency`, three runs of each build, a noisy host).

use lanejit_interp::interp::DecodedCode;
use lanejit_interp::isa::{Inst, Sem};

/// Longest run compiled as one region.
pub const MAX_REGION_LEN: usize = 256;

/// The program's code as the JIT reads it: the interpreter's decoding
/// ([`lanejit_interp::interp::DecodedCode`], shared, not copied or decoded again), looked up by pc.
#[derive(Debug, Clone)]
pub struct Code {
    program: DecodedCode,
}

impl Code {
    /// The code of `program`.
    pub fn of(program: &DecodedCode) -> Code {
        Code {
            program: program.clone(),
        }
    }

    /// The instruction at `pc`, if `pc` is a word boundary inside the code that decodes.
    pub fn at(&self, pc: u64) -> Option<&Inst> {
        if pc % 8 != 0 {
            return None;
        }
        self.program.inst(usize::try_from(pc / 8).ok()?)
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.program.len()
    }

    /// Whether there is no code.
    pub fn is_empty(&self) -> bool {
        self.program.is_empty()
    }

    /// The program's raw words (the disk cache's key, `Jit::disk_prefix`).
    pub fn words(&self) -> &[u64] {
        self.program.words()
    }
}

/// How a region's run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// The last instruction is a control instruction (it is translated).
    Control,
    /// The next instruction is declined (or missing): the interpreter executes it.
    Decline,
    /// The length cap was reached, or the run stops before a nest's `LOOP` ([`discover`]):
    /// dispatch continues at `end_pc`.
    MaxLen,
    /// A `LOOP` alone ([`loop_alone`]): dispatch continues at its body, `end_pc`.
    Body,
}

/// One region.
#[derive(Clone, Debug)]
pub struct Region {
    /// pc of the first instruction.
    pub start: u64,
    /// The instructions with their pcs, in order.
    pub insts: Vec<(u64, Inst)>,
    /// pc after the last instruction (for a trace, after its highest one: `start..end_pc`
    /// spans the body the `--regions` listing shows).
    pub end_pc: u64,
    /// How the run ends.
    pub end: RunEnd,
    /// Index in `insts` the back edge returns to, for a loop region.
    pub loop_head: Option<usize>,
    /// For a loop nest ([`Region::body`]): index in `insts` of the first instruction after
    /// the inner loop's `ENDLOOP`, where the outer loop's epilogue starts.
    pub outer: Option<usize>,
    /// A *trace* ([`trace`]): a branch loop whose `J`s and `Bxx`s before its last
    /// instruction each go on to the next instruction of `insts` on one edge (not the next
    /// pc, for a taken one) and leave the region on the other (a side exit).
    pub trace: bool,
}

impl Region {
    /// The loop body: the instructions from the loop head to the inner `ENDLOOP` or closing
    /// branch (all of them past the head for a loop that is not a nest).
    ///
    /// A *nest* is an `ENDLOOP` loop inside a loop closed by a branch: `insts` are the
    /// outer prologue (straight instructions, then the `LOOP`), the body up to its
    /// `ENDLOOP`, and the outer epilogue (straight instructions, then a `J` or `Bxx` whose
    /// taken target is `start`). Or a branch loop inside an `ENDLOOP` loop's body: the
    /// prologue is the body's straight start, the inner body runs to the branch, and the
    /// epilogue ends with the `ENDLOOP` returning to `start`. Its code keeps the registers
    /// in variables from one outer iteration to the next instead of leaving the region
    /// after every inner loop.
    pub fn body(&self) -> &[(u64, Inst)] {
        let h = self.loop_head.unwrap_or(0);
        &self.insts[h..self.outer.unwrap_or(self.insts.len())]
    }
}

/// Whether `inst` ends a run.
pub fn is_control(inst: &Inst) -> bool {
    matches!(
        inst.opcode().sem(),
        Sem::Branch(_)
            | Sem::Ctl(
                lanejit_interp::isa::Ctl::Jump
                    | lanejit_interp::isa::Ctl::Loop
                    | lanejit_interp::isa::Ctl::EndLoop
            )
    )
}

/// Whether the JIT translates `inst` (everything but `HALT`).
pub fn lowerable(inst: &Inst) -> bool {
    !matches!(inst, Inst::Halt(_))
}

/// The taken target pc of a control instruction (`LOOP`: none here).
fn taken_target(inst: &Inst) -> Option<u64> {
    match inst {
        Inst::J(j) => Some(j.target.pc()),
        Inst::Beq(b)
        | Inst::Bne(b)
        | Inst::Blt(b)
        | Inst::Bge(b)
        | Inst::Bltu(b)
        | Inst::Bgeu(b) => Some(b.target.pc()),
        Inst::Endloop(e) => Some(e.body.pc()),
        _ => None,
    }
}

/// Whether a loop region whose first instruction is `first`, entered with registers `regs`
/// on a machine of `vl` lanes, may run an iteration under a partial mask on this entry: a
/// leading `LOOP` whose trip count is not a multiple of VL (a tail ahead); for a region
/// entered elsewhere (an `ENDLOOP` loop's body, a branch loop), a partial mask now, or
/// iterations left (from LC0BASE to the latched trip count) that are not a multiple of VL.
/// The JIT compiles such iterations into a loop's own function only then
/// (`translate::TxConfig::tail`); a wrong guess costs speed, never correctness, and a loop
/// that keeps leaving for them is compiled again with them (`LAZY_TAIL_EXITS`).
pub fn tail_expected(first: Option<&Inst>, regs: &lanejit_interp::machine::Regs, vl: u32) -> bool {
    let vl = vl.max(1);
    match first {
        Some(Inst::Loop(l)) => regs.s[l.sa.0 as usize] % u64::from(vl) != 0,
        _ => {
            regs.mask != lanejit_interp::machine::all_lanes(vl)
                || regs.trip.wrapping_sub(regs.lc0base) % u64::from(vl) != 0
        }
    }
}

/// [`tail_expected`] for a region at `pc` that reaches its `LOOP` through a prologue (a loop
/// nest's rows: set-up, then the `LOOP`), where the registers at the entry do not say how
/// many iterations the `LOOP` will count: from the last write to its count register in the
/// prologue, a `S.LI` of a constant (what `LOOP` will latch), any other write (unknown: a
/// tail expected), or none (the register's value at the entry). `None` when the region's run
/// from `pc` does not end in a `LOOP` after other instructions.
pub fn prologue_tail(
    code: &Code,
    pc: u64,
    regs: &lanejit_interp::machine::Regs,
    vl: u32,
) -> Option<bool> {
    let r = discover_run(code, pc, false)?;
    let (last, prologue) = r.insts.split_last()?;
    let Inst::Loop(l) = last.1 else {
        return None;
    };
    if prologue.is_empty() {
        return None;
    }
    let vl = u64::from(vl.max(1));
    let sa = l.sa.0;
    let written = prologue
        .iter()
        .rev()
        .find(|(_, i)| i.effects().writes_s & (1 << sa) != 0);
    Some(match written {
        None => regs.s[sa as usize] % vl != 0,
        Some((_, Inst::SLi(li))) => li.imm % vl != 0,
        Some(_) => true,
    })
}

/// Which vector registers' lanes step by exactly 1, 2, 4 or 8 in `regs` (lane `i` equal to
/// lane 0 plus `i * step`, 64-bit wrapping): bit `4 * r + log2(step)` for register `r`. Every
/// bit at VL 1 (any step fits one lane). What a lane-index vector built before a loop looks
/// like; the translator gives only such registers the entry test for contiguous lanes.
pub fn lane_steps(regs: &lanejit_interp::machine::Regs, vl: u32) -> u128 {
    let vl = vl as usize;
    if vl < 2 {
        return u128::MAX;
    }
    let mut bits = 0u128;
    for (r, v) in regs.v.iter().enumerate() {
        let lanes = &v[..vl];
        let d = lanes[1].wrapping_sub(lanes[0]);
        if !matches!(d, 1 | 2 | 4 | 8) {
            continue;
        }
        let stepped = lanes
            .iter()
            .enumerate()
            .all(|(i, &x)| x.wrapping_sub(lanes[0]) == (i as u64).wrapping_mul(d));
        if stepped {
            bits |= 1 << (4 * r as u32 + d.trailing_zeros());
        }
    }
    bits
}

/// Most bytes between two lanes' EAs that a strided alternative of a gather or scatter
/// takes as its constant stride ([`lane_strides`]): every lane's offset from lane 0 is then
/// an `i32` at any VL.
pub const MAX_LANE_STRIDE: i64 = 1 << 20;

/// The constant lane step of every vector register in `regs` (lane `i` equal to lane 0
/// plus `i * step`, 64-bit wrapping), 0 where the lanes do not step so, where the step is 0
/// or larger than [`MAX_LANE_STRIDE`], and at VL 1. What an offset vector built before a
/// loop looks like when the loop walks a column or an array of records with a pitch it
/// reads from a register (tile_stage's `V.MUL v2, v1, s12` with `s12 = 4N`): the translator
/// gives gathers and scatters through such a register, read-only in the loop, a strided
/// alternative behind a loop-entry test of the same step (`Tx::ro_offsets`).
pub fn lane_strides(regs: &lanejit_interp::machine::Regs, vl: u32) -> [i32; 32] {
    let mut out = [0i32; 32];
    let vl = vl as usize;
    if vl < 2 {
        return out;
    }
    for (r, v) in regs.v.iter().enumerate() {
        let lanes = &v[..vl];
        let d = lanes[1].wrapping_sub(lanes[0]) as i64;
        if d == 0 || d.unsigned_abs() > MAX_LANE_STRIDE as u64 {
            continue;
        }
        let stepped = lanes
            .iter()
            .enumerate()
            .all(|(i, &x)| x.wrapping_sub(lanes[0]) == (i as u64).wrapping_mul(d as u64));
        if stepped {
            out[r] = d as i32;
        }
    }
    out
}

/// What the entry that made a region compile showed ([`Hints::seen`]): its scalar registers
/// and the constant lane step of each vector register ([`lane_strides`]). A loop's
/// analysis speculates on them (`translate::analysis::Stepped`, `speculate_bases`); `None`
/// where it must not (no entry known, or a speculation failed before).
#[derive(Clone, Copy, Debug)]
pub struct Seen {
    /// The scalar registers.
    pub sregs: [u64; 32],
    /// The lane step of every vector register (0: none).
    pub strides: [i32; 32],
}

impl Seen {
    /// What an entry showed, `None` without its scalar registers.
    pub fn of(sregs: Option<[u64; 32]>, strides: [i32; 32]) -> Option<Seen> {
        sregs.map(|sregs| Seen { sregs, strides })
    }
}

/// What the entry that makes a region compile says about the code it needs: hints with
/// which the translator leaves out code that entry would not run. A wrong hint costs speed
/// (a lazy tail, a missed contiguous access), never correctness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hints {
    /// A loop's partial-mask iterations compiled into its function ([`tail_expected`],
    /// `translate::TxConfig::tail`).
    pub tail: bool,
    /// A loop's masked tail keeps its loads in program order (`translate::TxConfig::
    /// ordered_tail`): set when a loop compiled without it kept leaving its tail for the
    /// straight form of its body (`Jit`'s lazy-tail exits).
    pub ordered_tail: bool,
    /// Registers that get the loop-entry test for contiguous lanes ([`lane_steps`],
    /// `translate::TxConfig::steps`).
    pub steps: u128,
    /// The constant lane step of every vector register at the entry ([`lane_strides`]; 0:
    /// none): gathers and scatters through a read-only register that stepped so, other than
    /// by one element, get a strided alternative behind a loop-entry test
    /// (`translate::TxConfig::strides`).
    pub strides: [i32; 32],
    /// The scalar registers at the entry, from which the translator takes the distances
    /// between the base registers of a loop's strided loads (`translate::TxConfig::sregs`:
    /// the fields of one array of structs through four registers), checked at every loop
    /// entry. `None`: no such speculation (also after it failed, see `Jit`'s lazy exits).
    pub sregs: Option<[u64; 32]>,
}

impl Hints {
    /// What the entry showed, for the translator's speculation: `None` without its scalar
    /// registers.
    pub fn seen(&self) -> Option<Seen> {
        Seen::of(self.sregs, self.strides)
    }

    /// No entry known: tails compiled in, every register tested.
    pub const ALL: Hints = Hints {
        tail: true,
        ordered_tail: false,
        steps: u128::MAX,
        strides: [0; 32],
        sregs: None,
    };

    /// The hints of an entry at `pc` of `code` with registers `regs`: [`Hints::of`] its first
    /// instruction, the tail hint of a `LOOP` reached through a prologue from that prologue
    /// ([`prologue_tail`]).
    pub fn at(code: &Code, pc: u64, regs: &lanejit_interp::machine::Regs, vl: u32) -> Hints {
        let mut h = Hints::of(code.at(pc), regs, vl);
        if let Some(tail) = prologue_tail(code, pc, regs, vl) {
            h.tail = tail;
        }
        h
    }

    /// The hints of an entry at `first` with registers `regs`.
    pub fn of(first: Option<&Inst>, regs: &lanejit_interp::machine::Regs, vl: u32) -> Hints {
        Hints {
            tail: tail_expected(first, regs, vl),
            ordered_tail: false,
            steps: lane_steps(regs, vl),
            strides: lane_strides(regs, vl),
            sregs: Some(regs.s),
        }
    }
}

/// The `LOOP` at `pc` as a region of its own, which goes on to its body's region: what the JIT
/// compiles at a `LOOP` whose body has a compiled loop region already (a loop entered first
/// from straight-line code, whose run included the `LOOP`, then again by an outer loop's
/// branch to the `LOOP`), so the loop is compiled once, not once more with the `LOOP` as its
/// prologue. `None` when there is no `LOOP` at `pc`.
pub fn loop_alone(code: &Code, pc: u64) -> Option<Region> {
    let inst = *code.at(pc)?;
    if !matches!(inst, Inst::Loop(_)) {
        return None;
    }
    Some(Region {
        start: pc,
        insts: vec![(pc, inst)],
        end_pc: pc + 8 * inst.opcode().words() as u64,
        end: RunEnd::Body,
        loop_head: None,
        outer: None,
        trace: false,
    })
}

/// The region starting at `pc`, or `None` when its first instruction is declined. With
/// `straight`, a loop's back edge is left as an ordinary exit (one iteration per call).
/// Without, a loop nest whose outer branch returns to `pc` is one region ([`Region::body`]).
pub fn discover(code: &Code, pc: u64, straight: bool) -> Option<Region> {
    let mut r = discover_run(code, pc, straight)?;
    if straight {
        return Some(r);
    }
    if let Some(n) = nest(code, &r).or_else(|| branch_nest(code, &r)) {
        return Some(n);
    }
    if let Some(t) = trace(code, &r) {
        return Some(t);
    }
    // A run that ends in the `LOOP` starting a nest of its own (a kernel's set-up, then the
    // rows' loop at a label the outer loop branches back to) stops before it, so that the
    // first row enters the nest too, not the inner loop's region (whose rows shorter than
    // VL all left for its lazy tail: about 15% of a 32 x 32 stencil's run).
    // So does a run that passes through the start of a nest whose prologue leads to that
    // `LOOP` (set-up, then the rows' label, a row's set-up and its `LOOP`: a matrix product's
    // rows, each loading its broadcasts before the column loop): the first row's inner loop
    // ran as a region of its own (matmul256 on `--engine jit`: its column loop, 35
    // instructions, compiled a second time, 6-10 ms).
    if let (true, Some((_, Inst::Loop(_)))) = (r.insts.len() > 1, r.insts.last()) {
        // Where the nest would start: the taken target of the branch closing the epilogue
        // after the loop's `ENDLOOP` (checked by `nest` itself).
        let (_, body_end, _) = run(code, r.end_pc, MAX_REGION_LEN);
        let t = closing_target(code, body_end);
        let i = t.and_then(|t| r.insts.iter().skip(1).position(|&(p, _)| p == t));
        if let (RunEnd::Control, Some(i)) = (r.end, i.map(|i| i + 1)) {
            let at = r.insts[i].0;
            if discover_run(code, at, false).is_some_and(|l| nest(code, &l).is_some()) {
                r.insts.truncate(i);
                r.end_pc = at;
                r.end = RunEnd::MaxLen;
            }
        }
    }
    Some(r)
}

/// [`discover`] for a machine of `vl` lanes: a loop nest only where its code is compiled in
/// the register form (`translate::plan`), else the inner loop's region alone (a nest's
/// gain is keeping registers in variables across outer iterations).
pub fn discover_for(code: &Code, pc: u64, straight: bool, vl: u32) -> Option<Region> {
    let r = discover(code, pc, straight)?;
    if r.outer.is_some()
        && crate::translate::plan::choose(&r, vl, None) != crate::translate::plan::Plan::Registers
    {
        return discover_run(code, pc, straight);
    }
    Some(r)
}

/// Estimated IR instructions a loop nest may add to its inner loop's and still be compiled
/// in its place ([`nest_around`]): about half a millisecond of optimised compile.
const NEST_SLACK_IR: usize = 256;

/// The start of the loop nest, compiled as one region ([`discover_for`] at `vl` lanes), whose
/// inner loop starts at `pc`: `pc` is the first instruction of an `ENDLOOP` loop's body
/// whose epilogue branches back to the nest's start, or the head of a branch loop inside an
/// `ENDLOOP` loop's body. What a tiered run compiles when the inner loop gets hot, instead
/// of the inner loop alone: every later row enters the nest, and the inner loop is not
/// compiled twice. `None` when there is no such nest.
pub fn nest_around(code: &Code, pc: u64, vl: u32) -> Option<u64> {
    let r = discover_run(code, pc, false)?;
    if r.loop_head != Some(0) || r.end != RunEnd::Control {
        return None;
    }
    // The control instruction closing the outer loop after the inner one: a branch back to
    // the nest's start, or the `ENDLOOP` whose body starts there.
    let q = closing_target(code, r.end_pc)?;
    if q >= pc {
        return None;
    }
    let n = discover_for(code, q, false, vl)?;
    let h = n.loop_head?;
    if n.outer.is_none() || n.insts.get(h).is_none_or(|&(p, _)| p != pc) {
        return None;
    }
    // Only a nest that compiles about as fast as its inner loop (estimated IR at most 1.3
    // times its inner loop's, or [`NEST_SLACK_IR`] more): until its code arrives the run
    // interprets, where it would have run the inner loop's code. A 5-point stencil's nest
    // (its inner loop, a `LOOP` and four scalar instructions: 1.04 times the IR) came
    // 1.2-1.4x faster (tiered at 16 MiB); tile_stage's column nest (1.16 times) alike either
    // way. A matrix product's, whose rows load 16 broadcasts (1.25 times), and SpMV's row
    // nest (1.27 times) were not redirected at 1.2 times: the product's came 1.3x slower when
    // a loop's first code was its optimised register form. With quick baselines (the
    // product's nest strip-mined) both gain (tiered / jit steady state, `lanejit bench
    // --engine jit,tiered`, 1.2 -> 1.3): spmv_csr at 64 MiB 0.49-0.50 -> 0.75 in two runs
    // each, matmul256 at N = 512 (`--set N=512`, tiered ms) 25.8-29.4 -> 16.1-22.4; at
    // 16 MiB and for the other kernels within the noise.
    use crate::translate::plan::estimate;
    let est = |r: &Region| estimate(r, vl, false, None);
    let inner = est(&r);
    (est(&n).saturating_sub(inner) <= (inner * 3 / 10).max(NEST_SLACK_IR)).then_some(q)
}

/// The taken target of the control instruction that ends the straight run from `pc` (the
/// epilogue after a loop, closed by the outer loop's branch or `ENDLOOP`), if it ends in one.
fn closing_target(code: &Code, pc: u64) -> Option<u64> {
    match run(code, pc, MAX_REGION_LEN) {
        (epi, _, RunEnd::Control) => taken_target(&epi.last()?.1),
        _ => None,
    }
}

/// The straight run from `pc` up to its `end`, and whether it ends in a control instruction.
fn run(code: &Code, pc: u64, max: usize) -> (Vec<(u64, Inst)>, u64, RunEnd) {
    let mut insts = Vec::new();
    let mut at = pc;
    let end = loop {
        if insts.len() >= max {
            break RunEnd::MaxLen;
        }
        let Some(inst) = code.at(at) else {
            break RunEnd::Decline;
        };
        if !lowerable(inst) {
            break RunEnd::Decline;
        }
        insts.push((at, *inst));
        at += 8 * inst.opcode().words() as u64;
        if is_control(inst) && !(insts.len() == 1 && matches!(inst, Inst::Loop(_))) {
            break RunEnd::Control;
        }
    };
    (insts, at, end)
}

/// The loop nest `r` (a region from [`discover_run`]) starts, if any: `r` is an `ENDLOOP`
/// loop entered at its `LOOP`, or a straight run ending in a `LOOP` whose body closes with
/// its `ENDLOOP`; after the `ENDLOOP` a straight epilogue ends in a `J` or `Bxx` whose taken
/// target is `r.start`; all of it within [`MAX_REGION_LEN`] instructions.
fn nest(code: &Code, r: &Region) -> Option<Region> {
    let mut insts = r.insts.clone();
    let h = match (r.loop_head, &insts.last()?.1) {
        (Some(1), Inst::Endloop(_)) => 1,
        (None, Inst::Loop(_)) if r.end == RunEnd::Control && insts.len() > 1 => {
            // The LOOP closing the run becomes the prologue's last instruction: its body
            // must end in the ENDLOOP returning to it.
            let body_pc = r.end_pc;
            let (body, _, end) = run(code, body_pc, MAX_REGION_LEN - insts.len());
            match body.last() {
                Some((_, Inst::Endloop(e)))
                    if end == RunEnd::Control
                        && e.body.pc() == body_pc
                        && body.len() > 1
                        && only_last_controls(&body) =>
                {
                    insts.extend(body);
                }
                _ => return None,
            }
            r.insts.len()
        }
        _ => return None,
    };
    let outer = insts.len();
    let epi_pc = insts.last()?.0 + 8;
    let (epi, end_pc, end) = run(code, epi_pc, MAX_REGION_LEN.checked_sub(outer)?);
    let closes = end == RunEnd::Control
        && only_last_controls(&epi)
        && epi
            .last()
            .is_some_and(|(_, i)| is_branch(i) && taken_target(i) == Some(r.start));
    if !closes {
        return None;
    }
    Some(nested(r.start, insts, epi, (end_pc, end), h))
}

/// The nest starting at `start` made of `insts` (prologue and inner loop, its head at `h`)
/// and the epilogue `epi`, whose run ended at `end_pc` with `end`.
fn nested(
    start: u64,
    mut insts: Vec<(u64, Inst)>,
    epi: Vec<(u64, Inst)>,
    (end_pc, end): (u64, RunEnd),
    h: usize,
) -> Region {
    let outer = insts.len();
    insts.extend(epi);
    Region {
        start,
        insts,
        end_pc,
        end,
        loop_head: Some(h),
        outer: Some(outer),
        trace: false,
    }
}

/// Whether `inst` is a `J` or a `Bxx`.
fn is_branch(inst: &Inst) -> bool {
    matches!(
        inst.opcode().sem(),
        Sem::Branch(_) | Sem::Ctl(lanejit_interp::isa::Ctl::Jump)
    )
}

/// The loop nest of the other shape, if `r` (from [`discover_run`]) starts one: a branch
/// loop (a `J` or `Bxx` back to an instruction of `r` after its first) inside a hardware
/// loop's body entered at its first instruction, the straight instructions after the branch
/// closed by the `ENDLOOP` returning to `r.start` (SpMV's row loop around its `nz:` loop).
fn branch_nest(code: &Code, r: &Region) -> Option<Region> {
    let (_, last) = r.insts.last()?;
    if r.end != RunEnd::Control || !is_branch(last) {
        return None;
    }
    let t = taken_target(last)?;
    let h = r
        .insts
        .iter()
        .position(|&(p, _)| p == t)
        .filter(|&h| h >= 1)?;
    let outer = r.insts.len();
    let (epi, end_pc, end) = run(code, r.end_pc, MAX_REGION_LEN.checked_sub(outer)?);
    let closes = end == RunEnd::Control
        && only_last_controls(&epi)
        && matches!(epi.last(), Some((_, Inst::Endloop(e))) if e.body.pc() == r.start);
    if !closes || matches!(r.insts[0].1, Inst::Loop(_)) {
        return None;
    }
    Some(nested(r.start, r.insts.clone(), epi, (end_pc, end), h))
}

/// Whether no instruction of `run` but its last is a control instruction (a run may start
/// with a `LOOP`).
fn only_last_controls(run: &[(u64, Inst)]) -> bool {
    let n = run.len().saturating_sub(1);
    !run[..n].iter().any(|(_, i)| is_control(i))
}

/// [`discover`] without loop nests.
fn discover_run(code: &Code, pc: u64, straight: bool) -> Option<Region> {
    let (insts, at, end) = run(code, pc, MAX_REGION_LEN);
    if insts.is_empty() {
        return None;
    }
    let mut loop_head = None;
    if end == RunEnd::Control && !straight {
        if let Some(t) = taken_target(&insts.last().expect("non-empty").1) {
            if t == pc {
                loop_head = Some(0);
            } else if matches!(insts[0].1, Inst::Loop(_)) && t == pc + 8 && insts.len() > 1 {
                loop_head = Some(1);
            }
        }
    }
    Some(Region {
        start: pc,
        insts,
        end_pc: at,
        end,
        loop_head,
        outer: None,
        trace: false,
    })
}

/// Most side exits of a [`trace`].
const MAX_TRACE_EXITS: usize = 4;

/// The loop through `r.start` that `r` (a straight run ending in a `J` or `Bxx` that does
/// not return to its start) begins, as one region: the runs after that branch and after
/// each later one (its fall-through first, then its taken target; at most
/// [`MAX_TRACE_EXITS`] conditional branches on the way, no `LOOP` or `ENDLOOP`, no pc
/// twice, [`MAX_REGION_LEN`] instructions in all) up to a `J` or `Bxx` that goes back to
/// `r.start` on its taken edge or its fall-through. A loop whose test is at its top (`top:
/// BGE s3, s9, done; ...; J top`, the region starting after the test) or whose body holds an
/// `if` (a group's mask set when fewer than VL elements are left, `top: BGE s3, s9, full;
/// ...; full: ...; BLT s0, s3, top`) or an early exit (a search) ran as two or three
/// regions chained at every iteration, each loading and storing the registers it uses:
/// saxpy strip-mined by hand in the second form ran 5x slower than as an `ENDLOOP` loop.
fn trace(code: &Code, r: &Region) -> Option<Region> {
    if r.loop_head.is_some() || r.outer.is_some() || r.end != RunEnd::Control {
        return None;
    }
    let mut insts = r.insts.clone();
    if insts
        .iter()
        .any(|(_, i)| matches!(i, Inst::Loop(_) | Inst::Endloop(_)))
    {
        return None;
    }
    if !extend_trace(code, r.start, &mut insts, MAX_TRACE_EXITS) {
        return None;
    }
    let end_pc = insts
        .iter()
        .map(|&(pc, i)| pc + 8 * i.opcode().words() as u64)
        .max()?;
    Some(Region {
        start: r.start,
        insts,
        end_pc,
        end: RunEnd::Control,
        loop_head: Some(0),
        outer: None,
        trace: true,
    })
}

/// Whether `insts` (a run ending in a control instruction) can be extended into a loop
/// through `start` (see [`trace`]), with at most `exits` more conditional branches; extended
/// if so.
fn extend_trace(code: &Code, start: u64, insts: &mut Vec<(u64, Inst)>, exits: usize) -> bool {
    let Some(&(pc, last)) = insts.last() else {
        return false;
    };
    let next = pc + 8;
    // The run's continuations: a `J`'s target; a `Bxx`'s fall-through, then its taken target.
    let (successors, exits) = match last {
        Inst::J(j) if j.target.pc() == start => return true,
        Inst::J(j) => ([Some(j.target.pc()), None], exits),
        _ if is_branch(&last) => {
            let t = taken_target(&last).expect("a branch");
            if t == start || next == start {
                return true;
            }
            if exits == 0 {
                return false;
            }
            ([Some(next), (t != next).then_some(t)], exits - 1)
        }
        _ => return false,
    };
    for at in successors.into_iter().flatten() {
        let (more, _, end) = run(code, at, MAX_REGION_LEN.saturating_sub(insts.len()));
        let fresh = more.iter().all(|(p, i)| {
            *p != start
                && !matches!(i, Inst::Loop(_) | Inst::Endloop(_))
                && !insts.iter().any(|(q, _)| q == p)
        });
        if end != RunEnd::Control || more.is_empty() || !fresh {
            continue;
        }
        let len = insts.len();
        insts.extend(more);
        if extend_trace(code, start, insts, exits) {
            return true;
        }
        insts.truncate(len);
    }
    false
}
