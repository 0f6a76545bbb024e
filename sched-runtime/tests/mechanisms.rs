//! Each sharing mechanism's defining behaviour on small cases: the block
//! scheduler's serve order with and without priority, a preemptive kernel's
//! retreat, a time-slice switch's compute preemption (blocks saved
//! mid-block and restored with their progress), a time-sliced context that
//! yields when it has nothing to run, TGS's gate on the HP job's launch
//! rate and its HP stream priority, Tally's fallback for kernels whose blocks outlast its preemption
//! limit (never under MIN_WORKER_BLOCKS blocks at once) and a vendor-library
//! convolution Tally launches untransformed. How a job's host side shapes
//! its GPU work is in `host_side.rs`.

mod common;

use common::*;
use proptest::prelude::*;
use tally_gpu::{KernelKind, Partition};
use tally_sched::config_choice::{choose_config, DEFAULT_TURNAROUND_US, MIN_WORKER_BLOCKS};
use tally_sched::engine::sim::SimEngine;
use tally_sched::engine::{Completion, Engine, LaunchRequest};
use tally_sched::kernel_config::KernelConfig;
use tally_sched::workload::{Arrivals, Workload};

fn request(
    engine: &SimEngine,
    job: usize,
    kernel: tally_sched::engine::KernelId,
    priority: u8,
) -> LaunchRequest {
    LaunchRequest {
        job,
        kernel,
        first_block: 0,
        blocks: engine.kernel(kernel).blocks(),
        workers_per_sm: None,
        max_workers: None,
        preemptible: false,
        sms: Partition::whole(engine.gpu()),
        priority,
        with_overhead: false,
        host_delay_us: 0.0,
        max_sms: None,
    }
}

/// Run until every submitted launch completed; completions in order.
fn drain(engine: &mut SimEngine) -> Vec<Completion> {
    let mut all = Vec::new();
    let mut out = Vec::new();
    engine.settle(&mut out).unwrap();
    all.append(&mut out);
    while let Some(t) = engine.next_event_time() {
        engine.advance_to(t, &mut out).unwrap();
        all.append(&mut out);
    }
    all
}

/// Where in the block log job `job`'s first block ran.
fn first_run_of(engine: &SimEngine, job: usize) -> usize {
    engine
        .block_log()
        .iter()
        .position(|r| r.job == job)
        .expect("job ran")
}

#[test]
fn without_priority_a_later_launch_waits_for_the_earlier_grid() {
    // MPS: a BE kernel of many waves holds the GPU when an HP kernel of
    // equal priority arrives; first come, first served, the slots the BE
    // blocks free go to the BE kernel's next blocks until it has dispatched
    // all of them, and only then to HP (with client priority, the next
    // test, HP's go first).
    let mut engine = SimEngine::new(&gpu());
    engine.record_blocks();
    let be = engine.add_kernel(&compute_kernel("be", 4000)).unwrap();
    let hp = engine.add_kernel(&compute_kernel("hp", 2000)).unwrap();
    engine.submit(request(&engine, 1, be, 0)).unwrap();
    let mut out = Vec::new();
    engine.settle(&mut out).unwrap();
    engine.submit(request(&engine, 0, hp, 0)).unwrap();
    let done = drain(&mut engine);
    let log = engine.block_log();
    let hp_at = first_run_of(&engine, 0);
    let be_before: u64 = log[..hp_at].iter().map(|r| r.blocks).sum();
    let resident = 108 * u64::from(engine.blocks_per_sm(be));
    // The log lists blocks as they finish: HP's first ones finish after
    // every BE wave but the last one or two, which ran beside them.
    assert!(
        be_before + 2 * resident >= 4000,
        "{be_before} of 4000 BE blocks ran before HP's first"
    );
    assert_eq!(done[0].job, 1, "the BE kernel completes first");
}

#[test]
fn with_priority_the_priority_clients_pending_blocks_go_first() {
    // MPS with client priorities: once the first BE blocks finish, the
    // freed slots go to the HP kernel ahead of the BE kernel's remaining
    // blocks, though HP was launched later; running BE blocks are not
    // preempted.
    let mut engine = SimEngine::new(&gpu());
    engine.record_blocks();
    let be = engine.add_kernel(&compute_kernel("be", 4000)).unwrap();
    let hp = engine.add_kernel(&compute_kernel("hp", 54)).unwrap();
    engine.submit(request(&engine, 1, be, 0)).unwrap();
    let mut out = Vec::new();
    engine.settle(&mut out).unwrap();
    engine.submit(request(&engine, 0, hp, 1)).unwrap();
    let done = drain(&mut engine);
    let log = engine.block_log();
    let hp_at = first_run_of(&engine, 0);
    let be_before: u64 = log[..hp_at].iter().map(|r| r.blocks).sum();
    // Only the first wave of BE blocks (resident when HP came) ran before.
    let resident = 108 * u64::from(engine.blocks_per_sm(be));
    assert!(be_before <= resident, "{be_before} BE blocks ran first");
    assert_eq!(done[0].job, 0, "HP completes first");
}

#[test]
fn a_preemptive_kernel_retreats_within_one_blocks_duration() {
    let mut engine = SimEngine::new(&gpu());
    let spec = compute_kernel("be", 20_000);
    let be = engine.add_kernel(&spec).unwrap();
    let whole = Partition::whole(engine.gpu());
    let per_block_us = {
        // One wave's time: every SM holding its blocks once.
        let wave = 108 * u64::from(engine.blocks_per_sm(be));
        engine
            .alone_us(
                be,
                tally_sched::kernel_config::KernelConfig::Original,
                whole,
            )
            .unwrap()
            / (spec.blocks() as f64 / wave as f64)
    };
    let launch = engine
        .submit(LaunchRequest {
            workers_per_sm: Some(1),
            max_workers: None,
            preemptible: true,
            ..request(&engine, 1, be, 0)
        })
        .unwrap();
    let mut out = Vec::new();
    engine.settle(&mut out).unwrap();
    let t0 = 10.0 * per_block_us;
    engine.advance_to(t0, &mut out).unwrap();
    assert!(out.is_empty());
    assert!(engine.retreat(launch));
    let done = drain(&mut engine);
    assert_eq!(done.len(), 1);
    assert!(done[0].retreated);
    assert!(done[0].blocks_done < spec.blocks());
    let waited = done[0].time_us - t0;
    assert!(
        waited <= per_block_us * 1.05 + 1.0,
        "retreat took {waited} us, one block {per_block_us} us"
    );
}

#[test]
fn a_saved_context_leaves_the_sms_mid_block_and_resumes_with_its_progress() {
    // One wave of long blocks: alone it takes T. Saved at 0.4 T, the SMs
    // are free at once (not after its blocks finish) and a second kernel
    // runs alone there; restored, the first finishes 0.6 T later.
    let gpu = gpu();
    let spec = compute_kernel("long", 108);
    let alone = {
        let mut e = SimEngine::new(&gpu);
        let k = e.add_kernel(&spec).unwrap();
        e.submit(request(&e, 1, k, 0)).unwrap();
        drain(&mut e)[0].time_us
    };
    let mut engine = SimEngine::new(&gpu);
    let k = engine.add_kernel(&spec).unwrap();
    let other = engine.add_kernel(&compute_kernel("other", 108)).unwrap();
    let be = engine.submit(request(&engine, 1, k, 0)).unwrap();
    let mut out = Vec::new();
    engine.settle(&mut out).unwrap();
    engine.advance_to(0.4 * alone, &mut out).unwrap();
    engine.set_context_saved(be, true);
    engine.settle(&mut out).unwrap();
    assert_eq!(engine.idle_sms(), 108, "saved blocks left the SMs");
    assert_eq!(engine.resident_blocks(be), 0);
    engine.submit(request(&engine, 0, other, 0)).unwrap();
    let mut done = Vec::new();
    engine.settle(&mut done).unwrap();
    while done.is_empty() {
        let t = engine.next_event_time().expect("the other kernel runs");
        engine.advance_to(t, &mut done).unwrap();
    }
    assert_eq!(done[0].job, 0, "only the other kernel ran while saved");
    let restored_at = engine.now();
    assert!(
        (restored_at - 1.4 * alone).abs() < 0.01 * alone,
        "{restored_at}"
    );
    engine.set_context_saved(be, false);
    let rest = drain(&mut engine);
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].blocks_done, 108, "no block lost or rerun");
    let left = rest[0].time_us - restored_at;
    assert!(
        (left - 0.6 * alone).abs() < 0.01 * alone,
        "{left} of {alone}"
    );
}

#[test]
fn under_time_slicing_hp_latency_does_not_depend_on_be_block_length() {
    // Compute preemption: a switch stops BE's blocks mid-block, so HP
    // requests see the same slices beside a BE of short blocks as beside
    // one whose every block runs for milliseconds (a full wave: no room
    // left on the SMs for HP blocks beside them).
    let arrivals = Arrivals::Times((0..40).map(|i| 1_000.0 + 7_300.0 * f64::from(i)).collect());
    let long_blocks = job("long", vec![kernel("long-a", 864, 4.0e6 * 400.0, 4.0e3)]);
    let mut p99 = Vec::new();
    for be in [be_job("short"), long_blocks] {
        let w = Workload {
            hp: hp_job(),
            be: vec![be],
        };
        let s = summaries_for(&w, 300_000.0, arrivals.clone(), &["time-slicing"]);
        p99.push(s[0].hp_latency.p99);
    }
    assert!(
        (p99[1] / p99[0] - 1.0).abs() < 0.02,
        "p99 beside short blocks {} ms, beside long {} ms",
        p99[0],
        p99[1]
    );
}

#[test]
fn a_time_sliced_context_with_nothing_to_run_yields_its_slice() {
    // HP never has a request: BE holds the GPU throughout, as alone.
    let idle_hp = summaries_for(
        &hp_and_be(),
        200_000.0,
        Arrivals::Times(vec![1e12]),
        &["time-slicing"],
    );
    assert!(
        idle_hp[0].be_throughput_total > 0.97,
        "BE got {}",
        idle_hp[0].be_throughput_total
    );
    // A busy HP and a busy BE alternate: each gets about half.
    let both = summaries_for(
        &hp_and_be(),
        200_000.0,
        Arrivals::ClosedLoop,
        &["time-slicing"],
    );
    let s = &both[0];
    assert!(
        (0.35..0.65).contains(&s.be_throughput_total),
        "BE {}",
        s.be_throughput_total
    );
    assert!(
        (0.35..0.65).contains(&s.hp_throughput),
        "HP {}",
        s.hp_throughput
    );
}

#[test]
fn tgs_gates_be_on_hp_throughput_not_latency() {
    // The gate's rules are unit-tested in `policy::tgs`; here: BE never
    // gets more than under MPS, and the HP requests, whose rate the gate
    // watches, still wait behind BE blocks.
    let workload = hp_and_be();
    let s = summaries_for(
        &workload,
        12_000_000.0,
        Arrivals::Poisson { load: 0.5 },
        &["tgs", "mps"],
    );
    let (tgs, mps) = (&s[0], &s[1]);
    assert!(
        tgs.service_p99_slowdown > 1.3,
        "tgs p99 slowdown {}",
        tgs.service_p99_slowdown
    );
    assert!(tgs.be_throughput_total > 0.0);
    assert!(tgs.be_throughput_total <= mps.be_throughput_total + 1e-9);
}

#[test]
fn under_tgs_the_hp_clients_pending_blocks_go_first() {
    // The artifact's server creates the HP client's streams at its stream
    // priority under TGS: an HP kernel waits only for running BE blocks,
    // as under MPS-priority, not for a many-wave BE grid to dispatch, as
    // under MPS. The gate can only leave BE fewer blocks, so HP does at
    // least as well as under MPS-priority.
    let s = summaries_for(
        &hp_and_be(),
        2_000_000.0,
        Arrivals::Poisson { load: 0.5 },
        &["tgs", "mps-priority", "mps"],
    );
    let (tgs, prio, mps) = (&s[0], &s[1], &s[2]);
    assert!(
        tgs.hp_service_latency.avg <= prio.hp_service_latency.avg * 1.001,
        "tgs {} ms, mps-priority {} ms",
        tgs.hp_service_latency.avg,
        prio.hp_service_latency.avg
    );
    assert!(
        tgs.hp_service_latency.avg < 0.8 * mps.hp_service_latency.avg,
        "tgs {} ms, mps {} ms",
        tgs.hp_service_latency.avg,
        mps.hp_service_latency.avg
    );
}

#[test]
fn the_hp_queue_is_not_counted_in_service_latency() {
    // A closed-loop stream has no queue: service latency is the latency.
    let workload = Workload {
        hp: hp_job(),
        be: Vec::new(),
    };
    let s = summaries(&workload, Arrivals::Poisson { load: 0.9 }, &["mps"]);
    let s = &s[0];
    assert!(s.hp_latency.p99 > s.hp_service_latency.p99);
    assert!((s.service_p99_slowdown - 1.0).abs() < 1e-9);
}

#[test]
fn tally_runs_a_kernel_whose_blocks_outlast_the_limit_on_a_few_sms() {
    // Every block runs for milliseconds: no PTB or slicing candidate can
    // preempt within 31.6 us, so Tally launches preemptive PTB with fewer
    // workers than SMs, limit / (one-worker-per-SM preemption latency) x
    // SMs of them but at least MIN_WORKER_BLOCKS, and the kernel holds only
    // that many SMs.
    let mut engine = SimEngine::new(&gpu());
    let spec = kernel("long", 864, 4.0e6 * 400.0, 4.0e3);
    let k = engine.add_kernel(&spec).unwrap();
    let (chosen, candidates) = choose_config(&engine, k, DEFAULT_TURNAROUND_US).unwrap();
    assert!(candidates
        .iter()
        .all(|c| c.preemption_us > DEFAULT_TURNAROUND_US));
    let one_per_sm = candidates
        .iter()
        .find(|c| c.config == KernelConfig::PreemptivePtb { workers_per_sm: 1 })
        .unwrap();
    let want = (DEFAULT_TURNAROUND_US / one_per_sm.preemption_us * 108.0)
        .floor()
        .max(MIN_WORKER_BLOCKS as f64) as u32;
    assert_eq!(chosen.config, KernelConfig::CappedPtb { workers: want });
    let (blocks, workers, preemptible) = chosen.config.next_launch(864);
    let id = engine
        .submit(LaunchRequest {
            blocks,
            workers_per_sm: workers,
            max_workers: chosen.config.max_workers(),
            preemptible,
            ..request(&engine, 1, k, 0)
        })
        .unwrap();
    let mut out = Vec::new();
    engine.settle(&mut out).unwrap();
    let t = engine.next_event_time().unwrap();
    engine.advance_to(t, &mut out).unwrap();
    assert_eq!(engine.resident_blocks(id), want);
    assert_eq!(engine.idle_sms(), 108 - want);
}

#[test]
fn tally_launches_a_library_convolution_untransformed() {
    // The same milliseconds-per-block kernel as above, but a cuDNN
    // convolution: Tally cannot transform a library call, so it runs as
    // the original, its preemption latency the whole kernel.
    let mut engine = SimEngine::new(&gpu());
    let spec = tally_gpu::KernelSpec {
        kind: KernelKind::Conv,
        ..kernel("conv", 864, 4.0e6 * 400.0, 4.0e3)
    };
    let k = engine.add_kernel(&spec).unwrap();
    let (chosen, candidates) = choose_config(&engine, k, DEFAULT_TURNAROUND_US).unwrap();
    assert_eq!(chosen.config, KernelConfig::Original);
    assert_eq!(candidates.len(), 1);
    assert_eq!(chosen.preemption_us, chosen.latency_us);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Whatever the kernel, Tally's choice runs every block once and never
    /// fewer than MIN_WORKER_BLOCKS blocks at once (or the whole grid when
    /// it is smaller): capped PTB keeps at least that many workers, and it
    /// cuts a grid into no more slices than MIN_WORKER_BLOCKS-block ones.
    #[test]
    fn tally_never_runs_fewer_than_the_minimum_worker_blocks(
        blocks in 1u32..5000,
        flops_per_block in 1.0e3f64..2.0e9,
        bytes_per_block in 1.0e2f64..1.0e6,
    ) {
        let mut engine = SimEngine::new(&gpu());
        let k = engine.add_kernel(&kernel("k", blocks, flops_per_block, bytes_per_block)).unwrap();
        let (chosen, _) = choose_config(&engine, k, DEFAULT_TURNAROUND_US).unwrap();
        let floor = MIN_WORKER_BLOCKS.min(u64::from(blocks));
        match chosen.config {
            KernelConfig::CappedPtb { workers } => prop_assert!(u64::from(workers) >= floor),
            KernelConfig::Sliced { blocks: per_slice } => {
                let slices = u64::from(blocks).div_ceil(per_slice);
                prop_assert!(
                    slices <= u64::from(blocks).div_ceil(MIN_WORKER_BLOCKS),
                    "{slices} slices of {per_slice} blocks for a grid of {blocks}"
                );
            }
            _ => {}
        }
    }
}
