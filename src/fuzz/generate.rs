//! Random valid programs over the whole ISA, for differential fuzzing.
//!
//! A [`GenProgram`] is a symbolic program: a list of [`Item`]s whose branches name labels and
//! whose loops are `LoopStart`/`LoopEnd` pairs, plus a memory map, tile configuration, data and
//! run configuration. [`GenProgram::build`] lays it out into a [`Program`]; the shrinker edits
//! the item list and rebuilds. Generation reads its choices from an
//! [`arbitrary::Unstructured`], so the same generator serves `lanejit fuzz` (bytes from a
//! seeded ChaCha stream) and the cargo-fuzz `diff` target (bytes from libFuzzer).
//!
//! Programs always terminate: branches only go forward (they may enter or leave a loop body),
//! loops are not nested and their trip counts are bounded, so the only backward edges are
//! `ENDLOOP`s, each of which raises LC0BASE by VL until it reaches the latched trip count; and
//! every case carries a fuel budget (`max_instructions`) besides.
//! Faults happen on purpose: the map has read-only pages and unmapped holes, base registers
//! point near page edges, holes, the top of the address space and the tile's end, and the
//! tile has `none`/`r` granules. A third of the cases also map a table of 1 to 8 MiB (with its
//! own holes and read-only pages) for the lane-shape snippets of [`super::shapes`], which the
//! body draws among the other steps (and mostly, in a fifth of the cases).

use super::shapes::{S_TABLE, Shapes, TABLE_BASE, Table};
use arbitrary::{Result, Unstructured};
use lanejit_interp::isa::*;
use lanejit_interp::machine::Config;
use lanejit_interp::program::{
    DataSeg, MemPerm, MemRange, PAGE_SIZE, Program, Space, SymKind, Symbol, TILE_GRANULE, TilePerm,
    TileRange,
};

/// First guest address of the fuzzed data region.
pub const DATA_BASE: u64 = 0x10000;
/// Pages in the data region (some mapped `r`, some left unmapped).
pub const DATA_PAGES: u64 = 6;

/// One element of a symbolic program.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A non-control instruction (or a control one whose targets are fixed up by `build`).
    Inst(Inst),
    /// A branch or jump to label `.1` (its `target` is filled in by `build`).
    Branch(Inst, usize),
    /// A label definition.
    Label(usize),
    /// `LOOP sN`.
    LoopStart(SReg),
    /// `ENDLOOP` closing the most recent `LoopStart`.
    LoopEnd,
    /// A raw word (e.g. an illegal instruction).
    Raw(u64),
}

/// A generated test case.
#[derive(Clone, Debug, PartialEq)]
pub struct GenProgram {
    /// VL to run with.
    pub vl: u32,
    /// `--strict-align`.
    pub strict_align: bool,
    /// `--max-instructions`.
    pub fuel: u64,
    /// Mapped memory.
    pub mem_map: Vec<MemRange>,
    /// Tile size.
    pub tile_size: u64,
    /// Tile protections.
    pub tile_protect: Vec<TileRange>,
    /// Initial memory and tile contents.
    pub data: Vec<DataSeg>,
    /// The code.
    pub items: Vec<Item>,
    /// Groups of the launch (`.groups`; 1: a single group).
    pub groups: u32,
}

impl GenProgram {
    /// The run configuration of this case.
    pub fn config(&self) -> Config {
        Config {
            vl: self.vl,
            strict_align: self.strict_align,
            max_instructions: Some(self.fuel),
            ..Config::default()
        }
    }

    /// Lay the items out into a program. Labels become code symbols `L<n>`; unmatched loop
    /// items (after shrinking) are dropped.
    pub fn build(&self) -> Program {
        // Pair loops; drop unpaired ends/starts so the program stays well formed.
        let mut keep = vec![true; self.items.len()];
        let mut open: Option<usize> = None;
        for (i, it) in self.items.iter().enumerate() {
            match it {
                Item::LoopStart(_) => {
                    if let Some(o) = open {
                        keep[o] = false;
                    }
                    open = Some(i);
                }
                Item::LoopEnd => match open.take() {
                    Some(_) => {}
                    None => keep[i] = false,
                },
                _ => {}
            }
        }
        if let Some(o) = open {
            keep[o] = false;
        }
        // Word index of each item.
        let mut at = Vec::with_capacity(self.items.len());
        let mut pc = 0u32;
        for (i, it) in self.items.iter().enumerate() {
            at.push(pc);
            if keep[i] {
                pc += match it {
                    Item::Label(_) => 0,
                    Item::Inst(inst) | Item::Branch(inst, _) => inst.opcode().words() as u32,
                    _ => 1,
                };
            }
        }
        let end = pc;
        let label_at = |l: usize| -> u32 {
            self.items
                .iter()
                .position(|it| *it == Item::Label(l))
                .map_or(end, |i| at[i])
        };
        let mut code = Vec::with_capacity(end as usize);
        let mut symbols = Vec::new();
        let mut loop_start = 0u32;
        for (i, it) in self.items.iter().enumerate() {
            if !keep[i] {
                continue;
            }
            match it {
                Item::Label(l) => symbols.push(Symbol {
                    name: format!("L{l}"),
                    kind: SymKind::Code,
                    value: at[i] as u64 * 8,
                }),
                Item::Inst(inst) => code.extend(inst.encode().words()),
                Item::Branch(inst, l) => {
                    let t = Target(label_at(*l));
                    let inst = match *inst {
                        Inst::J(_) => Inst::J(Jump { target: t }),
                        Inst::Beq(b) => Inst::Beq(Branch { target: t, ..b }),
                        Inst::Bne(b) => Inst::Bne(Branch { target: t, ..b }),
                        Inst::Blt(b) => Inst::Blt(Branch { target: t, ..b }),
                        Inst::Bge(b) => Inst::Bge(Branch { target: t, ..b }),
                        Inst::Bltu(b) => Inst::Bltu(Branch { target: t, ..b }),
                        Inst::Bgeu(b) => Inst::Bgeu(Branch { target: t, ..b }),
                        other => other,
                    };
                    code.extend(inst.encode().words());
                }
                Item::LoopStart(sa) => {
                    loop_start = at[i];
                    // exit target patched when the end is seen
                    code.push(
                        Inst::Loop(Loop {
                            sa: *sa,
                            exit: Target(0),
                        })
                        .encode()
                        .first,
                    );
                }
                Item::LoopEnd => {
                    let body = Target(loop_start + 1);
                    code.push(Inst::Endloop(EndLoop { body }).encode().first);
                    let exit = Target(at[i] + 1);
                    let w = &mut code[loop_start as usize];
                    if let Ok(Inst::Loop(l)) = Inst::decode(&[*w]) {
                        *w = Inst::Loop(Loop { exit, ..l }).encode().first;
                    }
                }
                Item::Raw(w) => code.push(*w),
            }
        }
        symbols.sort_by(|a, b| (a.kind, a.value, &a.name).cmp(&(b.kind, b.value, &b.name)));
        symbols.dedup_by(|a, b| a.name == b.name);
        Program {
            code,
            vl: Some(self.vl),
            groups: (self.groups > 1).then_some(self.groups),
            tile_size: self.tile_size,
            mem_map: self.mem_map.clone(),
            tile_protect: self.tile_protect.clone(),
            data: self.data.clone(),
            symbols,
            lines: Default::default(),
        }
    }
}

/// Registers with roles: bases are set up by the prologue and rarely overwritten.
/// `s1..s4` hold memory addresses, `s5..s6` tile addresses, `s7..s8` wild values (near 2^64,
/// region ends, random); `v1..v3` hold lane indices (offsets), `v4..v6` lane addresses.
const SMEM: [u8; 4] = [1, 2, 3, 4];
const STILE: [u8; 2] = [5, 6];
const SWILD: [u8; 2] = [7, 8];
const SBASE: [u8; 8] = [1, 2, 3, 4, 5, 6, 7, 8];
const SWORK: [u8; 8] = [0, 9, 10, 11, 12, 13, 14, 15];
const VIDX: [u8; 3] = [1, 2, 3];
const VADDR: [u8; 3] = [4, 5, 6];
const VBASE: [u8; 6] = [1, 2, 3, 4, 5, 6];
const VWORK: [u8; 10] = [7, 8, 9, 10, 11, 12, 13, 14, 15, 16];

fn pick<T: Copy>(u: &mut Unstructured, xs: &[T]) -> Result<T> {
    Ok(*u.choose(xs)?)
}

fn sreg(u: &mut Unstructured, base_bias: bool) -> Result<SReg> {
    let pool: &[u8] = if base_bias && u.ratio(3, 4)? {
        &SBASE
    } else {
        &SWORK
    };
    Ok(SReg(pick(u, pool)?))
}

fn vreg(u: &mut Unstructured, base_bias: bool) -> Result<VReg> {
    let pool: &[u8] = if base_bias && u.ratio(3, 4)? {
        &VBASE
    } else {
        &VWORK
    };
    Ok(VReg(pick(u, pool)?))
}

/// A scalar base for the given space: mostly well-placed, sometimes wild.
fn scalar_base(u: &mut Unstructured, local: bool) -> Result<SReg> {
    Ok(SReg(match u.int_in_range(0..=39)? {
        0..=37 if local => pick(u, &STILE)?,
        0..=37 => pick(u, &SMEM)?,
        38 => pick(u, &SWILD)?,
        _ => pick(u, &SBASE)?,
    }))
}

/// SrcL: mostly a scalar base of the right space, sometimes a vector of lane addresses.
fn base_reg(u: &mut Unstructured, local: bool) -> Result<Reg> {
    Ok(match u.int_in_range(0..=9)? {
        0 | 1 if !local => Reg::V(pick(u, &VADDR)?),
        0 if local => Reg::V(pick(u, &VIDX)?),
        _ => Reg::S(scalar_base(u, local)?.0),
    })
}

/// An offset register: lc0, a work scalar, lane indices, rarely lane addresses.
fn off_reg(u: &mut Unstructured) -> Result<Reg> {
    Ok(match u.int_in_range(0..=9)? {
        0..=2 => Reg::Lc0,
        3 | 4 => Reg::S(pick(u, &SWORK)?),
        5..=8 => Reg::V(pick(u, &VIDX)?),
        _ => Reg::V(pick(u, &VADDR)?),
    })
}

fn data_reg(u: &mut Unstructured) -> Result<Reg> {
    Ok(if u.ratio(1, 5)? {
        Reg::S(sreg(u, false)?.0)
    } else {
        Reg::V(vreg(u, false)?.0)
    })
}

fn small_simm24(u: &mut Unstructured) -> Result<i32> {
    Ok(match u.int_in_range(0..=39)? {
        0 => SIMM24_MIN as i32,
        1 => SIMM24_MAX as i32,
        2 | 3 => u.int_in_range(-4096..=4096)?,
        _ => u.int_in_range(-64..=64)?,
    })
}

fn shamt(u: &mut Unstructured) -> Result<u8> {
    Ok(match u.int_in_range(0..=31)? {
        0 => 31,
        1 => u.int_in_range(0..=31)?,
        n => (n % 4) as u8,
    })
}

fn coff(u: &mut Unstructured) -> Result<SOrImm> {
    Ok(if u.ratio(1, 2)? {
        SOrImm::Imm(small_simm24(u)?)
    } else {
        SOrImm::Reg(sreg(u, false)?)
    })
}

/// The memory instruction `op` with these operands (`data` is the load's destination, which
/// must be a vector, or the store's data), or `None` when the address does not fit `op`'s
/// format.
pub(crate) fn mem_form(op: Opcode, data: Reg, addr: MemAddr, local: bool) -> Option<Inst> {
    let dst = match data {
        Reg::V(n) => VReg(n),
        _ => VReg(0),
    };
    let fields = match (op.format(), addr) {
        (FormatKind::LoadRR, MemAddr::RegOff { base, off, shamt }) => LoadRR {
            dst,
            base,
            off,
            shamt,
            local,
        }
        .encode_fields(),
        (FormatKind::LoadImm, MemAddr::Imm { base, imm }) => LoadImm {
            dst,
            base,
            imm,
            local,
        }
        .encode_fields(),
        (FormatKind::LoadC, MemAddr::Contig { base, off }) => LoadC {
            dst,
            base,
            off,
            local,
        }
        .encode_fields(),
        (FormatKind::StoreRR, MemAddr::RegOff { base, off, shamt }) => StoreRR {
            src: data,
            base,
            off,
            shamt,
            local,
        }
        .encode_fields(),
        (FormatKind::StoreImm, MemAddr::Imm { base, imm }) => StoreImm {
            src: data,
            base,
            imm,
            local,
        }
        .encode_fields(),
        (FormatKind::StoreC, MemAddr::Contig { base, off }) => StoreC {
            src: data,
            base,
            off,
            local,
        }
        .encode_fields(),
        _ => return None,
    };
    Inst::decode(&[fields.0 | op as u64]).ok()
}

/// A random load or store of any mnemonic and addressing form.
fn mem_inst(u: &mut Unstructured) -> Result<Inst> {
    let mem_ops: Vec<Opcode> = Opcode::ALL
        .iter()
        .copied()
        .filter(|o| o.mem().is_some())
        .collect();
    let op = pick(u, &mem_ops)?;
    let local = u.ratio(1, 4)?;
    let is_load = matches!(op.mem(), Some(m) if m.dir == Dir::Load);
    let data = if is_load {
        Reg::V(vreg(u, false)?.0)
    } else {
        data_reg(u)?
    };
    let addr = match op.format() {
        FormatKind::LoadRR | FormatKind::StoreRR => MemAddr::RegOff {
            base: base_reg(u, local)?,
            off: off_reg(u)?,
            shamt: shamt(u)?,
        },
        FormatKind::LoadImm | FormatKind::StoreImm => MemAddr::Imm {
            base: base_reg(u, local)?,
            imm: small_simm24(u)?,
        },
        _ => MemAddr::Contig {
            base: scalar_base(u, local)?,
            off: coff(u)?,
        },
    };
    Ok(mem_form(op, data, addr, local).unwrap_or(Inst::Nop(Nullary)))
}

fn alu_imm(u: &mut Unstructured) -> Result<i32> {
    Ok(match u.int_in_range(0..=5)? {
        0 => u.arbitrary()?,
        1 => u.int_in_range(0..=70)?,
        _ => u.int_in_range(-16..=16)?,
    })
}

fn vsrc(u: &mut Unstructured, allow_imm: bool) -> Result<VSrc> {
    Ok(match u.int_in_range(0..=3)? {
        0 => VSrc::S(sreg(u, false)?),
        1 if allow_imm => VSrc::Imm(alu_imm(u)?),
        _ => VSrc::V(vreg(u, true)?),
    })
}

/// A random non-memory, non-control instruction.
fn alu_inst(u: &mut Unstructured) -> Result<Inst> {
    let sd = SReg(pick(u, &SWORK)?);
    let vd = VReg(pick(u, &VWORK)?);
    let alu = |u: &mut Unstructured| -> Result<SAlu> {
        let sb = if u.ratio(1, 2)? {
            SOrImm::Imm(alu_imm(u)?)
        } else {
            SOrImm::Reg(sreg(u, false)?)
        };
        Ok(SAlu {
            sd,
            sa: sreg(u, false)?,
            sb,
        })
    };
    let valu = |u: &mut Unstructured| -> Result<VAlu> {
        Ok(VAlu {
            vd,
            va: vreg(u, true)?,
            vb: vsrc(u, true)?,
        })
    };
    let vfp = |u: &mut Unstructured| -> Result<VFp> {
        Ok(VFp {
            vd,
            va: vreg(u, false)?,
            vb: vsrc(u, false)?,
        })
    };
    Ok(match u.int_in_range(0..=30)? {
        0 => Inst::SAdd(alu(u)?),
        1 => Inst::SSub(alu(u)?),
        2 => Inst::SMul(alu(u)?),
        3 => Inst::SAnd(alu(u)?),
        4 => Inst::SOr(alu(u)?),
        5 => Inst::SXor(alu(u)?),
        6 => Inst::SShl(alu(u)?),
        7 => Inst::SShr(alu(u)?),
        8 => Inst::SSra(alu(u)?),
        9 => Inst::SLi(SLi {
            sd,
            imm: u.arbitrary()?,
        }),
        10 => Inst::SMov(SMov {
            sd,
            sa: sreg(u, true)?,
        }),
        11 => pick(
            u,
            &[
                Inst::SLc0(SUnary { sd }),
                Inst::SVl(SUnary { sd }),
                Inst::SGid(SUnary { sd }),
                Inst::SNgroups(SUnary { sd }),
                Inst::SMask(SUnary { sd }),
            ],
        )?,
        12 => Inst::SGetlane(SGetLane {
            sd,
            va: vreg(u, false)?,
            lane: u.int_in_range(0..=63)?,
        }),
        13 => Inst::VAdd(valu(u)?),
        14 => Inst::VSub(valu(u)?),
        15 => Inst::VMul(valu(u)?),
        16 => Inst::VAnd(valu(u)?),
        17 => Inst::VOr(valu(u)?),
        18 => Inst::VXor(valu(u)?),
        19 => {
            let f = valu(u)?;
            pick(u, &[Inst::VShl(f), Inst::VShr(f), Inst::VSra(f)])?
        }
        20 => Inst::VMov(VMov {
            vd,
            src: vsrc(u, true)?,
        }),
        21 => pick(
            u,
            &[Inst::VLaneid(VUnary { vd }), Inst::VLc0(VUnary { vd })],
        )?,
        22 => Inst::VFaddS(vfp(u)?),
        23 => Inst::VFsubS(vfp(u)?),
        24 => {
            let f = vfp(u)?;
            pick(u, &[Inst::VFmulS(f), Inst::VFmaS(f)])?
        }
        25 => Inst::VFaddD(vfp(u)?),
        26 => Inst::VFsubD(vfp(u)?),
        27 => {
            let f = vfp(u)?;
            pick(u, &[Inst::VFmulD(f), Inst::VFmaD(f)])?
        }
        28 => Inst::VRedsum(VRedSum {
            sd,
            va: vreg(u, false)?,
        }),
        29 => Inst::VSetmask(VSetMask {
            sa: sreg(u, false)?,
        }),
        _ => Inst::Nop(Nullary),
    })
}

/// A random instruction of any non-control opcode with random operand bits (any register,
/// any immediate): reaches the registers the role-based generator never uses (`s16..s31`,
/// `v0`, `v17..v31`) and odd operand combinations. Falls back to a NOP when a few random
/// words in a row do not decode.
fn wild_inst(u: &mut Unstructured) -> Result<Inst> {
    let ops: Vec<Opcode> = Opcode::ALL
        .iter()
        .copied()
        .filter(|o| {
            !matches!(
                o.sem(),
                Sem::Branch(_) | Sem::Ctl(Ctl::Jump | Ctl::Loop | Ctl::EndLoop)
            )
        })
        .collect();
    for _ in 0..4 {
        let op = pick(u, &ops)?;
        let bits: u64 = u.arbitrary()?;
        let word = (bits & !0xff) | op as u64;
        let second: u64 = u.arbitrary()?;
        if let Ok(inst) = Inst::decode(&[word, second]) {
            return Ok(inst);
        }
    }
    Ok(Inst::Nop(Nullary))
}

/// Floating-point values that engines get wrong most easily: NaNs (quiet, signalling, with
/// payloads), infinities, signed zeros, subnormals, extremes; as f32 (low half) and f64.
pub(crate) const FP_SPECIALS: [u64; 20] = [
    0x7fc0_0000,
    0x7f80_0001,
    0xffc0_0001,
    0x7f80_0000,
    0xff80_0000,
    0x8000_0000,
    0x0000_0001,
    0x807f_ffff,
    0x7f7f_ffff,
    0x3f80_0000,
    0x7ff8_0000_0000_0000,
    0x7ff0_0000_0000_0001,
    0xfff8_0000_0000_0001,
    0x7ff0_0000_0000_0000,
    0xfff0_0000_0000_0000,
    0x8000_0000_0000_0000,
    0x0000_0000_0000_0001,
    0x800f_ffff_ffff_ffff,
    0x7fef_ffff_ffff_ffff,
    0x3ff0_0000_0000_0000,
];

/// Load a special floating-point value into a work vector (`S.LI` into a work scalar, then
/// `V.MOV`), on all active lanes.
fn fp_special(u: &mut Unstructured, items: &mut Vec<Item>) -> Result<()> {
    let s = SReg(pick(u, &[14u8, 15])?);
    let imm = pick(u, &FP_SPECIALS)? | if u.ratio(1, 4)? { 1 << 40 } else { 0 };
    items.push(Item::Inst(Inst::SLi(SLi { sd: s, imm })));
    items.push(Item::Inst(Inst::VMov(VMov {
        vd: vreg(u, false)?,
        src: VSrc::S(s),
    })));
    Ok(())
}

/// A mask value: random bits, or none, one, the last, or every lane.
fn mask_value(u: &mut Unstructured, vl: u32) -> Result<u64> {
    Ok(match u.int_in_range(0..=6)? {
        0 => 0,
        1 => 1,
        2 => 1 << (vl - 1),
        3 => u64::MAX,
        4 => u64::MAX << (vl / 2),
        _ => u.arbitrary()?,
    })
}

/// A memory address inside (mostly) or at the edges of the data region.
fn mem_addr(u: &mut Unstructured) -> Result<u64> {
    let region = DATA_PAGES * PAGE_SIZE;
    Ok(match u.int_in_range(0..=9)? {
        0..=4 => DATA_BASE + u.int_in_range(0..=region / 8 - 1)? * 8,
        5 | 6 => DATA_BASE + u.int_in_range(0..=region - 1)?,
        7 => {
            DATA_BASE + u.int_in_range(1..=DATA_PAGES - 1)? * PAGE_SIZE - u.int_in_range(0..=16)?
        }
        8 => DATA_BASE + u.int_in_range(0..=DATA_PAGES - 1)? * PAGE_SIZE,
        _ => DATA_BASE + region - u.int_in_range(0..=64)?,
    })
}

/// A tile address inside (mostly) or at the end of the tile.
fn tile_addr(u: &mut Unstructured, tile_size: u64) -> Result<u64> {
    Ok(match u.int_in_range(0..=5)? {
        0..=2 => u.int_in_range(0..=tile_size / 8 - 1)? * 8,
        3 => u.int_in_range(0..=tile_size - 1)?,
        4 => u.int_in_range(0..=tile_size / TILE_GRANULE - 1)? * TILE_GRANULE,
        _ => tile_size - u.int_in_range(0..=64)?,
    })
}

/// A wild value: near the top of the address space, past the tile, or anything.
fn wild_value(u: &mut Unstructured) -> Result<u64> {
    Ok(match u.int_in_range(0..=3)? {
        0 => u64::MAX - u.int_in_range(0..=64)?,
        1 => (1u64 << 63) + u.int_in_range(0..=64)?,
        2 => mem_addr(u)?.wrapping_sub(1 << 32),
        _ => u.arbitrary()?,
    })
}

/// Map the page at `start` with `perm`: extend the last range when it ends there with the
/// same permission, else start a new one.
pub(crate) fn push_page(map: &mut Vec<MemRange>, start: u64, perm: MemPerm) {
    match map.last_mut() {
        Some(last) if last.perm == perm && last.start + last.len == start => last.len += PAGE_SIZE,
        _ => map.push(MemRange {
            start,
            len: PAGE_SIZE,
            perm,
        }),
    }
}

/// Generate one case.
pub fn generate(u: &mut Unstructured) -> Result<GenProgram> {
    let vl = 1u32 << u.int_in_range(0..=6)?;
    let strict_align = u.ratio(1, 4)?;
    // Memory: DATA_PAGES pages, each rw, r or a hole.
    let mut mem_map: Vec<MemRange> = Vec::new();
    let calm = u.ratio(1, 2)?;
    for p in 0..DATA_PAGES {
        let perm = match if calm { 0 } else { u.int_in_range(0..=9)? } {
            0..=5 => Some(MemPerm::Rw),
            6 | 7 => Some(MemPerm::R),
            _ => None,
        };
        let Some(perm) = perm else { continue };
        push_page(&mut mem_map, DATA_BASE + p * PAGE_SIZE, perm);
    }
    // Tile: 4..=64 granules, a few protected runs.
    let granules = u.int_in_range(4..=64u64)?;
    let tile_size = granules * TILE_GRANULE;
    let mut gperm = vec![TilePerm::Rw; granules as usize];
    for _ in 0..u.int_in_range(0..=3)? {
        let start = u.int_in_range(0..=granules - 1)?;
        let len = u.int_in_range(1..=(granules - start).min(4))?;
        let perm = if u.ratio(1, 2)? {
            TilePerm::None
        } else {
            TilePerm::R
        };
        for g in start..start + len {
            gperm[g as usize] = perm;
        }
    }
    let mut tile_protect: Vec<TileRange> = Vec::new();
    for (g, &perm) in gperm.iter().enumerate() {
        if perm == TilePerm::Rw {
            continue;
        }
        let start = g as u64 * TILE_GRANULE;
        match tile_protect.last_mut() {
            Some(last) if last.perm == perm && last.start + last.len == start => {
                last.len += TILE_GRANULE
            }
            _ => tile_protect.push(TileRange {
                start,
                len: TILE_GRANULE,
                perm,
            }),
        }
    }
    // A table of several MiB for gathers and scatters (a third of the cases).
    let table = if u.ratio(1, 3)? {
        Some(Table::new(u)?)
    } else {
        None
    };
    let table_len = table.as_ref().map_or(0, Table::len);
    let mut shapes = Shapes::new(vl, tile_size, (DATA_BASE, DATA_PAGES * PAGE_SIZE), table);
    // Data: a pattern in every mapped page and the tile, from one seed.
    let seed: u64 = u.arbitrary()?;
    let pattern = |addr: u64| -> u8 {
        let x = (addr ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (x >> 56) as u8
    };
    let mut data: Vec<DataSeg> = mem_map
        .iter()
        .map(|r| DataSeg {
            space: Space::Memory,
            addr: r.start,
            bytes: (r.start..r.start + r.len).map(pattern).collect(),
        })
        .collect();
    data.push(DataSeg {
        space: Space::Tile,
        addr: 0,
        bytes: (0..tile_size).map(|a| pattern(a + 7)).collect(),
    });

    let mut items = Vec::new();
    // Prologue: base scalars and vectors.
    for &r in &SMEM {
        items.push(Item::Inst(Inst::SLi(SLi {
            sd: SReg(r),
            imm: mem_addr(u)?,
        })));
    }
    for &r in &STILE {
        items.push(Item::Inst(Inst::SLi(SLi {
            sd: SReg(r),
            imm: tile_addr(u, tile_size)?,
        })));
    }
    for &r in &SWILD {
        items.push(Item::Inst(Inst::SLi(SLi {
            sd: SReg(r),
            imm: wild_value(u)?,
        })));
    }
    if table_len > 0 {
        // Mostly the middle (room for negative strides), sometimes the start or anywhere.
        let off = match u.int_in_range(0..=7)? {
            0 => 0,
            1 => u.int_in_range(0..=table_len / 8 - 1)? * 8,
            _ => table_len / 2,
        };
        items.push(Item::Inst(Inst::SLi(SLi {
            sd: S_TABLE,
            imm: TABLE_BASE + off,
        })));
    }
    for &r in VIDX.iter().chain(&VADDR) {
        let vd = VReg(r);
        items.push(Item::Inst(Inst::VLaneid(VUnary { vd })));
        let scale = pick(u, &[1, 2, 4, 8, 8, 3, -4])?;
        items.push(Item::Inst(Inst::VMul(VAlu {
            vd,
            va: vd,
            vb: VSrc::Imm(scale),
        })));
        if VADDR.contains(&r) {
            let base = SReg(pick(u, &SMEM)?);
            items.push(Item::Inst(Inst::VAdd(VAlu {
                vd,
                va: vd,
                vb: VSrc::S(base),
            })));
        } else if u.ratio(1, 4)? {
            items.push(Item::Inst(Inst::VXor(VAlu {
                vd,
                va: vd,
                vb: VSrc::Imm(alu_imm(u)?),
            })));
        }
    }
    // Body. Branches only go forward, but may leave a loop body or enter one (ENDLOOP then
    // runs with whatever trip count and LC0BASE are current, which is well defined).
    let n = u.int_in_range(1..=30)?;
    // A fifth of the cases are mostly lane-shape snippets.
    let focus = u.ratio(1, 5)?;
    let mut labels = 0usize;
    let mut pending: Vec<(usize, usize)> = Vec::new(); // (label, items remaining until defined)
    let mut in_loop: Option<usize> = None; // items left in the current loop body
    for _ in 0..n {
        let step = if focus && u.ratio(1, 2)? {
            pick(u, &[22, 24, 24, 25, 26])?
        } else {
            u.int_in_range(0..=26)?
        };
        match step {
            0..=8 => items.push(Item::Inst(mem_inst(u)?)),
            9..=13 => items.push(Item::Inst(alu_inst(u)?)),
            14 if u.ratio(1, 2)? => fp_special(u, &mut items)?,
            14 => items.push(Item::Inst(wild_inst(u)?)),
            15 if in_loop.is_none() => {
                // Loop with an interesting trip count.
                let trip_reg = SReg(pick(u, &[9u8, 10, 11])?);
                let trip = match u.int_in_range(0..=13)? {
                    0 | 1 => 0,
                    2 | 3 => 1,
                    4 => vl as u64 - 1,
                    5 | 6 => vl as u64,
                    7 => vl as u64 + 1,
                    8 => 2 * vl as u64 + u.int_in_range(0..=1)?,
                    9 | 10 => u.int_in_range(0..=300)?,
                    11 | 12 => u.int_in_range(0..=600)?,
                    _ => u.int_in_range(600..=4000)?,
                };
                items.push(Item::Inst(Inst::SLi(SLi {
                    sd: trip_reg,
                    imm: trip,
                })));
                items.push(Item::LoopStart(trip_reg));
                in_loop = Some(u.int_in_range(1..=6)?);
                continue;
            }
            16 => {
                // Mask.
                let r = SReg(pick(u, &[12u8, 13])?);
                items.push(Item::Inst(Inst::SLi(SLi {
                    sd: r,
                    imm: mask_value(u, vl)?,
                })));
                items.push(Item::Inst(Inst::VSetmask(VSetMask { sa: r })));
            }
            17 | 18 => {
                // Forward branch: within a loop body, out of one, into one, or past one.
                let l = labels;
                labels += 1;
                let sb = if u.ratio(1, 2)? {
                    SOrImm::Imm(u.int_in_range(-4..=4)?)
                } else {
                    SOrImm::Reg(sreg(u, false)?)
                };
                let b = Branch {
                    sa: sreg(u, false)?,
                    sb,
                    target: Target(0),
                };
                let inst = match u.int_in_range(0..=6)? {
                    0 => Inst::J(Jump { target: Target(0) }),
                    1 => Inst::Beq(b),
                    2 => Inst::Bne(b),
                    3 => Inst::Blt(b),
                    4 => Inst::Bge(b),
                    5 => Inst::Bltu(b),
                    _ => Inst::Bgeu(b),
                };
                items.push(Item::Branch(inst, l));
                pending.push((l, u.int_in_range(0..=6)?));
            }
            19 if u.ratio(1, 8)? => items.push(Item::Raw(u.arbitrary::<u64>()? | 0xff)),
            19 => items.push(Item::Inst(wild_inst(u)?)),
            // The lane-shape snippets (see `shapes`).
            22 | 23 => shapes.access_snippet(u, in_loop.is_some(), &mut items)?,
            24 => shapes.loop_snippet(u, in_loop.is_some(), &mut items)?,
            26 if in_loop.is_none() && u.ratio(1, 3)? => shapes.row_snippet(u, &mut items)?,
            26 if in_loop.is_none() => shapes.strip_snippet(u, &mut items)?,
            25 => shapes.fma_snippet(u, &mut items)?,
            _ => items.push(Item::Inst(mem_inst(u)?)),
        }
        // Labels due now go before or after a closing ENDLOOP (so a branch may target the
        // ENDLOOP itself, or the instruction after it).
        let labels_first = u.ratio(1, 2)?;
        let mut place_labels = |items: &mut Vec<Item>| {
            pending.retain_mut(|(l, left)| {
                if *left == 0 {
                    items.push(Item::Label(*l));
                    false
                } else {
                    *left -= 1;
                    true
                }
            })
        };
        if labels_first {
            place_labels(&mut items);
        }
        if let Some(left) = in_loop.as_mut() {
            *left -= 1;
            if *left == 0 {
                items.push(Item::LoopEnd);
                in_loop = None;
            }
        }
        if !labels_first {
            place_labels(&mut items);
        }
    }
    if in_loop.is_some() {
        items.push(Item::LoopEnd);
    }
    for (l, _) in pending {
        items.push(Item::Label(l));
    }
    if !u.ratio(1, 20)? {
        items.push(Item::Inst(Inst::Halt(Nullary)));
    }
    shapes.finish(&mut mem_map, &mut data);
    let fuel = if u.ratio(1, 5)? {
        u.int_in_range(0..=300)?
    } else {
        200_000
    };
    // A sixth of the cases launch 2 to 4 groups (drawn last, so the rest of a case does not
    // depend on it). Each group moves the memory bases s1..s4 (and with them the lane
    // addresses v4..v6) by gid pages: groups mostly work on their own page of the data region
    // (race-free, then compared at several thread counts), sometimes on pages that are
    // read-only or holes for some groups only (faults in some groups), sometimes overlapping
    // (races: compared in reference order only).
    let groups = if u.ratio(1, 6)? {
        u.int_in_range(2..=4)?
    } else {
        1
    };
    if groups > 1 {
        let work = SReg(9);
        let mut per_group = vec![
            Item::Inst(Inst::SGid(SUnary { sd: work })),
            Item::Inst(Inst::SMul(SAlu {
                sd: work,
                sa: work,
                sb: SOrImm::Imm(PAGE_SIZE as i32),
            })),
        ];
        per_group.extend(SMEM.iter().map(|&r| {
            Item::Inst(Inst::SAdd(SAlu {
                sd: SReg(r),
                sa: SReg(r),
                sb: SOrImm::Reg(work),
            }))
        }));
        // After the S.LI of every memory base (the prologue's first items), before the lane
        // addresses are formed from them.
        items.splice(SMEM.len()..SMEM.len(), per_group);
    }
    Ok(GenProgram {
        vl,
        strict_align,
        fuel,
        mem_map,
        tile_size,
        tile_protect,
        data,
        items,
        groups,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngCore, SeedableRng};

    #[test]
    fn generated_programs_decode_and_are_well_formed() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..500 {
            let mut bytes = vec![0u8; 4096];
            rng.fill_bytes(&mut bytes);
            let g = generate(&mut Unstructured::new(&bytes)).unwrap();
            let p = g.build();
            assert!(!p.code.is_empty());
            let mut i = 0;
            let mut depth = 0i32;
            while i < p.code.len() {
                match Inst::decode(&p.code[i..]) {
                    Ok(inst) => {
                        seen.insert(inst.opcode());
                        match inst {
                            Inst::Loop(l) => {
                                depth += 1;
                                assert!(l.exit.0 as usize <= p.code.len());
                            }
                            Inst::Endloop(_) => depth -= 1,
                            Inst::J(j) if j.target.0 as usize <= i => {
                                // Back only to the test of a `while` round loop, which
                                // counts down (`Shapes::trace_rounds`).
                                let t = Inst::decode(&p.code[j.target.0 as usize..]);
                                let rounds = super::super::shapes::S_ROUNDS;
                                assert!(
                                    matches!(t, Ok(Inst::Beq(b)) if b.sa == rounds && b.sb == SOrImm::Imm(0)),
                                    "a J back at word {i}"
                                );
                            }
                            _ => {}
                        }
                        assert!((0..=1).contains(&depth), "loops never nest");
                        i += inst.opcode().words();
                    }
                    Err(_) => i += 1,
                }
            }
            assert_eq!(depth, 0);
        }
        let mem_ops = Opcode::ALL.iter().filter(|o| o.mem().is_some()).count();
        let seen_mem = seen.iter().filter(|o| o.mem().is_some()).count();
        assert_eq!(seen_mem, mem_ops, "every load/store opcode is generated");
        assert!(seen.len() >= 85, "most opcodes generated: {}", seen.len());
    }
}
