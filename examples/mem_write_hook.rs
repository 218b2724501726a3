//! A memory-write hook: record every store a copy loop makes. The hook sees every store on
//! any engine (while it is installed the run is interpreted: compiled code would skip it).
//!
//! `cargo run --example mem_write_hook`

use lanejit::embed::{Builder, EmbedError, Engine, Flow};

/// Copy 100 words from 0x10000 to 0x20000.
const SRC: &str = "
        .mem    0x10000, 0x1000, rw
        .mem    0x20000, 0x1000, rw
        .text
        S.LI    s1, 0x10000
        S.LI    s2, 0x20000
        S.LI    s3, 100
        LOOP    s3
        V.LW    [s1, lc0<<2, 0], ->v1
        V.SW    v1, [s2, lc0<<2, 0]
        ENDLOOP
        HALT
";

/// Run the copy with a write hook and check it saw every word written.
pub fn main() -> Result<(), EmbedError> {
    let mut stores = Vec::new();
    let mut vm = Builder::assemble(SRC, "copy.s")?
        .engine(Engine::Jit)
        .vl(8)
        .build()?;
    let words: Vec<u8> = (0..100u32).flat_map(|i| (i * i).to_le_bytes()).collect();
    vm.guest().write(0x10000, &words)?;
    vm.on_mem_write(|ev| {
        for lane in &ev.access.lanes {
            stores.push((ev.pc, lane.ea, lane.value as u32));
        }
        Flow::Continue
    });
    let out = vm.run();
    drop(vm);
    println!(
        "{}: {} stores seen, the first {:x?}, the last {:x?}",
        out.result.status.name(),
        stores.len(),
        stores.first(),
        stores.last()
    );
    assert_eq!(stores.len(), 100);
    for (i, &(_, ea, value)) in stores.iter().enumerate() {
        assert_eq!((ea, value), (0x20000 + 4 * i as u64, (i * i) as u32));
    }
    Ok(())
}
