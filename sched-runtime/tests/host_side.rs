//! How a job's host side shapes what it asks of the GPU, on small cases: a
//! BE job bound off the GPU part of each iteration (measured against itself
//! alone), an HP server's host tail after each request's kernels, a
//! launch-bound request that runs at its host's pace (and pays Tally's
//! forwarding in every launch), and the refusal of values outside their
//! range.

mod common;

use common::*;
use tally_gpu::{KernelSpec, Partition};
use tally_sched::engine::sim::SimEngine;
use tally_sched::engine::Engine;
use tally_sched::kernel_config::KernelConfig;
use tally_sched::workload::{Arrivals, JobSpec, Workload};

#[test]
fn a_be_job_bound_off_the_gpu_leaves_it_idle_and_is_measured_against_itself_alone() {
    // GPU utilisation 0.5 alone: after every iteration as long again on the
    // host. With no HP request, its throughput is its own alone (1.0)
    // while its GPU work per unit of time halves.
    let half = Workload {
        hp: hp_job(),
        be: vec![JobSpec {
            gpu_util: 0.5,
            ..be_job("half")
        }],
    };
    let idle_hp = Arrivals::Times(vec![1e12]);
    // Whatever the window: one that ends within a GPU phase or a host
    // phase is measured against what the job does alone in that window.
    for window in [200_000.0, 7_300.0, 23_900.0, 51_700.0] {
        let s = summaries_for(&half, window, idle_hp.clone(), &["mps"]);
        assert!(
            (s[0].be_throughput_total - 1.0).abs() < 0.05,
            "{window}: {}",
            s[0].be_throughput_total
        );
    }
    let full = summaries_for(&hp_and_be(), 200_000.0, idle_hp, &["mps"]);
    assert!((full[0].be_throughput_total - 1.0).abs() < 0.05);
    // Its host time is the HP job's: a busy HP gets more of the GPU under
    // time-slicing (a context with nothing to run yields) and under MPS.
    for policy in ["time-slicing", "mps"] {
        let with_half = summaries_for(&half, 200_000.0, Arrivals::ClosedLoop, &[policy]);
        let with_full = summaries_for(&hp_and_be(), 200_000.0, Arrivals::ClosedLoop, &[policy]);
        assert!(
            with_half[0].hp_throughput > with_full[0].hp_throughput * 1.1,
            "{policy}: HP {} beside a half-GPU BE, {} beside a GPU-bound one",
            with_half[0].hp_throughput,
            with_full[0].hp_throughput
        );
    }
}

#[test]
fn an_hp_servers_host_tail_lengthens_each_request_but_is_no_gpu_work() {
    // GPU utilisation 0.5 alone: after its kernels each request spends as
    // long again on the host (output copies, post-processing) before it
    // completes.
    let tail = Workload {
        hp: JobSpec {
            gpu_util: 0.5,
            ..hp_job()
        },
        be: vec![be_job("be")],
    };
    let gpu_alone = {
        let mut engine = SimEngine::new(&gpu());
        tally_sched::hp_alone::hp_request_alone_us(&mut engine, &hp_and_be()).unwrap()
    };
    let with_tail_alone = {
        let mut engine = SimEngine::new(&gpu());
        tally_sched::hp_alone::hp_request_alone_us(&mut engine, &tail).unwrap()
    };
    let kernels_alone: f64 = {
        let mut engine = SimEngine::new(&gpu());
        hp_job()
            .kernels
            .iter()
            .map(|k| {
                let id = engine.add_kernel(k).unwrap();
                engine
                    .alone_us(id, KernelConfig::Original, Partition::whole(&gpu()))
                    .unwrap()
            })
            .sum()
    };
    assert!(
        (with_tail_alone - gpu_alone - kernels_alone).abs() < 1e-6 * kernels_alone,
        "alone {with_tail_alone} us = GPU-paced {gpu_alone} + host tail {kernels_alone}"
    );
    // The tail is idle time to every policy: a time-sliced context with
    // nothing to run yields, and Tally's idle gate opens, so BE gets more of
    // the GPU beside a closed-loop HP server with a tail than beside one
    // without (under MPS BE is hardly slowed either way).
    for policy in ["time-slicing", "tally"] {
        let with_tail = summaries_for(&tail, 200_000.0, Arrivals::ClosedLoop, &[policy]);
        let without = summaries_for(&hp_and_be(), 200_000.0, Arrivals::ClosedLoop, &[policy]);
        assert!(
            with_tail[0].be_throughput_total > without[0].be_throughput_total * 1.1,
            "{policy}: BE {} beside an HP with a host tail, {} beside one without",
            with_tail[0].be_throughput_total,
            without[0].be_throughput_total
        );
    }
    // Under MPS the HP kernels co-run with BE and the tail is not slowed:
    // the HP slowdown is diluted. (Time-sliced, the tail hands BE a slice
    // that the next request then waits for.)
    let with_tail = summaries_for(&tail, 200_000.0, Arrivals::ClosedLoop, &["mps"]);
    let without = summaries_for(&hp_and_be(), 200_000.0, Arrivals::ClosedLoop, &["mps"]);
    assert!(
        with_tail[0].service_mean_slowdown < without[0].service_mean_slowdown,
        "HP mean slowdown {} with a host tail, {} without",
        with_tail[0].service_mean_slowdown,
        without[0].service_mean_slowdown
    );
}

#[test]
fn a_gpu_utilisation_outside_zero_to_one_is_refused() {
    let bad = Workload {
        hp: hp_job(),
        be: vec![JobSpec {
            gpu_util: 0.0,
            ..be_job("bad")
        }],
    };
    let err = run_error(&bad);
    assert!(err.contains("GPU utilisation"), "{err}");
}

/// The error `bad` is refused with under MPS.
fn run_error(bad: &Workload) -> String {
    let names = vec!["mps".to_string()];
    tally_sched::experiment::run_policies(
        bad,
        &cfg(10_000.0, Arrivals::ClosedLoop),
        &names,
        &tally_sched::policy::PolicyOptions::default(),
        oracle,
    )
    .unwrap_err()
    .to_string()
}

#[test]
fn a_launch_bound_request_runs_at_its_hosts_pace_and_absorbs_short_delays() {
    // Twenty small HP kernels, a few microseconds each on the GPU, issued
    // by a host that takes 40 us per launch.
    let tiny: Vec<KernelSpec> = (0..20)
        .map(|i| kernel(&format!("tiny-{i}"), 16, 2.0e4, 2.0e3))
        .collect();
    let gpu_paced = JobSpec::gpu_bound("hp", tiny);
    let host_paced = JobSpec {
        launch_interval_us: 40.0,
        ..gpu_paced.clone()
    };
    // A BE job of short kernels of short blocks (a wave or two each): an
    // HP kernel waits for the BE kernel ahead of it, a block or so.
    let be = JobSpec::gpu_bound(
        "be",
        vec![
            kernel("be-a", 432, 4.0e5, 8.0e3),
            kernel("be-b", 432, 2.0e3, 256.0e3),
        ],
    );
    let run = |hp: &JobSpec| {
        let w = Workload {
            hp: hp.clone(),
            be: vec![be.clone()],
        };
        summaries_for(&w, 100_000.0, Arrivals::ClosedLoop, &["mps"]).remove(0)
    };
    let (gpu, host) = (run(&gpu_paced), run(&host_paced));
    // Alone, the host sets the pace: 20 launches of 40 us, the last
    // kernel's few microseconds after.
    let alone_ms = host.hp_alone_service_latency.avg;
    assert!(
        (0.8..0.85).contains(&alone_ms),
        "host-paced request alone {alone_ms} ms"
    );
    assert!(
        gpu.hp_alone_service_latency.avg < 0.4,
        "GPU-paced request alone {} ms",
        gpu.hp_alone_service_latency.avg
    );
    // Beside BE, what delays the GPU-paced request is absorbed by the
    // slack between launches.
    assert!(
        gpu.service_mean_slowdown > 1.1,
        "GPU-paced {}",
        gpu.service_mean_slowdown
    );
    assert!(
        host.service_mean_slowdown < 1.03,
        "host-paced {}",
        host.service_mean_slowdown
    );
}

#[test]
fn a_negative_launch_interval_is_refused() {
    let bad = Workload {
        hp: JobSpec {
            launch_interval_us: -1.0,
            ..hp_job()
        },
        be: vec![be_job("be")],
    };
    let err = run_error(&bad);
    assert!(err.contains("launch interval"), "{err}");
}

#[test]
fn a_launch_bound_request_pays_tallys_forwarding_in_every_launch() {
    // Alone under Tally (nothing to preempt), a launch-bound request's
    // host spends FORWARD_US more on each launch: its latency grows by
    // FORWARD_US / interval; a GPU-paced one pays it once, on its last
    // kernel's way to the GPU.
    let tiny: Vec<KernelSpec> = (0..20)
        .map(|i| kernel(&format!("tiny-{i}"), 16, 2.0e4, 2.0e3))
        .collect();
    let interval = 10.0;
    let launch_bound = JobSpec {
        launch_interval_us: interval,
        ..JobSpec::gpu_bound("hp", tiny)
    };
    let w = Workload {
        hp: launch_bound,
        be: Vec::new(),
    };
    let s = summaries_for(&w, 50_000.0, Arrivals::ClosedLoop, &["tally"]).remove(0);
    let expected = 1.0 + tally_sched::policy::tally::FORWARD_US / interval;
    assert!(
        (s.service_mean_slowdown - expected).abs() < 0.003,
        "launch-bound under Tally alone: {} (expected {expected})",
        s.service_mean_slowdown
    );
}
