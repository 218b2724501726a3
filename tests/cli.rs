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
    let lines: Vec<&str> = trace.lines().collect();
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
        .filter(|e| e["ph"] == "X")
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
