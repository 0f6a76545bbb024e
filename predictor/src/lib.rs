//! tally-predictor: the memory-path-contention predictor. From the
//! standalone Nsight Compute counters of two operators on their own SM
//! partitions it predicts each one's latency when they are co-located,
//! before co-locating them (PairSight-style).
//!
//! * `profile` / `features` — counters to per-side demands, and the pair
//!   features (demands, their interactions, combined demand against the
//!   shared path's capacity); `counter_subset` — predictors on the
//!   counters an imported profile has;
//! * `linear` (interpretable, per-resource terms, linfa elastic net) and
//!   `gbm` (boosted trees, forust-ml) — the learned models; `baselines` —
//!   scaling curve, intensity rule, iGniter;
//! * `eval` — random, leave-one-model-out and few-shot splits (`adapt`);
//! * `predictor_file` — versioned JSON; `runtime` — the allocation-free
//!   predictor for the scheduler; `predict` — latencies over SM splits.

pub mod adapt;
pub mod baselines;
pub mod complete_forest;
pub mod counter_subset;
mod error;
pub mod eval;
pub mod eval_output;
pub mod feature_mask;
pub mod features;
pub mod forest;
pub mod gbm;
pub mod linear;
pub mod link;
pub mod methods;
pub mod pair_file;
pub mod predict;
pub mod predictor_file;
pub mod profile;
pub mod runtime;
pub mod samples;
pub mod train;

pub use counter_subset::CounterSubset;
pub use error::{PredictorError, Result};
pub use methods::{FittedMethods, Method, TrainConfig};
pub use predictor_file::PredictorFile;
pub use profile::{GpuContext, SideProfile};
pub use runtime::RuntimePredictor;
pub use samples::Samples;
