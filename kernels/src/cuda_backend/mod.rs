//! Measuring kernels on a real GPU as their library stand-ins: the library
//! loaded for the device (`loaded`), seeded device arguments (`fill`,
//! `args`), and the `Backend` built from them (`backend`) on the device
//! layer's event timer and green contexts. The loaded library (with the
//! transformed variants) and the seeded arguments are public: the real-GPU
//! engine (`tally-gpu-engine`) launches the same stand-ins.

mod args;
mod backend;
mod fill;
mod launch;
mod loaded;

pub use args::DeviceArgs;
pub use backend::CudaBackend;
pub use launch::launch_on_stream;
pub use loaded::{LoadedKernel, LoadedLibrary};
