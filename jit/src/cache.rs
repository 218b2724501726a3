//! The code cache: compiled regions keyed by start pc and configuration (VL, strict_align),
//! living in Cranelift `JITModule`s. A module can only free all of its code at once, so when
//! the current module holds more than [`CacheLimits::module_bytes`] of code (or
//! [`CacheLimits::module_funcs`] functions) it is retired: every cache entry pointing into it is
//! dropped and its memory freed, and a fresh module takes over.

use crate::JitError;
use crate::codemem::{CodeMemory, Views};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Key of a compiled region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    /// Start pc.
    pub pc: u64,
    /// Lanes.
    pub vl: u32,
    /// `--strict-align`.
    pub strict_align: bool,
    /// Whether the code checks an instruction budget.
    pub budgeted: bool,
    /// The straight-line form of a loop body (one iteration under any mask, see
    /// [`crate::abi::Status::Partial`]) rather than the region discovered at `pc`.
    pub straight: bool,
    /// The recompile of a hot straight-line function with inline vector code.
    pub hot: bool,
}

/// Signature of compiled code.
pub type RegionFn = unsafe extern "C" fn(*mut crate::abi::JitCtx) -> u64;

/// A cache entry.
#[derive(Clone, Copy, Debug)]
pub enum Entry {
    /// Compiled: the function, and whether it is a straight-line first compile (helper
    /// calls for vector work) that is recompiled inline once it is hot.
    Code(RegionFn, bool),
    /// Nothing to compile at this pc (its first instruction is declined).
    Declined,
}

/// Bounds on cached code.
#[derive(Clone, Copy, Debug)]
pub struct CacheLimits {
    /// Code bytes per module before it is retired.
    pub module_bytes: usize,
    /// Functions per module before it is retired.
    pub module_funcs: usize,
    /// Cranelift IR instructions one JIT (one program's run) may compile in all: once spent,
    /// regions not compiled yet are left to the interpreter. Each region is bounded by its
    /// compile plan (`translate::plan`); this bounds a program with very many of them. The
    /// default, a million, is a few seconds of compile time at most (0.5-7 µs per IR
    /// instruction), and some 140 loop regions at the register form's largest bound.
    pub program_ir: u64,
}

impl Default for CacheLimits {
    fn default() -> Self {
        CacheLimits {
            module_bytes: 32 << 20,
            module_funcs: 4096,
            program_ir: 1_000_000,
        }
    }
}

/// Cache statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Modules retired (their code freed) because they filled up.
    pub retired_modules: u64,
    /// Code bytes in the current module.
    pub module_bytes: usize,
    /// Functions in the current module.
    pub module_funcs: usize,
}

/// Compiled regions and the module that holds them.
pub struct CodeCache {
    pub(crate) module: Option<JITModule>,
    /// Where `module`'s code is written and where it runs, when they differ.
    pub(crate) views: Option<Arc<Views>>,
    /// The quick-compiling code generator for straight-line regions (see [`new_isa`]); its
    /// code is placed in `module` as bytes.
    pub(crate) quick_isa: OwnedTargetIsa,
    map: FxHashMap<Key, Entry>,
    pub(crate) limits: CacheLimits,
    pub(crate) stats: CacheStats,
}

/// Which settings a code generator compiles with (see [`new_isa`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Settings {
    /// First compiles of straight-line regions (which run once per entry), loops in the
    /// memory form over `plan::MEMORY_BACKTRACK_IR`, and the baseline compile of a loop (see `Jit::set_baseline`), which runs
    /// until its optimised code replaces it: no optimisation and the single-pass register
    /// allocator, several times cheaper to compile than [`Settings::Optimizing`].
    ///
    /// A baseline used to get the optimiser too ([`Settings::Kept`]): it takes 15-28% off
    /// the instructions the code executes (compiled-code instructions, callgrind: stencil5
    /// rows of 254 points 1.32M -> 0.99M, fir8 0.23M -> 0.17M, matmul256 N = 64 1.43M ->
    /// 1.22M, saxpy 64K 0.36M -> 0.26M), and callgrind counted it at 1-4% of the compile.
    /// Timed, it is 40-50% of it (copy32's baseline, 339 IR instructions: translation 95 us,
    /// optimiser 280 us, lowering and allocation 320 us; fir8_lc0's, 849: 210, 495 and
    /// 500 us), so the code the loop runs meanwhile arrived that much later. Without it
    /// (`bench --compile-latency seeds/kernels/bench seeds/kernels`, the 36 loops' baseline
    /// compiles at VL 32, two runs of each build): median 1,174-1,211 -> 706-788 us, longest
    /// 6,383-6,392 -> 2,816-2,884 us (spmv_csr). Tiered against the jit engine's steady
    /// state in the same run (`lanejit bench --sizes 16M --reps 5 --engine jit,tiered`,
    /// medians of three runs of each build alternately; the ratio cancels most of the
    /// host's drift): geomean 0.36x -> 0.39x, matmul256 0.13 -> 0.17, widensum8 0.27 ->
    /// 0.35, fir8 0.23-0.24 -> 0.27, copy32 0.55 -> 0.62, saxpy32 0.36 -> 0.41; slower
    /// scatter32 0.80 -> 0.73 and strided32 0.60 -> 0.55 (strip-mined baselines whose
    /// runs end soon after their optimised code arrives), dot8 0.42 -> 0.40 (noise).
    /// At 64 MiB, where the optimised code takes over early in the run, within the noise
    /// (spmv_csr 7% slower in both pairs: its baseline runs for the 20 ms its optimised
    /// compile takes).
    Quick,
    /// Loops in register form over the optimising settings' bound, which keep this code
    /// for good (`plan::REGISTERS_BASELINE_IR`): the optimiser with the single-pass register
    /// allocator. The allocator is most of an optimising compile.
    Kept,
    /// Loops in register form, and hot recompiles of straight-line regions without a
    /// baseline tier: optimiser and backtracking allocator.
    Optimizing,
    /// The lowering of [`Settings::Optimizing`] after [`compile`] has run the optimiser and
    /// sunk loads: no optimiser (it would place the loads again), backtracking allocator.
    /// Also loops in the memory form within `plan::MEMORY_BACKTRACK_IR`.
    Lowering,
}

impl Settings {
    /// Cranelift's compile time per IR instruction with these settings, in nanoseconds:
    /// medians over the regions of more than 200 IR instructions of the bench and example
    /// kernels (`bench --compile-latency`, one compile at a time on this project's 2-vCPU
    /// hosts; 10th-90th percentiles in brackets): quick 719 (659-801), kept 1,226
    /// (825-1,450), optimising 2,263 (1,625-3,355). Translating adds about 190 more, spent
    /// before the estimate is needed ([`crate::CompileJob::estimated_us`]).
    pub(crate) const fn ns_per_ir(self) -> u64 {
        match self {
            Settings::Quick => 719,
            Settings::Kept => 1_226,
            Settings::Optimizing | Settings::Lowering => 2_263,
        }
    }

    /// About how long compiling `ir` IR instructions with these settings takes, in
    /// microseconds.
    pub(crate) const fn estimated_us(self, ir: u64) -> u64 {
        ir * self.ns_per_ir() / 1000
    }
}

/// Compile `ctx` with `settings`: for [`Settings::Kept`] and [`Settings::Optimizing`],
/// Cranelift's optimiser, then [`crate::schedule::sink_loads`] and
/// [`crate::schedule::cluster_shared`], then the lowering and
/// register allocation of the same settings without the optimiser ([`Settings::Quick`]'s
/// single-pass allocator, [`Settings::Lowering`]'s backtracking one).
///
/// Sinking loads to their first use (compiled-code instructions, callgrind, `lanejit run
/// --engine jit --vl 32`, before -> after): matmul256 N = 128 3,236,195 -> 2,855,051
/// (-11.8%), fir8_lc0 16K 95,023 -> 91,966 (-3.2%), dot8 16K 32,140 -> 31,121 (-3.2%;
/// with extending loads sunk too and the paired rounds, 25,783 -> 22,469),
/// scatter32 -0.8%, spmv_csr +0.2%, the other bench kernels within 0.1%. Clustering
/// multiply-adds by broadcast then takes matmul256 from 2,853,778 to 2,713,554 (-4.9%; the
/// others within 0.01%).
pub(crate) fn compile(
    ctx: &mut cranelift_codegen::Context,
    settings: Settings,
) -> Result<(), String> {
    let mut ctrl = cranelift_codegen::control::ControlPlane::default();
    let lower = match settings {
        Settings::Quick | Settings::Lowering => settings,
        Settings::Kept => Settings::Quick,
        Settings::Optimizing => Settings::Lowering,
    };
    if lower != settings {
        let isa = new_isa(settings).map_err(|e| e.to_string())?;
        ctx.optimize(&*isa, &mut ctrl)
            .map_err(|e| format!("{e:?}"))?;
        crate::schedule::sink_loads(&mut ctx.func);
        crate::schedule::cluster_shared(&mut ctx.func);
    }
    let isa = new_isa(lower).map_err(|e| e.to_string())?;
    ctx.compile(&*isa, &mut ctrl)
        .map(|_| ())
        .map_err(|e| format!("{:?}", e.inner))
}

/// A code generator for the host (features from `cranelift_native`) with `settings`.
///
/// Built once per process and setting (a shared, immutable `Arc`): probing the host and
/// building the backend cost a good part of a JIT's set-up, which every cold run pays.
pub(crate) fn new_isa(settings: Settings) -> Result<OwnedTargetIsa, JitError> {
    type Built = Result<OwnedTargetIsa, String>;
    static ISAS: [std::sync::OnceLock<Built>; 4] = [
        std::sync::OnceLock::new(),
        std::sync::OnceLock::new(),
        std::sync::OnceLock::new(),
        std::sync::OnceLock::new(),
    ];
    ISAS[settings as usize]
        .get_or_init(|| build_isa(settings).map_err(|e| e.to_string()))
        .clone()
        .map_err(JitError::Setup)
}

fn build_isa(which: Settings) -> Result<OwnedTargetIsa, JitError> {
    let mut fb = settings::builder();
    let set = |fb: &mut settings::Builder, k: &str, v: &str| {
        fb.set(k, v).map_err(|e| JitError::Setup(e.to_string()))
    };
    match which {
        Settings::Quick => {
            set(&mut fb, "opt_level", "none")?;
            set(&mut fb, "regalloc_algorithm", "single_pass")?;
        }
        Settings::Kept => {
            set(&mut fb, "opt_level", "speed")?;
            set(&mut fb, "regalloc_algorithm", "single_pass")?;
        }
        Settings::Optimizing => set(&mut fb, "opt_level", "speed")?,
        Settings::Lowering => set(&mut fb, "opt_level", "none")?,
    }
    set(&mut fb, "use_colocated_libcalls", "false")?;
    set(&mut fb, "is_pic", "false")?;
    set(
        &mut fb,
        "enable_verifier",
        if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        },
    )?;
    cranelift_native::builder()
        .map_err(|e| JitError::Setup(e.to_string()))?
        .finish(settings::Flags::new(fb))
        .map_err(|e| JitError::Setup(e.to_string()))
}

/// A fresh JIT module for the host with the optimising settings of [`new_isa`], and the views
/// of its dual-mapped code memory where the process can use it ([`CodeMemory::probe`]).
pub(crate) fn new_module() -> Result<(JITModule, Option<Arc<Views>>), JitError> {
    let mut b = JITBuilder::with_isa(
        new_isa(Settings::Optimizing)?,
        cranelift_module::default_libcall_names(),
    );
    let views = CodeMemory::probe().then(|| {
        let (mem, views) = CodeMemory::new();
        b.memory_provider(Box::new(mem));
        views
    });
    Ok((JITModule::new(b), views))
}

impl CodeCache {
    /// An empty cache.
    pub fn new(limits: CacheLimits) -> Result<CodeCache, JitError> {
        let (module, views) = new_module()?;
        Ok(CodeCache {
            module: Some(module),
            views,
            quick_isa: new_isa(Settings::Quick)?,
            map: FxHashMap::default(),
            limits,
            stats: CacheStats::default(),
        })
    }

    /// The entry for `key`.
    #[inline]
    pub fn get(&self, key: &Key) -> Option<Entry> {
        self.map.get(key).copied()
    }

    /// Record an entry.
    pub fn insert(&mut self, key: Key, e: Entry) {
        self.map.insert(key, e);
    }

    /// Forget the entry of `key` (its code stays in the module until it is retired).
    pub(crate) fn remove(&mut self, key: &Key) {
        self.map.remove(key);
    }

    /// Whether the current module is full and must be retired before compiling more.
    pub(crate) fn full(&self) -> bool {
        self.stats.module_bytes >= self.limits.module_bytes
            || self.stats.module_funcs >= self.limits.module_funcs
    }

    /// Drop every compiled entry and free the current module's code; start a new module.
    pub(crate) fn retire(&mut self) -> Result<(), JitError> {
        self.map.retain(|_, e| matches!(e, Entry::Declined));
        if let Some(m) = self.module.take() {
            // SAFETY: every function pointer into this module was just removed from the map,
            // and no compiled code is running (retire is only called between region calls).
            unsafe { m.free_memory() };
        }
        let (module, views) = new_module()?;
        self.module = Some(module);
        self.views = views;
        self.stats.retired_modules += 1;
        self.stats.module_bytes = 0;
        self.stats.module_funcs = 0;
        Ok(())
    }

    /// Number of compiled entries.
    pub fn compiled(&self) -> usize {
        self.map
            .values()
            .filter(|e| matches!(e, Entry::Code(..)))
            .count()
    }
}

impl Drop for CodeCache {
    fn drop(&mut self) {
        self.map.clear();
        if let Some(m) = self.module.take() {
            // SAFETY: the map holding every pointer into the module is cleared and the cache
            // is going away, so nothing can call into the module afterwards.
            unsafe { m.free_memory() };
        }
    }
}
