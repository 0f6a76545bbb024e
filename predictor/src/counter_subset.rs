//! Predictors on a subset of the counters. A profile imported from an ncu
//! export holds the counters that export had; a predictor trained with
//! `tally train --counters-from DIR` reads only the ones DIR holds: every
//! feature computed from an absent counter (`FEATURE_COUNTERS`) is held at
//! a fixed value in training and in prediction alike, so the models never
//! see it vary and never use it, and nothing absent is read as a zero
//! measurement. The model file records the counters (`PredictorFile::
//! counters`); predicting on data that lack one of them is refused with
//! the counters and the ncu flags that collect them. Which features a
//! subset supports is `feature_mask.rs`.

use tally_datasets::Dataset;
use tally_gpu::cuda::ncu_flags_for;
use tally_gpu::Counter;

/// The counters a side profile is built from, by their Nsight Compute
/// names (`SideProfile`); a subset is some of these.
pub const REQUIRED_COUNTERS: [Counter; 12] = [
    Counter::SmThroughputPct,
    Counter::IssueActivePct,
    Counter::AchievedOccupancyPct,
    Counter::TensorActivePct,
    Counter::L1ThroughputPct,
    Counter::L2SectorsPct,
    Counter::L2ThroughputPct,
    Counter::L2HitRatePct,
    Counter::L2Bytes,
    Counter::DramThroughputPct,
    Counter::DramBytesRead,
    Counter::DramBytesWrite,
];

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

    #[test]
    fn a_subset_keeps_known_counters_and_advises_on_missing_ones() {
        let subset = CounterSubset::from_names(&[
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "lts__t_sector_hit_rate.pct",
            "not_a_counter",
        ]);
        assert_eq!(
            subset.counters(),
            [Counter::SmThroughputPct, Counter::L2HitRatePct]
        );
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
