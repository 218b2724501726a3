//! Scalar and vector computation handlers: integer ALU, moves, state reads, floating point,
//! `V.REDSUM`, `V.SETMASK`, `S.GETLANE`.
//!
//! Operation choices (`AluOp`, `FpOp`, operand kind) are const generic parameters, so each
//! handler is a straight loop with no per-lane dispatch. Vector results are computed from the
//! sources first, then written to the active lanes of the destination only.

use super::decoded::Op;
use super::{ExecFn, Fault};
use crate::isa::{AluOp, FpOp, FpWidth};
use crate::machine::{Machine, Regs, all_lanes};
use crate::program::MAX_VL;

/// Write scalar `n` (writes to `s0` are discarded).
#[inline(always)]
fn set_s(r: &mut Regs, n: u8, v: u64) {
    r.s[n as usize & 31] = v;
    r.s[0] = 0;
}

/// The second operand `reg[c] + imm` of a scalar op (one of the two is zero).
#[inline(always)]
fn s_operand(r: &Regs, op: &Op) -> u64 {
    r.s[op.c as usize & 31].wrapping_add(op.imm)
}

/// `vd[i] = f(regs, i)` for the active lanes `i`, in place: `f` reads lane `i` of vector
/// registers only (and scalars), so lane `i` of any source is read before it is written,
/// whichever registers are the same. (Computing every lane into a buffer first and copying it
/// to `vd` cost 10-20% of the interpreter's time on the bench kernels: the copy's wide loads
/// could not be forwarded from the loop's narrower stores, and the buffer was cleared first.)
#[inline(always)]
fn lanewise(m: &mut Machine, vd: u8, f: impl Fn(&Regs, usize) -> u64) {
    let vl = m.vl();
    let mask = m.regs.mask;
    lanewise_on(&mut m.regs, (vl, mask), vd as usize, f)
}

/// [`lanewise`] on register file `r`, for the lanes below `vl` (at most 64) set in `mask`.
#[inline(always)]
fn lanewise_on(r: &mut Regs, (vl, mask): (usize, u64), vd: usize, f: impl Fn(&Regs, usize) -> u64) {
    let vl = vl.min(MAX_VL);
    let full = all_lanes(vl as u32);
    let mask = mask & full;
    let d = vd & 31;
    if mask == full {
        for i in 0..vl {
            let x = f(r, i);
            r.v[d][i] = x;
        }
    } else {
        for i in 0..vl {
            if mask >> i & 1 != 0 {
                let x = f(r, i);
                r.v[d][i] = x;
            }
        }
    }
}

const ALU_OPS: [AluOp; 9] = [
    AluOp::Add,
    AluOp::Sub,
    AluOp::Mul,
    AluOp::And,
    AluOp::Or,
    AluOp::Xor,
    AluOp::Shl,
    AluOp::Shr,
    AluOp::Sra,
];

const fn alu_index(op: AluOp) -> usize {
    match op {
        AluOp::Add => 0,
        AluOp::Sub => 1,
        AluOp::Mul => 2,
        AluOp::And => 3,
        AluOp::Or => 4,
        AluOp::Xor => 5,
        AluOp::Shl => 6,
        AluOp::Shr => 7,
        AluOp::Sra => 8,
    }
}

fn salu<const OP: usize>(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    let r = &mut *m.regs;
    let a = r.s[op.b as usize & 31];
    let b = s_operand(r, op);
    set_s(r, op.a, ALU_OPS[OP].apply(a, b));
    op.next
}

/// `vd[i] = op(va[i], b or vb[i])` (`VB`: `vb`) for the lanes below `vl` set in `mask`: the
/// one lane loop of every vector ALU operation, for [`valu`] and [`alu_lanes`].
#[inline(always)]
fn alu_on<const OP: usize, const VB: bool>(
    r: &mut Regs,
    (vd, va, vb): (usize, usize, usize),
    b: u64,
    lanes: (usize, u64),
) {
    let (va, vb) = (va & 31, vb & 31);
    let alu = ALU_OPS[OP];
    if VB {
        lanewise_on(r, lanes, vd, |r, i| alu.apply(r.v[va][i], r.v[vb][i]));
    } else {
        lanewise_on(r, lanes, vd, |r, i| alu.apply(r.v[va][i], b));
    }
}

/// A vector ALU operation on register file `r`: `vd[i] = op(va[i], b or vb[i])` for the
/// lanes below `vl` (at most 64) set in `mask`, `b` the scalar operand when there is one. The
/// interpreter's lanes, for the JIT's helper of straight-line code (`lj_vop`).
pub fn alu_lanes(
    r: &mut Regs,
    op: AluOp,
    regs: (usize, usize, usize),
    b: Option<u64>,
    lanes: (usize, u64),
) {
    // One loop per operation, the operation a constant in each.
    macro_rules! by_op {
        ($($v:ident),+) => {
            match (op, b) {
                $(
                    (AluOp::$v, None) => {
                        alu_on::<{ alu_index(AluOp::$v) }, true>(r, regs, 0, lanes)
                    }
                    (AluOp::$v, Some(b)) => {
                        alu_on::<{ alu_index(AluOp::$v) }, false>(r, regs, b, lanes)
                    }
                )+
            }
        };
    }
    by_op!(Add, Sub, Mul, And, Or, Xor, Shl, Shr, Sra)
}

fn valu<const OP: usize, const VB: bool>(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    let b = if VB { 0 } else { s_operand(&m.regs, op) };
    let lanes = (m.vl(), m.regs.mask);
    let regs = (op.a as usize, op.b as usize, op.c as usize);
    alu_on::<OP, VB>(&mut m.regs, regs, b, lanes);
    op.next
}

macro_rules! table {
    ($f:ident $(, $extra:literal)?) => {
        [
            $f::<0 $(, $extra)?>,
            $f::<1 $(, $extra)?>,
            $f::<2 $(, $extra)?>,
            $f::<3 $(, $extra)?>,
            $f::<4 $(, $extra)?>,
            $f::<5 $(, $extra)?>,
            $f::<6 $(, $extra)?>,
            $f::<7 $(, $extra)?>,
            $f::<8 $(, $extra)?>,
        ]
    };
}

/// The handler of a scalar ALU op.
pub(crate) fn salu_handler(op: AluOp) -> ExecFn {
    const T: [ExecFn; 9] = table!(salu);
    T[alu_index(op)]
}

/// The handler of a vector ALU op; `vector` when the second operand is `vN`.
pub(crate) fn valu_handler(op: AluOp, vector: bool) -> ExecFn {
    const TV: [ExecFn; 9] = table!(valu, true);
    const TS: [ExecFn; 9] = table!(valu, false);
    if vector {
        TV[alu_index(op)]
    } else {
        TS[alu_index(op)]
    }
}

/// `S.LI`.
pub(crate) fn sli(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    set_s(&mut m.regs, op.a, op.imm);
    op.next
}

/// `S.MOV`.
pub(crate) fn smov(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    let v = m.regs.s[op.b as usize & 31];
    set_s(&mut m.regs, op.a, v);
    op.next
}

/// `S.LC0`.
pub(crate) fn s_lc0(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    let v = m.regs.lc0base;
    set_s(&mut m.regs, op.a, v);
    op.next
}

/// `S.VL`.
pub(crate) fn s_vl(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    let v = m.config.vl as u64;
    set_s(&mut m.regs, op.a, v);
    op.next
}

/// `S.GID`: the group's id.
pub(crate) fn s_gid(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    let v = m.regs.gid;
    set_s(&mut m.regs, op.a, v);
    op.next
}

/// `S.NGROUPS`: the launch's group count.
pub(crate) fn s_ngroups(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    let v = m.regs.ngroups;
    set_s(&mut m.regs, op.a, v);
    op.next
}

/// `S.MASK`.
pub(crate) fn s_mask(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    let v = m.regs.mask;
    set_s(&mut m.regs, op.a, v);
    op.next
}

/// `S.GETLANE sd, va, lane` (lane mod VL).
pub(crate) fn s_getlane(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    let vl = m.vl().clamp(1, 64) as u64;
    let lane = (op.imm & (vl - 1)) as usize & 63;
    let v = m.regs.v[op.b as usize & 31][lane];
    set_s(&mut m.regs, op.a, v);
    op.next
}

/// `V.MOV vd, va`.
pub(crate) fn vmov_v(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    let va = op.c as usize & 31;
    lanewise(m, op.a, |r, i| r.v[va][i]);
    op.next
}

/// `V.MOV vd, sb|imm`.
pub(crate) fn vmov_s(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    let b = s_operand(&m.regs, op);
    lanewise(m, op.a, |_, _| b);
    op.next
}

/// `V.LANEID`.
pub(crate) fn v_laneid(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    lanewise(m, op.a, |_, i| i as u64);
    op.next
}

/// `V.LC0`.
pub(crate) fn v_lc0(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    let base = m.regs.lc0base;
    lanewise(m, op.a, |_, i| base.wrapping_add(i as u64));
    op.next
}

const FP_OPS: [FpOp; 4] = [FpOp::Add, FpOp::Sub, FpOp::Mul, FpOp::Fma];

/// `vd[i] = op(va[i], vb[i] or the scalar b, vd[i])` for the lanes `i < vl` set in `mask`
/// (`full`: all of them), in place: each lane is read before it is written, so any of the
/// three registers may be the same (as in [`lanewise`]). The lane loop of [`vfp`], inlined
/// into it and into its AVX2+FMA twin [`fp_lanes_fma`]. (Computing into a buffer and copying
/// it to `vd` cost a fifth of the FIR kernel's interpreted time: the copy's wide loads could
/// not be forwarded from the loop's narrower stores.)
#[inline(always)]
// Indexed: the three registers are rows of one array, any of them the same row.
#[allow(clippy::needless_range_loop)]
fn fp_lanes<const OP: usize, const DOUBLE: bool, const VB: bool>(
    v: &mut [[u64; MAX_VL]; 32],
    (vd, va, vb): (usize, usize, usize),
    b: u64,
    (vl, mask, full): (usize, u64, u64),
) {
    let w = if DOUBLE { FpWidth::D } else { FpWidth::S };
    let fp = FP_OPS[OP];
    let vl = vl.min(MAX_VL);
    if mask == full {
        for i in 0..vl {
            v[vd][i] = fp.apply(w, v[va][i], if VB { v[vb][i] } else { b }, v[vd][i]);
        }
    } else {
        for i in 0..vl {
            let x = fp.apply(w, v[va][i], if VB { v[vb][i] } else { b }, v[vd][i]);
            if mask >> i & 1 != 0 {
                v[vd][i] = x;
            }
        }
    }
}

/// [`fp_lanes`] compiled for AVX2 and FMA, chosen at run time ([`fma`]): the fused
/// multiply-add becomes one instruction per lane group instead of a call to the software
/// `fmaf`/`fma` per lane (which took 60% of the interpreter's time on the FIR kernel). The
/// results are the same bits: IEEE 754 specifies the one rounding of a fused multiply-add
/// and of the other operations, and the NaN result is canonical either way.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fp_lanes_fma<const OP: usize, const DOUBLE: bool, const VB: bool>(
    v: &mut [[u64; MAX_VL]; 32],
    regs: (usize, usize, usize),
    b: u64,
    lanes: (usize, u64, u64),
) {
    fp_lanes::<OP, DOUBLE, VB>(v, regs, b, lanes)
}

/// Whether [`fp_lanes_fma`] may run (cached by the standard library after the first call).
#[inline(always)]
fn fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// [`fp_lanes`], its AVX2+FMA build when the CPU has both.
#[inline(always)]
fn fp_dispatch<const OP: usize, const DOUBLE: bool, const VB: bool>(
    v: &mut [[u64; MAX_VL]; 32],
    regs: (usize, usize, usize),
    b: u64,
    (vl, mask): (usize, u64),
) {
    let vl = vl.min(MAX_VL);
    let full = all_lanes(vl as u32);
    let lanes = (vl, mask & full, full);
    let regs = (regs.0 & 31, regs.1 & 31, regs.2 & 31);
    #[cfg(target_arch = "x86_64")]
    if fma() {
        // SAFETY: the CPU supports AVX2 and FMA (checked just above).
        return unsafe { fp_lanes_fma::<OP, DOUBLE, VB>(v, regs, b, lanes) };
    }
    fp_lanes::<OP, DOUBLE, VB>(v, regs, b, lanes)
}

/// A vector floating-point operation on register file `r`: `vd[i] = op(va[i], b or vb[i],
/// vd[i])` in precision `w` for the lanes below `vl` (at most 64) set in `mask`, `b` the
/// scalar operand when there is one. The interpreter's lanes, for the JIT's helper of
/// straight-line code (`lj_vop`).
pub fn fp_lanes_on(
    r: &mut Regs,
    (op, w): (FpOp, FpWidth),
    regs: (usize, usize, usize),
    b: Option<u64>,
    lanes: (usize, u64),
) {
    macro_rules! go {
        ($op:literal) => {
            match (w, b) {
                (FpWidth::S, None) => fp_dispatch::<$op, false, true>(&mut r.v, regs, 0, lanes),
                (FpWidth::S, Some(b)) => fp_dispatch::<$op, false, false>(&mut r.v, regs, b, lanes),
                (FpWidth::D, None) => fp_dispatch::<$op, true, true>(&mut r.v, regs, 0, lanes),
                (FpWidth::D, Some(b)) => fp_dispatch::<$op, true, false>(&mut r.v, regs, b, lanes),
            }
        };
    }
    // The indices of `FP_OPS`.
    match op {
        FpOp::Add => go!(0),
        FpOp::Sub => go!(1),
        FpOp::Mul => go!(2),
        FpOp::Fma => go!(3),
    }
}

fn vfp<const OP: usize, const DOUBLE: bool, const VB: bool>(
    m: &mut Machine,
    op: &Op,
    _: &mut Fault,
) -> u32 {
    let b = if VB { 0 } else { s_operand(&m.regs, op) };
    let lanes = (m.vl(), m.regs.mask);
    let regs = (op.a as usize, op.b as usize, op.c as usize);
    fp_dispatch::<OP, DOUBLE, VB>(&mut m.regs.v, regs, b, lanes);
    op.next
}

/// The handler of a floating-point op; `vector` when the second operand is `vN`.
pub(crate) fn vfp_handler(op: FpOp, w: FpWidth, vector: bool) -> ExecFn {
    macro_rules! row {
        ($d:literal, $v:literal) => {
            [
                vfp::<0, $d, $v>,
                vfp::<1, $d, $v>,
                vfp::<2, $d, $v>,
                vfp::<3, $d, $v>,
            ]
        };
    }
    const T: [[[ExecFn; 4]; 2]; 2] = [
        [row!(false, false), row!(false, true)],
        [row!(true, false), row!(true, true)],
    ];
    let i = match op {
        FpOp::Add => 0,
        FpOp::Sub => 1,
        FpOp::Mul => 2,
        FpOp::Fma => 3,
    };
    T[matches!(w, FpWidth::D) as usize][vector as usize][i]
}

/// `V.REDSUM sd, va`: wrapping sum of the active lanes.
pub(crate) fn v_redsum(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    let vl = m.vl().min(64);
    let mask = m.regs.mask & all_lanes(vl as u32);
    let va = &m.regs.v[op.b as usize & 31];
    let mut sum = 0u64;
    for (i, x) in va[..vl].iter().enumerate() {
        if mask >> i & 1 != 0 {
            sum = sum.wrapping_add(*x);
        }
    }
    set_s(&mut m.regs, op.a, sum);
    op.next
}

/// `V.SETMASK sa`: mask = low VL bits of sa.
pub(crate) fn v_setmask(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    let full = all_lanes(m.config.vl.min(64));
    m.regs.mask = m.regs.s[op.a as usize & 31] & full;
    op.next
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Lane values: any bits, or an FP edge case of either width (zeros, subnormals,
    /// infinities, quiet and signalling NaNs with payloads, values next to 1).
    fn lane() -> impl Strategy<Value = u64> {
        prop_oneof![
            any::<u64>(),
            any::<u32>().prop_map(u64::from),
            prop::sample::select(vec![
                0u64,
                0x8000_0000,
                1,
                0x007f_ffff,
                0x7f80_0000,
                0xff80_0000,
                0x7fc0_0000,
                0x7f80_0001,
                0xffc0_1234,
                0x3f80_0001,
                0x3f7f_ffff,
                0x8000_0000_0000_0000,
                0x000f_ffff_ffff_ffff,
                0x7ff0_0000_0000_0000,
                0x7ff0_0000_0000_0001,
                0xfff8_0000_0000_1234,
                0x3ff0_0000_0000_0001,
                0x3fef_ffff_ffff_ffff,
            ]),
        ]
    }

    /// The operation as the interpreter computed it before its lane loops worked in place:
    /// every lane from the sources as they were, then the active lanes written.
    fn reference(
        r: &Regs,
        f: impl Fn(u64, u64, u64) -> u64,
        (vd, va, vb): (usize, usize, usize),
        b: Option<u64>,
        (vl, mask): (usize, u64),
    ) -> [u64; MAX_VL] {
        let mut out = r.v[vd];
        for (i, x) in out.iter_mut().enumerate().take(vl) {
            if mask >> i & 1 != 0 {
                *x = f(r.v[va][i], b.unwrap_or(r.v[vb][i]), r.v[vd][i]);
            }
        }
        out
    }

    /// Registers 0-2 hold the generated lanes: drawing the three operands from them makes
    /// the destination one of the sources about half the time.
    fn regs_with(lanes: &[u64]) -> Box<Regs> {
        let mut r = Regs::reset(64);
        for (k, x) in lanes.iter().enumerate() {
            r.v[k / MAX_VL][k % MAX_VL] = *x;
        }
        r
    }

    proptest! {
        /// Both builds of the FP lane loop ([`fp_lanes`] and, where the CPU has AVX2 and
        /// FMA, [`fp_lanes_fma`], through [`fp_lanes_on`]) against the buffered reference:
        /// the same bits (a fused multiply-add rounded once, canonical NaNs), whichever
        /// registers alias and whichever lanes are active.
        #[test]
        fn fp_lanes_match_the_buffered_reference(
            lanes in prop::collection::vec(lane(), 3 * MAX_VL),
            regs in (0usize..3, 0usize..3, 0usize..3),
            b in prop::option::of(lane()),
            vl in 1usize..=64,
            mask in any::<u64>(),
            op in 0usize..4,
            double in any::<bool>(),
        ) {
            let r = regs_with(&lanes);
            let w = if double { FpWidth::D } else { FpWidth::S };
            let fp = FP_OPS[op];
            let want = reference(&r, |a, b, d| fp.apply(w, a, b, d), regs, b, (vl, mask));
            let mut got = r.clone();
            fp_lanes_on(&mut got, (fp, w), regs, b, (vl, mask));
            prop_assert_eq!(got.v[regs.0], want);
            // The portable build too, when the dispatch chose the other.
            let mut portable = r.clone();
            let lanes = (vl, mask & all_lanes(vl as u32), all_lanes(vl as u32));
            macro_rules! go {
                ($op:literal) => {
                    match (double, b) {
                        (false, None) => fp_lanes::<$op, false, true>(&mut portable.v, regs, 0, lanes),
                        (false, Some(b)) => fp_lanes::<$op, false, false>(&mut portable.v, regs, b, lanes),
                        (true, None) => fp_lanes::<$op, true, true>(&mut portable.v, regs, 0, lanes),
                        (true, Some(b)) => fp_lanes::<$op, true, false>(&mut portable.v, regs, b, lanes),
                    }
                };
            }
            match op {
                0 => go!(0),
                1 => go!(1),
                2 => go!(2),
                _ => go!(3),
            }
            prop_assert_eq!(portable.v[regs.0], want);
        }

        /// The ALU lane loop ([`alu_lanes`], in place) against the buffered reference.
        #[test]
        fn alu_lanes_match_the_buffered_reference(
            lanes in prop::collection::vec(lane(), 3 * MAX_VL),
            regs in (0usize..3, 0usize..3, 0usize..3),
            b in prop::option::of(any::<u64>()),
            vl in 1usize..=64,
            mask in any::<u64>(),
            op in 0usize..9,
        ) {
            let r = regs_with(&lanes);
            let alu = ALU_OPS[op];
            let want = reference(&r, |a, b, _| alu.apply(a, b), regs, b, (vl, mask));
            let mut got = r.clone();
            alu_lanes(&mut got, alu, regs, b, (vl, mask));
            prop_assert_eq!(got.v[regs.0], want);
        }
    }
}
