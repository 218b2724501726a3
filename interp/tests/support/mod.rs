//! Test support: builds `Program`s from `Inst` values (no assembler needed) plus a memory
//! map, tile configuration and initial data, and runs them on the reference interpreter.
#![allow(dead_code)]

use lanejit_interp::interp::{self, Decoded};
use lanejit_interp::isa::*;
use lanejit_interp::machine::{Config, Exit, Machine};
use lanejit_interp::program::{DataSeg, MemPerm, MemRange, Program, Space, TilePerm, TileRange};

/// Build an instruction from its opcode and operand struct (through the real encoder and
/// decoder, so the operands are checked like a real program's).
pub fn mk<F: Format>(op: Opcode, f: F) -> Inst {
    let (bits, second) = f.encode_fields();
    let words = [bits | op as u64, second.unwrap_or(0)];
    let inst = Inst::decode(&words).expect("test instruction must decode");
    assert_eq!(inst.opcode(), op);
    inst
}

pub fn s(n: u8) -> Reg {
    Reg::S(n)
}
pub fn v(n: u8) -> Reg {
    Reg::V(n)
}
pub const LC0: Reg = Reg::Lc0;

pub fn load_rr(op: Opcode, dst: u8, base: Reg, off: Reg, shamt: u8, local: bool) -> Inst {
    mk(
        op,
        LoadRR {
            dst: VReg(dst),
            base,
            off,
            shamt,
            local,
        },
    )
}
pub fn load_imm(op: Opcode, dst: u8, base: Reg, imm: i32, local: bool) -> Inst {
    mk(
        op,
        LoadImm {
            dst: VReg(dst),
            base,
            imm,
            local,
        },
    )
}
pub fn load_c(op: Opcode, dst: u8, base: u8, off: SOrImm, local: bool) -> Inst {
    mk(
        op,
        LoadC {
            dst: VReg(dst),
            base: SReg(base),
            off,
            local,
        },
    )
}
pub fn store_rr(op: Opcode, src: Reg, base: Reg, off: Reg, shamt: u8, local: bool) -> Inst {
    mk(
        op,
        StoreRR {
            src,
            base,
            off,
            shamt,
            local,
        },
    )
}
pub fn store_imm(op: Opcode, src: Reg, base: Reg, imm: i32, local: bool) -> Inst {
    mk(
        op,
        StoreImm {
            src,
            base,
            imm,
            local,
        },
    )
}
pub fn store_c(op: Opcode, src: Reg, base: u8, off: SOrImm, local: bool) -> Inst {
    mk(
        op,
        StoreC {
            src,
            base: SReg(base),
            off,
            local,
        },
    )
}
pub fn li(sd: u8, imm: u64) -> Inst {
    mk(Opcode::SLi, SLi { sd: SReg(sd), imm })
}
pub fn salu(op: Opcode, sd: u8, sa: u8, sb: SOrImm) -> Inst {
    mk(
        op,
        SAlu {
            sd: SReg(sd),
            sa: SReg(sa),
            sb,
        },
    )
}
pub fn smov(sd: u8, sa: u8) -> Inst {
    mk(
        Opcode::SMov,
        SMov {
            sd: SReg(sd),
            sa: SReg(sa),
        },
    )
}
pub fn sunary(op: Opcode, sd: u8) -> Inst {
    mk(op, SUnary { sd: SReg(sd) })
}
pub fn getlane(sd: u8, va: u8, lane: u8) -> Inst {
    mk(
        Opcode::SGetlane,
        SGetLane {
            sd: SReg(sd),
            va: VReg(va),
            lane,
        },
    )
}
pub fn valu(op: Opcode, vd: u8, va: u8, vb: VSrc) -> Inst {
    mk(
        op,
        VAlu {
            vd: VReg(vd),
            va: VReg(va),
            vb,
        },
    )
}
pub fn vmov(vd: u8, src: VSrc) -> Inst {
    mk(Opcode::VMov, VMov { vd: VReg(vd), src })
}
pub fn vunary(op: Opcode, vd: u8) -> Inst {
    mk(op, VUnary { vd: VReg(vd) })
}
pub fn vfp(op: Opcode, vd: u8, va: u8, vb: VSrc) -> Inst {
    mk(
        op,
        VFp {
            vd: VReg(vd),
            va: VReg(va),
            vb,
        },
    )
}
pub fn redsum(sd: u8, va: u8) -> Inst {
    mk(
        Opcode::VRedsum,
        VRedSum {
            sd: SReg(sd),
            va: VReg(va),
        },
    )
}
pub fn setmask(sa: u8) -> Inst {
    mk(Opcode::VSetmask, VSetMask { sa: SReg(sa) })
}
pub fn j(target: u32) -> Inst {
    mk(
        Opcode::J,
        Jump {
            target: Target(target),
        },
    )
}
pub fn branch(op: Opcode, sa: u8, sb: SOrImm, target: u32) -> Inst {
    mk(
        op,
        Branch {
            sa: SReg(sa),
            sb,
            target: Target(target),
        },
    )
}
pub fn halt() -> Inst {
    mk(Opcode::Halt, Nullary)
}
pub fn nop() -> Inst {
    mk(Opcode::Nop, Nullary)
}
pub fn vreg(n: u8) -> VSrc {
    VSrc::V(VReg(n))
}
pub fn sreg(n: u8) -> VSrc {
    VSrc::S(SReg(n))
}
pub fn imm(i: i32) -> SOrImm {
    SOrImm::Imm(i)
}
pub fn sr(n: u8) -> SOrImm {
    SOrImm::Reg(SReg(n))
}

/// A code sequence with instruction indices (pc / 8) tracked across two-word `S.LI`s.
#[derive(Default)]
pub struct Code {
    insts: Vec<Inst>,
    words: u32,
}

impl Code {
    pub fn new() -> Code {
        Code::default()
    }
    /// Append; returns the instruction's index (pc / 8).
    pub fn push(&mut self, i: Inst) -> u32 {
        let at = self.words;
        self.words += i.opcode().words() as u32;
        self.insts.push(i);
        at
    }
    pub fn extend(&mut self, is: &[Inst]) {
        for i in is {
            self.push(*i);
        }
    }
    /// Index of the next instruction.
    pub fn here(&self) -> u32 {
        self.words
    }
    /// `LOOP s{sa}; body; ENDLOOP` with both targets filled in; returns (LOOP index,
    /// ENDLOOP index).
    pub fn hw_loop(&mut self, sa: u8, body: impl FnOnce(&mut Code)) -> (u32, u32) {
        let slot = self.insts.len();
        let at = self.push(mk(
            Opcode::Loop,
            Loop {
                sa: SReg(sa),
                exit: Target(0),
            },
        ));
        let body_at = self.here();
        body(self);
        let end = self.push(mk(
            Opcode::Endloop,
            EndLoop {
                body: Target(body_at),
            },
        ));
        self.insts[slot] = mk(
            Opcode::Loop,
            Loop {
                sa: SReg(sa),
                exit: Target(self.here()),
            },
        );
        (at, end)
    }
    pub fn words(&self) -> Vec<u64> {
        self.insts.iter().flat_map(words_of).collect()
    }
}

/// Encode a straight sequence.
pub fn code(insts: &[Inst]) -> Vec<u64> {
    insts.iter().flat_map(words_of).collect()
}

/// A program plus a run configuration.
#[derive(Clone)]
pub struct Setup {
    pub prog: Program,
    pub cfg: Config,
}

impl Setup {
    pub fn new(words: Vec<u64>) -> Setup {
        Setup {
            prog: Program {
                code: words,
                ..Program::default()
            },
            cfg: Config::default(),
        }
    }
    pub fn insts(insts: &[Inst]) -> Setup {
        Setup::new(code(insts))
    }
    pub fn vl(mut self, vl: u32) -> Setup {
        self.cfg.vl = vl;
        self
    }
    pub fn strict(mut self) -> Setup {
        self.cfg.strict_align = true;
        self
    }
    pub fn limit(mut self, n: u64) -> Setup {
        self.cfg.max_instructions = Some(n);
        self
    }
    /// Map `[start, start + len)` (page multiples).
    pub fn map(mut self, start: u64, len: u64, perm: MemPerm) -> Setup {
        self.prog.mem_map.push(MemRange { start, len, perm });
        self
    }
    pub fn data(mut self, addr: u64, bytes: &[u8]) -> Setup {
        self.prog.data.push(DataSeg {
            space: Space::Memory,
            addr,
            bytes: bytes.to_vec(),
        });
        self
    }
    pub fn tile_size(mut self, n: u64) -> Setup {
        self.prog.tile_size = n;
        self
    }
    pub fn tile_protect(mut self, start: u64, len: u64, perm: TilePerm) -> Setup {
        self.prog.tile_protect.push(TileRange { start, len, perm });
        self
    }
    pub fn tile_data(mut self, addr: u64, bytes: &[u8]) -> Setup {
        self.prog.data.push(DataSeg {
            space: Space::Tile,
            addr,
            bytes: bytes.to_vec(),
        });
        self
    }
    pub fn machine(&self) -> Machine {
        Machine::new(&self.prog, self.cfg).expect("machine")
    }
    pub fn decoded(&self) -> Decoded {
        Decoded::new(&self.prog.code)
    }
    /// Run to the end on the test crate's engine (`crate::run_setup`: the interpreter here;
    /// every engine, compared, in the root crate's engine harness).
    pub fn run(&self) -> (Machine, Exit) {
        self.run_with(|_| {})
    }
    /// Run with a prepared machine hook (set registers before running). The hook may be
    /// called once per engine.
    pub fn run_with(&self, prep: impl Fn(&mut Machine)) -> (Machine, Exit) {
        crate::run_setup(&self.prog, self.cfg, &prep)
    }
}

/// The reference run: build the machine, apply `prep`, interpret to the end.
pub fn run_interp(prog: &Program, cfg: Config, prep: &dyn Fn(&mut Machine)) -> (Machine, Exit) {
    let mut m = Machine::new(prog, cfg).expect("machine");
    prep(&mut m);
    let e = interp::run(&mut m, &Decoded::new(&prog.code));
    (m, e)
}

/// Bytes of little-endian u64s.
pub fn le64(xs: &[u64]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}
/// Bytes of little-endian u32s.
pub fn le32(xs: &[u32]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}
/// Bytes of little-endian u16s.
pub fn le16(xs: &[u16]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Memory bytes `[addr, addr + len)`.
pub fn mem(m: &Machine, addr: u64, len: u64) -> Vec<u8> {
    m.mem.bytes(addr, len).expect("mapped").to_vec()
}
/// Tile bytes `[addr, addr + len)`.
pub fn tile(m: &Machine, addr: u64, len: u64) -> Vec<u8> {
    m.tile.bytes(addr, len).expect("inside tile").to_vec()
}

/// The words of one instruction.
pub fn words_of(i: &Inst) -> Vec<u64> {
    let e = i.encode();
    std::iter::once(e.first).chain(e.second).collect()
}
