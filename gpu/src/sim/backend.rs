//! `SimBackend`: the simulated GPU behind the `Backend` trait — prepares
//! kernels on partitions, solves the shared path, adds measurement noise and
//! derives counters. Noise-free entry points serve benchmarks and the
//! scheduler.

use super::counters::derive;
use super::noise::lognormal_factor;
use super::prepared::PreparedKernel;
use super::solver::{solve, SharedPath, Solution};
use crate::backend::{Backend, Measurement};
use crate::error::Result;
use crate::kernel::KernelSpec;
use crate::partition::Partition;
use crate::spec::GpuSpec;

/// Default log-standard-deviation of measurement noise (about 1 %).
pub const DEFAULT_NOISE_SIGMA: f64 = 0.01;

/// The simulated GPU.
#[derive(Debug, Clone)]
pub struct SimBackend {
    spec: GpuSpec,
    path: SharedPath,
    seed: u64,
    noise_sigma: f64,
}

impl SimBackend {
    pub fn new(spec: GpuSpec, seed: u64, noise_sigma: f64) -> SimBackend {
        let path = SharedPath::of(&spec);
        SimBackend {
            spec,
            path,
            seed,
            noise_sigma: noise_sigma.max(0.0),
        }
    }

    /// A simulator without measurement noise.
    pub fn noiseless(spec: GpuSpec) -> SimBackend {
        SimBackend::new(spec, 0, 0.0)
    }

    pub fn noise_sigma(&self) -> f64 {
        self.noise_sigma
    }

    /// Place `kernel` on `sm_count` SMs (occupancy, waves, per-SM bounds).
    pub fn prepare(&self, kernel: &KernelSpec, sm_count: u32) -> Result<PreparedKernel> {
        PreparedKernel::new(kernel, sm_count, &self.spec)
    }

    fn cycles_to_us(&self, cycles: f64) -> f64 {
        cycles / self.spec.cycles_per_us()
    }

    /// Noise-free standalone duration, microseconds.
    pub fn standalone_us(&self, k: &PreparedKernel) -> f64 {
        self.cycles_to_us(solve(self.path, &[k]).evals[0].cycles)
    }

    /// Noise-free co-located durations of `a` and `b`, microseconds.
    pub fn co_run_us(&self, a: &PreparedKernel, b: &PreparedKernel) -> (f64, f64) {
        let s = solve(self.path, &[a, b]);
        (
            self.cycles_to_us(s.evals[0].cycles),
            self.cycles_to_us(s.evals[1].cycles),
        )
    }

    fn measurement(
        &self,
        kernel: &KernelSpec,
        prepared: &PreparedKernel,
        solution: &Solution,
        side: usize,
        noise_keys: &[u64],
    ) -> Measurement {
        let eval = &solution.evals[side];
        let noise = lognormal_factor(self.seed, self.noise_sigma, noise_keys);
        let duration_us = self.cycles_to_us(eval.cycles) * noise;
        let counters = derive(&self.spec, &self.path, kernel, prepared, eval, duration_us);
        Measurement {
            duration_us,
            counters,
            spread_pct: None,
        }
    }
}

/// Identity of a kernel for noise keys: its stable op id, hashed.
fn noise_key(kernel: &KernelSpec) -> u64 {
    u64::from_str_radix(&kernel.op_id(), 16).unwrap_or(0)
}

impl Backend for SimBackend {
    fn spec(&self) -> &GpuSpec {
        &self.spec
    }

    fn standalone(&self, kernel: &KernelSpec, partition: Partition) -> Result<Measurement> {
        partition.check(&self.spec)?;
        let prepared = self.prepare(kernel, partition.sm_count)?;
        let solution = solve(self.path, &[&prepared]);
        let keys = [noise_key(kernel), u64::from(partition.sm_count)];
        Ok(self.measurement(kernel, &prepared, &solution, 0, &keys))
    }

    fn co_run(
        &self,
        a: &KernelSpec,
        pa: Partition,
        b: &KernelSpec,
        pb: Partition,
    ) -> Result<(Measurement, Measurement)> {
        Partition::check_disjoint(&pa, &pb, &self.spec)?;
        let prepared_a = self.prepare(a, pa.sm_count)?;
        let prepared_b = self.prepare(b, pb.sm_count)?;
        let solution = solve(self.path, &[&prepared_a, &prepared_b]);
        let (key_a, key_b) = (noise_key(a), noise_key(b));
        let (sa, sb) = (u64::from(pa.sm_count), u64::from(pb.sm_count));
        // Each side's noise is keyed by (self, co-runner), so (a, b) and
        // (b, a) draw the same; the tag keeps pair draws apart from
        // standalone ones, and apart from each other when both sides are the
        // same kernel on the same size (still two separate measurements).
        let tag_b = if (key_a, sa) == (key_b, sb) { 2 } else { 1 };
        let ma = self.measurement(a, &prepared_a, &solution, 0, &[key_a, sa, key_b, sb, 1]);
        let mb = self.measurement(b, &prepared_b, &solution, 1, &[key_b, sb, key_a, sa, tag_b]);
        Ok((ma, mb))
    }
}
