//! `lanejit bench --groups G --threads 1,2,..`: launches of many groups (contract section 9)
//! on every engine at several thread counts, against a native reference that splits the same
//! groups over the same number of threads (std threads, a contiguous share each).
//!
//! The kernels are race-free launch versions of bench kernels (`seeds/kernels/bench/groups/`):
//! group g works on its own slice of `PER` elements, `[g*PER, (g+1)*PER)`, of the source and
//! destination buffers. Each (engine, thread count) first launches from a fresh machine with
//! the same data, checked byte for byte against the native output; then `reps` repetitions
//! each time native and every engine at every thread count in turn (interleaved, so that a
//! shared host's drift does not bias the speed-ups, which are medians of the ratios within
//! one repetition), every engine twice: cold (each one a whole `lanejit run` launch: worker threads started, the
//! launch's JIT created and its regions compiled, every group run) and warm (the launches
//! share one JIT that a first launch compiled: the steady state, as the single-group suite's
//! jit column, and what a speed-up per thread is about, since compiling is serial). `/native`
//! compares the warm time.
//!
//! poly_g is compute-bound (24 fused multiply-adds per element loaded: with 16, native code
//! was close to this host's memory bandwidth), where saxpy_g and
//! copy_g are bound by memory bandwidth at large sizes. Besides the table:
//!
//! * the launch overhead per group: 10^6 groups of `tiny_g.s` (5 instructions each), on
//!   every engine at every thread count;
//! * the cost of `--check-races`: the interpreter's race-checked launch of saxpy_g against
//!   its plain launch on one thread.

use super::{BenchError, median};
use crate::launch::{LaunchOptions, launch_reusing, shared_code};
use crate::vm::{Engine, SharedCode, VmOptions};
use lanejit_interp::asm::assemble;
use lanejit_interp::interp::Decoded;
use lanejit_interp::machine::{Config, Machine};
use lanejit_interp::program::Program;
use rand::{RngCore, SeedableRng};
use std::fmt::Write as _;
use std::time::Instant;

/// Guest address of the source buffer of the launch kernels.
const SRC: u64 = 0x1000_0000;
/// Guest address of their destination buffer.
const DST: u64 = 0x3026_0880;
/// The most bytes one buffer of a launch kernel maps.
const MAX_BYTES: u64 = 64 << 20;

/// A launch bench kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchKernel {
    /// y = 1.5*x + y on f32, unfused.
    Saxpy,
    /// dst = src, 32-bit words.
    Copy,
    /// y = 0.5 * (x + 1)^24 on f32, 24 fused steps: compute-bound.
    Poly,
    /// out[g] = g.
    Tiny,
}

impl LaunchKernel {
    /// Name.
    pub const fn name(self) -> &'static str {
        match self {
            LaunchKernel::Saxpy => "saxpy_g",
            LaunchKernel::Copy => "copy_g",
            LaunchKernel::Poly => "poly_g",
            LaunchKernel::Tiny => "tiny_g",
        }
    }

    fn source(self) -> &'static str {
        match self {
            LaunchKernel::Saxpy => include_str!("../../seeds/kernels/bench/groups/saxpy_g.s"),
            LaunchKernel::Copy => include_str!("../../seeds/kernels/bench/groups/copy_g.s"),
            LaunchKernel::Poly => include_str!("../../seeds/kernels/bench/groups/poly_g.s"),
            LaunchKernel::Tiny => include_str!("../../seeds/kernels/bench/groups/tiny_g.s"),
        }
    }

    /// The program for `per` elements per group.
    fn program(self, per: u64) -> Result<Program, BenchError> {
        let src: String = self
            .source()
            .lines()
            .map(
                |l| match l.split_whitespace().collect::<Vec<_>>().as_slice() {
                    [".equ", "PER,", ..] => format!("        .equ PER, {per}\n"),
                    [".equ", "PERB,", ..] => format!("        .equ PERB, {}\n", 4 * per),
                    _ => format!("{l}\n"),
                },
            )
            .collect();
        assemble(&src, self.name()).map_err(|e| BenchError::Program {
            file: self.name().to_string(),
            msg: e.to_string(),
        })
    }
}

/// One launch workload: a kernel, its data and the native reference.
struct Workload {
    kernel: LaunchKernel,
    groups: u32,
    per: u64,
    program: Program,
    decoded: Decoded,
    src: Vec<u32>,
    dst: Vec<u32>,
}

impl Workload {
    fn new(kernel: LaunchKernel, groups: u32, per: u64) -> Result<Workload, BenchError> {
        let program = kernel.program(per)?;
        let n = (u64::from(groups) * per) as usize;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x1a0c_0013);
        // Finite floats (for saxpy), or any words (for copy).
        let mut word = || {
            let r = rng.next_u32();
            match kernel {
                LaunchKernel::Saxpy => (((r % 4096) as f32) / 32.0 - 64.0).to_bits(),
                // |x| < 1/4: (x + 1)^24 stays normal, far from overflow and from subnormals
                // (which would time the host's slow path).
                LaunchKernel::Poly => (((r % 4096) as f32) / 8192.0 - 0.25).to_bits(),
                _ => r,
            }
        };
        let src: Vec<u32> = (0..n).map(|_| word()).collect();
        let dst: Vec<u32> = (0..n).map(|_| word()).collect();
        let decoded = Decoded::new(&program.code);
        Ok(Workload {
            kernel,
            groups,
            per,
            program,
            decoded,
            src,
            dst,
        })
    }

    /// A machine holding the initial data.
    fn machine(&self) -> Result<Machine, BenchError> {
        let mut m =
            Machine::new(&self.program, Config::for_program(&self.program, None)).map_err(|e| {
                BenchError::Program {
                    file: self.kernel.name().to_string(),
                    msg: e.to_string(),
                }
            })?;
        if self.kernel != LaunchKernel::Tiny {
            let mem = m.mem_mut().ok_or_else(|| self.bad("memory is shared"))?;
            for (addr, data) in [(SRC, &self.src), (DST, &self.dst)] {
                let bytes: Vec<u8> = data.iter().flat_map(|w| w.to_le_bytes()).collect();
                mem.bytes_mut(addr, bytes.len() as u64)
                    .ok_or_else(|| self.bad("buffer not mapped"))?
                    .copy_from_slice(&bytes);
            }
        }
        Ok(m)
    }

    fn bad(&self, why: &str) -> BenchError {
        BenchError::Program {
            file: self.kernel.name().to_string(),
            msg: why.to_string(),
        }
    }

    /// The guest output after a launch from the initial data, as words.
    fn guest_output(&self, m: &Machine) -> Vec<u32> {
        let (addr, n) = match self.kernel {
            LaunchKernel::Tiny => (SRC, 2 * self.groups as u64),
            _ => (DST, u64::from(self.groups) * self.per),
        };
        m.mem
            .bytes(addr, 4 * n)
            .unwrap_or_default()
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    /// The native loop over groups `[lo, hi)`, on `out` (the destination, or for tiny_g the
    /// output words).
    fn native_groups(&self, lo: usize, hi: usize, out: &mut [u32]) {
        let per = self.per as usize;
        match self.kernel {
            LaunchKernel::Saxpy => {
                for g in lo..hi {
                    let r = g * per..(g + 1) * per;
                    let (x, y) = (&self.src[r.clone()], &mut out[r.start - lo * per..][..per]);
                    for (y, &x) in y.iter_mut().zip(x) {
                        *y = (1.5f32 * f32::from_bits(x) + f32::from_bits(*y)).to_bits();
                    }
                }
            }
            LaunchKernel::Copy => {
                let r = lo * per..hi * per;
                out.copy_from_slice(&self.src[r]);
            }
            LaunchKernel::Poly => super::native::poly24(&self.src[lo * per..hi * per], out),
            LaunchKernel::Tiny => {
                for (g, o) in (lo..hi).zip(out.chunks_exact_mut(2)) {
                    o[0] = g as u32;
                    o[1] = 0;
                }
            }
        }
    }

    /// The native reference on `threads` threads: each takes a contiguous share of the
    /// groups. Returns its output and the wall time.
    fn native(&self, threads: usize) -> (Vec<u32>, f64) {
        let g = self.groups as usize;
        let words = match self.kernel {
            LaunchKernel::Tiny => 2,
            _ => self.per as usize,
        };
        let mut out = match self.kernel {
            LaunchKernel::Tiny => vec![0; 2 * g],
            _ => self.dst.clone(),
        };
        let t0 = Instant::now();
        std::thread::scope(|s| {
            let mut rest: &mut [u32] = &mut out;
            for t in 0..threads {
                let (lo, hi) = (g * t / threads, g * (t + 1) / threads);
                let (mine, tail) = rest.split_at_mut((hi - lo) * words);
                rest = tail;
                s.spawn(move || self.native_groups(lo, hi, mine));
            }
        });
        (out, t0.elapsed().as_secs_f64())
    }
}

/// A launch of `w` from `m` on `engine` at `threads`; returns the machine and the wall time.
fn timed_launch(
    w: &Workload,
    m: Machine,
    engine: Engine,
    threads: usize,
    check_races: bool,
    reuse: Option<&SharedCode>,
) -> (Machine, f64, u64) {
    let opts = LaunchOptions {
        engine,
        vm: VmOptions::default(),
        groups: w.groups,
        threads,
        check_races,
        timeline: false,
    };
    let t0 = Instant::now();
    let (l, m) = launch_reusing(m, &w.decoded, &[], &opts, reuse);
    (m, t0.elapsed().as_secs_f64(), l.stats.compile_us)
}

/// What `lanejit bench --groups` measures.
#[derive(Clone, Debug)]
pub struct LaunchBenchOptions {
    /// G for saxpy_g and copy_g.
    pub groups: u32,
    /// Thread counts, in order.
    pub threads: Vec<usize>,
    /// Source bytes in all (split over the groups).
    pub bytes: u64,
    /// Timed launches per measurement (the median is reported).
    pub reps: usize,
    /// Groups of tiny_g.
    pub tiny_groups: u32,
    /// The kernels to run (`--kernel`; every one by default), `check_races` included.
    pub kernels: Vec<String>,
    /// The engines to time besides native (`--engine`; every one by default).
    pub engines: Vec<Engine>,
}

/// The launch bench's kernel names for `--kernel`, `check_races` being the `--check-races`
/// cost on saxpy_g.
pub const KERNEL_NAMES: [&str; 5] = ["saxpy_g", "copy_g", "poly_g", "tiny_g", "check_races"];

const ENGINES: [(&str, Engine); 3] = [
    ("interp", Engine::Interp),
    ("jit", Engine::Jit),
    ("tiered", Engine::Tiered),
];

/// Run the launch benchmarks; returns the report text.
pub fn run(o: &LaunchBenchOptions, progress: &mut dyn FnMut(&str)) -> Result<String, BenchError> {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "launch benchmarks: {} groups, {} source bytes, threads {:?}, median of {} launches",
        o.groups, o.bytes, o.threads, o.reps
    );
    let wanted = |name: &str| o.kernels.iter().any(|k| k == name);
    let engines: Vec<(&str, Engine)> = ENGINES
        .into_iter()
        .filter(|(_, e)| o.engines.contains(e))
        .collect();
    for kernel in [LaunchKernel::Saxpy, LaunchKernel::Copy, LaunchKernel::Poly] {
        if !wanted(kernel.name()) {
            continue;
        }
        let per = (o.bytes / 4 / u64::from(o.groups)).max(1);
        if 4 * per * u64::from(o.groups) > MAX_BYTES {
            return Err(BenchError::BadSize {
                kernel: kernel.name(),
                size: o.bytes,
                why: "more than 64 MiB".into(),
            });
        }
        let w = Workload::new(kernel, o.groups, per)?;
        let _ = writeln!(
            s,
            "\n{} ({} groups x {} elements)\n{:<8} {:>7} {:>10} {:>8} {:>10} {:>8} {:>10} {:>8} {:>10}",
            kernel.name(),
            o.groups,
            per,
            "engine",
            "threads",
            "cold ms",
            "speed-up",
            "warm ms",
            "speed-up",
            "native ms",
            "/native",
            "compile ms"
        );
        // Every (engine, thread count) launch is first checked against the native output,
        // from a fresh machine. Then the timed launches are interleaved: each repetition
        // times native, and every engine cold and warm, at every thread count in turn, so
        // that the drift of a shared host's speed (which moved single-thread times by up to
        // 1.5x between minutes here) hits every thread count alike instead of biasing the
        // speed-ups.
        let (want, _) = w.native(o.threads[0]);
        let mut machines = Vec::new();
        for &(name, engine) in &engines {
            let mut last = None;
            for &t in &o.threads {
                progress(&format!("{} {name} x{t}: check", kernel.name()));
                let (m, _, _) = timed_launch(&w, w.machine()?, engine, t, false, None);
                if w.guest_output(&m) != want {
                    return Err(w.bad(&format!("{name} at {t} threads: output differs")));
                }
                last = Some(m);
            }
            machines.push(last.expect("at least one thread count"));
        }
        // Warm: the launches share one JIT per engine, warmed up by a first launch (the
        // interpreter has nothing to warm).
        let mut codes = Vec::new();
        for (k, &(_, engine)) in engines.iter().enumerate() {
            let code = shared_code(engine, &w.decoded, &machines[k], &VmOptions::default());
            if let Some(code) = &code {
                let m = machines.remove(k);
                let (m, _, _) = timed_launch(&w, m, engine, o.threads[0], false, Some(code));
                machines.insert(k, m);
            }
            codes.push(code);
        }
        let nt = o.threads.len();
        let mut native = vec![Vec::new(); nt];
        let mut cold = vec![vec![Vec::new(); nt]; engines.len()];
        let mut warm = vec![vec![Vec::new(); nt]; engines.len()];
        let mut compile = vec![vec![Vec::new(); nt]; engines.len()];
        for rep in 0..o.reps {
            progress(&format!(
                "{} repetition {}/{}",
                kernel.name(),
                rep + 1,
                o.reps
            ));
            for (ti, &t) in o.threads.iter().enumerate() {
                native[ti].push(w.native(t).1);
                for (k, &(_, engine)) in engines.iter().enumerate() {
                    let m = machines.remove(k);
                    // Cold: the launch creates its JIT and compiles its regions.
                    let (m, secs, cu) = timed_launch(&w, m, engine, t, false, None);
                    cold[k][ti].push(secs);
                    compile[k][ti].push(cu as f64 / 1e3);
                    let m = match &codes[k] {
                        None => {
                            warm[k][ti].push(secs);
                            m
                        }
                        Some(code) => {
                            let (m, secs, _) = timed_launch(&w, m, engine, t, false, Some(code));
                            warm[k][ti].push(secs);
                            m
                        }
                    };
                    machines.insert(k, m);
                }
            }
        }
        drop(machines);
        // A speed-up is the median over repetitions of the first thread count's time over
        // this one's in the same repetition (paired, so drift between repetitions cancels).
        let speedup = |v: &[Vec<f64>], ti: usize| {
            median(
                &v[0]
                    .iter()
                    .zip(&v[ti])
                    .map(|(a, b)| a / b)
                    .collect::<Vec<_>>(),
            )
        };
        for (ti, &t) in o.threads.iter().enumerate() {
            let nat = median(&native[ti]);
            for (k, &(name, _)) in engines.iter().enumerate() {
                let (c, wm) = (median(&cold[k][ti]), median(&warm[k][ti]));
                let _ = writeln!(
                    s,
                    "{name:<8} {t:>7} {:>10.2} {:>7.2}x {:>10.2} {:>7.2}x {:>10.2} {:>7.2}x {:>10.1}",
                    c * 1e3,
                    speedup(&cold[k], ti),
                    wm * 1e3,
                    speedup(&warm[k], ti),
                    nat * 1e3,
                    wm / nat,
                    median(&compile[k][ti])
                );
            }
            let _ = writeln!(
                s,
                "{:<8} {t:>7} {:>10.2} {:>7.2}x {:>10.2} {:>7.2}x",
                "native",
                nat * 1e3,
                speedup(&native, ti),
                nat * 1e3,
                speedup(&native, ti)
            );
        }
    }
    if wanted("tiny_g") {
        tiny(o, &engines, &mut s, progress)?;
    }
    if wanted("check_races") {
        check_races(o, &mut s, progress)?;
    }
    Ok(s)
}

/// Launch overhead: many groups of a tiny kernel.
fn tiny(
    o: &LaunchBenchOptions,
    engines: &[(&str, Engine)],
    s: &mut String,
    progress: &mut dyn FnMut(&str),
) -> Result<(), BenchError> {
    let w = Workload::new(LaunchKernel::Tiny, o.tiny_groups, 1)?;
    let _ = writeln!(
        s,
        "\ntiny_g: {} groups of 5 instructions; time per group (launch overhead included)",
        o.tiny_groups
    );
    for &t in &o.threads {
        let (want, native) = w.native(t);
        for &(name, engine) in engines {
            progress(&format!("tiny_g {name} x{t}"));
            let m = w.machine()?;
            let (m, secs, _) = timed_launch(&w, m, engine, t, false, None);
            if w.guest_output(&m) != want {
                return Err(w.bad(&format!("{name} at {t} threads: output differs")));
            }
            let _ = writeln!(
                s,
                "{name:<8} {t:>7} threads {:>8.3} us/group",
                secs * 1e6 / f64::from(o.tiny_groups)
            );
        }
        let _ = writeln!(
            s,
            "{:<8} {t:>7} threads {:>8.3} us/group",
            "native",
            native * 1e6 / f64::from(o.tiny_groups)
        );
    }
    Ok(())
}

/// `--check-races` against the plain interpreted launch, one thread.
fn check_races(
    o: &LaunchBenchOptions,
    s: &mut String,
    progress: &mut dyn FnMut(&str),
) -> Result<(), BenchError> {
    let per = (o.bytes / 4 / u64::from(o.groups)).max(1);
    let w = Workload::new(LaunchKernel::Saxpy, o.groups, per)?;
    progress("check-races");
    let mut plain = Vec::new();
    let mut checked = Vec::new();
    let mut m = w.machine()?;
    for _ in 0..o.reps {
        let (m2, p, _) = timed_launch(&w, m, Engine::Interp, 1, false, None);
        let (m3, c, _) = timed_launch(&w, m2, Engine::Interp, 1, true, None);
        m = m3;
        plain.push(p);
        checked.push(c);
    }
    let (p, c) = (median(&plain), median(&checked));
    let _ = writeln!(
        s,
        "\n--check-races on saxpy_g (interp, 1 thread): {:.2} ms vs {:.2} ms plain: {:.2}x",
        c * 1e3,
        p * 1e3,
        c / p
    );
    Ok(())
}
