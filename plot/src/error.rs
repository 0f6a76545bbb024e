//! The one error type of `tally-plot`: every variant names the file or
//! directory it is about.

use std::path::PathBuf;

use thiserror::Error;

pub type Result<T, E = PlotError> = std::result::Result<T, E>;

#[derive(Debug, Error)]
pub enum PlotError {
    /// The directory holds none of the outputs `tally plot` knows.
    #[error(
        "`{}` is not a profile dataset, an eval result (`tally eval --out`) or a `tally run` \
         directory: found none of run.json with an ops table, predictions.csv, summary.csv \
         with requests.csv",
        .0.display()
    )]
    UnknownDir(PathBuf),
    #[error(transparent)]
    Dataset(#[from] tally_datasets::DatasetError),
    #[error(transparent)]
    Predictor(#[from] tally_predictor::PredictorError),
    #[error(transparent)]
    Run(#[from] tally_sched::error::RunError),
    /// A file that was read but holds nothing to draw.
    #[error("`{}`: {msg}", .path.display())]
    Empty { path: PathBuf, msg: String },
    /// Drawing or writing a figure failed.
    #[error("drawing `{}`: {msg}", .path.display())]
    Draw { path: PathBuf, msg: String },
    #[error("creating `{}`: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}
