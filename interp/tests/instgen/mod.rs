//! Shared test generator: a random valid instruction word for any opcode, built from the bit
//! layout documented in `isa/operands.rs` (independently of the encoder under test).

#![allow(dead_code)]

use lanejit_interp::isa::{FormatKind, Inst, Opcode};
use proptest::prelude::*;

/// Random operand fields; which ones a format uses is decided by [`word_for`].
#[derive(Clone, Debug)]
pub struct Fields {
    pub s: [u8; 3],
    pub v: [u8; 3],
    pub sv: [u8; 3],
    pub svl: u8,
    pub shamt: u8,
    pub imm24: i32,
    pub imm32: i32,
    pub imm16: i16,
    pub target: u32,
    pub lane: u8,
    pub local: bool,
    pub flag: bool,
    pub imm64: u64,
}

fn edge_i64(min: i64, max: i64) -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(min),
        Just(max),
        Just(0i64),
        Just(-1i64),
        Just(1i64),
        min..=max
    ]
}

pub fn fields() -> impl Strategy<Value = Fields> {
    (
        (
            prop::array::uniform3(0u8..32),
            prop::array::uniform3(0u8..32),
            prop::array::uniform3(0u8..64),
            0u8..=64,
            prop_oneof![Just(0u8), Just(31u8), 0u8..32],
        ),
        (
            edge_i64(-(1 << 23), (1 << 23) - 1),
            edge_i64(i32::MIN as i64, i32::MAX as i64),
            edge_i64(i16::MIN as i64, i16::MAX as i64),
            prop_oneof![Just(0u32), Just((1 << 24) - 1), 0u32..(1 << 24)],
            0u8..64,
            any::<bool>(),
            any::<bool>(),
            any::<u64>(),
        ),
    )
        .prop_map(
            |((s, v, sv, svl, shamt), (imm24, imm32, imm16, target, lane, local, flag, imm64))| {
                Fields {
                    s,
                    v,
                    sv,
                    svl,
                    shamt,
                    imm24: imm24 as i32,
                    imm32: imm32 as i32,
                    imm16: imm16 as i16,
                    target,
                    lane,
                    local,
                    flag,
                    imm64,
                }
            },
        )
}

const L: u64 = 1 << 8;
const I: u64 = 1 << 9;

fn a(x: u8) -> u64 {
    (x as u64) << 16
}
fn b(x: u8) -> u64 {
    (x as u64) << 24
}
fn c(x: u8) -> u64 {
    (x as u64) << 32
}
fn imm(x: i32) -> u64 {
    ((x as u32) as u64) << 32
}
fn vr(x: u8) -> u8 {
    32 + x
}

/// The words (one or two) of a valid instruction with opcode `op` and fields `f`.
pub fn word_for(op: Opcode, f: &Fields) -> Vec<u64> {
    let o = op as u64;
    let l = if f.local { L } else { 0 };
    let w = match op.format() {
        FormatKind::LoadRR => {
            o | l | a(vr(f.v[0])) | b(f.sv[0]) | c(f.svl) | ((f.shamt as u64) << 40)
        }
        FormatKind::StoreRR => {
            o | l | a(f.sv[1]) | b(f.sv[0]) | c(f.svl) | ((f.shamt as u64) << 40)
        }
        FormatKind::LoadImm => o | l | I | a(vr(f.v[0])) | b(f.sv[0]) | imm(f.imm24),
        FormatKind::StoreImm => o | l | I | a(f.sv[1]) | b(f.sv[0]) | imm(f.imm24),
        FormatKind::LoadC | FormatKind::StoreC => {
            let d = if op.format() == FormatKind::LoadC {
                vr(f.v[0])
            } else {
                f.sv[1]
            };
            let off = if f.flag { I | imm(f.imm24) } else { c(f.s[1]) };
            o | l | a(d) | b(f.s[0]) | off
        }
        FormatKind::SAlu => {
            let sb = if f.flag { I | imm(f.imm32) } else { c(f.s[2]) };
            o | a(f.s[0]) | b(f.s[1]) | sb
        }
        FormatKind::SLi => return vec![o | a(f.s[0]), f.imm64],
        FormatKind::SMov | FormatKind::VRedSum => {
            let src = if op.format() == FormatKind::SMov {
                f.s[1]
            } else {
                vr(f.v[1])
            };
            o | a(f.s[0]) | b(src)
        }
        FormatKind::SUnary | FormatKind::VSetMask => o | a(f.s[0]),
        FormatKind::VUnary => o | a(vr(f.v[0])),
        FormatKind::SGetLane => o | a(f.s[0]) | b(vr(f.v[1])) | ((f.lane as u64) << 32),
        FormatKind::VAlu | FormatKind::VFp => {
            let imm_ok = op.format() == FormatKind::VAlu;
            let vb = if f.flag && imm_ok {
                I | imm(f.imm32)
            } else {
                c(f.sv[2])
            };
            o | a(vr(f.v[0])) | b(vr(f.v[1])) | vb
        }
        FormatKind::VMov => {
            let src = if f.flag { I | imm(f.imm32) } else { c(f.sv[2]) };
            o | a(vr(f.v[0])) | src
        }
        FormatKind::Jump | FormatKind::EndLoop => o | ((f.target as u64) << 40),
        FormatKind::Loop => o | a(f.s[0]) | ((f.target as u64) << 40),
        FormatKind::Branch => {
            let sb = if f.flag {
                I | (((f.imm16 as u16) as u64) << 24)
            } else {
                b(f.s[1])
            };
            o | a(f.s[0]) | sb | ((f.target as u64) << 40)
        }
        FormatKind::Nullary => o,
    };
    vec![w]
}

/// A random valid instruction of any opcode.
pub fn inst() -> impl Strategy<Value = Inst> {
    (0..Opcode::ALL.len(), fields()).prop_map(|(i, f)| {
        let op = Opcode::ALL[i];
        let w = word_for(op, &f);
        Inst::decode(&w).unwrap_or_else(|e| panic!("{op:?} {w:x?}: {e}"))
    })
}
