//! The pre-decoded program: every code word decoded once into a compact, execution-oriented
//! [`Op`] (a monomorphised handler pointer plus its operand bytes), so the run loop never looks
//! at instruction bits again.
//!
//! Each word slot is decoded independently (a branch may target any word, including the
//! second word of an `S.LI`); a word that does not decode becomes an entry whose handler traps
//! `illegal_instruction` when, and only when, it is executed.
//!
//! The typed instructions themselves ([`DecodedCode`]) are shared, not copied, with every other
//! reader of the program: the JIT's region discovery and translation read the same decode
//! results the interpreter's table was lowered from, so a program is decoded once per run.

use super::mem_ops::MemUse;
use super::{ExecFn, alu, control, mem_ops};
use crate::for_each_op;
use crate::isa::*;

/// Op flag: a control-flow instruction (J, Bxx, LOOP, ENDLOOP) that ends a block.
pub(crate) const F_CTL: u8 = 1;
/// Op flag: the memory access is contiguous (scalar SrcL, SrcR = lc0, total shift = log2 E),
/// so lane i's EA is EA0 + i*E and one range check can cover the whole group.
pub(crate) const F_CONTIG: u8 = 2;
/// Op flag: `--strict-align` applies to this memory form (`MemSem::strict_align_applies`).
pub(crate) const F_STRICT: u8 = 4;

/// One pre-decoded word slot.
///
/// Operand bytes, by class:
/// - memory: `a` = Dst / SrcD register code (0..31 `sN`, 32..63 `vN`), `b` = SrcL code,
///   `c` = SrcR code (64 = `lc0`; `s0` for immediate forms), `d` = scalar offset register of
///   the contiguous form (`s0` otherwise), `sh` = total shift of SrcR, `imm` = the constant
///   byte offset. Every form's lane EA is `L(i) + (R(i) << sh) + s[d] + imm`, wrapping.
/// - scalar/vector ALU: `a` = destination index, `b` = first source index, `c` = second
///   source index (`s0` when the operand is an immediate), `imm` = the sign-extended
///   immediate (0 for a register operand), so the operand is always `reg[c] + imm`.
/// - control: `a` = compared / trip register, `c` + `imm` as for ALU, `target` = index.
#[derive(Clone, Copy)]
pub(crate) struct Op {
    /// The handler.
    pub exec: ExecFn,
    /// Immediate (see above).
    pub imm: u64,
    /// Index of the sequentially next instruction.
    pub next: u32,
    /// Branch / loop target index.
    pub target: u32,
    pub a: u8,
    pub b: u8,
    pub c: u8,
    pub d: u8,
    pub sh: u8,
    /// `F_*` flags.
    pub flags: u8,
}

impl Op {
    fn new(exec: ExecFn, next: u32) -> Op {
        Op {
            exec,
            imm: 0,
            next,
            target: 0,
            a: 0,
            b: 0,
            c: 0,
            d: 0,
            sh: 0,
            flags: 0,
        }
    }
}

/// A program's code decoded once: the decode result of every word slot and the words
/// themselves, behind shared pointers (a clone is two reference-count increments), so that
/// the interpreter ([`Decoded`]) and the JIT read one decoding.
#[derive(Clone, Debug)]
pub struct DecodedCode {
    insts: std::sync::Arc<[Result<Inst, DecodeError>]>,
    words: std::sync::Arc<[u64]>,
}

impl DecodedCode {
    /// Decode every word of `code` (pc of word i is 8 * i).
    pub fn decode(code: &[u64]) -> DecodedCode {
        DecodedCode {
            insts: (0..code.len()).map(|i| Inst::decode(&code[i..])).collect(),
            words: code.into(),
        }
    }

    /// Number of code words.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether there is no code at all.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The instruction starting at word `index`, if that word decodes.
    pub fn inst(&self, index: usize) -> Option<&Inst> {
        self.insts.get(index).and_then(|r| r.as_ref().ok())
    }

    /// The decode result of word `index` (`None` past the end).
    pub fn decode_result(&self, index: usize) -> Option<&Result<Inst, DecodeError>> {
        self.insts.get(index)
    }

    /// The program's raw words (what it was decoded from).
    pub fn words(&self) -> &[u64] {
        &self.words
    }
}

/// A program's code, decoded once for execution (see the module docs).
pub struct Decoded {
    pub(crate) ops: Vec<Op>,
    program: DecodedCode,
}

impl std::fmt::Debug for Decoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoded")
            .field("len", &self.ops.len())
            .finish_non_exhaustive()
    }
}

impl Decoded {
    /// Decode every word of `code` (pc of word i is 8 * i).
    pub fn new(code: &[u64]) -> Decoded {
        let program = DecodedCode::decode(code);
        let ops = (0..code.len())
            .map(|i| match program.decode_result(i) {
                Some(Ok(inst)) => lower(inst, i as u32),
                _ => Op::new(control::illegal, (i as u32).wrapping_add(1)),
            })
            .collect();
        Decoded { ops, program }
    }

    /// The decoded instructions, for other readers of the program (the JIT).
    pub fn program(&self) -> &DecodedCode {
        &self.program
    }

    /// The same program for a machine whose guest memory other threads use at the same time
    /// (a launch on several threads): every memory (not `.local`) access moves its bytes with
    /// relaxed atomics (see `mem_ops`). Same results; slower memory instructions.
    pub fn for_shared_memory(self) -> Decoded {
        self.with_memory_use(MemUse::Shared)
    }

    /// The same program for a race-checked launch (`--check-races`): every memory (not
    /// `.local`) access is checked against, and recorded in, the machine's shadow
    /// (`Machine::races`; see `crate::races`).
    pub fn for_race_check(self) -> Decoded {
        self.with_memory_use(MemUse::RaceChecked)
    }

    fn with_memory_use(mut self, mem: MemUse) -> Decoded {
        for (op, inst) in self.ops.iter_mut().zip(self.program.insts.iter()) {
            if let Ok(inst) = inst {
                if let Sem::Mem(ms) = inst.opcode().sem() {
                    if !inst.is_local() {
                        op.exec = mem_ops::handler(ms, false, mem);
                    }
                }
            }
        }
        self
    }

    /// Whether some instruction may write tile space (a `.local` store).
    pub fn writes_tile(&self) -> bool {
        self.program.insts.iter().flatten().any(|inst| {
            inst.is_local() && matches!(inst.opcode().sem(), Sem::Mem(ms) if ms.dir == Dir::Store)
        })
    }

    /// Number of code words.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether there is no code at all.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The instruction starting at word `index`, if that word decodes.
    pub fn inst(&self, index: usize) -> Option<&Inst> {
        self.program.inst(index)
    }

    /// The decode result of word `index` (`None` past the end).
    pub fn decode_result(&self, index: usize) -> Option<&Result<Inst, DecodeError>> {
        self.program.decode_result(index)
    }

    /// The raw word at `index`.
    pub fn word(&self, index: usize) -> Option<u64> {
        self.program.words.get(index).copied()
    }

    /// The program's raw words (what it was decoded from).
    pub fn words(&self) -> &[u64] {
        self.program.words()
    }

    /// Index of the instruction that sequentially follows the one at `index` (`index + 2`
    /// after an `S.LI`, else `index + 1`).
    pub fn next_index(&self, index: usize) -> Option<usize> {
        self.ops.get(index).map(|o| o.next as usize)
    }

    /// Whether the instruction at `index` is a control-flow instruction (J, Bxx, LOOP,
    /// ENDLOOP): where [`run_block`](super::run_block) stops.
    pub fn ends_block(&self, index: usize) -> bool {
        self.ops.get(index).is_some_and(|o| o.flags & F_CTL != 0)
    }
}

/// Per-format lowering of typed operands to an [`Op`].
trait Lower {
    fn lower(&self, op: Opcode, index: u32) -> Op;
}

macro_rules! gen_lower {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident $snake:ident $code:literal $mn:literal $fmt:ident ($sem:expr);
    )*) => {
        fn lower(inst: &Inst, index: u32) -> Op {
            match inst {
                $( Inst::$name(o) => o.lower(Opcode::$name, index), )*
            }
        }
    };
}

for_each_op!(gen_lower);

fn mem_sem(op: Opcode) -> MemSem {
    match op.sem() {
        Sem::Mem(m) => m,
        // The format types only occur with memory semantics (checked by the isa tests).
        _ => MemSem {
            dir: Dir::Load,
            log2e: 0,
            ext: Ext::Sign,
            mode: Mode::Imm { scaled: false },
        },
    }
}

/// A memory op with the EA fields filled in.
fn mem_op(op: Opcode, index: u32, data: Reg, local: bool, ea: (Reg, Reg, u8, u8, u64)) -> Op {
    let ms = mem_sem(op);
    let (base, off, sh, d, imm) = ea;
    let mut o = Op::new(mem_ops::handler(ms, local, MemUse::Own), index + 1);
    o.a = data.code();
    o.b = base.code();
    o.c = off.code();
    o.d = d;
    o.sh = sh;
    o.imm = imm;
    if base.is_scalar() && off == Reg::Lc0 && sh == ms.log2e {
        o.flags |= F_CONTIG;
    }
    if ms.strict_align_applies() {
        o.flags |= F_STRICT;
    }
    o
}

fn soi(x: SOrImm) -> (u8, u64) {
    match x {
        SOrImm::Reg(r) => (r.0, 0),
        SOrImm::Imm(i) => (0, i as i64 as u64),
    }
}

impl Lower for LoadRR {
    fn lower(&self, op: Opcode, index: u32) -> Op {
        let sh = mem_sem(op).reg_shift(self.shamt) as u8;
        let ea = (self.base, self.off, sh, 0, 0);
        mem_op(op, index, Reg::V(self.dst.0), self.local, ea)
    }
}

impl Lower for LoadImm {
    fn lower(&self, op: Opcode, index: u32) -> Op {
        let imm = mem_sem(op).imm_offset(self.imm);
        let ea = (self.base, Reg::S(0), 0, 0, imm);
        mem_op(op, index, Reg::V(self.dst.0), self.local, ea)
    }
}

impl Lower for LoadC {
    fn lower(&self, op: Opcode, index: u32) -> Op {
        let (d, imm) = soi(self.off);
        let ea = (Reg::S(self.base.0), Reg::Lc0, mem_sem(op).log2e, d, imm);
        mem_op(op, index, Reg::V(self.dst.0), self.local, ea)
    }
}

impl Lower for StoreRR {
    fn lower(&self, op: Opcode, index: u32) -> Op {
        let sh = mem_sem(op).reg_shift(self.shamt) as u8;
        let ea = (self.base, self.off, sh, 0, 0);
        mem_op(op, index, self.src, self.local, ea)
    }
}

impl Lower for StoreImm {
    fn lower(&self, op: Opcode, index: u32) -> Op {
        let imm = mem_sem(op).imm_offset(self.imm);
        let ea = (self.base, Reg::S(0), 0, 0, imm);
        mem_op(op, index, self.src, self.local, ea)
    }
}

impl Lower for StoreC {
    fn lower(&self, op: Opcode, index: u32) -> Op {
        let (d, imm) = soi(self.off);
        let ea = (Reg::S(self.base.0), Reg::Lc0, mem_sem(op).log2e, d, imm);
        mem_op(op, index, self.src, self.local, ea)
    }
}

impl Lower for SAlu {
    fn lower(&self, op: Opcode, index: u32) -> Op {
        let Sem::SAlu(alu_op) = op.sem() else {
            return Op::new(control::illegal, index + 1);
        };
        let mut o = Op::new(alu::salu_handler(alu_op), index + 1);
        o.a = self.sd.0;
        o.b = self.sa.0;
        (o.c, o.imm) = soi(self.sb);
        o
    }
}

impl Lower for SLi {
    fn lower(&self, _: Opcode, index: u32) -> Op {
        let mut o = Op::new(alu::sli, index + 2);
        o.a = self.sd.0;
        o.imm = self.imm;
        o
    }
}

impl Lower for SMov {
    fn lower(&self, _: Opcode, index: u32) -> Op {
        let mut o = Op::new(alu::smov, index + 1);
        o.a = self.sd.0;
        o.b = self.sa.0;
        o
    }
}

impl Lower for SUnary {
    fn lower(&self, op: Opcode, index: u32) -> Op {
        let f: ExecFn = match op.sem() {
            Sem::SRead(SRead::Lc0) => alu::s_lc0,
            Sem::SRead(SRead::Vl) => alu::s_vl,
            Sem::SRead(SRead::Gid) => alu::s_gid,
            Sem::SRead(SRead::NGroups) => alu::s_ngroups,
            Sem::SRead(SRead::Mask) => alu::s_mask,
            _ => control::illegal,
        };
        let mut o = Op::new(f, index + 1);
        o.a = self.sd.0;
        o
    }
}

impl Lower for SGetLane {
    fn lower(&self, _: Opcode, index: u32) -> Op {
        let mut o = Op::new(alu::s_getlane, index + 1);
        o.a = self.sd.0;
        o.b = self.va.0;
        o.imm = self.lane as u64;
        o
    }
}

/// `(is vector, register index, immediate)` of a vector second operand.
fn vsrc(x: VSrc) -> (bool, u8, u64) {
    match x {
        VSrc::V(r) => (true, r.0, 0),
        VSrc::S(r) => (false, r.0, 0),
        VSrc::Imm(i) => (false, 0, i as i64 as u64),
    }
}

impl Lower for VAlu {
    fn lower(&self, op: Opcode, index: u32) -> Op {
        let Sem::VAlu(alu_op) = op.sem() else {
            return Op::new(control::illegal, index + 1);
        };
        let (vec, c, imm) = vsrc(self.vb);
        let mut o = Op::new(alu::valu_handler(alu_op, vec), index + 1);
        o.a = self.vd.0;
        o.b = self.va.0;
        o.c = c;
        o.imm = imm;
        o
    }
}

impl Lower for VMov {
    fn lower(&self, _: Opcode, index: u32) -> Op {
        let (vec, c, imm) = vsrc(self.src);
        let f: ExecFn = if vec { alu::vmov_v } else { alu::vmov_s };
        let mut o = Op::new(f, index + 1);
        o.a = self.vd.0;
        o.c = c;
        o.imm = imm;
        o
    }
}

impl Lower for VUnary {
    fn lower(&self, op: Opcode, index: u32) -> Op {
        let f: ExecFn = match op.sem() {
            Sem::VRead(VRead::LaneId) => alu::v_laneid,
            Sem::VRead(VRead::Lc0) => alu::v_lc0,
            _ => control::illegal,
        };
        let mut o = Op::new(f, index + 1);
        o.a = self.vd.0;
        o
    }
}

impl Lower for VFp {
    fn lower(&self, op: Opcode, index: u32) -> Op {
        let Sem::Fp(fp, w) = op.sem() else {
            return Op::new(control::illegal, index + 1);
        };
        let (vec, c, imm) = vsrc(self.vb);
        let mut o = Op::new(alu::vfp_handler(fp, w, vec), index + 1);
        o.a = self.vd.0;
        o.b = self.va.0;
        o.c = c;
        o.imm = imm;
        o
    }
}

impl Lower for VRedSum {
    fn lower(&self, _: Opcode, index: u32) -> Op {
        let mut o = Op::new(alu::v_redsum, index + 1);
        o.a = self.sd.0;
        o.b = self.va.0;
        o
    }
}

impl Lower for VSetMask {
    fn lower(&self, _: Opcode, index: u32) -> Op {
        let mut o = Op::new(alu::v_setmask, index + 1);
        o.a = self.sa.0;
        o
    }
}

impl Lower for Jump {
    fn lower(&self, _: Opcode, index: u32) -> Op {
        let mut o = Op::new(control::jump, index + 1);
        o.target = self.target.0;
        o.flags = F_CTL;
        o
    }
}

impl Lower for Branch {
    fn lower(&self, op: Opcode, index: u32) -> Op {
        let Sem::Branch(cond) = op.sem() else {
            return Op::new(control::illegal, index + 1);
        };
        let mut o = Op::new(control::branch_handler(cond), index + 1);
        o.a = self.sa.0;
        (o.c, o.imm) = soi(self.sb);
        o.target = self.target.0;
        o.flags = F_CTL;
        o
    }
}

impl Lower for Loop {
    fn lower(&self, _: Opcode, index: u32) -> Op {
        let mut o = Op::new(control::loop_, index + 1);
        o.a = self.sa.0;
        o.target = self.exit.0;
        o.flags = F_CTL;
        o
    }
}

impl Lower for EndLoop {
    fn lower(&self, _: Opcode, index: u32) -> Op {
        let mut o = Op::new(control::endloop, index + 1);
        o.target = self.body.0;
        o.flags = F_CTL;
        o
    }
}

impl Lower for Nullary {
    fn lower(&self, op: Opcode, index: u32) -> Op {
        let f: ExecFn = match op {
            Opcode::Halt => control::halt,
            _ => control::nop,
        };
        Op::new(f, index + 1)
    }
}
