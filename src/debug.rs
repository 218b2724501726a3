//! `lanejit debug FILE [run flags]`: an interactive session on the reference interpreter, in
//! the manner of Spike's `-d`. This module owns the session: its command set (breakpoints,
//! stepping, `until`, watchpoints on memory or tile bytes, typed views of registers, memory and
//! tile, disassembly, source lines), the reading of commands (line editing and history with
//! rustyline on a terminal, plain lines from a pipe so sessions can be scripted) and its
//! transcript on standard output.
//!
//! The program is loaded and its machine built exactly as `lanejit run` does ([`Setup`]), and
//! it runs one instruction at a time with `lanejit_interp::interp::step` (or `step_traced`
//! under `step`, whose lines are the commit log of `run --trace`). Names of pcs, traps and
//! instructions are `run --trace`'s ([`Places`]); typed values are the element types of
//! `--dump-mem`, `--show` and `; expect` lines. A bad command prints `error: ...` and the
//! session goes on.

use crate::cli::{CliError, ProgramArgs, Setup};
use crate::inspect::Places;
use clap::Args;
use lanejit_interp::interp::{self, Decoded};
use lanejit_interp::machine::{Exit, Machine};
use lanejit_interp::program::{AddrError, Space, SymKind};
use lanejit_interp::result::{RunResult, hex, hexdump, space_name, typed_rows};
use lanejit_interp::view::ElemType;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::io::{BufRead, IsTerminal as _, Write};

/// Flags of `lanejit debug`: the program and its machine, as `run` takes them.
#[derive(Args, Debug)]
pub struct DebugArgs {
    #[command(flatten)]
    prog: ProgramArgs,
}

/// The prompt (on a pipe, each command read is echoed after it, so a transcript reads like
/// the session).
pub const PROMPT: &str = "(lanejit) ";

/// The most bytes `mem`, `tile` and `watch` take at once (1 MiB).
pub const MAX_VIEW: u64 = 1 << 20;

/// Instructions `disasm` lists without a count.
const DISASM_DEFAULT: u64 = 8;

/// Why a command did nothing (the session prints it and goes on).
#[derive(Debug, thiserror::Error)]
pub enum CmdError {
    /// No such command.
    #[error("unknown command `{0}` (`help` lists the commands)")]
    Unknown(String),
    /// Wrong arguments; the text is the usage.
    #[error("usage: {0}")]
    Usage(&'static str),
    /// An address or pc that names nothing.
    #[error("{0}")]
    Addr(#[from] AddrError),
    /// A count or length that is not a number.
    #[error("`{0}` is not a number (decimal or 0x hex)")]
    Number(String),
    /// A type name that is not one.
    #[error("`{0}` is not a type (hex {list})", list = lanejit_interp::expect::type_list())]
    Type(String),
    /// A length that is not a whole number of elements.
    #[error("LEN {len} is not a multiple of {size} bytes for {ty}")]
    Partial {
        /// The length.
        len: u64,
        /// The type's size.
        size: usize,
        /// The type.
        ty: ElemType,
    },
    /// A pc that is not an instruction word of the program.
    #[error("{0:#x} is not the pc of an instruction word")]
    NotCode(u64),
    /// A range that is not all mapped (memory) or inside the tile.
    #[error("{space} {addr:#x}, {len} bytes: not entirely mapped")]
    Unmapped {
        /// `memory` or `tile`.
        space: &'static str,
        /// Start.
        addr: u64,
        /// Length.
        len: u64,
    },
    /// A length of 0 or above [`MAX_VIEW`].
    #[error("LEN must be from 1 to {MAX_VIEW} bytes")]
    Length,
    /// No breakpoint or watchpoint with this number.
    #[error("no breakpoint or watchpoint {0}")]
    NoSuchPoint(u64),
    /// The program ended; it runs no further until `restart`.
    #[error("the program has {0}; `restart` runs it again from the start")]
    Ended(&'static str),
    /// The machine could not be rebuilt by `restart`.
    #[error("{0}")]
    Restart(String),
}

/// A watchpoint: bytes of memory or tile and what they held when last looked at.
struct Watch {
    space: Space,
    addr: u64,
    len: u64,
    old: Vec<u8>,
}

/// What stopped a run of instructions.
enum Stop {
    /// The program exited (halted, trapped, limit).
    Exit(Exit),
    /// Watchpoint `id` saw its bytes change under the instruction at `pc`.
    Watch { id: u64, pc: u64, old: Vec<u8> },
    /// Breakpoint `id` is at the next pc.
    Break(u64),
    /// `until`'s pc, or the count of `step`, was reached.
    Done,
}

/// What to do after a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Go,
    Quit,
}

/// An interactive session on one program.
struct Session<'a> {
    setup: &'a Setup,
    decoded: &'a Decoded,
    places: Places<'a>,
    m: Machine,
    /// How the program ended, once it has.
    exit: Option<Exit>,
    next_id: u64,
    breaks: BTreeMap<u64, u64>,
    watches: BTreeMap<u64, Watch>,
    /// Source files other than the program's, read when `where` first needs them.
    sources: HashMap<String, Option<String>>,
}

/// Run `lanejit debug`.
pub fn cmd(args: &DebugArgs, order: &[(Space, usize)]) -> Result<i32, CliError> {
    if args.prog.reads_stdin() {
        return Err(CliError::BadFlag(
            "debug: the commands come from standard input, so the program cannot (give a file)"
                .into(),
        ));
    }
    let setup = Setup::new(&args.prog, order)?;
    let decoded = Decoded::new(&setup.program.code);
    let m = setup.machine()?;
    let mut s = Session {
        places: Places::new(&setup.program, &decoded),
        setup: &setup,
        decoded: &decoded,
        m,
        exit: None,
        next_id: 1,
        breaks: BTreeMap::new(),
        watches: BTreeMap::new(),
        sources: HashMap::new(),
    };
    s.group_count();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "lanejit debug: {}, VL {}, on the reference interpreter; `help` lists the commands",
        setup.name,
        s.m.vl()
    );
    s.location(&mut out);
    let _ = out.flush();
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        if let Ok(mut ed) = rustyline::DefaultEditor::new() {
            loop {
                match ed.readline(PROMPT) {
                    Ok(line) => {
                        if !line.trim().is_empty() {
                            let _ = ed.add_history_entry(line.as_str());
                        }
                        if s.run_line(&line, &mut out) == Flow::Quit {
                            break;
                        }
                    }
                    Err(rustyline::error::ReadlineError::Interrupted) => {}
                    Err(_) => break,
                }
                let _ = out.flush();
            }
            return Ok(0);
        }
    }
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let _ = writeln!(out, "{PROMPT}{}", line.trim_end());
        if s.run_line(&line, &mut out) == Flow::Quit {
            break;
        }
        let _ = out.flush();
    }
    let _ = out.flush();
    Ok(0)
}

/// The commands, for `help`.
const HELP: &str = "\
break PC|LABEL        stop before the instruction at PC (a pc, a code label, label+offset)
delete [N]            delete breakpoint or watchpoint N (all without N)
info                  list breakpoints and watchpoints
step [N]              run N instructions (1), printing each as `run --trace` does
continue              run to a breakpoint, a watchpoint, or the end of the program
until PC|LABEL        run until the next instruction is at PC (or something else stops it)
regs                  pc, retired count, mask, lc0, trip count and the scalar registers
vN [TYPE]             vector register N, its VL lanes as TYPE (hex: 64-bit hex, the default)
sN [TYPE]             scalar register N as TYPE (hex by default)
mask                  the execution mask and its active lanes
mem ADDR LEN [TYPE]   LEN bytes of memory at ADDR (a number, a .data label, label+offset)
tile ADDR LEN [TYPE]  LEN bytes of tile space at ADDR (a number or a .tiledata label)
watch [tile] ADDR LEN stop when any of these bytes of memory (or tile) changes
disasm [PC] [N]       N instructions (8) from PC (the current pc)
where                 the current pc with its source file:line and source text
restart               reset the machine and run from the start (points are kept)
help                  this list
quit                  end the session
TYPE is hex or one of u8 i8 u16 i16 u32 i32 u64 i64 f32 f64; numbers are decimal or 0x hex.
";

impl Session<'_> {
    /// Group 0 of a `.groups G` launch reads G with `S.NGROUPS` (it runs first, on fresh
    /// memory, in the reference order).
    fn group_count(&mut self) {
        self.m.regs.ngroups = u64::from(self.setup.program.groups.unwrap_or(1));
    }

    /// Run one command line; errors are printed and the session goes on.
    fn run_line(&mut self, line: &str, out: &mut dyn Write) -> Flow {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return Flow::Go;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        match self.command(&words, out) {
            Ok(flow) => flow,
            Err(e) => {
                let _ = writeln!(out, "error: {e}");
                Flow::Go
            }
        }
    }

    fn command(&mut self, w: &[&str], out: &mut dyn Write) -> Result<Flow, CmdError> {
        let name = w[0].to_ascii_lowercase();
        let args = &w[1..];
        match name.as_str() {
            "quit" | "q" | "exit" => return Ok(Flow::Quit),
            "help" | "h" | "?" => {
                let _ = write!(out, "{HELP}");
            }
            "break" | "b" => {
                let [at] = args else {
                    return Err(CmdError::Usage("break PC|LABEL"));
                };
                let pc = self.code_pc(at)?;
                let id = self.new_id();
                self.breaks.insert(id, pc);
                let _ = writeln!(out, "breakpoint {id} at {}", self.at(pc));
            }
            "delete" | "d" => match args {
                [] => {
                    self.breaks.clear();
                    self.watches.clear();
                    let _ = writeln!(out, "deleted every breakpoint and watchpoint");
                }
                [n] => {
                    let id = number(n)?;
                    if self.breaks.remove(&id).is_none() && self.watches.remove(&id).is_none() {
                        return Err(CmdError::NoSuchPoint(id));
                    }
                    let _ = writeln!(out, "deleted {id}");
                }
                _ => return Err(CmdError::Usage("delete [N]")),
            },
            "info" => self.info(out),
            "step" | "s" | "stepi" | "si" => {
                let n = match args {
                    [] => 1,
                    [n] => number(n)?,
                    _ => return Err(CmdError::Usage("step [N]")),
                };
                self.running()?;
                let stop = self.go(n, None, out);
                self.stopped(stop, out);
            }
            "continue" | "c" => {
                if !args.is_empty() {
                    return Err(CmdError::Usage("continue"));
                }
                self.running()?;
                let stop = self.go(u64::MAX, None, out);
                self.stopped(stop, out);
            }
            "until" | "u" => {
                let [at] = args else {
                    return Err(CmdError::Usage("until PC|LABEL"));
                };
                let pc = self.code_pc(at)?;
                self.running()?;
                let stop = self.go(u64::MAX, Some(pc), out);
                self.stopped(stop, out);
            }
            "regs" | "r" => {
                if !args.is_empty() {
                    return Err(CmdError::Usage("regs"));
                }
                self.regs(out);
            }
            "mask" => {
                let mask = self.m.regs.mask;
                let lanes: Vec<String> = (0..self.m.vl())
                    .filter(|&i| mask >> i & 1 != 0)
                    .map(|i| i.to_string())
                    .collect();
                let _ = writeln!(
                    out,
                    "mask = {}: {} of {} lanes active [{}]",
                    hex(mask),
                    lanes.len(),
                    self.m.vl(),
                    lanes.join(" ")
                );
            }
            "mem" | "x" | "tile" => {
                let space = if name == "tile" {
                    Space::Tile
                } else {
                    Space::Memory
                };
                let (addr, len, ty) = match args {
                    [a, l] => (a, l, None),
                    [a, l, t] => (a, l, Some(*t)),
                    _ if space == Space::Tile => {
                        return Err(CmdError::Usage("tile ADDR LEN [TYPE]"));
                    }
                    _ => return Err(CmdError::Usage("mem ADDR|LABEL LEN [TYPE]")),
                };
                let addr = self.setup.program.resolve_addr(addr, space)?;
                let len = length(len)?;
                let ty = ty.map(elem_type).transpose()?.flatten();
                if let Some(t) = ty
                    && len % t.size() as u64 != 0
                {
                    return Err(CmdError::Partial {
                        len,
                        size: t.size(),
                        ty: t,
                    });
                }
                let bytes = self.bytes(space, addr, len)?;
                let text = match ty {
                    Some(t) => typed_rows(addr, bytes, t),
                    None => hexdump(addr, bytes),
                };
                let _ = write!(out, "{text}");
            }
            "watch" | "w" => {
                let (space, addr, len) = match args {
                    [t, a, l] if t.eq_ignore_ascii_case("tile") => (Space::Tile, a, l),
                    [a, l] => (Space::Memory, a, l),
                    _ => return Err(CmdError::Usage("watch [tile] ADDR LEN")),
                };
                let addr = self.setup.program.resolve_addr(addr, space)?;
                let len = length(len)?;
                let old = self.bytes(space, addr, len)?.to_vec();
                let id = self.new_id();
                let _ = writeln!(
                    out,
                    "watchpoint {id}: {} {}, {len} bytes",
                    space_name(space),
                    hex(addr)
                );
                self.watches.insert(
                    id,
                    Watch {
                        space,
                        addr,
                        len,
                        old,
                    },
                );
            }
            "disasm" | "l" => {
                let (pc, n) = match args {
                    [] => (self.m.pc, DISASM_DEFAULT),
                    [p] => (self.code_pc(p)?, DISASM_DEFAULT),
                    [p, n] => (self.code_pc(p)?, number(n)?),
                    _ => return Err(CmdError::Usage("disasm [PC] [N]")),
                };
                self.disasm(pc, n, out);
            }
            "where" | "bt" => {
                if !args.is_empty() {
                    return Err(CmdError::Usage("where"));
                }
                self.where_(out);
            }
            "restart" => {
                if !args.is_empty() {
                    return Err(CmdError::Usage("restart"));
                }
                self.m = self
                    .setup
                    .machine()
                    .map_err(|e| CmdError::Restart(e.to_string()))?;
                self.group_count();
                self.exit = None;
                let ids: Vec<u64> = self.watches.keys().copied().collect();
                for id in ids {
                    let w = &self.watches[&id];
                    let now = self.bytes(w.space, w.addr, w.len).map(<[u8]>::to_vec);
                    if let (Ok(now), Some(w)) = (now, self.watches.get_mut(&id)) {
                        w.old = now;
                    }
                }
                self.location(out);
            }
            reg => {
                let Some((vector, r)) = register(reg) else {
                    return Err(CmdError::Unknown(w[0].to_string()));
                };
                let ty = match args {
                    [] => None,
                    [t] => elem_type(t)?,
                    _ => return Err(CmdError::Usage("vN [TYPE] or sN [TYPE]")),
                };
                let lanes: &[u64] = if vector {
                    &self.m.regs.v[r][..self.m.vl()]
                } else {
                    std::slice::from_ref(&self.m.regs.s[r])
                };
                let name = format!("{}{r}", if vector { 'v' } else { 's' });
                let _ = match ty {
                    None if vector => {
                        let v: Vec<String> = lanes.iter().map(|&x| hex(x)).collect();
                        writeln!(out, "{name} = [{}]", v.join(", "))
                    }
                    None => writeln!(out, "{name} = {}", hex(lanes[0])),
                    // As `run --show` prints it.
                    Some(t) => {
                        let v: Vec<String> =
                            lanes.iter().map(|&x| t.of_lane(x).to_string()).collect();
                        writeln!(out, "{name} as {t}: [{}]", v.join(", "))
                    }
                };
            }
        }
        Ok(Flow::Go)
    }

    fn new_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// An error if the program has ended.
    fn running(&self) -> Result<(), CmdError> {
        match self.exit {
            None => Ok(()),
            Some(Exit::Halted) => Err(CmdError::Ended("halted")),
            Some(Exit::Trapped(_)) => Err(CmdError::Ended("trapped")),
            Some(Exit::Limit) => Err(CmdError::Ended("reached its instruction limit")),
        }
    }

    /// The pc `text` names (a number, a code label, label+offset), if it is an instruction
    /// word's.
    fn code_pc(&self, text: &str) -> Result<u64, CmdError> {
        let pc = self.setup.program.resolve_value(text, SymKind::Code)?;
        if pc % 8 == 0 && pc / 8 < self.decoded.len() as u64 {
            Ok(pc)
        } else {
            Err(CmdError::NotCode(pc))
        }
    }

    /// `len` bytes of `space` at `addr`.
    fn bytes(&self, space: Space, addr: u64, len: u64) -> Result<&[u8], CmdError> {
        let b = match space {
            Space::Memory => self.m.mem.bytes(addr, len),
            Space::Tile => self.m.tile.bytes(addr, len),
        };
        b.ok_or(CmdError::Unmapped {
            space: space_name(space),
            addr,
            len,
        })
    }

    /// `0x0010 <loop> (k.s:7)`.
    fn at(&self, pc: u64) -> String {
        format!("{}{}", self.places.pc(pc), self.places.source(pc))
    }

    /// The line naming the next instruction: `=> 0x0010 <loop>: V.ADD ... (k.s:7)`.
    fn location(&self, out: &mut dyn Write) {
        let pc = self.m.pc;
        let _ = writeln!(
            out,
            "=> {}: {}{}",
            self.places.pc(pc),
            self.places.inst(pc),
            self.places.source(pc)
        );
    }

    /// Run up to `n` instructions (printing each under `step`, that is when `n` is finite and
    /// there is no `until` pc), stopping early at an exit, a changed watchpoint, a breakpoint
    /// at the next pc, or `until`'s pc.
    fn go(&mut self, n: u64, until: Option<u64>, out: &mut dyn Write) -> Stop {
        let traced = n != u64::MAX && until.is_none();
        let mut seq = self.m.retired;
        for _ in 0..n {
            let pc = self.m.pc;
            let exit = if traced {
                let places = &self.places;
                interp::step_traced(&mut self.m, self.decoded, &mut |ev| {
                    seq += 1;
                    let _ = writeln!(out, "{}", places.event(seq, ev));
                })
            } else {
                interp::step(&mut self.m, self.decoded)
            };
            if let Some(e) = exit {
                return Stop::Exit(e);
            }
            for (&id, w) in &mut self.watches {
                let now = match w.space {
                    Space::Memory => self.m.mem.bytes(w.addr, w.len),
                    Space::Tile => self.m.tile.bytes(w.addr, w.len),
                };
                if let Some(now) = now
                    && now != w.old.as_slice()
                {
                    let old = std::mem::replace(&mut w.old, now.to_vec());
                    return Stop::Watch { id, pc, old };
                }
            }
            if until == Some(self.m.pc) {
                return Stop::Done;
            }
            if let Some((&id, _)) = self.breaks.iter().find(|&(_, &b)| b == self.m.pc) {
                return Stop::Break(id);
            }
        }
        Stop::Done
    }

    /// Report why a run stopped and where it is now.
    fn stopped(&mut self, stop: Stop, out: &mut dyn Write) {
        match stop {
            Stop::Exit(exit) => {
                self.exit = Some(exit);
                // As `run` prints the end of a run.
                let result = RunResult::capture(&self.m, exit, &self.setup.dumps);
                let _ = write!(out, "{}", result.summary());
                if let Exit::Trapped(t) = &exit {
                    let _ = writeln!(out, "{}", self.places.trap(t));
                }
                return;
            }
            Stop::Watch { id, pc, old } => {
                let w = &self.watches[&id];
                let _ = writeln!(
                    out,
                    "watchpoint {id}: {} {}, {} bytes, changed by {}: {}",
                    space_name(w.space),
                    hex(w.addr),
                    w.len,
                    self.at(pc),
                    self.places.inst(pc)
                );
                let _ = writeln!(out, "  old: {}", spaced_hex(&old));
                let _ = writeln!(out, "  new: {}", spaced_hex(&w.old));
            }
            Stop::Break(id) => {
                let _ = writeln!(out, "breakpoint {id} at {}", self.at(self.m.pc));
            }
            Stop::Done => {}
        }
        self.location(out);
    }

    fn info(&self, out: &mut dyn Write) {
        if self.breaks.is_empty() && self.watches.is_empty() {
            let _ = writeln!(out, "no breakpoints or watchpoints");
        }
        for (id, &pc) in &self.breaks {
            let _ = writeln!(out, "breakpoint {id} at {}", self.at(pc));
        }
        for (id, w) in &self.watches {
            let _ = writeln!(
                out,
                "watchpoint {id}: {} {}, {} bytes",
                space_name(w.space),
                hex(w.addr),
                w.len
            );
        }
    }

    fn regs(&self, out: &mut dyn Write) {
        let r = &self.m.regs;
        let mut s = format!(
            "pc {}  retired {}\nmask {}  lc0 {}  trip {}",
            self.at(self.m.pc),
            self.m.retired,
            hex(r.mask),
            hex(r.lc0base),
            r.trip
        );
        if r.ngroups > 1 {
            let _ = write!(s, "  group {} of {}", r.gid, r.ngroups);
        }
        for (k, regs) in r.s.chunks(4).enumerate() {
            let cols: Vec<String> = regs
                .iter()
                .enumerate()
                .map(|(j, v)| format!("{:<4}{:<18}", format!("s{}", 4 * k + j), hex(*v)))
                .collect();
            s.push('\n');
            s.push_str(cols.join("  ").trim_end());
        }
        let _ = writeln!(out, "{s}");
    }

    fn disasm(&self, mut pc: u64, n: u64, out: &mut dyn Write) {
        for _ in 0..n {
            let Some(index) = usize::try_from(pc / 8)
                .ok()
                .filter(|&i| i < self.decoded.len())
            else {
                break;
            };
            let mark = if pc == self.m.pc && self.exit.is_none() {
                "=>"
            } else {
                "  "
            };
            let bp = if self.breaks.values().any(|&b| b == pc) {
                '*'
            } else {
                ' '
            };
            let _ = writeln!(
                out,
                "{mark}{bp}{}: {}{}",
                self.places.pc(pc),
                self.places.inst(pc),
                self.places.source(pc)
            );
            match self.decoded.next_index(index) {
                Some(next) => pc = next as u64 * 8,
                None => break,
            }
        }
    }

    fn where_(&mut self, out: &mut dyn Write) {
        let pc = self.m.pc;
        let Some((file, line)) = self.setup.program.lines.at(pc) else {
            let _ = writeln!(out, "{} (no source line known)", self.places.pc(pc));
            return;
        };
        let _ = writeln!(out, "{} at {file}:{line}", self.places.pc(pc));
        let text = match &self.setup.source {
            Some((src, _)) if file == self.setup.name => Some(src.as_str()),
            _ => self
                .sources
                .entry(file.to_string())
                .or_insert_with(|| crate::cli::read_source(std::path::Path::new(file)).ok())
                .as_deref(),
        };
        if let Some(t) = text.and_then(|t| t.lines().nth(line as usize - 1)) {
            let _ = writeln!(out, "{line:>6} | {}", t.trim());
        }
    }
}

/// `00 11 22 ...`.
fn spaced_hex(b: &[u8]) -> String {
    let v: Vec<String> = b.iter().map(|x| format!("{x:02x}")).collect();
    v.join(" ")
}

/// A count or number (decimal or 0x hex).
fn number(s: &str) -> Result<u64, CmdError> {
    crate::cli::parse_u64(s).map_err(|_| CmdError::Number(s.to_string()))
}

/// A LEN of `mem`, `tile` or `watch`: 1..=[`MAX_VIEW`].
fn length(s: &str) -> Result<u64, CmdError> {
    let n = number(s)?;
    if (1..=MAX_VIEW).contains(&n) {
        Ok(n)
    } else {
        Err(CmdError::Length)
    }
}

/// A TYPE: `hex` (`None`) or an element type.
fn elem_type(s: &str) -> Result<Option<ElemType>, CmdError> {
    if s.eq_ignore_ascii_case("hex") {
        return Ok(None);
    }
    ElemType::parse(s)
        .map(Some)
        .ok_or_else(|| CmdError::Type(s.to_string()))
}

/// `v3` or `s17` as (vector, number).
fn register(name: &str) -> Option<(bool, usize)> {
    let (vector, num) = match name.split_at_checked(1)? {
        ("v", n) => (true, n),
        ("s", n) => (false, n),
        _ => return None,
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    num.parse::<usize>()
        .ok()
        .filter(|&r| r < 32)
        .map(|r| (vector, r))
}
