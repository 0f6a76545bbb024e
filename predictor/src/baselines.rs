//! The baselines every learned model is reported against, fitted on the
//! same training split:
//!
//! * **scaling curve** — the standalone latency at the partition size, no
//!   interference (what a partition-size-aware scheduler without a
//!   contention model assumes);
//! * **intensity rule** (Orion-style) — each kernel labelled compute- or
//!   memory-bound by arithmetic intensity against the roofline knee; a
//!   memory-memory pair gets the mean memory-memory slowdown of the training
//!   data, every other pair none;
//! * **iGniter-style** — `t = t_solo x (1 + k x d)` with `d` the co-runner's
//!   L2 demand (`lts__t_sectors.avg.pct_of_peak_sustained_elapsed`) and `k`
//!   fitted by least squares.

use serde::{Deserialize, Serialize};

use crate::features::{feature_index, Features};
use crate::samples::Sample;

/// Index of the co-runner's L2 demand in the feature vector.
fn co_l2_demand(f: &Features) -> f64 {
    const B_L2: usize = feature_index("b_l2_util");
    f[B_L2]
}

/// The Orion-style rule, fitted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IntensityRule {
    pub memory_memory_slowdown: f64,
}

impl IntensityRule {
    pub fn fit<'a>(train: impl Iterator<Item = &'a Sample>) -> IntensityRule {
        let (mut sum, mut n) = (0.0, 0usize);
        for s in train.filter(|s| s.memory_bound && s.co_memory_bound) {
            sum += s.co_us / s.solo_us;
            n += 1;
        }
        IntensityRule {
            memory_memory_slowdown: if n > 0 { sum / n as f64 } else { 1.0 },
        }
    }

    /// Predicted log slowdown of a side with these labels.
    pub fn predict(&self, memory_bound: bool, co_memory_bound: bool) -> f64 {
        if memory_bound && co_memory_bound {
            self.memory_memory_slowdown.ln()
        } else {
            0.0
        }
    }
}

/// The iGniter-style linear L2-demand model, fitted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Igniter {
    pub k: f64,
}

impl Igniter {
    pub fn fit<'a>(train: impl Iterator<Item = &'a Sample>) -> Igniter {
        let (mut xy, mut xx) = (0.0, 0.0);
        for s in train {
            let d = co_l2_demand(&s.features);
            xy += d * (s.co_us / s.solo_us - 1.0);
            xx += d * d;
        }
        Igniter {
            k: if xx > 0.0 { (xy / xx).max(0.0) } else { 0.0 },
        }
    }

    pub fn predict(&self, f: &Features) -> f64 {
        (1.0 + self.k * co_l2_demand(f)).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::N_FEATURES;

    fn sample(slowdown: f64, mem: bool, co_mem: bool, co_l2: f64) -> Sample {
        let mut features = [0.0; N_FEATURES];
        features[feature_index("b_l2_util")] = co_l2;
        Sample {
            features,
            solo_us: 10.0,
            co_us: 10.0 * slowdown,
            group: 0,
            pair: 0,
            memory_bound: mem,
            co_memory_bound: co_mem,
        }
    }

    #[test]
    fn intensity_rule_uses_the_memory_memory_mean() {
        let s = [
            sample(1.5, true, true, 0.0),
            sample(1.7, true, true, 0.0),
            sample(1.1, true, false, 0.0),
        ];
        let rule = IntensityRule::fit(s.iter());
        assert!((rule.memory_memory_slowdown - 1.6).abs() < 1e-12);
        assert_eq!(rule.predict(true, false), 0.0);
        assert!((rule.predict(true, true) - 1.6f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn igniter_fits_the_slope() {
        let s = [
            sample(1.2, false, false, 0.4),
            sample(1.4, false, false, 0.8),
        ];
        let m = Igniter::fit(s.iter());
        assert!((m.k - 0.5).abs() < 1e-12);
        assert!((m.predict(&s[1].features) - 1.4f64.ln()).abs() < 1e-12);
    }
}
