//! Workloads: a job is the kernel sequence of one HP inference request or
//! one BE training iteration, in launch order; HP requests arrive as a
//! closed loop, a Poisson process at a load factor, or at given times.

use tally_gpu::KernelSpec;

use crate::error::RunError;

/// One job's unit of work.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    pub name: String,
    pub kernels: Vec<KernelSpec>,
    /// Share of its time the job keeps the GPU busy alone (0-1]. A BE
    /// training job below 1 is bound elsewhere part of each iteration
    /// (input pipeline, Python, host-side optimizer): after each iteration
    /// it spends `(1 / gpu_util - 1)` times the iteration's standalone GPU
    /// time with no GPU work, and its throughput is normalised to what it
    /// reaches alone. Measured as nvidia-smi's GPU utilisation of the job
    /// alone (the Tally artifact's `single-job-perf.csv` has it for its
    /// BE jobs). Not used for the HP job, whose idle time is its arrivals.
    pub gpu_util: f64,
    /// Host time to issue one kernel, microseconds (0: the host keeps ahead
    /// of the GPU). A framework that launches each operator from the CPU
    /// (ONNX Runtime, PyTorch eager) issues a request's or an iteration's
    /// kernels one after another at its per-operator cost; kernel `i` of a
    /// request (or iteration) cannot start before `(i + 1)` of these have
    /// passed since it began. Where the GPU runs a kernel in less, the job is
    /// launch-bound: the GPU idles between its kernels, and a co-runner's
    /// delay shorter than that slack costs it nothing.
    pub launch_interval_us: f64,
}

impl JobSpec {
    /// A job whose host keeps ahead of the GPU and that keeps the GPU busy
    /// alone (`gpu_util` 1, no launch interval).
    pub fn gpu_bound(name: impl Into<String>, kernels: Vec<KernelSpec>) -> JobSpec {
        JobSpec {
            name: name.into(),
            kernels,
            gpu_util: 1.0,
            launch_interval_us: 0.0,
        }
    }

    /// Whether `us` is a launch interval a job may have: finite and >= 0.
    pub fn valid_launch_interval(us: f64) -> bool {
        us.is_finite() && us >= 0.0
    }

    /// Whether `u` is a GPU utilisation alone a job may have: in (0, 1].
    pub fn valid_gpu_util(u: f64) -> bool {
        u > 0.0 && u <= 1.0
    }
}

/// The HP job and the BE jobs sharing the GPU with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub hp: JobSpec,
    pub be: Vec<JobSpec>,
}

/// The most BE jobs beside the HP job: the engine co-runs one kernel per
/// job, and the contention model takes at most 8 at once.
pub const MAX_BE_JOBS: usize = 7;

impl Workload {
    /// The HP job and at most [`MAX_BE_JOBS`] BE jobs.
    pub fn new(hp: JobSpec, be: Vec<JobSpec>) -> Result<Workload, RunError> {
        if be.len() > MAX_BE_JOBS {
            return Err(RunError::Input {
                what: "BE jobs".into(),
                reason: format!(
                    "at most {MAX_BE_JOBS} (the engine co-runs one kernel per job, 8 at most), got {}",
                    be.len()
                ),
            });
        }
        Ok(Workload { hp, be })
    }
}

/// How HP requests arrive.
#[derive(Debug, Clone, PartialEq)]
pub enum Arrivals {
    /// A single stream: the next request as soon as the last completes.
    ClosedLoop,
    /// Poisson at `load` times the HP job's standalone capacity.
    Poisson { load: f64 },
    /// Given arrival times, microseconds from the start.
    Times(Vec<f64>),
}

impl Arrivals {
    /// Poisson arrivals at `load` (> 0) times the HP job's capacity.
    pub fn poisson(load: f64) -> Result<Arrivals, RunError> {
        if !(load > 0.0 && load.is_finite()) {
            return Err(RunError::Input {
                what: "load".into(),
                reason: format!("must be positive, got {load}"),
            });
        }
        Ok(Arrivals::Poisson { load })
    }
}

/// Arrival times for a run: Poisson arrivals need the standalone request
/// latency (the capacity is one request per standalone latency). A load at
/// or above that capacity is refused: the queue would grow without bound,
/// so every latency would measure the run's length, not the policy.
pub fn arrival_times(
    arrivals: &Arrivals,
    seed: u64,
    duration_us: f64,
    request_alone_us: f64,
) -> Result<Option<Vec<f64>>, RunError> {
    match arrivals {
        Arrivals::ClosedLoop => Ok(None),
        Arrivals::Times(t) => Ok(Some(t.clone())),
        Arrivals::Poisson { load } => {
            if *load >= 1.0 {
                return Err(RunError::Input {
                    what: "load".into(),
                    reason: format!(
                        "{load} is at or above the HP job's capacity of {:.2} requests/s \
                         (one request alone takes {:.3} ms): the load is a fraction of \
                         that capacity and must be below 1",
                        1e6 / request_alone_us,
                        request_alone_us / 1e3
                    ),
                });
            }
            let mean_gap = request_alone_us / load.max(1e-9);
            let mut rng = tally_gpu::rng::SplitMix64::new(seed ^ 0x9e37_79b9_7f4a_7c15);
            let mut t = 0.0;
            let mut out = Vec::new();
            loop {
                t += -mean_gap * (1.0 - rng.next_f64()).ln();
                if t >= duration_us {
                    return Ok(Some(out));
                }
                out.push(t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_at_the_hp_capacity_is_refused_naming_it() {
        let err = arrival_times(&Arrivals::Poisson { load: 1.0 }, 0, 1e6, 2000.0).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("500.00 requests/s"), "{text}");
        assert!(text.contains("2.000 ms"), "{text}");
        let ok = arrival_times(&Arrivals::Poisson { load: 0.5 }, 0, 1e6, 2000.0)
            .unwrap()
            .unwrap();
        // About 250 arrivals in a second at 250 requests/s.
        assert!((200..300).contains(&ok.len()), "{}", ok.len());
    }
}
