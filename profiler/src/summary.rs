//! Interference summary of profiled datasets: the distribution of pair
//! slowdowns and the error of the Orion-style intensity rule on them — the
//! baseline a contention predictor has to beat.
//!
//! The rule labels each kernel compute- or memory-bound by arithmetic
//! intensity against the GPU's roofline knee (`tally_gpu::bound`), predicts
//! the mean memory-memory slowdown (fitted on the same pairs, which flatters
//! it) for memory-memory pairs and no slowdown otherwise.

use std::collections::HashMap;

use serde::Serialize;
use tally_datasets::Dataset;
use tally_gpu::{bound, Bound};

/// Slowdown statistics over every side of every pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InterferenceSummary {
    pub runs: usize,
    pub pair_rows: usize,
    /// Pair sides measured (two per row).
    pub sides: usize,
    pub compute_bound_ops: usize,
    pub memory_bound_ops: usize,
    pub slowdown_min: f64,
    pub slowdown_p50: f64,
    pub slowdown_p90: f64,
    pub slowdown_p99: f64,
    pub slowdown_max: f64,
    /// Mean slowdown of the sides of pairs by their labels.
    pub compute_compute_mean_slowdown: f64,
    pub compute_memory_mean_slowdown: f64,
    pub memory_memory_mean_slowdown: f64,
    /// Mean absolute percentage error of the intensity rule on the
    /// co-located latencies.
    pub intensity_rule_mape_pct: f64,
    pub intensity_rule_p90_ape_pct: f64,
}

/// Errors of the summary.
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    #[error("no pair rows in the given datasets")]
    Empty,
    #[error("`{dir}`: pair row {row} names op `{op}` missing from ops")]
    UnknownOp { dir: String, row: usize, op: String },
}

struct Side {
    slowdown: f64,
    solo_us: f64,
    co_us: f64,
    /// How many of the pair's two kernels are memory-bound.
    memory_bound: u8,
}

/// Mean slowdown of the sides whose pair has `memory_bound` memory-bound
/// kernels (1.0 when there are none).
fn mean_slowdown(sides: &[Side], memory_bound: u8) -> f64 {
    let xs: Vec<f64> = sides
        .iter()
        .filter(|s| s.memory_bound == memory_bound)
        .map(|s| s.slowdown)
        .collect();
    if xs.is_empty() {
        1.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// Value at quantile `q` of sorted `xs` (nearest rank).
fn quantile(xs: &[f64], q: f64) -> f64 {
    let i = ((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len()) - 1;
    xs[i]
}

/// Summarise the pairs of `datasets` (each labelled on its own GPU).
pub fn summarize(datasets: &[Dataset]) -> Result<InterferenceSummary, SummaryError> {
    let mut sides = Vec::new();
    let (mut compute_ops, mut memory_ops) = (0, 0);
    let mut pair_rows = 0;
    for ds in datasets {
        let labels: HashMap<&str, Bound> = ds
            .ops
            .iter()
            .map(|op| (op.op_id.as_str(), bound(&op.kernel, &ds.info.gpu)))
            .collect();
        compute_ops += labels.values().filter(|b| **b == Bound::Compute).count();
        memory_ops += labels.values().filter(|b| **b == Bound::Memory).count();
        for (row, p) in ds.pairs.iter().enumerate() {
            let label = |op: &str| {
                labels
                    .get(op)
                    .copied()
                    .ok_or_else(|| SummaryError::UnknownOp {
                        dir: ds.dir.display().to_string(),
                        row: row + 1,
                        op: op.to_string(),
                    })
            };
            let memory_bound = u8::from(label(&p.op_a)? == Bound::Memory)
                + u8::from(label(&p.op_b)? == Bound::Memory);
            sides.push(Side {
                slowdown: p.slowdown_a,
                solo_us: p.solo_a_us,
                co_us: p.duration_a_us,
                memory_bound,
            });
            sides.push(Side {
                slowdown: p.slowdown_b,
                solo_us: p.solo_b_us,
                co_us: p.duration_b_us,
                memory_bound,
            });
            pair_rows += 1;
        }
    }
    if sides.is_empty() {
        return Err(SummaryError::Empty);
    }

    let mm_mean = mean_slowdown(&sides, 2);
    let mut ape: Vec<f64> = sides
        .iter()
        .map(|s| {
            let predicted = s.solo_us * if s.memory_bound == 2 { mm_mean } else { 1.0 };
            100.0 * (predicted - s.co_us).abs() / s.co_us
        })
        .collect();
    let mape = ape.iter().sum::<f64>() / ape.len() as f64;
    ape.sort_by(f64::total_cmp);
    let mut slowdowns: Vec<f64> = sides.iter().map(|s| s.slowdown).collect();
    slowdowns.sort_by(f64::total_cmp);

    Ok(InterferenceSummary {
        runs: datasets.len(),
        pair_rows,
        sides: sides.len(),
        compute_bound_ops: compute_ops,
        memory_bound_ops: memory_ops,
        slowdown_min: slowdowns[0],
        slowdown_p50: quantile(&slowdowns, 0.5),
        slowdown_p90: quantile(&slowdowns, 0.9),
        slowdown_p99: quantile(&slowdowns, 0.99),
        slowdown_max: slowdowns[slowdowns.len() - 1],
        compute_compute_mean_slowdown: mean_slowdown(&sides, 0),
        compute_memory_mean_slowdown: mean_slowdown(&sides, 1),
        memory_memory_mean_slowdown: mm_mean,
        intensity_rule_mape_pct: mape,
        intensity_rule_p90_ape_pct: quantile(&ape, 0.9),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&xs, 0.5), 2.0);
        assert_eq!(quantile(&xs, 0.9), 4.0);
        assert_eq!(quantile(&xs, 0.0), 1.0);
    }
}
