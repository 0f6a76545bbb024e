//! `tally compare A B`: two datasets of one model row by row.

use std::collections::HashMap;
use std::io::Write;

use anyhow::Result;
use tally_datasets::Dataset;
use tally_profiler::compare::{compare, DatasetComparison};

use crate::args::{CompareArgs, CompareShow, TableFormat};
use crate::commands::read_datasets;
use crate::output::Table;

pub fn run(args: &CompareArgs) -> Result<()> {
    let data = read_datasets(&[args.a.clone(), args.b.clone()])?;
    let (a, b) = (&data[0], &data[1]);
    let c = compare(a, b)?;
    let mut out = std::io::stdout().lock();
    let show = |what: CompareShow| args.show == what || args.show == CompareShow::All;
    let tables = [
        (CompareShow::Summary, summary_table(&c, a, b)),
        (CompareShow::Standalone, standalone_table(&c)),
        (CompareShow::Pairs, pairs_table(&c, a)),
    ];
    let mut first = true;
    for (what, table) in tables {
        if !show(what) {
            continue;
        }
        if !first && args.output.format == TableFormat::Table {
            writeln!(out)?;
        }
        first = false;
        table.write(args.output.format, &mut out)?;
    }
    Ok(())
}

fn label(d: &Dataset) -> String {
    format!(
        "{} {} ({})",
        d.info.backend,
        d.info.gpu.name,
        d.dir.display()
    )
}

fn summary_table(c: &DatasetComparison, a: &Dataset, b: &Dataset) -> Table {
    let s = c.summary();
    let mut t = Table::new(&["metric", "value"]);
    let rows: [(&str, String); 9] = [
        ("a", label(a)),
        ("b", label(b)),
        ("standalone_rows", s.standalone_rows.to_string()),
        (
            "standalone_median_ape_pct",
            format!("{:.2}", s.standalone_median_ape_pct),
        ),
        (
            "standalone_p90_ape_pct",
            format!("{:.2}", s.standalone_p90_ape_pct),
        ),
        ("pair_sides", s.pair_sides.to_string()),
        ("slowdown_mae", format!("{:.4}", s.slowdown_mae)),
        (
            "slowdown_correlation",
            format!("{:.4}", s.slowdown_correlation),
        ),
        (
            "unmatched_rows",
            format!(
                "{} standalone, {} pair",
                c.unmatched_standalone, c.unmatched_pair_rows
            ),
        ),
    ];
    for (k, v) in rows {
        t.push(vec![k.to_string(), v]);
    }
    t
}

fn standalone_table(c: &DatasetComparison) -> Table {
    let mut t = Table::new(&["op_id", "kernel", "sm_count", "a_us", "b_us", "b_over_a"]);
    for m in &c.standalone {
        t.push(vec![
            m.op_id.clone(),
            m.kernel.clone(),
            m.sm_count.to_string(),
            format!("{:.3}", m.a_us),
            format!("{:.3}", m.b_us),
            format!("{:.3}", m.ratio()),
        ]);
    }
    t
}

fn pairs_table(c: &DatasetComparison, a: &Dataset) -> Table {
    let kernel: HashMap<&str, &str> = a
        .ops
        .iter()
        .map(|o| (o.op_id.as_str(), o.kernel.name.as_str()))
        .collect();
    let name = |op: &str| kernel.get(op).copied().unwrap_or(op).to_string();
    let mut t = Table::new(&[
        "kernel",
        "sm_count",
        "beside",
        "beside_sm_count",
        "a_slowdown",
        "b_slowdown",
    ]);
    for p in &c.pairs {
        t.push(vec![
            name(&p.op),
            p.sm_count.to_string(),
            name(&p.beside),
            p.beside_sm_count.to_string(),
            format!("{:.4}", p.a_slowdown),
            format!("{:.4}", p.b_slowdown),
        ]);
    }
    t
}
