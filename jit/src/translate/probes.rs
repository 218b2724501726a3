//! The region report's counters in compiled code (`crate::observe`): the entry and
//! retired-instruction counts of the function, and one count per instruction and
//! [`Fallback`] reason at the point where the translator sends an instruction to a helper or
//! back to the interpreter. Each is an atomic add to a counter of the observer (compiled code
//! is shared by the threads of a launch). Without counters (`Tx::probes` is `None`) nothing
//! is emitted.

use super::Tx;
use crate::observe::Fallback;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{AtomicRmwOp, InstBuilder, MemFlagsData, Value};

impl Tx<'_, '_> {
    /// Add `v` to the counter at `addr`.
    fn bump(&mut self, addr: u64, v: Value) {
        let a = self.iconst(addr);
        self.b
            .ins()
            .atomic_rmw(I64, MemFlagsData::trusted(), AtomicRmwOp::Add, a, v);
    }

    /// Count one entry of the function (at its entry).
    pub(super) fn count_entry(&mut self) {
        if let Some(addr) = self.probes.as_ref().map(|p| p.entries.1) {
            let one = self.iconst(1);
            self.bump(addr, one);
        }
    }

    /// Count `n` instructions retired by the function (at its shared exit).
    pub(super) fn count_retired(&mut self, n: Value) {
        if let Some(addr) = self.probes.as_ref().map(|p| p.retired.1) {
            self.bump(addr, n);
        }
    }

    /// The instruction at `pc` goes to a helper or back to the interpreter here, because of
    /// `why`: count it (in the current block, which must run exactly then).
    pub(crate) fn fallback(&mut self, pc: u64, why: Fallback) {
        if let Some(addr) = self.probes.as_mut().map(|p| p.site(pc, why)) {
            let one = self.iconst(1);
            self.bump(addr, one);
        }
    }
}
