//! Every memory mnemonic in every addressing form (with and without `.local`) assembles to
//! the expected instruction; the contract's and the seed's examples.

use lanejit_interp::asm::{AsmErrorKind, assemble};
use lanejit_interp::isa::*;

fn one(src: &str) -> Inst {
    let p = assemble(src, "t.s").unwrap_or_else(|e| panic!("{e}"));
    Inst::decode(&p.code).unwrap()
}

fn err(src: &str) -> AsmErrorKind {
    match assemble(src, "t.s") {
        Ok(_) => panic!("`{src}` assembled"),
        Err(e) => e.errors[0].kind.clone(),
    }
}

fn load_rr(i: &Inst) -> LoadRR {
    match i {
        Inst::VLb(x)
        | Inst::VLh(x)
        | Inst::VLw(x)
        | Inst::VLd(x)
        | Inst::VLbu(x)
        | Inst::VLhu(x)
        | Inst::VLwu(x) => *x,
        _ => panic!("not LoadRR: {i}"),
    }
}
fn load_imm(i: &Inst) -> LoadImm {
    match i {
        Inst::VLbi(x)
        | Inst::VLhi(x)
        | Inst::VLwi(x)
        | Inst::VLdi(x)
        | Inst::VLbui(x)
        | Inst::VLhui(x)
        | Inst::VLwui(x)
        | Inst::VLhiU(x)
        | Inst::VLwiU(x)
        | Inst::VLdiU(x)
        | Inst::VLhuiU(x)
        | Inst::VLwuiU(x) => *x,
        _ => panic!("not LoadImm: {i}"),
    }
}
fn load_c(i: &Inst) -> LoadC {
    match i {
        Inst::VLbC(x)
        | Inst::VLhC(x)
        | Inst::VLwC(x)
        | Inst::VLdC(x)
        | Inst::VLbuC(x)
        | Inst::VLhuC(x)
        | Inst::VLwuC(x) => *x,
        _ => panic!("not LoadC: {i}"),
    }
}
fn store_rr(i: &Inst) -> StoreRR {
    match i {
        Inst::VSb(x)
        | Inst::VSh(x)
        | Inst::VSw(x)
        | Inst::VSd(x)
        | Inst::VShU(x)
        | Inst::VSwU(x)
        | Inst::VSdU(x) => *x,
        _ => panic!("not StoreRR: {i}"),
    }
}
fn store_imm(i: &Inst) -> StoreImm {
    match i {
        Inst::VSbi(x)
        | Inst::VShi(x)
        | Inst::VSwi(x)
        | Inst::VSdi(x)
        | Inst::VShiU(x)
        | Inst::VSwiU(x)
        | Inst::VSdiU(x) => *x,
        _ => panic!("not StoreImm: {i}"),
    }
}
fn store_c(i: &Inst) -> StoreC {
    match i {
        Inst::VSbC(x) | Inst::VShC(x) | Inst::VSwC(x) | Inst::VSdC(x) => *x,
        _ => panic!("not StoreC: {i}"),
    }
}

fn mem_ops() -> impl Iterator<Item = (Opcode, MemSem)> {
    Opcode::ALL.iter().filter_map(|&o| o.mem().map(|m| (o, m)))
}

fn with(op: Opcode, mode: Mode) -> Opcode {
    let m = op.mem().unwrap();
    Opcode::ALL
        .iter()
        .copied()
        .find(|o| o.mem() == Some(MemSem { mode, ..m }))
        .unwrap()
}

const LOCALS: [(&str, bool); 3] = [("", false), (".local", true), (".LOCAL", true)];
const S1: Reg = Reg::S(1);
const V2: Reg = Reg::V(2);

#[test]
fn register_offset_loads() {
    for (op, m) in mem_ops().filter(|(o, _)| o.format() == FormatKind::LoadRR) {
        for (suf, local) in LOCALS {
            let mn = format!("{}{suf}", op.mnemonic());
            let cases: [(String, Reg, Reg, u8); 6] = [
                (format!("{mn} [s1 + (v2 << 3)], ->v3"), S1, V2, 3),
                (format!("{mn} [s1 + v2], ->v3"), S1, V2, 0),
                (format!("{mn}[s1+(v2<<0)],->v3"), S1, V2, 0),
                (
                    format!("{mn} [v5 + (s7 << 31)], ->v3"),
                    Reg::V(5),
                    Reg::S(7),
                    31,
                ),
                (format!("{mn} [s1 + lc0 << 2], ->v3"), S1, Reg::Lc0, 2),
                (
                    format!("{} [S1 + (V2 << {})], ->V3", mn.to_lowercase(), m.log2e),
                    S1,
                    V2,
                    m.log2e,
                ),
            ];
            for (src, base, off, shamt) in cases {
                let i = one(&src);
                assert_eq!(i.opcode(), op, "{src}");
                assert_eq!(
                    load_rr(&i),
                    LoadRR {
                        dst: VReg(3),
                        base,
                        off,
                        shamt,
                        local
                    },
                    "{src}"
                );
            }
            // A load's register offset never adds the width shift; (a + b) is a store spelling.
            assert_eq!(
                err(&format!("{mn} [s1 + (v2 << (2 + 1))], ->v3")),
                AsmErrorKind::ShiftSumNotAllowed
            );
            assert!(matches!(
                err(&format!("{mn} [s1 + (v2 << 32)], ->v3")),
                AsmErrorKind::ShiftRange {
                    min: 0,
                    max: 31,
                    ..
                }
            ));
        }
    }
}

#[test]
fn immediate_loads_and_stores() {
    let imm_ops =
        mem_ops().filter(|(o, _)| matches!(o.format(), FormatKind::LoadImm | FormatKind::StoreImm));
    for (op, m) in imm_ops {
        let scaled = m.mode == (Mode::Imm { scaled: true }) && m.log2e > 0;
        let k = m.log2e;
        let store = m.dir == Dir::Store;
        for (suf, local) in LOCALS {
            let mn = format!("{}{suf}", op.mnemonic());
            let wrap = |addr: &str| {
                if store {
                    format!("{mn} v4, {addr}")
                } else {
                    format!("{mn} {addr}, ->v4")
                }
            };
            let w = |v: &str| {
                if scaled {
                    format!("({v} << {k})")
                } else {
                    v.to_string()
                }
            };
            let cases: Vec<(String, Reg, i32)> = vec![
                (wrap(&format!("[s1 + {}]", w("5"))), S1, 5),
                (wrap(&format!("[s1 - {}]", w("7"))), S1, -7),
                (wrap(&format!("[s1 + {}]", w("-7"))), S1, -7),
                (
                    wrap(&format!("[v9 + {}]", w("8388607"))),
                    Reg::V(9),
                    8388607,
                ),
                (wrap(&format!("[s1 + {}]", w("-8388608"))), S1, -8388608),
                (wrap(&format!("[s1 - {}]", w("8388608"))), S1, -8388608),
                (wrap(&format!("[s1 + {}]", w("0x10"))), S1, 16),
                (wrap("[s1]"), S1, 0),
                (wrap("[s1 + 0]"), S1, 0),
            ];
            for (src, base, imm) in cases {
                let i = one(&src);
                assert_eq!(i.opcode(), op, "{src}");
                if store {
                    assert_eq!(
                        store_imm(&i),
                        StoreImm {
                            src: Reg::V(4),
                            base,
                            imm,
                            local
                        },
                        "{src}"
                    );
                } else {
                    assert_eq!(
                        load_imm(&i),
                        LoadImm {
                            dst: VReg(4),
                            base,
                            imm,
                            local
                        },
                        "{src}"
                    );
                }
            }
            // Out of simm24.
            assert!(matches!(
                err(&wrap(&format!("[s1 + {}]", w("8388608")))),
                AsmErrorKind::ImmRange { what: "simm24", .. }
            ));
            assert!(matches!(
                err(&wrap(&format!("[s1 - {}]", w("8388609")))),
                AsmErrorKind::ImmRange { what: "simm24", .. }
            ));
            // Shift rules.
            if scaled {
                let e = err(&wrap("[s1 + 5]"));
                assert_eq!(
                    e,
                    AsmErrorKind::ScaledImmShift {
                        mnemonic: mn.replace(".LOCAL", ".local"),
                        scale: 1 << k,
                        k: k as u32
                    }
                );
                assert_eq!(
                    e.to_string(),
                    format!(
                        "{} scales its immediate by {}: write (imm << {k})",
                        mn.replace(".LOCAL", ".local"),
                        1 << k
                    )
                );
                assert!(matches!(
                    err(&wrap(&format!("[s1 + (5 << {})]", k + 1))),
                    AsmErrorKind::ScaledImmShift { .. }
                ));
            } else {
                assert!(matches!(
                    err(&wrap("[s1 + (5 << 1)]")),
                    AsmErrorKind::UnscaledImmShift { .. } | AsmErrorKind::ScaledImmShift { .. }
                ));
            }
            // An I mnemonic with a register offset.
            assert!(matches!(
                err(&wrap("[s1 + v2]")),
                AsmErrorKind::ImmFormReg { .. }
            ));
            // No contiguous form for I mnemonics.
            assert!(matches!(
                err(&wrap("[s1, lc0, 0]")),
                AsmErrorKind::NoContigForm { .. }
            ));
        }
    }
}

#[test]
fn register_form_mnemonic_with_immediate_is_the_i_form() {
    for (op, m) in mem_ops().filter(|(o, m)| {
        matches!(o.format(), FormatKind::LoadRR | FormatKind::StoreRR)
            && m.mode != (Mode::RegOff { add_width: false })
            || (o.format() == FormatKind::LoadRR)
    }) {
        if !matches!(op.format(), FormatKind::LoadRR | FormatKind::StoreRR)
            || (m.dir == Dir::Store && m.mode == (Mode::RegOff { add_width: false }))
        {
            continue;
        }
        let iop = with(op, Mode::Imm { scaled: true });
        let k = m.log2e;
        let store = m.dir == Dir::Store;
        for (suf, local) in LOCALS {
            let mn = format!("{}{suf}", op.mnemonic());
            let wrap = |addr: &str| {
                if store {
                    format!("{mn} v1, {addr}")
                } else {
                    format!("{mn} {addr}, ->v1")
                }
            };
            let shifted = if k > 0 {
                format!("[s1 + (5 << {k})]")
            } else {
                "[s1 + 5]".to_string()
            };
            for (src, imm) in [
                (wrap(&shifted), 5),
                (wrap("[s1]"), 0),
                (wrap("[s1 - 0]"), 0),
            ] {
                let i = one(&src);
                assert_eq!(i.opcode(), iop, "{src}");
                if store {
                    assert_eq!(
                        store_imm(&i),
                        StoreImm {
                            src: Reg::V(1),
                            base: S1,
                            imm,
                            local
                        }
                    );
                } else {
                    assert_eq!(
                        load_imm(&i),
                        LoadImm {
                            dst: VReg(1),
                            base: S1,
                            imm,
                            local
                        }
                    );
                }
                // It disassembles to the canonical I form.
                assert!(i.to_string().starts_with(iop.mnemonic()));
            }
            let bad = if k > 0 {
                format!("[s1 + (5 << {})]", k - 1)
            } else {
                "[s1 + (5 << 1)]".to_string()
            };
            match err(&wrap(&bad)) {
                AsmErrorKind::RegFormImm { suggest, .. } => {
                    assert!(suggest.contains(iop.mnemonic()), "{suggest}")
                }
                e => panic!("{e:?}"),
            }
        }
    }
}

#[test]
fn register_offset_stores() {
    for (op, m) in mem_ops().filter(|(o, _)| o.format() == FormatKind::StoreRR) {
        let k = m.log2e as u32;
        let add = m.mode == (Mode::RegOff { add_width: true });
        for (suf, local) in LOCALS {
            let mn = format!("{}{suf}", op.mnemonic());
            let mut cases: Vec<(String, Reg, u8)> = vec![];
            if add && k > 0 {
                cases.push((format!("{mn} v4, [s1 + (v2 << ({k} + 2))]"), V2, 2));
                cases.push((format!("{mn} v4, [s1 + (v2 << {})]", k + 2), V2, 2));
                cases.push((format!("{mn} v4, [s1 + (v2 << {k})]"), V2, 0));
                cases.push((format!("{mn} v4, [s1 + (v2 << ({k} + 0))]"), V2, 0));
                cases.push((format!("{mn} v4, [s1 + (v2 << ({k} + 31))]"), V2, 31));
                cases.push((format!("{mn} v4, [s1 + (v2 << {})]", k + 31), V2, 31));
                cases.push((format!("{mn} s4, [s1 + (lc0 << {k})]"), Reg::Lc0, 0));
                assert!(matches!(
                    err(&format!("{mn} v4, [s1 + v2]")),
                    AsmErrorKind::StoreShiftMissing { .. }
                ));
                assert!(matches!(
                    err(&format!("{mn} v4, [s1 + (v2 << {})]", k + 32)),
                    AsmErrorKind::ShiftRange { .. }
                ));
                assert!(matches!(
                    err(&format!("{mn} v4, [s1 + (v2 << {})]", k - 1)),
                    AsmErrorKind::ShiftRange { .. }
                ));
                assert!(matches!(
                    err(&format!("{mn} v4, [s1 + (v2 << ({} + 1))]", k + 1)),
                    AsmErrorKind::ShiftSumBase { .. }
                ));
            } else {
                cases.push((format!("{mn} v4, [s1 + v2]"), V2, 0));
                cases.push((format!("{mn} v4, [s1 + (v2 << 3)]"), V2, 3));
                cases.push((format!("{mn} v4, [s1 + (v2 << 31)]"), V2, 31));
                cases.push((format!("{mn} s4, [s1 + lc0]"), Reg::Lc0, 0));
                assert_eq!(
                    err(&format!("{mn} v4, [s1 + (v2 << (0 + 1))]")),
                    AsmErrorKind::ShiftSumNotAllowed
                );
            }
            for (src, off, shamt) in cases {
                let i = one(&src);
                assert_eq!(i.opcode(), op, "{src}");
                let data = if src.contains(" s4,") {
                    Reg::S(4)
                } else {
                    Reg::V(4)
                };
                assert_eq!(
                    store_rr(&i),
                    StoreRR {
                        src: data,
                        base: S1,
                        off,
                        shamt,
                        local
                    },
                    "{src}"
                );
            }
            if !add {
                // .U register forms take register offsets only.
                assert!(matches!(
                    err(&format!("{mn} v4, [s1 + 8]")),
                    AsmErrorKind::UFormImm { .. }
                ));
                assert!(matches!(
                    err(&format!("{mn} v4, [s1, lc0<<{k}, 0]")),
                    AsmErrorKind::NoContigForm { .. }
                ));
            }
        }
    }
}

#[test]
fn contiguous_forms() {
    for (op, m) in
        mem_ops().filter(|(o, _)| matches!(o.format(), FormatKind::LoadC | FormatKind::StoreC))
    {
        let k = m.log2e;
        let store = m.dir == Dir::Store;
        for (suf, local) in LOCALS {
            let mn = format!("{}{suf}", op.mnemonic());
            let wrap = |addr: &str| {
                if store {
                    format!("{mn} v4, {addr}")
                } else {
                    format!("{mn} {addr}, ->v4")
                }
            };
            let mut cases = vec![
                (wrap(&format!("[s1, lc0<<{k}, s2]")), SOrImm::Reg(SReg(2))),
                (wrap(&format!("[s1,lc0<<{k},-8]")), SOrImm::Imm(-8)),
                (wrap(&format!("[s1, lc0 << {k}]")), SOrImm::Imm(0)),
                (
                    wrap(&format!("[s1, (lc0 << {k}), 8388607]")),
                    SOrImm::Imm(8388607),
                ),
                (
                    wrap(&format!("[s1, lc0<<{k}, -8388608]")),
                    SOrImm::Imm(-8388608),
                ),
            ];
            if k == 0 {
                cases.push((wrap("[s1, lc0, 0]"), SOrImm::Imm(0)));
                cases.push((wrap("[s1, lc0]"), SOrImm::Imm(0)));
            }
            for (src, off) in cases {
                let i = one(&src);
                assert_eq!(i.opcode(), op, "{src}");
                if store {
                    assert_eq!(
                        store_c(&i),
                        StoreC {
                            src: Reg::V(4),
                            base: SReg(1),
                            off,
                            local
                        },
                        "{src}"
                    );
                } else {
                    assert_eq!(
                        load_c(&i),
                        LoadC {
                            dst: VReg(4),
                            base: SReg(1),
                            off,
                            local
                        },
                        "{src}"
                    );
                }
            }
            assert!(matches!(
                err(&wrap(&format!("[s1, lc0<<{}, 0]", k + 1))),
                AsmErrorKind::ContigShift { .. }
            ));
            assert!(matches!(
                err(&wrap(&format!("[s1, s2<<{k}, 0]"))),
                AsmErrorKind::ContigShift { .. }
            ));
            assert!(matches!(
                err(&wrap(&format!("[v1, lc0<<{k}, 0]"))),
                AsmErrorKind::WrongRegister { .. }
            ));
            assert!(matches!(
                err(&wrap(&format!("[s1, lc0<<{k}, v2]"))),
                AsmErrorKind::WrongRegister { .. }
            ));
            assert!(matches!(
                err(&wrap(&format!("[s1, lc0<<{k}, 8388608]"))),
                AsmErrorKind::ImmRange { .. }
            ));
        }
    }
}

#[test]
fn contract_section_6_examples() {
    let src = "
V.LW   [s1 + (v2 << 3)], ->v3          ; reg-reg, shamt 3 ([s1 + v2] when shamt is 0)
V.LHI  [s1 + (5 << 1)], ->v3           ; scaled imm: the written shift must equal log2 E
V.LWI.U [s1 + -7], ->v3                ; unscaled imm ([s1 - 7] also accepted)
V.SD   v4, [s1 + (v2 << (3 + 2))]      ; store reg-reg: shamt 2; [s1 + (v2 << 5)] is the same
V.SWI  v4, [s1 + (9 << 2)]
V.SDI.U v4, [s1 + 13]
V.LW.local [s1 + (v2 << 2)], ->v3
V.LW   [s1, lc0<<2, s2], ->v3          ; contiguous: base, lc0 << log2 E, offset (sN or imm)
V.SB   v3, [s1, lc0, 0]
V.LWI.U [s1 - 7], ->v3
V.SD   v4, [s1 + (v2 << 5)]
V.LHI [s1 - (1 << 1)], ->v3
V.LHI [s1 + (-1 << 1)], ->v3
V.LW [s1, lc0<<2], ->v3
V.LB [s1, lc0<<0, 0], ->v3
V.LHI [s1 + -(1 << 1)], ->v3
V.LHI [s1 - -(-1 << 1)], ->v3
";
    let p = assemble(src, "t.s").unwrap_or_else(|e| panic!("{e}"));
    let insts: Vec<Inst> = p
        .code
        .iter()
        .map(|w| Inst::decode(&[*w]).unwrap())
        .collect();
    let v3 = VReg(3);
    assert_eq!(
        insts[0],
        Inst::VLw(LoadRR {
            dst: v3,
            base: S1,
            off: V2,
            shamt: 3,
            local: false
        })
    );
    assert_eq!(
        insts[1],
        Inst::VLhi(LoadImm {
            dst: v3,
            base: S1,
            imm: 5,
            local: false
        })
    );
    assert_eq!(
        insts[2],
        Inst::VLwiU(LoadImm {
            dst: v3,
            base: S1,
            imm: -7,
            local: false
        })
    );
    assert_eq!(
        insts[3],
        Inst::VSd(StoreRR {
            src: Reg::V(4),
            base: S1,
            off: V2,
            shamt: 2,
            local: false
        })
    );
    assert_eq!(
        insts[4],
        Inst::VSwi(StoreImm {
            src: Reg::V(4),
            base: S1,
            imm: 9,
            local: false
        })
    );
    assert_eq!(
        insts[5],
        Inst::VSdiU(StoreImm {
            src: Reg::V(4),
            base: S1,
            imm: 13,
            local: false
        })
    );
    assert_eq!(
        insts[6],
        Inst::VLw(LoadRR {
            dst: v3,
            base: S1,
            off: V2,
            shamt: 2,
            local: true
        })
    );
    assert_eq!(
        insts[7],
        Inst::VLwC(LoadC {
            dst: v3,
            base: SReg(1),
            off: SOrImm::Reg(SReg(2)),
            local: false
        })
    );
    assert_eq!(
        insts[8],
        Inst::VSbC(StoreC {
            src: Reg::V(3),
            base: SReg(1),
            off: SOrImm::Imm(0),
            local: false
        })
    );
    assert_eq!(insts[9], insts[2]);
    assert_eq!(insts[10], insts[3]);
    assert_eq!(
        insts[11],
        Inst::VLhi(LoadImm {
            dst: v3,
            base: S1,
            imm: -1,
            local: false
        })
    );
    assert_eq!(insts[12], insts[11]);
    assert_eq!(
        insts[13],
        Inst::VLwC(LoadC {
            dst: v3,
            base: SReg(1),
            off: SOrImm::Imm(0),
            local: false
        })
    );
    assert_eq!(
        insts[14],
        Inst::VLbC(LoadC {
            dst: v3,
            base: SReg(1),
            off: SOrImm::Imm(0),
            local: false
        })
    );
    assert_eq!(insts[15], insts[11]);
    assert_eq!(insts[16], insts[11]);
    // `V.SD v1, [s1 + (5 << 3)]` is V.SDI; `V.LW [s1], ->v3` is V.LWI 0.
    assert_eq!(
        one("V.SD v1, [s1 + (5 << 3)]"),
        Inst::VSdi(StoreImm {
            src: Reg::V(1),
            base: S1,
            imm: 5,
            local: false
        })
    );
    assert_eq!(
        one("V.LW [s1], ->v3"),
        Inst::VLwi(LoadImm {
            dst: v3,
            base: S1,
            imm: 0,
            local: false
        })
    );
    assert_eq!(
        one("V.LWI.U.local [s1 + 4], ->v3"),
        Inst::VLwiU(LoadImm {
            dst: v3,
            base: S1,
            imm: 4,
            local: true
        })
    );
    // V.SD with shamt 31.
    let sd31 = Inst::VSd(StoreRR {
        src: Reg::V(1),
        base: S1,
        off: V2,
        shamt: 31,
        local: false,
    });
    assert_eq!(one("V.SD v1, [s1 + (v2 << (3 + 31))]"), sd31);
    assert_eq!(one("V.SD v1, [s1 + (v2 << 34)]"), sd31);
}

/// The seed's 汇编示例 with register names filled in.
#[test]
fn seed_examples() {
    let cases = [
        (
            "V.LW [s1 + (s2 << 3)], ->v1",
            Inst::VLw(LoadRR {
                dst: VReg(1),
                base: S1,
                off: Reg::S(2),
                shamt: 3,
                local: false,
            }),
        ),
        (
            "V.LHI [s1 + (100 << 1)], ->v1",
            Inst::VLhi(LoadImm {
                dst: VReg(1),
                base: S1,
                imm: 100,
                local: false,
            }),
        ),
        (
            "V.LWI.U [s1 + 3], ->v1",
            Inst::VLwiU(LoadImm {
                dst: VReg(1),
                base: S1,
                imm: 3,
                local: false,
            }),
        ),
        (
            "V.SD v1, [s1 + (s2 << (3 + 1))]",
            Inst::VSd(StoreRR {
                src: Reg::V(1),
                base: S1,
                off: Reg::S(2),
                shamt: 1,
                local: false,
            }),
        ),
        (
            "V.SWI v1, [s1 + (7 << 2)]",
            Inst::VSwi(StoreImm {
                src: Reg::V(1),
                base: S1,
                imm: 7,
                local: false,
            }),
        ),
        (
            "V.SDI.U v1, [s1 + 5]",
            Inst::VSdiU(StoreImm {
                src: Reg::V(1),
                base: S1,
                imm: 5,
                local: false,
            }),
        ),
        (
            "V.LW.local [s1 + (v2 << 2)], ->v1",
            Inst::VLw(LoadRR {
                dst: VReg(1),
                base: S1,
                off: V2,
                shamt: 2,
                local: true,
            }),
        ),
        (
            "V.SDI.local v1, [s1 + (2 << 3)]",
            Inst::VSdi(StoreImm {
                src: Reg::V(1),
                base: S1,
                imm: 2,
                local: true,
            }),
        ),
        (
            "V.SD.local v1, [s1 + (2 << 3)]",
            Inst::VSdi(StoreImm {
                src: Reg::V(1),
                base: S1,
                imm: 2,
                local: true,
            }),
        ),
        (
            "V.LB [s1, lc0, s2], ->v1",
            Inst::VLbC(LoadC {
                dst: VReg(1),
                base: SReg(1),
                off: SOrImm::Reg(SReg(2)),
                local: false,
            }),
        ),
        (
            "V.LH [s1, lc0<<1, 4], ->v1",
            Inst::VLhC(LoadC {
                dst: VReg(1),
                base: SReg(1),
                off: SOrImm::Imm(4),
                local: false,
            }),
        ),
        (
            "V.LW [s1, lc0<<2, 4], ->v1",
            Inst::VLwC(LoadC {
                dst: VReg(1),
                base: SReg(1),
                off: SOrImm::Imm(4),
                local: false,
            }),
        ),
        (
            "V.LD [s1, lc0<<3, 4], ->v1",
            Inst::VLdC(LoadC {
                dst: VReg(1),
                base: SReg(1),
                off: SOrImm::Imm(4),
                local: false,
            }),
        ),
        (
            "V.SD v1, [s1, lc0<<3, s3]",
            Inst::VSdC(StoreC {
                src: Reg::V(1),
                base: SReg(1),
                off: SOrImm::Reg(SReg(3)),
                local: false,
            }),
        ),
    ];
    for (src, want) in cases {
        assert_eq!(one(src), want, "{src}");
    }
}

/// The seed's templates that lack an operand are rejected with the canonical form.
#[test]
fn seed_templates_rejected_with_canonical_form() {
    let e = err("V.SDI.local [s1 + (1 << 3)]");
    assert_eq!(
        e,
        AsmErrorKind::MissingStoreData {
            mnemonic: "V.SDI.local".into(),
            usage: "V.SDI.local vS, [sL + (imm << 3)]".into()
        }
    );
    let e = err("V.LB [s1, lc0, 0]");
    assert_eq!(
        e,
        AsmErrorKind::MissingDest {
            mnemonic: "V.LB".into(),
            usage: "V.LB [sB, lc0, offset], ->vD".into()
        }
    );
    assert_eq!(
        err("V.LW [s1, lc0<<2, s2]").to_string(),
        "V.LW needs a destination register: write `V.LW [sB, lc0<<2, offset], ->vD`"
    );
    let e = err("V.SW [s1, lc0<<2, 0], ->v3");
    assert_eq!(
        e,
        AsmErrorKind::StoreArrow {
            usage: "V.SW vS, [sB, lc0<<2, offset]".into()
        }
    );
    let e = err("V.SD v1, [s1, lc0<<3, 0], ->v3");
    assert_eq!(
        e,
        AsmErrorKind::StoreArrow {
            usage: "V.SD vS, [sB, lc0<<3, offset]".into()
        }
    );
    assert_eq!(
        err("V.SW v1, [s1 + v2]").to_string(),
        "V.SW shifts its register offset by at least 2: write (v2 << 2), or use V.SW.U for an unshifted offset"
    );
    assert_eq!(
        err("V.LWI [s1 + v2], ->v1").to_string(),
        "V.LWI takes an immediate offset, not a register: write `V.LWI [sL + (imm << 2)], ->vD` or use V.LW"
    );
    assert_eq!(
        err("V.SW.U v1, [s1, lc0<<2, 0]").to_string(),
        "V.SW.U has no contiguous (lc0) form: write `V.SW vS, [sB, lc0<<2, offset]`"
    );
    assert_eq!(
        err("V.LW [s1 + 5], ->v1").to_string(),
        "V.LW with an immediate offset: write `V.LWI [sL + (imm << 2)], ->vD` or `V.LWI.U [sL + imm], ->vD`"
    );
}

#[test]
fn other_instructions() {
    assert_eq!(
        one("S.ADD s1, s2, -2147483648"),
        Inst::SAdd(SAlu {
            sd: SReg(1),
            sa: SReg(2),
            sb: SOrImm::Imm(i32::MIN)
        })
    );
    assert_eq!(
        one("s.xor S1, s2, s3"),
        Inst::SXor(SAlu {
            sd: SReg(1),
            sa: SReg(2),
            sb: SOrImm::Reg(SReg(3))
        })
    );
    assert_eq!(
        one("S.LI s1, -1"),
        Inst::SLi(SLi {
            sd: SReg(1),
            imm: u64::MAX
        })
    );
    assert_eq!(
        one("S.LI s1, 0xffffffffffffffff"),
        Inst::SLi(SLi {
            sd: SReg(1),
            imm: u64::MAX
        })
    );
    assert_eq!(
        one("S.LI s1, -9223372036854775808"),
        Inst::SLi(SLi {
            sd: SReg(1),
            imm: 1 << 63
        })
    );
    assert_eq!(
        one("S.GETLANE s1, v2, 63"),
        Inst::SGetlane(SGetLane {
            sd: SReg(1),
            va: VReg(2),
            lane: 63
        })
    );
    assert_eq!(
        one("V.MOV v1, s2"),
        Inst::VMov(VMov {
            vd: VReg(1),
            src: VSrc::S(SReg(2))
        })
    );
    assert_eq!(
        one("V.FMA.D v1, v2, v3"),
        Inst::VFmaD(VFp {
            vd: VReg(1),
            va: VReg(2),
            vb: VSrc::V(VReg(3))
        })
    );
    assert_eq!(
        one("BLTU s1, -32768, 0x10"),
        Inst::Bltu(Branch {
            sa: SReg(1),
            sb: SOrImm::Imm(-32768),
            target: Target(2)
        })
    );
    assert_eq!(
        one(".equ K, 5\nV.LHI [s1 + (K << 1)], ->v1"),
        Inst::VLhi(LoadImm {
            dst: VReg(1),
            base: S1,
            imm: 5,
            local: false
        })
    );
    let p = assemble("a: S.LI s1, b + 8\nb: S.LI s2, a - 4\nHALT", "t.s").unwrap();
    assert_eq!(p.code[1], 24);
    assert_eq!(p.code[3], (-4i64) as u64);
    let p = assemble("LOOP s3\nS.LI s1, 1\nENDLOOP\nLOOP s4\nENDLOOP", "t.s").unwrap();
    assert_eq!(
        Inst::decode(&p.code[0..]).unwrap(),
        Inst::Loop(Loop {
            sa: SReg(3),
            exit: Target(4)
        })
    );
    assert_eq!(
        Inst::decode(&p.code[3..]).unwrap(),
        Inst::Endloop(EndLoop { body: Target(1) })
    );
    assert_eq!(
        Inst::decode(&p.code[4..]).unwrap(),
        Inst::Loop(Loop {
            sa: SReg(4),
            exit: Target(6)
        })
    );
    assert_eq!(
        Inst::decode(&p.code[5..]).unwrap(),
        Inst::Endloop(EndLoop { body: Target(5) })
    );
}

mod directives {
    use lanejit_interp::asm::assemble;
    use lanejit_interp::program::*;

    fn asm(src: &str) -> Program {
        assemble(src, "t.s").unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn mem_map_is_settled_later_overrides_earlier() {
        let p = asm("
.mem 0x1001, 10, rw        ; rounds out to one page
.mem 0x3000, 0x3000, rw
.mem 0x4000, 0x1000, r     ; splits the rw run
.mem 0x2000, 0x1000, rw    ; joins the first run
");
        let r = |start, len, perm| MemRange { start, len, perm };
        assert_eq!(
            p.mem_map,
            vec![
                r(0x1000, 0x3000, MemPerm::Rw),
                r(0x4000, 0x1000, MemPerm::R),
                r(0x5000, 0x1000, MemPerm::Rw)
            ]
        );
    }

    #[test]
    fn tile_protections_are_settled() {
        let p = asm("
.tilesize 1024
.tileprotect 0, 512, r
.tileprotect 128, 64, rw
.tileprotect 192, 64, none
.tileprotect 256, 64, r
");
        assert_eq!(p.tile_size, 1024);
        let r = |start, len, perm| TileRange { start, len, perm };
        assert_eq!(
            p.tile_protect,
            vec![
                r(0, 128, TilePerm::R),
                r(192, 64, TilePerm::None),
                r(256, 256, TilePerm::R)
            ]
        );
    }

    #[test]
    fn data_values_layout_and_overlap() {
        let p = asm("
.data 0x1000              ; data may precede its .mem
a: .byte 1, -1, 0xff
.align 4
b: .half -2
.word 0x12345678
.space 2
c: .dword -1
.fill 3, 2, 0x0102
.float 1.5, -inf, nan
.double -0.0
.data 0x1001
.byte 9                   ; overwrites the -1
.tiledata 0x40
t: .word 7
.mem 0x1000, 0x100, r
.equ E, c + 1
.text
S.LI s1, E
");
        let mem: Vec<&DataSeg> = p.data.iter().filter(|d| d.space == Space::Memory).collect();
        // .align and .space only advance: they leave gaps, so three segments.
        assert_eq!(mem.len(), 3);
        assert_eq!(mem[0].addr, 0x1000);
        assert_eq!(mem[0].bytes, vec![1, 9, 0xff]);
        assert_eq!(mem[1].addr, 0x1004);
        assert_eq!(mem[1].bytes, vec![0xfe, 0xff, 0x78, 0x56, 0x34, 0x12]);
        assert_eq!(mem[2].addr, 0x100c);
        let mut want = vec![0xff; 8];
        want.extend_from_slice(&[2, 1, 2, 1, 2, 1]);
        want.extend_from_slice(&1.5f32.to_le_bytes());
        want.extend_from_slice(&f32::NEG_INFINITY.to_le_bytes());
        want.extend_from_slice(&0x7fc0_0000u32.to_le_bytes());
        want.extend_from_slice(&(-0.0f64).to_le_bytes());
        assert_eq!(mem[2].bytes, want);
        let sym = |n: &str| p.symbol(n).unwrap().clone();
        assert_eq!(sym("a").value, 0x1000);
        assert_eq!(sym("b").value, 0x1004);
        assert_eq!(sym("c").value, 0x100c);
        assert_eq!(sym("c").kind, SymKind::Data);
        assert_eq!(sym("t").kind, SymKind::Tile);
        assert_eq!(sym("t").value, 0x40);
        assert_eq!(p.data[3].space, Space::Tile);
        assert_eq!(p.data[3].bytes, vec![7, 0, 0, 0]);
        assert_eq!(p.code[1], 0x100d);
        // .equ names are not symbols.
        assert!(p.symbol("E").is_none());
        // Symbols sorted by (kind, value, name).
        let keys: Vec<_> = p
            .symbols
            .iter()
            .map(|s| (s.kind, s.value, s.name.clone()))
            .collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
    }

    #[test]
    fn adjacent_data_merges_into_one_segment() {
        let p = asm(".mem 0, 4096, rw\n.data 8\n.byte 1\n.data 0\n.dword 0\n.data 9\n.byte 2");
        assert_eq!(p.data.len(), 1);
        assert_eq!(p.data[0].addr, 0);
        assert_eq!(p.data[0].bytes, vec![0, 0, 0, 0, 0, 0, 0, 0, 1, 2]);
    }

    #[test]
    fn code_labels_pcs_and_inst() {
        let p = asm("a: b: S.LI s1, 1\nc: .inst 0xdeadbeef\nd: HALT\n.text\ne:");
        let v = |n: &str| p.symbol(n).unwrap().value;
        assert_eq!((v("a"), v("b"), v("c"), v("d"), v("e")), (0, 0, 16, 24, 32));
        assert_eq!(p.code[2], 0xdeadbeef);
        assert_eq!(p.code.len(), 4);
    }

    #[test]
    fn vl_and_defaults() {
        let p = asm("HALT");
        assert_eq!(p.vl, None);
        assert_eq!(p.tile_size, DEFAULT_TILE_SIZE);
        assert_eq!(asm(".VL 16\nhalt").vl, Some(16));
    }
}

#[test]
fn spacing_and_case_are_free() {
    let p = assemble(
        "top:S.ADD s1,s1,1\nV.LW[s1+(v2<<3)],->v3\nv.sd V4,[S1+(V2<<(3+2))]\nBNE s1,-1,top\nx: y: z:v.lw.LOCAL[s1,LC0<<2,-8],->v3",
        "t.s",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.code.len(), 5);
    assert_eq!(
        Inst::decode(&p.code[1..]).unwrap(),
        Inst::VLw(LoadRR {
            dst: VReg(3),
            base: S1,
            off: V2,
            shamt: 3,
            local: false
        })
    );
    assert_eq!(
        Inst::decode(&p.code[2..]).unwrap(),
        Inst::VSd(StoreRR {
            src: Reg::V(4),
            base: S1,
            off: V2,
            shamt: 2,
            local: false
        })
    );
    assert_eq!(
        Inst::decode(&p.code[3..]).unwrap(),
        Inst::Bne(Branch {
            sa: SReg(1),
            sb: SOrImm::Imm(-1),
            target: Target(0)
        })
    );
    assert_eq!(
        Inst::decode(&p.code[4..]).unwrap(),
        Inst::VLwC(LoadC {
            dst: VReg(3),
            base: SReg(1),
            off: SOrImm::Imm(-8),
            local: true
        })
    );
    assert_eq!(p.symbol("z").unwrap().value, 32);
}

#[test]
fn align_in_text_pads_with_nops() {
    let p = assemble("HALT\n.align 8\nHALT\n.align 32\nend: HALT", "t.s").unwrap();
    let nop = Opcode::Nop as u64;
    let halt = Opcode::Halt as u64;
    assert_eq!(p.code, vec![halt, halt, nop, nop, halt]);
    assert_eq!(p.symbol("end").unwrap().value, 32);
}
