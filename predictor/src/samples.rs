//! `Samples`: profiled datasets turned into training and evaluation rows.
//! Every pair row gives two samples, one per side ("A while B runs" and
//! "B while A runs"), each with its features, its standalone latency, the
//! measured co-located latency, and what the splits and baselines need
//! (the model it came from, the pair row, the intensity-rule labels).

use std::collections::HashMap;

use tally_datasets::{Dataset, StandaloneIndex};
use tally_gpu::{bound, Bound, GpuSpec};

use crate::counter_subset::{missing_counters_advice, CounterSubset};
use crate::error::{PredictorError, Result};
use crate::features::{pair_features, Features, N_FEATURES};
use crate::profile::{GpuContext, SideProfile};

/// One side of one pair measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub features: Features,
    /// Standalone latency on the same partition, microseconds.
    pub solo_us: f64,
    /// Measured co-located latency, microseconds.
    pub co_us: f64,
    /// Index into `Samples::groups`: the model family the pair belongs to.
    pub group: usize,
    /// Pair row identity (dataset, row): both sides of a row share it, so
    /// splits never put one side in training and the other in test.
    pub pair: usize,
    /// Intensity-rule labels of this side and of its co-runner.
    pub memory_bound: bool,
    pub co_memory_bound: bool,
}

impl Sample {
    /// The measured log slowdown.
    pub fn target(&self) -> f64 {
        (self.co_us / self.solo_us).ln()
    }

    /// What the learned models fit: the log slowdown through the output link.
    pub fn model_target(&self) -> f64 {
        crate::link::to_model(&self.features, self.target())
    }
}

/// All samples of a set of datasets profiled on one GPU.
#[derive(Debug, Clone)]
pub struct Samples {
    pub gpu: GpuSpec,
    /// Model families, in first-seen order (`resnet50:train` belongs to `resnet50`).
    pub groups: Vec<String>,
    pub rows: Vec<Sample>,
}

/// The family of a model name: training variants group with their model, so
/// leave-one-model-out never trains on the forward pass of the held-out one.
pub fn model_family(model: &str) -> &str {
    model.split(':').next().unwrap_or(model)
}

/// Standalone profiles of a dataset by (op_id, sm_count), read through the
/// counters a predictor uses.
#[derive(Debug)]
pub struct ProfileTable<'a> {
    dataset: &'a Dataset,
    index: StandaloneIndex<'a>,
    column: HashMap<&'a str, usize>,
    counters: CounterSubset,
}

impl<'a> ProfileTable<'a> {
    /// Profiles with every predictor counter.
    pub fn new(dataset: &'a Dataset) -> ProfileTable<'a> {
        ProfileTable::unchecked(dataset, CounterSubset::all())
    }

    /// Profiles read through `counters`; refused when the dataset lacks one
    /// of them, naming them and how to collect them.
    pub fn with_counters(
        dataset: &'a Dataset,
        counters: &CounterSubset,
    ) -> Result<ProfileTable<'a>> {
        let missing = counters.missing_from(&dataset.standalone.counter_names);
        if !missing.is_empty() {
            return Err(PredictorError::MissingCounters {
                what: format!("`{}`", dataset.dir.display()),
                missing: missing.iter().map(|c| c.name().to_string()).collect(),
                advice: missing_counters_advice(&missing, &dataset.dir.display().to_string()),
            });
        }
        Ok(ProfileTable::unchecked(dataset, counters.clone()))
    }

    fn unchecked(dataset: &'a Dataset, counters: CounterSubset) -> ProfileTable<'a> {
        let column = dataset
            .standalone
            .counter_names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i))
            .collect();
        ProfileTable {
            dataset,
            index: dataset.standalone.index(),
            column,
            counters,
        }
    }

    /// The profile of `op` on `sm_count` SMs.
    pub fn profile(&self, op: &str, sm_count: u32) -> Result<SideProfile> {
        let what = || format!("`{}`", self.dataset.dir.join("standalone.csv").display());
        let row = self
            .index
            .get(op, sm_count)
            .ok_or_else(|| PredictorError::MissingProfile {
                what: what(),
                op: op.to_string(),
                sm_count,
            })?;
        SideProfile::from_available(
            sm_count,
            row.duration_us,
            |name| {
                self.column
                    .get(name)
                    .and_then(|&i| row.counters.get(i).copied())
            },
            &format!("{} (op {op}, {sm_count} SMs)", what()),
            &self.counters,
        )
    }

    /// Partition sizes `op` was profiled on, ascending.
    pub fn sm_counts(&self, op: &str) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .dataset
            .standalone
            .rows
            .iter()
            .filter(|r| r.op_id == op)
            .map(|r| r.sm_count)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// Check that every dataset was profiled on the same GPU and return it.
pub fn common_gpu(datasets: &[Dataset]) -> Result<GpuSpec> {
    let first = datasets
        .first()
        .ok_or_else(|| PredictorError::Input("no datasets given".to_string()))?;
    for d in &datasets[1..] {
        if d.info.gpu != first.info.gpu {
            return Err(PredictorError::MixedGpus {
                first: first.dir.display().to_string(),
                first_gpu: first.info.gpu.name.clone(),
                other: d.dir.display().to_string(),
                other_gpu: d.info.gpu.name.clone(),
            });
        }
    }
    Ok(first.info.gpu.clone())
}

impl Samples {
    /// Both sides of every pair row of every dataset.
    pub fn from_datasets(datasets: &[Dataset]) -> Result<Samples> {
        Samples::from_datasets_with(datasets, &CounterSubset::all())
    }

    /// Both sides of every pair row of every dataset, their features
    /// computed from `counters` only (the others held fixed).
    pub fn from_datasets_with(datasets: &[Dataset], counters: &CounterSubset) -> Result<Samples> {
        let gpu = common_gpu(datasets)?;
        let mask = counters.mask();
        let features = |a: &SideProfile, b: &SideProfile, ctx: &GpuContext| {
            let mut f = pair_features(a, b, ctx);
            mask.apply(&mut f);
            f
        };
        let ctx = GpuContext::of(&gpu);
        let mut groups: Vec<String> = Vec::new();
        let mut rows = Vec::new();
        let mut pair = 0;
        for ds in datasets {
            let family = model_family(&ds.info.model).to_string();
            let group = match groups.iter().position(|g| *g == family) {
                Some(i) => i,
                None => {
                    groups.push(family);
                    groups.len() - 1
                }
            };
            let labels: HashMap<&str, bool> = ds
                .ops
                .iter()
                .map(|op| {
                    (
                        op.op_id.as_str(),
                        bound(&op.kernel, &ds.info.gpu) == Bound::Memory,
                    )
                })
                .collect();
            let table = ProfileTable::with_counters(ds, counters)?;
            for p in &ds.pairs {
                let a = table.profile(&p.op_a, p.sm_a)?;
                let b = table.profile(&p.op_b, p.sm_b)?;
                let label = |op: &str| labels.get(op).copied().unwrap_or(false);
                let (la, lb) = (label(&p.op_a), label(&p.op_b));
                rows.push(Sample {
                    features: features(&a, &b, &ctx),
                    solo_us: a.duration_us,
                    co_us: p.duration_a_us,
                    group,
                    pair,
                    memory_bound: la,
                    co_memory_bound: lb,
                });
                rows.push(Sample {
                    features: features(&b, &a, &ctx),
                    solo_us: b.duration_us,
                    co_us: p.duration_b_us,
                    group,
                    pair,
                    memory_bound: lb,
                    co_memory_bound: la,
                });
                pair += 1;
            }
        }
        if rows.is_empty() {
            return Err(PredictorError::Input(
                "the datasets hold no pair rows to learn from".to_string(),
            ));
        }
        Ok(Samples { gpu, groups, rows })
    }

    /// The samples at `idx`, as a row-major feature matrix and model targets.
    pub fn matrix(&self, idx: &[usize]) -> (Vec<f64>, Vec<f64>) {
        let mut x = Vec::with_capacity(idx.len() * N_FEATURES);
        let mut y = Vec::with_capacity(idx.len());
        for &i in idx {
            x.extend_from_slice(&self.rows[i].features);
            y.push(self.rows[i].model_target());
        }
        (x, y)
    }
}
