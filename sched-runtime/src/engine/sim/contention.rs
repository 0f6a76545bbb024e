//! What sets the pace of the launches running together: the
//! [`ContentionModel`] the simulated engine asks for every running launch's
//! wave time whenever the set of running launches changes. The engine owns
//! the blocks (dispatch, residency, cohorts, launch gaps); the model only
//! says how long one wave of each takes beside the others.
//!
//! [`SimContention`] is the simulator's own model (the gpu crate's wave
//! model of the shared L2 / crossbar / DRAM path), the default. A model
//! driven by the contention predictor lives in `crate::colocation`; both
//! run on the same engine, so a prediction and its simulated ground truth
//! differ only in the rates.

use std::fmt::Debug;

use rustc_hash::FxHashMap;
use tally_gpu::sim::{PreparedWave, WaveModel, WaveShape, WaveTiming};
use tally_gpu::{GpuSpec, KernelSpec};

use crate::engine::{EngineError, KernelId};

/// One launch with blocks on SMs, as the contention model sees it.
#[derive(Debug, Clone, Copy)]
pub struct RunningLaunch<'a> {
    pub kernel: KernelId,
    pub spec: &'a KernelSpec,
    /// How its resident blocks sit: SMs holding them, blocks per SM.
    pub shape: WaveShape,
    /// SMs of the partition it was launched on.
    pub partition_sms: u32,
}

/// Wave times of launches running together.
pub trait ContentionModel: Debug + Send {
    /// Whether the timings depend on the launch's partition size (beyond
    /// its shape): the engine's timing cache then keys on it too.
    fn uses_partition(&self) -> bool {
        false
    }

    /// `out[i]`: the wave time (and SM pipe share) of `running[i]` while
    /// all of `running` run at once. Deterministic in its input: the engine
    /// caches the answer by the set of (kernel, shape).
    fn timings(
        &mut self,
        running: &[RunningLaunch<'_>],
        out: &mut [WaveTiming],
    ) -> Result<(), EngineError>;
}

/// The simulator's contention model: each launch's resident blocks as one
/// wave of the gpu crate's shared-path model.
#[derive(Debug)]
pub struct SimContention {
    model: WaveModel,
    prepared: FxHashMap<(KernelId, WaveShape), PreparedWave>,
}

impl SimContention {
    pub fn new(gpu: &GpuSpec) -> SimContention {
        SimContention {
            model: WaveModel::new(gpu),
            prepared: FxHashMap::default(),
        }
    }
}

impl ContentionModel for SimContention {
    fn timings(
        &mut self,
        running: &[RunningLaunch<'_>],
        out: &mut [WaveTiming],
    ) -> Result<(), EngineError> {
        for r in running {
            if !self.prepared.contains_key(&(r.kernel, r.shape)) {
                let wave = self.model.prepare(r.spec, r.shape)?;
                self.prepared.insert((r.kernel, r.shape), wave);
            }
        }
        let waves: Vec<&PreparedWave> = running
            .iter()
            .map(|r| &self.prepared[&(r.kernel, r.shape)])
            .collect();
        self.model.timings(&waves, out);
        Ok(())
    }
}
