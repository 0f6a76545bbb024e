//! `ModelError`: everything that can go wrong building a model — unknown zoo
//! names, malformed or conflicting `@BATCH` suffixes, parameters that do not
//! apply, invalid operator shapes and malformed model files (with file,
//! line, column and field).

use std::path::PathBuf;

/// Error building, resolving or loading a model.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("unknown model `{name}`; valid models: {valid}")]
    UnknownModel { name: String, valid: String },

    #[error("model `{model}` has no {variant} variant (valid models: {valid})")]
    NoVariant {
        model: String,
        variant: String,
        valid: String,
    },

    #[error("model argument `{arg}`: {reason} (expected NAME[:VARIANT][@BATCH], e.g. `resnet50:train@128`)")]
    InvalidName { arg: String, reason: String },

    #[error("model argument `{arg}` asks for batch {suffix} but the batch override (--batch) is {batch}; give one or make them equal")]
    BatchConflict {
        arg: String,
        suffix: u32,
        batch: u32,
    },

    #[error("parameter `{param}` does not apply to model `{model}`: {reason}")]
    ParamNotApplicable {
        model: String,
        param: &'static str,
        reason: String,
    },

    #[error("parameter `{param}` = {value} is invalid for model `{model}`: {reason}")]
    InvalidParam {
        model: String,
        param: &'static str,
        value: u64,
        reason: String,
    },

    #[error("operator `{operator}`: field `{field}` {reason}")]
    InvalidOperator {
        operator: String,
        field: String,
        reason: String,
    },

    #[error("operator `{operator}`: lowered kernel `{kernel}` is invalid: {reason}")]
    InvalidKernel {
        operator: String,
        kernel: String,
        reason: String,
    },

    #[error("{}: cannot read model file", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("{}: unsupported model file (expected a .toml or .json file)", .path.display())]
    UnsupportedFile { path: PathBuf },

    #[error("{}", file_message(.path, *.line, *.column, .field.as_deref(), .message))]
    File {
        path: PathBuf,
        /// 1-based line, where the parser located the error.
        line: Option<usize>,
        /// 1-based column, where the parser located the error.
        column: Option<usize>,
        /// The field the error is about, where known.
        field: Option<String>,
        message: String,
    },
}

/// `path:line:column: field `f`: message`, leaving out what is unknown, so
/// editors and terminals can jump to the spot.
fn file_message(
    path: &std::path::Path,
    line: Option<usize>,
    column: Option<usize>,
    field: Option<&str>,
    message: &str,
) -> String {
    let mut s = path.display().to_string();
    if let Some(l) = line {
        s.push_str(&format!(":{l}"));
        if let Some(c) = column {
            s.push_str(&format!(":{c}"));
        }
    }
    s.push_str(": ");
    // Name the field unless the message already does.
    if let Some(f) = field.filter(|f| !message.contains(&format!("`{f}`"))) {
        s.push_str(&format!("field `{f}`: "));
    }
    s.push_str(message);
    s
}
