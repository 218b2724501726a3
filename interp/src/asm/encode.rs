//! Pass 2: settle the memory map and tile protections, encode instructions, place data,
//! collect symbols.

use super::layout::{DataVals, Laid, PendInst, mnemonic_ops};
use super::parser::parse_line;
use super::parser::{Atom, COff, Expr, MemBody, OffVal, OpKind, Operand, Shift};
use super::symbols::{Ctx, Symbols};
use super::{AsmError, AsmErrorKind};
use crate::isa::*;
use crate::program::{DataSeg, MemRange, Program, Space, SymKind, Symbol, TilePerm, TileRange};
use std::collections::BTreeMap;

type EResult<T> = Result<T, (usize, AsmErrorKind)>;

/// Apply `[start, end)` ranges in order, later ones overriding earlier ones; returns sorted,
/// non-overlapping ranges with adjacent equal permissions coalesced. The ranges applied so far
/// are kept in a map by start: each new range splits at most the one it starts in and removes
/// the ones it covers, so every range is inserted and removed at most once (O(n log n)).
pub(crate) fn settle<P: Copy + Eq>(ranges: &[(u64, u64, P)]) -> Vec<(u64, u64, P)> {
    let mut map: BTreeMap<u64, (u64, P)> = BTreeMap::new();
    for &(s, e, p) in ranges {
        if s >= e {
            continue;
        }
        // The range that starts before `s` and reaches into `[s, e)`: keep what lies outside.
        if let Some((&a, &(b, q))) = map.range(..s).next_back()
            && b > s
        {
            map.insert(a, (s, q));
            if b > e {
                map.insert(e, (b, q));
            }
        }
        // The ranges that start inside `[s, e)`: keep what lies past `e`.
        while let Some((&a, &(b, q))) = map.range(s..e).next() {
            map.remove(&a);
            if b > e {
                map.insert(e, (b, q));
            }
        }
        map.insert(s, (e, p));
    }
    coalesce(map.into_iter().map(|(s, (e, p))| (s, e, p)).collect())
}

fn coalesce<P: Copy + Eq>(v: Vec<(u64, u64, P)>) -> Vec<(u64, u64, P)> {
    let mut out: Vec<(u64, u64, P)> = Vec::with_capacity(v.len());
    for r in v {
        match out.last_mut() {
            Some(last) if last.1 == r.0 && last.2 == r.2 => last.1 = r.1,
            _ => out.push(r),
        }
    }
    out
}

/// Pass 2: the program, with its line table.
pub(crate) fn resolve(laid: Laid, lines: &[&str], errors: &mut Vec<AsmError>) -> Program {
    let mem_map: Vec<MemRange> = settle(&laid.mems)
        .into_iter()
        .map(|(s, e, perm)| MemRange {
            start: s,
            len: e - s,
            perm,
        })
        .collect();
    let tile_protect: Vec<TileRange> = coalesce(
        settle(&laid.tprot)
            .into_iter()
            .filter(|r| r.2 != TilePerm::Rw)
            .collect(),
    )
    .into_iter()
    .map(|(s, e, perm)| TileRange {
        start: s,
        len: e - s,
        perm,
    })
    .collect();
    let mut program = Program {
        code: laid.code,
        vl: laid.vl,
        groups: laid.groups,
        tile_size: laid.tile_size,
        mem_map,
        tile_protect,
        data: Vec::new(),
        symbols: Vec::new(),
        lines: laid.lines.finish(),
    };
    let syms = &laid.syms;

    // Every .equ must evaluate, used or not.
    let mut equs: Vec<(&String, &super::symbols::Equ)> = syms.equs.iter().collect();
    equs.sort_by_key(|(_, e)| e.line);
    for (name, equ) in equs {
        if let Err((col, kind)) = syms.check_equ(name, equ.expr.col) {
            errors.push(AsmError::new(equ.line, col, kind));
        }
    }
    for (index, e, line) in &laid.raw {
        match eval_range(syms, e, "a 64-bit word", -(1 << 63), u64::MAX as i128) {
            Ok(v) => {
                if let Some(slot) = program.code.get_mut(*index as usize) {
                    *slot = v as u64;
                }
            }
            Err((col, kind)) => errors.push(AsmError::new(*line, col, kind)),
        }
    }
    for d in &laid.insts {
        if d.broken {
            continue;
        }
        // Parse the line again (layout parsed it without errors).
        let chars: Vec<char> = lines
            .get(d.line.wrapping_sub(1))
            .map_or_else(Vec::new, |l| l.chars().collect());
        let Some(stmt) = parse_line(&chars).0.stmt else {
            continue;
        };
        let (ops, local) = mnemonic_ops(&stmt.name);
        if ops.is_empty() {
            continue;
        }
        let pi = PendInst {
            line: d.line,
            stmt,
            ops,
            local,
            index: d.index,
            pair: d.pair,
        };
        match build(syms, &pi, Ctx::Full) {
            Ok(inst) => place(&mut program.code, pi.index, &inst),
            Err((col, kind)) => errors.push(AsmError::new(pi.line, col, kind)),
        }
    }

    // Data: evaluate, check against the settled map, later bytes win.
    let mut segs: BTreeMap<(Space, u64), Vec<u8>> = BTreeMap::new();
    for d in &laid.data {
        let bytes = match data_bytes(syms, &d.vals) {
            Ok(b) => b,
            Err((col, kind)) => {
                errors.push(AsmError::new(d.line, col, kind));
                continue;
            }
        };
        let end = d.addr as u128 + d.len as u128;
        let ok = match d.space {
            Space::Memory => program.range_mapped(d.addr, d.len),
            Space::Tile => end <= program.tile_size as u128,
        };
        if !ok {
            let kind = match d.space {
                Space::Memory => AsmErrorKind::DataUnmapped { addr: d.addr, end },
                Space::Tile => AsmErrorKind::DataOutsideTile {
                    addr: d.addr,
                    end,
                    size: program.tile_size,
                },
            };
            errors.push(AsmError::new(d.line, d.col, kind));
            continue;
        }
        insert_seg(&mut segs, d.space, d.addr, bytes);
    }
    let mut data: Vec<DataSeg> = Vec::new();
    for ((space, addr), bytes) in segs {
        match data.last_mut() {
            Some(last) if last.space == space && last.addr + last.bytes.len() as u64 == addr => {
                last.bytes.extend_from_slice(&bytes)
            }
            _ => data.push(DataSeg { space, addr, bytes }),
        }
    }
    program.data = data;

    let mut symbols: Vec<Symbol> = syms
        .labels
        .iter()
        .map(|(name, &(kind, value, _))| Symbol {
            name: name.clone(),
            kind,
            value,
        })
        .collect();
    symbols.sort_by(|a, b| (a.kind, a.value, &a.name).cmp(&(b.kind, b.value, &b.name)));
    program.symbols = symbols;
    program
}

/// Insert `bytes` at `addr`, overwriting what overlaps (the map stays non-overlapping).
fn insert_seg(segs: &mut BTreeMap<(Space, u64), Vec<u8>>, space: Space, addr: u64, bytes: Vec<u8>) {
    let end = addr + bytes.len() as u64;
    let mut hit = Vec::new();
    for (&(sp, a), b) in segs.range((space, 0)..(space, end)).rev() {
        debug_assert_eq!(sp, space);
        if a + b.len() as u64 <= addr {
            break;
        }
        hit.push(a);
    }
    for a in hit {
        let old = segs.remove(&(space, a)).expect("present");
        let old_end = a + old.len() as u64;
        if a < addr {
            segs.insert((space, a), old[..(addr - a) as usize].to_vec());
        }
        if old_end > end {
            segs.insert((space, end), old[(end - a) as usize..].to_vec());
        }
    }
    segs.insert((space, addr), bytes);
}

fn range_err(value: i128, what: &'static str, min: i128, max: i128) -> AsmErrorKind {
    AsmErrorKind::ImmRange {
        value,
        what,
        min,
        max,
    }
}

fn eval_range(syms: &Symbols, e: &Expr, what: &'static str, min: i128, max: i128) -> EResult<i128> {
    let v = syms.eval(e, Ctx::Full)?;
    if v < min || v > max {
        return Err((e.col, range_err(v, what, min, max)));
    }
    Ok(v)
}

fn int_range(size: u8) -> (i128, i128, &'static str) {
    let bits = size as u32 * 8;
    let what = match size {
        1 => ".byte",
        2 => ".half",
        4 => ".word",
        _ => ".dword",
    };
    (-(1i128 << (bits - 1)), (1i128 << bits) - 1, what)
}

fn data_bytes(syms: &Symbols, vals: &DataVals) -> EResult<Vec<u8>> {
    match vals {
        DataVals::Bytes(b) => Ok(b.clone()),
        DataVals::Ints(size, exprs) => {
            let (min, max, what) = int_range(*size);
            let mut out = Vec::with_capacity(exprs.len() * *size as usize);
            for e in exprs {
                let v = eval_range(syms, e, what, min, max)?;
                out.extend_from_slice(&(v as u64).to_le_bytes()[..*size as usize]);
            }
            Ok(out)
        }
        DataVals::Fill(count, size, e) => {
            let (min, max, _) = int_range(*size);
            let v = eval_range(syms, e, ".fill value", min, max)?;
            let one = &(v as u64).to_le_bytes()[..*size as usize];
            Ok(one.repeat(*count as usize))
        }
    }
}

/// The opcode with these memory semantics.
fn find(dir: Dir, log2e: u8, ext: Ext, mode: Mode) -> Option<Opcode> {
    let want = MemSem {
        dir,
        log2e,
        ext,
        mode,
    };
    Opcode::ALL.iter().copied().find(|o| o.mem() == Some(want))
}

fn mn(op: Opcode, local: bool) -> String {
    format!("{}{}", op.mnemonic(), if local { ".local" } else { "" })
}

/// The canonical operand syntax of an opcode, with the mnemonic.
pub(crate) fn usage(op: Opcode, local: bool) -> String {
    let name = mn(op, local);
    let k = op.mem().map_or(0, |m| m.log2e);
    let scaled = matches!(op.mem().map(|m| m.mode), Some(Mode::Imm { scaled: true }));
    let lc = if k == 0 {
        "lc0".to_string()
    } else {
        format!("lc0<<{k}")
    };
    let imm = if scaled && k > 0 {
        format!("[sL + (imm << {k})]")
    } else {
        "[sL + imm]".to_string()
    };
    let ops = match op.format() {
        FormatKind::LoadRR => "[sL + (sR << shamt)], ->vD".to_string(),
        FormatKind::LoadImm => format!("{imm}, ->vD"),
        FormatKind::LoadC => format!("[sB, {lc}, offset], ->vD"),
        FormatKind::StoreRR => {
            if matches!(
                op.mem().map(|m| m.mode),
                Some(Mode::RegOff { add_width: true })
            ) && k > 0
            {
                format!("vS, [sL + (sR << ({k} + shamt))]")
            } else {
                "vS, [sL + (sR << shamt)]".to_string()
            }
        }
        FormatKind::StoreImm => format!("vS, {imm}"),
        FormatKind::StoreC => format!("vS, [sB, {lc}, offset]"),
        FormatKind::SAlu => "sd, sa, sb|imm".into(),
        FormatKind::SLi => "sd, imm64|label".into(),
        FormatKind::SMov => "sd, sa".into(),
        FormatKind::SUnary => "sd".into(),
        FormatKind::SGetLane => "sd, va, lane".into(),
        FormatKind::VAlu => "vd, va, vb|sb|imm".into(),
        FormatKind::VMov => "vd, va|sb|imm".into(),
        FormatKind::VUnary => "vd".into(),
        FormatKind::VFp => "vd, va, vb|sb".into(),
        FormatKind::VRedSum => "sd, va".into(),
        FormatKind::VSetMask => "sa".into(),
        FormatKind::Jump => "label".into(),
        FormatKind::Branch => "sa, sb|imm, label".into(),
        FormatKind::Loop => "sa".into(),
        FormatKind::EndLoop | FormatKind::Nullary => String::new(),
    };
    if ops.is_empty() {
        name
    } else {
        format!("{name} {ops}")
    }
}

struct Builder<'a> {
    syms: &'a Symbols,
    pi: &'a PendInst,
    ctx: Ctx,
}

/// Build the instruction of `pi`. With [`Ctx::Layout`] (only what is defined so far), a
/// `NotConstant` or `CircularEqu` error means "not known yet"; any other result is final,
/// the same as resolution would give.
pub(crate) fn build(syms: &Symbols, pi: &PendInst, ctx: Ctx) -> EResult<Inst> {
    Builder { syms, pi, ctx }.build()
}

/// Write `inst`'s words at word `index` of `code`.
pub(crate) fn place(code: &mut [u64], index: u64, inst: &Inst) {
    for (k, w) in inst.encode().words().enumerate() {
        if let Some(slot) = code.get_mut(index as usize + k) {
            *slot = w;
        }
    }
}

/// A resolved address operand.
enum Addr {
    RR { base: Reg, off: Reg, shamt: u8 },
    Imm { base: Reg, imm: i32 },
    C { base: SReg, off: SOrImm },
}

fn wrong(expected: &'static str, op: &Operand) -> (usize, AsmErrorKind) {
    (
        op.col,
        AsmErrorKind::WrongRegister {
            expected,
            found: op.text.clone(),
        },
    )
}

fn expected(what: &str, op: &Operand) -> (usize, AsmErrorKind) {
    (
        op.col,
        AsmErrorKind::Expected {
            expected: what.to_string(),
            found: format!("`{}`", op.text),
        },
    )
}

impl Builder<'_> {
    fn ops(&self) -> &[Operand] {
        &self.pi.stmt.ops
    }

    fn operands_err(&self, op: Opcode) -> (usize, AsmErrorKind) {
        (
            self.pi.stmt.col,
            AsmErrorKind::Operands {
                mnemonic: mn(op, self.pi.local),
                usage: usage(op, self.pi.local),
            },
        )
    }

    fn count(&self, op: Opcode, n: usize) -> EResult<()> {
        if self.ops().len() != n {
            return Err(self.operands_err(op));
        }
        Ok(())
    }

    fn eval(&self, e: &Expr) -> EResult<i128> {
        self.syms.eval(e, self.ctx)
    }

    fn sreg(&self, op: &Operand) -> EResult<SReg> {
        match op.kind {
            OpKind::Reg(Reg::S(n)) => Ok(SReg(n)),
            OpKind::Reg(Reg::Lc0) => Err((op.col, AsmErrorKind::Lc0NotAllowed)),
            OpKind::Reg(_) => Err(wrong(RegClass::S.describe(), op)),
            _ => Err(expected(RegClass::S.describe(), op)),
        }
    }

    fn vreg(&self, op: &Operand) -> EResult<VReg> {
        match op.kind {
            OpKind::Reg(Reg::V(n)) => Ok(VReg(n)),
            OpKind::Reg(Reg::Lc0) => Err((op.col, AsmErrorKind::Lc0NotAllowed)),
            OpKind::Reg(_) => Err(wrong(RegClass::V.describe(), op)),
            _ => Err(expected(RegClass::V.describe(), op)),
        }
    }

    fn imm(&self, op: &Operand, what: &'static str, min: i128, max: i128) -> EResult<i128> {
        match &op.kind {
            OpKind::Expr(e) => {
                let v = self.eval(e)?;
                if v < min || v > max {
                    return Err((op.col, range_err(v, what, min, max)));
                }
                Ok(v)
            }
            _ => Err(expected("an immediate", op)),
        }
    }

    fn s_or_imm(&self, op: &Operand, what: &'static str, min: i128, max: i128) -> EResult<SOrImm> {
        match op.kind {
            OpKind::Reg(Reg::S(n)) => Ok(SOrImm::Reg(SReg(n))),
            OpKind::Reg(Reg::Lc0) => Err((op.col, AsmErrorKind::Lc0NotAllowed)),
            OpKind::Reg(_) => Err(wrong("a scalar register (s0..s31) or an immediate", op)),
            OpKind::Expr(_) => Ok(SOrImm::Imm(self.imm(op, what, min, max)? as i32)),
            _ => Err(expected("a scalar register (s0..s31) or an immediate", op)),
        }
    }

    fn vsrc(&self, op: &Operand, allow_imm: bool) -> EResult<VSrc> {
        match op.kind {
            OpKind::Reg(Reg::V(n)) => Ok(VSrc::V(VReg(n))),
            OpKind::Reg(Reg::S(n)) => Ok(VSrc::S(SReg(n))),
            OpKind::Reg(Reg::Lc0) => Err((op.col, AsmErrorKind::Lc0NotAllowed)),
            OpKind::Expr(_) if allow_imm => {
                Ok(VSrc::Imm(
                    self.imm(op, "simm32", i32::MIN as i128, i32::MAX as i128)? as i32,
                ))
            }
            _ => Err(expected(
                if allow_imm {
                    "a vector register, a scalar register or an immediate"
                } else {
                    "a vector or scalar register (floating point takes no immediate)"
                },
                op,
            )),
        }
    }

    fn target(&self, op: &Operand) -> EResult<Target> {
        let OpKind::Expr(e) = &op.kind else {
            return Err(expected("a code label or pc", op));
        };
        for t in &e.terms {
            if let Atom::Name(n) = &t.atom
                && let Some(&(kind, _, _)) = self.syms.labels.get(n)
                && kind != SymKind::Code
            {
                return Err((t.col, AsmErrorKind::NotCodeLabel(n.clone())));
            }
        }
        let v = self.eval(e)?;
        if v < 0 || v % 8 != 0 || v / 8 > MAX_TARGET as i128 {
            return Err((op.col, AsmErrorKind::BadTarget(v)));
        }
        Ok(Target((v / 8) as u32))
    }

    fn pair(&self) -> EResult<Target> {
        let t = self.pi.pair.unwrap_or(0);
        if t > MAX_TARGET as u64 {
            return Err((self.pi.stmt.col, AsmErrorKind::AddressOverflow));
        }
        Ok(Target(t as u32))
    }

    fn build(&self) -> EResult<Inst> {
        let op = self.pi.ops[0];
        if op.mem().is_some() {
            return self.build_mem();
        }
        let o = self.ops();
        let s32 = (i32::MIN as i128, i32::MAX as i128);
        macro_rules! n {
            ($n:expr) => {
                self.count(op, $n)?
            };
        }
        let inst_ops = match op.format() {
            FormatKind::SAlu => {
                n!(3);
                Fmt::SAlu(SAlu {
                    sd: self.sreg(&o[0])?,
                    sa: self.sreg(&o[1])?,
                    sb: self.s_or_imm(&o[2], "simm32", s32.0, s32.1)?,
                })
            }
            FormatKind::SLi => {
                n!(2);
                let sd = self.sreg(&o[0])?;
                let v = self.imm(&o[1], "a 64-bit value", -(1i128 << 63), u64::MAX as i128)?;
                Fmt::SLi(SLi { sd, imm: v as u64 })
            }
            FormatKind::SMov => {
                n!(2);
                Fmt::SMov(SMov {
                    sd: self.sreg(&o[0])?,
                    sa: self.sreg(&o[1])?,
                })
            }
            FormatKind::SUnary => {
                n!(1);
                Fmt::SUnary(SUnary {
                    sd: self.sreg(&o[0])?,
                })
            }
            FormatKind::SGetLane => {
                n!(3);
                Fmt::SGetLane(SGetLane {
                    sd: self.sreg(&o[0])?,
                    va: self.vreg(&o[1])?,
                    lane: self.imm(&o[2], "a lane (0..63)", 0, 63)? as u8,
                })
            }
            FormatKind::VAlu => {
                n!(3);
                Fmt::VAlu(VAlu {
                    vd: self.vreg(&o[0])?,
                    va: self.vreg(&o[1])?,
                    vb: self.vsrc(&o[2], true)?,
                })
            }
            FormatKind::VMov => {
                n!(2);
                Fmt::VMov(VMov {
                    vd: self.vreg(&o[0])?,
                    src: self.vsrc(&o[1], true)?,
                })
            }
            FormatKind::VUnary => {
                n!(1);
                Fmt::VUnary(VUnary {
                    vd: self.vreg(&o[0])?,
                })
            }
            FormatKind::VFp => {
                n!(3);
                Fmt::VFp(VFp {
                    vd: self.vreg(&o[0])?,
                    va: self.vreg(&o[1])?,
                    vb: self.vsrc(&o[2], false)?,
                })
            }
            FormatKind::VRedSum => {
                n!(2);
                Fmt::VRedSum(VRedSum {
                    sd: self.sreg(&o[0])?,
                    va: self.vreg(&o[1])?,
                })
            }
            FormatKind::VSetMask => {
                n!(1);
                Fmt::VSetMask(VSetMask {
                    sa: self.sreg(&o[0])?,
                })
            }
            FormatKind::Jump => {
                n!(1);
                Fmt::Jump(Jump {
                    target: self.target(&o[0])?,
                })
            }
            FormatKind::Branch => {
                n!(3);
                Fmt::Branch(Branch {
                    sa: self.sreg(&o[0])?,
                    sb: self.s_or_imm(&o[1], "simm16", SIMM16_MIN as i128, SIMM16_MAX as i128)?,
                    target: self.target(&o[2])?,
                })
            }
            FormatKind::Loop => {
                n!(1);
                Fmt::Loop(Loop {
                    sa: self.sreg(&o[0])?,
                    exit: self.pair()?,
                })
            }
            FormatKind::EndLoop => {
                n!(0);
                Fmt::EndLoop(EndLoop { body: self.pair()? })
            }
            FormatKind::Nullary => {
                n!(0);
                Fmt::Nullary
            }
            _ => unreachable!("memory formats handled above"),
        };
        Ok(make(op, inst_ops))
    }

    fn build_mem(&self) -> EResult<Inst> {
        let prim = self.pi.ops[0];
        let m = prim.mem().expect("memory opcode");
        let local = self.pi.local;
        let o = self.ops();
        let name = mn(prim, local);
        let mem_at = |i: usize| match o.get(i).map(|x| &x.kind) {
            Some(OpKind::Mem(mm)) => Some(mm),
            _ => None,
        };
        // The opcode whose canonical form to show for a mis-shaped statement.
        let shown = |mm: Option<&super::parser::Mem>| match mm.map(|x| &x.body) {
            Some(MemBody::Contig { .. }) if self.pi.ops.len() > 1 => self.pi.ops[1],
            Some(MemBody::Indexed(off))
                if matches!(prim.format(), FormatKind::LoadRR | FormatKind::StoreRR)
                    && !matches!(off, Some(o) if matches!(o.val, OffVal::Reg(..))) =>
            {
                find(m.dir, m.log2e, m.ext, Mode::Imm { scaled: true }).unwrap_or(prim)
            }
            _ => prim,
        };
        match m.dir {
            Dir::Load => {
                let Some(mm) = mem_at(0) else {
                    return Err(self.operands_err(prim));
                };
                if o.len() == 1 {
                    return Err((
                        self.pi.stmt.col,
                        AsmErrorKind::MissingDest {
                            mnemonic: name,
                            usage: usage(shown(Some(mm)), local),
                        },
                    ));
                }
                if o.len() != 2 {
                    return Err(self.operands_err(shown(Some(mm))));
                }
                let OpKind::Arrow(dreg) = o[1].kind else {
                    return Err(expected("`->vD`", &o[1]));
                };
                let dst = match dreg {
                    Reg::V(n) => VReg(n),
                    _ => return Err(wrong(RegClass::V.describe(), &o[1])),
                };
                let (op, addr) = self.address(mm)?;
                Ok(match addr {
                    Addr::RR { base, off, shamt } => make(
                        op,
                        Fmt::LoadRR(LoadRR {
                            dst,
                            base,
                            off,
                            shamt,
                            local,
                        }),
                    ),
                    Addr::Imm { base, imm } => make(
                        op,
                        Fmt::LoadImm(LoadImm {
                            dst,
                            base,
                            imm,
                            local,
                        }),
                    ),
                    Addr::C { base, off } => make(
                        op,
                        Fmt::LoadC(LoadC {
                            dst,
                            base,
                            off,
                            local,
                        }),
                    ),
                })
            }
            Dir::Store => {
                if let Some(mm) = mem_at(0) {
                    let shown = usage(shown(Some(mm)), local);
                    if o.iter().any(|x| matches!(x.kind, OpKind::Arrow(_))) {
                        return Err((self.pi.stmt.col, AsmErrorKind::StoreArrow { usage: shown }));
                    }
                    return Err((
                        self.pi.stmt.col,
                        AsmErrorKind::MissingStoreData {
                            mnemonic: name,
                            usage: shown,
                        },
                    ));
                }
                let mm = mem_at(1);
                if o.iter().any(|x| matches!(x.kind, OpKind::Arrow(_))) {
                    return Err((
                        self.pi.stmt.col,
                        AsmErrorKind::StoreArrow {
                            usage: usage(shown(mm), local),
                        },
                    ));
                }
                let (Some(mm), 2) = (mm, o.len()) else {
                    return Err(self.operands_err(shown(mm)));
                };
                let src = match o[0].kind {
                    OpKind::Reg(Reg::Lc0) => return Err((o[0].col, AsmErrorKind::Lc0NotAllowed)),
                    OpKind::Reg(r) => r,
                    _ => return Err(expected(RegClass::SV.describe(), &o[0])),
                };
                let (op, addr) = self.address(mm)?;
                Ok(match addr {
                    Addr::RR { base, off, shamt } => make(
                        op,
                        Fmt::StoreRR(StoreRR {
                            src,
                            base,
                            off,
                            shamt,
                            local,
                        }),
                    ),
                    Addr::Imm { base, imm } => make(
                        op,
                        Fmt::StoreImm(StoreImm {
                            src,
                            base,
                            imm,
                            local,
                        }),
                    ),
                    Addr::C { base, off } => make(
                        op,
                        Fmt::StoreC(StoreC {
                            src,
                            base,
                            off,
                            local,
                        }),
                    ),
                })
            }
        }
    }

    fn shift_val(&self, e: &Expr) -> EResult<i128> {
        self.eval(e)
    }

    fn shift_range(&self, name: &str, v: i128, col: usize, min: u32, max: u32) -> EResult<u8> {
        if v < min as i128 || v > max as i128 {
            return Err((
                col,
                AsmErrorKind::ShiftRange {
                    mnemonic: name.to_string(),
                    value: v,
                    min,
                    max,
                },
            ));
        }
        Ok((v - min as i128) as u8)
    }

    fn address(&self, mm: &super::parser::Mem) -> EResult<(Opcode, Addr)> {
        let prim = self.pi.ops[0];
        let m = prim.mem().expect("memory opcode");
        let local = self.pi.local;
        let name = mn(prim, local);
        let k = m.log2e;
        let fmt = prim.format();
        let is_reg_form = matches!(fmt, FormatKind::LoadRR | FormatKind::StoreRR);
        let is_u_store = m.mode == (Mode::RegOff { add_width: false }) && m.dir == Dir::Store;
        let base_op = || Operand {
            kind: OpKind::Reg(mm.base),
            col: mm.base_col,
            text: mm.base_text.clone(),
        };
        match &mm.body {
            MemBody::Contig {
                mid,
                mid_text,
                mid_col,
                shift,
                off,
            } => {
                if !is_reg_form || is_u_store {
                    let canon = if is_u_store {
                        find(m.dir, k, m.ext, Mode::Contig).expect("contiguous store")
                    } else {
                        prim
                    };
                    return Err((
                        mm.base_col.saturating_sub(1).max(1),
                        AsmErrorKind::NoContigForm {
                            mnemonic: name,
                            usage: usage(canon, local),
                        },
                    ));
                }
                let cop = find(m.dir, k, m.ext, Mode::Contig).expect("contiguous form");
                let base = match mm.base {
                    Reg::S(n) => SReg(n),
                    _ => return Err(wrong(RegClass::S.describe(), &base_op())),
                };
                let lc = if k == 0 {
                    "lc0".to_string()
                } else {
                    format!("lc0<<{k}")
                };
                let bad_mid = || {
                    (
                        *mid_col,
                        AsmErrorKind::ContigShift {
                            mnemonic: name.clone(),
                            expected: lc.clone(),
                        },
                    )
                };
                if *mid != Reg::Lc0 {
                    let _ = mid_text;
                    return Err(bad_mid());
                }
                let sh = match shift {
                    None => 0,
                    Some(e) => self.shift_val(e)?,
                };
                if sh != k as i128 {
                    return Err(bad_mid());
                }
                let off = match off {
                    None => SOrImm::Imm(0),
                    Some(COff::Reg(Reg::S(n), _, _)) => SOrImm::Reg(SReg(*n)),
                    Some(COff::Reg(_, text, col)) => {
                        return Err((
                            *col,
                            AsmErrorKind::WrongRegister {
                                expected: "a scalar register (s0..s31) or an immediate offset",
                                found: text.clone(),
                            },
                        ));
                    }
                    Some(COff::Imm(e)) => SOrImm::Imm(self.simm24(e)?),
                };
                Ok((cop, Addr::C { base, off }))
            }
            MemBody::Indexed(off) => {
                let base = match mm.base {
                    Reg::Lc0 => return Err((mm.base_col, AsmErrorKind::Lc0NotAllowed)),
                    r => r,
                };
                let (neg, val, shift, col) = match off {
                    None => (false, None, None, mm.base_col),
                    Some(o) => (o.neg, Some(&o.val), o.shift.as_ref(), o.col),
                };
                match val {
                    Some(OffVal::Reg(r, text)) => {
                        if neg {
                            return Err((col, AsmErrorKind::NegativeRegOffset));
                        }
                        if !is_reg_form {
                            let rop = find(
                                m.dir,
                                k,
                                m.ext,
                                Mode::RegOff {
                                    add_width: m.dir == Dir::Store
                                        && m.mode == (Mode::Imm { scaled: true }),
                                },
                            )
                            .expect("register form");
                            return Err((
                                col,
                                AsmErrorKind::ImmFormReg {
                                    mnemonic: name,
                                    usage: usage(prim, local),
                                    rmnemonic: mn(rop, local),
                                },
                            ));
                        }
                        let add_width = m.mode == (Mode::RegOff { add_width: true });
                        let shamt = if add_width && k > 0 {
                            match shift {
                                None => {
                                    let uop =
                                        find(m.dir, k, m.ext, Mode::RegOff { add_width: false })
                                            .expect(".U store");
                                    return Err((
                                        col,
                                        AsmErrorKind::StoreShiftMissing {
                                            mnemonic: name,
                                            k: k as u32,
                                            reg: text.clone(),
                                            umnemonic: mn(uop, local),
                                        },
                                    ));
                                }
                                Some(Shift::One(e)) => {
                                    let v = self.shift_val(e)?;
                                    self.shift_range(&name, v, e.col, k as u32, k as u32 + 31)?
                                }
                                Some(Shift::Sum(a, b)) => {
                                    let av = self.shift_val(a)?;
                                    if av != k as i128 {
                                        return Err((
                                            a.col,
                                            AsmErrorKind::ShiftSumBase {
                                                mnemonic: name,
                                                k: k as u32,
                                                found: av,
                                            },
                                        ));
                                    }
                                    let bv = self.shift_val(b)?;
                                    self.shift_range(&name, bv, b.col, 0, 31)?
                                }
                            }
                        } else {
                            match shift {
                                None => 0,
                                Some(Shift::One(e)) => {
                                    let v = self.shift_val(e)?;
                                    self.shift_range(&name, v, e.col, 0, 31)?
                                }
                                Some(Shift::Sum(a, _)) => {
                                    return Err((a.col, AsmErrorKind::ShiftSumNotAllowed));
                                }
                            }
                        };
                        Ok((
                            prim,
                            Addr::RR {
                                base,
                                off: *r,
                                shamt,
                            },
                        ))
                    }
                    None | Some(OffVal::Imm(_)) => {
                        let (v, vcol) = match val {
                            Some(OffVal::Imm(e)) => (self.eval(e)?, e.col),
                            _ => (0, col),
                        };
                        let v = if neg { -v } else { v };
                        let sh = match shift {
                            None => None,
                            Some(Shift::One(e)) => Some(self.shift_val(e)?),
                            Some(Shift::Sum(a, _)) => {
                                return Err((a.col, AsmErrorKind::ShiftSumNotAllowed));
                            }
                        };
                        let shift_ok = |kk: u8| match sh {
                            None => v == 0 || kk == 0,
                            Some(s) => s == kk as i128,
                        };
                        let op = match m.mode {
                            Mode::Imm { scaled: true } => {
                                if !shift_ok(k) {
                                    return Err((col, self.imm_shift_err(prim)));
                                }
                                prim
                            }
                            Mode::Imm { scaled: false } => {
                                if sh.is_some() {
                                    return Err((
                                        col,
                                        AsmErrorKind::UnscaledImmShift { mnemonic: name },
                                    ));
                                }
                                prim
                            }
                            _ if is_u_store => {
                                let iu = find(m.dir, k, m.ext, Mode::Imm { scaled: false })
                                    .expect("I.U store");
                                return Err((
                                    col,
                                    AsmErrorKind::UFormImm {
                                        mnemonic: name,
                                        usage: usage(iu, local),
                                    },
                                ));
                            }
                            _ => {
                                let iop = find(m.dir, k, m.ext, Mode::Imm { scaled: true })
                                    .expect("I form");
                                if !shift_ok(k) {
                                    let mut suggest = usage(iop, local);
                                    if let Some(iu) =
                                        find(m.dir, k, m.ext, Mode::Imm { scaled: false })
                                    {
                                        suggest = format!("{suggest}` or `{}", usage(iu, local));
                                    }
                                    return Err((
                                        col,
                                        AsmErrorKind::RegFormImm {
                                            mnemonic: name,
                                            suggest,
                                        },
                                    ));
                                }
                                iop
                            }
                        };
                        if !(SIMM24_MIN as i128..=SIMM24_MAX as i128).contains(&v) {
                            return Err((
                                vcol,
                                range_err(v, "simm24", SIMM24_MIN as i128, SIMM24_MAX as i128),
                            ));
                        }
                        Ok((
                            op,
                            Addr::Imm {
                                base,
                                imm: v as i32,
                            },
                        ))
                    }
                }
            }
        }
    }

    fn imm_shift_err(&self, op: Opcode) -> AsmErrorKind {
        let k = op.mem().map_or(0, |m| m.log2e);
        let name = mn(op, self.pi.local);
        if k == 0 {
            AsmErrorKind::UnscaledImmShift { mnemonic: name }
        } else {
            AsmErrorKind::ScaledImmShift {
                mnemonic: name,
                scale: 1 << k,
                k: k as u32,
            }
        }
    }

    fn simm24(&self, e: &Expr) -> EResult<i32> {
        let v = self.eval(e)?;
        if !(SIMM24_MIN as i128..=SIMM24_MAX as i128).contains(&v) {
            return Err((
                e.col,
                range_err(v, "simm24", SIMM24_MIN as i128, SIMM24_MAX as i128),
            ));
        }
        Ok(v as i32)
    }
}

/// Operands of any format, to build an [`Inst`] from an opcode.
enum Fmt {
    LoadRR(LoadRR),
    LoadImm(LoadImm),
    LoadC(LoadC),
    StoreRR(StoreRR),
    StoreImm(StoreImm),
    StoreC(StoreC),
    SAlu(SAlu),
    SLi(SLi),
    SMov(SMov),
    SUnary(SUnary),
    SGetLane(SGetLane),
    VAlu(VAlu),
    VMov(VMov),
    VUnary(VUnary),
    VFp(VFp),
    VRedSum(VRedSum),
    VSetMask(VSetMask),
    Jump(Jump),
    Branch(Branch),
    Loop(Loop),
    EndLoop(EndLoop),
    Nullary,
}

/// Build the instruction of `op` from operands of its format, by encoding the operand fields
/// with the opcode byte and decoding the word (the generated code is the only constructor that
/// knows every opcode's variant). The operands were range-checked, so decoding succeeds.
fn make(op: Opcode, f: Fmt) -> Inst {
    let (bits, second) = match &f {
        Fmt::LoadRR(x) => x.encode_fields(),
        Fmt::LoadImm(x) => x.encode_fields(),
        Fmt::LoadC(x) => x.encode_fields(),
        Fmt::StoreRR(x) => x.encode_fields(),
        Fmt::StoreImm(x) => x.encode_fields(),
        Fmt::StoreC(x) => x.encode_fields(),
        Fmt::SAlu(x) => x.encode_fields(),
        Fmt::SLi(x) => x.encode_fields(),
        Fmt::SMov(x) => x.encode_fields(),
        Fmt::SUnary(x) => x.encode_fields(),
        Fmt::SGetLane(x) => x.encode_fields(),
        Fmt::VAlu(x) => x.encode_fields(),
        Fmt::VMov(x) => x.encode_fields(),
        Fmt::VUnary(x) => x.encode_fields(),
        Fmt::VFp(x) => x.encode_fields(),
        Fmt::VRedSum(x) => x.encode_fields(),
        Fmt::VSetMask(x) => x.encode_fields(),
        Fmt::Jump(x) => x.encode_fields(),
        Fmt::Branch(x) => x.encode_fields(),
        Fmt::Loop(x) => x.encode_fields(),
        Fmt::EndLoop(x) => x.encode_fields(),
        Fmt::Nullary => Nullary.encode_fields(),
    };
    let words = [bits | op as u64, second.unwrap_or(0)];
    Inst::decode(&words).expect("operands were validated before encoding")
}

#[cfg(test)]
mod settle_tests {
    use super::settle;
    use proptest::prelude::*;

    proptest! {
        /// `settle` equals painting the ranges one unit at a time, in order.
        #[test]
        fn settle_matches_painting(ranges in prop::collection::vec((0u64..40, 1u64..12, 0u8..3), 0..40)) {
            let ranges: Vec<(u64, u64, u8)> = ranges.into_iter().map(|(s, l, p)| (s, s + l, p)).collect();
            let mut paint = [None; 64];
            for &(s, e, p) in &ranges {
                for u in &mut paint[s as usize..e as usize] {
                    *u = Some(p);
                }
            }
            let got = settle(&ranges);
            let mut seen = [None; 64];
            for w in got.windows(2) {
                // Sorted, disjoint, coalesced.
                prop_assert!(w[0].1 <= w[1].0);
                prop_assert!(w[0].1 < w[1].0 || w[0].2 != w[1].2);
            }
            for &(s, e, p) in &got {
                prop_assert!(s < e);
                for u in &mut seen[s as usize..e as usize] {
                    *u = Some(p);
                }
            }
            prop_assert_eq!(seen, paint);
        }
    }
}
