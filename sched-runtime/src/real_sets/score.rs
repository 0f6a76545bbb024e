//! How a set of estimates is scored against real measurements: the mean
//! absolute percentage error, Pearson's r, and the MAPE of the best
//! constant (the one number that, given for every row, errs least), so an
//! estimate that does no better than guessing one value is seen to.

/// One method's score on one set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    pub rows: usize,
    /// Percent.
    pub mape: f64,
    /// `None` when either side does not vary.
    pub pearson_r: Option<f64>,
}

/// Mean absolute percentage error of `estimate` against `real`, percent.
pub fn mape(real: &[f64], estimate: &[f64]) -> f64 {
    let n = real.len().min(estimate.len());
    if n == 0 {
        return f64::NAN;
    }
    100.0
        * real
            .iter()
            .zip(estimate)
            .map(|(r, e)| ((e - r) / r).abs())
            .sum::<f64>()
        / n as f64
}

/// Pearson's correlation of `a` and `b`.
pub fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len().min(b.len());
    if n < 2 {
        return None;
    }
    let mean = |x: &[f64]| x[..n].iter().sum::<f64>() / n as f64;
    let (ma, mb) = (mean(a), mean(b));
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a[..n].iter().zip(&b[..n]) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    (saa > 0.0 && sbb > 0.0).then(|| sab / (saa * sbb).sqrt())
}

/// The constant `c` minimising the MAPE of `c` against `real`: the
/// median of `real` weighted by `1 / real` (the MAPE is a sum of
/// `|c - r| / r`, piecewise linear in `c`, with slope changes at each `r`).
pub fn best_constant(real: &[f64]) -> f64 {
    let mut sorted: Vec<f64> = real.iter().copied().filter(|r| *r > 0.0).collect();
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted.sort_by(f64::total_cmp);
    let total: f64 = sorted.iter().map(|r| 1.0 / r).sum();
    let mut acc = 0.0;
    for r in &sorted {
        acc += 1.0 / r;
        if acc >= total / 2.0 {
            return *r;
        }
    }
    sorted[sorted.len() - 1]
}

/// The score of `estimate` against `real`.
pub fn score(real: &[f64], estimate: &[f64]) -> Score {
    Score {
        rows: real.len().min(estimate.len()),
        mape: mape(real, estimate),
        pearson_r: pearson(real, estimate),
    }
}

/// The best constant's MAPE on `real`.
pub fn constant_mape(real: &[f64]) -> f64 {
    let c = best_constant(real);
    mape(real, &vec![c; real.len()])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_perfect_estimate_scores_zero_and_one() {
        let real = [1.0, 1.2, 1.5, 2.0];
        let s = score(&real, &real);
        assert_eq!(s.mape, 0.0);
        assert!((s.pearson_r.unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(
            pearson(&real, &[1.0; 4]),
            None,
            "a constant has no correlation"
        );
    }

    #[test]
    fn the_best_constant_of_two_values_is_the_smaller() {
        // |c - 1| / 1 + |c - 2| / 2 is least at c = 1 (slope -1 + 1/2 < 0
        // below 1, 1 - 1/2 > 0 above).
        assert_eq!(best_constant(&[1.0, 2.0]), 1.0);
        assert!((constant_mape(&[1.0, 2.0]) - 25.0).abs() < 1e-12);
    }

    proptest! {
        #[test]
        fn no_constant_beats_the_best_one(
            real in prop::collection::vec(0.5f64..4.0, 1..40),
            c in 0.1f64..5.0,
        ) {
            let best = constant_mape(&real);
            prop_assert!(best <= mape(&real, &vec![c; real.len()]) + 1e-9);
        }
    }
}
