//! `RuntimePredictor`: the compact predictor the scheduler calls on its
//! decision path. It holds one learned method flattened (linear weights in
//! a fixed array, or the trees' node array) and the GPU constants of the
//! features; a prediction builds the feature vector on the stack and
//! allocates nothing.

use crate::complete_forest::CompleteForest;
use crate::feature_mask::FeatureMask;
use crate::features::{pair_features, N_FEATURES};
use crate::forest::Forest;
use crate::methods::Method;
use crate::predictor_file::PredictorFile;
use crate::profile::{GpuContext, SideProfile};

// The linear variant is kept inline (no pointer chase on the hot path);
// there is one `Compact` per predictor, so its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
enum Compact {
    Linear {
        bias: f64,
        weights: [f64; N_FEATURES],
    },
    Trees(Forest),
    PaddedTrees(CompleteForest),
}

/// A learned method ready for allocation-free predictions.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimePredictor {
    gpu: GpuContext,
    method: Method,
    model: Compact,
    /// The features the model file's counters support.
    mask: FeatureMask,
}

impl RuntimePredictor {
    /// The model file's `method` (its default if `None`); `None` back if
    /// that method is not in the file or is not a learned one.
    pub fn from_model(file: &PredictorFile, method: Option<Method>) -> Option<RuntimePredictor> {
        let method = method.unwrap_or(file.default_method);
        let model = match method {
            Method::Linear => {
                let m = file.models.linear.as_ref()?;
                let weights: [f64; N_FEATURES] = m.weights.as_slice().try_into().ok()?;
                Compact::Linear {
                    bias: m.bias,
                    weights,
                }
            }
            Method::Gbm => {
                let forest = file.models.gbm.as_ref()?;
                match CompleteForest::from_forest(forest) {
                    Some(padded) => Compact::PaddedTrees(padded),
                    None => Compact::Trees(forest.clone()),
                }
            }
            _ => return None,
        };
        Some(RuntimePredictor {
            gpu: GpuContext::of(&file.gpu),
            method,
            model,
            mask: file.counter_subset().mask(),
        })
    }

    pub fn method(&self) -> Method {
        self.method
    }

    /// Predicted slowdown of `a` while `b` runs on the other partition.
    #[inline]
    pub fn slowdown(&self, a: &SideProfile, b: &SideProfile) -> f64 {
        let mut f = pair_features(a, b, &self.gpu);
        self.mask.apply(&mut f);
        let out = match &self.model {
            Compact::Linear { bias, weights } => {
                bias + weights.iter().zip(&f).map(|(w, x)| w * x).sum::<f64>()
            }
            Compact::Trees(forest) => forest.predict(&f),
            Compact::PaddedTrees(forest) => forest.predict(&f),
        };
        // A co-runner never speeds a kernel up; a fitted model may dip below
        // zero within its noise.
        crate::link::slowdown_from_model(&f, out)
    }

    /// Predicted co-located latencies (microseconds) of both sides.
    #[inline]
    pub fn co_located_us(&self, a: &SideProfile, b: &SideProfile) -> (f64, f64) {
        (
            a.duration_us * self.slowdown(a, b),
            b.duration_us * self.slowdown(b, a),
        )
    }
}
