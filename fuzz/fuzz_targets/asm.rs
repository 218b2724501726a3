//! cargo-fuzz target `asm`: arbitrary text never panics the assembler, and whatever it accepts
//! disassembles to text that assembles to the same program.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|src: &str| {
    if let Ok(p) = lanejit_interp::asm::assemble(src, "fuzz.s") {
        let text = lanejit_interp::disasm::disassemble(&p);
        let again = lanejit_interp::asm::assemble(&text, "disasm.s")
            .unwrap_or_else(|e| panic!("disassembly does not assemble:\n{e}\n{text}"));
        assert_eq!(again, p);
    }
});
