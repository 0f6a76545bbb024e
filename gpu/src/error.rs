//! The error type of the device layer.

use std::path::PathBuf;

/// Everything that can go wrong in tally-gpu.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("unknown GPU `{name}`: valid presets are {valid}, or a path to a GPU spec .toml file")]
    UnknownGpu { name: String, valid: String },

    #[error("failed to read GPU spec `{path}`")]
    ReadSpec {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("invalid GPU spec `{path}`: {message}")]
    ParseSpec { path: PathBuf, message: String },

    #[error("invalid GPU spec `{name}`: field `{field}` {problem}")]
    InvalidSpec {
        name: String,
        field: &'static str,
        problem: String,
    },

    #[error("kernel `{kernel}` cannot launch on {gpu}: {reason}")]
    Unlaunchable {
        kernel: String,
        gpu: String,
        reason: String,
    },

    #[error("invalid partition: {0}")]
    Partition(String),

    #[error("unknown backend `{0}`: valid backends are sim, cuda")]
    UnknownBackend(String),

    #[error("kernel library: {0}")]
    Library(String),

    #[error("the CUDA backend is not built yet: use --backend sim (the simulated GPU)")]
    CudaNotBuilt,
}

/// Result alias of the device layer.
pub type Result<T> = std::result::Result<T, GpuError>;
