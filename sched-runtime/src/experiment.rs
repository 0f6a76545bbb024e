//! One workload under several policies: the arrivals are drawn once, the HP
//! job alone on them is the reference, then each policy runs on the same
//! arrivals.

use crate::engine::SimEngine;
use crate::metrics::{summarize, Summary};
use crate::policy::{by_name, PolicyOptions, SlowdownModel};
use crate::runner::{
    arrival_times, hp_alone_outcome, hp_request_alone_us, run_on, RunConfig, RunError, RunOutcome,
};
use crate::workload::Workload;

/// A policy's run and its summary.
#[derive(Debug, Clone)]
pub struct PolicyResult {
    pub summary: Summary,
    pub outcome: RunOutcome,
}

/// Everything a comparison produced.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub alone: RunOutcome,
    pub hp_request_alone_us: f64,
    pub results: Vec<PolicyResult>,
}

/// Run `workload` under each of `policies`; `slowdown` builds the
/// tally-predict slowdown model when that policy is asked for.
pub fn compare(
    workload: &Workload,
    cfg: &RunConfig,
    policies: &[String],
    options: &PolicyOptions,
    mut slowdown: impl FnMut() -> Result<Option<Box<dyn SlowdownModel>>, RunError>,
) -> Result<Comparison, RunError> {
    let request_alone = hp_request_alone_us(&cfg.gpu, workload)?;
    let arrivals = arrival_times(cfg, request_alone);
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
        let outcome = run_on(
            &mut SimEngine::new(&cfg.gpu),
            workload,
            policy.as_mut(),
            cfg,
            arrivals.clone(),
        )?;
        let summary = summarize(&workload.hp.name, &be_names, &outcome, &alone);
        results.push(PolicyResult { summary, outcome });
    }
    Ok(Comparison {
        alone,
        hp_request_alone_us: request_alone,
        results,
    })
}
