//! Every example kernel in `seeds/kernels/` runs on the reference interpreter and meets the
//! expectations written in its header (`; expect ...` lines, computed independently of
//! lanejit). The root crate's engine harness runs the same kernels on every engine.

use lanejit_interp::asm::assemble;
use lanejit_interp::interp::{self, Decoded};
use lanejit_interp::machine::{Config, Exit, Machine};
use lanejit_interp::program::Program;
use std::path::{Path, PathBuf};

/// One `; expect` line.
#[derive(Debug)]
enum Expect {
    Status(String),
    Scalar(usize, u64),
    Lane(usize, usize, u64),
    Mem(u64, Vec<u8>),
    Tile(u64, Vec<u8>),
    Instructions(u64),
    /// kind, pc, lane, ea, space, access
    Trap(String, u64, u32, u64, String, String),
}

fn num(s: &str) -> u64 {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    }
    .unwrap_or_else(|_| panic!("bad number {s:?} in expectation"))
}

fn hexbytes(s: &str) -> Vec<u8> {
    assert!(s.len() % 2 == 0, "odd hex string {s:?}");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn parse_expectations(src: &str) -> Vec<Expect> {
    let mut out = Vec::new();
    for line in src.lines() {
        let Some(rest) = line.trim().strip_prefix("; expect ") else {
            continue;
        };
        let w: Vec<&str> = rest.split_whitespace().collect();
        let e = match w.as_slice() {
            ["status", s] => Expect::Status(s.to_string()),
            ["instructions", n] => Expect::Instructions(num(n)),
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
            ] => Expect::Trap(
                kind.to_string(),
                num(pc),
                num(lane) as u32,
                num(ea),
                space.to_string(),
                access.to_string(),
            ),
            ["mem", a, h] => Expect::Mem(num(a), hexbytes(h)),
            ["tile", a, h] => Expect::Tile(num(a), hexbytes(h)),
            [reg, v] if reg.starts_with('s') => Expect::Scalar(reg[1..].parse().unwrap(), num(v)),
            [reg, v] if reg.starts_with('v') => {
                let (r, lane) = reg[1..].trim_end_matches(']').split_once('[').unwrap();
                Expect::Lane(r.parse().unwrap(), lane.parse().unwrap(), num(v))
            }
            _ => panic!("unrecognised expectation: {line}"),
        };
        out.push(e);
    }
    out
}

fn kernels() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../seeds/kernels");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("seeds/kernels exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "s"))
        .collect();
    v.sort();
    v
}

fn run(program: &Program) -> (Machine, Exit) {
    let mut m = Machine::new(program, Config::for_program(program, None)).unwrap();
    let d = Decoded::new(&program.code);
    let exit = interp::run(&mut m, &d);
    (m, exit)
}

#[test]
fn example_kernels_meet_their_expectations() {
    let files = kernels();
    assert!(
        files.len() >= 8,
        "expected at least 8 example kernels, found {}",
        files.len()
    );
    for path in files {
        let name = path.display().to_string();
        let src = std::fs::read_to_string(&path).unwrap();
        let program = assemble(&src, &name).unwrap_or_else(|e| panic!("{e}"));
        let expects = parse_expectations(&src);
        assert!(expects.len() >= 2, "{name}: needs expectations");
        let (m, exit) = run(&program);
        for e in &expects {
            match e {
                Expect::Status(s) => {
                    let got = match exit {
                        Exit::Halted => "halted",
                        Exit::Trapped(_) => "trapped",
                        Exit::Limit => "limit",
                    };
                    assert_eq!(got, s, "{name}: status ({exit:?})");
                }
                Expect::Trap(kind, pc, lane, ea, space, access) => {
                    let Exit::Trapped(t) = exit else {
                        panic!("{name}: expected a trap, got {exit:?}")
                    };
                    let f = t
                        .mem
                        .unwrap_or_else(|| panic!("{name}: not a memory trap: {t:?}"));
                    assert_eq!(t.kind.name(), kind, "{name}: trap kind");
                    assert_eq!(
                        (t.pc, f.lane, f.ea),
                        (*pc, *lane, *ea),
                        "{name}: trap pc/lane/ea"
                    );
                    let sp = match f.space {
                        lanejit_interp::program::Space::Memory => "memory",
                        lanejit_interp::program::Space::Tile => "tile",
                    };
                    assert_eq!(
                        (sp, f.access.name()),
                        (space.as_str(), access.as_str()),
                        "{name}"
                    );
                }
                Expect::Instructions(n) => assert_eq!(m.retired, *n, "{name}: retired"),
                Expect::Scalar(r, v) => {
                    assert_eq!(m.regs.s[*r], *v, "{name}: s{r} = {:#x}", m.regs.s[*r])
                }
                Expect::Lane(r, l, v) => assert_eq!(m.regs.v[*r][*l], *v, "{name}: v{r}[{l}]"),
                Expect::Mem(a, bytes) => {
                    let got = m.mem.bytes(*a, bytes.len() as u64).expect("mapped");
                    assert_eq!(got, &bytes[..], "{name}: memory at {a:#x}");
                }
                Expect::Tile(a, bytes) => {
                    let got = m.tile.bytes(*a, bytes.len() as u64).expect("inside tile");
                    assert_eq!(got, &bytes[..], "{name}: tile at {a:#x}");
                }
            }
        }
    }
}
