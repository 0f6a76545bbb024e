//! `WaveModel`: the simulator's contention model seen one wave at a time,
//! for the scheduler's block-level engine. A running launch is described by
//! the SMs it holds blocks on and the blocks resident per SM; the model
//! gives how long such a wave of blocks takes while every other running
//! launch generates traffic on the shared path, and how much of that time
//! the SM's pipes are busy (what co-resident blocks of other kernels compete
//! for).

use super::prepared::{Evaluation, PreparedKernel};
use super::solver::{solve_many, SharedPath, MAX_KERNELS};
use crate::error::Result;
use crate::kernel::{Dim3, KernelSpec};
use crate::spec::GpuSpec;

/// Most launches one `timings` call accepts.
pub const MAX_CONCURRENT: usize = MAX_KERNELS;

/// How a launch currently sits on the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WaveShape {
    /// SMs holding at least one of its blocks.
    pub sm_count: u32,
    /// Blocks resident per SM (rounded up).
    pub blocks_per_sm: u32,
}

/// A wave's duration under the current co-runners.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WaveTiming {
    /// Time for the resident blocks to finish, microseconds.
    pub wave_us: f64,
    /// Share of that time the SM's issue slots and pipes are busy (0-1).
    pub pipe_share: f64,
}

/// A kernel prepared as one wave of a given shape.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedWave(PreparedKernel);

/// The contention model without launch overhead (the engine models launch
/// gaps itself, and traffic rates must not be diluted by them).
#[derive(Debug, Clone)]
pub struct WaveModel {
    spec: GpuSpec,
    path: SharedPath,
}

impl WaveModel {
    pub fn new(gpu: &GpuSpec) -> WaveModel {
        let mut spec = gpu.clone();
        spec.launch_overhead_us = 0.0;
        let path = SharedPath::of(&spec);
        WaveModel { spec, path }
    }

    /// `kernel`'s blocks as one wave of `shape`: the work and traffic of
    /// `sm_count x blocks_per_sm` blocks (per-block quantities are the
    /// kernel's own); the L2 working set is the kernel's, capped by the
    /// wave's L2 traffic.
    pub fn prepare(&self, kernel: &KernelSpec, shape: WaveShape) -> Result<PreparedWave> {
        let blocks = shape.sm_count.max(1) * shape.blocks_per_sm.max(1);
        let f = f64::from(blocks) / kernel.blocks().max(1) as f64;
        let mut wave = kernel.clone();
        wave.grid = Dim3::linear(blocks);
        let w = &mut wave.work;
        for x in [
            &mut w.fadd,
            &mut w.fmul,
            &mut w.ffma,
            &mut w.hadd,
            &mut w.hmul,
            &mut w.hfma,
            &mut w.tensor_flops,
            &mut w.other_warp_insts,
        ] {
            *x *= f;
        }
        let m = &mut wave.memory;
        for x in [
            &mut m.l1_bytes,
            &mut m.l2_bytes,
            &mut m.dram_read_bytes,
            &mut m.dram_write_bytes,
        ] {
            *x *= f;
        }
        m.l2_working_set = m.l2_working_set.min(m.l2_bytes);
        Ok(PreparedWave(PreparedKernel::new(
            &wave,
            shape.sm_count.max(1),
            &self.spec,
        )?))
    }

    /// Timings of waves running at once, in the order given.
    pub fn timings(&self, waves: &[&PreparedWave], out: &mut [WaveTiming]) {
        if waves.is_empty() {
            return;
        }
        let mut kernels: [&PreparedKernel; MAX_KERNELS] = [&waves[0].0; MAX_KERNELS];
        for (slot, w) in kernels.iter_mut().zip(waves) {
            *slot = &w.0;
        }
        let n = waves.len();
        let mut evals = [Evaluation::default(); MAX_KERNELS];
        solve_many(self.path, &kernels[..n], &mut evals);
        let per_us = self.spec.cycles_per_us();
        for i in 0..n {
            let body = evals[i].body_cycles;
            out[i] = WaveTiming {
                wave_us: body / per_us,
                pipe_share: if body > 0.0 {
                    (kernels[i].compute_cycles / body).min(1.0)
                } else {
                    0.0
                },
            };
        }
    }
}
