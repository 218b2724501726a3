//! The race checker of `--check-races` (contract section 9): a launch of many groups run in
//! reference order on the reference interpreter, with a shadow of guest memory that records,
//! per byte, the earliest write and the earliest access of the launch so far.
//!
//! Before an instruction that accesses guest memory (not tile space) runs, its active lanes
//! are looked up in the shadow ([`crate::interp::memory_lanes`] gives their EAs). A read races
//! with an earlier group's write to one of its bytes, a write with an earlier group's access;
//! the lowest racing lane, at the lowest racing byte of its access, traps `data_race`, naming
//! the earliest such write (for a read) or access (for a write) as `other`. Because groups run
//! one after another, every shadow entry made by another group comes from an earlier one, and
//! "the earliest access by an earlier group" is simply the earliest recorded access when its
//! group is not the running one.
//!
//! An instruction that traps for another reason is not an access: when a racing instruction is
//! found, the checker saves what it could change (the register file and, for a store, the bytes
//! its lanes would write), lets the interpreter execute it, and if it did not trap restores
//! that state and reports the race instead. So the trap precedence and every other trap are
//! the interpreter's own, and the check costs nothing to a run without `--check-races`.
//!
//! The shadow is a map from 4 KiB pages to two `u64` per byte, allocated on a page's first
//! access, so its memory follows the bytes the launch touches.

use crate::interp::{self, Decoded, MemLanes};
use crate::machine::{Exit, Machine, MemFault, Trap, TrapKind};
use crate::memory::{Access, Tile};
use crate::program::{PAGE_SIZE, Space};
use crate::result::{DumpRequest, RaceOther, RunResult, Tally};
use std::collections::HashMap;

/// One recorded access: 0 for none, else `(group + 1) << 39 | write << 38 | pc / 8`.
type Entry = u64;

const WRITE_BIT: u64 = 1 << 38;
const PC_MASK: u64 = WRITE_BIT - 1;

fn entry(group: u32, pc: u64, access: Access) -> Entry {
    (u64::from(group) + 1) << 39
        | if access == Access::Write {
            WRITE_BIT
        } else {
            0
        }
        | (pc / 8) & PC_MASK
}

fn group_of(e: Entry) -> u32 {
    ((e >> 39) - 1) as u32
}

fn other_of(e: Entry) -> RaceOther {
    RaceOther {
        group: group_of(e),
        pc: (e & PC_MASK) * 8,
        access: if e & WRITE_BIT != 0 {
            Access::Write
        } else {
            Access::Read
        },
    }
}

/// Per byte of a page: `[earliest write, earliest access]`.
type Page = [[Entry; 2]; PAGE_SIZE as usize];

/// The shadow of guest memory.
#[derive(Default)]
struct Shadow {
    pages: HashMap<u64, Box<Page>>,
}

impl Shadow {
    fn page(&self, addr: u64) -> Option<&Page> {
        self.pages.get(&(addr / PAGE_SIZE)).map(|p| &**p)
    }

    fn page_mut(&mut self, addr: u64) -> &mut Page {
        self.pages
            .entry(addr / PAGE_SIZE)
            .or_insert_with(|| Box::new([[0; 2]; PAGE_SIZE as usize]))
    }

    /// The earlier group's entry an access of `group` to byte `addr` races with.
    fn races(&self, addr: u64, group: u32, access: Access) -> Option<Entry> {
        let slot = self.page(addr)?[(addr % PAGE_SIZE) as usize];
        let e = match access {
            Access::Read => slot[0],
            Access::Write => slot[1],
        };
        (e != 0 && group_of(e) != group).then_some(e)
    }

    /// The first race of `lanes` for `group`: (lane, byte, the earlier entry).
    fn first_race(&self, lanes: &MemLanes, group: u32) -> Option<(u32, u64, Entry)> {
        let mut bits = lanes.mask;
        while bits != 0 {
            let i = bits.trailing_zeros();
            bits &= bits - 1;
            let ea = lanes.eas[i as usize & 63];
            for k in 0..lanes.width {
                // A wrapping range faults; it is not an access.
                let addr = ea.checked_add(k)?;
                if let Some(e) = self.races(addr, group, lanes.access) {
                    return Some((i, addr, e));
                }
            }
        }
        None
    }

    /// Record the accesses of an instruction that retired.
    fn record(&mut self, lanes: &MemLanes, group: u32, pc: u64) {
        let e = entry(group, pc, lanes.access);
        let mut bits = lanes.mask;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize & 63;
            bits &= bits - 1;
            let ea = lanes.eas[i];
            for k in 0..lanes.width {
                let addr = ea.wrapping_add(k);
                let slot = &mut self.page_mut(addr)[(addr % PAGE_SIZE) as usize];
                if lanes.access == Access::Write && slot[0] == 0 {
                    slot[0] = e;
                }
                if slot[1] == 0 {
                    slot[1] = e;
                }
            }
        }
    }
}

/// Run group `m.regs.gid` (already started) to its end on the interpreter under the shadow.
/// Returns its exit and, for a `data_race` trap, the earlier access.
fn run_group(m: &mut Machine, d: &Decoded, shadow: &mut Shadow) -> (Exit, Option<RaceOther>) {
    let group = m.regs.gid as u32;
    loop {
        let lanes = interp::memory_lanes(m, d);
        let Some(lanes) = lanes else {
            if let Some(e) = interp::step(m, d) {
                return (e, None);
            }
            continue;
        };
        let pc = m.pc;
        let Some((lane, addr, other)) = shadow.first_race(&lanes, group) else {
            match interp::step(m, d) {
                Some(e) => return (e, None),
                None => shadow.record(&lanes, group, pc),
            }
            continue;
        };
        // A race, unless the instruction traps for another reason: run it, then undo it.
        let (regs, retired) = (m.regs.clone(), m.retired);
        let saved = saved_bytes(m, &lanes);
        if let Some(e) = interp::step(m, d) {
            // A trap, or the limit before the instruction was fetched: no access.
            return (e, None);
        }
        m.regs = regs;
        m.retired = retired;
        m.pc = pc;
        restore_bytes(m, &lanes, &saved);
        let trap = Trap {
            kind: TrapKind::DataRace,
            pc,
            mem: Some(MemFault {
                lane,
                ea: addr,
                space: Space::Memory,
                access: lanes.access,
            }),
        };
        return (Exit::Trapped(trap), Some(other_of(other)));
    }
}

/// The bytes a store's active lanes may overwrite (empty for a load; a lane whose range is
/// not mapped saves nothing: the store would fault).
fn saved_bytes(m: &Machine, lanes: &MemLanes) -> Vec<Option<Vec<u8>>> {
    if lanes.access == Access::Read {
        return Vec::new();
    }
    (0..64)
        .map(|i| {
            (lanes.mask >> i & 1 != 0)
                .then(|| m.mem.bytes(lanes.eas[i], lanes.width).map(<[u8]>::to_vec))
                .flatten()
        })
        .collect()
}

fn restore_bytes(m: &mut Machine, lanes: &MemLanes, saved: &[Option<Vec<u8>>]) {
    let Some(mem) = m.mem_mut() else {
        return;
    };
    for (i, b) in saved.iter().enumerate() {
        if let Some(b) = b {
            if let Some(dst) = mem.bytes_mut(lanes.eas[i], lanes.width) {
                dst.copy_from_slice(b);
            }
        }
    }
}

/// Run a launch of `ngroups` groups of `d` in reference order on `m` (group 0's machine,
/// memory and tile laid out, memory not shared with another machine) with race detection.
/// The first racing access ends the launch with a `data_race` trap; without one the result is
/// the launch's ordinary result.
pub fn check_races(m: &mut Machine, d: &Decoded, ngroups: u32, dumps: &[DumpRequest]) -> RunResult {
    let template: Tile = m.tile.clone();
    let writes_tile = d.writes_tile();
    let mut shadow = Shadow::default();
    let mut tally = Tally::default();
    for gid in 0..ngroups {
        m.start_group(gid, ngroups, &template, writes_tile && gid > 0);
        let (exit, race) = run_group(m, d, &mut shadow);
        tally.group_ended(m, exit, dumps);
        if let Some(other) = race {
            tally.set_race(other);
            break;
        }
    }
    tally
        .finish(&m.mem)
        .unwrap_or_else(|| RunResult::capture(m, Exit::Halted, dumps))
}
