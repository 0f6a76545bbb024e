//! Two datasets of the same model side by side: a real GPU's measurements
//! against the simulator's for the same device spec (what
//! `scripts/gpu-check.sh` prints), or two simulator settings against each
//! other. Standalone rows are matched by operator and partition size, pair
//! rows by both operators and both partition sizes; rows only one side has
//! are counted, not compared.

use std::collections::HashMap;

use serde::Serialize;
use tally_datasets::Dataset;

/// One operator on one partition size in both datasets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StandaloneMatch {
    pub op_id: String,
    /// The operator's kernel name (from the first dataset's ops table).
    pub kernel: String,
    pub sm_count: u32,
    pub a_us: f64,
    pub b_us: f64,
}

impl StandaloneMatch {
    /// `b / a`.
    pub fn ratio(&self) -> f64 {
        self.b_us / self.a_us
    }
}

/// One side of a pair in both datasets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairMatch {
    pub op: String,
    pub beside: String,
    pub sm_count: u32,
    pub beside_sm_count: u32,
    pub a_slowdown: f64,
    pub b_slowdown: f64,
}

/// The two datasets compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DatasetComparison {
    pub standalone: Vec<StandaloneMatch>,
    pub pairs: Vec<PairMatch>,
    /// Rows of either dataset with no counterpart in the other.
    pub unmatched_standalone: usize,
    pub unmatched_pair_rows: usize,
}

/// What the comparison says overall.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ComparisonSummary {
    pub standalone_rows: usize,
    /// Median and 90th percentile of `|b / a - 1|`, percent.
    pub standalone_median_ape_pct: f64,
    pub standalone_p90_ape_pct: f64,
    pub pair_sides: usize,
    /// Mean absolute difference of the slowdowns (`b - a`).
    pub slowdown_mae: f64,
    /// Pearson correlation of the slowdowns; NaN with fewer than two sides
    /// or no variation.
    pub slowdown_correlation: f64,
}

/// Errors of a comparison.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("`{a}` and `{b}` have no standalone row or pair in common (are they the same model?)")]
    NothingInCommon { a: String, b: String },
}

/// Match `a` against `b`.
pub fn compare(a: &Dataset, b: &Dataset) -> Result<DatasetComparison, CompareError> {
    let kernel: HashMap<&str, &str> = a
        .ops
        .iter()
        .map(|o| (o.op_id.as_str(), o.kernel.name.as_str()))
        .collect();
    let b_solo: HashMap<(&str, u32), f64> = b
        .standalone
        .rows
        .iter()
        .map(|r| ((r.op_id.as_str(), r.sm_count), r.duration_us))
        .collect();
    let mut standalone = Vec::new();
    for r in &a.standalone.rows {
        if let Some(&b_us) = b_solo.get(&(r.op_id.as_str(), r.sm_count)) {
            standalone.push(StandaloneMatch {
                op_id: r.op_id.clone(),
                kernel: kernel.get(r.op_id.as_str()).unwrap_or(&"").to_string(),
                sm_count: r.sm_count,
                a_us: r.duration_us,
                b_us,
            });
        }
    }
    let key = |p: &tally_datasets::PairRow| (p.op_a.clone(), p.op_b.clone(), p.sm_a, p.sm_b);
    let b_pairs: HashMap<_, _> = b.pairs.iter().map(|p| (key(p), p)).collect();
    let mut pairs = Vec::new();
    let mut matched_pair_rows = 0;
    for p in &a.pairs {
        let Some(q) = b_pairs.get(&key(p)) else {
            continue;
        };
        matched_pair_rows += 1;
        pairs.push(PairMatch {
            op: p.op_a.clone(),
            beside: p.op_b.clone(),
            sm_count: p.sm_a,
            beside_sm_count: p.sm_b,
            a_slowdown: p.slowdown_a,
            b_slowdown: q.slowdown_a,
        });
        pairs.push(PairMatch {
            op: p.op_b.clone(),
            beside: p.op_a.clone(),
            sm_count: p.sm_b,
            beside_sm_count: p.sm_a,
            a_slowdown: p.slowdown_b,
            b_slowdown: q.slowdown_b,
        });
    }
    if standalone.is_empty() && pairs.is_empty() {
        return Err(CompareError::NothingInCommon {
            a: a.dir.display().to_string(),
            b: b.dir.display().to_string(),
        });
    }
    Ok(DatasetComparison {
        unmatched_standalone: a.standalone.rows.len() + b.standalone.rows.len()
            - 2 * standalone.len(),
        unmatched_pair_rows: a.pairs.len() + b.pairs.len() - 2 * matched_pair_rows,
        standalone,
        pairs,
    })
}

impl DatasetComparison {
    pub fn summary(&self) -> ComparisonSummary {
        let mut ape: Vec<f64> = self
            .standalone
            .iter()
            .map(|m| (m.ratio() - 1.0).abs() * 100.0)
            .collect();
        ape.sort_unstable_by(f64::total_cmp);
        let at = |q: f64| {
            if ape.is_empty() {
                f64::NAN
            } else {
                ape[((ape.len() - 1) as f64 * q).round() as usize]
            }
        };
        let xs: Vec<f64> = self.pairs.iter().map(|p| p.a_slowdown).collect();
        let ys: Vec<f64> = self.pairs.iter().map(|p| p.b_slowdown).collect();
        let mae = if xs.is_empty() {
            f64::NAN
        } else {
            xs.iter().zip(&ys).map(|(x, y)| (y - x).abs()).sum::<f64>() / xs.len() as f64
        };
        ComparisonSummary {
            standalone_rows: self.standalone.len(),
            standalone_median_ape_pct: at(0.5),
            standalone_p90_ape_pct: at(0.9),
            pair_sides: self.pairs.len(),
            slowdown_mae: mae,
            slowdown_correlation: pearson(&xs, &ys),
        }
    }
}

/// Pearson correlation; NaN when undefined.
fn pearson(xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len() as f64;
    if xs.len() < 2 {
        return f64::NAN;
    }
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in xs.iter().zip(ys) {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    if sxx == 0.0 || syy == 0.0 {
        return f64::NAN;
    }
    sxy / (sxx * syy).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn correlation_is_one_for_a_line_and_undefined_without_variation() {
        assert!((pearson(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]) - 1.0).abs() < 1e-12);
        assert!((pearson(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
        assert!(pearson(&[1.0, 1.0], &[1.0, 2.0]).is_nan());
        assert!(pearson(&[1.0], &[1.0]).is_nan());
    }
}
