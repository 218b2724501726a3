//! Executable memory for the code cache's modules: [`CodeMemory`], a cranelift-jit
//! [`JITMemoryProvider`] that writes code through one mapping and runs it through another.
//!
//! cranelift-jit's own provider maps a fresh page for every function and changes its
//! protection to read+execute when the module is finalised: per compiled region a `mmap`, a
//! page fault and an `mprotect`, measured here at about a sixth of a straight-line region's
//! compile time. `CodeMemory` instead maps one anonymous shared-memory object (`memfd`) twice,
//! once read+write and once read+execute, and packs functions one after the other into it.
//! Code is written (and relocated) through the writable view and called through the
//! executable one, so no page is ever writable and executable in the same mapping, and
//! finalising a function needs no system call.
//!
//! This requires code that does not depend on its own address: only absolute relocations,
//! which [`position_independent`] checks before a function is placed (the translator calls
//! helpers through absolute addresses and Cranelift resolves constant-pool references inside
//! the function's own bytes, so none is ever declined in practice). The function's address
//! is the executable view of where its bytes were written ([`Views::exec_addr`]).
//!
//! Used on x86-64 Linux only, where instruction fetch stays coherent with stores to the same
//! physical memory through any linear address (Intel SDM vol. 3, 11.6 "Self-Modifying
//! Code"; each function is new code reached by a later indirect call). Elsewhere, or when the
//! kernel refuses executable shared memory (`vm.memfd_noexec`), [`CodeMemory::probe`] says
//! so once per process and modules keep cranelift-jit's default provider.

use cranelift_codegen::binemit::Reloc;
use cranelift_jit::{BranchProtection, JITMemoryKind, JITMemoryProvider};
use cranelift_module::ModuleResult;
use std::io;
use std::sync::{Arc, Mutex};

/// Bytes of each shared-memory object (more when one function needs more). Only the pages
/// code is written to are ever backed by memory.
const CHUNK: usize = 4 << 20;

/// Alignment of every chunk and the granularity of its size.
const PAGE: usize = 4096;

/// Whether relocations `kinds` leave code free to run at an address other than the one it was
/// written at: true when every one is absolute.
pub(crate) fn position_independent(kinds: impl IntoIterator<Item = Reloc>) -> bool {
    kinds
        .into_iter()
        .all(|k| matches!(k, Reloc::Abs4 | Reloc::Abs8))
}

/// One shared-memory object and its two views.
struct Chunk {
    /// The writable view: where cranelift-jit copies and relocates code.
    rw: memmap2::MmapMut,
    /// The executable view of the same pages.
    rx: memmap2::Mmap,
    /// Bytes handed out from the start of the chunk.
    used: usize,
}

impl Chunk {
    /// A chunk of at least `size` bytes.
    fn new(size: usize) -> io::Result<Chunk> {
        let len = size.div_ceil(PAGE).max(1) * PAGE;
        let file = memfd()?;
        file.set_len(len as u64)?;
        // SAFETY: `file` is a shared-memory object this function just created: no other
        // process or mapping can see it, so nothing truncates or rewrites it behind these
        // views. The object stays alive as long as a view maps it, after `file` is dropped.
        let rw = unsafe { memmap2::MmapOptions::new().len(len).map_mut(&file)? };
        // SAFETY: as above; this view is only ever read and executed.
        let rx = unsafe { memmap2::MmapOptions::new().len(len).map_exec(&file)? };
        Ok(Chunk { rw, rx, used: 0 })
    }

    /// `size` bytes at `align` from the unused part of the chunk, if they fit.
    fn take(&mut self, size: usize, align: usize) -> Option<*mut u8> {
        let start = self.used.checked_next_multiple_of(align)?;
        let end = start.checked_add(size)?;
        if end > self.rw.len() {
            return None;
        }
        self.used = end;
        // SAFETY: `start <= end <= self.rw.len()`, so the offset stays inside the view.
        Some(unsafe { self.rw.as_mut_ptr().add(start) })
    }
}

/// A new anonymous shared-memory object, closed on exec. It asks for execute permission
/// explicitly (`MFD_EXEC`, needed where `vm.memfd_noexec` is 1) and retries without the flag
/// for kernels before 6.3, which reject it.
fn memfd() -> io::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    let name = c"lanejit-code";
    let mut flags = libc::MFD_CLOEXEC | libc::MFD_EXEC;
    loop {
        // SAFETY: `name` is a NUL-terminated string and the flags are valid bits.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), flags) };
        if fd >= 0 {
            // SAFETY: `fd` was just returned by `memfd_create`: it is open and owned by nobody
            // else, so the `File` takes sole ownership and closes it.
            return Ok(unsafe { std::fs::File::from_raw_fd(fd) });
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EINVAL) && flags & libc::MFD_EXEC != 0 {
            flags = libc::MFD_CLOEXEC;
            continue;
        }
        return Err(err);
    }
}

/// Where each chunk's two views of a [`CodeMemory`] are, shared with the code cache so it can
/// turn the writable address cranelift-jit reports for a function into the one to call.
#[derive(Default)]
pub(crate) struct Views(Mutex<Vec<(usize, usize, usize)>>);

impl Views {
    /// The executable address of the byte written at `rw`, if `rw` lies in a chunk.
    pub(crate) fn exec_addr(&self, rw: *const u8) -> Option<*const u8> {
        let a = rw as usize;
        let views = self.0.lock().unwrap_or_else(|e| e.into_inner());
        views
            .iter()
            .find(|&&(w, _, len)| a >= w && a - w < len)
            .map(|&(w, x, _)| (x + (a - w)) as *const u8)
    }
}

/// Executable memory for one module (see the module docs).
pub(crate) struct CodeMemory {
    chunks: Vec<Chunk>,
    views: Arc<Views>,
}

impl CodeMemory {
    /// Whether this process can use dual-mapped code memory: x86-64 Linux with a kernel that
    /// maps shared memory executable. Probed once per process with a one-page chunk.
    pub(crate) fn probe() -> bool {
        static OK: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *OK.get_or_init(|| {
            cfg!(all(target_os = "linux", target_arch = "x86_64")) && Chunk::new(PAGE).is_ok()
        })
    }

    /// Empty memory (chunks are mapped on first use) and the table of its views.
    pub(crate) fn new() -> (CodeMemory, Arc<Views>) {
        let views = Arc::new(Views::default());
        let mem = CodeMemory {
            chunks: Vec::new(),
            views: views.clone(),
        };
        (mem, views)
    }

    /// Forget every view and hand the chunks back: up to [`POOL_CHUNKS`] of the standard size
    /// go to this thread's pool for the next module, the rest are unmapped.
    fn release(&mut self) {
        self.views
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        let chunks = std::mem::take(&mut self.chunks);
        // During thread exit the pool may be gone already: the chunks are then just unmapped.
        let _ = POOL.try_with(|pool| {
            let mut pool = pool.borrow_mut();
            for mut c in chunks {
                if c.rw.len() == CHUNK && pool.len() < POOL_CHUNKS {
                    c.used = 0;
                    pool.push(c);
                }
            }
        });
    }
}

impl Drop for CodeMemory {
    fn drop(&mut self) {
        self.release();
    }
}

/// Chunks a thread keeps for reuse after their module is freed.
const POOL_CHUNKS: usize = 2;

thread_local! {
    /// Chunks of freed modules, reused by this thread's next modules: a fresh JIT (each run
    /// of the fuzzer and of the benchmarks makes one) or a retired module's successor then
    /// skips mapping new memory and faulting its pages in. Their old code is never run again:
    /// every pointer into it went with its module, and new code overwrites it through the
    /// writable view before anything calls it.
    static POOL: std::cell::RefCell<Vec<Chunk>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl JITMemoryProvider for CodeMemory {
    fn allocate(&mut self, size: usize, align: u64, kind: JITMemoryKind) -> io::Result<*mut u8> {
        if !matches!(kind, JITMemoryKind::Executable) {
            // The code cache defines functions only; data objects would need a third view.
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "lanejit code memory holds functions only",
            ));
        }
        let align = usize::try_from(align)
            .ok()
            .filter(|a| a.is_power_of_two() && *a <= PAGE)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "code alignment"))?;
        if let Some(p) = self.chunks.last_mut().and_then(|c| c.take(size, align)) {
            return Ok(p);
        }
        let pooled = if size <= CHUNK {
            POOL.try_with(|p| p.borrow_mut().pop()).ok().flatten()
        } else {
            None
        };
        let mut chunk = match pooled {
            Some(c) => c,
            None => Chunk::new(size.max(CHUNK))?,
        };
        let p = chunk
            .take(size, align)
            .expect("a fresh chunk holds the request");
        let mut views = self.views.0.lock().unwrap_or_else(|e| e.into_inner());
        views.push((
            chunk.rw.as_ptr() as usize,
            chunk.rx.as_ptr() as usize,
            chunk.rw.len(),
        ));
        self.chunks.push(chunk);
        Ok(p)
    }

    unsafe fn free_memory(&mut self) {
        self.release();
    }

    fn finalize(&mut self, _: BranchProtection) -> ModuleResult<()> {
        // Nothing to do: the executable view already shows every byte written (module docs).
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_written_through_one_view_runs_through_the_other() {
        if !CodeMemory::probe() {
            return;
        }
        let (mut mem, views) = CodeMemory::new();
        // mov eax, imm32; ret
        let f = |imm: u32| {
            let mut v = vec![0xb8];
            v.extend_from_slice(&imm.to_le_bytes());
            v.push(0xc3);
            v
        };
        let mut ptrs = Vec::new();
        for (i, size) in [6usize, 6, CHUNK, 6].into_iter().enumerate() {
            let p = mem.allocate(size, 16, JITMemoryKind::Executable).unwrap();
            assert_eq!(p as usize % 16, 0);
            let code = f(i as u32 + 7);
            // SAFETY: `p` points to at least `size >= 6` writable bytes just allocated.
            unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), p, code.len()) };
            ptrs.push(p);
        }
        // What does not fit the last chunk opens a new one: the request as large as a chunk
        // fills the second, and the last request opens a third.
        assert_eq!(mem.chunks.len(), 3);
        for (i, p) in ptrs.iter().enumerate() {
            let x = views.exec_addr(*p).expect("inside a chunk");
            assert_ne!(x, *p as *const u8);
            // SAFETY: `x` is the executable view of the `mov eax, imm32; ret` just written.
            let g: extern "C" fn() -> u32 = unsafe { std::mem::transmute(x) };
            assert_eq!(g(), i as u32 + 7);
        }
        assert!(views.exec_addr(std::ptr::null()).is_none());
        assert!(
            mem.allocate(8, 8, JITMemoryKind::Writable).is_err(),
            "data is refused"
        );
        // SAFETY: no pointer into the memory is used after this.
        unsafe { mem.free_memory() };
        assert!(views.exec_addr(ptrs[0]).is_none());
    }

    #[test]
    fn only_absolute_relocations_are_position_independent() {
        assert!(position_independent([Reloc::Abs8, Reloc::Abs4]));
        assert!(position_independent([]));
        assert!(!position_independent([Reloc::Abs8, Reloc::X86CallPCRel4]));
        assert!(!position_independent([Reloc::X86PCRel4]));
    }
}
