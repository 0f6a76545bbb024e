//! Measuring kernels on a real GPU: the kernel library loaded for the
//! device (`loaded`), seeded device arguments (`fill`, `args`), launches on
//! a stream (`launch`) in the primary context (`primary`) or a green
//! context, event timing alone and beside a co-runner (`timer`), and the
//! `Backend` built from them (`backend`).

mod args;
mod backend;
mod fill;
mod launch;
mod loaded;
mod primary;
mod timer;

pub use backend::CudaBackend;
pub use timer::{chunk_launches, Launch, Timer, EVENT_TIMING_DRIVER};
