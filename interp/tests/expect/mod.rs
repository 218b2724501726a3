//! The `; expect ...` lines of example kernels (`seeds/kernels/`), computed independently of
//! lanejit: parsed here for the interpreter's kernel test and the root crate's launch test.

#![allow(dead_code)]

/// One `; expect` line.
#[derive(Debug)]
pub enum Expect {
    Status(String),
    Scalar(usize, u64),
    Lane(usize, usize, u64),
    Mem(u64, Vec<u8>),
    Tile(u64, Vec<u8>),
    Instructions(u64),
    /// kind, pc, lane, ea, space, access
    Trap(String, u64, u32, u64, String, String),
    /// The reported group of a launch.
    Group(u32),
    /// Groups halted, trapped, at the limit.
    Groups(u64, u64, u64),
    /// A `data_race` trap's earlier access: group, pc, access.
    Other(u32, u64, String),
}

pub fn num(s: &str) -> u64 {
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

pub fn parse_expectations(src: &str) -> Vec<Expect> {
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
            ["group", g] => Expect::Group(num(g) as u32),
            ["groups", h, t, l] => Expect::Groups(num(h), num(t), num(l)),
            ["other", "group", g, "pc", pc, "access", a] => {
                Expect::Other(num(g) as u32, num(pc), a.to_string())
            }
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

/// The words of the kernel's `; flags ...` lines: the `lanejit run` flags its expectations
/// were computed under (`--check-races`, `--max-instructions N`).
pub fn parse_flags(src: &str) -> Vec<String> {
    src.lines()
        .filter_map(|l| l.trim().strip_prefix("; flags "))
        .flat_map(|f| f.split_whitespace().map(str::to_string))
        .collect()
}
