//! The error type of the device layer.

use std::path::PathBuf;

/// What every CUDA entry point answers on a machine without an NVIDIA
/// driver, before any driver call.
pub const NO_DRIVER: &str = "no NVIDIA driver found: use --backend sim (the simulated GPU)";

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

    #[error("{what} {problem}")]
    Setting { what: &'static str, problem: String },

    #[error("invalid partition: {0}")]
    Partition(String),

    #[error("unknown backend `{0}`: valid backends are sim, cuda")]
    UnknownBackend(String),

    #[error("kernel library: {0}")]
    Library(String),

    #[error("{0}")]
    Device(String),

    #[error("{}", NO_DRIVER)]
    NoDriver,

    #[error("CUDA driver call {call} failed: {code}")]
    Driver { call: &'static str, code: String },

    #[error("the kernels are built with the CUDA {toolkit} compiler tools, whose cubins need a CUDA {} driver (R580 or newer); this driver supports CUDA {driver}: update the driver (tally does not build for older drivers)", toolkit.trim_end_matches(".x"))]
    ToolkitNewerThanDriver { toolkit: String, driver: String },

    #[error("{what} needs an NVIDIA driver for CUDA {needed} or newer; this driver supports CUDA {found}")]
    DriverTooOld {
        what: &'static str,
        needed: String,
        found: String,
    },
}

/// Result alias of the device layer.
pub type Result<T> = std::result::Result<T, GpuError>;
