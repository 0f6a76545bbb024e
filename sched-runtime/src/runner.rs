//! The run loop: jobs (one HP request stream, BE training loops) on the
//! engine, driven by a policy at every scheduling point. The runner owns the
//! CUDA stream semantics: each job has at most one launch in flight and its
//! kernels run in order; a kernel cut short (a retreat, or slices not yet
//! issued) keeps its progress and resumes from it.

use tally_gpu::{GpuSpec, Partition};

use crate::config::KernelConfig;
use crate::engine::{EngineError, KernelId, LaunchId, LaunchRequest, SimEngine};
use crate::workload::{Arrivals, Workload};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("{what}: {reason}")]
    Input { what: String, reason: String },
    #[error("policy {policy}: {reason}")]
    Policy { policy: String, reason: String },
}

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

    /// Whether the job has a kernel waiting to be launched.
    pub fn ready(&self) -> bool {
        self.in_flight.is_none() && (self.role == JobRole::Be || self.active)
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
    pub engine: &'a mut SimEngine,
    pub jobs: &'a mut [Job],
    /// When the HP job last became idle (None while it is busy).
    pub hp_idle_since: Option<f64>,
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
            preemptible,
            sms: plan.sms,
            priority: plan.priority,
            with_overhead: true,
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
}

/// A scheduling policy.
pub trait Policy: std::fmt::Debug {
    fn name(&self) -> &'static str;

    /// Prepare for a run (per-kernel decisions made before it starts).
    fn prepare(&mut self, _engine: &SimEngine, _jobs: &[Job]) -> Result<(), RunError> {
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

    /// A time it wants to be called at even if nothing else happens.
    fn wake_at(&self, _now: f64) -> Option<f64> {
        None
    }
}

/// Run parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    pub gpu: GpuSpec,
    pub duration_us: f64,
    pub seed: u64,
    pub arrivals: Arrivals,
}

/// One HP request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    pub arrival_us: f64,
    pub start_us: f64,
    pub end_us: f64,
}

impl Request {
    pub fn latency_us(&self) -> f64 {
        self.end_us - self.arrival_us
    }
}

/// What a run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub policy: String,
    pub requests: Vec<Request>,
    /// Requests that arrived within the duration.
    pub arrived: usize,
    /// Per BE job: standalone-equivalent microseconds of work done.
    pub be_work_us: Vec<f64>,
    pub be_iterations: Vec<u64>,
    pub duration_us: f64,
}

/// Standalone latency of one HP request (all its kernels in order on the
/// whole GPU), microseconds.
pub fn hp_request_alone_us(gpu: &GpuSpec, workload: &Workload) -> Result<f64, RunError> {
    let alone = Workload {
        hp: workload.hp.clone(),
        be: Vec::new(),
    };
    let cfg = RunConfig {
        gpu: gpu.clone(),
        duration_us: f64::INFINITY,
        seed: 0,
        arrivals: Arrivals::Times(vec![0.0]),
    };
    let out = run(&alone, &mut crate::policy::Mps, &cfg)?;
    Ok(out.requests.first().map_or(0.0, Request::latency_us))
}

/// The HP job alone on `arrivals` (`None`: closed loop) for `duration_us`.
/// Alone, every request takes exactly `request_alone_us` (the engine is
/// deterministic and one request runs at a time), so the run is the
/// single-server queue `start = max(arrival, previous end)`: computed here
/// without simulating, and identical to simulating it (a test checks).
pub fn hp_alone_outcome(
    request_alone_us: f64,
    arrivals: Option<&[f64]>,
    duration_us: f64,
) -> RunOutcome {
    let mut requests = Vec::new();
    let mut free_at = 0.0f64;
    let mut push = |arrival_us: f64, free_at: &mut f64| -> bool {
        let start_us = arrival_us.max(*free_at);
        let end_us = start_us + request_alone_us;
        if end_us > duration_us || request_alone_us <= 0.0 {
            return false;
        }
        requests.push(Request {
            arrival_us,
            start_us,
            end_us,
        });
        *free_at = end_us;
        true
    };
    let arrived = match arrivals {
        None => {
            while push(free_at, &mut free_at) {}
            requests.len()
        }
        Some(times) => {
            for &a in times.iter().take_while(|&&a| a < duration_us) {
                if !push(a, &mut free_at) {
                    break;
                }
            }
            times.iter().filter(|&&a| a < duration_us).count()
        }
    };
    RunOutcome {
        policy: "alone".to_string(),
        requests,
        arrived,
        be_work_us: Vec::new(),
        be_iterations: Vec::new(),
        duration_us,
    }
}

/// Arrival times for a run: Poisson arrivals need the standalone request
/// latency (the capacity is one request per standalone latency).
pub fn arrival_times(cfg: &RunConfig, request_alone_us: f64) -> Option<Vec<f64>> {
    match &cfg.arrivals {
        Arrivals::ClosedLoop => None,
        Arrivals::Times(t) => Some(t.clone()),
        Arrivals::Poisson { load } => {
            let mean_gap = request_alone_us / load.max(1e-9);
            let mut rng = tally_gpu::rng::SplitMix64::new(cfg.seed ^ 0x9e37_79b9_7f4a_7c15);
            let mut t = 0.0;
            let mut out = Vec::new();
            loop {
                t += -mean_gap * (1.0 - rng.next_f64()).ln();
                if t >= cfg.duration_us {
                    return Some(out);
                }
                out.push(t);
            }
        }
    }
}

/// Run `workload` under `policy`.
pub fn run(
    workload: &Workload,
    policy: &mut dyn Policy,
    cfg: &RunConfig,
) -> Result<RunOutcome, RunError> {
    let mut engine = SimEngine::new(&cfg.gpu);
    run_on(&mut engine, workload, policy, cfg, None)
}

/// `run` on a given engine (so callers can record its block log) with
/// precomputed arrival times (`None`: derived from `cfg`).
pub fn run_on(
    engine: &mut SimEngine,
    workload: &Workload,
    policy: &mut dyn Policy,
    cfg: &RunConfig,
    arrivals: Option<Vec<f64>>,
) -> Result<RunOutcome, RunError> {
    let mut jobs = Vec::new();
    for (role, spec) in std::iter::once((JobRole::Hp, &workload.hp))
        .chain(workload.be.iter().map(|b| (JobRole::Be, b)))
    {
        if spec.kernels.is_empty() {
            return Err(RunError::Input {
                what: spec.name.clone(),
                reason: "job has no kernels".into(),
            });
        }
        let mut kernels = Vec::new();
        let mut alone = Vec::new();
        for k in &spec.kernels {
            kernels.push(engine.add_kernel(k)?);
            alone.push(crate::alone::kernel_alone_us(
                &cfg.gpu,
                k,
                KernelConfig::Original,
                Partition::whole(&cfg.gpu),
            )?);
        }
        jobs.push(Job {
            role,
            name: spec.name.clone(),
            kernels,
            alone_us: alone,
            cursor: 0,
            progress: 0,
            in_flight: None,
            active: false,
        });
    }
    let arrivals = match arrivals {
        Some(a) => Some(a),
        None => match cfg.arrivals {
            Arrivals::Poisson { .. } => {
                let alone = hp_request_alone_us(&cfg.gpu, workload)?;
                arrival_times(cfg, alone)
            }
            _ => arrival_times(cfg, 0.0),
        },
    };
    policy.prepare(engine, &jobs)?;

    let closed_loop = arrivals.is_none();
    let arrivals = arrivals.unwrap_or_default();
    let mut next_arrival = 0usize;
    let mut queue: std::collections::VecDeque<f64> = Default::default();
    let mut requests = Vec::new();
    let mut current_start = (0.0, 0.0);
    let n_be = jobs.len() - 1;
    let mut be_work = vec![0.0; n_be];
    let mut be_iters = vec![0u64; n_be];
    let mut hp_idle_since = Some(0.0);
    let mut completions = Vec::new();
    let end = cfg.duration_us;
    if closed_loop {
        queue.push_back(0.0);
    }
    loop {
        // Requests that have arrived join the queue; an idle HP starts one.
        while next_arrival < arrivals.len() && arrivals[next_arrival] <= engine.now() {
            policy.request_arrived(arrivals[next_arrival]);
            queue.push_back(arrivals[next_arrival]);
            next_arrival += 1;
        }
        if !jobs[0].active {
            if let Some(a) = queue.pop_front() {
                jobs[0].active = true;
                jobs[0].cursor = 0;
                jobs[0].progress = 0;
                current_start = (a, engine.now());
                hp_idle_since = None;
            }
        }
        let mut ctx = Ctx {
            engine,
            jobs: &mut jobs,
            hp_idle_since,
        };
        policy.schedule(&mut ctx)?;
        engine.settle(&mut completions)?;
        if completions.is_empty() {
            let mut t = engine.next_event_time().unwrap_or(f64::INFINITY);
            if next_arrival < arrivals.len() {
                t = t.min(arrivals[next_arrival]);
            }
            if let Some(w) = policy.wake_at(engine.now()) {
                if w > engine.now() {
                    t = t.min(w);
                }
            }
            if t > end || !t.is_finite() {
                break;
            }
            engine.advance_to(t, &mut completions)?;
        }
        for c in completions.drain(..) {
            let j = c.job;
            let kernel_blocks = engine.kernel(c.kernel).blocks();
            let job = &mut jobs[j];
            job.in_flight = None;
            job.progress += c.blocks_done;
            if j > 0 {
                be_work[j - 1] +=
                    job.alone_us[job.cursor] * c.blocks_done as f64 / kernel_blocks as f64;
            }
            if job.progress >= kernel_blocks {
                if j == 0 {
                    policy.hp_kernel_completed(job.alone_us[job.cursor]);
                }
                job.progress = 0;
                job.cursor += 1;
                if job.cursor == job.kernels.len() {
                    job.cursor = 0;
                    if j == 0 {
                        job.active = false;
                        let request = Request {
                            arrival_us: current_start.0,
                            start_us: current_start.1,
                            end_us: c.time_us,
                        };
                        policy.request_completed(&request);
                        requests.push(request);
                        hp_idle_since = Some(c.time_us);
                        if closed_loop {
                            queue.push_back(c.time_us);
                        }
                    } else {
                        be_iters[j - 1] += 1;
                    }
                }
            }
        }
    }
    let arrived = if closed_loop {
        requests.len()
    } else {
        arrivals.iter().filter(|&&a| a < end).count()
    };
    Ok(RunOutcome {
        policy: policy.name().to_string(),
        requests,
        arrived,
        be_work_us: be_work,
        be_iterations: be_iters,
        duration_us: if end.is_finite() { end } else { engine.now() },
    })
}
