//! The embedding API (`lanejit::embed`): its examples run, a memory-write hook sees every
//! store of a loop the JIT would compile, a trap handler resumes with the same result on
//! every engine, a stop handle and a time limit stop compiled loops, and an embedder's build
//! without default features pulls none of the command line's dependencies.

use lanejit::embed::{
    Builder, Engine, Flow, MemPerm, PAGE_SIZE, Stopped, TrapAction, TrapKind, VmOptions,
};
use lanejit_interp::result::Status;
use std::sync::mpsc;
use std::time::Duration;

#[path = "../../examples/engines.rs"]
mod engines;
#[path = "../../examples/mem_write_hook.rs"]
mod mem_write_hook;
#[path = "../../examples/trap_map.rs"]
mod trap_map;

const ENGINES: [Engine; 3] = Engine::ALL;

#[test]
fn example_engines_runs() {
    engines::main().expect("example engines");
}

#[test]
fn example_trap_map_runs() {
    trap_map::main().expect("example trap_map");
}

#[test]
fn example_mem_write_hook_runs() {
    mem_write_hook::main().expect("example mem_write_hook");
}

/// Stores `dst[i] = i + 7` for `i < 300`, as a hardware loop the JIT compiles.
const STORE_LOOP: &str = "
        .mem    0x8000, 0x1000, rw
        .text
        S.LI    s1, 0x8000
        S.LI    s2, 300
        S.LI    s3, 7
        LOOP    s2
        V.LC0   v1
        V.MOV   v2, s3
        V.ADD   v2, v2, v1
        V.SW    v2, [s1, lc0<<2, 0]
        ENDLOOP
        HALT
";

#[test]
fn a_write_hook_sees_every_store_of_a_loop_the_jit_compiles() {
    for engine in [Engine::Jit, Engine::Tiered] {
        let build = || {
            Builder::assemble(STORE_LOOP, "stores.s")
                .expect("assembles")
                .engine(engine)
                .vl(8)
                .vm_options(VmOptions::foreground(1))
                .build()
                .expect("builds")
        };
        // Without the hook, the loop runs compiled.
        let mut plain = build();
        let unhooked = plain.run();
        assert!(
            unhooked.stats.jit_retired > 0,
            "{engine:?}: nothing compiled"
        );
        let plain_mem = plain.guest().read(0x8000, 1200).expect("mapped").to_vec();

        let mut seen = vec![0u32; 300];
        let mut vm = build();
        vm.on_mem_write(|ev| {
            for l in &ev.access.lanes {
                let i = ((l.ea - 0x8000) / 4) as usize;
                assert_eq!(l.value, i as u64 + 7, "store {i}'s value");
                seen[i] += 1;
            }
            Flow::Continue
        });
        let hooked = vm.run();
        let hooked_mem = vm.guest().read(0x8000, 1200).expect("mapped").to_vec();
        drop(vm);
        assert!(
            seen.iter().all(|&n| n == 1),
            "{engine:?}: stores seen {seen:?}"
        );
        assert_eq!(hooked.stats.jit_retired, 0, "{engine:?}: compiled code ran");
        assert_eq!(hooked.result, unhooked.result);
        assert_eq!(hooked_mem, plain_mem);
    }
}

#[test]
fn hooks_can_stop_and_the_run_continues() {
    let mut stores = 0;
    let mut blocks = Vec::new();
    let mut vm = Builder::assemble(STORE_LOOP, "stores.s")
        .expect("assembles")
        .engine(Engine::Jit)
        .vl(64)
        .build()
        .expect("builds");
    vm.on_mem_write(|_| {
        stores += 1;
        if stores == 2 {
            Flow::Stop
        } else {
            Flow::Continue
        }
    });
    vm.on_block(|pc, _| {
        blocks.push(pc);
        Flow::Continue
    });
    let first = vm.run();
    assert_eq!(first.stopped, Some(Stopped::Hook));
    assert_eq!(first.result.status, Status::Limit);
    let second = vm.run();
    assert_eq!(second.stopped, None);
    assert_eq!(second.result.status, Status::Halted);
    let done = vm.guest().read(0x8000, 1200).expect("mapped").to_vec();
    drop(vm);
    assert_eq!(stores, 5, "300 lanes in stores of 64");
    // The first block (pc 0, to the LOOP), the body's entries, the resumed run's start.
    assert_eq!(blocks.first(), Some(&0));
    assert!(blocks.len() >= 6, "{blocks:?}");
    assert_eq!(&done[4 * 299..], &(299u32 + 7).to_le_bytes());
}

/// Adds each lane's previous lc0 to 40 words at unmapped 0x50000, in place: the first load
/// page faults, the first store (after the handler mapped the page read-only) faults on
/// permission.
const TRAPPING: &str = "
        .mem    0x1000, 0x1000, rw
        .text
        S.LI    s1, 0x50000
        S.LI    s2, 40
        LOOP    s2
        V.LW    [s1, lc0<<2, 0], ->v1
        V.ADD   v1, v1, v2
        V.SW    v1, [s1, lc0<<2, 0]
        V.LC0   v2
        ENDLOOP
        V.REDSUM s3, v1
        HALT
";

#[test]
fn a_trap_handler_resumes_with_the_same_result_on_every_engine() {
    let mut results = Vec::new();
    for engine in ENGINES {
        let mut traps = Vec::new();
        let mut vm = Builder::assemble(TRAPPING, "trapping.s")
            .expect("assembles")
            .engine(engine)
            .vl(4)
            .vm_options(VmOptions::foreground(1))
            .build()
            .expect("builds");
        vm.on_trap(|t, g| {
            traps.push((t.kind, t.pc));
            let ea = t.mem.expect("a memory trap").ea;
            let page = ea & !(PAGE_SIZE - 1);
            // First read-only (so the store traps next), then writable.
            let perm = if t.kind == TrapKind::PageFault {
                MemPerm::R
            } else {
                MemPerm::Rw
            };
            g.map(page, PAGE_SIZE, perm).expect("maps");
            if t.kind == TrapKind::PageFault {
                g.write(page, &[3; 16]).expect("writes");
            }
            TrapAction::Resume
        });
        let out = vm.run();
        let mem = vm.guest().read(0x50000, 160).expect("mapped").to_vec();
        drop(vm);
        assert_eq!(out.result.status, Status::Halted, "{engine:?}");
        assert_eq!(
            traps.iter().map(|t| t.0).collect::<Vec<_>>(),
            [TrapKind::PageFault, TrapKind::PermissionFault],
            "{engine:?}"
        );
        results.push((out.result, mem, traps));
    }
    assert_eq!(results[0], results[1], "jit");
    assert_eq!(results[0], results[2], "tiered");
    // Bytes 0..16 were 3s, the rest zero; each lane adds its lc0 of the previous iteration.
    assert_eq!(results[0].1[0], 3);
}

#[test]
fn a_trap_handler_that_stops_ends_the_run_trapped() {
    let mut vm = Builder::assemble(TRAPPING, "trapping.s")
        .expect("assembles")
        .engine(Engine::Jit)
        .build()
        .expect("builds");
    vm.on_trap(|_, _| TrapAction::Stop);
    let out = vm.run();
    assert_eq!(out.result.status, Status::Trapped);
    assert_eq!(out.stopped, None);
    assert_eq!(out.result.trap.map(|t| t.kind), Some(TrapKind::PageFault));
}

/// Never halts: a branch back to itself.
const FOREVER: &str = "
        .text
top:    S.ADD   s1, s1, 1
        J       top
";

/// Run `f` on another thread; fail if it has not finished in a minute (a stop that compiled
/// code never sees would hang the test instead).
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the run did not stop")
}

#[test]
fn a_stop_handle_stops_compiled_loops_from_another_thread() {
    for engine in ENGINES {
        let out = within_a_minute(move || {
            let mut vm = Builder::assemble(FOREVER, "forever.s")
                .expect("assembles")
                .engine(engine)
                .vm_options(VmOptions::foreground(1))
                .build()
                .expect("builds");
            let stop = vm.stop_handle();
            let out = std::thread::scope(|s| {
                s.spawn(|| {
                    // Stop once the run has made progress (any moment will do).
                    std::thread::sleep(Duration::from_millis(20));
                    stop.stop();
                });
                vm.run()
            });
            (out, vm.machine().regs.s[1])
        });
        let (out, s1) = out;
        assert_eq!(out.stopped, Some(Stopped::Handle), "{engine:?}");
        assert_eq!(out.result.status, Status::Limit);
        // The state is exact: one S.ADDI retired per J.
        assert_eq!(s1, out.result.instructions.div_ceil(2), "{engine:?}");
    }
}

#[test]
fn a_stop_request_is_used_up_by_the_stop() {
    let mut vm = Builder::assemble(STORE_LOOP, "stores.s")
        .expect("assembles")
        .engine(Engine::Jit)
        .build()
        .expect("builds");
    let stop = vm.stop_handle();
    stop.stop();
    let first = vm.run();
    assert_eq!(first.stopped, Some(Stopped::Handle));
    assert_eq!(first.result.instructions, 0);
    assert!(!stop.is_stopping());
    let second = vm.run();
    assert_eq!(second.result.status, Status::Halted);
    assert!(second.stats.jit_retired > 0);
}

#[test]
fn a_time_limit_stops_a_loop_on_every_engine() {
    for engine in ENGINES {
        let out = within_a_minute(move || {
            let mut vm = Builder::assemble(FOREVER, "forever.s")
                .expect("assembles")
                .engine(engine)
                .time_limit(Duration::from_millis(10))
                .vm_options(VmOptions::foreground(1))
                .build()
                .expect("builds");
            vm.run()
        });
        assert_eq!(out.stopped, Some(Stopped::TimeLimit), "{engine:?}");
        if engine == Engine::Jit {
            assert!(out.stats.jit_retired > 0);
        }
    }
}

#[test]
fn an_instruction_limit_still_holds_in_slices() {
    for engine in ENGINES {
        let mut vm = Builder::assemble(FOREVER, "forever.s")
            .expect("assembles")
            .engine(engine)
            .max_instructions(3 * lanejit::embed::STOP_SLICE + 5)
            .time_limit(Duration::from_secs(3600))
            .build()
            .expect("builds");
        let out = vm.run();
        assert_eq!(out.stopped, None);
        assert_eq!(out.result.status, Status::Limit);
        assert_eq!(out.result.instructions, 3 * lanejit::embed::STOP_SLICE + 5);
    }
}

/// Every group adds its id into its own word.
const GROUPS: &str = "
        .mem    0x2000, 0x1000, rw
        .text
        S.GID   s1
        S.SHL   s2, s1, 2
        S.LI    s3, 0x2000
        S.ADD   s3, s3, s2
        V.SWI   s1, [s3]
        HALT
";

#[test]
fn launches_agree_with_and_without_handlers() {
    let mut plain = Builder::assemble(GROUPS, "groups.s")
        .expect("assembles")
        .engine(Engine::Jit)
        .groups(50)
        .threads(2)
        .build()
        .expect("builds");
    let a = plain.run();
    let a_mem = plain.guest().read(0x2000, 200).expect("mapped").to_vec();
    let mut hooked = Builder::assemble(GROUPS, "groups.s")
        .expect("assembles")
        .engine(Engine::Jit)
        .groups(50)
        .build()
        .expect("builds");
    let mut writes = 0;
    hooked.on_mem_write(|_| {
        writes += 1;
        Flow::Continue
    });
    let b = hooked.run();
    let b_mem = hooked.guest().read(0x2000, 200).expect("mapped").to_vec();
    drop(hooked);
    assert_eq!(writes, 50);
    assert_eq!(a.result, b.result);
    assert_eq!(a_mem, b_mem);
    assert_eq!(&a_mem[4 * 49..], &49u32.to_le_bytes());
}

#[test]
fn bad_builder_input_is_an_error() {
    let b = || Builder::assemble(FOREVER, "forever.s").expect("assembles");
    assert!(b().vl(3).build().is_err());
    assert!(b().groups(0).build().is_err());
    assert!(b().threads(0).build().is_err());
    let e = Builder::assemble("  BOGUS s1\n", "bad.s").expect_err("does not assemble");
    assert!(e.to_string().contains("bad.s:1:"), "{e}");
    let mut vm = b().build().expect("builds");
    let mut g = vm.guest();
    assert!(g.map(0x1001, PAGE_SIZE, MemPerm::Rw).is_err());
    assert!(g.protect(0x4000, PAGE_SIZE, MemPerm::R).is_err());
    assert!(g.read(0x4000, 4).is_err());
    assert!(g.set_scalar(32, 1).is_err());
    assert!(g.set_vector(1, &[1, 2]).is_err());
}

/// An embedder's `default-features = false` build compiles none of the command line's crates.
#[test]
fn the_library_without_default_features_pulls_no_cli_crates() {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["tree", "-e", "normal", "--no-default-features", "--offline"])
        .args(["-p", "lanejit", "--prefix", "none", "--format", "{p}"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && tree.contains("lanejit-jit"),
        "{tree}"
    );
    for cli in [
        "clap",
        "indicatif",
        "rayon",
        "annotate-snippets",
        "time",
        "rustyline",
    ] {
        assert!(
            !tree.lines().any(|l| l.starts_with(&format!("{cli} "))),
            "{cli} in:\n{tree}"
        );
    }
}
