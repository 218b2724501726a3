//! Guest memory and tile space: the one place every engine checks and performs accesses.
//!
//! Guest memory is a single anonymous `memmap2` mapping covering `[0, extent)`, where `extent`
//! is one past the highest mapped page (never above the memory limit). It is reserved with
//! `MAP_NORESERVE` and committed lazily by the host kernel, so mapping gigabytes costs nothing
//! until touched. On Linux it asks for transparent huge pages (`MADV_HUGEPAGE`, as QEMU does
//! for guest RAM; hosts whose THP setting is `madvise`, the common default, give none
//! without it): a kernel gathering from a 16 MiB table ran 1.4-2.2x faster with them
//! (gather32 at 16 MiB, jit: 128-197 against 259-287 Melem/s; the fuzzer's cases 18% faster),
//! and the resident memory of a guest that touches one byte in each 2 MiB is bounded by the
//! memory limit either way. A byte table holds one permission per 4 KiB page ([`PERM_R`], [`PERM_W`]; 0 is
//! unmapped); two more give, per page, how many consecutive pages from it are readable and
//! writable (a `u32`, exact: at most 2^28 pages), so compiled code checks a gather's whole EA
//! range, whatever its span, with one lookup. The three tables live in anonymous memory too and
//! are filled from the program's range list in chunks of 16 MiB of guest memory: at once for
//! a small map, else on first use (see [`Memory`]), so their cost follows the mapped ranges and
//! the chunks touched, not the span (a 1 TiB mapping: a few MiB and well under a millisecond).
//! Tile space is a byte vector with one permission byte per 64-byte granule and its two run
//! tables.
//!
//! [`Memory::check`] and [`Tile::check`] resolve a whole access range at once: a range of up to
//! one page touches at most two pages, so a check is a bounds compare and two table loads. Once
//! a range has passed, callers copy straight through the host pointer. The JIT reads the same
//! tables through [`MemView`] and [`TileView`], whose `#[repr(C)]` layout it relies on.
//!
//! # Sharing
//!
//! A launch of many groups (contract section 9) gives every group's machine the same
//! [`Memory`] (an `Arc`); on several threads, groups run at the same time, and a racing guest
//! program makes them access the same bytes at once. What this relies on, precisely:
//!
//! - The guest bytes are one anonymous mapping held as a [`MmapRaw`]: Rust code reaches them
//!   only through raw pointers ([`Memory::host_ptr`]), never through a reference that another
//!   thread's writes could invalidate, except (a) [`Memory::bytes`], [`Memory::bytes_mut`] and
//!   [`Memory::mapped_pages`], which the launcher calls only before the workers start (set-up,
//!   `--load`) or after all of them have been joined (dumps, `--save`); and (b) the
//!   interpreter's fast paths, which form short-lived slices over checked ranges and run only
//!   when no other thread uses the memory (one thread, or one group).
//! - On several threads, the interpreter moves each lane's bytes with one load or store in
//!   inline assembly on x86-64, and a contiguous group with every lane active with one
//!   `rep movsb` (relaxed atomic byte accesses, `AtomicU8::from_ptr`, on other hosts;
//!   `interp::mem_ops`, `SharedMemSpace`), and compiled code with ordinary machine loads and
//!   stores (1 to 16 bytes). Neither is a Rust access: an assembly block, like a
//!   call into compiled code through a function pointer, is opaque to the compiler, which must
//!   assume it reads and writes the memory it is given, and its effect must be one that Rust
//!   code could have had. Every outcome of a racing plain load or store of n bytes on x86-64
//!   (TSO) and AArch64 (single-copy atomic per byte at least: some mix of old and new bytes
//!   of the same range, no other bytes, no invented values) is an outcome of n relaxed atomic
//!   byte accesses. So the launch behaves as a program in which every concurrent access to
//!   guest memory is a relaxed atomic byte access: races give unspecified values, as the
//!   contract says, and never undefined behaviour. What this relies on beyond Rust's own
//!   rules is only that hardware model.
//! - Safety never depends on the bytes read: every access range is checked against the
//!   mapping and the page tables before it is made, whatever a racing write put in the
//!   registers that form its address. The page tables themselves are atomics (see
//!   [`Memory`]); registers and tiles belong to one thread each.

use crate::program::{MemPerm, MemRange, PAGE_SIZE, Program, Space, TILE_GRANULE, TilePerm};
use memmap2::{MmapMut, MmapOptions, MmapRaw};
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};

/// Permission bit: readable.
pub const PERM_R: u8 = 1;
/// Permission bit: writable.
pub const PERM_W: u8 = 2;

/// Read or write (serialized as `read`, `write`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// A load.
    Read,
    /// A store.
    Write,
}

impl Access {
    /// The permission bit this access needs.
    #[inline(always)]
    pub const fn need(self) -> u8 {
        match self {
            Access::Read => PERM_R,
            Access::Write => PERM_W,
        }
    }

    /// The JSON name.
    pub const fn name(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }
}

/// Why an access range failed its check (the trap kind of a memory fault).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessFault {
    /// A byte is unmapped or at/above the memory limit, or the range wraps past 2^64.
    PageFault,
    /// A store touches a read-only page.
    PermissionFault,
    /// A byte lies outside tile space.
    TileOutOfBounds,
    /// A granule is `none`, or a store touches an `r` granule.
    TileUnauthorized,
}

/// Guest memory could not be set up.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MemoryError {
    /// The program maps memory at or beyond the limit.
    #[error("the program maps memory up to 0x{end:x}, beyond the memory limit 0x{limit:x}")]
    BeyondLimit {
        /// One past the highest mapped byte.
        end: u64,
        /// The limit.
        limit: u64,
    },
    /// The memory limit is not a multiple of 4 KiB or is above 2^40.
    #[error("memory limit 0x{0:x} must be a multiple of 4096 and at most 2^40")]
    BadLimit(u64),
    /// The host refused the reservation.
    #[error("cannot reserve 0x{0:x} bytes of guest memory: {1}")]
    Reserve(u64, String),
    /// A page range to map or unmap does not start or end on a page boundary, or is empty.
    #[error(
        "pages to map start at 0x{addr:x} and span 0x{len:x} bytes: both must be non-zero multiples of 4096"
    )]
    Unaligned {
        /// First byte.
        addr: u64,
        /// Length in bytes.
        len: u64,
    },
    /// Initial data falls outside mapped memory or the tile.
    #[error("initial data at 0x{0:x} lies outside the mapped {1}")]
    DataOutside(u64, &'static str),
}

/// Raw view of guest memory for compiled code. `base[0..extent)` is host-accessible;
/// `perms[0..extent / 4096)` holds page permissions.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MemView {
    /// Host address of guest address 0.
    pub base: *mut u8,
    /// One past the highest host-backed guest address (a multiple of 4096).
    pub extent: u64,
    /// Page permission table.
    pub perms: *const u8,
    /// Readable run lengths: the number of consecutive readable pages starting at each page
    /// (`extent / 4096` entries).
    pub run_r: *const u32,
    /// Writable run lengths, likewise.
    pub run_w: *const u32,
}

/// Raw view of tile space for compiled code.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TileView {
    /// Host address of tile address 0.
    pub base: *mut u8,
    /// Tile size in bytes (a multiple of 64).
    pub size: u64,
    /// Granule permission table (`size / 64` entries).
    pub perms: *const u8,
    /// Readable run lengths: the number of consecutive readable granules starting at each
    /// granule (as many entries as `perms`).
    pub run_r: *const u32,
    /// Writable run lengths, likewise.
    pub run_w: *const u32,
}

/// Per granule, how many consecutive granules from it have permission `bit`: compiled code
/// checks a whole group's range with one lookup.
fn granule_runs(perms: &[u8], bit: u8) -> Vec<u32> {
    let mut run = vec![0u32; perms.len()];
    for g in (0..perms.len()).rev() {
        if perms[g] & bit != 0 {
            run[g] = run.get(g + 1).map_or(1, |&n| n + 1);
        }
    }
    run
}

/// Pages per lazily filled chunk of the per-page tables: one host page of the permission
/// table (16 MiB of guest memory).
const CHUNK_PAGES: u64 = 4096;

/// Mapped pages up to which [`Memory::new`] fills the per-page tables at once; a larger map
/// fills each chunk on its first check (see [`Memory`]).
const EAGER_PAGES: u64 = 1 << 14;

/// A zero-initialised table of `T` (an atomic integer) in anonymous memory that the host
/// commits only where it is written.
struct Table<T> {
    map: MmapMut,
    len: usize,
    /// Where the table starts in the mapping (see [`Table::new`]).
    skew: usize,
    _t: std::marker::PhantomData<T>,
}

impl<T> Table<T> {
    /// A table of `len` entries starting `skew` bytes into its mapping (a multiple of the
    /// entry size below 4096): tables and guest memory that all started on a page boundary
    /// would make the table entries of hot pages share their low 12 address bits with the
    /// guest data, and the host's memory disambiguation stalls on such 4 KiB aliases (a
    /// gather loop measured 25% slower).
    fn new(len: usize, skew: usize) -> Result<Table<T>, MemoryError> {
        let bytes = len * std::mem::size_of::<T>() + skew;
        let map = MmapOptions::new()
            .len(bytes.max(1))
            .no_reserve_swap()
            .map_anon()
            .map_err(|e| MemoryError::Reserve(bytes as u64, e.to_string()))?;
        Ok(Table {
            map,
            len,
            skew,
            _t: std::marker::PhantomData,
        })
    }

    fn as_slice(&self) -> &[T] {
        // SAFETY: the mapping is page-aligned and `skew + len * size_of::<T>()` bytes long,
        // `skew` a multiple of `T`'s alignment; it is zero-filled by the host and lives as
        // long as `self`; `T` is an atomic integer, for which all-zero bytes are a valid
        // value, and its shared accesses go through atomic operations only.
        unsafe {
            std::slice::from_raw_parts(self.map.as_ptr().add(self.skew).cast::<T>(), self.len)
        }
    }

    fn as_ptr<U>(&self) -> *const U {
        self.as_slice().as_ptr().cast()
    }
}

/// Guest memory.
///
/// The per-page tables (permissions, readable and writable runs) are filled in chunks of
/// [`CHUNK_PAGES`] pages: all at once for a map of at most [`EAGER_PAGES`] pages, else each
/// chunk on the first [`Memory::check`] that meets an entry of 0 there. A 0 read by compiled
/// code in a chunk not filled yet looks like an unmapped page: the check fails, and the
/// interpreter, re-executing the instruction, fills the chunk. So memory for the tables grows
/// with the chunks touched, not with the span of the map (a 1 TiB mapping costs its range
/// list). Filling is idempotent and uses atomic stores, so it is safe through `&self`.
pub struct Memory {
    /// The guest bytes, accessed only through raw pointers (see "Sharing" above).
    map: MmapRaw,
    extent: u64,
    /// The memory limit: nothing is ever mapped at or above it.
    limit: u64,
    /// The program's map (sorted, non-overlapping, adjacent ranges of one permission merged).
    ranges: Vec<MemRange>,
    /// Per range: the end address of the chain of touching ranges from it (its readable run).
    read_end: Vec<u64>,
    perms: Table<AtomicU8>,
    run_r: Table<AtomicU32>,
    run_w: Table<AtomicU32>,
    /// One bit per chunk: filled.
    filled: Vec<AtomicU64>,
}

impl std::fmt::Debug for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memory")
            .field("extent", &self.extent)
            .finish_non_exhaustive()
    }
}

impl Memory {
    /// Reserve memory for `program`'s map under `limit` (no data copied yet).
    pub fn new(program: &Program, limit: u64) -> Result<Memory, MemoryError> {
        if limit % PAGE_SIZE != 0 || limit > crate::program::MAX_MEM_LIMIT {
            return Err(MemoryError::BadLimit(limit));
        }
        let extent = program.mapped_end();
        if extent > limit {
            return Err(MemoryError::BeyondLimit { end: extent, limit });
        }
        let host_len = extent.max(PAGE_SIZE);
        let map = MmapRaw::from(
            MmapOptions::new()
                .len(host_len as usize)
                .no_reserve_swap()
                .map_anon()
                .map_err(|e| MemoryError::Reserve(host_len, e.to_string()))?,
        );
        huge_pages(&map);
        let mut m = Memory {
            map,
            extent,
            limit,
            ranges: Vec::new(),
            read_end: Vec::new(),
            perms: Table::new(0, 0)?,
            run_r: Table::new(0, 0)?,
            run_w: Table::new(0, 0)?,
            filled: Vec::new(),
        };
        m.set_ranges(program.mem_map.clone())?;
        Ok(m)
    }

    /// Map `ranges` (sorted, non-overlapping, inside `extent`) and build the per-page tables
    /// anew for them.
    fn set_ranges(&mut self, ranges: Vec<MemRange>) -> Result<(), MemoryError> {
        let pages = (self.extent / PAGE_SIZE) as usize;
        let mut read_end = vec![0u64; ranges.len()];
        for i in (0..ranges.len()).rev() {
            let end = ranges[i].start + ranges[i].len;
            read_end[i] = match ranges.get(i + 1) {
                Some(n) if n.start == end => read_end[i + 1],
                _ => end,
            };
        }
        let chunks = (pages as u64).div_ceil(CHUNK_PAGES) as usize;
        self.perms = Table::new(pages, 0x440)?;
        self.run_r = Table::new(pages, 0x880)?;
        self.run_w = Table::new(pages, 0xcc0)?;
        self.filled = (0..chunks.div_ceil(64))
            .map(|_| AtomicU64::new(0))
            .collect();
        self.ranges = ranges;
        self.read_end = read_end;
        let mapped: u64 = self.ranges.iter().map(|r| r.len / PAGE_SIZE).sum();
        if mapped <= EAGER_PAGES {
            for r in &self.ranges {
                let first = r.start / PAGE_SIZE / CHUNK_PAGES;
                let last = (r.start + r.len - 1) / PAGE_SIZE / CHUNK_PAGES;
                for c in first..=last {
                    self.fill(c);
                }
            }
        }
        Ok(())
    }

    /// Map, re-protect or unmap the pages `[addr, addr + len)` (`addr` and `len` multiples of
    /// 4096, `len` > 0): `Some(perm)` maps them with `perm` (pages that were not mapped read
    /// zero; mapped pages keep their bytes), `None` unmaps them (their bytes are dropped: a
    /// later map reads zero). Memory grows when the range lies beyond its extent, never to or
    /// beyond the memory limit. The per-page tables are built anew (filled lazily for a large
    /// map, as by [`Memory::new`]), so a change costs about what setting up the map did.
    ///
    /// It takes `&mut self`: no launch and no compiled code is using the memory then, and
    /// compiled code reads the tables anew ([`Memory::view`]) at every entry.
    pub fn set_pages(
        &mut self,
        addr: u64,
        len: u64,
        perm: Option<MemPerm>,
    ) -> Result<(), MemoryError> {
        if addr % PAGE_SIZE != 0 || len % PAGE_SIZE != 0 || len == 0 {
            return Err(MemoryError::Unaligned { addr, len });
        }
        let end = match addr.checked_add(len) {
            Some(e) if e <= self.limit => e,
            _ => {
                return Err(MemoryError::BeyondLimit {
                    end: addr.saturating_add(len),
                    limit: self.limit,
                });
            }
        };
        // Pages that stop being mapped read zero if mapped again (the host drops them).
        if perm.is_none() {
            let mut at = addr;
            while at < end.min(self.extent) {
                if self.range_mapped(at, PAGE_SIZE) {
                    self.zero(at, PAGE_SIZE);
                }
                at += PAGE_SIZE;
            }
        }
        let mut ranges: Vec<MemRange> = Vec::with_capacity(self.ranges.len() + 2);
        for r in &self.ranges {
            let (s, e) = (r.start, r.start + r.len);
            if e <= addr || s >= end {
                ranges.push(*r);
                continue;
            }
            if s < addr {
                ranges.push(MemRange {
                    start: s,
                    len: addr - s,
                    perm: r.perm,
                });
            }
            if e > end {
                ranges.push(MemRange {
                    start: end,
                    len: e - end,
                    perm: r.perm,
                });
            }
        }
        if let Some(perm) = perm {
            ranges.push(MemRange {
                start: addr,
                len,
                perm,
            });
        }
        ranges.sort_by_key(|r| r.start);
        let mut merged: Vec<MemRange> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match merged.last_mut() {
                Some(l) if l.start + l.len == r.start && l.perm == r.perm => l.len += r.len,
                _ => merged.push(r),
            }
        }
        let mapped_end = merged.last().map_or(0, |r| r.start + r.len);
        let extent = self.extent.max(mapped_end);
        let host_len = extent.max(PAGE_SIZE) as usize;
        if host_len > self.map.len() {
            grow(&mut self.map, host_len, &self.ranges)?;
        }
        self.extent = extent;
        self.set_ranges(merged)
    }

    /// Zero the host bytes `[addr, addr + len)` (below the extent), giving their memory back
    /// to the host where it can.
    fn zero(&mut self, addr: u64, len: u64) {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: the range lies inside the private anonymous mapping (below `extent`),
            // and `&mut self` excludes every other access to it; MADV_DONTNEED on such a
            // mapping makes its pages read zero on their next touch, which is all we want.
            let r = unsafe {
                self.map.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    addr as usize,
                    len as usize,
                )
            };
            if r.is_ok() {
                return;
            }
        }
        // SAFETY: as above: inside the mapping, and no other access while `&mut self`.
        unsafe { std::ptr::write_bytes(self.map.as_mut_ptr().add(addr as usize), 0, len as usize) }
    }

    /// Fill chunk `c` of the per-page tables from the range list (once): whether this call
    /// filled it.
    #[cold]
    fn fill(&self, c: u64) -> bool {
        let (word, bit) = ((c / 64) as usize, 1u64 << (c % 64));
        if self.filled[word].load(Ordering::Acquire) & bit != 0 {
            return false;
        }
        let pages = (self.extent / PAGE_SIZE).min((c + 1) * CHUNK_PAGES);
        let (lo, hi) = (c * CHUNK_PAGES * PAGE_SIZE, pages * PAGE_SIZE);
        let (perms, run_r, run_w) = (
            self.perms.as_slice(),
            self.run_r.as_slice(),
            self.run_w.as_slice(),
        );
        let first = self.ranges.partition_point(|r| r.start + r.len <= lo);
        for (i, r) in self.ranges.iter().enumerate().skip(first) {
            if r.start >= hi {
                break;
            }
            let (p, w) = match r.perm {
                MemPerm::R => (PERM_R, false),
                MemPerm::Rw => (PERM_R | PERM_W, true),
            };
            let end = r.start + r.len;
            for page in r.start.max(lo) / PAGE_SIZE..end.min(hi) / PAGE_SIZE {
                let at = page as usize;
                perms[at].store(p, Ordering::Relaxed);
                let rr = self.read_end[i] / PAGE_SIZE - page;
                run_r[at].store(rr as u32, Ordering::Relaxed);
                let rw = if w { end / PAGE_SIZE - page } else { 0 };
                run_w[at].store(rw as u32, Ordering::Relaxed);
            }
        }
        self.filled[word].fetch_or(bit, Ordering::Release);
        true
    }

    /// Fill the chunk of the per-page tables that holds `addr`, as the first check there
    /// would: done before code is compiled that will check ranges starting at `addr` (compiled
    /// code reads a chunk not filled yet as unmapped, see [`Memory`]). Whether this call
    /// filled it: `false` when `addr` is beyond the extent or the chunk was filled already.
    pub fn fill_at(&self, addr: u64) -> bool {
        addr < self.extent && self.fill(addr / PAGE_SIZE / CHUNK_PAGES)
    }

    /// The permission bits of page `page` (< extent / 4096), its chunk filled first.
    #[inline(always)]
    fn perm_of(&self, page: u64) -> u8 {
        let p = self.perms.as_slice()[page as usize].load(Ordering::Relaxed);
        if p != 0 {
            return p;
        }
        self.fill(page / CHUNK_PAGES);
        self.perms.as_slice()[page as usize].load(Ordering::Relaxed)
    }

    /// One past the highest host-backed address.
    pub fn extent(&self) -> u64 {
        self.extent
    }

    /// The raw view for compiled code (entries of chunks not filled yet read 0).
    pub fn view(&self) -> MemView {
        MemView {
            base: self.map.as_mut_ptr(),
            extent: self.extent,
            perms: self.perms.as_ptr(),
            run_r: self.run_r.as_ptr(),
            run_w: self.run_w.as_ptr(),
        }
    }

    /// Permission bits of the page holding `addr` (0 when unmapped or beyond the extent).
    #[inline(always)]
    pub fn page_perm(&self, addr: u64) -> u8 {
        if addr < self.extent {
            self.perm_of(addr / PAGE_SIZE)
        } else {
            0
        }
    }

    /// The readable and writable run lengths at `page` (as compiled code sees them once the
    /// page's chunk is filled).
    pub fn runs_at(&self, page: u64) -> (u32, u32) {
        if page >= self.extent / PAGE_SIZE {
            return (0, 0);
        }
        self.fill(page / CHUNK_PAGES);
        let at = page as usize;
        (
            self.run_r.as_slice()[at].load(Ordering::Relaxed),
            self.run_w.as_slice()[at].load(Ordering::Relaxed),
        )
    }

    /// Check `[ea, ea + len)` for `access`, `1 <= len <= 4096`: the range touches at most two
    /// pages. Out of range wins over permission.
    #[inline(always)]
    pub fn check(&self, ea: u64, len: u64, access: Access) -> Result<(), AccessFault> {
        debug_assert!((1..=PAGE_SIZE).contains(&len));
        let last = match ea.checked_add(len - 1) {
            Some(l) if l < self.extent => l,
            _ => return Err(AccessFault::PageFault),
        };
        let p0 = self.perm_of(ea / PAGE_SIZE);
        let p1 = self.perm_of(last / PAGE_SIZE);
        if p0 == 0 || p1 == 0 {
            return Err(AccessFault::PageFault);
        }
        let need = access.need();
        if p0 & p1 & need == 0 {
            return Err(AccessFault::PermissionFault);
        }
        Ok(())
    }

    /// Host pointer of guest address `ea`, for writing.
    ///
    /// # Safety
    /// `[ea, ea + len)` must have passed [`Memory::check`] (or lie below `extent`) for every
    /// byte the caller then touches through the pointer, and no slice from [`Memory::bytes`]
    /// may be alive over those bytes while they are written (see "Sharing" above).
    #[inline(always)]
    pub unsafe fn host_ptr(&self, ea: u64) -> *mut u8 {
        // SAFETY: the caller guarantees ea < extent <= the mapping's length.
        unsafe { self.map.as_mut_ptr().add(ea as usize) }
    }

    /// Read-only host pointer of guest address `ea`.
    ///
    /// # Safety
    /// As for [`Memory::host_ptr`].
    #[inline(always)]
    pub unsafe fn host_ptr_const(&self, ea: u64) -> *const u8 {
        // SAFETY: the caller guarantees ea < extent <= the mapping's length.
        unsafe { self.map.as_ptr().add(ea as usize) }
    }

    /// The bytes `[addr, addr + len)` if they all lie in mapped pages (any permission).
    pub fn bytes(&self, addr: u64, len: u64) -> Option<&[u8]> {
        if len == 0 {
            return Some(&[]);
        }
        if !self.range_mapped(addr, len) {
            return None;
        }
        // SAFETY: the range lies in mapped pages below `extent`, inside the mapping, which
        // lives as long as `self`; nothing writes guest memory while a caller holds `&self`
        // outside a launch, and a launch (the only place that writes through `&self`, from
        // several threads) gives out no slices until every group has ended.
        Some(unsafe {
            std::slice::from_raw_parts(self.map.as_ptr().add(addr as usize), len as usize)
        })
    }

    /// The bytes `[addr, addr + len)` for writing from the host side (loader, `--load`),
    /// if they all lie in mapped pages (any permission: the host may fill read-only pages).
    pub fn bytes_mut(&mut self, addr: u64, len: u64) -> Option<&mut [u8]> {
        if len == 0 {
            return Some(&mut []);
        }
        if !self.range_mapped(addr, len) {
            return None;
        }
        // SAFETY: as in `bytes`, and `&mut self` excludes every other access.
        Some(unsafe {
            std::slice::from_raw_parts_mut(self.map.as_mut_ptr().add(addr as usize), len as usize)
        })
    }

    /// Whether every byte of `[addr, addr + len)` is mapped (an empty range is), from the
    /// range list (no table is filled).
    pub fn range_mapped(&self, addr: u64, len: u64) -> bool {
        if len == 0 {
            return true;
        }
        let Some(end) = addr.checked_add(len) else {
            return false;
        };
        let mut at = addr;
        let mut i = self.ranges.partition_point(|r| r.start + r.len <= at);
        while at < end {
            match self.ranges.get(i) {
                Some(r) if r.start <= at => at = r.start + r.len,
                _ => return false,
            }
            i += 1;
        }
        true
    }

    /// Every mapped page's contents, in address order (`(page address, bytes)`), for
    /// comparing whole memories between engines.
    pub fn mapped_pages(&self) -> impl Iterator<Item = (u64, &[u8])> + '_ {
        self.ranges.iter().flat_map(move |r| {
            (r.start..r.start + r.len)
                .step_by(PAGE_SIZE as usize)
                .map(move |a| (a, self.bytes(a, PAGE_SIZE).unwrap_or_default()))
        })
    }
}

/// Grow the host mapping `map` to `len` bytes, keeping the bytes of the mapped `ranges` (every
/// other byte reads zero).
///
/// A mapping moved by `mremap` keeps its `MADV_HUGEPAGE` (see [`huge_pages`]).
fn grow(map: &mut MmapRaw, len: usize, ranges: &[MemRange]) -> Result<(), MemoryError> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: an anonymous mapping has no file to run past: its new pages read zero.
        // Nothing points into it (`Memory::set_pages` holds `&mut Memory`), so it may move.
        if unsafe { map.remap(len, memmap2::RemapOptions::new().may_move(true)) }.is_ok() {
            return Ok(());
        }
    }
    let new = MmapRaw::from(
        MmapOptions::new()
            .len(len)
            .no_reserve_swap()
            .map_anon()
            .map_err(|e| MemoryError::Reserve(len as u64, e.to_string()))?,
    );
    huge_pages(&new);
    for r in ranges {
        // SAFETY: both mappings hold the range (it lies below the old extent, and `len` is
        // larger); they are distinct, and nothing else accesses either.
        unsafe {
            std::ptr::copy_nonoverlapping(
                map.as_ptr().add(r.start as usize),
                new.as_mut_ptr().add(r.start as usize),
                r.len as usize,
            )
        }
    }
    *map = new;
    Ok(())
}

/// Tile space.
#[derive(Clone, Debug)]
pub struct Tile {
    bytes: Vec<u8>,
    perms: Vec<u8>,
    run_r: Vec<u32>,
    run_w: Vec<u32>,
}

impl Tile {
    /// Tile space for `program` (zeroed; protections applied).
    pub fn new(program: &Program) -> Tile {
        let size = program.tile_size;
        // Round up: a size that is not a multiple of 64 (malformed input) must not make
        // `check` index past the table.
        let mut perms = vec![PERM_R | PERM_W; size.div_ceil(TILE_GRANULE) as usize];
        for r in &program.tile_protect {
            let p = match r.perm {
                TilePerm::None => 0,
                TilePerm::R => PERM_R,
                TilePerm::Rw => PERM_R | PERM_W,
            };
            let first = (r.start / TILE_GRANULE) as usize;
            let count = (r.len / TILE_GRANULE) as usize;
            if let Some(s) = perms.get_mut(first..first + count) {
                s.fill(p);
            }
        }
        Tile {
            bytes: vec![0; size as usize],
            run_r: granule_runs(&perms, PERM_R),
            run_w: granule_runs(&perms, PERM_W),
            perms,
        }
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// The raw view for compiled code.
    pub fn view(&mut self) -> TileView {
        TileView {
            base: self.bytes.as_mut_ptr(),
            size: self.bytes.len() as u64,
            perms: self.perms.as_ptr(),
            run_r: self.run_r.as_ptr(),
            run_w: self.run_w.as_ptr(),
        }
    }

    /// Check `[ea, ea + len)`, `len >= 1`, for `access`. Out of bounds wins over permission.
    #[inline(always)]
    pub fn check(&self, ea: u64, len: u64, access: Access) -> Result<(), AccessFault> {
        let last = match ea.checked_add(len - 1) {
            Some(l) if l < self.bytes.len() as u64 => l,
            _ => return Err(AccessFault::TileOutOfBounds),
        };
        let need = access.need();
        let (g0, g1) = ((ea / TILE_GRANULE) as usize, (last / TILE_GRANULE) as usize);
        if self.perms[g0..=g1].iter().any(|&p| p & need == 0) {
            return Err(AccessFault::TileUnauthorized);
        }
        Ok(())
    }

    /// Host pointer of tile address `ea`.
    ///
    /// # Safety
    /// `[ea, ea + len)` must have passed [`Tile::check`] for every byte then touched.
    #[inline(always)]
    pub unsafe fn host_ptr(&mut self, ea: u64) -> *mut u8 {
        // SAFETY: the caller guarantees ea < size.
        unsafe { self.bytes.as_mut_ptr().add(ea as usize) }
    }

    /// Read-only host pointer of tile address `ea`.
    ///
    /// # Safety
    /// As for [`Tile::host_ptr`].
    #[inline(always)]
    pub unsafe fn host_ptr_const(&self, ea: u64) -> *const u8 {
        // SAFETY: the caller guarantees ea < size.
        unsafe { self.bytes.as_ptr().add(ea as usize) }
    }

    /// The whole tile.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The whole tile, for host-side writes (loader).
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }

    /// The bytes `[addr, addr + len)` if inside the tile.
    pub fn bytes(&self, addr: u64, len: u64) -> Option<&[u8]> {
        let end = addr.checked_add(len)?;
        self.bytes.get(addr as usize..end as usize)
    }
}

/// Copy a program's initial data into memory and tile.
pub fn load_data(program: &Program, mem: &mut Memory, tile: &mut Tile) -> Result<(), MemoryError> {
    for seg in &program.data {
        let len = seg.bytes.len() as u64;
        match seg.space {
            Space::Memory => mem
                .bytes_mut(seg.addr, len)
                .ok_or(MemoryError::DataOutside(seg.addr, "memory"))?
                .copy_from_slice(&seg.bytes),
            Space::Tile => {
                let end = seg.addr.checked_add(len).filter(|&e| e <= tile.size());
                let end = end.ok_or(MemoryError::DataOutside(seg.addr, "tile"))?;
                tile.as_bytes_mut()[seg.addr as usize..end as usize].copy_from_slice(&seg.bytes)
            }
        }
    }
    Ok(())
}

/// Ask the host for transparent huge pages in guest memory `map` (see the module docs). A
/// hint: a host without them, or that refuses, gives 4 KiB pages, which work the same.
fn huge_pages(map: &MmapRaw) {
    #[cfg(target_os = "linux")]
    {
        let _ = map.advise(memmap2::Advice::HugePage);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = map;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_pages_maps_protects_unmaps_and_grows() {
        let p = crate::asm::assemble(".mem 0x10000, 0x2000, rw\n.text\nHALT\n", "t.s")
            .expect("assembles");
        let mut m = Memory::new(&p, 1 << 32).expect("memory");
        m.bytes_mut(0x10000, 1).expect("mapped")[0] = 7;
        let runs = |m: &Memory, page: u64| (m.page_perm(page * PAGE_SIZE), m.runs_at(page));
        // Grow: a page far beyond the extent, the old bytes kept.
        m.set_pages(0x80_0000, PAGE_SIZE, Some(MemPerm::R))
            .expect("maps");
        assert_eq!(m.extent(), 0x80_1000);
        assert_eq!(m.bytes(0x10000, 1), Some(&[7u8][..]));
        assert_eq!(m.bytes(0x80_0000, 4), Some(&[0u8; 4][..]));
        assert_eq!(runs(&m, 0x800), (PERM_R, (1, 0)));
        assert_eq!(
            m.check(0x80_0000, 4, Access::Write),
            Err(AccessFault::PermissionFault)
        );
        // Touching ranges: one readable run across both permissions.
        m.set_pages(0x12000, PAGE_SIZE, Some(MemPerm::R))
            .expect("maps");
        assert_eq!(runs(&m, 0x10), (PERM_R | PERM_W, (3, 2)));
        // Protect a mapped page: its bytes stay.
        m.set_pages(0x10000, PAGE_SIZE, Some(MemPerm::R))
            .expect("protects");
        assert_eq!(runs(&m, 0x10), (PERM_R, (3, 0)));
        assert_eq!(m.bytes(0x10000, 1), Some(&[7u8][..]));
        // Unmap, then map again: it reads zero.
        m.set_pages(0x10000, PAGE_SIZE, None).expect("unmaps");
        assert_eq!(
            m.check(0x10000, 1, Access::Read),
            Err(AccessFault::PageFault)
        );
        assert_eq!(m.bytes(0x10000, 1), None);
        assert_eq!(runs(&m, 0x11), (PERM_R | PERM_W, (2, 1)));
        m.set_pages(0x10000, PAGE_SIZE, Some(MemPerm::Rw))
            .expect("maps");
        assert_eq!(m.bytes(0x10000, 1), Some(&[0u8][..]));
        assert_eq!(runs(&m, 0x10), (PERM_R | PERM_W, (3, 2)));
        // Bad ranges.
        assert!(m.set_pages(0x10001, PAGE_SIZE, None).is_err());
        assert!(m.set_pages(0x10000, 0, None).is_err());
        assert!(m.set_pages(1 << 32, PAGE_SIZE, Some(MemPerm::R)).is_err());
        assert!(
            m.set_pages(u64::MAX - 0xfff, PAGE_SIZE, Some(MemPerm::R))
                .is_err()
        );
    }

    #[test]
    fn permitted_runs_count_consecutive_pages() {
        // Pages: 0x10-0x12 rw, 0x13 r, 0x14 unmapped, 0x15 rw; 0x20.. 300 rw pages, with an
        // overlapping range inside them.
        let p = crate::asm::assemble(
            "
            .mem 0x10000, 0x3000, rw
            .mem 0x13000, 0x1000, r
            .mem 0x15000, 0x1000, rw
            .mem 0x20000, 0x12c000, rw
            .mem 0x30000, 0x2000, rw
            .text
            HALT
            ",
            "t.s",
        )
        .expect("assembles");
        let m = Memory::new(&p, 1 << 32).expect("memory");
        let v = m.view();
        // SAFETY: both tables have extent / 4096 entries.
        let at = |t: *const u32, page: usize| unsafe { *t.add(page) };
        let r: Vec<u32> = (0x10..0x17).map(|pg| at(v.run_r, pg)).collect();
        let w: Vec<u32> = (0x10..0x17).map(|pg| at(v.run_w, pg)).collect();
        assert_eq!(r, [4, 3, 2, 1, 0, 1, 0]);
        assert_eq!(w, [3, 2, 1, 0, 0, 1, 0]);
        assert_eq!(at(v.run_r, 0x20), 300, "runs are exact, not saturated");
        assert_eq!(at(v.run_w, 0x20 + 299), 1);
        assert_eq!(at(v.run_w, 0x20 + 45), 255);
        assert_eq!(at(v.run_w, 0x20 + 100), 200);
        assert_eq!(at(v.run_r, 0xf), 0);
    }

    /// VmRSS of this process in KiB.
    fn rss_kib() -> u64 {
        let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        s.lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    #[test]
    fn large_maps_fill_their_tables_chunk_by_chunk() {
        // 4 GiB plus a few small ranges: more than EAGER_PAGES, so nothing is filled at first.
        let p = crate::asm::assemble(
            "
            .mem 0x10000, 0x3000, rw
            .mem 0x13000, 0x1000, r
            .mem 0x100000000, 0x100000000, rw
            .text
            HALT
            ",
            "t.s",
        )
        .expect("assembles");
        let m = Memory::new(&p, 1 << 40).expect("memory");
        let v = m.view();
        // SAFETY: the tables have extent / 4096 entries; 0x10 and 0x100000 are below it.
        let at = |t: *const u32, page: usize| unsafe { *t.add(page) };
        assert_eq!(at(v.run_r, 0x10), 0, "not filled before a check");
        assert_eq!(m.runs_at(0x10), (4, 3));
        assert_eq!(at(v.run_r, 0x10), 4, "filled by the look-up");
        assert_eq!(at(v.run_r, 0x100000), 0, "another chunk is not");
        assert!(!m.fill_at(0x10000), "filled already");
        assert!(m.fill_at(0x1_0000_0000), "filled by this call");
        assert_eq!(at(v.run_r, 0x100000), 0x100000, "as a check fills it");
        assert!(!m.fill_at(0x1_0000_0000), "only once");
        assert!(!m.fill_at(1 << 40), "beyond the extent");
        assert_eq!(m.check(0x1_8000_0000, 8, Access::Write), Ok(()));
        let page = 0x1_8000_0000 / PAGE_SIZE as usize;
        assert_eq!(at(v.run_w, page), 0x80000, "filled by the check");
        assert_eq!(
            m.check(0x14000, 1, Access::Read),
            Err(AccessFault::PageFault)
        );
        assert_eq!(
            m.check(0x13ff8, 8, Access::Write),
            Err(AccessFault::PermissionFault)
        );
        assert_eq!(m.page_perm(0x1_0000_0000), PERM_R | PERM_W);
        assert!(!m.range_mapped(0xffff_f000, 0x2000));
        assert!(m.range_mapped(0x10000, 0x4000));
        assert_eq!(m.mapped_pages().take(5).count(), 5);
    }

    #[test]
    fn a_terabyte_map_commits_next_to_nothing() {
        let p = crate::asm::assemble(
            "
            .mem 0x0, 0xfffffff000, rw
            .text
            HALT
            ",
            "t.s",
        )
        .expect("assembles");
        let before = rss_kib();
        let t0 = std::time::Instant::now();
        let m = Memory::new(&p, 1 << 40).expect("memory");
        for a in [0u64, 0x1234_5678, 0xff_ffff_e000, 0x80_0000_0000] {
            assert_eq!(m.check(a, 8, Access::Write), Ok(()));
        }
        let took = t0.elapsed();
        let grew = rss_kib().saturating_sub(before);
        // Four chunks filled: 4 x 36 KiB of tables, plus the touched pages; 20 MiB is the
        // issue's bound.
        assert!(grew < 20 << 10, "RSS grew by {grew} KiB");
        assert!(took < std::time::Duration::from_secs(2), "{took:?}");
    }

    #[test]
    fn granule_runs_count_consecutive_permitted_granules() {
        // 32 KiB tile (512 granules): granule 2 read-only, 5 none, the rest rw.
        let p = crate::asm::assemble(
            "
            .tilesize 0x8000
            .tileprotect 0x80, 0x40, r
            .tileprotect 0x140, 0x40, none
            .text
            HALT
            ",
            "t.s",
        )
        .expect("assembles");
        let mut t = Tile::new(&p);
        let v = t.view();
        // SAFETY: both tables have size / 64 = 512 entries.
        let at = |t: *const u32, g: usize| unsafe { *t.add(g) };
        let r: Vec<u32> = (0..7).map(|g| at(v.run_r, g)).collect();
        let w: Vec<u32> = (0..7).map(|g| at(v.run_w, g)).collect();
        assert_eq!(r, [5, 4, 3, 2, 1, 0, 506]);
        assert_eq!(w, [2, 1, 0, 2, 1, 0, 506]);
        assert_eq!(at(v.run_w, 511), 1, "the last granule");
        assert_eq!(at(v.run_r, 511 - 254), 255);
        assert_eq!(at(v.run_r, 511 - 253), 254);
    }
}
