//! `lanejit-jit`: the Cranelift tier of lanejit.
//!
//! [`Jit`] compiles hot regions of a guest program ([`region`]) into native functions
//! ([`translate`]) kept in a bounded code cache ([`cache`]), and runs them against a
//! [`Machine`] through the context block of [`abi`]. Compiled code never traps: every failed
//! check returns to the caller, which runs the reference interpreter for that instruction.
//! [`shared::SharedJit`] lets the worker threads of a launch share one JIT, and [`diskcache`]
//! keeps compiled regions on disk across runs (`--code-cache`). With a baseline tier
//! ([`Jit::set_baseline`]) loops are first compiled with the quick settings
//! ([`cache::Settings::Quick`]: no optimiser, single-pass register allocation, and small bodies
//! streaming one iteration per round, `translate::TxConfig::pairs`; simple counted loops in
//! the strip-mined form, `translate::strip`), and their optimised code, compiled off the
//! JIT's lock, replaces it later.
//! Between Cranelift's optimiser and its lowering, [`schedule`] moves vector loads down to
//! their first use ([`cache::compile`]), which the optimiser's placement does not do for
//! chains of fused multiply-adds.

pub mod abi;
pub mod cache;
mod codemem;
pub mod diskcache;
pub mod observe;
pub mod region;
mod schedule;
pub mod shared;
mod translate;

use abi::{JitCtx, Status};
use cache::{CacheLimits, CacheStats, CodeCache, Entry, Key, RegionFn};
use cranelift_codegen::ir::AbiParam;
use cranelift_codegen::ir::types::I64;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{Module, ModuleReloc};
use lanejit_interp::interp::DecodedCode;
use lanejit_interp::machine::{Config, Machine};
use region::Code;
use region::Seen;
use std::time::Instant;
pub use translate::plan::{self, Plan};

/// The JIT could not be set up or could not compile.
#[derive(Debug, thiserror::Error)]
pub enum JitError {
    /// The host ISA or a Cranelift setting is unsupported.
    #[error("cannot set up the code generator: {0}")]
    Setup(String),
    /// Cranelift rejected a function (a translator bug).
    #[error("cannot compile the region at pc 0x{pc:x}: {msg}")]
    Compile {
        /// Region start.
        pc: u64,
        /// Cranelift's message.
        msg: String,
    },
}

/// What a call into compiled code did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionExit {
    /// The interpreter must execute the instruction at the (new) `m.pc` next.
    pub interp_next: bool,
    /// Instructions retired by the call.
    pub retired: u64,
}

/// Compilation statistics.
#[derive(Clone, Debug, Default)]
pub struct JitStats {
    /// Regions compiled.
    pub compiled_regions: u64,
    /// Regions taken from the on-disk code cache instead of compiled ([`diskcache`]).
    pub cached_regions: u64,
    /// Loops first compiled as a baseline (see [`Jit::set_baseline`])
    /// whose optimised code has since replaced it; not counted in `compiled_regions`.
    pub optimized_regions: u64,
    /// Total compile time in microseconds.
    pub compile_us: u64,
    /// Compile time of every region, microseconds (for medians).
    pub compile_times_us: Vec<u64>,
    /// Every compiled region, in compile order.
    pub regions: Vec<RegionStat>,
    /// Cache statistics.
    pub cache: CacheStats,
    /// Cranelift IR instructions compiled in all (see [`CacheLimits::program_ir`]).
    pub ir_insts: u64,
    /// Regions left to the interpreter because the program's compile budget was spent.
    pub over_budget: u64,
    /// Calls from the dispatcher into compiled code ([`Jit::run`]); calls from one region to
    /// the next (chaining, see `abi::CHAIN_DEPTH`) are not counted.
    pub calls: u64,
    /// Compiles that failed (the translator built IR Cranelift rejected, or Cranelift
    /// failed): those regions run on the interpreter, so results stay right, but it is a bug
    /// and the test harness requires none (debug builds run Cranelift's IR verifier).
    pub compile_errors: u64,
}

/// What kind of function a compiled region is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionKind {
    /// A straight-line run (compiled with the quick settings; optimised when recompiled hot
    /// without a baseline tier).
    Straight,
    /// A loop with its back edge (optimised).
    Loop,
    /// The straight-line form of a loop body, for its partial-mask iteration.
    Tail,
}

impl RegionKind {
    /// The kind of the function compiled for `key` from `region`.
    fn of(key: Key, region: &region::Region) -> RegionKind {
        match (key.straight, region.loop_head.is_some()) {
            (true, _) => RegionKind::Tail,
            (false, true) => RegionKind::Loop,
            (false, false) => RegionKind::Straight,
        }
    }
}

/// What the translator's configuration takes from a [`Jit`] (see [`TxSetup::config`]).
#[derive(Clone, Copy)]
struct TxSetup {
    vl: u32,
    strict_align: bool,
    budgeted: bool,
    chain_slots: u64,
    /// Loops are compiled to be replaced (a baseline tier): see `translate::TxConfig::yields`.
    yields: bool,
}

impl TxSetup {
    /// The configuration to translate a region for `isa` in `plan`.
    fn config(
        self,
        isa: &dyn cranelift_codegen::isa::TargetIsa,
        plan: Plan,
        hot: bool,
        hints: region::Hints,
        pairs: bool,
    ) -> translate::TxConfig {
        translate::TxConfig {
            vl: self.vl,
            strict_align: self.strict_align,
            call_conv: isa.default_call_conv(),
            budgeted: self.budgeted,
            hot,
            chain_slots: self.chain_slots,
            plan,
            native_fma: isa.has_native_fma(),
            tail: hints.tail,
            ordered_tail: hints.ordered_tail,
            steps: hints.steps,
            strides: hints.strides,
            sregs: hints.sregs,
            pairs,
            strip: None,
            yields: self.yields,
        }
    }

    /// The configuration of a loop's strip-mined form (`translate::strip`), `w` lanes per
    /// copy of its body ([`translate::strip_width`]).
    fn strip_config(
        self,
        isa: &dyn cranelift_codegen::isa::TargetIsa,
        hot: bool,
        hints: region::Hints,
        w: u32,
    ) -> translate::TxConfig {
        translate::TxConfig {
            vl: w,
            strip: Some(self.vl),
            ..self.config(isa, Plan::Registers, hot, hints, false)
        }
    }
}

/// Whether `region`, planned as `plan` at `vl` lanes, is expected to get its register form
/// with the optimising settings: the plan is the register form and its estimated IR fits
/// the optimising bound.
fn registers_optimized(region: &region::Region, plan: Plan, vl: u32, seen: Option<Seen>) -> bool {
    plan == Plan::Registers
        && plan::optimizing_fits(region, plan::estimate(region, vl, false, seen), 0, vl)
}

/// When the register form just emitted into `ctx` is over the optimising settings' bound at
/// `vl` lanes (it would get the kept settings, whose code runs slower than the strip-mined
/// form's optimised one) and `region` has a strip-mined form (`translate::strip_width`):
/// that form's configuration (`strip_cfg` of its width), once `emit` translated it into
/// `ctx` without exits and within the register form's bound. Else `None`, and `ctx` holds the
/// register form `full` again. `emit` translates a configuration into `ctx` (cleared first)
/// and returns whether it came out without exits. Used by a first compile without a baseline
/// tier (`Jit::translate`) and by a baseline's optimised recompile (`Jit::prepare_optimized`).
fn strip_instead(
    ctx: &mut cranelift_codegen::Context,
    region: &region::Region,
    seen: Option<Seen>,
    vl: u32,
    full: translate::TxConfig,
    strip_cfg: impl Fn(u32) -> translate::TxConfig,
    emit: &mut impl FnMut(&mut cranelift_codegen::Context, translate::TxConfig) -> bool,
) -> Option<translate::TxConfig> {
    if plan::optimizing_fits(
        region,
        ctx.func.dfg.num_insts(),
        block_params(&ctx.func),
        vl,
    ) {
        return None;
    }
    let scfg = strip_cfg(translate::strip_width(region, seen, vl)?);
    if emit(ctx, scfg) && ctx.func.dfg.num_insts() <= plan::registers_ir(vl) {
        return Some(scfg);
    }
    emit(ctx, full);
    None
}

/// The block parameters of `func`'s blocks, in all.
fn block_params(func: &cranelift_codegen::ir::Function) -> usize {
    func.layout
        .blocks()
        .map(|b| func.dfg.block_params(b).len())
        .sum()
}

/// Translate `region` into `func` (empty, named) with signature `sig`.
fn translate_into(
    func: &mut cranelift_codegen::ir::Function,
    fctx: &mut FunctionBuilderContext,
    sig: cranelift_codegen::ir::Signature,
    fcfg: cranelift_codegen::isa::TargetFrontendConfig,
    region: &region::Region,
    cfg: translate::TxConfig,
    probes: &mut Option<observe::Probes>,
) -> bool {
    func.signature = sig;
    let mut b = FunctionBuilder::new(func, fctx);
    let ok = translate::translate(&mut b, region, cfg, probes.as_mut());
    b.finalize(fcfg);
    ok
}

/// The signature of every compiled region (`RegionFn`: the context in, the status out).
fn region_signature(
    isa: &dyn cranelift_codegen::isa::TargetIsa,
) -> cranelift_codegen::ir::Signature {
    let mut sig = cranelift_codegen::ir::Signature::new(isa.default_call_conv());
    sig.params.push(AbiParam::new(I64));
    sig.returns.push(AbiParam::new(I64));
    sig
}

/// One compiled region.
#[derive(Clone, Copy, Debug)]
pub struct RegionStat {
    /// Start pc.
    pub pc: u64,
    /// Kind of function.
    pub kind: RegionKind,
    /// Guest instructions it covers.
    pub insts: usize,
    /// Compile time, microseconds.
    pub us: u64,
    /// Machine-code bytes.
    pub code_bytes: usize,
    /// Cranelift IR instructions it was translated to.
    pub ir_insts: usize,
    /// The form it was compiled in (see `translate::plan`).
    pub plan: Plan,
    /// A recompile of a hot straight-line function with inline vector code (see
    /// [`HOT_ENTRIES`]), not a first compile.
    pub hot: bool,
    /// Taken from the on-disk code cache (`us` is then the time to read and install it).
    pub cached: bool,
    /// A loop compiled as a baseline first, to be replaced by its optimised code
    /// (see [`Jit::set_baseline`]).
    pub baseline: bool,
    /// The optimised code that replaced a baseline compile of this loop (with `strip`: the
    /// strip-mined step, itself replaced later, [`strip_step`]).
    pub optimized: bool,
    /// Compiled in the strip-mined form (`translate::strip`): a baseline, its optimised step,
    /// or kept for good where the register form would be over the optimising bound.
    pub strip: bool,
}

/// A handle to a compiled region.
#[derive(Clone, Copy, Debug)]
pub struct Compiled(RegionFn, bool);

impl Compiled {
    /// Whether entries of this region are counted ([`Jit::finish`] must see every call): a
    /// straight-line first compile, recompiled with inline vector code once hot.
    pub fn counts_entries(&self) -> bool {
        self.1
    }
}

/// A call into compiled code that [`Jit::enter`] made and [`Jit::finish`] completes.
#[derive(Clone, Copy, Debug)]
pub struct Entered {
    c: Compiled,
    /// The region's start pc.
    pc: u64,
    /// Retired count before the call.
    before: u64,
    status: Status,
}

impl Entered {
    /// Whether [`Jit::finish`] has work to do (count the entry, or run a loop's tail); if not,
    /// [`Entered::exit`] gives the result without it.
    pub fn needs_finish(&self) -> bool {
        self.c.1 || self.partial()
    }

    /// Whether the call stopped at a loop's partial iteration, which [`Jit::finish`] runs in
    /// the straight form of the body.
    pub fn partial(&self) -> bool {
        self.status == Status::Partial
    }

    /// The exit of a call without [`Jit::finish`] (a loop's tail then goes to the
    /// interpreter, which is always correct).
    pub fn exit(&self, m: &Machine) -> RegionExit {
        RegionExit {
            interp_next: self.status != Status::Next,
            retired: m.retired - self.before,
        }
    }
}

/// Entries of a straight-line first compile before it is recompiled with inline vector code.
pub const HOT_ENTRIES: u32 = 32;

/// The JIT for one machine configuration.
pub struct Jit {
    code: Code,
    vl: u32,
    strict_align: bool,
    budgeted: bool,
    cache: CodeCache,
    ctx: cranelift_codegen::Context,
    fctx: FunctionBuilderContext,
    stats: JitStats,
    /// Entries of straight-line first compiles (see [`HOT_ENTRIES`]).
    hits: rustc_hash::FxHashMap<Key, std::sync::atomic::AtomicU32>,
    /// The chaining table (`JitCtx::chain`): per instruction, the code a region exit to its
    /// pc may call directly, or 0, and the same for the straight form of the loop body
    /// starting there (a loop's exit to its tail). It holds what the dispatcher would run,
    /// except straight-line first compiles (whose entries it counts to recompile them once
    /// hot); cleared when the module holding the code is retired.
    chain: Vec<u64>,
    /// The on-disk code cache, when one is used.
    disk: Option<std::sync::Arc<diskcache::DiskCache>>,
    /// This program's and host's part of every disk-cache key.
    prefix: diskcache::Prefix,
    /// The region starts of the disk cache's manifest when it was given (sorted).
    manifest: Vec<u64>,
    /// What is observed of compiled code (profiler symbols, report counters, dumps).
    observer: Option<std::sync::Arc<observe::Observer>>,
    /// Loops get a baseline compile first (see [`Jit::set_baseline`]).
    baseline: bool,
    /// Baseline compiles waiting for their optimised code, oldest first. Behind its own lock:
    /// a shared JIT's compiler thread takes one off under the shared lock, while the run
    /// may be in that very baseline's code (see [`abi::TierWords`]).
    pending: std::sync::Mutex<std::collections::VecDeque<Baseline>>,
    /// Hot straight-line regions are recompiled by whoever takes [`Jit::next_hot`] (a
    /// background compiler), not on the entry that found them hot (see
    /// [`Jit::set_defer_hot`]).
    defer_hot: bool,
    /// A strip-mined baseline that takes a step is compiled as the step (see
    /// [`Jit::set_step_first`]).
    step_first: bool,
    /// Straight-line first compiles found hot and waiting for their recompile, oldest first.
    hot_pending: std::collections::VecDeque<Key>,
    /// Loops compiled without their partial-mask iterations (`translate::TxConfig::tail`) or
    /// with them but with the masked tail's loads free to move
    /// (`translate::TxConfig::ordered_tail`), with how many times they have exited for one
    /// since ([`LAZY_TAIL_EXITS`]) and the hints they were compiled with (their recompile
    /// keeps all but those two).
    lazy: rustc_hash::FxHashMap<Key, (u32, region::Hints)>,
    /// What loops' baseline code shares with a tiered run's compiler thread
    /// ([`abi::TierWords`], [`Jit::tier_words`]).
    tier: std::sync::Arc<abi::TierWords>,
}

/// How many times a loop compiled without its partial-mask iterations (a *lazy tail*: the
/// entry that made it compile had none ahead, `region::tail_expected`) may leave for the
/// straight form of its body before it is compiled again with them: a 2D kernel whose first
/// row happened to be a multiple of VL long then runs its ragged rows' tails in the loop's
/// own function, as if the first row had had one. A loop compiled with them whose masked
/// tail keeps leaving so (its entry found a store of the iteration over what it loads: an
/// in-place shift through two base registers) is compiled again with the tail's loads in
/// program order.
pub const LAZY_TAIL_EXITS: u32 = 8;

/// Whether a strip-mined baseline of `strip_ir` IR instructions, whose register form is
/// estimated at `register_ir`, is first replaced by a *step*: the same strip-mined
/// translation compiled with the optimising settings (which yields at its stretch headers as
/// the baseline does), queued in turn for the register form ([`Jit::prepare_optimized`],
/// only for the loop a run is in, `shared::Baselines::Of`).
///
/// Why: with the quick settings' single-pass allocator, every use of a value live into a
/// block reloads it from its spill slot, and a strip-mined body is a loop over lane chunks,
/// so the baseline runs 2-3x slower than the same IR optimised (jit steady state with the
/// strip-mined code, `lanejit bench --sizes 256K,16M`, Melem/s at 16 MiB, quick /
/// optimised / register form: stencil5_lc0 954 / 3,118 / 2,724, fir8_lc0 920 / 2,161 /
/// 2,246, matmul256 5,053 / 12,123 / 14,501, saxpy32 2,314 / 3,741 / 3,339), while its
/// optimised compile takes a third to a half of the register form's (stencil5 2.6-3.0 ms
/// against 5.9-6.5, fir8 2.1-3.1 against 7.8-11, matmul256's row loop 2.9-4.5 against
/// 13-14). Where the register form is not much larger than the strip-mined IR (gathers,
/// copies, strided loads: a ratio of 1.0-1.45 at VL 32) the step would delay it for little.
/// Tiered / jit steady state (`lanejit bench --sizes 64M --reps 5 --engine jit,tiered`,
/// without -> with): fir8_lc0 0.69 -> 0.81, fir8_vaddr 0.66 -> 0.82, stencil5_lc0 0.63 ->
/// 0.78, stencil5_vaddr 0.62 -> 0.71, saxpy32 0.80 -> 0.85; at 16 MiB fir8 0.28 -> 0.35,
/// stencil5 unchanged (its runs end about when the step arrives); the others within the
/// host's noise.
fn strip_step(strip_ir: usize, register_ir: usize) -> bool {
    2 * register_ir >= 3 * strip_ir
}

/// Where code that [`Jit::place`] puts in the module comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Placed {
    /// The on-disk code cache.
    Cached,
    /// The optimising recompile of a baseline.
    Optimized,
    /// The strip-mined step between a baseline and its optimised code ([`strip_step`]).
    StripStep,
    /// The optimising recompile of a baseline in the strip-mined form, for good (its
    /// register form over the optimising settings' bound, `Jit::prepare_optimized`).
    StripFinal,
}

/// A loop compiled as a baseline, waiting for its optimised code.
#[derive(Clone, Copy, Debug)]
pub struct Baseline {
    key: Key,
    /// The form it was translated in (the optimised code is translated in the same).
    plan: Plan,
    /// `CacheStats::retired_modules` when it was compiled: a retired module took it away.
    generation: u64,
    ir_insts: usize,
    /// The hints it was compiled with (its tail compiled in or not, `translate::TxConfig::tail`;
    /// registers tested for contiguous lanes): the optimised code is compiled with the same.
    hints: region::Hints,
    /// A strip-mined baseline whose register form takes long to compile: its next recompile
    /// is the strip-mined form again with the optimising settings, of this many IR
    /// instructions, itself replaced by the register form later ([`strip_step`]).
    strip_ir: Option<usize>,
}

/// What [`Jit::front`] finds for a compile.
enum Front {
    /// Its code, or its refusal, is in the cache.
    Known(Option<Compiled>),
    /// The program's compile budget is spent.
    Spent,
    /// Nothing to compile there.
    Nothing,
    /// The region to translate (`true`: a `LOOP` alone, going on to its body's code).
    Region(region::Region, bool),
}

/// A compile translated to IR, to be compiled by [`CompileJob::compile`] (which needs no
/// JIT, so a shared JIT keeps running compiled code meanwhile) and placed: a first compile
/// ([`Jit::prepare_compile`] or [`Jit::compile`], placed by [`Jit::install_compiled`]), or
/// the optimising recompile of a [`Baseline`] ([`Jit::prepare_optimized`], placed by
/// [`Jit::install_optimized`]).
pub struct CompileJob {
    key: Key,
    hints: region::Hints,
    region: region::Region,
    plan: Plan,
    stored: Stored,
    settings: cache::Settings,
    baseline: bool,
    /// For a baseline, the IR its optimising recompile is expected to have
    /// ([`Baseline::estimated_us`]).
    recompile_ir: usize,
    /// Translated in the strip-mined form (`translate::strip`).
    strip: bool,
    ctx: cranelift_codegen::Context,
    ir: Option<String>,
    probes: Option<observe::Probes>,
    t0: Instant,
    compiled: Result<(), String>,
    /// The baseline an optimising recompile replaces (`None`: a first compile).
    replaces: Option<Baseline>,
}

impl Baseline {
    /// The pc its region is entered at.
    pub fn pc(&self) -> u64 {
        self.key.pc
    }

    /// About how long its optimising recompile will take, in microseconds (as
    /// [`CompileJob::estimated_us`], from the baseline's IR size: the recompile translates
    /// again to the same IR, but for a small body's paired rounds; for a strip-mined
    /// baseline, the register form's estimate, or the step's IR when it takes one first).
    pub fn estimated_us(&self) -> u64 {
        cache::Settings::Optimizing.estimated_us(self.strip_ir.unwrap_or(self.ir_insts) as u64)
    }

    /// Whether its next recompile is the strip-mined step ([`strip_step`]).
    pub fn steps(&self) -> bool {
        self.strip_ir.is_some()
    }

    /// The same baseline with its next recompile its optimised code, without the strip-mined
    /// step (which pays only while the loop runs: not for a code cache filled at the run's
    /// end).
    pub fn without_step(self) -> Baseline {
        Baseline {
            strip_ir: None,
            ..self
        }
    }
}

impl CompileJob {
    /// Compile the IR with the settings its form chose (Cranelift only: no JIT state).
    pub fn compile(&mut self) {
        self.compiled = cache::compile(&mut self.ctx, self.settings);
    }

    /// The job waited `d` between its translation and its compile: not compile time (the
    /// region's reported compile time and its span on a timeline leave it out).
    pub(crate) fn waited(&mut self, d: std::time::Duration) {
        self.t0 += d;
    }

    /// About how long [`CompileJob::compile`] will take, in microseconds: its IR size times
    /// its settings' measured cost per IR instruction (`cache::Settings::ns_per_ir`). A
    /// tiered run paces its background compiles by it.
    pub fn estimated_us(&self) -> u64 {
        self.settings
            .estimated_us(self.ctx.func.dfg.num_insts() as u64)
    }
}

impl Drop for Jit {
    /// With a disk cache: record the regions this JIT had (first compiles and loops, not
    /// tails or hot recompiles, which are found on demand) in the program's manifest, with
    /// those it already listed (a run that takes a different path adds to it, and one that
    /// adds nothing writes nothing).
    fn drop(&mut self) {
        // Nothing of a counting JIT goes to the cache (see `Jit::set_observer`).
        let Some(d) = self.disk.as_ref().filter(|_| !self.counting()) else {
            return;
        };
        let mut pcs: Vec<u64> = self
            .stats
            .regions
            .iter()
            .filter(|r| !r.hot && r.kind != RegionKind::Tail)
            .map(|r| r.pc)
            .collect();
        // What it read plus what it added; rewritten only when that is new.
        pcs.extend_from_slice(&self.manifest);
        pcs.sort_unstable();
        pcs.dedup();
        if pcs != self.manifest {
            d.write_manifest(&self.prefix, &self.key(0, false), &pcs);
        }
    }
}

impl std::fmt::Debug for Jit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jit")
            .field("vl", &self.vl)
            .field("strict_align", &self.strict_align)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// How a region was compiled, for its disk-cache entry.
struct Stored {
    plan: Plan,
    straight_body: bool,
    loop_alone: bool,
    ir_insts: usize,
}

/// Check that the just compiled `code` of `key` runs wherever it is placed (the dual-mapped
/// code memory and the disk cache rely on it), and store it in the disk cache `disk` if any
/// (code with relocations is not stored).
fn check_and_store(
    disk: Option<&diskcache::DiskCache>,
    prefix: &diskcache::Prefix,
    key: Key,
    code: &cranelift_codegen::CompiledCode,
    how: Stored,
) -> Result<(), &'static str> {
    if !codemem::position_independent(code.buffer.relocs().iter().map(|r| r.kind)) {
        return Err("position-dependent relocation");
    }
    if let Some(d) = disk.filter(|_| code.buffer.relocs().is_empty()) {
        d.store(
            prefix,
            &key,
            &diskcache::Stored {
                plan: how.plan,
                straight_body: how.straight_body,
                loop_alone: how.loop_alone,
                ir_insts: how.ir_insts as u32,
                align: code.buffer.alignment,
                code: code.code_buffer().to_vec(),
            },
        );
    }
    Ok(())
}

impl Jit {
    /// A JIT for `program` (the interpreter's decoding of it, `Decoded::program`) under the
    /// VL, alignment mode and limit mode of `m`.
    pub fn new(program: &DecodedCode, m: &Machine) -> Result<Jit, JitError> {
        Self::with_limits(program, m, CacheLimits::default())
    }

    /// As [`Jit::new`] for machines of configuration `config` (all the JIT reads of one).
    pub fn for_config(program: &DecodedCode, config: &Config) -> Result<Jit, JitError> {
        Self::build(program, config, CacheLimits::default())
    }

    /// As [`Jit::new`] with explicit cache bounds.
    pub fn with_limits(
        program: &DecodedCode,
        m: &Machine,
        limits: CacheLimits,
    ) -> Result<Jit, JitError> {
        Self::build(program, &m.config, limits)
    }

    fn build(program: &DecodedCode, config: &Config, limits: CacheLimits) -> Result<Jit, JitError> {
        let words = program.words();
        let cache = CodeCache::new(limits)?;
        let module = cache.module.as_ref().expect("module");
        let ctx = module.make_context();
        Ok(Jit {
            disk: None,
            prefix: diskcache::Prefix::NONE,
            manifest: Vec::new(),
            code: Code::of(program),
            vl: config.vl,
            strict_align: config.strict_align,
            budgeted: config.max_instructions.is_some(),
            cache,
            ctx,
            fctx: FunctionBuilderContext::new(),
            stats: JitStats::default(),
            hits: rustc_hash::FxHashMap::default(),
            // Two slots per instruction (its region, its loop body's straight form); at least
            // one pair, so that the table's address is always valid to read.
            chain: vec![0; 2 * words.len().max(1)],
            observer: None,
            baseline: false,
            pending: Default::default(),
            defer_hot: false,
            step_first: false,
            hot_pending: std::collections::VecDeque::new(),
            lazy: rustc_hash::FxHashMap::default(),
            tier: Default::default(),
        })
    }

    /// The words loops' baseline code shares with whoever replaces it by its optimised code
    /// ([`abi::TierWords`]: where a running loop stands, and which baseline is to leave for
    /// the dispatcher so that its optimised code can be placed).
    pub fn tier_words(&self) -> std::sync::Arc<abi::TierWords> {
        std::sync::Arc::clone(&self.tier)
    }

    /// Show every region compiled from now on to `obs` ([`observe`]: profiler symbols,
    /// dumps, and with its counters on, code that counts for the region report, which then
    /// bypasses the disk cache: counting code holds this process's counter addresses). Set
    /// before [`Jit::set_disk_cache`], which otherwise installs cached regions at once.
    pub fn set_observer(&mut self, obs: std::sync::Arc<observe::Observer>) {
        self.observer = Some(obs);
    }

    /// Whether compiled code counts for the region report.
    fn counting(&self) -> bool {
        self.observer.as_ref().is_some_and(|o| o.options().counters)
    }

    /// This program's and host's part of every disk-cache key: the words and the flags of
    /// both code generators. Made when a disk cache is given, not with the JIT (formatting
    /// the flags and hashing took 35-45 us of a fresh process's 140-180 us JIT set-up, on
    /// the compiler thread's way to its first compile).
    fn disk_prefix(&self) -> diskcache::Prefix {
        let module = self.cache.module.as_ref().expect("module");
        let host: String = (module.isa().isa_flags().iter())
            .chain(self.cache.quick_isa.isa_flags().iter())
            .map(|f| format!("{f};"))
            .collect();
        diskcache::Prefix::new(
            self.code.words(),
            &format!("{}|{host}", module.isa().triple()),
        )
    }

    /// Use the on-disk code cache `disk` (or none): regions found there are installed
    /// instead of compiled, and regions compiled are stored there.
    /// Installs at once the regions the cache's manifest for this program and configuration
    /// names and holds (see [`diskcache`]).
    pub fn set_disk_cache(&mut self, disk: Option<std::sync::Arc<diskcache::DiskCache>>) {
        self.disk = disk;
        if self.disk.is_some() && self.prefix == diskcache::Prefix::NONE {
            self.prefix = self.disk_prefix();
        }
        // Counting code is never taken from the cache (see `Jit::set_observer`).
        let Some(d) = self.disk.clone().filter(|_| !self.counting()) else {
            return;
        };
        self.manifest = d.manifest(&self.prefix, &self.key(0, false));
        self.manifest.sort_unstable();
        self.manifest.dedup();
        for pc in self.manifest.clone() {
            let key = self.key(pc, false);
            if self.cache.get(&key).is_some() {
                continue;
            }
            // Only what the cache holds: nothing is compiled ahead of need.
            if let Some(stored) = d.load(&self.prefix, &key) {
                let region = region::discover_for(&self.code, pc, false, self.vl);
                if let Some(region) = region {
                    if self.cache.full() {
                        break;
                    }
                    let _ = self.install(key, region, stored, Instant::now());
                }
            }
        }
    }

    fn key(&self, pc: u64, straight: bool) -> Key {
        Key {
            pc,
            vl: self.vl,
            strict_align: self.strict_align,
            budgeted: self.budgeted,
            straight,
            hot: false,
        }
    }

    /// Count an entry of the straight-line first compile at `key`; every [`HOT_ENTRIES`]
    /// entries it is recompiled with inline vector code ([`Jit::recompile_hot`]), which
    /// replaces it in the cache (so counting stops, unless the recompile was declined). Called
    /// only after the entry's call returned (a recompile may retire the module holding it).
    fn count_entry(&mut self, key: Key) {
        if self.hit(key) {
            self.hot(key);
        }
    }

    /// The straight-line first compile at `key` got hot: recompile it now, or queue it for
    /// whoever takes the recompiles ([`Jit::set_defer_hot`]: a tiered run's compiler thread;
    /// a loop body's straight form run for every partial iteration was recompiled on the
    /// run's path, 1.8 ms of a stencil's rows).
    fn hot(&mut self, key: Key) {
        if !self.defer_hot {
            self.recompile_hot(key);
        } else if !self.hot_pending.contains(&key) {
            self.hot_pending.push_back(key);
        }
    }

    /// Count an entry of the first compile at `key` (only `&self`: the counts are atomic);
    /// `true` every [`HOT_ENTRIES`] entries. Entries of a region whose count was dropped
    /// (its module retired) are not counted.
    fn hit(&self, key: Key) -> bool {
        self.hits.get(&key).is_some_and(|n| {
            (n.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1) % HOT_ENTRIES == 0
        })
    }

    /// Recompile the straight-line first compile at `key` with inline vector code, in its
    /// place (nothing when that is declined, or found declined before).
    fn recompile_hot(&mut self, key: Key) {
        let hot = Key { hot: true, ..key };
        if let Ok(Some(c)) = self.compile_key(hot, region::Hints::ALL) {
            self.place_hot(key, c);
        }
    }

    /// Run the recompile `c` of the hot straight-line first compile at `key` in its place:
    /// entries find it (and no longer count), exits call it.
    fn place_hot(&mut self, key: Key, c: Compiled) {
        self.cache.insert(key, Entry::Code(c.0, false));
        self.set_chain(key, c.0);
    }

    /// Let region exits to `key`'s pc call `f` directly: exits with `Status::Next` for a
    /// region, with `Status::Partial` for the straight form of a loop body (`key.straight`).
    fn set_chain(&mut self, key: Key, f: RegionFn) {
        let i = 2 * (key.pc / 8) as usize + key.straight as usize;
        if let Some(slot) = self.chain.get_mut(i) {
            if key.pc % 8 == 0 {
                *slot = f as usize as u64;
            }
        }
    }

    /// The compiled region at `pc`, if any.
    #[inline]
    pub fn lookup(&self, pc: u64) -> Option<Compiled> {
        match self.cache.get(&self.key(pc, false)) {
            Some(Entry::Code(f, b)) => Some(Compiled(f, b)),
            _ => None,
        }
    }

    /// Whether compiling at `pc` was already attempted and found nothing to compile.
    #[inline]
    pub fn declined(&self, pc: u64) -> bool {
        matches!(self.cache.get(&self.key(pc, false)), Some(Entry::Declined))
    }

    /// Compile the region starting at `pc` (or return the cached one). `None` when the first
    /// instruction there is declined. A loop gets its tail compiled in (see
    /// [`Jit::compile_for`]).
    pub fn compile(&mut self, pc: u64) -> Result<Option<Compiled>, JitError> {
        self.compile_key(self.key(pc, false), region::Hints::ALL)
    }

    /// [`Jit::compile`], for the machine state `regs` the region is about to be entered with
    /// ([`region::Hints::of`]): a loop whose entry will not reach a tail
    /// ([`region::tail_expected`]) is compiled without one (its tails, if any come later, run
    /// in the straight form of the body), and only the vector registers whose lanes step by
    /// 1, 2, 4 or 8 there ([`region::lane_steps`]) get the loop-entry test for contiguous
    /// lanes. The first compile of a pc decides; the code is the same for every later entry.
    pub fn compile_for(
        &mut self,
        pc: u64,
        regs: &lanejit_interp::machine::Regs,
    ) -> Result<Option<Compiled>, JitError> {
        self.compile_key(self.key(pc, false), self.hints_for(pc, regs))
    }

    /// The hints [`Jit::compile_for`] compiles the region at `pc` with, for an entry with
    /// registers `regs`.
    pub fn hints_for(&self, pc: u64, regs: &lanejit_interp::machine::Regs) -> region::Hints {
        region::Hints::at(&self.code, pc, regs, self.vl)
    }

    /// [`Jit::compile`] with the hints decided by the caller (as [`region::Hints::of`] says of
    /// the entry ahead; a background compiler gets them with the pc).
    pub fn compile_with(
        &mut self,
        pc: u64,
        hints: region::Hints,
    ) -> Result<Option<Compiled>, JitError> {
        self.compile_key(self.key(pc, false), hints)
    }

    /// What the translator's configuration takes from this JIT.
    fn tx_setup(&self) -> TxSetup {
        TxSetup {
            vl: self.vl,
            strict_align: self.strict_align,
            budgeted: self.budgeted,
            chain_slots: (self.chain.len() / 2) as u64,
            yields: self.baseline,
        }
    }

    /// Give loops a baseline compile first (`on`): a loop in register form is compiled with
    /// the quick settings ([`cache::Settings::Quick`]: no optimiser, the single-pass
    /// register allocator; the bench and example kernels' loops compile in a fifth of the
    /// optimising settings' time, median 0.7-0.8 ms against 3.9 ms at VL 32, into code that
    /// runs more instructions) and
    /// queued for its optimised code, which replaces it once [`Jit::prepare_optimized`],
    /// [`CompileJob::compile`] and [`Jit::install_optimized`] have run (the tiered
    /// engine's compiler thread does so when no region waits to be compiled; a loop running
    /// its baseline meanwhile leaves it at its next stretch header once the compiler names it
    /// in [`Jit::tier_words`], `translate::TxConfig::yields`). Both codes
    /// come from the same translation (the baseline's small bodies stream one iteration per
    /// round, `translate::TxConfig::pairs`, the optimised code's two), but for simple counted
    /// loops and nests of them, whose baseline is the strip-mined form (`translate::strip`:
    /// the body translated for 8 lanes, 16 of bytes, and looped over each iteration's lanes,
    /// so its IR does not grow with VL; 40-60% of the register form's compile time; where
    /// the register form is much larger, the strip-mined IR optimised is a step between the
    /// two, [`strip_step`]); every
    /// code agrees with the interpreter, so results do not depend on which one runs. The
    /// compile budget
    /// is charged once per region; the optimised code is the one kept in the disk cache. Off
    /// (the default) for `--engine jit` and launches, and while the region report counts.
    pub fn set_baseline(&mut self, on: bool) {
        self.baseline = on;
    }

    /// Compile a strip-mined baseline that would be replaced by a step first ([`strip_step`])
    /// as that step: the same IR with the optimising settings (`on`). For foreground runs
    /// that compare the step's code with the interpreter (the all-engines harness, the
    /// fuzzer), where nothing recompiles a baseline. Off by default.
    pub fn set_step_first(&mut self, on: bool) {
        self.step_first = on;
    }

    /// Leave the recompiles of hot straight-line regions to whoever takes them
    /// ([`Jit::next_hot`], [`Jit::prepare_hot`], [`Jit::install_hot`]: a tiered run's
    /// compiler thread), instead of making them on the entry that found the region hot, on
    /// the run's path (`on`). The first compile keeps running meanwhile, so results do not
    /// change. Off (the default) for `--engine jit`, launches and foreground tiered runs.
    pub fn set_defer_hot(&mut self, on: bool) {
        self.defer_hot = on;
    }

    /// The oldest hot straight-line region waiting for its recompile, taken off the queue.
    pub fn next_hot(&mut self) -> Option<Key> {
        self.hot_pending.pop_front()
    }

    /// Whether a hot straight-line region waits for its recompile.
    pub fn hot_waiting(&self) -> bool {
        !self.hot_pending.is_empty()
    }

    /// Whether a baseline compile waits for its optimised code.
    pub fn baseline_waiting(&self) -> bool {
        !self.queue().is_empty()
    }

    /// The queue of baseline compiles waiting for their optimised code.
    fn queue(&self) -> std::sync::MutexGuard<'_, std::collections::VecDeque<Baseline>> {
        // Nothing panics while it is held: a poisoned queue is still a queue.
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the baseline compile of the region entered at `pc` waits for its optimised
    /// code.
    pub fn baseline_waiting_at(&self, pc: u64) -> bool {
        self.queue().iter().any(|b| b.key.pc == pc)
    }

    /// Forget the hot straight-line regions waiting for their recompile (a run that ended).
    pub fn discard_hot(&mut self) {
        self.hot_pending.clear();
    }

    /// The recompile of the hot straight-line region `key` (from [`Jit::next_hot`]),
    /// translated while the JIT is only read, for [`CompileJob::compile`] and
    /// [`Jit::install_hot`]: `None` when there is nothing to translate (its recompile known
    /// already or declined, a full module, the compile budget spent, report counters).
    pub fn prepare_hot(&self, key: Key) -> Option<CompileJob> {
        self.prepare_key(Key { hot: true, ..key }, region::Hints::ALL, false)
    }

    /// Place `job`'s recompile (from [`Jit::prepare_hot`], compiled) in place of its first
    /// compile, as [`Jit::recompile_hot`] does: entries and exits run it from now on.
    /// `Ok(false)` when the first compile is no longer there (its module retired meanwhile)
    /// or the recompile was declined.
    pub fn install_hot(&mut self, job: CompileJob) -> Result<bool, JitError> {
        let key = Key {
            hot: false,
            ..job.key
        };
        if !matches!(self.cache.get(&key), Some(Entry::Code(_, true))) {
            return Ok(false);
        }
        let Some(c) = self.install_compiled(job)? else {
            return Ok(false);
        };
        self.place_hot(key, c);
        Ok(true)
    }

    /// The oldest baseline compile still waiting for its optimised code, taken off the queue.
    pub fn next_baseline(&self) -> Option<Baseline> {
        self.queue().pop_front()
    }

    /// The baseline compile of the region entered at `pc` if one waits (a loop running
    /// now), else the oldest ([`Jit::next_baseline`]), taken off the queue.
    pub fn next_baseline_at(&self, pc: Option<u64>) -> Option<Baseline> {
        let mut q = self.queue();
        let i = pc.and_then(|pc| q.iter().position(|b| b.key.pc == pc));
        match i {
            Some(i) => q.remove(i),
            None => q.pop_front(),
        }
    }

    /// Put `base` back at the front of the queue (its recompile deferred).
    pub fn requeue_baseline(&self, base: Baseline) {
        self.queue().push_front(base);
    }

    /// The IR of `base`'s optimised code, or `None` when its baseline is gone (a retired
    /// module): its strip-mined step when [`Baseline::steps`] ([`strip_step`]; placed by
    /// [`Jit::install_optimized`], which queues the loop again for the rest), else its final
    /// code. Needs only `&self`: threads sharing the JIT keep running compiled code.
    pub fn prepare_optimized(&self, base: Baseline) -> Option<CompileJob> {
        if base.generation != self.cache.stats.retired_modules {
            return None;
        }
        let t0 = Instant::now();
        let region = region::discover_for(&self.code, base.key.pc, base.key.straight, self.vl)?;
        let isa = cache::new_isa(cache::Settings::Optimizing).ok()?;
        let mut ctx = cranelift_codegen::Context::new();
        let mut fctx = FunctionBuilderContext::new();
        let mut emit = |ctx: &mut cranelift_codegen::Context, cfg| {
            ctx.clear();
            translate_into(
                &mut ctx.func,
                &mut fctx,
                region_signature(&*isa),
                isa.frontend_config(),
                &region,
                cfg,
                &mut None,
            )
        };
        // The strip-mined step first when it pays ([`strip_step`]): the baseline's own
        // translation, to be replaced in turn (it leaves at a stretch header as the
        // baseline does).
        let strip = base
            .strip_ir
            .and_then(|_| translate::strip_width(&region, base.hints.seen(), self.vl))
            .filter(|&w| {
                let cfg = self
                    .tx_setup()
                    .strip_config(&*isa, base.key.hot, base.hints, w);
                emit(&mut ctx, cfg)
            })
            .is_some();
        // The optimised code stays: it has no reason to leave early.
        let setup = TxSetup {
            yields: false,
            ..self.tx_setup()
        };
        // Whether the final code is the strip-mined form (see below).
        let mut strip_final = false;
        if !strip {
            let full = setup.config(&*isa, base.plan, base.key.hot, base.hints, true);
            emit(&mut ctx, full);
            // A register form over the optimising settings' bound (estimated within it)
            // would get the kept settings, and run slower than the strip-mined step it
            // replaces (fir8_vaddr at VL 64, 256 KiB: 602 against 1,913 Melem/s): a loop
            // that has that form keeps it, optimised, as a first compile without a
            // baseline tier does (`Jit::translate`).
            strip_final = strip_instead(
                &mut ctx,
                &region,
                base.hints.seen(),
                self.vl,
                full,
                |w| setup.strip_config(&*isa, base.key.hot, base.hints, w),
                &mut emit,
            )
            .is_some();
        }
        // Over the optimising settings' bound (a strip-mined baseline's register form, not
        // measured before): the kept settings, as a first compile would have had.
        let ir_insts = ctx.func.dfg.num_insts();
        let settings = if plan::optimizing_fits(&region, ir_insts, block_params(&ctx.func), self.vl)
        {
            cache::Settings::Optimizing
        } else {
            cache::Settings::Kept
        };
        let ir = self
            .observer
            .as_ref()
            .filter(|o| o.wants_ir())
            .map(|_| ctx.func.display().to_string());
        Some(CompileJob {
            key: base.key,
            hints: base.hints,
            region,
            plan: base.plan,
            stored: Stored {
                plan: base.plan,
                straight_body: false,
                loop_alone: false,
                ir_insts,
            },
            settings,
            baseline: strip,
            recompile_ir: if strip { base.ir_insts } else { ir_insts },
            strip: strip || strip_final,
            ctx,
            ir,
            probes: None,
            t0,
            compiled: Err("not compiled".into()),
            replaces: Some(base),
        })
    }

    /// Put `job`'s optimised code in place of its baseline: the cache entry and the chaining
    /// table point at it from now on (the baseline's code stays in the module, unused).
    /// `Ok(false)` when the baseline is gone or the module is full (the baseline stays), or
    /// `job` is no optimising recompile.
    pub fn install_optimized(&mut self, job: CompileJob) -> Result<bool, JitError> {
        let CompileJob {
            key,
            region,
            stored,
            ctx,
            ir,
            t0,
            compiled,
            replaces,
            baseline: step,
            strip,
            ..
        } = job;
        let Some(base) = replaces else {
            return Ok(false);
        };
        let err = |e: &dyn std::fmt::Display| JitError::Compile {
            pc: key.pc,
            msg: e.to_string(),
        };
        if let Err(e) = compiled {
            self.stats.compile_errors += 1;
            return Err(err(&e));
        }
        if base.generation != self.cache.stats.retired_modules
            || !matches!(self.cache.get(&key), Some(Entry::Code(..)))
            || self.cache.full()
        {
            return Ok(false);
        }
        let code = ctx.compiled_code().expect("compiled");
        if !code.buffer.relocs().is_empty() {
            // Nothing it calls is linked by name; keep the baseline if that ever changes.
            return Ok(false);
        }
        // The strip-mined step is replaced in turn: not kept across runs, and queued for
        // the register form.
        let disk = self.disk.as_deref().filter(|_| !step);
        let own_ir = stored.ir_insts;
        check_and_store(disk, &self.prefix, key, code, stored).map_err(|e| err(&e))?;
        let how = if step {
            (base.plan, own_ir, Placed::StripStep)
        } else if strip {
            (base.plan, own_ir, Placed::StripFinal)
        } else {
            (base.plan, base.ir_insts, Placed::Optimized)
        };
        let bytes = (code.code_buffer(), code.buffer.alignment);
        self.place(key, &region, bytes, how, t0, ir)?;
        if step {
            self.queue().push_back(Baseline {
                strip_ir: None,
                generation: self.cache.stats.retired_modules,
                ..base
            });
        }
        Ok(true)
    }

    /// Compile (or find) the region of `key`, counting failures.
    fn compile_key(
        &mut self,
        key: Key,
        hints: region::Hints,
    ) -> Result<Option<Compiled>, JitError> {
        let r = self.compile_key_inner(key, hints);
        if r.is_err() {
            self.stats.compile_errors += 1;
        }
        r
    }

    fn compile_key_inner(
        &mut self,
        key: Key,
        hints: region::Hints,
    ) -> Result<Option<Compiled>, JitError> {
        let (region, loop_alone) = match self.front(key) {
            Front::Known(c) => return Ok(c),
            Front::Spent => {
                // The program's compile budget is spent: the interpreter runs the rest.
                self.stats.over_budget += 1;
                self.cache.insert(key, Entry::Declined);
                return Ok(None);
            }
            Front::Nothing => {
                self.cache.insert(key, Entry::Declined);
                return Ok(None);
            }
            Front::Region(region, loop_alone) => (region, loop_alone),
        };
        self.make_room()?;
        let t0 = Instant::now();
        // The region report's counters (`observe`), compiled in only when asked for; such
        // code is neither taken from nor stored in the disk cache.
        let probes = self
            .observer
            .as_ref()
            .filter(|o| o.options().counters)
            .map(|o| observe::Probes::new(o.clone()));
        if probes.is_none() {
            if let Some(stored) = self.disk.as_ref().and_then(|d| d.load(&self.prefix, &key)) {
                return self.install(key, region, stored, t0).map(Some);
            }
        }
        let ctx = std::mem::replace(&mut self.ctx, cranelift_codegen::Context::new());
        let mut fctx = std::mem::take(&mut self.fctx);
        let job = self.translate(key, hints, (region, loop_alone), probes, t0, ctx, &mut fctx);
        self.fctx = fctx;
        let Some(mut job) = job else {
            self.cache.insert(key, Entry::Declined);
            return Ok(None);
        };
        job.compile();
        self.install_job(job).map(Some)
    }

    /// What compiling `key` starts from, read without changing the JIT.
    fn front(&self, key: Key) -> Front {
        match self.cache.get(&key) {
            Some(Entry::Code(f, b)) => return Front::Known(Some(Compiled(f, b))),
            Some(Entry::Declined) => return Front::Known(None),
            None => {}
        }
        if self.stats.ir_insts >= self.cache.limits.program_ir {
            return Front::Spent;
        }
        let Some(region) = region::discover_for(&self.code, key.pc, key.straight, self.vl) else {
            return Front::Nothing;
        };
        // A loop whose body has its loop region already is not compiled again with its
        // `LOOP` as prologue: the `LOOP` alone goes on to it (see `region::loop_alone`).
        if !key.straight && region.loop_head == Some(1) && region.outer.is_none() {
            let body = self.key(region.insts[1].0, false);
            if matches!(self.cache.get(&body), Some(Entry::Code(..))) {
                if let Some(r) = region::loop_alone(&self.code, key.pc) {
                    return Front::Region(r, true);
                }
            }
        }
        Front::Region(region, false)
    }

    /// Retire the module when it is full, before code is placed in it.
    fn make_room(&mut self) -> Result<(), JitError> {
        if self.cache.full() {
            self.cache.retire()?;
            // Every first compile is gone with its module: recompiles count afresh.
            self.hits.clear();
            self.lazy.clear();
            self.chain.fill(0);
        }
        Ok(())
    }

    /// The first compile of the region at `pc` (entered with `hints`), translated to IR
    /// while the JIT is only read, for [`CompileJob::compile`] to compile without it and
    /// [`Jit::install_compiled`] to place: threads sharing the JIT run compiled code
    /// meanwhile. `None` when the compile has something to record or to change first (its
    /// code or its refusal known already, nothing to compile, the compile budget spent, a
    /// full module, an entry in the disk cache, report counters): [`Jit::compile_with`] then
    /// does the whole of it.
    pub fn prepare_compile(&self, pc: u64, hints: region::Hints) -> Option<CompileJob> {
        self.prepare_key(self.key(pc, false), hints, true)
    }

    /// The translation of `key` for a compile off the JIT's lock ([`Jit::prepare_compile`],
    /// [`Jit::prepare_hot`]): `None` when its code or its refusal is known already, there is
    /// nothing to compile, the compile budget is spent, the module is full, the region
    /// report counts, or (`disk`) the disk cache holds its code.
    fn prepare_key(&self, key: Key, hints: region::Hints, disk: bool) -> Option<CompileJob> {
        let Front::Region(region, loop_alone) = self.front(key) else {
            return None;
        };
        if self.cache.full() || self.counting() {
            return None;
        }
        if disk
            && self
                .disk
                .as_ref()
                .is_some_and(|d| d.has(&self.prefix, &key))
        {
            return None;
        }
        let ctx = cranelift_codegen::Context::new();
        let mut fctx = FunctionBuilderContext::new();
        self.translate(
            key,
            hints,
            (region, loop_alone),
            None,
            Instant::now(),
            ctx,
            &mut fctx,
        )
    }

    /// Place the code of `job` (from [`Jit::prepare_compile`], compiled) as [`Jit::compile`]
    /// would have; the code found in the cache instead when another thread placed some
    /// meanwhile.
    pub fn install_compiled(&mut self, job: CompileJob) -> Result<Option<Compiled>, JitError> {
        if let Front::Known(c) = self.front(job.key) {
            return Ok(c);
        }
        self.make_room()?;
        let r = self.install_job(job);
        if r.is_err() {
            self.stats.compile_errors += 1;
        }
        r.map(Some)
    }

    /// Translate `region` (`loop_alone`: the `LOOP` alone, going on to its body's code) for
    /// `key` into `ctx`, in the form its plan allows (`translate::plan`): loops and hot
    /// recompiles within a compile budget; first compiles of straight-line code hand vector
    /// work to helpers, whose code is small whatever the region. `None` when nothing is to be
    /// compiled (a hot recompile over budget; a loop over budget whose body has no straight
    /// form).
    #[allow(clippy::too_many_arguments)]
    fn translate(
        &self,
        key: Key,
        hints: region::Hints,
        (mut region, loop_alone): (region::Region, bool),
        mut probes: Option<observe::Probes>,
        t0: Instant,
        mut ctx: cranelift_codegen::Context,
        fctx: &mut FunctionBuilderContext,
    ) -> Option<CompileJob> {
        let pc = key.pc;
        let vector = region.loop_head.is_some() || key.hot;
        let mut plan = if vector {
            plan::choose(&region, self.vl, hints.seen())
        } else {
            Plan::Memory
        };
        let setup = self.tx_setup();
        let isa = self.cache.module.as_ref().expect("module").isa();
        let sig = region_signature(isa);
        // Whether a loop over budget fell to the straight-line form of its body.
        let mut straight_body = false;
        // With a baseline tier, a simple counted loop's first code is the strip-mined form,
        // whose IR does not grow with VL (`translate::strip`), whatever the plan for its
        // register form: when it comes out without exits and within the register form's
        // bound.
        // Without one (`--engine jit`, launches), a loop whose register form is expected
        // over the optimising settings' bound (large bodies at VL 64) gets it too, for good
        // and optimised (`strip_final` below), rather than the register form with the kept
        // settings, whose single-pass allocator spills nearly every value: matmul256's row
        // loop at VL 64, 148,976 -> 8,448 code bytes, 30 -> 3.1 ms of compile, 3.4 -> 9.3 G
        // multiply-adds/s (`lanejit bench --sizes 256K,16M --vl 64`, best of three
        // alternating runs; 15 G at VL 32 in the register form).
        let strip_ok = probes.is_none() && !key.hot;
        let strip = (strip_ok
            && (self.baseline || !registers_optimized(&region, plan, self.vl, hints.seen())))
        .then(|| translate::strip_width(&region, hints.seen(), self.vl))
        .flatten();
        // The strip-mined form at `w` lanes into `ctx`, when it comes out without exits and
        // within the register form's bound (else `ctx` is left cleared).
        let strip_into = |ctx: &mut cranelift_codegen::Context,
                          fctx: &mut FunctionBuilderContext,
                          region: &region::Region,
                          probes: &mut Option<observe::Probes>,
                          w: u32| {
            let scfg = setup.strip_config(isa, key.hot, hints, w);
            ctx.clear();
            let clean = translate_into(
                &mut ctx.func,
                fctx,
                sig.clone(),
                isa.frontend_config(),
                region,
                scfg,
                probes,
            );
            if clean && ctx.func.dfg.num_insts() <= plan::registers_ir(self.vl) {
                Some(scfg)
            } else {
                ctx.clear();
                None
            }
        };
        let stripped = strip.and_then(|w| strip_into(&mut ctx, fctx, &region, &mut probes, w));
        let cfg = if let Some(scfg) = stripped {
            scfg
        } else {
            loop {
                if let Some(p) = probes.as_mut() {
                    p.restart();
                }
                if plan == Plan::Interpret {
                    if region.loop_head.is_none() || key.hot {
                        // A hot recompile over budget: the first compile stays.
                        return None;
                    }
                    // A loop over budget: the straight-line form of its body, one iteration
                    // per call, with helpers.
                    region = region::discover(&self.code, pc, true)?;
                    straight_body = true;
                    plan = Plan::Memory;
                }
                // A loop that gets a baseline compile first gets its baseline from IR without
                // paired streaming rounds and second full copy (`TxConfig::pairs`); its
                // optimised recompile has them.
                let baseline = self.baseline
                    && probes.is_none()
                    && region.loop_head.is_some()
                    && plan == Plan::Registers;
                // The IR of `cfg` in `ctx` (cleared first: anonymous and unnamed, nothing links
                // to a region by name): whether it came out without exits, and its size.
                let emit = |ctx: &mut cranelift_codegen::Context,
                            fctx: &mut FunctionBuilderContext,
                            cfg,
                            probes: &mut _| {
                    ctx.clear();
                    let clean = translate_into(
                        &mut ctx.func,
                        fctx,
                        sig.clone(),
                        isa.frontend_config(),
                        &region,
                        cfg,
                        probes,
                    );
                    (clean, ctx.func.dfg.num_insts())
                };
                let mut cfg = setup.config(isa, plan, key.hot, hints, !baseline);
                let mut emitted = emit(&mut ctx, fctx, cfg, &mut probes).1;
                if baseline
                    && !plan::optimizing_fits(&region, emitted, block_params(&ctx.func), self.vl)
                {
                    // Over the optimising bound, it is kept for good (below): with those
                    // copies when they fit the plan's bound, as before there was a
                    // difference.
                    let full = setup.config(isa, plan, key.hot, hints, true);
                    let with = emit(&mut ctx, fctx, full, &mut probes).1;
                    if plan::fits(plan, with, self.vl) {
                        (cfg, emitted) = (full, with);
                    } else {
                        emit(&mut ctx, fctx, cfg, &mut probes);
                    }
                }
                // Without a baseline tier, a loop whose register form came out over the
                // optimising bound (its estimate within it: at VL 64 a u8 3x3 box blur's row
                // loop, 4,000 estimated and 5,380 emitted; fir8_vaddr's, 4,886 and 5,368)
                // gets its strip-mined form as one expected over does (above), if it has
                // one: fir8_vaddr at 256 KiB, VL 64, 602 -> 1,913 Melem/s (2,316 for
                // fir8_lc0, whose register form fits).
                if !self.baseline && strip_ok && plan == Plan::Registers {
                    let mut emit_clean = |ctx: &mut cranelift_codegen::Context, cfg| {
                        emit(ctx, fctx, cfg, &mut probes).0
                    };
                    if let Some(scfg) = strip_instead(
                        &mut ctx,
                        &region,
                        hints.seen(),
                        self.vl,
                        cfg,
                        |w| setup.strip_config(isa, key.hot, hints, w),
                        &mut emit_clean,
                    ) {
                        break scfg;
                    }
                }
                if !vector || plan::fits(plan, emitted, self.vl) {
                    break cfg;
                }
                // The estimate was wrong: the next cheaper form.
                plan = plan::cheaper(plan);
            }
        };
        let ir = self
            .observer
            .as_ref()
            .filter(|o| o.wants_ir())
            .map(|_| ctx.func.display().to_string());
        let ir_insts = ctx.func.dfg.num_insts();
        // A loop in register form is what the optimising settings are for; with a baseline
        // tier it first gets the baseline ones, and the optimised code later. So is a hot
        // straight-line recompile, which runs on every entry of a region entered at least
        // HOT_ENTRIES times: with the single-pass allocator, every use of a value live into
        // a block reloads it from its spill slot (matmul256's row setup, 16 broadcasts of 16
        // chunks, reloaded the register file's address before each of its 256 stores): 4.66M
        // instructions executed with the quick settings, 4.59M with the baseline ones, 2.85M
        // optimised. But it compiles in 7.6 ms instead of 2.7 ms, on the path of the run that
        // made it hot: so only without a baseline tier (`--engine jit`, where compile time
        // is not what is measured); a tiered run keeps the quick settings for it.
        let optimizing = (region.loop_head.is_some() && cfg.plan == Plan::Registers)
            || (cfg.hot && !self.baseline);
        // A register form over the optimising settings' bound (large loops at VL 64) gets
        // the kept settings for good: its optimised compile would pass the ceiling.
        // (A strip-mined baseline is small whatever the register form's size: its
        // optimising recompile checks the bound itself, `Jit::prepare_optimized`.)
        let capped = optimizing
            && cfg.plan == Plan::Registers
            && cfg.strip.is_none()
            && !plan::optimizing_fits(&region, ir_insts, block_params(&ctx.func), self.vl);
        // The optimising recompile's IR: this one's, or for a strip-mined baseline the
        // register form's estimate.
        let recompile_ir = if cfg.strip.is_some() {
            plan::estimate(&region, self.vl, false, hints.seen())
        } else {
            ir_insts
        };
        // A strip-mined loop whose register form would be over the optimising settings'
        // bound keeps its code for good, with the optimising settings (its IR is small).
        let strip_final =
            cfg.strip.is_some() && !plan::optimizing_fits(&region, recompile_ir, 0, self.vl);
        let baseline = optimizing && self.baseline && probes.is_none() && !capped && !strip_final;
        // Straight-line code runs once per entry, and the memory form of a large loop must
        // compile in bounded time: the quick settings (a small one the backtracking
        // allocator, below). Every code is placed in the module
        // as bytes.
        // A baseline runs until its optimised code replaces it: the quick settings, which
        // compile it sooner (see `cache::Settings::Quick`).
        // Compiled as its strip-mined step, when asked.
        let step_first = baseline
            && self.step_first
            && cfg.strip.is_some()
            && strip_step(ir_insts, recompile_ir);
        // A loop in the memory form small enough gets the backtracking allocator
        // (`plan::MEMORY_BACKTRACK_IR`).
        let memory_lowered = region.loop_head.is_some()
            && cfg.plan == Plan::Memory
            && ir_insts <= plan::MEMORY_BACKTRACK_IR;
        let settings = if capped {
            cache::Settings::Kept
        } else if (optimizing && !baseline) || step_first {
            cache::Settings::Optimizing
        } else if memory_lowered {
            cache::Settings::Lowering
        } else {
            cache::Settings::Quick
        };
        Some(CompileJob {
            key,
            hints,
            region,
            plan: cfg.plan,
            stored: Stored {
                plan: cfg.plan,
                straight_body,
                loop_alone,
                ir_insts,
            },
            settings,
            baseline,
            recompile_ir,
            strip: cfg.strip.is_some(),
            ctx,
            ir,
            probes,
            t0,
            compiled: Err("not compiled".into()),
            replaces: None,
        })
    }

    /// Place `job`'s compiled code in the module (and the disk cache), and record it.
    fn install_job(&mut self, job: CompileJob) -> Result<Compiled, JitError> {
        let CompileJob {
            key,
            hints,
            region,
            plan,
            stored,
            settings,
            baseline,
            recompile_ir,
            strip,
            mut ctx,
            ir,
            probes,
            t0,
            compiled,
            replaces: _,
        } = job;
        let pc = key.pc;
        let err = |e: &dyn std::fmt::Display| JitError::Compile {
            pc,
            msg: e.to_string(),
        };
        compiled.map_err(|e| err(&e))?;
        let ir_insts = stored.ir_insts;
        self.stats.ir_insts += ir_insts as u64;
        let disk = self.disk.clone().filter(|_| probes.is_none());
        let module = self.cache.module.as_mut().expect("module");
        let id = module
            .declare_anonymous_function(&region_signature(module.isa()))
            .map_err(|e| err(&e))?;
        let size = {
            let code = ctx.compiled_code().expect("just compiled");
            // A baseline is not worth keeping across runs: its optimised code is.
            let disk = disk.as_deref().filter(|_| !baseline);
            check_and_store(disk, &self.prefix, key, code, stored).map_err(|e| err(&e))?;
            let relocs: Vec<ModuleReloc> = code
                .buffer
                .relocs()
                .iter()
                .map(|r| ModuleReloc::from_mach_reloc(r, &ctx.func, id))
                .collect();
            let align = u64::from(code.buffer.alignment);
            let bytes = code.code_buffer();
            module
                .define_function_bytes(id, align, bytes, &relocs)
                .map_err(|e| err(&format!("{e:?}")))?;
            bytes.len()
        };
        module.clear_context(&mut ctx);
        // The context's allocations serve the next compile.
        self.ctx = ctx;
        let stat = RegionStat {
            pc,
            kind: RegionKind::of(key, &region),
            insts: region.insts.len(),
            us: 0,
            code_bytes: size,
            ir_insts,
            plan,
            hot: key.hot,
            cached: false,
            baseline,
            optimized: false,
            strip,
        };
        if baseline {
            self.queue().push_back(Baseline {
                key,
                plan,
                generation: self.cache.stats.retired_modules,
                ir_insts: recompile_ir,
                hints,
                // (Unless it is the step already, `Jit::set_step_first`.)
                strip_ir: (strip
                    && settings == cache::Settings::Quick
                    && strip_step(ir_insts, recompile_ir))
                .then_some(ir_insts),
            });
        }
        // (A strip-mined loop leaves every partial iteration to the straight form of its
        // body whatever its hints: compiling it again with a tail would make the same code.)
        if (!(hints.tail && hints.ordered_tail)
            || translate::speculates(&region, hints.seen(), self.vl))
            && region.loop_head.is_some()
            && plan == Plan::Registers
            && !strip
        {
            self.lazy.insert(key, (0, hints));
        }
        self.finalize(key, id, stat, &region, t0, ir, probes)
    }

    /// Take the region of `key` from the disk cache: `region` is what was discovered at its
    /// pc (replaced by the straight form of the loop body when that is what was stored).
    fn install(
        &mut self,
        key: Key,
        mut region: region::Region,
        stored: diskcache::Stored,
        t0: Instant,
    ) -> Result<Compiled, JitError> {
        let pc = key.pc;
        let err = |e: &dyn std::fmt::Display| JitError::Compile {
            pc,
            msg: e.to_string(),
        };
        if stored.straight_body {
            region = region::discover(&self.code, pc, true).ok_or_else(|| err(&"stale entry"))?;
        } else if stored.loop_alone {
            region = region::loop_alone(&self.code, pc).ok_or_else(|| err(&"stale entry"))?;
        }
        self.stats.ir_insts += u64::from(stored.ir_insts);
        let how = (stored.plan, stored.ir_insts as usize, Placed::Cached);
        self.place(key, &region, (&stored.code, stored.align), how, t0, None)
    }

    /// Place `bytes` (aligned to `align`), machine code of `key`'s region (`region`) that
    /// needs no relocation, as a new function of the module and finalise it (see [`Jit::finalize`]); `how` is its
    /// form, IR size and where it comes from.
    fn place(
        &mut self,
        key: Key,
        region: &region::Region,
        (bytes, align): (&[u8], u32),
        how: (Plan, usize, Placed),
        t0: Instant,
        ir: Option<String>,
    ) -> Result<Compiled, JitError> {
        let err = |e: &dyn std::fmt::Display| JitError::Compile {
            pc: key.pc,
            msg: e.to_string(),
        };
        let module = self.cache.module.as_mut().expect("module");
        let id = module
            .declare_anonymous_function(&region_signature(module.isa()))
            .map_err(|e| err(&e))?;
        module
            .define_function_bytes(id, u64::from(align), bytes, &[])
            .map_err(|e| err(&format!("{e:?}")))?;
        let (plan, ir_insts, from) = how;
        let stat = RegionStat {
            pc: key.pc,
            kind: RegionKind::of(key, region),
            insts: region.insts.len(),
            us: 0,
            code_bytes: bytes.len(),
            ir_insts,
            plan,
            hot: key.hot,
            cached: from == Placed::Cached,
            baseline: false,
            optimized: from != Placed::Cached,
            strip: matches!(from, Placed::StripStep | Placed::StripFinal),
        };
        self.finalize(key, id, stat, region, t0, ir, None)
    }

    /// Make function `id` (just defined) runnable, record it and enter it in the cache, and
    /// show it to the observer (with its IR `ir` and report counters `probes`, when compiled
    /// here with them).
    #[allow(clippy::too_many_arguments)]
    fn finalize(
        &mut self,
        key: Key,
        id: cranelift_module::FuncId,
        mut stat: RegionStat,
        region: &region::Region,
        t0: Instant,
        ir: Option<String>,
        probes: Option<observe::Probes>,
    ) -> Result<Compiled, JitError> {
        let pc = key.pc;
        let err = |e: &dyn std::fmt::Display| JitError::Compile {
            pc,
            msg: e.to_string(),
        };
        let module = self.cache.module.as_mut().expect("module");
        module.finalize_definitions().map_err(|e| err(&e))?;
        let written = module.get_finalized_function(id);
        let ptr = match &self.cache.views {
            Some(v) => v
                .exec_addr(written)
                .expect("code lies in its module's memory"),
            None => written,
        };
        // SAFETY: the function was built with the signature (i64) -> i64 of `RegionFn`, in the
        // host's default calling convention, which is `extern "C"`, and `ptr` is where it runs:
        // its executable view when the module's code memory is dual-mapped (`codemem`), whose
        // code was checked above not to depend on its address.
        let f: RegionFn = unsafe { std::mem::transmute::<*const u8, RegionFn>(ptr) };
        let us = t0.elapsed().as_micros() as u64;
        stat.us = us;
        if let Some(obs) = &self.observer {
            // SAFETY: `ptr` is where the function's `code_bytes` bytes were just placed and
            // finalised: readable (and executable) memory of the module, which lives at least
            // until the next compile, after this call.
            let code = unsafe { std::slice::from_raw_parts(ptr, stat.code_bytes) };
            let c = observe::Compiled {
                pc,
                end_pc: region.end_pc,
                kind: stat.kind,
                hot: key.hot,
                plan: stat.plan,
                strip: stat.strip,
                insts: &region.insts,
                declined: match region.end {
                    region::RunEnd::Decline => self.code.at(region.end_pc).copied(),
                    _ => None,
                },
                us,
                t0,
                tier: if stat.cached {
                    "cached"
                } else if stat.optimized && stat.strip {
                    "optimized-strip"
                } else if stat.optimized {
                    "optimized"
                } else if stat.baseline {
                    "baseline"
                } else {
                    "first"
                },
                code,
                ir,
            };
            obs.compiled(c, probes);
        }
        if stat.cached {
            self.stats.cached_regions += 1;
        } else if stat.optimized {
            self.stats.optimized_regions += 1;
            self.stats.compile_us += us;
        } else {
            self.stats.compiled_regions += 1;
            self.stats.compile_us += us;
            self.stats.compile_times_us.push(us);
        }
        self.cache.stats.module_bytes += stat.code_bytes;
        self.cache.stats.module_funcs += 1;
        self.stats.regions.push(stat);
        let first = region.loop_head.is_none() && !key.hot;
        if first {
            // Its entries are counted from now on (see `Jit::count_entry`).
            self.hits.entry(key).or_default();
        }
        self.cache.insert(key, Entry::Code(f, first));
        if !first && !key.straight && !key.hot {
            self.set_chain(key, f);
        }
        Ok(Compiled(f, first))
    }

    /// Run compiled region `c` on `m`, whose pc must be the region's start. Updates `m.pc`,
    /// `m.retired` and the machine state. When a loop region reaches its tail (a partial
    /// mask), the straight-line form of the body runs that iteration natively: it is compiled
    /// here on first need (its compile time counts in the statistics).
    ///
    /// # Panics
    /// If `m`'s VL, alignment mode or limit mode differ from the machine the JIT was made for.
    pub fn run(&mut self, c: Compiled, m: &mut Machine) -> RegionExit {
        self.stats.calls += 1;
        let e = self.enter(c, m);
        self.finish(e, m)
    }

    /// The first half of [`Jit::run`], which needs only `&self`: call region `c` (compiled by
    /// this JIT, starting at `m.pc`). Threads sharing one JIT behind a lock call compiled code
    /// under a shared (read) lock, and [`Jit::finish`] under the exclusive one only when
    /// [`Entered::needs_finish`].
    pub fn enter(&self, c: Compiled, m: &mut Machine) -> Entered {
        let (pc, before) = (m.pc, m.retired);
        let status = self.call(c, m);
        Entered {
            c,
            pc,
            before,
            status,
        }
    }

    /// The second half of [`Jit::run`]: count the entry of a straight-line first compile
    /// (recompiling it once hot), and run a loop's tail iteration in the straight form of its
    /// body, compiled on first need.
    pub fn finish(&mut self, e: Entered, m: &mut Machine) -> RegionExit {
        let hot = self.note_entry(&e);
        self.finish_noted(e, m, hot)
    }

    /// Count the entry of `e` if its region is a straight-line first compile (only `&self`);
    /// `true` when that makes it hot: [`Jit::finish_noted`] then recompiles it.
    pub fn note_entry(&self, e: &Entered) -> bool {
        e.c.1 && self.hit(self.key(e.pc, false))
    }

    /// [`Jit::finish`] once [`Jit::note_entry`] counted the entry (`hot`: its answer).
    pub fn finish_noted(&mut self, e: Entered, m: &mut Machine, hot: bool) -> RegionExit {
        let Entered {
            c: _,
            pc,
            before,
            mut status,
        } = e;
        if hot {
            let key = self.key(pc, false);
            self.hot(key);
        }
        if status == Status::Partial {
            self.count_lazy_exit(m.pc);
            let tail = self.key(m.pc, true);
            status = match self.compile_key(tail, region::Hints::ALL) {
                Ok(Some(body)) => {
                    let s = self.call(body, m);
                    if body.1 {
                        self.count_entry(tail);
                    }
                    s
                }
                // Nothing compiled (a translator failure): the interpreter takes the
                // iteration, one instruction at a time.
                Ok(None) | Err(_) => Status::Interp,
            };
            debug_assert_ne!(
                status,
                Status::Partial,
                "a straight form has no loop header"
            );
        }
        RegionExit {
            interp_next: status == Status::Interp,
            retired: m.retired - before,
        }
    }

    /// Count an exit for an iteration under a partial mask of the loop whose body starts at
    /// `head` (the exit's pc; the loop's region starts there, or at the `LOOP` just before it,
    /// and may have been reached through chained calls); at [`LAZY_TAIL_EXITS`] exits of a
    /// loop compiled without such iterations, compile it again with them, in place of the lazy
    /// code (as a baseline first with a baseline tier). Called only after the call returned
    /// (the recompile may retire the module holding it).
    fn count_lazy_exit(&mut self, head: u64) {
        let Some(key) = [head, head.wrapping_sub(8)]
            .into_iter()
            .map(|pc| self.key(pc, false))
            .find(|k| self.lazy.contains_key(k))
        else {
            return;
        };
        let Some((n, hints)) = self.lazy.get_mut(&key) else {
            return;
        };
        *n += 1;
        if *n < LAZY_TAIL_EXITS {
            return;
        }
        // First the tail compiled in; then its loads kept in order. No speculated base
        // distances either (a loop whose guard fails leaves this way too).
        let hints = region::Hints {
            tail: true,
            ordered_tail: hints.tail,
            sregs: None,
            ..*hints
        };
        self.lazy.remove(&key);
        // The lazy code's optimised recompile, if still to come, must not replace this one.
        self.queue().retain(|b| b.key != key);
        let Some(Entry::Code(old, first)) = self.cache.get(&key) else {
            return;
        };
        let generation = self.cache.stats.retired_modules;
        self.cache.remove(&key);
        if !matches!(self.compile_key(key, hints), Ok(Some(_)))
            && self.cache.stats.retired_modules == generation
        {
            // Not compiled again (a spent compile budget, a translator failure): keep the
            // lazy code, which is exact (unless a retired module took it with it).
            self.cache.insert(key, Entry::Code(old, first));
        }
    }

    /// One call into compiled code; returns its status.
    fn call(&self, c: Compiled, m: &mut Machine) -> Status {
        assert!(
            m.config.vl == self.vl
                && m.config.strict_align == self.strict_align
                && m.config.max_instructions.is_some() == self.budgeted,
            "compiled code used with another configuration"
        );
        let mut ctx = JitCtx {
            regs: &mut *m.regs,
            mem: m.mem.view(),
            tile: m.tile.view(),
            budget: m.budget_left(),
            retired: 0,
            next_pc: m.pc,
            chain: self.chain.as_ptr(),
            chain_left: abi::CHAIN_DEPTH,
            helpers: abi::HELPERS.as_ptr(),
            tier: std::sync::Arc::as_ptr(&self.tier),
            memory: std::sync::Arc::as_ptr(&m.mem),
        };
        // SAFETY: `c` was compiled by this JIT for this configuration; the context points at
        // `m`'s live register file, memory and tile, which stay borrowed for the call; compiled
        // code only accesses them within the bounds it checks against the views. The chaining
        // table (borrowed with `self`, not changed during the call) holds only code of the
        // current module compiled for this configuration: it is cleared whenever a module is
        // retired, and chained calls stop after `CHAIN_DEPTH`. The tier words are an `Arc` this
        // JIT holds, only read and written by compiled code with aligned 8-byte accesses; the
        // memory is `m`'s, which `lj_fill` fills through `&self` (atomic stores).
        let status = unsafe { (c.0)(&mut ctx) };
        m.pc = ctx.next_pc;
        m.retired += ctx.retired;
        Status::from_word(status)
    }

    /// Statistics so far.
    pub fn stats(&self) -> JitStats {
        let mut s = self.stats.clone();
        s.cache = self.cache.stats;
        s
    }
}

#[cfg(test)]
mod tests;
