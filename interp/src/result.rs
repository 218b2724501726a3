//! The result of a run as contract section 8 defines it, and its JSON form.
//!
//! [`RunResult`] captures everything the JSON shows (status, pc, retired count, trap, mask,
//! LC0BASE, every scalar and vector register, the requested dumps). Two engines agree when
//! their `RunResult`s are equal; engine statistics travel beside it, never inside the
//! comparison. A launch of several groups (contract section 9) adds the reported group, the
//! count of groups by how they ended, and for a `data_race` trap the earlier group's access.

use crate::machine::{Exit, Machine, MemFault, Trap, TrapKind};
use crate::memory::{Access, Memory};
use crate::program::{Program, Space};
use crate::view::ElemType;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write as _;

/// How a run ended (serialized as its JSON name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
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
    /// Length in bytes.
    pub len: u64,
    /// The element type to show the bytes as (`--dump-mem out:64:f32`); `None` shows bytes.
    /// With a type, the JSON dump adds `"type"` and `"values"` after the contract's keys.
    pub ty: Option<ElemType>,
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
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

/// Everything the JSON result shows. Serialized (through [`ResultJson`]) as exactly the
/// contract's object, and read back from it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "ResultJson", try_from = "ResultJson")]
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

    /// How the run ended, as the machine said it (for a launch, the reported group's trap).
    pub fn exit(&self) -> Exit {
        match (self.status, self.trap) {
            (Status::Trapped, Some(t)) => Exit::Trapped(t),
            (Status::Limit, _) => Exit::Limit,
            _ => Exit::Halted,
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
        // Serializing hex strings, numbers and names cannot fail.
        serde_json::to_value(self).unwrap_or_default()
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
                "\ndump {} {}, {} bytes",
                space_name(d.request.space),
                hex(d.request.addr),
                d.bytes.len()
            );
            match d.request.ty {
                Some(t) => {
                    let _ = writeln!(s, " as {t}:");
                    s.push_str(&typed_rows(d.request.addr, &d.bytes, t));
                }
                None => {
                    s.push_str(":\n");
                    s.push_str(&hexdump(d.request.addr, &d.bytes));
                }
            }
            s.pop();
        }
        s.push('\n');
        s
    }
}

/// `bytes` (starting at address `addr`) in the layout of `hexdump -C`: 16 bytes a row, the
/// address, two groups of eight hex bytes, the printable ASCII between bars. A run of
/// identical rows prints once, then `*`; the last line is the end address.
pub fn hexdump(addr: u64, bytes: &[u8]) -> String {
    let mut s = String::new();
    let mut prev: Option<&[u8]> = None;
    let mut starred = false;
    for (i, row) in bytes.chunks(16).enumerate() {
        if prev == Some(row) && row.len() == 16 {
            if !starred {
                s.push_str("*\n");
                starred = true;
            }
            continue;
        }
        prev = Some(row);
        starred = false;
        let _ = write!(s, "{:08x} ", addr.wrapping_add(16 * i as u64));
        for k in 0..16 {
            if k == 8 {
                s.push(' ');
            }
            match row.get(k) {
                Some(b) => {
                    let _ = write!(s, " {b:02x}");
                }
                None => s.push_str("   "),
            }
        }
        s.push_str("  |");
        s.extend(row.iter().map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '.'
            }
        }));
        s.push_str("|\n");
    }
    let _ = writeln!(s, "{:08x}", addr.wrapping_add(bytes.len() as u64));
    s
}

/// `bytes` (starting at `addr`) as values of `t`, eight a row, each row led by its address.
pub fn typed_rows(addr: u64, bytes: &[u8], t: ElemType) -> String {
    let per_row = 8;
    let mut s = String::new();
    let vals: Vec<String> = t.values(bytes).map(|e| e.to_string()).collect();
    let width = vals.iter().map(String::len).max().unwrap_or(0);
    for (i, row) in vals.chunks(per_row).enumerate() {
        let at = addr.wrapping_add((i * per_row * t.size()) as u64);
        let _ = write!(s, "{at:08x} ");
        for v in row {
            let _ = write!(s, " {v:>width$}");
        }
        s.push('\n');
    }
    s
}

/// A 64-bit value as the contract writes it: a `0x` hex string without leading zeros.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Hex(u64);

impl Serialize for Hex {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex(self.0))
    }
}

impl<'de> Deserialize<'de> for Hex {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Hex, D::Error> {
        let text = String::deserialize(d)?;
        text.strip_prefix("0x")
            .and_then(|h| u64::from_str_radix(h, 16).ok())
            .map(Hex)
            .ok_or_else(|| serde::de::Error::custom(format!("`{text}` is not 0x hex")))
    }
}

/// Bytes as the contract's `hex` string of lowercase pairs.
#[derive(Clone, Debug, PartialEq, Eq)]
struct HexBytes(Vec<u8>);

impl Serialize for HexBytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex_bytes(&self.0))
    }
}

impl<'de> Deserialize<'de> for HexBytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<HexBytes, D::Error> {
        let text = String::deserialize(d)?;
        let bad = || serde::de::Error::custom("`hex` is not lowercase hex pairs");
        if text.len() % 2 != 0 {
            return Err(bad());
        }
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(text.get(i..i + 2).ok_or_else(bad)?, 16).map_err(|_| bad()))
            .collect::<Result<_, _>>()
            .map(HexBytes)
    }
}

/// The contract's `trap` object.
#[derive(Serialize, Deserialize)]
struct TrapJson {
    kind: TrapKind,
    pc: Hex,
    lane: Option<u32>,
    ea: Option<Hex>,
    space: Option<Space>,
    access: Option<Access>,
    /// A `data_race` trap's earlier access (contract section 9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    other: Option<OtherJson>,
}

/// The `other` object of a `data_race` trap.
#[derive(Serialize, Deserialize)]
struct OtherJson {
    group: u32,
    pc: Hex,
    access: Access,
}

/// One entry of the contract's `dumps`, with `type` and `values` after it when typed.
#[derive(Serialize, Deserialize)]
struct DumpJson {
    space: Space,
    addr: Hex,
    hex: HexBytes,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    ty: Option<ElemType>,
    /// Derived from `hex` and `type`: written, ignored when read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    values: Option<Vec<Value>>,
}

/// The contract's result object, key for key in its order.
#[derive(Serialize, Deserialize)]
struct ResultJson {
    status: Status,
    pc: Hex,
    instructions: u64,
    trap: Option<TrapJson>,
    mask: Hex,
    lc0: Hex,
    scalars: Vec<Hex>,
    vectors: Vec<Vec<Hex>>,
    dumps: Vec<DumpJson>,
    /// A launch of several groups: the reported group and the groups by how they ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    group: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    groups: Option<GroupCounts>,
}

impl From<RunResult> for ResultJson {
    fn from(r: RunResult) -> ResultJson {
        let hexes = |v: &[u64]| v.iter().map(|&x| Hex(x)).collect::<Vec<_>>();
        ResultJson {
            status: r.status,
            pc: Hex(r.pc),
            instructions: r.instructions,
            trap: r.trap.map(|t| TrapJson {
                kind: t.kind,
                pc: Hex(t.pc),
                lane: t.mem.map(|f| f.lane),
                ea: t.mem.map(|f| Hex(f.ea)),
                space: t.mem.map(|f| f.space),
                access: t.mem.map(|f| f.access),
                other: r.race.map(|o| OtherJson {
                    group: o.group,
                    pc: Hex(o.pc),
                    access: o.access,
                }),
            }),
            mask: Hex(r.mask),
            lc0: Hex(r.lc0),
            scalars: hexes(&r.scalars),
            vectors: r.vectors.iter().map(|v| hexes(v)).collect(),
            dumps: r
                .dumps
                .into_iter()
                .map(|d| DumpJson {
                    space: d.request.space,
                    addr: Hex(d.request.addr),
                    ty: d.request.ty,
                    values: d
                        .request
                        .ty
                        .map(|t| t.values(&d.bytes).map(|e| e.json()).collect()),
                    hex: HexBytes(d.bytes),
                })
                .collect(),
            group: r.groups.map(|_| r.group),
            groups: r.groups,
        }
    }
}

impl TryFrom<ResultJson> for RunResult {
    type Error = String;

    fn try_from(j: ResultJson) -> Result<RunResult, String> {
        let scalars: [u64; 32] = j
            .scalars
            .iter()
            .map(|h| h.0)
            .collect::<Vec<_>>()
            .try_into()
            .map_err(|v: Vec<u64>| format!("{} scalars, not 32", v.len()))?;
        let race = j
            .trap
            .as_ref()
            .and_then(|t| t.other.as_ref())
            .map(|o| RaceOther {
                group: o.group,
                pc: o.pc.0,
                access: o.access,
            });
        let trap = match j.trap {
            None => None,
            Some(t) => {
                let mem = match (t.lane, t.ea, t.space, t.access) {
                    (Some(lane), Some(ea), Some(space), Some(access)) => Some(MemFault {
                        lane,
                        ea: ea.0,
                        space,
                        access,
                    }),
                    (None, None, None, None) => None,
                    _ => {
                        return Err(
                            "a trap's lane, ea, space and access are all null or none".into()
                        );
                    }
                };
                Some(Trap {
                    kind: t.kind,
                    pc: t.pc.0,
                    mem,
                })
            }
        };
        Ok(RunResult {
            status: j.status,
            pc: j.pc.0,
            instructions: j.instructions,
            trap,
            mask: j.mask.0,
            lc0: j.lc0.0,
            scalars,
            vectors: j
                .vectors
                .iter()
                .map(|v| v.iter().map(|h| h.0).collect())
                .collect(),
            dumps: j
                .dumps
                .into_iter()
                .map(|d| Dump {
                    request: DumpRequest {
                        space: d.space,
                        addr: d.addr.0,
                        len: d.hex.0.len() as u64,
                        ty: d.ty,
                    },
                    bytes: d.hex.0,
                })
                .collect(),
            group: j.group.unwrap_or(0),
            groups: j.groups,
            race,
        })
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
    fn json_reads_back() {
        use crate::machine::TrapKind;
        let mut r = RunResult {
            status: Status::Trapped,
            pc: 0x88,
            instructions: 12,
            trap: Some(Trap {
                kind: TrapKind::PermissionFault,
                pc: 0x88,
                mem: Some(MemFault {
                    lane: 3,
                    ea: 0x10ff8,
                    space: Space::Memory,
                    access: Access::Write,
                }),
            }),
            mask: 0xf,
            lc0: 0,
            scalars: [7; 32],
            vectors: vec![vec![0, u64::MAX]; 32],
            dumps: vec![Dump {
                request: DumpRequest {
                    space: Space::Tile,
                    addr: 0x40,
                    len: 4,
                    ty: Some(ElemType::F32),
                },
                bytes: vec![0, 0, 0x20, 0x40],
            }],
            group: 0,
            groups: None,
            race: None,
        };
        let text = r.to_json().to_string();
        assert!(text.starts_with(
            "{\"status\":\"trapped\",\"pc\":\"0x88\",\"instructions\":12,\"trap\":{\"kind\":\"permission_fault\",\"pc\":\"0x88\",\"lane\":3,\"ea\":\"0x10ff8\",\"space\":\"memory\",\"access\":\"write\"},\"mask\":\"0xf\",\"lc0\":\"0x0\",\"scalars\":[\"0x7\","
        ), "{text}");
        assert!(text.ends_with(
            "\"dumps\":[{\"space\":\"tile\",\"addr\":\"0x40\",\"hex\":\"00002040\",\"type\":\"f32\",\"values\":[2.5]}]}"
        ), "{text}");
        assert_eq!(serde_json::from_str::<RunResult>(&text).unwrap(), r);
        r.trap = Some(Trap {
            kind: TrapKind::IllegalInstruction,
            pc: 0,
            mem: None,
        });
        r.dumps[0].request.ty = None;
        let text = r.to_json().to_string();
        assert!(text.contains("\"trap\":{\"kind\":\"illegal_instruction\",\"pc\":\"0x0\",\"lane\":null,\"ea\":null,\"space\":null,\"access\":null}"), "{text}");
        assert!(text.ends_with("\"hex\":\"00002040\"}]}"), "{text}");
        assert_eq!(serde_json::from_str::<RunResult>(&text).unwrap(), r);
        for bad in [
            "{}",
            &text.replace("0x0\"", "0\""),
            &text.replace("00002040", "0002040"),
        ] {
            assert!(serde_json::from_str::<RunResult>(bad).is_err(), "{bad}");
        }
        // A launch's result: the reported group, the counts, a data race's earlier access.
        r.trap = Some(Trap {
            kind: TrapKind::DataRace,
            pc: 0x10,
            mem: Some(MemFault {
                lane: 0,
                ea: 0x2000,
                space: Space::Memory,
                access: Access::Write,
            }),
        });
        r.group = 2;
        r.groups = Some(GroupCounts {
            halted: 1,
            trapped: 2,
            limit: 0,
        });
        r.race = Some(RaceOther {
            group: 1,
            pc: 0x20,
            access: Access::Read,
        });
        let text = r.to_json().to_string();
        assert!(
            text.contains(
                "\"access\":\"write\",\"other\":{\"group\":1,\"pc\":\"0x20\",\"access\":\"read\"}}"
            ),
            "{text}"
        );
        assert!(
            text.ends_with("\"group\":2,\"groups\":{\"halted\":1,\"trapped\":2,\"limit\":0}}"),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<RunResult>(&text).unwrap(), r);
    }

    #[test]
    fn hexdump_layout() {
        let mut b: Vec<u8> = (0x41..0x41 + 20).collect();
        b.extend([0u8; 48]);
        assert_eq!(
            hexdump(0x1000, &b),
            "00001000  41 42 43 44 45 46 47 48  49 4a 4b 4c 4d 4e 4f 50  |ABCDEFGHIJKLMNOP|\n\
             00001010  51 52 53 54 00 00 00 00  00 00 00 00 00 00 00 00  |QRST............|\n\
             00001020  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n\
             *\n\
             00001040  00 00 00 00                                       |....|\n\
             00001044\n"
        );
        let f = [0, 0, 0x20, 0x40, 0, 0, 0x80, 0xbf];
        assert_eq!(typed_rows(0x10, &f, ElemType::F32), "00000010   2.5 -1.0\n");
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
            ty: None,
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
            ty: None,
        };
        assert!(t(0, 65536).validate(&p).is_ok());
        assert!(t(1, 65536).validate(&p).is_err());
        assert!(t(u64::MAX, 2).validate(&p).is_err());
    }
}
