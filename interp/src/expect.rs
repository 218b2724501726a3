//! `; expect` lines: the expectations a kernel's source states about its own result, their
//! grammar (documented in `seeds/ISA.md`), and checking them against the result of a run or
//! a launch of many groups. Used by `lanejit run --check` and by the tests of the example
//! kernels (single groups and launches alike): the one parser of the grammar.
//!
//! ```text
//! ; expect status halted|trapped|limit
//! ; expect instructions N               (retired; by every group of a launch together)
//! ; expect trap KIND pc PC [lane L ea EA space memory|tile access read|write]
//! ; expect sN VALUE
//! ; expect vN[LANE] VALUE
//! ; expect vN:TYPE V0 V1 ...            (lanes 0.. in TYPE; fewer values check fewer lanes)
//! ; expect mem ADDR HEX                 (bytes at ADDR, as hex pairs)
//! ; expect mem ADDR:TYPE V0 V1 ...      (consecutive elements of TYPE from ADDR)
//! ; expect tile ADDR HEX | tile ADDR:TYPE V0 V1 ...
//! ; expect group N                      (the reported group of a launch)
//! ; expect groups HALTED TRAPPED LIMIT  (how many groups ended so)
//! ; expect other group G pc PC access read|write   (a data_race trap's earlier access)
//! ; flags F ...                         (the run flags the expectations assume)
//! ```
//!
//! ADDR is a number or a label of the space with an optional offset (`y`, `y+16`); VALUE is a
//! decimal or `0x` number (`-` allowed: two's complement); TYPE is one of
//! [`ElemType::ALL`]; typed values are written as [`ElemType::encode`] reads them.
//!
//! Checking works on the [`RunResult`] of a run (registers, trap, counts: the reported group's
//! in a launch) and on its dumps: every `mem` and `tile` expectation asks for its range as a
//! [`DumpRequest`] ([`Expectation::dump`]), which the run captures with the others (memory after
//! the launch, the reported group's tile). A single group is a launch of one: `group 0`,
//! `groups` counting its one outcome.

use crate::machine::Trap;
use crate::memory::Access;
use crate::program::{Program, Space};
use crate::result::{Dump, DumpRequest, GroupCounts, RaceOther, RunResult, Status, hex};
use crate::view::ElemType;
use std::fmt::Write as _;

/// What one `; expect` line states.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Claim {
    Status(Status),
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
    /// The range, its expected bytes, the type they were written in (if typed), and why the
    /// range cannot be dumped (outside mapped memory or the tile), if it cannot.
    Bytes(DumpRequest, Vec<u8>, Option<ElemType>, Option<String>),
    Group(u32),
    Groups(GroupCounts),
    Other(RaceOther),
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

fn access(s: &str) -> Result<Access, String> {
    match s {
        "read" => Ok(Access::Read),
        "write" => Ok(Access::Write),
        _ => Err(format!("`{s}` is not an access (read or write)")),
    }
}

fn group_id(s: &str) -> Result<u32, String> {
    u32::try_from(num(s)?).map_err(|_| format!("`{s}` is not a group id"))
}

fn parse_claim(w: &[&str], program: &Program) -> Result<Claim, String> {
    let space_of = |s: &str| match s {
        "mem" => Space::Memory,
        _ => Space::Tile,
    };
    Ok(match w {
        ["status", s] => Claim::Status(match *s {
            "halted" => Status::Halted,
            "trapped" => Status::Trapped,
            "limit" => Status::Limit,
            _ => return Err(format!("`{s}` is not a status (halted, trapped or limit)")),
        }),
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
        ["group", g] => Claim::Group(group_id(g)?),
        ["groups", halted, trapped, limit] => Claim::Groups(GroupCounts {
            halted: num(halted)?,
            trapped: num(trapped)?,
            limit: num(limit)?,
        }),
        ["other", "group", g, "pc", pc, "access", a] => Claim::Other(RaceOther {
            group: group_id(g)?,
            pc: num(pc)?,
            access: access(a)?,
        }),
        [sp @ ("mem" | "tile"), addr, rest @ ..] => {
            let space = space_of(sp);
            let (a, ty) = match addr.rsplit_once(':') {
                Some((a, t)) => (a, Some(t)),
                None => (*addr, None),
            };
            let at = program.resolve_addr(a, space).map_err(|e| e.to_string())?;
            let (bytes, ty) = match (ty, rest) {
                (None, [h]) => (hexbytes(h)?, None),
                (Some(t), vals) => {
                    let (t, v) = typed(t, vals)?;
                    (v.concat(), Some(t))
                }
                _ => {
                    return Err(format!(
                        "write `{sp} ADDR HEX` or `{sp} ADDR:TYPE V0 V1 ...`"
                    ));
                }
            };
            let request = DumpRequest {
                space,
                addr: at,
                len: bytes.len() as u64,
                ty: None,
            };
            let outside = request.validate(program).err().map(|e| e.to_string());
            Claim::Bytes(request, bytes, ty, outside)
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
                "expected status, instructions, trap, sN, vN[LANE], vN:TYPE, mem, \
                 tile, group, groups or other"
                    .into(),
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

/// The words of the source's `; flags ...` lines: the `lanejit run` flags its expectations
/// were computed under (`--check-races`, `--max-instructions N`). `run --check` does not apply
/// them; they tell the reader (and the tests) how to run the kernel.
pub fn flags(src: &str) -> Vec<String> {
    src.lines()
        .filter_map(|l| l.trim().strip_prefix("; flags "))
        .flat_map(|f| f.split_whitespace().map(str::to_string))
        .collect()
}

/// The dumps `expectations` read, to capture with the run.
pub fn dumps(expectations: &[Expectation]) -> Vec<DumpRequest> {
    expectations.iter().filter_map(Expectation::dump).collect()
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

/// ` lane L ea EA space S access A` of a memory trap.
fn trap_text(t: &Trap) -> String {
    let mut s = format!("got trap {} pc {}", t.kind.name(), hex(t.pc));
    if let Some(f) = t.mem {
        let _ = write!(
            s,
            " lane {} ea {} space {} access {}",
            f.lane,
            hex(f.ea),
            crate::result::space_name(f.space),
            f.access.name()
        );
    }
    s
}

impl Expectation {
    /// The memory or tile range a `mem` or `tile` expectation reads, to capture as a dump of
    /// the run (`None` for other expectations, and for a range outside mapped memory or the
    /// tile, which fails its check instead).
    pub fn dump(&self) -> Option<DumpRequest> {
        match &self.claim {
            Claim::Bytes(request, _, _, None) => Some(*request),
            _ => None,
        }
    }

    /// Check the expectation against the result `r` of a run or a launch, whose `dumps` hold
    /// the dump of [`Expectation::dump`] (among others, in any order). On failure returns what
    /// was found instead (`"got 0x5"`).
    pub fn check(&self, r: &RunResult, dumps: &[Dump]) -> Result<(), String> {
        match &self.claim {
            Claim::Status(s) if *s == r.status => Ok(()),
            Claim::Status(_) => Err(format!("got status {}", r.status.name())),
            Claim::Instructions(n) if *n == r.instructions => Ok(()),
            Claim::Instructions(_) => Err(format!("got {} instructions", r.instructions)),
            Claim::Trap { kind, pc, mem } => {
                let Some(t) = &r.trap else {
                    return Err(format!("got status {} (no trap)", r.status.name()));
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
                Err(trap_text(t))
            }
            Claim::Scalar(i, v) if r.scalars[*i] == *v => Ok(()),
            Claim::Scalar(i, _) => Err(format!("got {}", hex(r.scalars[*i]))),
            Claim::Lane(i, l, v) => match r.vectors.get(*i).and_then(|v| v.get(*l)) {
                Some(x) if x == v => Ok(()),
                Some(x) => Err(format!("got {}", hex(*x))),
                None => Err(format!("lane {l} is not below VL {}", vl(r))),
            },
            Claim::Lanes(i, t, vals) => {
                let lanes = r.vectors.get(*i).map_or(&[][..], Vec::as_slice);
                if vals.len() > lanes.len() {
                    return Err(format!("{} values for {} lanes", vals.len(), lanes.len()));
                }
                let got: Vec<Vec<u8>> = lanes[..vals.len()]
                    .iter()
                    .map(|x| x.to_le_bytes()[..t.size()].to_vec())
                    .collect();
                if got == *vals {
                    Ok(())
                } else {
                    Err(format!("got {}", show(&got.concat(), Some(*t))))
                }
            }
            Claim::Bytes(_, _, _, Some(outside)) => Err(outside.clone()),
            Claim::Bytes(req, want, ty, None) => {
                let same = |d: &&Dump| {
                    let q = d.request;
                    (q.space, q.addr, q.len) == (req.space, req.addr, req.len)
                };
                let Some(got) = dumps.iter().find(same).map(|d| &d.bytes) else {
                    return Err(format!(
                        "the run captured no dump of {} {}+{}",
                        crate::result::space_name(req.space),
                        hex(req.addr),
                        req.len
                    ));
                };
                if got == want {
                    return Ok(());
                }
                let size = ty.map_or(1, ElemType::size);
                let first = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
                let at = first / size * size;
                Err(format!(
                    "first difference at {} (element {}): got {}, expected {}",
                    hex(req.addr + at as u64),
                    at / size,
                    show(&got[at.min(got.len())..(at + 8 * size).min(got.len())], *ty),
                    show(&want[at..(at + 8 * size).min(want.len())], *ty),
                ))
            }
            Claim::Group(g) if *g == r.group => Ok(()),
            Claim::Group(_) => Err(format!("got group {}", r.group)),
            Claim::Groups(c) => {
                let got = r.groups.unwrap_or_else(|| {
                    let mut one = GroupCounts::default();
                    one.add(&r.exit());
                    one
                });
                if got == *c {
                    Ok(())
                } else {
                    Err(format!(
                        "got groups {} {} {} (halted trapped limit)",
                        got.halted, got.trapped, got.limit
                    ))
                }
            }
            Claim::Other(o) => match &r.race {
                Some(got) if got == o => Ok(()),
                Some(got) => Err(format!(
                    "got other group {} pc {} access {}",
                    got.group,
                    hex(got.pc),
                    got.access.name()
                )),
                None => Err("got no earlier group's access (no data_race trap)".into()),
            },
        }
    }
}

/// The VL of a result: its vector registers' lane count.
fn vl(r: &RunResult) -> usize {
    r.vectors.first().map_or(0, Vec::len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asm::assemble;
    use crate::interp::{self, Decoded};
    use crate::machine::{Config, Machine};

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
    ; expect group 0
    ; expect groups 1 0 0
    ";

    /// Run `src` at VL 2 and check its expectations; the failures' messages.
    fn failures(src: &str) -> (usize, Vec<String>) {
        let p = assemble(src, "t.s").unwrap();
        let ex = parse(src, &p).unwrap();
        let mut m = Machine::new(&p, Config::for_program(&p, Some(2))).unwrap();
        let exit = interp::run(&mut m, &Decoded::new(&p.code));
        let r = RunResult::capture(&m, exit, &dumps(&ex));
        let fails = ex.iter().filter_map(|e| e.check(&r, &r.dumps).err());
        (ex.len(), fails.collect())
    }

    #[test]
    fn expectations_hold_and_fail() {
        assert_eq!(failures(SRC), (9, Vec::new()));
        let bad = SRC
            .replace("out:f32 2.5 2.5", "out:f32 2.5 3")
            .replace("s2 0x40200000", "s2 1")
            .replace("groups 1 0 0", "groups 0 1 0")
            .replace("group 0", "group 2")
            .replace("v1[1]", "v1[2]");
        assert_eq!(
            failures(&bad).1,
            [
                "got 0x40200000",
                "lane 2 is not below VL 2",
                "first difference at 0x1004 (element 1): got 2.5, expected 3.0",
                "got group 0",
                "got groups 1 0 0 (halted trapped limit)",
            ]
        );
    }

    /// The claims about a launch, on a race-checked launch of two groups: group 0 writes a
    /// dword that group 1 then reads.
    #[test]
    fn launch_claims() {
        let src = "
            .mem 0x1000, 0x1000, rw
            .text
            S.GID s1
            BNE s1, 0, reader
            S.LI s2, 0x1000
            V.SDI s1, [s2]
            HALT
    reader: S.LI s2, 0x1000
            V.LDI [s2], ->v1
            HALT
        ; expect status trapped
        ; expect instructions 8
        ; expect group 1
        ; expect groups 1 1 0
        ; expect trap data_race pc 0x40 lane 0 ea 0x1000 space memory access read
        ; expect other group 0 pc 0x20 access write
        ; expect s1 1
        ; expect mem 0x1000 0000000000000000
        ";
        let p = assemble(src, "t.s").unwrap();
        let ex = parse(src, &p).unwrap();
        let mut m = Machine::new(&p, Config::for_program(&p, Some(1))).unwrap();
        let r = crate::races::check_races(&mut m, &Decoded::new(&p.code), 2, &dumps(&ex));
        for e in &ex {
            assert_eq!(e.check(&r, &r.dumps), Ok(()), "{}", e.text);
        }
        let mut wrong = r.clone();
        wrong.race.as_mut().unwrap().access = Access::Read;
        assert_eq!(
            ex[5].check(&wrong, &[]),
            Err("got other group 0 pc 0x20 access read".into())
        );
        wrong.race = None;
        assert!(ex[5].check(&wrong, &[]).is_err());
        wrong.groups = None;
        assert_eq!(
            ex[3].check(&wrong, &[]),
            Err("got groups 0 1 0 (halted trapped limit)".into()),
            "one group counts its own outcome"
        );
        assert_eq!(
            ex[7].check(&r, &[]),
            Err("the run captured no dump of memory 0x1000+8".into())
        );
    }

    #[test]
    fn unmapped_ranges_fail_their_check_and_flags_are_listed() {
        let src = ".mem 0x1000, 0x1000, rw\nHALT\n; expect mem 0x1ffe 000000\n\
                   ; flags --check-races\n; flags --max-instructions 9\n";
        let p = assemble(src, "t.s").unwrap();
        let ex = parse(src, &p).unwrap();
        assert_eq!(ex[0].dump(), None);
        assert!(
            ex[0]
                .check(
                    &RunResult::capture(
                        &Machine::new(&p, Config::for_program(&p, None)).unwrap(),
                        crate::machine::Exit::Halted,
                        &[]
                    ),
                    &[]
                )
                .unwrap_err()
                .contains("not entirely mapped")
        );
        assert_eq!(flags(src), ["--check-races", "--max-instructions", "9"]);
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
            "; expect group -1",
            "; expect group 0x100000000",
            "; expect groups 1 2",
            "; expect other group 1 pc 0x10 access peek",
            "; expect other group 1 pc x access read",
        ] {
            assert!(parse(bad, &p).is_err(), "{bad}");
        }
    }
}
