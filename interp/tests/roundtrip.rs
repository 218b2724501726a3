//! Round trips: instruction text, decoding of arbitrary words, the container, and the
//! whole-program disassembler.

mod instgen;

use lanejit_interp::asm::assemble;
use lanejit_interp::container;
use lanejit_interp::disasm::disassemble;
use lanejit_interp::isa::{EndLoop, Inst, Loop, SReg, Target};
use lanejit_interp::program::{Program, Space, SymKind, Symbol};
use proptest::prelude::*;

fn asm(src: &str) -> Program {
    assemble(src, "t.s").unwrap_or_else(|e| panic!("{e}\n--- source ---\n{src}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Inst -> encode -> decode -> Display -> assemble gives the same words.
    #[test]
    fn inst_text_round_trip(inst in instgen::inst()) {
        let words: Vec<u64> = inst.encode().words().collect();
        prop_assert_eq!(Inst::decode(&words), Ok(inst));
        let src = match inst {
            // LOOP and ENDLOOP only exist in pairs; check them inside one.
            Inst::Loop(_) => format!("{inst}\nENDLOOP\n"),
            Inst::Endloop(_) => format!("LOOP s1\n{inst}\n"),
            _ => format!("{inst}\n"),
        };
        let p = asm(&src);
        match inst {
            Inst::Loop(l) => {
                let want = [
                    Inst::Loop(Loop { sa: l.sa, exit: Target(2) }).encode().first,
                    Inst::Endloop(EndLoop { body: Target(1) }).encode().first,
                ];
                prop_assert_eq!(p.code, want.to_vec());
            }
            Inst::Endloop(_) => {
                let want = [
                    Inst::Loop(Loop { sa: SReg(1), exit: Target(2) }).encode().first,
                    Inst::Endloop(EndLoop { body: Target(1) }).encode().first,
                ];
                prop_assert_eq!(p.code, want.to_vec());
            }
            _ => prop_assert_eq!(p.code, words),
        }
    }

    /// Any word decodes or errors without panicking; what decodes re-encodes to itself.
    #[test]
    fn random_words_decode(w in any::<u64>(), w2 in any::<u64>()) {
        if let Ok(inst) = Inst::decode(&[w, w2]) {
            let e = inst.encode();
            prop_assert_eq!(e.first, w);
            if let Some(s) = e.second {
                prop_assert_eq!(s, w2);
            }
        }
        let _ = Inst::decode(&[w]);
    }

    /// Random programs: code, labels, data, tile data, protections survive
    /// disassemble -> assemble and the container.
    #[test]
    fn program_round_trip(
        insts in prop::collection::vec(instgen::inst(), 0..24),
        data in prop::collection::vec((0u64..0x3000, prop::collection::vec(any::<u8>(), 1..40)), 0..6),
        tdata in prop::collection::vec((0u64..0xf00, prop::collection::vec(any::<u8>(), 1..40)), 0..4),
        prot in prop::collection::vec((0u64..60, 1u64..4, 0u8..3), 0..4),
        vl in prop::option::of(0u32..7),
        raw in prop::collection::vec(any::<u64>(), 0..4),
    ) {
        let mut src = String::new();
        if let Some(v) = vl {
            src += &format!(".vl {}\n", 1u32 << v);
        }
        src += ".tilesize 0x1000\n.mem 0x10000, 0x4000, rw\n.mem 0x12000, 0x1000, r\n";
        for (i, (a, len, p)) in prot.iter().enumerate() {
            let perm = ["none", "r", "rw"][*p as usize];
            let a = (*a).min(60 - len);
            src += &format!(".tileprotect {}, {}, {perm}\nx{i}: \n", a * 64, len * 64);
        }
        for (i, (a, bytes)) in data.iter().enumerate() {
            let list: Vec<String> = bytes.iter().map(|b| b.to_string()).collect();
            src += &format!(".data {}\nd{i}: .byte {}\nde{i}:\n", 0x10000 + a, list.join(", "));
        }
        for (i, (a, bytes)) in tdata.iter().enumerate() {
            let list: Vec<String> = bytes.iter().map(|b| format!("{:#x}", b)).collect();
            src += &format!(".tiledata {a}\nt{i}: .byte {}\n", list.join(","));
        }
        src += ".text\n";
        let mut open = false;
        for (i, inst) in insts.iter().enumerate() {
            src += &format!("c{i}: ");
            match inst {
                Inst::Loop(_) if open => src += "NOP\n",
                Inst::Loop(_) => { open = true; src += &format!("{inst}\n"); }
                Inst::Endloop(_) if !open => src += "HALT\n",
                Inst::Endloop(_) => { open = false; src += "ENDLOOP\n"; }
                _ => src += &format!("{inst}\n"),
            }
            if let Some(r) = raw.get(i) {
                src += &format!(".inst {r:#x}\n");
            }
        }
        if open {
            src += "ENDLOOP\n";
        }
        src += "end:\n";
        let p = asm(&src);
        let d = disassemble(&p);
        let q = asm(&d);
        prop_assert_eq!(&p, &q, "disassembly:\n{}", d);
        let bytes = container::write(&p);
        prop_assert!(container::is_container(&bytes));
        prop_assert_eq!(container::read(&bytes), Ok(p));
    }

    /// Arbitrary bytes, and valid containers cut or flipped, never panic the reader.
    #[test]
    fn container_garbage(bytes in prop::collection::vec(any::<u8>(), 0..200), cut in 0usize..400, flip in 0usize..400, bit in 0u8..8) {
        let _ = container::read(&bytes);
        let mut with_magic = container::MAGIC.to_vec();
        with_magic.extend_from_slice(&bytes);
        let _ = container::read(&with_magic);
        let good = container::write(&sample());
        let _ = container::read(&good[..cut.min(good.len())]);
        let mut bad = good.clone();
        let i = flip % bad.len();
        bad[i] ^= 1 << bit;
        if let Ok(p) = container::read(&bad) {
            // Whatever reads must write back to the same bytes, and disassemble to source
            // that assembles to the same program.
            prop_assert_eq!(container::write(&p), bad.clone());
            let text = disassemble(&p);
            let back = assemble(&text, "d.s");
            prop_assert_eq!(back.as_ref().ok(), Some(&p), "{}", text);
        }
    }
}

fn sample() -> Program {
    asm("
.vl 16
.tilesize 256
.mem 0x1000, 0x1000, rw
.tileprotect 64, 64, r
.data 0x1000
buf: .dword 1, buf + 8
.tiledata 0
tl: .word 0xdeadbeef
.text
start: S.LI s1, buf
    LOOP s1
    V.LD [s1, lc0<<3, 0], ->v1
    ENDLOOP
    BNE s1, 0, start
    HALT
")
}

#[test]
fn container_round_trip_sample() {
    let p = sample();
    let bytes = container::write(&p);
    assert_eq!(&bytes[..8], b"LANEJIT\0");
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 1);
    assert_eq!(u32::from_le_bytes(bytes[12..16].try_into().unwrap()), 16);
    assert_eq!(u64::from_le_bytes(bytes[16..24].try_into().unwrap()), 256);
    assert_eq!(
        u64::from_le_bytes(bytes[24..32].try_into().unwrap()),
        p.code.len() as u64
    );
    let q = container::read(&bytes).unwrap();
    assert_eq!(q, p);
    assert_eq!(p.symbol("buf").unwrap().value, 0x1000);
    assert_eq!(p.symbol("tl").unwrap().kind, SymKind::Tile);
    assert_eq!(p.symbol("start").unwrap().kind, SymKind::Code);
    assert_eq!(p.data.len(), 2);
    assert_eq!(p.data[1].space, Space::Tile);
    assert!(container::read(&bytes[..bytes.len() - 1]).is_err());
    let mut extra = bytes.clone();
    extra.push(0);
    assert_eq!(
        container::read(&extra),
        Err(container::ContainerError::Trailing(1))
    );
    assert_eq!(
        container::read(b"ELF"),
        Err(container::ContainerError::BadMagic)
    );
    assert!(!container::is_container(b"LANEJIT"));
}

#[test]
fn bogus_length_does_not_allocate() {
    let mut b = container::MAGIC.to_vec();
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&65536u64.to_le_bytes());
    b.extend_from_slice(&u64::MAX.to_le_bytes());
    assert_eq!(
        container::read(&b),
        Err(container::ContainerError::Truncated("code"))
    );
}

/// Hand-made code whose LOOP/ENDLOOP targets differ from the assembler's pairing, and words
/// that do not decode, disassemble to `.inst` and reassemble identically.
#[test]
fn odd_code_round_trips_through_inst() {
    let lp = |exit| {
        Inst::Loop(Loop {
            sa: SReg(2),
            exit: Target(exit),
        })
        .encode()
        .first
    };
    let el = |body| Inst::Endloop(EndLoop { body: Target(body) }).encode().first;
    let halt = asm("HALT").code[0];
    let cases: Vec<Vec<u64>> = vec![
        vec![lp(5), el(1), halt],
        vec![lp(2), el(0), halt],
        vec![el(1), halt],
        vec![lp(2), halt],
        vec![lp(3), lp(3), el(2), halt],
        vec![0, u64::MAX, halt],
        vec![asm("S.LI s1, 5").code[0]],
        vec![lp(2), el(1), lp(4), el(3)],
    ];
    for code in cases {
        let p = Program {
            code: code.clone(),
            ..Program::default()
        };
        let d = disassemble(&p);
        let q = asm(&d);
        assert_eq!(q.code, code, "{d}");
    }
    // The well-paired case keeps its mnemonics.
    let p = Program {
        code: vec![lp(2), el(1)],
        ..Program::default()
    };
    let d = disassemble(&p);
    assert!(d.contains("LOOP s2") && d.contains("ENDLOOP"), "{d}");
}

#[test]
fn branch_targets_use_labels() {
    let p = asm("top: NOP\nmid: BEQ s1, -3, top\nJ 0x8\nJ 0x100\n");
    let d = disassemble(&p);
    assert!(d.contains("BEQ s1, -3, top"), "{d}");
    assert!(d.contains("J mid"), "{d}");
    assert!(d.contains("J 0x100"), "{d}");
    assert_eq!(asm(&d), p);
}

/// A code symbol that is not a multiple of 8, or lies past the end of the code, has no
/// assembly spelling: the reader refuses it (a label at the very end of the code is fine).
#[test]
fn code_symbols_off_instruction_boundaries_are_refused() {
    let p = asm("top: S.LI s1, 5\nHALT\n");
    let with_symbol = |value: u64| {
        let mut q = p.clone();
        q.symbols = vec![Symbol {
            name: "x".into(),
            kind: SymKind::Code,
            value,
        }];
        container::write(&q)
    };
    for value in [4, 1, 0x20, 0x1000, u64::MAX] {
        assert_eq!(
            container::read(&with_symbol(value)),
            Err(container::ContainerError::BadSymbol(
                0,
                "code symbol is not a multiple of 8 within the code"
            )),
            "{value:#x}"
        );
    }
    // Every boundary, the second word of S.LI and the end of the code included, reads and
    // round-trips through the disassembler.
    for value in [0, 8, 0x10, 0x18] {
        let q = container::read(&with_symbol(value)).unwrap();
        let text = disassemble(&q);
        assert!(text.contains("x:"), "{text}");
        assert_eq!(asm(&text), q, "{value:#x}: {text}");
    }
}

#[test]
fn groups_round_trip_through_container_and_disassembly() {
    let p = asm(".groups 4096\n.text\nS.GID s1\nS.NGROUPS s2\nHALT\n");
    assert_eq!(p.groups, Some(4096));
    let bytes = container::write(&p);
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 2);
    assert_eq!(container::read(&bytes).unwrap(), p);
    let d = disassemble(&p);
    assert!(d.contains(".groups 4096"), "{d}");
    assert!(d.contains("S.NGROUPS s2"), "{d}");
    assert_eq!(asm(&d), p);
    // G = 0 in a version 2 container is refused.
    let mut bad = bytes.clone();
    bad[16..20].copy_from_slice(&0u32.to_le_bytes());
    assert!(container::read(&bad).is_err());
}
