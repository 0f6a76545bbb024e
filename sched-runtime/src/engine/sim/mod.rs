//! `SimEngine`: the simulated GPU behind the [`Engine`](super::Engine)
//! interface. This file holds its state, the kernel table, submissions and
//! the event loop (time advances to the next cohort finishing or launch
//! becoming ready); `dispatch.rs` places blocks on SMs, `rates.rs` gives
//! running launches their progress rates from the `contention.rs` model,
//! `residency.rs` and `sm.rs` track what each SM holds.

pub mod contention;
mod context_save;
mod dispatch;
mod rates;
mod residency;
mod sm;
pub mod timeline;

use std::collections::HashMap;

use rustc_hash::FxHashMap;
use tally_gpu::sim::WaveTiming;
use tally_gpu::{GpuSpec, KernelSpec, Occupancy, Partition};

use self::contention::{ContentionModel, SimContention};
use self::rates::{RateScratch, RunningSet};
use self::residency::{Residency, Seg};
use super::alone::time_alone;
use super::{Completion, Engine, EngineError, KernelId, LaunchId, LaunchRequest};
use crate::kernel_config::KernelConfig;

/// Time a persistent worker spends fetching its next block (atomic add on
/// the global counter, shared-memory broadcast, barrier), microseconds.
pub const PTB_FETCH_US: f64 = 0.3;
/// Most cohorts (groups of blocks dispatched together) one launch keeps
/// apart. Blocks of a many-wave kernel that share the GPU with another
/// job's short kernels are freed and refilled at scattered times, and every
/// event scans the cohorts; beyond this many, a new placement joins the
/// launch's youngest cohort (the one with most work left), finishing early
/// by that cohort's progress: with the phases spread over a wave, about
/// 1/`MAX_COHORTS_PER_LAUNCH` of a wave. A bound on simulation cost, not a
/// hardware fact: 4 rather than 8 halves the events of a BE kernel beside
/// Llama-2's decode kernels under MPS (`tally run --hp llama2-7b:infer --be
/// resnet50:train@128 --compare mps --duration 10s`: 13.5 s to 7.9 s of
/// CPU) and moves the published-table figures by under 5 %.
pub const MAX_COHORTS_PER_LAUNCH: usize = 4;
/// Cohorts whose remaining work is below this are done (rounding).
const DONE_EPS: f64 = 1e-9;

/// A run of blocks that executed (the engine's log, for checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockRun {
    pub launch: LaunchId,
    pub job: usize,
    pub kernel: KernelId,
    pub first_block: u64,
    pub blocks: u64,
}

#[derive(Debug)]
struct KernelInfo {
    spec: KernelSpec,
    blocks_per_sm: u32,
    /// Share of an SM one block uses: `1 / blocks_per_sm`.
    share: f64,
}

#[derive(Debug)]
struct Launch {
    id: LaunchId,
    req: LaunchRequest,
    ready_at: f64,
    /// Next block index to dispatch (absolute).
    next: u64,
    end: u64,
    resident: u32,
    active_sms: u32,
    worker_cap: Option<u32>,
    retreat: bool,
    suspended: bool,
    /// Blocks taken off the SMs mid-block by a context save
    /// (`context_save.rs`), waiting to be restored.
    saved: u32,
    /// Whether its launch overhead has passed and the dispatcher knows it.
    started: bool,
    /// Progress per microsecond of every cohort of this launch.
    rate: f64,
}

#[derive(Debug)]
struct Cohort {
    slot: usize,
    /// The block ranges it runs, `(first, count)`: one, unless placements
    /// were merged into it (see [`MAX_COHORTS_PER_LAUNCH`]).
    ranges: Vec<(u64, u32)>,
    blocks: u32,
    /// Remaining work, in waves (1.0 when dispatched).
    remaining: f64,
    sms: Vec<Seg>,
}

/// The simulated GPU as the scheduler drives it.
#[derive(Debug)]
pub struct SimEngine {
    gpu: GpuSpec,
    contention: Box<dyn ContentionModel>,
    kernels: Vec<KernelInfo>,
    kernel_index: HashMap<String, KernelId>,
    residency: Residency,
    /// Launch slots (`None` = free), and the order they are served in.
    slots: Vec<Option<Launch>>,
    order: Vec<usize>,
    cohorts: Vec<Cohort>,
    /// Cohorts of saved contexts, off the SMs (`context_save.rs`).
    saved: Vec<Cohort>,
    now: f64,
    next_id: u64,
    /// Something may let blocks be placed: run the dispatcher.
    dirty: bool,
    /// SM residency changed: recompute the rates.
    rates_dirty: bool,
    scratch: RateScratch,
    timings: FxHashMap<RunningSet, Vec<WaveTiming>>,
    log: Option<Vec<BlockRun>>,
    timeline: Option<timeline::Timeline>,
}

impl SimEngine {
    /// The simulated GPU with the simulator's own contention model.
    pub fn new(gpu: &GpuSpec) -> SimEngine {
        SimEngine::with_contention(gpu, Box::new(SimContention::new(gpu)))
    }

    /// The simulated GPU whose running launches are paced by `contention`
    /// (the blocks, launch gaps and dispatch stay the engine's).
    pub fn with_contention(gpu: &GpuSpec, contention: Box<dyn ContentionModel>) -> SimEngine {
        SimEngine {
            gpu: gpu.clone(),
            contention,
            kernels: Vec::new(),
            kernel_index: HashMap::new(),
            residency: Residency::new(gpu.sm_count),
            slots: Vec::new(),
            order: Vec::new(),
            cohorts: Vec::new(),
            saved: Vec::new(),
            now: 0.0,
            next_id: 0,
            dirty: false,
            rates_dirty: false,
            scratch: RateScratch::default(),
            timings: FxHashMap::default(),
            log: None,
            timeline: None,
        }
    }

    /// Record the SM occupancy by job over the first `until_us` of the run.
    pub fn record_timeline(&mut self, until_us: f64) {
        self.timeline = Some(timeline::Timeline::new(until_us));
    }

    /// The occupancy recorded so far, if asked for.
    pub fn take_timeline(&mut self) -> Option<timeline::Timeline> {
        self.timeline.take()
    }

    fn sample_timeline(&mut self) {
        let Some(mut t) = self.timeline.take() else {
            return;
        };
        if t.recording(self.now) {
            t.sample(self.now, self.residency.spans(), |slot| {
                self.slot(slot).req.job
            });
        }
        self.timeline = Some(t);
    }

    /// Keep a log of every run of blocks (for checks; costs memory).
    pub fn record_blocks(&mut self) {
        self.log = Some(Vec::new());
    }

    pub fn block_log(&self) -> &[BlockRun] {
        self.log.as_deref().unwrap_or(&[])
    }

    fn slot(&self, slot: usize) -> &Launch {
        self.slots[slot].as_ref().expect("live launch slot")
    }

    fn slot_mut(&mut self, slot: usize) -> &mut Launch {
        self.slots[slot].as_mut().expect("live launch slot")
    }

    fn find(&self, id: LaunchId) -> Option<usize> {
        self.order.iter().copied().find(|&s| self.slot(s).id == id)
    }

    /// Blocks of `id` resident on SMs now.
    pub fn resident_blocks(&self, id: LaunchId) -> u32 {
        self.find(id).map_or(0, |s| self.slot(s).resident)
    }

    /// SMs with no resident block in `0..sm_count`.
    pub fn idle_sms(&self) -> u32 {
        self.residency.idle_sms()
    }

    /// Whether any launch is submitted and not yet complete.
    pub fn busy(&self) -> bool {
        !self.order.is_empty()
    }

    /// Launches whose overhead has passed become dispatchable.
    fn mark_started(&mut self) {
        for i in 0..self.order.len() {
            let s = self.order[i];
            let now = self.now;
            let l = self.slot_mut(s);
            if !l.started && l.ready_at <= now {
                l.started = true;
                self.dirty = true;
            }
        }
    }

    fn progress_to(&mut self, t: f64) {
        let dt = t - self.now;
        for i in 0..self.cohorts.len() {
            let rate = self.slot(self.cohorts[i].slot).rate;
            let c = &mut self.cohorts[i];
            // A cohort due by `t` is done even if `now + remaining / rate`
            // rounds to `now` (time far larger than the step).
            if self.now + c.remaining / rate <= t {
                c.remaining = 0.0;
            } else if dt > 0.0 {
                c.remaining -= rate * dt;
            }
        }
        self.now = self.now.max(t);
    }

    /// Retire cohorts that are done; persistent workers take their next
    /// blocks on the same SMs without giving them up.
    fn finish_cohorts(&mut self) {
        let mut i = 0;
        while i < self.cohorts.len() {
            if self.cohorts[i].remaining > DONE_EPS {
                i += 1;
                continue;
            }
            let (slot, blocks) = {
                let c = &self.cohorts[i];
                (c.slot, c.blocks)
            };
            let l = self.slot(slot);
            let may_continue = !l.retreat && !l.suspended;
            let persistent = l.req.workers_per_sm.is_some() && may_continue;
            let available = l.end - l.next;
            // Persistent workers take their next blocks where they are. A
            // plain launch's freed slots would go to the first waiting
            // launch in serve order; when that is this launch itself (none
            // ahead of it waits on these SMs), the block scheduler refills
            // the same slots with its next blocks. Either way residency,
            // and so every rate, stays as it is: no SM is touched.
            let refill = available >= u64::from(blocks)
                && may_continue
                && (persistent || !self.waiting_ahead_of(slot));
            let (id, job, kernel) = (l.id, l.req.job, l.req.kernel);
            if let Some(log) = &mut self.log {
                for &(first_block, count) in &self.cohorts[i].ranges {
                    log.push(BlockRun {
                        launch: id,
                        job,
                        kernel,
                        first_block,
                        blocks: u64::from(count),
                    });
                }
            }
            if refill {
                let l = self.slot_mut(slot);
                let first = l.next;
                l.next += u64::from(blocks);
                let c = &mut self.cohorts[i];
                c.ranges.clear();
                c.ranges.push((first, blocks));
                c.remaining = 1.0;
                i += 1;
                continue;
            }
            let c = self.cohorts.swap_remove(i);
            self.dirty = true;
            let keep = if persistent { available as u32 } else { 0 };
            // Workers beyond the remaining blocks exit, SM by SM in order:
            // whole SMs first, then part of one, the rest stay.
            let mut release = c.blocks - keep;
            let mut kept_sms = Vec::new();
            let mut kept = 0;
            let mut gone = 0;
            for &seg in &c.sms {
                let whole = seg.count.min(release / seg.n);
                if whole > 0 {
                    gone += self.residency.remove(
                        Seg {
                            count: whole,
                            ..seg
                        },
                        c.slot,
                    );
                    release -= whole * seg.n;
                }
                let mut rest = Seg {
                    first: seg.first + whole,
                    count: seg.count - whole,
                    n: seg.n,
                };
                if rest.count > 0 && release > 0 {
                    let part = Seg {
                        first: rest.first,
                        count: 1,
                        n: release,
                    };
                    gone += self.residency.remove(part, c.slot);
                    kept_sms.push(Seg {
                        n: seg.n - release,
                        ..part
                    });
                    kept += seg.n - release;
                    release = 0;
                    rest.first += 1;
                    rest.count -= 1;
                }
                if rest.count > 0 {
                    kept_sms.push(rest);
                    kept += rest.count * rest.n;
                }
            }
            if c.blocks > kept {
                self.rates_dirty = true;
            }
            self.slot_mut(c.slot).active_sms -= gone;
            let l = self.slot_mut(c.slot);
            l.resident -= c.blocks - kept;
            if kept > 0 {
                let first = l.next;
                l.next += u64::from(kept);
                self.cohorts.push(Cohort {
                    slot: c.slot,
                    ranges: vec![(first, kept)],
                    blocks: kept,
                    remaining: 1.0,
                    sms: kept_sms,
                });
            }
        }
    }

    fn complete_launches(&mut self, out: &mut Vec<Completion>) -> bool {
        let mut any = false;
        let mut i = 0;
        while i < self.order.len() {
            let s = self.order[i];
            let l = self.slot(s);
            let drained = l.next == l.end || l.retreat;
            if l.resident == 0 && l.saved == 0 && drained && l.ready_at <= self.now {
                out.push(Completion {
                    launch: l.id,
                    job: l.req.job,
                    kernel: l.req.kernel,
                    blocks_done: l.next - l.req.first_block,
                    retreated: l.next < l.end,
                    time_us: self.now,
                });
                self.order.remove(i);
                self.slots[s] = None;
                any = true;
                self.dirty = true;
            } else {
                i += 1;
            }
        }
        any
    }

    /// `spec` alone on a fresh simulated `gpu` (the standalone reference
    /// of the run loop, and the calibration of kernel traces).
    pub fn alone_us_on(
        gpu: &GpuSpec,
        spec: &KernelSpec,
        config: KernelConfig,
        sms: Partition,
    ) -> Result<f64, EngineError> {
        let mut engine = SimEngine::new(gpu);
        let id = engine.add_kernel(spec)?;
        time_alone(&mut engine, id, config, sms)
    }
}

impl Engine for SimEngine {
    fn gpu(&self) -> &GpuSpec {
        &self.gpu
    }

    fn now(&self) -> f64 {
        self.now
    }

    fn add_kernel(&mut self, spec: &KernelSpec) -> Result<KernelId, EngineError> {
        let key = spec.op_id();
        if let Some(&id) = self.kernel_index.get(&key) {
            return Ok(id);
        }
        let occupancy = Occupancy::of(spec, &self.gpu)?;
        let id = KernelId(self.kernels.len() as u32);
        let blocks_per_sm = occupancy.blocks_per_sm.max(1);
        self.kernels.push(KernelInfo {
            spec: spec.clone(),
            blocks_per_sm,
            share: 1.0 / f64::from(blocks_per_sm),
        });
        self.kernel_index.insert(key, id);
        Ok(id)
    }

    fn kernel(&self, id: KernelId) -> &KernelSpec {
        &self.kernels[id.0 as usize].spec
    }

    fn blocks_per_sm(&self, id: KernelId) -> u32 {
        self.kernels[id.0 as usize].blocks_per_sm
    }

    fn submit(&mut self, req: LaunchRequest) -> Result<LaunchId, EngineError> {
        let info = &self.kernels[req.kernel.0 as usize];
        let bad = |reason: String| EngineError::BadLaunch {
            kernel: info.spec.name.clone(),
            reason,
        };
        req.sms.check(&self.gpu).map_err(|e| bad(e.to_string()))?;
        if req.first_block + req.blocks > info.spec.blocks() {
            return Err(bad(format!(
                "blocks {}..{} beyond its grid of {}",
                req.first_block,
                req.first_block + req.blocks,
                info.spec.blocks()
            )));
        }
        if let Some(cap) = req.max_sms {
            if cap == 0 || cap > req.sms.sm_count {
                return Err(bad(format!(
                    "at most {cap} SMs at once: expected 1 to the range's {} SMs",
                    req.sms.sm_count
                )));
            }
        }
        if req.workers_per_sm == Some(0) {
            return Err(bad("zero persistent workers per SM".into()));
        }
        if req.preemptible && req.workers_per_sm.is_none() {
            return Err(bad(
                "only persistent-thread-block launches can retreat".into()
            ));
        }
        let worker_cap = req.workers_per_sm.map(|w| {
            let per_range = w.min(info.blocks_per_sm) * req.sms.sm_count;
            req.max_workers.map_or(per_range, |m| m.clamp(1, per_range))
        });
        let id = LaunchId(self.next_id);
        self.next_id += 1;
        let ready_at = if req.with_overhead {
            self.now + self.gpu.launch_overhead_us
        } else {
            self.now
        } + req.host_delay_us.max(0.0);
        let launch = Launch {
            id,
            next: req.first_block,
            end: req.first_block + req.blocks,
            req,
            ready_at,
            resident: 0,
            active_sms: 0,
            worker_cap,
            retreat: false,
            suspended: false,
            saved: 0,
            started: false,
            rate: 0.0,
        };
        let slot = match self.slots.iter().position(Option::is_none) {
            Some(i) => {
                self.slots[i] = Some(launch);
                i
            }
            None => {
                self.slots.push(Some(launch));
                self.slots.len() - 1
            }
        };
        // Serve order: priority first, then launch order.
        let prio = self.slot(slot).req.priority;
        let pos = self
            .order
            .iter()
            .position(|&s| self.slot(s).req.priority < prio)
            .unwrap_or(self.order.len());
        self.order.insert(pos, slot);
        self.dirty = true;
        Ok(id)
    }

    fn retreat(&mut self, id: LaunchId) -> bool {
        match self.find(id) {
            Some(s) if self.slot(s).req.preemptible => {
                self.slot_mut(s).retreat = true;
                self.dirty = true;
                true
            }
            _ => false,
        }
    }

    fn set_suspended(&mut self, id: LaunchId, suspended: bool) {
        if let Some(s) = self.find(id) {
            self.slot_mut(s).suspended = suspended;
            self.dirty = true;
        }
    }

    fn set_context_saved(&mut self, id: LaunchId, saved: bool) {
        if let Some(s) = self.find(id) {
            if saved {
                self.save_context(s);
            } else {
                self.restore_context(s);
            }
        }
    }

    fn next_event_time(&self) -> Option<f64> {
        let mut t = f64::INFINITY;
        for c in &self.cohorts {
            let rate = self.slot(c.slot).rate;
            if rate > 0.0 {
                t = t.min(self.now + c.remaining / rate);
            }
        }
        for &s in &self.order {
            let l = self.slot(s);
            if l.ready_at > self.now {
                t = t.min(l.ready_at);
            }
        }
        t.is_finite().then_some(t)
    }

    fn advance_to(&mut self, t: f64, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        self.settle(out)?;
        while let Some(te) = self.next_event_time() {
            if te > t {
                break;
            }
            self.progress_to(te);
            self.settle(out)?;
        }
        self.progress_to(t.max(self.now));
        Ok(())
    }

    fn settle(&mut self, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        loop {
            self.mark_started();
            self.finish_cohorts();
            let completed = self.complete_launches(out);
            if self.dirty {
                self.dispatch();
                self.dirty = false;
            }
            if self.rates_dirty {
                self.update_rates()?;
                self.rates_dirty = false;
                self.sample_timeline();
            }
            if !completed && !self.cohorts.iter().any(|c| c.remaining <= DONE_EPS) {
                return Ok(());
            }
        }
    }

    fn alone_us(
        &self,
        id: KernelId,
        config: KernelConfig,
        sms: Partition,
    ) -> Result<f64, EngineError> {
        SimEngine::alone_us_on(&self.gpu, self.kernel(id), config, sms)
    }
}
