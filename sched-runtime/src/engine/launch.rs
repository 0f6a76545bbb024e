//! What crosses the engine seam: the launches a policy submits, and the
//! completions the engine reports back.

use tally_gpu::Partition;

/// Index of a kernel in the engine's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelId(pub u32);

/// Identity of a submitted launch (unique for the engine's lifetime).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LaunchId(pub u64);

/// One kernel launch: a range of a kernel's blocks on an SM range.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchRequest {
    /// The job (stream) it belongs to; only reported back.
    pub job: usize,
    pub kernel: KernelId,
    /// First block index of the range (a slice's block offset, or the
    /// progress a preempted kernel resumes from).
    pub first_block: u64,
    pub blocks: u64,
    /// Persistent thread blocks: this many workers per SM of the range
    /// take blocks from the range until it is exhausted or they retreat.
    pub workers_per_sm: Option<u32>,
    /// Persistent thread blocks: at most this many workers in all (placed
    /// breadth-first, so on as many SMs), where fewer than
    /// `workers_per_sm` on every SM of the range are wanted.
    pub max_workers: Option<u32>,
    /// Whether `Engine::retreat` may stop it (preemptive PTB).
    pub preemptible: bool,
    pub sms: Partition,
    /// At most this many SMs of `sms` hold its blocks at once, chosen as
    /// blocks are placed (an MPS client's active thread percentage,
    /// `tally_gpu::Sharing::Mps`); `None`: any SM of the range.
    pub max_sms: Option<u32>,
    /// Higher first when SMs free up; equal priorities go in launch order.
    pub priority: u8,
    /// Add the launch overhead before its blocks may start.
    pub with_overhead: bool,
    /// Host-side time before the launch reaches the GPU, on top of the
    /// launch overhead (a launch forwarded through an interception server).
    pub host_delay_us: f64,
}

/// A launch that has ended: all its blocks ran, or it retreated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Completion {
    pub launch: LaunchId,
    pub job: usize,
    pub kernel: KernelId,
    /// Blocks of its range that ran (all of them unless it retreated).
    pub blocks_done: u64,
    pub retreated: bool,
    pub time_us: f64,
}
