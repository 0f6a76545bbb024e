//! Reading an ncu CSV export: the file split into its CSV table
//! (`parse.rs`), then the table's rows turned into launches and counters
//! (`assemble.rs`).

use std::path::Path;

use super::assemble::assemble;
use super::error::NcuCsvError;
use super::parse::split_table;
use super::NcuReport;

/// Read and parse the ncu CSV at `path`.
pub fn read_ncu_csv(path: &Path) -> Result<NcuReport, NcuCsvError> {
    let text = std::fs::read_to_string(path).map_err(|reason| NcuCsvError::Read {
        path: path.to_path_buf(),
        reason,
    })?;
    parse_ncu_csv(&text, path)
}

/// Parse ncu CSV `text`; `path` names it in errors.
pub fn parse_ncu_csv(text: &str, path: &Path) -> Result<NcuReport, NcuCsvError> {
    let table = split_table(text, path)?;
    assemble(&table, path)
}
