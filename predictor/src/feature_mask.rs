//! Which features a predictor on a counter subset uses: every feature
//! computed from an absent counter (`FEATURE_COUNTERS`) is held at a fixed
//! value in training and prediction alike.

use crate::counter_subset::CounterSubset;
use crate::features::{feature_index, Features, FEATURE_COUNTERS, N_FEATURES};

/// Where `a_shared_share` is: held at 1 when masked, which makes the
/// output link the identity (the model learns the slowdown directly).
const SHARED_SHARE: usize = feature_index("a_shared_share");

impl CounterSubset {
    /// The features these counters support.
    pub fn mask(&self) -> FeatureMask {
        let mut usable = [true; N_FEATURES];
        for (u, deps) in usable.iter_mut().zip(FEATURE_COUNTERS.iter()) {
            *u = deps.iter().all(|c| self.contains(*c));
        }
        FeatureMask { usable }
    }
}

/// Which features a predictor uses; the others are held fixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureMask {
    usable: [bool; N_FEATURES],
}

impl FeatureMask {
    /// Whether every feature is usable (a model on every counter).
    pub fn is_full(&self) -> bool {
        self.usable.iter().all(|u| *u)
    }

    /// Number of usable features.
    pub fn usable_count(&self) -> usize {
        self.usable.iter().filter(|u| **u).count()
    }

    /// Hold every unusable feature of `f` at its fixed value.
    #[inline]
    pub fn apply(&self, f: &mut Features) {
        if self.is_full() {
            return;
        }
        for (i, (x, usable)) in f.iter_mut().zip(&self.usable).enumerate() {
            if !usable {
                *x = if i == SHARED_SHARE { 1.0 } else { 0.0 };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::FEATURE_NAMES;

    #[test]
    fn a_subset_masks_exactly_the_features_of_absent_counters() {
        assert!(CounterSubset::all().mask().is_full());
        let subset = CounterSubset::from_names(&[
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "lts__t_sector_hit_rate.pct",
        ]);
        let mask = subset.mask();
        let usable = |name: &str| mask.usable[feature_index(name)];
        assert!(usable("a_sm_fraction") && usable("a_log_duration_us"));
        assert!(usable("a_sm_busy") && usable("b_l2_hit"));
        assert!(!usable("a_dram_util") && !usable("a_memory_share"));
        let mut f = [0.5; N_FEATURES];
        mask.apply(&mut f);
        assert_eq!(f[feature_index("a_dram_util")], 0.0);
        assert_eq!(f[feature_index("a_shared_share")], 1.0);
        assert_eq!(f[feature_index("a_sm_busy")], 0.5);
        assert_eq!(mask.usable_count(), 7, "{:?}", FEATURE_NAMES);
    }
}
