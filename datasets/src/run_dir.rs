//! `RunDir`: the file names inside one run directory, so no other module
//! spells them.

use std::path::{Path, PathBuf};

use crate::error::DatasetError;
use crate::format::Format;

/// The three tables of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableName {
    Ops,
    Standalone,
    Pairs,
}

impl TableName {
    pub const ALL: [TableName; 3] = [TableName::Ops, TableName::Standalone, TableName::Pairs];

    pub fn stem(&self) -> &'static str {
        match self {
            TableName::Ops => "ops",
            TableName::Standalone => "standalone",
            TableName::Pairs => "pairs",
        }
    }
}

/// A run directory and the paths of its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    pub const RUN_JSON: &'static str = "run.json";

    pub fn new(root: impl Into<PathBuf>) -> RunDir {
        RunDir { root: root.into() }
    }

    /// The run directory `root` for a new run: refused if it already
    /// holds a complete one (its `run.json`), unless `force`. The one place
    /// every command that writes a run directory asks.
    pub fn claim(root: impl Into<PathBuf>, force: bool) -> Result<RunDir, DatasetError> {
        let dir = RunDir::new(root);
        if dir.run_json().exists() && !force {
            return Err(DatasetError::RunExists { dir: dir.root });
        }
        Ok(dir)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `run.json`, written last: its presence marks a complete run.
    pub fn run_json(&self) -> PathBuf {
        self.root.join(Self::RUN_JSON)
    }

    pub fn csv(&self, table: TableName) -> PathBuf {
        self.root.join(format!("{}.csv", table.stem()))
    }

    pub fn parquet(&self, table: TableName) -> PathBuf {
        self.root.join(format!("{}.parquet", table.stem()))
    }

    /// The path of `table` in a single encoding (`Both` means CSV, the one
    /// readers prefer).
    pub fn table(&self, table: TableName, format: Format) -> PathBuf {
        match format {
            Format::Parquet => self.parquet(table),
            Format::Csv | Format::Both => self.csv(table),
        }
    }

    pub fn ops_csv(&self) -> PathBuf {
        self.csv(TableName::Ops)
    }

    pub fn standalone_csv(&self) -> PathBuf {
        self.csv(TableName::Standalone)
    }

    pub fn pairs_csv(&self) -> PathBuf {
        self.csv(TableName::Pairs)
    }

    pub fn ops_parquet(&self) -> PathBuf {
        self.parquet(TableName::Ops)
    }

    pub fn standalone_parquet(&self) -> PathBuf {
        self.parquet(TableName::Standalone)
    }

    pub fn pairs_parquet(&self) -> PathBuf {
        self.parquet(TableName::Pairs)
    }

    /// Whether the run finished writing (its `run.json` exists).
    pub fn is_complete(&self) -> bool {
        self.run_json().is_file()
    }
}
