//! The block-level engine and the policies on small hand-made workloads:
//! every block runs exactly once under random preemption, a job's kernels
//! run in order, every policy alone reproduces the standalone latency, and
//! each policy's defining behaviour.

mod common;

use common::*;
use proptest::prelude::*;
use tally_gpu::Partition;
use tally_sched::config_choice::{choose_config, DEFAULT_TURNAROUND_US};
use tally_sched::engine::sim::SimEngine;
use tally_sched::engine::{Engine, LaunchRequest};
use tally_sched::experiment::{arrivals_for, run_policies};
use tally_sched::kernel_config::KernelConfig;
use tally_sched::policy::registry::by_name;
use tally_sched::policy::tally::FORWARD_US;
use tally_sched::policy::PolicyOptions;
use tally_sched::runner::run_on;
use tally_sched::workload::{Arrivals, Workload};

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
                max_workers: None,
                sms: Partition::whole(&gpu), priority: 0, with_overhead: true, host_delay_us: 0.0, max_sms: None,
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
                    max_workers: None,
                    sms: Partition::whole(&gpu), priority: 1, with_overhead: true, host_delay_us: 0.0, max_sms: None,
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
/// without simulating; every policy simulated without BE must match it,
/// but for the host time of forwarding each launch where the policy
/// intercepts launches (Tally's server): the closed loop then serves
/// requests that each take that much longer.
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
            let policy = by_name(&r.summary.policy, &PolicyOptions::default(), None);
            let forward = policy.map_or(FORWARD_US, |p| p.forward_us());
            if forward == 0.0 {
                assert_eq!(
                    r.outcome.requests.len(),
                    c.alone.requests.len(),
                    "{}",
                    r.summary.policy
                );
            }
            let extra = forward * workload.hp.kernels.len() as f64;
            for (a, b) in r.outcome.requests.iter().zip(&c.alone.requests) {
                assert!(
                    (a.service_us() - b.service_us() - extra).abs() < 1e-6,
                    "{}: {} vs alone {}",
                    r.summary.policy,
                    a.service_us(),
                    b.service_us()
                );
            }
        }
    }
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
        prio.service_p99_slowdown <= mps.service_p99_slowdown + 1e-9,
        "{} vs {}",
        prio.service_p99_slowdown,
        mps.service_p99_slowdown
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
    // Only the forwarding of each launch through the server remains.
    assert!(
        s[0].p99_overhead_pct.abs() < 1.0,
        "{}",
        s[0].p99_overhead_pct
    );
    assert!(s[1].be_throughput_total > 0.0);
}

/// With a closed-loop HP (never idle) Tally runs no BE; tally-predict runs
/// some beside HP at under 5 % HP overhead.
fn tally_predict_adds_be_where_tally_adds_none(workload: &Workload) {
    let s = summaries(workload, Arrivals::ClosedLoop, &["tally", "tally-predict"]);
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
    tally_predict_adds_be_where_tally_adds_none(&workload);
}

#[test]
fn tally_predict_runs_an_unpreemptible_be_kernel_only_on_sms_no_hp_kernel_needs() {
    // Eight blocks of milliseconds each: too few for Tally's minimum worker
    // blocks or slices, so Tally runs the kernel untransformed, and only in
    // HP's idle time (a closed-loop HP leaves none). Its blocks cannot make
    // way for an HP kernel, so tally-predict puts it only past the SMs the
    // request's HP kernels use (54 and 40 blocks: half the GPU).
    let long = kernel("few-long", 8, 4.0e6 * 400.0, 4.0e3);
    let mut engine = SimEngine::new(&gpu());
    let k = engine.add_kernel(&long).unwrap();
    let (chosen, _) = choose_config(&engine, k, DEFAULT_TURNAROUND_US).unwrap();
    assert_eq!(chosen.config, KernelConfig::Original);
    assert!(chosen.preemption_us > DEFAULT_TURNAROUND_US);
    let workload = Workload {
        hp: job(
            "hp",
            vec![compute_kernel("hp-a", 54), compute_kernel("hp-c", 40)],
        ),
        be: vec![job("be", vec![long])],
    };
    tally_predict_adds_be_where_tally_adds_none(&workload);
}

#[test]
fn tally_predict_runs_capped_be_kernels_only_on_sms_no_hp_kernel_needs() {
    // Tally caps the BE kernel (blocks of milliseconds) to a few workers:
    // its blocks cannot make way for an HP kernel in time. HP never idles
    // (closed loop), so BE runs only beside HP: past the SMs of the
    // request's small kernels it may; where a wide kernel of the request
    // needs every SM it may not (its blocks would drain beside that kernel).
    let long = kernel("long-a", 864, 4.0e6 * 40.0, 4.0e3);
    let mut engine = SimEngine::new(&gpu());
    let k = engine.add_kernel(&long).unwrap();
    let (chosen, _) = choose_config(&engine, k, DEFAULT_TURNAROUND_US).unwrap();
    assert!(matches!(chosen.config, KernelConfig::CappedPtb { .. }));
    let small = vec![compute_kernel("hp-a", 54), memory_kernel("hp-m", 40)];
    let mut wide = small.clone();
    wide.push(compute_kernel("hp-wide", 432));
    let be = |hp: Vec<tally_gpu::KernelSpec>| {
        let w = Workload {
            hp: job("hp", hp),
            be: vec![job("long", vec![long.clone()])],
        };
        summaries(&w, Arrivals::ClosedLoop, &["tally-predict"])[0].be_throughput_total
    };
    assert!(be(small) > 0.05);
    assert_eq!(be(wide), 0.0);
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

/// `--timeline`: the SM occupancy by job, read off the engine, stays within
/// the window, never counts more SMs than the GPU has, and holds both jobs.
#[test]
fn the_timeline_records_sm_occupancy_by_job_within_its_window() {
    let mut cfg = cfg(20_000.0, Arrivals::Poisson { load: 0.5 });
    cfg.timeline_us = Some(5_000.0);
    let policies = ["mps".to_string(), "tally".to_string()];
    let result = run_policies(
        &hp_and_be(),
        &cfg,
        &policies,
        &PolicyOptions::default(),
        || Ok(None),
    )
    .unwrap();
    for r in &result.results {
        let t = r.timeline.as_ref().expect("timeline recorded");
        assert!(!t.points.is_empty());
        let mut held = [0u32; 2];
        let mut jobs_seen = [false; 2];
        for p in &t.points {
            assert!(p.time_us <= 5_000.0, "{p:?} past the window");
            held[p.job] = p.sms;
            jobs_seen[p.job] = true;
            // Two jobs may share an SM, so each is bounded, not the sum.
            assert!(held[p.job] <= cfg.gpu.sm_count, "{p:?}");
        }
        assert!(
            jobs_seen[0] && jobs_seen[1],
            "{}: {jobs_seen:?}",
            r.summary.policy
        );
    }
    // Without the option nothing is recorded.
    cfg.timeline_us = None;
    let plain = run_policies(
        &hp_and_be(),
        &cfg,
        &policies[..1],
        &PolicyOptions::default(),
        || Ok(None),
    )
    .unwrap();
    assert!(plain.results[0].timeline.is_none());
}

#[test]
fn tally_predict_keeps_tallys_bound_on_the_blocks_an_hp_kernel_waits_for() {
    // BE blocks of milliseconds: Tally holds them to a few SMs (its
    // fallback), so an HP kernel that needs the whole GPU waits for those
    // few. Placed beside the small HP kernels, tally-predict keeps that
    // configuration: the whole-GPU HP kernel does not wait for BE blocks
    // on every idle SM it had filled, and the p99 stays Tally's.
    let workload = Workload {
        hp: job(
            "hp",
            vec![
                compute_kernel("hp-a", 54),
                compute_kernel("hp-c", 40),
                compute_kernel("hp-wide", 432),
            ],
        ),
        be: vec![job(
            "long",
            vec![kernel("long-a", 864, 4.0e6 * 400.0, 4.0e3)],
        )],
    };
    let s = summaries(
        &workload,
        Arrivals::Poisson { load: 0.5 },
        &["tally", "tally-predict"],
    );
    let (tally, predict) = (&s[0], &s[1]);
    assert!(
        predict.service_p99_slowdown < tally.service_p99_slowdown * 1.05,
        "tally-predict p99 {} against tally's {}",
        predict.service_p99_slowdown,
        tally.service_p99_slowdown
    );
}

#[test]
fn tally_predict_runs_be_beside_a_memory_bound_hp_kernel_that_needs_part_of_the_gpu() {
    // HP streams memory on every SM (many blocks); it saturates DRAM from
    // part of the GPU, so it is confined there and a compute-bound BE runs
    // on the rest, where Tally, with HP never idle, runs no BE at all.
    let workload = Workload {
        hp: job("hp", vec![memory_kernel("hp-stream", 4000)]),
        be: vec![job("be", vec![compute_kernel("be-a", 4000)])],
    };
    tally_predict_adds_be_where_tally_adds_none(&workload);
}

#[test]
fn tally_predict_keeps_hp_kernels_off_the_sms_of_long_be_blocks() {
    // BE blocks of milliseconds, which Tally caps to a few workers (its
    // fallback) and launches in HP's idle time on the whole GPU: HP kernels
    // arriving then share SMs with those blocks and are stretched until
    // they end. tally-predict puts the capped workers on the last SMs and
    // the HP kernels, which fit in half the GPU, below them: HP is slowed
    // less, and BE keeps Tally's workers.
    let workload = Workload {
        hp: job(
            "hp",
            vec![compute_kernel("hp-a", 54), compute_kernel("hp-c", 40)],
        ),
        be: vec![job(
            "long",
            vec![kernel("long-a", 864, 4.0e6 * 400.0, 4.0e3)],
        )],
    };
    let s = summaries_for(
        &workload,
        400_000.0,
        Arrivals::Poisson { load: 0.3 },
        &["tally", "tally-predict"],
    );
    let (tally, predict) = (&s[0], &s[1]);
    assert!(
        tally.service_mean_slowdown > 1.05,
        "tally's HP is stretched beside the long blocks: {}",
        tally.service_mean_slowdown
    );
    assert!(
        predict.service_mean_slowdown < 1.0 + (tally.service_mean_slowdown - 1.0) / 2.0,
        "tally-predict HP mean {} against tally's {}",
        predict.service_mean_slowdown,
        tally.service_mean_slowdown
    );
    assert!(
        predict.be_throughput_total > 0.9 * tally.be_throughput_total,
        "tally-predict BE {} against tally's {}",
        predict.be_throughput_total,
        tally.be_throughput_total
    );
}

/// A comparison on engines from a source (how a real GPU's engines come)
/// runs the HP job alone on one of them, on the same arrivals, and scales
/// `--load` by a measured request: on simulated engines, which are
/// deterministic, that reproduces the simulated comparison exactly.
#[test]
fn a_comparison_on_measured_engines_matches_the_simulated_one_on_simulated_engines() {
    use tally_sched::experiment::{run_policies_on, Engines};
    let cfg = cfg(20_000.0, Arrivals::Poisson { load: 0.6 });
    let policies = ["mps".to_string(), "tally".to_string()];
    let options = PolicyOptions::default();
    let simulated = run_policies(&hp_and_be(), &cfg, &policies, &options, || Ok(None)).unwrap();
    let mut opened = 0;
    let mut source = || -> Result<Box<dyn Engine>, tally_sched::error::RunError> {
        opened += 1;
        Ok(Box::new(SimEngine::new(&cfg.gpu)))
    };
    let measured = run_policies_on(
        Engines::Measured(&mut source),
        &hp_and_be(),
        &cfg,
        &policies,
        &options,
        || Ok(None),
    )
    .unwrap();
    // One engine for the request's service time, one for the HP job
    // alone, one per policy.
    assert_eq!(opened, 2 + policies.len());
    // Equal to rounding: a service time is an end less a start.
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    assert!(close(
        measured.hp_request_alone_us,
        simulated.hp_request_alone_us
    ));
    let same = |a: &[tally_sched::outcome::Request], b: &[tally_sched::outcome::Request]| {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| close(x.arrival_us, y.arrival_us) && close(x.end_us, y.end_us))
    };
    assert!(same(&measured.alone.requests, &simulated.alone.requests));
    assert_eq!(measured.alone.policy, "alone");
    for (m, s) in measured.results.iter().zip(&simulated.results) {
        let policy = &s.summary.policy;
        assert!(same(&m.outcome.requests, &s.outcome.requests), "{policy}");
        // The request in service at the end counts by the kernels done when
        // run, by its share of the time when computed: equal to 1e-3.
        let (a, b) = (m.summary.system_throughput, s.summary.system_throughput);
        assert!((a - b).abs() < 1e-3 * b, "{policy}: {a} against {b}");
        assert!(m.timeline.is_none());
    }
}
