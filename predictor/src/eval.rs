//! Evaluation of every method on the same splits: a seeded random split of
//! the pair rows, leave-one-model-out (each model family held out in turn)
//! and few-shot adaptation (K pair rows of the held-out family measured
//! and used to fit a residual correction). The metric is the absolute
//! percentage error of the co-located latency: its mean (MAPE) and 90th
//! percentile.

use serde::{Deserialize, Serialize};
use tally_gpu::rng::SplitMix64;

use crate::adapt::{FeatureScale, ResidualCorrection};
use crate::error::{PredictorError, Result};
use crate::methods::{FittedMethods, Method, TrainConfig};
use crate::samples::Samples;

/// One test sample's prediction by one method on one split.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    pub method: String,
    /// `random` or `loo`.
    pub split: String,
    /// The held-out model family (`loo`), or `all` (`random`).
    pub held_out: String,
    /// The sample's model family.
    pub model: String,
    /// Pair row identity: both sides of a measured pair share it.
    pub pair: usize,
    /// Intensity-rule labels of the kernel and of its co-runner.
    pub memory_bound: bool,
    pub co_memory_bound: bool,
    pub solo_us: f64,
    pub measured_us: f64,
    pub predicted_us: f64,
}

impl Prediction {
    /// Absolute percentage error of the predicted co-located latency.
    pub fn ape_pct(&self) -> f64 {
        100.0 * (self.predicted_us - self.measured_us).abs() / self.measured_us
    }
}

/// Share of pair rows in the random split's test set.
pub const TEST_SHARE: f64 = 0.2;
/// Support sizes of the few-shot evaluation (pair rows; each gives two samples).
pub const FEW_SHOT_K: [usize; 4] = [0, 5, 10, 20];
/// Few-shot draws averaged per (held-out model, K).
pub const FEW_SHOT_REPEATS: usize = 5;

/// Which splits to evaluate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    Random,
    LeaveOneOut,
    FewShot,
}

impl Split {
    /// The splits a `--split` value names (`all`: every one).
    pub fn parse_set(s: &str) -> Result<Vec<Split>> {
        match s {
            "random" => Ok(vec![Split::Random]),
            "loo" => Ok(vec![Split::LeaveOneOut]),
            "fewshot" => Ok(vec![Split::FewShot]),
            "all" => Ok(vec![Split::Random, Split::LeaveOneOut, Split::FewShot]),
            other => Err(PredictorError::Input(format!(
                "unknown split `{other}`, expected random, loo, fewshot or all"
            ))),
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Split::Random => "random",
            Split::LeaveOneOut => "loo",
            Split::FewShot => "fewshot",
        }
    }
}

/// One line of the evaluation table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalRow {
    pub method: String,
    pub split: String,
    /// The held-out model family, or "all" (the random split, or the mean
    /// over held-out families).
    pub held_out: String,
    pub k: usize,
    pub test_samples: usize,
    pub mape_pct: f64,
    pub p90_ape_pct: f64,
}

/// Absolute percentage errors -> (mean, 90th percentile by nearest rank).
pub fn ape_stats(mut ape: Vec<f64>) -> (f64, f64) {
    if ape.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = ape.iter().sum::<f64>() / ape.len() as f64;
    ape.sort_by(f64::total_cmp);
    let i = ((0.9 * ape.len() as f64).ceil() as usize).clamp(1, ape.len()) - 1;
    (mean, ape[i])
}

/// Absolute percentage error of a predicted log slowdown on sample `s`.
pub(crate) fn ape(samples: &Samples, i: usize, log_slowdown: f64) -> f64 {
    let s = &samples.rows[i];
    100.0 * (s.solo_us * log_slowdown.exp() - s.co_us).abs() / s.co_us
}

/// Pair ids in `idx`, distinct, in first-seen order.
fn pairs_of(samples: &Samples, idx: &[usize]) -> Vec<usize> {
    let mut seen = std::collections::HashSet::new();
    idx.iter()
        .map(|&i| samples.rows[i].pair)
        .filter(|p| seen.insert(*p))
        .collect()
}

/// Choose `n` of `items` with the generator (partial Fisher-Yates).
fn choose(items: &[usize], n: usize, rng: &mut SplitMix64) -> Vec<usize> {
    let mut v = items.to_vec();
    let n = n.min(v.len());
    for i in 0..n {
        let j = i + rng.below((v.len() - i) as u64) as usize;
        v.swap(i, j);
    }
    v.truncate(n);
    v
}

/// Sample indices split into (train, test) with `share` of the pair rows in test.
pub fn random_split(samples: &Samples, share: f64, seed: u64) -> (Vec<usize>, Vec<usize>) {
    let all: Vec<usize> = (0..samples.rows.len()).collect();
    let pairs = pairs_of(samples, &all);
    let mut rng = SplitMix64::keyed(seed, &[SPLIT_STREAM]);
    let n_test = ((pairs.len() as f64) * share).round() as usize;
    let test_pairs: std::collections::HashSet<usize> = choose(&pairs, n_test.max(1), &mut rng)
        .into_iter()
        .collect();
    all.into_iter()
        .partition(|&i| !test_pairs.contains(&samples.rows[i].pair))
}

/// Keys separating the split streams from other uses of the seed.
const SPLIT_STREAM: u64 = 0x5eed_0000_0000_0001;
const FEW_SHOT_STREAM: u64 = 0x5eed_0000_0000_0002;

/// One held-out family's (MAPE, p90 APE, test samples).
type FamilyError = (f64, f64, usize);

/// The result of `evaluate`: the error table, and every test sample's
/// prediction of the random and leave-one-model-out splits (what parity
/// plots and error CDFs draw).
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    pub rows: Vec<EvalRow>,
    pub predictions: Vec<Prediction>,
}

/// One test sample's prediction by `m` (the log slowdown `log_slowdown`).
fn prediction(
    samples: &Samples,
    i: usize,
    m: Method,
    split: Split,
    held_out: &str,
    log_slowdown: f64,
) -> Prediction {
    let s = &samples.rows[i];
    Prediction {
        method: m.as_str().to_string(),
        split: split.as_str().to_string(),
        held_out: held_out.to_string(),
        model: samples.groups[s.group].clone(),
        pair: s.pair,
        memory_bound: s.memory_bound,
        co_memory_bound: s.co_memory_bound,
        solo_us: s.solo_us,
        measured_us: s.co_us,
        predicted_us: s.solo_us * log_slowdown.exp(),
    }
}

/// Evaluate `methods` on `splits`. Learned methods are trained once per
/// training set; the baselines are fitted on the same set.
pub fn evaluate(
    samples: &Samples,
    methods: &[Method],
    splits: &[Split],
    cfg: &TrainConfig,
) -> Result<Evaluation> {
    let mut rows = Vec::new();
    let mut predictions = Vec::new();
    if splits.contains(&Split::Random) {
        let (train, test) = random_split(samples, TEST_SHARE, cfg.seed);
        let models = FittedMethods::fit(samples, &train, methods, cfg)?;
        for &m in methods {
            let mut errors = Vec::with_capacity(test.len());
            for &i in &test {
                let p = models.predict(m, &samples.rows[i]);
                errors.push(ape(samples, i, p));
                predictions.push(prediction(samples, i, m, Split::Random, "all", p));
            }
            let (mape, p90) = ape_stats(errors);
            rows.push(row(m, Split::Random, "all", 0, test.len(), mape, p90));
        }
    }
    let held_out_splits: Vec<Split> = splits
        .iter()
        .copied()
        .filter(|s| *s != Split::Random)
        .collect();
    if held_out_splits.is_empty() {
        return Ok(Evaluation { rows, predictions });
    }
    if samples.groups.len() < 2 {
        return Err(PredictorError::Input(format!(
            "leave-one-model-out needs datasets of at least two models, got only `{}`",
            samples.groups.join(", ")
        )));
    }
    let ks: Vec<usize> = if held_out_splits.contains(&Split::FewShot) {
        FEW_SHOT_K.to_vec()
    } else {
        vec![0]
    };
    let mut per_family: Vec<(Method, usize, Vec<FamilyError>)> = Vec::new();
    for (g, family) in samples.groups.iter().enumerate() {
        let (held, train): (Vec<usize>, Vec<usize>) =
            (0..samples.rows.len()).partition(|&i| samples.rows[i].group == g);
        let models = FittedMethods::fit(samples, &train, methods, cfg)?;
        let scale = FeatureScale::of(&samples.matrix(&train).0);
        let held_pairs = pairs_of(samples, &held);
        for &m in methods {
            let base: Vec<f64> = held
                .iter()
                .map(|&i| models.predict(m, &samples.rows[i]))
                .collect();
            predictions.extend(
                held.iter()
                    .zip(&base)
                    .map(|(&i, &p)| prediction(samples, i, m, Split::LeaveOneOut, family, p)),
            );
            for &k in &ks {
                let repeats = if k == 0 { 1 } else { FEW_SHOT_REPEATS };
                let (mut mape_sum, mut p90_sum, mut n) = (0.0, 0.0, 0);
                for r in 0..repeats {
                    let mut rng = SplitMix64::keyed(
                        cfg.seed,
                        &[FEW_SHOT_STREAM, g as u64, k as u64, r as u64],
                    );
                    let support: std::collections::HashSet<usize> =
                        choose(&held_pairs, k, &mut rng).into_iter().collect();
                    let residuals = held
                        .iter()
                        .zip(&base)
                        .filter(|(&i, _)| support.contains(&samples.rows[i].pair))
                        .map(|(&i, &p)| (samples.rows[i].features, samples.rows[i].target() - p))
                        .collect();
                    let correction = ResidualCorrection::fit(residuals, scale.clone());
                    let errors: Vec<f64> = held
                        .iter()
                        .zip(&base)
                        .filter(|(&i, _)| !support.contains(&samples.rows[i].pair))
                        .map(|(&i, &p)| {
                            ape(
                                samples,
                                i,
                                p + correction.correction(&samples.rows[i].features),
                            )
                        })
                        .collect();
                    n = errors.len();
                    let (mape, p90) = ape_stats(errors);
                    mape_sum += mape;
                    p90_sum += p90;
                }
                let (mape, p90) = (mape_sum / repeats as f64, p90_sum / repeats as f64);
                let split = if k == 0 {
                    Split::LeaveOneOut
                } else {
                    Split::FewShot
                };
                if held_out_splits.contains(&split)
                    || (k == 0 && held_out_splits.contains(&Split::FewShot))
                {
                    rows.push(row(m, split, family, k, n, mape, p90));
                }
                match per_family.iter_mut().find(|e| e.0 == m && e.1 == k) {
                    Some(e) => e.2.push((mape, p90, n)),
                    None => per_family.push((m, k, vec![(mape, p90, n)])),
                }
            }
        }
    }
    // Means over held-out families: each family counts once, whatever its size.
    for (m, k, stats) in per_family {
        let split = if k == 0 {
            Split::LeaveOneOut
        } else {
            Split::FewShot
        };
        let n = stats.len() as f64;
        let mape = stats.iter().map(|s| s.0).sum::<f64>() / n;
        let p90 = stats.iter().map(|s| s.1).sum::<f64>() / n;
        let samples_n = stats.iter().map(|s| s.2).sum();
        rows.push(row(m, split, "all", k, samples_n, mape, p90));
    }
    Ok(Evaluation { rows, predictions })
}

fn row(
    m: Method,
    split: Split,
    held_out: &str,
    k: usize,
    n: usize,
    mape: f64,
    p90: f64,
) -> EvalRow {
    EvalRow {
        method: m.as_str().to_string(),
        split: split.as_str().to_string(),
        held_out: held_out.to_string(),
        k,
        test_samples: n,
        mape_pct: mape,
        p90_ape_pct: p90,
    }
}
