//! The block-level engine and the policies on small hand-made workloads:
//! every block runs exactly once under random preemption, a job's kernels
//! run in order, every policy alone reproduces the standalone latency, and
//! each policy's defining behaviour.

use proptest::prelude::*;
use tally_gpu::{Dim3, GpuSpec, KernelKind, KernelSpec, MemoryUse, Partition, Work};
use tally_sched::engine::sim::SimEngine;
use tally_sched::engine::{Engine, LaunchRequest};
use tally_sched::error::RunError;
use tally_sched::experiment::{arrivals_for, run_policies};
use tally_sched::policy::registry::{by_name, POLICY_NAMES};
use tally_sched::policy::slowdown::{OracleSlowdown, SlowdownModel};
use tally_sched::policy::PolicyOptions;
use tally_sched::runner::{run_on, RunConfig};
use tally_sched::workload::{Arrivals, JobSpec, Workload};

fn gpu() -> GpuSpec {
    GpuSpec::preset("a100-40gb").expect("preset")
}

/// A kernel of `blocks` blocks of 256 threads; `flops_per_block` of FP32
/// work and `bytes_per_block` of streamed DRAM traffic.
fn kernel(name: &str, blocks: u32, flops_per_block: f64, bytes_per_block: f64) -> KernelSpec {
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

fn compute_kernel(name: &str, blocks: u32) -> KernelSpec {
    kernel(name, blocks, 4.0e6, 4.0e3)
}

fn memory_kernel(name: &str, blocks: u32) -> KernelSpec {
    kernel(name, blocks, 2.0e3, 256.0e3)
}

fn cfg(duration_us: f64, arrivals: Arrivals) -> RunConfig {
    RunConfig {
        gpu: gpu(),
        duration_us,
        seed: 7,
        arrivals,
    }
}

fn oracle() -> Result<Option<Box<dyn SlowdownModel>>, RunError> {
    Ok(Some(Box::new(OracleSlowdown::new(&gpu()))))
}

fn all_policies() -> Vec<String> {
    POLICY_NAMES.iter().map(|s| s.to_string()).collect()
}

/// An HP request of a few small kernels (some leave SMs idle).
fn hp_job() -> JobSpec {
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
fn be_job(name: &str) -> JobSpec {
    job(
        name,
        vec![
            compute_kernel(&format!("{name}-a"), 4000),
            memory_kernel(&format!("{name}-b"), 3000),
        ],
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Preemptive PTB launches told to retreat at random times and
    /// relaunched from their progress: every block of every kernel runs
    /// exactly once, also with another job running beside them.
    #[test]
    fn every_block_runs_exactly_once_under_random_preemption(
        blocks in proptest::collection::vec(1u32..3000, 1..4),
        workers in 1u32..4,
        cuts in proptest::collection::vec(1.0f64..200.0, 1..12),
        co_runner in any::<bool>(),
    ) {
        let gpu = gpu();
        let mut engine = SimEngine::new(&gpu);
        engine.record_blocks();
        let kernels: Vec<_> = blocks
            .iter()
            .enumerate()
            .map(|(i, &b)| engine.add_kernel(&memory_kernel(&format!("k{i}"), b)).unwrap())
            .collect();
        if co_runner {
            let other = engine.add_kernel(&compute_kernel("other", 20_000)).unwrap();
            engine.submit(LaunchRequest {
                job: 1, kernel: other, first_block: 0, blocks: 20_000,
                workers_per_sm: None, preemptible: false,
                sms: Partition::whole(&gpu), priority: 0, with_overhead: true,
            }).unwrap();
        }
        let mut out = Vec::new();
        let mut cut = cuts.iter().cycle();
        for (&k, &b) in kernels.iter().zip(&blocks) {
            let mut progress = 0u64;
            while progress < u64::from(b) {
                let id = engine.submit(LaunchRequest {
                    job: 0, kernel: k, first_block: progress, blocks: u64::from(b) - progress,
                    workers_per_sm: Some(workers), preemptible: true,
                    sms: Partition::whole(&gpu), priority: 1, with_overhead: true,
                }).unwrap();
                let t = engine.now() + cut.next().unwrap();
                engine.advance_to(t, &mut out).unwrap();
                engine.retreat(id);
                loop {
                    engine.settle(&mut out).unwrap();
                    if let Some(c) = out.iter().find(|c| c.launch == id) {
                        progress += c.blocks_done;
                        break;
                    }
                    let t = engine.next_event_time().expect("work left");
                    engine.advance_to(t, &mut out).unwrap();
                }
                out.retain(|c| c.launch != id);
            }
        }
        for (&k, &b) in kernels.iter().zip(&blocks) {
            let mut runs: Vec<(u64, u64)> = engine
                .block_log()
                .iter()
                .filter(|r| r.kernel == k && r.job == 0)
                .map(|r| (r.first_block, r.blocks))
                .collect();
            runs.sort();
            let mut next = 0;
            for (first, n) in runs {
                prop_assert_eq!(first, next, "kernel {:?}: gap or overlap", k);
                next = first + n;
            }
            prop_assert_eq!(next, u64::from(b));
        }
    }
}

#[test]
fn kernels_of_one_job_run_in_order() {
    let gpu = gpu();
    let workload = Workload {
        hp: hp_job(),
        be: vec![be_job("be1"), be_job("be2")],
    };
    for policy in ["mps", "tally", "time-slicing"] {
        let mut engine = SimEngine::new(&gpu);
        engine.record_blocks();
        let mut p = by_name(policy, &PolicyOptions::default(), None).unwrap();
        let cfg = cfg(20_000.0, Arrivals::Poisson { load: 0.5 });
        let arrivals = arrivals_for(&cfg, &workload).unwrap();
        run_on(
            &mut engine,
            &workload,
            p.as_mut(),
            &cfg,
            arrivals.as_deref(),
        )
        .unwrap();
        for (j, spec) in std::iter::once(&workload.hp)
            .chain(&workload.be)
            .enumerate()
        {
            let ids: Vec<_> = spec
                .kernels
                .iter()
                .map(|k| engine.add_kernel(k).unwrap())
                .collect();
            // The kernel of each block run, launches in order of submission.
            let mut launches: Vec<_> = engine
                .block_log()
                .iter()
                .filter(|r| r.job == j)
                .map(|r| (r.launch, r.kernel))
                .collect();
            launches.sort();
            launches.dedup();
            let mut cursor = 0;
            for (_, k) in launches {
                // A kernel may take several launches (slices, resumes); the
                // next one is the same kernel or the one after it.
                if k != ids[cursor] {
                    cursor = (cursor + 1) % ids.len();
                    assert_eq!(
                        k, ids[cursor],
                        "{policy}: job {j} ran a kernel out of order"
                    );
                }
            }
        }
    }
}

/// `compare` computes the alone reference as a queue of identical requests
/// without simulating; every policy simulated without BE must match it.
#[test]
fn without_be_every_policy_reproduces_the_standalone_latency() {
    let workload = Workload {
        hp: hp_job(),
        be: Vec::new(),
    };
    for arrivals in [Arrivals::ClosedLoop, Arrivals::Poisson { load: 0.7 }] {
        let c = run_policies(
            &workload,
            &cfg(30_000.0, arrivals),
            &all_policies(),
            &PolicyOptions::default(),
            oracle,
        )
        .unwrap();
        assert!(c.alone.requests.len() > 10);
        for r in &c.results {
            assert_eq!(
                r.outcome.requests.len(),
                c.alone.requests.len(),
                "{}",
                r.summary.policy
            );
            for (a, b) in r.outcome.requests.iter().zip(&c.alone.requests) {
                assert!(
                    (a.latency_us() - b.latency_us()).abs() < 1e-6,
                    "{}: {} vs alone {}",
                    r.summary.policy,
                    a.latency_us(),
                    b.latency_us()
                );
            }
        }
    }
}

/// The standard HP job with one BE job.
fn hp_and_be() -> Workload {
    Workload {
        hp: hp_job(),
        be: vec![be_job("be")],
    }
}

/// A job of the given kernels.
fn job(name: &str, kernels: Vec<KernelSpec>) -> JobSpec {
    JobSpec {
        name: name.into(),
        kernels,
    }
}

fn summaries(
    workload: &Workload,
    arrivals: Arrivals,
    policies: &[&str],
) -> Vec<tally_sched::metrics::Summary> {
    let names: Vec<String> = policies.iter().map(|s| s.to_string()).collect();
    run_policies(
        workload,
        &cfg(100_000.0, arrivals),
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

#[test]
fn mps_gives_no_isolation_and_priority_helps_and_tally_isolates() {
    let workload = hp_and_be();
    let s = summaries(
        &workload,
        Arrivals::Poisson { load: 0.5 },
        &["mps", "mps-priority", "tally"],
    );
    let (mps, prio, tally) = (&s[0], &s[1], &s[2]);
    assert!(mps.p99_overhead_pct > 50.0, "mps {}", mps.p99_overhead_pct);
    assert!(
        prio.p99_overhead_pct < mps.p99_overhead_pct,
        "{} vs {}",
        prio.p99_overhead_pct,
        mps.p99_overhead_pct
    );
    assert!(
        tally.p99_overhead_pct < 15.0,
        "tally {}",
        tally.p99_overhead_pct
    );
    assert!(
        tally.be_throughput_total > 0.1,
        "tally lets BE run in HP idle time"
    );
    assert!(mps.be_throughput_total > tally.be_throughput_total);
}

#[test]
fn tally_runs_be_only_after_hp_idles() {
    // A closed-loop HP is never idle for 0.1 ms: BE gets nothing.
    let workload = hp_and_be();
    let s = summaries(&workload, Arrivals::ClosedLoop, &["tally", "mps"]);
    assert_eq!(s[0].be_throughput_total, 0.0);
    assert!(s[0].p99_overhead_pct.abs() < 1e-6);
    assert!(s[1].be_throughput_total > 0.0);
}

#[test]
fn tally_predict_adds_be_beside_hp_on_idle_sms() {
    // HP kernels of 40-54 blocks leave half the SMs idle; a compute-bound BE
    // barely touches the memory path, so the oracle lets it in.
    let workload = Workload {
        hp: job(
            "hp",
            vec![compute_kernel("hp-a", 54), compute_kernel("hp-c", 40)],
        ),
        be: vec![job("be", vec![compute_kernel("be-a", 4000)])],
    };
    let s = summaries(&workload, Arrivals::ClosedLoop, &["tally", "tally-predict"]);
    assert_eq!(s[0].be_throughput_total, 0.0);
    assert!(
        s[1].be_throughput_total > 0.1,
        "tally-predict BE {}",
        s[1].be_throughput_total
    );
    assert!(
        s[1].p99_overhead_pct < 5.0,
        "tally-predict HP {}",
        s[1].p99_overhead_pct
    );
}

#[test]
fn orion_co_runs_only_kernels_of_the_other_label() {
    let hp = job("hp", vec![compute_kernel("hp-a", 54)]);
    let same = Workload {
        hp: hp.clone(),
        be: vec![job("be", vec![compute_kernel("be-c", 40)])],
    };
    let other = Workload {
        hp,
        be: vec![job("be", vec![memory_kernel("be-m", 40)])],
    };
    let s_same = summaries(&same, Arrivals::ClosedLoop, &["orion"]);
    let s_other = summaries(&other, Arrivals::ClosedLoop, &["orion"]);
    assert_eq!(s_same[0].be_throughput_total, 0.0);
    assert!(s_other[0].be_throughput_total > 0.0);
}

#[test]
fn tgs_holds_hp_throughput_not_latency_and_time_slicing_alternates() {
    let workload = hp_and_be();
    let s = summaries(
        &workload,
        Arrivals::Poisson { load: 0.5 },
        &["mps", "tgs", "time-slicing"],
    );
    let (mps, tgs, ts) = (&s[0], &s[1], &s[2]);
    assert!(tgs.be_throughput_total < mps.be_throughput_total);
    assert!(tgs.be_throughput_total > 0.0);
    // TGS's loop holds the HP job's throughput, not its latency: below
    // saturation the requests keep up but wait behind BE kernels.
    assert!(
        tgs.hp_throughput > 0.97,
        "tgs HP throughput {}",
        tgs.hp_throughput
    );
    assert!(tgs.p99_overhead_pct > 50.0, "tgs {}", tgs.p99_overhead_pct);
    assert!(
        ts.p99_overhead_pct > 20.0,
        "time-slicing {}",
        ts.p99_overhead_pct
    );
    assert!(ts.be_throughput_total > 0.2);
}
