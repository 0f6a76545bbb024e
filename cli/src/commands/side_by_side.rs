//! `tally side-by-side`: read `tally run` directories and the published
//! table, write `side_by_side.csv` and print the per-policy means and
//! errors (tally-sched's `side_by_side`).

use std::io::Write;

use anyhow::{Context, Result};
use tally_sched::published::read_published;
use tally_sched::run_output::{read_summary, SUMMARY_CSV};
use tally_sched::side_by_side::{hp_alone_times, join, policy_errors, write_side_by_side};

use crate::args::{SideBySideArgs, TableFormat};
use crate::output::Table;

pub fn run(args: &SideBySideArgs) -> Result<()> {
    let published = read_published(&args.published)
        .with_context(|| format!("reading the published table `{}`", args.published.display()))?;
    let mut simulated = Vec::new();
    for dir in &args.runs {
        let path = dir.join(SUMMARY_CSV);
        if !path.is_file() {
            anyhow::bail!(
                "`{}` is not a `tally run` directory: it has no {SUMMARY_CSV}",
                dir.display()
            );
        }
        simulated.extend(read_summary(&path)?);
    }
    let rows = join(&simulated, &published);
    write_side_by_side(&args.out, &rows)?;
    let opt =
        |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    let mut t = Table::new(&[
        "policy",
        "pairs",
        "p99_slowdown",
        "published",
        "p99_ratio_geomean",
        "mean_ratio_geomean",
        "system_throughput",
        "published ",
        "throughput_mae",
    ]);
    for e in policy_errors(&rows) {
        t.push(vec![
            e.policy,
            e.pairs.to_string(),
            format!("{:.3}", e.mean_p99_slowdown),
            opt(e.published_mean_p99_slowdown, 3),
            opt(e.p99_ratio_geomean, 3),
            opt(e.mean_ratio_geomean, 3),
            format!("{:.3}", e.mean_system_throughput),
            opt(e.published_mean_system_throughput, 3),
            opt(e.system_throughput_mae, 3),
        ]);
    }
    let mut out = std::io::stdout().lock();
    t.write(args.output.format, &mut out)?;
    // The unit of every slowdown: each HP request alone. Only in the
    // human-readable form, so that csv and json stay one table.
    if args.output.format == TableFormat::Table {
        let mut alone = Table::new(&["hp", "alone_ms", "published_alone_ms"]);
        for (hp, sim, published) in hp_alone_times(&rows) {
            alone.push(vec![hp, opt(sim, 3), opt(published, 3)]);
        }
        writeln!(out)?;
        alone.write(args.output.format, &mut out)?;
    }
    out.flush()?;
    Ok(())
}
