//! The non-linear model: gradient-boosted regression trees on the pair
//! features, trained with the `forust-ml` crate and flattened into a
//! `Forest`.
//!
//! Why boosted trees rather than a small MLP: the features are a few dozen
//! heterogeneous tabular quantities (fractions, byte ratios, queueing
//! pressures) whose effect switches regime (a working set fits or not, a
//! path saturates or not) — what trees split on directly; boosting needs no
//! feature scaling, trains histogram-based in seconds on 100k+ rows on one
//! core, and a tree walk is a few comparisons per tree at run time.
//! `forust-ml` is a pure-Rust, XGBoost-style booster that builds on stable
//! Rust (linfa has no boosting or regression trees; `perpetual`, its
//! successor, needs a nightly compiler and its self-tuning stop proved
//! erratic on our data: 62 nodes at one budget, 1.3 M at another).
//! Default hyper-parameters (`GbmParams`) were chosen on the zoo's random
//! split against the run-time cost: 32 trees of depth 8 at rate 0.5 reach
//! 1.53 % MAPE in 513 ns per run-time prediction; 40 trees reach 1.48 %
//! but took 965 ns (measured, `benches/runtime.rs`), and 300 trees of
//! depth 7 reached 1.07 % before the output link. The scheduler's budget
//! is well under 1 us.

use std::collections::HashMap;

use forust_ml::data::Matrix;
use forust_ml::objective::ObjectiveType;
use forust_ml::GradientBooster;

use crate::error::{PredictorError, Result};
use crate::features::N_FEATURES;
use crate::forest::{Forest, Node, LEAF};

/// Boosting settings; the defaults are chosen on the zoo's random split
/// against the run-time cost (trees x depth node visits per prediction).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GbmParams {
    /// Boosting rounds (one tree each).
    pub trees: usize,
    /// Depth of each tree: interactions of up to this many features.
    pub depth: usize,
    /// Shrinkage of each tree's contribution.
    pub learning_rate: f32,
}

impl GbmParams {
    /// At least one tree of depth at least 1, a learning rate in (0, 1].
    pub fn new(trees: usize, depth: usize, learning_rate: f32) -> Result<GbmParams> {
        if trees == 0 || depth == 0 {
            return Err(PredictorError::Input(
                "boosted trees (--gbm-trees, --gbm-depth) must be at least 1".into(),
            ));
        }
        if !(learning_rate > 0.0 && learning_rate <= 1.0) {
            return Err(PredictorError::Input(format!(
                "boosting learning rate (--gbm-learning-rate) must be in (0, 1], got {learning_rate}"
            )));
        }
        Ok(GbmParams {
            trees,
            depth,
            learning_rate,
        })
    }
}

impl Default for GbmParams {
    fn default() -> Self {
        GbmParams {
            trees: 32,
            depth: 8,
            learning_rate: 0.5,
        }
    }
}
/// Minimum hessian (= samples, for squared loss) in a leaf: keeps leaves
/// off the measurement noise.
const MIN_LEAF_WEIGHT: f32 = 5.0;

/// Fit boosted trees on row-major `x` and targets `y`, single-threaded
/// (deterministic, and the figure docs/prediction.md quotes is for one core).
pub fn fit(x: &[f64], y: &[f64], params: &GbmParams, seed: u64) -> Result<Forest> {
    let booster = train(x, y, params, seed)?;
    flatten(&booster).map_err(|message| PredictorError::Training {
        method: "gbm".to_string(),
        message,
    })
}

fn train(x: &[f64], y: &[f64], params: &GbmParams, seed: u64) -> Result<GradientBooster> {
    let n = y.len();
    let fail = |message: String| PredictorError::Training {
        method: "gbm".to_string(),
        message,
    };
    if n < 2 {
        return Err(fail(format!("needs at least 2 samples, got {n}")));
    }
    let columns = column_major(x);
    let data = Matrix::new(&columns, n, N_FEATURES);
    if params.trees == 0 || params.depth == 0 {
        return Err(fail("needs at least one tree of depth 1".to_string()));
    }
    if !(params.learning_rate > 0.0 && params.learning_rate <= 1.0) {
        return Err(fail(format!(
            "learning rate {} is outside (0, 1]",
            params.learning_rate
        )));
    }
    let mut booster = GradientBooster::default()
        .set_objective_type(ObjectiveType::SquaredLoss)
        .set_iterations(params.trees)
        .set_learning_rate(params.learning_rate)
        .set_max_depth(params.depth)
        .set_min_leaf_weight(MIN_LEAF_WEIGHT)
        .set_parallel(false)
        .set_seed(seed);
    booster
        .fit_unweighted(&data, y, None)
        .map_err(|e| fail(e.to_string()))?;
    Ok(booster)
}

/// Row-major feature rows to the column-major matrix forust takes.
fn column_major(x: &[f64]) -> Vec<f64> {
    let n = x.len() / N_FEATURES;
    let mut columns = vec![0.0; x.len()];
    for (i, row) in x.chunks_exact(N_FEATURES).enumerate() {
        for (j, v) in row.iter().enumerate() {
            columns[j * n + i] = *v;
        }
    }
    columns
}

/// Copy the booster's trees into one node array, each tree's nodes in
/// breadth-first order so that children always follow their parent.
fn flatten(booster: &GradientBooster) -> std::result::Result<Forest, String> {
    let mut forest = Forest {
        base: booster.base_score,
        roots: Vec::new(),
        nodes: Vec::new(),
    };
    for tree in &booster.trees {
        let root = forest.nodes.len();
        forest.roots.push(root as u32);
        // Renumber breadth-first so that children follow their parents.
        let mut order: Vec<usize> = vec![0];
        let mut position: HashMap<usize, usize> = HashMap::new();
        let mut k = 0;
        while k < order.len() {
            let id = order[k];
            position.insert(id, root + k);
            let node = tree
                .nodes
                .get(id)
                .ok_or_else(|| format!("tree refers to missing node {id}"))?;
            if !node.is_leaf {
                order.push(node.left_child);
                order.push(node.right_child);
            }
            k += 1;
        }
        for &id in &order {
            let node = &tree.nodes[id];
            if node.is_leaf {
                forest.nodes.push(Node {
                    feature: LEAF,
                    left: 0,
                    value: f64::from(node.weight_value),
                });
            } else {
                let (left, right) = (position[&node.left_child], position[&node.right_child]);
                if right != left + 1 {
                    return Err(format!(
                        "node {id}: children {left}, {right} are not adjacent"
                    ));
                }
                forest.nodes.push(Node {
                    feature: u16::try_from(node.split_feature)
                        .map_err(|_| "split feature index too large".to_string())?,
                    value: node.split_value,
                    left: left as u32,
                });
            }
        }
    }
    forest.check(N_FEATURES)?;
    Ok(forest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flattened_forest_predicts_like_the_booster() {
        let mut rng = tally_gpu::rng::SplitMix64::new(3);
        let n = 2000;
        let mut x = vec![0.0; n * N_FEATURES];
        for v in &mut x {
            *v = rng.next_f64();
        }
        let y: Vec<f64> = x
            .chunks_exact(N_FEATURES)
            .map(|r| if r[3] > 0.5 { r[5] * 2.0 } else { r[7] })
            .collect();
        let booster = train(
            &x,
            &y,
            &GbmParams {
                trees: 50,
                ..GbmParams::default()
            },
            0,
        )
        .expect("fit");
        let forest = flatten(&booster).expect("flatten");
        assert!(forest.roots.len() > 1);
        let columns = column_major(&x);
        let reference = booster.predict(&Matrix::new(&columns, n, N_FEATURES), false);
        let mut err = 0.0;
        for ((row, t), r) in x.chunks_exact(N_FEATURES).zip(&y).zip(&reference) {
            let f: [f64; N_FEATURES] = row.try_into().expect("row");
            let p = forest.predict(&f);
            assert!((p - r).abs() < 1e-9, "flattened {p} vs booster {r}");
            err += (p - t).abs();
        }
        assert!(err / (n as f64) < 0.1, "mean error {}", err / n as f64);
    }
}
