//! The *strip-mined* form of a simple counted loop: the body translated once for a few lanes
//! (`W`, [`strip_width`]) and looped over the lanes of every full iteration, instead of once
//! per `i64x2` chunk of VL lanes in each of the register form's body copies. Its IR does not
//! grow with VL: it is the tiered engine's first code for such loops (`Jit::set_baseline`),
//! compiled in a fraction of the register form's time, until the optimised register form
//! replaces it.
//!
//! Which loops (all of it checked by [`strip_width`] before translation): an `ENDLOOP` loop,
//! alone or the inner loop of a nest (a stencil's rows), whose prologue before the body has
//! no vector work but registers it makes uniform (a broadcast from memory, a scalar moved
//! in: matmul256's 16 elements of A per row; made at `W` lanes, which every copy reads, and
//! stored to all VL lanes of the register file as they are made, `Tx::store_replicated`) and
//! whose nest's epilogue has none (the
//! epilogue's branch back runs the prologue again, `Tx::edge`), whose body writes
//! no scalar register and no mask, reads `VL` nowhere, and holds only lane-wise vector work
//! (ALU, FP, `V.MOV`, `V.LC0`) and contiguous accesses the span check hoists. Lane `i` of
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
//! The partial last iteration of a nest's rows (a row of a stencil 2,046 points long), when
//! the entry that made the nest compile had one ahead (`Tx::tail`, as the register form's tail
//! copy; a loop alone leaves its one tail as below, `Tx::strip_tail_copy`), runs in a third copy `W` lanes at a time up to the trip count, each under the mask
//! of its lanes below it: computed as a full copy, stores of the active lanes only,
//! registers blended with their old lanes (read from the register file) at the copy's end, as
//! the register form's masked tail does (`StripEdge::masked`), once its whole group of VL
//! lanes is proven as a stretch's are. Anything else (a tail without such a copy, a fault
//! or the budget's end ahead, overlapping accesses, an entry with another mask than
//! `ENDLOOP`'s) leaves for the straight form of the body (`Status::Partial`, as a lazy tail
//! does: one iteration, every access checked), with the state of the last full iteration
//! done. (Leaving for the interpreter instead made a stencil's row tails enter the
//! interpreter in the middle of the body, which compiled and recompiled a straight region
//! there, 3.5 ms of the compiler thread's time ahead of the nest's optimised code; leaving
//! for the straight form, one call per row whose hot recompile took the compiler thread 3-4
//! ms, made the stencils 8-18% slower at VL 64 than their register form, so nests had to
//! have rows of whole groups until the tail copy. With it, tiered at 16 MiB: stencil5_lc0
//! 542-567 -> 735-745 Melem/s at VL 64 and 601-606 -> 695-779 at VL 32, stencil5_vaddr
//! 411-507 -> 704-705 and 553-608 -> 739-741; at 1 MiB 1.2-2.2x.)
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
use super::analysis::{self, Hoisted};
use crate::abi::Status;
use crate::region::Region;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I8, I64X2};
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::Variable;
use lanejit_interp::isa::{Ctl, Inst, SRead, Sem, VRead, VReg};

/// Most pairs of a store and another access the stretch test compares (`Tx::strip_apart`):
/// a bound on the test's code, which bodies of a dozen accesses stay far below.
const MAX_PAIRS: usize = 64;

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
pub(crate) fn strip_width(r: &Region, sregs: Option<[u64; 32]>, vl: u32) -> Option<u32> {
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
        if !lane_wise || fx.writes_s != 0 {
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
    // Every access hoisted and contiguous at that width, with nothing speculated.
    let (mut hoist, stepped) = analysis::hoisted_and_stepped(r, sregs, w);
    if !stepped.is_empty()
        || !analysis::speculate_bases(&mut hoist, sregs).is_empty()
        || analysis::copy_loop(r, &hoist).is_some()
        || !hoist.iter().all(Hoisted::contiguous)
    {
        return None;
    }
    let accesses = body
        .iter()
        .filter(|(_, i)| i.opcode().mem().is_some())
        .count();
    let stores = hoist
        .iter()
        .filter(|h| h.ms().dir == lanejit_interp::isa::Dir::Store)
        .count();
    (hoist.len() == accesses && stores * hoist.len() <= MAX_PAIRS).then_some(w)
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
        let groups = self.span_checks(|_| true);
        k = self.groups_fit(&groups, &ea0s, vl, k);
        let span = self.b.ins().ishl_imm_s(k, log2vl);
        let lim = self.b.ins().iadd(lc, span);
        let apart = self.strip_apart(lc, lim);
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
        let clean = self.exits == exits;

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
        let lane = self.b.ins().band_imm_s(lc, i64::from(edge.vl) - 1);
        let bytes = self.b.ins().ishl_imm_s(lane, 3);
        let base = self.b.ins().iadd(self.regs, bytes);
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
