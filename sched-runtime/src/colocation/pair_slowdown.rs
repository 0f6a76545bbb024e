//! The kernel-pair slowdown a task prediction composes: the trained
//! contention predictor, or one of the baselines it is reported against
//! (*scaling*: no interference, only the partition size; the Orion-style
//! *intensity rule*: two memory-bound kernels get the training data's mean
//! memory-memory slowdown, every other pair none), or the simulator's own
//! kernel-pair contention model (*oracle*: what the profiled pair rows the
//! predictor learns from measure, so a composition with it is the task
//! latency a perfect pair predictor would give).

use std::fmt::Debug;

use tally_gpu::{GpuSpec, KernelSpec, SimBackend};
use tally_predictor::{PredictorFile, RuntimePredictor, SideProfile};

use crate::engine::EngineError;

/// What a pair slowdown reads of one kernel on its partition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelFacts {
    pub profile: SideProfile,
    /// The intensity rule's label (arithmetic intensity below the
    /// roofline knee).
    pub memory_bound: bool,
}

/// A kernel on its partition: what it is, and what was measured of it.
#[derive(Debug, Clone, Copy)]
pub struct Kernel<'a> {
    pub spec: &'a KernelSpec,
    pub facts: &'a KernelFacts,
}

/// Slowdown of one kernel while another runs on the other partition.
pub trait PairSlowdown: Debug + Send + Sync {
    /// The method's name in outputs.
    fn name(&self) -> &str;

    /// Slowdown (co-located over standalone on the same partition)
    /// of `a` while `b` runs.
    fn slowdown(&self, a: Kernel<'_>, b: Kernel<'_>) -> Result<f64, EngineError>;
}

/// The trained predictor.
#[derive(Debug)]
pub struct PredictorPairs(pub RuntimePredictor);

impl PairSlowdown for PredictorPairs {
    fn name(&self) -> &str {
        "predictor"
    }

    fn slowdown(&self, a: Kernel<'_>, b: Kernel<'_>) -> Result<f64, EngineError> {
        Ok(self.0.slowdown(&a.facts.profile, &b.facts.profile))
    }
}

/// The scaling baseline: standalone latency at the partition size.
#[derive(Debug)]
pub struct ScalingOnly;

impl PairSlowdown for ScalingOnly {
    fn name(&self) -> &str {
        "scaling"
    }

    fn slowdown(&self, _: Kernel<'_>, _: Kernel<'_>) -> Result<f64, EngineError> {
        Ok(1.0)
    }
}

/// The intensity rule as fitted in a predictor file.
#[derive(Debug)]
pub struct IntensityRulePairs {
    memory_memory: f64,
}

impl IntensityRulePairs {
    pub fn of(file: &PredictorFile) -> IntensityRulePairs {
        IntensityRulePairs {
            memory_memory: file.models.intensity_rule.memory_memory_slowdown.max(1.0),
        }
    }
}

impl PairSlowdown for IntensityRulePairs {
    fn name(&self) -> &str {
        "intensity-rule"
    }

    fn slowdown(&self, a: Kernel<'_>, b: Kernel<'_>) -> Result<f64, EngineError> {
        Ok(if a.facts.memory_bound && b.facts.memory_bound {
            self.memory_memory
        } else {
            1.0
        })
    }
}

/// The simulator's kernel-pair contention model, on the partition sizes
/// of the profiles.
#[derive(Debug)]
pub struct OraclePairs {
    sim: SimBackend,
}

impl OraclePairs {
    pub fn new(gpu: &GpuSpec) -> OraclePairs {
        OraclePairs {
            sim: SimBackend::noiseless(gpu.clone()),
        }
    }
}

impl PairSlowdown for OraclePairs {
    fn name(&self) -> &str {
        "oracle"
    }

    fn slowdown(&self, a: Kernel<'_>, b: Kernel<'_>) -> Result<f64, EngineError> {
        let pa = self.sim.prepare(a.spec, a.facts.profile.sm_count)?;
        let pb = self.sim.prepare(b.spec, b.facts.profile.sm_count)?;
        Ok(self.sim.co_run_us(&pa, &pb).0 / self.sim.standalone_us(&pa))
    }
}
