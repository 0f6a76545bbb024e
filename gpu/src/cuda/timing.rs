//! Repeated GPU timings reduced to what a measurement reports: the median
//! (robust to the odd slow repetition a clock change or a context switch
//! causes) and the spread around it.

/// How many launches to throw away and how many to time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimingConfig {
    /// Launches before timing starts (module load, clocks ramping, caches).
    pub warmup: u32,
    pub repetitions: u32,
}

impl TimingConfig {
    /// `warmup` launches, then `repetitions` (at least 1) timed ones.
    pub fn new(warmup: u32, repetitions: u32) -> crate::Result<TimingConfig> {
        if repetitions == 0 {
            return Err(crate::GpuError::Setting {
                what: "timed repetitions (--reps)",
                problem: "must be at least 1 per measurement".into(),
            });
        }
        Ok(TimingConfig {
            warmup,
            repetitions,
        })
    }
}

impl Default for TimingConfig {
    fn default() -> Self {
        TimingConfig {
            warmup: 3,
            repetitions: 20,
        }
    }
}

/// The summary of one timed series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    pub median_us: f64,
    pub min_us: f64,
    pub max_us: f64,
    /// Interquartile range over the median, percent.
    pub spread_pct: f64,
    pub samples: usize,
    /// Samples of 0 us: the launch took less than CUDA events resolve
    /// (about half a microsecond). Kept, and counted, rather than thrown
    /// away with the rest of the series.
    pub zero_samples: usize,
}

/// Why a timed series has no summary.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TimingError {
    #[error("no timed samples")]
    Empty,
    #[error("event pair {index} gave {value} us (a failed or out-of-order event pair)")]
    Invalid { index: usize, value: f64 },
    #[error(
        "median of {samples} samples is 0 us: the kernel is shorter than CUDA event resolution \
         (about 0.5 us), so event timing cannot measure it"
    )]
    BelowResolution { samples: usize },
}

/// Summarise `samples_us`. A negative or non-finite sample (a failed event
/// pair) is an error naming it; zeros are below the events' resolution and
/// are counted, and only a zero median is an error.
pub fn summarize(samples_us: &[f64]) -> Result<Timing, TimingError> {
    if samples_us.is_empty() {
        return Err(TimingError::Empty);
    }
    if let Some((index, &value)) = samples_us
        .iter()
        .enumerate()
        .find(|(_, v)| !(v.is_finite() && **v >= 0.0))
    {
        return Err(TimingError::Invalid { index, value });
    }
    let mut v = samples_us.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    // Linear interpolation between closest ranks.
    let quantile = |q: f64| {
        let pos = q * (v.len() - 1) as f64;
        let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
    };
    let median = quantile(0.5);
    if median <= 0.0 {
        return Err(TimingError::BelowResolution { samples: v.len() });
    }
    Ok(Timing {
        median_us: median,
        min_us: v[0],
        max_us: v[v.len() - 1],
        spread_pct: (quantile(0.75) - quantile(0.25)) / median * 100.0,
        samples: v.len(),
        zero_samples: v.iter().filter(|&&x| x == 0.0).count(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_spread() {
        let t = summarize(&[10.0, 12.0, 11.0, 30.0, 11.0]).expect("timing");
        assert_eq!(t.median_us, 11.0);
        assert_eq!((t.min_us, t.max_us, t.samples), (10.0, 30.0, 5));
        // Quartiles 11 and 12: the one outlier does not move them.
        assert!((t.spread_pct - 100.0 / 11.0).abs() < 1e-9);
        let even = summarize(&[1.0, 2.0, 3.0, 4.0]).expect("timing");
        assert_eq!(even.median_us, 2.5);
        assert_eq!(summarize(&[]), Err(TimingError::Empty));
        assert!(matches!(
            summarize(&[1.0, f64::NAN]),
            Err(TimingError::Invalid { index: 1, .. })
        ));
    }

    /// One zero among good samples (a launch under the events' resolution)
    /// no longer throws the series away; it is counted. A zero median and
    /// a failed event pair are errors that say which.
    #[test]
    fn zero_samples_are_counted_and_only_a_zero_median_fails() {
        let t = summarize(&[1.0, 0.0, 1.2, 1.1]).expect("timing");
        assert_eq!((t.zero_samples, t.samples), (1, 4));
        assert!((t.median_us - 1.05).abs() < 1e-9);
        let e = summarize(&[0.0, 0.0, 0.5]).unwrap_err();
        assert_eq!(e, TimingError::BelowResolution { samples: 3 });
        assert!(e.to_string().contains("shorter than CUDA event resolution"));
        let e = summarize(&[1.0, -2.0]).unwrap_err();
        assert!(e.to_string().contains("event pair 1 gave -2 us"), "{e}");
        assert!(matches!(
            summarize(&[1.0, f64::INFINITY]),
            Err(TimingError::Invalid { index: 1, .. })
        ));
    }
}
