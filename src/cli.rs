//! Command-line front end: argument parsing (clap), loading programs (assembly source,
//! container or stdin) with their flags ([`Setup`]), the `run`, `asm` and `disasm`
//! subcommands, dispatch to `compare`, `debug`, `fuzz` (`fuzz_cli`) and `bench` (`userbench`
//! for user kernels), and the mapping of every failure to exit status 2 with a message (`diag`). Everything semantic lives in `lanejit-interp` and
//! the tiered VM; this module only wires them to files and flags.
//!
//! Input is read with bounds, from regular files, pipes and devices alike: a program file is
//! refused once it passes [`MAX_SOURCE_BYTES`] (assembly source) or [`MAX_CONTAINER_BYTES`]
//! (a container), and a `--load` file once it passes the mapped memory from its address, so
//! no input holds more than its limit (plus one byte) in memory. Output files (`--save`) are
//! opened before the program runs; a write that fails after the run anyway is reported after
//! the result, with exit status [`EXIT_OUTPUT_FAILED`].

use crate::diag;
use crate::inspect::{self, DumpSpec, ShowSpec};
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use lanejit::launch::{LaunchOptions, MAX_THREADS, launch};
use lanejit::regions;
use lanejit::vm::{self, Engine, VmOptions};
use lanejit::{EXIT_CHECK_FAILED, EXIT_OUTPUT_FAILED};
use lanejit_interp::asm::{SourceMap, assemble, assemble_mapped};
use lanejit_interp::container;
use lanejit_interp::disasm::disassemble;
use lanejit_interp::interp::{self, Decoded};
use lanejit_interp::machine::{Config, Machine, valid_vl};
use lanejit_interp::program::{MAX_GROUPS, MAX_MEM_LIMIT, PAGE_SIZE, Program, Space};
use lanejit_interp::result::{DumpRequest, RunResult};
use lanejit_jit::observe::{self, ObserveOptions, Observer};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

/// The largest assembly source file lanejit reads (64 MiB).
pub const MAX_SOURCE_BYTES: u64 = 64 << 20;
/// The largest container file lanejit reads (512 MiB: room for the assembler's largest data,
/// [`lanejit_interp::asm::MAX_DATA_BYTES`], and its largest code).
pub const MAX_CONTAINER_BYTES: u64 = 512 << 20;

/// lanejit: a JIT-compiling emulator for a lane-parallel vector ISA.
#[derive(Parser, Debug)]
#[command(name = "lanejit", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Run a program (assembly source or binary container) and print its result.
    Run(RunArgs),
    /// Assemble a source file into a binary container (with its line table: traps and
    /// traces of the container name the source's `file:line`).
    Asm {
        /// Assembly source.
        file: PathBuf,
        /// Output container.
        #[arg(short = 'o', long = "output")]
        out: PathBuf,
        /// Leave the line table out (a version 1 or 2 container, as before line tables).
        #[arg(long)]
        no_lines: bool,
    },
    /// Print a binary container (or a source file, after assembling it) as canonical assembly.
    Disasm {
        /// Container (or source) to disassemble.
        file: PathBuf,
    },
    /// Run a program (or a launch of many groups) on several engines, time each, and show
    /// where they first differ (exit 1), or that they all agree (exit 0).
    Compare(crate::compare::CompareArgs),
    /// Debug a program on the reference interpreter: breakpoints, stepping, watchpoints,
    /// typed registers and memory, disassembly and source lines (commands on standard input;
    /// `help` lists them).
    Debug(crate::debug::DebugArgs),
    /// Differential fuzzing: run generated programs on several engines and compare results.
    Fuzz(crate::fuzz_cli::FuzzArgs),
    /// Benchmarks: every bench kernel on interp, jit, tiered and native, side by side.
    Bench(lanejit::bench::cli::BenchArgs),
}

/// The program and the machine it runs on: shared by `run`, `compare` and `debug`.
#[derive(Args, Debug, Clone)]
pub struct ProgramArgs {
    /// Program: assembly source, or a container written by `lanejit asm`; `-` reads standard
    /// input.
    file: PathBuf,
    /// Lanes per group (power of two, 1..64); overrides the program's `.vl`.
    #[arg(long, value_parser = parse_u64)]
    vl: Option<u64>,
    /// Trap `misaligned` on the width-scaled forms.
    #[arg(long)]
    strict_align: bool,
    /// Stop with status `limit` once N instructions have retired.
    #[arg(long, value_name = "N", value_parser = parse_u64)]
    max_instructions: Option<u64>,
    /// Memory limit in bytes (multiple of 4096, at most 2^40; default 4 GiB).
    #[arg(long, value_name = "BYTES", value_parser = parse_u64)]
    mem_limit: Option<u64>,
    /// Override an `.equ` of the source (repeatable): `--set N=1024`, `--set A=f32(2.5)`.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
    set: Vec<(String, String)>,
    /// Dump memory after the run (repeatable). ADDR is a number, a `.data` label or a label
    /// with an offset (`out+16`); LEN is in bytes; TYPE (u8 i8 u16 i16 u32 i32 u64 i64 f32
    /// f64) shows typed values instead of a hexdump.
    #[arg(long = "dump-mem", value_name = "ADDR:LEN[:TYPE]", value_parser = inspect::parse_dump_spec)]
    dump_mem: Vec<DumpSpec>,
    /// Dump tile space after the run (repeatable); ADDR may be a `.tiledata` label.
    #[arg(long = "dump-tile", value_name = "ADDR:LEN[:TYPE]", value_parser = inspect::parse_dump_spec)]
    dump_tile: Vec<DumpSpec>,
    /// Copy a file's bytes into mapped memory before the run (repeatable).
    #[arg(long = "load", value_name = "ADDR:FILE", value_parser = parse_load)]
    load: Vec<(u64, PathBuf)>,
    /// Region entries before the tiered engine compiles a region.
    #[arg(long, value_name = "N", default_value = "16", value_parser = parse_u32)]
    pub jit_threshold: u32,
    /// Keep compiled regions in this directory across runs (created if missing): a later
    /// run of the same program under the same configuration, by this build of lanejit on
    /// this host, takes them from there instead of compiling. Default: the
    /// `LANEJIT_CODE_CACHE` environment variable, else none.
    #[arg(long, value_name = "DIR")]
    code_cache: Option<PathBuf>,
}

impl ProgramArgs {
    /// The VM options these flags select (the code cache opened).
    pub fn vm_options(&self) -> Result<VmOptions, CliError> {
        let dir = match &self.code_cache {
            Some(d) => Some((d.clone(), "--code-cache")),
            None => std::env::var_os("LANEJIT_CODE_CACHE")
                .filter(|v| !v.is_empty())
                .map(|v| (PathBuf::from(v), "LANEJIT_CODE_CACHE")),
        };
        let code_cache = match dir {
            None => None,
            Some((d, from)) => Some(std::sync::Arc::new(
                lanejit_jit::diskcache::DiskCache::open(&d).map_err(|e| {
                    CliError::BadFlag(format!("{from}: cannot use {}: {e}", d.display()))
                })?,
            )),
        };
        Ok(VmOptions {
            jit_threshold: self.jit_threshold,
            code_cache,
            ..VmOptions::default()
        })
    }
}

/// How many groups to launch and on how many threads: shared by `run` and `compare`.
#[derive(Args, Debug, Clone, Copy)]
pub struct LaunchArgs {
    /// Launch G groups over the shared memory, each with its own registers and tile
    /// (1..2^24); overrides the program's `.groups`.
    #[arg(long, value_name = "G", value_parser = parse_u32)]
    groups: Option<u32>,
    /// Worker threads for the groups (default: the host's available parallelism; 1 runs
    /// them in reference order).
    #[arg(long, value_name = "N", value_parser = parse_u64_usize)]
    threads: Option<usize>,
}

impl LaunchArgs {
    /// The group count (the flag, else the program's `.groups`, else 1) and the thread count
    /// (the flag, else the host's parallelism), each checked against its range.
    pub fn resolve(&self, program: &Program) -> Result<(u32, usize), CliError> {
        let groups = self.groups.or(program.groups).unwrap_or(1);
        if !(1..=MAX_GROUPS).contains(&groups) {
            return Err(CliError::BadFlag(format!(
                "--groups {groups}: the group count must be from 1 to 2^24"
            )));
        }
        let threads = match self.threads {
            Some(t) if !(1..=MAX_THREADS).contains(&t) => {
                return Err(CliError::BadFlag(format!(
                    "--threads {t}: from 1 to {MAX_THREADS} threads"
                )));
            }
            Some(t) => t,
            None => std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS)),
        };
        Ok((groups, threads))
    }
}

#[derive(Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    prog: ProgramArgs,
    /// Execution engine.
    #[arg(long, value_enum, default_value = "tiered")]
    engine: Engine,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
    /// Show a register's lanes typed after the run (repeatable): `v3:f32`, `s5:i64`.
    #[arg(long = "show", value_name = "REG[:TYPE]", value_parser = inspect::parse_show_spec)]
    show: Vec<ShowSpec>,
    /// Check the source's `; expect` lines against the result: exit 0 when all hold,
    /// 5 when one fails (each failure reported on stderr).
    #[arg(long)]
    check: bool,
    /// Write memory to a file after the run (repeatable).
    #[arg(long = "save", value_name = "ADDR:LEN:FILE", value_parser = parse_save)]
    save: Vec<(u64, u64, PathBuf)>,
    /// Print a commit log to stderr: per retired instruction its number, pc with label,
    /// mask, disassembly and changed registers, each active lane's memory access, and a trap
    /// line with the source line (runs on the reference interpreter).
    #[arg(long)]
    trace: bool,
    #[command(flatten)]
    launch: LaunchArgs,
    /// Run the groups in reference order on the interpreter and trap `data_race` at the
    /// first access that races with an earlier group's.
    #[arg(long)]
    check_races: bool,
    /// Write a Chrome trace (JSON, for Perfetto or chrome://tracing) of the chunks of groups
    /// each thread ran, and of every region compiled, on the track of the thread that compiled
    /// it (its first code, a loop's baseline and optimised code, or a code-cache read), with
    /// the moments a tiered run asked for them.
    #[arg(long, value_name = "FILE")]
    timeline: Option<PathBuf>,
    /// Trace from the Nth retired instruction on (1-based); implies --trace.
    #[arg(long, value_name = "N", value_parser = parse_u64)]
    trace_from: Option<u64>,
    /// Trace at most N instructions; implies --trace.
    #[arg(long, value_name = "N", value_parser = parse_u64)]
    trace_count: Option<u64>,
    /// Trace only the instruction at ADDR (a pc, a code label, or label+offset); implies
    /// --trace.
    #[arg(long, value_name = "ADDR|LABEL")]
    trace_pc: Option<String>,
    /// Write the trace to FILE instead of stderr; implies --trace.
    #[arg(long, value_name = "FILE")]
    trace_file: Option<PathBuf>,
    /// Profiler symbols for compiled code (repeatable): `jitdump` writes `jit-<pid>.dump` in
    /// `$JITDUMPDIR` or the current directory for `perf record -k 1` + `perf inject --jit`;
    /// `perfmap` appends to `/tmp/perf-<pid>.map`.
    #[arg(long, value_enum, value_name = "KIND")]
    profile: Vec<ProfileKind>,
    /// Report every compiled region after the run: pcs and label, kind, form, entries,
    /// instructions retired, compile time, code bytes, and each instruction that went to a
    /// helper or back to the interpreter, why and how often (with --json: a "regions" key).
    #[arg(long)]
    regions: bool,
    /// Write, per compiled region, its guest instructions, Cranelift IR and host code
    /// (disassembled) into DIR.
    #[arg(long, value_name = "DIR")]
    dump_jit: Option<PathBuf>,
}

/// What `run --profile` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ProfileKind {
    /// A jitdump file for `perf inject --jit`.
    Jitdump,
    /// A perf map, `/tmp/perf-<pid>.map` (perf ignores it for code in memfd memory).
    Perfmap,
}

/// Every way a command can fail before or around a run: all exit with status 2.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A file could not be read or written.
    #[error("{path}: {err}")]
    Io {
        /// The file.
        path: String,
        /// What happened.
        #[source]
        err: std::io::Error,
    },
    /// An input file is larger than its limit.
    #[error("{path}: {what} is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The file.
        path: String,
        /// What the file was read as.
        what: &'static str,
        /// The limit.
        limit: u64,
    },
    /// A source file is not UTF-8 text.
    #[error("{0}: not a lanejit container and not UTF-8 assembly source")]
    NotText(String),
    /// The assembler reported errors.
    #[error("{0}")]
    Asm(#[from] lanejit_interp::asm::AsmErrors),
    /// The container is malformed.
    #[error("{path}: invalid container: {err}")]
    Container {
        /// The file.
        path: String,
        /// What is wrong.
        #[source]
        err: container::ContainerError,
    },
    /// A flag value is out of its range.
    #[error("{0}")]
    BadFlag(String),
    /// The machine could not be set up (memory limit, reservation, data placement).
    #[error("{0}")]
    Machine(#[from] lanejit_interp::machine::MachineError),
    /// A reproducer could not be replayed.
    #[error("{path}: {err}")]
    Replay {
        /// The reproducer.
        path: String,
        /// Why.
        #[source]
        err: lanejit::fuzz::ReplayError,
    },
}

/// A closure turning an I/O error on `path` into [`CliError::Io`].
pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> CliError + '_ {
    move |err| CliError::Io {
        path: path.display().to_string(),
        err,
    }
}

/// Parse a number: decimal or `0x` hex (`_` separators allowed).
pub fn parse_u64(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let r = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16)
    } else {
        t.parse::<u64>()
    };
    r.map_err(|_| format!("`{s}` is not a number (decimal or 0x hex)"))
}

/// [`parse_u64`] into a `usize`.
pub(crate) fn parse_u64_usize(s: &str) -> Result<usize, String> {
    let v = parse_u64(s)?;
    usize::try_from(v).map_err(|_| format!("`{s}` is too large"))
}

fn parse_u32(s: &str) -> Result<u32, String> {
    let v = parse_u64(s)?;
    u32::try_from(v).map_err(|_| format!("`{s}` is too large"))
}

fn parse_set(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((n, v)) if !n.trim().is_empty() => Ok((n.trim().to_string(), v.to_string())),
        _ => Err(format!("`{s}`: expected NAME=VALUE")),
    }
}

fn parse_load(s: &str) -> Result<(u64, PathBuf), String> {
    let (a, f) = s
        .split_once(':')
        .ok_or_else(|| format!("`{s}`: expected ADDR:FILE"))?;
    if f.is_empty() {
        return Err(format!("`{s}`: expected ADDR:FILE"));
    }
    Ok((parse_u64(a)?, PathBuf::from(f)))
}

fn parse_save(s: &str) -> Result<(u64, u64, PathBuf), String> {
    let mut it = s.splitn(3, ':');
    let (Some(a), Some(l), Some(f)) = (it.next(), it.next(), it.next()) else {
        return Err(format!("`{s}`: expected ADDR:LEN:FILE"));
    };
    if f.is_empty() {
        return Err(format!("`{s}`: expected ADDR:LEN:FILE"));
    }
    Ok((parse_u64(a)?, parse_u64(l)?, PathBuf::from(f)))
}

/// Append `r` to `buf` until `buf` holds `limit` bytes, reading one byte more to see whether
/// there are more; false when there are.
fn read_at_most(r: impl std::io::Read, buf: &mut Vec<u8>, limit: u64) -> std::io::Result<bool> {
    let room = limit.saturating_sub(buf.len() as u64);
    r.take(room.saturating_add(1)).read_to_end(buf)?;
    Ok(buf.len() as u64 <= limit)
}

/// Whether `f` is a regular file longer than `limit` (known without reading it).
fn file_longer_than(f: &std::fs::File, limit: u64) -> bool {
    f.metadata().is_ok_and(|m| m.is_file() && m.len() > limit)
}

/// The bytes of a program file (regular file, pipe or device): at most
/// [`MAX_CONTAINER_BYTES`] when it starts with the container magic, else at most
/// [`MAX_SOURCE_BYTES`]; a longer file is refused as soon as the limit is passed.
pub fn read_program_file(path: &Path) -> Result<Vec<u8>, CliError> {
    if path == Path::new("-") {
        return read_stdin_program();
    }
    let mut f = std::fs::File::open(path).map_err(io_err(path))?;
    let mut bytes = Vec::new();
    (&mut f)
        .take(container::MAGIC.len() as u64)
        .read_to_end(&mut bytes)
        .map_err(io_err(path))?;
    let (limit, what) = if container::is_container(&bytes) {
        (MAX_CONTAINER_BYTES, "the container")
    } else {
        (MAX_SOURCE_BYTES, "the assembly source")
    };
    let too_large = || CliError::TooLarge {
        path: path.display().to_string(),
        what,
        limit,
    };
    if file_longer_than(&f, limit) {
        return Err(too_large());
    }
    // Reserve once (address space only until written), so that a file near the limit never
    // holds twice its size while the buffer grows.
    let hint = f
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map_or(limit, |m| m.len());
    bytes.reserve_exact(hint.min(limit).saturating_add(1) as usize);
    if !read_at_most(&mut f, &mut bytes, limit).map_err(io_err(path))? {
        return Err(too_large());
    }
    Ok(bytes)
}

/// A program from standard input (`FILE` is `-`), with the limits of [`read_program_file`].
fn read_stdin_program() -> Result<Vec<u8>, CliError> {
    let path = Path::new(STDIN_NAME);
    let mut stdin = std::io::stdin().lock();
    let mut bytes = Vec::new();
    let within = read_at_most(&mut stdin, &mut bytes, MAX_CONTAINER_BYTES).map_err(io_err(path))?;
    let (limit, what) = if container::is_container(&bytes) {
        (MAX_CONTAINER_BYTES, "the container")
    } else {
        (MAX_SOURCE_BYTES, "the assembly source")
    };
    if !within || bytes.len() as u64 > limit {
        return Err(CliError::TooLarge {
            path: STDIN_NAME.into(),
            what,
            limit,
        });
    }
    Ok(bytes)
}

/// How standard input is named in messages.
const STDIN_NAME: &str = "<stdin>";

/// The name of a program file in messages.
fn display_name(path: &Path) -> String {
    if path == Path::new("-") {
        STDIN_NAME.into()
    } else {
        path.display().to_string()
    }
}

/// An assembly source file (read as [`read_program_file`] does) as text.
pub(crate) fn read_source(path: &Path) -> Result<String, CliError> {
    let bytes = read_program_file(path)?;
    String::from_utf8(bytes).map_err(|_| CliError::NotText(path.display().to_string()))
}

/// Copy the file of `--load ADDR:FILE` into guest memory at `addr`, reading no more than the
/// mapped bytes from `addr` on (plus one, to see that the file is longer).
fn load_into(m: &mut Machine, program: &Program, addr: u64, path: &Path) -> Result<(), CliError> {
    let room = program.mapped_len_from(addr);
    let too_large = || {
        CliError::BadFlag(format!(
            "--load {addr:#x}:{}: the file does not fit in the {room} bytes of mapped memory \
             from {addr:#x}",
            path.display()
        ))
    };
    let mut f = std::fs::File::open(path).map_err(io_err(path))?;
    if file_longer_than(&f, room) {
        return Err(too_large());
    }
    // Read straight into guest memory, a chunk at a time (no buffer to fault in and copy
    // from: a 16 MiB input cost 0.6 ms of copying); once the mapped bytes are full, one more
    // byte tells whether the file goes on.
    const CHUNK: u64 = 1 << 20;
    let mut at = 0u64;
    loop {
        let mut one = [0u8; 1];
        let dst: &mut [u8] = if at == room {
            &mut one
        } else {
            let want = (room - at).min(CHUNK);
            m.mem_mut()
                .and_then(|mem| mem.bytes_mut(addr + at, want))
                .ok_or_else(too_large)?
        };
        let n = match f.read(dst) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_err(path)(e)),
        };
        if at == room {
            return Err(too_large());
        }
        at += n as u64;
    }
}

/// Load a program: a container when the file starts with the magic, else assembly source.
pub fn load_program(path: &Path) -> Result<Program, CliError> {
    load_program_with(path, &[]).map(|(p, _)| p)
}

/// Load a program as [`load_program`] does, with `.equ` overrides (`--set`, source only), and
/// return its source text and `.equ` values too (`None` for a container).
pub fn load_program_with(
    path: &Path,
    set: &[(String, String)],
) -> Result<(Program, Option<(String, SourceMap)>), CliError> {
    let bytes = read_program_file(path)?;
    let name = display_name(path);
    if container::is_container(&bytes) {
        if !set.is_empty() {
            return Err(CliError::BadFlag(format!(
                "--set: {name} is a container; overriding an .equ needs assembly source"
            )));
        }
        let p = container::read(&bytes).map_err(|err| CliError::Container { path: name, err })?;
        return Ok((p, None));
    }
    let src = String::from_utf8(bytes).map_err(|_| CliError::NotText(name.clone()))?;
    let (p, map) = assemble_mapped(&src, &name, set)?;
    Ok((p, Some((src, map))))
}

/// Entry point: returns the process exit status.
pub fn main() -> i32 {
    let clap_error = |e: clap::Error| {
        if e.use_stderr() {
            let _ = std::io::stderr().write_all(diag::render_clap(&e, diag::color()).as_bytes());
            2
        } else {
            // --help, --version: not errors.
            let _ = e.print();
            0
        }
    };
    let matches = match Cli::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => return clap_error(e),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => return clap_error(e),
    };
    let result = match cli.cmd {
        Cmd::Run(args) => {
            let sub = matches.subcommand_matches("run");
            let order = sub.map(dump_order).unwrap_or_default();
            let engine_given = sub.and_then(|m| m.value_source("engine"))
                == Some(clap::parser::ValueSource::CommandLine);
            cmd_run(args, &order, engine_given)
        }
        Cmd::Compare(args) => {
            let order = matches
                .subcommand_matches("compare")
                .map(dump_order)
                .unwrap_or_default();
            crate::compare::cmd(&args, &order)
        }
        Cmd::Asm {
            file,
            out,
            no_lines,
        } => cmd_asm(&file, &out, no_lines),
        Cmd::Disasm { file } => cmd_disasm(&file),
        Cmd::Debug(args) => {
            let order = matches
                .subcommand_matches("debug")
                .map(dump_order)
                .unwrap_or_default();
            crate::debug::cmd(&args, &order)
        }
        Cmd::Fuzz(args) => crate::fuzz_cli::cmd(&args),
        Cmd::Bench(args) => cmd_bench(&args),
    };
    match result {
        Ok(code) => code,
        Err(CliError::Asm(errors)) => {
            let text = diag::render_asm(&errors, diag::color());
            let _ = std::io::stderr().write_all(text.as_bytes());
            2
        }
        Err(e) => {
            let mut msg = e.to_string();
            // The message of a variant with a source names the source already; add a
            // deeper cause only when it says something more.
            let mut src = std::error::Error::source(&e);
            while let Some(s) = src {
                let t = s.to_string();
                if !msg.contains(&t) {
                    msg = format!("{msg}: {t}");
                }
                src = s.source();
            }
            diag::error(msg.trim_end());
            2
        }
    }
}

/// The interleaving of `--dump-mem` and `--dump-tile` on the command line: a list of
/// (space, index within its own flag list) in command-line order.
fn dump_order(m: &clap::ArgMatches) -> Vec<(Space, usize)> {
    let mut v: Vec<(usize, Space, usize)> = Vec::new();
    for (id, space) in [("dump_mem", Space::Memory), ("dump_tile", Space::Tile)] {
        if let Some(ix) = m.indices_of(id) {
            v.extend(ix.enumerate().map(|(k, at)| (at, space, k)));
        }
    }
    v.sort();
    v.into_iter().map(|(_, s, k)| (s, k)).collect()
}

impl ProgramArgs {
    /// Whether the program is read from standard input (`-`).
    pub fn reads_stdin(&self) -> bool {
        self.file == Path::new("-")
    }

    /// The program flags of one kernel of `bench FILE...`.
    pub fn for_bench(file: &Path, set: &[(String, String)], vl: Option<u32>) -> ProgramArgs {
        ProgramArgs {
            file: file.to_path_buf(),
            vl: vl.map(u64::from),
            strict_align: false,
            max_instructions: None,
            mem_limit: None,
            set: set.to_vec(),
            dump_mem: Vec::new(),
            dump_tile: Vec::new(),
            load: Vec::new(),
            jit_threshold: VmOptions::default().jit_threshold,
            code_cache: None,
        }
    }
}

/// A program loaded and checked against its flags, ready to build machines for.
pub struct Setup {
    /// The program.
    pub program: Program,
    /// Its source and `.equ` values (`None` for a container).
    pub source: Option<(String, SourceMap)>,
    /// The name of its file in messages.
    pub name: String,
    /// The machine configuration.
    pub config: Config,
    /// The dumps to capture, in flag order.
    pub dumps: Vec<DumpRequest>,
    loads: Vec<(u64, PathBuf)>,
}

impl Setup {
    /// Load `args.file` and check every flag against it (nothing runs).
    pub fn new(args: &ProgramArgs, order: &[(Space, usize)]) -> Result<Setup, CliError> {
        let (program, source) = load_program_with(&args.file, &args.set)?;
        let vl = match args.vl {
            Some(v) if !(v <= 64 && valid_vl(v as u32)) => {
                return Err(CliError::BadFlag(format!(
                    "--vl {v}: VL must be a power of two from 1 to 64"
                )));
            }
            Some(v) => Some(v as u32),
            None => None,
        };
        let mut config = Config::for_program(&program, vl);
        config.strict_align = args.strict_align;
        config.max_instructions = args.max_instructions;
        if let Some(limit) = args.mem_limit {
            if limit % PAGE_SIZE != 0 || limit > MAX_MEM_LIMIT {
                return Err(CliError::BadFlag(format!(
                    "--mem-limit {limit:#x}: must be a multiple of 4096 and at most 2^40"
                )));
            }
            config.mem_limit = limit;
        }
        if program.mapped_end() > config.mem_limit {
            return Err(CliError::BadFlag(format!(
                "the program maps memory up to {:#x}, beyond the memory limit {:#x}",
                program.mapped_end(),
                config.mem_limit
            )));
        }
        let mut dumps = Vec::new();
        for &(space, k) in order {
            let (flag, spec) = match space {
                Space::Memory => ("--dump-mem", &args.dump_mem[k]),
                Space::Tile => ("--dump-tile", &args.dump_tile[k]),
            };
            let bad = |e: String| CliError::BadFlag(format!("{flag} {}: {e}", spec.text));
            let req = spec.request(&program, space).map_err(bad)?;
            req.validate(&program).map_err(|e| bad(e.to_string()))?;
            dumps.push(req);
        }
        Ok(Setup {
            name: display_name(&args.file),
            program,
            source,
            config,
            dumps,
            loads: args.load.clone(),
        })
    }

    /// A machine in its reset state with the `--load` files in memory.
    pub fn machine(&self) -> Result<Machine, CliError> {
        self.machine_with(self.config)
    }

    /// As [`Setup::machine`], under another configuration (another instruction budget).
    pub fn machine_with(&self, config: Config) -> Result<Machine, CliError> {
        let mut m = Machine::new(&self.program, config)?;
        for (addr, path) in &self.loads {
            load_into(&mut m, &self.program, *addr, path)?;
        }
        Ok(m)
    }
}

fn cmd_run(args: RunArgs, order: &[(Space, usize)], engine_given: bool) -> Result<i32, CliError> {
    let setup = Setup::new(&args.prog, order)?;
    let (groups, threads) = args.launch.resolve(&setup.program)?;
    let tracing = args.trace
        || args.trace_from.is_some()
        || args.trace_count.is_some()
        || args.trace_pc.is_some()
        || args.trace_file.is_some();
    if tracing && groups > 1 {
        return Err(CliError::BadFlag(
            "--trace traces a single group; it cannot be used with more than one group".into(),
        ));
    }
    let expectations = if args.check {
        let Some((src, _)) = &setup.source else {
            return Err(CliError::BadFlag(format!(
                "--check: {} is a container; `; expect` lines live in assembly source",
                setup.name
            )));
        };
        let ex = lanejit_interp::expect::parse(src, &setup.program)
            .map_err(|e| CliError::BadFlag(format!("--check: {}: {e}", setup.name)))?;
        if ex.is_empty() {
            return Err(CliError::BadFlag(format!(
                "--check: {} has no `; expect` lines",
                setup.name
            )));
        }
        ex
    } else {
        Vec::new()
    };
    // The run captures the ranges the expectations read after the flags' own dumps, and
    // hands them to the check instead of printing them.
    let mut run_dumps = setup.dumps.clone();
    run_dumps.extend(lanejit_interp::expect::dumps(&expectations));
    for (addr, len, path) in &args.save {
        if !setup.program.range_mapped(*addr, *len) {
            return Err(CliError::BadFlag(format!(
                "--save {addr:#x}:{len}:{}: the range is not entirely mapped",
                path.display()
            )));
        }
    }
    let mut m = setup.machine()?;
    // Output files are opened (created, truncated) before the run, after every input is read
    // (a file may be both loaded and saved), so an unwritable path costs no run.
    let mut save_files = Vec::with_capacity(args.save.len());
    for (_, _, path) in &args.save {
        save_files.push(std::fs::File::create(path).map_err(io_err(path))?);
    }
    let timeline_file = match &args.timeline {
        Some(path) => Some((path, std::fs::File::create(path).map_err(io_err(path))?)),
        None => None,
    };
    let observer = observer(&args, &setup.program)?;
    let decoded = Decoded::new(&setup.program.code);
    let mut filter = inspect::TraceFilter {
        from: args.trace_from.unwrap_or(0),
        count: args.trace_count,
        pc: match &args.trace_pc {
            None => None,
            Some(t) => Some(
                setup
                    .program
                    .resolve_value(t, lanejit_interp::program::SymKind::Code)
                    .map_err(|e| e.to_string())
                    .and_then(|pc| {
                        let words = setup.program.code.len() as u64;
                        if pc % 8 == 0 && pc / 8 < words {
                            Ok(pc)
                        } else {
                            Err(format!("{pc:#x} is not the pc of an instruction word"))
                        }
                    })
                    .map_err(|e| CliError::BadFlag(format!("--trace-pc {t}: {e}")))?,
            ),
        },
        printed: 0,
    };
    let mut trace_out: Box<dyn std::io::Write> = match &args.trace_file {
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path).map_err(io_err(path))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stderr())),
    };
    let places = inspect::Places::new(&setup.program, &decoded);
    let engine = if tracing { Engine::Interp } else { args.engine };
    if tracing && engine_given && args.engine != Engine::Interp {
        diag::note(&format!(
            "--trace runs on the reference interpreter, not on --engine {}",
            args.engine.name()
        ));
    }
    let start = std::time::Instant::now();
    let (mut result, stats, (timeline, t0), m) = if tracing {
        let mut seq = m.retired;
        let exit = interp::run_traced(&mut m, &decoded, &mut |ev| {
            seq += 1;
            if filter.take(seq, ev.pc) {
                let _ = writeln!(trace_out, "{}", places.event(seq, ev));
            }
        });
        if let lanejit_interp::machine::Exit::Trapped(t) = &exit {
            let _ = writeln!(trace_out, "{}", places.trap(t));
        }
        let _ = trace_out.flush();
        let stats = vm::EngineStats {
            interp_retired: m.retired,
            ..Default::default()
        };
        (
            RunResult::capture(&m, exit, &run_dumps),
            stats,
            (Vec::new(), start),
            m,
        )
    } else {
        let opts = LaunchOptions {
            engine,
            vm: VmOptions {
                observer: observer.clone(),
                ..args.prog.vm_options()?
            },
            groups,
            threads,
            check_races: args.check_races,
            timeline: args.timeline.is_some(),
        };
        let cached = opts.vm.code_cache.is_some();
        let (l, m) = launch(m, &decoded, &run_dumps, &opts);
        if cached {
            // The compiles the run left in hand go on to the cache for the next run (the
            // result is complete already; without a cache they are simply dropped at exit).
            vm::wait_for_compilers();
        }
        (l.result, l.stats, (l.timeline, l.t0), m)
    };
    let secs = start.elapsed().as_secs_f64();
    let check_dumps = result.dumps.split_off(setup.dumps.len());

    let mut out = std::io::stdout().lock();
    if args.json {
        let mut json = result.to_json();
        if let Some(o) = json.as_object_mut() {
            o.insert(
                "engine_stats".into(),
                serde_json::to_value(stats).unwrap_or_default(),
            );
            o.insert("version".into(), env!("CARGO_PKG_VERSION").into());
            if !args.show.is_empty() {
                let shown = args
                    .show
                    .iter()
                    .map(|sh| {
                        let vals = sh.values(&result.scalars, &result.vectors);
                        serde_json::json!({
                            "reg": sh.name(),
                            "type": sh.ty.name(),
                            "values": vals.iter().map(|e| e.json()).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                o.insert("show".into(), serde_json::Value::Array(shown));
            }
            if let (true, Some(obs)) = (args.regions, &observer) {
                o.insert("regions".into(), regions::json(&obs.report(), obs));
            }
        }
        let _ = writeln!(out, "{json}");
    } else {
        let _ = write!(
            out,
            "{}",
            inspect::header(engine, m.vl(), result.instructions, secs, &stats)
        );
        let _ = write!(out, "{}", result.summary());
        if let Some(t) = &result.trap {
            let _ = writeln!(out, "{}", places.trap(t));
        }
        for sh in &args.show {
            let vals: Vec<String> = sh
                .values(&result.scalars, &result.vectors)
                .iter()
                .map(ToString::to_string)
                .collect();
            let _ = writeln!(out, "{} as {}: [{}]", sh.name(), sh.ty, vals.join(", "));
        }
        if let (true, Some(obs)) = (args.regions, &observer) {
            let _ = write!(out, "{}", regions::table(&obs.report(), obs, engine));
        }
    }
    let _ = out.flush();
    drop(out);
    // The result is out; a save that fails now is reported with its own exit status.
    let mut status = result.status.exit_code();
    if let Some((path, mut f)) = timeline_file {
        let compiles = observer.as_ref().map(|o| o.compiles()).unwrap_or_default();
        let requests = observer.as_ref().map(|o| o.requests()).unwrap_or_default();
        let json = lanejit::timeline::chrome_trace(&timeline, &compiles, &requests, t0);
        if let Err(e) = writeln!(f, "{json}").and_then(|()| f.flush()) {
            let _ = writeln!(
                std::io::stderr(),
                "lanejit: --timeline {}: {e} (the run finished; its result is above)",
                path.display()
            );
            status = EXIT_OUTPUT_FAILED;
        }
    }
    if let Some(e) = observer.as_ref().and_then(|o| o.error()) {
        diag::error(&format!("{e} (the run finished; its result is above)"));
        status = EXIT_OUTPUT_FAILED;
    }
    for ((addr, len, path), mut f) in args.save.iter().zip(save_files) {
        let bytes = m.mem.bytes(*addr, *len).unwrap_or_default();
        if let Err(e) = f.write_all(bytes).and_then(|()| f.flush()) {
            diag::error(&format!(
                "--save {addr:#x}:{len}:{}: {e} (the run finished; its result is above)",
                path.display()
            ));
            status = EXIT_OUTPUT_FAILED;
        }
    }
    if args.check && status != EXIT_OUTPUT_FAILED {
        let mut err = std::io::stderr().lock();
        let mut failed = 0;
        for e in &expectations {
            if let Err(got) = e.check(&result, &check_dumps) {
                failed += 1;
                let _ = writeln!(err, "{}:{}: expect {}: {got}", setup.name, e.line, e.text);
            }
        }
        let n = expectations.len();
        status = if failed == 0 {
            let _ = writeln!(err, "check: all {n} expectations hold");
            0
        } else {
            let _ = writeln!(err, "check: {failed} of {n} expectations failed");
            EXIT_CHECK_FAILED
        };
    }
    Ok(status)
}

/// The observer of `run --profile`, `--regions`, `--dump-jit` and `--timeline` (`None`
/// without them), its
/// files created now so that an unwritable path fails before the run.
fn observer(
    args: &RunArgs,
    program: &Program,
) -> Result<Option<std::sync::Arc<Observer>>, CliError> {
    let opts = ObserveOptions {
        counters: args.regions,
        jitdump: args.profile.contains(&ProfileKind::Jitdump),
        perf_map: args.profile.contains(&ProfileKind::Perfmap),
        dump_dir: args.dump_jit.clone(),
        timeline: args.timeline.is_some(),
    };
    if opts == ObserveOptions::default() {
        return Ok(None);
    }
    if let Some(dir) = &opts.dump_dir {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    let labels: Vec<(String, u64)> = program
        .symbols
        .iter()
        .filter(|s| s.kind == lanejit_interp::program::SymKind::Code)
        .map(|s| (s.name.clone(), s.value))
        .collect();
    let obs = Observer::new(opts, &labels).map_err(|err| CliError::Io {
        path: format!("--profile {}", observe::jitdump_path().display()),
        err,
    })?;
    Ok(Some(std::sync::Arc::new(obs)))
}

fn cmd_asm(file: &Path, out: &Path, no_lines: bool) -> Result<i32, CliError> {
    let src = read_source(file)?;
    let mut program = assemble(&src, &display_name(file))?;
    if no_lines {
        program.lines = Default::default();
    }
    std::fs::write(out, container::write(&program)).map_err(io_err(out))?;
    Ok(0)
}

fn cmd_disasm(file: &Path) -> Result<i32, CliError> {
    let program = load_program(file)?;
    let _ = write!(std::io::stdout().lock(), "{}", disassemble(&program));
    Ok(0)
}

fn cmd_bench(args: &lanejit::bench::cli::BenchArgs) -> Result<i32, CliError> {
    if args.files.is_empty() {
        return lanejit::bench::cli::cmd(args).map_err(|e| CliError::BadFlag(e.to_string()));
    }
    let set = args
        .set
        .iter()
        .map(|s| parse_set(s).map_err(|e| CliError::BadFlag(format!("--set {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    use crate::userbench::BenchEngine;
    let engines = if args.engines.is_empty() {
        BenchEngine::ALL.to_vec()
    } else {
        args.engines
            .iter()
            .map(|e| {
                BenchEngine::parse(e).ok_or_else(|| {
                    CliError::BadFlag(format!(
                        "--engine {e}: user kernels run on interp, jit, jit-warm, tiered and \
                         tiered+cache"
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?
    };
    crate::userbench::run(&crate::userbench::UserBench {
        files: args.files.clone(),
        set,
        elements: args.elements,
        engines,
        reps: args.reps.unwrap_or(if args.quick { 3 } else { 10 }).max(1),
        vl: args.vl,
        save_baseline: args.save_baseline.clone(),
        baseline: args.baseline.clone(),
        json: args.json,
    })
}
