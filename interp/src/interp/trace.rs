//! Instruction tracing: one [`TraceEvent`] per retired instruction, with the registers, mask,
//! LC0BASE and latched trip count it changed.
//!
//! Tracing is a [`Hook`] type parameter of the shared run loop: the untraced loop is
//! instantiated with [`NoTrace`], whose `ON = false` removes every tracing statement at
//! compile time, so `run` pays nothing for it.

use super::Decoded;
use crate::for_each_op;
use crate::isa::*;
use crate::machine::Machine;
use std::fmt;

/// One state change made by a retired instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Scalar register `s{reg}` now holds `value`.
    Scalar {
        /// Register number.
        reg: u8,
        /// New value.
        value: u64,
    },
    /// Vector register `v{reg}` now holds `lanes` (VL lanes).
    Vector {
        /// Register number.
        reg: u8,
        /// New value of every lane below VL.
        lanes: Vec<u64>,
    },
    /// The execution mask.
    Mask(u64),
    /// LC0BASE.
    Lc0Base(u64),
    /// The trip count latched by `LOOP`.
    Trip(u64),
}

/// A retired instruction and what it changed.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEvent {
    /// Its pc.
    pub pc: u64,
    /// The instruction.
    pub inst: Inst,
    /// Registers (and mask, LC0BASE, trip) whose value changed, with the new values.
    pub changes: Vec<Change>,
}

impl fmt::Display for TraceEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.inst.to_string();
        write!(f, "{:#06x}  {text:<40}", self.pc)?;
        for c in &self.changes {
            match c {
                Change::Scalar { reg, value } => write!(f, " s{reg}={value:#x}")?,
                Change::Vector { reg, lanes } => {
                    write!(f, " v{reg}=[")?;
                    for (i, x) in lanes.iter().enumerate() {
                        if i > 0 {
                            f.write_str(" ")?;
                        }
                        write!(f, "{x:#x}")?;
                    }
                    f.write_str("]")?;
                }
                Change::Mask(v) => write!(f, " mask={v:#x}")?,
                Change::Lc0Base(v) => write!(f, " lc0={v:#x}")?,
                Change::Trip(v) => write!(f, " trip={v:#x}")?,
            }
        }
        Ok(())
    }
}

/// What the run loop calls around each instruction (monomorphised; see the module docs).
pub(crate) trait Hook {
    /// Whether any hook code runs at all.
    const ON: bool;
    /// Called with the event of each retired instruction (only when `ON`).
    fn retired(&mut self, ev: &TraceEvent);
}

/// No tracing.
pub(crate) struct NoTrace;

impl Hook for NoTrace {
    const ON: bool = false;
    #[inline(always)]
    fn retired(&mut self, _: &TraceEvent) {}
}

/// Tracing into a sink.
pub(crate) struct Sink<'a, F: FnMut(&TraceEvent)>(pub &'a mut F);

impl<F: FnMut(&TraceEvent)> Hook for Sink<'_, F> {
    const ON: bool = true;
    fn retired(&mut self, ev: &TraceEvent) {
        (self.0)(ev)
    }
}

/// State before an instruction, to diff against afterwards.
pub(crate) struct Snap {
    s: [u64; 32],
    vdst: Option<(u8, [u64; 64])>,
    mask: u64,
    lc0base: u64,
    trip: u64,
}

impl Snap {
    /// Snapshot what the instruction at `index` can change.
    pub(crate) fn take(m: &Machine, d: &Decoded, index: usize) -> Snap {
        let r = &m.regs;
        let vdst = d
            .inst(index)
            .and_then(vector_dst)
            .map(|v| (v, r.v[v as usize & 31]));
        Snap {
            s: r.s,
            vdst,
            mask: r.mask,
            lc0base: r.lc0base,
            trip: r.trip,
        }
    }

    /// The event of the instruction at `index`, which has just retired.
    pub(crate) fn event(&self, m: &Machine, d: &Decoded, index: usize) -> Option<TraceEvent> {
        let inst = *d.inst(index)?;
        let r = &m.regs;
        let vl = m.vl().min(64);
        let mut changes = Vec::new();
        for (i, (a, b)) in self.s.iter().zip(&r.s).enumerate() {
            if a != b {
                changes.push(Change::Scalar {
                    reg: i as u8,
                    value: *b,
                });
            }
        }
        if let Some((v, old)) = &self.vdst {
            let new = &r.v[*v as usize & 31];
            if old[..vl] != new[..vl] {
                changes.push(Change::Vector {
                    reg: *v,
                    lanes: new[..vl].to_vec(),
                });
            }
        }
        if self.mask != r.mask {
            changes.push(Change::Mask(r.mask));
        }
        if self.lc0base != r.lc0base {
            changes.push(Change::Lc0Base(r.lc0base));
        }
        if self.trip != r.trip {
            changes.push(Change::Trip(r.trip));
        }
        Some(TraceEvent {
            pc: index as u64 * 8,
            inst,
            changes,
        })
    }
}

/// The vector register an instruction's format writes, if any.
trait VDst {
    fn vdst(&self) -> Option<u8> {
        None
    }
}

macro_rules! vdst_impls {
    ($field:ident: $($t:ty),*) => { $( impl VDst for $t { fn vdst(&self) -> Option<u8> { Some(self.$field.0) } } )* };
    ($($t:ty),*) => { $( impl VDst for $t {} )* };
}
vdst_impls!(dst: LoadRR, LoadImm, LoadC);
vdst_impls!(vd: VAlu, VMov, VUnary, VFp);
vdst_impls!(StoreRR, StoreImm, StoreC, SAlu, SLi, SMov, SUnary, SGetLane);
vdst_impls!(VRedSum, VSetMask, Jump, Branch, Loop, EndLoop, Nullary);

macro_rules! gen_vdst {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident $snake:ident $code:literal $mn:literal $fmt:ident ($sem:expr);
    )*) => {
        /// The vector register `inst` writes, if any.
        pub(crate) fn vector_dst(inst: &Inst) -> Option<u8> {
            match inst {
                $( Inst::$name(o) => o.vdst(), )*
            }
        }
    };
}

for_each_op!(gen_vdst);
