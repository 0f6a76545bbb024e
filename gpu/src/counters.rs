//! Hardware counters under their Nsight Compute metric names, and the
//! fixed-layout `CounterSet` a measurement carries (no map lookups on the
//! simulator's hot path; names are resolved once per dataset column).

use serde::{Deserialize, Serialize};

use crate::kernel::KernelSpec;
use crate::occupancy::Occupancy;

macro_rules! counters {
    ($($variant:ident => $name:literal),+ $(,)?) => {
        /// One Nsight Compute metric.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum Counter { $($variant),+ }

        impl Counter {
            /// Every counter, in dataset column order.
            pub const ALL: &'static [Counter] = &[$(Counter::$variant),+];

            /// The exact Nsight Compute metric name.
            pub fn name(&self) -> &'static str {
                match self { $(Counter::$variant => $name),+ }
            }
        }
    };
}

counters! {
    DurationNs => "gpu__time_duration.sum",
    CyclesElapsed => "sm__cycles_elapsed.avg",
    SmThroughputPct => "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    IssueActivePct => "sm__inst_issued.avg.pct_of_peak_sustained_active",
    IpcActive => "sm__inst_executed.avg.per_cycle_active",
    AchievedOccupancyPct => "sm__warps_active.avg.pct_of_peak_sustained_active",
    TensorActivePct => "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    L1HitRatePct => "l1tex__t_sector_hit_rate.pct",
    L1ThroughputPct => "l1tex__throughput.avg.pct_of_peak_sustained_active",
    L2SectorsPct => "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
    L2ThroughputPct => "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    L2HitRatePct => "lts__t_sector_hit_rate.pct",
    L2Bytes => "lts__t_bytes.sum",
    DramThroughputPct => "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    DramBytesRead => "dram__bytes_read.sum",
    DramBytesWrite => "dram__bytes_write.sum",
    Fadd => "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    Fmul => "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    Ffma => "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    Hadd => "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum",
    Hmul => "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum",
    Hfma => "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",
    GridSize => "launch__grid_size",
    BlockSize => "launch__block_size",
    RegistersPerThread => "launch__registers_per_thread",
    SharedMemStatic => "launch__shared_mem_per_block_static",
    SharedMemDynamic => "launch__shared_mem_per_block_dynamic",
    SmCount => "launch__sm_count",
    WavesPerSm => "launch__waves_per_multiprocessor",
    OccLimitRegisters => "launch__occupancy_limit_registers",
    OccLimitSharedMem => "launch__occupancy_limit_shared_mem",
    OccLimitWarps => "launch__occupancy_limit_warps",
    OccLimitBlocks => "launch__occupancy_limit_blocks",
}

impl Counter {
    /// Look a counter up by its Nsight Compute name.
    pub fn from_name(name: &str) -> Option<Counter> {
        Counter::ALL.iter().copied().find(|c| c.name() == name)
    }

    /// Position in `Counter::ALL` and in a `CounterSet`.
    pub fn index(&self) -> usize {
        *self as usize
    }
}

/// The `launch__*` counters (and the SM count): what a launch's
/// configuration and the occupancy calculation fix before it runs, so every
/// backend knows them without a profiler.
pub const LAUNCH_COUNTERS: [Counter; 11] = [
    Counter::GridSize,
    Counter::BlockSize,
    Counter::RegistersPerThread,
    Counter::SharedMemStatic,
    Counter::SharedMemDynamic,
    Counter::SmCount,
    Counter::WavesPerSm,
    Counter::OccLimitRegisters,
    Counter::OccLimitSharedMem,
    Counter::OccLimitWarps,
    Counter::OccLimitBlocks,
];

/// Values of [`LAUNCH_COUNTERS`], in that order, for `kernel` with
/// occupancy `occ` on `sm_count` SMs.
pub fn launch_counters(
    kernel: &KernelSpec,
    occ: &Occupancy,
    sm_count: u32,
) -> [(Counter, f64); 11] {
    let blocks = kernel.blocks() as f64;
    let k = f64::from(sm_count);
    [
        (Counter::GridSize, blocks),
        (Counter::BlockSize, f64::from(kernel.threads_per_block())),
        (
            Counter::RegistersPerThread,
            f64::from(kernel.registers_per_thread),
        ),
        (
            Counter::SharedMemStatic,
            f64::from(kernel.shared_mem_static),
        ),
        (
            Counter::SharedMemDynamic,
            f64::from(kernel.shared_mem_dynamic),
        ),
        (Counter::SmCount, k),
        (
            Counter::WavesPerSm,
            blocks / (f64::from(occ.blocks_per_sm) * k),
        ),
        (Counter::OccLimitRegisters, f64::from(occ.limit_registers)),
        (Counter::OccLimitSharedMem, f64::from(occ.limit_shared_mem)),
        (Counter::OccLimitWarps, f64::from(occ.limit_warps)),
        (Counter::OccLimitBlocks, f64::from(occ.limit_blocks)),
    ]
}

/// A value for every `Counter`, indexed by `Counter::index`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterSet {
    values: Vec<f64>,
}

impl Default for CounterSet {
    fn default() -> Self {
        CounterSet {
            values: vec![0.0; Counter::ALL.len()],
        }
    }
}

impl CounterSet {
    pub fn get(&self, c: Counter) -> f64 {
        self.values[c.index()]
    }

    pub fn set(&mut self, c: Counter, v: f64) {
        self.values[c.index()] = v;
    }

    /// Values in `Counter::ALL` order.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// `(name, value)` pairs in column order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        Counter::ALL.iter().map(|c| (c.name(), self.get(*c)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_counters_come_in_their_listed_order() {
        let gpu = crate::spec::GpuSpec::preset("h200").expect("preset");
        let k = crate::cuda::green::probe_kernel_spec(1 << 20, 1056);
        let occ = Occupancy::of(&k, &gpu).expect("launchable");
        let values = launch_counters(&k, &occ, 66);
        let order: Vec<Counter> = values.iter().map(|(c, _)| *c).collect();
        assert_eq!(order, LAUNCH_COUNTERS);
        let get = |c: Counter| values.iter().find(|(x, _)| *x == c).map(|(_, v)| *v);
        assert_eq!(get(Counter::GridSize), Some(1056.0));
        assert_eq!(get(Counter::SmCount), Some(66.0));
        // 1056 blocks, 8 resident per SM (256 threads each), on 66 SMs.
        assert_eq!(get(Counter::WavesPerSm), Some(2.0));
    }

    #[test]
    fn names_are_unique_ncu_names() {
        let mut names: Vec<&str> = Counter::ALL.iter().map(Counter::name).collect();
        assert!(names.len() >= 20);
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Counter::ALL.len());
        for (i, c) in Counter::ALL.iter().enumerate() {
            assert_eq!(c.index(), i);
            assert_eq!(Counter::from_name(c.name()), Some(*c));
        }
    }
}
