//! Errors of the predictor crate: bad or missing inputs, mismatched model
//! files, and failures of the learners.

use std::path::PathBuf;

/// A predictor failure; every message names the input at fault.
#[derive(Debug, thiserror::Error)]
pub enum PredictorError {
    #[error(transparent)]
    Dataset(#[from] tally_datasets::DatasetError),
    #[error("{what} {advice}")]
    MissingCounters {
        what: String,
        /// The counters' Nsight Compute names.
        missing: Vec<String>,
        /// The counters, the ncu flags that collect them and the
        /// subset-predictor route, for the message.
        advice: String,
    },
    #[error("{what}: `{field}` is {value}, expected a finite non-negative number")]
    BadValue {
        what: String,
        field: String,
        value: f64,
    },
    #[error("{what}: op `{op}` on {sm_count} SMs has no standalone profile")]
    MissingProfile {
        what: String,
        op: String,
        sm_count: u32,
    },
    #[error("{0}")]
    Input(String),
    /// A file of a `tally eval --out` directory that cannot be read.
    #[error("`{}`: {message}", .path.display())]
    EvalFile {
        path: std::path::PathBuf,
        message: String,
    },
    #[error("datasets were profiled on different GPUs: `{first}` ({first_gpu}) and `{other}` ({other_gpu})")]
    MixedGpus {
        first: String,
        first_gpu: String,
        other: String,
        other_gpu: String,
    },
    #[error("`{path}`: {message}")]
    PredictorFile { path: PathBuf, message: String },
    #[error("training the {method} model: {message}")]
    Training { method: String, message: String },
    #[error("writing `{path}`: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, PredictorError>;
