//! Measurement noise of the simulated GPU: a seeded lognormal factor per
//! measurement, so that datasets look like real runs yet are reproducible.

use crate::rng::SplitMix64;

/// Multiplicative lognormal noise with median 1 and log-standard-deviation
/// `sigma`, drawn from a stream keyed by the measurement's identity (so the
/// same measurement gets the same noise whatever order a campaign runs in).
pub(crate) fn lognormal_factor(seed: u64, sigma: f64, keys: &[u64]) -> f64 {
    if sigma <= 0.0 {
        return 1.0;
    }
    (sigma * SplitMix64::keyed(seed, keys).normal()).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_and_centred() {
        assert_eq!(lognormal_factor(1, 0.0, &[3]), 1.0);
        assert_eq!(
            lognormal_factor(1, 0.01, &[3]),
            lognormal_factor(1, 0.01, &[3])
        );
        let mean: f64 = (0..5000u64)
            .map(|i| lognormal_factor(9, 0.01, &[i]).ln())
            .sum::<f64>()
            / 5000.0;
        assert!(mean.abs() < 1e-3);
    }
}
