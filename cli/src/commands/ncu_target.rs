//! `tally ncu-target` (hidden): one stand-in launched once on a partition,
//! the child process `tally profile --counters ncu` runs under Nsight
//! Compute; and the runner that starts it.

use anyhow::{Context, Result};
use tally_gpu::cuda::ncu::{locate_ncu, NcuRunner};
use tally_gpu::cuda::TimingConfig;
use tally_gpu::{GpuSpec, KernelSpec};
use tally_kernels::CudaBackend;

use crate::args::{NcuTargetArgs, ProfileArgs};

pub fn run(args: &NcuTargetArgs) -> Result<()> {
    let text = std::fs::read_to_string(&args.kernel)
        .with_context(|| format!("reading `{}`", args.kernel.display()))?;
    let kernel: KernelSpec = toml::from_str(&text)
        .with_context(|| format!("`{}` is not a kernel spec", args.kernel.display()))?;
    let spec = GpuSpec::resolve_on(tally_gpu::AUTO, args.device)?;
    let timing = TimingConfig {
        warmup: 0,
        repetitions: 1,
    };
    let backend = CudaBackend::open(args.device, spec, args.seed, timing)?;
    backend.launch_once(&kernel, args.sm_count)?;
    Ok(())
}

/// The runner `tally profile --counters ncu` hands the CUDA backend: this
/// executable's `ncu-target` with the profile's device and seed.
pub fn runner(args: &ProfileArgs) -> Result<NcuRunner> {
    let exe = std::env::current_exe().context("locating the tally executable")?;
    Ok(NcuRunner {
        ncu: locate_ncu()?,
        target: vec![
            exe.into(),
            "ncu-target".into(),
            "--device".into(),
            args.cuda.device.to_string().into(),
            "--seed".into(),
            args.seed.to_string().into(),
        ],
        scratch: std::env::temp_dir().join(format!("tally-ncu-{}", std::process::id())),
    })
}
