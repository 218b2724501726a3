//! `lanejit debug`: scripted sessions through a pipe (breakpoints at labels, stepping with
//! the commit log, typed registers and memory, watchpoints, `until`, a trap and `where`),
//! errors that keep the session alive, and the program flags it shares with `run`.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lanejit-debug-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Run `lanejit debug ARGS` with `script` as its standard input (a pipe).
fn debug(args: &[&str], script: &str) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_lanejit"))
        .arg("debug")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let mut pipe = child.stdin.take().expect("stdin");
    let _ = pipe.write_all(script.as_bytes());
    drop(pipe);
    child.wait_with_output().expect("waits")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Stores 2.5 to `out`, then stores to a read-only page (line 15): a permission fault.
const PROGRAM: &str = "        .vl 4
        .mem 0x1000, 0x1000, rw
        .mem 0x2000, 0x1000, r
        .data 0x1000
out:    .space 16
        .text
        S.LI s1, out
        S.LI s2, f32(2.5)
        S.LI s3, -3
        V.MOV v1, s2
top:    V.SW v1, [s1, lc0<<2]
        S.ADD s4, s3, 1
next:   S.LI s5, 0x2000
        S.ADD s6, s4, 1
        V.SW v1, [s5, lc0<<2]
        HALT
";

/// The program, in a file of this test's own (tests run at the same time).
fn program(test: &str) -> String {
    let p = tmp(&format!("{test}.s"));
    std::fs::write(&p, PROGRAM).unwrap();
    p.display().to_string()
}

/// The lines of `text` from the one that starts with `(lanejit) CMD` up to the next prompt.
fn answer<'a>(text: &'a str, cmd: &str) -> Vec<&'a str> {
    let prompt = format!("(lanejit) {cmd}");
    text.lines()
        .skip_while(|l| *l != prompt)
        .skip(1)
        .take_while(|l| !l.starts_with("(lanejit) "))
        .collect()
}

#[test]
fn a_scripted_session_breaks_steps_watches_and_reaches_a_trap() {
    let f = program("a_scripted_session_breaks_steps_watches_and_reaches_a_trap");
    let out = debug(
        &[&f],
        "break top\n\
         continue\n\
         v1 f32\n\
         s3 i64\n\
         watch out+4 4\n\
         step\n\
         mem out 16 f32\n\
         continue\n\
         where\n\
         step\n\
         quit\n\
         mask\n",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = stdout(&out);
    assert!(t.starts_with("lanejit debug: "), "{t}");
    assert!(t.contains(".s, VL 4, on the reference interpreter"), "{t}");
    assert!(t.contains("=> 0x0000: S.LI s1, 0x1000 ("), "{t}");
    let at_top = "0x0038 <top> (";
    assert_eq!(answer(&t, "break top").len(), 1, "{t}");
    assert!(
        answer(&t, "break top")[0].starts_with(&format!("breakpoint 1 at {at_top}")),
        "{t}"
    );
    assert!(answer(&t, "break top")[0].ends_with(".s:11)"), "{t}");
    let cont = answer(&t, "continue");
    assert!(
        cont[0].starts_with(&format!("breakpoint 1 at {at_top}")),
        "{t}"
    );
    assert!(
        cont[1].starts_with("=> 0x0038 <top>: V.SW v1, [s1, lc0<<2, 0] ("),
        "{t}"
    );
    assert_eq!(
        answer(&t, "v1 f32"),
        ["v1 as f32: [2.5, 2.5, 2.5, 2.5]"],
        "{t}"
    );
    assert_eq!(answer(&t, "s3 i64"), ["s3 as i64: [-3]"], "{t}");
    assert_eq!(
        answer(&t, "watch out+4 4"),
        ["watchpoint 2: memory 0x1004, 4 bytes"],
        "{t}"
    );
    // `step` prints the commit log of the instruction, then what the watchpoint saw.
    let step = answer(&t, "step");
    assert!(step[0].starts_with("5 0x0038 <top> mask=0xf V.SW"), "{t}");
    assert!(
        step.contains(&"  write memory lane 1  ea 0x1004 bytes 00002040"),
        "{t}"
    );
    let watch = step
        .iter()
        .position(|l| {
            l.starts_with("watchpoint 2: memory 0x1004, 4 bytes, changed by 0x0038 <top> (")
        })
        .unwrap_or_else(|| panic!("{t}"));
    assert_eq!(step[watch + 1], "  old: 00 00 00 00", "{t}");
    assert_eq!(step[watch + 2], "  new: 00 00 20 40", "{t}");
    assert!(
        step[watch + 3].starts_with("=> 0x0040 <top+0x8>: S.ADD s4, s3, 1 ("),
        "{t}"
    );
    assert_eq!(
        answer(&t, "mem out 16 f32"),
        ["00001000  2.5 2.5 2.5 2.5"],
        "{t}"
    );
    // The second `continue` reaches the trap, printed as `run` prints it.
    let trap = t
        .split("(lanejit) continue")
        .nth(2)
        .unwrap_or_else(|| panic!("{t}"));
    assert!(
        trap.contains("status: trapped at pc 0x60 after 8 instructions"),
        "{t}"
    );
    assert!(
        trap.contains("trap permission_fault at 0x0060 <next+0x18>: V.SW v1, [s5, lc0<<2, 0] ("),
        "{t}"
    );
    assert!(
        trap.contains(".s:15); lane 0 write memory ea 0x2000"),
        "{t}"
    );
    let w = answer(&t, "where");
    assert!(
        w[0].starts_with("0x0060 <next+0x18> at ") && w[0].ends_with(".s:15"),
        "{t}"
    );
    assert_eq!(w[1], "    15 | V.SW v1, [s5, lc0<<2]", "{t}");
    // The session ends at `quit`: nothing after it runs.
    assert!(
        t.contains("error: the program has trapped; `restart` runs it again"),
        "{t}"
    );
    assert!(!t.contains("(lanejit) mask"), "{t}");
}

#[test]
fn until_disasm_regs_delete_and_restart() {
    let f = program("until_disasm_regs_delete_and_restart");
    let out = debug(
        &[&f, "--vl", "2", "--dump-mem", "out:8:f32"],
        "until next\n\
         regs\n\
         mask\n\
         disasm top 3\n\
         break 0x58\n\
         info\n\
         delete 1\n\
         info\n\
         continue\n\
         restart\n\
         s1\n",
    );
    let t = stdout(&out);
    assert!(t.contains("VL 2"), "{t}");
    assert!(
        answer(&t, "until next")[0].starts_with("=> 0x0048 <next>: S.LI s5, 0x2000 ("),
        "{t}"
    );
    let regs = answer(&t, "regs");
    assert!(
        regs[0].starts_with("pc 0x0048 <next> (") && regs[0].ends_with("retired 6"),
        "{t}"
    );
    assert_eq!(regs[1], "mask 0x3  lc0 0x0  trip 0", "{t}");
    assert_eq!(
        regs[2].split_whitespace().collect::<Vec<_>>(),
        [
            "s0",
            "0x0",
            "s1",
            "0x1000",
            "s2",
            "0x40200000",
            "s3",
            "0xfffffffffffffffd"
        ],
        "{t}"
    );
    assert!(regs.iter().all(|l| l.trim_end() == *l), "{t}");
    assert_eq!(regs.len(), 10, "{t}");
    assert_eq!(
        answer(&t, "mask"),
        ["mask = 0x3: 2 of 2 lanes active [0 1]"],
        "{t}"
    );
    let dis = answer(&t, "disasm top 3");
    assert_eq!(dis.len(), 3, "{t}");
    assert!(
        dis[0].starts_with("   0x0038 <top>: V.SW v1, [s1, lc0<<2, 0] ("),
        "{t}"
    );
    assert!(
        dis[2].starts_with("=> 0x0048 <next>: S.LI s5, 0x2000 ("),
        "{t}"
    );
    assert_eq!(answer(&t, "delete 1"), ["deleted 1"], "{t}");
    assert_eq!(answer(&t, "info").len(), 1, "{t}");
    assert!(
        t.contains("(lanejit) info\nbreakpoint 1 at 0x0058 <next+0x10> ("),
        "{t}"
    );
    assert!(
        t.contains("(lanejit) info\nno breakpoints or watchpoints\n"),
        "{t}"
    );
    // Without the breakpoint, `continue` runs to the trap; the --dump-mem flag is honoured.
    let cont = answer(&t, "continue");
    assert!(
        cont.iter().any(|l| l.starts_with("trap permission_fault")),
        "{t}"
    );
    assert!(cont.contains(&"dump memory 0x1000, 8 bytes as f32:"), "{t}");
    assert!(
        answer(&t, "restart")[0].starts_with("=> 0x0000: S.LI s1, 0x1000"),
        "{t}"
    );
    assert_eq!(answer(&t, "s1"), ["s1 = 0x0"], "{t}");
}

#[test]
fn bad_commands_print_an_error_and_the_session_goes_on() {
    let f = program("bad_commands_print_an_error_and_the_session_goes_on");
    let script = "frobnicate\nbreak nowhere\nbreak 0x4\nbreak out\nv32\nv1 f16\n\
                  mem 0x3000 4\nmem out 6 f32\nmem out 0\ntile 0x100000 4\nwatch out\n\
                  delete 9\nstep x\ndisasm 0x100000\nstep 2\n";
    let out = debug(&[&f], script);
    assert_eq!(out.status.code(), Some(0));
    let t = stdout(&out);
    let errors: Vec<&str> = t.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 14, "{t}");
    for want in [
        "error: unknown command `frobnicate`",
        "error: the program has no label `nowhere`",
        "error: 0x4 is not the pc of an instruction word",
        "error: `out` is a memory (.data) label",
        "error: unknown command `v32`",
        "error: `f16` is not a type",
        "error: memory 0x3000, 4 bytes: not entirely mapped",
        "error: LEN 6 is not a multiple of 4 bytes for f32",
        "error: LEN must be from 1",
        "error: tile 0x100000, 4 bytes: not entirely mapped",
        "error: usage: watch [tile] ADDR LEN",
        "error: no breakpoint or watchpoint 9",
        "error: `x` is not a number",
    ] {
        assert!(t.contains(want), "missing {want:?} in\n{t}");
    }
    // After all that, the session still steps.
    assert!(t.contains("2 0x0010 mask=0xf S.LI s2, 0x40200000"), "{t}");
}

#[test]
fn program_flags_are_checked_like_runs() {
    let f = program("program_flags_are_checked_like_runs");
    for bad in [
        vec![f.as_str(), "--vl", "3"],
        vec!["/nonexistent.s"],
        vec!["-"],
        vec![f.as_str(), "--dump-mem", "nowhere:4"],
    ] {
        // (`HALT` would be a valid program, were `-` read as one.)
        let out = debug(&bad, "HALT\n");
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(out.stdout.is_empty(), "{bad:?}");
    }
    // --max-instructions stops the session's program as it stops a run.
    let out = debug(&[&f, "--max-instructions", "3"], "continue\n");
    assert!(
        stdout(&out).contains("status: limit at pc 0x30 after 3 instructions"),
        "{}",
        stdout(&out)
    );
}
