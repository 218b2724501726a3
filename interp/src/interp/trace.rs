//! Instruction tracing: one [`TraceEvent`] per retired instruction, with the registers, mask,
//! LC0BASE and latched trip count it changed, the mask it ran under, and for a load or store
//! every active lane's access (EA, value read or bytes written, space).
//!
//! Tracing is a [`Hook`] type parameter of the shared run loop: the untraced loop is
//! instantiated with [`NoTrace`], whose `ON = false` removes every tracing statement at
//! compile time, so `run` pays nothing for it. A hook may stop the run after any instruction
//! ([`super::run_block_traced`], which the embedding API's memory and block hooks use).

use super::Decoded;
use crate::for_each_op;
use crate::isa::*;
use crate::machine::Machine;
use crate::program::Space;
use std::fmt;
use std::fmt::Write as _;
use std::ops::ControlFlow;

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

/// One active lane's access by a load or store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneAccess {
    /// The lane.
    pub lane: u8,
    /// Its effective address.
    pub ea: u64,
    /// A load: the value written to the lane (extended); a store: the lane's data, whose low
    /// `width` bytes were written.
    pub value: u64,
}

/// The accesses of a retired load or store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemTrace {
    /// Load or store.
    pub dir: Dir,
    /// Memory or tile space.
    pub space: Space,
    /// Access width E in bytes.
    pub width: u8,
    /// Every active lane's access, in lane order.
    pub lanes: Vec<LaneAccess>,
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
    /// The execution mask the instruction ran under.
    pub mask: u64,
    /// A load's or store's lane accesses.
    pub mem: Option<MemTrace>,
}

impl TraceEvent {
    /// The registers and state it changed, as ` s1=0x3 v2=[0x1 0x2] mask=0xf`.
    pub fn changes_text(&self) -> String {
        let mut s = String::new();
        for c in &self.changes {
            let _ = match c {
                Change::Scalar { reg, value } => write!(s, " s{reg}={value:#x}"),
                Change::Vector { reg, lanes } => {
                    let l: Vec<String> = lanes.iter().map(|x| format!("{x:#x}")).collect();
                    write!(s, " v{reg}=[{}]", l.join(" "))
                }
                Change::Mask(v) => write!(s, " mask={v:#x}"),
                Change::Lc0Base(v) => write!(s, " lc0={v:#x}"),
                Change::Trip(v) => write!(s, " trip={v:#x}"),
            };
        }
        s
    }

    /// One line per active lane of a load or store: `  read memory lane 3 ea 0x1000c
    /// 0x40200000` or `  write tile lane 0 ea 0x40 bytes 00002040`.
    pub fn access_lines(&self) -> Vec<String> {
        let Some(mt) = &self.mem else {
            return Vec::new();
        };
        let space = crate::result::space_name(mt.space);
        mt.lanes
            .iter()
            .map(|a| match mt.dir {
                Dir::Load => format!(
                    "  read  {space} lane {:<2} ea {:#x} -> {:#x}",
                    a.lane, a.ea, a.value
                ),
                Dir::Store => format!(
                    "  write {space} lane {:<2} ea {:#x} bytes {}",
                    a.lane,
                    a.ea,
                    crate::result::hex_bytes(&a.value.to_le_bytes()[..mt.width as usize])
                ),
            })
            .collect()
    }
}

impl fmt::Display for TraceEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.inst.to_string();
        write!(f, "{:#06x}  {text:<40}{}", self.pc, self.changes_text())
    }
}

/// What the run loop calls around each instruction (monomorphised; see the module docs).
pub(crate) trait Hook {
    /// Whether any hook code runs at all.
    const ON: bool;
    /// Called with the event of each retired instruction and the machine after it (only
    /// when `ON`); `Break` stops the run after this instruction.
    fn retired(&mut self, ev: &TraceEvent, m: &Machine) -> ControlFlow<()>;
}

/// No tracing.
pub(crate) struct NoTrace;

impl Hook for NoTrace {
    const ON: bool = false;
    #[inline(always)]
    fn retired(&mut self, _: &TraceEvent, _: &Machine) -> ControlFlow<()> {
        ControlFlow::Continue(())
    }
}

/// Tracing into a sink that never stops the run.
pub(crate) struct Sink<'a, F: FnMut(&TraceEvent)>(pub &'a mut F);

impl<F: FnMut(&TraceEvent)> Hook for Sink<'_, F> {
    const ON: bool = true;
    fn retired(&mut self, ev: &TraceEvent, _: &Machine) -> ControlFlow<()> {
        (self.0)(ev);
        ControlFlow::Continue(())
    }
}

/// Tracing into a sink that sees the machine and may stop the run.
pub(crate) struct StopSink<'a, F: FnMut(&TraceEvent, &Machine) -> ControlFlow<()>>(pub &'a mut F);

impl<F: FnMut(&TraceEvent, &Machine) -> ControlFlow<()>> Hook for StopSink<'_, F> {
    const ON: bool = true;
    fn retired(&mut self, ev: &TraceEvent, m: &Machine) -> ControlFlow<()> {
        (self.0)(ev, m)
    }
}

/// State before an instruction, to diff against afterwards.
pub(crate) struct Snap {
    s: [u64; 32],
    vdst: Option<(u8, [u64; 64])>,
    mask: u64,
    lc0base: u64,
    trip: u64,
    /// A load or store: direction, space, width, and every active lane's (lane, EA, store
    /// data).
    mem: Option<(Dir, Space, u8, Vec<LaneAccess>)>,
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
            mem: Self::accesses(m, d, index),
        }
    }

    /// The lane accesses the memory instruction at `index` is about to make (EAs from the
    /// sources as they are before it runs; a store's data).
    fn accesses(
        m: &Machine,
        d: &Decoded,
        index: usize,
    ) -> Option<(Dir, Space, u8, Vec<LaneAccess>)> {
        let inst = d.inst(index)?;
        let Sem::Mem(ms) = inst.opcode().sem() else {
            return None;
        };
        let mo = inst.mem_operands()?;
        let op = d.ops.get(index)?;
        let r = &m.regs;
        let vl = m.vl().min(64);
        let mut buf = super::mem_ops::ea_buf();
        let eas = super::mem_ops::compute_eas(r, op, vl, &mut buf);
        let data = |lane: usize| match mo.data {
            Reg::S(n) => r.s[n as usize & 31],
            Reg::V(n) => r.v[n as usize & 31][lane],
            Reg::Lc0 => r.lc0base.wrapping_add(lane as u64),
        };
        let lanes = (0..vl)
            .filter(|&i| r.mask >> i & 1 == 1)
            .map(|i| LaneAccess {
                lane: i as u8,
                ea: eas[i],
                value: if ms.dir == Dir::Store { data(i) } else { 0 },
            })
            .collect();
        let space = if mo.local { Space::Tile } else { Space::Memory };
        Some((ms.dir, space, ms.width() as u8, lanes))
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
        let mem = self.mem.as_ref().map(|(dir, space, width, lanes)| {
            let mut lanes = lanes.clone();
            if *dir == Dir::Load
                && let Some(Reg::V(v)) = inst.mem_operands().map(|mo| mo.data)
            {
                for a in &mut lanes {
                    a.value = r.v[v as usize & 31][a.lane as usize];
                }
            }
            MemTrace {
                dir: *dir,
                space: *space,
                width: *width,
                lanes,
            }
        });
        Some(TraceEvent {
            pc: index as u64 * 8,
            inst,
            changes,
            mask: self.mask,
            mem,
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
