//! The vector load/store executor: the per-lane loop written once and shared by every load
//! and store form of the seed (Spike style).
//!
//! Every memory [`Op`] describes its lane EA uniformly as `L(i) + (R(i) << sh) + s[d] + imm`
//! (see [`Op`]), so one EA generator serves the register-offset, immediate and contiguous
//! forms. The executor is generic over the element ([`Elem`]: width and extension) and the
//! address space ([`SpaceT`]: memory or tile) and is monomorphised for each of the 22
//! combinations; the instruction's semantics are nothing more than that choice.
//!
//! Paths, fastest first:
//! 1. **contiguous** (`F_CONTIG`: scalar SrcL, SrcR = `lc0`, total shift = log2 E): lane i's
//!    EA is `EA0 + i*E`, so one `check` of `[EA0, EA0 + VL*E)` (at most 512 bytes, two pages)
//!    covers the group, followed by a straight, vectorisable copy with extension (all lanes
//!    active) or a masked copy. If the group check fails (or strict alignment would trap),
//!    the general path finds the precise lowest faulting lane.
//! 2. **uniform** (scalar SrcL and SrcR): one EA for every lane, one check.
//! 3. **general**: compute all EAs (reading every source before anything is written), check
//!    every active lane in ascending order (misaligned, then out of range, then permission;
//!    the first faulting lane traps and nothing is written), then perform the accesses in
//!    ascending lane order (so a higher lane's store bytes win on overlap).

use super::decoded::{F_CONTIG, F_STRICT, Op};
use super::{ExecFn, Fault, Flow};
use crate::isa::{Dir, Ext, MemSem};
use crate::machine::{Machine, MemFault, Regs, TrapKind, all_lanes};
use crate::memory::{Access, AccessFault};
use crate::program::Space;

/// An element type: access width and how a load extends it into 64 bits.
pub(crate) trait Elem {
    /// log2 of the width.
    const LOG2E: u32;
    /// Width in bytes.
    const E: usize = 1 << Self::LOG2E;
    /// Read one element at `p`, extended to 64 bits.
    ///
    /// # Safety
    /// `[p, p + E)` must be readable host memory.
    unsafe fn load(p: *const u8) -> u64;
    /// Write the low E bytes of `v` at `p`.
    ///
    /// # Safety
    /// `[p, p + E)` must be writable host memory.
    unsafe fn store(p: *mut u8, v: u64);
    /// Extend every element of `src` (`dst.len()` elements) into `dst`.
    fn load_run(src: &[u8], dst: &mut [u64]);
    /// As [`Elem::load_run`], for the lanes set in `mask` only.
    fn load_run_masked(src: &[u8], dst: &mut [u64], mask: u64);
    /// Write the low E bytes of every element of `src` to consecutive elements of `dst`.
    fn store_run(src: &[u64], dst: &mut [u8]);
}

macro_rules! elem {
    ($name:ident, $raw:ty, $ext:ty, $n:literal, $log:literal) => {
        pub(crate) struct $name;
        impl Elem for $name {
            const LOG2E: u32 = $log;
            #[inline(always)]
            unsafe fn load(p: *const u8) -> u64 {
                // SAFETY: the caller guarantees [p, p + E) is readable; unaligned reads are fine.
                let b = unsafe { std::ptr::read_unaligned(p as *const [u8; $n]) };
                <$raw>::from_le_bytes(b) as $ext as u64
            }
            #[inline(always)]
            unsafe fn store(p: *mut u8, v: u64) {
                // SAFETY: the caller guarantees [p, p + E) is writable; unaligned writes are fine.
                unsafe { std::ptr::write_unaligned(p as *mut [u8; $n], (v as $raw).to_le_bytes()) }
            }
            #[inline(always)]
            fn load_run(src: &[u8], dst: &mut [u64]) {
                for (d, c) in dst.iter_mut().zip(src.chunks_exact($n)) {
                    let b: [u8; $n] = c.try_into().unwrap_or([0; $n]);
                    *d = <$raw>::from_le_bytes(b) as $ext as u64;
                }
            }
            #[inline(always)]
            fn load_run_masked(src: &[u8], dst: &mut [u64], mask: u64) {
                for (i, (d, c)) in dst.iter_mut().zip(src.chunks_exact($n)).enumerate() {
                    let b: [u8; $n] = c.try_into().unwrap_or([0; $n]);
                    let v = <$raw>::from_le_bytes(b) as $ext as u64;
                    if mask >> i & 1 != 0 {
                        *d = v;
                    }
                }
            }
            #[inline(always)]
            fn store_run(src: &[u64], dst: &mut [u8]) {
                for (c, v) in dst.chunks_exact_mut($n).zip(src) {
                    c.copy_from_slice(&(*v as $raw).to_le_bytes());
                }
            }
        }
    };
}

elem!(I8, i8, i64, 1, 0);
elem!(U8, u8, u64, 1, 0);
elem!(I16, i16, i64, 2, 1);
elem!(U16, u16, u64, 2, 1);
elem!(I32, i32, i64, 4, 2);
elem!(U32, u32, u64, 4, 2);
elem!(U64, u64, u64, 8, 3);

/// An address space: memory or tile.
pub(crate) trait SpaceT {
    /// Its name in traps.
    const SPACE: Space;
    /// Check `[ea, ea + len)`, `1 <= len <= 4096`.
    fn check(m: &Machine, ea: u64, len: u64, access: Access) -> Result<(), AccessFault>;
    /// Host pointer for reading.
    ///
    /// # Safety
    /// `[ea, ea + len)` must have passed [`SpaceT::check`] for the bytes then read.
    unsafe fn ptr(m: &Machine, ea: u64) -> *const u8;
    /// Host pointer for writing.
    ///
    /// # Safety
    /// `[ea, ea + len)` must have passed [`SpaceT::check`] for the bytes then written.
    unsafe fn ptr_mut(m: &mut Machine, ea: u64) -> *mut u8;
}

/// Guest memory (no `.local`).
pub(crate) struct MemSpace;
/// Tile space (`.local`).
pub(crate) struct TileSpace;

impl SpaceT for MemSpace {
    const SPACE: Space = Space::Memory;
    #[inline(always)]
    fn check(m: &Machine, ea: u64, len: u64, access: Access) -> Result<(), AccessFault> {
        m.mem.check(ea, len, access)
    }
    #[inline(always)]
    unsafe fn ptr(m: &Machine, ea: u64) -> *const u8 {
        // SAFETY: forwarded contract: the range passed `Memory::check`.
        unsafe { m.mem.host_ptr_const(ea) }
    }
    #[inline(always)]
    unsafe fn ptr_mut(m: &mut Machine, ea: u64) -> *mut u8 {
        // SAFETY: forwarded contract: the range passed `Memory::check`.
        unsafe { m.mem.host_ptr(ea) }
    }
}

impl SpaceT for TileSpace {
    const SPACE: Space = Space::Tile;
    #[inline(always)]
    fn check(m: &Machine, ea: u64, len: u64, access: Access) -> Result<(), AccessFault> {
        m.tile.check(ea, len, access)
    }
    #[inline(always)]
    unsafe fn ptr(m: &Machine, ea: u64) -> *const u8 {
        // SAFETY: forwarded contract: the range passed `Tile::check`.
        unsafe { m.tile.host_ptr_const(ea) }
    }
    #[inline(always)]
    unsafe fn ptr_mut(m: &mut Machine, ea: u64) -> *mut u8 {
        // SAFETY: forwarded contract: the range passed `Tile::check`.
        unsafe { m.tile.host_ptr(ea) }
    }
}

/// The handler of a memory instruction.
pub(crate) fn handler(ms: MemSem, local: bool) -> ExecFn {
    macro_rules! pick {
        ($f:ident, $e:ty) => {
            if local {
                $f::<$e, TileSpace>
            } else {
                $f::<$e, MemSpace>
            }
        };
    }
    match (ms.dir, ms.log2e, ms.ext) {
        (Dir::Load, 0, Ext::Sign) => pick!(load, I8),
        (Dir::Load, 0, _) => pick!(load, U8),
        (Dir::Load, 1, Ext::Sign) => pick!(load, I16),
        (Dir::Load, 1, _) => pick!(load, U16),
        (Dir::Load, 2, Ext::Sign) => pick!(load, I32),
        (Dir::Load, 2, _) => pick!(load, U32),
        (Dir::Load, _, _) => pick!(load, U64),
        (Dir::Store, 0, _) => pick!(store, U8),
        (Dir::Store, 1, _) => pick!(store, U16),
        (Dir::Store, 2, _) => pick!(store, U32),
        (Dir::Store, _, _) => pick!(store, U64),
    }
}

#[cold]
#[inline(never)]
fn fault(kind: TrapKind, lane: usize, ea: u64, space: Space, access: Access) -> Fault {
    Fault {
        kind,
        mem: Some(MemFault {
            lane: lane as u32,
            ea,
            space,
            access,
        }),
    }
}

/// The constant part `s[d] + imm` of every lane's EA.
#[inline(always)]
fn konst(r: &Regs, op: &Op) -> u64 {
    r.s[op.d as usize & 31].wrapping_add(op.imm)
}

/// Lane 0's EA of a contiguous access (lane i is this + i*E).
#[inline(always)]
fn contig_ea0(r: &Regs, op: &Op) -> u64 {
    r.s[op.b as usize & 31]
        .wrapping_add(r.lc0base.wrapping_shl(op.sh as u32))
        .wrapping_add(konst(r, op))
}

/// Every lane's EA (`vl` lanes), from sources read before anything is written.
#[inline(always)]
fn compute_eas(r: &Regs, op: &Op, vl: usize, eas: &mut [u64; 64]) {
    let k = konst(r, op);
    let sh = op.sh as u32;
    let out = &mut eas[..vl];
    let (b, c) = (op.b as usize, op.c as usize);
    let lc0 = r.lc0base;
    if b < 32 {
        let base = r.s[b].wrapping_add(k);
        if c < 32 {
            out.fill(base.wrapping_add(r.s[c].wrapping_shl(sh)));
        } else if c == 64 {
            for (i, o) in out.iter_mut().enumerate() {
                *o = base.wrapping_add(lc0.wrapping_add(i as u64).wrapping_shl(sh));
            }
        } else {
            let rv = &r.v[c & 31];
            for (o, x) in out.iter_mut().zip(rv) {
                *o = base.wrapping_add(x.wrapping_shl(sh));
            }
        }
    } else {
        let lv = &r.v[b & 31];
        if c < 32 {
            let off = r.s[c].wrapping_shl(sh).wrapping_add(k);
            for (o, l) in out.iter_mut().zip(lv) {
                *o = l.wrapping_add(off);
            }
        } else if c == 64 {
            for (i, (o, l)) in out.iter_mut().zip(lv).enumerate() {
                let x = lc0.wrapping_add(i as u64).wrapping_shl(sh);
                *o = l.wrapping_add(x).wrapping_add(k);
            }
        } else {
            let rv = &r.v[c & 31];
            for ((o, l), x) in out.iter_mut().zip(lv).zip(rv) {
                *o = l.wrapping_add(x.wrapping_shl(sh)).wrapping_add(k);
            }
        }
    }
}

/// Check one lane's access: misaligned (when `strict`), then out of range, then permission.
#[inline(always)]
fn check_lane<E: Elem, S: SpaceT>(
    m: &Machine,
    lane: usize,
    ea: u64,
    access: Access,
    strict: bool,
) -> Result<(), Fault> {
    if strict && ea & (E::E as u64 - 1) != 0 {
        return Err(fault(TrapKind::Misaligned, lane, ea, S::SPACE, access));
    }
    match S::check(m, ea, E::E as u64, access) {
        Ok(()) => Ok(()),
        Err(f) => Err(fault(f.into(), lane, ea, S::SPACE, access)),
    }
}

/// Check every active lane in ascending order; the first (lowest) faulting lane wins.
#[inline(always)]
fn check_lanes<E: Elem, S: SpaceT>(
    m: &Machine,
    eas: &[u64; 64],
    mask: u64,
    access: Access,
    strict: bool,
) -> Result<(), Fault> {
    let mut bits = mask;
    while bits != 0 {
        let i = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        check_lane::<E, S>(m, i, eas[i & 63], access, strict)?;
    }
    Ok(())
}

/// The state every memory handler starts from: `(vl, all-lanes mask, active mask, strict)`.
#[inline(always)]
fn lanes(m: &Machine, op: &Op) -> (usize, u64, u64, bool) {
    let vl = m.vl().min(64);
    let full = all_lanes(vl as u32);
    let strict = op.flags & F_STRICT != 0 && m.config.strict_align;
    (vl, full, m.regs.mask & full, strict)
}

/// Whether the contiguous group access at `ea0` may take the one-check fast path.
#[inline(always)]
fn contig_ok<E: Elem, S: SpaceT>(
    m: &Machine,
    ea0: u64,
    vl: usize,
    access: Access,
    strict: bool,
) -> bool {
    !(strict && ea0 & (E::E as u64 - 1) != 0)
        && S::check(m, ea0, (vl << E::LOG2E) as u64, access).is_ok()
}

/// Every load form: `Dst[i] = extend(space[EA(i) .. EA(i) + E])` for active lanes.
pub(crate) fn load<E: Elem, S: SpaceT>(m: &mut Machine, op: &Op) -> Flow {
    let (vl, full, mask, strict) = lanes(m, op);
    let dst = op.a as usize & 31;
    if op.flags & F_CONTIG != 0 {
        let ea0 = contig_ea0(&m.regs, op);
        if contig_ok::<E, S>(m, ea0, vl, Access::Read, strict) {
            let len = vl << E::LOG2E;
            // SAFETY: `[ea0, ea0 + len)` passed the space's check, so it lies inside the host
            // backing of that space; guest memory/tile never alias the register file.
            let src = unsafe { std::slice::from_raw_parts(S::ptr(m, ea0), len) };
            let d = &mut m.regs.v[dst][..vl];
            if mask == full {
                E::load_run(src, d);
            } else {
                E::load_run_masked(src, d, mask);
            }
            return Flow::Next;
        }
    } else if op.b < 32 && op.c < 32 {
        // Uniform: every lane has the same EA.
        if mask == 0 {
            return Flow::Next;
        }
        let mut one = [0u64; 64];
        compute_eas(&m.regs, op, 1, &mut one);
        let ea = one[0];
        if let Err(f) =
            check_lane::<E, S>(m, mask.trailing_zeros() as usize, ea, Access::Read, strict)
        {
            return Flow::Fault(f);
        }
        // SAFETY: `[ea, ea + E)` passed the space's check just above.
        let v = unsafe { E::load(S::ptr(m, ea)) };
        let d = &mut m.regs.v[dst][..vl];
        for (i, x) in d.iter_mut().enumerate() {
            if mask >> i & 1 != 0 {
                *x = v;
            }
        }
        return Flow::Next;
    }
    let mut eas = [0u64; 64];
    compute_eas(&m.regs, op, vl, &mut eas);
    if let Err(f) = check_lanes::<E, S>(m, &eas, mask, Access::Read, strict) {
        return Flow::Fault(f);
    }
    let mut vals = [0u64; 64];
    let mut bits = mask;
    while bits != 0 {
        let i = bits.trailing_zeros() as usize & 63;
        bits &= bits - 1;
        // SAFETY: lane i's `[ea, ea + E)` passed the space's check in `check_lanes`.
        vals[i] = unsafe { E::load(S::ptr(m, eas[i])) };
    }
    let d = &mut m.regs.v[dst];
    for i in 0..vl {
        if mask >> i & 1 != 0 {
            d[i] = vals[i];
        }
    }
    Flow::Next
}

/// Every store form: `space[EA(i) .. EA(i) + E] = low E bytes of SrcD(i)` for active lanes,
/// in ascending lane order.
pub(crate) fn store<E: Elem, S: SpaceT>(m: &mut Machine, op: &Op) -> Flow {
    let (vl, full, mask, strict) = lanes(m, op);
    let src = op.a as usize;
    let scalar_data = src < 32;
    if op.flags & F_CONTIG != 0 {
        let ea0 = contig_ea0(&m.regs, op);
        if contig_ok::<E, S>(m, ea0, vl, Access::Write, strict) {
            let len = vl << E::LOG2E;
            // SAFETY: `[ea0, ea0 + len)` passed the space's check (for writing), so it lies
            // inside the host backing of that space, which never aliases the register file.
            let dst = unsafe { std::slice::from_raw_parts_mut(S::ptr_mut(m, ea0), len) };
            let data: &[u64] = if scalar_data {
                &[m.regs.s[src & 31]; 64][..vl]
            } else {
                &m.regs.v[src & 31][..vl]
            };
            if mask == full {
                E::store_run(data, dst);
            } else {
                for (i, (c, v)) in dst.chunks_exact_mut(E::E).zip(data).enumerate() {
                    if mask >> i & 1 != 0 {
                        c.copy_from_slice(&v.to_le_bytes()[..E::E]);
                    }
                }
            }
            return Flow::Next;
        }
    } else if op.b < 32 && op.c < 32 {
        // Uniform: every lane writes the same bytes; the highest active lane's data wins.
        if mask == 0 {
            return Flow::Next;
        }
        let mut one = [0u64; 64];
        compute_eas(&m.regs, op, 1, &mut one);
        let ea = one[0];
        if let Err(f) =
            check_lane::<E, S>(m, mask.trailing_zeros() as usize, ea, Access::Write, strict)
        {
            return Flow::Fault(f);
        }
        let last = 63 - mask.leading_zeros() as usize;
        let v = if scalar_data {
            m.regs.s[src & 31]
        } else {
            m.regs.v[src & 31][last]
        };
        // SAFETY: `[ea, ea + E)` passed the space's check (for writing) just above.
        unsafe { E::store(S::ptr_mut(m, ea), v) };
        return Flow::Next;
    }
    let mut eas = [0u64; 64];
    compute_eas(&m.regs, op, vl, &mut eas);
    if let Err(f) = check_lanes::<E, S>(m, &eas, mask, Access::Write, strict) {
        return Flow::Fault(f);
    }
    let mut bits = mask;
    while bits != 0 {
        let i = bits.trailing_zeros() as usize & 63;
        bits &= bits - 1;
        let v = if scalar_data {
            m.regs.s[src & 31]
        } else {
            m.regs.v[src & 31][i]
        };
        // SAFETY: lane i's `[ea, ea + E)` passed the space's check (for writing).
        unsafe { E::store(S::ptr_mut(m, eas[i]), v) };
    }
    Flow::Next
}
