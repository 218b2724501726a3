//! Lane-shape analysis: which vector registers hold an *affine* value, lane `i` equal to
//! `base + i * stride` (64-bit wrapping) with `base` a scalar SSA value and `stride` known at
//! translation time. A uniform vector is the affine one with stride 0.
//!
//! Shapes are tracked while one body copy is translated (a region is a straight run, so the
//! only merge points are the starts of body copies, where every shape is forgotten). They
//! come from `V.LC0` (`LC0BASE + i`), `V.LANEID`, `V.MOV` of a scalar or immediate, and are
//! carried through `V.MOV`, `V.ADD`/`V.SUB` (with vectors, scalars or immediates),
//! `V.SHL` and `V.MUL` by a constant, and any operation of uniform operands; every other write
//! makes a register general. A write is affine only under a statically full mask (a partial
//! write leaves inactive lanes as they were).
//!
//! Memory accesses use the shape of their EA (`Tx::ea_shape`): an affine EA with stride E
//! is a contiguous access whichever form spelled it (register offset, vector base with an
//! immediate, `lc0`), a uniform EA is one access. The two halves are separate so that
//! decisions made before any IR is emitted (`Tx::ea_stride`) agree with the values built
//! later (`Tx::ea_shape`).

use super::Tx;
use cranelift_codegen::ir::Value;
use lanejit_interp::isa::{AluOp, Inst, Operands, Reg, SReg, Sem, VRead, VSrc};

/// An affine vector: lane `i` is `base + i * stride`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Affine {
    /// Lane 0's value (an `i64` that dominates the rest of the body copy).
    pub(crate) base: Value,
    /// The difference between consecutive lanes.
    pub(crate) stride: i64,
}

impl Tx<'_, '_> {
    /// Forget every shape (at a merge point: the start of a body copy).
    pub(crate) fn forget_shapes(&mut self) {
        self.shape = [None; 32];
    }

    /// The stride of a register used as an address operand or ALU source, if affine.
    fn reg_stride(&self, r: Reg) -> Option<i64> {
        match r {
            Reg::S(_) => Some(0),
            Reg::Lc0 => Some(1),
            Reg::V(n) => self.shape[n as usize].map(|a| a.stride),
        }
    }

    /// The shape of a register used as an address operand.
    pub(crate) fn reg_shape(&mut self, r: Reg) -> Option<Affine> {
        match r {
            Reg::S(n) => Some(Affine {
                base: self.sget(SReg(n)),
                stride: 0,
            }),
            Reg::Lc0 => Some(Affine {
                base: self.b.use_var(self.lc0),
                stride: 1,
            }),
            Reg::V(n) => self.shape[n as usize],
        }
    }

    fn src_shape(&mut self, s: VSrc) -> Option<Affine> {
        match s {
            VSrc::V(r) => self.shape[r.0 as usize],
            VSrc::S(r) => Some(Affine {
                base: self.sget(r),
                stride: 0,
            }),
            VSrc::Imm(i) => Some(Affine {
                base: self.iconst(i as i64 as u64),
                stride: 0,
            }),
        }
    }

    /// Scalar `a op b`, folded when both are constants.
    fn fold(&mut self, op: AluOp, a: Value, b: Value) -> Value {
        match (self.const_of(a), self.const_of(b)) {
            (Some(x), Some(y)) => self.iconst(op.apply(x, y)),
            _ => self.salu(op, a, b),
        }
    }

    /// The stride of `base + (off << shift)` (the EA of a register-offset form), if affine.
    pub(crate) fn regoff_stride(&self, base: Reg, off: Reg, shift: u32) -> Option<i64> {
        let b = self.reg_stride(base)?;
        let o = self.reg_stride(off)?;
        Some(b.wrapping_add(o.wrapping_shl(shift)))
    }

    /// The stride of `base + imm` (an immediate form's EA), if affine.
    pub(crate) fn imm_stride(&self, base: Reg) -> Option<i64> {
        self.reg_stride(base)
    }

    /// The shape of `base + (off << shift)`.
    pub(crate) fn regoff_shape(&mut self, base: Reg, off: Reg, shift: u32) -> Option<Affine> {
        let b = self.reg_shape(base)?;
        let o = self.reg_shape(off)?;
        let sh = self.iconst(shift as u64);
        let ob = self.fold(AluOp::Shl, o.base, sh);
        Some(Affine {
            base: self.fold(AluOp::Add, b.base, ob),
            stride: b.stride.wrapping_add(o.stride.wrapping_shl(shift)),
        })
    }

    /// The shape of `base + imm`.
    pub(crate) fn imm_shape(&mut self, base: Reg, imm: u64) -> Option<Affine> {
        let b = self.reg_shape(base)?;
        let k = self.iconst(imm);
        Some(Affine {
            base: self.fold(AluOp::Add, b.base, k),
            stride: b.stride,
        })
    }

    /// The shape of the vector register `inst` writes, computed (in the current block, before
    /// `inst` is lowered) from its operands' shapes; `None` when it is general or `inst`
    /// writes no vector register affinely.
    pub(crate) fn result_shape(&mut self, inst: &Inst) -> Option<Affine> {
        if !self.full {
            return None;
        }
        match (inst.operands(), inst.opcode().sem()) {
            (Operands::VUnary(_), Sem::VRead(r)) => Some(Affine {
                base: match r {
                    VRead::Lc0 => self.b.use_var(self.lc0),
                    VRead::LaneId => self.iconst(0),
                },
                stride: 1,
            }),
            (Operands::VMov(o), _) => self.src_shape(o.src),
            (Operands::VAlu(o), Sem::VAlu(op)) => {
                let a = self.shape[o.va.0 as usize]?;
                let b = self.src_shape(o.vb)?;
                let k = self.const_of(b.base);
                let stride = match op {
                    _ if a.stride == 0 && b.stride == 0 => 0,
                    AluOp::Add => a.stride.wrapping_add(b.stride),
                    AluOp::Sub => a.stride.wrapping_sub(b.stride),
                    AluOp::Shl if b.stride == 0 => a.stride.wrapping_shl((k? & 63) as u32),
                    AluOp::Mul if b.stride == 0 => a.stride.wrapping_mul(k? as i64),
                    AluOp::Mul if a.stride == 0 => {
                        b.stride.wrapping_mul(self.const_of(a.base)? as i64)
                    }
                    _ => return None,
                };
                Some(Affine {
                    base: self.fold(op, a.base, b.base),
                    stride,
                })
            }
            _ => None,
        }
    }
}
