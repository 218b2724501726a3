//! Shrinking a diverging case to a minimal one. Each round: lower the fuel to the bisected
//! first differing instruction (so everything after it stops mattering); drop items (chunks,
//! then single items; an unpaired loop head or end is dropped by `build`); simplify operands
//! (immediates toward 0, `S.LI` values toward small numbers, registers toward the lowest of
//! their kind, shifts toward 0, raw words and anything else toward `NOP`); drop initial data
//! and protections, and the table (else its holes and read-only pages); launch fewer groups
//! (one, else one fewer); turn `--strict-align` off and halve VL. A candidate is kept only if the same two engines still
//! diverge; rounds repeat until nothing changes. The number of candidate runs is bounded, so
//! shrinking always ends quickly.

use super::generate::{GenProgram, Item};
use super::shapes::TABLE_BASE;
use super::{bisect, diverges};
use crate::vm::Engine;
use lanejit_interp::isa::*;
use lanejit_interp::program::{MemPerm, MemRange, Space};

/// Most candidate runs per shrink.
const MAX_ATTEMPTS: usize = 3000;

fn still_diverges(g: &GenProgram, pair: &[Engine; 2]) -> bool {
    diverges(&g.build(), g.config(), pair).is_some()
}

/// Shrink `g`, which diverges between `pair[0]` and `pair[1]`. The result diverges between
/// the same engines (it is `g` itself if no candidate does) and never has more fuel.
pub fn shrink(g: &GenProgram, pair: &[Engine; 2]) -> GenProgram {
    let mut best = g.clone();
    let attempts = std::cell::Cell::new(0usize);
    let try_keep = |cand: GenProgram, best: &mut GenProgram| -> bool {
        if attempts.get() >= MAX_ATTEMPTS || cand == *best {
            return false;
        }
        attempts.set(attempts.get() + 1);
        if still_diverges(&cand, pair) {
            *best = cand;
            true
        } else {
            false
        }
    };
    loop {
        let mut progress = false;
        // 1. Fuel: stop right after the first differing instruction.
        let n = bisect(&best, pair[0], pair[1]);
        if n < best.fuel {
            let mut cand = best.clone();
            cand.fuel = n;
            progress |= try_keep(cand, &mut best);
        }
        // 2. Drop chunks of items, largest first.
        let mut chunk = best.items.len().max(1).next_power_of_two();
        while chunk >= 1 {
            let mut i = 0;
            while i < best.items.len() {
                let mut cand = best.clone();
                let end = (i + chunk).min(cand.items.len());
                cand.items.drain(i..end);
                if try_keep(cand, &mut best) {
                    progress = true;
                } else {
                    i += chunk;
                }
            }
            chunk /= 2;
        }
        // 3. Simplify operands.
        for i in 0..best.items.len() {
            for simpler in simplifications(&best.items[i]) {
                let mut cand = best.clone();
                cand.items[i] = simpler;
                if try_keep(cand, &mut best) {
                    progress = true;
                    break;
                }
            }
        }
        // 4. Data and protections: no initial data at all, else drop one segment at a time;
        // no tile protections; every page read-write.
        if !best.data.is_empty() {
            let mut cand = best.clone();
            cand.data.clear();
            if try_keep(cand, &mut best) {
                progress = true;
            } else {
                let mut k = 0;
                while k < best.data.len() {
                    let mut cand = best.clone();
                    cand.data.remove(k);
                    if try_keep(cand, &mut best) {
                        progress = true;
                    } else {
                        k += 1;
                    }
                }
            }
        }
        if !best.tile_protect.is_empty() {
            let mut cand = best.clone();
            cand.tile_protect.clear();
            progress |= try_keep(cand, &mut best);
        }
        if best.mem_map.iter().any(|r| r.perm != MemPerm::Rw) {
            let mut cand = best.clone();
            for r in &mut cand.mem_map {
                r.perm = MemPerm::Rw;
            }
            progress |= try_keep(cand, &mut best);
        }
        // The table: gone (with its data), else one read-write range without holes.
        let in_table = |a: u64| a >= TABLE_BASE;
        if best.mem_map.iter().any(|r| in_table(r.start)) {
            let mut cand = best.clone();
            cand.mem_map.retain(|r| !in_table(r.start));
            cand.data
                .retain(|d| d.space != Space::Memory || !in_table(d.addr));
            if try_keep(cand, &mut best) {
                progress = true;
            } else {
                let table: Vec<&MemRange> =
                    best.mem_map.iter().filter(|r| in_table(r.start)).collect();
                let end = table.iter().map(|r| r.start + r.len).max().unwrap_or(0);
                if table.len() > 1 {
                    let mut cand = best.clone();
                    cand.mem_map.retain(|r| !in_table(r.start));
                    cand.mem_map.push(MemRange {
                        start: TABLE_BASE,
                        len: end - TABLE_BASE,
                        perm: MemPerm::Rw,
                    });
                    progress |= try_keep(cand, &mut best);
                }
            }
        }
        // A tile data segment that covers only zeros is noise in the reproducer.
        if let Some(k) = best
            .data
            .iter()
            .position(|d| d.space == Space::Tile && d.bytes.iter().all(|&b| b == 0))
        {
            let mut cand = best.clone();
            cand.data.remove(k);
            progress |= try_keep(cand, &mut best);
        }
        // 5. Configuration: fewer groups, strict-align off, smaller VL.
        // One group if that still diverges, else one group fewer at a time.
        while best.groups > 1 {
            let mut fewer = vec![1];
            if best.groups > 2 {
                fewer.push(best.groups - 1);
            }
            let kept = fewer.iter().any(|&g| {
                let mut cand = best.clone();
                cand.groups = g;
                try_keep(cand, &mut best)
            });
            if !kept {
                break;
            }
            progress = true;
        }
        if best.strict_align {
            let mut cand = best.clone();
            cand.strict_align = false;
            progress |= try_keep(cand, &mut best);
        }
        while best.vl > 1 {
            let mut cand = best.clone();
            cand.vl /= 2;
            if !try_keep(cand, &mut best) {
                break;
            }
            progress = true;
        }
        if !progress || attempts.get() >= MAX_ATTEMPTS {
            break;
        }
    }
    best
}

/// Register fields of the one-word formats: bits 16..24 (A), 24..32 (B), 32..40 (C). A code
/// 0..=31 is `sN`, 32..=63 is `vN`.
const REG_FIELDS: [u32; 3] = [16, 24, 32];

/// Simpler variants of one item, simplest first.
fn simplifications(it: &Item) -> Vec<Item> {
    let mut out = Vec::new();
    let inst = match it {
        Item::Inst(inst) => *inst,
        Item::Raw(_) => {
            out.push(Item::Inst(Inst::Nop(Nullary)));
            return out;
        }
        _ => return out,
    };
    let mut push = |i: Inst| {
        if i != inst && !out.contains(&Item::Inst(i)) {
            out.push(Item::Inst(i));
        }
    };
    if let Inst::SLi(l) = inst {
        for v in [0, 1, l.imm & 0xff, l.imm & 0xffff_ffff, l.imm >> 1] {
            if v < l.imm {
                push(Inst::SLi(SLi { imm: v, ..l }));
            }
        }
        push(Inst::Nop(Nullary));
        return out;
    }
    // Anything becomes a NOP.
    push(Inst::Nop(Nullary));
    let w = inst.encode().first;
    let decodes = |w: u64| Inst::decode(&[w]).ok();
    // Immediate operands (bits 32..64 when the immediate flag is set) toward zero.
    if w & (1 << 9) != 0 {
        let imm = (w >> 32) as u32 as i32;
        for v in [0, imm / 2] {
            if let Some(i) = decodes((w & 0xffff_ffff) | ((v as u32 as u64) << 32)) {
                push(i);
            }
        }
    }
    // shamt toward zero for register-offset memory forms.
    if let Some(m) = inst.opcode().mem() {
        if matches!(m.mode, Mode::RegOff { .. }) && (w >> 40) & 0x1f != 0 {
            if let Some(i) = decodes(w & !(0x1f << 40)) {
                push(i);
            }
        }
    }
    // Registers toward the lowest of their kind (v0/s0, then v1/s1).
    for shift in REG_FIELDS {
        let code = (w >> shift) & 0xff;
        let lowest: &[u64] = match code {
            2..=31 => &[0, 1],
            33..=63 => &[32, 33],
            _ => &[],
        };
        for &c in lowest {
            if let Some(i) = decodes((w & !(0xff << shift)) | (c << shift)) {
                push(i);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simplifications_decode_to_simpler_instructions() {
        let inst = Inst::VAdd(VAlu {
            vd: VReg(9),
            va: VReg(5),
            vb: VSrc::Imm(40),
        });
        let s = simplifications(&Item::Inst(inst));
        assert_eq!(s[0], Item::Inst(Inst::Nop(Nullary)));
        for (vb, va, vd) in [
            (VSrc::Imm(0), VReg(5), VReg(9)),
            (VSrc::Imm(20), VReg(5), VReg(9)),
            (VSrc::Imm(40), VReg(0), VReg(9)),
            (VSrc::Imm(40), VReg(1), VReg(9)),
            (VSrc::Imm(40), VReg(5), VReg(0)),
        ] {
            let want = Item::Inst(Inst::VAdd(VAlu { vd, va, vb }));
            assert!(s.contains(&want), "{want:?} in {s:?}");
        }
        let li = Inst::SLi(SLi {
            sd: SReg(3),
            imm: 0x1234_5678_9abc,
        });
        let s = simplifications(&Item::Inst(li));
        assert!(s.contains(&Item::Inst(Inst::SLi(SLi {
            sd: SReg(3),
            imm: 0
        }))));
        assert_eq!(
            simplifications(&Item::Raw(0xff)),
            vec![Item::Inst(Inst::Nop(Nullary))]
        );
    }
}
