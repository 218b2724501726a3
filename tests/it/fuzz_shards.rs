//! `lanejit fuzz --shard I/N --jsonl FILE` and `--summary`: the shards of a campaign run
//! exactly its cases between them (their union is the unsharded campaign's cases, and they
//! are disjoint), their JSON lines merge with `cat`, and the summary counts the merged cases
//! and names what is missing.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output};

fn lanejit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lanejit"))
        .args(args)
        .output()
        .expect("runs")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lanejit-shards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

const CASES: &str = "24";
const SEED: &str = "7";

/// Run the campaign (or one shard of it) writing JSON lines to `name`; return the file's text.
fn campaign(name: &str, shard: Option<&str>) -> String {
    let jsonl = tmp(name);
    let out_dir = tmp("repros");
    let mut args = vec![
        "fuzz",
        "--cases",
        CASES,
        "--seed",
        SEED,
        "--engines",
        "interp,jit",
        "--jobs",
        "2",
        "--out",
        out_dir.to_str().unwrap(),
        "--jsonl",
        jsonl.to_str().unwrap(),
    ];
    if let Some(s) = shard {
        args.extend(["--shard", s]);
    }
    let out = lanejit(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(&jsonl).unwrap()
}

/// The case ids of the case lines of `text`, in file order.
fn case_ids(text: &str) -> Vec<u64> {
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["kind"] == "case")
        .map(|v| {
            assert_eq!(v["seed"], 7);
            assert_eq!(v["outcome"], "agree", "{v}");
            v["case"].as_u64().unwrap()
        })
        .collect()
}

#[test]
fn shards_run_the_campaigns_cases_once_and_merge_with_cat() {
    let whole = campaign("whole.jsonl", None);
    let whole_ids: BTreeSet<u64> = case_ids(&whole).into_iter().collect();
    assert_eq!(whole_ids, (0..24).collect(), "{whole}");
    let shards: Vec<String> = (0..3)
        .map(|i| campaign(&format!("shard{i}.jsonl"), Some(&format!("{i}/3"))))
        .collect();
    let mut union = BTreeSet::new();
    for (i, text) in shards.iter().enumerate() {
        let ids = case_ids(text);
        assert_eq!(ids.len(), 8, "{text}");
        for k in ids {
            assert_eq!(k % 3, i as u64, "case {k} in shard {i}");
            assert!(union.insert(k), "case {k} is in two shards");
        }
        let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(last["kind"], "shard", "{text}");
        assert_eq!(last["shard"], format!("{i}/3"));
        assert_eq!(
            (last["cases"].as_u64(), last["ran"].as_u64()),
            (Some(24), Some(8))
        );
    }
    assert_eq!(union, whole_ids);

    // `cat` the shards, summarise.
    let merged = tmp("merged.jsonl");
    std::fs::write(&merged, shards.concat()).unwrap();
    let out = lanejit(&["fuzz", "--summary", merged.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("seed 7: 24 cases on interp,jit, 0 divergences (0.000% of cases)"),
        "{text}"
    );
    assert!(
        text.contains("24 of 24 cases of the campaign ran\n"),
        "{text}"
    );
    assert!(!text.contains("warning"), "{text}");
    // Two of the three shards' files: the summary names the missing shard and cases.
    let s0 = tmp("shard0.jsonl");
    let s2 = tmp("shard2.jsonl");
    let out = lanejit(&[
        "fuzz",
        "--summary",
        s0.to_str().unwrap(),
        s2.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(not finished): 1/3"), "{text}");
    assert!(
        text.contains("16 of 24 cases of the campaign ran; the rest are missing"),
        "{text}"
    );
}

#[test]
fn bad_shards_and_bad_result_lines_are_bad_input() {
    for bad in ["3/3", "0/0", "1", "x/2"] {
        let out = lanejit(&["fuzz", "--cases", "1", "--shard", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(out.stdout.is_empty());
    }
    let junk = tmp("junk.jsonl");
    std::fs::write(
        &junk,
        "{\"kind\":\"case\",\"seed\":1,\"case\":0,\"outcome\":\"agree\"}\nnot json\n",
    )
    .unwrap();
    let out = lanejit(&["fuzz", "--summary", junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("junk.jsonl:2: not a fuzz result line"));
}
