//! `PtxError`: every way parsing or transforming a PTX module can fail, each
//! carrying the source position (1-based line and column) it refers to.

use thiserror::Error;

/// A parse or transform failure. Positions are 1-based; `line` 0 means the
/// error has no single source position (e.g. a name clash in generated code).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PtxError {
    /// The text is not PTX the parser understands.
    #[error("{line}:{column}: expected {expected}, found {found}")]
    Syntax {
        line: u32,
        column: u32,
        expected: String,
        found: String,
    },
    /// A construct the transforms cannot make sliceable or preemptible.
    #[error("entry `{entry}`: unsupported construct {construct} at {line}:{column}")]
    Unsupported {
        entry: String,
        construct: String,
        line: u32,
        column: u32,
    },
    /// The transform could not be applied for a reason other than an
    /// unsupported construct (e.g. the generated names would clash).
    #[error("entry `{entry}`: {message}")]
    Transform { entry: String, message: String },
}

impl PtxError {
    /// The (line, column) the error points at, if it has one.
    pub fn position(&self) -> Option<(u32, u32)> {
        match self {
            PtxError::Syntax { line, column, .. } | PtxError::Unsupported { line, column, .. } => {
                Some((*line, *column))
            }
            PtxError::Transform { .. } => None,
        }
    }

    pub(crate) fn syntax(
        line: u32,
        column: u32,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        PtxError::Syntax {
            line,
            column,
            expected: expected.into(),
            found: found.into(),
        }
    }
}
