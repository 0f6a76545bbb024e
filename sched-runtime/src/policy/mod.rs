//! Scheduling policies, one file each, selectable by name.

mod common;
mod mps;
mod mps_priority;
mod orion;
mod slowdown;
mod tally;
mod tally_predict;
mod tgs;
mod time_slicing;

pub use mps::Mps;
pub use mps_priority::MpsPriority;
pub use orion::Orion;
pub use slowdown::{OracleSlowdown, PredictorSlowdown, SlowdownModel};
pub use tally::Tally;
pub use tally_predict::TallyPredict;
pub use tgs::Tgs;
pub use time_slicing::TimeSlicing;

use crate::runner::{Policy, RunError};

/// Every policy name, in the order `--compare all` runs them.
pub const POLICY_NAMES: [&str; 7] = [
    "time-slicing",
    "mps",
    "mps-priority",
    "tgs",
    "orion",
    "tally",
    "tally-predict",
];

/// Options the policies read.
#[derive(Debug, Clone)]
pub struct PolicyOptions {
    /// Tally's turnaround-latency limit, microseconds.
    pub turnaround_us: f64,
    /// tally-predict: largest predicted HP slowdown accepted (0.02 = 2 %).
    pub tolerance: f64,
}

impl Default for PolicyOptions {
    fn default() -> Self {
        PolicyOptions {
            turnaround_us: crate::config::DEFAULT_TURNAROUND_US,
            tolerance: 0.02,
        }
    }
}

/// The policy called `name`; `slowdown` is needed by `tally-predict` only.
pub fn by_name(
    name: &str,
    options: &PolicyOptions,
    slowdown: Option<Box<dyn SlowdownModel>>,
) -> Result<Box<dyn Policy>, RunError> {
    let bad = |reason: String| RunError::Policy {
        policy: name.to_string(),
        reason,
    };
    Ok(match name {
        "time-slicing" => Box::new(TimeSlicing::default()),
        "mps" => Box::new(Mps),
        "mps-priority" => Box::new(MpsPriority),
        "tgs" => Box::new(Tgs::default()),
        "orion" => Box::new(Orion::default()),
        "tally" => Box::new(Tally::new(options.turnaround_us)),
        "tally-predict" => {
            let model = slowdown.ok_or_else(|| {
                bad(
                    "needs a slowdown predictor (--predictor MODEL.json, or --predictor oracle)"
                        .into(),
                )
            })?;
            Box::new(TallyPredict::new(
                options.turnaround_us,
                options.tolerance,
                model,
            ))
        }
        _ => {
            return Err(bad(format!(
                "unknown policy; expected one of {}",
                POLICY_NAMES.join(", ")
            )))
        }
    })
}
