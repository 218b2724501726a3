//! The `lanejit` command line: exit codes, JSON shape, dumps in flag order, `--load`/`--save`,
//! `--trace`, `asm`/`disasm` round trips, and bad input (exit 2, message on stderr, nothing on
//! stdout).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lanejit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lanejit"))
        .args(args)
        .output()
        .expect("runs")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lanejit-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn write(name: &str, text: &str) -> PathBuf {
    let p = tmp(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn kernel(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("seeds/kernels")
        .join(name)
        .display()
        .to_string()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

const SMALL: &str = "
        .mem 0x1000, 0x1000, rw
        .data 0x1000
buf:    .dword 0x1122334455667788
        .text
        S.LI s1, buf
        S.ADD s2, s1, 8
        V.LD [s1, lc0<<3], ->v1
        V.SD v1, [s2, lc0<<3]
        HALT
";

fn assert_bad_input(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(2),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "stdout must be empty: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!out.stderr.is_empty());
}

#[test]
fn json_result_has_the_contract_shape() {
    let src = write("small.s", SMALL);
    let out = lanejit(&[
        "run",
        src.to_str().unwrap(),
        "--engine",
        "interp",
        "--json",
        "--vl",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    assert_eq!(v["status"], "halted");
    assert_eq!(v["pc"], "0x28");
    assert_eq!(v["instructions"], 5);
    assert_eq!(v["trap"], serde_json::Value::Null);
    assert_eq!(v["mask"], "0x3");
    assert_eq!(v["lc0"], "0x0");
    assert_eq!(v["scalars"].as_array().unwrap().len(), 32);
    assert_eq!(v["scalars"][1], "0x1000");
    assert_eq!(v["scalars"][2], "0x1008");
    let vectors = v["vectors"].as_array().unwrap();
    assert_eq!(vectors.len(), 32);
    assert_eq!(vectors[1], serde_json::json!(["0x1122334455667788", "0x0"]));
    assert_eq!(v["dumps"], serde_json::json!([]));
    assert_eq!(v["engine_stats"]["jit_retired"], 0);
}

#[test]
fn dumps_follow_flag_order_and_empty_dumps_are_empty() {
    let src = write("dumps.s", SMALL);
    let out = lanejit(&[
        "run",
        src.to_str().unwrap(),
        "--json",
        "--engine",
        "interp",
        "--dump-tile",
        "0x10:2",
        "--dump-mem",
        "0x1008:8",
        "--dump-mem",
        "4096:0",
        "--dump-tile",
        "0:1",
        "--dump-mem",
        "0x50000000:0",
        "--dump-tile",
        "0xffffffffffffffff:0",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let d = &json(&out)["dumps"];
    assert_eq!(
        *d,
        serde_json::json!([
            {"space": "tile", "addr": "0x10", "hex": "0000"},
            {"space": "memory", "addr": "0x1008", "hex": "8877665544332211"},
            {"space": "memory", "addr": "0x1000", "hex": ""},
            {"space": "tile", "addr": "0x0", "hex": "00"},
            {"space": "memory", "addr": "0x50000000", "hex": ""},
            {"space": "tile", "addr": "0xffffffffffffffff", "hex": ""},
        ])
    );
}

#[test]
fn trap_and_limit_exit_codes() {
    let trap = write(
        "trap.s",
        "   .mem 0x1000, 0x1000, r\n   S.LI s1, 0x1ff8\n   V.SD v0, [s1, lc0<<3]\n   HALT\n",
    );
    let out = lanejit(&[
        "run",
        trap.to_str().unwrap(),
        "--json",
        "--engine",
        "interp",
        "--vl",
        "4",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["status"], "trapped");
    assert_eq!(v["pc"], "0x10");
    assert_eq!(
        v["trap"],
        serde_json::json!({"kind": "permission_fault", "pc": "0x10", "lane": 0,
                           "ea": "0x1ff8", "space": "memory", "access": "write"})
    );
    let src = write("limit.s", SMALL);
    let out = lanejit(&[
        "run",
        src.to_str().unwrap(),
        "--json",
        "--max-instructions",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(3));
    let v = json(&out);
    assert_eq!(v["status"], "limit");
    assert_eq!(v["instructions"], 2);
    assert_eq!(v["pc"], "0x18");
}

#[test]
fn bad_input_exits_2_with_nothing_on_stdout() {
    let src = write("ok.s", SMALL);
    let s = src.to_str().unwrap();
    assert_bad_input(&lanejit(&["run", "/nonexistent/file.s"]));
    assert_bad_input(&lanejit(&["run", s, "--vl", "3"]));
    assert_bad_input(&lanejit(&["run", s, "--vl", "128"]));
    assert_bad_input(&lanejit(&["run", s, "--engine", "gpu"]));
    assert_bad_input(&lanejit(&["run", s, "--mem-limit", "4097"]));
    assert_bad_input(&lanejit(&["run", s, "--mem-limit", "0x1000"]));
    assert_bad_input(&lanejit(&["run", s, "--dump-mem", "0x3000:4"]));
    assert_bad_input(&lanejit(&["run", s, "--dump-mem", "0x1ffe:4"]));
    assert_bad_input(&lanejit(&["run", s, "--dump-tile", "0xfffe:4"]));
    assert_bad_input(&lanejit(&["run", s, "--dump-mem", "zz"]));
    assert_bad_input(&lanejit(&["run", s, "--max-instructions", "-1"]));
    assert_bad_input(&lanejit(&["run", s, "--bogus"]));
    assert_bad_input(&lanejit(&["run", s, "--load", "0x1000:/nonexistent"]));
    let bad = write("bad.s", "  V.LWI [s1 + 5], ->v3\n  S.ADD s1, s1\n");
    let out = lanejit(&["run", bad.to_str().unwrap()]);
    assert_bad_input(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.s:1:"), "{err}");
    assert!(err.contains("bad.s:2:"), "every error is reported: {err}");
    let binary = tmp("garbage.bin");
    std::fs::write(&binary, [0xffu8, 0xfe, 0x00, 0x80]).unwrap();
    assert_bad_input(&lanejit(&["run", binary.to_str().unwrap()]));
    let truncated = tmp("truncated.bin");
    let good = tmp("good.bin");
    assert_eq!(
        lanejit(&["asm", s, "-o", good.to_str().unwrap()])
            .status
            .code(),
        Some(0)
    );
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() - 3]).unwrap();
    assert_bad_input(&lanejit(&["run", truncated.to_str().unwrap()]));
}

#[test]
fn asm_container_runs_and_disassembles_to_an_identical_container() {
    for k in ["gather.s", "transpose_tile.s", "stencil.s", "saxpy.s"] {
        let bin = tmp(&format!("{k}.bin"));
        let out = lanejit(&["asm", &kernel(k), "-o", bin.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let from_src = lanejit(&["run", &kernel(k), "--json", "--engine", "interp"]);
        let from_bin = lanejit(&["run", bin.to_str().unwrap(), "--json", "--engine", "interp"]);
        assert_eq!(
            json(&from_src)["scalars"],
            json(&from_bin)["scalars"],
            "{k}"
        );
        let dis = lanejit(&["disasm", bin.to_str().unwrap()]);
        assert_eq!(dis.status.code(), Some(0));
        let again_src = write(
            &format!("{k}.dis.s"),
            &String::from_utf8(dis.stdout).unwrap(),
        );
        let again = tmp(&format!("{k}.again.bin"));
        let out = lanejit(&[
            "asm",
            again_src.to_str().unwrap(),
            "-o",
            again.to_str().unwrap(),
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            std::fs::read(&bin).unwrap(),
            std::fs::read(&again).unwrap(),
            "{k}"
        );
    }
}

#[test]
fn load_save_and_trace() {
    let src = write("ls.s", SMALL);
    let input = tmp("in.bin");
    std::fs::write(&input, 0xdead_beef_0bad_f00du64.to_le_bytes()).unwrap();
    let saved = tmp("out.bin");
    let out = lanejit(&[
        "run",
        src.to_str().unwrap(),
        "--engine",
        "interp",
        "--load",
        &format!("0x1000:{}", input.display()),
        "--save",
        &format!("0x1008:8:{}", saved.display()),
        "--trace",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        std::fs::read(&saved).unwrap(),
        0xdead_beef_0bad_f00du64.to_le_bytes()
    );
    let trace = String::from_utf8_lossy(&out.stderr);
    // One line per retired instruction; lane accesses follow on indented lines.
    let lines: Vec<&str> = trace.lines().filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(lines.len(), 5, "one line per retired instruction:\n{trace}");
    assert!(
        lines[0].contains("0x0") && lines[0].contains("S.LI"),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains("s1"),
        "changed register shown: {}",
        lines[0]
    );
    assert!(lines[4].contains("HALT"));
    // summary mode names the status
    let out = lanejit(&["run", src.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("halted"));
}

#[cfg(unix)]
#[test]
fn a_fuzz_campaign_that_crashes_names_the_case_it_was_running() {
    // A case that kills the process (a fault in compiled code) writes no reproducer: the
    // campaign's fatal-signal handler names the case in flight and how to run it alone, and
    // the process still dies of the signal (the test hook raises SIGSEGV at case 7).
    let out_dir = tmp("crash-out");
    let out = Command::new(env!("CARGO_BIN_EXE_lanejit"))
        .args([
            "fuzz", "--cases", "12", "--seed", "3", "--jobs", "2", "--out",
        ])
        .arg(&out_dir)
        .env("LANEJIT_FUZZ_TEST_CRASH", "7")
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(11), "{err}");
    }
    assert!(
        err.contains("fatal signal 11 while running case 7 of seed 3; alone: lanejit fuzz --seed 3 --cases 12 --shard 7/12"),
        "{err}"
    );
    // Without the hook the same campaign finishes.
    let ok = lanejit(&[
        "fuzz",
        "--cases",
        "12",
        "--seed",
        "3",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

#[test]
fn a_fuzz_campaign_reports_an_engine_panic_as_a_divergence() {
    // A panic of an engine (a translator bug) is caught where the fuzzer runs the engine: the
    // case diverges, is shrunk and gets a reproducer that names the panic, the campaign goes
    // on with its other cases and exits 1 (the test hook panics in every jit run).
    let out_dir = tmp("panic-out");
    let out = Command::new(env!("CARGO_BIN_EXE_lanejit"))
        .args(["fuzz", "--cases", "3", "--seed", "3", "--out"])
        .arg(&out_dir)
        .env("LANEJIT_FUZZ_TEST_PANIC", "jit")
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("3 cases, 3 divergences"), "{text}");
    let repro = out_dir.join("div-3-1.s");
    let r = std::fs::read_to_string(&repro).expect("a reproducer");
    assert!(r.contains("; engines: interp vs jit"), "{r}");
    assert!(
        r.contains("; jit: panicked: LANEJIT_FUZZ_TEST_PANIC: jit"),
        "{r}"
    );
    // Replayed with the hook it diverges the same way; without it the engines agree.
    let replay = |hook: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_lanejit"));
        c.args(["fuzz", "--replay"]).arg(&repro);
        if hook {
            c.env("LANEJIT_FUZZ_TEST_PANIC", "jit")
                .env("RUST_BACKTRACE", "0");
        }
        c.output().expect("runs")
    };
    let again = replay(true);
    let said = String::from_utf8_lossy(&again.stdout);
    assert_eq!(again.status.code(), Some(1), "{said}");
    assert!(said.contains("jit: panicked:"), "{said}");
    let fine = replay(false);
    assert!(
        fine.status.success(),
        "{}",
        String::from_utf8_lossy(&fine.stdout)
    );
}

#[test]
fn fuzz_replay_refuses_invalid_config_values() {
    for config in [
        "--vl 3",
        "--vl 128",
        "--max-instructions x",
        "--vl",
        "--engine jit",
    ] {
        let f = write(
            "bad-config.s",
            &format!("; fuzz-config: {config}\n.vl 8\nHALT\n"),
        );
        let out = lanejit(&["fuzz", "--replay", f.to_str().unwrap()]);
        assert_bad_input(&out);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("fuzz-config"), "{config}: {err}");
    }
    let f = write(
        "good-config.s",
        "; fuzz-config: --vl 4 --strict-align --max-instructions 10\nHALT\n",
    );
    let out = lanejit(&[
        "fuzz",
        "--replay",
        f.to_str().unwrap(),
        "--engines",
        "interp",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A `--load` file larger than the mapped memory from its address is refused (exit 2) before
/// anything runs; one that fits exactly is loaded.
#[test]
fn load_is_bounded_by_the_mapped_range() {
    let src = write("load-bound.s", SMALL);
    let s = src.to_str().unwrap();
    let big = tmp("load-big.bin");
    std::fs::write(&big, vec![1u8; 0x1001]).unwrap();
    let out = lanejit(&["run", s, "--load", &format!("0x1000:{}", big.display())]);
    assert_bad_input(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("4096 bytes of mapped memory"), "{err}");
    // Past the start, the room shrinks.
    let fits = tmp("load-fits.bin");
    std::fs::write(&fits, vec![7u8; 0x800]).unwrap();
    assert_bad_input(&lanejit(&[
        "run",
        s,
        "--load",
        &format!("0x1801:{}", fits.display()),
    ]));
    let out = lanejit(&[
        "run",
        s,
        "--json",
        "--load",
        &format!("0x1800:{}", fits.display()),
        "--dump-mem",
        "0x1ffe:2",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["dumps"][0]["hex"], "0707");
    // Unmapped: no room at all (an empty file still loads).
    let empty = tmp("load-empty.bin");
    std::fs::write(&empty, b"").unwrap();
    assert_bad_input(&lanejit(&[
        "run",
        s,
        "--load",
        &format!("0x3000:{}", fits.display()),
    ]));
    assert_eq!(
        lanejit(&["run", s, "--load", &format!("0x3000:{}", empty.display())])
            .status
            .code(),
        Some(0)
    );
}

/// A source or container past its limit is refused by size alone, before it is read.
#[test]
fn oversized_program_files_are_refused() {
    let f = tmp("huge.s");
    let file = std::fs::File::create(&f).unwrap();
    // A sparse file: no disk space, but its size is past the source limit.
    file.set_len((64 << 20) + 1).unwrap();
    for args in [
        vec!["run", f.to_str().unwrap()],
        vec!["disasm", f.to_str().unwrap()],
        vec!["asm", f.to_str().unwrap(), "-o", "/dev/null"],
        vec!["fuzz", "--replay", f.to_str().unwrap()],
    ] {
        let out = lanejit(&args);
        assert_bad_input(&out);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("larger than the limit of 67108864 bytes"),
            "{args:?}: {err}"
        );
    }
    drop(file);
    let _ = std::fs::remove_file(&f);
}

/// `--save` to a path that cannot be opened fails before the run (exit 2, nothing on stdout);
/// a save that fails after the run (`/dev/full`) still prints the result and exits 4.
#[test]
fn save_paths_are_opened_before_the_run() {
    let src = write("save-check.s", SMALL);
    let s = src.to_str().unwrap();
    let out = lanejit(&["run", s, "--save", "0x1000:8:/nonexistent/dir/out.bin"]);
    assert_bad_input(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/dir/out.bin"));
    if Path::new("/dev/full").exists() {
        let out = lanejit(&["run", s, "--json", "--save", "0x1000:8:/dev/full"]);
        assert_eq!(out.status.code(), Some(4));
        assert_eq!(json(&out)["status"], "halted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--save 0x1000:8:/dev/full"), "{err}");
    }
    // A file may be loaded and saved in the same run: it is read before it is truncated.
    let both = tmp("load-and-save.bin");
    std::fs::write(&both, 0x0102_0304_0506_0708u64.to_le_bytes()).unwrap();
    let out = lanejit(&[
        "run",
        s,
        "--load",
        &format!("0x1000:{}", both.display()),
        "--save",
        &format!("0x1008:8:{}", both.display()),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        std::fs::read(&both).unwrap(),
        0x0102_0304_0506_0708u64.to_le_bytes()
    );
}

/// Run lanejit with `stdin` as its standard input.
fn lanejit_stdin(args: &[&str], stdin: &str) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_lanejit"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("runs");
    let mut pipe = child.stdin.take().expect("stdin");
    // A command that fails on its flags exits without reading: a broken pipe is fine then.
    let _ = pipe.write_all(stdin.as_bytes());
    drop(pipe);
    child.wait_with_output().expect("waits")
}

/// A kernel with float literals, an `.equ` size and `; expect` lines.
const TYPED: &str = "
; expect status halted
; expect mem out:f32 2.5 2.5 2.5 2.5
; expect s2 4
        .equ N, 4
        .mem 0x1000, 0x1000, rw
        .data 0x1000
in:     .word f32(-1.5), f32(2.5)
        .dword f64(0.1)
out:    .space 64
        .text
        S.LI s1, out
        S.LI s2, N
        S.LI s3, f32(2.5)
        LOOP s2
        V.MOV v1, s3
        V.SW v1, [s1, lc0<<2]
        ENDLOOP
        HALT
";

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn typed_and_symbolic_dumps() {
    let src = write("typed.s", TYPED);
    let f = src.to_str().unwrap();
    let out = lanejit(&[
        "run",
        f,
        "--json",
        "--dump-mem",
        "out:16:f32",
        "--dump-mem",
        "in+4:12",
        "--dump-mem",
        "in:8:i32",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j = json(&out);
    let d = &j["dumps"];
    assert_eq!(d[0]["addr"], "0x1010");
    assert_eq!(d[0]["hex"], "00002040000020400000204000002040");
    assert_eq!(d[0]["type"], "f32");
    assert_eq!(d[0]["values"], serde_json::json!([2.5, 2.5, 2.5, 2.5]));
    // Without a type the dump is exactly the contract's three keys.
    let keys: Vec<&String> = d[1].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["space", "addr", "hex"]);
    assert_eq!(d[1]["addr"], "0x1004");
    assert_eq!(d[2]["values"], serde_json::json!([-1077936128, 1075838976]));
    let out = lanejit(&["run", f, "--dump-mem", "in:16:f64", "--dump-mem", "out:4"]);
    let text = stdout(&out);
    assert!(
        text.contains("dump memory 0x1000, 16 bytes as f64:\n00001000  "),
        "{text}"
    );
    assert!(text.contains(" 0.1\n"), "{text}");
    assert!(
        text.contains("00001010  00 00 20 40 ") && text.contains("|.. @|\n00001014\n"),
        "{text}"
    );
    assert!(
        text.starts_with("engine tiered, VL 32: 8 instructions in "),
        "{text}"
    );
    for bad in ["nowhere:4", "out:6:f32", "out:4:f16", "0x9000:4", "in-8:4"] {
        assert_bad_input(&lanejit(&["run", f, "--dump-mem", bad]));
    }
    let out = lanejit(&["run", f, "--dump-mem", "ot:4"]);
    assert!(
        stderr(&out).contains("did you mean `out`?"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn show_prints_typed_lanes() {
    let src = write("show.s", TYPED);
    let f = src.to_str().unwrap();
    let out = lanejit(&["run", f, "--vl", "4", "--show", "v1:f32", "--show", "s2"]);
    let text = stdout(&out);
    assert!(text.contains("v1 as f32: [2.5, 2.5, 2.5, 2.5]\n"), "{text}");
    assert!(text.contains("s2 as u64: [4]\n"), "{text}");
    let j = json(&lanejit(&[
        "run", f, "--vl", "2", "--json", "--show", "v1:i16",
    ]));
    assert_eq!(j["show"][0]["values"], serde_json::json!([0, 0]));
    assert_bad_input(&lanejit(&["run", f, "--show", "v32"]));
}

#[test]
fn check_passes_fails_and_is_bad_input_without_expectations() {
    let ok = write("check_ok.s", TYPED);
    let out = lanejit(&["run", ok.to_str().unwrap(), "--check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("check: all 3 expectations hold"));
    let bad = write(
        "check_bad.s",
        &TYPED.replace("2.5 2.5 2.5 2.5", "2.5 2.5 9 2.5"),
    );
    let out = lanejit(&["run", bad.to_str().unwrap(), "--check", "--json"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    json(&out);
    let err = stderr(&out);
    assert!(
        err.contains("check_bad.s:3: expect mem out:f32 2.5 2.5 9 2.5: first difference at 0x1018 (element 2): got 2.5 2.5, expected 9.0 2.5"),
        "{err}"
    );
    assert!(err.contains("check: 1 of 3 expectations failed"), "{err}");
    // Every example kernel meets its expectations on every engine.
    for k in ["saxpy.s", "gather.s", "fault_atomic.s", "transpose_tile.s"] {
        for engine in ["interp", "jit", "tiered"] {
            let out = lanejit(&["run", &kernel(k), "--check", "--engine", engine]);
            assert_eq!(out.status.code(), Some(0), "{k} {engine}: {}", stderr(&out));
        }
    }
    let none = write("check_none.s", "HALT\n");
    assert_bad_input(&lanejit(&["run", none.to_str().unwrap(), "--check"]));
    let malformed = write("check_malformed.s", "; expect s1 zero\nHALT\n");
    assert_bad_input(&lanejit(&["run", malformed.to_str().unwrap(), "--check"]));
}

#[test]
fn stdin_and_set() {
    let out = lanejit_stdin(&["run", "-", "--json", "--set", "N=2"], TYPED);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["scalars"][2], "0x2");
    assert_eq!(j["lc0"], "0x20");
    let out = lanejit_stdin(&["run", "-", "--set", "N=f32(1)", "--json"], TYPED);
    assert_eq!(json(&out)["scalars"][2], "0x3f800000");
    let out = lanejit_stdin(&["run", "-", "--set", "M=2"], TYPED);
    assert_bad_input(&out);
    assert!(
        stderr(&out).contains("error: the program has no `.equ M` to override\n = note: --set M\n"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("help: did you mean `N`?"));
    assert_bad_input(&lanejit_stdin(&["run", "-", "--set", "N=1 +"], TYPED));
    assert_bad_input(&lanejit_stdin(&["run", "-", "--set", "N"], TYPED));
    let out = lanejit_stdin(&["run", "-"], "HALT\nbad\n");
    assert_bad_input(&out);
    assert!(
        stderr(&out).contains("--> <stdin>:2:1\n"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn float_literals_round_trip_through_asm_and_disasm() {
    let src = write("floats.s", TYPED);
    let bin = tmp("floats.bin");
    let out = lanejit(&["asm", src.to_str().unwrap(), "-o", bin.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let dis = lanejit(&["disasm", bin.to_str().unwrap()]);
    let text = stdout(&dis);
    assert!(text.contains("S.LI s3, 0x40200000"), "{text}");
    let again = write("floats_again.s", &text);
    let bin2 = tmp("floats_again.bin");
    let out = lanejit(&["asm", again.to_str().unwrap(), "-o", bin2.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read(&bin).unwrap(), std::fs::read(&bin2).unwrap());
    let bad = write("floats_bad.s", "S.LI s1, f32(2,5)\nHALT\n");
    let out = lanejit(&["run", bad.to_str().unwrap()]);
    assert_bad_input(&out);
    assert!(
        stderr(&out).contains("floats_bad.s:1:10\n"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn did_you_mean() {
    let src = write(
        "typo.s",
        "        .equ SIZE, 4\n        S.LI s1, SIZ\n        V.MOOV v1, s1\n        .wrod 1\n        HALT\n",
    );
    let out = lanejit(&["run", src.to_str().unwrap()]);
    assert_bad_input(&out);
    let err = stderr(&out);
    for want in [
        "error: undefined symbol `SIZ`\n",
        "typo.s:2:18\n",
        "help: did you mean `SIZE`?",
        "error: unknown instruction `V.MOOV`\n",
        "typo.s:3:9\n",
        "help: did you mean `V.MOV`?",
        "help: did you mean `.word`?",
    ] {
        assert!(err.contains(want), "{want}\n{err}");
    }
    assert!(
        err.ends_with(
            "error: could not assemble `{}` due to 3 errors\n"
                .replace("{}", src.to_str().unwrap())
                .as_str()
        ),
        "{err}"
    );
    assert!(
        !err.contains('\u{1b}'),
        "no colour when stderr is not a terminal"
    );
    // Clap's errors come in the same style.
    let out = lanejit(&["run", src.to_str().unwrap(), "--vll", "4"]);
    assert_bad_input(&out);
    let err = stderr(&out);
    assert!(
        err.starts_with("error: unexpected argument '--vll' found\n"),
        "{err}"
    );
    assert!(
        err.contains("help: a similar argument exists: '--vl'"),
        "{err}"
    );
}

#[test]
fn trace_on_another_engine_says_it_runs_on_the_interpreter() {
    let src = write("trace_note.s", SMALL);
    let f = src.to_str().unwrap();
    let out = lanejit(&["run", f, "--trace", "--engine", "jit"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("--trace runs on the reference interpreter, not on --engine jit"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).starts_with("engine interp,"),
        "{}",
        stdout(&out)
    );
    let out = lanejit(&["run", f, "--trace"]);
    assert!(!stderr(&out).contains("note:"), "{}", stderr(&out));
}

/// A kernel with labels, a gather load, a store and a trapping store.
const TRACED: &str = "
        .mem 0x1000, 0x1000, rw
        .mem 0x2000, 0x1000, r
        .data 0x1000
xs:     .word 10, 20, 30, 40
        .text
        S.LI s1, xs
        S.LI s2, 0x2000
        V.LANEID v2
top:    V.LW [s1 + (v2 << 2)], ->v3
        V.SW.local v3, [s0 + (v2 << 2)]
        NOP
        V.SW v3, [s2 + (v2 << 2)]
        HALT
";

#[test]
fn trace_is_a_commit_log_with_accesses_labels_and_source_lines() {
    let src = write("traced.s", TRACED);
    let f = src.to_str().unwrap();
    let out = lanejit(&["run", f, "--vl", "2", "--trace"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let trace = stderr(&out);
    let want = [
        "4 0x0028 <top> mask=0x3 V.LW [s1 + (v2 << 2)], ->v3 v3=[0xa 0x14]",
        "  read  memory lane 0  ea 0x1000 -> 0xa",
        "  read  memory lane 1  ea 0x1004 -> 0x14",
        "5 0x0030 <top+0x8> mask=0x3 V.SW.local v3, [s0 + (v2 << 2)]",
        "  write tile lane 0  ea 0x0 bytes 0a000000",
        "  write tile lane 1  ea 0x4 bytes 14000000",
        "trap permission_fault at 0x0040 <top+0x18>: V.SW v3, [s2 + (v2 << 2)] (",
        "traced.s:13); lane 0 write memory ea 0x2000",
    ];
    for w in want {
        assert!(trace.contains(w), "missing {w:?} in\n{trace}");
    }
    // The readable result names the trap's instruction and source line too.
    assert!(
        stdout(&out).contains("V.SW v3, [s2 + (v2 << 2)] (")
            && stdout(&out).contains("traced.s:13)"),
        "{}",
        stdout(&out)
    );
    // Filters: from the 5th retired on, at most 2; only pc `top`; to a file.
    let out = lanejit(&[
        "run",
        f,
        "--vl",
        "2",
        "--trace-from",
        "5",
        "--trace-count",
        "2",
    ]);
    let heads: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| !l.starts_with("  ") && !l.starts_with("trap"))
        .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(heads, ["5 0x0030", "6 0x0038"], "{}", stderr(&out));
    let log = tmp("trace.log");
    let out = lanejit(&[
        "run",
        f,
        "--vl",
        "2",
        "--trace-pc",
        "top",
        "--trace-file",
        log.to_str().unwrap(),
    ]);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&log).unwrap();
    let heads: Vec<&str> = text.lines().filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(heads.len(), 2, "{text}");
    assert!(heads[0].contains("<top> "), "{text}");
    assert!(heads[1].starts_with("trap permission_fault"), "{text}");
    for bad in ["nowhere", "0x4", "0x1000"] {
        assert_bad_input(&lanejit(&["run", f, "--trace-pc", bad]));
    }
}

/// A container keeps the source's line table: its traps and traces name the source's
/// `file:line`, its listing carries `.file`/`.loc`, and `--no-lines` leaves the table out.
#[test]
fn containers_name_the_source_lines_of_their_traps() {
    let src = write("traced-bin.s", TRACED);
    let bin = tmp("traced.bin");
    let b = bin.to_str().unwrap();
    let out = lanejit(&["asm", src.to_str().unwrap(), "-o", b]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = lanejit(&["run", b, "--vl", "2", "--trace"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    for text in [stdout(&out), stderr(&out)] {
        assert!(
            text.contains(
                "trap permission_fault at 0x0040 <top+0x18>: V.SW v3, [s2 + (v2 << 2)] ("
            ) && text.contains("traced-bin.s:13); lane 0 write memory ea 0x2000"),
            "{text}"
        );
    }
    let listing = stdout(&lanejit(&["disasm", b]));
    assert!(
        listing.contains("traced-bin.s\"\n    .loc 7\n    S.LI s1, 0x1000\n")
            && listing.contains("    .loc 13\n    V.SW v3"),
        "{listing}"
    );
    let bare = tmp("traced-bare.bin");
    let out = lanejit(&[
        "asm",
        src.to_str().unwrap(),
        "-o",
        bare.to_str().unwrap(),
        "--no-lines",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bytes = std::fs::read(&bare).unwrap();
    assert_eq!(bytes[8], 1, "version 1 without a line table");
    let out = lanejit(&["run", bare.to_str().unwrap(), "--vl", "2"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("V.SW v3, [s2 + (v2 << 2)]; lane 0"),
        "no source line: {}",
        stdout(&out)
    );
    // A damaged line table is bad input, not a panic.
    let mut bytes = std::fs::read(&bin).unwrap();
    let n = bytes.len();
    bytes[n - 1] = 0x80;
    let bad = tmp("traced-bad.bin");
    std::fs::write(&bad, &bytes).unwrap();
    let out = lanejit(&["run", bad.to_str().unwrap()]);
    assert_bad_input(&out);
    assert!(stderr(&out).contains("line table"), "{}", stderr(&out));
}

/// `lanejit compare FILE --engines interp,jit ARGS` under the test-only fault hook
/// `LANEJIT_TEST_CORRUPT=SPEC` (`src/compare.rs`): in a debug build the engines disagree
/// (exit 1) and the report comes back; the hook exists in debug builds only, so in a
/// release build the engines must agree (exit 0) and `None` comes back.
fn compare_corrupted(file: &str, spec: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_lanejit"))
        .args(["compare", file, "--engines", "interp,jit"])
        .args(args)
        .env("LANEJIT_TEST_CORRUPT", spec)
        .output()
        .expect("runs");
    let text = stdout(&out);
    if cfg!(debug_assertions) {
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        Some(text)
    } else {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(text.ends_with("all agree\n"), "{text}");
        None
    }
}

#[test]
fn compare_agrees_or_names_the_first_differing_instruction() {
    let src = write("cmp.s", TRACED);
    let f = src.to_str().unwrap();
    let out = lanejit(&["compare", f, "--vl", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for e in ["interp ", "jit ", "tiered "] {
        assert!(
            text.contains(e) && text.contains("trapped, 6 instructions"),
            "{text}"
        );
    }
    assert!(text.ends_with("all agree\n"), "{text}");
    // The test-only fault hook: jit runs that retire 5 or more instructions end with s31
    // flipped, so the engines first differ after instruction 5. It exists in debug builds
    // only (`src/compare.rs`): a release build ignores it, and the engines agree.
    if let Some(text) = compare_corrupted(f, "jit:5", &["--vl", "2"]) {
        for want in [
            "interp and jit differ: their states first differ after 5 retired instructions\n",
            "instruction #5 at 0x0030 <top+0x8>: V.SW.local v3, [s0 + (v2 << 2)] (",
            "cmp.s:11)\n",
            "state after 5 instructions:\n  s31            interp: 0x0                  jit: 0x1\n",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
    }
    assert_bad_input(&lanejit(&["compare", f, "--engines", "jit"]));
    assert_bad_input(&lanejit(&["compare", f, "--engines", "jit,fast"]));
    assert_bad_input(&lanejit(&["compare", "/nonexistent.s"]));
}

/// Four groups; group g loops g times before writing its id, so it retires 7 + 3g
/// instructions (46 in all).
const LOOPING_GROUPS: &str = "
        .groups 4
        .mem 0x1000, 0x1000, rw
        .text
        S.GID s1
top:    BEQ s1, 0, done
        S.SUB s1, s1, 1
        J top
done:   S.GID s2
        S.SHL s3, s2, 3
        S.ADD s3, s3, 0x1000
        V.SDI s2, [s3]
        HALT
";

#[test]
fn compare_launches_and_locates_the_first_differing_group() {
    let src = write("cmp-groups.s", LOOPING_GROUPS);
    let f = src.to_str().unwrap();
    for threads in ["1", "3"] {
        let out = lanejit(&["compare", f, "--threads", threads, "--vl", "4"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = stdout(&out);
        let want = format!("halted, 46 instructions, 4 groups on {threads} threads");
        assert_eq!(text.matches(&want).count(), 3, "{text}");
        assert!(text.ends_with("all agree\n"), "{text}");
    }
    for bad in [
        &["--groups", "0"][..],
        &["--threads", "0"],
        &["--groups", "x"],
    ] {
        let mut args = vec!["compare", f];
        args.extend_from_slice(bad);
        assert_bad_input(&lanejit(&args));
    }
    // (`compare_corrupted`: in a release build the hook is ignored and the engines agree.)
    let corrupt = |spec: &str, args: &[&str]| compare_corrupted(f, spec, args);
    let Some(text) = corrupt("jit:12", &["--threads", "2"]) else {
        return;
    };
    // The hook flips s31 of jit groups that retire 12 or more: groups 2 and 3. The launch
    // results differ (s31 of the reported group: the hook also corrupts a launch whose groups
    // retire 12 in all), and in reference order group 2 is the first to differ, after its
    // 12th instruction.
    for want in [
        "interp and jit differ on the launch of 4 groups:\n  s31            interp: 0x0                  jit: 0x1\n",
        "in reference order they first differ in group 2: its states first differ after 12 of \
         its retired instructions\n",
        "instruction #12 of group 2 at 0x0038 <done+0x18>: V.SDI s2, [s3 + (0 << 3)] (",
        "cmp-groups.s:12)\n",
        "state of group 2 after 12 instructions:\n  s31            interp: 0x0                  jit: 0x1\n",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    // Under an instruction limit per group the same: groups 2 and 3 reach 12 before 14.
    let text = corrupt("jit:12", &["--threads", "1", "--max-instructions", "14"]).expect("debug");
    assert!(text.contains("limit, 44 instructions"), "{text}");
    assert!(text.contains("first differ in group 2"), "{text}");
    // 40 is more than any group retires, but not than the launch: no group differs alone.
    let text = corrupt("jit:40", &[]).expect("debug");
    assert!(
        text.contains("run one group at a time in reference order, every group agrees"),
        "{text}"
    );
}

#[test]
fn launch_bench_reports_every_engine_at_every_thread_count() {
    // Small launches (the output of each engine at each thread count is checked against the
    // native reference before timing; a mismatch fails the command).
    let out = Command::new(env!("CARGO_BIN_EXE_lanejit"))
        .args([
            "bench",
            "--groups",
            "4",
            "--threads",
            "1,2",
            "--sizes",
            "64K",
        ])
        .args(["--reps", "2", "--kernel", "saxpy_g,copy_g"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for kernel in ["saxpy_g", "copy_g"] {
        let at = text.find(&format!("\n{kernel} (4 groups")).expect(kernel);
        let rows: Vec<Vec<&str>> = text[at..]
            .lines()
            .skip(3)
            .take(8)
            .map(|l| l.split_whitespace().collect())
            .collect();
        let want = ["interp", "jit", "tiered", "native"];
        for (i, row) in rows.iter().enumerate() {
            let t = if i < 4 { "1" } else { "2" };
            assert_eq!((row[0], row[1]), (want[i % 4], t), "{text}");
            // Speed-ups are over the first thread count: 1.00x there.
            if t == "1" {
                assert_eq!(row[3], "1.00x", "{text}");
            }
            assert!(row[3].ends_with('x') && row[5].ends_with('x'), "{text}");
        }
    }
}

#[test]
fn bench_times_user_kernels_with_spread_and_baselines() {
    let dir = tmp("bench-dir");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("tiny.s");
    std::fs::write(&src, format!("; bench: elements=N\n{TYPED}")).unwrap();
    let f = src.to_str().unwrap();
    let bench = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_lanejit"))
            .arg("bench")
            .args(args)
            .current_dir(&dir)
            .output()
            .expect("runs")
    };
    let out = bench(&[f, "--quick", "--set", "N=8", "--save-baseline", "first"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert!(
        lines[0].contains("median")
            && lines[0].contains("95% CI of median")
            && lines[0].trim_end().ends_with("compile"),
        "{text}"
    );
    let engines = ["interp", "jit", "jit-warm", "tiered", "tiered+cache"];
    for (line, engine) in lines[1..].iter().zip(engines) {
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!((cols[0], cols[1]), (f, engine), "{line}");
        assert!(line.contains(" .. "), "{line}");
    }
    // The compile column: none on the interpreter; a cold JIT run compiles its regions, the
    // warm one compiled them all in its warm-up run.
    let compile = |row: usize| {
        lines[row]
            .split_whitespace()
            .rev()
            .take(2)
            .collect::<Vec<_>>()
    };
    assert_eq!(compile(1)[0], "-", "{text}");
    assert_ne!(compile(2), ["us", "0.0"], "{text}");
    assert_eq!(compile(3), ["us", "0.0"], "{text}");
    // Progress went to stderr, one line per measurement (stderr is not a terminal here).
    assert_eq!(
        stderr(&out).matches("bench: ").count(),
        6,
        "{}",
        stderr(&out)
    );
    let saved = std::fs::read_to_string(dir.join(".lanejit-baselines/first.json")).unwrap();
    let j: serde_json::Value = serde_json::from_str(&saved).unwrap();
    let ms = j["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 5);
    assert_eq!(ms[0]["elements"], 8, "the .equ as --set made it");
    assert_eq!(ms[0]["samples"].as_array().unwrap().len(), 3);
    assert!(ms[0]["compile"].is_null(), "{saved}");
    assert!(ms[1]["compile"].as_f64().unwrap() > 0.0, "{saved}");
    assert_eq!(ms[2]["compile"].as_f64(), Some(0.0), "{saved}");
    // Every engine ran the program to its end.
    assert!(
        ms.iter()
            .all(|m| m["instructions"] == ms[0]["instructions"]),
        "{saved}"
    );
    // A baseline saved before the compile column still reads.
    let mut old = j.clone();
    for m in old["measurements"].as_array_mut().unwrap() {
        m.as_object_mut().unwrap().remove("compile");
    }
    std::fs::write(
        dir.join(".lanejit-baselines/old.json"),
        serde_json::to_string(&old).unwrap(),
    )
    .unwrap();
    let out = bench(&[f, "--quick", "--engine", "jit-warm", "--baseline", "old"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).lines().nth(1).unwrap().ends_with('%'));
    let out = bench(&[f, "--quick", "--engine", "jit", "--json", "--reps", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["measurements"][0]["engine"], "jit");
    assert_eq!(j["measurements"][0]["samples"].as_array().unwrap().len(), 2);
    let out = bench(&[f, "--quick", "--engine", "interp", "--baseline", "first"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.lines().next().unwrap().ends_with("vs baseline"),
        "{text}"
    );
    assert!(text.lines().nth(1).unwrap().ends_with('%'), "{text}");
    for bad in [
        &[f, "--baseline", "missing"][..],
        &[f, "--engine", "native"],
        &[f, "--set", "X=1"],
        &[f, "--save-baseline", "../up"],
        &["/nonexistent.s"],
    ] {
        let out = bench(bad);
        assert_bad_input(&out);
    }
}

/// A launch of `G` groups: each writes its group id into its own dword and halts.
const GROUPS: &str = "
        .groups 3
        .mem 0x1000, 0x1000, rw
        .text
        S.GID s1
        S.NGROUPS s2
        S.SHL s3, s1, 3
        S.ADD s3, s3, 0x1000
        V.SDI s1, [s3]
        HALT
";

#[test]
fn launches_report_their_group_and_counts_and_single_groups_do_not() {
    let src = write("groups.s", GROUPS);
    let path = src.to_str().unwrap();
    let single = json(&lanejit(&["run", path, "--json", "--groups", "1"]));
    assert!(single.get("group").is_none() && single.get("groups").is_none());
    assert_eq!(single["scalars"][2], "0x1");
    for threads in ["1", "2", "3"] {
        let out = lanejit(&[
            "run",
            path,
            "--json",
            "--threads",
            threads,
            "--dump-mem",
            "0x1000:32",
        ]);
        assert_eq!(out.status.code(), Some(0));
        let v = json(&out);
        assert_eq!(v["group"], 0);
        assert_eq!(
            v["groups"],
            serde_json::json!({"halted": 3, "trapped": 0, "limit": 0})
        );
        assert_eq!(v["instructions"], 18);
        assert_eq!(v["scalars"][2], "0x3", "S.NGROUPS reads G");
        assert_eq!(
            v["dumps"][0]["hex"],
            "0000000000000000010000000000000002000000000000000000000000000000"
        );
    }
    // The flag wins over the directive.
    let v = json(&lanejit(&["run", path, "--json", "--groups", "5"]));
    assert_eq!(v["groups"]["halted"], 5);
    assert_eq!(v["scalars"][2], "0x5");
    let text = lanejit(&["run", path]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("groups: 3 halted, 0 trapped, 0 at the limit"),
        "{text}"
    );
}

#[test]
fn launch_exit_codes_follow_the_launch_status() {
    let path = kernel("groups/group_traps.s");
    assert_eq!(lanejit(&["run", &path]).status.code(), Some(1));
    let path = kernel("groups/limits.s");
    let out = lanejit(&["run", &path, "--max-instructions", "20"]);
    assert_eq!(out.status.code(), Some(3));
    let path = kernel("groups/race_read.s");
    assert_eq!(lanejit(&["run", &path]).status.code(), Some(0));
    let out = lanejit(&["run", &path, "--check-races", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json(&out)["trap"]["kind"], "data_race");
}

/// `run --check` evaluates a launch's expectations (the reported group, the counts, a race's
/// earlier access, memory after the launch and the reported group's tile), at any thread
/// count, under the flags each kernel's `; flags` lines name.
#[test]
fn check_evaluates_launch_expectations() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/kernels/groups");
    let mut kernels = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let src = std::fs::read_to_string(&path).unwrap();
        let p = path.to_str().unwrap();
        let flags = lanejit_interp::expect::flags(&src);
        for threads in ["1", "2"] {
            let mut args = vec!["run", p, "--check", "--threads", threads, "--json"];
            args.extend(flags.iter().map(String::as_str));
            let out = lanejit(&args);
            assert_eq!(out.status.code(), Some(0), "{p}: {}", stderr(&out));
            // The ranges the check reads are not the run's dumps.
            assert_eq!(json(&out)["dumps"], serde_json::json!([]), "{p}");
        }
        kernels += 1;
    }
    assert!(kernels >= 8);
    let race = std::fs::read_to_string(kernel("groups/race_read.s")).unwrap();
    let bad = write(
        "race_bad.s",
        &race
            .replace("; expect group 2", "; expect group 1")
            .replace("access write\n", "access read\n")
            .replace(
                "; expect mem 0x10010 07000000",
                "; expect mem 0x10010 08000000",
            ),
    );
    let out = lanejit(&["run", bad.to_str().unwrap(), "--check", "--check-races"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let err = stderr(&out);
    for want in [
        "expect group 1: got group 2",
        "expect other group 1 pc 0x30 access read: got other group 1 pc 0x30 access write",
        "expect mem 0x10010 08000000: first difference at 0x10010 (element 0): got 07",
        "check: 3 of 7 expectations failed",
    ] {
        assert!(err.contains(want), "missing {want:?} in\n{err}");
    }
    // A single group is a launch of one.
    let one = write(
        "one_group.s",
        "HALT\n; expect group 0\n; expect groups 1 0 0\n",
    );
    let out = lanejit(&["run", one.to_str().unwrap(), "--check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = lanejit(&["run", one.to_str().unwrap(), "--check", "--groups", "2"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("got groups 2 0 0"),
        "{}",
        stderr(&out)
    );
    // Tracing a launch is still refused, with or without --check.
    let out = lanejit(&[
        "run",
        one.to_str().unwrap(),
        "--check",
        "--trace",
        "--groups",
        "2",
    ]);
    assert_bad_input(&out);
}

#[test]
fn bad_launch_flags_are_bad_input() {
    let src = write("groups-bad.s", GROUPS);
    let path = src.to_str().unwrap();
    for flags in [
        &["--groups", "0"][..],
        &["--groups", "16777217"],
        &["--threads", "0"],
        &["--threads", "1025"],
        &["--groups", "x"],
        &["--trace", "--groups", "2"],
    ] {
        let mut args = vec!["run", path];
        args.extend_from_slice(flags);
        assert_bad_input(&lanejit(&args));
    }
    for bad in [".groups 0", ".groups 16777217", ".groups 2\n.groups 3"] {
        let src = write("groups-dir.s", &format!("{bad}\n.text\nHALT\n"));
        assert_bad_input(&lanejit(&["run", src.to_str().unwrap()]));
    }
}

/// A single-group run's timeline: the run as one chunk, and every region the JIT compiled as
/// a compile event on the thread that compiled it (`--engine jit`: the run's own, inside its
/// span), one per compiled region of the result's engine statistics.
#[test]
fn timeline_shows_every_compile_against_the_run() {
    let trace = tmp("timeline-compiles.json");
    // No code cache: every region is compiled here.
    let out = Command::new(env!("CARGO_BIN_EXE_lanejit"))
        .args(["run", &kernel("stencil.s"), "--engine", "jit", "--json"])
        .arg("--timeline")
        .arg(&trace)
        .env_remove("LANEJIT_CODE_CACHE")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).expect("result");
    let compiled = result["engine_stats"]["compiled_regions"].as_u64().unwrap();
    assert!(compiled > 1, "the kernel's regions compile");
    let t: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&trace).unwrap()).expect("trace is JSON");
    let events = t["traceEvents"].as_array().unwrap();
    let runs: Vec<&serde_json::Value> = events.iter().filter(|e| e["cat"] == "groups").collect();
    assert_eq!(runs.len(), 1, "one chunk: the run");
    assert_eq!(runs[0]["name"], "group 0");
    let end = runs[0]["dur"].as_f64().unwrap();
    let compiles: Vec<&serde_json::Value> =
        events.iter().filter(|e| e["cat"] == "compile").collect();
    assert_eq!(compiles.len() as u64, compiled, "{compiles:?}");
    for c in &compiles {
        assert_eq!(c["ph"], "X");
        assert_eq!(c["tid"], 0, "compiled on the run's thread");
        assert!(c["name"].as_str().unwrap().starts_with("lj:"));
        assert_eq!(c["args"]["tier"], "first");
        assert!(c["args"]["code_bytes"].as_u64().unwrap() > 0);
        let (ts, dur) = (c["ts"].as_f64().unwrap(), c["dur"].as_f64().unwrap());
        assert!(
            ts >= 0.0 && dur >= 0.0 && ts + dur <= end,
            "{c} within the run"
        );
    }
    let loops = compiles
        .iter()
        .filter(|c| c["name"].as_str().unwrap().starts_with("lj:loop@"))
        .count();
    assert!(loops >= 1, "the stencil's loop");
}

/// A tiered run's timeline marks each region it found hot and handed to its compiler thread
/// (an instant on the run's track), before any compile on the compiler thread's track.
#[test]
fn timeline_marks_the_regions_a_tiered_run_asks_for() {
    let trace = tmp("timeline-requests.json");
    // About 9 ms interpreted: past the interpreted start (1 ms) the loop gets hot.
    let out = Command::new(env!("CARGO_BIN_EXE_lanejit"))
        .args(["run", &kernel("bench/saxpy32.s"), "--set", "N=4000000"])
        .args(["--engine", "tiered", "--json", "--timeline"])
        .arg(&trace)
        .env_remove("LANEJIT_CODE_CACHE")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let t: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&trace).unwrap()).expect("trace is JSON");
    let events = t["traceEvents"].as_array().unwrap();
    let end = events
        .iter()
        .find(|e| e["cat"] == "groups")
        .expect("the run")["dur"]
        .as_f64()
        .unwrap();
    let requests: Vec<&serde_json::Value> =
        events.iter().filter(|e| e["cat"] == "request").collect();
    assert!(!requests.is_empty(), "the loop gets hot");
    for r in &requests {
        assert_eq!(r["ph"], "i");
        assert_eq!(r["tid"], 0, "on the run's track");
        assert!(r["name"].as_str().unwrap().starts_with("hot 0x"), "{r}");
        let ts = r["ts"].as_f64().unwrap();
        assert!((0.0..=end).contains(&ts), "{r} within the run");
    }
    let first_request = requests
        .iter()
        .map(|r| r["ts"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    for c in events.iter().filter(|e| e["cat"] == "compile") {
        assert!(
            c["ts"].as_f64().unwrap() >= first_request,
            "{c} after a request"
        );
    }
}

#[test]
fn timeline_is_a_chrome_trace_of_group_chunks() {
    let src = write("groups-tl.s", GROUPS);
    let trace = tmp("timeline.json");
    let out = lanejit(&[
        "run",
        src.to_str().unwrap(),
        "--groups",
        "40",
        "--threads",
        "2",
        "--timeline",
        trace.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let t: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&trace).unwrap()).expect("trace is JSON");
    let chunks: Vec<&serde_json::Value> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "groups")
        .collect();
    assert!(!chunks.is_empty());
    let mut covered: Vec<u64> = chunks
        .iter()
        .flat_map(|e| {
            let a = &e["args"];
            a["first_group"].as_u64().unwrap()..=a["last_group"].as_u64().unwrap()
        })
        .collect();
    covered.sort();
    assert_eq!(
        covered,
        (0..40).collect::<Vec<u64>>(),
        "every group in one chunk"
    );
}
