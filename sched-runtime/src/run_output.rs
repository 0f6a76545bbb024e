//! The files of a `tally run` directory, owned here: `requests.csv` (every
//! HP request of every policy, and of the HP job alone), `summary.csv` (one
//! row per policy), `timeline.csv` (with `--timeline`: SMs held by each
//! job at every change) and `run.json` (provenance and the summaries), each
//! written through a temporary file and renamed, `run.json` last so that
//! an interrupted run never looks complete; and the readers of
//! `summary.csv` (comparisons), `requests.csv`, `timeline.csv` and
//! `run.json`'s title fields (figures).

use std::io::Write;
use std::path::Path;
use std::time::SystemTime;

use serde::Serialize;
use tally_datasets::{write_atomic, DatasetError, RunDir};
use tally_gpu::GpuSpec;

use crate::experiment::PolicyComparison;
use crate::metrics::Summary;
use crate::runner::RunConfig;
use crate::workload::Arrivals;

/// Every request of every policy (`alone` first).
pub const REQUESTS_CSV: &str = "requests.csv";
/// One row per policy.
pub const SUMMARY_CSV: &str = "summary.csv";

/// SM occupancy by job over the run's first part (`--timeline`).
pub const TIMELINE_CSV: &str = "timeline.csv";
/// The columns of `timeline.csv`: from `time_ms` on, `job`'s blocks hold
/// `sm_count` SMs under `policy`.
pub const TIMELINE_COLUMNS: [&str; 4] = ["policy", "time_ms", "job", "sm_count"];

/// The columns of `requests.csv`.
pub const REQUEST_COLUMNS: [&str; 6] = [
    "policy",
    "request",
    "arrival_ms",
    "start_ms",
    "end_ms",
    "latency_ms",
];

/// The columns of `summary.csv` every reader needs; the mean service
/// latencies ([`SUMMARY_MEAN_COLUMNS`]) follow them.
pub const SUMMARY_COLUMNS: [&str; 21] = [
    "policy",
    "hp",
    "be",
    "requests",
    "hp_avg_ms",
    "hp_p50_ms",
    "hp_p90_ms",
    "hp_p95_ms",
    "hp_p99_ms",
    "alone_avg_ms",
    "alone_p50_ms",
    "alone_p90_ms",
    "alone_p95_ms",
    "alone_p99_ms",
    "p99_overhead_pct",
    "hp_service_p99_ms",
    "alone_service_p99_ms",
    "service_p99_slowdown",
    "hp_throughput",
    "be_throughput",
    "system_throughput",
];

/// The mean service latency, alone and its ratio: the last columns of
/// `summary.csv` (absent in files written before them).
pub const SUMMARY_MEAN_COLUMNS: [&str; 3] = [
    "hp_service_avg_ms",
    "alone_service_avg_ms",
    "service_mean_slowdown",
];

/// What a run was asked to do, as its user wrote it (for `run.json`).
#[derive(Debug, Clone, Serialize)]
pub struct RunRequest {
    pub command_line: Vec<String>,
    /// The engine the policies ran on (`sim`, `cuda`).
    pub engine: String,
    /// What the engine records of itself: on a real GPU the device, the
    /// driver and the measurement settings, and how each policy ran in one
    /// process (empty for the simulator, whose spec is `gpu`).
    pub engine_settings: std::collections::BTreeMap<String, String>,
    pub hp: String,
    pub be: Vec<String>,
    /// Each BE job's GPU utilisation alone (`JobSpec::gpu_util`).
    pub be_gpu_util: Vec<f64>,
    /// The HP job's GPU utilisation alone (`JobSpec::gpu_util`).
    pub hp_gpu_util: f64,
    /// The HP job's host time per launch (`JobSpec::launch_interval_us`).
    pub hp_launch_us: f64,
    pub trace_gpu: String,
    pub predictor: Option<String>,
    pub tolerance: f64,
    pub turnaround_ms: f64,
}

/// `run.json` of a `tally run` directory.
#[derive(Debug, Serialize)]
struct RunJson<'a> {
    schema_version: u32,
    tool: &'static str,
    tool_version: &'static str,
    command_line: &'a [String],
    engine: &'a str,
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    engine_settings: &'a std::collections::BTreeMap<String, String>,
    gpu: &'a GpuSpec,
    seed: u64,
    duration_us: f64,
    arrivals: String,
    hp: &'a str,
    be: &'a [String],
    be_gpu_util: &'a [f64],
    hp_gpu_util: f64,
    hp_launch_us: f64,
    trace_gpu: &'a str,
    predictor: &'a Option<String>,
    tolerance: f64,
    turnaround_ms: f64,
    hp_request_alone_ms: f64,
    summaries: Vec<&'a Summary>,
    start_unix_s: f64,
    end_unix_s: f64,
}

/// Write a comparison's three files into `dir`.
pub fn write_run(
    dir: &RunDir,
    request: &RunRequest,
    cfg: &RunConfig,
    result: &PolicyComparison,
    started: SystemTime,
) -> Result<(), DatasetError> {
    let root = dir.root();
    std::fs::create_dir_all(root).map_err(|e| DatasetError::io(root, e))?;
    write_requests(&root.join(REQUESTS_CSV), result)?;
    write_summary(&root.join(SUMMARY_CSV), result)?;
    if result.results.iter().any(|r| r.timeline.is_some()) {
        write_timeline(&root.join(TIMELINE_CSV), result)?;
    }
    let secs = |t: SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0)
    };
    // Given arrival times are recorded by their count, not listed.
    let arrivals = match &cfg.arrivals {
        Arrivals::Times(t) => Arrivals::Times(vec![t.len() as f64]),
        a => a.clone(),
    };
    let meta = RunJson {
        schema_version: 1,
        tool: "tally",
        tool_version: env!("CARGO_PKG_VERSION"),
        command_line: &request.command_line,
        engine: &request.engine,
        engine_settings: &request.engine_settings,
        gpu: &cfg.gpu,
        seed: cfg.seed,
        duration_us: cfg.duration_us,
        arrivals: format!("{arrivals:?}"),
        hp: &request.hp,
        be: &request.be,
        be_gpu_util: &request.be_gpu_util,
        hp_gpu_util: request.hp_gpu_util,
        hp_launch_us: request.hp_launch_us,
        trace_gpu: &request.trace_gpu,
        predictor: &request.predictor,
        tolerance: request.tolerance,
        turnaround_ms: request.turnaround_ms,
        hp_request_alone_ms: result.hp_request_alone_us / 1e3,
        summaries: result.results.iter().map(|r| &r.summary).collect(),
        start_unix_s: secs(started),
        end_unix_s: secs(SystemTime::now()),
    };
    let path = dir.run_json();
    write_atomic(&path, |w| {
        serde_json::to_writer_pretty(&mut *w, &meta)
            .map_err(|e| DatasetError::io(&path, std::io::Error::other(e)))
    })
}

fn ms(us: f64) -> String {
    format!("{:.6}", us / 1e3)
}

fn write_requests(path: &Path, result: &PolicyComparison) -> Result<(), DatasetError> {
    write_atomic(path, |w| {
        let io = |e: std::io::Error| DatasetError::io(path, e);
        writeln!(w, "{}", REQUEST_COLUMNS.join(",")).map_err(io)?;
        let all = std::iter::once(("alone", &result.alone)).chain(
            result
                .results
                .iter()
                .map(|r| (r.summary.policy.as_str(), &r.outcome)),
        );
        for (policy, o) in all {
            for (i, r) in o.requests.iter().enumerate() {
                writeln!(
                    w,
                    "{policy},{i},{},{},{},{}",
                    ms(r.arrival_us),
                    ms(r.start_us),
                    ms(r.end_us),
                    ms(r.latency_us())
                )
                .map_err(io)?;
            }
        }
        Ok(())
    })
}

fn write_timeline(path: &Path, result: &PolicyComparison) -> Result<(), DatasetError> {
    write_atomic(path, |w| {
        let io = |e: std::io::Error| DatasetError::io(path, e);
        writeln!(w, "{}", TIMELINE_COLUMNS.join(",")).map_err(io)?;
        for r in &result.results {
            let Some(t) = &r.timeline else { continue };
            let s = &r.summary;
            for p in &t.points {
                // Job 0 is the HP job, job i the i-th BE job.
                let job = match p.job {
                    0 => s.hp.as_str(),
                    i => s.be.get(i - 1).map_or("?", String::as_str),
                };
                writeln!(w, "{},{},{job},{}", s.policy, ms(p.time_us), p.sms).map_err(io)?;
            }
        }
        Ok(())
    })
}

/// One `timeline.csv` row.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineRow {
    pub policy: String,
    pub time_ms: f64,
    pub job: String,
    pub sm_count: f64,
}

/// Read a run directory's `timeline.csv`.
pub fn read_timeline(path: &Path) -> Result<Vec<TimelineRow>, crate::error::RunError> {
    let table = crate::csv_columns::CsvColumns::read(path, &TIMELINE_COLUMNS)?;
    table
        .rows()
        .map(|r| {
            Ok(TimelineRow {
                policy: r.text("policy").to_string(),
                time_ms: r.number("time_ms")?,
                job: r.text("job").to_string(),
                sm_count: r.number("sm_count")?,
            })
        })
        .collect()
}

fn write_summary(path: &Path, result: &PolicyComparison) -> Result<(), DatasetError> {
    write_atomic(path, |w| {
        let io = |e: std::io::Error| DatasetError::io(path, e);
        writeln!(
            w,
            "{},{}",
            SUMMARY_COLUMNS.join(","),
            SUMMARY_MEAN_COLUMNS.join(",")
        )
        .map_err(io)?;
        for r in &result.results {
            let s = &r.summary;
            let (h, a) = (&s.hp_latency, &s.hp_alone_latency);
            writeln!(
                w,
                "{},{},{},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.4},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6}",
                s.policy,
                s.hp,
                s.be.join("+"),
                s.requests,
                h.avg, h.p50, h.p90, h.p95, h.p99,
                a.avg, a.p50, a.p90, a.p95, a.p99,
                s.p99_overhead_pct,
                s.hp_service_latency.p99,
                s.hp_alone_service_latency.p99,
                s.service_p99_slowdown,
                s.hp_throughput,
                s.be_throughput_total,
                s.system_throughput,
                s.hp_service_latency.avg,
                s.hp_alone_service_latency.avg,
                s.service_mean_slowdown
            )
            .map_err(io)?;
        }
        Ok(())
    })
}

/// The fields of one `summary.csv` row that comparisons read back.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    pub policy: String,
    pub hp: String,
    pub be: String,
    /// HP requests completed in the run: what its p99 rests on.
    pub requests: usize,
    pub p99_overhead_pct: f64,
    pub service_p99_slowdown: f64,
    /// `None` in files written before the column existed.
    pub service_mean_slowdown: Option<f64>,
    /// The HP request's mean service latency alone, ms (`None` likewise).
    pub alone_service_avg_ms: Option<f64>,
    pub hp_throughput: f64,
    pub be_throughput: f64,
    pub system_throughput: f64,
}

/// Read a run directory's `summary.csv`.
pub fn read_summary(path: &Path) -> Result<Vec<SummaryRow>, crate::error::RunError> {
    let table = crate::csv_columns::CsvColumns::read(path, &SUMMARY_COLUMNS)?;
    table
        .rows()
        .map(|r| {
            Ok(SummaryRow {
                policy: r.text("policy").to_string(),
                hp: r.text("hp").to_string(),
                be: r.text("be").to_string(),
                requests: r.count("requests")?,
                p99_overhead_pct: r.number("p99_overhead_pct")?,
                service_p99_slowdown: r.number("service_p99_slowdown")?,
                service_mean_slowdown: r.optional_number("service_mean_slowdown")?,
                alone_service_avg_ms: r.optional_number("alone_service_avg_ms")?,
                hp_throughput: r.number("hp_throughput")?,
                be_throughput: r.number("be_throughput")?,
                system_throughput: r.number("system_throughput")?,
            })
        })
        .collect()
}

/// One `requests.csv` row as figures read it back.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRow {
    pub policy: String,
    pub latency_ms: f64,
}

/// Read a run directory's `requests.csv`.
pub fn read_requests(path: &Path) -> Result<Vec<RequestRow>, crate::error::RunError> {
    let table = crate::csv_columns::CsvColumns::read(path, &REQUEST_COLUMNS)?;
    table
        .rows()
        .map(|r| {
            Ok(RequestRow {
                policy: r.text("policy").to_string(),
                latency_ms: r.number("latency_ms")?,
            })
        })
        .collect()
}

/// What a run was, from its `run.json`: enough to title a figure.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct RunTitle {
    pub engine: String,
    pub hp: String,
    pub be: Vec<String>,
    #[serde(rename = "gpu", deserialize_with = "gpu_name")]
    pub gpu_name: String,
}

fn gpu_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(serde::Deserialize)]
    struct Named {
        name: String,
    }
    <Named as serde::Deserialize>::deserialize(d).map(|n| n.name)
}

/// Read the title fields of a run directory's `run.json`.
pub fn read_run_title(path: &Path) -> Result<RunTitle, crate::error::RunError> {
    read_run_json(path)
}

/// The GPU a run ran on, from its `run.json`.
pub fn read_run_gpu(path: &Path) -> Result<GpuSpec, crate::error::RunError> {
    #[derive(serde::Deserialize)]
    struct OnGpu {
        gpu: GpuSpec,
    }
    read_run_json::<OnGpu>(path).map(|r| r.gpu)
}

fn read_run_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, crate::error::RunError> {
    let bad = |reason: String| crate::error::RunError::Input {
        what: format!("`{}`", path.display()),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| bad(format!("not a `tally run` run.json: {e}")))
}
