//! What 128-bit SIMD code can reach on this host for the bench kernels the JIT is furthest
//! from native on (issue 11's spmv_csr and stencil5 rows): hand-written SSE4.1 + FMA3
//! intrinsics of each kernel's own lane-parallel algorithm, the code a perfect lowering of
//! the guest kernel to Cranelift's 128-bit vectors would be (no checks, no spills, no
//! exits), beside the native reference loop of `lanejit bench` (`bench::native`, LLVM's
//! AVX2 + FMA build on such a host). Also the per-lane gather primitive the JIT uses (a load
//! and an insert per lane) against AVX2's hardware gather. See benches/README.md
//! ("Floors"). x86-64 with AVX2 and FMA only; elsewhere the benches are skipped.
//!
//! `cargo bench --bench floors`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lanejit::bench::native;
use std::time::Duration;

/// A small deterministic generator (xorshift64*), so that the data does not depend on the
/// bench harness's own.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn float(&mut self) -> f32 {
        ((self.next() >> 40) as f32 / (1u64 << 24) as f32) * 2000.0 - 1000.0
    }
}

/// spmv_csr's data as `lanejit bench` makes it at 256 KiB (5,440 rows here, a multiple of
/// 32, of `bench::spmv_row_len` nonzeros at random columns, then `SPMV_K` padding entries).
struct Csr {
    rowptr: Vec<u32>,
    col: Vec<u32>,
    val: Vec<f32>,
    x: Vec<f32>,
}

impl Csr {
    fn new(n: usize) -> Csr {
        let mut g = Gen(0x9e37_79b9_7f4a_7c15);
        let mut rowptr = vec![0u32];
        let mut nnz = 0u64;
        for r in 0..n as u64 {
            nnz += lanejit::bench::spmv_row_len(r);
            rowptr.push(nnz as u32);
        }
        let pad = lanejit::bench::SPMV_K as usize;
        let mut col: Vec<u32> = (0..nnz).map(|_| (g.next() % n as u64) as u32).collect();
        let mut val: Vec<f32> = (0..nnz).map(|_| g.float()).collect();
        col.resize(nnz as usize + pad, 0);
        val.resize(nnz as usize + pad, 0.0);
        let x = (0..n).map(|_| g.float()).collect();
        Csr {
            rowptr,
            col,
            val,
            x,
        }
    }
    fn nnz(&self) -> u64 {
        self.rowptr[self.rowptr.len() - 1] as u64
    }
}

#[cfg(target_arch = "x86_64")]
mod simd {
    use core::arch::x86_64::*;

    /// Lanes of the guest kernel (VL 32): eight 4-lane chunks.
    const CHUNKS: usize = 8;
    /// Steps of spmv_csr's row loop (its `.equ K`).
    const STEPS: usize = lanejit::bench::SPMV_K as usize;

    pub fn available() -> bool {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    }

    /// Four lanes of `table` at the 32-bit indices `idx`: a scalar load and an insert per
    /// lane, the indices leaving the vector two at a time (`movq`/`pextrq`), as the JIT's
    /// packed-index gathers do.
    ///
    /// # Safety
    /// Every index is below `table.len()`, checked by the callers' data assertions.
    #[inline(always)]
    unsafe fn gather4(table: &[u32], idx: __m128i) -> __m128i {
        let t = table.as_ptr();
        // SAFETY: the caller guarantees every index is in bounds, and runs with SSE4.1.
        unsafe {
            let a = _mm_cvtsi128_si64(idx) as u64;
            let b = _mm_extract_epi64::<1>(idx) as u64;
            let v = _mm_cvtsi32_si128(*t.add(a as u32 as usize) as i32);
            let v = _mm_insert_epi32::<1>(v, *t.add((a >> 32) as usize) as i32);
            let v = _mm_insert_epi32::<2>(v, *t.add(b as u32 as usize) as i32);
            _mm_insert_epi32::<3>(v, *t.add((b >> 32) as usize) as i32)
        }
    }

    fn bits(v: &[f32]) -> &[u32] {
        // SAFETY: f32 and u32 have the same size and alignment, and every bit pattern is a
        // valid u32.
        unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), v.len()) }
    }

    /// spmv_csr as the guest kernel computes it, 32 rows at a time: `j = rowptr[r]`, then 16
    /// steps each gathering `col[j]`, `val[j]` (forced to +0.0 past the row's end) and
    /// `x[col[j]]` into one FMA. `chunk_major` false: each instruction for all eight chunks
    /// before the next (the order of the JIT's register form); true: each chunk's whole step
    /// before the next chunk's (what a lowering of fewer lanes at a time would emit).
    ///
    /// # Safety
    /// Needs AVX2 and FMA ([`available`]).
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn spmv(c: &super::Csr, y: &mut [f32], chunk_major: bool) {
        let n = y.len();
        assert!(n % (4 * CHUNKS) == 0 && c.rowptr.len() == n + 1 && c.x.len() == n);
        // Every lane's j stays below rowptr[r] + STEPS, inside col and val with their
        // padding; every column is below n: the gathers' indices are in bounds.
        assert!(c.col.len() == c.val.len() && c.nnz() as usize + STEPS <= c.col.len());
        assert!(c.col.iter().all(|&k| (k as usize) < n));
        let (col, val, x) = (&c.col[..], bits(&c.val), bits(&c.x));
        let one = _mm_set1_epi32(1);
        for (r, out) in (0..n)
            .step_by(4 * CHUNKS)
            .zip(y.chunks_exact_mut(4 * CHUNKS))
        {
            let mut j = [_mm_setzero_si128(); CHUNKS];
            let mut end = [_mm_setzero_si128(); CHUNKS];
            let mut acc = [_mm_setzero_ps(); CHUNKS];
            for k in 0..CHUNKS {
                let p = &c.rowptr[r + 4 * k..r + 4 * k + 5];
                // SAFETY: `p` holds five words; each load reads four of them.
                unsafe {
                    j[k] = _mm_loadu_si128(p.as_ptr().cast());
                    end[k] = _mm_loadu_si128(p[1..].as_ptr().cast());
                }
            }
            for _ in 0..STEPS {
                if chunk_major {
                    for k in 0..CHUNKS {
                        let live = _mm_cmplt_epi32(j[k], end[k]);
                        // SAFETY: indices in bounds (the assertions above).
                        let (cl, v) = unsafe { (gather4(col, j[k]), gather4(val, j[k])) };
                        let v = _mm_and_ps(_mm_castsi128_ps(v), _mm_castsi128_ps(live));
                        // SAFETY: as above.
                        let xv = _mm_castsi128_ps(unsafe { gather4(x, cl) });
                        acc[k] = _mm_fmadd_ps(v, xv, acc[k]);
                        j[k] = _mm_add_epi32(j[k], one);
                    }
                } else {
                    let mut live = [_mm_setzero_ps(); CHUNKS];
                    let mut cl = [_mm_setzero_si128(); CHUNKS];
                    let mut v = [_mm_setzero_ps(); CHUNKS];
                    let mut xv = [_mm_setzero_ps(); CHUNKS];
                    for k in 0..CHUNKS {
                        live[k] = _mm_castsi128_ps(_mm_cmplt_epi32(j[k], end[k]));
                    }
                    for k in 0..CHUNKS {
                        // SAFETY: indices in bounds (the assertions above).
                        cl[k] = unsafe { gather4(col, j[k]) };
                    }
                    std::hint::black_box(&cl);
                    for k in 0..CHUNKS {
                        // SAFETY: as above.
                        let g = _mm_castsi128_ps(unsafe { gather4(val, j[k]) });
                        v[k] = _mm_and_ps(g, live[k]);
                    }
                    std::hint::black_box(&v);
                    for k in 0..CHUNKS {
                        // SAFETY: as above.
                        xv[k] = _mm_castsi128_ps(unsafe { gather4(x, cl[k]) });
                    }
                    std::hint::black_box(&xv);
                    for k in 0..CHUNKS {
                        acc[k] = _mm_fmadd_ps(v[k], xv[k], acc[k]);
                        j[k] = _mm_add_epi32(j[k], one);
                    }
                }
            }
            for (k, o) in out.chunks_exact_mut(4).enumerate() {
                // SAFETY: `o` holds four floats.
                unsafe { _mm_storeu_ps(o.as_mut_ptr(), acc[k]) };
            }
        }
    }

    /// stencil5 with 128-bit FMA, in the kernel's order (`C0 * centre`, then west, east,
    /// north and south fused), four points at a time; a row's last four points again at
    /// once (overlapping the chunk before: the same values), so that there is no scalar
    /// tail for LLVM to vectorise around the loop.
    ///
    /// # Safety
    /// Needs AVX2 and FMA ([`available`]).
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn stencil5(inp: &[f32], out: &mut [f32], n: usize) {
        use lanejit::bench::native::{STENCIL_C0, STENCIL_C1};
        assert!(n >= 6 && inp.len() >= n * n && out.len() >= n * n);
        let (c0, c1) = (_mm_set1_ps(STENCIL_C0), _mm_set1_ps(STENCIL_C1));
        let (src, dst) = (inp.as_ptr(), out.as_mut_ptr());
        for yy in 1..n - 1 {
            let row = yy * n;
            for x in (1..n - 4).step_by(4).chain([n - 5]) {
                let p = row + x;
                // SAFETY: rows yy - 1 to yy + 1 lie inside the grid (asserted above), and
                // points p - 1 .. p + 4 inside row yy (1 <= x <= n - 5): every load reads
                // four floats of `inp`, the store writes four of `out`.
                unsafe {
                    let mut a = _mm_mul_ps(c0, _mm_loadu_ps(src.add(p)));
                    a = _mm_fmadd_ps(_mm_loadu_ps(src.add(p - 1)), c1, a);
                    a = _mm_fmadd_ps(_mm_loadu_ps(src.add(p + 1)), c1, a);
                    a = _mm_fmadd_ps(_mm_loadu_ps(src.add(p - n)), c1, a);
                    a = _mm_fmadd_ps(_mm_loadu_ps(src.add(p + n)), c1, a);
                    _mm_storeu_ps(dst.add(p), a);
                }
            }
        }
    }

    /// Gather `out[i] = table[idx[i]]` four lanes at a time with [`gather4`]'s inserts, or
    /// eight at a time with AVX2's `vpgatherdd`.
    ///
    /// # Safety
    /// Needs AVX2 and FMA ([`available`]).
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn gather(table: &[u32], idx: &[u32], out: &mut [u32], hardware: bool) {
        assert!(idx.len() == out.len() && idx.len() % 8 == 0);
        assert!(idx.iter().all(|&k| (k as usize) < table.len()));
        assert!(table.len() <= i32::MAX as usize);
        if hardware {
            for (i, o) in idx.chunks_exact(8).zip(out.chunks_exact_mut(8)) {
                // SAFETY: eight indices, all in bounds and below 2^31 (the gather's offsets
                // are signed), into `table`; eight words stored to `o`.
                unsafe {
                    let v = _mm256_loadu_si256(i.as_ptr().cast());
                    let g = _mm256_i32gather_epi32::<4>(table.as_ptr().cast(), v);
                    _mm256_storeu_si256(o.as_mut_ptr().cast(), g);
                }
            }
        } else {
            for (i, o) in idx.chunks_exact(4).zip(out.chunks_exact_mut(4)) {
                // SAFETY: four indices, all in bounds; four words stored to `o`.
                unsafe {
                    let v = _mm_loadu_si128(i.as_ptr().cast());
                    _mm_storeu_si128(o.as_mut_ptr().cast(), gather4(table, v));
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn floors(c: &mut Criterion) {
    if !simd::available() {
        eprintln!("floors: this CPU lacks AVX2 or FMA; skipped");
        return;
    }
    let time = |g: &mut criterion::BenchmarkGroup<'_, _>| {
        g.sample_size(20)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(1));
    };

    // spmv_csr at 256 KiB of values.
    let csr = Csr::new(5440);
    let n = csr.x.len();
    let mut want = vec![0f32; n];
    native::spmv_csr(&csr.rowptr, &csr.col, &csr.val, &csr.x, &mut want);
    let mut g = c.benchmark_group("floor_spmv_csr");
    time(&mut g);
    g.throughput(Throughput::Elements(csr.nnz()));
    g.bench_function("native", |b| {
        let mut y = vec![0f32; n];
        b.iter(|| native::spmv_csr(&csr.rowptr, &csr.col, &csr.val, &csr.x, &mut y))
    });
    for (name, chunk_major) in [
        ("simd128_by_instruction", false),
        ("simd128_by_chunk", true),
    ] {
        let mut y = vec![0f32; n];
        // SAFETY: `available` found AVX2 and FMA.
        unsafe { simd::spmv(&csr, &mut y, chunk_major) };
        // Past a row's end the lanes add fma(+0.0, x, sum): the sums of the plain loop.
        assert!(y.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()));
        g.bench_function(name, |b| {
            b.iter(|| {
                // SAFETY: `available` found AVX2 and FMA.
                unsafe { simd::spmv(&csr, &mut y, chunk_major) }
            })
        });
    }
    g.finish();

    // stencil5 at 256 KiB (a 256 x 256 grid).
    let n = 256;
    let mut rng = Gen(7);
    let grid: Vec<f32> = (0..n * n).map(|_| rng.float()).collect();
    let mut want = vec![0f32; n * n];
    native::stencil5(&grid, &mut want, n);
    let mut g = c.benchmark_group("floor_stencil5");
    time(&mut g);
    g.throughput(Throughput::Elements(((n - 2) * (n - 2)) as u64));
    // The output 160 bytes further into its page than the grid, as `lanejit bench`
    // places its buffers: at the same offset, every store 4K-aliases the next loads of the
    // grid (the 128-bit loop ran at a sixth of its speed).
    let mut buf = vec![0f32; n * n + 64];
    let out = &mut buf[40..40 + n * n];
    g.bench_function("native", |b| b.iter(|| native::stencil5(&grid, out, n)));
    // SAFETY: `available` found AVX2 and FMA.
    unsafe { simd::stencil5(&grid, out, n) };
    assert!(
        out.iter()
            .zip(&want)
            .all(|(a, b)| a.to_bits() == b.to_bits())
    );
    g.bench_function("simd128", |b| {
        b.iter(|| {
            // SAFETY: `available` found AVX2 and FMA.
            unsafe { simd::stencil5(&grid, out, n) }
        })
    });
    g.finish();

    // The gather primitive: 16,384 random indices into a table in L1 (spmv's x at 256 KiB,
    // 5,440 words) and in L2 (lut32's 4 MiB table is larger still).
    let mut g = c.benchmark_group("floor_gather");
    time(&mut g);
    for (label, words) in [("l1", 5440usize), ("l2", 1 << 16)] {
        let table: Vec<u32> = (0..words as u32).collect();
        let idx: Vec<u32> = (0..1 << 14)
            .map(|_| (rng.next() % words as u64) as u32)
            .collect();
        g.throughput(Throughput::Elements(idx.len() as u64));
        for (name, hw) in [("insert", false), ("vpgatherdd", true)] {
            let mut out = vec![0u32; idx.len()];
            // SAFETY: `available` found AVX2 and FMA.
            unsafe { simd::gather(&table, &idx, &mut out, hw) };
            assert!(out.iter().zip(&idx).all(|(&o, &i)| o == i));
            g.bench_function(format!("{name}_{label}"), |b| {
                b.iter(|| {
                    // SAFETY: `available` found AVX2 and FMA.
                    unsafe { simd::gather(&table, &idx, &mut out, hw) }
                })
            });
        }
    }
    g.finish();
}

#[cfg(not(target_arch = "x86_64"))]
fn floors(_: &mut Criterion) {
    eprintln!("floors: x86-64 only; skipped");
}

// In a private module: `criterion_group!` defines an undocumented `pub fn benches`.
mod group {
    use super::*;
    criterion_group!(benches, floors);
}
criterion_main!(group::benches);
