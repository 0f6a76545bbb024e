//! A kernel placed on a partition: everything about its execution that does
//! not depend on the co-runner, computed once, and the cheap evaluation of
//! its duration for given shared-path conditions (the solver's inner step).

use crate::error::Result;
use crate::kernel::KernelSpec;
use crate::occupancy::Occupancy;
use crate::spec::GpuSpec;

/// Warps per SM needed to keep the issue slots and pipes busy; below it,
/// compute throughput falls in proportion (too few warps to hide latency).
const SATURATING_WARPS: f64 = 8.0;

/// Shared-path conditions a kernel runs under.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PathState {
    /// Loaded L2 hit latency, cycles.
    pub l2_latency: f64,
    /// Loaded extra latency of a DRAM access, cycles.
    pub dram_latency: f64,
    /// L2 capacity the kernel effectively holds, bytes.
    pub l2_capacity: f64,
}

/// Result of evaluating a prepared kernel under a `PathState`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Evaluation {
    /// Duration including launch overhead, cycles.
    pub cycles: f64,
    /// Kernel body only (what the bounds combine to), cycles.
    pub body_cycles: f64,
    /// Derivative of `cycles` with respect to the average access latency
    /// (the solver's Newton steps use it).
    pub dcycles_dlatency: f64,
    /// Share of L2 requests served by DRAM (reads and writes).
    pub miss_rate: f64,
    /// DRAM bytes read (compulsory + re-reads that missed).
    pub dram_read_bytes: f64,
    /// Fraction of L2 requests that hit.
    pub l2_hit_rate: f64,
    /// Average bytes per cycle this kernel pulls through L2 and DRAM.
    pub l2_rate: f64,
    pub dram_rate: f64,
}

/// Per-(kernel, partition) constants.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedKernel {
    pub(crate) sm_count: u32,
    pub(crate) occupancy: Occupancy,
    /// Blocks the busiest SM runs (wave quantisation lives here).
    pub(crate) blocks_busiest: f64,
    /// Blocks resident at once on the busiest SM.
    pub(crate) concurrent_blocks: f64,
    /// Pipe-busy cycles of the busiest SM if issue were perfect.
    pub(crate) pipe_cycles: f64,
    /// Issue-slot cycles of the busiest SM.
    pub(crate) issue_cycles: f64,
    /// Tensor-pipe cycles of the busiest SM.
    pub(crate) tensor_cycles: f64,
    /// Compute bound after the occupancy efficiency.
    pub(crate) compute_cycles: f64,
    pub(crate) l1_cycles: f64,
    pub(crate) port_cycles: f64,
    /// L2 bytes through the busiest SM.
    pub(crate) busiest_l2_bytes: f64,
    /// Bytes the busiest SM keeps in flight.
    pub(crate) inflight_bytes: f64,
    pub(crate) total_l2_bytes: f64,
    pub(crate) compulsory_read: f64,
    pub(crate) compulsory_write: f64,
    /// Re-read bytes that hit only if the working set fits.
    pub(crate) reuse_bytes: f64,
    pub(crate) working_set: f64,
    pub(crate) overhead_cycles: f64,
}

impl PreparedKernel {
    /// Place `kernel` on `sm_count` SMs of `gpu`.
    pub fn new(kernel: &KernelSpec, sm_count: u32, gpu: &GpuSpec) -> Result<PreparedKernel> {
        let occupancy = Occupancy::of(kernel, gpu)?;
        let blocks = kernel.blocks() as f64;
        let k = f64::from(sm_count.max(1));
        let blocks_busiest = (blocks / k).ceil();
        let concurrent_blocks = blocks_busiest.min(f64::from(occupancy.blocks_per_sm));
        let warps_per_block = f64::from(occupancy.warps_per_block);
        let active_warps = concurrent_blocks * warps_per_block;

        let w = &kernel.work;
        let per_block = |total: f64| total / blocks;
        let fp32_insts = per_block(w.fadd + w.fmul + w.ffma);
        let fp16_insts = per_block(w.hadd + w.hmul + w.hfma);
        let tensor = per_block(w.tensor_flops);
        // One m16n8k16 MMA is 4096 FLOPs per warp instruction.
        let warp_insts =
            (fp32_insts + fp16_insts) / 32.0 + tensor / 4096.0 + per_block(w.other_warp_insts);
        let fp32_cycles = fp32_insts / (gpu.fp32_flops_per_cycle / 2.0);
        let fp16_cycles = fp16_insts / (gpu.fp16_flops_per_cycle / 2.0);
        let tensor_cycles_block = tensor / gpu.tensor_flops_per_cycle;
        let issue_cycles_block = warp_insts / gpu.issue_per_cycle;
        let pipe_block = fp32_cycles
            .max(fp16_cycles)
            .max(tensor_cycles_block)
            .max(issue_cycles_block);
        let efficiency = (active_warps / SATURATING_WARPS).min(1.0);

        let m = &kernel.memory;
        let l1_block = per_block(m.l1_bytes);
        let l2_block = per_block(m.l2_bytes);
        let compulsory_read = m.dram_read_bytes.min(m.l2_bytes);
        let compulsory_write = m.dram_write_bytes;
        let reuse_bytes = (m.l2_bytes - compulsory_read - compulsory_write).max(0.0);

        Ok(PreparedKernel {
            sm_count,
            occupancy,
            blocks_busiest,
            concurrent_blocks,
            pipe_cycles: blocks_busiest * pipe_block,
            issue_cycles: blocks_busiest * issue_cycles_block,
            tensor_cycles: blocks_busiest * tensor_cycles_block,
            compute_cycles: blocks_busiest * pipe_block / efficiency,
            l1_cycles: blocks_busiest * l1_block / gpu.l1_bytes_per_cycle,
            port_cycles: blocks_busiest * l2_block / gpu.l2_port_bytes_per_cycle,
            busiest_l2_bytes: blocks_busiest * l2_block,
            inflight_bytes: active_warps * m.inflight_bytes_per_warp,
            total_l2_bytes: m.l2_bytes,
            compulsory_read,
            compulsory_write,
            reuse_bytes,
            working_set: m.l2_working_set,
            overhead_cycles: gpu.launch_overhead_us * gpu.cycles_per_us(),
        })
    }

    /// Duration and shared-path demand under `state`.
    ///
    /// Re-reads hit in proportion to the share of the working set that fits
    /// in the L2 capacity held; the busiest SM's memory time follows Little's
    /// law (bytes x average latency / bytes in flight); the bounds combine by
    /// a soft maximum.
    #[inline]
    pub(crate) fn evaluate(&self, state: &PathState) -> Evaluation {
        let fit = if self.working_set <= state.l2_capacity {
            1.0
        } else {
            state.l2_capacity / self.working_set
        };
        let dram_read = self.compulsory_read + self.reuse_bytes * (1.0 - fit);
        let dram_total = dram_read + self.compulsory_write;
        let (miss_rate, hit_rate) = if self.total_l2_bytes > 0.0 {
            let miss = (dram_total / self.total_l2_bytes).min(1.0);
            (miss, 1.0 - (dram_read / self.total_l2_bytes).min(1.0))
        } else {
            (0.0, 1.0)
        };
        let latency = state.l2_latency + miss_rate * state.dram_latency;
        let latency_cycles = if self.inflight_bytes > 0.0 {
            self.busiest_l2_bytes * latency / self.inflight_bytes
        } else {
            0.0
        };
        let body = soft_max(
            self.compute_cycles,
            self.l1_cycles,
            self.port_cycles,
            latency_cycles,
        );
        let cycles = body + self.overhead_cycles;
        // d(soft max)/d(t_lat) = (t_lat / body)^3; d(t_lat)/dL = t_lat / L.
        let dcycles_dlatency = if body > 0.0 && latency > 0.0 {
            let r = latency_cycles / body;
            r * r * r * latency_cycles / latency
        } else {
            0.0
        };
        Evaluation {
            cycles,
            body_cycles: body,
            dcycles_dlatency,
            miss_rate,
            dram_read_bytes: dram_read,
            l2_hit_rate: hit_rate,
            l2_rate: self.total_l2_bytes / cycles,
            dram_rate: dram_total / cycles,
        }
    }
}

/// Soft maximum of four non-negative bounds: their L4 norm, computed
/// without `powf`. Compute and memory overlap well but not perfectly, so a
/// kernel near balance runs a little slower than its largest bound.
#[inline]
fn soft_max(a: f64, b: f64, c: f64, d: f64) -> f64 {
    let m = a.max(b).max(c).max(d);
    if m <= 0.0 {
        return 0.0;
    }
    let q = |x: f64| {
        let r = x / m;
        let r2 = r * r;
        r2 * r2
    };
    m * (q(a) + q(b) + q(c) + q(d)).sqrt().sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_max_is_between_max_and_fourth_root_of_four_times_max() {
        assert_eq!(soft_max(0.0, 0.0, 0.0, 0.0), 0.0);
        assert!((soft_max(3.0, 0.0, 0.0, 0.0) - 3.0).abs() < 1e-12);
        let s = soft_max(1.0, 1.0, 1.0, 1.0);
        assert!((s - 4f64.powf(0.25)).abs() < 1e-12);
        let s = soft_max(10.0, 5.0, 1.0, 0.0);
        assert!(s > 10.0 && s < 10.2);
    }
}
