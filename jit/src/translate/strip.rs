//! The *strip-mined* form of a simple counted loop: the body translated once for a few lanes
//! (`W`, [`strip_width`]) and looped over the lanes of every full iteration, instead of once
//! per `i64x2` chunk of VL lanes in each of the register form's body copies. Its IR does not
//! grow with VL: it is the tiered engine's first code for such loops (`Jit::set_baseline`),
//! compiled in a fraction of the register form's time, until the optimised register form
//! replaces it (where that form is much larger, the same strip-mined IR compiled with the
//! optimising settings comes between them: `Jit`'s `strip_step`).
//!
//! Which loops (all of it checked by [`strip_width`] before translation): an `ENDLOOP` loop,
//! alone or the inner loop of a nest (a stencil's rows), whose prologue before the body has
//! no vector work but registers it makes uniform (a broadcast from memory, a scalar moved
//! in: matmul256's 16 elements of A per row; made at `W` lanes, which every copy reads, and
//! stored to all VL lanes of the register file as they are made, `Tx::store_replicated`) and
//! whose nest's epilogue has none (the
//! epilogue's branch back runs the prologue again, `Tx::edge`), whose body writes
//! no scalar register but by the bump of a stepped pointer (`analysis::StepKind::Scalar`: each
//! copy sets it for its iteration of VL lanes from its value at the stretch's start, so the
//! last copy's bump leaves it exact; a strength-reduced FIR, fir8_bump at VL 64 with a tail
//! ahead, whose register form is over the optimising bound, 577 -> 1,937 Melem/s at 256 KiB;
//! not with gathers, whose pre-pass would compute lanes from the pointer's first value) and
//! no mask, reads `VL` nowhere, and holds only lane-wise vector work
//! (ALU, FP, `V.MOV`, `V.LC0`), contiguous accesses and strided loads the span check
//! hoists (an array of structs' fields, `V.LWI.U [v5 + 4]` off `V.LC0 << 4`: each copy loads
//! its `W` records' 16-byte pieces and picks the fields out, as the register form does for
//! VL; baselines of aos_soa_vaddr 1.5 -> 1.1 ms at VL 32 and 2.1 -> 1.2 at VL 64, strided32
//! 1.1 -> 0.7 at VL 64, the code as fast as the register form's in steady state; fields
//! through registers of their own, `V.LW [s5 + (lc0 << 4)]` with `s5 = s1 + 4`, on the
//! registers' distance at the entry that compiled the loop, which every stretch tests,
//! `Tx::spec_ok`: aos_soa_lc0 1.3-1.4 -> 1.0-1.1 ms at VL 32, 1.8-1.9 -> 1.0-1.1 at VL 64),
//! uniform loads (a filter's taps loaded in the body, `analysis::Hoisted::uniform`: each
//! copy broadcasts the element, which the stretch test keeps apart from every store's bytes;
//! fir8_taps at VL 64, whose register form is over the optimising bound, 591 -> 1,770
//! Melem/s at 256 KiB, 0.16x -> 0.45x native), and up to
//! [`MAX_GATHERS`] gathers and scatters whose lane addresses the stretch can compute ahead
//! (below). Lane `i` of
//! every instruction then depends only on lane `i` of the registers it reads and on LC0BASE +
//! `i`, so running the body for lanes `[x, x + W)` at LC0BASE `x` and stepping LC0BASE by `W`
//! is the loop at VL, but for the order of its memory accesses: so a stretch of iterations
//! runs this way only when the loop-entry test finds that, over the stretch, no store writes
//! a byte any other access of the body touches (a load and a store at the very same
//! addresses, an in-place update, keep their order lane by lane; `Tx::strip_apart`), that
//! every access lies in its space with its permission and alignment (`Tx::span_fit`), and
//! that the instruction budget covers the whole stretch. A register the body reads before
//! writing it is read from the register file at the copy's lanes (`Tx::lane_base`: a vector
//! made before the loop), and stored back there at the copy's end when the body writes it (a
//! sum carried from one iteration to the next: lane `i` only ever meets lane `i`, so the
//! order of the lanes' updates does not matter; not for sums of bytes or halfwords, which the
//! register form keeps narrow and this one would widen every iteration). Nothing in a stretch
//! can leave the function (a body copy that came out with an exit after all, a carry check,
//! is not used); its last iteration runs in a second copy of the body that also stores the
//! other registers' lanes to the register file (`StripEdge::store`), so at the stretch's end
//! the guest state is exact and the exits write no vector register back.
//!
//! Gathers and scatters (a lookup table's `V.LW [s2 + (v1 << 2)]`, a scatter's store through a
//! loaded index; `strip_gathers`): their lane addresses depend on data, so no entry test proves
//! them, and a copy that found a lane faulting could not leave (the guest state is exact only at a
//! stretch's ends). So each stretch starts with a pre-pass (`Tx::gather_prepass`) that runs the
//! body's *address slice* (the instructions the addresses depend on: lane-wise work, `V.LC0` and
//! hoisted loads, from registers the body does not write) `W` lanes at a time over the stretch's
//! proven groups, folds every gather's and scatter's lane EAs into bounds, and after each group of
//! VL lanes checks the bounds so far (in guest memory, one permitted run, aligned when required:
//! one lookup per group and access). The stretch is the groups that passed, so a lane that faults
//! ends it at its own group, which leaves as below and traps there precisely; the copies then
//! access the lanes with no check (`Tx::lanes_proven`), each lane's host address kept inside the
//! range the pre-pass proved: the copies compute the lanes again from the bytes the pre-pass read,
//! which nothing in the stretch writes but another group of a launch may (a race, whose results are
//! unspecified but whose run must stay inside guest memory). The stretch test also needs every
//! scatter's bytes apart from every other access's and the gathers' apart from every store's
//! (`Tx::gathers_apart`): reordered across lanes, an access would otherwise see another's bytes too
//! early or too late; a scatter's own lanes keep their ascending order, the highest lane's bytes
//! winning as in a group. The slice's loads must not be stored in place by the body (the pre-pass
//! would read bytes the stretch changes). A loop whose accesses always overlap so (a gather and a
//! scatter through one table, a histogram) leaves every stretch for the straight form, as
//! overlapping contiguous accesses do. Its IR does not grow with VL either: the baselines of
//! gather32, lut32 and scatter32 compile in 0.9 ms at VL 32 and 64 against the register form's
//! 1.6-2.3 ms at VL 32 and 2.3-3.6 ms at VL 64 (`lanejit bench --compile-latency`).
//!
//! The partial last iteration of a nest's rows (a row of a stencil 2,046 points long), when the
//! entry that made the nest compile had one ahead (`Tx::tail`, as the register form's tail copy; a
//! loop alone leaves its one tail as below, `Tx::strip_tail_copy`), runs in a third copy `W` lanes
//! at a time up to the trip count, each under the mask of its lanes below it: computed as a full
//! copy, stores of the active lanes only, registers blended with their old lanes (read from the
//! register file) at the copy's end, as the register form's masked tail does (`StripEdge::masked`),
//! once its whole group of VL lanes is proven as a stretch's are. Anything else (a tail without
//! such a copy, a fault or the budget's end ahead, overlapping accesses, an entry with another mask
//! than `ENDLOOP`'s) leaves for the straight form of the body (`Status::Partial`, as a lazy tail
//! does: one iteration, every access checked), with the state of the last full iteration done.
//! (Leaving for the interpreter instead made a stencil's row tails enter the interpreter in the
//! middle of the body, which compiled and recompiled a straight region there, 3.5 ms of the
//! compiler thread's time ahead of the nest's optimised code; leaving for the straight form, one
//! call per row whose hot recompile took the compiler thread 3-4 ms, made the stencils 8-18% slower
//! at VL 64 than their register form, so nests had to have rows of whole groups until the tail
//! copy. With it, tiered at 16 MiB: stencil5_lc0 542-567 -> 735-745 Melem/s at VL 64 and 601-606 ->
//! 695-779 at VL 32, stencil5_vaddr 411-507 -> 704-705 and 553-608 -> 739-741; at 1 MiB 1.2-2.2x.)
//!
//! A loop whose register form would be over the optimising settings' bound (unrolled bodies
//! at VL 64) keeps this code for good, compiled with the optimising settings; one whose
//! strip-mined IR would be over that bound too gets the plan's forms as before.
//!
//! Measured (`lanejit bench --engine jit` with this form forced, optimising settings, VL 32,
//! 256 KiB / 16 MiB, Melem/s): saxpy32 9,090 / 4,200 against the register form's 9,472 /
//! 3,973; fir8_lc0 2,565 / 2,492 against 2,920 / 2,835; the user kernels' 32-bit dot product
//! with its fill loops 1.64 against 1.55 ms. So it is a first tier: compiled in about half the
//! register form's baseline time at VL 32 (saxpy32 828 -> 497 us, fir8_lc0 1,406 -> 783, one
//! compile at a time), its code a few percent slower.

use super::Tx;
use super::analysis::{self, Hoisted, StepKind};
use crate::abi::Status;
use crate::region::{Region, Seen};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I8, I64X2};
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::Variable;
use lanejit_interp::isa::{Ctl, Inst, SRead, Sem, VRead, VReg};

/// Most pairs of a store and another access the stretch test compares (`Tx::strip_apart`):
/// a bound on the test's code, which bodies of a dozen accesses stay far below.
const MAX_PAIRS: usize = 64;

/// Most gathers and scatters in a strip-mined body (`strip_gathers`): a bound on the
/// pre-pass's code (a lookup table's loop has one, SpMV's row three).
const MAX_GATHERS: usize = 4;

/// How a body copy of the strip-mined loop ends (`Tx::strip_edge`).
#[derive(Clone, Copy)]
pub(crate) struct StripEdge {
    /// The copy's first block (its back edge's target).
    top: Block,
    /// The LC0BASE where the copy's lanes end.
    end: Variable,
    /// Where it goes when they are done.
    after: Block,
    /// The stretch's last iteration: the copy also stores the other registers it writes
    /// (at `Tx::lane_base`, LC0BASE modulo VL being their lane in the register file).
    store: bool,
    /// The vector registers the body writes.
    written: u32,
    /// Of those, the ones it reads before writing them (loop-carried: loaded from the
    /// register file at the top of each copy and stored at its end, `Tx::lane_base`).
    carried: u32,
    /// The loop's lanes.
    vl: u32,
    /// The loop's partial last iteration (its tail): every copy runs under the mask of its
    /// lanes below the trip count (a prefix of `W`, all of them but in the last), as the
    /// register form's masked tail does (`Tx::masked_tail`: computed as a full copy, stores of
    /// active lanes only, registers blended with their old lanes at the copy's end).
    masked: bool,
}

/// The lanes a loop is strip-mined at when compiled at `vl` lanes (see the module docs):
/// `None` when it is not such a loop, or VL is not at least twice the width. The width is 8
/// lanes, 16 when the body accesses bytes: at least 16 bytes of the narrowest element, so the
/// packed forms of 16-byte chunks apply as they do at VL.
pub(crate) fn strip_width(r: &Region, seen: Option<Seen>, vl: u32) -> Option<u32> {
    let h = r.loop_head?;
    if !analysis::fast_loop_ok(r) || !vl.is_power_of_two() {
        return None;
    }
    // The inner `ENDLOOP`: the region's last instruction, or in a nest the last before the
    // epilogue (a nest whose inner loop is a branch loop has none there).
    let inner_end = r.outer.unwrap_or(r.insts.len());
    let (last_pc, last) = r.insts.get(inner_end.checked_sub(1)?)?;
    let Inst::Endloop(e) = last else { return None };
    if e.body.pc() != r.insts[h].0 || (r.outer.is_none() && *last_pc + 8 != r.end_pc) {
        return None;
    }
    // A nest's epilogue: scalar work and control only (translated at `W` lanes as at VL);
    // the prologue too, but for vector registers it makes uniform (the same in every lane:
    // `W` lanes of them are every copy's), which the body reads but does not write.
    let scalar = |i: &Inst| {
        let fx = i.effects();
        fx.reads_v == 0
            && fx.writes_v == 0
            && !matches!(i.opcode().sem(), Sem::SRead(SRead::Vl) | Sem::SetMask)
    };
    if !r.insts[inner_end..].iter().all(|(_, i)| scalar(i)) {
        return None;
    }
    let uniform = uniform_prologue(&r.insts[..h], scalar)?;
    let body = &r.insts[h..inner_end - 1];
    if body_regs(body).0 & uniform != 0 {
        return None;
    }
    // Stepped registers at the loop's lanes (a bump adds `VL * e` once per iteration of VL
    // lanes): scalar pointers, and read-only lane offsets, whose bumps the body may write
    // (`Tx::strip_copy` sets such a scalar at each copy's start).
    let (mut hoist, stepped) = analysis::hoisted_and_stepped(r, seen.as_ref(), vl);
    let bumped = stepped
        .iter()
        .filter(|st| st.kind == StepKind::Scalar)
        .fold(0u32, |m, st| m | 1 << st.reg);
    if stepped.iter().any(|st| st.kind == StepKind::Vector) {
        return None;
    }
    let mut log2e_min = 3u8;
    for (_, i) in body {
        let fx = i.effects();
        let lane_wise = match i.opcode().sem() {
            Sem::VAlu(_) | Sem::VMov | Sem::Fp(..) | Sem::VRead(VRead::Lc0) => true,
            Sem::Mem(ms) => {
                log2e_min = log2e_min.min(ms.log2e);
                true
            }
            Sem::SAlu(_)
            | Sem::SLi
            | Sem::SMov
            | Sem::SRead(_)
            | Sem::SGetLane
            | Sem::VRead(VRead::LaneId)
            | Sem::RedSum
            | Sem::SetMask
            | Sem::Branch(_)
            | Sem::Ctl(Ctl::Jump | Ctl::Loop | Ctl::EndLoop | Ctl::Nop | Ctl::Halt) => false,
        };
        let bump = matches!(i.opcode().sem(), Sem::SAlu(_)) && fx.writes_s & !bumped == 0;
        if !((lane_wise && fx.writes_s == 0) || bump) {
            return None;
        }
    }
    let (_, carried) = body_regs(body);
    // Sums of bytes or halfwords carried from one iteration to the next: the register form
    // keeps them narrow (`Form::Acc`), 2.6-7x faster than widening every lane each
    // iteration here (dot8 at VL 32: 12,993 against 4,948 Melem/s, widensum8 39,495
    // against 5,371).
    if carried != 0 && log2e_min < 2 {
        return None;
    }
    let w = (16u32 >> log2e_min).max(8);
    if vl < 2 * w {
        return None;
    }
    // Every access hoisted (contiguous, a strided load, or a uniform load; base distances may
    // be speculated: each stretch tests them).
    analysis::speculate_bases(&mut hoist, seen.as_ref());
    if analysis::copy_loop(r, &hoist).is_some()
        || !hoist
            .iter()
            .all(|x| x.contiguous() || x.ms().dir == lanejit_interp::isa::Dir::Load)
    {
        return None;
    }
    let accesses = body
        .iter()
        .filter(|(_, i)| i.opcode().mem().is_some())
        .count();
    let gathers = strip_gathers(r, h, inner_end - 1, &hoist)?;
    // The pre-pass would compute gathers' lanes from a stepped scalar's entry value.
    if !stepped.is_empty() && !gathers.at.is_empty() {
        return None;
    }
    let stores = hoist
        .iter()
        .filter(|h| h.ms().dir == lanejit_interp::isa::Dir::Store)
        .count()
        + gathers.scatters(r);
    let n = hoist.len() + gathers.at.len();
    (n == accesses && stores * n <= MAX_PAIRS).then_some(w)
}

/// The gathers and scatters of a strip-mined body: accesses on guest memory through one
/// vector register of lane addresses (`mem::gather_index`) that the stretch's pre-pass can
/// compute ahead (`Tx::gather_prepass`).
#[derive(Clone, Default)]
pub(crate) struct Gathers {
    /// Where they are in the region (`r.insts`).
    pub(crate) at: Vec<usize>,
    /// The body's instructions their addresses depend on (indices into `r.insts`, in
    /// order): lane-wise ALU and FP work, `V.LC0`, and hoisted contiguous loads.
    pub(crate) slice: Vec<usize>,
}

impl Gathers {
    /// How many of them are stores.
    fn scatters(&self, r: &Region) -> usize {
        self.at.iter().filter(|&&a| is_store(&r.insts[a].1)).count()
    }
}

fn is_store(i: &Inst) -> bool {
    i.opcode()
        .mem()
        .is_some_and(|ms| ms.dir == lanejit_interp::isa::Dir::Store)
}

/// The gathers and scatters of body `r.insts[h..end]` (the accesses not in `hoist`), when
/// the pre-pass can compute every one's lane addresses ahead of a stretch: through one
/// vector register on guest memory, made in the body only by lane-wise work, `V.LC0` and
/// hoisted loads no store of the body writes in place (a store at the very addresses of such
/// a load would change what the pre-pass read), from registers the body does not write
/// (made before the loop: the same in every iteration). Another gather in the slice, or a
/// register carried from one iteration to the next, keeps the loop out (`None`); so do more
/// than [`MAX_GATHERS`].
fn strip_gathers(r: &Region, h: usize, end: usize, hoist: &[Hoisted]) -> Option<Gathers> {
    let (written, _) = body_regs(&r.insts[h..end]);
    let mut g = Gathers::default();
    let mut in_slice = vec![false; r.insts.len()];
    for a in h..end {
        let (pc, inst) = &r.insts[a];
        if inst.opcode().mem().is_none() || hoist.iter().any(|x| x.pc == *pc) {
            continue;
        }
        let mut need = 1u32 << super::mem::gather_index(inst)?;
        for i in (h..a).rev() {
            let (ipc, ii) = &r.insts[i];
            let fx = ii.effects();
            if fx.writes_v & need == 0 {
                continue;
            }
            let ok = match ii.opcode().sem() {
                Sem::VAlu(_) | Sem::VMov | Sem::Fp(..) | Sem::VRead(VRead::Lc0) => true,
                Sem::Mem(ms) => hoist.iter().any(|x| {
                    x.pc == *ipc
                        && ms.dir == lanejit_interp::isa::Dir::Load
                        && !hoist.iter().any(|s| {
                            s.ms().dir == lanejit_interp::isa::Dir::Store && s.same_bytes(x)
                        })
                }),
                _ => false,
            };
            if !ok {
                return None;
            }
            in_slice[i] = true;
            need = (need & !fx.writes_v) | fx.reads_v;
        }
        if need & written != 0 {
            return None;
        }
        g.at.push(a);
    }
    if g.at.len() > MAX_GATHERS {
        return None;
    }
    g.slice = (0..r.insts.len()).filter(|&i| in_slice[i]).collect();
    Some(g)
}

/// The vector registers a loop's prologue `pro` makes uniform, when every instruction of it
/// is `scalar` work or control, or vector work whose every lane is the same: a load from an
/// address of scalars only (`V.LWI [s9 + (3 << 2)]`: a broadcast, under the full mask the
/// prologue runs with), a move of a scalar or an immediate, lane-wise arithmetic on uniform
/// registers, scalars and immediates (a nest's per-row broadcasts, matmul256's 16 elements of
/// A). `None` when another instruction writes a vector register (`V.LC0`, `V.LANEID`, a
/// register made from lanes).
fn uniform_prologue(pro: &[(u64, Inst)], scalar: impl Fn(&Inst) -> bool) -> Option<u32> {
    let mut uniform = 0u32;
    for (_, i) in pro {
        if scalar(i) {
            continue;
        }
        let fx = i.effects();
        let from_uniform = fx.reads_v & !uniform == 0 && !fx.reads_lc0;
        let ok = from_uniform
            && match i.opcode().sem() {
                Sem::Mem(ms) => ms.dir == lanejit_interp::isa::Dir::Load && fx.reads_v == 0,
                Sem::VMov | Sem::VAlu(_) | Sem::Fp(..) => true,
                _ => false,
            };
        if !ok {
            return None;
        }
        uniform |= fx.writes_v;
    }
    Some(uniform)
}

/// The vector registers `body` writes, and of those the ones it reads before writing them
/// (carried from one iteration to the next).
fn body_regs(body: &[(u64, Inst)]) -> (u32, u32) {
    let (mut written, mut read_first) = (0u32, 0u32);
    for (_, i) in body {
        let fx = i.effects();
        read_first |= fx.reads_v & !written;
        written |= fx.writes_v;
    }
    (written, read_first & written)
}

impl Tx<'_, '_> {
    /// The strip-mined loop (see the module docs) after the prologue `r.insts[..h]`, for a
    /// loop of `vl` lanes translated at `self.vl` of them. `false` when a body copy came out
    /// with an exit after all (the caller translates the register form instead).
    pub(super) fn strip_loop(&mut self, r: &Region, h: usize, vl: u32) -> bool {
        let log2vl = vl.trailing_zeros() as i64;
        let head_pc = r.insts[h].0;
        let body_len = r.body().len() as u64;
        let all = all_lanes(vl);
        // Nothing the body writes leaves through the exits: the stretch's last iteration
        // stores what it wrote (`StripEdge::store`), every copy what it carries
        // (`StripEdge::carried`). No iteration-local bookkeeping either.
        let (written, carried) = body_regs(r.body());
        let inner_end = r.outer.unwrap_or(r.insts.len());
        let Some(gathers) = strip_gathers(r, h, inner_end - 1, &self.hoist) else {
            return false;
        };
        self.proven = gathers.at.iter().map(|&a| (r.insts[a].0, None)).collect();
        self.local_v = 0;
        self.dirty.v = 0;
        self.off = 0;
        if r.insts[..h].iter().any(|(_, i)| matches!(i, Inst::Loop(_))) {
            // `LOOP` set the mask for `W` lanes.
            let trip = self.b.use_var(self.trip);
            let m = self.mask_below(trip, vl);
            self.set_mask(m);
        }
        let hosts: Vec<Variable> = (0..self.hoist.len())
            .map(|_| {
                let v = self.b.declare_var(cranelift_codegen::ir::types::I64);
                let z = self.iconst(0);
                self.b.def_var(v, z);
                v
            })
            .collect();
        self.hoist_host = hosts;
        self.strip_sbase = self
            .stepped
            .clone()
            .into_iter()
            .filter(|st| st.kind == StepKind::Scalar)
            .map(|st| {
                let v = self.b.declare_var(cranelift_codegen::ir::types::I64);
                let z = self.iconst(0);
                self.b.def_var(v, z);
                (st, v)
            })
            .collect();
        let [
            header,
            stretch,
            wtop,
            stop,
            done,
            finished,
            leave,
            tail,
            ttop,
            tdone,
        ] = [(); 10].map(|_| self.b.create_block());
        self.b.set_cold_block(leave);
        // Entered with LC0BASE below the trip count and the mask `ENDLOOP` leaves for it (all
        // lanes, or a prefix for the tail).
        let m = self.b.use_var(self.mask);
        let lc = self.b.use_var(self.lc0);
        let trip = self.b.use_var(self.trip);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, lc, trip);
        let left = self.b.ins().isub(trip, lc);
        let rule = self.mask_below(left, vl);
        let same = self.b.ins().icmp(IntCC::Equal, m, rule);
        let ok = self.b.ins().band(more, same);
        self.b.ins().brif(ok, header, &[], leave, &[]);

        // The header: the next stretch, its accesses checked and compared (a single loop's
        // baseline may leave here first, `Tx::yield_check`; a nest's at its rows' end).
        self.b.switch_to_block(header);
        if r.outer.is_none() {
            let at = (self.b.use_var(self.lc0), self.b.use_var(self.trip));
            self.yield_check(head_pc, 0, Some(at));
        }
        let lc = self.b.use_var(self.lc0);
        let trip = self.b.use_var(self.trip);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, lc, trip);
        let left = self.b.ins().isub(trip, lc);
        let q = self.b.ins().ushr_imm_s(left, log2vl);
        let zero = self.iconst(0);
        let q = self.b.ins().select(more, q, zero);
        let cap = self.iconst(self.span_cap(vl));
        let mut k = self.b.ins().umin(q, cap);
        // The tail next (a partial iteration): one group of VL lanes, all of it checked;
        // without a tail copy, none (`Tx::strip_tail_copy`).
        let none = self.b.ins().icmp_imm_s(IntCC::Equal, q, 0);
        let in_tail = self.b.ins().band(more, none);
        let one = self.iconst(u64::from(self.strip_tail_copy(r)));
        k = self.b.ins().select(in_tail, one, k);
        if self.budgeted {
            let rv = self.b.use_var(self.retired);
            let room = self.b.ins().isub(self.budget, rv);
            let n = self.b.ins().udiv_imm_s(room, body_len as i64);
            k = self.b.ins().umin(k, n);
        }
        let ea0s = self.hoist_hosts_at(lc);
        // Stepped scalars (`analysis::StepKind::Scalar`): their value less `e` times LC0BASE,
        // from which each copy sets them for its iteration (`Tx::strip_copy`).
        for (st, var) in self.strip_sbase.clone() {
            let s = self.sget(lanejit_interp::isa::SReg(st.reg));
            let off = self.b.ins().imul_imm_s(lc, st.e);
            let b = self.b.ins().isub(s, off);
            self.b.def_var(var, b);
        }
        let groups = self.span_checks(|_| true);
        k = self.groups_fit(&groups, &ea0s, vl, k);
        if let Some(ok) = self.spec_ok() {
            // A speculated base distance that does not hold (the fields of an array of
            // structs through registers of their own no longer a record apart): none.
            let zero = self.iconst(0);
            k = self.b.ins().select(ok, k, zero);
        }
        // The gathers' and scatters' lanes, computed ahead over the groups proven so far
        // (the exits below count the pre-pass's too: none may come out of it).
        let exits = self.exits;
        let ranges;
        (k, ranges) = self.gather_prepass(r, &gathers, lc, k, vl);
        let prepass_clean = self.exits == exits;
        for (p, &range) in self.proven.iter_mut().zip(&ranges) {
            p.1 = Some(range);
        }
        let span = self.b.ins().ishl_imm_s(k, log2vl);
        let lim = self.b.ins().iadd(lc, span);
        let mut apart = self.strip_apart(lc, lim);
        apart = self.gathers_apart(r, &gathers, &ranges, lc, lim, apart);
        let some = self.b.ins().icmp_imm_s(IntCC::NotEqual, k, 0);
        let go = self.b.ins().band(some, apart);
        let reenter = (r.outer.is_none() && h == 0).then_some(head_pc);
        let (fail, refill) = self.refill_block(leave, &groups, &ea0s, reenter);
        // With a tail copy, a checked tail goes there; without, `k` was 0 for it.
        let tail_copy = self.strip_tail_copy(r);
        let fork = if tail_copy {
            self.b.create_block()
        } else {
            stretch
        };
        self.b.ins().brif(go, fork, &[], fail, &[]);
        if let Some(rf) = refill {
            self.refill(rf);
        }
        if tail_copy {
            self.b.switch_to_block(fork);
            self.b.seal_block(fork);
            self.b.ins().brif(in_tail, tail, &[], stretch, &[]);
        }

        // A stretch: all but its last iteration `W` lanes at a time, then the last.
        self.b.switch_to_block(stretch);
        let i64t = cranelift_codegen::ir::types::I64;
        let [end, send] = [(); 2].map(|_| self.b.declare_var(i64t));
        let last = self.b.ins().iadd_imm_s(lim, -(vl as i64));
        self.b.def_var(end, last);
        self.b.def_var(send, lim);
        let before = self.b.ins().icmp(IntCC::UnsignedLessThan, lc, last);
        self.b.ins().brif(before, wtop, &[], stop, &[]);
        let exits = self.exits;
        self.strip_copy(
            r,
            h,
            StripEdge {
                top: wtop,
                end,
                after: stop,
                store: false,
                written,
                carried,
                vl,
                masked: false,
            },
        );
        self.strip_copy(
            r,
            h,
            StripEdge {
                top: stop,
                end: send,
                after: done,
                store: true,
                written,
                carried,
                vl,
                masked: false,
            },
        );

        if tail_copy {
            self.strip_tail(r, h, vl, body_len, [tail, ttop, tdone, finished], written);
        }
        let clean = prepass_clean && self.exits == exits;

        // The stretch done: LC0BASE at its end (its copies stepped it), the count and the
        // mask as its last `ENDLOOP` leaves them.
        self.b.switch_to_block(done);
        self.all_wide();
        self.off = 0;
        let iters = self.b.ins().imul_imm_s(k, body_len as i64);
        let rv = self.b.use_var(self.retired);
        let rv = self.b.ins().iadd(rv, iters);
        self.b.def_var(self.retired, rv);
        let lc = self.b.use_var(self.lc0);
        let trip = self.b.use_var(self.trip);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, lc, trip);
        let left = self.b.ins().isub(trip, lc);
        let m = self.mask_below(left, vl);
        let all_v = self.iconst(all);
        let m = self.b.ins().select(more, m, all_v);
        self.set_mask(m);
        self.b.ins().brif(more, header, &[], finished, &[]);

        self.b.switch_to_block(finished);
        match (self.nest, r.outer) {
            // A nest: its epilogue, whose branch back goes to the prologue (`Tx::edge`).
            (Some(n), Some(o)) => {
                self.b.ins().jump(n.epi, &[]);
                self.epilogue(r, n, o, header);
            }
            _ => self.exit_pc(Status::Next, r.end_pc, 0),
        }

        self.proven.clear();
        // Left with the state of the header (no instruction of the stretch counted).
        self.b.switch_to_block(leave);
        self.off = 0;
        self.all_wide();
        self.full = false;
        self.fallback(head_pc, crate::observe::Fallback::Tail);
        self.exit_pc(Status::Partial, head_pc, 0);
        clean
    }

    /// The tail of the strip-mined loop (see [`StripEdge::masked`]), entered at `tail` once
    /// checked: `W` lanes at a time up to the trip count, each copy under the mask of its lanes
    /// below it (from `ttop`), then at `tdone` LC0BASE past the iteration's VL lanes, the
    /// retired count, the mask all ones, and on to `finished`.
    fn strip_tail(
        &mut self,
        r: &Region,
        h: usize,
        vl: u32,
        body_len: u64,
        [tail, ttop, tdone, finished]: [Block; 4],
        written: u32,
    ) {
        self.b.switch_to_block(tail);
        self.b.seal_block(tail);
        let [tend, tfrom] = [(); 2].map(|_| self.b.declare_var(cranelift_codegen::ir::types::I64));
        let lc = self.b.use_var(self.lc0);
        let trip = self.b.use_var(self.trip);
        self.b.def_var(tend, trip);
        self.b.def_var(tfrom, lc);
        self.b.ins().jump(ttop, &[]);
        self.strip_copy(
            r,
            h,
            StripEdge {
                top: ttop,
                end: tend,
                after: tdone,
                store: true,
                written,
                carried: written,
                vl,
                masked: true,
            },
        );
        self.b.switch_to_block(tdone);
        self.b.seal_block(tdone);
        self.all_wide();
        self.off = 0;
        let from = self.b.use_var(tfrom);
        let past = self.b.ins().iadd_imm_s(from, i64::from(vl));
        self.b.def_var(self.lc0, past);
        let rv = self.b.use_var(self.retired);
        let rv = self.b.ins().iadd_imm_s(rv, body_len as i64);
        self.b.def_var(self.retired, rv);
        let all_v = self.iconst(all_lanes(vl));
        self.set_mask(all_v);
        self.b.ins().jump(finished, &[]);
    }

    /// Whether the strip-mined loop has a tail copy (`StripEdge::masked`): the rows of a nest
    /// whose entry had a tail ahead (`Tx::tail`). A loop alone leaves its one tail for the
    /// straight form of its body: the copy made its compile 60-80% longer (saxpy.s 0.75-0.85
    /// -> 1.33-1.38 ms, vadd.s 0.58-0.66 -> 1.0), for one iteration.
    fn strip_tail_copy(&self, r: &Region) -> bool {
        self.tail && r.outer.is_some()
    }

    /// One copy of the body for `W` lanes, entered at `edge.top` (see [`StripEdge`]).
    fn strip_copy(&mut self, r: &Region, h: usize, edge: StripEdge) {
        self.b.switch_to_block(edge.top);
        self.all_wide();
        self.full = true;
        self.prechecked = true;
        self.readonly = true;
        self.ordered = analysis::in_place(&self.hoist);
        self.off = 0;
        // The register file at this copy's lanes; the loop-carried registers' lanes from it.
        let lc = self.b.use_var(self.lc0);
        let base = self.lane_base_at(lc, edge.vl);
        // A stepped scalar as it is at the start of this copy's iteration of VL lanes (the
        // body's bump then steps it once per copy, so the last copy leaves it exact).
        let it = self.b.ins().band_imm_s(lc, -i64::from(edge.vl));
        for (st, var) in self.strip_sbase.clone() {
            let b = self.b.use_var(var);
            let off = self.b.ins().imul_imm_s(it, st.e);
            let s = self.b.ins().iadd(b, off);
            self.sset(lanejit_interp::isa::SReg(st.reg), s);
        }
        self.lane_base = Some(base);
        let f = MemFlagsData::trusted();
        for n in 0..32u8 {
            if edge.carried & (1 << n) != 0 {
                let vars = self.v[n as usize].clone().expect("register declared");
                for (c, var) in vars.into_iter().enumerate() {
                    let v = self.b.ins().load(I64X2, f, base, Self::voff(VReg(n), c));
                    self.b.def_var(var, v);
                }
            }
        }
        if edge.masked {
            // The copy's lanes below the trip count, and the lanes every written register
            // keeps where they are not.
            let trip = self.b.use_var(self.trip);
            let left = self.b.ins().isub(trip, lc);
            let m = self.mask_below(left, self.vl);
            self.set_mask(m);
            self.tail_old = (0..32u8)
                .filter(|n| edge.written & (1 << n) != 0)
                .map(|n| (VReg(n), self.vget_all(VReg(n))))
                .collect();
            self.masked_tail = true;
        }
        self.strip = Some(edge);
        self.run(r, h, Some(edge.top));
        self.strip = None;
        self.masked_tail = false;
        self.tail_old.clear();
        self.lane_base = None;
        self.readonly = false;
        self.prechecked = false;
    }

    /// The `ENDLOOP` of a strip-mined copy, LC0BASE stepped to `lc`: the last iteration's
    /// copy first stores the `W` lanes of every register the body writes where they belong
    /// in the register file; then the copy goes round while lanes are left.
    pub(super) fn strip_edge(&mut self, edge: StripEdge, lc: Value) {
        let at = self.lane_base.expect("in a strip-mined copy");
        if edge.masked {
            self.tail_blend();
        }
        for n in 0..32u8 {
            if edge.carried & (1 << n) != 0 {
                self.store_lanes(VReg(n), at);
            }
        }
        if edge.store {
            for n in 0..32u8 {
                if edge.written & !edge.carried & (1 << n) != 0 {
                    self.store_lanes(VReg(n), at);
                }
            }
        }
        let end = self.b.use_var(edge.end);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, lc, end);
        self.b.ins().brif(more, edge.top, &[], edge.after, &[]);
    }

    /// The register file's address moved to the lane of LC0BASE `lc` in a loop of `vl` lanes
    /// (`Tx::lane_base`).
    fn lane_base_at(&mut self, lc: Value, vl: u32) -> Value {
        let lane = self.b.ins().band_imm_s(lc, i64::from(vl) - 1);
        let bytes = self.b.ins().ishl_imm_s(lane, 3);
        self.b.ins().iadd(self.regs, bytes)
    }

    /// Store the `W` lanes of `r`, canonical, to the register file moved to their first lane
    /// (`at`).
    fn store_lanes(&mut self, r: VReg, at: Value) {
        self.canonicalize(r);
        self.materialize(r);
        for c in 0..self.nch {
            let v = self.vget(r, c);
            self.b
                .ins()
                .store(MemFlagsData::trusted(), v, at, Self::voff(r, c));
        }
    }

    /// Whether, over the iterations from LC0BASE `lc` up to `lim`, the bytes every hoisted
    /// store writes are apart from those of every other hoisted access in its space (an
    /// access at the very addresses of the store, an in-place update, excepted: lane by lane
    /// the two keep their order). Proved accesses, so no range wraps.
    fn strip_apart(&mut self, lc: Value, lim: Value) -> Value {
        let n = self.hoist.len();
        let ranges: Vec<(Value, Value)> = (0..n).map(|j| self.span_bytes(j, lc, lim, 0)).collect();
        let mut ok = self.b.ins().iconst(I8, 1);
        for s in 0..n {
            if self.hoist[s].ms().dir != lanejit_interp::isa::Dir::Store {
                continue;
            }
            for a in 0..n {
                let (hs, ha) = (&self.hoist[s], &self.hoist[a]);
                let same = hs.same_bytes(ha);
                let other_space = hs.inst.is_local() != ha.inst.is_local();
                // Each pair of stores once.
                let seen = a < s && ha.ms().dir == lanejit_interp::isa::Dir::Store;
                if a == s || same || other_space || seen {
                    continue;
                }
                ok = self.and_apart(ok, ranges[s], ranges[a]);
            }
        }
        ok
    }

    /// The stretch's pre-pass over the address slices of `g` (see the module docs): from LC0BASE
    /// `lc`, for at most `k` groups of `vl` lanes, the slice's instructions run `W` lanes at a time
    /// and every gather's and scatter's lane EAs are folded into bounds; after each group the
    /// bounds so far are checked (`Tx::gather_range_ok`: in guest memory, one permitted run,
    /// aligned when required). Returns how many groups from the first pass (a group that fails ends
    /// the count, so that a loop whose lanes fault in a later group runs the ones before it here,
    /// and each group is computed ahead at most twice), and per access the host addresses of its
    /// lowest and highest lane EA over them (meaningless when none passed). Registers the slice
    /// writes are made again by the copies before they read them; nothing here is counted or
    /// leaves.
    fn gather_prepass(
        &mut self,
        r: &Region,
        g: &Gathers,
        lc: Value,
        k: Value,
        vl: u32,
    ) -> (Value, Vec<(Value, Value)>) {
        if g.at.is_empty() {
            return (k, Vec::new());
        }
        let i64t = cranelift_codegen::ir::types::I64;
        let log2vl = vl.trailing_zeros() as i64;
        let n = g.at.len();
        let span = self.b.ins().ishl_imm_s(k, log2vl);
        let glim = self.b.ins().iadd(lc, span);
        let var = |t: &mut Self, init: u64| {
            let v = t.b.declare_var(i64t);
            let x = t.iconst(init);
            t.b.def_var(v, x);
            v
        };
        let gv = var(self, 0);
        self.b.def_var(gv, lc);
        let cv = var(self, 0);
        // Bounds over the groups that passed, and over those and the current one.
        let done: Vec<[Variable; 3]> = (0..n)
            .map(|_| [var(self, u64::MAX), var(self, 0), var(self, 0)])
            .collect();
        let cur: Vec<[Variable; 3]> = (0..n)
            .map(|_| [var(self, u64::MAX), var(self, 0), var(self, 0)])
            .collect();
        let [gstart, ctop, gcheck, gnext, gdone] = [(); 5].map(|_| self.b.create_block());
        let some = self.b.ins().icmp(IntCC::UnsignedLessThan, lc, glim);
        self.b.ins().brif(some, gstart, &[], gdone, &[]);

        let copy = |t: &mut Self, from: &[[Variable; 3]], to: &[[Variable; 3]]| {
            for (f, t3) in from.iter().flatten().zip(to.iter().flatten()) {
                let x = t.b.use_var(*f);
                t.b.def_var(*t3, x);
            }
        };
        self.b.switch_to_block(gstart);
        copy(self, &done, &cur);
        let g0 = self.b.use_var(gv);
        self.b.def_var(cv, g0);
        self.b.ins().jump(ctop, &[]);

        // `W` lanes of the current group.
        self.b.switch_to_block(ctop);
        let saved = (
            self.off,
            self.dirty,
            self.full,
            self.prechecked,
            self.readonly,
        );
        let c = self.b.use_var(cv);
        self.b.def_var(self.lc0, c);
        self.lane_base = Some(self.lane_base_at(c, vl));
        self.all_wide();
        self.full = true;
        self.prechecked = true;
        self.readonly = false;
        self.forget_copy_facts();
        // In program order: each access's lanes where the body computes them (a register of
        // one access's address may be written again for a later one's).
        let mut order: Vec<(usize, Option<usize>)> = g.slice.iter().map(|&i| (i, None)).collect();
        order.extend(g.at.iter().enumerate().map(|(j, &a)| (a, Some(j))));
        order.sort_unstable();
        for (i, access) in order {
            let (pc, inst) = r.insts[i];
            let Some(j) = access else {
                self.next = None;
                self.inst(pc, &inst);
                self.fused = false;
                continue;
            };
            let (lo, hi, or) = self.gather_lane_range(&inst);
            let [vlo, vhi, vor] = cur[j];
            let x = self.b.use_var(vlo);
            let x = self.b.ins().umin(x, lo);
            self.b.def_var(vlo, x);
            let x = self.b.use_var(vhi);
            let x = self.b.ins().umax(x, hi);
            self.b.def_var(vhi, x);
            let x = self.b.use_var(vor);
            let x = self.b.ins().bor(x, or);
            self.b.def_var(vor, x);
        }
        self.flush_deferred(u32::MAX, true);
        self.deferred.clear();
        let c2 = self.b.ins().iadd_imm_s(c, i64::from(self.vl));
        self.b.def_var(cv, c2);
        let g0 = self.b.use_var(gv);
        let gend = self.b.ins().iadd_imm_s(g0, i64::from(vl));
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, c2, gend);
        self.b.ins().brif(more, ctop, &[], gcheck, &[]);
        self.b.seal_block(ctop);
        (
            self.off,
            self.dirty,
            self.full,
            self.prechecked,
            self.readonly,
        ) = saved;
        self.lane_base = None;
        self.all_wide();

        // The group done: its bounds and the earlier groups' checked together.
        self.b.switch_to_block(gcheck);
        self.b.seal_block(gcheck);
        let mut ok = self.b.ins().iconst(I8, 1);
        for (j, &a) in g.at.iter().enumerate() {
            let range = cur[j].map(|v| self.b.use_var(v));
            let fits = self.gather_range_ok(&r.insts[a].1, (range[0], range[1], range[2]));
            ok = self.b.ins().band(ok, fits);
        }
        self.b.ins().brif(ok, gnext, &[], gdone, &[]);

        self.b.switch_to_block(gnext);
        self.b.seal_block(gnext);
        copy(self, &cur, &done);
        let g0 = self.b.use_var(gv);
        let g1 = self.b.ins().iadd_imm_s(g0, i64::from(vl));
        self.b.def_var(gv, g1);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, g1, glim);
        self.b.ins().brif(more, gstart, &[], gdone, &[]);
        self.b.seal_block(gstart);

        self.b.switch_to_block(gdone);
        self.b.seal_block(gdone);
        self.b.def_var(self.lc0, lc);
        let g0 = self.b.use_var(gv);
        let passed = self.b.ins().isub(g0, lc);
        let k = self.b.ins().ushr_imm_s(passed, log2vl);
        let (base, _, _) = self.space(false);
        let ranges = (0..g.at.len())
            .map(|j| {
                let lo = self.b.use_var(done[j][0]);
                let hi = self.b.use_var(done[j][1]);
                (self.b.ins().iadd(base, lo), self.b.ins().iadd(base, hi))
            })
            .collect();
        (k, ranges)
    }

    /// `ok` and whether, over the iterations from LC0BASE `lc` up to `lim`, every scatter of
    /// `g` writes no byte any other access of the body touches (its own lanes excepted: they
    /// keep their order, the lanes of a stretch going in ascending order as a group's do), and
    /// no hoisted store writes a byte a gather reads (`ranges`: the pre-pass's). Guest
    /// memory only (tile space is another host allocation).
    fn gathers_apart(
        &mut self,
        r: &Region,
        g: &Gathers,
        ranges: &[(Value, Value)],
        lc: Value,
        lim: Value,
        mut ok: Value,
    ) -> Value {
        // The bytes each access touches: from its first lane's to its last lane's end.
        let bytes: Vec<(Value, Value)> =
            g.at.iter()
                .zip(ranges)
                .map(|(&a, &(first, last))| {
                    let e = r.insts[a].1.opcode().mem().expect("an access").width() as i64;
                    (first, self.b.ins().iadd_imm_s(last, e))
                })
                .collect();
        let ranges = &bytes;
        for (j, &a) in g.at.iter().enumerate() {
            let store = is_store(&r.insts[a].1);
            for hz in 0..self.hoist.len() {
                let h = &self.hoist[hz];
                if h.inst.is_local() || !(store || h.ms().dir == lanejit_interp::isa::Dir::Store) {
                    continue;
                }
                let span = self.span_bytes(hz, lc, lim, 0);
                ok = self.and_apart(ok, ranges[j], span);
            }
            for (i, &b) in g.at.iter().enumerate().take(j) {
                if store || is_store(&r.insts[b].1) {
                    ok = self.and_apart(ok, ranges[j], ranges[i]);
                }
            }
        }
        ok
    }

    /// The mask of the lanes below `left` of `vl` (all of them from `vl` on).
    fn mask_below(&mut self, left: Value, vl: u32) -> Value {
        let one = self.iconst(1);
        let sh = self.b.ins().ishl(one, left);
        let below = self.b.ins().iadd_imm_s(sh, -1);
        let all = self.iconst(all_lanes(vl));
        let big = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, left, vl as i64);
        self.b.ins().select(big, all, below)
    }
}

/// The mask of all `vl` lanes.
fn all_lanes(vl: u32) -> u64 {
    lanejit_interp::machine::all_lanes(vl)
}
