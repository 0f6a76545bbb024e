//! The HP job alone: the reference every policy's latencies are compared
//! with. One request's standalone latency is measured on an engine (all
//! its kernels in order with the GPU to itself); a whole run alone is then
//! a single-server queue over the arrivals.

use crate::engine::Engine;
use crate::error::RunError;
use crate::outcome::{Request, RunOutcome};
use crate::policy::mps::Mps;
use crate::runner::{run_on, RunConfig};
use crate::workload::Workload;

/// Standalone latency of one HP request (all its kernels in order on the
/// whole GPU), microseconds.
/// `engine` must be fresh (nothing registered, clock at zero).
pub fn hp_request_alone_us(engine: &mut dyn Engine, workload: &Workload) -> Result<f64, RunError> {
    hp_request_service_us(engine, workload, 1)
}

/// The median service time of `requests` HP requests run back to back
/// alone on `engine` (fresh), microseconds: on an engine that measures (a
/// real GPU) the first request also pays the first launches' costs, and
/// the median of a few leaves it out.
pub fn hp_request_service_us(
    engine: &mut dyn Engine,
    workload: &Workload,
    requests: usize,
) -> Result<f64, RunError> {
    let alone = Workload {
        hp: workload.hp.clone(),
        be: Vec::new(),
    };
    let arrivals = vec![0.0; requests.max(1)];
    let cfg = RunConfig {
        gpu: engine.gpu().clone(),
        duration_us: f64::INFINITY,
        seed: 0,
        arrivals: crate::workload::Arrivals::Times(arrivals.clone()),
        timeline_us: None,
    };
    let out = run_on(engine, &alone, &mut Mps, &cfg, Some(&arrivals))?;
    let mut service: Vec<f64> = out.requests.iter().map(|r| r.end_us - r.start_us).collect();
    service.sort_by(f64::total_cmp);
    Ok(service.get(service.len() / 2).copied().unwrap_or(0.0))
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
    // Share of the request in service at the end that is done.
    let mut in_service = 0.0;
    let mut push = |arrival_us: f64, free_at: &mut f64| -> bool {
        let start_us = arrival_us.max(*free_at);
        let end_us = start_us + request_alone_us;
        if end_us > duration_us || request_alone_us <= 0.0 {
            if request_alone_us > 0.0 && start_us < duration_us {
                in_service = (duration_us - start_us) / request_alone_us;
            }
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
        requests_served: requests.len() as f64 + in_service,
        requests,
        arrived,
        be_work_us: Vec::new(),
        be_alone_work_us: Vec::new(),
        be_iterations: Vec::new(),
        duration_us,
    }
}
