//! Occupancy: how many blocks of a kernel fit on one SM, and which resource
//! limits it — the calculation of the CUDA occupancy calculator, reported the
//! way Nsight Compute does (`launch__occupancy_limit_*`).

use serde::{Deserialize, Serialize};

use crate::error::{GpuError, Result};
use crate::kernel::KernelSpec;
use crate::spec::GpuSpec;

/// The resource that bounds resident blocks per SM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OccupancyLimiter {
    Registers,
    SharedMem,
    Warps,
    Blocks,
}

impl OccupancyLimiter {
    pub fn as_str(&self) -> &'static str {
        match self {
            OccupancyLimiter::Registers => "registers",
            OccupancyLimiter::SharedMem => "shared_mem",
            OccupancyLimiter::Warps => "warps",
            OccupancyLimiter::Blocks => "blocks",
        }
    }
}

/// Resident blocks per SM under each limit, and the binding one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Occupancy {
    pub limit_registers: u32,
    pub limit_shared_mem: u32,
    pub limit_warps: u32,
    pub limit_blocks: u32,
    pub blocks_per_sm: u32,
    pub warps_per_block: u32,
    pub limiter: OccupancyLimiter,
    /// Theoretical occupancy: resident warps / maximum warps per SM.
    pub theoretical: f64,
}

impl Occupancy {
    pub fn warps_per_sm(&self) -> u32 {
        self.blocks_per_sm * self.warps_per_block
    }

    /// Compute the occupancy of `kernel` on `gpu`; a kernel that cannot fit a
    /// single block on an SM is an error naming the resource.
    pub fn of(kernel: &KernelSpec, gpu: &GpuSpec) -> Result<Occupancy> {
        let unlaunchable = |reason: String| GpuError::Unlaunchable {
            kernel: kernel.name.clone(),
            gpu: gpu.name.clone(),
            reason,
        };
        let threads = kernel.threads_per_block();
        if threads == 0 || threads > gpu.max_threads_per_block {
            return Err(unlaunchable(format!(
                "{threads} threads per block (limit {})",
                gpu.max_threads_per_block
            )));
        }
        if kernel.registers_per_thread > gpu.max_registers_per_thread {
            return Err(unlaunchable(format!(
                "{} registers per thread (limit {})",
                kernel.registers_per_thread, gpu.max_registers_per_thread
            )));
        }
        let smem = kernel.shared_mem_per_block();
        if smem > gpu.max_shared_mem_per_block {
            return Err(unlaunchable(format!(
                "{smem} bytes of shared memory per block (limit {})",
                gpu.max_shared_mem_per_block
            )));
        }

        let warps_per_block = kernel.warps_per_block();
        let limit_warps = gpu.max_warps_per_sm() / warps_per_block;
        let limit_blocks = gpu.max_blocks_per_sm;

        // Registers are allocated per warp, rounded up to the allocation unit.
        let regs_per_warp =
            (kernel.registers_per_thread.max(1) * 32).next_multiple_of(gpu.register_alloc_unit);
        let limit_registers = gpu.registers_per_sm / (regs_per_warp * warps_per_block);

        let limit_shared_mem = if smem == 0 {
            limit_blocks
        } else {
            let per_block = (smem + gpu.reserved_shared_mem_per_block)
                .next_multiple_of(gpu.shared_mem_alloc_unit);
            gpu.shared_mem_per_sm / per_block
        };

        // On a tie the first wins; shared memory goes last because a kernel
        // without shared memory reports the block limit for it.
        let candidates = [
            (limit_registers, OccupancyLimiter::Registers),
            (limit_warps, OccupancyLimiter::Warps),
            (limit_blocks, OccupancyLimiter::Blocks),
            (limit_shared_mem, OccupancyLimiter::SharedMem),
        ];
        let (blocks_per_sm, limiter) = candidates
            .into_iter()
            .min_by_key(|(limit, _)| *limit)
            .unwrap_or((0, OccupancyLimiter::Blocks));
        if blocks_per_sm == 0 {
            return Err(unlaunchable(format!(
                "not one block fits on an SM ({} limit)",
                limiter.as_str()
            )));
        }
        let theoretical =
            f64::from(blocks_per_sm * warps_per_block) / f64::from(gpu.max_warps_per_sm());
        Ok(Occupancy {
            limit_registers,
            limit_shared_mem,
            limit_warps,
            limit_blocks,
            blocks_per_sm,
            warps_per_block,
            limiter,
            theoretical,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{Dim3, KernelKind, MemoryUse, Work};

    fn kernel(threads: u32, regs: u32, smem: u32) -> KernelSpec {
        KernelSpec {
            name: "k".into(),
            kind: KernelKind::Gemm,
            grid: Dim3::linear(1),
            block: Dim3::linear(threads),
            registers_per_thread: regs,
            shared_mem_static: 0,
            shared_mem_dynamic: smem,
            work: Work::default(),
            memory: MemoryUse::default(),
        }
    }

    #[test]
    fn matches_the_cuda_occupancy_calculator() {
        let a100 = GpuSpec::preset("a100-40gb").expect("preset");
        // 256 threads x 128 regs = 32768 regs/block -> 2 blocks (registers).
        let occ = Occupancy::of(&kernel(256, 128, 0), &a100).expect("fits");
        assert_eq!(occ.blocks_per_sm, 2);
        assert_eq!(occ.limiter, OccupancyLimiter::Registers);
        // 64 KiB smem (+1 KiB reserved) per block: 164 KiB / 65 KiB = 2.
        let occ = Occupancy::of(&kernel(128, 32, 64 * 1024), &a100).expect("fits");
        assert_eq!(occ.limit_shared_mem, 2);
        assert_eq!(occ.limiter, OccupancyLimiter::SharedMem);
        // 1024 threads, few registers: 2 blocks by warps (64 warps/SM).
        let occ = Occupancy::of(&kernel(1024, 16, 0), &a100).expect("fits");
        assert_eq!(occ.limiter, OccupancyLimiter::Warps);
        assert_eq!(occ.blocks_per_sm, 2);
        assert!((occ.theoretical - 1.0).abs() < 1e-12);
        // 32 threads: 32 blocks/SM cap.
        let occ = Occupancy::of(&kernel(32, 16, 0), &a100).expect("fits");
        assert_eq!(occ.limiter, OccupancyLimiter::Blocks);
        assert_eq!(occ.blocks_per_sm, 32);
    }

    #[test]
    fn impossible_launches_are_errors() {
        let v100 = GpuSpec::preset("v100").expect("preset");
        let err = Occupancy::of(&kernel(256, 32, 200 * 1024), &v100).expect_err("too much smem");
        assert!(err.to_string().contains("shared memory"), "{err}");
        assert!(Occupancy::of(&kernel(1024, 255, 0), &v100).is_err());
    }
}
