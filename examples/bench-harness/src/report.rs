//! The suite's results: one table on the terminal, the same as JSON and CSV for machines.

use std::fmt::Write as _;

use crate::compare::Outcome;
use crate::cuda::Contender;

/// What became of one benchmark.
#[derive(Clone, Debug)]
pub enum Status {
    /// It ran; here is what it measured.
    Ran(Outcome),
    /// Its cargo feature is off: its Rust kernel is not in this build.
    Disabled,
    /// It failed before producing a result.
    Failed(String),
    /// It was not run (filtered out, or an earlier fault ended the suite).
    Skipped(String),
}

/// One benchmark's line of the report.
#[derive(Clone, Debug)]
pub struct Row {
    /// The benchmark (and its kernels' and feature's name).
    pub name: &'static str,
    /// What it computes.
    pub about: &'static str,
    /// The hint its Rust kernel carries, if any ([crate::Bench::hint]).
    pub hint: &'static str,
    /// What became of it.
    pub status: Status,
    /// NVRTC time for its CUDA C++ builds.
    pub cuda_compile_ms: f64,
    /// Driver time to load its CUDA C++ modules.
    pub cuda_load_ms: f64,
    /// Why a CUDA C++ build is missing.
    pub cuda_errors: Vec<String>,
}

impl Row {
    /// A row for a benchmark that did not run.
    pub fn not_run(name: &'static str, about: &'static str, status: Status) -> Self {
        Row {
            name,
            about,
            hint: "",
            status,
            cuda_compile_ms: 0.0,
            cuda_load_ms: 0.0,
            cuda_errors: Vec::new(),
        }
    }

    /// The outcome, when it ran.
    pub fn outcome(&self) -> Option<&Outcome> {
        match &self.status {
            Status::Ran(outcome) => Some(outcome),
            _ => None,
        }
    }
}

/// Derived figures of a benchmark that ran.
#[derive(Copy, Clone, Debug, Default)]
pub struct Figures {
    /// CUDA C++ time / ours: above 1 means ours is faster.
    pub ratio: Option<f64>,
    /// CUDA C++ `--fmad=false` time / ours.
    pub ratio_nofma: Option<f64>,
    /// Our memory throughput, GB/s.
    pub gb_s: Option<f64>,
    /// Our throughput as a share of the device-to-device copy bandwidth, %.
    pub pct_copy: Option<f64>,
    /// Our arithmetic throughput, GFLOP/s.
    pub gflop_s: Option<f64>,
}

impl Figures {
    /// The figures of `outcome`, against the copy bandwidth `copy_gb_s`.
    pub fn of(outcome: &Outcome, copy_gb_s: Option<f64>) -> Self {
        let Some(ours) = outcome.ms(Contender::Ours).filter(|&ms| ms > 0.0) else {
            return Figures::default();
        };
        let per_ms = |amount: f64| (amount > 0.0).then(|| amount / (ours * 1e6));
        let gb_s = per_ms(outcome.work.bytes);
        Figures {
            ratio: outcome.ms(Contender::Cuda).map(|cuda| cuda / ours),
            ratio_nofma: outcome.ms(Contender::CudaNoFma).map(|cuda| cuda / ours),
            gb_s,
            pct_copy: gb_s.zip(copy_gb_s).map(|(gb, copy)| 100.0 * gb / copy),
            gflop_s: per_ms(outcome.work.flops),
        }
    }
}

/// A geometric mean of ratios: (geomean, lowest ratio, its benchmark, how many).
pub type Geomean = (f64, f64, &'static str, usize);

/// Everything one run of the suite measured.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The GPU (`NVIDIA H100 80GB HBM3, sm_90, driver 13.0`).
    pub device: String,
    /// NVRTC's description, or why there is none.
    pub nvrtc: String,
    /// The architecture the CUDA C++ builds target.
    pub cuda_arch: String,
    /// Device-to-device copy bandwidth measured in this run (bytes read + written), GB/s.
    pub copy_gb_s: Option<f64>,
    /// Time to load our module as the benchmarks use it (all its kernels).
    pub ours_load_ms: f64,
    /// What it was loaded from: `cubin` (built with the binary: nothing to compile) or `PTX`
    /// (the driver JIT-compiles it).
    pub ours_image: String,
    /// Time to load the same kernels from their PTX alone (the driver JIT-compiles them).
    pub ours_ptx_load_ms: f64,
    /// Kernels in our module.
    pub ours_kernels: usize,
    /// Whether the driver's JIT cache was off (`CUDA_CACHE_DISABLE=1`): load times are then
    /// full compilations.
    pub jit_cache_disabled: bool,
    /// Timed rounds, warm-up launches, quick mode.
    pub settings: String,
    /// One row per benchmark of the suite.
    pub rows: Vec<Row>,
}

impl Report {
    /// Geometric mean, minimum (with its benchmark) and count of the CUDA/ours ratios.
    pub fn ratios(&self) -> Option<(f64, f64, &'static str, usize)> {
        self.ratios_of(|_| true, |f| f.ratio)
    }

    /// The geometric means the summary gives: over every row, over the rows without a hint,
    /// and over PolyBench/GPU's (`pb_` rows), each against CUDA C++ and against
    /// `--fmad=false`: (group, fma ratios, `--fmad=false` ratios).
    #[allow(clippy::type_complexity)]
    pub fn summaries(&self) -> Vec<(&'static str, Option<Geomean>, Option<Geomean>)> {
        let groups: [(&'static str, fn(&Row) -> bool); 3] = [
            ("all", |_| true),
            ("without hints", |r| r.hint.is_empty()),
            ("PolyBench/GPU", |r| r.name.starts_with("pb_")),
        ];
        groups
            .into_iter()
            .map(|(group, keep)| {
                (
                    group,
                    self.ratios_of(keep, |f| f.ratio),
                    self.ratios_of(keep, |f| f.ratio_nofma),
                )
            })
            .collect()
    }

    fn ratios_of(
        &self,
        keep: impl Fn(&Row) -> bool,
        pick: fn(&Figures) -> Option<f64>,
    ) -> Option<Geomean> {
        let ratios: Vec<(f64, &'static str)> = self
            .rows
            .iter()
            .filter(|row| keep(row))
            .filter_map(|row| {
                let outcome = row.outcome()?;
                pick(&Figures::of(outcome, None)).map(|r| (r, row.name))
            })
            .filter(|(r, _)| *r > 0.0 && r.is_finite())
            .collect();
        if ratios.is_empty() {
            return None;
        }
        let geomean = (ratios.iter().map(|(r, _)| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
        let (min, name) = ratios
            .iter()
            .copied()
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap_or((f64::NAN, ""));
        Some((geomean, min, name, ratios.len()))
    }

    /// Whether every benchmark that ran agreed with its references, and none failed.
    pub fn passed(&self) -> bool {
        self.rows.iter().all(|row| match &row.status {
            Status::Ran(outcome) => outcome.passed(),
            Status::Failed(_) => false,
            Status::Disabled | Status::Skipped(_) => true,
        })
    }

    /// The table printed at the end of a run.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "device: {}", self.device);
        let _ = writeln!(out, "CUDA C++: {} for {}", self.nvrtc, self.cuda_arch);
        let copy = self
            .copy_gb_s
            .map_or("not measured".to_owned(), |c| format!("{c:.1} GB/s"));
        let _ = writeln!(out, "device-to-device copy: {copy}");
        let cuda_compile: f64 = self.rows.iter().map(|r| r.cuda_compile_ms).sum();
        let cuda_load: f64 = self.rows.iter().map(|r| r.cuda_load_ms).sum();
        let _ = writeln!(
            out,
            "module load{}: cuda-oxide {:.1} ms from its {} ({:.1} ms from its PTX; {} kernels, \
             one module); CUDA C++ {:.1} ms (load) + {:.1} ms (NVRTC), {} modules",
            if self.jit_cache_disabled {
                " (JIT cache off)"
            } else {
                ""
            },
            self.ours_load_ms,
            self.ours_image,
            self.ours_ptx_load_ms,
            self.ours_kernels,
            cuda_load,
            cuda_compile,
            self.rows.iter().filter(|r| r.cuda_load_ms > 0.0).count()
        );
        let _ = writeln!(out, "settings: {}", self.settings);
        let _ = writeln!(
            out,
            "ratio = CUDA C++ time / cuda-oxide time (> 1: cuda-oxide is faster); GB/s, %copy \
             and GFLOP/s are cuda-oxide's\n"
        );
        let _ = writeln!(
            out,
            "{:<16} {:<16} {:>9} {:>9} {:>6} {:>9} {:>6} {:>8} {:>6} {:>8}  check",
            "benchmark",
            "size",
            "ours ms",
            "CUDA ms",
            "ratio",
            "nofma ms",
            "ratio",
            "GB/s",
            "%copy",
            "GFLOP/s"
        );
        for row in &self.rows {
            let _ = writeln!(out, "{}", self.table_line(row));
        }
        match self.ratios() {
            Some((geomean, min, name, n)) => {
                let _ = writeln!(
                    out,
                    "\ngeomean ratio {geomean:.3} over {n} benchmarks; lowest {min:.3} ({name})"
                );
            }
            None => {
                let _ = writeln!(out, "\nno ratios: no benchmark ran against CUDA C++");
            }
        }
        let show = |g: Option<Geomean>| match g {
            Some((geomean, min, name, n)) => format!("{geomean:.3} (lowest {min:.3}, {name}; {n})"),
            None => "-".to_owned(),
        };
        for (group, fma, nofma) in self.summaries() {
            let _ = writeln!(
                out,
                "geomean {group:<14} vs CUDA C++ {:<38} vs --fmad=false {}",
                show(fma),
                show(nofma)
            );
        }
        let hinted: Vec<String> = self
            .rows
            .iter()
            .filter(|r| !r.hint.is_empty() && r.outcome().is_some())
            .map(|r| format!("{} ({})", r.name, r.hint))
            .collect();
        if !hinted.is_empty() {
            let _ = writeln!(out, "hinted rows: {}", hinted.join(", "));
        }
        out
    }

    fn table_line(&self, row: &Row) -> String {
        let outcome = match &row.status {
            Status::Ran(outcome) => outcome,
            Status::Disabled => {
                return format!(
                    "{:<16} disabled: its Rust kernel needs cargo feature `{}`",
                    row.name, row.name
                );
            }
            Status::Failed(why) => return format!("{:<16} FAILED: {why}", row.name),
            Status::Skipped(why) => return format!("{:<16} skipped: {why}", row.name),
        };
        let f = Figures::of(outcome, self.copy_gb_s);
        let ms = |c| {
            outcome
                .ms(c)
                .map_or("-".to_owned(), |ms| format!("{ms:.4}"))
        };
        let num =
            |v: Option<f64>, digits: usize| v.map_or("-".to_owned(), |v| format!("{v:.digits$}"));
        let check = if outcome.passed() {
            "ok".to_owned()
        } else {
            let failed: Vec<&str> = outcome
                .checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| c.against.as_str())
                .collect();
            format!("FAIL vs {}", failed.join(", "))
        };
        format!(
            "{:<16} {:<16} {:>9} {:>9} {:>6} {:>9} {:>6} {:>8} {:>6} {:>8}  {check}",
            row.name,
            outcome.size,
            ms(Contender::Ours),
            ms(Contender::Cuda),
            num(f.ratio, 3),
            ms(Contender::CudaNoFma),
            num(f.ratio_nofma, 3),
            num(f.gb_s, 1),
            num(f.pct_copy, 1),
            num(f.gflop_s, 1),
        )
    }

    /// The report as JSON.
    pub fn json(&self) -> String {
        let rows = self.rows.iter().map(|row| self.row_json(row)).collect();
        let summary = match self.ratios() {
            Some((geomean, min, name, n)) => Json::Obj(vec![
                ("geomean_ratio", Json::num(geomean)),
                ("min_ratio", Json::num(min)),
                ("min_ratio_benchmark", Json::str(name)),
                ("benchmarks_with_ratio", Json::num(n as f64)),
            ]),
            None => Json::Null,
        };
        let geomean = |g: Option<Geomean>| match g {
            Some((geomean, min, name, n)) => Json::Obj(vec![
                ("geomean", Json::num(geomean)),
                ("min", Json::num(min)),
                ("min_benchmark", Json::str(name)),
                ("count", Json::num(n as f64)),
            ]),
            None => Json::Null,
        };
        let groups = self
            .summaries()
            .into_iter()
            .map(|(group, fma, nofma)| {
                Json::Obj(vec![
                    ("group", Json::str(group)),
                    ("vs_cuda", geomean(fma)),
                    ("vs_cuda_nofma", geomean(nofma)),
                ])
            })
            .collect();
        let cuda_compile: f64 = self.rows.iter().map(|r| r.cuda_compile_ms).sum();
        let cuda_load: f64 = self.rows.iter().map(|r| r.cuda_load_ms).sum();
        Json::Obj(vec![
            ("device", Json::str(&self.device)),
            ("cuda_compiler", Json::str(&self.nvrtc)),
            ("cuda_arch", Json::str(&self.cuda_arch)),
            ("settings", Json::str(&self.settings)),
            ("copy_gb_s", Json::opt(self.copy_gb_s)),
            (
                "module_load",
                Json::Obj(vec![
                    ("ours_ms", Json::num(self.ours_load_ms)),
                    ("ours_image", Json::str(&self.ours_image)),
                    ("ours_ptx_ms", Json::num(self.ours_ptx_load_ms)),
                    ("ours_kernels", Json::num(self.ours_kernels as f64)),
                    ("cuda_load_ms", Json::num(cuda_load)),
                    ("cuda_nvrtc_ms", Json::num(cuda_compile)),
                    ("jit_cache_disabled", Json::Bool(self.jit_cache_disabled)),
                ]),
            ),
            ("summary", summary),
            ("geomeans", Json::Arr(groups)),
            ("all_checks_passed", Json::Bool(self.passed())),
            ("benchmarks", Json::Arr(rows)),
        ])
        .render()
    }

    fn row_json(&self, row: &Row) -> Json {
        let mut fields = vec![
            ("name", Json::str(row.name)),
            ("about", Json::str(row.about)),
        ];
        match &row.status {
            Status::Ran(outcome) => {
                let f = Figures::of(outcome, self.copy_gb_s);
                let checks = outcome
                    .checks
                    .iter()
                    .map(|c| {
                        Json::Obj(vec![
                            ("against", Json::str(&c.against)),
                            ("tolerance", Json::str(&c.tolerance)),
                            ("passed", Json::Bool(c.passed)),
                            ("detail", Json::str(&c.detail)),
                        ])
                    })
                    .collect();
                let ms = |c| Json::opt(outcome.ms(c));
                fields.extend([
                    ("status", Json::str("ran")),
                    ("size", Json::str(&outcome.size)),
                    ("ours_ms", ms(Contender::Ours)),
                    ("cuda_ms", ms(Contender::Cuda)),
                    ("cuda_nofma_ms", ms(Contender::CudaNoFma)),
                    ("ratio", Json::opt(f.ratio)),
                    ("ratio_nofma", Json::opt(f.ratio_nofma)),
                    ("gb_s", Json::opt(f.gb_s)),
                    ("pct_copy", Json::opt(f.pct_copy)),
                    ("gflop_s", Json::opt(f.gflop_s)),
                    ("bytes", Json::num(outcome.work.bytes)),
                    ("flops", Json::num(outcome.work.flops)),
                    ("launches_per_round", Json::num(f64::from(outcome.reps))),
                    ("checks_passed", Json::Bool(outcome.passed())),
                    ("checks", Json::Arr(checks)),
                ]);
            }
            Status::Disabled => fields.push(("status", Json::str("disabled"))),
            Status::Failed(why) => {
                fields.push(("status", Json::str("failed")));
                fields.push(("error", Json::str(why)));
            }
            Status::Skipped(why) => {
                fields.push(("status", Json::str("skipped")));
                fields.push(("reason", Json::str(why)));
            }
        }
        fields.push(("cuda_nvrtc_ms", Json::num(row.cuda_compile_ms)));
        fields.push(("cuda_load_ms", Json::num(row.cuda_load_ms)));
        fields.push((
            "cuda_errors",
            Json::Arr(row.cuda_errors.iter().map(|e| Json::str(e)).collect()),
        ));
        Json::Obj(fields)
    }

    /// The report as CSV: one line per benchmark.
    pub fn csv(&self) -> String {
        let mut out = String::from(
            "name,status,size,ours_ms,cuda_ms,cuda_nofma_ms,ratio,ratio_nofma,gb_s,pct_copy,\
             gflop_s,launches_per_round,checks_passed\n",
        );
        for row in &self.rows {
            let cell = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
            let line = match &row.status {
                Status::Ran(outcome) => {
                    let f = Figures::of(outcome, self.copy_gb_s);
                    [
                        row.name.to_owned(),
                        "ran".to_owned(),
                        csv_field(&outcome.size),
                        cell(outcome.ms(Contender::Ours)),
                        cell(outcome.ms(Contender::Cuda)),
                        cell(outcome.ms(Contender::CudaNoFma)),
                        cell(f.ratio),
                        cell(f.ratio_nofma),
                        cell(f.gb_s),
                        cell(f.pct_copy),
                        cell(f.gflop_s),
                        outcome.reps.to_string(),
                        outcome.passed().to_string(),
                    ]
                    .join(",")
                }
                other => {
                    let status = match other {
                        Status::Disabled => "disabled",
                        Status::Failed(_) => "failed",
                        _ => "skipped",
                    };
                    format!("{},{status},,,,,,,,,,,", row.name)
                }
            };
            out.push_str(&line);
            out.push('\n');
        }
        out
    }
}

/// A CSV field, quoted when it needs to be.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// Just enough JSON to write the report (no dependency for it).
#[derive(Clone, Debug)]
enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(&'static str, Json)>),
}

impl Json {
    fn str(text: &str) -> Json {
        Json::Str(text.to_owned())
    }

    /// A number; JSON has no NaN or infinity, so those are `null`.
    fn num(value: f64) -> Json {
        if value.is_finite() {
            Json::Num(value)
        } else {
            Json::Null
        }
    }

    fn opt(value: Option<f64>) -> Json {
        value.map_or(Json::Null, Json::num)
    }

    fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out.push('\n');
        out
    }

    fn write(&self, out: &mut String, indent: usize) {
        let pad = |out: &mut String, n: usize| out.extend(std::iter::repeat_n(' ', n));
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Num(n) => {
                let _ = write!(out, "{n}");
            }
            Json::Str(s) => write_json_string(out, s),
            Json::Arr(items) if items.is_empty() => out.push_str("[]"),
            Json::Arr(items) => {
                out.push_str("[\n");
                for (i, item) in items.iter().enumerate() {
                    pad(out, indent + 2);
                    item.write(out, indent + 2);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                pad(out, indent);
                out.push(']');
            }
            Json::Obj(fields) => {
                out.push_str("{\n");
                for (i, (key, value)) in fields.iter().enumerate() {
                    pad(out, indent + 2);
                    write_json_string(out, key);
                    out.push_str(": ");
                    value.write(out, indent + 2);
                    out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
                }
                pad(out, indent);
                out.push('}');
            }
        }
    }
}

fn write_json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{CheckResult, Work};

    fn outcome(ours: f64, cuda: f64, passed: bool) -> Outcome {
        Outcome {
            size: "2^25 f32".into(),
            work: Work::bytes_flops(12_000_000, 2_000_000),
            times: vec![
                (Contender::Ours, ours),
                (Contender::Cuda, cuda),
                (Contender::CudaNoFma, ours),
            ],
            reps: 10,
            checks: vec![CheckResult {
                against: "CUDA C++".into(),
                tolerance: "exact".into(),
                passed,
                detail: "details \"quoted\"".into(),
            }],
        }
    }

    fn report() -> Report {
        let ran = |name, o| Row {
            name,
            about: "what",
            hint: if name == "slow" { "#[block_dims]" } else { "" },
            status: Status::Ran(o),
            cuda_compile_ms: 5.0,
            cuda_load_ms: 2.0,
            cuda_errors: vec![],
        };
        Report {
            device: "GPU".into(),
            copy_gb_s: Some(3000.0),
            rows: vec![
                ran("fast", outcome(1.0, 2.0, true)),
                ran("slow", outcome(2.0, 1.0, true)),
                Row::not_run("off", "x", Status::Disabled),
            ],
            ..Report::default()
        }
    }

    #[test]
    fn figures_follow_from_the_times() {
        let f = Figures::of(&outcome(0.004, 0.005, true), Some(3000.0));
        assert!((f.ratio.unwrap() - 1.25).abs() < 1e-12);
        assert!((f.gb_s.unwrap() - 3000.0).abs() < 1e-9);
        assert!((f.pct_copy.unwrap() - 100.0).abs() < 1e-9);
        assert!((f.gflop_s.unwrap() - 500.0).abs() < 1e-9);
        assert!((f.ratio_nofma.unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn geomean_and_minimum() {
        let r = report();
        let (geomean, min, name, n) = r.ratios().unwrap();
        assert!((geomean - 1.0).abs() < 1e-12);
        assert!((min - 0.5).abs() < 1e-12);
        assert_eq!((name, n), ("slow", 2));
        assert!(r.passed());
        let table = r.table();
        assert!(table.contains("geomean ratio 1.000 over 2 benchmarks; lowest 0.500 (slow)"));
        assert!(
            table.contains("off              disabled: its Rust kernel needs cargo feature `off`")
        );
    }

    /// The geometric means with and without hinted rows: "slow" carries a hint.
    #[test]
    fn geomeans_with_and_without_hints() {
        let r = report();
        let groups = r.summaries();
        let (_, all, _) = groups[0];
        let (_, unhinted, _) = groups[1];
        assert_eq!(all.map(|g| g.3), Some(2));
        let (geomean, _, name, n) = unhinted.expect("one row without a hint");
        assert!((geomean - 2.0).abs() < 1e-12);
        assert_eq!((name, n), ("fast", 1));
        assert!(groups[2].1.is_none(), "no PolyBench rows");
        let table = r.table();
        assert!(
            table.contains("hinted rows: slow (#[block_dims])"),
            "{table}"
        );
        assert!(
            table.contains("geomean without hints  vs CUDA C++ 2.000"),
            "{table}"
        );
    }

    #[test]
    fn failed_checks_and_failures_fail_the_run() {
        let mut r = report();
        r.rows[0].status = Status::Ran(outcome(1.0, 1.0, false));
        assert!(!r.passed());
        assert!(r.table().contains("FAIL vs CUDA C++"));
        r.rows[0].status = Status::Failed("boom".into());
        assert!(!r.passed());
    }

    #[test]
    fn json_and_csv_are_well_formed() {
        let json = report().json();
        assert!(json.contains("\"geomean_ratio\": 1"), "{json}");
        assert!(json.contains("details \\\"quoted\\\""), "{json}");
        assert!(json.contains("\"status\": \"disabled\""), "{json}");
        let mut depth = 0i32;
        let mut in_string = false;
        let mut escaped = false;
        for c in json.chars() {
            match (in_string, escaped, c) {
                (true, false, '\\') => escaped = true,
                (true, true, _) => escaped = false,
                (_, _, '"') => in_string = !in_string,
                (false, _, '{' | '[') => depth += 1,
                (false, _, '}' | ']') => depth -= 1,
                _ => {}
            }
            assert!(depth >= 0);
        }
        assert_eq!(depth, 0);
        assert!(!in_string);
        assert_eq!(Json::num(f64::NAN).render(), "null\n");

        let csv = report().csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 4);
        let columns = lines[0].split(',').count();
        assert!(
            lines.iter().all(|l| l.split(',').count() == columns),
            "{csv}"
        );
        assert!(
            lines[1].starts_with("fast,ran,2^25 f32,1,2,1,2,1,"),
            "{csv}"
        );
        assert_eq!(csv_field("a,b"), "\"a,b\"");
    }
}
