//! The embedding API: run lanejit programs from Rust without the command line.
//!
//! It owns the one object an embedder needs, [`Vm`], and its [`Builder`]: from a [`Program`]
//! (or assembly source) to a machine configured with an engine, VL, alignment mode, limits and
//! the groups and threads of a launch; then [`Vm::run`] gives an [`Outcome`] holding the
//! contract's [`RunResult`]. Between runs, and inside a trap handler, [`Guest`] reads and
//! writes registers and memory and maps, protects and unmaps pages.
//!
//! ```
//! use lanejit::embed::{Builder, Engine};
//!
//! let src = "
//!         S.LI  s1, 5
//! top:    S.ADD s2, s2, 3
//!         S.SUB s1, s1, 1
//!         BNE   s1, 0, top
//!         HALT
//! ";
//! let mut vm = Builder::assemble(src, "sum.s")?.engine(Engine::Jit).build()?;
//! let out = vm.run();
//! assert_eq!(out.result.scalars[2], 15);
//! # Ok::<(), lanejit::embed::EmbedError>(())
//! ```
//!
//! # Hooks
//!
//! * [`Vm::on_trap`]: called on every trap with the trap and a [`Guest`]; it may map a page,
//!   set a register or move the pc, and [`TrapAction::Resume`] re-executes the trapping
//!   instruction (traps are precise: it wrote nothing) on the same engine, with its compiled
//!   code kept. A trap handler does not change the engine: the run stays compiled.
//! * [`Vm::on_mem_read`], [`Vm::on_mem_write`]: called after every load or store with every
//!   active lane's address and value; [`Vm::on_block`]: called with the pc of every block
//!   (straight-line run ending in a control-flow instruction) before it runs, and where a run
//!   starts. These hooks always fire: while one of them is installed, the run executes on
//!   the reference interpreter, whatever the engine (compiled code would skip them). The
//!   result is the same bit for bit (every engine agrees with the interpreter); only the
//!   speed and the [`EngineStats`] differ. The memory hooks build on the interpreter's
//!   tracing (`lanejit_interp::interp::run_block_traced`). Each hook may stop the run
//!   ([`Flow::Stop`]).
//!
//! Nothing is paid for a hook that is not installed: without hooks, a stop handle or a time
//! limit, [`Vm::run`] runs the engines' ordinary monomorphised loops.
//!
//! # Stopping
//!
//! [`Vm::stop_handle`] gives a [`StopHandle`] that another thread may use to stop the run;
//! [`Builder::time_limit`] stops it after a wall-clock time. Either makes the run go in slices
//! of at most [`STOP_SLICE`] instructions on every engine (compiled code is then compiled with
//! an instruction budget, as under `--max-instructions`, and returns when a slice's budget is
//! spent; the state is exact there), polling the handle and the clock between slices, after
//! every trap and, with hooks, before every block. So a stop takes effect within one slice:
//! at most [`STOP_SLICE`] instructions of any engine. A stopped run's result has status
//! `limit` with the pc of the next instruction, and [`Outcome::stopped`] says why; calling
//! [`Vm::run`] again continues from there.
//!
//! # Launches
//!
//! With more than one group ([`Builder::groups`], or the program's `.groups`), [`Vm::run`]
//! launches them as `lanejit run --groups` does, on [`Builder::threads`] threads. With a hook,
//! a trap handler, a stop handle or a time limit, the groups run one after another on the
//! calling thread in reference order (the result is the same: see `crate::launch`), so that
//! the handlers see one group at a time.

use crate::launch::{self, LaunchOptions, MAX_THREADS};
use crate::vm::Resumable;
pub use crate::vm::{Engine, EngineStats, VmOptions};
use lanejit_interp::asm::{self, AsmErrors};
use lanejit_interp::interp::{self, Decoded};
pub use lanejit_interp::interp::{LaneAccess, MemTrace};
pub use lanejit_interp::isa::Dir;
use lanejit_interp::machine::{Config, MachineError};
pub use lanejit_interp::machine::{Exit, Machine, Trap, TrapKind};
use lanejit_interp::memory::MemoryError;
pub use lanejit_interp::program::{MAX_GROUPS, MemPerm, PAGE_SIZE, Program, Space};
pub use lanejit_interp::result::RunResult;
use lanejit_interp::result::Tally;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The most instructions a run with a stop handle or a time limit executes between two polls
/// of them (see the module docs, "Stopping").
pub const STOP_SLICE: u64 = 1 << 16;

/// What the embedding API can fail with.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The source does not assemble (every error, as `file:line:column: error: ...`).
    #[error("{0}")]
    Asm(Box<AsmErrors>),
    /// The machine cannot be built (bad VL, the memory map beyond the limit, ...).
    #[error(transparent)]
    Machine(#[from] MachineError),
    /// Pages cannot be mapped, protected or unmapped.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// A group count outside 1..=2^24.
    #[error("{0} groups: a launch has 1 to 2^24 groups")]
    Groups(u32),
    /// A thread count outside 1..=[`MAX_THREADS`].
    #[error("{0} threads: a launch runs on 1 to {MAX_THREADS} threads")]
    Threads(usize),
    /// A register number outside 0..=31, or a vector of the wrong length.
    #[error(
        "no register {0} of that kind (scalars and vectors are 0 to 31, a vector has VL lanes)"
    )]
    Register(u8),
    /// Guest memory is shared with other machines (a launch in progress), so it cannot be
    /// changed.
    #[error("guest memory is in use by a launch and cannot be changed")]
    Shared,
    /// Guest bytes to read, write or protect that are not all mapped.
    #[error("guest memory 0x{addr:x}..0x{end:x} is not all mapped")]
    Unmapped {
        /// First byte.
        addr: u64,
        /// One past the last byte.
        end: u64,
    },
}

impl From<AsmErrors> for EmbedError {
    fn from(e: AsmErrors) -> EmbedError {
        EmbedError::Asm(Box::new(e))
    }
}

/// What a memory or block hook tells the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Go on.
    Continue,
    /// Stop the run (the next instruction has not run; [`Vm::run`] again continues).
    Stop,
}

/// What a trap handler tells the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrapAction {
    /// Execute the instruction at the pc again (the trapping one, unless the handler moved
    /// the pc), on the same engine.
    Resume,
    /// End the run with the trap.
    Stop,
}

/// Why a run stopped before it halted, trapped or reached its instruction limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// The [`StopHandle`] asked.
    Handle,
    /// The time limit passed.
    TimeLimit,
    /// A memory or block hook returned [`Flow::Stop`].
    Hook,
}

/// What [`Vm::run`] gives back.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The contract's result (`lanejit run --json`): status, pc, registers; for a launch,
    /// the reported group's. A stopped run reports status `limit`.
    pub result: RunResult,
    /// `Some` when the run was stopped (the result's status is then `limit`).
    pub stopped: Option<Stopped>,
    /// What the engines did.
    pub stats: EngineStats,
}

/// Stops a run from another thread (or a hook): [`Vm::stop_handle`]. A request stops the
/// run in progress, or the next one, and is used up by the stop.
#[derive(Clone, Debug, Default)]
pub struct StopHandle(Arc<AtomicBool>);

impl StopHandle {
    /// Ask the run to stop (within [`STOP_SLICE`] instructions).
    pub fn stop(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether a stop is asked and not yet used up.
    pub fn is_stopping(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// One load or store, as a memory hook sees it.
#[derive(Clone, Copy, Debug)]
pub struct MemEvent<'a> {
    /// The instruction's pc.
    pub pc: u64,
    /// Its accesses: direction, space, width, and every active lane's address and value.
    pub access: &'a MemTrace,
    /// The machine after the instruction (its pc is the next instruction's).
    pub machine: &'a Machine,
}

type MemHook<'h> = Box<dyn FnMut(&MemEvent<'_>) -> Flow + 'h>;
type BlockHook<'h> = Box<dyn FnMut(u64, &Machine) -> Flow + 'h>;
type TrapHook<'h> = Box<dyn FnMut(&Trap, &mut Guest<'_>) -> TrapAction + 'h>;

/// From a program to a [`Vm`].
#[derive(Clone, Debug)]
pub struct Builder {
    program: Program,
    engine: Engine,
    vl: Option<u32>,
    strict_align: bool,
    max_instructions: Option<u64>,
    mem_limit: Option<u64>,
    groups: Option<u32>,
    threads: usize,
    vm: VmOptions,
    time_limit: Option<Duration>,
}

impl Builder {
    /// A builder for `program` with the command line's defaults: the tiered engine, the
    /// program's `.vl` (else 8) and `.groups` (else 1), one thread, no limits.
    pub fn new(program: Program) -> Builder {
        Builder {
            program,
            engine: Engine::Tiered,
            vl: None,
            strict_align: false,
            max_instructions: None,
            mem_limit: None,
            groups: None,
            threads: 1,
            vm: VmOptions::default(),
            time_limit: None,
        }
    }

    /// Assemble `src` (`file` names it in error messages) and start a builder for it.
    pub fn assemble(src: &str, file: &str) -> Result<Builder, EmbedError> {
        Ok(Builder::new(asm::assemble(src, file)?))
    }

    /// The engine (`--engine`).
    pub fn engine(mut self, engine: Engine) -> Builder {
        self.engine = engine;
        self
    }

    /// The vector length, a power of two from 1 to 64 (`--vl`; overrides `.vl`).
    pub fn vl(mut self, vl: u32) -> Builder {
        self.vl = Some(vl);
        self
    }

    /// Misaligned accesses of width-scaled forms trap (`--strict-align`).
    pub fn strict_align(mut self, on: bool) -> Builder {
        self.strict_align = on;
        self
    }

    /// Stop with status `limit` once this many instructions have retired (per group;
    /// `--max-instructions`).
    pub fn max_instructions(mut self, n: u64) -> Builder {
        self.max_instructions = Some(n);
        self
    }

    /// Addresses at or above `limit` are never mapped (`--mem-limit`; a multiple of 4096,
    /// at most 2^40; 4 GiB by default).
    pub fn mem_limit(mut self, limit: u64) -> Builder {
        self.mem_limit = Some(limit);
        self
    }

    /// Launch this many groups, 1 to 2^24 (`--groups`; overrides `.groups`).
    pub fn groups(mut self, groups: u32) -> Builder {
        self.groups = Some(groups);
        self
    }

    /// Run a launch's groups on this many threads, 1 to [`MAX_THREADS`] (`--threads`).
    pub fn threads(mut self, threads: usize) -> Builder {
        self.threads = threads;
        self
    }

    /// Tune the tiered VM (`--jit-threshold`, background compiles, the on-disk code cache of
    /// `--code-cache`).
    pub fn vm_options(mut self, vm: VmOptions) -> Builder {
        self.vm = vm;
        self
    }

    /// Stop every [`Vm::run`] once it has taken this long (see "Stopping" in the module docs).
    pub fn time_limit(mut self, limit: Duration) -> Builder {
        self.time_limit = Some(limit);
        self
    }

    /// The machine, memory laid out and data loaded, ready to run from pc 0.
    pub fn build<'h>(self) -> Result<Vm<'h>, EmbedError> {
        let groups = self.groups.or(self.program.groups).unwrap_or(1);
        if !(1..=MAX_GROUPS).contains(&groups) {
            return Err(EmbedError::Groups(groups));
        }
        if !(1..=MAX_THREADS).contains(&self.threads) {
            return Err(EmbedError::Threads(self.threads));
        }
        let mut config = Config::for_program(&self.program, self.vl);
        config.strict_align = self.strict_align;
        config.max_instructions = self.max_instructions;
        if let Some(limit) = self.mem_limit {
            config.mem_limit = limit;
        }
        let m = Machine::new(&self.program, config)?;
        Ok(Vm {
            decoded: Arc::new(Decoded::new(&self.program.code)),
            program: self.program,
            m,
            engine: self.engine,
            vm: self.vm.clone(),
            groups,
            threads: self.threads,
            limit: self.max_instructions,
            time_limit: self.time_limit,
            stop: None,
            hooks: Hooks::default(),
            on_trap: None,
        })
    }
}

/// The memory and block hooks.
#[derive(Default)]
struct Hooks<'h> {
    read: Option<MemHook<'h>>,
    write: Option<MemHook<'h>>,
    block: Option<BlockHook<'h>>,
}

impl Hooks<'_> {
    fn any(&self) -> bool {
        self.read.is_some() || self.write.is_some() || self.block.is_some()
    }
}

/// A program on a machine, with its engine, hooks and stop handle (see the module docs).
/// `'h` is the lifetime of what the hooks borrow.
pub struct Vm<'h> {
    program: Program,
    decoded: Arc<Decoded>,
    m: Machine,
    engine: Engine,
    vm: VmOptions,
    groups: u32,
    threads: usize,
    /// The configured instruction limit (the machine's is changed while a run goes in
    /// slices).
    limit: Option<u64>,
    time_limit: Option<Duration>,
    stop: Option<StopHandle>,
    hooks: Hooks<'h>,
    on_trap: Option<TrapHook<'h>>,
}

impl std::fmt::Debug for Vm<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vm")
            .field("engine", &self.engine)
            .field("groups", &self.groups)
            .field("threads", &self.threads)
            .field("machine", &self.m)
            .finish_non_exhaustive()
    }
}

/// How one group's run ended in [`Vm::drive`].
type Ended = (Exit, Option<Stopped>);

impl<'h> Vm<'h> {
    /// The program.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The machine: registers, pc, retired count, memory, tile, configuration.
    pub fn machine(&self) -> &Machine {
        &self.m
    }

    /// Registers and memory, to read and change between runs.
    pub fn guest(&mut self) -> Guest<'_> {
        Guest { m: &mut self.m }
    }

    /// The address or pc of the label `name`.
    pub fn symbol(&self, name: &str) -> Option<u64> {
        self.program.symbol(name).map(|s| s.value)
    }

    /// A handle that stops the run from another thread. From the first call on, runs go in
    /// slices of [`STOP_SLICE`] instructions (see the module docs).
    pub fn stop_handle(&mut self) -> StopHandle {
        self.stop.get_or_insert_with(StopHandle::default).clone()
    }

    /// Stop every run after `limit` (`None`: no time limit).
    pub fn set_time_limit(&mut self, limit: Option<Duration>) {
        self.time_limit = limit;
    }

    /// Call `hook` on every trap (see the module docs): it may change registers and memory
    /// and resume, or stop the run with the trap.
    pub fn on_trap(&mut self, hook: impl FnMut(&Trap, &mut Guest<'_>) -> TrapAction + 'h) {
        self.on_trap = Some(Box::new(hook));
    }

    /// Call `hook` after every load, with every active lane's address and loaded value. While
    /// installed, the run is interpreted (see the module docs).
    pub fn on_mem_read(&mut self, hook: impl FnMut(&MemEvent<'_>) -> Flow + 'h) {
        self.hooks.read = Some(Box::new(hook));
    }

    /// Call `hook` after every store, with every active lane's address and stored value.
    /// While installed, the run is interpreted (see the module docs).
    pub fn on_mem_write(&mut self, hook: impl FnMut(&MemEvent<'_>) -> Flow + 'h) {
        self.hooks.write = Some(Box::new(hook));
    }

    /// Call `hook` with the pc of every block before it runs (and where a run starts or a
    /// trap handler resumes). While installed, the run is interpreted.
    pub fn on_block(&mut self, hook: impl FnMut(u64, &Machine) -> Flow + 'h) {
        self.hooks.block = Some(Box::new(hook));
    }

    /// Remove every hook and the trap handler (runs go back to the configured engine).
    pub fn clear_hooks(&mut self) {
        self.hooks = Hooks::default();
        self.on_trap = None;
    }

    /// Run from the current pc (a launch: every group, from the current memory) until it
    /// halts, traps (and the trap handler, if any, stops), reaches its instruction limit, or
    /// is stopped.
    pub fn run(&mut self) -> Outcome {
        let deadline = self.time_limit.map(|t| Instant::now() + t);
        let hooked = self.hooks.any();
        let sliced = !hooked && (self.stop.is_some() || deadline.is_some());
        if sliced {
            // Compiled code checks a budget; the slices set it (see `drive`).
            self.m.config.max_instructions = Some(self.limit.unwrap_or(u64::MAX));
        }
        let d = Arc::clone(&self.decoded);
        let out = if self.groups == 1 {
            self.run_one(&d, hooked, deadline)
        } else if hooked || sliced || self.on_trap.is_some() {
            self.run_in_order(&d, hooked, deadline)
        } else {
            self.launch(&d)
        };
        self.m.config.max_instructions = self.limit;
        out
    }

    /// A one-group run.
    fn run_one(&mut self, d: &Decoded, hooked: bool, deadline: Option<Instant>) -> Outcome {
        let before = self.m.retired;
        let mut engine = (!hooked).then(|| Resumable::new(self.engine, &self.m, d, &self.vm));
        let (exit, stopped) = self.drive(d, engine.as_mut(), deadline);
        let stats = match &engine {
            Some(e) => e.stats(),
            None => EngineStats {
                interp_retired: self.m.retired - before,
                ..EngineStats::default()
            },
        };
        Outcome {
            result: RunResult::capture(&self.m, exit, &[]),
            stopped,
            stats,
        }
    }

    /// A launch, its groups in reference order on this thread, each through [`Vm::drive`].
    fn run_in_order(&mut self, d: &Decoded, hooked: bool, deadline: Option<Instant>) -> Outcome {
        let code = if hooked {
            None
        } else {
            launch::shared_code(self.engine, d, &self.m, &self.vm)
        };
        let template = self.m.tile.clone();
        let mut tally = Tally::default();
        let mut stats = code.as_ref().map(|c| c.stats()).unwrap_or_default();
        for gid in 0..self.groups {
            self.m.start_group(gid, self.groups, &template, true);
            let mut engine = (!hooked).then(|| Resumable::shared(code.as_ref(), d));
            let (exit, stopped) = self.drive(d, engine.as_mut(), deadline);
            match &engine {
                Some(e) => {
                    stats.jit_retired += e.stats().jit_retired;
                    stats.interp_retired += e.stats().interp_retired;
                }
                None => stats.interp_retired += self.m.retired,
            }
            if stopped.is_some() {
                return Outcome {
                    result: RunResult::capture(&self.m, exit, &[]),
                    stopped,
                    stats,
                };
            }
            tally.group_ended(&self.m, exit, &[]);
        }
        if let Some(c) = &code {
            let cs = c.stats();
            stats.compiled_regions = cs.compiled_regions;
            stats.compile_us = cs.compile_us;
            stats.compile_errors = cs.compile_errors;
        }
        let result = tally
            .finish(&self.m.mem)
            .unwrap_or_else(|| RunResult::capture(&self.m, Exit::Halted, &[]));
        Outcome {
            result,
            stopped: None,
            stats,
        }
    }

    /// A plain launch (no hooks, no stopping): `lanejit run --groups --threads`.
    fn launch(&mut self, d: &Decoded) -> Outcome {
        let opts = LaunchOptions {
            engine: self.engine,
            vm: self.vm.clone(),
            groups: self.groups,
            threads: self.threads,
            check_races: false,
            timeline: false,
        };
        // `launch` takes the machine; a sibling (same memory) stands in meanwhile.
        let stand_in = self.m.sibling(&self.m.tile);
        let m = std::mem::replace(&mut self.m, stand_in);
        let (launched, m) = launch::launch(m, d, &[], &opts);
        self.m = m;
        Outcome {
            result: launched.result,
            stopped: None,
            stats: launched.stats,
        }
    }

    /// Run the machine from its pc to its end: on `engine`, or on the interpreter with the
    /// hooks when `None`; poll the stop handle and the clock (between slices when `engine`
    /// runs in slices, before every block with hooks); hand traps to the trap handler.
    fn drive(
        &mut self,
        d: &Decoded,
        mut engine: Option<&mut Resumable<'_>>,
        deadline: Option<Instant>,
    ) -> Ended {
        let sliced = engine.is_some() && (self.stop.is_some() || deadline.is_some());
        let limit = self.limit.unwrap_or(u64::MAX);
        let mut block_start = true;
        loop {
            if let Some(why) = self.poll(deadline) {
                return (Exit::Limit, Some(why));
            }
            let exit = match engine.as_deref_mut() {
                Some(e) => {
                    if sliced {
                        let end = self.m.retired.saturating_add(STOP_SLICE).min(limit);
                        self.m.config.max_instructions = Some(end);
                    }
                    let exit = e.run(&mut self.m);
                    if sliced {
                        self.m.config.max_instructions = Some(limit);
                        if exit == Exit::Limit && self.m.retired < limit {
                            continue;
                        }
                    }
                    exit
                }
                None => {
                    if block_start
                        && let Some(h) = self.hooks.block.as_mut()
                        && h(self.m.pc, &self.m) == Flow::Stop
                    {
                        return (Exit::Limit, Some(Stopped::Hook));
                    }
                    match self.hooked_block(d) {
                        (Some(e), _) => e,
                        (None, true) => return (Exit::Limit, Some(Stopped::Hook)),
                        (None, false) => {
                            block_start = true;
                            continue;
                        }
                    }
                }
            };
            if let Exit::Trapped(t) = exit
                && let Some(mut h) = self.on_trap.take()
            {
                let action = h(&t, &mut Guest { m: &mut self.m });
                self.on_trap = Some(h);
                if action == TrapAction::Resume {
                    block_start = true;
                    continue;
                }
            }
            return (exit, None);
        }
    }

    /// One block on the interpreter with the memory hooks: its exit, or `None` at the
    /// block's end; and whether a hook stopped it.
    fn hooked_block(&mut self, d: &Decoded) -> (Option<Exit>, bool) {
        let Hooks { read, write, .. } = &mut self.hooks;
        if read.is_none() && write.is_none() {
            return (interp::run_block(&mut self.m, d), false);
        }
        let mut stopped = false;
        let exit = interp::run_block_traced(&mut self.m, d, &mut |ev, m| {
            let Some(access) = &ev.mem else {
                return ControlFlow::Continue(());
            };
            let hook = match access.dir {
                Dir::Load => read.as_mut(),
                Dir::Store => write.as_mut(),
            };
            if let Some(h) = hook {
                let e = MemEvent {
                    pc: ev.pc,
                    access,
                    machine: m,
                };
                if h(&e) == Flow::Stop {
                    stopped = true;
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        });
        (exit, stopped)
    }

    /// Whether the stop handle or the clock says stop (a handle's request is used up).
    fn poll(&self, deadline: Option<Instant>) -> Option<Stopped> {
        if let Some(s) = &self.stop
            && s.0.swap(false, Ordering::AcqRel)
        {
            return Some(Stopped::Handle);
        }
        match deadline {
            Some(t) if Instant::now() >= t => Some(Stopped::TimeLimit),
            _ => None,
        }
    }
}

/// Registers and memory of a [`Vm`]'s machine, to read and change between runs or in a trap
/// handler. The configuration (VL, alignment, limits) is fixed at [`Builder::build`].
#[derive(Debug)]
pub struct Guest<'a> {
    m: &'a mut Machine,
}

impl Guest<'_> {
    /// The machine, to read.
    pub fn machine(&self) -> &Machine {
        self.m
    }

    /// The pc of the next instruction.
    pub fn pc(&self) -> u64 {
        self.m.pc
    }

    /// Continue at `pc` (a multiple of 8 inside the code, else the next run traps with
    /// `code_out_of_bounds`).
    pub fn set_pc(&mut self, pc: u64) {
        self.m.pc = pc;
    }

    /// Scalar register `s{n}`.
    pub fn scalar(&self, n: u8) -> Result<u64, EmbedError> {
        self.m
            .regs
            .s
            .get(n as usize)
            .copied()
            .ok_or(EmbedError::Register(n))
    }

    /// Set `s{n}` (writes to `s0` are ignored, as the ISA's are).
    pub fn set_scalar(&mut self, n: u8, value: u64) -> Result<(), EmbedError> {
        let r = self
            .m
            .regs
            .s
            .get_mut(n as usize)
            .ok_or(EmbedError::Register(n))?;
        if n != 0 {
            *r = value;
        }
        Ok(())
    }

    /// Vector register `v{n}`'s VL lanes.
    pub fn vector(&self, n: u8) -> Result<&[u64], EmbedError> {
        let vl = self.m.vl();
        self.m
            .regs
            .v
            .get(n as usize)
            .map(|v| &v[..vl])
            .ok_or(EmbedError::Register(n))
    }

    /// Set `v{n}`'s lanes (`lanes` has VL values).
    pub fn set_vector(&mut self, n: u8, lanes: &[u64]) -> Result<(), EmbedError> {
        let vl = self.m.vl();
        match self.m.regs.v.get_mut(n as usize) {
            Some(v) if lanes.len() == vl => {
                v[..vl].copy_from_slice(lanes);
                Ok(())
            }
            _ => Err(EmbedError::Register(n)),
        }
    }

    /// The execution mask.
    pub fn mask(&self) -> u64 {
        self.m.regs.mask
    }

    /// Set the execution mask (bits at and above VL are dropped).
    pub fn set_mask(&mut self, mask: u64) {
        self.m.regs.mask = mask & lanejit_interp::machine::all_lanes(self.m.config.vl);
    }

    /// Instructions retired so far (in this group).
    pub fn retired(&self) -> u64 {
        self.m.retired
    }

    /// The guest bytes `[addr, addr + len)`, if all mapped (any permission).
    pub fn read(&self, addr: u64, len: u64) -> Result<&[u8], EmbedError> {
        self.m.mem.bytes(addr, len).ok_or(EmbedError::Unmapped {
            addr,
            end: addr.saturating_add(len),
        })
    }

    /// Write `bytes` at `addr`, if all mapped (any permission: the host may write read-only
    /// pages).
    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<(), EmbedError> {
        let len = bytes.len() as u64;
        let unmapped = EmbedError::Unmapped {
            addr,
            end: addr.saturating_add(len),
        };
        let mem = self.m.mem_mut().ok_or(EmbedError::Shared)?;
        mem.bytes_mut(addr, len)
            .ok_or(unmapped)?
            .copy_from_slice(bytes);
        Ok(())
    }

    /// Map the pages `[addr, addr + len)` (multiples of 4096) with `perm`: pages that were not
    /// mapped read zero, mapped pages keep their bytes and take `perm`. Memory grows as
    /// needed, up to the memory limit.
    pub fn map(&mut self, addr: u64, len: u64, perm: MemPerm) -> Result<(), EmbedError> {
        let mem = self.m.mem_mut().ok_or(EmbedError::Shared)?;
        Ok(mem.set_pages(addr, len, Some(perm))?)
    }

    /// Give the mapped pages `[addr, addr + len)` the permission `perm` (bytes kept).
    pub fn protect(&mut self, addr: u64, len: u64, perm: MemPerm) -> Result<(), EmbedError> {
        if !self.m.mem.range_mapped(addr, len) {
            return Err(EmbedError::Unmapped {
                addr,
                end: addr.saturating_add(len),
            });
        }
        self.map(addr, len, perm)
    }

    /// Unmap the pages `[addr, addr + len)` (their bytes are dropped).
    pub fn unmap(&mut self, addr: u64, len: u64) -> Result<(), EmbedError> {
        let mem = self.m.mem_mut().ok_or(EmbedError::Shared)?;
        Ok(mem.set_pages(addr, len, None)?)
    }
}
