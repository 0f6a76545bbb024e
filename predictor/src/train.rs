//! Training a model file from profiled datasets: the learned methods are
//! validated on a held-out share of the pair rows (the better one becomes
//! the default), then refitted on every row; the baselines are fitted
//! alongside.

use tally_datasets::Dataset;

use crate::counter_subset::CounterSubset;
use crate::error::Result;
use crate::eval::{ape, ape_stats, random_split, TEST_SHARE};
use crate::features::FEATURE_NAMES;
use crate::methods::{FittedMethods, Method, TrainConfig};
use crate::predictor_file::{
    DataProvenance, FeatureSchema, PredictorFile, Validation, MODEL_FORMAT, MODEL_VERSION,
};
use crate::samples::Samples;

/// What to train and how to label the result.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainRequest {
    /// Learned methods to fit (the baselines always are).
    pub methods: Vec<Method>,
    pub config: TrainConfig,
    pub tool_version: String,
    /// RFC 3339 time stamp for the file.
    pub trained_at: String,
    /// The counters the models may read (`CounterSubset::all()` unless
    /// the data to predict on hold fewer).
    pub counters: CounterSubset,
}

impl TrainRequest {
    /// Every learned method with the default settings on every counter,
    /// undated: what benches and tests train with.
    pub fn default_learned(tool_version: &str) -> TrainRequest {
        TrainRequest {
            methods: Method::LEARNED.to_vec(),
            config: TrainConfig::default(),
            tool_version: tool_version.to_string(),
            trained_at: String::new(),
            counters: CounterSubset::all(),
        }
    }
}

/// Fit a model file on `datasets` (all profiled on one GPU).
pub fn train(datasets: &[Dataset], req: &TrainRequest) -> Result<PredictorFile> {
    let samples = Samples::from_datasets_with(datasets, &req.counters)?;
    let learned: Vec<Method> = req
        .methods
        .iter()
        .copied()
        .filter(Method::is_learned)
        .collect();
    let validation = validate(&samples, &learned, &req.config)?;
    let default_method = validation
        .iter()
        .min_by(|a, b| a.mape_pct.total_cmp(&b.mape_pct))
        .map_or(Method::IntensityRule, |v| v.method);
    let all: Vec<usize> = (0..samples.rows.len()).collect();
    let models = FittedMethods::fit(&samples, &all, &learned, &req.config)?;
    debug_assert_eq!(FEATURE_NAMES.len(), FeatureSchema::current().names.len());
    Ok(PredictorFile {
        format: MODEL_FORMAT.to_string(),
        version: MODEL_VERSION,
        tool_version: req.tool_version.clone(),
        trained_at: req.trained_at.clone(),
        feature_schema: FeatureSchema::current(),
        gpu: samples.gpu.clone(),
        training_data: datasets.iter().map(provenance).collect(),
        training_samples: samples.rows.len(),
        default_method,
        validation,
        models,
        counters: req
            .counters
            .counters()
            .iter()
            .map(|c| c.name().to_string())
            .collect(),
    })
}

/// Held-out error of each learned method (fitted on the rest).
fn validate(samples: &Samples, learned: &[Method], cfg: &TrainConfig) -> Result<Vec<Validation>> {
    if learned.is_empty() {
        return Ok(Vec::new());
    }
    let (train, test) = random_split(samples, TEST_SHARE, cfg.seed);
    let models = FittedMethods::fit(samples, &train, learned, cfg)?;
    Ok(learned
        .iter()
        .map(|&m| {
            let errors = test
                .iter()
                .map(|&i| ape(samples, i, models.predict(m, &samples.rows[i])))
                .collect();
            let (mape_pct, p90_ape_pct) = ape_stats(errors);
            Validation {
                method: m,
                mape_pct,
                p90_ape_pct,
            }
        })
        .collect())
}

fn provenance(d: &Dataset) -> DataProvenance {
    DataProvenance {
        dir: d.dir.display().to_string(),
        model: d.info.model.clone(),
        backend: d.info.backend.clone(),
        tool_version: d.info.tool_version.clone(),
        seed: d.info.seed,
        noise_sigma: d.info.noise_sigma,
        finished_at: d.info.finished_at.clone(),
        pair_rows: d.pairs.len() as u64,
    }
}
