//! The execution engine: a discrete-event, block-level simulation of one
//! GPU. Launches are submitted by a scheduling policy; their thread blocks
//! are dispatched to SMs under occupancy limits and partitions, and running
//! blocks progress at rates from the gpu crate's contention model
//! (`tally_gpu::sim::WaveModel`), recomputed at every event.
//!
//! Blocks that one dispatch places together form a cohort: they start at the
//! same time and progress at the launch's rate, so they finish together.
//! This keeps the event count per kernel near its wave count while each
//! SM's residency is tracked exactly, run-length encoded over the SMs
//! (`residency.rs`) so that a wave costs a few span updates, not one per SM.

mod launch;
mod residency;
mod sim_engine;
mod sm;

pub use launch::{Completion, LaunchId, LaunchRequest};
pub use sim_engine::{BlockRun, EngineError, KernelId, SimEngine};
