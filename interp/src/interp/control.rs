//! Control handlers: jumps, branches, the hardware loop (contract section 4), NOP, HALT and
//! the illegal-instruction entry.

use super::decoded::Op;
use super::{ExecFn, FAULT, Fault, HALT};
use crate::isa::Cond;
use crate::machine::{Machine, TrapKind, all_lanes};

/// `J`.
pub(crate) fn jump(_: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    op.target
}

fn branch<const C: usize>(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    const CONDS: [Cond; 6] = [Cond::Eq, Cond::Ne, Cond::Lt, Cond::Ge, Cond::Ltu, Cond::Geu];
    let r = &m.regs;
    let a = r.s[op.a as usize & 31];
    let b = r.s[op.c as usize & 31].wrapping_add(op.imm);
    if CONDS[C].holds(a, b) {
        op.target
    } else {
        op.next
    }
}

/// The handler of a conditional branch.
pub(crate) fn branch_handler(c: Cond) -> ExecFn {
    match c {
        Cond::Eq => branch::<0>,
        Cond::Ne => branch::<1>,
        Cond::Lt => branch::<2>,
        Cond::Ge => branch::<3>,
        Cond::Ltu => branch::<4>,
        Cond::Geu => branch::<5>,
    }
}

/// The mask of lanes `i` with `i < remaining`.
#[inline(always)]
fn lanes_below(remaining: u64, vl: u32) -> u64 {
    if remaining >= vl as u64 {
        all_lanes(vl)
    } else {
        (1u64 << remaining) - 1
    }
}

/// `LOOP sa`: latch trip (even 0); trip 0 jumps past the paired ENDLOOP (LC0BASE and mask
/// unchanged); else LC0BASE = 0 and mask = lanes below trip.
pub(crate) fn loop_(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    let vl = m.config.vl.min(64);
    let r = &mut *m.regs;
    let trip = r.s[op.a as usize & 31];
    r.trip = trip;
    if trip == 0 {
        return op.target;
    }
    r.lc0base = 0;
    r.mask = lanes_below(trip, vl);
    op.next
}

/// `ENDLOOP`: LC0BASE += VL (64-bit wrapping, as written in the contract); while LC0BASE <
/// trip, mask = lanes with LC0BASE + i < trip and jump to the body; else mask = all ones and
/// fall through. (`trip - LC0BASE` is used for the mask so nothing overflows.)
pub(crate) fn endloop(m: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    let vl = m.config.vl.min(64);
    let r = &mut *m.regs;
    let base = r.lc0base.wrapping_add(vl as u64);
    r.lc0base = base;
    if base < r.trip {
        r.mask = lanes_below(r.trip - base, vl);
        op.target
    } else {
        r.mask = all_lanes(vl);
        op.next
    }
}

/// `NOP`.
pub(crate) fn nop(_: &mut Machine, op: &Op, _: &mut Fault) -> u32 {
    op.next
}

/// `HALT`.
pub(crate) fn halt(_: &mut Machine, _: &Op, _: &mut Fault) -> u32 {
    HALT
}

/// A word that does not decode.
#[cold]
pub(crate) fn illegal(_: &mut Machine, _: &Op, f: &mut Fault) -> u32 {
    *f = Fault {
        kind: TrapKind::IllegalInstruction,
        mem: None,
    };
    FAULT
}
