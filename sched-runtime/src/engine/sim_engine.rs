//! `SimEngine`: the event loop, the block dispatcher and the rate update.

use std::collections::HashMap;

use rustc_hash::FxHashMap;
use tally_gpu::sim::{PreparedWave, WaveModel, WaveShape, WaveTiming, MAX_CONCURRENT};
use tally_gpu::{GpuError, GpuSpec, KernelSpec, Occupancy};

use super::launch::{Completion, LaunchId, LaunchRequest};
use super::residency::{level_fill, Residency, Seg};

/// Time a persistent worker spends fetching its next block (atomic add on
/// the global counter, shared-memory broadcast, barrier), microseconds.
pub const PTB_FETCH_US: f64 = 0.3;
/// Cohorts whose remaining work is below this are done (rounding).
const DONE_EPS: f64 = 1e-9;

/// Index of a kernel in the engine's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelId(pub u32);

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("launch of kernel `{kernel}`: {reason}")]
    BadLaunch { kernel: String, reason: String },
    #[error("more than {max} launches running at once")]
    TooManyConcurrent { max: usize },
}

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
    /// Whether its launch overhead has passed and the dispatcher knows it.
    started: bool,
    /// Progress per microsecond of every cohort of this launch.
    rate: f64,
}

#[derive(Debug)]
struct Cohort {
    slot: usize,
    first_block: u64,
    blocks: u32,
    /// Remaining work, in waves (1.0 when dispatched).
    remaining: f64,
    sms: Vec<Seg>,
}

/// The simulated GPU as the scheduler drives it.
#[derive(Debug)]
pub struct SimEngine {
    gpu: GpuSpec,
    model: WaveModel,
    kernels: Vec<KernelInfo>,
    kernel_index: HashMap<String, KernelId>,
    residency: Residency,
    /// Launch slots (`None` = free), and the order they are served in.
    slots: Vec<Option<Launch>>,
    order: Vec<usize>,
    cohorts: Vec<Cohort>,
    now: f64,
    next_id: u64,
    /// Something may let blocks be placed: run the dispatcher.
    dirty: bool,
    /// SM residency changed: recompute the rates.
    rates_dirty: bool,
    scratch: RateScratch,
    prepared: FxHashMap<(KernelId, WaveShape), PreparedWave>,
    timings: FxHashMap<RunningSet, Vec<WaveTiming>>,
    log: Option<Vec<BlockRun>>,
}

impl SimEngine {
    pub fn new(gpu: &GpuSpec) -> SimEngine {
        SimEngine {
            gpu: gpu.clone(),
            model: WaveModel::new(gpu),
            kernels: Vec::new(),
            kernel_index: HashMap::new(),
            residency: Residency::new(gpu.sm_count),
            slots: Vec::new(),
            order: Vec::new(),
            cohorts: Vec::new(),
            now: 0.0,
            next_id: 0,
            dirty: false,
            rates_dirty: false,
            scratch: RateScratch::default(),
            prepared: FxHashMap::default(),
            timings: FxHashMap::default(),
            log: None,
        }
    }

    /// Keep a log of every run of blocks (for checks; costs memory).
    pub fn record_blocks(&mut self) {
        self.log = Some(Vec::new());
    }

    pub fn block_log(&self) -> &[BlockRun] {
        self.log.as_deref().unwrap_or(&[])
    }

    pub fn gpu(&self) -> &GpuSpec {
        &self.gpu
    }

    pub fn now(&self) -> f64 {
        self.now
    }

    /// Register a kernel (deduplicated by its op id).
    pub fn add_kernel(&mut self, spec: &KernelSpec) -> Result<KernelId, EngineError> {
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

    pub fn kernel(&self, id: KernelId) -> &KernelSpec {
        &self.kernels[id.0 as usize].spec
    }

    pub fn blocks_per_sm(&self, id: KernelId) -> u32 {
        self.kernels[id.0 as usize].blocks_per_sm
    }

    /// Submit a launch; it may start after the launch overhead.
    pub fn submit(&mut self, req: LaunchRequest) -> Result<LaunchId, EngineError> {
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
        if req.workers_per_sm == Some(0) {
            return Err(bad("zero persistent workers per SM".into()));
        }
        if req.preemptible && req.workers_per_sm.is_none() {
            return Err(bad(
                "only persistent-thread-block launches can retreat".into()
            ));
        }
        let worker_cap = req
            .workers_per_sm
            .map(|w| w.min(info.blocks_per_sm) * req.sms.sm_count);
        let id = LaunchId(self.next_id);
        self.next_id += 1;
        let ready_at = if req.with_overhead {
            self.now + self.gpu.launch_overhead_us
        } else {
            self.now
        };
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

    fn slot(&self, slot: usize) -> &Launch {
        self.slots[slot].as_ref().expect("live launch slot")
    }

    fn slot_mut(&mut self, slot: usize) -> &mut Launch {
        self.slots[slot].as_mut().expect("live launch slot")
    }

    fn find(&self, id: LaunchId) -> Option<usize> {
        self.order.iter().copied().find(|&s| self.slot(s).id == id)
    }

    /// Tell a preemptive PTB launch's workers to retreat: no new blocks;
    /// running blocks finish; it then completes with its progress. False if
    /// the launch is gone or cannot retreat.
    pub fn retreat(&mut self, id: LaunchId) -> bool {
        match self.find(id) {
            Some(s) if self.slot(s).req.preemptible => {
                self.slot_mut(s).retreat = true;
                self.dirty = true;
                true
            }
            _ => false,
        }
    }

    /// Stop (or resume) dispatching a launch's blocks; running blocks go on.
    pub fn set_suspended(&mut self, id: LaunchId, suspended: bool) {
        if let Some(s) = self.find(id) {
            self.slot_mut(s).suspended = suspended;
            self.dirty = true;
        }
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

    /// Time of the next internal event (a cohort finishing, a launch
    /// becoming ready), if any.
    pub fn next_event_time(&self) -> Option<f64> {
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

    /// Run the simulation up to time `t`, reporting completed launches.
    pub fn advance_to(&mut self, t: f64, out: &mut Vec<Completion>) -> Result<(), EngineError> {
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

    /// Apply what is due now: launches past their overhead, finished
    /// cohorts, complete launches, dispatch, new rates. Call after
    /// submitting or preempting.
    pub fn settle(&mut self, out: &mut Vec<Completion>) -> Result<(), EngineError> {
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
            }
            if !completed && !self.cohorts.iter().any(|c| c.remaining <= DONE_EPS) {
                return Ok(());
            }
        }
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

    /// Whether a launch ahead of the one in `slot` in serve order waits to
    /// place blocks on SMs that overlap its range.
    fn waiting_ahead_of(&self, slot: usize) -> bool {
        let range = self.slot(slot).req.sms;
        for &s in &self.order {
            if s == slot {
                return false;
            }
            let o = self.slot(s);
            let waiting = o.started
                && !o.suspended
                && !o.retreat
                && o.next < o.end
                && o.worker_cap.is_none_or(|cap| o.resident < cap);
            let sms = o.req.sms;
            let overlap = sms.first_sm < range.first_sm + range.sm_count
                && range.first_sm < sms.first_sm + sms.sm_count;
            if waiting && overlap {
                return true;
            }
        }
        false
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
            let (slot, first_block, blocks) = {
                let c = &self.cohorts[i];
                (c.slot, c.first_block, c.blocks)
            };
            let l = self.slot(slot);
            let run = BlockRun {
                launch: l.id,
                job: l.req.job,
                kernel: l.req.kernel,
                first_block,
                blocks: u64::from(blocks),
            };
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
            if let Some(log) = &mut self.log {
                log.push(run);
            }
            if refill {
                let l = self.slot_mut(slot);
                let first = l.next;
                l.next += u64::from(blocks);
                let c = &mut self.cohorts[i];
                c.first_block = first;
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
                    first_block: first,
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
            if l.resident == 0 && drained && l.ready_at <= self.now {
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

    /// Place waiting blocks on SMs with room, launches in serve order; a
    /// launch's blocks spread breadth-first over its SM range, as the
    /// hardware block scheduler does.
    fn dispatch(&mut self) {
        let mut fits = std::mem::take(&mut self.scratch.fits);
        for oi in 0..self.order.len() {
            let s = self.order[oi];
            let l = self.slot(s);
            if !l.started || l.suspended || l.retreat || l.next == l.end {
                continue;
            }
            let mut want = l.end - l.next;
            if let Some(cap) = l.worker_cap {
                want = want.min(u64::from(cap.saturating_sub(l.resident)));
            }
            if want == 0 {
                continue;
            }
            let info = &self.kernels[l.req.kernel.0 as usize];
            let (bps, share) = (info.blocks_per_sm, info.share);
            let per_sm_cap = l.req.workers_per_sm.map_or(bps, |w| w.min(bps));
            let first_sm = l.req.sms.first_sm;
            fits.clear();
            self.residency.fits(
                first_sm,
                first_sm + l.req.sms.sm_count,
                |sm| sm.fit_for(s, bps, per_sm_cap),
                &mut fits,
            );
            let placed = level_fill(&mut fits, want);
            if placed == 0 {
                continue;
            }
            let mut new_sms = 0;
            for &seg in fits.iter() {
                new_sms += self.residency.add(seg, s, share);
            }
            self.rates_dirty = true;
            let sms = fits.clone();
            let l = self.slot_mut(s);
            let first = l.next;
            l.next += placed;
            l.resident += placed as u32;
            l.active_sms += new_sms;
            self.cohorts.push(Cohort {
                slot: s,
                first_block: first,
                blocks: placed as u32,
                remaining: 1.0,
                sms,
            });
        }
        self.scratch.fits = fits;
    }

    /// New progress rates of every launch with resident blocks: wave times
    /// from the contention model for the current set of running launches,
    /// stretched where blocks of several launches share an SM's pipes.
    fn update_rates(&mut self) -> Result<(), EngineError> {
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
        // The timing cache is keyed by the sorted (kernel, shape) set.
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
            );
        }
        let unsorted = key.items;
        sc.order.sort_by_key(|&i| unsorted[i]);
        for (rank, &i) in sc.order.iter().enumerate() {
            key.items[rank] = unsorted[i];
        }
        if !self.timings.contains_key(&key) {
            for item in key.items() {
                if !self.prepared.contains_key(item) {
                    let wave = self
                        .model
                        .prepare(&self.kernels[item.0 .0 as usize].spec, item.1)?;
                    self.prepared.insert(*item, wave);
                }
            }
            let waves: Vec<&PreparedWave> = key.items().iter().map(|k| &self.prepared[k]).collect();
            let mut t = vec![WaveTiming::default(); n];
            self.model.timings(&waves, &mut t);
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

/// The sorted `(kernel, shape)` of every running launch: the key of the
/// timing cache, fixed-size so a lookup allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct RunningSet {
    len: u8,
    items: [(KernelId, WaveShape); MAX_CONCURRENT],
}

impl Default for RunningSet {
    fn default() -> RunningSet {
        let none = (
            KernelId(u32::MAX),
            WaveShape {
                sm_count: 0,
                blocks_per_sm: 0,
            },
        );
        RunningSet {
            len: 0,
            items: [none; MAX_CONCURRENT],
        }
    }
}

impl RunningSet {
    fn items(&self) -> &[(KernelId, WaveShape)] {
        &self.items[..usize::from(self.len)]
    }
}

/// Buffers the dispatcher and the rate update reuse from event to event.
#[derive(Debug, Default)]
struct RateScratch {
    running: Vec<usize>,
    order: Vec<usize>,
    timing: Vec<WaveTiming>,
    stretch: Vec<f64>,
    index_of_slot: Vec<usize>,
    fits: Vec<Seg>,
}
