//! Benchmark kernels and their harness (issue 5): the kernel sources of
//! `seeds/kernels/bench/`, the plain-Rust reference loop of each ("native"), the data each
//! runs on, and one [`Workload`] per (kernel, size, VL) that runs any engine on it.
//!
//! A workload assembles its kernel once (after rewriting the kernel's `.equ N` line), builds
//! one [`Machine`] and fills the source data host-side (the `--load` path), so no source file
//! grows with the size. Timed runs reset only the scalar registers, mask, LC0BASE, trip, pc
//! and retired count (the kernels initialise every vector register they read), so a timed run
//! does no allocation or data generation. Engines:
//!
//! * [`Which::Interp`] runs `vm::run(Engine::Interp)`.
//! * [`Which::Jit`] measures the steady state of the JIT: one [`JitRunner`] (one [`Jit`], the same dispatch
//!   loop as `vm::run`) kept across runs, so after the first run every region is compiled and
//!   cached; **compile time is excluded** (it is reported separately from the first run).
//! * [`Which::Tiered`] runs `vm::run(Engine::Tiered)` with the default threshold, cold every run
//!   (a new JIT, interpretation until regions are hot, their compilation): **compile time is
//!   included**, as in one `lanejit run`.
//! * [`Which::Native`] and [`Which::Memcpy`] run the reference loop on host vectors holding the same
//!   data (`Memcpy` only for copy32: `copy_from_slice`).
//!
//! [`Workload::verify`] runs every engine once from restored inputs and checks that its output
//! equals the native output byte for byte.

pub mod cli;
pub mod compile;
pub mod report;

use crate::vm::{self, Engine, VmOptions};
use lanejit_interp::asm::assemble;
use lanejit_interp::interp::Decoded;
use lanejit_interp::machine::{Config, Exit, Machine, Regs, all_lanes};
use lanejit_jit::{Jit, JitStats};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Guest address of the source buffer (src, table, x, the matrix).
pub const SRC: u64 = 0x1000_0000;
/// Offsets within a 4 KiB page of the source, index and destination buffers, in guest
/// memory and for the native loops alike. Buffers whose distance is a multiple of 4 KiB hit
/// 4K-aliasing stalls (on this host's AMD EPYC a 16 KiB `memcpy` between such buffers runs
/// 20x slower), so the placement is fixed rather than left to the allocator.
pub const PAGE_OFFSETS: [usize; 3] = [0, 0x440, 0x880];
/// Guest address of the index buffer (gather32, scatter32).
pub const IDX: u64 = 0x2000_0440;
/// Guest address of the destination buffer (dst, y, the transposed matrix).
pub const DST: u64 = 0x3000_0880;
/// Largest source size: each guest buffer maps 64 MiB.
pub const MAX_SIZE: u64 = 64 << 20;
/// The sizes of the full suite: 16 KiB, 256 KiB and 64 MiB of source data.
pub const SIZES: [u64; 3] = [16 << 10, 256 << 10, 64 << 20];
/// Tile size of tile_stage (its `.tilesize`): one band of VL rows must fit.
pub const TILE_STAGE_TILE: u64 = 1 << 20;
/// saxpy32's `a`.
pub const SAXPY_A: f32 = 1.5;

/// Something a benchmark could not do.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The size does not suit the kernel.
    #[error("{kernel}: size {size} bytes: {why}")]
    BadSize {
        /// Kernel name.
        kernel: &'static str,
        /// Requested source size.
        size: u64,
        /// What is wrong.
        why: String,
    },
    /// An unknown kernel name.
    #[error(
        "unknown kernel `{0}` (known: copy32 widensum8 gather32 scatter32 strided32 saxpy32 tile_stage)"
    )]
    UnknownKernel(String),
    /// An unknown engine name.
    #[error("unknown engine `{0}` (known: interp jit tiered native)")]
    UnknownEngine(String),
    /// A kernel did not assemble (a bug in a bench kernel).
    #[error("{kernel}: assembly failed:\n{msg}")]
    Asm {
        /// Kernel name.
        kernel: &'static str,
        /// The assembler's report.
        msg: String,
    },
    /// The machine could not be built.
    #[error("{kernel}: machine setup failed: {msg}")]
    Machine {
        /// Kernel name.
        kernel: &'static str,
        /// What failed.
        msg: String,
    },
    /// The JIT could not be set up.
    #[error("JIT setup failed: {0}")]
    Jit(String),
    /// A run did not halt.
    #[error("{kernel} on {engine}: the run ended with {exit:?} instead of halting")]
    NotHalted {
        /// Kernel name.
        kernel: &'static str,
        /// Engine name.
        engine: &'static str,
        /// How it ended.
        exit: Exit,
    },
    /// An engine's output differs from the native reference.
    #[error(
        "{kernel} ({size} bytes, VL {vl}) on {engine}: output differs from the native reference"
    )]
    Mismatch {
        /// Kernel name.
        kernel: &'static str,
        /// Source size.
        size: u64,
        /// VL.
        vl: u32,
        /// Engine name.
        engine: &'static str,
    },
    /// A program given to `--compile-latency` did not assemble or load.
    #[error("{file}: {msg}")]
    Program {
        /// The file.
        file: String,
        /// The assembler's or loader's report.
        msg: String,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {err}")]
    Io {
        /// The file.
        path: String,
        /// What happened.
        err: std::io::Error,
    },
}

/// A bench kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Contiguous word copy.
    Copy32,
    /// int8 -> int64 sign-extending sum.
    Widensum8,
    /// Gather through a permutation.
    Gather32,
    /// Scatter through the same permutation.
    Scatter32,
    /// One word every 64 bytes.
    Strided32,
    /// f32 `y = a * x + y`.
    Saxpy32,
    /// Rows staged through `.local`, written back transposed.
    TileStage,
}

impl Kernel {
    /// Every kernel, in table order.
    pub const ALL: [Kernel; 7] = [
        Kernel::Copy32,
        Kernel::Widensum8,
        Kernel::Gather32,
        Kernel::Scatter32,
        Kernel::Strided32,
        Kernel::Saxpy32,
        Kernel::TileStage,
    ];

    /// The kernel's name (its file stem).
    pub const fn name(self) -> &'static str {
        match self {
            Kernel::Copy32 => "copy32",
            Kernel::Widensum8 => "widensum8",
            Kernel::Gather32 => "gather32",
            Kernel::Scatter32 => "scatter32",
            Kernel::Strided32 => "strided32",
            Kernel::Saxpy32 => "saxpy32",
            Kernel::TileStage => "tile_stage",
        }
    }

    /// The kernel named `s`.
    pub fn from_name(s: &str) -> Result<Kernel, BenchError> {
        Kernel::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| BenchError::UnknownKernel(s.to_string()))
    }

    /// The kernel's assembly source (with its default `.equ N`).
    pub const fn source(self) -> &'static str {
        match self {
            Kernel::Copy32 => include_str!("../../seeds/kernels/bench/copy32.s"),
            Kernel::Widensum8 => include_str!("../../seeds/kernels/bench/widensum8.s"),
            Kernel::Gather32 => include_str!("../../seeds/kernels/bench/gather32.s"),
            Kernel::Scatter32 => include_str!("../../seeds/kernels/bench/scatter32.s"),
            Kernel::Strided32 => include_str!("../../seeds/kernels/bench/strided32.s"),
            Kernel::Saxpy32 => include_str!("../../seeds/kernels/bench/saxpy32.s"),
            Kernel::TileStage => include_str!("../../seeds/kernels/bench/tile_stage.s"),
        }
    }

    /// Whether the kernel works on contiguous data only (the "JIT >= 5x interp" set).
    pub const fn contiguous(self) -> bool {
        matches!(self, Kernel::Copy32 | Kernel::Widensum8 | Kernel::Saxpy32)
    }

    /// The kernel's `N` for `size` bytes of source data at `vl`: words for the 32-bit kernels,
    /// bytes for widensum8, words read (one per 64 bytes) for strided32, and the matrix
    /// dimension (`N * N * 4 <= size`, a multiple of VL) for tile_stage.
    pub fn param(self, size: u64, vl: u32) -> Result<u64, BenchError> {
        let bad = |why: &str| BenchError::BadSize {
            kernel: self.name(),
            size,
            why: why.to_string(),
        };
        if size == 0 || size > MAX_SIZE {
            return Err(bad("the source size must be 1 byte to 64 MiB"));
        }
        let n = match self {
            Kernel::Widensum8 => size,
            Kernel::Strided32 => size / 64,
            Kernel::TileStage => {
                let vl = u64::from(vl.max(1));
                let n = (size / 4).isqrt() / vl * vl;
                if n * vl * 4 > TILE_STAGE_TILE {
                    return Err(bad("one band of VL rows does not fit the 1 MiB tile"));
                }
                n
            }
            _ => size / 4,
        };
        if n == 0 {
            return Err(bad(
                "too small for one element (one VL-row band for tile_stage)",
            ));
        }
        Ok(n)
    }

    /// Elements one run processes for parameter `n`.
    pub const fn elements(self, n: u64) -> u64 {
        match self {
            Kernel::TileStage => n * n,
            _ => n,
        }
    }

    /// The source with its `.equ N` line set to `n`.
    pub fn source_with_n(self, n: u64) -> String {
        let mut out = String::with_capacity(self.source().len() + 16);
        let mut done = false;
        for line in self.source().lines() {
            let t = line.trim_start();
            let is_n = !done
                && t.len() > 4
                && t[..4].eq_ignore_ascii_case(".equ")
                && t[4..].trim_start().split(',').next().map(str::trim) == Some("N");
            if is_n {
                out.push_str(&format!("        .equ    N, {n}\n"));
                done = true;
            } else {
                out.push_str(line);
                out.push('\n');
            }
        }
        assert!(done, "bench kernel {} has no `.equ N` line", self.name());
        out
    }
}

/// Which engine (or host loop) runs a workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Which {
    /// The interpreter.
    Interp,
    /// The JIT, regions cached across runs (compile excluded).
    Jit,
    /// The tiered VM, cold every run (compile included).
    Tiered,
    /// The plain Rust reference loop.
    Native,
    /// `copy_from_slice` (copy32 only).
    Memcpy,
}

impl Which {
    /// The engines of the table, in column order.
    pub const ENGINES: [Which; 4] = [Which::Interp, Which::Jit, Which::Tiered, Which::Native];

    /// Its name.
    pub const fn name(self) -> &'static str {
        match self {
            Which::Interp => "interp",
            Which::Jit => "jit",
            Which::Tiered => "tiered",
            Which::Native => "native",
            Which::Memcpy => "memcpy",
        }
    }
}

/// A tiny deterministic generator (splitmix64) for bench data.
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator from `seed`.
    pub const fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }
    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The permutation multiplier for `n` indices: an odd K near 0.618 n, coprime to n.
pub fn perm_multiplier(n: u64) -> u64 {
    let mut k = ((n as f64 * 0.618_033_988_75) as u64) | 1;
    while gcd(k, n) != 1 {
        k += 2;
    }
    k
}

/// `idx[i] = i * K mod n` ([`perm_multiplier`]): a permutation of `0..n`.
pub fn permutation(n: u64) -> Vec<u32> {
    let k = perm_multiplier(n);
    (0..n)
        .map(|i| ((u128::from(i) * u128::from(k)) % u128::from(n)) as u32)
        .collect()
}

// ---------------------------------------------------------------------------------------
// The plain Rust reference loops (built with the workspace's release flags).

/// copy32: `dst[i] = src[i]`.
#[inline(never)]
pub fn native_copy32(src: &[u32], dst: &mut [u32]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = s;
    }
}

/// memcpy beside copy32.
#[inline(never)]
pub fn native_memcpy(src: &[u32], dst: &mut [u32]) {
    dst.copy_from_slice(src);
}

/// widensum8: the sum of the bytes sign-extended to 64 bits (wrapping).
#[inline(never)]
pub fn native_widensum8(src: &[i8]) -> i64 {
    src.iter().fold(0i64, |a, &b| a.wrapping_add(i64::from(b)))
}

/// gather32: `dst[i] = table[idx[i]]`.
#[inline(never)]
pub fn native_gather32(table: &[u32], idx: &[u32], dst: &mut [u32]) {
    for (d, &i) in dst.iter_mut().zip(idx) {
        *d = table[i as usize];
    }
}

/// scatter32: `dst[idx[i]] = src[i]`.
#[inline(never)]
pub fn native_scatter32(src: &[u32], idx: &[u32], dst: &mut [u32]) {
    for (&s, &i) in src.iter().zip(idx) {
        dst[i as usize] = s;
    }
}

/// strided32: `dst[i] = src[16 * i]`.
#[inline(never)]
pub fn native_strided32(src: &[u32], dst: &mut [u32]) {
    for (i, d) in dst.iter_mut().enumerate() {
        *d = src[16 * i];
    }
}

/// saxpy32: `y[i] = a * x[i] + y[i]` (two roundings).
#[inline(never)]
pub fn native_saxpy32(a: f32, x: &[f32], y: &mut [f32]) {
    for (y, &x) in y.iter_mut().zip(x) {
        *y += a * x;
    }
}

/// tile_stage: per band of `vl` rows, copy the rows into `tile`, then write each column of the
/// band as `vl` consecutive words of row c of `t` (`t[c][r] = m[r][c]`).
#[inline(never)]
pub fn native_tile_stage(m: &[u32], t: &mut [u32], tile: &mut [u32], n: usize, vl: usize) {
    for r0 in (0..n).step_by(vl) {
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

/// A host buffer whose first element sits at a chosen offset within a 4 KiB page
/// ([`PAGE_OFFSETS`]).
struct Placed<T> {
    v: Vec<T>,
    at: usize,
    len: usize,
}

impl<T: Copy + Default> Placed<T> {
    fn new(data: &[T], page_off: usize) -> Placed<T> {
        let sz = std::mem::size_of::<T>();
        let mut v = vec![T::default(); data.len() + 4096 / sz];
        let addr = v.as_ptr() as usize;
        let at = (page_off + 4096 - addr % 4096) % 4096 / sz;
        v[at..at + data.len()].copy_from_slice(data);
        Placed {
            v,
            at,
            len: data.len(),
        }
    }
}

impl<T> std::ops::Deref for Placed<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.v[self.at..self.at + self.len]
    }
}

impl<T> std::ops::DerefMut for Placed<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.v[self.at..self.at + self.len]
    }
}

/// The host-side data of one workload and the native output buffers.
enum Native {
    Copy {
        src: Placed<u32>,
        dst: Placed<u32>,
    },
    Widen {
        src: Placed<i8>,
        sum: i64,
    },
    Gather {
        table: Placed<u32>,
        idx: Placed<u32>,
        dst: Placed<u32>,
    },
    Scatter {
        src: Placed<u32>,
        idx: Placed<u32>,
        dst: Placed<u32>,
    },
    Strided {
        src: Placed<u32>,
        dst: Placed<u32>,
    },
    Saxpy {
        x: Placed<f32>,
        y: Placed<f32>,
        y0: Vec<f32>,
    },
    Tile {
        m: Placed<u32>,
        t: Placed<u32>,
        tile: Vec<u32>,
        vl: usize,
    },
}

fn words(rng: &mut SplitMix, n: u64) -> Vec<u32> {
    (0..n).map(|_| rng.next_u64() as u32).collect()
}

/// Finite f32 values in [-1000, 1000).
fn floats(rng: &mut SplitMix, n: u64) -> Vec<f32> {
    (0..n)
        .map(|_| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2000.0 - 1000.0)
        .collect()
}

impl Native {
    fn new(kernel: Kernel, n: u64, vl: u32) -> Native {
        let mut rng = SplitMix::new(0x6c61_6e65_6a69_7400 ^ kernel as u64);
        let [o_src, o_idx, o_dst] = PAGE_OFFSETS;
        let src = |v: Vec<u32>| Placed::new(&v, o_src);
        let idx = |v: Vec<u32>| Placed::new(&v, o_idx);
        let zdst = |len: u64| Placed::new(&vec![0u32; len as usize], o_dst);
        match kernel {
            Kernel::Copy32 => Native::Copy {
                src: src(words(&mut rng, n)),
                dst: zdst(n),
            },
            Kernel::Widensum8 => {
                let b: Vec<i8> = (0..n).map(|_| rng.next_u64() as i8).collect();
                Native::Widen {
                    src: Placed::new(&b, o_src),
                    sum: 0,
                }
            }
            Kernel::Gather32 => Native::Gather {
                table: src(words(&mut rng, n)),
                idx: idx(permutation(n)),
                dst: zdst(n),
            },
            Kernel::Scatter32 => Native::Scatter {
                src: src(words(&mut rng, n)),
                idx: idx(permutation(n)),
                dst: zdst(n),
            },
            Kernel::Strided32 => Native::Strided {
                src: src(words(&mut rng, 16 * n)),
                dst: zdst(n),
            },
            Kernel::Saxpy32 => {
                let x = floats(&mut rng, n);
                let y0 = floats(&mut rng, n);
                Native::Saxpy {
                    x: Placed::new(&x, o_src),
                    y: Placed::new(&y0, o_dst),
                    y0,
                }
            }
            Kernel::TileStage => Native::Tile {
                m: src(words(&mut rng, n * n)),
                t: zdst(n * n),
                tile: vec![0u32; (u64::from(vl) * n) as usize],
                vl: vl as usize,
            },
        }
    }

    /// Put the inputs into guest memory (every buffer the kernel reads).
    fn fill_guest(&self, m: &mut Machine) {
        match self {
            Native::Copy { src, .. } | Native::Strided { src, .. } => put_words(m, SRC, src),
            Native::Widen { src, .. } => {
                let dst = m
                    .mem
                    .bytes_mut(SRC, src.len() as u64)
                    .expect("bench buffer mapped");
                for (d, &s) in dst.iter_mut().zip(src.iter()) {
                    *d = s as u8;
                }
            }
            Native::Gather { table, idx, .. } => {
                put_words(m, SRC, table);
                put_words(m, IDX, idx);
            }
            Native::Scatter { src, idx, .. } => {
                put_words(m, SRC, src);
                put_words(m, IDX, idx);
            }
            Native::Saxpy { x, y0, .. } => {
                put_f32(m, SRC, x);
                put_f32(m, DST, y0);
            }
            Native::Tile { m: mat, .. } => put_words(m, SRC, mat),
        }
    }

    /// Restore inputs a run modifies (saxpy's y), guest and host.
    fn restore(&mut self, m: &mut Machine) {
        if let Native::Saxpy { y, y0, .. } = self {
            y.copy_from_slice(y0);
        }
        self.restore_guest(m);
    }

    /// Restore the guest's copy of the inputs a run modifies.
    fn restore_guest(&self, m: &mut Machine) {
        if let Native::Saxpy { y0, .. } = self {
            put_f32(m, DST, y0);
        }
    }

    #[inline]
    fn run(&mut self, memcpy: bool) {
        match self {
            Native::Copy { src, dst } => {
                if memcpy {
                    native_memcpy(black_box(src), black_box(dst));
                } else {
                    native_copy32(black_box(src), black_box(dst));
                }
            }
            Native::Widen { src, sum } => *sum = black_box(native_widensum8(black_box(src))),
            Native::Gather { table, idx, dst } => {
                native_gather32(black_box(table), black_box(idx), black_box(dst))
            }
            Native::Scatter { src, idx, dst } => {
                native_scatter32(black_box(src), black_box(idx), black_box(dst))
            }
            Native::Strided { src, dst } => native_strided32(black_box(src), black_box(dst)),
            Native::Saxpy { x, y, .. } => {
                native_saxpy32(black_box(SAXPY_A), black_box(x), black_box(y))
            }
            Native::Tile { m, t, tile, vl } => {
                let n = t.len().isqrt();
                native_tile_stage(black_box(m), black_box(t), black_box(tile), n, *vl)
            }
        }
    }

    /// Whether the guest's output (after a run) equals the native output.
    fn matches(&self, m: &Machine) -> bool {
        match self {
            Native::Copy { dst, .. }
            | Native::Gather { dst, .. }
            | Native::Scatter { dst, .. }
            | Native::Strided { dst, .. } => words_equal(m, DST, dst),
            Native::Widen { sum, .. } => m.regs.s[5] == *sum as u64,
            Native::Saxpy { y, .. } => {
                let bits: Vec<u32> = y.iter().map(|f| f.to_bits()).collect();
                words_equal(m, DST, &bits)
            }
            Native::Tile { t, tile, .. } => {
                words_equal(m, DST, t)
                    && m.tile.bytes(0, 4 * tile.len() as u64).is_some_and(|b| {
                        b.chunks_exact(4)
                            .zip(tile)
                            .all(|(c, &w)| c == w.to_le_bytes())
                    })
            }
        }
    }
}

fn put_words(m: &mut Machine, addr: u64, w: &[u32]) {
    let dst = m
        .mem
        .bytes_mut(addr, 4 * w.len() as u64)
        .expect("bench buffer mapped");
    for (c, &x) in dst.chunks_exact_mut(4).zip(w) {
        c.copy_from_slice(&x.to_le_bytes());
    }
}

fn put_f32(m: &mut Machine, addr: u64, w: &[f32]) {
    let dst = m
        .mem
        .bytes_mut(addr, 4 * w.len() as u64)
        .expect("bench buffer mapped");
    for (c, &x) in dst.chunks_exact_mut(4).zip(w) {
        c.copy_from_slice(&x.to_bits().to_le_bytes());
    }
}

fn words_equal(m: &Machine, addr: u64, w: &[u32]) -> bool {
    m.mem
        .bytes(addr, 4 * w.len() as u64)
        .is_some_and(|b| b.chunks_exact(4).zip(w).all(|(c, &x)| c == x.to_le_bytes()))
}

/// The JIT kept across runs: `vm::run`'s own dispatch loop ([`vm::Dispatcher`]) over one
/// long-lived [`Jit`], so repeated runs find every region compiled.
pub struct JitRunner(vm::Dispatcher);

impl JitRunner {
    /// A runner for the program `d` under `m`'s configuration.
    pub fn new(d: &Decoded, m: &Machine, threshold: u32) -> Result<JitRunner, BenchError> {
        vm::Dispatcher::new(d, m, threshold)
            .map(JitRunner)
            .map_err(|e| BenchError::Jit(e.to_string()))
    }

    /// The JIT (for direct compiles).
    pub fn jit_mut(&mut self) -> &mut Jit {
        self.0.jit_mut()
    }

    /// Start pcs of the regions this runner compiled, in compile order.
    pub fn compiled_pcs(&self) -> &[u64] {
        self.0.compiled_pcs()
    }

    /// Compilation statistics so far.
    pub fn stats(&self) -> JitStats {
        self.0.jit_stats()
    }

    /// Run `m` from its pc until it halts, traps or reaches its limit.
    pub fn run(&mut self, m: &mut Machine, d: &Decoded) -> Exit {
        self.0.run(m, d)
    }
}

/// One kernel at one size and VL, ready to run on any engine.
pub struct Workload {
    /// The kernel.
    pub kernel: Kernel,
    /// Source bytes requested.
    pub size: u64,
    /// The kernel's `N`.
    pub n: u64,
    /// VL.
    pub vl: u32,
    decoded: Decoded,
    machine: Machine,
    jit: JitRunner,
    native: Native,
    opts: VmOptions,
    /// Compile times (us) of every region the JIT compiled in its first run.
    pub compile_times_us: Vec<u64>,
    /// Machine-code bytes of those regions.
    pub code_bytes: usize,
    /// Tiered: compile time (us) and regions of its last run.
    pub tiered_compile: (u64, u64),
}

impl Workload {
    /// Build the workload: assemble, set up the machine, generate and fill the data.
    pub fn new(kernel: Kernel, size: u64, vl: u32) -> Result<Workload, BenchError> {
        let n = kernel.param(size, vl)?;
        let src = kernel.source_with_n(n);
        let program =
            assemble(&src, &format!("{}.s", kernel.name())).map_err(|e| BenchError::Asm {
                kernel: kernel.name(),
                msg: e.to_string(),
            })?;
        let config = Config {
            vl,
            ..Config::for_program(&program, Some(vl))
        };
        let mut machine = Machine::new(&program, config).map_err(|e| BenchError::Machine {
            kernel: kernel.name(),
            msg: e.to_string(),
        })?;
        let native = Native::new(kernel, n, vl);
        native.fill_guest(&mut machine);
        let decoded = Decoded::new(&program.code);
        let jit = JitRunner::new(&decoded, &machine, 0)?;
        Ok(Workload {
            kernel,
            size,
            n,
            vl,
            decoded,
            machine,
            jit,
            native,
            opts: VmOptions::default(),
            compile_times_us: Vec::new(),
            code_bytes: 0,
            tiered_compile: (0, 0),
        })
    }

    /// Elements one run processes.
    pub fn elements(&self) -> u64 {
        self.kernel.elements(self.n)
    }

    /// The machine (its memory holds the inputs and the last guest output).
    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    /// The persistent JIT runner.
    pub fn jit_runner(&mut self) -> &mut JitRunner {
        &mut self.jit
    }

    /// The decoded program.
    pub fn decoded(&self) -> &Decoded {
        &self.decoded
    }

    /// Quick reset before a timed run: scalars, mask, LC0BASE, trip, pc, retired.
    #[inline]
    fn quick_reset(&mut self) {
        let m = &mut self.machine;
        m.regs.s = [0; 32];
        m.regs.mask = all_lanes(m.config.vl);
        m.regs.lc0base = 0;
        m.regs.trip = 0;
        m.pc = 0;
        m.retired = 0;
    }

    /// One run on `which` (no input restore: a timed repetition).
    #[inline]
    pub fn run(&mut self, which: Which) -> Result<(), BenchError> {
        let exit = match which {
            Which::Native => {
                self.native.run(false);
                return Ok(());
            }
            Which::Memcpy => {
                self.native.run(true);
                return Ok(());
            }
            Which::Interp => {
                self.quick_reset();
                vm::run(Engine::Interp, &mut self.machine, &self.decoded, &self.opts).0
            }
            Which::Jit => {
                self.quick_reset();
                self.jit.run(&mut self.machine, &self.decoded)
            }
            Which::Tiered => {
                self.quick_reset();
                let (exit, stats) =
                    vm::run(Engine::Tiered, &mut self.machine, &self.decoded, &self.opts);
                self.tiered_compile = (stats.compile_us, stats.compiled_regions);
                exit
            }
        };
        if exit != Exit::Halted {
            return Err(BenchError::NotHalted {
                kernel: self.kernel.name(),
                engine: which.name(),
                exit,
            });
        }
        Ok(())
    }

    /// Run the native reference and every engine once from restored inputs (and a fully
    /// reset register file) and check each engine's output against the native one. The JIT's
    /// first run compiles its regions: their compile times land in `compile_times_us`.
    pub fn verify(&mut self) -> Result<(), BenchError> {
        self.native.restore(&mut self.machine);
        self.native.run(false);
        for which in [Which::Interp, Which::Jit, Which::Tiered] {
            // Stale output from the previous engine must not pass for this one's.
            // (A zero-length `bytes_mut` past the mapped extent panics in `Memory`.)
            let len = out_len(self.kernel, self.n);
            if len > 0 {
                if let Some(b) = self.machine.mem.bytes_mut(DST, len) {
                    b.fill(0);
                }
            }
            self.native.restore_guest(&mut self.machine);
            *self.machine.regs = *Regs::reset(self.vl);
            self.run(which)?;
            if which == Which::Jit && self.compile_times_us.is_empty() {
                let st = self.jit.stats();
                self.compile_times_us = st.compile_times_us;
                self.code_bytes = st.cache.module_bytes;
            }
            if !self.native.matches(&self.machine) {
                return Err(BenchError::Mismatch {
                    kernel: self.kernel.name(),
                    size: self.size,
                    vl: self.vl,
                    engine: which.name(),
                });
            }
        }
        Ok(())
    }

    /// Restore inputs a run modifies (saxpy32's y) in guest and host.
    pub fn restore(&mut self) {
        self.native.restore(&mut self.machine);
    }

    /// Median nanoseconds per run on `which` over `reps` repetitions of `iters` runs each.
    pub fn time(&mut self, which: Which, iters: u64, reps: usize) -> Result<Vec<f64>, BenchError> {
        let mut v = Vec::with_capacity(reps);
        for _ in 0..reps {
            v.push(self.time_once(which, iters)?);
        }
        Ok(v)
    }

    /// Nanoseconds per run of one repetition of `iters` runs.
    pub fn time_once(&mut self, which: Which, iters: u64) -> Result<f64, BenchError> {
        self.restore();
        let t0 = Instant::now();
        for _ in 0..iters {
            self.run(which)?;
        }
        Ok(t0.elapsed().as_nanos() as f64 / iters.max(1) as f64)
    }

    /// Runs per repetition so that one repetition lasts about `target`.
    pub fn calibrate(&mut self, which: Which, target: Duration) -> Result<u64, BenchError> {
        let one = self.time_once(which, 1)?.max(1.0);
        Ok(((target.as_nanos() as f64 / one) as u64).clamp(1, 1_000_000))
    }
}

/// Bytes of the kernel's memory output (0 for widensum8).
fn out_len(kernel: Kernel, n: u64) -> u64 {
    match kernel {
        Kernel::Widensum8 => 0,
        Kernel::TileStage => 4 * n * n,
        _ => 4 * n,
    }
}

/// Median of `v` (0 for an empty slice).
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let k = s.len() / 2;
    if s.len() % 2 == 1 {
        s[k]
    } else {
        (s[k - 1] + s[k]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_corrupted_output_is_a_mismatch() {
        for k in Kernel::ALL {
            let mut w = Workload::new(k, 1024, 8).unwrap();
            w.verify().unwrap();
            assert!(w.native.matches(&w.machine), "{}", k.name());
            if k == Kernel::Widensum8 {
                w.machine.regs.s[5] ^= 1;
            } else {
                let b = w.machine.mem.bytes_mut(DST + 4, 1).unwrap();
                b[0] ^= 0x40;
            }
            assert!(!w.native.matches(&w.machine), "{}", k.name());
        }
    }

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
