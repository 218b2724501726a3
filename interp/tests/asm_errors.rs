//! One test per `AsmErrorKind` variant (kind, line, column), rendered messages with carets,
//! files with many bad lines, and garbage that must never panic.

use lanejit_interp::asm::{AsmErrorKind as K, assemble};
use proptest::prelude::*;

/// The first error of `src`: (kind, line, column).
fn e1(src: &str) -> (K, usize, usize) {
    match assemble(src, "t.s") {
        Ok(p) => panic!("`{src}` assembled: {p:?}"),
        Err(e) => {
            let x = &e.errors[0];
            (x.kind.clone(), x.line, x.col)
        }
    }
}

fn rendered(src: &str) -> String {
    assemble(src, "x.s").unwrap_err().to_string()
}

const MEM: &str = ".mem 0, 0x1000, rw\n";

#[test]
fn invalid_char() {
    assert_eq!(e1("S.ADD s1, s2, @"), (K::InvalidChar('@'), 1, 15));
    assert_eq!(e1("中文"), (K::InvalidChar('中'), 1, 1));
    assert_eq!(e1("aä: NOP"), (K::InvalidChar('ä'), 1, 2));
}

#[test]
fn bad_number() {
    assert_eq!(e1("S.LI s1, 12z"), (K::BadNumber("12z".into()), 1, 10));
    assert_eq!(e1("S.LI s1, 0x"), (K::BadNumber("0x".into()), 1, 10));
}

#[test]
fn number_too_large() {
    let big = "18446744073709551616";
    assert_eq!(
        e1(&format!("S.LI s1, {big}")),
        (K::NumberTooLarge(big.into()), 1, 10)
    );
    let huge = "9".repeat(5000);
    assert!(matches!(
        e1(&format!("S.LI s1, {huge}")).0,
        K::NumberTooLarge(_)
    ));
}

#[test]
fn expected() {
    assert_eq!(
        e1("S.ADD s1 s2, 3"),
        (
            K::Expected {
                expected: "`,` or the end of the statement (write `S.ADD sd, sa, sb|imm`)".into(),
                found: "`s2`".into()
            },
            1,
            10
        )
    );
    assert_eq!(
        e1("V.LW [s1 + v2, ->v1"),
        (
            K::Expected {
                expected: "`]` (write `V.LW [sL + (sR << shamt)], ->vD` or `V.LW [sB, lc0<<2, offset], ->vD`)".into(),
                found: "`,`".into()
            },
            1,
            14
        )
    );
    assert_eq!(
        e1("V.LW [s1 + (v2 << 3 , ->v1"),
        (
            K::Expected {
                expected: "`)` (write `V.LW [sL + (sR << shamt)], ->vD` or `V.LW [sB, lc0<<2, offset], ->vD`)".into(),
                found: "`,`".into()
            },
            1,
            21
        )
    );
    assert_eq!(
        e1("S.ADD s1, s1,"),
        (
            K::Expected {
                expected: "a number or a name (write `S.ADD sd, sa, sb|imm`)".into(),
                found: "end of line".into()
            },
            1,
            14
        )
    );
    assert_eq!(
        e1(".mem 0, 4096, x"),
        (
            K::Expected {
                expected: "a permission, r or rw".into(),
                found: "`x`".into()
            },
            1,
            15
        )
    );
    assert_eq!(
        e1(", NOP"),
        (
            K::Expected {
                expected: "a label, an instruction or a directive".into(),
                found: "`,`".into()
            },
            1,
            1
        )
    );
}

#[test]
fn unknown_mnemonic() {
    assert_eq!(e1("  FOO s1"), (K::UnknownMnemonic("FOO".into()), 1, 3));
    assert_eq!(
        e1("V.LDU [s1 + v2], ->v1"),
        (K::UnknownMnemonic("V.LDU".into()), 1, 1)
    );
}

#[test]
fn unknown_directive() {
    assert_eq!(e1(".bogus 1"), (K::UnknownDirective(".bogus".into()), 1, 1));
}

#[test]
fn local_not_memory() {
    assert_eq!(
        e1("S.ADD.local s1, s1, 1"),
        (K::LocalNotMemory("S.ADD.local".into()), 1, 1)
    );
}

#[test]
fn operands() {
    assert_eq!(
        e1("S.ADD s1, s2"),
        (
            K::Operands {
                mnemonic: "S.ADD".into(),
                usage: "S.ADD sd, sa, sb|imm".into()
            },
            1,
            1
        )
    );
    assert_eq!(
        e1(".mem 0, 4096"),
        (
            K::Operands {
                mnemonic: ".mem".into(),
                usage: ".mem ADDR, SIZE, r|rw".into()
            },
            1,
            1
        )
    );
    assert_eq!(
        rendered("HALT s1"),
        "x.s:1:1: error: wrong operands for HALT: expected `HALT`\nHALT s1\n^\n"
    );
}

#[test]
fn wrong_register() {
    assert_eq!(
        e1("S.ADD s1, v2, 1"),
        (
            K::WrongRegister {
                expected: "a scalar register (s0..s31)",
                found: "v2".into()
            },
            1,
            11
        )
    );
    assert_eq!(
        e1("V.LW [s1 + v2], ->s3"),
        (
            K::WrongRegister {
                expected: "a vector register (v0..v31)",
                found: "->s3".into()
            },
            1,
            17
        )
    );
    assert_eq!(
        rendered("S.ADD s1, v2, 1"),
        "x.s:1:11: error: expected a scalar register (s0..s31), found `v2`\nS.ADD s1, v2, 1\n          ^\n"
    );
    // Tabs in the prefix are kept so the caret lines up.
    assert_eq!(
        rendered("\tS.ADD s1, v2, 1"),
        "x.s:1:12: error: expected a scalar register (s0..s31), found `v2`\n\tS.ADD s1, v2, 1\n\t          ^\n"
    );
}

#[test]
fn lc0_not_allowed() {
    assert_eq!(e1("V.ADD v1, v2, lc0"), (K::Lc0NotAllowed, 1, 15));
    assert_eq!(e1("V.SW lc0, [s1 + (v2 << 2)]"), (K::Lc0NotAllowed, 1, 6));
    assert_eq!(e1("V.LW [lc0 + v2], ->v1"), (K::Lc0NotAllowed, 1, 7));
    assert_eq!(e1("LOOP lc0\nENDLOOP"), (K::Lc0NotAllowed, 1, 6));
}

#[test]
fn duplicate_symbol() {
    assert_eq!(
        e1("a:\na: NOP"),
        (
            K::DuplicateSymbol {
                name: "a".into(),
                first_line: 1
            },
            2,
            1
        )
    );
    assert_eq!(
        e1(".equ a, 1\nNOP\na: NOP"),
        (
            K::DuplicateSymbol {
                name: "a".into(),
                first_line: 1
            },
            3,
            1
        )
    );
    // Labels are case-sensitive.
    assert!(assemble("a: NOP\nA: NOP", "t.s").is_ok());
}

#[test]
fn undefined_symbol() {
    assert_eq!(
        e1("J nowhere"),
        (K::UndefinedSymbol("nowhere".into()), 1, 3)
    );
    assert_eq!(
        e1("S.LI s1, x + 4"),
        (K::UndefinedSymbol("x".into()), 1, 10)
    );
    assert_eq!(
        e1("NOP\n.equ E, 1 + nothing"),
        (K::UndefinedSymbol("nothing".into()), 2, 13)
    );
}

#[test]
fn register_name() {
    assert_eq!(e1("s1: NOP"), (K::RegisterName("s1".into()), 1, 1));
    assert_eq!(e1("  LC0: NOP"), (K::RegisterName("LC0".into()), 1, 3));
    assert_eq!(e1(".equ v3, 1"), (K::RegisterName("v3".into()), 1, 6));
    assert!(assemble("s32: NOP\nv01: NOP", "t.s").is_ok());
}

#[test]
fn circular_equ() {
    let cycle = |names: &[&str]| -> lanejit_interp::asm::EquCycle {
        names
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .into()
    };
    assert_eq!(
        e1(".equ A, B\n.equ B, A + 1\nS.LI s1, A"),
        (
            K::CircularEqu {
                name: "A".into(),
                cycle: cycle(&["A", "B"])
            },
            1,
            9
        )
    );
    let e = assemble(".equ A, B\n.equ B, A + 1\nS.LI s1, A", "t.s").unwrap_err();
    let at: Vec<(usize, usize)> = e.errors.iter().map(|x| (x.line, x.col)).collect();
    assert_eq!(at, vec![(1, 9), (2, 9), (3, 10)]);
    // Each member names the cycle from itself.
    assert_eq!(
        e.errors[1].kind.to_string(),
        "`.equ B` refers to itself: B -> A -> B"
    );
    // Unused definitions are checked too.
    assert_eq!(
        e1(".equ X, X"),
        (
            K::CircularEqu {
                name: "X".into(),
                cycle: cycle(&["X"])
            },
            1,
            9
        )
    );
    assert_eq!(
        e1(".equ X, X").0.to_string(),
        "`.equ X` refers to itself: X -> X"
    );
    // A definition that only uses a cycle is not on it.
    let e = assemble(".equ R, 1 + A\n.equ A, B\n.equ B, C\n.equ C, A", "t.s").unwrap_err();
    assert_eq!(
        e.errors[0].kind.to_string(),
        "`.equ R` depends on a cycle: A -> B -> C -> A"
    );
    assert_eq!(e.errors.len(), 4);
    // A cycle met during layout is reported as a cycle, not as an unknown value.
    let (k, line, col) = e1(".equ A, B\n.equ B, A\n.vl A");
    assert_eq!(
        (k.to_string(), line, col),
        ("`.equ A` refers to itself: A -> B -> A".into(), 1, 9)
    );
    let e = assemble(".equ A, B\n.equ B, A\n.vl A", "t.s").unwrap_err();
    assert_eq!((e.errors[2].line, e.errors[2].col), (3, 5));
    assert!(matches!(e.errors[2].kind, K::CircularEqu { .. }));
    // A long cycle is shown shortened.
    let mut src = String::new();
    for i in 0..100 {
        src += &format!(".equ C{i}, C{}\n", (i + 1) % 100);
    }
    let (k, _, _) = e1(&src);
    assert_eq!(
        k.to_string(),
        "`.equ C0` refers to itself: C0 -> C1 -> C2 -> C3 -> C4 -> C5 -> C6 -> C7 -> ... (100 names) -> C0"
    );
}

/// Acyclic chains resolve at any depth, in either order, and a chain whose names become
/// known during layout can shape the program.
#[test]
fn deep_equ_chains_resolve_in_any_order() {
    for n in [3000usize, 100_000] {
        // Written back to front: each definition uses the next one.
        let mut src = String::new();
        for i in 0..n {
            src += &format!(".equ e{i}, e{} + 1\n", i + 1);
        }
        src += &format!(".equ e{n}, 5\nS.LI s1, e0\n.vl e{}\n", n - 3);
        let p = assemble(&src, "t.s").unwrap_or_else(|e| panic!("{n}: {}", e.errors[0].kind));
        assert_eq!(p.code[1], n as u64 + 5);
        assert_eq!(p.vl, Some(8));
        // Front to back, the root last: layout knows nothing until the last line.
        let mut src = String::from(".equ f1, f0 + 1\n");
        for i in 2..=n {
            src += &format!(".equ f{i}, f{} + 1\n", i - 1);
        }
        src += &format!(".equ f0, 3\n.vl f{}\nS.LI s1, f{n}\n", 29);
        let p = assemble(&src, "t.s").unwrap_or_else(|e| panic!("{n}: {}", e.errors[0].kind));
        assert_eq!(p.code[1], n as u64 + 3);
        assert_eq!(p.vl, Some(32));
    }
    // Used before its chain is complete: not known there.
    assert_eq!(
        e1(".equ a, b\n.vl a\n.equ b, 4"),
        (K::NotConstant("a".into()), 2, 5)
    );
}

#[test]
fn not_constant() {
    assert_eq!(
        e1(".data later\nlater:"),
        (K::NotConstant("later".into()), 1, 7)
    );
    assert_eq!(e1(".vl N\n.equ N, 4"), (K::NotConstant("N".into()), 1, 5));
    // Earlier definitions are fine.
    let p = assemble(
        ".equ N, 4\n.vl N\n.mem 0, 4096, rw\n.data 8\nx:\n.data x + 8\n.byte 1",
        "t.s",
    )
    .unwrap();
    assert_eq!(p.vl, Some(4));
    assert_eq!(p.data[0].addr, 16);
}

#[test]
fn overflow() {
    let mut src = String::from(".equ A0, 0xffffffffffffffff\n");
    for i in 1..50 {
        src += &format!(".equ A{i}, A{} + A{}\n", i - 1, i - 1);
    }
    src += "S.LI s1, A49\n";
    // 2^64 * 2^37 is past the evaluator's range: the first failing definition is A37.
    let (k, line, col) = e1(&src);
    assert_eq!((k, line, col), (K::Overflow, 38, 17));
}

#[test]
fn imm_range() {
    assert_eq!(
        e1(&format!("{MEM}.data 0\n.byte 300")),
        (
            K::ImmRange {
                value: 300,
                what: ".byte",
                min: -128,
                max: 255
            },
            3,
            7
        )
    );
    assert_eq!(
        e1("S.ADD s1, s1, 0xffffffff"),
        (
            K::ImmRange {
                value: 0xffffffff,
                what: "simm32",
                min: -(1 << 31),
                max: (1 << 31) - 1
            },
            1,
            15
        )
    );
    assert_eq!(
        e1("BEQ s1, 32768, 0"),
        (
            K::ImmRange {
                value: 32768,
                what: "simm16",
                min: -32768,
                max: 32767
            },
            1,
            9
        )
    );
    assert_eq!(
        e1("V.LBI [s1 + 8388608], ->v1"),
        (
            K::ImmRange {
                value: 8388608,
                what: "simm24",
                min: -8388608,
                max: 8388607
            },
            1,
            13
        )
    );
    assert!(matches!(
        e1("S.GETLANE s1, v1, 64").0,
        K::ImmRange { value: 64, .. }
    ));
    assert!(matches!(
        e1("S.LI s1, -9223372036854775809").0,
        K::ImmRange { .. }
    ));
    assert!(assemble(&format!("{MEM}.data 0\n.byte -1, 255, -128\n.half 65535, -32768\n.word 0xffffffff\n.dword 0xffffffffffffffff, -1"), "t.s").is_ok());
}

#[test]
fn shift_range() {
    assert_eq!(
        e1("V.LW [s1 + (v2 << 32)], ->v1"),
        (
            K::ShiftRange {
                mnemonic: "V.LW".into(),
                value: 32,
                min: 0,
                max: 31
            },
            1,
            19
        )
    );
    assert_eq!(
        e1("V.SD v1, [s1 + (v2 << 35)]").0,
        K::ShiftRange {
            mnemonic: "V.SD".into(),
            value: 35,
            min: 3,
            max: 34
        }
    );
}

#[test]
fn scaled_imm_shift() {
    assert_eq!(
        e1("V.LWI [s1 + 5], ->v1"),
        (
            K::ScaledImmShift {
                mnemonic: "V.LWI".into(),
                scale: 4,
                k: 2
            },
            1,
            13
        )
    );
    assert_eq!(
        rendered("V.LWI [s1 + (5 << 3)], ->v1"),
        "x.s:1:13: error: V.LWI scales its immediate by 4: write (imm << 2)\nV.LWI [s1 + (5 << 3)], ->v1\n            ^\n"
    );
}

#[test]
fn unscaled_imm_shift() {
    assert_eq!(
        e1("V.LWI.U [s1 + (4 << 2)], ->v1"),
        (
            K::UnscaledImmShift {
                mnemonic: "V.LWI.U".into()
            },
            1,
            15
        )
    );
    assert_eq!(
        e1("V.LBI [s1 + (4 << 1)], ->v1").0,
        K::UnscaledImmShift {
            mnemonic: "V.LBI".into()
        }
    );
}

#[test]
fn store_shift_missing() {
    assert_eq!(
        e1("V.SW v1, [s1 + v2]"),
        (
            K::StoreShiftMissing {
                mnemonic: "V.SW".into(),
                k: 2,
                reg: "v2".into(),
                umnemonic: "V.SW.U".into()
            },
            1,
            16
        )
    );
}

#[test]
fn shift_sum_not_allowed() {
    assert_eq!(
        e1("V.SB v1, [s1 + (v2 << (0 + 1))]"),
        (K::ShiftSumNotAllowed, 1, 24)
    );
    assert_eq!(
        e1("V.SW.U v1, [s1 + (v2 << (2 + 1))]").0,
        K::ShiftSumNotAllowed
    );
}

#[test]
fn shift_sum_base() {
    assert_eq!(
        e1("V.SW v1, [s1 + (v2 << (3 + 1))]"),
        (
            K::ShiftSumBase {
                mnemonic: "V.SW".into(),
                k: 2,
                found: 3
            },
            1,
            24
        )
    );
}

#[test]
fn negative_reg_offset() {
    assert_eq!(e1("V.LW [s1 - v2], ->v1"), (K::NegativeRegOffset, 1, 12));
}

#[test]
fn reg_form_imm() {
    assert_eq!(
        e1("V.LW [s1 + 5], ->v1"),
        (
            K::RegFormImm {
                mnemonic: "V.LW".into(),
                suggest: "V.LWI [sL + (imm << 2)], ->vD` or `V.LWI.U [sL + imm], ->vD".into()
            },
            1,
            12
        )
    );
    assert_eq!(
        e1("V.SB v1, [s1 + (5 << 1)]").0,
        K::RegFormImm {
            mnemonic: "V.SB".into(),
            suggest: "V.SBI vS, [sL + imm]".into()
        }
    );
}

#[test]
fn imm_form_reg() {
    assert_eq!(
        e1("V.LWI [s1 + v2], ->v1"),
        (
            K::ImmFormReg {
                mnemonic: "V.LWI".into(),
                usage: "V.LWI [sL + (imm << 2)], ->vD".into(),
                rmnemonic: "V.LW".into()
            },
            1,
            13
        )
    );
    assert_eq!(
        e1("V.SHI.U.local v1, [s1 + v2]").0,
        K::ImmFormReg {
            mnemonic: "V.SHI.U.local".into(),
            usage: "V.SHI.U.local vS, [sL + imm]".into(),
            rmnemonic: "V.SH.U.local".into()
        }
    );
}

#[test]
fn u_form_imm() {
    assert_eq!(
        e1("V.SW.U v1, [s1 + 4]"),
        (
            K::UFormImm {
                mnemonic: "V.SW.U".into(),
                usage: "V.SWI.U vS, [sL + imm]".into()
            },
            1,
            18
        )
    );
}

#[test]
fn no_contig_form() {
    assert_eq!(
        e1("V.LWI [s1, lc0<<2, 0], ->v1"),
        (
            K::NoContigForm {
                mnemonic: "V.LWI".into(),
                usage: "V.LWI [sL + (imm << 2)], ->vD".into()
            },
            1,
            7
        )
    );
    assert_eq!(
        e1("V.SD.U v1, [s1, lc0<<3, 0]").0,
        K::NoContigForm {
            mnemonic: "V.SD.U".into(),
            usage: "V.SD vS, [sB, lc0<<3, offset]".into()
        }
    );
}

#[test]
fn contig_shift() {
    assert_eq!(
        e1("V.LW [s1, lc0<<1, 0], ->v1"),
        (
            K::ContigShift {
                mnemonic: "V.LW".into(),
                expected: "lc0<<2".into()
            },
            1,
            11
        )
    );
    assert_eq!(
        e1("V.LH [s1, lc0, 0], ->v1").0,
        K::ContigShift {
            mnemonic: "V.LH".into(),
            expected: "lc0<<1".into()
        }
    );
}

#[test]
fn missing_dest() {
    assert_eq!(
        e1("V.LB [s1, lc0, 0]"),
        (
            K::MissingDest {
                mnemonic: "V.LB".into(),
                usage: "V.LB [sB, lc0, offset], ->vD".into()
            },
            1,
            1
        )
    );
}

#[test]
fn store_arrow() {
    assert_eq!(
        e1("V.SW [s1, lc0<<2, 0], ->v1"),
        (
            K::StoreArrow {
                usage: "V.SW vS, [sB, lc0<<2, offset]".into()
            },
            1,
            1
        )
    );
}

#[test]
fn missing_store_data() {
    assert_eq!(
        e1("V.SDI.local [s1 + (1 << 3)]"),
        (
            K::MissingStoreData {
                mnemonic: "V.SDI.local".into(),
                usage: "V.SDI.local vS, [sL + (imm << 3)]".into()
            },
            1,
            1
        )
    );
    assert_eq!(
        rendered("  V.SDI.local [s1 + (1 << 3)]"),
        "x.s:1:3: error: V.SDI.local needs the register holding the data to store: write `V.SDI.local vS, [sL + (imm << 3)]`\n  V.SDI.local [s1 + (1 << 3)]\n  ^\n"
    );
}

#[test]
fn bad_target() {
    assert_eq!(e1("J 0x29"), (K::BadTarget(0x29), 1, 3));
    assert_eq!(e1("J -8").0, K::BadTarget(-8));
    assert_eq!(e1("J 0x8000000").0, K::BadTarget(0x8000000));
    assert!(assemble("J 0x7fffff8", "t.s").is_ok());
}

#[test]
fn not_code_label() {
    assert_eq!(
        e1(&format!("{MEM}.data 0\nd: .byte 1\n.text\nJ d")),
        (K::NotCodeLabel("d".into()), 5, 3)
    );
}

#[test]
fn nested_loop() {
    assert_eq!(
        e1("LOOP s1\nLOOP s2\nENDLOOP"),
        (K::NestedLoop { outer_line: 1 }, 2, 1)
    );
}

#[test]
fn unmatched_endloop() {
    assert_eq!(e1("NOP\nENDLOOP"), (K::UnmatchedEndloop, 2, 1));
}

#[test]
fn unmatched_loop() {
    assert_eq!(e1("NOP\n  LOOP s1\nHALT"), (K::UnmatchedLoop, 2, 3));
}

#[test]
fn instruction_in_data() {
    assert_eq!(e1(".data 0\nNOP"), (K::InstructionInData, 2, 1));
    assert_eq!(e1(".tiledata 0\n.inst 0xee"), (K::InstructionInData, 2, 1));
}

#[test]
fn data_in_text() {
    assert_eq!(e1(".byte 1"), (K::DataInText(".byte".into()), 1, 1));
    assert_eq!(
        e1("NOP\n  .float 1.0"),
        (K::DataInText(".float".into()), 2, 3)
    );
}

#[test]
fn duplicate_directive() {
    assert_eq!(
        e1(".vl 4\n.vl 8"),
        (
            K::DuplicateDirective {
                directive: ".vl",
                first_line: 1
            },
            2,
            1
        )
    );
    assert_eq!(
        e1(".tilesize 128\n.tilesize 128"),
        (
            K::DuplicateDirective {
                directive: ".tilesize",
                first_line: 1
            },
            2,
            1
        )
    );
}

#[test]
fn bad_vl() {
    assert_eq!(e1(".vl 3"), (K::BadVl(3), 1, 5));
    assert_eq!(e1(".vl 128").0, K::BadVl(128));
    assert_eq!(e1(".vl 0").0, K::BadVl(0));
    assert_eq!(assemble(".vl 64", "t.s").unwrap().vl, Some(64));
}

#[test]
fn mem_size_zero() {
    assert_eq!(e1(".mem 0x1000, 0, rw"), (K::MemSizeZero, 1, 14));
}

#[test]
fn mem_beyond_limit() {
    assert_eq!(
        e1(".mem 0xffffff0000, 0x20000, rw"),
        (
            K::MemBeyondLimit {
                end: 0x100_0001_0000
            },
            1,
            6
        )
    );
    // Up to exactly 2^40 is fine; the run-time --mem-limit is the loader's business.
    let p = assemble(".mem 0xffffff0000, 0x10000, r", "t.s").unwrap();
    assert_eq!(p.mapped_end(), 1 << 40);
}

#[test]
fn data_unmapped() {
    assert_eq!(
        e1(".data 0x5000\n.byte 1"),
        (
            K::DataUnmapped {
                addr: 0x5000,
                end: 0x5001
            },
            2,
            1
        )
    );
    assert_eq!(
        e1(&format!("{MEM}.data 4094\n.word 1")).0,
        K::DataUnmapped {
            addr: 4094,
            end: 4098
        }
    );
    // Data may precede its .mem.
    assert!(assemble(".data 0x5000\n.byte 1\n.mem 0x5000, 1, r", "t.s").is_ok());
}

#[test]
fn data_outside_tile() {
    assert_eq!(
        e1(".tilesize 64\n.tiledata 60\n.word 1, 2"),
        (
            K::DataOutsideTile {
                addr: 60,
                end: 68,
                size: 64
            },
            3,
            1
        )
    );
}

#[test]
fn bad_tile_size() {
    assert_eq!(e1(".tilesize 100"), (K::BadTileSize(100), 1, 11));
    assert_eq!(e1(".tilesize 0").0, K::BadTileSize(0));
    assert_eq!(e1(".tilesize 0x1000040").0, K::BadTileSize(0x1000040));
}

#[test]
fn tile_size_late() {
    assert_eq!(e1(".tiledata 0\n.tilesize 128"), (K::TileSizeLate, 2, 1));
    assert_eq!(
        e1(".tileprotect 0, 64, r\n.tilesize 128"),
        (K::TileSizeLate, 2, 1)
    );
}

#[test]
fn bad_tile_protect() {
    assert_eq!(
        e1(".tileprotect 32, 64, r"),
        (
            K::BadTileProtect {
                addr: 32,
                len: 64,
                size: 65536
            },
            1,
            14
        )
    );
    assert_eq!(
        e1(".tilesize 128\n.tileprotect 64, 128, r").0,
        K::BadTileProtect {
            addr: 64,
            len: 128,
            size: 128
        }
    );
    assert_eq!(
        e1(".tileprotect 0, 0, r").0,
        K::BadTileProtect {
            addr: 0,
            len: 0,
            size: 65536
        }
    );
}

#[test]
fn bad_align() {
    assert_eq!(e1(".data 0\n.align 3"), (K::BadAlign(3), 2, 8));
    assert_eq!(e1(".data 0\n.align 0").0, K::BadAlign(0));
}

#[test]
fn bad_fill_size() {
    assert_eq!(e1(".data 0\n.fill 1, 3, 0"), (K::BadFillSize(3), 2, 10));
}

#[test]
fn bad_float() {
    assert_eq!(
        e1(".data 0\n.float 1.5, abc"),
        (K::BadFloat("abc".into()), 2, 13)
    );
    assert_eq!(e1(".data 0\n.double 1.5,"), (K::BadFloat("".into()), 2, 13));
}

#[test]
fn data_too_large() {
    assert_eq!(
        e1(".data 0\n.fill 0x20000000, 1, 0"),
        (K::DataTooLarge, 2, 1)
    );
    assert_eq!(
        e1(".data 0\n.fill 0xffffffffffffffff, 8, 0").0,
        K::DataTooLarge
    );
}

#[test]
fn address_overflow() {
    assert_eq!(
        e1(".data 0xffffffffffffffff\n.byte 1, 2"),
        (K::AddressOverflow, 2, 1)
    );
    assert_eq!(
        e1(".data 0xffffffffffffffff\n.space 2").0,
        K::AddressOverflow
    );
}

#[test]
fn every_bad_line_is_reported() {
    let src = "\
NOP
S.ADD s1, v2, 1
FOO
good: HALT
V.LWI [s1 + 5], ->v1
.byte 1
J nowhere
V.SW v1, [s1 + v2]\r
S.LI s1, 1 ; fine
.vl 3
";
    let e = assemble(src, "many.s").unwrap_err();
    let at: Vec<(usize, usize)> = e.errors.iter().map(|x| (x.line, x.col)).collect();
    assert_eq!(
        at,
        vec![(2, 11), (3, 1), (5, 13), (6, 1), (7, 3), (8, 16), (10, 5)]
    );
    let text = e.to_string();
    assert_eq!(text.matches(": error: ").count(), 7);
    assert!(text.starts_with("many.s:2:11: error: expected a scalar register"));
    // CRLF: the \r is not part of the shown line.
    assert!(
        text.contains("\nV.SW v1, [s1 + v2]\n               ^\n"),
        "{text}"
    );
}

#[test]
fn empty_and_blank_sources() {
    for src in [
        "",
        "\n\n",
        "   ; only a comment\n# another\n// and another",
        "\r\n",
    ] {
        let p = assemble(src, "t.s").unwrap();
        assert!(p.code.is_empty());
        assert!(p.symbols.is_empty());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn garbage_never_panics(s in "\\PC{0,200}") {
        let _ = assemble(&s, "g.s");
    }

    #[test]
    fn token_soup_never_panics(toks in prop::collection::vec(prop::sample::select(vec![
        "V.LW", "V.SD", "V.LBI", "V.SWI.U", "V.LHU.local", "S.LI", "S.ADD", "LOOP", "ENDLOOP", "J",
        "BEQ", ".data", ".mem", ".tiledata", ".byte", ".fill", ".equ", ".align", ".space", ".float",
        ".tilesize", ".tileprotect", ".vl", ".inst", ".text", "s1", "v2", "lc0", "x", "x:", "[", "]",
        "(", ")", "<<", "+", "-", "->", ",", "0", "3", "-8388608", "0xffffffffffffffff", "99999999999999999999999",
        "\n", "\n", ";", "中", "r", "rw", "none", "inf", "nan", "1.5",
    ]), 0..60)) {
        let src = toks.join(" ");
        let _ = assemble(&src, "g.s");
        let src = toks.concat();
        let _ = assemble(&src, "g.s");
    }
}

#[test]
fn template_placeholders_show_the_canonical_forms() {
    let (k, line, col) = e1("V.LB [base, lc0, offset]");
    assert_eq!((line, col), (1, 7));
    assert_eq!(
        k.to_string(),
        "expected a base register (sN or vN) (write `V.LB [sL + (sR << shamt)], ->vD` or `V.LB [sB, lc0, offset], ->vD`), found `base`"
    );
    let (k, _, _) = e1("V.SDI.local SrcD, [SrcL + (simm24 << 3)]");
    assert!(
        k.to_string()
            .contains("`V.SDI.local vS, [sL + (imm << 3)]`"),
        "{k}"
    );
}

#[test]
fn long_equ_chains_are_not_circular() {
    let mut src = String::from(".equ A0, 1\n");
    for i in 1..3000 {
        src += &format!(".equ A{i}, A{} + 1\n", i - 1);
    }
    src += "S.LI s1, A2999\n";
    let p = assemble(&src, "t.s").unwrap();
    assert_eq!(p.code[1], 3000);
}
