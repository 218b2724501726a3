//! Proof that the encoding is unambiguous: the map from valid words to instructions is a
//! bijection.
//!
//! 1. Every opcode has its own byte (so two instructions of different opcodes never share a
//!    word), and the opcode byte of `encode(i)` is `i`'s opcode.
//! 2. `decode(encode(i)) == i` for every instruction: encode is injective.
//! 3. For every word `w` that decodes, `encode(decode(w)) == w`: decode is injective on valid
//!    words and every valid word is the encoding of exactly one instruction.

mod instgen;

use lanejit_interp::isa::{DecodeError, Inst, Opcode};
use proptest::prelude::*;
use std::collections::HashSet;

#[test]
fn opcode_bytes_are_distinct_and_zero_is_illegal() {
    let bytes: HashSet<u8> = Opcode::ALL.iter().map(|&o| o as u8).collect();
    assert_eq!(bytes.len(), Opcode::ALL.len());
    assert!(!bytes.contains(&0));
    assert_eq!(Inst::decode(&[0]), Err(DecodeError::BadOpcode(0)));
    assert_eq!(Inst::decode(&[]), Err(DecodeError::Truncated));
    for b in 0..=255u8 {
        assert_eq!(Opcode::from_byte(b).is_some(), bytes.contains(&b), "{b:#x}");
    }
}

#[test]
fn every_opcode_has_a_valid_encoding() {
    let f = instgen::Fields {
        s: [1, 2, 3],
        v: [4, 5, 6],
        sv: [7, 40, 9],
        svl: 64,
        shamt: 5,
        imm24: -5,
        imm32: 77,
        imm16: -2,
        target: 9,
        lane: 3,
        local: true,
        flag: false,
        imm64: 0xdead_beef,
    };
    for &op in Opcode::ALL {
        let w = instgen::word_for(op, &f);
        let inst = Inst::decode(&w).unwrap_or_else(|e| panic!("{op:?}: {e}"));
        assert_eq!(inst.opcode(), op);
        let enc: Vec<u64> = inst.encode().words().collect();
        assert_eq!(enc, w, "{op:?}");
        assert_eq!(enc[0] & 0xff, op as u64);
        assert_eq!(enc.len(), op.words());
    }
}

#[test]
fn two_word_instruction_needs_its_second_word() {
    let li = Inst::decode(&[0x90 | (1 << 16), 5]).unwrap();
    assert_eq!(li.to_string(), "S.LI s1, 0x5");
    assert!(matches!(
        Inst::decode(&[0x90 | (1 << 16)]),
        Err(DecodeError::BadOperands(Opcode::SLi, _))
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// decode . encode = id, and the opcode byte names the instruction.
    #[test]
    fn decode_encode_is_identity(inst in instgen::inst()) {
        let words: Vec<u64> = inst.encode().words().collect();
        prop_assert_eq!(words[0] as u8, inst.opcode() as u8);
        prop_assert_eq!(Inst::decode(&words), Ok(inst));
    }

    /// decode ok => encode . decode = id (uniform random words).
    #[test]
    fn encode_decode_is_identity_on_valid_words(w in any::<u64>(), w2 in any::<u64>()) {
        if let Ok(inst) = Inst::decode(&[w, w2]) {
            let e = inst.encode();
            prop_assert_eq!(e.first, w);
            prop_assert_eq!(e.second.is_some(), inst.opcode().words() == 2);
            if let Some(s) = e.second { prop_assert_eq!(s, w2); }
        }
    }

    /// Single bit flips of valid words (where random words rarely decode): a flip gives another
    /// valid word of a different instruction or an error, never a second spelling of the same
    /// instruction.
    #[test]
    fn near_valid_words(inst in instgen::inst(), bit in 8u32..64) {
        let words: Vec<u64> = inst.encode().words().collect();
        let mut flipped = words.clone();
        flipped[0] ^= 1 << bit;
        if let Ok(other) = Inst::decode(&flipped) {
            prop_assert_ne!(other, inst);
            let back: Vec<u64> = other.encode().words().collect();
            prop_assert_eq!(back, flipped);
        }
    }
}
