//! Lowering of control instructions: `J`, `Bxx`, `LOOP`, `ENDLOOP`. A taken edge to the loop
//! head of a loop region becomes the native back edge; every other edge leaves the region with
//! [`Status::Next`] and the successor pc. The exit then calls the successor's compiled code
//! directly when the chaining table has it (`Tx::chain`), else returns to the dispatcher.
//! Control on values the translator knows (`S.LI`, folded scalar ALU, see `Tx::const_of`) is
//! decided at translation time: a constant LOOP trip needs no zero test, a branch on two
//! constants takes one edge. A full iteration's back edge goes on to the loop's second full
//! copy, translated with the forms the first back edge carried (packed registers stay
//! packed); on the way in, registers its packed-word lowerings want packed and that arrive
//! wide are packed again behind a test that every lane fits (`Tx::repack`).

use super::{Form, Tx, flags};
use crate::abi::Status;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32X4, I8X16, I64, I64X2};
use cranelift_codegen::ir::{
    Block, BlockArg, BlockCall, InstBuilder, JumpTableData, MemFlagsData, StackSlotData,
    StackSlotKind, Value,
};
use lanejit_interp::isa::{Cond, Ext, FpWidth, Inst, SOrImm, Sem, VReg};

impl Tx<'_, '_> {
    /// The mask with lanes `0..n` set (all lanes when `n >= VL`).
    pub(crate) fn lanes_below(&mut self, n: Value) -> Value {
        if let Some(k) = self.const_of(n) {
            let m = if k >= self.vl as u64 {
                self.all()
            } else {
                (1u64 << k) - 1
            };
            return self.iconst(m);
        }
        let all = self.iconst(self.all());
        let one = self.iconst(1);
        let sh = self.b.ins().ishl(one, n);
        let part = self.b.ins().iadd_imm_s(sh, -1);
        let big = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, n, self.vl as i64);
        self.b.ins().select(big, all, part)
    }

    /// Take the edge to `target` after the control instruction retired.
    fn edge(&mut self, target: u64, header: Option<Block>, head_pc: u64) {
        // In a nest, the inner loop's exit goes on to the epilogue and the outer branch
        // back to the prologue, registers wide as the header expects them too.
        let nest = self.nest.and_then(|n| {
            (target == n.epi_pc)
                .then_some(n.epi)
                .or((target == n.start).then_some(n.top))
        });
        let header = match nest {
            Some(to) => Some(to),
            None => header,
        };
        let head_pc = if nest.is_some() { target } else { head_pc };
        if self.nest.is_some_and(|n| target == n.start)
            || (self.nest.is_none()
                && self.branch_back
                && self.local_v == 0
                && header.is_some()
                && target == head_pc)
        {
            // A nest's row done, or a branch loop's iteration: code compiled to be replaced
            // may leave here.
            self.yield_at_back_edge(target);
        }
        match header {
            Some(h) if target == head_pc => {
                if let Some(p) = self.nest.filter(|n| target == n.start).and_then(|n| n.pre) {
                    // The prologue's checks, after this branch retired.
                    self.prologue_checks(p, 1);
                }
                // The header expects every register wide.
                let saved = (self.form, self.nan);
                self.materialize_all();
                let r = self.b.use_var(self.retired);
                let r = self.b.ins().iadd_imm_s(r, (self.off + 1) as i64);
                self.b.def_var(self.retired, r);
                self.b.ins().jump(h, &[]);
                (self.form, self.nan) = saved;
            }
            _ => self.exit_pc(Status::Next, target, 1),
        }
    }

    /// Continue when `v` is non-zero; otherwise run `zero` (which ends its block). A constant
    /// `v` is decided here: no branch, and for zero the code after it is unreachable (in a
    /// block without predecessors, which Cranelift drops).
    fn branch_nonzero(&mut self, v: Value, zero: impl FnOnce(&mut Self)) {
        match self.const_of(v) {
            Some(0) => zero(self),
            Some(_) => return,
            None => {
                let nz = self.b.create_block();
                let zb = self.b.create_block();
                self.b.ins().brif(v, nz, &[], zb, &[]);
                self.b.switch_to_block(zb);
                self.b.seal_block(zb);
                zero(self);
                self.b.switch_to_block(nz);
                self.b.seal_block(nz);
                return;
            }
        }
        let dead = self.b.create_block();
        self.b.switch_to_block(dead);
        self.b.seal_block(dead);
    }

    /// Branch on `cond` to the taken and fall-through edges.
    fn two_way(&mut self, cond: Value, taken: u64, fall: u64, header: Option<Block>, head_pc: u64) {
        let tb = self.b.create_block();
        let fb = self.b.create_block();
        self.b.ins().brif(cond, tb, &[], fb, &[]);
        let saved_full = self.full;
        self.b.switch_to_block(tb);
        self.b.seal_block(tb);
        self.branch_edge(taken, header, head_pc);
        self.full = saved_full;
        self.b.switch_to_block(fb);
        self.b.seal_block(fb);
        self.branch_edge(fall, header, head_pc);
    }

    /// A branch's edge to `target`: at the back edge of a full body copy of a branch loop
    /// with a second full copy (`Tx::fast`, see [`Self::branch_fast_edge`]) first the test
    /// for it, then [`Self::edge`]. The translator's view of the registers is the same after
    /// as before (the other edge of the branch starts from it).
    fn branch_edge(&mut self, target: u64, header: Option<Block>, head_pc: u64) {
        let saved = (self.form, self.nan);
        if header.is_some() && target == head_pc && self.full {
            self.carry_bases();
        }
        if let (Some(fl), Some(_), true) = (self.fast, header, self.full) {
            if target == head_pc {
                self.branch_fast_edge(fl, head_pc);
            }
        }
        self.edge(target, header, head_pc);
        (self.form, self.nan) = saved;
    }

    /// The back edge of a full body copy of a branch loop (no `V.SETMASK`, `LOOP` or
    /// `ENDLOOP` in its body, see `analysis::branch_fast_ok`): the mask stays all ones, so
    /// when the budget covers the next iteration it runs in the second full copy, which the
    /// registers enter in the forms they have here (packed registers stay packed: loaded
    /// words, f32 results, gathered elements), canonical; otherwise the edge goes on to the
    /// header, which expects every register wide. Forms differing from the first back edge's
    /// (recorded for the second copy) take the header too, and so does a back edge where
    /// every register is wide already.
    ///
    /// In code that may leave at the back edge (`Tx::yield_check`), the second copy is not
    /// entered once the compiler thread names the region: the edge goes on to its check.
    fn branch_fast_edge(&mut self, fl: super::FastLoop, head_pc: u64) {
        // With every register wide the second copy would be the first one entered past the
        // header, whose checks (budget, full mask) cost what this edge's would: no gain, and
        // a second set of edges for the allocator (tile_stage's column loop: +2% Ir).
        if self.form == [Form::Wide; 32] && !self.repacks() {
            return;
        }
        let Some((packs, wide)) = self.second_copy_forms() else {
            return;
        };
        let fits = self
            .budgeted
            .then(|| self.budget_fits(self.off + 1, fl.body_len));
        let go = self.band_opt(fits, packs);
        let leaves = self.nest.is_none() && self.branch_back && self.local_v == 0;
        let stays = (leaves && self.yields_at(head_pc)).then(|| self.stays(head_pc));
        let go = self.band_opt(go, stays);
        self.enter_second_copy(go, fl.top);
        // Staying: registers packed for the copy are still in their wide variables.
        self.form = wide;
    }

    /// Whether nest `r`'s inner loop may be entered from the prologue's end straight into
    /// its second full copy ([`Self::prologue_shortcut`]): a branch loop (SpMV's steps over a
    /// row's nonzeros) that never runs under a partial mask and has a second copy (`pairs`,
    /// `TxConfig::pairs`), in the register form, with no hoisted access (whose span checks
    /// the header's way makes).
    pub(super) fn shortcut_ok(&self, r: &crate::region::Region, pairs: bool) -> bool {
        r.outer.is_some()
            && pairs
            && !self.vmem
            && self.hoist.is_empty()
            && self.deferred.is_empty()
            && super::analysis::branch_fast_ok(r)
            && !super::analysis::fast_loop_ok(r)
            && super::analysis::never_partial(r)
            && super::analysis::has_vector_work(r)
    }

    /// The end of a nest's prologue (block `pe`, its one predecessor the prologue, `state`
    /// the forms and raw-NaN flags the prologue left): when the inner branch loop's second
    /// full copy (`top`) was translated with forms the registers here can be packed into,
    /// and the budget covers an iteration, go on there, as the first copy's back edge does
    /// ([`Self::branch_fast_edge`]); otherwise to `slow`, which widens every register for
    /// the header. The first copy runs on wide registers (SpMV's row indices, end offsets,
    /// gathered words and f32 sum, widened at the prologue's end and packed again at the
    /// first copy's back edge): it ran once per row at two and a half times a packed
    /// iteration's instructions. Here, as on that edge ([`Self::second_copy_forms`]), every
    /// wide register the copy takes as 32-bit words is packed when each lane's value is such
    /// a word (a register loaded from the register file at region entry need not be).
    pub(super) fn prologue_shortcut(
        &mut self,
        pe: Block,
        slow: Block,
        state: ([Form; 32], [Option<lanejit_interp::isa::FpWidth>; 32]),
        top: Option<Block>,
        body_len: u64,
    ) {
        self.b.switch_to_block(pe);
        (self.form, self.nan) = state;
        self.full = true;
        self.off = 0;
        self.fast = None;
        let packed = self.fast_forms.is_some_and(|f| f != [Form::Wide; 32]);
        let go = match top {
            Some(top) if packed => self.second_copy_forms().map(|(packs, _)| {
                let fits = self.budgeted.then(|| self.budget_fits(0, body_len));
                (top, self.band_opt(packs, fits))
            }),
            _ => None,
        };
        match go {
            Some((top, None)) => {
                self.b.ins().jump(top, &[]);
            }
            Some((top, Some(c))) => {
                self.b.ins().brif(c, top, &[], slow, &[]);
            }
            None => {
                self.b.ins().jump(slow, &[]);
            }
        }
        self.b.seal_block(slow);
        self.all_wide();
    }

    /// The conjunction of the conditions present (`None` when neither is).
    fn band_opt(&mut self, a: Option<Value>, b: Option<Value>) -> Option<Value> {
        match (a, b) {
            (Some(a), Some(b)) => Some(self.b.ins().band(a, b)),
            (a, b) => a.or(b),
        }
    }

    /// Pack wide register `r` as 32-bit words extended by `ext` (its wide variables keep
    /// their values), and the condition that the packing is exact: every lane's value the
    /// extension of its low word (zero-extended: no lane with a bit set above bit 31, one
    /// test for all chunks; sign-extended: each chunk compared with its words widened back).
    fn pack_words(&mut self, r: VReg, ext: Ext) -> Value {
        let ch = self.vget_all(r);
        let fits = match ext {
            Ext::Zero => {
                let mut or = ch[0];
                for &c in &ch[1..] {
                    or = self.b.ins().bor(or, c);
                }
                let high = self.b.ins().ushr_imm_s(or, 32);
                let any = self.b.ins().vany_true(high);
                Some(self.b.ins().icmp_imm_s(IntCC::Equal, any, 0))
            }
            Ext::Sign | Ext::None => None,
        };
        let mut same: Option<Value> = None;
        let mut packed = Vec::with_capacity(ch.len() / 2);
        for p in ch.chunks(2) {
            let (a, b) = (self.bitcast(I8X16, p[0]), self.bitcast(I8X16, p[1]));
            let w = self.shuffle(a, b, super::mem::pick_dwords(0));
            if fits.is_none() {
                for (orig, x) in p.iter().zip(self.widen_to_64(w, 2, true)) {
                    let x = self.bitcast(I64X2, x);
                    let e = self.b.ins().icmp(IntCC::Equal, *orig, x);
                    same = self.band_opt(same, Some(e));
                }
            }
            packed.push(w);
        }
        self.def_packed(r, 2, ext, &packed);
        fits.unwrap_or_else(|| {
            let same = same.expect("a register has chunks");
            self.b.ins().vall_true(same)
        })
    }

    /// At an edge into the second full copy: canonicalise every register (the copy starts
    /// with canonical registers: forms are carried, raw NaNs are not; a register the copy
    /// takes as a raw f32 result may come canonical when no lane of it is a NaN), pack the registers the copy wants packed that are wide
    /// here ([`Self::repack`], and once the copy's forms are recorded, any it takes as 32-bit
    /// words, [`Self::pack_words`]), and whether the forms
    /// here are the ones the copy is translated with (the first such edge records them):
    /// `None` if not, else the run-time condition the packing needs (if any) and the forms
    /// before it, for the path that does not enter the copy.
    fn second_copy_forms(&mut self) -> Option<(Option<Value>, [Form; 32])> {
        let before = self.form;
        let mut packs = self.repack();
        if let Some(f) = self.fast_forms {
            for n in 0..32u8 {
                let i = n as usize;
                if self.fresh_v & (1 << n) != 0 {
                    // Overwritten before anything reads it or the copy can exit: it may
                    // arrive in any form (its variables are never read before it is written).
                    self.form[i] = f[i];
                } else if let Form::Packed { log2e: 2, ext, .. } = f[i] {
                    // Wide here, 32-bit words there (a nest's row start, where the prologue
                    // leaves gathered words and sums wide, `Self::prologue_shortcut`).
                    if f[i] == Form::packed(2, ext)
                        && matches!(ext, Ext::Zero | Ext::Sign)
                        && self.form[i] == Form::Wide
                        && self.nan[i].is_none()
                        && self.v[i].is_some()
                        && self.can_pack(VReg(n), 2)
                    {
                        let fits = self.pack_words(VReg(n), ext);
                        packs = self.band_opt(packs, Some(fits));
                    }
                }
            }
        }
        let forms = *self.fast_forms.get_or_insert(self.form);
        // Raw FP results go in as they are when the first edge carried them raw too (and
        // the copy is translated: with every register wide the first full copy serves as
        // the second, and it starts canonical); everything else is canonicalised.
        let raw = *self.fast_nan.get_or_insert(if forms == [Form::Wide; 32] {
            [None; 32]
        } else {
            self.nan
        });
        let mut same = forms == self.form;
        for n in 0..32u8 {
            let i = n as usize;
            if raw[i] == self.nan[i] {
                continue;
            }
            if self.fresh_v & (1 << n) != 0 {
                // Overwritten before anything reads it or the copy can exit: its state here
                // is never seen there.
                continue;
            }
            self.canonicalize(VReg(n));
            if raw[i].is_none() {
                continue;
            }
            // The copy takes it as a raw f32 result, which it canonicalises where it is seen:
            // only a register with no NaN lane may go in so (a loaded word that reads as a NaN
            // must keep its bits; found by `lanejit fuzz`, seed 42837).
            match (raw[i], self.form[i]) {
                (Some(FpWidth::S), Form::Packed { log2e: 2, .. }) => {
                    let words = self.packed_vals(VReg(n), 2);
                    let mut nan = None;
                    for w in words {
                        let x = self.bitcast(F32X4, w);
                        let u = self.b.ins().fcmp(FloatCC::Unordered, x, x);
                        nan = Some(match nan {
                            Some(a) => self.b.ins().bor(a, u),
                            None => u,
                        });
                    }
                    let nan = nan.expect("a register has chunks");
                    let any = self.b.ins().vany_true(nan);
                    let none = self.b.ins().icmp_imm_s(IntCC::Equal, any, 0);
                    packs = self.band_opt(packs, Some(none));
                }
                _ => same = false,
            }
        }
        if same {
            Some((packs, before))
        } else {
            self.form = before;
            None
        }
    }

    /// Pack the registers of `Tx::repack` that are wide here as zero-extended 32-bit words
    /// (their wide variables keep their values), and the condition that every lane of them
    /// is below 2^32, so that the packing is exact (`None` when nothing is packed). A loop
    /// header takes every register wide, so an index loaded before a loop (SpMV's `j`)
    /// enters its first iteration wide; here, on the way into the second copy, it is packed
    /// again, and the copy's packed increments (`Tx::packed_int`), compares
    /// (`Tx::packed_sign_mask`) and gathers keep it packed from then on.
    fn repack(&mut self) -> Option<Value> {
        let mut fits: Option<Value> = None;
        for n in 0..32u8 {
            if !self.repacks_reg(n) {
                continue;
            }
            let fit = self.pack_words(VReg(n), Ext::Zero);
            fits = self.band_opt(fits, Some(fit));
        }
        fits
    }

    /// Whether [`Self::repack`] packs register `n` here: one of `Tx::repack`, wide, with
    /// variables (read-only registers have none, `Tx::ro_v`) and room for packed words.
    fn repacks_reg(&self, n: u8) -> bool {
        self.repack & (1 << n) != 0
            && self.form[n as usize] == Form::Wide
            && self.nan[n as usize].is_none()
            && self.v[n as usize].is_some()
            && self.can_pack(VReg(n), 2)
    }

    /// Whether [`Self::repack`] packs any register here.
    fn repacks(&self) -> bool {
        (0..32u8).any(|n| self.repacks_reg(n))
    }

    /// Go on in the second full copy at `top` when `cond` holds (always without one), this
    /// iteration retired; otherwise continue here.
    fn enter_second_copy(&mut self, cond: Option<Value>, top: Block) {
        let r = self.b.use_var(self.retired);
        let r = self.b.ins().iadd_imm_s(r, (self.off + 1) as i64);
        let go = self.b.create_block();
        let stay = self.b.create_block();
        match cond {
            Some(c) => {
                self.b.ins().brif(c, go, &[], stay, &[]);
            }
            None => {
                self.b.ins().jump(go, &[]);
            }
        }
        self.b.switch_to_block(go);
        self.b.seal_block(go);
        self.b.def_var(self.retired, r);
        self.b.ins().jump(top, &[]);
        self.b.switch_to_block(stay);
        self.b.seal_block(stay);
    }

    /// In a full body copy of an `ENDLOOP` loop: when the next iteration is full as well and
    /// the budget covers it, continue in the second full copy (mask stays all ones, packed
    /// registers stay packed); otherwise fall through to the ordinary `ENDLOOP` logic.
    fn fast_edge(&mut self, fl: super::FastLoop, lc: Value, trip: Value) {
        let Some((packs, wide)) = self.second_copy_forms() else {
            return;
        };
        let mut c = match (self.lim, self.prechecked) {
            (Some(lim), true) => {
                // Only the iterations the loop-entry span check proved: LC0BASE steps by VL
                // from its entry value up to `lim` (at most the last full iteration's, see
                // `Tx::precheck`), so `lim - lc >= VL` alone says the next one is one of them.
                let lim = self.b.use_var(lim);
                let room = self.b.ins().isub(lim, lc);
                self.b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, room, self.vl as i64)
            }
            _ => {
                let more = self.b.ins().icmp(IntCC::UnsignedLessThan, lc, trip);
                let left = self.b.ins().isub(trip, lc);
                let full_next = self.b.ins().icmp_imm_s(
                    IntCC::UnsignedGreaterThanOrEqual,
                    left,
                    self.vl as i64,
                );
                self.b.ins().band(more, full_next)
            }
        };
        if self.budgeted {
            let fits = self.budget_fits(self.off + 1, fl.body_len);
            c = self.b.ins().band(c, fits);
        }
        if let Some(p) = packs {
            c = self.b.ins().band(c, p);
        }
        self.enter_second_copy(Some(c), fl.top);
        // Staying: registers packed for the copy are still in their wide variables.
        self.form = wide;
    }

    /// Whether the `ahead` iterations from LC0BASE `lc` are proven (below `Tx::lim`) and
    /// the budget covers them (`body_len` instructions each): the streaming copy's test for
    /// its next round.
    pub(super) fn stream_ahead(&mut self, lc: Value, ahead: u64, body_len: u64) -> Value {
        let lim = self
            .b
            .use_var(self.lim.expect("a streaming copy follows a span check"));
        let room = self.b.ins().isub(lim, lc);
        let enough = self.b.ins().icmp_imm_s(
            IntCC::UnsignedGreaterThanOrEqual,
            room,
            (ahead * self.vl as u64) as i64,
        );
        let fits = self.budget_fits(0, ahead * body_len);
        self.b.ins().band(enough, fits)
    }

    /// Block `leave` leaves the streaming copy for the first full copy `full`, every
    /// accumulator of `accs` made wide; the forms stay as they were for the copy's own path.
    pub(super) fn leave_stream(&mut self, leave: Block, accs: &[VReg], full: Block) {
        self.b.switch_to_block(leave);
        self.b.seal_block(leave);
        let saved = self.form;
        for &a in accs {
            self.materialize(a);
        }
        self.b.ins().jump(full, &[]);
        self.form = saved;
    }

    /// The `ENDLOOP` of the streaming copy (see `Tx::stream`): the next iteration is proven
    /// and covered by the budget (the copy is entered only then), so it runs in the streaming
    /// copy again when the one after it is as well, and otherwise in the first full copy.
    fn stream_edge(&mut self, st: super::StreamLoop, lc: Value) {
        // Registers carried around the back edge must be wide and canonical; the others are
        // dead, and so is the code materialising them. Accumulators keep their narrow sums
        // (`Form::Acc`) around it, flushed every `acc_k` iterations and when the copy is left.
        let accs: Vec<VReg> = if self.acc_n.is_some() {
            (0..32u8)
                .filter(|&n| self.acc_seen[n as usize].0 != 0)
                .map(VReg)
                .collect()
        } else {
            Vec::new()
        };
        let forms = self.form;
        for &a in &accs {
            self.form[a.0 as usize] = Form::Wide;
        }
        self.materialize_all();
        for &a in &accs {
            self.form[a.0 as usize] = forms[a.0 as usize];
        }
        let r = self.b.use_var(self.retired);
        let r = self.b.ins().iadd_imm_s(r, (self.off + 1) as i64);
        self.b.def_var(self.retired, r);
        // Every product the round's first copy kept, its second copy added: both translate
        // the same body from the same forms (`Tx::pair_products`).
        debug_assert!(
            !self.stream_second || self.acc_stash.is_empty(),
            "products kept for a paired round's second copy were not added"
        );
        // An accumulator made wide by its add starts new narrow sums (on the way out they
        // are zero, and its value is in its wide variables).
        for &a in &accs {
            if self.form[a.0 as usize] == Form::Wide {
                self.acc_zero(a);
            }
        }
        if st.pair && !self.stream_second {
            // The first copy of a round: the second follows (the round was entered with
            // three proven iterations ahead and the budget for them).
            return;
        }
        // What the next round runs and the one iteration after it must be proven and
        // within the budget: tested here, or at the round's top (`StreamLoop::top_test`).
        let go = (!st.top_test).then(|| {
            let ahead = if st.pair { 3 } else { 2 };
            self.stream_ahead(lc, ahead, st.body_len)
        });
        let Some(n) = self.acc_n.filter(|_| !accs.is_empty()) else {
            match go {
                Some(go) => self.b.ins().brif(go, st.body, &[], st.full, &[]),
                None => self.b.ins().jump(st.body, &[]),
            };
            return;
        };
        let flush = self.b.create_block();
        self.b.set_cold_block(flush);
        if let Some(go) = go {
            let (cont, leave) = (self.b.create_block(), self.b.create_block());
            self.b.ins().brif(go, cont, &[], leave, &[]);
            self.leave_stream(leave, &accs, st.full);
            self.b.switch_to_block(cont);
            self.b.seal_block(cont);
        }
        // Going round: narrow sums kept, flushed once `acc_k` iterations have added into
        // them.
        let k = accs
            .iter()
            .map(|a| self.acc_seen[a.0 as usize].1)
            .min()
            .unwrap_or(1);
        // Flushed when the next round could take the sums past `k` iterations (a pair
        // needs k >= 2, see `Tx::stream`'s set-up).
        let step = if st.pair { 2 } else { 1 };
        let i = self.b.use_var(n);
        let i = self.b.ins().iadd_imm_s(i, step);
        self.b.def_var(n, i);
        let over = self.b.ins().icmp_imm_s(
            IntCC::UnsignedGreaterThanOrEqual,
            i,
            (k as i64 + 1 - step).max(1),
        );
        self.b.ins().brif(over, flush, &[], st.body, &[]);
        self.b.switch_to_block(flush);
        self.b.seal_block(flush);
        for &a in &accs {
            self.acc_flush(a);
        }
        let zero = self.iconst(0);
        self.b.def_var(n, zero);
        self.b.ins().jump(st.body, &[]);
    }

    /// The end of the masked tail copy (see `Tx::masked_tail`): every vector register the
    /// body writes keeps its new value in the active lanes and its entry value in the others.
    pub(super) fn tail_blend(&mut self) {
        self.materialize_all();
        self.full = false;
        self.refresh_lane_masks();
        for (r, old) in std::mem::take(&mut self.tail_old) {
            let vals: Vec<Value> = old
                .iter()
                .enumerate()
                .map(|(c, &o)| {
                    let new = self.vget(r, c);
                    let m = self.lane_mask(c);
                    self.b.ins().bitselect(m, new, o)
                })
                .collect();
            self.vset_raw(r, &vals);
        }
    }

    /// Store iteration-local register `r` (`Tx::local_v`), canonical, once its value in
    /// this body copy is final: all lanes in the first full copy, the active lanes in the
    /// masked tail (the others keep what the register file holds, the value before the
    /// tail). In a nest, a register packed as it always was where it is stored goes to the
    /// packed slot (`Tx::plocal`) as it is; else it is widened and goes to the register file.
    pub(crate) fn store_local(&mut self, r: VReg) {
        self.local_stored |= 1 << r.0;
        self.flush_deferred(1 << r.0, true);
        self.canonicalize(r);
        let i = r.0 as usize;
        if self.plocal.is_some() {
            let here = match self.form[i] {
                Form::Packed { log2e, ext, .. } if log2e < 3 && (self.vl << log2e) >= 16 => {
                    Some((log2e, ext))
                }
                _ => None,
            };
            // The first copy translated that stores `r` fixes its place for all of them.
            match *self.plocal_form[i].get_or_insert(here) {
                Some(f) if Some(f) == here => {
                    self.store_local_packed(r, f.0);
                    return;
                }
                Some(_) => {
                    // Stored packed elsewhere: the lanes this store leaves alone may be
                    // in the packed slot (only a masked tail leaves any), so they move to
                    // the register file first.
                    if self.masked_tail {
                        self.plocal_flush(r);
                    }
                    let zero = self.iconst(0);
                    for k in [self.plocal_k[i], self.plocal_t[i]] {
                        self.b.def_var(k.expect("packed lane count"), zero);
                    }
                }
                None => {}
            }
        }
        if self.plocal.is_some() {
            let aff = match (self.form[i], self.shape[i]) {
                (Form::Wide, Some(a)) => Some(a),
                _ => None,
            };
            // The first copy translated that stores `r` fixes its way for all of them.
            match *self.alocal_form[i].get_or_insert(aff.map(|a| a.stride)) {
                Some(st) if aff.is_some_and(|a| a.stride == st) => {
                    self.store_local_affine(r, aff.expect("affine"));
                    return;
                }
                // An affine record elsewhere: its lanes go to the register file first.
                Some(_) => self.alocal_flush(r),
                None => {}
            }
        }
        let vals = match (self.form[i], self.shape[i]) {
            (Form::Packed { .. }, _) => self.widen_packed(r),
            (Form::Acc { .. }, _) => self.acc_values(r),
            // A vector address (`V.LC0; V.SHL; V.ADD`): one broadcast and an add per chunk.
            (Form::Wide, Some(a)) => self.affine_chunks(a),
            (Form::Wide, None) => self.vget_all(r),
        };
        // The masked tail computes as a full iteration (`Tx::full` is set there), with the
        // tail's mask in `Tx::mask`.
        if self.masked_tail {
            let regs = self.regs;
            self.store_prefix(regs, Self::voff(r, 0), 3, vals.len(), |t, c| {
                t.vstore(r, c, vals[c])
            });
        } else {
            for (c, v) in vals.into_iter().enumerate() {
                self.vstore(r, c, v);
            }
        }
    }

    /// Store packed iteration-local register `r` to its place in the packed slot: every
    /// chunk of a full copy to the main half (which then holds all VL lanes, the tail half
    /// none), every chunk of the masked tail to the tail half (which then holds the tail's
    /// lanes, see `Tx::plocal_t`). In the copies with pure loads (the masked tail, the
    /// streaming copy's last iteration) the stores wait for the guest store of their chunk
    /// (`Tx::pending_local`).
    fn store_local_packed(&mut self, r: VReg, log2e: u8) {
        let vals = self.packed_vals(r, log2e);
        let slot = self.plocal.expect("packed slot");
        let f = MemFlagsData::trusted();
        let i = r.0 as usize;
        let (k, t) = (self.plocal_k[i], self.plocal_t[i]);
        let (k, t) = (k.expect("packed lane count"), t.expect("tail lane count"));
        let ta = self.plocal_ta[i].expect("tail lanes' address");
        if self.masked_tail {
            // The tail's entry made room (`Tx::plocal_tail_room`).
            let n = self.tail_lanes();
            self.b.def_var(t, n);
            if let Some(host) = self.mref[i] {
                // Read from the guest bytes the tail loaded (`Tx::mref`).
                self.b.def_var(ta, host);
                return;
            }
            let off = self.packed_tail_off(r);
            let at = self.b.ins().stack_addr(I64, slot, off);
            self.b.def_var(ta, at);
            self.pending_local
                .push((vals.into_iter().map(Some).collect(), off, log2e));
            return;
        }
        let all = self.iconst(self.vl as u64);
        self.b.def_var(k, all);
        let zero = self.iconst(0);
        self.b.def_var(t, zero);
        let off = self.packed_local_off(r);
        if self.readonly {
            // The streaming copy's last iteration (pure loads, see `Tx::pending_local`).
            self.pending_local
                .push((vals.into_iter().map(Some).collect(), off, log2e));
            return;
        }
        let base = self.b.ins().stack_addr(I64, slot, 0);
        for (c, &v) in vals.iter().enumerate() {
            self.b.ins().store(f, v, base, off + 16 * c as i32);
        }
    }

    /// Record iteration-local vector address `r` (`Tx::alocal`): lane 0's value, all VL
    /// lanes in a full copy; the tail's in the masked tail, whose active lanes (a prefix)
    /// override the others. An earlier tail's record (two tails with no full iteration
    /// between: every row shorter than VL) is overridden as well when it has no more lanes
    /// than this tail; with more, its lanes go to the register file first (cold).
    fn store_local_affine(&mut self, r: VReg, a: super::shape::Affine) {
        let [b, k, tb, t] = self.alocal[r.0 as usize].expect("affine record");
        if self.masked_tail {
            let old = self.b.use_var(t);
            let n = self.tail_lanes();
            let more = self.b.ins().icmp(IntCC::UnsignedGreaterThan, old, n);
            let (flush, go) = (self.b.create_block(), self.b.create_block());
            self.b.set_cold_block(flush);
            self.b.ins().brif(more, flush, &[], go, &[]);
            self.b.switch_to_block(flush);
            self.b.seal_block(flush);
            self.alocal_flush(r);
            self.b.ins().jump(go, &[]);
            self.b.switch_to_block(go);
            self.b.seal_block(go);
            self.b.def_var(t, n);
            self.b.def_var(tb, a.base);
            return;
        }
        let all = self.iconst(self.vl as u64);
        let zero = self.iconst(0);
        self.b.def_var(k, all);
        self.b.def_var(b, a.base);
        self.b.def_var(t, zero);
    }

    /// Write the lanes of iteration-local register `r` its affine record gives
    /// (`Tx::alocal`) to the register file (a loop over them: lane `j` is the tail's value
    /// plus `j` strides below the tail's count, else the main one's) and record that it gives
    /// none. Every exit does this, and so does a copy about to store `r` otherwise.
    pub(crate) fn alocal_flush(&mut self, r: VReg) {
        let i = r.0 as usize;
        let (Some(Some(stride)), Some([b, k, tb, t])) = (self.alocal_form[i], self.alocal[i])
        else {
            return;
        };
        let (bv, tbv) = (self.b.use_var(b), self.b.use_var(tb));
        let (bv, tbv) = (
            self.b.ins().splat(I64X2, bv),
            self.b.ins().splat(I64X2, tbv),
        );
        self.write_local_lanes(r, (k, t), |tx, _, j, late| {
            let base = tx.b.ins().bitselect(late, tbv, bv);
            let step = if stride > 0 && stride.count_ones() == 1 {
                tx.b.ins().ishl_imm_s(j, stride.trailing_zeros() as i64)
            } else {
                let s = tx.iconst(stride as u64);
                let s = tx.b.ins().splat(I64X2, s);
                tx.b.ins().imul(j, s)
            };
            tx.b.ins().iadd(base, step)
        });
    }

    /// Emit chunk `c` of every pending store to the packed slot (`Tx::pending_local`), or
    /// with `None` all that are left. In the streaming copy's last iteration, a chunk whose
    /// lanes are all below `Tx::skip_local` is stored only when no tail overwrites them
    /// (one branch per chunk, shared by the registers of one lane width).
    pub(crate) fn flush_pending_local(&mut self, c: Option<usize>) {
        if self.pending_local.is_empty() {
            return;
        }
        let slot = self.plocal.expect("packed slot");
        let f = MemFlagsData::trusted();
        let mut pending = std::mem::take(&mut self.pending_local);
        // Per chunk, the lane count that overwrites it all, and its stores.
        let mut out: std::collections::BTreeMap<u64, Vec<(Value, i32)>> = Default::default();
        for (vals, off, log2e) in &mut pending {
            for (j, v) in vals.iter_mut().enumerate() {
                if c.is_none_or(|c| c == j) {
                    if let Some(v) = v.take() {
                        let past = ((j as u64) + 1) << (4 - *log2e);
                        out.entry(past).or_default().push((v, *off + 16 * j as i32));
                    }
                }
            }
        }
        for (past, stores) in out {
            let skip = self.skip_local.map(|s| {
                let (st, next) = (self.b.create_block(), self.b.create_block());
                let low = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedLessThan, s, past as i64);
                self.b.ins().brif(low, st, &[], next, &[]);
                self.b.switch_to_block(st);
                self.b.seal_block(st);
                next
            });
            let base = self.b.ins().stack_addr(I64, slot, 0);
            for (v, at) in stores {
                self.b.ins().store(f, v, base, at);
            }
            if let Some(next) = skip {
                self.b.ins().jump(next, &[]);
                self.b.switch_to_block(next);
                self.b.seal_block(next);
            }
        }
        if c.is_some() {
            self.pending_local = pending;
        }
    }

    /// At the masked tail's entry: when the packed slot's tail half holds more lanes of some
    /// iteration-local register than this tail has (two tails with no full iteration
    /// between), every register's slot lanes move to the register file first (cold), so
    /// that the tail can store all its chunks there (`Tx::store_local_packed`).
    pub(crate) fn plocal_tail_room(&mut self) {
        let regs: Vec<(VReg, u8)> = (0..32u8)
            .filter_map(
                |n| match (self.plocal_form[n as usize], self.plocal_t[n as usize]) {
                    (Some(Some((log2e, _))), Some(_)) => Some((VReg(n), log2e)),
                    _ => None,
                },
            )
            .collect();
        if regs.is_empty() {
            return;
        }
        let n = self.tail_lanes();
        let mut most = None;
        for &(r, _) in &regs {
            let t = self
                .b
                .use_var(self.plocal_t[r.0 as usize].expect("tail lane count"));
            most = Some(most.map_or(t, |m| self.b.ins().umax(m, t)));
        }
        // Only lanes an earlier tail leaves past this one's count must be kept: this tail
        // stores every iteration-local register (lanes `0..n`), and nothing between its
        // entry and those stores reads the earlier lanes (the masked tail has no exit after
        // its entry, and a register is written before it is read). That holds when they are
        // guest bytes (`Tx::mref`) this tail's stores may write: a register stored wide in
        // the tail moves them to the register file first (`Tx::plocal_flush`), and its
        // active lanes, which cover them, overwrite them there. Rows of one length shorter
        // than VL move nothing (stencil5_lc0 on a 32 x 32 grid: the fold was 45% of its time).
        let most = most.expect("a register");
        let over = self.b.ins().icmp(IntCC::UnsignedGreaterThan, most, n);
        let merge = self.b.create_block();
        let go = self.b.create_block();
        self.b.set_cold_block(merge);
        self.b.ins().brif(over, merge, &[], go, &[]);
        self.b.switch_to_block(merge);
        self.b.seal_block(merge);
        self.plocal_fold(&regs);
        self.b.ins().jump(go, &[]);
        self.b.switch_to_block(go);
        self.b.seal_block(go);
    }

    /// Move the lanes of the packed iteration-local registers `regs` that the slot's tail
    /// half gives (`Tx::plocal_t`: each register's lowest `t`, read at `Tx::plocal_ta`) into
    /// their main half, packed as they are, and record that the main half holds `max(k, t)`
    /// lanes and the tail half none. One loop over chunks of 16 bytes for the registers of
    /// one lane width, up to the most lanes any tail half holds: per register a blend of the
    /// two halves' chunks on the lane index. Rows shorter than VL are one masked tail each;
    /// a row shorter than the one before moves that row's lanes so (`Tx::plocal_tail_room`).
    /// Widening them into the register file instead (`Tx::plocal_flush`, which only an exit
    /// needs) was a loop of ten host instructions per lane and register (stencil5_lc0 on a
    /// 32 x 32 grid, jit, when every row did either: 176 -> 468 Melem/s with a loop per
    /// register, more with one loop for all). Whole chunks are read from the
    /// tail's lanes: the tail half has room for VL lanes, and guest bytes a tail loaded
    /// (`Tx::mref`) lie in the group of VL lanes its entry checked; VL lanes are at least
    /// 16 bytes in a packed register (`Tx::can_pack`), so no chunk reaches past them.
    fn plocal_fold(&mut self, regs: &[(VReg, u8)]) {
        use cranelift_codegen::ir::types::{I8, I16, I16X8, I32, I32X4};
        let Some(slot) = self.plocal else {
            return;
        };
        for log2e in 0..3u8 {
            let group: Vec<VReg> = regs
                .iter()
                .filter(|&&(_, l)| l == log2e)
                .map(|&(r, _)| r)
                .collect();
            if group.is_empty() {
                continue;
            }
            debug_assert!((self.vl << log2e) >= 16, "packed lanes fill a chunk");
            let (ty, lane) = match log2e {
                0 => (I8X16, I8),
                1 => (I16X8, I16),
                _ => (I32X4, I32),
            };
            let narrow = |tx: &mut Self, x: Value| -> Value {
                let x = tx.b.ins().ireduce(lane, x);
                tx.b.ins().splat(ty, x)
            };
            let per = 16u64 >> log2e;
            let mut iota = Vec::with_capacity(16);
            for j in 0..per {
                iota.extend_from_slice(&j.to_le_bytes()[..1 << log2e]);
            }
            let c = self.b.func.dfg.constants.insert(iota.into());
            let iota = self.b.ins().vconst(ty, c);
            // Per register: its tail lanes' address, their count as a vector, its main half.
            let mut most = None;
            let mut each = Vec::with_capacity(group.len());
            for &r in &group {
                let i = r.0 as usize;
                let tv = self.plocal_t[i].expect("tail lane count");
                let t = self.b.use_var(tv);
                let ta = self
                    .b
                    .use_var(self.plocal_ta[i].expect("tail lanes' address"));
                most = Some(most.map_or(t, |m| self.b.ins().umax(m, t)));
                let ts = narrow(self, t);
                each.push((ta, ts, self.packed_local_off(r)));
            }
            let most = most.expect("a register");
            let base = self.b.ins().stack_addr(I64, slot, 0);
            let chunks = self.b.ins().iadd_imm_s(most, per as i64 - 1);
            let chunks = self.b.ins().ushr_imm_s(chunks, (4 - log2e) as i64);
            let zero = self.iconst(0);
            self.lane_loop(zero, chunks, |tx, c| {
                // Lane indices `c * per + j` (at most 64: no lane type overflows).
                let first = tx.b.ins().ishl_imm_s(c, (4 - log2e) as i64);
                let first = narrow(tx, first);
                let idx = tx.b.ins().iadd(first, iota);
                let o = tx.b.ins().ishl_imm_s(c, 4);
                let at = tx.b.ins().iadd(base, o);
                for &(ta, ts, off) in &each {
                    let from = tx.b.ins().iadd(ta, o);
                    let main = tx.b.ins().load(ty, flags(), at, off);
                    let tail = tx.b.ins().load(ty, flags(), from, 0);
                    let m = tx.b.ins().icmp(IntCC::SignedLessThan, idx, ts);
                    let x = tx.b.ins().bitselect(m, tail, main);
                    tx.b.ins().store(flags(), x, at, off);
                }
            });
            for &r in &group {
                let i = r.0 as usize;
                let (kv, tv) = (self.plocal_k[i].expect("k"), self.plocal_t[i].expect("t"));
                let (k, t) = (self.b.use_var(kv), self.b.use_var(tv));
                let m = self.b.ins().umax(k, t);
                self.b.def_var(kv, m);
                self.b.def_var(tv, zero);
            }
        }
    }

    /// The masked tail's lane count (its mask is the prefix of that many lanes).
    fn tail_lanes(&mut self) -> Value {
        let m = self.b.use_var(self.mask);
        self.b.ins().popcnt(m)
    }

    /// Byte offset of iteration-local register `r`'s lanes in the packed slot: one stride of
    /// `4 VL + 16` bytes (the widest packed lanes, and room for a masked tail's restore past
    /// the last lane) per iteration-local register below it.
    pub(crate) fn packed_local_off(&self, r: VReg) -> i32 {
        let below = (self.local_v & ((1u32 << r.0) - 1)).count_ones();
        (below * (4 * self.vl + 16)) as i32
    }

    /// Byte offset of iteration-local register `r`'s lanes in the tail half of the packed
    /// slot (`Tx::plocal_t`), after every register's main half.
    fn packed_tail_off(&self, r: VReg) -> i32 {
        let half = self.local_v.count_ones() * (4 * self.vl + 16);
        half as i32 + self.packed_local_off(r)
    }

    /// Set up the packed slot of a nest's iteration-local registers (see `Tx::plocal`): the
    /// slot, and each register's lane count, 0 at entry.
    pub(crate) fn plocal_setup(&mut self) {
        let size = 2 * self.local_v.count_ones() * (4 * self.vl + 16);
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            size,
            4,
        ));
        self.plocal = Some(slot);
        let none = self.iconst(u64::MAX);
        let go = self.b.declare_var(I64);
        self.b.def_var(go, none);
        self.tail_go = Some(go);
        let zero = self.iconst(0);
        for n in 0..32 {
            if self.local_v & (1 << n) != 0 {
                let rec = [(); 4].map(|_| {
                    let v = self.b.declare_var(I64);
                    self.b.def_var(v, zero);
                    v
                });
                self.alocal[n] = Some(rec);
                let ta = self.b.declare_var(I64);
                let off = self.packed_tail_off(VReg(n as u8));
                let at = self.b.ins().stack_addr(I64, slot, off);
                self.b.def_var(ta, at);
                self.plocal_ta[n] = Some(ta);
                for at in [&mut self.plocal_k[n], &mut self.plocal_t[n]] {
                    let k = self.b.declare_var(I64);
                    self.b.def_var(k, zero);
                    *at = Some(k);
                }
            }
        }
    }

    /// Widen the lanes of iteration-local register `r` that the packed slot holds into the
    /// register file (a loop over them, each lane from the tail half below that half's count,
    /// else from the main half; none after a wide store) and record that it holds none.
    /// Every exit does this for every register stored packed (`Tx::finish_exit_block`), and
    /// so does a masked tail about to store one wide or finding the tail half too full
    /// (`Tx::plocal_tail_room`).
    pub(crate) fn plocal_flush(&mut self, r: VReg) {
        let i = r.0 as usize;
        let (Some(slot), Some(Some((log2e, ext))), Some(kv), Some(tv)) = (
            self.plocal,
            self.plocal_form[i],
            self.plocal_k[i],
            self.plocal_t[i],
        ) else {
            return;
        };
        // Lane `j` from the tail's lanes below their count (the tail half, or the guest bytes
        // the tail loaded, `Tx::plocal_ta`), else from the main half.
        let base = self.b.ins().stack_addr(I64, slot, 0);
        let ta = self
            .b
            .use_var(self.plocal_ta[i].expect("tail lanes' address"));
        let main = self.packed_local_off(r);
        // Pairs of lanes `2p, 2p + 1`; the second lane lies inside the lanes read (VL is even
        // when lanes are packed, `Tx::can_pack`).
        self.write_local_lanes(r, (kv, tv), |tx, p, _, late| {
            let o = tx.b.ins().ishl_imm_s(p, log2e as i64 + 1);
            let (at, tat) = (tx.b.ins().iadd(base, o), tx.b.ins().iadd(ta, o));
            let (a, b) = if log2e == 2 {
                let sign = ext == Ext::Sign;
                let load = |tx: &mut Self, at: Value, off: i32| {
                    if sign {
                        tx.b.ins().sload32x2(flags(), at, off)
                    } else {
                        tx.b.ins().uload32x2(flags(), at, off)
                    }
                };
                (load(tx, at, main), load(tx, tat, 0))
            } else {
                let mut two = |at: Value, off: i32| {
                    let x = tx.load_lane(at, off, log2e, ext);
                    let y = tx.load_lane(at, off + (1 << log2e), log2e, ext);
                    let v = tx.b.ins().scalar_to_vector(I64X2, x);
                    tx.b.ins().insertlane(v, y, 1)
                };
                (two(at, main), two(tat, 0))
            };
            tx.b.ins().bitselect(late, b, a)
        });
    }

    /// Write lanes `0..max(k, t)` of iteration-local register `r` (`k` and `t` the lane
    /// counts its record gives for a full copy and for a masked tail) to the register file,
    /// then record that it gives none (`k` and `t` zero). A loop over pairs of lanes:
    /// `lanes(p, j, late)` gives lanes `j = [2p, 2p + 1]` as an `i64x2`, `late` the lanes of
    /// `j` below `t` (the tail's lanes override the others); a lane of the last pair at or
    /// past `max(k, t)` keeps the register file's value. Lane by lane it was a loop of about
    /// ten host instructions a lane, run at every exit of a nest for every such register.
    fn write_local_lanes(
        &mut self,
        r: VReg,
        (kv, tv): (cranelift_frontend::Variable, cranelift_frontend::Variable),
        mut lanes: impl FnMut(&mut Self, Value, Value, Value) -> Value,
    ) {
        let (k, t) = (self.b.use_var(kv), self.b.use_var(tv));
        let n = self.b.ins().umax(k, t);
        let pairs = self.b.ins().iadd_imm_s(n, 1);
        let pairs = self.b.ins().ushr_imm_s(pairs, 1);
        let (ts, ns) = (self.b.ins().splat(I64X2, t), self.b.ins().splat(I64X2, n));
        let iota = self.vconst2(0, 1);
        let zero = self.iconst(0);
        self.lane_loop(zero, pairs, |tx, p| {
            let first = tx.b.ins().ishl_imm_s(p, 1);
            let first = tx.b.ins().splat(I64X2, first);
            let j = tx.b.ins().iadd(first, iota);
            let late = tx.b.ins().icmp(IntCC::SignedLessThan, j, ts);
            let x = lanes(tx, p, j, late);
            let to = tx.b.ins().ishl_imm_s(p, 4);
            let to = tx.b.ins().iadd(tx.regs, to);
            let old =
                tx.b.ins()
                    .load(I64X2, MemFlagsData::trusted(), to, Self::voff(r, 0));
            let inside = tx.b.ins().icmp(IntCC::SignedLessThan, j, ns);
            let x = tx.b.ins().bitselect(inside, x, old);
            tx.b.ins()
                .store(MemFlagsData::trusted(), x, to, Self::voff(r, 0));
        });
        let zero = self.iconst(0);
        self.b.def_var(kv, zero);
        self.b.def_var(tv, zero);
    }

    /// Store the active lanes of a masked tail's register, chunks of `16 >> log2e` lanes of
    /// `1 << log2e` bytes at `base + off`, the tail's mask being a prefix of `n` lanes
    /// (checked at its entry, `Tx::masked_tail_entry`): one jump through a table on
    /// `ceil(n / lanes per chunk)` into a chain of `store(chunk)` calls, as Duff's device
    /// does, so nothing is blended. The last chunk stored may also write inactive lanes
    /// from `n` on: their old bytes (one lane of 8 bytes; 16 bytes of narrower lanes) are
    /// loaded before the chain and stored back after it (where `n` starts a chunk that
    /// rewrites bytes with the values they hold). The mask is partial, so lane `n` is below
    /// VL: inside the register (the packed slot has 16 bytes of room after each register).
    fn store_prefix(
        &mut self,
        base: Value,
        off: i32,
        log2e: u8,
        nch: usize,
        store: impl FnMut(&mut Self, usize),
    ) {
        let n = self.tail_lanes();
        let at = self.b.ins().ishl_imm_s(n, log2e as i64);
        let at = self.b.ins().iadd(base, at);
        let ty = if log2e == 3 {
            cranelift_codegen::ir::types::I64
        } else {
            cranelift_codegen::ir::types::I8X16
        };
        let keep = self.b.ins().load(ty, MemFlagsData::trusted(), at, off);
        let per = (16 >> log2e) as i64;
        let q = self.b.ins().iadd_imm_s(n, per - 1);
        let q = self.b.ins().ushr_imm_s(q, 4 - log2e as i64);
        self.duff_chain(q, nch, store);
        self.b.ins().store(MemFlagsData::trusted(), keep, at, off);
    }

    /// `store(k)` for `k` in `0..q` (`q <= nch`), highest first: one jump through a table
    /// into a chain of `nch` stores, as Duff's device does.
    pub(crate) fn duff_chain(
        &mut self,
        q: Value,
        nch: usize,
        mut store: impl FnMut(&mut Self, usize),
    ) {
        // chain[k]: stores chunk k - 1 and goes on to chain[k - 1]; chain[0] is the end.
        let chain: Vec<Block> = (0..=nch).map(|_| self.b.create_block()).collect();
        let pool = &mut self.b.func.dfg.value_lists;
        let calls: Vec<_> = chain
            .iter()
            .map(|&blk| BlockCall::new(blk, std::iter::empty::<BlockArg>(), pool))
            .collect();
        // No mask has more lanes than VL: the default is never taken.
        let def = BlockCall::new(chain[0], std::iter::empty::<BlockArg>(), pool);
        let jt = self.b.create_jump_table(JumpTableData::new(def, &calls));
        let q32 = self.b.ins().ireduce(cranelift_codegen::ir::types::I32, q);
        self.b.ins().br_table(q32, jt);
        for k in (1..=nch).rev() {
            self.b.switch_to_block(chain[k]);
            store(self, k - 1);
            self.b.ins().jump(chain[k - 1], &[]);
        }
        for &blk in &chain {
            self.b.seal_block(blk);
        }
        self.b.switch_to_block(chain[0]);
    }

    /// A leading `LOOP`: zero trips leave the region, otherwise the run continues into the body.
    pub(crate) fn loop_prologue(&mut self, _pc: u64, inst: &Inst) {
        let Inst::Loop(l) = inst else {
            unreachable!("loop_prologue on {inst}")
        };
        let trip = self.sget(l.sa);
        self.b.def_var(self.trip, trip);
        let exit = l.exit.pc();
        self.branch_nonzero(trip, |t| t.exit_pc(Status::Next, exit, 1));
        let zero = self.iconst(0);
        self.b.def_var(self.lc0, zero);
        let m = self.lanes_below(trip);
        self.set_mask(m);
        self.full = false;
        self.off += 1;
    }

    /// A control instruction ending the run.
    /// A `J` or `Bxx` inside a trace (`Region::trace`) whose edge to `on` stays in the
    /// region: the other edge, if any, leaves it with the branch retired (a side exit, as
    /// a faulting access's exit writes back every register from the form it has here), and
    /// the translation goes on at `on` with the branch retired.
    pub(crate) fn side_exit(&mut self, pc: u64, inst: &Inst, on: u64) {
        self.flush_deferred(u32::MAX, true);
        if let Some((br, c)) = inst.cond_branch() {
            let (taken, fall) = (br.target.pc(), pc + 8);
            if taken != fall {
                let stay_taken = taken == on;
                let away = if stay_taken { fall } else { taken };
                let holds = self.branch_holds(br, c);
                // `leave`, when known here: whether the branch goes off the trace.
                let leave = holds.err().map(|h| h != stay_taken);
                match leave {
                    Some(false) => {}
                    Some(true) => {
                        // Always leaves: the rest of the trace is unreachable here.
                        self.exit_pc(Status::Next, away, 1);
                        let dead = self.b.create_block();
                        self.b.switch_to_block(dead);
                        self.b.seal_block(dead);
                    }
                    None => {
                        let (exit, stay) = (self.b.create_block(), self.b.create_block());
                        let (t, f) = if stay_taken {
                            (stay, exit)
                        } else {
                            (exit, stay)
                        };
                        let holds = holds.expect("not a constant");
                        self.b.ins().brif(holds, t, &[], f, &[]);
                        self.b.switch_to_block(exit);
                        self.b.seal_block(exit);
                        let saved = (self.form, self.nan);
                        self.exit_pc(Status::Next, away, 1);
                        (self.form, self.nan) = saved;
                        self.b.switch_to_block(stay);
                        self.b.seal_block(stay);
                    }
                }
            }
        }
        self.off += 1;
    }

    /// Whether branch `br` with condition `c` is taken: an `i8`, or `Err` with the answer
    /// when both operands are known here.
    fn branch_holds(&mut self, br: &lanejit_interp::isa::Branch, c: Cond) -> Result<Value, bool> {
        let a = self.sget(br.sa);
        let b = match br.sb {
            SOrImm::Reg(r) => self.sget(r),
            SOrImm::Imm(i) => self.iconst(i as i64 as u64),
        };
        if let (Some(x), Some(y)) = (self.const_of(a), self.const_of(b)) {
            return Err(c.holds(x, y));
        }
        let cc = match c {
            Cond::Eq => IntCC::Equal,
            Cond::Ne => IntCC::NotEqual,
            Cond::Lt => IntCC::SignedLessThan,
            Cond::Ge => IntCC::SignedGreaterThanOrEqual,
            Cond::Ltu => IntCC::UnsignedLessThan,
            Cond::Geu => IntCC::UnsignedGreaterThanOrEqual,
        };
        Ok(self.b.ins().icmp(cc, a, b))
    }

    pub(crate) fn control(&mut self, pc: u64, inst: &Inst, header: Option<Block>, head_pc: u64) {
        self.flush_deferred(u32::MAX, true);
        let next = pc + 8;
        match inst {
            Inst::J(j) => self.branch_edge(j.target.pc(), header, head_pc),
            Inst::Beq(br)
            | Inst::Bne(br)
            | Inst::Blt(br)
            | Inst::Bge(br)
            | Inst::Bltu(br)
            | Inst::Bgeu(br) => {
                let Sem::Branch(c) = inst.opcode().sem() else {
                    unreachable!()
                };
                match self.branch_holds(br, c) {
                    Ok(cond) => self.two_way(cond, br.target.pc(), next, header, head_pc),
                    Err(holds) => {
                        // Both operands known: one edge.
                        let to = if holds { br.target.pc() } else { next };
                        self.branch_edge(to, header, head_pc);
                    }
                }
            }
            Inst::Loop(l) => {
                let trip = self.sget(l.sa);
                self.b.def_var(self.trip, trip);
                let exit = l.exit.pc();
                self.branch_nonzero(trip, |t| t.edge(exit, header, head_pc));
                let zero = self.iconst(0);
                self.b.def_var(self.lc0, zero);
                let m = self.lanes_below(trip);
                self.set_mask(m);
                self.full = false;
                self.edge(next, header, head_pc);
            }
            Inst::Endloop(e) => {
                let lc = self.b.use_var(self.lc0);
                let lc = self.b.ins().iadd_imm_s(lc, self.vl as i64);
                self.b.def_var(self.lc0, lc);
                if let Some(st) = self.stream {
                    self.stream_edge(st, lc);
                    return;
                }
                if let Some(edge) = self.strip {
                    self.strip_edge(edge, lc);
                    return;
                }
                // The iteration-local registers leave the first full copy and the masked tail
                // through the register file (see `Tx::local_v`); those the body's last use
                // did not store yet go now.
                for n in 0..32u8 {
                    if self.local_v & !self.local_stored & (1 << n) != 0 {
                        self.store_local(VReg(n));
                    }
                }
                self.flush_pending_local(None);
                if self.masked_tail {
                    self.tail_blend();
                }
                let trip = self.b.use_var(self.trip);
                if let (Some(fl), Some(_)) = (self.fast, header) {
                    if e.body.pc() == head_pc {
                        self.fast_edge(fl, lc, trip);
                    }
                }
                let more = self.b.ins().icmp(IntCC::UnsignedLessThan, lc, trip);
                let tb = self.b.create_block();
                let fb = self.b.create_block();
                self.b.ins().brif(more, tb, &[], fb, &[]);
                self.b.switch_to_block(tb);
                self.b.seal_block(tb);
                let left = self.b.ins().isub(trip, lc);
                let m = self.lanes_below(left);
                self.set_mask(m);
                self.edge(e.body.pc(), header, head_pc);
                self.b.switch_to_block(fb);
                self.b.seal_block(fb);
                let all = self.iconst(self.all());
                self.set_mask(all);
                self.edge(next, header, head_pc);
            }
            _ => unreachable!("not a control instruction: {inst}"),
        }
    }
}
