//! Lowering of the seed's loads and stores.
//!
//! * Contiguous (`lc0`) forms with a full mask: one range, alignment and permission check for
//!   the whole group (`Tx::check_space`: `[ea0, ea0 + VL*E)` inside the space, and one lookup
//!   in its permitted-run table proving every page, or for `.local` every 64-byte granule, it
//!   touches), then native 128-bit loads with extending forms (`sload32x2`, `sload16x4` +
//!   widen, ...) or shuffles that narrow the lanes and full-width stores. No per-lane checks.
//!   Guest memory and tile space differ only in `Tx::space` (base, size, unit) and the table.
//! * A scalar base with a scalar (or immediate) offset: every lane has the same EA, so one
//!   check and one scalar access (a load is broadcast, into the packed form when its
//!   elements are narrower than a lane and the register has packed variables, as a gather's
//!   result is; with a full mask a store writes the
//!   highest lane's data, which is what ascending lane order leaves in memory). A run of
//!   such loads through one base register and constants in straight-line code (a matrix
//!   row broadcast into registers) is checked once, at its first load, for the span of all
//!   (`UniRun`; a fault anywhere in it sends the run to the interpreter from its first load).
//! * In a loop's full copies, the accesses whose check was hoisted to loop entry (every
//!   access whose lanes are `inv + ((LC0BASE + i) << log2e)`, on guest memory or tile space,
//!   whichever form spelled it; see the module `translate`) use no check at all. In the
//!   streaming copy (and the masked tail, `Tx::pure_tail`) their loads may be `readonly`
//!   (free to move to their use), and in the masked tail their stores write the active
//!   lanes' bytes only (`Tx::store_active_bytes`: the whole 16-byte chunks of a prefix mask
//!   through a jump into a chain of chunk copies, the rest lane by lane up to the mask's
//!   lane count). A hoisted
//!   store of raw f32 results (packed, not yet canonical: `Tx::nan`) tests them for NaN two
//!   chunks at a time (all at once for a long multiply-add chain, `LONG_FMA_CHAIN`) where
//!   it stores them, with a cold block that rewrites NaN lanes
//!   (`Tx::store_canonical_pairs`) instead of blending every chunk before the store
//!   (`lanejit bench --sizes 256K`, three runs each, interleaved, before -> after, jit /
//!   native: saxpy32 0.40/0.52/0.44 -> 0.68/0.69/0.56, fir8_vaddr 0.42/0.48/0.40 ->
//!   0.55/0.51/0.44, fir8_lc0 0.36/0.43/0.42 -> 0.46/0.47/0.37; stencil5_lc0, matmul256 and
//!   spmv_csr within noise). The store must read the packed register itself: a store whose
//!   data `Tx::inst` makes wide first (tile space) canonicalises before it.
//! * Interleave groups: hoisted strided loads of the fields of one array of structs (the
//!   same loop-invariant terms, element width and record stride, constants within the first
//!   `min(stride, 16)` bytes of the lowest's: `V.LWI.U [v5 + 4f]` off `V.LC0 << 4`) all load
//!   the 16-byte pieces from the lowest member's address and pick their field with
//!   shuffles, so that Cranelift keeps one copy of each load and of each shared shuffle
//!   (`Tx::interleave_offset`, `Tx::strided_proved`): four fields of 16-byte records are a
//!   4x4 transpose, four loads and eight shuffles per four records instead of sixteen loads
//!   and twelve shuffles. Their values stay live from the first member's use to the last
//!   one's, so the streaming copy of a body with two stores or more holds its stores back to
//!   the iteration's end and emits them chunk by chunk (`Tx::flush_stores`), which makes the
//!   optimiser compute the pieces chunk by chunk too; `Tx::precheck` enters that copy only
//!   when no two stores of the proven iterations overlap (`Tx::stores_apart`), so their
//!   order is free. Without the held stores the shared pieces of all chunks were live at
//!   once and spilled (aos_soa_vaddr's loop: +6% instructions); with them -28%, and
//!   aos_soa_vaddr at 256 KiB ran 1.28-1.31 -> 2.78-2.96 G records/s (three alternating
//!   runs; 0.41x -> 0.94x native), at 16 MiB 0.95-0.99 -> 0.88-0.93 (memory-bound, 1.3x
//!   native either way). The `lc0` form, each field through a register of its own
//!   (`V.LW [s5 + (lc0 << 4)]`, `s5 = s1 + 4`), joins the group by the registers'
//!   distances at the entry that made the loop compile (`analysis::speculate_bases`),
//!   checked at every loop entry: aos_soa_lc0 at 256 KiB 1.26-1.30 -> 2.97-3.06 G
//!   records/s (0.42x -> 0.98x native). A loop whose distances change leaves for the
//!   straight form of its body at such entries, and after a few of them is compiled again
//!   without the speculation (`Jit`'s lazy exits, as for a lazy tail).
//! * Hoisted strided stores (the same strides as the loads: 2 or 4 elements, or a power of
//!   two from 16 to 4096 bytes for 4- and 8-byte elements; `analysis::hoistable`) write
//!   their lanes one by one at constant offsets from lane 0's host address, from the packed
//!   vectors when the data is packed at the store's width (`Tx::strided_store_at`: eight
//!   bytes leave the vector, `movq`/`pextrq`, and a shift gives the next lane), and in the
//!   masked tail the active lanes in a loop over the lanes (`Tx::store_active_strided`).
//!   Two consecutive stores of the two fields of 2-field records (4- or 8-byte elements,
//!   through one base register, or two whose distance the JIT speculates on as for loads,
//!   `analysis::speculate_bases`) interleave their chunks and store 16-byte vectors
//!   (`Tx::pair_fields`). The fields of one array of records written by two strided
//!   stores are apart when their lane 0 addresses differ by `E` to `S - E` modulo the
//!   stride `S`, whatever their spans (`Tx::stores_apart`), so the streaming copy's plan
//!   of held stores still applies. A complex product over interleaved f32 pairs
//!   (`V.LW [s1 + (lc0 << 3)]` for the real parts, `s5 = s1 + 4` for the imaginary ones,
//!   the results stored the same way): its loop ran 622 host instructions per iteration of 32
//!   products (every loaded 16-byte piece spilled above each store's own span check, the
//!   lanes widened before their extraction), 324 with the stores hoisted, 175 with the
//!   pairs interleaved (callgrind, `lanejit run --engine jit`, N = 65,536; the loop that
//!   fills the records, four strided stores of 64-bit sums: 787 -> 345 -> 148); its
//!   compile 31.9 -> 3.8 ms, 53,096 -> 7,056 bytes of code (`bench --compile-latency`).
//!   One million products with the fill loop (`lanejit bench FILE`, two alternating runs
//!   of each build): jit-warm 10.0 / 9.9 -> 3.9 / 4.0 ms, tiered 16.8 / 18.4 -> 10.2 /
//!   10.7 ms.
//! * Register-offset and immediate forms on guest memory with a full mask (a loop's full
//!   copies): lane EAs with SIMD adds and shifts, one check of the group's whole EA range
//!   `[min, max + E)` (in range, and a single lookup in the permitted-run table proving all
//!   its pages, whatever the span: runs are exact `u32` counts), then per-lane loads or
//!   stores in lane order (`Tx::lanes_inline`). The range of general lane EAs comes from
//!   SSE4.1's 32-bit unsigned minima and maxima over the EA chunks (`Tx::chunk_range`: the
//!   lowest upper half joined to the lowest lower half, the highest to the highest, bounds
//!   that hold every lane and are exact within 4 GiB), and the lane EAs are extracted after
//!   the check; each gathered 16-byte vector goes to scratch as soon as it is whole, so that
//!   Cranelift cannot sink every lane's load to the vector's first use (which kept all lane
//!   EAs live across all loads: spmv_csr's loop -18%, lut32's -27% instructions, callgrind);
//!   not the lanes of a strided access, constant offsets from one host address with nothing
//!   to keep live, whose vectors are used as they are (tile_stage's column loop -9% host
//!   instructions in compiled code, 256 KiB 1,852-1,854 -> 2,155-2,172 Melem/s jit).
//!   A range with a unit it may not touch (a hole
//!   or a read-only page between the lanes) is checked lane by lane against the permission
//!   table in a small loop (`Tx::lanes_permitted`); only a lane that faults takes the helper.
//!   In a loop, when the lane EAs are a scalar plus a register the region never writes
//!   (lane offsets a compiler computed before the loop), or plus one the body made from such
//!   a register by adding scalars (`Tx::ro_plus`: a branch loop's `V.ADD v1, v0, s8; V.LD
//!   [s1 + v1]`, whose sum goes to the scalar part), the range comes from that
//!   register's unsigned minimum and maximum, computed once at loop entry ([`RoBounds`]):
//!   `[s + min, s + max + E)` when `s + max` does not wrap (else the per-lane check), and the
//!   lane EAs are extracted only after the check, so they are not live across it
//!   (tile_stage's column loop at N = 256: 1.67M -> 0.91M instructions, callgrind). The same
//!   entry pass tests whether such a register's lanes step by exactly one element for the
//!   first access through it (a lane index hoisted out of the loop); when they do, that
//!   gather or scatter is one contiguous access with its own range check (`Tx::ro_contig`),
//!   the run-time test for consecutive addresses SwiftShader's `SIMD::Load` makes
//!   (tile_stage's column loop: 0.83M -> 0.57M instructions; a branch-loop daxpy in f64
//!   through `v0 + s8`, 1M elements at VL 32: 420 -> 970 Melem/s, `lanejit bench FILE
//!   --engine jit-warm`; a load of 64-bit lanes goes in wide, the form its gather leaves).
//!   The same entry test covers a register the loop writes only by adding a scalar or
//!   immediate to itself (a vector of lane addresses bumped by the stride, `V.ADD v0, v0,
//!   s6`: `shape::stepped_v`) and those made from it by adding scalars (`Tx::ind_of`): its
//!   lanes step as they did at entry in every full iteration of a loop whose mask changes
//!   only in its last, and lane 0's EA comes from the register's lane 0 (`Tx::ro_contig`;
//!   that daxpy through bumped vector bases: 463 -> 851 Melem/s).
//!   A register whose lanes stepped by another constant at the entry that made the loop
//!   compile (`region::lane_strides`: a column's or a record field's offsets, `V.MUL v2, v1,
//!   s12` with the pitch in `s12`) gets the same entry test for that step, and its gathers
//!   and scatters whose byte stride it makes at most 1 MiB (and a multiple of E when
//!   alignment is required) the strided alternative (`Tx::ro_strided`, `Tx::strided_at`):
//!   one check of the span the lanes cover, then the lanes at constant offsets from lane 0's
//!   host address, which the host's addressing folds into each access (`[host + 0x400]`), in
//!   the form the lanes would leave; a failed test or a span with a hole takes the lanes.
//!   tile_stage's column loop at N = 256: 442,008 -> 300,080 instructions (callgrind, one
//!   `lanejit run --engine jit`); `lanejit bench --kernel tile_stage --engine jit`,
//!   alternating runs of each build: 256 KiB 863-1,581 -> 1,564-1,960 Melem/s (seven runs),
//!   16 MiB 644-944 -> 835-977 (six; the column reads miss L1 at a pitch of 8 KiB either
//!   way); a user kernel reading three fields of 20-byte records through `V.LW [s + v2]`
//!   (1M records, with its fill loop): 6.22-6.72 -> 5.72-5.84 ms.
//!   A hot straight-line region has no entry to make that test at once (it keeps its
//!   registers in the register file, and a loop with a branch inside runs as such regions,
//!   one entry per iteration): each of its gathers and scatters under a full mask tests its
//!   own lanes for consecutive elements (`Tx::dyn_contig`, about VL/2 compares), and takes
//!   the contiguous access when they are (a branch loop with a scalar `if`, through
//!   `V.ADD v1, v9, s7` with `v9` a lane index built before it, 1M elements of real data,
//!   VL 32: 10.0 -> 1.61 ms, 0.9x -> 5.6x the interpreter's 8.96).
//!   When the lane offsets are a register packed as 32-bit words (loaded contiguously, or
//!   shifted or masked by an immediate since, see `Tx::narrow_int`), the range comes from
//!   SIMD minima and maxima of the packed words (`Tx::packed_bounds`: like a wide index's,
//!   computed once per value and shared with the next access through it and with an add to
//!   it), and each lane's host address is one add of its scaled word to the
//!   space's base plus the scalar base, made once (`Tx::packed_lane_hosts`), which the
//!   host's addressing folds into the access (gather32 -11%, scatter32 -9% instructions in
//!   compiled code, callgrind). A gather through zero-extended packed words from a scalar
//!   base the loop body never writes first compares its highest offset plus E with the
//!   bytes from that base to the end of its permitted run, found once at loop entry
//!   (`Tx::base_runs`, `Tx::in_base_run`): one compare and no table lookup instead of the
//!   range check, and the highest lane alone (`Tx::packed_max`) instead of both bounds;
//!   the range check still follows when the lanes leave that run (a base below its
//!   table). Three alternating runs of `lanejit bench --engine jit --reps 7`, Melem/s,
//!   before -> after: gather32 at 256 KiB 1,557-1,566 -> 1,571-1,601 (one run at 1,190
//!   before), at 16 MiB 289-302 -> 292-320; lut32 841-848 -> 855-861 and 770-787 ->
//!   794-803; spmv_csr 410-435 -> 428-449 and 252-254 -> 252-261. Not for scatters:
//!   scatter32 ran slower with it (256 KiB 1,489-1,606 -> 1,268-1,423, 4 MiB 947-973 ->
//!   711-861, five alternating runs) while its compiled code ran 10% fewer instructions.
//!   When the lane offsets are a wide register the region writes
//!   (an index vector computed in the loop, as SpMV's `j`) shifted by at most 3, the range
//!   comes from that register's lane bounds, computed once per value of the register in a
//!   body copy and shared by every access through it (`Tx::lane_bounds`, kept in a stack
//!   slot: as values, Cranelift's optimiser would compute them again beside each use), and
//!   each lane's host address is the scalar's plus the lane shifted, folded into the access
//!   (`[host + j * 4]`; [`WideIndex`]): no vector of lane EAs is built (spmv_csr's loop
//!   -6.7% instructions, callgrind; the lane EAs are built only on the slow paths).
//!   A scatter's data loaded by a hoisted contiguous load right before it (`V.LW [s2,
//!   lc0<<2, 0], ->v3; V.SW v3, [s4 + (v2 << 2)]`; a load with a check of its own has a slow
//!   path that writes the register, and is made at once) is loaded where the scatter's lowering
//!   reads it, after its range check, on each of its paths (`Tx::scatters_next`,
//!   `Tx::scatter_deferred`; the load still precedes every lane store, and nothing loads it
//!   again after them): loaded before the check, its chunks were live across it and moved
//!   through the stack, 16 moves per 32 lanes. scatter32 (`lanejit bench --kernel scatter32
//!   --engine jit`, alternating runs of both builds) at 256 KiB 1,252-1,323 -> 1,501-1,540
//!   Melem/s (0.78x -> 0.96x native), 16 KiB 1,251-1,422 -> 1,764-1,796, 16 MiB 267-269 ->
//!   307-308.
//! * In the strip-mined form's copies (`translate::strip`), a gather or scatter whose lanes
//!   the stretch's pre-pass proved takes no check at all (`Tx::lanes_proven`: per-lane host
//!   addresses, the loads or stores of `Tx::lanes_at`; in its masked tail a scatter stores
//!   the active lanes only).
//! * Straight-line code (vectors in the register file) always takes the helper path below,
//!   passing the register file itself as the helper's source or destination.
//! * Everything else (vector bases or offsets, partial masks, other tile accesses, a failed
//!   fast check):
//!   lane EAs are computed with SIMD adds and shifts into a scratch area and a helper checks all
//!   active lanes first and then performs the accesses (`abi::lj_load` / `abi::lj_store`;
//!   a contiguous access passes only lane 0's EA to `abi::lj_load_contig` /
//!   `abi::lj_store_contig`).
//!   When it reports a fault, compiled code exits before the instruction and the interpreter
//!   raises the precise trap.
//!
//! Every native access is dominated by a check proving `[ea, ea + len)` lies in `[0, extent)`:
//! `ea < extent && extent - ea >= len` (or, for a group, `max <= extent - E` with
//! `extent >= E`), which cannot wrap.

use super::{Tx, flags};
use crate::abi::{self, kind};
use crate::observe::Fallback;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32X4, F64X2, I8, I8X16, I16, I16X8, I32, I32X4, I64, I64X2};
use cranelift_codegen::ir::{
    Block, BlockArg, InstBuilder, MemFlagsData, StackSlot, StackSlotData, StackSlotKind, Value,
};
use lanejit_interp::isa::{
    Ctl, Dir, Ext, FpWidth, Inst, MemAddr, MemSem, Mode, Reg, SOrImm, SReg, Sem, VReg,
};
use lanejit_interp::memory::{PERM_R, PERM_W};

/// A lane-wise combination of two vectors (or scalars): `umin`, `smax`, `bor`, ...
type Fold = fn(&mut Tx<'_, '_>, Value, Value) -> Value;

/// The VL from which register-offset and immediate accesses in the memory form of a region
/// (`Tx::vmem`, see `plan`) run their per-lane work in loops over the lanes
/// (`Tx::lanes_loop`) rather than unrolled: the code of one access then has a constant size,
/// where unrolled it grows by a dozen instructions per lane. The register form keeps them
/// unrolled: measured on a 4096-entry gather at VL 32, the loops run 3-4x slower.
pub(crate) const LANE_LOOP_MIN_VL: usize = 16;

/// Chunks per NaN test of a canonicalising f32 store (`Tx::store_canonical_pairs`).
pub(crate) const CANON_GROUP: usize = 2;

/// Chunks per NaN test of a register long multiply-add chains accumulate into
/// (`super::LONG_FMA_CHAIN`): the chains `schedule::cluster_shared` interleaves at most
/// (`schedule::MAX_CLUSTER`), so one group's results are stored before the next group's
/// chains start.
pub(crate) const LONG_CHAIN_GROUP: usize = 8;

/// How lane EAs are formed.
#[derive(Clone, Copy, Debug)]
enum Addr {
    /// `base + (lc0 << log2e) + off`.
    Contig { base: SReg, off: SOrImm },
    /// `base + (off << shift)`.
    RegOff { base: Reg, off: Reg, shift: u32 },
    /// `base + off`.
    Imm { base: Reg, off: u64 },
}

/// The lanes of a read-only vector register (one the region never writes) shifted left by
/// `shift`, as an address part: their unsigned minimum and maximum and their bitwise or,
/// computed once at loop entry (`Tx::ro_offsets`) into a stack slot of three words, which
/// the accesses load (as values, Cranelift's optimiser would compute them again at every use,
/// inside the loop). A gather or scatter whose lane EAs are a scalar plus these lanes checks
/// its range from them (`Tx::ro_range`) instead of from every lane's EA.
///
/// When the first access through the register uses a shift that would make its EAs
/// contiguous were lane `i` the first lane's value plus `i * step` (`step = E >> shift`: a
/// lane-index vector built before the loop, as compilers hoist it), the slot also holds lane
/// 0 and whether every lane is exactly that: a run-time test, once per loop entry, that lets
/// such a gather or scatter be one contiguous access (`Tx::ro_contig`), as SwiftShader's
/// `SIMD::Load` tests for consecutive addresses.
#[derive(Clone, Copy)]
pub(crate) struct RoBounds {
    reg: u8,
    shift: u32,
    slot: cranelift_codegen::ir::StackSlot,
    /// The lane step tested at entry (0: none).
    step: i64,
}

/// The readable bytes of guest memory from a gather's scalar base that one permitted run
/// covers (`Tx::base_runs`): at loop entry, from the read-permitted-run table entry of the
/// base's page, `run * 4096 - (base & 4095)` capped at the space's extent (0 when the base
/// is outside it or its page is not readable), kept in a stack slot. A gather whose lane
/// EAs are that base plus unsigned packed offsets is then in range, and readable in every
/// byte, when its highest offset plus E is at most those bytes: one compare instead of a
/// range check and a table lookup per access (`Tx::lanes_inline`).
#[derive(Clone, Copy)]
pub(crate) struct BaseRun {
    reg: u8,
    slot: StackSlot,
}

/// The bounds of a vector register's lanes, for gathers and scatters through it and for
/// adds to packed lanes (`Tx::lane_bounds`, `Tx::packed_bounds`): computed once per value of
/// the register in a body copy, so that accesses sharing an index vector (SpMV's `col[j]`
/// and `val[j]`) pay for one range, and the index's increment after them for none.
pub(crate) struct LaneBounds {
    /// The register's chunks (SSA values, aliases resolved: the bounds hold for exactly
    /// these): its `i64x2` chunks, or its packed ones.
    chunks: Vec<Value>,
    /// What the bounds are: of 64-bit lanes (unsigned), or of packed 32-bit lanes
    /// (unsigned, or signed for sign-extended words).
    kind: BoundsKind,
    /// The bounds, stored where they were computed: as values, Cranelift's optimiser would
    /// compute them again next to each use (in the block of the first access's check,
    /// which does not dominate the next access).
    slot: StackSlot,
}

/// What a [`LaneBounds`] bounds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum BoundsKind {
    /// The `i64x2` lanes, unsigned (`i64` bounds).
    Wide,
    /// Packed 32-bit lanes, unsigned (`sign` false) or signed (`i32` bounds).
    Packed { sign: bool },
    /// The highest of packed unsigned 32-bit lanes only (`Tx::packed_max`; both bounds
    /// hold it).
    PackedMax,
}

/// A gather or scatter's lane EA range as its check needs it: lowest and highest EA, the or
/// of every EA's low bits (for alignment) and whether no lane's EA wrapped.
type RangeCheck = (Value, Value, Value, Value);

/// A gather or scatter whose lane EAs are a scalar plus a wide vector register's lanes
/// shifted left by at most 3 (`Tx::wide_index`): its range comes from the register's lane
/// bounds, and each lane's host address is the scalar's (added to the space's base once)
/// plus the lane shifted, which the host's addressing folds into the access
/// (`[host + idx * 4]`), so no per-lane EA vector is built.
struct WideIndex {
    /// The register's `i64x2` chunks.
    chunks: Vec<Value>,
    /// The scalar part.
    scalar: Value,
    /// The shift of the register's lanes (0 to 3).
    sh: u32,
    range: RangeCheck,
}

/// One vector access as the in-line lane paths need it.
#[derive(Clone, Copy)]
struct Access {
    ms: MemSem,
    data: Reg,
    addr: Addr,
    /// Tile space rather than guest memory.
    local: bool,
    /// `PERM_R` or `PERM_W`.
    need: u8,
    /// Alignment every lane's EA must have (`Tx::align_mask`).
    amask: u64,
}

/// The scalar part of an address whose vector part is a read-only register (`Tx::ro_split`).
#[derive(Clone, Copy)]
enum RoScalar {
    /// A scalar register shifted left.
    Reg(SReg, u32),
    /// An immediate.
    Imm(u64),
}

/// The byte stride of an access of `ms` through a register whose lanes step by `d`,
/// shifted left by `shift`, when that makes it a strided access (`Tx::strided`'s bounds: not
/// 0 and not one element, at most [`crate::region::MAX_LANE_STRIDE`] bytes, a multiple of E
/// when alignment is required, `amask`).
fn lane_stride_bytes(d: i64, shift: u32, ms: MemSem, amask: u64) -> Option<i64> {
    let max = crate::region::MAX_LANE_STRIDE as u64;
    if d == 0 || d.unsigned_abs() > max || shift > 31 {
        return None;
    }
    let s = d.wrapping_mul(1i64 << shift);
    let ok = s != ms.width() as i64 && s.unsigned_abs() <= max && (s & amask as i64) == 0;
    ok.then_some(s)
}

/// The vector register of `addr`, its shift and the scalar part, when the lane EAs are a
/// scalar part plus one vector register's lanes shifted left (`RegOff` with one vector
/// operand, or a vector base with an immediate).
fn vec_split(addr: Addr) -> Option<(u8, u32, RoScalar)> {
    match addr {
        Addr::RegOff {
            base: Reg::S(b),
            off: Reg::V(n),
            shift,
        } if shift < 64 => Some((n, shift, RoScalar::Reg(SReg(b), 0))),
        Addr::RegOff {
            base: Reg::V(n),
            off: Reg::S(o),
            shift,
        } if shift < 64 => Some((n, 0, RoScalar::Reg(SReg(o), shift))),
        Addr::Imm {
            base: Reg::V(n),
            off,
        } => Some((n, 0, RoScalar::Imm(off))),
        _ => None,
    }
}

/// The data register of a memory instruction (a load's destination, a store's source).
pub(crate) fn data_reg(inst: &Inst) -> Option<Reg> {
    operands(inst, inst.opcode().mem()?).map(|(d, _, _)| d)
}

/// The vector register a gather or scatter on guest memory takes its lane addresses from
/// (`[s + (v << k)]`, `[v + (s << k)]`, `[v + imm]`): the accesses a strip-mined body may hold
/// besides its hoisted ones (`strip::strip_gathers`). `None` for other accesses.
pub(crate) fn gather_index(inst: &Inst) -> Option<u8> {
    let (_, addr, local) = operands(inst, inst.opcode().mem()?)?;
    if local {
        return None;
    }
    vec_split(addr).map(|(n, ..)| n)
}

/// The vector register a scatter on guest memory stores (`V.SW v3, [s4 + (v2 << 2)]`: 3),
/// when the register is not also its address's vector. `None` for other instructions.
pub(crate) fn scatter_data(inst: &Inst) -> Option<u8> {
    let ms = inst.opcode().mem()?;
    let (Reg::V(d), _, _) = operands(inst, ms)? else {
        return None;
    };
    (ms.dir == Dir::Store && gather_index(inst)? != d).then_some(d)
}

/// The data register, the address and `.local` of a memory instruction, from the ISA
/// table's operand formats (`Inst::mem_operands`), with the mnemonic's shift or scale applied.
fn operands(inst: &Inst, ms: MemSem) -> Option<(Reg, Addr, bool)> {
    let o = inst.mem_operands()?;
    let addr = match o.addr {
        MemAddr::RegOff { base, off, shamt } => Addr::RegOff {
            base,
            off,
            shift: ms.reg_shift(shamt),
        },
        MemAddr::Imm { base, imm } => Addr::Imm {
            base,
            off: ms.imm_offset(imm),
        },
        MemAddr::Contig { base, off } => Addr::Contig { base, off },
    };
    Some((o.data, addr, o.local))
}

/// A store of the streaming copy held back to its iteration's end (`Tx::flush_stores`):
/// chunk `c` (16 bytes) of a contiguous store at `host`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HeldStore {
    c: usize,
    f: MemFlagsData,
    v: Value,
    host: Value,
}

/// A load of a run of uniform loads (see [`uniform_runs`]): its pc, its address's constant
/// part and its semantics.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UniLoad {
    pc: u64,
    off: u64,
    ms: MemSem,
}

/// Loads of one space through one scalar base register and a constant (`V.LWI [s9 +
/// (k << 2)]`: a matrix kernel's row of A broadcast into sixteen registers), in the
/// straight-line code from the first to the next control instruction, with no write to the
/// base between them: each one's EA is the first's plus a constant known here. The first
/// checks the span of them all at once (`Tx::uniform_load`) and the others none: the
/// matmul256 row prologue's sixteen checks (about 20 instructions each) become one.
#[derive(Clone, Debug)]
pub(crate) struct UniRun {
    loads: Vec<UniLoad>,
}

/// A loop nest's prologue that starts with a run of uniform loads ([`UniRun`]) whose one
/// span check covers every vector register the prologue writes (matmul256's sixteen
/// broadcasts of a row of A), the rest of it scalar work and the `LOOP`: the prologue's
/// checks (full mask, budget, the run's span) are made on each edge into it instead, its
/// entry and the outer back edge (`Tx::prologue_checks`), so that nothing in it exits
/// before the loads overwrite those registers. Their old values are then dead where the
/// prologue starts, and not carried around the outer loop: matmul256's 256 `i64x2` chunks
/// of sixteen broadcast registers were block parameters of the prologue, moved between
/// stack slots at every row's back edge.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PrologueRun {
    /// The first load's pc (the region's start).
    pc: u64,
    base: SReg,
    off: u64,
    ms: MemSem,
    /// Instructions in the prologue.
    len: u64,
}

/// The scalar base, constant offset and tile-space flag of a load `base + constant`.
fn scalar_imm_load(inst: &Inst) -> Option<(SReg, u64, bool, MemSem)> {
    let ms = inst.opcode().mem()?;
    if ms.dir != Dir::Load {
        return None;
    }
    match operands(inst, ms)? {
        (
            _,
            Addr::Imm {
                base: Reg::S(b),
                off,
            },
            local,
        ) => Some((SReg(b), off, local, ms)),
        _ => None,
    }
}

/// The runs of uniform loads of region `r` that have at least two loads (see [`UniRun`]),
/// one per load that starts one (a run's later loads start runs of their own, for copies
/// entered between them).
pub(crate) fn uniform_runs(r: &crate::region::Region) -> Vec<UniRun> {
    let mut runs = Vec::new();
    for (i, (pc, inst)) in r.insts.iter().enumerate() {
        let Some((base, off, local, ms)) = scalar_imm_load(inst) else {
            continue;
        };
        let mut loads = vec![UniLoad { pc: *pc, off, ms }];
        for (pcj, ij) in &r.insts[i + 1..] {
            if crate::region::is_control(ij) {
                break;
            }
            if let Some((b, off, l, ms)) = scalar_imm_load(ij) {
                if b == base && l == local {
                    loads.push(UniLoad { pc: *pcj, off, ms });
                }
            }
            if super::analysis::reg_effects(ij).1.s & (1 << base.0) != 0 {
                break;
            }
        }
        if loads.len() >= 2 {
            runs.push(UniRun { loads });
        }
    }
    runs
}

/// The most bytes one check of a run of uniform loads covers ([`UniRun`]).
const UNI_SPAN_MAX: i64 = 1 << 16;

/// The permission an access needs: read for loads, write for stores.
pub(super) fn need(ms: MemSem) -> u8 {
    match ms.dir {
        Dir::Load => PERM_R,
        Dir::Store => PERM_W,
    }
}

impl Tx<'_, '_> {
    /// The read-only vector register of `addr` and its shift, when the lane EAs are a scalar
    /// part plus that register's lanes shifted left (`RegOff` with one vector operand, or a
    /// vector base with an immediate), and the scalar part: the address's own, and what the
    /// vector operand adds to the read-only register's lanes when it holds them plus a
    /// scalar (`Tx::ro_plus`).
    fn ro_split(&self, addr: Addr) -> Option<(u8, u32, RoScalar, Option<Value>)> {
        let (n, shift, scalar) = vec_split(addr)?;
        if self.ro_v & (1 << n) != 0 {
            return Some((n, shift, scalar, None));
        }
        let p = self.ro_plus[n as usize]?;
        Some((p.reg, shift, scalar, Some(p.k)))
    }

    /// At loop entry: [`RoBounds`] of every read-only register a gather or scatter of `r`
    /// adds to a scalar (one pass over the lanes per register and shift).
    pub(crate) fn ro_offsets(&mut self, r: &crate::region::Region) {
        // Contiguous forms have no vector operand; a read-only register is never in a
        // packed form, so no packed-index gather uses one.
        let roots = self.ro_v | self.ind_v;
        let uses: Vec<(MemSem, u8, u32)> = super::shape::ro_plus_uses(&r.insts, roots)
            .into_iter()
            .filter_map(|(i, reg)| {
                let inst = &r.insts[i].1;
                let ms = inst.opcode().mem()?;
                let (_, addr, _) = operands(inst, ms)?;
                let (_, shift, _) = vec_split(addr)?;
                Some((ms, reg, shift))
            })
            .collect();
        // The lane step each (register, shift) would need for an access through it to be
        // contiguous (from the first access that uses it), for registers whose lanes stepped
        // so when the region was compiled (`TxConfig::steps`).
        let hinted = self.steps;
        let step_of = |reg: u8, shift: u32| {
            uses.iter()
                .find(|&&(_, g, h)| g == reg && h == shift)
                .filter(|&&(ms, _, _)| shift <= ms.log2e as u32)
                .map(|&(ms, _, _)| ms.log2e as u32 - shift)
                .filter(|&k| hinted & (1 << (4 * reg as u32 + k)) != 0)
                .map_or(0, |k| 1i64 << k)
        };
        // Else the lane step the register had at the entry that made the region compile
        // (`TxConfig::strides`), when it makes the first access through it a strided one
        // (`Tx::ro_strided`). Not in strip-mined code, whose gathers the stretch's pre-pass
        // proves.
        let strides = self.strides;
        let strip = self.strip_vl.is_some();
        let stride_of = |t: &Self, reg: u8, shift: u32| {
            let d = strides[reg as usize] as i64;
            uses.iter()
                .find(|&&(_, g, h)| g == reg && h == shift)
                .filter(|&&(ms, _, _)| {
                    !strip && lane_stride_bytes(d, shift, ms, t.align_mask(ms)).is_some()
                })
                .map_or(0, |_| d)
        };
        for &(_, reg, shift) in &uses {
            if self
                .ro_bounds
                .iter()
                .any(|b| b.reg == reg && b.shift == shift)
            {
                continue;
            }
            // Chunk by chunk, then the two lanes of the result (called at VL 4 and above:
            // VL is a power of two, so every chunk holds two lanes).
            let chunks = self.vget_all(VReg(reg));
            let sh = self.iconst(shift as u64);
            let xs: Vec<Value> = chunks.iter().map(|&c| self.b.ins().ishl(c, sh)).collect();
            let (mut vmin, mut vmax, mut vor) = (xs[0], xs[0], xs[0]);
            for &x in &xs[1..] {
                vmin = self.b.ins().umin(vmin, x);
                vmax = self.b.ins().umax(vmax, x);
                vor = self.b.ins().bor(vor, x);
            }
            let halves =
                |t: &mut Self, v: Value| (t.b.ins().extractlane(v, 0), t.b.ins().extractlane(v, 1));
            let (a, b) = halves(self, vmin);
            let min = self.b.ins().umin(a, b);
            let (a, b) = halves(self, vmax);
            let max = self.b.ins().umax(a, b);
            let (a, b) = halves(self, vor);
            let or = self.b.ins().bor(a, b);
            let slot = self
                .b
                .create_sized_stack_slot(cranelift_codegen::ir::StackSlotData::new(
                    cranelift_codegen::ir::StackSlotKind::ExplicitSlot,
                    40,
                    3,
                ));
            for (k, v) in [min, max, or].into_iter().enumerate() {
                self.b.ins().stack_store(I64, v, slot, 8 * k as i32);
            }
            let step = match step_of(reg, shift) {
                0 => stride_of(self, reg, shift),
                k => k,
            };
            if step != 0 {
                let (lane0, mut ok) = self.lanes_step(&chunks, step);
                if self.ind_v & (1 << reg) != 0 {
                    // A register the loop bumps keeps stepping only through full-mask
                    // iterations: from an entry under a full mask, every iteration is one but
                    // the last (`shape::stepped_v`). An entry under a partial mask (a body
                    // entered with the mask as something else left it) takes the lanes.
                    let full = self.mask_is_full();
                    ok = self.b.ins().band(ok, full);
                }
                let ok = self.b.ins().uextend(I64, ok);
                self.b.ins().stack_store(I64, lane0, slot, 24);
                self.b.ins().stack_store(I64, ok, slot, 32);
            }
            self.ro_bounds.push(RoBounds {
                reg,
                shift,
                slot,
                step,
            });
        }
    }

    /// At loop entry: the [`BaseRun`] of every scalar base of a gather of `r`'s body on guest
    /// memory through a vector offset (`[s + (v << k)]`), when the body never writes that
    /// scalar (its value here is its value at every access in the loop).
    pub(crate) fn base_runs(&mut self, r: &crate::region::Region) {
        let mut written = 0u32;
        for (_, i) in r.body() {
            written |= super::reg_effects(i).1.s;
        }
        let mut want: Vec<u8> = Vec::new();
        for (_, inst) in r.body() {
            let Some(ms) = inst.opcode().mem() else {
                continue;
            };
            let Some((_, addr, false)) = operands(inst, ms) else {
                continue;
            };
            // Gathers only (see `Tx::in_base_run`).
            if ms.dir != Dir::Load {
                continue;
            }
            if let Addr::RegOff {
                base: Reg::S(b),
                off: Reg::V(_),
                ..
            } = addr
            {
                if written & (1 << b) == 0 && !want.contains(&b) {
                    want.push(b);
                }
            }
        }
        for reg in want {
            let (_, extent, shift) = self.space(false);
            let b = self.sget(SReg(reg));
            let inb = self.b.ins().icmp(IntCC::UnsignedLessThan, b, extent);
            let page = self.b.ins().ushr_imm_s(b, shift);
            let zero = self.iconst(0);
            let at = self.b.ins().select(inb, page, zero);
            let run = self.run_at(false, PERM_R, at);
            // From the base to the end of its run: whole units past its own, then what is
            // left of its own (nothing when the run is empty).
            let units = self.b.ins().ishl_imm_s(run, shift);
            let into = self.b.ins().band_imm_s(b, (1i64 << shift) - 1);
            let has = self.b.ins().icmp_imm_s(IntCC::NotEqual, run, 0);
            let left = self.b.ins().isub(units, into);
            let room = self.b.ins().isub(extent, b);
            let bytes = self.b.ins().umin(left, room);
            let ok = self.b.ins().band(inb, has);
            let bytes = self.b.ins().select(ok, bytes, zero);
            let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                8,
                3,
            ));
            self.b.ins().stack_store(I64, bytes, slot, 0);
            self.base_runs.push(BaseRun { reg, slot });
        }
    }

    /// The [`BaseRun`] a packed-index gather (`Tx::packed_index`) is checked against first
    /// (`Tx::in_base_run`): its base's, for zero-extended words. `None` without one, for
    /// sign-extended words (whose offsets may be negative: the range check) and for
    /// scatters: with this check instead of the range check, scatter32 ran slower (five
    /// alternating runs, Melem/s: 256 KiB 1,489-1,606 -> 1,268-1,423, 4 MiB 947-973 ->
    /// 711-861) while its compiled code ran 10% fewer instructions.
    fn base_run_of(&self, acc: Access, (b, _, ext, sh): (SReg, VReg, Ext, u32)) -> Option<BaseRun> {
        if ext != Ext::Zero || sh > 31 || acc.ms.dir != Dir::Load {
            return None;
        }
        self.base_runs.iter().find(|x| x.reg == b.0).copied()
    }

    /// Whether every lane of a packed-index gather lies in its base's [`BaseRun`]
    /// (`Tx::base_run_of`): its highest offset `mx << sh` (unsigned packed words, `mx` their
    /// highest, `Tx::packed_max`) plus E within the run's bytes.
    fn in_base_run(&mut self, acc: Access, run: BaseRun, sh: u32, mx: Value) -> Value {
        let bytes = self.b.ins().stack_load(I64, I64, run.slot, 0);
        // At most (2^32 - 1) << 31 plus E: no wrap.
        let hi = self.index_offset(mx, false, sh);
        let end = self.b.ins().iadd_imm_s(hi, acc.ms.width() as i64);
        // Register-offset loads are never checked for alignment (ISA 8.4).
        debug_assert_eq!(acc.amask, 0);
        self.b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, end, bytes)
    }

    /// Lane 0 of the `i64x2` chunks `chunks` (two lanes each), and an `i8` that is 1 when lane
    /// `i` is lane 0 plus `i * step` in every lane (64-bit wrapping): the entry tests of
    /// read-only lane offsets (`Tx::ro_offsets`) and of stepped vector bases
    /// (`analysis::Stepped`).
    pub(crate) fn lanes_step(&mut self, chunks: &[Value], step: i64) -> (Value, Value) {
        let lane0 = self.b.ins().extractlane(chunks[0], 0);
        let s0 = self.b.ins().splat(I64X2, lane0);
        let mut all = None;
        for (c, &ch) in chunks.iter().enumerate() {
            let d = self.b.ins().isub(ch, s0);
            let (i, j) = (2 * c as u64, 2 * c as u64 + 1);
            let k = self.vconst2(i.wrapping_mul(step as u64), j.wrapping_mul(step as u64));
            let eq = self.b.ins().icmp(IntCC::Equal, d, k);
            all = Some(all.map_or(eq, |a| self.b.ins().band(a, eq)));
        }
        let all = all.expect("at least one chunk");
        (lane0, self.b.ins().vall_true(all))
    }

    /// The lowest and highest lane EA of `addr`, the or of every lane EA's low bits (enough
    /// for the alignment check: a conservative one), and whether no lane EA wrapped, from the
    /// [`RoBounds`] of its read-only register: `None` when it has none.
    fn ro_range(&mut self, addr: Addr) -> Option<RangeCheck> {
        let (reg, shift, scalar, k) = self.ro_split(addr)?;
        let rb = *self
            .ro_bounds
            .iter()
            .find(|b| b.reg == reg && b.shift == shift)?;
        let s = self.ro_scalar_plus(scalar, k, shift);
        let [min, max, orx] = [0, 8, 16].map(|k| self.b.ins().stack_load(I64, I64, rb.slot, k));
        Some(self.span_over(s, min, max, orx))
    }

    /// The EA range `[lo, hi]` of lanes `s + x_i` with `min <= x_i <= max` (unsigned), the or
    /// of `s` with `orx` (the or of the `x_i`'s low bits: clear in both, clear in every sum),
    /// and whether `s + max` did not wrap: then no lane's sum does, and every EA lies in the
    /// range.
    fn span_over(&mut self, s: Value, min: Value, max: Value, orx: Value) -> RangeCheck {
        let lo = self.b.ins().iadd(s, min);
        let hi = self.b.ins().iadd(s, max);
        let nowrap = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, hi, s);
        let or = self.b.ins().bor(s, orx);
        (lo, hi, or, nowrap)
    }

    /// The unsigned bounds `[lo, hi]` of register `n`'s lanes, and its chunks: from
    /// [`Self::chunk_range`] (exact within 4 GiB, wider but still holding every lane
    /// otherwise), reused while the register holds the same value in this body copy. Bounds
    /// are kept only when computed in the block where the current instruction started,
    /// which dominates the rest of the body copy (as shapes are, see `shape`); the list is
    /// cleared with the shapes at every merge point.
    fn lane_bounds(&mut self, n: u8) -> (Vec<Value>, Value, Value) {
        let chunks = self.vget_all(VReg(n));
        // A variable read after a join is a block parameter aliased to the one value every
        // path brings: compare what the values resolve to.
        let dfg = &self.b.func.dfg;
        let key: Vec<Value> = chunks.iter().map(|&c| dfg.resolve_aliases(c)).collect();
        let (lo, hi) = self.cached_bounds(key, BoundsKind::Wide, I64, |t| {
            let (lo, hi, _) = t.chunk_range(&chunks, 0);
            (lo, hi)
        });
        (chunks, lo, hi)
    }

    /// The bounds `(min, max)` (of type `ty`) of kind `kind` of the lanes whose chunks are
    /// `key`: computed by `f` the first time, and kept in a stack slot for the rest of the
    /// body copy when computed in the block where the current instruction started (see
    /// [`Self::lane_bounds`]).
    fn cached_bounds(
        &mut self,
        key: Vec<Value>,
        kind: BoundsKind,
        ty: cranelift_codegen::ir::Type,
        f: impl FnOnce(&mut Self) -> (Value, Value),
    ) -> (Value, Value) {
        let slot = match self
            .lane_bounds
            .iter()
            .find(|b| b.chunks == key && b.kind == kind)
        {
            Some(b) => b.slot,
            None => {
                let (lo, hi) = f(self);
                if self.b.current_block().is_none() || self.b.current_block() != self.inst_block {
                    return (lo, hi);
                }
                let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                    StackSlotKind::ExplicitSlot,
                    16,
                    3,
                ));
                self.b.ins().stack_store(I64, lo, slot, 0);
                self.b.ins().stack_store(I64, hi, slot, 8);
                self.lane_bounds.push(LaneBounds {
                    chunks: key,
                    kind,
                    slot,
                });
                slot
            }
        };
        let lo = self.b.ins().stack_load(I64, ty, slot, 0);
        let hi = self.b.ins().stack_load(I64, ty, slot, 8);
        (lo, hi)
    }

    /// The bounds `(min, max)` of packed register `n`'s 32-bit lanes as `i32` values,
    /// unsigned or signed (`sign`): the chunks folded pairwise with SSE4.1 minima and
    /// maxima, then the four lanes of the last (`Tx::fold_lanes`). Shared by every gather
    /// or scatter indexed by the same value and by an add to it (`Tx::packed_int`).
    pub(crate) fn packed_bounds(&mut self, n: VReg, sign: bool) -> (Value, Value) {
        let raw = self.packed_vals(n, 2);
        let dfg = &self.b.func.dfg;
        let key: Vec<Value> = raw.iter().map(|&c| dfg.resolve_aliases(c)).collect();
        self.cached_bounds(key, BoundsKind::Packed { sign }, I32, |t| {
            if sign {
                (
                    t.fold_words(&raw, |t, a, b| t.b.ins().smin(a, b)),
                    t.fold_words(&raw, |t, a, b| t.b.ins().smax(a, b)),
                )
            } else {
                (
                    t.fold_words(&raw, |t, a, b| t.b.ins().umin(a, b)),
                    t.fold_words(&raw, |t, a, b| t.b.ins().umax(a, b)),
                )
            }
        })
    }

    /// The 32-bit lanes of the packed vectors `raw` folded into one `i32` by `f`: the
    /// vectors pairwise, then the four lanes of the last (`Tx::fold_lanes`), lane 0
    /// extracted.
    fn fold_words(&mut self, raw: &[Value], f: Fold) -> Value {
        let mut v: Vec<Value> = raw.iter().map(|&v| self.bitcast(I32X4, v)).collect();
        while v.len() > 1 {
            v = v.chunks(2).map(|c| f(self, c[0], c[1])).collect();
        }
        let x = self.fold_lanes(v[0], f, 2);
        self.b.ins().extractlane(x, 0)
    }

    /// The highest of packed register `n`'s 32-bit lanes (unsigned), as an `i32` value: the
    /// base-run check of a gather needs no minimum (`Tx::in_base_run`). From the register's
    /// full bounds when they are kept already, else folded like them and kept the same way.
    pub(crate) fn packed_max(&mut self, n: VReg) -> Value {
        let raw = self.packed_vals(n, 2);
        let dfg = &self.b.func.dfg;
        let key: Vec<Value> = raw.iter().map(|&c| dfg.resolve_aliases(c)).collect();
        let full = BoundsKind::Packed { sign: false };
        if self
            .lane_bounds
            .iter()
            .any(|b| b.chunks == key && b.kind == full)
        {
            return self.packed_bounds(n, false).1;
        }
        let (_, hi) = self.cached_bounds(key, BoundsKind::PackedMax, I32, |t| {
            let hi = t.fold_words(&raw, |t, a, b| t.b.ins().umax(a, b));
            (hi, hi)
        });
        hi
    }

    /// [`WideIndex`] of an access whose lane EAs are a scalar plus a vector register's lanes
    /// shifted left by at most 3 (`None` for other forms). Lane `i`'s EA is `s + (x_i << sh)`
    /// with `lo_x <= x_i <= hi_x`: when `hi_x < 2^61` no shift overflows, and when
    /// `s + (hi_x << sh)` does not wrap no lane's sum does, so every EA lies in
    /// `[s + (lo_x << sh), s + (hi_x << sh)]`. Otherwise (`nowrap` false) the caller checks
    /// lane by lane, which handles EAs that wrap.
    fn wide_index(&mut self, addr: Addr, amask: u64) -> Option<WideIndex> {
        let (n, sh, scalar) = vec_split(addr)?;
        if sh > 3 {
            return None;
        }
        let s = self.ro_scalar(scalar);
        let (chunks, lo_x, hi_x) = self.lane_bounds(n);
        let min = self.b.ins().ishl_imm_s(lo_x, sh as i64);
        let max = self.b.ins().ishl_imm_s(hi_x, sh as i64);
        // A shift of at least the alignment's bits clears the lanes' low bits by itself.
        let orx = if amask >> sh == 0 {
            self.iconst(0)
        } else {
            let mut v = chunks[0];
            for &c in &chunks[1..] {
                v = self.b.ins().bor(v, c);
            }
            let a = self.b.ins().extractlane(v, 0);
            let b = self.b.ins().extractlane(v, 1);
            let x = self.b.ins().bor(a, b);
            self.b.ins().ishl_imm_s(x, sh as i64)
        };
        let (lo, hi, or, nowrap) = self.span_over(s, min, max, orx);
        let small = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedLessThan, hi_x, 1 << 61);
        let nowrap = self.b.ins().band(small, nowrap);
        Some(WideIndex {
            chunks,
            scalar: s,
            sh,
            range: (lo, hi, or, nowrap),
        })
    }

    /// The scalar part of an EA split by [`Self::ro_split`], with what the vector operand
    /// adds to the read-only register's lanes (`k`), shifted as the lanes are: lane `i`'s EA
    /// is `s + ((x_i + k) << shift)`, which is `(s + (k << shift)) + (x_i << shift)` in 64-bit
    /// wrapping arithmetic.
    fn ro_scalar_plus(&mut self, scalar: RoScalar, k: Option<Value>, shift: u32) -> Value {
        let s = self.ro_scalar(scalar);
        match k {
            Some(k) => {
                let k = self.b.ins().ishl_imm_s(k, shift as i64);
                self.b.ins().iadd(s, k)
            }
            None => s,
        }
    }

    /// The scalar part of an EA split by [`vec_split`].
    fn ro_scalar(&mut self, scalar: RoScalar) -> Value {
        match scalar {
            RoScalar::Reg(r, sh) => {
                let x = self.sget(r);
                self.b.ins().ishl_imm_s(x, sh as i64)
            }
            RoScalar::Imm(k) => self.iconst(k),
        }
    }

    /// For a gather or scatter through a register whose lane step was tested at loop entry
    /// (see [`RoBounds`]) with a step `want` accepts: lane 0's EA, whether the lanes were
    /// found stepping so (an `i64`, 1 when they were), and the step. Through a read-only
    /// register, or one holding it plus a scalar (`Tx::ro_plus`), lane 0 is the one the test
    /// stored; through one that steps like a register of `ind_v` (`Tx::ind_of`), it is the
    /// register's lane 0 now.
    fn ro_tested(&mut self, addr: Addr, want: impl Fn(i64) -> bool) -> Option<(Value, Value, i64)> {
        let (n, shift, scalar) = vec_split(addr)?;
        let ro = self.ro_split(addr);
        let root = match ro {
            Some((reg, ..)) => reg,
            None => self.ind_of[n as usize]?,
        };
        let rb = *self
            .ro_bounds
            .iter()
            .find(|b| b.reg == root && b.shift == shift && b.step != 0 && want(b.step))?;
        let (s, lane0) = match ro {
            Some((_, _, _, k)) => {
                let s = self.ro_scalar_plus(scalar, k, shift);
                (s, self.b.ins().stack_load(I64, I64, rb.slot, 24))
            }
            None => {
                let s = self.ro_scalar(scalar);
                let c0 = self.vget(VReg(n), 0);
                (s, self.b.ins().extractlane(c0, 0))
            }
        };
        let off = self.b.ins().ishl_imm_s(lane0, shift as i64);
        let ea0 = self.b.ins().iadd(s, off);
        let ok = self.b.ins().stack_load(I64, I64, rb.slot, 32);
        Some((ea0, ok, rb.step))
    }

    /// [`Self::ro_tested`] for lanes one element apart: lane 0's EA and whether the lanes
    /// were found contiguous.
    fn ro_contig(&mut self, addr: Addr, ms: MemSem) -> Option<(Value, Value)> {
        let (_, shift, _) = vec_split(addr)?;
        if shift > ms.log2e as u32 {
            return None;
        }
        let step = 1i64 << (ms.log2e as u32 - shift);
        let (ea0, ok, _) = self.ro_tested(addr, |s| s == step)?;
        Some((ea0, ok))
    }

    /// [`Self::ro_tested`] for lanes a constant other than one element apart (the step of
    /// `TxConfig::strides`): lane 0's EA, whether the lanes were found stepping so, and the
    /// access's byte stride ([`lane_stride_bytes`]).
    fn ro_strided(&mut self, addr: Addr, ms: MemSem) -> Option<(Value, Value, i64)> {
        let (_, shift, _) = vec_split(addr)?;
        let contiguous = (shift <= ms.log2e as u32).then(|| 1i64 << (ms.log2e as u32 - shift));
        let amask = self.align_mask(ms);
        let bytes = move |d: i64| lane_stride_bytes(d, shift, ms, amask);
        let (ea0, ok, d) = self.ro_tested(addr, |d| Some(d) != contiguous && bytes(d).is_some())?;
        Some((ea0, ok, bytes(d)?))
    }

    /// In a hot straight-line region: lane 0's EA of `addr` and whether its lanes are
    /// consecutive elements (an `i8`, 1 when the vector operand's lane `i` is lane 0's plus
    /// `i` elements), tested at the access, for [`Tx::ro_contig`]'s contiguous path. Loops
    /// test read-only lane offsets once at entry instead (`Tx::ro_offsets`); a straight-line
    /// region keeps its registers in the register file and has no entry to amortise a test
    /// over, and one pass runs each of its accesses once. A loop with a branch inside runs
    /// as such regions, one entry per iteration: a branch loop with a scalar `if`, addressing
    /// through `V.ADD v1, v9, s7` with `v9` a lane index built before it (1M elements, VL
    /// 32): 10.0 ms on per-lane gathers and scatters, 0.9x the interpreter.
    fn dyn_contig(&mut self, addr: Addr, ms: MemSem) -> Option<(Value, Value)> {
        if !self.straight_hot || self.vl < 4 {
            return None;
        }
        let (n, shift, scalar) = vec_split(addr)?;
        if shift > ms.log2e as u32 {
            return None;
        }
        let step = 1i64 << (ms.log2e as u32 - shift);
        let chunks = self.vget_all(VReg(n));
        let (lane0, ok) = self.lanes_step(&chunks, step);
        let s = self.ro_scalar(scalar);
        let off = self.b.ins().ishl_imm_s(lane0, shift as i64);
        let ea0 = self.b.ins().iadd(s, off);
        Some((ea0, self.b.ins().uextend(I64, ok)))
    }

    /// The VL lanes of `chunks` (`i64x2` values), each an `i64`.
    fn lanes_of(&mut self, chunks: &[Value]) -> Vec<Value> {
        (0..self.vl as usize)
            .map(|i| self.b.ins().extractlane(chunks[i / 2], (i % 2) as u8))
            .collect()
    }

    /// The chunks of a register used as an address operand (`lc0` reads LC0BASE + lane); a
    /// broadcast is built once.
    fn addr_reg(&mut self, r: Reg) -> Vec<Value> {
        match r {
            Reg::S(n) => {
                let s = self.sget(SReg(n));
                let v = self.b.ins().splat(I64X2, s);
                vec![v; self.nch]
            }
            Reg::V(n) => self.vget_all(VReg(n)),
            Reg::Lc0 => {
                let l = self.b.use_var(self.lc0);
                let s = self.b.ins().splat(I64X2, l);
                (0..self.nch)
                    .map(|c| {
                        let ids = self.lane_ids(c);
                        self.b.ins().iadd(s, ids)
                    })
                    .collect()
            }
        }
    }

    /// The EA of lane 0 of a contiguous access.
    pub(crate) fn contig_ea0(&mut self, base: SReg, off: SOrImm, log2e: u8) -> Value {
        let bo = self.contig_base(base, off);
        let l = self.b.use_var(self.lc0);
        let l = self.b.ins().ishl_imm_s(l, log2e as i64);
        self.b.ins().iadd(bo, l)
    }

    /// `base + off` of a contiguous access (its EA at LC0BASE 0).
    pub(crate) fn contig_base(&mut self, base: SReg, off: SOrImm) -> Value {
        let b = self.sget(base);
        let o = match off {
            SOrImm::Reg(r) => self.sget(r),
            SOrImm::Imm(i) => self.iconst(i as i64 as u64),
        };
        self.b.ins().iadd(b, o)
    }

    /// The stride of an access's lane EAs when they are affine (see [`super::shape`]): the
    /// contiguous form has none here (it has its own paths).
    fn ea_stride(&self, addr: Addr) -> Option<i64> {
        match addr {
            Addr::Contig { .. } => None,
            Addr::RegOff { base, off, shift } => self.regoff_stride(base, off, shift),
            Addr::Imm { base, .. } => self.imm_stride(base),
        }
    }

    /// The lane EAs of an access as an affine value, when [`Self::ea_stride`] has one.
    fn ea_shape(&mut self, addr: Addr) -> Option<super::shape::Affine> {
        match addr {
            Addr::Contig { .. } => None,
            Addr::RegOff { base, off, shift } => self.regoff_shape(base, off, shift),
            Addr::Imm { base, off } => self.imm_shape(base, off),
        }
    }

    /// The common EA when every lane has the same one (scalar operands, or vectors the
    /// shape analysis knows are uniform).
    fn uniform_ea(&mut self, addr: Addr) -> Option<Value> {
        if self.ea_stride(addr) != Some(0) {
            return None;
        }
        self.ea_shape(addr).map(|a| a.base)
    }

    /// Per-lane EAs as `i64x2` chunks.
    fn ea_chunks(&mut self, addr: Addr, log2e: u8) -> Vec<Value> {
        match addr {
            Addr::Contig { base, off } => {
                let ea0 = self.contig_ea0(base, off, log2e);
                let s = self.b.ins().splat(I64X2, ea0);
                (0..self.nch)
                    .map(|c| {
                        let k = self.vconst2((2 * c as u64) << log2e, (2 * c as u64 + 1) << log2e);
                        self.b.ins().iadd(s, k)
                    })
                    .collect()
            }
            Addr::RegOff { base, off, shift } => {
                let bs = self.addr_reg(base);
                let os = self.addr_reg(off);
                let sh = self.iconst(shift as u64);
                bs.into_iter()
                    .zip(os)
                    .map(|(b, o)| {
                        let o = self.b.ins().ishl(o, sh);
                        self.b.ins().iadd(b, o)
                    })
                    .collect()
            }
            Addr::Imm { base, off } => {
                let bs = self.addr_reg(base);
                let k = self.vconst2(off, off);
                bs.into_iter().map(|b| self.b.ins().iadd(b, k)).collect()
            }
        }
    }

    /// Guest memory, or tile space for `.local` (when the region loaded it): the host address
    /// of EA 0, the size in bytes, and log2 of the permission unit (4 KiB pages, 64-byte
    /// granules).
    pub(super) fn space(&self, local: bool) -> (Value, Value, i64) {
        match self.tile {
            Some(t) if local => (t.base, t.size, 6),
            _ => (self.mem_base, self.mem_extent, 12),
        }
    }

    /// Branch to `ok` when `[ea, ea + len)` is inside the space of `local` with permission
    /// `need` in every page (granule) it touches, which one lookup in the permitted-run table
    /// proves, and `ea & align_mask == 0`; else to `fail`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn check_space(
        &mut self,
        local: bool,
        ea: Value,
        len: u64,
        need: u8,
        align_mask: u64,
        ok: Block,
        fail: Block,
    ) {
        let (_, size, shift) = self.space(local);
        self.require_in_bounds(ea, size, len, align_mask, fail);
        // ea < size and ea + len <= size: unit ea >> shift is inside the table. Units
        // u0..=u1 are all permitted when the run from u0 is longer than u1 - u0.
        let u0 = self.b.ins().ushr_imm_s(ea, shift);
        let last = self.b.ins().iadd_imm_s(ea, len as i64 - 1);
        let u1 = self.b.ins().ushr_imm_s(last, shift);
        let span = self.b.ins().isub(u1, u0);
        let run = self.run_at(local, need, u0);
        let covered = self.b.ins().icmp(IntCC::UnsignedLessThan, span, run);
        self.b.ins().brif(covered, ok, &[], fail, &[]);
    }

    /// Entry `unit` (a page, or a granule for `.local`) of the permitted-run table for `need`:
    /// how many units from it on all have that permission (`u32` entries).
    pub(super) fn run_at(&mut self, local: bool, need: u8, unit: Value) -> Value {
        let table = self.run_table(local, need);
        let off = self.b.ins().ishl_imm_s(unit, 2);
        let at = self.b.ins().iadd(table, off);
        self.b.ins().uload32(flags(), at, 0)
    }

    /// The permitted-run table for `need` of guest memory (per page, loaded from the context
    /// here) or of tile space (per granule).
    fn run_table(&mut self, local: bool, need: u8) -> Value {
        match self.tile {
            Some(t) if local => {
                if need == PERM_R {
                    t.run_r
                } else {
                    t.run_w
                }
            }
            _ => {
                let off = match need {
                    PERM_R => crate::abi::off::MEM_RUN_R,
                    _ => crate::abi::off::MEM_RUN_W,
                };
                let tf = cranelift_codegen::ir::MemFlagsData::trusted();
                self.b.ins().load(I64, tf, self.ctx, off)
            }
        }
    }

    /// Go on in a new block only when `[ea, ea + len)` lies inside `[0, size)` (tested as
    /// `ea < size && size - ea >= len`, which cannot wrap) and `ea & align_mask == 0`; else
    /// branch to `fail`.
    fn require_in_bounds(
        &mut self,
        ea: Value,
        size: Value,
        len: u64,
        align_mask: u64,
        fail: Block,
    ) {
        let c1 = self.b.ins().icmp(IntCC::UnsignedLessThan, ea, size);
        let room = self.b.ins().isub(size, ea);
        let c2 = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, room, len as i64);
        let inb = self.b.ins().band(c1, c2);
        let inb = self.and_aligned(inb, ea, align_mask);
        let next = self.b.create_block();
        self.b.ins().brif(inb, next, &[], fail, &[]);
        self.b.switch_to_block(next);
        self.b.seal_block(next);
    }

    /// One lane loaded from `host + off` with extension, as i64.
    pub(crate) fn load_lane(&mut self, host: Value, off: i32, log2e: u8, ext: Ext) -> Value {
        let f = flags();
        let sign = ext == Ext::Sign;
        match (log2e, sign) {
            (0, true) => self.b.ins().sload8(I64, f, host, off),
            (0, false) => self.b.ins().uload8(I64, f, host, off),
            (1, true) => self.b.ins().sload16(I64, f, host, off),
            (1, false) => self.b.ins().uload16(I64, f, host, off),
            (2, true) => self.b.ins().sload32(f, host, off),
            (2, false) => self.b.ins().uload32(f, host, off),
            _ => self.b.ins().load(I64, f, host, off),
        }
    }

    fn pair(&mut self, a: Value, b: Option<Value>) -> Value {
        let v = self.b.ins().scalar_to_vector(I64X2, a);
        match b {
            Some(b) => self.b.ins().insertlane(v, b, 1),
            None => v,
        }
    }

    /// VL contiguous lanes of width E loaded from `host` (checked), extended, as chunks.
    fn load_contig(&mut self, host: Value, log2e: u8, ext: Ext) -> Vec<Value> {
        let vl = self.vl as usize;
        let f = flags();
        let sign = ext == Ext::Sign;
        let per8 = 8usize >> log2e; // lanes per 8 bytes
        if log2e == 3 {
            if vl == 1 {
                let x = self.b.ins().load(I64, f, host, 0);
                return vec![self.pair(x, None)];
            }
            return (0..self.nch)
                .map(|c| self.b.ins().load(I64X2, f, host, (16 * c) as i32))
                .collect();
        }
        if vl < per8 || (log2e == 2 && vl < 2) {
            // Fewer lanes than one extending load covers: lane by lane.
            let lanes: Vec<Value> = (0..vl)
                .map(|i| self.load_lane(host, (i << log2e) as i32, log2e, ext))
                .collect();
            return lanes
                .chunks(2)
                .map(|p| self.pair(p[0], p.get(1).copied()))
                .collect();
        }
        let mut out = Vec::with_capacity(self.nch);
        for g in 0..vl / per8 {
            let o = (8 * g) as i32;
            match log2e {
                2 => out.push(if sign {
                    self.b.ins().sload32x2(f, host, o)
                } else {
                    self.b.ins().uload32x2(f, host, o)
                }),
                1 => {
                    let v = if sign {
                        self.b.ins().sload16x4(f, host, o)
                    } else {
                        self.b.ins().uload16x4(f, host, o)
                    };
                    out.extend(self.widen(v, sign));
                }
                _ => {
                    let v = if sign {
                        self.b.ins().sload8x8(f, host, o)
                    } else {
                        self.b.ins().uload8x8(f, host, o)
                    };
                    let (lo, hi) = self.widen2(v, sign);
                    out.extend(self.widen(lo, sign));
                    out.extend(self.widen(hi, sign));
                }
            }
        }
        out
    }

    fn widen2(&mut self, v: Value, sign: bool) -> (Value, Value) {
        if sign {
            (self.b.ins().swiden_low(v), self.b.ins().swiden_high(v))
        } else {
            (self.b.ins().uwiden_low(v), self.b.ins().uwiden_high(v))
        }
    }

    fn widen(&mut self, v: Value, sign: bool) -> [Value; 2] {
        let (a, b) = self.widen2(v, sign);
        [a, b]
    }

    /// Store the low E bytes of each of VL lanes contiguously at `host` (checked).
    fn store_contig(&mut self, host: Value, log2e: u8, data: &[Value]) {
        let vl = self.vl as usize;
        let f = flags();
        let e = 1usize << log2e;
        if vl * e < 16 || (log2e < 3 && data.len() < (8 >> log2e)) {
            for i in 0..vl {
                let x = self.b.ins().extractlane(data[i / 2], (i % 2) as u8);
                self.store_lane(x, host, (i * e) as i32, log2e);
            }
            return;
        }
        for (i, v) in self.narrow(log2e, data).into_iter().enumerate() {
            self.chunk_store(f, v, host, i);
        }
    }

    /// The store of chunk `c` (16 bytes at `host + 16 c`) of a contiguous store: now, or in
    /// the streaming copy of a body whose stores may go in any order (`Tx::defer_plan`) held
    /// back to the iteration's end ([`Self::flush_stores`]).
    fn chunk_store(&mut self, f: MemFlagsData, v: Value, host: Value, c: usize) {
        match &mut self.held {
            Some(held) => held.push(HeldStore { c, f, v, host }),
            None => {
                self.b.ins().store(f, v, host, (16 * c) as i32);
            }
        }
    }

    /// Emit the stores held back in this iteration of the streaming copy ([`HeldStore`]),
    /// chunk by chunk: every store's chunk 0, then every store's chunk 1, ... (the order
    /// `Tx::precheck` proved free when it entered the copy: no two stores of the proven
    /// iterations write one byte). Cranelift's optimiser places each pure value at its first
    /// use, so what the chunks need (an interleave group's shared loads and shuffles,
    /// `Tx::interleave_offset`) is computed chunk by chunk too, instead of every chunk of
    /// the first store's data, live until the last store's use.
    pub(crate) fn flush_stores(&mut self) {
        if let Some(held) = self.held.as_mut() {
            let held = std::mem::take(held);
            self.emit_stores(held);
        }
    }

    /// On an exit path: the held stores ([`Self::flush_stores`]), which stay held for the
    /// path that continues.
    pub(crate) fn emit_held_stores(&mut self) {
        if let Some(held) = self.held.clone() {
            self.emit_stores(held);
        }
    }

    /// `held` as stores, chunk by chunk (stable: in program order within a chunk).
    fn emit_stores(&mut self, mut held: Vec<HeldStore>) {
        held.sort_by_key(|h| h.c);
        for h in held {
            self.b.ins().store(h.f, h.v, h.host, (16 * h.c) as i32);
        }
    }

    /// The low E bytes of every lane of `data` (chunks of two 8-byte lanes), packed into
    /// 16-byte vectors: two vectors narrowed into one per halving of the width.
    fn narrow(&mut self, log2e: u8, data: &[Value]) -> Vec<Value> {
        let e = 1usize << log2e;
        let mut vs: Vec<Value> = data.iter().map(|&v| self.bitcast(I8X16, v)).collect();
        let mut w = 8usize;
        while w > e {
            let half = w / 2;
            let mut idx = [0u8; 16];
            let per = 16 / w;
            for j in 0..per {
                for k in 0..half {
                    idx[j * half + k] = (j * w + k) as u8;
                    idx[8 + j * half + k] = (16 + j * w + k) as u8;
                }
            }
            vs = vs
                .chunks(2)
                .map(|p| self.shuffle(p[0], p[1], idx))
                .collect();
            w = half;
        }
        vs
    }

    /// Store the low E bytes of every active lane of `data` (chunks) at `host + i * E` under
    /// a partial mask (a loop's tail). The lanes are narrowed to E bytes once (as a full store
    /// would) into a scratch area; when the active lanes are a prefix (an `ENDLOOP` tail: the
    /// lanes below the trip count), the 16-byte chunks they fill are copied whole in a loop,
    /// and the lanes after the last whole chunk (every lane for other masks) go one by one.
    /// Bytes of inactive lanes are never written, not even with their old values (another
    /// group may own them).
    fn store_active_lanes(&mut self, host: Value, log2e: u8, data: &[Value]) {
        let vl = self.vl as usize;
        if vl << log2e < 16 || (log2e < 3 && data.len() < (8 >> log2e)) {
            self.store_active_strided(host, log2e, log2e, data);
            return;
        }
        let narrow = self.narrow(log2e, data);
        self.store_active_bytes(host, log2e, &narrow);
    }

    /// Store the active lanes' E bytes of `bytes` (lanes packed E bytes apiece into 16-byte
    /// vectors, `VL * E >= 16`) at `host + i * E` (see [`Self::store_active_lanes`]).
    fn store_active_bytes(&mut self, host: Value, log2e: u8, bytes: &[Value]) {
        let mask = self.b.use_var(self.mask);
        // The masked tail storing an iteration-local register it also stores to the packed
        // slot (`Tx::pending_local`, the same chunks): the lanes are copied from there.
        let shared = self.pending_local.iter().find_map(|(vals, off, _)| {
            (vals.len() == bytes.len() && vals.iter().zip(bytes).all(|(v, b)| *v == Some(*b)))
                .then_some(*off)
        });
        let pd = match (shared, self.plocal) {
            (Some(off), Some(slot)) => self.b.ins().stack_addr(I64, slot, off),
            _ => self.scratch_addr(1),
        };
        for (c, &v) in bytes.iter().enumerate() {
            // With the pending slot stores of the same chunk (`Tx::pending_local`).
            self.flush_pending_local(Some(c));
            if shared.is_none() {
                self.b
                    .ins()
                    .store(MemFlagsData::trusted(), v, pd, 16 * c as i32);
            }
        }
        // Whole chunks of a prefix mask: `mask & (mask + 1) == 0` (the masked tail's entry
        // checked that already, `Tx::masked_tail_entry`).
        let lpc = 4 - log2e as i64;
        let n = self.b.ins().popcnt(mask);
        let q = self.b.ins().ushr_imm_s(n, lpc);
        let zero = self.iconst(0);
        let q = if self.masked_tail {
            q
        } else {
            let plus = self.b.ins().iadd_imm_s(mask, 1);
            let t = self.b.ins().band(mask, plus);
            let prefix = self.b.ins().icmp_imm_s(IntCC::Equal, t, 0);
            self.b.ins().select(prefix, q, zero)
        };
        self.duff_chain(q, bytes.len(), |t, c| {
            let o = 16 * c as i32;
            let v = t.b.ins().load(I8X16, MemFlagsData::trusted(), pd, o);
            t.b.ins().store(flags(), v, host, o);
        });
        let first = self.b.ins().ishl_imm_s(q, lpc);
        let lane = |t: &mut Self, i: Value| {
            let oe = t.b.ins().ishl_imm_s(i, log2e as i64);
            let at = t.b.ins().iadd(pd, oe);
            let tf = cranelift_codegen::ir::MemFlagsData::trusted();
            let x = match log2e {
                0 => t.b.ins().uload8(I64, tf, at, 0),
                1 => t.b.ins().uload16(I64, tf, at, 0),
                2 => t.b.ins().uload32(tf, at, 0),
                _ => t.b.ins().load(I64, tf, at, 0),
            };
            let h = t.b.ins().iadd(host, oe);
            t.store_lane(x, h, 0, log2e);
        };
        if self.masked_tail {
            // A prefix of `n` lanes: the lanes left are `first..n`, all active.
            self.lane_loop(first, n, lane);
        } else {
            self.for_each_lane_from(first, |t, i| t.if_lane_active(mask, i, |t| lane(t, i)));
        }
    }

    /// Run `then` when lane `i` of `mask` is set.
    fn if_lane_active(&mut self, mask: Value, i: Value, then: impl FnOnce(&mut Self)) {
        let st = self.b.create_block();
        let next = self.b.create_block();
        let m = self.b.ins().ushr(mask, i);
        let on = self.b.ins().band_imm_s(m, 1);
        self.b.ins().brif(on, st, &[], next, &[]);
        self.b.switch_to_block(st);
        self.b.seal_block(st);
        then(self);
        self.b.ins().jump(next, &[]);
        self.b.switch_to_block(next);
        self.b.seal_block(next);
    }

    fn store_lane(&mut self, x: Value, host: Value, off: i32, log2e: u8) {
        let f = flags();
        match log2e {
            0 => self.b.ins().istore8(f, x, host, off),
            1 => self.b.ins().istore16(f, x, host, off),
            2 => self.b.ins().istore32(f, x, host, off),
            _ => self.b.ins().store(f, x, host, off),
        };
    }

    pub(crate) fn kind_word(&self, ms: MemSem, local: bool) -> u32 {
        let mut k = ms.log2e as u32;
        match ms.ext {
            Ext::Sign => k |= kind::SEXT,
            Ext::Zero => k |= kind::ZEXT,
            Ext::None => {}
        }
        if local {
            k |= kind::LOCAL;
        }
        if self.strict && ms.strict_align_applies() {
            k |= kind::ALIGN;
        }
        k
    }

    pub(crate) fn align_mask(&self, ms: MemSem) -> u64 {
        if self.strict && ms.strict_align_applies() {
            ms.width() - 1
        } else {
            0
        }
    }

    /// Branch to `next` when the mask is (statically or dynamically) all ones, else `slow`.
    fn require_full(&mut self, next: Block, slow: Block) {
        if self.full {
            self.b.ins().jump(next, &[]);
        } else {
            let m = self.b.use_var(self.mask);
            let all = self.all() as i64;
            let is_full = self.b.ins().icmp_imm_s(IntCC::Equal, m, all);
            self.b.ins().brif(is_full, next, &[], slow, &[]);
        }
    }

    /// Translate a memory instruction. Returns false if `inst` is not one.
    pub(crate) fn mem_inst(&mut self, pc: u64, inst: &Inst) -> bool {
        let Some(ms) = inst.opcode().mem() else {
            return false;
        };
        let (data, addr, local) = operands(inst, ms).expect("memory format");
        let len = (self.vl as u64) << ms.log2e;
        let proven = self.proven.iter().find(|p| p.0 == pc).and_then(|p| p.1);
        if let (Some(range), Some(_)) = (proven, self.strip) {
            let acc = self.gather_access(inst);
            self.lanes_proven(acc, range);
            return true;
        }
        if self.full && (!local || self.tile.is_some()) {
            if let Addr::Contig { base, off } = addr {
                self.contig_full(pc, ms, data, base, off, local);
                return true;
            }
            if let Some(j) = self.hoisted_here(pc) {
                self.hoisted_access(j, ms, data);
                return true;
            }
            if self.ea_stride(addr) == Some(ms.width() as i64) {
                // Affine with stride E: contiguous, whichever form spelled it.
                let ea0 = self.ea_shape(addr).expect("an affine EA").base;
                self.contig_checked(pc, ms, data, ea0, local);
                return true;
            }
            if ms.dir == Dir::Load {
                if let Some(ea) = self.uniform_ea(addr) {
                    self.uniform_load(pc, ms, data, ea, local);
                    return true;
                }
            }
        }
        // Only the native fast paths need a join; without them (tile space without its
        // view, helper-based straight-line code) the general path is emitted in the current
        // block.
        let fast_paths = !((local && self.tile.is_none()) || self.helpers);
        let (join, slow) = if fast_paths {
            let slow = self.b.create_block();
            if self.full {
                self.b.set_cold_block(slow);
            }
            (self.b.create_block(), slow)
        } else {
            let here = self.b.current_block().expect("translating in a block");
            (here, here)
        };
        let need = need(ms);
        let amask = self.align_mask(ms);
        let acc = Access {
            ms,
            data,
            addr,
            local,
            need,
            amask,
        };
        // Lane EA chunks the inline path computed (they dominate its slow path too).
        let mut eas_done: Option<Vec<Value>> = None;
        // Whether the inline gather left its destination packed (`Tx::gather_packs`): then
        // the helper path leaves it packed too, so both reach the join in one form.
        let mut packed = false;
        // Native fast paths on guest memory. Straight-line code compiled for compile speed
        // (`Tx::helpers`) always takes the helper, which reads and writes the register file
        // in place, so it compiles to a call instead of ~60 instructions per access.
        if fast_paths {
            if let Addr::Contig { base, off } = addr {
                // The whole group's range checked, whatever the mask: then a full mask is
                // the plain native access, a partial one (a loop's tail) loads the group and
                // blends it in, or stores the active lanes one by one (bytes of inactive lanes
                // are never written, not even with their old value: another group may own
                // them). A range the check cannot prove goes to the helper.
                let fast = self.b.create_block();
                let ea0 = self.contig_ea0(base, off, ms.log2e);
                self.check_space(local, ea0, len, need, amask, fast, slow);
                self.b.switch_to_block(fast);
                self.b.seal_block(fast);
                let (sb, _, _) = self.space(local);
                let host = self.b.ins().iadd(sb, ea0);
                match ms.dir {
                    Dir::Load => {
                        let vals = self.load_contig(host, ms.log2e, ms.ext);
                        let Reg::V(d) = data else { unreachable!() };
                        self.vset_masked(VReg(d), &vals);
                    }
                    Dir::Store => {
                        let vals = self.data_chunks(data);
                        if self.full {
                            self.store_contig(host, ms.log2e, &vals);
                        } else {
                            let whole = self.b.create_block();
                            let part = self.b.create_block();
                            let done = self.b.create_block();
                            self.require_full(whole, part);
                            self.b.switch_to_block(whole);
                            self.b.seal_block(whole);
                            self.store_contig(host, ms.log2e, &vals);
                            self.b.ins().jump(done, &[]);
                            self.b.switch_to_block(part);
                            self.b.seal_block(part);
                            self.store_active_lanes(host, ms.log2e, &vals);
                            self.b.ins().jump(done, &[]);
                            self.b.switch_to_block(done);
                            self.b.seal_block(done);
                        }
                    }
                }
                self.b.ins().jump(join, &[]);
            } else if ms.dir == Dir::Load || self.full {
                if let Some(ea) = self.uniform_ea(addr) {
                    let fast = self.b.create_block();
                    self.check_space(local, ea, ms.width(), need, amask, fast, slow);
                    self.b.switch_to_block(fast);
                    self.b.seal_block(fast);
                    let (sb, _, _) = self.space(local);
                    let host = self.b.ins().iadd(sb, ea);
                    match ms.dir {
                        Dir::Load => {
                            let x = self.load_lane(host, 0, ms.log2e, ms.ext);
                            let v = self.b.ins().splat(I64X2, x);
                            let vals = vec![v; self.nch];
                            let Reg::V(d) = data else { unreachable!() };
                            self.vset_masked(VReg(d), &vals);
                        }
                        Dir::Store => {
                            // Full mask, one address: the highest lane's bytes win.
                            let top = self.vl as usize - 1;
                            let x = match data {
                                Reg::S(n) => self.sget(SReg(n)),
                                Reg::V(n) => {
                                    let ch = self.vget(VReg(n), top / 2);
                                    self.b.ins().extractlane(ch, (top % 2) as u8)
                                }
                                Reg::Lc0 => unreachable!("decoder rejects lc0 as data"),
                            };
                            self.store_lane(x, host, 0, ms.log2e);
                        }
                    }
                    self.b.ins().jump(join, &[]);
                } else if self.full
                    && !(self.vmem && self.vl as usize >= LANE_LOOP_MIN_VL)
                    && self.strided(addr, ms).is_some()
                {
                    let stride = self.strided(addr, ms).expect("checked");
                    let ea0 = self.ea_shape(addr).expect("affine").base;
                    // A load into a register that can stay packed leaves it so on both paths
                    // (`Tx::strided_inline`, and the helper's below), which start from the
                    // state before the access.
                    packed = self.gather_packs(acc);
                    let forms = self.form;
                    self.strided_inline(acc, ea0, stride, slow);
                    self.b.ins().jump(join, &[]);
                    self.form = forms;
                } else if self.full {
                    // Through a register whose lanes stepped by one element where the region
                    // was compiled (its hints) and whose entry test finds them so: one
                    // contiguous access after one range check; else, or when that check
                    // fails, the lanes of a read-only register, or the helper for a register
                    // made from one or stepping like one (a rare path: inline lanes for it
                    // made the daxpy of `seeds/kernels/daxpy_branch.s` compile 45% longer).
                    // Otherwise the lanes, whose own checks and helper make any trap
                    // precise. A load leaves its destination
                    // in the form the gather would (packed or wide), so that both reach the
                    // join alike: wide where the gather does not pack (64-bit lanes, which a
                    // contiguous load elsewhere keeps "packed" at their own width, and bytes
                    // or halfwords of a group smaller than a chunk, which it packs wider:
                    // `Tx::pack_wider`).
                    let wide =
                        matches!(data, Reg::V(_)) && ms.dir == Dir::Load && !self.gather_packs(acc);
                    packed = self.gather_packs(acc);
                    // The helper path starts from the state before the access (its exits
                    // write the destination's old value back), whatever form the inline
                    // path left the destination in.
                    let forms = self.form;
                    // A read-only register itself keeps the inline lanes behind its test
                    // (tile_stage's column loop: its code ran 1.8% more instructions, 4%
                    // slower, with the helper there).
                    let direct = vec_split(addr).is_some_and(|(n, ..)| self.ro_v & (1 << n) != 0);
                    let (test, dynamic) = match self.ro_contig(addr, ms) {
                        Some(t) => (Some(t), false),
                        None => (self.dyn_contig(addr, ms), true),
                    };
                    // A lane test made here falls back to the inline lanes, as a read-only
                    // register's does.
                    let direct = direct || (dynamic && test.is_some());
                    let strided = if test.is_none() {
                        self.ro_strided(addr, ms)
                    } else {
                        None
                    };
                    if let Some((ea0, ok, stride)) = strided {
                        // Through a register whose lanes stepped by a constant where the
                        // region was compiled, and still do (its entry test): the lanes at
                        // constant offsets from lane 0's host address after one check of
                        // the span they cover; else, or when the span has a hole, the
                        // lanes with their own checks.
                        let st = self.b.create_block();
                        let other = self.b.create_block();
                        self.b.ins().brif(ok, st, &[], other, &[]);
                        self.b.switch_to_block(st);
                        self.b.seal_block(st);
                        self.strided_at(acc, ea0, stride, other);
                        self.b.ins().jump(join, &[]);
                        self.b.switch_to_block(other);
                        self.b.seal_block(other);
                        self.form = forms;
                        eas_done = Some(self.lanes_inline(acc, slow));
                    } else if let Some((ea0, ok)) = test {
                        let contig = self.b.create_block();
                        let other = if direct { self.b.create_block() } else { slow };
                        self.b.ins().brif(ok, contig, &[], other, &[]);
                        self.b.switch_to_block(contig);
                        self.b.seal_block(contig);
                        let fast = self.contig_check(ms, ea0, local, other);
                        match data {
                            Reg::V(d) if wide => {
                                self.b.switch_to_block(fast);
                                self.b.seal_block(fast);
                                let (base, _, _) = self.space(local);
                                let host = self.b.ins().iadd(base, ea0);
                                let vals = self.load_contig(host, ms.log2e, ms.ext);
                                self.vset_raw(VReg(d), &vals);
                            }
                            _ => self.contig_in(fast, ms, data, ea0, local),
                        }
                        if direct {
                            self.b.ins().jump(join, &[]);
                            self.b.switch_to_block(other);
                            self.b.seal_block(other);
                            self.form = forms;
                            eas_done = Some(self.lanes_inline(acc, slow));
                        }
                    } else {
                        eas_done = Some(self.lanes_inline(acc, slow));
                    }
                    self.b.ins().jump(join, &[]);
                    self.form = forms;
                } else {
                    self.lanes_when_full(acc, slow, join);
                }
            } else {
                self.lanes_when_full(acc, slow, join);
            }
            self.b.switch_to_block(slow);
            self.b.seal_block(slow);
        }
        // General path: per-lane EAs, the helper checks every active lane, then accesses.
        // A contiguous access passes lane 0's EA, the helper derives the others. Straight-line
        // code describes the other forms' EAs (`abi::ea`) for the `_ea` helpers, which read
        // vector operands from the register file; loops spill their lane EAs.
        let (eas, kind) = match addr {
            Addr::Contig { base, off } => (vec![self.contig_ea0(base, off, ms.log2e)], 0),
            _ if self.helpers => (self.ea_desc(addr), 2),
            _ => {
                let eas = match eas_done {
                    Some(eas) if !eas.is_empty() => eas,
                    _ => self.ea_chunks(addr, ms.log2e),
                };
                (vec![self.spill(0, &eas)], 1)
            }
        };
        // Why this access reaches the helper: always in helper-based code; else only when
        // the inline path's check failed, or (a gather or scatter under a mask not known to
        // be full) the mask was partial.
        let why = if self.helpers {
            Fallback::FirstCompile
        } else if self.full || matches!(addr, Addr::Contig { .. }) {
            Fallback::FailedCheck
        } else {
            Fallback::PartialMask
        };
        self.fallback(pc, why);
        let m = self.mask_value();
        let kw = self.kind_word(ms, local) as i64;
        let k = self.b.ins().iconst(I32, kw);
        match ms.dir {
            Dir::Load => {
                let Reg::V(d) = data else { unreachable!() };
                // With vectors in the register file the helper writes the active lanes of the
                // destination in place (it writes nothing when a lane faults).
                let pout = if self.vmem {
                    self.vreg_addr(VReg(d))
                } else {
                    self.scratch_addr(1)
                };
                let h = [
                    abi::HelperFn::LoadContig,
                    abi::HelperFn::Load,
                    abi::HelperFn::LoadEa,
                ][kind];
                let ok = self.helper_call(h, &eas, m, k, pout);
                self.guard(ok, pc, Fallback::Fault);
                if packed {
                    // Full mask: every lane is the loaded element, extended.
                    let vals = self.unspill(pout);
                    let bytes = self.narrow(ms.log2e, &vals);
                    self.set_packed(VReg(d), ms, &bytes);
                } else if !self.vmem {
                    let vals = self.unspill(pout);
                    self.vset_masked(VReg(d), &vals);
                }
            }
            Dir::Store => {
                let pd = match data {
                    // The helper reads the data lanes from the register file directly.
                    Reg::V(n) if self.vmem => self.vreg_addr(VReg(n)),
                    _ => {
                        let vals = self.data_chunks(data);
                        self.spill(1, &vals)
                    }
                };
                let h = [
                    abi::HelperFn::StoreContig,
                    abi::HelperFn::Store,
                    abi::HelperFn::StoreEa,
                ][kind];
                let ok = self.helper_call(h, &eas, m, k, pd);
                self.guard(ok, pc, Fallback::Fault);
            }
        }
        if fast_paths {
            self.b.ins().jump(join, &[]);
            self.b.switch_to_block(join);
            self.b.seal_block(join);
        }
        let _ = (I8, I16, Mode::Contig);
        true
    }

    /// `ok && (a & amask) == 0` (just `ok` when no alignment is required).
    pub(crate) fn and_aligned(&mut self, ok: Value, a: Value, amask: u64) -> Value {
        if amask == 0 {
            return ok;
        }
        let low = self.b.ins().band_imm_s(a, amask as i64);
        let al = self.b.ins().icmp_imm_s(IntCC::Equal, low, 0);
        self.b.ins().band(ok, al)
    }

    /// A register-offset or immediate access on guest memory under a statically full mask,
    /// in line. The lane EAs come from SIMD adds and shifts; one check covers the group's
    /// whole EA range `[min, max + E)`: in range (`max <= extent - E`), its pages permitted
    /// (one lookup in the permitted-run table, `MemView::run_r` / `run_w`), every lane aligned
    /// when required. Then plain per-lane loads, or stores in lane order (a later lane's bytes
    /// win, as in the interpreter). Otherwise nothing was accessed and `slow` (the helper
    /// path, which raises the precise trap or handles a range wider than the table's runs)
    /// takes the instruction, reusing the lane EA chunks returned here. Ends in the block after
    /// the accesses.
    fn lanes_inline(&mut self, acc: Access, slow: Block) -> Vec<Value> {
        let Access {
            ms,
            data,
            addr,
            local,
            need: _,
            amask,
        } = acc;
        let vl = self.vl as usize;
        let e = ms.width() as i64;
        // Guest memory in pages, or tile space in granules.
        let (base, extent, _) = self.space(local);
        let lanes_loop = self.vmem && vl >= LANE_LOOP_MIN_VL;
        // A packed index register is written in the region, so never read-only: at most one
        // of the two applies, and a wide index only when neither does.
        let pi = self.packed_index(addr, local, data);
        let wide = if !lanes_loop && pi.is_none() && vl >= 2 && self.ro_split(addr).is_none() {
            self.wide_index(addr, amask)
        } else {
            None
        };
        // A packed index's bounds before the first branch too, where they can be kept for
        // the next access through the same value (`Tx::packed_bounds`): only its highest
        // lane for a gather checked against its base's run first, whose range check (and
        // lowest lane) comes after that check fails.
        let brun = pi.and_then(|pi| Some((pi, self.base_run_of(acc, pi)?)));
        let pmax = brun.map(|((_, n, _, _), _)| self.packed_max(n));
        let mut pbounds = match brun {
            Some(_) => None,
            None => pi.map(|(_, n, ext, _)| self.packed_bounds(n, ext == Ext::Sign)),
        };
        // Before the first branch, so that `slow` can use them too (returned; empty for a
        // wide index, whose lanes need none: `slow` and the lane-by-lane check build them).
        let eas = if wide.is_some() {
            Vec::new()
        } else {
            self.ea_chunks(addr, ms.log2e)
        };
        // With no guest memory (extent 0) there is no table to read: only `extent >= E` goes
        // on, and then `extent - E` does not wrap.
        let chk = self.b.create_block();
        let some = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, extent, e);
        self.b.ins().brif(some, chk, &[], slow, &[]);
        self.b.switch_to_block(chk);
        self.b.seal_block(chk);
        if lanes_loop {
            self.lanes_loop(acc, &eas, slow);
            return eas;
        }
        let fast = self.b.create_block();
        let holes = self.b.create_block();
        // Within the base's run (one compare), else the range check (lanes in another run:
        // a base below its table, `x - 4` for indices from 1), else lane by lane.
        if let Some(((pi, run), mx)) = brun.zip(pmax) {
            let ok = self.in_base_run(acc, run, pi.3, mx);
            let range = self.b.create_block();
            self.b.ins().brif(ok, fast, &[], range, &[]);
            self.b.switch_to_block(range);
            self.b.seal_block(range);
            pbounds = Some(self.packed_bounds(pi.1, false));
        }
        let ro = match &wide {
            Some(w) => Some(w.range),
            None => self.ro_range(addr),
        };
        let (lane_ea, lo, hi, or, nowrap) = match (pi.zip(pbounds), ro) {
            (Some((pi, pb)), _) => self.packed_index_eas(pi, pb, amask),
            // Bounds from the read-only register's, or the wide index register's: the lane
            // EAs are extracted after the check (`lane_ea` empty), so they are not live
            // across it.
            (None, Some((lo, hi, or, nowrap))) => (Vec::new(), lo, hi, or, Some(nowrap)),
            // Two lanes to a chunk: the range from SIMD minima and maxima of the chunks, the
            // lane EAs extracted after the check (`lane_ea` empty).
            (None, None) if vl >= 2 => {
                let (lo, hi, or) = self.chunk_range(&eas, amask);
                (Vec::new(), lo, hi, or, None)
            }
            (None, None) => {
                let lane_ea = self.lanes_of(&eas);
                let (mut lo, mut hi, mut or) = (lane_ea[0], lane_ea[0], lane_ea[0]);
                for &ea in &lane_ea[1..] {
                    lo = self.b.ins().umin(lo, ea);
                    hi = self.b.ins().umax(hi, ea);
                    if amask != 0 {
                        or = self.b.ins().bor(or, ea);
                    }
                }
                (lane_ea, lo, hi, or, None)
            }
        };
        let ok = self.span_ok(acc, (lo, hi, or), nowrap);
        self.b.ins().brif(ok, fast, &[], holes, &[]);
        // The range has a unit without permission (a hole between the lanes, or data of
        // another permission), or is out of bounds: check lane by lane.
        self.b.switch_to_block(holes);
        self.b.seal_block(holes);
        // A wide index built no lane EAs before the check: built here, off the fast path.
        let checked = if eas.is_empty() {
            self.ea_chunks(addr, ms.log2e)
        } else {
            eas.clone()
        };
        let pea = self.spill(3, &checked);
        self.check_lanes(acc, pea, fast, slow);
        self.b.switch_to_block(fast);
        self.b.seal_block(fast);
        let hosts: Vec<Value> = match (pi, wide) {
            // The space's base and the scalar base added once, each lane's offset folded
            // into its access's address (`[host + idx * 4]`).
            (Some(pi), _) => self.packed_lane_hosts(base, pi),
            (None, Some(w)) => self.index_hosts(base, w.scalar, w.sh, |t, i| {
                t.b.ins().extractlane(w.chunks[i / 2], (i % 2) as u8)
            }),
            (None, None) => {
                let lane_ea = if lane_ea.is_empty() {
                    self.lanes_of(&eas)
                } else {
                    lane_ea
                };
                lane_ea
                    .iter()
                    .map(|&ea| self.b.ins().iadd(base, ea))
                    .collect()
            }
        };
        self.lanes_at(acc, &hosts, false);
        eas
    }

    /// The per-lane loads or stores (in lane order) of `acc` at the lanes' host addresses
    /// `hosts`, their checks done (`Tx::lanes_inline`) or proved (`Tx::lanes_proven`). In a
    /// masked tail a store writes the active lanes only.
    fn lanes_at(&mut self, acc: Access, hosts: &[Value], direct: bool) {
        let Access { ms, data, .. } = acc;
        match ms.dir {
            Dir::Load => {
                let Reg::V(d) = data else { unreachable!() };
                if self.gather_packs(acc) {
                    // The raw elements, 16 / E to a vector, as a contiguous load leaves them:
                    // no widening here, and none at a store of the same width.
                    let (ty, sty) = match ms.log2e {
                        0 => (I8X16, I8),
                        1 => (I16X8, I16),
                        _ => (I32X4, I32),
                    };
                    let per = 16 >> ms.log2e;
                    // Each vector of lanes goes to scratch as soon as it is whole, and is read
                    // back after the last: otherwise Cranelift folds every lane's load into
                    // its insert, which it places where the vector is first used (after the
                    // last load), so that every lane's EA would be extracted before the first
                    // load and be live, spilled, across all of them.
                    // Lanes at constant offsets from one host address (`direct`, a strided
                    // access) have no EA to keep live: their vectors are used as they are.
                    let at = (!direct).then(|| self.scratch_addr(2));
                    let n = hosts.len().div_ceil(per);
                    let mut direct_bytes = Vec::new();
                    for (c, hs) in hosts.chunks(per).enumerate() {
                        let x = self.b.ins().load(sty, flags(), hs[0], 0);
                        // Lane 0 of 32-bit elements by itself (the other lanes zero): one
                        // `movd` from memory instead of a zero vector (a constant the
                        // allocator keeps in a spill slot) and an insert. (x64 has no move
                        // of a byte or halfword into a vector register.)
                        let mut v = if sty == I32 {
                            self.b.ins().scalar_to_vector(ty, x)
                        } else {
                            let z = super::zero_vector(self.b, ty);
                            self.b.ins().insertlane(z, x, 0)
                        };
                        for (k, &h) in hs.iter().enumerate().skip(1) {
                            let x = self.b.ins().load(sty, flags(), h, 0);
                            v = self.b.ins().insertlane(v, x, k as u8);
                        }
                        match at {
                            Some(at) => {
                                self.b
                                    .ins()
                                    .store(MemFlagsData::trusted(), v, at, (16 * c) as i32);
                            }
                            None => direct_bytes.push(self.bitcast(I8X16, v)),
                        }
                    }
                    let Some(at) = at else {
                        self.set_packed(VReg(d), ms, &direct_bytes);
                        return;
                    };
                    let bytes: Vec<Value> = (0..n)
                        .map(|c| {
                            self.b
                                .ins()
                                .load(I8X16, MemFlagsData::trusted(), at, (16 * c) as i32)
                        })
                        .collect();
                    self.set_packed(VReg(d), ms, &bytes);
                } else {
                    // Two lanes loaded, then paired at once, and the pair stored to scratch
                    // (for the reason above).
                    let at = self.scratch_addr(2);
                    for (c, hs) in hosts.chunks(2).enumerate() {
                        let x = self.load_lane(hs[0], 0, ms.log2e, ms.ext);
                        let mut v = self.b.ins().splat(I64X2, x);
                        if let Some(&h) = hs.get(1) {
                            let y = self.load_lane(h, 0, ms.log2e, ms.ext);
                            v = self.b.ins().insertlane(v, y, 1);
                        }
                        self.b
                            .ins()
                            .store(MemFlagsData::trusted(), v, at, (16 * c) as i32);
                    }
                    let vals = self.unspill(at);
                    self.vset_raw(VReg(d), &vals);
                }
            }
            Dir::Store => {
                if let Some(r) = self.packed_store_data(data, ms.log2e) {
                    self.store_packed_lanes(r, ms.log2e, hosts);
                    return;
                }
                let chunks = self.data_chunks(data);
                let mask = self.masked_tail.then(|| self.b.use_var(self.mask));
                for (i, &h) in hosts.iter().enumerate() {
                    let x = self.b.ins().extractlane(chunks[i / 2], (i % 2) as u8);
                    match mask {
                        // The masked tail: its inactive lanes (computed, past the trip
                        // count) write nothing.
                        Some(m) => {
                            let at = self.iconst(i as u64);
                            self.if_lane_active(m, at, |t| t.store_lane(x, h, 0, ms.log2e));
                        }
                        None => self.store_lane(x, h, 0, ms.log2e),
                    }
                }
            }
        }
    }

    /// A gather or scatter of a strip-mined copy whose lane EAs the stretch's pre-pass proved
    /// (`Tx::gather_prepass`: every lane of the stretch in one permitted, aligned range, apart
    /// from what the stretch's other accesses touch): the per-lane accesses with no check.
    /// The copy computes the lanes again from the bytes the pre-pass read, which no access of
    /// the stretch writes, but another group of a launch may (a race: memory contents are
    /// then unspecified, the run must stay safe): so every lane's host address is kept
    /// between the first and the last that the pre-pass proved, `[first, last]` (a no-op
    /// without a race).
    fn lanes_proven(&mut self, acc: Access, (first, last): (Value, Value)) {
        let (base, _, _) = self.space(false);
        let hosts = match self.packed_index(acc.addr, false, acc.data) {
            Some(pi) => self.packed_lane_hosts(base, pi),
            None => {
                let eas = self.ea_chunks(acc.addr, acc.ms.log2e);
                let lanes = self.lanes_of(&eas);
                lanes
                    .iter()
                    .map(|&ea| self.b.ins().iadd(base, ea))
                    .collect()
            }
        };
        let hosts: Vec<Value> = hosts
            .into_iter()
            .map(|h| {
                let h = self.b.ins().umax(h, first);
                self.b.ins().umin(h, last)
            })
            .collect();
        self.lanes_at(acc, &hosts, false);
    }

    /// The access of gather or scatter `inst` (see [`gather_index`]) as the pre-pass needs
    /// it.
    fn gather_access(&self, inst: &Inst) -> Access {
        let ms = inst.opcode().mem().expect("a memory instruction");
        let (data, addr, local) = operands(inst, ms).expect("memory format");
        Access {
            ms,
            data,
            addr,
            local,
            need: need(ms),
            amask: self.align_mask(ms),
        }
    }

    /// Bounds `[lo, hi]` of the lane EAs of gather or scatter `inst` at the current `W`
    /// lanes, and their OR when it must be aligned (see `Tx::chunk_range`).
    pub(super) fn gather_lane_range(&mut self, inst: &Inst) -> (Value, Value, Value) {
        let acc = self.gather_access(inst);
        if let Some((n, ..)) = vec_split(acc.addr) {
            self.canonicalize(VReg(n));
        }
        let eas = self.ea_chunks(acc.addr, acc.ms.log2e);
        self.chunk_range(&eas, acc.amask)
    }

    /// Whether every lane EA of gather or scatter `inst` in `[lo, hi]` (`or` their OR) may be
    /// accessed: in guest memory, one permitted run (`Tx::span_ok`), aligned when required.
    pub(super) fn gather_range_ok(&mut self, inst: &Inst, range: (Value, Value, Value)) -> Value {
        let acc = self.gather_access(inst);
        let (_, extent, _) = self.space(false);
        let e = acc.ms.width() as i64;
        let some = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, extent, e);
        let ok = self.span_ok(acc, range, None);
        self.b.ins().band(some, ok)
    }

    /// The `i32x4` `x` combined by `f` with itself rotated by two lanes (`pshufd`), and with
    /// `steps` 2 the result again with itself rotated by one: lane `k` then holds `f` over
    /// lanes `k` and `k + 2` (one step) or over all four (two steps). SIMD reductions of lane
    /// bounds instead of extracting every lane.
    fn fold_lanes(&mut self, mut x: Value, f: Fold, steps: usize) -> Value {
        let rot = [
            [8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7],
            [4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11],
        ];
        for idx in &rot[..steps] {
            let b = self.bitcast(I8X16, x);
            let r = self.shuffle(b, b, *idx);
            let r = self.bitcast(I32X4, r);
            x = f(self, x, r);
        }
        x
    }

    /// Bounds `[lo, hi]` of the lane EAs of `eas` (`i64x2` chunks, both lanes of each in
    /// use), and the OR of the lane EAs when `amask` asks for an alignment check. SSE has no
    /// 64-bit unsigned minimum or maximum before AVX-512, but SSE4.1 has 32-bit ones, which
    /// take two chunks to an instruction: `lo` joins the lowest upper half to the lowest lower
    /// half, `hi` the highest to the highest. Every lane EA `H:l` lies between them (exactly
    /// the lowest and highest EA when the upper halves agree, as they do within 4 GiB; a
    /// wider range otherwise, which the caller's run check turns down).
    fn chunk_range(&mut self, eas: &[Value], amask: u64) -> (Value, Value, Value) {
        let xs: Vec<Value> = eas.iter().map(|&c| self.bitcast(I32X4, c)).collect();
        let (mut vmin, mut vmax) = (xs[0], xs[0]);
        for &x in &xs[1..] {
            vmin = self.b.ins().umin(vmin, x);
            vmax = self.b.ins().umax(vmax, x);
        }
        // Lanes 0 and 2 hold lower halves, 1 and 3 upper halves: folded once, lanes 0 and 1
        // are the bound's halves, the vector's low 64 bits the bound.
        let bound = |t: &mut Self, v: Value, f: Fold| {
            let x = t.fold_lanes(v, f, 1);
            let x = t.bitcast(I64X2, x);
            t.b.ins().extractlane(x, 0)
        };
        let lo = bound(self, vmin, |t, a, b| t.b.ins().umin(a, b));
        let hi = bound(self, vmax, |t, a, b| t.b.ins().umax(a, b));
        let or = if amask != 0 {
            let mut v = eas[0];
            for &c in &eas[1..] {
                v = self.b.ins().bor(v, c);
            }
            let a = self.b.ins().extractlane(v, 0);
            let b = self.b.ins().extractlane(v, 1);
            self.b.ins().bor(a, b)
        } else {
            lo
        };
        (lo, hi, or)
    }

    /// Whether every lane EA of `acc` lies in `[lo, hi]` and `or` is the or of them all (or
    /// has their low bits): `hi <= extent - E` (every byte below the space's extent, no wrap
    /// either, with `nowrap` when the bounds come from a read-only register's), the pages
    /// (granules) from `lo`'s to `hi + E - 1`'s all permitted (one lookup in the permitted-run
    /// table), and every lane aligned when required. Needs `extent >= E` (tested before).
    fn span_ok(
        &mut self,
        acc: Access,
        (lo, hi, or): (Value, Value, Value),
        nowrap: Option<Value>,
    ) -> Value {
        let (_, extent, shift) = self.space(acc.local);
        let e = acc.ms.width() as i64;
        // `hi <= extent - E`: every byte of every lane is below extent (no wrap either).
        let lim = self.b.ins().iadd_imm_s(extent, -e);
        let mut ok = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, hi, lim);
        if let Some(nw) = nowrap {
            ok = self.b.ins().band(ok, nw);
        }
        let p0 = self.b.ins().ushr_imm_s(lo, shift);
        let last = self.b.ins().iadd_imm_s(hi, e - 1);
        let p1 = self.b.ins().ushr_imm_s(last, shift);
        let pages = self.b.ins().isub(p1, p0);
        // A range out of bounds reads entry 0 instead (the flag is already false).
        let zero = self.iconst(0);
        let at = self.b.ins().select(ok, p0, zero);
        let run = self.run_at(acc.local, acc.need, at);
        // Pages (granules) p0..=p1 are all permitted when the run from p0 is longer than
        // p1 - p0.
        let covered = self.b.ins().icmp(IntCC::UnsignedLessThan, pages, run);
        ok = self.b.ins().band(ok, covered);
        // `or` has a low bit set iff some lane has it.
        self.and_aligned(ok, or, acc.amask)
    }

    /// Whether a gather under a statically full mask leaves its destination in the packed
    /// form: the register has packed variables (`Tx::can_pack`) and the elements are
    /// narrower than a lane.
    fn gather_packs(&self, acc: Access) -> bool {
        self.load_packs(acc.ms, acc.data)
    }

    /// Whether a load of `ms` into `data` under a statically full mask leaves it packed
    /// (see [`Self::gather_packs`]).
    fn load_packs(&self, ms: MemSem, data: Reg) -> bool {
        match (ms.dir, data) {
            (Dir::Load, Reg::V(d)) => {
                self.full && !self.vmem && ms.log2e < 3 && self.can_pack(VReg(d), ms.log2e)
            }
            _ => false,
        }
    }

    /// Leave `r` packed: `bytes` holds its elements of `ms`'s width, 16 bytes a value, all
    /// lanes written.
    fn set_packed(&mut self, r: VReg, ms: MemSem, bytes: &[Value]) {
        self.def_packed(r, ms.log2e, ms.ext, bytes);
    }

    /// The stride of an access whose lane EAs step by a constant other than 0 and E (its
    /// other shapes have their own paths), small enough that every lane's offset from lane 0
    /// is an `i32`, and a multiple of E when alignment is required.
    fn strided(&self, addr: Addr, ms: MemSem) -> Option<i64> {
        let s = self.ea_stride(addr)?;
        let ok = s != 0
            && s != ms.width() as i64
            && s.unsigned_abs() <= 1 << 20
            && (s & self.align_mask(ms) as i64) == 0;
        ok.then_some(s)
    }

    /// A strided access (lane `i` at `ea0 + i * stride`) under a statically full mask: one
    /// check of the whole span the lanes cover (inside the space, every page or granule of
    /// the span permitted, its lowest lane aligned when required: the stride keeps the
    /// others so),
    /// then plain loads and stores at constant offsets from one host address, in lane order.
    /// A span the check cannot prove (a hole between the lanes, a fault) goes to `slow`.
    fn strided_inline(&mut self, acc: Access, ea0: Value, stride: i64, slow: Block) {
        let Access { ms, data, .. } = acc;
        let host = self.strided_host(acc, ea0, stride, slow);
        match ms.dir {
            // Into a register that can stay packed, as a gather's lanes (`Tx::lanes_at`):
            // the elements inserted into 16-byte vectors of them, not widened to 64-bit
            // lanes and narrowed again by the multiply-add that reads them (gemv with one row
            // per lane, a row pitch of 4 KiB: its column step 337 -> 174 host instructions
            // for 32 lanes).
            Dir::Load if self.gather_packs(acc) => {
                let hosts = self.strided_hosts(host, stride);
                self.lanes_at(acc, &hosts, true);
            }
            Dir::Load => {
                let vals = self.strided_lanes(host, stride, ms);
                let Reg::V(d) = data else { unreachable!() };
                self.vset_raw(VReg(d), &vals);
            }
            Dir::Store => self.strided_store_at(ms, data, host, stride),
        }
    }

    /// Store the lanes of `data` at `host + i * stride`, in lane order (a full mask, the
    /// lanes' bytes proved writable): a register packed at the store's width gives its lanes
    /// from the packed vectors directly (`Tx::store_packed_lanes`), another its `i64x2`
    /// chunks' lanes; the host's addressing folds each lane's offset into its store.
    fn strided_store_at(&mut self, ms: MemSem, data: Reg, host: Value, stride: i64) {
        let vl = self.vl as usize;
        // The dispatcher left a register packed (`Tx::packed_ok_operand`) and canonical (no
        // lazy store for a strided one, `Tx::lazy_store_data`).
        if let Some(r) = self.packed_store_data(data, ms.log2e) {
            let hosts = self.strided_hosts(host, stride);
            self.store_packed_lanes(r, ms.log2e, &hosts);
            return;
        }
        let chunks = self.data_chunks(data);
        for i in 0..vl {
            let x = self.b.ins().extractlane(chunks[i / 2], (i % 2) as u8);
            self.store_lane(x, host, (i as i64 * stride) as i32, ms.log2e);
        }
    }

    /// Hoisted strided store `j` (lane 0's host address `host`, its leader's index and
    /// distance from it `(lead, delta)`, `Tx::hoist_lead`) and the instruction after
    /// it, when that is the store of the record's other field: the two fields of 2-field
    /// records of 4- or 8-byte elements (a stride of `2E`, the second field `E` above the
    /// first, the same scalar terms), neither in the masked tail. Then both registers'
    /// chunks (words narrowed to four a vector, unless packed so) are interleaved
    /// (`punpckl*` / `punpckh*`) and stored as 16-byte vectors, the
    /// records' bytes in one pass, instead of a lane at a time; the next instruction is
    /// translated with this one (`Tx::fused`: nothing between them can leave, and their
    /// bytes are disjoint, so their order does not matter). The second register, read
    /// here, is canonicalised first when it holds raw FP results (the dispatcher did so for
    /// the first). Whether it did so.
    fn pair_fields(
        &mut self,
        j: usize,
        (lead, delta): (usize, i64),
        ms: MemSem,
        data: Reg,
        host: Value,
    ) -> bool {
        let hz = &self.hoist[j];
        let (log2e, log2s, pc) = (ms.log2e, hz.log2s, hz.pc);
        if self.masked_tail || self.vl < 4 || log2e < 2 || log2s != log2e + 1 {
            return false;
        }
        let Some(next) = self.next else {
            return false;
        };
        let Some(k) = self
            .hoist
            .iter()
            .position(|h| h.pc == pc + 8 && h.inst == next)
        else {
            return false;
        };
        let (lead2, delta2) = self.hoist_lead(k);
        let h2 = &self.hoist[k];
        let (Some(ms2), Reg::V(a), Some(Reg::V(b))) =
            (h2.inst.opcode().mem(), data, data_reg(&h2.inst))
        else {
            return false;
        };
        let e = 1i64 << log2e;
        if ms2.dir != Dir::Store
            || ms2.log2e != log2e
            || h2.log2s != log2s
            || h2.inst.is_local() != hz.inst.is_local()
            || lead2 != lead
            || delta2 != delta.wrapping_add(e)
        {
            return false;
        }
        self.canonicalize(VReg(b));
        let (first, second) = if log2e == 2 {
            // Words: a register's packed vectors, or its lanes narrowed to four a vector.
            let words = |t: &mut Self, r: u8| {
                if t.packed_at(VReg(r), 2) {
                    t.packed_vals(VReg(r), 2)
                } else {
                    let c = t.data_chunks(Reg::V(r));
                    t.narrow(2, &c)
                }
            };
            (words(self, a), words(self, b))
        } else {
            (self.data_chunks(Reg::V(a)), self.data_chunks(Reg::V(b)))
        };
        let f = flags();
        for (c, (x, y)) in first.into_iter().zip(second).enumerate() {
            let (x, y) = (self.bitcast(I8X16, x), self.bitcast(I8X16, y));
            let lo = self.shuffle(x, y, unpack(1 << log2e, 0));
            let hi = self.shuffle(x, y, unpack(1 << log2e, 1));
            self.b.ins().store(f, lo, host, (32 * c) as i32);
            self.b.ins().store(f, hi, host, (32 * c + 16) as i32);
        }
        self.fused = true;
        true
    }

    /// Store the low `1 << log2e` bytes of the active lanes of the `i64x2` chunks `data` at
    /// `host + (i << log2s)`, in lane order, in a loop over the lanes (the masked tail's
    /// strided stores; contiguous ones, `log2s == log2e`, of groups too small for
    /// [`Self::store_active_bytes`]).
    fn store_active_strided(&mut self, host: Value, log2s: u8, log2e: u8, data: &[Value]) {
        let mask = self.b.use_var(self.mask);
        let pd = self.spill(1, data);
        self.for_each_lane(|t, i| {
            t.if_lane_active(mask, i, |t| {
                let x = t.lane_at(pd, i);
                let oe = t.b.ins().ishl_imm_s(i, log2s as i64);
                let h = t.b.ins().iadd(host, oe);
                t.store_lane(x, h, 0, log2e);
            });
        });
    }

    /// The check of the span that the lanes of `acc` at `ea0 + i * stride` cover (inside the
    /// space, every unit permitted, the lowest lane aligned when required: the stride keeps
    /// the others so), going to `fail` when it cannot prove it; then, in the block after it,
    /// lane 0's host address.
    fn strided_host(&mut self, acc: Access, ea0: Value, stride: i64, fail: Block) -> Value {
        let last = stride * (self.vl as i64 - 1);
        let lo = if last < 0 {
            self.b.ins().iadd_imm_s(ea0, last)
        } else {
            ea0
        };
        let len = last.unsigned_abs() + acc.ms.width();
        let fast = self.b.create_block();
        // The stride is a multiple of E when alignment is required, so `lo` (lane 0 or the
        // last lane) is aligned exactly when every lane is.
        self.check_space(acc.local, lo, len, acc.need, acc.amask, fast, fail);
        self.b.switch_to_block(fast);
        self.b.seal_block(fast);
        let (sb, _, _) = self.space(acc.local);
        self.b.ins().iadd(sb, ea0)
    }

    /// The lanes of `acc` at `ea0 + i * stride` (a constant stride, [`Self::strided`]'s
    /// bounds) under a full mask, in the form a gather through the lanes leaves its
    /// destination ([`Self::lanes_at`]): after [`Self::strided_host`]'s check, the lanes at
    /// constant offsets from one host address. A span the check cannot prove goes to `fail`
    /// before anything is accessed.
    fn strided_at(&mut self, acc: Access, ea0: Value, stride: i64, fail: Block) {
        let host = self.strided_host(acc, ea0, stride, fail);
        let hosts = self.strided_hosts(host, stride);
        self.lanes_at(acc, &hosts, true);
    }

    /// The host addresses of the VL lanes `stride` bytes apart from lane 0's `host`.
    fn strided_hosts(&mut self, host: Value, stride: i64) -> Vec<Value> {
        (0..self.vl as i64)
            .map(|i| self.b.ins().iadd_imm_s(host, i * stride))
            .collect()
    }

    /// [`Self::lanes_inline`] at a large VL, in loops over the lanes so that the code does
    /// not grow with VL. The group's EA range is checked at once ([`Self::span_ok`], bounds
    /// from SIMD minima and maxima of the EA chunks); only when that fails does each lane's
    /// EA (spilled) have to pass [`Self::lane_ok`] ([`Self::check_lanes`]), and a failing
    /// lane branches to `slow` before anything is written. Then a loop without checks: a load
    /// reads the lanes into a scratch area, which the register takes; a store writes them in
    /// lane order. Entered with `extent >= E`; ends in the block after the accesses.
    ///
    /// The range check instead of a check per lane took spmv_csr at VL 64 (its nest in the
    /// memory form) from 1.4x to 1.8-2.0x the interpreter (see `benches/README.md`).
    fn lanes_loop(&mut self, acc: Access, eas: &[Value], slow: Block) {
        let (base, _, _) = self.space(acc.local);
        let ms = acc.ms;
        let tf = cranelift_codegen::ir::MemFlagsData::trusted();
        // The store's data before any branch (the register file is not written before the
        // lanes are).
        let pd = match ms.dir {
            Dir::Store => {
                let vals = self.data_chunks(acc.data);
                Some(self.spill(1, &vals))
            }
            Dir::Load => None,
        };
        let pea = self.spill(3, eas);
        // One check of the whole EA range from SIMD minima and maxima of the chunks (VL is at
        // least `LANE_LOOP_MIN_VL`), as in line; when it fails (a hole between the lanes, a
        // lane out of bounds or misaligned), lane by lane, and `slow` at the first lane that
        // fails. Either way the accesses follow in a loop of their own, without checks.
        let range = self.chunk_range(eas, acc.amask);
        let ok = self.span_ok(acc, range, None);
        let go = self.b.create_block();
        let lanes = self.b.create_block();
        self.b.ins().brif(ok, go, &[], lanes, &[]);
        self.b.switch_to_block(lanes);
        self.b.seal_block(lanes);
        self.check_lanes(acc, pea, go, slow);
        self.b.switch_to_block(go);
        self.b.seal_block(go);
        match ms.dir {
            Dir::Load => {
                let out = self.scratch_addr(1);
                self.for_each_lane(|t, i| {
                    let ea = t.lane_at(pea, i);
                    let h = t.b.ins().iadd(base, ea);
                    let x = t.load_lane(h, 0, ms.log2e, ms.ext);
                    let off = t.b.ins().ishl_imm_s(i, 3);
                    let at = t.b.ins().iadd(out, off);
                    t.b.ins().store(tf, x, at, 0);
                });
                let vals = self.unspill(out);
                let Reg::V(d) = acc.data else { unreachable!() };
                self.vset_raw(VReg(d), &vals);
            }
            Dir::Store => {
                let pd = pd.expect("spilled above");
                // Every lane passed: write them in lane order (a later lane's bytes win).
                self.for_each_lane(|t, i| {
                    let ea = t.lane_at(pea, i);
                    let x = t.lane_at(pd, i);
                    let h = t.b.ins().iadd(base, ea);
                    t.store_lane(x, h, 0, ms.log2e);
                });
            }
        }
    }

    /// Run `body` for every lane `i` from `first` (a value, possibly `>= VL`: no lane) up to
    /// VL, in a loop ([`Self::lane_loop`]).
    fn for_each_lane_from(&mut self, first: Value, body: impl FnMut(&mut Self, Value)) {
        let vl = self.iconst(self.vl as u64);
        self.lane_loop(first, vl, body);
    }

    /// Emit `for i in from..to { body(i) }` (`i64` values; nothing when `from >= to`): a loop
    /// of constant code size, tested at its end. `body` starts in the loop's block with `i`
    /// and must leave the builder in a block that goes on to the next `i` (it may also branch
    /// out of the loop). Ends in the block after the loop.
    pub(crate) fn lane_loop(
        &mut self,
        from: Value,
        to: Value,
        mut body: impl FnMut(&mut Self, Value),
    ) {
        let lp = self.b.create_block();
        let done = self.b.create_block();
        let i = self.b.append_block_param(lp, I64);
        let konst = |tx: &Self, v: Value| match tx.b.func.dfg.value_def(v) {
            cranelift_codegen::ir::ValueDef::Result(d, 0) => match tx.b.func.dfg.insts[d] {
                cranelift_codegen::ir::InstructionData::UnaryImm { imm, .. } => {
                    Some(imm.bits() as u64)
                }
                _ => None,
            },
            _ => None,
        };
        match (konst(self, from), konst(self, to)) {
            // At least one iteration, known now.
            (Some(a), Some(b)) if a < b => {
                self.b.ins().jump(lp, &[from.into()]);
            }
            _ => {
                let some = self.b.ins().icmp(IntCC::UnsignedLessThan, from, to);
                self.b.ins().brif(some, lp, &[from.into()], done, &[]);
            }
        }
        self.b.switch_to_block(lp);
        body(self, i);
        let i2 = self.b.ins().iadd_imm_s(i, 1);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, i2, to);
        self.b.ins().brif(more, lp, &[i2.into()], done, &[]);
        self.b.seal_block(lp);
        self.b.switch_to_block(done);
        self.b.seal_block(done);
    }

    /// Emit `for i in 0..VL { body(i) }`: a loop of constant code size. `body` starts in the
    /// loop's block with the lane index `i` (an `i64`) and must leave the builder in a block
    /// that goes on to the next lane (it may also branch out of the loop). Ends in the block
    /// after the loop.
    fn for_each_lane(&mut self, body: impl FnMut(&mut Self, Value)) {
        let zero = self.iconst(0);
        let vl = self.iconst(self.vl as u64);
        self.lane_loop(zero, vl, body);
    }

    /// Lane `i`'s 64-bit entry of the scratch area at `p`.
    fn lane_at(&mut self, p: Value, i: Value) -> Value {
        let off = self.b.ins().ishl_imm_s(i, 3);
        let at = self.b.ins().iadd(p, off);
        self.b
            .ins()
            .load(I64, cranelift_codegen::ir::MemFlagsData::trusted(), at, 0)
    }

    /// Whether one lane's access at `ea` may go ahead: all its bytes inside the space,
    /// aligned when required, and both ends (E is at most a page or granule) on units with
    /// `acc.need` in the permission table. Non-zero when it may.
    fn lane_ok(&mut self, acc: Access, ea: Value) -> Value {
        let (_, extent, shift) = self.space(acc.local);
        let perms = self.perm_table(acc.local);
        let e = acc.ms.width() as i64;
        // `extent >= E` (checked before any lane): `extent - E` does not wrap.
        let lim = self.b.ins().iadd_imm_s(extent, -e);
        let inb = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, ea, lim);
        let inb = self.and_aligned(inb, ea, acc.amask);
        // Out of bounds reads the table at unit 0 instead (`inb` is already false).
        let zero = self.iconst(0);
        let safe = self.b.ins().select(inb, ea, zero);
        let last = self.b.ins().iadd_imm_s(safe, e - 1);
        let mut bits = self.iconst(acc.need as u64);
        for a in [safe, last] {
            let u = self.b.ins().ushr_imm_s(a, shift);
            let t = self.b.ins().iadd(perms, u);
            let p = self.b.ins().uload8(I64, flags(), t, 0);
            bits = self.b.ins().band(bits, p);
        }
        let good = self.b.ins().icmp_imm_s(IntCC::NotEqual, bits, 0);
        self.b.ins().band(good, inb)
    }

    /// Check every lane of the EAs spilled at `pea` with [`Self::lane_ok`], in a loop: on to
    /// `ok` when all pass, else to `fail`.
    fn check_lanes(&mut self, acc: Access, pea: Value, ok: Block, fail: Block) {
        self.for_each_lane(|t, i| {
            let ea = t.lane_at(pea, i);
            let good = t.lane_ok(acc, ea);
            let pass = t.b.create_block();
            t.b.ins().brif(good, pass, &[], fail, &[]);
            t.b.switch_to_block(pass);
            t.b.seal_block(pass);
        });
        self.b.ins().jump(ok, &[]);
    }

    /// The permission table of guest memory (per page) or, for `.local`, of tile space (per
    /// granule).
    fn perm_table(&self, local: bool) -> Value {
        match self.tile {
            Some(t) if local => t.perms,
            _ => self.mem_perms,
        }
    }

    /// Under a mask not known to be full (a hot straight-line region's recompile): when it is
    /// all ones at run time, the access in line as [`Tx::lanes_inline`] (then `join`), else,
    /// or when the check fails, `slow`. Ends in `slow`'s predecessor, terminated.
    fn lanes_when_full(&mut self, acc: Access, slow: Block, join: Block) {
        if self.known_partial {
            self.b.ins().jump(slow, &[]);
            return;
        }
        let chk = self.b.create_block();
        self.require_full(chk, slow);
        self.b.switch_to_block(chk);
        self.b.seal_block(chk);
        // In a hot straight-line region, lanes of consecutive elements take one contiguous
        // access, as under a mask known to be full (after a `V.SETMASK` the region tests
        // the mask first: a branch loop masking its last group by software).
        if let Some((ea0, ok)) = self.dyn_contig(acc.addr, acc.ms) {
            let (contig, other) = (self.b.create_block(), self.b.create_block());
            self.b.ins().brif(ok, contig, &[], other, &[]);
            self.b.switch_to_block(contig);
            self.b.seal_block(contig);
            let forms = self.form;
            let fast = self.contig_check(acc.ms, ea0, acc.local, other);
            self.contig_in(fast, acc.ms, acc.data, ea0, acc.local);
            self.b.ins().jump(join, &[]);
            self.form = forms;
            self.b.switch_to_block(other);
            self.b.seal_block(other);
        }
        // Its lane EAs do not dominate `slow`, which computes its own.
        self.lanes_inline(acc, slow);
        self.b.ins().jump(join, &[]);
    }

    /// Call memory helper `h` with the address arguments `eas` (one for the EA-array and
    /// contiguous helpers, three for the `_ea` ones), the mask, the kind word and the data
    /// area; returns its status (non-zero: done).
    fn helper_call(
        &mut self,
        h: abi::HelperFn,
        eas: &[Value],
        m: Value,
        k: Value,
        p: Value,
    ) -> Value {
        let f = self.helper_addr(h);
        let sig = self.sig(if eas.len() == 3 {
            super::Helper::MemEa
        } else {
            super::Helper::Load
        });
        let mut args = vec![self.ctx];
        args.extend_from_slice(eas);
        args.extend_from_slice(&[m, k, p]);
        let call = self.b.ins().call_indirect(sig, f, &args);
        self.b.inst_results(call)[0]
    }

    /// The `abi::ea` descriptor and operand values of a register-offset or immediate form.
    fn ea_desc(&mut self, addr: Addr) -> Vec<Value> {
        let (base, off, shift) = match addr {
            Addr::RegOff { base, off, shift } => (base, Some(off), shift),
            Addr::Imm { base, .. } => (base, None, 0),
            Addr::Contig { .. } => unreachable!("contiguous accesses pass lane 0's EA"),
        };
        let mut operand = |r: Reg| match r {
            Reg::S(n) => (abi::ea::SCALAR, 0u8, self.sget(SReg(n))),
            Reg::V(n) => (abi::ea::VECTOR, n, self.iconst(0)),
            Reg::Lc0 => (abi::ea::LC0, 0, self.b.use_var(self.lc0)),
        };
        let (bk, bv, bval) = operand(base);
        let (ok, ov, oval) = match (off, addr) {
            (Some(r), _) => operand(r),
            (None, Addr::Imm { off, .. }) => (abi::ea::SCALAR, 0, self.iconst(off)),
            (None, _) => unreachable!(),
        };
        let desc = self.iconst(abi::ea::desc(bk, bv, ok, ov, shift));
        vec![desc, bval, oval]
    }

    /// The operand of an access that may stay packed across `inst`, when the mask is
    /// statically full: the destination of a contiguous load, the data of a same-width store
    /// to guest memory. A store whose lanes are contiguous only at run time (a read-only or
    /// stepped index register's entry test, `Tx::ro_contig`, `Tx::dyn_contig`) writes the
    /// packed bytes on its contiguous path, and its other paths widen what they read
    /// (`Tx::vget`) without changing the register's form: a loop that loads a register and
    /// stores it that way carries it packed around its back edge instead of widening it every
    /// iteration (tile_stage's column loop, a gather then a scatter through `V.LANEID`).
    pub(crate) fn packed_ok_operand(&self, inst: &Inst) -> Option<VReg> {
        let ms = inst.opcode().mem()?;
        if !self.full {
            return None;
        }
        let (data, addr, local) = operands(inst, ms)?;
        let contiguous =
            matches!(addr, Addr::Contig { .. }) || self.ea_stride(addr) == Some(ms.width() as i64);
        let (false, Reg::V(n)) = (local, data) else {
            return None;
        };
        match (ms.dir, self.form[n as usize]) {
            (Dir::Load, _) if contiguous => Some(VReg(n)),
            (Dir::Store, super::Form::Packed { log2e, .. }) if log2e == ms.log2e => Some(VReg(n)),
            // Wider zero-extended lanes a contiguous store takes the low bytes of.
            (Dir::Store, _) if contiguous && self.truncates(VReg(n), ms.log2e) => Some(VReg(n)),
            _ => None,
        }
    }

    /// A register-offset access on guest memory under a full mask whose base is a scalar and
    /// whose offset is a vector register packed as 32-bit lanes (indices a contiguous load
    /// left packed), with a shift of at most 31: its base, index register, the indices'
    /// extension and the shift. Its lane EAs come from the packed lanes directly and its range
    /// from 4-lane SIMD minima and maxima ([`Self::packed_index_eas`]).
    fn packed_index(&self, addr: Addr, local: bool, data: Reg) -> Option<(SReg, VReg, Ext, u32)> {
        if !self.full || self.vmem || local {
            return None;
        }
        // A load into its own index register writes it on the fast path only: the slow
        // path's exit must still see the packed index, which the translation of the fast
        // path (emitted first) would have marked wide. Such a load materialises the index.
        if matches!((addr, data), (Addr::RegOff { off: Reg::V(n), .. }, Reg::V(d)) if n == d) {
            return None;
        }
        let Addr::RegOff {
            base: Reg::S(b),
            off: Reg::V(n),
            shift,
        } = addr
        else {
            return None;
        };
        match self.form[n as usize] {
            super::Form::Packed { log2e: 2, ext, .. } if ext != Ext::None && shift <= 31 => {
                Some((SReg(b), VReg(n), ext, shift))
            }
            _ => None,
        }
    }

    /// The index register of `inst` that stays packed across it (see [`Self::packed_index`]),
    /// and for a store of a packed-index access the data register when it is packed at the
    /// store's width (its lanes leave the packed vector directly, `Tx::store_packed_lanes`).
    pub(crate) fn packed_index_operand(&self, inst: &Inst) -> u32 {
        let Some(ms) = inst.opcode().mem() else {
            return 0;
        };
        let Some((data, addr, local)) = operands(inst, ms) else {
            return 0;
        };
        let Some((_, n, _, _)) = self.packed_index(addr, local, data) else {
            return 0;
        };
        let data = match data {
            Reg::V(d) if ms.dir == Dir::Store && self.packed_at(VReg(d), ms.log2e) => 1 << d,
            _ => 0,
        };
        (1 << n.0) | data
    }

    /// The register of a store's `data` whose lanes leave its packed vectors directly
    /// ([`Self::store_packed_lanes`]): under a full mask outside the masked tail, packed at
    /// the store's width and canonical.
    fn packed_store_data(&self, data: Reg, log2e: u8) -> Option<VReg> {
        let Reg::V(n) = data else { return None };
        let ok = self.full
            && !self.masked_tail
            && self.packed_at(VReg(n), log2e)
            && self.nan[n as usize].is_none();
        ok.then_some(VReg(n))
    }

    /// Whether `r` is packed as elements of `1 << log2e` bytes (below 8).
    fn packed_at(&self, r: VReg, log2e: u8) -> bool {
        log2e < 3
            && matches!(self.form[r.0 as usize], super::Form::Packed { log2e: l, .. } if l == log2e)
    }

    /// Store lane `i` of packed register `r` (elements of `1 << log2e` bytes) at each of
    /// `hosts[i]`, in lane order: its lanes leave the vector eight bytes at a time (`movq` for
    /// the low half of a vector, `pextrq` for the high one) and are shifted down from there,
    /// instead of widening the register to 64-bit lanes first and extracting each.
    fn store_packed_lanes(&mut self, r: VReg, log2e: u8, hosts: &[Value]) {
        let p: Vec<Value> = self
            .packed_vals(r, log2e)
            .into_iter()
            .map(|v| self.bitcast(I64X2, v))
            .collect();
        for (i, &h) in hosts.iter().enumerate() {
            // The store writes the low bytes: no extension needed.
            let x = self.packed_lane(&p, i, log2e, None);
            self.store_lane(x, h, 0, log2e);
        }
    }

    /// Lane `i` of the packed chunks `p` (`i64x2`, lanes of `1 << log2e` bytes, below 8) as
    /// an `i64`: the eight bytes holding it leave the vector (`Tx::half_of`) and are shifted
    /// down; extended by `ext` (the top lane of the eight bytes by the shift itself), or
    /// with its upper bits unspecified for `None` (a store of its low bytes).
    fn packed_lane(&mut self, p: &[Value], i: usize, log2e: u8, ext: Option<Ext>) -> Value {
        let half = 8 >> log2e;
        let (q, k) = (i / (2 * half), i % (2 * half));
        let word = self.half_of(p[q], k >= half);
        let (j, bits) = (k % half, 8i64 << log2e);
        let sign = ext == Some(Ext::Sign);
        if j == half - 1 && ext.is_some() {
            let sh = j as i64 * bits;
            return if sign {
                self.b.ins().sshr_imm_s(word, sh)
            } else {
                self.b.ins().ushr_imm_s(word, sh)
            };
        }
        let x = match j {
            0 => word,
            j => self.b.ins().ushr_imm_s(word, j as i64 * bits),
        };
        if ext.is_none() {
            return x;
        }
        let ty = [I8, I16, I32][log2e as usize];
        let x = self.b.ins().ireduce(ty, x);
        if sign {
            self.b.ins().sextend(I64, x)
        } else {
            self.b.ins().uextend(I64, x)
        }
    }

    /// The low (`high` false: one `movq`, lane 0 as an `f64` being the register itself) or
    /// high (`pextrq`) eight bytes of `v` (`i64x2`) as an `i64`.
    fn half_of(&mut self, v: Value, high: bool) -> Value {
        if high {
            return self.b.ins().extractlane(v, 1);
        }
        let f = self.bitcast(F64X2, v);
        let f = self.b.ins().extractlane(f, 0);
        self.b.ins().bitcast(I64, MemFlagsData::new(), f)
    }

    /// Lane EAs `base + (ext(idx[i]) << shift)` of a packed-index access, the lowest and
    /// highest, the OR of the offsets with the base (for alignment), and the condition that
    /// no lane's EA wrapped (then the EAs are ordered as the offsets and `[lo, hi]` covers
    /// them all).
    fn packed_index_eas(
        &mut self,
        (b, n, ext, sh): (SReg, VReg, Ext, u32),
        (mn, mx): (Value, Value),
        amask: u64,
    ) -> (Vec<Value>, Value, Value, Value, Option<Value>) {
        let base = self.sget(b);
        let sign = ext == Ext::Sign;
        let widen = |t: &mut Self, x: Value| t.index_offset(x, sign, sh);
        let off_lo = widen(self, mn);
        let off_hi = widen(self, mx);
        let lo = self.b.ins().iadd(base, off_lo);
        let hi = self.b.ins().iadd(base, off_hi);
        // No wrap: a non-negative offset did not carry past 2^64, a negative one did not
        // borrow below 0.
        let hi_ok = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, hi, base);
        let nowrap = if sign {
            let neg_hi = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, off_hi, 0);
            let hi_ok = self.b.ins().bor(neg_hi, hi_ok);
            let pos_lo = self
                .b
                .ins()
                .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, off_lo, 0);
            let lo_ok = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, lo, base);
            let lo_ok = self.b.ins().bor(pos_lo, lo_ok);
            self.b.ins().band(hi_ok, lo_ok)
        } else {
            hi_ok
        };
        let or = if amask != 0 {
            // The or of every lane.
            let raw = self.packed_vals(n, 2);
            let o = self.fold_words(&raw, |t, a, b| t.b.ins().bor(a, b));
            let o = widen(self, o);
            self.b.ins().bor(o, base)
        } else {
            base
        };
        (Vec::new(), lo, hi, or, Some(nowrap))
    }

    /// The lane host addresses of a packed-index access (see [`Self::packed_index_eas`]):
    /// `space + (base + off)` is `(space + base) + off` in 64-bit modular arithmetic, so the
    /// sum of the space's host base `space` and the scalar base is made once and each lane's
    /// offset `ext(idx[i]) << shift` added to it, which the host's addressing folds into
    /// the lane's access (`[host + idx * 4]`; an add per lane fewer). Computed where they are
    /// used: in the block of the accesses, after the range check, so that each is computed
    /// right before its lane's access instead of all of them before the check (where they
    /// would all be live at once).
    ///
    /// The indices leave the vector two at a time: one 64-bit move per pair (`movq` for the
    /// low pair of a vector, `pextrq` for the high one), the even lane's index its low
    /// half (`mov r32, r32` or `movsxd`) and the odd lane's its high half (`shr`/`sar` by
    /// 32). Per four lanes one shuffle-port extract instead of four `pextrd` (each a
    /// shuffle-port micro-op besides its move), the port the gather's own inserts
    /// (`pinsrd`) also need.
    fn packed_lane_hosts(
        &mut self,
        space: Value,
        (b, n, ext, sh): (SReg, VReg, Ext, u32),
    ) -> Vec<Value> {
        let base = self.sget(b);
        let p: Vec<Value> = self
            .packed_vals(n, 2)
            .into_iter()
            .map(|v| self.bitcast(I64X2, v))
            .collect();
        self.index_hosts(space, base, sh, |t, i| t.packed_lane(&p, i, 2, Some(ext)))
    }

    /// Lane host addresses `(space + base) + (lane(i) << sh)`: the space's host base and the
    /// scalar base added once, each lane's index (`lane`, made right before its use) shifted
    /// and added, which the host's addressing folds into the lane's access.
    fn index_hosts(
        &mut self,
        space: Value,
        base: Value,
        sh: u32,
        mut lane: impl FnMut(&mut Self, usize) -> Value,
    ) -> Vec<Value> {
        let host = self.b.ins().iadd(space, base);
        (0..self.vl as usize)
            .map(|i| {
                let x = lane(self, i);
                let o = self.b.ins().ishl_imm_s(x, sh as i64);
                self.b.ins().iadd(host, o)
            })
            .collect()
    }

    /// A 32-bit packed index `x` as a byte offset: extended to 64 bits (`sign`) and shifted
    /// left by `sh`.
    fn index_offset(&mut self, x: Value, sign: bool, sh: u32) -> Value {
        let x = if sign {
            self.b.ins().sextend(I64, x)
        } else {
            self.b.ins().uextend(I64, x)
        };
        self.b.ins().ishl_imm_s(x, sh as i64)
    }

    /// A contiguous access under a statically full mask: its group's check hoisted to loop
    /// entry (see `Tx::precheck`), or [`Self::contig_checked`].
    fn contig_full(
        &mut self,
        pc: u64,
        ms: MemSem,
        data: Reg,
        base: SReg,
        off: SOrImm,
        local: bool,
    ) {
        match self.hoisted_here(pc) {
            Some(j) => self.hoisted_access(j, ms, data),
            None => {
                let ea0 = self.contig_ea0(base, off, ms.log2e);
                self.contig_checked(pc, ms, data, ea0, local);
            }
        }
    }

    /// The data register of `inst` when it is a store whose raw f32 results may stay raw up
    /// to the store (see `Tx::nan`): a hoisted contiguous 32-bit store in a copy its span
    /// check proved, outside the masked tail, of a register packed at 32 bits. Its chunks are
    /// then tested and canonicalised two at a time right where they are stored
    /// ([`Self::store_canonical_pairs`]), so each pair is computed, tested and stored before
    /// the next (a register-wide test would keep every chunk live up to the stores).
    pub(crate) fn lazy_store_data(&self, pc: u64, inst: &Inst) -> u32 {
        let Some(ms) = inst.opcode().mem().filter(|ms| ms.dir == Dir::Store) else {
            return 0;
        };
        // Left packed up to the store (`Tx::inst` materialises the operands
        // `packed_ok_operand` does not keep: it asks for a full mask, a contiguous access on
        // guest memory, and a register packed at the store's width).
        let Some(VReg(n)) = self.packed_ok_operand(inst) else {
            return 0;
        };
        let contiguous_hoisted = self
            .hoisted_here(pc)
            .is_some_and(|j| self.hoist[j].log2s == ms.log2e);
        if self.nan[n as usize] == Some(FpWidth::S)
            && ms.log2e == 2
            && !self.masked_tail
            && contiguous_hoisted
        {
            1 << n
        } else {
            0
        }
    }

    /// Store the f32 chunks `vals` (raw FP results, [`Self::lazy_store_data`]) at `host`,
    /// canonical: per `group` chunks (two, or all of a register `super::LONG_FMA_CHAIN`
    /// multiply-adds accumulate into) one unordered compare per pair (a lane is unordered
    /// when either chunk's lane is NaN), the compares OR-ed, and one branch to a cold block
    /// that replaces NaN lanes by the canonical NaN. NaN results are rare: the common path
    /// costs a compare per two chunks and a mask extraction and branch per group, where
    /// blending costs a compare, a constant and a two-uop blend per chunk.
    fn store_canonical_pairs(
        &mut self,
        host: Value,
        vals: &[Value],
        group: usize,
        f: MemFlagsData,
    ) {
        for (g, chunks) in vals.chunks(group).enumerate() {
            self.store_canonical_group(host, chunks, g * group, f);
        }
    }

    /// [`Self::store_canonical_pairs`] for the chunks `vals` from chunk `first` on.
    fn store_canonical_group(
        &mut self,
        host: Value,
        vals: &[Value],
        first: usize,
        f: MemFlagsData,
    ) {
        let xs: Vec<Value> = vals.iter().map(|&v| self.bitcast(F32X4, v)).collect();
        let mut u: Option<Value> = None;
        for pair in xs.chunks(2) {
            let c = self.b.ins().fcmp(
                FloatCC::Unordered,
                pair[0],
                *pair.get(1).unwrap_or(&pair[0]),
            );
            u = Some(match u {
                Some(a) => self.b.ins().bor(a, c),
                None => c,
            });
        }
        let Some(u) = u else {
            return;
        };
        let any = self.b.ins().vhigh_bits(I32, u);
        let slow = self.b.create_block();
        let join = self.b.create_block();
        for _ in &xs {
            self.b.append_block_param(join, F32X4);
        }
        self.b.set_cold_block(slow);
        let carry: Vec<BlockArg> = xs.iter().map(|&x| BlockArg::Value(x)).collect();
        self.b.ins().brif(any, slow, &[], join, &carry);
        self.b.switch_to_block(slow);
        self.b.seal_block(slow);
        let canon = self.canonical_nan_f32();
        let fixed: Vec<BlockArg> = xs
            .iter()
            .map(|&x| {
                let c = self.canonical_f32(x, canon);
                BlockArg::Value(self.bitcast(F32X4, c))
            })
            .collect();
        self.b.ins().jump(join, &fixed);
        self.b.switch_to_block(join);
        self.b.seal_block(join);
        let params = self.b.block_params(join).to_vec();
        for (i, v) in params.into_iter().enumerate() {
            let c = first + i;
            // With the pending slot stores of the same chunk (`Tx::pending_local`); after
            // the guest store where they may be skipped (their branch would otherwise take
            // the chunk's loads and arithmetic into the store's block and repeat them after).
            if self.skip_local.is_some() {
                self.b.ins().store(f, v, host, (16 * c) as i32);
                self.flush_pending_local(Some(c));
            } else {
                self.flush_pending_local(Some(c));
                self.b.ins().store(f, v, host, (16 * c) as i32);
            }
        }
    }

    /// Whether the access being translated is a hoisted load (no check, so no path of its
    /// own that writes `d` otherwise) and the next instruction a scatter of `d` under a full
    /// mask (not hoisted): the load into `d` is then deferred to the scatter's lane stores
    /// (`Tx::scatter_deferred`), after the scatter's range check, instead of being made
    /// ahead of it and kept (spilled) across the check.
    fn scatters_next(&self, d: u8) -> bool {
        self.full
            && self.hoisted_here(self.pc).is_some()
            && self.next.is_some_and(|n| {
                scatter_data(&n) == Some(d) && self.hoisted_here(self.pc + 8).is_none()
            })
    }

    /// The data register of the scatter `inst` at `pc` when a contiguous load into it waits
    /// in `Tx::deferred` (see [`Self::scatters_next`]): the instruction's start leaves it
    /// deferred, each path of the scatter's lowering loads it where it reads the data (after
    /// the range check), and the scatter's end takes it off the list (`Tx::inst`).
    pub(crate) fn scatter_deferred(&self, pc: u64, inst: &Inst) -> Option<u8> {
        let d = scatter_data(inst)?;
        (self.full && self.hoisted_here(pc).is_none() && self.deferred.iter().any(|x| x.0.0 == d))
            .then_some(d)
    }

    /// The index of the access at `pc` among the hoisted ones, when the current copy was
    /// entered through their span check.
    fn hoisted_here(&self, pc: u64) -> Option<usize> {
        if self.prechecked {
            self.hoist.iter().position(|h| h.pc == pc)
        } else {
            None
        }
    }

    /// The first hoisted access whose address differs from hoisted access `j`'s by a
    /// constant in every lane and iteration (same space, element width and scalar terms),
    /// and that constant: `j`'s host address is the leader's plus it.
    fn hoist_lead(&self, j: usize) -> (usize, i64) {
        let hj = &self.hoist[j];
        let i = self.hoist[..j]
            .iter()
            .position(|hi| {
                hi.inst.is_local() == hj.inst.is_local()
                    && hi.ms().log2e == hj.ms().log2e
                    && hi.inv.terms == hj.inv.terms
            })
            .unwrap_or(j);
        (i, hj.inv.k.wrapping_sub(self.hoist[i].inv.k))
    }

    /// Whether some hoisted strided load shares its interleave group with another
    /// ([`Self::interleave_offset`] not 0).
    pub(crate) fn interleaved_any(&self) -> bool {
        self.hoist_off.iter().any(|&o| o != 0)
    }

    /// Hoisted strided load `j`'s offset within its *interleave group*: the hoisted strided
    /// loads with `j`'s leader (`Tx::hoist_lead`), element width and stride whose constants
    /// lie within the first `min(stride, 16)` bytes of the group's lowest one's (at a multiple
    /// of the element width): the fields of one array of structs, `V.LWI.U [v5 + 4f]` for
    /// `f < 4` off `V.LC0 << 4`. Every member loads the same 16-byte pieces from the lowest
    /// member's address (proved with it: its `VL * stride` bytes, see `Tx::strided_proved`),
    /// so Cranelift keeps one copy of each piece and of each shuffle shared by two members:
    /// four fields of 16-byte structs cost four loads and eight shuffles per four structs
    /// instead of sixteen loads and twelve shuffles. 0 for the lowest (or a lone) member and
    /// for other accesses. Computed once per region (`Tx::hoist_off`).
    pub(crate) fn interleave_offset(&self, j: usize) -> i64 {
        let (lead, dj) = self.hoist_lead(j);
        let hj = &self.hoist[j];
        if hj.ms().dir != Dir::Load || !hj.strided() {
            return 0;
        }
        let e = 1i64 << hj.ms().log2e;
        let window = (1i64 << hj.log2s).min(16);
        let mut deltas: Vec<i64> = (0..self.hoist.len())
            .filter(|&i| {
                let hi = &self.hoist[i];
                hi.ms().dir == Dir::Load
                    && hi.strided()
                    && hi.log2s == hj.log2s
                    && hi.ms().log2e == hj.ms().log2e
                    && self.hoist_lead(i).0 == lead
            })
            .map(|i| self.hoist_lead(i).1)
            .collect();
        deltas.sort_unstable();
        // Greedily from the lowest: a group starts at the first constant no earlier group
        // takes.
        let mut start = None;
        for d in deltas {
            let o = start.map(|s: i64| d.wrapping_sub(s));
            match o {
                Some(o) if (0..=window - e).contains(&o) && o % e == 0 => {}
                _ => start = Some(d),
            }
            if d == dj {
                break;
            }
        }
        start.map_or(0, |s| dj.wrapping_sub(s))
    }

    /// Hoisted access `j` in a copy its span check proved (`Tx::precheck`, or the masked
    /// tail's entry): the native access at its host base plus LC0BASE's offset.
    fn hoisted_access(&mut self, j: usize, ms: MemSem, data: Reg) {
        // `Tx::precheck` proved this iteration's group, like every group up to `lim`.
        // Accesses whose invariant parts differ by a constant (a stencil's or a filter's
        // neighbours) share one host base and one index: the constant goes into the address.
        let (lead, delta) = self.hoist_lead(j);
        let log2s = self.hoist[j].log2s;
        if self.hoist[j].uniform {
            // One element for every lane, at the same address in every iteration. Never
            // `can_move`: its address is loop-invariant, so Cranelift would hoist such a load
            // out of the loop, above the span check that proved it (a `V.LDI.U` whose EA
            // wraps past 2^64 then read host memory below guest memory's: a SIGSEGV in
            // `wrapping_effective_addresses_fault_precisely`, debug build). A load of a
            // movable copy's elements may move only within the loop, as its address depends
            // on LC0BASE.
            let h = self.b.use_var(self.hoist_host[j]);
            self.broadcast_load(ms, data, h);
            return;
        }
        let h = self.b.use_var(self.hoist_host[lead]);
        let l = self.b.use_var(self.lc0);
        let l = self.b.ins().ishl_imm_s(l, log2s as i64);
        let at = self.b.ins().iadd(h, l);
        // A strided load's interleave group reads from its lowest member's address, built
        // the same way for every member (so the members' loads are one).
        let o = self.hoist_off[j];
        let host = if delta == o {
            at
        } else {
            self.b.ins().iadd_imm_s(at, delta.wrapping_sub(o))
        };
        if self.masked_tail && ms.dir == Dir::Store && log2s != ms.log2e {
            // The masked tail: only the active lanes, one by one.
            let vals = self.data_chunks(data);
            self.store_active_strided(host, log2s, ms.log2e, &vals);
            return;
        }
        if self.masked_tail && ms.dir == Dir::Store {
            // The masked tail: only the active lanes' bytes.
            let bytes = match (data, self.form) {
                (Reg::V(n), forms)
                    if matches!(forms[n as usize],
                    super::Form::Packed { log2e, .. } if log2e == ms.log2e) =>
                {
                    self.packed_vals(VReg(n), ms.log2e)
                }
                _ => {
                    let vals = self.data_chunks(data);
                    self.store_active_lanes(host, ms.log2e, &vals);
                    return;
                }
            };
            self.store_active_bytes(host, ms.log2e, &bytes);
            return;
        }
        let f = if self.readonly && ms.dir == Dir::Load && self.ordered & (1 << j) == 0 {
            // The streaming copy: no store of the proven iterations writes what this
            // reads (see `Tx::stream`), so the load may move.
            flags().with_readonly().with_can_move()
        } else {
            flags()
        };
        if log2s != ms.log2e {
            match ms.dir {
                Dir::Load => self.strided_proved(ms, data, host, o as usize, 1 << log2s, f),
                Dir::Store => {
                    if !self.pair_fields(j, (lead, delta), ms, data, host) {
                        self.strided_store_at(ms, data, host, 1 << log2s);
                    }
                }
            }
            return;
        }
        self.contig_access(ms, data, host, f);
        if let (Dir::Load, Reg::V(d), true, true) = (ms.dir, data, self.masked_tail, self.mref_nest)
        {
            // A pure tail's movable load: its bytes stay as they are (`Tx::mref`).
            let packed = matches!(self.form[d as usize],
                super::Form::Packed { log2e, .. } if log2e == ms.log2e);
            if self.readonly && self.ordered & (1 << j) == 0 && packed {
                self.mref[d as usize] = Some(host);
            }
        }
    }

    /// The `i64x2` chunks of VL lanes loaded one by one from `host + i * stride`, extended
    /// (checked by the caller).
    fn strided_lanes(&mut self, host: Value, stride: i64, ms: MemSem) -> Vec<Value> {
        let xs: Vec<Value> = (0..self.vl as i64)
            .map(|i| self.load_lane(host, (i * stride) as i32, ms.log2e, ms.ext))
            .collect();
        xs.chunks(2)
            .map(|p| self.pair(p[0], p.get(1).copied()))
            .collect()
    }

    /// A hoisted strided load (see `analysis::Hoisted`) of the elements at byte `o` of each
    /// `stride`-byte record from `row` (its interleave group's lowest member's address,
    /// `Tx::interleave_offset`), whose `VL * stride` bytes are proved readable (every 16-byte
    /// load below lies inside them). Into a register that can stay packed: the group as
    /// 16-byte loads, the lanes picked out by shuffles: for 4-byte elements from pairs of
    /// loads, four lanes a vector (`shufps` for a stride of 8; for 16 and more, one load a
    /// lane, `punpck{l,h}dq` twice and `punpck{l,h}qdq`); for 1- and 2-byte elements each
    /// load's lanes gathered by a `pshufb`, then combined the same way; 8-byte elements two
    /// lanes a vector, `punpck{l,h}qdq` of two loads. The loads and shuffles depend on `o`
    /// only through which half they pick, so the members of one group share them. A VL too
    /// small to pack loads a lane at a time.
    fn strided_proved(
        &mut self,
        ms: MemSem,
        data: Reg,
        row: Value,
        o: usize,
        stride: usize,
        f: MemFlagsData,
    ) {
        let Reg::V(d) = data else {
            unreachable!("a load's data is a vector register")
        };
        let vl = self.vl as usize;
        if !self.can_pack(VReg(d), ms.log2e) {
            let host = self.b.ins().iadd_imm_s(row, o as i64);
            let vals = self.strided_lanes(host, stride as i64, ms);
            self.vset_raw(VReg(d), &vals);
            return;
        }
        let e = 1usize << ms.log2e;
        // The group as 16-byte loads, back to back; with more than 16 bytes between lanes,
        // one at each lane instead (the last ends inside the group:
        // `(VL - 1) * stride + 16 <= VL * stride`).
        let (gap, count) = if stride > 16 {
            (stride, vl)
        } else {
            (16, vl * stride / 16)
        };
        let c: Vec<Value> = (0..count)
            .map(|i| self.b.ins().load(I8X16, f, row, (gap * i) as i32))
            .collect();
        // 1- and 2-byte elements: each load's lanes gathered into its low bytes (`pshufb`).
        let (c, o) = if e >= 4 {
            (c, o)
        } else {
            let mut idx = [0u8; 16];
            for k in 0..16 / stride {
                for b in 0..e {
                    idx[k * e + b] = (k * stride + o + b) as u8;
                }
            }
            let c = c.into_iter().map(|x| self.shuffle(x, x, idx)).collect();
            (c, 0)
        };
        // Then 8 bytes from each of two loads (`shufps` picks them for 4-byte elements 8
        // bytes apart, which sit at bytes 0 and 8, or at 4 and 12), or 4 from each of four.
        let useful = e * (16 / stride).max(1);
        let out: Vec<Value> = (0..vl * e / 16)
            .map(|j| match (useful, e == 4) {
                (8, true) => self.shuffle(c[2 * j], c[2 * j + 1], pick_dwords(o / 4)),
                (8, false) => self.shuffle(c[2 * j], c[2 * j + 1], unpack(8, o / 8)),
                _ => {
                    // Dword `o / 4` of each of four loads: the low or high dwords of each
                    // pair, then the low or high qwords of those.
                    let k = o / 4;
                    let lo = self.shuffle(c[4 * j], c[4 * j + 1], unpack(4, k / 2));
                    let hi = self.shuffle(c[4 * j + 2], c[4 * j + 3], unpack(4, k / 2));
                    self.shuffle(lo, hi, unpack(8, k % 2))
                }
            })
            .collect();
        self.set_packed(VReg(d), ms, &out);
    }

    /// A contiguous access from `ea0` under a statically full mask: one check whose failure
    /// means some lane faults (the range is contiguous), so it exits to the interpreter
    /// directly; then the native access in line.
    fn contig_checked(&mut self, pc: u64, ms: MemSem, data: Reg, ea0: Value, local: bool) {
        let fail = self.b.create_block();
        self.b.set_cold_block(fail);
        let fast = self.contig_check(ms, ea0, local, fail);
        self.b.switch_to_block(fail);
        self.b.seal_block(fail);
        self.fallback(pc, Fallback::RangeFault);
        self.exit_pc(crate::abi::Status::Interp, pc, 0);
        self.contig_in(fast, ms, data, ea0, local);
    }

    /// A load whose lanes share one EA, `ea`, under a full mask: one checked access, its
    /// element broadcast to every lane. Every lane faults if one does, so a failed check
    /// leaves for the interpreter, which raises the trap; no general path joins this one, so
    /// every chunk of the result is the same value, wide (in a loop nest, each element a
    /// row of matmul256 broadcasts is one value across the inner loop, and the narrowing
    /// of its chunks for `V.FMA.S` one shuffle, hoisted out of it).
    fn uniform_load(&mut self, pc: u64, ms: MemSem, data: Reg, ea: Value, local: bool) {
        if !self.uni_checked.contains(&pc) {
            self.uni_checked = self.uniform_run_check(pc, ms, ea, local);
        }
        let (sb, _, _) = self.space(local);
        let host = self.b.ins().iadd(sb, ea);
        self.broadcast_load(ms, data, host);
    }

    /// The element at `host` (checked by the caller) broadcast to every lane of `data`'s
    /// register.
    fn broadcast_load(&mut self, ms: MemSem, data: Reg, host: Value) {
        let Reg::V(d) = data else {
            unreachable!("loads write a vector register")
        };
        let x = self.load_lane(host, 0, ms.log2e, ms.ext);
        if self.load_packs(ms, data) {
            // Elements narrower than a lane stay packed, as a gather's would: half or fewer
            // of the variables a loop carries (row-major gemv's `x[j]`, broadcast every
            // column, took 16 at VL 32), and an f32 operand needs no narrowing.
            let ty = [I8X16, I16X8, I32X4][ms.log2e as usize];
            let lane = self.b.ins().ireduce(ty.lane_type(), x);
            let v = self.b.ins().splat(ty, lane);
            let v = self.bitcast(I8X16, v);
            let n = ((self.vl as usize) << ms.log2e).div_ceil(16);
            self.set_packed(VReg(d), ms, &vec![v; n]);
            return;
        }
        let v = self.b.ins().splat(I64X2, x);
        self.vset_raw(VReg(d), &vec![v; self.nch]);
    }

    /// The [`PrologueRun`] of nest `r`'s prologue `r.insts[..h]`, when it is one.
    pub(crate) fn prologue_run(&self, r: &crate::region::Region, h: usize) -> Option<PrologueRun> {
        let (pc, first) = r.insts.first()?;
        let Some((base, off, false, ms)) = scalar_imm_load(first) else {
            return None;
        };
        if r.outer.is_none() || h < 2 {
            return None;
        }
        let run = PrologueRun {
            pc: *pc,
            base,
            off,
            ms,
            len: h as u64,
        };
        let covered = self.prologue_covered(run);
        let ok = r.insts[..h].iter().all(|(ipc, i)| {
            let fx = i.effects();
            if fx.writes_v != 0 {
                // The run's loads (`uniform_runs`: scalar base plus a constant).
                return covered.contains(ipc);
            }
            fx.reads_v == 0
                && matches!(
                    i.opcode().sem(),
                    Sem::SAlu(_) | Sem::SLi | Sem::SMov | Sem::Ctl(Ctl::Loop | Ctl::Nop)
                )
        });
        ok.then_some(run)
    }

    /// The loads of a [`PrologueRun`]'s run that its one check covers, its first included.
    pub(crate) fn prologue_covered(&self, p: PrologueRun) -> Vec<u64> {
        let (_, _, rest) = self.uniform_span(p.pc, p.ms);
        std::iter::once(p.pc).chain(rest).collect()
    }

    /// A [`PrologueRun`]'s checks on an edge into its prologue, `extra` instructions after
    /// the current offset (the outer back edge's branch): the full mask, the budget for the
    /// prologue, and the span of its run of loads (from the base register's value here);
    /// each failure exits (cold) to the prologue's first instruction with the state here.
    pub(crate) fn prologue_checks(&mut self, p: PrologueRun, extra: u64) {
        self.off += extra;
        let full = self.mask_is_full();
        self.guard(full, p.pc, Fallback::PartialMask);
        self.budget_check(p.len, p.pc);
        let b = self.sget(p.base);
        let ea = self.b.ins().iadd_imm_s(b, p.off as i64);
        self.uniform_run_check(p.pc, p.ms, ea, false);
        self.off -= extra;
    }

    /// The check of uniform load `pc` at `ea` for the span of its run ([`Self::uniform_span`]):
    /// on failure a cold exit to `pc`, so that it and the run's other loads go to the
    /// interpreter from there (exact, as every load of the run comes after it in straight-line
    /// code: a trap is only nearer). Returns the run's other loads it covers.
    fn uniform_run_check(&mut self, pc: u64, ms: MemSem, ea: Value, local: bool) -> Vec<u64> {
        let (lo, len, rest) = self.uniform_span(pc, ms);
        let fail = self.b.create_block();
        self.b.set_cold_block(fail);
        let fast = self.b.create_block();
        let start = if lo == 0 {
            ea
        } else {
            self.b.ins().iadd_imm_s(ea, lo)
        };
        self.check_space(local, start, len, need(ms), self.align_mask(ms), fast, fail);
        self.b.switch_to_block(fail);
        self.b.seal_block(fail);
        self.fallback(pc, Fallback::RangeFault);
        self.exit_pc(crate::abi::Status::Interp, pc, 0);
        self.b.switch_to_block(fast);
        self.b.seal_block(fast);
        rest
    }

    /// The span one check at uniform load `pc` covers (relative to its EA: the lowest
    /// offset and the length) and the later loads of its run ([`UniRun`]) it covers: those
    /// of the same element alignment at a multiple of it from this one, within
    /// [`UNI_SPAN_MAX`] bytes. Without a run, this load's own bytes.
    fn uniform_span(&self, pc: u64, ms: MemSem) -> (i64, u64, Vec<u64>) {
        let own = (0, ms.width(), Vec::new());
        let Some(run) = self.uni_runs.iter().find(|r| r.loads[0].pc == pc) else {
            return own;
        };
        let first = run.loads[0];
        let amask = self.align_mask(first.ms);
        let (mut lo, mut hi) = (0i64, first.ms.width() as i64);
        let mut rest = Vec::new();
        for l in &run.loads[1..] {
            let d = l.off.wrapping_sub(first.off) as i64;
            let w = l.ms.width() as i64;
            let (nlo, nhi) = (lo.min(d), d.checked_add(w).map_or(i64::MAX, |e| hi.max(e)));
            if self.align_mask(l.ms) != amask
                || d as u64 & amask != 0
                || nhi.saturating_sub(nlo) > UNI_SPAN_MAX
            {
                continue;
            }
            (lo, hi) = (nlo, nhi);
            rest.push(l.pc);
        }
        (lo, (hi - lo) as u64, rest)
    }

    /// The range, alignment and permission check of the contiguous group at `ea0`
    /// ([`Self::check_space`]): returns the block it branches to when the check holds (for
    /// [`Self::contig_in`]); else it branches to `fail`.
    fn contig_check(&mut self, ms: MemSem, ea0: Value, local: bool, fail: Block) -> Block {
        let len = (self.vl as u64) << ms.log2e;
        let fast = self.b.create_block();
        self.check_space(local, ea0, len, need(ms), self.align_mask(ms), fast, fail);
        fast
    }

    /// In `fast` (from [`Self::contig_check`]): the group at `ea0` as one native contiguous
    /// access. Ends in `fast`, after the access.
    fn contig_in(&mut self, fast: Block, ms: MemSem, data: Reg, ea0: Value, local: bool) {
        self.b.switch_to_block(fast);
        self.b.seal_block(fast);
        let (base, _, _) = self.space(local);
        let host = self.b.ins().iadd(base, ea0);
        self.contig_access(ms, data, host, flags());
    }

    /// The native accesses of a checked contiguous group at `host`: a load into the packed
    /// form where its register has one, a store of a register packed at the same width as
    /// its bytes, else 128-bit accesses with widening or narrowing.
    fn contig_access(&mut self, ms: MemSem, data: Reg, host: Value, f: MemFlagsData) {
        match (ms.dir, data) {
            (Dir::Load, Reg::V(d)) if self.can_pack(VReg(d), ms.log2e) => {
                self.form[d as usize] = super::Form::packed(ms.log2e, ms.ext);
                let deferred = self.local_v & (1 << d) != 0 || self.scatters_next(d);
                if self.prechecked && !self.readonly && deferred {
                    // Loaded where the register is first needed (`Tx::flush_deferred`).
                    self.deferred.push((VReg(d), host, f));
                    return;
                }
                self.load_packed(VReg(d), ms.log2e, host, f);
            }
            (Dir::Load, Reg::V(d)) => {
                if let Some(p) = self.pack_wider(VReg(d), ms) {
                    self.load_packed_wider(VReg(d), ms, p, host, f);
                    return;
                }
                let vals = self.load_contig(host, ms.log2e, ms.ext);
                self.vset_raw(VReg(d), &vals);
            }
            (Dir::Store, Reg::V(n))
                if matches!(self.form[n as usize],
                    super::Form::Packed { log2e, .. } if log2e == ms.log2e) =>
            {
                // narrow(widen(x)) folded: write the loaded bytes back as they are.
                let vals = self.packed_vals(VReg(n), ms.log2e);
                if self.nan[n as usize].is_some() {
                    // Raw f32 results (`Self::lazy_store_data`): canonical as they are stored.
                    let group = if self.long_chains & (1 << n) != 0 {
                        LONG_CHAIN_GROUP
                    } else {
                        CANON_GROUP
                    };
                    self.store_canonical_pairs(host, &vals, group, f);
                    return;
                }
                for (j, v) in vals.into_iter().enumerate() {
                    // With the pending slot stores of the same chunk (`Tx::pending_local`),
                    // after the guest store where they may be skipped (see
                    // `Tx::store_canonical_group`).
                    if self.skip_local.is_some() {
                        self.chunk_store(f, v, host, j);
                        self.flush_pending_local(Some(j));
                    } else {
                        self.flush_pending_local(Some(j));
                        self.chunk_store(f, v, host, j);
                    }
                }
            }
            (Dir::Store, Reg::V(n)) if self.truncates(VReg(n), ms.log2e) => {
                // Zero-extended lanes wider than the store's: their low bytes, packed down.
                self.flush_pending_local(None);
                let vals = self.truncated(VReg(n), ms.log2e);
                for (j, v) in vals.into_iter().enumerate() {
                    self.chunk_store(f, v, host, j);
                }
            }
            (Dir::Store, _) => {
                self.flush_pending_local(None);
                let vals = self.data_chunks(data);
                self.store_contig(host, ms.log2e, &vals);
            }
            (Dir::Load, _) => unreachable!("loads write vector registers"),
        }
    }

    /// Whether a full contiguous store of elements of `1 << log2e` bytes from `r` takes the
    /// low bytes of its packed lanes as they are ([`Self::truncated`]): `r` is packed as
    /// zero- or sign-extended lanes wider than the elements (a narrow integer result,
    /// `Tx::narrow_int`), and the elements fill whole vectors.
    fn truncates(&self, r: VReg, log2e: u8) -> bool {
        let wider = matches!(self.form[r.0 as usize],
            super::Form::Packed { log2e: l, ext: Ext::Zero | Ext::Sign, .. } if l > log2e && l < 3);
        wider
            && !self.masked_tail
            && self.nan[r.0 as usize].is_none()
            && ((self.vl as usize) << log2e) >= 16
    }

    /// The elements of `1 << log2e` bytes a store writes from packed register `r` (see
    /// [`Self::truncates`]), 16 bytes to a vector: each lane's low bytes, by unsigned
    /// saturating narrowing (`packusdw`, `packuswb`), exact once every lane is within the
    /// elements' unsigned range, which its bounds show or a mask makes so.
    fn truncated(&mut self, r: VReg, log2e: u8) -> Vec<Value> {
        let super::Form::Packed {
            log2e: l, lo, hi, ..
        } = self.form[r.0 as usize]
        else {
            unreachable!("truncated on a register that is not packed")
        };
        let tys = [I8X16, I16X8, I32X4];
        let mut vs: Vec<Value> = self.packed_vals(r, l);
        let top = (1u64 << (8u32 << log2e)) - 1;
        if lo < 0 || hi as u64 > top {
            let m = match l {
                1 => top * 0x0001_0001_0001_0001,
                _ => top * 0x0000_0001_0000_0001,
            };
            let m = self.vconst2(m, m);
            vs = vs
                .into_iter()
                .map(|v| {
                    let v = self.bitcast(I64X2, v);
                    self.b.ins().band(v, m)
                })
                .collect();
        }
        for w in (log2e + 1..=l).rev() {
            vs = vs
                .chunks(2)
                .map(|p| {
                    let a = self.bitcast(tys[w as usize], p[0]);
                    let b = self.bitcast(tys[w as usize], p[1]);
                    let n = self.b.ins().unarrow(a, b);
                    self.bitcast(I8X16, n)
                })
                .collect();
        }
        vs
    }

    /// Load the deferred contiguous loads (`Tx::deferred`) of the registers in `regs`.
    ///
    /// In the copies of a loop body that use the hoisted checks but not the streaming
    /// copy's proof that no store of the loop overlaps a hoisted load (the last full
    /// iteration, the masked tail), a contiguous load into a packed iteration-local
    /// register (`Tx::local_v`: its body has only hoisted accesses, so no gather's slow path
    /// or side exit lies between the load and its use) is emitted
    /// where an instruction first reads or writes the register, or before the next store,
    /// control instruction or exit, whichever comes first: still in program order with
    /// every store, so what it reads is what the guest's load reads (its group is proven,
    /// so it cannot fault), but without every operand of the body loaded at its top and
    /// live, spilled, until its use (stencil5_lc0's row: 40 loads and as many spills and
    /// reloads in each of these two copies).
    ///
    /// `done`: the loads dominate the rest of the copy (the start of an instruction that
    /// touches the register, of a store, of `ENDLOOP` or another control instruction, or of
    /// an iteration-local register's store), so they leave the list. Anywhere else (an exit
    /// path, a read in one branch of an instruction's lowering) they are emitted for that
    /// path and stay deferred for the others.
    pub(crate) fn flush_deferred(&mut self, regs: u32, done: bool) {
        if self.deferred.is_empty() {
            return;
        }
        let mut keep = Vec::new();
        for (r, host, f) in std::mem::take(&mut self.deferred) {
            if regs & (1 << r.0) == 0 {
                keep.push((r, host, f));
                continue;
            }
            if !done {
                keep.push((r, host, f));
            }
            let super::Form::Packed { log2e, .. } = self.form[r.0 as usize] else {
                unreachable!("a deferred load leaves its register packed until loaded")
            };
            self.load_packed(r, log2e, host, f);
        }
        self.deferred = keep;
    }

    /// Load packed register `r`'s chunks (lanes of `1 << log2e` bytes) from `host` into its
    /// packed variables, recording each as a load of this body copy (`Tx::mem_src`).
    fn load_packed(&mut self, r: VReg, log2e: u8, host: Value, f: MemFlagsData) {
        let n = ((self.vl as usize) << log2e) / 16;
        let vars = self.pv[r.0 as usize].clone().expect("packed vars");
        for (j, var) in vars.iter().enumerate().take(n) {
            let v = self.b.ins().load(I8X16, f, host, (16 * j) as i32);
            self.b.def_var(*var, v);
            self.mem_src.push((v, host, (16 * j) as i32, f));
        }
    }

    /// The lane width (log2 bytes) at which a contiguous load of `ms`'s 1- or 2-byte
    /// elements into `r` stays packed when a group's elements fill less than one 16-byte
    /// chunk (VL 8 bytes, VL 4 bytes or halfwords), but extended to that width they fill
    /// exactly one ([`Self::load_packed_wider`]); `None` when the load packs at its own width
    /// or not at all. A register packed as `2^p`-byte lanes extended by `ext` holds the same
    /// 64-bit lane values as one packed as narrower lanes with the same extension, so every
    /// reader of packed registers takes it as it is: an 8-bit load at VL 8 joins the narrow
    /// multiplies and the accumulators' narrow sums as a 16-bit load at VL 8 does (the
    /// widening sum of bytes at VL 8 was 4x slower than at VL 16, every load widened to four
    /// chunks of 64-bit lanes).
    fn pack_wider(&self, r: VReg, ms: MemSem) -> Option<u8> {
        if ms.ext == Ext::None || ms.log2e >= 2 || self.can_pack(r, ms.log2e) {
            return None;
        }
        // `VL << p` is 16 with `p` at most two above `log2e`: the group is 4 or 8 bytes.
        (ms.log2e + 1..=2).find(|&p| (self.vl as usize) << p == 16 && self.can_pack(r, p))
    }

    /// Load `r`'s VL elements of `ms` (4 or 8 bytes from `host`) extended to lanes of
    /// `2^p` bytes: one packed chunk ([`Self::pack_wider`]). Neither deferred nor recorded
    /// as a load of the chunk's bytes (`Tx::mem_src`): the chunk is not what memory holds.
    fn load_packed_wider(&mut self, r: VReg, ms: MemSem, p: u8, host: Value, f: MemFlagsData) {
        let sign = ms.ext == Ext::Sign;
        let bytes = (self.vl as usize) << ms.log2e;
        let v = if bytes == 8 {
            // One extending load: bytes to halfwords or halfwords to words (p = log2e + 1).
            let x = match (ms.log2e, sign) {
                (0, true) => self.b.ins().sload8x8(f, host, 0),
                (0, false) => self.b.ins().uload8x8(f, host, 0),
                (_, true) => self.b.ins().sload16x4(f, host, 0),
                (_, false) => self.b.ins().uload16x4(f, host, 0),
            };
            self.bitcast(I8X16, x)
        } else {
            // Four bytes to words: a 32-bit load, widened twice.
            let x = self.b.ins().load(I32, f, host, 0);
            let v = self.b.ins().scalar_to_vector(I32X4, x);
            let mut v = self.bitcast(I8X16, v);
            for _ in ms.log2e..p {
                v = if sign {
                    self.b.ins().swiden_low(v)
                } else {
                    self.b.ins().uwiden_low(v)
                };
            }
            self.bitcast(I8X16, v)
        };
        // The lanes hold the elements' values only (`Tx::narrow_int` keeps them narrow).
        let range = super::lane_range(ms.log2e, ms.ext);
        self.def_packed_range(r, p, ms.ext, range, &[v]);
        if ms.log2e == 0 {
            self.bytes_made |= 1 << r.0;
        }
    }

    /// Store data as chunks (`sN` broadcast).
    fn data_chunks(&mut self, data: Reg) -> Vec<Value> {
        match data {
            Reg::V(n) => self.vget_all(VReg(n)),
            Reg::S(n) => {
                let s = self.sget(SReg(n));
                let v = self.b.ins().splat(I64X2, s);
                vec![v; self.nch]
            }
            Reg::Lc0 => unreachable!("decoder rejects lc0 as data"),
        }
    }
}

/// The shuffle of two 16-byte vectors interleaving their low (`half` 0) or high (1) halves
/// in `w`-byte units (`punpckl*` / `punpckh*`).
pub(crate) fn unpack(w: usize, half: usize) -> [u8; 16] {
    let mut idx = [0u8; 16];
    for (i, x) in idx.iter_mut().enumerate() {
        let (unit, b) = (i / w, i % w);
        let src = if unit % 2 == 0 { 0 } else { 16 };
        *x = (src + half * 8 + (unit / 2) * w + b) as u8;
    }
    idx
}

/// The shuffle of two 16-byte vectors picking dwords `k` and `k + 2` of each (`shufps`):
/// the 4-byte field at byte `4 k` of 8-byte records.
pub(crate) fn pick_dwords(k: usize) -> [u8; 16] {
    let mut idx = [0u8; 16];
    for (i, x) in idx.iter_mut().enumerate() {
        let (unit, b) = (i / 4, i % 4);
        *x = ((unit / 2) * 16 + (unit % 2) * 8 + k * 4 + b) as u8;
    }
    idx
}
