//! The VM: runs a machine on the chosen engine and reports engine statistics. Until the JIT
//! tier lands, `tiered` runs the interpreter alone and `jit` is refused by the CLI.

use lanejit_interp::interp::{self, Decoded};
use lanejit_interp::machine::{Exit, Machine};

/// Execution engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// The reference interpreter, never compiling.
    Interp,
    /// Compile every region on first entry.
    Jit,
    /// Interpret; compile regions once hot.
    Tiered,
}

/// VM options.
#[derive(Clone, Copy, Debug)]
pub struct VmOptions {
    /// Region entries before the tiered engine compiles a region.
    pub jit_threshold: u32,
}

/// Engine statistics (not part of the comparison between engines).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// Regions compiled.
    pub compiled_regions: u64,
    /// Instructions retired in compiled code.
    pub jit_retired: u64,
    /// Instructions retired by the interpreter.
    pub interp_retired: u64,
    /// Time spent compiling, in microseconds.
    pub compile_us: u64,
}

/// Whether the JIT tier is built.
pub const JIT_AVAILABLE: bool = false;

/// Run `m` to its end on `engine`.
pub fn run(
    _engine: Engine,
    m: &mut Machine,
    d: &Decoded,
    _opts: &VmOptions,
) -> (Exit, EngineStats) {
    let before = m.retired;
    let exit = interp::run(m, d);
    (
        exit,
        EngineStats {
            interp_retired: m.retired - before,
            ..EngineStats::default()
        },
    )
}
