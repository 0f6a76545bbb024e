//! One workload under several policies: the arrivals are drawn once, the
//! HP job alone on them is the reference, then each policy runs on the same
//! arrivals, each on a fresh engine. The engines are the simulated GPU's,
//! or come from a caller's source ([`Engines::Measured`], a real GPU): a
//! measuring engine is not deterministic, so there the HP job alone is run
//! on one with the same arrivals, not computed from one request.

use crate::engine::sim::timeline::Timeline;
use crate::engine::sim::SimEngine;
use crate::engine::Engine;
use crate::error::RunError;
use crate::hp_alone::{hp_alone_outcome, hp_request_alone_us, hp_request_service_us};
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

/// Requests whose median service time scales `--load` arrivals on an
/// engine that measures.
pub const MEASURED_REQUESTS: usize = 5;

/// A fresh engine per call.
pub type EngineSource<'a> = dyn FnMut() -> Result<Box<dyn Engine>, RunError> + 'a;

/// Where a comparison's engines come from.
pub enum Engines<'a> {
    /// The simulated GPU of `RunConfig::gpu`: deterministic, so the HP job
    /// alone is one request's latency queued over the arrivals.
    Simulated,
    /// Engines that measure (a real GPU): the HP job alone runs on one, on
    /// the same arrivals; no timeline.
    Measured(&'a mut EngineSource<'a>),
}

impl std::fmt::Debug for Engines<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Engines::Simulated => "Simulated",
            Engines::Measured(_) => "Measured",
        })
    }
}

/// Run `workload` under each of `policies` on the simulated GPU;
/// `slowdown` builds the tally-predict slowdown model when that policy is
/// asked for.
pub fn run_policies(
    workload: &Workload,
    cfg: &RunConfig,
    policies: &[String],
    options: &PolicyOptions,
    slowdown: impl FnMut() -> Result<Option<Box<dyn SlowdownModel>>, RunError>,
) -> Result<PolicyComparison, RunError> {
    run_policies_on(
        Engines::Simulated,
        workload,
        cfg,
        policies,
        options,
        slowdown,
    )
}

/// Run `workload` under each of `policies` on `engines`.
pub fn run_policies_on(
    mut engines: Engines<'_>,
    workload: &Workload,
    cfg: &RunConfig,
    policies: &[String],
    options: &PolicyOptions,
    mut slowdown: impl FnMut() -> Result<Option<Box<dyn SlowdownModel>>, RunError>,
) -> Result<PolicyComparison, RunError> {
    let hp_only = Workload {
        hp: workload.hp.clone(),
        be: Vec::new(),
    };
    let (request_alone, arrivals, alone) = match &mut engines {
        Engines::Simulated => {
            let request_alone = hp_request_alone_us(&mut SimEngine::new(&cfg.gpu), workload)?;
            let arrivals = arrival_times(&cfg.arrivals, cfg.seed, cfg.duration_us, request_alone)?;
            let alone = hp_alone_outcome(request_alone, arrivals.as_deref(), cfg.duration_us);
            (request_alone, arrivals, alone)
        }
        Engines::Measured(source) => {
            let request_alone =
                hp_request_service_us(source()?.as_mut(), workload, MEASURED_REQUESTS)?;
            let arrivals = arrival_times(&cfg.arrivals, cfg.seed, cfg.duration_us, request_alone)?;
            let mut alone = run_on(
                source()?.as_mut(),
                &hp_only,
                &mut crate::policy::mps::Mps,
                cfg,
                arrivals.as_deref(),
            )?;
            alone.policy = "alone".to_string();
            (request_alone, arrivals, alone)
        }
    };
    let be_names: Vec<String> = workload.be.iter().map(|b| b.name.clone()).collect();
    let mut results = Vec::new();
    for name in policies {
        let model = if name == "tally-predict" {
            slowdown()?
        } else {
            None
        };
        let mut policy = by_name(name, options, model)?;
        let (outcome, timeline) = match &mut engines {
            Engines::Simulated => {
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
                (outcome, engine.take_timeline())
            }
            Engines::Measured(source) => {
                let outcome = run_on(
                    source()?.as_mut(),
                    workload,
                    policy.as_mut(),
                    cfg,
                    arrivals.as_deref(),
                )?;
                (outcome, None)
            }
        };
        let summary = summarize(&workload.hp.name, &be_names, &outcome, &alone);
        results.push(PolicyResult {
            summary,
            outcome,
            timeline,
        });
    }
    Ok(PolicyComparison {
        alone,
        hp_request_alone_us: request_alone,
        results,
    })
}

impl PolicyComparison {
    /// Refuse a comparison in which no HP request of `hp` completed, alone
    /// or under some policy, within `duration_us`: it has no latency to
    /// report, and its zeros would read as a perfect result. (A
    /// measurement of BE jobs alone may run with no HP request on purpose;
    /// a `tally run` may not.)
    pub fn require_hp_served(&self, hp: &str, duration_us: f64) -> Result<(), RunError> {
        let who = if self.alone.requests.is_empty() {
            Some("with the HP job alone".to_string())
        } else {
            self.results
                .iter()
                .find(|r| r.outcome.requests.is_empty())
                .map(|r| format!("under {}", r.outcome.policy))
        };
        match who {
            None => Ok(()),
            Some(who) => Err(RunError::Input {
                what: format!("--duration {:.3} ms", duration_us / 1e3),
                reason: format!(
                    "no HP request of `{hp}` completed {who} (one request alone takes {:.3} ms); \
                     lengthen --duration, or lower the load or the HP launch cost",
                    self.hp_request_alone_us / 1e3
                ),
            }),
        }
    }
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
