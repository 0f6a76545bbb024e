//! Tally's choice of a kernel configuration by turnaround latency: time
//! the preemptive-PTB and sliced candidates alone on the engine, take the
//! fastest that preempts within the limit, else Tally's fallbacks (the
//! original, PTB on fewer SMs, finer slices). Kernels of vendor libraries
//! stay untransformed ([`is_library_kernel`]).

use tally_gpu::{KernelKind, KernelSpec, Partition};

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
/// none under the limit, Tally's fallbacks ([`fall_back`]).
/// The timings come from the engine the run is on ([`Engine::alone_us`]).
/// A library kernel runs as it is, whatever its length.
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
    if is_library_kernel(engine.kernel(kernel)) {
        let as_is = Candidate {
            config: KernelConfig::Original,
            latency_us: original,
            preemption_us: original,
        };
        return Ok((as_is, vec![as_is]));
    }
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
    let fallback = fall_back(engine, kernel, limit_us, original, &candidates)?;
    Ok((fallback, candidates))
}

/// Whether a kernel reaches Tally as a vendor-library call, which it
/// cannot transform: a convolution, which PyTorch runs through cuDNN. Tally
/// forwards cuDNN and cuBLAS calls to its server as library calls and
/// launches them in their original configuration (tally commit de153caf,
/// `src/tally/server.cpp`: the cuDNN handlers build their launch with
/// `is_library_call`; `src/tally/scheduler/priority.cpp`: a library call
/// gets the default configuration), so they cannot be preempted. The
/// artifact's jobs run with `REPLACE_CUBLAS` (tally-bench
/// `python/bench_utils/bench.py`), which swaps cuBLAS and cuBLASLt GEMMs
/// for CUTLASS kernels Tally does transform, so GEMMs are not library
/// kernels here.
pub fn is_library_kernel(spec: &KernelSpec) -> bool {
    spec.kind == KernelKind::Conv
}

/// Lowest speed, against the original, of a configuration Tally accepts.
const MIN_NORM_SPEED: f64 = 0.1;
/// Overhead Tally provisions for slicing when it falls back to it.
const SLICING_OVERHEAD: f64 = 1.3;
/// Fewest blocks Tally's fallbacks run at once: the workers of capped PTB,
/// and the blocks of each slice (`PRIORITY_MIN_WORKER_BLOCKS`, 24 by
/// default in `src/tally/env.cpp` at tally commit de153caf, the one the
/// published table's artifact, tally-bench aaa359a, pins). Without it a
/// kernel with millisecond blocks would be capped to a handful of SMs.
pub const MIN_WORKER_BLOCKS: u64 = 24;

/// Tally's fallbacks when no candidate preempts within the limit (tally
/// `src/tally/scheduler/priority.cpp`): the original kernel if it is itself
/// shorter than the limit; else, when PTB runs at least `MIN_NORM_SPEED` of
/// the original and no slower than slicing, preemptive PTB with fewer
/// workers than SMs, `limit / (PTB's preemption latency) x min(SMs,
/// blocks)` of them, at least one (an HP arrival then waits for the blocks
/// of those few SMs only); else slicing into `1.3 x latency / limit`
/// slices; else the original.
fn fall_back(
    engine: &dyn Engine,
    kernel: KernelId,
    limit_us: f64,
    original: f64,
    candidates: &[Candidate],
) -> Result<Candidate, EngineError> {
    let gpu = engine.gpu();
    let sms = Partition::whole(gpu);
    let blocks = engine.kernel(kernel).blocks();
    let as_original = Candidate {
        config: KernelConfig::Original,
        latency_us: original,
        preemption_us: original,
    };
    if original <= limit_us {
        return Ok(as_original);
    }
    let best_speed = |ptb: bool| {
        candidates
            .iter()
            .filter(|c| matches!(c.config, KernelConfig::PreemptivePtb { .. }) == ptb)
            .map(|c| original / c.latency_us)
            .fold(f64::NEG_INFINITY, f64::max)
    };
    let (ptb_speed, sliced_speed) = (best_speed(true), best_speed(false));
    if ptb_speed.max(sliced_speed) < MIN_NORM_SPEED {
        return Ok(as_original);
    }
    let config = if ptb_speed >= sliced_speed {
        let one_per_sm = candidates
            .iter()
            .find(|c| c.config == KernelConfig::PreemptivePtb { workers_per_sm: 1 })
            .expect("PTB with one worker per SM is always a candidate");
        let spread = blocks.min(u64::from(gpu.sm_count)) as f64;
        let workers = (limit_us / one_per_sm.preemption_us * spread)
            .floor()
            .max(MIN_WORKER_BLOCKS as f64);
        if workers >= blocks as f64 {
            return Ok(as_original);
        }
        KernelConfig::CappedPtb {
            workers: workers as u32,
        }
    } else {
        let finest = candidates
            .iter()
            .filter_map(|c| match c.config {
                KernelConfig::Sliced { blocks: per_slice } => Some(blocks.div_ceil(per_slice)),
                _ => None,
            })
            .max()
            .unwrap_or(1);
        let slices = (original * SLICING_OVERHEAD / limit_us)
            .ceil()
            .max(finest as f64)
            .min(blocks.div_ceil(MIN_WORKER_BLOCKS) as f64)
            .min(blocks as f64);
        if slices <= 1.0 {
            return Ok(as_original);
        }
        KernelConfig::Sliced {
            blocks: blocks.div_ceil(slices as u64),
        }
    };
    let latency_us = engine.alone_us(kernel, config, sms)?;
    Ok(Candidate {
        config,
        latency_us,
        // Tally counts the fallback as preempting within the limit.
        preemption_us: limit_us.min(latency_us),
    })
}
