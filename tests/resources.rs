//! Resource bounds of the `lanejit` binary: assembler time on inputs that used to be
//! quadratic, input that never ends, and output checks that must come before a run.
//!
//! Each case runs the binary as a child and reads the child's own CPU time (user + system)
//! and peak RSS from `wait4`, so the figures do not depend on wall-clock time or on what else
//! the machine is doing. Linux counts in a child's peak RSS the pages its fork copied from
//! the parent's page tables before `exec` (a parent with 200 MiB resident gives `/bin/true` a
//! 200 MiB peak): so these tests are a test binary of their own, whose process stays a few
//! MiB, instead of a module of `tests/it`, where the other tests running beside them (engines,
//! fuzz smoke) held 105-165 MiB when these children were forked and failed CI's 100 MiB bound. The bounds are generous: five to twenty times what the debug build
//! measured on a shared 2-core machine (figures in each test), and far below what the
//! unbounded or quadratic versions took.

use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// What one child used.
#[derive(Debug)]
struct Usage {
    /// Exit status (None when killed by a signal).
    code: Option<i32>,
    /// User + system CPU seconds.
    cpu: f64,
    /// Peak resident set, MiB.
    rss_mib: f64,
    stdout: Vec<u8>,
    stderr: String,
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lanejit-res-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Run `lanejit ARGS` with `stdin`, and measure it. The child's address space is capped at
/// 1 GiB (a run needs well under that) so that a regression fails the test instead of
/// exhausting the machine.
fn measure(
    name: &str,
    args: &[&str],
    stdin: Stdio,
    feed: Option<fn(std::process::ChildStdin)>,
) -> Usage {
    let out = tmp(&format!("{name}.out"));
    let err = tmp(&format!("{name}.err"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lanejit"));
    cmd.args(args)
        .stdin(stdin)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    // SAFETY: setrlimit is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            let cap = libc::rlimit {
                rlim_cur: 1 << 30,
                rlim_max: 1 << 30,
            };
            libc::setrlimit(libc::RLIMIT_AS, &cap);
            Ok(())
        });
    }
    #[allow(
        clippy::zombie_processes,
        reason = "reaped by wait4 below, for its rusage"
    )]
    let mut child = cmd.spawn().expect("lanejit runs");
    let feeder = child
        .stdin
        .take()
        .zip(feed)
        .map(|(pipe, f)| std::thread::spawn(move || f(pipe)));
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `child.id()` is our own unwaited child; status and ru are valid for writes.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut ru) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4 failed");
    if let Some(t) = feeder {
        t.join().unwrap();
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Usage {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        cpu: secs(ru.ru_utime) + secs(ru.ru_stime),
        rss_mib: ru.ru_maxrss as f64 / 1024.0,
        stdout: std::fs::read(&out).unwrap(),
        stderr: std::fs::read_to_string(&err).unwrap_or_default(),
    }
}

fn run(name: &str, args: &[&str]) -> Usage {
    measure(name, args, Stdio::null(), None)
}

fn assert_within(u: &Usage, what: &str, cpu: f64, rss_mib: f64) {
    eprintln!("{what}: {:.3} s CPU, {:.1} MiB RSS", u.cpu, u.rss_mib);
    assert!(
        u.cpu < cpu,
        "{what}: {:.3} s CPU (bound {cpu} s): {u:?}",
        u.cpu
    );
    assert!(
        u.rss_mib < rss_mib,
        "{what}: {:.1} MiB RSS (bound {rss_mib} MiB)",
        u.rss_mib
    );
}

fn assert_refused(u: &Usage, what: &str) {
    assert_eq!(u.code, Some(2), "{what}: {u:?}");
    assert!(u.stdout.is_empty(), "{what}: stdout must be empty");
    assert!(!u.stderr.is_empty(), "{what}: a message on stderr");
}

/// A 1 MB file of `.mem` lines (42 000 ranges, each splitting the map) assembles in under a
/// second. Measured: debug 0.30 s, release 0.03 s; before the interval map, 2.5 s of CPU in
/// release (7.7 s wall) and 21 s in debug.
#[test]
fn a_megabyte_of_mem_lines_assembles_in_under_a_second() {
    let mut src = String::new();
    let mut i = 0u64;
    while src.len() < 1 << 20 {
        let perm = if i % 3 == 0 { "r" } else { "rw" };
        src += &format!(".mem {:#x}, 4096, {perm}\n", i * 0x2000);
        i += 1;
    }
    src += "HALT\n";
    let f = tmp("mem.s");
    std::fs::write(&f, &src).unwrap();
    let out = tmp("mem.bin");
    let u = run(
        "mem",
        &["asm", f.to_str().unwrap(), "-o", out.to_str().unwrap()],
    );
    assert_eq!(u.code, Some(0), "{}", u.stderr);
    assert_within(&u, "1 MB of .mem lines", 1.0, 200.0);
}

/// A 3000-deep `.equ` chain written back to front assembles in under a second (it was
/// refused as circular past depth 1000, after 2.5 s). Measured: debug 0.05 s.
#[test]
fn a_deep_reversed_equ_chain_assembles_in_under_a_second() {
    let mut src = String::new();
    for i in 0..3000 {
        src += &format!(".equ e{i}, e{} + 1\n", i + 1);
    }
    src += ".equ e3000, 5\nS.LI s1, e0\nHALT\n";
    let f = tmp("equ.s");
    std::fs::write(&f, &src).unwrap();
    let u = run(
        "equ",
        &["run", f.to_str().unwrap(), "--engine", "interp", "--json"],
    );
    assert_eq!(u.code, Some(0), "{}", u.stderr);
    let json: serde_json::Value = serde_json::from_slice(&u.stdout).unwrap();
    assert_eq!(json["scalars"][1], "0xbbd");
    assert_within(&u, "3000-deep reversed .equ chain", 1.0, 200.0);
}

/// Input that never ends is refused at the source limit (64 MiB), quickly and without
/// holding more than the limit. Measured (debug): 0.05 s CPU, 70 MiB; before, past 2 GiB in
/// 3 s until killed.
#[test]
fn endless_sources_are_refused_at_the_limit() {
    let cases: [(&str, &[&str]); 3] = [
        ("zero-run", &["run", "/dev/zero"]),
        ("zero-asm", &["asm", "/dev/zero", "-o", "/dev/null"]),
        ("urandom-disasm", &["disasm", "/dev/urandom"]),
    ];
    for (name, args) in cases {
        let u = run(name, args);
        assert_refused(&u, name);
        assert!(u.stderr.contains("larger than the limit"), "{}", u.stderr);
        assert_within(&u, name, 3.0, 200.0);
    }
    // An endless pipe as /dev/stdin.
    let u = measure(
        "pipe",
        &["run", "/dev/stdin"],
        Stdio::piped(),
        Some(|mut pipe| {
            let chunk = vec![b'\n'; 1 << 16];
            // Stops when lanejit closes the pipe.
            while pipe.write_all(&chunk).is_ok() {}
        }),
    );
    assert_refused(&u, "endless pipe");
    assert_within(&u, "endless pipe", 3.0, 200.0);
}

/// `--load` reads no more than the mapped range it targets: `/dev/zero` into one mapped page
/// is refused after 4097 bytes. Measured (debug): under 0.01 s, 7 MiB.
#[test]
fn load_from_an_endless_file_is_refused() {
    let f = tmp("load.s");
    std::fs::write(&f, ".mem 0x1000, 0x1000, rw\nHALT\n").unwrap();
    for addr in ["0x1000", "0x1800", "0x0"] {
        let u = run(
            "load",
            &[
                "run",
                f.to_str().unwrap(),
                "--load",
                &format!("{addr}:/dev/zero"),
            ],
        );
        assert_refused(&u, "--load /dev/zero");
        assert_within(&u, "--load /dev/zero", 1.0, 100.0);
    }
}

/// `--save` to a path that cannot be created exits 2 before the program runs: a run that
/// takes seconds (600 million instructions; about 9 s of CPU in the debug build, 6 s in
/// release) costs nothing. Measured: under 0.01 s.
#[test]
fn unwritable_save_path_exits_before_running() {
    let f = tmp("spin.s");
    std::fs::write(
        &f,
        ".mem 0x1000, 0x1000, rw\nS.LI s1, -1\ntop: S.SUB s1, s1, 1\nBNE s1, 0, top\nHALT\n",
    )
    .unwrap();
    // (Permission bits do not stop root: a missing directory and a directory do.)
    let dir = std::env::temp_dir();
    for path in ["/nonexistent-dir/out.bin", dir.to_str().unwrap()] {
        let u = run(
            "save",
            &[
                "run",
                f.to_str().unwrap(),
                "--engine",
                "interp",
                "--max-instructions",
                "600000000",
                "--save",
                &format!("0x1000:8:{path}"),
            ],
        );
        assert_refused(&u, path);
        assert!(u.stderr.contains(path), "{}", u.stderr);
        assert_within(&u, "--save to an unwritable path", 0.5, 100.0);
    }
}

/// Unrolled loop bodies at VL 64 compile within a bound on `--engine jit` (every region
/// compiled on first entry): 250 per-lane shifts, 250 gathers, 250 FMAs. Before the compile
/// plan (`jit/src/translate/plan.rs`) the shifts took 19-20 s and 100 MiB on the default
/// engine; measured now (debug build, shared 2-core machine): 0.05-0.07 s of CPU and 11 MiB
/// each (they compile the straight form of the body).
#[test]
fn unrolled_vl64_loops_compile_within_their_bound() {
    for (name, op) in [
        ("shl", "V.SHL v1, v1, v2"),
        ("gather", "V.LW [s1 + (v2 << 2)], ->v1"),
        ("fma", "V.FMA.S v1, v3, v2"),
    ] {
        let body: String = (0..250).map(|_| format!("        {op}\n")).collect();
        let src = format!(
            "        .mem 0x10000000, 0x100000, rw\n        .text\n        S.LI s1, 0x10000000\n\
             S.LI s3, 4096\n        V.LANEID v2\n        V.AND v2, v2, 3\n        LOOP s3\n\
             {body}        ENDLOOP\n        HALT\n"
        );
        let path = tmp(&format!("big-{name}.s"));
        std::fs::write(&path, src).unwrap();
        let p = path.to_str().unwrap();
        let u = run(
            &format!("big-{name}"),
            &["run", p, "--engine", "jit", "--vl", "64", "--json"],
        );
        assert_eq!(u.code, Some(0), "{name}: {u:?}");
        assert_within(
            &u,
            &format!("250 x {name} at VL 64 on the jit engine"),
            5.0,
            400.0,
        );
    }
}
