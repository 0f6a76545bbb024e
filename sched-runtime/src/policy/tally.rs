//! Tally: HP kernels launch at once, untransformed, at high priority, and
//! are never preempted. BE gets at most one kernel in flight, only after HP
//! has idled for `BE_IDLE_US`, in the configuration chosen per kernel by the
//! turnaround-latency limit (preemptive PTB or slices); when HP work
//! arrives a BE PTB kernel retreats and no further BE slices are issued.
//! After `UNTRANSFORMED_IDLE_US` of HP idleness BE runs untransformed.
//!
//! What the real system pays, and where each cost sits here:
//! - every launch of either job is intercepted by the client library and
//!   forwarded to the Tally server before it reaches the GPU
//!   (`FORWARD_US`, added to each launch's host path: a launch-bound HP
//!   server pays it in every launch call, one after another);
//! - BE kernels run transformed: a PTB worker fetches each block from a
//!   global counter (the engine's `PTB_FETCH_US`), a slice is a launch;
//! - an HP arrival waits for the running BE blocks to reach their retreat
//!   point, or for the slice in flight to finish (the engine runs blocks to
//!   completion);
//! - BE blocks still on the GPU when HP kernels start contend with them on
//!   the memory path (the engine's contention model).

use std::collections::HashMap;

use super::common::{be_in_flight, hp_busy, launch_original, next_be};
use super::{Ctx, Job, Plan, Policy};
use crate::config_choice::choose_config;
use crate::engine::{Engine, KernelId};
use crate::error::RunError;
use crate::kernel_config::KernelConfig;
use tally_gpu::{GpuSpec, Partition};

/// HP idleness before BE may launch, microseconds.
pub const BE_IDLE_US: f64 = 100.0;
/// HP idleness after which BE runs untransformed, microseconds.
pub const UNTRANSFORMED_IDLE_US: f64 = 100_000.0;
/// Forwarding of one launch through the interception client and server,
/// microseconds. Source: the published single-job table
/// (`data/tally-bench-a100/single-job-perf.csv`): the HP jobs alone under
/// Tally, whose HP kernels run untransformed, keep 0.99 of their
/// throughput, so forwarding costs 1 % of a request: 40.5 us of BERT's
/// 4.05 ms over the 271 launches of `bert-large:infer@1` (0.15 us), 19.6 ms
/// of Llama-2's 1.96 s over the 61 928 of `llama2-7b:infer` (0.32 us); the
/// constant is their mean. Being a share of the whole request spread over
/// its launches, it is a per-launch host cost: a launch-bound job pays it
/// serially (`Job::launch_delay_us`).
pub const FORWARD_US: f64 = 0.25;

#[derive(Debug)]
pub struct Tally {
    turnaround_us: f64,
    configs: HashMap<KernelId, KernelConfig>,
    last_be: usize,
    idle_since: Option<f64>,
}

impl Tally {
    pub fn new(turnaround_us: f64) -> Tally {
        Tally {
            turnaround_us,
            configs: HashMap::new(),
            last_be: 0,
            idle_since: None,
        }
    }

    /// The chosen configuration of every BE kernel.
    pub(crate) fn choose_all(&mut self, engine: &dyn Engine, jobs: &[Job]) -> Result<(), RunError> {
        for job in jobs.iter().skip(1) {
            for &k in &job.kernels {
                if self.configs.contains_key(&k) {
                    continue;
                }
                let (best, _) = choose_config(engine, k, self.turnaround_us)?;
                self.configs.insert(k, best.config);
            }
        }
        Ok(())
    }

    /// The turnaround-latency limit, microseconds.
    pub(crate) fn turnaround_us(&self) -> f64 {
        self.turnaround_us
    }

    /// HP has work: the idle clock stops.
    pub(crate) fn mark_busy(&mut self) {
        self.idle_since = None;
    }

    pub(crate) fn config(&self, k: KernelId) -> KernelConfig {
        self.configs
            .get(&k)
            .copied()
            .unwrap_or(KernelConfig::Original)
    }

    /// The HP half and the idle-time BE half of the policy; returns whether
    /// HP is busy (BE must not be launched on the whole GPU then).
    pub(crate) fn schedule_hp(&mut self, ctx: &mut Ctx<'_>) -> Result<bool, RunError> {
        if hp_busy(ctx) {
            self.idle_since = None;
            // HP work present: the BE kernel in flight retreats (a slice in
            // flight finishes; the next is not issued).
            if let Some(j) = be_in_flight(ctx) {
                ctx.retreat(j);
            }
            if ctx.jobs[0].ready() {
                launch_original(ctx, 0, 1)?;
            }
            return Ok(true);
        }
        if self.idle_since.is_none() {
            self.idle_since = Some(ctx.hp_idle_since.unwrap_or(ctx.now()));
        }
        Ok(false)
    }

    pub(crate) fn schedule_idle_be(&mut self, ctx: &mut Ctx<'_>) -> Result<(), RunError> {
        self.schedule_idle_be_on(ctx, |gpu, _| Partition::whole(gpu))
    }

    /// The idle-time BE half, each launch on the SMs `place` gives its
    /// configuration (Tally: the whole GPU).
    pub(crate) fn schedule_idle_be_on(
        &mut self,
        ctx: &mut Ctx<'_>,
        place: impl Fn(&GpuSpec, KernelConfig) -> Partition,
    ) -> Result<(), RunError> {
        let idle = ctx.now() - self.idle_since.unwrap_or(ctx.now());
        if idle + 1e-9 < BE_IDLE_US || be_in_flight(ctx).is_some() {
            return Ok(());
        }
        if let Some(j) = next_be(ctx, self.last_be) {
            self.last_be = j;
            let k = ctx.jobs[j].kernel();
            let config = if idle >= UNTRANSFORMED_IDLE_US {
                KernelConfig::Original
            } else {
                self.config(k)
            };
            let sms = place(ctx.gpu(), config);
            ctx.launch(
                j,
                Plan {
                    config,
                    sms,
                    priority: 0,
                },
            )?;
        }
        Ok(())
    }

    pub(crate) fn idle_wake(&self, now: f64) -> Option<f64> {
        let since = self.idle_since?;
        [since + BE_IDLE_US, since + UNTRANSFORMED_IDLE_US]
            .into_iter()
            .find(|&t| t > now)
    }
}

impl Policy for Tally {
    fn name(&self) -> &'static str {
        "tally"
    }

    fn prepare(&mut self, engine: &dyn Engine, jobs: &[Job]) -> Result<(), RunError> {
        self.choose_all(engine, jobs)
    }

    fn schedule(&mut self, ctx: &mut Ctx<'_>) -> Result<(), RunError> {
        if !self.schedule_hp(ctx)? {
            self.schedule_idle_be(ctx)?;
        }
        Ok(())
    }

    fn forward_us(&self) -> f64 {
        FORWARD_US
    }

    fn wake_at(&self, now: f64) -> Option<f64> {
        self.idle_wake(now)
    }
}
