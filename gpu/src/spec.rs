//! `GpuSpec`: what the simulator and the occupancy calculator know about a GPU,
//! the public presets, and loading a user's own GPU from a TOML file.
//!
//! Preset figures come from public spec sheets and whitepapers (SM counts,
//! clocks, L2 size, DRAM bandwidth, per-SM limits, tensor peak). Figures that
//! vendors do not publish (L2 bandwidth, latencies) are microbenchmark
//! estimates from the literature, rounded; they are marked as such below.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{GpuError, Result};

/// How SMs may be split between co-located tasks (green contexts on CUDA).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PartitionRule {
    /// Smallest partition the driver hands out.
    pub min_sms: u32,
    /// Partitions grow in steps of this many SMs.
    pub step: u32,
}

impl PartitionRule {
    /// Whether a partition of `sms` SMs can be made on a GPU with `total` SMs.
    /// The whole device is always allowed, aligned or not.
    pub fn allows(&self, sms: u32, total: u32) -> bool {
        sms == total || (sms >= self.min_sms && sms <= total && sms.is_multiple_of(self.step))
    }

    /// Every allowed partition size, ascending, ending with the whole device.
    pub fn sizes(&self, total: u32) -> Vec<u32> {
        let mut sizes: Vec<u32> = (1..=total).filter(|&s| self.allows(s, total)).collect();
        sizes.dedup();
        sizes
    }

    /// The largest allowed size not above `sms` (at least the minimum).
    pub fn round_down(&self, sms: u32, total: u32) -> u32 {
        if sms >= total {
            return total;
        }
        let stepped = (sms / self.step) * self.step;
        stepped.max(self.min_sms)
    }
}

/// A GPU model: SM resources, compute peaks, memory hierarchy, partitioning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuSpec {
    pub name: String,
    /// Compute capability as "major.minor", e.g. "9.0".
    pub compute_capability: String,
    pub sm_count: u32,
    /// Boost clock the peaks are quoted at.
    pub clock_mhz: f64,
    pub memory_gib: f64,

    // Per-SM limits used by the occupancy calculator.
    pub max_threads_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub max_threads_per_block: u32,
    pub registers_per_sm: u32,
    pub max_registers_per_thread: u32,
    /// Registers are allocated per warp in units of this many.
    pub register_alloc_unit: u32,
    pub shared_mem_per_sm: u32,
    pub max_shared_mem_per_block: u32,
    pub shared_mem_alloc_unit: u32,
    /// Shared memory the driver reserves per resident block (1 KiB from 8.0).
    pub reserved_shared_mem_per_block: u32,

    // Per-SM compute peaks, per cycle.
    /// FP32 FLOP per cycle per SM (an FFMA counts 2).
    pub fp32_flops_per_cycle: f64,
    /// Non-tensor FP16 FLOP per cycle per SM (HFMA2 counts 4).
    pub fp16_flops_per_cycle: f64,
    /// Dense FP16/BF16 tensor-core FLOP per cycle per SM.
    pub tensor_flops_per_cycle: f64,
    /// Warp instructions issued per cycle per SM (one per scheduler).
    pub issue_per_cycle: f64,

    // Memory hierarchy.
    pub l1_bytes_per_sm: u32,
    pub l1_bytes_per_cycle: f64,
    /// Bytes per cycle one SM can exchange with L2 (its crossbar port).
    pub l2_port_bytes_per_cycle: f64,
    pub l2_bytes: u64,
    /// Aggregate L2 bandwidth, bytes per cycle (microbenchmark estimate).
    pub l2_bytes_per_cycle: f64,
    pub dram_gbps: f64,
    /// Unloaded L2 hit latency (microbenchmark estimate).
    pub l2_latency_cycles: f64,
    /// Extra unloaded latency of an L2 miss served by DRAM (estimate).
    pub dram_latency_ns: f64,
    /// Fixed cost of a kernel launch as seen by `gpu__time_duration`.
    pub launch_overhead_us: f64,

    pub partition: PartitionRule,
}

/// The `--gpu` value that asks for the real device's own spec.
pub const AUTO: &str = "auto";

/// Names of the built-in presets, in the order `tally gpus` lists them.
pub const PRESET_NAMES: [&str; 6] = ["v100", "a100-40gb", "a100-80gb", "h100-sxm", "h200", "l4"];

impl GpuSpec {
    /// A built-in preset by name.
    pub fn preset(name: &str) -> Option<GpuSpec> {
        let spec = match name {
            "v100" => volta_v100(),
            "a100-40gb" => ampere_a100(name, 1555.0, 40.0),
            "a100-80gb" => ampere_a100(name, 2039.0, 80.0),
            "h100-sxm" => hopper(name, 3350.0, 50, 80.0),
            "h200" => hopper(name, 4800.0, 60, 141.0),
            "l4" => ada_l4(),
            _ => return None,
        };
        Some(spec)
    }

    /// Every preset.
    pub fn presets() -> Vec<GpuSpec> {
        PRESET_NAMES
            .iter()
            .filter_map(|n| GpuSpec::preset(n))
            .collect()
    }

    /// A preset name or a path to a `.toml` spec file; `auto` (a real
    /// device's derived spec) is resolved one floor up, in `auto.rs`.
    pub(crate) fn resolve_named(name_or_path: &str) -> Result<GpuSpec> {
        if let Some(spec) = GpuSpec::preset(name_or_path) {
            return Ok(spec);
        }
        let path = Path::new(name_or_path);
        if name_or_path.ends_with(".toml") || path.exists() {
            return GpuSpec::from_toml_file(path);
        }
        Err(GpuError::UnknownGpu {
            name: name_or_path.to_string(),
            valid: format!("{}, {AUTO}", PRESET_NAMES.join(", ")),
        })
    }

    /// Load and validate a spec file (every field of `GpuSpec`, TOML).
    pub fn from_toml_file(path: &Path) -> Result<GpuSpec> {
        let text = std::fs::read_to_string(path).map_err(|source| GpuError::ReadSpec {
            path: path.to_path_buf(),
            source,
        })?;
        let spec: GpuSpec = toml::from_str(&text).map_err(|e| GpuError::ParseSpec {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        spec.validate()?;
        Ok(spec)
    }

    /// Reject specs the model cannot work with (zero or negative resources).
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &'static str, problem: &str| GpuError::InvalidSpec {
            name: self.name.clone(),
            field,
            problem: problem.to_string(),
        };
        let positive_ints: [(&'static str, u64); 12] = [
            ("sm_count", self.sm_count.into()),
            ("max_threads_per_sm", self.max_threads_per_sm.into()),
            ("max_blocks_per_sm", self.max_blocks_per_sm.into()),
            ("max_threads_per_block", self.max_threads_per_block.into()),
            ("registers_per_sm", self.registers_per_sm.into()),
            (
                "max_registers_per_thread",
                self.max_registers_per_thread.into(),
            ),
            ("register_alloc_unit", self.register_alloc_unit.into()),
            ("shared_mem_per_sm", self.shared_mem_per_sm.into()),
            ("shared_mem_alloc_unit", self.shared_mem_alloc_unit.into()),
            ("l2_bytes", self.l2_bytes),
            ("partition.min_sms", self.partition.min_sms.into()),
            ("partition.step", self.partition.step.into()),
        ];
        for (field, value) in positive_ints {
            if value == 0 {
                return Err(bad(field, "must be greater than 0"));
            }
        }
        let positive_floats = [
            ("clock_mhz", self.clock_mhz),
            ("fp32_flops_per_cycle", self.fp32_flops_per_cycle),
            ("fp16_flops_per_cycle", self.fp16_flops_per_cycle),
            ("tensor_flops_per_cycle", self.tensor_flops_per_cycle),
            ("issue_per_cycle", self.issue_per_cycle),
            ("l1_bytes_per_cycle", self.l1_bytes_per_cycle),
            ("l2_port_bytes_per_cycle", self.l2_port_bytes_per_cycle),
            ("l2_bytes_per_cycle", self.l2_bytes_per_cycle),
            ("dram_gbps", self.dram_gbps),
            ("l2_latency_cycles", self.l2_latency_cycles),
            ("dram_latency_ns", self.dram_latency_ns),
        ];
        for (field, value) in positive_floats {
            if !(value.is_finite() && value > 0.0) {
                return Err(bad(
                    field,
                    &format!("must be a positive number, got {value}"),
                ));
            }
        }
        if !(self.launch_overhead_us.is_finite() && self.launch_overhead_us >= 0.0) {
            return Err(bad("launch_overhead_us", "must be >= 0"));
        }
        if !self.max_threads_per_sm.is_multiple_of(32) {
            return Err(bad("max_threads_per_sm", "must be a multiple of 32"));
        }
        if self.partition.min_sms > self.sm_count {
            return Err(bad("partition.min_sms", "exceeds sm_count"));
        }
        Ok(())
    }

    /// Clock in cycles per microsecond.
    pub fn cycles_per_us(&self) -> f64 {
        self.clock_mhz
    }

    pub fn max_warps_per_sm(&self) -> u32 {
        self.max_threads_per_sm / 32
    }

    /// DRAM bandwidth in bytes per cycle.
    pub fn dram_bytes_per_cycle(&self) -> f64 {
        self.dram_gbps * 1e3 / self.clock_mhz
    }

    /// Device-wide dense tensor peak in TFLOP/s.
    pub fn tensor_tflops(&self) -> f64 {
        self.tensor_flops_per_cycle * f64::from(self.sm_count) * self.clock_mhz * 1e-6
    }

    /// Device-wide FP32 peak in TFLOP/s.
    pub fn fp32_tflops(&self) -> f64 {
        self.fp32_flops_per_cycle * f64::from(self.sm_count) * self.clock_mhz * 1e-6
    }

    /// Roofline knee for tensor math vs DRAM, FLOP per byte.
    pub fn ridge_flops_per_byte(&self) -> f64 {
        self.tensor_flops_per_cycle * f64::from(self.sm_count) / self.dram_bytes_per_cycle()
    }

    /// Major compute capability (7 Volta, 8 Ampere/Ada, 9 Hopper).
    pub fn major(&self) -> u32 {
        self.compute_capability
            .split('.')
            .next()
            .and_then(|m| m.parse().ok())
            .unwrap_or(0)
    }
}

/// Fields shared by every preset since Volta; presets override what differs.
fn base(name: &str) -> GpuSpec {
    GpuSpec {
        name: name.to_string(),
        compute_capability: String::new(),
        sm_count: 0,
        clock_mhz: 0.0,
        memory_gib: 0.0,
        max_threads_per_sm: 2048,
        max_blocks_per_sm: 32,
        max_threads_per_block: 1024,
        registers_per_sm: 65536,
        max_registers_per_thread: 255,
        register_alloc_unit: 256,
        shared_mem_per_sm: 0,
        max_shared_mem_per_block: 0,
        shared_mem_alloc_unit: 128,
        reserved_shared_mem_per_block: 1024,
        fp32_flops_per_cycle: 128.0,
        fp16_flops_per_cycle: 256.0,
        tensor_flops_per_cycle: 0.0,
        issue_per_cycle: 4.0,
        l1_bytes_per_sm: 0,
        l1_bytes_per_cycle: 128.0,
        l2_port_bytes_per_cycle: 64.0,
        l2_bytes: 0,
        l2_bytes_per_cycle: 0.0,
        dram_gbps: 0.0,
        l2_latency_cycles: 200.0,
        dram_latency_ns: 300.0,
        launch_overhead_us: 1.5,
        partition: PartitionRule {
            min_sms: 4,
            step: 2,
        },
    }
}

const MIB: u64 = 1 << 20;

fn volta_v100() -> GpuSpec {
    GpuSpec {
        compute_capability: "7.0".into(),
        sm_count: 80,
        clock_mhz: 1530.0,
        memory_gib: 16.0,
        shared_mem_per_sm: 96 * 1024,
        max_shared_mem_per_block: 96 * 1024,
        shared_mem_alloc_unit: 256,
        reserved_shared_mem_per_block: 0,
        // 8 tensor cores x 64 FMA x 2.
        tensor_flops_per_cycle: 1024.0,
        l1_bytes_per_sm: 128 * 1024,
        l2_bytes: 6 * MIB,
        // Whitepaper L2 read bandwidth per clock (A100 whitepaper table);
        // the queueing model delivers ~80 % of it sustained, close to the
        // ~2.1-2.5 TB/s microbenchmarks measure.
        l2_bytes_per_cycle: 2048.0,
        dram_gbps: 900.0,
        l2_latency_cycles: 193.0,
        dram_latency_ns: 280.0,
        // MPS thread percentages: TPC (2-SM) granularity.
        partition: PartitionRule {
            min_sms: 2,
            step: 2,
        },
        ..base("v100")
    }
}

fn ampere_a100(name: &str, dram_gbps: f64, memory_gib: f64) -> GpuSpec {
    GpuSpec {
        compute_capability: "8.0".into(),
        sm_count: 108,
        clock_mhz: 1410.0,
        memory_gib,
        shared_mem_per_sm: 164 * 1024,
        max_shared_mem_per_block: 163 * 1024,
        fp16_flops_per_cycle: 512.0,
        // 312 TFLOP/s dense FP16 / (108 SMs x 1.41 GHz).
        tensor_flops_per_cycle: 2048.0,
        l1_bytes_per_sm: 192 * 1024,
        l2_bytes: 40 * MIB,
        // Whitepaper: 5120 B/clk, 2.3x V100.
        l2_bytes_per_cycle: 5120.0,
        dram_gbps,
        l2_latency_cycles: 200.0,
        dram_latency_ns: 290.0,
        ..base(name)
    }
}

fn hopper(name: &str, dram_gbps: f64, l2_mib: u64, memory_gib: f64) -> GpuSpec {
    GpuSpec {
        compute_capability: "9.0".into(),
        sm_count: 132,
        clock_mhz: 1980.0,
        memory_gib,
        shared_mem_per_sm: 228 * 1024,
        max_shared_mem_per_block: 227 * 1024,
        fp32_flops_per_cycle: 256.0,
        fp16_flops_per_cycle: 512.0,
        // 4 tensor cores x 512 FP16 FMA x 2.
        tensor_flops_per_cycle: 4096.0,
        l1_bytes_per_sm: 256 * 1024,
        // TMA multicast and distributed shared memory halve per-SM L2 reads
        // of GEMM tiles; modelled as a wider port.
        l2_port_bytes_per_cycle: 128.0,
        l2_bytes: l2_mib * MIB,
        // No official figure: twice A100 per clock (Hopper doubles the
        // SM-to-L2 crossbar), an estimate.
        l2_bytes_per_cycle: 10240.0,
        dram_gbps,
        l2_latency_cycles: 260.0,
        dram_latency_ns: 300.0,
        // Green contexts on compute capability 9.x: groups of 8 SMs.
        partition: PartitionRule {
            min_sms: 8,
            step: 8,
        },
        ..base(name)
    }
}

fn ada_l4() -> GpuSpec {
    GpuSpec {
        compute_capability: "8.9".into(),
        sm_count: 58,
        clock_mhz: 2040.0,
        memory_gib: 24.0,
        max_threads_per_sm: 1536,
        max_blocks_per_sm: 24,
        shared_mem_per_sm: 100 * 1024,
        max_shared_mem_per_block: 99 * 1024,
        fp32_flops_per_cycle: 256.0,
        fp16_flops_per_cycle: 256.0,
        // 121 TFLOP/s dense FP16 / (58 SMs x 2.04 GHz).
        tensor_flops_per_cycle: 1024.0,
        l1_bytes_per_sm: 128 * 1024,
        l2_bytes: 48 * MIB,
        // No official figure: an estimate at Ampere's per-SM ratio.
        l2_bytes_per_cycle: 2560.0,
        dram_gbps: 300.0,
        l2_latency_cycles: 220.0,
        dram_latency_ns: 320.0,
        ..base("l4")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_match_public_figures() {
        let h100 = GpuSpec::preset("h100-sxm").expect("preset");
        assert_eq!(h100.sm_count, 132);
        assert_eq!(h100.l2_bytes, 50 * MIB);
        // Dense FP16 tensor peak ~989 TFLOP/s at 1.83 GHz; 1.07 at 1.98 GHz.
        assert!((h100.tensor_tflops() - 1070.0).abs() < 10.0);
        let a100 = GpuSpec::preset("a100-40gb").expect("preset");
        assert!((a100.tensor_tflops() - 312.0).abs() < 2.0);
        assert_eq!(GpuSpec::preset("v100").expect("preset").l2_bytes, 6 * MIB);
        for spec in GpuSpec::presets() {
            spec.validate().expect("presets are valid");
        }
    }

    #[test]
    fn partition_granularity_per_generation() {
        let h = GpuSpec::preset("h200").expect("preset");
        assert_eq!(h.partition.sizes(h.sm_count)[..3], [8, 16, 24]);
        assert_eq!(*h.partition.sizes(h.sm_count).last().expect("sizes"), 132);
        assert!(!h.partition.allows(12, 132));
        let a = GpuSpec::preset("a100-80gb").expect("preset");
        assert_eq!(a.partition.sizes(a.sm_count)[..3], [4, 6, 8]);
        assert!(!a.partition.allows(2, 108));
        assert_eq!(a.partition.round_down(27, 108), 26);
    }

    #[test]
    fn toml_round_trip_and_unknown_names() {
        let spec = GpuSpec::preset("l4").expect("preset");
        let text = toml::to_string(&spec).expect("serialise");
        let back: GpuSpec = toml::from_str(&text).expect("parse");
        assert_eq!(back, spec);
        let err = GpuSpec::resolve("b300").expect_err("unknown");
        assert!(err.to_string().contains("h100-sxm"), "{err}");
    }
}
