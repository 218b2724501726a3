//! The binary container: a [`Program`] as bytes (`lanejit asm FILE -o OUT`), and back.
//!
//! All integers are little-endian. Layout, in order:
//!
//! | offset | size | field |
//! |--------|------|-------|
//! | 0 | 8 | magic `LANEJIT\0` ([`MAGIC`]) |
//! | 8 | 4 | version, `u32`: 1, 2 or 3 ([`VERSION`]) |
//! | 12 | 4 | VL, `u32` (0 = no `.vl`; else a power of two 1..=64) |
//! | | 4 | versions 2 and 3: G, `u32` (`.groups`, 1..=2^24; version 3: 0 = no `.groups`) |
//! | | 8 | tile size, `u64` (multiple of 64, 64..=16 MiB) |
//! | | 8 | N = number of code words, `u64` |
//! | | 8·N | code words, `u64` each (pc of word i is 8·i) |
//! | | 8 | M = number of memory runs, `u64` |
//! | | 17·M | each run: start `u64`, length `u64`, permission `u8` (0 = `r`, 1 = `rw`) |
//! | | 8 | T = number of tile protections, `u64` |
//! | | 17·T | each: start `u64`, length `u64`, permission `u8` (0 = `none`, 1 = `r`) |
//! | | 8 | D = number of data segments, `u64` |
//! | | D × (17 + len) | each: space `u8` (0 = memory, 1 = tile), address `u64`, length `u64`, bytes |
//! | | 8 | S = number of symbols, `u64` |
//! | | S × (13 + len) | each: kind `u8` (0 = code, 1 = data, 2 = tile), value `u64`, name length `u32`, name (UTF-8) |
//! | | 8 | version 3 only: F = number of source files, `u64` |
//! | | F × (4 + len) | each: name length `u32`, name (UTF-8) |
//! | | 8 | R = number of line runs, `u64` |
//! | | R × (3..=15) | each: words `uleb`, file `uleb`, line delta `sleb` (zigzag) |
//!
//! Version 3 carries the program's line table ([`crate::lines`]): run k covers the `words`
//! code words after run k - 1's, all from file `file` (an index into the F names) at the line of
//! run k - 1 (0 before the first run) plus `line delta`. The unsigned numbers are LEB128
//! (7 bits a byte, low first, high bit set on every byte but the last, no needless trailing
//! zero groups, at most 33 bits of value); the delta is zigzag-coded (`2d` for `d >= 0`,
//! `-2d - 1` below), so a typical run (one instruction, the next file line or so) takes three
//! bytes. [`write`] writes version 3 for a program with a line table and the older versions
//! otherwise (1 without `.groups`, 2 with), whose bytes stay as they were; [`read`] reads all
//! three, an older one as a program without a line table.
//!
//! Nothing may follow the last symbol (version 3: the last run). [`read`] checks every field
//! and every invariant of [`Program`] (sorted, aligned, coalesced runs; memory runs below 2^40;
//! tile runs inside the tile and never `rw`; data sorted, non-empty, non-overlapping,
//! non-adjacent, inside mapped pages or the tile; symbols sorted by (kind, value, name) with
//! unique names that the assembler accepts as labels; code symbols at a multiple of 8 no
//! greater than 8·N; a line table that is canonical for the code,
//! [`crate::lines::LineTable::validate`], with words summing to N and varints in their
//! shortest form), so a container that reads is one the assembler could have written and
//! writes back to the same bytes. Counts and lengths are checked against the remaining input
//! before anything is allocated, so a bogus length cannot make the reader allocate more than
//! the input's size.

use crate::lines::{LineRun, LineTable, LineTableError};
use crate::program::{
    DataSeg, MAX_GROUPS, MAX_MEM_LIMIT, MAX_TILE_SIZE, MAX_VL, MemPerm, MemRange, PAGE_SIZE,
    Program, Space, SymKind, Symbol, TILE_GRANULE, TilePerm, TileRange,
};
use std::collections::HashSet;

/// The first 8 bytes of every container.
pub const MAGIC: [u8; 8] = *b"LANEJIT\0";
/// The newest format version this module writes and reads: version 2 adds the group count
/// after VL, version 3 the line table (and G = 0 for "no `.groups`"). Version 3 is written
/// for programs with a line table, version 2 for the others with `.groups`, version 1 for the
/// rest; all three are read.
pub const VERSION: u32 = 3;

/// Why bytes are not a valid container.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ContainerError {
    /// The input does not start with [`MAGIC`].
    #[error("not a lanejit container (bad magic)")]
    BadMagic,
    /// A version this reader does not know.
    #[error("unsupported container version {0} (expected 1 to {VERSION})")]
    Version(u32),
    /// The input ends inside a field.
    #[error("container is truncated in {0}")]
    Truncated(&'static str),
    /// Bytes after the last symbol.
    #[error("{0} unexpected bytes after the end of the container")]
    Trailing(usize),
    /// VL is not 0 or a power of two up to 64.
    #[error("invalid VL {0}")]
    BadVl(u32),
    /// G is not in 1..=2^24.
    #[error("invalid group count {0}")]
    BadGroups(u32),
    /// Tile size out of range or not a multiple of 64.
    #[error("invalid tile size {0}")]
    BadTileSize(u64),
    /// An invalid permission byte.
    #[error("invalid permission byte {0} in {1}")]
    BadPerm(u8, &'static str),
    /// A memory run that is unaligned, empty, too high, unsorted or not coalesced.
    #[error(
        "memory run {0} is invalid (unaligned, empty, beyond 2^40, overlapping or not coalesced)"
    )]
    BadMemRange(usize),
    /// A tile protection that is unaligned, empty, outside the tile, unsorted or not coalesced.
    #[error(
        "tile protection {0} is invalid (unaligned, empty, outside the tile, overlapping or not coalesced)"
    )]
    BadTileRange(usize),
    /// A data segment that is empty, unsorted, overlapping, adjacent or outside its space.
    #[error(
        "data segment {0} is invalid (empty, unsorted, overlapping, adjacent, or outside mapped memory / the tile)"
    )]
    BadData(usize),
    /// An invalid space byte.
    #[error("invalid space byte {0}")]
    BadSpace(u8),
    /// A symbol with a bad kind, name or order.
    #[error("symbol {0} is invalid: {1}")]
    BadSymbol(usize, &'static str),
    /// A line-table number that is not a shortest LEB128 of at most 32 bits.
    #[error("line table entry {0} is not a valid number")]
    BadVarint(usize),
    /// A source file name that is not UTF-8.
    #[error("line table file {0} is not UTF-8")]
    BadFileName(usize),
    /// A version 3 container without line runs (a program without a line table is written as
    /// version 1 or 2).
    #[error("a version 3 container has an empty line table")]
    EmptyLines,
    /// A line table that is not canonical for the code.
    #[error("invalid line table: {0}")]
    BadLines(#[from] LineTableError),
}

/// Whether `bytes` starts with the container magic.
pub fn is_container(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// Serialize a program.
pub fn write(p: &Program) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC);
    let version: u32 = match (p.lines.is_empty(), p.groups) {
        (false, _) => 3,
        (true, Some(_)) => 2,
        (true, None) => 1,
    };
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&p.vl.unwrap_or(0).to_le_bytes());
    if version >= 2 {
        out.extend_from_slice(&p.groups.unwrap_or(0).to_le_bytes());
    }
    out.extend_from_slice(&p.tile_size.to_le_bytes());
    out.extend_from_slice(&(p.code.len() as u64).to_le_bytes());
    for w in &p.code {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.extend_from_slice(&(p.mem_map.len() as u64).to_le_bytes());
    for r in &p.mem_map {
        out.extend_from_slice(&r.start.to_le_bytes());
        out.extend_from_slice(&r.len.to_le_bytes());
        out.push(match r.perm {
            MemPerm::R => 0,
            MemPerm::Rw => 1,
        });
    }
    out.extend_from_slice(&(p.tile_protect.len() as u64).to_le_bytes());
    for r in &p.tile_protect {
        out.extend_from_slice(&r.start.to_le_bytes());
        out.extend_from_slice(&r.len.to_le_bytes());
        out.push(match r.perm {
            TilePerm::None => 0,
            TilePerm::R => 1,
            TilePerm::Rw => 2,
        });
    }
    out.extend_from_slice(&(p.data.len() as u64).to_le_bytes());
    for d in &p.data {
        out.push(match d.space {
            Space::Memory => 0,
            Space::Tile => 1,
        });
        out.extend_from_slice(&d.addr.to_le_bytes());
        out.extend_from_slice(&(d.bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(&d.bytes);
    }
    out.extend_from_slice(&(p.symbols.len() as u64).to_le_bytes());
    for s in &p.symbols {
        out.push(match s.kind {
            SymKind::Code => 0,
            SymKind::Data => 1,
            SymKind::Tile => 2,
        });
        out.extend_from_slice(&s.value.to_le_bytes());
        out.extend_from_slice(&(s.name.len() as u32).to_le_bytes());
        out.extend_from_slice(s.name.as_bytes());
    }
    if version == 3 {
        write_lines(&mut out, &p.lines);
    }
    out
}

/// The line table of a version 3 container.
fn write_lines(out: &mut Vec<u8>, t: &LineTable) {
    out.extend_from_slice(&(t.files.len() as u64).to_le_bytes());
    for f in &t.files {
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(f.as_bytes());
    }
    out.extend_from_slice(&(t.runs.len() as u64).to_le_bytes());
    let mut line = 0i64;
    for (k, r) in t.runs.iter().enumerate() {
        let end = t.runs.get(k + 1).map_or(t.words, |n| n.start);
        uleb(out, end - r.start);
        uleb(out, u64::from(r.file));
        let delta = i64::from(r.line) - line;
        uleb(out, ((delta << 1) ^ (delta >> 63)) as u64);
        line = i64::from(r.line);
    }
}

/// `v` as unsigned LEB128.
fn uleb(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], ContainerError> {
        if self.b.len() - self.pos < n {
            return Err(ContainerError::Truncated(what));
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self, what: &'static str) -> Result<u8, ContainerError> {
        Ok(self.take(1, what)?[0])
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, ContainerError> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self, what: &'static str) -> Result<u64, ContainerError> {
        Ok(u64::from_le_bytes(
            self.take(8, what)?.try_into().expect("8 bytes"),
        ))
    }
    /// A shortest unsigned LEB128 of at most 33 bits (a zigzag-coded 32-bit delta needs 33);
    /// `entry` names it in errors.
    fn uleb(&mut self, entry: usize) -> Result<u64, ContainerError> {
        let mut v = 0u64;
        for k in 0..5 {
            let b = self.u8("line table")?;
            v |= u64::from(b & 0x7f) << (7 * k);
            if b & 0x80 == 0 {
                // Shortest form: no trailing zero group (0 itself is one zero byte).
                if k > 0 && b == 0 || v >> 33 != 0 {
                    return Err(ContainerError::BadVarint(entry));
                }
                return Ok(v);
            }
        }
        Err(ContainerError::BadVarint(entry))
    }
    /// A count of entries of at least `min_size` bytes each, bounded by the remaining input.
    fn count(&mut self, min_size: usize, what: &'static str) -> Result<usize, ContainerError> {
        let n = self.u64(what)?;
        let left = (self.b.len() - self.pos) as u64;
        if n > left / min_size as u64 {
            return Err(ContainerError::Truncated(what));
        }
        Ok(n as usize)
    }
}

/// Whether the assembler accepts `name` as a label.
fn valid_label(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$')
        && !crate::asm::is_register_name(name)
}

/// Parse and validate a container.
pub fn read(bytes: &[u8]) -> Result<Program, ContainerError> {
    let mut r = Reader { b: bytes, pos: 0 };
    if r.take(8, "magic").ok() != Some(&MAGIC[..]) {
        return Err(ContainerError::BadMagic);
    }
    let version = r.u32("version")?;
    if !(1..=VERSION).contains(&version) {
        return Err(ContainerError::Version(version));
    }
    let vl = r.u32("vl")?;
    if vl != 0 && !(vl.is_power_of_two() && vl as usize <= MAX_VL) {
        return Err(ContainerError::BadVl(vl));
    }
    let groups = match version {
        1 => None,
        _ => match r.u32("group count")? {
            0 if version == 3 => None,
            g if (1..=MAX_GROUPS).contains(&g) => Some(g),
            g => return Err(ContainerError::BadGroups(g)),
        },
    };
    let tile_size = r.u64("tile size")?;
    if !(TILE_GRANULE..=MAX_TILE_SIZE).contains(&tile_size) || tile_size % TILE_GRANULE != 0 {
        return Err(ContainerError::BadTileSize(tile_size));
    }
    let n = r.count(8, "code")?;
    let mut code = Vec::with_capacity(n);
    for _ in 0..n {
        code.push(r.u64("code")?);
    }

    let m = r.count(17, "memory map")?;
    let mut mem_map: Vec<MemRange> = Vec::with_capacity(m);
    for i in 0..m {
        let start = r.u64("memory map")?;
        let len = r.u64("memory map")?;
        let perm = match r.u8("memory map")? {
            0 => MemPerm::R,
            1 => MemPerm::Rw,
            b => return Err(ContainerError::BadPerm(b, "memory map")),
        };
        let ok = start % PAGE_SIZE == 0
            && len % PAGE_SIZE == 0
            && len > 0
            && start.checked_add(len).is_some_and(|e| e <= MAX_MEM_LIMIT)
            && mem_map.last().is_none_or(|p: &MemRange| {
                let pe = p.start + p.len;
                start > pe || (start == pe && p.perm != perm)
            });
        if !ok {
            return Err(ContainerError::BadMemRange(i));
        }
        mem_map.push(MemRange { start, len, perm });
    }

    let t = r.count(17, "tile protections")?;
    let mut tile_protect: Vec<TileRange> = Vec::with_capacity(t);
    for i in 0..t {
        let start = r.u64("tile protections")?;
        let len = r.u64("tile protections")?;
        let perm = match r.u8("tile protections")? {
            0 => TilePerm::None,
            1 => TilePerm::R,
            b => return Err(ContainerError::BadPerm(b, "tile protections")),
        };
        let ok = start % TILE_GRANULE == 0
            && len % TILE_GRANULE == 0
            && len > 0
            && start.checked_add(len).is_some_and(|e| e <= tile_size)
            && tile_protect.last().is_none_or(|p: &TileRange| {
                let pe = p.start + p.len;
                start > pe || (start == pe && p.perm != perm)
            });
        if !ok {
            return Err(ContainerError::BadTileRange(i));
        }
        tile_protect.push(TileRange { start, len, perm });
    }

    let mut program = Program {
        code,
        vl: (vl != 0).then_some(vl),
        groups,
        tile_size,
        mem_map,
        tile_protect,
        data: Vec::new(),
        symbols: Vec::new(),
        lines: LineTable::default(),
    };

    let d = r.count(17, "data")?;
    let mut data: Vec<DataSeg> = Vec::with_capacity(d);
    for i in 0..d {
        let space = match r.u8("data")? {
            0 => Space::Memory,
            1 => Space::Tile,
            b => return Err(ContainerError::BadSpace(b)),
        };
        let addr = r.u64("data")?;
        let len = r.u64("data")?;
        if len > (bytes.len() - r.pos) as u64 {
            return Err(ContainerError::Truncated("data"));
        }
        let body = r.take(len as usize, "data")?;
        let inside = match space {
            Space::Memory => program.range_mapped(addr, len),
            Space::Tile => addr.checked_add(len).is_some_and(|e| e <= tile_size),
        };
        let ordered = data.last().is_none_or(|p: &DataSeg| {
            p.space < space || (p.space == space && (p.addr + p.bytes.len() as u64) < addr)
        });
        if len == 0 || !inside || !ordered {
            return Err(ContainerError::BadData(i));
        }
        data.push(DataSeg {
            space,
            addr,
            bytes: body.to_vec(),
        });
    }
    program.data = data;

    let s = r.count(13, "symbols")?;
    let mut symbols: Vec<Symbol> = Vec::with_capacity(s);
    let mut names = HashSet::new();
    for i in 0..s {
        let kind = match r.u8("symbols")? {
            0 => SymKind::Code,
            1 => SymKind::Data,
            2 => SymKind::Tile,
            _ => return Err(ContainerError::BadSymbol(i, "bad kind byte")),
        };
        let value = r.u64("symbols")?;
        let len = r.u32("symbols")? as usize;
        let name = std::str::from_utf8(r.take(len, "symbols")?)
            .map_err(|_| ContainerError::BadSymbol(i, "name is not UTF-8"))?
            .to_string();
        if !valid_label(&name) {
            return Err(ContainerError::BadSymbol(i, "name is not a valid label"));
        }
        if !names.insert(name.clone()) {
            return Err(ContainerError::BadSymbol(i, "duplicate name"));
        }
        // A code label the assembler can write sits at a word boundary no further than the
        // end of the code; anything else could not survive `disasm` and re-assembly.
        if kind == SymKind::Code && (value % 8 != 0 || value / 8 > program.code.len() as u64) {
            return Err(ContainerError::BadSymbol(
                i,
                "code symbol is not a multiple of 8 within the code",
            ));
        }
        let sym = Symbol { name, kind, value };
        if let Some(p) = symbols.last()
            && (p.kind, p.value, &p.name) >= (sym.kind, sym.value, &sym.name)
        {
            return Err(ContainerError::BadSymbol(i, "symbols are not sorted"));
        }
        symbols.push(sym);
    }
    program.symbols = symbols;
    if version == 3 {
        program.lines = read_lines(&mut r, program.code.len() as u64)?;
    }
    if r.pos != bytes.len() {
        return Err(ContainerError::Trailing(bytes.len() - r.pos));
    }
    Ok(program)
}

/// The line table of a version 3 container for `words` code words.
fn read_lines(r: &mut Reader<'_>, words: u64) -> Result<LineTable, ContainerError> {
    let f = r.count(4, "line table files")?;
    let mut files = Vec::with_capacity(f);
    for i in 0..f {
        let len = r.u32("line table files")? as usize;
        let name = std::str::from_utf8(r.take(len, "line table files")?)
            .map_err(|_| ContainerError::BadFileName(i))?;
        files.push(name.to_string());
    }
    let n = r.count(3, "line table runs")?;
    if n == 0 {
        return Err(ContainerError::EmptyLines);
    }
    let mut runs = Vec::with_capacity(n);
    let (mut start, mut line) = (0u64, 0i64);
    for i in 0..n {
        let len = r.uleb(i)?;
        let file = r.uleb(i)?;
        let zz = r.uleb(i)?;
        let delta = (zz >> 1) as i64 ^ -((zz & 1) as i64);
        line += delta;
        let (Ok(file), Ok(l)) = (u32::try_from(file), u32::try_from(line)) else {
            return Err(ContainerError::BadVarint(i));
        };
        if len == 0 {
            return Err(LineTableError::Order(i).into());
        }
        runs.push(LineRun {
            start,
            file,
            line: l,
        });
        // At most 2^33 words in all: no overflow; too many is a coverage error below.
        start += len;
    }
    let table = LineTable {
        files,
        runs,
        words: start,
    };
    table.validate(words)?;
    Ok(table)
}
