//! One JIT shared by the worker threads of a launch of many groups: a region compiled once
//! serves every group on every thread.
//!
//! [`SharedJit`] keeps the [`Jit`] behind a reader-writer lock. Threads look up and call
//! compiled code under the shared (read) lock, all at the same time, count the entries of
//! straight-line first compiles (atomic counts) and translate regions to IR under it too;
//! Cranelift compiles the IR with no lock held; placing code in the module, the recompile
//! of a straight-line region that became hot and running a loop's tail (which may compile)
//! take the exclusive (write) lock. So compiled code never runs while the
//! cache, the chaining table or the code memory change, and a module is never retired under
//! a running region.
//!
//! Writers go first. The standard library's lock lets a thread that unlocks its read lock and
//! locks it again overtake a writer woken by that unlock, so with one thread running compiled
//! regions back to back, another waiting to compile waited 15-30 ms in a 2-thread launch of
//! `poly_g` (a writer in a loop-of-reads test: 40-530 ms). So a writer first takes a
//! turnstile mutex and holds it until it is done, and announces itself in a counter; a
//! reader that sees the counter non-zero passes the turnstile (waits for the writers) before
//! it takes its read lock, and [`SharedJit::try_run_at`] does not take one at all (its caller
//! interprets meanwhile). (`parking_lot`'s task-fair lock would give the same order; std's
//! is kept for its poisoning: a JIT whose compile panicked leaves every later pc to the
//! interpreter instead of running on in a state nobody checked.)

use crate::{Compiled, Jit, JitError, JitStats, RegionExit};
use lanejit_interp::machine::Machine;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// What [`SharedJit::optimize_one_paced`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recompile {
    /// No baseline waits for its optimised code.
    Nothing,
    /// The oldest baseline's optimised code was compiled (and placed, unless that failed).
    Done,
    /// The pace said not yet: the baseline is back at the front of the queue.
    Deferred,
}

/// The baseline compiles [`SharedJit::optimize_one_paced`] may replace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Baselines {
    /// Any, the oldest first (a run that has ended, for a code cache).
    Any,
    /// Only the one of the region entered at this pc (the code the run is in).
    Of(u64),
    /// None (the run is in no compiled code: a loop that has ended may never run again).
    Not,
}

/// A [`Jit`] shared by threads (see the module docs).
pub struct SharedJit {
    inner: RwLock<Jit>,
    /// Threads waiting for the write lock or holding it.
    writers: AtomicUsize,
    /// Held by a writer from before it asks for the write lock until it drops it.
    turnstile: Mutex<()>,
    /// The pcs whose regions threads are compiling (see [`SharedJit::compile`]).
    compiling: Mutex<Vec<u64>>,
    /// Signalled when a pc leaves `compiling`.
    compiled: Condvar,
}

/// A pc in [`SharedJit`]'s `compiling` list, taken off (waking the threads waiting for it)
/// when dropped.
struct Compiling<'a> {
    jit: &'a SharedJit,
    pc: u64,
}

impl Drop for Compiling<'_> {
    fn drop(&mut self) {
        let mut pcs = self.jit.compiling.lock().unwrap_or_else(|p| p.into_inner());
        pcs.retain(|&p| p != self.pc);
        drop(pcs);
        self.jit.compiled.notify_all();
    }
}

/// The write lock of a [`SharedJit`], with its turnstile; dropping it lets readers in again.
struct Writing<'a> {
    // `Drop::drop` lowers the count first; then the fields drop in this order: the lock,
    // then the turnstile (a reader that comes in between waits on the lock itself).
    jit: RwLockWriteGuard<'a, Jit>,
    _turn: MutexGuard<'a, ()>,
    writers: &'a AtomicUsize,
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        self.writers.fetch_sub(1, Ordering::Release);
    }
}

impl std::ops::Deref for Writing<'_> {
    type Target = Jit;
    fn deref(&self) -> &Jit {
        &self.jit
    }
}

impl std::ops::DerefMut for Writing<'_> {
    fn deref_mut(&mut self) -> &mut Jit {
        &mut self.jit
    }
}

// SAFETY: `Jit` is `Send` but not `Sync`: its Cranelift module keeps state in a `RefCell` and a
// memory provider that only compiling touches. Through a shared reference to `SharedJit` a
// thread reaches the `Jit` only by the read lock, under which it calls only `Jit::lookup`
// (a read of the cache map), `Jit::stats` (a copy of plain counters), `Jit::enter` (a read
// of the configuration and the chaining table's address, and a call into compiled code,
// which writes only the caller's machine and context), `Jit::note_entry` (an atomic add to
// a count in a map only the write lock changes), `Jit::hints_for` (a read of the decoded
// program), `Jit::next_baseline_at` and `Jit::requeue_baseline` (a queue behind its own
// mutex), and `Jit::prepare_optimized` and `Jit::prepare_compile` (reads of the
// decoded program, cache map, configuration, observer and disk cache, which are `Sync`,
// into IR of their own); none of them touches the module but to read its ISA (an immutable
// `Arc` field).
// Everything else (`compile_with`, `install_compiled`, `finish_noted`, ...) runs under the write
// lock, excluding every other access.
unsafe impl Sync for SharedJit {}

impl SharedJit {
    /// Share `jit`.
    pub fn new(jit: Jit) -> SharedJit {
        SharedJit {
            inner: RwLock::new(jit),
            writers: AtomicUsize::new(0),
            turnstile: Mutex::new(()),
            compiling: Mutex::new(Vec::new()),
            compiled: Condvar::new(),
        }
    }

    /// The read lock, after any writer waiting for the write lock or holding it (`wait`), or
    /// now if no writer is there (`None` otherwise, or when poisoned).
    pub(crate) fn read(&self, wait: bool) -> Option<RwLockReadGuard<'_, Jit>> {
        if self.writers.load(Ordering::Acquire) != 0 {
            if !wait {
                return None;
            }
            // A poisoned turnstile only means a writer panicked: the lock below says so.
            drop(self.turnstile.lock());
        }
        if wait {
            self.inner.read().ok()
        } else {
            self.inner.try_read().ok()
        }
    }

    /// The write lock, waiting for it (`wait`) or not (`None` when it is held, or poisoned).
    fn write(&self, wait: bool) -> Option<Writing<'_>> {
        // Counted from before the wait, so readers arriving meanwhile let it go first; the
        // count goes down when `Writing` is dropped, or here when there is none.
        self.writers.fetch_add(1, Ordering::AcqRel);
        let w = self.write_counted(wait);
        if w.is_none() {
            self.writers.fetch_sub(1, Ordering::Release);
        }
        w
    }

    /// [`SharedJit::write`] once counted in `writers`.
    fn write_counted(&self, wait: bool) -> Option<Writing<'_>> {
        // A poisoned turnstile only means that a writer panicked: the lock says so.
        let turn = if wait {
            self.turnstile.lock().unwrap_or_else(|p| p.into_inner())
        } else {
            match self.turnstile.try_lock() {
                Ok(t) => t,
                Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => return None,
            }
        };
        let jit = if wait {
            self.inner.write().ok()?
        } else {
            self.inner.try_write().ok()?
        };
        Some(Writing {
            jit,
            _turn: turn,
            writers: &self.writers,
        })
    }

    /// Run the compiled region at `m.pc`, if there is one.
    pub fn run_at(&self, m: &mut Machine) -> Option<RegionExit> {
        self.run_locked(m, true)
    }

    /// [`SharedJit::run_at`] without waiting for a compile in progress: `None` (the caller
    /// interprets) when a compile holds the JIT; a loop's tail or an entry count that would
    /// need the JIT exclusively while it is held goes to the interpreter (which is always
    /// correct) instead.
    pub fn try_run_at(&self, m: &mut Machine) -> Option<RegionExit> {
        self.run_locked(m, false)
    }

    /// [`SharedJit::run_at`] (`wait`) or [`SharedJit::try_run_at`].
    fn run_locked(&self, m: &mut Machine, wait: bool) -> Option<RegionExit> {
        // Entries are counted under the read lock; only a hot recompile or a loop's tail
        // takes the write lock.
        let (entered, hot) = {
            let jit = self.read(wait)?;
            let c = jit.lookup(m.pc)?;
            let e = jit.enter(c, m);
            let hot = jit.note_entry(&e);
            (e, hot)
        };
        if !hot && !entered.partial() {
            return Some(entered.exit(m));
        }
        // Without the write lock, a hot recompile waits for the next HOT_ENTRIES entries.
        Some(match self.write(wait) {
            Some(mut jit) => jit.finish_noted(entered, m, hot),
            None => entered.exit(m),
        })
    }

    /// Use the on-disk code cache `disk` (or none) from now on (see [`Jit::set_disk_cache`]).
    pub fn set_disk_cache(&self, disk: Option<std::sync::Arc<crate::diskcache::DiskCache>>) {
        if let Some(mut jit) = self.write(true) {
            jit.set_disk_cache(disk);
        }
    }

    /// Compile the region at `pc` (or find it; `None` when declined) with the entry's `hints`
    /// (see [`Jit::compile_with`]). The region is translated under the read lock and compiled
    /// under none ([`Jit::prepare_compile`]), so other threads run compiled code meanwhile;
    /// only placing the code takes the JIT exclusively. A thread that asks for a region
    /// another one is compiling waits for that compile instead of doing it again.
    pub fn compile(
        &self,
        pc: u64,
        hints: crate::region::Hints,
    ) -> Result<Option<Compiled>, JitError> {
        self.compile_paced(pc, hints, |_| true)
    }

    /// [`SharedJit::compile`], asking `pace` before Cranelift runs, with the estimated
    /// compile time in microseconds ([`crate::CompileJob::estimated_us`]): it may wait, and
    /// `false` drops the compile (`Ok(None)`, the region stays interpreted).
    pub fn compile_paced(
        &self,
        pc: u64,
        hints: crate::region::Hints,
        pace: impl FnOnce(u64) -> bool,
    ) -> Result<Option<Compiled>, JitError> {
        let _turn = self.compiling(pc);
        // A thread panicked while compiling (poisoned locks): leave this pc to the
        // interpreter.
        let job = match self.read(true) {
            Some(jit) => jit.prepare_compile(pc, hints),
            None => return Ok(None),
        };
        let Some(mut job) = job else {
            // Something to record or change first: all of it under the write lock.
            return match self.write(true) {
                Some(mut jit) => jit.compile_with(pc, hints),
                None => Ok(None),
            };
        };
        let asked = std::time::Instant::now();
        if !pace(job.estimated_us()) {
            return Ok(None);
        }
        job.waited(asked.elapsed());
        job.compile();
        match self.write(true) {
            Some(mut jit) => jit.install_compiled(job),
            None => Ok(None),
        }
    }

    /// Compile the region at `pc` for an entry with registers `regs` (see
    /// [`Jit::compile_for`] and [`SharedJit::compile`]).
    pub fn compile_for(
        &self,
        pc: u64,
        regs: &lanejit_interp::machine::Regs,
    ) -> Result<Option<Compiled>, JitError> {
        let Some(hints) = self.read(true).map(|j| j.hints_for(pc, regs)) else {
            return Ok(None);
        };
        self.compile(pc, hints)
    }

    /// Mark `pc` as being compiled by this thread until the returned guard is dropped,
    /// first waiting while another thread compiles it.
    fn compiling(&self, pc: u64) -> Compiling<'_> {
        let mut pcs = self.compiling.lock().unwrap_or_else(|p| p.into_inner());
        while pcs.contains(&pc) {
            pcs = self.compiled.wait(pcs).unwrap_or_else(|p| p.into_inner());
        }
        pcs.push(pc);
        Compiling { jit: self, pc }
    }

    /// Give loops a baseline compile first (see [`Jit::set_baseline`]).
    pub fn set_baseline(&self, on: bool) {
        if let Some(mut jit) = self.write(true) {
            jit.set_baseline(on);
        }
    }

    /// Queue the recompiles of hot straight-line regions for [`SharedJit::optimize_one`]
    /// instead of making them on the entry that found the region hot (see
    /// [`Jit::set_defer_hot`]).
    pub fn set_defer_hot(&self, on: bool) {
        if let Some(mut jit) = self.write(true) {
            jit.set_defer_hot(on);
        }
    }

    /// Forget the hot straight-line regions waiting for their recompile (see
    /// [`Jit::discard_hot`]).
    pub fn discard_hot(&self) {
        if let Some(mut jit) = self.write(true) {
            jit.discard_hot();
        }
    }

    /// Recompile the oldest hot straight-line region waiting (see [`Jit::set_defer_hot`]),
    /// else replace the oldest baseline compile by its optimised code: the IR is built under
    /// the shared lock and compiled under none, so other threads run compiled code meanwhile;
    /// only installing it takes the JIT exclusively. `false` when neither waits.
    pub fn optimize_one(&self) -> bool {
        self.optimize_one_paced(Baselines::Any, |_, _| true) != Recompile::Nothing
    }

    /// [`SharedJit::optimize_one`] among the baseline compiles `which` names, first asking
    /// `pace`, with the recompile's estimated compile time in microseconds
    /// ([`crate::Baseline::estimated_us`]) and its region's pc: it may wait, and `false`
    /// defers the recompile (the baseline goes back to the front of the queue). Whether one
    /// of them waits is looked at under the shared lock, so that none taking the JIT
    /// exclusively (which makes the run's entries step aside) when none does.
    pub fn optimize_one_paced(
        &self,
        which: Baselines,
        pace: impl FnOnce(u64, u64) -> bool,
    ) -> Recompile {
        // Both queues looked at under the shared lock first: an idle compiler thread asks
        // every millisecond, and a writer makes the run's entries step aside.
        let (hot, base) = match self.read(true) {
            Some(j) => (
                j.hot_waiting(),
                match which {
                    Baselines::Any => j.baseline_waiting(),
                    Baselines::Of(pc) => j.baseline_waiting_at(pc),
                    Baselines::Not => false,
                },
            ),
            None => return Recompile::Nothing,
        };
        if !hot && !base {
            return Recompile::Nothing;
        }
        // A hot straight-line region's recompile first: its first compile runs vector work
        // on helpers, often slower than the interpreter. Translated under the shared lock,
        // compiled under none, placed exclusively; not paced (a region the run asks for is
        // not either, beyond its turn).
        // (Only when one waits: the write lock waits for the run to leave compiled code.)
        if let Some(key) = hot
            .then(|| self.write(true))
            .flatten()
            .and_then(|mut j| j.next_hot())
        {
            let job = self.read(true).and_then(|j| j.prepare_hot(key));
            if let Some(mut job) = job {
                job.compile();
                if let Some(mut jit) = self.write(true) {
                    // A failure leaves the first compile running (counted as an error).
                    let _ = jit.install_hot(job);
                }
            }
            return Recompile::Done;
        }
        if !base {
            return Recompile::Nothing;
        }
        let at = match which {
            Baselines::Of(pc) => Some(pc),
            _ => None,
        };
        // Under the shared lock: the run may be in the baseline's code, which leaves only
        // once its optimised code is ready (`abi::TierWords`).
        let Some(base) = self.read(true).and_then(|j| j.next_baseline_at(at)) else {
            return Recompile::Nothing;
        };
        // The strip-mined step (`crate::Baseline::steps`) only for the loop the run is in.
        let base = match which {
            Baselines::Of(_) => base,
            _ => base.without_step(),
        };
        if !pace(base.estimated_us(), base.pc()) {
            if let Some(jit) = self.read(true) {
                jit.requeue_baseline(base);
            }
            return Recompile::Deferred;
        }
        let pc = base.pc();
        let prepared = self
            .read(true)
            .map(|j| (j.prepare_optimized(base), j.tier_words()));
        if let Some((Some(mut job), tier)) = prepared {
            job.compile();
            // Placing the code needs the run out of compiled code: a loop running its
            // baseline leaves at its next header (`abi::TierWords::leave`), and enters the
            // optimised code at its next entry.
            tier.leave.store(pc + 1, Ordering::Release);
            if let Some(mut jit) = self.write(true) {
                // A failure leaves the baseline running (and is counted in the statistics).
                let _ = jit.install_optimized(job);
            }
            tier.leave.store(0, Ordering::Release);
        }
        Recompile::Done
    }

    /// The words loops' baseline code shares with the compiler ([`Jit::tier_words`]).
    pub fn tier_words(&self) -> Option<std::sync::Arc<crate::abi::TierWords>> {
        self.read(true).map(|j| j.tier_words())
    }

    /// Show every region compiled from now on to `obs` (see [`crate::observe`]).
    pub fn set_observer(&self, obs: std::sync::Arc<crate::observe::Observer>) {
        if let Some(mut jit) = self.write(true) {
            jit.set_observer(obs);
        }
    }

    /// Compilation statistics so far, without waiting for a compile in progress (whose
    /// region is then not counted yet; all zero if the JIT is held). A one-off read: it
    /// need not let waiting writers go first.
    pub fn try_stats(&self) -> JitStats {
        self.inner.try_read().map(|j| j.stats()).unwrap_or_default()
    }

    /// Compilation statistics so far.
    pub fn stats(&self) -> JitStats {
        self.read(true).map(|j| j.stats()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::SharedJit;
    use crate::Jit;
    use lanejit_interp::interp::DecodedCode;
    use lanejit_interp::machine::Config;
    use std::sync::atomic::Ordering;

    /// A writer waiting for the JIT goes before readers that come after it: std's lock alone
    /// lets a reader in (its `try_read` succeeds while a writer waits), which starved the
    /// compiling thread of a launch for milliseconds.
    #[test]
    fn a_waiting_writer_goes_before_later_readers() {
        let shared = SharedJit::new(
            Jit::for_config(&DecodedCode::decode(&[0]), &Config::default()).expect("jit"),
        );
        let held = shared.read(true).expect("read lock");
        std::thread::scope(|s| {
            let writer = s.spawn(|| shared.write(true).is_some());
            while shared.writers.load(Ordering::Acquire) == 0 {
                std::thread::yield_now();
            }
            // The writer is counted before it waits: a reader that does not wait steps aside,
            // and so does a writer that does not.
            assert!(
                shared.read(false).is_none(),
                "a reader went before the writer"
            );
            assert!(shared.write(false).is_none(), "the JIT is held");
            assert_eq!(
                shared.writers.load(Ordering::Acquire),
                1,
                "a failed try is uncounted"
            );
            drop(held);
            assert!(writer.join().expect("writer"), "the writer got the lock");
        });
        assert_eq!(
            shared.writers.load(Ordering::Acquire),
            0,
            "the writer is gone"
        );
        assert!(shared.read(false).is_some(), "readers go again");
        assert!(shared.write(false).is_some(), "and writers");
    }
}
