//! A campaign's results as JSON lines (`lanejit fuzz --jsonl FILE`), and their summary
//! (`lanejit fuzz --summary FILE...`).
//!
//! A campaign cut into shards (`--shard I/N`, see [`super::Shard`]) writes one file per
//! shard; `cat` merges them, since every line stands alone: one [`Record::Case`] per case as
//! it finishes (in completion order) and one [`Record::Shard`] when the shard is done. A
//! shard that was stopped part-way leaves its case lines without a shard line, which the
//! [`Summary`] reports as missing.
//!
//! ```text
//! {"kind":"case","seed":1,"case":4,"outcome":"agree"}
//! {"kind":"case","seed":1,"case":7,"outcome":"diverge","engines":["interp","jit"],"first_diff_after":12,"differs":"s3","reproducer":"fuzz-out/div-1-7.s"}
//! {"kind":"shard","seed":1,"cases":90,"shard":"1/3","engines":["interp","jit","tiered"],"ran":30,"divergences":1,"secs":2.5}
//! ```

use super::Shard;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::{BufRead, Read as _};

/// One line of a campaign's JSON-lines output.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    /// A case that ran to its verdict.
    Case {
        /// The campaign's seed.
        seed: u64,
        /// The case's index in the campaign (`0..cases`).
        case: u64,
        /// Whether the engines agreed.
        outcome: Outcome,
        /// The divergence, when they did not.
        #[serde(flatten, skip_serializing_if = "Option::is_none", default)]
        divergence: Option<DivergenceRecord>,
    },
    /// A shard that ran all its cases.
    Shard {
        /// The campaign's seed.
        seed: u64,
        /// The campaign's case count (every shard's cases together).
        cases: u64,
        /// Which shard.
        shard: Shard,
        /// The engines compared, the reference first.
        engines: Vec<String>,
        /// Cases this shard ran.
        ran: u64,
        /// Of them, how many diverged.
        divergences: u64,
        /// Wall-clock seconds the shard took.
        secs: f64,
    },
}

/// A case's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every engine gave the reference's result.
    Agree,
    /// Two engines differ.
    Diverge,
}

/// What a diverging case's line says about the divergence.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DivergenceRecord {
    /// The two engines that differ (reference first).
    pub engines: [String; 2],
    /// Retired instructions after which their states first differ (of the shrunk case).
    pub first_diff_after: u64,
    /// What differs.
    pub differs: String,
    /// Where the shard wrote the reproducer.
    pub reproducer: String,
}

impl serde::Serialize for Shard {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Shard {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Shard, D::Error> {
        let text = String::deserialize(d)?;
        Shard::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// The longest line [`Summary::add_reader`] reads (1 MiB; a case line is about 100 bytes).
pub const MAX_LINE: u64 = 1 << 20;

/// A line that is not a [`Record`], or a file that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {err}")]
pub struct RecordError {
    /// The file.
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// Why.
    #[source]
    pub err: RecordErrorKind,
}

/// What is wrong with a line.
#[derive(Debug, thiserror::Error)]
pub enum RecordErrorKind {
    /// Reading failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The line is longer than [`MAX_LINE`].
    #[error("the line is longer than {MAX_LINE} bytes")]
    TooLong,
    /// The line is not a record.
    #[error("not a fuzz result line: {0}")]
    Json(#[from] serde_json::Error),
}

/// The merged results of one campaign (one seed).
#[derive(Clone, Debug, Default)]
pub struct CampaignSummary {
    /// Distinct cases run.
    pub cases: BTreeSet<u64>,
    /// Case lines that repeat a case already seen (a shard merged twice, or run twice).
    pub repeated: u64,
    /// The diverging cases, by index.
    pub divergences: BTreeMap<u64, DivergenceRecord>,
    /// The finished shards' lines: (shard, campaign cases, engines, secs).
    pub shards: Vec<(Shard, u64, Vec<String>, f64)>,
}

/// Every campaign of a set of merged JSON-lines files, by seed.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Campaigns by seed.
    pub campaigns: BTreeMap<u64, CampaignSummary>,
}

impl Summary {
    /// Add the lines of one file (`name` is for messages); blank lines are skipped.
    pub fn add_text(&mut self, name: &str, text: &str) -> Result<(), RecordError> {
        self.add_reader(name, text.as_bytes())
    }

    /// Add the lines read from `r`, one at a time (no line may pass [`MAX_LINE`] bytes).
    pub fn add_reader(&mut self, name: &str, mut r: impl BufRead) -> Result<(), RecordError> {
        let mut buf = Vec::new();
        for line in 1.. {
            buf.clear();
            let bad = |err| RecordError {
                file: name.to_string(),
                line,
                err,
            };
            let n = (&mut r)
                .take(MAX_LINE + 1)
                .read_until(b'\n', &mut buf)
                .map_err(|e| bad(RecordErrorKind::Io(e)))?;
            if n == 0 {
                break;
            }
            if n as u64 > MAX_LINE {
                return Err(bad(RecordErrorKind::TooLong));
            }
            if buf.trim_ascii().is_empty() {
                continue;
            }
            let rec: Record =
                serde_json::from_slice(&buf).map_err(|e| bad(RecordErrorKind::Json(e)))?;
            self.add(rec);
        }
        Ok(())
    }

    /// Add one record.
    pub fn add(&mut self, rec: Record) {
        match rec {
            Record::Case {
                seed,
                case,
                divergence,
                ..
            } => {
                let c = self.campaigns.entry(seed).or_default();
                if !c.cases.insert(case) {
                    c.repeated += 1;
                }
                if let Some(d) = divergence {
                    c.divergences.insert(case, d);
                }
            }
            Record::Shard {
                seed,
                cases,
                shard,
                engines,
                secs,
                ..
            } => {
                let c = self.campaigns.entry(seed).or_default();
                c.shards.push((shard, cases, engines, secs));
            }
        }
    }

    /// Whether any campaign has a divergence.
    pub fn diverged(&self) -> bool {
        self.campaigns.values().any(|c| !c.divergences.is_empty())
    }

    /// The readable report: per campaign, cases run, divergences with their reproducers, the
    /// divergence rate and cases/s, and what is missing (shards without a summary line, cases
    /// not run, cases run twice).
    pub fn report(&self) -> String {
        let mut s = String::new();
        for (seed, c) in &self.campaigns {
            let run = c.cases.len() as u64;
            let _ = write!(s, "seed {seed}: {run} cases");
            let mut counts: Vec<u64> = c.shards.iter().map(|(sh, ..)| sh.count).collect();
            counts.sort_unstable();
            counts.dedup();
            let mut totals: Vec<u64> = c.shards.iter().map(|(_, n, ..)| *n).collect();
            totals.sort_unstable();
            totals.dedup();
            if let Some((_, _, engines, _)) = c.shards.first() {
                let _ = write!(s, " on {}", engines.join(","));
            }
            let nd = c.divergences.len();
            let _ = write!(
                s,
                ", {nd} divergences ({:.3}% of cases)",
                100.0 * nd as f64 / (run.max(1)) as f64
            );
            let secs: f64 = c.shards.iter().map(|(.., t)| t).sum();
            let timed: u64 = c.shards.iter().map(|(sh, n, ..)| sh.len(*n)).sum::<u64>();
            if secs > 0.0 {
                let _ = write!(
                    s,
                    ", {:.1} cases/s per shard ({:.1} s of shard time)",
                    timed as f64 / secs,
                    secs
                );
            }
            s.push('\n');
            for (case, d) in &c.divergences {
                let _ = writeln!(
                    s,
                    "  case {case}: {} vs {}, first differ after {} instructions ({}): {}",
                    d.engines[0], d.engines[1], d.first_diff_after, d.differs, d.reproducer
                );
            }
            if c.repeated > 0 {
                let _ = writeln!(
                    s,
                    "  warning: {} case lines repeat a case (a shard merged or run twice?)",
                    c.repeated
                );
            }
            match (counts.as_slice(), totals.as_slice()) {
                ([], _) => {
                    let _ = writeln!(
                        s,
                        "  warning: no shard summary line: no shard of this campaign finished"
                    );
                }
                ([n], [total]) => {
                    let done: BTreeSet<u64> = c.shards.iter().map(|(sh, ..)| sh.index).collect();
                    let missing: Vec<String> = (0..*n)
                        .filter(|i| !done.contains(i))
                        .map(|i| format!("{i}/{n}"))
                        .collect();
                    if !missing.is_empty() {
                        let _ = writeln!(
                            s,
                            "  warning: shards without a summary line (not finished): {}",
                            missing.join(" ")
                        );
                    }
                    let absent = total.saturating_sub(c.cases.range(..*total).count() as u64);
                    let extra = c.cases.range(*total..).count();
                    let _ = writeln!(
                        s,
                        "  {} of {total} cases of the campaign ran{}",
                        total - absent,
                        if absent == 0 {
                            ""
                        } else {
                            "; the rest are missing"
                        }
                    );
                    if extra > 0 {
                        let _ = writeln!(
                            s,
                            "  warning: {extra} cases lie beyond the campaign's {total}"
                        );
                    }
                }
                _ => {
                    let _ = writeln!(
                        s,
                        "  warning: the shard lines disagree on the shard count or the \
                         campaign's case count (merged from different campaigns?)"
                    );
                }
            }
        }
        if self.campaigns.is_empty() {
            s.push_str("no cases\n");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_summarise() {
        let d = DivergenceRecord {
            engines: ["interp".into(), "jit".into()],
            first_diff_after: 3,
            differs: "s1".into(),
            reproducer: "out/div-1-4.s".into(),
        };
        let recs = [
            Record::Case {
                seed: 1,
                case: 4,
                outcome: Outcome::Diverge,
                divergence: Some(d.clone()),
            },
            Record::Case {
                seed: 1,
                case: 1,
                outcome: Outcome::Agree,
                divergence: None,
            },
            Record::Shard {
                seed: 1,
                cases: 6,
                shard: Shard { index: 1, count: 3 },
                engines: vec!["interp".into(), "jit".into()],
                ran: 2,
                divergences: 1,
                secs: 0.5,
            },
        ];
        let text: String = recs
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect();
        assert!(text.starts_with(
            r#"{"kind":"case","seed":1,"case":4,"outcome":"diverge","engines":["interp","jit"]"#
        ));
        assert!(text.contains(r#""shard":"1/3""#));
        let back: Vec<Record> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(back, recs);
        let mut sum = Summary::default();
        sum.add_text("a", &text).unwrap();
        sum.add_text("b", &text).unwrap();
        let c = &sum.campaigns[&1];
        assert_eq!(c.cases.iter().copied().collect::<Vec<_>>(), [1, 4]);
        assert_eq!((c.repeated, c.divergences.len()), (2, 1));
        assert!(sum.diverged());
        let r = sum.report();
        assert!(
            r.contains("seed 1: 2 cases on interp,jit, 1 divergences"),
            "{r}"
        );
        assert!(r.contains("case 4: interp vs jit"), "{r}");
        assert!(r.contains("not finished): 0/3 2/3"), "{r}");
        assert!(r.contains("2 of 6 cases of the campaign ran"), "{r}");
        assert!(r.contains("repeat"), "{r}");
        let e = sum
            .add_text("bad.jsonl", "\n{\"kind\":\"case\"}\n")
            .unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("bad.jsonl", 2));
        assert!(serde_json::from_str::<Record>(r#"{"kind":"shard","seed":1,"cases":6,"shard":"3/3","engines":[],"ran":0,"divergences":0,"secs":0}"#).is_err());
    }
}
