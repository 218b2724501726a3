//! Seeing inside the JIT: the [`Observer`] a run hands its JITs owns everything that shows
//! compiled code to a user or a profiler, and nothing of it exists unless asked for.
//!
//! * **Profiler symbols.** Every compiled region goes into a jitdump file
//!   ([`jitdump_path`]: `jit-<pid>.dump` in `$JITDUMPDIR` or the current directory), which
//!   `perf inject --jit` turns into one symbol per region, and (on request) a perf map
//!   (`/tmp/perf-<pid>.map`). Both name the region by guest location ([`region_name`]:
//!   `lj:loop@0x88 <top+0x8>`) at the address its code runs at: the executable view of the
//!   dual-mapped code memory (`codemem`), not the writable view cranelift-jit reports. perf
//!   reads perf maps only for anonymous memory, not for the memfd that code memory is, so
//!   there only the jitdump works. The jitdump file is written by wasmtime's jitdump writer
//!   (timestamps from `CLOCK_MONOTONIC`, as `perf record -k 1` expects; the file mapped
//!   executable once so that perf records its path).
//! * **Region report counters.** With [`ObserveOptions::counters`], the translator compiles
//!   into every region an atomic count of its entries, of the instructions it retires, and of
//!   every time an instruction of it goes to a helper or back to the interpreter, per
//!   instruction and [`Fallback`] reason (`translate::probes`). The counters live in an arena
//!   of this observer, at addresses that never move, so they outlive the code. Without the
//!   option no counting code is emitted at all. [`Observer::report`] reads them.
//! * **Dumps.** With [`ObserveOptions::dump_dir`], per compiled region three files: the guest
//!   instructions (`.guest`, the project's disassembly), the Cranelift IR the translator
//!   built (`.clif`, before compiling) and the host machine code (`.asm`, disassembled by
//!   `iced-x86` on x86-64; elsewhere the raw bytes, `.bin`).
//!
//! One observer may serve several JITs (a launch's shared JIT, a background compiler's);
//! its report covers all their regions.

use crate::{Plan, RegionKind};
use lanejit_interp::isa::Inst;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What an [`Observer`] records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObserveOptions {
    /// Count entries, retired instructions and fallbacks in compiled code (the region report).
    pub counters: bool,
    /// Write a jitdump file for `perf inject --jit` ([`jitdump_path`]).
    pub jitdump: bool,
    /// Append every region to the perf map `/tmp/perf-<pid>.map`.
    pub perf_map: bool,
    /// Write the guest instructions, IR and host code of every region into this directory.
    pub dump_dir: Option<PathBuf>,
    /// Keep every compile's span ([`Observer::compiles`]: `--timeline`).
    pub timeline: bool,
}

/// Why an instruction of a compiled region went to a helper or back to the interpreter
/// (decided, and recorded, where the translator makes the choice).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fallback {
    /// A straight-line first compile hands vector work to a helper on the register file
    /// (compile speed first); the region is recompiled with inline code once hot.
    FirstCompile,
    /// The host has no fused multiply-add: `V.FMA` calls the software `mul_add` helper.
    SoftFma,
    /// The inline access's check failed (range, permission, alignment, a hole between the
    /// lanes): the helper took the access.
    FailedCheck,
    /// The mask was partial (or the inline check failed): the helper took the access.
    PartialMask,
    /// The helper found a lane that faults: the interpreter re-executes the instruction and
    /// raises the trap.
    Fault,
    /// The group's range check failed (some lane faults): the interpreter re-executes the
    /// instruction and raises the trap.
    RangeFault,
    /// The instruction budget (`--max-instructions`) cannot cover the next instructions.
    Budget,
    /// The next instruction is one the JIT declines (`HALT`, an undecodable word, the end of
    /// the code).
    Declined,
    /// An add to 32-bit lanes kept packed (a loaded index stepping on) would carry out of 32
    /// bits in some lane: the interpreter executes it.
    Carry,
    /// A loop iteration with a partial mask (its tail, an iteration whose span check found a
    /// fault ahead, or any partial-mask iteration of a loop compiled without them: see
    /// `translate::TxConfig::tail`) left for the straight-line form of the body.
    Tail,
}

impl Fallback {
    /// Where the instruction went: `helper`, `interp` or `tail`.
    pub const fn target(self) -> &'static str {
        match self {
            Fallback::FirstCompile
            | Fallback::SoftFma
            | Fallback::FailedCheck
            | Fallback::PartialMask => "helper",
            Fallback::Fault
            | Fallback::RangeFault
            | Fallback::Budget
            | Fallback::Declined
            | Fallback::Carry => "interp",
            Fallback::Tail => "tail",
        }
    }

    /// The reason's name in the report (`first_compile`, `failed_check`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Fallback::FirstCompile => "first_compile",
            Fallback::SoftFma => "soft_fma",
            Fallback::FailedCheck => "failed_check",
            Fallback::PartialMask => "partial_mask",
            Fallback::Fault => "fault",
            Fallback::RangeFault => "range_fault",
            Fallback::Budget => "budget",
            Fallback::Declined => "declined",
            Fallback::Carry => "carry",
            Fallback::Tail => "tail",
        }
    }
}

/// Counters per arena chunk.
const CHUNK: usize = 1024;

/// Counters at addresses that never move (compiled code adds to them atomically).
#[derive(Default)]
struct Counters {
    /// The chunks, and how many counters are handed out.
    chunks: Mutex<(Vec<Box<[AtomicU64]>>, usize)>,
}

/// One counter of [`Counters`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot(usize);

impl Counters {
    /// A new counter at zero, and its address.
    fn alloc(&self) -> (Slot, u64) {
        let mut g = self.chunks.lock().unwrap_or_else(|e| e.into_inner());
        let (chunks, used) = &mut *g;
        if *used == chunks.len() * CHUNK {
            chunks.push((0..CHUNK).map(|_| AtomicU64::new(0)).collect());
        }
        let i = *used;
        *used += 1;
        let addr = &chunks[i / CHUNK][i % CHUNK] as *const AtomicU64 as u64;
        (Slot(i), addr)
    }

    fn get(&self, s: Slot) -> u64 {
        let g = self.chunks.lock().unwrap_or_else(|e| e.into_inner());
        g.0[s.0 / CHUNK][s.0 % CHUNK].load(Ordering::Relaxed)
    }
}

/// The counters of one compile, handed to the translator (`translate::probes`).
pub(crate) struct Probes {
    obs: Arc<Observer>,
    /// Entries of the region (address).
    pub(crate) entries: (Slot, u64),
    /// Instructions the region retired (address).
    pub(crate) retired: (Slot, u64),
    /// Per instruction and reason, its fallback counter.
    sites: Vec<(u64, Fallback, Slot, u64)>,
}

impl Probes {
    /// Counters for one more compile under `obs`.
    pub(crate) fn new(obs: Arc<Observer>) -> Probes {
        let entries = obs.counters.alloc();
        let retired = obs.counters.alloc();
        Probes {
            obs,
            entries,
            retired,
            sites: Vec::new(),
        }
    }

    /// Forget the sites of a translation that was thrown away (its code never runs).
    pub(crate) fn restart(&mut self) {
        self.sites.clear();
    }

    /// The address of the counter of `why` at `pc` (one per pair, whichever body copy
    /// reaches it).
    pub(crate) fn site(&mut self, pc: u64, why: Fallback) -> u64 {
        if let Some(s) = self.sites.iter().find(|s| s.0 == pc && s.1 == why) {
            return s.3;
        }
        let (slot, addr) = self.obs.counters.alloc();
        self.sites.push((pc, why, slot, addr));
        addr
    }
}

/// One compiled region as the JIT describes it to [`Observer::compiled`].
pub(crate) struct Compiled<'a> {
    pub(crate) pc: u64,
    pub(crate) end_pc: u64,
    pub(crate) kind: RegionKind,
    pub(crate) hot: bool,
    pub(crate) plan: Plan,
    /// Compiled in the strip-mined form (`translate::strip`), whatever its plan.
    pub(crate) strip: bool,
    pub(crate) insts: &'a [(u64, Inst)],
    /// The declined instruction after a region whose run ends before one (at `end_pc`).
    pub(crate) declined: Option<Inst>,
    pub(crate) us: u64,
    /// When its compile (or its read from the disk cache) began.
    pub(crate) t0: std::time::Instant,
    /// Which code it is: `first`, `baseline`, `optimized` or `cached`.
    pub(crate) tier: &'static str,
    /// Its machine code where it runs.
    pub(crate) code: &'a [u8],
    /// The Cranelift IR (when dumping).
    pub(crate) ir: Option<String>,
}

/// One compile, for `--timeline` ([`Observer::compiles`]).
#[derive(Clone, Debug, PartialEq)]
pub struct CompileSpan {
    /// The region's symbol ([`region_name`]).
    pub name: String,
    /// Which code: `first` (a first compile), `baseline` (a loop's quick code, replaced
    /// later), `optimized` (that replacement) or `cached` (read from the disk cache).
    pub tier: &'static str,
    /// The thread that compiled it (its name, or `main`).
    pub thread: String,
    /// When the compile began.
    pub start: std::time::Instant,
    /// When its code was placed.
    pub end: std::time::Instant,
    /// Machine-code bytes.
    pub code_bytes: usize,
}

/// A region a tiered run handed to its compiler thread, for `--timeline`
/// ([`Observer::requests`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// Its start: pc and code label (`0x68 <row+0x8>`).
    pub name: String,
    /// When the run found it hot and asked for its code.
    pub at: std::time::Instant,
}

/// What the report keeps of a compiled region.
struct Record {
    pc: u64,
    end_pc: u64,
    kind: RegionKind,
    hot: bool,
    plan: Plan,
    insts: Vec<(u64, Inst)>,
    declined: Option<Inst>,
    us: u64,
    code_bytes: usize,
    addr: u64,
    entries: Slot,
    retired: Slot,
    sites: Vec<(u64, Fallback, Slot)>,
}

/// One fallback site in the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FallbackCount {
    /// The instruction's pc.
    pub pc: u64,
    /// The instruction.
    pub inst: String,
    /// Why.
    pub why: Fallback,
    /// How many times.
    pub count: u64,
}

/// One compiled region in the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionReport {
    /// First pc.
    pub pc: u64,
    /// pc after its last instruction.
    pub end_pc: u64,
    /// Kind of function.
    pub kind: RegionKind,
    /// A hot straight-line region's recompile (inline vector code).
    pub hot: bool,
    /// The form it was compiled in.
    pub plan: Plan,
    /// Guest instructions it covers.
    pub insts: usize,
    /// Entries (from the dispatcher and from other regions' chained exits).
    pub entries: u64,
    /// Instructions retired in it.
    pub retired: u64,
    /// Compile time, microseconds.
    pub compile_us: u64,
    /// Machine-code bytes.
    pub code_bytes: usize,
    /// Where the code runs (the address profilers see).
    pub addr: u64,
    /// Every instruction that went to a helper or back to the interpreter at least once, by
    /// pc and reason.
    pub fallbacks: Vec<FallbackCount>,
}

/// Profiler outputs (under a lock: several JITs may compile at once).
struct Profile {
    #[cfg(target_os = "linux")]
    jitdump: Option<wasmtime_internal_jit_debug::perf_jitdump::JitDumpFile>,
    perf_map: Option<std::fs::File>,
}

/// What a run observes of its compiled code (see the module docs).
pub struct Observer {
    opts: ObserveOptions,
    /// Code labels by pc, sorted.
    labels: Vec<(u64, String)>,
    counters: Counters,
    records: Mutex<Vec<Record>>,
    /// Every compile, with `opts.timeline`.
    spans: Mutex<Vec<CompileSpan>>,
    /// Every region handed to a compiler thread, with `opts.timeline`.
    requests: Mutex<Vec<Request>>,
    profile: Mutex<Profile>,
    /// Regions dumped so far (file name prefix).
    dumped: AtomicU64,
    /// The first error writing a profile or dump file after setup.
    error: Mutex<Option<String>>,
}

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observer")
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

/// Where `--profile jitdump` writes: `jit-<pid>.dump` in `$JITDUMPDIR`, else in the current
/// directory (where `perf inject --jit` looks for it by the path recorded at its mapping).
pub fn jitdump_path() -> PathBuf {
    let dir = std::env::var_os("JITDUMPDIR").map_or_else(|| PathBuf::from("."), PathBuf::from);
    dir.join(format!("jit-{}.dump", std::process::id()))
}

/// The perf map of this process.
pub fn perf_map_path() -> PathBuf {
    PathBuf::from(format!("/tmp/perf-{}.map", std::process::id()))
}

/// The symbol of a region: `lj:KIND@PC`, with ` <LABEL>` when a code label is at or before
/// the pc (`label` or `label+0xOFF`). KIND is `straight`, `hot` (a straight-line region's
/// recompile), `loop` or `tail`.
pub fn region_name(kind: RegionKind, hot: bool, pc: u64, label: Option<&str>) -> String {
    let k = match (kind, hot) {
        (RegionKind::Straight, false) => "straight",
        (RegionKind::Straight, true) => "hot",
        (RegionKind::Loop, _) => "loop",
        (RegionKind::Tail, _) => "tail",
    };
    match label {
        Some(l) => format!("lj:{k}@{pc:#x} <{l}>"),
        None => format!("lj:{k}@{pc:#x}"),
    }
}

/// The ELF machine of the host (jitdump header).
#[cfg(target_os = "linux")]
const ELF_MACHINE: u32 = if cfg!(target_arch = "x86_64") {
    62 // EM_X86_64
} else if cfg!(target_arch = "aarch64") {
    183 // EM_AARCH64
} else if cfg!(target_arch = "riscv64") {
    243 // EM_RISCV
} else if cfg!(target_arch = "s390x") {
    22 // EM_S390
} else {
    0 // EM_NONE
};

impl Observer {
    /// An observer recording `opts`, naming pcs by the code labels `labels` (label, pc).
    /// Creates the profile files and the dump directory now, so that a path that cannot be
    /// written fails before anything runs.
    pub fn new(opts: ObserveOptions, labels: &[(String, u64)]) -> io::Result<Observer> {
        let mut labels: Vec<(u64, String)> = labels.iter().map(|(n, v)| (*v, n.clone())).collect();
        labels.sort();
        #[cfg(target_os = "linux")]
        let jitdump = if opts.jitdump {
            let path = jitdump_path();
            // A file left by an earlier process of the same pid would keep its header.
            let _ = std::fs::remove_file(&path);
            Some(wasmtime_internal_jit_debug::perf_jitdump::JitDumpFile::new(
                &path,
                ELF_MACHINE,
            )?)
        } else {
            None
        };
        #[cfg(not(target_os = "linux"))]
        if opts.jitdump {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "jitdump files are written on Linux only",
            ));
        }
        let perf_map = if opts.perf_map {
            Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(perf_map_path())?,
            )
        } else {
            None
        };
        if let Some(dir) = &opts.dump_dir {
            std::fs::create_dir_all(dir)?;
        }
        Ok(Observer {
            opts,
            labels,
            counters: Counters::default(),
            records: Mutex::new(Vec::new()),
            spans: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
            profile: Mutex::new(Profile {
                #[cfg(target_os = "linux")]
                jitdump,
                perf_map,
            }),
            dumped: AtomicU64::new(0),
            error: Mutex::new(None),
        })
    }

    /// Every compile so far, in the order they ended (with [`ObserveOptions::timeline`]).
    pub fn compiles(&self) -> Vec<CompileSpan> {
        self.spans.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Note that a tiered run handed the region at `pc` to its compiler thread now (kept
    /// with [`ObserveOptions::timeline`]: the wait until its compile begins shows).
    pub fn requested(&self, pc: u64) {
        if !self.opts.timeline {
            return;
        }
        let name = match self.label(pc) {
            Some(l) => format!("{pc:#x} <{l}>"),
            None => format!("{pc:#x}"),
        };
        let r = Request {
            name,
            at: std::time::Instant::now(),
        };
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(r);
    }

    /// Every region handed to a compiler thread so far, in order ([`Observer::requested`]).
    pub fn requests(&self) -> Vec<Request> {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// What it records.
    pub fn options(&self) -> &ObserveOptions {
        &self.opts
    }

    /// Whether compiles must capture the IR (dumping).
    pub(crate) fn wants_ir(&self) -> bool {
        self.opts.dump_dir.is_some()
    }

    /// `label` or `label+0xOFF` for the code label at or before `pc`.
    pub fn label(&self, pc: u64) -> Option<String> {
        let i = self.labels.partition_point(|&(v, _)| v <= pc);
        let (v, name) = self.labels.get(i.checked_sub(1)?)?;
        Some(if *v == pc {
            name.clone()
        } else {
            format!("{name}+{:#x}", pc - v)
        })
    }

    /// The first error writing a profile or dump file during the run, if any (the run goes on
    /// without that output).
    pub fn error(&self) -> Option<String> {
        self.error.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn fail(&self, what: &str, e: io::Error) {
        let mut g = self.error.lock().unwrap_or_else(|e| e.into_inner());
        if g.is_none() {
            *g = Some(format!("{what}: {e}"));
        }
    }

    /// A region was compiled (its code is at `c.code`): symbols, dumps and the report's
    /// record with the counters of `probes`.
    pub(crate) fn compiled(&self, c: Compiled<'_>, probes: Option<Probes>) {
        let name = region_name(c.kind, c.hot, c.pc, self.label(c.pc).as_deref());
        if self.opts.timeline {
            let thread = std::thread::current();
            let span = CompileSpan {
                name: name.clone(),
                tier: c.tier,
                thread: thread.name().unwrap_or("main").to_string(),
                start: c.t0,
                end: std::time::Instant::now(),
                code_bytes: c.code.len(),
            };
            self.spans
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(span);
        }
        {
            let mut p = self.profile.lock().unwrap_or_else(|e| e.into_inner());
            #[cfg(target_os = "linux")]
            if let Some(j) = p.jitdump.as_mut() {
                let ts = j.get_time_stamp();
                // SAFETY: `gettid` has no preconditions.
                let tid = unsafe { libc::gettid() } as u32;
                if let Err(e) = j.dump_code_load_record(&name, c.code, ts, std::process::id(), tid)
                {
                    drop(p);
                    self.fail("jitdump", e);
                    p = self.profile.lock().unwrap_or_else(|e| e.into_inner());
                }
            }
            if let Some(f) = p.perf_map.as_mut() {
                let line = format!("{:x} {:x} {name}\n", c.code.as_ptr() as usize, c.code.len());
                if let Err(e) = f.write_all(line.as_bytes()) {
                    drop(p);
                    self.fail("perf map", e);
                }
            }
        }
        if let Some(dir) = &self.opts.dump_dir {
            if let Err(e) = self.dump(dir, &name, &c) {
                self.fail(&format!("--dump-jit {}", dir.display()), e);
            }
        }
        if let Some(p) = probes {
            self.records
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(Record {
                    pc: c.pc,
                    end_pc: c.end_pc,
                    kind: c.kind,
                    hot: c.hot,
                    plan: c.plan,
                    insts: c.insts.to_vec(),
                    declined: c.declined,
                    us: c.us,
                    code_bytes: c.code.len(),
                    addr: c.code.as_ptr() as u64,
                    entries: p.entries.0,
                    retired: p.retired.0,
                    sites: p.sites.iter().map(|s| (s.0, s.1, s.2)).collect(),
                });
        }
    }

    /// The three dump files of a region.
    fn dump(&self, dir: &Path, name: &str, c: &Compiled<'_>) -> io::Result<()> {
        let n = self.dumped.fetch_add(1, Ordering::Relaxed);
        let kind = name
            .strip_prefix("lj:")
            .and_then(|s| s.split('@').next())
            .unwrap_or("region");
        let stem = dir.join(format!("{n:04}-{:x}-{kind}", c.pc));
        let form = if c.strip {
            "strip-mined".to_string()
        } else {
            format!("{:?}", c.plan)
        };
        let mut guest = format!(
            "; {name}: {} instructions, pcs {:#x}..{:#x}, {form} form, {} code\n",
            c.insts.len(),
            c.pc,
            c.end_pc,
            c.tier
        );
        for (pc, inst) in c.insts {
            let label = match self.labels.binary_search_by_key(pc, |(v, _)| *v) {
                Ok(i) => format!("{}:\n", self.labels[i].1),
                Err(_) => String::new(),
            };
            guest.push_str(&format!("{label}  {pc:#06x}  {inst}\n"));
        }
        std::fs::write(stem.with_extension("guest"), guest)?;
        if let Some(ir) = &c.ir {
            std::fs::write(stem.with_extension("clif"), format!("; {name}\n{ir}"))?;
        }
        let addr = c.code.as_ptr() as u64;
        if let Some(text) = host_disasm(c.code, addr) {
            std::fs::write(stem.with_extension("asm"), format!("; {name}\n{text}"))?;
        } else {
            std::fs::write(stem.with_extension("bin"), c.code)?;
        }
        Ok(())
    }

    /// Every region compiled so far with its counts, by instructions retired (most first).
    /// Empty unless [`ObserveOptions::counters`].
    pub fn report(&self) -> Vec<RegionReport> {
        let records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<RegionReport> = records
            .iter()
            .map(|r| {
                let mut fallbacks: Vec<FallbackCount> = r
                    .sites
                    .iter()
                    .map(|&(pc, why, slot)| FallbackCount {
                        pc,
                        inst: r
                            .insts
                            .iter()
                            .find(|(p, _)| *p == pc)
                            .map(|(_, i)| i)
                            .or(r.declined.as_ref().filter(|_| pc == r.end_pc))
                            .map_or_else(String::new, ToString::to_string),
                        why,
                        count: self.counters.get(slot),
                    })
                    .filter(|f| f.count > 0)
                    .collect();
                fallbacks.sort_by(|a, b| b.count.cmp(&a.count).then(a.pc.cmp(&b.pc)));
                RegionReport {
                    pc: r.pc,
                    end_pc: r.end_pc,
                    kind: r.kind,
                    hot: r.hot,
                    plan: r.plan,
                    insts: r.insts.len(),
                    entries: self.counters.get(r.entries),
                    retired: self.counters.get(r.retired),
                    compile_us: r.us,
                    code_bytes: r.code_bytes,
                    addr: r.addr,
                    fallbacks,
                }
            })
            .collect();
        out.sort_by(|a, b| b.retired.cmp(&a.retired).then(a.pc.cmp(&b.pc)));
        out
    }
}

/// The host code at `addr` as assembly, one instruction a line with its address and bytes
/// (x86-64 hosts; `None` elsewhere, where the caller writes the raw bytes).
fn host_disasm(code: &[u8], addr: u64) -> Option<String> {
    #[cfg(target_arch = "x86_64")]
    {
        use iced_x86::{Decoder, DecoderOptions, Formatter, Instruction, IntelFormatter};
        let mut dec = Decoder::with_ip(64, code, addr, DecoderOptions::NONE);
        let mut fmt = IntelFormatter::new();
        let mut inst = Instruction::default();
        let mut text = String::new();
        let mut out = String::new();
        while dec.can_decode() {
            dec.decode_out(&mut inst);
            text.clear();
            fmt.format(&inst, &mut text);
            let at = (inst.ip() - addr) as usize;
            let bytes: String = code[at..at + inst.len()]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            out.push_str(&format!("{:016x}  {bytes:<24} {text}\n", inst.ip()));
        }
        Some(out)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (code, addr);
        None
    }
}
