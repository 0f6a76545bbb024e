//! The `Device` a `DeviceEngine` drives: the few things a GPU must do for
//! the scheduler, in the launch plan's terms. Times are microseconds since
//! the device was opened.

use tally_gpu::{GpuSpec, KernelSpec};
use tally_kernels::launch_plan::LaunchPlan;
use tally_sched::engine::EngineError;

/// A kernel prepared on the device: its stand-in, by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeviceKernel(pub u32);

/// One enqueued launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ticket(pub u64);

/// A launch whose workers have all exited.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finished {
    pub ticket: Ticket,
    /// When it ended on the device.
    pub end_us: f64,
    /// Stand-in blocks it ran, from its first: all of its grid, or, for the
    /// preemptive entry, what its task counter says
    /// (`launch_plan::preempt_progress`).
    pub blocks_run: u64,
}

/// A GPU as the engine drives it.
pub trait Device: std::fmt::Debug {
    fn gpu(&self) -> &GpuSpec;

    /// The device clock.
    fn now_us(&self) -> f64;

    /// Prepare `spec`'s stand-in (its transformed module loaded, its
    /// arguments allocated); returns it and the stand-in's grid.
    fn prepare(&mut self, spec: &KernelSpec) -> Result<(DeviceKernel, [u32; 3]), EngineError>;

    /// Time of `plan` alone on the device.
    fn alone_us(&self, kernel: DeviceKernel, plan: &LaunchPlan) -> Result<f64, EngineError>;

    /// Enqueue `plan` on job `stream`'s stream (created on first use, at
    /// the greatest priority for `priority > 0`); the host does what the
    /// plan asks first (the task counter set, the retreat flag cleared).
    fn enqueue(
        &mut self,
        stream: usize,
        priority: u8,
        kernel: DeviceKernel,
        plan: &LaunchPlan,
    ) -> Result<Ticket, EngineError>;

    /// Raise the retreat flag of a preemptive launch.
    fn retreat(&mut self, ticket: Ticket);

    /// Launches that finished by now, each reported once.
    fn poll(&mut self, out: &mut Vec<Finished>) -> Result<(), EngineError>;

    /// Wait until the clock reaches `t` (launches that finish meanwhile are
    /// reported by the next `poll`, with their own end times).
    fn wait_until(&mut self, t: f64) -> Result<(), EngineError>;

    /// When to look again while launches run: when the next one finishes
    /// if the device knows, else the clock plus its polling interval.
    fn next_check(&self) -> Option<f64>;
}
