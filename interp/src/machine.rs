//! Machine state: register file, mask, LC0BASE, pc, retired count, memory and tile, plus the
//! run configuration and the trap/exit types every engine reports with.
//!
//! [`Regs`] is `#[repr(C)]` because compiled code addresses it by offset (the `Regs::OFFSET_*` constants).
//! Vector registers always hold 64 lanes; lanes at and above VL are never read or written.

use crate::memory::{Access, AccessFault, Memory, MemoryError, Tile, load_data};
use crate::program::{DEFAULT_MEM_LIMIT, DEFAULT_VL, MAX_VL, Program, Space};
use std::fmt;
use std::sync::Arc;

/// How a run is configured (the `lanejit run` flags that change semantics).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    /// Lanes per group: a power of two, 1..=64.
    pub vl: u32,
    /// `--strict-align`.
    pub strict_align: bool,
    /// `--max-instructions`: stop with `limit` once this many have retired.
    pub max_instructions: Option<u64>,
    /// `--mem-limit`: addresses at or above are never mapped.
    pub mem_limit: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            vl: DEFAULT_VL,
            strict_align: false,
            max_instructions: None,
            mem_limit: DEFAULT_MEM_LIMIT,
        }
    }
}

impl Config {
    /// The configuration for `program`: its `.vl` unless `vl_flag` overrides it.
    pub fn for_program(program: &Program, vl_flag: Option<u32>) -> Config {
        Config {
            vl: vl_flag.or(program.vl).unwrap_or(DEFAULT_VL),
            ..Config::default()
        }
    }
}

/// Whether `vl` is a legal VL.
pub const fn valid_vl(vl: u32) -> bool {
    vl.is_power_of_two() && vl as usize <= MAX_VL
}

/// The register file.
#[repr(C)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Regs {
    /// `s0..s31`; `s[0]` is always 0.
    pub s: [u64; 32],
    /// `v0..v31`, 64 lanes each.
    pub v: [[u64; MAX_VL]; 32],
    /// Execution mask: bit i set = lane i active. Bits at and above VL are zero.
    pub mask: u64,
    /// LC0BASE: lane i of `lc0` reads `lc0base + i`.
    pub lc0base: u64,
    /// Trip count latched by the most recent executed `LOOP` (0 at reset).
    pub trip: u64,
    /// The group's id (`S.GID`), 0..G-1; read-only to the program.
    pub gid: u64,
    /// The launch's group count G (`S.NGROUPS`); read-only to the program.
    pub ngroups: u64,
}

impl Regs {
    /// Byte offset of `s[0]`.
    pub const OFFSET_S: usize = std::mem::offset_of!(Regs, s);
    /// Byte offset of `v[0][0]`.
    pub const OFFSET_V: usize = std::mem::offset_of!(Regs, v);
    /// Byte offset of `mask`.
    pub const OFFSET_MASK: usize = std::mem::offset_of!(Regs, mask);
    /// Byte offset of `lc0base`.
    pub const OFFSET_LC0BASE: usize = std::mem::offset_of!(Regs, lc0base);
    /// Byte offset of `trip`.
    pub const OFFSET_TRIP: usize = std::mem::offset_of!(Regs, trip);
    /// Byte offset of `gid`.
    pub const OFFSET_GID: usize = std::mem::offset_of!(Regs, gid);
    /// Byte offset of `ngroups`.
    pub const OFFSET_NGROUPS: usize = std::mem::offset_of!(Regs, ngroups);

    /// Reset state for `vl` lanes of group 0 of a one-group launch: everything zero, mask
    /// all ones.
    pub fn reset(vl: u32) -> Box<Regs> {
        let mut r = Box::new(Regs {
            s: [0; 32],
            v: [[0; MAX_VL]; 32],
            mask: 0,
            lc0base: 0,
            trip: 0,
            gid: 0,
            ngroups: 1,
        });
        r.mask = all_lanes(vl);
        r
    }

    /// Reset this register file in place for group `gid` of a launch of `ngroups` groups
    /// (no allocation: a launch reuses one register file per thread).
    pub fn reset_for(&mut self, vl: u32, gid: u64, ngroups: u64) {
        self.s = [0; 32];
        self.v = [[0; MAX_VL]; 32];
        self.mask = all_lanes(vl);
        self.lc0base = 0;
        self.trip = 0;
        self.gid = gid;
        self.ngroups = ngroups;
    }
}

impl fmt::Debug for Regs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Regs")
            .field("s", &self.s)
            .field("mask", &format_args!("{:#x}", self.mask))
            .field("lc0base", &self.lc0base)
            .field("trip", &self.trip)
            .finish_non_exhaustive()
    }
}

/// The mask with lanes `0..vl` set.
#[inline(always)]
pub const fn all_lanes(vl: u32) -> u64 {
    if vl >= 64 { u64::MAX } else { (1u64 << vl) - 1 }
}

/// Trap kinds of contract section 5 (serialized as their JSON names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrapKind {
    /// A byte unmapped or beyond the limit (or the range wraps).
    PageFault,
    /// A store to a read-only page.
    PermissionFault,
    /// A `.local` byte outside tile space.
    TileOutOfBounds,
    /// A `.local` access to a `none` granule, or a store to an `r` granule.
    TileUnauthorized,
    /// `--strict-align` and a misaligned access on a width-scaled form.
    Misaligned,
    /// A word that does not decode.
    IllegalInstruction,
    /// The pc is past the last instruction.
    CodeOutOfBounds,
    /// `--check-races`: the access races with an earlier group's (contract section 9).
    DataRace,
}

impl TrapKind {
    /// The JSON name.
    pub const fn name(self) -> &'static str {
        match self {
            TrapKind::PageFault => "page_fault",
            TrapKind::PermissionFault => "permission_fault",
            TrapKind::TileOutOfBounds => "tile_out_of_bounds",
            TrapKind::TileUnauthorized => "tile_unauthorized",
            TrapKind::Misaligned => "misaligned",
            TrapKind::IllegalInstruction => "illegal_instruction",
            TrapKind::CodeOutOfBounds => "code_out_of_bounds",
            TrapKind::DataRace => "data_race",
        }
    }
}

impl From<AccessFault> for TrapKind {
    fn from(f: AccessFault) -> TrapKind {
        match f {
            AccessFault::PageFault => TrapKind::PageFault,
            AccessFault::PermissionFault => TrapKind::PermissionFault,
            AccessFault::TileOutOfBounds => TrapKind::TileOutOfBounds,
            AccessFault::TileUnauthorized => TrapKind::TileUnauthorized,
        }
    }
}

/// The memory details of a memory trap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemFault {
    /// Lowest faulting active lane.
    pub lane: u32,
    /// That lane's EA (start of its access).
    pub ea: u64,
    /// Memory or tile.
    pub space: Space,
    /// Read or write.
    pub access: Access,
}

/// A precise trap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Trap {
    /// What went wrong.
    pub kind: TrapKind,
    /// pc of the trapping instruction (for `code_out_of_bounds`, the bad pc).
    pub pc: u64,
    /// For memory traps.
    pub mem: Option<MemFault>,
}

/// How a run (or a slice of one) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Exit {
    /// A `HALT` retired; `pc` is the HALT's.
    Halted,
    /// An instruction trapped and did not retire.
    Trapped(Trap),
    /// `--max-instructions` retired; `pc` is the next instruction's.
    Limit,
}

/// A machine ready to run one program.
pub struct Machine {
    /// Registers, mask, LC0BASE, trip.
    pub regs: Box<Regs>,
    /// pc of the next instruction (byte offset; a multiple of 8).
    pub pc: u64,
    /// Instructions retired so far.
    pub retired: u64,
    /// Guest memory: one per launch, shared by every group's machine (contract section 9).
    pub mem: Arc<Memory>,
    /// Tile space.
    pub tile: Tile,
    /// The configuration.
    pub config: Config,
    /// The race checker's shadow of guest memory, during a `--check-races` launch (its
    /// memory instructions consult it; see `crate::races`).
    pub races: Option<Box<crate::races::Shadow>>,
}

impl fmt::Debug for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Machine")
            .field("pc", &self.pc)
            .field("retired", &self.retired)
            .field("regs", &self.regs)
            .finish_non_exhaustive()
    }
}

/// A machine could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MachineError {
    /// VL is not a power of two in 1..=64.
    #[error("VL {0} must be a power of two from 1 to 64")]
    BadVl(u32),
    /// Memory setup failed.
    #[error(transparent)]
    Memory(#[from] MemoryError),
}

impl Machine {
    /// Reset state with `program`'s memory map, tile and data in place.
    pub fn new(program: &Program, config: Config) -> Result<Machine, MachineError> {
        if !valid_vl(config.vl) {
            return Err(MachineError::BadVl(config.vl));
        }
        let mut mem = Memory::new(program, config.mem_limit)?;
        let mut tile = Tile::new(program);
        load_data(program, &mut mem, &mut tile)?;
        Ok(Machine {
            regs: Regs::reset(config.vl),
            pc: 0,
            retired: 0,
            mem: Arc::new(mem),
            tile,
            config,
            races: None,
        })
    }

    /// A machine for another thread of the same launch: its own reset register file and a
    /// copy of `tile`, the same guest memory and configuration.
    pub fn sibling(&self, tile: &Tile) -> Machine {
        Machine {
            regs: Regs::reset(self.config.vl),
            pc: 0,
            retired: 0,
            mem: Arc::clone(&self.mem),
            tile: tile.clone(),
            config: self.config,
            races: None,
        }
    }

    /// Reset this machine to start group `gid` of a launch of `ngroups` groups (contract
    /// section 9): reset registers, pc 0, nothing retired, and a fresh tile. The tile is
    /// copied back from `template` (the tile as `.tiledata` and `.tileprotect` lay it out)
    /// only when `tile_dirty` says the previous group may have written it: a program without
    /// `.local` stores never pays for the copy.
    pub fn start_group(&mut self, gid: u32, ngroups: u32, template: &Tile, tile_dirty: bool) {
        self.regs
            .reset_for(self.config.vl, u64::from(gid), u64::from(ngroups));
        self.pc = 0;
        self.retired = 0;
        if tile_dirty {
            self.tile
                .as_bytes_mut()
                .copy_from_slice(template.as_bytes());
        }
    }

    /// Guest memory for host-side writes (`--load`, benchmark set-up), while no other machine
    /// shares it (`None` during a launch).
    pub fn mem_mut(&mut self) -> Option<&mut Memory> {
        Arc::get_mut(&mut self.mem)
    }

    /// VL as a lane count.
    #[inline(always)]
    pub fn vl(&self) -> usize {
        self.config.vl as usize
    }

    /// Whether the budget is used up (checked before every fetch).
    #[inline(always)]
    pub fn at_limit(&self) -> bool {
        matches!(self.config.max_instructions, Some(n) if self.retired >= n)
    }

    /// Instructions that may still retire before the limit (`u64::MAX` without one).
    #[inline(always)]
    pub fn budget_left(&self) -> u64 {
        match self.config.max_instructions {
            Some(n) => n.saturating_sub(self.retired),
            None => u64::MAX,
        }
    }
}
