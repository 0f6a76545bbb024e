//! Tasks back to back on their own SM partitions: each task's kernels go
//! to its partition in order, one at a time (one stream), and the next
//! iteration starts when the last kernel completes, for as long as it
//! takes every task to finish [`MIN_ITERATIONS`] iterations. This is how
//! such pairs are measured in practice (each side looping over its
//! requests or steps) and it lets the shorter task see every phase of the
//! longer one. Works on any [`Engine`].
//!
//! A side whose host issues each launch at a cost
//! (`Side::launch_interval_us`, `JobSpec::launch_interval_us`: a PyTorch
//! eager job) cannot have kernel `i` of an iteration start before `i + 1`
//! such intervals have passed since the iteration began, the same rule the
//! run loop applies (`policy::Job::launch_delay_us`); an iteration begins
//! when the previous one completes, as a job that synchronises on each
//! request's output does.

use tally_gpu::Partition;

use crate::engine::{Completion, Engine, EngineError, KernelId, LaunchRequest};

/// Iterations every task completes before the window closes. The longest
/// task sets the window; the shorter ones repeat within it. Three of the
/// longest lets its later iterations start at phases of the others set by
/// the run itself, not by the common start.
pub const MIN_ITERATIONS: usize = 3;

/// One task on its partition: its kernels (registered on the engine).
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub kernels: &'a [KernelId],
    pub sms: Partition,
    /// At most this many SMs of `sms` hold its blocks at once (an MPS
    /// share, `tally_gpu::Sharing::Mps`).
    pub max_sms: Option<u32>,
    /// Host time to issue one launch, microseconds (0: the host keeps
    /// ahead of the GPU).
    pub launch_interval_us: f64,
}

/// A task's iterations within the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Iterations {
    pub count: usize,
    /// Mean time of one iteration, microseconds.
    pub mean_us: f64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Progress {
    next: usize,
    started_at: f64,
    count: usize,
    total_us: f64,
}

/// Run `sides` together on `engine` (otherwise idle) until each has
/// completed `min_iterations` iterations; the mean iteration time of each.
pub fn compose(
    engine: &mut dyn Engine,
    sides: &[Side<'_>],
    min_iterations: usize,
) -> Result<Vec<Iterations>, EngineError> {
    let mut state = vec![Progress::default(); sides.len()];
    let start = engine.now();
    for (job, side) in sides.iter().enumerate() {
        if side.kernels.is_empty() {
            return Err(EngineError::BadLaunch {
                kernel: String::new(),
                reason: format!("task {job} has no kernels"),
            });
        }
        state[job].started_at = start;
        submit(engine, job, side, 0, start)?;
    }
    let mut done = Vec::new();
    let finished = |state: &[Progress]| state.iter().all(|p| p.count >= min_iterations);
    engine.settle(&mut done)?;
    while !finished(&state) {
        if done.is_empty() {
            let t = engine
                .next_event_time()
                .ok_or_else(|| EngineError::BadLaunch {
                    kernel: String::new(),
                    reason: "the engine stalled with launches pending".into(),
                })?;
            engine.advance_to(t, &mut done)?;
        }
        for c in std::mem::take(&mut done) {
            let Completion { job, time_us, .. } = c;
            let (side, p) = (&sides[job], &mut state[job]);
            p.next += 1;
            if p.next == side.kernels.len() {
                p.count += 1;
                p.total_us += time_us - p.started_at;
                p.started_at = time_us;
                p.next = 0;
            }
            let (next, origin) = (p.next, p.started_at);
            submit(engine, job, side, next, origin)?;
        }
        engine.settle(&mut done)?;
    }
    Ok(state
        .iter()
        .map(|p| Iterations {
            count: p.count,
            mean_us: p.total_us / p.count.max(1) as f64,
        })
        .collect())
}

fn submit(
    engine: &mut dyn Engine,
    job: usize,
    side: &Side<'_>,
    index: usize,
    iteration_start: f64,
) -> Result<(), EngineError> {
    let kernel = side.kernels[index];
    // The host issues launch `index` of the iteration after `index + 1`
    // intervals; a launch it issued earlier waits only for its predecessor.
    let issued_at = iteration_start + (index as f64 + 1.0) * side.launch_interval_us.max(0.0);
    let host_delay_us = (issued_at - engine.now()).max(0.0);
    engine.submit(LaunchRequest {
        job,
        kernel,
        first_block: 0,
        blocks: engine.kernel(kernel).blocks(),
        workers_per_sm: None,
        max_workers: None,
        preemptible: false,
        sms: side.sms,
        priority: 0,
        with_overhead: true,
        host_delay_us,
        max_sms: side.max_sms,
    })?;
    Ok(())
}
