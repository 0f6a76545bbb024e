//! Every policy by name: what `--policy` and `--compare` accept.

use super::mps::Mps;
use super::mps_priority::MpsPriority;
use super::orion::Orion;
use super::slowdown::SlowdownModel;
use super::tally::Tally;
use super::tally_predict::TallyPredict;
use super::tgs::Tgs;
use super::time_slicing::TimeSlicing;
use super::{Policy, PolicyOptions};
use crate::error::RunError;

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

/// The policies a run is asked for: `all`, a comma-separated list, or one
/// name; each must be in [`POLICY_NAMES`].
pub fn parse_policies(list: &str) -> Result<Vec<String>, RunError> {
    let names: Vec<String> = if list == "all" {
        POLICY_NAMES.iter().map(|s| s.to_string()).collect()
    } else {
        list.split(',').map(|s| s.trim().to_string()).collect()
    };
    for n in &names {
        if !POLICY_NAMES.contains(&n.as_str()) {
            return Err(RunError::Input {
                what: format!("unknown policy `{n}`"),
                reason: format!("expected one of {}", POLICY_NAMES.join(", ")),
            });
        }
    }
    Ok(names)
}
