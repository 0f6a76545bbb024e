//! `PredictedContention`: the engine's contention model driven by a
//! kernel-pair slowdown (the trained predictor, or a baseline) and
//! standalone profiles, instead of the simulator's shared-path model.
//!
//! A kernel alone on its partition takes its profiled duration: its blocks
//! run in `ceil(blocks / (SMs x blocks per SM))` rounds on the engine, so
//! one round takes the duration over that count. While kernels of the
//! other task run beside it, a round is stretched by the predicted slowdown
//! against each of them (a pair model knows no triples, so several
//! co-runners stretch it in turn; two tasks on their own streams never have
//! more than one). The engine re-asks whenever the running set changes, so
//! a kernel that spans several of the other's is paced by each in turn.

use std::sync::Arc;

use tally_gpu::sim::WaveTiming;
use tally_gpu::{GpuSpec, Occupancy};

use super::kernel_profiles::KernelProfiles;
use super::pair_slowdown::{Kernel, KernelFacts, PairSlowdown};
use crate::engine::sim::contention::{ContentionModel, RunningLaunch};
use crate::engine::EngineError;

/// Rates from standalone profiles and a pair slowdown.
#[derive(Debug)]
pub struct PredictedContention {
    gpu: GpuSpec,
    profiles: Arc<KernelProfiles>,
    pairs: Arc<dyn PairSlowdown>,
}

impl PredictedContention {
    pub fn new(
        gpu: &GpuSpec,
        profiles: Arc<KernelProfiles>,
        pairs: Arc<dyn PairSlowdown>,
    ) -> PredictedContention {
        PredictedContention {
            gpu: gpu.clone(),
            profiles,
            pairs,
        }
    }

    fn facts(&self, r: &RunningLaunch<'_>) -> Result<&KernelFacts, EngineError> {
        self.profiles.get(r.spec, r.partition_sms).ok_or_else(|| {
            EngineError::Contention(format!(
                "no standalone profile of kernel `{}` on {} SMs",
                r.spec.name, r.partition_sms
            ))
        })
    }

    /// One round of `r`'s blocks alone on its partition, microseconds.
    fn solo_round_us(
        &self,
        r: &RunningLaunch<'_>,
        facts: &KernelFacts,
    ) -> Result<f64, EngineError> {
        let per_sm = u64::from(Occupancy::of(r.spec, &self.gpu)?.blocks_per_sm.max(1));
        let slots = u64::from(r.partition_sms.max(1)) * per_sm;
        let rounds = r.spec.blocks().div_ceil(slots).max(1);
        Ok(facts.profile.duration_us / rounds as f64)
    }
}

impl ContentionModel for PredictedContention {
    fn uses_partition(&self) -> bool {
        true
    }

    fn timings(
        &mut self,
        running: &[RunningLaunch<'_>],
        out: &mut [WaveTiming],
    ) -> Result<(), EngineError> {
        for (i, r) in running.iter().enumerate() {
            let own = self.facts(r)?;
            let me = Kernel {
                spec: r.spec,
                facts: own,
            };
            let mut stretch = 1.0;
            for (j, other) in running.iter().enumerate() {
                if j != i {
                    let them = Kernel {
                        spec: other.spec,
                        facts: self.facts(other)?,
                    };
                    stretch *= self.pairs.slowdown(me, them)?;
                }
            }
            out[i] = WaveTiming {
                wave_us: self.solo_round_us(r, own)? * stretch,
                // Disjoint partitions: no SM's pipes are shared.
                pipe_share: 0.0,
            };
        }
        Ok(())
    }
}
