//! The roofline label of a kernel: compute- or memory-bound by arithmetic
//! intensity against the GPU's knee for the pipe the kernel mostly uses —
//! the binary label Orion schedules by and the "intensity rule" baseline.

use serde::{Deserialize, Serialize};

use crate::kernel::KernelSpec;
use crate::spec::GpuSpec;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    Compute,
    Memory,
}

impl Bound {
    pub fn as_str(&self) -> &'static str {
        match self {
            Bound::Compute => "compute",
            Bound::Memory => "memory",
        }
    }
}

/// FLOP per DRAM byte at which the kernel's dominant pipe and DRAM balance.
pub fn knee(kernel: &KernelSpec, gpu: &GpuSpec) -> f64 {
    let w = &kernel.work;
    let per_sm = if w.tensor_flops >= w.fp32_flops().max(w.fp16_flops()) {
        gpu.tensor_flops_per_cycle
    } else if w.fp16_flops() > w.fp32_flops() {
        gpu.fp16_flops_per_cycle
    } else {
        gpu.fp32_flops_per_cycle
    };
    per_sm * f64::from(gpu.sm_count) / gpu.dram_bytes_per_cycle()
}

/// Compute-bound when the arithmetic intensity reaches the knee.
pub fn bound(kernel: &KernelSpec, gpu: &GpuSpec) -> Bound {
    if kernel.arithmetic_intensity() >= knee(kernel, gpu) {
        Bound::Compute
    } else {
        Bound::Memory
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{Dim3, KernelKind, MemoryUse, Work};

    #[test]
    fn gemm_is_compute_bound_and_streaming_is_memory_bound() {
        let v100 = GpuSpec::preset("v100").expect("preset");
        // V100 FP32 knee: 128 x 80 x 1.53 GHz / 900 GB/s = 17.4 FLOP/B.
        let mut k = KernelSpec {
            name: "k".into(),
            kind: KernelKind::Elementwise,
            grid: Dim3::linear(1),
            block: Dim3::linear(32),
            registers_per_thread: 16,
            shared_mem_static: 0,
            shared_mem_dynamic: 0,
            work: Work {
                fadd: 1e6,
                ..Work::default()
            },
            memory: MemoryUse {
                dram_read_bytes: 1e6,
                ..MemoryUse::default()
            },
        };
        assert!((knee(&k, &v100) - 17.408).abs() < 1e-3);
        assert_eq!(bound(&k, &v100), Bound::Memory);
        k.work.tensor_flops = 1e9;
        assert_eq!(bound(&k, &v100), Bound::Compute);
    }
}
