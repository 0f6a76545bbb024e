//! `tally gpus`: the GPU presets with their headline figures, or with
//! `--backend cuda` the real devices the driver sees.

use std::io::Write;

use anyhow::Result;
use tally_gpu::cuda::green::{create_partitions, time_copy};
use tally_gpu::cuda::timing::TimingConfig;
use tally_gpu::cuda::Arch;
use tally_gpu::cuda::{describe_device, list_devices, spec_from_device};
use tally_gpu::{BackendKind, GpuSpec};

use crate::args::GpusArgs;
use crate::output::Table;

pub fn run(args: &GpusArgs) -> Result<()> {
    if let Some(name) = &args.spec {
        let spec = GpuSpec::resolve(name)?;
        write!(std::io::stdout().lock(), "{}", toml::to_string(&spec)?)?;
        return Ok(());
    }
    if BackendKind::parse(&args.backend)? == BackendKind::Cuda {
        return match &args.try_split {
            Some(sizes) => try_split(sizes),
            None => devices(args),
        };
    }
    if args.try_split.is_some() {
        anyhow::bail!("--try-split needs --backend cuda");
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

/// The real devices, one row each, with the spec `--gpu auto` derives.
fn devices(args: &GpusArgs) -> Result<()> {
    let mut table = Table::new(&[
        "device",
        "name",
        "cc",
        "sms",
        "memory_gib",
        "clock_mhz",
        "mem_clock_mhz",
        "l2_mb",
        "dram_gbps",
        "driver",
        "cuda",
        "mig",
        "compute_mode",
        "partition_min",
        "partition_step",
        "auto_spec",
    ]);
    for d in list_devices()? {
        let spec = spec_from_device(&d).map_or_else(|e| format!("none: {e}"), |s| s.name);
        table.push(vec![
            d.ordinal.to_string(),
            d.name.clone(),
            d.compute_capability(),
            d.sm_count.to_string(),
            format!("{:.1}", d.memory_bytes as f64 / f64::from(1u32 << 30)),
            format!("{:.0}", d.clock_mhz),
            format!("{:.0}", d.memory_clock_mhz),
            format!("{:.0}", d.l2_bytes as f64 / (1024.0 * 1024.0)),
            format!("{:.0}", d.dram_gbps()),
            d.driver_release.clone().unwrap_or_else(|| "-".into()),
            d.cuda_version.clone(),
            d.mig_mode.clone().unwrap_or_else(|| "-".into()),
            d.compute_mode.clone(),
            d.partition_min_sms.to_string(),
            d.partition_step.to_string(),
            spec,
        ]);
    }
    table.write(args.output.format, &mut std::io::stdout().lock())?;
    Ok(())
}

/// Bytes the partition probe copies: large enough that launch overhead is
/// noise, small enough to take well under a millisecond on an H100.
const PROBE_BYTES: usize = 256 << 20;

/// Green contexts of `sizes` SMs on device 0: each one's SM count as asked
/// and as the driver reports it (a mismatch is a finding), and a copy timed
/// on each, whose bandwidth should grow with the partition's SMs.
fn try_split(sizes: &[u32]) -> Result<()> {
    let d = describe_device(0)?;
    let arch = Arch::from_capability(d.cc_major, d.cc_minor).ok_or_else(|| {
        anyhow::anyhow!(
            "compute capability {} is not one the kernels are built for (8.0-9.0)",
            d.compute_capability()
        )
    })?;
    // Enough resident blocks to fill every SM of the device, so a partition
    // with fewer SMs has work queued for the SMs it lacks.
    let blocks = d.sm_count * (d.max_threads_per_sm / 256).max(1);
    let parts = create_partitions(0, d.cc_major, sizes)?;
    let mut out = std::io::stdout().lock();
    let mut wrong = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let reported = p.reported_sm_count()?;
        let t = time_copy(p, arch, PROBE_BYTES, blocks, TimingConfig::default())?;
        writeln!(
            out,
            "partition {i}: asked {} SMs, green context has {reported}; copy of {} MiB: \
             median {:.1} us (IQR {:.1} %), {:.0} GB/s",
            p.sm_count(),
            PROBE_BYTES >> 20,
            t.median_us,
            t.spread_pct,
            2.0 * PROBE_BYTES as f64 / t.median_us / 1e3
        )?;
        if reported != p.sm_count() {
            wrong.push(i);
        }
    }
    drop(parts);
    if !wrong.is_empty() {
        return Err(crate::commands::Finding(format!(
            "partitions {wrong:?} do not have the SMs asked for"
        ))
        .into());
    }
    writeln!(
        out,
        "{} green contexts created and released on {}",
        sizes.len(),
        d.name
    )?;
    Ok(())
}
