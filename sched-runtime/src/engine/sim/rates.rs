//! The rate update: every running launch's progress rate from the
//! contention model for the current set of running launches (cached by
//! that set), stretched where several launches share an SM's pipes.

use tally_gpu::sim::{WaveShape, WaveTiming, MAX_CONCURRENT};

use super::contention::RunningLaunch;
use super::residency::Seg;
use super::{SimEngine, PTB_FETCH_US};
use crate::engine::{EngineError, KernelId};

impl SimEngine {
    /// New progress rates of every launch with resident blocks: wave times
    /// from the contention model for the current set of running launches,
    /// stretched where blocks of several launches share an SM's pipes.
    pub(super) fn update_rates(&mut self) -> Result<(), EngineError> {
        let mut sc = std::mem::take(&mut self.scratch);
        let result = self.update_rates_with(&mut sc);
        self.scratch = sc;
        result
    }

    fn update_rates_with(&mut self, sc: &mut RateScratch) -> Result<(), EngineError> {
        sc.running.clear();
        sc.running.extend(
            self.order
                .iter()
                .copied()
                .filter(|&s| self.slot(s).resident > 0),
        );
        let n = sc.running.len();
        if n > MAX_CONCURRENT {
            return Err(EngineError::TooManyConcurrent {
                max: MAX_CONCURRENT,
            });
        }
        // The timing cache is keyed by the sorted (kernel, shape) set, and
        // the partition sizes where the contention model reads them.
        let by_partition = self.contention.uses_partition();
        let mut key = RunningSet {
            len: n as u8,
            ..RunningSet::default()
        };
        sc.order.clear();
        sc.order.extend(0..n);
        for (i, &s) in sc.running.iter().enumerate() {
            let l = self.slot(s);
            let active = l.active_sms.max(1);
            key.items[i] = (
                l.req.kernel,
                WaveShape {
                    sm_count: active,
                    blocks_per_sm: l.resident.div_ceil(active),
                },
                if by_partition {
                    l.req.max_sms.unwrap_or(l.req.sms.sm_count)
                } else {
                    0
                },
            );
        }
        let unsorted = key.items;
        sc.order.sort_by_key(|&i| unsorted[i]);
        for (rank, &i) in sc.order.iter().enumerate() {
            key.items[rank] = unsorted[i];
        }
        if !self.timings.contains_key(&key) {
            let running: Vec<RunningLaunch<'_>> = key
                .items()
                .iter()
                .map(|&(kernel, shape, partition_sms)| RunningLaunch {
                    kernel,
                    spec: &self.kernels[kernel.0 as usize].spec,
                    shape,
                    partition_sms,
                })
                .collect();
            let mut t = vec![WaveTiming::default(); n];
            self.contention.timings(&running, &mut t)?;
            self.timings.insert(key, t);
        }
        let timings = &self.timings[&key];
        sc.timing.clear();
        sc.timing.resize(n, WaveTiming::default());
        for (rank, &i) in sc.order.iter().enumerate() {
            sc.timing[i] = timings[rank];
        }
        // Pipe sharing: a block on an SM whose launches together want more
        // than the SM's pipes is stretched by that load. An SM with one
        // launch never is (its pipe share is at most 1), so only SMs with
        // several launches are visited, and only when there are any.
        sc.stretch.clear();
        sc.stretch.resize(n, 0.0);
        if self.residency.shared_sms() > 0 {
            sc.index_of_slot.clear();
            sc.index_of_slot.resize(self.slots.len(), usize::MAX);
            for (i, &s) in sc.running.iter().enumerate() {
                sc.index_of_slot[s] = i;
            }
            let shared = self
                .residency
                .spans()
                .iter()
                .filter(|sp| sp.sm.resident.len() > 1);
            for span in shared {
                let load: f64 = span
                    .sm
                    .resident
                    .iter()
                    .map(|r| sc.timing[sc.index_of_slot[r.slot]].pipe_share)
                    .sum();
                let excess = load.max(1.0) - 1.0;
                for r in &span.sm.resident {
                    sc.stretch[sc.index_of_slot[r.slot]] +=
                        excess * f64::from(r.blocks) * f64::from(span.len);
                }
            }
        }
        for i in 0..n {
            let s = sc.running[i];
            let l = self.slot(s);
            let factor = 1.0 + sc.stretch[i] / f64::from(l.resident);
            let fetch = if l.req.workers_per_sm.is_some() {
                PTB_FETCH_US
            } else {
                0.0
            };
            let wave_us = (sc.timing[i].wave_us * factor + fetch).max(1e-6);
            self.slot_mut(s).rate = 1.0 / wave_us;
        }
        Ok(())
    }
}

/// One running launch in the timing cache's key: kernel, shape, and
/// partition size (0 where the contention model ignores it).
type RunningItem = (KernelId, WaveShape, u32);

/// The sorted `(kernel, shape, partition)` of every running launch: the
/// key of the timing cache, fixed-size so a lookup allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct RunningSet {
    len: u8,
    items: [RunningItem; MAX_CONCURRENT],
}

impl Default for RunningSet {
    fn default() -> RunningSet {
        let none = (
            KernelId(u32::MAX),
            WaveShape {
                sm_count: 0,
                blocks_per_sm: 0,
            },
            0,
        );
        RunningSet {
            len: 0,
            items: [none; MAX_CONCURRENT],
        }
    }
}

impl RunningSet {
    fn items(&self) -> &[RunningItem] {
        &self.items[..usize::from(self.len)]
    }
}

/// Buffers the dispatcher and the rate update reuse from event to event.
#[derive(Debug, Default)]
pub(super) struct RateScratch {
    running: Vec<usize>,
    order: Vec<usize>,
    timing: Vec<WaveTiming>,
    stretch: Vec<f64>,
    index_of_slot: Vec<usize>,
    pub(super) fits: Vec<Seg>,
    pub(super) waiting: Vec<usize>,
}
