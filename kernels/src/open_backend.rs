//! Opening a backend by kind: the one place that knows both twins, the
//! simulator (tally-gpu) and the CUDA backend (this crate).

use tally_gpu::cuda::driver_present;
use tally_gpu::{Backend, BackendKind, BackendOptions, GpuError, GpuSpec, Result, SimBackend};

use crate::cuda_backend::CudaBackend;

/// Open a backend for `spec`. Without a driver, CUDA is the NO_DRIVER
/// error (checked before anything touches cudarc).
pub fn open_backend(
    kind: BackendKind,
    spec: GpuSpec,
    options: BackendOptions,
) -> Result<Box<dyn Backend>> {
    match kind {
        BackendKind::Sim => Ok(Box::new(SimBackend::new(
            spec,
            options.seed,
            options.noise_sigma,
        ))),
        BackendKind::Cuda if !driver_present() => Err(GpuError::NoDriver),
        BackendKind::Cuda => {
            let cuda = CudaBackend::open(options.device, spec, options.seed, options.timing)?;
            Ok(Box::new(match options.ncu {
                Some(runner) => cuda.with_ncu(runner)?,
                None => cuda,
            }))
        }
    }
}
