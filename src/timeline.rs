//! `--timeline FILE`: a launch's chunks as a Chrome trace (the JSON "trace event" format that
//! Perfetto and `chrome://tracing` read). Each chunk a worker ran is one complete (`"X"`)
//! event on that worker's track, named by its groups, with the first and last group and the
//! regions the worker's engine had compiled by its end in `args`: load balance shows as the
//! tracks' lengths, tier-up as the growth of `compiled`.

use crate::launch::Span;
use serde_json::{Value, json};

/// The trace of `spans` as one JSON object.
pub fn chrome_trace(spans: &[Span]) -> Value {
    let mut events: Vec<Value> = Vec::with_capacity(spans.len() + 1);
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
        let t = chrome_trace(&spans);
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
