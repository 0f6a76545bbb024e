//! `tally run`: resolve the jobs' models, run the workload under one policy
//! or several on the simulated GPU or a real one (`--backend cuda`: the
//! engines of tally-gpu-engine), write the run directory (tally-sched's
//! `run_output`), print a table.

use std::io::Write;
use std::path::Path;
use std::rc::Rc;

use anyhow::{bail, Context, Result};
use tally_datasets::RunDir;
use tally_gpu::{BackendKind, GpuSpec};
use tally_gpu_engine::{support, CudaDevice, CudaGpu, DeviceEngine};
use tally_predictor::{PredictorFile, RuntimePredictor};
use tally_profiler::model::ParamsOverride;
use tally_profiler::zoo;
use tally_sched::arrival_file::read_arrival_file;
use tally_sched::engine::{Engine, EngineError};
use tally_sched::error::RunError;
use tally_sched::experiment::{run_policies_on, Engines, PolicyComparison};
use tally_sched::policy::registry::parse_policies;
use tally_sched::policy::slowdown::{OracleSlowdown, PredictorSlowdown, SlowdownModel};
use tally_sched::policy::PolicyOptions;
use tally_sched::run_output::{write_run, RunRequest};
use tally_sched::runner::RunConfig;
use tally_sched::workload::{Arrivals, JobSpec, Workload};

use crate::args::{ArrivalProcess, RunArgs};
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

/// A job from a zoo model or model file (its phase must match the role,
/// where one is asked: `Some(true)` training) or from a kernel trace
/// (taken for either role: a trace has no phase).
pub fn job(name: &str, want_training: Option<bool>, trace_gpu: &GpuSpec) -> Result<JobSpec> {
    if tally_sched::trace::is_trace_path(name) {
        return Ok(tally_sched::trace::trace_job(Path::new(name), trace_gpu)?);
    }
    let model = zoo::resolve_model(name, &ParamsOverride::default())
        .with_context(|| format!("resolving model `{name}`"))?;
    let training = model.phase == tally_profiler::model::Phase::Training;
    if want_training.is_some_and(|w| w != training) {
        bail!(
            "`{name}` is an {} model; --hp takes inference models (`:infer`), --be training models (`:train`)",
            model.phase.as_str()
        );
    }
    Ok(JobSpec::gpu_bound(name, model.launches()))
}

fn slowdown_model(spec: &Option<String>, gpu: &GpuSpec) -> Result<Option<Box<dyn SlowdownModel>>> {
    let Some(spec) = spec else {
        return Ok(None);
    };
    if spec == "oracle" {
        return Ok(Some(Box::new(OracleSlowdown::new(gpu))));
    }
    let path = Path::new(spec);
    let file = PredictorFile::load(path).with_context(|| format!("reading predictor `{spec}`"))?;
    file.check_gpu(gpu, spec)?;
    let predictor = RuntimePredictor::from_model(&file, None)
        .with_context(|| format!("`{spec}`: its default method has no run-time form"))?;
    Ok(Some(Box::new(PredictorSlowdown::new(predictor, gpu))))
}

/// Each BE job's GPU utilisation alone: `--be-gpu-util`, one value for all
/// or one per `--be`, each in (0, 1]; 1 when not given.
fn be_gpu_util(args: &RunArgs) -> Result<Vec<f64>> {
    let given = &args.be_gpu_util;
    let utils = match given.len() {
        0 => vec![1.0; args.be.len()],
        1 => vec![given[0]; args.be.len()],
        n if n == args.be.len() => given.clone(),
        n => bail!(
            "--be-gpu-util: {n} values for {} --be jobs (give one for all, or one per --be)",
            args.be.len()
        ),
    };
    if let Some(u) = utils.iter().find(|&&u| !JobSpec::valid_gpu_util(u)) {
        bail!("--be-gpu-util {u}: a GPU utilisation alone must be in (0, 1]");
    }
    Ok(utils)
}

/// What `--backend cuda` cannot do, refused before anything runs.
fn check_device_run(args: &RunArgs, names: &[String]) -> Result<()> {
    if args.timeline.is_some() {
        bail!("--timeline needs --backend sim: it reads the simulator's SM occupancy, which a real GPU does not report");
    }
    if args.hp_launch_us > 0.0 {
        bail!("--hp-launch-us is the simulator's model of a framework's host time per launch; on a real GPU every launch pays tally's own host time, so it is not added (leave it at 0)");
    }
    for n in names {
        if let Some(why) = support::refusal(n) {
            bail!("--backend cuda cannot run {n}: {why}");
        }
    }
    Ok(())
}

pub fn run(args: &RunArgs) -> Result<()> {
    let backend = BackendKind::parse(&args.backend)?;
    let gpu_name = args.gpu.as_deref().unwrap_or(match backend {
        BackendKind::Sim => "a100-40gb",
        BackendKind::Cuda => tally_gpu::AUTO,
    });
    // `auto`: the spec of the device run on (the NO_DRIVER error without a
    // driver, before anything is written).
    let gpu = GpuSpec::resolve_on(gpu_name, args.cuda.device)?;
    let names = match &args.compare {
        None => parse_policies(&args.policy)?,
        Some(list) => parse_policies(list)?,
    };
    let device = match backend {
        BackendKind::Sim => None,
        BackendKind::Cuda => {
            check_device_run(args, &names)?;
            let timing = args.cuda.timing()?;
            Some(CudaGpu::open(
                args.cuda.device,
                gpu.clone(),
                args.seed,
                timing,
            )?)
        }
    };
    let options = PolicyOptions::new(args.turnaround_ms * 1e3, args.tolerance)?;
    let arrivals = match (args.load, &args.arrivals) {
        (Some(load), _) => match args.arrival_process {
            ArrivalProcess::Poisson => Arrivals::poisson(load)?,
            ArrivalProcess::FixedCount => Arrivals::fixed_count(load)?,
        },
        (None, Some(path)) => Arrivals::Times(read_arrival_file(path)?),
        (None, None) => Arrivals::ClosedLoop,
    };
    let be_gpu_util = be_gpu_util(args)?;
    if !JobSpec::valid_gpu_util(args.hp_gpu_util) {
        bail!(
            "--hp-gpu-util {}: a GPU utilisation alone must be in (0, 1]",
            args.hp_gpu_util
        );
    }
    if !JobSpec::valid_launch_interval(args.hp_launch_us) {
        bail!(
            "--hp-launch-us {}: expected a host time per launch >= 0 microseconds",
            args.hp_launch_us
        );
    }
    let run_dir = RunDir::claim(&args.out, args.force)?;
    let trace_gpu = GpuSpec::resolve(&args.trace_gpu)?;
    let workload = Workload::new(
        JobSpec {
            launch_interval_us: args.hp_launch_us,
            gpu_util: args.hp_gpu_util,
            ..job(&args.hp, Some(false), &trace_gpu)?
        },
        args.be
            .iter()
            .zip(&be_gpu_util)
            .map(|(b, &gpu_util)| {
                Ok(JobSpec {
                    gpu_util,
                    ..job(b, Some(true), &trace_gpu)?
                })
            })
            .collect::<Result<_>>()?,
    )?;
    if names.iter().any(|n| n == "tally-predict") && args.predictor.is_none() {
        bail!(
            "tally-predict needs --predictor MODEL.json (from `tally train`) or --predictor oracle"
        );
    }
    let predictor = slowdown_model(&args.predictor, &gpu)?;
    let mut predictor = Some(predictor);
    if let Some(ms) = args.timeline {
        if !(ms.is_finite() && ms > 0.0) {
            bail!("--timeline {ms}: expected a positive window in milliseconds");
        }
    }
    let cfg = RunConfig {
        gpu: gpu.clone(),
        duration_us: parse_duration_us(&args.duration)?,
        seed: args.seed,
        arrivals,
        timeline_us: args.timeline.map(|ms| ms * 1e3),
    };
    let started = std::time::SystemTime::now();
    let slowdown = || {
        // One slowdown model per run; a second tally-predict run re-reads it.
        match predictor.take() {
            Some(p) => Ok(p),
            None => slowdown_model(&args.predictor, &gpu).map_err(|e| RunError::Input {
                what: "--predictor".into(),
                reason: e.to_string(),
            }),
        }
    };
    let result = match &device {
        None => run_policies_on(
            Engines::Simulated,
            &workload,
            &cfg,
            &names,
            &options,
            slowdown,
        )?,
        Some(d) => {
            let mut source = || -> Result<Box<dyn Engine>, RunError> {
                let device = CudaDevice::new(Rc::clone(d)).map_err(EngineError::from)?;
                Ok(Box::new(DeviceEngine::new(device)))
            };
            run_policies_on(
                Engines::Measured(&mut source),
                &workload,
                &cfg,
                &names,
                &options,
                slowdown,
            )?
        }
    };
    let request = RunRequest {
        command_line: std::env::args().collect(),
        engine: backend.as_str().into(),
        engine_settings: device
            .as_deref()
            .map(|d| support::engine_settings(d, &names))
            .unwrap_or_default(),
        hp: args.hp.clone(),
        be: args.be.clone(),
        be_gpu_util,
        hp_gpu_util: args.hp_gpu_util,
        hp_launch_us: args.hp_launch_us,
        trace_gpu: args.trace_gpu.clone(),
        predictor: args.predictor.clone(),
        tolerance: args.tolerance,
        turnaround_ms: args.turnaround_ms,
    };
    result.require_hp_served(&workload.hp.name, cfg.duration_us)?;
    let _lock = run_dir.lock_for_write()?;
    write_run(&run_dir, &request, &cfg, &result, started)?;
    print_table(args, &result)
}

fn print_table(args: &RunArgs, result: &PolicyComparison) -> Result<()> {
    let mut t = Table::new(&[
        "policy",
        "hp_p99_ms",
        "p99_overhead_pct",
        "service_p99_ms",
        "service_slowdown",
        "service_mean_slowdown",
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
            format!("{:.3}", s.hp_service_latency.p99),
            format!("{:.3}", s.service_p99_slowdown),
            format!("{:.3}", s.service_mean_slowdown),
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
