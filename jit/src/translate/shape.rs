//! Lane-shape analysis: which vector registers hold an *affine* value, lane `i` equal to
//! `base + i * stride` (64-bit wrapping) with `base` a scalar SSA value and `stride` known at
//! translation time. A uniform vector is the affine one with stride 0.
//!
//! Shapes are tracked while one body copy is translated (a region is a straight run, so the
//! only merge points are the starts of body copies, where every shape is forgotten, but for
//! the registers a branch loop's prologue left affine and its body only bumps by scalars:
//! [`Tx::entry_strides`]). They
//! come from `V.LC0` (`LC0BASE + i`), `V.LANEID`, `V.MOV` of a scalar or immediate, and are
//! carried through `V.MOV`, `V.ADD`/`V.SUB` (with vectors, scalars or immediates),
//! `V.SHL` and `V.MUL` by a constant, and any operation of uniform operands; every other write
//! makes a register general. A write is affine only under a statically full mask (a partial
//! write leaves inactive lanes as they were).
//!
//! Before any IR is emitted, [`lane_forms`] runs the same rules symbolically over a loop body
//! ([`Sym`]: a sum of loop-invariant scalar registers and a constant, plus multiples of
//! LC0BASE and of the lane index), so that an access whose lane `i` at LC0BASE `x` reads
//! `inv + ((x + i) << log2e)` is known to be contiguous in every full iteration, whichever form
//! spelled it, and its check can be hoisted to loop entry like the `lc0` form's. A vector of
//! lane addresses built before the loop and bumped by a scalar each iteration (a compiler's
//! stepped pointer, `V.ADD v9, v9, s5`) starts the body as the pseudo register [`vbase`] plus
//! `e * (x + i)`, speculated and tested at loop entry (`analysis::Stepped`): an 8-tap f32 FIR
//! written that way (`V.LWI.U [v9 + 4k]`, unfused multiply and add) checked every tap every
//! iteration, went over the register form's IR bound (9,517) and ran in the memory form at
//! 0.7x the interpreter; hoisted, its loop is 2,661 IR instructions and runs 34x the
//! interpreter (1M outputs: 27.7 ms interpreted, 39.3 -> 0.81 ms compiled). A scalar pointer
//! bumped by one `S.ADD`/`S.SUB` each iteration (a strength-reduced loop: `S.ADD s1, s1,
//! s10` with `s10 = VL * 4`) likewise starts it as [`sbase`] plus `e * x`, and plus `VL * e`
//! after its bump; with it, a vector register the body never writes whose lanes stepped by a
//! constant at the entry (offsets built before the loop, `V.LANEID v20`) starts it as
//! [`vbase`] plus `e * i` (both speculated and tested at loop entry, `analysis::StepKind`):
//! `V.LW [s1 + (v20 << 2)]` is then contiguous. saxpy written that way, 1M elements at VL
//! 32, 819 -> 223 us (the `lc0` form 210 us); an 8-tap FIR through `V.ADD v22, v21, s1;
//! V.LWI.U [v22 + 4k]` 24.6 -> 0.58 ms; an int8 dot product 468 -> 103 us (`lanejit bench
//! FILE --engine jit-warm`). Scalar arithmetic in the body follows the same rules, so
//! addresses a compiler recomputes every iteration from an element counter (`S.SHL s6, s5,
//! 2; S.ADD s7, s1, s6` with `S.ADD s5, s5, s9`) or from `S.LC0` are hoisted too: saxpy
//! so, 511 -> 213 us and 494 -> 210 us.
//!
//! Memory accesses use the shape of their EA (`Tx::ea_shape`): an affine EA with stride E
//! is a contiguous access whichever form spelled it (register offset, vector base with an
//! immediate, `lc0`), a uniform EA is one access. The two halves are separate so that
//! decisions made before any IR is emitted (`Tx::ea_stride`) agree with the values built
//! later (`Tx::ea_shape`).

use super::Tx;
use cranelift_codegen::ir::{InstBuilder, Value};
use lanejit_interp::isa::{
    AluOp, Inst, MemAddr, Operands, Reg, SRead, SReg, Sem, VRead, VReg, VSrc,
};

/// An affine vector: lane `i` is `base + i * stride`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Affine {
    /// Lane 0's value (an `i64` that dominates the rest of the body copy).
    pub(crate) base: Value,
    /// The difference between consecutive lanes.
    pub(crate) stride: i64,
}

impl Tx<'_, '_> {
    /// Forget every shape, every index register's lane bounds and the uniform loads a check
    /// covered (at a merge point: the start of a body copy).
    pub(crate) fn forget_shapes(&mut self) {
        self.shape = [None; 32];
        self.ro_plus = [None; 32];
        self.ind_of = std::array::from_fn(|n| (self.ind_v & (1 << n) != 0).then_some(n as u8));
        self.lane_bounds.clear();
        self.uni_checked.clear();
    }

    /// The `i64x2` chunks of affine vector `a`: lane 0's value broadcast once, plus each
    /// chunk's constant lane offsets (an add with a constant operand per chunk). Where an
    /// affine register's value is stored as a whole, this keeps the store from carrying
    /// every chunk of the instructions that built it (`V.LC0; V.SHL; V.ADD`) live.
    pub(crate) fn affine_chunks(&mut self, a: Affine) -> Vec<Value> {
        let v = self
            .b
            .ins()
            .splat(cranelift_codegen::ir::types::I64X2, a.base);
        (0..self.nch)
            .map(|c| {
                let lo = (2 * c as i64).wrapping_mul(a.stride) as u64;
                let hi = (2 * c as i64 + 1).wrapping_mul(a.stride) as u64;
                if (lo, hi) == (0, 0) {
                    return v;
                }
                let k = self.vconst2(lo, hi);
                self.b.ins().iadd(v, k)
            })
            .collect()
    }

    /// The lane step of every vector register that is affine at each entry to a full copy
    /// of the body of loop region `r`, from the shapes its prologue left (read just after
    /// translating it): a loop closed by a branch (an inner branch loop of a nest, entered
    /// from its prologue once per row; not an `ENDLOOP` loop, whose last iteration is
    /// partial) in a region without `V.SETMASK` (so the mask at the loop's head is the
    /// prologue's, and a full copy is reached only through full ones), whose body writes
    /// such a register only by adding or subtracting a scalar or immediate to itself (a
    /// row's vector of lane addresses bumped by the element size). A branch loop of
    /// row-major gemv with one row per lane (`V.LWI.U [v9 + 0]`, `V.ADD v9, v9, 4`) took
    /// every lane's address apart and checked it as a gather's; with the shape, one check of
    /// the span and loads at constant offsets from lane 0's.
    pub(crate) fn entry_strides(&self, r: &crate::region::Region) -> [Option<i64>; 32] {
        let mut out = [None; 32];
        if self.vmem || !super::analysis::branch_loop_keeps_mask(r) {
            return out;
        }
        let mut other = 0u32;
        for (_, inst) in r.body() {
            let w = super::reg_effects(inst).1.v;
            let own = match plus_scalar(inst) {
                Some((vd, va, _, _)) if vd == va => 1 << vd.0,
                _ => 0,
            };
            other |= w & !own;
        }
        for (n, (o, sh)) in out.iter_mut().zip(&self.shape).enumerate() {
            if other & (1 << n) == 0 {
                *o = sh.map(|a| a.stride);
            }
        }
        out
    }

    /// At the start of a full copy of a loop body, the shapes of the registers of
    /// [`Tx::entry_strides`]: lane 0 read from the register (or carried, [`Tx::abase`]), the
    /// step known.
    pub(crate) fn seed_entry_shapes(&mut self) {
        if !self.full || self.masked_tail || self.known_partial {
            return;
        }
        for n in 0..32u8 {
            if let Some(stride) = self.entry_stride[n as usize] {
                // At a merge point (the second full copy's top) a carried register's lanes
                // are made again from lane 0, so no chunk is carried into it.
                let base = match self.remake_from_base(n) {
                    Some(base) => base,
                    None => {
                        let c0 = self.vget(VReg(n), 0);
                        self.b.ins().extractlane(c0, 0)
                    }
                };
                self.shape[n as usize] = Some(Affine { base, stride });
            }
        }
    }

    /// In a loop that never runs under a partial mask (a nest's inner branch loop, whose
    /// partial-mask copy is a cold exit), the registers of [`Tx::entry_strides`] the body
    /// bumps are carried around the loop as lane 0's value alone (`Tx::abase`, set from the
    /// prologue's shape here and from the body's at every back edge, `Tx::carry_bases`);
    /// the loop's head and the second copy's top make their chunks from it
    /// ([`Tx::affine_from_bases`]), pure arithmetic that Cranelift computes only where
    /// something reads them (an exit, a non-affine use). A row's vector of lane addresses
    /// bumped every column was 16 chunk variables at VL 32 carried around the back edge:
    /// an add and a spill of each per column.
    pub(crate) fn carry_affine_bases(&mut self, r: &crate::region::Region) {
        let mut written = 0u32;
        for (_, inst) in r.body() {
            written |= super::reg_effects(inst).1.v;
        }
        for n in 0..32u8 {
            let i = n as usize;
            if written & (1 << n) == 0 || self.entry_stride[i].is_none() {
                continue;
            }
            let Some(a) = self.shape[i] else { continue };
            let var = self.b.declare_var(cranelift_codegen::ir::types::I64);
            self.b.def_var(var, a.base);
            self.abase[i] = Some(var);
        }
    }

    /// The chunks of the registers carried as lane 0's value ([`Tx::carry_affine_bases`]),
    /// at the loop's head.
    pub(crate) fn affine_from_bases(&mut self) {
        for n in 0..32u8 {
            self.remake_from_base(n);
        }
    }

    /// Register `n`'s chunks made from its carried lane 0 ([`Tx::carry_affine_bases`]), which
    /// is returned; `None` (nothing done) for a register not carried so.
    fn remake_from_base(&mut self, n: u8) -> Option<Value> {
        let (Some(var), Some(stride)) = (self.abase[n as usize], self.entry_stride[n as usize])
        else {
            return None;
        };
        let base = self.b.use_var(var);
        let chunks = self.affine_chunks(Affine { base, stride });
        self.vset_raw(VReg(n), &chunks);
        Some(base)
    }

    /// At a back edge of a full copy (to the loop's head or the second copy's top): lane 0
    /// of each register carried as such ([`Tx::carry_affine_bases`]), from its shape (the
    /// body keeps it affine) or, wherever the translator lost it, read from the register.
    pub(crate) fn carry_bases(&mut self) {
        for n in 0..32u8 {
            let i = n as usize;
            let (Some(var), Some(stride)) = (self.abase[i], self.entry_stride[i]) else {
                continue;
            };
            let base = match self.shape[i] {
                Some(a) if a.stride == stride => a.base,
                _ => {
                    let c0 = self.vget(VReg(n), 0);
                    self.b.ins().extractlane(c0, 0)
                }
            };
            self.b.def_var(var, base);
        }
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

/// `inst` as `vd = va + x`, when it is a `V.MOV` of a vector register (`x` none) or a `V.ADD`
/// or `V.SUB` of a scalar or immediate (`x`, a `VSrc::S` or `VSrc::Imm`, subtracted when the
/// last is true): the one rule by which a register holds another's lanes plus a scalar
/// ([`RoPlus`], [`ro_plus_uses`]) and keeps another's lane step ([`stepped_v`],
/// `Tx::ind_of`).
pub(crate) fn plus_scalar(inst: &Inst) -> Option<(VReg, VReg, Option<VSrc>, bool)> {
    match (inst.operands(), inst.opcode().sem()) {
        (Operands::VMov(o), _) => match o.src {
            VSrc::V(a) => Some((o.vd, a, None, false)),
            _ => None,
        },
        (Operands::VAlu(o), Sem::VAlu(op @ (AluOp::Add | AluOp::Sub))) => match o.vb {
            VSrc::V(_) => None,
            x => Some((o.vd, o.va, Some(x), op == AluOp::Sub)),
        },
        _ => None,
    }
}

/// A vector register holding a read-only register's lanes plus a scalar: lane `i` is
/// `reg[i] + k` (64-bit wrapping). A gather or scatter through it is one through `reg` with
/// `k` added to its scalar part, so it shares `reg`'s bounds and lane-step test made at loop
/// entry (`Tx::ro_contig`): an index a compiler steps by adding a scalar to lane offsets it
/// built before a branch loop (`V.ADD v1, v0, s8; V.LD [s1 + v1]`) is one contiguous access
/// when `v0`'s lanes step by one element.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RoPlus {
    /// The read-only register.
    pub(crate) reg: u8,
    /// What is added to every lane (an `i64` that dominates the rest of the body copy).
    pub(crate) k: Value,
}

impl Tx<'_, '_> {
    /// The [`RoPlus`] of the vector register `inst` writes (computed, like
    /// [`Tx::result_shape`], before `inst` is lowered); `None` unless it is a `V.ADD` or
    /// `V.SUB` of a scalar or immediate, or a `V.MOV`, of a read-only register or of one that
    /// holds such a register plus a scalar, under a full mask.
    pub(crate) fn result_ro_plus(&mut self, inst: &Inst) -> Option<RoPlus> {
        if !self.full {
            return None;
        }
        let of = |t: &Self, r: u8| -> Option<(u8, Option<Value>)> {
            if t.ro_v & (1 << r) != 0 {
                Some((r, None))
            } else {
                t.ro_plus[r as usize].map(|p| (p.reg, Some(p.k)))
            }
        };
        let (_, va, add, neg) = plus_scalar(inst)?;
        let (reg, k0) = of(self, va.0)?;
        let add = match add {
            Some(VSrc::S(r)) => Some(self.sget(r)),
            Some(VSrc::Imm(i)) => Some(self.iconst(i as i64 as u64)),
            _ => None,
        };
        let k = match (k0, add) {
            (k0, None) => k0.unwrap_or_else(|| self.iconst(0)),
            (None, Some(a)) if !neg => a,
            (k0, Some(a)) => {
                let k0 = k0.unwrap_or_else(|| self.iconst(0));
                let op = if neg { AluOp::Sub } else { AluOp::Add };
                self.fold(op, k0, a)
            }
        };
        Some(RoPlus { reg, k })
    }

    /// The register of `ind_v` whose lanes step like those of the vector register `inst`
    /// writes: `inst` adds or subtracts a scalar or immediate to, or moves, a register that
    /// steps like it, under a full mask (a register of `ind_v` updating itself included).
    pub(crate) fn result_ind_of(&self, inst: &Inst) -> Option<u8> {
        if !self.full {
            return None;
        }
        plus_scalar(inst).and_then(|(_, va, ..)| self.ind_of[va.0 as usize])
    }
}

/// The vector registers of loop region `r` that it writes only by adding or subtracting a
/// scalar or immediate to themselves (`V.ADD v0, v0, s6`: a vector of lane addresses bumped
/// by a stride), when the loop's mask changes at most in its last iteration (no
/// `V.SETMASK`, not a nest): lanes that step by a constant at loop entry step by it in every
/// full iteration after, so the entry test of `Tx::ro_offsets` holds for them as it does for
/// read-only registers (`Tx::ro_contig`).
pub(crate) fn stepped_v(r: &crate::region::Region) -> u32 {
    if r.loop_head.is_none() || r.outer.is_some() {
        return 0;
    }
    if r.insts.iter().any(|(_, i)| matches!(i, Inst::VSetmask(_))) {
        return 0;
    }
    let mut written = 0u32;
    let mut other = 0u32;
    for (_, inst) in &r.insts {
        let w = super::reg_effects(inst).1.v;
        written |= w;
        let own = match plus_scalar(inst) {
            Some((vd, va, _, _)) if vd == va => 1 << vd.0,
            _ => 0,
        };
        other |= w & !own;
    }
    written & !other
}

/// The read-only register behind the vector operand of every gather and scatter of a loop
/// body whose vector operand is one (`ro_v`) or holds one plus a scalar ([`RoPlus`], by the
/// same rules, symbolically): its position in `insts` and the read-only register. With
/// `ro_v` holding the registers of [`stepped_v`] too, also the accesses through them and
/// through registers made from them by adding scalars.
pub(crate) fn ro_plus_uses(insts: &[(u64, Inst)], ro_v: u32) -> Vec<(usize, u8)> {
    let mut of: [Option<u8>; 32] =
        std::array::from_fn(|n| (ro_v & (1 << n) != 0).then_some(n as u8));
    let mut out = Vec::new();
    for (i, (_, inst)) in insts.iter().enumerate() {
        if let Some(o) = inst.mem_operands() {
            let v = match o.addr {
                MemAddr::RegOff {
                    base: Reg::S(_),
                    off: Reg::V(n),
                    ..
                }
                | MemAddr::RegOff {
                    base: Reg::V(n),
                    off: Reg::S(_),
                    ..
                }
                | MemAddr::Imm {
                    base: Reg::V(n), ..
                } => Some(n),
                _ => None,
            };
            if let Some(r) = v.and_then(|n| of[n as usize]) {
                out.push((i, r));
            }
        }
        let derived =
            plus_scalar(inst).and_then(|(vd, va, ..)| of[va.0 as usize].map(|r| (vd.0, r)));
        let written = super::reg_effects(inst).1.v;
        for (n, slot) in of.iter_mut().enumerate() {
            if written & (1 << n) != 0 {
                *slot = None;
            }
        }
        if let Some((d, r)) = derived {
            of[d as usize] = Some(r);
        }
    }
    out
}

/// A lane value known symbolically over one iteration of a loop body: lane `i` at LC0BASE `x`
/// holds `sum(c * s) + k + lc0 * x + lane * i` (64-bit wrapping), the `s` scalar registers
/// the body never writes or pseudo registers standing for a stepped register's base
/// ([`vbase`], [`sbase`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sym {
    /// `(register, coefficient)`, sorted by register, no zero coefficient.
    pub(crate) terms: Vec<(SReg, i64)>,
    /// The constant.
    pub(crate) k: i64,
    /// The coefficient of LC0BASE.
    pub(crate) lc0: i64,
    /// The coefficient of the lane index.
    pub(crate) lane: i64,
}

impl Sym {
    fn konst(k: i64) -> Sym {
        Sym {
            k,
            ..Sym::default()
        }
    }

    /// Whether it is a constant (then `k`).
    fn is_const(&self) -> bool {
        self.terms.is_empty() && self.lc0 == 0 && self.lane == 0
    }

    fn add(&self, o: &Sym, sign: i64) -> Sym {
        let mut terms = self.terms.clone();
        for &(r, c) in &o.terms {
            match terms.iter_mut().find(|(q, _)| *q == r) {
                Some(t) => t.1 = t.1.wrapping_add(c.wrapping_mul(sign)),
                None => terms.push((r, c.wrapping_mul(sign))),
            }
        }
        terms.retain(|&(_, c)| c != 0);
        terms.sort_by_key(|&(r, _)| r.0);
        Sym {
            terms,
            k: self.k.wrapping_add(o.k.wrapping_mul(sign)),
            lc0: self.lc0.wrapping_add(o.lc0.wrapping_mul(sign)),
            lane: self.lane.wrapping_add(o.lane.wrapping_mul(sign)),
        }
    }

    fn scale(&self, m: i64) -> Sym {
        let mut terms: Vec<(SReg, i64)> = self
            .terms
            .iter()
            .map(|&(r, c)| (r, c.wrapping_mul(m)))
            .collect();
        terms.retain(|&(_, c)| c != 0);
        Sym {
            terms,
            k: self.k.wrapping_mul(m),
            lc0: self.lc0.wrapping_mul(m),
            lane: self.lane.wrapping_mul(m),
        }
    }

    /// The loop-invariant part (scalars and constant) alone.
    pub(crate) fn invariant(&self) -> Sym {
        Sym {
            terms: self.terms.clone(),
            k: self.k,
            lc0: 0,
            lane: 0,
        }
    }
}

/// The pseudo register of a [`Sym`] term standing for vector register `n`'s stepped base
/// (`analysis::Stepped`): at the start of an iteration at LC0BASE `x`, lane `i` of `n` is
/// that base plus `e * (x + i)` (`e * i` when the body never writes `n`), so the base is lane
/// 0 less `e * x` (lane 0: `Tx::inv_value`).
pub(crate) const fn vbase(n: u8) -> SReg {
    SReg(32 + n)
}

/// The pseudo register of a [`Sym`] term standing for scalar register `n`'s stepped base
/// (`analysis::StepKind::Scalar`): at the start of an iteration at LC0BASE `x`, `n` is that
/// base plus `e * x`.
pub(crate) const fn sbase(n: u8) -> SReg {
    SReg(64 + n)
}

/// Whether a [`Sym`] term's register is a pseudo register ([`vbase`], [`sbase`]), not a
/// scalar register.
pub(crate) const fn is_pseudo(r: SReg) -> bool {
    r.0 >= 32
}

/// Symbolic forms over a loop body at `vl` lanes, in program order, with `inv` the scalar
/// registers the body never writes: the form of every memory access's lane EAs (by position in
/// `insts`), where one is known. Every vector register starts unknown (nothing carried from
/// the previous iteration is used) but those of `stepped` (`analysis::Stepped::form`), and
/// so does every scalar the body writes but the stepped ones, whose bump adds `VL * e`.
/// Scalar writes follow the vector rules (`S.ADD`, `S.SUB`, `S.SHL` and `S.MUL` by
/// constants, `S.MOV`, `S.LI`, `S.VL`, and `S.LC0` as LC0BASE); a write the rules do not
/// cover makes a register unknown.
pub(crate) fn lane_forms(
    insts: &[(u64, Inst)],
    inv: u32,
    stepped: &[super::analysis::Stepped],
    vl: u32,
) -> Vec<Option<Sym>> {
    use super::analysis::StepKind;
    let mut v: [Option<Sym>; 32] = std::array::from_fn(|_| None);
    let mut sv: [Option<Sym>; 32] = std::array::from_fn(|n| {
        (n == 0 || inv & (1 << n) != 0).then(|| Sym {
            terms: if n == 0 {
                Vec::new()
            } else {
                vec![(SReg(n as u8), 1)]
            },
            ..Sym::default()
        })
    });
    for st in stepped {
        let slot = match st.kind {
            StepKind::Scalar => &mut sv[st.reg as usize],
            StepKind::Vector | StepKind::Fixed => &mut v[st.reg as usize],
        };
        *slot = Some(st.form());
    }
    let scalar = |sv: &[Option<Sym>; 32], s: SReg| sv[s.0 as usize].clone();
    let s_or_imm = |sv: &[Option<Sym>; 32], x: lanejit_interp::isa::SOrImm| match x {
        lanejit_interp::isa::SOrImm::Reg(r) => scalar(sv, r),
        lanejit_interp::isa::SOrImm::Imm(k) => Some(Sym::konst(k as i64)),
    };
    let reg = |v: &[Option<Sym>; 32], sv: &[Option<Sym>; 32], r: Reg| -> Option<Sym> {
        match r {
            Reg::S(n) => scalar(sv, SReg(n)),
            Reg::V(n) => v[n as usize].clone(),
            Reg::Lc0 => Some(Sym {
                lc0: 1,
                lane: 1,
                ..Sym::default()
            }),
        }
    };
    let src = |v: &[Option<Sym>; 32], sv: &[Option<Sym>; 32], s: VSrc| -> Option<Sym> {
        match s {
            VSrc::V(r) => v[r.0 as usize].clone(),
            VSrc::S(r) => scalar(sv, r),
            VSrc::Imm(i) => Some(Sym::konst(i as i64)),
        }
    };
    // The form of `a op b` where the rules know it.
    let alu = |op: AluOp, a: Sym, b: Sym| -> Option<Sym> {
        match op {
            AluOp::Add => Some(a.add(&b, 1)),
            AluOp::Sub => Some(a.add(&b, -1)),
            AluOp::Shl if b.is_const() => Some(a.scale(1i64.wrapping_shl((b.k & 63) as u32))),
            AluOp::Mul if b.is_const() => Some(a.scale(b.k)),
            AluOp::Mul if a.is_const() => Some(b.scale(a.k)),
            _ => None,
        }
    };
    let mut out = Vec::with_capacity(insts.len());
    for (_, inst) in insts {
        let ea = match (inst.opcode().mem(), inst.mem_operands()) {
            (Some(ms), Some(o)) => match o.addr {
                MemAddr::RegOff { base, off, shamt } => {
                    let sh = ms.reg_shift(shamt);
                    match (reg(&v, &sv, base), reg(&v, &sv, off)) {
                        (Some(b), Some(o)) if sh < 64 => Some(b.add(&o.scale(1i64 << sh), 1)),
                        _ => None,
                    }
                }
                MemAddr::Imm { base, imm } => {
                    reg(&v, &sv, base).map(|b| b.add(&Sym::konst(ms.imm_offset(imm) as i64), 1))
                }
                MemAddr::Contig { base, off } => {
                    let e = 1i64 << ms.log2e;
                    match (scalar(&sv, base), s_or_imm(&sv, off)) {
                        (Some(b), Some(o)) => Some(b.add(&o, 1).add(
                            &Sym {
                                lc0: e,
                                lane: e,
                                ..Sym::default()
                            },
                            1,
                        )),
                        _ => None,
                    }
                }
            },
            _ => None,
        };
        out.push(ea);
        let result = match (inst.operands(), inst.opcode().sem()) {
            (Operands::VUnary(_), Sem::VRead(r)) => Some(match r {
                VRead::Lc0 => Sym {
                    lc0: 1,
                    lane: 1,
                    ..Sym::default()
                },
                VRead::LaneId => Sym {
                    lane: 1,
                    ..Sym::default()
                },
            }),
            (Operands::VMov(o), _) => src(&v, &sv, o.src),
            (Operands::VAlu(o), Sem::VAlu(op)) => {
                match (v[o.va.0 as usize].clone(), src(&v, &sv, o.vb)) {
                    (Some(a), Some(b)) => alu(op, a, b),
                    _ => None,
                }
            }
            _ => None,
        };
        // The scalar `inst` writes and its form: address arithmetic in the body (`S.LC0 s5;
        // S.SHL s6, s5, 2; S.ADD s7, s1, s6`), by the same rules.
        let sresult = match (inst.operands(), inst.opcode().sem()) {
            (Operands::SAlu(o), Sem::SAlu(op)) => {
                let f = match (scalar(&sv, o.sa), s_or_imm(&sv, o.sb)) {
                    (Some(a), Some(b)) => alu(op, a, b),
                    _ => None,
                };
                Some((o.sd.0, f))
            }
            (Operands::SLi(o), _) => Some((o.sd.0, Some(Sym::konst(o.imm as i64)))),
            (Operands::SMov(o), _) => Some((o.sd.0, scalar(&sv, o.sa))),
            (Operands::SUnary(o), Sem::SRead(SRead::Lc0)) => Some((
                o.sd.0,
                Some(Sym {
                    lc0: 1,
                    ..Sym::default()
                }),
            )),
            (Operands::SUnary(o), Sem::SRead(SRead::Vl)) => {
                Some((o.sd.0, Some(Sym::konst(i64::from(vl)))))
            }
            _ => None,
        };
        let written = super::reg_effects(inst).1;
        for (n, slot) in v.iter_mut().enumerate() {
            if written.v & (1 << n) != 0 {
                *slot = None;
            }
        }
        if let (Some(sym), Some(d)) = (result, single_vd(inst)) {
            v[d as usize] = Some(sym);
        }
        for (n, slot) in sv.iter_mut().enumerate() {
            if written.s & (1 << n) == 0 {
                continue;
            }
            // A stepped scalar's one write is its bump, by `VL * e` (speculated).
            *slot = match stepped
                .iter()
                .find(|st| st.kind == StepKind::Scalar && st.reg as usize == n)
            {
                Some(st) => {
                    let by = Sym::konst(st.e.wrapping_mul(vl as i64));
                    slot.as_ref().map(|f| f.add(&by, 1))
                }
                None => match &sresult {
                    Some((d, f)) if *d as usize == n => f.clone(),
                    _ => None,
                },
            };
        }
    }
    out
}

/// The one vector register `inst` writes, if it is an ALU, move or lane-read instruction.
fn single_vd(inst: &Inst) -> Option<u8> {
    match inst.operands() {
        Operands::VUnary(o) => Some(o.vd.0),
        Operands::VMov(o) => Some(o.vd.0),
        Operands::VAlu(o) => Some(o.vd.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::ro_plus_uses;
    use lanejit_interp::isa::Inst;

    fn body(src: &str) -> Vec<(u64, Inst)> {
        let p = lanejit_interp::asm::assemble(src, "body.s").expect("assembles");
        let mut out = Vec::new();
        let mut i = 0;
        while i < p.code.len() {
            let inst = Inst::decode(&p.code[i..]).expect("decodes");
            out.push((8 * i as u64, inst));
            i += inst.opcode().words();
        }
        out
    }

    #[test]
    fn accesses_through_read_only_registers_plus_scalars_are_found() {
        // v0 and v6 are read-only (bits 0 and 6); v1, v2 and v4 are written in the body.
        let insts = body(
            "
            V.LW [s1 + (v0 << 2)], ->v4
            V.ADD v1, v0, s8
            V.LD [s1 + v1], ->v2
            V.MOV v2, v1
            V.SUB v2, v2, 3
            V.SD.U v4, [s2 + v2]
            V.LDI.U [v2 + 8], ->v4
            V.ADD v1, v1, v6
            V.LD [s1 + v1], ->v4
            V.SHL v2, v6, 1
            V.LD [s1 + v2], ->v4
            V.LD [s1 + v4], ->v4
            V.ADD v1, v6, 4
            V.LD [v1 + s3], ->v4
            ",
        );
        let uses = ro_plus_uses(&insts, 1 | (1 << 6));
        // The positions of the accesses through v0 (directly, or v0 plus s8, then minus 3)
        // and through v6 plus 4; not through v0 + v6, v6 << 1, or a loaded v4.
        assert_eq!(uses, vec![(0, 0), (2, 0), (5, 0), (6, 0), (13, 6)]);
        // Nothing is read-only: nothing found.
        assert!(ro_plus_uses(&insts, 0).is_empty());
    }
}
