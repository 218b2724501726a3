//! Loops: the span check hoisted to loop entry (`Tx::precheck`, one `Tx::span_fit` per group
//! of accesses at constant distances, `Tx::span_checks`), the bulk copy of copy loops, and
//! the prologue `LOOP`.
//!
//! In a loop nest whose outer loop counts its rows (`analysis::nest_count`: a stencil's or a
//! matrix product's rows), the first row's entry proves every row's span at once
//! (`Tx::nest_spans_ok`: each group's rows lie in one range, one run lookup each), and the
//! later rows' entries skip their own checks while that proof holds. It took the 5-point
//! stencil's per-row entry (about 140 host instructions, two run lookups; 7% of a 256 x 256
//! grid's time) to a test of the proof: stencil5_lc0 at 256 KiB 3,062-3,108 -> 3,284-3,327
//! Melem/s (jit / native 0.48-0.49x -> 0.52x), stencil5_vaddr 3,076-3,119 -> 3,163-3,225
//! (three alternating runs of both builds).

use super::analysis::StepKind;
use super::{Helper, MAX_SPAN_ITERS, Tx, YIELD_SPAN_LANES};
use crate::abi::{self, Status};
use crate::region::Region;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, Value};
use lanejit_interp::isa::{Inst, SReg, VReg};

/// The most bytes between the lowest and highest invariant constant of hoisted accesses that
/// share one span check ([`Tx::span_checks`]).
const MAX_SPAN_SPREAD: u64 = 1 << 20;

/// One span check of hoisted accesses: the group's lowest access (an index into `Tx::hoist`)
/// and how many bytes above it the group's other accesses start at most.
pub(super) struct SpanCheck {
    pub(super) low: usize,
    pub(super) extra: u64,
}

/// A stretch header's way to fill the page tables a check found not filled ([`Tx::refill`]).
pub(super) struct Refill {
    /// Where the check that proves nothing goes.
    block: Block,
    /// The groups' first addresses in guest memory.
    starts: Vec<Value>,
    /// Where it goes when no chunk was filled.
    none: Block,
    /// The loop's head (its region's start).
    head: u64,
}

impl Tx<'_, '_> {
    /// Most iterations of `vl` lanes one stretch of a loop covers before its header checks
    /// the next: [`MAX_SPAN_ITERS`], or in code that is to leave once its optimised code is
    /// ready ([`super::TxConfig::yields`]) [`YIELD_SPAN_LANES`] lanes' worth.
    pub(super) fn span_cap(&self, vl: u32) -> u64 {
        if self.yield_pc.is_some() {
            (YIELD_SPAN_LANES >> vl.trailing_zeros()).clamp(1, MAX_SPAN_ITERS)
        } else {
            MAX_SPAN_ITERS
        }
    }

    /// Whether code compiled to be replaced ([`super::TxConfig::yields`]) may leave at `to`:
    /// its region's start.
    pub(super) fn yields_at(&self, to: u64) -> bool {
        self.yield_pc == Some(to)
    }

    /// Code compiled to be replaced ([`super::TxConfig::yields`]), at a single loop's stretch
    /// header or at the back edge of a branch loop or a nest to its start, `extra`
    /// instructions (the branch) retired more: first publish where the loop stands
    /// (`progress`: a count that grows to a limit, LC0BASE and the trip count at a header;
    /// `abi::TierWords`); then, when the compiler thread's word names this region, leave for
    /// the dispatcher at `to` (its optimised code is ready and waits for the run to be out of
    /// compiled code), with `Status::Next` and no chained call (which would enter this code
    /// again). Nothing when `to` is not the region's start (a loop with a prologue: nothing
    /// compiled would be entered there).
    pub(super) fn yield_check(&mut self, to: u64, extra: u64, progress: Option<(Value, Value)>) {
        if !self.yields_at(to) {
            return;
        }
        let f = MemFlagsData::trusted();
        if let Some((count, limit)) = progress {
            let tier = self.b.ins().load(I64, f, self.ctx, abi::off::TIER);
            let k = self.iconst(to + 1);
            self.b.ins().store(f, k, tier, abi::off::TIER_AT);
            self.b.ins().store(f, count, tier, abi::off::TIER_LC0);
            self.b.ins().store(f, limit, tier, abi::off::TIER_TRIP);
        }
        let stay = self.stays(to);
        let (leave, cont) = (self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(leave);
        self.b.ins().brif(stay, cont, &[], leave, &[]);
        self.b.switch_to_block(leave);
        self.b.seal_block(leave);
        let zero = self.iconst(0);
        self.b.ins().store(f, zero, self.ctx, abi::off::CHAIN_LEFT);
        self.exit_pc(Status::Next, to, extra);
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
    }

    /// Whether the compiler thread's word does not name the region starting at `to` (non-zero
    /// when the code stays).
    pub(super) fn stays(&mut self, to: u64) -> Value {
        let f = MemFlagsData::trusted();
        let tier = self.b.ins().load(I64, f, self.ctx, abi::off::TIER);
        let at = self
            .b
            .ins()
            .iadd_imm_s(tier, i64::from(abi::off::TIER_LEAVE));
        let word = self.b.ins().atomic_load(I64, f, at);
        self.b
            .ins()
            .icmp_imm_s(IntCC::NotEqual, word, (to + 1) as i64)
    }

    /// Where a counted loop ending in a branch back to its region's start stands after that
    /// branch (`analysis::counted_back_edge`), as a count growing to a limit: its counter
    /// and limit offset by 2^62 (negated for a counter stepping down), for
    /// [`Tx::yield_check`]. `None` for other loops.
    pub(super) fn counted_progress(&mut self) -> Option<(Value, Value)> {
        let (c, l, step) = self.counted?;
        let c = self.sget(c);
        let l = match l {
            lanejit_interp::isa::SOrImm::Reg(r) => self.sget(r),
            lanejit_interp::isa::SOrImm::Imm(k) => self.iconst(i64::from(k) as u64),
        };
        let big = self.iconst(1 << 62);
        Some(if step > 0 {
            (self.b.ins().iadd(c, big), self.b.ins().iadd(l, big))
        } else {
            (self.b.ins().isub(big, c), self.b.ins().isub(big, l))
        })
    }

    /// [`Tx::yield_check`] at the back edge of a branch loop or a nest to `to`, publishing the
    /// count of a counted one.
    pub(super) fn yield_at_back_edge(&mut self, to: u64) {
        if self.yields_at(to) {
            let progress = self.counted_progress();
            self.yield_check(to, 1, progress);
        }
    }

    /// At the header of a hoisting loop with a full mask: find how many iterations from here
    /// all hoisted accesses may make (`Tx::span_fit` per group of accesses, at most the remaining full
    /// iterations, at least this one), record their LC0BASE bound in `lim`, and go to `full`;
    /// with none (a fault ahead), go to `none`.
    ///
    /// `reenter`: the loop's head, when the region starts there (not in a nest): a check that
    /// proves no iteration then first fills the page tables' chunks its groups start in
    /// ([`Tx::refill`]).
    pub(super) fn precheck(
        &mut self,
        full: Block,
        none: Block,
        stream: Option<super::StreamLoop>,
        reenter: Option<u64>,
    ) {
        let log2vl = self.vl.trailing_zeros() as i64;
        let lc = self.b.use_var(self.lc0);
        let trip = self.b.use_var(self.trip);
        let left = self.b.ins().isub(trip, lc);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, lc, trip);
        let q = self.b.ins().ushr_imm_s(left, log2vl);
        // At most MAX_SPAN_ITERS per entry (a bound from when this check scanned the page
        // table; the run-table lookups cost the same for any span); longer loops come back to
        // the header and check their next stretch.
        let cap = self.iconst(self.span_cap(self.vl));
        let big = self.b.ins().icmp(IntCC::UnsignedGreaterThan, q, cap);
        let q = self.b.ins().select(big, cap, q);
        let zero = self.iconst(0);
        let q = self.b.ins().select(more, q, zero);
        let one = self.iconst(1);
        let q_is0 = self.b.ins().icmp_imm_s(IntCC::Equal, q, 0);
        let mut k = self.b.ins().select(q_is0, one, q);
        // In a nest with a masked tail after the streaming copy's last iteration
        // (`Tx::tail_ahead`): the tail's group of VL lanes too, when it follows these
        // iterations (a partial one left, no cap).
        let q_full = k;
        if self.tail_proven.is_some() {
            let part = self.b.ins().band_imm_s(left, self.vl as i64 - 1);
            let part = self.b.ins().icmp_imm_s(IntCC::NotEqual, part, 0);
            let small = self.b.ins().bxor_imm_s(big, 1);
            let t = self.b.ins().band(part, small);
            let t = self.b.ins().band(t, more);
            let t = self.b.ins().uextend(I64, t);
            k = self.b.ins().iadd(k, t);
        }
        // Per access: its loop-invariant host base (so the loop keeps one register per
        // access); then one span check per group of accesses at constant distances.
        let mut hosts = Vec::new();
        let mut ea0s = Vec::new();
        for hz in self.hoist.clone() {
            let (h, ea0) = self.hoisted_at(&hz, lc);
            let var = self.b.declare_var(I64);
            self.b.def_var(var, h);
            hosts.push(var);
            ea0s.push(ea0);
        }
        let groups = self.span_checks(|_| true);
        // In a counted nest, the rows' spans proven once (`Tx::nest_spans_ok`) stand for
        // every row's check: `k` as it is.
        let join = self.nest_proof(&groups).map(|(state, count, deltas)| {
            let (prove, decide, check) = (
                self.b.create_block(),
                self.b.create_block(),
                self.b.create_block(),
            );
            let join = self.b.create_block();
            self.b.append_block_param(join, I64);
            let st = self.b.use_var(state);
            self.b.ins().brif(st, decide, &[], prove, &[]);
            self.b.switch_to_block(prove);
            self.b.seal_block(prove);
            let ok = self.nest_spans_ok(&count, &groups, &deltas, &ea0s, lc);
            let (yes, no) = (self.iconst(1), self.iconst(2));
            let st = self.b.ins().select(ok, yes, no);
            self.b.def_var(state, st);
            self.b.ins().jump(decide, &[]);
            self.b.switch_to_block(decide);
            self.b.seal_block(decide);
            // A full group of lanes ahead at an LC0BASE a multiple of VL, as every one is:
            // what this check covers then lies in the row's proven span.
            let st = self.b.use_var(state);
            let proven = self.b.ins().icmp_imm_s(IntCC::Equal, st, 1);
            let whole = self.b.ins().band_imm_s(lc, self.vl as i64 - 1);
            let whole = self.b.ins().icmp_imm_s(IntCC::Equal, whole, 0);
            let ahead = self.b.ins().icmp_imm_s(IntCC::NotEqual, q, 0);
            let go = self.b.ins().band(proven, whole);
            let go = self.b.ins().band(go, ahead);
            self.b.ins().brif(go, join, &[k.into()], check, &[]);
            self.b.switch_to_block(check);
            self.b.seal_block(check);
            join
        });
        k = self.groups_fit(&groups, &ea0s, self.vl, k);
        if let Some(join) = join {
            self.b.ins().jump(join, &[k.into()]);
            self.b.switch_to_block(join);
            self.b.seal_block(join);
            k = self.b.block_params(join)[0];
        }
        self.hoist_host = hosts;
        if let Some(ok) = self.spec_ok() {
            // A speculated base distance that does not hold: no proven iteration.
            let zero = self.iconst(0);
            k = self.b.ins().select(ok, k, zero);
        }
        if let Some(var) = self.tail_proven {
            // The tail's LC0BASE when its group was proven too, else `u64::MAX`.
            let tail = self.b.ins().icmp(IntCC::UnsignedGreaterThan, k, q_full);
            let span = self.b.ins().ishl_imm_s(q_full, log2vl);
            let at = self.b.ins().iadd(lc, span);
            let none = self.iconst(u64::MAX);
            let at = self.b.ins().select(tail, at, none);
            self.b.def_var(var, at);
            k = self.b.ins().umin(k, q_full);
        }
        let span = self.b.ins().ishl_imm_s(k, log2vl);
        let lim = self.b.ins().iadd(lc, span);
        let var = self.b.declare_var(I64);
        self.b.def_var(var, lim);
        self.lim = Some(var);
        let (none, refill) = self.refill_block(none, &groups, &ea0s, reenter);
        match (self.copy_loop, stream) {
            (None, Some(st)) => {
                // The streaming copy when it applies (see `Tx::stream`): at least two proven
                // iterations, the budget covering two, and no hoisted load reading what a
                // hoisted store of the proven iterations writes.
                let two = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, k, 2);
                let fits = self.budget_fits(0, 2 * st.body_len);
                let mut disjoint = self.stream_disjoint(lc, lim);
                if self.defer_plan {
                    let apart = self.stores_apart(lc, lim);
                    disjoint = self.b.ins().band(disjoint, apart);
                }
                let go = self.b.ins().band(two, fits);
                let go = self.b.ins().band(go, disjoint);
                let some = self.b.create_block();
                self.b.ins().brif(k, some, &[], none, &[]);
                self.b.switch_to_block(some);
                self.b.seal_block(some);
                self.b.ins().brif(go, st.top, &[], full, &[]);
            }
            (None, None) => {
                self.b.ins().brif(k, full, &[], none, &[]);
            }
            (Some(log2e), _) => {
                let bulk = self.b.create_block();
                self.b.ins().brif(k, bulk, &[], none, &[]);
                self.b.switch_to_block(bulk);
                self.b.seal_block(bulk);
                self.bulk_copy(k, lc, log2e, full);
            }
        }
        if let Some(r) = refill {
            self.refill(r);
        }
    }

    /// The block a stretch header whose check proves nothing goes to instead of `none` (and
    /// what [`Tx::refill`] then emits there), when the region starts at the loop's head
    /// (`reenter`) and some group lies in guest memory: `(none, None)` otherwise.
    pub(super) fn refill_block(
        &mut self,
        none: Block,
        groups: &[SpanCheck],
        ea0s: &[Value],
        reenter: Option<u64>,
    ) -> (Block, Option<Refill>) {
        let starts: Vec<Value> = groups
            .iter()
            .filter(|g| !self.hoist[g.low].inst.is_local())
            .map(|g| ea0s[g.low])
            .collect();
        match reenter {
            Some(head) if !starts.is_empty() => {
                let block = self.b.create_block();
                self.b.set_cold_block(block);
                let r = Refill {
                    block,
                    starts,
                    none,
                    head,
                };
                (block, Some(r))
            }
            _ => (none, None),
        }
    }

    /// Guest memory's page tables are filled 16 MiB at a time on first use, and compiled
    /// code reads a chunk not filled yet as unmapped: a loop whose next stretch starts in
    /// one (a loop crossing into the next 16 MiB of its arrays) proves no iteration. So at
    /// `r.block` the chunks where the groups start are filled (`abi::lj_fill`), and when one
    /// was not filled before, the loop leaves for its head (an exit chained into its own code
    /// again, whose check now sees the chunk); else it goes on to `r.none` (a fault or an
    /// overlap ahead). Before, the iteration left for the straight form of the body (its
    /// first compile on the run's path, 0.4-0.6 ms), whose helpers left for the
    /// interpreter, once per array and 16 MiB.
    pub(super) fn refill(&mut self, r: Refill) {
        self.b.switch_to_block(r.block);
        self.b.seal_block(r.block);
        let f = MemFlagsData::trusted();
        let memory = self.b.ins().load(I64, f, self.ctx, abi::off::MEMORY);
        let sig = self.sig(Helper::Fill);
        let mut any = self.iconst(0);
        for ea in r.starts {
            let at = self.helper_addr(abi::HelperFn::Fill);
            let c = self.b.ins().call_indirect(sig, at, &[memory, ea]);
            let filled = self.b.inst_results(c)[0];
            any = self.b.ins().bor(any, filled);
        }
        let again = self.b.create_block();
        self.b.set_cold_block(again);
        self.b.ins().brif(any, again, &[], r.none, &[]);
        self.b.switch_to_block(again);
        self.b.seal_block(again);
        self.exit_pc(Status::Next, r.head, 0);
    }

    /// The entry of the masked tail copy (see `Tx::masked_tail`): the mask must be a prefix
    /// (the lanes below the trip count, as `LOOP` and `ENDLOOP` leave it; the stores of
    /// iteration-local registers rely on it, see `Tx::store_prefix`), and every hoisted
    /// access's group at the current LC0BASE, all VL lanes, is checked for its permission (and
    /// lane 0's alignment under `--strict-align`); its host base recorded as `Tx::precheck`
    /// does. All pass: `top`; else `fail` (the straight form then runs the iteration lane by
    /// lane).
    pub(super) fn masked_tail_entry(&mut self, top: Block, fail: Block) {
        if let Some(go) = self.tail_go {
            // Checked already by the streaming copy's last iteration (`Tx::tail_ahead`).
            let (sure, check) = (self.b.create_block(), self.b.create_block());
            let at = self.b.use_var(go);
            let lc = self.b.use_var(self.lc0);
            let hit = self.b.ins().icmp(IntCC::Equal, at, lc);
            self.b.ins().brif(hit, sure, &[], check, &[]);
            self.b.switch_to_block(sure);
            self.b.seal_block(sure);
            let none = self.iconst(u64::MAX);
            self.b.def_var(go, none);
            for (j, hz) in self.hoist.clone().into_iter().enumerate() {
                let (h, _) = self.hoisted_at(&hz, lc);
                self.b.def_var(self.hoist_host[j], h);
            }
            self.b.ins().jump(top, &[]);
            self.b.switch_to_block(check);
            self.b.seal_block(check);
        }
        let m = self.b.use_var(self.mask);
        let plus = self.b.ins().iadd_imm_s(m, 1);
        let t = self.b.ins().band(m, plus);
        // Not a prefix, or a speculated base distance that does not hold: `fail`.
        let t = match self.spec_ok() {
            Some(ok) => {
                let bad = self.b.ins().bxor_imm_s(ok, 1);
                let bad = self.b.ins().uextend(cranelift_codegen::ir::types::I64, bad);
                self.b.ins().bor(t, bad)
            }
            None => t,
        };
        let next = self.b.create_block();
        self.b.ins().brif(t, fail, &[], next, &[]);
        self.b.switch_to_block(next);
        self.b.seal_block(next);
        let lc = self.b.use_var(self.lc0);
        let ea0s = self.hoist_hosts_at(lc);
        for g in self.span_checks(|_| true) {
            let hz = &self.hoist[g.low];
            let (ms, local) = (hz.ms(), hz.inst.is_local());
            let need = super::mem::need(ms);
            let amask = self.align_mask(ms);
            let next = self.b.create_block();
            let len = hz.group_bytes(self.vl) + g.extra;
            self.check_space(local, ea0s[g.low], len, need, amask, next, fail);
            self.b.switch_to_block(next);
            self.b.seal_block(next);
        }
        if !self.pure_tail() {
            self.b.ins().jump(top, &[]);
            return;
        }
        // The tail's loads are pure (`Tx::readonly`) when no store of the iteration writes
        // what they read.
        let lim = self.b.ins().iadd_imm_s(lc, self.vl as i64);
        let disjoint = self.stream_disjoint(lc, lim);
        self.b.ins().brif(disjoint, top, &[], fail, &[]);
    }

    /// At the top of the streaming copy's last iteration in a nest (`body_len` instructions;
    /// LC0BASE `lc`): whether the masked tail is certain to follow in line, its entry's
    /// checks passing, with nothing that could leave the function between (the budget
    /// covers this iteration and the tail; the tail runs to its `ENDLOOP` without exits).
    /// Then the lanes the tail overwrites need not be stored by this iteration. Records the
    /// tail's LC0BASE in `Tx::tail_go` (its entry skips the checks made here) and returns
    /// the tail's lane count, else 0 (and `u64::MAX` recorded).
    pub(super) fn tail_ahead(&mut self, lc: Value, body_len: u64) -> Value {
        let vl = self.vl as i64;
        let trip = self.b.use_var(self.trip);
        let next = self.b.ins().iadd_imm_s(lc, vl);
        // The tail's lane count, when the next iteration is one (1 to VL - 1 lanes left).
        let rem = self.b.ins().isub(trip, next);
        let r1 = self.b.ins().iadd_imm_s(rem, -1);
        let mut ok = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, r1, vl - 1);
        let fits = self.budget_fits(0, 2 * body_len);
        ok = self.b.ins().band(ok, fits);
        // The tail's checks (`Tx::masked_tail_entry`: every group of VL lanes at its LC0BASE
        // in its space with its permission and alignment, the speculated distances) made by
        // the span check at loop entry (`Tx::precheck`, `Tx::tail_proven`).
        let proven = self.b.use_var(self.tail_proven.expect("a proven tail"));
        let at = self.b.ins().icmp(IntCC::Equal, proven, next);
        ok = self.b.ins().band(ok, at);
        if self.pure_tail() {
            let end = self.b.ins().iadd_imm_s(next, vl);
            let disjoint = self.stream_disjoint(next, end);
            ok = self.b.ins().band(ok, disjoint);
        }
        let none = self.iconst(u64::MAX);
        let at = self.b.ins().select(ok, next, none);
        self.b.def_var(self.tail_go.expect("a nest's tail"), at);
        let zero = self.iconst(0);
        self.b.ins().select(ok, rem, zero)
    }

    /// Whether every speculated base distance (`Tx::spec`) holds now (an `i8`), or `None`
    /// without speculation.
    pub(super) fn spec_ok(&mut self) -> Option<Value> {
        if self.spec.is_empty() && self.stepped.is_empty() {
            return None;
        }
        let mut ok = self.b.ins().iconst(cranelift_codegen::ir::types::I8, 1);
        for (a, b, d) in self.spec.clone() {
            let va = self.sget(a);
            let vb = self.sget(b);
            let diff = self.b.ins().isub(vb, va);
            let eq = self.b.ins().icmp_imm_s(IntCC::Equal, diff, d);
            ok = self.b.ins().band(ok, eq);
        }
        // Stepped registers (`analysis::Stepped`): a bump's step still `VL * e` (an
        // immediate one was checked when translating), a vector's lanes `e` apart now.
        // In the strip-mined form, at the loop's lanes (`Tx::vl` is a copy's), from the
        // register file.
        let vl = self.strip_vl.unwrap_or(self.vl);
        for st in self.stepped.clone() {
            let want = (vl as i64).wrapping_mul(st.e);
            if let Some(s) = st.step {
                let x = self.sget(s);
                let x = if st.neg { self.b.ins().ineg(x) } else { x };
                let eq = self.b.ins().icmp_imm_s(IntCC::Equal, x, want);
                ok = self.b.ins().band(ok, eq);
            }
            if vl > 1 && st.kind != StepKind::Scalar {
                let r = lanejit_interp::isa::VReg(st.reg);
                let chunks = if self.strip_vl.is_some() {
                    (0..vl as usize / 2).map(|c| self.vload(r, c)).collect()
                } else {
                    self.vget_all(r)
                };
                let (_, t) = self.lanes_step(&chunks, st.e);
                ok = self.b.ins().band(ok, t);
            }
        }
        Some(ok)
    }

    /// A hoisted access's host address of its EA at LC0BASE 0 (its space's base plus the
    /// loop-invariant part), and lane 0's EA at LC0BASE `lc`.
    fn hoisted_at(&mut self, hz: &super::analysis::Hoisted, lc: Value) -> (Value, Value) {
        let bo = self.inv_value(&hz.inv);
        let sb = self.space(hz.inst.is_local()).0;
        let h = self.b.ins().iadd(sb, bo);
        if hz.uniform {
            return (h, bo);
        }
        let l = self.b.ins().ishl_imm_s(lc, hz.log2s as i64);
        (h, self.b.ins().iadd(bo, l))
    }

    /// For [`Tx::precheck`] in a counted nest (`Tx::nest_span`): its proof's state variable
    /// (0 not tried yet in this call, 1 proven, 2 not), the outer loop's count, and per span
    /// check group what one outer iteration adds to its addresses; `None` when some group's
    /// addresses do not step by a constant (a base register changed otherwise), the step is
    /// not below 2^31 or breaks the alignment `--strict-align` asks for.
    fn nest_proof(
        &self,
        groups: &[SpanCheck],
    ) -> Option<(
        cranelift_frontend::Variable,
        super::analysis::NestCount,
        Vec<i64>,
    )> {
        let (state, count) = self.nest_span.clone()?;
        let deltas = groups
            .iter()
            .map(|g| {
                let hz = &self.hoist[g.low];
                let d = hz.inv.terms.iter().try_fold(0i64, |acc, &(r, c)| {
                    let s = count.steps.get(r.0 as usize).copied().flatten()?;
                    acc.checked_add(c.checked_mul(s)?)
                })?;
                let amask = self.align_mask(hz.ms());
                (d.unsigned_abs() < 1 << 31 && d as u64 & amask == 0).then_some(d)
            })
            .collect::<Option<Vec<i64>>>()?;
        Some((state, count, deltas))
    }

    /// Whether every row of the nest from this one (at LC0BASE `lc`, at the inner loop's
    /// header) to its last has every group of `groups` in its space, permitted and aligned,
    /// for the whole trip count (rounded up to groups of VL lanes, as [`Tx::precheck`] checks
    /// them): the rows left come from the outer branch's counter (`count`), row `j` after
    /// this one has its addresses `j * deltas[g]` from this one's, so the rows' spans
    /// together lie in one range per group, which one run lookup checks. Conservative: the
    /// range from the row's LC0BASE 0, the bytes between rows included; any doubt (counts
    /// of 2^31 rows or more, trip counts of 2^40 or more, a limit the counter could step
    /// past by wrapping) gives no proof, and every row checks its own span.
    fn nest_spans_ok(
        &mut self,
        count: &super::analysis::NestCount,
        groups: &[SpanCheck],
        deltas: &[i64],
        ea0s: &[Value],
        lc: Value,
    ) -> Value {
        use lanejit_interp::isa::{Cond, SOrImm};
        let step = count.steps[count.counter.0 as usize].expect("a counted nest");
        let x = self.sget(count.counter);
        let x0 = self.b.ins().iadd_imm_s(x, count.before);
        let limit = match count.limit {
            SOrImm::Reg(r) => self.sget(r),
            SOrImm::Imm(i) => self.iconst(i64::from(i) as u64),
        };
        let zero = self.iconst(0);
        // Outer iterations after this one: `j`, each taken branch one.
        let (j, mut ok) = match count.cond {
            Cond::Ne => {
                // By 1 at a time: the distance the counter goes to the limit.
                let j = if step < 0 {
                    self.b.ins().isub(x0, limit)
                } else {
                    self.b.ins().isub(limit, x0)
                };
                (j, self.b.ins().iconst(cranelift_codegen::ir::types::I8, 1))
            }
            _ => {
                let signed = count.cond == Cond::Lt;
                let (lt, le, max) = if signed {
                    (
                        IntCC::SignedLessThan,
                        IntCC::SignedLessThanOrEqual,
                        (i64::MAX - step) as u64,
                    )
                } else {
                    (
                        IntCC::UnsignedLessThan,
                        IntCC::UnsignedLessThanOrEqual,
                        u64::MAX - step as u64,
                    )
                };
                let below = self.b.ins().icmp(lt, x0, limit);
                let diff = self.b.ins().isub(limit, x0);
                let diff = self.b.ins().select(below, diff, zero);
                // The counter cannot step past the limit by wrapping around.
                let maxv = self.iconst(max);
                let no_wrap = self.b.ins().icmp(le, limit, maxv);
                let small = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedLessThan, diff, 1 << 40);
                let ok = self.b.ins().band(no_wrap, small);
                let j = if step == 1 {
                    diff
                } else {
                    let d = self.b.ins().iadd_imm_s(diff, step - 1);
                    let s = self.iconst(step as u64);
                    self.b.ins().udiv(d, s)
                };
                (j, ok)
            }
        };
        let trip = self.b.use_var(self.trip);
        let rows = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, j, 1 << 31);
        let trip_ok = self.b.ins().iadd_imm_s(trip, -1);
        let trip_ok = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedLessThan, trip_ok, (1 << 40) - 1);
        ok = self.b.ins().band(ok, rows);
        ok = self.b.ins().band(ok, trip_ok);
        let log2vl = self.vl.trailing_zeros() as i64;
        let up = self.b.ins().iadd_imm_s(trip, self.vl as i64 - 1);
        let groups_len = self.b.ins().ushr_imm_s(up, log2vl);
        for (g, &d) in groups.iter().zip(deltas) {
            let hz = &self.hoist[g.low];
            let (ms, local, log2s) = (hz.ms(), hz.inst.is_local(), hz.log2s as i64);
            let need = super::mem::need(ms);
            let amask = self.align_mask(ms);
            let (base, len) = if hz.uniform {
                // Each row's one element (and its group's `extra`).
                (ea0s[g.low], self.iconst(ms.width() + g.extra))
            } else {
                let l = self.b.ins().ishl_imm_s(lc, log2s);
                let base = self.b.ins().isub(ea0s[g.low], l);
                let len = self.b.ins().ishl_imm_s(groups_len, log2vl + log2s);
                (base, self.b.ins().iadd_imm_s(len, g.extra as i64))
            };
            let far = self.b.ins().imul_imm_s(j, d.unsigned_abs() as i64);
            let total = self.b.ins().iadd(far, len);
            let lo = if d >= 0 {
                base
            } else {
                let fits = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, far, base);
                ok = self.b.ins().band(ok, fits);
                self.b.ins().isub(base, far)
            };
            let in_space = self.range_ok(local, lo, total, need, amask);
            ok = self.b.ins().band(ok, in_space);
        }
        ok
    }

    /// Whether `[lo, lo + len)` (`len` at least 1) lies in the space of `local` with
    /// permission `need` in every unit (`lo` aligned to `amask`): one run lookup, as
    /// [`Tx::check_space`] does for a length known at compile time.
    fn range_ok(&mut self, local: bool, lo: Value, len: Value, need: u8, amask: u64) -> Value {
        let (_, size, shift) = self.space(local);
        let zero = self.iconst(0);
        let inb = self.b.ins().icmp(IntCC::UnsignedLessThan, lo, size);
        let lo_in = self.b.ins().select(inb, lo, zero);
        let room = self.b.ins().isub(size, lo_in);
        let fits = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, room, len);
        let ok = self.b.ins().band(inb, fits);
        let ok = self.and_aligned(ok, lo, amask);
        let u0 = self.b.ins().ushr_imm_s(lo_in, shift);
        let last = self.b.ins().iadd(lo_in, len);
        let last = self.b.ins().iadd_imm_s(last, -1);
        let u1 = self.b.ins().ushr_imm_s(last, shift);
        let span = self.b.ins().isub(u1, u0);
        let run = self.run_at(local, need, u0);
        let covered = self.b.ins().icmp(IntCC::UnsignedLessThan, span, run);
        self.b.ins().band(ok, covered)
    }

    /// The hoisted accesses grouped for their span checks (`Tx::precheck`,
    /// `Tx::masked_tail_entry`): accesses in the same space, of the same element width,
    /// permission and scalar terms, whose invariant constants differ by at most
    /// [`MAX_SPAN_SPREAD`] (and by a multiple of the alignment under `--strict-align`). In
    /// every lane and iteration their EAs are the lowest one's plus a constant of at most the
    /// group's `extra` bytes, without wrapping once the lowest is in the space (whose size is
    /// far below `2^64 - MAX_SPAN_SPREAD`), so one check of the lowest's range widened by
    /// `extra` covers them all: the matrix kernel's 16 tile rows or a stencil's three rows
    /// cost one table lookup per loop entry instead of one each. Bytes in the gaps between
    /// the accesses are checked too; a hole there only sends iterations to the checked path.
    pub(super) fn span_checks(&self, keep: impl Fn(usize) -> bool) -> Vec<SpanCheck> {
        let mut order: Vec<usize> = (0..self.hoist.len()).filter(|&j| keep(j)).collect();
        order.sort_by_key(|&j| self.hoist[j].inv.k);
        let mut groups: Vec<SpanCheck> = Vec::new();
        for j in order {
            let hz = &self.hoist[j];
            let ms = hz.ms();
            let amask = self.align_mask(ms);
            let joined = groups.iter_mut().find_map(|g| {
                let lo = &self.hoist[g.low];
                let lms = lo.ms();
                let d = hz.inv.k.checked_sub(lo.inv.k)?;
                let same = lo.inst.is_local() == hz.inst.is_local()
                    && lms.log2e == ms.log2e
                    && lo.log2s == hz.log2s
                    && lo.uniform == hz.uniform
                    && super::mem::need(lms) == super::mem::need(ms)
                    && self.align_mask(lms) == amask
                    && lo.inv.terms == hz.inv.terms
                    && (0..=MAX_SPAN_SPREAD as i64).contains(&d)
                    && d as u64 & amask == 0;
                same.then_some((g, d as u64))
            });
            match joined {
                Some((g, d)) => g.extra = g.extra.max(d),
                None => groups.push(SpanCheck { low: j, extra: 0 }),
            }
        }
        groups
    }

    /// How many of `k` groups of `1 << lg` bytes from `lo`, each widened by `extra` bytes
    /// (see [`Tx::span_checks`]), lie in the space of `local` with permission `need` (and
    /// `lo` aligned to `amask`): group `g` counts when `[lo, lo + extra + (g + 1) << lg)`
    /// does. One lookup in the space's permitted-run table (pages of guest memory, granules of
    /// tile space), whatever the span: runs are exact unit counts, and in line (a helper call
    /// would clobber what the loop keeps in registers and make the allocator spill it for the
    /// whole loop).
    #[allow(clippy::too_many_arguments)]
    fn span_fit(
        &mut self,
        local: bool,
        lo: Value,
        lg: u32,
        k: Value,
        need: u8,
        amask: u64,
        extra: u64,
    ) -> Value {
        let (_, size, shift) = self.space(local);
        let zero = self.iconst(0);
        let inb = self.b.ins().icmp(IntCC::UnsignedLessThan, lo, size);
        let ok = self.and_aligned(inb, lo, amask);
        // Out of range reads unit 0's run instead (`ok` is false then).
        let lo_in = self.b.ins().select(inb, lo, zero);
        let avail = self.b.ins().isub(size, lo_in);
        let fit = self.groups_past(avail, extra, lg);
        let u0 = self.b.ins().ushr_imm_s(lo_in, shift);
        let run = self.run_at(local, need, u0);
        // Permitted bytes from `lo`: the run's units less lo's offset in its unit (no wrap:
        // a run of 0 gives 0).
        let run_bytes = self.b.ins().ishl_imm_s(run, shift);
        let inner = self.b.ins().band_imm_s(lo_in, (1i64 << shift) - 1);
        let has = self.b.ins().icmp_imm_s(IntCC::NotEqual, run, 0);
        let pb = self.b.ins().isub(run_bytes, inner);
        let pb = self.b.ins().select(has, pb, zero);
        let pfit = self.groups_past(pb, extra, lg);
        let g = self.b.ins().umin(k, fit);
        let g = self.b.ins().umin(g, pfit);
        self.b.ins().select(ok, g, zero)
    }

    /// How many of `k` groups of `vl` lanes from lane 0's EAs `ea0s` (one per hoisted access)
    /// every span check of `groups` lets all hoisted accesses make (`Tx::span_fit` per group).
    pub(super) fn groups_fit(
        &mut self,
        groups: &[SpanCheck],
        ea0s: &[Value],
        vl: u32,
        mut k: Value,
    ) -> Value {
        for g in groups {
            let hz = &self.hoist[g.low];
            let (ms, local) = (hz.ms(), hz.inst.is_local());
            let need = super::mem::need(ms);
            let lg = vl.trailing_zeros() + hz.log2s as u32;
            let amask = self.align_mask(ms);
            if hz.uniform {
                // The same bytes in every iteration: all `k` or none.
                let len = self.iconst(ms.width() + g.extra);
                let ok = self.range_ok(local, ea0s[g.low], len, need, amask);
                let zero = self.iconst(0);
                k = self.b.ins().select(ok, k, zero);
                continue;
            }
            k = self.span_fit(local, ea0s[g.low], lg, k, need, amask, g.extra);
        }
        k
    }

    /// Define every hoisted access's host base (`Tx::hoist_host`) for LC0BASE `lc`; lane 0's
    /// EA of each at `lc`.
    pub(super) fn hoist_hosts_at(&mut self, lc: Value) -> Vec<Value> {
        let mut ea0s = Vec::new();
        for (j, hz) in self.hoist.clone().iter().enumerate() {
            let (h, ea0) = self.hoisted_at(hz, lc);
            self.b.def_var(self.hoist_host[j], h);
            ea0s.push(ea0);
        }
        ea0s
    }

    /// `(bytes - extra) >> lg`, or 0 when `bytes <= extra`.
    fn groups_past(&mut self, bytes: Value, extra: u64, lg: u32) -> Value {
        if extra == 0 {
            return self.b.ins().ushr_imm_s(bytes, lg as i64);
        }
        let zero = self.iconst(0);
        let more = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThan, bytes, extra as i64);
        let rest = self.b.ins().iadd_imm_s(bytes, -(extra as i64));
        let rest = self.b.ins().select(more, rest, zero);
        self.b.ins().ushr_imm_s(rest, lg as i64)
    }

    /// The value of a loop-invariant symbolic form (scalars and a constant).
    pub(super) fn inv_value(&mut self, s: &super::shape::Sym) -> Value {
        let mut acc = self.iconst(s.k as u64);
        for &(r, c) in &s.terms {
            let x = match self.stepped.iter().find(|st| st.pseudo() == r).copied() {
                // A stepped register's base, at the start of an iteration (a loop's header
                // or its masked tail's entry): lane 0 (the scalar) less `e` times LC0BASE
                // (`analysis::Stepped::form`).
                Some(st) => {
                    let x = match st.kind {
                        StepKind::Scalar => self.sget(SReg(st.reg)),
                        StepKind::Vector | StepKind::Fixed => {
                            let ch = self.vget(lanejit_interp::isa::VReg(st.reg), 0);
                            self.b.ins().extractlane(ch, 0)
                        }
                    };
                    if st.kind == StepKind::Fixed {
                        x
                    } else {
                        let lc = self.b.use_var(self.lc0);
                        let off = self.b.ins().imul_imm_s(lc, st.e);
                        self.b.ins().isub(x, off)
                    }
                }
                None => {
                    debug_assert!(
                        !super::shape::is_pseudo(r),
                        "a stepped register of this loop"
                    );
                    self.sget(r)
                }
            };
            let t = if c == 1 {
                x
            } else {
                self.b.ins().imul_imm_s(x, c)
            };
            acc = self.b.ins().iadd(acc, t);
        }
        acc
    }

    /// Whether the budget has room for `n` more instructions after `extra` beyond the
    /// retired count (always, without an instruction limit).
    pub(super) fn budget_fits(&mut self, extra: u64, n: u64) -> Value {
        if !self.budgeted {
            return self.b.ins().iconst(cranelift_codegen::ir::types::I8, 1);
        }
        let r = self.b.use_var(self.retired);
        let r = self.b.ins().iadd_imm_s(r, extra as i64);
        let room = self.b.ins().isub(self.budget, r);
        self.b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, room, n as i64)
    }

    /// Whether the masked tail's loads may be pure (`Tx::readonly`, checked at its entry by
    /// [`Tx::stream_disjoint`]): not when compiled to keep them in order
    /// (`TxConfig::ordered_tail`), nor when a hoisted load and a hoisted store at constant
    /// distances from the same scalar terms overlap in one iteration whatever those terms
    /// hold (an in-place shift such as `a[i] = f(a[i + 1])`), which the entry's test would
    /// send to the straight form every time.
    pub(super) fn pure_tail(&self) -> bool {
        if self.ordered_tail {
            return false;
        }
        let groups = self.overlap_groups();
        let range = |g: &SpanCheck| {
            let hz = &self.hoist[g.low];
            let len = hz.group_bytes(self.vl) + g.extra;
            (hz.inv.k as i128, hz.inv.k as i128 + len as i128)
        };
        !groups.iter().any(|l| {
            let lh = &self.hoist[l.low];
            lh.ms().dir == lanejit_interp::isa::Dir::Load
                && groups.iter().any(|s| {
                    let sh = &self.hoist[s.low];
                    let ((ls, le), (ss, se)) = (range(l), range(s));
                    sh.ms().dir == lanejit_interp::isa::Dir::Store
                        && sh.inst.is_local() == lh.inst.is_local()
                        && sh.inv.terms == lh.inv.terms
                        && sh.inv.lc0 == lh.inv.lc0
                        && ls < se
                        && ss < le
                })
        })
    }

    /// The span-check groups of the hoisted accesses whose overlap matters for moving loads
    /// ([`Tx::stream_disjoint`], [`Tx::pure_tail`]): all but the in-place loads
    /// (`Tx::ordered`), which keep their order.
    fn overlap_groups(&self) -> Vec<SpanCheck> {
        let ordered = self.ordered;
        self.span_checks(|j| {
            let is_load = self.hoist[j].ms().dir == lanejit_interp::isa::Dir::Load;
            !(is_load && ordered & (1 << j) != 0)
        })
    }

    /// Whether, over the iterations from LC0BASE `lc` up to `lim`, the bytes every hoisted
    /// load that may move reads and the bytes every hoisted store writes are disjoint. All lie
    /// in their space, proved, so no range wraps. The accesses are taken in the groups of
    /// their span checks ([`Tx::span_checks`]: a stencil's three rows are one range, from
    /// the lowest's start to the highest's end); loads and stores in different spaces (guest
    /// memory and tile space are separate host allocations) are never compared. In-place
    /// loads (`Tx::ordered`) keep their order and are not compared.
    fn stream_disjoint(&mut self, lc: Value, lim: Value) -> Value {
        let groups = self.overlap_groups();
        let mut ranges = Vec::new();
        for g in groups {
            let hz = &self.hoist[g.low];
            let (local, is_load) = (
                hz.inst.is_local(),
                hz.ms().dir == lanejit_interp::isa::Dir::Load,
            );
            let (start, end) = self.span_bytes(g.low, lc, lim, g.extra);
            ranges.push((local, is_load, start, end));
        }
        let mut ok = self.b.ins().iconst(cranelift_codegen::ir::types::I8, 1);
        for &(lspace, _, ls, le) in ranges.iter().filter(|r| r.1) {
            for &(_, _, ss, se) in ranges.iter().filter(|r| !r.1 && r.0 == lspace) {
                ok = self.and_apart(ok, (ls, le), (ss, se));
            }
        }
        ok
    }

    /// The bytes hoisted access `j` touches over the iterations from LC0BASE `lc` up to
    /// `lim`, widened by `extra` (`[start, end)`, proved, so neither end wraps).
    pub(super) fn span_bytes(
        &mut self,
        j: usize,
        lc: Value,
        lim: Value,
        extra: u64,
    ) -> (Value, Value) {
        let log2s = self.hoist[j].log2s as i64;
        let h = self.b.use_var(self.hoist_host[j]);
        if self.hoist[j].uniform {
            // Its one element, whatever the iterations.
            let width = self.hoist[j].ms().width();
            let end = self.b.ins().iadd_imm_s(h, (width + extra) as i64);
            return (h, end);
        }
        let a = self.b.ins().ishl_imm_s(lc, log2s);
        let e = self.b.ins().ishl_imm_s(lim, log2s);
        let start = self.b.ins().iadd(h, a);
        let end = self.b.ins().iadd(h, e);
        let end = if extra == 0 {
            end
        } else {
            self.b.ins().iadd_imm_s(end, extra as i64)
        };
        (start, end)
    }

    /// `ok` and whether byte ranges `a` and `b` (`[start, end)`) are disjoint.
    pub(super) fn and_apart(&mut self, ok: Value, a: (Value, Value), b: (Value, Value)) -> Value {
        let apart = self.apart(a, b);
        self.b.ins().band(ok, apart)
    }

    /// Whether byte ranges `a` and `b` (`[start, end)`) are disjoint.
    fn apart(&mut self, a: (Value, Value), b: (Value, Value)) -> Value {
        let before = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, b.1, a.0);
        let after = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, a.1, b.0);
        self.b.ins().bor(before, after)
    }

    /// Whether, over the iterations from LC0BASE `lc` up to `lim`, no two hoisted stores
    /// write one byte (each store's own range, in its space; proved, so none wraps): then
    /// the stores of an iteration may go in any order (`Tx::defer_plan`). Two strided stores
    /// of one stride `S` and element width `E` (the fields of one array of records) whose
    /// lane 0 addresses differ by `E` to `S - E` modulo `S` never write one byte, whatever
    /// their ranges.
    fn stores_apart(&mut self, lc: Value, lim: Value) -> Value {
        let mut ranges = Vec::new();
        for j in 0..self.hoist.len() {
            let hz = &self.hoist[j];
            if hz.ms().dir != lanejit_interp::isa::Dir::Store {
                continue;
            }
            let (local, log2s, log2e) = (hz.inst.is_local(), hz.log2s, hz.ms().log2e);
            let (start, end) = self.span_bytes(j, lc, lim, 0);
            ranges.push((local, start, end, log2s, log2e));
        }
        let mut ok = self.b.ins().iconst(cranelift_codegen::ir::types::I8, 1);
        for (i, &(la, sa, ea, lsa, lea)) in ranges.iter().enumerate() {
            for &(lb, sb, eb, lsb, leb) in &ranges[i + 1..] {
                if la != lb {
                    continue;
                }
                if lsa == lsb && lea == leb && lsa > lea {
                    let (s, e) = (1i64 << lsa, 1i64 << lea);
                    let spans = self.apart((sb, eb), (sa, ea));
                    let d = self.b.ins().isub(sb, sa);
                    let r = self.b.ins().band_imm_s(d, s - 1);
                    let r = self.b.ins().iadd_imm_s(r, -e);
                    let fields = self
                        .b
                        .ins()
                        .icmp_imm_s(IntCC::UnsignedLessThan, r, s - 2 * e + 1);
                    let pair = self.b.ins().bor(spans, fields);
                    ok = self.b.ins().band(ok, pair);
                } else {
                    ok = self.and_apart(ok, (sb, eb), (sa, ea));
                }
            }
        }
        ok
    }

    /// In a copy loop whose span check proved `k >= 1` iterations from LC0BASE `lc`: copy the
    /// first `k - 1` at once when the source and destination ranges they cover are disjoint
    /// (then the iterations' order cannot matter), advancing LC0BASE and the retired count
    /// past them; the last proved iteration runs in the full copy (`full`) as usual, so the
    /// loaded register ends with the value it loaded there.
    fn bulk_copy(&mut self, k: Value, lc: Value, log2e: u8, full: Block) {
        let log2vl = self.vl.trailing_zeros() as i64;
        let n = self.b.ins().iadd_imm_s(k, -1);
        let len = self.b.ins().ishl_imm_s(n, log2vl + log2e as i64);
        let at = self.b.ins().ishl_imm_s(lc, log2e as i64);
        let [src, dst] = [0, 1].map(|j| {
            let h = self.b.use_var(self.hoist_host[j]);
            self.b.ins().iadd(h, at)
        });
        // In guest memory (proved), so neither end wraps.
        let src_end = self.b.ins().iadd(src, len);
        let dst_end = self.b.ins().iadd(dst, len);
        let before = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, dst_end, src);
        let after = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, src_end, dst);
        let disjoint = self.b.ins().bor(before, after);
        let some = self.b.ins().icmp_imm_s(IntCC::NotEqual, n, 0);
        let go = self.b.ins().band(disjoint, some);
        let copy = self.b.create_block();
        self.b.ins().brif(go, copy, &[], full, &[]);
        self.b.switch_to_block(copy);
        self.b.seal_block(copy);
        let f = self.helper_addr(abi::HelperFn::Copy);
        let sig = self.sig(Helper::Copy);
        self.b.ins().call_indirect(sig, f, &[dst, src, len]);
        let groups = self.b.ins().ishl_imm_s(n, log2vl);
        let lc2 = self.b.ins().iadd(lc, groups);
        self.b.def_var(self.lc0, lc2);
        // Three instructions per iteration: the load, the store and ENDLOOP.
        let body = self.b.ins().imul_imm_s(n, 3);
        let r = self.b.use_var(self.retired);
        let r = self.b.ins().iadd(r, body);
        self.b.def_var(self.retired, r);
        self.b.ins().jump(full, &[]);
    }

    /// Store the lanes of `r`, canonical, uniform and translated at fewer lanes, to all `vl`
    /// lanes of its register in the register file.
    fn store_replicated(&mut self, r: VReg, vl: u32) {
        self.canonicalize(r);
        self.materialize(r);
        let chunks: Vec<Value> = (0..self.nch).map(|c| self.vget(r, c)).collect();
        let f = MemFlagsData::trusted();
        for c in 0..(vl as usize).div_ceil(2) {
            let v = chunks[c % chunks.len()];
            self.b.ins().store(f, v, self.regs, Self::voff(r, c));
        }
    }

    /// Translate the prologue instructions `r.insts[..h]` (a leading LOOP).
    pub(super) fn run_prologue(&mut self, r: &Region, h: usize) {
        self.uni_checked.clear();
        if let Some(p) = self.nest.and_then(|n| n.pre) {
            // Its run checked on the way in.
            self.uni_checked = self.prologue_covered(p);
        }
        for (pc, inst) in &r.insts[..h] {
            if matches!(inst, Inst::Loop(_)) {
                self.loop_prologue(*pc, inst);
            } else {
                self.inst(*pc, inst);
            }
            if let Some(vl) = self.strip_vl {
                // The strip-mined form: a uniform register (`strip::strip_width`) made at
                // `W` lanes goes to all VL lanes of the register file at once, so that every
                // exit from here on finds it there (they write no vector register back).
                let w = inst.effects().writes_v;
                for n in (0..32u8).filter(|n| w & (1 << n) != 0) {
                    self.store_replicated(VReg(n), vl);
                }
            }
        }
        // Fold the prologue into the retired counter so the header starts at offset 0.
        let rv = self.b.use_var(self.retired);
        let rv = self.b.ins().iadd_imm_s(rv, self.off as i64);
        self.b.def_var(self.retired, rv);
        self.off = 0;
    }
}
