//! The instruction set, written once.
//!
//! [`for_each_op!`](crate::for_each_op) is the single table of every lanejit instruction: its opcode byte, its
//! mnemonic, its operand format (a struct in [`operands`]) and its semantic class ([`Sem`]).
//! The instruction enum [`Inst`], the [`Opcode`] enum, the encoder, the decoder, the
//! single-instruction disassembler (`Display for Inst`) and the [`InstVisitor`] trait are all
//! generated from that table by the private `define_isa!` macro, so they cannot drift apart. The bit layout of
//! every format is in `operands` and in `seeds/ISA.md`.

pub mod operands;

pub use operands::*;

use std::fmt;

/// Access width of a memory instruction, as `log2(E)`: 0 = byte, 1 = half, 2 = word, 3 = dword.
pub type Log2E = u8;

/// Direction of a memory access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    /// Memory to register.
    Load,
    /// Register to memory.
    Store,
}

/// How a load extends its E bytes into the 64-bit lane (stores use [`Ext::None`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ext {
    /// Sign-extend (V.LB, V.LHI.U, ...).
    Sign,
    /// Zero-extend (V.LBU, V.LHUI, ...).
    Zero,
    /// No extension: 8-byte loads, and every store.
    None,
}

/// Addressing mode of a memory instruction: how the per-lane EA is formed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// `SrcL + (SrcR << shift)`, shift = shamt, plus log2 E when `add_width` (stores without `.U`).
    RegOff {
        /// Whether the width shift is added to shamt (the load/store asymmetry of the seed).
        add_width: bool,
    },
    /// `SrcL + (simm24 << log2 E)` when `scaled`, else `SrcL + simm24`.
    Imm {
        /// Whether the immediate is scaled by the element width (I forms without `.U`).
        scaled: bool,
    },
    /// `base + (lc0 << log2 E) + offset`, base and offset scalar.
    Contig,
}

/// Everything the engines need to know about a memory instruction besides its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemSem {
    /// Load or store.
    pub dir: Dir,
    /// log2 of the access width E.
    pub log2e: Log2E,
    /// Extension of loaded data.
    pub ext: Ext,
    /// Addressing mode.
    pub mode: Mode,
}

impl MemSem {
    /// Access width in bytes.
    pub const fn width(self) -> u64 {
        1 << self.log2e
    }

    /// Whether `--strict-align` can trap this form: the forms whose offset is scaled by E
    /// (scaled immediates, contiguous, register-offset stores without `.U`), for E > 1.
    pub const fn strict_align_applies(self) -> bool {
        self.log2e > 0
            && matches!(
                self.mode,
                Mode::Imm { scaled: true } | Mode::Contig | Mode::RegOff { add_width: true }
            )
    }

    /// Total left shift applied to a register offset of this form (`RegOff` only).
    pub const fn reg_shift(self, shamt: u8) -> u32 {
        match self.mode {
            Mode::RegOff { add_width: true } => self.log2e as u32 + shamt as u32,
            _ => shamt as u32,
        }
    }

    /// The byte offset an immediate of this form contributes to the EA (`Imm` only).
    pub const fn imm_offset(self, imm: i32) -> u64 {
        match self.mode {
            Mode::Imm { scaled: true } => ((imm as i64) << self.log2e) as u64,
            _ => imm as i64 as u64,
        }
    }
}

/// Two-operand integer operation shared by the scalar and vector ALUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AluOp {
    /// Wrapping add.
    Add,
    /// Wrapping subtract.
    Sub,
    /// Wrapping multiply (low 64 bits).
    Mul,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise exclusive or.
    Xor,
    /// Shift left, amount mod 64.
    Shl,
    /// Logical shift right, amount mod 64.
    Shr,
    /// Arithmetic shift right, amount mod 64.
    Sra,
}

impl AluOp {
    /// The operation's result on 64-bit values.
    #[inline(always)]
    pub fn apply(self, a: u64, b: u64) -> u64 {
        match self {
            AluOp::Add => a.wrapping_add(b),
            AluOp::Sub => a.wrapping_sub(b),
            AluOp::Mul => a.wrapping_mul(b),
            AluOp::And => a & b,
            AluOp::Or => a | b,
            AluOp::Xor => a ^ b,
            AluOp::Shl => a << (b & 63),
            AluOp::Shr => a >> (b & 63),
            AluOp::Sra => ((a as i64) >> (b & 63)) as u64,
        }
    }
}

/// Floating-point operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FpOp {
    /// `va + vb`.
    Add,
    /// `va - vb`.
    Sub,
    /// `va * vb`.
    Mul,
    /// `va * vb + vd`, fused (one rounding).
    Fma,
}

/// Floating-point precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FpWidth {
    /// f32 in the low 32 bits of the lane; the upper 32 bits of a result are zero.
    S,
    /// f64.
    D,
}

/// The canonical quiet NaN of f32, the result of every f32 operation that yields NaN.
pub const CANONICAL_NAN_F32: u32 = 0x7fc0_0000;
/// The canonical quiet NaN of f64, the result of every f64 operation that yields NaN.
pub const CANONICAL_NAN_F64: u64 = 0x7ff8_0000_0000_0000;

impl FpOp {
    /// The operation on lane bit patterns `a` (va), `b` (vb or sb) and `d` (the old vd, for FMA).
    /// IEEE 754 round-to-nearest-even with subnormals; NaN results are canonical. The fused
    /// multiply-add uses the correctly rounded `mul_add`, so no host feature changes a bit.
    #[inline(always)]
    pub fn apply(self, w: FpWidth, a: u64, b: u64, d: u64) -> u64 {
        match w {
            FpWidth::S => {
                let (x, y, z) = (
                    f32::from_bits(a as u32),
                    f32::from_bits(b as u32),
                    f32::from_bits(d as u32),
                );
                let r = match self {
                    FpOp::Add => x + y,
                    FpOp::Sub => x - y,
                    FpOp::Mul => x * y,
                    FpOp::Fma => x.mul_add(y, z),
                };
                if r.is_nan() {
                    CANONICAL_NAN_F32 as u64
                } else {
                    r.to_bits() as u64
                }
            }
            FpWidth::D => {
                let (x, y, z) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(d));
                let r = match self {
                    FpOp::Add => x + y,
                    FpOp::Sub => x - y,
                    FpOp::Mul => x * y,
                    FpOp::Fma => x.mul_add(y, z),
                };
                if r.is_nan() {
                    CANONICAL_NAN_F64
                } else {
                    r.to_bits()
                }
            }
        }
    }
}

/// Branch condition, comparing `sa` with `sb` or an immediate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    /// Equal.
    Eq,
    /// Not equal.
    Ne,
    /// Signed less than.
    Lt,
    /// Signed greater or equal.
    Ge,
    /// Unsigned less than.
    Ltu,
    /// Unsigned greater or equal.
    Geu,
}

impl Cond {
    /// Whether the branch is taken.
    #[inline(always)]
    pub fn holds(self, a: u64, b: u64) -> bool {
        match self {
            Cond::Eq => a == b,
            Cond::Ne => a != b,
            Cond::Lt => (a as i64) < (b as i64),
            Cond::Ge => (a as i64) >= (b as i64),
            Cond::Ltu => a < b,
            Cond::Geu => a >= b,
        }
    }
}

/// Scalar unary read of machine state (`S.LC0`, `S.VL`, `S.GID`, `S.NGROUPS`, `S.MASK`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SRead {
    /// LC0BASE.
    Lc0,
    /// The group's lane count.
    Vl,
    /// The group id, 0..G-1 (contract section 9).
    Gid,
    /// The number of groups G of the launch.
    NGroups,
    /// The execution mask.
    Mask,
}

/// Vector unary read of machine state (`V.LANEID`, `V.LC0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VRead {
    /// Lane i gets i.
    LaneId,
    /// Lane i gets LC0BASE + i.
    Lc0,
}

/// Control instruction kind (formats tell the operands).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ctl {
    /// Unconditional jump.
    Jump,
    /// Hardware loop head.
    Loop,
    /// Hardware loop end.
    EndLoop,
    /// No operation.
    Nop,
    /// Stop the program.
    Halt,
}

/// Semantic class of an instruction; together with its operands it determines what it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sem {
    /// A load or store of the seed.
    Mem(MemSem),
    /// Scalar ALU `sd = sa op (sb|imm)`.
    SAlu(AluOp),
    /// `S.LI`.
    SLi,
    /// `S.MOV`.
    SMov,
    /// `S.LC0`, `S.VL`, `S.GID`, `S.NGROUPS`, `S.MASK`.
    SRead(SRead),
    /// `S.GETLANE`.
    SGetLane,
    /// Vector ALU, lane-wise on active lanes.
    VAlu(AluOp),
    /// `V.MOV`.
    VMov,
    /// `V.LANEID`, `V.LC0`.
    VRead(VRead),
    /// Floating point, lane-wise on active lanes.
    Fp(FpOp, FpWidth),
    /// `V.REDSUM`.
    RedSum,
    /// `V.SETMASK`.
    SetMask,
    /// Conditional branch.
    Branch(Cond),
    /// Other control.
    Ctl(Ctl),
}

const fn mem(dir: Dir, log2e: Log2E, ext: Ext, mode: Mode) -> Sem {
    Sem::Mem(MemSem {
        dir,
        log2e,
        ext,
        mode,
    })
}
const fn ld(log2e: Log2E, ext: Ext, mode: Mode) -> Sem {
    let ext = if log2e == 3 { Ext::None } else { ext };
    mem(Dir::Load, log2e, ext, mode)
}
const fn st(log2e: Log2E, mode: Mode) -> Sem {
    mem(Dir::Store, log2e, Ext::None, mode)
}
const RR: Mode = Mode::RegOff { add_width: false };
const RRW: Mode = Mode::RegOff { add_width: true };
const IMM: Mode = Mode::Imm { scaled: true };
const IMMU: Mode = Mode::Imm { scaled: false };
const CONTIG: Mode = Mode::Contig;
use Ext::{Sign as SX, Zero as ZX};

/// The whole lanejit ISA as one table; invokes `$m!` with every instruction.
///
/// Each entry is `CamelName snake_name OPCODE "MNEMONIC" Format (sem);` with one doc comment.
///
/// **Naming rule.** `CamelName` is the mnemonic with its dots removed and each dot-separated
/// part capitalised (`V.LWI.U` -> `VLwiU`, `S.GETLANE` -> `SGetlane`, `V.FADD.S` -> `VFaddS`);
/// the contiguous (`lc0`) forms, which share their mnemonic with the register-offset forms,
/// append `C` (`V.LW [s1, lc0<<2, s2]` -> `VLwC`). `snake_name` is the same words in snake case
/// (`v_lwi_u`, `v_lw_c`). `.local` is an operand flag, not a separate entry. Opcode bytes are
/// grouped: 0x10-0x2f loads, 0x40-0x5f stores, 0x80-0x9f scalar, 0xa0-0xcf vector, 0xe0-0xef
/// control; 0x00 never decodes, so a zero word is an illegal instruction.
#[macro_export]
macro_rules! for_each_op {
    ($m:ident) => {
        $m! {
            /// Load 1 byte, sign-extend. EA = SrcL + (SrcR << shamt).
            VLb v_lb 0x10 "V.LB" LoadRR (ld(0, SX, RR));
            /// Load 2 bytes, sign-extend. EA = SrcL + (SrcR << shamt) (no width shift on loads).
            VLh v_lh 0x11 "V.LH" LoadRR (ld(1, SX, RR));
            /// Load 4 bytes, sign-extend. EA = SrcL + (SrcR << shamt).
            VLw v_lw 0x12 "V.LW" LoadRR (ld(2, SX, RR));
            /// Load 8 bytes. EA = SrcL + (SrcR << shamt).
            VLd v_ld 0x13 "V.LD" LoadRR (ld(3, SX, RR));
            /// Load 1 byte, zero-extend. EA = SrcL + (SrcR << shamt).
            VLbu v_lbu 0x14 "V.LBU" LoadRR (ld(0, ZX, RR));
            /// Load 2 bytes, zero-extend. EA = SrcL + (SrcR << shamt).
            VLhu v_lhu 0x15 "V.LHU" LoadRR (ld(1, ZX, RR));
            /// Load 4 bytes, zero-extend. EA = SrcL + (SrcR << shamt).
            VLwu v_lwu 0x16 "V.LWU" LoadRR (ld(2, ZX, RR));
            /// Load 1 byte, sign-extend. EA = SrcL + simm24.
            VLbi v_lbi 0x18 "V.LBI" LoadImm (ld(0, SX, IMM));
            /// Load 2 bytes, sign-extend. EA = SrcL + (simm24 << 1).
            VLhi v_lhi 0x19 "V.LHI" LoadImm (ld(1, SX, IMM));
            /// Load 4 bytes, sign-extend. EA = SrcL + (simm24 << 2).
            VLwi v_lwi 0x1a "V.LWI" LoadImm (ld(2, SX, IMM));
            /// Load 8 bytes. EA = SrcL + (simm24 << 3).
            VLdi v_ldi 0x1b "V.LDI" LoadImm (ld(3, SX, IMM));
            /// Load 1 byte, zero-extend. EA = SrcL + simm24.
            VLbui v_lbui 0x1c "V.LBUI" LoadImm (ld(0, ZX, IMM));
            /// Load 2 bytes, zero-extend. EA = SrcL + (simm24 << 1).
            VLhui v_lhui 0x1d "V.LHUI" LoadImm (ld(1, ZX, IMM));
            /// Load 4 bytes, zero-extend. EA = SrcL + (simm24 << 2).
            VLwui v_lwui 0x1e "V.LWUI" LoadImm (ld(2, ZX, IMM));
            /// Load 2 bytes, sign-extend (`.U` only drops the scaling). EA = SrcL + simm24.
            VLhiU v_lhi_u 0x21 "V.LHI.U" LoadImm (ld(1, SX, IMMU));
            /// Load 4 bytes, sign-extend. EA = SrcL + simm24.
            VLwiU v_lwi_u 0x22 "V.LWI.U" LoadImm (ld(2, SX, IMMU));
            /// Load 8 bytes. EA = SrcL + simm24.
            VLdiU v_ldi_u 0x23 "V.LDI.U" LoadImm (ld(3, SX, IMMU));
            /// Load 2 bytes, zero-extend. EA = SrcL + simm24.
            VLhuiU v_lhui_u 0x25 "V.LHUI.U" LoadImm (ld(1, ZX, IMMU));
            /// Load 4 bytes, zero-extend. EA = SrcL + simm24.
            VLwuiU v_lwui_u 0x26 "V.LWUI.U" LoadImm (ld(2, ZX, IMMU));
            /// Contiguous load of bytes, sign-extend. EA = base + lc0 + offset.
            VLbC v_lb_c 0x28 "V.LB" LoadC (ld(0, SX, CONTIG));
            /// Contiguous load of halves, sign-extend. EA = base + (lc0 << 1) + offset.
            VLhC v_lh_c 0x29 "V.LH" LoadC (ld(1, SX, CONTIG));
            /// Contiguous load of words, sign-extend. EA = base + (lc0 << 2) + offset.
            VLwC v_lw_c 0x2a "V.LW" LoadC (ld(2, SX, CONTIG));
            /// Contiguous load of dwords. EA = base + (lc0 << 3) + offset.
            VLdC v_ld_c 0x2b "V.LD" LoadC (ld(3, SX, CONTIG));
            /// Contiguous load of bytes, zero-extend. EA = base + lc0 + offset.
            VLbuC v_lbu_c 0x2c "V.LBU" LoadC (ld(0, ZX, CONTIG));
            /// Contiguous load of halves, zero-extend. EA = base + (lc0 << 1) + offset.
            VLhuC v_lhu_c 0x2d "V.LHU" LoadC (ld(1, ZX, CONTIG));
            /// Contiguous load of words, zero-extend. EA = base + (lc0 << 2) + offset.
            VLwuC v_lwu_c 0x2e "V.LWU" LoadC (ld(2, ZX, CONTIG));
            /// Store 1 byte. EA = SrcL + (SrcR << shamt).
            VSb v_sb 0x40 "V.SB" StoreRR (st(0, RRW));
            /// Store 2 bytes. EA = SrcL + (SrcR << (1 + shamt)).
            VSh v_sh 0x41 "V.SH" StoreRR (st(1, RRW));
            /// Store 4 bytes. EA = SrcL + (SrcR << (2 + shamt)).
            VSw v_sw 0x42 "V.SW" StoreRR (st(2, RRW));
            /// Store 8 bytes. EA = SrcL + (SrcR << (3 + shamt)).
            VSd v_sd 0x43 "V.SD" StoreRR (st(3, RRW));
            /// Store 2 bytes. EA = SrcL + (SrcR << shamt).
            VShU v_sh_u 0x45 "V.SH.U" StoreRR (st(1, RR));
            /// Store 4 bytes. EA = SrcL + (SrcR << shamt).
            VSwU v_sw_u 0x46 "V.SW.U" StoreRR (st(2, RR));
            /// Store 8 bytes. EA = SrcL + (SrcR << shamt).
            VSdU v_sd_u 0x47 "V.SD.U" StoreRR (st(3, RR));
            /// Store 1 byte. EA = SrcL + simm24.
            VSbi v_sbi 0x48 "V.SBI" StoreImm (st(0, IMM));
            /// Store 2 bytes. EA = SrcL + (simm24 << 1).
            VShi v_shi 0x49 "V.SHI" StoreImm (st(1, IMM));
            /// Store 4 bytes. EA = SrcL + (simm24 << 2).
            VSwi v_swi 0x4a "V.SWI" StoreImm (st(2, IMM));
            /// Store 8 bytes. EA = SrcL + (simm24 << 3).
            VSdi v_sdi 0x4b "V.SDI" StoreImm (st(3, IMM));
            /// Store 2 bytes. EA = SrcL + simm24.
            VShiU v_shi_u 0x4d "V.SHI.U" StoreImm (st(1, IMMU));
            /// Store 4 bytes. EA = SrcL + simm24.
            VSwiU v_swi_u 0x4e "V.SWI.U" StoreImm (st(2, IMMU));
            /// Store 8 bytes. EA = SrcL + simm24.
            VSdiU v_sdi_u 0x4f "V.SDI.U" StoreImm (st(3, IMMU));
            /// Contiguous store of bytes. EA = base + lc0 + offset.
            VSbC v_sb_c 0x50 "V.SB" StoreC (st(0, CONTIG));
            /// Contiguous store of halves. EA = base + (lc0 << 1) + offset.
            VShC v_sh_c 0x51 "V.SH" StoreC (st(1, CONTIG));
            /// Contiguous store of words. EA = base + (lc0 << 2) + offset.
            VSwC v_sw_c 0x52 "V.SW" StoreC (st(2, CONTIG));
            /// Contiguous store of dwords. EA = base + (lc0 << 3) + offset.
            VSdC v_sd_c 0x53 "V.SD" StoreC (st(3, CONTIG));
            /// `sd = sa + (sb|imm)`, wrapping.
            SAdd s_add 0x80 "S.ADD" SAlu (Sem::SAlu(AluOp::Add));
            /// `sd = sa - (sb|imm)`, wrapping.
            SSub s_sub 0x81 "S.SUB" SAlu (Sem::SAlu(AluOp::Sub));
            /// `sd = sa * (sb|imm)`, low 64 bits.
            SMul s_mul 0x82 "S.MUL" SAlu (Sem::SAlu(AluOp::Mul));
            /// `sd = sa & (sb|imm)`.
            SAnd s_and 0x83 "S.AND" SAlu (Sem::SAlu(AluOp::And));
            /// `sd = sa | (sb|imm)`.
            SOr s_or 0x84 "S.OR" SAlu (Sem::SAlu(AluOp::Or));
            /// `sd = sa ^ (sb|imm)`.
            SXor s_xor 0x85 "S.XOR" SAlu (Sem::SAlu(AluOp::Xor));
            /// `sd = sa << ((sb|imm) mod 64)`.
            SShl s_shl 0x86 "S.SHL" SAlu (Sem::SAlu(AluOp::Shl));
            /// `sd = sa >> ((sb|imm) mod 64)`, logical.
            SShr s_shr 0x87 "S.SHR" SAlu (Sem::SAlu(AluOp::Shr));
            /// `sd = sa >> ((sb|imm) mod 64)`, arithmetic.
            SSra s_sra 0x88 "S.SRA" SAlu (Sem::SAlu(AluOp::Sra));
            /// `sd = imm64` (two words: the second holds the value).
            SLi s_li 0x90 "S.LI" SLi (Sem::SLi);
            /// `sd = sa`.
            SMov s_mov 0x91 "S.MOV" SMov (Sem::SMov);
            /// `sd = LC0BASE`.
            SLc0 s_lc0 0x92 "S.LC0" SUnary (Sem::SRead(SRead::Lc0));
            /// `sd = VL`.
            SVl s_vl 0x93 "S.VL" SUnary (Sem::SRead(SRead::Vl));
            /// `sd = group id` (0..G-1).
            SGid s_gid 0x94 "S.GID" SUnary (Sem::SRead(SRead::Gid));
            /// `sd = mask`.
            SMask s_mask 0x95 "S.MASK" SUnary (Sem::SRead(SRead::Mask));
            /// `sd = va[lane mod VL]`.
            SGetlane s_getlane 0x96 "S.GETLANE" SGetLane (Sem::SGetLane);
            /// `sd = G`, the number of groups of the launch.
            SNgroups s_ngroups 0x97 "S.NGROUPS" SUnary (Sem::SRead(SRead::NGroups));
            /// `vd = va + (vb|sb|imm)` on active lanes.
            VAdd v_add 0xa0 "V.ADD" VAlu (Sem::VAlu(AluOp::Add));
            /// `vd = va - (vb|sb|imm)` on active lanes.
            VSub v_sub 0xa1 "V.SUB" VAlu (Sem::VAlu(AluOp::Sub));
            /// `vd = va * (vb|sb|imm)` on active lanes.
            VMul v_mul 0xa2 "V.MUL" VAlu (Sem::VAlu(AluOp::Mul));
            /// `vd = va & (vb|sb|imm)` on active lanes.
            VAnd v_and 0xa3 "V.AND" VAlu (Sem::VAlu(AluOp::And));
            /// `vd = va | (vb|sb|imm)` on active lanes.
            VOr v_or 0xa4 "V.OR" VAlu (Sem::VAlu(AluOp::Or));
            /// `vd = va ^ (vb|sb|imm)` on active lanes.
            VXor v_xor 0xa5 "V.XOR" VAlu (Sem::VAlu(AluOp::Xor));
            /// `vd = va << (x mod 64)` on active lanes.
            VShl v_shl 0xa6 "V.SHL" VAlu (Sem::VAlu(AluOp::Shl));
            /// `vd = va >> (x mod 64)`, logical, on active lanes.
            VShr v_shr 0xa7 "V.SHR" VAlu (Sem::VAlu(AluOp::Shr));
            /// `vd = va >> (x mod 64)`, arithmetic, on active lanes.
            VSra v_sra 0xa8 "V.SRA" VAlu (Sem::VAlu(AluOp::Sra));
            /// `vd = va|sb|imm` on active lanes.
            VMov v_mov 0xb0 "V.MOV" VMov (Sem::VMov);
            /// `vd[i] = i` on active lanes.
            VLaneid v_laneid 0xb1 "V.LANEID" VUnary (Sem::VRead(VRead::LaneId));
            /// `vd[i] = LC0BASE + i` on active lanes.
            VLc0 v_lc0 0xb2 "V.LC0" VUnary (Sem::VRead(VRead::Lc0));
            /// f32 add on active lanes.
            VFaddS v_fadd_s 0xb8 "V.FADD.S" VFp (Sem::Fp(FpOp::Add, FpWidth::S));
            /// f32 subtract on active lanes.
            VFsubS v_fsub_s 0xb9 "V.FSUB.S" VFp (Sem::Fp(FpOp::Sub, FpWidth::S));
            /// f32 multiply on active lanes.
            VFmulS v_fmul_s 0xba "V.FMUL.S" VFp (Sem::Fp(FpOp::Mul, FpWidth::S));
            /// f32 fused `vd = va * vb + vd` on active lanes.
            VFmaS v_fma_s 0xbb "V.FMA.S" VFp (Sem::Fp(FpOp::Fma, FpWidth::S));
            /// f64 add on active lanes.
            VFaddD v_fadd_d 0xbc "V.FADD.D" VFp (Sem::Fp(FpOp::Add, FpWidth::D));
            /// f64 subtract on active lanes.
            VFsubD v_fsub_d 0xbd "V.FSUB.D" VFp (Sem::Fp(FpOp::Sub, FpWidth::D));
            /// f64 multiply on active lanes.
            VFmulD v_fmul_d 0xbe "V.FMUL.D" VFp (Sem::Fp(FpOp::Mul, FpWidth::D));
            /// f64 fused `vd = va * vb + vd` on active lanes.
            VFmaD v_fma_d 0xbf "V.FMA.D" VFp (Sem::Fp(FpOp::Fma, FpWidth::D));
            /// `sd = wrapping sum of va over active lanes`.
            VRedsum v_redsum 0xc0 "V.REDSUM" VRedSum (Sem::RedSum);
            /// `mask = low VL bits of sa`.
            VSetmask v_setmask 0xc1 "V.SETMASK" VSetMask (Sem::SetMask);
            /// Jump to a label.
            J j 0xe0 "J" Jump (Sem::Ctl(Ctl::Jump));
            /// Branch if `sa == (sb|imm16)`.
            Beq beq 0xe1 "BEQ" Branch (Sem::Branch(Cond::Eq));
            /// Branch if `sa != (sb|imm16)`.
            Bne bne 0xe2 "BNE" Branch (Sem::Branch(Cond::Ne));
            /// Branch if `sa < (sb|imm16)`, signed.
            Blt blt 0xe3 "BLT" Branch (Sem::Branch(Cond::Lt));
            /// Branch if `sa >= (sb|imm16)`, signed.
            Bge bge 0xe4 "BGE" Branch (Sem::Branch(Cond::Ge));
            /// Branch if `sa < (sb|imm16)`, unsigned.
            Bltu bltu 0xe5 "BLTU" Branch (Sem::Branch(Cond::Ltu));
            /// Branch if `sa >= (sb|imm16)`, unsigned.
            Bgeu bgeu 0xe6 "BGEU" Branch (Sem::Branch(Cond::Geu));
            /// Hardware loop head: latch trip = sa; 0 skips past the paired ENDLOOP.
            Loop loop_ 0xe8 "LOOP" Loop (Sem::Ctl(Ctl::Loop));
            /// Hardware loop end: LC0BASE += VL; loop back while LC0BASE < trip.
            Endloop endloop 0xe9 "ENDLOOP" EndLoop (Sem::Ctl(Ctl::EndLoop));
            /// No operation.
            Nop nop 0xee "NOP" Nullary (Sem::Ctl(Ctl::Nop));
            /// Stop: the run ends with status `halted`.
            Halt halt 0xef "HALT" Nullary (Sem::Ctl(Ctl::Halt));
        }
    };
}

/// Generates [`Opcode`], [`Inst`], encoding, decoding, `Display` and [`InstVisitor`] from the
/// table passed in by [`for_each_op!`](crate::for_each_op).
macro_rules! define_isa {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident $snake:ident $code:literal $mn:literal $fmt:ident ($sem:expr);
    )*) => {
        /// Every instruction's opcode byte (bits 0..8 of its first word).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Opcode {
            $( $(#[doc = $doc])* $name = $code, )*
        }

        impl Opcode {
            /// Every opcode, in table order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$name),*];

            /// The opcode with this byte, if any.
            pub const fn from_byte(b: u8) -> Option<Opcode> {
                match b {
                    $( $code => Some(Opcode::$name), )*
                    _ => None,
                }
            }

            /// The assembly mnemonic (without `.local`).
            pub const fn mnemonic(self) -> &'static str {
                match self { $( Opcode::$name => $mn, )* }
            }

            /// The table name (`VLwiU`).
            pub const fn name(self) -> &'static str {
                match self { $( Opcode::$name => stringify!($name), )* }
            }

            /// The semantic class.
            pub const fn sem(self) -> Sem {
                match self { $( Opcode::$name => $sem, )* }
            }

            /// The operand format.
            pub const fn format(self) -> FormatKind {
                match self { $( Opcode::$name => FormatKind::$fmt, )* }
            }

            /// Number of 64-bit words the instruction occupies (2 for `S.LI`, else 1).
            pub const fn words(self) -> usize {
                self.format().words()
            }

            /// The memory semantics, for loads and stores.
            pub const fn mem(self) -> Option<MemSem> {
                match self.sem() {
                    Sem::Mem(m) => Some(m),
                    _ => None,
                }
            }
        }

        const _: () = {
            let codes: &[u8] = &[$($code),*];
            let mut i = 0;
            while i < codes.len() {
                assert!(codes[i] != 0, "opcode 0 is reserved as illegal");
                let mut j = i + 1;
                while j < codes.len() {
                    assert!(codes[i] != codes[j], "two instructions share an opcode byte");
                    j += 1;
                }
                i += 1;
            }
        };

        /// One decoded instruction: its opcode and its typed operands.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Inst {
            $( $(#[doc = $doc])* $name($fmt), )*
        }

        impl Inst {
            /// The opcode.
            pub const fn opcode(&self) -> Opcode {
                match self { $( Inst::$name(_) => Opcode::$name, )* }
            }

            /// Encode into one or two words.
            pub fn encode(&self) -> Encoded {
                match self {
                    $( Inst::$name(ops) => {
                        let (bits, second) = ops.encode_fields();
                        debug_assert_eq!(bits & 0xff, 0);
                        Encoded { first: bits | $code as u64, second }
                    } )*
                }
            }

            /// Decode the instruction whose first word is `words[0]`; `S.LI` also reads
            /// `words[1]`. Never panics: anything that is not a valid encoding is an error.
            pub fn decode(words: &[u64]) -> Result<Inst, DecodeError> {
                let Some(&w) = words.first() else {
                    return Err(DecodeError::Truncated);
                };
                let op = Opcode::from_byte(w as u8).ok_or(DecodeError::BadOpcode(w as u8))?;
                match op {
                    $( Opcode::$name => {
                        let ops = <$fmt as Format>::decode_fields(w, words.get(1).copied(), $sem)
                            .map_err(|e| DecodeError::BadOperands(op, e))?;
                        Ok(Inst::$name(ops))
                    } )*
                }
            }

            /// Dispatch to the visitor method of this instruction.
            pub fn visit<V: InstVisitor>(&self, v: &mut V) -> V::Output {
                match self { $( Inst::$name(ops) => v.$snake(ops), )* }
            }

            /// Whether the operands say `.local` (tile space).
            pub fn is_local(&self) -> bool {
                match self { $( Inst::$name(ops) => ops.local(), )* }
            }

            /// The registers the instruction reads and writes.
            pub fn effects(&self) -> Effects {
                let mut e = Effects::default();
                match self { $( Inst::$name(ops) => ops.effects($sem, &mut e), )* }
                e
            }

            /// A load's or store's data register, address operands and space.
            pub fn mem_operands(&self) -> Option<MemOperands> {
                match self { $( Inst::$name(ops) => ops.mem_operands(), )* }
            }

            /// The operands, by format.
            pub fn operands(&self) -> Operands<'_> {
                match self { $( Inst::$name(ops) => Operands::$fmt(ops), )* }
            }
        }

        impl fmt::Display for Inst {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $( Inst::$name(ops) => {
                        f.write_str($mn)?;
                        if ops.local() {
                            f.write_str(".local")?;
                        }
                        ops.fmt_operands($sem, f)
                    } )*
                }
            }
        }

        /// One method per instruction, named by the table's snake name.
        pub trait InstVisitor {
            /// What every method returns.
            type Output;
            $( $(#[doc = $doc])* fn $snake(&mut self, ops: &$fmt) -> Self::Output; )*
        }
    };
}

for_each_op!(define_isa);

impl Inst {
    /// A conditional branch (`BEQ`, `BNE`, `BLT`, ...): its operands and condition, from the
    /// table's semantics (`Sem::Branch`).
    pub fn cond_branch(&self) -> Option<(&Branch, Cond)> {
        match (self.operands(), self.opcode().sem()) {
            (Operands::Branch(b), Sem::Branch(c)) => Some((b, c)),
            _ => None,
        }
    }

    /// A scalar register stepped by an immediate (`S.ADD r, r, imm` or `S.SUB r, r, imm`):
    /// the register and what the instruction adds to it (`None` for anything else).
    pub fn scalar_step(&self) -> Option<(SReg, i64)> {
        let (Operands::SAlu(a), Sem::SAlu(op)) = (self.operands(), self.opcode().sem()) else {
            return None;
        };
        match (op, a.sb) {
            _ if a.sd != a.sa => None,
            (AluOp::Add, SOrImm::Imm(c)) => Some((a.sd, i64::from(c))),
            (AluOp::Sub, SOrImm::Imm(c)) => Some((a.sd, -i64::from(c))),
            _ => None,
        }
    }
}

/// An encoded instruction: one word, or two for `S.LI`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoded {
    /// The first word (opcode in bits 0..8).
    pub first: u64,
    /// The second word, for instructions that carry a 64-bit immediate.
    pub second: Option<u64>,
}

impl Encoded {
    /// The words in order.
    pub fn words(self) -> impl Iterator<Item = u64> {
        std::iter::once(self.first).chain(self.second)
    }
}

/// Why a word does not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// No word at all (a two-word instruction cut off by the end of the code).
    #[error("instruction is cut off by the end of the code")]
    Truncated,
    /// The low byte is not an opcode.
    #[error("0x{0:02x} is not an opcode")]
    BadOpcode(u8),
    /// The opcode is valid but an operand field is not.
    #[error("{mnemonic}: {error}", mnemonic = .0.mnemonic(), error = .1)]
    BadOperands(Opcode, FieldError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditional_branches_and_scalar_steps_come_from_the_table() {
        let alu = |sd, sa, sb| SAlu {
            sd: SReg(sd),
            sa: SReg(sa),
            sb,
        };
        assert_eq!(
            Inst::SSub(alu(4, 4, SOrImm::Imm(3))).scalar_step(),
            Some((SReg(4), -3))
        );
        assert_eq!(
            Inst::SAdd(alu(8, 8, SOrImm::Imm(i32::MIN))).scalar_step(),
            Some((SReg(8), i64::from(i32::MIN)))
        );
        for not in [
            Inst::SAdd(alu(4, 5, SOrImm::Imm(1))),
            Inst::SAdd(alu(4, 4, SOrImm::Reg(SReg(5)))),
            Inst::SMul(alu(4, 4, SOrImm::Imm(2))),
        ] {
            assert_eq!(not.scalar_step(), None, "{not}");
        }
        let b = Branch {
            sa: SReg(4),
            sb: SOrImm::Imm(0),
            target: Target(0x40),
        };
        for (inst, cond) in [
            (Inst::Bne(b), Cond::Ne),
            (Inst::Bltu(b), Cond::Ltu),
            (Inst::Bge(b), Cond::Ge),
        ] {
            assert_eq!(inst.cond_branch(), Some((&b, cond)));
        }
        assert_eq!(Inst::SAdd(alu(4, 4, SOrImm::Imm(1))).cond_branch(), None);
    }

    #[test]
    fn opcode_bytes_round_trip() {
        for &op in Opcode::ALL {
            assert_eq!(Opcode::from_byte(op as u8), Some(op));
        }
        assert_eq!(Opcode::from_byte(0), None);
        assert_eq!(Opcode::ALL.len(), 94);
    }

    #[test]
    fn every_format_has_matching_sem() {
        for &op in Opcode::ALL {
            let is_mem = op.mem().is_some();
            let mem_format = matches!(
                op.format(),
                FormatKind::LoadRR
                    | FormatKind::LoadImm
                    | FormatKind::LoadC
                    | FormatKind::StoreRR
                    | FormatKind::StoreImm
                    | FormatKind::StoreC
            );
            assert_eq!(is_mem, mem_format, "{}", op.name());
        }
    }
}
