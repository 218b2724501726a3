//! `--timeline FILE`: a run as a Chrome trace (the JSON "trace event" format that Perfetto
//! and `chrome://tracing` read). Each chunk of groups a worker ran is one complete (`"X"`)
//! event on that worker's track, named by its groups, with the first and last group and the
//! regions the worker's engine had compiled by its end in `args` (a single-group run is one
//! chunk): load balance shows as the tracks' lengths. Each region compiled is one complete
//! event on the track of the thread that compiled it (a tiered run's compiler thread, or a
//! worker), named by its symbol (`lj:loop@0x68 <row+0x8>`), with its tier (`first`,
//! `baseline`, `optimized-strip` for a strip-mined loop's optimised step, `optimized`,
//! `cached`) and code bytes in `args`: tier-up shows as the compiles against the run's own
//! span (when each region's code arrived, and what the run did meanwhile). A tiered run's
//! requests are instant events on the run's track (`hot 0x68 <row+0x8>`): from one to the
//! start of its compile, the region waited for the compiler thread.

use crate::launch::Span;
use lanejit_jit::observe::{CompileSpan, Request};
use serde_json::{Value, json};
use std::time::Instant;

/// Track ids of compiling threads that are not workers: after any worker's.
const COMPILER_TRACKS: usize = 1000;

/// The trace of `spans` and `compiles` as one JSON object; times from `t0` (the launch's
/// start: a compile that began before it starts at 0).
pub fn chrome_trace(
    spans: &[Span],
    compiles: &[CompileSpan],
    requests: &[Request],
    t0: Instant,
) -> Value {
    let mut events: Vec<Value> = Vec::with_capacity(spans.len() + compiles.len() + 2);
    events.push(json!({
        "name": "process_name", "ph": "M", "pid": 1,
        "args": {"name": "lanejit launch"}
    }));
    for s in spans {
        let last = s.end.saturating_sub(1);
        let name = if s.first == last {
            format!("group {}", s.first)
        } else {
            format!("groups {}-{last}", s.first)
        };
        events.push(json!({
            "name": name,
            "cat": "groups",
            "ph": "X",
            "pid": 1,
            "tid": s.thread,
            "ts": s.start_us,
            "dur": s.dur_us,
            "args": {"first_group": s.first, "last_group": last, "groups": s.end - s.first,
                     "compiled_regions": s.compiled},
        }));
    }
    // A worker compiles on its own track (`lanejit-group-worker-N`, or `main` for worker 0);
    // any other thread gets a track of its own, named.
    let mut others: Vec<&str> = Vec::new();
    for c in compiles {
        let tid = match c.thread.strip_prefix("lanejit-group-worker-") {
            Some(n) => n.parse::<usize>().unwrap_or(0),
            None if c.thread == "main" => 0,
            None => {
                let i = match others.iter().position(|t| *t == c.thread) {
                    Some(i) => i,
                    None => {
                        others.push(&c.thread);
                        events.push(json!({
                            "name": "thread_name", "ph": "M", "pid": 1,
                            "tid": COMPILER_TRACKS + others.len() - 1,
                            "args": {"name": c.thread},
                        }));
                        others.len() - 1
                    }
                };
                COMPILER_TRACKS + i
            }
        };
        let start = c.start.saturating_duration_since(t0).as_secs_f64() * 1e6;
        let dur = c.end.saturating_duration_since(c.start).as_secs_f64() * 1e6;
        events.push(json!({
            "name": c.name,
            "cat": "compile",
            "ph": "X",
            "pid": 1,
            "tid": tid,
            "ts": start,
            "dur": dur,
            "args": {"tier": c.tier, "code_bytes": c.code_bytes},
        }));
    }
    // A tiered run's requests: instants on the run's track (worker 0).
    for r in requests {
        events.push(json!({
            "name": format!("hot {}", r.name),
            "cat": "request",
            "ph": "i",
            "s": "t",
            "pid": 1,
            "tid": 0,
            "ts": r.at.saturating_duration_since(t0).as_secs_f64() * 1e6,
        }));
    }
    json!({"traceEvents": events, "displayTimeUnit": "ms"})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_complete_event_per_chunk() {
        let spans = [
            Span {
                thread: 0,
                first: 0,
                end: 1,
                start_us: 0.0,
                dur_us: 5.0,
                compiled: 0,
            },
            Span {
                thread: 1,
                first: 1,
                end: 9,
                start_us: 1.5,
                dur_us: 20.0,
                compiled: 2,
            },
        ];
        let t = chrome_trace(&spans, &[], &[], Instant::now());
        let ev = t["traceEvents"].as_array().expect("events");
        assert_eq!(ev.len(), 3);
        assert_eq!(ev[1]["name"], "group 0");
        assert_eq!(ev[2]["name"], "groups 1-8");
        assert_eq!(ev[2]["ph"], "X");
        assert_eq!(ev[2]["tid"], 1);
        assert_eq!(ev[2]["args"]["groups"], 8);
        assert_eq!(ev[2]["args"]["compiled_regions"], 2);
    }
}
