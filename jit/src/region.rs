//! Region discovery: which guest instructions one compiled function covers.
//!
//! A region is a straight run of lowerable instructions starting at some pc. It ends with (and
//! includes) a control instruction — `J`, `Bxx`, `ENDLOOP`, or a `LOOP` that is not the first
//! instruction — or just before an instruction the JIT declines (`HALT`, an undecodable word,
//! the end of the code), or after [`MAX_REGION_LEN`] instructions. A `LOOP` as first
//! instruction is a prologue: the run continues into its body. When the final control
//! instruction's taken target is the region start (or, after a `LOOP` prologue, the first body
//! instruction), the region is a loop and its back edge is compiled natively.

use lanejit_interp::isa::{Inst, Sem};

/// Longest run compiled as one region.
pub const MAX_REGION_LEN: usize = 256;

/// The program's code decoded at every word index (a word that does not decode is `None`).
#[derive(Debug, Clone)]
pub struct Code {
    insts: Vec<Option<Inst>>,
}

impl Code {
    /// Decode `words` at every index.
    pub fn new(words: &[u64]) -> Code {
        Code {
            insts: (0..words.len())
                .map(|i| Inst::decode(&words[i..]).ok())
                .collect(),
        }
    }

    /// The instruction at `pc`, if `pc` is a word boundary inside the code that decodes.
    pub fn at(&self, pc: u64) -> Option<&Inst> {
        if pc % 8 != 0 {
            return None;
        }
        self.insts.get(usize::try_from(pc / 8).ok()?)?.as_ref()
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.insts.len()
    }

    /// Whether there is no code.
    pub fn is_empty(&self) -> bool {
        self.insts.is_empty()
    }
}

/// How a region's run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// The last instruction is a control instruction (it is translated).
    Control,
    /// The next instruction is declined (or missing): the interpreter executes it.
    Decline,
    /// The length cap was reached: dispatch continues at `end_pc`.
    MaxLen,
    /// A `LOOP` alone ([`loop_alone`]): dispatch continues at its body, `end_pc`.
    Body,
}

/// One region.
#[derive(Clone, Debug)]
pub struct Region {
    /// pc of the first instruction.
    pub start: u64,
    /// The instructions with their pcs, in order.
    pub insts: Vec<(u64, Inst)>,
    /// pc after the last instruction.
    pub end_pc: u64,
    /// How the run ends.
    pub end: RunEnd,
    /// Index in `insts` the back edge returns to, for a loop region.
    pub loop_head: Option<usize>,
}

/// Whether `inst` ends a run.
pub fn is_control(inst: &Inst) -> bool {
    matches!(
        inst.opcode().sem(),
        Sem::Branch(_)
            | Sem::Ctl(
                lanejit_interp::isa::Ctl::Jump
                    | lanejit_interp::isa::Ctl::Loop
                    | lanejit_interp::isa::Ctl::EndLoop
            )
    )
}

/// Whether the JIT translates `inst` (everything but `HALT`).
pub fn lowerable(inst: &Inst) -> bool {
    !matches!(inst, Inst::Halt(_))
}

/// The taken target pc of a control instruction (`LOOP`: none here).
fn taken_target(inst: &Inst) -> Option<u64> {
    match inst {
        Inst::J(j) => Some(j.target.pc()),
        Inst::Beq(b)
        | Inst::Bne(b)
        | Inst::Blt(b)
        | Inst::Bge(b)
        | Inst::Bltu(b)
        | Inst::Bgeu(b) => Some(b.target.pc()),
        Inst::Endloop(e) => Some(e.body.pc()),
        _ => None,
    }
}

/// Whether a loop region whose first instruction is `first`, entered with registers `regs`
/// on a machine of `vl` lanes, may run an iteration under a partial mask on this entry: a
/// leading `LOOP` whose trip count is not a multiple of VL (a tail ahead); for a region
/// entered elsewhere (an `ENDLOOP` loop's body, a branch loop), a partial mask now, or
/// iterations left (from LC0BASE to the latched trip count) that are not a multiple of VL.
/// The JIT compiles such iterations into a loop's own function only then
/// (`translate::TxConfig::tail`); a wrong guess costs speed, never correctness, and a loop
/// that keeps leaving for them is compiled again with them (`LAZY_TAIL_EXITS`).
pub fn tail_expected(first: Option<&Inst>, regs: &lanejit_interp::machine::Regs, vl: u32) -> bool {
    let vl = vl.max(1);
    match first {
        Some(Inst::Loop(l)) => regs.s[l.sa.0 as usize] % u64::from(vl) != 0,
        _ => {
            regs.mask != lanejit_interp::machine::all_lanes(vl)
                || regs.trip.wrapping_sub(regs.lc0base) % u64::from(vl) != 0
        }
    }
}

/// Which vector registers' lanes step by exactly 1, 2, 4 or 8 in `regs` (lane `i` equal to
/// lane 0 plus `i * step`, 64-bit wrapping): bit `4 * r + log2(step)` for register `r`. Every
/// bit at VL 1 (any step fits one lane). What a lane-index vector built before a loop looks
/// like; the translator gives only such registers the entry test for contiguous lanes.
pub fn lane_steps(regs: &lanejit_interp::machine::Regs, vl: u32) -> u128 {
    let vl = vl as usize;
    if vl < 2 {
        return u128::MAX;
    }
    let mut bits = 0u128;
    for (r, v) in regs.v.iter().enumerate() {
        let lanes = &v[..vl];
        let d = lanes[1].wrapping_sub(lanes[0]);
        if !matches!(d, 1 | 2 | 4 | 8) {
            continue;
        }
        let stepped = lanes
            .iter()
            .enumerate()
            .all(|(i, &x)| x.wrapping_sub(lanes[0]) == (i as u64).wrapping_mul(d));
        if stepped {
            bits |= 1 << (4 * r as u32 + d.trailing_zeros());
        }
    }
    bits
}

/// What the entry that makes a region compile says about the code it needs: hints with
/// which the translator leaves out code that entry would not run. A wrong hint costs speed
/// (a lazy tail, a missed contiguous access), never correctness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hints {
    /// A loop's partial-mask iterations compiled into its function ([`tail_expected`],
    /// `translate::TxConfig::tail`).
    pub tail: bool,
    /// Registers that get the loop-entry test for contiguous lanes ([`lane_steps`],
    /// `translate::TxConfig::steps`).
    pub steps: u128,
}

impl Hints {
    /// No entry known: tails compiled in, every register tested.
    pub const ALL: Hints = Hints {
        tail: true,
        steps: u128::MAX,
    };

    /// The hints of an entry at `first` with registers `regs`.
    pub fn of(first: Option<&Inst>, regs: &lanejit_interp::machine::Regs, vl: u32) -> Hints {
        Hints {
            tail: tail_expected(first, regs, vl),
            steps: lane_steps(regs, vl),
        }
    }
}

/// The `LOOP` at `pc` as a region of its own, which goes on to its body's region: what the JIT
/// compiles at a `LOOP` whose body has a compiled loop region already (a loop entered first
/// from straight-line code, whose run included the `LOOP`, then again by an outer loop's
/// branch to the `LOOP`), so the loop is compiled once, not once more with the `LOOP` as its
/// prologue. `None` when there is no `LOOP` at `pc`.
pub fn loop_alone(code: &Code, pc: u64) -> Option<Region> {
    let inst = *code.at(pc)?;
    if !matches!(inst, Inst::Loop(_)) {
        return None;
    }
    Some(Region {
        start: pc,
        insts: vec![(pc, inst)],
        end_pc: pc + 8 * inst.opcode().words() as u64,
        end: RunEnd::Body,
        loop_head: None,
    })
}

/// The region starting at `pc`, or `None` when its first instruction is declined. With
/// `straight`, a loop's back edge is left as an ordinary exit (one iteration per call).
pub fn discover(code: &Code, pc: u64, straight: bool) -> Option<Region> {
    let mut insts = Vec::new();
    let mut at = pc;
    let end = loop {
        if insts.len() >= MAX_REGION_LEN {
            break RunEnd::MaxLen;
        }
        let Some(inst) = code.at(at) else {
            break RunEnd::Decline;
        };
        if !lowerable(inst) {
            break RunEnd::Decline;
        }
        insts.push((at, *inst));
        at += 8 * inst.opcode().words() as u64;
        if is_control(inst) && !(insts.len() == 1 && matches!(inst, Inst::Loop(_))) {
            break RunEnd::Control;
        }
    };
    if insts.is_empty() {
        return None;
    }
    let mut loop_head = None;
    if end == RunEnd::Control && !straight {
        if let Some(t) = taken_target(&insts.last().expect("non-empty").1) {
            if t == pc {
                loop_head = Some(0);
            } else if matches!(insts[0].1, Inst::Loop(_)) && t == pc + 8 && insts.len() > 1 {
                loop_head = Some(1);
            }
        }
    }
    Some(Region {
        start: pc,
        insts,
        end_pc: at,
        end,
        loop_head,
    })
}
