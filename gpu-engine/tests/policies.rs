//! Every policy through the real-GPU engine on the device model of
//! `common`, with the run loop and the comparison a `tally run --backend
//! cuda` makes (engines from a source, the HP job alone run on one): the
//! policies `support` lets run on a device run end to end (requests
//! served, BE work done, every request no faster than alone), and the ones
//! it refuses are exactly those the engine itself cannot run. (The model's
//! speeds are not a GPU's: this checks that the policies' launches all go
//! through the launch plan and the block map, not how fast they run.)

mod common;

use common::ModelDevice;
use tally_gpu::{Dim3, KernelKind, KernelSpec, MemoryUse, Work};
use tally_gpu_engine::{support, DeviceEngine};
use tally_sched::engine::Engine;
use tally_sched::error::RunError;
use tally_sched::experiment::{run_policies_on, Engines, PolicyComparison};
use tally_sched::policy::registry::POLICY_NAMES;
use tally_sched::policy::slowdown::{OracleSlowdown, SlowdownModel};
use tally_sched::policy::PolicyOptions;
use tally_sched::runner::RunConfig;
use tally_sched::workload::{Arrivals, JobSpec, Workload};

fn kernel(name: &str, blocks: u32) -> KernelSpec {
    KernelSpec {
        name: name.into(),
        kind: KernelKind::Elementwise,
        grid: Dim3::linear(blocks),
        block: Dim3::linear(256),
        registers_per_thread: 32,
        shared_mem_static: 0,
        shared_mem_dynamic: 0,
        work: Work {
            ffma: 1.0e3 * f64::from(blocks),
            ..Work::default()
        },
        memory: MemoryUse {
            l1_bytes: 4.0e3 * f64::from(blocks),
            l2_bytes: 4.0e3 * f64::from(blocks),
            dram_read_bytes: 2.0e3 * f64::from(blocks),
            dram_write_bytes: 2.0e3 * f64::from(blocks),
            l2_working_set: 4.0e3 * f64::from(blocks),
            inflight_bytes_per_warp: 512.0,
        },
    }
}

fn workload() -> Workload {
    Workload::new(
        JobSpec::gpu_bound("hp", vec![kernel("hp-a", 216), kernel("hp-b", 324)]),
        vec![JobSpec::gpu_bound(
            "be",
            vec![kernel("be-a", 4320), kernel("be-b", 2160)],
        )],
    )
    .unwrap()
}

fn compare(policy: &str) -> Result<PolicyComparison, RunError> {
    let gpu = DeviceEngine::new(ModelDevice::new()).gpu().clone();
    let cfg = RunConfig {
        gpu: gpu.clone(),
        duration_us: 50_000.0,
        seed: 3,
        arrivals: Arrivals::Poisson { load: 0.5 },
        timeline_us: None,
    };
    let mut source = || -> Result<Box<dyn Engine>, RunError> {
        Ok(Box::new(DeviceEngine::new(ModelDevice::new())))
    };
    let slowdown = || -> Result<Option<Box<dyn SlowdownModel>>, RunError> {
        Ok(Some(Box::new(OracleSlowdown::new(&gpu))))
    };
    run_policies_on(
        Engines::Measured(&mut source),
        &workload(),
        &cfg,
        &[policy.to_string()],
        &PolicyOptions::default(),
        slowdown,
    )
}

#[test]
fn the_policies_a_device_runs_run_end_to_end_and_the_refused_ones_cannot() {
    for policy in POLICY_NAMES {
        let result = compare(policy);
        match support::refusal(policy) {
            None => {
                let c = result.unwrap_or_else(|e| panic!("{policy}: {e}"));
                let r = &c.results[0];
                assert!(r.outcome.requests_served > 10.0, "{policy}: {r:?}");
                assert!(r.outcome.be_work_us[0] > 0.0, "{policy}: no BE work");
                let alone = c
                    .alone
                    .requests
                    .iter()
                    .map(|q| q.end_us - q.start_us)
                    .fold(f64::INFINITY, f64::min);
                for q in &r.outcome.requests {
                    assert!(q.end_us - q.arrival_us >= alone - 1e-6, "{policy}: {q:?}");
                }
            }
            Some(_) => {
                let e = result.err().unwrap_or_else(|| {
                    panic!("{policy} is refused on a device but the engine ran it")
                });
                let e = e.to_string();
                assert!(
                    e.contains("whole GPU only") || e.contains("time-slice switch"),
                    "{policy}: {e}"
                );
            }
        }
    }
}
