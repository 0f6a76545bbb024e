//! Few-shot adaptation to an unseen model: a residual correction fitted on
//! the K pair samples measured of the new model, on top of a predictor
//! trained without it (nothing is retrained).
//!
//! The correction of a query is a kernel-weighted mean of the support
//! residuals (log measured minus log predicted slowdown), weighted by
//! closeness in standardised feature space, shrunk towards the support's
//! overall (itself shrunk) mean residual: a near neighbour's error says
//! most about a query, and with no close neighbour only the common bias of
//! the base model on the new model is corrected.

use crate::features::{Features, N_FEATURES};

/// Kernel width in standardised units (root-mean-square over features).
const BANDWIDTH: f64 = 0.25;
/// Pseudo-count pulling the overall residual towards 0.
const GLOBAL_PRIOR: f64 = 2.0;
/// Weight of the overall residual against the local neighbours.
const LOCAL_PRIOR: f64 = 0.5;

/// Per-feature scale of the training data (standard deviations).
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureScale {
    inv: Features,
}

impl FeatureScale {
    /// Scales of the row-major feature matrix `x`.
    pub fn of(x: &[f64]) -> FeatureScale {
        let n = (x.len() / N_FEATURES).max(1) as f64;
        let mut mean = [0.0; N_FEATURES];
        let mut sq = [0.0; N_FEATURES];
        for row in x.chunks_exact(N_FEATURES) {
            for j in 0..N_FEATURES {
                mean[j] += row[j];
                sq[j] += row[j] * row[j];
            }
        }
        let mut inv = [0.0; N_FEATURES];
        for j in 0..N_FEATURES {
            let m = mean[j] / n;
            let sd = (sq[j] / n - m * m).max(0.0).sqrt();
            inv[j] = if sd > 1e-12 { 1.0 / sd } else { 0.0 };
        }
        FeatureScale { inv }
    }
}

/// A fitted residual correction.
#[derive(Debug, Clone, PartialEq)]
pub struct ResidualCorrection {
    support: Vec<(Features, f64)>,
    scale: FeatureScale,
    global: f64,
}

impl ResidualCorrection {
    /// From support samples `(features, residual)`.
    pub fn fit(support: Vec<(Features, f64)>, scale: FeatureScale) -> ResidualCorrection {
        let sum: f64 = support.iter().map(|s| s.1).sum();
        let global = sum / (support.len() as f64 + GLOBAL_PRIOR);
        ResidualCorrection {
            support,
            scale,
            global,
        }
    }

    /// Correction to add to the base model's log slowdown for `f`.
    pub fn correction(&self, f: &Features) -> f64 {
        if self.support.is_empty() {
            return 0.0;
        }
        let (mut w_sum, mut wr_sum) = (0.0, 0.0);
        for (x, r) in &self.support {
            let d2: f64 = (0..N_FEATURES)
                .map(|j| ((f[j] - x[j]) * self.scale.inv[j]).powi(2))
                .sum::<f64>()
                / N_FEATURES as f64;
            let w = (-0.5 * d2 / (BANDWIDTH * BANDWIDTH)).exp();
            w_sum += w;
            wr_sum += w * r;
        }
        (wr_sum + LOCAL_PRIOR * self.global) / (w_sum + LOCAL_PRIOR)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrects_near_support_and_shrinks_far_from_it() {
        let scale = FeatureScale {
            inv: [1.0; N_FEATURES],
        };
        let near = [0.0; N_FEATURES];
        let c = ResidualCorrection::fit(vec![(near, 0.1), (near, 0.1)], scale);
        // At the support points the local mean dominates.
        let at = c.correction(&near);
        assert!(at > 0.08 && at < 0.1, "{at}");
        // Far away only the shrunk global residual 0.2 / 4 remains.
        let far = c.correction(&[10.0; N_FEATURES]);
        assert!((far - 0.05).abs() < 1e-9, "{far}");
        let none = ResidualCorrection::fit(
            Vec::new(),
            FeatureScale {
                inv: [1.0; N_FEATURES],
            },
        );
        assert_eq!(none.correction(&near), 0.0);
    }
}
