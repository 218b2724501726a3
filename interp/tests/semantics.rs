//! Semantics of every instruction on the reference interpreter (contract sections 1-5).
//!
//! The memory tests compare against a small model written here straight from the contract's
//! table (section 3), not from the crate's `MemSem` helpers: every seed mnemonic, each width,
//! signedness, addressing form and operand kind, in memory and in tile space.

mod support;

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
    copy_kernel_at(64 * 1024, 200); // 256 KiB of words
    copy_kernel_at(4 * 1024, 3200); // 16 KiB, cache resident
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
    let (src, dst) = (0x10_0000u64, 0x20_0000u64);
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
