//! The `Backend` trait every device implements (the simulator here, a real
//! GPU through CUDA in tally-kernels), the `Measurement` it returns, and
//! the names and options a backend is opened with (`open_backend` in
//! tally-kernels opens either).

use serde::{Deserialize, Serialize};

use crate::counters::{Counter, CounterSet};
use crate::cuda::ncu::NcuRunner;
use crate::cuda::TimingConfig;
use crate::error::{GpuError, Result};
use crate::kernel::KernelSpec;
use crate::partition::Partition;
use crate::spec::GpuSpec;

/// One kernel's measured duration and counters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// The median of the timed repetitions on a real GPU.
    pub duration_us: f64,
    /// Values of the backend's [`Backend::counters`]; the others are 0.
    pub counters: CounterSet,
    /// Interquartile range of the repetitions over their median, percent;
    /// `None` where there are no repetitions (the simulator).
    pub spread_pct: Option<f64>,
}

/// A device that can run a kernel alone on a partition, or two kernels at
/// once on two disjoint partitions.
pub trait Backend {
    /// The GPU this backend runs on.
    fn spec(&self) -> &GpuSpec;

    /// The counters its measurements hold, in dataset column order; a
    /// dataset carries only these columns (what is not measured is absent,
    /// never zero).
    fn counters(&self) -> Vec<Counter> {
        Counter::ALL.to_vec()
    }

    /// How it measures, for a dataset's provenance (`run.json`): the
    /// device, repetitions, where the counters come from. Empty for the
    /// simulator, whose settings are the run's seed and noise.
    fn settings(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }

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

impl BackendOptions {
    /// Options with a measurement noise that is a number >= 0.
    pub fn new(
        seed: u64,
        noise_sigma: f64,
        device: usize,
        timing: TimingConfig,
        ncu: Option<NcuRunner>,
    ) -> Result<BackendOptions> {
        if !(noise_sigma.is_finite() && noise_sigma >= 0.0) {
            return Err(GpuError::Setting {
                what: "measurement noise (--noise)",
                problem: format!("must be a number >= 0, got {noise_sigma}"),
            });
        }
        Ok(BackendOptions {
            seed,
            noise_sigma,
            device,
            timing,
            ncu,
        })
    }
}

/// How to open a backend: what each kind reads of it.
#[derive(Debug, Clone, PartialEq)]
pub struct BackendOptions {
    /// Seeds the simulator's noise and the CUDA backend's input data.
    pub seed: u64,
    /// Log-standard-deviation of the simulator's measurement noise.
    pub noise_sigma: f64,
    /// CUDA device ordinal.
    pub device: usize,
    /// CUDA warm-up launches and timed repetitions.
    pub timing: TimingConfig,
    /// CUDA standalone counters from Nsight Compute (`--counters ncu`).
    pub ncu: Option<NcuRunner>,
}
