//! Differential fuzzing: run generated programs on several engines and compare everything
//! bit for bit; on a divergence, bisect to the first retired instruction at which the states
//! differ, shrink the program, and write a reproducer.
//!
//! What is compared ([`Snapshot`]): the contract's [`RunResult`] (status, pc, retired count,
//! trap, mask, LC0BASE, every register), the hidden latched trip count, every mapped page of
//! memory and the whole tile. Engine statistics are not compared.
//!
//! Not fuzzed, and why:
//! - backward branches: they would need a termination argument per program; loops come from
//!   `LOOP`/`ENDLOOP`, whose trip counts are bounded, and fuel bounds everything else;
//! - memory limits other than the default and maps beyond a few pages: the limit only moves
//!   where `page_fault` starts, which the holes and the top-of-address-space bases cover;
//! - tile sizes above 4 KiB: bounds checks are size-independent;
//! - the assembler and container: their own cargo-fuzz targets (`roundtrip`, `asm`,
//!   `run_bytes`) cover them.

pub mod generate;
pub mod shrink;

use crate::vm::{self, Engine, VmOptions};
use arbitrary::Unstructured;
use generate::GenProgram;
use lanejit_interp::interp::Decoded;
use lanejit_interp::machine::Machine;
use lanejit_interp::program::Program;
use lanejit_interp::result::RunResult;
use rand::{RngCore, SeedableRng};

/// Everything compared between engines after a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// The contract's result.
    pub result: RunResult,
    /// The latched trip count (not in the JSON, but part of the state).
    pub trip: u64,
    /// Every mapped page.
    pub memory: Vec<(u64, Vec<u8>)>,
    /// The whole tile.
    pub tile: Vec<u8>,
}

/// The engines `lanejit fuzz` can compare.
pub const ENGINES: [(&str, Engine); 3] = [
    ("interp", Engine::Interp),
    ("jit", Engine::Jit),
    ("tiered", Engine::Tiered),
];

/// The name of an engine.
pub fn engine_name(e: Engine) -> &'static str {
    ENGINES
        .iter()
        .find(|(_, x)| *x == e)
        .map_or("?", |(n, _)| n)
}

/// Run `program` with `config` on `engine` and capture the snapshot. `None` when the machine
/// cannot be built (the generator never produces such programs; replays might).
pub fn run_snapshot(
    program: &Program,
    config: lanejit_interp::machine::Config,
    engine: Engine,
) -> Option<Snapshot> {
    let mut m = Machine::new(program, config).ok()?;
    let d = Decoded::new(&program.code);
    let (exit, _) = vm::run(engine, &mut m, &d, &VmOptions { jit_threshold: 2 });
    let result = RunResult::capture(&m, exit, &[]);
    let memory = m.mem.mapped_pages().map(|(a, b)| (a, b.to_vec())).collect();
    Some(Snapshot {
        result,
        trip: m.regs.trip,
        memory,
        tile: m.tile.as_bytes().to_vec(),
    })
}

/// A divergence between two engines on one program.
#[derive(Clone, Debug)]
pub struct Divergence {
    /// The (shrunk) case.
    pub case: GenProgram,
    /// The reference engine and its snapshot.
    pub a: (Engine, Snapshot),
    /// The diverging engine and its snapshot.
    pub b: (Engine, Snapshot),
    /// The number of retired instructions after which the states first differ.
    pub first_diff_after: u64,
}

/// The first pair of engines (reference = first) whose snapshots differ.
pub fn diverges(
    program: &Program,
    config: lanejit_interp::machine::Config,
    engines: &[Engine],
) -> Option<((Engine, Snapshot), (Engine, Snapshot))> {
    let reference = run_snapshot(program, config, *engines.first()?)?;
    for &e in &engines[1..] {
        let s = run_snapshot(program, config, e)?;
        if s != reference {
            return Some(((engines[0], reference), (e, s)));
        }
    }
    None
}

/// The smallest instruction budget under which the engines' states already differ: the
/// states agree after `n - 1` retired instructions and differ after `n`.
pub fn bisect(g: &GenProgram, a: Engine, b: Engine) -> u64 {
    let program = g.build();
    let differs = |fuel: u64| {
        let mut c = g.config();
        c.max_instructions = Some(fuel);
        run_snapshot(&program, c, a) != run_snapshot(&program, c, b)
    };
    let (mut lo, mut hi) = (0u64, g.fuel);
    if !differs(hi) {
        return hi;
    }
    // invariant: differs(hi); lo is either 0 or a budget that agrees
    if differs(0) {
        return 0;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if differs(mid) { hi = mid } else { lo = mid }
    }
    hi
}

/// The case for index `i` of a campaign with `seed`: deterministic, independent of others.
pub fn case_bytes(seed: u64, i: u64) -> Vec<u8> {
    let mut rng =
        rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut bytes = vec![0u8; 8192];
    rng.fill_bytes(&mut bytes);
    bytes
}

/// Generate case `i` of campaign `seed`.
pub fn case(seed: u64, i: u64) -> GenProgram {
    let bytes = case_bytes(seed, i);
    generate::generate(&mut Unstructured::new(&bytes))
        .expect("the generator does not fail on a full buffer")
}

/// Run one case on `engines`; on divergence, shrink and bisect.
pub fn check_case(g: &GenProgram, engines: &[Engine]) -> Option<Divergence> {
    let program = g.build();
    let (a, b) = diverges(&program, g.config(), engines)?;
    let pair = [a.0, b.0];
    let case = shrink::shrink(g, &pair);
    let program = case.build();
    let ((ea, sa), (eb, sb)) = diverges(&program, case.config(), &pair)?;
    let first_diff_after = bisect(&case, ea, eb);
    Some(Divergence {
        case,
        a: (ea, sa),
        b: (eb, sb),
        first_diff_after,
    })
}

/// The reproducer text: a header (engines, configuration, first differing instruction, both
/// results) and the program as canonical assembly.
pub fn reproducer(d: &Divergence) -> String {
    let program = d.case.build();
    let mut s = String::new();
    s.push_str("; lanejit fuzz reproducer\n");
    s.push_str(&format!(
        "; engines: {} vs {}\n",
        engine_name(d.a.0),
        engine_name(d.b.0)
    ));
    s.push_str(&format!(
        "; fuzz-config:{} --max-instructions {}\n",
        if d.case.strict_align {
            " --strict-align"
        } else {
            ""
        },
        d.case.fuel
    ));
    s.push_str(&format!(
        "; states first differ after {} retired instructions{}\n",
        d.first_diff_after,
        describe_inst(&program, &d.a.1, d.first_diff_after)
    ));
    for (e, snap) in [&d.a, &d.b] {
        s.push_str(&format!(
            "; {}: {}\n",
            engine_name(*e),
            snap.result.to_json()
        ));
        if snap.trip != d.a.1.trip || snap.memory != d.a.1.memory || snap.tile != d.a.1.tile {
            s.push_str(&format!(
                "; {}: trip {:#x}, memory/tile {}\n",
                engine_name(*e),
                snap.trip,
                if snap.memory == d.a.1.memory && snap.tile == d.a.1.tile {
                    "same"
                } else {
                    "differ"
                }
            ));
        }
    }
    s.push_str(&lanejit_interp::disasm::disassemble(&program));
    s
}

/// " (instruction #n at pc P: TEXT)" for the n-th retired instruction on the reference.
fn describe_inst(program: &Program, _reference: &Snapshot, n: u64) -> String {
    // Re-run the interpreter for n - 1 instructions to find the pc of the n-th.
    if n == 0 {
        return String::new();
    }
    let config = lanejit_interp::machine::Config {
        max_instructions: Some(n - 1),
        ..lanejit_interp::machine::Config::for_program(program, None)
    };
    let Ok(mut m) = Machine::new(program, config) else {
        return String::new();
    };
    let d = Decoded::new(&program.code);
    let _ = lanejit_interp::interp::run(&mut m, &d);
    let idx = (m.pc / 8) as usize;
    let text = program
        .code
        .get(idx..)
        .and_then(|w| lanejit_interp::isa::Inst::decode(w).ok())
        .map_or_else(|| "(no instruction)".to_string(), |i| i.to_string());
    format!(" (instruction #{n} at pc {:#x}: {text})", m.pc)
}

/// Parse the `; fuzz-config:` header of a reproducer into (strict_align, max_instructions).
pub fn parse_reproducer_config(src: &str) -> (bool, Option<u64>) {
    let mut strict = false;
    let mut fuel = None;
    for line in src.lines() {
        if let Some(rest) = line.trim().strip_prefix("; fuzz-config:") {
            let w: Vec<&str> = rest.split_whitespace().collect();
            strict = w.contains(&"--strict-align");
            fuel = w
                .iter()
                .position(|x| *x == "--max-instructions")
                .and_then(|i| w.get(i + 1))
                .and_then(|n| n.parse().ok());
        }
    }
    (strict, fuel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lanejit_interp::machine::TrapKind;
    use lanejit_interp::result::Status;
    use std::collections::HashMap;

    /// The generator reaches every outcome the fuzzer must cover: halts, limits, and every
    /// kind of trap, including faults inside hardware loops.
    #[test]
    fn generated_cases_cover_every_outcome() {
        let mut status: HashMap<&str, u32> = HashMap::new();
        let mut traps: HashMap<&str, u32> = HashMap::new();
        let mut in_loop_faults = 0;
        for i in 0..1500 {
            let g = case(7, i);
            let p = g.build();
            let snap = run_snapshot(&p, g.config(), Engine::Interp).expect("machine builds");
            *status.entry(snap.result.status.name()).or_default() += 1;
            if let Some(t) = snap.result.trap {
                *traps.entry(t.kind.name()).or_default() += 1;
                if snap.result.status == Status::Trapped && snap.result.lc0 > 0 {
                    in_loop_faults += 1;
                }
            }
        }
        for s in ["halted", "trapped", "limit"] {
            assert!(status.get(s).copied().unwrap_or(0) >= 15, "{s}: {status:?}");
        }
        for k in [
            TrapKind::PageFault,
            TrapKind::PermissionFault,
            TrapKind::TileOutOfBounds,
            TrapKind::TileUnauthorized,
            TrapKind::Misaligned,
            TrapKind::IllegalInstruction,
            TrapKind::CodeOutOfBounds,
        ] {
            assert!(
                traps.get(k.name()).copied().unwrap_or(0) >= 3,
                "{}: {traps:?}",
                k.name()
            );
        }
        assert!(
            in_loop_faults >= 10,
            "faults after loop iterations: {in_loop_faults}"
        );
    }
}
