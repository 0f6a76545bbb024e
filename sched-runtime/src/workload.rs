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
    /// Share of its time the job keeps the GPU busy alone (0-1], measured
    /// as nvidia-smi's GPU utilisation of the job alone, back to back (the
    /// Tally artifact's `single-job-perf.csv` has it for its BE jobs and
    /// its HP servers in single-stream mode). Below 1, after each unit of
    /// GPU work the job spends `(1 / gpu_util - 1)` times that work's
    /// standalone GPU time with no GPU work: a BE training job after each
    /// iteration (input pipeline, Python, host-side optimizer; its
    /// throughput is normalised to what it reaches alone), an HP server
    /// after each request's kernels and before the request completes
    /// (output copies and Python post-processing, which no co-runner on
    /// the GPU slows).
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
    /// Exactly the requests `load` times the HP job's capacity makes over
    /// the run, `floor(duration x load / request alone)`, each at an
    /// independent uniform time: the Tally benchmark's server traces
    /// (tally-bench `bench_utils.trace.generate_azure_trace_with_load`)
    /// keep a random subset of that many invocations of one day and
    /// compress the day into the run, so their count is the load's to the
    /// request and, for a day of even intensity, their times are uniform.
    /// Over a short run a Poisson count strays from the load (14 Llama-2
    /// requests expected in 30 s, a standard deviation of 3.8).
    FixedCount { load: f64 },
    /// Given arrival times, microseconds from the start.
    Times(Vec<f64>),
}

impl Arrivals {
    /// Poisson arrivals at `load` (> 0) times the HP job's capacity.
    pub fn poisson(load: f64) -> Result<Arrivals, RunError> {
        Ok(Arrivals::Poisson {
            load: positive_load(load)?,
        })
    }

    /// The load's count of arrivals at uniform times
    /// ([`Arrivals::FixedCount`]).
    pub fn fixed_count(load: f64) -> Result<Arrivals, RunError> {
        Ok(Arrivals::FixedCount {
            load: positive_load(load)?,
        })
    }

    /// The load, for arrivals scaled by the HP job's capacity.
    pub fn load(&self) -> Option<f64> {
        match self {
            Arrivals::Poisson { load } | Arrivals::FixedCount { load } => Some(*load),
            Arrivals::ClosedLoop | Arrivals::Times(_) => None,
        }
    }
}

fn positive_load(load: f64) -> Result<f64, RunError> {
    if load > 0.0 && load.is_finite() {
        Ok(load)
    } else {
        Err(RunError::Input {
            what: "load".into(),
            reason: format!("must be positive, got {load}"),
        })
    }
}

/// Arrival times for a run: arrivals at a load need the standalone request
/// latency (the capacity is one request per standalone latency). A load at
/// or above that capacity is refused: the queue would grow without bound,
/// so every latency would measure the run's length, not the policy.
pub fn arrival_times(
    arrivals: &Arrivals,
    seed: u64,
    duration_us: f64,
    request_alone_us: f64,
) -> Result<Option<Vec<f64>>, RunError> {
    let load = match arrivals {
        Arrivals::ClosedLoop => return Ok(None),
        Arrivals::Times(t) => return Ok(Some(t.clone())),
        Arrivals::Poisson { load } | Arrivals::FixedCount { load } => *load,
    };
    if load >= 1.0 {
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
    let mut rng = tally_gpu::rng::SplitMix64::new(seed ^ 0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::new();
    if let Arrivals::FixedCount { .. } = arrivals {
        let count = (duration_us * load / request_alone_us).floor() as usize;
        out.extend((0..count).map(|_| rng.next_f64() * duration_us));
        out.sort_by(f64::total_cmp);
        return Ok(Some(out));
    }
    let mean_gap = request_alone_us / load;
    let mut t = 0.0;
    loop {
        t += -mean_gap * (1.0 - rng.next_f64()).ln();
        if t >= duration_us {
            return Ok(Some(out));
        }
        out.push(t);
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
        let fixed = arrival_times(&Arrivals::FixedCount { load: 1.0 }, 0, 1e6, 2000.0);
        assert!(fixed.unwrap_err().to_string().contains("500.00 requests/s"));
    }

    #[test]
    fn a_fixed_count_holds_the_loads_requests_at_uniform_times() {
        for seed in 0..20 {
            let t = arrival_times(&Arrivals::FixedCount { load: 0.5 }, seed, 30e6, 1.06e6)
                .unwrap()
                .unwrap();
            // floor(30 s x 0.5 / 1.06 s) = 14, whatever the seed.
            assert_eq!(t.len(), 14);
            assert!(t.windows(2).all(|w| w[0] <= w[1]));
            assert!(t.iter().all(|&x| (0.0..30e6).contains(&x)));
        }
        // Uniform: over many requests, each tenth of the run holds a tenth.
        let t = arrival_times(&Arrivals::FixedCount { load: 0.5 }, 7, 1e9, 1000.0)
            .unwrap()
            .unwrap();
        assert_eq!(t.len(), 500_000);
        for k in 0..10 {
            let (lo, hi) = (k as f64 * 1e8, (k + 1) as f64 * 1e8);
            let n = t.iter().filter(|&&x| x >= lo && x < hi).count();
            assert!((n as f64 / 50_000.0 - 1.0).abs() < 0.02, "tenth {k}: {n}");
        }
    }

    #[test]
    fn only_a_positive_finite_load_is_accepted() {
        for bad in [0.0, -0.5, f64::NAN, f64::INFINITY] {
            assert!(Arrivals::poisson(bad).is_err());
            assert!(Arrivals::fixed_count(bad).is_err());
        }
        assert_eq!(Arrivals::fixed_count(0.5).unwrap().load(), Some(0.5));
        assert_eq!(Arrivals::ClosedLoop.load(), None);
    }
}
