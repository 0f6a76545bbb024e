//! One workload under several policies on the simulated GPU: the arrivals
//! are drawn once, the HP job alone on them is the reference, then each
//! policy runs on the same arrivals, each on a fresh engine.

use crate::engine::sim::timeline::Timeline;
use crate::engine::sim::SimEngine;
use crate::error::RunError;
use crate::hp_alone::{hp_alone_outcome, hp_request_alone_us};
use crate::metrics::{summarize, Summary};
use crate::outcome::RunOutcome;
use crate::policy::registry::by_name;
use crate::policy::slowdown::SlowdownModel;
use crate::policy::{Policy, PolicyOptions};
use crate::runner::{run_on, RunConfig};
use crate::workload::{arrival_times, Workload};

/// A policy's run and its summary.
#[derive(Debug, Clone)]
pub struct PolicyResult {
    pub summary: Summary,
    pub outcome: RunOutcome,
    /// The SM occupancy by job, where `RunConfig::timeline_us` asked.
    pub timeline: Option<Timeline>,
}

/// Everything a comparison produced.
#[derive(Debug, Clone)]
pub struct PolicyComparison {
    pub alone: RunOutcome,
    pub hp_request_alone_us: f64,
    pub results: Vec<PolicyResult>,
}

/// Run `workload` under each of `policies`; `slowdown` builds the
/// tally-predict slowdown model when that policy is asked for.
pub fn run_policies(
    workload: &Workload,
    cfg: &RunConfig,
    policies: &[String],
    options: &PolicyOptions,
    mut slowdown: impl FnMut() -> Result<Option<Box<dyn SlowdownModel>>, RunError>,
) -> Result<PolicyComparison, RunError> {
    let request_alone = hp_request_alone_us(&mut SimEngine::new(&cfg.gpu), workload)?;
    let arrivals = arrival_times(&cfg.arrivals, cfg.seed, cfg.duration_us, request_alone)?;
    let alone = hp_alone_outcome(request_alone, arrivals.as_deref(), cfg.duration_us);
    let be_names: Vec<String> = workload.be.iter().map(|b| b.name.clone()).collect();
    let mut results = Vec::new();
    for name in policies {
        let model = if name == "tally-predict" {
            slowdown()?
        } else {
            None
        };
        let mut policy = by_name(name, options, model)?;
        let mut engine = SimEngine::new(&cfg.gpu);
        if let Some(until) = cfg.timeline_us {
            engine.record_timeline(until);
        }
        let outcome = run_on(
            &mut engine,
            workload,
            policy.as_mut(),
            cfg,
            arrivals.as_deref(),
        )?;
        let summary = summarize(&workload.hp.name, &be_names, &outcome, &alone);
        results.push(PolicyResult {
            summary,
            outcome,
            timeline: engine.take_timeline(),
        });
    }
    Ok(PolicyComparison {
        alone,
        hp_request_alone_us: request_alone,
        results,
    })
}

/// The HP arrival times of `cfg` for `workload` (`None`: a closed loop);
/// Poisson arrivals are scaled by one request's standalone latency.
pub fn arrivals_for(cfg: &RunConfig, workload: &Workload) -> Result<Option<Vec<f64>>, RunError> {
    let request_alone = match cfg.arrivals.load() {
        Some(_) => hp_request_alone_us(&mut SimEngine::new(&cfg.gpu), workload)?,
        None => 0.0,
    };
    arrival_times(&cfg.arrivals, cfg.seed, cfg.duration_us, request_alone)
}

/// Run `workload` under `policy` on a fresh simulated GPU.
pub fn run(
    workload: &Workload,
    policy: &mut dyn Policy,
    cfg: &RunConfig,
) -> Result<RunOutcome, RunError> {
    let arrivals = arrivals_for(cfg, workload)?;
    run_on(
        &mut SimEngine::new(&cfg.gpu),
        workload,
        policy,
        cfg,
        arrivals.as_deref(),
    )
}
