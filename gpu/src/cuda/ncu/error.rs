//! What can be wrong with an ncu CSV file; every variant names the file and,
//! where there is one, the line and field.

use std::path::PathBuf;

/// An ncu CSV that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum NcuCsvError {
    #[error("failed to read `{path}`: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "`{path}`: no ncu CSV header found (expected a line starting with \"ID\", as \
         `ncu --csv --page raw` prints)"
    )]
    NoHeader { path: PathBuf },
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
    #[error("`{path}`: holds no kernel launches")]
    Empty { path: PathBuf },
}
