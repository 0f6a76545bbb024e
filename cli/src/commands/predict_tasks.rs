//! `tally predict --task A --task B`: each task's latency alone and beside
//! the other on every split (or the ones given), from the task-level
//! composition in `tally_sched::colocation`; with `--versus-sim` the
//! simulator's composition beside each row and every method's error.

use std::io::Write;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use tally_gpu::cuda::TimingConfig;
use tally_gpu::{Backend, BackendKind, BackendOptions, GpuSpec, Sharing, SimBackend};
use tally_kernels::open_backend;
use tally_predictor::PredictorFile;
use tally_sched::colocation::kernel_profiles::{KernelProfiles, Need};
use tally_sched::colocation::measured::read_measured;
use tally_sched::colocation::pair_slowdown::{
    IntensityRulePairs, OraclePairs, PairSlowdown, PredictorPairs, ScalingOnly,
};
use tally_sched::colocation::task_pair::{
    needs, predict_tasks, resolve_splits, Rates, TaskQuery, TaskRow,
};
use tally_sched::host_side::Framework;
use tally_sched::workload::JobSpec;

use crate::args::PredictArgs;
use crate::commands::predict::{parse_splits, runtime_predictor};
use crate::commands::read_datasets;
use crate::commands::run::job;
use crate::output::Table;

const METHODS: &str = "predictor, scaling, intensity-rule, oracle, simulator";

pub fn run(args: &PredictArgs) -> Result<()> {
    if args.task.len() < 2 {
        bail!(
            "--task: give two tasks (or more, for every pair of them), got {}",
            args.task.len()
        );
    }
    let file = PredictorFile::load(&args.predictor)?;
    let gpu = match &args.gpu {
        Some(name) => {
            let gpu = GpuSpec::resolve(name).with_context(|| format!("--gpu `{name}`"))?;
            file.check_gpu(&gpu, &format!("--gpu `{name}`"))?;
            gpu
        }
        None => file.gpu.clone(),
    };
    let framework = Framework::parse(&args.framework).context("--framework")?;
    let tasks: Vec<JobSpec> = args
        .task
        .iter()
        .map(|t| {
            let mut task = job(t, None, &gpu).with_context(|| format!("--task `{t}`"))?;
            task.name = task_name(t);
            task.launch_interval_us = framework.launch_interval_us();
            Ok(task)
        })
        .collect::<Result<_>>()?;
    let sharing: Sharing = args
        .sharing
        .parse()
        .map_err(anyhow::Error::msg)
        .context("--sharing")?;
    let splits = resolve_splits(&gpu, &parse_splits(&args.sm)?, sharing)?;
    let names: Vec<&str> = args.methods.split(',').map(str::trim).collect();
    let pairs_of = |name: &str| -> Result<Option<Arc<dyn PairSlowdown>>> {
        Ok(match name {
            "predictor" => Some(Arc::new(PredictorPairs(runtime_predictor(args, &file)?))),
            "scaling" => Some(Arc::new(ScalingOnly)),
            "intensity-rule" => Some(Arc::new(IntensityRulePairs::of(&file))),
            "oracle" => Some(Arc::new(OraclePairs::new(&gpu))),
            "simulator" => None,
            other => bail!("--methods: unknown method `{other}`, expected some of {METHODS}"),
        })
    };
    let chosen: Vec<Option<Arc<dyn PairSlowdown>>> =
        names.iter().map(|n| pairs_of(n)).collect::<Result<_>>()?;
    let profiles = if args.versus_sim || chosen.iter().any(Option::is_some) {
        Arc::new(standalone_profiles(args, &file, &gpu, &tasks, &splits)?)
    } else {
        Arc::new(KernelProfiles::default())
    };
    let methods: Vec<Rates> = chosen
        .into_iter()
        .map(|p| match p {
            Some(pairs) => Rates::Predicted {
                profiles: profiles.clone(),
                pairs,
            },
            None => Rates::Simulator,
        })
        .collect();
    let measured = match &args.measured {
        Some(path) => {
            if !names.contains(&"predictor") {
                bail!("--measured corrects the predictor's rows: add `predictor` to --methods");
            }
            read_measured(path)?
        }
        None => Vec::new(),
    };
    let rows = predict_tasks(&TaskQuery {
        gpu: &gpu,
        tasks: &tasks,
        splits,
        methods,
        // The same composition with the simulator's own pair contention.
        reference: args.versus_sim.then(|| Rates::Predicted {
            profiles: profiles.clone(),
            pairs: Arc::new(OraclePairs::new(&gpu)),
        }),
        measured: &measured,
        corrected_method: "predictor",
        sharing,
    })?;
    print_rows(args, &rows)?;
    if args.versus_sim {
        print_errors(&names, &rows);
    }
    Ok(())
}

/// What a task is called in the output and in `--measured` files: a zoo
/// job as given (`bert-base:infer@1`), a model file or trace by its file
/// name without the extension (`tiny-mlp`), not its path.
fn task_name(arg: &str) -> String {
    let path = std::path::Path::new(arg);
    match path.file_stem() {
        Some(stem) if path.is_file() => stem.to_string_lossy().into_owned(),
        _ => arg.to_string(),
    }
}

/// The tasks' kernels on every partition size they will run on: from
/// `--data`, or measured now on `--backend`.
fn standalone_profiles(
    args: &PredictArgs,
    file: &PredictorFile,
    gpu: &GpuSpec,
    tasks: &[JobSpec],
    splits: &[(u32, u32)],
) -> Result<KernelProfiles> {
    let mut all: Vec<Need<'_>> = Vec::new();
    for (i, a) in tasks.iter().enumerate() {
        for b in &tasks[i + 1..] {
            all.extend(needs(a, b, splits));
        }
    }
    let counters = file.counter_subset();
    if !args.data.is_empty() {
        let datasets = read_datasets(&args.data)?;
        for d in &datasets {
            file.check_gpu(&d.info.gpu, &format!("`{}`", d.dir.display()))?;
        }
        return Ok(KernelProfiles::from_datasets(
            &datasets, &counters, gpu, &all,
        )?);
    }
    let backend: Box<dyn Backend> = match BackendKind::parse(&args.backend)? {
        // A prediction wants the expected latency: no measurement noise.
        BackendKind::Sim => Box::new(SimBackend::noiseless(gpu.clone())),
        kind => {
            let options = BackendOptions::new(0, 0.0, args.device, TimingConfig::default(), None)?;
            open_backend(kind, gpu.clone(), options)?
        }
    };
    Ok(KernelProfiles::from_backend(
        backend.as_ref(),
        &counters,
        &all,
    )?)
}

fn print_rows(args: &PredictArgs, rows: &[TaskRow]) -> Result<()> {
    let mut header = vec![
        "task",
        "partner",
        "method",
        "sm_count",
        "partner_sm_count",
        "solo_ms",
        "colocated_ms",
        "slowdown",
    ];
    let corrected = rows.iter().any(|r| r.corrected);
    if corrected {
        header.push("corrected");
    }
    if args.best {
        header.push("best");
    }
    if args.versus_sim {
        header.extend(["sim_colocated_ms", "error_pct"]);
    }
    let mut out = Table::new(&header);
    for r in rows {
        let mut row = vec![
            r.task.clone(),
            r.partner.clone(),
            r.method.clone(),
            r.sm_count.to_string(),
            r.partner_sm_count.to_string(),
            format!("{:.4}", r.solo_us / 1e3),
            format!("{:.4}", r.colocated_us / 1e3),
            format!("{:.4}", r.slowdown()),
        ];
        if corrected {
            row.push(if r.corrected { "yes" } else { "no" }.to_string());
        }
        if args.best {
            row.push(if r.best { "*" } else { "" }.to_string());
        }
        if let Some(sim) = r.reference_us {
            row.push(format!("{:.4}", sim / 1e3));
            row.push(format!("{:.3}", error_pct(r.colocated_us, sim)));
        }
        out.push(row);
    }
    let mut stdout = std::io::stdout().lock();
    out.write(args.output.format, &mut stdout)?;
    stdout.flush()?;
    Ok(())
}

fn error_pct(predicted: f64, truth: f64) -> f64 {
    100.0 * (predicted - truth).abs() / truth
}

/// Per method: rows, mean and p90 of the absolute percentage error of the
/// co-located latency against the oracle composition (stderr, so the
/// table on stdout stays machine-readable).
fn print_errors(methods: &[&str], rows: &[TaskRow]) {
    eprintln!(
        "co-located latency against the same composition with the simulator's pair contention (oracle):"
    );
    for m in methods {
        let mut e: Vec<f64> = rows
            .iter()
            .filter(|r| r.method == *m)
            .filter_map(|r| r.reference_us.map(|s| error_pct(r.colocated_us, s)))
            .collect();
        if e.is_empty() {
            continue;
        }
        e.sort_by(f64::total_cmp);
        let mean = e.iter().sum::<f64>() / e.len() as f64;
        let p90 = e[((e.len() as f64 * 0.9).ceil() as usize).clamp(1, e.len()) - 1];
        eprintln!(
            "  {m:<15} rows {:>5}  MAPE {mean:6.2} %  p90 {p90:6.2} %  max {:6.2} %",
            e.len(),
            e[e.len() - 1]
        );
    }
}
