//! Which kind of output a directory holds, from the files the commands
//! that wrote it leave: a profile dataset (`tally profile`), an eval result
//! (`tally eval --out`), a `tally run` directory, scripts/tally-table.sh's
//! output or `tally real-contention`'s.

use std::path::Path;

use tally_datasets::{Format, RunDir, TableName};
use tally_predictor::eval_output::PREDICTIONS_CSV;
use tally_sched::real_sets::real_output;
use tally_sched::run_output::{REQUESTS_CSV, SUMMARY_CSV};

use crate::error::{PlotError, Result};

/// The file `tally side-by-side` writes in scripts/tally-table.sh's output.
pub const SIDE_BY_SIDE_CSV: &str = "side_by_side.csv";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirKind {
    Dataset,
    Eval,
    Run,
    /// scripts/tally-table.sh's output: `side_by_side.csv`.
    Table,
    /// `tally real-contention`'s output: `real_contention.csv`.
    RealContention,
}

impl DirKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            DirKind::Dataset => "profile dataset",
            DirKind::Eval => "eval result",
            DirKind::Run => "tally run",
            DirKind::Table => "tally-table",
            DirKind::RealContention => "real-contention",
        }
    }
}

/// The kind of `dir`, or `UnknownDir` naming it.
pub fn detect(dir: &Path) -> Result<DirKind> {
    if dir.join(SUMMARY_CSV).is_file() && dir.join(REQUESTS_CSV).is_file() {
        return Ok(DirKind::Run);
    }
    if dir.join(SIDE_BY_SIDE_CSV).is_file() {
        return Ok(DirKind::Table);
    }
    if dir.join(real_output::FILE).is_file() {
        return Ok(DirKind::RealContention);
    }
    if dir.join(PREDICTIONS_CSV).is_file() {
        return Ok(DirKind::Eval);
    }
    let run = RunDir::new(dir);
    let has_table = [Format::Csv, Format::Parquet]
        .into_iter()
        .any(|f| run.table(TableName::Ops, f).is_file());
    if run.is_complete() && has_table {
        return Ok(DirKind::Dataset);
    }
    Err(PlotError::UnknownDir(dir.to_path_buf()))
}
