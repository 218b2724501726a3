//! The result of a run as contract section 8 defines it, and its JSON form.
//!
//! [`RunResult`] captures everything the JSON shows (status, pc, retired count, trap, mask,
//! LC0BASE, every scalar and vector register, the requested dumps). Two engines agree when
//! their `RunResult`s are equal; engine statistics travel beside it, never inside the
//! comparison. A launch of several groups (contract section 9) adds the reported group, the
//! count of groups by how they ended, and for a `data_race` trap the earlier group's access.

use crate::machine::{Exit, Machine, Trap, TrapKind};
use crate::memory::{Access, Memory};
use crate::program::{Program, Space};
use serde_json::{Map, Value, json};
use std::fmt::Write as _;

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// A `HALT` retired.
    Halted,
    /// An instruction trapped.
    Trapped,
    /// `--max-instructions` was reached.
    Limit,
}

impl Status {
    /// The JSON name.
    pub const fn name(self) -> &'static str {
        match self {
            Status::Halted => "halted",
            Status::Trapped => "trapped",
            Status::Limit => "limit",
        }
    }

    /// The process exit code of contract section 8.
    pub const fn exit_code(self) -> i32 {
        match self {
            Status::Halted => 0,
            Status::Trapped => 1,
            Status::Limit => 3,
        }
    }
}

/// A memory or tile range to dump after the run (`--dump-mem`, `--dump-tile`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DumpRequest {
    /// Which space.
    pub space: Space,
    /// First byte.
    pub addr: u64,
    /// Length.
    pub len: u64,
}

/// A dump request is not inside mapped memory or tile space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DumpError {
    /// Some byte of the range is not mapped.
    #[error("memory range 0x{addr:x}+0x{len:x} is not entirely mapped")]
    NotMapped {
        /// First byte.
        addr: u64,
        /// Length.
        len: u64,
    },
    /// Some byte is outside the tile.
    #[error("tile range 0x{addr:x}+0x{len:x} lies outside the 0x{size:x}-byte tile")]
    OutsideTile {
        /// First byte.
        addr: u64,
        /// Length.
        len: u64,
        /// Tile size.
        size: u64,
    },
}

impl DumpRequest {
    /// Check the request against `program`'s map and tile (before anything runs).
    /// An empty range is always acceptable.
    pub fn validate(&self, program: &Program) -> Result<(), DumpError> {
        let (addr, len) = (self.addr, self.len);
        if len == 0 {
            return Ok(());
        }
        match self.space {
            Space::Memory if program.range_mapped(addr, len) => Ok(()),
            Space::Memory => Err(DumpError::NotMapped { addr, len }),
            Space::Tile => match addr.checked_add(len) {
                Some(end) if end <= program.tile_size => Ok(()),
                _ => Err(DumpError::OutsideTile {
                    addr,
                    len,
                    size: program.tile_size,
                }),
            },
        }
    }
}

/// One captured dump.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dump {
    /// The request.
    pub request: DumpRequest,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// How the groups of a launch ended (`"groups"` in the JSON).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct GroupCounts {
    /// Groups whose `HALT` retired.
    pub halted: u64,
    /// Groups that trapped.
    pub trapped: u64,
    /// Groups that reached `--max-instructions`.
    pub limit: u64,
}

impl GroupCounts {
    /// Count one group that ended with `exit`.
    pub fn add(&mut self, exit: &Exit) {
        match exit {
            Exit::Halted => self.halted += 1,
            Exit::Trapped(_) => self.trapped += 1,
            Exit::Limit => self.limit += 1,
        }
    }

    /// Add another tally.
    pub fn merge(&mut self, o: GroupCounts) {
        self.halted += o.halted;
        self.trapped += o.trapped;
        self.limit += o.limit;
    }

    /// The launch's status: trapped if any group trapped, else limit if any reached it.
    pub fn status(&self) -> Status {
        if self.trapped > 0 {
            Status::Trapped
        } else if self.limit > 0 {
            Status::Limit
        } else {
            Status::Halted
        }
    }
}

/// The running summary of a launch, group by group (contract section 9): how many groups
/// ended how, instructions retired in all, and the state of the group to report so far. A
/// launch on several threads keeps one per thread and merges them; the merged result does
/// not depend on which thread ran which group.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Groups by how they ended.
    pub counts: GroupCounts,
    /// Instructions retired by every group.
    pub retired: u64,
    /// The best candidate for the reported group: `(rank, result)`, see [`Tally::rank`].
    best: Option<((u8, u32), RunResult)>,
}

impl Tally {
    /// The report order: the group whose `data_race` trap ended the launch, else the lowest
    /// trapped group, else the lowest at its limit, else the lowest halted (group 0, when
    /// every group halted).
    fn rank(exit: &Exit, gid: u32) -> (u8, u32) {
        let class = match exit {
            Exit::Trapped(t) if t.kind == TrapKind::DataRace => 0,
            Exit::Trapped(_) => 1,
            Exit::Limit => 2,
            Exit::Halted => 3,
        };
        (class, gid)
    }

    /// Name the earlier group's access on the reported group's `data_race` trap.
    pub fn set_race(&mut self, other: RaceOther) {
        if let Some((_, r)) = &mut self.best {
            r.race = Some(other);
        }
    }

    /// Count group `m.regs.gid`, which ended with `exit`, and keep its state (registers and
    /// tile dumps; memory dumps are read after the launch) if it is the best candidate so far.
    /// Allocates only for a new candidate, which a thread sees a few times per launch.
    pub fn group_ended(&mut self, m: &Machine, exit: Exit, dumps: &[DumpRequest]) {
        self.counts.add(&exit);
        self.retired += m.retired;
        let rank = Self::rank(&exit, m.regs.gid as u32);
        if self.best.as_ref().is_none_or(|(r, _)| rank < *r) {
            self.best = Some((rank, RunResult::capture_group(m, exit, dumps, None)));
        }
    }

    /// Add another thread's tally.
    pub fn merge(&mut self, o: Tally) {
        self.counts.merge(o.counts);
        self.retired += o.retired;
        if let Some((rank, r)) = o.best {
            if self.best.as_ref().is_none_or(|(b, _)| rank < *b) {
                self.best = Some((rank, r));
            }
        }
    }

    /// The launch's result once every group has ended (`None` if no group ran): the reported
    /// group's state, the launch's status and counts, memory dumps read from `mem`.
    pub fn finish(self, mem: &Memory) -> Option<RunResult> {
        let (_, mut r) = self.best?;
        r.status = self.counts.status();
        r.instructions = self.retired;
        r.groups = Some(self.counts);
        r.dump_memory(mem);
        Some(r)
    }
}

/// The earlier group's access a `data_race` trap names (`"other"` in the trap).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RaceOther {
    /// The earlier group.
    pub group: u32,
    /// Its instruction's pc.
    pub pc: u64,
    /// What that instruction did to the byte.
    pub access: Access,
}

/// Everything the JSON result shows.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RunResult {
    /// How the run ended.
    pub status: Status,
    /// halted: the HALT; trapped: the trapping instruction; limit: the next one.
    pub pc: u64,
    /// Retired instructions.
    pub instructions: u64,
    /// The trap, when trapped.
    pub trap: Option<Trap>,
    /// Execution mask.
    pub mask: u64,
    /// LC0BASE.
    pub lc0: u64,
    /// `s0..s31`.
    pub scalars: [u64; 32],
    /// `v0..v31`, VL lanes each.
    pub vectors: Vec<Vec<u64>>,
    /// Dumps in flag order.
    pub dumps: Vec<Dump>,
    /// The reported group (0 for a single group).
    pub group: u32,
    /// For a launch of several groups: how they ended (the JSON then shows `group` and
    /// `groups`).
    pub groups: Option<GroupCounts>,
    /// For a `data_race` trap: the earlier group's access.
    pub race: Option<RaceOther>,
}

impl RunResult {
    /// Capture the result of a run that ended with `exit` on `m`. Dump requests must have been
    /// validated; an invalid one yields an empty dump rather than a panic.
    pub fn capture(m: &Machine, exit: Exit, dumps: &[DumpRequest]) -> RunResult {
        Self::capture_group(m, exit, dumps, Some(&m.mem))
    }

    /// As [`RunResult::capture`], reading memory dumps from `mem` (left empty when `None`:
    /// a launch captures a group's state while other groups may still write memory, and fills
    /// them in with [`RunResult::dump_memory`] once every group has ended).
    pub fn capture_group(
        m: &Machine,
        exit: Exit,
        dumps: &[DumpRequest],
        mem: Option<&Memory>,
    ) -> RunResult {
        let (status, trap) = match exit {
            Exit::Halted => (Status::Halted, None),
            Exit::Trapped(t) => (Status::Trapped, Some(t)),
            Exit::Limit => (Status::Limit, None),
        };
        let vl = m.vl();
        let vectors = m.regs.v.iter().map(|v| v[..vl].to_vec()).collect();
        let dumps = dumps
            .iter()
            .map(|&request| {
                let bytes = match request.space {
                    Space::Memory => mem.and_then(|mem| mem.bytes(request.addr, request.len)),
                    Space::Tile => m.tile.bytes(request.addr, request.len),
                };
                Dump {
                    request,
                    bytes: bytes.map(<[u8]>::to_vec).unwrap_or_default(),
                }
            })
            .collect();
        RunResult {
            status,
            pc: m.pc,
            instructions: m.retired,
            trap,
            mask: m.regs.mask,
            lc0: m.regs.lc0base,
            scalars: m.regs.s,
            vectors,
            dumps,
            group: m.regs.gid as u32,
            groups: None,
            race: None,
        }
    }

    /// Read every memory dump from `mem` (after a launch).
    pub fn dump_memory(&mut self, mem: &Memory) {
        for d in &mut self.dumps {
            if d.request.space == Space::Memory {
                let r = d.request;
                d.bytes = mem
                    .bytes(r.addr, r.len)
                    .map(<[u8]>::to_vec)
                    .unwrap_or_default();
            }
        }
    }

    /// The contract's JSON object (without extra keys).
    pub fn to_json(&self) -> Value {
        let trap = match &self.trap {
            None => Value::Null,
            Some(t) => {
                let mut o = Map::new();
                o.insert("kind".into(), t.kind.name().into());
                o.insert("pc".into(), hex(t.pc).into());
                let mf = t.mem;
                o.insert("lane".into(), mf.map_or(Value::Null, |f| f.lane.into()));
                o.insert("ea".into(), mf.map_or(Value::Null, |f| hex(f.ea).into()));
                o.insert(
                    "space".into(),
                    mf.map_or(Value::Null, |f| space_name(f.space).into()),
                );
                o.insert(
                    "access".into(),
                    mf.map_or(Value::Null, |f| f.access.name().into()),
                );
                if let Some(r) = &self.race {
                    o.insert(
                        "other".into(),
                        json!({"group": r.group, "pc": hex(r.pc), "access": r.access.name()}),
                    );
                }
                Value::Object(o)
            }
        };
        let dumps: Vec<Value> = self
            .dumps
            .iter()
            .map(|d| {
                json!({
                    "space": space_name(d.request.space),
                    "addr": hex(d.request.addr),
                    "hex": hex_bytes(&d.bytes),
                })
            })
            .collect();
        let mut o = Map::new();
        o.insert("status".into(), self.status.name().into());
        o.insert("pc".into(), hex(self.pc).into());
        o.insert("instructions".into(), self.instructions.into());
        o.insert("trap".into(), trap);
        o.insert("mask".into(), hex(self.mask).into());
        o.insert("lc0".into(), hex(self.lc0).into());
        o.insert(
            "scalars".into(),
            self.scalars.iter().map(|&v| Value::from(hex(v))).collect(),
        );
        o.insert(
            "vectors".into(),
            self.vectors
                .iter()
                .map(|v| v.iter().map(|&x| Value::from(hex(x))).collect::<Value>())
                .collect(),
        );
        o.insert("dumps".into(), Value::Array(dumps));
        if let Some(g) = &self.groups {
            o.insert("group".into(), self.group.into());
            o.insert(
                "groups".into(),
                json!({"halted": g.halted, "trapped": g.trapped, "limit": g.limit}),
            );
        }
        Value::Object(o)
    }

    /// A readable multi-line summary (the output of `lanejit run` without `--json`).
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let _ = write!(
            s,
            "status: {} at pc {} after {} instructions",
            self.status.name(),
            hex(self.pc),
            self.instructions
        );
        if let Some(t) = &self.trap {
            let _ = write!(s, "\ntrap: {} at pc {}", t.kind.name(), hex(t.pc));
            if let Some(f) = t.mem {
                let _ = write!(
                    s,
                    ", lane {}, ea {}, {} {}",
                    f.lane,
                    hex(f.ea),
                    space_name(f.space),
                    f.access.name()
                );
            }
            if let Some(r) = &self.race {
                let _ = write!(
                    s,
                    "\n  races with group {}'s {} at pc {}",
                    r.group,
                    r.access.name(),
                    hex(r.pc)
                );
            }
        }
        if let Some(g) = &self.groups {
            let _ = write!(
                s,
                "\ngroups: {} halted, {} trapped, {} at the limit; registers and tile of group {}",
                g.halted, g.trapped, g.limit, self.group
            );
        }
        let _ = write!(s, "\nmask: {}  lc0: {}", hex(self.mask), hex(self.lc0));
        for (i, &v) in self.scalars.iter().enumerate() {
            if v != 0 {
                let _ = write!(s, "\ns{i:<2} = {}", hex(v));
            }
        }
        for (i, v) in self.vectors.iter().enumerate() {
            if v.iter().any(|&x| x != 0) {
                let lanes: Vec<String> = v.iter().map(|&x| hex(x)).collect();
                let _ = write!(s, "\nv{i:<2} = [{}]", lanes.join(", "));
            }
        }
        for d in &self.dumps {
            let _ = write!(
                s,
                "\ndump {} {} ({} bytes): {}",
                space_name(d.request.space),
                hex(d.request.addr),
                d.bytes.len(),
                hex_bytes(&d.bytes)
            );
        }
        s.push('\n');
        s
    }
}

/// `0x`-prefixed lowercase hex without leading zeros.
pub fn hex(v: u64) -> String {
    format!("{v:#x}")
}

/// Bytes as lowercase hex pairs.
pub fn hex_bytes(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

/// `"memory"` or `"tile"`.
pub const fn space_name(s: Space) -> &'static str {
    match s {
        Space::Memory => "memory",
        Space::Tile => "tile",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_has_no_leading_zeros() {
        assert_eq!(hex(0), "0x0");
        assert_eq!(hex(0xab), "0xab");
        assert_eq!(hex(u64::MAX), "0xffffffffffffffff");
        assert_eq!(hex_bytes(&[0, 0xff, 0x0a]), "00ff0a");
        assert_eq!(hex_bytes(&[]), "");
    }

    #[test]
    fn dump_validation() {
        let mut p = Program::default();
        p.mem_map.push(crate::program::MemRange {
            start: 0x1000,
            len: 0x2000,
            perm: crate::program::MemPerm::R,
        });
        let m = |addr, len| DumpRequest {
            space: Space::Memory,
            addr,
            len,
        };
        assert!(m(0x1000, 0x2000).validate(&p).is_ok());
        assert!(m(0xfff, 2).validate(&p).is_err());
        assert!(m(0x2fff, 2).validate(&p).is_err());
        assert!(m(u64::MAX, 2).validate(&p).is_err());
        assert!(m(0, 0).validate(&p).is_ok());
        let t = |addr, len| DumpRequest {
            space: Space::Tile,
            addr,
            len,
        };
        assert!(t(0, 65536).validate(&p).is_ok());
        assert!(t(1, 65536).validate(&p).is_err());
        assert!(t(u64::MAX, 2).validate(&p).is_err());
    }
}
