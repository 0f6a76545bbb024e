//! Any standalone dataset as Orion's per-kernel profile CSV
//! (`Name,Profile,Memory_footprint,SM_usage,Duration`, one row per launch,
//! durations in nanoseconds): the format Orion's scheduler reads, and the
//! one `tally run`'s trace reader (`tally-sched`'s `trace.rs`) reads back.
//!
//! Each column follows Orion's own profiling scripts:
//! * `Name`: the kernel name up to its template arguments (Orion cuts at
//!   the first `<`); quoted when it still holds a comma.
//! * `Profile`: 1 compute-bound, 0 memory-bound, -1 unknown. With FP32
//!   instruction counts, arithmetic intensity (`fadd + fmul + 2 ffma` per
//!   DRAM byte) against the GPU's FP32 roofline knee; without FP32 work,
//!   SM throughput >= 60 % is compute-bound, else DRAM throughput >= 60 %
//!   memory-bound, else unknown; a counter the dataset lacks makes its
//!   test unknown rather than false.
//! * `Memory_footprint`: 0 (Orion never reads it).
//! * `SM_usage`: `ceil(blocks / blocks per SM)`, the blocks per SM being
//!   the tightest of the four `launch__occupancy_limit_*` counters.
//! * `Duration`: the standalone duration on the dataset's widest partition.
//!
//! A dataset keeps unique kernels and how often each launches, not the
//! launch sequence: a kernel's rows are consecutive, kernels in the order
//! the dataset lists them.

use std::io::Write;
use std::path::{Path, PathBuf};

use tally_datasets::{write_atomic, Dataset, DatasetError, StandaloneRow};
use tally_gpu::cuda::ncu_flags_for;
use tally_gpu::Counter;

/// Orion's header, in its column order.
pub const ORION_HEADER: &str = "Name,Profile,Memory_footprint,SM_usage,Duration";

/// Orion's throughput threshold (percent) for the label of a kernel without
/// FP32 work.
const THROUGHPUT_LABEL_PCT: f64 = 60.0;

/// The counters `SM_usage` needs beside the grid.
const OCCUPANCY_LIMITS: [Counter; 4] = [
    Counter::OccLimitRegisters,
    Counter::OccLimitSharedMem,
    Counter::OccLimitWarps,
    Counter::OccLimitBlocks,
];

/// One row of an Orion profile.
#[derive(Debug, Clone, PartialEq)]
pub struct OrionRow {
    pub name: String,
    /// 1 compute-bound, 0 memory-bound, -1 unknown.
    pub profile: i32,
    pub memory_footprint: u32,
    pub sm_usage: u32,
    pub duration_ns: f64,
}

/// Why a dataset could not be exported.
#[derive(Debug, thiserror::Error)]
pub enum OrionExportError {
    #[error(
        "`{dir}`: op `{op}` (`{kernel}`) lacks {missing}, which Orion's SM_usage needs; \
         profile with `ncu {flags}` (or the Launch Statistics and Occupancy sections)"
    )]
    MissingCounters {
        dir: PathBuf,
        op: String,
        kernel: String,
        missing: String,
        flags: String,
    },
    #[error("`{dir}`: op `{op}` has no standalone row")]
    NoStandalone { dir: PathBuf, op: String },
    #[error("`{dir}`: op `{op}`: {problem}")]
    Value {
        dir: PathBuf,
        op: String,
        problem: String,
    },
    #[error(transparent)]
    Write(#[from] DatasetError),
}

/// The Orion rows of `ds`.
pub fn orion_rows(ds: &Dataset) -> Result<Vec<OrionRow>, OrionExportError> {
    let t = &ds.standalone;
    let gpu = &ds.info.gpu;
    let knee = gpu.fp32_tflops() * 1e3 / gpu.dram_gbps;
    let mut out = Vec::new();
    for op in &ds.ops {
        let widest: &StandaloneRow = t
            .rows
            .iter()
            .filter(|r| r.op_id == op.op_id)
            .max_by_key(|r| r.sm_count)
            .ok_or_else(|| OrionExportError::NoStandalone {
                dir: ds.dir.clone(),
                op: op.op_id.clone(),
            })?;
        let get = |c: Counter| t.counter(widest, c.name());
        let missing: Vec<Counter> = std::iter::once(Counter::GridSize)
            .chain(OCCUPANCY_LIMITS)
            .filter(|c| get(*c).is_none())
            .collect();
        if !missing.is_empty() {
            return Err(OrionExportError::MissingCounters {
                dir: ds.dir.clone(),
                op: op.op_id.clone(),
                kernel: op.kernel.name.clone(),
                missing: missing
                    .iter()
                    .map(Counter::name)
                    .collect::<Vec<_>>()
                    .join(", "),
                flags: ncu_flags_for(&missing),
            });
        }
        let blocks = get(Counter::GridSize).unwrap_or_default();
        let per_sm = OCCUPANCY_LIMITS
            .iter()
            .filter_map(|c| get(*c))
            .fold(f64::INFINITY, f64::min);
        if !(per_sm >= 1.0 && blocks >= 1.0) {
            return Err(OrionExportError::Value {
                dir: ds.dir.clone(),
                op: op.op_id.clone(),
                problem: format!(
                    "{blocks} blocks at {per_sm} blocks per SM cannot give an SM usage"
                ),
            });
        }
        let row = OrionRow {
            name: orion_name(&op.kernel.name),
            profile: label(&get, knee),
            memory_footprint: 0,
            sm_usage: (blocks / per_sm).ceil().min(f64::from(u32::MAX)) as u32,
            duration_ns: widest.duration_us * 1e3,
        };
        for _ in 0..op.launches.max(1) {
            out.push(row.clone());
        }
    }
    Ok(out)
}

/// Orion's compute/memory label from the counters `get` finds.
fn label(get: &dyn Fn(Counter) -> Option<f64>, knee: f64) -> i32 {
    let fp32 = [Counter::Fadd, Counter::Fmul, Counter::Ffma].map(get);
    if let [Some(add), Some(mul), Some(fma)] = fp32 {
        let flops = add + mul + 2.0 * fma;
        if flops > 0.0 {
            let bytes = get(Counter::DramBytesRead).zip(get(Counter::DramBytesWrite));
            return match bytes {
                Some((r, w)) if r + w > 0.0 => i32::from(flops / (r + w) > knee),
                Some(_) => 1,
                None => -1,
            };
        }
    }
    let at_least = |c: Counter| get(c).map(|v| v >= THROUGHPUT_LABEL_PCT);
    match (
        at_least(Counter::SmThroughputPct),
        at_least(Counter::DramThroughputPct),
    ) {
        (Some(true), _) => 1,
        (_, Some(true)) => 0,
        _ => -1,
    }
}

/// A kernel name as Orion writes it: up to the template arguments.
fn orion_name(name: &str) -> String {
    name.split('<').next().unwrap_or(name).trim().to_string()
}

/// A CSV field, quoted when it holds a comma, quote or line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A duration in nanoseconds, to the picosecond, without trailing zeros.
fn format_ns(ns: f64) -> String {
    let s = format!("{ns:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Write `rows` to `path` atomically (a temporary file renamed into place).
pub fn write_orion_csv(rows: &[OrionRow], path: &Path) -> Result<(), OrionExportError> {
    let io = |e: std::io::Error| DatasetError::Io {
        path: path.to_path_buf(),
        source: e,
    };
    write_atomic(path, |w| {
        writeln!(w, "{ORION_HEADER}").map_err(io)?;
        for r in rows {
            writeln!(
                w,
                "{},{},{},{},{}",
                csv_field(&r.name),
                r.profile,
                r.memory_footprint,
                r.sm_usage,
                format_ns(r.duration_ns)
            )
            .map_err(io)?;
        }
        Ok(())
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_follow_orion() {
        let counters = |pairs: Vec<(Counter, f64)>| {
            move |c: Counter| pairs.iter().find(|(x, _)| *x == c).map(|(_, v)| *v)
        };
        // 2 x 1e6 FMA FLOPs over 1e5 bytes = 20 FLOP/B, above a knee of 17.
        let gemm = counters(vec![
            (Counter::Fadd, 0.0),
            (Counter::Fmul, 0.0),
            (Counter::Ffma, 1e6),
            (Counter::DramBytesRead, 5e4),
            (Counter::DramBytesWrite, 5e4),
        ]);
        assert_eq!(label(&gemm, 17.0), 1);
        assert_eq!(label(&gemm, 25.0), 0);
        // No FP32 work: the throughput rule, or unknown without counters.
        let busy_dram = counters(vec![
            (Counter::SmThroughputPct, 20.0),
            (Counter::DramThroughputPct, 75.0),
        ]);
        assert_eq!(label(&busy_dram, 17.0), 0);
        let idle = counters(vec![(Counter::SmThroughputPct, 20.0)]);
        assert_eq!(label(&idle, 17.0), -1);
        assert_eq!(label(&counters(vec![]), 17.0), -1);
    }

    #[test]
    fn names_and_numbers_as_orion_writes_them() {
        assert_eq!(
            orion_name("void at::native::vectorized_elementwise_kernel<4, at::native::X>(int)"),
            "void at::native::vectorized_elementwise_kernel"
        );
        assert_eq!(
            orion_name("ampere_sgemm_128x64_nn"),
            "ampere_sgemm_128x64_nn"
        );
        assert_eq!(csv_field("k(int, float)"), "\"k(int, float)\"");
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(format_ns(48_512.0), "48512");
        assert_eq!(format_ns(21_344.25), "21344.25");
    }
}
