//! Throwaway: compile the copy loop region and print timing.
use lanejit_interp::isa::*;
use lanejit_interp::machine::{Config, Machine};
use lanejit_interp::program::{MemPerm, MemRange, Program};
fn main() {
    let ins = [
        Inst::Loop(Loop {
            sa: SReg(3),
            exit: Target(4),
        }),
        Inst::VLwC(LoadC {
            dst: VReg(1),
            base: SReg(1),
            off: SOrImm::Imm(0),
            local: false,
        }),
        Inst::VSwC(StoreC {
            src: Reg::V(1),
            base: SReg(2),
            off: SOrImm::Imm(0),
            local: false,
        }),
        Inst::Endloop(EndLoop { body: Target(1) }),
        Inst::Halt(Nullary),
    ];
    let code: Vec<u64> = ins
        .iter()
        .flat_map(|i| i.encode().words().collect::<Vec<_>>())
        .collect();
    let p = Program {
        code: code.clone(),
        mem_map: vec![MemRange {
            start: 0x10000,
            len: 0x1000,
            perm: MemPerm::Rw,
        }],
        ..Program::default()
    };
    let vl: u32 = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(32);
    let m = Machine::new(
        &p,
        Config {
            vl,
            ..Config::default()
        },
    )
    .unwrap();
    let mut jit = lanejit_jit::Jit::new(&code, &m).unwrap();
    let t = std::time::Instant::now();
    jit.compile(0).unwrap();
    jit.compile(8).unwrap();
    jit.compile(16).unwrap();
    jit.compile(24).unwrap();
    println!(
        "compile {:?} {:?}",
        t.elapsed(),
        jit.stats().compile_times_us
    );
}
