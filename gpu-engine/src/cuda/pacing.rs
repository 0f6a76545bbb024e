//! How the host waits for launches on a real GPU without spinning a core
//! longer than needed. A launch cannot finish before its stream's earlier
//! launches and its own time alone have passed (less a margin for the
//! measurement's spread), so until the earliest such time the host sleeps;
//! from there it polls the launches' events every [`POLL_US`]. A launch
//! told to retreat may end at any moment: it is polled at once.
//!
//! Constants: Linux's default timer slack is 50 us (`prctl(2)`,
//! `PR_SET_TIMERSLACK`), so a sleep is cut [`SLEEP_SLACK_US`] short and the
//! rest spun; an event query never blocks (`cuEventQuery` answers
//! `CUDA_ERROR_NOT_READY` for an event the device has not reached, CUDA
//! driver API reference), so polling every 2 us keeps a core busy only
//! while a launch may be ending. The 2 us is this engine's choice: a few
//! times below the launch overhead of a few microseconds that every
//! kernel pays anyway, so polling adds little to a kernel boundary.

use std::time::Duration;

/// Interval between event polls while a launch may be ending, us.
pub const POLL_US: f64 = 2.0;
/// A sleep ends up to this much late, us; sleeps are cut short by it.
pub const SLEEP_SLACK_US: f64 = 100.0;
/// Share of a launch's time alone it surely takes on a shared GPU (the
/// rest covers the spread of the alone measurement).
pub const SURE_SHARE: f64 = 0.9;

/// The earliest a launch enqueued at `now` can end: after the stream's
/// previous launch (`stream_free_us`) and the sure part of its time alone
/// (`alone_us`, 0 when not measured).
pub fn earliest_end(now: f64, stream_free_us: f64, alone_us: f64) -> f64 {
    now.max(stream_free_us) + SURE_SHARE * alone_us.max(0.0)
}

/// When to look at the launches again: at the earliest end of any, but no
/// sooner than a poll interval from now; `None` with none running.
pub fn next_check(now: f64, earliest_ends: impl Iterator<Item = f64>) -> Option<f64> {
    earliest_ends.reduce(f64::min).map(|e| e.max(now + POLL_US))
}

/// How to wait from `now` until `t`: a sleep of this long (if any), then
/// spinning to `t`.
pub fn sleep_before(now: f64, t: f64) -> Option<Duration> {
    let left = t - now;
    (left > SLEEP_SLACK_US).then(|| Duration::from_secs_f64((left - SLEEP_SLACK_US) * 1e-6))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_ends_no_sooner_than_its_stream_and_its_sure_time_alone() {
        assert_eq!(earliest_end(10.0, 0.0, 100.0), 10.0 + 90.0);
        assert_eq!(earliest_end(10.0, 50.0, 100.0), 50.0 + 90.0);
        assert_eq!(earliest_end(10.0, 0.0, 0.0), 10.0);
    }

    #[test]
    fn the_host_looks_again_at_the_earliest_end_but_not_sooner_than_a_poll() {
        assert_eq!(next_check(0.0, [500.0, 300.0].into_iter()), Some(300.0));
        assert_eq!(next_check(0.0, [0.5].into_iter()), Some(POLL_US));
        assert_eq!(next_check(0.0, std::iter::empty()), None);
    }

    #[test]
    fn long_waits_sleep_short_waits_spin() {
        let d = sleep_before(0.0, 1000.0).unwrap();
        assert!((d.as_secs_f64() * 1e6 - 900.0).abs() < 1e-3, "{d:?}");
        assert_eq!(sleep_before(0.0, SLEEP_SLACK_US), None);
        assert_eq!(sleep_before(5.0, 1.0), None);
    }
}
