//! The section display names of ncu's details page and the raw metric
//! behind each, where that metric is one tally keeps. Nsight Compute's
//! section files (`SpeedOfLight.section`, `ComputeWorkloadAnalysis.section`,
//! `MemoryWorkloadAnalysis.section`, `LaunchStatistics.section`,
//! `Occupancy.section`) give every line of the details page a `Label` (what
//! the CSV prints as `Metric Name`) and a `Name` (the raw metric). A label is
//! mapped only where that `Name` *is* the counter tally reads; a label whose
//! metric merely resembles one (an `_elapsed` variant of an `_active`
//! counter, a GPU-level aggregate) is left unmapped, so no counter is ever
//! filled with a different quantity. This is the one table; docs/profiling.md's
//! import section repeats it.
//!
//! | label (`Metric Name`) | section | raw metric (section file) | tally counter |
//! |---|---|---|---|
//! | Duration | GPU Speed Of Light Throughput | `gpu__time_duration.sum` | same |
//! | Compute (SM) Throughput | GPU Speed Of Light Throughput | `sm__throughput.avg.pct_of_peak_sustained_elapsed` | same |
//! | Compute (SM) [%] | GPU Speed Of Light Throughput (chart) | `sm__throughput.avg.pct_of_peak_sustained_elapsed` | same |
//! | SM [%] | GPU Speed Of Light (2019-2020 label of the same chart line) | `sm__throughput.avg.pct_of_peak_sustained_elapsed` | same |
//! | L1/TEX Cache Throughput | GPU Speed Of Light Throughput | `l1tex__throughput.avg.pct_of_peak_sustained_active` | same |
//! | L2 Cache Throughput | GPU Speed Of Light Throughput | `lts__throughput.avg.pct_of_peak_sustained_elapsed` | same |
//! | Executed Ipc Active | Compute Workload Analysis | `sm__inst_executed.avg.per_cycle_active` | same |
//! | L1/TEX Hit Rate | Memory Workload Analysis | `l1tex__t_sector_hit_rate.pct` | same |
//! | L2 Hit Rate | Memory Workload Analysis | `lts__t_sector_hit_rate.pct` | same |
//! | Achieved Occupancy | Occupancy, Launch Statistics | `sm__warps_active.avg.pct_of_peak_sustained_active` | same |
//! | Grid Size | Launch Statistics | `launch__grid_size` | same |
//! | Block Size | Launch Statistics | `launch__block_size` | same |
//! | Registers Per Thread | Launch Statistics | `launch__registers_per_thread` | same |
//! | Static Shared Memory Per Block | Launch Statistics | `launch__shared_mem_per_block_static` | same |
//! | Dynamic Shared Memory Per Block | Launch Statistics | `launch__shared_mem_per_block_dynamic` | same |
//! | # SMs | Launch Statistics | `launch__sm_count` | same |
//! | Waves Per SM | Launch Statistics, GPU Speed Of Light | `launch__waves_per_multiprocessor` | same |
//! | Block Limit Registers | Occupancy | `launch__occupancy_limit_registers` | same |
//! | Block Limit Shared Mem | Occupancy | `launch__occupancy_limit_shared_mem` | same |
//! | Block Limit Warps | Occupancy | `launch__occupancy_limit_warps` | same |
//! | Block Limit SM | Occupancy | `launch__occupancy_limit_blocks` | same |
//!
//! Read but not mapped (their metric is not one tally keeps):
//!
//! | label | raw metric | why not |
//! |---|---|---|
//! | DRAM Throughput | `gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed` | a GPU-level aggregate, not `dram__throughput.avg.pct_of_peak_sustained_elapsed` |
//! | Memory Throughput | `gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed` (`%`), `dram__bytes.sum.per_second` (`byte/second`) | neither is a tally counter |
//! | Issue Slots Busy | `sm__inst_issued.avg.pct_of_peak_sustained_elapsed` | tally reads the `_active` variant |
//! | SM Busy | `sm__instruction_throughput.avg.pct_of_peak_sustained_elapsed` | not a tally counter |
//! | Elapsed Cycles | `gpc__cycles_elapsed.max` | tally reads `sm__cycles_elapsed.avg` |
//! | Theoretical Occupancy, Mem Busy, Max Bandwidth, SM Frequency, DRAM Frequency, ... | (various) | not tally counters |
//! | SOL FB, SOL L2, SOL TEX, Memory [%], Memory Frequency | 2019-2020 labels | their section files were not available to check which metric each names |
//!
//! A raw metric name in the file (from `--metrics`) always maps to itself
//! and wins over a display name of the same counter.

use crate::counters::Counter;

/// `(label, counter)`: the labels of the first table above.
pub(crate) const DISPLAY_NAMES: [(&str, Counter); 21] = [
    ("Duration", Counter::DurationNs),
    ("Compute (SM) Throughput", Counter::SmThroughputPct),
    ("Compute (SM) [%]", Counter::SmThroughputPct),
    ("SM [%]", Counter::SmThroughputPct),
    ("L1/TEX Cache Throughput", Counter::L1ThroughputPct),
    ("L2 Cache Throughput", Counter::L2ThroughputPct),
    ("Executed Ipc Active", Counter::IpcActive),
    ("L1/TEX Hit Rate", Counter::L1HitRatePct),
    ("L2 Hit Rate", Counter::L2HitRatePct),
    ("Achieved Occupancy", Counter::AchievedOccupancyPct),
    ("Grid Size", Counter::GridSize),
    ("Block Size", Counter::BlockSize),
    ("Registers Per Thread", Counter::RegistersPerThread),
    ("Static Shared Memory Per Block", Counter::SharedMemStatic),
    ("Dynamic Shared Memory Per Block", Counter::SharedMemDynamic),
    ("# SMs", Counter::SmCount),
    ("Waves Per SM", Counter::WavesPerSm),
    ("Block Limit Registers", Counter::OccLimitRegisters),
    ("Block Limit Shared Mem", Counter::OccLimitSharedMem),
    ("Block Limit Warps", Counter::OccLimitWarps),
    ("Block Limit SM", Counter::OccLimitBlocks),
];

/// How a metric name in a file names a counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum NameKind {
    /// The raw ncu metric name (`--metrics`): exact.
    Raw,
    /// A section's display name.
    Display,
}

/// The counter `name` stands for, and how.
pub(crate) fn counter_named(name: &str) -> Option<(Counter, NameKind)> {
    Counter::from_name(name)
        .map(|c| (c, NameKind::Raw))
        .or_else(|| {
            DISPLAY_NAMES
                .iter()
                .find(|(n, _)| *n == name)
                .map(|&(_, c)| (c, NameKind::Display))
        })
}

/// The display name of `c` on the details page, if it has one (the first
/// label of the table: the current one).
pub fn display_name(c: Counter) -> Option<&'static str> {
    DISPLAY_NAMES.iter().find(|(_, x)| *x == c).map(|&(n, _)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_unique_and_raw_names_win() {
        let mut labels: Vec<&str> = DISPLAY_NAMES.iter().map(|(n, _)| *n).collect();
        labels.sort_unstable();
        labels.dedup();
        assert_eq!(labels.len(), DISPLAY_NAMES.len());
        assert_eq!(
            counter_named("gpu__time_duration.sum"),
            Some((Counter::DurationNs, NameKind::Raw))
        );
        assert_eq!(
            counter_named("Duration"),
            Some((Counter::DurationNs, NameKind::Display))
        );
        // Same-looking metrics that are not tally's are not mapped.
        assert_eq!(counter_named("DRAM Throughput"), None);
        assert_eq!(counter_named("Issue Slots Busy"), None);
        assert_eq!(counter_named("Memory Throughput"), None);
        assert_eq!(
            display_name(Counter::SmThroughputPct),
            Some("Compute (SM) Throughput")
        );
        assert_eq!(display_name(Counter::DramBytesRead), None);
    }
}
