//! TGS (Wu et al., NSDI'23) as the published Tally table ran it: the Tally
//! artifact's TGS scheduler (`tally-project/tally`,
//! `src/tally/scheduler/tgs.cpp`) forwards both jobs' kernels untransformed
//! to concurrent streams in the Tally server's one context and gates BE
//! launches with a rate limit set from the HP job's launch rate. Under TGS
//! the server creates every stream of a client, its default stream
//! included, with that client's stream priority (`src/tally/server.cpp`,
//! `start_worker_server`, and the generated `handle_cudaStreamCreate*`:
//! `policy == PRIORITY || policy == TGS`), so the HP job's pending blocks
//! are dispatched ahead of BE's as SMs free up, as under MPS-priority; the
//! published table bears this out: TGS's HP latency is at or under
//! MPS-priority's at every percentile beside every BE job, where MPS's is up
//! to twice it (beside whisper, p99 20.9 ms and 23.8 ms against 48.3 ms).
//! Every constant below is that implementation's:
//!
//! - the HP rate is the number of thread blocks the HP job launched over
//!   the last `HP_SAMPLE_US` (its rate monitor sleeps 5 s);
//! - the BE job may launch while the blocks it launched in the current
//!   `BE_TICK_US` (its counter is reset every 50 ms) are within the limit;
//! - the limit follows TCP: slow start x1.5 while the HP rate stays within
//!   `THRESHOLD` (3 %) of its maximum, -8 % on a deviation, /10 on a
//!   deviation of 3 x `THRESHOLD`. Its control loop spins without sleeping
//!   on the latest 5 s sample, so within microseconds of a sample the limit
//!   reaches its extremes: unbounded while the HP rate is at least 97 % of
//!   its maximum, zero otherwise (a zero limit still admits the first BE
//!   launch of each 50 ms tick, whose counter starts at zero). That fixed
//!   point is what is modelled here.
//! - the maximum is the highest sample sustained; a sample more than
//!   `REPROFILE` (20 %) away from it re-profiles (the maximum becomes
//!   0.975 or 1.025 times the sample); a sample `REBASE` (12 %) or more
//!   under it, and not 20 %, re-bases it: the loop counts 20 turns at such
//!   a deviation and then takes the maximum to 0.8 times itself, whereupon
//!   the sample, now within `TRACK` of it, becomes the maximum and the
//!   limit opens again (`update_rate_limit`'s `max_diff_counter`); with at
//!   least 3 of the last 5 samples under `IDLE_BLOCKS` blocks the HP job
//!   counts as inactive and BE is unlimited. So the gate closes for a
//!   drop of 3 % to 12 %, not for a larger one.
//!
//! The loop watches throughput, not latency, which is why TGS lets an HP
//! inference job's tail latency grow: an HP job below saturation keeps its
//! launch rate while its requests wait behind BE blocks.

use super::common::{launch_original, next_be};
use super::{Ctx, Policy};
use crate::error::RunError;

/// The HP job's stream priority: above BE's 0, as the server's streams for
/// a higher-priority client are created under TGS.
const HP_STREAM_PRIORITY: u8 = 1;
/// HP rate monitor period, microseconds.
pub const HP_SAMPLE_US: f64 = 5_000_000.0;
/// BE launch counter period, microseconds.
pub const BE_TICK_US: f64 = 50_000.0;
/// Largest deviation of the HP rate from its maximum that keeps BE open.
pub const THRESHOLD: f64 = 0.03;
/// Deviation of a sample from the maximum that re-profiles the maximum.
const REPROFILE: f64 = 0.2;
/// Deviation within which a sample may raise the maximum.
const TRACK: f64 = 0.1;
/// A sample at least this far under the maximum (and within `REPROFILE`)
/// re-bases the maximum to itself.
const REBASE: f64 = 0.12;
/// Samples below this many blocks count as the HP job being inactive.
const IDLE_BLOCKS: f64 = 1000.0;
/// Samples the inactivity rule looks at, and how many must be idle.
const WINDOW: usize = 5;
const IDLE_SAMPLES: usize = 3;

#[derive(Debug, Default)]
pub struct Tgs {
    /// HP blocks launched in the current sample.
    hp_blocks: f64,
    next_sample: f64,
    /// Latest samples, newest last (at most `WINDOW`).
    samples: Vec<f64>,
    max_rate: f64,
    /// Whether BE launches are unlimited (else one per tick).
    open: bool,
    tick: u64,
    /// BE launches in the current tick.
    launched_in_tick: u32,
    last_be: usize,
}

impl Tgs {
    /// Take the HP samples that are due and set the gate.
    fn sample(&mut self, now: f64) {
        while now >= self.next_sample {
            let r = self.hp_blocks;
            self.hp_blocks = 0.0;
            self.next_sample += HP_SAMPLE_US;
            if self.samples.len() == WINDOW {
                self.samples.remove(0);
            }
            self.samples.push(r);
            self.open = self.decide(r);
        }
    }

    fn decide(&mut self, r: f64) -> bool {
        let idle = self.samples.iter().filter(|&&s| s < IDLE_BLOCKS).count();
        if idle >= IDLE_SAMPLES {
            return true;
        }
        if self.max_rate <= 0.0 {
            self.max_rate = r;
            return true;
        }
        let d = (r - self.max_rate) / self.max_rate;
        if d > REPROFILE {
            self.max_rate = 0.975 * r;
        } else if d < -REPROFILE {
            self.max_rate = 1.025 * r;
        } else if d <= -REBASE {
            self.max_rate = r;
        } else if d.abs() <= TRACK {
            self.max_rate = self.max_rate.max(r);
        }
        // A rate above the maximum raises it on the loop's next turn.
        r >= (1.0 - THRESHOLD) * self.max_rate
    }
}

impl Policy for Tgs {
    fn name(&self) -> &'static str {
        "tgs"
    }

    fn schedule(&mut self, ctx: &mut Ctx<'_>) -> Result<(), RunError> {
        let now = ctx.now();
        if self.next_sample == 0.0 {
            // Before the first sample the controller is profiling: BE starts
            // in slow start from a limit above what one tick launches.
            self.next_sample = HP_SAMPLE_US;
            self.open = true;
        }
        self.sample(now);
        let tick = (now / BE_TICK_US) as u64;
        if tick != self.tick {
            self.tick = tick;
            self.launched_in_tick = 0;
        }
        if ctx.jobs[0].ready() {
            let k = ctx.jobs[0].kernel();
            self.hp_blocks += ctx.engine.kernel(k).blocks() as f64;
            launch_original(ctx, 0, HP_STREAM_PRIORITY)?;
        }
        while self.open || self.launched_in_tick == 0 {
            let Some(j) = next_be(ctx, self.last_be) else {
                break;
            };
            self.last_be = j;
            self.launched_in_tick += 1;
            launch_original(ctx, j, 0)?;
        }
        Ok(())
    }

    fn wake_at(&self, now: f64) -> Option<f64> {
        let next_tick = ((now / BE_TICK_US).floor() + 1.0) * BE_TICK_US;
        Some(if self.open {
            self.next_sample.max(now)
        } else {
            next_tick.min(self.next_sample)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(samples: &[f64]) -> bool {
        let mut tgs = Tgs::default();
        let mut open = true;
        for &r in samples {
            tgs.samples.push(r);
            if tgs.samples.len() > WINDOW {
                tgs.samples.remove(0);
            }
            open = tgs.decide(r);
        }
        open
    }

    #[test]
    fn be_flows_while_the_hp_rate_holds_its_maximum() {
        assert!(gate(&[10_000.0, 10_000.0, 9_800.0]));
        // A higher rate raises the maximum.
        assert!(gate(&[10_000.0, 10_500.0, 10_400.0]));
    }

    #[test]
    fn a_drop_of_more_than_three_percent_closes_the_gate() {
        assert!(!gate(&[10_000.0, 9_500.0]));
        assert!(!gate(&[10_000.0, 10_500.0, 10_000.0]));
    }

    #[test]
    fn a_drop_of_twelve_to_twenty_percent_rebases_the_maximum() {
        // 15 % under: the maximum falls to the sample and BE flows again.
        assert!(gate(&[10_000.0, 8_500.0]));
        // 10 % under: within the band that closes the gate.
        assert!(!gate(&[10_000.0, 9_000.0]));
        // Re-based at 8,500, a later 8,400 is within 3 % of it.
        assert!(gate(&[10_000.0, 8_500.0, 8_400.0]));
    }

    #[test]
    fn a_drop_beyond_twenty_percent_reprofiles_the_maximum() {
        assert!(gate(&[10_000.0, 7_000.0]));
        assert!(gate(&[10_000.0, 13_000.0]));
    }

    #[test]
    fn an_inactive_hp_job_leaves_be_unlimited() {
        assert!(gate(&[10_000.0, 0.0, 0.0, 0.0]));
        assert!(!gate(&[10_000.0, 10_000.0, 9_000.0]));
    }
}
