//! Exits and chaining: the shared exit block that writes guest state back and reports the
//! next pc, the retired count and a typed [`Status`]; cold exits to the interpreter when a
//! check fails or the budget runs out; and direct calls into the successor's compiled code
//! through the chaining table (`Tx::chain`).

use super::{Form, Helper, Tx};
use crate::abi::{self, Status};
use crate::observe::Fallback;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value};
use lanejit_interp::isa::{SReg, VReg};
use lanejit_interp::machine::Regs;

impl Tx<'_, '_> {
    /// Emit, in the current block, the exit sequence: write back state, report `next_pc`
    /// and `off + extra` retired instructions, return `status`.
    pub(crate) fn exit_with(&mut self, status: Status, next_pc: Value, extra: u64) {
        // Every exit goes through one shared block that writes the state back; the values
        // reach it as block parameters (the variables' SSA phis).
        let saved = (self.form, self.nan);
        self.exits += 1;
        // Stores the streaming copy holds back to the iteration's end happen before any exit.
        self.emit_held_stores();
        self.materialize_all();
        let r = self.b.use_var(self.retired);
        let n = self.off + extra;
        let r = match self.const_of(r) {
            // Straight-line code: the count at every exit is known.
            Some(k) => self.iconst(k + n),
            None => self.b.ins().iadd_imm_s(r, n as i64),
        };
        self.b.def_var(self.xret, r);
        self.b.def_var(self.xpc, next_pc);
        let st = self.iconst(status.word());
        self.b.def_var(self.xstatus, st);
        self.b.ins().jump(self.exit_block, &[]);
        (self.form, self.nan) = saved;
    }

    /// Emit the shared exit block (after everything else).
    pub(super) fn finish_exit_block(&mut self) {
        self.b.switch_to_block(self.exit_block);
        self.b.seal_block(self.exit_block);
        self.form = [Form::Wide; 32];
        // Iteration-local registers whose lanes are in the packed slot (`Tx::plocal`).
        for n in 0..32u8 {
            self.plocal_flush(VReg(n));
            self.alocal_flush(VReg(n));
        }
        self.writeback();
        let r = self.b.use_var(self.xret);
        let pc = self.b.use_var(self.xpc);
        let st = self.b.use_var(self.xstatus);
        let f = MemFlagsData::trusted();
        // Added, not stored: chained regions share the context.
        let before = self.b.ins().load(I64, f, self.ctx, abi::off::RETIRED);
        let total = self.b.ins().iadd(before, r);
        self.count_retired(r);
        self.b.ins().store(f, total, self.ctx, abi::off::RETIRED);
        self.b.ins().store(f, pc, self.ctx, abi::off::NEXT_PC);
        self.chain(pc, st);
        self.b.ins().return_(&[st]);
    }

    /// Region chaining: an exit with `Status::Next` (`Status::Partial`) to a pc whose region
    /// (loop body's straight form) the chaining table holds calls that code directly, while
    /// `chain_left` allows, and returns its status, instead of returning to the dispatcher.
    /// Emits nothing when the exit is known not to chain; else ends in the block that goes on
    /// to return `st`.
    fn chain(&mut self, next_pc: Value, st: Value) {
        let known = self.const_of(st);
        if self.chain_slots == 0
            || known.is_some_and(|s| s != Status::Next.word() && s != Status::Partial.word())
        {
            return;
        }
        let f = MemFlagsData::trusted();
        // The slot index, and (when not known here) whether it is one: an instruction's pc.
        let (idx, ok) = match self.const_of(next_pc) {
            Some(p) if p % 8 == 0 && p / 8 < self.chain_slots => (self.iconst(p / 8), None),
            Some(_) => return,
            None => {
                let low = self.b.ins().band_imm_s(next_pc, 7);
                let aligned = self.b.ins().icmp_imm_s(IntCC::Equal, low, 0);
                let idx = self.b.ins().ushr_imm_s(next_pc, 3);
                let slots = self.chain_slots as i64;
                let inb = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, idx, slots);
                let ok = self.b.ins().band(aligned, inb);
                // Out of range reads slot 0 instead; `ok` is false then.
                let zero = self.iconst(0);
                (self.b.ins().select(ok, idx, zero), Some(ok))
            }
        };
        let table = self.b.ins().load(I64, f, self.ctx, abi::off::CHAIN);
        let off = self.b.ins().ishl_imm_s(idx, 4);
        let at = self.b.ins().iadd(table, off);
        // Slot 2 i for Status::Next, 2 i + 1 for Status::Partial.
        let target = match known {
            Some(s) if s == Status::Next.word() => self.b.ins().load(I64, f, at, 0),
            Some(_) => self.b.ins().load(I64, f, at, 8),
            None => {
                let part = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::Equal, st, Status::Partial.word() as i64);
                let part = self.b.ins().uextend(I64, part);
                let sh = self.b.ins().ishl_imm_s(part, 3);
                let at = self.b.ins().iadd(at, sh);
                self.b.ins().load(I64, f, at, 0)
            }
        };
        let left = self.b.ins().load(I64, f, self.ctx, abi::off::CHAIN_LEFT);
        let has = self.b.ins().icmp_imm_s(IntCC::NotEqual, target, 0);
        let room = self.b.ins().icmp_imm_s(IntCC::NotEqual, left, 0);
        let mut go = self.b.ins().band(has, room);
        if let Some(ok) = ok {
            go = self.b.ins().band(go, ok);
        }
        if known.is_none() {
            // Status::Next or Status::Partial.
            let next = self
                .b
                .ins()
                .icmp_imm_s(IntCC::Equal, st, Status::Next.word() as i64);
            let part = self
                .b
                .ins()
                .icmp_imm_s(IntCC::Equal, st, Status::Partial.word() as i64);
            let either = self.b.ins().bor(next, part);
            go = self.b.ins().band(go, either);
        }
        let call = self.b.create_block();
        let ret = self.b.create_block();
        self.b.ins().brif(go, call, &[], ret, &[]);
        self.b.switch_to_block(call);
        self.b.seal_block(call);
        let left = self.b.ins().iadd_imm_s(left, -1);
        self.b.ins().store(f, left, self.ctx, abi::off::CHAIN_LEFT);
        let sig = self.sig(Helper::Region);
        let c = self.b.ins().call_indirect(sig, target, &[self.ctx]);
        let r = self.b.inst_results(c)[0];
        self.b.ins().return_(&[r]);
        self.b.switch_to_block(ret);
        self.b.seal_block(ret);
    }

    /// Exit to `pc` with a constant.
    pub(crate) fn exit_pc(&mut self, status: Status, pc: u64, extra: u64) {
        let p = self.iconst(pc);
        self.exit_with(status, p, extra);
    }

    /// Continue only if `ok` is non-zero; otherwise exit (cold) so the interpreter executes the
    /// instruction at `pc` with the state before it (a fallback for `why`).
    pub(crate) fn guard(&mut self, ok: Value, pc: u64, why: Fallback) {
        let fail = self.b.create_block();
        let cont = self.b.create_block();
        self.b.set_cold_block(fail);
        self.b.ins().brif(ok, cont, &[], fail, &[]);
        self.b.switch_to_block(fail);
        self.b.seal_block(fail);
        self.fallback(pc, why);
        self.exit_pc(Status::Interp, pc, 0);
        self.b.switch_to_block(cont);
        self.b.seal_block(cont);
    }

    /// Exit (cold) with `status` at `pc` when the budget cannot cover `n` more instructions.
    pub(super) fn budget_check(&mut self, n: u64, pc: u64) {
        if !self.budgeted {
            return;
        }
        let r = self.b.use_var(self.retired);
        let r = self.b.ins().iadd_imm_s(r, self.off as i64);
        let left = self.b.ins().isub(self.budget, r);
        let ok = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, left, n as i64);
        self.guard(ok, pc, Fallback::Budget);
    }

    fn writeback(&mut self) {
        let fl = MemFlagsData::trusted();
        for n in 1..32u8 {
            if self.dirty.s & (1 << n) != 0 {
                let v = self.sget(SReg(n));
                self.b
                    .ins()
                    .store(fl, v, self.regs, (Regs::OFFSET_S + 8 * n as usize) as i32);
            }
        }
        for n in 0..32u8 {
            if self.dirty.v & (1 << n) != 0 {
                let base = (Regs::OFFSET_V + 64 * 8 * n as usize) as i32;
                let packed = match self.form[n as usize] {
                    Form::Packed { .. } => Some(self.widen_packed(VReg(n))),
                    Form::Acc { .. } => Some(self.acc_values(VReg(n))),
                    Form::Wide => None,
                };
                for c in 0..self.nch {
                    let v = match &packed {
                        Some(p) => p[c],
                        None => self.vget(VReg(n), c),
                    };
                    if self.vl == 1 {
                        let l0 = self.b.ins().extractlane(v, 0);
                        self.b.ins().store(fl, l0, self.regs, base);
                    } else {
                        self.b.ins().store(fl, v, self.regs, base + 16 * c as i32);
                    }
                }
            }
        }
        if self.writes_mask {
            let m = self.b.use_var(self.mask);
            self.b
                .ins()
                .store(fl, m, self.regs, Regs::OFFSET_MASK as i32);
        }
        if self.loops {
            let l = self.b.use_var(self.lc0);
            self.b
                .ins()
                .store(fl, l, self.regs, Regs::OFFSET_LC0BASE as i32);
        }
        if self.writes_trip {
            let t = self.b.use_var(self.trip);
            self.b
                .ins()
                .store(fl, t, self.regs, Regs::OFFSET_TRIP as i32);
        }
    }
}
