//! Snippets for the JIT's lane-shape fast paths: vector addresses computed from `V.LC0` and
//! `V.LANEID` (`V.SHL`/`V.MUL` by constants, `V.ADD`/`V.SUB` of scalar bases), used by every
//! load/store form with strides equal to E, 0, other constants and negative ones; uniform
//! vectors as bases; chains that break the shape (a partial `V.SETMASK`, a general vector
//! operand, a scalar the loop body does not know to be constant); FMA chains mixed with
//! FADD/FMUL on NaN/inf/subnormal/-0 data loaded contiguously, a filter's taps in scalars
//! set before the loop or loaded in its body through one scalar base (uniform loads, which
//! the loop's stores may overwrite); integer streams (byte and
//! halfword loads multiplied into an accumulator: the JIT's narrow multiplies; half the time
//! the product goes on through adds, subtracts, products, bitwise operations and shifts by
//! amounts around the lanes' widths before it is stored: its narrow integer lanes); index
//! streams
//! (32-bit index words loaded, then gathers through them, half of them shifted right or
//! masked by an immediate first, or ANDed with a register of lane signs made by `V.SRA 63`:
//! the packed-index gathers and the sign masks, with small and negative indices
//! poked where the loads read; at times also an index loaded before the loop that steps
//! by an immediate in it, gathered through and compared with `V.SUB; V.SRA 63`, SpMV's row
//! index); arrays of structs (two to four fields of 2- or 4-element
//! records loaded through one vector address by field immediates, highest first at times and
//! now and then one at a byte between, or each through a scalar register of its own set
//! before the loop, which moves between rounds half the time; then contiguous stores to one
//! or more arrays: the JIT's interleave groups, its speculated base distances and the
//! reordered stores of its streaming copy); gathers and
//! scatters over a table of several MiB whose span has unmapped holes and read-only pages;
//! and loops the tiered engine strip-mines ([`Shapes::strip_snippet`]: contiguous accesses
//! of one width, lane-wise work, sums carried across iterations, stores in place, apart or
//! overlapping the next lanes' loads).
//!
//! Each snippet is a few [`Item`]s that the body generator pushes as one step. The snippets
//! that build their own hardware loop model every lane's EA ([`Model`]: the arithmetic they
//! emit, mirrored), so they place their bases for the span to fit the region (the data pages,
//! the table or the tile), and on the table they can fault on purpose in the first, a middle or
//! the last iteration (a hole or read-only page exactly where the chosen lane lands) or put
//! holes and read-only pages between lanes where no lane touches. A third of the snippet
//! loops run two or three times, the trip halved each time (or, half of them, kept: rows
//! of one length) and the registers as the run before left them (a loop entered once per
//! row). A fifth index by lane id through vectors
//! computed before the loop, which the loop only reads (the JIT's read-only index bounds),
//! or adds to a register of its own; in a hardware loop, half of those vectors are also
//! stepped by VL times 1, 2, 4, 8, 16 bytes or their lane step every iteration (a stepped
//! pointer: the JIT's speculated stepped bases, hoisted when the step matches the lanes), and
//! half of them bump a scalar base by VL times a step at some point of every iteration
//! ([`Shapes::bump_base`]: a pointer a compiler strength-reduced, the JIT's speculated
//! scalar steps).
//! Some bodies repeat in a scalar branch loop instead (`BNE` back to their start, 2 to 6
//! rounds): the JIT carries packed registers around such back edges. A quarter of those
//! loops each have their test at the top and a `J` back, an early exit in a middle round, or
//! an `if` skipping an instruction in one round (the JIT's traces, with side exits). Rows walked one per
//! lane ([`Shapes::row_snippet`]): a hardware loop whose body builds row addresses at a
//! pitch and walks their columns in a branch loop, bumping the addresses (the JIT's
//! shapes at a branch loop's head).
//! The table is mapped with
//! `.mem` only (untouched pages read zero); a little data (special floating-point values) is
//! placed where snippets read.

use super::generate::{FP_SPECIALS, Item, mem_form, push_page};
use arbitrary::{Result, Unstructured};
use lanejit_interp::isa::*;
use lanejit_interp::program::{DataSeg, MemPerm, MemRange, PAGE_SIZE, Space};

/// First guest address of the table (when a case has one).
pub const TABLE_BASE: u64 = 0x100_0000;

/// The table's base address, set by the prologue when the case has a table.
pub const S_TABLE: SReg = SReg(16);
/// A snippet's first base address.
const S_BASE: SReg = SReg(17);
/// A constant set inside a loop body right before its use (known to the translator).
const S_K: SReg = SReg(18);
/// A snippet loop's trip count.
const S_TRIP: SReg = SReg(19);
/// A snippet's second base address.
const S_BASE2: SReg = SReg(20);
/// The rounds left of a snippet loop run more than once (see [`Shapes::loop_snippet`]).
pub(crate) const S_ROUNDS: SReg = SReg(25);
/// The condition of the branch that splits a snippet loop's body (nothing else uses it).
const S_SPLIT: SReg = SReg(30);
/// Labels of the snippets' repeated loops: this plus a count (far above the generator's own).
const ROUND_LABELS: usize = 1 << 20;
/// Labels of the exits and skips of snippets' branch loops written with more branches
/// ([`Shapes::trace_rounds`]): this plus a count (among the round labels).
const TRACE_LABELS: usize = ROUND_LABELS + (1 << 19);
/// Labels of the branches that split a snippet loop's body (see [`Shapes::loop_snippet`]):
/// this plus a count (above every round label).
const SPLIT_LABELS: usize = 1 << 21;
/// Constants set before a loop (not constants inside its body).
const S_PRE: [u8; 4] = [21, 22, 23, 24];
/// An FMA chain's scalar operands set before its loop (a filter's taps), which nothing else
/// writes.
const S_TAPS: [u8; 4] = [26, 27, 28, 29];
/// Vectors that hold snippet addresses and indices.
const V_ADDR: [u8; 3] = [17, 18, 19];
/// A uniform or temporary vector of the snippets.
const V_TMP: VReg = VReg(20);
/// Lane offsets made before a loop that the loop adds a scalar to (`Shapes::affine`).
const V_ROOT: [u8; 4] = [21, 22, 23, 24];
/// Data vectors: the generator's work vectors, so random code uses the results.
const V_DATA: [u8; 6] = [7, 8, 9, 10, 11, 12];

/// Floating-point bit patterns for FMA chains besides the generator's specials (NaNs,
/// infinities, signed zeros, subnormals, extremes): zero, a subnormal and the smallest normal,
/// and products that cancel (`(1+u)(1-u) - 1`), where a fused multiply-add differs from a
/// separate multiply and add.
const F32_MORE: [u32; 8] = [
    0x0000_0000,
    0x0040_0000,
    0x0080_0000,
    0x3f80_0001,
    0x3f7f_ffff,
    0xbf80_0000,
    0x3fc0_0000,
    0xc040_0000,
];
const F64_MORE: [u64; 6] = [
    0x0008_0000_0000_0000,
    0x3ff0_0000_0000_0001,
    0x3fef_ffff_ffff_ffff,
    0xbff0_0000_0000_0000,
    0x3ff8_0000_0000_0000,
    0xc008_0000_0000_0000,
];

/// An f32 bit pattern for FMA data.
fn f32_bits(u: &mut Unstructured) -> Result<u32> {
    Ok(if u.ratio(1, 2)? {
        pick(u, &FP_SPECIALS[..10])? as u32
    } else {
        pick(u, &F32_MORE)?
    })
}

/// An f32 in (-4, -0.5] or [0.5, 4) with a random mantissa.
fn near_one_f32(u: &mut Unstructured) -> Result<u32> {
    let sign = u32::from(u.ratio(1, 4)?) << 31;
    let exp: u32 = u.int_in_range(126..=128)?;
    Ok(sign | exp << 23 | (u.arbitrary::<u32>()? & 0x7f_ffff))
}

/// An f64 in (-4, -0.5] or [0.5, 4) with a random mantissa.
fn near_one_f64(u: &mut Unstructured) -> Result<u64> {
    let sign = u64::from(u.ratio(1, 4)?) << 63;
    let exp: u64 = u.int_in_range(1022..=1024)?;
    Ok(sign | exp << 52 | (u.arbitrary::<u64>()? & 0xf_ffff_ffff_ffff))
}

/// An f64 bit pattern for FMA data.
fn f64_bits(u: &mut Unstructured) -> Result<u64> {
    Ok(if u.ratio(1, 2)? {
        pick(u, &FP_SPECIALS[10..])?
    } else {
        pick(u, &F64_MORE)?
    })
}

fn pick<T: Copy>(u: &mut Unstructured, xs: &[T]) -> Result<T> {
    Ok(*u.choose(xs)?)
}

fn li(sd: SReg, imm: u64) -> Item {
    Item::Inst(Inst::SLi(SLi { sd, imm }))
}

/// `op r, r, x`: a scalar register bumped by `x`.
fn valu_s(op: fn(SAlu) -> Inst, r: SReg, x: SOrImm) -> Item {
    Item::Inst(op(SAlu {
        sd: r,
        sa: r,
        sb: x,
    }))
}

/// The next draw below `n` (0 for `n` 0) of the SplitMix64 generator whose state is `seed`:
/// the shapes a snippet draws from a seed made of its earlier draws rather than from the
/// case's bytes, so that adding them leaves every other shape of a case as it was.
fn splitmix(seed: &mut u64, n: u64) -> u64 {
    *seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *seed;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) % n.max(1)
}

/// Half the time, integer work on the product `p` of two narrow loads `ab` (a step or
/// more of `p = p op x` with `x` one of them or an immediate: adds, subtracts, products,
/// bitwise operations, shifts by amounts around the lanes' widths), which the JIT computes on
/// the narrowest lanes the results' bounds allow and stores, at a width the stream chose, by
/// packing the lanes' low bytes (`Tx::narrow_int`). Drawn from `seed` (see [`splitmix`]).
fn narrow_chain(seed: u64, p: VReg, ab: [VReg; 2], body: &mut Vec<Item>) {
    const IMMS: [i32; 13] = [
        0,
        1,
        3,
        128,
        255,
        256,
        0x7fff,
        0xffff,
        0x1_0000,
        7282,
        -1,
        -256,
        i32::MAX,
    ];
    const SHIFTS: [i32; 14] = [0, 1, 4, 7, 8, 9, 15, 16, 17, 31, 32, 48, 56, 63];
    let mut seed = seed ^ 0x3c6e_f372_fe94_f82b;
    let mut draw = |n: u64| splitmix(&mut seed, n);
    if draw(2) == 0 {
        return;
    }
    for _ in 0..=draw(5) {
        let ops: [fn(VAlu) -> Inst; 9] = [
            Inst::VAdd,
            Inst::VSub,
            Inst::VMul,
            Inst::VAnd,
            Inst::VOr,
            Inst::VXor,
            Inst::VShl,
            Inst::VShr,
            Inst::VSra,
        ];
        let k = draw(9) as usize;
        let x = if k >= 6 {
            VSrc::Imm(SHIFTS[draw(SHIFTS.len() as u64) as usize])
        } else if draw(3) == 0 {
            VSrc::Imm(IMMS[draw(IMMS.len() as u64) as usize])
        } else {
            VSrc::V(ab[draw(2) as usize])
        };
        body.push(valu(ops[k], p, p, x));
    }
}

/// `BNE sa, 0` to label `l`.
fn bne_zero(sa: SReg, l: usize) -> Item {
    Item::Branch(
        Inst::Bne(Branch {
            sa,
            sb: SOrImm::Imm(0),
            target: Target(0),
        }),
        l,
    )
}

/// The end of a round of the rounds at label `l`: `S_ROUNDS` counted down, back to `l`
/// while rounds are left.
fn round_end(l: usize) -> [Item; 2] {
    let dec = SAlu {
        sd: S_ROUNDS,
        sa: S_ROUNDS,
        sb: SOrImm::Imm(1),
    };
    [Item::Inst(Inst::SSub(dec)), bne_zero(S_ROUNDS, l)]
}

fn valu(f: fn(VAlu) -> Inst, vd: VReg, va: VReg, vb: VSrc) -> Item {
    Item::Inst(f(VAlu { vd, va, vb }))
}

/// `value` as an ALU immediate, when it fits simm32.
fn imm32(value: u64) -> Option<i32> {
    i32::try_from(value as i64).ok()
}

/// A table of several MiB after the data pages: mostly read-write, with unmapped pages and
/// read-only pages, some random, some placed by snippets.
#[derive(Clone, Debug)]
pub struct Table {
    /// Permission of each page (`None`: unmapped).
    perms: Vec<Option<MemPerm>>,
}

impl Table {
    /// A table of 1, 2, 4 or 8 MiB with up to three random holes or read-only pages.
    pub fn new(u: &mut Unstructured) -> Result<Table> {
        let pages = pick(u, &[256usize, 512, 1024, 2048])?;
        let mut perms = vec![Some(MemPerm::Rw); pages];
        for _ in 0..u.int_in_range(0..=3)? {
            let p = u.int_in_range(0..=pages - 1)?;
            perms[p] = if u.ratio(1, 2)? {
                None
            } else {
                Some(MemPerm::R)
            };
        }
        Ok(Table { perms })
    }

    /// Size in bytes.
    pub fn len(&self) -> u64 {
        self.perms.len() as u64 * PAGE_SIZE
    }

    /// Whether the table has no pages (never, for a generated one).
    pub fn is_empty(&self) -> bool {
        self.perms.is_empty()
    }

    fn set(&mut self, addr: u64, perm: Option<MemPerm>) {
        if let Some(p) = addr
            .checked_sub(TABLE_BASE)
            .map(|o| (o / PAGE_SIZE) as usize)
            .and_then(|i| self.perms.get_mut(i))
        {
            *p = perm;
        }
    }

    fn mapped(&self, addr: u64, len: u64) -> bool {
        let Some(o) = addr.checked_sub(TABLE_BASE) else {
            return false;
        };
        len > 0
            && o.checked_add(len).is_some_and(|end| end <= self.len())
            && (o / PAGE_SIZE..=(o + len - 1) / PAGE_SIZE).all(|p| self.perms[p as usize].is_some())
    }

    /// The table's mapped ranges (runs of one permission merged).
    pub fn ranges(&self) -> Vec<MemRange> {
        let mut out: Vec<MemRange> = Vec::new();
        for (i, perm) in self.perms.iter().enumerate() {
            let Some(perm) = *perm else { continue };
            push_page(&mut out, TABLE_BASE + i as u64 * PAGE_SIZE, perm);
        }
        out
    }
}

/// What the snippets know of the case, and what they add to it.
#[derive(Debug)]
pub struct Shapes {
    /// The case's VL.
    pub vl: u32,
    /// Tile size in bytes.
    pub tile_size: u64,
    /// First address and length of the data pages.
    pub data_region: (u64, u64),
    /// The table, if the case has one.
    pub table: Option<Table>,
    /// Bytes to place in memory: written over the data pages' contents, or added as data in
    /// the table ([`Shapes::finish`] drops what would land on unmapped pages).
    pokes: Vec<(u64, Vec<u8>)>,
    /// Next of [`S_PRE`] to use.
    pre: usize,
    /// Next of [`V_ROOT`] to use.
    root: usize,
    /// The loop being made is a branch loop: [`Shapes::affine`] may bump the lane offsets it
    /// hoists before the loop at the end of each round.
    rounds_loop: bool,
    /// While set, [`Shapes::accesses`] makes accesses of width `1 << .0` with stride E, all
    /// loads (`.1` false) or all stores of what is in `loads` (`.1` true).
    force: Option<(u8, bool)>,
    /// While set, [`Shapes::accesses`] makes two to four loads of the fields of an array of
    /// structs: a vector address with records 2 or 4 elements apart, and field
    /// immediates (the JIT's interleave groups).
    aos: bool,
    /// The field registers of the last array-of-structs loop whose fields go through
    /// registers of their own, with the element width and record stride.
    aos_regs: Vec<(SReg, u64, u64)>,
    /// Snippet loops run more than once so far (their labels, see [`ROUND_LABELS`]).
    rounds: usize,
    /// Labels of [`TRACE_LABELS`] used so far.
    trace_labels: usize,
    /// Snippet loops split by a branch so far (their labels, see [`SPLIT_LABELS`]).
    splits: usize,
    /// While set, [`Shapes::accesses`] computes its index vectors before the loop (lane-id
    /// based): registers the loop only reads, as a compiler hoists lane offsets.
    hoist_index: bool,
}

/// Where a snippet's lanes get their index: the loop counter or the lane id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Src {
    Lc,
    Id,
}

/// A lane's EA relative to its base register: `((c + lane * mul) & and) << sh) + add`, all
/// wrapping (the arithmetic the snippet emitted, mirrored).
#[derive(Clone, Copy, Debug)]
struct Model {
    c: u64,
    mul: u64,
    and: u64,
    sh: u32,
    add: u64,
}

impl Model {
    fn rel(&self, lane: u64) -> i64 {
        let idx = self.c.wrapping_add(lane.wrapping_mul(self.mul)) & self.and;
        (idx << (self.sh & 63)).wrapping_add(self.add) as i64
    }
}

/// One access of a snippet: its direction, width, base register and lane EAs (`None` when a
/// shape breaker made them unknown).
#[derive(Clone, Copy, Debug)]
struct Acc {
    store: bool,
    width: u64,
    base: SReg,
    model: Option<Model>,
}

/// The region a snippet loop's bases are placed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Region {
    Data,
    Table,
    Tile,
}

impl Shapes {
    /// Snippet state for a case.
    pub fn new(vl: u32, tile_size: u64, data_region: (u64, u64), table: Option<Table>) -> Self {
        Shapes {
            vl,
            tile_size,
            data_region,
            table,
            pokes: Vec::new(),
            pre: 0,
            root: 0,
            rounds_loop: false,
            force: None,
            aos: false,
            aos_regs: Vec::new(),
            rounds: 0,
            trace_labels: 0,
            splits: 0,
            hoist_index: false,
        }
    }

    /// Add the table's map and the snippets' data to the case.
    pub fn finish(self, mem_map: &mut Vec<MemRange>, data: &mut Vec<DataSeg>) {
        if let Some(t) = &self.table {
            mem_map.extend(t.ranges());
        }
        for (addr, bytes) in self.pokes {
            let len = bytes.len() as u64;
            let seg = data.iter_mut().find(|d| {
                d.space == Space::Memory
                    && d.addr <= addr
                    && addr
                        .checked_add(len)
                        .is_some_and(|end| end <= d.addr + d.bytes.len() as u64)
            });
            if let Some(d) = seg {
                let at = (addr - d.addr) as usize;
                d.bytes[at..at + bytes.len()].copy_from_slice(&bytes);
            } else if self.table.as_ref().is_some_and(|t| t.mapped(addr, len)) {
                data.push(DataSeg {
                    space: Space::Memory,
                    addr,
                    bytes,
                });
            }
        }
    }

    /// A vector register for lane offsets made before a loop that only reads it.
    fn root_reg(&mut self) -> VReg {
        let r = VReg(V_ROOT[self.root % V_ROOT.len()]);
        self.root += 1;
        r
    }

    /// A scalar for a constant set before a loop.
    fn pre_reg(&mut self) -> SReg {
        let r = SReg(S_PRE[self.pre % S_PRE.len()]);
        self.pre += 1;
        r
    }

    /// Emit `vd = c + lane * mul` (lane: lc0 or lane id) in one of several spellings the
    /// shape analysis follows (or, with `breakers`, some it does not follow but that compute
    /// the same values). `pre` receives instructions that must run before the loop (all of
    /// them while `hoist_index` is set). Returns whether the values are still as modelled (a partial mask breaks that).
    #[allow(clippy::too_many_arguments)]
    fn affine(
        &mut self,
        u: &mut Unstructured,
        vd: VReg,
        src: Src,
        mul: u64,
        c: u64,
        breakers: bool,
        pre: &mut Vec<Item>,
        body: &mut Vec<Item>,
    ) -> Result<bool> {
        if self.hoist_index {
            // Before the loop: the loop only reads `vd`; or, a third of the time, the loop
            // makes `vd` from such a register by adding the rest of `c` (by a scalar set
            // before the loop or in it, or an immediate; after a `V.MOV` or not): lane
            // offsets a compiler built before a loop plus the loop's own offset (the JIT's
            // `Tx::ro_plus`).
            let split = u.ratio(1, 3)?;
            let (to, part) = if split {
                let part = match u.int_in_range(0..=3)? {
                    0 => 0,
                    1 => pick(u, &[4u64, 8, 16, 0x100, 0x1000])?,
                    2 => pick(u, &[4u64, 8, 16, 0x1000])?.wrapping_neg(),
                    _ => c,
                };
                (self.root_reg(), part)
            } else {
                (vd, 0)
            };
            let mut before = Vec::new();
            self.hoist_index = false;
            let exact = self.affine(
                u,
                to,
                src,
                mul,
                c.wrapping_sub(part),
                breakers,
                pre,
                &mut before,
            );
            self.hoist_index = true;
            pre.extend(before);
            if split {
                match u.int_in_range(0..=3)? {
                    0 => {
                        let r = self.pre_reg();
                        pre.push(li(r, part));
                        body.push(valu(Inst::VAdd, vd, to, VSrc::S(r)));
                    }
                    1 if imm32(part).is_some() => {
                        body.push(valu(
                            Inst::VAdd,
                            vd,
                            to,
                            VSrc::Imm(imm32(part).unwrap_or(0)),
                        ));
                    }
                    2 if imm32(part.wrapping_neg()).is_some() => {
                        let k = imm32(part.wrapping_neg()).unwrap_or(0);
                        body.push(valu(Inst::VSub, vd, to, VSrc::Imm(k)));
                    }
                    _ => {
                        body.push(Item::Inst(Inst::VMov(VMov {
                            vd,
                            src: VSrc::V(to),
                        })));
                        self.add_const(u, vd, part, body)?;
                    }
                }
                if self.rounds_loop && u.ratio(1, 2)? {
                    // In a branch loop, the offsets bumped once `vd` is made from them (by
                    // nothing, or by a few bytes either way): a register the loop writes
                    // only by adding to itself, whose lanes keep stepping as they did at
                    // entry (the JIT's `Tx::ind_of`). A bump moves the next round's lanes
                    // off the modelled ones; this round's accesses go through `vd`.
                    // Or rewritten otherwise (neighbouring lanes swapped, or three times
                    // as far apart): the entry's lane step no longer holds after the round.
                    let (op, k): (fn(VAlu) -> Inst, i32) = match u.int_in_range(0..=5)? {
                        0 | 1 => (Inst::VAdd, pick(u, &[0, 0, 0, 1, 4, 8, -8])?),
                        2 | 3 => (Inst::VSub, pick(u, &[0, 0, 0, 1, 4, 8, -8])?),
                        4 => (Inst::VXor, pick(u, &[1, 8])?),
                        _ => (Inst::VMul, 3),
                    };
                    body.push(valu(op, to, to, VSrc::Imm(k)));
                } else if !self.rounds_loop && u.ratio(1, 2)? {
                    // In an `ENDLOOP` loop, the offsets stepped by VL times a lane step each
                    // iteration, as a compiler steps a pointer (the JIT's
                    // `analysis::Stepped`): by their own lanes' step, every iteration's lanes
                    // step as the entry's did and the accesses through `vd` are hoisted; by
                    // another, the JIT's entry test fails. Iterations after the first leave
                    // the modelled lanes.
                    let m = pick(u, &[1u64, 2, 4, 8, 16, mul])?;
                    let step = u64::from(self.vl).wrapping_mul(m);
                    match u.int_in_range(0..=2)? {
                        0 if imm32(step).is_some() => {
                            let k = imm32(step).unwrap_or(0);
                            body.push(valu(Inst::VAdd, to, to, VSrc::Imm(k)));
                        }
                        1 => {
                            let r = self.pre_reg();
                            pre.push(li(r, step.wrapping_neg()));
                            body.push(valu(Inst::VSub, to, to, VSrc::S(r)));
                        }
                        _ => {
                            let r = self.pre_reg();
                            pre.push(li(r, step));
                            body.push(valu(Inst::VAdd, to, to, VSrc::S(r)));
                        }
                    }
                }
            }
            return exact;
        }
        let mut exact = true;
        if mul == 0 {
            // Uniform: a scalar or immediate broadcast, or lanes times zero.
            match u.int_in_range(0..=2)? {
                0 if imm32(c).is_some() => body.push(Item::Inst(Inst::VMov(VMov {
                    vd,
                    src: VSrc::Imm(imm32(c).unwrap_or(0)),
                }))),
                1 => {
                    body.push(Item::Inst(lane_src(vd, src)));
                    body.push(valu(Inst::VMul, vd, vd, VSrc::Imm(0)));
                    self.add_const(u, vd, c, body)?;
                }
                _ => {
                    body.push(li(S_K, c));
                    body.push(Item::Inst(Inst::VMov(VMov {
                        vd,
                        src: VSrc::S(S_K),
                    })));
                }
            }
            return Ok(true);
        }
        // Negative strides sometimes as `c - lane * |mul|`.
        let negate = (mul as i64) < 0 && u.ratio(1, 3)?;
        let m = if negate { mul.wrapping_neg() } else { mul };
        body.push(Item::Inst(lane_src(vd, src)));
        let mask_break = breakers && u.ratio(1, 6)?;
        if mask_break {
            // A partial mask around the scaling: the shape is lost, and so are the values of
            // the inactive lanes.
            body.push(Item::Inst(Inst::SMask(SUnary { sd: SReg(13) })));
            body.push(li(SReg(12), u.arbitrary::<u64>()? | 1));
            body.push(Item::Inst(Inst::VSetmask(VSetMask { sa: SReg(12) })));
            exact = false;
        }
        let pow2 = m.is_power_of_two().then(|| m.trailing_zeros());
        match u.int_in_range(0..=6)? {
            _ if m == 1 && u.ratio(1, 2)? => {}
            0 | 1 if pow2.is_some() => {
                let k = pow2.unwrap_or(0) as i32;
                body.push(valu(Inst::VShl, vd, vd, VSrc::Imm(k)));
            }
            2 if pow2.is_some() => {
                body.push(li(S_K, pow2.unwrap_or(0) as u64));
                body.push(valu(Inst::VShl, vd, vd, VSrc::S(S_K)));
            }
            3 => {
                body.push(li(S_K, m));
                body.push(valu(Inst::VMul, vd, vd, VSrc::S(S_K)));
            }
            4 if breakers => {
                // Constant, but set before the loop: not a constant inside its body.
                let r = self.pre_reg();
                pre.push(li(r, m));
                body.push(valu(Inst::VMul, vd, vd, VSrc::S(r)));
            }
            5 if imm32(m).is_some() => {
                body.push(Item::Inst(Inst::VMov(VMov {
                    vd: V_TMP,
                    src: VSrc::Imm(imm32(m).unwrap_or(0)),
                })));
                body.push(valu(Inst::VMul, vd, V_TMP, VSrc::V(vd)));
            }
            _ => match imm32(m) {
                Some(k) => body.push(valu(Inst::VMul, vd, vd, VSrc::Imm(k))),
                None => {
                    body.push(li(S_K, m));
                    body.push(valu(Inst::VMul, vd, vd, VSrc::S(S_K)));
                }
            },
        }
        if mask_break {
            body.push(Item::Inst(Inst::VSetmask(VSetMask { sa: SReg(13) })));
        }
        if breakers && u.ratio(1, 8)? {
            // A general vector operand that cancels out: same values, no shape.
            let g = VReg(pick(u, &[1u8, 2, 3, 4, 5, 6])?);
            body.push(valu(Inst::VAdd, vd, vd, VSrc::V(g)));
            body.push(valu(Inst::VSub, vd, vd, VSrc::V(g)));
        }
        if negate {
            // vd = c - lane * |mul|
            match imm32(c) {
                Some(k) if u.ratio(1, 2)? => body.push(Item::Inst(Inst::VMov(VMov {
                    vd: V_TMP,
                    src: VSrc::Imm(k),
                }))),
                _ => {
                    body.push(li(S_K, c));
                    body.push(Item::Inst(Inst::VMov(VMov {
                        vd: V_TMP,
                        src: VSrc::S(S_K),
                    })));
                }
            }
            body.push(valu(Inst::VSub, vd, V_TMP, VSrc::V(vd)));
        } else {
            self.add_const(u, vd, c, body)?;
        }
        Ok(exact)
    }

    /// `vd += c` (an immediate, a scalar, or `V.SUB` of the negation); nothing when `c` is 0
    /// (sometimes `+ 0` all the same).
    fn add_const(
        &mut self,
        u: &mut Unstructured,
        vd: VReg,
        c: u64,
        body: &mut Vec<Item>,
    ) -> Result<()> {
        if c == 0 && u.ratio(3, 4)? {
            return Ok(());
        }
        match (imm32(c), imm32(c.wrapping_neg()), u.int_in_range(0..=2)?) {
            (Some(k), _, 0) => body.push(valu(Inst::VAdd, vd, vd, VSrc::Imm(k))),
            (_, Some(k), 1) => body.push(valu(Inst::VSub, vd, vd, VSrc::Imm(k))),
            _ => {
                body.push(li(S_K, c));
                body.push(valu(Inst::VAdd, vd, vd, VSrc::S(S_K)));
            }
        }
        Ok(())
    }

    /// `vd += base` for a base address in a scalar: `V.ADD` of the scalar, or of a uniform
    /// vector (`V.MOV` of the scalar), in either operand order.
    fn add_base(u: &mut Unstructured, vd: VReg, base: SReg, body: &mut Vec<Item>) -> Result<()> {
        if u.ratio(2, 3)? {
            body.push(valu(Inst::VAdd, vd, vd, VSrc::S(base)));
        } else {
            body.push(Item::Inst(Inst::VMov(VMov {
                vd: V_TMP,
                src: VSrc::S(base),
            })));
            body.push(valu(Inst::VAdd, vd, V_TMP, VSrc::V(vd)));
        }
        Ok(())
    }

    /// An EA stride for an access of `width` bytes: mostly E, else 0, -E, 2E or 4E, another
    /// constant, or (`wide`) one that spreads the lanes over pages.
    fn stride(u: &mut Unstructured, width: u64, wide: bool) -> Result<u64> {
        let e = width as i64;
        Ok(match u.int_in_range(0..=19)? {
            0..=7 => e,
            // Fields of arrays of structs, channels of pixels, columns (the JIT's hoisted
            // strided loads: elements 2 or 4 elements apart, 4- and 8-byte ones also up to
            // 4096 bytes apart).
            8 => pick(u, &[2 * e, 4 * e, 2 * e, 4 * e, 16 * e, 64 * e])?,
            9 | 10 => 0,
            11 => -e,
            12 => -2 * e,
            13 => pick(u, &[2 * e, 4 * e])?,
            14 => pick(u, &[1i64, 3, 12, 24, 40, -3])?,
            15 if width > 1 => e / 2,
            16..=19 if wide => match u.int_in_range(0..=3)? {
                0 => PAGE_SIZE as i64 + e,
                1 => pick(u, &[8192i64, 65536, -65536, 4096 * 5 + 8])?,
                2 => u.int_in_range(1..=512)? * e * 17,
                _ => -(u.int_in_range(1..=64)? * 4096),
            },
            _ => e,
        } as u64)
    }

    /// An index vector and one to three accesses using it, in any form, with bases in
    /// `bases` (`bases[0]` first). `loop_src`: whether lanes index by lc0. Returns the accesses.
    #[allow(clippy::too_many_arguments)]
    fn accesses(
        &mut self,
        u: &mut Unstructured,
        src: Src,
        local: bool,
        wide: bool,
        bases: &[SReg],
        pre: &mut Vec<Item>,
        body: &mut Vec<Item>,
        loads: &mut Vec<VReg>,
    ) -> Result<Vec<Acc>> {
        let (log2e, width, d) = match self.force {
            Some((log2e, _)) => (log2e, 1u64 << log2e, 1u64 << log2e),
            None if self.aos => {
                // Mostly 4-byte fields, mostly of 4-field records.
                let log2e: u8 = pick(u, &[0, 1, 2, 2, 3])?;
                let width = 1u64 << log2e;
                (log2e, width, width * pick(u, &[2u64, 4, 4])?)
            }
            None => {
                let log2e: u8 = u.int_in_range(0..=3)?;
                let width = 1u64 << log2e;
                (log2e, width, Self::stride(u, width, wide)?)
            }
        };
        let vi = VReg(pick(u, &V_ADDR)?);
        let mut out = Vec::new();
        let breakers = u.ratio(1, 4)?;
        // The form: 0 scalar base + vector offset, 1 uniform vector base + vector offset,
        // 2 vector address + immediate, 3 vector address + scalar offset, 4 contiguous,
        // 5 a general (hashed) index spread over the region.
        let form = match u.int_in_range(0..=11)? {
            // Fields through the vector address and immediates, or each through a register
            // of its own set before the loop (`V.LW [sF + (lc0 << 4)]`: the JIT's speculated
            // base distances).
            _ if self.aos => pick(u, &[0, 2])?,
            0..=3 => 0,
            4 | 5 => 1,
            6..=8 => 2,
            9 => 3,
            10 if src == Src::Lc && d == width => 4,
            11 if wide && self.force.is_none() => 5,
            _ => 0,
        };
        let n = if self.aos {
            pick(u, &[2, 3, 4, 4])?
        } else {
            u.int_in_range(1..=3)?
        };
        match form {
            0 | 1 | 5 => {
                // EA = base + ((c + lane * mul) << sh); pick sh then mul so that the stride is d.
                let sh: u32 = if form == 5 || u.ratio(2, 3)? {
                    log2e as u32
                } else {
                    u.int_in_range(0..=4)?
                };
                let (mul, sh) = if d.trailing_zeros() >= sh || d == 0 {
                    ((d as i64 >> sh) as u64, sh)
                } else {
                    (d, 0)
                };
                let c = pick(u, &[0u64, 0, 1, 2, 7])?;
                let model = if form == 5 {
                    // (lane * K) & M: a general index over the whole region.
                    let k = pick(u, &[0x9e37u64, 40503, 2654435761, 7919])?;
                    let span = self.region_len(local, wide) >> sh;
                    let m = (span + 1).next_power_of_two() / 4 - 1;
                    body.push(Item::Inst(lane_src(vi, src)));
                    match imm32(k) {
                        Some(k) => body.push(valu(Inst::VMul, vi, vi, VSrc::Imm(k))),
                        None => {
                            body.push(li(S_K, k));
                            body.push(valu(Inst::VMul, vi, vi, VSrc::S(S_K)));
                        }
                    }
                    body.push(valu(
                        Inst::VAnd,
                        vi,
                        vi,
                        VSrc::Imm(imm32(m).unwrap_or(0xfff)),
                    ));
                    Some(Model {
                        c: 0,
                        mul: k,
                        and: imm32(m).map_or(0xfff, |m| m as i64 as u64),
                        sh,
                        add: 0,
                    })
                } else {
                    let exact = self.affine(u, vi, src, mul, c, breakers, pre, body)?;
                    exact.then_some(Model {
                        c,
                        mul,
                        and: u64::MAX,
                        sh,
                        add: 0,
                    })
                };
                let fields: Vec<u64> = if u.ratio(1, 2)? {
                    (0..n as u64).rev().collect()
                } else {
                    (0..n as u64).collect()
                };
                for (k, &f) in fields.iter().enumerate() {
                    let base = bases[k % bases.len()];
                    let store = !self.aos && self.store_choice(u)?;
                    let mut model = model;
                    let base_reg = if self.aos {
                        // sF = base + f E before the loop.
                        let r = self.pre_reg();
                        pre.push(Item::Inst(Inst::SAdd(SAlu {
                            sd: r,
                            sa: base,
                            sb: SOrImm::Imm((f * width) as i32),
                        })));
                        if let Some(m) = model.as_mut() {
                            m.add = f * width;
                        }
                        self.aos_regs.push((r, width, d));
                        Reg::S(r.0)
                    } else if form == 1 {
                        body.push(Item::Inst(Inst::VMov(VMov {
                            vd: V_TMP,
                            src: VSrc::S(base),
                        })));
                        Reg::V(V_TMP.0)
                    } else {
                        Reg::S(base.0)
                    };
                    let op = pick_op(u, store, log2e, |m| match m.mode {
                        Mode::RegOff { add_width } => !add_width || sh >= log2e as u32,
                        _ => false,
                    })?;
                    let shamt = op.mem().map_or(0, |m| sh.saturating_sub(m.reg_shift(0))) as u8;
                    let addr = MemAddr::RegOff {
                        base: base_reg,
                        off: Reg::V(vi.0),
                        shamt,
                    };
                    self.push_access(u, op, addr, local, store, body, loads)?;
                    out.push(Acc {
                        store,
                        width,
                        base,
                        model,
                    });
                }
            }
            2 | 3 => {
                // vA = base + c + lane * d; EA = vA + imm, or vA + (sK << shamt).
                let c = pick(u, &[0u64, 0, 8, 64])?;
                let exact = self.affine(u, vi, src, d, c, breakers, pre, body)?;
                let base = bases[0];
                Self::add_base(u, vi, base, body)?;
                // Fields: the k-th access at byte k E of each record (in any order), now
                // and then at a byte between.
                let mut fields: Vec<i32> = (0..n as i32).collect();
                if self.aos && u.ratio(1, 2)? {
                    fields.reverse();
                }
                for &f in &fields {
                    let store = !self.aos && self.store_choice(u)?;
                    let (op, addr, add) = if form == 2 {
                        let op = pick_op(u, store, log2e, |m| matches!(m.mode, Mode::Imm { .. }))?;
                        let imm = if self.aos {
                            let scaled = op
                                .mem()
                                .is_some_and(|m| m.mode == Mode::Imm { scaled: true });
                            match (scaled, u.int_in_range(0..=9)?) {
                                (false, 0) => f * width as i32 + 1,
                                (false, _) => f * width as i32,
                                (true, _) => f,
                            }
                        } else {
                            pick(u, &[0i32, 0, 1, -1, 2, 5, -4, 100])?
                        };
                        let ms = op.mem().map(|m| m.imm_offset(imm)).unwrap_or(0);
                        (
                            op,
                            MemAddr::Imm {
                                base: Reg::V(vi.0),
                                imm,
                            },
                            ms,
                        )
                    } else {
                        let op =
                            pick_op(u, store, log2e, |m| matches!(m.mode, Mode::RegOff { .. }))?;
                        let k = pick(u, &[0u64, 1, 2, 8])?;
                        let off = if k == 0 { SReg(0) } else { S_K };
                        if k != 0 {
                            body.push(li(S_K, k));
                        }
                        let shamt = u.int_in_range(0..=3)?;
                        let total = op.mem().map_or(0, |m| m.reg_shift(shamt));
                        (
                            op,
                            MemAddr::RegOff {
                                base: Reg::V(vi.0),
                                off: Reg::S(off.0),
                                shamt,
                            },
                            k << total,
                        )
                    };
                    self.push_access(u, op, addr, local, store, body, loads)?;
                    out.push(Acc {
                        store,
                        width,
                        base,
                        model: exact.then_some(Model {
                            c,
                            mul: d,
                            and: u64::MAX,
                            sh: 0,
                            add,
                        }),
                    });
                }
            }
            _ => {
                // The contiguous form itself, among the others.
                for k in 0..n {
                    let base = bases[k % bases.len()];
                    let store = self.store_choice(u)?;
                    let op = pick_op(u, store, log2e, |m| m.mode == Mode::Contig)?;
                    let off = pick(u, &[0i32, 0, width as i32, -(width as i32)])?;
                    let addr = MemAddr::Contig {
                        base,
                        off: SOrImm::Imm(off),
                    };
                    self.push_access(u, op, addr, local, store, body, loads)?;
                    out.push(Acc {
                        store,
                        width,
                        base,
                        model: Some(Model {
                            c: 0,
                            mul: width,
                            and: u64::MAX,
                            sh: 0,
                            add: off as i64 as u64,
                        }),
                    });
                }
            }
        }
        Ok(out)
    }

    fn region_len(&self, local: bool, wide: bool) -> u64 {
        match (local, &self.table) {
            (true, _) => self.tile_size,
            (false, Some(t)) if wide => t.len(),
            _ => self.data_region.1,
        }
    }

    /// Whether the next access is a store: forced, or two times in five.
    fn store_choice(&self, u: &mut Unstructured) -> Result<bool> {
        match self.force {
            Some((_, store)) => Ok(store),
            None => u.ratio(2, 5),
        }
    }

    /// Push a load (into a data vector, recorded in `loads`) or a store (of a data vector,
    /// sometimes one just loaded, or a scalar).
    #[allow(clippy::too_many_arguments)]
    fn push_access(
        &mut self,
        u: &mut Unstructured,
        op: Opcode,
        addr: MemAddr,
        local: bool,
        store: bool,
        body: &mut Vec<Item>,
        loads: &mut Vec<VReg>,
    ) -> Result<()> {
        let data = if store {
            match u.int_in_range(0..=5)? {
                _ if self.force.is_some() && !loads.is_empty() => Reg::V(pick(u, loads)?.0),
                0 => Reg::S(pick(u, &[0u8, 9, 14])?),
                // Lane-varying data (the prologue's lane vectors): which lane's bytes win
                // where lanes overlap shows.
                3 => Reg::V(pick(u, &[1u8, 2, 3, 4, 5, 6])?),
                1 | 2 if !loads.is_empty() => Reg::V(pick(u, loads)?.0),
                _ => Reg::V(pick(u, &V_DATA)?),
            }
        } else {
            let v = VReg(pick(u, &V_DATA)?);
            loads.push(v);
            Reg::V(v.0)
        };
        if let Some(inst) = mem_form(op, data, addr, local) {
            body.push(Item::Inst(inst));
        }
        Ok(())
    }

    /// A floating-point chain: FMAs (mostly) mixed with FADD/FMUL/FSUB, f32 or f64 or both,
    /// on `srcs` (loaded data, say) and special values; results in data vectors. With `pre`
    /// (a loop's instructions before it), sometimes four scalars set there (special values,
    /// garbage above an f32's low word) are the second operands of the chain's first four
    /// operations: a filter's taps, which the JIT's streaming copy broadcasts in every round
    /// (`ROUND_SPLATS_MIN` in `lanejit_jit`); or, a third of the time, loaded in the body by
    /// uniform loads from the data region (the JIT's hoisted accesses of stride 0).
    fn fp_chain(
        &mut self,
        u: &mut Unstructured,
        srcs: &[VReg],
        f64: Option<bool>,
        body: &mut Vec<Item>,
        pre: Option<&mut Vec<Item>>,
    ) -> Result<Vec<VReg>> {
        // 0,1: f32; 2,3: f64; 4: mixed
        let width = match f64 {
            Some(false) => 0,
            Some(true) => 2,
            None => u.int_in_range(0..=4)?,
        };
        let mut avail: Vec<VReg> = srcs.to_vec();
        if avail.is_empty() || u.ratio(1, 3)? {
            // A special value broadcast from a scalar (the scalar stays as an operand too).
            let bits = if width < 2 {
                f32_bits(u)? as u64
            } else {
                f64_bits(u)?
            };
            body.push(li(SReg(14), bits));
            let v = VReg(pick(u, &V_DATA)?);
            body.push(Item::Inst(Inst::VMov(VMov {
                vd: v,
                src: VSrc::S(SReg(14)),
            })));
            avail.push(v);
        }
        let mut taps = Vec::new();
        // A third of the filters load their taps in the body instead, each from `s26` plus a
        // constant (uniform loads of data the region holds, which the loop's span check
        // proves once, or a hole or read-only page's, and which its stores may overwrite),
        // drawn from the taps' bits (see [`splitmix`]).
        let mut tap_base = None;
        if let Some(pre) = pre {
            if u.ratio(1, 2)? {
                let mut seed = 0u64;
                for r in S_TAPS.map(SReg) {
                    let bits = if width < 2 {
                        u64::from(f32_bits(u)?) | u64::from(u.arbitrary::<u32>()?) << 32
                    } else {
                        f64_bits(u)?
                    };
                    pre.push(li(r, bits));
                    taps.push(r);
                    seed = seed.rotate_left(17) ^ bits;
                }
                let mut draw = |n: u64| splitmix(&mut seed, n);
                if draw(3) == 0 {
                    let (start, len) = self.data_region;
                    let at = start + draw(len / 8 - 4) * 8;
                    pre.push(li(SReg(S_TAPS[0]), at));
                    tap_base = Some(draw(u64::MAX));
                }
            }
        }
        let ops = if taps.is_empty() {
            u.int_in_range(1..=5)?
        } else {
            u.int_in_range(4..=6)?
        };
        let mut outs = Vec::new();
        for k in 0..ops {
            let d = width >= 2 && (width == 2 || width == 3 || u.ratio(1, 2)?);
            let vd = if !outs.is_empty() && u.ratio(1, 2)? {
                pick(u, &outs)?
            } else {
                VReg(pick(u, &V_DATA)?)
            };
            let va = pick(u, &avail)?;
            let vb = if let (Some(_), Some(seed)) = (taps.get(k), tap_base) {
                // Tap `k` loaded into a data register other than `va`.
                let others: Vec<u8> = V_DATA.into_iter().filter(|&n| n != va.0).collect();
                let vt = VReg(others[(seed >> (8 * k)) as usize % others.len()]);
                let op = if d { Opcode::VLdi } else { Opcode::VLwi };
                let addr = MemAddr::Imm {
                    base: Reg::S(S_TAPS[0]),
                    imm: k as i32,
                };
                if let Some(inst) = mem_form(op, Reg::V(vt.0), addr, false) {
                    body.push(Item::Inst(inst));
                }
                VSrc::V(vt)
            } else if let Some(&r) = taps.get(k) {
                VSrc::S(r)
            } else if u.ratio(1, 6)? {
                VSrc::S(SReg(14))
            } else {
                VSrc::V(pick(u, &avail)?)
            };
            let f = VFp { vd, va, vb };
            let inst = match (u.int_in_range(0..=6)?, d) {
                (0..=3, false) => Inst::VFmaS(f),
                (0..=3, true) => Inst::VFmaD(f),
                (4, false) => Inst::VFaddS(f),
                (4, true) => Inst::VFaddD(f),
                (5, false) => Inst::VFmulS(f),
                (5, true) => Inst::VFmulD(f),
                (_, false) => Inst::VFsubS(f),
                (_, true) => Inst::VFsubD(f),
            };
            body.push(Item::Inst(inst));
            if !outs.contains(&vd) {
                outs.push(vd);
            }
            if !avail.contains(&vd) {
                avail.push(vd);
            }
        }
        Ok(outs)
    }

    /// In place (straight code, or inside the generator's current loop): an address chain from
    /// `V.LC0` or `V.LANEID` and accesses with bases the prologue set (data pages, the table,
    /// the tile), sometimes followed by an FMA chain on what was loaded.
    pub fn access_snippet(
        &mut self,
        u: &mut Unstructured,
        in_loop: bool,
        items: &mut Vec<Item>,
    ) -> Result<()> {
        let src = if in_loop || u.ratio(1, 4)? {
            Src::Lc
        } else {
            Src::Id
        };
        let local = u.ratio(1, 5)?;
        let bases: Vec<SReg> = if local {
            vec![SReg(pick(u, &[5u8, 6])?)]
        } else if self.table.is_some() && u.ratio(1, 3)? {
            vec![S_TABLE]
        } else {
            vec![
                SReg(pick(u, &[1u8, 2, 3, 4])?),
                SReg(pick(u, &[1u8, 2, 3, 4])?),
            ]
        };
        let mut pre = Vec::new();
        let mut body = Vec::new();
        let mut loads = Vec::new();
        let wide = !local && bases[0] == S_TABLE;
        self.accesses(u, src, local, wide, &bases, &mut pre, &mut body, &mut loads)?;
        if !loads.is_empty() && u.ratio(1, 3)? {
            self.fp_chain(u, &loads, None, &mut body, None)?;
        }
        items.extend(pre);
        items.extend(body);
        Ok(())
    }

    /// A hardware loop the JIT's tiered engine strip-mines (its `translate::strip`): loads
    /// and stores of one element width through `lc0` forms or a vector address built from
    /// `V.LC0` in the body (immediate offsets), lane-wise integer and floating-point work on
    /// what the body loaded, on registers it reads before writing them (sums carried across
    /// iterations, vectors from before the loop) and on scalars set before the loop, no scalar
    /// written in it. Stores go in place (the very addresses of a load), apart, or a few
    /// elements off a load (over lanes the next ones read, which the form's stretch test must
    /// send to the interpreter); bases lie anywhere in the data pages, so a trip may reach a
    /// read-only page or a hole in any iteration.
    pub fn strip_snippet(&mut self, u: &mut Unstructured, items: &mut Vec<Item>) -> Result<()> {
        let vl = self.vl as u64;
        let log2e: u8 = pick(u, &[0, 1, 2, 2, 2, 3, 3])?;
        let e = 1u64 << log2e;
        let (start, len) = self.data_region;
        let trip = match u.int_in_range(0..=5)? {
            0 => vl * u.int_in_range(2..=8)?,
            1 => vl * u.int_in_range(2..=8)? + u.int_in_range(0..=vl - 1)?,
            2 => u.int_in_range(1..=3 * vl)?,
            _ => u.int_in_range(1..=(len / e).min(2000))?,
        };
        let span = trip * e;
        let base_at = |u: &mut Unstructured| -> Result<u64> {
            let room = len.saturating_sub(span + 64);
            let off = if room > 0 && !u.ratio(1, 6)? {
                u.int_in_range(0..=room)?
            } else {
                u.int_in_range(0..=len - 1)?
            };
            Ok(start + if u.ratio(1, 8)? { off } else { off & !(e - 1) })
        };
        let (b1, b2) = (base_at(u)?, base_at(u)?);
        items.push(li(S_BASE, b1));
        items.push(li(S_BASE2, if u.ratio(1, 4)? { b1 } else { b2 }));
        // Scalar operands: an f32 or f64 near one (or a special), a small integer.
        let (sf, si) = (self.pre_reg(), self.pre_reg());
        let fbits = if log2e == 3 {
            near_one_f64(u)?
        } else {
            u64::from(near_one_f32(u)?)
        };
        items.push(li(sf, fbits));
        items.push(li(si, u.int_in_range(0..=9)?));
        items.push(li(S_TRIP, trip));
        // A third of them are the rows of a nest: 2 to 4 rounds of the loop, the bases
        // stepped by a row in the scalar epilogue (the strip-mined nest).
        let rows = u.ratio(1, 3)?.then(|| {
            self.rounds += 1;
            ROUND_LABELS + self.rounds
        });
        // A row's vector registers made uniform before its loop (a broadcast from memory, a
        // scalar or immediate moved in, arithmetic on those), as matmul's elements of A: the
        // strip-mined nest keeps them at its width and in all VL lanes of the register file;
        // at times one made from lanes instead (`V.LC0`), which keeps the nest out of it.
        // Drawn from a generator seeded with what was drawn already, not from `u`: every
        // other shape of the case stays as it was.
        let mut uniform: Vec<VReg> = Vec::new();
        if let Some(l) = rows {
            items.push(li(S_ROUNDS, u.int_in_range(2..=4u64)?));
            items.push(Item::Label(l));
            let mut seed = b1 ^ b2.rotate_left(21) ^ trip.rotate_left(42) ^ fbits;
            let mut draw = |n: u64| splitmix(&mut seed, n);
            for _ in 0..draw(4) {
                let vd = VReg(V_ROOT[draw(V_ROOT.len() as u64) as usize]);
                match draw(5) {
                    0 => {
                        let ops = mem_ops(false, log2e, |m| matches!(m.mode, Mode::Imm { .. }));
                        if let Some(&op) = ops.get(draw(ops.len().max(1) as u64) as usize) {
                            let scaled = op
                                .mem()
                                .is_some_and(|m| m.mode == Mode::Imm { scaled: true });
                            let k = draw(8) as i32;
                            let addr = MemAddr::Imm {
                                base: Reg::S(S_BASE.0),
                                imm: if scaled { k } else { k * e as i32 },
                            };
                            if let Some(inst) = mem_form(op, Reg::V(vd.0), addr, false) {
                                items.push(Item::Inst(inst));
                            }
                        }
                    }
                    1 => items.push(Item::Inst(Inst::VMov(VMov {
                        vd,
                        src: VSrc::S(if log2e >= 2 { sf } else { si }),
                    }))),
                    2 => items.push(Item::Inst(Inst::VMov(VMov {
                        vd,
                        src: VSrc::Imm(draw(11) as i32 - 3),
                    }))),
                    3 if !uniform.is_empty() => {
                        let va = uniform[draw(uniform.len() as u64) as usize];
                        items.push(valu(Inst::VAdd, vd, va, VSrc::S(si)));
                    }
                    _ => items.push(Item::Inst(Inst::VLc0(VUnary { vd }))),
                }
                if !uniform.contains(&vd) {
                    uniform.push(vd);
                }
            }
        }
        items.push(Item::LoopStart(S_TRIP));
        // Through a vector address (`V.LC0 << log2e` plus a base) or `lc0` forms.
        let vaddr = u.ratio(1, 3)?.then_some(VReg(pick(u, &V_ADDR)?));
        if let Some(va) = vaddr {
            items.push(Item::Inst(Inst::VLc0(VUnary { vd: va })));
            if log2e > 0 {
                items.push(valu(Inst::VShl, va, va, VSrc::Imm(i32::from(log2e))));
            }
            items.push(valu(Inst::VAdd, va, va, VSrc::S(S_BASE)));
        }
        // Element offsets of the accesses from their base (in elements; 0 for in place).
        let access = |u: &mut Unstructured,
                      store: bool,
                      base: SReg,
                      k: i32,
                      v: VReg|
         -> Result<Option<Inst>> {
            let data = Reg::V(v.0);
            Ok(match vaddr {
                Some(va) if base == S_BASE => {
                    let op = pick_op(u, store, log2e, |m| matches!(m.mode, Mode::Imm { .. }))?;
                    let scaled = op
                        .mem()
                        .is_some_and(|m| m.mode == Mode::Imm { scaled: true });
                    let imm = if scaled { k } else { k * e as i32 };
                    let addr = MemAddr::Imm {
                        base: Reg::V(va.0),
                        imm,
                    };
                    mem_form(op, data, addr, false)
                }
                _ => {
                    let op = pick_op(u, store, log2e, |m| m.mode == Mode::Contig)?;
                    let off = SOrImm::Imm(k * e as i32);
                    mem_form(op, data, MemAddr::Contig { base, off }, false)
                }
            })
        };
        let mut written: Vec<VReg> = Vec::new();
        let mut offs = Vec::new();
        for _ in 0..u.int_in_range(1..=3)? {
            let base = pick(u, &[S_BASE, S_BASE2])?;
            let k = pick(u, &[0i32, 0, 1, 2, -1, 3])?;
            let v = VReg(pick(u, &V_DATA)?);
            if let Some(inst) = access(u, false, base, k, v)? {
                items.push(Item::Inst(inst));
                if !written.contains(&v) {
                    written.push(v);
                }
                offs.push((base, k));
            }
        }
        if written.is_empty() {
            items.push(Item::Inst(Inst::VLc0(VUnary {
                vd: VReg(V_DATA[0]),
            })));
            written.push(VReg(V_DATA[0]));
        }
        // Lane-wise work on what the body wrote, and at times on a register it did not
        // write yet (what the code before the loop left: read before the body writes it,
        // a sum carried from one iteration to the next when the body writes it after).
        let any = |u: &mut Unstructured, written: &[VReg]| -> Result<VReg> {
            if u.ratio(1, 4)? {
                Ok(VReg(pick(u, &V_DATA)?))
            } else {
                pick(u, written)
            }
        };
        for _ in 0..u.int_in_range(0..=4)? {
            let va = any(u, &written)?;
            let vd = if u.ratio(1, 2)? {
                va
            } else {
                VReg(pick(u, &V_DATA)?)
            };
            let vb = match u.int_in_range(0..=2)? {
                0 => VSrc::V(any(u, &written)?),
                1 => VSrc::S(if log2e >= 2 { sf } else { si }),
                _ => {
                    let k = u.int_in_range(-3..=7)?;
                    // Every other immediate operand reads a uniform register instead.
                    if !uniform.is_empty() && written.len() % 2 == 1 {
                        VSrc::V(uniform[written.len() % uniform.len()])
                    } else {
                        VSrc::Imm(k)
                    }
                }
            };
            let fp = log2e >= 2 && !matches!(vb, VSrc::Imm(_)) && u.ratio(1, 2)?;
            let inst = if fp {
                let f = VFp { vd, va, vb };
                match (log2e, u.int_in_range(0..=3)?) {
                    (2, 0) => Inst::VFmaS(f),
                    (3, 0) => Inst::VFmaD(f),
                    (2, 1) => Inst::VFmulS(f),
                    (3, 1) => Inst::VFmulD(f),
                    (2, _) => Inst::VFaddS(f),
                    _ => Inst::VFaddD(f),
                }
            } else {
                let o = VAlu { vd, va, vb };
                match u.int_in_range(0..=5)? {
                    0 => Inst::VAdd(o),
                    1 => Inst::VSub(o),
                    2 => Inst::VMul(o),
                    3 => Inst::VXor(o),
                    4 => Inst::VSra(o),
                    _ => Inst::VShl(o),
                }
            };
            items.push(Item::Inst(inst));
            if !written.contains(&vd) {
                written.push(vd);
            }
        }
        let seed = b1 ^ b2.rotate_left(13) ^ trip ^ fbits;
        self.strip_gathers(log2e, seed, &mut written, items);
        self.strip_fields(log2e, seed.rotate_left(29), &mut written, items);
        // Stores: in place of a load, apart (the other base, or far off), or just off a load.
        for _ in 0..u.int_in_range(1..=2)? {
            let (base, k) = match (u.int_in_range(0..=3)?, offs.first()) {
                (0 | 1, Some(&(b, k))) => (b, k),
                (2, Some(&(b, k))) => (b, k + pick(u, &[1i32, -1, 2])?),
                _ => (pick(u, &[S_BASE, S_BASE2])?, pick(u, &[0i32, 64, -64])?),
            };
            let v = pick(u, &written)?;
            if let Some(inst) = access(u, true, base, k, v)? {
                items.push(Item::Inst(inst));
            }
        }
        items.push(Item::LoopEnd);
        if let Some(l) = rows {
            let row = pick(u, &[64u64, 256, 1000])? * e;
            for b in [S_BASE, S_BASE2] {
                items.push(Item::Inst(Inst::SAdd(SAlu {
                    sd: b,
                    sa: b,
                    sb: SOrImm::Imm(row as i32),
                })));
            }
            items.extend(round_end(l));
        }
        Ok(())
    }

    /// Gathers and scatters in a strip-shaped loop body (the strip-mined form computes their
    /// lane addresses ahead of each stretch, `translate::strip`): one or two of them in two
    /// thirds of the bodies, through an index made in the body from what it loaded or
    /// computed (masked to 4 to 8 bits; at times shifted and added to a base, for the
    /// `[v + imm]` form), into the data pages from either base, so a table may reach a hole
    /// or a read-only page in any group and may overlap what the body loads and stores.
    /// Drawn from a generator seeded with `seed` (what the snippet drew already), not from
    /// the case's bytes, so every other shape of a case stays as it was.
    fn strip_gathers(
        &mut self,
        log2e: u8,
        seed: u64,
        written: &mut Vec<VReg>,
        items: &mut Vec<Item>,
    ) {
        let mut seed = seed ^ 0x6a09_e667_f3bc_c908;
        let mut draw = |n: u64| splitmix(&mut seed, n);
        if draw(3) == 0 || written.is_empty() {
            return;
        }
        let e = 1i32 << log2e;
        for _ in 0..=draw(2) {
            let store = draw(3) == 0;
            let vi = written[draw(written.len() as u64) as usize];
            let vx = VReg(V_DATA[draw(V_DATA.len() as u64) as usize]);
            let bits = [4, 6, 8][draw(3) as usize];
            items.push(valu(Inst::VAnd, vx, vi, VSrc::Imm((1 << bits) - 1)));
            let base = [S_BASE, S_BASE2][draw(2) as usize];
            let vector_base = draw(4) == 0;
            let ops = mem_ops(store, log2e, |m| {
                if vector_base {
                    matches!(m.mode, Mode::Imm { .. })
                } else {
                    matches!(m.mode, Mode::RegOff { .. })
                }
            });
            let Some(&op) = ops.get(draw(ops.len() as u64) as usize) else {
                continue;
            };
            let addr = if vector_base {
                // `[v + imm]` off `(index << log2e) + base`.
                if log2e > 0 {
                    items.push(valu(Inst::VShl, vx, vx, VSrc::Imm(i32::from(log2e))));
                }
                items.push(valu(Inst::VAdd, vx, vx, VSrc::S(base)));
                let k = draw(4) as i32 - 1;
                let scaled = op
                    .mem()
                    .is_some_and(|m| m.mode == Mode::Imm { scaled: true });
                MemAddr::Imm {
                    base: Reg::V(vx.0),
                    imm: if scaled { k } else { k * e },
                }
            } else {
                MemAddr::RegOff {
                    base: Reg::S(base.0),
                    off: Reg::V(vx.0),
                    shamt: draw(2) as u8,
                }
            };
            let data = if store {
                written[draw(written.len() as u64) as usize]
            } else {
                VReg(V_DATA[draw(V_DATA.len() as u64) as usize])
            };
            if let Some(inst) = mem_form(op, Reg::V(data.0), addr, false) {
                items.push(Item::Inst(inst));
            }
            for v in [vx, data] {
                if !written.contains(&v) {
                    written.push(v);
                }
            }
        }
    }

    /// Fields of an array of records in a strip-shaped loop body, each through a base
    /// register of its own (`V.LW [s1 + (lc0 << 4)]`, `V.LW [s21 + (lc0 << 4)]` with `s21 = s1
    /// + 4` set right before the loop): the JIT speculates on the registers' distance and
    /// tests it at every stretch (`translate::strip`), and the fields of one record share
    /// their loads (an interleave group). Or, in half of them, stores to the two fields (the
    /// JIT's hoisted strided stores, their pair apart when the fields are: `Tx::stores_apart`).
    /// In a third of the bodies of 4- and 8-byte elements; drawn from a generator seeded with
    /// `seed`, as `Shapes::strip_gathers` is.
    fn strip_fields(
        &mut self,
        log2e: u8,
        seed: u64,
        written: &mut Vec<VReg>,
        items: &mut Vec<Item>,
    ) {
        let mut seed = seed ^ 0xbb67_ae85_84ca_a73b;
        let mut draw = |n: u64| splitmix(&mut seed, n);
        if log2e < 2 || draw(3) != 0 {
            return;
        }
        let Some(at) = items
            .iter()
            .rposition(|it| matches!(it, Item::LoopStart(_)))
        else {
            return;
        };
        // Records of 16 or 32 bytes, or of two fields (whose two stores the JIT interleaves:
        // `Tx::pair_fields`); the second field 1 to 3 elements after the first.
        let log2s = if draw(3) == 0 {
            log2e + 1
        } else {
            4 + draw(2) as u8
        };
        let e = 1u64 << log2e;
        let fields = (1u64 << log2s) / e;
        let f = 1 + draw(fields.min(4) - 1);
        let store = draw(2) == 0;
        let other = self.pre_reg();
        items.insert(
            at,
            Item::Inst(Inst::SAdd(SAlu {
                sd: other,
                sa: S_BASE,
                sb: SOrImm::Imm((f * e) as i32),
            })),
        );
        let ops = mem_ops(store, log2e, |m| {
            matches!(m.mode, Mode::RegOff { .. })
                && (0..=7).any(|sh| m.reg_shift(sh) == u32::from(log2s))
        });
        for base in [S_BASE, other] {
            let Some(&op) = ops.get(draw(ops.len() as u64) as usize) else {
                return;
            };
            let Some(ms) = op.mem() else { return };
            let Some(shamt) = (0..=7u8).find(|&sh| ms.reg_shift(sh) == u32::from(log2s)) else {
                return;
            };
            let vd = VReg(V_DATA[draw(V_DATA.len() as u64) as usize]);
            let addr = MemAddr::RegOff {
                base: Reg::S(base.0),
                off: Reg::Lc0,
                shamt,
            };
            if let Some(inst) = mem_form(op, Reg::V(vd.0), addr, false) {
                items.push(Item::Inst(inst));
                if !store && !written.contains(&vd) {
                    written.push(vd);
                }
            }
        }
    }

    /// An FMA chain in place, on special values and on whatever the data vectors hold.
    pub fn fma_snippet(&mut self, u: &mut Unstructured, items: &mut Vec<Item>) -> Result<()> {
        let srcs: Vec<VReg> = (0..u.int_in_range(0..=2)?)
            .map(|_| pick(u, &V_DATA).map(VReg))
            .collect::<Result<_>>()?;
        self.fp_chain(u, &srcs, None, items, None)?;
        Ok(())
    }

    /// A branch loop of `rounds` rounds (counted down in `S_ROUNDS`) of `body` at label `l`:
    /// closed by `BNE` back to `l` as it was, or (drawn from the count and the body's length,
    /// see [`splitmix`], so other shapes stay as they were) written with more branches, which
    /// the JIT compiles as one trace with side exits (`region::trace`): the test at the top
    /// and a `J` back (`while`), an early exit in a middle round after part of the body, or
    /// an `if` skipping an instruction in one round.
    fn trace_rounds(&mut self, rounds: u64, l: usize, body: Vec<Item>, items: &mut Vec<Item>) {
        let mut seed = rounds ^ (body.len() as u64) << 8 ^ (self.rounds as u64) << 16;
        let mut draw = |n: u64| splitmix(&mut seed, n);
        let form = draw(4);
        let at = draw(body.len() as u64 + 1) as usize;
        let round = 1 + draw(rounds) as i32;
        let mut label = || {
            self.trace_labels += 1;
            TRACE_LABELS + self.trace_labels
        };
        let branch = |f: fn(Branch) -> Inst, sb: i32, to: usize| {
            let b = Branch {
                sa: S_ROUNDS,
                sb: SOrImm::Imm(sb),
                target: Target(0),
            };
            Item::Branch(f(b), to)
        };
        let (head, tail) = body.split_at(at);
        match form {
            1 => {
                // while (rounds != 0) { body; rounds -= 1 }
                let exit = label();
                items.push(Item::Label(l));
                items.push(branch(Inst::Beq, 0, exit));
                items.extend(body);
                items.push(round_end(l)[0].clone());
                items.push(Item::Branch(Inst::J(Jump { target: Target(0) }), l));
                items.push(Item::Label(exit));
            }
            2 | 3 => {
                // Leaves in round `round` after the first `at` items of the body (2), or
                // skips a scalar add there in every round but that one (3).
                let to = label();
                items.push(Item::Label(l));
                items.extend(head.iter().cloned());
                if form == 2 {
                    items.push(branch(Inst::Beq, round, to));
                } else {
                    items.push(branch(Inst::Bne, round, to));
                    items.push(Item::Inst(Inst::SAdd(SAlu {
                        sd: SReg(7),
                        sa: SReg(7),
                        sb: SOrImm::Imm(1),
                    })));
                    items.push(Item::Label(to));
                }
                items.extend(tail.iter().cloned());
                items.extend(round_end(l));
                if form == 2 {
                    items.push(Item::Label(to));
                }
            }
            _ => {
                items.push(Item::Label(l));
                items.extend(body);
                items.extend(round_end(l));
            }
        }
    }

    /// A scalar base of a hardware loop's accesses (`accs`, lanes by lane id through offsets
    /// made before the loop) bumped by VL times a step every iteration, as a compiler
    /// strength-reduces a loop's pointers (the JIT's `analysis::StepKind::Scalar`, hoisted
    /// when the step matches the lanes'), half the time: by the lane step of one of its
    /// accesses (or, a quarter of the time, by 1, 2, 4, 8 or 16 bytes a lane), through an
    /// immediate, a register set before the loop or the subtraction of its negation, at any
    /// point of the body; or, a quarter of those times, recomputed at the top of the body
    /// from its value at entry and `S.LC0` (shifted or multiplied by the lane step: the
    /// JIT's forms of scalar arithmetic in a loop body). Returns which base (0: `S_BASE`)
    /// and the step per iteration.
    /// Drawn from `seed` (see [`splitmix`]).
    fn bump_base(
        &mut self,
        seed: u64,
        accs: &[Acc],
        pre: &mut Vec<Item>,
        body: &mut Vec<Item>,
    ) -> Option<(usize, u64)> {
        let mut seed = seed ^ 0xbb67_ae85_84ca_a73b;
        let mut draw = |n: u64| splitmix(&mut seed, n);
        if draw(2) != 0 || accs.is_empty() {
            return None;
        }
        let a = accs[draw(accs.len() as u64) as usize];
        let lane = a
            .model
            .filter(|_| self.vl > 1 && draw(4) != 0)
            .map(|m| m.rel(1).wrapping_sub(m.rel(0)) as u64);
        let per_lane = lane.unwrap_or([1u64, 2, 4, 8, 16][draw(5) as usize]);
        let step = u64::from(self.vl).wrapping_mul(per_lane);
        // Only steps forward, below a page a lane (the region's span bounds the rest).
        if step == 0 || step > u64::from(self.vl) * PAGE_SIZE {
            return None;
        }
        let r = a.base;
        if draw(4) == 0 {
            // Recomputed from `S.LC0` at the top of every iteration instead (a loop whose
            // compiler did not strength-reduce): `r = r0 + LC0BASE * per_lane`, `r0` its
            // value at loop entry.
            let scale = match (per_lane.is_power_of_two(), draw(2)) {
                (true, 0) => Inst::SShl(SAlu {
                    sd: S_K,
                    sa: S_K,
                    sb: SOrImm::Imm(per_lane.trailing_zeros() as i32),
                }),
                _ => Inst::SMul(SAlu {
                    sd: S_K,
                    sa: S_K,
                    sb: SOrImm::Imm(imm32(per_lane)?),
                }),
            };
            let r0 = self.pre_reg();
            pre.push(Item::Inst(Inst::SMov(SMov { sd: r0, sa: r })));
            body.insert(0, Item::Inst(Inst::SLc0(SUnary { sd: S_K })));
            body.insert(1, Item::Inst(scale));
            body.insert(
                2,
                Item::Inst(Inst::SAdd(SAlu {
                    sd: r,
                    sa: r0,
                    sb: SOrImm::Reg(S_K),
                })),
            );
            return Some((usize::from(r == S_BASE2), step));
        }
        let bump = match draw(3) {
            0 if imm32(step).is_some() => valu_s(Inst::SAdd, r, SOrImm::Imm(imm32(step)?)),
            1 => {
                let k = self.pre_reg();
                pre.push(li(k, step.wrapping_neg()));
                valu_s(Inst::SSub, r, SOrImm::Reg(k))
            }
            _ => {
                let k = self.pre_reg();
                pre.push(li(k, step));
                valu_s(Inst::SAdd, r, SOrImm::Reg(k))
            }
        };
        let at = if draw(2) == 0 {
            body.len()
        } else {
            draw(body.len() as u64 + 1) as usize
        };
        body.insert(at, bump);
        Some((usize::from(r == S_BASE2), step))
    }

    /// A hardware loop of its own (not inside another): address chains and accesses whose
    /// bases are placed so the lanes' span fits the region (the data pages, the table or the
    /// tile), an FMA chain between the loads and the stores, and on the table holes and
    /// read-only pages in the span, or a fault placed in the first, a middle or the last
    /// iteration. Without a loop (`straight`), the same with lane ids.
    pub fn loop_snippet(
        &mut self,
        u: &mut Unstructured,
        straight: bool,
        items: &mut Vec<Item>,
    ) -> Result<()> {
        let vl = self.vl as u64;
        // A fifth of the loops outside a hardware loop, and a third of the bodies inside
        // one, repeat their body in a scalar branch loop instead (2 to 6 rounds, counted in
        // S_ROUNDS, lanes by lane id): the JIT's branch-loop copies, packed registers carried
        // around the back edge.
        let branch = if straight {
            u.ratio(1, 3)?
        } else {
            u.ratio(1, 5)?
        };
        let straight = straight || branch;
        let region = match u.int_in_range(0..=9)? {
            0..=6 if self.table.is_some() => Region::Table,
            0..=7 => Region::Data,
            _ => Region::Tile,
        };
        let trip = if straight {
            vl
        } else {
            match u.int_in_range(0..=9)? {
                0 => vl - 1,
                1 => vl,
                2 => vl + 1,
                3 | 4 => vl * u.int_in_range(2..=4)? + u.int_in_range(0..=vl - 1)?,
                5 => u.int_in_range(1..=64)?,
                6 | 7 => u.int_in_range(1..=600)?,
                8 => u.int_in_range(0..=3)?,
                _ => u.int_in_range(600..=3000)?,
            }
        };
        // A fifth of the loops index by lane id with index vectors computed before the loop
        // (gathers and scatters through registers the loop never writes).
        // (In a branch loop too, which reads them in every round.)
        self.hoist_index = (!straight || branch) && u.ratio(1, 5)?;
        self.rounds_loop = branch;
        self.aos_regs.clear();
        let src = if straight || self.hoist_index {
            Src::Id
        } else {
            Src::Lc
        };
        let local = region == Region::Tile;
        let wide = region == Region::Table;
        let bases = [S_BASE, S_BASE2];
        let mut pre = Vec::new();
        let mut body = Vec::new();
        let mut loads = Vec::new();
        let mut accs = Vec::new();
        let stream = u.int_in_range(0..=6)?;
        // Accesses (by position in `accs`) whose loads read index words.
        let mut index_loads = 0..0;
        // Whether an index loaded before the loop walks in it (`Shapes::index_walk`).
        let mut walk = false;
        if stream == 6 && !local {
            // An index stream: 32-bit index words loaded (packed by the JIT when contiguous),
            // then gathers through them from the second base: lane EAs straight from the
            // packed words, small indices (negative ones too) poked where the loads read.
            self.force = Some((2, false));
            let mut idx = Vec::new();
            let first = accs.len();
            accs.extend(self.accesses(
                u,
                src,
                local,
                wide,
                &[S_BASE],
                &mut pre,
                &mut body,
                &mut idx,
            )?);
            index_loads = first..accs.len();
            self.force = None;
            if u.ratio(1, 2)? {
                walk = self.index_walk(u, &idx, &mut pre, &mut body, &mut loads)?;
            }
            for vi in idx {
                // Half the time the index is first shifted right or masked by an immediate
                // (kept packed by the JIT where the result is again an extended word), or
                // ANDed with a register of lane signs (`V.SRA 63` of a data register), or
                // with what only looks like one (a shift by 62, lane signs shifted right
                // after): the JIT's sign masks.
                let vi = if u.ratio(1, 2)? {
                    let t = VReg(pick(u, &V_DATA)?);
                    if u.ratio(1, 4)? {
                        let m = VReg(pick(u, &V_DATA)?);
                        let from = VReg(pick(u, &V_DATA)?);
                        let k = pick(u, &[63, 127, -1, 62])?;
                        body.push(valu(Inst::VSra, m, from, VSrc::Imm(k)));
                        if u.ratio(1, 3)? {
                            // No longer lane signs: the high half cleared or shortened.
                            let k = pick(u, &[8, 31, 32])?;
                            body.push(valu(Inst::VShr, m, m, VSrc::Imm(k)));
                        }
                        let (a, b) = if u.ratio(1, 2)? { (vi, m) } else { (m, vi) };
                        body.push(valu(Inst::VAnd, t, a, VSrc::V(b)));
                        t
                    } else {
                        let (f, k): (fn(VAlu) -> Inst, i32) = match u.int_in_range(0..=2)? {
                            0 => (Inst::VShr, pick(u, &[0, 1, 2, 5, 31, 32, 33, 63, -1])?),
                            1 => (Inst::VSra, pick(u, &[0, 1, 3, 31, 32, 63, -2])?),
                            _ => (
                                Inst::VAnd,
                                pick(u, &[0xff, 0x3f, -4, 0x7fff_ffff, i32::MIN, 1023])?,
                            ),
                        };
                        body.push(valu(f, t, vi, VSrc::Imm(k)));
                        t
                    }
                } else {
                    vi
                };
                let vd = VReg(pick(u, &V_DATA)?);
                let op = pick(u, &[Opcode::VLw, Opcode::VLwu])?;
                let addr = MemAddr::RegOff {
                    base: Reg::S(S_BASE2.0),
                    off: Reg::V(vi.0),
                    shamt: u.int_in_range(0..=3)?,
                };
                if let Some(inst) = super::generate::mem_form(op, Reg::V(vd.0), addr, false) {
                    body.push(Item::Inst(inst));
                    loads.push(vd);
                }
            }
        } else if stream == 0 {
            // An integer stream: byte or halfword loads (packed by the JIT), their products
            // (multiplied on narrow lanes when both are packed), an accumulator, and stores
            // of the products at a wider width.
            let log2e: u8 = u.int_in_range(0..=1)?;
            self.force = Some((log2e, false));
            accs.extend(
                self.accesses(u, src, local, wide, &bases, &mut pre, &mut body, &mut loads)?,
            );
            if !loads.is_empty() {
                let a = pick(u, &loads)?;
                let b = pick(u, &loads)?;
                let p = VReg(pick(u, &V_DATA)?);
                body.push(valu(Inst::VMul, p, a, VSrc::V(b)));
                let acc = VReg(pick(u, &V_DATA)?);
                body.push(valu(Inst::VAdd, acc, acc, VSrc::V(p)));
                if u.ratio(1, 2)? {
                    // A widening sum of the loaded lanes themselves (kept in narrow lanes
                    // by the JIT when nothing else touches the accumulator).
                    let acc = VReg(pick(u, &V_DATA)?);
                    body.push(valu(Inst::VAdd, acc, acc, VSrc::V(a)));
                }
                let seed = u64::from(a.0) | u64::from(b.0) << 8 | u64::from(p.0) << 16;
                narrow_chain(seed ^ u64::from(log2e) << 24, p, [a, b], &mut body);
                let mut outs = vec![p];
                self.force = Some((u.int_in_range(log2e + 1..=3)?, true));
                accs.extend(
                    self.accesses(u, src, local, wide, &bases, &mut pre, &mut body, &mut outs)?,
                );
            }
            self.force = None;
        } else if stream <= 2 {
            // A floating-point stream: contiguous f32 (packed by the JIT) or f64 loads, an
            // FMA chain on them, contiguous stores of its results.
            let log2e = if u.ratio(2, 3)? { 2 } else { 3 };
            self.force = Some((log2e, false));
            accs.extend(
                self.accesses(u, src, local, wide, &bases, &mut pre, &mut body, &mut loads)?,
            );
            let mut outs = self.fp_chain(u, &loads, Some(log2e == 3), &mut body, Some(&mut pre))?;
            self.force = Some((log2e, true));
            accs.extend(
                self.accesses(u, src, local, wide, &bases, &mut pre, &mut body, &mut outs)?,
            );
            self.force = None;
        } else if stream == 3 && u.ratio(1, 2)? {
            // An array of structs to arrays: the fields of records loaded through a vector
            // address (the JIT's interleave groups), stored contiguous (which its streaming
            // copy reorders chunk by chunk when no two stores overlap).
            self.aos = true;
            accs.extend(self.accesses(
                u,
                src,
                local,
                wide,
                &[S_BASE],
                &mut pre,
                &mut body,
                &mut loads,
            )?);
            self.aos = false;
            if !loads.is_empty() {
                let log2e = u.int_in_range(0..=3)?;
                self.force = Some((log2e, true));
                for _ in 0..u.int_in_range(1..=2)? {
                    accs.extend(
                        self.accesses(
                            u, src, local, wide, &bases, &mut pre, &mut body, &mut loads,
                        )?,
                    );
                }
                self.force = None;
            }
        } else {
            for _ in 0..u.int_in_range(1..=2)? {
                accs.extend(
                    self.accesses(u, src, local, wide, &bases, &mut pre, &mut body, &mut loads)?,
                );
                if !loads.is_empty() && u.ratio(1, 2)? {
                    let outs = self.fp_chain(u, &loads, None, &mut body, Some(&mut pre))?;
                    loads.extend(outs);
                }
            }
        }
        // Place the bases: the lanes' whole span inside the region. A loop whose span is
        // larger than the region mostly runs fewer iterations (some run off the region's end).
        let (lo, len) = match region {
            Region::Data => self.data_region,
            Region::Tile => (0, self.tile_size),
            Region::Table => (TABLE_BASE, self.table.as_ref().map_or(0, Table::len)),
        };
        let lanes_of = |trip: u64| -> Vec<u64> {
            match src {
                Src::Lc => (0..trip).collect(),
                Src::Id => (0..vl.min(trip.max(1))).collect(),
            }
        };
        // Half the hardware loops that index by lane id bump a scalar base every
        // iteration (`Shapes::bump_base`); `extra` is how far its accesses then move.
        let mut extra = [0i128; 2];
        let mut trip = trip;
        if !straight && self.hoist_index {
            let seed = trip ^ (body.len() as u64) << 32 ^ (accs.len() as u64) << 48;
            if let Some((b, step)) = self.bump_base(seed, &accs, &mut pre, &mut body) {
                let lanes = lanes_of(trip);
                let moved = |trip: u64| i128::from(trip.div_ceil(vl)) * i128::from(step);
                // Seven in eight fit every iteration's accesses in the region.
                if seed % 8 != 0 {
                    while trip > 1
                        && span_of(&accs, bases[b], &lanes)
                            .is_some_and(|(mn, mx)| mx - mn + moved(trip) > len as i128)
                    {
                        trip /= 2;
                    }
                }
                extra[b] = moved(trip);
            }
        }
        let fits = |lanes: &[u64]| {
            bases
                .iter()
                .all(|r| span_of(&accs, *r, lanes).is_none_or(|(mn, mx)| mx - mn <= len as i128))
        };
        if src == Src::Lc && u.ratio(7, 8)? {
            while trip > 1 && !fits(&lanes_of(trip)) {
                trip /= 2;
            }
        }
        let lanes = lanes_of(trip);
        let mut base_val = [0u64; 2];
        for (b, r) in bases.iter().enumerate() {
            let mine: Vec<&Acc> = accs.iter().filter(|a| a.base == *r).collect();
            let span = span_of(&accs, *r, &lanes);
            let align = mine.iter().map(|a| a.width).max().unwrap_or(8) as i128;
            base_val[b] = match span {
                Some((mn, mx)) if mx - mn + extra[b] <= len as i128 => {
                    let first = lo as i128 - mn;
                    let slack = (len as i128 - (mx - mn) - extra[b]) as u64;
                    let at = first + u.int_in_range(0..=slack)? as i128;
                    let at = if u.ratio(3, 4)? && at - first >= align {
                        at & !(align - 1)
                    } else {
                        at
                    };
                    at as u64
                }
                Some((mn, _)) => (lo as i128 - mn) as u64,
                None => lo + u.int_in_range(0..=len / 8)? * 8,
            };
        }
        if region == Region::Table {
            self.table_perms(u, &accs, &lanes, &mut base_val)?;
        }
        if walk {
            // The walking index's words (`Shapes::index_walk`): small indices, some
            // negative (-1 loaded zero-extended carries out of 32 bits when stepped).
            let mut bytes = Vec::with_capacity(4 * vl as usize);
            for _ in 0..vl {
                let i: i32 = u.int_in_range(-3..=47)?;
                bytes.extend_from_slice(&i.to_le_bytes());
            }
            self.pokes.push((base_val[0], bytes));
        }
        // Floating-point data where the loads read (at most 1 KiB from each load's lowest
        // EA): special values, or values near 1 (where a fused multiply-add rounds
        // differently from a multiply and an add), or both.
        // The lowest EA an access's lanes reach, when its lanes are modelled.
        let lowest = |a: &Acc| -> Option<u64> {
            let m = a.model?;
            let b = base_val[usize::from(a.base == S_BASE2)];
            let first = lanes.iter().map(|&l| m.rel(l)).min().unwrap_or(0);
            Some(b.wrapping_add(first as u64))
        };
        for a in &accs[index_loads.clone()] {
            let Some(at) = lowest(a) else { continue };
            let n = u.int_in_range(16..=256)?;
            let mut bytes = Vec::with_capacity(n * 4);
            for _ in 0..n {
                let i: i32 = u.int_in_range(-8..=47)?;
                bytes.extend_from_slice(&i.to_le_bytes());
            }
            self.pokes.push((at, bytes));
        }
        if region != Region::Tile && index_loads.is_empty() && u.ratio(2, 3)? {
            let near_one = u.int_in_range(0..=2)?;
            for a in accs.iter().filter(|a| !a.store).take(3) {
                let Some(at) = lowest(a) else { continue };
                let n = u.int_in_range(8..=128)?;
                let mut bytes = Vec::with_capacity(n * 8);
                for _ in 0..n {
                    let w = match (near_one, u.int_in_range(0..=3)?) {
                        (0, 0 | 1) | (1, 0) => f64_bits(u)?,
                        (0, _) | (1, 1) => f32_bits(u)? as u64 | (f32_bits(u)? as u64) << 32,
                        _ if a.width == 8 => near_one_f64(u)?,
                        _ => near_one_f32(u)? as u64 | (near_one_f32(u)? as u64) << 32,
                    };
                    bytes.extend_from_slice(&w.to_le_bytes());
                }
                self.pokes.push((at, bytes));
            }
        }
        items.push(li(S_BASE, base_val[0]));
        items.push(li(S_BASE2, base_val[1]));
        items.extend(pre);
        if branch {
            self.rounds += 1;
            let l = ROUND_LABELS + self.rounds;
            let rounds = u.int_in_range(2..=6u64)?;
            items.push(li(S_ROUNDS, rounds));
            if u.ratio(1, 2)? {
                // Half the time the loop starts a region of its own, so that the JIT compiles
                // it where the registers made before it hold their values (its hints).
                items.push(Item::Branch(Inst::J(Jump { target: Target(0) }), l));
            }
            self.trace_rounds(rounds, l, body, items);
        } else if straight {
            items.extend(body);
        } else {
            // Sometimes the loop runs again (2 or 3 rounds, the trip halved each time, the
            // registers as the round before left them): a loop entered once per row, whose
            // tails keep what earlier runs left in their inactive lanes, and a loop nest to
            // the JIT. The halving is either the epilogue's first instruction or the outer
            // prologue's (the round's label before it, the first trip doubled).
            let rounds = if trip > 1 && u.ratio(1, 3)? {
                u.int_in_range(2..=3u64)?
            } else {
                1
            };
            let again = (rounds > 1).then(|| {
                self.rounds += 1;
                ROUND_LABELS + self.rounds
            });
            // Half of them keep their trip count (rows of one length: the nest's outer loop
            // is counted, and the JIT proves every row's span at the first,
            // `analysis::nest_count`).
            let halve = again.is_some() && u.ratio(1, 2)?;
            let halve_first = halve && u.ratio(1, 2)?;
            items.push(li(S_TRIP, if halve_first { 2 * trip } else { trip }));
            if let Some(l) = again {
                items.push(li(S_ROUNDS, rounds));
                items.push(Item::Label(l));
                if halve_first {
                    items.push(valu_s(Inst::SShr, S_TRIP, SOrImm::Imm(1)));
                }
            }
            items.push(Item::LoopStart(S_TRIP));
            // Half the loops whose index vectors are computed before them, and a sixth of
            // the others, have a branch inside (over nothing, or over one or two of the
            // body's instructions, taken by the trip count's low bit): the body then runs as
            // straight-line regions, one entry per iteration, recompiled with inline vector
            // code once hot, whose gathers and scatters through vectors test their lanes for
            // consecutive elements at each access (`Tx::dyn_contig`).
            let split = if self.hoist_index {
                u.ratio(1, 2)?
            } else {
                u.ratio(1, 6)?
            };
            if split {
                self.splits += 1;
                let l = SPLIT_LABELS + self.splits;
                let at = u.int_in_range(0..=body.len())?;
                let over = u.int_in_range(0..=2usize)?.min(body.len() - at);
                let (head, tail) = body.split_at(at);
                items.extend_from_slice(head);
                items.push(Item::Inst(Inst::SAnd(SAlu {
                    sd: S_SPLIT,
                    sa: S_TRIP,
                    sb: SOrImm::Imm(1),
                })));
                items.push(bne_zero(S_SPLIT, l));
                items.extend_from_slice(&tail[..over]);
                items.push(Item::Label(l));
                items.extend_from_slice(&tail[over..]);
            } else {
                items.extend(body);
            }
            items.push(Item::LoopEnd);
            if let Some(l) = again {
                if halve && !halve_first {
                    items.push(valu_s(Inst::SShr, S_TRIP, SOrImm::Imm(1)));
                }
                // Half the time a field register moves (to the next field or record, or
                // back): the distances the JIT speculated on at its first entry no longer
                // hold at the next.
                if !self.aos_regs.is_empty() && u.ratio(1, 2)? {
                    let (r, width, d) = pick(u, &self.aos_regs)?;
                    let by = pick(u, &[width as i32, d as i32, -(width as i32)])?;
                    items.push(valu_s(Inst::SAdd, r, SOrImm::Imm(by)));
                }
                items.extend(round_end(l));
            }
        }
        self.hoist_index = false;
        self.rounds_loop = false;
        Ok(())
    }

    /// Rows, one per lane, walked by a branch loop inside a hardware loop (row-major gemv
    /// written with vector addresses): the hardware loop's body builds each lane's row
    /// address `S_BASE + (LC0BASE + i) * pitch` (a pitch of a row or more, or a negative
    /// one) and lane offsets at the same pitch, then a branch loop over the columns loads
    /// through them by immediates (scaled or not) and a register offset, sums, sometimes
    /// stores back through the address, and bumps both by the element width (an immediate
    /// or a scalar set before the loop): registers the JIT knows affine at every round's
    /// start (`Tx::entry_strides`). Now and then the bump is an XOR or a product instead,
    /// which keeps no shape. Placed in the data pages, or anywhere in the table (whose holes
    /// and read-only pages then fault in whatever row and column reach them).
    pub fn row_snippet(&mut self, u: &mut Unstructured, items: &mut Vec<Item>) -> Result<()> {
        let vl = self.vl as u64;
        let rows = match u.int_in_range(0..=3)? {
            0 => vl,
            1 => 2 * vl,
            2 => u.int_in_range(1..=3 * vl)?,
            _ => vl * u.int_in_range(1..=3)? + 1,
        };
        let cols = u.int_in_range(1..=8u64)?;
        let log2e: u8 = pick(u, &[2u8, 3])?;
        let w = 1u64 << log2e;
        let pitch = pick(u, &[cols * w, cols * w + w, cols * w + 64, 256, 4096])?;
        let neg = u.ratio(1, 4)?;
        // Bytes the lanes reach past a row's start: its columns, the largest immediate.
        let reach = cols * w + 2 * w;
        let span = (rows - 1) * pitch + reach;
        let (lo, hi) = match &self.table {
            Some(t) if u.ratio(2, 3)? && span <= t.len() => (TABLE_BASE, TABLE_BASE + t.len()),
            _ if span <= self.data_region.1 => {
                (self.data_region.0, self.data_region.0 + self.data_region.1)
            }
            _ => return Ok(()),
        };
        let first = lo + u.int_in_range(0..=(hi - lo - span) / w)? * w;
        let base = if neg {
            first + (rows - 1) * pitch
        } else {
            first
        };
        let p = if neg { pitch.wrapping_neg() } else { pitch };
        let (addr, off) = (VReg(V_ADDR[0]), VReg(V_ADDR[1]));
        let [x, y, acc] = [VReg(V_DATA[0]), VReg(V_DATA[1]), VReg(V_DATA[2])];
        let trip = S_TRIP;
        let step = self.pre_reg();
        items.push(li(S_BASE, base));
        items.push(li(trip, rows));
        items.push(li(step, w));
        items.push(Item::LoopStart(trip));
        let pk = imm32(p).unwrap_or(0);
        for r in [addr, off] {
            items.push(Item::Inst(Inst::VLc0(VUnary { vd: r })));
            items.push(valu(Inst::VMul, r, r, VSrc::Imm(pk)));
        }
        items.push(valu(Inst::VAdd, addr, addr, VSrc::S(S_BASE)));
        items.push(Item::Inst(Inst::VMov(VMov {
            vd: acc,
            src: VSrc::Imm(0),
        })));
        items.push(li(S_ROUNDS, cols));
        self.rounds += 1;
        let l = ROUND_LABELS + self.rounds;
        items.push(Item::Label(l));
        // A load by immediate (0 or one element on), one through the lane offsets.
        let op = pick_op(u, false, log2e, |m| matches!(m.mode, Mode::Imm { .. }))?;
        let scaled = matches!(op.mem().map(|m| m.mode), Some(Mode::Imm { scaled: true }));
        let k: i32 = pick(u, &[0, 1])?;
        let imm = if scaled { k } else { k << log2e };
        let at = MemAddr::Imm {
            base: Reg::V(addr.0),
            imm,
        };
        if let Some(i) = mem_form(op, Reg::V(x.0), at, false) {
            items.push(Item::Inst(i));
        }
        let op = pick_op(u, false, log2e, |m| {
            matches!(m.mode, Mode::RegOff { add_width: false })
        })?;
        let at = MemAddr::RegOff {
            base: Reg::S(S_BASE.0),
            off: Reg::V(off.0),
            shamt: 0,
        };
        if let Some(i) = mem_form(op, Reg::V(y.0), at, false) {
            items.push(Item::Inst(i));
        }
        items.push(valu(Inst::VAdd, acc, acc, VSrc::V(x)));
        items.push(valu(Inst::VXor, acc, acc, VSrc::V(y)));
        if u.ratio(1, 3)? {
            let op = pick_op(u, true, log2e, |m| matches!(m.mode, Mode::Imm { .. }))?;
            let at = MemAddr::Imm {
                base: Reg::V(addr.0),
                imm: 0,
            };
            if let Some(i) = mem_form(op, Reg::V(acc.0), at, false) {
                items.push(Item::Inst(i));
            }
        }
        let wk = imm32(w).unwrap_or(0);
        for r in [addr, off] {
            items.push(match u.int_in_range(0..=9)? {
                0 => valu(Inst::VXor, r, r, VSrc::Imm(wk)),
                1 => valu(Inst::VMul, r, r, VSrc::Imm(1)),
                2..=4 => valu(Inst::VAdd, r, r, VSrc::S(step)),
                5 => valu(Inst::VSub, r, r, VSrc::Imm(-wk)),
                _ => valu(Inst::VAdd, r, r, VSrc::Imm(wk)),
            });
        }
        items.extend(round_end(l));
        items.push(Item::LoopEnd);
        Ok(())
    }

    /// An index loaded before the loop and stepped in it, as SpMV's row index `j` is (the
    /// JIT packs such a register again on the way into its loop's second copy, `Tx::repack`,
    /// and steps it packed, `Tx::packed_add`): `VL` words at `S_BASE` loaded through the
    /// lane ids (zero-extended mostly), then in the body a gather through it from
    /// `S_BASE2`, half the time ANDed with lane signs of its compare with a loaded index
    /// (`V.SUB m, w, x; V.SRA m, m, 63`: `Tx::packed_sign_mask`), and an add or subtract
    /// of a small immediate. The caller pokes the words (small, some negative).
    fn index_walk(
        &mut self,
        u: &mut Unstructured,
        idx: &[VReg],
        pre: &mut Vec<Item>,
        body: &mut Vec<Item>,
        loads: &mut Vec<VReg>,
    ) -> Result<bool> {
        let w = VReg(pick(u, &V_DATA)?);
        pre.push(Item::Inst(Inst::VLaneid(VUnary { vd: V_TMP })));
        let op = if u.ratio(3, 4)? {
            Opcode::VLwu
        } else {
            Opcode::VLw
        };
        let at = MemAddr::RegOff {
            base: Reg::S(S_BASE.0),
            off: Reg::V(V_TMP.0),
            shamt: 2,
        };
        let Some(ld) = super::generate::mem_form(op, Reg::V(w.0), at, false) else {
            return Ok(false);
        };
        pre.push(Item::Inst(ld));
        let d = VReg(pick(u, &V_DATA)?);
        let from = MemAddr::RegOff {
            base: Reg::S(S_BASE2.0),
            off: Reg::V(w.0),
            shamt: u.int_in_range(0..=3)?,
        };
        let gop = pick(u, &[Opcode::VLw, Opcode::VLwu])?;
        if let Some(g) = super::generate::mem_form(gop, Reg::V(d.0), from, false) {
            body.push(Item::Inst(g));
            loads.push(d);
        }
        if u.ratio(1, 2)? {
            let m = VReg(pick(u, &V_DATA)?);
            let x = if idx.is_empty() || u.ratio(1, 4)? {
                w
            } else {
                pick(u, idx)?
            };
            let (a, b) = if u.ratio(3, 4)? { (w, x) } else { (x, w) };
            body.push(valu(Inst::VSub, m, a, VSrc::V(b)));
            let k = pick(u, &[63, 63, 127, -1, 62])?;
            body.push(valu(Inst::VSra, m, m, VSrc::Imm(k)));
            body.push(valu(Inst::VAnd, d, d, VSrc::V(m)));
        }
        let (f, k): (fn(VAlu) -> Inst, i32) = match u.int_in_range(0..=5)? {
            0..=2 => (Inst::VAdd, 1),
            3 => (Inst::VAdd, pick(u, &[2, 3, 16, -1])?),
            _ => (Inst::VSub, pick(u, &[1, 2, -1])?),
        };
        body.push(valu(f, w, w, VSrc::Imm(k)));
        Ok(true)
    }

    /// On the table: holes and read-only pages inside the accesses' span where no lane
    /// touches, read-only pages under loads, or a fault placed at a chosen lane of the first,
    /// a middle or the last iteration (moving the base so that lane starts a page).
    fn table_perms(
        &mut self,
        u: &mut Unstructured,
        accs: &[Acc],
        lanes: &[u64],
        base_val: &mut [u64; 2],
    ) -> Result<()> {
        let vl = self.vl as u64;
        let Some(table) = self.table.as_mut() else {
            return Ok(());
        };
        let modelled: Vec<&Acc> = accs.iter().filter(|a| a.model.is_some()).collect();
        if modelled.is_empty() || lanes.is_empty() {
            return Ok(());
        }
        let base_of = |a: &Acc, base_val: &[u64; 2]| base_val[usize::from(a.base == S_BASE2)];
        if u.ratio(1, 2)? {
            // A fault at a chosen iteration and lane.
            let a = *pick(u, &modelled)?;
            let Some(m) = a.model else { return Ok(()) };
            let iters = (lanes.len() as u64).div_ceil(vl);
            let it = match u.int_in_range(0..=7)? {
                0 | 1 => 0,
                2..=4 => iters / 2,
                _ => iters - 1,
            };
            let first = it * vl;
            let last = (first + vl).min(lanes.len() as u64) - 1;
            let lane = u.int_in_range(first..=last)?;
            let k = usize::from(a.base == S_BASE2);
            let ea = base_val[k].wrapping_add(m.rel(lane) as u64);
            let stride = m.rel(lane.wrapping_add(1)).wrapping_sub(m.rel(lane));
            // Lanes before it stay on earlier pages: start the page at this lane's access
            // (ascending stride) or end it there (descending).
            let shift = if stride > 0 {
                ea % PAGE_SIZE
            } else {
                ea.wrapping_add(a.width) % PAGE_SIZE
            };
            if m.and == u64::MAX && stride.unsigned_abs() >= a.width && u.ratio(3, 4)? {
                // Down to the page edge, or up when that would leave the table.
                let low = lanes.iter().map(|&l| m.rel(l)).min().unwrap_or(0);
                let down = base_val[k].wrapping_sub(shift);
                base_val[k] = if down.wrapping_add(low as u64) < TABLE_BASE {
                    base_val[k].wrapping_add((PAGE_SIZE - shift) % PAGE_SIZE)
                } else {
                    down
                };
            }
            let ea = base_val[k].wrapping_add(m.rel(lane) as u64);
            let page = if stride > 0 {
                ea
            } else {
                ea.wrapping_add(a.width - 1)
            };
            let perm = if a.store && u.ratio(1, 2)? {
                Some(MemPerm::R)
            } else {
                None
            };
            table.set(page, perm);
        } else {
            // Holes and read-only pages between the lanes, where none touches.
            let mut touched = std::collections::BTreeSet::new();
            let (mut lo, mut hi) = (u64::MAX, 0u64);
            for a in &modelled {
                let Some(m) = a.model else { continue };
                let b = base_of(a, base_val);
                for &l in lanes {
                    let ea = b.wrapping_add(m.rel(l) as u64);
                    let end = ea.wrapping_add(a.width - 1);
                    touched.insert(ea / PAGE_SIZE);
                    touched.insert(end / PAGE_SIZE);
                    lo = lo.min(ea);
                    hi = hi.max(end);
                }
            }
            if lo > hi {
                return Ok(());
            }
            let (plo, phi) = (lo / PAGE_SIZE, hi / PAGE_SIZE);
            for _ in 0..u.int_in_range(1..=4)? {
                let p = u.int_in_range(plo..=phi)?;
                if !touched.contains(&p) {
                    let perm = if u.ratio(1, 2)? {
                        None
                    } else {
                        Some(MemPerm::R)
                    };
                    table.set(p * PAGE_SIZE, perm);
                }
            }
            if modelled.iter().all(|a| !a.store) {
                // Loads pass read-only pages.
                for _ in 0..u.int_in_range(0..=2)? {
                    let p = pick(u, &touched.iter().copied().collect::<Vec<_>>())?;
                    table.set(p * PAGE_SIZE, Some(MemPerm::R));
                }
            }
        }
        Ok(())
    }
}

/// The lowest and one past the highest byte that the modelled accesses from `base` touch
/// over `lanes`, relative to the base.
fn span_of(accs: &[Acc], base: SReg, lanes: &[u64]) -> Option<(i128, i128)> {
    let mut span: Option<(i128, i128)> = None;
    for a in accs.iter().filter(|a| a.base == base) {
        let Some(m) = a.model else { continue };
        for &l in lanes {
            let x = m.rel(l) as i128;
            let (mn, mx) = span.unwrap_or((x, x));
            span = Some((mn.min(x), mx.max(x + a.width as i128)));
        }
    }
    span
}

/// `V.LC0 vd` or `V.LANEID vd`.
fn lane_src(vd: VReg, src: Src) -> Inst {
    match src {
        Src::Lc => Inst::VLc0(VUnary { vd }),
        Src::Id => Inst::VLaneid(VUnary { vd }),
    }
}

/// A load or store opcode of width `1 << log2e` whose mode passes `ok` (a random one of
/// them; the first of the width when none passes).
/// The memory opcodes of direction `store`, element width `1 << log2e` and a form `ok`
/// accepts, in the ISA table's order.
fn mem_ops(store: bool, log2e: u8, ok: impl Fn(MemSem) -> bool) -> Vec<Opcode> {
    let want = if store { Dir::Store } else { Dir::Load };
    Opcode::ALL
        .iter()
        .copied()
        .filter(|o| {
            o.mem()
                .is_some_and(|m| m.dir == want && m.log2e == log2e && ok(m))
        })
        .collect()
}

fn pick_op(
    u: &mut Unstructured,
    store: bool,
    log2e: u8,
    ok: impl Fn(MemSem) -> bool,
) -> Result<Opcode> {
    let ops = mem_ops(store, log2e, ok);
    if ops.is_empty() {
        return Ok(if store { Opcode::VSd } else { Opcode::VLd });
    }
    pick(u, &ops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::{case, run_snapshot};
    use crate::vm::Engine;
    use lanejit_interp::machine::TrapKind;

    /// The snippets reach what they are for: cases with a table of several MiB, lane-shape
    /// loops that run to the end (again, with or without their trip halved), and faults on the table in the first and in later
    /// iterations of a loop, both unmapped and read-only, and loops whose gathers or
    /// scatters go through vector registers the loop never writes.
    #[test]
    fn snippets_reach_tables_loops_and_faults() {
        let (mut tables, mut fma, mut halted) = (0, 0, 0);
        let (mut first, mut later, mut perm) = (0, 0, 0);
        let (mut rounds, mut ro_index, mut taps, mut aos) = (0, 0, 0, 0);
        let (mut rows, mut stepped, mut split, mut walks) = (0, 0, 0, 0);
        let (mut tap_loads, mut traces, mut bumps, mut bumps_later) = (0, 0, 0, 0);
        let table_end = TABLE_BASE + 2048 * PAGE_SIZE;
        for i in 0..1500 {
            let g = case(9, i);
            let again = g.items.iter().any(
                |it| matches!(it, Item::Label(l) if (ROUND_LABELS + 1..SPLIT_LABELS).contains(l)),
            );
            let has_table = g.mem_map.iter().any(|r| r.start >= TABLE_BASE);
            tables += u32::from(has_table);
            fma += u32::from(
                g.items
                    .iter()
                    .any(|it| matches!(it, Item::Inst(Inst::VFmaS(_) | Inst::VFmaD(_)))),
            );
            let snap = run_snapshot(&g.build(), g.config(), Engine::Interp).expect("builds");
            let r = &snap.result;
            if r.trap.is_none() && has_table {
                halted += 1;
            }
            rounds += u32::from(again && r.trap.is_none());
            // Rounds of one trip count: nothing halves the trip register.
            let halved = g
                .items
                .iter()
                .any(|it| matches!(it, Item::Inst(Inst::SShr(a)) if a.sd == S_TRIP));
            rows += u32::from(again && !halved && r.trap.is_none());
            ro_index += u32::from(r.trap.is_none() && read_only_index(&g.items));
            taps += u32::from(r.trap.is_none() && tap_loop(&g.items));
            tap_loads += u32::from(r.trap.is_none() && tap_load_loop(&g.items));
            traces += u32::from(
                r.trap.is_none()
                    && g.items.iter().any(
                        |it| matches!(it, Item::Label(l) if (TRACE_LABELS..SPLIT_LABELS).contains(l)),
                    ),
            );
            aos += u32::from(r.trap.is_none() && aos_loop(&g.items));
            stepped += u32::from(stepped_root(&g.items));
            bumps += u32::from(r.trap.is_none() && bumped_base(&g.items));
            bumps_later += u32::from(
                r.trap.is_some_and(|t| t.mem.is_some()) && r.lc0 > 0 && bumped_base(&g.items),
            );
            walks += u32::from(r.trap.is_none() && row_walk(&g.items));
            split += u32::from(
                r.trap.is_none()
                    && g.items
                        .iter()
                        .any(|it| matches!(it, Item::Label(l) if *l > SPLIT_LABELS)),
            );
            let Some(t) = r.trap else { continue };
            let Some(mf) = t.mem else { continue };
            if (TABLE_BASE..table_end).contains(&mf.ea) {
                if r.lc0 == 0 {
                    first += 1;
                } else {
                    later += 1;
                }
                perm += u32::from(t.kind == TrapKind::PermissionFault);
            }
        }
        let counts = [
            tables,
            fma,
            halted,
            first,
            later,
            perm,
            rounds,
            rows,
            ro_index,
            taps,
            aos,
            stepped,
            split,
            walks,
            tap_loads,
            traces,
            bumps,
            bumps_later,
        ];
        eprintln!(
            "tables, fma, halted, first, later, perm, rounds, rows, ro_index, taps, aos, \
             stepped, split, walks, tap_loads, traces, bumps, bumps_later: {counts:?}"
        );
        assert!(
            bumps >= 10 && bumps_later >= 10,
            "hardware loops bumping a scalar base, run to the end, and faulting on memory \
             in a later iteration: {counts:?}"
        );
        assert!(
            traces >= 10,
            "branch loops with more branches, run to the end: {counts:?}"
        );
        assert!(
            tap_loads >= 8,
            "loops loading their taps in the body, run to the end: {counts:?}"
        );
        assert!(
            walks >= 20,
            "rows walked one per lane, run to the end: {counts:?}"
        );
        assert!(tables >= 120 && fma >= 100 && halted >= 20, "{counts:?}");
        assert!(rounds >= 10, "loops run again: {counts:?}");
        assert!(rows >= 5, "rounds of one trip count: {counts:?}");
        assert!(ro_index >= 10, "read-only index registers: {counts:?}");
        // A third of those filters load their taps in the body instead (`tap_loads`).
        assert!(
            taps >= 6,
            "f32 loops on four scalars set before them: {counts:?}"
        );
        assert!(
            aos >= 5,
            "field loads of one vector address, stored to two arrays or more: {counts:?}"
        );
        assert!(first >= 8 && later >= 3 && perm >= 2, "{counts:?}");
        assert!(
            stepped >= 10,
            "lane offsets stepped each iteration of a hardware loop: {counts:?}"
        );
        assert!(
            split >= 10,
            "loops through index vectors made before them, split by a branch: {counts:?}"
        );
    }

    /// Whether `items` walk rows one per lane ([`Shapes::row_snippet`]): a row address built
    /// at a pitch, then bumped by itself plus a scalar or immediate after a round's label.
    fn row_walk(items: &[Item]) -> bool {
        let a = VReg(V_ADDR[0]);
        let built = items.iter().position(|it| {
            matches!(it, Item::Inst(Inst::VMul(o)) if o.vd == a && o.va == a
                && matches!(o.vb, VSrc::Imm(_)))
        });
        let round = built.and_then(|b| {
            items[b..]
                .iter()
                .position(|it| matches!(it, Item::Label(l) if (ROUND_LABELS + 1..SPLIT_LABELS).contains(l)))
                .map(|l| b + l)
        });
        round.is_some_and(|l| {
            items[l..].iter().any(|it| {
                matches!(it, Item::Inst(Inst::VAdd(o) | Inst::VSub(o)) if o.vd == a && o.va == a
                    && !matches!(o.vb, VSrc::V(_)))
            })
        })
    }

    /// Whether a hardware loop of `items` adds a scalar or immediate to a vector register
    /// from which it makes, by adding a scalar or immediate or by a move, a vector register
    /// that an access takes as its address (lane offsets stepped like a pointer, the JIT's
    /// `analysis::Stepped`).
    fn stepped_root(items: &[Item]) -> bool {
        let addr_regs = |insts: &[&Inst]| {
            insts
                .iter()
                .fold(0u32, |m, i| match i.mem_operands().map(|o| o.addr) {
                    Some(MemAddr::RegOff { base, off, .. }) => [base, off].iter().fold(
                        m,
                        |m, r| {
                            if let Reg::V(n) = r { m | 1 << n } else { m }
                        },
                    ),
                    Some(MemAddr::Imm {
                        base: Reg::V(n), ..
                    }) => m | 1 << n,
                    _ => m,
                })
        };
        loop_bodies(items).iter().any(|insts| {
            let addrs = addr_regs(insts);
            let made_from = |n: u8| {
                insts.iter().any(|j| match j {
                    Inst::VAdd(o) | Inst::VSub(o) => {
                        o.va.0 == n
                            && o.vd.0 != n
                            && !matches!(o.vb, VSrc::V(_))
                            && addrs & (1 << o.vd.0) != 0
                    }
                    Inst::VMov(m) => {
                        m.src == VSrc::V(VReg(n)) && m.vd.0 != n && addrs & (1 << m.vd.0) != 0
                    }
                    _ => false,
                })
            };
            insts.iter().any(|i| match i {
                Inst::VAdd(o) | Inst::VSub(o) if o.vd == o.va && !matches!(o.vb, VSrc::V(_)) => {
                    made_from(o.vd.0)
                }
                _ => false,
            })
        })
    }

    /// Whether a hardware loop of `items` loads two fields or more of records through one
    /// vector address (an immediate form, distinct immediates) or through one offset vector
    /// and distinct scalar bases, and has two stores or more (the JIT's interleave group,
    /// its stores held back and reordered).
    fn aos_loop(items: &[Item]) -> bool {
        loop_bodies(items).iter().any(|insts| {
            // (vector address, immediate) and (offset vector, scalar base) of the loads.
            let mut fields: Vec<(u8, i64)> = Vec::new();
            let mut bases: Vec<(u8, i64)> = Vec::new();
            let mut stores = 0;
            for i in insts {
                let Some(ms) = i.opcode().mem() else { continue };
                if ms.dir == Dir::Store {
                    stores += 1;
                    continue;
                }
                match i.mem_operands() {
                    Some(MemOperands {
                        addr:
                            MemAddr::Imm {
                                base: Reg::V(b),
                                imm,
                            },
                        ..
                    }) => fields.push((b, i64::from(imm))),
                    Some(MemOperands {
                        addr:
                            MemAddr::RegOff {
                                base: Reg::S(b),
                                off: Reg::V(x),
                                ..
                            },
                        ..
                    }) => bases.push((x, i64::from(b))),
                    _ => {}
                }
            }
            let two = |xs: &[(u8, i64)]| {
                xs.iter()
                    .any(|&(a, p)| xs.iter().any(|&(b, q)| a == b && p != q))
            };
            stores >= 2 && (two(&fields) || two(&bases))
        })
    }

    /// The instructions of each hardware loop body of `items`.
    /// Whether a hardware loop of `items` bumps a snippet's scalar base, or recomputes it
    /// from `S.LC0` ([`Shapes::bump_base`]).
    fn bumped_base(items: &[Item]) -> bool {
        loop_bodies(items).iter().any(|insts| {
            let lc0 = insts.iter().any(|i| matches!(i, Inst::SLc0(_)));
            insts.iter().any(|i| {
                matches!(i, Inst::SAdd(o) | Inst::SSub(o)
                    if (o.sd == o.sa || lc0) && (o.sd == S_BASE || o.sd == S_BASE2))
            })
        })
    }

    fn loop_bodies(items: &[Item]) -> Vec<Vec<&Inst>> {
        let (mut bodies, mut body) = (Vec::new(), None);
        for it in items {
            match it {
                Item::LoopStart(_) => body = Some(Vec::new()),
                Item::LoopEnd => bodies.extend(body.take()),
                Item::Inst(i) => {
                    if let Some(b) = body.as_mut() {
                        b.push(i);
                    }
                }
                _ => {}
            }
        }
        bodies
    }

    /// Whether a hardware loop of `items` has f32 operations taking four or more scalar
    /// registers as operands that the loop body never writes (a filter's taps).
    fn tap_loop(items: &[Item]) -> bool {
        loop_bodies(items).iter().any(|insts| {
            let written = insts.iter().fold(0u32, |w, i| w | i.effects().writes_s);
            let taps = insts
                .iter()
                .fold(0u32, |t, i| match (i.operands(), i.opcode().sem()) {
                    (Operands::VFp(o), Sem::Fp(_, FpWidth::S)) => match o.vb {
                        VSrc::S(r) if written & (1 << r.0) == 0 => t | 1 << r.0,
                        _ => t,
                    },
                    _ => t,
                });
            taps.count_ones() >= 4
        })
    }

    /// Whether a hardware loop of `items` loads four taps in its body (uniform loads through
    /// `s26`, see `Shapes::fp_chain`).
    fn tap_load_loop(items: &[Item]) -> bool {
        loop_bodies(items).iter().any(|insts| {
            let loads = insts.iter().filter(|i| {
                matches!(i.mem_operands().map(|o| o.addr),
                    Some(MemAddr::Imm { base: Reg::S(n), .. }) if n == S_TAPS[0])
            });
            loads.count() >= 4
        })
    }

    /// Whether a hardware loop of `items` has a gather or scatter with a vector address
    /// register that the loop body never writes.
    fn read_only_index(items: &[Item]) -> bool {
        loop_bodies(items).iter().any(|insts| {
            let written = insts.iter().fold(0, |w, i| w | i.effects().writes_v);
            insts
                .iter()
                .any(|i| match i.mem_operands().map(|o| o.addr) {
                    Some(MemAddr::RegOff { base, off, .. }) => [base, off]
                        .iter()
                        .any(|r| matches!(r, Reg::V(n) if written & (1 << n) == 0)),
                    Some(MemAddr::Imm {
                        base: Reg::V(n), ..
                    }) => written & (1 << n) == 0,
                    _ => false,
                })
        })
    }
}
