//! One module per subcommand; each turns parsed arguments into library
//! calls and prints the result.

pub mod compare;
pub mod eval;
pub mod export;
pub mod gpus;
pub mod import_ncu;
pub mod kernels;
pub mod models;
pub mod ncu_target;
pub mod plot;
pub mod predict;
pub mod predict_tasks;
pub mod profile;
pub mod ptx;
pub mod real_contention;
pub mod run;
pub mod shell;
pub mod side_by_side;
pub mod summary;
pub mod train;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tally_datasets::{Dataset, RunDir};
use tally_predictor::gbm::GbmParams;
use tally_predictor::TrainConfig;
use tally_profiler::model::ParamsOverride;

use crate::args::{LearnerArgs, ModelParamArgs};

/// A check that ran and found a problem: exit code 1, not 2.
#[derive(Debug)]
pub struct Finding(pub String);

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Finding {}

/// Model parameter flags as the profiler's override.
pub fn params_override(p: &ModelParamArgs) -> ParamsOverride {
    ParamsOverride {
        batch: p.batch,
        seq_len: p.seq,
        kv_len: p.kv,
    }
}

/// Read every `--data` directory, naming the one that fails.
pub fn read_datasets(dirs: &[PathBuf]) -> Result<Vec<Dataset>> {
    dirs.iter()
        .map(|d| Dataset::read(d).with_context(|| format!("reading dataset `{}`", d.display())))
        .collect()
}

/// The datasets in `dirs` for learning or scoring: each at most once
/// (`Dataset::read_distinct`).
pub fn read_distinct_datasets(dirs: &[PathBuf]) -> Result<Vec<Dataset>> {
    Ok(Dataset::read_distinct(dirs)?)
}

/// Refuse `out` when writing it would destroy one of the datasets `dirs`
/// the command reads (`RunDir::refuse_as_output`).
pub fn refuse_output_over(out: &Path, dirs: &[PathBuf]) -> Result<()> {
    for d in dirs {
        RunDir::new(d).refuse_as_output(out)?;
    }
    Ok(())
}

/// Learner flags as the predictor's training settings.
pub fn train_config(l: &LearnerArgs) -> Result<TrainConfig> {
    let d = GbmParams::default();
    let gbm = GbmParams::new(
        l.gbm_trees.unwrap_or(d.trees),
        l.gbm_depth.unwrap_or(d.depth),
        l.gbm_learning_rate.unwrap_or(d.learning_rate),
    )?;
    Ok(TrainConfig { gbm, seed: l.seed })
}
