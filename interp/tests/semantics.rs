//! Semantics of every instruction on the reference interpreter (contract sections 1-5).

mod support;

use lanejit_interp::interp;
use lanejit_interp::isa::Opcode::*;
use lanejit_interp::machine::Exit;
use lanejit_interp::program::MemPerm;
use support::*;

#[test]
fn smoke_copy_loop() {
    let mut c = Code::new();
    c.push(li(1, 0x1000));
    c.push(li(2, 0x2000));
    c.push(li(3, 40));
    c.hw_loop(3, |c| {
        c.push(load_c(VLwC, 1, 1, imm(0), false));
        c.push(store_c(VSwC, v(1), 2, imm(0), false));
    });
    c.push(halt());
    let data: Vec<u32> = (0..40).map(|i| 0x8000_0000 | i).collect();
    let st = Setup::new(c.words())
        .vl(16)
        .map(0x1000, 0x2000, MemPerm::Rw)
        .data(0x1000, &le32(&data));
    let (m, e) = st.run();
    assert_eq!(e, Exit::Halted);
    assert_eq!(mem(&m, 0x2000, 160), le32(&data));
    // 3 S.LI + LOOP + 3 * (2 + ENDLOOP) + HALT
    assert_eq!(m.retired, 3 + 1 + 9 + 1);
    assert_eq!(m.regs.lc0base, 48);
    assert_eq!(m.regs.mask, 0xffff);
    // last group: lanes 0..8 active (lc0 32..40); sign-extended words
    assert_eq!(m.regs.v[1][0], 0xffff_ffff_8000_0020);
    let _ = interp::step;
}
