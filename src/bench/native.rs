//! The native reference of every bench kernel: the plain Rust loop a programmer writes for
//! the same work, on host vectors holding the same data, producing the same output bytes.
//!
//! The loops are ordinary, autovectorisable Rust (no intrinsics). Each is built twice by
//! `multiversion!`: once for the x86-64 baseline (SSE2) and once with
//! `#[target_feature(enable = "avx2,fma")]`; the entry point picks the AVX2+FMA build at run
//! time when the CPU has both ([`isa`]), as a C or Rust program multiversioned for its host
//! would. Floating point is never contracted (Rust does not fuse `a * b + c`), so a loop
//! fuses exactly where it calls [`f32::mul_add`], as the kernels do with `V.FMA.S`; both
//! builds give the same bits.

/// Defines `pub fn $name` running `$body` (inlined into each build), dispatching at run time
/// to the AVX2+FMA build when the host has those features, else to the baseline build.
macro_rules! multiversion {
    ($(#[$attr:meta])* pub fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$attr])*
        #[inline(never)]
        pub fn $name($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn generic($($arg: $ty),*) $(-> $ret)? $body

            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma")]
                unsafe fn avx2_fma($($arg: $ty),*) $(-> $ret)? {
                    generic($($arg),*)
                }
                if has_avx2_fma() {
                    // SAFETY: `avx2_fma` only requires the CPU features it enables, and
                    // `has_avx2_fma` has just detected both on this CPU at run time.
                    return unsafe { avx2_fma($($arg),*) };
                }
            }
            generic($($arg),*)
        }
    };
}

/// Unit tests set this to run the baseline builds on a host that has AVX2 and FMA.
#[cfg(test)]
pub(super) static FORCE_BASELINE: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Whether this CPU has AVX2 and FMA (detected once, then cached by `std`).
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx2_fma() -> bool {
    #[cfg(test)]
    if FORCE_BASELINE.load(std::sync::atomic::Ordering::Relaxed) {
        return false;
    }
    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
}

/// The build of the native loops this host runs: `avx2+fma` or `baseline`.
pub fn isa() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    if has_avx2_fma() {
        return "avx2+fma";
    }
    "baseline"
}

/// saxpy32's `a`.
pub const SAXPY_A: f32 = 1.5;
/// The stencils' weight of the centre point.
pub const STENCIL_C0: f32 = 0.5;
/// The stencils' weight of each neighbour.
pub const STENCIL_C1: f32 = 0.125;
/// fir8's taps (also written as bit patterns in `fir8_*.s`).
pub const FIR_TAPS: [f32; 8] = [
    0.03125, -0.0625, 0.125, 0.40625, 0.40625, 0.125, -0.0625, 0.03125,
];
/// Entries of lut32's table (4 MiB of words).
pub const LUT_ENTRIES: usize = 1 << 20;
/// The shift that takes a lut32 source word to its table index.
pub const LUT_SHIFT: u32 = 12;

multiversion! {
    /// copy32: `dst[i] = src[i]`.
    pub fn copy32(src: &[u32], dst: &mut [u32]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = s;
        }
    }
}

/// memcpy beside copy32 (`copy_from_slice`: libc's memcpy, which picks its own variant for
/// the host).
#[inline(never)]
pub fn memcpy(src: &[u32], dst: &mut [u32]) {
    dst.copy_from_slice(src);
}

multiversion! {
    /// poly_g (a launch kernel): `y[i] = 0.5 * (x[i] + 1)^24` as 24 fused steps
    /// `acc = x*acc + acc` from `acc = 0.5`, on f32 bit patterns.
    pub fn poly24(x: &[u32], y: &mut [u32]) {
        for (y, &x) in y.iter_mut().zip(x) {
            let x = f32::from_bits(x);
            let mut acc = 0.5f32;
            for _ in 0..24 {
                acc = x.mul_add(acc, acc);
            }
            *y = acc.to_bits();
        }
    }
}

multiversion! {
    /// widensum8: the sum of the bytes sign-extended to 64 bits (wrapping).
    pub fn widensum8(src: &[i8]) -> i64 {
        src.iter().fold(0i64, |a, &b| a.wrapping_add(i64::from(b)))
    }
}

multiversion! {
    /// gather32: `dst[i] = table[idx[i]]`.
    pub fn gather32(table: &[u32], idx: &[u32], dst: &mut [u32]) {
        for (d, &i) in dst.iter_mut().zip(idx) {
            *d = table[i as usize];
        }
    }
}

multiversion! {
    /// scatter32: `dst[idx[i]] = src[i]`.
    pub fn scatter32(src: &[u32], idx: &[u32], dst: &mut [u32]) {
        for (&s, &i) in src.iter().zip(idx) {
            dst[i as usize] = s;
        }
    }
}

multiversion! {
    /// strided32: `dst[i] = src[16 * i]`.
    pub fn strided32(src: &[u32], dst: &mut [u32]) {
        for (i, d) in dst.iter_mut().enumerate() {
            *d = src[16 * i];
        }
    }
}

multiversion! {
    /// saxpy32: `y[i] = a * x[i] + y[i]` (two roundings).
    pub fn saxpy32(a: f32, x: &[f32], y: &mut [f32]) {
        for (y, &x) in y.iter_mut().zip(x) {
            *y += a * x;
        }
    }
}

multiversion! {
    /// tile_stage: per band of `vl` rows, copy the rows into `tile`, then write each column
    /// of the band as `vl` consecutive words of row c of `t` (`t[c][r] = m[r][c]`).
    pub fn tile_stage(m: &[u32], t: &mut [u32], tile: &mut [u32], n: usize, vl: usize) {
        for r0 in (0..n).step_by(vl.max(1)) {
            for r in 0..vl {
                let row = &m[(r0 + r) * n..(r0 + r + 1) * n];
                for (d, &s) in tile[r * n..(r + 1) * n].iter_mut().zip(row) {
                    *d = s;
                }
            }
            for c in 0..n {
                let out = &mut t[c * n + r0..c * n + r0 + vl];
                for (l, d) in out.iter_mut().enumerate() {
                    *d = tile[l * n + c];
                }
            }
        }
    }
}

multiversion! {
    /// stencil5 (both forms): on the `n` x `n` grid `inp`, for every interior point,
    /// `out = C0 * centre`, then `out = fma(west, C1, out)`, east, north, south. The border
    /// of `out` is left as it is.
    pub fn stencil5(inp: &[f32], out: &mut [f32], n: usize) {
        for y in 1..n.saturating_sub(1) {
            let up = &inp[(y - 1) * n..y * n];
            let mid = &inp[y * n..(y + 1) * n];
            let down = &inp[(y + 1) * n..(y + 2) * n];
            let row = &mut out[y * n + 1..(y + 1) * n - 1];
            for (x, o) in row.iter_mut().enumerate() {
                let mut a = STENCIL_C0 * mid[x + 1];
                a = mid[x].mul_add(STENCIL_C1, a);
                a = mid[x + 2].mul_add(STENCIL_C1, a);
                a = up[x + 1].mul_add(STENCIL_C1, a);
                a = down[x + 1].mul_add(STENCIL_C1, a);
                *o = a;
            }
        }
    }
}

multiversion! {
    /// fir8 (both forms): `y[i] = x[i] * h0`, then `y[i] = fma(x[i + k], hk, y[i])` for
    /// k = 1..7 ([`FIR_TAPS`]); `x` holds `y.len() + 7` samples.
    pub fn fir8(x: &[f32], y: &mut [f32]) {
        let h = FIR_TAPS;
        for (w, o) in x.windows(8).zip(y.iter_mut()) {
            let mut a = w[0] * h[0];
            for (&xk, &hk) in w[1..].iter().zip(&h[1..]) {
                a = xk.mul_add(hk, a);
            }
            *o = a;
        }
    }
}

multiversion! {
    /// spmv_csr: `y[r] = fma(val[j], x[col[j]], ...)` over the row's entries in order, from
    /// +0.0 (`rowptr` has `y.len() + 1` entries).
    pub fn spmv_csr(rowptr: &[u32], col: &[u32], val: &[f32], x: &[f32], y: &mut [f32]) {
        for (o, ends) in y.iter_mut().zip(rowptr.windows(2)) {
            let mut a = 0.0f32;
            for j in ends[0] as usize..ends[1] as usize {
                a = val[j].mul_add(x[col[j] as usize], a);
            }
            *o = a;
        }
    }
}

multiversion! {
    /// matmul256 and matmul_ikj: `c = a * b` for `n` x `n` row-major matrices, every
    /// `c[i][j]` accumulated by `fma(a[i][k], b[k][j], c[i][j])` in k order from +0.0 (the
    /// i-k-j loop).
    pub fn matmul(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
        c.fill(0.0);
        for (arow, crow) in a.chunks_exact(n).zip(c.chunks_exact_mut(n)) {
            for (&aik, brow) in arow.iter().zip(b.chunks_exact(n)) {
                for (cij, &bkj) in crow.iter_mut().zip(brow) {
                    *cij = aik.mul_add(bkj, *cij);
                }
            }
        }
    }
}

multiversion! {
    /// lut32: `dst[i] = lut[src[i] >> 12]` (`lut` holds [`LUT_ENTRIES`] words).
    pub fn lut32(src: &[u32], lut: &[u32], dst: &mut [u32]) {
        let Some(lut) = lut.first_chunk::<LUT_ENTRIES>() else {
            return;
        };
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = lut[(s >> LUT_SHIFT) as usize];
        }
    }
}

multiversion! {
    /// aos_soa (both forms): `src` holds structs of four words; `dst` receives the four
    /// fields as four arrays of `src.len() / 4` words, one after the other.
    pub fn aos_soa(src: &[u32], dst: &mut [u32]) {
        let n = src.len() / 4;
        let (a, rest) = dst.split_at_mut(n);
        let (b, rest) = rest.split_at_mut(n);
        let (c, d) = rest.split_at_mut(n);
        for (i, s) in src.chunks_exact(4).enumerate() {
            a[i] = s[0];
            b[i] = s[1];
            c[i] = s[2];
            d[i] = s[3];
        }
    }
}

multiversion! {
    /// dot8: the exact sum of `a[i] * b[i]` over the bytes sign-extended: i32 partial sums
    /// over blocks of 2^16 products (at most 2^30 in magnitude), added up in i64.
    pub fn dot8(a: &[i8], b: &[i8]) -> i64 {
        a.chunks(1 << 16)
            .zip(b.chunks(1 << 16))
            .map(|(a, b)| {
                let s: i32 = a
                    .iter()
                    .zip(b)
                    .map(|(&x, &y)| i32::from(x) * i32::from(y))
                    .sum();
                i64::from(s)
            })
            .sum()
    }
}
