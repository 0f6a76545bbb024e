//! tally-gpu: the device layer. GPU and kernel descriptions, occupancy,
//! Nsight Compute counters, the `Backend` trait and the simulated GPU.

mod auto;
mod backend;
mod counters;
pub mod cuda;
mod error;
mod kernel;
mod occupancy;
mod partition;
pub mod rng;
mod roofline;
mod sharing;
pub mod sim;
mod spec;
pub mod split_check;

pub use backend::{Backend, BackendKind, BackendOptions, Measurement};
pub use counters::{launch_counters, Counter, CounterSet, LAUNCH_COUNTERS};
pub use error::{GpuError, Result, NO_DRIVER};
pub use kernel::{named_launch_id, Dim3, KernelKind, KernelSpec, MemoryUse, Work};
pub use occupancy::{Occupancy, OccupancyLimiter};
pub use partition::Partition;
pub use roofline::{bound, knee, Bound};
pub use sharing::{Placement, Sharing};
pub use sim::SimBackend;
pub use spec::{GpuSpec, PartitionRule, AUTO, PRESET_NAMES};
