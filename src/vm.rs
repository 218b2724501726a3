//! The tiered VM: one dispatcher that runs a program on the interpreter, the JIT, or both.
//!
//! * [`Engine::Interp`] runs `interp::run` and never compiles.
//! * [`Engine::Jit`] compiles the region at every dispatch pc on first entry.
//! * [`Engine::Tiered`] counts entries per region start and compiles a region once its count
//!   passes [`VmOptions::jit_threshold`].
//!
//! Dispatch points are the pcs where control arrives after a control instruction, after a
//! compiled region returns, or after the interpreter executed an instruction a region
//! declined. At a dispatch point with compiled code the VM enters it; a region that returns
//! "interpreter next" (declined instruction, failed check, budget too small) gets exactly one
//! `interp::step`, which also raises precise traps. Otherwise the interpreter runs one block
//! (`interp::run_block`). The final state is the interpreter's, bit for bit, whichever engine
//! runs.

use lanejit_interp::interp::{self, Decoded};
use lanejit_interp::machine::{Exit, Machine};
use lanejit_jit::{Jit, JitError, JitStats};

/// Whether the JIT tier is built (it is; kept for the CLI).
pub const JIT_AVAILABLE: bool = true;

/// Which engine runs a program (also the values of `--engine` and `--engines`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Engine {
    /// The reference interpreter only.
    Interp,
    /// Compile every region on first entry.
    Jit,
    /// Interpret, and compile regions that become hot (the default).
    Tiered,
}

impl Engine {
    /// The name on the command line (`interp`, `jit`, `tiered`).
    pub const fn name(self) -> &'static str {
        match self {
            Engine::Interp => "interp",
            Engine::Jit => "jit",
            Engine::Tiered => "tiered",
        }
    }
}

/// VM tuning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VmOptions {
    /// Entries of a region before [`Engine::Tiered`] compiles it.
    pub jit_threshold: u32,
}

impl Default for VmOptions {
    fn default() -> Self {
        VmOptions { jit_threshold: 16 }
    }
}

/// What the engines did (not part of the comparison between engines); serialized as the
/// `engine_stats` of `run --json`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EngineStats {
    /// Regions compiled.
    pub compiled_regions: u64,
    /// Instructions retired in compiled code.
    pub jit_retired: u64,
    /// Instructions retired by the interpreter.
    pub interp_retired: u64,
    /// Total compile time, microseconds.
    pub compile_us: u64,
}

/// Run `m` from its pc on `engine` until it halts, traps or reaches its instruction limit.
pub fn run(engine: Engine, m: &mut Machine, d: &Decoded, opts: &VmOptions) -> (Exit, EngineStats) {
    let threshold = match engine {
        Engine::Interp => return run_interp(m, d),
        Engine::Jit => 0,
        Engine::Tiered => opts.jit_threshold,
    };
    match Dispatcher::new(d, m, threshold) {
        Ok(mut disp) => {
            let exit = disp.run(m, d);
            (exit, disp.stats())
        }
        // No code generator for this host: the interpreter gives the same result.
        Err(_) => run_interp(m, d),
    }
}

fn run_interp(m: &mut Machine, d: &Decoded) -> (Exit, EngineStats) {
    let before = m.retired;
    let exit = interp::run(m, d);
    let stats = EngineStats {
        interp_retired: m.retired - before,
        ..EngineStats::default()
    };
    (exit, stats)
}

/// The dispatch loop of the JIT engines over one [`Jit`], which may be kept across runs of
/// the same program and configuration (the benchmarks do, to measure compiled code alone).
pub struct Dispatcher {
    jit: Jit,
    counts: Vec<u32>,
    threshold: u32,
    compiled: Vec<u64>,
    jit_retired: u64,
    interp_retired: u64,
}

impl Dispatcher {
    /// A dispatcher for program `d` under `m`'s configuration that compiles a region once it
    /// has been entered more than `threshold` times (0: on first entry).
    pub fn new(d: &Decoded, m: &Machine, threshold: u32) -> Result<Dispatcher, JitError> {
        let words: Vec<u64> = (0..d.len()).map(|i| d.word(i).unwrap_or(0)).collect();
        Ok(Dispatcher {
            jit: Jit::new(&words, m)?,
            counts: vec![0; d.len()],
            threshold,
            compiled: Vec::new(),
            jit_retired: 0,
            interp_retired: 0,
        })
    }

    /// The JIT (for direct compiles).
    pub fn jit_mut(&mut self) -> &mut Jit {
        &mut self.jit
    }

    /// Start pcs of the regions the dispatcher had compiled, in compile order.
    pub fn compiled_pcs(&self) -> &[u64] {
        &self.compiled
    }

    /// Compilation statistics so far.
    pub fn jit_stats(&self) -> JitStats {
        self.jit.stats()
    }

    /// Engine statistics over every run so far.
    pub fn stats(&self) -> EngineStats {
        let js = self.jit.stats();
        EngineStats {
            compiled_regions: js.compiled_regions,
            jit_retired: self.jit_retired,
            interp_retired: self.interp_retired,
            compile_us: js.compile_us,
        }
    }

    /// Run `m` from its pc until it halts, traps or reaches its instruction limit.
    pub fn run(&mut self, m: &mut Machine, d: &Decoded) -> Exit {
        loop {
            let pc = m.pc;
            if let Some(c) = self.jit.lookup(pc) {
                let r = self.jit.run(c, m);
                self.jit_retired += r.retired;
                if r.interp_next {
                    let before = m.retired;
                    let e = interp::step(m, d);
                    self.interp_retired += m.retired - before;
                    if let Some(e) = e {
                        return e;
                    }
                }
                continue;
            }
            if pc % 8 == 0 {
                if let Some(n) = self.counts.get_mut((pc / 8) as usize) {
                    if *n != u32::MAX {
                        *n += 1;
                        if *n > self.threshold {
                            match self.jit.compile(pc) {
                                Ok(Some(_)) => {
                                    self.compiled.push(pc);
                                    continue;
                                }
                                // Declined, or the translator failed: interpret this pc for good.
                                Ok(None) | Err(_) => *n = u32::MAX,
                            }
                        }
                    }
                }
            }
            let before = m.retired;
            let e = interp::run_block(m, d);
            self.interp_retired += m.retired - before;
            if let Some(e) = e {
                return e;
            }
        }
    }
}
