//! Pair features: what the models see of "operator A on its partition while
//! operator B runs on the rest", computed from the two standalone profiles
//! alone — each side's demand on every shared resource, and their
//! interactions (sums, products, queueing pressure of the combined demand,
//! the L2 capacity A would lose to B).
//!
//! The feature vector is a fixed-size array so the run-time predictor
//! builds it on the stack; `FEATURE_NAMES` and `FEATURE_RESOURCES` give each
//! slot its name (stored in model files as the schema) and the shared
//! resource it describes (for `--explain`).

use serde::{Deserialize, Serialize};

use tally_gpu::Counter;

use crate::profile::{GpuContext, SideProfile};

/// Version of the feature definitions; bump when a feature changes meaning.
pub const FEATURE_SCHEMA_VERSION: u32 = 2;

/// Number of features.
pub const N_FEATURES: usize = 37;

/// A feature vector.
pub type Features = [f64; N_FEATURES];

/// The shared-path resource a feature describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    /// Partition sizes and the operator's own character (no co-runner part).
    Own,
    /// Issue slots and pipes (private to each partition; shapes sensitivity).
    Compute,
    /// L1 and the SM's crossbar port.
    Crossbar,
    /// L2 bandwidth.
    L2Bandwidth,
    /// L2 capacity (the working sets evicting each other).
    L2Capacity,
    /// DRAM bandwidth.
    Dram,
}

impl Resource {
    pub const ALL: [Resource; 6] = [
        Resource::Own,
        Resource::Compute,
        Resource::Crossbar,
        Resource::L2Bandwidth,
        Resource::L2Capacity,
        Resource::Dram,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            Resource::Own => "own",
            Resource::Compute => "compute",
            Resource::Crossbar => "crossbar",
            Resource::L2Bandwidth => "l2_bandwidth",
            Resource::L2Capacity => "l2_capacity",
            Resource::Dram => "dram",
        }
    }
}

macro_rules! features {
    ($($name:literal => $res:ident, $deps:ident),+ $(,)?) => {
        /// Feature names, in vector order (the model files' schema).
        pub const FEATURE_NAMES: [&str; N_FEATURES] = [$($name),+];
        /// The resource of each feature, in vector order.
        pub const FEATURE_RESOURCES: [Resource; N_FEATURES] = [$(Resource::$res),+];
        /// The counters each feature is computed from (of either side), in
        /// vector order: a predictor without one of them cannot use the
        /// feature (`counter_subset.rs`).
        pub const FEATURE_COUNTERS: [&[Counter]; N_FEATURES] = [$($deps),+];
    };
}

// Counter groups of the features below. `memory_share` reads every
// throughput counter, `shared_share` the private units' and the port's.
const OWN: &[Counter] = &[];
const SM: &[Counter] = &[Counter::SmThroughputPct];
const ISSUE: &[Counter] = &[Counter::IssueActivePct];
const OCCUPANCY: &[Counter] = &[Counter::AchievedOccupancyPct];
const TENSOR: &[Counter] = &[Counter::TensorActivePct];
const L1: &[Counter] = &[Counter::L1ThroughputPct];
const PORT: &[Counter] = &[Counter::L2ThroughputPct];
const L2: &[Counter] = &[Counter::L2SectorsPct];
const DRAM: &[Counter] = &[Counter::DramThroughputPct];
const WORKING_SET: &[Counter] = &[Counter::DramBytesRead, Counter::DramBytesWrite];
const L2_HIT: &[Counter] = &[Counter::L2HitRatePct];
const MEMORY_SHARE: &[Counter] = &[
    Counter::SmThroughputPct,
    Counter::IssueActivePct,
    Counter::L1ThroughputPct,
    Counter::L2ThroughputPct,
    Counter::L2SectorsPct,
    Counter::DramThroughputPct,
];
const SHARED_SHARE: &[Counter] = &[
    Counter::SmThroughputPct,
    Counter::IssueActivePct,
    Counter::L1ThroughputPct,
    Counter::L2ThroughputPct,
];
const SHARED_X_L2: &[Counter] = &[
    Counter::SmThroughputPct,
    Counter::IssueActivePct,
    Counter::L1ThroughputPct,
    Counter::L2ThroughputPct,
    Counter::L2SectorsPct,
];
const SHARED_X_DRAM: &[Counter] = &[
    Counter::SmThroughputPct,
    Counter::IssueActivePct,
    Counter::L1ThroughputPct,
    Counter::L2ThroughputPct,
    Counter::DramThroughputPct,
];
const CAPACITY_LOSS: &[Counter] = &[
    Counter::DramBytesRead,
    Counter::DramBytesWrite,
    Counter::DramThroughputPct,
];
const HIT_X_LOSS: &[Counter] = &[
    Counter::L2HitRatePct,
    Counter::DramBytesRead,
    Counter::DramBytesWrite,
    Counter::DramThroughputPct,
];

features! {
    "a_sm_fraction" => Own, OWN,
    "b_sm_fraction" => Own, OWN,
    "a_memory_share" => Own, MEMORY_SHARE,
    "a_shared_share" => Own, SHARED_SHARE,
    "a_log_duration_us" => Own, OWN,
    "a_sm_busy" => Compute, SM,
    "a_issue" => Compute, ISSUE,
    "a_occupancy" => Compute, OCCUPANCY,
    "a_tensor" => Compute, TENSOR,
    "b_sm_busy" => Compute, SM,
    "b_issue" => Compute, ISSUE,
    "a_l1" => Crossbar, L1,
    "a_l2_port" => Crossbar, PORT,
    "b_l2_port" => Crossbar, PORT,
    "port_sum" => Crossbar, PORT,
    "a_l2_util" => L2Bandwidth, L2,
    "b_l2_util" => L2Bandwidth, L2,
    "l2_sum" => L2Bandwidth, L2,
    "l2_product" => L2Bandwidth, L2,
    "l2_queue_pressure" => L2Bandwidth, L2,
    "a_memory_x_l2_pressure" => L2Bandwidth, MEMORY_SHARE,
    "a_shared_x_l2_pressure" => L2Bandwidth, SHARED_X_L2,
    "a_dram_util" => Dram, DRAM,
    "b_dram_util" => Dram, DRAM,
    "dram_sum" => Dram, DRAM,
    "dram_product" => Dram, DRAM,
    "dram_queue_pressure" => Dram, DRAM,
    "a_memory_x_dram_pressure" => Dram, MEMORY_SHARE,
    "a_shared_x_dram_pressure" => Dram, SHARED_X_DRAM,
    "dram_excess" => Dram, DRAM,
    "a_working_set" => L2Capacity, WORKING_SET,
    "b_working_set" => L2Capacity, WORKING_SET,
    "working_set_overflow" => L2Capacity, WORKING_SET,
    "a_l2_hit" => L2Capacity, L2_HIT,
    "b_l2_hit" => L2Capacity, L2_HIT,
    "a_capacity_loss" => L2Capacity, CAPACITY_LOSS,
    "a_hit_x_capacity_loss" => L2Capacity, HIT_X_LOSS,
}

/// Position of a feature by name, at compile time.
pub const fn feature_index(name: &str) -> usize {
    let mut i = 0;
    while i < FEATURE_NAMES.len() {
        if const_str_eq(FEATURE_NAMES[i], name) {
            return i;
        }
        i += 1;
    }
    panic!("unknown feature name");
}

const fn const_str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Utilisations are capped below 1 before the queueing terms, which grow
/// without bound at saturation.
const RHO_CAP: f64 = 0.97;

/// Queueing pressure at utilisation `rho`: `rho^2 / (1 - rho)`, the shape of
/// the waiting time of a loaded server (flat at low load, a knee near
/// saturation). Any queue has this shape; the models learn the scale.
#[inline]
fn pressure(rho: f64) -> f64 {
    let r = rho.clamp(0.0, RHO_CAP);
    r * r / (1.0 - r)
}

/// Share of the time an operator spends on memory rather than compute, from
/// its busiest memory unit against its busiest compute unit.
#[inline]
fn memory_share(p: &SideProfile) -> f64 {
    let memory = p.l2_port.max(p.l2_util).max(p.dram_util).max(p.l1);
    let compute = p.sm_busy.max(p.issue);
    if memory + compute > 0.0 {
        memory / (memory + compute)
    } else {
        0.0
    }
}

/// How close the shared path (the SM's L2 port, L2, DRAM) is to being the
/// operator's bottleneck: its busiest shared unit against its busiest unit
/// of any kind. L1 and the pipes are private to the partition, so an
/// operator bound by them (a depthwise convolution re-reading its tile
/// from L1) barely feels a co-runner however much DRAM traffic it has.
#[inline]
fn shared_share(p: &SideProfile, gpu: &GpuContext) -> f64 {
    // The other bounds combine with the memory-latency one as a soft
    // maximum of 4th powers (their utilisations are their share of the
    // elapsed time): what they leave of the budget is the latency term,
    // the only one a co-runner lengthens.
    let port_own = (p.l2_port * f64::from(gpu.sm_count) / f64::from(p.sm_count.max(1))).min(1.0);
    let others = p.sm_busy.max(p.issue).powi(4) + p.l1.powi(4) + port_own.powi(4);
    // Fourth root as two square roots: powf is several times slower, and
    // this runs on the scheduler's decision path.
    (1.0 - others).clamp(0.0, 1.0).sqrt().sqrt()
}

/// Working set in units of the L2 capacity. DRAM bytes are the bytes the
/// operator brings into L2: its compulsory footprint, plus re-reads when it
/// does not fit.
#[inline]
fn working_set(p: &SideProfile, gpu: &GpuContext) -> f64 {
    p.dram_bytes / gpu.l2_bytes
}

/// Share of A's L2 hits lost to B: both working sets are held in proportion
/// to their insertion (DRAM) rates when they do not fit together, neither
/// more than its own working set.
#[inline]
fn capacity_loss(ws_a: f64, ws_b: f64, dram_a: f64, dram_b: f64) -> f64 {
    if ws_a <= 0.0 || ws_a + ws_b <= 1.0 {
        return 0.0;
    }
    let share = if dram_a + dram_b > 0.0 {
        dram_a / (dram_a + dram_b)
    } else {
        0.5
    };
    let held = share.clamp((1.0 - ws_b).max(0.0), ws_a.min(1.0));
    let fit_alone = (1.0 / ws_a).min(1.0);
    let fit_together = (held / ws_a).min(1.0);
    (1.0 - fit_together / fit_alone).max(0.0)
}

/// Features of side `a` co-located with `b` (each on its own partition).
#[inline]
pub fn pair_features(a: &SideProfile, b: &SideProfile, gpu: &GpuContext) -> Features {
    let total = f64::from(gpu.sm_count.max(1));
    let mem_a = memory_share(a);
    let shared_a = shared_share(a, gpu);
    let l2_sum = a.l2_util + b.l2_util;
    let dram_sum = a.dram_util + b.dram_util;
    let l2_pressure = pressure(l2_sum) - pressure(a.l2_util);
    let dram_pressure = pressure(dram_sum) - pressure(a.dram_util);
    let ws_a = working_set(a, gpu);
    let ws_b = working_set(b, gpu);
    let loss = capacity_loss(ws_a, ws_b, a.dram_util, b.dram_util);
    [
        f64::from(a.sm_count) / total,
        f64::from(b.sm_count) / total,
        mem_a,
        shared_a,
        a.duration_us.max(1e-3).ln(),
        a.sm_busy,
        a.issue,
        a.occupancy,
        a.tensor,
        b.sm_busy,
        b.issue,
        a.l1,
        a.l2_port,
        b.l2_port,
        a.l2_port + b.l2_port,
        a.l2_util,
        b.l2_util,
        l2_sum,
        a.l2_util * b.l2_util,
        l2_pressure,
        mem_a * l2_pressure,
        shared_a * l2_pressure,
        a.dram_util,
        b.dram_util,
        dram_sum,
        a.dram_util * b.dram_util,
        dram_pressure,
        mem_a * dram_pressure,
        shared_a * dram_pressure,
        (dram_sum - 1.0).max(0.0),
        ws_a.min(16.0),
        ws_b.min(16.0),
        (ws_a + ws_b - 1.0).clamp(0.0, 16.0),
        a.l2_hit,
        b.l2_hit,
        loss,
        a.l2_hit * loss,
    ]
}

/// What A's features would be with an idle co-runner on the other
/// partition: the reference point `--explain` measures contributions from.
pub fn solo_reference(a: &SideProfile, b_sm_count: u32, gpu: &GpuContext) -> Features {
    let idle = SideProfile {
        sm_count: b_sm_count,
        duration_us: 1.0,
        ..SideProfile::default()
    };
    pair_features(a, &idle, gpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu() -> GpuContext {
        GpuContext {
            sm_count: 100,
            l2_bytes: 1000.0,
        }
    }

    fn side(l2: f64, dram: f64, dram_bytes: f64) -> SideProfile {
        SideProfile {
            sm_count: 50,
            duration_us: 10.0,
            sm_busy: 0.2,
            issue: 0.1,
            occupancy: 0.5,
            tensor: 0.0,
            l1: 0.3,
            l2_util: l2,
            l2_port: l2,
            l2_hit: 0.5,
            l2_bytes: 2.0 * dram_bytes,
            dram_util: dram,
            dram_bytes,
        }
    }

    fn feature(f: &Features, name: &str) -> f64 {
        f[FEATURE_NAMES.iter().position(|n| *n == name).expect(name)]
    }

    #[test]
    fn names_are_unique() {
        let mut names = FEATURE_NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), N_FEATURES);
    }

    #[test]
    fn hand_computed_case() {
        // A: 40 % of L2, 60 % of DRAM, working set 0.8 L2; B: 30 % / 50 %, 0.6 L2.
        let a = side(0.4, 0.6, 800.0);
        let b = side(0.3, 0.5, 600.0);
        let f = pair_features(&a, &b, &gpu());
        assert_eq!(feature(&f, "a_sm_fraction"), 0.5);
        assert!((feature(&f, "l2_sum") - 0.7).abs() < 1e-12);
        assert!((feature(&f, "dram_product") - 0.3).abs() < 1e-12);
        assert!((feature(&f, "dram_excess") - 0.1).abs() < 1e-12);
        // pressure(0.7) - pressure(0.4) = 0.49/0.3 - 0.16/0.6
        let expected = 0.49 / 0.3 - 0.16 / 0.6;
        assert!((feature(&f, "l2_queue_pressure") - expected).abs() < 1e-12);
        // memory share: max(0.4, 0.4, 0.6, 0.3) / (0.6 + 0.2) = 0.75
        assert!((feature(&f, "a_memory_share") - 0.75).abs() < 1e-12);
        // latency share: port 0.4 x 100/50 = 0.8 of its own SMs' ports,
        // (1 - 0.2^4 - 0.3^4 - 0.8^4)^(1/4)
        let share = (1.0f64 - 0.2f64.powi(4) - 0.3f64.powi(4) - 0.8f64.powi(4)).powf(0.25);
        assert!((feature(&f, "a_shared_share") - share).abs() < 1e-12);
        assert!((feature(&f, "a_shared_x_l2_pressure") - share * expected).abs() < 1e-12);
        assert!((feature(&f, "working_set_overflow") - 0.4).abs() < 1e-12);
        // Capacity held by insertion rate: 0.6 / 1.1 of the L2, clamped to
        // at least 1 - 0.6 = 0.4: 0.5454...; A fits alone, so the loss is
        // 1 - 0.5454 / 0.8.
        let held = 0.6 / 1.1;
        assert!((feature(&f, "a_capacity_loss") - (1.0 - held / 0.8)).abs() < 1e-12);
        assert!((feature(&f, "a_hit_x_capacity_loss") - 0.5 * (1.0 - held / 0.8)).abs() < 1e-12);
    }

    #[test]
    fn no_capacity_loss_when_both_fit() {
        assert_eq!(capacity_loss(0.3, 0.6, 0.5, 0.5), 0.0);
        assert!(capacity_loss(0.9, 0.9, 0.1, 0.9) > 0.0);
        // A kernel that never re-reads from a co-runner-free cache loses nothing more
        // than it already lost alone.
        assert_eq!(capacity_loss(4.0, 0.0, 0.5, 0.0), 0.0);
    }

    /// Changing the value of any counter changes only features that
    /// declare it: masking a feature whose counters are absent never lets
    /// an absent counter through another feature.
    #[test]
    fn features_depend_only_on_their_declared_counters() {
        fn perturb(p: &mut SideProfile, c: Counter) {
            match c {
                Counter::SmThroughputPct => p.sm_busy *= 1.37,
                Counter::IssueActivePct => p.issue *= 1.41,
                Counter::AchievedOccupancyPct => p.occupancy *= 0.77,
                Counter::TensorActivePct => p.tensor += 0.21,
                Counter::L1ThroughputPct => p.l1 *= 1.29,
                Counter::L2SectorsPct => p.l2_util *= 1.23,
                Counter::L2ThroughputPct => p.l2_port *= 1.31,
                Counter::L2HitRatePct => p.l2_hit *= 0.61,
                Counter::L2Bytes => p.l2_bytes *= 1.9,
                Counter::DramThroughputPct => p.dram_util *= 1.17,
                Counter::DramBytesRead | Counter::DramBytesWrite => p.dram_bytes *= 1.7,
                _ => {}
            }
        }
        // Working sets that overflow the L2 together, every unit busy, so
        // every term of every feature is live.
        let cases = [
            (side(0.4, 0.6, 800.0), side(0.3, 0.5, 600.0)),
            (side(0.7, 0.2, 1500.0), side(0.5, 0.4, 900.0)),
        ];
        for (a, b) in cases {
            let before = pair_features(&a, &b, &gpu());
            for &c in crate::profile::REQUIRED_COUNTERS.iter() {
                let (mut a2, mut b2) = (a, b);
                perturb(&mut a2, c);
                perturb(&mut b2, c);
                let after = pair_features(&a2, &b2, &gpu());
                for i in 0..N_FEATURES {
                    if (after[i] - before[i]).abs() > 1e-12 {
                        assert!(
                            FEATURE_COUNTERS[i].contains(&c),
                            "{} changes with {} but does not declare it",
                            FEATURE_NAMES[i],
                            c.name()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn idle_co_runner_has_no_pressure() {
        let a = side(0.4, 0.6, 800.0);
        let f = solo_reference(&a, 50, &gpu());
        assert_eq!(feature(&f, "l2_queue_pressure"), 0.0);
        assert_eq!(feature(&f, "dram_queue_pressure"), 0.0);
        assert_eq!(feature(&f, "a_capacity_loss"), 0.0);
    }
}
