//! `tally summary`: interference statistics of one or more datasets.

use anyhow::Result;
use tally_profiler::summary::summarize;

use crate::args::SummaryArgs;
use crate::commands::read_datasets;
use crate::output::Table;

pub fn run(args: &SummaryArgs) -> Result<()> {
    let datasets = read_datasets(&args.data)?;
    let s = summarize(&datasets)?;
    let mut table = Table::new(&["metric", "value"]);
    let rows: [(&str, String); 15] = [
        ("runs", s.runs.to_string()),
        ("pair_rows", s.pair_rows.to_string()),
        ("compute_bound_ops", s.compute_bound_ops.to_string()),
        ("memory_bound_ops", s.memory_bound_ops.to_string()),
        ("slowdown_min", format!("{:.4}", s.slowdown_min)),
        ("slowdown_p50", format!("{:.4}", s.slowdown_p50)),
        ("slowdown_p90", format!("{:.4}", s.slowdown_p90)),
        ("slowdown_p99", format!("{:.4}", s.slowdown_p99)),
        ("slowdown_max", format!("{:.4}", s.slowdown_max)),
        (
            "compute_compute_mean_slowdown",
            format!("{:.4}", s.compute_compute_mean_slowdown),
        ),
        (
            "compute_memory_mean_slowdown",
            format!("{:.4}", s.compute_memory_mean_slowdown),
        ),
        (
            "memory_memory_mean_slowdown",
            format!("{:.4}", s.memory_memory_mean_slowdown),
        ),
        (
            "intensity_rule_mape_pct",
            format!("{:.2}", s.intensity_rule_mape_pct),
        ),
        (
            "intensity_rule_p90_ape_pct",
            format!("{:.2}", s.intensity_rule_p90_ape_pct),
        ),
        ("sides", s.sides.to_string()),
    ];
    for (k, v) in rows {
        table.push(vec![k.to_string(), v]);
    }
    table.write(args.output.format, &mut std::io::stdout().lock())?;
    Ok(())
}
