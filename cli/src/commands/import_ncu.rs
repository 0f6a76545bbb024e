//! `tally import-ncu`: an Nsight Compute CSV into a standalone dataset.

use std::io::Write;
use std::path::Path;
use std::time::SystemTime;

use anyhow::{bail, Context, Result};
use tally_datasets::{time::rfc3339, Format, RunDir};
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
    let run_dir = RunDir::new(dir);
    if run_dir.run_json().exists() && !args.force {
        bail!(
            "`{}` already holds a run (run.json); pass --force to replace it",
            dir.display()
        );
    }
    let started = SystemTime::now();
    let report = read_ncu_csv(input)?;
    let model = args.model.clone().unwrap_or_else(|| file_stem(input));
    let meta = RunMeta {
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: std::env::args().collect(),
        backend: "ncu".to_string(),
        seed: 0,
        noise_sigma: 0.0,
        started_at: rfc3339(started),
        finished_at: rfc3339(SystemTime::now()),
    };
    let dataset = import_ncu(&report, input, &gpu, &model, meta)?;
    dataset
        .write(dir, format)
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
