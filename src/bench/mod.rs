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
mod data;
pub mod launch;
pub mod native;
pub mod report;

use crate::vm::{self, Engine, VmOptions};
use data::Native;
use lanejit_interp::asm::assemble;
use lanejit_interp::interp::Decoded;
use lanejit_interp::machine::{Config, Exit, Machine, Regs, all_lanes};
use lanejit_jit::{Jit, JitStats};
use std::time::{Duration, Instant};

/// Guest address of the source buffer (src, table, x, the matrix).
pub const SRC: u64 = 0x1000_0000;
/// Offsets within a 4 KiB page of the source, index and destination buffers, in guest
/// memory and for the native loops alike. Buffers whose distance is a multiple of 4 KiB hit
/// 4K-aliasing stalls (on this host's AMD EPYC a 16 KiB `memcpy` between such buffers runs
/// 20x slower), so the placement is fixed rather than left to the allocator.
///
/// The guest buffers also sit 0x130000 bytes apart beyond their 256 MiB bases ([`IDX`],
/// [`DST`], ...): buffers whose distance has virtual-address bits 12 to 27 all clear (as
/// `0x2000_0880`, the layout before the eighteenth session) make 128-bit streaming loops run
/// at half speed on this host, while 256-bit ones do not notice (a standalone Rust saxpy over
/// 16 MiB, SSE2 build: 1.8-2.3 G elements/s at that distance, 3.3-4.6 G at others; AVX2
/// build: 4.5-5.4 G at all of them). The native loops' `Vec`s get the allocator's distances,
/// which are not of that kind, so the guest layout must not be either.
pub const PAGE_OFFSETS: [usize; 5] = [0, 0x440, 0x880, 0xcc0, 0x220];
/// Guest address of the index buffer (gather32, scatter32).
pub const IDX: u64 = 0x2013_0440;
/// Guest address of the destination buffer (dst, y, the transposed matrix).
pub const DST: u64 = 0x3026_0880;
/// Guest address of a fourth buffer (spmv_csr's rowptr).
pub const AUX: u64 = 0x4039_0cc0;
/// Guest address of a fifth buffer (spmv_csr's x).
pub const AUX2: u64 = 0x504c_0220;
/// Largest source size: each guest buffer maps 64 MiB past its address (68 MiB from its
/// 256 MiB base).
pub const MAX_SIZE: u64 = 64 << 20;
/// The sizes of the full suite: 16 KiB, 256 KiB and 64 MiB of source data.
pub const SIZES: [u64; 3] = [16 << 10, 256 << 10, 64 << 20];
/// Tile size of tile_stage (its `.tilesize`): one band of VL rows must fit.
pub const TILE_STAGE_TILE: u64 = 1 << 20;
/// spmv_csr: the most nonzeros in a row (its `.equ K`); rows hold `SPMV_K / 2 ..= SPMV_K`.
pub const SPMV_K: u64 = 16;
/// matmul256: the largest dimension, and the block of rows of B it stages (N is a multiple).
pub const MATMUL_N: u64 = 256;
/// matmul256: rows of B per staged block (its `.equ KB`).
pub const MATMUL_KB: u64 = 16;

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
    #[error("unknown kernel `{0}` (known: {names})", names = Kernel::names())]
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
    /// 2D 5-point f32 stencil with FMA, neighbours as contiguous loads.
    Stencil5Lc0,
    /// The same stencil, neighbours as `V.LWI.U` off vector addresses from `V.LC0`.
    Stencil5Vaddr,
    /// 8-tap f32 FIR with FMA, taps as contiguous loads.
    Fir8Lc0,
    /// The same FIR, taps as `V.LWI.U` off vector addresses from `V.LC0`.
    Fir8Vaddr,
    /// The same FIR in the `lc0` form, its coefficients loaded from memory in the body
    /// (uniform loads).
    Fir8Taps,
    /// The same FIR through scalar pointers bumped by VL * 4 each iteration and lane offsets
    /// built before the loop (strength-reduced).
    Fir8Bump,
    /// f32 sparse matrix times vector, CSR, one row per lane.
    SpmvCsr,
    /// 256 x 256 f32 matrix product, blocks of B staged in tile space.
    Matmul256,
    /// The same product in the i-k-j order straight from memory: a short inner loop
    /// entered once per (i, k).
    MatmulIkj,
    /// Lookup-table transform through a 4 MiB table.
    Lut32,
    /// AoS -> SoA of 4-word structs, fields as strided loads with `lc0` offsets.
    AosSoaLc0,
    /// The same, fields as `V.LWI.U` off vector addresses from `V.LC0`.
    AosSoaVaddr,
    /// int8 dot product.
    Dot8,
}

impl Kernel {
    /// Every kernel, in table order.
    pub const ALL: [Kernel; 20] = [
        Kernel::Copy32,
        Kernel::Widensum8,
        Kernel::Gather32,
        Kernel::Scatter32,
        Kernel::Strided32,
        Kernel::Saxpy32,
        Kernel::TileStage,
        Kernel::Stencil5Lc0,
        Kernel::Stencil5Vaddr,
        Kernel::Fir8Lc0,
        Kernel::Fir8Vaddr,
        Kernel::Fir8Taps,
        Kernel::Fir8Bump,
        Kernel::SpmvCsr,
        Kernel::Matmul256,
        Kernel::MatmulIkj,
        Kernel::Lut32,
        Kernel::AosSoaLc0,
        Kernel::AosSoaVaddr,
        Kernel::Dot8,
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
            Kernel::Stencil5Lc0 => "stencil5_lc0",
            Kernel::Stencil5Vaddr => "stencil5_vaddr",
            Kernel::Fir8Lc0 => "fir8_lc0",
            Kernel::Fir8Vaddr => "fir8_vaddr",
            Kernel::Fir8Taps => "fir8_taps",
            Kernel::Fir8Bump => "fir8_bump",
            Kernel::SpmvCsr => "spmv_csr",
            Kernel::Matmul256 => "matmul256",
            Kernel::MatmulIkj => "matmul_ikj",
            Kernel::Lut32 => "lut32",
            Kernel::AosSoaLc0 => "aos_soa_lc0",
            Kernel::AosSoaVaddr => "aos_soa_vaddr",
            Kernel::Dot8 => "dot8",
        }
    }

    /// Every kernel's name, space-separated.
    pub fn names() -> String {
        Kernel::ALL.map(Kernel::name).join(" ")
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
            Kernel::Stencil5Lc0 => include_str!("../../seeds/kernels/bench/stencil5_lc0.s"),
            Kernel::Stencil5Vaddr => include_str!("../../seeds/kernels/bench/stencil5_vaddr.s"),
            Kernel::Fir8Lc0 => include_str!("../../seeds/kernels/bench/fir8_lc0.s"),
            Kernel::Fir8Vaddr => include_str!("../../seeds/kernels/bench/fir8_vaddr.s"),
            Kernel::Fir8Taps => include_str!("../../seeds/kernels/bench/fir8_taps.s"),
            Kernel::Fir8Bump => include_str!("../../seeds/kernels/bench/fir8_bump.s"),
            Kernel::SpmvCsr => include_str!("../../seeds/kernels/bench/spmv_csr.s"),
            Kernel::Matmul256 => include_str!("../../seeds/kernels/bench/matmul256.s"),
            Kernel::MatmulIkj => include_str!("../../seeds/kernels/bench/matmul_ikj.s"),
            Kernel::Lut32 => include_str!("../../seeds/kernels/bench/lut32.s"),
            Kernel::AosSoaLc0 => include_str!("../../seeds/kernels/bench/aos_soa_lc0.s"),
            Kernel::AosSoaVaddr => include_str!("../../seeds/kernels/bench/aos_soa_vaddr.s"),
            Kernel::Dot8 => include_str!("../../seeds/kernels/bench/dot8.s"),
        }
    }

    /// Whether the kernel works on contiguous data only (the "JIT >= 5x interp" set).
    pub const fn contiguous(self) -> bool {
        matches!(self, Kernel::Copy32 | Kernel::Widensum8 | Kernel::Saxpy32)
    }

    /// The kernel's `N` for `size` bytes of source data at `vl`: words for the 32-bit kernels,
    /// bytes for widensum8 and dot8 (bytes of `a`), words read (one per 64 bytes) for
    /// strided32, the matrix dimension (`N * N * 4 <= size`, a multiple of VL) for tile_stage,
    /// the grid width (`N * N * 4 <= size`) for the stencils, outputs (`size / 4 - 7`: x holds
    /// `size / 4` floats) for fir8, rows (`size / 48`: the values of about 12 nonzeros per
    /// row fill `size`) for spmv_csr, structs (`size / 16`) for aos_soa, and for matmul256 and
    /// matmul_ikj the dimension `sqrt(size / 4)` rounded down to a multiple of 16 and capped
    /// at 256 (so every size from 256 KiB up runs the same 256 x 256 product).
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
            Kernel::Widensum8 | Kernel::Dot8 => size,
            Kernel::Strided32 => size / 64,
            Kernel::Stencil5Lc0 | Kernel::Stencil5Vaddr => {
                let n = (size / 4).isqrt();
                if n < 3 {
                    return Err(bad("the grid needs at least 3 x 3 points"));
                }
                n
            }
            Kernel::Fir8Lc0 | Kernel::Fir8Vaddr | Kernel::Fir8Taps | Kernel::Fir8Bump => {
                (size / 4).saturating_sub(7)
            }
            Kernel::SpmvCsr => size / (4 * 12),
            Kernel::Matmul256 | Kernel::MatmulIkj => {
                ((size / 4).isqrt() / MATMUL_KB * MATMUL_KB).min(MATMUL_N)
            }
            Kernel::AosSoaLc0 | Kernel::AosSoaVaddr => size / 16,
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
                "too small for one element (one VL-row band for tile_stage, 16 x 16 for matmul256)",
            ));
        }
        Ok(n)
    }

    /// Elements one run processes for parameter `n`: interior points for the stencils,
    /// nonzeros for spmv_csr, multiply-adds (`n^3`) for matmul256 and matmul_ikj.
    pub fn elements(self, n: u64) -> u64 {
        match self {
            Kernel::TileStage => n * n,
            Kernel::Stencil5Lc0 | Kernel::Stencil5Vaddr => n.saturating_sub(2).pow(2),
            Kernel::SpmvCsr => (0..n).map(spmv_row_len).sum(),
            Kernel::Matmul256 | Kernel::MatmulIkj => n * n * n,
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
    /// The tiered VM, cold every run but with a warm on-disk code cache (`--code-cache`):
    /// what a user's second `lanejit run` of a kernel costs.
    Cached,
    /// The plain Rust reference loop.
    Native,
    /// `copy_from_slice` (copy32 only).
    Memcpy,
}

impl Which {
    /// The engines of the table, in column order.
    pub const ENGINES: [Which; 5] = [
        Which::Interp,
        Which::Jit,
        Which::Tiered,
        Which::Native,
        Which::Cached,
    ];

    /// Its name.
    pub const fn name(self) -> &'static str {
        match self {
            Which::Interp => "interp",
            Which::Jit => "jit",
            Which::Tiered => "tiered",
            Which::Cached => "tiered+cache",
            Which::Native => "native",
            Which::Memcpy => "memcpy",
        }
    }
}

/// The deterministic generator of bench data (seeded, so every run builds the same data).
pub type BenchRng = rand_chacha::ChaCha8Rng;

/// A [`BenchRng`] from `seed`.
pub fn bench_rng(seed: u64) -> BenchRng {
    rand::SeedableRng::seed_from_u64(seed)
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

/// Nonzeros in row `r` of spmv_csr's matrix: `SPMV_K / 2 ..= SPMV_K`, from a hash of `r`.
pub fn spmv_row_len(r: u64) -> u64 {
    SPMV_K / 2 + rand::RngCore::next_u64(&mut bench_rng(r)) % (SPMV_K / 2 + 1)
}

/// `idx[i] = i * K mod n` ([`perm_multiplier`]): a permutation of `0..n`.
pub fn permutation(n: u64) -> Vec<u32> {
    let k = perm_multiplier(n);
    (0..n)
        .map(|i| ((u128::from(i) * u128::from(k)) % u128::from(n)) as u32)
        .collect()
}

/// A code cache in a temporary directory of its own, removed when dropped: the warm cache of
/// the `tiered+cache` measurements (the suite's and `bench FILE...`'s).
pub struct TempCodeCache {
    opts: VmOptions,
}

impl TempCodeCache {
    /// An empty cache in a new directory under the system's temporary directory.
    pub fn new() -> Result<TempCodeCache, BenchError> {
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "lanejit-bench-cache-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = lanejit_jit::diskcache::DiskCache::open(&dir)
            .map_err(|e| BenchError::Jit(format!("code cache {}: {e}", dir.display())))?;
        Ok(TempCodeCache {
            opts: VmOptions {
                code_cache: Some(std::sync::Arc::new(cache)),
                ..VmOptions::default()
            },
        })
    }

    /// The default VM options with this cache.
    pub fn opts(&self) -> &VmOptions {
        &self.opts
    }
}

impl Drop for TempCodeCache {
    fn drop(&mut self) {
        if let Some(c) = &self.opts.code_cache {
            let _ = std::fs::remove_dir_all(c.dir());
        }
    }
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
    /// [`Which::Cached`]'s code cache (removed with the workload).
    cached: TempCodeCache,
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
            cached: TempCodeCache::new()?,
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
            Which::Cached => {
                self.quick_reset();
                let opts = self.cached.opts();
                vm::run(Engine::Tiered, &mut self.machine, &self.decoded, opts).0
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
        // The cached tiered engine's first run fills its cache (the warm-up run does too).
        for which in [Which::Interp, Which::Jit, Which::Tiered, Which::Cached] {
            // Stale output from the previous engine must not pass for this one's.
            // (A zero-length `bytes_mut` past the mapped extent panics in `Memory`.)
            let len = self.native.out_bytes();
            if len > 0 {
                if let Some(b) = self.machine.mem_mut().and_then(|m| m.bytes_mut(DST, len)) {
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
        if matches!(which, Which::Tiered | Which::Cached) {
            // Each cold run alone: a compile the run left in hand finishes on another core,
            // untimed, so that the next run starts from a quiet machine, as a new process
            // would (the run itself never waits for it).
            // Less what reading the clock twice costs (`clock_cost`, measured: about 600 ns
            // on this project's earlier hosts, 6% of a 16 KiB kernel's run, 20 ns where the
            // kernel's clocksource is the TSC; the batches of the other engines pay it once).
            let mut total = std::time::Duration::ZERO;
            for _ in 0..iters {
                let t0 = Instant::now();
                self.run(which)?;
                total += t0.elapsed().saturating_sub(clock_cost());
                vm::wait_for_compilers();
            }
            return Ok(total.as_nanos() as f64 / iters.max(1) as f64);
        }
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

/// What timing nothing costs: the least of 64 readings of `Instant::now()` then `elapsed()`,
/// measured once per process.
fn clock_cost() -> Duration {
    static COST: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *COST.get_or_init(|| {
        (0..64)
            .map(|_| Instant::now().elapsed())
            .min()
            .unwrap_or_default()
    })
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
            if matches!(k, Kernel::Widensum8 | Kernel::Dot8) {
                w.machine.regs.s[5] ^= 1;
            } else {
                let b = w
                    .machine
                    .mem_mut()
                    .and_then(|m| m.bytes_mut(DST + 4, 1))
                    .unwrap();
                b[0] ^= 0x40;
            }
            assert!(!w.native.matches(&w.machine), "{}", k.name());
        }
    }

    /// The baseline and the AVX2+FMA builds of every native loop give the guest's bytes
    /// (on a host without AVX2 and FMA both runs take the baseline build).
    #[test]
    fn both_native_builds_give_the_same_output() {
        use std::sync::atomic::Ordering;
        for k in Kernel::ALL {
            let mut w = Workload::new(k, 4096, 8).unwrap();
            w.verify().unwrap();
            for baseline in [true, false] {
                // Fresh outputs: a run that wrote nothing cannot pass.
                let mut fresh = Native::new(k, w.n, w.vl);
                assert!(!fresh.matches(&w.machine), "{}", k.name());
                native::FORCE_BASELINE.store(baseline, Ordering::Relaxed);
                fresh.run(false);
                native::FORCE_BASELINE.store(false, Ordering::Relaxed);
                let ok = fresh.matches(&w.machine);
                assert!(ok, "{} (baseline build: {baseline})", k.name());
            }
        }
    }

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
