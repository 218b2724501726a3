//! The calling convention between the dispatcher and compiled regions, and the Rust helpers
//! compiled code calls on its slow paths.
//!
//! A compiled region is `extern "C" fn(*mut JitCtx) -> u64`. On entry `JitCtx` holds the
//! register file pointer, raw views of guest memory and tile space, and the instruction budget
//! of this call. On return every guest register the region may have changed has been written
//! back, `retired` holds the number of instructions retired by the call and `next_pc` the pc to
//! continue at; the return value is [`Status::Next`] (continue dispatching at `next_pc`),
//! [`Status::Interp`] (the instruction at `next_pc` must be executed by the interpreter: it is
//! declined, a check failed, or the budget does not cover the next step) or
//! [`Status::Partial`] (an `ENDLOOP` loop's next iteration runs under a partial mask: run the
//! straight-line form of the body at `next_pc`).
//!
//! Regions chain: before returning [`Status::Next`] or [`Status::Partial`], a region calls the
//! successor's code itself when `JitCtx::chain` has it and `chain_left` is not 0, and returns
//! what that returns. Chained regions share the context: each adds its instructions to
//! `retired` (the dispatcher starts it at 0) and takes its budget as `budget - retired`.
//!
//! Helpers never trap: they report failure and compiled code exits to the interpreter, which
//! re-executes the instruction to produce the precise trap.
//!
//! # The helpers that remain, and why
//!
//! Loop bodies and hot straight-line code lower every vector ALU, FP, move, lane-id,
//! reduction and memory instruction in line (`translate`). A helper runs only where in-line
//! code would not pay for itself:
//!
//! * [`lj_vop`], [`lj_redsum`], [`lj_load_ea`], [`lj_store_ea`], [`lj_load_contig`],
//!   [`lj_store_contig`]: the *first* compile of a straight-line region, which runs a handful
//!   of times before its hot recompile (and the straight form of a loop body too large for the
//!   compile budget, `translate::plan`): one call per instruction compiles an order of
//!   magnitude faster than its in-line form.
//! * [`lj_load`], [`lj_store`]: the slow path of an in-line access whose check failed (a lane
//!   faults, the space has no in-line view, a partial mask on a gather or scatter), to find
//!   out whether it really faults; a fault exits to the interpreter.
//! * [`lj_fma`]: `V.FMA.S`/`.D` on a host without a fused multiply-add instruction (never on
//!   this project's machines): the software `mul_add` keeps results exact.
//! * [`lj_copy`]: the bulk `memcpy` of a copy loop's proved iterations (a call is the fast
//!   path there).
//! * [`lj_fill`]: a loop's stretch header whose span check found its first page in a chunk
//!   of guest memory's page tables not filled yet (`Memory::fill_at`: tables are filled 16
//!   MiB at a time on first use, and compiled code reads a chunk not filled as unmapped):
//!   fills it, once per chunk and run, and the loop enters its code again.

use lanejit_interp::interp;
use lanejit_interp::isa::{FpOp, FpWidth, Sem};
use lanejit_interp::machine::Regs;
use lanejit_interp::memory::{MemView, Memory, PERM_R, PERM_W, TileView};
use lanejit_interp::program::{PAGE_SIZE, TILE_GRANULE};
use std::sync::atomic::{AtomicU64, Ordering};

/// How a compiled region exits: the word it returns (and passes along a chain).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Status {
    /// Continue dispatching at `next_pc`.
    Next = 0,
    /// Execute the instruction at `next_pc` with the interpreter.
    Interp = 1,
    /// The loop whose body starts at `next_pc` reached an iteration with a partial mask (its
    /// tail): [`crate::Jit::run`] continues in the straight-line form of the body, compiled on
    /// first need, which blends the masked lanes and ends with the `ENDLOOP`.
    Partial = 2,
}

impl Status {
    /// The word compiled code returns for this exit.
    pub const fn word(self) -> u64 {
        self as u64
    }

    /// The exit a returned word stands for (compiled code returns only the words of
    /// [`Status`]; anything else would be a translator bug, taken as [`Status::Interp`], which
    /// is always safe: the interpreter goes on from `next_pc`).
    pub const fn from_word(w: u64) -> Status {
        match w {
            0 => Status::Next,
            2 => Status::Partial,
            _ => Status::Interp,
        }
    }
}

/// The context block passed to compiled code.
#[repr(C)]
#[derive(Debug)]
pub struct JitCtx {
    /// The guest register file.
    pub regs: *mut Regs,
    /// Guest memory.
    pub mem: MemView,
    /// Tile space.
    pub tile: TileView,
    /// Instructions this call may retire.
    pub budget: u64,
    /// In: 0. Out: instructions retired by this call (every chained region adds its own).
    pub retired: u64,
    /// Out: where to continue.
    pub next_pc: u64,
    /// Region chaining: per instruction index `i = pc / 8`, at `2 i` the address of the
    /// compiled region an exit with [`Status::Next`] to that pc may call directly, at `2 i + 1`
    /// that of the straight form of the loop body there, for an exit with [`Status::Partial`];
    /// 0 when there is none (see [`CHAIN_DEPTH`]).
    pub chain: *const u64,
    /// Chained calls still allowed below this one.
    pub chain_left: u64,
    /// [`HELPERS`]: compiled code loads a helper's address from this table rather than
    /// embedding it, so its bytes do not depend on where this process placed the helpers (the
    /// on-disk code cache, `diskcache`, reuses them in other processes).
    pub helpers: *const HelperAddr,
    /// The words a loop's baseline code shares with a tiered run's compiler thread.
    pub tier: *const TierWords,
    /// Guest memory itself, for [`lj_fill`].
    pub memory: *const Memory,
}

/// What a loop's baseline code (compiled to be replaced, `translate::TxConfig::yields`)
/// shares with the tiered run's compiler thread: at every stretch header (at most
/// `translate::YIELD_SPAN_LANES` lanes apart; a nest's at every row) it publishes where it
/// stands, and it leaves for the dispatcher, with the state exact, once the compiler thread
/// names its region here to put its optimised code in its place (which needs the run out of
/// compiled code). Only timing depends on these words, never a result.
#[repr(C)]
#[derive(Debug, Default)]
pub struct TierWords {
    /// The region (its pc plus one) whose baseline is to leave at its next header; 0: none.
    pub leave: AtomicU64,
    /// Written at a single loop's stretch header: its region (pc plus one), LC0BASE and the
    /// trip count, from which the compiler thread measures how far the loop has to go.
    pub at: AtomicU64,
    /// See [`TierWords::at`].
    pub lc0: AtomicU64,
    /// See [`TierWords::at`].
    pub trip: AtomicU64,
}

impl TierWords {
    /// Where a single loop's baseline code stood at its last stretch header: its region's pc,
    /// LC0BASE and trip count (`None` before any).
    pub fn progress(&self) -> Option<(u64, u64, u64)> {
        let at = self.at.load(Ordering::Relaxed).checked_sub(1)?;
        Some((
            at,
            self.lc0.load(Ordering::Relaxed),
            self.trip.load(Ordering::Relaxed),
        ))
    }
}

/// A helper's address in [`HELPERS`].
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct HelperAddr(pub *const ());

// SAFETY: the addresses are of functions, immutable and valid for the whole process; sharing
// them between threads shares nothing mutable.
unsafe impl Sync for HelperAddr {}

/// The helpers compiled code calls, as indices into [`HELPERS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum HelperFn {
    /// [`lj_load_contig`].
    LoadContig,
    /// [`lj_load`].
    Load,
    /// [`lj_load_ea`].
    LoadEa,
    /// [`lj_store_contig`].
    StoreContig,
    /// [`lj_store`].
    Store,
    /// [`lj_store_ea`].
    StoreEa,
    /// [`lj_vop`].
    Vop,
    /// [`lj_fma`].
    Fma,
    /// [`lj_redsum`].
    Redsum,
    /// [`lj_copy`].
    Copy,
    /// [`lj_fill`].
    Fill,
}

/// The address of every helper, in [`HelperFn`] order.
pub static HELPERS: [HelperAddr; 11] = [
    HelperAddr(lj_load_contig as *const ()),
    HelperAddr(lj_load as *const ()),
    HelperAddr(lj_load_ea as *const ()),
    HelperAddr(lj_store_contig as *const ()),
    HelperAddr(lj_store as *const ()),
    HelperAddr(lj_store_ea as *const ()),
    HelperAddr(lj_vop as *const ()),
    HelperAddr(lj_fma as *const ()),
    HelperAddr(lj_redsum as *const ()),
    HelperAddr(lj_copy as *const ()),
    HelperAddr(lj_fill as *const ()),
];

/// How deep compiled regions may call their successors directly before returning to the
/// dispatcher: each chained call is a nested call (at most a few KiB of stack per region).
pub const CHAIN_DEPTH: u64 = 16;

/// Field offsets of [`JitCtx`], for the translator.
pub mod off {
    use super::JitCtx;
    use std::mem::offset_of;
    /// `regs`.
    pub const REGS: i32 = offset_of!(JitCtx, regs) as i32;
    /// `mem.base`.
    pub const MEM_BASE: i32 = offset_of!(JitCtx, mem) as i32;
    /// `mem.extent`.
    pub const MEM_EXTENT: i32 = (offset_of!(JitCtx, mem) + 8) as i32;
    /// `mem.perms`.
    pub const MEM_PERMS: i32 = (offset_of!(JitCtx, mem) + 16) as i32;
    /// `mem.run_r`.
    pub const MEM_RUN_R: i32 = (offset_of!(JitCtx, mem) + 24) as i32;
    /// `mem.run_w`.
    pub const MEM_RUN_W: i32 = (offset_of!(JitCtx, mem) + 32) as i32;
    /// `tile.base`.
    pub const TILE_BASE: i32 = offset_of!(JitCtx, tile) as i32;
    /// `tile.size`.
    pub const TILE_SIZE: i32 = (offset_of!(JitCtx, tile) + 8) as i32;
    /// `tile.perms`.
    pub const TILE_PERMS: i32 = (offset_of!(JitCtx, tile) + 16) as i32;
    /// `tile.run_r`.
    pub const TILE_RUN_R: i32 = (offset_of!(JitCtx, tile) + 24) as i32;
    /// `tile.run_w`.
    pub const TILE_RUN_W: i32 = (offset_of!(JitCtx, tile) + 32) as i32;
    /// `chain`.
    pub const CHAIN: i32 = offset_of!(JitCtx, chain) as i32;
    /// `chain_left`.
    pub const CHAIN_LEFT: i32 = offset_of!(JitCtx, chain_left) as i32;
    /// `budget`.
    pub const BUDGET: i32 = offset_of!(JitCtx, budget) as i32;
    /// `retired`.
    pub const RETIRED: i32 = offset_of!(JitCtx, retired) as i32;
    /// `next_pc`.
    pub const NEXT_PC: i32 = offset_of!(JitCtx, next_pc) as i32;
    /// `helpers`.
    pub const HELPERS: i32 = offset_of!(JitCtx, helpers) as i32;
    /// `tier`.
    pub const TIER: i32 = offset_of!(JitCtx, tier) as i32;
    /// `memory`.
    pub const MEMORY: i32 = offset_of!(JitCtx, memory) as i32;
    /// [`super::TierWords::leave`].
    pub const TIER_LEAVE: i32 = offset_of!(super::TierWords, leave) as i32;
    /// [`super::TierWords::at`].
    pub const TIER_AT: i32 = offset_of!(super::TierWords, at) as i32;
    /// [`super::TierWords::lc0`].
    pub const TIER_LC0: i32 = offset_of!(super::TierWords, lc0) as i32;
    /// [`super::TierWords::trip`].
    pub const TIER_TRIP: i32 = offset_of!(super::TierWords, trip) as i32;
}

const _: () = {
    assert!(std::mem::offset_of!(MemView, base) == 0);
    assert!(std::mem::offset_of!(MemView, extent) == 8);
    assert!(std::mem::offset_of!(MemView, perms) == 16);
    assert!(std::mem::offset_of!(MemView, run_r) == 24);
    assert!(std::mem::offset_of!(MemView, run_w) == 32);
    assert!(std::mem::offset_of!(TileView, base) == 0);
    assert!(std::mem::offset_of!(TileView, size) == 8);
    assert!(std::mem::offset_of!(TileView, perms) == 16);
    assert!(std::mem::offset_of!(TileView, run_r) == 24);
    assert!(std::mem::offset_of!(TileView, run_w) == 32);
};

/// Access-kind word passed to the memory helpers: bits 0..2 log2 E, bit 2 zero-extend,
/// bit 3 sign-extend, bit 4 tile space, bit 5 check alignment.
pub mod kind {
    /// Zero-extend loaded data.
    pub const ZEXT: u32 = 1 << 2;
    /// Sign-extend loaded data.
    pub const SEXT: u32 = 1 << 3;
    /// Tile space.
    pub const LOCAL: u32 = 1 << 4;
    /// Trap misaligned lanes (`--strict-align` on a width-scaled form).
    pub const ALIGN: u32 = 1 << 5;
}

/// Whether `[ea, ea + e)` may be accessed with permission `need` (the pass/fail part of
/// `Memory::check` / `Tile::check`, on the raw views).
#[inline(always)]
fn lane_ok(ctx: &JitCtx, ea: u64, e: u64, k: u32, need: u8) -> bool {
    if k & kind::ALIGN != 0 && ea & (e - 1) != 0 {
        return false;
    }
    let Some(last) = ea.checked_add(e - 1) else {
        return false;
    };
    if k & kind::LOCAL != 0 {
        if last >= ctx.tile.size {
            return false;
        }
        let (g0, g1) = (ea / TILE_GRANULE, last / TILE_GRANULE);
        (g0..=g1).all(|g| {
            // SAFETY: g <= last / 64 < size / 64, the length of the granule table.
            unsafe { *ctx.tile.perms.add(g as usize) & need != 0 }
        })
    } else {
        if last >= ctx.mem.extent {
            return false;
        }
        // SAFETY: ea <= last < extent, and the page table has extent / 4096 entries.
        let (p0, p1) = unsafe {
            (
                *ctx.mem.perms.add((ea / PAGE_SIZE) as usize),
                *ctx.mem.perms.add((last / PAGE_SIZE) as usize),
            )
        };
        // Every mapped page is readable, so the `need` bit implies mapped.
        p0 & p1 & need != 0
    }
}

#[inline(always)]
fn host(ctx: &JitCtx, ea: u64, k: u32) -> *mut u8 {
    let base = if k & kind::LOCAL != 0 {
        ctx.tile.base
    } else {
        ctx.mem.base
    };
    // SAFETY: only called for ranges that passed `lane_ok`, which lie inside the host buffer.
    unsafe { base.add(ea as usize) }
}

/// Gather: for every lane set in `mask`, check its access (`eas[i]`, width and space from `k`),
/// and only if all pass, load and extend each into `out[i]`. Returns 1 on success, 0 when a
/// lane would fault (nothing is written then).
///
/// # Safety
/// `ctx` must point to a live context whose views describe live buffers; `eas` and `out` must
/// hold 64 entries.
pub unsafe extern "C" fn lj_load(
    ctx: *const JitCtx,
    eas: *const u64,
    mask: u64,
    k: u32,
    out: *mut u64,
) -> u32 {
    // SAFETY: the caller passes valid pointers (compiled code passes its context and a
    // 64-entry scratch area).
    let (ctx, eas, out) = unsafe {
        (
            &*ctx,
            std::slice::from_raw_parts(eas, 64),
            std::slice::from_raw_parts_mut(out, 64),
        )
    };
    gather(ctx, |i| eas[i], mask, k, out)
}

/// [`lj_load`] for a contiguous access: lane `i`'s EA is `ea0 + (i << log2 E)` (wrapping).
///
/// # Safety
/// As for [`lj_load`] (there is no EA array).
pub unsafe extern "C" fn lj_load_contig(
    ctx: *const JitCtx,
    ea0: u64,
    mask: u64,
    k: u32,
    out: *mut u64,
) -> u32 {
    // SAFETY: the caller passes a live context and a 64-entry output area.
    let (ctx, out) = unsafe { (&*ctx, std::slice::from_raw_parts_mut(out, 64)) };
    gather(
        ctx,
        |i| ea0.wrapping_add((i as u64) << (k & 3)),
        mask,
        k,
        out,
    )
}

/// The body of the load helpers, with lane EAs from `ea`.
#[inline(always)]
fn gather(ctx: &JitCtx, ea: impl Fn(usize) -> u64, mask: u64, k: u32, out: &mut [u64]) -> u32 {
    let e = 1u64 << (k & 3);
    let mut m = mask;
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        if !lane_ok(ctx, ea(i), e, k, PERM_R) {
            return 0;
        }
    }
    let mut m = mask;
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        let p = host(ctx, ea(i), k);
        // SAFETY: [ea(i), ea(i) + e) passed lane_ok above.
        let v = unsafe {
            match k & 3 {
                0 => {
                    let b = p.read();
                    if k & kind::SEXT != 0 {
                        b as i8 as i64 as u64
                    } else {
                        b as u64
                    }
                }
                1 => {
                    let h = (p as *const u16).read_unaligned();
                    if k & kind::SEXT != 0 {
                        h as i16 as i64 as u64
                    } else {
                        h as u64
                    }
                }
                2 => {
                    let w = (p as *const u32).read_unaligned();
                    if k & kind::SEXT != 0 {
                        w as i32 as i64 as u64
                    } else {
                        w as u64
                    }
                }
                _ => (p as *const u64).read_unaligned(),
            }
        };
        out[i] = v;
    }
    1
}

/// Scatter: for every lane set in `mask`, check its access, and only if all pass, store the low
/// E bytes of `data[i]` at `eas[i]` in ascending lane order. Returns 1 on success, 0 when a lane
/// would fault (nothing is written then).
///
/// # Safety
/// As for [`lj_load`]; `data` must hold 64 entries.
pub unsafe extern "C" fn lj_store(
    ctx: *const JitCtx,
    eas: *const u64,
    mask: u64,
    k: u32,
    data: *const u64,
) -> u32 {
    // SAFETY: as in lj_load.
    let (ctx, eas, data) = unsafe {
        (
            &*ctx,
            std::slice::from_raw_parts(eas, 64),
            std::slice::from_raw_parts(data, 64),
        )
    };
    scatter(ctx, |i| eas[i], mask, k, data)
}

/// [`lj_store`] for a contiguous access: lane `i`'s EA is `ea0 + (i << log2 E)` (wrapping).
///
/// # Safety
/// As for [`lj_store`] (there is no EA array).
pub unsafe extern "C" fn lj_store_contig(
    ctx: *const JitCtx,
    ea0: u64,
    mask: u64,
    k: u32,
    data: *const u64,
) -> u32 {
    // SAFETY: the caller passes a live context and a 64-entry data area.
    let (ctx, data) = unsafe { (&*ctx, std::slice::from_raw_parts(data, 64)) };
    scatter(
        ctx,
        |i| ea0.wrapping_add((i as u64) << (k & 3)),
        mask,
        k,
        data,
    )
}

/// The lane-EA descriptor of [`lj_load_ea`] / [`lj_store_ea`]: an address `base + (off <<
/// shift)` whose two operands are each a scalar value, a vector register (its lane `i`) or
/// LC0BASE (`value + i`).
pub mod ea {
    /// The operand is the scalar value passed.
    pub const SCALAR: u64 = 0;
    /// The operand is lane `i` of the vector register whose index is in the descriptor.
    pub const VECTOR: u64 = 1;
    /// The operand is the value passed (LC0BASE) plus `i`.
    pub const LC0: u64 = 2;

    /// The descriptor: operand kinds, vector indices and the shift.
    pub fn desc(base_kind: u64, base_v: u8, off_kind: u64, off_v: u8, shift: u32) -> u64 {
        base_kind
            | off_kind << 2
            | (shift as u64 & 63) << 8
            | (base_v as u64) << 16
            | (off_v as u64) << 24
    }
}

/// The EAs of the lanes in `mask` described by `desc` (see [`ea`]), read from the register
/// file before any access is made (so a destination that is also an address operand is
/// read first).
fn lane_eas(regs: *const Regs, desc: u64, b: u64, o: u64, mask: u64) -> [u64; 64] {
    // SAFETY: compiled code passes its context's live register file; this shared borrow
    // ends before the caller creates any reference into it.
    let r = unsafe { &*regs };
    let operand = |kind: u64, v: u64, val: u64, i: usize| match kind {
        ea::VECTOR => r.v[v as usize & 31][i],
        ea::LC0 => val.wrapping_add(i as u64),
        _ => val,
    };
    let mut eas = [0u64; 64];
    let mut m = mask;
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        let base = operand(desc & 3, desc >> 16 & 31, b, i);
        let off = operand(desc >> 2 & 3, desc >> 24 & 31, o, i);
        eas[i] = base.wrapping_add(off << (desc >> 8 & 63));
    }
    eas
}

/// [`lj_load`] with the lane EAs computed from registers (`desc`, see [`ea`]) instead of an EA
/// array: straight-line code passes its register-offset and immediate forms this way.
///
/// # Safety
/// As for [`lj_load`]; `out` may point into the register file.
pub unsafe extern "C" fn lj_load_ea(
    ctx: *const JitCtx,
    desc: u64,
    b: u64,
    o: u64,
    mask: u64,
    k: u32,
    out: *mut u64,
) -> u32 {
    // SAFETY: compiled code passes its live context.
    let ctx = unsafe { &*ctx };
    let eas = lane_eas(ctx.regs, desc, b, o, mask);
    // SAFETY: a 64-entry area (a scratch area or a vector register); no other reference into
    // the register file is alive.
    let out = unsafe { std::slice::from_raw_parts_mut(out, 64) };
    gather(ctx, |i| eas[i], mask, k, out)
}

/// [`lj_store`] with the lane EAs computed from registers (see [`lj_load_ea`]).
///
/// # Safety
/// As for [`lj_store`]; `data` may point into the register file.
pub unsafe extern "C" fn lj_store_ea(
    ctx: *const JitCtx,
    desc: u64,
    b: u64,
    o: u64,
    mask: u64,
    k: u32,
    data: *const u64,
) -> u32 {
    // SAFETY: compiled code passes its live context.
    let ctx = unsafe { &*ctx };
    let eas = lane_eas(ctx.regs, desc, b, o, mask);
    // SAFETY: a 64-entry area (a scratch area or a vector register), only read.
    let data = unsafe { std::slice::from_raw_parts(data, 64) };
    scatter(ctx, |i| eas[i], mask, k, data)
}

/// The body of the store helpers, with lane EAs from `ea`.
#[inline(always)]
fn scatter(ctx: &JitCtx, ea: impl Fn(usize) -> u64, mask: u64, k: u32, data: &[u64]) -> u32 {
    let e = 1u64 << (k & 3);
    let mut m = mask;
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        if !lane_ok(ctx, ea(i), e, k, PERM_W) {
            return 0;
        }
    }
    let mut m = mask;
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        let p = host(ctx, ea(i), k);
        let v = data[i];
        // SAFETY: [ea(i), ea(i) + e) passed lane_ok above.
        unsafe {
            match k & 3 {
                0 => p.write(v as u8),
                1 => (p as *mut u16).write_unaligned(v as u16),
                2 => (p as *mut u32).write_unaligned(v as u32),
                _ => (p as *mut u64).write_unaligned(v),
            }
        }
    }
    1
}

/// Operation words of [`lj_vop`]: the instruction's opcode byte (bits 0..8), whose semantics
/// come from the ISA table, [`vop::SCALAR_B`], and the destination and `va` register numbers
/// (bits 16..21 and 24..29, see [`vop::word`]).
pub mod vop {
    use lanejit_interp::isa::{Opcode, Sem, VRead};

    /// `b` is a scalar value broadcast to every lane (else the index of a vector register).
    pub const SCALAR_B: u32 = 1 << 8;

    /// The operation word of `code` (opcode byte and [`SCALAR_B`]) on `vd` and `va`.
    pub const fn word(code: u32, vd: u8, va: u8) -> u32 {
        code | ((vd as u32 & 31) << 16) | ((va as u32 & 31) << 24)
    }

    /// The semantics of the opcode byte `code & 0xff`, decoded once per call.
    #[inline(always)]
    pub(super) fn sem(code: u32) -> Option<Sem> {
        Opcode::from_byte(code as u8).map(Opcode::sem)
    }

    /// Lane `i` of an instruction of semantics `sem` on `a`, `b` and the old destination
    /// `d`: vector ALU and FP operations, `V.MOV` (`b`), `V.LANEID` (`i`) and `V.LC0`
    /// (`b + i`, with LC0BASE as `b`); anything else leaves `d`.
    #[inline(always)]
    pub(super) fn lane(sem: Option<Sem>, i: usize, a: u64, b: u64, d: u64) -> u64 {
        match sem {
            Some(Sem::VAlu(op)) => op.apply(a, b),
            Some(Sem::Fp(op, w)) => op.apply(w, a, b, d),
            Some(Sem::VMov) => b,
            Some(Sem::VRead(VRead::LaneId)) => i as u64,
            Some(Sem::VRead(VRead::Lc0)) => b.wrapping_add(i as u64),
            _ => d,
        }
    }
}

/// A vector ALU, floating-point, `V.MOV`, `V.LANEID` or `V.LC0` instruction on the register
/// file, for straight-line code (which keeps vectors in the register file and runs once per
/// entry, so a call compiles much faster than the inline lane code): for every lane set in
/// `mask`, `vd[i] = op(va[i], b or vb[i], vd[i])`, by the interpreter's own lane loops for
/// ALU and FP operations ([`interp::alu_lanes`], [`interp::fp_lanes_on`]: no second copy of
/// them here) and its lane semantics for the rest ([`vop::lane`]). `word`
/// names the operation and the registers ([`vop::word`]).
///
/// # Safety
/// `regs` must point to a live register file.
pub unsafe extern "C" fn lj_vop(regs: *mut Regs, word: u32, b: u64, mask: u64) {
    // SAFETY: compiled code passes the live register file of its context.
    let r = unsafe { &mut *regs };
    let (code, vd, va) = (word & 0xffff, (word >> 16) & 31, (word >> 24) & 31);
    let scalar = code & vop::SCALAR_B != 0;
    // Decoded once, then one loop per kind of operation (the per-lane match on `sem` is
    // resolved by the loop's specialisation below for the common kinds).
    let sem = vop::sem(code);
    let (vd, va, vb) = (vd as usize & 31, va as usize & 31, b as usize & 31);
    #[inline(always)]
    fn lanes(
        r: &mut Regs,
        (vd, va, vb): (usize, usize, usize),
        b: Option<u64>,
        mask: u64,
        f: impl Fn(usize, u64, u64, u64) -> u64,
    ) {
        let mut m = mask;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            let a = r.v[va][i];
            let bv = b.unwrap_or(r.v[vb][i]);
            let d = r.v[vd][i];
            r.v[vd][i] = f(i, a, bv, d);
        }
    }
    let regs3 = (vd, va, vb);
    let b = scalar.then_some(b);
    // The interpreter's lane loops for ALU and FP operations (specialised to the operation,
    // vectorised, FP ones built for AVX2+FMA where the CPU has both), up to the highest
    // active lane.
    let upto = (64 - mask.leading_zeros() as usize, mask);
    match sem {
        Some(Sem::VAlu(op)) => interp::alu_lanes(r, op, regs3, b, upto),
        Some(Sem::Fp(op, w)) => interp::fp_lanes_on(r, (op, w), regs3, b, upto),
        other => lanes(r, regs3, b, mask, |i, a, b, d| vop::lane(other, i, a, b, d)),
    }
}

/// The bulk copy of a copy loop (`Tx::precheck`): `len` bytes from guest memory at host
/// address `src` to host address `dst`, both ranges proven inside guest memory with the
/// needed permissions and disjoint by the compiled code before the call.
///
/// # Safety
/// `[src, src + len)` and `[dst, dst + len)` must be valid and must not overlap.
pub unsafe extern "C" fn lj_copy(dst: *mut u8, src: *const u8, len: u64) {
    // SAFETY: the caller proved both ranges inside the guest memory mapping and disjoint.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, len as usize) }
}

/// Fill the chunk of guest memory's page tables that holds `addr` (`Memory::fill_at`): 1
/// when this call filled it, 0 when it was filled already or `addr` lies beyond the memory
/// (a span check that fails then fails for a fault ahead, not for a table not filled yet).
/// Cold: at most once per chunk and run.
///
/// # Safety
/// `memory` must point to live guest memory (the context's, which the call borrows).
#[cold]
pub unsafe extern "C" fn lj_fill(memory: *const Memory, addr: u64) -> u64 {
    // SAFETY: compiled code passes its context's memory, borrowed for the call; filling
    // takes `&self` and atomic stores, so threads sharing the memory may fill at once.
    let mem = unsafe { &*memory };
    u64::from(mem.fill_at(addr))
}

/// `V.REDSUM` on the register file: the wrapping sum of the lanes of `va` set in `mask`.
///
/// # Safety
/// `regs` must point to a live register file.
pub unsafe extern "C" fn lj_redsum(regs: *const Regs, va: u32, mask: u64) -> u64 {
    // SAFETY: compiled code passes the live register file of its context.
    let r = unsafe { &*regs };
    let mut sum = 0u64;
    let mut m = mask;
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        sum = sum.wrapping_add(r.v[va as usize & 31][i]);
    }
    sum
}

/// Fused multiply-add on the lanes set in `mask`: `d[i] = a[i] * b[i] + d[i]` (f64 when
/// `is_d != 0`, else f32 in the low 32 bits), exactly as the interpreter computes it.
///
/// # Safety
/// `a`, `b`, `d` must hold 64 entries.
pub unsafe extern "C" fn lj_fma(a: *const u64, b: *const u64, d: *mut u64, mask: u64, is_d: u32) {
    // SAFETY: compiled code passes three 64-entry scratch areas.
    let (a, b, d) = unsafe {
        (
            std::slice::from_raw_parts(a, 64),
            std::slice::from_raw_parts(b, 64),
            std::slice::from_raw_parts_mut(d, 64),
        )
    };
    let w = if is_d != 0 { FpWidth::D } else { FpWidth::S };
    let mut m = mask;
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        d[i] = FpOp::Fma.apply(w, a[i], b[i], d[i]);
    }
}
