//! `DatasetError`: every way reading or writing a run directory can fail, and
//! `Location`, the place in a table a value came from. Messages name the file,
//! the line (CSV) or row (Parquet) and the column, so a user can open the file
//! and look.

use std::fmt;
use std::path::PathBuf;

/// Where a row sits in the file it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// 1-based line of a CSV file; the header is line 1, so data starts at 2.
    Line(u64),
    /// 1-based data row of a Parquet file (or of an in-memory table being
    /// validated before it is written), which has no lines.
    Row(u64),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line(n) => write!(f, "line {n}"),
            Location::Row(n) => write!(f, "row {n}"),
        }
    }
}

/// Everything that can go wrong with a run directory.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("`{}`", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("`{}` already holds a run (run.json); pass --force to replace it", dir.display())]
    RunExists { dir: PathBuf },

    #[error("`{}`: another tally command is writing (or has just written) a run there; give each run its own --out", dir.display())]
    Busy { dir: PathBuf },

    #[error("`{}` not found: {why}", path.display())]
    MissingFile { path: PathBuf, why: String },

    #[error("`{}`: schema version {found}, this tally reads {expected}", path.display())]
    SchemaVersion {
        path: PathBuf,
        found: u64,
        expected: u32,
    },

    #[error("`{}`: invalid run description: {message}", path.display())]
    RunInfo { path: PathBuf, message: String },

    #[error("`{}`: missing column `{column}` (found: {found})", path.display())]
    MissingColumn {
        path: PathBuf,
        column: String,
        found: String,
    },

    #[error("`{}`: column `{column}` appears more than once", path.display())]
    DuplicateColumn { path: PathBuf, column: String },

    #[error("`{}` {location}: expected {expected} fields, found {found}", path.display())]
    FieldCount {
        path: PathBuf,
        location: Location,
        expected: usize,
        found: usize,
    },

    #[error("`{}` {location}, column `{column}`: {problem}", path.display())]
    Value {
        path: PathBuf,
        location: Location,
        column: String,
        problem: String,
    },

    #[error("`{}`: {message}", path.display())]
    Csv { path: PathBuf, message: String },

    #[error("`{}`: {message}", path.display())]
    Parquet { path: PathBuf, message: String },

    #[error("`{}`: {message}", path.display())]
    Inconsistent { path: PathBuf, message: String },

    #[error("`{}` and `{}`: {why}; give each dataset once", first.display(), second.display())]
    SameData {
        first: PathBuf,
        second: PathBuf,
        why: String,
    },

    #[error("output `{}` is the dataset `{}` or one of its files, which this command reads; write it elsewhere", out.display(), input.display())]
    OutputOverInput { out: PathBuf, input: PathBuf },

    #[error("unknown format `{0}` (expected `csv`, `parquet` or `both`)")]
    UnknownFormat(String),
}

pub type Result<T, E = DatasetError> = std::result::Result<T, E>;

impl DatasetError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> DatasetError {
        DatasetError::Io {
            path: path.into(),
            source,
        }
    }
}
