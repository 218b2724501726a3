//! Whole-program disassembler: a [`Program`] back to canonical assembly source.
//!
//! [`disassemble`] prints, in this order: `.vl` and `.groups` (when set), `.tilesize`, one `.mem` per mapped
//! run, one `.tileprotect` per protected run, then each space's data (`.data ADDR` /
//! `.tiledata ADDR`, labels at their addresses, bytes as `.byte` lists or `.fill` for runs of
//! one value), then `.text` with code labels and one instruction per line in the canonical
//! syntax of `Display for Inst`. Branch targets print as the first code label (by name) at the
//! target, else as a numeric pc. A word that does not decode, a two-word instruction with a
//! label on its second word, and a `LOOP`/`ENDLOOP` whose encoded targets differ from what the
//! assembler's pairing would give print as `.inst 0x...`, so that
//! `assemble(disassemble(p)) == p` for every program the assembler produces (and for every
//! container [`crate::container::read`] accepts).
//!
//! A program with a line table ([`crate::lines`]) prints it as directives in the text:
//! `.file "NAME"` where the file changes and `.loc LINE` where a run of the table starts, so the
//! re-assembled program names the same source lines (not the listing's own). A run that starts
//! on the second word of an `S.LI` prints that instruction as two `.inst` words, like a label
//! there. File names print between quotes with `\\` for `\`, `\"` for `"` and `\u{HEX}` for
//! control characters.
//!
//! A code label that is not a multiple of 8 or lies past the end of the code has no assembly
//! spelling; [`crate::container::read`] refuses such containers, and a hand-built [`Program`]
//! holding one loses the label here.

use crate::isa::Inst;
use crate::program::{MemPerm, Program, Space, SymKind, TilePerm};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Canonical assembly of the whole program.
pub fn disassemble(p: &Program) -> String {
    let mut out = String::new();
    if let Some(vl) = p.vl {
        let _ = writeln!(out, ".vl {vl}");
    }
    if let Some(g) = p.groups {
        let _ = writeln!(out, ".groups {g}");
    }
    let _ = writeln!(out, ".tilesize {}", p.tile_size);
    for r in &p.mem_map {
        let perm = match r.perm {
            MemPerm::R => "r",
            MemPerm::Rw => "rw",
        };
        let _ = writeln!(out, ".mem 0x{:x}, 0x{:x}, {perm}", r.start, r.len);
    }
    for r in &p.tile_protect {
        let perm = match r.perm {
            TilePerm::None => "none",
            TilePerm::R => "r",
            TilePerm::Rw => "rw",
        };
        let _ = writeln!(out, ".tileprotect 0x{:x}, 0x{:x}, {perm}", r.start, r.len);
    }
    data_space(&mut out, p, Space::Memory, SymKind::Data, ".data");
    data_space(&mut out, p, Space::Tile, SymKind::Tile, ".tiledata");
    text(&mut out, p);
    out
}

fn data_space(out: &mut String, p: &Program, space: Space, kind: SymKind, dir: &str) {
    let mut labels: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
    for s in p.symbols.iter().filter(|s| s.kind == kind) {
        labels.entry(s.value).or_default().push(&s.name);
    }
    // Points where something starts: labels and segment starts.
    let segs: Vec<_> = p.data.iter().filter(|d| d.space == space).collect();
    let mut loc: Option<u64> = None;
    let mut seg_i = 0;
    let mut label_iter = labels.iter().peekable();
    loop {
        let next_seg = segs.get(seg_i).map(|s| s.addr);
        let next_label = label_iter.peek().map(|(a, _)| **a);
        let at = match (next_seg, next_label) {
            (None, None) => break,
            (Some(s), Some(l)) => s.min(l),
            (Some(s), None) => s,
            (None, Some(l)) => l,
        };
        if loc != Some(at) {
            let _ = writeln!(out, "{dir} 0x{at:x}");
            loc = Some(at);
        }
        if next_label == Some(at) {
            let (_, names) = label_iter.next().expect("peeked");
            for n in names {
                let _ = writeln!(out, "{n}:");
            }
            continue;
        }
        // A segment starts here: print its bytes, stopping at labels inside it.
        let seg = segs[seg_i];
        seg_i += 1;
        let end = seg.addr.saturating_add(seg.bytes.len() as u64);
        let mut pos = seg.addr;
        while pos < end {
            let stop = label_iter
                .peek()
                .map(|(a, _)| **a)
                .filter(|&a| a > pos && a < end)
                .unwrap_or(end);
            bytes(
                out,
                &seg.bytes[(pos - seg.addr) as usize..(stop - seg.addr) as usize],
            );
            pos = stop;
            if pos < end {
                let (_, names) = label_iter.next().expect("peeked");
                for n in names {
                    let _ = writeln!(out, "{n}:");
                }
            }
        }
        loc = Some(end);
    }
}

fn bytes(out: &mut String, b: &[u8]) {
    let mut i = 0;
    while i < b.len() {
        let run = b[i..].iter().take_while(|&&x| x == b[i]).count();
        if run >= 16 {
            let _ = writeln!(out, ".fill {run}, 1, 0x{:x}", b[i]);
            i += run;
            continue;
        }
        // Up to 16 bytes, stopping before a long run.
        let mut j = i;
        while j < b.len() && j - i < 16 {
            let r = b[j..].iter().take_while(|&&x| x == b[j]).count();
            if r >= 16 {
                break;
            }
            j += 1;
        }
        let list: Vec<String> = b[i..j].iter().map(|x| format!("0x{x:02x}")).collect();
        let _ = writeln!(out, ".byte {}", list.join(", "));
        i = j;
    }
}

/// A file name as `.file` reads it between its quotes.
fn quoted(name: &str) -> String {
    let mut s = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            c if c.is_control() => {
                let _ = write!(s, "\\u{{{:x}}}", c as u32);
            }
            c => s.push(c),
        }
    }
    s
}

/// One decoded item of the code.
enum Item {
    Inst(Inst),
    Raw(u64),
}

fn text(out: &mut String, p: &Program) {
    let _ = writeln!(out, ".text");
    let code = &p.code;
    let mut labels: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
    for s in p.symbols.iter().filter(|s| s.kind == SymKind::Code) {
        labels.entry(s.value).or_default().push(&s.name);
    }
    // Where a two-word instruction may not span: labels and line-table runs.
    let mut label_pcs: BTreeSet<u64> = labels.keys().copied().collect();
    label_pcs.extend(p.lines.runs.iter().map(|r| r.start * 8));
    // Linear decode.
    let mut items: Vec<(usize, Item)> = Vec::new();
    let mut i = 0;
    while i < code.len() {
        match Inst::decode(&code[i..]) {
            Ok(inst)
                if inst.opcode().words() == 1 || !label_pcs.contains(&((i as u64 + 1) * 8)) =>
            {
                let n = inst.opcode().words();
                items.push((i, Item::Inst(inst)));
                i += n;
            }
            _ => {
                items.push((i, Item::Raw(code[i])));
                i += 1;
            }
        }
    }
    // Keep the LOOP/ENDLOOP pairs the assembler would reproduce; the rest become `.inst`.
    let mut keep = vec![true; items.len()];
    let mut k = 0;
    while k < items.len() {
        let (idx, ref it) = items[k];
        match it {
            Item::Inst(Inst::Loop(l)) => {
                let want_end = (l.exit.0 as usize).wrapping_sub(1);
                let found = items[k + 1..]
                    .iter()
                    .position(|(j, _)| *j >= want_end)
                    .map(|off| k + 1 + off)
                    .filter(|&e| {
                        items[e].0 == want_end
                            && matches!(items[e].1, Item::Inst(Inst::Endloop(b)) if b.body.0 as usize == idx + 1)
                    });
                match found {
                    Some(e) => {
                        for m in k + 1..e {
                            if matches!(items[m].1, Item::Inst(Inst::Loop(_) | Inst::Endloop(_))) {
                                keep[m] = false;
                            }
                        }
                        k = e + 1;
                        continue;
                    }
                    None => keep[k] = false,
                }
            }
            Item::Inst(Inst::Endloop(_)) => keep[k] = false,
            _ => {}
        }
        k += 1;
    }
    let code_name = |target_pc: u64| -> String {
        match labels.get(&target_pc) {
            Some(names) => names[0].to_string(),
            None => format!("0x{target_pc:x}"),
        }
    };
    let mut file = None;
    for (k, (idx, it)) in items.iter().enumerate() {
        if let Some(names) = labels.get(&(*idx as u64 * 8)) {
            for n in names {
                let _ = writeln!(out, "{n}:");
            }
        }
        if let Some(run) = p.lines.run_at(*idx as u64) {
            if file != Some(run.file) {
                let name = p
                    .lines
                    .files
                    .get(run.file as usize)
                    .map_or("", String::as_str);
                let _ = writeln!(out, "    .file \"{}\"", quoted(name));
                file = Some(run.file);
            }
            let _ = writeln!(out, "    .loc {}", run.line);
        }
        let line = match it {
            Item::Raw(w) => format!(".inst 0x{w:x}"),
            Item::Inst(inst) if !keep[k] => format!(".inst 0x{:x}", inst.encode().first),
            Item::Inst(inst) => {
                let s = inst.to_string();
                let target = match inst {
                    Inst::J(j) => Some(j.target.pc()),
                    Inst::Beq(b)
                    | Inst::Bne(b)
                    | Inst::Blt(b)
                    | Inst::Bge(b)
                    | Inst::Bltu(b)
                    | Inst::Bgeu(b) => Some(b.target.pc()),
                    _ => None,
                };
                match target {
                    Some(pc) => {
                        let head = s.rsplit_once(' ').map_or(s.as_str(), |(h, _)| h);
                        format!("{head} {}", code_name(pc))
                    }
                    None => s,
                }
            }
        };
        let _ = writeln!(out, "    {line}");
    }
    if let Some(names) = labels.get(&(code.len() as u64 * 8)) {
        for n in names {
            let _ = writeln!(out, "{n}:");
        }
    }
}
