//! What can be wrong with an ncu CSV file; every variant names the file and,
//! where there is one, the line and field.

use std::path::PathBuf;

/// `; ncu said: ==ERROR== ...` when the file carries ncu's own error.
fn ncu_said(error: &Option<String>) -> String {
    error
        .as_ref()
        .map_or_else(String::new, |e| format!("; ncu said: {e}"))
}

/// An ncu CSV that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum NcuCsvError {
    // Not `source`: the reason is in the message, and a source would print
    // it a second time in the error chain.
    #[error("failed to read `{path}`: {reason}")]
    Read {
        path: PathBuf,
        reason: std::io::Error,
    },
    #[error(
        "`{path}`: no ncu CSV header found (expected a line starting with \"ID\", as \
         `ncu --csv` prints){}", ncu_said(.ncu_error)
    )]
    NoHeader {
        path: PathBuf,
        /// The first `==ERROR==` line of the file, if any.
        ncu_error: Option<String>,
    },
    #[error("`{path}` line {line}: the header lacks column `{column}`")]
    MissingColumn {
        path: PathBuf,
        line: usize,
        column: &'static str,
    },
    #[error("`{path}` line {line}: {problem}")]
    Syntax {
        path: PathBuf,
        line: usize,
        problem: String,
    },
    #[error("`{path}` line {line}, field `{field}`: expected {expected}, found `{found}`")]
    Field {
        path: PathBuf,
        line: usize,
        field: String,
        expected: String,
        found: String,
    },
    #[error("`{path}`: holds no kernel launches (no CSV rows after the header){}", ncu_said(.ncu_error))]
    Empty {
        path: PathBuf,
        /// The first `==ERROR==` line of the file, if any.
        ncu_error: Option<String>,
    },
}
