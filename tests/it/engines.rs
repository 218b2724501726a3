//! Differential tests of the three engines: every program runs on the interpreter, on the JIT
//! (compile on first entry) and tiered (small threshold), and the complete final state must be
//! identical: registers (all 64 lanes), mask, LC0BASE, trip, pc, retired count, exit/trap,
//! every mapped memory page and the whole tile. Some tests also check that compiled code
//! really ran (`jit_retired`).

use lanejit::fuzz::Snapshot;
use lanejit::vm::{self, Dispatcher, Engine, EngineStats, VmOptions};
use lanejit_interp::asm::assemble;
use lanejit_interp::interp::Decoded;
use lanejit_interp::machine::{Config, Exit, Machine, TrapKind};
use lanejit_interp::program::Program;

/// The state every engine must agree on: the fuzzer's snapshot.
type Snap = Snapshot;

fn snap(m: &Machine, exit: Exit) -> Snap {
    Snapshot::capture(m, exit, &[])
}

fn asm(src: &str) -> Program {
    match assemble(src, "test.s") {
        Ok(p) => p,
        Err(e) => panic!("assembly failed:\n{e}"),
    }
}

fn config(p: &Program, vl: u32, strict: bool, max: Option<u64>) -> Config {
    Config {
        strict_align: strict,
        max_instructions: max,
        ..Config::for_program(p, Some(vl))
    }
}

fn run_one(p: &Program, cfg: Config, engine: Engine, threshold: u32) -> (Snap, EngineStats) {
    let mut m = Machine::new(p, cfg).expect("machine");
    let d = Decoded::new(&p.code);
    let (exit, stats) = vm::run(engine, &mut m, &d, &VmOptions::foreground(threshold));
    (snap(&m, exit), stats)
}

/// Run on all engines, assert identical state; return the reference snapshot and the JIT
/// engine's statistics.
fn check(p: &Program, vl: u32, strict: bool, max: Option<u64>) -> (Snap, EngineStats) {
    check_cfg(p, config(p, vl, strict, max))
}

/// [`check`] under a whole configuration.
fn check_cfg(p: &Program, cfg: Config) -> (Snap, EngineStats) {
    let Config {
        vl,
        strict_align: strict,
        max_instructions: max,
        ..
    } = cfg;
    let (reference, _) = run_one(p, cfg, Engine::Interp, 0);
    let (jit, jstats) = run_one(p, cfg, Engine::Jit, 0);
    assert_eq!(
        jstats.compile_errors, 0,
        "a region failed to compile (vl {vl})"
    );
    assert_eq!(
        jit, reference,
        "jit differs from interp (vl {vl}, strict {strict}, max {max:?})"
    );
    for th in [1, 3] {
        let (tiered, tstats) = run_one(p, cfg, Engine::Tiered, th);
        assert_eq!(
            tstats.compile_errors, 0,
            "a region failed to compile (vl {vl})"
        );
        assert_eq!(
            tiered, reference,
            "tiered({th}) differs from interp (vl {vl}, strict {strict}, max {max:?})"
        );
    }
    (reference, jstats)
}

const VLS: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];

fn check_all_vls(src: &str) {
    let p = asm(src);
    for vl in VLS {
        for strict in [false, true] {
            check(&p, vl, strict, None);
        }
    }
}

/// [`check`] `p` at every VL, with and without `--strict-align`: compiled code ran, and the
/// run ends with a trap of `kind` (or none), `what` naming the case in a failure.
fn check_trap_every_vl(p: &Program, kind: Option<TrapKind>, what: &str) {
    for vl in VLS {
        for strict in [false, true] {
            let (r, st) = check(p, vl, strict, None);
            assert!(st.jit_retired > 0, "compiled code ran (vl {vl}): {what}");
            assert_eq!(
                trap_kind(&r.exit()),
                kind,
                "vl {vl} strict {strict}: {what}"
            );
        }
    }
}

fn trap_kind(e: &Exit) -> Option<TrapKind> {
    match e {
        Exit::Trapped(t) => Some(t.kind),
        _ => None,
    }
}

/// A copy of `n` words from 0x10000 to 0x40000 (dst page count chosen by the caller).
fn copy_src(n: u64, dst_bytes: u64) -> String {
    format!(
        "
        .mem 0x10000, 0x10000, r
        .mem 0x40000, {dst_bytes}, rw
        .data 0x10000
        .fill 4096, 4, 0x89abcdef
        .data 0x10100
        .word 1, 2, 3, -4, 5, 0x7fffffff, -7, 8
        .text
        S.LI s1, 0x10000
        S.LI s2, 0x40000
        S.LI s3, {n}
        LOOP s3
        V.LW [s1, lc0<<2, 0], ->v1
        V.SW v1, [s2, lc0<<2, 0]
        V.ADD v2, v2, v1
        ENDLOOP
        V.REDSUM s5, v2
        HALT
        "
    )
}

#[test]
fn copy_kernel_runs_compiled_and_agrees() {
    let p = asm(&copy_src(4096, 0x4000));
    let (r, st) = check(&p, 32, false, None);
    assert_eq!(r.exit(), Exit::Halted);
    // 3 S.LI + LOOP + 128 iterations * 4 + REDSUM + HALT.
    assert_eq!(r.result.instructions, 3 + 1 + 128 * 4 + 2);
    assert!(st.compiled_regions >= 1);
    assert!(
        st.jit_retired >= 128 * 4,
        "the hot loop must run compiled: {st:?}"
    );
    // Spot-check the data: dst[64] = src[64] = the .word list at 0x10100.
    let page = &r.memory.iter().find(|(a, _)| *a == 0x40000).expect("dst").1;
    assert_eq!(&page[256..260], &1u32.to_le_bytes());
    assert_eq!(&page[268..272], &(-4i32 as u32).to_le_bytes());
}

#[test]
fn copy_every_vl_and_tail() {
    for n in [1, 3, 70, 255, 256, 257] {
        check_all_vls(&copy_src(n, 0x4000));
    }
}

#[test]
fn loop_tail_runs_compiled() {
    // 70 words at VL 32: two full iterations in the loop function, the tail in the
    // straight-line form of the body; only HALT is left to the interpreter.
    let p = asm(&copy_src(70, 0x4000));
    let (r, st) = check(&p, 32, false, None);
    assert_eq!(r.exit(), Exit::Halted);
    assert_eq!(r.result.instructions, 3 + 1 + 3 * 4 + 2);
    assert_eq!(st.interp_retired, 1, "only HALT is interpreted: {st:?}");
    assert_eq!(st.jit_retired, r.result.instructions - 1, "{st:?}");
}

#[test]
fn hoisted_and_per_group_checks_fault_precisely() {
    // s1's load is loop-invariant (its check is hoisted to loop entry); the store's base s4
    // is bumped inside the body, so its check stays per group. dst is 0x1000 bytes: the store
    // faults part-way, at a lane that depends on VL.
    for n in [64, 1000, 1500] {
        let src = format!(
            "
            .mem 0x10000, 0x10000, r
            .mem 0x40000, 0x1000, rw
            .text
            S.LI s1, 0x10000
            S.LI s4, 0x40000
            S.LI s3, {n}
            LOOP s3
            V.LW [s1, lc0<<2, 0], ->v1
            V.SW v1, [s4, lc0<<2, 0]
            S.ADD s4, s4, 4
            ENDLOOP
            HALT
            "
        );
        check_all_vls(&src);
    }
    // The load's source ends inside the loop's range: the hoisted span check stops short
    // of the fault, and the faulting iteration traps precisely.
    let p = asm(&plain_copy((0x10000, 0x2000), (0x40000, 0x10000), 3000));
    for vl in VLS {
        let (r, _) = check(&p, vl, false, None);
        assert_eq!(fault_ea(&r, vl), 0x12000, "vl {vl}");
    }
}

/// A copy of `n` words with one hardware loop (`V.LW` then `V.SW`, contiguous), from a
/// read-only `(address, length)` source map to a read-write destination map.
fn plain_copy(src: (u64, u64), dst: (u64, u64), n: u64) -> String {
    format!(
        "
        .mem {:#x}, {:#x}, r
        .mem {:#x}, {:#x}, rw
        .text
        S.LI s1, {:#x}
        S.LI s2, {:#x}
        S.LI s3, {n}
        LOOP s3
        V.LW [s1, lc0<<2, 0], ->v1
        V.SW v1, [s2, lc0<<2, 0]
        ENDLOOP
        HALT
        ",
        src.0, src.1, dst.0, dst.1, src.0, dst.0
    )
}

/// The EA of the memory fault a run ended with.
fn fault_ea(r: &Snap, vl: u32) -> u64 {
    let Exit::Trapped(t) = r.exit() else {
        panic!("vl {vl}: {:?}", r.exit())
    };
    t.mem.expect("memory fault").ea
}

#[test]
fn long_loops_recheck_their_span_past_the_cap() {
    // More than 65536 iterations at VL 1: the loop-entry span check covers 65536 of them,
    // the header checks the rest; dst ends at word 69632, where the store faults.
    let p = asm(&plain_copy((0x100000, 0x50000), (0x200000, 0x44000), 70000));
    for vl in [1, 2] {
        let (r, st) = check(&p, vl, false, None);
        assert_eq!(fault_ea(&r, vl), 0x244000, "vl {vl}");
        assert!(st.jit_retired >= 3 * (69632 / vl as u64), "{st:?}");
    }
}

/// Run `src` on every engine at every VL, both alignment modes: it halts, and the JIT
/// interprets nothing but the final HALT.
fn check_halts_compiled(src: &str) {
    let p = asm(src);
    for vl in VLS {
        for strict in [false, true] {
            let (r, st) = check(&p, vl, strict, None);
            assert_eq!(r.exit(), Exit::Halted, "vl {vl}");
            assert_eq!(st.interp_retired, 1, "only HALT is interpreted: {st:?}");
        }
    }
}

#[test]
fn hot_straight_line_regions_are_recompiled_inline_and_agree() {
    // A branch loop around a hardware loop: the code between them is straight-line regions
    // entered 100 times, first compiled with helper calls, then (hot) with inline vector code,
    // including masked writes (the mask the inner loop leaves) and gathers.
    let src = "
        .mem 0x10000, 0x4000, rw
        .data 0x10000
        .fill 1024, 4, 0x01020304
        .text
        S.LI s1, 0x10000
        S.LI s3, 5
        S.LI s8, 100
        V.LANEID v7
    outer:
        V.ADD v1, v1, v7
        V.LC0 v2
        V.MOV v3, s8
        V.AND v4, v1, 255
        V.LW [s1 + (v4 << 2)], ->v5
        V.FADD.S v6, v5, v6
        V.SW v1, [s1 + (v7 << 3)]
        V.REDSUM s9, v1
        LOOP s3
        V.LW [s1, lc0<<2, 0], ->v5
        V.ADD v1, v1, v5
        ENDLOOP
        S.SUB s8, s8, 1
        BNE s8, 0, outer
        HALT
        ";
    check_halts_compiled(src);
}

#[test]
fn hot_straight_line_regions_run_under_full_and_partial_masks() {
    // The straight-line region at `body` is entered 100 times, every other time under a
    // partial mask (set by the region before it, which ends in a jump): its hot recompile has
    // a copy for each mask, and both must write only active lanes, gather, scatter, load and
    // store contiguously and reduce as the interpreter does.
    let src = "
        .mem 0x10000, 0x4000, rw
        .data 0x10000
        .fill 1024, 4, 0x01020304
        .text
        S.LI s1, 0x10000
        S.LI s2, 0x12000
        S.LI s3, 5
        S.LI s8, 100
        S.LI s11, 0x5a5a5a5a5a5a5a5a
        S.LI s12, 0x3fc00000
        V.LANEID v7
    outer:
        S.AND s10, s8, 1
        S.SUB s10, s0, s10
        S.XOR s10, s10, -1
        S.OR s13, s11, s10
        V.SETMASK s13
        J body
    body:
        V.ADD v1, v1, v7
        V.LC0 v2
        V.MOV v3, s8
        V.AND v4, v1, 255
        V.LW [s1 + (v4 << 2)], ->v5
        V.FADD.S v6, v5, v6
        V.FMA.S v6, v5, s12
        V.SW v1, [s1 + (v7 << 3)]
        V.SW v6, [s2, lc0<<2, 0]
        V.LW [s2, lc0<<2, 8], ->v8
        V.REDSUM s9, v8
        LOOP s3
        V.LW [s1, lc0<<2, 0], ->v5
        V.ADD v1, v1, v5
        ENDLOOP
        S.SUB s8, s8, 1
        BNE s8, 0, outer
        HALT
        ";
    check_halts_compiled(src);
}

#[test]
fn hot_straight_line_gathers_test_their_lanes_for_consecutive_addresses() {
    // A branch loop with a scalar `if` inside runs as hot straight-line regions, one entry
    // per iteration; its gathers and scatters through `v1 = v9 + s7` test the lanes for
    // consecutive elements at each access (`Tx::dyn_contig`) and take one contiguous access
    // when they are. Cases: consecutive lanes; lanes two elements apart (the test fails: the
    // lanes one by one); lanes whose neighbours swap on every iteration the `if` takes (the
    // same code passes and fails the test by turns); consecutive lanes walking into an
    // unmapped page (a precise trap from the contiguous path); a scatter into a read-only
    // tile granule; and each of these with a `V.SETMASK` at the top of the loop that turns
    // lane 0 off every fourth iteration (the region tests the mask before the lanes).
    // Words that differ from their neighbours, so an access one lane off shows.
    let x = f32_words(4096, 41);
    let prog = |setup: &str, flip: &str, src: &str, tile_ro: &str, mask: bool| {
        let mask = if mask {
            "S.ADD s23, s23, 1
            S.AND s24, s23, 3
            S.ADD s24, s24, 1
            S.SHR s24, s24, 2
            S.SUB s24, s10, s24
            V.SETMASK s24"
        } else {
            ""
        };
        format!(
            "
            .mem 0x10000, 0x4000, rw
            .mem 0x20000, 0x4000, rw
            .tilesize 0x4000
            .tileprotect {tile_ro}, 0x40, r
            .data 0x10000
            {x}
            .text
            S.LI s1, {src}
            S.LI s2, 0x20000
            S.LI s3, 3000
            S.VL s8
            S.MOV s7, s0
            S.LI s10, -1
            V.LANEID v9
            {setup}
    top:    {mask}
            V.ADD v1, v9, s7
            V.LW [s1 + (v1 << 2)], ->v3
            S.AND s20, s7, s8
            S.AND s20, s20, 1
            S.SHR s21, s7, 3
            S.AND s21, s21, 1
            S.OR s20, s20, s21
            BEQ s20, 0, skip
            V.MUL v3, v3, 3
            {flip}
    skip:   V.ADD v3, v3, v1
            V.SW v3, [s2 + (v1 << 2)]
            V.SW.local v3, [s0 + (v1 << 2)]
            S.ADD s7, s7, s8
            BLT s7, s3, top
            V.REDSUM s9, v3
            HALT
            "
        )
    };
    let cases = [
        ("", "", "0x10000", "0x3fc0", None),
        ("V.SHL v9, v9, 1", "", "0x10000", "0x3fc0", None),
        ("", "V.XOR v9, v9, 1", "0x10000", "0x3fc0", None),
        ("", "", "0x12000", "0x3fc0", Some(TrapKind::PageFault)),
        (
            "",
            "",
            "0x10000",
            "0x1000",
            Some(TrapKind::TileUnauthorized),
        ),
    ];
    for (setup, flip, src, tile_ro, kind) in cases {
        for mask in [false, true] {
            let p = asm(&prog(setup, flip, src, tile_ro, mask));
            check_trap_every_vl(&p, kind, &format!("{setup}/{flip}/{src}/{tile_ro}/{mask}"));
            check_budgets_at(&p, &[8, 32], 97);
        }
    }
}

#[test]
fn a_loop_carries_what_it_gathered_packed_into_a_store_through_an_index_register() {
    // tile_stage's column loop: a branch loop gathers words (sign-extended, half of them
    // negative) through a read-only index vector of a run-time stride, then stores them
    // through `v1 << 2`, whose entry test finds the lanes consecutive or not. The stored
    // register stays packed across the store and around the back edge; the paths that widen
    // it are the store's lanes (v1 not consecutive), its helper (a fault), every exit, and
    // the final state (`V.REDSUM`, and v4 itself in the snapshot). Cases: consecutive lanes;
    // lanes two apart; consecutive lanes whose stores walk into an unmapped page in the
    // last iterations; a store of halfwords (another width: the register is widened first).
    let x = f32_words(4096, 77);
    let prog = |lanes: &str, dst: &str, store: &str| {
        format!(
            "
            .mem 0x10000, 0x4000, rw
            .mem 0x20000, 0x3000, rw
            .data 0x10000
            {x}
            .text
            S.LI s4, 0x10000
            S.LI s6, {dst}
            S.LI s3, 60
            S.LI s12, 12
            V.LANEID v1
            V.MUL v2, v1, s12
            {lanes}
            S.MOV s9, s0
    cols:   V.LW [s4 + v2], ->v4
            {store} v4, [s6 + (v1 << 2)]
            S.ADD s4, s4, 4
            S.ADD s6, s6, 128
            S.ADD s9, s9, 1
            BLT s9, s3, cols
            V.REDSUM s10, v4
            HALT
            "
        )
    };
    let cases = [
        ("", "0x20000", "V.SW", None),
        ("V.SHL v1, v1, 1", "0x20000", "V.SW", None),
        ("", "0x22000", "V.SW", Some(TrapKind::PageFault)),
        ("", "0x20000", "V.SH", None),
    ];
    for (lanes, dst, store, kind) in cases {
        let p = asm(&prog(lanes, dst, store));
        check_trap_every_vl(&p, kind, &format!("{lanes}/{dst}/{store}"));
        check_budgets_at(&p, &[8, 32], 61);
    }
}

#[test]
fn hot_branch_loops_gather_and_scatter_in_line_when_the_mask_is_full() {
    // A branch loop (one straight-line region, recompiled inline once hot) gathering from and
    // scattering to guest memory and tile space. The mask is all ones except every 8th
    // iteration (lane 0 off, set without a branch), so the in-line path and the helper path
    // alternate in the same code. Cases: no
    // fault; a gather that walks into an unmapped page; a scatter into a read-only tile
    // granule; a tile gather that runs past the end of the tile; lanes that all hit one word.
    let prog = |stride: &str, mem_at: &str, tile_at: &str| {
        format!(
            "
            .tilesize 0x4000
            .tileprotect 0xc00, 0x40, r
            .mem 0x10000, 0x3000, rw
            .data 0x10000
            .fill 3072, 4, 0x91a2b3c4
            .tiledata 0x100
            .fill 256, 4, 0x0f0e0d0c
            .text
            S.LI s1, {mem_at}
            S.LI s2, {tile_at}
            S.LI s8, 100
            S.LI s10, -1
            S.LI s11, -2
            V.LANEID v7
            V.MUL v4, v7, {stride}
        outer:
            S.AND s12, s8, 7
            S.ADD s12, s12, 7
            S.SHR s12, s12, 3
            S.ADD s12, s12, s11
            V.SETMASK s12
            V.LW [s1 + v4], ->v5
            V.ADD v6, v6, v5
            V.SW.U v6, [s1 + v4]
            V.LWI.local [v4 + (16 << 2)], ->v3
            V.ADD v3, v3, v7
            V.SW.U.local v3, [s2 + v4]
            S.ADD s1, s1, 64
            S.ADD s2, s2, 64
            S.SUB s8, s8, 1
            BNE s8, 0, outer
            V.SETMASK s10
            V.REDSUM s9, v6
            HALT
            "
        )
    };
    let cases = [
        ("4", "0x10000", "0x1000", None),
        ("4", "0x12800", "0x1000", Some(TrapKind::PageFault)),
        ("8", "0x10000", "0x800", Some(TrapKind::TileUnauthorized)),
        ("64", "0x10000", "0x3000", Some(TrapKind::TileOutOfBounds)),
        ("0", "0x10000", "0x1000", None),
    ];
    for (stride, mem_at, tile_at, kind) in cases {
        let p = asm(&prog(stride, mem_at, tile_at));
        check_trap_every_vl(&p, kind, &format!("stride {stride} at {mem_at}/{tile_at}"));
    }
}

#[test]
fn branch_loops_carry_packed_registers_into_their_second_copy() {
    // A branch loop (an inner `nz:` loop as SpMV writes it) whose full iterations go on in a
    // second full copy entered with packed registers: contiguous index words, an index
    // masked by an immediate, gathered words and f32 sums (raw NaNs canonicalised at the
    // back edge, where an integer XOR of the next iteration reads them; a quiet NaN with a
    // payload and an infinity in the table), an integer sum of gathered words, and the state
    // after the loop read back. Cases: no fault; a gather faulting in a middle
    // iteration (an index word pointing past the table); exact instruction budgets through
    // the copies.
    let idx = words(160, |i| if i == 77 { 0x4000 } else { (i * 37 + 11) % 200 });
    let table = f32_words(256, 9).replacen("0x", "0x7fc00001, 0x7f800000, 0x", 1);
    let prog = |mask: &str, steps: u32| {
        format!(
            "
            .mem 0x10000, 0x2000, rw
            .mem 0x12000, 0x1000, rw
            .data 0x10000
            {idx}
            .data 0x12000
            {table}
            .text
            S.LI s1, 0x10000
            S.LI s2, 0x12000
            S.LI s4, 0x3f000000
            S.LI s8, {steps}
            S.VL s9
            S.SHL s9, s9, 3
            V.MOV v10, 0
        nz:
            V.LWU [s1, lc0<<2, 0], ->v1
            V.AND v2, v1, {mask}
            V.LW [s2 + (v2 << 2)], ->v3
            V.XOR v13, v13, v11
            V.FMA.S v10, v3, s4
            V.FADD.S v11, v11, v3
            V.ADD v12, v12, v3
            S.ADD s1, s1, s9
            S.SUB s8, s8, 1
            BNE s8, 0, nz
            V.REDSUM s10, v12
            HALT
            "
        )
    };
    for (mask, steps, fault) in [("0xff", 9, false), ("-1", 9, true), ("0x7ff", 3, false)] {
        let p = asm(&prog(mask, steps));
        for vl in VLS {
            for strict in [false, true] {
                let (r, st) = check(&p, vl, strict, None);
                assert!(st.jit_retired > 0, "compiled code ran");
                // Index word 77 (past the table) is read by lanes 2*VL*k + l = 77 only with
                // the full mask; VL 1 reads words 0, 2, 4, ..
                let expect = fault && (77 % (2 * vl) < vl) && (77 / (2 * vl)) < steps;
                assert_eq!(
                    trap_kind(&r.exit()).is_some(),
                    expect,
                    "mask {mask} vl {vl}"
                );
            }
        }
        check_budgets(&p, 7);
    }
}

#[test]
fn compiled_regions_chain_to_their_successors() {
    // A branch loop of three regions (the loop block, a jump target and the back edge's
    // block) around a hardware loop, 600 times: once compiled and hot, each region's exit
    // calls its successor directly, so the dispatcher enters compiled code about once per
    // `CHAIN_DEPTH` regions instead of once per region. Also under an instruction limit
    // that runs out inside a chain.
    let src = "
        .mem 0x10000, 0x1000, rw
        .text
        S.LI s1, 600
        S.LI s3, 3
    top:
        V.ADD v1, v1, s1
        J mid
        S.LI s9, 99
    mid:
        LOOP s3
        V.ADD v2, v2, v1
        ENDLOOP
        S.SUB s1, s1, 1
        BNE s1, 0, top
        V.REDSUM s5, v2
        S.LI s6, 0x10000
        V.SW v2, [s6, lc0<<2, 0]
        HALT
        ";
    let p = asm(src);
    let d = Decoded::new(&p.code);
    for vl in VLS {
        let (r, _) = check(&p, vl, false, None);
        assert_eq!(r.exit(), Exit::Halted);
        let mut m = Machine::new(&p, config(&p, vl, false, None)).expect("machine");
        let mut disp = Dispatcher::new(&d, &m, 0).expect("jit");
        assert_eq!(disp.run(&mut m, &d), Exit::Halted);
        let calls = disp.jit_stats().calls;
        // 600 iterations of 3 regions each (top, mid's loop, the BNE block).
        assert!(
            calls < 300,
            "vl {vl}: {calls} dispatcher calls for 1800 region entries"
        );
        for max in [1000, 2345, 4001] {
            check(&p, vl, false, Some(max));
        }
    }
}

#[test]
fn overlapping_contiguous_copies_keep_group_order() {
    // dst = src + 4 and dst = src - 4: every group reads after the previous group's store.
    for (s1, s2) in [(0x40000, 0x40004), (0x40004, 0x40000)] {
        let src = format!(
            "
            .mem 0x40000, 0x2000, rw
            .data 0x40000
            .fill 1024, 4, 0x01020304
            .word 7, 8, 9
            .text
            S.LI s1, {s1}
            S.LI s2, {s2}
            S.LI s3, 1000
            LOOP s3
            V.LW [s1, lc0<<2, 0], ->v1
            V.ADD v1, v1, 1
            V.SW v1, [s2, lc0<<2, 0]
            ENDLOOP
            HALT
            "
        );
        check_all_vls(&src);
    }
}

#[test]
fn narrow_loads_widened_after_a_store_over_them_keep_the_loaded_bytes() {
    // Bytes loaded packed and widened later (a narrow multiply) are read again from memory
    // as extending loads when nothing was stored since; here a store overwrites them between
    // the load and the multiply (in the same iteration, and over the next iteration's bytes
    // too), so the multiply must use what was loaded. Signed and unsigned bytes and
    // halfwords, accumulated and reduced, at every VL.
    let bytes: Vec<String> = (0..2048u32)
        .map(|i| format!("{:#x}", (i * 37 + 11) & 0xff))
        .collect();
    for (ld, st, shift) in [
        ("V.LB", "V.SB", 0),
        ("V.LBU", "V.SB", 0),
        ("V.LH", "V.SH", 1),
    ] {
        for (over, n) in [(0, 200), (1 << shift, 199)] {
            let src = format!(
                "
                .mem 0x10000, 0x1000, rw
                .data 0x10000
                .byte {data}
                .text
                S.LI s1, 0x10000
                S.LI s2, {over}
                S.ADD s2, s2, s1
                S.LI s3, {n}
                V.MOV v3, 0
                LOOP s3
                {ld} [s1, lc0<<{shift}, 0], ->v1
                {ld} [s1, lc0<<{shift}, 1024], ->v2
                {st} v2, [s2, lc0<<{shift}, 0]
                V.MUL v4, v1, v2
                V.ADD v3, v3, v4
                ENDLOOP
                V.REDSUM s5, v3
                HALT
                ",
                data = bytes.join(", ")
            );
            check_all_vls(&src);
        }
    }
}

#[test]
fn scatters_store_the_data_loaded_right_before_them() {
    // A contiguous load right before a scatter of it is loaded after the scatter's range
    // check (`Tx::scatters_next`). The scatter here writes into the very words its data came
    // from (the index table reverses every group of 8 words of the array in place), so
    // later iterations load what earlier ones scattered; the data register is read again
    // after the scatter and written back at the end; the store is as wide as the load or
    // narrower (a halfword of every word); and an index past the mapped page in the last
    // iteration, or in the third, traps there with the earlier iterations' stores done.
    let idx: Vec<String> = (0..256u32)
        .map(|i| format!("{}", (i & !7) | (7 - (i & 7))))
        .collect();
    let words: Vec<String> = (0..256u32)
        .map(|i| format!("{:#x}", (i * 0x0101_0101) ^ 3))
        .collect();
    for (st, sh) in [("V.SW", 2), ("V.SH", 1)] {
        for bad in [None, Some(20), Some(250)] {
            let mut idx = idx.clone();
            if let Some(b) = bad {
                idx[b] = "0x4000".into();
            }
            let src = format!(
                "
                .mem 0x10000, 0x1000, rw
                .mem 0x11000, 0x1000, r
                .data 0x10000
                .word {words}
                .data 0x11000
                .word {idx}
                .text
                S.LI s1, 0x11000
                S.LI s2, 0x10000
                S.LI s3, 256
                V.MOV v6, 0
                LOOP s3
                V.LWU [s1, lc0<<2, 0], ->v2
                V.LW [s2, lc0<<2, 0], ->v3
                {st} v3, [s2 + (v2 << {sh})]
                V.ADD v6, v6, v3
                ENDLOOP
                V.REDSUM s5, v6
                HALT
                ",
                words = words.join(", "),
                idx = idx.join(", "),
            );
            check_all_vls(&src);
        }
    }
}

#[test]
fn copy_loops_copy_in_bulk_only_when_disjoint() {
    // A loop of nothing but a contiguous load and the store of it copies its checked span
    // in one piece when source and destination are disjoint; any overlap (a word apart, a
    // group or more apart, the same range) must keep the iteration order. Distinct words
    // make an order change visible; the loaded register's final value is compared too.
    let words: Vec<String> = (0..3000u64)
        .map(|i| format!("{:#x}", (i * 2_654_435_761) & 0xffff_ffff))
        .collect();
    let data = words.join(", ");
    for (d, n) in [
        (4i64, 1000u64),
        (-4, 1000),
        (256, 1000),
        (-512, 777),
        (0, 1000),
    ]
    .into_iter()
    .chain([(4000, 1000), (4004, 1001), (8192, 2000)])
    {
        for (ld, st) in [("V.LW", "V.SW"), ("V.LBU", "V.SB"), ("V.LD", "V.SD")] {
            let sh = match ld {
                "V.LW" => "lc0<<2",
                "V.LD" => "lc0<<3",
                _ => "lc0",
            };
            let src = format!(
                "
                .mem 0x40000, 0x8000, rw
                .data 0x41000
                .word {data}
                .text
                S.LI s1, 0x41000
                S.LI s2, {dst}
                S.LI s3, {n}
                LOOP s3
                {ld} [s1, {sh}, 0], ->v1
                {st} v1, [s2, {sh}, 0]
                ENDLOOP
                HALT
                ",
                dst = 0x41000 + d,
            );
            check_all_vls(&src);
        }
    }
}

#[test]
fn loop_body_reentered_with_full_mask_after_the_trip() {
    // After the loop, V.SETMASK makes the mask all ones and J re-enters the body with
    // LC0BASE >= trip: one full iteration runs, then ENDLOOP leaves.
    let src = "
        .mem 0x10000, 0x1000, r
        .mem 0x40000, 0x4000, rw
        .text
        S.LI s1, 0x10000
        S.LI s2, 0x40000
        S.LI s3, 5
        S.LI s9, -1
        LOOP s3
    body:
        V.LW [s1, lc0<<2, 0], ->v1
        V.SW v1, [s2, lc0<<2, 0]
        ENDLOOP
        BNE s10, 0, done
        S.LI s10, 1
        V.SETMASK s9
        J body
    done:
        HALT
        ";
    check_all_vls(src);
}

#[test]
fn tiered_compiles_hot_loop_after_threshold() {
    let p = asm(&copy_src(4096, 0x4000));
    let cfg = config(&p, 8, false, None);
    let (s, st) = run_one(&p, cfg, Engine::Tiered, 16);
    assert_eq!(s.exit(), Exit::Halted);
    assert_eq!(st.compiled_regions, 1, "{st:?}");
    // The body runs interpreted until its count passes 16, then compiled.
    assert!(st.interp_retired >= 16 * 4, "{st:?}");
    assert!(st.jit_retired > 400 * 4, "{st:?}");
    let (_, ist) = run_one(&p, cfg, Engine::Interp, 0);
    assert_eq!(ist.jit_retired, 0);
    assert_eq!(ist.compiled_regions, 0);
}

/// Background compilation (the default for tiered runs): the run goes on interpreting while
/// a compiler thread works, and enters compiled code once it is ready; with the test hook
/// (the run waits for about every other compile) compiled code takes over at different
/// points for different seeds, and every run ends in the interpreter's state.
#[test]
fn background_compiles_take_over_at_any_point_and_agree() {
    let p = asm(&copy_src(4096, 0x8000));
    let cfg = config(&p, 32, false, None);
    let (reference, _) = run_one(&p, cfg, Engine::Interp, 0);
    let mut compiled_runs = 0;
    for seed in 0..8u64 {
        let mut m = Machine::new(&p, cfg).expect("machine");
        let d = Decoded::new(&p.code);
        let opts = VmOptions {
            jit_threshold: 1,
            background: true,
            compile_delay_seed: Some(seed),
            code_cache: None,
            observer: None,
            compile_after: std::time::Duration::ZERO,
            quick_loops: false,
            step_loops: false,
        };
        let (exit, stats) = vm::run(Engine::Tiered, &mut m, &d, &opts);
        assert_eq!(snap(&m, exit), reference, "seed {seed}");
        assert_eq!(stats.jit_retired + stats.interp_retired, m.retired);
        compiled_runs += usize::from(stats.jit_retired > 0);
    }
    assert!(compiled_runs > 0, "no background compile was ever used");
    vm::wait_for_compilers();
}

/// A background-tier run interprets its start in slices of instructions (no compiler until
/// `compile_after` has passed): the slices are pauses, not limits, whatever the real limit.
#[test]
fn background_start_slices_keep_limits_and_results_exact() {
    let p = asm(&copy_src(4096, 0x8000));
    for max in [
        None,
        Some(5),
        Some(1023),
        Some(1024),
        Some(1025),
        Some(2049),
        Some(3000),
    ] {
        let cfg = config(&p, 8, false, max);
        let (reference, _) = run_one(&p, cfg, Engine::Interp, 0);
        for after in [
            std::time::Duration::ZERO,
            std::time::Duration::from_secs(60),
        ] {
            let mut m = Machine::new(&p, cfg).expect("machine");
            let opts = VmOptions {
                compile_after: after,
                ..VmOptions::default()
            };
            let (exit, stats) = vm::run(Engine::Tiered, &mut m, &Decoded::new(&p.code), &opts);
            assert_eq!(snap(&m, exit), reference, "max {max:?}, after {after:?}");
            assert_eq!(m.config.max_instructions, max, "the limit is restored");
            assert_eq!(stats.jit_retired + stats.interp_retired, m.retired);
            if after > std::time::Duration::ZERO {
                assert_eq!(stats.interp_retired, m.retired, "interpreted throughout");
            }
        }
    }
    vm::wait_for_compilers();
}

#[test]
fn faults_in_compiled_loop_first_middle_tail() {
    // dst has 0x1000 bytes = 1024 words; copying n > 1024 words faults at word 1024.
    // VL 32: word 1024 is the first lane of iteration 32 (middle); n = 1030 puts it in the
    // tail iteration; dst mapped 0 bytes past... first iteration: use an unmapped dst page.
    for n in [1025, 1030, 2000] {
        for vl in VLS {
            let p = asm(&copy_src(n, 0x1000));
            let (r, _) = check(&p, vl, false, None);
            assert_eq!(
                trap_kind(&r.exit()),
                Some(TrapKind::PageFault),
                "n {n} vl {vl}"
            );
            let Exit::Trapped(t) = r.exit() else {
                unreachable!()
            };
            let mf = t.mem.expect("memory fault");
            assert_eq!(mf.ea, 0x41000, "n {n} vl {vl}");
            assert_eq!(mf.lane, (1024 % vl as u64) as u32);
        }
    }
    // First iteration: the source read-only page is the store target.
    let src = copy_src(100, 0x1000).replace("S.LI s2, 0x40000", "S.LI s2, 0x10040");
    let p = asm(&src);
    for vl in VLS {
        let (r, _) = check(&p, vl, false, None);
        assert_eq!(trap_kind(&r.exit()), Some(TrapKind::PermissionFault));
    }
}

#[test]
fn max_instructions_inside_compiled_loops_is_exact() {
    let p = asm(&copy_src(300, 0x4000));
    for vl in [1, 4, 32] {
        let total = check(&p, vl, false, None).0.result.instructions;
        for max in (0..total + 2)
            .step_by(7)
            .chain([total - 1, total, total + 1])
        {
            let (r, _) = check(&p, vl, false, Some(max));
            if max < total {
                assert_eq!(r.exit(), Exit::Limit, "max {max}");
                assert_eq!(r.result.instructions, max);
            } else {
                assert_eq!(r.exit(), Exit::Halted);
                assert_eq!(r.result.instructions, total);
            }
        }
    }
}

#[test]
fn widths_extensions_and_masks() {
    check_all_vls(
        "
        .mem 0x10000, 0x2000, rw
        .data 0x10000
        .byte 0x80, 0x7f, 0xff, 1, 2, 0xfe, 0x81, 3, 4, 5, 6, 7, 8, 9, 10, 11
        .half 0x8000, 0x7fff, 0xffff, 1, 2, 0xfffe, 0x8001, 3
        .word 0x80000000, 0x7fffffff, 0xffffffff, 1
        .fill 64, 8, 0x8899aabbccddeeff
        .text
        S.LI s1, 0x10000
        S.LI s2, 0x11000
        S.LI s3, 200
        S.LI s6, 0x5a5a5a5a5a5a5a5
        S.LI s7, 255
        LOOP s3
        V.LB [s1, lc0, 0], ->v1
        V.LBU [s1, lc0, 0], ->v2
        V.LH [s1, lc0<<1, 16], ->v3
        V.LHU [s1, lc0<<1, 16], ->v4
        V.LW [s1, lc0<<2, 32], ->v5
        V.LWU [s1, lc0<<2, 32], ->v6
        V.LD [s1, lc0<<3, 48], ->v7
        V.ADD v8, v1, v2
        V.XOR v8, v8, v3
        V.SUB v8, v8, v4
        V.MUL v8, v8, v5
        V.OR v8, v8, v6
        V.AND v9, v7, v8
        V.SB v8, [s2, lc0, 0]
        V.SH v9, [s2, lc0<<1, 512]
        V.SW v3, [s2, lc0<<2, 1024]
        V.SD v5, [s2, lc0<<3, 2048]
        V.SHL v10, v8, 3
        V.SRA v11, v8, s3
        V.SHR v12, v9, v1
        V.SHL v13, v10, v2
        V.SRA v14, v7, v4
        V.SRA v19, v8, 63
        V.SRA v20, v7, 127
        V.SRA v21, v1, s7
        V.XOR v19, v19, v20
        V.SUB v19, v19, v21
        V.ADD v22, v22, v19
        V.REDSUM s10, v14
        S.ADD s11, s11, s10
        S.GETLANE s12, v13, 5
        S.XOR s11, s11, s12
        V.MOV v15, s6
        V.MOV v16, -7
        V.LANEID v17
        V.LC0 v18
        S.LC0 s13
        S.MASK s14
        S.ADD s15, s15, s14
        S.VL s16
        ENDLOOP
        V.REDSUM s20, v8
        HALT
        ",
    );
}

#[test]
fn setmask_and_partial_masks() {
    check_all_vls(
        "
        .mem 0x10000, 0x2000, rw
        .data 0x10000
        .fill 512, 8, 0x0102030405060708
        .text
        S.LI s1, 0x10000
        S.LI s3, 100
        S.LI s4, 0x5555555555555555
        S.LI s7, 3
    top:
        V.SETMASK s4
        V.LD [s1, lc0<<3, 0], ->v1
        V.ADD v2, v2, v1
        V.SD v2, [s1, lc0<<3, 1024]
        V.SW.U v1, [s1 + v3]
        V.LDI [s1 + (7 << 3)], ->v4
        S.SHL s4, s4, 1
        S.OR s4, s4, 1
        S.SUB s7, s7, 1
        BNE s7, 0, top
        S.MASK s9
        V.SETMASK s0
        V.SD v2, [s0, lc0<<3, 0]
        V.REDSUM s10, v2
        HALT
        ",
    );
}

#[test]
fn gather_scatter_register_and_immediate_forms() {
    check_all_vls(
        "
        .mem 0x10000, 0x4000, rw
        .data 0x10000
        .fill 1024, 4, 0x11223344
        .text
        S.LI s1, 0x10000
        S.LI s2, 0x12000
        S.LI s3, 64
        S.LI s4, 3
        LOOP s3
        V.LC0 v1
        V.MUL v2, v1, 7
        V.AND v2, v2, 255
        V.LW [s1 + (v2 << 2)], ->v3
        V.LHU [s1 + v2], ->v4
        V.LBI [s1 + 5], ->v5
        V.LWI.U [s1 + -0], ->v6
        V.LDI.U [s1 + 3], ->v7
        V.LHI [s1 + (3 << 1)], ->v8
        V.LB [s1 + (s4 << 2)], ->v9
        V.SW v3, [s2 + (v1 << 2)]
        V.SD v4, [s2 + (v2 << (3 + 1))]
        V.SH.U v5, [s2 + (v1 << 5)]
        V.SBI v6, [s2 + 4000]
        V.SWI v1, [s2 + (17 << 2)]
        V.SDI.U s4, [s2 + 4096]
        V.SB v1, [s2 + lc0]
        V.LDI.U [v1 + 0x12000], ->v10
        V.ADD v11, v11, v10
        ENDLOOP
        V.REDSUM s9, v11
        HALT
        ",
    );
}

/// Gathers and scatters whose lanes straddle the 4 GiB line, in a loop compiled in line:
/// the compiled range check takes its bounds from the 32-bit halves of the lane EAs. Even
/// lanes walk slowly from the base; odd lanes walk twice as fast, above the 4 GiB line (A)
/// or down past the mapped bytes with the same upper half as the even lanes (B). At the
/// longer trip count only odd lanes leave the mapped bytes, where the access must trap
/// precisely.
#[test]
fn gathers_and_scatters_across_the_4_gib_line_agree() {
    // Odd lanes' index, from v8 = lc0 >> 1 and v7 = lc0 >> 2: A 1024 + (lc0 >> 1), past the
    // mapped end from lc0 = 2048; B -(lc0 >> 1) - 1, below the mapped start from lc0 = 1024.
    let a = (
        "0xFFFFF000",
        "V.ADD v8, v8, 1024\n V.SUB v8, v8, v7",
        [2040, 2200],
    );
    let b = (
        "0xFFFFF800",
        "V.ADD v8, v8, v7\n V.ADD v8, v8, 1\n V.MUL v8, v8, -1",
        [1000, 1100],
    );
    for (base, odd, trips) in [a, b] {
        for n in trips {
            let src = format!(
                "
                .mem 0xFFFFF000, 0x2000, rw
                .data 0xFFFFF000
                .fill 2048, 4, 0x5A5A1234
                .text
                S.LI s1, {base}
                S.LI s3, {n}
                LOOP s3
                V.LC0 v1
                V.AND v6, v1, 1
                V.SHR v7, v1, 2
                V.SHR v8, v1, 1
                {odd}
                V.MUL v8, v8, v6
                V.ADD v2, v7, v8
                V.LW [s1 + (v2 << 2)], ->v3
                V.ADD v3, v3, v1
                V.SW v3, [s1 + (v2 << 2)]
                V.LHU [s1 + (v2 << 2)], ->v4
                V.ADD v5, v5, v4
                ENDLOOP
                V.REDSUM s9, v5
                HALT
                "
            );
            let p = asm(&src);
            for vl in VLS {
                for strict in [false, true] {
                    let cfg = Config {
                        mem_limit: 1 << 33,
                        ..config(&p, vl, strict, None)
                    };
                    check_cfg(&p, cfg);
                }
            }
        }
    }
}

/// Gathers and scatters through a lane vector built before the loop (read-only in it): the
/// compiled loop tests at entry whether its lanes step by one element and then accesses each
/// group contiguously. Lane vectors that pass the test (a lane index, plus a constant) and
/// ones that do not (reversed, a step of two, the last lane off by one), each reflected
/// between the three runs of the loop (so a loop compiled for lanes that passed meets lanes
/// that fail, and the other way round); words, halves, 64-bit words and bytes; the longer
/// trip runs past the mapped bytes (a precise trap), the odd base is misaligned (a trap under
/// strict alignment).
#[test]
fn gathers_and_scatters_through_lane_vectors_built_before_the_loop_agree() {
    let builds = [
        "V.LANEID v1",
        "V.LANEID v1\n V.ADD v1, v1, 3",
        "V.LANEID v1\n V.SUB v1, v1, 63\n V.MUL v1, v1, -1",
        "V.LANEID v1\n V.SHL v1, v1, 1",
        "V.LANEID v1\n S.VL s20\n S.SUB s20, s20, 1\n S.LI s21, 1\n S.SHL s21, s21, s20\n \
         V.SETMASK s21\n V.ADD v1, v1, 1\n S.LI s21, -1\n V.SETMASK s21",
    ];
    for build in builds {
        for (base, n) in [(0x10000, 100), (0x10002, 100), (0x10000, 200)] {
            check_all_vls(&format!(
                "
                .mem 0x10000, 0x4000, rw
                .mem 0x20000, 0x1000, r
                .data 0x20000
                .fill 512, 8, 0x8192a3b4c5d6e7f8
                .text
                {build}
                S.LI s9, 0
        outer:  S.LI s1, {base}
                S.LI s3, {n}
                S.LI s5, 0x20000
                LOOP s3
                V.LC0 v2
                V.LW [s5 + (v1 << 2)], ->v4
                V.MUL v3, v2, 3
                V.ADD v3, v3, v4
                V.SW v3, [s1 + (v1 << 2)]
                V.LHU [s5 + (v1 << 1)], ->v5
                V.SH v5, [s1 + (v1 << 1)]
                V.LD [s5 + (v1 << 3)], ->v6
                V.XOR v3, v3, v6
                V.SB v3, [s1 + v1]
                V.LB [s1 + v1], ->v7
                V.ADD v8, v8, v7
                S.ADD s1, s1, 128
                S.ADD s5, s5, 8
                ENDLOOP
                V.MUL v1, v1, -1
                V.ADD v1, v1, 63
                S.ADD s9, s9, 1
                BLT s9, 3, outer
                HALT
                "
            ));
        }
    }
}

/// The memory of [`gathers_and_scatters_through_a_stride_vector_built_before_the_loop_agree`]:
/// 128 KiB of guest memory at 0x10000 and 256 KiB of tile space, their first 128 KiB
/// filled with hashed words.
const STRIDE_FILL: &str = "
            .mem 0x10000, 0x20000, rw
            .tilesize 0x40000
            .text
            S.LI s1, 0x10000
            S.LI s3, 0x8000
            LOOP s3
            V.LC0 v1
            V.MUL v1, v1, -1640531535
            V.SW v1, [s1, lc0<<2, 0]
            V.SW.local v1, [s1, lc0<<2, -0x10000]
            ENDLOOP";

/// Gathers and scatters through an offset vector built before the loop from a pitch in a
/// register (`V.MUL v2, v1, s12`: a column of a matrix, a field of records): the JIT takes
/// the lanes at constant offsets from lane 0 behind a loop-entry test of the step the
/// register had when the loop compiled (`region::lane_strides`). Every engine agrees at
/// every VL with and without `--strict-align`, for pitches above, below and between the
/// element width, negative ones, a pitch that misaligns words, in memory and in tile space,
/// through a hole in the span (every lane in a mapped page, the pages between unmapped),
/// a span running into a read-only page (a precise trap of the scatter) and past the end of
/// memory; an entry whose register no longer steps so (the second pass) takes the lanes.
#[test]
fn gathers_and_scatters_through_a_stride_vector_built_before_the_loop_agree() {
    let kernel = |pitch: i64, src: u64, dst: u64, local: &str, maps: &str| {
        format!(
            "
            .mem 0x30000, 0x1000, r
            {maps}
            {STRIDE_FILL}
            S.LI s12, {pitch}
            V.LANEID v1
            V.MUL v2, v1, s12
            S.MOV s8, s0
    pass:   S.LI s4, {src}
            S.LI s6, {dst}
            S.MOV s9, s0
    col:    V.LW{local} [s4 + v2], ->v4
            V.ADD v4, v4, v1
            V.SW.U v4, [s6 + v2]
            V.LBU [s6 + v2], ->v5
            V.ADD v6, v6, v5
            V.SB v5, [s4 + (v2 << 1)]
            S.ADD s4, s4, 4
            S.ADD s6, s6, 4
            S.ADD s9, s9, 1
            BLT s9, 24, col
            V.MUL v2, v2, -1
            S.ADD s8, s8, 1
            BLT s8, 2, pass
            HALT
            "
        )
    };
    for pitch in [12, 1024, -1024, -8, 2, 3, 36] {
        let (src, dst) = if pitch < 0 {
            (0x27000, 0x2f000)
        } else {
            (0x10100, 0x18000)
        };
        for local in ["", ".local"] {
            let src = if local.is_empty() { src } else { src - 0x10000 };
            check_all_vls(&kernel(pitch, src, dst, local, ""));
        }
    }
    // Every lane in a page of its own, the pages between unmapped: no single run covers the
    // span, so the lanes are checked one by one.
    let maps: String = (0..64)
        .map(|i| format!(".mem {:#x}, 0x1000, rw\n", 0x100000 + 0x2000 * i))
        .collect();
    check_all_vls(&kernel(0x2000, 0x100040, 0x100800, "", &maps));
    // Records walked through a vector of their offsets that the loop bumps by a group's
    // bytes (`V.ADD v7, v7, s13`), as a hardware loop and as a branch loop whose last group
    // runs under a partial mask; two passes, the second through offsets that do not step
    // (squares).
    for (pitch, local) in [(20, ""), (-12, ""), (36, ".local")] {
        let base = if local.is_empty() { 0x18000 } else { 0x8000 };
        let out = if pitch < 0 { 0x2e000 } else { 0x11000 };
        check_all_vls(&format!(
            "
            {STRIDE_FILL}
            S.LI s12, {pitch}
            S.VL s14
            S.MUL s13, s14, s12
            S.MOV s8, s0
    pass:   V.LANEID v7
            V.MUL v7, v7, s12
            BEQ s8, 0, go
            V.LANEID v10
            V.MUL v7, v10, v10
    go:     S.LI s4, {base}
            S.LI s6, {out}
            S.LI s3, 200
            LOOP s3
            V.LW{local} [s4 + v7], ->v4
            S.ADD s5, s4, 4
            V.LHU{local} [s5 + v7], ->v5
            V.ADD v4, v4, v5
            V.SW v4, [s6, lc0<<2, 0]
            V.ADD v7, v7, s13
            ENDLOOP
            S.LI s3, 150
            S.MOV s9, s0
    br:     V.LW{local} [s4 + v7], ->v4
            V.SW.U v4, [s6 + v7]
            V.ADD v7, v7, s13
            S.ADD s9, s9, s14
            BLT s9, s3, br
            S.ADD s8, s8, 1
            BLT s8, 2, pass
            HALT
            "
        ));
    }
    // A scatter whose span runs into the read-only page, or below the first page: from VL 32
    // on its lanes reach there, and every engine traps at the same lane.
    for (pitch, dst, what) in [(128, 0x2f800, "read-only page"), (-128, 0x10800, "below")] {
        let p = asm(&kernel(pitch, 0x18000, dst, "", ""));
        for vl in VLS {
            for strict in [false, true] {
                let (r, _) = check(&p, vl, strict, None);
                assert_eq!(trap_kind(&r.exit()).is_some(), vl >= 32, "{what}, vl {vl}");
            }
        }
    }
}

#[test]
fn float_ops_canonical_nan_and_fma() {
    check_all_vls(
        "
        .mem 0x10000, 0x1000, rw
        .data 0x10000
        .float 1.5, -0.0, inf, nan, 3.0, 1e-45, 2.5, -inf
        .float 1e30, 1e30, -1e30, 0.1, 7.0, 8.0, 9.0, 10.0
        .double 1.5, -0.0, inf, nan, 3.0, 5e-324, 2.5, -inf
        .double 1e300, 1e300, -1e300, 0.1, 7.0, 8.0, 9.0, 10.0
        .text
        S.LI s1, 0x10000
        S.LI s3, 16
        S.LI s5, 0x3f800000
        LOOP s3
        V.LWU [s1, lc0<<2, 0], ->v1
        V.LWU [s1, lc0<<2, 4], ->v2
        V.LD [s1, lc0<<3, 64], ->v3
        V.LD [s1, lc0<<3, 72], ->v4
        V.FADD.S v5, v1, v2
        V.FSUB.S v6, v1, v2
        V.FMUL.S v7, v1, v2
        V.FMA.S v8, v1, v2
        V.FADD.S v9, v1, s5
        V.FADD.D v10, v3, v4
        V.FSUB.D v11, v3, v4
        V.FMUL.D v12, v3, v4
        V.FMA.D v13, v3, v4
        V.FMA.D v14, v10, v10
        V.FMUL.S v15, v3, v4
        ENDLOOP
        HALT
        ",
    );
}

#[test]
fn raw_f32_results_are_canonical_where_a_loop_stores_them() {
    // A loop's full copies store an f32 result straight from its raw lanes, testing two
    // chunks at a time for NaN (`Tx::store_canonical_pairs`; all at once for a long chain of
    // multiply-adds, below). NaN lanes here come from a
    // quiet NaN with a payload, a signalling NaN, a negative NaN and inf - inf (x86's default
    // NaN is negative), in the first or only the second chunk of a pair (words 14 and 95: a
    // word's NaN reaches lanes w - 2 ..= w, all in lanes 4-7 of an 8-lane group), alone in a
    // chunk and in both; the stored register is also read afterwards (V.ADD) and written
    // back at the exit.
    let mut words = vec![0x3fa0_0000u32; 520]; // 1.25
    for (i, w) in [
        (3, 0x7fc0_0123),
        (5, 0x7f80_0001),
        (14, 0x7fc0_0042),
        (18, 0xffc0_0000),
        (40, 0x7f80_0000),
        (41, 0xff80_0000),
        (77, 0xffff_ffff),
        (95, 0xff80_0003),
        (130, 0x7fc0_0000),
        (131, 0x7fc0_0001),
        (300, 0x7f80_0000),
        (301, 0x7f80_0000),
        (511, 0xff80_0001),
    ] {
        words[i] = w;
    }
    let data = words
        .iter()
        .map(|w| format!("{w:#x}"))
        .collect::<Vec<_>>()
        .chunks(8)
        .map(|c| format!("        .word {}\n", c.join(", ")))
        .collect::<String>();
    // Two stores, one, and a store to tile space (whose data is made wide, and canonical,
    // before the store: a raw packed register must not reach it as it is).
    for (first, second) in [
        ("V.SW v6, [s2, lc0<<2, 0]", "V.SW v7, [s2, lc0<<2, 4096]"),
        ("V.SW v6, [s2, lc0<<2, 0]", ""),
        (
            "V.SW.local v6, [s0, lc0<<2, 0]",
            "V.SW v7, [s2, lc0<<2, 4096]",
        ),
    ] {
        check_all_vls(&format!(
            "
        .tilesize 4096
        .mem 0x10000, 0x4000, rw
        .data 0x10000
{data}
        .text
        S.LI s1, 0x10000
        S.LI s2, 0x12000
        S.LI s3, 509
        S.LI s10, 0x3f000000
        S.LI s11, 0xbe000000
        LOOP s3
        V.LW [s1, lc0<<2, 0], ->v1
        V.LW [s1, lc0<<2, 4], ->v2
        V.LW [s1, lc0<<2, 8], ->v3
        V.FMUL.S v6, v1, s10
        V.FMA.S v6, v2, s11
        V.FMA.S v6, v3, s10
        {first}
        V.FSUB.S v7, v2, v3
        {second}
        ENDLOOP
        V.ADD v8, v6, v7
        HALT
        "
        ));
    }
    // A matrix product's shape: a register eight multiply-adds accumulate into (at least
    // `LONG_FMA_CHAIN`), read from memory and stored back in place, tested for NaN once for
    // all its chunks; broadcast operands set before the loop, one of them a NaN with a
    // payload in a second variant.
    for b3 in [0, 5] {
        check_all_vls(&format!(
            "
        .mem 0x10000, 0x4000, rw
        .data 0x10000
{data}
        .text
        S.LI s1, 0x10000
        S.LI s2, 0x12000
        S.LI s3, 500
        V.LWI [s1 + (0 << 2)], ->v20
        V.LWI [s1 + (1 << 2)], ->v21
        V.LWI [s1 + (2 << 2)], ->v22
        V.LWI [s1 + ({b3} << 2)], ->v23
        LOOP s3
        V.LW [s2, lc0<<2, 0], ->v6
        V.LW [s1, lc0<<2, 0], ->v1
        V.FMA.S v6, v1, v20
        V.LW [s1, lc0<<2, 4], ->v1
        V.FMA.S v6, v1, v21
        V.LW [s1, lc0<<2, 8], ->v1
        V.FMA.S v6, v1, v22
        V.LW [s1, lc0<<2, 12], ->v1
        V.FMA.S v6, v1, v23
        V.LW [s1, lc0<<2, 16], ->v1
        V.FMA.S v6, v1, v20
        V.LW [s1, lc0<<2, 20], ->v1
        V.FMA.S v6, v1, v21
        V.LW [s1, lc0<<2, 24], ->v1
        V.FMA.S v6, v1, v22
        V.LW [s1, lc0<<2, 28], ->v1
        V.FMA.S v6, v1, v23
        V.SW v6, [s2, lc0<<2, 0]
        ENDLOOP
        V.ADD v8, v6, v6
        HALT
        "
        ));
    }
    // The same data through a body that stores loaded bits as they are (NaN payloads kept:
    // only FP results are canonicalised) next to FP work on a register set before the loop
    // (a broadcast, as a matrix multiply's row of A) and on a scalar.
    check_all_vls(&format!(
        "
        .mem 0x10000, 0x4000, rw
        .data 0x10000
{data}
        .text
        S.LI s1, 0x10000
        S.LI s2, 0x12000
        S.LI s3, 509
        S.LI s10, 0x40000000
        V.LWI [s1 + (3 << 2)], ->v20
        LOOP s3
        V.LW [s1, lc0<<2, 4], ->v1
        V.LW [s1, lc0<<2, 8], ->v2
        V.FMA.S v2, v1, v20
        V.FMUL.S v3, v2, s10
        V.SW v1, [s2, lc0<<2, 0]
        ENDLOOP
        HALT
        "
    ));
}

#[test]
fn packed_f32_loops_feed_wide_ops_and_stores() {
    // Full iterations keep f32 data packed (four per f32x4 op): scalar and vector operands
    // (a NaN scalar among them), the destination aliasing a source, a packed result feeding a 64-bit V.ADD and
    // a V.SD (widened with zero extension), and NaN, infinity, -0.0 and subnormal inputs.
    check_all_vls(
        "
        .mem 0x10000, 0x2000, rw
        .data 0x10000
        .float 1.5, -0.0, inf, nan, 3.0, 1e-45, 2.5, -inf, 1e30, -1e30, 0.1, 7.0
        .float 1e-40, -3.5, 8.0, nan, 2.0, 4.0, -inf, 0.5, 6.0, 1e38, -1e38, 9.0
        .float 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0
        .float -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0, -10.0, -11.0, -12.0
        .text
        S.LI s1, 0x10000
        S.LI s2, 0x10800
        S.LI s3, 48
        S.LI s4, 0x3fc00000
        S.LI s5, 0x7fc00001
        LOOP s3
        V.LW [s1, lc0<<2, 0], ->v1
        V.LWU [s1, lc0<<2, 4], ->v2
        V.FMUL.S v3, v1, s4
        V.FADD.S v3, v3, v2
        V.FSUB.S v4, v3, s5
        V.FMUL.S v1, v1, v1
        V.ADD v6, v6, v3
        V.SW v3, [s2, lc0<<2, 0]
        V.SD v4, [s2, lc0<<3, 256]
        ENDLOOP
        HALT
        ",
    );
}

/// `n` pseudo-random f32 words (finite, mixed signs and magnitudes) as `.word` lines.
/// A `.word` directive of `n` words, word `i` being `f(i)`.
fn words(n: u32, f: impl Fn(u32) -> u32) -> String {
    let list: Vec<String> = (0..n).map(|i| format!("{:#x}", f(i))).collect();
    format!(".word {}", list.join(", "))
}

fn f32_words(n: usize, seed: u64) -> String {
    let mut x = seed;
    let mut out = String::new();
    for i in 0..n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let v = ((x >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 64.0;
        out += if i % 8 == 0 { "\n        .word " } else { ", " };
        out += &format!("{:#x}", v.to_bits());
    }
    out + "\n"
}

/// A program over two f32 arrays, `x` at 0x10000 and `y` at 0x10640 (`.word` lines), with
/// `s1` and `s2` pointing at them before `code`.
fn over_x_and_y(x: &str, y: &str, code: &str) -> String {
    format!(
        "
        .mem 0x10000, 0x2000, rw
        .data 0x10000
        {x}
        .data 0x10640
        {y}
        .text
        S.LI s1, 0x10000
        S.LI s2, 0x10640
        {code}"
    )
}

/// A loop body updating y in place: y = a x + y.
const AXPY_IN_PLACE: &str = "V.LW [s1, lc0<<2, 0], ->v1
         V.LW [s2, lc0<<2, 0], ->v2
         V.FMA.S v2, v1, s4
         V.SW v2, [s2, lc0<<2, 0]";

/// A loop body with a stencil's neighbours of x into y, as an FMA chain.
const STENCIL3: &str = "V.LW [s1, lc0<<2, 4], ->v1
         V.LW [s1, lc0<<2, 0], ->v2
         V.LW [s1, lc0<<2, 8], ->v3
         V.FMUL.S v4, v1, s4
         V.FMA.S v4, v2, s5
         V.FMA.S v4, v3, s5
         V.SW v4, [s2, lc0<<2, 4]";

#[test]
fn rows_whose_first_trip_has_no_tail_run_later_tails_exactly() {
    // A loop is compiled for the entry that made it hot: its first row here has 64 points
    // (no tail at any VL), so the jit engine compiles the row loop without a tail copy
    // (`region::tail_expected`); the rows after it have 67, 70, ... points, and their tails
    // take the straight form of the body. Every engine ends as the interpreter does, also
    // when an instruction limit stops the run anywhere.
    let x = f32_words(400, 3);
    let y = f32_words(400, 4);
    for body in [STENCIL3, AXPY_IN_PLACE] {
        let src = over_x_and_y(
            &x,
            &y,
            &format!(
                "
            S.LI s3, 64
            S.LI s7, 5
            S.LI s4, 0x3fc00000
            S.LI s5, 0xbe800000
    row:    LOOP s3
            {body}
            ENDLOOP
            S.ADD s3, s3, 3
            S.ADD s1, s1, 64
            S.ADD s2, s2, 64
            S.SUB s7, s7, 1
            BNE s7, 0, row
            HALT
            "
            ),
        );
        check_all_vls(&src);
        check_budgets(&asm(&src), 7);
    }
    // A branch loop inside such rows: first entered under a full mask (compiled without
    // its partial-mask copy), then, in the later rows' last groups, under a partial one for
    // more iterations than a lazy loop may leave for the straight form before it is
    // compiled again.
    let src = format!(
        "
        .mem 0x10000, 0x2000, rw
        .data 0x10000
        {x}
        .text
        S.LI s1, 0x10000
        S.LI s3, 64
        S.LI s8, 3
        S.LI s4, 0x3f400000
row:    LOOP s3
        V.LW [s1, lc0<<2, 0], ->v1
        S.MOV s7, s0
inner:  V.FMUL.S v1, v1, s4
        V.ADD v2, v2, v1
        S.ADD s7, s7, 1
        BLT s7, 12, inner
        V.SW v1, [s1, lc0<<2, 0]
        ENDLOOP
        S.ADD s3, s3, 3
        S.SUB s8, s8, 1
        BNE s8, 0, row
        V.REDSUM s9, v2
        HALT
        "
    );
    check_all_vls(&src);
    check_budgets(&asm(&src), 11);
}

/// `p` at VLs 4 and 16 under instruction limits from 0 past its end in steps of `step`, and
/// one short of its end: every engine stops where the interpreter does.
fn check_budgets(p: &Program, step: usize) {
    check_budgets_at(p, &[4, 16], step);
}

/// Every engine agrees at these VLs under instruction limits every `step` instructions
/// from 0 past the program's total (and at the total and one below), each run retiring
/// exactly its limit or the total.
fn check_budgets_at(p: &Program, vls: &[u32], step: usize) {
    for &vl in vls {
        let total = check(p, vl, false, None).0.result.instructions;
        budget_sweep(p, vl, total, step);
    }
}

/// [`check`] `p` at every VL of [`VLS`], and at those of `budget_vls` also the limit sweep of
/// [`check_budgets_at`] (from the run already made: each VL runs once without a limit).
fn check_every_vl_with_budgets_at(p: &Program, budget_vls: &[u32], step: usize) {
    every_vl_with_budgets(p, budget_vls, step, |_, _| {});
}

/// [`check_every_vl_with_budgets_at`] at VLs 4 and 16 (as [`check_budgets`]), also asserting
/// that compiled code ran at every VL.
fn check_compiled_every_vl_with_budgets(p: &Program, step: usize) {
    every_vl_with_budgets(p, &[4, 16], step, |vl, st| {
        assert!(st.jit_retired > 0, "compiled code ran (vl {vl})");
    });
}

/// [`check`] `p` at every VL, `each` given the jit engine's statistics, then the limit sweep
/// at the VLs of `budget_vls`.
fn every_vl_with_budgets(
    p: &Program,
    budget_vls: &[u32],
    step: usize,
    mut each: impl FnMut(u32, &EngineStats),
) {
    for vl in VLS {
        let (r, st) = check(p, vl, false, None);
        each(vl, &st);
        if budget_vls.contains(&vl) {
            budget_sweep(p, vl, r.result.instructions, step);
        }
    }
}

/// Limits from 0 to past `total` (the retired count of `p`'s run at `vl` without one) by
/// `step`, and `total - 1` and `total`: every engine agrees, and retires `min(limit, total)`.
fn budget_sweep(p: &Program, vl: u32, total: u64, step: usize) {
    for max in (0..total + 2).step_by(step).chain([total - 1, total]) {
        let (r, _) = check(p, vl, false, Some(max));
        assert_eq!(r.result.instructions, max.min(total), "vl {vl} max {max}");
    }
}

#[test]
fn streaming_copies_and_masked_tails_agree() {
    // Loops with hoisted contiguous accesses: their full iterations run in the streaming copy
    // (loads free to move when no store of the proven iterations touches their bytes, an
    // in-place load kept in order), the last proven one in the first full copy, and the tail
    // as a full iteration whose stores write only active lanes and whose registers are
    // blended at ENDLOOP. Trip counts leave tails at most VLs; accumulators are read after
    // the loop; arrays sit back to back; and a tail group reaching into an unmapped page
    // takes the straight form.
    let x = f32_words(400, 1);
    let y = f32_words(400, 2);
    let bodies = [
        // In place: y = a x + y.
        AXPY_IN_PLACE,
        // A load overlapping the store of the same iteration: y[i] = y[i + 1] + y[i].
        "V.LW [s2, lc0<<2, 4], ->v1
         V.LW [s2, lc0<<2, 0], ->v2
         V.FADD.S v3, v1, v2
         V.SW v3, [s2, lc0<<2, 0]",
        // Dead temporaries, an accumulator and a narrower store right after the source.
        "V.LW [s1, lc0<<2, 0], ->v1
         V.MUL v2, v1, v1
         V.ADD v7, v7, v2
         V.FMUL.S v5, v1, s4
         V.SH v2, [s6, lc0<<1, 0]
         V.SW v5, [s2, lc0<<2, 0]",
        // A load whose first use follows a store that overwrites most of its bytes in the
        // same iteration: it must not move past it (the proven ranges overlap).
        "V.LW [s2, lc0<<2, 0], ->v2
         V.LW [s1, lc0<<2, 0], ->v1
         V.SW v1, [s2, lc0<<2, 4]
         V.SW v2, [s6, lc0<<2, 0]",
        // Vector addresses built from V.LC0 (immediate and register-offset forms, an
        // invariant scalar offset, a multiply), hoisted like the lc0 form.
        "V.LC0 v9
         V.SHL v9, v9, 2
         V.ADD v9, v9, s1
         V.LWI.U [v9 + 8], ->v1
         V.LWI.U [v9 - 0], ->v2
         V.LC0 v10
         V.MUL v10, v10, 2
         V.ADD v10, v10, 2
         V.LW [s1 + (v10 << 1)], ->v3
         V.FMUL.S v4, v1, s4
         V.FMA.S v4, v2, s5
         V.FMA.S v4, v3, s5
         V.SW v4, [s2, lc0<<2, 0]",
        // A vector base carried from the previous iteration is not hoisted.
        "V.LWI.U [v9 + 0], ->v1
         V.LC0 v9
         V.SHL v9, v9, 2
         V.ADD v9, v9, s1
         V.FADD.S v1, v1, v1
         V.SW v1, [s2, lc0<<2, 0]",
        // Stencil-like: neighbours of x into y, FMA chain.
        STENCIL3,
    ];
    for (k, body) in bodies.iter().enumerate() {
        for trip in [203, 64, 5] {
            let src = over_x_and_y(
                &x,
                &y,
                &format!(
                    "
                S.LI s6, 0x10c80
                S.LI s3, {trip}
                S.LI s4, 0x3fc00000
                S.LI s5, 0xbe800000
                V.MOV v9, s1
                LOOP s3
                {body}
                ENDLOOP
                V.REDSUM s9, v7
                V.REDSUM s10, v4
                HALT
                "
                ),
            );
            check_all_vls(&src);
            if k == 0 && trip == 203 {
                check_budgets(&asm(&src), 5);
            }
        }
    }
    // The source ends at its page's end: a tail group reaches into the unmapped page above
    // at large VLs (but no active lane does), and at the store's end the same.
    for (sbase, dbase) in [(0x10fc0u64, 0x20000u64), (0x10000, 0x20fc0)] {
        let src = format!(
            "
            .mem 0x10000, 0x1000, r
            .mem 0x20000, 0x1000, rw
            .data 0x10000
            {x}
            .text
            S.LI s1, {sbase}
            S.LI s2, {dbase}
            S.LI s3, 13
            S.LI s4, 0x3fc00000
            LOOP s3
            V.LW [s1, lc0<<2, 0], ->v1
            V.FMUL.S v2, v1, s4
            V.SW v2, [s2, lc0<<2, 0]
            ENDLOOP
            HALT
            "
        );
        check_all_vls(&src);
    }
}

#[test]
fn iteration_local_registers_keep_every_lane_across_loop_runs() {
    // An inner ENDLOOP loop run once per "row" of an outer loop, with trips that leave tails
    // of every length and some runs with no full iteration at all. The registers its body
    // writes before reading them live in the register file between iterations (not loaded
    // at entry nor written back at exits): a tail's inactive lanes must keep what the last
    // full iteration of the same run left, or, in a run of only a tail, what the previous run
    // (or the code before the loop) left. In one variant the third row faults part-way (the
    // source ends below an unmapped page), after full iterations of that row; every variant
    // is also cut at every seventh instruction count.
    let x = f32_words(700, 4);
    for (start, mem, rows) in [(0x10000, 0x3000, 6), (0x10000 + 3476, 0x1000, 6)] {
        let src = format!(
            "
            .mem 0x10000, {mem}, rw
            .mem 0x20000, 0x3000, rw
            .data 0x10000
            {x}
            .text
            S.LI s1, {start}
            S.LI s2, 0x20000
            S.LI s3, 70
            S.LI s7, {rows}
            S.LI s4, 0x3fc00000
            S.LI s5, 0xbe800000
            V.MOV v1, 0x11
            V.MOV v2, s4
            V.LC0 v4
            V.MOV v5, 0x55
            V.MOV v7, s5
    row:    LOOP s3
            V.LW [s1, lc0<<2, 4], ->v1
            V.LW [s1, lc0<<2, 0], ->v2
            V.LC0 v6
            V.SHL v6, v6, 2
            V.ADD v6, v6, s1
            V.LWI.U [v6 + 8], ->v7
            V.FMUL.S v4, v1, s4
            V.FMA.S v4, v2, s5
            V.FMA.S v4, v7, s5
            V.ADD v5, v2, v1
            V.SW v4, [s2, lc0<<2, 0]
            ENDLOOP
            S.ADD s1, s1, 260
            S.ADD s2, s2, 264
            S.SUB s3, s3, 13
            BGE s3, 1, more
            S.LI s3, 37
    more:   S.SUB s7, s7, 1
            BNE s7, 0, row
            V.REDSUM s9, v5
            HALT
            "
        );
        check_all_vls(&src);
        let p = asm(&src);
        if mem == 0x1000 {
            let (r, _) = check(&p, 8, false, None);
            assert!(
                matches!(r.exit(), Exit::Trapped(_)),
                "the third row faults: {:?}",
                r.exit()
            );
        }
        check_budgets_at(&p, &[4, 32], 7);
    }
}

#[test]
fn loop_bodies_entered_under_masks_that_are_not_a_prefix() {
    // A branch into a loop body under a mask `V.SETMASK` made (lanes 0 and 2, then every
    // other lane, ...): not the prefix `LOOP`/`ENDLOOP` leave, which the masked tail's stores
    // of iteration-local registers rely on. The body's registers are written before they
    // are read, so they are iteration-local; their inactive lanes must keep the values the
    // previous pass left, and the stores skip inactive lanes.
    let x = f32_words(600, 9);
    let src = format!(
        "
        .mem 0x10000, 0x3000, rw
        .mem 0x20000, 0x3000, rw
        .data 0x10000
        {x}
        .text
        S.LI s1, 0x10000
        S.LI s2, 0x20000
        S.LI s3, 100
        S.LI s9, 0
        LOOP s3
body:   V.LW [s1, lc0<<2, 0], ->v1
        V.ADD v2, v1, 7
        V.FMUL.S v3, v1, v2
        V.SW v3, [s2, lc0<<2, 0]
        ENDLOOP
        S.ADD s9, s9, 1
        BEQ s9, 1, m1
        BEQ s9, 2, m2
        BEQ s9, 3, m3
        HALT
m1:     S.LI s6, 0x5
        J go
m2:     S.LI s6, 0x5555555555555555
        J go
m3:     S.LI s6, 0x7ffffffffffffffe
go:     V.SETMASK s6
        S.ADD s1, s1, 12
        S.ADD s2, s2, 20
        J body
        "
    );
    check_all_vls(&src);
}

#[test]
fn gathers_and_scatters_indexed_by_read_only_registers_in_loops() {
    // A branch loop whose gather and scatter add a vector register computed before the loop
    // (lane offsets, as a compiler hoists them) to a scalar that moves each iteration: their
    // range checks use the offsets' bounds, computed once at loop entry. Variants: in range;
    // a later iteration reaching an unmapped page; offsets that wrap below the scalar (valid
    // EAs); offsets whose largest unsigned value wraps while another lane's EA lies far
    // above memory, so the wrapped maximum must not be taken for the top of the range; and
    // offsets misaligned under --strict-align.
    let x = f32_words(3000, 5);
    for (stride, s4, iters, top) in [
        (12, 0x10000, 9, 0),
        (12, 0x12000, 100, 0),
        (-4, 0x11000, 9, 0),
        (-4, 0x10ff8, 9, 1),
        (6, 0x10000, 9, 0),
    ] {
        // `J top`: the loop's first entry is the loop region itself (no straight-line run of
        // its first iteration before it).
        let src = format!(
            "
            .mem 0x10000, 0x3000, rw
            .mem 0x20000, 0x3000, rw
            .data 0x10000
            {x}
            .text
            V.LANEID v1
            S.LI s12, {stride}
            V.MUL v2, v1, s12
            BEQ s0, {top}, go
            S.VL s7
            S.SUB s7, s7, 1
            S.LI s13, 1
            S.SHL s13, s13, s7
            V.SETMASK s13
            S.LI s14, 0x8000000000000000
            V.MOV v2, s14
            S.LI s15, -1
            V.SETMASK s15
    go:     S.LI s4, {s4}
            S.LI s6, 0x20000
            S.LI s3, {iters}
            S.MOV s9, s0
            J top
            NOP
    top:    V.LW [s4 + v2], ->v4
            V.LWI [v2 + (0x4400 << 2)], ->v6
            V.ADD v5, v4, s9
            V.ADD v5, v5, v6
            V.SW v5, [s6 + (v1 << 2)]
            V.SWI.U v4, [v2 + 0x21000]
            S.ADD s4, s4, 64
            S.ADD s6, s6, 44
            S.ADD s9, s9, 1
            BLT s9, s3, top
            HALT
            "
        );
        check_all_vls(&src);
    }
}

#[test]
fn gathers_and_scatters_sharing_a_wide_index_register() {
    // SpMV's shape: a branch loop whose index vector is rewritten every iteration (never
    // read-only), read by two gathers and a scatter with different bases and shifts (the
    // index's lane bounds are computed once per value and shared), then moved and used again
    // (the new value's bounds). Variants: in range; the second gather's range leaving the
    // mapping in a later iteration (a precise trap between two uses of shared bounds); a
    // lane at 2^62 + 4 whose shifted EAs wrap onto mapped words (beyond the bounds' reach:
    // checked lane by lane), also beside lanes far past the mapping, and beside a lane at
    // 2^32 whose bound's upper half the wrapped lane's shift would drop; negative indices reaching below the base (wrapping sums); odd
    // indices of a halfword gather with shift 0 (misaligned under --strict-align).
    let x = f32_words(3000, 7);
    let full = "V.LHU [s4 + v1], ->v7\n V.LWI.U [v1 + 0x10000], ->v8";
    for (mul, addk, s4, s5, iters, big, far, tail) in [
        (4, 4, 0x10000, 0x11000, 40, 0, 0, full),
        (3, 5, 0x10000, 0x11000, 40, 0, 0, full),
        (4, 4, 0x10000, 0x12c00, 100, 0, 0, full),
        (4, 4, 0x10000, 0x11000, 40, 1, 0, ""),
        (4, 4, 0x10000, 0x11000, 40, 1, 1, ""),
        (0x100, 4, 0x10000, 0x11000, 40, 1, 0, ""),
        (-4, 4, 0x12000, 0x11800, 40, 0, 0, "V.LHU [s4 + v1], ->v7"),
    ] {
        let src = format!(
            "
            .mem 0x10000, 0x3000, rw
            .mem 0x20000, 0x3000, rw
            .data 0x10000
            {x}
            .text
            V.LANEID v1
            S.LI s12, {mul}
            V.MUL v1, v1, s12
            BEQ s0, {big}, go
            S.LI s13, 2
            V.SETMASK s13
            S.LI s14, 0x4000000000000004
            V.MOV v1, s14
            BEQ s0, {far}, all
            S.LI s13, 1
            V.SETMASK s13
            S.LI s14, 0x100000000
            V.MOV v1, s14
    all:    S.LI s15, -1
            V.SETMASK s15
    go:     S.LI s4, {s4}
            S.LI s5, {s5}
            S.LI s6, 0x21000
            S.LI s3, {iters}
            S.MOV s9, s0
            J top
            NOP
    top:    V.LW [s4 + (v1 << 2)], ->v4
            V.LW [s5 + (v1 << 2)], ->v6
            V.ADD v5, v4, v6
            V.SW v5, [s6 + (v1 << 3)]
            {tail}
            V.ADD v1, v1, {addk}
            V.LWU [s5 + (v1 << 2)], ->v9
            V.ADD v5, v5, v9
            V.SW v5, [s6 + (v1 << 2)]
            S.ADD s9, s9, 1
            BLT s9, s3, top
            HALT
            "
        );
        check_all_vls(&src);
    }
}

#[test]
fn streaming_loops_broadcasting_many_scalars_agree() {
    // A filter's shape: an f32 loop body multiplying by five scalar registers (more than
    // `ROUND_SPLATS_MIN`), which the streaming copy broadcasts from the register file in
    // every round instead of once before the loop. The scalars carry garbage in their upper
    // halves (f32 operations read the low word) and one is a NaN with a payload. Variants:
    // none of them written in the region; one advanced by the loop body each iteration (never
    // read from the register file, which holds its entry value); one written after the loop,
    // in the same region.
    let x = f32_words(2100, 9);
    for (inside, after) in [
        ("", ""),
        ("S.ADD s12, s12, 1", ""),
        ("", "S.ADD s13, s13, 7"),
    ] {
        let src = format!(
            "
            .mem 0x10000, 0x3000, rw
            .mem 0x20000, 0x3000, rw
            .data 0x10000
            {x}
            .text
            S.LI s1, 0x10000
            S.LI s2, 0x20000
            S.LI s10, 0x123456783f000000
            S.LI s11, 0xffffffffbe800000
            S.LI s12, 0x3e000000
            S.LI s13, 0x7fc01234
            S.LI s14, 0x00000001bd800000
            S.LI s3, 2000
            LOOP s3
            V.LW [s1, lc0<<2, 0], ->v1
            V.LW [s1, lc0<<2, 4], ->v2
            V.LW [s1, lc0<<2, 8], ->v3
            V.FMUL.S v4, v1, s10
            V.FMA.S v4, v2, s11
            V.FMA.S v4, v3, s12
            V.FMA.S v4, v1, s14
            V.FMUL.S v5, v3, s13
            {inside}
            V.SW v4, [s2, lc0<<2, 0]
            V.SW v5, [s2, lc0<<2, 0x1000]
            ENDLOOP
            {after}
            HALT
            "
        );
        check_all_vls(&src);
    }
}

#[test]
fn runs_of_uniform_loads_share_one_check() {
    // A matrix kernel's row prologue: loads through one scalar base and constants (a row of
    // A broadcast into registers) before an inner loop, the base advanced per row. The
    // first load of such a run checks the span of them all (`Tx::uniform_load`). Variants:
    // a far load that leaves the first page (into a hole at row 14: a trap in the middle of
    // the run, the loads before it done), or reaches a read-only page (fine for loads); the
    // base rewritten in the middle of the run (by 4, or by 2, which misaligns the words
    // after it: a trap under `--strict-align`); a halfword load in the run (another
    // alignment) and one below the first.
    let x = f32_words(1024, 11);
    for far in [5, 800, 2100] {
        for between in ["", "S.ADD s9, s9, 4", "S.ADD s9, s9, 2"] {
            check_all_vls(&format!(
                "
                .mem 0x10000, 0x1000, rw
                .mem 0x12000, 0x1000, r
                .data 0x10000
                {x}
                .data 0x12000
                .fill 1024, 4, 0x3f800000
                .text
                S.LI s9, 0x10008
                S.LI s11, 0x10c00
                S.LI s3, 40
                S.LI s20, 31
                S.LI s8, 0
        row:    V.LWI [s9 + (0 << 2)], ->v16
                V.LWI [s9 + (1 << 2)], ->v17
                S.ADD s4, s4, 3
                V.LWI [s9 + (2 << 2)], ->v18
                V.LWI [s9 - (2 << 2)], ->v19
                V.LWI [s9 + ({far} << 2)], ->v20
                V.LHI [s9 + (3 << 1)], ->v21
                {between}
                V.LWI [s9 + (3 << 2)], ->v22
                LOOP s3
                V.LW [s11, lc0<<2, 0], ->v1
                V.FMA.S v1, v16, v17
                V.FMA.S v1, v18, v19
                V.FMA.S v1, v20, v22
                V.ADD v2, v2, v21
                V.SW v1, [s11, lc0<<2, 0]
                ENDLOOP
                S.ADD s9, s9, 64
                S.ADD s8, s8, 1
                BLT s8, s20, row
                HALT
                "
            ));
        }
    }
}

/// An array-of-structs loop over `n` records of `1 << sh` bytes at 0x10000: a vector
/// address from `V.LC0` in v5, then `body` (the field loads and the stores to the arrays at
/// `s2`, `s2 + s10`, `s2 + s11`, `s2 + s12`, `s10` being `gap`).
fn aos_loop(sh: u32, n: u64, dst: u64, gap: u64, body: &str) -> String {
    let x = f32_words(2048, 5);
    format!(
        "
        .mem 0x10000, 0x8000, rw
        .data 0x10000
        {x}
        .text
        S.LI s1, 0x10000
        S.LI s2, {dst}
        S.LI s3, {n}
        S.LI s10, {gap}
        S.ADD s11, s10, s10
        S.ADD s12, s11, s10
        LOOP s3
        V.LC0 v5
        V.SHL v5, v5, {sh}
        V.ADD v5, v5, s1
        {body}
        ENDLOOP
        HALT
        "
    )
}

#[test]
fn interleaved_field_loads_agree() {
    // Strided loads of the fields of one array of structs form an interleave group: every
    // member loads the same 16-byte pieces from the lowest member's address and picks its
    // field with shuffles (`Tx::interleave_offset`), and the streaming copy holds the body's
    // stores back to the iteration's end, chunk by chunk (`Tx::flush_stores`), when no two
    // stores of the proven iterations overlap. Variants: four 4-byte fields to four arrays;
    // the same with arrays 4 bytes apart (overlapping stores: no reordering); three fields
    // loaded highest first; pairs of 4-byte fields (stride 8); bytes of 4-byte pixels;
    // 8-byte fields of 16-byte records; the arrays written over the records themselves; a
    // field at a misaligned offset beside aligned ones; FP work between loads and stores.
    let w4 = "V.LWI.U [v5 + 0], ->v1
        V.LWI.U [v5 + 4], ->v2
        V.LWI.U [v5 + 8], ->v3
        V.LWI.U [v5 + 12], ->v4";
    let s4 = "V.SW v1, [s2, lc0<<2, 0]
        V.SW v2, [s2, lc0<<2, s10]
        V.SW v3, [s2, lc0<<2, s11]
        V.SW v4, [s2, lc0<<2, s12]";
    let cases = [
        aos_loop(4, 300, 0x14000, 1200, &format!("{w4}\n{s4}")),
        aos_loop(4, 300, 0x14000, 4, &format!("{w4}\n{s4}")),
        aos_loop(
            4,
            300,
            0x14000,
            1200,
            "V.LWI.U [v5 + 12], ->v4
            V.LWI.U [v5 + 4], ->v2
            V.LWI.U [v5 + 0], ->v1
            V.SW v4, [s2, lc0<<2, 0]
            V.SW v2, [s2, lc0<<2, s10]
            V.SW v1, [s2, lc0<<2, s11]",
        ),
        aos_loop(
            3,
            500,
            0x14000,
            2000,
            "V.LWI.U [v5 + 4], ->v2
            V.LWI.U [v5 + 0], ->v1
            V.SW v1, [s2, lc0<<2, 0]
            V.SW v2, [s2, lc0<<2, s10]",
        ),
        aos_loop(
            2,
            700,
            0x14000,
            700,
            "V.LBUI [v5 + 0], ->v1
            V.LBUI [v5 + 1], ->v2
            V.LBUI [v5 + 2], ->v3
            V.LBUI [v5 + 3], ->v4
            V.SB v1, [s2, lc0, 0]
            V.SB v2, [s2, lc0, s10]
            V.SB v3, [s2, lc0, s11]
            V.SB v4, [s2, lc0, s12]",
        ),
        aos_loop(
            4,
            300,
            0x14000,
            2400,
            "V.LDI.U [v5 + 8], ->v2
            V.LDI.U [v5 + 0], ->v1
            V.SD v1, [s2, lc0<<3, 0]
            V.SD v2, [s2, lc0<<3, s10]",
        ),
        aos_loop(4, 300, 0x10000, 1200, &format!("{w4}\n{s4}")),
        aos_loop(
            4,
            300,
            0x14000,
            1200,
            "V.LWI.U [v5 + 0], ->v1
            V.LWI.U [v5 + 2], ->v2
            V.LWI.U [v5 + 4], ->v3
            V.SW v1, [s2, lc0<<2, 0]
            V.SW v2, [s2, lc0<<2, s10]
            V.SW v3, [s2, lc0<<2, s11]",
        ),
        aos_loop(
            4,
            300,
            0x14000,
            1200,
            &format!(
                "{w4}
            V.FADD.S v6, v1, v2
            V.FMUL.S v7, v3, v4
            V.SW v6, [s2, lc0<<2, 0]
            V.SW v7, [s2, lc0<<2, s10]
            V.SW v1, [s2, lc0<<2, s11]"
            ),
        ),
    ];
    for src in &cases {
        check_all_vls(src);
    }
    // Exits under an instruction limit, at every point of a few iterations.
    let p = asm(&cases[0]);
    for max in [40, 41, 77, 150, 151, 152, 400] {
        for vl in [8, 32] {
            check(&p, vl, false, Some(max));
        }
    }
}

#[test]
fn speculated_base_distances_are_guarded() {
    // The `lc0` form of an array-of-structs loop: each field through a register of its own
    // (`V.LW [s5 + (lc0 << 4)]`), which the JIT joins into one interleave group by the
    // distances between the registers at the entry that made it compile
    // (`analysis::speculate_bases`), checked at every loop entry. The loop is entered six
    // times by an outer branch loop: with the fields' registers 4 bytes apart, then (from
    // round `from` on) with one of them moved (to another record, below the first, onto the
    // same field, far away), so the guard fails at later entries (in the span check of full
    // iterations and at the masked tail's entry: 37 is one full iteration and a tail at VL
    // 32), and the JIT compiles the loop again without speculation after a few failures.
    let x = f32_words(2048, 7);
    for (from, moved, trip) in [
        (9, "S.ADD s6, s1, 8", 150),
        (2, "S.ADD s6, s1, 24", 150),
        (2, "S.ADD s6, s1, 24", 37),
        (1, "S.SUB s6, s1, 4", 150),
        (3, "S.MOV s6, s1", 37),
        (2, "S.ADD s6, s1, 0x1000", 150),
    ] {
        check_all_vls(&format!(
            "
            .mem 0x10000, 0x8000, rw
            .data 0x10000
            {x}
            .text
            S.LI s20, 0
            S.LI s21, 6
    round:  S.LI s1, 0x10010
            S.ADD s1, s1, s20
            S.ADD s5, s1, 4
            S.ADD s6, s1, 8
            S.ADD s7, s1, 12
            S.LI s8, {from}
            BLT s20, s8, keep
            {moved}
    keep:   S.LI s2, 0x15000
            S.LI s3, {trip}
            S.LI s10, 600
            S.ADD s11, s10, s10
            S.ADD s12, s11, s10
            LOOP s3
            V.LW [s1 + (lc0 << 4)], ->v1
            V.LW [s5 + (lc0 << 4)], ->v2
            V.LW [s6 + (lc0 << 4)], ->v3
            V.LW [s7 + (lc0 << 4)], ->v4
            V.SW v1, [s2, lc0<<2, 0]
            V.SW v2, [s2, lc0<<2, s10]
            V.SW v3, [s2, lc0<<2, s11]
            V.SW v4, [s2, lc0<<2, s12]
            ENDLOOP
            S.ADD s20, s20, 1
            BLT s20, s21, round
            HALT
            "
        ));
    }
}

#[test]
fn hoisted_tile_accesses_and_read_only_registers() {
    // A matrix-kernel shape: x staged into tile space by a copy loop, then a loop doing FMAs
    // of tile rows with registers it never writes (broadcast before the loop) into y in
    // place. Tile accesses are hoisted like guest ones: a granule protected inside the span
    // (reached at some trip counts and VLs) must trap precisely, and a short tile must stop
    // the span where it ends.
    let x = f32_words(400, 3);
    for (protect, trip) in [("", 203), (".tileprotect 0x200, 0x40, none", 203), ("", 7)] {
        for tilesize in [0x1000, 0x800] {
            let src = format!(
                "
                .tilesize {tilesize}
                {protect}
                .mem 0x10000, 0x2000, rw
                .data 0x10000
                {x}
                .text
                S.LI s1, 0x10000
                S.LI s2, 0x10800
                S.LI s3, {trip}
                S.LI s4, 0x3fc00000
                S.LI s5, 0xbe800000
                V.MOV v16, s4
                V.MOV v17, s5
                LOOP s3
                V.LW [s1, lc0<<2, 0], ->v1
                V.SW.local v1, [s0, lc0<<2, 0]
                ENDLOOP
                LOOP s3
                V.LW [s2, lc0<<2, 0], ->v1
                V.LW.local [s0, lc0<<2, 0], ->v2
                V.FMA.S v1, v2, v16
                V.LW.local [s0, lc0<<2, 4], ->v2
                V.FMA.S v1, v2, v17
                V.SW v1, [s2, lc0<<2, 0]
                ENDLOOP
                HALT
                "
            );
            check_all_vls(&src);
        }
    }
}

#[test]
fn accesses_at_constant_distances_share_one_span_check() {
    // Loads (and stores) off one base at constant distances, as a stencil's rows or a
    // filter's taps: their loop-entry span checks are one check of the lowest's range widened
    // by the largest distance (per space, width, permission and alignment class). Variants:
    // neighbours in range; a far row across an unmapped hole (the gap is checked too, which
    // may only cost speed); the far row running off its mapping in a later iteration; a
    // member misaligned under --strict-align; a second store reaching a read-only page in a
    // later iteration; a store at a distance from loads of a read-only page (different
    // permissions: never one check); tile rows with a protected granule in the gap or under
    // the far row; rows that a store into the same buffer overlaps.
    let x = f32_words(3000, 11);
    let y = f32_words(1500, 12);
    for (base, o, sb, so, trip) in [
        (0x10004, [-4, 0, 4], "s2", 0x800, 300),
        (0x10004, [-4, 0, 0x4000], "s2", 0x800, 700),
        (0x10004, [-4, 0, 0x4000], "s2", 0x800, 1500),
        (0x10004, [-4, 0, 0x4000], "s2", 0x800, 1700),
        (0x10004, [0, 2, 4], "s2", 0x800, 300),
        (0x10004, [-4, 0, 4], "s2", 0x1800, 700),
        (0x14004, [-4, 0, 4], "s1", 0x100, 300),
    ] {
        let src = format!(
            "
            .mem 0x10000, 0x3000, rw
            .mem 0x14000, 0x1800, r
            .mem 0x20000, 0x2000, rw
            .mem 0x22000, 0x1000, r
            .data 0x10000
            {x}
            .data 0x14000
            {y}
            .text
            S.LI s1, {base}
            S.LI s2, 0x20000
            S.LI s3, {trip}
            LOOP s3
            V.LW [s1, lc0<<2, {o0}], ->v1
            V.LW [s1, lc0<<2, {o1}], ->v2
            V.LW [s1, lc0<<2, {o2}], ->v3
            V.ADD v4, v1, v2
            V.ADD v4, v4, v3
            V.SW v4, [s2, lc0<<2, 0]
            V.SW v1, [{sb}, lc0<<2, {so}]
            ENDLOOP
            HALT
            ",
            o0 = o[0],
            o1 = o[1],
            o2 = o[2],
        );
        check_all_vls(&src);
    }
    for (protect, far, trip) in [
        (".tileprotect 0x600, 0x40, none", 0x800, 300),
        (".tileprotect 0x900, 0x40, none", 0x800, 300),
        ("", 0x800, 300),
    ] {
        let src = format!(
            "
            .tilesize 0x1000
            {protect}
            .mem 0x10000, 0x2000, rw
            .data 0x10000
            {y}
            .text
            S.LI s1, 0x10000
            S.LI s3, {trip}
            LOOP s3
            V.LW [s1, lc0<<2, 0], ->v1
            V.SW.local v1, [s0, lc0<<2, 0]
            ENDLOOP
            S.LI s3, 100
            LOOP s3
            V.LW.local [s0, lc0<<2, 0], ->v1
            V.LW.local [s0, lc0<<2, 4], ->v2
            V.LW.local [s0, lc0<<2, {far}], ->v3
            V.FADD.S v1, v1, v2
            V.FADD.S v1, v1, v3
            V.SW v1, [s1, lc0<<2, 0x1000]
            ENDLOOP
            HALT
            "
        );
        check_all_vls(&src);
    }
    // Loads at two distances from one base taken as one range against a store into the same
    // buffer near either end, which a loaded value is used after: the loads may not move past
    // the store (the streaming copy is not taken) when the store overlaps the low row or
    // the far row.
    for (first, far, st) in [(0, 0x1000, 0x20), (0x1000, 0, 0x1020)] {
        let src = format!(
            "
            .mem 0x10000, 0x3000, rw
            .mem 0x20000, 0x1000, rw
            .data 0x10000
            {x}
            .text
            S.LI s1, 0x10000
            S.LI s2, 0x20000
            S.LI s3, 600
            LOOP s3
            V.LW [s1, lc0<<2, {first}], ->v1
            V.LW [s1, lc0<<2, {far}], ->v2
            V.SW v2, [s1, lc0<<2, {st}]
            V.ADD v3, v1, v2
            V.SW v3, [s2, lc0<<2, 0]
            ENDLOOP
            HALT
            "
        );
        check_all_vls(&src);
    }
}

#[test]
fn strided_loads_of_struct_fields_in_loops() {
    // Fields of arrays of 2- and 4-word structs loaded with strides of 8 and 16 bytes
    // (register-offset lc0 forms and a vector address from V.LC0), the loop's span check
    // covering them: each group is read as 16-byte loads, VL * stride bytes from lane 0.
    // Variants: in range with a tail; the last struct ending at the end of its mapping (the
    // last group's loads would read 12 bytes past it: the check sends that group to the
    // checked path), also with a tail whose active lanes end there while its group's loads
    // would read on past the mapping; a struct array that runs into an unmapped page in a later iteration; a
    // misaligned base under --strict-align; a store into the struct array itself (near its
    // start, or into the far part of the span the loads cover), which the loads may not move
    // past; tile space.
    let x = f32_words(2048, 21);
    for (base, n, st, words) in [
        (0x30000, 333, "s2, lc0<<2, 0x2000", 16),
        (0x32000 - 16 * 130, 130, "s2, lc0<<2, 0x2000", 16),
        (0x32000 - 16 * 148, 148, "s2, lc0<<2, 0x2000", 16),
        (0x31000, 700, "s2, lc0<<2, 0x2000", 16),
        (0x30002, 64, "s2, lc0<<2, 0x2000", 16),
        (0x30000, 200, "s1, lc0<<2, 0x40", 16),
        (0x30000, 200, "s1, lc0<<2, 0x800", 16),
        (0x30000, 333, "s2, lc0<<2, 0x2000", 8),
        (0x32000 - 8 * 300, 300, "s2, lc0<<2, 0x2000", 8),
    ] {
        let (f2, f3) = if words == 16 { (8, 12) } else { (0, 4) };
        let src = format!(
            "
            .mem 0x20000, 0x4000, rw
            .mem 0x30000, 0x2000, rw
            .data 0x30000
            {x}
            .text
            S.LI s1, {base}
            S.LI s2, 0x20000
            S.LI s3, {n}
            S.ADD s5, s1, 4
            S.ADD s6, s1, {f2}
            S.ADD s7, s1, {f3}
            LOOP s3
            V.LW [s1 + (lc0 << {sh})], ->v1
            V.LWU [s5 + (lc0 << {sh})], ->v2
            V.LC0 v8
            V.SHL v8, v8, {sh}
            V.ADD v8, v8, s6
            V.LWI.U [v8 + 0], ->v3
            V.LW [s7 + (lc0 << {sh})], ->v4
            V.SW v4, [{st}]
            V.FADD.S v5, v1, v2
            V.SW v5, [s2, lc0<<2, 0]
            V.SW v3, [s2, lc0<<2, 0x1000]
            ENDLOOP
            HALT
            ",
            sh = if words == 16 { 4 } else { 3 },
        );
        check_all_vls(&src);
    }
    // 1-, 2- and 8-byte elements 2 or 4 elements apart (channels of RGBA pixels, halves of
    // pairs, f64 fields): in range with a tail, the last one at the end of the mapping, a
    // fault in a later iteration, a misaligned base.
    for (ld, sd, e, base, n, m) in [
        ("V.LD", "V.SD", 8, 0x30000, 77, 2),
        ("V.LD", "V.SD", 8, 0x32000 - 16 * 150, 150, 2),
        ("V.LD", "V.SD", 8, 0x31800, 300, 2),
        ("V.LD", "V.SD", 8, 0x30004, 40, 2),
        ("V.LD", "V.SD", 8, 0x30000, 101, 4),
        ("V.LD", "V.SD", 8, 0x32000 - 32 * 130, 130, 4),
        ("V.LBU", "V.SB", 1, 0x30000, 700, 4),
        ("V.LB", "V.SB", 1, 0x32000 - 4 * 1500, 1500, 4),
        ("V.LB", "V.SB", 1, 0x30000, 333, 2),
        ("V.LBU", "V.SB", 1, 0x31c00, 600, 2),
        ("V.LH", "V.SH", 2, 0x30000, 333, 4),
        ("V.LHU", "V.SH", 2, 0x32000 - 4 * 1000, 1000, 2),
        ("V.LH", "V.SH", 2, 0x31f00, 300, 2),
        ("V.LHU", "V.SH", 2, 0x30001, 100, 4),
    ] {
        let sh = (e * m as u32).trailing_zeros();
        let se = e.trailing_zeros();
        check_all_vls(&format!(
            "
            .mem 0x20000, 0x4000, rw
            .mem 0x30000, 0x2000, rw
            .data 0x30000
            {x}
            .text
            S.LI s1, {base}
            S.ADD s5, s1, {e}
            S.LI s2, 0x20000
            S.LI s3, {n}
            LOOP s3
            {ld} [s1 + (lc0 << {sh})], ->v1
            V.LC0 v8
            V.SHL v8, v8, {sh}
            V.ADD v8, v8, s5
            {ld} [s0 + v8], ->v2
            V.ADD v3, v1, v2
            {sd} v3, [s2, lc0<<{se}, 0]
            {sd} v2, [s2, lc0<<{se}, 0x2000]
            ENDLOOP
            HALT
            "
        ));
    }
    // 4- and 8-byte elements 32 to 4096 bytes apart (columns, one word per cache line), loaded
    // and stored contiguously (a copy loop's shape, but no bulk copy): in range with a tail,
    // the last element at the end of the mapping (its 16-byte load would read past it), a
    // fault in a later iteration, a misaligned base.
    for (ld, sd, e, sh, base, n) in [
        ("V.LW", "V.SW", 4, 5, 0x40000, 500),
        ("V.LWU", "V.SW", 4, 6, 0x80000 - 64 * 300 + 60, 300),
        ("V.LW", "V.SW", 4, 12, 0x40000, 50),
        ("V.LW", "V.SW", 4, 8, 0x70000, 400),
        ("V.LW", "V.SW", 4, 6, 0x40002, 40),
        ("V.LD", "V.SD", 8, 5, 0x40000, 333),
        ("V.LD", "V.SD", 8, 9, 0x80000 - 512 * 100 + 504, 100),
    ] {
        let se = (e as u32).trailing_zeros();
        check_all_vls(&format!(
            "
            .mem 0x20000, 0x4000, rw
            .mem 0x40000, 0x40000, rw
            .data 0x40000
            {x}
            .text
            S.LI s1, {base}
            S.LI s2, 0x20000
            S.LI s3, {n}
            LOOP s3
            {ld} [s1 + (lc0 << {sh})], ->v1
            {sd} v1, [s2, lc0<<{se}, 0]
            ENDLOOP
            HALT
            "
        ));
    }
    // A loop of a strided load and a contiguous store of what it loaded: the shape of a copy
    // loop, but no bulk copy (its lanes are not adjacent).
    for n in [40, 333] {
        check_all_vls(&format!(
            "
            .mem 0x20000, 0x4000, rw
            .mem 0x30000, 0x2000, rw
            .data 0x30000
            {x}
            .text
            S.LI s1, 0x30000
            S.LI s2, 0x20000
            S.LI s3, {n}
            LOOP s3
            V.LW [s1 + (lc0 << 4)], ->v1
            V.SW v1, [s2, lc0<<2, 0]
            ENDLOOP
            HALT
            "
        ));
    }
    for (protect, n) in [("", 100), (".tileprotect 0x600, 0x40, none", 100)] {
        let src = format!(
            "
            .tilesize 0x1000
            {protect}
            .mem 0x10000, 0x2000, rw
            .data 0x10000
            {x}
            .text
            S.LI s1, 0x10000
            S.LI s3, 0x400
            LOOP s3
            V.LW [s1, lc0<<2, 0], ->v1
            V.SW.local v1, [s0, lc0<<2, 0]
            ENDLOOP
            S.LI s3, {n}
            S.LI s4, 4
            LOOP s3
            V.LW.local [s0 + (lc0 << 4)], ->v1
            V.LW.local [s4 + (lc0 << 4)], ->v2
            V.FMUL.S v1, v1, v2
            V.SW v1, [s1, lc0<<2, 0x1000]
            ENDLOOP
            HALT
            "
        );
        check_all_vls(&src);
    }
}

#[test]
fn strided_stores_of_struct_fields_agree() {
    // Strided stores in loops (hoisted: the loop's span check covers them, and each writes
    // its lanes one by one at constant offsets from lane 0's host address). Fields of
    // 2-word records written from FP results (complex products, with infinities and NaNs
    // among the inputs: the stored NaNs are canonical), four fields of 4-word records
    // written from contiguous loads, and a swap of the two fields in place; the records'
    // array ending at the end of its mapping (the span of the last group reaches past it),
    // running into an unmapped page or a read-only page in a later iteration (the trap at
    // the first faulting lane, nothing of that store written), overlapping fields (two
    // stores 2 bytes apart: the later one wins), a misaligned base under --strict-align,
    // a scalar stored by every lane, and tile space.
    let mut x = f32_words(2048, 33);
    x += "        .word 0x7f800000, 0, 0xff800000, 0x7fc00001, 0, 0x7f800000, 0x3f800000, 0xffc00000\n";
    // Records at 0x20000 (rw), a read-only page at 0x23000, more records at 0x24000, the
    // inputs at 0x30000.
    let map = format!(
        ".mem 0x20000, 0x3000, rw
        .mem 0x23000, 0x1000, r
        .mem 0x24000, 0x4000, rw
        .mem 0x30000, 0x3000, rw
        .data 0x30000
        {x}"
    );
    for (dst, n, st_re, st_im, sh) in [
        (
            0x20000u64,
            333u64,
            "V.SW.U v5, [s3 + (lc0 << 3)]",
            "V.SW.U v7, [s7 + (lc0 << 3)]",
            3,
        ),
        (
            0x28000 - 8 * 300,
            300,
            "V.SW.U v5, [s3 + (lc0 << 3)]",
            "V.SW.U v7, [s7 + (lc0 << 3)]",
            3,
        ),
        (
            0x27000,
            800,
            "V.SW.U v5, [s3 + (lc0 << 3)]",
            "V.SW.U v7, [s7 + (lc0 << 3)]",
            3,
        ),
        (
            0x23000,
            600,
            "V.SW.U v5, [s3 + (lc0 << 3)]",
            "V.SW.U v7, [s7 + (lc0 << 3)]",
            3,
        ),
        (
            0x20000,
            333,
            "V.SW.U v5, [s3 + (lc0 << 3)]",
            "V.SW.U v7, [s8 + (lc0 << 3)]",
            3,
        ),
        (
            0x20002,
            100,
            "V.SW v5, [s3 + (lc0 << 3)]",
            "V.SW v7, [s7 + (lc0 << 3)]",
            3,
        ),
        (
            0x20000,
            201,
            "V.SW.U v5, [s3 + (lc0 << 4)]",
            "V.SW.U s9, [s7 + (lc0 << 4)]",
            4,
        ),
        (
            0x20000,
            77,
            "V.SW.U v5, [s3 + (lc0 << 6)]",
            "V.SW.U v7, [s7 + (lc0 << 6)]",
            6,
        ),
        (
            0x20000,
            20,
            "V.SW.U v5, [s3 + (lc0 << 10)]",
            "V.SW.U v7, [s7 + (lc0 << 10)]",
            10,
        ),
    ] {
        let src = format!(
            "
            {map}
            .text
            S.LI s1, 0x30000
            S.ADD s5, s1, 4
            S.LI s2, 0x31000
            S.ADD s6, s2, 4
            S.LI s3, {dst}
            S.ADD s7, s3, 4
            S.ADD s8, s3, 2
            S.LI s9, 0x1234567
            S.LI s4, {n}
            LOOP s4
            V.LW [s1 + (lc0 << 3)], ->v1
            V.LW [s5 + (lc0 << 3)], ->v2
            V.LW [s2 + (lc0 << 3)], ->v3
            V.LW [s6 + (lc0 << 3)], ->v4
            V.FMUL.S v5, v1, v3
            V.FMUL.S v6, v2, v4
            V.FSUB.S v5, v5, v6
            V.FMUL.S v7, v1, v4
            V.FMA.S v7, v2, v3
            {st_re}
            {st_im}
            ENDLOOP
            HALT
            ",
        );
        let src = src.replace("(lc0 << 3)], ->v", &format!("(lc0 << {sh})], ->v"));
        check_all_vls(&src);
    }
    // SoA -> AoS: four fields of 16-byte records from four contiguous arrays (the stores
    // held back or not, stride 16), bytes to 4-byte pixels' channels, halfwords to pairs,
    // f64 pairs; and the two fields of 8-byte records swapped in place.
    for (ld, sd, e, m, dst, n) in [
        ("V.LW", "V.SW.U", 4u32, 4u32, 0x20000u64, 301u64),
        ("V.LW", "V.SW.U", 4, 4, 0x28000 - 16 * 200, 200),
        ("V.LBU", "V.SB", 1, 4, 0x20000, 700),
        ("V.LH", "V.SH.U", 2, 2, 0x20001, 333),
        ("V.LD", "V.SD.U", 8, 2, 0x20000, 150),
        ("V.LD", "V.SD.U", 8, 2, 0x24000 - 16 * 60, 100),
    ] {
        let sh = (e * m).trailing_zeros();
        let lsh = e.trailing_zeros();
        let lc = if lsh == 0 {
            "lc0".to_string()
        } else {
            format!("lc0<<{lsh}")
        };
        let bases: String = (0..m)
            .map(|f| format!("S.ADD s{b}, s3, {fo}\n            ", b = 10 + f, fo = f * e))
            .collect();
        let fields: String = (0..m)
            .map(|f| {
                format!(
                    "{ld} [s1, {lc}, {lo}], ->v{r}\n            {sd} v{r}, [s{b} + (lc0 << {sh})]\n            ",
                    lo = f * 0x400,
                    r = f + 1,
                    b = 10 + f,
                )
            })
            .collect();
        let src = format!(
            "
            {map}
            .text
            S.LI s1, 0x30000
            S.LI s3, {dst}
            {bases}S.LI s4, {n}
            LOOP s4
            {fields}
            ENDLOOP
            HALT
            "
        );
        check_all_vls(&src);
    }
    for (base, n) in [(0x30000u64, 333u64), (0x30004, 250)] {
        let src = format!(
            "
            .mem 0x30000, 0x3000, rw
            .data 0x30000
            {x}
            .text
            S.LI s1, {base}
            S.ADD s5, s1, 4
            S.LI s4, {n}
            LOOP s4
            V.LW [s1 + (lc0 << 3)], ->v1
            V.LW [s5 + (lc0 << 3)], ->v2
            V.SW.U v2, [s1 + (lc0 << 3)]
            V.SW.U v1, [s5 + (lc0 << 3)]
            ENDLOOP
            HALT
            "
        );
        check_all_vls(&src);
    }
    // Both fields of 2-field records stored by consecutive instructions (interleaved as
    // 16-byte vectors, `Tx::pair_fields`), through base registers whose distance the JIT
    // speculates on: 4- and 8-byte elements, from loads, from FP results and from 64-bit
    // sums (their low words stored); and a loop entered three times with the second base 4,
    // then 2 (the fields overlapping: the later store wins), then 12 bytes above the first.
    for (ld, sd, e, n, fp) in [
        ("V.LW", "V.SW.U", 4u32, 333u64, ""),
        (
            "V.LW",
            "V.SW.U",
            4,
            300,
            "V.FMUL.S v1, v1, v2\n            V.FMA.S v2, v1, v1",
        ),
        (
            "V.LW",
            "V.SW.U",
            4,
            201,
            "V.ADD v1, v1, v2\n            V.SHL v2, v2, 29",
        ),
        ("V.LD", "V.SD.U", 8, 150, ""),
        (
            "V.LD",
            "V.SD.U",
            8,
            77,
            "V.FMUL.D v1, v1, v2\n            V.FADD.D v2, v1, v1",
        ),
    ] {
        let lsh = e.trailing_zeros();
        let sh = lsh + 1;
        for dists in [[e, e, e], [e, 2, 3 * e]] {
            let src = format!(
                "
                .mem 0x20000, 0x3000, rw
                .mem 0x30000, 0x3000, rw
                .data 0x30000
                {x}
                .text
                S.LI s1, 0x30000
                S.LI s3, 0x20000
                S.LI s20, 0
                S.LI s4, {n}
                again:
                S.ADD s21, s20, 0x20000
                S.LI s11, {d0}
                BEQ s20, 0, go
                S.LI s11, {d1}
                S.SUB s22, s20, 0x100
                BEQ s22, 0, go
                S.LI s11, {d2}
                go:
                S.ADD s11, s11, s21
                S.MOV s3, s21
                LOOP s4
                {ld} [s1, lc0<<{lsh}, 0], ->v1
                {ld} [s1, lc0<<{lsh}, 0x1000], ->v2
                {fp}
                {sd} v1, [s3 + (lc0 << {sh})]
                {sd} v2, [s11 + (lc0 << {sh})]
                ENDLOOP
                S.ADD s20, s20, 0x100
                S.SUB s22, s20, 0x300
                BNE s22, 0, again
                HALT
                ",
                d0 = dists[0],
                d1 = dists[1],
                d2 = dists[2],
            );
            check_all_vls(&src);
        }
    }
    // Tile space: pairs of fields written at a stride of 8, then read back contiguously.
    let src = format!(
        "
        .mem 0x30000, 0x3000, rw
        .tilesize 0x4000
        .data 0x30000
        {x}
        .text
        S.LI s1, 0x30000
        S.LI s3, 0x100
        S.ADD s7, s3, 4
        S.LI s4, 500
        LOOP s4
        V.LW [s1, lc0<<2, 0], ->v1
        V.LW [s1, lc0<<2, 0x1000], ->v2
        V.SW.U.local v1, [s3 + (lc0 << 3)]
        V.SW.U.local v2, [s7 + (lc0 << 3)]
        ENDLOOP
        S.LI s4, 1000
        LOOP s4
        V.LW.local [s3, lc0<<2, 0], ->v3
        V.SW v3, [s1, lc0<<2, 0x2000]
        ENDLOOP
        HALT
        "
    );
    check_all_vls(&src);
}

#[test]
fn narrow_multiplies_are_exact_for_every_extension() {
    // V.MUL of loaded bytes and halfwords runs on 16- or 32-bit lanes: products of the
    // extreme values of every pair of extensions and widths, stored as 64-bit lanes, summed
    // into an accumulator, and used again after the loop.
    let mut bytes = String::from(".byte ");
    let extremes = [0x80u8, 0x7f, 0xff, 0x00, 0x01, 0xfe, 0x81, 0x40];
    for i in 0..256usize {
        if i > 0 {
            bytes += ", ";
        }
        let b = if i % 3 == 0 {
            extremes[i / 3 % 8]
        } else {
            (i as u8).wrapping_mul(37)
        };
        bytes += &format!("{b:#x}");
    }
    let loads = [
        ("V.LB", "lc0", "V.LB", "lc0"),
        ("V.LBU", "lc0", "V.LBU", "lc0"),
        ("V.LB", "lc0", "V.LBU", "lc0"),
        ("V.LH", "lc0<<1", "V.LH", "lc0<<1"),
        ("V.LHU", "lc0<<1", "V.LHU", "lc0<<1"),
        ("V.LH", "lc0<<1", "V.LBU", "lc0"),
        ("V.LHU", "lc0<<1", "V.LB", "lc0"),
    ];
    for (la, sa, lb, sb) in loads {
        let src = format!(
            "
            .mem 0x10000, 0x2000, rw
            .data 0x10000
            {bytes}
            .text
            S.LI s1, 0x10000
            S.LI s2, 0x10041
            S.LI s4, 0x11000
            S.LI s3, 77
            LOOP s3
            {la} [s1, {sa}, 0], ->v1
            {lb} [s2, {sb}, 0], ->v2
            V.MUL v1, v1, v2
            V.ADD v3, v3, v1
            V.SD v1, [s4, lc0<<3, 0]
            ENDLOOP
            V.REDSUM s5, v3
            V.REDSUM s6, v1
            HALT
            "
        );
        check_all_vls(&src);
    }
}

#[test]
fn gathers_and_scatters_indexed_by_packed_words() {
    // Indices loaded as 32-bit words and used directly as register offsets keep their packed
    // form: lane EAs and the range check come from the packed lanes. Negative sign-extended
    // indices, zero-extended ones above 2^31, a base that makes EAs wrap below 0, a hole in
    // the table's span, strict alignment with odd indices, and scatters.
    let idx = words(96, |i| {
        let v: i32 = match i % 6 {
            0 => -((i as i32) * 3),
            1 => (i as i32) * 5,
            2 => 1,
            3 => 511,
            4 => -1,
            _ => (i as i32) * 7 % 300,
        };
        v as u32
    });
    for (load, base, shift, hole) in [
        ("V.LW", "0x21000", 2, ""),
        ("V.LWU", "0x20000", 2, ""),
        ("V.LW", "0x800", 3, ""),
        ("V.LW", "0x21000", 0, ""),
        // Pages 0x21000..0x22000 unmapped: negative indices reach them.
        ("V.LW", "0x22000", 2, ".mem 0x22000, 0x2000, rw"),
        ("V.LWU", "0x20000", 31, ""),
    ] {
        let table_end = if hole.is_empty() { "0x4000" } else { "0x1000" };
        let src = format!(
            "
            .mem 0x10000, 0x1000, rw
            .mem 0x20000, {table_end}, rw
            {hole}
            .mem 0x30000, 0x2000, rw
            .data 0x10000
            {idx}
            .data 0x20000
            .fill 256, 4, 0x01020304
            .text
            S.LI s1, 0x10000
            S.LI s2, {base}
            S.LI s4, 0x30000
            S.LI s3, 90
            LOOP s3
            {load} [s1, lc0<<2, 0], ->v2
            V.LWU [s2 + (v2 << {shift})], ->v3
            V.SW v3, [s4, lc0<<2, 0]
            V.SW.U v2, [s2 + (v2 << {shift})]
            ENDLOOP
            HALT
            "
        );
        check_all_vls(&src);
    }
}

#[test]
fn packed_gathers_end_at_their_base_pages_run() {
    // A gather through packed unsigned words from a scalar base the loop never writes is
    // checked against the readable bytes from that base to the end of its run of pages,
    // found once at loop entry (`Tx::base_runs`): here 0x20ff0 to the unmapped page at
    // 0x23000, a read-only page inside the run. Lanes up to the run's very last word, one
    // word past it (a page fault, in the iteration that reaches it), a word beyond the hole
    // in memory mapped again (the lane-by-lane check lets it through), a base in an unmapped
    // page with every lane in mapped memory (an empty run), and byte offsets, an odd one
    // included (register-offset loads are never checked for alignment).
    let last = (0x23000 - 0x20ff0) / 4 - 1;
    let cases: [(&str, u32, u32, Option<TrapKind>, &str); 6] = [
        (
            "0x20ff0",
            last,
            2,
            None,
            "every lane within the run, the last word included",
        ),
        (
            "0x20ff0",
            last + 1,
            2,
            Some(TrapKind::PageFault),
            "one word past the run",
        ),
        (
            "0x20ff0",
            (0x24000 - 0x20ff0) / 4,
            2,
            None,
            "a word beyond the hole",
        ),
        ("0x1fffc", 4, 2, None, "a base in an unmapped page"),
        ("0x20ff0", 0x2000, 0, None, "byte offsets inside the run"),
        ("0x20ff0", 0x2001, 0, None, "an odd byte offset"),
    ];
    for (base, far, shift, trap, what) in cases {
        // Element 57 of 90 holds `far`; the others small offsets (at least four, so
        // that a base just below a mapped page reaches it), scaled so that they stay in the
        // run.
        let idx = words(96, |i| {
            if i == 57 {
                far
            } else {
                (4 + (i * 37) % 700) << (2 - shift)
            }
        });
        let src = format!(
            "
            .mem 0x10000, 0x1000, rw
            .mem 0x20000, 0x2000, rw
            .mem 0x22000, 0x1000, r
            .mem 0x24000, 0x1000, rw
            .mem 0x30000, 0x1000, rw
            .data 0x10000
            {idx}
            .data 0x20000
            .fill 3072, 4, 0x01020304
            .data 0x24000
            .fill 1024, 4, 0x0a0b0c0d
            .text
            S.LI s1, 0x10000
            S.LI s2, {base}
            S.LI s4, 0x30000
            S.LI s3, 90
            LOOP s3
            V.LWU [s1, lc0<<2, 0], ->v2
            V.LBU [s2 + v2], ->v5
            V.LWU [s2 + (v2 << {shift})], ->v3
            V.ADD v3, v3, v5
            V.SW v3, [s4, lc0<<2, 0]
            ENDLOOP
            HALT
            "
        );
        check_trap_every_vl(&asm(&src), trap, what);
    }
}

/// 96 words with high bits, negative values, large and small values by turns.
fn mixed_words() -> String {
    words(96, |i| match i % 5 {
        0 => 0x8000_0000 | (i * 0x0101_0101),
        1 => i * 0x0012_3457,
        2 => 0xffff_ffff - i,
        3 => 0x7fff_ffff - i * 3,
        _ => i,
    })
}

#[test]
fn shifts_and_masks_of_packed_words_stay_exact() {
    // A shift right or AND by an immediate of a register loaded as 32-bit words stays in the
    // packed form where its 64-bit result is a 32-bit value extended (`Tx::packed_int`):
    // for sign- and zero-extended words with high bits and negative values, shift amounts
    // below, at and past 32 (and immediates whose low six bits are what counts), and ANDs
    // with positive, negative and wide immediates, the result, masked, indexes a gather (of
    // words, halfwords or bytes) and a scatter of the index (the packed-index path, the table
    // changing under it), and is then stored whole (V.SD) and compared.
    let idx = mixed_words();
    for load in ["V.LW", "V.LWU"] {
        for (n, op) in [
            "V.SHR v5, v2, 0",
            "V.SHR v5, v2, 12",
            "V.SHR v5, v2, 31",
            "V.SHR v5, v2, 32",
            "V.SHR v5, v2, 63",
            "V.SHR v5, v2, 76",
            "V.SRA v5, v2, 1",
            "V.SRA v5, v2, 31",
            "V.SRA v5, v2, 33",
            "V.SRA v5, v2, -1",
            "V.AND v5, v2, 0x7ff0f0f0",
            "V.AND v5, v2, -16",
            "V.AND v5, v2, -0x80000000",
            "V.SHR v2, v2, 4",
        ]
        .into_iter()
        .enumerate()
        {
            // Gathers of words, halfwords and bytes (packed at their width).
            let gather = ["V.LWU", "V.LHU", "V.LB"][n % 3];
            let dst = op
                .split_whitespace()
                .nth(1)
                .unwrap_or("v5,")
                .trim_end_matches(',');
            let src = format!(
                "
                .mem 0x10000, 0x1000, rw
                .mem 0x20000, 0x1000, rw
                .mem 0x30000, 0x2000, rw
                .data 0x10000
                {idx}
                .data 0x20000
                .fill 1024, 4, 0x01020304
                .text
                S.LI s1, 0x10000
                S.LI s2, 0x20000
                S.LI s4, 0x30000
                S.LI s3, 90
                LOOP s3
                {load} [s1, lc0<<2, 0], ->v2
                {op}
                V.AND v6, {dst}, 0x3fc
                {gather} [s2 + (v6 << 0)], ->v7
                V.ADD v8, v8, v7
                V.SW.U v6, [s2 + (v6 << 0)]
                V.SD {dst}, [s4, lc0<<3, 0]
                ENDLOOP
                V.REDSUM s9, v8
                HALT
                "
            );
            check_all_vls(&src);
        }
    }
}

#[test]
fn ands_of_packed_words_with_lane_masks_stay_exact() {
    // An AND of a register loaded as 32-bit words with a register of lane masks (an
    // arithmetic shift right by 63 under a full mask: every lane 0 or all ones) stays packed
    // (`Tx::sign_masks`): with the masks in either operand, from a shift amount of 63 as an
    // immediate, a register or 127; and an AND with what only looks like one (a shift by 62,
    // a mask shifted right after it was made, or one made later in the body, so the first
    // iteration ANDs with the value set before the loop) must take all 64 bits. The result
    // and the masks are stored whole (V.SD) and summed.
    let idx = mixed_words();
    // 64-bit lanes (low word, high word): negative, positive, and zero by turns.
    let sel = words(192, |i| match (i / 2 % 3, i % 2) {
        (0, 0) => 0x1234_5678 ^ i,
        (0, _) => 0x8000_0000 | i,
        (1, 0) => 0xffff_ffff - i,
        (1, _) => 0x7fff_0000 + i,
        _ => 0,
    });
    let prog = |load: &str, ops: &str| {
        format!(
            "
            .mem 0x10000, 0x1000, rw
            .mem 0x20000, 0x1000, rw
            .mem 0x30000, 0x2000, rw
            .data 0x10000
            {idx}
            .data 0x20000
            {sel}
            .text
            S.LI s1, 0x10000
            S.LI s2, 0x20000
            S.LI s4, 0x30000
            S.LI s7, 63
            S.LI s3, 90
            S.LI s8, 0x7fff0000ffff
            V.MOV v3, s8
            LOOP s3
            {load} [s1, lc0<<2, 0], ->v2
            V.LD [s2, lc0<<3, 0], ->v1
            {ops}
            V.ADD v8, v8, v5
            V.SD v5, [s4, lc0<<3, 0]
            V.SD v3, [s4, lc0<<3, 0x800]
            ENDLOOP
            V.REDSUM s9, v8
            HALT
            "
        )
    };
    let ops = [
        "V.SRA v3, v1, 63\nV.AND v5, v2, v3",
        "V.SRA v3, v1, 63\nV.AND v5, v3, v2",
        "V.SRA v3, v1, s7\nV.AND v5, v2, v3",
        "V.SRA v3, v1, 127\nV.AND v5, v3, v2",
        "V.SRA v3, v1, 62\nV.AND v5, v2, v3",
        "V.SRA v3, v1, 63\nV.SHR v3, v3, 8\nV.AND v5, v2, v3",
        "V.AND v5, v2, v3\nV.SRA v3, v1, 63",
        "V.SRA v3, v1, 63\nV.AND v2, v2, v3\nV.MOV v5, v2",
    ];
    for load in ["V.LW", "V.LWU"] {
        for ops in ops {
            check_all_vls(&prog(load, ops));
        }
    }
    check_budgets(&asm(&prog("V.LW", ops[0])), 3);
}

#[test]
fn local_tile_accesses_and_tile_traps() {
    let base = "
        .tilesize 4096
        .tileprotect 0x800, 0x40, r
        .tileprotect 0xc00, 0x40, none
        .mem 0x10000, 0x1000, rw
        .data 0x10000
        .fill 128, 8, 0x0123456789abcdef
        .tiledata 0x100
        .fill 64, 4, 0xdeadbeef
        .text
        S.LI s1, 0x10000
        S.LI s2, TILEBASE
        S.LI s3, TRIP
        LOOP s3
        V.LD [s1, lc0<<3, 0], ->v1
        V.SW.local v1, [s2, lc0<<2, 0]
        V.LW.local [s2, lc0<<2, 0], ->v2
        V.AND v5, v2, 63
        V.LHU.local [s2 + (v5 << 0)], ->v3
        V.ADD v4, v4, v2
        ENDLOOP
        V.REDSUM s9, v4
        HALT
        ";
    for (tb, trip, kind) in [
        ("0x0", "64", None),
        ("0x100", "100", None),
        ("0x700", "100", Some(TrapKind::TileUnauthorized)),
        ("0xb80", "100", Some(TrapKind::TileUnauthorized)),
        ("0xf00", "100", Some(TrapKind::TileOutOfBounds)),
    ] {
        let src = base.replace("TILEBASE", tb).replace("TRIP", trip);
        let p = asm(&src);
        for vl in VLS {
            for strict in [false, true] {
                let (r, _) = check(&p, vl, strict, None);
                if kind.is_some() {
                    assert_eq!(trap_kind(&r.exit()), kind, "tile base {tb} vl {vl}");
                }
            }
        }
    }
}

#[test]
fn contiguous_tile_groups_in_loops_check_bounds_and_granules() {
    // Full iterations access contiguous `.local` groups in line after one check of the
    // group: inside the tile, and every granule it touches permitted (one lookup in the
    // granule-run table). Loads cross into a `none` granule, read an `r` one, end exactly at
    // the end of the tile or one group past it, and start unaligned; stores cross into an
    // `r` granule and end exactly at the end of the tile.
    let prog = |body: &str, a: &str, trip: u32| {
        format!(
            "
            .tilesize 4096
            .tileprotect 0x800, 0x40, r
            .tileprotect 0xc00, 0x40, none
            .tiledata 0
            .fill 1024, 4, 0x81828384
            .mem 0x10000, 0x2000, rw
            .text
            S.LI s1, {a}
            S.LI s2, 0x10000
            S.LI s3, {trip}
            LOOP s3
            V.LC0 v5
            {body}
            ENDLOOP
            V.REDSUM s9, v2
            HALT
            "
        )
    };
    let load = "V.LH.local [s1, lc0<<1, 0], ->v1\n V.ADD v2, v2, v1\n V.SW v2, [s2, lc0<<2, 0]";
    let store =
        "V.MUL v1, v5, 3\n V.SH.local v1, [s1, lc0<<1, 0]\n V.LHU.local [s1, lc0<<1, 0], ->v2";
    let cases = [
        (load, "0x0", 2048, Some(TrapKind::TileUnauthorized)),
        (load, "0x400", 512, None),
        (load, "0x800", 64, None),
        (load, "0xd00", 384, None),
        (load, "0xd00", 385, Some(TrapKind::TileOutOfBounds)),
        (load, "0x1", 300, None),
        (store, "0x600", 512, Some(TrapKind::TileUnauthorized)),
        (store, "0xe00", 256, None),
        (store, "0xe01", 256, Some(TrapKind::TileOutOfBounds)),
    ];
    for (body, a, trip, kind) in cases {
        let p = asm(&prog(body, a, trip));
        for vl in VLS {
            for strict in [false, true] {
                let (r, st) = check(&p, vl, strict, None);
                assert!(st.jit_retired > 0, "compiled code ran ({a}, vl {vl})");
                let want = match kind {
                    _ if strict && a.ends_with('1') => Some(TrapKind::Misaligned),
                    k => k,
                };
                assert_eq!(
                    trap_kind(&r.exit()),
                    want,
                    "{a} trip {trip} vl {vl} strict {strict}"
                );
            }
        }
    }
    // A tile whose size is not a multiple of 64 (the assembler and the container reader
    // refuse one, a `Program` built in code need not): its last granule lies partly outside,
    // and a group there must trap rather than read past the tile.
    let src =
        prog(load, "0xd00", 352).replace(".tiledata 0\n            .fill 1024, 4, 0x81828384", "");
    let mut p = asm(&src);
    p.tile_size = 4000;
    for vl in VLS {
        let (r, _) = check(&p, vl, false, None);
        assert_eq!(
            trap_kind(&r.exit()),
            Some(TrapKind::TileOutOfBounds),
            "vl {vl}"
        );
    }
}

#[test]
fn wrapping_effective_addresses_fault_precisely() {
    // EAs near 2^64: contiguous with a base that wraps, immediate forms, register offsets;
    // every one must trap page_fault exactly like the interpreter and touch nothing.
    for form in [
        "V.LD [s1, lc0<<3, 0], ->v1",
        "V.LW [s1, lc0<<2, s2], ->v1",
        "V.SD v1, [s1, lc0<<3, 0]",
        "V.LDI.U [s1 + 4], ->v1",
        "V.LWI [s1 + (1 << 2)], ->v1",
        "V.SWI v1, [s1 + (1 << 2)]",
        "V.LD [s1 + (v2 << 0)], ->v1",
        "V.SD v1, [s1 + (v2 << 3)]",
        "V.LD.local [s1, lc0<<3, 0], ->v1",
        "V.SD.local v1, [s1 + (v2 << 3)]",
        "V.LDI.U.local [s1 + 4], ->v1",
    ] {
        for base in [
            "0xfffffffffffffff8",
            "0xfffffffffffffffc",
            "0xffffffffffffff00",
        ] {
            let src = format!(
                "
                .mem 0x0, 0x2000, rw
                .text
                S.LI s1, {base}
                S.LI s2, 8
                V.LANEID v2
                S.LI s3, 40
                LOOP s3
                {form}
                ENDLOOP
                HALT
                "
            );
            let p = asm(&src);
            for vl in VLS {
                let (r, _) = check(&p, vl, false, None);
                // `0x..fc + 4` and `0x..f8 + 8` wrap to 0, which is mapped: those run.
                if !form.contains("s2]") && base != "0xfffffffffffffffc" {
                    assert!(trap_kind(&r.exit()).is_some(), "{form} base {base} vl {vl}");
                }
            }
        }
    }
}

#[test]
fn strict_align_traps_only_scaled_forms() {
    let src = "
        .mem 0x10000, 0x2000, rw
        .text
        S.LI s1, 0x10002
        S.LI s3, 16
        LOOP s3
        V.LW [s1 + v0], ->v1
        V.LWI.U [s1 + 0], ->v2
        V.SW.U v2, [s1 + v0]
        V.LW [s1, lc0<<2, 0], ->v3
        ENDLOOP
        HALT
        ";
    let p = asm(src);
    for vl in VLS {
        let (r, _) = check(&p, vl, true, None);
        assert_eq!(trap_kind(&r.exit()), Some(TrapKind::Misaligned));
        let (r, _) = check(&p, vl, false, None);
        assert_eq!(r.exit(), Exit::Halted);
    }
}

#[test]
fn scalar_branch_loop_and_overlapping_stores() {
    check_all_vls(
        "
        .mem 0x10000, 0x1000, rw
        .text
        S.LI s1, 0x10000
        S.LI s2, 50
    again:
        S.ADD s3, s3, s2
        S.MUL s4, s3, s2
        S.SRA s5, s4, 3
        S.SHR s6, s4, s2
        V.LANEID v1
        V.MUL v2, v1, s2
        V.SDI.U v2, [s1 + 8]
        V.SW.U v1, [s1 + s0]
        V.SB v2, [s1 + (v0 << 0)]
        V.LD [s1 + s0], ->v3
        V.LDI.U [s1 + 8], ->v4
        S.SUB s2, s2, 1
        BGE s2, 1, again
        S.GETLANE s7, v4, 63
        BLTU s7, 1000, done
        S.LI s8, 1
    done:
        HALT
        ",
    );
}

#[test]
fn translate_time_constants_decide_loops_and_branches() {
    // Known values (S.LI, folded scalar ALU) let the translator drop the LOOP's zero-trip
    // test and decide branches; every fold must give the interpreter's result, including
    // shift amounts taken mod 64, wrapping arithmetic and a constant zero trip.
    for (trip, shift) in [(0u64, 3u64), (1, 64), (5, 67), (70, 127), (4096, 0)] {
        let src = format!(
            "
            .mem 0x10000, 0x10000, rw
            .text
            S.LI s1, 0x10000
            S.LI s2, -1
            S.ADD s3, s2, 2                 ; wraps to 1
            S.SHL s4, s3, {shift}           ; 1 << (shift mod 64)
            S.SRA s5, s2, {shift}
            S.MUL s6, s2, s2
            S.LI s7, {trip}
            LOOP s7                         ; the run up to here knows the trip
            V.LC0 v1
            V.SD v1, [s1, lc0<<3, 0]
            V.ADD v2, v2, s4
            ENDLOOP
            S.LI s11, 3
            S.ADD s3, s11, -2               ; known again in this run: 1
            BEQ s3, 1, taken
            S.LI s8, 99                     ; skipped
        taken:
            S.SHL s4, s3, {shift}
            BLTU s4, s3, skip               ; decided from the folded shift
            S.ADD s9, s4, s3
        skip:
            BGE s2, 0, never                ; -1 >= 0 is false
            V.REDSUM s10, v2
        never:
            HALT
            "
        );
        check_all_vls(&src);
    }
}

#[test]
fn registers_written_before_any_exit_and_read_modify_write() {
    // The run after `J` overwrites some scalars before anything reads them (their entry
    // values need no load), updates others in place, and writes s12 only after an access
    // that may fault: at the trap s12 must still hold its old value.
    for addr in ["0x10000", "0x30000"] {
        let src = format!(
            "
            .mem 0x10000, 0x1000, r
            .text
            S.LI s1, {addr}
            S.LI s7, 100
            S.LI s8, 7
            S.LI s10, 3
            S.LI s12, 42
            J next
        next:
            S.ADD s7, s7, 5
            S.MOV s9, s8
            S.MOV s8, s8
            S.SUB s10, s10, s7
            S.LI s11, 9
            S.SHL s13, s11, s10
            V.REDSUM s14, v1
            V.LD [s1 + 0], ->v1
            S.LI s12, 1
            S.ADD s14, s14, s12
            HALT
            "
        );
        check_all_vls(&src);
    }
}

#[test]
fn inline_gathers_and_scatters_check_the_whole_group_range() {
    // Full iterations of a hardware loop access register-offset EAs in line after one check
    // of the group's EA range; anything the check cannot prove goes to the helper. Cases: in
    // place (gather and scatter on the same words), every lane on one word (the last lane's
    // store wins), lanes on both sides of an unmapped page none of them touches, a store to
    // a read-only page, a source that ends mid-loop, unaligned lanes, and a group spread over
    // more pages than the permitted-run table counts (255).
    let cases = [
        ("0x10000", "0x10000", "V.MUL v2, v1, 4", 1000),
        ("0x10000", "0x11000", "V.MUL v2, v1, 0", 100),
        (
            "0x12000",
            "0x12000",
            "V.AND v2, v1, 1\n V.MUL v2, v2, 0x3000",
            300,
        ),
        ("0x10000", "0x13000", "V.MUL v2, v1, 4", 100),
        ("0x15000", "0x10000", "V.MUL v2, v1, 8", 1000),
        ("0x10001", "0x10003", "V.MUL v2, v1, 4", 200),
        ("0x100000", "0x100004", "V.MUL v2, v1, 0x10000", 64),
    ];
    for (src, dst, index, n) in cases {
        for (ld, st) in [
            ("V.LW [s1 + v2], ->v3", "V.SW.U v3, [s4 + v2]"),
            ("V.LDI.U [v2 + 8], ->v3", "V.SD v3, [s4 + (v2 << 3)]"),
        ] {
            let ld = ld.replace("[v2 + 8]", "[v5 + 8]");
            let prog = format!(
                "
                .mem 0x10000, 0x3000, rw
                .mem 0x13000, 0x1000, r
                .mem 0x15000, 0x1000, rw
                .mem 0x100000, 0x200000, rw
                .data 0x10000
                .fill 1024, 4, 0x01020304
                .text
                S.LI s1, {src}
                S.LI s4, {dst}
                S.LI s3, {n}
                LOOP s3
                V.LC0 v1
                {index}
                V.ADD v5, v2, s1
                {ld}
                V.ADD v3, v3, v1
                {st}
                ENDLOOP
                HALT
                "
            );
            check_all_vls(&prog);
        }
    }
}

#[test]
fn halt_and_illegal_inside_regions() {
    for tail in [".inst 0", "HALT", "J 0x100000", ""] {
        let src = format!(
            "
            .mem 0x10000, 0x1000, rw
            .text
            S.LI s1, 5
        l:  S.SUB s1, s1, 1
            V.ADD v1, v1, 1
            BNE s1, 0, l
            {tail}
            "
        );
        check_all_vls(&src);
    }
}

#[test]
fn seed_kernels_agree_on_all_engines() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/seeds/kernels");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("seeds/kernels") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("s") {
            continue;
        }
        let src = std::fs::read_to_string(&path).expect("read");
        let p = match assemble(&src, &path.display().to_string()) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        for vl in VLS {
            for strict in [false, true] {
                check(&p, vl, strict, None);
            }
        }
        n += 1;
    }
    assert!(n >= 5, "expected the seed kernels, found {n}");
}

/// Throughput figures (not a timed test: it asserts only that the engines agree). Run with
/// `cargo test --release --test it -- --ignored --nocapture engines::perf_copy_kernel`.
#[test]
#[ignore]
fn perf_copy_kernel() {
    use std::time::Instant;
    const WORDS: u64 = 65536; // 256 KiB
    const REPS: u64 = 1000;
    let src = format!(
        "
        .mem 0x100000, 0x40000, rw
        .mem 0x200000, 0x40000, rw
        .text
        S.LI s1, 0x100000
        S.LI s2, 0x200000
        S.LI s3, {WORDS}
        S.LI s7, {REPS}
    outer:
        LOOP s3
        V.LW [s1, lc0<<2, 0], ->v1
        V.SW v1, [s2, lc0<<2, 0]
        ENDLOOP
        S.SUB s7, s7, 1
        BNE s7, 0, outer
        HALT
        "
    );
    let p = asm(&src);
    let cfg = config(&p, 32, false, None);
    let elems = (WORDS * REPS) as f64;
    let time = |engine: Engine| {
        let mut m = Machine::new(&p, cfg).expect("machine");
        for (i, b) in m
            .mem_mut()
            .and_then(|mem| mem.bytes_mut(0x100000, 0x40000))
            .expect("src")
            .iter_mut()
            .enumerate()
        {
            *b = (i * 7) as u8;
        }
        let d = Decoded::new(&p.code);
        let t = Instant::now();
        let (exit, st) = vm::run(engine, &mut m, &d, &VmOptions::foreground(16));
        let dt = t.elapsed().as_secs_f64();
        assert_eq!(exit, Exit::Halted);
        (dt, st, snap(&m, exit))
    };
    let (ti, _, si) = time(Engine::Interp);
    let (tj, stj, sj) = time(Engine::Jit);
    let (tt, stt, st) = time(Engine::Tiered);
    assert_eq!(si, sj);
    assert_eq!(si, st);
    let srcv: Vec<u32> = (0..WORDS as u32)
        .map(|i| i.wrapping_mul(0x9e37_79b9))
        .collect();
    let mut dstv = vec![0u32; WORDS as usize];
    let t = Instant::now();
    for _ in 0..REPS {
        let s = std::hint::black_box(&srcv);
        for (d, x) in dstv.iter_mut().zip(s.iter()) {
            *d = *x;
        }
        std::hint::black_box(&mut dstv);
    }
    let tr = t.elapsed().as_secs_f64();
    println!("copy kernel, {WORDS} words x {REPS}, VL 32:");
    println!("  rust copy loop : {:8.1} Melem/s", elems / tr / 1e6);
    println!(
        "  jit            : {:8.1} Melem/s ({:.2}x rust, {:.1}x interp) {stj:?}",
        elems / tj / 1e6,
        tr / tj,
        ti / tj
    );
    let tjx = tj - stj.compile_us as f64 * 1e-6;
    println!(
        "  jit w/o compile: {:8.1} Melem/s ({:.2}x rust, {:.1}x interp)",
        elems / tjx / 1e6,
        tr / tjx,
        ti / tjx
    );
    println!(
        "  tiered         : {:8.1} Melem/s {stt:?}",
        elems / tt / 1e6
    );
    println!("  interp         : {:8.1} Melem/s", elems / ti / 1e6);

    // Compile times: every region of every seed kernel and of this kernel, VL 32.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/seeds/kernels");
    let mut times = Vec::new();
    let mut progs = vec![p.clone()];
    for entry in std::fs::read_dir(dir).expect("seeds/kernels") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) == Some("s") {
            let text = std::fs::read_to_string(&path).expect("read");
            progs.push(assemble(&text, "k.s").expect("kernel assembles"));
        }
    }
    for prog in &progs {
        let m = Machine::new(prog, config(prog, 32, false, None)).expect("machine");
        let mut jit =
            lanejit_jit::Jit::new(&lanejit_interp::interp::DecodedCode::decode(&prog.code), &m)
                .expect("jit");
        for i in 0..prog.code.len() as u64 {
            let _ = jit.compile(8 * i).expect("compiles");
        }
        times.extend(jit.stats().compile_times_us);
    }
    times.sort_unstable();
    println!(
        "  region compile time: median {} us, max {} us over {} regions",
        times[times.len() / 2],
        times[times.len() - 1],
        times.len()
    );
}

#[test]
fn large_maps_fill_their_page_tables_lazily_on_every_engine() {
    // 64 MiB + 12 KiB mapped: more than `memory::EAGER_PAGES`, so the per-page tables are
    // filled chunk by chunk (16 MiB) on first use. A copy streams across chunk boundaries
    // (the hoisted span check meets chunks not filled yet), a gather spreads over every
    // chunk, and a read-only page and a hole lie inside the big range's span.
    let src = "
        .mem 0x1000000, 0x2000000, rw
        .mem 0x3000000, 0x1000, r
        .mem 0x3002000, 0x2000000, rw
        .mem 0x5800000, 0x2000, rw
        .data 0x1000000
        .word 1, 2, 3, 4, 5, 6, 7, 8
        .data 0x3000000
        .word 0x77
        .text
        S.LI s1, 0x1ffe000
        S.LI s2, 0x4ff0000
        S.LI s3, 0x3000
        LOOP s3
        V.LW [s1, lc0<<2, 0], ->v1
        V.ADD v1, v1, 9
        V.SW v1, [s2, lc0<<2, 0]
        ENDLOOP
        S.LI s4, 0x1000000
        S.LI s3, 64
        LOOP s3
        V.LC0 v2
        V.MUL v2, v2, 0x7ff3
        V.AND v2, v2, 0xfffff
        V.LW [s4 + (v2 << 6)], ->v3
        V.SW v3, [s4 + (v2 << (2 + 4))]
        ENDLOOP
        S.LI s5, 0x3000000
        V.LANEID v4
        V.LW [s5 + (v4 << 12)], ->v5
        HALT
    ";
    let p = asm(src);
    for vl in [1, 4, 16, 64] {
        let (r, stats) = check(&p, vl, false, None);
        assert!(stats.jit_retired > 0, "vl {vl}: compiled code ran");
        let out = r
            .memory
            .iter()
            .find(|(a, _)| *a == 0x4ff0000)
            .expect("mapped");
        assert_eq!(&out.1[..4], &9u32.to_le_bytes(), "vl {vl}: the copy ran");
        assert!(
            trap_kind(&r.exit()).is_some() || vl == 1,
            "vl {vl}: {:?}",
            r.exit()
        );
    }
    check(&p, 8, false, Some(3000));
}

/// The f32 values of a grid of `rows` rows of 64 at 0x10000, with a quiet NaN with a payload
/// and an infinity among them, for loop nests (`region::Region::body`).
fn nest_grid(rows: usize) -> String {
    f32_words(64 * rows, 21).replacen("0x", "0x7fc00005, 0x7f800000, 0x", 1)
}

#[test]
fn loop_nests_keep_registers_across_outer_iterations() {
    // A stencil-like nest: a scalar loop over 8 rows around a hardware loop, the row pointers
    // and a sum of the trips updated in the epilogue, the BNE back to the row's start (two
    // scalar instructions setting the trip, then the LOOP: the outer prologue). Rows have 0
    // to 3 points more than `base` (a zero-trip row, rows with and without a tail at every
    // VL); an accumulator (v4, an integer sum of the loaded words) and an f32 result (v3)
    // live across the outer loop and are read back after it. Cases: every row in mapped
    // memory; the last row running past the mapping (a fault in the last outer iteration);
    // rows 4 to 7 past it (a middle row faults); then exact instruction budgets.
    let prog = |base: u32, stride: u32| {
        let grid = nest_grid(15);
        format!(
            "
            .mem 0x10000, 0x1000, rw
            .mem 0x20000, 0x1000, rw
            .data 0x10000
            {grid}
            .text
            S.LI s1, 0x10000
            S.LI s2, 0x20000
            S.LI s4, 8
            S.LI s10, 0x3f000000
            S.LI s11, 0x3e000000
        row:
            S.AND s3, s4, 3
            S.ADD s3, s3, {base}
            LOOP s3
            V.LW [s1, lc0<<2, 0], ->v1
            V.LW [s1, lc0<<2, 4], ->v2
            V.FMUL.S v3, v1, s10
            V.FMA.S v3, v2, s11
            V.SW v3, [s2, lc0<<2, 0]
            V.ADD v4, v4, v1
            ENDLOOP
            S.ADD s1, s1, {stride}
            S.ADD s2, s2, 0x100
            S.ADD s5, s5, s3
            S.SUB s4, s4, 1
            BNE s4, 0, row
            V.REDSUM s6, v4
            HALT
            "
        )
    };
    for (base, stride, fault) in [(29, 0x100, false), (29, 0x240, true), (13, 0x400, true)] {
        let p = asm(&prog(base, stride));
        for vl in VLS {
            for strict in [false, true] {
                let (r, st) = check(&p, vl, strict, None);
                assert!(st.jit_retired > 0, "compiled code ran");
                assert_eq!(trap_kind(&r.exit()).is_some(), fault, "vl {vl}");
            }
        }
    }
    check_budgets(&asm(&prog(29, 0x100)), 5);
    check_budgets(&asm(&prog(0, 0x100)), 3);
}

#[test]
fn loop_nests_with_an_outer_prologue_broadcast_and_agree() {
    // A matmul-like nest: per row of C, broadcasts of two elements of A (uniform `V.LWI`, the
    // outer prologue, under a full mask), a hardware loop over the columns reading two rows
    // of B and updating C, and the epilogue's BLT back to the broadcasts. The prologue's
    // checks (mask, budget, the broadcasts' span) are made on the edges into it, its entry
    // and the back edge (`mem::PrologueRun`). Cases: entered with a full mask; with a partial
    // one (`V.SETMASK` before the nest and at the end of every row: the broadcasts run under
    // it, and the region leaves for the interpreter when its entry finds the mask partial);
    // entered with a full mask that the first row's end makes partial (the back edge's
    // check); A's pointer walking past its mapping in a middle row (a broadcast in the
    // prologue faults, found on the back edge) and starting past it (found on the way in);
    // A's pointer misaligned (a trap under strict alignment only); and budgets.
    // `pro`: more of the prologue, after the broadcasts.
    let prog_with = |setmask: &str, a: u32, mask: i64, epi: &str, pro: &str| {
        let grid = nest_grid(2);
        let b = f32_words(2 * 128, 5);
        format!(
            "
            .mem 0x10000, 0x1000, r
            .mem 0x30000, 0x1000, rw
            .mem 0x40000, 0x1000, rw
            .data 0x10000
            {grid}
            .data 0x30000
            {b}
            .text
            S.LI s9, {a:#x}
            S.LI s10, 0x40000
            S.LI s6, 0x30000
            S.LI s20, 29
            S.LI s21, 6
            S.LI s12, {mask}
            {setmask}
        irow:
            V.LWI [s9 + (0 << 2)], ->v16
            V.LWI [s9 + (1 << 2)], ->v17
            {pro}
            S.ADD s13, s13, 1
            LOOP s20
            V.LW [s10, lc0<<2, 0], ->v1
            V.LW [s6, lc0<<2, 0], ->v2
            V.FMA.S v1, v2, v16
            V.LW [s6, lc0<<2, 0x200], ->v2
            V.FMA.S v1, v2, v17
            V.SW v1, [s10, lc0<<2, 0]
            ENDLOOP
            S.ADD s9, s9, 8
            S.ADD s10, s10, 0x80
            S.ADD s8, s8, 1
            {epi}
            {setmask}
            BLT s8, s21, irow
            HALT
            "
        )
    };
    let prog = |setmask: &str, a: u32, mask: i64, epi: &str| prog_with(setmask, a, mask, epi, "");
    let set = "V.SETMASK s12";
    let fault = Some(TrapKind::PageFault);
    let misaligned = Some(TrapKind::Misaligned);
    for (setmask, a, mask, epi, trap, strict_trap) in [
        ("", 0x10000, 0x2b, "", None, None),
        (set, 0x10000, 0x2b, "", None, None),
        (set, 0x10000, -1, "S.SHL s12, s12, 1", None, None),
        ("", 0x10fe8, 0x2b, "", fault, fault),
        ("", 0x11000, 0x2b, "", fault, fault),
        ("", 0x10002, 0x2b, "", None, misaligned),
    ] {
        let p = asm(&prog(setmask, a, mask, epi));
        for vl in VLS {
            for strict in [false, true] {
                let (r, st) = check(&p, vl, strict, None);
                assert!(st.jit_retired > 0, "compiled code ran");
                let want = if strict { strict_trap } else { trap };
                assert_eq!(
                    trap_kind(&r.exit()),
                    want,
                    "vl {vl} strict {strict} a {a:#x}"
                );
            }
        }
    }
    check_budgets(&asm(&prog("", 0x10000, 0x2b, "")), 7);
    // The body's registers are iteration-local (overwritten before read in every
    // iteration, kept in a packed slot by the last iterations, `Tx::plocal`) unless the
    // prologue or epilogue touches them: here the prologue reads v1, the last row's last
    // value, so only v2 stays local. With a fault in a middle row's prologue and budgets.
    for a in [0x10000, 0x10fe8] {
        let p = asm(&prog_with("", a, 0x2b, "", "V.ADD v18, v18, v1"));
        for vl in VLS {
            let (r, st) = check(&p, vl, false, None);
            assert!(st.jit_retired > 0, "compiled code ran");
            let want = (a != 0x10000).then_some(TrapKind::PageFault);
            assert_eq!(trap_kind(&r.exit()), want, "vl {vl} a {a:#x}");
        }
    }
    check_budgets(
        &asm(&prog_with("", 0x10000, 0x2b, "", "V.ADD v18, v18, v1")),
        7,
    );
}

#[test]
fn loop_nests_around_branch_loops_agree() {
    // SpMV's shape: a hardware loop over rows (one per lane) whose body runs a branch loop
    // over the nonzeros (K steps, past each row's end masked to +0.0) between a straight
    // start (row bounds, zeroed accumulator) and the store of the row's sum: one region
    // from the body's start to the ENDLOOP. 45 rows: a partial last group at VL 8 and up,
    // where the back edge's mask is partial and the region leaves for the interpreter.
    // Cases: no fault; one column index past x (a gather faults in a middle row group);
    // then exact instruction budgets. The JIT enters the branch loop's packed second copy
    // straight from the row group's start (`Tx::prologue_shortcut`) when the registers the
    // copy takes packed hold 32-bit words: `big` makes the gathered registers hold wider
    // values at the region's entry, so the first group goes the header's way and later ones
    // the shortcut; a fault in the first step of a later group then leaves with the values
    // the group before left in them (packed at the shortcut).
    let rows = 45u32;
    let rowptr: Vec<u32> = (0..=rows).map(|r| r * 5 + (r % 3)).collect();
    let nnz = rowptr[rows as usize] + 16;
    let big = "S.LI s9, 0x123456789\n V.MOV v4, s9\n V.MOV v5, s9\n V.MOV v6, s9\n V.MOV v10, s9";
    let prog = |bad: u32, pre: &str| {
        let ptr = words(rows + 1, |i| rowptr[i as usize]);
        let col = words(nnz, |i| if i == bad { 0x9000 } else { (i * 13 + 7) % 200 });
        let val = f32_words(nnz as usize, 3).replacen("0x", "0x7fc00009, 0x", 1);
        let x = f32_words(256, 4);
        format!(
            "
            .mem 0x10000, 0x1000, rw
            .mem 0x11000, 0x1000, rw
            .mem 0x12000, 0x1000, rw
            .mem 0x13000, 0x1000, rw
            .mem 0x14000, 0x1000, rw
            .data 0x10000
            {ptr}
            .data 0x11000
            {col}
            .data 0x12000
            {val}
            .data 0x13000
            {x}
            .text
            S.LI s1, 0x10000
            S.LI s2, 0x11000
            S.LI s4, 0x12000
            S.LI s5, 0x13000
            S.LI s6, 0x14000
            {pre}
            S.LI s3, {rows}
            LOOP s3
            V.LWU [s1, lc0<<2, 0], ->v1
            V.LWU [s1, lc0<<2, 4], ->v2
            V.MOV v10, 0
            S.MOV s7, s0
        nz:
            V.SUB v3, v1, v2
            V.SRA v3, v3, 63
            V.LWU [s2 + (v1 << 2)], ->v4
            V.LW [s4 + (v1 << 2)], ->v5
            V.AND v5, v5, v3
            V.LW [s5 + (v4 << 2)], ->v6
            V.FMA.S v10, v5, v6
            V.ADD v1, v1, 1
            S.ADD s8, s8, s7
            S.ADD s7, s7, 1
            BLT s7, 7, nz
            V.SW v10, [s6, lc0<<2, 0]
            ENDLOOP
            HALT
            "
        )
    };
    for (bad, pre, fault) in [
        (u32::MAX, "", false),
        (rowptr[20] + 2, "", true),
        (u32::MAX, big, false),
        (rowptr[9], big, true),
        (rowptr[9], "", true),
    ] {
        let p = asm(&prog(bad, pre));
        for vl in VLS {
            for strict in [false, true] {
                let (r, st) = check(&p, vl, strict, None);
                assert!(st.jit_retired > 0, "compiled code ran");
                assert_eq!(trap_kind(&r.exit()).is_some(), fault, "vl {vl}");
            }
        }
    }
    check_budgets(&asm(&prog(u32::MAX, "")), 11);
    check_budgets(&asm(&prog(u32::MAX, big)), 11);
}

#[test]
fn loaded_words_that_read_as_nans_keep_their_bits_into_a_packed_loop_copy() {
    // `lanejit fuzz` seed 42837, case 118733: a nest whose inner branch loop's second copy
    // takes v7 as a raw f32 sum (`V.FMA.S v7, ...`), entered from the row start
    // (`Tx::prologue_shortcut`) with v7 holding loaded words, some of which read as NaNs. The
    // copy canonicalises raw sums where they are seen, so such a register may not go in: the
    // gather faults in the first step (address 0 is unmapped) and the trap must show every
    // word of v7 as loaded. Then the same with every word a number (the shortcut taken),
    // and budgets.
    for words in [
        "0xffe84a25, 0x7fc00001, 0x3f800000",
        "0x3f800000, 0x40000000, 0xc0400000",
    ] {
        let src = format!(
            "
            .mem 0x10000, 0x2000, rw
            .data 0x10000
            .word {words}
            .fill 200, 4, 0x41200000
            .text
            S.LI s4, 0x10000
            V.LANEID v17
            V.SHL v17, v17, 2
            V.ADD v17, v17, s4
            V.LWU [v17 + (s0 << 0)], ->v7
            S.LI s10, 0x57
            LOOP s10
            NOP
        l:
            V.LWU [s0 + v0], ->v0
            V.FMA.S v7, v0, s0
            BNE s25, 0, l
            ENDLOOP
            HALT
            "
        );
        let p = asm(&src);
        for vl in VLS {
            let (r, _) = check(&p, vl, false, None);
            assert_eq!(trap_kind(&r.exit()), Some(TrapKind::PageFault), "vl {vl}");
        }
        check_budgets(&p, 1);
    }
}

#[test]
fn raw_fp_results_carried_around_loops_are_canonical_where_integers_read_them() {
    // Loops whose f32 (packed) or f64 (wide) sum goes around the back edge raw (a quiet NaN
    // with a payload, a negative one, a signalling one and infinities in the data), read at
    // the top of the next iteration by an integer XOR, or only by the next add: in a branch
    // loop, whose second copy takes the sum as it is when the first back edge had it raw
    // too, and in a hardware loop, whose copies start canonical; the state after the loop
    // and every instruction limit compared on every engine.
    let data = "0x7fc00123, 0xffc00000, 0x7f800001, 0x3f800000, 0x7f800000, 0xff800000, \
                0x7ff8000000000123, 0x3ff0000000000000, 0xfff0000000000000, 0x7ff0000000000001";
    for (load, add, xor) in [
        ("V.LW", "V.FADD.S", true),
        ("V.LW", "V.FADD.S", false),
        ("V.LD", "V.FADD.D", true),
        ("V.LD", "V.FADD.D", false),
    ] {
        let x = if xor {
            "V.XOR v13, v13, v11"
        } else {
            "V.ADD v13, v13, 1"
        };
        let w = if load == "V.LW" { 2 } else { 3 };
        let body = format!("{x}\n {load} [s1, lc0<<{w}, 0], ->v3\n {add} v11, v11, v3");
        let branch = format!(
            "
            .mem 0x10000, 0x2000, rw
            .data 0x10000
            .dword {data}
            .text
            S.LI s1, 0x10000
            S.LI s8, 7
        top:
            {body}
            S.ADD s1, s1, 8
            S.SUB s8, s8, 1
            BNE s8, 0, top
            HALT
            "
        );
        let hw = format!(
            "
            .mem 0x10000, 0x4000, rw
            .data 0x10000
            .dword {data}
            .text
            S.LI s1, 0x10000
            S.LI s3, 150
            LOOP s3
            {body}
            ENDLOOP
            HALT
            "
        );
        for src in [branch, hw] {
            check_compiled_every_vl_with_budgets(&asm(&src), 5);
        }
    }
}

#[test]
fn row_indices_stepped_in_a_branch_loop_stay_exact_past_32_bits() {
    // SpMV's row walk without the gathers: row start `j` and end loaded as words (zero- or
    // sign-extended), then a branch loop that compares them into lane signs (`V.SUB; V.SRA
    // 63`), keeps a value where `j` is below the end (`V.AND`), and steps `j` by an
    // immediate. The JIT packs `j` again on the way into the loop's second copy, steps it as
    // 32-bit words and compares packed words; words near 2^32 (and, loaded signed, near
    // 2^31) carry out of 32 bits in some rows, where the step leaves for the interpreter.
    // Each row's `j`, mask and kept value are stored, so every lane's value is compared.
    let rows = 45u32;
    let start = |r: u32| match r % 9 {
        0 => 0xffff_fffd,
        1 => 0x7fff_fffe,
        2 => 0xffff_ffff,
        _ => r * 3,
    };
    for (op, step) in [
        ("V.LWU", "V.ADD v1, v1, 1"),
        ("V.LW", "V.ADD v1, v1, 2"),
        ("V.LWU", "V.SUB v1, v1, -3"),
        ("V.LWU", "V.SUB v1, v1, 1"),
    ] {
        let ptr = words(rows + 1, |r| if r == rows { 9 } else { start(r) });
        let src = format!(
            "
            .mem 0x10000, 0x1000, rw
            .mem 0x14000, 0x4000, rw
            .data 0x10000
            {ptr}
            .text
            S.LI s1, 0x10000
            S.LI s6, 0x14000
            S.LI s3, {rows}
            LOOP s3
            {op} [s1, lc0<<2, 0], ->v1
            {op} [s1, lc0<<2, 4], ->v2
            V.LANEID v4
            S.MOV s7, s0
        nz:
            V.SUB v3, v1, v2
            V.SRA v3, v3, 63
            V.AND v5, v4, v3
            {step}
            S.ADD s7, s7, 1
            BLT s7, 6, nz
            V.SD v1, [s6, lc0<<3, 0]
            V.SD v3, [s6, lc0<<3, 0x400]
            V.SD v5, [s6, lc0<<3, 0x800]
            ENDLOOP
            HALT
            "
        );
        check_compiled_every_vl_with_budgets(&asm(&src), 13);
    }
}

#[test]
fn nests_of_rows_of_any_length_keep_each_lane_of_their_iteration_local_registers() {
    // A loop nest whose rows have pseudo-random lengths (1 to 64 points): with VL 32 some
    // rows end in a masked tail after full iterations, others are only a tail, so tails
    // follow tails with fewer or more lanes. The body's registers are iteration-local: the
    // nest keeps them in its packed slot (a full iteration's lanes, and a tail's lanes over
    // them), and every exit (the end, and each instruction limit) must show each lane as the
    // last iteration that wrote it left it. The store goes to a separate array, to the rows
    // themselves one word on (the same base: an in-place shift the tail keeps in order), or
    // to an alias of the rows one word on through another base register (seen only when the
    // tail runs: it leaves for the straight form of the body until the loop is compiled
    // again with its loads in order).
    let x = f32_words(1200, 3);
    for (dst, same_base) in [("0x20000", false), ("0x10004", false), ("", true)] {
        let store = if same_base {
            "V.SW v4, [s1, lc0<<2, 4]"
        } else {
            "V.SW v4, [s2, lc0<<2, 0]"
        };
        let src = format!(
            "
            .mem 0x10000, 0x2000, rw
            .mem 0x20000, 0x2000, rw
            .data 0x10000
            {x}
            .text
            S.LI s1, 0x10000
            S.LI s2, {dst}
            S.LI s5, 7
            S.LI s6, 14
            S.LI s10, 0x3f000000
    row:    S.MUL s5, s5, 13
            S.ADD s5, s5, 5
            S.AND s5, s5, 63
            S.ADD s3, s5, 1
            LOOP s3
            V.LW [s1, lc0<<2, 0], ->v1
            V.LW [s1, lc0<<2, 4], ->v2
            V.FMUL.S v3, v1, s10
            V.FADD.S v4, v3, v2
            {store}
            ENDLOOP
            S.ADD s1, s1, 260
            S.ADD s2, s2, 260
            S.SUB s6, s6, 1
            BNE s6, 0, row
            HALT
            ",
            dst = if same_base { "0" } else { dst }
        );
        let p = asm(&src);
        check_every_vl_with_budgets_at(&p, &[4, 32], 5);
    }
}

#[test]
fn a_tail_certain_to_follow_the_last_streamed_iteration_takes_its_lanes_over() {
    // A 5-point stencil nest whose rows (6, of 70 to 73 or 126 to 129 points) stream their
    // full iterations; where the masked tail is certain to follow the last of them in line
    // (its group of VL lanes proven with the row, the budget covering both), that iteration
    // does not store the lanes of its iteration-local registers the tail overwrites
    // (`Tx::tail_ahead`), and the tail's entry skips its checks. The registers are read at
    // every exit: the end, each instruction limit, and (the long rows) the last row, whose
    // tail's group of VL lanes reaches past the grid's mapping while its active lanes do not
    // (so its tail is not certain and leaves for the straight form of the body), or whose
    // tail's last active lane faults (one word further on; the trap is precise). Some rows
    // have no tail at some VLs. v8 (integer) is iteration-local and never stored.
    let grid = nest_grid(15);
    for (base, start, fault) in [
        (70, 0x10204, false),
        (126, 0x10204, false),
        (126, 0x10208, true),
    ] {
        let src = format!(
            "
            .mem 0x10000, 0x1000, rw
            .mem 0x20000, 0x1000, rw
            .data 0x10000
            {grid}
            .text
            S.LI s1, {start}
            S.LI s2, 0x20204
            S.LI s4, 6
            S.LI s10, 0x3f000000
            S.LI s11, 0x3e000000
        row:
            S.AND s3, s4, 3
            S.ADD s3, s3, {base}
            LOOP s3
            V.LW [s1, lc0<<2, 0], ->v1
            V.LW [s1, lc0<<2, -4], ->v2
            V.LW [s1, lc0<<2, 4], ->v3
            V.LW [s1, lc0<<2, -0x200], ->v4
            V.LW [s1, lc0<<2, 0x200], ->v5
            V.FMUL.S v6, v1, s10
            V.FMA.S v6, v2, s11
            V.FMA.S v6, v3, s11
            V.FMA.S v6, v4, s11
            V.FMA.S v6, v5, s11
            V.SUB v8, v2, v3
            V.SW v6, [s2, lc0<<2, 0]
            ENDLOOP
            S.ADD s1, s1, 0x200
            S.ADD s2, s2, 0x200
            S.SUB s4, s4, 1
            BNE s4, 0, row
            HALT
            "
        );
        let p = asm(&src);
        for vl in VLS {
            for strict in [false, true] {
                let (r, st) = check(&p, vl, strict, None);
                assert!(st.jit_retired > 0, "compiled code ran");
                let trapped = trap_kind(&r.exit()).is_some();
                assert_eq!(trapped, fault, "vl {vl}");
                if base == 70 && !strict && [8, 32].contains(&vl) {
                    budget_sweep(&p, vl, r.result.instructions, 5);
                }
            }
        }
    }
    // Bytes read (into a register the next iteration reads first), words written 256 bytes
    // below them before the bytes are used: at VL 32 a row's two full iterations store below
    // what they load, but its tail's (30 lanes) words reach the bytes its load read, so that
    // load must not move past the store (the tail's entry test sends it to the straight
    // form).
    let bytes = f32_words(1024, 5);
    let p = asm(&format!(
        "
        .mem 0x10000, 0x2000, rw
        .data 0x10000
        {bytes}
        .text
        S.LI s1, 0x10400
        S.LI s4, 5
        S.LI s6, 0x11800
        V.LANEID v5
        V.ADD v5, v5, 0x55
    row:
        S.SUB s2, s1, 256
        S.LI s3, 94
        LOOP s3
        V.ADD v4, v1, v5
        V.LB [s1, lc0, 0], ->v1
        V.SW v5, [s2, lc0<<2, 0]
        V.ADD v3, v1, v4
        V.SW v3, [s6, lc0<<2, 0]
        ENDLOOP
        S.ADD s1, s1, 0x180
        S.SUB s4, s4, 1
        BNE s4, 0, row
        HALT
        "
    ));
    for vl in [8, 32] {
        check(&p, vl, false, None);
    }
}

#[test]
fn vector_addresses_of_a_nest_keep_every_lane_at_every_exit() {
    // A nest whose rows (pseudo-random lengths, 1 to 64 points; tails after full iterations,
    // tails alone, tails after tails) build a vector address in the body (`V.LC0; V.SHL;
    // V.ADD`, iteration-local) and load through it: the nest records the address's lane 0
    // and lane counts instead of storing its 64-bit lanes (`Tx::alocal`), and every exit
    // (the end, each instruction limit) must show each lane as the last iteration that
    // wrote it left it. v9 is an address with a negative stride, never used.
    let x = f32_words(1200, 4);
    let src = format!(
        "
        .mem 0x10000, 0x2000, rw
        .mem 0x20000, 0x2000, rw
        .data 0x10000
        {x}
        .text
        S.LI s1, 0x10004
        S.LI s2, 0x20000
        S.LI s5, 3
        S.LI s6, 14
        S.LI s10, 0x3f000000
row:    S.MUL s5, s5, 13
        S.ADD s5, s5, 5
        S.AND s5, s5, 63
        S.ADD s3, s5, 1
        LOOP s3
        V.LC0 v7
        V.SHL v7, v7, 2
        V.ADD v7, v7, s1
        V.LC0 v9
        V.MUL v9, v9, -24
        V.ADD v9, v9, s6
        V.LWI.U [v7 - 4], ->v1
        V.LWI.U [v7 + 4], ->v2
        V.FMUL.S v3, v1, s10
        V.FADD.S v4, v3, v2
        V.SW v4, [s2, lc0<<2, 0]
        ENDLOOP
        S.ADD s1, s1, 260
        S.ADD s2, s2, 260
        S.SUB s6, s6, 1
        BNE s6, 0, row
        HALT
        "
    );
    let p = asm(&src);
    check_every_vl_with_budgets_at(&p, &[4, 32], 5);
}

#[test]
fn a_row_loop_keeps_the_shape_of_vector_addresses_it_bumps() {
    // One row per lane, an inner branch loop over the columns (row-major gemv written with
    // vector addresses): the nest's prologue builds lane addresses at a row pitch (positive
    // and negative) and the loop bumps them by an immediate or a scalar, so each full copy
    // of its body starts knowing them affine (`Tx::entry_strides`). Read through an
    // immediate form and a register-offset form, stored through one; a register bumped the
    // same way but read as data; one the body overwrites (no shape); lane offsets built
    // affine before the loop whose step the body changes (by adding the lane index: no
    // shape at the loop's head). Rows of 20 columns
    // that stay in the map over 37 rows (a partial last group at every VL above 1, which
    // the interpreter runs), and 36 rows of 24 at a wider pitch whose last lanes run off
    // the map's end at a middle column (a precise trap in a full group).
    let x = f32_words(1024, 5);
    for (rows, cols, pitch, start) in [
        (37, 20, 80, 0x10000),
        (36, 24, 116, 0x10000),
        (37, 20, -80, 0x10b40),
    ] {
        let p = asm(&format!(
            "
            .mem 0x10000, 0x1000, rw
            .mem 0x20000, 0x1000, rw
            .data 0x10000
            {x}
            .text
            S.LI s1, {start}
            S.LI s6, 0x20000
            S.LI s3, {rows}
            S.LI s8, 4
            S.LI s12, 0x3f000000
            LOOP s3
            V.LC0 v9
            V.MUL v9, v9, {pitch}
            V.ADD v9, v9, s1
            V.LC0 v12
            V.MUL v12, v12, {pitch}
            V.LC0 v11
            V.LC0 v14
            V.SHL v14, v14, 2
            V.LANEID v16
            V.MOV v10, 0
            S.MOV s7, s0
        col:
            V.LWI.U [v9 + 0], ->v5
            V.LWI.U [v9 + 4], ->v6
            V.LW [s1 + v12], ->v7
            V.FMUL.S v5, v5, v6
            V.FADD.S v10, v10, v5
            V.FADD.S v10, v10, v7
            V.LW [s1 + v14], ->v15
            V.FADD.S v10, v10, v15
            V.ADD v14, v14, v16
            V.LC0 v13
            V.SHL v13, v13, 2
            V.ADD v13, v13, s6
            V.SWI.U v10, [v13 + 0]
            V.SWI.U v5, [v9 + 0]
            V.ADD v9, v9, s8
            V.ADD v12, v12, 4
            V.ADD v11, v11, s12
            S.ADD s7, s7, 1
            BLT s7, {cols}, col
            V.SW v10, [s6, lc0<<2, 0x400]
            ENDLOOP
            HALT
            "
        ));
        check_every_vl_with_budgets_at(&p, &[4], 89);
        check(&p, 8, true, None);
    }
}

#[test]
fn a_nest_reads_its_tails_loaded_lanes_back_only_from_bytes_nothing_wrote() {
    // In a nest whose inner loop's tail is pure, a register whose last write is a movable
    // contiguous load is not stored by the tail: its lanes are read back from the guest
    // bytes at exits (`Tx::mref`). Rows of 70 points (a tail at every VL from 4 up), read at
    // the end and at each instruction limit; then the same nest whose epilogue stores a
    // word over bytes the row's tail loaded (its lane 1's), so its registers must come from
    // the tail's own copy.
    let grid = nest_grid(15);
    let over = "S.LC0 s10
            S.VL s11
            S.SUB s10, s10, s11
            S.SHL s10, s10, 2
            S.ADD s10, s10, s1
            V.SWI s9, [s10 + (1 << 2)]";
    for epilogue in ["", over] {
        let p = asm(&format!(
            "
            .mem 0x10000, 0x1000, rw
            .mem 0x20000, 0x1000, rw
            .data 0x10000
            {grid}
            .text
            S.LI s1, 0x10000
            S.LI s2, 0x20000
            S.LI s4, 4
            S.LI s9, 0x40400000
        row:
            S.LI s3, 70
            LOOP s3
            V.LW [s1, lc0<<2, 0], ->v1
            V.LW [s1, lc0<<2, 4], ->v2
            V.FADD.S v3, v1, v2
            V.SW v3, [s2, lc0<<2, 0]
            ENDLOOP
            {epilogue}
            S.ADD s1, s1, 0x200
            S.ADD s2, s2, 0x200
            S.SUB s4, s4, 1
            BNE s4, 0, row
            HALT
            "
        ));
        for vl in VLS {
            let (r, st) = check(&p, vl, false, None);
            assert!(st.jit_retired > 0, "compiled code ran");
            if [8, 32].contains(&vl) {
                budget_sweep(&p, vl, r.result.instructions, 3);
            }
        }
    }
}

#[test]
fn a_masked_tail_loading_what_its_store_overwrites_keeps_the_old_bytes() {
    // The masked tail's loads may move to their first use when no store of the iteration
    // writes what they read. Here the register a load writes is carried (read by the next
    // iteration before it is loaded again), so in the tail its first use comes after the
    // store; the store's destination overlaps the load's source one word on, through
    // another base register, which only the tail's entry test can see. The loaded value
    // must be the bytes before the store. Also at the same address and two words apart
    // (other VLs leave other tails).
    let x = f32_words(700, 21);
    for dst in ["0x10004", "0x10000", "0x10008", "0x10040", "0x20000"] {
        let src = format!(
            "
            .mem 0x10000, 0x1000, rw
            .mem 0x20000, 0x1000, rw
            .data 0x10000
            {x}
            .text
            S.LI s1, 0x10000
            S.LI s2, {dst}
            S.LI s3, 45
            LOOP s3
            V.FADD.S v5, v1, v5
            V.LW [s1, lc0<<2, 0], ->v1
            V.SW v5, [s2, lc0<<2, 0]
            ENDLOOP
            HALT
            "
        );
        check_all_vls(&src);
    }
}

#[test]
fn product_accumulators_keep_their_narrow_sums_exact() {
    // An accumulator of 16-bit products (dot8's shape) keeps its narrow sums permuted in an
    // unpaired streaming copy, even lanes then odd ones per chunk (`Tx::even_odd`), and in
    // lane order in a paired one, whose second copy adds both iterations' signed products
    // at once (`Tx::pair_products`); either way they are put back in lane order wherever the
    // accumulator is used whole. Products of the extreme bytes (-128 * -128 = 16384, 255 *
    // 255 = 65025) over more iterations than the narrow sums hold between flushes (65,535
    // iterations: 530,001 elements at VL 8), lanes of different values, the accumulator
    // also read in the body in a variant, and exits under instruction limits mid-stream;
    // then short loops at every VL; then lanes whose products differ by lane and iteration.
    let ramp: String = (0..64)
        .map(|i| format!("{:#x}", 0x80u8.wrapping_add((i as u8).wrapping_mul(5))))
        .collect::<Vec<_>>()
        .join(", ");
    for (load, fill, extra) in [
        ("V.LB", "0x80808080", ""),
        ("V.LBU", "0xffffffff", ""),
        ("V.LB", "0x7f80017f", ""),
        ("V.LBU", "0x7f80017f", "V.ADD v4, v3, v3"),
    ] {
        let src = format!(
            "
            .mem 0x10000, 0x111000, rw
            .data 0x10000
            .fill 0x44000, 4, {fill}
            .text
            S.LI s1, 0x10000
            S.LI s2, 0x92000
            S.LI s3, 530001
            V.MOV v3, 0
            LOOP s3
            {load} [s1, lc0, 0], ->v1
            {load} [s2, lc0, 0], ->v2
            V.MUL v1, v1, v2
            V.ADD v3, v3, v1
            {extra}
            ENDLOOP
            V.REDSUM s5, v3
            HALT
            "
        );
        let p = asm(&src);
        for vl in [8, 16] {
            check(&p, vl, false, None);
        }
        for max in [1000, 123_457, 400_003, 300_001] {
            check(&p, 8, false, Some(max));
        }
    }
    // Short loops at every VL: tails, and the sums used right after the loop.
    let src = format!(
        "
        .mem 0x10000, 0x2000, rw
        .data 0x10000
        .byte {ramp}
        .byte {ramp}
        .text
        S.LI s1, 0x10000
        S.LI s2, 0x10007
        S.LI s3, 100
        LOOP s3
        V.LB [s1, lc0, 0], ->v1
        V.LBU [s2, lc0, 0], ->v2
        V.MUL v5, v1, v1
        V.MUL v6, v2, v2
        V.ADD v3, v3, v5
        V.ADD v4, v4, v6
        ENDLOOP
        V.ADD v7, v3, v4
        HALT
        "
    );
    check_all_vls(&src);
    // Every lane's sum must be its own in a paired round: products of -128 * -128,
    // -128 * 127, 127 * 127 and small ones differ by lane and by iteration, the count leaves
    // a partial last iteration after an odd number of full ones, the sums are read per lane
    // (`S.GETLANE` of lanes 0 and 1) besides the reductions, an accumulator of unsigned
    // products (widened in each copy) runs beside it, and instruction budgets end the run
    // inside the loop.
    let bytes: Vec<String> = (0..2048u32)
        .map(|i| {
            let b: u8 = match (i * 7 + i / 32) % 5 {
                0 => 0x80,
                1 => 0x7f,
                2 => 0x81,
                _ => (i * 37 % 251) as u8,
            };
            format!("{b:#x}")
        })
        .collect();
    let src = format!(
        "
        .mem 0x10000, 0x1000, rw
        .data 0x10000
        .byte {data}
        .text
        S.LI s1, 0x10000
        S.LI s3, 1000
        V.MOV v3, 0
        V.MOV v6, 0
        LOOP s3
        V.LB [s1, lc0, 0], ->v1
        V.LB [s1, lc0, 1024], ->v2
        V.MUL v1, v1, v2
        V.ADD v3, v3, v1
        V.LBU [s1, lc0, 3], ->v4
        V.LBU [s1, lc0, 1027], ->v5
        V.MUL v4, v4, v5
        V.ADD v6, v6, v4
        ENDLOOP
        V.REDSUM s5, v3
        V.REDSUM s6, v6
        S.GETLANE s7, v3, 0
        S.GETLANE s8, v3, 1
        S.GETLANE s9, v6, 1
        HALT
        ",
        data = bytes.join(", ")
    );
    let p = asm(&src);
    for vl in VLS {
        for strict in [false, true] {
            let (_, st) = check(&p, vl, strict, None);
            assert!(st.jit_retired > 0, "compiled code ran (vl {vl})");
        }
        for max in [40, 97, 203] {
            check(&p, vl, false, Some(max));
        }
    }
}

#[test]
fn paired_streaming_rounds_flush_narrow_sums_in_time() {
    // Small loop bodies stream two iterations per round; an accumulator of widened bytes or
    // halfwords keeps narrow sums across rounds and is flushed before they could overflow.
    // All bytes 0xff (255 unsigned, -1 signed), 16 KiB of them: at VL 4 the byte loops run
    // 4096 iterations, far past what a 16-bit sum holds; trip counts with odd iteration
    // counts and tails end rounds in the first full copy.
    let data = words(4096, |_| 0xffff_ffff);
    for (load, step) in [("V.LBU", "lc0"), ("V.LB", "lc0"), ("V.LHU", "lc0<<1")] {
        for trip in [16384 / if step == "lc0" { 1 } else { 2 }, 4099, 777] {
            let src = format!(
                "
                .mem 0x10000, 0x4000, r
                .data 0x10000
                {data}
                .text
                S.LI s1, 0x10000
                S.LI s3, {trip}
                V.MOV v2, 0
                V.MOV v3, 0
                LOOP s3
                {load} [s1, {step}, 0], ->v1
                V.ADD v2, v2, v1
                V.ADD v3, v3, v1
                ENDLOOP
                V.REDSUM s5, v2
                HALT
                "
            );
            check_all_vls(&src);
        }
    }
}

#[test]
fn lane_offsets_built_before_a_branch_loop_and_stepped_by_scalars_stay_exact() {
    // What a compiler emits for `for (i = 0; i < n; i += VL) y[i..] = a * x[i..] + y[i..]`
    // as a branch loop: lane offsets built once before the loop (`V.LANEID; V.SHL`), and in
    // the loop an index vector that adds the scalar offset of the iteration to them (`V.ADD
    // v1, v0, s8`), or the offsets themselves bumped by the stride (`V.ADD v0, v0, s6`), used
    // by register-offset and vector-base accesses. The JIT tests at loop entry whether the
    // offsets step by one element and then makes each such access one contiguous access;
    // offsets that do not (neighbouring lanes swapped) are gathered. The loop is a region of
    // its own (`J top`), compiled where its offsets step, and runs twice, their neighbouring
    // lanes swapped (`brk`) before the second time: the code compiled at the first entry must
    // find them no longer stepping. x ends at a mapped
    // page's end and y's second page is read-only, so the longer runs trap in the middle of
    // the loop (at the larger VLs), in a load or in the store.
    let x = f32_words(2048, 11);
    let perm = words(64, |i| (i * 5 + 3) % 64);
    for (prep, body, brk, iters) in [
        // f64 through `s + v1`, `v1 = v0 + s8`.
        (
            "V.SHL v0, v0, 3",
            "V.ADD v1, v0, s8
             V.LD [s1 + v1], ->v2
             V.LD [s2 + v1], ->v3
             V.FMA.D v3, v2, s3
             V.SD.U v3, [s2 + v1]",
            "V.XOR v0, v0, 8",
            3,
        ),
        // Words through `s + (v2 << 2)`, `v2 = (v0 + s9) - 3` by a move, an add and a
        // subtract; past the mapped x at VL 64.
        (
            "",
            "V.MOV v1, v0
             V.ADD v1, v1, s9
             V.SUB v2, v1, 3
             V.LW [s1 + (v2 << 2)], ->v4
             V.ADD v4, v4, v2
             V.SW v4, [s2 + (v2 << 2)]",
            "V.XOR v0, v0, 1",
            20,
        ),
        // f64 through a vector base with an immediate, `v1 = v0 + s10` (an address); the
        // store reaches y's read-only page at VL 16 and above.
        (
            "V.SHL v0, v0, 3",
            "V.ADD v1, v0, s10
             V.LDI.U [v1 + 8], ->v2
             V.FADD.D v2, v2, s3
             S.SUB s11, s2, s1
             V.ADD v5, v1, s11
             V.SDI.U v2, [v5 + 0]",
            "V.XOR v0, v0, 8",
            20,
        ),
        // A vector of lane addresses bumped by the stride every iteration, and y's
        // addresses made from it: f64 through vector bases.
        (
            "V.SHL v0, v0, 3
             V.ADD v0, v0, s1",
            "V.LDI.U [v0 + 0], ->v2
             S.SUB s11, s2, s1
             V.ADD v4, v0, s11
             V.LDI.U [v4 + 0], ->v3
             V.FMA.D v3, v2, s3
             V.SDI.U v3, [v4 + 0]
             V.ADD v0, v0, s6",
            "V.XOR v0, v0, 8
             V.SUB v0, v0, s8",
            3,
        ),
        // Word indices stepped by VL (`V.SUB` of its negation), past the mapped x at VL 64.
        (
            "S.SUB s12, s0, s5",
            "V.LW [s1 + (v0 << 2)], ->v4
             V.SW v4, [s2 + (v0 << 2)]
             V.SUB v0, v0, s12",
            "V.XOR v0, v0, 1",
            20,
        ),
        // Word indices used, then loaded (a permutation from a table) or made three apart:
        // stepped by one at entry, not after the first iteration, where the register is no
        // longer the entry's.
        (
            "V.LANEID v6
             S.LI s15, 0x21000",
            "V.LW [s1 + (v0 << 2)], ->v4
             V.SW v4, [s2 + (v0 << 2)]
             V.LWU [s15 + (v6 << 2)], ->v0",
            "V.XOR v0, v0, 1",
            4,
        ),
        (
            "V.LANEID v6",
            "V.LW [s1 + (v0 << 2)], ->v4
             V.ADD v4, v4, v0
             V.SW v4, [s2 + (v0 << 2)]
             V.MUL v0, v6, 3",
            "V.XOR v0, v0, 1",
            4,
        ),
        // The same, the step made under a mask of every other lane: after the first
        // iteration the indices no longer step by one, though the mask is whole again where
        // they are used.
        (
            "S.SUB s12, s0, s5
             S.LI s13, 0x5555555555555555
             S.MASK s14",
            "V.LW [s1 + (v0 << 2)], ->v4
             V.SW v4, [s2 + (v0 << 2)]
             V.SETMASK s13
             V.SUB v0, v0, s12
             V.SETMASK s14",
            "V.XOR v0, v0, 1",
            8,
        ),
    ] {
        let src = format!(
            "
            .mem 0x10000, 0x2000, rw
            .mem 0x20000, 0x1000, rw
            .mem 0x21000, 0x1000, r
            .data 0x10000
            {x}
            .data 0x21000
            {perm}
            .text
            S.LI s1, 0x10000
            S.LI s2, 0x20000
            S.LI s3, f64(1.25)
            S.VL s5
            S.SHL s6, s5, 3
            V.LANEID v0
            {prep}
            S.MOV s20, s0
        round:
            S.LI s9, 3
            S.LI s10, 0x10000
            S.MOV s7, s0
            S.MOV s8, s0
            J top
        top:
            {body}
            S.ADD s8, s8, s6
            S.ADD s9, s9, s5
            S.ADD s10, s10, s6
            S.ADD s7, s7, 1
            BLT s7, {iters}, top
            {brk}
            S.ADD s20, s20, 1
            BLT s20, 2, round
            HALT
            "
        );
        check_compiled_every_vl_with_budgets(&asm(&src), 7);
    }
    // A hardware loop bumping its lane addresses, whose last iteration (45 words: a masked
    // tail at VL 8 and above) bumps only the active lanes: the same loop again then starts
    // from addresses that no longer step by one word, which its entry test must see.
    let src = format!(
        "
        .mem 0x10000, 0x2000, rw
        .mem 0x20000, 0x2000, rw
        .data 0x10000
        {x}
        .text
        S.LI s1, 0x10000
        S.LI s2, 0x20000
        S.SUB s11, s2, s1
        S.VL s12
        S.SHL s12, s12, 2
        V.LANEID v0
        V.SHL v0, v0, 2
        V.ADD v0, v0, s1
        S.MOV s20, s0
    again:
        S.LI s3, 45
        J go
    go:
        LOOP s3
        V.LWI.U [v0 + 0], ->v4
        V.ADD v4, v4, 7
        V.ADD v5, v0, s11
        V.SWI.U v4, [v5 + 0]
        V.ADD v0, v0, s12
        ENDLOOP
        S.ADD s20, s20, 1
        BLT s20, 2, again
        HALT
        "
    );
    check_compiled_every_vl_with_budgets(&asm(&src), 5);
}

/// A nest of rows of `trip` points (`LOOP s3`, s3 set once: every row the same trip count)
/// over a source grid at 0x10000 (`src_mem`: its `.mem` lines) into 0x20000 (`dst_mem`),
/// the row pointers stepped by `steps` and the outer loop closed by `close` (the counter's
/// update and the branch back to `row:`), with s4 starting at `count` and s9 = `limit`.
fn counted_nest(
    trip: u32,
    (src, src_mem): (u64, &str),
    dst_mem: &str,
    steps: &str,
    (count, limit, close): (i64, i64, &str),
) -> String {
    // As much data as fits in the first page run of the source.
    let grid = nest_grid(if src_mem.contains("0x3000") { 47 } else { 15 });
    format!(
        "
        {src_mem}
        {dst_mem}
        .data 0x10000
        {grid}
        .text
        S.LI s1, {src:#x}
        S.LI s2, 0x20000
        S.LI s3, {trip}
        S.LI s4, {count}
        S.LI s9, {limit}
        S.LI s10, 0x3f000000
    row:
        LOOP s3
        V.LW [s1, lc0<<2, 0], ->v1
        V.LW [s1, lc0<<2, 4], ->v2
        V.FMUL.S v3, v1, s10
        V.FMA.S v3, v2, s10
        V.SW v3, [s2, lc0<<2, 0]
        ENDLOOP
        {steps}
        {close}
        HALT
        "
    )
}

#[test]
fn counted_nests_prove_their_rows_spans_once_and_fault_precisely() {
    // Nests whose outer loop counts its rows and whose rows all have one trip count, the
    // shape whose span checks one proof at the first row stands for (`Tx::nest_spans_ok`):
    // every row mapped (downward rows too, counting up by 2 with BLT); and every way the
    // proof must fail and leave each row its own check: a middle or last row past the
    // mapping (above it, or below it going down), a read-only page under a middle row's
    // stores, a hole between rows that are all mapped (no fault), a row misaligned under
    // `--strict-align` only, and counters whose rows left are beyond any bound (BNE from 0,
    // BLTU to 2^64 - 1), which run until memory ends.
    let src_rw = ".mem 0x10000, 0x3000, rw";
    let dst_rw = ".mem 0x20000, 0x3000, rw";
    let hole = ".mem 0x10000, 0x1000, rw\n .mem 0x12000, 0x1000, rw";
    let dst_ro = ".mem 0x20000, 0x800, rw\n .mem 0x20800, 0x2800, r";
    let step = |s: i64, d: i64| {
        let op = |r: &str, x: i64| {
            if x < 0 {
                format!("S.SUB {r}, {r}, {}", -x)
            } else {
                format!("S.ADD {r}, {r}, {x}")
            }
        };
        format!("{}\n {}", op("s1", s), op("s2", d))
    };
    let down = "S.SUB s4, s4, 1\n BNE s4, 0, row";
    let up2 = "S.ADD s4, s4, 2\n BLT s4, s9, row";
    let upu = "S.ADD s4, s4, 2\n BLTU s4, s9, row";
    let cases: Vec<(String, Option<TrapKind>)> = vec![
        // All rows mapped.
        (
            counted_nest(
                40,
                (0x10000, src_rw),
                dst_rw,
                &step(0x100, 0x100),
                (8, 0, down),
            ),
            None,
        ),
        (
            counted_nest(
                37,
                (0x10000, src_rw),
                dst_rw,
                &step(0x180, 0x100),
                (0, 15, up2),
            ),
            None,
        ),
        (
            counted_nest(
                33,
                (0x12e00, src_rw),
                dst_rw,
                &step(-0x400, 0x100),
                (12, 0, down),
            ),
            None,
        ),
        // A middle row past the mapping's end; the last row below its start.
        (
            counted_nest(
                40,
                (0x10000, src_rw),
                dst_rw,
                &step(0x800, 0x100),
                (8, 0, down),
            ),
            Some(TrapKind::PageFault),
        ),
        (
            counted_nest(
                33,
                (0x12e00, src_rw),
                dst_rw,
                &step(-0x400, 0x100),
                (13, 0, down),
            ),
            Some(TrapKind::PageFault),
        ),
        // A middle row's stores on a read-only page.
        (
            counted_nest(
                40,
                (0x10000, src_rw),
                dst_ro,
                &step(0x100, 0x100),
                (12, 0, down),
            ),
            Some(TrapKind::PermissionFault),
        ),
        // Rows on both sides of a hole, all mapped.
        (
            counted_nest(
                40,
                (0x10000, hole),
                dst_rw,
                &step(0x2000, 0x100),
                (2, 0, down),
            ),
            None,
        ),
        // Rows left beyond any bound: they run until the source ends.
        (
            counted_nest(
                40,
                (0x10000, src_rw),
                dst_rw,
                &step(0x100, 0x40),
                (0, 0, down),
            ),
            Some(TrapKind::PageFault),
        ),
        (
            counted_nest(
                40,
                (0x10000, src_rw),
                dst_rw,
                &step(0x100, 0x40),
                (0, -1, upu),
            ),
            Some(TrapKind::PageFault),
        ),
    ];
    for (src, fault) in &cases {
        check_trap_every_vl(&asm(src), *fault, src);
    }
    // A row misaligned under `--strict-align` (destination rows 0x102 bytes apart): the
    // second row's store faults there, nowhere without it.
    let p = asm(&counted_nest(
        40,
        (0x10000, src_rw),
        dst_rw,
        &step(0x100, 0x102),
        (8, 0, down),
    ));
    for vl in VLS {
        let (r, _) = check(&p, vl, true, None);
        assert_eq!(trap_kind(&r.exit()), Some(TrapKind::Misaligned), "vl {vl}");
        let (r, _) = check(&p, vl, false, None);
        assert_eq!(trap_kind(&r.exit()), None, "vl {vl}");
    }
    check_budgets(&asm(&cases[0].0), 7);
    check_budgets(&asm(&cases[3].0), 7);
}

#[test]
fn counted_nests_over_tile_space_fault_in_the_row_that_leaves_it() {
    // The proof of a counted nest's rows (`Tx::nest_spans_ok`) over tile space: rows of
    // `.local` loads stepping through the tile, all inside it; a middle row reaching a
    // `none` granule; the last row past the tile's end.
    let grid = nest_grid(15);
    let prog = |protect: &str, rows: u32, stride: u32| {
        format!(
            "
            .tilesize 0x1000
            {protect}
            .mem 0x10000, 0x2000, rw
            .data 0x10000
            {grid}
            .text
            S.LI s1, 0x10000
            S.LI s3, 512
            LOOP s3
            V.LW [s1, lc0<<2, 0], ->v1
            V.SW.local v1, [s0, lc0<<2, 0]
            ENDLOOP
            S.LI s3, 30
            S.LI s4, {rows}
            S.MOV s5, s0
            S.LI s2, 0x11000
        row:
            LOOP s3
            V.LW.local [s5, lc0<<2, 0], ->v1
            V.LW.local [s5, lc0<<2, 4], ->v2
            V.FADD.S v1, v1, v2
            V.SW v1, [s2, lc0<<2, 0]
            ENDLOOP
            S.ADD s5, s5, {stride}
            S.ADD s2, s2, 0x80
            S.SUB s4, s4, 1
            BNE s4, 0, row
            HALT
            "
        )
    };
    for (src, fault) in [
        (prog("", 8, 0x100), None),
        (
            prog(".tileprotect 0x800, 0x40, none", 10, 0x100),
            Some(TrapKind::TileUnauthorized),
        ),
        (prog("", 9, 0x200), Some(TrapKind::TileOutOfBounds)),
    ] {
        check_trap_every_vl(&asm(&src), fault, &src);
    }
}

#[test]
fn rows_shorter_than_vl_carry_their_lanes_from_tail_to_tail() {
    // A nest whose rows vary in length (9, 61, 33, 53, 57, 45, 17, 37, ... points: at VL 64
    // every row is one masked tail, at smaller VLs some rows end in tails longer or shorter
    // than the one before), each row's last iteration leaving lanes of iteration-local
    // registers of every packed width (32-bit loads the tail reads in place, an 8-bit and a
    // 16-bit load, an f32 result, a 16-bit store's source) and a vector address built in the
    // body. A tail that follows a tail moves the earlier one's lanes (`Tx::plocal_fold`) or
    // overrides its address record; the final state shows every lane either left. Also under
    // instruction limits, whose exits widen the lanes mid-nest.
    let x = f32_words(1200, 11);
    let bytes = words(1024, |i| i.wrapping_mul(0x9e37_79b9) ^ 0x8080_8080);
    let src = format!(
        "
        .mem 0x10000, 0x5000, rw
        .mem 0x20000, 0x3000, rw
        .data 0x10000
        {x}
        .data 0x13000
        {bytes}
        .text
        S.LI s1, 0x10000
        S.LI s2, 0x20000
        S.LI s5, 0x13000
        S.LI s6, 0x13800
        S.LI s9, 0x21800
        S.LI s3, 9
        S.LI s7, 12
        S.LI s10, 0x3f000000
        S.LI s11, 0x3e000000
row:    LOOP s3
        V.LW [s1, lc0<<2, 0], ->v1
        V.LW [s1, lc0<<2, 4], ->v2
        V.LB [s5, lc0<<0, 0], ->v3
        V.LHU [s6, lc0<<1, 0], ->v4
        V.LC0 v7
        V.SHL v7, v7, 2
        V.ADD v7, v7, s1
        V.LWI.U [v7 + 8], ->v5
        V.FMUL.S v6, v1, s10
        V.FMA.S v6, v2, s11
        V.FMA.S v6, v5, s11
        V.SW v6, [s2, lc0<<2, 0]
        V.ADD v8, v4, 3
        V.SH v8, [s9, lc0<<1, 0]
        ENDLOOP
        S.ADD s1, s1, 0x104
        S.ADD s2, s2, 0x100
        S.ADD s5, s5, 0x40
        S.ADD s6, s6, 0x80
        S.ADD s9, s9, 0x80
        S.MUL s3, s3, 13
        S.ADD s3, s3, 7
        S.AND s3, s3, 63
        S.ADD s3, s3, 1
        S.SUB s7, s7, 1
        BNE s7, 0, row
        HALT
        "
    );
    let p = asm(&src);
    check_compiled_every_vl_with_budgets(&p, 97);
    for vl in VLS {
        check(&p, vl, true, None);
    }
}

#[test]
fn narrow_loads_at_small_vls_pack_extended_to_one_chunk() {
    // At VL 8 (bytes) and VL 4 (bytes and halfwords) a group's elements fill less than one
    // 16-byte chunk: such loads stay packed extended to lanes that fill one
    // (`Tx::pack_wider`). Their registers are read by an accumulator's narrow sums, narrow
    // multiplies (of bytes packed as halfwords on 16-bit lanes: `Tx::byte_lanes`, signed and
    // unsigned, into accumulators; of halfwords, and of a register loaded as bytes and then
    // as halfwords, on 32-bit lanes), stores of their own and of other widths, a compare, a
    // float add and a gather index, and written back at every exit: under instruction
    // limits, and by a halfword load that faults in the middle of the loop (the second
    // program).
    let bytes = words(1024, |i| i.wrapping_mul(0x9e37_79b9) ^ 0x8080_8080);
    let prog = |s2: u32| {
        format!(
            "
            .mem 0x10000, 0x2000, rw
            .mem 0x20000, 0x2000, rw
            .data 0x10000
            {bytes}
            .text
            S.LI s1, 0x10000
            S.LI s2, {s2:#x}
            S.LI s4, 0x20000
            S.LI s5, 0x21400
            S.LI s3, 700
            V.MOV v10, 0
            V.MOV v11, 0
            LOOP s3
            V.LB [s1, lc0, 0], ->v1
            V.LBU [s2, lc0, 0], ->v2
            V.LH [s1, lc0<<1, 0], ->v3
            V.LHU [s2, lc0<<1, 0], ->v4
            V.ADD v10, v10, v1
            V.MUL v5, v1, v2
            V.ADD v11, v11, v5
            V.MUL v6, v3, v4
            V.SH v1, [s4, lc0<<1, 0]
            V.SB v4, [s5, lc0, 0]
            V.SW v6, [s4, lc0<<2, 0x800]
            V.SUB v7, v3, v4
            V.SRA v7, v7, 63
            V.FADD.S v8, v3, v2
            V.LW [s1 + (v2 << 2)], ->v9
            V.ADD v12, v12, v9
            V.SB v2, [s5, lc0, 0x300]
            V.MUL v13, v1, v1
            V.ADD v14, v14, v13
            V.LBU [s2, lc0, 0x100], ->v15
            V.MUL v15, v15, v2
            V.ADD v16, v16, v15
            V.MUL v17, v3, v3
            V.LB [s1, lc0, 0x200], ->v18
            V.LH [s2, lc0<<1, 0x200], ->v18
            V.MUL v18, v18, v18
            V.ADD v19, v19, v18
            ENDLOOP
            V.REDSUM s20, v10
            V.REDSUM s21, v11
            V.REDSUM s22, v12
            V.REDSUM s23, v14
            V.REDSUM s24, v16
            V.REDSUM s25, v17
            V.REDSUM s26, v19
            HALT
            "
        )
    };
    let p = asm(&prog(0x10800));
    check_compiled_every_vl_with_budgets(&p, 61);
    check_budgets_at(&p, &[8], 37);
    // Halfwords from 0x11c00 reach past the mapping at element 512.
    let faulting = prog(0x11c00);
    check_trap_every_vl(&asm(&faulting), Some(TrapKind::PageFault), &faulting);
}

#[test]
fn accesses_through_stepped_vector_bases_are_hoisted_when_their_lanes_allow() {
    // A vector of lane addresses built before the loop and bumped by a scalar each iteration
    // (`V.ADD v9, v9, s5`, as a compiler steps a pointer), read with immediate offsets, and a
    // lane index bumped by VL read as a register offset: hoisted like a vector address built
    // from `V.LC0` when the lanes are one element apart and the step is VL elements
    // (`analysis::stepped_bases`), tested at every loop entry. The variants: the speculation
    // holds; the step is two groups (never speculated); lanes not one element apart from the
    // start, or only on the third entry (the loop leaves for the straight form there, and is
    // compiled again without the speculation after a few such entries); the step subtracted
    // as a negative scalar; an immediate step (VL * 4 only at VL 32); a step doubled on the
    // third entry; lanes 16 bytes apart (strided loads); and reads running past the mapped
    // bytes in the middle of the loop (a precise trap).
    let x = f32_words(2100, 29);
    let prog = |step: &str, bump: &str, post: &str, n: u32| {
        format!(
            "
            .mem 0x10000, 0x4000, rw
            .mem 0x20000, 0x8000, rw
            .data 0x10000
            {x}
            .text
            S.LI s1, 0x10000
            S.LI s2, 0x20000
            S.LI s6, 3
            S.LI s10, 0x3e000000
            S.LI s11, 0x3f000000
            S.LI s14, 2
    top:    V.LANEID v9
            V.LANEID v7
            S.SHR s13, s14, s6
            V.MUL v6, v7, v7
            V.MUL v6, v6, s13
            {step}
            V.SHL v9, v9, 2
            V.ADD v9, v9, s1
            S.VL s16
            S.SHL s5, s16, 2
            S.SUB s15, s0, s5
            {post}
            S.LI s3, {n}
            LOOP s3
            V.LWI.U [v9 + 0], ->v0
            V.LWI.U [v9 + 4], ->v1
            V.FMUL.S v8, v0, s10
            V.FMUL.S v1, v1, s11
            V.FADD.S v8, v8, v1
            V.LW [s1 + (v7 << 2)], ->v2
            V.FADD.S v8, v8, v2
            V.SW v8, [s2, lc0<<2, 0]
            {bump}
            V.ADD v7, v7, s16
            ENDLOOP
            S.ADD s1, s1, 4
            S.ADD s2, s2, 0x40
            S.SUB s6, s6, 1
            BNE s6, 0, top
            HALT
            "
        )
    };
    let cases = [
        ("", "V.ADD v9, v9, s5", ""),
        ("", "V.ADD v9, v9, s5\n V.ADD v9, v9, s5", ""),
        ("V.ADD v9, v9, v7", "V.ADD v9, v9, s5", ""),
        ("V.ADD v9, v9, v6", "V.ADD v9, v9, s5", ""),
        ("", "V.SUB v9, v9, s15", ""),
        ("", "V.ADD v9, v9, 128", ""),
        // The step doubled on the third entry.
        ("", "V.ADD v9, v9, s5", "S.SHL s5, s5, s13"),
        // Lanes 16 bytes apart (fields of 16-byte records: strided loads).
        ("V.SHL v9, v9, 2", "V.ADD v9, v9, s5", "S.SHL s5, s5, 2"),
    ];
    for (step, bump, post) in cases {
        let p = asm(&prog(step, bump, post, 300));
        for vl in VLS {
            check(&p, vl, false, None);
        }
        check_budgets_at(&p, &[8, 32], 97);
    }
    // Lanes from 0x10000 + 4 i read up to 0x10000 + 4 (n + 1): past 0x14000 from n = 4095.
    let faulting = prog("", "V.ADD v9, v9, s5", "", 4200);
    check_trap_every_vl(&asm(&faulting), Some(TrapKind::PageFault), &faulting);
    // A nest: a 5-point stencil whose rows build the vector of lane addresses and step it,
    // tested at every row's entry. Rows whose lanes are not 4 bytes apart (every third: the
    // lane index squared added), whose step is doubled (every fifth row), and a grid whose
    // last row reads past the mapped bytes.
    let nest = |rows: u32| {
        format!(
            "
            .mem 0x10000, 0x4000, rw
            .mem 0x20000, 0x4000, rw
            .data 0x10000
            {x}
            .text
            S.LI s1, 0x10084
            S.LI s2, 0x20084
            S.LI s4, {rows}
            S.LI s10, 0x3f000000
            S.LI s11, 0x3e000000
            S.LI s12, 0
    row:    V.LANEID v9
            V.LANEID v7
            S.ADD s12, s12, 1
            S.LI s15, 0x9249249249249249
            S.SHR s13, s15, s12
            S.AND s13, s13, 1
            V.MUL v7, v7, v7
            V.MUL v7, v7, s13
            V.SHL v9, v9, 2
            V.ADD v9, v9, s1
            V.ADD v9, v9, v7
            S.VL s5
            S.SHL s5, s5, 2
            S.LI s15, 0x1084210842108421
            S.SHR s14, s15, s12
            S.AND s14, s14, 1
            S.SHL s5, s5, s14
            S.LI s3, 30
            LOOP s3
            V.LWI.U [v9 + 0], ->v0
            V.LWI.U [v9 - 4], ->v1
            V.LWI.U [v9 + 4], ->v2
            V.LWI.U [v9 - 128], ->v3
            V.LWI.U [v9 + 128], ->v4
            V.FADD.S v1, v1, v2
            V.FADD.S v3, v3, v4
            V.FADD.S v1, v1, v3
            V.FMUL.S v1, v1, s11
            V.FMA.S v1, v0, s10
            V.SW v1, [s2, lc0<<2, 0]
            V.ADD v9, v9, s5
            ENDLOOP
            S.ADD s1, s1, 128
            S.ADD s2, s2, 128
            S.SUB s4, s4, 1
            BNE s4, 0, row
            HALT
            "
        )
    };
    let p = asm(&nest(30));
    for vl in VLS {
        check(&p, vl, false, None);
    }
    check_budgets_at(&p, &[8, 32], 131);
    let faulting = nest(128);
    check_trap_every_vl(&asm(&faulting), Some(TrapKind::PageFault), &faulting);
}

#[test]
fn large_loops_at_vl_64_in_the_baseline_register_form_agree() {
    // An 8-tap filter over rows of several lengths (a tail of each length, rows shorter
    // than VL, and a whole group), with a sum of every row's outputs carried across the
    // rows: at VL 64 its loop's register form is over the optimising settings' bound and
    // within the baseline settings' (`plan::REGISTERS_BASELINE_IR`), so it compiles with
    // those. Every engine agrees, also under instruction limits.
    let x = f32_words(1400, 21);
    let src = format!(
        "
        .mem 0x10000, 0x3000, rw
        .mem 0x20000, 0x3000, rw
        .data 0x10000
        {x}
        .text
        S.LI s1, 0x10000
        S.LI s2, 0x20000
        S.LI s3, 200
        S.LI s4, 5
        S.LI s10, 0x3d000000
        S.LI s11, 0xbd800000
        S.LI s12, 0x3e000000
        S.LI s13, 0x3ed00000
        S.LI s14, 0x3ed00000
        S.LI s15, 0x3e000000
        S.LI s16, 0xbd800000
        S.LI s17, 0x3d000000
row:    LOOP s3
        V.LW [s1, lc0<<2, 0], ->v0
        V.FMUL.S v8, v0, s10
        V.LW [s1, lc0<<2, 4], ->v1
        V.FMA.S v8, v1, s11
        V.LW [s1, lc0<<2, 8], ->v2
        V.FMA.S v8, v2, s12
        V.LW [s1, lc0<<2, 12], ->v3
        V.FMA.S v8, v3, s13
        V.LW [s1, lc0<<2, 16], ->v4
        V.FMA.S v8, v4, s14
        V.LW [s1, lc0<<2, 20], ->v5
        V.FMA.S v8, v5, s15
        V.LW [s1, lc0<<2, 24], ->v6
        V.FMA.S v8, v6, s16
        V.LW [s1, lc0<<2, 28], ->v7
        V.FMA.S v8, v7, s17
        V.FADD.S v9, v9, v8
        V.SW v8, [s2, lc0<<2, 0]
        ENDLOOP
        S.ADD s1, s1, 0x400
        S.ADD s2, s2, 0x400
        S.SUB s3, s3, 47
        S.SUB s4, s4, 1
        BNE s4, 0, row
        V.REDSUM s20, v9
        HALT
        "
    );
    let p = asm(&src);
    for strict in [false, true] {
        let (_, st) = check(&p, 64, strict, None);
        assert!(st.jit_retired > 0, "compiled code ran");
    }
    check_budgets_at(&p, &[64], 131);
}

#[test]
fn a_register_added_to_and_gathered_through_keeps_no_narrow_sums() {
    // `V.ADD v10, v10, v9` with v9 loaded as bytes looks like a narrow accumulator's add
    // (`Tx::acc_plan`), but v10 is also the index and the destination of a gather in the
    // body. The streaming copy kept v10's sums narrow anyway, and the gather's packed
    // bytes went round its back edge where the narrow sums were expected: at VL 16 the
    // second iteration gathered through garbage and raised a page fault the interpreter
    // does not (fuzz seed 39600, case 150387). Bytes of every sign around the gathers'
    // base, so that each index (a gathered byte plus a loaded one) stays inside the table.
    // (A store of v10 in the body hid the bug: nothing but the add and the gather may touch
    // the register.)
    let table = words(1024, |i| {
        let b = |k: u32| (i.wrapping_mul(2_654_435_761).rotate_left(k) & 0xff) << k;
        b(0) | b(8) | b(16) | b(24)
    });
    for (add, gather) in [
        ("V.ADD v10, v10, v9", "V.LB [s20 + v10], ->v10"),
        ("V.ADD v10, v10, v9", "V.LBU [s20 + v10], ->v10"),
        ("V.ADD v10, v9, v10", "V.LB [s20 + v10], ->v10"),
        (
            "V.ADD v10, v10, v9",
            "V.LB [s20 + v10], ->v11\nV.MOV v10, v11",
        ),
    ] {
        let src = format!(
            "
            .mem 0x10000, 0x1000, rw
            .data 0x10000
            {table}
            .text
            S.LI s20, 0x10800
            S.LI s19, 82
            LOOP s19
            V.LB [s20, lc0, 0], ->v9
            {add}
            {gather}
            ENDLOOP
            V.REDSUM s9, v10
            HALT
            "
        );
        check_all_vls(&src);
        check_budgets(&asm(&src), 5);
    }
}

/// Every engine agrees on `p` at every VL, with and without `--strict-align`, compiled code
/// runs, and the run ends with `trap` (a misaligned trap only under `--strict-align`; `what`
/// names the case in failures).
fn check_vls_trapping(p: &Program, trap: Option<TrapKind>, what: &str) {
    for vl in VLS {
        for strict in [false, true] {
            let (r, st) = check(p, vl, strict, None);
            assert!(st.jit_retired > 0, "compiled code ran (vl {vl}): {what}");
            let want = trap.filter(|&k| strict || k != TrapKind::Misaligned);
            assert_eq!(
                trap_kind(&r.exit()),
                want,
                "vl {vl} strict {strict}: {what}"
            );
        }
    }
}

/// The FIR-like body of [`uniform_loads_in_a_loop_body_agree`]: taps and two other elements
/// loaded through `s4` in every iteration (uniform loads, checked once per loop entry by the
/// span check), a product of neighbours stored through `s2`, and two integer sums of the
/// uniform registers.
const UNIFORM_BODY: &str = "
            LOOP s3
            V.LWI [s4 + (0 << 2)], ->v10
            V.LWI [s4 + (1 << 2)], ->v11
            V.LHI [s4 + (6 << 1)], ->v12
            V.LDI [s4 + (2 << 3)], ->v13
            V.LW [s1, lc0<<2, 0], ->v0
            V.LW [s1, lc0<<2, 4], ->v1
            V.FMUL.S v8, v0, v10
            V.FMA.S v8, v1, v11
            V.SW v8, [s2, lc0<<2, 0]
            V.ADD v14, v14, v12
            V.XOR v15, v15, v13
            ENDLOOP";

/// A body short enough to stream two iterations per round (`STREAM_PAIR_MAX_BODY`): the
/// second iteration's load of the tap may not be the first's when a store between wrote it.
const UNIFORM_SHORT_BODY: &str = "
            LOOP s3
            V.LWI [s4 + (1 << 2)], ->v10
            V.LW [s1, lc0<<2, 0], ->v0
            V.FMUL.S v8, v0, v10
            V.SW v8, [s2, lc0<<2, 0]
            ENDLOOP";

#[test]
fn uniform_loads_in_a_loop_body_agree() {
    // A filter whose taps a compiler loads inside the loop (`V.LWI [s4 + (k << 2)]`): the
    // loop's span check covers those elements once, so the body streams. With the taps
    // mapped (a masked tail at most VLs); with the stores writing the taps in a middle
    // iteration (the later iterations read the new values: the loads may not move past the
    // stores then); with the taps unmapped (a page fault in the first iteration); with
    // them misaligned (a trap only under `--strict-align`); and in a nest whose rows step
    // `s4`, where the last (sixth) row's elements cross the end of their mapping. A body short
    // enough to stream two iterations per round writes its tap too.
    let data = "
            .mem 0x10000, 0x1000, rw
            .mem 0x20000, 0x2000, rw
            .data 0x10000
            .word 0x3e000000, 0xbf400000, 0x7fc00001
            .half 0xfff3, 7
            .dword 0x123456789abcdef0
            .data 0x10100
            .word 0x3f800000, 0x40000000, 0xc0400000, 0x7f800000, 0x3fc00000
            .fill 600, 4, 0x41200000
            .text
            S.LI s1, 0x10100
            S.LI s3, 300";
    for (body, h, trap) in [
        (UNIFORM_BODY, 0x10000, None),
        (UNIFORM_BODY, 0x20000 + 4 * 200, None),
        (UNIFORM_SHORT_BODY, 0x20000 + 4 * 200, None),
        (UNIFORM_BODY, 0x30000, Some(TrapKind::PageFault)),
        (UNIFORM_BODY, 0x10002, Some(TrapKind::Misaligned)),
    ] {
        let src = format!("{data}\n S.LI s2, 0x20000\n S.LI s4, {h}\n {body}\n HALT");
        let p = asm(&src);
        check_vls_trapping(&p, trap, &format!("h {h:#x}"));
        if trap.is_none() {
            check_budgets(&p, 13);
        }
    }
    let nest = format!(
        "
            .mem 0x10000, 0x1000, rw
            .mem 0x20000, 0x2000, rw
            .mem 0x40000, 0x1000, rw
            .data 0x40fd8
            .word 0x3e000000, 0xbf400000, 0x40000000, 0x3f000000, 0xc0000000, 0xfff3fff3
            .word 0x9abcdef0, 0x12345678
            .data 0x10100
            .word 0x3f800000, 0x40000000, 0xc0400000, 0x7f800000, 0x3fc00000
            .fill 600, 4, 0x41200000
            .text
            S.LI s1, 0x10100
            S.LI s2, 0x20000
            S.LI s4, 0x40fd8
            S.LI s9, 6
            S.LI s3, 70
        row:
            {UNIFORM_BODY}
            S.ADD s4, s4, 4
            S.ADD s2, s2, 12
            S.SUB s9, s9, 1
            BNE s9, 0, row
            HALT
            "
    );
    let p = asm(&nest);
    for vl in VLS {
        let (r, _) = check(&p, vl, false, None);
        assert_eq!(trap_kind(&r.exit()), Some(TrapKind::PageFault), "vl {vl}");
    }
    check_budgets(&p, 17);
}

/// A branch loop of `body` over `n` words from 0x10000 (x) and 0x20000 (y) in groups of VL
/// (`S.VL`), bases in `s1`/`s2` bumped by `VL * 4`, lane offsets in `v20`, the elements left
/// in `s3`, `a` in `s11`, 10.0 in `s13`: the loops a compiler strip-mines by hand. x holds
/// special values in its first six words, 1.0 in word 306, 10.0 in the others of its page.
fn trace_loop(n: u64, body: &str) -> String {
    format!(
        "
        .mem 0x10000, 0x2000, rw
        .mem 0x20000, 0x2000, rw
        .data 0x10000
        .word 0x3f800000, 0x40000000, 0xc0400000, 0x7f800000, 0x3fc00000, 0x7fc00001
        .fill 300, 4, 0x41200000
        .word 0x3f800000
        .fill 717, 4, 0x41200000
        .data 0x20000
        .word 0x3f000000, 0xff800000, 0x80000000
        .fill 700, 4, 0x3e800000
        .text
        S.LI s1, 0x10000
        S.LI s2, 0x20000
        S.LI s3, {n}
        S.VL s9
        S.SHL s10, s9, 2
        S.LI s13, 0x41200000
        S.LI s11, 0x40400000
        V.LANEID v20
        {body}
        HALT
        "
    )
}

#[test]
fn loops_over_bumped_scalar_pointers_agree() {
    // Loops a compiler strength-reduced: scalar pointers bumped by VL * E per iteration
    // (`S.ADD s1, s1, s10`), lane offsets built before the loop (v20, lanes 1 apart), the
    // accesses contiguous once the JIT speculates on both (`analysis::StepKind::Scalar` and
    // `Fixed`); and loops that compute their addresses from a counter or `S.LC0`. saxpy with the bumps last; byte offsets, a vector base made from a pointer
    // after its bump and a `S.SUB` of a negative step, each iteration storing what the next
    // loads; a bump by an immediate over halfwords (contiguous at VL 32 only); nests whose
    // later rows double the step or the lanes' distance (the speculation fails there); a
    // page fault in a middle iteration; a misaligned pointer (the store traps, only under
    // `--strict-align`).
    let saxpy = "
        LOOP s3
        V.LW [s1 + (v20 << 2)], ->v0
        V.LW [s2 + (v20 << 2)], ->v1
        V.FMA.S v1, v0, s11
        V.SW v1, [s2 + (v20 << 2)]
        S.ADD s1, s1, s10
        S.ADD s2, s2, s10
        ENDLOOP";
    let chain = "
        V.SHL v21, v20, 2
        S.SUB s12, s0, s10
        LOOP s3
        V.LW [s1 + v21], ->v0
        S.SUB s1, s1, s12
        V.ADD v5, v21, s2
        V.LWI.U [v5 + 0], ->v1
        V.FADD.S v1, v1, v0
        V.SWI.U v1, [v5 + 0]
        S.SUB s2, s2, s12
        V.LW [s1 + v21], ->v2
        V.FMUL.S v3, v2, s13
        V.SW.U v3, [s2 + v21]
        ENDLOOP";
    let halves = "
        LOOP s3
        V.LH [s1 + (v20 << 1)], ->v0
        V.ADD v0, v0, 3
        V.SH v0, [s2 + (v20 << 1)]
        S.ADD s1, s1, 64
        S.ADD s2, s2, 64
        ENDLOOP";
    // An element counter stepped by VL, the addresses computed from it in the body (no
    // strength reduction); and from `S.LC0`, with a load through the previous iteration's
    // address (a scalar carried round the back edge, whose form is unknown) first.
    let index = "
        S.LI s5, 0
        LOOP s3
        S.SHL s6, s5, 2
        S.ADD s7, s1, s6
        S.ADD s8, s2, s6
        S.ADD s8, s8, 8
        V.LW [s7 + (v20 << 2)], ->v0
        V.LW [s8 + (v20 << 2)], ->v1
        V.FMA.S v1, v0, s11
        V.SW v1, [s8 + (v20 << 2)]
        S.ADD s5, s5, s9
        ENDLOOP";
    let from_lc0 = "
        V.SHL v21, v20, 2
        S.MOV s7, s1
        LOOP s3
        V.LW [s7 + v21], ->v2
        S.LC0 s5
        S.MUL s6, s5, 4
        S.ADD s7, s1, s6
        S.ADD s8, s2, s6
        V.LW [s7 + v21], ->v0
        V.FADD.S v0, v0, v2
        V.SW.U v0, [s8 + v21]
        ENDLOOP";
    // Six rows of saxpy; `change` runs after the second.
    let nest = |change: &str| {
        format!(
            "
        S.LI s3, 150
        S.LI s5, 6
    row:
        {saxpy}
        S.SUB s5, s5, 1
        BNE s5, 4, keep
        {change}
    keep:
        BNE s5, 0, row"
        )
    };
    // The step doubled; the lanes' distance doubled; lanes 8 and up wrapping to 0..7 (the
    // first 8 lanes, a strip-mined copy's, still stepping).
    let (step, lanes) = (nest("S.SHL s10, s10, 1"), nest("V.SHL v20, v20, 1"));
    let wrap = nest("V.AND v20, v20, 7");
    let cases = [
        (300, "", saxpy, None),
        (300, "", chain, None),
        (300, "", index, None),
        (300, "", from_lc0, None),
        (100, "", halves, None),
        (0, "", &step, None),
        (0, "", &lanes, None),
        (0, "", &wrap, None),
        (700, "S.LI s1, 0x11800", saxpy, Some(TrapKind::PageFault)),
        (300, "S.LI s2, 0x20002", saxpy, Some(TrapKind::Misaligned)),
    ];
    for (n, before, body, trap) in cases {
        let p = asm(&trace_loop(n, &format!("{before}\n{body}")));
        check_vls_trapping(&p, trap, body);
        if trap.is_none() {
            check_budgets(&p, 11);
        }
    }
}

#[test]
fn branch_loops_with_tests_at_the_top_ifs_and_early_exits_agree() {
    // Loops whose back edge or body passes through another branch, compiled as one trace
    // (`region::trace`) whose other edges leave the region: the test at the top (`while`),
    // an `if` setting a partial mask for the last group, an early exit (a search), and
    // three side exits of which two have constant operands (always taken, and never).
    // Every VL, budgets, and a page fault in a middle group.
    let step = "
        V.LW [s1 + (v20 << 2)], ->v0
        V.LW [s2 + (v20 << 2)], ->v1
        V.FMA.S v1, v0, s11
        V.SW v1, [s2 + (v20 << 2)]
        S.ADD s1, s1, s10
        S.ADD s2, s2, s10";
    let bodies = [
        // while (n >= VL) { ... } then a masked group.
        format!(
            "
        top:
            BLT s3, s9, tail
            {step}
            S.SUB s3, s3, s9
            J top
        tail:
            BEQ s3, s0, done
            S.LI s12, 1
            S.SHL s12, s12, s3
            S.SUB s12, s12, 1
            V.SETMASK s12
            {step}
        done:"
        ),
        // do { if (n < VL) mask; ... } while (n > 0)
        format!(
            "
        top:
            BGE s3, s9, full
            S.LI s12, 1
            S.SHL s12, s12, s3
            S.SUB s12, s12, 1
            V.SETMASK s12
        full:
            {step}
            S.SUB s3, s3, s9
            BLT s0, s3, top"
        ),
        // A search past the special words: leave at the first group holding a word other
        // than 10.0 (word 306).
        "
            S.ADD s1, s1, 24
        top:
            V.LW [s1 + (v20 << 2)], ->v0
            V.XOR v2, v0, s13
            V.REDSUM s5, v2
            BNE s5, s0, found
            S.ADD s1, s1, s10
            S.SUB s3, s3, s9
            BLT s0, s3, top
        found:
            S.MOV s6, s1"
            .to_string(),
        // Three side exits, two of them constant: one never taken, one always (the trace
        // goes on at its fall-through, which never runs); after the loop's branch a `J` back
        // to its head (a trace starting there too).
        format!(
            "
            S.LI s14, 3
        top:
            {step}
            BEQ s0, 1, away
            BNE s0, 1, skip
            S.ADD s7, s7, 100
        skip:
            BLT s3, s9, tail
            S.SUB s3, s3, s9
            S.SUB s14, s14, 1
            BNE s14, 0, top
            J top
        away:
            S.ADD s7, s7, 1
        tail:
            S.MOV s6, s3"
        ),
    ];
    for (k, body) in bodies.iter().enumerate() {
        let src = trace_loop(650, body);
        let p = asm(&src);
        for vl in VLS {
            let (r, st) = check(&p, vl, false, None);
            assert!(st.jit_retired > 0, "compiled code ran (body {k}, vl {vl})");
            assert_eq!(trap_kind(&r.exit()), None, "body {k}, vl {vl}");
        }
        check_budgets(&p, 7);
        // x from 1536 bytes before the end of its one page: a page fault at word 384 (the
        // search's too: it finds nothing there), a middle group.
        let short = src.replace(".mem 0x10000, 0x2000, rw", ".mem 0x10000, 0x1000, rw");
        let short = short.replace("S.LI s1, 0x10000", "S.LI s1, 0x10a00");
        let p = asm(&short);
        for vl in VLS {
            let (r, _) = check(&p, vl, false, None);
            assert_eq!(
                trap_kind(&r.exit()),
                Some(TrapKind::PageFault),
                "body {k}, vl {vl}"
            );
        }
    }
}
