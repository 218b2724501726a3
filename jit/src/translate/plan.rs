//! How a region is compiled, chosen before translation so that compile time and memory stay
//! bounded whatever the region holds (a loop body of 250 per-lane shifts at VL 64 is an
//! ordinary unrolled kernel, and must not take seconds).
//!
//! Three forms, from the fastest code to the cheapest compile:
//!
//! * [`Plan::Registers`]: guest vector registers in SSA variables (`i64x2` chunks), the
//!   optimising settings (egraph, backtracking register allocator). Best code, but the
//!   allocator's cost grows with the live state: VL/2 chunks per vector register, all live at
//!   every exit of the loop.
//! * [`Plan::Memory`]: vector registers stay in the register file (`Tx::vmem`: every read
//!   loads its chunks, every write stores them) and per-lane memory work runs in loops over the
//!   lanes (`Tx::lanes_loop`), compiled with the quick settings (no optimisation, single-pass
//!   allocator; the backtracking allocator within [`MEMORY_BACKTRACK_IR`]). The code is
//!   linear, with nothing live across instructions but scalars; about 1-2 µs of compile time
//!   per IR instruction on this project's machines.
//! * [`Plan::Interpret`]: too large even so; a loop region is compiled as the straight-line
//!   form of its body (helpers on the register file, about ten IR instructions per guest
//!   instruction, one iteration per call), a hot straight-line recompile is not made.
//!
//! [`estimate`] predicts the IR size of the register form from the ISA table's semantic
//! classes (per instruction: a constant plus a cost per `i64x2` chunk or per lane), measured
//! on the bench kernels and the hostile kernels of the bounded-cost issue (250 shifts, 250
//! multiplies, 250 gathers, 250 FMAs at VL 64), and from the loop's hoisted accesses: one
//! through a vector address whose lanes the loop proves adjacent costs what a contiguous one
//! does (an unfused 8-tap FIR reading through a stepped vector of lane addresses, at VL 64:
//! its eight loads costed as gathers put it over every bound, and the straight-line fallback
//! ran it at 0.6x the interpreter; in the register form, 9.2x). A region gets the register
//! form when the estimate is at most 1.5 times [`registers_ir`] and its live vector state at most
//! [`REGISTERS_STATE`] chunks (and the emitted IR at most [`registers_ir`]); at VL 64 also
//! when they are at most 1.5 times [`REGISTERS_BASELINE_IR`] and [`REGISTERS_BASELINE_STATE`]
//! (and the emitted IR at most [`REGISTERS_BASELINE_IR`]), and then it is compiled with the
//! kept settings for good (`cache::Settings::Kept`, `Jit`: no optimised recompile), unless
//! it is a simple counted loop or nest, which then gets its strip-mined form optimised
//! instead (`translate::strip`, whose IR does not grow with VL; `Jit::translate`); else the memory
//! form when the estimate is at most [`MEMORY_IR`]; else the straight-line fallback. `Jit::compile_key` also checks the IR the
//! translator really emitted against the same bounds (a wrong estimate costs one
//! re-translation in the next form, never an unbounded compile).

use super::mem::LANE_LOOP_MIN_VL;
use super::reg_effects;
use crate::region::{Region, Seen};
use lanejit_interp::isa::{AluOp, Inst, Mode, Sem, VSrc};

/// The form a region is compiled in (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Vector registers in SSA variables, optimising settings.
    Registers,
    /// Vector registers in the register file, quick settings.
    Memory,
    /// Not compiled in a vector form: the straight-line helper form of a loop body, or no
    /// hot recompile.
    Interpret,
}

/// Most IR instructions of a region compiled in [`Plan::Registers`] with the optimising
/// settings at VL 64 (with at most [`OPTIMIZING_STATE_64`] live chunks and
/// [`OPTIMIZING_PARAMS_64`] block parameters; over any of them, the kept settings for
/// good, see [`REGISTERS_BASELINE_IR`]). Measured with the optimising settings at VL 64
/// (`lanejit run --vl 64 --engine jit --regions`, this project's 2-vCPU hosts): the bench
/// kernels' loops 1.9-3.0 us per IR instruction (stencil5_vaddr 4,276: 8.1 ms; tile_stage's
/// column loop 4,039: 9.9 ms; fir8_lc0 with its tail 4,558: 13.5 ms); per-lane vector shifts,
/// scalar code for every lane, 2.3 us (4,330: 10.0-10.2 ms); so at most about 15 ms, within
/// the bounded-cost issue's 20 ms ceiling at VL 64. It was 3,500 (4-7 us per IR instruction
/// assumed), which left fir8_lc0, stencil5_vaddr and tile_stage at VL 64 with the
/// single-pass allocator at 0.17-0.58x native; optimised, 0.52-1.05x.
pub const REGISTERS_IR: usize = 5_000;
/// Most live `i64x2` chunks ([`state`]) of a region compiled with the optimising settings at
/// VL 64: fir8_lc0 writes nine registers (288 chunks), all but its accumulator loaded and
/// used at once; its optimised compile takes 13.5 ms (see [`REGISTERS_IR`]).
pub const OPTIMIZING_STATE_64: usize = 320;
/// Most block parameters (the values the IR carries from block to block: about the live
/// chunks times the blocks where they are live) of a region compiled with the optimising
/// settings at VL 64: the register allocator's cost grows with them beyond its cost per IR
/// instruction. The loop of `seeds/kernels/strided.s`, 3,887 IR instructions with 3,032
/// block parameters, took 24 ms (6.3 us per IR instruction); the bench kernels' loops within
/// [`REGISTERS_IR`] have 9-250.
pub const OPTIMIZING_PARAMS_64: usize = 1_000;
/// The same below VL 64, where a loop's state is half as large or less: the memory form of
/// such loops runs 4-16x slower than the register form (fir8_vaddr at VL 32: 60 against 1000
/// Melem/s), so the register form is kept up to twice the IR (about 40 ms at most).
pub const REGISTERS_IR_SMALL_VL: usize = 7_000;

/// The emitted-IR bound of [`Plan::Registers`] at `vl` lanes.
pub const fn registers_ir(vl: u32) -> usize {
    if vl >= 64 {
        REGISTERS_IR
    } else {
        REGISTERS_IR_SMALL_VL
    }
}
/// Most IR instructions for [`Plan::Registers`] at VL 64 when compiled with the kept
/// settings (the optimiser and the single-pass allocator, `cache::Settings::Kept`: about
/// 1.2 us per IR instruction): a region over [`REGISTERS_IR`] but within this bound gets the
/// register form with those settings and keeps them (no optimised recompile). At VL 64 the
/// user-shaped kernels' loops (stencil5, fir8, matmul256's rows) emit 6,000-10,000 IR
/// instructions in the register form; in the memory form or the straight-line fallback they
/// ran at 0.01-0.02x native (fir8_lc0 95 Melem/s, 1.9x the interpreter; matmul256 slower
/// than it), in this form at 0.13-0.19x (`lanejit bench --sizes 256K --vl 64`: fir8_lc0 755,
/// stencil5_lc0 822, matmul256 3,353 Melem/s). The longest compile of a region of the bench
/// and example kernels at VL 64 (`bench --compile-latency ... --vl 64`) went from 10.7 to
/// 11.7 ms, within the bounded-cost issue's 20 ms (8,000 left out fir8_vaddr and matmul256).
pub const REGISTERS_BASELINE_IR: usize = 10_000;
/// Most live `i64x2` chunks for [`Plan::Registers`] under [`REGISTERS_BASELINE_IR`]: the
/// single-pass allocator's cost is linear in the code, whatever the live state (fir8 writes
/// nine registers, 288 chunks at VL 64).
pub const REGISTERS_BASELINE_STATE: usize = 512;
/// Most live `i64x2` chunks of vector registers for [`Plan::Registers`] (VL/2 per vector
/// register the region uses): beyond it the allocator spills most of them anyway, at a
/// compile cost that grows faster than the code.
pub const REGISTERS_STATE: usize = 256;
/// Most IR instructions of a loop in [`Plan::Memory`] compiled with the backtracking
/// allocator (`cache::Settings::Lowering`, no optimiser) instead of the single-pass one:
/// the memory form's lane loops keep their counters and addresses in registers instead of
/// moving them through the stack at every lane. spmv_csr's nest at VL 64 (2,820 IR
/// instructions, the only memory-form loop of the bench and example kernels): 88 -> 175
/// Melem/s at 256 KiB and 73 -> 136 at 16 MiB (`lanejit bench --kernel spmv_csr --vl 64`,
/// two runs of each build; the interpreter 75-86, so the JIT was no faster than it), its
/// code 42,056 -> 25,928 bytes, its compile 3.9 -> 8.2 ms (about 2.9 us per IR instruction:
/// the bound keeps such a compile near 9 ms, within the bounded-cost issue's 20 ms).
pub const MEMORY_BACKTRACK_IR: usize = 3_000;
/// Most IR instructions (estimated, and half the emitted bound) for [`Plan::Memory`]: the
/// quick settings cost about 0.5 µs per IR instruction, so at most about 15 ms.
pub const MEMORY_IR: usize = 15_000;

/// The estimated IR instructions of one guest instruction at `vl` lanes (`nch` chunks), in
/// the register form or (`memory`) the memory form, where every vector operand is loaded and
/// every result stored, and gathers and scatters loop over the lanes.
/// Whether every lane of memory instruction `inst` has the same EA (scalar operands only):
/// one access, broadcast for a load.
fn uniform_access(inst: &Inst) -> bool {
    use lanejit_interp::isa::{MemAddr, Reg};
    match inst.mem_operands().map(|o| o.addr) {
        Some(MemAddr::Imm { base, .. }) => !matches!(base, Reg::V(_)),
        Some(MemAddr::RegOff { base, off, .. }) => {
            !matches!(base, Reg::V(_)) && !matches!(off, Reg::V(_))
        }
        _ => false,
    }
}

fn inst_cost(inst: &Inst, vl: usize, nch: usize, memory: bool, adjacent: bool) -> usize {
    let io = if memory { nch } else { 0 };
    io + match inst.opcode().sem() {
        Sem::Mem(_) if uniform_access(inst) => 20 + nch,
        Sem::Mem(ms) => match ms.mode {
            Mode::Contig => 20 + 3 * nch,
            // A hoisted access whose lanes are adjacent elements: a contiguous one.
            _ if adjacent => 20 + 3 * nch,
            // The lane loops and the range check of their EA chunks (`Tx::lanes_loop`).
            Mode::RegOff { .. } | Mode::Imm { .. } if memory && vl >= LANE_LOOP_MIN_VL => {
                75 + 8 * nch
            }
            // Any of these may turn out contiguous (lane shapes), or gather lane by lane.
            Mode::RegOff { .. } | Mode::Imm { .. } => 40 + 2 * nch + 5 * vl,
        },
        Sem::VAlu(op) => {
            let per_lane_shift = matches!(op, AluOp::Shl | AluOp::Shr | AluOp::Sra)
                && matches!(inst, Inst::VShl(o) | Inst::VShr(o) | Inst::VSra(o) if matches!(o.vb, VSrc::V(_)));
            let per_chunk = match op {
                _ if per_lane_shift => 12,
                AluOp::Mul => 4,
                _ => 2,
            };
            5 + per_chunk * nch
        }
        // Packed f32 lanes emitted about two IR instructions per chunk (the operation and
        // three bitcasts per four lanes, before `Tx::bitcast` folded bitcast chains), f64 and
        // wide ones a few more; 10 per chunk put the estimate of FP loops at 2.2-2.6x what
        // they emitted (fir8, daxpy at VL 32 and 64) and a 16-tap FIR at VL 32 over every
        // bound. With 4: 0.8x their emitted IR in the median over the bench, example and
        // user-shaped kernels' loops at VL 8, 32, 64 (at most 1.9x, at least 0.39x: spmv's
        // gathers; the emitted IR is what the bounds check).
        Sem::Fp(..) => 10 + 4 * nch,
        Sem::VMov | Sem::VRead(_) | Sem::RedSum => 5 + 3 * nch,
        _ => 6,
    }
}

/// The estimated IR size of `r` at `vl` lanes in the register form or (`memory`) the memory
/// form: a loop's body is emitted twice (the full copy and the partial or second full copy),
/// and so is a hot straight-line region (a copy for a full mask and one for a partial mask).
/// In the register form, an access through a vector address that the loop hoists with
/// adjacent lanes (`analysis::hoistable`, with the stepped registers what the entry showed,
/// `seen`, makes) costs what a contiguous one does: the lane shapes make it one.
pub fn estimate(r: &Region, vl: u32, memory: bool, seen: Option<Seen>) -> usize {
    let adjacent: Vec<u64> = if memory {
        Vec::new()
    } else {
        let (hoist, _) = super::analysis::hoisted_and_stepped(r, seen.as_ref(), vl);
        hoist
            .iter()
            .filter(|h| h.contiguous())
            .map(|h| h.pc)
            .collect()
    };
    let vl = vl as usize;
    let nch = vl.div_ceil(2);
    let body: usize = r
        .insts
        .iter()
        .map(|(pc, i)| inst_cost(i, vl, nch, memory, adjacent.contains(pc)))
        .sum();
    2 * body + 100
}

/// `i64x2` chunks of vector registers `r` writes at `vl` lanes (its live vector state; the
/// registers it only reads stay in the register file, see `Tx::ro_v`).
/// A register written only by loads of one EA for all lanes (the outer prologue of a
/// loop nest broadcasting matrix elements) counts as one chunk: under a full mask every
/// chunk is the same value.
pub fn state(r: &Region, vl: u32) -> usize {
    let mut written = 0u32;
    let mut other = 0u32;
    for (_, i) in &r.insts {
        let w = reg_effects(i).1.v;
        written |= w;
        if !(i.opcode().mem().is_some() && uniform_access(i)) {
            other |= w;
        }
    }
    let nch = (vl as usize).div_ceil(2);
    other.count_ones() as usize * nch + (written & !other).count_ones() as usize
}

/// The form `r` is compiled in at `vl` lanes, for an entry that showed `seen`
/// (the stepped vector bases they show, see [`estimate`]; `None`: none).
pub fn choose(r: &Region, vl: u32, seen: Option<Seen>) -> Plan {
    // The estimate runs up to 1.5x over what is emitted; the emitted size is what is bounded.
    if estimate(r, vl, false, seen) <= registers_max_ir(vl) * 3 / 2
        && state(r, vl) <= registers_max_state(vl)
    {
        Plan::Registers
    } else if estimate(r, vl, true, None) <= MEMORY_IR {
        Plan::Memory
    } else {
        Plan::Interpret
    }
}

/// The next cheaper form.
pub fn cheaper(plan: Plan) -> Plan {
    match plan {
        Plan::Registers => Plan::Memory,
        Plan::Memory | Plan::Interpret => Plan::Interpret,
    }
}

/// Whether `emitted` IR instructions fit `plan`'s bound at `vl` lanes (the check after
/// translation).
pub fn fits(plan: Plan, emitted: usize, vl: u32) -> bool {
    match plan {
        Plan::Registers => emitted <= registers_max_ir(vl),
        Plan::Memory => emitted <= 2 * MEMORY_IR,
        Plan::Interpret => true,
    }
}

/// The largest register form at `vl` lanes, in emitted IR instructions: [`registers_ir`],
/// and at VL 64 [`REGISTERS_BASELINE_IR`] (over the former, the kept settings only).
pub const fn registers_max_ir(vl: u32) -> usize {
    if vl >= 64 {
        REGISTERS_BASELINE_IR
    } else {
        registers_ir(vl)
    }
}

/// The most live chunks of the register form at `vl` lanes: [`REGISTERS_STATE`], and at VL
/// 64 [`REGISTERS_BASELINE_STATE`] (over the former, the kept settings only).
pub const fn registers_max_state(vl: u32) -> usize {
    if vl >= 64 {
        REGISTERS_BASELINE_STATE
    } else {
        REGISTERS_STATE
    }
}

/// Whether region `r`, `emitted` IR instructions with `params` block parameters in
/// [`Plan::Registers`], may be compiled with the optimising settings at `vl` lanes: within
/// [`registers_ir`] and [`REGISTERS_STATE`], at VL 64 [`OPTIMIZING_STATE_64`] and
/// [`OPTIMIZING_PARAMS_64`] (else only with the baseline ones, see
/// [`REGISTERS_BASELINE_IR`]).
pub fn optimizing_fits(r: &Region, emitted: usize, params: usize, vl: u32) -> bool {
    let state_max = if vl >= 64 {
        OPTIMIZING_STATE_64
    } else {
        REGISTERS_STATE
    };
    emitted <= registers_ir(vl)
        && state(r, vl) <= state_max
        && (vl < 64 || params <= OPTIMIZING_PARAMS_64)
}
