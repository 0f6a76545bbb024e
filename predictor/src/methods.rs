//! `Method` names every predictor the crate fits, and `FittedMethods` holds a
//! fitted set of them: the two learned contention models and the three
//! baselines, trained on the same samples.

use serde::{Deserialize, Serialize};

use crate::baselines::{Igniter, IntensityRule};
use crate::error::{PredictorError, Result};
use crate::forest::Forest;
use crate::gbm;
use crate::linear::LinearModel;
use crate::link;
use crate::samples::{Sample, Samples};

/// A prediction method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Interpretable per-resource linear contention model (elastic net).
    Linear,
    /// Gradient-boosted trees.
    Gbm,
    /// Standalone latency at the partition size (no interference).
    Scaling,
    /// Orion-style compute/memory label rule.
    IntensityRule,
    /// iGniter-style linear model in the co-runner's L2 demand.
    Igniter,
}

impl Method {
    pub const ALL: [Method; 5] = [
        Method::Linear,
        Method::Gbm,
        Method::Scaling,
        Method::IntensityRule,
        Method::Igniter,
    ];
    pub const LEARNED: [Method; 2] = [Method::Linear, Method::Gbm];

    pub fn as_str(&self) -> &'static str {
        match self {
            Method::Linear => "linear",
            Method::Gbm => "gbm",
            Method::Scaling => "scaling",
            Method::IntensityRule => "intensity-rule",
            Method::Igniter => "igniter",
        }
    }

    pub fn parse(s: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// The learned methods a `--method` value names: `pairsight` and `all`
    /// mean both, `linear` or `gbm` one.
    pub fn learned_set(s: &str) -> Result<Vec<Method>> {
        match s {
            "pairsight" | "all" => Ok(Method::LEARNED.to_vec()),
            "linear" => Ok(vec![Method::Linear]),
            "gbm" => Ok(vec![Method::Gbm]),
            other => Err(PredictorError::Input(format!(
                "unknown method `{other}`, expected pairsight, linear, gbm or all"
            ))),
        }
    }

    pub fn is_learned(&self) -> bool {
        Method::LEARNED.contains(self)
    }
}

/// Settings of the learners.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TrainConfig {
    pub gbm: gbm::GbmParams,
    pub seed: u64,
}

/// A fitted set of methods; a method not asked for is `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FittedMethods {
    pub linear: Option<LinearModel>,
    pub gbm: Option<Forest>,
    pub intensity_rule: IntensityRule,
    pub igniter: Igniter,
}

impl FittedMethods {
    /// Fit `methods` (the baselines always: they cost nothing) on the
    /// samples at `idx`.
    pub fn fit(
        samples: &Samples,
        idx: &[usize],
        methods: &[Method],
        cfg: &TrainConfig,
    ) -> Result<FittedMethods> {
        let train = || idx.iter().map(|&i| &samples.rows[i]);
        let needs_matrix = methods.iter().any(Method::is_learned);
        let (x, y) = if needs_matrix {
            samples.matrix(idx)
        } else {
            (Vec::new(), Vec::new())
        };
        let linear = if methods.contains(&Method::Linear) {
            Some(LinearModel::fit(&x, &y)?)
        } else {
            None
        };
        let gbm = if methods.contains(&Method::Gbm) {
            Some(gbm::fit(&x, &y, &cfg.gbm, cfg.seed)?)
        } else {
            None
        };
        Ok(FittedMethods {
            linear,
            gbm,
            intensity_rule: IntensityRule::fit(train()),
            igniter: Igniter::fit(train()),
        })
    }

    /// Whether `method` was fitted.
    pub fn has(&self, method: Method) -> bool {
        match method {
            Method::Linear => self.linear.is_some(),
            Method::Gbm => self.gbm.is_some(),
            _ => true,
        }
    }

    /// Predicted log slowdown of `s` by `method` (0 for a method not fitted).
    pub fn predict(&self, method: Method, s: &Sample) -> f64 {
        match method {
            // Clamped as the run-time predictor clamps: a co-runner never
            // speeds a kernel up.
            Method::Linear => self.linear.as_ref().map_or(0.0, |m| {
                link::from_model(&s.features, m.predict(&s.features)).max(0.0)
            }),
            Method::Gbm => self.gbm.as_ref().map_or(0.0, |m| {
                link::from_model(&s.features, m.predict(&s.features)).max(0.0)
            }),
            Method::Scaling => 0.0,
            Method::IntensityRule => self
                .intensity_rule
                .predict(s.memory_bound, s.co_memory_bound),
            Method::Igniter => self.igniter.predict(&s.features),
        }
    }
}
