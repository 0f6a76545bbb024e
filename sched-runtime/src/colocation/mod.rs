//! Task-level co-location prediction (`tally predict --task A --task B`):
//! the latency of each task (an inference request or a training step)
//! when two tasks run back to back on disjoint SM partitions, known before
//! co-locating them.
//!
//! The composition runs on the block-level engine (`crate::engine::sim`),
//! whose running kernels are paced by a contention model: the one built
//! from the contention predictor and standalone profiles
//! (`predicted_contention.rs`), or the simulator's own (the ground truth
//! on the simulated GPU). So the overlap of two kernel sequences of
//! different lengths is followed event by event, not averaged.
//!
//! `pair_slowdown.rs` is the kernel-pair slowdown composed (the predictor
//! or a baseline), `kernel_profiles.rs` gathers the standalone inputs
//! (datasets or a backend), `compose.rs` drives two kernel sequences on an
//! engine, `task_pair.rs` gives every split's latencies, and `measured.rs`
//! reads the user's own co-located measurements and corrects predictions
//! with them.

pub mod compose;
pub mod kernel_profiles;
pub mod measured;
pub mod pair_slowdown;
pub mod predicted_contention;
pub mod task_pair;
