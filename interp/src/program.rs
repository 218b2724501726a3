//! A program as the assembler produces it and the loader consumes it: code words, the settled
//! memory map, tile configuration, initial data, symbols and the line table. This is exactly
//! what the binary container (`container`) stores, so `asm -> container -> disasm -> asm` is
//! the identity.

use crate::lines::LineTable;

/// Page size of guest memory.
pub const PAGE_SIZE: u64 = 4096;
/// Granule of tile-space permissions.
pub const TILE_GRANULE: u64 = 64;
/// Default tile size (64 KiB).
pub const DEFAULT_TILE_SIZE: u64 = 64 * 1024;
/// Largest tile size (16 MiB).
pub const MAX_TILE_SIZE: u64 = 16 * 1024 * 1024;
/// Default memory limit (4 GiB).
pub const DEFAULT_MEM_LIMIT: u64 = 4 << 30;
/// Largest memory limit (2^40).
pub const MAX_MEM_LIMIT: u64 = 1 << 40;
/// Default VL.
pub const DEFAULT_VL: u32 = 32;
/// Largest VL.
pub const MAX_VL: usize = 64;
/// The most groups a launch may have (contract section 9: 2^24).
pub const MAX_GROUPS: u32 = 1 << 24;

/// Memory page permission.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemPerm {
    /// Readable.
    R,
    /// Readable and writable.
    Rw,
}

/// Tile granule permission.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TilePerm {
    /// No access.
    None,
    /// Readable.
    R,
    /// Readable and writable (the default).
    Rw,
}

/// A run of mapped pages: `[start, start + len)`, both multiples of [`PAGE_SIZE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemRange {
    /// First byte.
    pub start: u64,
    /// Length in bytes (> 0).
    pub len: u64,
    /// Permission of every page in the run.
    pub perm: MemPerm,
}

/// A run of tile granules with a non-default permission, multiples of [`TILE_GRANULE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TileRange {
    /// First byte.
    pub start: u64,
    /// Length in bytes (> 0).
    pub len: u64,
    /// Permission.
    pub perm: TilePerm,
}

/// The address space a data segment or a symbol belongs to (serialized as `memory`, `tile`).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Space {
    /// Guest memory.
    Memory,
    /// Tile space.
    Tile,
}

/// Initial bytes at `addr` in `space`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DataSeg {
    /// Which space.
    pub space: Space,
    /// First byte.
    pub addr: u64,
    /// Contents.
    pub bytes: Vec<u8>,
}

/// What a symbol labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SymKind {
    /// A code label; the value is a pc (byte offset of an instruction word).
    Code,
    /// A label in `.data`; the value is a memory address.
    Data,
    /// A label in `.tiledata`; the value is a tile address.
    Tile,
}

/// A label and its value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Symbol {
    /// Name as written (case-sensitive).
    pub name: String,
    /// Its kind.
    pub kind: SymKind,
    /// Address or pc.
    pub value: u64,
}

/// A whole program.
///
/// Invariants kept by the assembler and checked by the container loader: `mem_map` is sorted,
/// page-aligned, non-overlapping and has no two adjacent runs with the same permission;
/// `tile_protect` likewise in granules and never lists `Rw` (the default); `data` is sorted by
/// (space, addr), non-overlapping, non-adjacent and non-empty; `symbols` is sorted by
/// (kind, value, name) with unique names; `lines` is empty or canonical
/// ([`LineTable::validate`]) for the code.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    /// Instruction words; pc of word i is 8 * i.
    pub code: Vec<u64>,
    /// `.vl`, if given.
    pub vl: Option<u32>,
    /// `.groups`, if given: the launch's group count G, 1..=[`MAX_GROUPS`].
    pub groups: Option<u32>,
    /// Tile size in bytes.
    pub tile_size: u64,
    /// Mapped memory.
    pub mem_map: Vec<MemRange>,
    /// Tile protections.
    pub tile_protect: Vec<TileRange>,
    /// Initial data.
    pub data: Vec<DataSeg>,
    /// Labels.
    pub symbols: Vec<Symbol>,
    /// The source file and line of every code word (empty for a program built in code or
    /// read from a container of version 1 or 2).
    pub lines: LineTable,
}

impl Default for Program {
    fn default() -> Self {
        Program {
            code: Vec::new(),
            vl: None,
            groups: None,
            tile_size: DEFAULT_TILE_SIZE,
            mem_map: Vec::new(),
            tile_protect: Vec::new(),
            data: Vec::new(),
            symbols: Vec::new(),
            lines: LineTable::default(),
        }
    }
}

impl Program {
    /// One past the highest mapped byte (0 when nothing is mapped).
    pub fn mapped_end(&self) -> u64 {
        self.mem_map
            .iter()
            .map(|r| r.start + r.len)
            .max()
            .unwrap_or(0)
    }

    /// The permission of the page holding `addr`, if mapped.
    pub fn page_perm(&self, addr: u64) -> Option<MemPerm> {
        self.mem_map
            .iter()
            .find(|r| addr >= r.start && addr - r.start < r.len)
            .map(|r| r.perm)
    }

    /// Whether `[addr, addr + len)` lies entirely in mapped pages (any permission).
    /// An empty range is always inside.
    pub fn range_mapped(&self, addr: u64, len: u64) -> bool {
        len == 0 || self.mapped_len_upto(addr, len) >= len
    }

    /// How many bytes from `addr` on are mapped without a gap (any permission; 0 when `addr`
    /// is unmapped).
    pub fn mapped_len_from(&self, addr: u64) -> u64 {
        self.mapped_len_upto(addr, u64::MAX)
    }

    /// As [`Program::mapped_len_from`], but stops counting once `cap` bytes are found.
    /// `mem_map` is sorted: a binary search, then a walk over adjacent runs up to `cap`.
    fn mapped_len_upto(&self, addr: u64, cap: u64) -> u64 {
        let i = self.mem_map.partition_point(|r| r.start + r.len <= addr);
        let mut end = addr;
        for r in &self.mem_map[i..] {
            if r.start > end || end - addr >= cap {
                break;
            }
            end = r.start + r.len;
        }
        end - addr
    }

    /// The symbol naming `value` of `kind`, the first by name if several do.
    pub fn symbol_at(&self, kind: SymKind, value: u64) -> Option<&Symbol> {
        self.symbols
            .iter()
            .find(|s| s.kind == kind && s.value == value)
    }

    /// The symbol with this name.
    pub fn symbol(&self, name: &str) -> Option<&Symbol> {
        self.symbols.iter().find(|s| s.name == name)
    }

    /// The address an `ADDR` written on the command line or in an expectation names, in
    /// `space`: a number (decimal or `0x`), a label of that space (`out`), or a label with an
    /// offset (`out+16`, `out-4`, `out+0x10`).
    pub fn resolve_addr(&self, text: &str, space: Space) -> Result<u64, AddrError> {
        let kind = match space {
            Space::Memory => SymKind::Data,
            Space::Tile => SymKind::Tile,
        };
        self.resolve_value(text, kind)
    }

    /// As [`Program::resolve_addr`], for labels of `kind` (a code label names a pc).
    pub fn resolve_value(&self, text: &str, want: SymKind) -> Result<u64, AddrError> {
        let text = text.trim();
        let split = text.find(['+', '-']).filter(|&i| i > 0);
        let (head, off) = match split {
            Some(i) => {
                let (h, rest) = text.split_at(i);
                let mag = parse_num(rest[1..].trim())
                    .ok_or_else(|| AddrError::BadNumber(rest[1..].trim().to_string()))?;
                (h.trim(), Some((rest.starts_with('-'), mag)))
            }
            None => (text, None),
        };
        let base = if head.starts_with(|c: char| c.is_ascii_digit()) {
            parse_num(head).ok_or_else(|| AddrError::BadNumber(head.to_string()))?
        } else {
            match self.symbol(head) {
                Some(s) if s.kind == want => s.value,
                Some(s) => {
                    return Err(AddrError::WrongSpace {
                        name: head.to_string(),
                        kind: s.kind,
                    });
                }
                None => {
                    let names = self.symbols.iter().filter(|s| s.kind == want);
                    let hint = crate::asm::did_you_mean(head, names.map(|s| s.name.as_str()));
                    return Err(AddrError::NoSymbol {
                        name: head.to_string(),
                        hint: hint
                            .map(|h| format!(" (did you mean `{h}`?)"))
                            .unwrap_or_default(),
                    });
                }
            }
        };
        match off {
            None => Some(base),
            Some((true, m)) => base.checked_sub(m),
            Some((false, m)) => base.checked_add(m),
        }
        .ok_or_else(|| AddrError::Overflow(text.to_string()))
    }
}

/// A decimal or `0x` number with optional `_` separators.
fn parse_num(s: &str) -> Option<u64> {
    let t = s.replace('_', "");
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => t.parse().ok(),
    }
}

/// An `ADDR` that names no address.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AddrError {
    /// Neither a number nor a label.
    #[error("`{0}` is not a number (decimal or 0x hex)")]
    BadNumber(String),
    /// A name the program does not define in this space.
    #[error("the program has no label `{name}`{hint}")]
    NoSymbol {
        /// The name.
        name: String,
        /// ` (did you mean ...?)` or empty.
        hint: String,
    },
    /// A label of the other space (or a code label).
    #[error("`{name}` is a {} label, not an address of this kind", match .kind {
        SymKind::Code => "code",
        SymKind::Data => "memory (.data)",
        SymKind::Tile => "tile (.tiledata)",
    })]
    WrongSpace {
        /// The name.
        name: String,
        /// What it labels.
        kind: SymKind,
    },
    /// The offset takes the address out of 64 bits.
    #[error("`{0}` is outside the 64-bit address space")]
    Overflow(String),
}
