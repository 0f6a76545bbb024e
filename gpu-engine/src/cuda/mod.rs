//! The CUDA implementation of [`Device`](crate::Device): a real GPU
//! through the driver API (cudarc, loaded at run time), so `tally run
//! --backend cuda` runs every policy the engine seam serves on the device.
//!
//! - `gpu`: [`CudaGpu`], the device opened once per command (context,
//!   the transformed kernel library, stand-ins and their arguments, alone
//!   times measured once).
//! - `cuda_device`: [`CudaDevice`], one engine's session on it (streams at
//!   priorities, launches, retreats, completions, the clock).
//! - `launch`: one planned launch's arguments and the counter-and-flag
//!   words; `events`: events and streams; `slots`: which counter slot a
//!   launch may take; `pacing`: when the host looks at the launches.
//!
//! Without a driver nothing here touches cudarc: [`CudaGpu::open`] fails
//! first with the NO_DRIVER error.

mod cuda_device;
mod events;
mod gpu;
mod launch;
pub mod pacing;
pub mod slots;

pub use cuda_device::CudaDevice;
pub use gpu::CudaGpu;
