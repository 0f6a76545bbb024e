//! tally-kernels: the kernel toolchain and the kernels that run on a real
//! GPU.
//!
//! - `ptx`: the PTX parser, printer and transforms that turn a kernel into
//!   its sliced, persistent-thread-block (PTB) and preemptive-PTB variants.
//! - `library`: the CUDA C kernel library (`kernels/cuda/`) and its
//!   manifest; `standin`: the one mapping from a zoo kernel to the library
//!   entry that stands in for it on a GPU, sized to its work.
//! - `build` (`tally kernels build`) and `verify` (`tally kernels verify`,
//!   the GPU check); `resources`: the `resources.json` a build writes.
//! - `cuda_backend`: the `Backend` that measures kernels on a real GPU as
//!   their stand-ins, and `open_backend`, which opens either twin.
//! - `launch_plan`: how a scheduler's block range of a kernel is launched
//!   as an entry of its transformed module (grid, offset, task counter).

pub mod build;
pub mod cuda_backend;
pub mod launch_plan;
pub mod library;
mod open_backend;
pub mod ptx;
pub mod resources;
pub mod standin;
pub mod verify;

pub use cuda_backend::CudaBackend;
pub use open_backend::open_backend;
pub use resources::KernelResources;
pub use standin::{stand_in, StandIn, StandInError};
