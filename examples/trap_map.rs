//! A trap handler that maps memory on demand: the program sums 16 KiB at an address where
//! nothing is mapped; every page fault maps the page, fills it and resumes the faulting load.
//!
//! `cargo run --example trap_map`

use lanejit::embed::{Builder, EmbedError, Engine, MemPerm, PAGE_SIZE, TrapAction, TrapKind};

/// The sum of 4096 words from 0x40000 in `s3`.
const SRC: &str = "
        .text
        S.LI    s1, 0x40000
        S.LI    s2, 4096
        LOOP    s2
        V.LW    [s1, lc0<<2, 0], ->v1
        V.ADD   v2, v2, v1
        ENDLOOP
        V.REDSUM s3, v2
        HALT
";

/// Run the program on every engine with the demand-paging handler.
pub fn main() -> Result<(), EmbedError> {
    let mut results = Vec::new();
    for engine in [Engine::Interp, Engine::Jit, Engine::Tiered] {
        let mut faults = 0;
        let mut vm = Builder::assemble(SRC, "demand.s")?.engine(engine).build()?;
        vm.on_trap(|trap, guest| {
            let Some(mem) = trap.mem.filter(|_| trap.kind == TrapKind::PageFault) else {
                return TrapAction::Stop;
            };
            faults += 1;
            let page = mem.ea & !(PAGE_SIZE - 1);
            // Every word of page k holds k + 1.
            let k = (page - 0x40000) / PAGE_SIZE;
            let words: Vec<u8> = (0..PAGE_SIZE / 4)
                .flat_map(|_| (k as u32 + 1).to_le_bytes())
                .collect();
            match guest.map(page, PAGE_SIZE, MemPerm::R) {
                Ok(()) if guest.write(page, &words).is_ok() => TrapAction::Resume,
                _ => TrapAction::Stop,
            }
        });
        let out = vm.run();
        drop(vm);
        println!(
            "{:<6} {} after {faults} page faults: s3 = {}",
            engine.name(),
            out.result.status.name(),
            out.result.scalars[3],
        );
        assert_eq!(faults, 4);
        results.push(out.result);
    }
    // 1024 words of each of 1, 2, 3, 4.
    assert_eq!(results[0].scalars[3], 1024 * 10);
    assert!(results.windows(2).all(|w| w[0] == w[1]), "engines disagree");
    Ok(())
}
