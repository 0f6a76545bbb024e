//! How co-located tasks share the SMs (`tally_gpu::Sharing`), each sharing's
//! defining behaviour on small cases: green contexts meet only on the memory
//! path; an MPS share is a cap on SMs held at once, not a set of SMs, so a
//! capped launch alone runs as on a partition of its cap, two caps that
//! together fit the GPU land on disjoint SMs, and two that overlap put
//! blocks of both clients on the same SMs, where they slow each other
//! through the SM's pipes even with no memory traffic.

mod common;

use common::{compute_kernel, gpu, memory_kernel};
use tally_gpu::{GpuSpec, KernelSpec, Partition, Sharing};
use tally_sched::colocation::task_pair::{resolve_splits, task_pair, Rates};
use tally_sched::engine::sim::SimEngine;
use tally_sched::engine::{Completion, Engine, LaunchRequest};
use tally_sched::workload::JobSpec;

/// Half an A100 SM's threads per kernel per SM at one wave on the GPU:
/// 4 blocks of 256 threads on each of 108 SMs.
const HALF_SM_WAVE: u32 = 4 * 108;

fn slowdowns(
    gpu: &GpuSpec,
    a: KernelSpec,
    b: KernelSpec,
    split: (u32, u32),
    sharing: Sharing,
) -> (f64, f64) {
    let a = JobSpec::gpu_bound("a", vec![a]);
    let b = JobSpec::gpu_bound("b", vec![b]);
    let r = task_pair(gpu, &a, &b, &[split], &Rates::Simulator, sharing).expect("composes")[0];
    (r.co_a_us / r.solo_a_us, r.co_b_us / r.solo_b_us)
}

/// Two compute-bound kernels of half an SM's threads each at one wave.
fn compute_pair(split: (u32, u32), sharing: Sharing) -> (f64, f64) {
    slowdowns(
        &gpu(),
        compute_kernel("a", HALF_SM_WAVE),
        compute_kernel("b", HALF_SM_WAVE),
        split,
        sharing,
    )
}

fn alone_us(sms: Partition, max_sms: Option<u32>, kernel: &KernelSpec) -> f64 {
    let gpu = gpu();
    let mut engine = SimEngine::new(&gpu);
    let id = engine.add_kernel(kernel).unwrap();
    engine
        .submit(LaunchRequest {
            job: 0,
            kernel: id,
            first_block: 0,
            blocks: engine.kernel(id).blocks(),
            workers_per_sm: None,
            max_workers: None,
            preemptible: false,
            sms,
            priority: 0,
            with_overhead: false,
            host_delay_us: 0.0,
            max_sms,
        })
        .unwrap();
    let mut done: Vec<Completion> = Vec::new();
    engine.settle(&mut done).unwrap();
    while done.is_empty() {
        let t = engine.next_event_time().expect("a pending launch");
        engine.advance_to(t, &mut done).unwrap();
    }
    done[0].time_us
}

#[test]
fn a_capped_launch_alone_runs_as_on_a_partition_of_its_cap() {
    let gpu = gpu();
    for (kernel, cap) in [
        (compute_kernel("c", 3 * 108), 28),
        (memory_kernel("m", 1000), 54),
        (compute_kernel("c", 7), 20),
    ] {
        let capped = alone_us(Partition::whole(&gpu), Some(cap), &kernel);
        let partition = alone_us(Partition::first(cap), None, &kernel);
        let whole = alone_us(Partition::whole(&gpu), None, &kernel);
        assert!(
            (capped / partition - 1.0).abs() < 1e-9,
            "{}: capped at {cap} SMs {capped} us, on {cap} SMs {partition} us",
            kernel.name
        );
        // A compute-bound grid wider than the cap takes longer than on
        // the whole GPU (a memory-bound one needs few SMs for the DRAM).
        if kernel.name == "c" && kernel.grid.x > cap {
            assert!(
                capped > whole * 1.5,
                "{}: the cap binds ({capped} vs {whole})",
                kernel.name
            );
        }
    }
}

#[test]
fn green_contexts_meet_only_on_the_memory_path() {
    let gpu = gpu();
    let (ca, cb) = compute_pair((54, 54), Sharing::GreenContext);
    assert!(
        (ca - 1.0).abs() < 0.02 && (cb - 1.0).abs() < 0.02,
        "compute pair: {ca} {cb}"
    );
    let (ma, mb) = slowdowns(
        &gpu,
        memory_kernel("a", 4000),
        memory_kernel("b", 4000),
        (54, 54),
        Sharing::GreenContext,
    );
    assert!(ma > 1.2 && mb > 1.2, "memory pair shares DRAM: {ma} {mb}");
}

#[test]
fn mps_caps_that_fit_the_gpu_land_on_disjoint_sms() {
    let (a, b) = compute_pair((54, 54), Sharing::Mps);
    let (ga, gb) = compute_pair((54, 54), Sharing::GreenContext);
    assert!(
        (a - ga).abs() < 0.02 && (b - gb).abs() < 0.02,
        "mps {a} {b}, green {ga} {gb}"
    );
}

#[test]
fn overlapping_mps_caps_share_sms_and_slow_both_through_the_pipes() {
    for (sharing, split) in [
        (Sharing::Mps, (108, 108)),
        (Sharing::Mps, (80, 80)),
        (Sharing::Full, (108, 108)),
    ] {
        let (a, b) = compute_pair(split, sharing);
        // No memory traffic to speak of: only co-resident blocks sharing
        // an SM's issue slots slow these.
        assert!(a > 1.3 && b > 1.3, "{sharing} {split:?}: {a} {b}");
    }
}

#[test]
fn splits_are_checked_by_the_sharing() {
    let gpu = gpu();
    // MPS percentages may sum past 100; green contexts may not.
    assert!(resolve_splits(&gpu, &[(80, 80)], Sharing::Mps).is_ok());
    assert!(resolve_splits(&gpu, &[(80, 80)], Sharing::GreenContext).is_err());
    assert!(resolve_splits(&gpu, &[(200, 8)], Sharing::Mps).is_err());
    assert_eq!(
        resolve_splits(&gpu, &[], Sharing::Full).unwrap(),
        vec![(108, 108)]
    );
    assert!(resolve_splits(&gpu, &[(54, 54)], Sharing::Full).is_err());
    assert!(resolve_splits(&gpu, &[(108, 108)], Sharing::Full).is_ok());
}

#[test]
fn a_cap_outside_the_range_is_refused() {
    let gpu = gpu();
    let mut engine = SimEngine::new(&gpu);
    let id = engine.add_kernel(&compute_kernel("c", 8)).unwrap();
    for cap in [0, 30] {
        let err = engine
            .submit(LaunchRequest {
                job: 0,
                kernel: id,
                first_block: 0,
                blocks: 8,
                workers_per_sm: None,
                max_workers: None,
                preemptible: false,
                sms: Partition::first(20),
                priority: 0,
                with_overhead: false,
                host_delay_us: 0.0,
                max_sms: Some(cap),
            })
            .expect_err("refused");
        assert!(err.to_string().contains("SMs at once"), "{err}");
    }
}
