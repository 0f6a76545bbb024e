//! The kernel library on a real GPU: every entry's test launch run as the
//! original kernel and as each transformed variant (sliced, PTB,
//! preemptive PTB run through, and preemptive PTB retreated right after its
//! launch and resumed until done) on the same seeded inputs, with the
//! output buffers compared byte for byte; and the preemption latency of a
//! long preemptive-PTB GEMM (retreat flag set mid-run to the kernel's end).
//! `tally kernels verify` and `scripts/gpu-check.sh` print the result;
//! under a profiler ([`VerifyMode::UnderProfiler`]) the runs that need a
//! kernel to stop part-way are left out.
//!
//! This is the only part of the crate that needs a GPU; without a driver it
//! returns [`CheckError::NoDriver`] before touching cudarc.

mod device;
pub mod inputs;

use serde::Serialize;
use tally_gpu::GpuError;

pub use device::check_on_device;

use crate::build::{BuildError, KernelVariant};

/// How a variant is launched in the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckRun {
    Original,
    /// Five slices (the last one overshoots the grid).
    Sliced,
    /// A third as many workers as blocks.
    Ptb,
    /// Preemptive PTB run to completion in one launch.
    Preempt,
    /// Preemptive PTB retreated mid-run (flag raised once its one worker
    /// has taken a block), relaunched until done; fails unless it really
    /// stopped part-way.
    PreemptResumed,
}

/// What the check runs: everything, or only what holds under a profiler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerifyMode {
    /// Every run and the preemption latency.
    Full,
    /// Under Nsight Compute (or any kernel replay) each launch is replayed
    /// to completion, so a kernel told to retreat never stops part-way and
    /// its time is ncu's, not the kernel's: the retreat-and-resume run and
    /// the preemption latency are left out, the rest is compared as ever.
    UnderProfiler,
}

impl VerifyMode {
    /// The runs of every kernel, in order (the original first: the others
    /// are compared with it).
    pub fn runs(&self) -> &'static [CheckRun] {
        match self {
            VerifyMode::Full => &CheckRun::ALL,
            VerifyMode::UnderProfiler => &CheckRun::ALL[..4],
        }
    }

    /// Whether the preemption latency is measured.
    pub fn measures_preemption(&self) -> bool {
        *self == VerifyMode::Full
    }
}

impl CheckRun {
    pub const ALL: [CheckRun; 5] = [
        CheckRun::Original,
        CheckRun::Sliced,
        CheckRun::Ptb,
        CheckRun::Preempt,
        CheckRun::PreemptResumed,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            CheckRun::Original => "original",
            CheckRun::Sliced => "sliced",
            CheckRun::Ptb => "ptb",
            CheckRun::Preempt => "preemptive-ptb",
            CheckRun::PreemptResumed => "preemptive-ptb-resumed",
        }
    }

    pub fn variant(&self) -> KernelVariant {
        match self {
            CheckRun::Original => KernelVariant::Original,
            CheckRun::Sliced => KernelVariant::Sliced,
            CheckRun::Ptb => KernelVariant::Ptb,
            CheckRun::Preempt | CheckRun::PreemptResumed => KernelVariant::PreemptivePtb,
        }
    }
}

/// Outcome of one run against the original's outputs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum RunStatus {
    /// Every output byte equal to the original's.
    Identical,
    /// `differing` of `total` output bytes differ, the first at `first`
    /// (buffer name and byte offset).
    Different {
        differing: usize,
        total: usize,
        first: String,
    },
    /// The run did not complete.
    Failed { error: String },
    /// The kernel needs a newer GPU.
    Skipped { reason: String },
}

/// One (kernel, run) of the check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckRow {
    pub entry: String,
    pub run: CheckRun,
    pub launches: u32,
    /// Blocks finished when the retreat was seen (resumed run only).
    pub blocks_at_retreat: Option<u32>,
    pub blocks: u64,
    /// GPU time of the run's launches, milliseconds.
    pub time_ms: f64,
    #[serde(flatten)]
    pub status: RunStatus,
}

/// Preemption latency of the long preemptive-PTB GEMM: from the moment the
/// retreat flag lands to the end of the kernel, over repeated trials.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PreemptionLatency {
    pub entry: String,
    pub blocks: u64,
    pub workers: u32,
    /// Whole kernel run without retreat, milliseconds.
    pub full_run_ms: f64,
    pub trials: usize,
    pub latency_us_median: f64,
    pub latency_us_max: f64,
    /// Blocks finished at the retreat, median over trials.
    pub blocks_done_median: u64,
}

impl PreemptionLatency {
    /// The summary of the latency trials (`(latency_us, blocks_done)` of
    /// each trial that retreated); `attempted` trials were run. None
    /// retreating (every kernel finished before its flag landed) measured
    /// nothing: an error that says so, never a NaN.
    pub fn from_trials(
        entry: &str,
        blocks: u64,
        workers: u32,
        full_run_ms: f64,
        mut trials: Vec<(f64, u64)>,
        attempted: usize,
    ) -> Result<PreemptionLatency, String> {
        if trials.is_empty() {
            return Err(format!(
                "preemption latency of {entry}: all {attempted} trials finished before the \
                 retreat flag landed ({full_run_ms:.3} ms runs); no preemption was measured"
            ));
        }
        trials.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut done: Vec<u64> = trials.iter().map(|t| t.1).collect();
        done.sort_unstable();
        Ok(PreemptionLatency {
            entry: entry.to_string(),
            blocks,
            workers,
            full_run_ms,
            trials: trials.len(),
            latency_us_median: trials[trials.len() / 2].0,
            latency_us_max: trials[trials.len() - 1].0,
            blocks_done_median: done[done.len() / 2],
        })
    }
}

/// Everything the check measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckReport {
    pub device: String,
    pub compute_capability: String,
    pub rows: Vec<CheckRow>,
    pub preemption: Option<PreemptionLatency>,
    /// Why the preemption latency could not be measured, when it could not.
    pub preemption_problem: Option<String>,
}

/// A retreat-and-resume run is only a test of retreating if the kernel
/// stopped part-way: `None` when `0 < finished < total` blocks had finished
/// at the retreat, else the failure to report (a kernel that ran to the end
/// before the flag landed, or stopped before its first block, tested
/// nothing).
pub fn retreat_failure(finished: u64, total: u64) -> Option<RunStatus> {
    if finished > 0 && finished < total {
        return None;
    }
    let when = if finished == 0 {
        "before its first block"
    } else {
        "only after its last block"
    };
    Some(RunStatus::Failed {
        error: format!(
            "did not retreat mid-run: it stopped {when} ({finished} of {total} blocks finished)"
        ),
    })
}

impl CheckReport {
    /// Whether every run that ran matched the original (and the
    /// preemption latency, when attempted, was measured).
    pub fn all_identical(&self) -> bool {
        self.preemption_problem.is_none() && self.rows_identical()
    }

    fn rows_identical(&self) -> bool {
        self.rows
            .iter()
            .all(|r| matches!(r.status, RunStatus::Identical | RunStatus::Skipped { .. }))
    }
}

/// Why the check could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("{}", tally_gpu::cuda::NO_DRIVER)]
    NoDriver,
    #[error("CUDA driver: {0}")]
    Driver(String),
    #[error("{0}")]
    NoPreemption(String),
    #[error("compute capability {0} is not supported (sm_80, sm_86, sm_89, sm_90)")]
    UnsupportedDevice(String),
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error(transparent)]
    Library(#[from] GpuError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_trials_summarise_and_none_retreating_is_an_error() {
        let p = PreemptionLatency::from_trials(
            "gemm_f32",
            4096,
            264,
            12.0,
            vec![(30.0, 900), (10.0, 1000), (20.0, 1100)],
            3,
        )
        .unwrap();
        assert_eq!(
            (p.trials, p.latency_us_median, p.latency_us_max),
            (3, 20.0, 30.0)
        );
        assert_eq!(p.blocks_done_median, 1000);
        let e =
            PreemptionLatency::from_trials("gemm_f32", 4096, 264, 0.05, vec![], 20).unwrap_err();
        assert!(e.contains("all 20 trials finished before"), "{e}");
    }

    #[test]
    fn under_a_profiler_no_run_retreats_and_no_latency_is_measured() {
        let runs = VerifyMode::UnderProfiler.runs();
        assert_eq!(runs[0], CheckRun::Original);
        assert!(!runs.contains(&CheckRun::PreemptResumed), "{runs:?}");
        // Everything else a profiler can replay is still compared.
        for run in [CheckRun::Sliced, CheckRun::Ptb, CheckRun::Preempt] {
            assert!(runs.contains(&run));
        }
        assert!(!VerifyMode::UnderProfiler.measures_preemption());
        assert_eq!(VerifyMode::Full.runs(), &CheckRun::ALL);
        assert!(VerifyMode::Full.measures_preemption());
    }

    #[test]
    fn a_retreat_row_passes_only_when_the_kernel_stopped_part_way() {
        assert_eq!(retreat_failure(3, 8), None);
        for (finished, when) in [(0, "before its first block"), (8, "after its last block")] {
            match retreat_failure(finished, 8) {
                Some(RunStatus::Failed { error }) => assert!(error.contains(when), "{error}"),
                other => panic!("{finished}: {other:?}"),
            }
        }
    }
}
