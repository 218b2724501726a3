//! Lowering of scalar and vector ALU, floating point, state reads, `V.REDSUM`, `S.GETLANE`
//! and `V.SETMASK`. Vector operations work on `i64x2` chunks; writes to a vector register are
//! blended with the lane mask unless the mask is statically all ones. Floating-point results
//! written under a full mask stay raw until something other than an FP operation of their
//! width reads them (`Tx::nan`), and are then canonicalised with a compare-and-select; a
//! hoisted store of a packed f32 register tests them as it stores them instead
//! (`Tx::store_canonical_pairs` in `mem`). Other FP results are canonicalised after the
//! operation. f32 results have their upper 32 bits cleared. FMA is the host's fused multiply-add (exactly rounded, like the
//! interpreter's `mul_add`) where the host has one (`TxConfig::native_fma`), else a call to
//! the Rust helper `abi::lj_fma`, so results never depend on the host's features.
//! The first compile of straight-line code hands vector ALU and FP operations, `V.MOV`,
//! `V.LANEID`, `V.LC0` (above VL 2) and `V.REDSUM` to `abi::lj_vop` / `abi::lj_redsum`, which
//! apply the ISA table's lane semantics on the register file: one call instead of two dozen
//! instructions per chunk pair; loops and hot recompiles have them all in line. Every vector
//! write also records its lane shape (`shape`), which memory accesses use. Under a full mask
//! some operations keep a packed register packed (`Form::Packed`: lanes narrower than 64
//! bits, four or more to a SIMD operation): f32 arithmetic, multiplies of bytes and
//! halfwords (`Tx::narrow_mul`), integer operations whose results fit narrow lanes
//! (`Tx::narrow_int`, below), and ANDs of 32-bit lanes with a
//! register of lane masks made by `V.SRA 63` (`Tx::sign_masks`: SpMV's row-end select,
//! `V.SUB; V.SRA 63; V.AND`, stays on packed values; its compiled-code instructions -4%,
//! +2.7% elements/s). The compare itself stays packed too: `V.SUB d, a, b; V.SRA d, d, 63`
//! of two registers packed as words extended alike is one 32-bit compare per four lanes
//! (`Tx::packed_sign_mask`, the pair translated as one), and an add or subtract of an
//! immediate to zero-extended words stays packed when the lanes' bounds (shared with the
//! gathers through the register) show no lane leaves `0..2^32`, else the interpreter
//! executes it (`Tx::packed_int`, fallback `carry`). With the loop's second copy packing
//! such an index again when it arrives wide (`Tx::repack`), SpMV's row index `j` is
//! stepped, compared and gathered through as 32-bit words: 8 chunks at VL 32 instead of 16.
//! Packed lanes carry the range of their values (`Form::Packed::lo`, `hi`: what their width and
//! extension allow, tighter after a narrow integer operation), and `V.ADD`, `V.SUB`, `V.MUL`,
//! `V.AND`, `V.OR` and `V.XOR` of two such registers or of one and an immediate, and shifts by
//! an immediate, stay packed in the narrowest lanes that hold the exact result, zero- or
//! sign-extended (`Tx::narrow_int`); a contiguous store of narrower elements takes the lanes'
//! low bytes by packing (`Tx::truncated` in `mem`). A u8 3x3 box blur (nine byte loads summed
//! in 16-bit lanes, the product by 7282 and the shift in 32-bit ones, a byte store), 1024 x
//! 1024 pixels with its fill loop, jit-warm: 2.07-2.12 -> 0.89-0.92 ms at VL 32, 2.19-2.38 ->
//! 0.99-1.00 ms at VL 64 (alternating runs); a u8 alpha blend, `(a * al + b * (al ^ 255) +
//! 128) >> 8`, its loop 12.2 -> 3.2 host instructions a pixel at VL 32 (callgrind); a u8 Sobel
//! (`|gx| + |gy|` by differences in signed 16-bit lanes, absolute values by the sign-mask XOR,
//! 32-bit sums), 1024 x 1024 with its fill loop, jit-warm at VL 32 3.15-3.42 -> 1.20-1.39 ms.
//! No bench kernel's code changes (`lanejit bench --compile-latency` at VL 8 to 64); of the
//! example kernels only `stencil.s`'s difference of sign-extended halfwords (4-16% less code at
//! VL 8 to 32).

use super::{Form, Tx};
use crate::observe::Fallback;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32X4, F64X2, I8X16, I16X8, I32, I32X4, I64, I64X2};
use cranelift_codegen::ir::{InstBuilder, Value};
use lanejit_interp::isa::{
    AluOp, CANONICAL_NAN_F32, CANONICAL_NAN_F64, Ext, FpOp, FpWidth, Inst, Operands, SOrImm, SRead,
    Sem, VRead, VReg, VSrc,
};
use lanejit_interp::machine::Regs;

/// A `V.MUL` computed on narrow lanes (see `Tx::narrow_mul_operands`).
#[derive(Clone, Copy)]
pub(crate) struct NarrowMul {
    vb: VReg,
    /// log2 of the product lanes' bytes (1 or 2).
    t: u8,
    /// The product's extension to 64 bits.
    ext: Ext,
    /// The operands, kept packed.
    pub(crate) keep: u32,
}

/// A `V.ADD` or `V.SUB` of an immediate tested at run time, or a `V.AND` with a register of
/// lane masks, computed on 32-bit packed lanes (see `Tx::packed_int_operands`).
#[derive(Clone, Copy)]
pub(crate) struct PackedInt {
    /// The packed operand.
    src: VReg,
    /// The amount added (a subtract's negated, as an `i64`).
    k: u64,
    /// Instead of the immediate, a register of lane masks (`Tx::sign_masks`).
    mask: Option<VReg>,
    /// The result's extension to 64 bits.
    ext: Ext,
    /// The operand, kept packed.
    pub(crate) keep: u32,
}

/// A `V.ADD`, `V.SUB`, `V.MUL`, `V.AND`, `V.OR`, `V.XOR` or shift by an immediate on narrow
/// lanes whose ranges show the exact 64-bit result fits lanes of `1 << t` bytes extended by
/// `ext` (see `Tx::narrow_int_operands`).
#[derive(Clone, Copy)]
pub(crate) struct NarrowInt {
    op: AluOp,
    /// The second operand when it is a register.
    vb: Option<VReg>,
    /// The immediate otherwise, sign-extended (a shift's amount reduced mod 64).
    k: u64,
    /// log2 of the result lanes' bytes; the operands are widened to it.
    t: u8,
    /// The result's extension.
    ext: Ext,
    /// The least and the most any lane of the result holds.
    range: (i64, i64),
    /// The operands, kept packed.
    pub(crate) keep: u32,
}

/// The narrowest lanes of at least `1 << low` bytes (and at most 4) that hold every value
/// in `lo..=hi` exactly, and their extension.
fn lanes_for(low: u8, lo: i128, hi: i128) -> Option<(u8, Ext)> {
    let ext = if lo >= 0 { Ext::Zero } else { Ext::Sign };
    (low..3)
        .find(|&t| {
            let (a, b) = super::lane_range(t, ext);
            lo >= i128::from(a) && hi <= i128::from(b)
        })
        .map(|t| (t, ext))
}

impl Tx<'_, '_> {
    /// `V.ADD`, `V.SUB`, `V.MUL`, `V.AND`, `V.OR` and `V.XOR` of `va` and a register or an
    /// immediate, and `V.SHL`, `V.SHR` and `V.SRA` by an immediate, under a full mask with `va`
    /// (and the register) packed as zero- or sign-extended lanes of at most 4 bytes whose
    /// ranges (`Form::Packed::lo`, `hi`) show that the exact 64-bit result is again a value of
    /// at most 4 bytes, zero- or sign-extended: computed on lanes of the narrowest width that
    /// holds it (a sum of nine bytes in 16-bit lanes, eight to a SIMD add; its product with a
    /// 13-bit constant in 32-bit lanes; a difference of bytes in signed 16-bit lanes), instead
    /// of widening every operand to 64-bit lanes: the operands extended to that width, the
    /// operation wrapping there, exact because the result fits. The result stays packed with
    /// its range. Logical shifts right take non-negative operands only; bitwise operations with
    /// a negative operand work on the narrowest signed lanes both fit (an absolute value's
    /// `V.XOR` with lane signs). A register some loop of the region carries from one iteration
    /// to the next (`Tx::carried_v`) stays in its operand's lanes and gets their whole range: a
    /// bound that grew every iteration would keep the loop's copies from ever agreeing on its
    /// form (an index shifted or masked for a table in place). Not for a narrow accumulator's add
    /// (`Tx::acc_plan`).
    pub(crate) fn narrow_int_operands(&self, inst: &Inst) -> Option<NarrowInt> {
        let (Operands::VAlu(o), Sem::VAlu(op)) = (inst.operands(), inst.opcode().sem()) else {
            return None;
        };
        if !self.full || self.vmem {
            return None;
        }
        let range = |r: VReg| match self.form[r.0 as usize] {
            Form::Packed {
                log2e,
                ext: Ext::Zero | Ext::Sign,
                lo,
                hi,
            } if log2e < 3 => Some((log2e, i128::from(lo), i128::from(hi))),
            _ => None,
        };
        let (la, alo, ahi) = range(o.va)?;
        // The second operand: a register of such lanes, or an immediate (sign-extended to
        // 64 bits, as the guest reads it).
        let (vb, lb, blo, bhi) = match o.vb {
            VSrc::V(b) => {
                let (lb, lo, hi) = range(b)?;
                (Some(b), lb, lo, hi)
            }
            VSrc::Imm(i) => (None, 0, i128::from(i), i128::from(i)),
            VSrc::S(_) => return None,
        };
        let k = if vb.is_some() { 0 } else { blo as i64 as u64 };
        let nonneg = alo >= 0 && blo >= 0;
        // All ones up to the highest bit of `x` (non-negative, below 2^63).
        let ones = |x: i128| (1i128 << (128 - x.leading_zeros())) - 1;
        let low = la.max(lb);
        let sh = (k & 63) as u32;
        let (low, lo, hi) = match op {
            AluOp::Add => {
                if vb.is_some() && self.acc_plan(inst).is_some() {
                    return None;
                }
                (low, alo + blo, ahi + bhi)
            }
            AluOp::Sub => (low, alo - bhi, ahi - blo),
            AluOp::Mul => {
                let p = [alo * blo, alo * bhi, ahi * blo, ahi * bhi];
                // x86 has no multiply of bytes: products go in 16 bits at least.
                (low.max(1), *p.iter().min()?, *p.iter().max()?)
            }
            // With a non-negative operand, at most that operand.
            AluOp::And if alo >= 0 || blo >= 0 => {
                let hi = match (alo >= 0, blo >= 0) {
                    (true, true) => ahi.min(bhi),
                    (true, false) => ahi,
                    _ => bhi,
                };
                (low, 0, hi)
            }
            AluOp::Or | AluOp::Xor if nonneg => (low, 0, ones(ahi | bhi)),
            // Bitwise on values that fit sign-extended lanes of some width: so does the
            // result (every bit above the lanes' top copies it in both operands).
            AluOp::And | AluOp::Or | AluOp::Xor => {
                let (t, _) = lanes_for(low, alo.min(blo).min(-1), ahi.max(bhi))?;
                let (lo, hi) = super::lane_range(t, Ext::Sign);
                (t, i128::from(lo), i128::from(hi))
            }
            AluOp::Shl if vb.is_none() => (la, alo << sh, ahi << sh),
            AluOp::Shr if vb.is_none() && alo >= 0 => (la, alo >> sh, ahi >> sh),
            AluOp::Sra if vb.is_none() => (la, alo >> sh, ahi >> sh),
            _ => return None,
        };
        let (t, ext) = lanes_for(low, lo, hi)?;
        if !self.can_pack(o.vd, t) {
            return None;
        }
        // A register a loop carries keeps its lanes' width and no bound but theirs: a form
        // that the next iteration's operation reproduces.
        let carried = self.carried_v & (1 << o.vd.0) != 0;
        if carried && t != la {
            return None;
        }
        let (lo, hi) = if carried {
            let (a, b) = super::lane_range(t, ext);
            (i128::from(a), i128::from(b))
        } else {
            (lo, hi)
        };
        let keep = (1 << o.va.0) | vb.map_or(0, |b| 1 << b.0);
        Some(NarrowInt {
            op,
            vb,
            k: if matches!(op, AluOp::Shl | AluOp::Shr | AluOp::Sra) {
                u64::from(sh)
            } else {
                k
            },
            t,
            ext,
            range: (lo as i64, hi as i64),
            keep,
        })
    }

    /// `vd = va op ...` on lanes of `1 << n.t` bytes (see [`Self::narrow_int_operands`]).
    fn narrow_int(&mut self, vd: VReg, va: VReg, n: NarrowInt) {
        let ty = [I8X16, I16X8, I32X4][n.t as usize];
        let a = self.packed_widened(va, n.t);
        let b = match n.vb {
            Some(b) => self.packed_widened(b, n.t),
            None => Vec::new(),
        };
        let bits = 8u64 << n.t;
        let lane = ty.lane_type();
        let kv = self.iconst(n.k);
        let k = self.b.ins().ireduce(lane, kv);
        // A shift right by the lanes' bits or more leaves 0 for a non-negative lane and -1
        // for a negative one (the guest shifts 64 bits): the lanes' sign, by a shift of one
        // bit less (Cranelift takes the amount modulo the lanes' bits).
        let sign_sh = if n.k >= bits && n.ext == Ext::Sign {
            let v = self.iconst(bits - 1);
            self.b.ins().ireduce(lane, v)
        } else {
            k
        };
        let out: Vec<Value> = a
            .into_iter()
            .enumerate()
            .map(|(j, x)| {
                let x = self.bitcast(ty, x);
                let r = match n.op {
                    // A left shift by the lanes' bits or more gets here only for lanes that
                    // are all 0 (the result must fit them).
                    AluOp::Shl if n.k >= bits => super::zero_vector(self.b, ty),
                    AluOp::Shl => self.b.ins().ishl(x, k),
                    // A lane shifted right: zero-extended lanes are non-negative, so both
                    // shifts are the logical one; sign-extended ones shift arithmetically.
                    AluOp::Shr | AluOp::Sra if n.ext == Ext::Sign => {
                        let s = if n.k >= bits { sign_sh } else { k };
                        self.b.ins().sshr(x, s)
                    }
                    AluOp::Shr | AluOp::Sra if n.k >= bits => super::zero_vector(self.b, ty),
                    AluOp::Shr | AluOp::Sra => self.b.ins().ushr(x, k),
                    // The chunk operation of any lane width (`Tx::valu`).
                    op => {
                        let y = match b.get(j) {
                            Some(&y) => self.bitcast(ty, y),
                            None => self.b.ins().splat(ty, k),
                        };
                        self.valu(op, x, y, None)
                    }
                };
                self.bitcast(I8X16, r)
            })
            .collect();
        self.def_packed_range(vd, n.t, n.ext, n.range, &out);
    }

    /// What the lanes' ranges cannot show (`Tx::narrow_int_operands` does the rest: shifts
    /// and ANDs of packed words by immediates among them), on a register packed as 32-bit
    /// lanes under a full mask, so that it stays packed and a gather indexed by it keeps the
    /// packed-index path: an AND with a register of lane masks (`Tx::sign_masks`: every
    /// 64-bit lane 0 or all ones) is the packed lanes ANDed with the masks' low halves, as
    /// extended as before; an add or subtract of an immediate to zero-extended words (loaded
    /// indices stepping through their rows, SpMV's `j + 1`) stays zero-extended when no lane
    /// carries out of 32 bits (or borrows below 0), which [`Self::packed_int`] tests at run
    /// time.
    pub(crate) fn packed_int_operands(&self, inst: &Inst) -> Option<PackedInt> {
        let (Operands::VAlu(o), Sem::VAlu(op)) = (inst.operands(), inst.opcode().sem()) else {
            return None;
        };
        if !self.full || self.vmem || !self.can_pack(o.vd, 2) {
            return None;
        }
        if let (AluOp::And, VSrc::V(vb)) = (op, o.vb) {
            // Lane masks wide, or packed as sign-extended words (`Tx::packed_sign_mask`).
            let masks = |r: VReg| {
                self.sign_masks & (1 << r.0) != 0
                    && matches!(
                        self.form[r.0 as usize],
                        Form::Wide
                            | Form::Packed {
                                log2e: 2,
                                ext: Ext::Sign,
                                ..
                            }
                    )
            };
            let (src, mask) = match (self.form[o.va.0 as usize], self.form[vb.0 as usize]) {
                (Form::Packed { log2e: 2, ext, .. }, _) if masks(vb) => ((o.va, ext), vb),
                (_, Form::Packed { log2e: 2, ext, .. }) if masks(o.va) => ((vb, ext), o.va),
                _ => return None,
            };
            let packed_mask = self.form[mask.0 as usize] != Form::Wide;
            return Some(PackedInt {
                src: src.0,
                k: 0,
                mask: Some(mask),
                ext: src.1,
                keep: (1 << src.0.0) | if packed_mask { 1 << mask.0 } else { 0 },
            });
        }
        let VSrc::Imm(imm) = o.vb else {
            return None;
        };
        let Form::Packed { log2e: 2, ext, .. } = self.form[o.va.0 as usize] else {
            return None;
        };
        let k = match (op, ext) {
            (AluOp::Add, Ext::Zero) => imm as i64 as u64,
            (AluOp::Sub, Ext::Zero) => (imm as i64).wrapping_neg() as u64,
            _ => return None,
        };
        if k != 0 && (self.local_v != 0 || self.masked_tail) {
            // Its carry check leaves for the interpreter in the middle of an iteration,
            // where the iteration-local registers (`Tx::local_v`) are not in the register
            // file, and where a masked tail's registers hold what its inactive lanes
            // computed (`Tx::masked_tail`: loaded past the trip count; the fuzzer found
            // those written back): the add is made wide instead.
            return None;
        }
        Some(PackedInt {
            src: o.va,
            k,
            mask: None,
            ext: Ext::Zero,
            keep: 1 << o.va.0,
        })
    }

    /// `vd = src op k` (or `src & mask`) on 32-bit packed lanes (see
    /// [`Self::packed_int_operands`]).
    fn packed_int(&mut self, vd: VReg, p: PackedInt) {
        let vals = self.packed_vals(p.src, 2);
        if let Some(m) = p.mask {
            if self.form[m.0 as usize] != Form::Wide {
                // Packed masks: four lanes' to a vector already.
                let ms = self.packed_vals(m, 2);
                let out: Vec<Value> = vals
                    .iter()
                    .zip(ms)
                    .map(|(&v, m)| self.b.ins().band(v, m))
                    .collect();
                self.def_packed(vd, 2, p.ext, &out);
                return;
            }
            // Four lanes' masks to a vector: the low halves of two chunks.
            let ms = self.vget_all(m);
            let out: Vec<Value> = vals
                .iter()
                .enumerate()
                .map(|(j, &v)| {
                    let (a, b) = (ms[2 * j], *ms.get(2 * j + 1).unwrap_or(&ms[2 * j]));
                    let (a, b) = (self.bitcast(I8X16, a), self.bitcast(I8X16, b));
                    let lo = self.shuffle(a, b, super::mem::pick_dwords(0));
                    self.b.ins().band(v, lo)
                })
                .collect();
            self.def_packed(vd, 2, p.ext, &out);
            return;
        }
        let k = p.k as i64;
        if k != 0 {
            // Every lane stays in 0..2^32 (bounds shared with the gathers through `src`,
            // `Tx::packed_bounds`), else the interpreter executes the instruction (an exit
            // with the state before it, cold).
            let (mn, mx) = self.packed_bounds(p.src, false);
            let (mn, mx) = (self.b.ins().uextend(I64, mn), self.b.ins().uextend(I64, mx));
            let ok = if k > 0 {
                self.b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedLessThanOrEqual, mx, 0xffff_ffff - k)
            } else {
                self.b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, mn, -k)
            };
            self.guard(ok, self.pc, Fallback::Carry);
        }
        let kv = self.iconst(p.k);
        let k32 = self.b.ins().ireduce(I32, kv);
        let out: Vec<Value> = vals
            .into_iter()
            .map(|v| {
                let x = self.bitcast(I32X4, v);
                let m = self.b.ins().splat(I32X4, k32);
                let r = self.b.ins().iadd(x, m);
                self.bitcast(I8X16, r)
            })
            .collect();
        self.def_packed(vd, 2, p.ext, &out);
    }

    /// Whether `inst` (at the current pc) and the instruction after it are `V.SUB vd, va,
    /// vb; V.SRA vd, vd, 63` with `va` and `vb` packed as 32-bit words extended alike, under
    /// a full mask: the pair leaves every lane of `vd` all ones where `va < vb` (unsigned for
    /// zero-extended words, signed for sign-extended ones: the 64-bit difference of two such
    /// words never wraps) and 0 elsewhere, which [`Self::packed_sign_mask`] computes on the
    /// packed words, a compare per four lanes, instead of widening both, subtracting and
    /// shifting. Nothing can leave between the two (neither accesses memory, and budget
    /// checks cover whole runs), so the state between them is never seen.
    pub(crate) fn packed_sign_mask_operands(&self, inst: &Inst) -> Option<(VReg, VReg, Ext)> {
        let (Operands::VAlu(o), Sem::VAlu(AluOp::Sub)) = (inst.operands(), inst.opcode().sem())
        else {
            return None;
        };
        let VSrc::V(vb) = o.vb else {
            return None;
        };
        let Some(Inst::VSra(n)) = self.next else {
            return None;
        };
        if n.vd != o.vd || n.va != o.vd || !matches!(n.vb, VSrc::Imm(k) if k & 63 == 63) {
            return None;
        }
        if !self.full || self.vmem || !self.can_pack(o.vd, 2) {
            return None;
        }
        match (self.form[o.va.0 as usize], self.form[vb.0 as usize]) {
            (
                Form::Packed {
                    log2e: 2, ext: a, ..
                },
                Form::Packed {
                    log2e: 2, ext: b, ..
                },
            ) if a == b && a != Ext::None => Some((o.va, vb, a)),
            _ => None,
        }
    }

    /// `vd` = all ones in the lanes where `va < vb`, else 0, as sign-extended packed words
    /// (see [`Self::packed_sign_mask_operands`]); the next instruction (the `V.SRA`) is
    /// translated with it (`Tx::fused`).
    fn packed_sign_mask(&mut self, vd: VReg, va: VReg, vb: VReg, ext: Ext) {
        let a = self.packed_vals(va, 2);
        let b = self.packed_vals(vb, 2);
        let out: Vec<Value> = a
            .into_iter()
            .zip(b)
            .map(|(a, b)| {
                let (a, b) = (self.bitcast(I32X4, a), self.bitcast(I32X4, b));
                let cc = if ext == Ext::Sign {
                    IntCC::SignedLessThan
                } else {
                    IntCC::UnsignedLessThan
                };
                let m = self.b.ins().icmp(cc, a, b);
                self.bitcast(I8X16, m)
            })
            .collect();
        self.def_packed(vd, 2, Ext::Sign, &out);
        self.sign_masks |= 1 << vd.0;
        self.fused = true;
    }

    /// Scalar `a op b`.
    pub(crate) fn salu(&mut self, op: AluOp, a: Value, b: Value) -> Value {
        let ins = self.b.ins();
        match op {
            AluOp::Add => ins.iadd(a, b),
            AluOp::Sub => ins.isub(a, b),
            AluOp::Mul => ins.imul(a, b),
            AluOp::And => ins.band(a, b),
            AluOp::Or => ins.bor(a, b),
            AluOp::Xor => ins.bxor(a, b),
            AluOp::Shl => {
                let s = ins.band_imm_s(b, 63);
                self.b.ins().ishl(a, s)
            }
            AluOp::Shr => {
                let s = ins.band_imm_s(b, 63);
                self.b.ins().ushr(a, s)
            }
            AluOp::Sra => {
                let s = ins.band_imm_s(b, 63);
                self.b.ins().sshr(a, s)
            }
        }
    }

    /// Chunk `c` of a vector source operand.
    pub(crate) fn vsrc(&mut self, src: VSrc, c: usize) -> Value {
        match src {
            VSrc::V(r) => self.vget(r, c),
            VSrc::S(r) => {
                let s = self.sget(r);
                self.b.ins().splat(I64X2, s)
            }
            VSrc::Imm(i) => {
                let k = i as i64 as u64;
                self.vconst2(k, k)
            }
        }
    }

    /// All chunks of a vector source operand (a broadcast is built once).
    pub(crate) fn vsrc_all(&mut self, src: VSrc) -> Vec<Value> {
        match src {
            VSrc::V(r) => self.vget_all(r),
            VSrc::S(_) | VSrc::Imm(_) => {
                let v = self.vsrc(src, 0);
                vec![v; self.nch]
            }
        }
    }

    /// Lane ids of chunk `c`.
    pub(crate) fn lane_ids(&mut self, c: usize) -> Value {
        self.vconst2(2 * c as u64, 2 * c as u64 + 1)
    }

    /// Vector `a op b` for one chunk; `b_scalar` is the broadcast scalar when `b` is uniform.
    fn valu(&mut self, op: AluOp, a: Value, b: Value, b_scalar: Option<Value>) -> Value {
        match op {
            AluOp::Add => self.b.ins().iadd(a, b),
            AluOp::Sub => self.b.ins().isub(a, b),
            AluOp::Mul => self.b.ins().imul(a, b),
            AluOp::And => self.b.ins().band(a, b),
            AluOp::Or => self.b.ins().bor(a, b),
            AluOp::Xor => self.b.ins().bxor(a, b),
            AluOp::Shl | AluOp::Shr | AluOp::Sra => match b_scalar {
                // An arithmetic shift by 63 is each lane's sign: one compare with zero
                // (`pcmpgtq`), where SSE's 64-bit `sshr` takes five instructions.
                Some(s) if op == AluOp::Sra && self.const_of(s).map(|k| k & 63) == Some(63) => {
                    let zero = self.vconst2(0, 0);
                    self.b.ins().icmp(IntCC::SignedLessThan, a, zero)
                }
                Some(s) => {
                    let s = self.b.ins().band_imm_s(s, 63);
                    match op {
                        AluOp::Shl => self.b.ins().ishl(a, s),
                        AluOp::Shr => self.b.ins().ushr(a, s),
                        _ => self.b.ins().sshr(a, s),
                    }
                }
                None => {
                    // Per-lane amounts: no 64-bit variable vector shift in SSE, go lane by lane.
                    let mut lanes = [a; 2];
                    for (l, out) in lanes.iter_mut().enumerate() {
                        let x = self.b.ins().extractlane(a, l as u8);
                        let y = self.b.ins().extractlane(b, l as u8);
                        *out = self.salu(op, x, y);
                    }
                    let v = self.b.ins().scalar_to_vector(I64X2, lanes[0]);
                    self.b.ins().insertlane(v, lanes[1], 1)
                }
            },
        }
    }

    /// The constants of [`Self::fp_finish`] for width `w`: the canonical NaN vector and, for
    /// f32, the low-half mask.
    fn fp_consts(&mut self, w: FpWidth) -> (Value, Value) {
        match w {
            FpWidth::S => {
                let canon = self.canonical_nan_f32();
                let low = self.vconst2(0xffff_ffff, 0xffff_ffff);
                (canon, low)
            }
            FpWidth::D => {
                let canon = self.vconst2(CANONICAL_NAN_F64, CANONICAL_NAN_F64);
                (canon, canon)
            }
        }
    }

    /// Canonicalise NaN lanes of a float vector; returns the `i64x2` bit pattern. `k` comes
    /// from [`Self::fp_consts`].
    fn fp_finish(&mut self, w: FpWidth, r: Value, k: (Value, Value)) -> Value {
        let isnan = self.b.ins().fcmp(FloatCC::Unordered, r, r);
        match w {
            FpWidth::S => {
                let ri = self.bitcast(I32X4, r);
                let sel = self.b.ins().bitselect(isnan, k.0, ri);
                let sel = self.bitcast(I64X2, sel);
                self.b.ins().band(sel, k.1)
            }
            FpWidth::D => {
                let ri = self.bitcast(I64X2, r);
                self.b.ins().bitselect(isnan, k.0, ri)
            }
        }
    }

    /// In straight-line code: the instruction as one [`crate::abi::lj_vop`] call on the
    /// register file.
    fn vop_call(&mut self, code: u32, vd: VReg, va: VReg, vb: VSrc) {
        let (code, b) = match vb {
            VSrc::V(r) => (code, self.iconst(r.0 as u64)),
            VSrc::S(r) => (code | crate::abi::vop::SCALAR_B, self.sget(r)),
            VSrc::Imm(i) => (
                code | crate::abi::vop::SCALAR_B,
                self.iconst(i as i64 as u64),
            ),
        };
        self.vop_emit(code, vd, va, b);
    }

    /// [`Self::vop_call`] with a scalar value as `b` and no `va`.
    fn vop_call_scalar(&mut self, code: u32, vd: VReg, b: Value) {
        self.vop_emit(code | crate::abi::vop::SCALAR_B, vd, vd, b);
    }

    fn vop_emit(&mut self, code: u32, vd: VReg, va: VReg, b: Value) {
        // Only helper-based straight-line code hands vector ALU work to `lj_vop`.
        self.fallback(self.pc, Fallback::FirstCompile);
        let m = self.mask_value();
        let sig = self.sig(super::Helper::Vop);
        let f = self.helper_addr(crate::abi::HelperFn::Vop);
        let w = crate::abi::vop::word(code, vd.0, va.0);
        let w = self.b.ins().iconst(I32, w as i64);
        self.b.ins().call_indirect(sig, f, &[self.regs, w, b, m]);
    }

    /// A `V.MUL` of two vector registers both packed as 8- or 16-bit lanes (loaded bytes or
    /// halfwords) under a full mask: the exact 64-bit product of such lanes fits in 16 bits
    /// (two 8-bit lanes of the same extension) or 32, so it is computed on 8 or 4 lanes per
    /// SIMD multiply and the result stays packed at that width with the extension that
    /// represents it exactly (zero for two zero-extended operands, sign otherwise), instead of
    /// widening both operands to 64-bit lanes for a 64-bit multiply x86 does not have.
    pub(crate) fn narrow_mul_operands(&self, inst: &Inst) -> Option<NarrowMul> {
        let (Operands::VAlu(o), Sem::VAlu(AluOp::Mul)) = (inst.operands(), inst.opcode().sem())
        else {
            return None;
        };
        let VSrc::V(vb) = o.vb else {
            return None;
        };
        if !self.full || self.vmem {
            return None;
        }
        let (
            Form::Packed {
                log2e: la, ext: ea, ..
            },
            Form::Packed {
                log2e: lb, ext: eb, ..
            },
        ) = (self.form[o.va.0 as usize], self.form[vb.0 as usize])
        else {
            return None;
        };
        if la > 1 || lb > 1 || ea == Ext::None || eb == Ext::None {
            return None;
        }
        // Bytes: packed as bytes, or as halfwords by a byte load at VL 8 (`Tx::byte_lanes`).
        let byte = |l: u8, r: VReg| l == 0 || (l == 1 && self.byte_lanes & (1 << r.0) != 0);
        let t = if byte(la, o.va) && byte(lb, vb) && ea == eb {
            1
        } else {
            2
        };
        if !self.can_pack(o.vd, t) {
            return None;
        }
        let ext = if ea == Ext::Zero && eb == Ext::Zero {
            Ext::Zero
        } else {
            Ext::Sign
        };
        Some(NarrowMul {
            vb,
            t,
            ext,
            keep: (1 << o.va.0) | (1 << vb.0),
        })
    }

    /// `V.ADD vd, vd, vx` on an accumulator (`analysis::accumulators`) with `vx` packed in
    /// lanes of 1 or 2 bytes (before its operands are materialised): `vd`, `vx`, the lanes
    /// of the narrow sums (twice as wide as `vx`'s) and the most iterations that may add
    /// into them before they could overflow.
    pub(crate) fn acc_plan(&self, inst: &Inst) -> Option<(VReg, VReg, u8, u64)> {
        let (Operands::VAlu(o), Sem::VAlu(AluOp::Add)) = (inst.operands(), inst.opcode().sem())
        else {
            return None;
        };
        let VSrc::V(x) = o.vb else {
            return None;
        };
        // Only a register nothing else in the body touches: one that the body also reads
        // or writes elsewhere (a gather's index and destination, fuzz seed 39600 case
        // 150387) would leave its narrow sums in a form the accumulator's edges do not
        // carry.
        if o.vd != o.va
            || !self.full
            || self.vmem
            || self.pv[o.vd.0 as usize].is_none()
            || self.acc_regs & (1 << o.vd.0) == 0
        {
            return None;
        }
        let Form::Packed { log2e: lx, ext, .. } = self.form[x.0 as usize] else {
            return None;
        };
        if lx > 1 || ext == Ext::None || (self.vl as usize) << lx < 16 {
            return None;
        }
        // The most a lane of vx adds, and the most a narrow lane holds.
        let most: u64 = match (lx, ext) {
            (0, Ext::Zero) => 255,
            (0, _) => 128,
            (_, Ext::Zero) => 65_535,
            _ => 32_768,
        };
        let room: u64 = if lx == 0 { 32_767 } else { 2_147_483_647 };
        Some((o.vd, x, lx + 1, room / most))
    }

    /// The operands an accumulator's add keeps as they are (see [`Self::acc_add`]); outside
    /// the streaming copy, records the accumulator's lanes for it (`Tx::acc_seen`: the first
    /// full copy is translated before the streaming copy).
    pub(crate) fn acc_operands(&mut self, inst: &Inst) -> u32 {
        let Some((vd, x, log2e, k)) = self.acc_plan(inst) else {
            return 0;
        };
        if self.stream.is_none() {
            if self.acc_seen[vd.0 as usize].0 == 0 {
                self.acc_seen[vd.0 as usize] = (log2e, k);
            }
            return 0;
        }
        if self.form[vd.0 as usize] == (Form::Acc { log2e }) {
            (1 << vd.0) | (1 << x.0)
        } else {
            0
        }
    }

    /// An accumulator's add in the streaming copy, when [`Self::acc_operands`] kept its
    /// operands: the packed lanes of `vx`, widened, go into `vd`'s narrow sums
    /// (`Form::Acc`). Returns whether it was emitted.
    fn acc_add(&mut self, inst: &Inst) -> bool {
        let Some((vd, x, log2e, _)) = self.acc_plan(inst) else {
            return false;
        };
        if self.stream.is_none() || self.form[vd.0 as usize] != (Form::Acc { log2e }) {
            return false;
        }
        let ty = if log2e == 1 { I16X8 } else { I32X4 };
        let products = log2e == 2 && self.acc_perm & (1 << vd.0) != 0;
        let add = if products && self.acc_natural {
            match self.pair_products(vd, x) {
                Some(add) => add,
                // Kept for the round's second copy.
                None => return true,
            }
        } else if products {
            self.even_odd(x)
        } else {
            self.packed_widened(x, log2e)
        };
        let sums = self.packed_vals(vd, log2e);
        let vars = self.pv[vd.0 as usize].clone().expect("accumulator vars");
        for (j, (s, a)) in sums.into_iter().zip(add).enumerate() {
            let s = self.bitcast(ty, s);
            let a = self.bitcast(ty, a);
            let r = self.b.ins().iadd(s, a);
            let r = self.bitcast(I8X16, r);
            self.b.def_var(vars[j], r);
        }
        true
    }

    /// The 16-bit lanes of packed register `r` (products, `Tx::acc_perm`) widened to 32
    /// bits in the permuted layout of a product accumulator's sums: per 16-byte chunk, its
    /// even lanes, then its odd lanes. Even lanes sign-extended are `pmaddwd` by
    /// `[1, 0, ...]` (Cranelift's pattern for it: pairwise sums of the widened products by
    /// the widened constant), odd lanes an arithmetic shift right of the 32-bit view by 16;
    /// zero-extended, a mask and a logical shift. Two instructions per chunk instead of the
    /// in-order widening's three (`pmovsxwd` of each half and the shuffle of the upper half),
    /// and none of them on the shuffle port: dot8's compiled code -7% instructions
    /// (callgrind, N = 16384, VL 32), and 9.9-10.2 -> 13.0-13.1 G pairs/s at 256 KiB
    /// (three alternating runs; 0.46x -> 0.60x native), 9.8-10.1 -> 12.8 at 16 MiB.
    fn even_odd(&mut self, r: VReg) -> Vec<Value> {
        let Form::Packed { ext, .. } = self.form[r.0 as usize] else {
            unreachable!("even_odd on a register that is not packed")
        };
        let vals = self.packed_vals(r, 1);
        let mut out = Vec::with_capacity(2 * vals.len());
        for v in vals {
            let p32 = self.bitcast(I32X4, v);
            let (even, odd) = if ext == Ext::Sign {
                let c = self.vconst2(0x0000_0001_0000_0001, 0x0000_0001_0000_0001);
                (self.madd_pairs(v, c), self.b.ins().sshr_imm_s(p32, 16))
            } else {
                let m = self.vconst2(0x0000_ffff_0000_ffff, 0x0000_ffff_0000_ffff);
                let m = self.bitcast(I32X4, m);
                (self.b.ins().band(p32, m), self.b.ins().ushr_imm_s(p32, 16))
            };
            out.push(self.bitcast(I8X16, even));
            out.push(self.bitcast(I8X16, odd));
        }
        out
    }

    /// `pmaddwd`: the signed 16-bit lanes of `v` times those of `c`, each adjacent pair's
    /// products summed into a 32-bit lane (Cranelift's pattern for it: the pairwise sums of
    /// the widened products).
    fn madd_pairs(&mut self, v: Value, c: Value) -> Value {
        let (p, c) = (self.bitcast(I16X8, v), self.bitcast(I16X8, c));
        let (pl, cl) = (self.b.ins().swiden_low(p), self.b.ins().swiden_low(c));
        let (ph, ch) = (self.b.ins().swiden_high(p), self.b.ins().swiden_high(c));
        let a = self.b.ins().imul(pl, cl);
        let b = self.b.ins().imul(ph, ch);
        self.b.ins().iadd_pairwise(a, b)
    }

    /// The 16-bit products of packed register `x` that an accumulator of products `vd` adds
    /// in a paired streaming round (`Tx::acc_natural`), as 32-bit lanes in lane order. Signed
    /// products: in the round's first copy they are kept (`Tx::acc_stash`, `None`), and the
    /// second copy adds both iterations' at once, each of its chunks interleaved with the
    /// first copy's (`punpcklwd`/`punpckhwd`) and the pairs summed by a multiply-add by ones
    /// (`pmaddwd`): per 8 lanes of the round two unpacks and two multiply-adds, where the
    /// permuted sums of [`Self::even_odd`] take two multiply-adds and two shifts, and half
    /// the adds into the sums. dot8's paired round (64 pairs of bytes at VL 32, `perf
    /// annotate`): 77 -> 69 host instructions; `bench --kernel dot8 --sizes 256K --engine
    /// jit`, two alternating runs each, G pairs/s: VL 8 11.2-11.3 -> 11.6, VL 16 13.0 ->
    /// 14.1-14.3, VL 32 11.0-13.0 -> 14.0-14.3, VL 64 12.8-12.9 -> 13.5-13.9; 16 MiB at VL 32
    /// 12.6 -> 13.6-13.9. Unsigned products (up to 65,025, not a signed 16-bit lane) are widened
    /// in each copy. No exit can come between the two copies' adds: a round is entered with
    /// both iterations proven and within the budget, and only bodies whose accesses are all
    /// hoisted pair.
    fn pair_products(&mut self, vd: VReg, x: VReg) -> Option<Vec<Value>> {
        let Form::Packed { ext, .. } = self.form[x.0 as usize] else {
            unreachable!("pair_products on a register that is not packed")
        };
        if ext != Ext::Sign {
            return Some(self.packed_widened(x, 2));
        }
        let products = self.packed_vals(x, 1);
        if !self.stream_second {
            self.acc_stash.push((vd, products));
            return None;
        }
        let Some(i) = self.acc_stash.iter().position(|(r, _)| *r == vd) else {
            return Some(self.packed_widened(x, 2));
        };
        let (_, first) = self.acc_stash.swap_remove(i);
        let ones = self.vconst2(0x0001_0001_0001_0001, 0x0001_0001_0001_0001);
        let mut out = Vec::with_capacity(2 * products.len());
        for (a, b) in first.into_iter().zip(products) {
            for half in [INTERLEAVE_WORDS_LO, INTERLEAVE_WORDS_HI] {
                let q = self.shuffle(a, b, half);
                let s = self.madd_pairs(q, ones);
                out.push(self.bitcast(I8X16, s));
            }
        }
        Some(out)
    }

    /// The lanes of packed register `r` widened to `1 << t` bytes each (by its extension).
    fn packed_widened(&mut self, r: VReg, t: u8) -> Vec<Value> {
        let Form::Packed { log2e, ext, .. } = self.form[r.0 as usize] else {
            unreachable!("packed_widened on a wide register")
        };
        let mut vs: Vec<Value> = self.packed_vals(r, log2e);
        for l in log2e..t {
            let ty = [I8X16, I16X8, I32X4][l as usize];
            vs = vs
                .into_iter()
                .flat_map(|v| {
                    if l == log2e {
                        if let Some(halves) = self.widening_load(v, l, ext) {
                            return halves;
                        }
                    }
                    let v = self.bitcast(ty, v);
                    if ext == Ext::Sign {
                        [self.b.ins().swiden_low(v), self.b.ins().swiden_high(v)]
                    } else {
                        [self.b.ins().uwiden_low(v), self.b.ins().uwiden_high(v)]
                    }
                })
                .collect();
        }
        vs
    }

    /// Packed chunk `v` (lanes of `1 << l` bytes) widened to twice its lane width by two
    /// extending loads of its halves (`pmovsxbw`/`pmovzxwd`/... from memory) when it is a
    /// contiguous load of this body copy with no store since (`Tx::mem_src`): a load, a
    /// widening and a shuffle of the upper half fewer per chunk (dot8's bytes).
    fn widening_load(&mut self, v: Value, l: u8, ext: Ext) -> Option<[Value; 2]> {
        let &(_, host, off, f) = self.mem_src.iter().find(|m| m.0 == v)?;
        let sign = ext == Ext::Sign;
        let mut half = |o: i32| match (l, sign) {
            (0, true) => self.b.ins().sload8x8(f, host, o),
            (0, false) => self.b.ins().uload8x8(f, host, o),
            (1, true) => self.b.ins().sload16x4(f, host, o),
            (1, false) => self.b.ins().uload16x4(f, host, o),
            (_, true) => self.b.ins().sload32x2(f, host, o),
            (_, false) => self.b.ins().uload32x2(f, host, o),
        };
        Some([half(off), half(off + 8)])
    }

    /// `vd = va * vb` on narrow lanes (see [`Self::narrow_mul_operands`]).
    fn narrow_mul(&mut self, vd: VReg, va: VReg, n: NarrowMul) {
        let ty = if n.t == 1 { I16X8 } else { I32X4 };
        let a = self.packed_widened(va, n.t);
        let b = self.packed_widened(n.vb, n.t);
        let out: Vec<Value> = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| {
                let x = self.bitcast(ty, x);
                let y = self.bitcast(ty, y);
                let p = self.b.ins().imul(x, y);
                self.bitcast(I8X16, p)
            })
            .collect();
        self.def_packed(vd, n.t, n.ext, &out);
    }

    /// The vector operands of an f32 add, subtract, multiply or FMA that stay packed across it
    /// (see [`Self::fp_packed`]): when the packed form applies (a full mask, `vd` can be
    /// packed, some operand already is and none is packed at another width), every vector
    /// operand; else none (the wide path, after every operand is materialised).
    pub(crate) fn packed_f32_operands(&self, inst: &Inst) -> u32 {
        let (Operands::VFp(o), Sem::Fp(op, FpWidth::S)) = (inst.operands(), inst.opcode().sem())
        else {
            return 0;
        };
        let fma = op == FpOp::Fma;
        if !self.full || self.vmem || !self.can_pack(o.vd, 2) || (fma && !self.native_fma) {
            return 0;
        }
        let mut regs = vec![o.va];
        if let VSrc::V(b) = o.vb {
            regs.push(b);
        }
        if fma {
            regs.push(o.vd);
        }
        let mut any = false;
        for r in &regs {
            match self.form[r.0 as usize] {
                Form::Packed { log2e: 2, .. } => any = true,
                Form::Packed { .. } | Form::Acc { .. } => return 0,
                Form::Wide => {}
            }
        }
        if !any {
            return 0;
        }
        // vd too: under a full mask every lane is overwritten (FMA reads it as an operand).
        regs.iter().fold(1 << o.vd.0, |k, r| k | (1 << r.0))
    }

    /// The f32 lanes of `r` packed four to an `i8x16` (the low 32 bits of every lane): its
    /// packed variables at width 4, or its wide chunks narrowed by one shuffle per pair.
    pub(crate) fn f32_lanes(&mut self, r: VReg) -> Vec<Value> {
        if let Form::Packed { log2e: 2, .. } = self.form[r.0 as usize] {
            return self.packed_vals(r, 2);
        }
        if let Some(v) = &self.ro_f32[r.0 as usize] {
            return v.clone();
        }
        let chunks = self.vget_all(r);
        let idx = [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27];
        chunks
            .chunks(2)
            .map(|p| {
                let a = self.bitcast(cranelift_codegen::ir::types::I8X16, p[0]);
                let b = self.bitcast(cranelift_codegen::ir::types::I8X16, p[1]);
                self.shuffle(a, b, idx)
            })
            .collect()
    }

    /// f32 add, subtract, multiply or FMA under a full mask on packed f32 lanes (the low 32
    /// bits of each 64-bit lane), four per `f32x4` operation, with one NaN canonicalisation
    /// per vector; the result stays packed with zero extension (an f32 result's upper 32 bits
    /// are zero). Operands still wide are narrowed first ([`Self::f32_lanes`]).
    fn fp_packed(&mut self, op: FpOp, vd: VReg, va: VReg, vb: VSrc) {
        let n = (self.vl as usize * 4) / 16;
        let a = self.f32_lanes(va);
        let b: Vec<Value> = match vb {
            VSrc::V(r) => self.f32_lanes(r),
            VSrc::S(r) if self.remat_splats && r.0 != 0 && self.dirty.s & (1 << r.0) == 0 => {
                let v = self.round_splat(r);
                vec![v; n]
            }
            VSrc::S(_) | VSrc::Imm(_) => {
                let x = match vb {
                    VSrc::S(r) => self.sget(r),
                    _ => {
                        let VSrc::Imm(i) = vb else { unreachable!() };
                        self.iconst(i as i64 as u64)
                    }
                };
                let x = self.b.ins().ireduce(I32, x);
                let v = self.b.ins().splat(I32X4, x);
                let v = self.bitcast(cranelift_codegen::ir::types::I8X16, v);
                vec![v; n]
            }
        };
        let d = (op == FpOp::Fma).then(|| self.f32_lanes(vd));
        let vars = self.pv[vd.0 as usize].clone().expect("packed vars of vd");
        let mut out = Vec::with_capacity(n);
        for j in 0..n {
            let x = self.bitcast(F32X4, a[j]);
            let y = self.bitcast(F32X4, b[j]);
            let r = match op {
                FpOp::Add => self.b.ins().fadd(x, y),
                FpOp::Sub => self.b.ins().fsub(x, y),
                FpOp::Mul => self.b.ins().fmul(x, y),
                FpOp::Fma => {
                    let z = d.as_ref().expect("FMA reads vd")[j];
                    let z = self.bitcast(F32X4, z);
                    self.b.ins().fma(x, y, z)
                }
            };
            // Canonicalised lazily (see `Tx::nan`).
            out.push(self.bitcast(cranelift_codegen::ir::types::I8X16, r));
        }
        for (j, v) in out.into_iter().enumerate() {
            self.b.def_var(vars[j], v);
        }
        self.form[vd.0 as usize] = Form::packed(2, lanejit_interp::isa::Ext::Zero);
        self.nan[vd.0 as usize] = Some(FpWidth::S);
        self.nan_set |= 1 << vd.0;
    }

    /// Scalar register `r`'s low word in every lane (an `i8x16`), in the streaming copy of a
    /// loop, for a register the region never writes: loaded from the register file (which
    /// holds its value throughout the region) inside the round, once per round. As a
    /// broadcast of the register's variable, Cranelift hoists it out of the loop, and the
    /// allocator, short of registers elsewhere in the function, keeps it in a spill slot and
    /// reloads it before every use (fir8's eight taps: 7 reloads per two chunks, 28 of the
    /// streaming iteration's 201 instructions). Loaded as an `f32`, whose broadcast is
    /// `vmovss` + `vbroadcastss` (an `i32` load went through a general register: three
    /// instructions; Cranelift folds the load into the broadcast only when the broadcast has
    /// one use). Made where the current instruction's lowering started, it dominates the rest
    /// of the round; kept for the round's second copy too.
    fn round_splat(&mut self, r: lanejit_interp::isa::SReg) -> Value {
        if let Some(&(_, v)) = self.round_splats.iter().find(|(n, _)| *n == r.0) {
            return v;
        }
        let off = (Regs::OFFSET_S + 8 * r.0 as usize) as i32;
        // Not `readonly`: a load the optimiser may not move out of the loop.
        let x = self.b.ins().load(
            cranelift_codegen::ir::types::F32,
            cranelift_codegen::ir::MemFlagsData::trusted(),
            self.regs,
            off,
        );
        let v = self.b.ins().splat(F32X4, x);
        let v = self.bitcast(cranelift_codegen::ir::types::I8X16, v);
        if self.b.current_block().is_some() && self.b.current_block() == self.inst_block {
            self.round_splats.push((r.0, v));
        }
        v
    }

    /// The vector registers `inst` reads as floating-point operands of its own width under a
    /// full mask, which may stay non-canonical (see `Tx::nan`).
    pub(crate) fn lazy_fp_reads(&self, inst: &Inst) -> u32 {
        let (Operands::VFp(o), Sem::Fp(op, w)) = (inst.operands(), inst.opcode().sem()) else {
            return 0;
        };
        if !self.full || self.vmem || (op == FpOp::Fma && !self.native_fma) {
            return 0;
        }
        let mut regs = vec![o.va];
        if let VSrc::V(b) = o.vb {
            regs.push(b);
        }
        if op == FpOp::Fma {
            regs.push(o.vd);
        }
        regs.iter()
            .filter(|r| self.nan[r.0 as usize] == Some(w))
            .fold(0, |m, r| m | (1 << r.0))
    }

    /// The canonical f32 NaN in every lane of an `i32x4`, for [`Self::canonical_f32`].
    pub(crate) fn canonical_nan_f32(&mut self) -> Value {
        let kc = self.b.ins().iconst(I32, CANONICAL_NAN_F32 as i64);
        self.b.ins().splat(I32X4, kc)
    }

    /// The lanes of the `f32x4` `x` as an `i32x4`, every NaN lane replaced by `canon`
    /// ([`Self::canonical_nan_f32`]).
    pub(crate) fn canonical_f32(&mut self, x: Value, canon: Value) -> Value {
        let isnan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        let xi = self.bitcast(I32X4, x);
        self.b.ins().bitselect(isnan, canon, xi)
    }

    /// Canonicalise the NaN lanes of `r` if it may hold raw FP results (`Tx::nan`), in its
    /// current form.
    pub(crate) fn canonicalize(&mut self, r: VReg) {
        let Some(w) = self.nan[r.0 as usize].take() else {
            return;
        };
        if let Form::Acc { .. } = self.form[r.0 as usize] {
            // Not reached (an accumulator holds integer sums); correct wherever it is.
            self.materialize(r);
        }
        match self.form[r.0 as usize] {
            Form::Packed { log2e: 2, .. } => {
                let canon = self.canonical_nan_f32();
                let vals = self.packed_vals(r, 2);
                let vars = self.pv[r.0 as usize].clone().expect("packed vars");
                for (j, v) in vals.into_iter().enumerate() {
                    let x = self.bitcast(F32X4, v);
                    let sel = self.canonical_f32(x, canon);
                    let sel = self.bitcast(cranelift_codegen::ir::types::I8X16, sel);
                    self.b.def_var(vars[j], sel);
                }
            }
            Form::Packed { .. } | Form::Acc { .. } => {
                unreachable!("only f32 results are packed raw")
            }
            Form::Wide => {
                let fty = match w {
                    FpWidth::S => F32X4,
                    FpWidth::D => F64X2,
                };
                let k = self.fp_consts(w);
                let chunks = self.vget_all(r);
                let out: Vec<Value> = chunks
                    .into_iter()
                    .map(|c| {
                        let x = self.bitcast(fty, c);
                        self.fp_finish(w, x, k)
                    })
                    .collect();
                self.vset_raw(r, &out);
            }
        }
    }

    fn fp(&mut self, inst: &Inst, op: FpOp, w: FpWidth, vd: VReg, va: VReg, vb: VSrc) {
        if self.helpers {
            self.vop_call(inst.opcode() as u32, vd, va, vb);
            return;
        }
        if self.packed_f32_operands(inst) != 0 {
            self.fp_packed(op, vd, va, vb);
            return;
        }
        if op == FpOp::Fma && !self.native_fma {
            // No host FMA: the exactly rounded software `mul_add`, lane by lane.
            let a = self.vget_all(va);
            let bs = self.vsrc_all(vb);
            let d = self.vget_all(vd);
            let pa = self.spill(0, &a);
            let pb = self.spill(1, &bs);
            let pd = self.spill(2, &d);
            self.fallback(self.pc, Fallback::SoftFma);
            let m = self.mask_value();
            let is_d = self.b.ins().iconst(I32, (w == FpWidth::D) as i64);
            let f = self.helper_addr(crate::abi::HelperFn::Fma);
            let sig = self.sig(super::Helper::Fma);
            self.b.ins().call_indirect(sig, f, &[pa, pb, pd, m, is_d]);
            let out = self.unspill(pd);
            // The helper only wrote active lanes.
            self.vset_raw(vd, &out);
            return;
        }
        let fty = match w {
            FpWidth::S => F32X4,
            FpWidth::D => F64X2,
        };
        let bs = self.vsrc_all(vb);
        // Under a full mask the raw result stays (canonicalised lazily, see `Tx::nan`).
        let lazy = self.full && !self.vmem;
        let k = self.fp_consts(w);
        let mut out = Vec::with_capacity(self.nch);
        for (c, &b) in bs.iter().enumerate() {
            let a = self.vget(va, c);
            let a = self.bitcast(fty, a);
            let b = self.bitcast(fty, b);
            let r = match op {
                FpOp::Add => self.b.ins().fadd(a, b),
                FpOp::Sub => self.b.ins().fsub(a, b),
                FpOp::Mul => self.b.ins().fmul(a, b),
                FpOp::Fma => {
                    // Exactly rounded on the host (`native_fma`); f32 lanes' upper halves
                    // compute garbage that `fp_finish` clears.
                    let d = self.vget(vd, c);
                    let d = self.bitcast(fty, d);
                    self.b.ins().fma(a, b, d)
                }
            };
            out.push(if lazy {
                self.bitcast(I64X2, r)
            } else {
                self.fp_finish(w, r, k)
            });
        }
        self.vset_masked(vd, &out);
        if lazy {
            self.nan[vd.0 as usize] = Some(w);
            self.nan_set |= 1 << vd.0;
        }
    }

    /// Sum of the active lanes of `va`.
    fn redsum(&mut self, va: VReg) -> Value {
        if self.helpers && self.vl > 2 {
            self.fallback(self.pc, Fallback::FirstCompile);
            let sig = self.sig(super::Helper::Redsum);
            let f = self.helper_addr(crate::abi::HelperFn::Redsum);
            let a = self.b.ins().iconst(I32, va.0 as i64);
            let m = self.mask_value();
            let call = self.b.ins().call_indirect(sig, f, &[self.regs, a, m]);
            return self.b.inst_results(call)[0];
        }
        if self.vl == 1 {
            let v = self.vget(va, 0);
            let x = self.b.ins().extractlane(v, 0);
            if self.full {
                return x;
            }
            let m = self.b.use_var(self.mask);
            let on = self.b.ins().band_imm_s(m, 1);
            let z = self.iconst(0);
            return self.b.ins().select(on, x, z);
        }
        let mut acc = None;
        for c in 0..self.nch {
            let v = self.vget(va, c);
            let v = if self.full {
                v
            } else {
                let m = self.lane_mask(c);
                self.b.ins().band(v, m)
            };
            acc = Some(match acc {
                None => v,
                Some(a) => self.b.ins().iadd(a, v),
            });
        }
        let acc = acc.expect("at least one chunk");
        let x = self.b.ins().extractlane(acc, 0);
        let y = self.b.ins().extractlane(acc, 1);
        self.b.ins().iadd(x, y)
    }

    /// Translate a non-memory, non-control instruction. Returns false if `inst` is not one.
    pub(crate) fn alu_inst(&mut self, inst: &Inst) -> bool {
        match (inst.operands(), inst.opcode().sem()) {
            (Operands::SAlu(o), Sem::SAlu(op)) => {
                let a = self.sget(o.sa);
                let b = match o.sb {
                    SOrImm::Reg(r) => self.sget(r),
                    SOrImm::Imm(i) => self.iconst(i as i64 as u64),
                };
                let r = match (self.const_of(a), self.const_of(b)) {
                    (Some(x), Some(y)) => self.iconst(op.apply(x, y)),
                    _ => self.salu(op, a, b),
                };
                self.sset(o.sd, r);
            }
            (Operands::SLi(o), _) => {
                let v = self.iconst(o.imm);
                self.sset(o.sd, v);
            }
            (Operands::SMov(o), _) => {
                let v = self.sget(o.sa);
                self.sset(o.sd, v);
            }
            (Operands::SUnary(o), Sem::SRead(r)) => {
                let v = match r {
                    SRead::Lc0 => self.b.use_var(self.lc0),
                    SRead::Vl => self.iconst(self.vl as u64),
                    SRead::Gid => self.regs_word(Regs::OFFSET_GID),
                    SRead::NGroups => self.regs_word(Regs::OFFSET_NGROUPS),
                    SRead::Mask => self.b.use_var(self.mask),
                };
                self.sset(o.sd, v);
            }
            (Operands::SGetLane(o), _) => {
                let lane = o.lane as u32 % self.vl;
                let ch = self.vget(o.va, (lane / 2) as usize);
                let v = self.b.ins().extractlane(ch, (lane % 2) as u8);
                self.sset(o.sd, v);
            }
            (Operands::VAlu(o), Sem::VAlu(op)) => {
                if let Some(n) = self.narrow_int_operands(inst) {
                    self.narrow_int(o.vd, o.va, n);
                    return true;
                }
                if let Some(n) = self.narrow_mul_operands(inst) {
                    self.narrow_mul(o.vd, o.va, n);
                    return true;
                }
                if let Some(p) = self.packed_int_operands(inst) {
                    self.packed_int(o.vd, p);
                    return true;
                }
                if let Some((a, b, ext)) = self.packed_sign_mask_operands(inst) {
                    self.packed_sign_mask(o.vd, a, b, ext);
                    return true;
                }
                if op == AluOp::Add && self.acc_add(inst) {
                    return true;
                }
                if self.helpers && self.vl > 2 {
                    self.vop_call(inst.opcode() as u32, o.vd, o.va, o.vb);
                    return true;
                }
                let b_scalar = match o.vb {
                    VSrc::V(_) => None,
                    VSrc::S(r) => Some(self.sget(r)),
                    VSrc::Imm(i) => Some(self.iconst(i as i64 as u64)),
                };
                let sign = op == AluOp::Sra
                    && b_scalar.and_then(|s| self.const_of(s)).map(|k| k & 63) == Some(63);
                let bs = self.vsrc_all(o.vb);
                let mut out = Vec::with_capacity(self.nch);
                for (c, &b) in bs.iter().enumerate() {
                    let a = self.vget(o.va, c);
                    out.push(self.valu(op, a, b, b_scalar));
                }
                self.vset_masked(o.vd, &out);
                if sign && self.full {
                    // Every lane 0 or all ones (`Tx::sign_masks`).
                    self.sign_masks |= 1 << o.vd.0;
                }
            }
            (Operands::VMov(o), _) if self.helpers && self.vl > 2 => {
                self.vop_call(inst.opcode() as u32, o.vd, o.vd, o.src);
            }
            (Operands::VMov(o), _) => {
                let out = self.vsrc_all(o.src);
                self.vset_masked(o.vd, &out);
            }
            (Operands::VUnary(o), Sem::VRead(_)) if self.helpers && self.vl > 2 => {
                // V.LC0 passes LC0BASE as the scalar operand.
                let l = self.b.use_var(self.lc0);
                self.vop_call_scalar(inst.opcode() as u32, o.vd, l);
            }
            (Operands::VUnary(o), Sem::VRead(r)) => {
                let base = match r {
                    VRead::LaneId => None,
                    VRead::Lc0 => {
                        let l = self.b.use_var(self.lc0);
                        Some(self.b.ins().splat(I64X2, l))
                    }
                };
                let mut out = Vec::with_capacity(self.nch);
                for c in 0..self.nch {
                    let ids = self.lane_ids(c);
                    out.push(match base {
                        None => ids,
                        Some(s) => self.b.ins().iadd(s, ids),
                    });
                }
                self.vset_masked(o.vd, &out);
            }
            (Operands::VFp(o), Sem::Fp(op, w)) => self.fp(inst, op, w, o.vd, o.va, o.vb),
            (Operands::VRedSum(o), _) => {
                let s = self.redsum(o.va);
                self.sset(o.sd, s);
            }
            (Operands::VSetMask(o), _) => {
                let s = self.sget(o.sa);
                let all = self.all() as i64;
                let m = self.b.ins().band_imm_s(s, all);
                self.set_mask(m);
                self.full = false;
            }
            (_, Sem::Ctl(lanejit_interp::isa::Ctl::Nop)) => {}
            _ => return false,
        }
        let _ = (I64, IntCC::Equal);
        true
    }
}

/// The byte shuffle of `punpcklwd a, b`: the low four 16-bit lanes of `a` and `b`, alternating.
const INTERLEAVE_WORDS_LO: [u8; 16] = [0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23];

/// The byte shuffle of `punpckhwd a, b`: the high four 16-bit lanes of `a` and `b`, alternating.
const INTERLEAVE_WORDS_HI: [u8; 16] =
    [8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31];
