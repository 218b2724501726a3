//! Loops: the span check hoisted to loop entry (`Tx::precheck`, `Tx::span_groups`), the bulk
//! copy of copy loops, and the prologue `LOOP`.

use super::{Helper, MAX_SPAN_ITERS, Tx, flags};
use crate::abi;
use crate::region::Region;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{Block, InstBuilder, Value};
use lanejit_interp::isa::Inst;

impl Tx<'_, '_> {
    /// At the header of a hoisting loop with a full mask: find how many iterations from here
    /// all hoisted accesses may make (`Tx::span_groups` per access, at most the remaining full
    /// iterations, at least this one), record their LC0BASE bound in `lim`, and go to `full`;
    /// with none (a fault ahead), go to `none`.
    pub(super) fn precheck(&mut self, full: Block, none: Block, stream: Option<super::StreamLoop>) {
        let log2vl = self.vl.trailing_zeros() as i64;
        let lc = self.b.use_var(self.lc0);
        let trip = self.b.use_var(self.trip);
        let left = self.b.ins().isub(trip, lc);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, lc, trip);
        let q = self.b.ins().ushr_imm_s(left, log2vl);
        // At most MAX_SPAN_ITERS per entry, which bounds the page scan of one entry; longer
        // loops come back to the header and check their next stretch.
        let cap = self.iconst(MAX_SPAN_ITERS);
        let big = self.b.ins().icmp(IntCC::UnsignedGreaterThan, q, cap);
        let q = self.b.ins().select(big, cap, q);
        let zero = self.iconst(0);
        let q = self.b.ins().select(more, q, zero);
        let one = self.iconst(1);
        let q_is0 = self.b.ins().icmp_imm_s(IntCC::Equal, q, 0);
        let mut k = self.b.ins().select(q_is0, one, q);
        // Per access: its loop-invariant host base (so the loop keeps one register per
        // access), then its span.
        let mut hosts = Vec::new();
        for hz in self.hoist.clone() {
            let (ms, local) = (hz.ms(), hz.inst.is_local());
            let (h, ea0) = self.hoisted_at(&hz, lc);
            let var = self.b.declare_var(I64);
            self.b.def_var(var, h);
            hosts.push(var);
            let need = super::mem::need(ms);
            let lg = self.vl.trailing_zeros() + ms.log2e as u32;
            let amask = self.align_mask(ms);
            k = if local {
                self.tile_span_groups(ea0, lg, k, need, amask)
            } else {
                self.span_groups(ea0, lg, k, need, amask)
            };
        }
        self.hoist_host = hosts;
        let span = self.b.ins().ishl_imm_s(k, log2vl);
        let lim = self.b.ins().iadd(lc, span);
        let var = self.b.declare_var(I64);
        self.b.def_var(var, lim);
        self.lim = Some(var);
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
                let disjoint = self.stream_disjoint(lc, lim);
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
    }

    /// The entry of the masked tail copy (see `Tx::masked_tail`): the mask must be a prefix
    /// (the lanes below the trip count, as `LOOP` and `ENDLOOP` leave it; the stores of
    /// iteration-local registers rely on it, see `Tx::store_prefix`), and every hoisted
    /// access's group at the current LC0BASE, all VL lanes, is checked for its permission (and
    /// lane 0's alignment under `--strict-align`); its host base recorded as `Tx::precheck`
    /// does. All pass: `top`; else `fail` (the straight form then runs the iteration lane by
    /// lane).
    pub(super) fn masked_tail_entry(&mut self, top: Block, fail: Block) {
        let m = self.b.use_var(self.mask);
        let plus = self.b.ins().iadd_imm_s(m, 1);
        let t = self.b.ins().band(m, plus);
        let next = self.b.create_block();
        self.b.ins().brif(t, fail, &[], next, &[]);
        self.b.switch_to_block(next);
        self.b.seal_block(next);
        let lc = self.b.use_var(self.lc0);
        for (j, hz) in self.hoist.clone().into_iter().enumerate() {
            let (ms, local) = (hz.ms(), hz.inst.is_local());
            let (h, ea0) = self.hoisted_at(&hz, lc);
            self.b.def_var(self.hoist_host[j], h);
            let need = super::mem::need(ms);
            let amask = self.align_mask(ms);
            let next = self.b.create_block();
            self.check_space(
                local,
                ea0,
                (self.vl as u64) << ms.log2e,
                need,
                amask,
                next,
                fail,
            );
            self.b.switch_to_block(next);
            self.b.seal_block(next);
        }
        self.b.ins().jump(top, &[]);
    }

    /// A hoisted access's host address of its EA at LC0BASE 0 (its space's base plus the
    /// loop-invariant part), and lane 0's EA at LC0BASE `lc`.
    fn hoisted_at(&mut self, hz: &super::analysis::Hoisted, lc: Value) -> (Value, Value) {
        let ms = hz.ms();
        let bo = self.inv_value(&hz.inv);
        let sb = self.space(hz.inst.is_local()).0;
        let h = self.b.ins().iadd(sb, bo);
        let l = self.b.ins().ishl_imm_s(lc, ms.log2e as i64);
        (h, self.b.ins().iadd(bo, l))
    }

    /// How many of `k` groups of `1 << lg` bytes from tile address `lo` lie in tile space
    /// with permission `need` (and `lo` aligned to `amask`): one lookup in the granule run
    /// table, whatever the span (runs are exact granule counts).
    fn tile_span_groups(&mut self, lo: Value, lg: u32, k: Value, need: u8, amask: u64) -> Value {
        let t = self
            .tile
            .expect("a region with tile accesses loads the tile view");
        let zero = self.iconst(0);
        let inb = self.b.ins().icmp(IntCC::UnsignedLessThan, lo, t.size);
        let ok = self.and_aligned(inb, lo, amask);
        // Out of range reads granule 0's run instead (`ok` is false then).
        let lo_in = self.b.ins().select(inb, lo, zero);
        let avail = self.b.ins().isub(t.size, lo_in);
        let fit = self.b.ins().ushr_imm_s(avail, lg as i64);
        let u0 = self.b.ins().ushr_imm_s(lo_in, 6);
        let run = self.run_at(true, need, u0);
        // Permitted bytes from `lo`: the run's granules less lo's offset in its granule (no
        // wrap: a run of 0 gives 0).
        let run_bytes = self.b.ins().ishl_imm_s(run, 6);
        let inner = self.b.ins().band_imm_s(lo_in, 63);
        let has = self.b.ins().icmp_imm_s(IntCC::NotEqual, run, 0);
        let pb = self.b.ins().isub(run_bytes, inner);
        let pb = self.b.ins().select(has, pb, zero);
        let pfit = self.b.ins().ushr_imm_s(pb, lg as i64);
        let g = self.b.ins().umin(k, fit);
        let g = self.b.ins().umin(g, pfit);
        self.b.ins().select(ok, g, zero)
    }

    /// The value of a loop-invariant symbolic form (scalars and a constant).
    pub(super) fn inv_value(&mut self, s: &super::shape::Sym) -> Value {
        let mut acc = self.iconst(s.k as u64);
        for &(r, c) in &s.terms {
            let x = self.sget(r);
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

    /// Whether, over the iterations from LC0BASE `lc` up to `lim`, the bytes every hoisted
    /// load that may move reads and the bytes every hoisted store writes are disjoint (one
    /// comparison of host ranges per such load and store; all lie in guest memory, proved, so
    /// none wraps). In-place loads (`Tx::ordered`) keep their order and are not compared.
    fn stream_disjoint(&mut self, lc: Value, lim: Value) -> Value {
        let mut loads = Vec::new();
        let mut stores = Vec::new();
        for (j, hz) in self.hoist.clone().into_iter().enumerate() {
            let ms = hz.ms();
            let is_load = ms.dir == lanejit_interp::isa::Dir::Load;
            if is_load && self.ordered & (1 << j) != 0 {
                continue;
            }
            let h = self.b.use_var(self.hoist_host[j]);
            let a = self.b.ins().ishl_imm_s(lc, ms.log2e as i64);
            let e = self.b.ins().ishl_imm_s(lim, ms.log2e as i64);
            let range = (self.b.ins().iadd(h, a), self.b.ins().iadd(h, e));
            if is_load {
                loads.push(range);
            } else {
                stores.push(range);
            }
        }
        let mut ok = self.b.ins().iconst(cranelift_codegen::ir::types::I8, 1);
        for &(ls, le) in &loads {
            for &(ss, se) in &stores {
                let before = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, se, ls);
                let after = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, le, ss);
                let apart = self.b.ins().bor(before, after);
                ok = self.b.ins().band(ok, apart);
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

    /// The span check hoisted out of a loop, inline (a helper call would clobber what the loop
    /// keeps in registers and make the allocator spill it for the whole loop): how many of `k` groups of `1 << lg` bytes from `lo` lie in guest memory on
    /// pages with permission `need`, with `lo & amask == 0`. Returns the count in a new block.
    fn span_groups(&mut self, lo: Value, lg: u32, k: Value, need: u8, amask: u64) -> Value {
        let done = self.b.create_block();
        let res = self.b.append_block_param(done, I64);
        let inb = self.b.create_block();
        let scan = self.b.create_block();
        let page = self.b.create_block();
        let p = self.b.append_block_param(page, I64);
        let next = self.b.create_block();
        let bad = self.b.create_block();
        let zero = self.iconst(0);
        let ok = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThan, lo, self.mem_extent);
        let ok = self.and_aligned(ok, lo, amask);
        self.b.ins().brif(ok, inb, &[], done, &[zero.into()]);
        self.b.switch_to_block(inb);
        self.b.seal_block(inb);
        // lo < extent: avail > 0, and g groups end at lo + (g << lg) <= extent.
        let avail = self.b.ins().isub(self.mem_extent, lo);
        let fit = self.b.ins().ushr_imm_s(avail, lg as i64);
        let less = self.b.ins().icmp(IntCC::UnsignedLessThan, fit, k);
        let g = self.b.ins().select(less, fit, k);
        self.b.ins().brif(g, scan, &[], done, &[zero.into()]);
        self.b.switch_to_block(scan);
        self.b.seal_block(scan);
        let len = self.b.ins().ishl_imm_s(g, lg as i64);
        let end = self.b.ins().iadd(lo, len);
        let last = self.b.ins().iadd_imm_s(end, -1);
        let lastp = self.b.ins().ushr_imm_s(last, 12);
        let firstp = self.b.ins().ushr_imm_s(lo, 12);
        self.b.ins().jump(page, &[firstp.into()]);
        self.b.switch_to_block(page);
        // Every page index here is at most (extent - 1) / 4096: inside the table.
        let a = self.b.ins().iadd(self.mem_perms, p);
        let byte = self
            .b
            .ins()
            .uload8(cranelift_codegen::ir::types::I32, flags(), a, 0);
        let t = self.b.ins().band_imm_s(byte, need as i64);
        self.b.ins().brif(t, next, &[], bad, &[]);
        self.b.switch_to_block(next);
        self.b.seal_block(next);
        let p1 = self.b.ins().iadd_imm_s(p, 1);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, p1, lastp);
        self.b
            .ins()
            .brif(more, page, &[p1.into()], done, &[g.into()]);
        self.b.seal_block(page);
        self.b.switch_to_block(bad);
        self.b.seal_block(bad);
        let pa = self.b.ins().ishl_imm_s(p, 12);
        let below = self.b.ins().icmp(IntCC::UnsignedLessThan, pa, lo);
        let first_bad = self.b.ins().select(below, lo, pa);
        let before = self.b.ins().isub(first_bad, lo);
        let gb = self.b.ins().ushr_imm_s(before, lg as i64);
        self.b.ins().jump(done, &[gb.into()]);
        self.b.switch_to_block(done);
        self.b.seal_block(done);
        res
    }

    /// Translate the prologue instructions `r.insts[..h]` (a leading LOOP).
    pub(super) fn run_prologue(&mut self, r: &Region, h: usize) {
        for (pc, inst) in &r.insts[..h] {
            if matches!(inst, Inst::Loop(_)) {
                self.loop_prologue(*pc, inst);
            } else {
                self.inst(*pc, inst);
            }
        }
        // Fold the prologue into the retired counter so the header starts at offset 0.
        let rv = self.b.use_var(self.retired);
        let rv = self.b.ins().iadd_imm_s(rv, self.off as i64);
        self.b.def_var(self.retired, rv);
        self.off = 0;
    }
}
