//! `tally import-ncu`: an Nsight Compute CSV into a standalone dataset.

use std::io::Write;
use std::path::Path;
use std::time::SystemTime;

use anyhow::{bail, Context, Result};
use tally_datasets::{Format, RunDir};
use tally_gpu::cuda::{ncu_metrics_arg, read_ncu_csv};
use tally_gpu::GpuSpec;
use tally_profiler::campaign::RunMeta;
use tally_profiler::ncu_import::import_ncu;

use crate::args::ImportNcuArgs;

pub fn run(args: &ImportNcuArgs) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if args.print_metrics {
        writeln!(out, "{}", ncu_metrics_arg())?;
        return Ok(());
    }
    let (Some(input), Some(dir)) = (&args.input, &args.out) else {
        bail!("give the ncu CSV file and --out DIR");
    };
    let format: Format = args.format.parse()?;
    let gpu = GpuSpec::resolve(&args.gpu)?;
    let run_dir = RunDir::claim(dir, args.force)?;
    let started = SystemTime::now();
    let report = read_ncu_csv(input)?;
    let model = args.model.clone().unwrap_or_else(|| file_stem(input));
    let meta = RunMeta::finished_now("ncu", 0, 0.0, started);
    let dataset = import_ncu(&report, input, &gpu, &model, meta)?;
    dataset
        .write(run_dir.root(), format)
        .with_context(|| format!("writing the dataset to `{}`", dir.display()))?;
    writeln!(
        out,
        "imported {} launches of {} kernels from `{}` on {} (partition sizes {:?})",
        report.launches.len(),
        dataset.ops.len(),
        input.display(),
        gpu.name,
        dataset.info.sm_counts
    )?;
    if !report.ignored_metrics.is_empty() {
        writeln!(
            out,
            "ignored {} metrics tally does not use: {}",
            report.ignored_metrics.len(),
            report.ignored_metrics.join(", ")
        )?;
    }
    writeln!(out, "wrote {} ({})", dir.display(), format.as_str())?;
    Ok(())
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "ncu".to_string())
}
