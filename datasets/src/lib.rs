//! tally-datasets: the on-disk form of a profiling run — `ops`, `standalone`
//! and `pairs` tables as CSV and/or Parquet plus `run.json` provenance — with
//! validating readers and atomic writers.

mod atomic;
mod csv_io;
mod dataset;
mod error;
mod format;
mod ops;
mod pairs;
mod parquet_io;
mod run_dir;
mod run_info;
mod standalone;
mod table;
pub mod time;
mod validate;

pub use atomic::{temp_path, write_atomic};
pub use dataset::Dataset;
pub use error::{DatasetError, Location, Result};
pub use format::Format;
pub use ops::{OpRecord, OPS_COLUMNS};
pub use pairs::{PairRow, PAIR_COLUMNS};
pub use run_dir::{RunDir, TableName, WriteLock};
pub use run_info::{RunCounts, RunInfo, SCHEMA_VERSION};
pub use standalone::{StandaloneIndex, StandaloneRow, StandaloneTable, STANDALONE_FIXED_COLUMNS};
