//! Tally with prediction: Tally, plus BE blocks placed beside a running HP
//! kernel on SMs it does not need. Each HP kernel gets the smallest
//! allowed partition on which it runs, alone, within half the tolerance of
//! its time on the whole GPU (its standalone profiles at each partition
//! size: a kernel of few blocks leaves SMs empty; a memory-bound one, a
//! Llama-2 decode GEMV, saturates DRAM from part of the GPU). The BE kernel
//! goes on the largest allowed partition of the rest for which the
//! slowdown model predicts the HP kernel's time, with that confinement,
//! within the tolerance of its time alone on the whole GPU. Where the BE
//! partition lies outside every HP kernel's partition (no kernel of the HP
//! request will need those SMs), the BE kernel runs as preemptive PTB on
//! all of them; elsewhere in the configuration Tally chose for it
//! (preemptive PTB, PTB on a few workers, slices, or the original when it
//! is itself shorter than the limit), so that an HP kernel needing its SMs
//! waits no longer than under Tally. It retreats when the next HP kernel
//! needs its SMs or would be slowed too much. A kernel whose blocks
//! outlast Tally's limit, which Tally caps to a few workers or can only
//! run untransformed and long (too few blocks for its minimum of worker
//! blocks or slices: ResNet-50's per-sample GEMMs without cuDNN, 7-8
//! blocks of ~180 us), cannot retreat in time, so it goes beside HP only
//! on SMs past every HP kernel's partition, where no HP kernel of the
//! request will wait for its blocks or share SMs with them (beside an HP
//! kernel that later needs the whole GPU, a capped kernel's draining
//! blocks stretched Llama-2's decode steps: p99 1.14x beside whisper where
//! Tally's is 1.02x). On a real GPU, as for the HP kernels' partitions, a
//! green context's SM group holds it. HP is confined only where a BE
//! kernel is, or will be, beside it.
//!
//! In HP's idle time BE runs as under Tally, except where it matters to the
//! next request: a kernel Tally caps to a few workers (blocks longer than
//! its preemption limit) goes on the last SMs, as many as its workers, not
//! spread over the GPU; and an HP kernel starting while a BE kernel still
//! holds SMs goes below them where it runs alone within half the tolerance
//! of its whole-GPU time. An HP block sharing an SM with a long BE block is
//! stretched until that block ends (the engine's pipe sharing): under
//! Tally this is what a request arriving in the middle of a capped kernel
//! pays, and it outweighs the HP kernel's confinement.

use std::collections::HashMap;

use rustc_hash::FxHashMap;
use tally_gpu::{GpuSpec, Partition};

use super::common::{be_in_flight, hp_busy, next_be};
use super::slowdown::SlowdownModel;
use super::tally::Tally;
use super::{Ctx, Job, Plan, Policy};
use crate::engine::{Engine, KernelId};
use crate::error::RunError;
use crate::kernel_config::KernelConfig;

#[derive(Debug)]
pub struct TallyPredict {
    tally: Tally,
    tolerance: f64,
    model: Box<dyn SlowdownModel>,
    last_be: usize,
    /// The HP partition while BE runs beside it.
    hp_part: Option<Partition>,
    /// Per HP kernel: its partition size and its time there alone over its
    /// time alone on the whole GPU.
    hp_fit: HashMap<KernelId, (u32, f64)>,
    /// The largest HP partition of the request: SMs from here on are never
    /// needed by an HP kernel.
    request_sms: u32,
    /// Predicted HP slowdowns by (HP kernel, its SMs, BE kernel, its SMs):
    /// the same few pairs come back at every request.
    predicted: FxHashMap<(KernelId, u32, KernelId, u32), f64>,
}

impl TallyPredict {
    pub fn new(turnaround_us: f64, tolerance: f64, model: Box<dyn SlowdownModel>) -> TallyPredict {
        TallyPredict {
            tally: Tally::new(turnaround_us),
            tolerance,
            model,
            last_be: 0,
            hp_part: None,
            hp_fit: HashMap::new(),
            request_sms: 0,
            predicted: FxHashMap::default(),
        }
    }

    /// The smallest allowed partition on which `k` runs alone within half
    /// the tolerance of its time on the whole GPU, and that ratio.
    fn fit(&self, engine: &dyn Engine, k: KernelId) -> Result<(u32, f64), RunError> {
        let gpu = engine.gpu();
        let whole = Partition::whole(gpu);
        let full = engine.alone_us(k, KernelConfig::Original, whole)?;
        for size in gpu.partition.sizes(gpu.sm_count) {
            let t = engine.alone_us(k, KernelConfig::Original, Partition::first(size))?;
            let ratio = t / full.max(1e-9);
            if ratio <= 1.0 + self.tolerance / 2.0 || size >= gpu.sm_count {
                return Ok((size, ratio.max(1.0)));
            }
        }
        Ok((gpu.sm_count, 1.0))
    }

    /// Whether `hp` on `hp_sms` beside `be` on `be_sms` is predicted within
    /// the tolerance of `hp` alone on the whole GPU.
    fn within(
        &mut self,
        ctx: &Ctx<'_>,
        hp: KernelId,
        hp_sms: u32,
        be: KernelId,
        be_sms: u32,
    ) -> Result<bool, RunError> {
        let ratio = self.hp_fit.get(&hp).map_or(1.0, |f| f.1);
        let key = (hp, hp_sms, be, be_sms);
        let slowdown = match self.predicted.get(&key) {
            Some(&s) => s,
            None => {
                let (a, b) = (ctx.engine.kernel(hp), ctx.engine.kernel(be));
                let s = self.model.hp_slowdown(a, hp_sms, b, be_sms)?;
                self.predicted.insert(key, s);
                s
            }
        };
        Ok(slowdown * ratio <= 1.0 + self.tolerance)
    }

    /// Smallest allowed partition holding one block per SM of `hp`: as
    /// fast as the whole GPU.
    fn natural_partition(ctx: &Ctx<'_>, hp: KernelId) -> Partition {
        let gpu = ctx.gpu();
        let blocks = ctx.engine.kernel(hp).blocks();
        let need = blocks.min(u64::from(gpu.sm_count)) as u32;
        Partition::first(Self::size_at_least(gpu, need))
    }

    /// The smallest allowed partition size of at least `sms` SMs.
    fn size_at_least(gpu: &GpuSpec, sms: u32) -> u32 {
        gpu.partition
            .sizes(gpu.sm_count)
            .into_iter()
            .find(|&s| s >= sms)
            .unwrap_or(gpu.sm_count)
    }

    /// `hp` on the SMs below a BE kernel starting at SM `be_start`, where
    /// it runs alone within half the tolerance of its time on the whole
    /// GPU (as [`TallyPredict::fit`] confines it); else the whole GPU.
    fn below_be(&self, ctx: &Ctx<'_>, hp: KernelId, be_start: u32) -> Result<Partition, RunError> {
        let gpu = ctx.gpu();
        let whole = Partition::whole(gpu);
        let size = gpu.partition.round_down(be_start, gpu.sm_count);
        if size > be_start {
            return Ok(whole);
        }
        let below = Partition::first(size);
        let full = ctx.engine.alone_us(hp, KernelConfig::Original, whole)?;
        let t = ctx.engine.alone_us(hp, KernelConfig::Original, below)?;
        Ok(if t <= full * (1.0 + self.tolerance / 2.0) {
            below
        } else {
            whole
        })
    }

    /// Where an idle-time BE launch goes: a capped PTB kernel (long blocks,
    /// a few workers, one per SM) on the last SMs, as many as its workers,
    /// where the next request's first HP kernels need none of them; any
    /// other configuration on the whole GPU, as Tally launches it.
    fn idle_place(gpu: &GpuSpec, config: KernelConfig) -> Partition {
        match config.max_workers() {
            Some(workers) if workers < gpu.sm_count => {
                let size = Self::size_at_least(gpu, workers);
                Partition {
                    first_sm: gpu.sm_count - size,
                    sm_count: size,
                }
            }
            _ => Partition::whole(gpu),
        }
    }

    /// The partition `hp` runs on beside BE (see [`TallyPredict::fit`]).
    fn hp_partition(&self, ctx: &Ctx<'_>, hp: KernelId) -> Partition {
        let size = self.hp_fit.get(&hp).map_or(ctx.gpu().sm_count, |f| f.0);
        Partition::first(size)
    }

    /// The largest BE partition after `hp_part` with the predicted HP
    /// slowdown within tolerance.
    fn be_partition(
        &mut self,
        ctx: &Ctx<'_>,
        hp: KernelId,
        hp_part: Partition,
        be: KernelId,
    ) -> Result<Option<Partition>, RunError> {
        let gpu = ctx.gpu();
        let free = gpu.sm_count - hp_part.sm_count;
        let sizes: Vec<u32> = gpu
            .partition
            .sizes(gpu.sm_count)
            .into_iter()
            .filter(|&s| s <= free && s < gpu.sm_count)
            .collect();
        for &s in sizes.iter().rev() {
            if self.within(ctx, hp, hp_part.sm_count, be, s)? {
                return Ok(Some(Partition {
                    first_sm: gpu.sm_count - s,
                    sm_count: s,
                }));
            }
        }
        Ok(None)
    }

    /// Where the next BE kernel would go beside HP kernel `hp` running on
    /// `hp_part` (a BE job, and its partition and configuration), if
    /// anywhere: on SMs neither `hp` nor the HP kernel after it needs, the
    /// largest partition for which the predicted HP slowdown stays within
    /// the tolerance.
    fn be_beside(
        &mut self,
        ctx: &Ctx<'_>,
        hp: KernelId,
        hp_part: Partition,
    ) -> Result<Option<(usize, Plan)>, RunError> {
        let Some(j) = next_be(ctx, self.last_be) else {
            return Ok(None);
        };
        let be = ctx.jobs[j].kernel();
        // Leave room for the next HP kernel too, so that it does not land
        // on SMs the BE kernel is still draining.
        let hp_job = &ctx.jobs[0];
        let next = hp_job.kernels[(hp_job.cursor + 1) % hp_job.kernels.len()];
        let next_part = self.hp_partition(ctx, next);
        let room = if next_part.sm_count > hp_part.sm_count {
            next_part
        } else {
            hp_part
        };
        if room.sm_count >= ctx.gpu().sm_count {
            return Ok(None);
        }
        let config = self.tally.config(be);
        let whole = Partition::whole(ctx.gpu());
        // A kernel whose blocks outlast Tally's limit, which Tally caps to
        // a few workers or can only run untransformed and long, cannot make
        // way for an HP kernel in time: it goes only on SMs no HP kernel of
        // the request needs.
        let long_blocks = match config {
            KernelConfig::CappedPtb { .. } => true,
            KernelConfig::Original => {
                ctx.engine.alone_us(be, config, whole)? > self.tally.turnaround_us()
            }
            _ => false,
        };
        let room = if long_blocks {
            if self.request_sms >= ctx.gpu().sm_count {
                return Ok(None);
            }
            Partition::first(Self::size_at_least(ctx.gpu(), self.request_sms))
        } else {
            room
        };
        let Some(sms) = self.be_partition(ctx, hp, room, be)? else {
            return Ok(None);
        };
        // Clear of every HP kernel's partition: nothing will make it
        // retreat for SMs, so it may hold all of them.
        let config = if sms.first_sm >= self.request_sms {
            match config {
                KernelConfig::PreemptivePtb { .. } => config,
                _ => KernelConfig::PreemptivePtb { workers_per_sm: 1 },
            }
        } else {
            config
        };
        Ok(Some((
            j,
            Plan {
                config,
                sms,
                priority: 0,
            },
        )))
    }

    fn schedule_busy(&mut self, ctx: &mut Ctx<'_>) -> Result<(), RunError> {
        // The BE launch planned beside the HP kernel launched here, if any.
        let mut planned = None;
        if ctx.jobs[0].ready() {
            let hp = ctx.jobs[0].kernel();
            // Confined only where BE work will use the rest: a BE kernel
            // already beside HP, or the next one with a place beside this
            // kernel. Confining it for nothing costs HP up to half the
            // tolerance.
            let confined = self.hp_partition(ctx, hp);
            if be_in_flight(ctx).is_none() && confined.sm_count < ctx.gpu().sm_count {
                planned = self.be_beside(ctx, hp, confined)?;
            }
            let be_beside = be_in_flight(ctx).is_some() || planned.is_some();
            let part = if be_beside {
                confined
            } else {
                Self::natural_partition(ctx, hp)
            };
            // Keep a BE kernel beside HP only if the new HP kernel leaves
            // its SMs alone and the prediction still holds.
            let mut keep = false;
            if let Some(j) = be_in_flight(ctx) {
                let f = ctx.jobs[j].in_flight.expect("in flight");
                if self.hp_part.is_some() && f.sms.first_sm >= part.sm_count {
                    let be = ctx.jobs[j].kernel();
                    keep = self.within(ctx, hp, part.sm_count, be, f.sms.sm_count)?;
                }
                if !keep {
                    ctx.retreat(j);
                }
            }
            // HP goes on its own SMs, clear of a BE kernel still there
            // (kept, or draining after its retreat): on its partition if
            // that lies below the BE kernel, else on every SM below it
            // where it runs alone within half the tolerance of its time on
            // the whole GPU (an HP block sharing an SM with a long BE block
            // is stretched until that block ends); the whole GPU
            // otherwise.
            let be_start = be_in_flight(ctx)
                .and_then(|j| ctx.jobs[j].in_flight)
                .map(|f| f.sms.first_sm);
            let sms = match be_start {
                None => part,
                Some(b) if part.sm_count <= b => part,
                Some(b) => self.below_be(ctx, hp, b)?,
            };
            self.hp_part = (sms.sm_count < ctx.gpu().sm_count).then_some(sms);
            ctx.launch(
                0,
                Plan {
                    config: KernelConfig::Original,
                    sms,
                    priority: 1,
                },
            )?;
        }
        // A new BE kernel beside the running HP kernel.
        let (Some(hp_part), Some(_)) = (self.hp_part, ctx.jobs[0].in_flight) else {
            return Ok(());
        };
        if be_in_flight(ctx).is_some() {
            return Ok(());
        }
        let hp = ctx.jobs[0].kernel();
        let beside = match planned {
            Some(p) => Some(p),
            None => self.be_beside(ctx, hp, hp_part)?,
        };
        if let Some((j, plan)) = beside {
            self.last_be = j;
            ctx.launch(j, plan)?;
        }
        Ok(())
    }
}

impl Policy for TallyPredict {
    fn name(&self) -> &'static str {
        "tally-predict"
    }

    fn prepare(&mut self, engine: &dyn Engine, jobs: &[Job]) -> Result<(), RunError> {
        if let Some(hp) = jobs.first() {
            for &k in &hp.kernels {
                if !self.hp_fit.contains_key(&k) {
                    let fit = self.fit(engine, k)?;
                    self.hp_fit.insert(k, fit);
                }
            }
        }
        self.request_sms = self.hp_fit.values().map(|f| f.0).max().unwrap_or(0);
        self.tally.choose_all(engine, jobs)
    }

    fn schedule(&mut self, ctx: &mut Ctx<'_>) -> Result<(), RunError> {
        if hp_busy(ctx) {
            // Tally's HP half, but BE beside HP is decided here.
            self.tally.mark_busy();
            self.schedule_busy(ctx)
        } else {
            self.hp_part = None;
            self.tally.schedule_hp(ctx)?;
            self.tally.schedule_idle_be_on(ctx, Self::idle_place)
        }
    }

    fn forward_us(&self) -> f64 {
        self.tally.forward_us()
    }

    fn wake_at(&self, now: f64) -> Option<f64> {
        self.tally.idle_wake(now)
    }
}
