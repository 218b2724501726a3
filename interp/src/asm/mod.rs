//! The lanejit assembler: source text (contract section 6) to a [`Program`].
//!
//! [`assemble`] works in two passes over the lines of the source:
//!
//! 1. **Layout** (`layout`): every line is lexed (`lexer`) and parsed (`parser`) into
//!    labels and one statement. Labels get their values (a code label its pc, a `.data` label
//!    its memory address, a `.tiledata` label its tile address), instructions their pc (`S.LI`
//!    takes two words), data directives their address and size, `LOOP`/`ENDLOOP` are paired,
//!    and the directives that shape the program (`.vl`, `.mem`, `.tilesize`, `.tileprotect`,
//!    `.data ADDR`, `.align`, `.space`, `.fill` counts) are evaluated. Their values must be
//!    constants known at that point: literals, earlier `.equ` names and earlier labels.
//!    An instruction whose operands are all known already is encoded here (the same words
//!    and errors resolution would give); the others wait with their line number.
//! 2. **Resolution** (`encode`): the memory map and tile protections are settled (a later
//!    `.mem`/`.tileprotect` overrides an earlier one page by page / granule by granule), then
//!    every waiting instruction's line is parsed again and encoded through
//!    [`crate::isa::Inst::encode`] with all labels and `.equ` names known (forward
//!    references are fine), every data value is evaluated and its
//!    bytes checked against the settled map (so data may precede its `.mem`), and overlapping
//!    data takes the later value.
//!
//! Labels and `.equ` names live in `symbols`, which evaluates every definition once, without
//! recursion: an acyclic chain of any depth, written in any order, resolves; a cycle is
//! reported at each of its members (and at each use) with the names on it.
//!
//! Every error of the file is reported (one per bad line at least, in line order); the
//! assembler never panics, whatever the input.
//!
//! Decisions beyond the contract (documented for `seeds/ISA.md`):
//! - `.mem` checks only against the largest possible memory limit, 2^40
//!   ([`crate::program::MAX_MEM_LIMIT`]): a range whose page-rounded end exceeds it is an
//!   error. The run-time `--mem-limit` is checked by the loader.
//! - Branch targets may be a code label or (an extension) a numeric pc that is a multiple of 8,
//!   as the single-instruction disassembler prints them (`J 0x28`).
//! - `.space N` and `.align N` only advance the location counter: they emit no bytes (memory
//!   and tile start zeroed), so they neither need mapped pages nor overwrite earlier data.
//!   In `.text`, `.align N` (N at most 2^20) pads with `NOP`s up to a pc that is a multiple of
//!   N; `.space` there is an error.
//! - `.vl`, `.groups` and `.tilesize` may each appear at most once.
//! - Every code word gets the file and line it came from, in the program's line table
//!   ([`crate::lines`]); `.file "NAME"` and `.loc LINE` override the file and the line of the
//!   code words that follow (so the disassembler's listing re-assembles to the original
//!   lines). `.file`'s name is read from the raw line, comment characters included.
//! - Immediates in memory operands are a number or an `.equ`/label name, optionally negated;
//!   `S.LI`, `.equ`, data lists, ALU and branch immediates take sums such as `buf + 8 - 2`.
//! - At most [`MAX_DATA_BYTES`] bytes of data may be emitted in total, and at most
//!   [`MAX_CODE_WORDS`] code words (`.align` padding included).
//! - Memory: an instruction whose operands are all known during layout is encoded at once;
//!   one with a forward reference keeps only its line number, and resolution parses that line
//!   again. The assembler holds a few times the source size (measured: a 5.4 MB source of
//!   instructions, 19 MB in all; 11 MB where every other line branches forward, 75 MB).

mod encode;
mod layout;
mod lexer;
mod parser;
mod symbols;

pub use symbols::EquCycle;

use crate::program::Program;
use std::fmt;

/// The most data bytes one source may emit (a guard against absurd `.fill` counts).
pub const MAX_DATA_BYTES: u64 = 1 << 28;
/// The most code words one source may produce (2^24 words, 128 MiB: every pc a branch can
/// name, [`crate::isa::MAX_TARGET`]).
pub const MAX_CODE_WORDS: u64 = 1 << 24;

/// Assemble `src`; `file` is only used to name the source in error messages.
pub fn assemble(src: &str, file: &str) -> Result<Program, AsmErrors> {
    assemble_with(src, file, &[])
}

/// Assemble `src` with `.equ` overrides: each `(NAME, VALUE)` replaces the value of the
/// source's `.equ NAME, ...` by VALUE (any value an `.equ` accepts: a number, a float literal,
/// a sum of names). An override that does not parse, or whose name has no `.equ` in the
/// source, is an error on line 0 (reported before the file's own errors).
pub fn assemble_with(
    src: &str,
    file: &str,
    set: &[(String, String)],
) -> Result<Program, AsmErrors> {
    assemble_mapped(src, file, set).map(|(p, _)| p)
}

/// What the assembler knows of a source beyond the [`Program`] it built (whose line table
/// names the source line of every code word): the values of its `.equ`s.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SourceMap {
    /// Every `.equ` with its value (after `--set` overrides), sorted by name.
    pub equs: Vec<(String, i128)>,
}

/// As [`assemble_with`], also returning the program's [`SourceMap`].
pub fn assemble_mapped(
    src: &str,
    file: &str,
    set: &[(String, String)],
) -> Result<(Program, SourceMap), AsmErrors> {
    let lines: Vec<&str> = src
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut errors = Vec::new();
    let mut overrides = Vec::with_capacity(set.len());
    for (name, value) in set {
        match parse_override(value) {
            Ok(e) => overrides.push((name.clone(), e)),
            Err((col, kind)) => {
                let mut e = AsmError::new(0, col, kind);
                e.text = format!("--set {name}={value}");
                errors.push(e);
            }
        }
    }
    let (laid, used) = layout::layout(&lines, file, &mut errors, &overrides);
    for ((name, _), used) in overrides.iter().zip(used) {
        if !used {
            let names: Vec<&str> = laid.syms.equs.keys().map(String::as_str).collect();
            let mut e = AsmError::new(0, 1, AsmErrorKind::NoSuchEqu(name.clone()));
            e.help = did_you_mean(name, names).map(|n| format!("did you mean `{n}`?"));
            e.text = format!("--set {name}");
            errors.push(e);
        }
    }
    let names: Vec<String> = laid
        .syms
        .labels
        .keys()
        .chain(laid.syms.equs.keys())
        .cloned()
        .collect();
    let mut equs: Vec<(String, i128)> = laid
        .syms
        .equs
        .keys()
        .filter_map(|n| laid.syms.check_equ(n, 0).ok().map(|v| (n.clone(), v)))
        .collect();
    equs.sort();
    let program = encode::resolve(laid, &lines, &mut errors);
    if errors.is_empty() {
        Ok((program, SourceMap { equs }))
    } else {
        errors.sort_by_key(|e: &AsmError| (e.line, e.col));
        for e in &mut errors {
            if e.help.is_none() {
                e.help = suggestion(&e.kind, &names);
            }
        }
        for e in errors.iter_mut().filter(|e| e.line > 0) {
            e.text = lines
                .get(e.line.wrapping_sub(1))
                .copied()
                .unwrap_or("")
                .to_string();
        }
        Err(AsmErrors {
            file: file.to_string(),
            errors,
        })
    }
}

/// Whether `name` is spelled like a register (`s0..s31`, `v0..v31`, `lc0`, any case), so it
/// cannot name a label.
pub fn is_register_name(name: &str) -> bool {
    parser::parse_reg(name).is_some()
}

/// Every kind of assembly error, with a message that says what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AsmErrorKind {
    /// A character that starts no token.
    #[error("unexpected character `{0}`")]
    InvalidChar(char),
    /// A malformed integer literal.
    #[error("`{0}` is not a valid integer (decimal, 0x hex or 0b binary, `_` allowed)")]
    BadNumber(String),
    /// An integer literal above 2^64 - 1.
    #[error("`{0}` does not fit in 64 bits")]
    NumberTooLarge(String),
    /// The syntax does not match: what was expected and what was found.
    #[error("expected {expected}, found {found}")]
    Expected {
        /// What the grammar wants here.
        expected: String,
        /// What the source has (`end of line` at the end).
        found: String,
    },
    /// A mnemonic that is not an instruction.
    #[error("unknown instruction `{0}`")]
    UnknownMnemonic(String),
    /// A directive that does not exist.
    #[error("unknown directive `{0}`")]
    UnknownDirective(String),
    /// `.local` on an instruction that is not a load or store.
    #[error("`{0}` is not a load or store and takes no .local suffix")]
    LocalNotMemory(String),
    /// Operands that do not match the instruction's form.
    #[error("wrong operands for {mnemonic}: expected `{usage}`")]
    Operands {
        /// The instruction.
        mnemonic: String,
        /// Its canonical syntax (mnemonic and operands).
        usage: String,
    },
    /// A register of the wrong kind for its slot.
    #[error("expected {expected}, found `{found}`")]
    WrongRegister {
        /// What the slot accepts.
        expected: &'static str,
        /// The register written.
        found: String,
    },
    /// `lc0` outside a memory form's SrcR or the contiguous middle operand.
    #[error(
        "lc0 may only be a memory form's offset register (SrcR) or the contiguous form's middle operand"
    )]
    Lc0NotAllowed,
    /// A label or `.equ` name defined twice.
    #[error("`{name}` is already defined on line {first_line}")]
    DuplicateSymbol {
        /// The name.
        name: String,
        /// Where it was defined first.
        first_line: usize,
    },
    /// A name that is neither a label nor an `.equ`.
    #[error("undefined symbol `{0}`")]
    UndefinedSymbol(String),
    /// `--set NAME=VALUE` for a name the source defines with no `.equ`.
    #[error("the program has no `.equ {0}` to override")]
    NoSuchEqu(String),
    /// A label or `.equ` name spelled like a register.
    #[error("`{0}` is a register name and cannot name a label or .equ")]
    RegisterName(String),
    /// A `.equ` on a cycle of definitions, or defined in terms of one.
    #[error("{}", symbols::circular_text(.name, .cycle))]
    CircularEqu {
        /// The `.equ`.
        name: String,
        /// The cycle's members (from `name` when it is one of them).
        cycle: EquCycle,
    },
    /// A layout-affecting value that is not known at this point of the source.
    #[error(
        "`{0}` is not known here: this value must be a constant (a literal, or an earlier .equ or label)"
    )]
    NotConstant(String),
    /// Arithmetic on values overflowed.
    #[error("the expression overflows")]
    Overflow,
    /// A value outside the range of its field.
    #[error("{value} does not fit {what} ({min}..={max})")]
    ImmRange {
        /// The value.
        value: i128,
        /// The field (`simm24`, `simm32`, `.byte`, ...).
        what: &'static str,
        /// Smallest accepted value.
        min: i128,
        /// Largest accepted value.
        max: i128,
    },
    /// A shift amount outside what the form accepts.
    #[error("shift {value} is out of range: {mnemonic} accepts {min}..={max}")]
    ShiftRange {
        /// The instruction.
        mnemonic: String,
        /// The shift written.
        value: i128,
        /// Smallest accepted.
        min: u32,
        /// Largest accepted.
        max: u32,
    },
    /// A scaled immediate written without `(imm << k)` or with the wrong k.
    #[error("{mnemonic} scales its immediate by {scale}: write (imm << {k})")]
    ScaledImmShift {
        /// The instruction.
        mnemonic: String,
        /// E.
        scale: u32,
        /// log2 E.
        k: u32,
    },
    /// An unscaled (byte or `.U`) immediate written with a shift.
    #[error("{mnemonic} does not scale its immediate: write [base + imm] without a shift")]
    UnscaledImmShift {
        /// The instruction.
        mnemonic: String,
    },
    /// A register-offset store without `.U` whose written shift is missing.
    #[error(
        "{mnemonic} shifts its register offset by at least {k}: write ({reg} << {k}), or use {umnemonic} for an unshifted offset"
    )]
    StoreShiftMissing {
        /// The instruction.
        mnemonic: String,
        /// log2 E.
        k: u32,
        /// The offset register as written.
        reg: String,
        /// The `.U` variant.
        umnemonic: String,
    },
    /// `(a + b)` shift spelling where it is not allowed.
    #[error(
        "the (a + b) shift spelling is only for V.SH, V.SW and V.SD register offsets; write the total shift"
    )]
    ShiftSumNotAllowed,
    /// `(a + b)` shift with a != log2 E.
    #[error("{mnemonic} register offsets are written (reg << ({k} + shamt)); found {found} + ...")]
    ShiftSumBase {
        /// The instruction.
        mnemonic: String,
        /// log2 E.
        k: u32,
        /// The `a` written.
        found: i128,
    },
    /// A register offset written with `-`.
    #[error("a register offset cannot be subtracted: write [base + reg]")]
    NegativeRegOffset,
    /// A register-form mnemonic with an immediate offset whose shift is not log2 E.
    #[error("{mnemonic} with an immediate offset: write `{suggest}`")]
    RegFormImm {
        /// The instruction.
        mnemonic: String,
        /// The I (and I.U) forms to use instead.
        suggest: String,
    },
    /// An `I` mnemonic with a register offset.
    #[error(
        "{mnemonic} takes an immediate offset, not a register: write `{usage}` or use {rmnemonic}"
    )]
    ImmFormReg {
        /// The instruction.
        mnemonic: String,
        /// Its canonical form.
        usage: String,
        /// The register-offset mnemonic.
        rmnemonic: String,
    },
    /// A `.U` register-form store with an immediate offset.
    #[error("{mnemonic} takes register offsets only: write `{usage}`")]
    UFormImm {
        /// The instruction.
        mnemonic: String,
        /// What to write instead.
        usage: String,
    },
    /// A contiguous (`lc0`) operand on a mnemonic that has no contiguous form.
    #[error("{mnemonic} has no contiguous (lc0) form: write `{usage}`")]
    NoContigForm {
        /// The instruction.
        mnemonic: String,
        /// The canonical form of this mnemonic.
        usage: String,
    },
    /// The contiguous form's middle operand is not `lc0 << log2 E`.
    #[error("the contiguous form of {mnemonic} needs `{expected}` as its middle operand")]
    ContigShift {
        /// The instruction.
        mnemonic: String,
        /// `lc0<<k` (or `lc0`).
        expected: String,
    },
    /// A load written without its `->vD`.
    #[error("{mnemonic} needs a destination register: write `{usage}`")]
    MissingDest {
        /// The instruction.
        mnemonic: String,
        /// Its canonical form.
        usage: String,
    },
    /// A store written with `->dst`.
    #[error("a store has no destination register; the data register comes first: write `{usage}`")]
    StoreArrow {
        /// Its canonical form.
        usage: String,
    },
    /// A store without its data register.
    #[error("{mnemonic} needs the register holding the data to store: write `{usage}`")]
    MissingStoreData {
        /// The instruction.
        mnemonic: String,
        /// Its canonical form.
        usage: String,
    },
    /// A branch target that is not a code address.
    #[error(
        "branch target {0:#x} is not a valid pc: use a code label or a multiple of 8 below 0x8000000"
    )]
    BadTarget(i128),
    /// A data label used as a branch target.
    #[error("`{0}` is not a code label")]
    NotCodeLabel(String),
    /// `LOOP` inside an open loop.
    #[error("hardware loops cannot nest: the LOOP on line {outer_line} is still open")]
    NestedLoop {
        /// The open LOOP.
        outer_line: usize,
    },
    /// `ENDLOOP` without an open `LOOP`.
    #[error("ENDLOOP without a matching LOOP")]
    UnmatchedEndloop,
    /// `LOOP` without an `ENDLOOP`.
    #[error("LOOP without a matching ENDLOOP")]
    UnmatchedLoop,
    /// An instruction (or `.inst`) after `.data`/`.tiledata`.
    #[error("instructions belong in .text, not in a data section")]
    InstructionInData,
    /// A data directive in the text section.
    #[error("`{0}` emits data and must follow .data ADDR or .tiledata ADDR")]
    DataInText(String),
    /// A directive that may appear only once.
    #[error("`{directive}` was already given on line {first_line}")]
    DuplicateDirective {
        /// The directive.
        directive: &'static str,
        /// Its first occurrence.
        first_line: usize,
    },
    /// `.vl` not a power of two in 1..=64.
    #[error("VL must be a power of two from 1 to 64, found {0}")]
    BadVl(i128),
    /// `.groups` outside 1..=2^24.
    #[error("the group count must be from 1 to 2^24 (16777216), found {0}")]
    BadGroups(i128),
    /// `.mem` with size 0.
    #[error(".mem size must not be 0")]
    MemSizeZero,
    /// `.mem` range past 2^40.
    #[error(".mem range ends at {end:#x}, beyond the largest memory limit 2^40 (0x10000000000)")]
    MemBeyondLimit {
        /// Page-rounded end.
        end: i128,
    },
    /// Data bytes outside mapped memory.
    #[error("data at {addr:#x}..{end:#x} is not entirely in mapped pages (add a .mem)")]
    DataUnmapped {
        /// First byte.
        addr: u64,
        /// One past the last byte.
        end: u128,
    },
    /// Tile data outside the tile.
    #[error("tile data at {addr:#x}..{end:#x} is outside the tile ({size:#x} bytes)")]
    DataOutsideTile {
        /// First byte.
        addr: u64,
        /// One past the last byte.
        end: u128,
        /// Tile size.
        size: u64,
    },
    /// `.tilesize` not a multiple of 64 in 64..=16 MiB.
    #[error("tile size must be a multiple of 64 from 64 to 16 MiB, found {0}")]
    BadTileSize(i128),
    /// `.tilesize` after `.tileprotect` or `.tiledata`.
    #[error(".tilesize must come before any .tileprotect or .tiledata")]
    TileSizeLate,
    /// `.tileprotect` range not in 64-byte granules inside the tile.
    #[error(
        ".tileprotect range {addr:#x}+{len:#x} must be non-empty multiples of 64 inside the tile ({size:#x} bytes)"
    )]
    BadTileProtect {
        /// Start.
        addr: i128,
        /// Length.
        len: i128,
        /// Tile size.
        size: u64,
    },
    /// `.align` not a power of two.
    #[error(".align needs a power of two, found {0}")]
    BadAlign(i128),
    /// `.fill` SIZE not 1, 2, 4 or 8.
    #[error(".fill size must be 1, 2, 4 or 8, found {0}")]
    BadFillSize(i128),
    /// A malformed `.float`/`.double` value.
    #[error(
        "`{0}` is not a floating-point number (decimal, inf, -inf or nan; a float literal is written f32(2.5) or f64(-1e3))"
    )]
    BadFloat(String),
    /// More data than [`MAX_DATA_BYTES`].
    #[error("the program emits more than {MAX_DATA_BYTES} bytes of data")]
    DataTooLarge,
    /// More code than [`MAX_CODE_WORDS`].
    #[error("the program has more than {MAX_CODE_WORDS} code words")]
    CodeTooLarge,
    /// The location counter ran past 2^64 or code past the largest target.
    #[error("the address overflows its space")]
    AddressOverflow,
}

/// One assembly error at a 1-based line and column (columns count characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
    /// What went wrong.
    pub kind: AsmErrorKind,
    /// The source line (filled in by [`assemble`]; for an error on line 0, the `--set`
    /// override it is about).
    pub text: String,
    /// A suggestion (`did you mean ...?`, the canonical form), shown as a `help:` line.
    pub help: Option<String>,
}

impl AsmError {
    pub(crate) fn new(line: usize, col: usize, kind: AsmErrorKind) -> AsmError {
        AsmError {
            line,
            col,
            kind,
            text: String::new(),
            help: None,
        }
    }
}

/// The candidate closest to `name` (case-insensitively, by Damerau-Levenshtein distance) if it
/// is close enough to be a likely misspelling (at most a third of the longer name's length,
/// and at least 1) and no other candidate is as close.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    // The closest candidate, and whether another one is as close (then none is suggested).
    let mut best: Option<(usize, &str, bool)> = None;
    for c in candidates {
        let d = strsim::damerau_levenshtein(&lower, &c.to_ascii_lowercase());
        let limit = (name.chars().count().max(c.chars().count()) / 3).max(1);
        if d > limit {
            continue;
        }
        best = match best {
            Some((bd, bc, _)) if bd == d && !bc.eq_ignore_ascii_case(c) => Some((bd, bc, true)),
            Some((bd, _, _)) if bd <= d => best,
            _ => Some((d, c, false)),
        };
    }
    best.filter(|b| !b.2).map(|b| b.1)
}

/// Every directive the assembler knows.
pub const DIRECTIVES: [&str; 21] = [
    ".vl",
    ".groups",
    ".mem",
    ".data",
    ".tiledata",
    ".text",
    ".byte",
    ".half",
    ".word",
    ".dword",
    ".float",
    ".double",
    ".fill",
    ".space",
    ".align",
    ".equ",
    ".inst",
    ".tilesize",
    ".tileprotect",
    ".file",
    ".loc",
];

/// The `help:` line of an error about a name: the closest label or `.equ` (else register) for
/// an undefined symbol, the closest mnemonic or directive for an unknown one.
fn suggestion(kind: &AsmErrorKind, names: &[String]) -> Option<String> {
    let regs = || {
        (0..32)
            .flat_map(|i| [format!("s{i}"), format!("v{i}")])
            .chain(["lc0".to_string()])
            .collect::<Vec<_>>()
    };
    if let AsmErrorKind::UndefinedSymbol(name) = kind
        && let Some((kind, num)) = name.to_ascii_lowercase().split_at_checked(1)
        && (kind == "s" || kind == "v")
        && !num.is_empty()
        && num.bytes().all(|b| b.is_ascii_digit())
    {
        return Some(format!(
            "registers are numbered 0 to 31: `{kind}0` .. `{kind}31` (without leading zeros)"
        ));
    }
    let hit = match kind {
        AsmErrorKind::UndefinedSymbol(name) => did_you_mean(name, names.iter().map(String::as_str))
            .map(str::to_string)
            .or_else(|| {
                let regs = regs();
                did_you_mean(name, regs.iter().map(String::as_str)).map(str::to_string)
            }),
        AsmErrorKind::UnknownMnemonic(name) => {
            let upper = name.to_ascii_uppercase();
            let (base, local) = match upper.strip_suffix(".LOCAL") {
                Some(b) => (b, ".local"),
                None => (upper.as_str(), ""),
            };
            did_you_mean(base, crate::isa::Opcode::ALL.iter().map(|o| o.mnemonic()))
                .map(|m| format!("{m}{local}"))
        }
        AsmErrorKind::UnknownDirective(name) => {
            did_you_mean(name, DIRECTIVES.iter().copied()).map(str::to_string)
        }
        _ => None,
    }?;
    Some(format!("did you mean `{hit}`?"))
}

/// Parse the VALUE of `--set NAME=VALUE` as the value of an `.equ`.
fn parse_override(value: &str) -> Result<parser::Expr, (usize, AsmErrorKind)> {
    let chars: Vec<char> = value.chars().collect();
    if lexer::strip_comment(&chars).len() != chars.len() || value.trim().is_empty() {
        return Err((
            1,
            AsmErrorKind::Expected {
                expected: "a value".into(),
                found: format!("`{value}`"),
            },
        ));
    }
    parser::parse_expr(&chars)
}

/// All errors of one source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmErrors {
    /// The file name used in messages.
    pub file: String,
    /// Every error, in line order (never empty).
    pub errors: Vec<AsmError>,
}

impl fmt::Display for AsmErrors {
    /// Each error as `file:line:col: error: message`, the source line and a caret line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in &self.errors {
            if e.line == 0 {
                writeln!(f, "{}: error: {}: {}", self.file, e.text, e.kind)?;
                if let Some(h) = &e.help {
                    writeln!(f, "help: {h}")?;
                }
                continue;
            }
            writeln!(f, "{}:{}:{}: error: {}", self.file, e.line, e.col, e.kind)?;
            writeln!(f, "{}", e.text)?;
            let pad: String = e
                .text
                .chars()
                .take(e.col.saturating_sub(1))
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            let missing = e.col.saturating_sub(1).saturating_sub(pad.chars().count());
            writeln!(f, "{pad}{}^", " ".repeat(missing))?;
            if let Some(h) = &e.help {
                writeln!(f, "help: {h}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for AsmErrors {}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = ".equ N, 4\n.text\nS.LI s1, N\nHALT\n";

    #[test]
    fn set_overrides_an_equ() {
        let p = assemble_with(SRC, "t.s", &[("N".into(), "0x10 + 2".into())]).unwrap();
        assert_eq!(p, assemble(&SRC.replace("4", "18"), "t.s").unwrap());
        let p = assemble_with(SRC, "t.s", &[("N".into(), "f32(2.5)".into())]).unwrap();
        assert_eq!(p.code[1], 0x4020_0000);
    }

    #[test]
    fn line_table_names_every_code_word() {
        let (p, map) = assemble_mapped(SRC, "t.s", &[]).unwrap();
        assert_eq!(p.code.len(), 3);
        let l = &p.lines;
        assert_eq!((l.at(0), l.at(8)), (Some(("t.s", 3)), Some(("t.s", 3))));
        assert_eq!(
            (l.at(16), l.at(24), l.at(4)),
            (Some(("t.s", 4)), None, None)
        );
        assert_eq!(map.equs, [("N".to_string(), 4)]);
    }

    #[test]
    fn file_and_loc_override_the_source_lines() {
        let src = "NOP\n.loc 40\nNOP\n.file \"k;#.s\" ; the name may hold ; and #\nS.LI s1, 1\n\
                   .align 64\n.file \"q\\\\\\\"\\u{1F600}\"\n.loc 7\nHALT\n";
        let p = assemble(src, "t.s").unwrap();
        let l = &p.lines;
        let at: Vec<_> = (0..p.code.len() as u64)
            .map(|i| l.at(i * 8).unwrap())
            .collect();
        // NOP, NOP, S.LI (two words), four NOPs of `.align` padding, HALT.
        let k = ("k;#.s", 40);
        let want = [
            ("t.s", 1),
            ("t.s", 40),
            k,
            k,
            k,
            k,
            k,
            k,
            ("q\\\"\u{1F600}", 7),
        ];
        assert_eq!(at, want);
        assert_eq!(l.validate(p.code.len() as u64), Ok(()));
        for bad in [
            ".file k.s",
            ".file \"k.s",
            ".file \"k.s\" x",
            ".file \"\\n\"",
            ".file \"\\u{d800}\"",
            ".file \"\\u{zz}\"",
            ".loc 0",
            ".loc 0x100000000",
            ".loc",
        ] {
            let e = assemble(bad, "t.s").unwrap_err();
            assert_eq!(e.errors.len(), 1, "{bad}: {e}");
        }
    }

    #[test]
    fn set_errors_name_the_override() {
        let e = assemble_with(SRC, "t.s", &[("M".into(), "1".into())]).unwrap_err();
        assert_eq!(e.errors[0].kind, AsmErrorKind::NoSuchEqu("M".into()));
        assert_eq!(e.errors[0].help.as_deref(), Some("did you mean `N`?"));
        assert!(
            e.to_string()
                .starts_with("t.s: error: --set M: the program has no `.equ M`")
        );
        let e = assemble_with(SRC, "t.s", &[("N".into(), "1 +".into())]).unwrap_err();
        assert_eq!(e.errors[0].line, 0);
        let e = assemble_with(SRC, "t.s", &[("N".into(), "".into())]).unwrap_err();
        assert_eq!(e.errors[0].line, 0);
    }

    #[test]
    fn suggestions() {
        assert_eq!(did_you_mean("lop", ["loop", "top"]), None, "a tie");
        assert_eq!(did_you_mean("lopp", ["loop", "top"]), Some("loop"));
        assert_eq!(did_you_mean("xyz", ["loop"]), None);
        let e = assemble(
            "S.ADD s1, s1, s32\nV.ADD v1, v1, v01\nS.ADD s1, s1, sss1\n",
            "t.s",
        )
        .unwrap_err();
        let helps: Vec<_> = e.errors.iter().map(|e| e.help.as_deref()).collect();
        assert_eq!(
            helps,
            [
                Some("registers are numbered 0 to 31: `s0` .. `s31` (without leading zeros)"),
                Some("registers are numbered 0 to 31: `v0` .. `v31` (without leading zeros)"),
                None,
            ]
        );
        let e = assemble("V.MOOV v1, s1\n.wrod 1\nJ tpo\ntop: HALT\n", "t.s").unwrap_err();
        let helps: Vec<_> = e.errors.iter().map(|e| e.help.as_deref()).collect();
        assert_eq!(
            helps,
            [
                Some("did you mean `V.MOV`?"),
                Some("did you mean `.word`?"),
                Some("did you mean `top`?")
            ]
        );
    }
}
