//! Kernel configurations (original, sliced, persistent thread blocks,
//! preemptive PTB) and Tally's choice among them by turnaround latency.

use tally_gpu::{GpuSpec, KernelSpec, Partition};

use crate::alone::kernel_alone_us;
use crate::engine::EngineError;

/// Tally's default turnaround-latency limit in the evaluation, microseconds.
pub const DEFAULT_TURNAROUND_US: f64 = 31.6;

/// How a kernel is launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(tag = "config", rename_all = "kebab-case")]
pub enum KernelConfig {
    Original,
    /// The grid as sub-grids of `blocks` blocks, one launch each.
    Sliced {
        blocks: u64,
    },
    /// Persistent workers (per SM) that take blocks until none are left.
    Ptb {
        workers_per_sm: u32,
    },
    /// PTB whose workers stop taking blocks when told to retreat.
    PreemptivePtb {
        workers_per_sm: u32,
    },
}

impl KernelConfig {
    /// The next launch for `remaining` blocks: `(blocks, workers per SM,
    /// preemptible)`.
    pub fn next_launch(&self, remaining: u64) -> (u64, Option<u32>, bool) {
        match *self {
            KernelConfig::Original => (remaining, None, false),
            KernelConfig::Sliced { blocks } => (remaining.min(blocks.max(1)), None, false),
            KernelConfig::Ptb { workers_per_sm } => (remaining, Some(workers_per_sm), false),
            KernelConfig::PreemptivePtb { workers_per_sm } => {
                (remaining, Some(workers_per_sm), true)
            }
        }
    }

    pub fn label(&self) -> String {
        match self {
            KernelConfig::Original => "original".into(),
            KernelConfig::Sliced { blocks } => format!("sliced({blocks} blocks)"),
            KernelConfig::Ptb { workers_per_sm } => format!("ptb({workers_per_sm}/SM)"),
            KernelConfig::PreemptivePtb { workers_per_sm } => {
                format!("preemptive-ptb({workers_per_sm}/SM)")
            }
        }
    }
}

/// A timed candidate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    pub config: KernelConfig,
    pub latency_us: f64,
    /// Estimated time from a preemption request to the GPU being free.
    pub preemption_us: f64,
}

/// Tally's rule: time preemptive PTB with 1, 2, ... workers per SM and
/// slicing with the matching slice sizes; estimate the preemption latency
/// (PTB: latency / waves / 2; sliced: latency / slices); take the fastest
/// candidate under `limit_us` whose speed is at least a threshold of the
/// original's, lowering the threshold from 1.0 to 0.1 in 0.1 steps. With
/// none under the limit, the one that preempts fastest.
pub fn choose_config(
    gpu: &GpuSpec,
    kernel: &KernelSpec,
    blocks_per_sm: u32,
    limit_us: f64,
) -> Result<(Candidate, Vec<Candidate>), EngineError> {
    let sms = Partition::whole(gpu);
    let blocks = kernel.blocks();
    let original = kernel_alone_us(gpu, kernel, KernelConfig::Original, sms)?;
    let mut candidates = Vec::new();
    for w in 1..=blocks_per_sm {
        let per_wave = u64::from(w) * u64::from(gpu.sm_count);
        let waves = blocks.div_ceil(per_wave).max(1) as f64;
        let ptb = KernelConfig::PreemptivePtb { workers_per_sm: w };
        let t = kernel_alone_us(gpu, kernel, ptb, sms)?;
        candidates.push(Candidate {
            config: ptb,
            latency_us: t,
            preemption_us: t / waves / 2.0,
        });
        if per_wave < blocks {
            let sliced = KernelConfig::Sliced { blocks: per_wave };
            let t = kernel_alone_us(gpu, kernel, sliced, sms)?;
            candidates.push(Candidate {
                config: sliced,
                latency_us: t,
                preemption_us: t / waves,
            });
        }
        if per_wave >= blocks {
            break;
        }
    }
    for step in (1..=10).rev() {
        let threshold = f64::from(step) / 10.0;
        let best = candidates
            .iter()
            .filter(|c| c.preemption_us <= limit_us && original / c.latency_us >= threshold)
            .min_by(|a, b| a.latency_us.total_cmp(&b.latency_us));
        if let Some(best) = best {
            return Ok((*best, candidates.clone()));
        }
    }
    let fastest_out = candidates
        .iter()
        .min_by(|a, b| a.preemption_us.total_cmp(&b.preemption_us))
        .copied()
        .expect("at least one candidate");
    Ok((fastest_out, candidates))
}
