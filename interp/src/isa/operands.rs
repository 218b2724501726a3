//! Operand types and the bit layout of every instruction format.
//!
//! Word layout (bit 0 is the least significant bit of the little-endian word):
//!
//! | bits   | field | meaning |
//! |--------|-------|---------|
//! | 0..8   | op    | opcode byte (see the table in `isa`) |
//! | 8      | L     | `.local`: the access goes to tile space (memory formats only) |
//! | 9      | I     | field C holds an immediate instead of a register |
//! | 10..16 | -     | zero |
//! | 16..24 | A     | register: destination, store data, `sd`, `vd`, or branch/loop `sa` |
//! | 24..32 | B     | register: base (SrcL), `sa`, `va` |
//! | 32..40 | C     | register: offset (SrcR), `sb`, `vb` (when I = 0) |
//! | 40..45 | shamt | register-offset memory forms |
//! | 32..64 | imm32 | when I = 1: simm24 (memory), simm32 (ALU, `V.MOV`) |
//!
//! Control formats reuse A and put a 24-bit target (an instruction index, pc / 8) in bits
//! 40..64; a branch with I = 1 holds its simm16 in bits 24..40. `S.GETLANE` holds its lane in
//! bits 32..40. `S.LI` is two words; the second is the 64-bit immediate. A register byte is
//! 0..31 for `s0..s31`, 32..63 for `v0..v31` and 64 for `lc0`; anything else is invalid.
//! Every bit not named by a format must be zero, so each valid word has exactly one meaning
//! and `decode(encode(i)) == i`, `encode(decode(w)) == w`.

use super::{Mode, Sem};
use std::fmt;

/// Any register operand: the slot it sits in decides which kinds are legal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reg {
    /// Scalar `sN`.
    S(u8),
    /// Vector `vN`.
    V(u8),
    /// The loop counter `lc0` (lane i reads LC0BASE + i).
    Lc0,
}

impl Reg {
    /// The register byte of the encoding.
    pub const fn code(self) -> u8 {
        match self {
            Reg::S(n) => n,
            Reg::V(n) => 32 + n,
            Reg::Lc0 => 64,
        }
    }

    /// The register with this byte, if any.
    pub const fn from_code(b: u8) -> Option<Reg> {
        match b {
            0..=31 => Some(Reg::S(b)),
            32..=63 => Some(Reg::V(b - 32)),
            64 => Some(Reg::Lc0),
            _ => None,
        }
    }

    /// Its class.
    pub const fn class(self) -> RegClass {
        match self {
            Reg::S(_) => RegClass::S,
            Reg::V(_) => RegClass::V,
            Reg::Lc0 => RegClass::LC0,
        }
    }

    /// Whether it is a scalar register.
    pub const fn is_scalar(self) -> bool {
        matches!(self, Reg::S(_))
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reg::S(n) => write!(f, "s{n}"),
            Reg::V(n) => write!(f, "v{n}"),
            Reg::Lc0 => f.write_str("lc0"),
        }
    }
}

/// A set of register kinds a slot accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegClass(u8);

impl RegClass {
    /// Scalar registers.
    pub const S: RegClass = RegClass(1);
    /// Vector registers.
    pub const V: RegClass = RegClass(2);
    /// `lc0`.
    pub const LC0: RegClass = RegClass(4);
    /// `sN` or `vN`: SrcL and store data.
    pub const SV: RegClass = RegClass(3);
    /// `sN`, `vN` or `lc0`: SrcR.
    pub const SVL: RegClass = RegClass(7);

    /// Whether every kind in `other` is in `self`.
    pub const fn contains(self, other: RegClass) -> bool {
        self.0 & other.0 == other.0
    }

    /// What the slot expects, for messages: "a scalar register (sN)" and so on.
    pub const fn describe(self) -> &'static str {
        match self.0 {
            1 => "a scalar register (s0..s31)",
            2 => "a vector register (v0..v31)",
            4 => "lc0",
            3 => "a scalar or vector register (sN or vN)",
            7 => "a register (sN, vN or lc0)",
            _ => "a register",
        }
    }
}

/// Why the operand fields of a word are invalid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    /// A register byte is not a register, or a register of the wrong kind for its slot.
    #[error("register field {field} holds 0x{code:02x}, expected {}", .class.describe())]
    BadRegister {
        /// Field letter (A, B, C).
        field: char,
        /// Raw byte.
        code: u8,
        /// What the slot accepts.
        class: RegClass,
    },
    /// Bits that this format does not use are set.
    #[error("reserved bits are set (mask 0x{0:016x})")]
    Reserved(u64),
    /// An immediate does not fit its range.
    #[error("immediate {0} is out of range")]
    ImmRange(i64),
    /// The I flag is not what the format requires.
    #[error("the immediate flag does not match the format")]
    ImmFlag,
    /// A two-word instruction has no second word.
    #[error("the 64-bit immediate word is missing")]
    MissingSecondWord,
}

const FLAG_L: u64 = 1 << 8;
const FLAG_I: u64 = 1 << 9;

/// simm24 bounds.
pub const SIMM24_MIN: i64 = -(1 << 23);
/// simm24 bounds.
pub const SIMM24_MAX: i64 = (1 << 23) - 1;
/// simm16 bounds.
pub const SIMM16_MIN: i64 = -(1 << 15);
/// simm16 bounds.
pub const SIMM16_MAX: i64 = (1 << 15) - 1;
/// The largest branch/loop target, as an instruction index (24 bits).
pub const MAX_TARGET: u32 = (1 << 24) - 1;

#[inline]
fn reg_at(w: u64, shift: u32, field: char, class: RegClass) -> Result<Reg, FieldError> {
    let code = (w >> shift) as u8;
    match Reg::from_code(code) {
        Some(r) if class.contains(r.class()) => Ok(r),
        _ => Err(FieldError::BadRegister { field, code, class }),
    }
}

fn sreg_at(w: u64, shift: u32, field: char) -> Result<SReg, FieldError> {
    match reg_at(w, shift, field, RegClass::S)? {
        Reg::S(n) => Ok(SReg(n)),
        _ => unreachable!("class checked"),
    }
}

fn vreg_at(w: u64, shift: u32, field: char) -> Result<VReg, FieldError> {
    match reg_at(w, shift, field, RegClass::V)? {
        Reg::V(n) => Ok(VReg(n)),
        _ => unreachable!("class checked"),
    }
}

/// Check that only the bits in `used` (plus the opcode byte) are set.
#[inline]
fn only(w: u64, used: u64) -> Result<(), FieldError> {
    let extra = w & !(used | 0xff);
    if extra != 0 {
        Err(FieldError::Reserved(extra))
    } else {
        Ok(())
    }
}

const A: u64 = 0xff << 16;
const B: u64 = 0xff << 24;
const C: u64 = 0xff << 32;
const SHAMT: u64 = 0x1f << 40;
const IMM32: u64 = 0xffff_ffff << 32;
const TARGET: u64 = 0xff_ffff << 40;
const IMM16: u64 = 0xffff << 24;

fn imm32(w: u64) -> i32 {
    (w >> 32) as u32 as i32
}

fn simm24(w: u64) -> Result<i32, FieldError> {
    let v = imm32(w);
    if (SIMM24_MIN..=SIMM24_MAX).contains(&(v as i64)) {
        Ok(v)
    } else {
        Err(FieldError::ImmRange(v as i64))
    }
}

fn target(w: u64) -> u32 {
    (w >> 40) as u32
}

/// A scalar register `sN`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SReg(pub u8);

/// A vector register `vN`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VReg(pub u8);

impl fmt::Display for SReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "s{}", self.0)
    }
}

impl fmt::Display for VReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

/// A scalar register or a signed immediate (the range depends on the slot).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SOrImm {
    /// `sN`.
    Reg(SReg),
    /// An immediate.
    Imm(i32),
}

/// A vector operand that may also be a scalar broadcast or an immediate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VSrc {
    /// `vN`, lane by lane.
    V(VReg),
    /// `sN`, broadcast.
    S(SReg),
    /// simm32, broadcast (not allowed for floating point).
    Imm(i32),
}

impl fmt::Display for VSrc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VSrc::V(r) => r.fmt(f),
            VSrc::S(r) => r.fmt(f),
            VSrc::Imm(i) => write!(f, "{i}"),
        }
    }
}

impl fmt::Display for SOrImm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SOrImm::Reg(r) => r.fmt(f),
            SOrImm::Imm(i) => write!(f, "{i}"),
        }
    }
}

/// Operand formats, one per struct below.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormatKind {
    /// [`LoadRR`].
    LoadRR,
    /// [`LoadImm`].
    LoadImm,
    /// [`LoadC`].
    LoadC,
    /// [`StoreRR`].
    StoreRR,
    /// [`StoreImm`].
    StoreImm,
    /// [`StoreC`].
    StoreC,
    /// [`SAlu`].
    SAlu,
    /// [`SLi`].
    SLi,
    /// [`SMov`].
    SMov,
    /// [`SUnary`].
    SUnary,
    /// [`SGetLane`].
    SGetLane,
    /// [`VAlu`].
    VAlu,
    /// [`VMov`].
    VMov,
    /// [`VUnary`].
    VUnary,
    /// [`VFp`].
    VFp,
    /// [`VRedSum`].
    VRedSum,
    /// [`VSetMask`].
    VSetMask,
    /// [`Jump`].
    Jump,
    /// [`Branch`].
    Branch,
    /// [`Loop`].
    Loop,
    /// [`EndLoop`].
    EndLoop,
    /// [`Nullary`].
    Nullary,
}

/// An instruction's operands by format (`Inst::operands`): engines match on the format and
/// the semantic class (`Opcode::sem`) instead of listing opcodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operands<'a> {
    /// [`LoadRR`].
    LoadRR(&'a LoadRR),
    /// [`LoadImm`].
    LoadImm(&'a LoadImm),
    /// [`LoadC`].
    LoadC(&'a LoadC),
    /// [`StoreRR`].
    StoreRR(&'a StoreRR),
    /// [`StoreImm`].
    StoreImm(&'a StoreImm),
    /// [`StoreC`].
    StoreC(&'a StoreC),
    /// [`SAlu`].
    SAlu(&'a SAlu),
    /// [`SLi`].
    SLi(&'a SLi),
    /// [`SMov`].
    SMov(&'a SMov),
    /// [`SUnary`].
    SUnary(&'a SUnary),
    /// [`SGetLane`].
    SGetLane(&'a SGetLane),
    /// [`VAlu`].
    VAlu(&'a VAlu),
    /// [`VMov`].
    VMov(&'a VMov),
    /// [`VUnary`].
    VUnary(&'a VUnary),
    /// [`VFp`].
    VFp(&'a VFp),
    /// [`VRedSum`].
    VRedSum(&'a VRedSum),
    /// [`VSetMask`].
    VSetMask(&'a VSetMask),
    /// [`Jump`].
    Jump(&'a Jump),
    /// [`Branch`].
    Branch(&'a Branch),
    /// [`Loop`].
    Loop(&'a Loop),
    /// [`EndLoop`].
    EndLoop(&'a EndLoop),
    /// [`Nullary`].
    Nullary(&'a Nullary),
}

impl FormatKind {
    /// Words per instruction of this format.
    pub const fn words(self) -> usize {
        match self {
            FormatKind::SLi => 2,
            _ => 1,
        }
    }
}

/// What every operand format provides to the generated code.
pub trait Format: Sized + Copy {
    /// Operand bits of the first word (opcode byte zero) and the optional second word.
    fn encode_fields(&self) -> (u64, Option<u64>);
    /// Decode the operand fields of `w` (and `next`, for two-word formats).
    fn decode_fields(w: u64, next: Option<u64>, sem: Sem) -> Result<Self, FieldError>;
    /// Write the operands (with a leading space when there are any) in canonical syntax.
    fn fmt_operands(&self, sem: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    /// `.local`.
    fn local(&self) -> bool {
        false
    }
    /// Add the registers the instruction reads and writes to `e` (`sem`: its semantics).
    fn effects(&self, _sem: Sem, _e: &mut Effects) {}
    /// A memory instruction's data register, address operands and space.
    fn mem_operands(&self) -> Option<MemOperands> {
        None
    }
}

/// The registers an instruction reads and writes (`Inst::effects`), as bit sets (bit `n`:
/// register `n`), generated from the operand formats so that no engine keeps its own
/// per-opcode list. A vector destination is a write only (under a partial mask its inactive
/// lanes keep their value: engines that need the old value treat writes as reads too).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// Scalar registers read.
    pub reads_s: u32,
    /// Vector registers read.
    pub reads_v: u32,
    /// Whether LC0BASE is read (`lc0` operands, contiguous forms, `S.LC0`, `V.LC0`).
    pub reads_lc0: bool,
    /// Scalar registers written.
    pub writes_s: u32,
    /// Vector registers written.
    pub writes_v: u32,
}

impl Effects {
    /// `r` is read.
    pub fn read(&mut self, r: Reg) {
        match r {
            Reg::S(n) => self.reads_s |= 1 << n,
            Reg::V(n) => self.reads_v |= 1 << n,
            Reg::Lc0 => self.reads_lc0 = true,
        }
    }
    /// `r` is read.
    pub fn read_s(&mut self, r: SReg) {
        self.reads_s |= 1 << r.0;
    }
    /// `r` is read.
    pub fn read_v(&mut self, r: VReg) {
        self.reads_v |= 1 << r.0;
    }
    /// A vector operand's register, if any, is read.
    pub fn read_src(&mut self, s: VSrc) {
        match s {
            VSrc::V(r) => self.read_v(r),
            VSrc::S(r) => self.read_s(r),
            VSrc::Imm(_) => {}
        }
    }
    /// A scalar-or-immediate operand's register, if any, is read.
    pub fn read_s_or_imm(&mut self, s: SOrImm) {
        if let SOrImm::Reg(r) = s {
            self.read_s(r);
        }
    }
    /// `r` is written.
    pub fn write_s(&mut self, r: SReg) {
        self.writes_s |= 1 << r.0;
    }
    /// `r` is written.
    pub fn write_v(&mut self, r: VReg) {
        self.writes_v |= 1 << r.0;
    }
}

/// How a memory instruction forms its lane EAs, as written (see [`super::MemSem`] for the
/// shifts and scaling its mnemonic applies).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemAddr {
    /// `base + (off << shift)`, the shift from `shamt` ([`super::MemSem::reg_shift`]).
    RegOff {
        /// SrcL.
        base: Reg,
        /// SrcR.
        off: Reg,
        /// The written shift amount.
        shamt: u8,
    },
    /// `base + imm` scaled or not ([`super::MemSem::imm_offset`]).
    Imm {
        /// SrcL.
        base: Reg,
        /// The immediate.
        imm: i32,
    },
    /// `base + (lc0 << log2 E) + off`.
    Contig {
        /// The scalar base.
        base: SReg,
        /// The scalar or immediate offset.
        off: SOrImm,
    },
}

/// A memory instruction's operands (`Inst::mem_operands`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemOperands {
    /// A load's destination (`vN`) or a store's data (`vN` or `sN`).
    pub data: Reg,
    /// The address operands.
    pub addr: MemAddr,
    /// Tile space.
    pub local: bool,
}

fn mem_sem(sem: Sem) -> super::MemSem {
    match sem {
        Sem::Mem(m) => m,
        _ => unreachable!("memory format with non-memory semantics"),
    }
}

fn flag_l(local: bool) -> u64 {
    if local { FLAG_L } else { 0 }
}

fn reg_bits(r: Reg, shift: u32) -> u64 {
    (r.code() as u64) << shift
}

fn imm_bits(i: i32) -> u64 {
    ((i as u32) as u64) << 32
}

/// `[base + (off << shift)]` for register-offset forms.
fn fmt_regoff(f: &mut fmt::Formatter<'_>, base: Reg, off: Reg, sem: Sem, shamt: u8) -> fmt::Result {
    let m = mem_sem(sem);
    match m.mode {
        Mode::RegOff { add_width: true } if m.log2e > 0 => {
            if shamt == 0 {
                write!(f, "[{base} + ({off} << {})]", m.log2e)
            } else {
                write!(f, "[{base} + ({off} << ({} + {shamt}))]", m.log2e)
            }
        }
        _ => {
            if shamt == 0 {
                write!(f, "[{base} + {off}]")
            } else {
                write!(f, "[{base} + ({off} << {shamt})]")
            }
        }
    }
}

/// `[base + (imm << k)]` / `[base + imm]` / `[base - n]` for immediate forms.
fn fmt_imm(f: &mut fmt::Formatter<'_>, base: Reg, imm: i32, sem: Sem) -> fmt::Result {
    let m = mem_sem(sem);
    let (sign, mag) = if imm < 0 {
        ('-', -(imm as i64))
    } else {
        ('+', imm as i64)
    };
    match m.mode {
        Mode::Imm { scaled: true } if m.log2e > 0 => {
            write!(f, "[{base} {sign} ({mag} << {})]", m.log2e)
        }
        _ => write!(f, "[{base} {sign} {mag}]"),
    }
}

fn fmt_contig(f: &mut fmt::Formatter<'_>, base: SReg, off: SOrImm, sem: Sem) -> fmt::Result {
    let m = mem_sem(sem);
    if m.log2e == 0 {
        write!(f, "[{base}, lc0, {off}]")
    } else {
        write!(f, "[{base}, lc0<<{}, {off}]", m.log2e)
    }
}

fn decode_coff(w: u64) -> Result<(SOrImm, u64), FieldError> {
    if w & FLAG_I != 0 {
        Ok((SOrImm::Imm(simm24(w)?), IMM32 | FLAG_I))
    } else {
        Ok((SOrImm::Reg(sreg_at(w, 32, 'C')?), C))
    }
}

fn encode_coff(off: SOrImm) -> u64 {
    match off {
        SOrImm::Reg(r) => (r.0 as u64) << 32,
        SOrImm::Imm(i) => FLAG_I | imm_bits(i),
    }
}

/// Register-offset load: `V.LW [SrcL + (SrcR << shamt)], ->vD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LoadRR {
    /// Destination vector register.
    pub dst: VReg,
    /// SrcL: `sN` or `vN`.
    pub base: Reg,
    /// SrcR: `sN`, `vN` or `lc0`.
    pub off: Reg,
    /// 0..31.
    pub shamt: u8,
    /// Tile space.
    pub local: bool,
}

impl Format for LoadRR {
    fn effects(&self, _sem: Sem, e: &mut Effects) {
        e.write_v(self.dst);
        e.read(self.base);
        e.read(self.off);
    }
    fn mem_operands(&self) -> Option<MemOperands> {
        Some(MemOperands {
            data: Reg::V(self.dst.0),
            addr: MemAddr::RegOff {
                base: self.base,
                off: self.off,
                shamt: self.shamt,
            },
            local: self.local,
        })
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        let bits = flag_l(self.local)
            | ((32 + self.dst.0 as u64) << 16)
            | reg_bits(self.base, 24)
            | reg_bits(self.off, 32)
            | ((self.shamt as u64 & 31) << 40);
        (bits, None)
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        only(w, FLAG_L | A | B | C | SHAMT)?;
        Ok(LoadRR {
            dst: vreg_at(w, 16, 'A')?,
            base: reg_at(w, 24, 'B', RegClass::SV)?,
            off: reg_at(w, 32, 'C', RegClass::SVL)?,
            shamt: ((w >> 40) & 31) as u8,
            local: w & FLAG_L != 0,
        })
    }
    fn fmt_operands(&self, sem: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(" ")?;
        fmt_regoff(f, self.base, self.off, sem, self.shamt)?;
        write!(f, ", ->{}", self.dst)
    }
    fn local(&self) -> bool {
        self.local
    }
}

/// Immediate-offset load: `V.LWI [SrcL + (simm24 << 2)], ->vD`, `V.LWI.U [SrcL + simm24], ->vD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LoadImm {
    /// Destination vector register.
    pub dst: VReg,
    /// SrcL: `sN` or `vN`.
    pub base: Reg,
    /// simm24 (before scaling).
    pub imm: i32,
    /// Tile space.
    pub local: bool,
}

impl Format for LoadImm {
    fn effects(&self, _sem: Sem, e: &mut Effects) {
        e.write_v(self.dst);
        e.read(self.base);
    }
    fn mem_operands(&self) -> Option<MemOperands> {
        Some(MemOperands {
            data: Reg::V(self.dst.0),
            addr: MemAddr::Imm {
                base: self.base,
                imm: self.imm,
            },
            local: self.local,
        })
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        let bits = flag_l(self.local)
            | FLAG_I
            | ((32 + self.dst.0 as u64) << 16)
            | reg_bits(self.base, 24)
            | imm_bits(self.imm);
        (bits, None)
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        only(w, FLAG_L | FLAG_I | A | B | IMM32)?;
        if w & FLAG_I == 0 {
            return Err(FieldError::ImmFlag);
        }
        Ok(LoadImm {
            dst: vreg_at(w, 16, 'A')?,
            base: reg_at(w, 24, 'B', RegClass::SV)?,
            imm: simm24(w)?,
            local: w & FLAG_L != 0,
        })
    }
    fn fmt_operands(&self, sem: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(" ")?;
        fmt_imm(f, self.base, self.imm, sem)?;
        write!(f, ", ->{}", self.dst)
    }
    fn local(&self) -> bool {
        self.local
    }
}

/// Contiguous load: `V.LW [base, lc0<<2, offset], ->vD`; base `sN`, offset `sN` or simm24.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LoadC {
    /// Destination vector register.
    pub dst: VReg,
    /// Scalar base.
    pub base: SReg,
    /// Scalar or immediate byte offset.
    pub off: SOrImm,
    /// Tile space.
    pub local: bool,
}

impl Format for LoadC {
    fn effects(&self, _sem: Sem, e: &mut Effects) {
        e.write_v(self.dst);
        e.read_s(self.base);
        e.read_s_or_imm(self.off);
        e.reads_lc0 = true;
    }
    fn mem_operands(&self) -> Option<MemOperands> {
        Some(MemOperands {
            data: Reg::V(self.dst.0),
            addr: MemAddr::Contig {
                base: self.base,
                off: self.off,
            },
            local: self.local,
        })
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        let bits = flag_l(self.local)
            | ((32 + self.dst.0 as u64) << 16)
            | ((self.base.0 as u64) << 24)
            | encode_coff(self.off);
        (bits, None)
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        let (off, used) = decode_coff(w)?;
        only(w, FLAG_L | A | B | used)?;
        Ok(LoadC {
            dst: vreg_at(w, 16, 'A')?,
            base: sreg_at(w, 24, 'B')?,
            off,
            local: w & FLAG_L != 0,
        })
    }
    fn fmt_operands(&self, sem: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(" ")?;
        fmt_contig(f, self.base, self.off, sem)?;
        write!(f, ", ->{}", self.dst)
    }
    fn local(&self) -> bool {
        self.local
    }
}

/// Register-offset store: `V.SD vS, [SrcL + (SrcR << (3 + shamt))]`, `V.SW.U vS, [L + (R << sh)]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StoreRR {
    /// SrcD: `sN` or `vN`.
    pub src: Reg,
    /// SrcL: `sN` or `vN`.
    pub base: Reg,
    /// SrcR: `sN`, `vN` or `lc0`.
    pub off: Reg,
    /// 0..31 (the width shift of non-`.U` stores comes on top).
    pub shamt: u8,
    /// Tile space.
    pub local: bool,
}

impl Format for StoreRR {
    fn effects(&self, _sem: Sem, e: &mut Effects) {
        e.read(self.src);
        e.read(self.base);
        e.read(self.off);
    }
    fn mem_operands(&self) -> Option<MemOperands> {
        Some(MemOperands {
            data: self.src,
            addr: MemAddr::RegOff {
                base: self.base,
                off: self.off,
                shamt: self.shamt,
            },
            local: self.local,
        })
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        let bits = flag_l(self.local)
            | reg_bits(self.src, 16)
            | reg_bits(self.base, 24)
            | reg_bits(self.off, 32)
            | ((self.shamt as u64 & 31) << 40);
        (bits, None)
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        only(w, FLAG_L | A | B | C | SHAMT)?;
        Ok(StoreRR {
            src: reg_at(w, 16, 'A', RegClass::SV)?,
            base: reg_at(w, 24, 'B', RegClass::SV)?,
            off: reg_at(w, 32, 'C', RegClass::SVL)?,
            shamt: ((w >> 40) & 31) as u8,
            local: w & FLAG_L != 0,
        })
    }
    fn fmt_operands(&self, sem: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " {}, ", self.src)?;
        fmt_regoff(f, self.base, self.off, sem, self.shamt)
    }
    fn local(&self) -> bool {
        self.local
    }
}

/// Immediate-offset store: `V.SWI vS, [SrcL + (simm24 << 2)]`, `V.SWI.U vS, [SrcL + simm24]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StoreImm {
    /// SrcD: `sN` or `vN`.
    pub src: Reg,
    /// SrcL: `sN` or `vN`.
    pub base: Reg,
    /// simm24 (before scaling).
    pub imm: i32,
    /// Tile space.
    pub local: bool,
}

impl Format for StoreImm {
    fn effects(&self, _sem: Sem, e: &mut Effects) {
        e.read(self.src);
        e.read(self.base);
    }
    fn mem_operands(&self) -> Option<MemOperands> {
        Some(MemOperands {
            data: self.src,
            addr: MemAddr::Imm {
                base: self.base,
                imm: self.imm,
            },
            local: self.local,
        })
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        let bits = flag_l(self.local)
            | FLAG_I
            | reg_bits(self.src, 16)
            | reg_bits(self.base, 24)
            | imm_bits(self.imm);
        (bits, None)
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        only(w, FLAG_L | FLAG_I | A | B | IMM32)?;
        if w & FLAG_I == 0 {
            return Err(FieldError::ImmFlag);
        }
        Ok(StoreImm {
            src: reg_at(w, 16, 'A', RegClass::SV)?,
            base: reg_at(w, 24, 'B', RegClass::SV)?,
            imm: simm24(w)?,
            local: w & FLAG_L != 0,
        })
    }
    fn fmt_operands(&self, sem: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " {}, ", self.src)?;
        fmt_imm(f, self.base, self.imm, sem)
    }
    fn local(&self) -> bool {
        self.local
    }
}

/// Contiguous store: `V.SW vS, [base, lc0<<2, offset]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StoreC {
    /// SrcD: `sN` or `vN`.
    pub src: Reg,
    /// Scalar base.
    pub base: SReg,
    /// Scalar or immediate byte offset.
    pub off: SOrImm,
    /// Tile space.
    pub local: bool,
}

impl Format for StoreC {
    fn effects(&self, _sem: Sem, e: &mut Effects) {
        e.read(self.src);
        e.read_s(self.base);
        e.read_s_or_imm(self.off);
        e.reads_lc0 = true;
    }
    fn mem_operands(&self) -> Option<MemOperands> {
        Some(MemOperands {
            data: self.src,
            addr: MemAddr::Contig {
                base: self.base,
                off: self.off,
            },
            local: self.local,
        })
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        let bits = flag_l(self.local)
            | reg_bits(self.src, 16)
            | ((self.base.0 as u64) << 24)
            | encode_coff(self.off);
        (bits, None)
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        let (off, used) = decode_coff(w)?;
        only(w, FLAG_L | A | B | used)?;
        Ok(StoreC {
            src: reg_at(w, 16, 'A', RegClass::SV)?,
            base: sreg_at(w, 24, 'B')?,
            off,
            local: w & FLAG_L != 0,
        })
    }
    fn fmt_operands(&self, sem: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " {}, ", self.src)?;
        fmt_contig(f, self.base, self.off, sem)
    }
    fn local(&self) -> bool {
        self.local
    }
}

/// Scalar ALU: `S.ADD sd, sa, sb|simm32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SAlu {
    /// Destination.
    pub sd: SReg,
    /// First source.
    pub sa: SReg,
    /// Second source or simm32.
    pub sb: SOrImm,
}

impl Format for SAlu {
    fn effects(&self, _sem: Sem, e: &mut Effects) {
        e.write_s(self.sd);
        e.read_s(self.sa);
        e.read_s_or_imm(self.sb);
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        let b = match self.sb {
            SOrImm::Reg(r) => (r.0 as u64) << 32,
            SOrImm::Imm(i) => FLAG_I | imm_bits(i),
        };
        (
            ((self.sd.0 as u64) << 16) | ((self.sa.0 as u64) << 24) | b,
            None,
        )
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        let sb = if w & FLAG_I != 0 {
            only(w, FLAG_I | A | B | IMM32)?;
            SOrImm::Imm(imm32(w))
        } else {
            only(w, A | B | C)?;
            SOrImm::Reg(sreg_at(w, 32, 'C')?)
        };
        Ok(SAlu {
            sd: sreg_at(w, 16, 'A')?,
            sa: sreg_at(w, 24, 'B')?,
            sb,
        })
    }
    fn fmt_operands(&self, _: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " {}, {}, {}", self.sd, self.sa, self.sb)
    }
}

/// `S.LI sd, imm64`: two words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SLi {
    /// Destination.
    pub sd: SReg,
    /// The full 64-bit value (second word).
    pub imm: u64,
}

impl Format for SLi {
    fn effects(&self, _sem: Sem, e: &mut Effects) {
        e.write_s(self.sd);
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        ((self.sd.0 as u64) << 16, Some(self.imm))
    }
    fn decode_fields(w: u64, next: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        only(w, A)?;
        let imm = next.ok_or(FieldError::MissingSecondWord)?;
        Ok(SLi {
            sd: sreg_at(w, 16, 'A')?,
            imm,
        })
    }
    fn fmt_operands(&self, _: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " {}, 0x{:x}", self.sd, self.imm)
    }
}

/// `S.MOV sd, sa`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SMov {
    /// Destination.
    pub sd: SReg,
    /// Source.
    pub sa: SReg,
}

impl Format for SMov {
    fn effects(&self, _sem: Sem, e: &mut Effects) {
        e.write_s(self.sd);
        e.read_s(self.sa);
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        (
            ((self.sd.0 as u64) << 16) | ((self.sa.0 as u64) << 24),
            None,
        )
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        only(w, A | B)?;
        Ok(SMov {
            sd: sreg_at(w, 16, 'A')?,
            sa: sreg_at(w, 24, 'B')?,
        })
    }
    fn fmt_operands(&self, _: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " {}, {}", self.sd, self.sa)
    }
}

/// `S.LC0 sd`, `S.VL sd`, `S.GID sd`, `S.NGROUPS sd`, `S.MASK sd`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SUnary {
    /// Destination.
    pub sd: SReg,
}

impl Format for SUnary {
    fn effects(&self, sem: Sem, e: &mut Effects) {
        e.write_s(self.sd);
        e.reads_lc0 |= matches!(sem, Sem::SRead(super::SRead::Lc0));
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        ((self.sd.0 as u64) << 16, None)
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        only(w, A)?;
        Ok(SUnary {
            sd: sreg_at(w, 16, 'A')?,
        })
    }
    fn fmt_operands(&self, _: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " {}", self.sd)
    }
}

/// `S.GETLANE sd, va, lane` (lane 0..63, taken modulo VL).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SGetLane {
    /// Destination.
    pub sd: SReg,
    /// Source vector.
    pub va: VReg,
    /// 0..63.
    pub lane: u8,
}

impl Format for SGetLane {
    fn effects(&self, _sem: Sem, e: &mut Effects) {
        e.write_s(self.sd);
        e.read_v(self.va);
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        let bits = ((self.sd.0 as u64) << 16)
            | ((32 + self.va.0 as u64) << 24)
            | ((self.lane as u64 & 63) << 32);
        (bits, None)
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        only(w, A | B | (0x3f << 32))?;
        Ok(SGetLane {
            sd: sreg_at(w, 16, 'A')?,
            va: vreg_at(w, 24, 'B')?,
            lane: ((w >> 32) & 63) as u8,
        })
    }
    fn fmt_operands(&self, _: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " {}, {}, {}", self.sd, self.va, self.lane)
    }
}

fn encode_vsrc(src: VSrc) -> u64 {
    match src {
        VSrc::V(r) => (32 + r.0 as u64) << 32,
        VSrc::S(r) => (r.0 as u64) << 32,
        VSrc::Imm(i) => FLAG_I | imm_bits(i),
    }
}

fn decode_vsrc(w: u64, used: u64, allow_imm: bool) -> Result<VSrc, FieldError> {
    if w & FLAG_I != 0 {
        if !allow_imm {
            return Err(FieldError::ImmFlag);
        }
        only(w, used | FLAG_I | IMM32)?;
        Ok(VSrc::Imm(imm32(w)))
    } else {
        only(w, used | C)?;
        match reg_at(w, 32, 'C', RegClass::SV)? {
            Reg::V(n) => Ok(VSrc::V(VReg(n))),
            Reg::S(n) => Ok(VSrc::S(SReg(n))),
            Reg::Lc0 => unreachable!("class checked"),
        }
    }
}

/// Vector ALU: `V.ADD vd, va, vb|sb|simm32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VAlu {
    /// Destination.
    pub vd: VReg,
    /// First source.
    pub va: VReg,
    /// Second source.
    pub vb: VSrc,
}

impl Format for VAlu {
    fn effects(&self, _sem: Sem, e: &mut Effects) {
        e.write_v(self.vd);
        e.read_v(self.va);
        e.read_src(self.vb);
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        let bits = ((32 + self.vd.0 as u64) << 16)
            | ((32 + self.va.0 as u64) << 24)
            | encode_vsrc(self.vb);
        (bits, None)
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        let vb = decode_vsrc(w, A | B, true)?;
        Ok(VAlu {
            vd: vreg_at(w, 16, 'A')?,
            va: vreg_at(w, 24, 'B')?,
            vb,
        })
    }
    fn fmt_operands(&self, _: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " {}, {}, {}", self.vd, self.va, self.vb)
    }
}

/// `V.MOV vd, va|sb|simm32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VMov {
    /// Destination.
    pub vd: VReg,
    /// Source.
    pub src: VSrc,
}

impl Format for VMov {
    fn effects(&self, _sem: Sem, e: &mut Effects) {
        e.write_v(self.vd);
        e.read_src(self.src);
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        (
            ((32 + self.vd.0 as u64) << 16) | encode_vsrc(self.src),
            None,
        )
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        let src = decode_vsrc(w, A, true)?;
        Ok(VMov {
            vd: vreg_at(w, 16, 'A')?,
            src,
        })
    }
    fn fmt_operands(&self, _: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " {}, {}", self.vd, self.src)
    }
}

/// `V.LANEID vd`, `V.LC0 vd`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VUnary {
    /// Destination.
    pub vd: VReg,
}

impl Format for VUnary {
    fn effects(&self, sem: Sem, e: &mut Effects) {
        e.write_v(self.vd);
        e.reads_lc0 |= matches!(sem, Sem::VRead(super::VRead::Lc0));
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        ((32 + self.vd.0 as u64) << 16, None)
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        only(w, A)?;
        Ok(VUnary {
            vd: vreg_at(w, 16, 'A')?,
        })
    }
    fn fmt_operands(&self, _: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " {}", self.vd)
    }
}

/// Floating point: `V.FADD.S vd, va, vb|sb` (no immediate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VFp {
    /// Destination (and addend of FMA).
    pub vd: VReg,
    /// First source.
    pub va: VReg,
    /// Second source: `vN` or `sN` (never [`VSrc::Imm`]).
    pub vb: VSrc,
}

impl Format for VFp {
    fn effects(&self, sem: Sem, e: &mut Effects) {
        e.write_v(self.vd);
        e.read_v(self.va);
        e.read_src(self.vb);
        if matches!(sem, Sem::Fp(super::FpOp::Fma, _)) {
            e.read_v(self.vd);
        }
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        let bits = ((32 + self.vd.0 as u64) << 16)
            | ((32 + self.va.0 as u64) << 24)
            | encode_vsrc(self.vb);
        (bits, None)
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        let vb = decode_vsrc(w, A | B, false)?;
        Ok(VFp {
            vd: vreg_at(w, 16, 'A')?,
            va: vreg_at(w, 24, 'B')?,
            vb,
        })
    }
    fn fmt_operands(&self, _: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " {}, {}, {}", self.vd, self.va, self.vb)
    }
}

/// `V.REDSUM sd, va`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VRedSum {
    /// Destination.
    pub sd: SReg,
    /// Source vector.
    pub va: VReg,
}

impl Format for VRedSum {
    fn effects(&self, _sem: Sem, e: &mut Effects) {
        e.write_s(self.sd);
        e.read_v(self.va);
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        (
            ((self.sd.0 as u64) << 16) | ((32 + self.va.0 as u64) << 24),
            None,
        )
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        only(w, A | B)?;
        Ok(VRedSum {
            sd: sreg_at(w, 16, 'A')?,
            va: vreg_at(w, 24, 'B')?,
        })
    }
    fn fmt_operands(&self, _: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " {}, {}", self.sd, self.va)
    }
}

/// `V.SETMASK sa`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VSetMask {
    /// Source of the new mask bits.
    pub sa: SReg,
}

impl Format for VSetMask {
    fn effects(&self, _sem: Sem, e: &mut Effects) {
        e.read_s(self.sa);
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        ((self.sa.0 as u64) << 16, None)
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        only(w, A)?;
        Ok(VSetMask {
            sa: sreg_at(w, 16, 'A')?,
        })
    }
    fn fmt_operands(&self, _: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " {}", self.sa)
    }
}

/// A code address as an instruction index (pc / 8). Displayed as its pc in hex.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Target(pub u32);

impl Target {
    /// The byte pc.
    pub const fn pc(self) -> u64 {
        self.0 as u64 * 8
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:x}", self.pc())
    }
}

/// `J label`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Jump {
    /// Destination.
    pub target: Target,
}

impl Format for Jump {
    fn encode_fields(&self) -> (u64, Option<u64>) {
        (((self.target.0 & MAX_TARGET) as u64) << 40, None)
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        only(w, TARGET)?;
        Ok(Jump {
            target: Target(target(w)),
        })
    }
    fn fmt_operands(&self, _: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " {}", self.target)
    }
}

/// `BEQ sa, sb|simm16, label`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Branch {
    /// Left comparand.
    pub sa: SReg,
    /// Right comparand: `sN` or simm16.
    pub sb: SOrImm,
    /// Destination when taken.
    pub target: Target,
}

impl Format for Branch {
    fn effects(&self, _sem: Sem, e: &mut Effects) {
        e.read_s(self.sa);
        e.read_s_or_imm(self.sb);
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        let b = match self.sb {
            SOrImm::Reg(r) => (r.0 as u64) << 24,
            SOrImm::Imm(i) => FLAG_I | (((i as i16 as u16) as u64) << 24),
        };
        let bits = ((self.sa.0 as u64) << 16) | b | (((self.target.0 & MAX_TARGET) as u64) << 40);
        (bits, None)
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        let sb = if w & FLAG_I != 0 {
            only(w, FLAG_I | A | IMM16 | TARGET)?;
            SOrImm::Imm(((w >> 24) as u16 as i16) as i32)
        } else {
            only(w, A | B | TARGET)?;
            SOrImm::Reg(sreg_at(w, 24, 'B')?)
        };
        Ok(Branch {
            sa: sreg_at(w, 16, 'A')?,
            sb,
            target: Target(target(w)),
        })
    }
    fn fmt_operands(&self, _: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " {}, {}, {}", self.sa, self.sb, self.target)
    }
}

/// `LOOP sa`; `exit` is the instruction after the paired `ENDLOOP` (set by the assembler).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Loop {
    /// Trip count register.
    pub sa: SReg,
    /// Where a zero trip count continues.
    pub exit: Target,
}

impl Format for Loop {
    fn effects(&self, _sem: Sem, e: &mut Effects) {
        e.read_s(self.sa);
    }
    fn encode_fields(&self) -> (u64, Option<u64>) {
        (
            ((self.sa.0 as u64) << 16) | (((self.exit.0 & MAX_TARGET) as u64) << 40),
            None,
        )
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        only(w, A | TARGET)?;
        Ok(Loop {
            sa: sreg_at(w, 16, 'A')?,
            exit: Target(target(w)),
        })
    }
    fn fmt_operands(&self, _: Sem, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " {}", self.sa)
    }
}

/// `ENDLOOP`; `body` is the instruction after the paired `LOOP` (set by the assembler).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EndLoop {
    /// Where another iteration continues.
    pub body: Target,
}

impl Format for EndLoop {
    fn encode_fields(&self) -> (u64, Option<u64>) {
        ((((self.body.0 & MAX_TARGET) as u64) << 40), None)
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        only(w, TARGET)?;
        Ok(EndLoop {
            body: Target(target(w)),
        })
    }
    fn fmt_operands(&self, _: Sem, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        Ok(())
    }
}

/// `NOP`, `HALT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Nullary;

impl Format for Nullary {
    fn encode_fields(&self) -> (u64, Option<u64>) {
        (0, None)
    }
    fn decode_fields(w: u64, _: Option<u64>, _: Sem) -> Result<Self, FieldError> {
        only(w, 0)?;
        Ok(Nullary)
    }
    fn fmt_operands(&self, _: Sem, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        Ok(())
    }
}
