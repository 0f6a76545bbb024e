//! What can go wrong when an engine takes a kernel or a launch.

use tally_gpu::GpuError;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("launch of kernel `{kernel}`: {reason}")]
    BadLaunch { kernel: String, reason: String },
    #[error("contention model: {0}")]
    Contention(String),
    #[error("more than {max} launches running at once")]
    TooManyConcurrent { max: usize },
}
