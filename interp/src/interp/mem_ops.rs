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
//! 3. **general**: compute all EAs (reading every source before anything is written); if the
//!    active lanes' accesses all fit one span of at most 4 KiB that passes one check (and are
//!    aligned under strict alignment), that check stands for all of them; otherwise check
//!    every active lane in ascending order (misaligned, then out of range, then permission;
//!    the first faulting lane traps and nothing is written). Then perform the accesses in
//!    ascending lane order (so a higher lane's store bytes win on overlap).
//!
//! Guest memory shared with other threads ([`SharedMemSpace`], chosen by
//! [`Decoded::for_shared_memory`](super::Decoded::for_shared_memory) for launches on several
//! threads) takes the general path's checks and then moves each lane's bytes with one
//! assembly load or store (x86-64) or relaxed atomic byte accesses ([`racy_read`],
//! [`racy_write`]); a contiguous group with every lane active moves at once between guest
//! memory and a buffer on the stack ([`racy_copy`]): no slice is formed over memory another
//! thread may write, so a racing
//! guest program is a race between (what the abstract machine sees as) atomics, never
//! undefined behaviour (see `crate::memory`, "Sharing").

use super::decoded::{F_CONTIG, F_STRICT, Op};
use super::{ExecFn, FAULT, Fault};
use crate::isa::{Dir, Ext, MemSem};
use crate::machine::{Machine, MemFault, Regs, TrapKind, all_lanes};
use crate::memory::{Access, AccessFault};
use crate::program::Space;
use std::mem::MaybeUninit;
#[cfg(not(target_arch = "x86_64"))]
use std::sync::atomic::{AtomicU8, Ordering};

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
    /// Extend the low E bytes of `raw` into 64 bits, as [`Elem::load`] does.
    fn extend(raw: u64) -> u64;
    /// Write the low E bytes of `v` at `p`.
    ///
    /// # Safety
    /// `[p, p + E)` must be writable host memory.
    unsafe fn store(p: *mut u8, v: u64);
    /// Extend every element of `src` (`dst.len()` elements) into `dst` (portable code;
    /// inlined into the dispatching [`load_run`] and its AVX2 twin).
    fn load_run_portable(src: &[u8], dst: &mut [u64]);
    /// As `load_run_portable`, for the lanes set in `mask` only.
    fn load_run_masked_portable(src: &[u8], dst: &mut [u64], mask: u64);
    /// Write the low E bytes of every element of `src` to consecutive elements of `dst`.
    fn store_run_portable(src: &[u64], dst: &mut [u8]);
}

// The contiguous copy kernels, compiled twice: portable (the build's baseline) and with AVX2,
// chosen at run time. They move integers only, so the result is identical either way; AVX2
// just widens the extension/truncation (e.g. `vpmovsxdq`) from 2 to 4 lanes per instruction.

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn load_run_avx2<E: Elem>(src: &[u8], dst: &mut [u64]) {
    E::load_run_portable(src, dst)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn load_run_masked_avx2<E: Elem>(src: &[u8], dst: &mut [u64], mask: u64) {
    E::load_run_masked_portable(src, dst, mask)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn store_run_avx2<E: Elem>(src: &[u64], dst: &mut [u8]) {
    E::store_run_portable(src, dst)
}

/// Whether the AVX2 kernels may run (cached by the standard library after the first call).
#[inline(always)]
fn avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `dst[i] = extend(src element i)` for every lane of `dst`.
#[inline(always)]
fn load_run<E: Elem>(src: &[u8], dst: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { load_run_avx2::<E>(src, dst) };
    }
    E::load_run_portable(src, dst)
}

/// As [`load_run`], for the lanes in `mask`.
#[inline(always)]
fn load_run_masked<E: Elem>(src: &[u8], dst: &mut [u64], mask: u64) {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { load_run_masked_avx2::<E>(src, dst, mask) };
    }
    E::load_run_masked_portable(src, dst, mask)
}

/// Low E bytes of every element of `src`, consecutively into `dst`.
#[inline(always)]
fn store_run<E: Elem>(src: &[u64], dst: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { store_run_avx2::<E>(src, dst) };
    }
    E::store_run_portable(src, dst)
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
            fn extend(raw: u64) -> u64 {
                raw as $raw as $ext as u64
            }
            #[inline(always)]
            unsafe fn store(p: *mut u8, v: u64) {
                // SAFETY: the caller guarantees [p, p + E) is writable; unaligned writes are fine.
                unsafe { std::ptr::write_unaligned(p as *mut [u8; $n], (v as $raw).to_le_bytes()) }
            }
            #[inline(always)]
            fn load_run_portable(src: &[u8], dst: &mut [u64]) {
                for (d, c) in dst.iter_mut().zip(src.chunks_exact($n)) {
                    let b: [u8; $n] = c.try_into().unwrap_or([0; $n]);
                    *d = <$raw>::from_le_bytes(b) as $ext as u64;
                }
            }
            #[inline(always)]
            fn load_run_masked_portable(src: &[u8], dst: &mut [u64], mask: u64) {
                for (i, (d, c)) in dst.iter_mut().zip(src.chunks_exact($n)).enumerate() {
                    let b: [u8; $n] = c.try_into().unwrap_or([0; $n]);
                    let v = <$raw>::from_le_bytes(b) as $ext as u64;
                    if mask >> i & 1 != 0 {
                        *d = v;
                    }
                }
            }
            #[inline(always)]
            fn store_run_portable(src: &[u64], dst: &mut [u8]) {
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
    /// Whether other threads may access this space at the same time: every byte then moves
    /// with a relaxed atomic access ([`load_racy`], [`store_racy`]).
    const SHARED: bool = false;
    /// Whether accesses are checked for races with earlier groups ([`race_checked`]).
    const CHECKED: bool = false;
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

/// Guest memory (no `.local`), used as [`MemUse`] number `U` says.
pub(crate) struct Mem<const U: u8>;
/// Guest memory of this thread alone.
pub(crate) type MemSpace = Mem<{ MemUse::Own as u8 }>;
/// Guest memory that other threads use at the same time (a multi-threaded launch).
pub(crate) type SharedMemSpace = Mem<{ MemUse::Shared as u8 }>;
/// Guest memory under `--check-races` (one thread, reference order).
pub(crate) type CheckedMemSpace = Mem<{ MemUse::RaceChecked as u8 }>;
/// Tile space (`.local`).
pub(crate) struct TileSpace;

/// Read E bytes at `p` (little-endian, zero-extended) from memory other threads may write.
///
/// On x86-64 this is one `mov`/`movzx` of E bytes in inline assembly, on other hosts E relaxed
/// atomic byte loads. Either way it is, to the Rust abstract machine, a sequence of relaxed
/// atomic byte reads: an assembly block's effect must be one that Rust code could have, and
/// every value an x86 load can return under concurrent writes (some mix of old and new bytes)
/// is one that E relaxed byte loads could return. See `crate::memory`, "Sharing".
///
/// # Safety
/// `[p, p + E)` must be readable host memory that is only ever accessed this way (or by
/// compiled code, which is the same) while other threads may touch it.
#[inline(always)]
unsafe fn racy_read<E: Elem>(p: *const u8) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let v: u64;
        // SAFETY: the caller guarantees `[p, p + E)` is readable; the load reads exactly
        // those bytes, writes only `v`, and touches no stack or flags.
        unsafe {
            match E::E {
                1 => std::arch::asm!("movzx {v:e}, byte ptr [{p}]", p = in(reg) p, v = out(reg) v,
                    options(nostack, preserves_flags, readonly)),
                2 => std::arch::asm!("movzx {v:e}, word ptr [{p}]", p = in(reg) p, v = out(reg) v,
                    options(nostack, preserves_flags, readonly)),
                4 => std::arch::asm!("mov {v:e}, dword ptr [{p}]", p = in(reg) p, v = out(reg) v,
                    options(nostack, preserves_flags, readonly)),
                _ => std::arch::asm!("mov {v}, qword ptr [{p}]", p = in(reg) p, v = out(reg) v,
                    options(nostack, preserves_flags, readonly)),
            }
        }
        v
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut v = 0u64;
        for k in 0..E::E {
            // SAFETY: the caller guarantees `p + k` is valid; u8 has alignment 1; every
            // concurrent access to guest memory from Rust is atomic (see `crate::memory`).
            let b = unsafe { AtomicU8::from_ptr(p.add(k).cast_mut()) }.load(Ordering::Relaxed);
            v |= (b as u64) << (8 * k);
        }
        v
    }
}

/// Write the low E bytes of `v` at `p`, in memory other threads may access: one `mov` on
/// x86-64, else E relaxed atomic byte stores (see [`racy_read`] for why that is the same).
///
/// # Safety
/// As for [`racy_read`], for writing.
#[inline(always)]
unsafe fn racy_write<E: Elem>(p: *mut u8, v: u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller guarantees `[p, p + E)` is writable; the store writes exactly those
    // bytes and touches no stack or flags.
    unsafe {
        match E::E {
            1 => std::arch::asm!("mov byte ptr [{p}], {v:l}", p = in(reg) p, v = in(reg) v,
                options(nostack, preserves_flags)),
            2 => std::arch::asm!("mov word ptr [{p}], {v:x}", p = in(reg) p, v = in(reg) v,
                options(nostack, preserves_flags)),
            4 => std::arch::asm!("mov dword ptr [{p}], {v:e}", p = in(reg) p, v = in(reg) v,
                options(nostack, preserves_flags)),
            _ => std::arch::asm!("mov qword ptr [{p}], {v}", p = in(reg) p, v = in(reg) v,
                options(nostack, preserves_flags)),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for k in 0..E::E {
        // SAFETY: as in `racy_read`.
        unsafe { AtomicU8::from_ptr(p.add(k)) }.store((v >> (8 * k)) as u8, Ordering::Relaxed);
    }
}

/// Copy `len` bytes from `src` to `dst`, one side being memory other threads may access: on
/// x86-64 16-byte `movdqu` pairs for the whole 16-byte chunks, then the rest with
/// `rep movsb` (all in inline assembly: plain moves, which are the same to the Rust abstract
/// machine as `len` relaxed atomic byte accesses, see [`racy_read`]); elsewhere relaxed atomic
/// byte loads and stores. The contiguous group of a shared launch's interpreter moves this way
/// at once instead of lane by lane.
///
/// Why not one `rep movsb` for everything: in profiles of saxpy_g (64 groups, 64 MiB) on the
/// shared interpreter, half of `load_racy`'s samples sat on the `rep movsb` (a microcoded
/// string move, which does not let the out-of-order core overlap its cache misses with the
/// next instruction's as plain loads do), and the 512-byte zeroing of the bounce buffer was a
/// further memset per instruction. With 16-byte moves and no zeroing, the median time of
/// 2-thread launches over three interleaved runs went from 55.8 to 43.8 ms (saxpy_g) and from
/// 24.8 to 20.1 ms (copy_g) on a noisy 2-core host (`lanejit bench --groups 64 --threads 1,2
/// --sizes 64M --engine interp --kernel saxpy_g,copy_g`).
///
/// # Safety
/// `[src, src + len)` must be readable and `[dst, dst + len)` writable host memory that do
/// not overlap; guest memory among them must be accessed only this way (or by compiled code)
/// while other threads may touch it.
#[inline(always)]
unsafe fn racy_copy(dst: *mut u8, src: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let whole = len & !15;
        let mut k = 0;
        while k < whole {
            // SAFETY: `[src + k, src + k + 16)` and `[dst + k, dst + k + 16)` lie inside the
            // ranges the caller guarantees (`k + 16 <= len`); the block reads and writes only
            // those bytes (unaligned moves), uses one scratch xmm register (declared), and
            // touches no stack or flags.
            unsafe {
                std::arch::asm!(
                    "movdqu {x}, xmmword ptr [{s}]",
                    "movdqu xmmword ptr [{d}], {x}",
                    s = in(reg) src.add(k),
                    d = in(reg) dst.add(k),
                    x = out(xmm_reg) _,
                    options(nostack, preserves_flags)
                );
            }
            k += 16;
        }
        if whole < len {
            // SAFETY: the caller guarantees both ranges, of which this is the tail;
            // `rep movsb` reads `[src + whole, src + len)`, writes `[dst + whole, dst + len)`
            // (the direction flag is clear, as the ABI requires at every call and asm block),
            // changes only rcx, rsi and rdi (declared), and touches no stack or flags.
            unsafe {
                std::arch::asm!(
                    "rep movsb",
                    inout("rcx") len - whole => _,
                    inout("rsi") src.add(whole) => _,
                    inout("rdi") dst.add(whole) => _,
                    options(nostack, preserves_flags)
                );
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for k in 0..len {
        // SAFETY: as the caller guarantees; every concurrent access to guest memory from Rust
        // is atomic (see `crate::memory`).
        unsafe {
            let b = AtomicU8::from_ptr(src.add(k).cast_mut()).load(Ordering::Relaxed);
            AtomicU8::from_ptr(dst.add(k)).store(b, Ordering::Relaxed);
        }
    }
}

impl<const U: u8> SpaceT for Mem<U> {
    const SPACE: Space = Space::Memory;
    const SHARED: bool = U == MemUse::Shared as u8;
    const CHECKED: bool = U == MemUse::RaceChecked as u8;
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

/// How a machine's guest memory is used (tile space is always its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MemUse {
    /// By this thread alone.
    Own,
    /// By other threads at the same time.
    Shared,
    /// By this thread alone, every access checked for races (`Machine::races`).
    RaceChecked,
}

/// The handler of a memory instruction.
pub(crate) fn handler(ms: MemSem, local: bool, mem: MemUse) -> ExecFn {
    macro_rules! pick {
        ($f:ident, $e:ty) => {
            match (local, mem) {
                (true, _) => $f::<$e, TileSpace>,
                (false, MemUse::Own) => $f::<$e, MemSpace>,
                (false, MemUse::Shared) => $f::<$e, SharedMemSpace>,
                (false, MemUse::RaceChecked) => $f::<$e, CheckedMemSpace>,
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

/// Uninitialised room for every lane's EA ([`compute_eas`]): clearing a 512-byte array per
/// general access was 5% of the interpreter's time on the bench kernels.
pub(crate) type EaBuf = [MaybeUninit<u64>; 64];

/// A new [`EaBuf`].
#[inline(always)]
pub(crate) fn ea_buf() -> EaBuf {
    [MaybeUninit::uninit(); 64]
}

/// Every lane's EA (`vl` lanes, at most 64), from sources read before anything is written,
/// written into `buf`: its first `vl` entries, returned.
#[inline(always)]
pub(crate) fn compute_eas<'b>(r: &Regs, op: &Op, vl: usize, buf: &'b mut EaBuf) -> &'b [u64] {
    let vl = vl.min(64);
    fill_eas(r, op, &mut buf[..vl]);
    // SAFETY: `fill_eas` wrote each of the first `vl` entries (every branch writes every
    // element of `out`), so they are initialised `u64`s, and `MaybeUninit<u64>` has the
    // layout of `u64`.
    unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u64>(), vl) }
}

/// Write every element of `out` (one per lane) with its lane's EA.
#[inline(always)]
fn fill_eas(r: &Regs, op: &Op, out: &mut [MaybeUninit<u64>]) {
    let k = konst(r, op);
    let sh = op.sh as u32;
    let (b, c) = (op.b as usize, op.c as usize);
    let lc0 = r.lc0base;
    if b < 32 {
        let base = r.s[b].wrapping_add(k);
        if c < 32 {
            let ea = base.wrapping_add(r.s[c].wrapping_shl(sh));
            for o in out.iter_mut() {
                o.write(ea);
            }
        } else if c == 64 {
            for (i, o) in out.iter_mut().enumerate() {
                o.write(base.wrapping_add(lc0.wrapping_add(i as u64).wrapping_shl(sh)));
            }
        } else {
            let rv = &r.v[c & 31];
            for (o, x) in out.iter_mut().zip(rv) {
                o.write(base.wrapping_add(x.wrapping_shl(sh)));
            }
        }
    } else {
        let lv = &r.v[b & 31];
        if c < 32 {
            let off = r.s[c].wrapping_shl(sh).wrapping_add(k);
            for (o, l) in out.iter_mut().zip(lv) {
                o.write(l.wrapping_add(off));
            }
        } else if c == 64 {
            for (i, (o, l)) in out.iter_mut().zip(lv).enumerate() {
                let x = lc0.wrapping_add(i as u64).wrapping_shl(sh);
                o.write(l.wrapping_add(x).wrapping_add(k));
            }
        } else {
            let rv = &r.v[c & 31];
            for ((o, l), x) in out.iter_mut().zip(lv).zip(rv) {
                o.write(l.wrapping_add(x.wrapping_shl(sh)).wrapping_add(k));
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
    eas: &[u64],
    mask: u64,
    access: Access,
    strict: bool,
) -> Result<(), Fault> {
    let mut bits = mask;
    while bits != 0 {
        let i = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        // `mask` holds lanes below VL only, the lanes `eas` has.
        check_lane::<E, S>(m, i, eas[i], access, strict)?;
    }
    Ok(())
}

/// Whether one range check can stand in for the per-lane checks: every active lane's access
/// lies in `[lo, hi + E)` with `hi - lo + E <= 4096` (so `check` accepts it), that range passes,
/// and (under strict alignment) every active EA is aligned. `false` sends the caller to the
/// precise per-lane loop, which finds the lowest faulting lane.
#[inline(always)]
fn span_ok<E: Elem, S: SpaceT>(
    m: &Machine,
    eas: &[u64],
    mask: u64,
    access: Access,
    strict: bool,
) -> bool {
    let (mut lo, mut hi, mut any) = (u64::MAX, 0u64, 0u64);
    for (i, &ea) in eas.iter().enumerate() {
        let active = mask >> i & 1 != 0;
        lo = lo.min(if active { ea } else { u64::MAX });
        hi = hi.max(if active { ea } else { 0 });
        any |= if active { ea } else { 0 };
    }
    if mask == 0 || (strict && any & (E::E as u64 - 1) != 0) {
        return mask == 0;
    }
    let span = hi - lo; // hi >= lo: some lane is active
    span <= 4096 - E::E as u64 && S::check(m, lo, span + E::E as u64, access).is_ok()
}

/// Whether the lane EAs `eas` are consecutive elements (`eas[i] = eas[0] + i*E`): a general
/// access that is contiguous after all (a vector of lane addresses built from `V.LC0`, the
/// stencils' and FIRs' `V.LWI.U [vN + imm]`), which then moves as one run instead of lane by
/// lane (the run-time test of SwiftShader's `SIMD::Load`): fir8_vaddr -8% interpreted
/// instructions (callgrind), stencil5_vaddr -8%. Lanes 0 and 1 are compared first, so that a
/// gather pays two compares, not a pass over its lanes (which cost gather32 and spmv_csr
/// 7-11% of their interpreted instructions; now about 1%).
#[inline(always)]
fn consecutive<E: Elem>(eas: &[u64]) -> bool {
    let base = eas[0];
    let at = |i: usize| base.wrapping_add((i as u64) << E::LOG2E);
    eas.len() < 2
        || (eas[1] == at(1)
            && eas
                .iter()
                .enumerate()
                .fold(0, |d, (i, &ea)| d | (ea ^ at(i)))
                == 0)
}

/// The state every memory handler starts from: `(vl, all-lanes mask, active mask, strict)`.
#[inline(always)]
fn lanes(m: &Machine, op: &Op) -> (usize, u64, u64, bool) {
    // `Machine::new` only accepts VL 1..=64; clamping keeps every range check non-empty anyway.
    let vl = m.vl().clamp(1, 64);
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

/// The EA of a uniform access (scalar SrcL and SrcR: every lane's EA is the same).
#[inline(always)]
fn uniform_ea(r: &Regs, op: &Op) -> u64 {
    r.s[op.b as usize & 31]
        .wrapping_add(r.s[op.c as usize & 31].wrapping_shl(op.sh as u32))
        .wrapping_add(konst(r, op))
}

/// The one-check fast path of a contiguous access with every lane active: `(VL, EA of lane
/// 0)` when the instruction is contiguous, its mask full and the whole group passes the
/// space's check for `access` (and strict alignment); else `None` (the per-lane paths).
#[inline(always)]
fn full_contig<E: Elem, S: SpaceT>(m: &Machine, op: &Op, access: Access) -> Option<(usize, u64)> {
    if op.flags & F_CONTIG == 0 {
        return None;
    }
    let (vl, full, mask, strict) = lanes(m, op);
    if mask != full {
        return None;
    }
    let ea0 = contig_ea0(&m.regs, op);
    contig_ok::<E, S>(m, ea0, vl, access, strict).then_some((vl, ea0))
}

/// [`full_contig`] for a store of vector data (scalar data takes the general path).
#[inline(always)]
fn full_contig_vector<E: Elem, S: SpaceT>(m: &Machine, op: &Op) -> Option<(usize, u64)> {
    if op.a < 32 {
        return None;
    }
    full_contig::<E, S>(m, op, Access::Write)
}

/// Every load form: `Dst[i] = extend(space[EA(i) .. EA(i) + E])` for active lanes.
///
/// This is the contiguous all-lanes-active fast path only, kept small so it stays cheap to
/// enter; everything else goes to [`load_general`].
pub(crate) fn load<E: Elem, S: SpaceT>(m: &mut Machine, op: &Op, out: &mut Fault) -> u32 {
    if S::SHARED {
        return load_racy::<E, S>(m, op, out);
    }
    if S::CHECKED {
        return race_checked::<E>(m, op, out, Access::Read, load::<E, MemSpace>);
    }
    if let Some((vl, ea0)) = full_contig::<E, S>(m, op, Access::Read) {
        // SAFETY: `[ea0, ea0 + VL*E)` passed the space's check, so it lies inside the host
        // backing of that space, which never aliases the register file.
        let src = unsafe { std::slice::from_raw_parts(S::ptr(m, ea0), vl << E::LOG2E) };
        load_run::<E>(src, &mut m.regs.v[op.a as usize & 31][..vl]);
        return op.next;
    }
    load_general::<E, S>(m, op, out)
}

/// The masked contiguous, uniform and general per-lane load paths.
#[inline(never)]
fn load_general<E: Elem, S: SpaceT>(m: &mut Machine, op: &Op, out: &mut Fault) -> u32 {
    let (vl, full, mask, strict) = lanes(m, op);
    let dst = op.a as usize & 31;
    if op.flags & F_CONTIG != 0 {
        // Contiguous with some lanes inactive: the group check still covers every lane.
        let ea0 = contig_ea0(&m.regs, op);
        if contig_ok::<E, S>(m, ea0, vl, Access::Read, strict) {
            // SAFETY: `[ea0, ea0 + VL*E)` passed the space's check (see `load`).
            let src = unsafe { std::slice::from_raw_parts(S::ptr(m, ea0), vl << E::LOG2E) };
            load_run_masked::<E>(src, &mut m.regs.v[dst][..vl], mask);
            return op.next;
        }
    }
    if op.b < 32 && op.c < 32 {
        // Uniform: every lane has the same EA; the lowest active lane reports a fault.
        if mask == 0 {
            return op.next;
        }
        let ea = uniform_ea(&m.regs, op);
        let lane = mask.trailing_zeros() as usize;
        if let Err(f) = check_lane::<E, S>(m, lane, ea, Access::Read, strict) {
            *out = f;
            return FAULT;
        }
        // SAFETY: `[ea, ea + E)` passed the space's check just above.
        let v = unsafe { E::load(S::ptr(m, ea)) };
        for (i, x) in m.regs.v[dst][..vl].iter_mut().enumerate() {
            if mask >> i & 1 != 0 {
                *x = v;
            }
        }
        return op.next;
    }
    let mut buf = ea_buf();
    let eas = compute_eas(&m.regs, op, vl, &mut buf);
    if !span_ok::<E, S>(m, eas, mask, Access::Read, strict) {
        if let Err(f) = check_lanes::<E, S>(m, eas, mask, Access::Read, strict) {
            *out = f;
            return FAULT;
        }
    } else if mask == full && consecutive::<E>(eas) {
        // SAFETY: the lanes read `[eas[0], eas[0] + VL*E)`, which is the span `span_ok`
        // just checked (its lowest lane is lane 0, its highest lane VL-1).
        let src = unsafe { std::slice::from_raw_parts(S::ptr(m, eas[0]), vl << E::LOG2E) };
        load_run::<E>(src, &mut m.regs.v[dst][..vl]);
        return op.next;
    }
    // Every source (a vector SrcL/SrcR may be Dst itself) was read into `eas` above.
    let mut bits = mask;
    while bits != 0 {
        let i = bits.trailing_zeros() as usize & 63;
        bits &= bits - 1;
        // SAFETY: lane i's `[ea, ea + E)` passed the space's check: its own in
        // `check_lanes`, or the span covering every active lane in `span_ok`.
        m.regs.v[dst][i] = unsafe { E::load(S::ptr(m, eas[i])) };
    }
    op.next
}

/// Every store form: `space[EA(i) .. EA(i) + E] = low E bytes of SrcD(i)` for active lanes,
/// in ascending lane order. Contiguous all-lanes-active fast path here, the rest in
/// [`store_general`].
pub(crate) fn store<E: Elem, S: SpaceT>(m: &mut Machine, op: &Op, out: &mut Fault) -> u32 {
    if S::SHARED {
        return store_racy::<E, S>(m, op, out);
    }
    if S::CHECKED {
        return race_checked::<E>(m, op, out, Access::Write, store::<E, MemSpace>);
    }
    if let Some((vl, ea0)) = full_contig_vector::<E, S>(m, op) {
        let len = vl << E::LOG2E;
        // SAFETY: `[ea0, ea0 + len)` passed the space's check (for writing), so it lies
        // inside the host backing of that space, which never aliases the register file.
        let dst = unsafe { std::slice::from_raw_parts_mut(S::ptr_mut(m, ea0), len) };
        store_run::<E>(&m.regs.v[op.a as usize & 31][..vl], dst);
        return op.next;
    }
    store_general::<E, S>(m, op, out)
}

/// The masked or scalar-data contiguous, uniform and general per-lane store paths.
#[inline(never)]
fn store_general<E: Elem, S: SpaceT>(m: &mut Machine, op: &Op, out: &mut Fault) -> u32 {
    let (vl, full, mask, strict) = lanes(m, op);
    let src = op.a as usize;
    let scalar_data = src < 32;
    if op.flags & F_CONTIG != 0 {
        // Contiguous, masked or with scalar data: the group check still covers every lane.
        let ea0 = contig_ea0(&m.regs, op);
        if contig_ok::<E, S>(m, ea0, vl, Access::Write, strict) {
            let len = vl << E::LOG2E;
            // SAFETY: `[ea0, ea0 + len)` passed the space's check (for writing), see `store`.
            let dst = unsafe { std::slice::from_raw_parts_mut(S::ptr_mut(m, ea0), len) };
            let r = &m.regs;
            for (i, c) in dst.chunks_exact_mut(E::E).enumerate() {
                if mask >> i & 1 != 0 {
                    let v = if scalar_data {
                        r.s[src & 31]
                    } else {
                        r.v[src & 31][i]
                    };
                    c.copy_from_slice(&v.to_le_bytes()[..E::E]);
                }
            }
            return op.next;
        }
    }
    if op.b < 32 && op.c < 32 {
        // Uniform: every lane writes the same bytes; the highest active lane's data wins.
        if mask == 0 {
            return op.next;
        }
        let ea = uniform_ea(&m.regs, op);
        let lane = mask.trailing_zeros() as usize;
        if let Err(f) = check_lane::<E, S>(m, lane, ea, Access::Write, strict) {
            *out = f;
            return FAULT;
        }
        let last = 63 - mask.leading_zeros() as usize;
        let v = if scalar_data {
            m.regs.s[src & 31]
        } else {
            m.regs.v[src & 31][last]
        };
        // SAFETY: `[ea, ea + E)` passed the space's check (for writing) just above.
        unsafe { E::store(S::ptr_mut(m, ea), v) };
        return op.next;
    }
    let mut buf = ea_buf();
    let eas = compute_eas(&m.regs, op, vl, &mut buf);
    if !span_ok::<E, S>(m, eas, mask, Access::Write, strict) {
        if let Err(f) = check_lanes::<E, S>(m, eas, mask, Access::Write, strict) {
            *out = f;
            return FAULT;
        }
    } else if mask == full && !scalar_data && consecutive::<E>(eas) {
        let len = vl << E::LOG2E;
        // SAFETY: the lanes write `[eas[0], eas[0] + len)`, the span `span_ok` just checked
        // for writing (lane 0 lowest, lane VL-1 highest), inside the host backing of the
        // space, which never aliases the register file.
        let dst = unsafe { std::slice::from_raw_parts_mut(S::ptr_mut(m, eas[0]), len) };
        store_run::<E>(&m.regs.v[src & 31][..vl], dst);
        return op.next;
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
        // SAFETY: lane i's `[ea, ea + E)` passed the space's check (for writing): its own
        // in `check_lanes`, or the span covering every active lane in `span_ok`.
        unsafe { E::store(S::ptr_mut(m, eas[i]), v) };
    }
    op.next
}

/// Every active lane's EA (sources read first), checked as the general path checks them.
#[inline(always)]
fn checked_eas<'b, E: Elem, S: SpaceT>(
    m: &Machine,
    op: &Op,
    access: Access,
    buf: &'b mut EaBuf,
) -> Result<(&'b [u64], u64), Fault> {
    let (vl, _, mask, strict) = lanes(m, op);
    let eas = compute_eas(&m.regs, op, vl, buf);
    if !span_ok::<E, S>(m, eas, mask, access, strict) {
        check_lanes::<E, S>(m, eas, mask, access, strict)?;
    }
    Ok((eas, mask))
}

/// The host address of every active lane of an access to memory shared with other threads,
/// after its checks (a contiguous group's one range check, else the general path's), and the
/// active lanes; or the fault.
#[inline(always)]
fn racy_lanes<E: Elem, S: SpaceT>(
    m: &mut Machine,
    op: &Op,
    access: Access,
    ptrs: &mut [*mut u8; 64],
) -> Result<u64, Fault> {
    if op.flags & F_CONTIG != 0 {
        // Contiguous: one check covers the group (as in `load`), lane i at ea0 + i*E.
        let (vl, _, mask, strict) = lanes(m, op);
        let ea0 = contig_ea0(&m.regs, op);
        if contig_ok::<E, S>(m, ea0, vl, access, strict) {
            // SAFETY: `[ea0, ea0 + VL*E)` passed the space's check for `access`.
            let base = unsafe { S::ptr_mut(m, ea0) };
            for (i, p) in ptrs[..vl].iter_mut().enumerate() {
                // Inside the checked range: `i * E < VL * E`.
                *p = base.wrapping_add(i << E::LOG2E);
            }
            return Ok(mask);
        }
    }
    let mut buf = ea_buf();
    let (eas, mask) = checked_eas::<E, S>(m, op, access, &mut buf)?;
    let mut bits = mask;
    while bits != 0 {
        let i = bits.trailing_zeros() as usize & 63;
        bits &= bits - 1;
        // SAFETY: lane i's `[ea, ea + E)` passed the space's check in `checked_eas`.
        ptrs[i] = unsafe { S::ptr_mut(m, eas[i]) };
    }
    Ok(mask)
}

/// A load from memory shared with other threads: the usual checks, then one racy read per
/// active lane.
#[inline(never)]
fn load_racy<E: Elem, S: SpaceT>(m: &mut Machine, op: &Op, out: &mut Fault) -> u32 {
    if let Some((vl, ea0)) = full_contig::<E, S>(m, op, Access::Read) {
        // Contiguous with every lane active: the group's bytes at once.
        let len = vl << E::LOG2E;
        // Not zeroed first: `racy_copy` writes the `len` bytes that are then read.
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 512];
        // SAFETY: `[ea0, ea0 + len)` passed the space's check; `buf` holds 64 lanes of at
        // most 8 bytes; guest memory is accessed only racily during a shared launch. The
        // copy initialises `buf[..len]`, the only part the slice covers.
        let bytes = unsafe {
            racy_copy(buf.as_mut_ptr().cast(), S::ptr(m, ea0), len);
            std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), len)
        };
        load_run::<E>(bytes, &mut m.regs.v[op.a as usize & 31][..vl]);
        return op.next;
    }
    let mut ptrs = [std::ptr::null_mut(); 64];
    let mask = match racy_lanes::<E, S>(m, op, Access::Read, &mut ptrs) {
        Ok(mask) => mask,
        Err(f) => {
            *out = f;
            return FAULT;
        }
    };
    let dst = op.a as usize & 31;
    let mut bits = mask;
    while bits != 0 {
        let i = bits.trailing_zeros() as usize & 63;
        bits &= bits - 1;
        // SAFETY: lane i's `[p, p + E)` passed the space's check in `racy_lanes`; guest
        // memory is accessed only this way (or by compiled code) during a shared launch.
        let raw = unsafe { racy_read::<E>(ptrs[i]) };
        m.regs.v[dst][i] = E::extend(raw);
    }
    op.next
}

/// A store to memory shared with other threads: the usual checks, then one racy write per
/// active lane, in ascending lane order.
#[inline(never)]
fn store_racy<E: Elem, S: SpaceT>(m: &mut Machine, op: &Op, out: &mut Fault) -> u32 {
    if let Some((vl, ea0)) = full_contig_vector::<E, S>(m, op) {
        // Contiguous vector data with every lane active: the group's bytes at once.
        let len = vl << E::LOG2E;
        // Only the `len` bytes used are zeroed (then overwritten), not all 512.
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 512];
        // SAFETY: `len <= 512`; the bytes are initialised by `write_bytes` before the slice
        // over them is formed.
        let bytes = unsafe {
            std::ptr::write_bytes(buf.as_mut_ptr(), 0, len);
            std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), len)
        };
        store_run::<E>(&m.regs.v[op.a as usize & 31][..vl], bytes);
        // SAFETY: `[ea0, ea0 + len)` passed the space's check (for writing); guest memory is
        // accessed only racily during a shared launch.
        unsafe { racy_copy(S::ptr_mut(m, ea0), bytes.as_ptr(), len) };
        return op.next;
    }
    let mut ptrs = [std::ptr::null_mut(); 64];
    let mask = match racy_lanes::<E, S>(m, op, Access::Write, &mut ptrs) {
        Ok(mask) => mask,
        Err(f) => {
            *out = f;
            return FAULT;
        }
    };
    let src = op.a as usize;
    let mut bits = mask;
    while bits != 0 {
        let i = bits.trailing_zeros() as usize & 63;
        bits &= bits - 1;
        let v = if src < 32 {
            m.regs.s[src & 31]
        } else {
            m.regs.v[src & 31][i]
        };
        // SAFETY: lane i's `[p, p + E)` passed the space's check (for writing) in
        // `racy_lanes`; guest memory is accessed only this way (or by compiled code) during a
        // shared launch.
        unsafe { racy_write::<E>(ptrs[i], v) };
    }
    op.next
}

/// A memory access under `--check-races`: the instruction's own faults first (an instruction
/// that traps for another reason is not an access), then the race check against the shadow
/// in `m.races` (a race traps `data_race` at the lowest racing lane and its lowest racing
/// byte, writing nothing), then the access itself (`run`, the unchecked handler), then its
/// record in the shadow. A contiguous access with every lane active is checked and recorded
/// as one byte range.
#[inline(never)]
fn race_checked<E: Elem>(
    m: &mut Machine,
    op: &Op,
    out: &mut Fault,
    access: Access,
    run: ExecFn,
) -> u32 {
    let Some(mut shadow) = m.races.take() else {
        return run(m, op, out);
    };
    // The lanes' EAs in uninitialised memory (`ea_buf`); a contiguous group needs lane 0's.
    let mut buf = ea_buf();
    let contig = full_contig::<E, MemSpace>(m, op, access);
    let contiguous = contig.is_some();
    let (eas, vl, mask): (&[u64], usize, u64) = if let Some((vl, ea0)) = contig {
        buf[0].write(ea0);
        // SAFETY: entry 0 was just written, and `MaybeUninit<u64>` has `u64`'s layout.
        let first = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u64>(), 1) };
        (first, vl, all_lanes(vl as u32))
    } else {
        match checked_eas::<E, MemSpace>(m, op, access, &mut buf) {
            Ok((lane_eas, mask)) => (lane_eas, lane_eas.len(), mask),
            Err(f) => {
                m.races = Some(shadow);
                *out = f;
                return FAULT;
            }
        }
    };
    // A memory op is one word: its pc is its index times 8.
    let pc = u64::from(op.next.wrapping_sub(1)) * 8;
    if contiguous {
        // One page no earlier group touched in a racing way: one lookup, no race to find.
        let len = (E::E * vl) as u64;
        if let Some(i) = shadow.quiet_page(eas[0], len, access, pc) {
            let next = run(m, op, out);
            if next != FAULT {
                shadow.record_in(i, eas[0], len, access, pc);
            }
            m.races = Some(shadow);
            return next;
        }
    }
    let lanes = crate::races::Lanes {
        eas,
        vl,
        mask,
        width: E::E as u64,
        contiguous,
    };
    let next = match shadow.first_race(&lanes, access, pc) {
        Some((lane, byte)) => {
            *out = fault(TrapKind::DataRace, lane, byte, Space::Memory, access);
            FAULT
        }
        None => {
            let next = run(m, op, out);
            if next != FAULT {
                shadow.record(&lanes, access, pc);
            }
            next
        }
    };
    m.races = Some(shadow);
    next
}
