//! Shrinking a diverging case to a minimal one: drop items (chunks, then single items; loop
//! heads and ends go together), then simplify operands (immediates toward 0, `S.LI` values
//! toward small numbers, registers toward the lowest of their role), then lower the fuel.
//! A candidate is kept only if the same two engines still diverge. The number of candidate
//! runs is bounded so shrinking always ends quickly.

use super::diverges;
use super::generate::{GenProgram, Item};
use crate::vm::Engine;
use lanejit_interp::isa::*;

/// Most candidate runs per shrink.
const MAX_ATTEMPTS: usize = 4000;

fn still_diverges(g: &GenProgram, pair: &[Engine; 2]) -> bool {
    diverges(&g.build(), g.config(), pair).is_some()
}

/// Shrink `g`, which diverges between `pair[0]` and `pair[1]`.
pub fn shrink(g: &GenProgram, pair: &[Engine; 2]) -> GenProgram {
    let mut best = g.clone();
    let attempts = std::cell::Cell::new(0usize);
    let try_keep = |cand: GenProgram, best: &mut GenProgram| -> bool {
        if attempts.get() >= MAX_ATTEMPTS {
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
        // 1. Drop chunks of items, largest first.
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
        // 2. Simplify operands.
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
        // 3. Configuration: strict-align off, smaller VL.
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

/// Simpler variants of one item, simplest first.
fn simplifications(it: &Item) -> Vec<Item> {
    let mut out = Vec::new();
    let Item::Inst(inst) = it else { return out };
    let mut push = |i: Inst| {
        if i != *inst {
            out.push(Item::Inst(i));
        }
    };
    match *inst {
        Inst::SLi(l) => {
            for v in [0, 1, l.imm & 0xff, l.imm & 0xffff_ffff, l.imm >> 1] {
                if v < l.imm {
                    push(Inst::SLi(SLi { imm: v, ..l }));
                }
            }
        }
        other => {
            // Immediate operands toward zero, by re-decoding with the immediate cleared.
            let enc = other.encode();
            if enc.second.is_none() && enc.first & (1 << 9) != 0 {
                let zeroed = enc.first & 0xffff_ffff;
                if let Ok(i) = Inst::decode(&[zeroed]) {
                    push(i);
                }
            }
            // shamt toward zero for register-offset memory forms.
            match other {
                Inst::VLb(o)
                | Inst::VLh(o)
                | Inst::VLw(o)
                | Inst::VLd(o)
                | Inst::VLbu(o)
                | Inst::VLhu(o)
                | Inst::VLwu(o)
                    if o.shamt != 0 =>
                {
                    let w = other.encode().first & !(0x1f << 40);
                    if let Ok(i) = Inst::decode(&[w]) {
                        let _ = o;
                        push(i);
                    }
                }
                _ => {}
            }
            // Anything becomes a NOP.
            push(Inst::Nop(Nullary));
        }
    }
    out
}
