//! `tally gpus`: the GPU presets with their headline figures.

use std::io::Write;

use anyhow::Result;
use tally_gpu::{BackendKind, GpuError, GpuSpec};

use crate::args::GpusArgs;
use crate::output::Table;

pub fn run(args: &GpusArgs) -> Result<()> {
    if let Some(name) = &args.spec {
        let spec = GpuSpec::resolve(name)?;
        write!(std::io::stdout().lock(), "{}", toml::to_string(&spec)?)?;
        return Ok(());
    }
    if BackendKind::parse(&args.backend)? == BackendKind::Cuda {
        return Err(GpuError::CudaNotBuilt.into());
    }
    let mut table = Table::new(&[
        "name",
        "cc",
        "sms",
        "clock_mhz",
        "l2_mb",
        "dram_gbps",
        "fp16_tensor_tflops",
        "fp32_tflops",
        "partition_min",
        "partition_step",
    ]);
    for g in GpuSpec::presets() {
        table.push(vec![
            g.name.clone(),
            g.compute_capability.clone(),
            g.sm_count.to_string(),
            format!("{:.0}", g.clock_mhz),
            format!("{:.0}", g.l2_bytes as f64 / (1024.0 * 1024.0)),
            format!("{:.0}", g.dram_gbps),
            format!("{:.0}", g.tensor_tflops()),
            format!("{:.1}", g.fp32_tflops()),
            g.partition.min_sms.to_string(),
            g.partition.step.to_string(),
        ]);
    }
    table.write(args.output.format, &mut std::io::stdout().lock())?;
    Ok(())
}
