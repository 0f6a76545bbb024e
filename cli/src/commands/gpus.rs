//! `tally gpus`: the GPU presets with their headline figures, or with
//! `--backend cuda` the real devices the driver sees.

use std::io::Write;

use anyhow::Result;
use tally_gpu::cuda::timing::TimingConfig;
use tally_gpu::cuda::{list_devices, spec_from_device};
use tally_gpu::split_check::{check_split, PROBE_BYTES};
use tally_gpu::{BackendKind, GpuSpec};

use crate::args::{GpusArgs, TableFormat};
use crate::output::Table;

pub fn run(args: &GpusArgs) -> Result<()> {
    if let Some(name) = &args.spec {
        let spec = GpuSpec::resolve(name)?;
        write!(std::io::stdout().lock(), "{}", toml::to_string(&spec)?)?;
        return Ok(());
    }
    if BackendKind::parse(&args.backend)? == BackendKind::Cuda {
        return match &args.try_split {
            Some(sizes) => try_split(sizes, args.device),
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
        "partition_rule",
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
            d.partition_rule.clone(),
            spec,
        ]);
    }
    table.write(args.output.format, &mut std::io::stdout().lock())?;
    Ok(())
}

/// Green contexts of `sizes` SMs on device `device`, checked: SMs as asked and as
/// reported (a mismatch is a finding), the copy probe alone on each, and
/// for two partitions the pair beside the simulator's figures.
fn try_split(sizes: &[u32], device: usize) -> Result<()> {
    let c = check_split(device, sizes, TimingConfig::default())?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}: {}", c.device, c.made)?;
    for (i, p) in c.partitions.iter().enumerate() {
        writeln!(
            out,
            "partition {i}: asked {} SMs, green context has {}; copy of {} MiB alone: \
             median {:.1} us (IQR {:.1} %), {:.0} GB/s",
            p.asked_sms,
            p.reported_sms,
            PROBE_BYTES >> 20,
            p.solo.median_us,
            p.solo.spread_pct,
            p.solo_gbps
        )?;
    }
    if let Some(pair) = &c.pair {
        writeln!(
            out,
            "copy beside copy (each side timed while the other loops):"
        )?;
        let mut table = Table::new(&[
            "side",
            "sms",
            "solo_us",
            "co_us",
            "slowdown",
            "sim_solo_us",
            "sim_co_us",
            "sim_slowdown",
        ]);
        for (side, s) in ["a", "b"].iter().zip(pair) {
            table.push(vec![
                side.to_string(),
                s.sms.to_string(),
                format!("{:.1}", s.solo_us),
                format!("{:.1}", s.co_us),
                format!("{:.3}", s.co_us / s.solo_us),
                format!("{:.1}", s.sim_solo_us),
                format!("{:.1}", s.sim_co_us),
                format!("{:.3}", s.sim_co_us / s.sim_solo_us),
            ]);
        }
        table.write(TableFormat::Table, &mut out)?;
    }
    let wrong: Vec<usize> = (0..c.partitions.len())
        .filter(|&i| c.partitions[i].asked_sms != c.partitions[i].reported_sms)
        .collect();
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
        c.device
    )?;
    Ok(())
}
