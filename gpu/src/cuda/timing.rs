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
}

/// Summarise `samples_us`; `None` when there are none or one is not a
/// finite, positive duration (a failed event pair).
pub fn summarize(samples_us: &[f64]) -> Option<Timing> {
    if samples_us.is_empty() || samples_us.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
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
    Some(Timing {
        median_us: median,
        min_us: v[0],
        max_us: v[v.len() - 1],
        spread_pct: (quantile(0.75) - quantile(0.25)) / median * 100.0,
        samples: v.len(),
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
        assert!(summarize(&[]).is_none());
        assert!(summarize(&[1.0, 0.0]).is_none());
        assert!(summarize(&[1.0, f64::NAN]).is_none());
    }
}
