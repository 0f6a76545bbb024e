//! What `tally-predict` asks before placing BE blocks beside an HP kernel:
//! the HP kernel's slowdown with a BE kernel on the other partition. Either
//! the trained predictor, from standalone profiles only (what a deployment
//! has), or the simulator's own contention model as an oracle (an upper
//! bound on what a predictor can achieve).

use std::collections::HashMap;
use std::fmt::Debug;

use tally_gpu::sim::PreparedKernel;
use tally_gpu::{Backend, Counter, GpuSpec, KernelSpec, Partition, SimBackend};
use tally_predictor::runtime::RuntimePredictor;
use tally_predictor::SideProfile;

use crate::error::RunError;

/// HP slowdown (1.0 = none) of `hp` on `hp_sms` SMs with `be` on `be_sms`.
pub trait SlowdownModel: Debug {
    fn name(&self) -> &'static str;
    fn hp_slowdown(
        &mut self,
        hp: &KernelSpec,
        hp_sms: u32,
        be: &KernelSpec,
        be_sms: u32,
    ) -> Result<f64, RunError>;
}

fn gpu_err(e: tally_gpu::GpuError) -> RunError {
    RunError::Engine(e.into())
}

/// Values per (kernel, SM count), computed once: both models are asked
/// about the same few kernels at every HP launch.
#[derive(Debug)]
struct PerKernel<T>(HashMap<(String, u32), T>);

impl<T: Clone> PerKernel<T> {
    fn new() -> PerKernel<T> {
        PerKernel(HashMap::new())
    }

    fn get_or_compute(
        &mut self,
        k: &KernelSpec,
        sms: u32,
        compute: impl FnOnce() -> Result<T, RunError>,
    ) -> Result<T, RunError> {
        let key = (k.op_id(), sms);
        if let Some(v) = self.0.get(&key) {
            return Ok(v.clone());
        }
        let v = compute()?;
        self.0.insert(key, v.clone());
        Ok(v)
    }
}

/// The simulator's contention model.
#[derive(Debug)]
pub struct OracleSlowdown {
    sim: SimBackend,
    prepared: PerKernel<PreparedKernel>,
}

impl OracleSlowdown {
    pub fn new(gpu: &GpuSpec) -> OracleSlowdown {
        OracleSlowdown {
            sim: SimBackend::noiseless(gpu.clone()),
            prepared: PerKernel::new(),
        }
    }

    fn prepared(&mut self, k: &KernelSpec, sms: u32) -> Result<PreparedKernel, RunError> {
        let sim = &self.sim;
        self.prepared
            .get_or_compute(k, sms, || sim.prepare(k, sms).map_err(gpu_err))
    }
}

impl SlowdownModel for OracleSlowdown {
    fn name(&self) -> &'static str {
        "oracle"
    }

    fn hp_slowdown(
        &mut self,
        hp: &KernelSpec,
        hp_sms: u32,
        be: &KernelSpec,
        be_sms: u32,
    ) -> Result<f64, RunError> {
        let a = self.prepared(hp, hp_sms)?;
        let b = self.prepared(be, be_sms)?;
        let alone = self.sim.standalone_us(&a);
        let (co, _) = self.sim.co_run_us(&a, &b);
        Ok(co / alone)
    }
}

/// The trained predictor on standalone profiles taken by the simulator.
#[derive(Debug)]
pub struct PredictorSlowdown {
    predictor: RuntimePredictor,
    sim: SimBackend,
    profiles: PerKernel<SideProfile>,
}

impl PredictorSlowdown {
    pub fn new(predictor: RuntimePredictor, gpu: &GpuSpec) -> PredictorSlowdown {
        PredictorSlowdown {
            predictor,
            sim: SimBackend::noiseless(gpu.clone()),
            profiles: PerKernel::new(),
        }
    }

    fn profile(&mut self, k: &KernelSpec, sms: u32) -> Result<SideProfile, RunError> {
        let sim = &self.sim;
        self.profiles.get_or_compute(k, sms, || {
            let m = sim.standalone(k, Partition::first(sms)).map_err(gpu_err)?;
            SideProfile::from_counters(
                sms,
                m.duration_us,
                |name| Counter::from_name(name).map(|c| m.counters.get(c)),
                &k.name,
            )
            .map_err(|e| RunError::Input {
                what: format!("standalone profile of {}", k.name),
                reason: e.to_string(),
            })
        })
    }
}

impl SlowdownModel for PredictorSlowdown {
    fn name(&self) -> &'static str {
        "predictor"
    }

    fn hp_slowdown(
        &mut self,
        hp: &KernelSpec,
        hp_sms: u32,
        be: &KernelSpec,
        be_sms: u32,
    ) -> Result<f64, RunError> {
        let a = self.profile(hp, hp_sms)?;
        let b = self.profile(be, be_sms)?;
        Ok(self.predictor.slowdown(&a, &b))
    }
}
