//! The V100 microbenchmarks simulated: the benchmark's own `copy_kernel`
//! (`gpu_util_bench_lib/kernels.cu` of the source repository, a
//! grid-stride float copy, `in` and `out` each `num_bytes`, looped `itrs`
//! times inside one launch) on the simulated V100 at the scripts' launch
//! configurations, alone and two at once on disjoint halves of the GPU;
//! the bandwidth figure is `2 x itrs x num_bytes / 2^30` over the seconds,
//! as the program prints it.

use std::path::Path;

use tally_gpu::{Dim3, GpuSpec, KernelKind, KernelSpec, MemoryUse, Work};

use super::evaluate::{composed, share_sms, RealRow};
use super::v100_micro::{read_bandwidth, read_l2};
use crate::engine::sim::SimEngine;
use crate::error::RunError;
use crate::workload::JobSpec;

/// The bandwidth split: each run of the log beside the simulated copy.
pub(super) fn v100_bandwidth(data: &Path, gpu: &GpuSpec) -> Result<Vec<RealRow>, RunError> {
    let dir = data.join("gpu-util-interference-V100/inter_sm/memory_bandwidth");
    let runs = read_bandwidth(&dir.join("output.md"))?;
    // From `run_membw_experiment.sh`: 2 GiB, 50 iterations, 50 % each.
    let (bytes, itrs, sms) = (2.0 * GIB, 50.0, share_sms(gpu, 50));
    let mut out = Vec::new();
    let mut by_config: Vec<(u32, u32, bool, Vec<f64>)> = Vec::new();
    for r in &runs {
        match by_config
            .iter_mut()
            .find(|c| (c.0, c.1, c.2) == (r.blocks, r.threads, r.paired))
        {
            Some(c) => c.3.push(r.gib_per_s),
            None => by_config.push((r.blocks, r.threads, r.paired, vec![r.gib_per_s])),
        }
    }
    for (blocks, threads, paired, values) in by_config {
        let real = values.iter().sum::<f64>() / values.len() as f64;
        let job = JobSpec::gpu_bound(
            "copy_kernel",
            vec![copy_kernel(blocks, threads, bytes, itrs, false)],
        );
        let us = if paired {
            composed(SimEngine::new(gpu), &[(&job, sms), (&job, sms)], 1)?[0]
        } else {
            composed(SimEngine::new(gpu), &[(&job, sms)], 1)?[0]
        };
        let gib_per_s = 2.0 * itrs * bytes / GIB / (us / 1e6);
        out.push(RealRow {
            set: "v100-bandwidth",
            case: format!(
                "{blocks}x{threads} {} GiB/s",
                if paired { "each of two" } else { "alone" }
            ),
            real,
            simulated: Some(gib_per_s),
            predicted: None,
        });
    }
    Ok(out)
}

/// The L2 sweep: each working set alone and colocated beside the simulated copy.
pub(super) fn v100_l2(data: &Path, gpu: &GpuSpec) -> Result<Vec<RealRow>, RunError> {
    let dir = data.join("gpu-util-interference-V100/inter_sm/l2_cache");
    let points = read_l2(&dir.join("output.md"))?;
    // From `run_l2_experiment.sh`: 40 blocks of 1024 threads, 10,000
    // iterations; the two copies are streams of one process, their
    // blocks on disjoint SMs (one block per SM each).
    let (blocks, threads, itrs) = (40, 1024, 10_000.0);
    let half = gpu.sm_count / 2;
    let mut out = Vec::new();
    for p in &points {
        let job = JobSpec::gpu_bound(
            "copy_kernel",
            vec![copy_kernel(
                blocks,
                threads,
                p.working_set_mb * MIB,
                itrs,
                true,
            )],
        );
        let alone = composed(SimEngine::new(gpu), &[(&job, half)], 1)?[0] / 1e3;
        let both = composed(SimEngine::new(gpu), &[(&job, half), (&job, half)], 1)?[0] / 1e3;
        for (what, real, simulated) in [
            ("alone", p.alone_ms, alone),
            ("colocated", p.colocated_ms, both),
        ] {
            out.push(RealRow {
                set: "v100-l2",
                case: format!("{} MB {what} ms", p.working_set_mb),
                real,
                simulated: Some(simulated),
                predicted: None,
            });
        }
    }
    Ok(out)
}

const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * MIB;

/// The benchmark's `copy_kernel`: `out[i] = in[i]` over `bytes` of floats
/// with a grid stride, `itrs` times in one launch. Each thread has one
/// 4-byte load in flight (the store depends on it, and `in` and `out` may
/// alias, so the compiler cannot hoist the next load): 128 bytes per warp.
/// Where the two buffers fit in L2 (`reuse`), only the first pass reads
/// DRAM; otherwise every pass streams from it.
fn copy_kernel(blocks: u32, threads: u32, bytes: f64, itrs: f64, reuse: bool) -> KernelSpec {
    let elements = bytes / 4.0;
    let traffic = 2.0 * bytes * itrs;
    let (dram_read, dram_write, working_set) = if reuse {
        (bytes, bytes, 2.0 * bytes)
    } else {
        (bytes * itrs, bytes * itrs, 0.0)
    };
    KernelSpec {
        name: "copy_kernel".into(),
        kind: KernelKind::Copy,
        grid: Dim3::linear(blocks),
        block: Dim3::linear(threads),
        registers_per_thread: 16,
        shared_mem_static: 0,
        shared_mem_dynamic: 0,
        work: Work {
            // Per element and warp: the load, the store, the index
            // update, the compare and the branch.
            other_warp_insts: 5.0 * elements * itrs / 32.0,
            ..Work::default()
        },
        memory: MemoryUse {
            l1_bytes: traffic,
            l2_bytes: traffic,
            dram_read_bytes: dram_read,
            dram_write_bytes: dram_write,
            l2_working_set: working_set,
            inflight_bytes_per_warp: 128.0,
        },
    }
}
