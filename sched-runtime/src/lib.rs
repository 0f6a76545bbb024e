//! tally-sched: the scheduling runtime. So far it holds the PTX transformer
//! (`ptx`), which rewrites kernels so they can run as slices or as
//! preemptible persistent thread blocks, and the build of the kernel
//! library with it (`kernel_build`) and its check on a real GPU
//! (`kernel_check`).

pub mod alone;
pub mod config;
pub mod engine;
pub mod experiment;
pub mod kernel_build;
pub mod kernel_check;
pub mod metrics;
pub mod policy;
pub mod ptx;
pub mod runner;
pub mod trace;
pub mod workload;
