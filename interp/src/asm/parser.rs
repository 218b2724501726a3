//! Parsing one line into its labels and at most one statement with operand trees.

use super::AsmErrorKind;
use super::lexer::{Tok, Token, lex, strip_comment};
use crate::isa::Reg;

/// A register name (`s0..s31`, `v0..v31`, `lc0`), case-insensitive.
pub(crate) fn parse_reg(name: &str) -> Option<Reg> {
    let lower = name.to_ascii_lowercase();
    if lower == "lc0" {
        return Some(Reg::Lc0);
    }
    let (kind, num) = lower.split_at_checked(1)?;
    if num.is_empty()
        || !num.bytes().all(|b| b.is_ascii_digit())
        || (num.len() > 1 && num.starts_with('0'))
    {
        return None;
    }
    let n: u8 = num.parse().ok().filter(|&n| n < 32)?;
    match kind {
        "s" => Some(Reg::S(n)),
        "v" => Some(Reg::V(n)),
        _ => None,
    }
}

/// An operand atom: a literal or a name (`.equ` or label).
#[derive(Clone, Debug)]
pub(crate) enum Atom {
    Num(u128),
    Name(String),
}

/// One signed term of a sum.
#[derive(Clone, Debug)]
pub(crate) struct Term {
    pub neg: bool,
    pub atom: Atom,
    pub col: usize,
}

/// `a + b - c`: a sum of signed terms.
#[derive(Clone, Debug)]
pub(crate) struct Expr {
    pub terms: Vec<Term>,
    pub col: usize,
}

impl Expr {
    /// A single unsigned literal, if the expression is exactly that.
    pub fn single(&self) -> Option<&Atom> {
        match self.terms.as_slice() {
            [t] if !t.neg => Some(&t.atom),
            _ => None,
        }
    }
}

/// A shift amount: `k` or `(a + b)`.
#[derive(Clone, Debug)]
pub(crate) enum Shift {
    One(Expr),
    Sum(Expr, Expr),
}

/// What an indexed offset holds.
#[derive(Clone, Debug)]
pub(crate) enum OffVal {
    Reg(Reg, String),
    Imm(Expr),
}

/// The offset of `[base + off]`, `[base - off]`.
#[derive(Clone, Debug)]
pub(crate) struct Off {
    pub neg: bool,
    pub val: OffVal,
    pub shift: Option<Shift>,
    pub col: usize,
}

/// The contiguous form's third operand.
#[derive(Clone, Debug)]
pub(crate) enum COff {
    Reg(Reg, String, usize),
    Imm(Expr),
}

/// The inside of `[...]`.
#[derive(Clone, Debug)]
pub(crate) enum MemBody {
    Indexed(Option<Off>),
    Contig {
        mid: Reg,
        mid_text: String,
        mid_col: usize,
        shift: Option<Expr>,
        off: Option<COff>,
    },
}

/// A memory operand.
#[derive(Clone, Debug)]
pub(crate) struct Mem {
    pub base: Reg,
    pub base_text: String,
    pub base_col: usize,
    pub body: MemBody,
}

/// Kinds of operands.
#[derive(Clone, Debug)]
pub(crate) enum OpKind {
    Reg(Reg),
    Expr(Expr),
    Mem(Mem),
    Arrow(Reg),
}

/// One comma-separated operand with its column and source text.
#[derive(Clone, Debug)]
pub(crate) struct Operand {
    pub kind: OpKind,
    pub col: usize,
    pub text: String,
}

/// A statement: mnemonic or directive (as written) and operands.
#[derive(Clone, Debug)]
pub(crate) struct Stmt {
    pub name: String,
    pub col: usize,
    pub ops: Vec<Operand>,
    /// The raw text after the name (for `.float`/`.double`) and its first column.
    pub rest: Vec<char>,
    pub rest_col: usize,
    /// The operands did not parse (an error was reported); the statement still takes space.
    pub broken: bool,
}

/// A parsed line.
#[derive(Clone, Debug, Default)]
pub(crate) struct Line {
    pub labels: Vec<(String, usize)>,
    pub stmt: Option<Stmt>,
}

type PResult<T> = Result<T, (usize, AsmErrorKind)>;

struct Cursor<'a> {
    toks: &'a [Token],
    chars: &'a [char],
    pos: usize,
    eol: usize,
}

fn describe(t: Option<&Token>, chars: &[char]) -> String {
    match t {
        None => "end of line".to_string(),
        Some(t) => {
            let s: String = chars
                .get(t.col - 1..t.end - 1)
                .map(|c| c.iter().collect())
                .unwrap_or_default();
            format!("`{s}`")
        }
    }
}

impl Cursor<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }
    fn peek2(&self) -> Option<&Tok> {
        self.toks.get(self.pos + 1).map(|t| &t.tok)
    }
    fn col(&self) -> usize {
        self.toks.get(self.pos).map_or(self.eol, |t| t.col)
    }
    fn prev_end(&self) -> usize {
        if self.pos == 0 {
            1
        } else {
            self.toks[self.pos - 1].end
        }
    }
    fn bump(&mut self) -> Option<&Token> {
        let t = self.toks.get(self.pos);
        if t.is_some() {
            self.pos += 1;
        }
        t
    }
    fn err<T>(&self, expected: &str) -> PResult<T> {
        Err((
            self.col(),
            AsmErrorKind::Expected {
                expected: expected.to_string(),
                found: describe(self.toks.get(self.pos), self.chars),
            },
        ))
    }
    fn eat(&mut self, tok: &Tok) -> bool {
        if self.peek() == Some(tok) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, tok: &Tok, what: &str) -> PResult<()> {
        if self.eat(tok) {
            Ok(())
        } else {
            self.err(what)
        }
    }
    fn text(&self, from: usize, to: usize) -> String {
        self.chars
            .get(from.saturating_sub(1)..to.saturating_sub(1).min(self.chars.len()))
            .map(|c| c.iter().collect::<String>())
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    /// A register token, if the next token is one.
    fn reg(&mut self) -> Option<(Reg, String, usize)> {
        if let Some(Tok::Ident(name)) = self.peek()
            && let Some(r) = parse_reg(name)
        {
            let name = name.clone();
            let col = self.col();
            self.pos += 1;
            return Some((r, name, col));
        }
        None
    }

    /// A literal or a (non-register) name.
    fn atom(&mut self) -> PResult<Atom> {
        match self.peek() {
            Some(Tok::Num(n)) => {
                let n = *n;
                self.pos += 1;
                Ok(Atom::Num(n))
            }
            Some(Tok::Ident(name)) if parse_reg(name).is_none() && !name.starts_with('.') => {
                let name = name.clone();
                self.pos += 1;
                Ok(Atom::Name(name))
            }
            _ => self.err("a number or a name"),
        }
    }

    /// `[-] atom`.
    fn term(&mut self, neg: bool) -> PResult<Term> {
        let mut neg = neg;
        while self.eat(&Tok::Minus) {
            neg = !neg;
        }
        let col = self.col();
        let atom = self.atom()?;
        Ok(Term { neg, atom, col })
    }

    /// `[-] atom (('+'|'-') atom)*`.
    fn expr(&mut self) -> PResult<Expr> {
        let col = self.col();
        let mut terms = vec![self.term(false)?];
        loop {
            if self.eat(&Tok::Plus) {
                terms.push(self.term(false)?);
            } else if self.eat(&Tok::Minus) {
                terms.push(self.term(true)?);
            } else {
                break;
            }
        }
        Ok(Expr { terms, col })
    }

    /// A single signed atom as an expression.
    fn signed_atom(&mut self) -> PResult<Expr> {
        let col = self.col();
        let t = self.term(false)?;
        Ok(Expr {
            terms: vec![t],
            col,
        })
    }

    fn shift(&mut self) -> PResult<Shift> {
        if self.eat(&Tok::LParen) {
            let a = self.signed_atom()?;
            let s = if self.eat(&Tok::Plus) {
                let b = self.signed_atom()?;
                Shift::Sum(a, b)
            } else {
                Shift::One(a)
            };
            self.expect(&Tok::RParen, "`)`")?;
            Ok(s)
        } else {
            Ok(Shift::One(self.signed_atom()?))
        }
    }

    /// `reg | [-]atom`, optionally `<< shift`, optionally in parentheses.
    fn offset(&mut self, neg: bool) -> PResult<Off> {
        let col = self.col();
        let mut neg = neg;
        while self.eat(&Tok::Minus) {
            neg = !neg;
        }
        let paren = self.eat(&Tok::LParen);
        while self.eat(&Tok::Minus) {
            neg = !neg;
        }
        let val = if let Some((r, text, _)) = self.reg() {
            OffVal::Reg(r, text)
        } else {
            OffVal::Imm(self.signed_atom()?)
        };
        let shift = if self.eat(&Tok::Shl) {
            Some(self.shift()?)
        } else {
            None
        };
        if paren {
            self.expect(&Tok::RParen, "`)`")?;
        }
        Ok(Off {
            neg,
            val,
            shift,
            col,
        })
    }

    fn mem(&mut self) -> PResult<Mem> {
        let Some((base, base_text, base_col)) = self.reg() else {
            return self.err("a base register (sN or vN)");
        };
        let body = if self.eat(&Tok::Comma) {
            let paren = self.eat(&Tok::LParen);
            let Some((mid, mid_text, mid_col)) = self.reg() else {
                return self.err("lc0");
            };
            let shift = if self.eat(&Tok::Shl) {
                Some(self.signed_atom()?)
            } else {
                None
            };
            if paren {
                self.expect(&Tok::RParen, "`)`")?;
            }
            let off = if self.eat(&Tok::Comma) {
                if let Some((r, text, col)) = self.reg() {
                    Some(COff::Reg(r, text, col))
                } else {
                    Some(COff::Imm(self.signed_atom()?))
                }
            } else {
                None
            };
            MemBody::Contig {
                mid,
                mid_text,
                mid_col,
                shift,
                off,
            }
        } else if self.eat(&Tok::Plus) {
            MemBody::Indexed(Some(self.offset(false)?))
        } else if self.eat(&Tok::Minus) {
            MemBody::Indexed(Some(self.offset(true)?))
        } else {
            MemBody::Indexed(None)
        };
        self.expect(&Tok::RBrack, "`]`")?;
        Ok(Mem {
            base,
            base_text,
            base_col,
            body,
        })
    }

    fn operand(&mut self) -> PResult<Operand> {
        let col = self.col();
        let kind = match self.peek() {
            Some(Tok::LBrack) => {
                self.pos += 1;
                OpKind::Mem(self.mem()?)
            }
            Some(Tok::Arrow) => {
                self.pos += 1;
                match self.reg() {
                    Some((r, _, _)) => OpKind::Arrow(r),
                    None => return self.err("a destination register after `->`"),
                }
            }
            Some(Tok::Ident(name)) if parse_reg(name).is_some() => match self.reg() {
                Some((r, _, _)) => OpKind::Reg(r),
                None => return self.err("a register"),
            },
            _ => OpKind::Expr(self.expr()?),
        };
        let text = self.text(col, self.prev_end());
        Ok(Operand { kind, col, text })
    }
}

/// Parse `chars` as one value (a sum of terms, as `.equ` takes), all of it.
pub(crate) fn parse_expr(chars: &[char]) -> Result<Expr, (usize, AsmErrorKind)> {
    let toks = lex(chars)?;
    let mut c = Cursor {
        toks: &toks,
        chars,
        pos: 0,
        eol: chars.len() + 1,
    };
    let e = c.expr()?;
    if c.peek().is_some() {
        return c.err("the end of the value");
    }
    Ok(e)
}

/// Parse a line. Errors carry a 1-based column. The labels parsed before an error are kept.
pub(crate) fn parse_line(raw: &[char]) -> (Line, Option<(usize, AsmErrorKind)>) {
    let chars = strip_comment(raw);
    let (toks, lex_err) = match lex(chars) {
        Ok(t) => (t, None),
        Err((col, k)) => {
            // Lex what precedes the bad character, for labels and `.float` lines.
            let t = lex(&chars[..col - 1]).unwrap_or_default();
            (t, Some((col, k)))
        }
    };
    let mut line = Line::default();
    let mut c = Cursor {
        toks: &toks,
        chars,
        pos: 0,
        eol: chars.len() + 1,
    };
    while let (Some(Tok::Ident(name)), Some(Tok::Colon)) = (c.peek(), c.peek2()) {
        line.labels.push((name.clone(), c.col()));
        c.pos += 2;
    }
    let Some(first) = c.bump() else {
        return (line, lex_err);
    };
    let Tok::Ident(name) = &first.tok else {
        let col = first.col;
        c.pos -= 1;
        let e = c
            .err::<()>("a label, an instruction or a directive")
            .unwrap_err();
        let e = match lex_err {
            Some(l) if l.0 < col => l,
            _ => e,
        };
        return (line, Some(e));
    };
    let name = name.clone();
    let name_col = first.col;
    let rest_start = first.end - 1;
    let lower = name.to_ascii_lowercase();
    let mut stmt = Stmt {
        name,
        col: name_col,
        ops: Vec::new(),
        rest: chars[rest_start.min(chars.len())..].to_vec(),
        rest_col: rest_start + 1,
        broken: false,
    };
    if lower == ".float" || lower == ".double" {
        line.stmt = Some(stmt);
        return (line, None);
    }
    if lower == ".file" {
        // The quoted name may hold comment characters: keep the raw rest of the line.
        stmt.rest = raw[rest_start.min(raw.len())..].to_vec();
        line.stmt = Some(stmt);
        return (line, None);
    }
    if let Some(e) = lex_err {
        stmt.broken = true;
        line.stmt = Some(stmt);
        return (line, Some(e));
    }
    if c.peek().is_some() {
        loop {
            match c.operand() {
                Ok(op) => stmt.ops.push(op),
                Err(e) => {
                    stmt.broken = true;
                    line.stmt = Some(stmt);
                    return (line, Some(e));
                }
            }
            if c.eat(&Tok::Comma) {
                continue;
            }
            if c.peek().is_some() {
                let e = c.err::<()>("`,` or the end of the statement").unwrap_err();
                stmt.broken = true;
                line.stmt = Some(stmt);
                return (line, Some(e));
            }
            break;
        }
    }
    line.stmt = Some(stmt);
    (line, None)
}
