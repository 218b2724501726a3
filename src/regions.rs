//! The region report of `run --regions`: every region the run's JITs compiled, with its guest
//! pc range and label, kind, form, entries, instructions retired in it, compile time, code
//! bytes, and each instruction that went to a helper or back to the interpreter with the
//! reason and how many times, sorted by instructions retired. As a readable table
//! ([`table`]) or as the `"regions"` value of the JSON result ([`json`]). The counts come
//! from `lanejit_jit::observe` (counters compiled into the code only under `--regions`);
//! compiled code is shared by the groups of a launch, so a launch's report adds up over its
//! groups.

use crate::vm::Engine;
use lanejit_jit::observe::{Observer, RegionReport, region_name};
use lanejit_jit::{Plan, RegionKind};
use serde_json::{Value, json};

/// The kind's name in the report.
pub fn kind_name(kind: RegionKind, hot: bool) -> &'static str {
    match (kind, hot) {
        (RegionKind::Straight, false) => "straight",
        (RegionKind::Straight, true) => "straight (hot)",
        (RegionKind::Loop, _) => "loop",
        (RegionKind::Tail, _) => "tail",
    }
}

/// The form's name in the report.
pub fn form_name(plan: Plan, kind: RegionKind, hot: bool) -> &'static str {
    match plan {
        // The first compile of straight-line code hands vector work to helpers.
        Plan::Memory if kind != RegionKind::Loop && !hot => "helpers",
        Plan::Memory => "memory",
        Plan::Registers => "registers",
        Plan::Interpret => "helpers",
    }
}

/// The `"regions"` value of the JSON result: one object per region (see the module docs).
pub fn json(report: &[RegionReport], obs: &Observer) -> Value {
    let hex = |v: u64| format!("{v:#x}");
    Value::Array(
        report
            .iter()
            .map(|r| {
                let label = obs.label(r.pc);
                json!({
                    "pc": hex(r.pc),
                    "end": hex(r.end_pc),
                    "label": label,
                    "name": region_name(r.kind, r.hot, r.pc, label.as_deref()),
                    "kind": match r.kind {
                        RegionKind::Straight => "straight",
                        RegionKind::Loop => "loop",
                        RegionKind::Tail => "tail",
                    },
                    "hot": r.hot,
                    "form": form_name(r.plan, r.kind, r.hot),
                    "instructions": r.insts,
                    "entries": r.entries,
                    "retired": r.retired,
                    "compile_us": r.compile_us,
                    "code_bytes": r.code_bytes,
                    "fallbacks": r.fallbacks.iter().map(|f| json!({
                        "pc": hex(f.pc),
                        "label": obs.label(f.pc),
                        "inst": f.inst,
                        "to": f.why.target(),
                        "reason": f.why.name(),
                        "count": f.count,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

/// The readable report (see the module docs).
pub fn table(report: &[RegionReport], obs: &Observer, engine: Engine) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if engine == Engine::Interp {
        out.push_str("regions: nothing compiled (the run used the interpreter only)\n");
        return out;
    }
    if report.is_empty() {
        out.push_str("regions: nothing compiled\n");
        return out;
    }
    let _ = writeln!(
        out,
        "regions: {} compiled, by instructions retired",
        report.len()
    );
    let _ = writeln!(
        out,
        "  {:<15} {:<20} {:<15} {:<9} {:>9} {:>12} {:>10} {:>7}",
        "pcs", "label", "kind", "form", "entries", "retired", "compile", "bytes"
    );
    for r in report {
        let pcs = format!("{:#x}..{:#x}", r.pc, r.end_pc);
        let label = obs.label(r.pc).unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:<15} {:<20} {:<15} {:<9} {:>9} {:>12} {:>8}us {:>7}",
            pcs,
            label,
            kind_name(r.kind, r.hot),
            form_name(r.plan, r.kind, r.hot),
            r.entries,
            r.retired,
            r.compile_us,
            r.code_bytes
        );
        for f in &r.fallbacks {
            let place = match obs.label(f.pc) {
                Some(l) => format!("{:#x} <{l}>", f.pc),
                None => format!("{:#x}", f.pc),
            };
            let _ = writeln!(
                out,
                "      {place:<22} {:<28} -> {:<6} {:<13} x{}",
                f.inst,
                f.why.target(),
                f.why.name(),
                f.count
            );
        }
    }
    out
}
