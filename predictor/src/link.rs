//! The output link of the learned models: they learn how much a co-runner
//! stretches the *shared-path latency term* of A's time, and the link turns
//! that into A's slowdown given how much of A's time that term holds.
//!
//! Why: an operator's time is a soft maximum (4th powers) of its bounds —
//! pipes, L1, its crossbar port, and the memory latency that the L2 and DRAM
//! queues set (see tally-gpu's simulator docs; real GPUs overlap the same
//! way). A co-runner only lengthens the latency term, so with `q` its share
//! of the 4th-power budget, `slowdown^4 = 1 + q (s^4 - 1)` for a path
//! stretch `s`. Learning `s` instead of the slowdown lets a model trained
//! on kernels bound by the shared path predict kernels it has never seen
//! that are mostly bound by private units (a depthwise convolution reading
//! L1): trees cannot extrapolate, but the link does, from the counters.

use crate::features::{feature_index, Features};

/// Floor of the latency share: below it the inverse link would amplify
/// measurement noise without bound.
const SHARE_FLOOR: f64 = 0.2;

const SHARE: usize = feature_index("a_shared_share");

/// The latency term's share of A's 4th-power time budget, from its features.
#[inline]
fn share(f: &Features) -> f64 {
    f[SHARE].powi(4).clamp(SHARE_FLOOR, 1.0)
}

/// Learning target from a measured log slowdown: the log path stretch.
#[inline]
pub fn to_model(f: &Features, log_slowdown: f64) -> f64 {
    let q = share(f);
    (1.0 + ((4.0 * log_slowdown).exp() - 1.0) / q)
        .max(1e-12)
        .ln()
        / 4.0
}

/// Log slowdown from a model output (a log path stretch).
#[inline]
pub fn from_model(f: &Features, output: f64) -> f64 {
    let q = share(f);
    (1.0 + q * ((4.0 * output).exp() - 1.0)).max(1e-12).ln() / 4.0
}

/// Slowdown (not its log) from a model output, at least 1: the run-time
/// predictor's form, one `exp` and two square roots.
#[inline]
pub fn slowdown_from_model(f: &Features, output: f64) -> f64 {
    let q = share(f);
    let s4 = 1.0 + q * ((4.0 * output.max(0.0)).exp() - 1.0);
    s4.sqrt().sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::N_FEATURES;
    use proptest::prelude::*;

    fn with_share(s: f64) -> Features {
        let mut f = [0.0; N_FEATURES];
        f[SHARE] = s;
        f
    }

    #[test]
    fn fully_path_bound_is_the_identity_and_private_bound_damps() {
        let f = with_share(1.0);
        assert!((from_model(&f, 0.3) - 0.3).abs() < 1e-12);
        // Half the budget (q = 0.5): a 2x stretch gives (1 + 0.5 * 15)^(1/4).
        let half = with_share(0.5f64.powf(0.25));
        let expected = (1.0 + 0.5 * 15.0f64).powf(0.25).ln();
        assert!((from_model(&half, 2.0f64.ln()) - expected).abs() < 1e-12);
        // The floor keeps the inverse finite for kernels with no latency term.
        assert!(to_model(&with_share(0.0), 0.1).is_finite());
    }

    proptest! {
        #[test]
        fn round_trips_and_is_monotone(s in 0.0f64..1.0, y in 0.0f64..2.0, d in 0.001f64..0.5) {
            let f = with_share(s);
            prop_assert!((from_model(&f, to_model(&f, y)) - y).abs() < 1e-9);
            prop_assert!(from_model(&f, y + d) > from_model(&f, y));
            // The slowdown never exceeds the stretch.
            prop_assert!(from_model(&f, y) <= y + 1e-12);
            let direct = slowdown_from_model(&f, y);
            prop_assert!((direct.ln() - from_model(&f, y)).abs() < 1e-9);
        }
    }
}
