//! cargo-fuzz target `roundtrip`: any instruction that decodes re-encodes to the same words,
//! and its disassembly assembles back to them.
#![no_main]

use lanejit_interp::isa::Inst;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|words: [u64; 2]| {
    let Ok(inst) = Inst::decode(&words) else { return };
    let enc = inst.encode();
    assert_eq!(enc.first, words[0]);
    if let Some(second) = enc.second {
        assert_eq!(second, words[1]);
    }
    if matches!(inst, Inst::Loop(_) | Inst::Endloop(_)) {
        return; // their targets come from pairing, checked in whole programs
    }
    let src = format!("{inst}\n");
    let program = lanejit_interp::asm::assemble(&src, "roundtrip.s")
        .unwrap_or_else(|e| panic!("disassembly does not assemble:\n{e}"));
    let expect: Vec<u64> = enc.words().collect();
    assert_eq!(program.code, expect, "{src}");
});
