//! One JIT shared by the worker threads of a launch of many groups: a region compiled once
//! serves every group on every thread.
//!
//! [`SharedJit`] keeps the [`Jit`] behind a reader-writer lock. Threads look up and call
//! compiled code under the shared (read) lock, all at the same time; compiling, counting the
//! entries of straight-line first compiles and running a loop's tail (which may compile) take
//! the exclusive (write) lock. So compiled code never runs while the cache, the chaining
//! table or the code memory change, and a module is never retired under a running region.

use crate::{Compiled, Jit, JitError, JitStats, RegionExit};
use lanejit_interp::machine::Machine;
use std::sync::RwLock;

/// A [`Jit`] shared by threads (see the module docs).
pub struct SharedJit {
    inner: RwLock<Jit>,
}

// SAFETY: `Jit` is `Send` but not `Sync`: its Cranelift module keeps state in a `RefCell` and a
// memory provider that only compiling touches. Through a shared reference to `SharedJit` a
// thread reaches the `Jit` only by the read lock, under which it calls only `Jit::lookup`
// (a read of the cache map), `Jit::stats` (a copy of plain counters), `Jit::enter` (a read
// of the configuration and the chaining table's address, and a call into compiled code,
// which writes only the caller's machine and context) and `Jit::prepare_optimized` (reads of
// the decoded program, configuration and observer into IR of its own); none of them touches
// the module.
// Everything else (`compile`, `finish`) runs under the write lock, excluding every other
// access.
unsafe impl Sync for SharedJit {}

impl SharedJit {
    /// Share `jit`.
    pub fn new(jit: Jit) -> SharedJit {
        SharedJit {
            inner: RwLock::new(jit),
        }
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
        let entered = {
            let jit = if wait {
                self.inner.read().ok()?
            } else {
                self.inner.try_read().ok()?
            };
            let c = jit.lookup(m.pc)?;
            jit.enter(c, m)
        };
        if !entered.needs_finish() {
            return Some(entered.exit(m));
        }
        let jit = if wait {
            self.inner.write().ok()
        } else {
            self.inner.try_write().ok()
        };
        Some(match jit {
            Some(mut jit) => jit.finish(entered, m),
            None => entered.exit(m),
        })
    }

    /// Use the on-disk code cache `disk` (or none) from now on (see [`Jit::set_disk_cache`]).
    pub fn set_disk_cache(&self, disk: Option<std::sync::Arc<crate::diskcache::DiskCache>>) {
        if let Ok(mut jit) = self.inner.write() {
            jit.set_disk_cache(disk);
        }
    }

    /// Compile the region at `pc` (or find it; `None` when declined) with the entry's `hints`
    /// (see [`Jit::compile_with`]).
    pub fn compile(
        &self,
        pc: u64,
        hints: crate::region::Hints,
    ) -> Result<Option<Compiled>, JitError> {
        match self.inner.write() {
            Ok(mut jit) => jit.compile_with(pc, hints),
            // A thread panicked while compiling: leave this pc to the interpreter.
            Err(_) => Ok(None),
        }
    }

    /// Compile the region at `pc` for an entry with registers `regs` (see
    /// [`Jit::compile_for`]).
    pub fn compile_for(
        &self,
        pc: u64,
        regs: &lanejit_interp::machine::Regs,
    ) -> Result<Option<Compiled>, JitError> {
        match self.inner.write() {
            Ok(mut jit) => jit.compile_for(pc, regs),
            Err(_) => Ok(None),
        }
    }

    /// Give loops a baseline compile first (see [`Jit::set_baseline`]).
    pub fn set_baseline(&self, on: bool) {
        if let Ok(mut jit) = self.inner.write() {
            jit.set_baseline(on);
        }
    }

    /// Replace the oldest baseline compile by its optimised code: the IR is built under the
    /// shared lock and compiled under none, so other threads run compiled code meanwhile;
    /// only installing it takes the JIT exclusively. `false` when no baseline waits.
    pub fn optimize_one(&self) -> bool {
        let Some(base) = self.inner.write().ok().and_then(|mut j| j.next_baseline()) else {
            return false;
        };
        let job = self
            .inner
            .read()
            .ok()
            .and_then(|j| j.prepare_optimized(base));
        if let Some(mut job) = job {
            job.compile();
            if let Ok(mut jit) = self.inner.write() {
                // A failure leaves the baseline running (and is counted in the statistics).
                let _ = jit.install_optimized(job);
            }
        }
        true
    }

    /// Show every region compiled from now on to `obs` (see [`crate::observe`]).
    pub fn set_observer(&self, obs: std::sync::Arc<crate::observe::Observer>) {
        if let Ok(mut jit) = self.inner.write() {
            jit.set_observer(obs);
        }
    }

    /// Compilation statistics so far, without waiting for a compile in progress (whose
    /// region is then not counted yet; all zero if the JIT is held).
    pub fn try_stats(&self) -> JitStats {
        self.inner.try_read().map(|j| j.stats()).unwrap_or_default()
    }

    /// Compilation statistics so far.
    pub fn stats(&self) -> JitStats {
        self.inner.read().map(|j| j.stats()).unwrap_or_default()
    }
}
