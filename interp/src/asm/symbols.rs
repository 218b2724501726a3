//! Labels and `.equ` names, and the evaluation of expressions over them, in linear time and
//! without recursion (a chain of definitions may be any depth, in any order).
//!
//! - During layout ([`Ctx::Layout`]) only what is already defined counts. A `.equ` gets its
//!   value as soon as every name it uses is known: when it is defined, or later when the last
//!   of those names is defined (each definition wakes the `.equ`s waiting for it), so every
//!   definition is evaluated once, from values already known, and keeps its result.
//! - A name that is still unknown when layout needs it is explained by a depth-first walk
//!   with an explicit stack: a name not defined yet (`NotConstant`), or a cycle, reported with
//!   its members. Those answers hold until the next definition and are kept until then.
//!   (So only a wrong program, alternating definitions with failing uses of one long
//!   unresolved chain, can make layout walk that chain once per use.)
//! - In resolution ([`Ctx::Full`]) every name is defined; the same walk evaluates whatever is
//!   left (forward references) and keeps every result, value or error, so each `.equ` is
//!   evaluated once.

use super::AsmErrorKind;
use super::parser::{Atom, Expr};
use crate::program::SymKind;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

type EResult<T> = Result<T, (usize, AsmErrorKind)>;
/// An error at a column.
type ColError = (usize, AsmErrorKind);

/// Evaluation context: during layout only what is already defined counts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ctx {
    Layout,
    Full,
}

/// A `.equ` definition.
#[derive(Debug)]
pub(crate) struct Equ {
    pub expr: Expr,
    pub line: usize,
    /// The result of its expression once it is final: a value, or an error that no later
    /// definition can change (boxed: errors are rare, values many).
    result: RefCell<Option<Result<i128, Box<ColError>>>>,
}

/// The members of a cycle of `.equ` definitions, each defined in terms of the next and the
/// last in terms of the first. Shared, so that reporting a long cycle at each of its members
/// does not copy it; shown with at most [`EquCycle::SHOWN`] names.
#[derive(Clone, Debug)]
pub struct EquCycle {
    names: Arc<[String]>,
    /// Index of the member shown first.
    start: usize,
}

impl EquCycle {
    /// The most names a message lists.
    pub const SHOWN: usize = 8;

    /// The members, starting with the one shown first.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        let n = self.names.len();
        (0..n).map(move |k| self.names[(self.start + k) % n].as_str())
    }

    /// The same cycle shown from `name`, if it is a member.
    fn seen_from(&self, name: &str) -> EquCycle {
        let start = self
            .names
            .iter()
            .position(|n| n == name)
            .unwrap_or(self.start);
        EquCycle {
            names: self.names.clone(),
            start,
        }
    }

    fn contains(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }
}

impl From<Vec<String>> for EquCycle {
    fn from(names: Vec<String>) -> EquCycle {
        EquCycle {
            names: names.into(),
            start: 0,
        }
    }
}

impl PartialEq for EquCycle {
    fn eq(&self, other: &EquCycle) -> bool {
        self.names.len() == other.names.len() && self.names().eq(other.names())
    }
}

impl Eq for EquCycle {}

impl fmt::Display for EquCycle {
    /// `A -> B -> A`, or `A -> B -> ... (N names) -> A` for a long cycle.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, n) in self.names().enumerate() {
            if k == Self::SHOWN {
                write!(f, "... ({} names) -> ", self.names.len())?;
                break;
            }
            write!(f, "{n} -> ")?;
        }
        write!(f, "{}", self.names().next().unwrap_or(""))
    }
}

/// The text of [`AsmErrorKind::CircularEqu`].
pub(crate) fn circular_text(name: &str, cycle: &EquCycle) -> String {
    if cycle.contains(name) {
        format!("`.equ {name}` refers to itself: {cycle}")
    } else {
        format!("`.equ {name}` depends on a cycle: {cycle}")
    }
}

/// Labels and `.equ` names.
#[derive(Debug, Default)]
pub(crate) struct Symbols {
    pub labels: HashMap<String, (SymKind, u64, usize)>,
    pub equs: HashMap<String, Equ>,
    /// Layout: why a `.equ` is not known yet, valid while no symbol is defined (the epoch is
    /// the number of symbols defined when it was found).
    unknown: RefCell<HashMap<String, (usize, ColError)>>,
    /// Layout: the `.equ`s waiting for a name to become known, by that name.
    waiting: HashMap<String, Vec<String>>,
    /// Layout: how many distinct names each waiting `.equ` still waits for.
    missing: HashMap<String, usize>,
}

/// One `.equ` being evaluated by [`Symbols::evaluate`].
#[derive(Clone, Copy)]
struct Frame<'a> {
    name: &'a str,
    /// The next term of its expression.
    term: usize,
    /// The sum of the terms before it.
    total: i128,
}

/// `total + (neg ? -v : v)`, within the evaluator's range (|x| <= 2^100).
fn add(total: i128, neg: bool, v: i128, col: usize) -> EResult<i128> {
    let v = if neg { -v } else { v };
    total
        .checked_add(v)
        .filter(|v| v.unsigned_abs() <= 1u128 << 100)
        .ok_or((col, AsmErrorKind::Overflow))
}

/// The result of `.equ name`'s expression as seen where `name` is used (at `col`): an error
/// about something `name` depends on is reported as being about `name`, at its use.
fn as_used(name: &str, col: usize, r: EResult<i128>) -> EResult<i128> {
    r.map_err(|(c, k)| match k {
        AsmErrorKind::NotConstant(_) => (col, AsmErrorKind::NotConstant(name.to_string())),
        AsmErrorKind::CircularEqu { cycle, .. } => (
            col,
            AsmErrorKind::CircularEqu {
                name: name.to_string(),
                cycle: cycle.seen_from(name),
            },
        ),
        other => (c, other),
    })
}

impl Symbols {
    /// Whether `.equ name` has its final result.
    fn is_final(&self, name: &str) -> bool {
        self.equs
            .get(name)
            .is_some_and(|e| e.result.borrow().is_some())
    }

    fn epoch(&self) -> usize {
        self.labels.len() + self.equs.len()
    }

    /// The line where `name` is defined, if it is.
    pub fn defined_line(&self, name: &str) -> Option<usize> {
        self.labels
            .get(name)
            .map(|l| l.2)
            .or_else(|| self.equs.get(name).map(|e| e.line))
    }

    /// Define a label (its name already checked) and evaluate the `.equ`s it completes.
    pub fn define_label(&mut self, name: &str, kind: SymKind, value: u64, line: usize) {
        self.labels.insert(name.to_string(), (kind, value, line));
        self.known(name);
    }

    /// Define a `.equ` (its name already checked); evaluate it now if every name it uses is
    /// known, else when the last of them becomes known.
    pub fn define_equ(&mut self, name: &str, expr: Expr, line: usize) {
        let mut deps: Vec<&str> = Vec::new();
        for t in &expr.terms {
            if let Atom::Name(n) = &t.atom
                && !self.labels.contains_key(n)
                && !self.is_final(n)
                && !deps.contains(&n.as_str())
            {
                deps.push(n);
            }
        }
        let deps: Vec<String> = deps.into_iter().map(str::to_string).collect();
        self.equs.insert(
            name.to_string(),
            Equ {
                expr,
                line,
                result: RefCell::new(None),
            },
        );
        if deps.is_empty() {
            let _ = self.evaluate(name, Ctx::Layout);
            self.known(name);
            return;
        }
        self.missing.insert(name.to_string(), deps.len());
        for d in deps {
            self.waiting.entry(d).or_default().push(name.to_string());
        }
    }

    /// `name` is known now: evaluate every `.equ` that was waiting only for it, and so on.
    fn known(&mut self, name: &str) {
        let mut ready = vec![name.to_string()];
        while let Some(n) = ready.pop() {
            for w in self.waiting.remove(&n).unwrap_or_default() {
                let Some(left) = self.missing.get_mut(&w) else {
                    continue;
                };
                *left -= 1;
                if *left == 0 {
                    self.missing.remove(&w);
                    let _ = self.evaluate(&w, Ctx::Layout);
                    ready.push(w);
                }
            }
        }
    }

    /// Evaluate `.equ name` fully (every name defined), for checking every definition once.
    pub fn check_equ(&self, name: &str, col: usize) -> EResult<i128> {
        self.name_value(name, col, Ctx::Full)
    }

    /// The value of an expression (i128, checked).
    pub fn eval(&self, e: &Expr, ctx: Ctx) -> EResult<i128> {
        let mut total: i128 = 0;
        for t in &e.terms {
            let v = match &t.atom {
                Atom::Num(n) => *n as i128,
                Atom::Name(name) => self.name_value(name, t.col, ctx)?,
            };
            total = add(total, t.neg, v, t.col)?;
        }
        Ok(total)
    }

    /// The value of `name` used at `col`.
    fn name_value(&self, name: &str, col: usize, ctx: Ctx) -> EResult<i128> {
        if let Some(r) = self.lookup(name, col, ctx) {
            return r;
        }
        if self.equs.contains_key(name) {
            return as_used(name, col, self.evaluate(name, ctx));
        }
        Err((col, Self::undefined(name, ctx)))
    }

    fn undefined(name: &str, ctx: Ctx) -> AsmErrorKind {
        match ctx {
            Ctx::Layout => AsmErrorKind::NotConstant(name.to_string()),
            Ctx::Full => AsmErrorKind::UndefinedSymbol(name.to_string()),
        }
    }

    /// What is already known about `name` used at `col`: a label's value, or a `.equ`'s kept
    /// result.
    fn lookup(&self, name: &str, col: usize, ctx: Ctx) -> Option<EResult<i128>> {
        if let Some(&(_, v, _)) = self.labels.get(name) {
            return Some(Ok(v as i128));
        }
        if let Some(equ) = self.equs.get(name)
            && let Some(r) = &*equ.result.borrow()
        {
            return Some(as_used(name, col, r.clone().map_err(|e| *e)));
        }
        if ctx == Ctx::Layout
            && let Some((epoch, e)) = self.unknown.borrow().get(name)
            && *epoch == self.epoch()
        {
            return Some(as_used(name, col, Err(e.clone())));
        }
        None
    }

    /// Keep the result of `.equ name`'s expression: for good when it is final (a value, any
    /// error in resolution, an overflow), else until the next definition.
    fn keep(&self, name: &str, ctx: Ctx, r: &EResult<i128>) {
        match r {
            Err(e) if ctx == Ctx::Layout && e.1 != AsmErrorKind::Overflow => {
                self.unknown
                    .borrow_mut()
                    .insert(name.to_string(), (self.epoch(), e.clone()));
            }
            _ => {
                if let Some(equ) = self.equs.get(name) {
                    equ.result.replace(Some(r.clone().map_err(Box::new)));
                }
            }
        }
    }

    /// The result of `.equ root`'s expression: a depth-first walk over the definitions it
    /// uses with an explicit stack, keeping the result of every definition it finishes. A
    /// definition met again while still on the stack closes a cycle.
    fn evaluate(&self, root: &str, ctx: Ctx) -> EResult<i128> {
        let Some((key, _)) = self.equs.get_key_value(root) else {
            return Err((0, Self::undefined(root, ctx)));
        };
        let mut stack = vec![Frame {
            name: key,
            term: 0,
            total: 0,
        }];
        let mut on_stack: HashMap<&str, usize> = HashMap::from([(key.as_str(), 0)]);
        // The result of the frame on top once it is finished.
        let mut finished: Option<EResult<i128>> = None;
        loop {
            if let Some(r) = finished.take() {
                // The top frame is finished: keep its result, then hand it to its user.
                let done = stack.pop().map_or(root, |f| f.name);
                on_stack.remove(done);
                self.keep(done, ctx, &r);
                let Some(user) = stack.last_mut() else {
                    return r;
                };
                let t = &self.equs[user.name].expr.terms[user.term];
                match as_used(done, t.col, r).and_then(|v| add(user.total, t.neg, v, t.col)) {
                    Ok(total) => {
                        user.total = total;
                        user.term += 1;
                    }
                    Err(e) => finished = Some(Err(e)),
                }
                continue;
            }
            let Some(&Frame { name, term, total }) = stack.last() else {
                return Err((0, Self::undefined(root, ctx)));
            };
            let Some(t) = self.equs[name].expr.terms.get(term) else {
                finished = Some(Ok(total));
                continue;
            };
            let v = match &t.atom {
                Atom::Num(n) => Ok(*n as i128),
                Atom::Name(n) => match self.lookup(n, t.col, ctx) {
                    Some(r) => r,
                    None => match self.equs.get_key_value(n.as_str()) {
                        Some((k, _)) => match on_stack.get(k.as_str()) {
                            Some(&at) => {
                                let members: Vec<String> =
                                    stack[at..].iter().map(|f| f.name.to_string()).collect();
                                Err((
                                    t.col,
                                    AsmErrorKind::CircularEqu {
                                        name: n.clone(),
                                        cycle: members.into(),
                                    },
                                ))
                            }
                            None => {
                                on_stack.insert(k, stack.len());
                                stack.push(Frame {
                                    name: k,
                                    term: 0,
                                    total: 0,
                                });
                                continue;
                            }
                        },
                        None => Err((t.col, Self::undefined(n, ctx))),
                    },
                },
            };
            match v.and_then(|v| add(total, t.neg, v, t.col)) {
                Ok(total) => {
                    if let Some(top) = stack.last_mut() {
                        top.total = total;
                        top.term += 1;
                    }
                }
                Err(e) => finished = Some(Err(e)),
            }
        }
    }
}
