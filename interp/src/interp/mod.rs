//! The reference interpreter: contract sections 1, 3, 4 and 5, bit exact.
//!
//! A program is decoded once into a [`Decoded`] table of ops, each holding a monomorphised
//! handler pointer and its operand bytes. The run loop dispatches once per guest instruction
//! (never per lane) through that pointer: budget check, fetch, execute, retire, advance.
//! Handlers return the next instruction index in a register; a trap's details are written
//! through an out-parameter on the cold path only.
//!
//! - `mem_ops`: the one per-lane load/store executor every memory form shares, with its
//!   contiguous and uniform fast paths.
//! - `alu`: scalar, vector and floating-point computation.
//! - `control`: branches, the hardware loop, HALT, illegal words.
//! - `trace`: [`TraceEvent`]s for [`run_traced`]; compiled out of [`run`].
//!
//! Exit conventions (shared with every engine): on `Halted`, `m.pc` is the HALT's pc; on
//! `Trapped`, the trapping instruction's pc (for `code_out_of_bounds`, the bad pc), and the
//! trapping instruction did not retire or write anything; on `Limit`, the next instruction's
//! pc. `m.retired` counts every retired instruction (`LOOP`, `ENDLOOP`, `HALT` included).

mod alu;
mod control;
mod decoded;
mod mem_ops;
mod trace;

pub use alu::{alu_lanes, fp_lanes_on};
pub use decoded::{Decoded, DecodedCode};
pub use trace::{Change, LaneAccess, MemTrace, TraceEvent};

use crate::machine::{Exit, Machine, MemFault, Trap, TrapKind};
use decoded::{F_CTL, Op};
use std::ops::ControlFlow;
use trace::{Hook, NoTrace, Sink, Snap, StopSink};

/// A handler: executes one instruction on the machine and returns the index of the next
/// instruction (it retired), [`HALT`] (a HALT retired) or [`FAULT`] (it trapped, did not
/// retire, and wrote the details into the `Fault`).
pub(crate) type ExecFn = fn(&mut Machine, &Op, &mut Fault) -> u32;

/// Handler result: a HALT retired.
pub(crate) const HALT: u32 = u32::MAX;
/// Handler result: the instruction trapped.
pub(crate) const FAULT: u32 = u32::MAX - 1;

/// A trap without its pc (the run loop adds it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fault {
    pub kind: TrapKind,
    pub mem: Option<MemFault>,
}

#[cold]
#[inline(never)]
fn code_oob(pc: u64) -> Exit {
    Exit::Trapped(Trap {
        kind: TrapKind::CodeOutOfBounds,
        pc,
        mem: None,
    })
}

#[cold]
#[inline(never)]
fn trapped(f: Fault, pc: u64) -> Exit {
    Exit::Trapped(Trap {
        kind: f.kind,
        pc,
        mem: f.mem,
    })
}

/// The one run loop. `ONE`: stop after one instruction; `BLOCK`: stop after a control-flow
/// instruction retires. Returns `None` when stopped that way without an exit.
#[inline(always)]
fn run_loop<H: Hook, const ONE: bool, const BLOCK: bool>(
    m: &mut Machine,
    d: &Decoded,
    hook: &mut H,
) -> Option<Exit> {
    let limit = m.config.max_instructions.unwrap_or(u64::MAX);
    let mut retired = m.retired;
    if retired >= limit {
        return Some(Exit::Limit);
    }
    if m.pc % 8 != 0 {
        return Some(code_oob(m.pc));
    }
    let ops = d.ops.as_slice();
    let mut idx = m.pc / 8;
    let mut fault = Fault {
        kind: TrapKind::IllegalInstruction,
        mem: None,
    };
    let exit = loop {
        if retired >= limit {
            break Some(Exit::Limit);
        }
        let Some(op) = ops.get(idx as usize) else {
            break Some(code_oob(idx.wrapping_mul(8)));
        };
        let snap = if H::ON {
            Some(Snap::take(m, d, idx as usize))
        } else {
            None
        };
        let next = (op.exec)(m, op, &mut fault);
        if next >= FAULT {
            if next == FAULT {
                break Some(trapped(fault, idx * 8));
            }
            retired += 1;
            if H::ON {
                // The hook sees the machine as it is after the HALT (pc and count too).
                m.retired = retired;
                m.pc = idx * 8;
                if let Some(ev) = snap.and_then(|s| s.event(m, d, idx as usize)) {
                    // A HALT ends the run whatever the hook says.
                    let _ = hook.retired(&ev, m);
                }
            }
            break Some(Exit::Halted);
        }
        retired += 1;
        if H::ON {
            m.retired = retired;
            m.pc = u64::from(next).wrapping_mul(8);
            if let Some(ev) = snap.and_then(|s| s.event(m, d, idx as usize)) {
                if hook.retired(&ev, m).is_break() {
                    idx = next as u64;
                    break None;
                }
            }
        }
        idx = next as u64;
        if ONE || (BLOCK && op.flags & F_CTL != 0) {
            break None;
        }
    };
    m.retired = retired;
    m.pc = idx.wrapping_mul(8);
    exit
}

/// Run from `m.pc` until a HALT retires, an instruction traps, or the instruction budget
/// (`m.config.max_instructions`, counted in `m.retired`) is used up.
pub fn run(m: &mut Machine, d: &Decoded) -> Exit {
    loop {
        if let Some(e) = run_loop::<NoTrace, false, false>(m, d, &mut NoTrace) {
            return e;
        }
    }
}

/// Execute one instruction: check the budget, fetch at `m.pc`, execute, retire, advance.
/// `None` means keep going.
pub fn step(m: &mut Machine, d: &Decoded) -> Option<Exit> {
    run_loop::<NoTrace, true, false>(m, d, &mut NoTrace)
}

/// As [`step`], calling `sink` with the [`TraceEvent`] of the instruction if it retired (the
/// debugger's `step`).
pub fn step_traced(
    m: &mut Machine,
    d: &Decoded,
    sink: &mut impl FnMut(&TraceEvent),
) -> Option<Exit> {
    run_loop::<_, true, false>(m, d, &mut Sink(sink))
}

/// Execute until a control-flow instruction (J, Bxx, LOOP, ENDLOOP) has retired (`None`,
/// with `m.pc` at the next instruction) or the run exits.
pub fn run_block(m: &mut Machine, d: &Decoded) -> Option<Exit> {
    run_loop::<NoTrace, false, true>(m, d, &mut NoTrace)
}

/// As [`run`], calling `sink` with a [`TraceEvent`] for every retired instruction.
pub fn run_traced(m: &mut Machine, d: &Decoded, sink: &mut impl FnMut(&TraceEvent)) -> Exit {
    let mut hook = Sink(sink);
    loop {
        if let Some(e) = run_loop::<_, false, false>(m, d, &mut hook) {
            return e;
        }
    }
}

/// As [`run_block`], calling `sink` with a [`TraceEvent`] and the machine (pc, retired count
/// and registers as they are after the instruction) for every retired instruction. The sink
/// may stop the run after any instruction but a HALT by returning [`ControlFlow::Break`]: then
/// `None`, with `m.pc` at the next instruction, as at the end of a block. The embedding API's
/// memory-access and block hooks run on this.
pub fn run_block_traced(
    m: &mut Machine,
    d: &Decoded,
    sink: &mut impl FnMut(&TraceEvent, &Machine) -> ControlFlow<()>,
) -> Option<Exit> {
    run_loop::<_, false, true>(m, d, &mut StopSink(sink))
}
