//! Task-level co-location composition: hand-checkable cases and the
//! invariant that a composition with no interference changes nothing.

mod common;

use std::sync::Arc;

use proptest::prelude::*;
use tally_gpu::{GpuSpec, KernelSpec, Partition, Sharing};
use tally_predictor::SideProfile;
use tally_sched::colocation::compose::{compose, Iterations, Side};
use tally_sched::colocation::kernel_profiles::KernelProfiles;
use tally_sched::colocation::pair_slowdown::{Kernel, KernelFacts, PairSlowdown, ScalingOnly};
use tally_sched::colocation::predicted_contention::PredictedContention;
use tally_sched::colocation::task_pair::{best_split, task_pair, Rates};
use tally_sched::engine::sim::SimEngine;
use tally_sched::engine::{Engine, EngineError, KernelId};
use tally_sched::workload::JobSpec;

use common::{compute_kernel, memory_kernel};

/// The A100 with no launch overhead, so a task's latency is exactly the
/// sum of its kernels' paced durations.
fn gpu_without_gaps() -> GpuSpec {
    let mut gpu = common::gpu();
    gpu.launch_overhead_us = 0.0;
    gpu
}

/// Slowdowns by kernel name: `a` against `b` is `table[(a, b)]`, 1 if
/// absent.
#[derive(Debug)]
struct Table(Vec<(&'static str, &'static str, f64)>);

impl PairSlowdown for Table {
    fn name(&self) -> &str {
        "table"
    }

    fn slowdown(&self, a: Kernel<'_>, b: Kernel<'_>) -> Result<f64, EngineError> {
        Ok(self
            .0
            .iter()
            .find(|(x, y, _)| *x == a.spec.name && *y == b.spec.name)
            .map_or(1.0, |t| t.2))
    }
}

fn facts(sm_count: u32, duration_us: f64) -> KernelFacts {
    KernelFacts {
        profile: SideProfile {
            sm_count,
            duration_us,
            ..SideProfile::default()
        },
        memory_bound: false,
    }
}

/// An engine paced by `pairs` on `profiles`, with `kernels` registered.
fn engine(
    gpu: &GpuSpec,
    profiles: KernelProfiles,
    pairs: impl PairSlowdown + 'static,
) -> SimEngine {
    SimEngine::with_contention(
        gpu,
        Box::new(PredictedContention::new(
            gpu,
            Arc::new(profiles),
            Arc::new(pairs),
        )),
    )
}

fn register(engine: &mut SimEngine, kernels: &[KernelSpec]) -> Vec<KernelId> {
    kernels
        .iter()
        .map(|k| engine.add_kernel(k).expect("kernel registers"))
        .collect()
}

/// `a` on the first 8 SMs and `b` on the next 16, until each has run
/// `iterations` times.
fn side_by_side(
    engine: &mut SimEngine,
    a: &[KernelId],
    b: &[KernelId],
    iterations: usize,
) -> Vec<Iterations> {
    let first = Partition::first(8);
    let sides = [
        Side {
            kernels: a,
            sms: first,
            max_sms: None,
            launch_interval_us: 0.0,
        },
        Side {
            kernels: b,
            sms: first.after(16),
            max_sms: None,
            launch_interval_us: 0.0,
        },
    ];
    compose(engine, &sides, iterations).expect("composes")
}

#[test]
fn one_kernel_each_equal_lengths_known_slowdowns() {
    let gpu = gpu_without_gaps();
    // Few blocks: one round on each partition.
    let a = compute_kernel("a", 8);
    let b = memory_kernel("b", 8);
    let mut profiles = KernelProfiles::default();
    profiles.insert(&a, 8, facts(8, 100.0));
    profiles.insert(&b, 16, facts(16, 100.0));
    let mut engine = engine(
        &gpu,
        profiles,
        Table(vec![("a", "b", 1.5), ("b", "a", 1.2)]),
    );
    let ids_a = register(&mut engine, std::slice::from_ref(&a));
    let ids_b = register(&mut engine, std::slice::from_ref(&b));
    let it = side_by_side(&mut engine, &ids_a, &ids_b, 3);
    // Each side always has the other's kernel beside it (no gaps), so
    // each takes its profiled 100 us stretched by its slowdown.
    assert!((it[0].mean_us - 150.0).abs() < 1e-6, "{it:?}");
    assert!((it[1].mean_us - 120.0).abs() < 1e-6, "{it:?}");
    assert!(it[0].count >= 3 && it[1].count >= 3);
}

#[test]
fn a_kernel_spanning_two_of_the_others_is_paced_by_each_in_turn() {
    let gpu = gpu_without_gaps();
    let a = compute_kernel("a", 8);
    let b1 = memory_kernel("b1", 8);
    // Another grid: kernels are told apart by their op id (their shape).
    let b2 = memory_kernel("b2", 9);
    let mut profiles = KernelProfiles::default();
    profiles.insert(&a, 8, facts(8, 100.0));
    profiles.insert(&b1, 16, facts(16, 50.0));
    profiles.insert(&b2, 16, facts(16, 50.0));
    // `a` runs at full speed beside b1 and at half speed beside b2.
    let mut engine = engine(&gpu, profiles, Table(vec![("a", "b2", 2.0)]));
    let ids_a = register(&mut engine, std::slice::from_ref(&a));
    let ids_b = register(&mut engine, &[b1, b2]);
    let it = side_by_side(&mut engine, &ids_a, &ids_b, 1);
    // 0-50 us beside b1: half of a done; 50-100 beside b2: a quarter;
    // from 100 beside b1 again: the last quarter in 25 us. An average of
    // the two slowdowns (1.5) would say 150.
    assert!((it[0].mean_us - 125.0).abs() < 1e-6, "{it:?}");
    assert!((it[1].mean_us - 100.0).abs() < 1e-6, "{it:?}");
}

/// A task of `n` copies of kernel `k` whose host issues a launch every
/// `interval` us, beside kernel `b` looping on its own partition.
fn launch_bound_pair(interval: f64, slowdown: f64) -> Vec<Iterations> {
    let gpu = gpu_without_gaps();
    let a = compute_kernel("a", 8);
    let b = memory_kernel("b", 8);
    let mut profiles = KernelProfiles::default();
    profiles.insert(&a, 8, facts(8, 10.0));
    profiles.insert(&b, 16, facts(16, 100.0));
    let mut engine = engine(&gpu, profiles, Table(vec![("a", "b", slowdown)]));
    let ids_a = register(&mut engine, &[a.clone(), a.clone(), a.clone(), a]);
    let ids_b = register(&mut engine, std::slice::from_ref(&b));
    let first = Partition::first(8);
    let sides = [
        Side {
            kernels: &ids_a,
            sms: first,
            max_sms: None,
            launch_interval_us: interval,
        },
        Side {
            kernels: &ids_b,
            sms: first.after(16),
            max_sms: None,
            launch_interval_us: 0.0,
        },
    ];
    compose(&mut engine, &sides, 3).expect("composes")
}

#[test]
fn a_launch_bound_task_lasts_as_long_as_its_host_and_hides_a_slower_gpu() {
    // Host every 30 us, kernels of 10 us: launch i starts at 30 (i + 1) and
    // the last ends 10 us later, so 4 launches take 130 us.
    let alone = launch_bound_pair(30.0, 1.0);
    assert!((alone[0].mean_us - 130.0).abs() < 1e-6, "{alone:?}");
    // Twice as slow on the GPU (20 us kernels) still fits in the host's
    // 30 us: only the last kernel's extra 10 us shows.
    let slowed = launch_bound_pair(30.0, 2.0);
    assert!((slowed[0].mean_us - 140.0).abs() < 1e-6, "{slowed:?}");
    // With the host ahead (no interval) the same slowdown doubles all of it.
    let gpu_bound = launch_bound_pair(0.0, 2.0);
    assert!((gpu_bound[0].mean_us - 80.0).abs() < 1e-6, "{gpu_bound:?}");
}

#[test]
fn the_best_split_minimises_the_larger_slowdown() {
    let gpu = gpu_without_gaps();
    let a = JobSpec::gpu_bound("a", vec![compute_kernel("a", 8)]);
    let b = JobSpec::gpu_bound("b", vec![memory_kernel("b", 8)]);
    let splits = [(28, 80), (52, 56), (80, 28)];
    let mut profiles = KernelProfiles::default();
    for &(sa, sb) in &splits {
        profiles.insert(&a.kernels[0], sa, facts(sa, 100.0));
        profiles.insert(&b.kernels[0], sb, facts(sb, 100.0));
    }
    let rates = Rates::Predicted {
        profiles: Arc::new(profiles),
        pairs: Arc::new(Table(vec![("a", "b", 1.5), ("b", "a", 1.2)])),
    };
    let rows = task_pair(&gpu, &a, &b, &splits, &rates, Sharing::GreenContext).expect("predicts");
    assert_eq!(rows.len(), 3);
    for r in &rows {
        assert!((r.solo_a_us - 100.0).abs() < 1e-6 && (r.solo_b_us - 100.0).abs() < 1e-6);
        assert!((r.co_a_us - 150.0).abs() < 1e-6 && (r.co_b_us - 120.0).abs() < 1e-6);
    }
    // Equal slowdowns at every split: the first of the ties.
    assert_eq!(best_split(&rows), Some(0));
}

#[test]
fn a_kernel_without_a_profile_is_an_error_naming_it() {
    let gpu = gpu_without_gaps();
    let a = JobSpec::gpu_bound("a", vec![compute_kernel("lonely", 8)]);
    let b = JobSpec::gpu_bound("b", vec![memory_kernel("b", 8)]);
    let rates = Rates::Predicted {
        profiles: Arc::new(KernelProfiles::default()),
        pairs: Arc::new(ScalingOnly),
    };
    let err = task_pair(&gpu, &a, &b, &[(28, 80)], &rates, Sharing::GreenContext)
        .expect_err("no profile");
    assert!(err.to_string().contains("lonely"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// With an all-ones pair slowdown, each task's co-located latency is
    /// its solo latency, whatever the kernels, their lengths and the split.
    #[test]
    fn all_ones_gives_colocated_equal_to_solo(
        a_kernels in prop::collection::vec((1u32..600, 1.0f64..500.0, any::<bool>()), 1..5),
        b_kernels in prop::collection::vec((1u32..600, 1.0f64..500.0, any::<bool>()), 1..5),
        split in 0usize..3,
    ) {
        let gpu = common::gpu();
        let (sa, sb) = [(28, 80), (52, 56), (80, 28)][split];
        let mut profiles = KernelProfiles::default();
        let mut task = |name: &str, ks: &[(u32, f64, bool)], sms: u32| {
            let kernels: Vec<KernelSpec> = ks
                .iter()
                .enumerate()
                .map(|(i, &(blocks, us, memory))| {
                    let n = format!("{name}{i}");
                    // Distinct grids, so distinct op ids.
                    let blocks = blocks + 1000 * i as u32;
                    let k = if memory { memory_kernel(&n, blocks) } else { compute_kernel(&n, blocks) };
                    profiles.insert(&k, sms, facts(sms, us));
                    k
                })
                .collect();
            JobSpec::gpu_bound(name, kernels)
        };
        let a = task("a", &a_kernels, sa);
        let b = task("b", &b_kernels, sb);
        let rates = Rates::Predicted {
            profiles: Arc::new(profiles),
            pairs: Arc::new(ScalingOnly),
        };
        let rows = task_pair(&gpu, &a, &b, &[(sa, sb)], &rates, Sharing::GreenContext).expect("predicts");
        let r = rows[0];
        prop_assert!((r.co_a_us / r.solo_a_us - 1.0).abs() < 1e-9, "{r:?}");
        prop_assert!((r.co_b_us / r.solo_b_us - 1.0).abs() < 1e-9, "{r:?}");
        // Solo: every kernel's profiled duration plus one launch gap each.
        let expect_a: f64 = a_kernels.iter().map(|k| k.1 + gpu.launch_overhead_us).sum();
        prop_assert!((r.solo_a_us / expect_a - 1.0).abs() < 1e-9, "{r:?} vs {expect_a}");
    }
}
