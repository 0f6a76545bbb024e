//! Workloads: a job is the kernel sequence of one HP inference request or
//! one BE training iteration, in launch order; HP requests arrive as a
//! closed loop, a Poisson process at a load factor, or at given times.

use std::path::Path;

use tally_gpu::KernelSpec;

use crate::runner::RunError;

/// One job's unit of work.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    pub name: String,
    pub kernels: Vec<KernelSpec>,
}

/// The HP job and the BE jobs sharing the GPU with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub hp: JobSpec,
    pub be: Vec<JobSpec>,
}

/// How HP requests arrive.
#[derive(Debug, Clone, PartialEq)]
pub enum Arrivals {
    /// A single stream: the next request as soon as the last completes.
    ClosedLoop,
    /// Poisson at `load` times the HP job's standalone capacity.
    Poisson { load: f64 },
    /// Given arrival times, microseconds from the start.
    Times(Vec<f64>),
}

/// Read arrival times: one number per line, milliseconds from the start,
/// non-decreasing; blank lines and `#` comments are skipped.
pub fn read_arrival_file(path: &Path) -> Result<Vec<f64>, RunError> {
    let text = std::fs::read_to_string(path).map_err(|e| RunError::Input {
        what: path.display().to_string(),
        reason: e.to_string(),
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |reason: String| RunError::Input {
            what: format!("{}:{}", path.display(), i + 1),
            reason,
        };
        let ms: f64 = line
            .parse()
            .map_err(|_| bad(format!("expected an arrival time in ms, found `{line}`")))?;
        if !ms.is_finite() || ms < 0.0 {
            return Err(bad(format!("arrival time {ms} must be >= 0")));
        }
        if out.last().is_some_and(|&last| ms * 1e3 < last) {
            return Err(bad("arrival times must not decrease".into()));
        }
        out.push(ms * 1e3);
    }
    if out.is_empty() {
        return Err(RunError::Input {
            what: path.display().to_string(),
            reason: "no arrival times".into(),
        });
    }
    Ok(out)
}
