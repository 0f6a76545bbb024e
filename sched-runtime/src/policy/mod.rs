//! Scheduling policies: the interface every policy implements ([`Policy`],
//! called at each scheduling point with a [`Ctx`] on the run's jobs and
//! engine), one file per policy, and `registry` to select one by name.
//! A policy sees the GPU only through the [`Engine`] trait, so it runs
//! unchanged on any engine.

mod common;
pub mod mps;
pub mod mps_priority;
pub mod orion;
pub mod registry;
pub mod slowdown;
pub mod tally;
pub mod tally_predict;
pub mod tgs;
pub mod time_slicing;

use tally_gpu::{GpuSpec, Partition};

use crate::config_choice::DEFAULT_TURNAROUND_US;
use crate::engine::{Engine, KernelId, LaunchId, LaunchRequest};
use crate::error::RunError;
use crate::kernel_config::KernelConfig;
use crate::outcome::Request;

/// Which job is which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobRole {
    Hp,
    Be,
}

/// A job as the policy sees it.
#[derive(Debug, Clone)]
pub struct Job {
    pub role: JobRole,
    pub name: String,
    pub kernels: Vec<KernelId>,
    /// Standalone time of each kernel (original config, whole GPU), us.
    pub alone_us: Vec<f64>,
    /// Index of the current kernel.
    pub cursor: usize,
    /// Blocks of the current kernel already run.
    pub progress: u64,
    pub in_flight: Option<InFlight>,
    /// HP: whether a request is being served.
    pub active: bool,
    /// BE: on the host between iterations until this time (no GPU work;
    /// `JobSpec::gpu_util`), if it is.
    pub host_until: Option<f64>,
    /// Host time to issue one kernel (`JobSpec::launch_interval_us`).
    pub launch_interval_us: f64,
    /// When the host began issuing the current request's (or iteration's)
    /// kernels.
    pub issue_origin: f64,
}

/// The launch a job has on the GPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InFlight {
    pub launch: LaunchId,
    pub config: KernelConfig,
    pub sms: Partition,
    pub preemptible: bool,
}

impl Job {
    pub fn kernel(&self) -> KernelId {
        self.kernels[self.cursor]
    }

    /// Host time from `now` until the current kernel's launch reaches the
    /// GPU. Every launch passes `forward_us` of forwarding (an interception
    /// layer such as Tally's; 0 without one). A launch-bound job's host pays
    /// it inside each launch call, one after another: the current kernel is
    /// the `cursor + 1`-th launch of the request or iteration, each taking
    /// `launch_interval_us + forward_us` from `issue_origin`.
    pub fn launch_delay_us(&self, now: f64, forward_us: f64) -> f64 {
        if self.launch_interval_us <= 0.0 {
            return forward_us;
        }
        let per_launch = self.launch_interval_us + forward_us;
        let issued_at = self.issue_origin + (self.cursor as f64 + 1.0) * per_launch;
        (issued_at - now).max(forward_us)
    }

    /// Whether the job has a kernel waiting to be launched.
    pub fn ready(&self) -> bool {
        self.in_flight.is_none()
            && self.host_until.is_none()
            && (self.role == JobRole::Be || self.active)
    }
}

/// What a policy launches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    pub config: KernelConfig,
    pub sms: Partition,
    pub priority: u8,
}

/// The policy's handle on the run at a scheduling point.
#[derive(Debug)]
pub struct Ctx<'a> {
    pub engine: &'a mut dyn Engine,
    pub jobs: &'a mut [Job],
    /// When the HP job last became idle (None while it is busy).
    pub hp_idle_since: Option<f64>,
    /// Host time each launch spends being forwarded before it reaches the
    /// GPU ([`Policy::forward_us`]).
    pub forward_us: f64,
}

impl Ctx<'_> {
    pub fn now(&self) -> f64 {
        self.engine.now()
    }

    pub fn gpu(&self) -> &GpuSpec {
        self.engine.gpu()
    }

    /// HP is job 0.
    pub fn hp(&self) -> &Job {
        &self.jobs[0]
    }

    /// Launch job `j`'s current kernel (its remaining blocks, or the next
    /// slice of them) under `plan`.
    pub fn launch(&mut self, j: usize, plan: Plan) -> Result<LaunchId, RunError> {
        let job = &self.jobs[j];
        debug_assert!(job.ready(), "launch of a job that is not ready");
        let kernel = job.kernel();
        let total = self.engine.kernel(kernel).blocks();
        let remaining = total - job.progress;
        let (blocks, workers, preemptible) = plan.config.next_launch(remaining);
        let launch = self.engine.submit(LaunchRequest {
            job: j,
            kernel,
            first_block: job.progress,
            blocks,
            workers_per_sm: workers,
            max_workers: plan.config.max_workers(),
            preemptible,
            sms: plan.sms,
            priority: plan.priority,
            with_overhead: true,
            host_delay_us: job.launch_delay_us(self.engine.now(), self.forward_us),
            max_sms: None,
        })?;
        self.jobs[j].in_flight = Some(InFlight {
            launch,
            config: plan.config,
            sms: plan.sms,
            preemptible,
        });
        Ok(launch)
    }

    /// Ask job `j`'s launch to retreat (if it is preemptive PTB).
    pub fn retreat(&mut self, j: usize) -> bool {
        match self.jobs[j].in_flight {
            Some(f) if f.preemptible => self.engine.retreat(f.launch),
            _ => false,
        }
    }

    pub fn set_suspended(&mut self, j: usize, suspended: bool) {
        if let Some(f) = self.jobs[j].in_flight {
            self.engine.set_suspended(f.launch, suspended);
        }
    }

    /// Save (or restore) job `j`'s context: its launch in flight leaves the
    /// SMs mid-block (or returns), as a time-slice switch does.
    pub fn set_context_saved(&mut self, j: usize, saved: bool) {
        if let Some(f) = self.jobs[j].in_flight {
            self.engine.set_context_saved(f.launch, saved);
        }
    }
}

/// A scheduling policy.
pub trait Policy: std::fmt::Debug {
    fn name(&self) -> &'static str;

    /// Prepare for a run (per-kernel decisions made before it starts).
    fn prepare(&mut self, _engine: &dyn Engine, _jobs: &[Job]) -> Result<(), RunError> {
        Ok(())
    }

    /// Called at every scheduling point: launch ready jobs, preempt.
    fn schedule(&mut self, ctx: &mut Ctx<'_>) -> Result<(), RunError>;

    /// An HP request arrived (open loop only; a closed loop has none).
    fn request_arrived(&mut self, _arrival_us: f64) {}

    /// An HP kernel completed; `alone_us` is its standalone duration.
    fn hp_kernel_completed(&mut self, _alone_us: f64) {}

    /// An HP request completed.
    fn request_completed(&mut self, _request: &Request) {}

    /// Host time the policy's launch path adds to every launch, of either
    /// job, before it reaches the GPU (an interception server's forwarding).
    fn forward_us(&self) -> f64 {
        0.0
    }

    /// A time it wants to be called at even if nothing else happens.
    fn wake_at(&self, _now: f64) -> Option<f64> {
        None
    }
}

/// Options the policies read.
#[derive(Debug, Clone)]
pub struct PolicyOptions {
    /// Tally's turnaround-latency limit, microseconds.
    pub turnaround_us: f64,
    /// tally-predict: largest predicted HP slowdown accepted (0.02 = 2 %).
    pub tolerance: f64,
}

impl PolicyOptions {
    /// Options with a positive turnaround limit and a tolerance >= 0.
    pub fn new(turnaround_us: f64, tolerance: f64) -> Result<PolicyOptions, RunError> {
        let bad = |what: &str, reason: String| RunError::Input {
            what: what.into(),
            reason,
        };
        if !(turnaround_us > 0.0 && turnaround_us.is_finite()) {
            return Err(bad(
                "turnaround limit",
                format!("must be positive, got {} ms", turnaround_us / 1e3),
            ));
        }
        if !(tolerance >= 0.0 && tolerance.is_finite()) {
            return Err(bad("tolerance", format!("must be >= 0, got {tolerance}")));
        }
        Ok(PolicyOptions {
            turnaround_us,
            tolerance,
        })
    }
}

impl Default for PolicyOptions {
    fn default() -> Self {
        PolicyOptions {
            turnaround_us: DEFAULT_TURNAROUND_US,
            tolerance: 0.02,
        }
    }
}
