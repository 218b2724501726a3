//! Semantics of every instruction on the reference interpreter (contract sections 1-5).

mod support;

use lanejit_interp::interp;
use lanejit_interp::isa::Opcode::*;
use lanejit_interp::machine::Exit;
use lanejit_interp::program::MemPerm;
use support::*;

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
