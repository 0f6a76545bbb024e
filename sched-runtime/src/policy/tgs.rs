//! TGS: BE kernel launches are rate-limited by a TCP-like control loop on
//! the HP job's throughput; kernels run untransformed and concurrently (no
//! priority, no preemption). Every window (`MIN_WINDOW_US`, or
//! `WINDOW_REQUESTS` HP requests' standalone time if longer, so that a
//! window holds several requests) the HP throughput is sampled
//! (the standalone time of the HP kernels completed, smoothed over a few
//! windows) and compared with what it can reach: the work of the requests
//! offered in the same windows for an open-loop HP, the best sample so far
//! for a closed loop. While it stays within 3 %
//! the BE rate grows x1.5 (slow start) or additively after a deviation; a
//! deviation cuts it by 8 %; a deviation of 9 % or more divides it by 10 and
//! restarts slow start.
//!
//! The loop watches throughput, not latency, which is why TGS lets an HP
//! inference job's tail latency grow: an HP job below saturation keeps its
//! throughput while its requests wait behind BE kernels.

use super::common::{launch_original, next_be};
use super::{Ctx, Job, Policy};
use crate::engine::Engine;
use crate::error::RunError;

/// Shortest control period, microseconds.
pub const MIN_WINDOW_US: f64 = 20_000.0;
/// The control period spans at least this many HP requests' standalone time.
pub const WINDOW_REQUESTS: f64 = 4.0;
/// Largest burst of BE launches the token bucket allows.
const BURST: f64 = 4.0;
/// Weight of the newest window in the smoothed throughput samples.
const SMOOTHING: f64 = 0.1;

#[derive(Debug, Default)]
pub struct Tgs {
    /// BE launches per microsecond, and its additive step.
    rate: f64,
    step: f64,
    tokens: f64,
    refilled_at: f64,
    slow_start: bool,
    window_us: f64,
    window_end: f64,
    /// HP work (standalone microseconds) completed and offered in the
    /// current window.
    completed: f64,
    offered: f64,
    /// Whether any request arrived on its own (an open loop).
    open_loop: bool,
    /// Smoothed per-window samples, and the best completed sample.
    completed_avg: Option<f64>,
    offered_avg: f64,
    best: f64,
    hp_request_us: f64,
    last_be: usize,
}

impl Tgs {
    /// HP throughput relative to what it can reach (1 = no loss).
    fn performance(&mut self) -> f64 {
        let smooth = |avg: Option<f64>, x: f64| match avg {
            Some(a) => a + SMOOTHING * (x - a),
            None => x,
        };
        let first = self.completed_avg.is_none();
        let done = smooth(self.completed_avg, self.completed);
        self.offered_avg = if first {
            self.offered
        } else {
            smooth(Some(self.offered_avg), self.offered)
        };
        self.completed_avg = Some(done);
        let reach = if self.open_loop {
            self.offered_avg
        } else {
            self.best = self.best.max(done);
            self.best
        };
        if reach > 0.0 {
            (done / reach).min(1.0)
        } else {
            1.0
        }
    }

    fn control(&mut self, now: f64) {
        while now >= self.window_end {
            let deviation = 1.0 - self.performance();
            if deviation >= 0.09 {
                self.rate /= 10.0;
                self.slow_start = true;
            } else if deviation > 0.03 {
                self.rate *= 0.92;
                self.slow_start = false;
            } else if self.slow_start {
                self.rate *= 1.5;
            } else {
                self.rate += self.step;
            }
            self.rate = self.rate.max(self.step * 1e-3);
            self.completed = 0.0;
            self.offered = 0.0;
            self.window_end += self.window_us;
        }
    }
}

impl Policy for Tgs {
    fn name(&self) -> &'static str {
        "tgs"
    }

    fn prepare(&mut self, _engine: &dyn Engine, jobs: &[Job]) -> Result<(), RunError> {
        self.hp_request_us = jobs[0].alone_us.iter().sum();
        // Start at a tenth of the BE jobs' standalone launch rate.
        let be_rate: f64 = jobs
            .iter()
            .skip(1)
            .map(|j| j.kernels.len() as f64 / j.alone_us.iter().sum::<f64>())
            .sum();
        self.rate = 0.1 * be_rate;
        self.step = 0.05 * be_rate;
        self.slow_start = true;
        self.tokens = 1.0;
        self.window_us = MIN_WINDOW_US.max(WINDOW_REQUESTS * self.hp_request_us);
        self.window_end = self.window_us;
        Ok(())
    }

    fn schedule(&mut self, ctx: &mut Ctx<'_>) -> Result<(), RunError> {
        let now = ctx.now();
        self.control(now);
        self.tokens = (self.tokens + self.rate * (now - self.refilled_at)).min(BURST);
        self.refilled_at = now;
        if ctx.jobs[0].ready() {
            launch_original(ctx, 0, 0)?;
        }
        while self.tokens >= 1.0 {
            let Some(j) = next_be(ctx, self.last_be) else {
                break;
            };
            self.last_be = j;
            self.tokens -= 1.0;
            launch_original(ctx, j, 0)?;
        }
        Ok(())
    }

    fn request_arrived(&mut self, _arrival_us: f64) {
        self.open_loop = true;
        self.offered += self.hp_request_us;
    }

    fn hp_kernel_completed(&mut self, alone_us: f64) {
        self.completed += alone_us;
    }

    fn wake_at(&self, now: f64) -> Option<f64> {
        let refill = if self.tokens < 1.0 && self.rate > 0.0 {
            now.max(self.refilled_at) + (1.0 - self.tokens) / self.rate
        } else {
            f64::INFINITY
        };
        Some(refill.min(self.window_end))
    }
}
