//! The error of a run: bad input, a policy that cannot run, or the engine
//! refusing a kernel or a launch.

use crate::engine::EngineError;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("{what}: {reason}")]
    Input { what: String, reason: String },
    #[error("policy {policy}: {reason}")]
    Policy { policy: String, reason: String },
}
