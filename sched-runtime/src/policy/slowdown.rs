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

use crate::runner::RunError;

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

/// The simulator's contention model.
#[derive(Debug)]
pub struct OracleSlowdown {
    sim: SimBackend,
    prepared: HashMap<(String, u32), PreparedKernel>,
}

impl OracleSlowdown {
    pub fn new(gpu: &GpuSpec) -> OracleSlowdown {
        OracleSlowdown {
            sim: SimBackend::noiseless(gpu.clone()),
            prepared: HashMap::new(),
        }
    }

    fn prepared(&mut self, k: &KernelSpec, sms: u32) -> Result<PreparedKernel, RunError> {
        let key = (k.op_id(), sms);
        if let Some(p) = self.prepared.get(&key) {
            return Ok(p.clone());
        }
        let p = self.sim.prepare(k, sms).map_err(gpu_err)?;
        self.prepared.insert(key, p.clone());
        Ok(p)
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
    profiles: HashMap<(String, u32), SideProfile>,
}

impl PredictorSlowdown {
    pub fn new(predictor: RuntimePredictor, gpu: &GpuSpec) -> PredictorSlowdown {
        PredictorSlowdown {
            predictor,
            sim: SimBackend::noiseless(gpu.clone()),
            profiles: HashMap::new(),
        }
    }

    fn profile(&mut self, k: &KernelSpec, sms: u32) -> Result<SideProfile, RunError> {
        let key = (k.op_id(), sms);
        if let Some(p) = self.profiles.get(&key) {
            return Ok(*p);
        }
        let m = self
            .sim
            .standalone(k, Partition::first(sms))
            .map_err(gpu_err)?;
        let p = SideProfile::from_counters(
            sms,
            m.duration_us,
            |name| Counter::from_name(name).map(|c| m.counters.get(c)),
            &k.name,
        )
        .map_err(|e| RunError::Input {
            what: format!("standalone profile of {}", k.name),
            reason: e.to_string(),
        })?;
        self.profiles.insert(key, p);
        Ok(p)
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
