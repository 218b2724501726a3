//! Translation of one [`Region`] into a Cranelift function.
//!
//! Guest registers live in Cranelift [`Variable`]s for the whole region (a vector register is
//! `ceil(VL / 2)` `i64x2` variables); they are loaded once at entry (except scalars a
//! straight-line region overwrites before reading them or reaching an exit) and the registers
//! the region can write are stored back at every exit. In a straight-line (non-loop) region,
//! which runs once per entry, vector registers stay in the register file instead. Its first
//! compile puts compile time first: memory accesses, vector ALU, FP, move and lane-id
//! operations and `V.REDSUM` (above VL 2) are calls to helpers that work on the register file
//! in place (`abi::lj_load*`, `abi::lj_store*`, `abi::lj_vop`, `abi::lj_redsum`, with the ISA
//! table's lane semantics); the remaining vector writes load and store their chunks. Its hot
//! recompile is inline code in two copies, chosen at entry as a loop body's are: one for a full
//! mask (whole-register stores, no blends) and one for a partial mask. The mask, LC0BASE and
//! trip count are `i64` variables
//! too. The number of instructions retired is a variable updated once per loop iteration plus
//! a static offset inside the current straight segment, so every exit stores the exact count.
//!
//! A loop region is laid out as: entry (loads, prologue `LOOP`) -> header (budget check for
//! one whole iteration; dispatch on `mask == all ones`) -> a *full* copy of the body, where the
//! mask is statically all ones (no blends, contiguous accesses need only the range check), and
//! the partial-mask path. For an `ENDLOOP` loop (mask set only by `LOOP`/`ENDLOOP`, so only the
//! last iteration is partial) whose entry that made it compile has a tail ahead
//! ([`TxConfig::tail`]; else the tail is *lazy*: it exits with [`Status::Partial`] as in the
//! memory form below) the partial path runs the tail iteration in the same function:
//! as the *masked tail* (`Tx::masked_tail`: the iteration computed as a full one, stores of
//! active lanes only, registers blended at `ENDLOOP`) when every access of the body is
//! hoisted and every vector instruction is lane-wise, else as a general copy with a dynamic
//! mask; in the memory form it exits with [`Status::Partial`] to the straight-line form of the
//! body, a separate function compiled on first need with the quick settings. Other loops
//! (branch loops, bodies with `V.SETMASK`) get the general copy; every copy ends in the back
//! edge to the header. Full iterations of an `ENDLOOP` loop whose stores are all hoisted run
//! in the *streaming copy* (`Tx::stream`) while another proven iteration follows, which
//! carries only loop-carried registers and lets hoisted loads move to their uses; a body of
//! at most [`STREAM_PAIR_MAX_BODY`] instructions whose accesses are all hoisted streams two
//! iterations per round (`StreamLoop::pair`: the bookkeeping of LC0BASE, the retired count,
//! the next round's test and a narrow accumulator's count once per two iterations; the
//! compiled-code instructions of widensum8 -31%, dot8 -17%, saxpy32 -6%). In such a
//! loop whose tail is the masked tail, the registers every iteration overwrites before
//! reading them are *iteration-local* (`Tx::local_v`): not loaded at entry, not written back
//! at exits, but stored by the first full copy, and by the masked tail in its active lanes
//! only (whole chunks entered through a jump table on the lane count: the tail's mask is a
//! prefix, checked at its entry), right after the body's last instruction that touches them
//! (a 2D kernel enters such a loop once per row).
//!
//! A *loop nest* ([`Region::body`]: an `ENDLOOP` loop inside a loop closed by a branch back
//! to the region's start, the rows of a stencil or of a matrix product; or a branch loop
//! inside an `ENDLOOP` loop's body, SpMV's rows) is one function: the outer prologue (up to
//! the inner loop's head; straight instructions before it run under a full mask, and a
//! region entry or outer back edge with another leaves for the interpreter) is a block of
//! its own (`Nest::top`), every exit edge of the inner loop goes on to the epilogue's block
//! (`Nest::epi`) with every register wide and canonical, and the epilogue's branch or
//! `ENDLOOP` back returns to the prologue with the registers still in their variables.
//! Nothing is written back or loaded again between rows, and a row's setup (the broadcasts
//! of a matrix row) stays in registers across its inner loop: compiled-code instructions
//! stencil5_lc0 -10.5%, matmul256 -10.5%, spmv_csr -8%. An inner branch loop is entered from
//! the prologue's end straight into its second full copy when the registers that copy takes
//! as packed words pack there (`Tx::prologue_shortcut`; else the header's way, into the first
//! copy, which runs on wide registers): SpMV's groups of rows ran their first step in the
//! wide copy, 1,642 of 11,206 compiled-code instructions a group (callgrind, VL 32), now
//! 10,905 in all; spmv_csr at 256 KiB 430-440 -> 462-468 Melem/s (alternating runs). A
//! prologue that starts with a run of uniform loads writing every vector register the
//! prologue writes (matmul256's sixteen broadcasts of a row of A; `mem::PrologueRun`) has
//! its checks (full mask, budget, the run's span) made on the two edges into it, the region
//! entry and the outer back edge, each exiting to the prologue's first instruction: nothing
//! in the prologue then exits before its loads overwrite those registers, so their old
//! values are dead at `Nest::top` and no longer block parameters there (matmul256's were 256
//! `i64x2` chunks, moved between stack slots at every row's back edge). `lanejit bench --kernel matmul256 --engine jit`,
//! two alternating runs, G multiply-adds/s: 14.7-15.0 -> 19.5-19.9 at 256 KiB and 16 MiB;
//! its nest compiles in 10.6 ms instead of 12.0. In a nest the iteration-local
//! registers that are packed where they are stored go to a stack slot as they are
//! (`Tx::plocal`: 8 stores per f32 or i32 register at VL 32 instead of 16 widened ones), with
//! per register the count of its lowest lanes the slot holds, which the shared exit block
//! widens into the register file; a vector address built in the body (`V.LC0; V.SHL;
//! V.ADD`) is not stored at all but recorded (`Tx::alocal`: lane 0's value and how many
//! lanes it gives, for a full copy and for a masked tail), and the exit block writes its
//! lanes from the record (stencil5_vaddr at 256 KiB: 0.42x -> 0.45x native; it was 16
//! stores of 64-bit lanes per copy at VL 32, and a jump into a chain of them in the tail,
//! each chunk recomputing the broadcast). In the copies
//! that use the hoisted checks without the streaming copy's no-overlap proof, contiguous
//! loads into iteration-local registers are emitted where the register is first touched
//! (`Tx::flush_deferred`) instead of all at the body's top. Together: stencil5_lc0's compiled-code instructions at N = 256
//! -18%, stencil5_vaddr's -17% (callgrind). The masked tail stores all its chunks of such a
//! register, as they are, to a second half of the slot whose lanes override the first
//! (`Tx::plocal_t`; no prefix chain per register, whose jump table kept every loaded chunk
//! live across it), and its loads are pure like the streaming copy's (`Tx::pure_tail`)
//! when its entry finds that no store of the iteration writes what they read, with the slot
//! stores going out with the guest store of the same chunk (`Tx::pending_local`): the tail
//! then computes chunk by chunk instead of loading everything first and spilling it
//! (stencil5_lc0 -11%, stencil5_vaddr -13% more). A register such a tail last wrote with a
//! movable contiguous load is not stored at all: the tail records the guest address it
//! loaded from (`Tx::mref`, `Tx::plocal_ta`), whose bytes nothing writes before an exit reads
//! them or the next full iteration stores the register (the tail's stores are apart from its
//! loads, and the nest stores nothing outside its inner loop); the stencil's tail went from
//! about 62 stores to 14, stencil5_lc0 at 256 KiB 0.46x -> 0.49x native. The streaming copy's last proven
//! iteration runs in a copy of its own in the same way (pure loads, slot stores with the
//! guest store), not in the first full copy (a further -7%, for 13% more code in the
//! stencil's function). When the masked tail is certain to follow that iteration in line
//! (`Tx::tail_ahead`: the loop-entry span check proved the tail's group of VL lanes with the
//! row, `Tx::tail_proven`; the budget covers both; the tail's loads may be pure), the
//! iteration stores only the chunks of its iteration-local registers that hold a lane the
//! tail leaves, and the tail's entry skips its checks (`Tx::tail_go`); the tail's guest
//! store copies its lanes from the packed slot the register's chunks went to instead of a
//! scratch copy of its own. A row's stores were what bounded its last iterations (about 60 a
//! row at VL 32, the host storing one per cycle): stencil5_lc0 at 256 KiB 0.42x -> 0.47x
//! native. Rows shorter than VL are one masked tail each. A tail that follows a tail with no
//! more lanes than its own overrides the earlier one's packed lanes and affine records, as
//! it overrides a full iteration's (it stores every iteration-local register, and nothing
//! reads the earlier lanes between its entry and those stores); one that follows a longer
//! tail first moves the earlier lanes into the slot's main half (`Tx::plocal_fold`, one loop
//! of chunk blends for all registers); exits widen the slot's lanes two at a time
//! (`Tx::write_local_lanes`). Every such tail used to widen every register's earlier lanes
//! one by one into the register file: stencil5_lc0 on a 32 x 32 grid at VL 32, 173 -> 1250
//! Melem/s (0.06x -> 0.40x native), stencil5_vaddr 114-135 -> 1181. A nest whose code would
//! not fit the
//! register form compiles as the inner loop's region alone (`region::discover_for`).
//!
//! Check hoisting: in an `ENDLOOP` loop, a guest-memory access whose lane `i` at LC0BASE `x`
//! reads `inv + ((x + i) << log2e)` with `inv` loop-invariant (the `lc0` form with registers
//! the body never writes, or a vector address the body builds from `V.LC0`: see
//! [`shape::lane_forms`]) touches one group after another; so does a load whose lanes are 2
//! or 4 elements apart, or (4- and 8-byte elements) a power of two from 16 to 4096 bytes
//! apart (`inv + ((x + i) << log2s)`: fields of an array of structs, channels of pixels, a
//! column), whose proved groups are read as 16-byte loads and shuffled into lanes
//! (`Tx::strided_proved`); and so does a *uniform* load through loop-invariant scalars (a
//! filter's taps a compiler loads in the body, `V.LWI [s4 + (k << 2)]`), whose one element
//! the span check proves for every iteration at once and the body broadcasts unchecked.
//! Before, such a load was checked in the body, an access that can exit, which kept the
//! loop out of the streaming copy and its registers out of the iteration-local set: a
//! 4-tap FIR with its taps loaded in the body ran at 3.8x the time of the same FIR with its
//! taps in registers at VL 32 and 1.3x the interpreter's speed at VL 64 (`lanejit bench
//! FILE --set N=1048576`, jit steady state: 2.04 -> 0.40 ms at VL 32, 3.67 -> 0.38 ms at
//! VL 64). On the way from
//! the header into the full copies, `Tx::precheck` checks the whole span of the next
//! iterations once (one lookup in the space's permitted-run table per group of accesses at
//! constant distances from one another, such as a stencil's rows: `Tx::span_checks`; at most
//! [`MAX_SPAN_ITERS`] iterations) and records how far it holds as an LC0BASE bound; the full copies then access those groups
//! with no check at all, and iterate while the next group is within the bound. In a loop
//! nest whose outer loop counts rows of one trip count, the first row's check proves every
//! row's span at once and the later rows skip theirs (`analysis::nest_count`,
//! `Tx::nest_spans_ok`). When the span
//! check proves not even the current iteration (a fault ahead), that iteration runs in the
//! straight-line form, which checks every access and exits precisely at the faulting one.
//! A *copy loop* (the body is a contiguous load, the store of that register at the same
//! width, and `ENDLOOP`) goes further: of the iterations the span check proved, all but the
//! last are one `memcpy` (`abi::lj_copy`) when the source and destination ranges they cover
//! are disjoint, so their order cannot matter; the last runs in the full copy as usual and
//! leaves the loaded register as the interpreter would. Not under an instruction budget.
//!
//! Every failed check branches to a cold exit that writes the state before the instruction
//! and returns [`Status::Interp`] with that instruction's pc, so the interpreter re-executes it
//! and raises the precise trap. Exits to a successor (`Status::Next`, or `Status::Partial` to a
//! loop's tail) of loop regions and hot recompiles first try the chaining table
//! (`Tx::chain`): when it holds the successor's code, the exit calls it instead of returning
//! to the dispatcher.
//!
//! Where things are: region analysis in [`analysis`] (uses and defs from the ISA table, hoisting,
//! copy loops), the compile plan in [`plan`] (which form a region compiles in, within a compile
//! budget), lane shapes in [`shape`], exits and chaining in [`exits`], hoisted span checks and
//! bulk copies in [`loops`], the strip-mined form of simple counted loops (a tiered run's
//! first code for them, whose IR does not grow with VL) in [`strip`], and one file per
//! instruction family: [`mem`] (loads and stores), [`alu`] (ALU, FP, reductions, mask) and
//! [`control`] (branches and hardware loops).

mod alu;
mod analysis;
mod control;
mod exits;
mod loops;
mod mem;
pub mod plan;
mod probes;
mod shape;
mod strip;
pub(crate) use strip::strip_width;

use analysis::{
    RegSet, accumulators, body_fresh, branch_fast_ok, carried, copy_loop, fast_loop_ok,
    has_vector_work, hoistable, in_place, iteration_local, masked_tail_ok, packable, reg_effects,
    repackable, stream_ok, written_first,
};

use crate::abi::{self, Status};
use crate::region::{Region, RunEnd, Seen};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I8X16, I16X8, I32X4, I64, I64X2};
use cranelift_codegen::ir::{
    AbiParam, Block, ConstantData, InstBuilder, InstructionData, MemFlagsData, SigRef, Signature,
    StackSlot, StackSlotData, StackSlotKind, Value, ValueDef,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, Variable};
use lanejit_interp::isa::{Ext, FpOp, FpWidth, Inst, Operands, SReg, Sem, VReg, VSrc};
use lanejit_interp::machine::{Regs, all_lanes};

/// How a vector register's current value is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// In its `i64x2` chunk variables.
    Wide,
    /// In its packed `i8x16` variables, as `VL` elements of `1 << log2e` bytes that a full
    /// contiguous load read, still to be extended (`ext`) to 64 bits. Lets a store of the same
    /// width write the loaded bytes back unchanged (narrow(widen(x)) folded) and lets a loop
    /// carry the register without widening it every iteration.
    Packed {
        log2e: u8,
        ext: lanejit_interp::isa::Ext,
        /// The least and the most any lane's value (extended to 64 bits) is: what the
        /// lanes' width and extension allow, or less where a narrow integer operation
        /// knows it (`Tx::narrow_int`); the whole `i64` range for 64-bit lanes and lanes
        /// without an extension.
        lo: i64,
        hi: i64,
    },
    /// An accumulator in the streaming copy (`analysis::accumulators`, `Tx::acc_add`): its
    /// value is its `i64x2` chunk variables plus the sums in its packed variables, signed
    /// lanes of `1 << log2e` bytes (1: i16, 2: i32) that `V.ADD`s of narrow operands
    /// gathered since the last flush (in lane order; an accumulator of 16-bit products,
    /// `Tx::acc_perm`, keeps each chunk pair's even lanes, then its odd ones, and
    /// `Tx::acc_values` puts them back, except in a paired streaming copy, `Tx::acc_natural`). At most `Tx::acc_k` iterations add into them between
    /// flushes, so they never overflow, and adding them to the 64-bit lanes gives the sum
    /// the interpreter computes (wrapping addition is associative).
    Acc { log2e: u8 },
}

impl Form {
    /// Packed lanes of `1 << log2e` bytes extended by `ext`, with no bound on them but what
    /// their width allows.
    pub(crate) fn packed(log2e: u8, ext: lanejit_interp::isa::Ext) -> Form {
        let (lo, hi) = lane_range(log2e, ext);
        Form::Packed { log2e, ext, lo, hi }
    }
}

/// The values lanes of `1 << log2e` bytes hold extended by `ext` (the whole `i64` range for
/// 64-bit lanes and lanes without an extension).
pub(crate) fn lane_range(log2e: u8, ext: lanejit_interp::isa::Ext) -> (i64, i64) {
    let bits = 8u32 << log2e;
    match ext {
        lanejit_interp::isa::Ext::Zero if log2e < 3 => (0, (1i64 << bits) - 1),
        lanejit_interp::isa::Ext::Sign if log2e < 3 => {
            (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
        }
        _ => (i64::MIN, i64::MAX),
    }
}

/// The inner loop of full iterations (see `translate`).
#[derive(Clone, Copy)]
pub(crate) struct FastLoop {
    /// First block of the second full copy of the body.
    pub(crate) top: Block,
    /// Instructions per iteration.
    pub(crate) body_len: u64,
}

/// The streaming copy of a loop body (see `Tx::stream`).
#[derive(Clone, Copy)]
pub(crate) struct StreamLoop {
    /// Its first block (where it is entered from elsewhere).
    pub(crate) top: Block,
    /// The block its own back edge goes to: `top`, or after `top` zeroed the accumulators'
    /// narrow sums; for a pair, the round's first block (after the entry's test), or with
    /// `top_test` the block of the round's test.
    pub(crate) body: Block,
    /// The first full copy, which runs the last proven iteration.
    pub(crate) full: Block,
    /// Instructions per iteration.
    pub(crate) body_len: u64,
    /// Two iterations per round (see [`STREAM_PAIR_MAX_BODY`]): the first copy goes on into
    /// the second without a test, the round is entered only with three proven iterations
    /// ahead (the pair and the one after it).
    pub(crate) pair: bool,
    /// A pair whose round is tested at its top (one with accumulators, see `Tx::stream`'s
    /// set-up); other rounds are tested at their end.
    pub(crate) top_test: bool,
}

/// The most `i64x2` chunks per register (VL 16) for which the streaming copy keeps its
/// accumulators' wide chunks in a stack slot ([`Tx::acc_slot`]) rather than in SSA
/// variables. Measured (`lanejit bench --sizes 256K --engine jit --vl V`, best of two to four
/// alternating runs, G elements/s, variables / slot): widensum8 at VL 8 6.0 / 11.7, VL 16
/// 11.2 / 23.0, VL 32 43.2 / 43.1, VL 64 44.9 / 37.9; dot8 at VL 8 6.5 / 11.3, VL 16 9.3 /
/// 13.2, VL 32 and 64 unchanged. At VL 8 and 16 the allocator moved the variables between
/// spill slots and registers on every round; at VL 64 with the slot it kept two of
/// widensum8's eight narrow sums in spill slots instead, reloaded every round (flushing by
/// leaving the streaming copy instead of in place avoided that, 41.4, but cost VL 8 a fifth).
pub(crate) const ACC_SLOT_MAX_CHUNKS: usize = 8;

/// The fewest scalar registers a loop body broadcasts into f32 operations (and never writes)
/// for its streaming copy to make those broadcasts in the round (`Tx::round_splat`) rather
/// than once before the loop. Hoisted out of the loop, each broadcast is one more vector
/// value live across the whole function; with eight of them (fir8's taps) the allocator
/// keeps most in spill slots and reloads each before every use (7 reloads per two chunks),
/// and making them in the round runs fir8 21-24% faster (jit, 256 KiB, best of 6 runs
/// each); with one or two (saxpy32, the stencils) they stay in registers, and making them
/// in the round runs 3-5% slower.
pub(crate) const ROUND_SPLATS_MIN: u32 = 4;

/// The scalar registers `r`'s f32 operations broadcast (a `VSrc::S` operand) that the region
/// never writes (`written`: its written scalar registers).
fn splat_scalars(r: &Region, written: u32) -> u32 {
    let mut regs = 0u32;
    for (_, i) in &r.insts {
        if let (Operands::VFp(o), Sem::Fp(_, FpWidth::S)) = (i.operands(), i.opcode().sem()) {
            if let VSrc::S(s) = o.vb {
                if s.0 != 0 && written & (1 << s.0) == 0 {
                    regs |= 1 << s.0;
                }
            }
        }
    }
    regs.count_ones()
}

/// A register that at least this many `V.FMA.S` of a region accumulate into (a matrix
/// product's row of C, 16 per loop iteration in matmul256; a FIR's seven taps after the
/// first) is stored with one NaN test per [`mem::LONG_CHAIN_GROUP`] chunks instead of one
/// per [`mem::CANON_GROUP`] (`Tx::store_canonical_pairs`): each chunk's chain is then as
/// many dependent multiply-adds, latency-bound alone, and in one block
/// `schedule::cluster_shared` interleaves the chunks' chains, each broadcast reloaded once
/// for all of them. matmul256 (VL 32, 256 KiB, jit, three alternating runs): 10.1 -> 12.1 G
/// multiply-adds/s, and 14.2 once the clustering reaches all eight chunks
/// (`schedule::MAX_RISE`). fir8 (seven): 10-13% faster once the clustering also takes its
/// chains' first multiply and the taps broadcast in the round. Shorter chains gain nothing
/// (stencil5_lc0's four, with 4 here: within 1%, best of four alternating runs) or lose:
/// the stores wait for the last chunk's chain, and retire later (one test for all chunks of
/// every f32 store, before the clustering: stencil5_lc0 -4%, saxpy32 -9%).
pub(crate) const LONG_FMA_CHAIN: u8 = 7;

/// The vector registers `r` accumulates into with at least [`LONG_FMA_CHAIN`] f32
/// multiply-adds.
fn long_fma_chains(r: &Region) -> u32 {
    let mut count = [0u8; 32];
    for (_, i) in &r.insts {
        if let (Operands::VFp(o), Sem::Fp(FpOp::Fma, FpWidth::S)) = (i.operands(), i.opcode().sem())
        {
            let c = &mut count[o.vd.0 as usize];
            *c = c.saturating_add(1);
        }
    }
    (0..32)
        .filter(|&n| count[n] >= LONG_FMA_CHAIN)
        .fold(0, |m, n| m | 1 << n)
}

/// Loop bodies of at most this many instructions stream two iterations per round: the
/// per-iteration bookkeeping of the streaming copy (LC0BASE, the retired count, the test for
/// the next round, a narrow accumulator's count, the back edge: 8-12 instructions) is paid
/// once per two iterations. widensum8's streaming iteration runs 21 instructions, 13 of
/// them that bookkeeping. Larger bodies gain less and double more code. Bodies with a
/// gather or scatter do not pair: lut32 at 16 MiB ran at half speed paired (with 8% fewer
/// instructions), its table loads missing the cache. A loop's baseline compile does not pair
/// ([`TxConfig::pairs`]) unless the body has narrow accumulators: the pair is a copy of the
/// body more to compile, and the baseline is the code a tiered run waits for (loops of 3 to 7
/// instructions at VL 32, baseline compile us: 604 -> 488, 644 -> 530, 688 -> 572, 1,445 ->
/// 1,115, 17-23% less); but the narrow sums of an unpaired round cost more than the compile
/// saved (tiered at 16 MiB, Melem/s: widensum8 4,950 -> 3,700, dot8 3,900 -> 2,400).
pub(crate) const STREAM_PAIR_MAX_BODY: u64 = 10;

/// The outer loop of a loop nest ([`Region::body`]).
#[derive(Clone, Copy)]
pub(crate) struct Nest {
    /// The region's first pc, the outer back edge's target.
    pub(crate) start: u64,
    /// The block of the outer prologue (its budget check, then the instructions up to the
    /// `LOOP`), entered from the region entry and from the outer back edge.
    pub(crate) top: Block,
    /// The pc after the inner `ENDLOOP`: the epilogue's first instruction.
    pub(crate) epi_pc: u64,
    /// The epilogue's block, which every exit edge of the inner loop goes to.
    pub(crate) epi: Block,
    /// A prologue that begins with a run of uniform loads overwriting its vector registers
    /// (matmul256's row of A): its checks are made on the edges into `top` instead
    /// (`mem::PrologueRun`).
    pub(crate) pre: Option<mem::PrologueRun>,
}

/// Per-compile configuration.
#[derive(Clone, Copy, Debug)]
pub struct TxConfig {
    /// Lanes.
    pub vl: u32,
    /// `--strict-align`.
    pub strict_align: bool,
    /// Calling convention of helpers.
    pub call_conv: CallConv,
    /// Whether runs have an instruction limit (else budget checks are left out: the budget
    /// is then `u64::MAX` and can never run out).
    pub budgeted: bool,
    /// A hot straight-line region's recompile: inline vector code instead of helper calls.
    pub hot: bool,
    /// Slots of the chaining table (`JitCtx::chain`), one per instruction (0: no chaining).
    pub chain_slots: u64,
    /// The form the region is compiled in ([`plan`]): [`plan::Plan::Memory`] keeps vector
    /// registers in the register file even in a loop.
    pub plan: plan::Plan,
    /// Whether the host has a fused multiply-add instruction (`TargetIsa::has_native_fma`):
    /// then `V.FMA.S`/`.D` are one exactly rounded host instruction per vector; else they
    /// call `abi::lj_fma` (software `mul_add`), so results never depend on the host.
    pub native_fma: bool,
    /// Whether a loop in register form runs its iterations under a partial mask in its own
    /// function: an `ENDLOOP` loop's tail (the masked tail or the general copy), a branch
    /// loop's partial-mask copy. Without it (a *lazy tail*), such an iteration exits with
    /// `Status::Partial` to the straight form of the body, compiled on first need: a loop
    /// whose entry had none ahead when it was compiled (`region::tail_expected`) usually
    /// never has one, and that copy is 30-55% of a loop's IR (a `run --engine jit` of
    /// fir8_lc0, mostly compiling: 74.4M -> 33.6M instructions; spmv_csr 121.7M -> 77.2M).
    pub tail: bool,
    /// Whether the masked tail's loads keep program order. Without it they are pure, as the
    /// streaming copy's (placed by Cranelift at their use), when the tail's entry finds that
    /// no store of the iteration writes what they read (else the iteration leaves for the
    /// straight form of the body: a loop whose tails keep leaving so, an in-place shift, is
    /// compiled again with it, `region::Hints::ordered_tail`).
    pub ordered_tail: bool,
    /// The vector registers whose lanes may step by exactly one element of an access through
    /// them (bit `4 * r + log2(step)`, `region::lane_steps` at the entry that made the region
    /// compile): only these get the loop-entry test for contiguous lanes and the contiguous
    /// alternative of their gathers and scatters (`Tx::ro_offsets`).
    pub steps: u128,
    /// The constant lane step of every vector register at the entry that made the region
    /// compile (`region::lane_strides`; 0: none): a read-only register that stepped so, by
    /// other than one element of an access through it, gets the loop-entry test of that step
    /// and the strided alternative of its gathers and scatters (`Tx::ro_offsets`,
    /// `Tx::ro_strided`).
    pub strides: [i32; 32],
    /// The scalar registers at the entry that made the region compile (`region::Hints::
    /// sregs`): the distances between the base registers of strided loads that the
    /// translator takes as constants (`analysis::speculate_bases`), guarded at loop entry.
    pub sregs: Option<[u64; 32]>,
    /// Whether small loop bodies may stream two iterations per round
    /// ([`StreamLoop::pair`]), and loops have their second full copy (`Tx::fast`, which
    /// carries packed registers from one full iteration to the next). Off for the IR of a
    /// loop's baseline compile, whose compile time matters more than its bookkeeping: each is
    /// one more copy of the body (the pair a quarter to a third of such a loop's IR); the
    /// optimised recompile has them. Bodies with narrow accumulators pair either way (see
    /// [`STREAM_PAIR_MAX_BODY`]).
    pub pairs: bool,
    /// The strip-mined form ([`strip`]): `Some(VL)`, the loop's lanes, with [`TxConfig::vl`]
    /// the lanes of one body copy ([`strip::strip_width`]).
    pub strip: Option<u32>,
    /// Code compiled to be replaced (a loop's baseline in a tiered run): a loop that starts
    /// its region checks, at every stretch header (at most [`YIELD_SPAN_LANES`] lanes apart)
    /// and in a nest at every row, whether the compiler thread wants it out so that its
    /// optimised code can take its place, and leaves for the dispatcher then, its state exact
    /// (`abi::TierWords`, [`Tx::yield_check`]); a single loop also publishes its LC0BASE and
    /// trip count there. (On in a tiered run for every loop's first code: code kept for
    /// good is never named, and only pays its look per stretch.)
    pub yields: bool,
}

impl TxConfig {
    /// What the entry that made the region compile showed ([`Seen`]), `None` without its
    /// scalar registers.
    pub(crate) fn seen(&self) -> Option<Seen> {
        Seen::of(self.sregs, self.strides)
    }
}

/// Whether translating `r` at `vl` lanes with what the entry showed, `seen`,
/// speculates on base distances (`analysis::speculate_bases`) or stepped vector bases
/// (`analysis::stepped_bases`): then a loop whose guard fails leaves for the straight form
/// of its body, and the JIT counts those exits as it does a lazy tail's.
pub(crate) fn speculates(r: &Region, seen: Option<Seen>, vl: u32) -> bool {
    let seen = seen.as_ref();
    let (mut hoist, stepped) = analysis::hoisted_and_stepped(r, seen, vl);
    seen.is_some()
        && (!stepped.is_empty() || !analysis::speculate_bases(&mut hoist, seen).is_empty())
}

/// Most iterations one loop entry's span check covers (see `Tx::precheck`).
const MAX_SPAN_ITERS: u64 = 1 << 16;

/// Most lanes a stretch of a loop compiled to be replaced ([`TxConfig::yields`]) covers
/// before its header looks again whether to leave: 2^17 lanes is 50-150 us of a baseline's
/// FIR or stencil code at VL 32, where the header's look costs about 10 instructions.
pub(crate) const YIELD_SPAN_LANES: u64 = 1 << 17;

/// Bytes of one scratch area (64 lanes).
const AREA: u32 = 64 * 8;

/// The translator state for one function.
pub(crate) struct Tx<'a, 'f> {
    pub(crate) b: &'a mut FunctionBuilder<'f>,
    /// The bitcasts made so far, by block, source value and type ([`Tx::bitcast`]).
    casts: rustc_hash::FxHashMap<(Block, Value, cranelift_codegen::ir::Type), Value>,
    pub(crate) vl: u32,
    /// `i64x2` chunks per vector register.
    pub(crate) nch: usize,
    pub(crate) strict: bool,
    pub(crate) budgeted: bool,
    /// The region's pc when the code is to leave at a header on the compiler thread's word
    /// ([`TxConfig::yields`], [`Tx::yield_check`]).
    yield_pc: Option<u64>,
    /// The loop's lanes when translated in the strip-mined form ([`TxConfig::strip`]).
    strip_vl: Option<u32>,
    /// The region ends in a conditional branch back to its start (a branch loop entered at
    /// its head, or a nest's outer loop): its back edge may leave too ([`Tx::yield_check`]),
    /// publishing its count when it is counted (`analysis::counted_back_edge`).
    branch_back: bool,
    counted: Option<(SReg, lanejit_interp::isa::SOrImm, i64)>,
    pub(crate) call_conv: CallConv,
    pub(crate) ctx: Value,
    pub(crate) regs: Value,
    pub(crate) mem_base: Value,
    pub(crate) mem_extent: Value,
    pub(crate) mem_perms: Value,
    /// Slots of the chaining table (see [`TxConfig::chain_slots`]).
    chain_slots: u64,
    /// Tile space, for in-line `.local` accesses (loaded only by regions that have them and
    /// are not compiled for compile speed).
    pub(crate) tile: Option<TileVals>,
    pub(crate) budget: Value,
    s: [Option<Variable>; 32],
    pub(crate) v: Vec<Option<Vec<Variable>>>,
    /// Whether vector registers live in the register file instead of variables: every read
    /// loads its chunks, every write stores them as soon as the instruction's checks have
    /// passed (so exits need not write vectors back). Used for straight-line regions, which
    /// run once per entry and compile several times faster without the vector variables
    /// (no SSA phis at the shared exit, short live ranges), and for loops whose vector state
    /// is too large for the register form ([`plan::Plan::Memory`]).
    pub(crate) vmem: bool,
    /// Whether straight-line code hands vector work to the register-file helpers (first
    /// compile: compile speed first) rather than inline code (a hot region's recompile).
    pub(crate) helpers: bool,
    /// A hot straight-line region (inline vector code, one entry per pass): its gathers and
    /// scatters through a register test the lanes for consecutive addresses at each access
    /// (`Tx::dyn_contig`).
    pub(crate) straight_hot: bool,
    /// [`TxConfig::native_fma`].
    pub(crate) native_fma: bool,
    /// [`TxConfig::tail`].
    tail: bool,
    /// [`TxConfig::ordered_tail`].
    pub(crate) ordered_tail: bool,
    /// [`TxConfig::steps`].
    pub(crate) steps: u128,
    /// [`TxConfig::strides`].
    pub(crate) strides: [i32; 32],
    pub(crate) mask: Variable,
    /// Per-lane form of the mask, one `i64x2` per chunk.
    pub(crate) lmask: Vec<Variable>,
    /// Whether `lmask` holds the current mask on every path reaching this point: set when
    /// computed at the start of an instruction, cleared by every mask change and at every
    /// merge point (start of a body copy).
    lmask_valid: bool,
    /// Whether the mask is known not to be all ones here (the general body copy of a loop,
    /// entered only when the mask is partial, until the mask changes).
    pub(crate) known_partial: bool,
    exit_block: Block,
    xpc: Variable,
    xret: Variable,
    xstatus: Variable,
    pub(crate) lc0: Variable,
    pub(crate) trip: Variable,
    pub(crate) retired: Variable,
    dirty: RegSet,
    /// Whether the mask is statically all ones here.
    pub(crate) full: bool,
    /// Instructions retired since `retired` was last updated.
    pub(crate) off: u64,
    /// The scratch areas, created on first use.
    scratch: Option<StackSlot>,
    /// Helper signatures, imported on first use (every imported signature costs compile time).
    sigs: [Option<SigRef>; 8],
    /// Vector registers the region reads and never writes: read from the register file by
    /// loads Cranelift may share and hoist out of loops (a matrix kernel's broadcast
    /// coefficients), instead of variables carried around every loop edge.
    pub(crate) ro_v: u32,
    /// Vector registers the region writes only by adding a scalar or immediate to
    /// themselves, in a loop whose mask does not change but at its end (`shape::stepped_v`):
    /// lanes that step by a constant at loop entry still do in every full iteration.
    pub(crate) ind_v: u32,
    /// The f32 lanes (see `Tx::f32_lanes`) of read-only registers that FP instructions read,
    /// computed once at loop entry.
    pub(crate) ro_f32: Vec<Option<Vec<Value>>>,
    /// The bounds of read-only registers that gathers and scatters add to a scalar address
    /// part (see `Tx::ro_offsets`), computed once at loop entry.
    pub(crate) ro_bounds: Vec<mem::RoBounds>,
    /// The permitted bytes from the scalar bases of a loop's gathers and scatters, computed
    /// once at loop entry (see `Tx::base_runs`).
    pub(crate) base_runs: Vec<mem::BaseRun>,
    /// Current form of every vector register.
    pub(crate) form: [Form; 32],
    /// Packed variables of registers that a contiguous load may leave packed.
    pub(crate) pv: Vec<Option<Vec<Variable>>>,
    /// Per vector register: the lanes (`Form::Acc`) and the most iterations between flushes
    /// of its narrow accumulation, as the first full copy found it (0: none).
    pub(crate) acc_seen: [(u8, u64); 32],
    /// The loop body's accumulators (`analysis::accumulators`: registers whose only access
    /// in the body is one `V.ADD vd, vd, vx`), the only registers that may keep narrow sums.
    pub(crate) acc_regs: u32,
    /// The accumulators of 16-bit products whose narrow sums (32-bit, `Form::Acc` with
    /// `log2e` 2) are kept permuted (`analysis::product_accs`, `Tx::even_odd`), but in a
    /// paired streaming copy (`Tx::acc_natural`).
    pub(crate) acc_perm: u32,
    /// Iterations of the streaming copy since its accumulators were last flushed.
    pub(crate) acc_n: Option<Variable>,
    /// While the streaming copy is translated, up to VL 16 ([`ACC_SLOT_MAX_CHUNKS`]): a
    /// stack slot holding its accumulators' wide chunks (`16 * nch` bytes per register, in
    /// `acc_slot_regs` order), which [`Tx::acc_values`] reads and [`Tx::acc_zero`] and
    /// [`Tx::acc_flush`] write. In SSA variables they are live through the whole streaming
    /// loop, unused there but by its cold flush and exits, and the register allocator moved
    /// them between spill slots and registers on every round (widensum8 at VL 16: eight
    /// 16-byte loads and stores a round of 32 bytes).
    pub(crate) acc_slot: Option<StackSlot>,
    /// The registers of `acc_slot`, in its order.
    pub(crate) acc_slot_regs: u32,
    /// The fast inner loop, while translating a full body copy of an `ENDLOOP` loop.
    pub(crate) fast: Option<FastLoop>,
    /// Forms carried into the second full copy (set when the first copy ends).
    pub(crate) fast_forms: Option<[Form; 32]>,
    /// The raw FP results (`Tx::nan`) carried into the second full copy, recorded with
    /// `fast_forms`: an accumulator of multiply-adds goes around the copy's back edge as it
    /// is, canonicalised where something else reads it or an exit writes it back, instead of
    /// at every back edge.
    pub(crate) fast_nan: Option<[Option<FpWidth>; 32]>,
    /// What [`Self::nan`] starts as in the body copy being translated: all `None`, but
    /// `fast_nan` for the second full copy.
    pub(crate) entry_nan: [Option<FpWidth>; 32],
    /// While translating the *streaming* copy of an `ENDLOOP` loop body ([`stream_ok`]): a
    /// full copy entered (from the loop-entry span check, or from itself) only when the
    /// iteration after it is proven too and no hoisted load reads a byte any store of the
    /// proven iterations writes. Every register the body writes before reading it is then
    /// dead at its end (the next iteration overwrites it before anything reads it), so the
    /// copy carries only the loop-carried registers around its back edge instead of every
    /// register the body writes, and its hoisted loads are `readonly` pure loads that
    /// Cranelift sinks to their first use: a body of many vector chunks runs chunk by chunk
    /// in registers instead of spilling every loaded chunk. Its last iteration continues in
    /// the first full copy, which leaves the registers as the interpreter would.
    pub(crate) stream: Option<StreamLoop>,
    /// While translating a body copy of the strip-mined form ([`strip`]): how it ends.
    pub(crate) strip: Option<strip::StripEdge>,
    /// In a strip-mined copy: the register file's address moved to the copy's first lane
    /// (`regs` plus 8 bytes per lane of LC0BASE modulo VL), where the registers the body
    /// reads before writing them are read and the loop-carried ones stored.
    pub(crate) lane_base: Option<Value>,
    /// Exits emitted so far (`Tx::exit_with`): the strip-mined form's body copies must add
    /// none.
    pub(crate) exits: u32,
    /// In the strip-mined form: the gathers and scatters whose lanes the stretch's pre-pass
    /// proves (`strip::Gathers`, `Tx::gather_prepass`): each one's pc and, once the pre-pass
    /// is emitted, the host addresses of the first and the last lane it proved (the copies
    /// keep every lane between them, `Tx::lanes_proven`).
    pub(crate) proven: Vec<(u64, Option<(Value, Value)>)>,
    /// While translating the second copy of a paired streaming round (`StreamLoop::pair`).
    pub(crate) stream_second: bool,
    /// While translating a paired streaming copy: the narrow sums of the accumulators of
    /// 16-bit products (`acc_perm`) are in lane order, not permuted, and a round adds both
    /// its iterations' signed products at once (`Tx::pair_products`).
    pub(crate) acc_natural: bool,
    /// In the first copy of a paired round: the 16-bit products each accumulator of
    /// products is to add, kept for the second copy's add (`Tx::pair_products`).
    pub(crate) acc_stash: Vec<(VReg, Vec<Value>)>,
    /// Whether hoisted contiguous loads may be `readonly` (the streaming copy).
    pub(crate) readonly: bool,
    /// The hoisted loads that stay in program order in the streaming copy (`in_place`).
    pub(crate) ordered: u64,
    /// Contiguous loads whose packed chunks are not loaded yet (`Tx::flush_deferred`): the
    /// register, the host address of its first byte and the flags.
    pub(crate) deferred: Vec<(VReg, Value, MemFlagsData)>,
    /// The packed chunks loaded by contiguous loads of the current body copy since its last
    /// store instruction: the chunk, the host address and offset it was loaded from, and
    /// the load's flags. A widening of such a chunk loads its halves again, extending
    /// (`Tx::widening_load`); the bytes are the same, as nothing stored since.
    pub(crate) mem_src: Vec<(Value, Value, i32, MemFlagsData)>,
    /// While translating the *masked tail* copy of an `ENDLOOP` loop ([`masked_tail_ok`]):
    /// its partial last iteration run as a full one. Entered only when every hoisted access's
    /// whole group (all VL lanes) lies in guest memory with the access's permission, so loads
    /// read all lanes; every lane computes (inactive lanes compute values nothing reads), and
    /// stores write only the active lanes' bytes. At `ENDLOOP` every vector register the body
    /// writes takes the new value in its active lanes and the value it had on entry
    /// (`tail_old`) in the others, which is the architectural result. Packed forms and
    /// lazy NaNs work as in the full copies, so the tail costs about one full iteration
    /// instead of a copy with a blend per instruction.
    pub(crate) masked_tail: bool,
    /// The entry values of the vector registers the masked tail writes (but the
    /// iteration-local ones, whose entry values are in the register file).
    pub(crate) tail_old: Vec<(VReg, Vec<Value>)>,
    /// The *iteration-local* vector registers of a loop region ([`iteration_local`]): every
    /// iteration overwrites them before reading them, so their values never cross an
    /// iteration boundary in variables. They are not loaded at entry and not written back
    /// by exits; instead the register file holds their architectural value at the loop
    /// header: the first full copy (the last proven iteration, which leaves for the header
    /// or the exit) stores them after their last use, the masked tail stores its active
    /// lanes there (`Tx::store_prefix`), and the streaming copy (always followed by another full iteration)
    /// stores nothing. This keeps a loop entered once per row of a 2D kernel from loading and
    /// storing every register it writes at each entry and exit, and keeps their values
    /// out of the live state at every exit of the function.
    pub(crate) local_v: u32,
    /// The iteration-local registers the current body copy has stored already.
    pub(crate) local_stored: u32,
    /// The *packed stores* of iteration-local registers in a loop nest (`Tx::store_local`):
    /// a stack slot holding, per iteration-local register, its lanes as the packed form
    /// that wrote them left them (`1 << log2e` bytes each, at `Tx::packed_local_off`), so
    /// a row's last iterations store 8 (f32 or i32 lanes, VL 32) chunks per register instead of
    /// widening and storing 16. `None` outside nests (a loop entered once per row would
    /// widen them at every exit instead).
    pub(crate) plocal: Option<StackSlot>,
    /// Per iteration-local register, where its stores go, fixed by the first copy translated
    /// that stores it (`Tx::store_local`): `Some(Some((log2e, ext)))`, the packed slot, for
    /// copies where it is packed so (a copy with another form stores it wide, after moving
    /// the slot's lanes to the register file); `Some(None)`, the register file always.
    pub(crate) plocal_form: [Option<Option<(u8, lanejit_interp::isa::Ext)>>; 32],
    /// Per iteration-local register of a nest, how many of its lowest lanes the packed slot
    /// holds (the register file holds the others): VL after a full copy stored it packed,
    /// at least the masked tail's lane count after the tail did, 0 after a wide store. The
    /// shared exit block widens those lanes into the register file, so every exit leaves
    /// the architectural state.
    pub(crate) plocal_k: [Option<Variable>; 32],
    /// Per iteration-local register of a nest, how many of its lowest lanes the *tail half*
    /// of the packed slot holds (at `Tx::packed_tail_off`), which override the other half
    /// and the register file: a masked tail stores all its chunks there as they are (no
    /// prefix chain, no blend) and sets it to its lane count; a full or wide store sets it
    /// to 0. A masked tail that finds more lanes there than it has first copies them to the
    /// other half (a byte loop, only when two tails follow each other without a full
    /// iteration between them).
    pub(crate) plocal_t: [Option<Variable>; 32],
    /// Per iteration-local register of a nest, whether its stores are *affine records*
    /// (`Tx::store_local_affine`), fixed by the first copy translated that stores it:
    /// `Some(Some(stride))` where it is a vector address built in the body (`V.LC0; V.SHL;
    /// V.ADD`) with that lane stride, `Some(None)` otherwise.
    pub(crate) alocal_form: [Option<Option<i64>>; 32],
    /// Per such register, its record: lane 0's value and how many of its lowest lanes it
    /// gives, for a full copy's store and for a masked tail's (whose lanes override), as
    /// `[main value, main lanes, tail value, tail lanes]`; instead of 16 stores (VL 32) of
    /// 64-bit lanes, the exit block writes the lanes (`Tx::alocal_flush`).
    pub(crate) alocal: [Option<[Variable; 4]>; 32],
    /// Per iteration-local register of a nest, the address its lanes below the tail half's
    /// count are read from (`Tx::plocal_flush`): the packed slot's tail half, or the guest
    /// bytes a pure masked tail loaded them from (`Tx::mref`).
    pub(crate) plocal_ta: [Option<Variable>; 32],
    /// In a pure masked tail of a nest that stores nothing outside its inner loop
    /// (`Tx::mref_nest`): per register whose last write was a hoisted contiguous load that
    /// may move (no store of the iteration writes what it reads), the host address of that
    /// load's lane 0. The tail then records the address instead of storing the register's
    /// chunks: nothing can write those bytes before the next full iteration stores the
    /// register again (`Tx::store_local_packed`), or before an exit reads them.
    pub(crate) mref: [Option<Value>; 32],
    /// Whether the nest's instructions outside its inner loop store nothing (`Tx::mref`).
    pub(crate) mref_nest: bool,
    /// The vector registers whose every lane is 0 or all ones, written under a full mask in
    /// this body copy by an arithmetic shift right by 63 (a lane's sign: `V.SUB; V.SRA 63`
    /// is a compare): an AND of 32-bit packed lanes with one stays packed
    /// (`Tx::packed_int_operands`).
    pub(crate) sign_masks: u32,
    /// The vector registers whose every lane is a byte, sign- or zero-extended as their packed
    /// form says, though packed as wider lanes: a byte load at VL 8 (`Tx::pack_wider`), in
    /// this body copy. A multiply of two such registers stays on 16-bit lanes
    /// (`Tx::narrow_mul_operands`), as one of bytes packed as bytes does.
    pub(crate) byte_lanes: u32,
    /// The registers of `byte_lanes` the instruction being translated made so.
    pub(crate) bytes_made: u32,
    /// The instruction after the one being translated, in the same run of a body copy
    /// (`None` elsewhere): what a pair's lowering looks at (`Tx::packed_sign_mask`).
    pub(crate) next: Option<Inst>,
    /// The vector registers a loop's second full copy wants packed as zero-extended words
    /// (`analysis::repackable`), packed on the way into it when they arrive wide
    /// (`Tx::repack`).
    pub(crate) repack: u32,
    /// The vector registers a loop body overwrites before it reads them or can exit
    /// (`analysis::body_fresh`).
    pub(crate) fresh_v: u32,
    /// The vector registers some loop of the region reads before writing them
    /// (`analysis::carried`): a narrow integer operation's bound on them would grow from one
    /// iteration to the next (`Tx::narrow_int_operands`).
    pub(crate) carried_v: u32,
    /// Set by a lowering that translated the next instruction with the current one
    /// (`Tx::packed_sign_mask`): the caller skips it.
    pub(crate) fused: bool,
    /// The masked tail's stores to the packed slot not emitted yet: per register, its
    /// chunks and their offset in the slot's tail half. Its loads are pure (`Tx::readonly`), placed by
    /// Cranelift at their first use; a slot store emitted where the register is final
    /// would be that use and keep every loaded chunk live until the arithmetic. So the
    /// chunks go out with the tail's guest store of the same chunk (`Tx::spill_tail_store`),
    /// and what is left at its `ENDLOOP` (`Tx::flush_pending_local`): the body has only
    /// hoisted accesses and lane-wise instructions, so no exit comes between.
    pub(crate) pending_local: Vec<(Vec<Option<Value>>, i32, u8)>,
    /// In a nest, the LC0BASE of a masked tail the streaming copy's last iteration found
    /// certain to run in line (`Tx::tail_ahead`), or `u64::MAX`: the tail's entry then skips
    /// its checks (`Tx::masked_tail_entry`).
    pub(crate) tail_go: Option<Variable>,
    /// In a nest whose streaming copy's last iteration may precede a masked tail: the
    /// LC0BASE of the tail the loop-entry span check proved along with the full iterations
    /// (`Tx::precheck`), or `u64::MAX`.
    pub(crate) tail_proven: Option<Variable>,
    /// In the streaming copy's last iteration, how many of the lowest lanes of every
    /// iteration-local register the masked tail that follows in line will overwrite (0: no
    /// such tail): chunks of only such lanes are not stored (`Tx::flush_pending_local`).
    pub(crate) skip_local: Option<Value>,
    /// Whether the region contains `LOOP`/`ENDLOOP` (the only writers of LC0BASE): else it is
    /// not written back.
    loops: bool,
    /// Whether the region can change the mask (`LOOP`, `ENDLOOP`, `V.SETMASK`).
    writes_mask: bool,
    /// Whether the region contains `LOOP` (the only writer of the trip count).
    writes_trip: bool,
    /// Contiguous accesses whose per-group check is hoisted (see [`hoistable`]).
    pub(crate) hoist: Vec<analysis::Hoisted>,
    /// Per hoisted access, its offset in its interleave group (`Tx::interleave_offset`,
    /// computed once per region; 0 for all but strided loads).
    pub(crate) hoist_off: Vec<i64>,
    /// The base-register distances the hoisted accesses take as constants
    /// (`analysis::speculate_bases`): `(a, b, d)`, `b - a == d` checked at loop entry.
    pub(crate) spec: Vec<(SReg, SReg, i64)>,
    /// Stepped vector bases the hoisted accesses speculate on (`analysis::stepped_bases`),
    /// tested with `spec` at loop entry.
    pub(crate) stepped: Vec<analysis::Stepped>,
    /// In the strip-mined form, the stepped scalars and the variables of their bases
    /// (`Tx::strip_copy`).
    pub(crate) strip_sbase: Vec<(analysis::Stepped, Variable)>,
    /// Whether the current code is a full copy entered through `Tx::precheck`: the hoisted
    /// accesses need no check.
    pub(crate) prechecked: bool,
    /// LC0BASE bound of the iterations `Tx::precheck` proved (hoisting loops only).
    pub(crate) lim: Option<Variable>,
    /// In a nest whose outer loop counts its rows (`analysis::nest_count`): the state of the
    /// proof that the rows' spans are all in place (0 not tried in this call, 1 proven, 2
    /// not; `Tx::nest_spans_ok`), and the count.
    nest_span: Option<(Variable, analysis::NestCount)>,
    /// Per hoisted access (same order as `hoist`): the host address of its EA at LC0BASE 0,
    /// `mem_base + base + off`, computed once at loop entry.
    pub(crate) hoist_host: Vec<Variable>,
    /// The body is a copy loop ([`copy_loop`]): the element width's log2.
    copy_loop: Option<u8>,
    /// The lane shape of every vector register in the current body copy (see [`shape`]).
    pub(crate) shape: [Option<shape::Affine>; 32],
    /// The lane step of the vector registers that are affine at every entry to a full copy
    /// of a branch loop's body (`shape::entry_strides`): each such copy starts with their
    /// shapes, lane 0 read from the register or carried (`abase`).
    pub(crate) entry_stride: [Option<i64>; 32],
    /// For the registers of `entry_stride` that the body bumps, in a loop that never runs
    /// under a partial mask (a nest's inner branch loop): lane 0's value, the one thing the
    /// loop carries of them (`Tx::carry_affine_bases`).
    pub(crate) abase: [Option<Variable>; 32],
    /// Registers that hold a read-only register's lanes plus a scalar in the current body
    /// copy (`V.ADD`/`V.SUB` of a scalar or immediate, `V.MOV`, under a full mask): that
    /// register and the scalar (see [`shape::RoPlus`]).
    pub(crate) ro_plus: [Option<shape::RoPlus>; 32],
    /// Registers whose lanes step as those of a register of `ind_v` did at loop entry, in
    /// the current body copy (that register, and the ones made from it by adding scalars).
    pub(crate) ind_of: [Option<u8>; 32],
    /// The broadcasts of scalar registers the region never writes, made in the streaming
    /// copy of a loop (`Tx::round_splat`): the register, and its low word in every lane
    /// (an `i8x16`). Valid through the streaming copy (both copies of a round).
    pub(crate) round_splats: Vec<(u8, Value)>,
    /// Whether the streaming copy makes its scalar broadcasts in the round
    /// ([`ROUND_SPLATS_MIN`]).
    pub(crate) remat_splats: bool,
    /// The vector registers the region accumulates into with at least [`LONG_FMA_CHAIN`]
    /// f32 multiply-adds (`Tx::store_canonical_pairs` tests all their chunks at once).
    pub(crate) long_chains: u32,
    /// Whether the streaming copy holds its stores back to the iteration's end, chunk by
    /// chunk (`Tx::flush_stores`): a body with only hoisted accesses, at least two stores
    /// and an interleave group of strided loads (`Tx::interleave_offset`). `Tx::precheck`
    /// then enters the copy only when no two stores of the proven iterations overlap.
    pub(crate) defer_plan: bool,
    /// The stores held back in the current iteration of the streaming copy (with
    /// `defer_plan`; `None` elsewhere).
    pub(crate) held: Option<Vec<mem::HeldStore>>,
    /// The region's runs of uniform loads through one scalar base (`mem::UniRun`).
    pub(crate) uni_runs: Vec<mem::UniRun>,
    /// The later loads of the run whose first load this copy translated last: its check
    /// covered them (`Tx::uniform_load`). Cleared at every body copy's start.
    pub(crate) uni_checked: Vec<u64>,
    /// Lane bounds of vector register values used as gather and scatter indices in the
    /// current body copy (`Tx::lane_bounds`), forgotten with the shapes.
    pub(crate) lane_bounds: Vec<mem::LaneBounds>,
    /// The block in which the current instruction's lowering started (it dominates the
    /// rest of the body copy).
    pub(crate) inst_block: Option<Block>,
    /// Per vector register: `Some(w)` when it holds the raw result of a floating-point
    /// operation of width `w` written under a full mask, whose NaN lanes may not be canonical
    /// yet (and, for f32 in the wide form, whose upper halves may not be zero). Another FP
    /// operation of the same width may read it as it is (a NaN operand gives a NaN result
    /// whatever its payload); every other read, a partial write, an exit and a loop edge
    /// canonicalise it first (`Tx::canonicalize`), except a hoisted contiguous store of it
    /// packed, which tests its chunks as it stores them (`Tx::lazy_store_data`) and leaves it
    /// raw. Never set with vectors in the register
    /// file (`vmem`), which must hold canonical values at every exit.
    pub(crate) nan: [Option<lanejit_interp::isa::FpWidth>; 32],
    /// The registers the current instruction left raw (set in `nan` by it).
    pub(crate) nan_set: u32,
    /// The region report's counters, when counting (see `probes`).
    probes: Option<&'a mut crate::observe::Probes>,
    /// The pc of the instruction being translated.
    pub(crate) pc: u64,
    /// The outer loop, for a loop nest.
    pub(crate) nest: Option<Nest>,
    /// The shuffle immediates made so far, by index vector (see [`Tx::shuffle`]).
    shuffle_imms: Vec<([u8; 16], cranelift_codegen::ir::Immediate)>,
}

/// Tile space as compiled code sees it: host base, size, the granule permission table, and
/// the readable and writable granule-run tables (`TileView`).
#[derive(Clone, Copy)]
pub(crate) struct TileVals {
    pub(crate) base: Value,
    pub(crate) size: Value,
    pub(crate) perms: Value,
    pub(crate) run_r: Value,
    pub(crate) run_w: Value,
}

/// The Rust helpers compiled code calls (see [`abi`]), by signature.
#[derive(Clone, Copy)]
pub(crate) enum Helper {
    /// `lj_load`, `lj_load_contig`, `lj_store`, `lj_store_contig` (one signature).
    Load,
    /// `lj_load_ea`, `lj_store_ea`.
    MemEa,
    /// `lj_fma`.
    Fma,
    /// `lj_vop`.
    Vop,
    /// `lj_redsum`.
    Redsum,
    /// `lj_copy`.
    Copy,
    /// `lj_fill`.
    Fill,
    /// A compiled region (`RegionFn`), called by a chained exit.
    Region,
}

/// Flags for accesses to memory that a check has proven in bounds.
pub(crate) fn flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

impl<'a, 'f> Tx<'a, 'f> {
    /// All lanes of this VL.
    pub(crate) fn all(&self) -> u64 {
        all_lanes(self.vl)
    }

    pub(crate) fn iconst(&mut self, v: u64) -> Value {
        self.b.ins().iconst(I64, v as i64)
    }

    /// The address of helper `h`, read from the context's helper table (`abi::HELPERS`), so
    /// that no host address is embedded in the code.
    pub(crate) fn helper_addr(&mut self, h: crate::abi::HelperFn) -> Value {
        let ro = MemFlagsData::trusted().with_readonly();
        let table = self
            .b
            .ins()
            .load(I64, ro, self.ctx, crate::abi::off::HELPERS);
        self.b.ins().load(I64, ro, table, 8 * h as i32)
    }

    /// The 64-bit word at byte offset `off` of the register file (`Regs::OFFSET_*`): state the
    /// program reads but never writes, such as the group id.
    pub(crate) fn regs_word(&mut self, off: usize) -> Value {
        self.b
            .ins()
            .load(I64, MemFlagsData::trusted(), self.regs, off as i32)
    }

    /// The value of `v` when the translator made it a 64-bit constant (`S.LI`, immediates,
    /// folded scalar ALU). Lets control flow on known values be decided at translation time.
    pub(crate) fn const_of(&self, v: Value) -> Option<u64> {
        let dfg = &self.b.func.dfg;
        let v = dfg.resolve_aliases(v);
        let ValueDef::Result(inst, 0) = dfg.value_def(v) else {
            return None;
        };
        match dfg.insts[inst] {
            InstructionData::UnaryImm {
                opcode: cranelift_codegen::ir::Opcode::Iconst,
                imm,
            } if dfg.value_type(v) == I64 => Some(imm.bits() as u64),
            _ => None,
        }
    }

    /// An `i64x2` constant.
    pub(crate) fn vconst2(&mut self, lo: u64, hi: u64) -> Value {
        let mut bytes = Vec::with_capacity(16);
        bytes.extend_from_slice(&lo.to_le_bytes());
        bytes.extend_from_slice(&hi.to_le_bytes());
        let c = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        self.b.ins().vconst(I64X2, c)
    }

    /// A byte shuffle of two `i8x16` values.
    /// Each distinct index vector is one immediate of the function, so equal shuffles of
    /// equal operands are one value to Cranelift's optimiser (a new immediate per shuffle
    /// made every narrowing of a broadcast register a shuffle of its own).
    pub(crate) fn shuffle(&mut self, a: Value, b: Value, idx: [u8; 16]) -> Value {
        let imm = match self.shuffle_imms.iter().find(|(k, _)| *k == idx) {
            Some(&(_, imm)) => imm,
            None => {
                let imm = self
                    .b
                    .func
                    .dfg
                    .immediates
                    .push(ConstantData::from(idx.to_vec()));
                self.shuffle_imms.push((idx, imm));
                imm
            }
        };
        self.b.ins().shuffle(a, b, imm)
    }

    /// Reinterpret a 128-bit vector as another lane type (little-endian lane order).
    pub(crate) fn bitcast(&mut self, ty: cranelift_codegen::ir::Type, v: Value) -> Value {
        let little = cranelift_codegen::ir::Endianness::Little;
        let dfg = &self.b.func.dfg;
        let mut v = dfg.resolve_aliases(v);
        // A little-endian bitcast of a little-endian bitcast reinterprets the same bytes: cast
        // the value the chain started from (the packed f32 lanes of a chain of FP operations
        // went to bytes and back between every two: 39% of fir8_unfused's loop IR).
        while let ValueDef::Result(inst, 0) = dfg.value_def(v) {
            let data = &dfg.insts[inst];
            let cranelift_codegen::ir::InstructionData::LoadNoOffset {
                opcode: cranelift_codegen::ir::Opcode::Bitcast,
                arg,
                ..
            } = *data
            else {
                break;
            };
            if data
                .memflags_data(dfg)
                .and_then(|f| f.explicit_endianness())
                != Some(little)
            {
                break;
            }
            v = dfg.resolve_aliases(arg);
        }
        if dfg.value_type(v) == ty {
            return v;
        }
        // One cast of a value to a type per block: it precedes every later use in the block.
        let Some(block) = self.b.current_block() else {
            let f = MemFlagsData::new().with_endianness(little);
            return self.b.ins().bitcast(ty, f, v);
        };
        if let Some(&c) = self.casts.get(&(block, v, ty)) {
            return c;
        }
        let f = MemFlagsData::new().with_endianness(little);
        let c = self.b.ins().bitcast(ty, f, v);
        self.casts.insert((block, v, ty), c);
        c
    }

    /// Read scalar register `r`.
    pub(crate) fn sget(&mut self, r: SReg) -> Value {
        match self.s[r.0 as usize] {
            Some(var) if r.0 != 0 => self.b.use_var(var),
            _ => self.iconst(0),
        }
    }

    /// Write scalar register `r` (writes to s0 are discarded).
    pub(crate) fn sset(&mut self, r: SReg, v: Value) {
        if r.0 == 0 {
            return;
        }
        let var = self.s[r.0 as usize].expect("register declared by the pre-pass");
        self.b.def_var(var, v);
    }

    /// Byte offset of chunk `c` of vector register `r` in the register file.
    pub(crate) fn voff(r: VReg, c: usize) -> i32 {
        (Regs::OFFSET_V + 64 * 8 * r.0 as usize + 16 * c) as i32
    }

    /// Address of vector register `r` (64 lanes) in the register file.
    pub(crate) fn vreg_addr(&mut self, r: VReg) -> Value {
        self.b.ins().iadd_imm_s(self.regs, Self::voff(r, 0) as i64)
    }

    /// Chunk `c` of `r` as the register file holds it.
    pub(crate) fn vload(&mut self, r: VReg, c: usize) -> Value {
        self.b
            .ins()
            .load(I64X2, MemFlagsData::trusted(), self.regs, Self::voff(r, c))
    }

    /// Store chunk `c` of `r` to the register file (only lane 0 at VL 1, as the writeback).
    pub(crate) fn vstore(&mut self, r: VReg, c: usize, v: Value) {
        let fl = MemFlagsData::trusted();
        if self.vl == 1 {
            let l0 = self.b.ins().extractlane(v, 0);
            self.b.ins().store(fl, l0, self.regs, Self::voff(r, c));
        } else {
            self.b.ins().store(fl, v, self.regs, Self::voff(r, c));
        }
    }

    /// Chunk `c` of vector register `r`.
    pub(crate) fn vget(&mut self, r: VReg, c: usize) -> Value {
        if self.vmem {
            return self.vload(r, c);
        }
        if self.ro_v & (1 << r.0) != 0 {
            // Never written in this region: read from the register file, where it stays
            // unchanged until the function returns (so the load may move and be shared); in
            // a strip-mined copy, the lanes of the copy's `W` (`Tx::lane_base`).
            let f = MemFlagsData::trusted().with_readonly().with_can_move();
            let base = self.lane_base.unwrap_or(self.regs);
            return self.b.ins().load(I64X2, f, base, Self::voff(r, c));
        }
        match self.form[r.0 as usize] {
            // Not normally reached (instructions materialise their packed operands first);
            // widening locally is correct wherever it happens.
            Form::Packed { log2e, ext, .. } => {
                // Only this chunk's widening: a reader of every chunk (an index's lane EAs)
                // would otherwise emit the whole register's for each one.
                let per = 8usize >> log2e;
                let p = self.packed_vals(r, log2e)[c / per];
                return self.widen_one(p, log2e, ext == lanejit_interp::isa::Ext::Sign, c % per);
            }
            Form::Acc { .. } => return self.acc_values(r)[c],
            Form::Wide => {}
        }
        let var = self.v[r.0 as usize].as_ref().expect("register declared")[c];
        self.b.use_var(var)
    }

    /// The packed variables' values of `r`.
    pub(crate) fn packed_vals(&mut self, r: VReg, log2e: u8) -> Vec<Value> {
        self.flush_deferred(1 << r.0, false);
        let n = ((self.vl as usize) << log2e) / 16;
        let vars = self.pv[r.0 as usize].clone().expect("packed vars declared");
        vars[..n].iter().map(|&v| self.b.use_var(v)).collect()
    }

    /// Define `r`'s packed variables as `vals` (16 bytes each, lanes of `1 << log2e` bytes
    /// extended by `ext`) and mark it packed.
    pub(crate) fn def_packed(&mut self, r: VReg, log2e: u8, ext: Ext, vals: &[Value]) {
        // A load still deferred into `r` is dead now.
        self.deferred.retain(|d| d.0 != r);
        let vars = self.pv[r.0 as usize].clone().expect("packed vars declared");
        for (var, &v) in vars.iter().zip(vals) {
            self.b.def_var(*var, v);
        }
        self.form[r.0 as usize] = Form::packed(log2e, ext);
    }

    /// [`Self::def_packed`] of lanes whose values (extended) lie in `lo..=hi`.
    pub(crate) fn def_packed_range(
        &mut self,
        r: VReg,
        log2e: u8,
        ext: Ext,
        (lo, hi): (i64, i64),
        vals: &[Value],
    ) {
        self.def_packed(r, log2e, ext, vals);
        self.form[r.0 as usize] = Form::Packed { log2e, ext, lo, hi };
    }

    /// Whether a contiguous load of width `log2e` into `r` can stay packed.
    pub(crate) fn can_pack(&self, r: VReg, log2e: u8) -> bool {
        self.pv[r.0 as usize].is_some() && ((self.vl as usize) << log2e) >= 16
    }

    /// The `i64x2` chunks of a packed register, extended (no state change).
    pub(crate) fn widen_packed(&mut self, r: VReg) -> Vec<Value> {
        let Form::Packed { log2e, ext, .. } = self.form[r.0 as usize] else {
            unreachable!("widen_packed on a wide register")
        };
        let sign = ext == lanejit_interp::isa::Ext::Sign;
        let packed = self.packed_vals(r, log2e);
        let mut out = Vec::with_capacity(self.nch);
        for p in packed {
            out.extend(self.widen_to_64(p, log2e, sign));
        }
        out
    }

    /// The `i64x2` chunks of the 16 bytes `p` read as lanes of `1 << log2e` bytes, sign- or
    /// zero-extended (`sign`), in lane order.
    pub(crate) fn widen_to_64(&mut self, p: Value, log2e: u8, sign: bool) -> Vec<Value> {
        let mut level = vec![match log2e {
            3 => self.bitcast(I64X2, p),
            2 => self.bitcast(I32X4, p),
            1 => self.bitcast(I16X8, p),
            _ => p,
        }];
        for _ in log2e..3 {
            level = level
                .into_iter()
                .flat_map(|v| {
                    let (a, b) = if sign {
                        (self.b.ins().swiden_low(v), self.b.ins().swiden_high(v))
                    } else {
                        (self.b.ins().uwiden_low(v), self.b.ins().uwiden_high(v))
                    };
                    [a, b]
                })
                .collect();
        }
        level
    }

    /// The `k`th `i64x2` chunk of [`Self::widen_to_64`]`(p, log2e, sign)`, widening only
    /// the halves that lead to it.
    fn widen_one(&mut self, p: Value, log2e: u8, sign: bool, k: usize) -> Value {
        let mut v = match log2e {
            3 => return self.bitcast(I64X2, p),
            2 => self.bitcast(I32X4, p),
            1 => self.bitcast(I16X8, p),
            _ => p,
        };
        let levels = 3 - log2e as usize;
        for i in 0..levels {
            let high = (k >> (levels - 1 - i)) & 1 == 1;
            v = match (sign, high) {
                (true, false) => self.b.ins().swiden_low(v),
                (true, true) => self.b.ins().swiden_high(v),
                (false, false) => self.b.ins().uwiden_low(v),
                (false, true) => self.b.ins().uwiden_high(v),
            };
        }
        v
    }

    /// Turn a packed register wide in the current block.
    pub(crate) fn materialize(&mut self, r: VReg) {
        match self.form[r.0 as usize] {
            Form::Packed { .. } => {
                let vals = self.widen_packed(r);
                self.form[r.0 as usize] = Form::Wide;
                self.vset_raw(r, &vals);
            }
            Form::Acc { .. } => {
                let vals = self.acc_values(r);
                self.vset_raw(r, &vals);
            }
            Form::Wide => {}
        }
    }

    /// The 64-bit chunks of accumulator `r` (`Form::Acc`): its chunk variables (or its
    /// chunks in [`Tx::acc_slot`]) plus its narrow sums, sign-extended.
    pub(crate) fn acc_values(&mut self, r: VReg) -> Vec<Value> {
        let wide = self.acc_sums(r);
        let var = self.v[r.0 as usize].clone().expect("register declared");
        let slot = self.acc_slot_at(r);
        var.iter()
            .zip(wide)
            .enumerate()
            .map(|(c, (&v, s))| {
                let base = match slot {
                    Some((slot, off)) => {
                        self.b
                            .ins()
                            .stack_load(I64, I64X2, slot, off + 16 * c as i32)
                    }
                    None => self.b.use_var(v),
                };
                self.b.ins().iadd(base, s)
            })
            .collect()
    }

    /// The narrow sums of accumulator `r` (`Form::Acc`), sign-extended to 64-bit chunks.
    fn acc_sums(&mut self, r: VReg) -> Vec<Value> {
        let Form::Acc { log2e } = self.form[r.0 as usize] else {
            unreachable!("acc_sums on a register that is not an accumulator")
        };
        let mut sums = self.packed_vals(r, log2e);
        if log2e == 2 && self.acc_perm & (1 << r.0) != 0 && !self.acc_natural {
            // Each pair of chunks holds even lanes, then odd ones (`Tx::even_odd`).
            let (lo, hi) = (mem::unpack(4, 0), mem::unpack(4, 1));
            sums = sums
                .chunks(2)
                .flat_map(|p| [self.shuffle(p[0], p[1], lo), self.shuffle(p[0], p[1], hi)])
                .collect();
        }
        let mut wide = Vec::with_capacity(self.nch);
        for p in sums {
            wide.extend(self.widen_to_64(p, log2e, true));
        }
        wide
    }

    /// Add accumulator `r`'s narrow sums into its 64-bit chunks and zero them (the streaming
    /// copy's periodic flush). In [`Tx::acc_slot`] one chunk at a time: one chunk live at
    /// once, where materialising the register first would keep all of them live; else into
    /// its chunk variables.
    pub(crate) fn acc_flush(&mut self, r: VReg) {
        let Some((slot, off)) = self.acc_slot_at(r) else {
            self.materialize(r);
            self.acc_zero(r);
            return;
        };
        let sums = self.acc_sums(r);
        for (c, s) in sums.into_iter().enumerate() {
            let at = off + 16 * c as i32;
            let x = self.b.ins().stack_load(I64, I64X2, slot, at);
            let y = self.b.ins().iadd(x, s);
            self.b.ins().stack_store(I64, y, slot, at);
        }
        self.acc_zero_sums(r);
    }

    /// Where accumulator `r`'s wide chunks are kept while the streaming copy is translated
    /// ([`Tx::acc_slot`]): the slot and their offset.
    fn acc_slot_at(&self, r: VReg) -> Option<(StackSlot, i32)> {
        let slot = self.acc_slot?;
        if self.acc_slot_regs & (1 << r.0) == 0 {
            return None;
        }
        let before = (self.acc_slot_regs & ((1u32 << r.0) - 1)).count_ones();
        Some((slot, (before as usize * 16 * self.nch) as i32))
    }

    /// Zero the narrow sums of accumulator `r`, whose chunk variables hold its value (put
    /// in [`Tx::acc_slot`] when it has one; its form becomes `Form::Acc` with the lanes the
    /// first full copy found).
    pub(crate) fn acc_zero(&mut self, r: VReg) {
        if let Some((slot, off)) = self.acc_slot_at(r) {
            let wide = self.v[r.0 as usize].clone().expect("register declared");
            for (c, v) in wide.into_iter().enumerate() {
                let x = self.b.use_var(v);
                self.b.ins().stack_store(I64, x, slot, off + 16 * c as i32);
            }
        }
        self.acc_zero_sums(r);
    }

    /// Zero the narrow sums of accumulator `r` (its form becomes `Form::Acc` with the lanes
    /// the first full copy found).
    fn acc_zero_sums(&mut self, r: VReg) {
        let log2e = self.acc_seen[r.0 as usize].0;
        let zero = zero_vector(self.b, I8X16);
        let vars = self.pv[r.0 as usize]
            .clone()
            .expect("accumulator vars declared");
        for v in vars {
            self.b.def_var(v, zero);
        }
        self.form[r.0 as usize] = Form::Acc { log2e };
    }

    /// Canonicalise and materialise every register but the iteration-local ones (an exit or
    /// a loop edge: the state leaving here is the architectural one).
    pub(crate) fn materialize_all(&mut self) {
        self.flush_deferred(u32::MAX, false);
        for n in 0..32u8 {
            if self.local_v & (1 << n) != 0 {
                // Iteration-local: never carried around an edge or written back by an exit
                // (its stores are `Tx::store_local`'s), so its wide form would be dead code.
                continue;
            }
            self.canonicalize(VReg(n));
            self.materialize(VReg(n));
        }
    }

    /// All chunks of vector register `r`.
    pub(crate) fn vget_all(&mut self, r: VReg) -> Vec<Value> {
        (0..self.nch).map(|c| self.vget(r, c)).collect()
    }

    /// The per-lane `i64x2` mask of chunk `c` (all ones in active lanes).
    pub(crate) fn lane_mask(&mut self, c: usize) -> Value {
        debug_assert!(self.lmask_valid, "lane masks used while stale");
        self.b.use_var(self.lmask[c])
    }

    /// Set the mask (its per-lane form becomes stale).
    pub(crate) fn set_mask(&mut self, m: Value) {
        self.b.def_var(self.mask, m);
        self.lmask_valid = false;
        self.known_partial = false;
    }

    /// Compute the per-lane mask variables from the mask, in the current block.
    pub(crate) fn refresh_lane_masks(&mut self) {
        let m = self.b.use_var(self.mask);
        let lm = lane_masks(self.b, m, self.nch);
        if self.lmask.is_empty() {
            // Every use follows a refresh on every path (`lmask_valid`), so these need no
            // value at entry.
            self.lmask = (0..self.nch).map(|_| self.b.declare_var(I64X2)).collect();
        }
        for (c, v) in lm.into_iter().enumerate() {
            self.b.def_var(self.lmask[c], v);
        }
        self.lmask_valid = true;
    }

    /// Write `vals` to the active lanes of `r` (all lanes when the mask is statically full).
    pub(crate) fn vset_masked(&mut self, r: VReg, vals: &[Value]) {
        debug_assert!(self.full || self.form[r.0 as usize] == Form::Wide);
        self.form[r.0 as usize] = Form::Wide;
        for (c, &v) in vals.iter().enumerate() {
            let nv = if self.full {
                v
            } else {
                let old = self.vget(r, c);
                let m = self.lane_mask(c);
                self.b.ins().bitselect(m, v, old)
            };
            if self.vmem {
                self.vstore(r, c, nv);
                continue;
            }
            let var = self.v[r.0 as usize].as_ref().expect("register declared")[c];
            self.b.def_var(var, nv);
        }
    }

    /// Write all lanes of `r` (the value already respects the mask).
    pub(crate) fn vset_raw(&mut self, r: VReg, vals: &[Value]) {
        self.form[r.0 as usize] = Form::Wide;
        for (c, &v) in vals.iter().enumerate() {
            if self.vmem {
                self.vstore(r, c, v);
                continue;
            }
            let var = self.v[r.0 as usize].as_ref().expect("register declared")[c];
            self.b.def_var(var, v);
        }
    }

    /// The mask value to hand to a helper.
    pub(crate) fn mask_value(&mut self) -> Value {
        if self.full {
            self.iconst(self.all())
        } else {
            self.b.use_var(self.mask)
        }
    }

    /// The signature of helper `h`, imported on first use.
    pub(crate) fn sig(&mut self, h: Helper) -> SigRef {
        use cranelift_codegen::ir::types::I32;
        if let Some(s) = self.sigs[h as usize] {
            return s;
        }
        let (params, ret): (
            &[cranelift_codegen::ir::Type],
            Option<cranelift_codegen::ir::Type>,
        ) = match h {
            Helper::Load => (&[I64, I64, I64, I32, I64], Some(I32)),
            Helper::MemEa => (&[I64, I64, I64, I64, I64, I32, I64], Some(I32)),
            Helper::Fma => (&[I64, I64, I64, I64, I32], None),
            Helper::Vop => (&[I64, I32, I64, I64], None),
            Helper::Redsum => (&[I64, I32, I64], Some(I64)),
            Helper::Copy => (&[I64, I64, I64], None),
            Helper::Fill => (&[I64, I64], Some(I64)),
            Helper::Region => (&[I64], Some(I64)),
        };
        let mut sg = Signature::new(self.call_conv);
        sg.params.extend(params.iter().map(|&t| AbiParam::new(t)));
        sg.returns.extend(ret.map(AbiParam::new));
        let s = self.b.import_signature(sg);
        self.sigs[h as usize] = Some(s);
        s
    }

    fn scratch_slot(&mut self) -> StackSlot {
        *self.scratch.get_or_insert_with(|| {
            self.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                4 * AREA,
                4,
            ))
        })
    }

    /// Address of scratch area `i` (0..4, each 64 lanes).
    pub(crate) fn scratch_addr(&mut self, i: u32) -> Value {
        let slot = self.scratch_slot();
        self.b.ins().stack_addr(I64, slot, (i * AREA) as i32)
    }

    /// Store chunks into scratch area `i`.
    pub(crate) fn spill(&mut self, i: u32, vals: &[Value]) -> Value {
        let p = self.scratch_addr(i);
        for (c, &v) in vals.iter().enumerate() {
            self.b
                .ins()
                .store(MemFlagsData::trusted(), v, p, (16 * c) as i32);
        }
        p
    }

    /// Load chunks from scratch area `i`.
    pub(crate) fn unspill(&mut self, p: Value) -> Vec<Value> {
        (0..self.nch)
            .map(|c| {
                self.b
                    .ins()
                    .load(I64X2, MemFlagsData::trusted(), p, (16 * c) as i32)
            })
            .collect()
    }

    /// Whether the lowering of `inst` (writing `w`) uses the per-lane masks: every inline
    /// vector write and `V.REDSUM`, but not what straight-line code hands to a helper (memory
    /// accesses, and vector ALU, FP and `V.REDSUM` above VL 2; see `alu`).
    fn blends(&self, inst: &Inst, w: RegSet) -> bool {
        if !self.helpers {
            return w.v != 0 || matches!(inst, Inst::VRedsum(_));
        }
        match inst.opcode().sem() {
            Sem::Mem(_) => false,
            Sem::Fp(..) => false,
            Sem::VAlu(_) | Sem::RedSum | Sem::VMov | Sem::VRead(_) => self.vl <= 2,
            _ => w.v != 0,
        }
    }

    /// Translate one non-control instruction (control instructions go to `control`).
    fn inst(&mut self, pc: u64, inst: &Inst) {
        self.pc = pc;
        let (u, w) = reg_effects(inst);
        let stores = inst
            .opcode()
            .mem()
            .is_some_and(|m| m.dir == lanejit_interp::isa::Dir::Store);
        let scatter_data = self.scatter_deferred(pc, inst);
        let later = scatter_data.map_or(0, |d| 1u32 << d);
        self.flush_deferred(if stores { !later } else { u.v | w.v }, true);
        if stores {
            self.mem_src.clear();
        }
        for n in 0..32 {
            if w.v & (1 << n) != 0 {
                self.mref[n] = None;
            }
        }
        self.sign_masks &= !w.v;
        // Read for the operands' old values; what the instruction writes is known after it.
        self.bytes_made = 0;
        if !self.full && !self.lmask_valid && self.blends(inst, w) {
            self.refresh_lane_masks();
        }
        let keep = self.packed_ok_operand(inst).map_or(0, |r| 1u32 << r.0)
            | self.packed_f32_operands(inst)
            | self.narrow_int_operands(inst).map_or(0, |n| n.keep)
            | self.narrow_mul_operands(inst).map_or(0, |n| n.keep)
            | self.packed_int_operands(inst).map_or(0, |p| p.keep)
            | self
                .packed_sign_mask_operands(inst)
                .map_or(0, |(a, b, _)| (1 << a.0) | (1 << b.0))
            | self.packed_index_operand(inst)
            | self.acc_operands(inst);
        // Overwritten whole under a full mask: its old value is seen only if the instruction
        // exits before writing (a fault), and exits canonicalise what they write back, so it
        // stays as it is until the write.
        let overwritten = if self.full {
            w.v & !inst.effects().reads_v
        } else {
            0
        };
        let lazy = self.lazy_fp_reads(inst) | self.lazy_store_data(pc, inst) | overwritten;
        self.nan_set = 0;
        for n in 0..32u8 {
            if u.v & (1 << n) != 0 && lazy & (1 << n) == 0 {
                self.canonicalize(VReg(n));
            }
            if u.v & (1 << n) != 0 && keep & (1 << n) == 0 {
                self.materialize(VReg(n));
            }
        }
        // Computed before the instruction is lowered, in a block that dominates the rest
        // of the body copy.
        let (shape, ro_plus, ind_of) = if w.v != 0 {
            (
                self.result_shape(inst),
                self.result_ro_plus(inst),
                self.result_ind_of(inst),
            )
        } else {
            (None, None, None)
        };
        self.inst_block = self.b.current_block();
        let scatter_data = scatter_data.filter(|&d| {
            // Widened for the instruction (a store narrower than the loaded lanes): loaded
            // here already, at its start.
            let packed = matches!(self.form[d as usize], Form::Packed { .. });
            if !packed {
                self.deferred.retain(|x| x.0.0 != d);
            }
            packed
        });
        if !self.mem_inst(pc, inst) && !self.alu_inst(inst) {
            unreachable!("region discovery only admits lowerable instructions: {inst}");
        }
        if let Some(d) = scatter_data {
            // Every path of the scatter loaded its deferred data where it read it (before its
            // first lane store): loaded on every path to here, and not to be loaded again
            // after the stores (nor its chunks reused as loaded since the last store).
            self.deferred.retain(|x| x.0.0 != d);
            self.mem_src.clear();
        }
        self.byte_lanes = (self.byte_lanes & !w.v) | self.bytes_made;
        // What the instruction wrote is canonical unless it left a raw FP result.
        for n in 0..32 {
            if w.v & !self.nan_set & (1 << n) != 0 {
                self.nan[n] = None;
            }
        }
        for n in 0..32 {
            if w.v & (1 << n) != 0 {
                // A pair translated as one (`Tx::fused`) leaves lane masks, not the shape
                // of the first instruction's result.
                self.shape[n] = if self.fused { None } else { shape };
                self.ro_plus[n] = if self.fused { None } else { ro_plus };
                self.ind_of[n] = if self.fused { None } else { ind_of };
            }
        }
        self.off += 1;
    }

    /// Whether the mask is all ones (the test choosing a body's full or partial copy).
    fn mask_is_full(&mut self) -> Value {
        let m = self.b.use_var(self.mask);
        let all = self.all();
        self.b.ins().icmp_imm_s(IntCC::Equal, m, all as i64)
    }

    /// Translate on from a block every edge enters with every register wide and canonical
    /// (no packed form, no raw floating-point result known).
    pub(crate) fn all_wide(&mut self) {
        self.form = [Form::Wide; 32];
        self.nan = [None; 32];
    }

    /// Go on in `genb`, the partial-mask copy of a body, from the state at the mask test:
    /// every register wide and canonical (whatever the full copy's translation left in
    /// `form` and `nan`).
    fn start_partial_copy(&mut self, genb: Block) {
        self.all_wide();
        self.b.switch_to_block(genb);
        self.b.seal_block(genb);
        self.full = false;
        self.off = 0;
    }

    /// Forget what the instructions translated so far showed of the registers' lanes and
    /// of memory (lane masks, loaded chunks, sign masks, byte lanes, shapes): a body copy
    /// starts at a merge point.
    pub(crate) fn forget_copy_facts(&mut self) {
        self.lmask_valid = false;
        self.mem_src.clear();
        self.mref = [None; 32];
        self.sign_masks = 0;
        self.byte_lanes = 0;
        self.forget_shapes();
    }

    /// Translate `r.insts[from..]` in the current block (one body version).
    fn run(&mut self, r: &Region, from: usize, header: Option<Block>) {
        self.forget_copy_facts();
        if header.is_some() {
            self.seed_entry_shapes();
        }
        // Every edge into a body copy canonicalised what it carried, but the raw f32 and f64
        // results the edges into a loop's second copy carry (`Tx::entry_nan`).
        self.nan = self.entry_nan;
        let head_pc = r.insts[r.loop_head.unwrap_or(0)].0;
        // The copies that leave iteration-local registers in the register file (the first
        // full copy and the masked tail) store each one right after the body's last
        // instruction that touches it, so no value of it stays live to the `ENDLOOP`.
        let leaves_local = self.local_v != 0 && self.stream.is_none() && self.full;
        self.local_stored = 0;
        // `after[i]`: the vector registers instructions `i..` read or write (in the masked
        // tail, whose slot stores wait for the guest store of their chunk, write: see
        // `Tx::pending_local`).
        let mut after = vec![0u32; r.insts.len() + 1];
        for (i, (_, inst)) in r.insts.iter().enumerate().rev() {
            let e = inst.effects();
            let reads = if self.readonly { 0 } else { e.reads_v };
            after[i] = after[i + 1] | reads | e.writes_v;
        }
        let mut skip = false;
        for (i, (pc, inst)) in r.insts.iter().enumerate().skip(from) {
            if i == 0 && matches!(inst, Inst::Loop(_)) {
                self.loop_prologue(*pc, inst);
                continue;
            }
            if crate::region::is_control(inst) {
                self.flush_stores();
                if let (true, Some(&(on, _))) = (r.trace, r.insts.get(i + 1)) {
                    // A trace's side exit; the loop goes on at `on`.
                    self.side_exit(*pc, inst, on);
                    continue;
                }
                self.control(*pc, inst, header, head_pc);
                return;
            }
            if skip {
                // Translated with the instruction before it (`Tx::fused`): retired here.
                skip = false;
                self.off += 1;
            } else {
                self.next = r.insts.get(i + 1).map(|&(_, n)| n);
                self.inst(*pc, inst);
                self.next = None;
                skip = std::mem::take(&mut self.fused);
            }
            if leaves_local {
                // Touched here and by nothing after: its value in this copy is final.
                let last = self.local_v & (after[i] & !after[i + 1]);
                for n in 0..32u8 {
                    if last & (1 << n) != 0 {
                        self.store_local(VReg(n));
                    }
                }
            }
        }
        self.flush_stores();
        match r.end {
            RunEnd::Control => unreachable!("a control run ends in its control instruction"),
            RunEnd::Decline => {
                self.fallback(r.end_pc, crate::observe::Fallback::Declined);
                self.exit_pc(Status::Interp, r.end_pc, 0)
            }
            RunEnd::MaxLen | RunEnd::Body => self.exit_pc(Status::Next, r.end_pc, 0),
        }
    }
}

impl Tx<'_, '_> {
    /// The epilogue of nest `n` (`r.insts[o..]`), entered from every exit edge of the inner
    /// loop with every register wide and canonical (translated for any mask: an inner
    /// `ENDLOOP` leaves it all ones, an inner branch loop as its body left it): its
    /// instructions under their own budget check, then the outer branch or `ENDLOOP`, whose
    /// edge back returns to the prologue (`Tx::edge`).
    pub(super) fn epilogue(&mut self, r: &Region, n: Nest, o: usize, header: Block) {
        self.b.switch_to_block(n.epi);
        self.all_wide();
        self.full = false;
        self.known_partial = false;
        self.masked_tail = false;
        self.prechecked = false;
        self.fast = None;
        self.stream = None;
        self.lmask_valid = false;
        self.sign_masks = 0;
        self.byte_lanes = 0;
        self.forget_shapes();
        self.off = 0;
        let head_pc = r.insts[r.loop_head.unwrap_or(0)].0;
        self.budget_check((r.insts.len() - o) as u64, n.epi_pc);
        for (pc, inst) in &r.insts[o..] {
            if crate::region::is_control(inst) {
                self.control(*pc, inst, Some(header), head_pc);
                return;
            }
            self.inst(*pc, inst);
        }
        unreachable!("a nest's epilogue ends in its outer branch");
    }
}

/// An all-zero 128-bit vector of type `ty`.
fn zero_vector(b: &mut FunctionBuilder<'_>, ty: cranelift_codegen::ir::Type) -> Value {
    let c = b
        .func
        .dfg
        .constants
        .insert(ConstantData::from(vec![0u8; 16]));
    b.ins().vconst(ty, c)
}

/// The per-lane `i64x2` masks of mask value `m`.
pub(super) fn lane_masks(b: &mut FunctionBuilder<'_>, m: Value, nch: usize) -> Vec<Value> {
    let sm = b.ins().splat(I64X2, m);
    let z = zero_vector(b, I64X2);
    (0..nch)
        .map(|c| {
            let mut bytes = Vec::with_capacity(16);
            bytes.extend_from_slice(&(1u64 << (2 * c)).to_le_bytes());
            bytes.extend_from_slice(&(1u64 << (2 * c + 1)).to_le_bytes());
            let k = b.func.dfg.constants.insert(ConstantData::from(bytes));
            let bits = b.ins().vconst(I64X2, k);
            let t = b.ins().band(sm, bits);
            b.ins().icmp(IntCC::NotEqual, t, z)
        })
        .collect()
}

/// Build the body of `func` for region `r`, with the region report's counters when `probes`
/// is given. `false` when the strip-mined form was asked for ([`TxConfig::strip`]) and its body
/// copies came out with an exit (the function is then not to be used).
pub(crate) fn translate(
    b: &mut FunctionBuilder<'_>,
    r: &Region,
    cfg: TxConfig,
    probes: Option<&mut crate::observe::Probes>,
) -> bool {
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.seal_block(entry);
    let ctx = b.block_params(entry)[0];
    let tf = MemFlagsData::trusted();
    let regs = b.ins().load(I64, tf, ctx, abi::off::REGS);
    // Only what the region uses is loaded: straight-line code hands memory to helpers (which
    // read the context themselves), and the budget matters only under an instruction limit.
    let vmem = r.loop_head.is_none() || cfg.plan == plan::Plan::Memory;
    let unused = b.ins().iconst(I64, 0);
    let helpers = r.loop_head.is_none() && !cfg.hot;
    let needs_mem = !helpers && r.insts.iter().any(|(_, i)| i.opcode().mem().is_some());
    let [mem_base, mem_extent, mem_perms] = if needs_mem {
        [
            abi::off::MEM_BASE,
            abi::off::MEM_EXTENT,
            abi::off::MEM_PERMS,
        ]
        .map(|o| b.ins().load(I64, tf, ctx, o))
    } else {
        [unused; 3]
    };
    let tile = (!helpers
        && r.insts
            .iter()
            .any(|(_, i)| i.is_local() && i.opcode().mem().is_some()))
    .then(|| {
        let [base, size, perms, run_r, run_w] = [
            abi::off::TILE_BASE,
            abi::off::TILE_SIZE,
            abi::off::TILE_PERMS,
            abi::off::TILE_RUN_R,
            abi::off::TILE_RUN_W,
        ]
        .map(|o| b.ins().load(I64, tf, ctx, o));
        TileVals {
            base,
            size,
            perms,
            run_r,
            run_w,
        }
    });
    let budget = if cfg.budgeted {
        // What is left of the call's budget after the regions chained before this one.
        let all = b.ins().load(I64, tf, ctx, abi::off::BUDGET);
        let used = b.ins().load(I64, tf, ctx, abi::off::RETIRED);
        b.ins().isub(all, used)
    } else {
        unused
    };
    let loops = r
        .insts
        .iter()
        .any(|(_, i)| matches!(i, Inst::Loop(_) | Inst::Endloop(_)));
    let reads_lc0 = loops || r.insts.iter().any(|(_, i)| i.effects().reads_lc0);
    let writes_mask = loops || r.insts.iter().any(|(_, i)| matches!(i, Inst::VSetmask(_)));

    let mut used = RegSet::default();
    let mut dirty = RegSet::default();
    for (_, i) in &r.insts {
        let (u, w) = reg_effects(i);
        used.s |= u.s | w.s;
        used.v |= u.v;
        dirty.s |= w.s;
        dirty.v |= w.v;
    }
    let nch = (cfg.vl as usize).div_ceil(2);
    // Vector registers the region reads but never writes are read from the register file
    // (`Tx::ro_v`): no variables, nothing carried around loops.
    let ro_v = if vmem { 0 } else { used.v & !dirty.v };
    used.v &= !ro_v;
    let ind_v = if vmem { 0 } else { shape::stepped_v(r) };
    let seen = cfg.seen();
    let (mut hoist, stepped) = if vmem {
        (hoistable(r, &[], cfg.vl), Vec::new())
    } else {
        // At the loop's lanes: a strip-mined copy's are fewer, but a bump steps by VL.
        analysis::hoisted_and_stepped(r, seen.as_ref(), cfg.strip.unwrap_or(cfg.vl))
    };
    let spec = analysis::speculate_bases(&mut hoist, seen.as_ref());
    let copy = if cfg.budgeted {
        None
    } else {
        copy_loop(r, &hoist)
    };
    let local_v = if vmem || !has_vector_work(r) || cfg.strip.is_some() {
        0
    } else {
        iteration_local(r, &hoist, copy.is_some())
    };
    // Iteration-local registers are stored by the iterations that leave them (see
    // `Tx::local_v`), never by the exits.
    dirty.v &= !local_v;
    if vmem {
        // Vector registers are stored as they are written (see `Tx::vmem`).
        used.v = 0;
        dirty.v = 0;
    }
    let fresh = if r.loop_head.is_none() && !cfg.budgeted {
        written_first(r)
    } else {
        0
    };
    let mut s = [None; 32];
    for (n, slot) in s.iter_mut().enumerate().skip(1) {
        if used.s & (1 << n) != 0 {
            let var = b.declare_var(I64);
            let val = if fresh & (1 << n) != 0 {
                // Written before anything reads it or any exit can store it back.
                unused
            } else {
                b.ins().load(I64, tf, regs, (Regs::OFFSET_S + 8 * n) as i32)
            };
            b.def_var(var, val);
            *slot = Some(var);
        }
    }
    let mut v = vec![None; 32];
    for (n, slot) in v.iter_mut().enumerate() {
        if used.v & (1 << n) != 0 {
            let base = (Regs::OFFSET_V + 64 * 8 * n) as i32;
            let local = local_v & (1 << n) != 0;
            let zero = local.then(|| zero_vector(b, I64X2));
            let vars = (0..nch)
                .map(|c| {
                    let var = b.declare_var(I64X2);
                    // An iteration-local register is written before it is read: its entry
                    // value is never used (nothing reads it from the variable).
                    let val = match zero {
                        Some(z) => z,
                        None => b.ins().load(I64X2, tf, regs, base + 16 * c as i32),
                    };
                    b.def_var(var, val);
                    var
                })
                .collect();
            *slot = Some(vars);
        }
    }
    let pack = if vmem {
        0
    } else {
        packable(r) | accumulators(r) | repackable(r)
    };
    let mut pv = vec![None; 32];
    for (n, slot) in pv.iter_mut().enumerate() {
        if pack & (1 << n) != 0 {
            let zero = zero_vector(b, I8X16);
            *slot = Some(
                (0..nch)
                    .map(|_| {
                        let var = b.declare_var(I8X16);
                        b.def_var(var, zero);
                        var
                    })
                    .collect::<Vec<_>>(),
            );
        }
    }
    // LC0BASE and the trip count are loaded only if something reads them (LOOP/ENDLOOP,
    // contiguous addresses, `lc0` operands, S.LC0/V.LC0), and, like the mask, stored back only
    // if the region can write them.
    let mut ctl = |off: usize, read: bool| {
        let var = b.declare_var(I64);
        let val = if read {
            b.ins().load(I64, tf, regs, off as i32)
        } else {
            unused
        };
        b.def_var(var, val);
        var
    };
    let mask = ctl(Regs::OFFSET_MASK, true);
    let lc0 = ctl(Regs::OFFSET_LC0BASE, reads_lc0);
    let trip = ctl(Regs::OFFSET_TRIP, loops);
    // Declared on first use (`Tx::refresh_lane_masks`): most helper-based code never blends.
    let lmask: Vec<Variable> = Vec::new();
    let exit_block = b.create_block();
    b.set_cold_block(exit_block);
    let [xpc, xret, xstatus] = [(); 3].map(|_| {
        let v = b.declare_var(I64);
        let z = b.ins().iconst(I64, 0);
        b.def_var(v, z);
        v
    });
    let retired = b.declare_var(I64);
    let zero = b.ins().iconst(I64, 0);
    b.def_var(retired, zero);

    let mut tx = Tx {
        b,
        casts: rustc_hash::FxHashMap::default(),
        vl: cfg.vl,
        nch,
        strict: cfg.strict_align,
        budgeted: cfg.budgeted,
        yield_pc: (cfg.yields && r.loop_head.is_some()).then_some(r.start),
        strip_vl: cfg.strip,
        branch_back: r
            .insts
            .last()
            .and_then(|(_, i)| i.cond_branch())
            .is_some_and(|(b, _)| b.target.pc() == r.start),
        counted: analysis::counted_back_edge(r),
        // First compiles of straight-line code run a few times before their hot recompile
        // replaces them: they return to the dispatcher, which counts those entries, and save
        // the chaining code's compile time.
        chain_slots: if helpers { 0 } else { cfg.chain_slots },
        call_conv: cfg.call_conv,
        ctx,
        regs,
        mem_base,
        mem_extent,
        mem_perms,
        tile,
        budget,
        s,
        v,
        vmem,
        straight_hot: r.loop_head.is_none() && cfg.hot,
        helpers,
        native_fma: cfg.native_fma,
        tail: cfg.tail,
        ordered_tail: cfg.ordered_tail,
        steps: cfg.steps,
        strides: cfg.strides,
        mask,
        lmask,
        lmask_valid: false,
        known_partial: false,
        exit_block,
        xpc,
        xret,
        xstatus,
        lc0,
        trip,
        retired,
        dirty,
        full: false,
        off: 0,
        scratch: None,
        sigs: [None; 8],
        form: [Form::Wide; 32],
        pv,
        fast: None,
        fast_forms: None,
        fast_nan: None,
        entry_nan: [None; 32],
        ro_v,
        ind_v,
        ro_f32: vec![None; 32],
        ro_bounds: Vec::new(),
        base_runs: Vec::new(),
        stream: None,
        strip: None,
        lane_base: None,
        exits: 0,
        proven: Vec::new(),
        stream_second: false,
        acc_natural: false,
        acc_stash: Vec::new(),
        acc_seen: [(0, 0); 32],
        acc_regs: analysis::accumulators(r),
        acc_perm: analysis::product_accs(r),
        acc_n: None,
        acc_slot: None,
        acc_slot_regs: 0,
        readonly: false,
        ordered: 0,
        deferred: Vec::new(),
        mem_src: Vec::new(),
        masked_tail: false,
        tail_old: Vec::new(),
        loops,
        writes_mask,
        writes_trip: r.insts.iter().any(|(_, i)| matches!(i, Inst::Loop(_))),
        copy_loop: copy,
        hoist,
        spec,
        stepped,
        strip_sbase: Vec::new(),
        local_v,
        local_stored: 0,
        plocal: None,
        plocal_form: [None; 32],
        plocal_k: [None; 32],
        plocal_t: [None; 32],
        alocal_form: [None; 32],
        alocal: [None; 32],
        plocal_ta: [None; 32],
        mref: [None; 32],
        mref_nest: false,
        sign_masks: 0,
        byte_lanes: 0,
        bytes_made: 0,
        next: None,
        fused: false,
        repack: pack & repackable(r),
        fresh_v: if r.loop_head.is_some() {
            body_fresh(r)
        } else {
            0
        },
        carried_v: carried(r),
        pending_local: Vec::new(),
        tail_go: None,
        tail_proven: None,
        skip_local: None,
        prechecked: false,
        lim: None,
        nest_span: None,
        hoist_host: Vec::new(),
        shape: [None; 32],
        entry_stride: [None; 32],
        abase: [None; 32],
        ro_plus: [None; 32],
        ind_of: [None; 32],
        lane_bounds: Vec::new(),
        round_splats: Vec::new(),
        remat_splats: false,
        long_chains: long_fma_chains(r),
        uni_runs: mem::uniform_runs(r),
        defer_plan: false,
        held: None,
        uni_checked: Vec::new(),
        inst_block: None,
        nan: [None; 32],
        nan_set: 0,
        probes,
        pc: r.start,
        nest: None,
        shuffle_imms: Vec::new(),
        hoist_off: Vec::new(),
    };
    tx.hoist_off = (0..tx.hoist.len())
        .map(|j| tx.interleave_offset(j))
        .collect();
    tx.count_entry();
    if r.outer.is_some() && tx.local_v != 0 && tx.vl >= 4 {
        let body = r.loop_head.unwrap_or(0)..r.outer.unwrap_or(r.insts.len());
        tx.mref_nest = r.insts.iter().enumerate().all(|(i, (_, inst))| {
            body.contains(&i)
                || !inst
                    .opcode()
                    .mem()
                    .is_some_and(|m| m.dir == lanejit_interp::isa::Dir::Store)
        });
        tx.plocal_setup();
    }

    let h = r.loop_head.unwrap_or(0);
    if let Some(o) = r.outer {
        // A nest: the outer back edge returns to the prologue with every register in its
        // variable, wide and canonical, as the entry leaves them.
        let top = tx.b.create_block();
        let epi = tx.b.create_block();
        if !tx.hoist.is_empty() {
            if let Some(count) = analysis::nest_count(r) {
                let state = tx.b.declare_var(I64);
                let zero = tx.iconst(0);
                tx.b.def_var(state, zero);
                tx.nest_span = Some((state, count));
            }
        }
        let pre = match cfg.strip {
            Some(_) => None,
            None => tx.prologue_run(r, h),
        };
        tx.nest = Some(Nest {
            start: r.start,
            top,
            epi_pc: r.insts[o].0,
            epi,
            pre,
        });
        if let Some(p) = pre {
            tx.prologue_checks(p, 0);
        }
        tx.b.ins().jump(top, &[]);
        tx.b.switch_to_block(top);
        if pre.is_some() {
            // Checked on the way in (`Tx::prologue_checks`): nothing in the prologue leaves
            // before its loads overwrite the registers, whose old values are then not
            // carried around the outer loop.
            tx.full = true;
        } else if h > 1 || !matches!(r.insts[0].1, Inst::Loop(_)) {
            // Instructions before the inner loop run under a full mask (a branch back to
            // the start leaves it so, as the inner loop's exit does; an `ENDLOOP` back to it
            // leaves it partial before the last iteration); entered with another, from the
            // region entry or the back edge, the region leaves for the interpreter.
            // (The loop's VL lanes in the strip-mined form, translated at fewer.)
            let is_full = match cfg.strip {
                Some(vl) => {
                    let m = tx.b.use_var(tx.mask);
                    let all = lanejit_interp::machine::all_lanes(vl);
                    tx.b.ins().icmp_imm_s(IntCC::Equal, m, all as i64)
                }
                None => tx.mask_is_full(),
            };
            tx.guard(is_full, r.start, crate::observe::Fallback::PartialMask);
            tx.full = true;
        }
    }
    // A nest's prologue end, when its inner branch loop may be entered in the second copy.
    let mut pro_end = None;
    if h > 0 {
        // Prologue (up to the LOOP): its own budget check.
        if tx.nest.is_none_or(|n| n.pre.is_none()) {
            tx.budget_check(h as u64, r.start);
        }
        tx.run_prologue(r, h);
        if cfg.strip.is_none() {
            tx.entry_stride = tx.entry_strides(r);
            if analysis::never_partial(r) {
                tx.carry_affine_bases(r);
            }
        }
        if r.outer.is_some() {
            if tx.shortcut_ok(r, cfg.pairs) {
                // The inner branch loop's second copy may be entered straight from here
                // (`Tx::prologue_shortcut`): the forms as the prologue leaves them, for the
                // decision made once that copy is translated.
                pro_end = Some((tx.form, tx.nan));
            } else {
                // The header expects every register wide.
                tx.materialize_all();
            }
        }
    }
    if let Some(vl) = cfg.strip {
        let clean = tx.strip_loop(r, h, vl);
        tx.finish_exit_block();
        tx.b.seal_all_blocks();
        return clean;
    }
    // A loop's header is a block of its own (the back edges' target); straight-line code
    // goes on in the entry block.
    let mut shortcut = None;
    let header = if r.loop_head.is_some() {
        let header = tx.b.create_block();
        // The f32 lanes of read-only FP operands, narrowed once for every copy of the body.
        for (_, i) in &r.insts {
            if let (Operands::VFp(o), Sem::Fp(_, FpWidth::S)) = (i.operands(), i.opcode().sem()) {
                let regs = [
                    Some(o.va),
                    if let VSrc::V(b) = o.vb { Some(b) } else { None },
                ];
                for reg in regs.into_iter().flatten() {
                    if tx.ro_v & (1 << reg.0) != 0
                        && tx.vl >= 4
                        && tx.ro_f32[reg.0 as usize].is_none()
                    {
                        let lanes = tx.f32_lanes(reg);
                        tx.ro_f32[reg.0 as usize] = Some(lanes);
                    }
                }
            }
        }
        // The bounds of read-only lane offsets of gathers and scatters, also once.
        if !tx.vmem && tx.vl >= 4 {
            tx.ro_offsets(r);
            tx.base_runs(r);
        }
        if pro_end.is_some() {
            // The decision (`pe`) is made once the second copy is translated; the way to the
            // header (`slow`) widens every register as the header expects.
            let pe = tx.b.create_block();
            let slow = tx.b.create_block();
            tx.b.ins().jump(pe, &[]);
            tx.b.seal_block(pe);
            tx.b.switch_to_block(slow);
            tx.materialize_all();
            shortcut = Some((pe, slow));
        }
        tx.b.ins().jump(header, &[]);
        tx.b.switch_to_block(header);
        tx.affine_from_bases();
        header
    } else {
        tx.b.current_block().expect("translating in a block")
    };
    tx.off = 0;
    let body_len = r.body().len() as u64;
    let head_pc = r.insts[h].0;
    tx.budget_check(body_len, head_pc);
    let back = r.loop_head.map(|_| header);
    if r.loop_head.is_some() && has_vector_work(r) {
        let fullb = tx.b.create_block();
        let genb = tx.b.create_block();
        let is_full = tx.mask_is_full();
        let endloop = fast_loop_ok(r);
        tx.ordered = in_place(&tx.hoist);
        // The tail of an ENDLOOP loop (its one partial iteration) runs in the general copy
        // where registers live in variables; in the memory form (and when a span check finds
        // a fault ahead) it runs in the straight form of the body, compiled on first need,
        // which keeps such functions to the full copies.
        let tail_inline = endloop && !tx.vmem && tx.tail;
        let masked = tail_inline && !tx.hoist.is_empty() && masked_tail_ok(r, &tx.hoist);
        // In a nest, the streaming copy's last proven iteration runs in a copy of its own
        // (`last`) whose loads are pure as the streaming copy's, and which stores the
        // iteration-local registers to the packed slot chunk by chunk with the guest store
        // (`Tx::pending_local`): the first full copy, which must keep its loads in order,
        // would load every chunk first and spill it until the arithmetic.
        let mut last = None;
        let stream = (endloop && tx.copy_loop.is_none() && stream_ok(r, &tx.hoist)).then(|| {
            let top = tx.b.create_block();
            if tx.plocal.is_some() && tx.local_v != 0 {
                last = Some(tx.b.create_block());
                if masked {
                    tx.tail_proven = Some(tx.b.declare_var(I64));
                }
            }
            StreamLoop {
                top,
                body: top,
                full: last.unwrap_or(fullb),
                body_len,
                pair: false,
                top_test: false,
            }
        });
        tx.defer_plan = stream.is_some()
            && analysis::accesses_hoisted(r, &tx.hoist)
            && tx.interleaved_any()
            && tx
                .hoist
                .iter()
                .filter(|h| h.ms().dir == lanejit_interp::isa::Dir::Store)
                .count()
                >= 2;
        // The second full copy, which carries packed registers from one full iteration to the
        // next, is not needed where the streaming copy runs all but the last of them; a
        // branch loop that keeps its mask has one too (`Tx::branch_fast_edge`).
        // Not in a baseline's IR (`TxConfig::pairs`): with it, the baseline of saxpy_branch's
        // gather loop compiled in 3.8 ms at VL 32 and 6.3 at VL 64 instead of 2.0 and 2.1
        // (spmv_csr 9.1 -> 6.0, scatter32 2.1 -> 1.4, tile_stage's 2.8 -> 1.8), and the
        // kernel ran 10-40% longer tiered at 4 MiB.
        let fast_top = (((endloop && stream.is_none()) || branch_fast_ok(r)) && cfg.pairs)
            .then(|| tx.b.create_block());
        if tx.hoist.is_empty() || !endloop {
            tx.b.ins().brif(is_full, fullb, &[], genb, &[]);
        } else {
            let pre = tx.b.create_block();
            tx.b.ins().brif(is_full, pre, &[], genb, &[]);
            tx.b.switch_to_block(pre);
            tx.b.seal_block(pre);
            let none = if tail_inline {
                let none = tx.b.create_block();
                tx.b.set_cold_block(none);
                none
            } else {
                genb
            };
            if tx.nest.is_none() {
                // A stretch's header: code compiled to be replaced may leave here.
                let at = (tx.b.use_var(tx.lc0), tx.b.use_var(tx.trip));
                tx.yield_check(head_pc, 0, Some(at));
            }
            let reenter = (tx.nest.is_none() && h == 0).then_some(head_pc);
            tx.precheck(fullb, none, stream, reenter);
            tx.prechecked = true;
            if tail_inline {
                tx.b.switch_to_block(none);
                tx.b.seal_block(none);
                tx.fallback(head_pc, crate::observe::Fallback::Tail);
                tx.exit_pc(Status::Partial, head_pc, 0);
            }
        }
        tx.b.switch_to_block(fullb);
        // Not sealed yet: the second full copy may jump back here (see below).
        tx.full = true;
        tx.off = 0;
        tx.fast = fast_top.map(|top| FastLoop { top, body_len });
        tx.run(r, h, back);
        tx.start_partial_copy(genb);
        tx.prechecked = false;
        tx.fast = None;
        // The partial iteration leaves for the straight form of the body: always in the
        // memory form of an `ENDLOOP` loop, and in any loop compiled with a lazy tail.
        let lazy = !tx.vmem && !tx.tail;
        // A nest's inner branch loop in a region without `V.SETMASK` runs only under a
        // full mask (its prologue's guard leaves for the interpreter otherwise, and nothing
        // in the loop changes the mask): its partial-mask copy is never entered, and a cold
        // exit stands for it instead of a copy of the body (elsewhere a partial iteration
        // exits already; in the memory form it was a copy: SpMV's nest at VL 64, 70,648 ->
        // 42,056 code bytes).
        if analysis::never_partial(r) {
            tx.fallback(head_pc, crate::observe::Fallback::PartialMask);
            tx.exit_pc(Status::Interp, head_pc, 0);
        } else if lazy || (endloop && tx.vmem) {
            tx.fallback(head_pc, crate::observe::Fallback::Tail);
            tx.exit_pc(Status::Partial, head_pc, 0);
        } else if masked {
            let top = tx.b.create_block();
            let fail = tx.b.create_block();
            tx.b.set_cold_block(fail);
            tx.masked_tail_entry(top, fail);
            tx.b.switch_to_block(fail);
            tx.b.seal_block(fail);
            tx.fallback(head_pc, crate::observe::Fallback::Tail);
            tx.exit_pc(Status::Partial, head_pc, 0);
            tx.b.switch_to_block(top);
            tx.b.seal_block(top);
            tx.plocal_tail_room();
            let mut written = 0u32;
            for (_, i) in r.body() {
                written |= reg_effects(i).1.v;
            }
            written &= !tx.local_v;
            tx.tail_old = (0..32u8)
                .filter(|n| written & (1 << n) != 0)
                .map(|n| (VReg(n), tx.vget_all(VReg(n))))
                .collect();
            tx.full = true;
            tx.prechecked = true;
            tx.masked_tail = true;
            tx.readonly = tx.pure_tail();
            tx.run(r, h, back);
            tx.readonly = false;
            tx.masked_tail = false;
            tx.prechecked = false;
            tx.tail_old.clear();
        } else {
            tx.known_partial = true;
            tx.run(r, h, back);
            tx.known_partial = false;
        }
        if let Some(top) = fast_top {
            // The second full copy: entered only from full copies' ENDLOOP with the forms
            // they recorded, iterating on itself while iterations stay full. When nothing is
            // carried packed, the first full copy serves as the inner loop itself.
            tx.b.switch_to_block(top);
            let forms = tx.fast_forms.unwrap_or([Form::Wide; 32]);
            if forms == [Form::Wide; 32] {
                tx.b.ins().jump(fullb, &[]);
            } else {
                tx.form = forms;
                tx.full = true;
                tx.prechecked = !tx.hoist.is_empty();
                tx.fast = Some(FastLoop { top, body_len });
                tx.off = 0;
                tx.entry_nan = tx.fast_nan.unwrap_or([None; 32]);
                tx.run(r, h, back);
                tx.entry_nan = [None; 32];
            }
        }
        if let (Some((pe, slow)), Some(state)) = (shortcut, pro_end) {
            tx.prologue_shortcut(pe, slow, state, fast_top, body_len);
        }
        if let (Some(mut st), false) = (stream, tx.hoist.is_empty()) {
            tx.b.switch_to_block(st.top);
            tx.form = [Form::Wide; 32];
            tx.nan = [None; 32];
            let accs: Vec<VReg> = (0..32u8)
                .filter(|&n| tx.acc_seen[n as usize].0 != 0)
                .map(VReg)
                .collect();
            // Pairs: small bodies, not a nest's packed slot of iteration-local registers
            // (whose stores follow each iteration) and narrow sums that hold at least two
            // iterations.
            st.pair = (cfg.pairs || !accs.is_empty())
                && body_len <= STREAM_PAIR_MAX_BODY
                && last.is_none()
                && analysis::accesses_hoisted(r, &tx.hoist)
                && (tx.plocal.is_none() || tx.local_v == 0)
                && accs.iter().all(|a| tx.acc_seen[a.0 as usize].1 >= 2);
            tx.acc_natural = st.pair;
            if !accs.is_empty() {
                // Entered with every narrow sum zero; the back edge carries them.
                let n = tx.b.declare_var(I64);
                let zero = tx.iconst(0);
                tx.b.def_var(n, zero);
                tx.acc_n = Some(n);
                if tx.nch <= ACC_SLOT_MAX_CHUNKS {
                    let size = accs.len() * 16 * tx.nch;
                    tx.acc_slot = Some(tx.b.create_sized_stack_slot(StackSlotData::new(
                        StackSlotKind::ExplicitSlot,
                        size as u32,
                        4,
                    )));
                    tx.acc_slot_regs = accs.iter().fold(0, |m, a| m | 1 << a.0);
                }
                for &a in &accs {
                    tx.acc_zero(a);
                }
                st.body = tx.b.create_block();
                tx.b.ins().jump(st.body, &[]);
                tx.b.switch_to_block(st.body);
            }
            if st.pair {
                // A round is entered from the loop-entry span check (two proven iterations)
                // with three proven iterations ahead and the budget for them, else the first
                // full copy runs the next one. With accumulators the test is at the round's
                // top, for its back edge too, the accumulators made wide on the way out:
                // tested at the end, the narrow sums would be used on both sides of the
                // test, and Cranelift would compute them after it, in each side, with every
                // load of the round live across it (dot8: 28,302 -> 25,783 instructions).
                // Without, the end of the round tests the next (one jump fewer per round).
                st.top_test = !accs.is_empty();
                let lc = tx.b.use_var(tx.lc0);
                let go = tx.stream_ahead(lc, 3, body_len);
                let (round, leave) = (tx.b.create_block(), tx.b.create_block());
                tx.b.ins().brif(go, round, &[], leave, &[]);
                tx.leave_stream(leave, &accs, st.full);
                tx.b.switch_to_block(round);
                if st.top_test {
                    tx.b.seal_block(round);
                } else {
                    // Not sealed: the round's back edge comes to it too.
                    st.body = round;
                }
            }
            tx.full = true;
            tx.prechecked = true;
            tx.fast = None;
            tx.stream = Some(st);
            tx.readonly = true;
            tx.round_splats.clear();
            tx.remat_splats = splat_scalars(r, tx.dirty.s) >= ROUND_SPLATS_MIN;
            tx.off = 0;
            tx.held = tx.defer_plan.then(Vec::new);
            tx.run(r, h, back);
            if st.pair {
                // The second copy of the round, in the block the first one ended in.
                tx.stream_second = true;
                tx.off = 0;
                tx.run(r, h, back);
                tx.stream_second = false;
            }
            tx.held = None;
            tx.stream = None;
            tx.acc_natural = false;
            tx.acc_stash.clear();
            tx.acc_slot = None;
            tx.round_splats.clear();
            tx.remat_splats = false;
            if let Some(last) = last {
                // Entered only from the streaming copy, with every register wide.
                tx.b.switch_to_block(last);
                tx.b.seal_block(last);
                tx.form = [Form::Wide; 32];
                tx.off = 0;
                if masked {
                    // The lanes a masked tail certain to follow overwrites are not stored.
                    let lc = tx.b.use_var(tx.lc0);
                    tx.skip_local = Some(tx.tail_ahead(lc, body_len));
                }
                tx.run(r, h, back);
                tx.skip_local = None;
            }
            tx.readonly = false;
        }
    } else if r.loop_head.is_none() && !tx.helpers && has_vector_work(r) {
        // A hot straight-line region: like a loop body, a copy for a full mask (whole-register
        // writes, no blends, contiguous accesses with one check) and one for a partial mask.
        let fullb = tx.b.create_block();
        let genb = tx.b.create_block();
        let is_full = tx.mask_is_full();
        tx.b.ins().brif(is_full, fullb, &[], genb, &[]);
        tx.b.switch_to_block(fullb);
        tx.b.seal_block(fullb);
        tx.full = true;
        tx.run(r, h, back);
        tx.start_partial_copy(genb);
        tx.known_partial = true;
        tx.run(r, h, back);
        tx.known_partial = false;
    } else {
        tx.full = false;
        tx.run(r, h, back);
    }
    if let (Some(n), Some(o)) = (tx.nest, r.outer) {
        tx.epilogue(r, n, o, header);
    }
    tx.finish_exit_block();
    tx.b.seal_all_blocks();
    true
}
