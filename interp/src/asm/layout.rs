//! Pass 1: parse every line, give labels and statements their addresses, evaluate the
//! directives that shape the program, pair hardware loops.

use super::parser::{Atom, Expr, OpKind, Operand, Stmt, parse_line, parse_reg};
use super::symbols::{Ctx, Symbols};
use super::{AsmError, AsmErrorKind, MAX_CODE_WORDS, MAX_DATA_BYTES};
use crate::isa::Opcode;
use crate::lines::LineTableBuilder;
use crate::program::{
    DEFAULT_TILE_SIZE, MAX_GROUPS, MAX_MEM_LIMIT, MAX_TILE_SIZE, MemPerm, PAGE_SIZE, Space,
    SymKind, TILE_GRANULE, TilePerm,
};

/// A section of the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Section {
    Text,
    Data,
    Tile,
}

/// An instruction whose operands were not all known during layout (a forward reference, or
/// a `LOOP` before its `ENDLOOP`). Resolution parses its line again: keeping the parsed
/// operands of every such line would cost about 1 KB each.
#[derive(Debug)]
pub(crate) struct Deferred {
    pub line: usize,
    /// Word index of the first word.
    pub index: u64,
    /// As [`PendInst::pair`].
    pub pair: Option<u64>,
    /// The line did not parse (already an error); kept so that loop pairing works.
    pub broken: bool,
}

/// The opcodes a mnemonic as written names (register-offset and contiguous forms share one),
/// and whether it carries `.local`.
pub(crate) fn mnemonic_ops(name: &str) -> (Vec<Opcode>, bool) {
    let upper = name.to_ascii_uppercase();
    let (base, local) = match upper.strip_suffix(".LOCAL") {
        Some(b) => (b, true),
        None => (upper.as_str(), false),
    };
    let ops = Opcode::ALL
        .iter()
        .copied()
        .filter(|o| o.mnemonic() == base)
        .collect();
    (ops, local)
}

/// An instruction with its parsed operands, ready to build.
#[derive(Debug)]
pub(crate) struct PendInst {
    pub line: usize,
    pub stmt: Stmt,
    /// The opcodes sharing this mnemonic (register-offset and contiguous forms share one).
    pub ops: Vec<Opcode>,
    pub local: bool,
    /// Word index of the first word.
    pub index: u64,
    /// LOOP: exit index; ENDLOOP: body index (None when unpaired: already an error).
    pub pair: Option<u64>,
}

/// The values of a data directive.
#[derive(Debug)]
pub(crate) enum DataVals {
    /// `.byte .half .word .dword`: element size and values.
    Ints(u8, Vec<Expr>),
    /// `.float .double`, already encoded.
    Bytes(Vec<u8>),
    /// `.fill COUNT, SIZE, VALUE`.
    Fill(u64, u8, Expr),
}

/// A data directive with its address.
#[derive(Debug)]
pub(crate) struct PendData {
    pub line: usize,
    pub col: usize,
    pub space: Space,
    pub addr: u64,
    pub len: u64,
    pub vals: DataVals,
}

type EResult<T> = Result<T, (usize, AsmErrorKind)>;

/// Everything pass 1 found.
#[derive(Debug)]
pub(crate) struct Laid {
    pub words: u64,
    pub insts: Vec<Deferred>,
    /// `.inst WORD`: index, value, line.
    pub raw: Vec<(u64, Expr, usize)>,
    /// The code words: instructions whose operands were known during layout are encoded
    /// here at once; the others (in `insts`) and `raw` fill their words in resolution.
    pub code: Vec<u64>,
    /// The source file and 1-based line of every code word (`.align` padding: the
    /// `.align`'s line), or what `.file` and `.loc` say instead.
    pub lines: LineTableBuilder,
    pub data: Vec<PendData>,
    /// `.mem` in source order: page-rounded `[start, end)`.
    pub mems: Vec<(u64, u64, MemPerm)>,
    /// `.tileprotect` in source order.
    pub tprot: Vec<(u64, u64, TilePerm)>,
    pub vl: Option<u32>,
    pub groups: Option<u32>,
    pub tile_size: u64,
    pub syms: Symbols,
}

struct State<'e> {
    errors: &'e mut Vec<AsmError>,
    laid: Laid,
    section: Section,
    data_loc: u64,
    tile_loc: u64,
    vl_line: Option<usize>,
    groups_line: Option<usize>,
    tilesize_line: Option<usize>,
    tile_fixed: bool,
    open_loop: Option<(usize, usize, usize)>,
    data_total: u64,
    /// `.equ` overrides (`--set NAME=VALUE`) and whether each met its `.equ`.
    overrides: &'e [(String, Expr)],
    used: Vec<bool>,
    /// The line being laid out.
    line: usize,
    /// The source's own name, for the line table.
    file: &'e str,
    /// `.file NAME`: the file named for the following code words instead of `file`.
    loc_file: Option<String>,
    /// `.loc LINE`: the line named for the following code words instead of their own.
    loc_line: Option<u32>,
}

fn expected(what: &str, found: &Operand) -> (usize, AsmErrorKind) {
    (
        found.col,
        AsmErrorKind::Expected {
            expected: what.to_string(),
            found: format!("`{}`", found.text),
        },
    )
}

/// The error for a directive that may appear only once and was first given on `first`.
fn once(stmt: &Stmt, directive: &'static str, first: Option<usize>) -> EResult<()> {
    match first {
        Some(first_line) => Err((
            stmt.col,
            AsmErrorKind::DuplicateDirective {
                directive,
                first_line,
            },
        )),
        None => Ok(()),
    }
}

fn usage(dir: &str) -> &'static str {
    match dir {
        ".vl" | ".groups" => "N",
        ".mem" => "ADDR, SIZE, r|rw",
        ".data" | ".tiledata" => "ADDR",
        ".text" => "",
        ".fill" => "COUNT, SIZE, VALUE",
        ".space" | ".align" | ".tilesize" => "N",
        ".equ" => "NAME, VALUE",
        ".inst" => "WORD",
        ".loc" => "LINE",
        ".tileprotect" => "ADDR, LEN, none|r|rw",
        _ => "VALUE, ...",
    }
}

/// The canonical forms of a mnemonic (as written, `.local` allowed), for syntax errors:
/// "`V.LB [sL + (sR << shamt)], ->vD` or `V.LB [sB, lc0, offset], ->vD`"; empty if unknown.
fn canonical_forms(name: &str) -> String {
    let (ops, local) = mnemonic_ops(name);
    let forms: Vec<String> = ops
        .iter()
        .map(|&o| format!("`{}`", super::encode::usage(o, local)))
        .collect();
    forms.join(" or ")
}

/// Pass 1 over all lines of the source `file`; an `.equ` named in `overrides` takes the
/// override's value instead of its own. Returns what was laid out and, per override, whether
/// its `.equ` was found.
pub(crate) fn layout(
    lines: &[&str],
    file: &str,
    errors: &mut Vec<AsmError>,
    overrides: &[(String, Expr)],
) -> (Laid, Vec<bool>) {
    let mut st = State {
        errors,
        laid: Laid {
            words: 0,
            insts: Vec::new(),
            raw: Vec::new(),
            code: Vec::new(),
            lines: LineTableBuilder::default(),
            data: Vec::new(),
            mems: Vec::new(),
            tprot: Vec::new(),
            vl: None,
            groups: None,
            tile_size: DEFAULT_TILE_SIZE,
            syms: Symbols::default(),
        },
        section: Section::Text,
        data_loc: 0,
        tile_loc: 0,
        vl_line: None,
        groups_line: None,
        tilesize_line: None,
        tile_fixed: false,
        open_loop: None,
        data_total: 0,
        overrides,
        used: vec![false; overrides.len()],
        line: 0,
        file,
        loc_file: None,
        loc_line: None,
    };
    for (i, text) in lines.iter().enumerate() {
        let lineno = i + 1;
        st.line = lineno;
        let chars: Vec<char> = text.chars().collect();
        let (line, err) = parse_line(&chars);
        for (name, col) in &line.labels {
            st.define_label(name, lineno, *col);
        }
        if let Some((col, kind)) = err {
            let kind = match (kind, &line.stmt) {
                (AsmErrorKind::Expected { expected, found }, Some(stmt)) => {
                    let forms = canonical_forms(&stmt.name);
                    let expected = if forms.is_empty() {
                        expected
                    } else {
                        format!("{expected} (write {forms})")
                    };
                    AsmErrorKind::Expected { expected, found }
                }
                (k, _) => k,
            };
            st.errors.push(AsmError::new(lineno, col, kind));
        }
        if let Some(stmt) = line.stmt
            && let Err((col, kind)) = st.statement(lineno, stmt)
        {
            st.errors.push(AsmError::new(lineno, col, kind));
        }
    }
    if let Some((line, col, _)) = st.open_loop {
        st.errors
            .push(AsmError::new(line, col, AsmErrorKind::UnmatchedLoop));
    }
    (st.laid, st.used)
}

impl State<'_> {
    fn err(&mut self, line: usize, col: usize, kind: AsmErrorKind) {
        self.errors.push(AsmError::new(line, col, kind));
    }

    fn check_name(&mut self, name: &str, line: usize, col: usize) -> bool {
        if parse_reg(name).is_some() {
            self.err(line, col, AsmErrorKind::RegisterName(name.to_string()));
            return false;
        }
        if name.starts_with('.') {
            self.err(
                line,
                col,
                AsmErrorKind::Expected {
                    expected: "a name starting with a letter or `_`".into(),
                    found: format!("`{name}`"),
                },
            );
            return false;
        }
        if let Some(first_line) = self.laid.syms.defined_line(name) {
            self.err(
                line,
                col,
                AsmErrorKind::DuplicateSymbol {
                    name: name.to_string(),
                    first_line,
                },
            );
            return false;
        }
        true
    }

    fn define_label(&mut self, name: &str, line: usize, col: usize) {
        if !self.check_name(name, line, col) {
            return;
        }
        let (kind, value) = match self.section {
            Section::Text => (SymKind::Code, self.laid.words.wrapping_mul(8)),
            Section::Data => (SymKind::Data, self.data_loc),
            Section::Tile => (SymKind::Tile, self.tile_loc),
        };
        self.laid.syms.define_label(name, kind, value, line);
    }

    /// A constant for layout: literal, earlier .equ or label.
    fn konst(&self, op: &Operand) -> EResult<i128> {
        match &op.kind {
            OpKind::Expr(e) => self.laid.syms.eval(e, Ctx::Layout),
            _ => Err(expected("a constant value", op)),
        }
    }

    fn konst_range(&self, op: &Operand, what: &'static str, min: i128, max: i128) -> EResult<i128> {
        let v = self.konst(op)?;
        if v < min || v > max {
            return Err((
                op.col,
                AsmErrorKind::ImmRange {
                    value: v,
                    what,
                    min,
                    max,
                },
            ));
        }
        Ok(v)
    }

    /// Take `n` code words at the end of the code; their first index.
    fn take_code(&mut self, col: usize, n: u64) -> EResult<u64> {
        let at = self.laid.words;
        if n > MAX_CODE_WORDS - at.min(MAX_CODE_WORDS) {
            return Err((col, AsmErrorKind::CodeTooLarge));
        }
        self.laid.words += n;
        self.laid.code.resize(self.laid.words as usize, 0);
        let line = self
            .loc_line
            .unwrap_or_else(|| u32::try_from(self.line).unwrap_or(u32::MAX));
        let file = self.loc_file.as_deref().unwrap_or(self.file);
        self.laid.lines.push(n, file, line);
        Ok(at)
    }

    fn loc(&mut self) -> &mut u64 {
        match self.section {
            Section::Tile => &mut self.tile_loc,
            _ => &mut self.data_loc,
        }
    }

    fn advance(&mut self, col: usize, n: u64) -> EResult<()> {
        let loc = self.loc();
        *loc = loc
            .checked_add(n)
            .ok_or((col, AsmErrorKind::AddressOverflow))?;
        Ok(())
    }

    fn data_space(&self, stmt: &Stmt) -> EResult<Space> {
        match self.section {
            Section::Text => Err((stmt.col, AsmErrorKind::DataInText(stmt.name.clone()))),
            Section::Data => Ok(Space::Memory),
            Section::Tile => Ok(Space::Tile),
        }
    }

    fn push_data(&mut self, line: usize, stmt: &Stmt, len: u64, vals: DataVals) -> EResult<()> {
        let space = self.data_space(stmt)?;
        self.data_total = self.data_total.saturating_add(len);
        if self.data_total > MAX_DATA_BYTES {
            return Err((stmt.col, AsmErrorKind::DataTooLarge));
        }
        let addr = *self.loc();
        self.advance(stmt.col, len)?;
        if len > 0 {
            self.laid.data.push(PendData {
                line,
                col: stmt.col,
                space,
                addr,
                len,
                vals,
            });
        }
        Ok(())
    }

    fn statement(&mut self, line: usize, stmt: Stmt) -> EResult<()> {
        let lower = stmt.name.to_ascii_lowercase();
        if lower.starts_with('.') {
            if stmt.broken {
                return Ok(());
            }
            return self.directive(line, &lower, stmt);
        }
        self.instruction(line, stmt)
    }

    fn instruction(&mut self, line: usize, stmt: Stmt) -> EResult<()> {
        let (ops, local) = mnemonic_ops(&stmt.name);
        let in_text = self.section == Section::Text;
        let index = self.laid.words;
        let words = ops.first().map_or(1, |o| o.words() as u64);
        if in_text {
            self.take_code(stmt.col, words)?;
        }
        if ops.is_empty() {
            if stmt.broken {
                // The line's syntax error is already reported.
                return Ok(());
            }
            return Err((stmt.col, AsmErrorKind::UnknownMnemonic(stmt.name.clone())));
        }
        if !in_text {
            return Err((stmt.col, AsmErrorKind::InstructionInData));
        }
        if local && ops[0].mem().is_none() {
            return Err((stmt.col, AsmErrorKind::LocalNotMemory(stmt.name.clone())));
        }
        let pi = self.laid.insts.len();
        let mut pair = None;
        match ops[0] {
            Opcode::Loop => {
                if let Some((outer_line, _, _)) = self.open_loop {
                    self.err(line, stmt.col, AsmErrorKind::NestedLoop { outer_line });
                } else {
                    self.open_loop = Some((line, stmt.col, pi));
                }
            }
            Opcode::Endloop => match self.open_loop.take() {
                Some((_, _, lp)) => {
                    let loop_index = self.laid.insts[lp].index;
                    self.laid.insts[lp].pair = Some(index + 1);
                    pair = Some(loop_index + 1);
                }
                None => self.err(line, stmt.col, AsmErrorKind::UnmatchedEndloop),
            },
            _ => {}
        }
        let broken = stmt.broken;
        if !broken && ops[0] != Opcode::Loop {
            // Encode now when every operand is known (a LOOP waits for its ENDLOOP).
            let pend = PendInst {
                line,
                stmt,
                ops,
                local,
                index,
                pair,
            };
            match super::encode::build(&self.laid.syms, &pend, Ctx::Layout) {
                Ok(inst) => {
                    super::encode::place(&mut self.laid.code, index, &inst);
                    return Ok(());
                }
                Err((_, AsmErrorKind::NotConstant(_) | AsmErrorKind::CircularEqu { .. })) => {}
                Err(e) => return Err(e),
            }
        }
        // A broken LOOP still opens its loop: keep it so that pairing works.
        if !broken || self.open_loop.is_some_and(|(_, _, lp)| lp == pi) {
            self.laid.insts.push(Deferred {
                line,
                index,
                pair,
                broken,
            });
        }
        Ok(())
    }

    fn nops(&self, stmt: &Stmt, n: usize) -> EResult<()> {
        if stmt.ops.len() != n {
            return Err((
                stmt.col,
                AsmErrorKind::Operands {
                    mnemonic: stmt.name.clone(),
                    usage: format!("{} {}", stmt.name, usage(&stmt.name.to_ascii_lowercase()))
                        .trim_end()
                        .to_string(),
                },
            ));
        }
        Ok(())
    }

    fn name_op(op: &Operand) -> EResult<String> {
        match &op.kind {
            OpKind::Expr(e) => match e.single() {
                Some(Atom::Name(n)) => Ok(n.clone()),
                _ => Err(expected("a name", op)),
            },
            OpKind::Reg(_) => Err((op.col, AsmErrorKind::RegisterName(op.text.clone()))),
            _ => Err(expected("a name", op)),
        }
    }

    fn directive(&mut self, line: usize, dir: &str, stmt: Stmt) -> EResult<()> {
        let ops = &stmt.ops;
        match dir {
            ".vl" => {
                self.nops(&stmt, 1)?;
                once(&stmt, ".vl", self.vl_line)?;
                let v = self.konst(&ops[0])?;
                if !(1..=64).contains(&v) || (v as u32).count_ones() != 1 {
                    return Err((ops[0].col, AsmErrorKind::BadVl(v)));
                }
                self.vl_line = Some(line);
                self.laid.vl = Some(v as u32);
            }
            ".groups" => {
                self.nops(&stmt, 1)?;
                once(&stmt, ".groups", self.groups_line)?;
                let g = self.konst(&ops[0])?;
                if !(1..=MAX_GROUPS as i128).contains(&g) {
                    return Err((ops[0].col, AsmErrorKind::BadGroups(g)));
                }
                self.groups_line = Some(line);
                self.laid.groups = Some(g as u32);
            }
            ".mem" => {
                self.nops(&stmt, 3)?;
                let addr = self.konst_range(&ops[0], "an address", 0, u64::MAX as i128)?;
                let size = self.konst_range(&ops[1], "a size", 0, u64::MAX as i128)?;
                let perm = match Self::name_op(&ops[2]).map(|s| s.to_ascii_lowercase()) {
                    Ok(p) if p == "r" => MemPerm::R,
                    Ok(p) if p == "rw" => MemPerm::Rw,
                    _ => return Err(expected("a permission, r or rw", &ops[2])),
                };
                if size == 0 {
                    return Err((ops[1].col, AsmErrorKind::MemSizeZero));
                }
                let page = PAGE_SIZE as i128;
                let start = addr / page * page;
                let end = (addr + size + page - 1) / page * page;
                if end > MAX_MEM_LIMIT as i128 {
                    return Err((ops[0].col, AsmErrorKind::MemBeyondLimit { end }));
                }
                self.laid.mems.push((start as u64, end as u64, perm));
            }
            ".text" => {
                self.nops(&stmt, 0)?;
                self.section = Section::Text;
            }
            ".data" | ".tiledata" => {
                if ops.len() > 1 {
                    self.nops(&stmt, 1)?;
                }
                let addr = match ops.first() {
                    Some(op) => {
                        Some(self.konst_range(op, "an address", 0, u64::MAX as i128)? as u64)
                    }
                    None => None,
                };
                if dir == ".data" {
                    self.section = Section::Data;
                    if let Some(a) = addr {
                        self.data_loc = a;
                    }
                } else {
                    self.section = Section::Tile;
                    self.tile_fixed = true;
                    if let Some(a) = addr {
                        self.tile_loc = a;
                    }
                }
            }
            ".byte" | ".half" | ".word" | ".dword" => {
                self.data_space(&stmt)?;
                if ops.is_empty() {
                    self.nops(&stmt, 1)?;
                }
                let size: u8 = match dir {
                    ".byte" => 1,
                    ".half" => 2,
                    ".word" => 4,
                    _ => 8,
                };
                let mut vals = Vec::new();
                for op in ops {
                    match &op.kind {
                        OpKind::Expr(e) => vals.push(e.clone()),
                        _ => return Err(expected("a value", op)),
                    }
                }
                let len = vals.len() as u64 * size as u64;
                self.push_data(line, &stmt, len, DataVals::Ints(size, vals))?;
            }
            ".float" | ".double" => {
                self.data_space(&stmt)?;
                let bytes = parse_floats(&stmt, dir == ".float")?;
                self.push_data(line, &stmt, bytes.len() as u64, DataVals::Bytes(bytes))?;
            }
            ".fill" => {
                self.data_space(&stmt)?;
                self.nops(&stmt, 3)?;
                let count = self.konst_range(&ops[0], "a count", 0, u64::MAX as i128)? as u64;
                let size = self.konst(&ops[1])?;
                if !matches!(size, 1 | 2 | 4 | 8) {
                    return Err((ops[1].col, AsmErrorKind::BadFillSize(size)));
                }
                let OpKind::Expr(val) = &ops[2].kind else {
                    return Err(expected("a value", &ops[2]));
                };
                let len = count
                    .checked_mul(size as u64)
                    .ok_or((stmt.col, AsmErrorKind::DataTooLarge))?;
                self.push_data(
                    line,
                    &stmt,
                    len,
                    DataVals::Fill(count, size as u8, val.clone()),
                )?;
            }
            ".space" => {
                self.data_space(&stmt)?;
                self.nops(&stmt, 1)?;
                let n = self.konst_range(&ops[0], "a size", 0, u64::MAX as i128)? as u64;
                self.advance(stmt.col, n)?;
            }
            ".align" => {
                self.nops(&stmt, 1)?;
                let n = self.konst(&ops[0])?;
                if n <= 0 || n > 1 << 62 || (n as u64).count_ones() != 1 {
                    return Err((ops[0].col, AsmErrorKind::BadAlign(n)));
                }
                let n = n as u64;
                if self.section == Section::Text {
                    // Pad the code with NOPs up to a pc that is a multiple of N (pcs are
                    // always multiples of 8, so N <= 8 changes nothing).
                    if n > 1 << 20 {
                        return Err((ops[0].col, AsmErrorKind::BadAlign(n as i128)));
                    }
                    let m = (n / 8).max(1);
                    let pad = (m - self.laid.words % m) % m;
                    let at = self.take_code(stmt.col, pad)?;
                    self.laid.code[at as usize..].fill(Opcode::Nop as u8 as u64);
                    return Ok(());
                }
                let loc = *self.loc();
                let pad = (n - loc % n) % n;
                self.advance(stmt.col, pad)?;
            }
            ".equ" => {
                self.nops(&stmt, 2)?;
                let name = Self::name_op(&ops[0])?;
                let OpKind::Expr(e) = &ops[1].kind else {
                    return Err(expected("a value", &ops[1]));
                };
                if self.check_name(&name, line, ops[0].col) {
                    let e = match self.overrides.iter().position(|(n, _)| *n == name) {
                        Some(k) => {
                            self.used[k] = true;
                            Expr {
                                col: ops[1].col,
                                ..self.overrides[k].1.clone()
                            }
                        }
                        None => e.clone(),
                    };
                    self.laid.syms.define_equ(&name, e, line);
                }
            }
            ".file" => {
                let name = parse_file_name(&stmt)?;
                self.loc_file = Some(name);
            }
            ".loc" => {
                self.nops(&stmt, 1)?;
                let line = self.konst_range(&ops[0], "a line number", 1, u32::MAX as i128)?;
                self.loc_line = Some(line as u32);
            }
            ".inst" => {
                self.nops(&stmt, 1)?;
                if self.section != Section::Text {
                    return Err((stmt.col, AsmErrorKind::InstructionInData));
                }
                let index = self.take_code(stmt.col, 1)?;
                let OpKind::Expr(e) = &ops[0].kind else {
                    return Err(expected("a 64-bit word", &ops[0]));
                };
                self.laid.raw.push((index, e.clone(), line));
            }
            ".tilesize" => {
                self.nops(&stmt, 1)?;
                once(&stmt, ".tilesize", self.tilesize_line)?;
                if self.tile_fixed {
                    return Err((stmt.col, AsmErrorKind::TileSizeLate));
                }
                let n = self.konst(&ops[0])?;
                if n < TILE_GRANULE as i128 || n > MAX_TILE_SIZE as i128 || n % 64 != 0 {
                    return Err((ops[0].col, AsmErrorKind::BadTileSize(n)));
                }
                self.tilesize_line = Some(line);
                self.laid.tile_size = n as u64;
            }
            ".tileprotect" => {
                self.nops(&stmt, 3)?;
                let addr = self.konst(&ops[0])?;
                let len = self.konst(&ops[1])?;
                let perm = match Self::name_op(&ops[2]).map(|s| s.to_ascii_lowercase()) {
                    Ok(p) if p == "none" => TilePerm::None,
                    Ok(p) if p == "r" => TilePerm::R,
                    Ok(p) if p == "rw" => TilePerm::Rw,
                    _ => return Err(expected("a permission, none, r or rw", &ops[2])),
                };
                self.tile_fixed = true;
                let size = self.laid.tile_size;
                if addr < 0
                    || len <= 0
                    || addr % 64 != 0
                    || len % 64 != 0
                    || addr + len > size as i128
                {
                    return Err((ops[0].col, AsmErrorKind::BadTileProtect { addr, len, size }));
                }
                self.laid
                    .tprot
                    .push((addr as u64, (addr + len) as u64, perm));
            }
            _ => return Err((stmt.col, AsmErrorKind::UnknownDirective(stmt.name.clone()))),
        }
        Ok(())
    }
}

/// The quoted name of `.file "NAME"`, from the raw text after the directive (comments not
/// stripped, so that a name may hold `;` or `#`). Inside the quotes `\\` is a backslash, `\"`
/// a quote and `\u{HEX}` any character; after them only a comment may follow.
fn parse_file_name(stmt: &Stmt) -> EResult<String> {
    let rest = &stmt.rest;
    let lead = rest.iter().take_while(|c| c.is_whitespace()).count();
    let bad = |at: usize, found: String| {
        Err((
            stmt.rest_col + at,
            AsmErrorKind::Expected {
                expected: "a quoted file name (`.file \"name.s\"`)".into(),
                found,
            },
        ))
    };
    let shown = |at: usize| match rest.get(at) {
        Some(c) => format!("`{c}`"),
        None => "end of line".into(),
    };
    if rest.get(lead) != Some(&'"') {
        return bad(lead, shown(lead));
    }
    let mut name = String::new();
    let mut i = lead + 1;
    loop {
        match rest.get(i) {
            None => return bad(i, "end of line".into()),
            Some('"') => break,
            Some('\\') => match rest.get(i + 1) {
                Some(&c @ ('\\' | '"')) => {
                    name.push(c);
                    i += 2;
                }
                Some('u') if rest.get(i + 2) == Some(&'{') => {
                    let close = rest[i + 3..].iter().position(|&c| c == '}');
                    let ch = close.and_then(|k| {
                        let hex: String = rest[i + 3..i + 3 + k].iter().collect();
                        u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32)
                    });
                    match (close, ch) {
                        (Some(k), Some(c)) => {
                            name.push(c);
                            i += 4 + k;
                        }
                        _ => return bad(i, "a bad `\\u{HEX}` escape".into()),
                    }
                }
                _ => {
                    return bad(
                        i,
                        "an escape other than `\\\\`, `\\\"` or `\\u{HEX}`".into(),
                    );
                }
            },
            Some(&c) => {
                name.push(c);
                i += 1;
            }
        }
    }
    let after = &rest[i + 1..];
    let tail = super::lexer::strip_comment(after);
    if let Some(k) = tail.iter().position(|c| !c.is_whitespace()) {
        return bad(i + 1 + k, shown(i + 1 + k));
    }
    Ok(name)
}

/// `.float`/`.double` values from the raw text after the directive.
fn parse_floats(stmt: &Stmt, single: bool) -> EResult<Vec<u8>> {
    let mut out = Vec::new();
    let mut col = stmt.rest_col;
    let rest: String = super::lexer::strip_comment(&stmt.rest).iter().collect();
    if rest.trim().is_empty() {
        return Err((
            stmt.col,
            AsmErrorKind::Operands {
                mnemonic: stmt.name.clone(),
                usage: format!("{} VALUE, ...", stmt.name),
            },
        ));
    }
    for piece in rest.split(',') {
        let lead = piece.chars().take_while(|c| c.is_whitespace()).count();
        let t = piece.trim();
        let pcol = col + lead;
        col += piece.chars().count() + 1;
        let bits = super::lexer::parse_float_bits(t, single)
            .ok_or((pcol, AsmErrorKind::BadFloat(t.to_string())))?;
        if single {
            out.extend_from_slice(&(bits as u32).to_le_bytes());
        } else {
            out.extend_from_slice(&bits.to_le_bytes());
        }
    }
    Ok(out)
}
