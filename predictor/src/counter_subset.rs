//! Predictors on a subset of the counters. A profile imported from an ncu
//! export holds the counters that export had; a predictor trained with
//! `tally train --counters-from DIR` reads only the ones DIR holds: every
//! feature computed from an absent counter (`FEATURE_COUNTERS`) is held at
//! a fixed value in training and in prediction alike, so the models never
//! see it vary and never use it, and nothing absent is read as a zero
//! measurement. The model file records the counters (`PredictorFile::
//! counters`); predicting on data that lack one of them is refused with
//! the counters and the ncu flags that collect them.

use tally_datasets::Dataset;
use tally_gpu::cuda::ncu_flags_for;
use tally_gpu::Counter;

use crate::features::{feature_index, Features, FEATURE_COUNTERS, N_FEATURES};
use crate::profile::REQUIRED_COUNTERS;

/// Where `a_shared_share` is: held at 1 when masked, which makes the
/// output link the identity (the model learns the slowdown directly).
const SHARED_SHARE: usize = feature_index("a_shared_share");

/// The predictor counters a model reads, in `REQUIRED_COUNTERS` order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterSubset {
    counters: Vec<Counter>,
}

impl CounterSubset {
    /// Every counter the predictor can read.
    pub fn all() -> CounterSubset {
        CounterSubset {
            counters: REQUIRED_COUNTERS.to_vec(),
        }
    }

    /// The predictor counters among `names` (Nsight Compute names).
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> CounterSubset {
        CounterSubset {
            counters: REQUIRED_COUNTERS
                .iter()
                .copied()
                .filter(|c| names.iter().any(|n| n.as_ref() == c.name()))
                .collect(),
        }
    }

    /// The predictor counters `ds`'s standalone table holds.
    pub fn of_dataset(ds: &Dataset) -> CounterSubset {
        CounterSubset::from_names(&ds.standalone.counter_names)
    }

    pub fn counters(&self) -> &[Counter] {
        &self.counters
    }

    pub fn contains(&self, c: Counter) -> bool {
        self.counters.contains(&c)
    }

    pub fn is_all(&self) -> bool {
        self.counters.len() == REQUIRED_COUNTERS.len()
    }

    /// The predictor counters not in this subset.
    pub fn absent(&self) -> Vec<Counter> {
        REQUIRED_COUNTERS
            .iter()
            .copied()
            .filter(|c| !self.contains(*c))
            .collect()
    }

    /// Of this subset, the counters `names` lacks.
    pub fn missing_from<S: AsRef<str>>(&self, names: &[S]) -> Vec<Counter> {
        self.counters
            .iter()
            .copied()
            .filter(|c| !names.iter().any(|n| n.as_ref() == c.name()))
            .collect()
    }

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

/// What to tell a user whose data lack `missing`: the counters, the ncu
/// flags that collect them, and the subset-predictor route.
pub fn missing_counters_advice(missing: &[Counter], dir: &str) -> String {
    format!(
        "lacks counters the predictor reads: {}; collect them with `ncu {}`, or train a \
         predictor on the counters it has: `tally train --counters-from {dir} --data ...`",
        missing
            .iter()
            .map(Counter::name)
            .collect::<Vec<_>>()
            .join(", "),
        ncu_flags_for(missing)
    )
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
            "not_a_counter",
        ]);
        assert_eq!(
            subset.counters(),
            [Counter::SmThroughputPct, Counter::L2HitRatePct]
        );
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
        assert_eq!(
            subset.missing_from(&["lts__t_sector_hit_rate.pct"]),
            [Counter::SmThroughputPct]
        );
        let advice = missing_counters_advice(&[Counter::DramBytesRead], "runs/x");
        assert!(
            advice.contains("--metrics dram__bytes_read.sum"),
            "{advice}"
        );
        assert!(advice.contains("--counters-from runs/x"), "{advice}");
    }
}
