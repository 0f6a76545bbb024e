//! TGS: BE kernel launches are rate-limited by a TCP-like control loop on
//! the HP job's performance; kernels run untransformed and concurrently
//! (no priority, no preemption). Every `WINDOW_US` the HP performance is
//! sampled (standalone / observed service time of the requests completed
//! in the window): while it stays within 3 % of its maximum the BE rate
//! grows x1.5 (slow start) or additively after a deviation; a deviation cuts
//! it by 8 %; a deviation of 9 % or more divides it by 10 and restarts slow
//! start.

use super::common::{launch_original, next_be};
use crate::engine::SimEngine;
use crate::runner::{Ctx, Job, Policy, Request, RunError};

/// Control period, microseconds.
pub const WINDOW_US: f64 = 20_000.0;
/// Largest burst of BE launches the token bucket allows.
const BURST: f64 = 4.0;

#[derive(Debug, Default)]
pub struct Tgs {
    /// BE launches per microsecond, and its additive step.
    rate: f64,
    step: f64,
    tokens: f64,
    refilled_at: f64,
    slow_start: bool,
    window_end: f64,
    /// Sum of standalone/observed over requests completed in the window.
    perf_sum: f64,
    perf_n: u32,
    hp_alone_us: f64,
    last_be: usize,
}

impl Tgs {
    fn control(&mut self, now: f64) {
        while now >= self.window_end {
            let perf = if self.perf_n > 0 {
                self.perf_sum / f64::from(self.perf_n)
            } else {
                1.0
            };
            let deviation = 1.0 - perf;
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
            self.perf_sum = 0.0;
            self.perf_n = 0;
            self.window_end += WINDOW_US;
        }
    }
}

impl Policy for Tgs {
    fn name(&self) -> &'static str {
        "tgs"
    }

    fn prepare(&mut self, _engine: &SimEngine, jobs: &[Job]) -> Result<(), RunError> {
        self.hp_alone_us = jobs[0].alone_us.iter().sum();
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
        self.window_end = WINDOW_US;
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

    fn request_completed(&mut self, request: &Request) {
        // Service time (queueing excluded): what the co-runner slows down.
        let service = request.end_us - request.start_us;
        self.perf_sum += (self.hp_alone_us / service.max(1e-9)).min(1.0);
        self.perf_n += 1;
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
