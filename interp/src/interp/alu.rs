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

/// Compute `f(regs, lane)` for every lane, then write it to the active lanes of `vd`.
#[inline(always)]
fn lanewise(m: &mut Machine, vd: u8, f: impl Fn(&Regs, usize) -> u64) {
    let vl = m.vl().min(64);
    let full = all_lanes(vl as u32);
    let r = &mut *m.regs;
    let mask = r.mask & full;
    let mut res = [0u64; 64];
    for (i, x) in res[..vl].iter_mut().enumerate() {
        *x = f(r, i);
    }
    let d = &mut r.v[vd as usize & 31];
    if mask == full {
        d[..vl].copy_from_slice(&res[..vl]);
    } else {
        for (i, (x, y)) in d[..vl].iter_mut().zip(&res[..vl]).enumerate() {
            if mask >> i & 1 != 0 {
                *x = *y;
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

fn valu<const OP: usize, const VB: bool>(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    let (va, vb) = (op.b as usize & 31, op.c as usize & 31);
    let alu = ALU_OPS[OP];
    if VB {
        lanewise(m, op.a, |r, i| alu.apply(r.v[va][i], r.v[vb][i]));
        op.next
    } else {
        let b = s_operand(&m.regs, op);
        lanewise(m, op.a, |r, i| alu.apply(r.v[va][i], b));
        op.next
    }
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

fn vfp<const OP: usize, const DOUBLE: bool, const VB: bool>(
    m: &mut Machine,
    op: &Op,
    _: &mut Fault,
) -> u32 {
    let w = if DOUBLE { FpWidth::D } else { FpWidth::S };
    let fp = FP_OPS[OP];
    let (vd, va, vb) = (op.a as usize & 31, op.b as usize & 31, op.c as usize & 31);
    if VB {
        lanewise(m, op.a, |r, i| {
            fp.apply(w, r.v[va][i], r.v[vb][i], r.v[vd][i])
        });
        op.next
    } else {
        let b = s_operand(&m.regs, op);
        lanewise(m, op.a, |r, i| fp.apply(w, r.v[va][i], b, r.v[vd][i]));
        op.next
    }
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
