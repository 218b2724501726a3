//! Precise traps of the reference interpreter (contract section 5): every trap kind with its
//! exact kind, pc, lane, EA, space and access; precedence within a lane and across lanes;
//! strict alignment only on the width-scaled forms; and proof that a trapping instruction
//! wrote nothing.

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

use lanejit_interp::isa::Opcode::*;
use lanejit_interp::isa::{FormatKind, Inst, Opcode, SReg, Target};
use lanejit_interp::machine::{Exit, Machine, MemFault, Trap, TrapKind};
use lanejit_interp::memory::Access;
use lanejit_interp::program::{MemPerm, Space, TilePerm};
use support::*;

/// Memory: 0x10000 rw, 0x11000 r, 0x12000 unmapped, 0x13000 rw. Tile: 4 KiB with
/// [0x800, 0x840) none, [0x840, 0x880) r and [0xfc0, 0x1000) r.
fn setup(insts: &[Inst]) -> Setup {
    let fill: Vec<u8> = (0..0x1000u32).map(|a| (a * 7 + 1) as u8).collect();
    Setup::insts(insts)
        .vl(8)
        .map(0x10000, 0x1000, MemPerm::Rw)
        .map(0x11000, 0x1000, MemPerm::R)
        .map(0x13000, 0x1000, MemPerm::Rw)
        .data(0x10000, &fill)
        .data(0x11000, &fill)
        .data(0x13000, &fill)
        .tile_size(0x1000)
        .tile_protect(0x800, 0x40, TilePerm::None)
        .tile_protect(0x840, 0x40, TilePerm::R)
        .tile_protect(0xfc0, 0x40, TilePerm::R)
        .tile_data(0, &fill)
}

/// Registers, mapped memory pages and tile bytes.
type State = (
    Box<lanejit_interp::machine::Regs>,
    Vec<(u64, Vec<u8>)>,
    Vec<u8>,
);

fn state(m: &Machine) -> State {
    (
        m.regs.clone(),
        m.mem.mapped_pages().map(|(a, b)| (a, b.to_vec())).collect(),
        m.tile.as_bytes().to_vec(),
    )
}

/// Run `st` (with `prep`), expect a trap; then prove the trapping instruction wrote nothing:
/// the same run stopped by the budget just before it has identical registers, memory, tile,
/// pc and retired count.
fn expect_trap(st: &Setup, prep: impl Fn(&mut Machine)) -> Trap {
    let (m, e) = st.run_with(&prep);
    let Exit::Trapped(t) = e else {
        panic!("expected a trap, got {e:?}")
    };
    assert_eq!(m.pc, t.pc, "m.pc is the trapping instruction's pc");
    let (m2, e2) = st.clone().limit(m.retired).run_with(&prep);
    assert_eq!(e2, Exit::Limit);
    assert_eq!(m2.pc, m.pc);
    assert_eq!(m2.retired, m.retired);
    assert!(
        state(&m2) == state(&m),
        "the trapping instruction changed state"
    );
    t
}

fn memf(lane: u32, ea: u64, space: Space, access: Access) -> Option<MemFault> {
    Some(MemFault {
        lane,
        ea,
        space,
        access,
    })
}

fn trap(kind: TrapKind, pc: u64, mem: Option<MemFault>) -> Trap {
    Trap { kind, pc, mem }
}

const R: Access = Access::Read;
const W: Access = Access::Write;
const MEM: Space = Space::Memory;
const TILE: Space = Space::Tile;

#[test]
fn page_fault_unmapped_beyond_limit_and_wrapping() {
    // Load from the unmapped page, after one retired instruction (pc 16).
    let st = setup(&[li(1, 0x12000), load_imm(VLdi, 4, s(1), 1, false), halt()]);
    let t = expect_trap(&st, |_| {});
    assert_eq!(t, trap(TrapKind::PageFault, 16, memf(0, 0x12008, MEM, R)));
    // Store to unmapped memory far beyond the limit.
    let st = setup(&[store_imm(VSbi, v(2), s(1), 0, false), halt()]);
    let t = expect_trap(&st, |m| m.regs.s[1] = 0x1_0000_0000);
    assert_eq!(
        t,
        trap(TrapKind::PageFault, 0, memf(0, 0x1_0000_0000, MEM, W))
    );
    // Just past the highest mapped page.
    let t = expect_trap(&st, |m| m.regs.s[1] = 0x14000);
    assert_eq!(t.mem, memf(0, 0x14000, MEM, W));
    // A range that wraps past 2^64 - 1.
    let st = setup(&[load_imm(VLwiU, 4, s(1), 0, false), halt()]);
    let t = expect_trap(&st, |m| m.regs.s[1] = u64::MAX - 1);
    assert_eq!(
        t,
        trap(TrapKind::PageFault, 0, memf(0, u64::MAX - 1, MEM, R))
    );
    // The last byte of the address space alone is just unmapped.
    let st = setup(&[load_imm(VLbi, 4, s(1), 0, false), halt()]);
    let t = expect_trap(&st, |m| m.regs.s[1] = u64::MAX);
    assert_eq!(t.kind, TrapKind::PageFault);
    // A load straddling into the unmapped page.
    let st = setup(&[load_imm(VLdiU, 4, s(1), 0, false), halt()]);
    let t = expect_trap(&st, |m| m.regs.s[1] = 0x11ffc);
    assert_eq!(t, trap(TrapKind::PageFault, 0, memf(0, 0x11ffc, MEM, R)));
}

#[test]
fn permission_fault_on_read_only_pages() {
    // Loads from an r page are fine.
    let (m, e) =
        setup(&[load_imm(VLdi, 4, s(1), 0, false), halt()]).run_with(|m| m.regs.s[1] = 0x11000);
    assert_eq!(e, Exit::Halted);
    assert_eq!(
        m.regs.v[4][0],
        u64::from_le_bytes([1, 8, 15, 22, 29, 36, 43, 50])
    );
    // Stores trap; a straddle from rw into r traps too (with the lane's start EA).
    let st = setup(&[store_imm(VShiU, v(2), s(1), 0, false), halt()]);
    let t = expect_trap(&st, |m| m.regs.s[1] = 0x11010);
    assert_eq!(
        t,
        trap(TrapKind::PermissionFault, 0, memf(0, 0x11010, MEM, W))
    );
    let t = expect_trap(&st, |m| m.regs.s[1] = 0x10fff);
    assert_eq!(
        t,
        trap(TrapKind::PermissionFault, 0, memf(0, 0x10fff, MEM, W))
    );
}

#[test]
fn tile_out_of_bounds_and_unauthorized() {
    let st = setup(&[load_imm(VLwiU, 4, s(1), 0, true), halt()]);
    let t = expect_trap(&st, |m| m.regs.s[1] = 0x1000);
    assert_eq!(
        t,
        trap(TrapKind::TileOutOfBounds, 0, memf(0, 0x1000, TILE, R))
    );
    let t = expect_trap(&st, |m| m.regs.s[1] = 0xffe);
    assert_eq!(
        t,
        trap(TrapKind::TileOutOfBounds, 0, memf(0, 0xffe, TILE, R))
    );
    let t = expect_trap(&st, |m| m.regs.s[1] = u64::MAX - 1);
    assert_eq!(t.kind, TrapKind::TileOutOfBounds);
    // none granule: reads and writes are unauthorized; an r granule: writes only.
    let t = expect_trap(&st, |m| m.regs.s[1] = 0x83e);
    assert_eq!(
        t,
        trap(TrapKind::TileUnauthorized, 0, memf(0, 0x83e, TILE, R))
    );
    let (m, e) = st.run_with(|m| m.regs.s[1] = 0x840);
    assert_eq!(e, Exit::Halted);
    assert_eq!(m.regs.v[4][0] & 0xff, (0x840u32 * 7 + 1) as u8 as u64);
    let st = setup(&[store_imm(VSdi, v(2), s(1), 0, true), halt()]);
    let t = expect_trap(&st, |m| m.regs.s[1] = 0x848);
    assert_eq!(
        t,
        trap(TrapKind::TileUnauthorized, 0, memf(0, 0x848, TILE, W))
    );
    let t = expect_trap(&st, |m| m.regs.s[1] = 0x800);
    assert_eq!(t.kind, TrapKind::TileUnauthorized);
    // Tile addresses that are mapped memory addresses do not help, and vice versa.
    let t = expect_trap(&st, |m| m.regs.s[1] = 0x10000);
    assert_eq!(
        t,
        trap(TrapKind::TileOutOfBounds, 0, memf(0, 0x10000, TILE, W))
    );
    let st = setup(&[store_imm(VSdi, v(2), s(1), 0, false), halt()]);
    let t = expect_trap(&st, |m| m.regs.s[1] = 0x100);
    assert_eq!(t, trap(TrapKind::PageFault, 0, memf(0, 0x100, MEM, W)));
}

#[test]
fn illegal_instruction_only_when_executed() {
    // pc 0: J 2; pc 8: a zero word (never executed); pc 16: NOP; pc 24: bad opcode 0xff.
    let words = vec![j(2).encode().first, 0, nop().encode().first, 0xff];
    let st = Setup::new(words);
    let t = expect_trap(&st, |_| {});
    assert_eq!(t, trap(TrapKind::IllegalInstruction, 24, None));
    let (m, _) = st.run();
    assert_eq!(m.retired, 2);
    // Reserved bits set on a valid opcode.
    let bad = halt().encode().first | 1 << 63;
    let t = expect_trap(&Setup::new(vec![bad]), |_| {});
    assert_eq!(t, trap(TrapKind::IllegalInstruction, 0, None));
    // An S.LI cut off by the end of the code.
    let w = li(1, 5).encode().first;
    let t = expect_trap(&Setup::new(vec![nop().encode().first, w]), |_| {});
    assert_eq!(t, trap(TrapKind::IllegalInstruction, 8, None));
    // Jumping into the immediate word of an S.LI executes it as an instruction: 0 is illegal.
    let mut words = vec![j(2).encode().first];
    words.extend(words_of(&li(1, 0)));
    let t = expect_trap(&Setup::new(words), |_| {});
    assert_eq!(t, trap(TrapKind::IllegalInstruction, 16, None));
}

#[test]
fn code_out_of_bounds() {
    // Falling off the end.
    let st = Setup::insts(&[nop(), nop()]);
    let t = expect_trap(&st, |_| {});
    assert_eq!(t, trap(TrapKind::CodeOutOfBounds, 16, None));
    // Jumping past the end.
    let t = expect_trap(&Setup::insts(&[nop(), j(1000)]), |_| {});
    assert_eq!(t, trap(TrapKind::CodeOutOfBounds, 8000, None));
    // Empty code.
    let t = expect_trap(&Setup::new(vec![]), |_| {});
    assert_eq!(t, trap(TrapKind::CodeOutOfBounds, 0, None));
    // A LOOP with trip 0 whose exit lies past the end.
    let lp = mk(
        Loop,
        lanejit_interp::isa::Loop {
            sa: SReg(0),
            exit: Target(50),
        },
    );
    let t = expect_trap(&Setup::insts(&[lp]), |_| {});
    assert_eq!(t, trap(TrapKind::CodeOutOfBounds, 400, None));
}

#[test]
fn misaligned_only_with_strict_align() {
    let st = setup(&[load_imm(VLwi, 4, s(1), 0, false), halt()]);
    let (m, e) = st.run_with(|m| m.regs.s[1] = 0x10002);
    assert_eq!(e, Exit::Halted, "permissive by default");
    assert_eq!(m.regs.v[4][0], u32::from_le_bytes([15, 22, 29, 36]) as u64);
    let t = expect_trap(&st.clone().strict(), |m| m.regs.s[1] = 0x10002);
    assert_eq!(t, trap(TrapKind::Misaligned, 0, memf(0, 0x10002, MEM, R)));
}

/// The width letter of a memory mnemonic: log2 E.
fn log2e_of(mn: &str) -> u32 {
    match mn.as_bytes()[3] {
        b'B' => 0,
        b'H' => 1,
        b'W' => 2,
        _ => 3,
    }
}

/// Whether `--strict-align` applies, from the contract's wording: scaled immediate forms (I
/// without `.U`), the contiguous form, register-offset stores without `.U`; always E > 1.
fn strict_applies(op: Opcode) -> bool {
    let mn = op.mnemonic();
    let dotu = mn.ends_with(".U");
    let form = op.format();
    let scaled_imm = matches!(form, FormatKind::LoadImm | FormatKind::StoreImm) && !dotu;
    let contig = matches!(form, FormatKind::LoadC | FormatKind::StoreC);
    let store_rr = form == FormatKind::StoreRR && !dotu;
    log2e_of(mn) > 0 && (scaled_imm || contig || store_rr)
}

fn mem_inst(op: Opcode, local: bool, base: u8) -> Inst {
    match op.format() {
        FormatKind::LoadRR => load_rr(op, 4, v(base), s(0), 0, local),
        FormatKind::LoadImm => load_imm(op, 4, v(base), 0, local),
        FormatKind::LoadC => load_c(op, 4, base, imm(0), local),
        FormatKind::StoreRR => store_rr(op, v(2), v(base), s(0), 0, local),
        FormatKind::StoreImm => store_imm(op, v(2), v(base), 0, local),
        _ => store_c(op, v(2), base, imm(0), local),
    }
}

/// Strict alignment traps exactly the width-scaled forms with E > 1, reporting the lowest
/// misaligned active lane; every other form runs the misaligned access.
#[test]
fn strict_align_applies_exactly_to_the_scaled_forms() {
    let mut trapping = 0;
    for &op in Opcode::ALL.iter().filter(|o| o.mem().is_some()) {
        for local in [false, true] {
            let contig = matches!(op.format(), FormatKind::LoadC | FormatKind::StoreC);
            let e = 1u64 << log2e_of(op.mnemonic());
            let base = if local { 0x100 } else { 0x10000 };
            let st = setup(&[mem_inst(op, local, 1), halt()]).vl(4).strict();
            // Lanes 0 and 1 aligned, lane 2 misaligned by 1, lane 3 by e/2 (lane 0 of the
            // contiguous form is misaligned instead: the whole group is).
            let prep = |m: &mut Machine| {
                for i in 0..4u64 {
                    let mis = match i {
                        2 => 1,
                        3 => e / 2,
                        _ => 0,
                    };
                    m.regs.v[1][i as usize] = base + 16 * i + mis;
                }
                m.regs.s[1] = base + 1;
                m.regs.mask = 0b1101;
            };
            if strict_applies(op) {
                trapping += 1;
                let t = expect_trap(&st, prep);
                let access = if op.mem().unwrap().dir == lanejit_interp::isa::Dir::Load {
                    R
                } else {
                    W
                };
                let space = if local { TILE } else { MEM };
                let (lane, ea) = if contig {
                    (0, base + 1)
                } else {
                    (2, base + 33)
                };
                assert_eq!(
                    t,
                    trap(TrapKind::Misaligned, 0, memf(lane, ea, space, access)),
                    "{} local {local}",
                    op.mnemonic()
                );
            } else {
                let (_, ex) = st.run_with(prep);
                assert_eq!(ex, Exit::Halted, "{} local {local}", op.mnemonic());
            }
            // Without --strict-align nothing traps.
            let (_, ex) = setup(&[mem_inst(op, local, 1), halt()])
                .vl(4)
                .run_with(prep);
            assert_eq!(ex, Exit::Halted, "{} local {local}", op.mnemonic());
        }
    }
    // Scaled immediates: V.LHI V.LWI V.LDI V.LHUI V.LWUI, V.SHI V.SWI V.SDI; contiguous:
    // V.LH V.LW V.LD V.LHU V.LWU, V.SH V.SW V.SD; register stores V.SH V.SW V.SD; x2 spaces.
    assert_eq!(trapping, 2 * (5 + 3 + 5 + 3 + 3));
}

/// Within a lane: misaligned, then out of range, then permission.
#[test]
fn precedence_within_a_lane() {
    // Misaligned beats out of range (unmapped page) and permission (r page).
    let st = setup(&[store_imm(VSwi, v(2), s(1), 0, false), halt()]).strict();
    let t = expect_trap(&st, |m| m.regs.s[1] = 0x12001);
    assert_eq!(t, trap(TrapKind::Misaligned, 0, memf(0, 0x12001, MEM, W)));
    let t = expect_trap(&st, |m| m.regs.s[1] = 0x11002);
    assert_eq!(t, trap(TrapKind::Misaligned, 0, memf(0, 0x11002, MEM, W)));
    // Out of range beats permission: a store straddling an r page and an unmapped page.
    let st = setup(&[store_imm(VSwiU, v(2), s(1), 0, false), halt()]);
    let t = expect_trap(&st, |m| m.regs.s[1] = 0x11ffe);
    assert_eq!(t, trap(TrapKind::PageFault, 0, memf(0, 0x11ffe, MEM, W)));
    // Tile: out of bounds beats unauthorized (an r granule at the end of the tile).
    let st = setup(&[store_imm(VSwiU, v(2), s(1), 0, true), halt()]);
    let t = expect_trap(&st, |m| m.regs.s[1] = 0xffe);
    assert_eq!(
        t,
        trap(TrapKind::TileOutOfBounds, 0, memf(0, 0xffe, TILE, W))
    );
    // Tile: misaligned beats both.
    let st = setup(&[store_imm(VSwi, v(2), s(1), 0, true), halt()]).strict();
    let t = expect_trap(&st, |m| m.regs.s[1] = 0xffe);
    assert_eq!(t, trap(TrapKind::Misaligned, 0, memf(0, 0xffe, TILE, W)));
}

/// Across lanes: the lowest faulting active lane wins, whatever the kinds.
#[test]
fn lowest_faulting_lane_wins() {
    // V.SW v2, [v1 + (s0 << 2)]: lane 0 ok, lane 1 r page, lane 2 misaligned, lane 3 unmapped.
    let st = setup(&[store_rr(VSw, v(2), v(1), s(0), 0, false), halt()])
        .vl(4)
        .strict();
    let with_mask = |mask: u64| {
        move |m: &mut Machine| {
            m.regs.v[1][..4].copy_from_slice(&[0x10000, 0x11000, 0x10002, 0x12000]);
            m.regs.v[2][..4].copy_from_slice(&[1, 2, 3, 4]);
            m.regs.mask = mask;
        }
    };
    let t = expect_trap(&st, with_mask(0b1111));
    assert_eq!(
        t,
        trap(TrapKind::PermissionFault, 0, memf(1, 0x11000, MEM, W))
    );
    let t = expect_trap(&st, with_mask(0b1101));
    assert_eq!(t, trap(TrapKind::Misaligned, 0, memf(2, 0x10002, MEM, W)));
    let t = expect_trap(&st, with_mask(0b1001));
    assert_eq!(t, trap(TrapKind::PageFault, 0, memf(3, 0x12000, MEM, W)));
    let (m, e) = st.run_with(with_mask(0b0001));
    assert_eq!(e, Exit::Halted);
    assert_eq!(mem(&m, 0x10000, 4), [1, 0, 0, 0]);
    // Lane 0 is never written when a higher lane faults (checked by expect_trap too).
    let (m, _) = st.run_with(with_mask(0b1111));
    assert_eq!(mem(&m, 0x10000, 1), [1]);
    // Loads: the destination keeps every lane, including those below the faulting one.
    let st = setup(&[load_rr(VLd, 1, v(1), s(0), 0, false), halt()]).vl(4);
    let t = expect_trap(&st, with_mask(0b1111));
    assert_eq!(t, trap(TrapKind::PageFault, 0, memf(3, 0x12000, MEM, R)));
}

/// A contiguous group whose one-range check fails reports the precise lowest faulting lane.
#[test]
fn contiguous_group_faults_are_precise() {
    // Load words from 0x11ff0 with VL 8: lanes 0-3 in the r page, lane 4 at 0x12000 unmapped.
    let st = setup(&[load_c(VLwC, 4, 1, imm(0), false), halt()]);
    let t = expect_trap(&st, |m| m.regs.s[1] = 0x11ff0);
    assert_eq!(t, trap(TrapKind::PageFault, 0, memf(4, 0x12000, MEM, R)));
    // The same with lanes 4.. inactive runs.
    let (m, e) = st.run_with(|m| {
        m.regs.s[1] = 0x11ff0;
        m.regs.mask = 0x0f;
    });
    assert_eq!(e, Exit::Halted);
    assert_eq!(m.regs.v[4][4], 0);
    // Store words from 0x10ff8: lanes 0, 1 in rw, lane 2 onwards in the r page.
    let st = setup(&[store_c(VSwC, v(2), 1, sr(3), false), halt()]);
    let prep = |m: &mut Machine| {
        m.regs.s[1] = 0x10000;
        m.regs.s[3] = 0xff0;
        m.regs.lc0base = 2;
    };
    let t = expect_trap(&st, prep);
    assert_eq!(
        t,
        trap(TrapKind::PermissionFault, 0, memf(2, 0x11000, MEM, W))
    );
    // Tile: a group running off the end of the tile; lanes 0..5 inside.
    let st = setup(&[load_c(VLdC, 4, 1, imm(0), true), halt()]);
    let t = expect_trap(&st, |m| m.regs.s[1] = 0xfd0);
    assert_eq!(
        t,
        trap(TrapKind::TileOutOfBounds, 0, memf(6, 0x1000, TILE, R))
    );
    // Strict alignment on a contiguous group misaligned as a whole: lowest active lane.
    let st = setup(&[load_c(VLhC, 4, 1, imm(1), false), halt()]).strict();
    let t = expect_trap(&st, |m| {
        m.regs.s[1] = 0x10000;
        m.regs.mask = 0b1100;
    });
    assert_eq!(t, trap(TrapKind::Misaligned, 0, memf(2, 0x10005, MEM, R)));
}

/// A trap in the middle of a program leaves everything before it in place and retires only
/// what came before.
#[test]
fn trap_after_work_keeps_earlier_effects() {
    let st = setup(&[
        li(1, 0x10000),
        store_imm(VSdi, v(2), s(1), 0, false),
        li(1, 0x11000),
        store_imm(VSdi, v(2), s(1), 0, false),
        halt(),
    ])
    .vl(1);
    let prep = |m: &mut Machine| m.regs.v[2][0] = 0x55;
    let t = expect_trap(&st, prep);
    assert_eq!(
        t,
        trap(TrapKind::PermissionFault, 40, memf(0, 0x11000, MEM, W))
    );
    let (m, _) = st.run_with(prep);
    assert_eq!(m.retired, 3);
    assert_eq!(mem(&m, 0x10000, 8), 0x55u64.to_le_bytes());
}

mod fast_path_equivalence {
    //! The contiguous fast path (one range check for the group) must agree exactly with the
    //! general per-lane path: the same accesses written as a scaled-immediate form with a
    //! vector base (`V.LWI [v1 + (0 << 2)]`, lane i's base = EA0 + i*E), which has the same
    //! strict-alignment rule, near page and granule edges, with any mask.
    use super::*;
    use proptest::prelude::*;

    const CONTIG_LOADS: [Opcode; 7] = [VLbC, VLhC, VLwC, VLdC, VLbuC, VLhuC, VLwuC];
    const IMM_LOADS: [Opcode; 7] = [VLbi, VLhi, VLwi, VLdi, VLbui, VLhui, VLwui];
    const CONTIG_STORES: [Opcode; 4] = [VSbC, VShC, VSwC, VSdC];
    const IMM_STORES: [Opcode; 4] = [VSbi, VShi, VSwi, VSdi];
    const ANCHORS_MEM: [u64; 7] = [
        0x10000, 0x10f80, 0x11000, 0x11f80, 0x12000, 0x13000, 0x13f80,
    ];
    const ANCHORS_TILE: [u64; 6] = [0, 0x7c0, 0x800, 0x840, 0xf80, 0xfc0];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn contiguous_equals_per_lane(
            k in 0usize..7,
            store in any::<bool>(),
            local in any::<bool>(),
            strict in any::<bool>(),
            vl_log in 0u32..7,
            mask in any::<u64>(),
            anchor in 0usize..7,
            delta in -70i64..70,
            lc0base in 0u64..100,
            data in any::<u64>(),
        ) {
            let k = if store { k % 4 } else { k };
            let (c_op, i_op) = if store {
                (CONTIG_STORES[k], IMM_STORES[k])
            } else {
                (CONTIG_LOADS[k], IMM_LOADS[k])
            };
            let log2e = c_op.mem().unwrap().log2e as u32;
            let e = 1u64 << log2e;
            let vl = 1u32 << vl_log;
            let anchors: &[u64] = if local { &ANCHORS_TILE } else { &ANCHORS_MEM };
            let ea0 = anchors[anchor % anchors.len()].wrapping_add(delta as u64);
            let fast = if store {
                store_c(c_op, v(2), 1, imm(0), local)
            } else {
                load_c(c_op, 4, 1, imm(0), local)
            };
            let slow = if store {
                store_imm(i_op, v(2), v(1), 0, local)
            } else {
                load_imm(i_op, 4, v(1), 0, local)
            };
            let prep = |m: &mut Machine| {
                let full = if vl == 64 { u64::MAX } else { (1u64 << vl) - 1 };
                m.regs.mask = mask & full;
                m.regs.lc0base = lc0base;
                m.regs.s[1] = ea0.wrapping_sub(lc0base << log2e);
                for i in 0..64u64 {
                    m.regs.v[1][i as usize] = ea0.wrapping_add(i * e);
                    m.regs.v[2][i as usize] = data.rotate_left(i as u32 * 5) ^ i;
                    m.regs.v[4][i as usize] = 0x5555_0000 + i;
                }
            };
            let mut a = setup(&[fast, halt()]).vl(vl);
            let mut b = setup(&[slow, halt()]).vl(vl);
            a.cfg.strict_align = strict;
            b.cfg.strict_align = strict;
            let (ma, ea) = a.run_with(prep);
            let (mb, eb) = b.run_with(prep);
            prop_assert_eq!(ea, eb);
            prop_assert_eq!(ma.retired, mb.retired);
            prop_assert!(state(&ma) == state(&mb), "state differs: {} vs {}", fast, slow);
        }
    }
}

mod gather_model {
    //! Gathers and scatters near page and granule edges against a byte-by-byte model of the
    //! memory map and tile protections of `setup`: values, and the exact trap (lowest faulting
    //! active lane; misaligned, then out of range, then permission).
    #![allow(clippy::needless_range_loop)]
    use super::*;
    use proptest::prelude::*;

    /// Memory page permission in `setup`: None unmapped, Some(writable).
    fn page(a: u64) -> Option<bool> {
        match a >> 12 {
            0x10 | 0x13 => Some(true),
            0x11 => Some(false),
            _ => None,
        }
    }

    /// Tile granule permission in `setup`: (readable, writable), None outside the tile.
    fn granule(a: u64) -> Option<(bool, bool)> {
        match a {
            0x800..=0x83f => Some((false, false)),
            0x840..=0x87f | 0xfc0..=0xfff => Some((true, false)),
            0..=0xfff => Some((true, true)),
            _ => None,
        }
    }

    fn model_fault(ea: u64, e: u64, write: bool, local: bool, strict: bool) -> Option<TrapKind> {
        if strict && ea % e != 0 {
            return Some(TrapKind::Misaligned);
        }
        let bytes: Vec<Option<u64>> = (0..e).map(|k| ea.checked_add(k)).collect();
        if local {
            let g: Vec<_> = bytes.iter().map(|b| b.and_then(granule)).collect();
            if g.iter().any(|x| x.is_none()) {
                return Some(TrapKind::TileOutOfBounds);
            }
            if g.iter()
                .flatten()
                .any(|&(r, w)| if write { !w } else { !r })
            {
                return Some(TrapKind::TileUnauthorized);
            }
        } else {
            let p: Vec<_> = bytes.iter().map(|b| b.and_then(page)).collect();
            if p.iter().any(|x| x.is_none()) {
                return Some(TrapKind::PageFault);
            }
            if write && p.iter().flatten().any(|&w| !w) {
                return Some(TrapKind::PermissionFault);
            }
        }
        None
    }

    fn fill(a: u64) -> u8 {
        ((a & 0xfff) * 7 + 1) as u8
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn gathers_and_scatters_match_the_model(
            log2e in 0u32..4,
            store in any::<bool>(),
            strict_form in any::<bool>(),
            local in any::<bool>(),
            strict in any::<bool>(),
            vl_log in 0u32..7,
            mask in any::<u64>(),
            anchor in prop::sample::select(vec![
                0x10000u64, 0x10ff0, 0x11000, 0x11fc0, 0x12000, 0x12fc0, 0x13000, 0x13fc0,
                u64::MAX - 40,
            ]),
            tanchor in prop::sample::select(vec![0u64, 0x7f0, 0x830, 0x870, 0xfb0, 0xff0]),
            offs in prop::collection::vec(-48i64..48, 64),
        ) {
            let e = 1u64 << log2e;
            let vl = 1usize << vl_log;
            let full = if vl == 64 { u64::MAX } else { (1u64 << vl) - 1 };
            let mask = mask & full;
            let base = if local { tanchor } else { anchor };
            let eas: Vec<u64> = (0..64).map(|i| base.wrapping_add(offs[i] as u64)).collect();
            // Register forms never check alignment (loads; .U stores); I forms do (E > 1).
            let (inst, applies) = match (store, strict_form) {
                (false, false) => (load_rr([VLb, VLh, VLw, VLd][log2e as usize], 4, v(1), s(0), 0, local), false),
                (false, true) => (load_imm([VLbi, VLhi, VLwi, VLdi][log2e as usize], 4, v(1), 0, local), log2e > 0),
                (true, false) => (store_rr([VSb, VShU, VSwU, VSdU][log2e as usize], v(2), v(1), s(0), 0, local), false),
                (true, true) => (store_imm([VSbi, VShi, VSwi, VSdi][log2e as usize], v(2), v(1), 0, local), log2e > 0),
            };
            let mut st = setup(&[inst, halt()]).vl(vl as u32);
            st.cfg.strict_align = strict;
            let (m, ex) = st.run_with(|m| {
                m.regs.mask = mask;
                for i in 0..64 {
                    m.regs.v[1][i] = eas[i];
                    m.regs.v[2][i] = 0x0102_0304_0506_0708u64.wrapping_mul(i as u64 + 1);
                    m.regs.v[4][i] = 0xeeee;
                }
            });
            let first = (0..vl)
                .filter(|&i| mask >> i & 1 != 0)
                .find_map(|i| model_fault(eas[i], e, store, local, strict && applies).map(|k| (i, k)));
            match first {
                Some((lane, kind)) => {
                    let space = if local { TILE } else { MEM };
                    let access = if store { W } else { R };
                    prop_assert_eq!(ex, Exit::Trapped(trap(kind, 0, memf(lane as u32, eas[lane], space, access))));
                    prop_assert_eq!(m.retired, 0);
                    prop_assert!(m.regs.v[4][..vl].iter().all(|&x| x == 0xeeee));
                }
                None => {
                    prop_assert_eq!(ex, Exit::Halted);
                    if store {
                        // Replay the stores in lane order on a model of the touched bytes.
                        let mut want = std::collections::BTreeMap::new();
                        for i in (0..vl).filter(|&i| mask >> i & 1 != 0) {
                            for k in 0..e {
                                want.insert(eas[i] + k, (m.regs.v[2][i] >> (8 * k)) as u8);
                            }
                        }
                        for (a, b) in want {
                            let got = if local { tile(&m, a, 1)[0] } else { mem(&m, a, 1)[0] };
                            prop_assert_eq!(got, b, "byte at {:#x}", a);
                        }
                    } else {
                        for i in 0..vl {
                            let want = if mask >> i & 1 == 0 {
                                0xeeee
                            } else {
                                let raw = (0..e).fold(0u64, |acc, k| acc | (fill(eas[i] + k) as u64) << (8 * k));
                                let bits = 8 * e as u32;
                                if bits == 64 { raw } else { (((raw << (64 - bits)) as i64) >> (64 - bits)) as u64 }
                            };
                            prop_assert_eq!(m.regs.v[4][i], want, "lane {}", i);
                        }
                    }
                }
            }
        }
    }
}
