//! Semantics of every instruction on the reference interpreter (contract sections 1-5).
//!
//! The memory tests compare against a small model written here straight from the contract's
//! table (section 3), not from the crate's `MemSem` helpers: every seed mnemonic, each width,
//! signedness, addressing form and operand kind, in memory and in tile space.

mod support;

/// How `Setup::run` executes: this crate tests the reference interpreter. (The root crate's
/// engine harness includes this file and runs every engine instead.)
#[allow(dead_code)] // unused where the engine harness includes this file
fn run_setup(
    prog: &lanejit_interp::program::Program,
    cfg: lanejit_interp::machine::Config,
    prep: &dyn Fn(&mut lanejit_interp::machine::Machine),
) -> (
    lanejit_interp::machine::Machine,
    lanejit_interp::machine::Exit,
) {
    support::run_interp(prog, cfg, prep)
}

use lanejit_interp::interp;
use lanejit_interp::isa::Opcode::*;
use lanejit_interp::isa::{Inst, Opcode, Reg, SOrImm};
use lanejit_interp::machine::{Exit, Machine};
use lanejit_interp::program::MemPerm;
use support::*;

// ---------------------------------------------------------------------------------------
// The model: contract section 3, by mnemonic.

#[derive(Clone, Copy, Debug, PartialEq)]
enum X {
    /// Sign-extend.
    S,
    /// Zero-extend.
    Z,
    /// 8 bytes / store: no extension.
    N,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum F {
    /// SrcL + (SrcR << (shamt + (width ? log2 E : 0))).
    Rr { width: bool },
    /// SrcL + (simm24 << (scaled ? log2 E : 0)).
    Imm { scaled: bool },
    /// base + (lc0 << log2 E) + offset.
    C,
}

#[derive(Clone, Copy, Debug)]
struct Case {
    op: Opcode,
    mn: &'static str,
    log2e: u32,
    x: X,
    f: F,
    store: bool,
}

const fn ld(op: Opcode, mn: &'static str, log2e: u32, x: X, f: F) -> Case {
    Case {
        op,
        mn,
        log2e,
        x,
        f,
        store: false,
    }
}
const fn st(op: Opcode, mn: &'static str, log2e: u32, f: F) -> Case {
    Case {
        op,
        mn,
        log2e,
        x: X::N,
        f,
        store: true,
    }
}
const RR: F = F::Rr { width: false };
const RRW: F = F::Rr { width: true };
const IS: F = F::Imm { scaled: true };
const IU: F = F::Imm { scaled: false };

/// Every memory instruction of the seed, transcribed from the contract's table.
const CASES: &[Case] = &[
    ld(VLb, "V.LB", 0, X::S, RR),
    ld(VLh, "V.LH", 1, X::S, RR),
    ld(VLw, "V.LW", 2, X::S, RR),
    ld(VLd, "V.LD", 3, X::N, RR),
    ld(VLbu, "V.LBU", 0, X::Z, RR),
    ld(VLhu, "V.LHU", 1, X::Z, RR),
    ld(VLwu, "V.LWU", 2, X::Z, RR),
    ld(VLbi, "V.LBI", 0, X::S, IS),
    ld(VLhi, "V.LHI", 1, X::S, IS),
    ld(VLwi, "V.LWI", 2, X::S, IS),
    ld(VLdi, "V.LDI", 3, X::N, IS),
    ld(VLbui, "V.LBUI", 0, X::Z, IS),
    ld(VLhui, "V.LHUI", 1, X::Z, IS),
    ld(VLwui, "V.LWUI", 2, X::Z, IS),
    ld(VLhiU, "V.LHI.U", 1, X::S, IU),
    ld(VLwiU, "V.LWI.U", 2, X::S, IU),
    ld(VLdiU, "V.LDI.U", 3, X::N, IU),
    ld(VLhuiU, "V.LHUI.U", 1, X::Z, IU),
    ld(VLwuiU, "V.LWUI.U", 2, X::Z, IU),
    ld(VLbC, "V.LB", 0, X::S, F::C),
    ld(VLhC, "V.LH", 1, X::S, F::C),
    ld(VLwC, "V.LW", 2, X::S, F::C),
    ld(VLdC, "V.LD", 3, X::N, F::C),
    ld(VLbuC, "V.LBU", 0, X::Z, F::C),
    ld(VLhuC, "V.LHU", 1, X::Z, F::C),
    ld(VLwuC, "V.LWU", 2, X::Z, F::C),
    // V.SB: SrcL + (SrcR << shamt); with E = 1 the width shift is 0 either way.
    st(VSb, "V.SB", 0, RRW),
    st(VSh, "V.SH", 1, RRW),
    st(VSw, "V.SW", 2, RRW),
    st(VSd, "V.SD", 3, RRW),
    st(VShU, "V.SH.U", 1, RR),
    st(VSwU, "V.SW.U", 2, RR),
    st(VSdU, "V.SD.U", 3, RR),
    st(VSbi, "V.SBI", 0, IS),
    st(VShi, "V.SHI", 1, IS),
    st(VSwi, "V.SWI", 2, IS),
    st(VSdi, "V.SDI", 3, IS),
    st(VShiU, "V.SHI.U", 1, IU),
    st(VSwiU, "V.SWI.U", 2, IU),
    st(VSdiU, "V.SDI.U", 3, IU),
    st(VSbC, "V.SB", 0, F::C),
    st(VShC, "V.SH", 1, F::C),
    st(VSwC, "V.SW", 2, F::C),
    st(VSdC, "V.SD", 3, F::C),
];

#[test]
fn the_model_covers_every_memory_opcode() {
    let mem_ops: Vec<Opcode> = Opcode::ALL
        .iter()
        .copied()
        .filter(|o| o.mem().is_some())
        .collect();
    assert_eq!(mem_ops.len(), CASES.len());
    for o in mem_ops {
        let c = CASES
            .iter()
            .find(|c| c.op == o)
            .expect("opcode in the model");
        assert_eq!(c.mn, o.mnemonic());
    }
}

/// An operand value in the test: a scalar register, a vector register, or lc0.
#[derive(Clone, Debug)]
enum O {
    S(u8, u64),
    V(u8, Vec<u64>),
    Lc0,
}

impl O {
    fn at(&self, i: usize, lc0base: u64) -> u64 {
        match self {
            O::S(0, _) => 0,
            O::S(_, x) => *x,
            O::V(_, xs) => xs[i],
            O::Lc0 => lc0base.wrapping_add(i as u64),
        }
    }
    fn reg(&self) -> Reg {
        match self {
            O::S(n, _) => Reg::S(*n),
            O::V(n, _) => Reg::V(*n),
            O::Lc0 => Reg::Lc0,
        }
    }
    fn apply(&self, m: &mut Machine) {
        match self {
            O::S(0, _) | O::Lc0 => {}
            O::S(n, x) => m.regs.s[*n as usize] = *x,
            O::V(n, xs) => m.regs.v[*n as usize][..xs.len()].copy_from_slice(xs),
        }
    }
}

/// One memory scenario.
#[derive(Clone, Debug)]
struct Sc {
    case: Case,
    local: bool,
    vl: u32,
    mask: u64,
    lc0base: u64,
    /// SrcL (base).
    l: O,
    /// SrcR (register forms) or lc0 (contiguous).
    r: O,
    shamt: u8,
    /// simm24 of immediate forms.
    imm: i32,
    /// Contiguous offset: `O::S` register or immediate in `imm`.
    coff: Option<O>,
    /// Store data, or the load destination register.
    data: O,
}

/// The EA of lane i, from the contract's formulas.
fn model_ea(sc: &Sc, i: usize) -> u64 {
    let e = sc.case.log2e;
    let l = sc.l.at(i, sc.lc0base);
    match sc.case.f {
        F::Rr { width } => {
            let sh = sc.shamt as u32 + if width { e } else { 0 };
            l.wrapping_add(sc.r.at(i, sc.lc0base).wrapping_shl(sh))
        }
        F::Imm { scaled } => {
            let off = (sc.imm as i64 as u64).wrapping_shl(if scaled { e } else { 0 });
            l.wrapping_add(off)
        }
        F::C => {
            let off = match &sc.coff {
                Some(o) => o.at(i, sc.lc0base),
                None => sc.imm as i64 as u64,
            };
            l.wrapping_add(sc.lc0base.wrapping_add(i as u64).wrapping_shl(e))
                .wrapping_add(off)
        }
    }
}

fn inst_of(sc: &Sc) -> Inst {
    let c = sc.case;
    let coff = || match &sc.coff {
        Some(O::S(n, _)) => SOrImm::Reg(lanejit_interp::isa::SReg(*n)),
        _ => SOrImm::Imm(sc.imm),
    };
    let base_s = || match sc.l {
        O::S(n, _) => n,
        _ => panic!("contiguous base is scalar"),
    };
    let dst = || match sc.data {
        O::V(n, _) => n,
        _ => panic!("load destination is a vector"),
    };
    match (c.store, c.f) {
        (false, F::Rr { .. }) => load_rr(c.op, dst(), sc.l.reg(), sc.r.reg(), sc.shamt, sc.local),
        (false, F::Imm { .. }) => load_imm(c.op, dst(), sc.l.reg(), sc.imm, sc.local),
        (false, F::C) => load_c(c.op, dst(), base_s(), coff(), sc.local),
        (true, F::Rr { .. }) => store_rr(
            c.op,
            sc.data.reg(),
            sc.l.reg(),
            sc.r.reg(),
            sc.shamt,
            sc.local,
        ),
        (true, F::Imm { .. }) => store_imm(c.op, sc.data.reg(), sc.l.reg(), sc.imm, sc.local),
        (true, F::C) => store_c(c.op, sc.data.reg(), base_s(), coff(), sc.local),
    }
}

/// Memory is mapped at [MEM_LO, MEM_HI); the tile is 64 KiB. Both hold `pattern`.
const MEM_LO: u64 = 0x10000;
const MEM_HI: u64 = 0x14000;
const TILE: u64 = 0x4000;

fn pattern(a: u64) -> u8 {
    (a.wrapping_mul(0x9d) ^ (a >> 7) ^ 0x80) as u8
}

fn space_bytes(local: bool) -> (u64, Vec<u8>) {
    static MEM: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    static TILE_BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    if local {
        (
            0,
            TILE_BYTES
                .get_or_init(|| (0..TILE).map(pattern).collect())
                .clone(),
        )
    } else {
        (
            MEM_LO,
            MEM.get_or_init(|| (MEM_LO..MEM_HI).map(pattern).collect())
                .clone(),
        )
    }
}

fn setup(vl: u32, insts: &[Inst]) -> Setup {
    let (_, mb) = space_bytes(false);
    let (_, tb) = space_bytes(true);
    Setup::insts(insts)
        .vl(vl)
        .map(MEM_LO, MEM_HI - MEM_LO, MemPerm::Rw)
        .data(MEM_LO, &mb)
        .tile_size(TILE)
        .tile_data(0, &tb)
}

fn sentinel(i: usize) -> u64 {
    0xdead_beef_0000_0000 | i as u64
}

/// Run one scenario and compare registers and the whole space with the model.
#[allow(clippy::needless_range_loop)]
fn check(sc: &Sc) {
    let vl = sc.vl as usize;
    let inst = inst_of(sc);
    let st = setup(sc.vl, &[inst, halt()]);
    let dst_reg = match (&sc.data, sc.case.store) {
        (O::V(n, _), false) => Some(*n as usize),
        _ => None,
    };
    let (m, e) = st.run_with(|m| {
        if let Some(d) = dst_reg {
            for i in 0..64 {
                m.regs.v[d][i] = sentinel(i);
            }
        }
        sc.l.apply(m);
        sc.r.apply(m);
        if let Some(o) = &sc.coff {
            o.apply(m);
        }
        if sc.case.store {
            sc.data.apply(m);
        }
        m.regs.mask = sc.mask;
        m.regs.lc0base = sc.lc0base;
    });
    let what = || format!("{inst} {sc:?}");
    assert_eq!(e, Exit::Halted, "{}", what());
    assert_eq!(m.retired, 2, "{}", what());
    let (lo, mut model) = space_bytes(sc.local);
    let e_bytes = 1usize << sc.case.log2e;
    // Expected destination: built from the sources as they were before the instruction.
    let mut expect_dst: Vec<u64> = (0..64)
        .map(|i| match (&sc.l, dst_reg) {
            (O::V(n, xs), Some(d)) if *n as usize == d && i < vl => xs[i],
            (O::V(n, _), Some(d)) if *n as usize == d => sentinel(i),
            _ => sentinel(i),
        })
        .collect();
    for i in 0..vl {
        if sc.mask >> i & 1 == 0 {
            continue;
        }
        let ea = model_ea(sc, i);
        let off = ea.wrapping_sub(lo) as usize;
        assert!(
            off + e_bytes <= model.len(),
            "scenario EA out of the test region: {}",
            what()
        );
        if sc.case.store {
            let d = sc.data.at(i, sc.lc0base).to_le_bytes();
            model[off..off + e_bytes].copy_from_slice(&d[..e_bytes]);
        } else {
            let mut b = [0u8; 8];
            b[..e_bytes].copy_from_slice(&model[off..off + e_bytes]);
            let raw = u64::from_le_bytes(b);
            let bits = 8 * e_bytes as u32;
            expect_dst[i] = match sc.case.x {
                X::S if bits < 64 => (((raw << (64 - bits)) as i64) >> (64 - bits)) as u64,
                _ => raw,
            };
        }
    }
    let got = if sc.local {
        tile(&m, 0, TILE)
    } else {
        mem(&m, MEM_LO, MEM_HI - MEM_LO)
    };
    if got != model {
        let first = got.iter().zip(&model).position(|(a, b)| a != b).unwrap();
        panic!(
            "space differs first at 0x{:x}: got {:02x}, want {:02x}: {}",
            lo + first as u64,
            got[first],
            model[first],
            what()
        );
    }
    if let Some(d) = dst_reg {
        assert_eq!(&m.regs.v[d][..vl], &expect_dst[..vl], "{}", what());
    }
    // The other space is untouched.
    let (olo, other) = space_bytes(!sc.local);
    let got_other = if sc.local {
        mem(&m, MEM_LO, MEM_HI - MEM_LO)
    } else {
        tile(&m, 0, TILE)
    };
    assert!(
        got_other == other,
        "other space changed at {olo:#x}: {}",
        what()
    );
}

fn region(local: bool) -> u64 {
    if local { 0x1000 } else { 0x11000 }
}

fn lanes_vec(vl: u32, f: impl Fn(usize) -> u64) -> Vec<u64> {
    (0..vl as usize).map(f).collect()
}

/// The scenarios of one case: every operand kind of its form, boundary immediates and
/// shifts, full, partial and empty masks.
fn scenarios(case: Case, local: bool, vl: u32) -> Vec<Sc> {
    let e = case.log2e;
    let base = region(local);
    let full = if vl == 64 { u64::MAX } else { (1u64 << vl) - 1 };
    let data_v = O::V(
        3,
        lanes_vec(vl, |i| {
            0x8877_6655_4433_2211u64.rotate_left(8 * i as u32) ^ i as u64
        }),
    );
    let dst = O::V(5, vec![]);
    let datas: Vec<O> = if case.store {
        vec![data_v.clone(), O::S(3, 0x80c0_e0f0_f8fc_fefe), O::S(0, 0)]
    } else {
        vec![dst.clone()]
    };
    let width_shift = match case.f {
        F::Rr { width: true } => e,
        _ => 0,
    };
    let mut out = Vec::new();
    let mk = |l: O, r: O, shamt: u8, imm: i32, coff: Option<O>, lc0base: u64| Sc {
        case,
        local,
        vl,
        mask: full,
        lc0base,
        l,
        r,
        shamt,
        imm,
        coff,
        data: datas[0].clone(),
    };
    match case.f {
        F::Rr { .. } => {
            let total = |shamt: u8| shamt as u32 + width_shift;
            // L vector, R vector, shamt 31: L compensates R << (31 [+ log2 E]).
            let r = lanes_vec(vl, |i| 0x1234_5677 + 0x1_0000_0001 * i as u64);
            let l = lanes_vec(vl, |i| {
                (base + 40 * i as u64 + (i as u64 & 1) * 3)
                    .wrapping_sub(r[i].wrapping_shl(total(31)))
            });
            out.push(mk(O::V(1, l), O::V(2, r), 31, 0, None, 0));
            // L scalar, R vector, shamt 0 and 3: a permutation gather/scatter.
            for shamt in [0u8, 3] {
                let r = lanes_vec(vl, |i| ((i * 5 + 3) % vl as usize) as u64);
                out.push(mk(O::S(1, base), O::V(2, r), shamt, 0, None, 0));
            }
            // L vector, R scalar.
            let l = lanes_vec(vl, |i| base + 17 * i as u64);
            out.push(mk(O::V(1, l), O::S(2, 3), 1, 0, None, 0));
            // L scalar, R = lc0, total shift = log2 E (contiguous) and a different one.
            let contig_shamt = (e - width_shift) as u8;
            out.push(mk(O::S(1, base), O::Lc0, contig_shamt, 0, None, 16));
            out.push(mk(O::S(1, base + 1), O::Lc0, contig_shamt + 1, 0, None, 5));
            // L vector, R = lc0.
            let l = lanes_vec(vl, |i| base + 3 * i as u64);
            out.push(mk(O::V(1, l), O::Lc0, 2, 0, None, 7));
            // Uniform: L and R scalar; R = s0 reads 0.
            out.push(mk(O::S(1, base), O::S(2, 2), 4, 0, None, 0));
            out.push(mk(O::S(1, base + 9), O::S(0, 0), 5, 0, None, 0));
        }
        F::Imm { scaled } => {
            let scale = |imm: i32| (imm as i64 as u64).wrapping_shl(if scaled { e } else { 0 });
            for imm in [-(1 << 23), (1 << 23) - 1, 0, -1, 77] {
                let l = (base + 64).wrapping_sub(scale(imm));
                out.push(mk(O::S(1, l), O::S(0, 0), 0, imm, None, 0));
                let lv = lanes_vec(vl, |i| (base + 24 * i as u64 + 1).wrapping_sub(scale(imm)));
                out.push(mk(O::V(1, lv), O::S(0, 0), 0, imm, None, 0));
            }
        }
        F::C => {
            for (imm, lc0base) in [(-(1 << 23), 0u64), ((1 << 23) - 1, 40), (0, 0), (24, 8)] {
                let b = base
                    .wrapping_sub(imm as i64 as u64)
                    .wrapping_sub(lc0base << e);
                out.push(mk(O::S(1, b), O::Lc0, 0, imm, None, lc0base));
            }
            // Scalar offset register (negative), and s0 as the offset.
            let off = 0xffff_ffff_ffff_fff0u64;
            let b = base.wrapping_sub(off).wrapping_sub(64 << e);
            out.push(mk(O::S(1, b), O::Lc0, 0, 0, Some(O::S(2, off)), 64));
            out.push(mk(O::S(1, base + 2), O::Lc0, 0, 0, Some(O::S(0, 0)), 0));
        }
    }
    // Masks: each scenario with all lanes, a partial mask and (once) no lanes; stores also
    // with scalar data.
    let mut all = Vec::new();
    for (k, sc) in out.into_iter().enumerate() {
        for d in &datas {
            let mut a = sc.clone();
            a.data = d.clone();
            all.push(a.clone());
            a.mask = full & 0xa5c3_5a3c_96e1_0f69;
            if vl == 1 {
                a.mask = 0;
            }
            all.push(a.clone());
            if k == 0 {
                a.mask = 0;
                all.push(a);
            }
        }
    }
    all
}

#[test]
fn every_memory_instruction_form_and_space_vl8() {
    let mut n = 0;
    for case in CASES {
        for local in [false, true] {
            for sc in scenarios(*case, local, 8) {
                check(&sc);
                n += 1;
            }
        }
    }
    assert!(n > 1000, "{n} scenarios");
}

#[test]
fn every_memory_instruction_vl1_and_vl64() {
    for case in CASES {
        for local in [false, true] {
            for vl in [1, 64] {
                for sc in scenarios(*case, local, vl) {
                    check(&sc);
                }
            }
        }
    }
}

/// A load whose destination is also its vector base reads the base first.
#[test]
fn load_destination_may_be_its_own_base() {
    for case in CASES.iter().filter(|c| !c.store && c.f != F::C) {
        for local in [false, true] {
            let base = region(local);
            let l = lanes_vec(8, |i| base + 8 * i as u64 + 3);
            let sc = Sc {
                case: *case,
                local,
                vl: 8,
                mask: 0b1101_0111,
                lc0base: 0,
                l: O::V(5, l),
                r: O::S(0, 0),
                shamt: 0,
                imm: 0,
                coff: None,
                data: O::V(5, vec![]),
            };
            check(&sc);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Explicit values.

fn vload(op: Opcode, ea_base: u64) -> Inst {
    match op.format() {
        lanejit_interp::isa::FormatKind::LoadRR => load_rr(op, 4, s(1), s(0), 0, false),
        lanejit_interp::isa::FormatKind::LoadImm => load_imm(op, 4, s(1), 0, false),
        _ => {
            let _ = ea_base;
            load_c(op, 4, 1, imm(0), false)
        }
    }
}

/// Sign vs zero extension of 0x80 / 0x8000 / 0x80000000 (and their all-ones neighbours) for
/// every load mnemonic.
#[test]
fn sign_and_zero_extension_patterns() {
    let bytes = le64(&[
        0x0000_0000_8000_0000,
        0x0000_0000_0000_8000,
        0x0000_0000_0000_0080,
        0x8000_0000_0000_0000,
        0x7fff_ffff_7fff_ff7f,
    ]);
    for case in CASES.iter().filter(|c| !c.store) {
        for (addr, raw) in [
            (0x10000u64, 0x8000_0000u64),
            (0x10008, 0x8000),
            (0x10010, 0x80),
            (0x10018, 0x8000_0000_0000_0000),
            (0x10020, 0x7fff_ffff_7fff_ff7f),
        ] {
            let mut c = Code::new();
            c.push(li(1, addr));
            c.push(vload(case.op, addr));
            c.push(halt());
            // VL 1: the contiguous forms read consecutive elements in higher lanes.
            let (m, e) = Setup::new(c.words())
                .vl(1)
                .map(0x10000, 0x1000, MemPerm::R)
                .data(0x10000, &bytes)
                .run();
            assert_eq!(e, Exit::Halted);
            let bits = 8u32 << case.log2e;
            let low = if bits == 64 {
                raw
            } else {
                raw & ((1u64 << bits) - 1)
            };
            let expect = match (case.x, bits) {
                (X::S, 8) => low as u8 as i8 as i64 as u64,
                (X::S, 16) => low as u16 as i16 as i64 as u64,
                (X::S, 32) => low as u32 as i32 as i64 as u64,
                _ => low,
            };
            assert_eq!(m.regs.v[4][0], expect, "{} at {addr:#x}", case.mn);
        }
    }
    // A few literal spot checks.
    let lit = |op: Opcode, addr: u64| {
        let mut c = Code::new();
        c.push(li(1, addr));
        c.push(vload(op, addr));
        c.push(halt());
        let (m, _) = Setup::new(c.words())
            .vl(1)
            .map(0x10000, 0x1000, MemPerm::R)
            .data(0x10000, &bytes)
            .run();
        m.regs.v[4][0]
    };
    assert_eq!(lit(VLw, 0x10000), 0xffff_ffff_8000_0000);
    assert_eq!(lit(VLwu, 0x10000), 0x8000_0000);
    assert_eq!(lit(VLhiU, 0x10008), 0xffff_ffff_ffff_8000);
    assert_eq!(lit(VLhuiU, 0x10008), 0x8000);
    assert_eq!(lit(VLbi, 0x10010), 0xffff_ffff_ffff_ff80);
    assert_eq!(lit(VLbui, 0x10010), 0x80);
    assert_eq!(lit(VLdC, 0x10018), 0x8000_0000_0000_0000);
    assert_eq!(lit(VLwiU, 0x10020), 0x7fff_ff7f);
}

fn run_mem(insts: &[Inst], prep: impl Fn(&mut Machine)) -> (Machine, Exit) {
    Setup::insts(insts)
        .vl(4)
        .map(0x10000, 0x2000, MemPerm::Rw)
        .data(0x10000, &(0..0x2000u64).map(pattern).collect::<Vec<u8>>())
        .run_with(prep)
}

/// A base near 2^64 plus an offset that wraps lands in low mapped memory; an access whose own
/// range wraps past 2^64 - 1 is out of range.
#[test]
fn ea_wraps_at_2_pow_64() {
    let want = u64::from_le_bytes(std::array::from_fn(|k| pattern(k as u64)));
    // reg-reg: L = 2^64 - 16, R = 0x10010.
    let (m, e) = run_mem(&[load_rr(VLd, 4, s(1), s(2), 0, false), halt()], |m| {
        m.regs.s[1] = u64::MAX - 15;
        m.regs.s[2] = 0x10010;
    });
    assert_eq!(e, Exit::Halted);
    assert_eq!(m.regs.v[4][..4], [want; 4]);
    // unscaled immediate: L = 2^64 - 8 (+ lane stride), imm = 0x10008.
    let (m, e) = run_mem(&[load_imm(VLdiU, 4, v(1), 0x10008, false), halt()], |m| {
        for i in 0..4 {
            m.regs.v[1][i] = (u64::MAX - 7).wrapping_add(8 * i as u64);
        }
    });
    assert_eq!(e, Exit::Halted);
    assert_eq!(m.regs.v[4][0], want);
    // scaled immediate, negative: L = 0x10000 + 8 * 2^23, imm = -2^23 (x8).
    let (m, e) = run_mem(&[load_imm(VLdi, 4, s(1), -(1 << 23), false), halt()], |m| {
        m.regs.s[1] = 0x10000 + (8 << 23);
    });
    assert_eq!(e, Exit::Halted);
    assert_eq!(m.regs.v[4][..4], [want; 4]);
    // contiguous: base = 2^64 - 4, offset 0x10004.
    let (m, e) = run_mem(&[load_c(VLdC, 4, 1, imm(0x10004), false), halt()], |m| {
        m.regs.s[1] = u64::MAX - 3;
    });
    assert_eq!(e, Exit::Halted);
    assert_eq!(m.regs.v[4][0], want);
    // A range that itself wraps: 8 bytes at 2^64 - 4.
    let (m, e) = run_mem(&[load_imm(VLdiU, 4, s(1), 0, false), halt()], |m| {
        m.regs.s[1] = u64::MAX - 3;
    });
    match e {
        Exit::Trapped(t) => {
            assert_eq!(t.kind, lanejit_interp::machine::TrapKind::PageFault);
            assert_eq!(t.mem.unwrap().ea, u64::MAX - 3);
            assert_eq!(t.mem.unwrap().lane, 0);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(m.retired, 0);
}

/// Accesses straddling a page boundary work when both pages are mapped, in both directions.
#[test]
fn straddling_two_mapped_pages() {
    let (m, e) = run_mem(
        &[
            load_imm(VLwiU, 4, s(1), 0, false),
            store_imm(VSdiU, v(5), s(2), 0, false),
            halt(),
        ],
        |m| {
            m.regs.s[1] = 0x10ffe;
            m.regs.s[2] = 0x10ffc;
            m.regs.v[5][..4].copy_from_slice(&[0x1122_3344_5566_7788; 4]);
        },
    );
    assert_eq!(e, Exit::Halted);
    let want = u32::from_le_bytes(std::array::from_fn(|k| pattern(0xffe + k as u64)));
    assert_eq!(m.regs.v[4][0], want as i32 as i64 as u64);
    assert_eq!(mem(&m, 0x10ffc, 8), 0x1122_3344_5566_7788u64.to_le_bytes());
}

/// shamt 31: V.SD shifts by 3 + 31 = 34, V.SD.U and every register-offset load by 31 only.
#[test]
fn shamt_31_literal_shifts() {
    for (store, op, shift) in [
        (true, VSd, 34u32),
        (true, VSdU, 31),
        (true, VSb, 31),
        (false, VLd, 31),
        (false, VLbu, 31),
    ] {
        let inst = if store {
            store_rr(op, v(3), s(1), s(2), 31, false)
        } else {
            load_rr(op, 4, s(1), s(2), 31, false)
        };
        let (m, e) = run_mem(&[inst, halt()], |m| {
            m.regs.s[1] = 0x10100u64.wrapping_sub(1 << shift);
            m.regs.s[2] = 1;
            m.regs.v[3][..4].copy_from_slice(&[0x1122_3344_5566_7788; 4]);
        });
        assert_eq!(e, Exit::Halted, "{op:?}");
        if store {
            let n = if op == VSb { 1 } else { 8 };
            assert_eq!(
                mem(&m, 0x10100, n),
                0x1122_3344_5566_7788u64.to_le_bytes()[..n as usize],
                "{op:?}"
            );
        } else {
            let w = |a: u64| u64::from_le_bytes(std::array::from_fn(|k| pattern(a + k as u64)));
            let want = if op == VLd {
                w(0x100)
            } else {
                pattern(0x100) as u64
            };
            assert_eq!(m.regs.v[4][..4], [want; 4], "{op:?}");
        }
    }
}

/// Overlapping store lanes commit in ascending lane order: the higher lane's bytes win.
#[test]
fn overlapping_store_lanes_higher_lane_wins() {
    let (m, e) = run_mem(&[store_rr(VSwU, v(3), s(1), v(2), 0, false), halt()], |m| {
        m.regs.s[1] = 0x10100;
        m.regs.v[2][..4].copy_from_slice(&[0, 1, 2, 3]);
        m.regs.v[3][..4].copy_from_slice(&[0xa0a1a2a3, 0xb0b1b2b3, 0xc0c1c2c3, 0xd0d1d2d3]);
    });
    assert_eq!(e, Exit::Halted);
    assert_eq!(
        mem(&m, 0x10100, 7),
        [0xa3, 0xb3, 0xc3, 0xd3, 0xd2, 0xd1, 0xd0]
    );
    // The same with lanes in descending address order: lane 3 at +0 ... lane 0 at +3.
    let (m, _) = run_mem(&[store_rr(VSwU, v(3), s(1), v(2), 0, false), halt()], |m| {
        m.regs.s[1] = 0x10100;
        m.regs.v[2][..4].copy_from_slice(&[3, 2, 1, 0]);
        m.regs.v[3][..4].copy_from_slice(&[0xa0a1a2a3, 0xb0b1b2b3, 0xc0c1c2c3, 0xd0d1d2d3]);
    });
    assert_eq!(
        mem(&m, 0x10100, 7),
        [0xd3, 0xd2, 0xd1, 0xd0, 0xc0, 0xb0, 0xa0]
    );
    // All lanes at one address: the highest active lane wins; with lane 3 masked, lane 2.
    let (m, _) = run_mem(&[store_imm(VSdi, v(3), s(1), 0, false), halt()], |m| {
        m.regs.s[1] = 0x10200;
        m.regs.v[3][..4].copy_from_slice(&[1, 2, 3, 4]);
        m.regs.mask = 0b0111;
    });
    assert_eq!(mem(&m, 0x10200, 8), 3u64.to_le_bytes());
}

/// Inactive lanes do not access memory: they may point anywhere without faulting, and keep
/// their destination element.
#[test]
fn masked_lanes_at_unmapped_memory_do_not_fault() {
    let (m, e) = run_mem(
        &[
            load_rr(VLd, 4, v(1), s(0), 0, false),
            store_rr(VSdU, v(4), v(1), s(0), 0, false),
            li(7, 0b0011),
            setmask(7),
            load_c(VLdC, 6, 2, imm(0), false),
            halt(),
        ],
        |m| {
            m.regs.v[1][..4].copy_from_slice(&[0x10000, 0xdead_0000, 0x10008, u64::MAX]);
            m.regs.v[4][..4].copy_from_slice(&[7, 7, 7, 7]);
            m.regs.v[6][..4].copy_from_slice(&[9, 9, 9, 9]);
            // Then a contiguous group straddling the end of mapped memory (lanes 2, 3
            // unmapped) under mask 0b0011: the group check fails, the per-lane path passes.
            m.regs.s[2] = 0x11ff0;
            m.regs.mask = 0b0101;
        },
    );
    assert_eq!(e, Exit::Halted, "{:?}", m.regs);
    let w = |a: u64| u64::from_le_bytes(std::array::from_fn(|k| pattern(a + k as u64)));
    assert_eq!(m.regs.v[4][..4], [w(0), 7, w(8), 7]);
    assert_eq!(m.regs.v[6][..4], [w(0x1ff0), w(0x1ff8), 9, 9]);
}

#[test]
fn vl_1_and_64_alu_and_contiguous() {
    for vl in [1u32, 64] {
        let mut c = Code::new();
        c.push(li(1, 0x10000));
        c.push(vunary(VLaneid, 1));
        c.push(valu(VMul, 2, 1, imm(3).into_vsrc()));
        c.push(store_c(VSdC, v(2), 1, imm(0), false));
        c.push(load_c(VLwuC, 3, 1, imm(0), false));
        c.push(redsum(4, 2));
        c.push(sunary(SVl, 5));
        c.push(halt());
        let (m, e) = Setup::new(c.words())
            .vl(vl)
            .map(0x10000, 0x1000, MemPerm::Rw)
            .run();
        assert_eq!(e, Exit::Halted);
        let n = vl as u64;
        assert_eq!(m.regs.s[4], 3 * n * (n - 1) / 2);
        assert_eq!(m.regs.s[5], n);
        for i in 0..vl as usize {
            assert_eq!(m.regs.v[2][i], 3 * i as u64);
            // Words of the dword array: lane i reads the low/high half of dword i/2.
            let expect = if i % 2 == 0 { 3 * (i as u64 / 2) } else { 0 };
            assert_eq!(m.regs.v[3][i], expect, "vl {vl} lane {i}");
        }
        assert_eq!(
            mem(&m, 0x10000 + 8 * (n - 1), 8),
            (3 * (n - 1)).to_le_bytes()
        );
        // Lanes >= VL are never written.
        assert!(m.regs.v[2][vl as usize..].iter().all(|&x| x == 0));
    }
}

#[test]
fn s0_reads_zero_and_discards_writes() {
    let (m, e) = Setup::insts(&[
        li(0, 1234),
        salu(SAdd, 0, 0, imm(5)),
        li(1, 77),
        smov(0, 1),
        salu(SAdd, 2, 0, imm(9)),
        smov(3, 0),
        vmov(1, sreg(0)),
        salu(SOr, 4, 1, sr(0)),
        redsum(0, 1),
        sunary(SVl, 0),
        getlane(0, 1, 0),
        halt(),
    ])
    .vl(4)
    .run_with(|m| m.regs.v[1][..4].copy_from_slice(&[5, 5, 5, 5]));
    assert_eq!(e, Exit::Halted);
    assert_eq!(m.regs.s[0], 0);
    assert_eq!(m.regs.s[2], 9);
    assert_eq!(m.regs.s[3], 0);
    assert_eq!(m.regs.s[4], 77);
    assert_eq!(m.regs.v[1][..4], [0; 4]);
}

#[test]
fn scalar_alu_all_ops() {
    let a: u64 = 0xf000_0000_0000_0f0f;
    let b: u64 = 0x0000_0000_0000_0f44; // low 6 bits = 4 (shift amounts mod 64)
    let ops: [(Opcode, u64); 9] = [
        (SAdd, a.wrapping_add(b)),
        (SSub, a.wrapping_sub(b)),
        (SMul, a.wrapping_mul(b)),
        (SAnd, a & b),
        (SOr, a | b),
        (SXor, a ^ b),
        (SShl, a << 4),
        (SShr, a >> 4),
        (SSra, ((a as i64) >> 4) as u64),
    ];
    for (op, want) in ops {
        let (m, _) = Setup::insts(&[li(1, a), li(2, b), salu(op, 3, 1, sr(2)), halt()]).run();
        assert_eq!(m.regs.s[3], want, "{op:?}");
    }
    // Immediates are simm32, sign-extended; shifts by 64 and 65 act as 0 and 1.
    let cases: [(Opcode, u64, i32, u64); 8] = [
        (SAdd, 5, -1, 4),
        (SAnd, u64::MAX, -2, u64::MAX - 1),
        (SXor, 0, i32::MIN, 0xffff_ffff_8000_0000),
        (SShl, 3, 64, 3),
        (SShl, 3, 65, 6),
        (SShr, 0x8000_0000_0000_0000, 127, 1),
        (SSra, 0x8000_0000_0000_0000, 63, u64::MAX),
        (SMul, u64::MAX, i32::MAX, (i32::MAX as u64).wrapping_neg()),
    ];
    for (op, x, i, want) in cases {
        let (m, _) = Setup::insts(&[li(1, x), salu(op, 3, 1, imm(i)), halt()]).run();
        assert_eq!(m.regs.s[3], want, "{op:?} {x:#x} {i}");
    }
    let (m, _) = Setup::insts(&[
        li(1, 0xffff_ffff_ffff_ffff),
        li(2, 1),
        salu(SAdd, 3, 1, sr(2)),
        halt(),
    ])
    .run();
    assert_eq!(m.regs.s[3], 0, "wrapping add");
}

#[test]
fn vector_alu_all_ops_operand_kinds_and_masking() {
    let va: [u64; 4] = [0x8000_0000_0000_0001, 5, u64::MAX, 0x1234];
    let vb: [u64; 4] = [1, 64, 65, 0x8000_0000_0000_0003];
    let ops = [VAdd, VSub, VMul, VAnd, VOr, VXor, VShl, VShr, VSra];
    let f = |op: Opcode, a: u64, b: u64| match op {
        VAdd => a.wrapping_add(b),
        VSub => a.wrapping_sub(b),
        VMul => a.wrapping_mul(b),
        VAnd => a & b,
        VOr => a | b,
        VXor => a ^ b,
        VShl => a << (b % 64),
        VShr => a >> (b % 64),
        _ => ((a as i64) >> (b % 64)) as u64,
    };
    for op in ops {
        for kind in 0..3 {
            let src = match kind {
                0 => vreg(2),
                1 => sreg(2),
                _ => imm(-3).into_vsrc(),
            };
            let (m, e) = Setup::insts(&[valu(op, 3, 1, src), halt()])
                .vl(4)
                .run_with(|m| {
                    m.regs.v[1][..4].copy_from_slice(&va);
                    m.regs.v[2][..4].copy_from_slice(&vb);
                    m.regs.v[3][..4].copy_from_slice(&[11, 22, 33, 44]);
                    m.regs.s[2] = 67;
                    m.regs.mask = 0b1011;
                });
            assert_eq!(e, Exit::Halted);
            for i in 0..4 {
                let b = match kind {
                    0 => vb[i],
                    1 => 67,
                    _ => -3i64 as u64,
                };
                let want = if i == 2 { 33 } else { f(op, va[i], b) };
                assert_eq!(m.regs.v[3][i], want, "{op:?} kind {kind} lane {i}");
            }
        }
    }
}

trait IntoVsrc {
    fn into_vsrc(self) -> lanejit_interp::isa::VSrc;
}
impl IntoVsrc for SOrImm {
    fn into_vsrc(self) -> lanejit_interp::isa::VSrc {
        match self {
            SOrImm::Imm(i) => lanejit_interp::isa::VSrc::Imm(i),
            SOrImm::Reg(r) => lanejit_interp::isa::VSrc::S(r),
        }
    }
}

#[test]
fn vector_moves_and_state_reads_respect_the_mask() {
    let (m, e) = Setup::insts(&[
        vmov(1, imm(-5).into_vsrc()),
        vmov(2, sreg(3)),
        vmov(4, vreg(2)),
        vunary(VLaneid, 5),
        vunary(VLc0, 6),
        sunary(SLc0, 7),
        sunary(SMask, 8),
        sunary(SGid, 9),
        sunary(SVl, 10),
        halt(),
    ])
    .vl(8)
    .run_with(|m| {
        m.regs.s[3] = 0xabc;
        m.regs.s[9] = 1;
        m.regs.mask = 0b0110_0101;
        m.regs.lc0base = u64::MAX - 2;
        for r in [1, 2, 4, 5, 6] {
            m.regs.v[r][..8].copy_from_slice(&[100; 8]);
        }
    });
    assert_eq!(e, Exit::Halted);
    let act = |i: usize| 0b0110_0101u64 >> i & 1 == 1;
    for i in 0..8 {
        let k = |x: u64| if act(i) { x } else { 100 };
        assert_eq!(m.regs.v[1][i], k(-5i64 as u64));
        assert_eq!(m.regs.v[2][i], k(0xabc));
        assert_eq!(m.regs.v[4][i], k(0xabc));
        assert_eq!(m.regs.v[5][i], k(i as u64));
        assert_eq!(m.regs.v[6][i], k((u64::MAX - 2).wrapping_add(i as u64)));
    }
    assert_eq!(m.regs.s[7], u64::MAX - 2);
    assert_eq!(m.regs.s[8], 0b0110_0101);
    assert_eq!(m.regs.s[9], 0);
    assert_eq!(m.regs.s[10], 8);
}

#[test]
fn redsum_setmask_getlane() {
    let (m, e) = Setup::insts(&[
        redsum(1, 2),
        li(3, 0xffff_ffff_ffff_0f0a),
        setmask(3),
        redsum(4, 2),
        sunary(SMask, 5),
        getlane(6, 2, 3),
        getlane(7, 2, 11),
        getlane(8, 2, 63),
        halt(),
    ])
    .vl(8)
    .run_with(|m| {
        m.regs.v[2][..8].copy_from_slice(&[u64::MAX, 2, 3, 4, 5, 6, 7, 8]);
        m.regs.v[2][11] = 999;
    });
    assert_eq!(e, Exit::Halted);
    assert_eq!(
        m.regs.s[1],
        35u64.wrapping_sub(1),
        "wrapping sum of all lanes"
    );
    // mask = low 8 bits = 0x0a: lanes 1 and 3.
    assert_eq!(m.regs.mask, 0x0a);
    assert_eq!(m.regs.s[5], 0x0a);
    assert_eq!(m.regs.s[4], 2 + 4);
    assert_eq!(m.regs.s[6], 4);
    assert_eq!(m.regs.s[7], 4, "lane 11 mod 8 = 3");
    assert_eq!(m.regs.s[8], 8, "lane 63 mod 8 = 7");
    // SETMASK with VL 64 keeps all 64 bits.
    let (m, _) = Setup::insts(&[li(3, u64::MAX - 1), setmask(3), halt()])
        .vl(64)
        .run();
    assert_eq!(m.regs.mask, u64::MAX - 1);
}

#[test]
fn floating_point() {
    let f32b = |x: f32| x.to_bits() as u64;
    let f64b = |x: f64| x.to_bits();
    let nan_s = 0x7fc0_0000u64;
    let nan_d = 0x7ff8_0000_0000_0000u64;
    let run_fp = |op: Opcode, a: u64, b: u64, d: u64| {
        let (m, e) = Setup::insts(&[vfp(op, 3, 1, vreg(2)), vfp(op, 4, 1, sreg(2)), halt()])
            .vl(2)
            .run_with(|m| {
                m.regs.v[1][..2].copy_from_slice(&[a, a]);
                m.regs.v[2][..2].copy_from_slice(&[b, b]);
                m.regs.v[3][..2].copy_from_slice(&[d, d]);
                m.regs.v[4][..2].copy_from_slice(&[d, d]);
                m.regs.s[2] = b;
            });
        assert_eq!(e, Exit::Halted);
        assert_eq!(
            m.regs.v[3][0], m.regs.v[4][1],
            "vector and scalar operand agree"
        );
        m.regs.v[3][0]
    };
    // f32: upper input bits ignored, upper result bits zero.
    let hi = 0xdead_beef_0000_0000u64;
    assert_eq!(run_fp(VFaddS, hi | f32b(1.5), f32b(2.25), 0), f32b(3.75));
    assert_eq!(run_fp(VFsubS, f32b(1.0), f32b(3.0), 0), f32b(-2.0));
    assert_eq!(run_fp(VFmulS, f32b(-1.5), f32b(4.0), 0), f32b(-6.0));
    assert_eq!(
        run_fp(VFmaS, f32b(2.0), f32b(3.0), hi | f32b(1.0)),
        f32b(7.0)
    );
    // Canonical NaN: 0/0-like cases, inf - inf, and a NaN input with a payload.
    assert_eq!(
        run_fp(VFsubS, f32b(f32::INFINITY), f32b(f32::INFINITY), 0),
        nan_s
    );
    assert_eq!(run_fp(VFmulS, f32b(0.0), f32b(f32::INFINITY), 0), nan_s);
    assert_eq!(run_fp(VFaddS, 0xffc0_1234, f32b(1.0), 0), nan_s);
    assert_eq!(run_fp(VFmaS, f32b(1.0), f32b(1.0), 0x7f80_0001), nan_s);
    assert_eq!(
        run_fp(VFaddD, f64b(f64::INFINITY), f64b(f64::NEG_INFINITY), 0),
        nan_d
    );
    assert_eq!(run_fp(VFmulD, 0xfff0_0000_dead_beef, f64b(2.0), 0), nan_d);
    assert_eq!(
        run_fp(VFmaD, f64b(0.0), f64b(f64::INFINITY), f64b(1.0)),
        nan_d
    );
    // Subnormals are kept (no flush to zero).
    let tiny_s = f32::from_bits(1); // smallest subnormal
    assert_eq!(run_fp(VFaddS, f32b(tiny_s), f32b(tiny_s), 0), 2);
    assert_eq!(
        run_fp(VFmulS, f32b(f32::MIN_POSITIVE), f32b(0.5), 0),
        0x0040_0000
    );
    assert_eq!(run_fp(VFsubD, 2, 1, 0), 1);
    assert_eq!(
        run_fp(VFmulD, f64b(f64::MIN_POSITIVE), f64b(0.25), 0),
        0x0004_0000_0000_0000
    );
    // Round to nearest even: 1 + 2^-24 rounds to 1 in f32; 1 + 3*2^-24 rounds up.
    assert_eq!(
        run_fp(VFaddS, f32b(1.0), f32b(2f32.powi(-24)), 0),
        f32b(1.0)
    );
    assert_eq!(
        run_fp(VFaddS, f32b(1.0), f32b(3.0 * 2f32.powi(-24)), 0),
        f32b(1.0 + 2f32.powi(-22))
    );
    // Fused: (1 + 2^-23)(1 - 2^-23) - 1 = -2^-46 exactly; unfused rounding would give 0.
    let a = 1.0f32 + 2f32.powi(-23);
    let b = 1.0f32 - 2f32.powi(-23);
    assert_eq!(a * b - 1.0, 0.0);
    assert_eq!(
        run_fp(VFmaS, f32b(a), f32b(b), f32b(-1.0)),
        f32b(-(2f32.powi(-46)))
    );
    let a = 1.0f64 + 2f64.powi(-52);
    let b = 1.0f64 - 2f64.powi(-52);
    assert_eq!(a * b - 1.0, 0.0);
    assert_eq!(
        run_fp(VFmaD, f64b(a), f64b(b), f64b(-1.0)),
        f64b(-(2f64.powi(-104)))
    );
    // FP writes only active lanes.
    let (m, _) = Setup::insts(&[vfp(VFaddD, 3, 1, vreg(1)), halt()])
        .vl(2)
        .run_with(|m| {
            m.regs.v[1][..2].copy_from_slice(&[f64b(1.0), f64b(2.0)]);
            m.regs.v[3][..2].copy_from_slice(&[5, 6]);
            m.regs.mask = 0b10;
        });
    assert_eq!(m.regs.v[3][..2], [5, f64b(4.0)]);
}

/// `LOOP s1 ; S.ADD s2, s2, 1 ; V.LC0 v1 ; S.MASK s3 ; ENDLOOP ; HALT` with VL 8.
fn run_loop(trip: u64, vl: u32) -> (Machine, Exit) {
    let mut c = Code::new();
    c.push(li(1, trip));
    c.hw_loop(1, |c| {
        c.push(salu(SAdd, 2, 2, imm(1)));
        c.push(vunary(VLc0, 1));
        c.push(sunary(SMask, 3));
        c.push(salu(SOr, 4, 4, sr(3)));
        c.push(li(1, 0)); // changing s1 inside the loop does not change the latched trip
    });
    c.push(halt());
    Setup::new(c.words()).vl(vl).run()
}

#[test]
fn hardware_loop_trip_counts() {
    let vl = 8u64;
    for trip in [0u64, 1, vl - 1, vl, vl + 1, 1000] {
        let (m, e) = run_loop(trip, vl as u32);
        assert_eq!(e, Exit::Halted);
        let iters = trip.div_ceil(vl);
        assert_eq!(m.regs.s[2], iters, "trip {trip}");
        assert_eq!(m.regs.trip, trip);
        // S.LI, LOOP, per iteration 6 (body 5 with a 2-word S.LI counted once + ENDLOOP), HALT.
        assert_eq!(m.retired, 1 + 1 + 6 * iters + 1, "trip {trip}");
        assert_eq!(m.regs.mask, 0xff, "mask restored");
        if trip == 0 {
            assert_eq!(m.regs.lc0base, 0);
            assert_eq!(m.regs.s[4], 0);
            continue;
        }
        assert_eq!(m.regs.lc0base, iters * vl, "trip {trip}");
        let last = (iters - 1) * vl;
        let active = trip - last;
        let want_mask = if active >= vl {
            0xff
        } else {
            (1 << active) - 1
        };
        assert_eq!(
            m.regs.s[3], want_mask,
            "mask in the last group, trip {trip}"
        );
        for i in 0..vl {
            // Active lanes of the last group hold its lc0; the others keep the previous one's.
            if i < active {
                assert_eq!(m.regs.v[1][i as usize], last + i, "trip {trip} lane {i}");
            } else if iters > 1 {
                assert_eq!(
                    m.regs.v[1][i as usize],
                    last - vl + i,
                    "trip {trip} lane {i}"
                );
            } else {
                assert_eq!(m.regs.v[1][i as usize], 0, "trip {trip} lane {i}");
            }
        }
    }
}

#[test]
fn loop_with_zero_trip_keeps_lc0base_and_mask() {
    let mut c = Code::new();
    c.push(li(5, 0b0110));
    c.push(setmask(5));
    c.push(li(1, 0));
    let (_, end) = c.hw_loop(1, |c| {
        c.push(li(2, 99));
    });
    c.push(halt());
    let (m, e) = Setup::new(c.words())
        .vl(4)
        .run_with(|m| m.regs.lc0base = 12);
    assert_eq!(e, Exit::Halted);
    assert_eq!(m.regs.s[2], 0);
    assert_eq!(m.regs.mask, 0b0110);
    assert_eq!(m.regs.lc0base, 12);
    assert_eq!(m.retired, 5);
    assert_eq!(m.pc, (end as u64 + 1) * 8);
}

#[test]
fn branching_out_of_a_loop_keeps_its_state() {
    let mut c = Code::new();
    c.push(li(1, 100));
    let exit_at = std::cell::Cell::new(0);
    c.hw_loop(1, |c| {
        c.push(salu(SAdd, 2, 2, imm(1)));
        // leave in the third iteration
        let b = c.here();
        exit_at.set(b);
        c.push(branch(Beq, 2, imm(3), 0)); // patched below
    });
    let out = c.here();
    c.push(halt());
    let mut words = c.words();
    let bi = exit_at.get() as usize;
    words[bi] = branch(Beq, 2, imm(3), out).encode().first;
    let (m, e) = Setup::new(words).vl(8).run();
    assert_eq!(e, Exit::Halted);
    assert_eq!(m.regs.s[2], 3);
    assert_eq!(m.regs.lc0base, 16);
    assert_eq!(m.regs.mask, 0xff);
    // ENDLOOP without a preceding LOOP in this run uses the latched trip 0.
    let mut c = Code::new();
    c.push(mk(
        Endloop,
        lanejit_interp::isa::EndLoop {
            body: lanejit_interp::isa::Target(0),
        },
    ));
    c.push(halt());
    let (m, e) = Setup::new(c.words()).vl(4).run_with(|m| m.regs.mask = 1);
    assert_eq!(e, Exit::Halted);
    assert_eq!(m.regs.lc0base, 4);
    assert_eq!(m.regs.mask, 0xf);
    assert_eq!(m.retired, 2);
}

#[test]
fn branches_signed_unsigned_and_immediates() {
    let cases: [(Opcode, u64, SOrImm, u64, bool); 14] = [
        (Beq, 5, sr(2), 5, true),
        (Beq, 5, sr(2), 6, false),
        (Bne, 5, sr(2), 6, true),
        (Bne, 5, imm(5), 0, false),
        (Blt, u64::MAX, sr(2), 0, true),
        (Bltu, u64::MAX, sr(2), 0, false),
        (Bge, 0, sr(2), u64::MAX, true),
        (Bgeu, 0, sr(2), u64::MAX, false),
        (Bge, 7, sr(2), 7, true),
        (Blt, 7, sr(2), 7, false),
        (Beq, u64::MAX, imm(-1), 0, true),
        (Bltu, 0x7fff, imm(-1), 0, true),
        (Blt, 0x7fff, imm(-1), 0, false),
        (Bgeu, 0x8000, imm(0x7fff), 0, true),
    ];
    for (op, a, b, breg, taken) in cases {
        // 0: S.LI s1 (2 words); 2: S.LI s2; 4: Bxx -> 7; 5: S.LI s3, 1 (2 words); 7: HALT
        let (m, e) =
            Setup::insts(&[li(1, a), li(2, breg), branch(op, 1, b, 7), li(3, 1), halt()]).run();
        assert_eq!(e, Exit::Halted);
        assert_eq!(m.regs.s[3] == 0, taken, "{op:?} {a:#x} {b:?} {breg:#x}");
        assert_eq!(m.pc, 7 * 8);
        assert_eq!(m.retired, if taken { 4 } else { 5 });
    }
    // J, NOP.
    let (m, e) = Setup::insts(&[j(3), li(1, 1), nop(), halt()]).run();
    assert_eq!(e, Exit::Halted);
    assert_eq!(m.regs.s[1], 0);
    assert_eq!(m.retired, 3);
}

#[test]
fn budget_is_exact() {
    // A loop that never ends: 0: S.ADD s1, s1, 1; 1: J 0
    let prog = Setup::insts(&[salu(SAdd, 1, 1, imm(1)), j(0)]);
    for n in [0u64, 1, 2, 7, 1001] {
        let (m, e) = prog.clone().limit(n).run();
        assert_eq!(e, Exit::Limit);
        assert_eq!(m.retired, n);
        assert_eq!(m.regs.s[1], n.div_ceil(2));
        assert_eq!(
            m.pc,
            if n % 2 == 0 { 0 } else { 8 },
            "next instruction, n = {n}"
        );
    }
    // A HALT that retires as the Nth ends as halted; with N - 1 it is a limit before HALT.
    let prog = Setup::insts(&[li(1, 5), nop(), halt()]);
    let (m, e) = prog.clone().limit(3).run();
    assert_eq!((e, m.retired, m.pc), (Exit::Halted, 3, 24));
    let (m, e) = prog.clone().limit(2).run();
    assert_eq!((e, m.retired, m.pc), (Exit::Limit, 2, 24));
    // The limit stops even before an instruction that would trap.
    let (m, e) = Setup::new(vec![nop().encode().first, 0]).limit(1).run();
    assert_eq!((e, m.retired, m.pc), (Exit::Limit, 1, 8));
    // A LOOP/ENDLOOP pair retires each time.
    let mut c = Code::new();
    c.push(li(1, 24));
    c.hw_loop(1, |c| {
        c.push(nop());
    });
    c.push(halt());
    let (m, e) = Setup::new(c.words()).vl(8).limit(6).run();
    assert_eq!((e, m.retired), (Exit::Limit, 6));
    assert_eq!(m.regs.lc0base, 16, "two ENDLOOPs retired");
}

#[test]
fn step_and_run_block() {
    let mut c = Code::new();
    c.push(li(1, 2)); // 0
    c.push(salu(SAdd, 2, 2, imm(1))); // 2
    c.push(branch(Bne, 2, sr(1), 2)); // 3
    c.push(halt()); // 4
    let st = Setup::new(c.words());
    let d = st.decoded();
    assert_eq!(d.len(), 5);
    assert!(
        d.inst(1).is_none(),
        "the S.LI immediate word does not decode as anything"
    );
    assert!(d.ends_block(3) && !d.ends_block(2));
    let mut m = st.machine();
    assert_eq!(interp::step(&mut m, &d), None);
    assert_eq!((m.pc, m.retired, m.regs.s[1]), (16, 1, 2));
    assert_eq!(interp::run_block(&mut m, &d), None);
    assert_eq!((m.pc, m.retired, m.regs.s[2]), (16, 3, 1));
    assert_eq!(interp::run_block(&mut m, &d), None);
    assert_eq!((m.pc, m.retired, m.regs.s[2]), (32, 5, 2));
    assert_eq!(interp::step(&mut m, &d), Some(Exit::Halted));
    assert_eq!((m.pc, m.retired), (32, 6));
    // step at the HALT again halts again (and retires it again).
    assert_eq!(interp::run_block(&mut m, &d), Some(Exit::Halted));
    assert_eq!(m.retired, 7);
    // step honours the budget first.
    let mut m = st.clone().limit(1).machine();
    assert_eq!(interp::step(&mut m, &d), None);
    assert_eq!(interp::step(&mut m, &d), Some(Exit::Limit));
    assert_eq!((m.pc, m.retired), (16, 1));
}

#[test]
fn trace_reports_each_retired_instruction_and_its_changes() {
    let mut c = Code::new();
    c.push(li(1, 3));
    c.hw_loop(1, |c| {
        c.push(vunary(VLc0, 2));
    });
    c.push(sunary(SMask, 4));
    c.push(halt());
    let st = Setup::new(c.words()).vl(4);
    let mut m = st.machine();
    let mut lines = Vec::new();
    let mut events = Vec::new();
    let e = interp::run_traced(&mut m, &st.decoded(), &mut |ev| {
        lines.push(ev.to_string());
        events.push(ev.clone());
    });
    assert_eq!(e, Exit::Halted);
    assert_eq!(events.len() as u64, m.retired);
    assert_eq!(events.len(), 6);
    use lanejit_interp::interp::Change;
    assert_eq!(events[0].pc, 0);
    assert_eq!(events[0].changes, vec![Change::Scalar { reg: 1, value: 3 }]);
    assert_eq!(events[1].pc, 16);
    assert_eq!(
        events[1].changes,
        vec![Change::Mask(0b111), Change::Trip(3)]
    );
    assert_eq!(
        events[2].changes,
        vec![Change::Vector {
            reg: 2,
            lanes: vec![0, 1, 2, 0]
        }]
    );
    assert_eq!(
        events[3].changes,
        vec![Change::Mask(0xf), Change::Lc0Base(4)]
    );
    assert_eq!(
        events[4].changes,
        vec![Change::Scalar { reg: 4, value: 0xf }]
    );
    assert!(events[5].changes.is_empty());
    assert!(lines[0].starts_with("0x0000  S.LI s1, 0x3"), "{}", lines[0]);
    assert!(lines[0].ends_with(" s1=0x3"), "{}", lines[0]);
    assert!(
        lines[2].contains("V.LC0 v2") && lines[2].ends_with("v2=[0x0 0x1 0x2 0x0]"),
        "{}",
        lines[2]
    );
    assert!(lines[5].contains("HALT"));
    // The traced and untraced runs agree.
    let (m2, e2) = st.run();
    assert_eq!(e2, e);
    assert_eq!(*m2.regs, *m.regs);
    assert_eq!(m2.retired, m.retired);
}

#[test]
fn smoke_copy_loop() {
    let mut c = Code::new();
    c.push(li(1, 0x1000));
    c.push(li(2, 0x2000));
    c.push(li(3, 40));
    c.hw_loop(3, |c| {
        c.push(load_c(VLwC, 1, 1, imm(0), false));
        c.push(store_c(VSwC, v(1), 2, imm(0), false));
    });
    c.push(halt());
    let data: Vec<u32> = (0..40).map(|i| 0x8000_0000 | i).collect();
    let st = Setup::new(c.words())
        .vl(16)
        .map(0x1000, 0x2000, MemPerm::Rw)
        .data(0x1000, &le32(&data));
    let (m, e) = st.run();
    assert_eq!(e, Exit::Halted);
    assert_eq!(mem(&m, 0x2000, 160), le32(&data));
    // 3 S.LI + LOOP + 3 * (2 + ENDLOOP) + HALT
    assert_eq!(m.retired, 3 + 1 + 9 + 1);
    assert_eq!(m.regs.lc0base, 48);
    assert_eq!(m.regs.mask, 0xffff);
    // last group: lanes 0..8 active (lc0 32..40); sign-extended words
    assert_eq!(m.regs.v[1][0], 0xffff_ffff_8000_0020);
    let _ = interp::step;
}

/// Throughput of the copy kernel (VL 32, contiguous `V.LW` + `V.SW` + `ENDLOOP` per group) at
/// 256 KiB (and 16 KiB), next to plain Rust copy loops on the same data. Not a timed test: it
/// only prints (best of 7 runs each). Run with
/// `cargo test --release -p lanejit-interp --test semantics -- --ignored --nocapture copy_kernel`.
#[test]
#[ignore]
fn copy_kernel_throughput() {
    // `LANEJIT_COPY_SCALE=k` divides the repetitions (e.g. under callgrind).
    let scale: u64 = std::env::var("LANEJIT_COPY_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    copy_kernel_at(1 << 20, (12 / scale).max(1)); // 1M elements (4 MiB), issue 2's figure
    copy_kernel_at(64 * 1024, (200 / scale).max(1)); // 256 KiB of words
    copy_kernel_at(4 * 1024, (3200 / scale).max(1)); // 16 KiB, cache resident
}

fn best_of(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let t = std::time::Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn copy_kernel_at(n: u64, reps: u64) {
    // dst follows src with a gap, so the regions never overlap at any size.
    let src = 0x10_0000u64;
    let dst = src + n * 4 + 0x10_0000;
    let mut c = Code::new();
    c.push(li(1, src));
    c.push(li(2, dst));
    c.push(li(3, n));
    c.push(li(5, reps));
    let outer = c.here();
    c.hw_loop(3, |c| {
        c.push(load_c(VLwC, 1, 1, imm(0), false));
        c.push(store_c(VSwC, v(1), 2, imm(0), false));
    });
    c.push(salu(SSub, 5, 5, imm(1)));
    c.push(branch(Bne, 5, imm(0), outer));
    c.push(halt());
    let data: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
    let st = Setup::new(c.words())
        .vl(32)
        .map(src, n * 4, MemPerm::Rw)
        .map(dst, n * 4, MemPerm::Rw)
        .data(src, &le32(&data));
    let mut m = st.machine();
    let d = st.decoded();
    let elems = (n * reps) as f64;
    // The first run also touches the destination pages.
    let secs = best_of(7, || {
        m.pc = 0;
        m.retired = 0;
        assert_eq!(interp::run(&mut m, &d), Exit::Halted);
    });
    assert_eq!(mem(&m, dst, n * 4), le32(&data));
    println!(
        "{} KiB: interp copy kernel: {:.3} G elements/s ({} guest instructions per run)",
        n * 4 / 1024,
        elems / secs / 1e9,
        m.retired
    );
    let a: Vec<u32> = data.clone();
    let mut b = vec![0u32; n as usize];
    let secs = best_of(7, || {
        for _ in 0..reps {
            for (x, y) in b.iter_mut().zip(std::hint::black_box(&a)) {
                *x = *y;
            }
            std::hint::black_box(&mut b);
        }
    });
    assert_eq!(b, a);
    println!(
        "{} KiB: plain Rust copy loop: {:.3} G elements/s",
        n * 4 / 1024,
        elems / secs / 1e9
    );
    let secs = best_of(7, || {
        for _ in 0..reps {
            for (x, y) in b.iter_mut().zip(std::hint::black_box(&a)) {
                *x = std::hint::black_box(*y);
            }
            std::hint::black_box(&mut b);
        }
    });
    println!(
        "{} KiB: plain Rust copy loop, one element at a time (black_box per element): {:.3} G elements/s",
        n * 4 / 1024,
        elems / secs / 1e9
    );
}
