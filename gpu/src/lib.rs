//! tally-gpu: the device layer. GPU and kernel descriptions, occupancy,
//! Nsight Compute counters, the `Backend` trait and the simulated GPU.

mod backend;
mod counters;
pub mod cuda;
mod error;
mod kernel;
pub mod library;
mod occupancy;
mod partition;
pub mod rng;
mod roofline;
pub mod sim;
mod spec;
pub mod standin;

pub use backend::{open_backend, Backend, BackendKind, BackendOptions, Measurement};
pub use counters::{launch_counters, Counter, CounterSet, LAUNCH_COUNTERS};
pub use error::{GpuError, Result};
pub use kernel::{named_launch_id, Dim3, KernelKind, KernelSpec, MemoryUse, Work};
pub use occupancy::{Occupancy, OccupancyLimiter};
pub use partition::Partition;
pub use roofline::{bound, knee, Bound};
pub use sim::SimBackend;
pub use spec::{GpuSpec, PartitionRule, AUTO, PRESET_NAMES};
pub use standin::{stand_in, StandIn, StandInError};
