//! Model files: versioned JSON holding the fitted methods, the feature
//! schema they were fitted on, the GPU the training data were measured on
//! and the provenance of those data. Loading checks the format, version and
//! schema before anything else; `check_gpu` refuses data from another GPU.

use std::fs;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};
use tally_datasets::{write_atomic, DatasetError};
use tally_gpu::GpuSpec;

use crate::counter_subset::CounterSubset;
use crate::error::{PredictorError, Result};
use crate::features::{FEATURE_NAMES, FEATURE_SCHEMA_VERSION, N_FEATURES};
use crate::methods::{FittedMethods, Method};

/// `format` field of every model file.
pub const MODEL_FORMAT: &str = "tally-predictor";
/// Version of the model file layout.
pub const MODEL_VERSION: u32 = 1;

/// The feature schema a model was fitted on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureSchema {
    pub version: u32,
    pub names: Vec<String>,
}

impl FeatureSchema {
    pub fn current() -> FeatureSchema {
        FeatureSchema {
            version: FEATURE_SCHEMA_VERSION,
            names: FEATURE_NAMES.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// Where one training dataset came from (its `run.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataProvenance {
    pub dir: String,
    pub model: String,
    pub backend: String,
    pub tool_version: String,
    pub seed: u64,
    pub noise_sigma: f64,
    pub finished_at: String,
    pub pair_rows: u64,
}

/// Held-out validation error of a learned method at training time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Validation {
    pub method: Method,
    pub mape_pct: f64,
    pub p90_ape_pct: f64,
}

/// A trained predictor on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictorFile {
    pub format: String,
    pub version: u32,
    pub tool_version: String,
    pub trained_at: String,
    pub feature_schema: FeatureSchema,
    pub gpu: GpuSpec,
    pub training_data: Vec<DataProvenance>,
    pub training_samples: usize,
    /// The learned method predictions use unless told otherwise (chosen by
    /// held-out validation error).
    pub default_method: Method,
    pub validation: Vec<Validation>,
    pub models: FittedMethods,
    /// The Nsight Compute counters the models read (`tally train
    /// --counters-from`); files from before subsets read every one.
    #[serde(default = "every_counter")]
    pub counters: Vec<String>,
}

fn every_counter() -> Vec<String> {
    CounterSubset::all()
        .counters()
        .iter()
        .map(|c| c.name().to_string())
        .collect()
}

impl PredictorFile {
    /// Write atomically as pretty JSON.
    pub fn save(&self, path: &Path) -> Result<()> {
        let io = |source: std::io::Error| DatasetError::Io {
            path: path.to_path_buf(),
            source,
        };
        write_atomic(path, |w| {
            serde_json::to_writer_pretty(&mut *w, self).map_err(|e| io(e.into()))?;
            w.write_all(b"\n").map_err(io)
        })?;
        Ok(())
    }

    /// Read and check a model file.
    pub fn load(path: &Path) -> Result<PredictorFile> {
        let bad = |message: String| PredictorError::PredictorFile {
            path: path.to_path_buf(),
            message,
        };
        let text = fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
        let format = value.get("format").and_then(|v| v.as_str());
        if format != Some(MODEL_FORMAT) {
            return Err(bad(format!(
                "not a tally predictor model file (`format` is {}, expected \"{MODEL_FORMAT}\")",
                format.map_or("missing".to_string(), |f| format!("\"{f}\""))
            )));
        }
        let version = value.get("version").and_then(|v| v.as_u64());
        if version != Some(u64::from(MODEL_VERSION)) {
            return Err(bad(format!(
                "model file version {}, this tally reads version {MODEL_VERSION}; retrain with `tally train`",
                version.map_or("missing".to_string(), |v| v.to_string())
            )));
        }
        let model: PredictorFile = serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
        model.check_schema().map_err(bad)?;
        if let Some(forest) = &model.models.gbm {
            forest
                .check(N_FEATURES)
                .map_err(|e| bad(format!("gbm trees: {e}")))?;
        }
        if let Some(linear) = &model.models.linear {
            if linear.weights.len() != N_FEATURES {
                return Err(bad(format!(
                    "linear model has {} weights, the schema {N_FEATURES}",
                    linear.weights.len()
                )));
            }
        }
        let subset = model.counter_subset();
        if let Some(unknown) = model
            .counters
            .iter()
            .find(|n| !subset.counters().iter().any(|c| c.name() == n.as_str()))
        {
            return Err(bad(format!(
                "`counters` lists `{unknown}`, which is not a counter the predictor reads"
            )));
        }
        if !model.models.has(model.default_method) {
            return Err(bad(format!(
                "default method `{}` is not in the file",
                model.default_method.as_str()
            )));
        }
        Ok(model)
    }

    fn check_schema(&self) -> std::result::Result<(), String> {
        let current = FeatureSchema::current();
        if self.feature_schema.version != current.version {
            return Err(format!(
                "feature schema version {} but this tally computes version {}; retrain with `tally train`",
                self.feature_schema.version, current.version
            ));
        }
        if self.feature_schema.names != current.names {
            let first = self
                .feature_schema
                .names
                .iter()
                .zip(&current.names)
                .position(|(a, b)| a != b)
                .unwrap_or(self.feature_schema.names.len().min(current.names.len()));
            return Err(format!(
                "feature schema differs from this tally's at feature {first} \
                 (file: {:?}, expected: {:?}); retrain with `tally train`",
                self.feature_schema.names.get(first),
                current.names.get(first)
            ));
        }
        Ok(())
    }

    /// The counters the models read.
    pub fn counter_subset(&self) -> CounterSubset {
        CounterSubset::from_names(&self.counters)
    }

    /// Refuse profiles measured on another GPU than the training data.
    pub fn check_gpu(&self, gpu: &GpuSpec, what: &str) -> Result<()> {
        if *gpu != self.gpu {
            return Err(PredictorError::Input(format!(
                "{what} was profiled on `{}` but the model was trained for `{}`; \
                 train a model on data from this GPU",
                gpu.name, self.gpu.name
            )));
        }
        Ok(())
    }
}
