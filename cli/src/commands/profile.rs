//! `tally profile`: run a profiling campaign and write its dataset.

use std::io::Write;
use std::time::{Instant, SystemTime};

use anyhow::{bail, Context, Result};
use tally_datasets::{Format, RunDir};
use tally_gpu::{BackendKind, BackendOptions, GpuSpec};
use tally_kernels::open_backend;
use tally_kernels::KernelResources;
use tally_profiler::campaign::{self, CampaignConfig, PairSelection, RunMeta};
use tally_profiler::summary::summarize;
use tally_profiler::zoo;

use crate::args::{CounterSource, ProfileArgs};
use crate::commands::ncu_target;
use crate::commands::params_override;
use crate::progress::CampaignBar;

pub fn run(args: &ProfileArgs) -> Result<()> {
    let format: Format = args.format.parse()?;
    let backend_kind = BackendKind::parse(&args.backend)?;
    let gpu_name = args.gpu.as_deref().unwrap_or(match backend_kind {
        BackendKind::Sim => "h100-sxm",
        BackendKind::Cuda => tally_gpu::AUTO,
    });
    // `auto`: the spec of the device measured, not device 0's.
    let gpu = GpuSpec::resolve_on(gpu_name, args.cuda.device)?;
    let timing = args.cuda.timing()?;
    let model = zoo::resolve_model(&args.model, &params_override(&args.params))?;
    let ncu = match (args.counters, backend_kind) {
        (CounterSource::Launch, _) => None,
        (CounterSource::Ncu, BackendKind::Sim) => {
            bail!("--counters ncu needs --backend cuda (the simulator derives every counter)")
        }
        (CounterSource::Ncu, BackendKind::Cuda) => Some(ncu_target::runner(args)?),
    };
    let options = BackendOptions::new(args.seed, args.noise, args.cuda.device, timing, ncu)?;
    let backend = open_backend(backend_kind, gpu.clone(), options)?;

    let run_dir = RunDir::claim(&args.out, args.force)?;

    let config = CampaignConfig {
        sm_counts: args.sm_counts.clone(),
        split_fractions: args.splits.clone(),
        pairs: args.pairs.map_or(PairSelection::All, PairSelection::Sample),
        seed: args.seed,
        kernel_resources: args
            .kernel_resources
            .as_deref()
            .map(KernelResources::read)
            .transpose()?,
    };
    let started = SystemTime::now();
    let clock = Instant::now();
    let mut bar = CampaignBar::new(args.quiet);
    let output = campaign::run(backend.as_ref(), &model, &config, &mut |p| bar.update(p));
    bar.finish();
    let output = output?;

    let meta = RunMeta::finished_now(backend_kind.as_str(), args.seed, args.noise, started);
    let spreads = output.spreads.clone();
    let dataset = output.into_dataset(&model, &gpu, meta);
    let _lock = run_dir.lock_for_write()?;
    dataset
        .write(run_dir.root(), format)
        .with_context(|| format!("writing the dataset to `{}`", args.out.display()))?;

    let elapsed = clock.elapsed().as_secs_f64();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "profiled {} on {} ({}): {} kernels x {} partition sizes, {} pair rows in {elapsed:.2} s",
        model.name,
        gpu.name,
        backend_kind.as_str(),
        dataset.ops.len(),
        dataset.info.sm_counts.len(),
        dataset.pairs.len()
    )?;
    if let Ok(s) = summarize(std::slice::from_ref(&dataset)) {
        writeln!(
            out,
            "slowdown min {:.3} / p50 {:.3} / p90 {:.3} / max {:.3}; intensity-rule MAPE {:.1} %",
            s.slowdown_min,
            s.slowdown_p50,
            s.slowdown_p90,
            s.slowdown_max,
            s.intensity_rule_mape_pct
        )?;
    }
    if let Some((median, max)) = spreads.median_and_max() {
        writeln!(
            out,
            "timing spread (IQR / median) over {} repetitions: median {median:.1} %, max {max:.1} %",
            args.cuda.reps
        )?;
    }
    writeln!(out, "wrote {} ({})", args.out.display(), format.as_str())?;
    Ok(())
}
