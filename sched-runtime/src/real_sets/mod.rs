//! Real measurements of GPU sharing published by others
//! (`data/real-contention/`, provenance in its README) and the simulator
//! and the predictor beside them: `tally real-contention`.
//!
//! `gpulet.rs`, `muxserve.rs` and `v100_micro.rs` own the sources' file
//! formats; `evaluate.rs` simulates every measured case; `few_shot.rs`
//! scores the predictor corrected by K measured sides of each model pair;
//! `score.rs` scores
//! a set (MAPE, Pearson r, the best constant's MAPE); `real_output.rs`
//! owns `real_contention.csv`.

pub mod evaluate;
pub mod few_shot;
pub mod gpulet;
pub mod muxserve;
pub mod real_output;
pub mod score;
pub mod v100_micro;

pub use evaluate::{Evaluation, JobSource, LlamaPhase, Predicted, RealRow, SETS};
