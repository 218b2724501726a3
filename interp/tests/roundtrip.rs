//! Round trips: instruction text, decoding of arbitrary words, the container, and the
//! whole-program disassembler.

mod instgen;

use lanejit_interp::asm::assemble;
use lanejit_interp::container;
use lanejit_interp::disasm::disassemble;
use lanejit_interp::isa::{EndLoop, Inst, Loop, SReg, Target};
use lanejit_interp::lines::{LineTable, LineTableError};
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
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!(u32_at(8), 3, "a program with a line table is version 3");
    assert_eq!(u32_at(12), 16);
    assert_eq!(u32_at(16), 0, "no .groups");
    assert_eq!(u64::from_le_bytes(bytes[20..28].try_into().unwrap()), 256);
    assert_eq!(
        u64::from_le_bytes(bytes[28..36].try_into().unwrap()),
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
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 3);
    assert_eq!(u32::from_le_bytes(bytes[16..20].try_into().unwrap()), 4096);
    assert_eq!(container::read(&bytes).unwrap(), p);
    // Without a line table the program is version 2, as before line tables.
    let bare = Program {
        lines: LineTable::default(),
        ..p.clone()
    };
    let bytes = container::write(&bare);
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 2);
    assert_eq!(container::read(&bytes).unwrap(), bare);
    let d = disassemble(&p);
    assert!(d.contains(".groups 4096"), "{d}");
    assert!(d.contains("S.NGROUPS s2"), "{d}");
    assert_eq!(asm(&d), p);
    // G = 0 in a version 2 container is refused.
    let mut bad = bytes.clone();
    bad[16..20].copy_from_slice(&0u32.to_le_bytes());
    assert!(container::read(&bad).is_err());
}

/// A container of version 1 or 2, written byte by byte as those versions were (before line
/// tables existed): HALT and a label, with `.groups 3` in version 2.
fn old_container(version: u32) -> Vec<u8> {
    let halt = asm("HALT").code[0];
    let mut b = container::MAGIC.to_vec();
    b.extend_from_slice(&version.to_le_bytes());
    b.extend_from_slice(&8u32.to_le_bytes()); // .vl 8
    if version == 2 {
        b.extend_from_slice(&3u32.to_le_bytes()); // .groups 3
    }
    b.extend_from_slice(&0x1000u64.to_le_bytes()); // .tilesize
    b.extend_from_slice(&1u64.to_le_bytes());
    b.extend_from_slice(&halt.to_le_bytes());
    for _ in 0..3 {
        b.extend_from_slice(&0u64.to_le_bytes()); // no memory, protections, data
    }
    b.extend_from_slice(&1u64.to_le_bytes());
    b.push(0); // a code symbol
    b.extend_from_slice(&0u64.to_le_bytes());
    b.extend_from_slice(&3u32.to_le_bytes());
    b.extend_from_slice(b"top");
    b
}

#[test]
fn old_versions_still_load_without_a_line_table() {
    for version in [1, 2] {
        let bytes = old_container(version);
        let p = container::read(&bytes).unwrap_or_else(|e| panic!("version {version}: {e}"));
        assert_eq!(p.code, asm("HALT").code);
        assert_eq!((p.vl, p.tile_size), (Some(8), 0x1000));
        assert_eq!(p.groups, (version == 2).then_some(3));
        assert_eq!(p.symbol("top").map(|s| s.value), Some(0));
        assert!(p.lines.is_empty() && p.lines.at(0).is_none());
        // Written back, it is the same old version, byte for byte.
        assert_eq!(container::write(&p), bytes, "version {version}");
        // Its listing has no line directives; assembled, it gets the listing's own lines.
        let text = disassemble(&p);
        assert!(!text.contains(".loc") && !text.contains(".file"), "{text}");
        assert_eq!(asm(&text).lines.at(0).map(|(f, _)| f), Some("t.s"));
    }
    let mut v4 = old_container(2);
    v4[8] = 4;
    assert_eq!(
        container::read(&v4),
        Err(container::ContainerError::Version(4))
    );
}

/// Every example kernel: `asm -> container -> disasm -> asm -> container` gives the same
/// bytes, and both programs name the kernel's own source lines.
#[test]
fn line_tables_survive_container_and_disassembly_byte_for_byte() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../seeds/kernels");
    let mut kernels = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "s") {
            continue;
        }
        kernels += 1;
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let src = std::fs::read_to_string(&path).unwrap();
        let p = assemble(&src, &name).unwrap();
        let bytes = container::write(&p);
        let q = container::read(&bytes).unwrap();
        assert_eq!(q, p, "{name}");
        let text = disassemble(&q);
        assert!(text.contains(&format!(".file \"{name}\"")), "{text}");
        let again = assemble(&text, "listing.s").unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(container::write(&again), bytes, "{name}:\n{text}");
        // Every code word names its line of the kernel: the line holds an instruction
        // mnemonic (or the `.align` that padded it).
        let lines: Vec<&str> = src.lines().collect();
        for pc in (0..again.code.len() as u64).map(|i| i * 8) {
            let (file, line) = again.lines.at(pc).unwrap();
            assert_eq!(file, name);
            let text = lines[line as usize - 1].to_ascii_uppercase();
            let code = text.split(';').next().unwrap();
            assert!(
                code.contains(|c: char| c.is_ascii_alphabetic()),
                "{name}:{line} for pc {pc:#x}: {text}"
            );
        }
        // The table is compact: a few bytes a run, not a record per word.
        let bare = Program {
            lines: LineTable::default(),
            ..p.clone()
        };
        let table_bytes = bytes.len() - container::write(&bare).len() - 4;
        let runs = p.lines.runs.len();
        assert!(
            table_bytes <= 16 + name.len() + 8 + 4 * runs,
            "{name}: {table_bytes} bytes for {runs} runs"
        );
    }
    assert!(kernels >= 8);
}

/// Odd tables a hand-made container may hold round-trip too: a run starting on the second
/// word of an `S.LI` (printed as two `.inst` words), files named with quotes, backslashes,
/// comment characters and control characters, lines far apart.
#[test]
fn odd_line_tables_round_trip_through_disassembly() {
    let mut p = asm("S.LI s1, 5\nNOP\nHALT\n");
    let run = |start, file, line| lanejit_interp::lines::LineRun { start, file, line };
    p.lines = LineTable {
        files: vec!["a \"b\" \\c; #d\te.s".into(), String::new()],
        runs: vec![run(0, 0, u32::MAX), run(1, 1, 1), run(3, 0, 2)],
        words: 4,
    };
    assert_eq!(p.lines.validate(4), Ok(()));
    let bytes = container::write(&p);
    assert_eq!(container::read(&bytes).as_ref(), Ok(&p));
    let text = disassemble(&p);
    assert!(
        text.contains(".file \"a \\\"b\\\" \\\\c; #d\\u{9}e.s\""),
        "{text}"
    );
    assert!(text.contains(".inst 0x"), "{text}");
    let again = asm(&text);
    assert_eq!(again, p, "{text}");
    assert_eq!(container::write(&again), bytes);
}

/// The bytes of a version 3 container of `p` up to its line table (so a test can append one
/// of its own).
fn before_line_table(p: &Program) -> Vec<u8> {
    let mut bare = Program {
        lines: LineTable::default(),
        groups: Some(p.groups.unwrap_or(1)),
        ..p.clone()
    };
    if p.groups.is_none() {
        bare.groups = Some(1);
    }
    let mut b = container::write(&bare);
    b[8..12].copy_from_slice(&3u32.to_le_bytes());
    b
}

/// Corrupt or truncated line tables are clean errors, never a panic or a wrong table.
#[test]
fn corrupt_line_tables_are_refused() {
    use container::ContainerError as E;
    let p = Program {
        groups: Some(1),
        ..asm("NOP\nNOP\nHALT\n")
    };
    let head = before_line_table(&p);
    // F files, then R runs of (words, file, zigzag delta) single bytes.
    let table = |files: &[&[u8]], runs: &[&[u8]]| {
        let mut b = head.clone();
        b.extend_from_slice(&(files.len() as u64).to_le_bytes());
        for f in files {
            b.extend_from_slice(&(f.len() as u32).to_le_bytes());
            b.extend_from_slice(f);
        }
        b.extend_from_slice(&(runs.len() as u64).to_le_bytes());
        for r in runs {
            b.extend_from_slice(r);
        }
        b
    };
    // The good one: lines 1, 2, 3, one word each.
    let good = table(&[b"k.s"], &[&[1, 0, 2], &[1, 0, 2], &[1, 0, 2]]);
    let q = container::read(&good).unwrap();
    assert_eq!(q.lines.at(16), Some(("k.s", 3)));
    assert_eq!(container::write(&q), good);
    let cases: Vec<(Vec<u8>, E)> = vec![
        (table(&[b"k.s"], &[]), E::EmptyLines),
        (
            table(&[b"k.s"], &[&[1, 0, 2], &[1, 0, 2]]),
            E::BadLines(LineTableError::Coverage {
                covered: 2,
                words: 3,
            }),
        ),
        (
            table(&[b"k.s"], &[&[1, 0, 2], &[3, 0, 2]]),
            E::BadLines(LineTableError::Coverage {
                covered: 4,
                words: 3,
            }),
        ),
        (
            table(&[b"k.s"], &[&[0, 0, 2], &[3, 0, 2]]),
            E::BadLines(LineTableError::Order(0)),
        ),
        (
            table(&[b"k.s"], &[&[2, 1, 2], &[1, 0, 2]]),
            E::BadLines(LineTableError::NoFile(0)),
        ),
        (
            table(&[b"k.s"], &[&[2, 0, 0], &[1, 0, 2]]),
            E::BadLines(LineTableError::LineZero(0)),
        ),
        (
            table(&[b"k.s"], &[&[2, 0, 2], &[1, 0, 0]]),
            E::BadLines(LineTableError::NotCoalesced(1)),
        ),
        (
            table(&[b"k.s", b"k.s"], &[&[2, 0, 2], &[1, 1, 0]]),
            E::BadLines(LineTableError::FileOrder(1)),
        ),
        (
            table(&[b"k.s", b"j.s"], &[&[3, 0, 2]]),
            E::BadLines(LineTableError::FileOrder(1)),
        ),
        (
            table(&[b"k.s", b"j.s"], &[&[2, 1, 2], &[1, 0, 0]]),
            E::BadLines(LineTableError::FileOrder(0)),
        ),
        (table(&[b"\xff"], &[&[3, 0, 2]]), E::BadFileName(0)),
        // A line below 1 and above 2^32 - 1 through the delta.
        (table(&[b"k.s"], &[&[3, 0, 1]]), E::BadVarint(0)),
        (
            table(
                &[b"k.s"],
                &[&[1, 0, 4], &[2, 0, 0xfe, 0xff, 0xff, 0xff, 0x1f]],
            ),
            E::BadVarint(1),
        ),
        // Overlong (a needless zero group), longer than 5 bytes, wider than 33 bits.
        (table(&[b"k.s"], &[&[0x83, 0x00, 0, 2]]), E::BadVarint(0)),
        (
            table(&[b"k.s"], &[&[0x83, 0x80, 0x80, 0x80, 0x80, 0x00, 0, 2]]),
            E::BadVarint(0),
        ),
        (
            table(&[b"k.s"], &[&[0x83, 0x80, 0x80, 0x80, 0x40, 0, 2]]),
            E::BadVarint(0),
        ),
        // A file index past u32.
        (
            table(&[b"k.s"], &[&[3, 0xff, 0xff, 0xff, 0xff, 0x1f, 2]]),
            E::BadVarint(0),
        ),
    ];
    for (i, (bytes, want)) in cases.iter().enumerate() {
        assert_eq!(container::read(bytes).as_ref(), Err(want), "case {i}");
    }
    // Cut anywhere inside the table (or the whole container), it is truncated, not a panic.
    for cut in head.len()..good.len() {
        assert!(
            matches!(container::read(&good[..cut]), Err(E::Truncated(_))),
            "cut at {cut}"
        );
    }
    let mut extra = good.clone();
    extra.push(0);
    assert_eq!(container::read(&extra), Err(E::Trailing(1)));
    // Counts larger than the input are refused before anything is allocated.
    let mut huge = head.clone();
    huge.extend_from_slice(&u64::MAX.to_le_bytes());
    assert_eq!(
        container::read(&huge),
        Err(E::Truncated("line table files"))
    );
    let mut huge = head.clone();
    huge.extend_from_slice(&0u64.to_le_bytes());
    huge.extend_from_slice(&(u64::MAX / 2).to_le_bytes());
    assert_eq!(container::read(&huge), Err(E::Truncated("line table runs")));
}
