//! Tally's choice of a kernel configuration by turnaround latency: time
//! the preemptive-PTB and sliced candidates alone on the engine, take the
//! fastest that preempts within the limit.

use tally_gpu::Partition;

use crate::engine::{Engine, EngineError, KernelId};
use crate::kernel_config::KernelConfig;

/// Tally's default turnaround-latency limit in the evaluation, microseconds.
pub const DEFAULT_TURNAROUND_US: f64 = 31.6;

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
/// The timings come from the engine the run is on ([`Engine::alone_us`]).
pub fn choose_config(
    engine: &dyn Engine,
    kernel: KernelId,
    limit_us: f64,
) -> Result<(Candidate, Vec<Candidate>), EngineError> {
    let gpu = engine.gpu();
    let sms = Partition::whole(gpu);
    let blocks = engine.kernel(kernel).blocks();
    let blocks_per_sm = engine.blocks_per_sm(kernel);
    let original = engine.alone_us(kernel, KernelConfig::Original, sms)?;
    let mut candidates = Vec::new();
    for w in 1..=blocks_per_sm {
        let per_wave = u64::from(w) * u64::from(gpu.sm_count);
        let waves = blocks.div_ceil(per_wave).max(1) as f64;
        let ptb = KernelConfig::PreemptivePtb { workers_per_sm: w };
        let t = engine.alone_us(kernel, ptb, sms)?;
        candidates.push(Candidate {
            config: ptb,
            latency_us: t,
            preemption_us: t / waves / 2.0,
        });
        if per_wave < blocks {
            let sliced = KernelConfig::Sliced { blocks: per_wave };
            let t = engine.alone_us(kernel, sliced, sms)?;
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
