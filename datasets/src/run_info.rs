//! `RunInfo`: the provenance written to `run.json` — what produced the run,
//! on which GPU, with which settings — and its schema-version check.

use std::fs;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};
use tally_gpu::GpuSpec;

use crate::atomic::write_atomic;
use crate::error::{DatasetError, Result};

/// Version of the run directory layout (columns, file names, `run.json`
/// fields). Bump it whenever a reader of the old layout would misread the new.
pub const SCHEMA_VERSION: u32 = 1;

/// Row counts of the tables, so a reader can tell a table was cut short.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunCounts {
    pub ops: u64,
    pub standalone_rows: u64,
    pub pair_rows: u64,
}

/// Contents of `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    pub schema_version: u32,
    /// Always "tally"; lets other tools recognise the directory.
    pub tool: String,
    pub tool_version: String,
    pub command_line: Vec<String>,
    pub backend: String,
    pub gpu: GpuSpec,
    pub model: String,
    pub phase: String,
    /// Free-form model parameters (batch size, sequence length, ...).
    pub params: serde_json::Value,
    pub seed: u64,
    pub noise_sigma: f64,
    pub sm_counts: Vec<u32>,
    pub splits: Vec<(u32, u32)>,
    /// Encodings written: "csv", "parquet" or both.
    pub formats: Vec<String>,
    /// RFC 3339 UTC.
    pub started_at: String,
    /// RFC 3339 UTC.
    pub finished_at: String,
    pub counts: RunCounts,
}

impl RunInfo {
    pub const TOOL: &'static str = "tally";

    /// Read and check `run.json`. The schema version is checked before the
    /// other fields so a newer layout gets a version message rather than a
    /// confusing "unknown field".
    pub fn read(path: &Path) -> Result<RunInfo> {
        let text = match fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(DatasetError::MissingFile {
                    path: path.to_path_buf(),
                    why: "not a tally run directory, or the run did not finish \
                          (run.json is written last)"
                        .to_string(),
                });
            }
            Err(e) => return Err(DatasetError::io(path, e)),
        };
        let invalid = |message: String| DatasetError::RunInfo {
            path: path.to_path_buf(),
            message,
        };
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        let version = value
            .get("schema_version")
            .ok_or_else(|| invalid("no `schema_version` field".to_string()))?;
        let version = version.as_u64().ok_or_else(|| {
            invalid(format!(
                "`schema_version` must be a non-negative integer, found {version}"
            ))
        })?;
        if version != u64::from(SCHEMA_VERSION) {
            return Err(DatasetError::SchemaVersion {
                path: path.to_path_buf(),
                found: version,
                expected: SCHEMA_VERSION,
            });
        }
        serde_json::from_value(value).map_err(|e| invalid(e.to_string()))
    }

    /// Write `run.json` atomically, pretty-printed for people reading it.
    pub fn write(&self, path: &Path) -> Result<()> {
        write_atomic(path, |w| {
            serde_json::to_writer_pretty(&mut *w, self).map_err(|e| DatasetError::RunInfo {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
            w.write_all(b"\n").map_err(|e| DatasetError::io(path, e))
        })
    }
}
