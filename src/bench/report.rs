//! The benchmark report: one [`Row`] per (kernel, size) with the throughput of every engine,
//! rendered as a text table, a Markdown table (for `benches/README.md`), JSON, or an SVG bar
//! chart drawn by hand (log-scale Melem/s, one group of bars per row).
//!
//! The JSON (`bench --json`) is the serde form of [`Report`]: its measurements, plus what
//! follows from them (each row's `jit_native` and `jit_interp`, the report's
//! `compile_us_median`, `geomean_jit_native` and `targets`), which a report read back
//! recomputes rather than reads. A value that is not a finite number is `null`.

use super::median;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The sizes issue 11's targets are measured at: 256 KiB and 16 MiB.
pub const ISSUE11_SIZES: [u64; 2] = [256 << 10, 16 << 20];

/// Column names of the throughput columns, in [`Row::melem`] order.
pub const COLUMNS: [&str; 5] = ["interp", "jit", "tiered", "native", "tiered+cache"];
const COLORS: [&str; 5] = ["#9e9e9e", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"];

/// One kernel at one size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "RowJson", from = "RowJson")]
pub struct Row {
    /// Kernel name (`memcpy` for the host memcpy row beside copy32).
    pub kernel: String,
    /// Source bytes.
    pub size: u64,
    /// Elements per run.
    pub elements: u64,
    /// Median Melem/s of interp, jit, tiered, native and tiered with a warm code cache
    /// (`None`: not measured).
    pub melem: [Option<f64>; 5],
    /// Median compile time of the regions the JIT compiled for this row, microseconds.
    pub compile_us_median: Option<f64>,
    /// Total compile time of those regions, microseconds.
    pub compile_us_total: u64,
    /// The longest compile among them, microseconds.
    pub compile_us_max: u64,
    /// Regions the JIT compiled for this row.
    pub regions: usize,
    /// Compile time inside one tiered run, microseconds.
    pub tiered_compile_us: u64,
    /// Machine-code bytes of the row's compiled regions.
    pub code_bytes: usize,
}

impl Row {
    /// JIT throughput over native.
    pub fn jit_native(&self) -> Option<f64> {
        Some(self.melem[1]? / self.melem[3]?)
    }
    /// JIT throughput over the interpreter.
    pub fn jit_interp(&self) -> Option<f64> {
        Some(self.melem[1]? / self.melem[0]?)
    }
}

/// A row as JSON: the throughputs by engine name, and the ratios (written, not read).
#[derive(Serialize, Deserialize)]
struct RowJson {
    kernel: String,
    size: u64,
    elements: u64,
    interp_melem_s: Option<f64>,
    jit_melem_s: Option<f64>,
    tiered_melem_s: Option<f64>,
    native_melem_s: Option<f64>,
    #[serde(default)]
    cached_melem_s: Option<f64>,
    #[serde(skip_deserializing)]
    jit_native: Option<f64>,
    #[serde(skip_deserializing)]
    jit_interp: Option<f64>,
    compile_us_median: Option<f64>,
    #[serde(default)]
    compile_us_total: u64,
    #[serde(default)]
    compile_us_max: u64,
    regions: usize,
    tiered_compile_us: u64,
    code_bytes: usize,
}

impl From<Row> for RowJson {
    fn from(r: Row) -> RowJson {
        let [interp, jit, tiered, native, cached] = r.melem;
        RowJson {
            jit_native: r.jit_native(),
            jit_interp: r.jit_interp(),
            kernel: r.kernel,
            size: r.size,
            elements: r.elements,
            interp_melem_s: interp,
            jit_melem_s: jit,
            tiered_melem_s: tiered,
            native_melem_s: native,
            cached_melem_s: cached,
            compile_us_median: r.compile_us_median,
            compile_us_total: r.compile_us_total,
            compile_us_max: r.compile_us_max,
            regions: r.regions,
            tiered_compile_us: r.tiered_compile_us,
            code_bytes: r.code_bytes,
        }
    }
}

impl From<RowJson> for Row {
    fn from(r: RowJson) -> Row {
        Row {
            kernel: r.kernel,
            size: r.size,
            elements: r.elements,
            melem: [
                r.interp_melem_s,
                r.jit_melem_s,
                r.tiered_melem_s,
                r.native_melem_s,
                r.cached_melem_s,
            ],
            compile_us_median: r.compile_us_median,
            compile_us_total: r.compile_us_total,
            compile_us_max: r.compile_us_max,
            regions: r.regions,
            tiered_compile_us: r.tiered_compile_us,
            code_bytes: r.code_bytes,
        }
    }
}

/// A whole run of the suite. Written through [`ReportJson`] (with what follows from it);
/// read directly, ignoring those derived keys.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "ReportJson")]
pub struct Report {
    /// UTC date and time of the run.
    pub date: String,
    /// Host CPU (model name and logical CPUs).
    pub cpu: String,
    /// The command line that produced it.
    pub command: String,
    /// VL.
    pub vl: u32,
    /// Repetitions per measurement (the median is reported).
    pub reps: usize,
    /// The rows.
    pub rows: Vec<Row>,
    /// Compile times of every region compiled for every row, microseconds.
    pub compile_times_us: Vec<u64>,
}

/// A report as written: its fields, and what follows from them.
#[derive(Serialize)]
struct ReportJson {
    date: String,
    cpu: String,
    command: String,
    vl: u32,
    reps: usize,
    rows: Vec<Row>,
    compile_us_median: f64,
    geomean_jit_native: Vec<Geomean>,
    compile_times_us: Vec<u64>,
    targets: Vec<Target>,
}

/// The geometric mean of jit/native over the rows of one size.
#[derive(Serialize)]
struct Geomean {
    size: u64,
    geomean: f64,
    kernels: usize,
}

impl From<Report> for ReportJson {
    fn from(r: Report) -> ReportJson {
        let geomean_jit_native = r
            .sizes()
            .into_iter()
            .filter_map(|size| {
                let (geomean, kernels) = r.geomean_jit_native(Some(size))?;
                Some(Geomean {
                    size,
                    geomean,
                    kernels,
                })
            })
            .collect();
        ReportJson {
            compile_us_median: r.compile_median_us(),
            geomean_jit_native,
            targets: r.targets(),
            date: r.date,
            cpu: r.cpu,
            command: r.command,
            vl: r.vl,
            reps: r.reps,
            rows: r.rows,
            compile_times_us: r.compile_times_us,
        }
    }
}

/// `16 KiB`, `256 KiB`, `64 MiB`, or bytes.
pub fn size_name(size: u64) -> String {
    if size >= 1 << 20 && size % (1 << 20) == 0 {
        format!("{} MiB", size >> 20)
    } else if size >= 1 << 10 && size % (1 << 10) == 0 {
        format!("{} KiB", size >> 10)
    } else {
        format!("{size} B")
    }
}

fn num(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x >= 100.0 => format!("{x:.0}"),
        Some(x) if x >= 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
    }
}

fn ratio(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.2}x"))
}

/// One checked target of issue 5.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Target {
    /// What is required, e.g. `jit/native >= 0.8`.
    pub what: String,
    /// Where (kernel and size), or `all regions`.
    pub at: String,
    /// The measured value.
    pub value: f64,
    /// Whether it is met.
    pub met: bool,
}

impl Report {
    /// The issue's targets that this report measures, each with its value.
    pub fn targets(&self) -> Vec<Target> {
        let mut t = Vec::new();
        for r in &self.rows {
            let at = format!("{} {}", r.kernel, size_name(r.size));
            if ["copy32", "widensum8", "gather32", "scatter32", "saxpy32"]
                .contains(&r.kernel.as_str())
            {
                if let Some(v) = r.jit_native() {
                    t.push(Target {
                        what: "jit/native >= 0.8".into(),
                        at: at.clone(),
                        value: v,
                        met: v >= 0.8,
                    });
                }
            }
            if ["copy32", "widensum8", "saxpy32"].contains(&r.kernel.as_str())
                && r.size <= 256 << 10
            {
                if let Some(v) = r.jit_interp() {
                    t.push(Target {
                        what: "jit/interp >= 5".into(),
                        at: at.clone(),
                        value: v,
                        met: v >= 5.0,
                    });
                }
            }
            if r.kernel == "copy32" && r.size == 256 << 10 {
                if let Some(v) = r.melem[0] {
                    t.push(Target {
                        what: "interp Melem/s >= 1000".into(),
                        at,
                        value: v,
                        met: v >= 1000.0,
                    });
                }
            }
        }
        t.extend(self.issue11_targets());
        if !self.compile_times_us.is_empty() {
            let v = self.compile_median_us();
            t.push(Target {
                what: "median region compile us <= 100".into(),
                at: format!("all {} regions", self.compile_times_us.len()),
                value: v,
                met: v <= 100.0,
            });
        }
        t
    }

    /// Issue 11's targets, on the rows at 256 KiB and 16 MiB (marked `[11]`): every kernel
    /// jit >= 0.5x native and >= 4x the interpreter, gather32 and scatter32 >= 0.7x native,
    /// and the geomean of jit/native over the kernels >= 0.8 at each of the two sizes.
    fn issue11_targets(&self) -> Vec<Target> {
        let mut t = Vec::new();
        let mut push = |what: &str, at: String, value: f64, min: f64| {
            t.push(Target {
                what: format!("{what} >= {min} [11]"),
                at,
                value,
                met: value >= min,
            });
        };
        for r in self.rows.iter().filter(|r| ISSUE11_SIZES.contains(&r.size)) {
            let at = format!("{} {}", r.kernel, size_name(r.size));
            if let Some(v) = r.jit_native() {
                let min = if ["gather32", "scatter32"].contains(&r.kernel.as_str()) {
                    0.7
                } else {
                    0.5
                };
                push("jit/native", at.clone(), v, min);
            }
            if let Some(v) = r.jit_interp() {
                push("jit/interp", at, v, 4.0);
            }
        }
        for size in ISSUE11_SIZES {
            if let Some((g, n)) = self.geomean_jit_native(Some(size)) {
                let at = format!("{n} kernels {}", size_name(size));
                push("geomean jit/native", at, g, 0.8);
            }
        }
        t
    }

    /// Geometric mean of jit/native over the rows at `size` (every size when `None`) that
    /// measured both, with the number of rows; `None` when there are none.
    pub fn geomean_jit_native(&self, size: Option<u64>) -> Option<(f64, usize)> {
        let v: Vec<f64> = self
            .rows
            .iter()
            .filter(|r| size.is_none_or(|s| r.size == s))
            .filter_map(Row::jit_native)
            .filter(|&x| x > 0.0)
            .collect();
        (!v.is_empty()).then(|| {
            let g = (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp();
            (g, v.len())
        })
    }

    /// The sizes of the rows, in first-seen order.
    fn sizes(&self) -> Vec<u64> {
        let mut s: Vec<u64> = Vec::new();
        for r in &self.rows {
            if !s.contains(&r.size) {
                s.push(r.size);
            }
        }
        s
    }

    /// `geomean jit/native: 256 KiB 0.41x (17 kernels), ...`, or empty.
    fn geomean_text(&self) -> String {
        let parts: Vec<String> = self
            .sizes()
            .into_iter()
            .filter_map(|size| {
                let (g, n) = self.geomean_jit_native(Some(size))?;
                Some(format!("{} {g:.2}x ({n} kernels)", size_name(size)))
            })
            .collect();
        if parts.is_empty() {
            return String::new();
        }
        let all = self
            .geomean_jit_native(None)
            .map(|(g, n)| format!("; all rows {g:.2}x ({n})"))
            .unwrap_or_default();
        format!(" Geomean jit/native: {}{all}.", parts.join(", "))
    }

    fn targets_text(&self) -> String {
        let mut out = String::new();
        for t in self.targets() {
            let _ = writeln!(
                out,
                "{} {:<32} {:<24} {:.2}",
                if t.met { "met " } else { "MISS" },
                t.what,
                t.at,
                t.value
            );
        }
        out
    }

    /// Median compile time over every region compiled, microseconds.
    pub fn compile_median_us(&self) -> f64 {
        let v: Vec<f64> = self.compile_times_us.iter().map(|&u| u as f64).collect();
        median(&v)
    }

    fn cells(&self) -> Vec<[String; 14]> {
        self.rows
            .iter()
            .map(|r| {
                [
                    r.kernel.to_string(),
                    size_name(r.size),
                    num(r.melem[0]),
                    num(r.melem[1]),
                    num(r.melem[2]),
                    num(r.melem[3]),
                    num(r.melem[4]),
                    ratio(r.jit_native()),
                    ratio(r.jit_interp()),
                    r.compile_us_median
                        .map_or_else(|| "-".into(), |c| format!("{c:.0}")),
                    if r.regions == 0 {
                        "-".into()
                    } else {
                        r.compile_us_max.to_string()
                    },
                    if r.regions == 0 {
                        "-".into()
                    } else {
                        r.compile_us_total.to_string()
                    },
                    if r.regions == 0 {
                        "-".into()
                    } else {
                        r.tiered_compile_us.to_string()
                    },
                    if r.regions == 0 {
                        "-".into()
                    } else {
                        r.code_bytes.to_string()
                    },
                ]
            })
            .collect()
    }

    const HEAD: [&'static str; 14] = [
        "kernel",
        "size",
        "interp",
        "jit",
        "tiered",
        "native",
        "tiered+cache",
        "jit/native",
        "jit/interp",
        "compile us",
        "max us",
        "total us",
        "tiered compile us",
        "code bytes",
    ];

    fn footer(&self) -> String {
        format!(
            "Melem/s, median of {} repetitions, VL {}. jit = steady state (regions cached, compile \
             excluded); tiered = one cold `vm::run` per run, timed alone less the clock's own \
             cost (JIT setup, warm-up and compile included); tiered+cache = the same with a warm `--code-cache` (what a second \
             `lanejit run` costs). compile us / max us / total us = median, longest and total \
             compile time of the row's regions (code bytes: their machine code); median over all {} regions compiled: {:.0} us.{}",
            self.reps,
            self.vl,
            self.compile_times_us.len(),
            self.compile_median_us(),
            self.geomean_text()
        )
    }

    /// The table as aligned text; with `targets`, the project's speed targets after it.
    pub fn text(&self, targets: bool) -> String {
        let cells = self.cells();
        let mut w = Self::HEAD.map(str::len);
        for c in &cells {
            for (i, s) in c.iter().enumerate() {
                w[i] = w[i].max(s.len());
            }
        }
        let mut out = String::new();
        let line = |out: &mut String, c: &[String]| {
            for (i, s) in c.iter().enumerate() {
                if i < 2 {
                    let _ = write!(out, "{s:<width$}  ", width = w[i]);
                } else {
                    let _ = write!(out, "{s:>width$}  ", width = w[i]);
                }
            }
            let l = out.trim_end().len();
            out.truncate(l);
            out.push('\n');
        };
        line(&mut out, &Self::HEAD.map(String::from));
        for c in &cells {
            line(&mut out, c);
        }
        let _ = writeln!(out, "{}", self.footer());
        let _ = writeln!(out, "{} | {}", self.date, self.cpu);
        let text = self.targets_text();
        if targets && !text.is_empty() {
            let _ = write!(out, "Targets:\n{text}");
        }
        out
    }

    /// The table as Markdown, with date, CPU and command.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "Measured {} on {}.", self.date, self.cpu);
        let _ = writeln!(out, "Command: `{}`\n", self.command);
        let _ = writeln!(out, "| {} |", Self::HEAD.join(" | "));
        let _ = writeln!(
            out,
            "|{}",
            Self::HEAD
                .iter()
                .enumerate()
                .map(|(i, _)| if i < 2 { "---|" } else { "---:|" })
                .collect::<String>()
        );
        for c in self.cells() {
            let _ = writeln!(out, "| {} |", c.join(" | "));
        }
        let _ = writeln!(out, "\n{}", self.footer());
        let targets = self.targets_text();
        if !targets.is_empty() {
            let _ = write!(
                out,
                "\nTargets of issue 5 and, marked [11], issue 11:\n\n```\n{targets}```\n"
            );
        }
        out
    }

    /// The table as an SVG bar chart (log-scale Melem/s).
    pub fn svg(&self) -> String {
        let bar = 12.0;
        let gap = 18.0;
        let group = 4.0 * bar + gap;
        // Room for the y-axis title and the tick labels.
        let left = 84.0;
        // The title on one line, the legend on the next.
        let top = 56.0;
        let plot_h = 360.0;
        // Group labels are rotated by 60 degrees: size the space below the plot (and to the
        // right of the last group) for the longest one, at about 6.5 px a character.
        let longest = self
            .rows
            .iter()
            .map(|r| format!("{} {}", r.kernel, size_name(r.size)).len())
            .max()
            .unwrap_or(0) as f64;
        let label_w = longest * 6.5;
        let label_h = label_w * 0.87 + 24.0;
        let right = (label_w * 0.5 - group / 2.0).max(20.0);
        // At least wide enough for the title and legend.
        let width = (left + group * self.rows.len().max(1) as f64 + right).max(700.0);
        let height = top + plot_h + label_h;
        let vals = self.rows.iter().flat_map(|r| r.melem.iter().flatten());
        let max = vals.clone().fold(1.0f64, |a, &b| a.max(b));
        let min = vals.fold(max, |a, &b| a.min(b)).max(1e-3);
        let lo = min.log10().floor();
        let hi = max.log10().ceil().max(lo + 1.0);
        let y = |v: f64| top + plot_h * (1.0 - (v.max(1e-9).log10() - lo) / (hi - lo));
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" font-family="sans-serif" font-size="11">"#
        );
        let _ = writeln!(
            s,
            r#"<rect width="100%" height="100%" fill="white"/><text x="{left}" y="16" font-size="13">lanejit bench, Melem/s (log scale), VL {}: {}</text>"#,
            self.vl,
            xml(&self.date)
        );
        let _ = writeln!(
            s,
            r#"<text transform="translate(16,{:.1}) rotate(-90)" text-anchor="middle">elements per second, millions (log scale)</text>"#,
            top + plot_h / 2.0
        );
        for (i, c) in COLUMNS.iter().enumerate() {
            let x = left + 70.0 * i as f64;
            let _ = writeln!(
                s,
                r#"<rect x="{x}" y="28" width="10" height="10" fill="{}"/><text x="{}" y="37">{c}</text>"#,
                COLORS[i],
                x + 14.0
            );
        }
        let mut e = lo as i32;
        while f64::from(e) <= hi {
            let v = 10f64.powi(e);
            let yy = y(v);
            let _ = writeln!(
                s,
                "<line x1=\"{left}\" x2=\"{:.0}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#ddd\"/>\
                 <text x=\"{:.0}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                width - right,
                left - 6.0,
                yy + 4.0,
                num(Some(v))
            );
            e += 1;
        }
        for (g, r) in self.rows.iter().enumerate() {
            let x0 = left + gap / 2.0 + group * g as f64;
            for (i, v) in r.melem.iter().enumerate() {
                if let Some(v) = *v {
                    let yy = y(v);
                    let _ = writeln!(
                        s,
                        r#"<rect x="{:.1}" y="{yy:.1}" width="{bar}" height="{:.1}" fill="{}"><title>{} {} {}: {} Melem/s</title></rect>"#,
                        x0 + bar * i as f64,
                        (top + plot_h - yy).max(0.0),
                        COLORS[i],
                        r.kernel,
                        size_name(r.size),
                        COLUMNS[i],
                        num(Some(v))
                    );
                }
            }
            let lx = x0 + 2.0 * bar;
            let ly = top + plot_h + 8.0;
            let _ = writeln!(
                s,
                r#"<text transform="translate({lx:.1},{ly:.1}) rotate(60)">{} {}</text>"#,
                r.kernel,
                size_name(r.size)
            );
        }
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" x2=\"{left}\" y1=\"{top}\" y2=\"{:.0}\" stroke=\"black\"/></svg>",
            top + plot_h
        );
        s
    }

    /// Replace the text between `<!-- bench-table:begin -->` and `<!-- bench-table:end -->` in
    /// `readme` with [`Report::markdown`] (appending the markers when they are missing).
    pub fn update_readme(&self, readme: &str) -> String {
        const BEGIN: &str = "<!-- bench-table:begin -->";
        const END: &str = "<!-- bench-table:end -->";
        let body = format!("{BEGIN}\n{}{END}", self.markdown());
        match (readme.find(BEGIN), readme.find(END)) {
            (Some(a), Some(b)) if a < b => {
                format!("{}{body}{}", &readme[..a], &readme[b + END.len()..])
            }
            _ => format!("{readme}\n{body}\n"),
        }
    }
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The current UTC date and time, `YYYY-MM-DD HH:MM UTC`.
pub fn utc_now() -> String {
    let t = time::OffsetDateTime::now_utc();
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02} UTC",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute()
    )
}

/// The host CPU: `/proc/cpuinfo`'s model name and the logical CPU count.
pub fn cpu_name() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{model}, {n} logical CPUs")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Report {
        Report {
            date: "2026-12-01 21:40 UTC".into(),
            cpu: "Test CPU".into(),
            command: "lanejit bench".into(),
            vl: 32,
            reps: 5,
            rows: vec![Row {
                kernel: "copy32".into(),
                size: 16 << 10,
                elements: 4096,
                melem: [
                    Some(100.0),
                    Some(2000.0),
                    Some(50.0),
                    Some(4000.0),
                    Some(1500.0),
                ],
                compile_us_median: Some(80.0),
                compile_us_total: 240,
                compile_us_max: 90,
                regions: 2,
                tiered_compile_us: 150,
                code_bytes: 4000,
            }],
            compile_times_us: vec![70, 80, 90],
        }
    }

    #[test]
    fn ratios_and_table() {
        let r = report();
        assert_eq!(r.rows[0].jit_native(), Some(0.5));
        assert_eq!(r.rows[0].jit_interp(), Some(20.0));
        assert_eq!(r.compile_median_us(), 80.0);
        let t = r.text(false);
        assert!(t.contains("copy32  16 KiB"), "{t}");
        assert!(!t.contains("Targets:"), "{t}");
        assert!(r.text(true).contains("Targets:\n"));
        assert!(t.contains("0.50x") && t.contains("20.00x"), "{t}");
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["rows"][0]["jit_melem_s"], 2000.0);
        let t = r.targets();
        assert_eq!(t.len(), 3, "{t:?}");
        assert!(!t[0].met && t[0].what.starts_with("jit/native"));
        assert!(t[1].met && t[1].what.starts_with("jit/interp"));
        assert!(t[2].met && t[2].what.starts_with("median region compile"));
        assert_eq!(j["targets"][0]["met"], false);
        assert_eq!(j["compile_us_median"], 80.0);
    }

    #[test]
    fn geomean_and_issue11_targets() {
        let mut r = report();
        let row = r.rows[0].clone();
        for (kernel, jit) in [("gather32", 500.0), ("dot8", 8000.0)] {
            r.rows.push(Row {
                kernel: kernel.into(),
                size: 256 << 10,
                melem: [Some(100.0), Some(jit), None, Some(1000.0), None],
                ..row.clone()
            });
        }
        let (g, n) = r.geomean_jit_native(Some(256 << 10)).unwrap();
        assert_eq!(n, 2);
        assert!((g - 2.0).abs() < 1e-9, "{g}");
        assert_eq!(r.geomean_jit_native(None).unwrap().1, 3);
        assert!(r.geomean_jit_native(Some(16 << 20)).is_none());
        let t: Vec<_> = r
            .targets()
            .into_iter()
            .filter(|t| t.what.ends_with("[11]"))
            .collect();
        let find = |what: &str, at: &str| {
            t.iter()
                .find(|x| x.what.starts_with(what) && x.at == at)
                .unwrap_or_else(|| panic!("{what} {at}: {t:?}"))
        };
        assert!(!find("jit/native >= 0.7", "gather32 256 KiB").met);
        assert!(find("jit/interp >= 4", "gather32 256 KiB").met);
        assert!(find("jit/native >= 0.5", "dot8 256 KiB").met);
        assert!(find("geomean jit/native >= 0.8", "2 kernels 256 KiB").met);
        assert_eq!(t.len(), 5, "{t:?}");
        assert!(r.text(false).contains("256 KiB 2.00x (2 kernels)"));
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["geomean_jit_native"][1]["kernels"], 2);
    }

    /// The JSON is the hand-written form it replaced, key for key and value for value, and
    /// reads back as the report (the derived values recomputed, not read).
    #[test]
    fn json_keeps_its_form_and_reads_back() {
        let mut r = report();
        let row = r.rows[0].clone();
        r.rows.push(Row {
            kernel: "gather32".into(),
            size: 256 << 10,
            melem: [Some(100.0), None, Some(f64::NAN), Some(1000.0), None],
            compile_us_median: None,
            ..row
        });
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(
            text,
            concat!(
                r#"{"date":"2026-12-01 21:40 UTC","cpu":"Test CPU","command":"lanejit bench","vl":32,"#,
                r#""reps":5,"rows":[{"kernel":"copy32","size":16384,"elements":4096,"#,
                r#""interp_melem_s":100.0,"jit_melem_s":2000.0,"tiered_melem_s":50.0,"#,
                r#""native_melem_s":4000.0,"cached_melem_s":1500.0,"jit_native":0.5,"#,
                r#""jit_interp":20.0,"compile_us_median":80.0,"compile_us_total":240,"#,
                r#""compile_us_max":90,"regions":2,"tiered_compile_us":150,"code_bytes":4000},"#,
                r#"{"kernel":"gather32","size":262144,"elements":4096,"interp_melem_s":100.0,"#,
                r#""jit_melem_s":null,"tiered_melem_s":null,"native_melem_s":1000.0,"#,
                r#""cached_melem_s":null,"jit_native":null,"jit_interp":null,"#,
                r#""compile_us_median":null,"compile_us_total":240,"compile_us_max":90,"regions":2,"#,
                r#""tiered_compile_us":150,"code_bytes":4000}],"compile_us_median":80.0,"#,
                r#""geomean_jit_native":[{"size":16384,"geomean":0.5,"kernels":1}],"#,
                r#""compile_times_us":[70,80,90],"targets":[{"what":"jit/native >= 0.8","#,
                r#""at":"copy32 16 KiB","value":0.5,"met":false},{"what":"jit/interp >= 5","#,
                r#""at":"copy32 16 KiB","value":20.0,"met":true},"#,
                r#"{"what":"median region compile us <= 100","at":"all 3 regions","value":80.0,"met":true}]}"#
            )
        );
        let back: Report = serde_json::from_str(&text).unwrap();
        // NaN is written as null and reads back as not measured.
        r.rows[1].melem[2] = None;
        assert_eq!(back, r);
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
        // A report read back recomputes what follows from it, whatever the file says.
        let edited = text.replace(r#""jit_native":0.5"#, r#""jit_native":9.0"#);
        let back: Report = serde_json::from_str(&edited).unwrap();
        assert_eq!(back.rows[0].jit_native(), Some(0.5));
        let empty = Report {
            rows: Vec::new(),
            compile_times_us: Vec::new(),
            ..report()
        };
        assert_eq!(
            serde_json::to_string(&empty).unwrap(),
            concat!(
                r#"{"date":"2026-12-01 21:40 UTC","cpu":"Test CPU","command":"lanejit bench","#,
                r#""vl":32,"reps":5,"rows":[],"compile_us_median":0.0,"geomean_jit_native":[],"#,
                r#""compile_times_us":[],"targets":[]}"#
            )
        );
        assert!(serde_json::from_str::<Report>(r#"{"date":"x"}"#).is_err());
    }

    #[test]
    fn readme_markers_are_replaced() {
        let r = report();
        let old = "# x\n<!-- bench-table:begin -->\nSTALE TABLE\n<!-- bench-table:end -->\ntail\n";
        let new = r.update_readme(old);
        assert!(new.starts_with("# x\n<!-- bench-table:begin -->\nMeasured 2026-12-01"));
        assert!(new.ends_with("<!-- bench-table:end -->\ntail\n"));
        assert!(!new.contains("STALE TABLE"));
        assert_eq!(r.update_readme(&new), new);
    }

    #[test]
    fn svg_has_one_bar_per_value() {
        let s = report().svg();
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert_eq!(s.matches("<title>").count(), 5);
        assert!(s.contains("rotate(-90)\" text-anchor=\"middle\">elements per second"));
        // The rotated group labels fit below the plot: 56 + 360 + room for the longest.
        let height: f64 = s
            .split("height=\"")
            .nth(1)
            .and_then(|h| h.split('"').next())
            .and_then(|h| h.parse().ok())
            .unwrap();
        let longest = "copy32 16 KiB".len() as f64 * 6.5;
        assert!(height >= 56.0 + 360.0 + longest * 0.87, "{height}");
    }

    #[test]
    fn sizes_and_dates() {
        assert_eq!(size_name(16 << 10), "16 KiB");
        assert_eq!(size_name(64 << 20), "64 MiB");
        assert_eq!(size_name(100), "100 B");
        let d = utc_now();
        assert_eq!(d.len(), "2026-12-01 21:40 UTC".len());
        assert!(d.starts_with("20"));
    }
}
