//! Seeing inside the JIT from the command line: the jitdump file's records (read back here,
//! without perf), the perf recipe of the README where `perf` works, the region report
//! (`--regions`, table and JSON) with a compiled hot loop and an instruction that falls back,
//! and `--dump-jit`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lanejit_in(dir: &Path, args: &[&str]) -> (Output, u32) {
    let child = Command::new(env!("CARGO_BIN_EXE_lanejit"))
        .args(args)
        .current_dir(dir)
        .env("JITDUMPDIR", dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("runs");
    let pid = child.id();
    (child.wait_with_output().expect("runs"), pid)
}

/// A fresh directory of this test process for test `name`.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lanejit-obs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn json(out: &Output) -> serde_json::Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// A hot loop run REPS times over N = 45 elements: at VL 8, five full groups and a tail of
/// five lanes. Its gather (`V.LW [s2 + (v2 << 2)]`, indices loaded from memory) runs in line
/// in full iterations and goes to the helper in the tail, whose mask is partial: once per
/// repetition. With `--engine jit` every repetition runs in the loop nest from `again` to the
/// `BNE`, entered once: the straight run from `start` stops at `again`, where the nest starts
/// (`region::discover`), and the nest, whose prologue sets the `LOOP`'s count, gets its tail
/// compiled in from that constant (`region::prologue_tail`). The loop's own region (`body`)
/// is never compiled.
fn gather_loop(reps: u32) -> String {
    let idx: Vec<String> = (0..48).map(|i| ((i * 7) % 45).to_string()).collect();
    format!(
        "
        .equ    N, 45
        .equ    REPS, {reps}
        .mem    0x10000, 0x1000, rw
        .data   0x10000
idx:    .word   {}
table:  .space  256
        .text
start:
        S.LI    s1, idx
        S.LI    s2, table
        S.LI    s7, REPS
again:
        S.LI    s3, N
        LOOP    s3
body:
        V.LW    [s1, lc0<<2, 0], ->v2
gather:
        V.LW    [s2 + (v2 << 2)], ->v3
        V.ADD   v5, v5, v3
        ENDLOOP
        S.SUB   s7, s7, 1
        BNE     s7, s0, again
        S.ADD   s8, s7, 1
        HALT
",
        idx.join(", ")
    )
}

/// pcs of [`gather_loop`]'s labels (`S.LI` takes two words).
const AGAIN: u64 = 0x30;
const BODY: u64 = 0x48;
const GATHER: u64 = 0x50;

fn hex(v: &serde_json::Value) -> u64 {
    u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

#[test]
fn region_report_shows_the_hot_loop_and_the_fallback_with_counts() {
    let d = dir("report");
    let src = d.join("gather.s");
    std::fs::write(&src, gather_loop(7)).unwrap();
    let (again, gather) = (AGAIN, GATHER);
    let s = src.to_str().unwrap();
    let (out, _) = lanejit_in(&d, &["run", s, "--engine", "jit", "--vl", "8", "--json"]);
    assert!(
        json(&out).get("regions").is_none(),
        "no \"regions\" key without --regions"
    );
    let (out, _) = lanejit_in(
        &d,
        &[
            "run",
            s,
            "--engine",
            "jit",
            "--vl",
            "8",
            "--json",
            "--regions",
        ],
    );
    let j = json(&out);
    let regions = j["regions"].as_array().expect("regions");
    // Sorted by instructions retired: the nest first.
    let lp = &regions[0];
    assert_eq!(lp["kind"], "loop", "{lp}");
    assert_eq!(hex(&lp["pc"]), again);
    assert_eq!(lp["label"], "again");
    assert_eq!(lp["name"], format!("lj:loop@{again:#x} <again>"));
    assert_eq!(lp["entries"], 1);
    // All seven repetitions: `S.LI`, `LOOP`, six iterations of four instructions, `S.SUB`,
    // `BNE`.
    assert_eq!(lp["retired"], 7 * (2 + 6 * 4 + 2));
    assert!(
        regions.iter().all(|r| hex(&r["pc"]) != BODY),
        "the loop's own region is not compiled: {regions:?}"
    );
    let fb = lp["fallbacks"].as_array().unwrap();
    assert_eq!(fb.len(), 1, "{lp}");
    assert_eq!(hex(&fb[0]["pc"]), gather);
    assert_eq!(fb[0]["label"], "gather");
    assert_eq!(fb[0]["inst"], "V.LW [s2 + (v2 << 2)], ->v3");
    assert_eq!(fb[0]["to"], "helper");
    assert_eq!(fb[0]["reason"], "partial_mask");
    assert_eq!(fb[0]["count"], 7);
    for r in regions {
        assert!(r["compile_us"].as_u64().is_some() && r["code_bytes"].as_u64().unwrap() > 0);
        assert!(
            r["retired"].as_u64() <= lp["retired"].as_u64(),
            "sorted: {r}"
        );
    }
    // Every instruction compiled code retired is in some region's count.
    let sum: u64 = regions.iter().map(|r| r["retired"].as_u64().unwrap()).sum();
    assert_eq!(sum, j["engine_stats"]["jit_retired"].as_u64().unwrap());
    // The HALT after the last region (`S.ADD`) is declined: it goes to the interpreter, once.
    let declined: Vec<_> = regions
        .iter()
        .flat_map(|r| r["fallbacks"].as_array().unwrap())
        .filter(|f| f["reason"] == "declined")
        .collect();
    assert_eq!(declined.len(), 1);
    assert_eq!(declined[0]["inst"], "HALT");
    assert_eq!(declined[0]["count"], 1);

    // The table: the loop's row and its fallback line.
    let (out, _) = lanejit_in(&d, &["run", s, "--engine", "jit", "--vl", "8", "--regions"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let table = &text[text.find("regions:").expect("a report")..];
    let mut lines = table.lines().skip(2);
    let row = lines.next().unwrap();
    assert!(
        row.contains(&format!("{again:#x}..")) && row.contains("again") && row.contains("loop"),
        "{table}"
    );
    let fl = lines.next().unwrap();
    assert!(
        fl.contains("V.LW [s2 + (v2 << 2)], ->v3")
            && fl.contains("helper")
            && fl.contains("partial_mask")
            && fl.trim_end().ends_with("x7"),
        "{table}"
    );
}

#[test]
fn region_report_adds_up_over_the_groups_of_a_launch() {
    let d = dir("groups");
    let src = d.join("gather.s");
    std::fs::write(&src, gather_loop(3)).unwrap();
    let s = src.to_str().unwrap();
    let (out, _) = lanejit_in(
        &d,
        &[
            "run",
            s,
            "--engine",
            "jit",
            "--vl",
            "8",
            "--groups",
            "4",
            "--threads",
            "2",
            "--json",
            "--regions",
        ],
    );
    let j = json(&out);
    let lp = &j["regions"][0];
    assert_eq!(lp["kind"], "loop");
    // One compiled nest shared by the four groups: every group's entries and tails count.
    assert_eq!(lp["entries"], 4);
    assert_eq!(lp["retired"], 4 * 3 * (2 + 6 * 4 + 2));
    assert_eq!(lp["fallbacks"][0]["count"], 4 * 3);

    // The interpreter compiles nothing, and says so.
    let (out, _) = lanejit_in(&d, &["run", s, "--engine", "interp", "--regions"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("regions: nothing compiled"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let (out, _) = lanejit_in(&d, &["run", s, "--engine", "interp", "--json", "--regions"]);
    assert_eq!(json(&out)["regions"], serde_json::json!([]));
}

#[test]
fn region_report_bypasses_the_code_cache() {
    // Counting code holds this process's counter addresses: under --regions regions are
    // neither taken from the code cache across runs nor stored in it.
    let d = dir("cache");
    let src = d.join("gather.s");
    std::fs::write(&src, gather_loop(3)).unwrap();
    let s = src.to_str().unwrap();
    let run = |cache: &str, regions: bool| {
        let mut args = vec![
            "run",
            s,
            "--engine",
            "jit",
            "--vl",
            "8",
            "--json",
            "--code-cache",
            cache,
        ];
        if regions {
            args.push("--regions");
        }
        json(&lanejit_in(&d, &args).0)
    };
    let j = run("counted", true);
    assert!(j["engine_stats"]["compiled_regions"].as_u64().unwrap() > 0);
    let stored = std::fs::read_dir(d.join("counted")).map_or(0, |r| r.count());
    assert_eq!(stored, 0, "counting code must not be stored");
    run("plain", false);
    let j = run("plain", true);
    assert_eq!(j["engine_stats"]["cached_regions"], 0, "{j}");
    assert_eq!(j["regions"][0]["entries"], 1);
    assert_eq!(j["regions"][0]["fallbacks"][0]["count"], 3);
    // A tiered run with a warm cache makes its JIT (and installs what the cache holds) before
    // the run: not under --regions.
    let (out, _) = lanejit_in(
        &d,
        &[
            "run",
            s,
            "--vl",
            "8",
            "--json",
            "--code-cache",
            "plain",
            "--regions",
        ],
    );
    let j = json(&out);
    assert_eq!(j["engine_stats"]["cached_regions"], 0, "{j}");
}

/// One JIT_CODE_LOAD record of a jitdump file.
#[derive(Debug)]
struct CodeLoad {
    pid: u32,
    timestamp: u64,
    vma: u64,
    code_addr: u64,
    index: u64,
    name: String,
    code: Vec<u8>,
}

/// The header's pid and timestamp and the code-load records of jitdump `bytes` (the Linux
/// perf jitdump specification, version 1), checking the header's fixed fields.
fn parse_jitdump(bytes: &[u8]) -> (u32, u64, Vec<CodeLoad>) {
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
    assert_eq!(u32_at(0), 0x4A69_5444, "magic");
    assert_eq!(u32_at(4), 1, "version");
    let header = u32_at(8) as usize;
    assert_eq!(header, 40, "header size");
    if cfg!(target_arch = "x86_64") {
        assert_eq!(u32_at(12), 62, "EM_X86_64");
    }
    let (pid, ts) = (u32_at(20), u64_at(24));
    let mut at = header;
    let mut loads = Vec::new();
    while at < bytes.len() {
        let (id, size, timestamp) = (u32_at(at), u32_at(at + 4) as usize, u64_at(at + 8));
        assert!(size >= 16 && at + size <= bytes.len(), "record size");
        if id == 0 {
            let b = at + 16;
            let code_size = u64_at(b + 24) as usize;
            let name_at = b + 40;
            let nul = bytes[name_at..].iter().position(|&c| c == 0).unwrap();
            let name = String::from_utf8(bytes[name_at..name_at + nul].to_vec()).unwrap();
            let code_at = name_at + nul + 1;
            assert_eq!(code_at + code_size, at + size, "code bytes end the record");
            loads.push(CodeLoad {
                pid: u32_at(b),
                timestamp,
                vma: u64_at(b + 8),
                code_addr: u64_at(b + 16),
                index: u64_at(b + 32),
                name,
                code: bytes[code_at..code_at + code_size].to_vec(),
            });
        }
        at += size;
    }
    (pid, ts, loads)
}

#[test]
fn jitdump_names_every_compiled_region_by_guest_location() {
    let d = dir("jitdump");
    let src = d.join("gather.s");
    std::fs::write(&src, gather_loop(2)).unwrap();
    let again = AGAIN;
    let (out, pid) = lanejit_in(
        &d,
        &[
            "run",
            src.to_str().unwrap(),
            "--engine",
            "jit",
            "--vl",
            "8",
            "--json",
            "--profile",
            "jitdump",
            "--profile",
            "perfmap",
            "--dump-jit",
            "dump",
        ],
    );
    let j = json(&out);
    let path = d.join(format!("jit-{pid}.dump"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (hpid, hts, loads) = parse_jitdump(&bytes);
    assert_eq!(hpid, pid);
    let es = &j["engine_stats"];
    assert_eq!(
        loads.len() as u64,
        es["compiled_regions"].as_u64().unwrap() + es["cached_regions"].as_u64().unwrap()
    );
    let mut last = hts;
    for (i, l) in loads.iter().enumerate() {
        assert_eq!(l.pid, pid);
        assert_eq!(l.index, i as u64);
        assert_eq!(l.vma, l.code_addr);
        assert!(!l.code.is_empty());
        assert!(l.timestamp >= last, "CLOCK_MONOTONIC order");
        last = l.timestamp;
        assert!(l.name.starts_with("lj:"), "{}", l.name);
    }
    let lp = loads
        .iter()
        .find(|l| l.name == format!("lj:loop@{again:#x} <again>"))
        .unwrap_or_else(|| panic!("no loop record: {loads:?}"));
    assert!(loads.iter().any(|l| l.name == "lj:straight@0x0 <start>"));

    // The perf map names the same code at the same addresses.
    let map_path = PathBuf::from(format!("/tmp/perf-{pid}.map"));
    let map = std::fs::read_to_string(&map_path).expect("perf map");
    let _ = std::fs::remove_file(&map_path);
    let lines: Vec<&str> = map.lines().collect();
    assert_eq!(lines.len(), loads.len());
    for (line, l) in lines.iter().zip(&loads) {
        assert_eq!(*line, format!("{:x} {:x} {}", l.vma, l.code.len(), l.name));
    }

    // --dump-jit: the loop's guest instructions, IR and host code, at the same address.
    let dump = d.join("dump");
    let stem = std::fs::read_dir(&dump)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.extension().is_some_and(|e| e == "guest")
                && p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .contains(&format!("-{again:x}-loop"))
        })
        .expect("the loop's dump")
        .with_extension("");
    let guest = std::fs::read_to_string(stem.with_extension("guest")).unwrap();
    assert!(guest.contains("V.LW [s2 + (v2 << 2)], ->v3") && guest.contains("ENDLOOP"));
    let clif = std::fs::read_to_string(stem.with_extension("clif")).unwrap();
    assert!(
        clif.contains("function ") && clif.contains("block0"),
        "{clif}"
    );
    if cfg!(target_arch = "x86_64") {
        let asm = std::fs::read_to_string(stem.with_extension("asm")).unwrap();
        let first = asm.lines().nth(1).unwrap();
        assert!(
            first.starts_with(&format!("{:016x}", lp.vma)),
            "{first} at {:x}",
            lp.vma
        );
        assert!(asm.contains("ret"), "{asm}");
    }
}

#[test]
fn perf_attributes_samples_to_compiled_regions() {
    // The README's recipe: perf record -k 1 ... --profile jitdump, then perf inject --jit.
    let d = dir("perf");
    let perf_ok = Command::new("perf")
        .args(["record", "-k", "1", "-o"])
        .arg(d.join("probe.data"))
        .arg("true")
        .output()
        .is_ok_and(|o| o.status.success());
    if !perf_ok {
        println!("skipped: `perf record -k 1` is not available here");
        return;
    }
    // A hot loop that runs long enough for a few hundred samples.
    let src = d.join("hot.s");
    std::fs::write(
        &src,
        "
        .mem    0x10000, 0x10000, rw
        .text
        S.LI    s1, 0x10000
        S.LI    s7, 20000
again:
        S.LI    s3, 4096
        LOOP    s3
body:
        V.LW    [s1, lc0<<2, 0], ->v1
        V.MUL   v2, v1, v1
        V.ADD   v3, v3, v2
        V.XOR   v4, v3, v1
        V.ADD   v5, v5, v4
        ENDLOOP
        S.SUB   s7, s7, 1
        BNE     s7, s0, again
        HALT
",
    )
    .unwrap();
    let rec = Command::new("perf")
        .args(["record", "-k", "1", "-o", "perf.data", "--"])
        .arg(env!("CARGO_BIN_EXE_lanejit"))
        .args(["run", "hot.s", "--engine", "jit", "--profile", "jitdump"])
        .current_dir(&d)
        .env("JITDUMPDIR", &d)
        .output()
        .expect("perf record");
    assert!(
        rec.status.success(),
        "{}",
        String::from_utf8_lossy(&rec.stderr)
    );
    let inj = Command::new("perf")
        .args(["inject", "--jit", "-i", "perf.data", "-o", "perf.jit.data"])
        .current_dir(&d)
        .output()
        .expect("perf inject");
    assert!(
        inj.status.success(),
        "{}",
        String::from_utf8_lossy(&inj.stderr)
    );
    let rep = Command::new("perf")
        .args(["report", "-i", "perf.jit.data", "--stdio", "--sort", "sym"])
        .current_dir(&d)
        .output()
        .expect("perf report");
    let text = String::from_utf8_lossy(&rep.stdout);
    // The nest (the hardware loop inside the `BNE` loop) is one region.
    assert!(text.contains("lj:loop@0x20 <again>"), "{text}");
}
