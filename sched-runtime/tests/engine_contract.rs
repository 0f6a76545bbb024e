//! The engine contract (`engine::contract`) on the simulated engine: the
//! checks a real-GPU engine runs on its device pass here, and each one
//! catches the broken engine it is written against.

mod common;

use common::*;
use tally_sched::engine::contract::{self, check_all};
use tally_sched::engine::sim::SimEngine;
use tally_sched::engine::Engine;

/// 432 blocks of milliseconds each: half the grid's time is long enough
/// for a retreat to land before the end.
fn long_kernel() -> tally_gpu::KernelSpec {
    kernel("contract", 432, 4.0e6 * 40.0, 4.0e3)
}

#[test]
fn the_simulated_engine_keeps_the_contract() {
    let mut make = || Box::new(SimEngine::new(&gpu())) as Box<dyn Engine>;
    check_all(&mut make, &long_kernel()).unwrap();
}

#[test]
fn a_kernel_too_short_to_retreat_is_reported_not_passed() {
    // One wave of 108 one-block-per-SM blocks: its workers have taken
    // every block before half its time, so nothing is left to hold back.
    let one_wave = kernel("short", 108, 4.0e6, 4.0e3);
    let e = contract::a_retreated_launch_resumes_from_its_progress(
        Box::new(SimEngine::new(&gpu())),
        &one_wave,
    )
    .unwrap_err();
    assert!(
        e.contains("a_retreated_launch_resumes_from_its_progress"),
        "{e}"
    );
}

/// The simulated engine, but claiming any launch retreats when told to.
#[derive(Debug)]
struct ClaimsEveryRetreat(SimEngine);

impl Engine for ClaimsEveryRetreat {
    fn gpu(&self) -> &tally_gpu::GpuSpec {
        self.0.gpu()
    }
    fn now(&self) -> f64 {
        self.0.now()
    }
    fn add_kernel(
        &mut self,
        spec: &tally_gpu::KernelSpec,
    ) -> Result<tally_sched::engine::KernelId, tally_sched::engine::EngineError> {
        self.0.add_kernel(spec)
    }
    fn kernel(&self, id: tally_sched::engine::KernelId) -> &tally_gpu::KernelSpec {
        self.0.kernel(id)
    }
    fn blocks_per_sm(&self, id: tally_sched::engine::KernelId) -> u32 {
        self.0.blocks_per_sm(id)
    }
    fn alone_us(
        &self,
        id: tally_sched::engine::KernelId,
        config: tally_sched::kernel_config::KernelConfig,
        sms: tally_gpu::Partition,
    ) -> Result<f64, tally_sched::engine::EngineError> {
        self.0.alone_us(id, config, sms)
    }
    fn submit(
        &mut self,
        req: tally_sched::engine::LaunchRequest,
    ) -> Result<tally_sched::engine::LaunchId, tally_sched::engine::EngineError> {
        self.0.submit(req)
    }
    fn retreat(&mut self, id: tally_sched::engine::LaunchId) -> bool {
        self.0.retreat(id);
        true
    }
    fn set_suspended(&mut self, id: tally_sched::engine::LaunchId, suspended: bool) {
        self.0.set_suspended(id, suspended)
    }
    fn set_context_saved(&mut self, id: tally_sched::engine::LaunchId, saved: bool) {
        self.0.set_context_saved(id, saved)
    }
    fn next_event_time(&self) -> Option<f64> {
        self.0.next_event_time()
    }
    fn advance_to(
        &mut self,
        t: f64,
        out: &mut Vec<tally_sched::engine::Completion>,
    ) -> Result<(), tally_sched::engine::EngineError> {
        self.0.advance_to(t, out)
    }
    fn settle(
        &mut self,
        out: &mut Vec<tally_sched::engine::Completion>,
    ) -> Result<(), tally_sched::engine::EngineError> {
        self.0.settle(out)
    }
}

#[test]
fn an_engine_that_claims_to_retreat_an_original_launch_breaks_the_contract() {
    let mut make = || Box::new(ClaimsEveryRetreat(SimEngine::new(&gpu()))) as Box<dyn Engine>;
    let e = check_all(&mut make, &long_kernel()).unwrap_err();
    assert!(
        e.starts_with("refuses_to_retreat_a_launch_that_cannot"),
        "{e}"
    );
}
