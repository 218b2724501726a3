//! The data of one bench workload: the host-side inputs the kernel reads (generated once,
//! deterministically), the native reference's output buffers, how the inputs are put into
//! guest memory and how the guest's output is compared with the native one.
//!
//! Every buffer sits at a fixed offset within its 4 KiB page ([`PAGE_OFFSETS`]), the same
//! on the host and in guest memory, so neither side suffers 4K aliasing the other does not.

use super::native::{self, LUT_ENTRIES, SAXPY_A};
use super::{
    AUX, AUX2, BenchRng, DST, IDX, Kernel, PAGE_OFFSETS, SPMV_K, SRC, bench_rng, permutation,
    spmv_row_len,
};
use lanejit_interp::machine::Machine;
use rand::RngCore as _;
use std::hint::black_box;

/// A host buffer whose first element sits at a chosen offset within a 4 KiB page
/// ([`PAGE_OFFSETS`]).
pub(super) struct Placed<T> {
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

    /// `len` default (zero) elements.
    fn zeros(len: u64, page_off: usize) -> Placed<T> {
        Placed::new(&vec![T::default(); len as usize], page_off)
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

/// An element type of bench data and its little-endian bytes in guest memory.
pub(super) trait Elem: Copy + Default {
    /// Bytes per element.
    const SIZE: usize;
    /// Write the element's `SIZE` bytes to `out`.
    fn write(self, out: &mut [u8]);
}

impl Elem for u32 {
    const SIZE: usize = 4;
    fn write(self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_le_bytes());
    }
}

impl Elem for f32 {
    const SIZE: usize = 4;
    fn write(self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_bits().to_le_bytes());
    }
}

impl Elem for i8 {
    const SIZE: usize = 1;
    fn write(self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_le_bytes());
    }
}

/// Copy `data` into guest memory at `addr` (a bench buffer: mapped by the kernel).
pub(super) fn put<T: Elem>(m: &mut Machine, addr: u64, data: &[T]) {
    let dst = m
        .mem_mut()
        .and_then(|mem| mem.bytes_mut(addr, (T::SIZE * data.len()) as u64))
        .expect("bench buffer mapped, memory not shared");
    for (c, &x) in dst.chunks_exact_mut(T::SIZE).zip(data) {
        x.write(c);
    }
}

/// Whether `bytes` hold exactly `data`.
fn same<T: Elem>(bytes: Option<&[u8]>, data: &[T]) -> bool {
    let mut buf = [0u8; 8];
    bytes.is_some_and(|b| {
        b.len() == T::SIZE * data.len()
            && b.chunks_exact(T::SIZE).zip(data).all(|(c, &x)| {
                x.write(&mut buf[..T::SIZE]);
                c == &buf[..T::SIZE]
            })
    })
}

/// Whether guest memory at `addr` holds exactly `data`.
fn mem_same<T: Elem>(m: &Machine, addr: u64, data: &[T]) -> bool {
    same(m.mem.bytes(addr, (T::SIZE * data.len()) as u64), data)
}

fn words(rng: &mut BenchRng, n: u64) -> Vec<u32> {
    (0..n).map(|_| rng.next_u64() as u32).collect()
}

fn bytes(rng: &mut BenchRng, n: u64) -> Vec<i8> {
    (0..n).map(|_| rng.next_u64() as i8).collect()
}

/// Finite f32 values in [-1000, 1000).
fn floats(rng: &mut BenchRng, n: u64) -> Vec<f32> {
    (0..n)
        .map(|_| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2000.0 - 1000.0)
        .collect()
}

/// The host-side data of one workload and the native output buffers. Every output lives
/// at [`DST`] in guest memory (or in `s5` for the sums).
pub(super) enum Native {
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
    Stencil {
        inp: Placed<f32>,
        dst: Placed<f32>,
        n: usize,
    },
    Fir {
        x: Placed<f32>,
        dst: Placed<f32>,
    },
    Spmv {
        val: Placed<f32>,
        col: Placed<u32>,
        rowptr: Placed<u32>,
        x: Placed<f32>,
        dst: Placed<f32>,
    },
    Matmul {
        a: Placed<f32>,
        b: Placed<f32>,
        dst: Placed<f32>,
        n: usize,
    },
    Lut {
        src: Placed<u32>,
        lut: Placed<u32>,
        dst: Placed<u32>,
    },
    Aos {
        src: Placed<u32>,
        dst: Placed<u32>,
    },
    Dot {
        a: Placed<i8>,
        b: Placed<i8>,
        sum: i64,
    },
}

/// spmv_csr's CSR arrays for `n` rows: rowptr (n + 1 entries), col and val (the nonzeros,
/// then [`SPMV_K`] padding entries of col 0 and val 0 that a lane past its row's end reads).
fn csr(rng: &mut BenchRng, n: u64) -> (Vec<u32>, Vec<u32>, Vec<f32>) {
    let mut rowptr = Vec::with_capacity(n as usize + 1);
    rowptr.push(0u32);
    let mut nnz = 0u64;
    for r in 0..n {
        nnz += spmv_row_len(r);
        rowptr.push(nnz as u32);
    }
    let mut col: Vec<u32> = (0..nnz).map(|_| (rng.next_u64() % n) as u32).collect();
    let mut val = floats(rng, nnz);
    col.resize((nnz + SPMV_K) as usize, 0);
    val.resize((nnz + SPMV_K) as usize, 0.0);
    (rowptr, col, val)
}

impl Native {
    /// Generate the data of `kernel` with parameter `n` at `vl`.
    pub(super) fn new(kernel: Kernel, n: u64, vl: u32) -> Native {
        // The two forms of a kernel run on the same data.
        let twin = match kernel {
            Kernel::Stencil5Vaddr => Kernel::Stencil5Lc0,
            Kernel::Fir8Vaddr | Kernel::Fir8Taps | Kernel::Fir8Bump => Kernel::Fir8Lc0,
            Kernel::AosSoaVaddr => Kernel::AosSoaLc0,
            k => k,
        };
        let mut rng = bench_rng(0x6c61_6e65_6a69_7400 ^ twin as u64);
        let [o_src, o_idx, o_dst, o_aux, o_aux2] = PAGE_OFFSETS;
        let src = |v: Vec<u32>| Placed::new(&v, o_src);
        let fsrc = |v: Vec<f32>| Placed::new(&v, o_src);
        let idx = |v: Vec<u32>| Placed::new(&v, o_idx);
        let zdst = |len: u64| Placed::<u32>::zeros(len, o_dst);
        let fdst = |len: u64| Placed::<f32>::zeros(len, o_dst);
        match kernel {
            Kernel::Copy32 => Native::Copy {
                src: src(words(&mut rng, n)),
                dst: zdst(n),
            },
            Kernel::Widensum8 => Native::Widen {
                src: Placed::new(&bytes(&mut rng, n), o_src),
                sum: 0,
            },
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
                    x: fsrc(x),
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
            Kernel::Stencil5Lc0 | Kernel::Stencil5Vaddr => Native::Stencil {
                inp: fsrc(floats(&mut rng, n * n)),
                dst: fdst(n * n),
                n: n as usize,
            },
            Kernel::Fir8Lc0 | Kernel::Fir8Vaddr | Kernel::Fir8Taps | Kernel::Fir8Bump => {
                Native::Fir {
                    x: fsrc(floats(&mut rng, n + 7)),
                    dst: fdst(n),
                }
            }
            Kernel::SpmvCsr => {
                let (rowptr, col, val) = csr(&mut rng, n);
                Native::Spmv {
                    val: fsrc(val),
                    col: idx(col),
                    rowptr: Placed::new(&rowptr, o_aux),
                    x: Placed::new(&floats(&mut rng, n), o_aux2),
                    dst: fdst(n),
                }
            }
            Kernel::Matmul256 | Kernel::MatmulIkj => Native::Matmul {
                a: fsrc(floats(&mut rng, n * n)),
                b: Placed::new(&floats(&mut rng, n * n), o_idx),
                dst: fdst(n * n),
                n: n as usize,
            },
            Kernel::Lut32 => Native::Lut {
                src: src(words(&mut rng, n)),
                lut: idx(words(&mut rng, LUT_ENTRIES as u64)),
                dst: zdst(n),
            },
            Kernel::AosSoaLc0 | Kernel::AosSoaVaddr => Native::Aos {
                src: src(words(&mut rng, 4 * n)),
                dst: zdst(4 * n),
            },
            Kernel::Dot8 => Native::Dot {
                a: Placed::new(&bytes(&mut rng, n), o_src),
                b: Placed::new(&bytes(&mut rng, n), o_idx),
                sum: 0,
            },
        }
    }

    /// Put the inputs into guest memory (every buffer the kernel reads).
    pub(super) fn fill_guest(&self, m: &mut Machine) {
        match self {
            Native::Copy { src, .. } | Native::Strided { src, .. } | Native::Aos { src, .. } => {
                put(m, SRC, src)
            }
            Native::Tile { m: mat, .. } => put(m, SRC, mat),
            Native::Widen { src, .. } => put(m, SRC, src),
            Native::Gather { table, idx, .. } => {
                put(m, SRC, table);
                put(m, IDX, idx);
            }
            Native::Scatter { src, idx, .. } | Native::Lut { src, lut: idx, .. } => {
                put(m, SRC, src);
                put(m, IDX, idx);
            }
            Native::Saxpy { x, y0, .. } => {
                put(m, SRC, x);
                put(m, DST, y0);
            }
            Native::Stencil { inp: x, .. } | Native::Fir { x, .. } => put(m, SRC, x),
            Native::Spmv {
                val,
                col,
                rowptr,
                x,
                ..
            } => {
                put(m, SRC, val);
                put(m, IDX, col);
                put(m, AUX, rowptr);
                put(m, AUX2, x);
            }
            Native::Matmul { a, b, .. } => {
                put(m, SRC, a);
                put(m, IDX, b);
            }
            Native::Dot { a, b, .. } => {
                put(m, SRC, a);
                put(m, IDX, b);
            }
        }
    }

    /// Restore inputs a run modifies (saxpy's y), guest and host.
    pub(super) fn restore(&mut self, m: &mut Machine) {
        if let Native::Saxpy { y, y0, .. } = self {
            y.copy_from_slice(y0);
        }
        self.restore_guest(m);
    }

    /// Restore the guest's copy of the inputs a run modifies.
    pub(super) fn restore_guest(&self, m: &mut Machine) {
        if let Native::Saxpy { y0, .. } = self {
            put(m, DST, y0);
        }
    }

    /// Run the native loop (`memcpy`: `copy_from_slice` instead of copy32's loop).
    #[inline]
    pub(super) fn run(&mut self, memcpy: bool) {
        use black_box as bb;
        match self {
            Native::Copy { src, dst } if memcpy => native::memcpy(bb(src), bb(dst)),
            Native::Copy { src, dst } => native::copy32(bb(src), bb(dst)),
            Native::Widen { src, sum } => *sum = bb(native::widensum8(bb(src))),
            Native::Gather { table, idx, dst } => native::gather32(bb(table), bb(idx), bb(dst)),
            Native::Scatter { src, idx, dst } => native::scatter32(bb(src), bb(idx), bb(dst)),
            Native::Strided { src, dst } => native::strided32(bb(src), bb(dst)),
            Native::Saxpy { x, y, .. } => native::saxpy32(bb(SAXPY_A), bb(x), bb(y)),
            Native::Tile { m, t, tile, vl } => {
                let n = t.len().isqrt();
                native::tile_stage(bb(m), bb(t), bb(tile), n, *vl)
            }
            Native::Stencil { inp, dst, n } => native::stencil5(bb(inp), bb(dst), *n),
            Native::Fir { x, dst } => native::fir8(bb(x), bb(dst)),
            Native::Spmv {
                val,
                col,
                rowptr,
                x,
                dst,
            } => native::spmv_csr(bb(rowptr), bb(col), bb(val), bb(x), bb(dst)),
            Native::Matmul { a, b, dst, n } => native::matmul(bb(a), bb(b), bb(dst), *n),
            Native::Lut { src, lut, dst } => native::lut32(bb(src), bb(lut), bb(dst)),
            Native::Aos { src, dst } => native::aos_soa(bb(src), bb(dst)),
            Native::Dot { a, b, sum } => *sum = bb(native::dot8(bb(a), bb(b))),
        }
    }

    /// The native output: words or floats at [`DST`], or the sum `s5` holds.
    fn output(&self) -> Output<'_> {
        match self {
            Native::Widen { sum, .. } | Native::Dot { sum, .. } => Output::Sum(*sum),
            Native::Copy { dst, .. }
            | Native::Gather { dst, .. }
            | Native::Scatter { dst, .. }
            | Native::Strided { dst, .. }
            | Native::Tile { t: dst, .. }
            | Native::Lut { dst, .. }
            | Native::Aos { dst, .. } => Output::Words(dst),
            Native::Saxpy { y: dst, .. }
            | Native::Stencil { dst, .. }
            | Native::Fir { dst, .. }
            | Native::Spmv { dst, .. }
            | Native::Matmul { dst, .. } => Output::Floats(dst),
        }
    }

    /// Bytes of the output at [`DST`] (0 for the sums in `s5`).
    pub(super) fn out_bytes(&self) -> u64 {
        match self.output() {
            Output::Sum(_) => 0,
            Output::Words(w) => 4 * w.len() as u64,
            Output::Floats(f) => 4 * f.len() as u64,
        }
    }

    /// Whether the guest's output (after a run) equals the native output (and for
    /// tile_stage the tile's band too).
    pub(super) fn matches(&self, m: &Machine) -> bool {
        if let Native::Tile { tile, .. } = self {
            if !same(m.tile.bytes(0, 4 * tile.len() as u64), tile) {
                return false;
            }
        }
        match self.output() {
            Output::Sum(sum) => m.regs.s[5] == sum as u64,
            Output::Words(w) => mem_same(m, DST, w),
            Output::Floats(f) => mem_same(m, DST, f),
        }
    }
}

/// A workload's native output ([`Native::output`]).
enum Output<'a> {
    /// The sum in `s5`.
    Sum(i64),
    /// Words at [`DST`].
    Words(&'a [u32]),
    /// Floats at [`DST`].
    Floats(&'a [f32]),
}
