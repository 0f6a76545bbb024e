//! Small hand-made kernels, jobs and workloads the runtime tests share.
#![allow(dead_code)]

use tally_gpu::{Dim3, GpuSpec, KernelKind, KernelSpec, MemoryUse, Work};
use tally_sched::error::RunError;
use tally_sched::experiment::run_policies;
use tally_sched::metrics::Summary;
use tally_sched::policy::registry::POLICY_NAMES;
use tally_sched::policy::slowdown::{OracleSlowdown, SlowdownModel};
use tally_sched::policy::PolicyOptions;
use tally_sched::runner::RunConfig;
use tally_sched::workload::{Arrivals, JobSpec, Workload};

pub fn gpu() -> GpuSpec {
    GpuSpec::preset("a100-40gb").expect("preset")
}

/// A kernel of `blocks` blocks of 256 threads; `flops_per_block` of FP32
/// work and `bytes_per_block` of streamed DRAM traffic.
pub fn kernel(name: &str, blocks: u32, flops_per_block: f64, bytes_per_block: f64) -> KernelSpec {
    let b = f64::from(blocks);
    KernelSpec {
        name: name.to_string(),
        kind: KernelKind::Elementwise,
        grid: Dim3::linear(blocks),
        block: Dim3::linear(256),
        registers_per_thread: 32,
        shared_mem_static: 0,
        shared_mem_dynamic: 0,
        work: Work {
            ffma: b * flops_per_block / 2.0,
            other_warp_insts: b * 64.0,
            ..Work::default()
        },
        memory: MemoryUse {
            l1_bytes: b * bytes_per_block,
            l2_bytes: b * bytes_per_block,
            dram_read_bytes: b * bytes_per_block * 0.5,
            dram_write_bytes: b * bytes_per_block * 0.5,
            l2_working_set: b * bytes_per_block,
            inflight_bytes_per_warp: 512.0,
        },
    }
}

pub fn compute_kernel(name: &str, blocks: u32) -> KernelSpec {
    kernel(name, blocks, 4.0e6, 4.0e3)
}

pub fn memory_kernel(name: &str, blocks: u32) -> KernelSpec {
    kernel(name, blocks, 2.0e3, 256.0e3)
}

pub fn cfg(duration_us: f64, arrivals: Arrivals) -> RunConfig {
    RunConfig {
        gpu: gpu(),
        duration_us,
        seed: 7,
        arrivals,
        timeline_us: None,
    }
}

pub fn oracle() -> Result<Option<Box<dyn SlowdownModel>>, RunError> {
    Ok(Some(Box::new(OracleSlowdown::new(&gpu()))))
}

pub fn all_policies() -> Vec<String> {
    POLICY_NAMES.iter().map(|s| s.to_string()).collect()
}

/// An HP request of a few small kernels (some leave SMs idle).
pub fn hp_job() -> JobSpec {
    job(
        "hp",
        vec![
            compute_kernel("hp-a", 54),
            memory_kernel("hp-b", 216),
            compute_kernel("hp-c", 40),
            memory_kernel("hp-d", 64),
        ],
    )
}

/// A BE iteration of large kernels (many waves each).
pub fn be_job(name: &str) -> JobSpec {
    job(
        name,
        vec![
            compute_kernel(&format!("{name}-a"), 4000),
            memory_kernel(&format!("{name}-b"), 3000),
        ],
    )
}

/// The standard HP job with one BE job.
pub fn hp_and_be() -> Workload {
    Workload {
        hp: hp_job(),
        be: vec![be_job("be")],
    }
}

/// A job of the given kernels.
pub fn job(name: &str, kernels: Vec<KernelSpec>) -> JobSpec {
    JobSpec::gpu_bound(name, kernels)
}

pub fn summaries(workload: &Workload, arrivals: Arrivals, policies: &[&str]) -> Vec<Summary> {
    summaries_for(workload, 100_000.0, arrivals, policies)
}

/// Summaries of `policies` on `workload` for `duration_us`.
pub fn summaries_for(
    workload: &Workload,
    duration_us: f64,
    arrivals: Arrivals,
    policies: &[&str],
) -> Vec<Summary> {
    let names: Vec<String> = policies.iter().map(|s| s.to_string()).collect();
    run_policies(
        workload,
        &cfg(duration_us, arrivals),
        &names,
        &PolicyOptions::default(),
        oracle,
    )
    .unwrap()
    .results
    .into_iter()
    .map(|r| r.summary)
    .collect()
}
