//! The run loop: jobs (one HP request stream, BE training loops) on an
//! engine, driven by a policy at every scheduling point. The runner owns the
//! CUDA stream semantics: each job has at most one launch in flight and its
//! kernels run in order; a kernel cut short (a retreat, or slices not yet
//! issued) keeps its progress and resumes from it.

use tally_gpu::{GpuSpec, Partition};

use crate::engine::Engine;
use crate::error::RunError;
use crate::kernel_config::KernelConfig;
use crate::outcome::{Request, RunOutcome};
use crate::policy::{Ctx, Job, JobRole, Policy};
use crate::workload::{Arrivals, JobSpec, Workload};

/// Run parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    pub gpu: GpuSpec,
    pub duration_us: f64,
    pub seed: u64,
    pub arrivals: Arrivals,
    /// Record the SM occupancy by job over this first part of the run,
    /// microseconds (`tally run --timeline`).
    pub timeline_us: Option<f64>,
}

/// Run `workload` under `policy` on `engine` (fresh: nothing registered,
/// clock at zero) until `cfg.duration_us`, HP requests arriving at
/// `arrivals` (microseconds; `None`: a closed loop). The arrival times are
/// the caller's ([`crate::workload::arrival_times`]), so that every policy
/// of a comparison sees the same ones.
pub fn run_on(
    engine: &mut dyn Engine,
    workload: &Workload,
    policy: &mut dyn Policy,
    cfg: &RunConfig,
    arrivals: Option<&[f64]>,
) -> Result<RunOutcome, RunError> {
    let mut jobs = Vec::new();
    // Host time after each iteration, and GPU time of an iteration alone,
    // per job.
    let mut host_us = Vec::new();
    let mut iteration_us = Vec::new();
    for (role, spec) in std::iter::once((JobRole::Hp, &workload.hp))
        .chain(workload.be.iter().map(|b| (JobRole::Be, b)))
    {
        if spec.kernels.is_empty() {
            return Err(RunError::Input {
                what: spec.name.clone(),
                reason: "job has no kernels".into(),
            });
        }
        if !JobSpec::valid_launch_interval(spec.launch_interval_us) {
            return Err(RunError::Input {
                what: spec.name.clone(),
                reason: format!(
                    "launch interval {} us must be finite and >= 0",
                    spec.launch_interval_us
                ),
            });
        }
        let mut kernels = Vec::new();
        let mut alone = Vec::new();
        for k in &spec.kernels {
            let id = engine.add_kernel(k)?;
            kernels.push(id);
            alone.push(engine.alone_us(id, KernelConfig::Original, Partition::whole(&cfg.gpu))?);
        }
        let gpu_us: f64 = alone.iter().sum();
        jobs.push(Job {
            role,
            name: spec.name.clone(),
            kernels,
            alone_us: alone,
            cursor: 0,
            progress: 0,
            in_flight: None,
            active: false,
            host_until: None,
            launch_interval_us: spec.launch_interval_us,
            issue_origin: 0.0,
        });
        // Both roles: the host time after each unit of GPU work (a BE
        // iteration, an HP request), from the job's GPU utilisation alone.
        host_us.push(host_us_per_iteration(spec)? * gpu_us);
        iteration_us.push(gpu_us);
    }
    policy.prepare(engine, &jobs)?;

    let closed_loop = arrivals.is_none();
    let arrivals = arrivals.unwrap_or_default();
    let mut next_arrival = 0usize;
    let mut queue: std::collections::VecDeque<f64> = Default::default();
    let mut requests = Vec::new();
    let mut current_start = (0.0, 0.0);
    let n_be = jobs.len() - 1;
    let mut be_work = vec![0.0; n_be];
    // Standalone work of one HP request, and of the one in service done.
    let hp_request_us: f64 = jobs[0].alone_us.iter().sum();
    let mut hp_in_service_us = 0.0;
    let mut be_iters = vec![0u64; n_be];
    let mut hp_idle_since = Some(0.0);
    let mut completions = Vec::new();
    let end = cfg.duration_us;
    if closed_loop {
        queue.push_back(0.0);
    }
    loop {
        // BE jobs whose host time is over have GPU work again; an HP request
        // whose host time is over is complete.
        for (j, job) in jobs.iter_mut().enumerate() {
            if let Some(t) = job.host_until.filter(|&t| t <= engine.now()) {
                job.host_until = None;
                if j == 0 {
                    job.active = false;
                    let request = Request {
                        arrival_us: current_start.0,
                        start_us: current_start.1,
                        end_us: t,
                    };
                    policy.request_completed(&request);
                    requests.push(request);
                    hp_in_service_us = 0.0;
                    if closed_loop {
                        queue.push_back(t);
                    }
                }
            }
        }
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
                jobs[0].issue_origin = engine.now();
                hp_idle_since = None;
            }
        }
        let mut ctx = Ctx {
            engine,
            jobs: &mut jobs,
            hp_idle_since,
            forward_us: policy.forward_us(),
        };
        policy.schedule(&mut ctx)?;
        engine.settle(&mut completions)?;
        if completions.is_empty() {
            let mut t = engine.next_event_time().unwrap_or(f64::INFINITY);
            if next_arrival < arrivals.len() {
                t = t.min(arrivals[next_arrival]);
            }
            for until in jobs.iter().filter_map(|j| j.host_until) {
                t = t.min(until);
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
            let work = job.alone_us[job.cursor] * c.blocks_done as f64 / kernel_blocks as f64;
            if j > 0 {
                be_work[j - 1] += work;
            } else {
                hp_in_service_us += work;
            }
            if job.progress >= kernel_blocks {
                if j == 0 {
                    policy.hp_kernel_completed(job.alone_us[job.cursor]);
                }
                job.progress = 0;
                job.cursor += 1;
                if job.cursor == job.kernels.len() {
                    job.cursor = 0;
                    // The GPU work is done; the job's host time follows
                    // (zero for a GPU-bound job: it ends on the loop's next
                    // turn, at this same time).
                    job.host_until = Some(c.time_us + host_us[j]);
                    if j == 0 {
                        // The GPU has no HP work from here: the request's
                        // host tail (output copies, post-processing) is idle
                        // time to a scheduler that sees only kernels.
                        hp_idle_since = Some(c.time_us);
                    } else {
                        be_iters[j - 1] += 1;
                        // Its host issues the next iteration once back.
                        job.issue_origin = c.time_us + host_us[j];
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
    let window = if end.is_finite() { end } else { engine.now() };
    let in_service = if hp_request_us > 0.0 {
        (hp_in_service_us / hp_request_us).min(1.0)
    } else {
        0.0
    };
    Ok(RunOutcome {
        policy: policy.name().to_string(),
        requests_served: requests.len() as f64 + in_service,
        requests,
        arrived,
        be_work_us: be_work,
        be_alone_work_us: (1..jobs.len())
            .map(|j| work_alone_us(iteration_us[j], host_us[j], window))
            .collect(),
        be_iterations: be_iters,
        duration_us: window,
    })
}

/// Work a job does alone in `window` microseconds from the start of an
/// iteration: iterations of `iteration_us` on the GPU, each followed by
/// `host_us` off it. A window shorter than a few iterations holds more or
/// less than the long-run share of GPU phases; normalising to this, as the
/// HP job is to itself alone on the same arrivals, keeps a BE job's
/// throughput at 1 when nothing slows it, whatever the window.
pub(crate) fn work_alone_us(iteration_us: f64, host_us: f64, window: f64) -> f64 {
    let cycle = iteration_us + host_us;
    if host_us <= 0.0 || cycle <= 0.0 {
        return window;
    }
    let whole = (window / cycle).floor();
    whole * iteration_us + (window - whole * cycle).min(iteration_us)
}

/// Host time after each iteration per microsecond of the iteration's GPU
/// time, from the job's GPU utilisation alone (`JobSpec::gpu_util`).
fn host_us_per_iteration(spec: &JobSpec) -> Result<f64, RunError> {
    if !JobSpec::valid_gpu_util(spec.gpu_util) {
        return Err(RunError::Input {
            what: spec.name.clone(),
            reason: format!("GPU utilisation alone {} must be in (0, 1]", spec.gpu_util),
        });
    }
    Ok(1.0 / spec.gpu_util - 1.0)
}

#[cfg(test)]
mod tests {
    use super::work_alone_us;

    #[test]
    fn a_gpu_bound_job_works_the_whole_window_alone() {
        assert_eq!(work_alone_us(3.0, 0.0, 10.0), 10.0);
    }

    #[test]
    fn a_half_gpu_job_works_the_gpu_phases_that_fit_in_the_window() {
        // 3 on the GPU, 3 on the host: [0,3) [6,9) and [12,13) in 13.
        assert_eq!(work_alone_us(3.0, 3.0, 13.0), 7.0);
        // A window inside the first GPU phase is all work.
        assert_eq!(work_alone_us(3.0, 3.0, 2.0), 2.0);
        // Over many cycles the share tends to the utilisation.
        let long = work_alone_us(3.0, 3.0, 6e6 + 1.0);
        assert!((long / 6e6 - 0.5).abs() < 1e-6);
    }
}
