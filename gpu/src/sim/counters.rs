//! Nsight Compute counters of a simulated kernel, derived from the model's
//! own quantities at its solved operating point (busy cycles of each unit,
//! bytes moved, hit rates, occupancy) — never drawn at random.

use super::prepared::{Evaluation, PreparedKernel};
use super::solver::SharedPath;
use crate::counters::{launch_counters, Counter, CounterSet};
use crate::kernel::KernelSpec;
use crate::spec::GpuSpec;

/// Counters of `kernel` on its partition, measured as `duration_us` long.
pub(crate) fn derive(
    gpu: &GpuSpec,
    path: &SharedPath,
    kernel: &KernelSpec,
    p: &PreparedKernel,
    e: &Evaluation,
    duration_us: f64,
) -> CounterSet {
    let mut c = CounterSet::default();
    let cycles = e.cycles;
    let pct = |busy: f64| (100.0 * busy / cycles).clamp(0.0, 100.0);
    let occ = &p.occupancy;
    let k = f64::from(p.sm_count);
    let blocks = kernel.blocks() as f64;
    // Average SM activity: the busiest SM sets the duration, the others
    // finish their (fewer) blocks earlier.
    let sm_duty = blocks / (k * p.blocks_busiest);
    let warps_per_block = f64::from(occ.warps_per_block);
    let max_warps = f64::from(gpu.max_warps_per_sm());
    let w = &kernel.work;
    let warp_insts_per_sm = p.issue_cycles * gpu.issue_per_cycle * sm_duty;
    let l2_pct = 100.0 * e.l2_rate / path.l2_bandwidth;
    let dram_pct = 100.0 * e.dram_rate / path.dram_bandwidth;
    let l1_hit = if kernel.memory.l1_bytes > 0.0 {
        100.0 * (1.0 - kernel.memory.l2_bytes / kernel.memory.l1_bytes)
    } else {
        0.0
    };
    // Like ncu, the SM throughput is the busiest of its sub-units.
    let sm_busy = p.pipe_cycles.max(p.l1_cycles) * sm_duty;

    let values: [(Counter, f64); 22] = [
        (Counter::DurationNs, duration_us * 1e3),
        (Counter::CyclesElapsed, cycles),
        (Counter::SmThroughputPct, pct(sm_busy)),
        (Counter::IssueActivePct, pct(p.issue_cycles * sm_duty)),
        (Counter::IpcActive, warp_insts_per_sm / cycles),
        (
            Counter::AchievedOccupancyPct,
            100.0 * p.concurrent_blocks * warps_per_block / max_warps * sm_duty * e.body_cycles
                / cycles,
        ),
        (Counter::TensorActivePct, pct(p.tensor_cycles * sm_duty)),
        (Counter::L1HitRatePct, l1_hit.max(0.0)),
        (Counter::L1ThroughputPct, pct(p.l1_cycles * sm_duty)),
        (Counter::L2SectorsPct, l2_pct.min(100.0)),
        (
            Counter::L2ThroughputPct,
            l2_pct
                .max(pct(p.port_cycles * sm_duty) * k / f64::from(gpu.sm_count))
                .min(100.0),
        ),
        (Counter::L2HitRatePct, 100.0 * e.l2_hit_rate),
        (Counter::L2Bytes, kernel.memory.l2_bytes),
        (Counter::DramThroughputPct, dram_pct.min(100.0)),
        (Counter::DramBytesRead, e.dram_read_bytes),
        (Counter::DramBytesWrite, kernel.memory.dram_write_bytes),
        (Counter::Fadd, w.fadd),
        (Counter::Fmul, w.fmul),
        (Counter::Ffma, w.ffma),
        (Counter::Hadd, w.hadd),
        (Counter::Hmul, w.hmul),
        (Counter::Hfma, w.hfma),
    ];
    for (counter, value) in values
        .into_iter()
        .chain(launch_counters(kernel, occ, p.sm_count))
    {
        c.set(counter, value);
    }
    c
}
