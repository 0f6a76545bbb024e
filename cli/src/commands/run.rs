//! `tally run`: resolve the jobs' models, run the workload under one policy
//! or several, write requests.csv, summary.csv and run.json, print a table.

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};
use tally_datasets::write_atomic;
use tally_gpu::GpuSpec;
use tally_predictor::{ModelFile, RuntimePredictor};
use tally_profiler::model::ParamsOverride;
use tally_profiler::zoo;
use tally_sched::experiment::{compare, Comparison};
use tally_sched::policy::{
    OracleSlowdown, PolicyOptions, PredictorSlowdown, SlowdownModel, POLICY_NAMES,
};
use tally_sched::runner::{RunConfig, RunError};
use tally_sched::workload::{read_arrival_file, Arrivals, JobSpec, Workload};

use crate::args::RunArgs;
use crate::output::Table;

/// Parse `30s`, `500ms`, `2m` (a bare number is seconds) to microseconds.
pub fn parse_duration_us(s: &str) -> Result<f64> {
    let s = s.trim();
    let (num, scale) = if let Some(v) = s.strip_suffix("ms") {
        (v, 1e3)
    } else if let Some(v) = s.strip_suffix("us") {
        (v, 1.0)
    } else if let Some(v) = s.strip_suffix('s') {
        (v, 1e6)
    } else if let Some(v) = s.strip_suffix('m') {
        (v, 60e6)
    } else {
        (s, 1e6)
    };
    let v: f64 = num
        .trim()
        .parse()
        .with_context(|| format!("--duration `{s}`: expected a number with s, ms or m"))?;
    if !(v.is_finite() && v > 0.0) {
        bail!("--duration `{s}` must be positive");
    }
    Ok(v * scale)
}

/// A job from a zoo model or model file (its phase must match the role)
/// or from a kernel trace (taken for either role: a trace has no phase).
fn job(name: &str, want_training: bool, trace_gpu: &GpuSpec) -> Result<JobSpec> {
    if tally_sched::trace::is_trace_path(name) {
        return Ok(tally_sched::trace::trace_job(Path::new(name), trace_gpu)?);
    }
    let model = zoo::resolve_model(name, &ParamsOverride::default())
        .with_context(|| format!("resolving model `{name}`"))?;
    let training = model.phase == tally_profiler::model::Phase::Training;
    if training != want_training {
        bail!(
            "`{name}` is an {} model; --hp takes inference models (`:infer`), --be training models (`:train`)",
            model.phase.as_str()
        );
    }
    Ok(JobSpec {
        name: name.to_string(),
        kernels: model.launches(),
    })
}

fn policies(args: &RunArgs) -> Result<Vec<String>> {
    let names: Vec<String> = match &args.compare {
        None => vec![args.policy.clone()],
        Some(list) if list == "all" => POLICY_NAMES.iter().map(|s| s.to_string()).collect(),
        Some(list) => list.split(',').map(|s| s.trim().to_string()).collect(),
    };
    for n in &names {
        if !POLICY_NAMES.contains(&n.as_str()) {
            bail!(
                "unknown policy `{n}`; expected one of {}",
                POLICY_NAMES.join(", ")
            );
        }
    }
    Ok(names)
}

fn slowdown_model(spec: &Option<String>, gpu: &GpuSpec) -> Result<Option<Box<dyn SlowdownModel>>> {
    let Some(spec) = spec else {
        return Ok(None);
    };
    if spec == "oracle" {
        return Ok(Some(Box::new(OracleSlowdown::new(gpu))));
    }
    let path = Path::new(spec);
    let file = ModelFile::load(path).with_context(|| format!("reading predictor `{spec}`"))?;
    file.check_gpu(gpu, spec)?;
    let predictor = RuntimePredictor::from_model(&file, None)
        .with_context(|| format!("`{spec}`: its default method has no run-time form"))?;
    Ok(Some(Box::new(PredictorSlowdown::new(predictor, gpu))))
}

pub fn run(args: &RunArgs) -> Result<()> {
    let gpu = GpuSpec::resolve(&args.gpu)?;
    let names = policies(args)?;
    if args.be.len() > 7 {
        bail!("at most 7 --be jobs (the engine co-runs one kernel per job, 8 at most)");
    }
    if !(args.tolerance >= 0.0 && args.tolerance.is_finite()) {
        bail!("--tolerance must be >= 0");
    }
    if !(args.turnaround_ms > 0.0 && args.turnaround_ms.is_finite()) {
        bail!("--turnaround-ms must be positive");
    }
    let arrivals = match (args.load, &args.arrivals) {
        (Some(load), _) => {
            if !(load > 0.0 && load.is_finite()) {
                bail!("--load must be positive, got {load}");
            }
            Arrivals::Poisson { load }
        }
        (None, Some(path)) => Arrivals::Times(read_arrival_file(path)?),
        (None, None) => Arrivals::ClosedLoop,
    };
    if args.out.join("run.json").exists() && !args.force {
        bail!(
            "`{}` already holds a run (run.json); pass --force to replace it",
            args.out.display()
        );
    }
    let trace_gpu = GpuSpec::resolve(&args.trace_gpu)?;
    let workload = Workload {
        hp: job(&args.hp, false, &trace_gpu)?,
        be: args
            .be
            .iter()
            .map(|b| job(b, true, &trace_gpu))
            .collect::<Result<_>>()?,
    };
    if names.iter().any(|n| n == "tally-predict") && args.predictor.is_none() {
        bail!(
            "tally-predict needs --predictor MODEL.json (from `tally train`) or --predictor oracle"
        );
    }
    let predictor = slowdown_model(&args.predictor, &gpu)?;
    let mut predictor = Some(predictor);
    let cfg = RunConfig {
        gpu: gpu.clone(),
        duration_us: parse_duration_us(&args.duration)?,
        seed: args.seed,
        arrivals,
    };
    let options = PolicyOptions {
        turnaround_us: args.turnaround_ms * 1e3,
        tolerance: args.tolerance,
    };
    let started = std::time::SystemTime::now();
    let result = compare(&workload, &cfg, &names, &options, || {
        // One slowdown model per run; a second tally-predict run re-reads it.
        match predictor.take() {
            Some(p) => Ok(p),
            None => slowdown_model(&args.predictor, &gpu).map_err(|e| RunError::Input {
                what: "--predictor".into(),
                reason: e.to_string(),
            }),
        }
    })?;
    write_outputs(args, &gpu, &cfg, &result, started)?;
    print_table(args, &result)
}

fn print_table(args: &RunArgs, result: &Comparison) -> Result<()> {
    let mut t = Table::new(&[
        "policy",
        "hp_p99_ms",
        "p99_overhead_pct",
        "hp_throughput",
        "be_throughput",
        "system_throughput",
    ]);
    for r in &result.results {
        let s = &r.summary;
        t.push(vec![
            s.policy.clone(),
            format!("{:.3}", s.hp_latency.p99),
            format!("{:.1}", s.p99_overhead_pct),
            format!("{:.3}", s.hp_throughput),
            format!("{:.3}", s.be_throughput_total),
            format!("{:.3}", s.system_throughput),
        ]);
    }
    let mut out = std::io::stdout().lock();
    t.write(args.output.format, &mut out)?;
    out.flush()?;
    Ok(())
}

fn write_outputs(
    args: &RunArgs,
    gpu: &GpuSpec,
    cfg: &RunConfig,
    result: &Comparison,
    started: std::time::SystemTime,
) -> Result<()> {
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating `{}`", args.out.display()))?;
    let ms = |us: f64| format!("{:.6}", us / 1e3);
    write_atomic(&args.out.join("requests.csv"), |w| {
        let io =
            |e: std::io::Error| tally_datasets::DatasetError::io(args.out.join("requests.csv"), e);
        writeln!(w, "policy,request,arrival_ms,start_ms,end_ms,latency_ms").map_err(io)?;
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
    })?;
    write_atomic(&args.out.join("summary.csv"), |w| {
        let io =
            |e: std::io::Error| tally_datasets::DatasetError::io(args.out.join("summary.csv"), e);
        writeln!(
            w,
            "policy,hp,be,requests,hp_avg_ms,hp_p50_ms,hp_p90_ms,hp_p95_ms,hp_p99_ms,\
             alone_avg_ms,alone_p50_ms,alone_p90_ms,alone_p95_ms,alone_p99_ms,\
             p99_overhead_pct,hp_throughput,be_throughput,system_throughput"
        )
        .map_err(io)?;
        for r in &result.results {
            let s = &r.summary;
            let (h, a) = (&s.hp_latency, &s.hp_alone_latency);
            writeln!(
                w,
                "{},{},{},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.4},{:.6},{:.6},{:.6}",
                s.policy,
                s.hp,
                s.be.join("+"),
                s.requests,
                h.avg, h.p50, h.p90, h.p95, h.p99,
                a.avg, a.p50, a.p90, a.p95, a.p99,
                s.p99_overhead_pct,
                s.hp_throughput,
                s.be_throughput_total,
                s.system_throughput
            )
            .map_err(io)?;
        }
        Ok(())
    })?;
    let secs = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0)
    };
    let meta = serde_json::json!({
        "schema_version": 1,
        "tool": "tally",
        "tool_version": env!("CARGO_PKG_VERSION"),
        "command_line": std::env::args().collect::<Vec<_>>(),
        "engine": "sim",
        "gpu": gpu,
        "seed": cfg.seed,
        "duration_us": cfg.duration_us,
        "arrivals": format!("{:?}", match &cfg.arrivals { Arrivals::Times(t) => Arrivals::Times(vec![t.len() as f64]), a => a.clone() }),
        "hp": args.hp,
        "be": args.be,
        "trace_gpu": args.trace_gpu,
        "predictor": args.predictor,
        "tolerance": args.tolerance,
        "turnaround_ms": args.turnaround_ms,
        "hp_request_alone_ms": result.hp_request_alone_us / 1e3,
        "summaries": result.results.iter().map(|r| &r.summary).collect::<Vec<_>>(),
        "start_unix_s": secs(started),
        "end_unix_s": secs(std::time::SystemTime::now()),
    });
    write_atomic(&args.out.join("run.json"), |w| {
        serde_json::to_writer_pretty(&mut *w, &meta).map_err(|e| {
            tally_datasets::DatasetError::io(args.out.join("run.json"), std::io::Error::other(e))
        })?;
        Ok(())
    })?;
    Ok(())
}
