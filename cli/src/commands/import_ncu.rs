//! `tally import-ncu`: an Nsight Compute CSV into a standalone dataset, or
//! with `--print-metrics` what an export holds of the counters the
//! predictor needs and the ncu command that collects the rest.

use std::io::Write;
use std::path::Path;
use std::time::SystemTime;

use anyhow::{bail, Context, Result};
use tally_datasets::{Format, RunDir};
use tally_gpu::cuda::{ncu_command_for, ncu_metrics_arg, read_ncu_csv, spec_from_report};
use tally_gpu::{Counter, GpuSpec};
use tally_predictor::profile::REQUIRED_COUNTERS;
use tally_profiler::campaign::RunMeta;
use tally_profiler::ncu_import::{import_ncu, ImportGpu};

use crate::args::ImportNcuArgs;

/// The counters `--print-metrics` reports on: the duration every row needs
/// and the ones the predictor reads.
fn predictor_needs() -> Vec<Counter> {
    std::iter::once(Counter::DurationNs)
        .chain(REQUIRED_COUNTERS)
        .collect()
}

pub fn run(args: &ImportNcuArgs) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if args.print_metrics {
        match &args.input {
            None => writeln!(out, "{}", ncu_metrics_arg())?,
            Some(input) => print_coverage(input, &mut out)?,
        }
        return Ok(());
    }
    let (Some(input), Some(dir)) = (&args.input, &args.out) else {
        bail!("give the ncu CSV file and --out DIR");
    };
    let format: Format = args.format.parse()?;
    let started = SystemTime::now();
    let report = read_ncu_csv(input)?;
    let gpu = match &args.gpu {
        Some(name) => ImportGpu::Named {
            spec: GpuSpec::resolve(name)?,
            given_as: name.clone(),
        },
        None => ImportGpu::Derived(spec_from_report(&report, input)?),
    };
    let run_dir = RunDir::claim(dir, args.force)?;
    let model = args.model.clone().unwrap_or_else(|| file_stem(input));
    let meta = RunMeta::finished_now("ncu", 0, 0.0, started);
    let dataset = import_ncu(&report, input, &gpu, &model, meta)?;
    let _lock = run_dir.lock_for_write()?;
    dataset
        .write(run_dir.root(), format)
        .with_context(|| format!("writing the dataset to `{}`", dir.display()))?;
    writeln!(
        out,
        "imported {} launches of {} kernels from `{}` ({} layout) on {} (partition sizes {:?})",
        report.launches.len(),
        dataset.ops.len(),
        input.display(),
        report.layout.as_str(),
        gpu.spec().name,
        dataset.info.sm_counts
    )?;
    if let ImportGpu::Derived(d) = &gpu {
        writeln!(
            out,
            "GPU derived from the export: compute capability from the {}, {} SMs from the {}, \
             the rest from preset {}",
            d.compute_capability_from, d.spec.sm_count, d.sm_count_from, d.preset
        )?;
    }
    let columns = &dataset.standalone.counter_names;
    let needed = predictor_needs();
    let lacking: Vec<Counter> = needed
        .iter()
        .copied()
        .filter(|c| !columns.iter().any(|n| n == c.name()))
        .collect();
    writeln!(
        out,
        "counters: {} of {} (the predictor's: {} of {})",
        columns.len(),
        Counter::ALL.len(),
        needed.len() - lacking.len(),
        needed.len()
    )?;
    if !lacking.is_empty() {
        writeln!(
            out,
            "lacking for the predictor: {} (see --print-metrics; or tally train --counters-from {})",
            lacking.iter().map(Counter::name).collect::<Vec<_>>().join(", "),
            dir.display()
        )?;
    }
    if !report.ignored_metrics.is_empty() {
        writeln!(
            out,
            "ignored {} metrics tally does not use: {}",
            report.ignored_metrics.len(),
            report.ignored_metrics.join(", ")
        )?;
    }
    if !report.skipped_lines.is_empty() {
        writeln!(
            out,
            "skipped {} non-CSV lines after the header (program output)",
            report.skipped_lines.len()
        )?;
    }
    writeln!(out, "wrote {} ({})", dir.display(), format.as_str())?;
    Ok(())
}

/// Per kernel, the predictor's counters present and missing, then the ncu
/// command that collects the missing ones.
fn print_coverage(input: &Path, out: &mut impl Write) -> Result<()> {
    let report = read_ncu_csv(input)?;
    let needed = predictor_needs();
    let kernels = report.coverage(&needed);
    let short = |name: &str| -> String {
        let name = name.split('<').next().unwrap_or(name);
        if name.chars().count() > 48 {
            format!("{}...", name.chars().take(45).collect::<String>())
        } else {
            name.to_string()
        }
    };
    writeln!(
        out,
        "{} launches of {} kernels in `{}` ({} layout); of the {} counters the predictor needs:",
        report.launches.len(),
        kernels.len(),
        input.display(),
        report.layout.as_str(),
        needed.len()
    )?;
    // Kernels tend to lack the same counters: each distinct set is listed
    // once, under a letter.
    let mut sets: Vec<&Vec<Counter>> = Vec::new();
    writeln!(
        out,
        "{:<48}  {:>8}  {:>7}  missing",
        "kernel", "launches", "present"
    )?;
    for k in &kernels {
        let missing = if k.missing.is_empty() {
            "-".to_string()
        } else {
            let at = sets
                .iter()
                .position(|s| **s == k.missing)
                .unwrap_or_else(|| {
                    sets.push(&k.missing);
                    sets.len() - 1
                });
            format!("{} (set {})", k.missing.len(), set_label(at))
        };
        writeln!(
            out,
            "{:<48}  {:>8}  {:>7}  {missing}",
            short(&k.kernel_name),
            k.launches,
            format!("{}/{}", k.present.len(), needed.len()),
        )?;
    }
    for (i, set) in sets.iter().enumerate() {
        writeln!(out, "set {}:", set_label(i))?;
        for c in set.iter() {
            writeln!(out, "  {}", c.name())?;
        }
    }
    let missing = report.missing_anywhere(&needed);
    if missing.is_empty() {
        writeln!(out, "every kernel has every counter the predictor needs")?;
    } else {
        writeln!(out, "collect the missing ones with:")?;
        writeln!(out, "  {}", ncu_command_for(&missing, "<program> [args]"))?;
    }
    Ok(())
}

/// `a`, `b`, ... `z`, then `27`, ...: short names of the missing sets.
fn set_label(i: usize) -> String {
    u8::try_from(i)
        .ok()
        .filter(|i| *i < 26)
        .map_or_else(|| (i + 1).to_string(), |i| char::from(b'a' + i).to_string())
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "ncu".to_string())
}
