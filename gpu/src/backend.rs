//! The `Backend` trait every device implements (the simulator now, CUDA
//! later), the `Measurement` it returns, and backend selection by name.

use serde::{Deserialize, Serialize};

use crate::counters::CounterSet;
use crate::error::{GpuError, Result};
use crate::kernel::KernelSpec;
use crate::partition::Partition;
use crate::sim::SimBackend;
use crate::spec::GpuSpec;

/// One kernel's measured duration and counters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub duration_us: f64,
    pub counters: CounterSet,
}

/// A device that can run a kernel alone on a partition, or two kernels at
/// once on two disjoint partitions.
pub trait Backend {
    /// The GPU this backend runs on.
    fn spec(&self) -> &GpuSpec;

    /// Run `kernel` alone on `partition`.
    fn standalone(&self, kernel: &KernelSpec, partition: Partition) -> Result<Measurement>;

    /// Run `a` on `pa` and `b` on `pb` concurrently. Each side's duration is
    /// measured while the other runs continuously (the co-runner loops for
    /// the whole measured window). Counters are those of each side while
    /// co-located.
    fn co_run(
        &self,
        a: &KernelSpec,
        pa: Partition,
        b: &KernelSpec,
        pb: Partition,
    ) -> Result<(Measurement, Measurement)>;
}

/// Which backend to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    Sim,
    Cuda,
}

impl BackendKind {
    pub fn parse(s: &str) -> Result<BackendKind> {
        match s {
            "sim" => Ok(BackendKind::Sim),
            "cuda" => Ok(BackendKind::Cuda),
            other => Err(GpuError::UnknownBackend(other.to_string())),
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            BackendKind::Sim => "sim",
            BackendKind::Cuda => "cuda",
        }
    }
}

/// Open a backend for `spec`. The CUDA profiling backend does not exist
/// yet: without a driver that is the NO_DRIVER error (the first thing a
/// user must fix), with one it says so and names the alternatives.
pub fn open_backend(
    kind: BackendKind,
    spec: GpuSpec,
    seed: u64,
    noise_sigma: f64,
) -> Result<Box<dyn Backend>> {
    match kind {
        BackendKind::Sim => Ok(Box::new(SimBackend::new(spec, seed, noise_sigma))),
        BackendKind::Cuda if !crate::cuda::driver_present() => Err(GpuError::NoDriver),
        BackendKind::Cuda => Err(GpuError::CudaProfilingAbsent),
    }
}
