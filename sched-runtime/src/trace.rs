//! Kernel-trace workloads: a per-kernel profile of a real model in the
//! Orion format (`Name,Profile,Memory_footprint,SM_usage,Duration`, one row
//! per launch in launch order, durations in nanoseconds, measured on the
//! GPU the trace names, a V100 for the shipped ones) turned into a job.
//!
//! A trace carries no grid, shapes or byte counts, so each row becomes a
//! synthetic kernel with the row's footprint and character: a grid of
//! `SM_usage` SMs' worth of blocks, its arithmetic intensity set by the
//! compute/memory label, and its amount of work calibrated so that, alone
//! on the trace's GPU, the simulator gives the measured duration. On
//! another GPU the same work then runs at that GPU's speed, and under
//! co-location it contends like any other kernel.

use std::path::{Path, PathBuf};

use tally_gpu::{Dim3, GpuSpec, KernelKind, KernelSpec, MemoryUse, Partition, Work};

use crate::engine::sim::SimEngine;
use crate::kernel_config::KernelConfig;
use crate::workload::JobSpec;

/// Threads per block of a trace kernel; with 32 registers per thread the
/// SM holds `max_threads / THREADS` of them.
const THREADS: u32 = 256;
/// FLOPs per DRAM byte given to each label: far above the roofline knee
/// for compute-bound, far below for memory-bound, at the knee otherwise.
const COMPUTE_INTENSITY: f64 = 64.0;
const MEMORY_INTENSITY: f64 = 0.25;
/// Calibration steps (the duration is nearly affine in the work).
const CALIBRATION_STEPS: usize = 4;
/// A trace whose every kernel is at most this long holds no measured
/// durations (the shipped training traces have placeholder rows of 7 ns).
const PLACEHOLDER_NS: f64 = 10.0;

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}, line {line}: {reason}")]
    Row {
        path: PathBuf,
        line: u64,
        reason: String,
    },
    #[error("{path}: {reason}")]
    Trace { path: PathBuf, reason: String },
    #[error(transparent)]
    Engine(#[from] crate::engine::EngineError),
}

/// One row of a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceRow {
    pub name: String,
    /// 1 compute-bound, 0 memory-bound, -1 unknown.
    pub profile: i32,
    pub sm_usage: u32,
    pub duration_ns: f64,
}

/// Whether `name` looks like a trace file rather than a model.
pub fn is_trace_path(name: &str) -> bool {
    name.to_ascii_lowercase().ends_with(".csv")
}

/// Read the rows of a trace file, checking every field.
pub fn read_trace_rows(path: &Path) -> Result<Vec<TraceRow>, TraceError> {
    let text = std::fs::read_to_string(path).map_err(|source| TraceError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_trace_rows(path, &text)
}

fn parse_trace_rows(path: &Path, text: &str) -> Result<Vec<TraceRow>, TraceError> {
    let row_err = |line: u64, reason: String| TraceError::Row {
        path: path.to_path_buf(),
        line,
        reason,
    };
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| row_err(1, e.to_string()))?
        .clone();
    let column = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| row_err(1, format!("missing column `{name}` (expected Name,Profile,Memory_footprint,SM_usage,Duration)")))
    };
    let (c_name, c_profile, c_sms, c_duration) = (
        column("Name")?,
        column("Profile")?,
        column("SM_usage")?,
        column("Duration")?,
    );
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            row_err(line, e.to_string())
        })?;
        let line = record.position().map_or(0, |p| p.line());
        let field = |i: usize, name: &str| -> Result<&str, TraceError> {
            record
                .get(i)
                .ok_or_else(|| row_err(line, format!("field `{name}` is missing")))
        };
        let parse_num = |i: usize, name: &str, expected: &str| -> Result<f64, TraceError> {
            let raw = field(i, name)?;
            raw.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| row_err(line, format!("field `{name}`: `{raw}` is not {expected}")))
        };
        let profile = parse_num(c_profile, "Profile", "one of 1, 0, -1")?;
        if ![1.0, 0.0, -1.0].contains(&profile) {
            return Err(row_err(
                line,
                format!("field `Profile`: `{profile}` is not one of 1, 0, -1"),
            ));
        }
        let sms = parse_num(c_sms, "SM_usage", "a positive whole number")?;
        if sms < 1.0 || sms.fract() != 0.0 || sms > f64::from(u32::MAX) {
            return Err(row_err(
                line,
                format!("field `SM_usage`: `{sms}` is not a positive whole number"),
            ));
        }
        let duration_ns = parse_num(c_duration, "Duration", "a positive number of nanoseconds")?;
        if duration_ns <= 0.0 {
            return Err(row_err(
                line,
                format!(
                    "field `Duration`: `{duration_ns}` is not a positive number of nanoseconds"
                ),
            ));
        }
        rows.push(TraceRow {
            name: field(c_name, "Name")?.to_string(),
            profile: profile as i32,
            sm_usage: sms as u32,
            duration_ns,
        });
    }
    if rows.is_empty() {
        return Err(TraceError::Trace {
            path: path.to_path_buf(),
            reason: "no kernel rows".into(),
        });
    }
    if rows.iter().all(|r| r.duration_ns <= PLACEHOLDER_NS) {
        return Err(TraceError::Trace {
            path: path.to_path_buf(),
            reason: format!(
                "every kernel is {PLACEHOLDER_NS} ns or shorter: the trace holds placeholder rows, not measured durations"
            ),
        });
    }
    Ok(rows)
}

/// A synthetic kernel of `blocks` blocks with `flops` FP32 FLOPs and DRAM
/// traffic at `intensity` FLOPs per byte.
fn synthetic_kernel(name: &str, blocks: u32, flops: f64, intensity: f64) -> KernelSpec {
    let bytes = flops / intensity;
    let b = f64::from(blocks);
    KernelSpec {
        name: name.to_string(),
        kind: KernelKind::Elementwise,
        grid: Dim3::linear(blocks),
        block: Dim3::linear(THREADS),
        registers_per_thread: 32,
        shared_mem_static: 0,
        shared_mem_dynamic: 0,
        work: Work {
            ffma: flops / 2.0,
            other_warp_insts: b * 64.0,
            ..Work::default()
        },
        memory: MemoryUse {
            l1_bytes: bytes,
            l2_bytes: bytes,
            dram_read_bytes: bytes * 0.5,
            dram_write_bytes: bytes * 0.5,
            l2_working_set: bytes,
            inflight_bytes_per_warp: 512.0,
        },
    }
}

/// The kernel for one row, calibrated on `trace_gpu`.
pub fn row_kernel(
    row: &TraceRow,
    index: usize,
    trace_gpu: &GpuSpec,
) -> Result<KernelSpec, TraceError> {
    // `SM_usage` is the grid over the blocks an SM holds, so the grid is
    // that many SMs' worth of blocks; like the measured kernel it runs on
    // the whole GPU (breadth-first, so a small grid spreads thinly).
    let per_sm = (trace_gpu.max_threads_per_sm / THREADS).max(1);
    let blocks = row.sm_usage.saturating_mul(per_sm);
    let sms = row.sm_usage.min(trace_gpu.sm_count);
    let intensity = match row.profile {
        1 => COMPUTE_INTENSITY,
        0 => MEMORY_INTENSITY,
        // The FP32 roofline knee: FLOP/s over DRAM bytes/s.
        _ => trace_gpu.fp32_tflops() * 1e3 / trace_gpu.dram_gbps,
    };
    let target_us = row.duration_ns / 1e3;
    let partition = Partition::whole(trace_gpu);
    // Unique name per row: the engine deduplicates kernels by identity.
    let name = format!("{}#{index}", row.name);
    // First guess: the row's SMs at FP32 peak for the measured time.
    let mut flops =
        target_us * trace_gpu.fp32_tflops() * 1e6 * f64::from(sms) / f64::from(trace_gpu.sm_count);
    let mut kernel = synthetic_kernel(&name, blocks, flops.max(1.0), intensity);
    for _ in 0..CALIBRATION_STEPS {
        let measured =
            SimEngine::alone_us_on(trace_gpu, &kernel, KernelConfig::Original, partition)?
                - trace_gpu.launch_overhead_us;
        if measured <= 0.0 {
            break;
        }
        flops = (flops * target_us / measured).max(1.0);
        kernel = synthetic_kernel(&name, blocks, flops, intensity);
    }
    Ok(kernel)
}

/// A job from a trace file, calibrated on `trace_gpu`.
pub fn trace_job(path: &Path, trace_gpu: &GpuSpec) -> Result<JobSpec, TraceError> {
    let rows = read_trace_rows(path)?;
    let kernels = rows
        .iter()
        .enumerate()
        .map(|(i, r)| row_kernel(r, i, trace_gpu))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(JobSpec::gpu_bound(path.display().to_string(), kernels))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<TraceRow>, TraceError> {
        parse_trace_rows(Path::new("t.csv"), text)
    }

    #[test]
    fn rows_parse_and_bad_fields_name_line_and_field() {
        let ok = parse("Name,Profile,Memory_footprint,SM_usage,Duration\nConv,1,0,80,101183\nBN,0,0,64,40096\n")
            .unwrap();
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[1].profile, 0);
        assert_eq!(ok[0].sm_usage, 80);
        let e = parse("Name,Profile,Memory_footprint,SM_usage,Duration\nConv,1,0,80,101183\nBN,2,0,64,40096\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 3") && e.contains("Profile"), "{e}");
        let e = parse("Name,Profile,Memory_footprint,SM_usage,Duration\nConv,1,0,0,10\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("SM_usage"), "{e}");
        let e = parse("Name,Profile,Memory_footprint,SM_usage,Duration\nConv,1,0,8,abc\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("Duration"), "{e}");
        let e = parse("Name,Profile,SM_usage\nConv,1,8\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing column `Duration`"), "{e}");
        let e =
            parse("Name,Profile,Memory_footprint,SM_usage,Duration\nConv,-1,1,1,7\nBN,-1,1,1,7\n")
                .unwrap_err()
                .to_string();
        assert!(e.contains("placeholder"), "{e}");
    }

    #[test]
    fn calibrated_kernels_take_the_measured_time_on_the_trace_gpu() {
        let v100 = GpuSpec::preset("v100").unwrap();
        for (profile, sms, ns) in [(1, 80, 101_183.0), (0, 64, 40_096.0), (-1, 20, 25_000.0)] {
            let row = TraceRow {
                name: "k".into(),
                profile,
                sm_usage: sms,
                duration_ns: ns,
            };
            let k = row_kernel(&row, 0, &v100).unwrap();
            let whole = Partition::whole(&v100);
            let us = SimEngine::alone_us_on(&v100, &k, KernelConfig::Original, whole).unwrap()
                - v100.launch_overhead_us;
            assert!(
                (us / (ns / 1e3) - 1.0).abs() < 0.02,
                "profile {profile}: {us} us vs {} us",
                ns / 1e3
            );
        }
    }

    /// The shipped ResNet-50 trace: every kernel of 5 us or more lands
    /// within 5 % of its measured duration, and the whole pass within 5 %.
    #[test]
    fn a_real_trace_replays_at_its_measured_durations() {
        let v100 = GpuSpec::preset("v100").unwrap();
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/traces/resnet50_4_fwd.csv");
        let rows = read_trace_rows(&path).unwrap();
        let job = trace_job(&path, &v100).unwrap();
        assert_eq!(job.kernels.len(), rows.len());
        let (mut measured, mut simulated) = (0.0, 0.0);
        for (row, k) in rows.iter().zip(&job.kernels) {
            let us =
                SimEngine::alone_us_on(&v100, k, KernelConfig::Original, Partition::whole(&v100))
                    .unwrap()
                    - v100.launch_overhead_us;
            let want = row.duration_ns / 1e3;
            if want >= 5.0 {
                assert!(
                    (us / want - 1.0).abs() < 0.05,
                    "{}: {us} us vs {want} us",
                    row.name
                );
            }
            measured += want;
            simulated += us;
        }
        assert!(
            (simulated / measured - 1.0).abs() < 0.05,
            "{simulated} vs {measured}"
        );
    }
}
