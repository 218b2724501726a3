//! Region analysis before translation: which registers each instruction uses and writes (from
//! the ISA table), which loops get the inner loop of full iterations, which contiguous
//! accesses have their checks hoisted to loop entry, copy loops, which registers may stay
//! packed, and which scalars a straight-line region need not load.

use super::{mem, shape};
use crate::region::{Region, Seen};
use lanejit_interp::isa::{AluOp, FpWidth, Inst, Operands, Reg, SReg, Sem, VSrc};

/// A set of scalar and vector registers.
#[derive(Default, Clone, Copy)]
pub(super) struct RegSet {
    pub(super) s: u32,
    pub(super) v: u32,
}

/// (used, written) registers of `inst`, from the ISA table's operand formats
/// (`Inst::effects`). Used are the registers it reads, and every vector register it writes (a
/// write under a partial mask merges with the old value); a scalar destination is used only
/// when it is also a source (scalar writes are whole).
pub(super) fn reg_effects(inst: &Inst) -> (RegSet, RegSet) {
    let e = inst.effects();
    // s0 is never loaded or stored: it reads as zero and discards writes.
    let u = RegSet {
        s: e.reads_s & !1,
        v: e.reads_v | e.writes_v,
    };
    let w = RegSet {
        s: e.writes_s & !1,
        v: e.writes_v,
    };
    (u, w)
}

/// Whether a loop region gets the inner loop of full iterations: it loops with `ENDLOOP`
/// and its body never changes the mask other than through `ENDLOOP`.
pub(super) fn fast_loop_ok(r: &Region) -> bool {
    matches!(r.body().last(), Some((_, Inst::Endloop(_))))
        && r.body()
            .iter()
            .all(|(_, i)| !matches!(i, Inst::VSetmask(_) | Inst::Loop(_)))
}

/// Whether a loop region closed by a branch (`J` or `Bxx` back to its head, not `ENDLOOP`)
/// keeps the mask through its body (no `V.SETMASK`, `LOOP` or `ENDLOOP` in it), so that its
/// full iterations may run in a second full copy entered with packed registers
/// (`Tx::branch_fast_edge`).
pub(super) fn branch_fast_ok(r: &Region) -> bool {
    if r.loop_head.is_none() {
        return false;
    }
    let closed_by_branch = r.body().last().is_some_and(|(_, i)| {
        matches!(
            i.opcode().sem(),
            Sem::Branch(_) | Sem::Ctl(lanejit_interp::isa::Ctl::Jump)
        )
    });
    closed_by_branch
        && r.body()
            .iter()
            .all(|(_, i)| !matches!(i, Inst::VSetmask(_) | Inst::Loop(_) | Inst::Endloop(_)))
}

/// Accumulators of a loop body: vector registers whose only access in the body is one
/// `V.ADD vd, vd, vx` (vx another register). In the streaming copy such a register may keep
/// its sums in narrow lanes (`Form::Acc`, see `Tx::acc_add`).
pub(super) fn accumulators(r: &Region) -> u32 {
    if r.loop_head.is_none() {
        return 0;
    }
    let mut adds = 0u32;
    let mut touched = 0u32;
    let mut twice = 0u32;
    for (_, i) in r.body() {
        let (u, w) = super::reg_effects(i);
        let regs = u.v | w.v;
        if let (Operands::VAlu(o), Sem::VAlu(lanejit_interp::isa::AluOp::Add)) =
            (i.operands(), i.opcode().sem())
        {
            if let lanejit_interp::isa::VSrc::V(x) = o.vb {
                if o.vd == o.va && x != o.vd {
                    let d = 1u32 << o.vd.0;
                    twice |= touched & d;
                    touched |= d;
                    adds |= d;
                    twice |= touched & (1 << x.0);
                    touched |= 1 << x.0;
                    continue;
                }
            }
        }
        twice |= touched & regs;
        touched |= regs;
    }
    adds & !twice
}

/// Whether a loop with hoisted accesses `hoisted` (from [`hoistable`]) gets the streaming
/// copy of its body (see `Tx::stream`): an `ENDLOOP` loop, not a copy loop, whose every store
/// to guest memory is one of the hoisted contiguous accesses. Then the loop-entry span check
/// can prove, once for all proven iterations, that no store of the loop writes a byte a
/// hoisted load reads, so those loads may move freely among the body's stores.
pub(super) fn stream_ok(r: &Region, hoisted: &[Hoisted]) -> bool {
    if r.loop_head.is_none() {
        return false;
    }
    fast_loop_ok(r)
        && !hoisted.is_empty()
        && r.body().iter().all(|(pc, i)| match i.opcode().mem() {
            Some(ms) if ms.dir == lanejit_interp::isa::Dir::Store => {
                hoisted.iter().any(|h| h.pc == *pc)
            }
            _ => true,
        })
}

/// Whether the partial iteration of an `ENDLOOP` loop (its tail) may run as the *masked
/// tail* copy (see `Tx::masked_tail`): every memory access of the body is one of the hoisted
/// accesses `hoisted` (contiguous or strided), and every vector instruction works lane by lane (no
/// `V.REDSUM`, `S.GETLANE` or `V.SETMASK`), so what inactive lanes compute never reaches an
/// active lane, a scalar or memory.
pub(super) fn masked_tail_ok(r: &Region, hoisted: &[Hoisted]) -> bool {
    if r.loop_head.is_none() {
        return false;
    }
    fast_loop_ok(r)
        && accesses_hoisted(r, hoisted)
        && r.body()
            .iter()
            .all(|(_, i)| !matches!(i.opcode().sem(), Sem::RedSum | Sem::SetMask | Sem::SGetLane))
}

/// Whether every memory access of the loop body `r` is one of the hoisted accesses
/// `hoisted` (checked once at loop entry; no gather or scatter).
pub(super) fn accesses_hoisted(r: &Region, hoisted: &[Hoisted]) -> bool {
    r.body().iter().all(|(pc, i)| {
        !matches!(i.opcode().sem(), Sem::Mem(_)) || hoisted.iter().any(|h| h.pc == *pc)
    })
}

/// Whether loop region `r` is closed by a branch (not an `ENDLOOP`, whose last iteration is
/// partial) and has no `V.SETMASK`: the mask at its head is the one it was entered with on
/// every iteration.
pub(crate) fn branch_loop_keeps_mask(r: &Region) -> bool {
    r.loop_head.is_some()
        && r.body()
            .last()
            .is_some_and(|(_, i)| matches!(i.opcode().sem(), Sem::Branch(_)))
        && !r.insts.iter().any(|(_, i)| matches!(i, Inst::VSetmask(_)))
}

/// Whether loop region `r` is a nest whose inner loop is a branch loop that never runs under
/// a partial mask: its prologue runs under a full mask (the nest's guard leaves for the
/// interpreter otherwise) and [`branch_loop_keeps_mask`].
pub(crate) fn never_partial(r: &Region) -> bool {
    r.outer.is_some() && branch_loop_keeps_mask(r)
}

/// The *iteration-local* vector registers of a loop (see `Tx::local_v`): in an `ENDLOOP`
/// loop whose full iterations stream and whose tail runs as the masked tail (`stream_ok`,
/// `masked_tail_ok`, not a copy loop), the registers the body overwrites whole (an
/// instruction that writes them without reading them) before anything in the body reads
/// them, unless a nest's prologue or epilogue touches one of them (then none is). No
/// iteration reads what the one before left in them, so they are neither loaded at loop
/// entry nor carried around the loop's edges nor written back at its exits: the last full
/// iteration and the masked tail store them. A prologue's other vector work (matmul's
/// broadcasts of A) leaves them so: it was any vector register once, which left
/// matmul_ikj's short rows (8 iterations at VL 32, one row per (i, k)) to the first full
/// copy for their last two iterations, each through the header and its span check again,
/// and the values of C and B written back to their variables at every row's end
/// (`lanejit bench --kernel matmul_ikj --sizes 256K --engine jit`, G multiply-adds/s:
/// 5.4 -> 7.6-7.8; matmul256 19.7-19.8 -> 20.2-20.7, three alternating runs).
pub(super) fn iteration_local(r: &Region, hoisted: &[Hoisted], copy: bool) -> u32 {
    let Some(h) = r.loop_head else {
        return 0;
    };
    if copy || !stream_ok(r, hoisted) || !masked_tail_ok(r, hoisted) {
        return 0;
    }
    let mut seen = 0u32;
    let mut local = 0u32;
    for (_, i) in r.body() {
        let e = i.effects();
        local |= e.writes_v & !e.reads_v & !seen;
        seen |= e.reads_v | e.writes_v;
    }
    // Nor does a nest's epilogue.
    let after = &r.insts[r.outer.unwrap_or(r.insts.len())..];
    if r.insts[..h].iter().chain(after).any(|(_, i)| {
        let e = i.effects();
        (e.reads_v | e.writes_v) & local != 0
    }) {
        return 0;
    }
    local
}

/// The hoisted loads (bits by index in `hoisted`) that access exactly the bytes of some hoisted
/// store of the same iteration (same base and offset operands and element width: an in-place
/// update such as `y = a x + y`). The streaming copy keeps them in program order instead of
/// letting them move, so their overlap with that store is no reason to leave the copy.
pub(super) fn in_place(hoisted: &[Hoisted]) -> u64 {
    let mut set = 0;
    for (j, l) in hoisted.iter().enumerate() {
        let is_load = l.ms().dir == lanejit_interp::isa::Dir::Load;
        let same = hoisted
            .iter()
            .any(|s| s.ms().dir == lanejit_interp::isa::Dir::Store && s.same_bytes(l));
        if is_load && same {
            set |= 1 << j;
        }
    }
    set
}

/// Registers a load (of guest memory or tile space), an f32 add, subtract, multiply or FMA,
/// a vector multiply, a shift right or AND by an immediate, an add, subtract, OR, XOR or
/// shift left writes (candidates for the packed form: any load may turn out contiguous, see
/// [`shape`]).
pub(super) fn packable(r: &Region) -> u32 {
    let mut set = 0;
    for (_, i) in &r.insts {
        if let (Operands::VFp(o), Sem::Fp(_, FpWidth::S)) = (i.operands(), i.opcode().sem()) {
            set |= 1 << o.vd.0;
        }
        if let (Operands::VAlu(o), Sem::VAlu(AluOp::Mul)) = (i.operands(), i.opcode().sem()) {
            set |= 1 << o.vd.0;
        }
        // A shift right, AND, add or subtract by an immediate, or an AND with a register of
        // lane masks, may keep lanes packed (`Tx::narrow_int_operands`,
        // `Tx::packed_int_operands`).
        if let (
            Operands::VAlu(o),
            Sem::VAlu(op @ (AluOp::Shr | AluOp::Sra | AluOp::And | AluOp::Add | AluOp::Sub)),
        ) = (i.operands(), i.opcode().sem())
        {
            if matches!(o.vb, VSrc::Imm(_)) || (op == AluOp::And && matches!(o.vb, VSrc::V(_))) {
                set |= 1 << o.vd.0;
            }
        }
        // Sums, differences, bitwise operations and shifts left of narrow lanes may stay narrow
        // (`Tx::narrow_int_operands`).
        if let (
            Operands::VAlu(o),
            Sem::VAlu(AluOp::Add | AluOp::Sub | AluOp::Or | AluOp::Xor | AluOp::Shl),
        ) = (i.operands(), i.opcode().sem())
        {
            set |= 1 << o.vd.0;
        }
        if let Some(ms) = i.opcode().mem() {
            if ms.dir == lanejit_interp::isa::Dir::Load {
                let (_, w) = reg_effects(i);
                set |= w.v;
            }
        }
    }
    set
}

/// The vector registers of a loop body that its packed-word lowerings want packed when they
/// arrive wide at its second full copy (`Tx::repack`): an index stepped by an immediate
/// (`V.ADD r, r, k`: `Tx::packed_int`) or compared (`V.SUB d, a, b; V.SRA d, d, 63`:
/// `Tx::packed_sign_mask`), that the body reads in no other way than these and as the
/// vector offset of guest-memory accesses through a scalar base (packed-index gathers and
/// scatters). A register the body also reads otherwise (a lane counter fed to a multiply)
/// would be widened again at every such read: it stays wide.
pub(super) fn repackable(r: &Region) -> u32 {
    use lanejit_interp::isa::{MemAddr, Reg};
    let body = r.body();
    let (mut want, mut other) = (0u32, 0u32);
    for (k, (_, i)) in body.iter().enumerate() {
        let mut ok = 0u32;
        match (i.operands(), i.opcode().sem()) {
            (Operands::VAlu(o), Sem::VAlu(AluOp::Add | AluOp::Sub))
                if o.vd == o.va && matches!(o.vb, VSrc::Imm(_)) =>
            {
                ok |= 1 << o.va.0;
                want |= 1 << o.va.0;
            }
            (Operands::VAlu(o), Sem::VAlu(AluOp::Sub)) => {
                if let (VSrc::V(b), Some((_, Inst::VSra(n)))) = (o.vb, body.get(k + 1)) {
                    let sign = matches!(n.vb, VSrc::Imm(x) if x & 63 == 63);
                    if n.vd == o.vd && n.va == o.vd && sign {
                        ok |= (1 << o.va.0) | (1 << b.0);
                        want |= (1 << o.va.0) | (1 << b.0);
                    }
                }
            }
            _ => {}
        }
        if let Some(m) = i.mem_operands() {
            if let (
                MemAddr::RegOff {
                    base: Reg::S(_),
                    off: Reg::V(n),
                    ..
                },
                false,
            ) = (m.addr, m.local)
            {
                if m.data != Reg::V(n) {
                    ok |= 1 << n;
                }
            }
        }
        other |= i.effects().reads_v & !ok;
    }
    want & !other
}

/// A guest-memory access of an `ENDLOOP` loop body whose lane `i` at LC0BASE `x` accesses
/// `inv + ((x + i) << log2s)` with `inv` loop-invariant ([`shape::lane_forms`]): contiguous in
/// every full iteration when the stride `1 << log2s` is its element width, whichever form
/// spelled it (`lc0`, a register offset, a vector base built from `V.LC0`); or a load or a
/// store of elements 2 or 4 elements apart (fields of an array of structs, channels of RGBA
/// pixels), or of 4- or 8-byte elements a power of two from 16 to 4096 bytes apart, whose
/// groups of `VL << log2s` bytes follow one another just as well. Its per-group checks are
/// hoisted into one span check per loop entry (`Tx::precheck`). Or a *uniform* load (stride
/// 0): every lane and iteration reads the one element at `inv` (a filter's tap a compiler
/// loads in the body, `V.LWI [s4 + (k << 2)]`), whose check the span check makes once too.
#[derive(Clone, Debug)]
pub(crate) struct Hoisted {
    /// Its pc.
    pub(crate) pc: u64,
    /// The instruction.
    pub(crate) inst: Inst,
    /// The loop-invariant part of lane 0's EA at LC0BASE 0.
    pub(crate) inv: shape::Sym,
    /// Log2 of the bytes between consecutive lanes (the element width's for a contiguous
    /// access; 0 for a uniform one).
    pub(crate) log2s: u8,
    /// A uniform load: no lane or iteration term (`log2s` unused).
    pub(crate) uniform: bool,
}

impl Hoisted {
    /// Its memory semantics.
    pub(crate) fn ms(&self) -> lanejit_interp::isa::MemSem {
        self.inst.opcode().mem().expect("a hoisted access")
    }

    /// Whether its lanes are adjacent elements (else a strided access, see [`Hoisted`]).
    pub(crate) fn contiguous(&self) -> bool {
        !self.uniform && self.log2s == self.ms().log2e
    }

    /// Whether its lanes are `1 << log2s` bytes apart (contiguous or strided, not uniform).
    pub(crate) fn strided(&self) -> bool {
        !self.uniform && !self.contiguous()
    }

    /// The bytes one group of `vl` lanes spans from lane 0's EA: `vl << log2s`, or the one
    /// element of a uniform load.
    pub(crate) fn group_bytes(&self, vl: u32) -> u64 {
        if self.uniform {
            self.ms().width()
        } else {
            (vl as u64) << self.log2s
        }
    }

    /// Whether `other` accesses exactly its bytes, lane by lane, in every iteration (same
    /// space, base and offset operands, element width and lane step).
    pub(crate) fn same_bytes(&self, other: &Hoisted) -> bool {
        self.inst.is_local() == other.inst.is_local()
            && self.inv == other.inv
            && self.ms().log2e == other.ms().log2e
            && self.log2s == other.log2s
            && self.uniform == other.uniform
    }
}

/// How a [`Stepped`] register's value depends on LC0BASE and the lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StepKind {
    /// A vector register bumped by one `V.ADD`/`V.SUB` of a loop-invariant scalar or
    /// immediate per iteration and otherwise not written in the body (a vector of lane
    /// addresses a compiler built before the loop, or in the outer loop for each row, and
    /// steps like a pointer): lane `i` is `b + e * (LC0BASE + i)`.
    Vector,
    /// A scalar register bumped likewise by one `S.ADD`/`S.SUB` (a pointer a compiler
    /// strength-reduced: `S.ADD s1, s1, s10` with `s10 = VL * 4`): `b + e * LC0BASE`.
    Scalar,
    /// A vector register the body never writes whose lanes are `e` apart (lane offsets a
    /// compiler built before the loop, `V.LANEID v20; V.SHL v21, v20, 2`): lane `i` is
    /// `b + e * i`. An access through it moves with LC0BASE when a bumped scalar or one
    /// computed from `S.LC0` is added.
    Fixed,
}

/// A register of an `ENDLOOP` loop body (a nest's inner loop too) whose value at the start of
/// every iteration is speculated to be affine in LC0BASE and the lane ([`StepKind`]): `b`
/// the pseudo register [`Stepped::pseudo`] (loop-invariant), `e` the step the entry that made
/// the region compile showed ([`Seen`]; a bump's step over VL). Accesses through it are then
/// hoisted like those through a vector address built from `V.LC0` in the body ([`Hoisted`]);
/// `Tx::spec_ok` tests the speculation at every loop entry (the bump still `VL * e`, the
/// lanes `e` apart), and a loop whose test fails leaves for the straight form of its body
/// (recompiled without the speculation after a few such entries, as a speculated base
/// distance is).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stepped {
    /// The register: a vector register, or (`StepKind::Scalar`) a scalar one.
    pub(crate) reg: u8,
    /// What it is.
    pub(crate) kind: StepKind,
    /// Its step: between consecutive lanes (vector registers), per unit of LC0BASE (bumped
    /// registers); a bump's step over VL. Never 0.
    pub(crate) e: i64,
    /// The scalar register a bump adds per iteration (negated when `neg`), or `None` for an
    /// immediate (then known to be `VL * e`) or no bump (`StepKind::Fixed`).
    pub(crate) step: Option<SReg>,
    /// Whether the bump subtracts.
    pub(crate) neg: bool,
}

impl Stepped {
    /// The pseudo register standing for its loop-invariant base in symbolic forms
    /// ([`shape::vbase`], [`shape::sbase`]).
    pub(crate) const fn pseudo(&self) -> SReg {
        match self.kind {
            StepKind::Scalar => shape::sbase(self.reg),
            StepKind::Vector | StepKind::Fixed => shape::vbase(self.reg),
        }
    }

    /// Its symbolic form at the start of an iteration.
    pub(crate) fn form(&self) -> shape::Sym {
        shape::Sym {
            terms: vec![(self.pseudo(), 1)],
            k: 0,
            lc0: if self.kind == StepKind::Fixed {
                0
            } else {
                self.e
            },
            lane: if self.kind == StepKind::Scalar {
                0
            } else {
                self.e
            },
        }
    }
}

/// A bump `reg += x` (or `-=`): `x` a scalar register or an immediate, from `V.ADD`/`V.SUB`
/// of a vector register to itself or `S.ADD`/`S.SUB` of a scalar one.
fn bump(inst: &Inst) -> Option<(Reg, VSrc, bool)> {
    match (inst.operands(), inst.opcode().sem()) {
        (Operands::SAlu(o), Sem::SAlu(op @ (AluOp::Add | AluOp::Sub))) if o.sd == o.sa => {
            let x = match o.sb {
                lanejit_interp::isa::SOrImm::Reg(r) => VSrc::S(r),
                lanejit_interp::isa::SOrImm::Imm(k) => VSrc::Imm(k),
            };
            Some((Reg::S(o.sd.0), x, op == AluOp::Sub))
        }
        _ => match shape::plus_scalar(inst) {
            Some((vd, va, Some(x), neg)) if vd == va => Some((Reg::V(vd.0), x, neg)),
            _ => None,
        },
    }
}

/// The [`Stepped`] registers of `r` at `vl` lanes, from what the entry showed (none without
/// it: no speculation).
fn stepped_bases(r: &Region, seen: Option<&Seen>, vl: u32) -> Vec<Stepped> {
    let Some(seen) = seen else {
        return Vec::new();
    };
    if r.loop_head.is_none() || !fast_loop_ok(r) {
        return Vec::new();
    }
    let body = r.body();
    let mut written = RegSet::default();
    let mut used_v = 0u32;
    // Per register (scalar, vector) the one instruction of the body that writes it; `twice`:
    // written by more than one.
    let mut writer: [[Option<&Inst>; 32]; 2] = [[None; 32]; 2];
    let mut twice = [0u32; 2];
    for (_, i) in body {
        let (u, w) = reg_effects(i);
        for (k, bits) in [w.s, w.v].into_iter().enumerate() {
            for n in (0..32).filter(|n| bits & (1 << n) != 0) {
                if writer[k][n].replace(i).is_some() {
                    twice[k] |= 1 << n;
                }
            }
        }
        written.s |= w.s;
        written.v |= w.v;
        used_v |= u.v;
    }
    let mut out = Vec::new();
    // Registers written in the body only by one bump of a scalar the body never writes (or
    // an immediate): what a nest's outer code does to them does not matter, the test runs at
    // every entry of the inner loop.
    for (k, kind) in [(0, StepKind::Scalar), (1, StepKind::Vector)] {
        for n in (0..32u8).filter(|n| twice[k] & (1 << n) == 0) {
            let Some((to, x, neg)) = writer[k][n as usize].and_then(bump) else {
                continue;
            };
            let reg = if kind == StepKind::Scalar {
                Reg::S(n)
            } else {
                Reg::V(n)
            };
            if to != reg {
                continue;
            }
            // The lane step: the step over VL (lanes one group apart per iteration).
            let (step, by) = match x {
                VSrc::S(s) if written.s & (1 << s.0) == 0 && s.0 != 0 => {
                    (Some(s), seen.sregs[s.0 as usize] as i64)
                }
                VSrc::Imm(k) => (None, k as i64),
                _ => continue,
            };
            let by = if neg { by.wrapping_neg() } else { by };
            let e = by / vl as i64;
            // A vector register's lanes step up (the accesses through it are hoisted when
            // that makes them contiguous or one of the strides `Hoisted` allows); a scalar's
            // step only has to match the lane step of what it is added to.
            if e == 0 || e.wrapping_mul(vl as i64) != by || (kind == StepKind::Vector && e < 0) {
                continue;
            }
            out.push(Stepped {
                reg: n,
                kind,
                e,
                step,
                neg,
            });
        }
    }
    // Read-only vector registers whose lanes stepped by a constant at the entry (an access
    // through one moves with LC0BASE when a bumped scalar or `S.LC0` is added to it; the
    // caller keeps only those some hoisted access goes through).
    for n in (0..32u8).filter(|n| used_v & !written.v & (1 << n) != 0) {
        let e = seen.strides[n as usize] as i64;
        if e != 0 {
            out.push(Stepped {
                reg: n,
                kind: StepKind::Fixed,
                e,
                step: None,
                neg: false,
            });
        }
    }
    out
}

/// The hoisted accesses of loop region `r` at `vl` lanes with what the entry showed `seen`,
/// and the [`Stepped`] registers they speculate on (only those some hoisted access goes
/// through: a stepped register that is no address, a counter, is not tested).
pub(super) fn hoisted_and_stepped(
    r: &Region,
    seen: Option<&Seen>,
    vl: u32,
) -> (Vec<Hoisted>, Vec<Stepped>) {
    let mut stepped = stepped_bases(r, seen, vl);
    let hoist = hoistable(r, &stepped, vl);
    stepped.retain(|st| {
        hoist
            .iter()
            .any(|h| h.inv.terms.iter().any(|&(t, _)| t == st.pseudo()))
    });
    (hoist, stepped)
}

/// The hoisted accesses of a loop body (see [`Hoisted`]), with the vector registers of
/// `stepped` taken as they speculate.
pub(super) fn hoistable(r: &Region, stepped: &[Stepped], vl: u32) -> Vec<Hoisted> {
    if r.loop_head.is_none() || !fast_loop_ok(r) {
        return Vec::new();
    }
    let mut written = 0u32;
    for (_, i) in r.body() {
        written |= reg_effects(i).1.s;
    }
    let body = r.body();
    let forms = shape::lane_forms(body, !written, stepped, vl);
    body.iter()
        .zip(forms)
        .filter_map(|(&(pc, inst), f)| {
            let ms = inst.opcode().mem()?;
            let f = f?;
            let e = 1i64 << ms.log2e;
            // Elements 2 or 4 elements apart; 4- and 8-byte ones also any power of two from
            // 16 bytes to a page apart (a column of a matrix, one word per cache line).
            let wide_stride =
                ms.log2e >= 2 && (16..=4096).contains(&f.lane) && (f.lane as u64).is_power_of_two();
            // Loads and stores alike: a strided store writes its lanes one by one at
            // constant offsets from lane 0's host address (`Tx::hoisted_access`).
            let strided = f.lane == 2 * e || f.lane == 4 * e || wide_stride;
            // A load of one element through loop-invariant scalars (no stepped vector base).
            let uniform = f.lane == 0
                && ms.dir == lanejit_interp::isa::Dir::Load
                && f.terms.iter().all(|&(t, _)| !shape::is_pseudo(t));
            (f.lc0 == f.lane && (f.lane == e || strided || uniform)).then(|| Hoisted {
                pc,
                inst,
                inv: f.invariant(),
                log2s: if uniform {
                    0
                } else {
                    f.lane.trailing_zeros() as u8
                },
                uniform,
            })
        })
        .collect()
}

/// Speculated distances between base registers (the entry's, `Seen::sregs`): the hoisted strided
/// loads through one scalar register each (the `lc0` form of an array-of-structs loop:
/// `V.LW [s1 + (lc0 << 4)]`, `V.LW [s5 + (lc0 << 4)]` with `s5 = s1 + 4`) whose registers,
/// at the entry that made the region compile, lay within one record of the first such
/// load's (less than its window of `min(stride, 16)` bytes apart, at a multiple of the
/// element width) are rewritten as that load's register plus a constant, so they form its
/// interleave group (`Tx::interleave_offset`); hoisted strided stores likewise among
/// themselves (the two fields a pair of stores writes, `Tx::pair_fields`). Returns the
/// guards `(a, b, d)`: `b - a == d`
/// must hold at the loop's entry for the copies that use the hoisted accesses
/// (`Tx::precheck`, `Tx::masked_tail_entry`; else the loop leaves for the straight form of
/// its body, and the JIT compiles it again without speculation after a few such exits).
pub(super) fn speculate_bases(
    hoist: &mut [Hoisted],
    seen: Option<&Seen>,
) -> Vec<(SReg, SReg, i64)> {
    let Some(Seen { sregs, .. }) = seen else {
        return Vec::new();
    };
    let single = |h: &Hoisted| match h.inv.terms.as_slice() {
        [(r, 1)] if h.strided() && !shape::is_pseudo(*r) => Some(*r),
        _ => None,
    };
    let mut guards: Vec<(SReg, SReg, i64)> = Vec::new();
    for i in 0..hoist.len() {
        let Some(a) = single(&hoist[i]) else { continue };
        for j in i + 1..hoist.len() {
            let Some(b) = single(&hoist[j]) else { continue };
            let (hi, hj) = (&hoist[i], &hoist[j]);
            if a == b
                || hi.ms().dir != hj.ms().dir
                || hi.log2s != hj.log2s
                || hi.ms().log2e != hj.ms().log2e
                || hi.inst.is_local() != hj.inst.is_local()
            {
                continue;
            }
            let e = 1i64 << hj.ms().log2e;
            let window = (1i64 << hj.log2s).min(16);
            let d = sregs[b.0 as usize].wrapping_sub(sregs[a.0 as usize]) as i64;
            let k = hj.inv.k.wrapping_add(d);
            let o = k.wrapping_sub(hi.inv.k);
            if o.unsigned_abs() > (window - e) as u64 || o % e != 0 {
                continue;
            }
            if !guards.iter().any(|&(ga, gb, _)| (ga, gb) == (a, b)) {
                guards.push((a, b, d));
            }
            hoist[j].inv.terms = vec![(a, 1)];
            hoist[j].inv.k = k;
        }
    }
    guards
}

/// The vector registers every `V.ADD vd, vd, vx` of the region into which adds a product
/// (`vx` last written by a `V.MUL` before it in the body): accumulators of narrow products
/// (dot8's `V.MUL v1, v1, v2; V.ADD v3, v3, v1`), whose narrow sums of 16-bit products the
/// streaming copy keeps permuted (`Tx::even_odd`), or a paired one in lane order, adding a
/// round's two iterations at once (`Tx::pair_products`).
pub(super) fn product_accs(r: &Region) -> u32 {
    let (mut yes, mut no) = (0u32, 0u32);
    let mut product = 0u32;
    for (_, i) in r.body() {
        if let (Operands::VAlu(o), Sem::VAlu(AluOp::Add)) = (i.operands(), i.opcode().sem()) {
            if let VSrc::V(x) = o.vb {
                if o.vd == o.va && o.vd != x && product & (1 << x.0) != 0 {
                    yes |= 1 << o.vd.0;
                } else {
                    no |= 1 << o.vd.0;
                }
            } else {
                no |= 1 << o.vd.0;
            }
        }
        let w = reg_effects(i).1.v;
        let is_mul = matches!(i.opcode().sem(), Sem::VAlu(AluOp::Mul));
        product = if is_mul { product | w } else { product & !w };
    }
    yes & !no
}

/// A copy loop: an `ENDLOOP` loop whose body is a contiguous load, a store of the loaded
/// register with the same element width, and the `ENDLOOP`, with both accesses hoisted
/// (`hoisted`, from [`hoistable`]).
/// Returns the width's log2. Its full iterations but the last one of each checked span are
/// one bulk copy (see `Tx::precheck`).
pub(super) fn copy_loop(r: &Region, hoisted: &[Hoisted]) -> Option<u8> {
    r.loop_head?;
    let [(_, ld), (_, st), (_, Inst::Endloop(_))] = r.body() else {
        return None;
    };
    let (lm, sm) = (ld.opcode().mem()?, st.opcode().mem()?);
    let ok = lm.dir == lanejit_interp::isa::Dir::Load
        && sm.dir == lanejit_interp::isa::Dir::Store
        && lm.log2e == sm.log2e
        && hoisted.len() == 2
        && hoisted.iter().all(Hoisted::contiguous)
        && matches!((mem::data_reg(ld), mem::data_reg(st)), (Some(Reg::V(d)), Some(Reg::V(s))) if d == s);
    ok.then_some(lm.log2e)
}

/// Scalar registers a straight-line region (no budget check) overwrites before it reads them
/// and before its first instruction that can exit (a memory access or the control
/// instruction): their values at entry are never observed, so they need not be loaded.
pub(super) fn written_first(r: &Region) -> u32 {
    let mut seen = 0u32;
    let mut fresh = 0u32;
    for (_, i) in &r.insts {
        if i.opcode().mem().is_some() || crate::region::is_control(i) {
            break;
        }
        // A scalar destination that is not also a source is a whole overwrite.
        let (u, w) = reg_effects(i);
        fresh |= w.s & !u.s & !seen;
        seen |= u.s | w.s;
    }
    fresh & !1
}

/// Vector registers a loop body overwrites whole before it reads them and before its first
/// instruction that can exit (a memory access or a control instruction): their values at the
/// body's start are never observed, so the form they arrive in at the second full copy does
/// not matter (`Tx::second_copy_forms`).
pub(super) fn body_fresh(r: &Region) -> u32 {
    let mut seen = 0u32;
    let mut fresh = 0u32;
    for (_, i) in r.body() {
        if i.opcode().mem().is_some() || crate::region::is_control(i) {
            break;
        }
        let e = i.effects();
        fresh |= e.writes_v & !e.reads_v & !seen;
        seen |= e.reads_v | e.writes_v;
    }
    fresh
}

/// The vector registers the region reads before it writes them, in the order of its
/// instructions, or its loop body does in the order of the body's (a loop nest's inner
/// loop): those whose values one iteration hands to the next.
pub(super) fn carried(r: &Region) -> u32 {
    let read_first = |insts: &[(u64, Inst)]| {
        let (mut written, mut read) = (0u32, 0u32);
        for (_, i) in insts {
            let e = i.effects();
            read |= e.reads_v & !written;
            written |= e.writes_v;
        }
        read
    };
    read_first(&r.insts) | read_first(r.body())
}

/// Whether a region needs the full/general body split (it has vector work).
pub(super) fn has_vector_work(r: &Region) -> bool {
    r.insts.iter().any(|(_, i)| {
        let (u, _) = reg_effects(i);
        u.v != 0
    })
}

/// How a loop nest's outer loop counts (see [`nest_count`]): per scalar register, what one
/// outer iteration adds to it (`None`: written otherwise), and the outer branch.
#[derive(Clone)]
pub(super) struct NestCount {
    /// Per scalar register, the sum of the immediates one outer iteration adds to it (0 when
    /// the nest does not write it), or `None` when the nest writes it in another way or the
    /// inner body writes it.
    pub(super) steps: [Option<i64>; 32],
    /// The outer branch's counter (its left operand), condition and limit.
    pub(super) counter: SReg,
    pub(super) cond: lanejit_interp::isa::Cond,
    pub(super) limit: lanejit_interp::isa::SOrImm,
    /// What the epilogue adds to the counter before the branch.
    pub(super) before: i64,
}

/// The count of a loop that ends in a conditional branch back to its region's start (a
/// branch loop entered at its head, or a nest's outer loop): the branch's counter, which the
/// region writes only by adding or subtracting immediates (`step` in all, per round), its
/// limit (an immediate, or a register the region does not write), and `step`: for `BNE` any
/// step but 0, for `BLT`/`BLTU` a positive one. `None` for other loops. A tiered run's
/// baseline publishes how far such a loop has to go (`Tx::yield_check`).
pub(super) fn counted_back_edge(r: &Region) -> Option<(SReg, lanejit_interp::isa::SOrImm, i64)> {
    use lanejit_interp::isa::{Cond, SOrImm};
    let (br, cond) = r.insts.last()?.1.cond_branch()?;
    if br.target.pc() != r.start || br.sa.0 == 0 {
        return None;
    }
    let writes = |n: SReg| {
        r.insts
            .iter()
            .filter(move |(_, i)| i.effects().writes_s & (1 << n.0) != 0)
    };
    let mut step = 0i64;
    for (_, i) in writes(br.sa) {
        match i.scalar_step() {
            Some((d, k)) if d == br.sa => step = step.checked_add(k)?,
            _ => return None,
        }
    }
    if let SOrImm::Reg(l) = br.sb {
        if l.0 != 0 && writes(l).next().is_some() {
            return None;
        }
    }
    match cond {
        Cond::Ne if step != 0 => Some((br.sa, br.sb, step)),
        Cond::Lt | Cond::Ltu if step > 0 => Some((br.sa, br.sb, step)),
        _ => None,
    }
}

/// The count of nest `r`'s outer loop, when it is one a compiler emits for rows
/// (`S.SUB s4, s4, 1; BNE s4, 0, row` or `S.ADD s8, s8, 1; BLT s8, s20, row`): the outer
/// branch returns to the nest's start and compares a counter, which only the prologue and
/// epilogue change, each time by adding or subtracting an immediate (by 1 in all for `BNE`,
/// by a positive amount for `BLT`/`BLTU`), with an immediate or a register the nest does not
/// write; the inner `LOOP`'s count register is not written either, so every row has the same
/// trip count. Then the rows left from any point of the nest are known, and so is where each
/// row's loop-invariant scalars are: the registers only stepped by immediates
/// ([`NestCount::steps`]). `None` for other nests.
pub(super) fn nest_count(r: &Region) -> Option<NestCount> {
    use lanejit_interp::isa::{Cond, SOrImm};
    let (o, h) = (r.outer?, r.loop_head?);
    let (br, cond) = r.insts.last()?.1.cond_branch()?;
    if !matches!(cond, Cond::Ne | Cond::Lt | Cond::Ltu)
        || br.target.pc() != r.start
        || h == 0
        || br.sa.0 == 0
    {
        return None;
    }
    let mut steps = [Some(0i64); 32];
    let mut before = 0i64;
    for (i, (_, inst)) in r.insts.iter().enumerate() {
        let w = inst.effects().writes_s & !1;
        if w == 0 {
            continue;
        }
        let outside = !(h..o).contains(&i);
        // `S.ADD r, r, imm` or `S.SUB r, r, imm` outside the inner body: `r` steps by it.
        let add = inst.scalar_step().filter(|_| outside).map(|(_, c)| c);
        for n in (0..32).filter(|n| w & (1 << n) != 0) {
            steps[n] = match (steps[n], add) {
                (Some(s), Some(c)) => s.checked_add(c),
                _ => None,
            };
            if n == br.sa.0 as usize && i >= o {
                before = before.checked_add(add?)?;
            }
        }
    }
    let step = steps[br.sa.0 as usize]?;
    let invariant = |n: SReg| n.0 == 0 || steps[n.0 as usize] == Some(0);
    if let SOrImm::Reg(l) = br.sb {
        if !invariant(l) {
            return None;
        }
    }
    let Inst::Loop(l) = &r.insts[h - 1].1 else {
        return None;
    };
    let counted = match cond {
        Cond::Ne => step.unsigned_abs() == 1,
        _ => step > 0,
    };
    (counted && invariant(l.sa)).then_some(NestCount {
        steps,
        counter: br.sa,
        cond,
        limit: br.sb,
        before,
    })
}

#[cfg(test)]
mod tests {
    use super::{StepKind, hoisted_and_stepped, nest_count};
    use crate::region::{Code, Seen, discover};
    use lanejit_interp::isa::{Cond, SOrImm, SReg};

    /// The region at label `row:` of a program whose nest is `nest` (rows around a
    /// two-instruction `LOOP s3`), which must be a loop nest.
    fn nest_at_row(nest: &str) -> crate::region::Region {
        let src = format!(
            "
            .mem 0x10000, 0x1000, rw
            .text
            S.LI s1, 0x10000
            S.LI s3, 8
            S.LI s4, 4
        row:
            {nest}
            HALT
            "
        );
        let p = lanejit_interp::asm::assemble(&src, "nest.s").expect("assembles");
        let code = Code::of(&lanejit_interp::interp::DecodedCode::decode(&p.code));
        let row = p
            .symbols
            .iter()
            .find(|s| s.name == "row")
            .expect("row:")
            .value;
        let r = discover(&code, row, false).expect("a region at row:");
        assert!(r.outer.is_some(), "a loop nest:\n{nest}");
        r
    }

    const ROW: &str = "LOOP s3
            V.LW [s1, lc0<<2, 0], ->v1
            V.SW v1, [s1, lc0<<2, 0x100]
            ENDLOOP";

    #[test]
    fn counted_nests_are_rows_of_one_trip_count_stepped_by_immediates() {
        // A countdown: s1 steps by 0x40 a row, s4 by -1, compared with 0.
        let r = nest_at_row(&format!(
            "{ROW}\n S.ADD s1, s1, 0x40\n S.SUB s4, s4, 1\n BNE s4, 0, row"
        ));
        let c = nest_count(&r).expect("counted");
        assert_eq!((c.counter, c.cond, c.before), (SReg(4), Cond::Ne, -1));
        assert_eq!(
            (c.steps[1], c.steps[4], c.steps[3]),
            (Some(0x40), Some(-1), Some(0))
        );
        assert_eq!(c.limit, SOrImm::Imm(0));
        // Counting up by 2 against a register the nest does not write, the step in the
        // prologue: nothing added before the branch.
        let r = nest_at_row(&format!(
            "S.ADD s4, s4, 2\n {ROW}\n S.ADD s1, s1, 8\n BLT s4, s9, row"
        ));
        let c = nest_count(&r).expect("counted");
        assert_eq!((c.cond, c.before, c.steps[4]), (Cond::Lt, 0, Some(2)));
        assert_eq!(c.limit, SOrImm::Reg(SReg(9)));
        // Not counted: the trip count changes between rows; the counter is set otherwise
        // or steps by 2 towards a BNE limit; the limit moves; counting down with BLT. A base
        // register multiplied: its step unknown, the count still known.
        for nest in [
            format!("{ROW}\n S.SHR s3, s3, 1\n S.SUB s4, s4, 1\n BNE s4, 0, row"),
            format!("{ROW}\n S.MOV s4, s5\n BNE s4, 0, row"),
            format!("{ROW}\n S.SUB s4, s4, 2\n BNE s4, 0, row"),
            format!("{ROW}\n S.ADD s4, s4, 1\n S.ADD s9, s9, 1\n BLT s4, s9, row"),
            format!("{ROW}\n S.SUB s4, s4, 1\n BLT s4, s9, row"),
        ] {
            assert!(nest_count(&nest_at_row(&nest)).is_none(), "{nest}");
        }
        let r = nest_at_row(&format!(
            "{ROW}\n S.MUL s1, s1, 3\n S.SUB s4, s4, 1\n BNE s4, 0, row"
        ));
        let c = nest_count(&r).expect("the rows are still counted");
        assert_eq!(c.steps[1], None, "s1 is multiplied");
    }

    /// The loop region at label `top:` of `src`.
    fn loop_at_top(src: &str) -> crate::region::Region {
        let p = lanejit_interp::asm::assemble(src, "loop.s").expect("assembles");
        let code = Code::of(&lanejit_interp::interp::DecodedCode::decode(&p.code));
        let top = p.symbols.iter().find(|s| s.name == "top").expect("top:");
        let r = discover(&code, top.value, false).expect("a region at top:");
        assert!(r.loop_head.is_some(), "a loop:\n{src}");
        r
    }

    #[test]
    fn scalar_pointers_bumped_by_a_group_make_accesses_contiguous() {
        // saxpy as a compiler strength-reduces it: s1 and s2 bumped by VL * 4 (s10) per
        // iteration, lane offsets v20 (lanes 1 apart) built before the loop, and one access
        // through a vector base made from v20 and s2 after its bump.
        let src = "
            .text
        top: LOOP s3
            V.LW [s1 + (v20 << 2)], ->v0
            V.LW [s2 + (v20 << 2)], ->v1
            V.FMA.S v1, v0, s11
            V.SW v1, [s2 + (v20 << 2)]
            S.ADD s1, s1, s10
            S.SUB s2, s2, s12
            V.SHL v21, v20, 2
            V.ADD v22, v21, s2
            V.LWI.U [v22 + 8], ->v3
            S.ADD s5, s5, 1
            ENDLOOP
            HALT
            ";
        let r = loop_at_top(src);
        let mut seen = Seen {
            sregs: [0; 32],
            strides: [0; 32],
        };
        seen.sregs[10] = 32 * 4;
        seen.sregs[12] = (-32i64 * 4) as u64;
        seen.strides[20] = 1;
        let (hoist, stepped) = hoisted_and_stepped(&r, Some(&seen), 32);
        let kinds: Vec<_> = stepped.iter().map(|st| (st.kind, st.reg, st.e)).collect();
        assert_eq!(
            kinds,
            [
                (StepKind::Scalar, 1, 4),
                (StepKind::Scalar, 2, 4),
                (StepKind::Fixed, 20, 1)
            ]
        );
        assert_eq!(hoist.len(), 4);
        assert!(hoist.iter().all(|h| h.contiguous()));
        // The load after the bump is one group further on, plus its immediate.
        assert_eq!(hoist[3].inv.k, 32 * 4 + 8);
        // At VL 16 the same bumps step 8 bytes per element of LC0BASE, the lanes 4 apart:
        // nothing hoisted. With lanes 2 apart and bumps of 8 bytes a lane, strided by two
        // elements.
        assert!(hoisted_and_stepped(&r, Some(&seen), 16).0.is_empty());
        let mut wide = seen;
        wide.sregs[10] = 16 * 8;
        wide.sregs[12] = (-16i64 * 8) as u64;
        wide.strides[20] = 2;
        let (hoist, _) = hoisted_and_stepped(&r, Some(&wide), 16);
        assert_eq!(hoist.len(), 4);
        assert!(hoist.iter().all(|h| h.strided() && h.log2s == 3));
        // Not without the entry's registers; not when v20's lanes did not step by 1 (a
        // gather), nor when the step is no multiple of VL.
        assert!(hoisted_and_stepped(&r, None, 32).0.is_empty());
        seen.strides[20] = 3;
        assert!(hoisted_and_stepped(&r, Some(&seen), 32).0.is_empty());
        seen.strides[20] = 1;
        seen.sregs[10] = 33 * 4;
        seen.sregs[12] = 33 * 4;
        assert!(hoisted_and_stepped(&r, Some(&seen), 32).0.is_empty());
    }
}
