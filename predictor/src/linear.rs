//! The interpretable contention model: the log stretch of the shared-path
//! latency term (the model side of `link`) linear in the engineered features, fitted by linfa's elastic net on standardised
//! features (so the penalty treats every feature alike), stored as plain
//! weights on the raw features. Because every feature belongs to one
//! shared resource, a prediction splits into per-resource terms: how much
//! of the predicted stretch each resource causes (`explain`).

use linfa::prelude::*;
use linfa_elasticnet::ElasticNet;
use ndarray::{Array1, Array2};
use serde::{Deserialize, Serialize};

use crate::error::{PredictorError, Result};
use crate::features::{Features, Resource, FEATURE_RESOURCES, N_FEATURES};

/// Elastic-net penalty on standardised features, and its L1 share: small,
/// because the data are plentiful; the L1 part drops features that carry
/// nothing.
const PENALTY: f64 = 1e-5;
const L1_RATIO: f64 = 0.5;
/// Coordinate-descent stopping rule: a relative change of 1e-4 leaves the
/// held-out error unchanged to three digits (8.63 % either way on the zoo)
/// and is ten times faster than 1e-7.
const TOLERANCE: f64 = 1e-4;
const MAX_ITERATIONS: u32 = 1000;
/// Rows the elastic net is fitted on at most (an evenly strided subset):
/// 35 parameters are pinned down long before that, and coordinate descent
/// costs time linear in the rows.
const MAX_ROWS: usize = 20_000;

/// A fitted linear model on raw features.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearModel {
    pub bias: f64,
    pub weights: Vec<f64>,
}

impl LinearModel {
    /// Fit on row-major `x` (`N_FEATURES` per row) and targets `y`.
    pub fn fit(x: &[f64], y: &[f64]) -> Result<LinearModel> {
        let stride = y.len().div_ceil(MAX_ROWS).max(1);
        let x: Vec<f64> = x
            .chunks_exact(N_FEATURES)
            .step_by(stride)
            .flatten()
            .copied()
            .collect();
        let y: Vec<f64> = y.iter().step_by(stride).copied().collect();
        let (x, y) = (x.as_slice(), y.as_slice());
        let n = y.len();
        let fail = |message: String| PredictorError::Training {
            method: "linear".to_string(),
            message,
        };
        if n < 2 {
            return Err(fail(format!("needs at least 2 samples, got {n}")));
        }
        let (mean, scale) = standardisation(x, n);
        let mut z = Array2::<f64>::zeros((n, N_FEATURES));
        for (i, mut row) in z.rows_mut().into_iter().enumerate() {
            for j in 0..N_FEATURES {
                row[j] = (x[i * N_FEATURES + j] - mean[j]) / scale[j];
            }
        }
        let data = linfa::Dataset::new(z, Array1::from(y.to_vec()));
        let fitted = ElasticNet::params()
            .penalty(PENALTY)
            .l1_ratio(L1_RATIO)
            .max_iterations(MAX_ITERATIONS)
            .tolerance(TOLERANCE)
            .fit(&data)
            .map_err(|e| fail(e.to_string()))?;
        let coef = fitted.hyperplane();
        let weights: Vec<f64> = (0..N_FEATURES).map(|j| coef[j] / scale[j]).collect();
        let bias = fitted.intercept() - (0..N_FEATURES).map(|j| weights[j] * mean[j]).sum::<f64>();
        Ok(LinearModel { bias, weights })
    }

    #[inline]
    pub fn predict(&self, f: &Features) -> f64 {
        self.bias + self.weights.iter().zip(f).map(|(w, x)| w * x).sum::<f64>()
    }

    /// Contribution of each resource to the predicted log stretch of `f`,
    /// measured from `reference` (the same side with an idle co-runner).
    pub fn explain(&self, f: &Features, reference: &Features) -> Vec<(Resource, f64)> {
        Resource::ALL
            .iter()
            .map(|&r| {
                let term = (0..N_FEATURES)
                    .filter(|&j| FEATURE_RESOURCES[j] == r)
                    .map(|j| self.weights[j] * (f[j] - reference[j]))
                    .sum();
                (r, term)
            })
            .collect()
    }
}

/// Column means and standard deviations (1 for a constant column).
fn standardisation(x: &[f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut mean = vec![0.0; N_FEATURES];
    let mut var = vec![0.0; N_FEATURES];
    for row in x.chunks_exact(N_FEATURES) {
        for (m, v) in mean.iter_mut().zip(row) {
            *m += v;
        }
    }
    for m in &mut mean {
        *m /= n as f64;
    }
    for row in x.chunks_exact(N_FEATURES) {
        for j in 0..N_FEATURES {
            var[j] += (row[j] - mean[j]).powi(2);
        }
    }
    let scale = var
        .iter()
        .map(|v| {
            let s = (v / n as f64).sqrt();
            if s > 1e-12 {
                s
            } else {
                1.0
            }
        })
        .collect();
    (mean, scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_a_linear_law_and_splits_it_by_resource() {
        // y = 0.1 + 0.5 x0 + 0.2 x_l2 on pseudo-random features.
        let l2_index = crate::features::feature_index("a_l2_util");
        let mut rng = tally_gpu::rng::SplitMix64::new(7);
        let n = 400;
        let mut x = vec![0.0; n * N_FEATURES];
        for v in &mut x {
            *v = rng.next_f64();
        }
        let y: Vec<f64> = x
            .chunks_exact(N_FEATURES)
            .map(|r| 0.1 + 0.5 * r[0] + 0.2 * r[l2_index])
            .collect();
        let m = LinearModel::fit(&x, &y).expect("fit");
        assert!((m.weights[0] - 0.5).abs() < 0.01, "{:?}", m.weights);
        assert!((m.weights[l2_index] - 0.2).abs() < 0.01);
        assert!((m.bias - 0.1).abs() < 0.02);
        let mut f = [0.0; N_FEATURES];
        f[l2_index] = 1.0;
        let terms = m.explain(&f, &[0.0; N_FEATURES]);
        let l2 = terms
            .iter()
            .find(|t| t.0 == Resource::L2Bandwidth)
            .expect("l2")
            .1;
        assert!((l2 - m.weights[l2_index]).abs() < 1e-12);
        let dram = terms
            .iter()
            .find(|t| t.0 == Resource::Dram)
            .expect("dram")
            .1;
        assert_eq!(dram, 0.0);
    }
}
