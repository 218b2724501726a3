//! The race checker of `--check-races` (contract section 9): a launch of many groups run in
//! reference order on the reference interpreter, with a [`Shadow`] of guest memory that
//! records, per byte, the earliest write and the earliest access of the launch so far.
//!
//! The interpreter runs the program decoded with
//! [`Decoded::for_race_check`](crate::interp::Decoded::for_race_check): every memory (not
//! `.local`) instruction first makes its own checks (an instruction that traps for another
//! reason is not an access), then asks the shadow ([`Shadow::first_race`]): a read races with
//! an earlier group's write to one of its bytes, a write with an earlier group's access. The
//! lowest racing lane, at the lowest racing byte of its access, traps `data_race` and writes
//! nothing; the shadow keeps the earlier access (for a read the earliest write, for a write
//! the earliest access) for the trap's `other`. Otherwise the access happens and is recorded
//! ([`Shadow::record`]). Because groups run one after another, every entry made by another
//! group comes from an earlier one. A run without `--check-races` never sees any of this.
//!
//! The shadow holds, per 4 KiB page touched, the earliest write and the earliest access of
//! every byte (as ids of interned (group, pc, access) records; a page touched by one
//! instruction per table holds one id and a bit per byte, see [`Slots`]) and two summaries:
//! the lowest group that wrote any byte of the page and the lowest that accessed any. An
//! access by group g to a page whose summary is not below g cannot race there, so a group
//! working on its own pages pays only for recording; a contiguous access with every lane
//! active is checked and recorded as one byte range, and when that range lies in one page
//! whose summary rules a race out, with one page lookup for both
//! ([`Shadow::quiet_page`], [`Shadow::record_in`]).

use crate::interp::{self, Decoded};
use crate::machine::{Exit, Machine, TrapKind};
use crate::memory::{Access, Tile};
use crate::program::PAGE_SIZE;
use crate::result::{DumpRequest, RaceOther, RunResult, Tally};
use std::collections::HashMap;

const PAGE: usize = PAGE_SIZE as usize;

/// A recorded access of one instruction of one group: an index into [`Shadow::recs`] plus 1
/// (0: none).
type RecId = u32;

/// Per byte of a page, the [`RecId`] of its earliest write (or earliest access). Most pages
/// are touched by one instruction per array (a group's own slice, read by one load, written
/// by one store), so a page starts [`Slots::Uniform`]: one record and a bit per byte that has
/// it; a second record turns it into a full table.
enum Slots {
    /// No byte recorded.
    Empty,
    /// Bytes whose bit is set have record `id`; the others none.
    Uniform {
        id: RecId,
        set: Box<[u64; PAGE / 64]>,
    },
    /// One record per byte.
    Full(Box<[RecId; PAGE]>),
}

/// Bit masks of the bytes `[lo, hi)` of a page, per 64-byte word: (word, mask).
fn words(lo: usize, hi: usize) -> impl Iterator<Item = (usize, u64)> {
    (lo / 64..hi.div_ceil(64)).map(move |w| {
        let a = lo.max(w * 64) - w * 64;
        let b = hi.min(w * 64 + 64) - w * 64;
        let mask = if b - a == 64 {
            u64::MAX
        } else {
            ((1u64 << (b - a)) - 1) << a
        };
        (w, mask)
    })
}

impl Slots {
    /// The first byte in `[lo, hi)` with a record for which `racy` holds, and that record.
    fn find(&self, lo: usize, hi: usize, racy: impl Fn(RecId) -> bool) -> Option<(usize, RecId)> {
        match self {
            Slots::Empty => None,
            Slots::Uniform { id, set } => {
                if !racy(*id) {
                    return None;
                }
                words(lo, hi)
                    .find(|&(w, m)| set[w] & m != 0)
                    .map(|(w, m)| (w * 64 + (set[w] & m).trailing_zeros() as usize, *id))
            }
            Slots::Full(ids) => ids[lo..hi]
                .iter()
                .position(|&id| id != 0 && racy(id))
                .map(|k| (lo + k, ids[lo + k])),
        }
    }

    /// Give every byte of `[lo, hi)` without a record the record `id`.
    fn fill(&mut self, lo: usize, hi: usize, id: RecId) {
        match self {
            Slots::Empty => {
                let mut set = Box::new([0u64; PAGE / 64]);
                for (w, m) in words(lo, hi) {
                    set[w] |= m;
                }
                *self = Slots::Uniform { id, set };
            }
            Slots::Uniform { id: have, set } => {
                if *have == id {
                    for (w, m) in words(lo, hi) {
                        set[w] |= m;
                    }
                } else if words(lo, hi).any(|(w, m)| set[w] & m != m) {
                    let mut ids = Box::new([0 as RecId; PAGE]);
                    for (k, x) in ids.iter_mut().enumerate() {
                        if set[k / 64] >> (k % 64) & 1 != 0 {
                            *x = *have;
                        }
                    }
                    for x in &mut ids[lo..hi] {
                        if *x == 0 {
                            *x = id;
                        }
                    }
                    *self = Slots::Full(ids);
                }
            }
            Slots::Full(ids) => {
                for x in &mut ids[lo..hi] {
                    *x = if *x == 0 { id } else { *x };
                }
            }
        }
    }
}

/// The shadow of one page.
struct Page {
    /// Per byte: the earliest write.
    write: Slots,
    /// Per byte: the earliest access.
    access: Slots,
    /// The lowest group that wrote a byte of the page (`u32::MAX`: none).
    min_writer: u32,
    /// The lowest group that accessed a byte of the page.
    min_accessor: u32,
}

/// The active lanes of one memory instruction, as the race check sees them.
pub(crate) struct Lanes<'a> {
    /// Every lane's EA (`VL` of them; only lane 0's when `contiguous`).
    pub eas: &'a [u64],
    /// VL.
    pub vl: usize,
    /// Active lanes.
    pub mask: u64,
    /// Bytes per lane.
    pub width: u64,
    /// Lane i's access is `[eas[0] + i*width, ...)` and every lane is active: one range.
    pub contiguous: bool,
}

impl Lanes<'_> {
    /// The byte ranges of the access, `(lane, first byte, length)`, in ascending lane order.
    fn ranges(&self) -> impl Iterator<Item = (usize, u64, u64)> + '_ {
        let whole = self.contiguous.then(|| {
            let len = self.width * self.vl as u64;
            (0, self.eas[0], len)
        });
        let lanes = (!self.contiguous).then(|| {
            (0..self.eas.len())
                .filter(|&i| self.mask >> i & 1 != 0)
                .map(|i| (i, self.eas[i], self.width))
        });
        whole.into_iter().chain(lanes.into_iter().flatten())
    }
}

/// The pieces of `[addr, addr + len)` (which does not wrap) per page: (page, lo, hi) with
/// `lo..hi` the byte offsets in that page.
fn pieces(addr: u64, len: u64) -> impl Iterator<Item = (u64, usize, usize)> {
    let end = addr + len;
    let first = addr / PAGE_SIZE;
    let last = if len == 0 {
        first
    } else {
        (end - 1) / PAGE_SIZE + 1
    };
    (first..last).map(move |pn| {
        let lo = addr.max(pn * PAGE_SIZE) - pn * PAGE_SIZE;
        let hi = end.min((pn + 1) * PAGE_SIZE) - pn * PAGE_SIZE;
        (pn, lo as usize, hi as usize)
    })
}

/// What one instruction's last access used (see [`Shadow::by_pc`]).
#[derive(Clone, Copy, Default)]
struct PcCache {
    /// The page number of its last page, and that page's index in [`Shadow::pages`] plus 1
    /// (0: none yet).
    pn: u64,
    page: usize,
    /// Per access kind (read, write): the group that made the record and its id (0: none).
    rec: [(u32, RecId); 2],
}

/// The shadow of guest memory (see the module docs).
#[derive(Default)]
pub struct Shadow {
    pages: Vec<Page>,
    index: HashMap<u64, usize>,
    /// Every distinct (group, pc, access) recorded; [`RecId`] `i + 1` is `recs[i]`.
    recs: Vec<RaceOther>,
    rec_ids: HashMap<(u32, u64, bool), RecId>,
    /// Per instruction (pc / 8), what its last access used: most instructions stream
    /// through one page at a time, every access of a group is one record, so these answer
    /// without hashing.
    by_pc: Vec<PcCache>,
    /// The running group.
    group: u32,
    /// The earlier access of the race found, if any.
    other: Option<RaceOther>,
}

impl Shadow {
    /// The cache of the instruction at `pc`.
    fn slot(&mut self, pc: u64) -> &mut PcCache {
        let k = (pc / 8) as usize;
        if k >= self.by_pc.len() {
            self.by_pc.resize(k + 1, PcCache::default());
        }
        &mut self.by_pc[k]
    }

    /// The index of page `pn`'s shadow for an access of the instruction at `pc`, created on
    /// first use.
    fn page(&mut self, pn: u64, pc: u64) -> usize {
        self.lookup(pn, pc, true).expect("created on first use")
    }

    /// The index of page `pn`'s shadow for an access of the instruction at `pc`, if it has
    /// one.
    fn find_page(&mut self, pn: u64, pc: u64) -> Option<usize> {
        self.lookup(pn, pc, false)
    }

    /// [`Shadow::page`] (`create`) or [`Shadow::find_page`]: the instruction's cache first.
    fn lookup(&mut self, pn: u64, pc: u64, create: bool) -> Option<usize> {
        let c = self.slot(pc);
        if c.page != 0 && c.pn == pn {
            return Some(c.page - 1);
        }
        let i = match self.index.get(&pn) {
            Some(&i) => i,
            None if create => {
                self.pages.push(Page {
                    write: Slots::Empty,
                    access: Slots::Empty,
                    min_writer: u32::MAX,
                    min_accessor: u32::MAX,
                });
                let i = self.pages.len() - 1;
                self.index.insert(pn, i);
                i
            }
            None => return None,
        };
        let c = self.slot(pc);
        (c.pn, c.page) = (pn, i + 1);
        Some(i)
    }

    fn rec(&self, id: RecId) -> RaceOther {
        self.recs[id as usize - 1]
    }

    /// The id of record `r`, interned.
    fn rec_id(&mut self, r: RaceOther) -> RecId {
        let kind = usize::from(r.access == Access::Write);
        let (g, id) = self.slot(r.pc).rec[kind];
        if id != 0 && g == r.group {
            return id;
        }
        let recs = &mut self.recs;
        let key = (r.group, r.pc, r.access == Access::Write);
        let id = *self.rec_ids.entry(key).or_insert_with(|| {
            recs.push(r);
            recs.len() as RecId
        });
        self.slot(r.pc).rec[kind] = (r.group, id);
        id
    }

    /// The lowest byte of `[addr, addr + len)` whose access by the running group races, and
    /// the earlier access.
    fn race_in(
        &mut self,
        addr: u64,
        len: u64,
        access: Access,
        pc: u64,
    ) -> Option<(u64, RaceOther)> {
        let g = self.group;
        for (pn, lo, hi) in pieces(addr, len) {
            let Some(i) = self.find_page(pn, pc) else {
                continue;
            };
            let p = &self.pages[i];
            let (summary, slots) = match access {
                Access::Read => (p.min_writer, &p.write),
                Access::Write => (p.min_accessor, &p.access),
            };
            if summary >= g {
                continue;
            }
            if let Some((k, id)) = slots.find(lo, hi, |id| self.rec(id).group < g) {
                return Some((pn * PAGE_SIZE + k as u64, self.rec(id)));
            }
        }
        None
    }

    /// The first race of the `lanes` of the instruction at `pc` for the running group:
    /// (lane, byte). The earlier access is kept for the trap's `other`.
    pub(crate) fn first_race(
        &mut self,
        lanes: &Lanes<'_>,
        access: Access,
        pc: u64,
    ) -> Option<(usize, u64)> {
        for (lane, addr, len) in lanes.ranges() {
            if let Some((byte, other)) = self.race_in(addr, len, access, pc) {
                self.other = Some(other);
                let lane = if lanes.contiguous {
                    ((byte - addr) / lanes.width) as usize
                } else {
                    lane
                };
                return Some((lane, byte));
            }
        }
        None
    }

    /// Record the accesses of an instruction at `pc` that retired.
    /// A contiguous access of `len` bytes from `addr` (all lanes active) inside one page, by
    /// the instruction at `pc`: when no earlier group accessed that page in a way it could
    /// race with (its summary), the page's index, found or created once for both the check
    /// and [`Shadow::record_in`]; otherwise (or across a page boundary) `None`, and the
    /// general [`Shadow::first_race`] and [`Shadow::record`] apply.
    pub(crate) fn quiet_page(
        &mut self,
        addr: u64,
        len: u64,
        access: Access,
        pc: u64,
    ) -> Option<usize> {
        let pn = addr / PAGE_SIZE;
        if len == 0 || (addr + len - 1) / PAGE_SIZE != pn {
            return None;
        }
        let i = self.page(pn, pc);
        let p = &self.pages[i];
        let summary = match access {
            Access::Read => p.min_writer,
            Access::Write => p.min_accessor,
        };
        (summary >= self.group).then_some(i)
    }

    /// [`Shadow::record`] of a contiguous access inside page `i` (from
    /// [`Shadow::quiet_page`]).
    pub(crate) fn record_in(&mut self, i: usize, addr: u64, len: u64, access: Access, pc: u64) {
        let id = self.own_id(access, pc);
        let lo = (addr % PAGE_SIZE) as usize;
        self.mark(i, lo, lo + len as usize, access, id);
    }

    pub(crate) fn record(&mut self, lanes: &Lanes<'_>, access: Access, pc: u64) {
        let id = self.own_id(access, pc);
        for (_, addr, len) in lanes.ranges() {
            for (pn, lo, hi) in pieces(addr, len) {
                let i = self.page(pn, pc);
                self.mark(i, lo, hi, access, id);
            }
        }
    }

    /// The record id of the running group's `access` by the instruction at `pc`.
    fn own_id(&mut self, access: Access, pc: u64) -> RecId {
        self.rec_id(RaceOther {
            group: self.group,
            pc,
            access,
        })
    }

    /// Record `id` on the bytes `lo..hi` of page `i` not yet recorded, and the running
    /// group in the page's summaries.
    fn mark(&mut self, i: usize, lo: usize, hi: usize, access: Access, id: RecId) {
        let g = self.group;
        let p = &mut self.pages[i];
        p.access.fill(lo, hi, id);
        p.min_accessor = p.min_accessor.min(g);
        if access == Access::Write {
            p.write.fill(lo, hi, id);
            p.min_writer = p.min_writer.min(g);
        }
    }
}

/// Run a launch of `ngroups` groups of the program `d` decodes in reference order on `m`
/// (group 0's machine, memory and tile laid out) with race detection. The first racing access
/// ends the launch with a `data_race` trap; without one the result is the launch's ordinary
/// result.
pub fn check_races(m: &mut Machine, d: &Decoded, ngroups: u32, dumps: &[DumpRequest]) -> RunResult {
    let words: Vec<u64> = (0..d.len()).map(|i| d.word(i).unwrap_or(0)).collect();
    let checked = Decoded::new(&words).for_race_check();
    let template: Tile = m.tile.clone();
    let writes_tile = d.writes_tile();
    let mut tally = Tally::default();
    m.races = Some(Box::default());
    for gid in 0..ngroups {
        m.start_group(gid, ngroups, &template, writes_tile && gid > 0);
        if let Some(s) = m.races.as_mut() {
            s.group = gid;
            s.other = None;
        }
        let exit = interp::run(m, &checked);
        tally.group_ended(m, exit, dumps);
        let race = matches!(exit, Exit::Trapped(t) if t.kind == TrapKind::DataRace);
        if race {
            if let Some(other) = m.races.as_mut().and_then(|s| s.other.take()) {
                tally.set_race(other);
            }
            break;
        }
    }
    m.races = None;
    tally
        .finish(&m.mem)
        .unwrap_or_else(|| RunResult::capture(m, Exit::Halted, dumps))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_masks_cover_exactly_the_range() {
        let w: Vec<(usize, u64)> = words(3, 130).collect();
        assert_eq!(w, [(0, !0b111), (1, u64::MAX), (2, 0b11)]);
        assert_eq!(words(64, 128).collect::<Vec<_>>(), [(1, u64::MAX)]);
        let p: Vec<(u64, usize, usize)> = pieces(0x1ffe, 4).collect();
        assert_eq!(p, [(1, 0xffe, 0x1000), (2, 0, 2)]);
    }

    #[test]
    fn slots_stay_uniform_for_one_record_and_keep_the_earliest() {
        let mut s = Slots::Empty;
        s.fill(10, 20, 1);
        s.fill(20, 30, 1);
        assert!(matches!(s, Slots::Uniform { id: 1, .. }));
        // Bytes already recorded keep their record.
        s.fill(15, 25, 2);
        assert!(matches!(s, Slots::Uniform { id: 1, .. }));
        assert_eq!(s.find(0, PAGE, |_| true), Some((10, 1)));
        // A byte without a record gets the new one: the table becomes full.
        s.fill(28, 40, 2);
        assert!(matches!(s, Slots::Full(_)));
        assert_eq!(s.find(0, PAGE, |id| id == 2), Some((30, 2)));
        assert_eq!(s.find(0, 10, |_| true), None);
        assert_eq!(s.find(25, 26, |_| true), Some((25, 1)));
    }

    #[test]
    fn instruction_caches_follow_pages_and_groups() {
        let mut sh = Shadow::default();
        let eas = [0x1000u64, 0x3000];
        let lane = |i: usize| Lanes {
            eas: &eas[i..i + 1],
            vl: 1,
            mask: 1,
            width: 4,
            contiguous: true,
        };
        // Group 0: the instruction at 8 writes page 1, the one at 16 writes page 3.
        sh.record(&lane(0), Access::Write, 8);
        sh.record(&lane(1), Access::Write, 16);
        // Group 1: the instruction at 8 reads page 3 (its cache holds page 1) and races
        // with group 0's write at 16; a write there is recorded as group 1's, not
        // as the record group 0 made at 8.
        sh.group = 1;
        assert_eq!(sh.first_race(&lane(1), Access::Read, 8), Some((0, 0x3000)));
        let other = sh.other.take().unwrap();
        assert_eq!(
            (other.group, other.pc, other.access),
            (0, 16, Access::Write)
        );
        sh.record(&lane(1), Access::Write, 8);
        let id = sh.rec_id(RaceOther {
            group: 1,
            pc: 8,
            access: Access::Write,
        });
        assert_eq!(sh.rec(id).group, 1);
        // Group 2 writing page 1 at 8 races with group 0's write there (the earliest).
        sh.group = 2;
        assert_eq!(sh.first_race(&lane(0), Access::Write, 8), Some((0, 0x1000)));
        assert_eq!(sh.other.take().unwrap().group, 0);
    }
}
