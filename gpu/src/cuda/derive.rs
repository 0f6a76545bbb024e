//! A `GpuSpec` for a real device (`--gpu auto`). What the device reports is
//! taken as reported: SM count, clock, memory, per-SM limits, L2 size,
//! partition granularity, and the DRAM bandwidth from memory clock and bus
//! width (double data rate). What no query gives (per-SM FLOP and issue
//! rates per cycle, L1 and L2 bandwidth per cycle, latencies, launch
//! overhead) comes from the preset of the same compute capability, which
//! shares the SM design; a device with no such preset is refused by name.

use super::device::DeviceDescription;
use crate::error::{GpuError, Result};
use crate::spec::{GpuSpec, PartitionRule};

/// The preset whose SM design a compute capability shares.
fn template_for(cc: &str) -> Option<&'static str> {
    match cc {
        "7.0" => Some("v100"),
        "8.0" => Some("a100-40gb"),
        "8.9" => Some("l4"),
        "9.0" => Some("h100-sxm"),
        _ => None,
    }
}

/// A GPU name usable as a spec name: `NVIDIA H200` -> `nvidia-h200`.
fn spec_name(device: &str) -> String {
    let mut out = String::new();
    for c in device.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

/// The spec of `d`. Errors name the device and what is missing.
pub fn spec_from_device(d: &DeviceDescription) -> Result<GpuSpec> {
    let cc = d.compute_capability();
    let template =
        template_for(&cc)
            .and_then(GpuSpec::preset)
            .ok_or_else(|| GpuError::InvalidSpec {
                name: d.name.clone(),
                field: "compute_capability",
                problem: format!(
                "{cc} has no preset to take per-SM rates from (supported: 7.0, 8.0, 8.9, 9.0); \
                 write a spec file from `tally gpus --spec NAME`"
            ),
            })?;
    let spec = GpuSpec {
        name: spec_name(&d.name),
        compute_capability: cc,
        sm_count: d.sm_count,
        clock_mhz: d.clock_mhz,
        memory_gib: d.memory_bytes as f64 / f64::from(1u32 << 30),
        max_threads_per_sm: d.max_threads_per_sm,
        max_blocks_per_sm: d.max_blocks_per_sm,
        max_threads_per_block: d.max_threads_per_block,
        registers_per_sm: d.registers_per_sm,
        shared_mem_per_sm: d.shared_mem_per_sm,
        max_shared_mem_per_block: d.max_shared_mem_per_block,
        reserved_shared_mem_per_block: d.reserved_shared_mem_per_block,
        l2_bytes: d.l2_bytes,
        dram_gbps: d.dram_gbps(),
        partition: PartitionRule {
            min_sms: d.partition_min_sms,
            step: d.partition_step,
        },
        ..template
    };
    spec.validate()?;
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An H200 as the driver API and nvidia-smi describe it.
    fn h200() -> DeviceDescription {
        DeviceDescription {
            ordinal: 0,
            name: "NVIDIA H200".into(),
            cc_major: 9,
            cc_minor: 0,
            sm_count: 132,
            memory_bytes: 150_754_820_096,
            clock_mhz: 1980.0,
            memory_clock_mhz: 3201.0,
            memory_bus_bits: 6144,
            l2_bytes: 62_914_560,
            max_threads_per_sm: 2048,
            max_blocks_per_sm: 32,
            max_threads_per_block: 1024,
            registers_per_sm: 65536,
            shared_mem_per_sm: 233_472,
            max_shared_mem_per_block: 232_448,
            reserved_shared_mem_per_block: 1024,
            pci_bus_id: "0000:19:00.0".into(),
            compute_mode: "Default".into(),
            mig_mode: Some("Disabled".into()),
            driver_release: Some("580.95.05".into()),
            cuda_version: "13.0".into(),
            partition_min_sms: 8,
            partition_step: 8,
            partition_rule: "driver SM resource".into(),
        }
    }

    #[test]
    fn an_h200_gets_its_own_figures_and_hoppers_rates() {
        let s = spec_from_device(&h200()).expect("valid");
        let hopper = GpuSpec::preset("h100-sxm").expect("preset");
        assert_eq!(s.name, "nvidia-h200");
        assert_eq!(s.compute_capability, "9.0");
        assert_eq!(s.sm_count, 132);
        assert_eq!(s.l2_bytes, 60 << 20);
        // 3201 MHz x 2 x 6144 bits / 8 = 4916.7 GB/s (spec sheet: 4.8 TB/s).
        assert!((s.dram_gbps - 4916.7).abs() < 0.1, "{}", s.dram_gbps);
        assert!((s.memory_gib - 140.4).abs() < 0.1, "{}", s.memory_gib);
        assert_eq!(s.max_shared_mem_per_block, 232_448);
        assert_eq!((s.partition.min_sms, s.partition.step), (8, 8));
        // Not queryable: the same SM design's rates.
        assert_eq!(s.tensor_flops_per_cycle, hopper.tensor_flops_per_cycle);
        assert_eq!(s.l2_bytes_per_cycle, hopper.l2_bytes_per_cycle);
    }

    #[test]
    fn unknown_designs_and_broken_figures_are_refused() {
        let mut d = h200();
        d.cc_minor = 5;
        let e = spec_from_device(&d).unwrap_err().to_string();
        assert!(e.contains("9.5 has no preset"), "{e}");
        let mut d = h200();
        d.sm_count = 0;
        assert!(spec_from_device(&d).is_err());
        assert_eq!(spec_name("NVIDIA A100-SXM4-80GB "), "nvidia-a100-sxm4-80gb");
    }
}
