//! Measuring kernels on a real GPU as their library stand-ins: the library
//! loaded for the device (`loaded`), seeded device arguments (`fill`,
//! `args`), and the `Backend` built from them (`backend`) on the device
//! layer's event timer and green contexts.

mod args;
mod backend;
mod fill;
mod launch;
mod loaded;

pub use backend::CudaBackend;
