//! Every example kernel in `seeds/kernels/` runs on the reference interpreter and meets the
//! expectations written in its header (`; expect ...` lines, computed independently of
//! lanejit). The root crate's engine harness runs the same kernels on every engine.

use lanejit_interp::asm::assemble;
use lanejit_interp::interp::{self, Decoded};
use lanejit_interp::machine::{Config, Exit, Machine};
use lanejit_interp::program::Program;
use std::path::{Path, PathBuf};

mod expect;
use expect::{Expect, parse_expectations};

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
                Expect::Group(_) | Expect::Groups(..) | Expect::Other(..) => {
                    panic!("{name}: a launch expectation in a single-group kernel")
                }
            }
        }
    }
}
