//! Predictions for a candidate pair over every SM split the GPU allows:
//! each side's co-located latency and slowdown, the combined throughput,
//! and the split that maximises it while the first operator (the
//! latency-critical one) stays within a slowdown bound against running
//! alone on the whole GPU.

use serde::Serialize;
use tally_gpu::GpuSpec;

use crate::error::{PredictorError, Result};
use crate::features::{pair_features, solo_reference, Resource};
use crate::predictor_file::PredictorFile;
use crate::profile::GpuContext;
use crate::runtime::RuntimePredictor;
use crate::samples::ProfileTable;

/// Every split `(sm_a, sm_b)` of the GPU into two disjoint partitions the
/// partition rule allows, `sm_a` ascending: `sm_b` is the largest allowed
/// size in what `sm_a` leaves.
pub fn allowed_splits(gpu: &GpuSpec) -> Vec<(u32, u32)> {
    let total = gpu.sm_count;
    let rule = gpu.partition;
    rule.sizes(total)
        .into_iter()
        .filter(|&a| a < total)
        .filter_map(|a| {
            let rest = total - a;
            let b = rule.round_down(rest, total).min(rest);
            (rest >= rule.min_sms && rule.allows(b, total)).then_some((a, b))
        })
        .collect()
}

/// The op id a user means by `text`: an op id, a kernel name, the layer
/// part of one (before the `/`: `conv1.conv`), or a part of exactly one
/// kernel name.
pub fn resolve_op(dataset: &tally_datasets::Dataset, text: &str) -> Result<String> {
    let ops = &dataset.ops;
    if let Some(op) = ops
        .iter()
        .find(|o| o.op_id == text || o.kernel.name == text)
    {
        return Ok(op.op_id.clone());
    }
    let layer = |name: &str| name.split('/').next().unwrap_or(name).to_string();
    if let Some(op) = ops.iter().find(|o| layer(&o.kernel.name) == text) {
        return Ok(op.op_id.clone());
    }
    let matches: Vec<_> = ops
        .iter()
        .filter(|o| o.kernel.name.contains(text))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.op_id.clone()),
        [] => Err(PredictorError::Input(format!(
            "no op `{text}` in `{}` (give an op_id or a kernel name from ops.csv)",
            dataset.dir.display()
        ))),
        many => Err(PredictorError::Input(format!(
            "`{text}` matches {} kernels in `{}`, e.g. `{}` and `{}`; give an op_id",
            many.len(),
            dataset.dir.display(),
            many[0].kernel.name,
            many[1].kernel.name
        ))),
    }
}

/// The prediction at one split.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SplitPrediction {
    pub sm_a: u32,
    pub sm_b: u32,
    pub solo_a_us: f64,
    pub solo_b_us: f64,
    pub co_a_us: f64,
    pub co_b_us: f64,
    /// Co-located over standalone on the same partition.
    pub slowdown_a: f64,
    pub slowdown_b: f64,
    /// A's co-located latency over A alone on the whole GPU (what the bound
    /// applies to).
    pub a_vs_whole_gpu: f64,
    /// Sum of both sides' throughput normalised to each alone on the whole
    /// GPU (1.0 = as good as running them one after the other).
    pub combined_throughput: f64,
    /// Linear model only: per-resource terms of the predicted log stretch of A's shared-path latency.
    pub explain: Option<Vec<(Resource, f64)>>,
}

/// Predictions of one pair at every split, and the chosen split.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairPrediction {
    pub op_a: String,
    pub op_b: String,
    pub splits: Vec<SplitPrediction>,
    /// Index into `splits` of the best split within the bound, if any.
    pub best: Option<usize>,
}

/// What to predict.
#[derive(Debug, Clone, PartialEq)]
pub struct PairQuery {
    pub op_a: String,
    pub op_b: String,
    /// Only this split; `None` = every allowed split.
    pub split: Option<(u32, u32)>,
    pub max_slowdown: f64,
    pub explain: bool,
}

/// Predict `query` with `predictor` from the profiles in `table`.
pub fn predict_pair(
    file: &PredictorFile,
    predictor: &RuntimePredictor,
    table: &ProfileTable<'_>,
    query: &PairQuery,
) -> Result<PairPrediction> {
    let gpu = &file.gpu;
    let ctx = GpuContext::of(gpu);
    let whole = gpu.sm_count;
    let whole_a = table.profile(&query.op_a, whole)?.duration_us;
    let whole_b = table.profile(&query.op_b, whole)?.duration_us;
    let splits = match query.split {
        Some(s) => vec![s],
        None => allowed_splits(gpu)
            .into_iter()
            .filter(|&(a, b)| {
                table.sm_counts(&query.op_a).contains(&a)
                    && table.sm_counts(&query.op_b).contains(&b)
            })
            .collect(),
    };
    if splits.is_empty() {
        return Err(PredictorError::Input(format!(
            "ops `{}` and `{}` have no standalone profiles at any common split of {}",
            query.op_a, query.op_b, gpu.name
        )));
    }
    let linear = file.models.linear.as_ref().filter(|_| query.explain);
    if query.explain && linear.is_none() {
        return Err(PredictorError::Input(
            "--explain needs the linear contention model, which this model file lacks \
             (train with --method pairsight, linear or all)"
                .to_string(),
        ));
    }
    let mask = file.counter_subset().mask();
    let mut out = Vec::with_capacity(splits.len());
    for (sm_a, sm_b) in splits {
        let a = table.profile(&query.op_a, sm_a)?;
        let b = table.profile(&query.op_b, sm_b)?;
        let (co_a, co_b) = predictor.co_located_us(&a, &b);
        let explain = linear.map(|m| {
            let (mut f, mut solo) = (pair_features(&a, &b, &ctx), solo_reference(&a, sm_b, &ctx));
            mask.apply(&mut f);
            mask.apply(&mut solo);
            m.explain(&f, &solo)
        });
        out.push(SplitPrediction {
            sm_a,
            sm_b,
            solo_a_us: a.duration_us,
            solo_b_us: b.duration_us,
            co_a_us: co_a,
            co_b_us: co_b,
            slowdown_a: co_a / a.duration_us,
            slowdown_b: co_b / b.duration_us,
            a_vs_whole_gpu: co_a / whole_a,
            combined_throughput: whole_a / co_a + whole_b / co_b,
            explain,
        });
    }
    let best = out
        .iter()
        .enumerate()
        .filter(|(_, s)| s.a_vs_whole_gpu <= query.max_slowdown)
        .max_by(|x, y| x.1.combined_throughput.total_cmp(&y.1.combined_throughput))
        .map(|(i, _)| i);
    Ok(PairPrediction {
        op_a: query.op_a.clone(),
        op_b: query.op_b.clone(),
        splits: out,
        best,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_follow_the_partition_rule() {
        let h100 = GpuSpec::preset("h100-sxm").expect("preset");
        let s = allowed_splits(&h100);
        assert_eq!(s.first(), Some(&(8, 120)));
        assert!(s.contains(&(64, 64)));
        assert!(s
            .iter()
            .all(|&(a, b)| a + b <= 132 && a % 8 == 0 && b % 8 == 0));
        let a100 = GpuSpec::preset("a100-40gb").expect("preset");
        let s = allowed_splits(&a100);
        assert_eq!(s.first(), Some(&(4, 104)));
        assert_eq!(s.last(), Some(&(104, 4)));
    }
}
