//! The engine seam: what a scheduling policy and the run loop need of the
//! GPU they drive, as the [`Engine`] trait. A policy launches a kernel's
//! blocks in a configuration on an SM range, asks a preemptive launch to
//! retreat or holds back its blocks, and learns of completions; the run
//! loop reads the clock and advances it to the next completion or arrival.
//! The block-level simulated GPU (`sim`) is the first engine; a real-GPU
//! engine implements the same trait without touching a policy.
//!
//! `launch.rs` holds what crosses the seam (launch requests, completions,
//! ids), `error.rs` its error, `alone.rs` standalone timing on any engine,
//! `contract.rs` the checks every engine must pass.

pub mod alone;
pub mod contract;
mod error;
mod launch;
pub mod sim;

pub use error::EngineError;
pub use launch::{Completion, KernelId, LaunchId, LaunchRequest};

use tally_gpu::{GpuSpec, KernelSpec, Partition};

use crate::kernel_config::KernelConfig;

/// A GPU as the scheduler drives it. Time is in microseconds from the
/// engine's start; kernels are registered once and launched by id.
pub trait Engine: std::fmt::Debug {
    /// The GPU it runs on.
    fn gpu(&self) -> &GpuSpec;

    /// The engine's clock, microseconds.
    fn now(&self) -> f64;

    /// Register a kernel (the same kernel twice gives the same id).
    fn add_kernel(&mut self, spec: &KernelSpec) -> Result<KernelId, EngineError>;

    /// A registered kernel.
    fn kernel(&self, id: KernelId) -> &KernelSpec;

    /// How many of the kernel's blocks fit on one SM at once (occupancy).
    fn blocks_per_sm(&self, id: KernelId) -> u32;

    /// Microseconds the kernel takes with the GPU to itself on `sms` under
    /// `config`, one launch overhead per launch (each slice is a launch):
    /// the reference Tally's configuration choice and normalised
    /// throughput compare against.
    fn alone_us(
        &self,
        id: KernelId,
        config: KernelConfig,
        sms: Partition,
    ) -> Result<f64, EngineError>;

    /// Submit a launch of a range of a kernel's blocks on an SM range; it
    /// may start after the launch overhead.
    fn submit(&mut self, req: LaunchRequest) -> Result<LaunchId, EngineError>;

    /// Tell a preemptive PTB launch's workers to retreat: no new blocks;
    /// running blocks finish; it then completes with its progress. False if
    /// the launch is gone or cannot retreat.
    fn retreat(&mut self, id: LaunchId) -> bool;

    /// Stop (or resume) dispatching a launch's blocks; running blocks go on.
    fn set_suspended(&mut self, id: LaunchId, suspended: bool);

    /// Save (or restore) a launch's context as a time-slice switch does:
    /// saving stops its dispatch and takes its running blocks off the SMs
    /// mid-block, progress kept; restoring puts them back and resumes.
    fn set_context_saved(&mut self, id: LaunchId, saved: bool);

    /// Time of the next event the engine knows of (a launch completing or
    /// becoming ready), if any.
    fn next_event_time(&self) -> Option<f64>;

    /// Advance the clock to `t`, reporting the launches that completed.
    fn advance_to(&mut self, t: f64, out: &mut Vec<Completion>) -> Result<(), EngineError>;

    /// Apply what is due now (after submitting or preempting), reporting
    /// the launches that completed.
    fn settle(&mut self, out: &mut Vec<Completion>) -> Result<(), EngineError>;
}
