//! `; expect` lines: the expectations a kernel's source states about its own result, their
//! grammar (documented in `seeds/ISA.md`), and checking them against a finished run. Used by
//! `lanejit run --check` and by the tests of the example kernels.
//!
//! ```text
//! ; expect status halted|trapped|limit
//! ; expect instructions N
//! ; expect trap KIND pc PC [lane L ea EA space memory|tile access read|write]
//! ; expect sN VALUE
//! ; expect vN[LANE] VALUE
//! ; expect vN:TYPE V0 V1 ...            (lanes 0.. in TYPE; fewer values check fewer lanes)
//! ; expect mem ADDR HEX                 (bytes at ADDR, as hex pairs)
//! ; expect mem ADDR:TYPE V0 V1 ...      (consecutive elements of TYPE from ADDR)
//! ; expect tile ADDR HEX | tile ADDR:TYPE V0 V1 ...
//! ```
//!
//! ADDR is a number or a label of the space with an optional offset (`y`, `y+16`); VALUE is a
//! decimal or `0x` number (`-` allowed: two's complement); TYPE is one of
//! [`ElemType::ALL`]; typed values are written as [`ElemType::encode`] reads them.

use crate::machine::{Exit, Machine};
use crate::program::{Program, Space};
use crate::result::hex;
use crate::view::ElemType;
use std::fmt::Write as _;

/// What one `; expect` line states.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Claim {
    Status(String),
    Instructions(u64),
    Trap {
        kind: String,
        pc: u64,
        mem: Option<(u32, u64, String, String)>,
    },
    Scalar(usize, u64),
    Lane(usize, usize, u64),
    /// Register, type, lanes' expected bytes.
    Lanes(usize, ElemType, Vec<Vec<u8>>),
    /// Space, address, expected bytes, and the type they were written in (if typed).
    Bytes(Space, u64, Vec<u8>, Option<ElemType>),
}

/// One `; expect` line of a source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation {
    /// 1-based source line.
    pub line: usize,
    /// The text after `; expect `.
    pub text: String,
    claim: Claim,
}

/// A `; expect` line that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: `; expect {text}`: {why}")]
pub struct ExpectError {
    /// 1-based source line.
    pub line: usize,
    /// The text after `; expect `.
    pub text: String,
    /// What is wrong.
    pub why: String,
}

fn num(s: &str) -> Result<u64, String> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let t = body.replace('_', "");
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    }
    .map_err(|_| format!("`{s}` is not a number"))?;
    Ok(if neg { v.wrapping_neg() } else { v })
}

fn hexbytes(s: &str) -> Result<Vec<u8>, String> {
    if s.len() % 2 != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("`{s}` is not hex byte pairs"));
    }
    Ok((0..s.len())
        .step_by(2)
        .filter_map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect())
}

fn reg_num(s: &str) -> Result<usize, String> {
    s.parse::<usize>()
        .ok()
        .filter(|&r| r < 32)
        .ok_or_else(|| format!("`{s}` is not a register number 0..31"))
}

fn typed(ty: &str, vals: &[&str]) -> Result<(ElemType, Vec<Vec<u8>>), String> {
    let t = ElemType::parse(ty).ok_or_else(|| format!("`{ty}` is not a type ({})", type_list()))?;
    if vals.is_empty() {
        return Err("expected at least one value".into());
    }
    let v = vals
        .iter()
        .map(|v| t.encode(v).ok_or_else(|| format!("`{v}` is not a {t}")))
        .collect::<Result<_, _>>()?;
    Ok((t, v))
}

/// The type names, for messages.
pub fn type_list() -> String {
    ElemType::ALL.map(ElemType::name).join(" ")
}

fn parse_claim(w: &[&str], program: &Program) -> Result<Claim, String> {
    let space_of = |s: &str| match s {
        "mem" => Space::Memory,
        _ => Space::Tile,
    };
    Ok(match w {
        ["status", s @ ("halted" | "trapped" | "limit")] => Claim::Status(s.to_string()),
        ["instructions", n] => Claim::Instructions(num(n)?),
        ["trap", kind, "pc", pc] => Claim::Trap {
            kind: kind.to_string(),
            pc: num(pc)?,
            mem: None,
        },
        [
            "trap",
            kind,
            "pc",
            pc,
            "lane",
            lane,
            "ea",
            ea,
            "space",
            space,
            "access",
            access,
        ] => Claim::Trap {
            kind: kind.to_string(),
            pc: num(pc)?,
            mem: Some((
                u32::try_from(num(lane)?).map_err(|_| "lane out of range")?,
                num(ea)?,
                space.to_string(),
                access.to_string(),
            )),
        },
        [sp @ ("mem" | "tile"), addr, rest @ ..] => {
            let space = space_of(sp);
            let (a, ty) = match addr.rsplit_once(':') {
                Some((a, t)) => (a, Some(t)),
                None => (*addr, None),
            };
            let at = program.resolve_addr(a, space).map_err(|e| e.to_string())?;
            match (ty, rest) {
                (None, [h]) => Claim::Bytes(space, at, hexbytes(h)?, None),
                (Some(t), vals) => {
                    let (t, v) = typed(t, vals)?;
                    Claim::Bytes(space, at, v.concat(), Some(t))
                }
                _ => {
                    return Err(format!(
                        "write `{sp} ADDR HEX` or `{sp} ADDR:TYPE V0 V1 ...`"
                    ));
                }
            }
        }
        [reg, v] if reg.starts_with('s') => Claim::Scalar(reg_num(&reg[1..])?, num(v)?),
        [reg, v] if reg.starts_with('v') && reg.ends_with(']') => {
            let (r, lane) = reg[1..reg.len() - 1]
                .split_once('[')
                .ok_or("write vN[LANE] VALUE")?;
            let lane = lane
                .parse::<usize>()
                .ok()
                .filter(|&l| l < 64)
                .ok_or_else(|| format!("`{lane}` is not a lane 0..63"))?;
            Claim::Lane(reg_num(r)?, lane, num(v)?)
        }
        [reg, vals @ ..] if reg.starts_with('v') && reg.contains(':') => {
            let (r, t) = reg[1..].split_once(':').ok_or("write vN:TYPE V0 V1 ...")?;
            let (t, v) = typed(t, vals)?;
            Claim::Lanes(reg_num(r)?, t, v)
        }
        _ => {
            return Err(
                "expected status, instructions, trap, sN, vN[LANE], vN:TYPE, mem or tile".into(),
            );
        }
    })
}

/// Every `; expect` line of `src` (a line whose text, trimmed, starts with `; expect `),
/// with addresses resolved against `program`.
pub fn parse(src: &str, program: &Program) -> Result<Vec<Expectation>, ExpectError> {
    let mut out = Vec::new();
    for (i, line) in src.lines().enumerate() {
        let Some(rest) = line.trim().strip_prefix("; expect ") else {
            continue;
        };
        let text = rest.trim().to_string();
        let w: Vec<&str> = text.split_whitespace().collect();
        match parse_claim(&w, program) {
            Ok(claim) => out.push(Expectation {
                line: i + 1,
                text: text.clone(),
                claim,
            }),
            Err(why) => {
                return Err(ExpectError {
                    line: i + 1,
                    text,
                    why,
                });
            }
        }
    }
    Ok(out)
}

fn status_name(exit: Exit) -> &'static str {
    match exit {
        Exit::Halted => "halted",
        Exit::Trapped(_) => "trapped",
        Exit::Limit => "limit",
    }
}

/// Bytes as typed values (or hex pairs), for a failure message.
fn show(bytes: &[u8], ty: Option<ElemType>) -> String {
    match ty {
        Some(t) => t
            .values(bytes)
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join(" "),
        None => crate::result::hex_bytes(bytes),
    }
}

impl Expectation {
    /// Check the expectation against machine `m` after a run that ended with `exit`. On
    /// failure returns what was found instead (`"got 0x5"`).
    pub fn check(&self, m: &Machine, exit: Exit) -> Result<(), String> {
        let vl = m.vl();
        match &self.claim {
            Claim::Status(s) if s == status_name(exit) => Ok(()),
            Claim::Status(_) => Err(format!("got status {}", status_name(exit))),
            Claim::Instructions(n) if *n == m.retired => Ok(()),
            Claim::Instructions(_) => Err(format!("got {} instructions", m.retired)),
            Claim::Trap { kind, pc, mem } => {
                let Exit::Trapped(t) = exit else {
                    return Err(format!("got status {} (no trap)", status_name(exit)));
                };
                let got_mem = t.mem.map(|f| {
                    (
                        f.lane,
                        f.ea,
                        crate::result::space_name(f.space).to_string(),
                        f.access.name().to_string(),
                    )
                });
                let same_mem = mem.is_none() || *mem == got_mem;
                if t.kind.name() == kind && t.pc == *pc && same_mem {
                    return Ok(());
                }
                let mut s = format!("got trap {} pc {}", t.kind.name(), hex(t.pc));
                if let Some((l, ea, sp, acc)) = got_mem {
                    let _ = write!(s, " lane {l} ea {} space {sp} access {acc}", hex(ea));
                }
                Err(s)
            }
            Claim::Scalar(r, v) if m.regs.s[*r] == *v => Ok(()),
            Claim::Scalar(r, _) => Err(format!("got {}", hex(m.regs.s[*r]))),
            Claim::Lane(_, l, _) if *l >= vl => Err(format!("lane {l} is not below VL {vl}")),
            Claim::Lane(r, l, v) if m.regs.v[*r][*l] == *v => Ok(()),
            Claim::Lane(r, l, _) => Err(format!("got {}", hex(m.regs.v[*r][*l]))),
            Claim::Lanes(r, t, vals) => {
                if vals.len() > vl {
                    return Err(format!("{} values for {vl} lanes", vals.len()));
                }
                let lane_bytes = |x: u64| x.to_le_bytes()[..t.size()].to_vec();
                let got: Vec<Vec<u8>> = m.regs.v[*r][..vals.len()]
                    .iter()
                    .map(|&x| lane_bytes(x))
                    .collect();
                if got == *vals {
                    Ok(())
                } else {
                    Err(format!("got {}", show(&got.concat(), Some(*t))))
                }
            }
            Claim::Bytes(space, addr, want, ty) => {
                let len = want.len() as u64;
                let got = match space {
                    Space::Memory => m.mem.bytes(*addr, len),
                    Space::Tile => m.tile.bytes(*addr, len),
                };
                let Some(got) = got else {
                    return Err(format!(
                        "{} {}+{len} is not mapped",
                        crate::result::space_name(*space),
                        hex(*addr)
                    ));
                };
                if got == want.as_slice() {
                    return Ok(());
                }
                let size = ty.map_or(1, ElemType::size);
                let first = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
                let at = first / size * size;
                Err(format!(
                    "first difference at {} (element {}): got {}, expected {}",
                    hex(addr + at as u64),
                    at / size,
                    show(&got[at..(at + 8 * size).min(got.len())], *ty),
                    show(&want[at..(at + 8 * size).min(want.len())], *ty),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asm::assemble;
    use crate::interp::{self, Decoded};
    use crate::machine::Config;

    const SRC: &str = "
        .mem 0x1000, 0x1000, rw
        .data 0x1000
    out: .word 0, 0
        .text
        S.LI s1, out
        S.LI s2, f32(2.5)
        V.MOV v1, s2
        V.SW v1, [s1, lc0<<2]
        HALT
    ; expect status halted
    ; expect s2 0x40200000
    ; expect v1[1] 0x40200000
    ; expect v1:f32 2.5 2.5
    ; expect mem out:f32 2.5 2.5
    ; expect mem out+4 00002040
    ; expect instructions 5
    ";

    fn run(src: &str) -> (Vec<Expectation>, Machine, Exit) {
        let p = assemble(src, "t.s").unwrap();
        let mut m = Machine::new(&p, Config::for_program(&p, Some(2))).unwrap();
        let exit = interp::run(&mut m, &Decoded::new(&p.code));
        (parse(src, &p).unwrap(), m, exit)
    }

    #[test]
    fn expectations_hold_and_fail() {
        let (ex, m, exit) = run(SRC);
        assert_eq!(ex.len(), 7);
        for e in &ex {
            assert_eq!(e.check(&m, exit), Ok(()), "{}", e.text);
        }
        let bad = SRC
            .replace("out:f32 2.5 2.5", "out:f32 2.5 3")
            .replace("s2 0x40200000", "s2 1");
        let (ex, m, exit) = run(&bad);
        let fails: Vec<String> = ex.iter().filter_map(|e| e.check(&m, exit).err()).collect();
        assert_eq!(
            fails,
            [
                "got 0x40200000",
                "first difference at 0x1004 (element 1): got 2.5, expected 3.0"
            ]
        );
    }

    #[test]
    fn bad_lines_are_errors() {
        let p = assemble(".mem 0x1000, 0x1000, rw\n.data 0x1000\nx: .byte 1\n", "t.s").unwrap();
        for bad in [
            "; expect s40 1",
            "; expect mem nowhere 00",
            "; expect mem x 0",
            "; expect mem x:f16 1",
            "; expect status fine",
            "; expect v1:i8 300",
            "; expect frobnicate",
        ] {
            assert!(parse(bad, &p).is_err(), "{bad}");
        }
    }
}
