//! tally-gpu-engine: the scheduler's engine seam (`tally_sched::engine`)
//! on a real GPU, written against a [`Device`]: what a GPU must do for the
//! engine (prepare a kernel's stand-in, enqueue a planned launch on a
//! job's stream, raise a launch's retreat flag, report finished launches
//! with the stand-in blocks they ran, keep the clock).
//!
//! - `device`: the `Device` trait and what crosses it.
//! - `engine`: `DeviceEngine`, the `Engine` over any device: each request
//!   of spec blocks becomes a range of stand-in blocks (`BlockMap`) and
//!   one launch of the transformed module (`launch_plan`), and each
//!   finished launch a completion in spec blocks. What one process cannot
//!   do (another SM partition than the whole GPU without green contexts, a
//!   time-slice context switch) is refused with the reason.
//!
//! - `cuda`: the `Device` of a real GPU ([`CudaGpu`] opened once,
//!   [`CudaDevice`] per engine): the transformed library, streams at
//!   priorities, the retreat flag in device memory, events.
//!
//! - `support`: which policies run on the device, and how each differs
//!   in one process from the system it stands for.
//!
//! `tests/` runs the engine contract on a deterministic device model;
//! `scripts/gpu-check.sh` runs it, and the policies, on a GPU.

pub mod cuda;
pub mod device;
pub mod engine;
pub mod support;

pub use cuda::{CudaDevice, CudaGpu};
pub use device::{Device, DeviceKernel, Finished, Ticket};
pub use engine::DeviceEngine;
