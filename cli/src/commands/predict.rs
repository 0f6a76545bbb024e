//! `tally predict`: co-located latencies of operator pairs at every SM
//! split (or the ones given), the best split under the slowdown bound, and
//! with `--explain` the linear model's per-resource terms. (`--task` goes
//! to `predict_tasks.rs`, which shares this file's split parsing and
//! run-time predictor.)

use anyhow::{anyhow, bail, Result};
use tally_predictor::features::Resource;
use tally_predictor::pair_file::{read_pair_requests, PairRequest};
use tally_predictor::predict::{predict_pair, resolve_op, PairQuery};
use tally_predictor::samples::ProfileTable;
use tally_predictor::{Method, PredictorFile, RuntimePredictor};

use crate::args::PredictArgs;
use crate::commands::read_datasets;
use crate::output::Table;

/// `--sm A,B` values as splits.
pub fn parse_splits(values: &[String]) -> Result<Vec<(u32, u32)>> {
    values
        .iter()
        .map(|v| {
            let parts: Vec<&str> = v.split(',').map(str::trim).collect();
            match parts.as_slice() {
                [a, b] => match (a.parse::<u32>(), b.parse::<u32>()) {
                    (Ok(a), Ok(b)) if a > 0 && b > 0 => Ok((a, b)),
                    _ => bail!("--sm `{v}`: expected two positive SM counts, SM_A,SM_B"),
                },
                _ => bail!("--sm `{v}`: expected SM_A,SM_B"),
            }
        })
        .collect()
}

/// The learned method `--method` names (the file's default without it).
pub fn runtime_predictor(args: &PredictArgs, file: &PredictorFile) -> Result<RuntimePredictor> {
    let method = match &args.method {
        Some(m) => Some(
            Method::parse(m)
                .ok_or_else(|| anyhow!("unknown method `{m}`, expected linear or gbm"))?,
        ),
        None => None,
    };
    RuntimePredictor::from_model(file, method).ok_or_else(|| {
        anyhow!(
            "`{}` has no learned `{}` model (it holds: {})",
            args.predictor.display(),
            method.map_or("default", |m| m.as_str()),
            Method::LEARNED
                .iter()
                .filter(|m| file.models.has(**m))
                .map(|m| m.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

pub fn run(args: &PredictArgs) -> Result<()> {
    if !(args.max_slowdown.is_finite() && args.max_slowdown >= 1.0) {
        bail!(
            "--max-slowdown must be a number >= 1, got {}",
            args.max_slowdown
        );
    }
    let file = PredictorFile::load(&args.predictor)?;
    let predictor = runtime_predictor(args, &file)?;
    let [data] = args.data.as_slice() else {
        bail!("operator pairs take one --data dataset (several only with --task)");
    };
    let dataset = read_datasets(std::slice::from_ref(data))?.remove(0);
    file.check_gpu(&dataset.info.gpu, &format!("`{}`", data.display()))?;
    let splits: Vec<Option<(u32, u32)>> = match parse_splits(&args.sm)? {
        s if s.is_empty() => vec![None],
        s => s.into_iter().map(Some).collect(),
    };
    let requests = match (&args.pairs, &args.a, &args.b) {
        (Some(path), _, _) => read_pair_requests(path)?,
        (None, Some(a), Some(b)) => splits
            .iter()
            .map(|&split| PairRequest {
                op_a: a.clone(),
                op_b: b.clone(),
                split,
            })
            .collect(),
        _ => bail!("give --pairs FILE.csv, --a OP and --b OP, or --task A --task B"),
    };
    let table = ProfileTable::with_counters(&dataset, &file.counter_subset())?;
    let mut header = vec![
        "op_a",
        "op_b",
        "sm_a",
        "sm_b",
        "solo_a_us",
        "co_a_us",
        "slowdown_a",
        "solo_b_us",
        "co_b_us",
        "slowdown_b",
        "a_vs_whole_gpu",
        "throughput",
        "best",
    ];
    if args.explain {
        header.extend(Resource::ALL.iter().map(|r| r.as_str()));
    }
    let mut out = Table::new(&header);
    for r in &requests {
        let query = PairQuery {
            op_a: resolve_op(&dataset, &r.op_a)?,
            op_b: resolve_op(&dataset, &r.op_b)?,
            split: r.split,
            max_slowdown: args.max_slowdown,
            explain: args.explain,
        };
        let p = predict_pair(&file, &predictor, &table, &query)?;
        for (i, s) in p.splits.iter().enumerate() {
            let mut row = vec![
                p.op_a.clone(),
                p.op_b.clone(),
                s.sm_a.to_string(),
                s.sm_b.to_string(),
                format!("{:.3}", s.solo_a_us),
                format!("{:.3}", s.co_a_us),
                format!("{:.4}", s.slowdown_a),
                format!("{:.3}", s.solo_b_us),
                format!("{:.3}", s.co_b_us),
                format!("{:.4}", s.slowdown_b),
                format!("{:.4}", s.a_vs_whole_gpu),
                format!("{:.4}", s.combined_throughput),
                if p.best == Some(i) { "*" } else { "" }.to_string(),
            ];
            if let Some(terms) = &s.explain {
                row.extend(terms.iter().map(|(_, t)| format!("{t:+.4}")));
            }
            out.push(row);
        }
    }
    out.write(args.output.format, &mut std::io::stdout().lock())?;
    Ok(())
}
