//! Assemble a kernel and run it on each engine: the interpreter, the JIT and the tiered VM
//! give the same result bit for bit.
//!
//! `cargo run --example engines`

use lanejit::embed::{Builder, EmbedError, Engine};

/// `ys[i] = 2 * xs[i]` for 1000 words, and `s4` = the sum of the `ys`.
const SRC: &str = "
        .equ    N, 1000
        .mem    0x10000, 0x1000, rw         ; xs
        .mem    0x20000, 0x1000, rw         ; ys
        .text
        S.LI    s1, 0x10000
        S.LI    s2, 0x20000
        S.LI    s3, N
        LOOP    s3
        V.LW    [s1, lc0<<2, 0], ->v1
        V.ADD   v2, v1, v1
        V.ADD   v3, v3, v2
        V.SW    v2, [s2, lc0<<2, 0]
        ENDLOOP
        V.REDSUM s4, v3
        HALT
";

/// Run the kernel on every engine and check they agree.
pub fn main() -> Result<(), EmbedError> {
    let xs: Vec<u8> = (0..1000u32).flat_map(|i| i.to_le_bytes()).collect();
    let mut results = Vec::new();
    for engine in [Engine::Interp, Engine::Jit, Engine::Tiered] {
        let mut vm = Builder::assemble(SRC, "double.s")?
            .engine(engine)
            .vl(16)
            .build()?;
        vm.guest().write(0x10000, &xs)?;
        let out = vm.run();
        let ys = vm.guest().read(0x20000, 4000)?.to_vec();
        println!(
            "{:<6} {}: s4 = {}, {} instructions ({} compiled)",
            engine.name(),
            out.result.status.name(),
            out.result.scalars[4],
            out.result.instructions,
            out.stats.jit_retired,
        );
        results.push((out.result, ys));
    }
    assert_eq!(results[0].0.scalars[4], 999 * 1000);
    assert!(results.windows(2).all(|w| w[0] == w[1]), "engines disagree");
    Ok(())
}
