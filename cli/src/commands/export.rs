//! `tally export DIR --to orion`: a dataset as Orion's per-kernel profile CSV.

use std::io::Write;

use anyhow::{bail, Context, Result};
use tally_datasets::Dataset;
use tally_profiler::orion_export::{orion_rows, write_orion_csv};

use crate::args::ExportArgs;
use crate::commands::refuse_output_over;

pub fn run(args: &ExportArgs) -> Result<()> {
    if args.to != "orion" {
        bail!(
            "--to `{}` is not a format tally exports (expected orion)",
            args.to
        );
    }
    if let Some(out) = &args.out {
        refuse_output_over(out, std::slice::from_ref(&args.dir))?;
    }
    let ds = Dataset::read(&args.dir)
        .with_context(|| format!("reading dataset `{}`", args.dir.display()))?;
    let rows = orion_rows(&ds)?;
    let path = args
        .out
        .clone()
        .unwrap_or_else(|| args.dir.join("orion.csv"));
    write_orion_csv(&rows, &path)?;
    let widest = ds.info.sm_counts.iter().max().copied().unwrap_or_default();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "wrote {} rows ({} kernels, durations on {} of {}'s {} SMs) to {}",
        rows.len(),
        ds.ops.len(),
        widest,
        ds.info.gpu.name,
        ds.info.gpu.sm_count,
        path.display()
    )?;
    Ok(())
}
