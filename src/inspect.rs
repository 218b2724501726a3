//! What `lanejit run` shows beside the contract's result: dump specifications with symbols,
//! offsets and element types (`--dump-mem out+16:64:f32`), typed register views (`--show
//! v3:f32`), the readable run header (engine, VL, instructions, time), and the commit log of
//! `--trace` (pcs with labels and source lines, lane accesses, the trap line, filters).

use lanejit::vm::{Engine, EngineStats};
use lanejit_interp::interp::{Decoded, TraceEvent};
use lanejit_interp::lines::LineTable;
use lanejit_interp::machine::Trap;
use lanejit_interp::program::{Program, Space, SymKind};
use lanejit_interp::result::DumpRequest;
use lanejit_interp::view::ElemType;
use std::fmt::Write as _;

/// `ADDR:LEN[:TYPE]` as written; ADDR is resolved once the program is loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DumpSpec {
    /// The whole argument, for messages.
    pub text: String,
    /// ADDR: a number, a label, or a label with an offset.
    pub addr: String,
    /// LEN in bytes.
    pub len: u64,
    /// TYPE, if given.
    pub ty: Option<ElemType>,
}

/// Parse `--dump-mem`/`--dump-tile`'s `ADDR:LEN[:TYPE]`.
pub fn parse_dump_spec(s: &str) -> Result<DumpSpec, String> {
    let mut it = s.split(':');
    let (Some(addr), Some(len)) = (it.next(), it.next()) else {
        return Err(format!("`{s}`: expected ADDR:LEN or ADDR:LEN:TYPE"));
    };
    let ty = match it.next() {
        None => None,
        Some(t) => Some(ElemType::parse(t).ok_or_else(|| {
            format!(
                "`{s}`: `{t}` is not an element type ({})",
                lanejit_interp::expect::type_list()
            )
        })?),
    };
    if it.next().is_some() || addr.trim().is_empty() {
        return Err(format!("`{s}`: expected ADDR:LEN or ADDR:LEN:TYPE"));
    }
    let len = crate::cli::parse_u64(len)?;
    if let Some(t) = ty
        && len % t.size() as u64 != 0
    {
        return Err(format!(
            "`{s}`: LEN is in bytes and must be a multiple of {} for {t}",
            t.size()
        ));
    }
    Ok(DumpSpec {
        text: s.to_string(),
        addr: addr.to_string(),
        len,
        ty,
    })
}

impl DumpSpec {
    /// The request this spec makes of `program` (its ADDR resolved in `space`).
    pub fn request(&self, program: &Program, space: Space) -> Result<DumpRequest, String> {
        let addr = program
            .resolve_addr(&self.addr, space)
            .map_err(|e| e.to_string())?;
        Ok(DumpRequest {
            space,
            addr,
            len: self.len,
            ty: self.ty,
        })
    }
}

/// `--show REG[:TYPE]`: a register (`v3`, `s5`) and the type to show it in (default u64).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShowSpec {
    /// Vector (true) or scalar register.
    pub vector: bool,
    /// Register number.
    pub reg: usize,
    /// Element type of each lane (its low bytes).
    pub ty: ElemType,
}

/// Parse `--show`'s `REG[:TYPE]`.
pub fn parse_show_spec(s: &str) -> Result<ShowSpec, String> {
    let (r, t) = s.split_once(':').unwrap_or((s, "u64"));
    let ty = ElemType::parse(t).ok_or_else(|| {
        format!(
            "`{s}`: `{t}` is not an element type ({})",
            lanejit_interp::expect::type_list()
        )
    })?;
    let lower = r.to_ascii_lowercase();
    let (vector, num) = match lower.split_at_checked(1) {
        Some(("v", n)) => (true, n),
        Some(("s", n)) => (false, n),
        _ => return Err(format!("`{s}`: expected a register v0..v31 or s0..s31")),
    };
    let reg = num
        .parse::<usize>()
        .ok()
        .filter(|&n| n < 32)
        .ok_or_else(|| format!("`{s}`: expected a register v0..v31 or s0..s31"))?;
    Ok(ShowSpec { vector, reg, ty })
}

impl ShowSpec {
    /// The register's name.
    pub fn name(&self) -> String {
        format!("{}{}", if self.vector { 'v' } else { 's' }, self.reg)
    }

    /// The values of the register's lanes (one for a scalar) in the spec's type.
    pub fn values(
        &self,
        scalars: &[u64; 32],
        vectors: &[Vec<u64>],
    ) -> Vec<lanejit_interp::view::Elem> {
        let lanes: &[u64] = if self.vector {
            &vectors[self.reg]
        } else {
            std::slice::from_ref(&scalars[self.reg])
        };
        lanes.iter().map(|&x| self.ty.of_lane(x)).collect()
    }
}

/// The readable header of a run: engine, VL, retired instructions, wall time and rate, and
/// what the JIT did.
pub fn header(engine: Engine, vl: usize, retired: u64, secs: f64, stats: &EngineStats) -> String {
    let mut s = format!(
        "engine {}, VL {vl}: {retired} instructions in {}",
        engine.name(),
        duration(secs)
    );
    if secs > 0.0 {
        let _ = write!(s, " ({} instr/s)", rate(retired as f64 / secs));
    }
    if engine != Engine::Interp {
        let _ = write!(
            s,
            "; {} regions compiled in {} us, {} instructions retired in compiled code",
            stats.compiled_regions, stats.compile_us, stats.jit_retired
        );
    }
    s.push('\n');
    s
}

/// `1.23 ms`, `45.6 us`, `2.00 s`.
pub fn duration(secs: f64) -> String {
    if secs >= 1.0 {
        format!("{secs:.2} s")
    } else if secs >= 1e-3 {
        format!("{:.2} ms", secs * 1e3)
    } else {
        format!("{:.1} us", secs * 1e6)
    }
}

/// `123`, `4.56 k`, `7.89 M`, `1.23 G`.
pub fn rate(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.2} G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.2} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// Names for pcs: the code label at or before a pc with the offset from it, the instruction
/// there, and its source line (from the program's line table: assembled from source, or read
/// from a container that has one).
pub struct Places<'a> {
    code_labels: Vec<(u64, &'a str)>,
    lines: &'a LineTable,
    decoded: &'a Decoded,
}

impl<'a> Places<'a> {
    /// Places of `program` (decoded as `decoded`).
    pub fn new(program: &'a Program, decoded: &'a Decoded) -> Self {
        let mut code_labels: Vec<(u64, &str)> = program
            .symbols
            .iter()
            .filter(|s| s.kind == SymKind::Code)
            .map(|s| (s.value, s.name.as_str()))
            .collect();
        code_labels.sort();
        Places {
            code_labels,
            lines: &program.lines,
            decoded,
        }
    }

    /// `loop+0x10` (or `loop` at the label itself); `None` before the first code label.
    pub fn label(&self, pc: u64) -> Option<String> {
        let i = self.code_labels.partition_point(|&(v, _)| v <= pc);
        let (v, name) = *self.code_labels.get(i.checked_sub(1)?)?;
        Some(if v == pc {
            name.to_string()
        } else {
            format!("{name}+{:#x}", pc - v)
        })
    }

    /// `0x28 <top+0x8>` (the label part only when there is one).
    pub fn pc(&self, pc: u64) -> String {
        match self.label(pc) {
            Some(l) => format!("{pc:#06x} <{l}>"),
            None => format!("{pc:#06x}"),
        }
    }

    /// The disassembly of the instruction at `pc` (`.inst 0x..` when it does not decode,
    /// `(none)` past the end of the code).
    pub fn inst(&self, pc: u64) -> String {
        let index = usize::try_from(pc / 8).ok().filter(|_| pc % 8 == 0);
        match index.map(|i| (self.decoded.inst(i), self.decoded.word(i))) {
            Some((Some(inst), _)) => inst.to_string(),
            Some((None, Some(w))) => format!(".inst {w:#x}"),
            _ => "(no instruction)".into(),
        }
    }

    /// ` (file.s:12)` when the pc's source line is known, else empty.
    pub fn source(&self, pc: u64) -> String {
        match self.lines.at(pc) {
            Some((file, line)) => format!(" ({file}:{line})"),
            None => String::new(),
        }
    }

    /// The commit-log line of a retired instruction (`seq` is its 1-based retired number),
    /// followed by one line per lane access of a load or store.
    pub fn event(&self, seq: u64, ev: &TraceEvent) -> String {
        let mut s = format!(
            "{seq} {} mask={:#x} {}{}",
            self.pc(ev.pc),
            ev.mask,
            ev.inst,
            ev.changes_text()
        );
        for a in ev.access_lines() {
            s.push('\n');
            s.push_str(&a);
        }
        s
    }

    /// The line naming a trap: kind, where, the instruction and its source line, and the
    /// faulting lane's access.
    pub fn trap(&self, t: &Trap) -> String {
        let mut s = format!(
            "trap {} at {}: {}{}",
            t.kind.name(),
            self.pc(t.pc),
            self.inst(t.pc),
            self.source(t.pc)
        );
        if let Some(f) = t.mem {
            let space = lanejit_interp::result::space_name(f.space);
            let _ = write!(
                s,
                "; lane {} {} {space} ea {:#x}",
                f.lane,
                f.access.name(),
                f.ea
            );
        }
        s
    }
}

/// Which retired instructions `--trace` prints.
#[derive(Clone, Copy, Debug, Default)]
pub struct TraceFilter {
    /// The first retired number printed (1-based; `--trace-from`).
    pub from: u64,
    /// How many to print at most (`--trace-count`).
    pub count: Option<u64>,
    /// Only this pc (`--trace-pc`).
    pub pc: Option<u64>,
    /// Printed so far.
    pub printed: u64,
}

impl TraceFilter {
    /// Whether to print the instruction retired as number `seq` at `pc` (and count it).
    pub fn take(&mut self, seq: u64, pc: u64) -> bool {
        let wanted = seq >= self.from
            && self.pc.is_none_or(|p| p == pc)
            && self.count.is_none_or(|c| self.printed < c);
        if wanted {
            self.printed += 1;
        }
        wanted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        let d = parse_dump_spec("out+16:64:f32").unwrap();
        assert_eq!(
            (d.addr.as_str(), d.len, d.ty),
            ("out+16", 64, Some(ElemType::F32))
        );
        assert_eq!(parse_dump_spec("0x1000:0x10").unwrap().ty, None);
        for bad in ["out", "out:6:f32", "out:4:f16", "out:4:u8:x", ":4", "out:x"] {
            assert!(parse_dump_spec(bad).is_err(), "{bad}");
        }
        let s = parse_show_spec("V3:f32").unwrap();
        assert_eq!(
            (s.vector, s.reg, s.ty, s.name()),
            (true, 3, ElemType::F32, "v3".into())
        );
        assert_eq!(parse_show_spec("s31").unwrap().ty, ElemType::U64);
        for bad in ["v32", "x1", "v1:f16", "s", "v-1"] {
            assert!(parse_show_spec(bad).is_err(), "{bad}");
        }
        assert_eq!(duration(0.0123), "12.30 ms");
        assert_eq!(rate(2.5e6), "2.50 M");
    }
}
