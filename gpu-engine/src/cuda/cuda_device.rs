//! `CudaDevice`: the [`Device`] of a real GPU, one per engine (a policy's
//! run, or the HP job alone) over a shared [`CudaGpu`].
//!
//! - Each job gets its own non-blocking stream at its priority (HP at the
//!   device's greatest, `cuStreamCreateWithPriority`), and a side stream
//!   at the greatest priority for its retreat writes.
//! - A preemptive launch takes a counter-and-flag slot of its job
//!   ([`SlotRing`]); its stream sets the counter and clears the flag just
//!   before the kernel (an event marks that point), and copies the counter
//!   back to pinned host memory after it. A retreat is a write of 1 to
//!   the flag on the side stream (`cuStreamWriteValue32`: a memset may run
//!   as a kernel, which persistent workers at full occupancy would keep
//!   from starting; see `TaskSlot::set`), made to wait for that event so
//!   it can never land before the launch's own clearing. Why device memory
//!   and not mapped host memory: the variant's leader thread reads the
//!   flag before every block it takes (`ld.volatile.global`), which for a
//!   device word is an L2 hit and for a mapped host word a round trip over
//!   PCIe; the write is rare and its few microseconds of latency are paid
//!   once per retreat.
//! - Completions: an event after each kernel (its end time), polled by the
//!   host as `pacing` says (asleep until a launch can have ended).
//! - Clock: the host's monotonic clock from the first time the engine is
//!   asked for it (the run loop's start: registering kernels and measuring
//!   their times alone, which take seconds on a device, happen before, and
//!   the arrivals count from 0 at the loop's start as on the simulator). A
//!   launch's end is placed on it from a reference event: one recorded on
//!   an idle stream and waited for, at the opening and then every 100 ms,
//!   whose host time is read when the wait returns; the end is that time
//!   plus the events' elapsed time. Re-anchoring on the host keeps the
//!   GPU's and the host's clocks from drifting apart over a long run, and
//!   keeps the single-precision milliseconds of `cuEventElapsedTime` (24
//!   bits: 6 ns steps at 100 ms) far finer than a microsecond. Every
//!   reference, the first included, is late by the same wait's return, so
//!   arrivals (host times) and ends share one origin.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Instant;

use cudarc::driver::sys;
use tally_gpu::{GpuError, GpuSpec, KernelSpec};
use tally_kernels::launch_plan::{preempt_progress, total_blocks, Entry, LaunchPlan};
use tally_sched::engine::EngineError;

use super::events::{destroy_stream, done, elapsed_us, stream_at, stream_wait, wait, EventPool};
use super::gpu::CudaGpu;
use super::launch::TaskSlot;
use super::pacing;
use super::slots::{SlotRing, SLOTS_PER_JOB};
use crate::device::{Device, DeviceKernel, Finished, Ticket};

/// Host time between reference events, us.
const REFERENCE_EVERY_US: f64 = 1e5;

#[derive(Debug)]
struct JobStreams {
    stream: sys::CUstream,
    side: sys::CUstream,
    slots: TaskSlot,
    ring: SlotRing,
    /// The retreat write queued on each slot, until it lands.
    retreat_writes: Vec<Option<sys::CUevent>>,
    /// The earliest the stream's last launch can end.
    free_at_us: f64,
}

#[derive(Debug)]
struct InFlight {
    job: usize,
    plan: LaunchPlan,
    slot: Option<usize>,
    /// After the counter and flag writes (preemptive launches).
    armed: Option<sys::CUevent>,
    /// After the kernel.
    end: sys::CUevent,
    /// After the counter's copy back (the kernel's end otherwise).
    done: Option<sys::CUevent>,
    reference: usize,
    earliest_end_us: f64,
    retreated: bool,
}

/// A reference event and its host time.
#[derive(Debug)]
struct Reference {
    event: sys::CUevent,
    at_us: f64,
}

/// A real GPU as one engine drives it.
#[derive(Debug)]
pub struct CudaDevice {
    gpu: Rc<CudaGpu>,
    /// Set by the first `now_us`.
    origin: Cell<Option<Instant>>,
    clock_stream: sys::CUstream,
    references: Vec<Reference>,
    last_reference_host_us: f64,
    jobs: Vec<Option<JobStreams>>,
    launches: BTreeMap<Ticket, InFlight>,
    next_ticket: u64,
    /// An error of a call that cannot return one (`retreat`), reported by
    /// the next `poll`.
    deferred: Option<GpuError>,
    events: EventPool,
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        let _ = self.gpu.primary().make_current();
        for j in self.jobs.iter().flatten() {
            destroy_stream(j.side);
            destroy_stream(j.stream);
        }
        destroy_stream(self.clock_stream);
        // The slots and events go with the fields, their streams drained.
    }
}

impl CudaDevice {
    /// A fresh device session on `gpu`: its clock starts when first read.
    pub fn new(gpu: Rc<CudaGpu>) -> Result<CudaDevice, GpuError> {
        gpu.primary().make_current()?;
        let clock_stream = stream_at(gpu.stream_priority(1))?;
        let events = EventPool::default();
        Ok(CudaDevice {
            gpu,
            origin: Cell::new(None),
            clock_stream,
            references: Vec::new(),
            last_reference_host_us: f64::NEG_INFINITY,
            jobs: Vec::new(),
            launches: BTreeMap::new(),
            next_ticket: 0,
            deferred: None,
            events,
        })
    }

    fn job(&mut self, job: usize, priority: u8) -> Result<&mut JobStreams, GpuError> {
        if self.jobs.len() <= job {
            self.jobs.resize_with(job + 1, || None);
        }
        if self.jobs[job].is_none() {
            let stream = stream_at(self.gpu.stream_priority(priority))?;
            let side = stream_at(self.gpu.stream_priority(1))?;
            let slots = TaskSlot::alloc(SLOTS_PER_JOB)?;
            self.jobs[job] = Some(JobStreams {
                stream,
                side,
                slots,
                ring: SlotRing::new(SLOTS_PER_JOB),
                retreat_writes: vec![None; SLOTS_PER_JOB],
                free_at_us: 0.0,
            });
        }
        Ok(self.jobs[job].as_mut().expect("made above"))
    }

    /// The newest reference event, a new one recorded and placed if there
    /// is none or the last is 100 ms old.
    fn reference(&mut self) -> Result<usize, GpuError> {
        if self.now_us() - self.last_reference_host_us >= REFERENCE_EVERY_US {
            let event = self.events.record(self.clock_stream)?;
            // Recorded on an idle stream: reached at once.
            wait(event)?;
            let at_us = self.now_us();
            self.references.push(Reference { event, at_us });
            self.last_reference_host_us = at_us;
        }
        Ok(self.references.len() - 1)
    }

    /// Land the retreat writes that have completed.
    fn land_retreats(&mut self) -> Result<(), GpuError> {
        for j in self.jobs.iter_mut().flatten() {
            for slot in 0..SLOTS_PER_JOB {
                if let Some(e) = j.retreat_writes[slot] {
                    if done(e)? {
                        j.retreat_writes[slot] = None;
                        j.ring.retreat_landed(slot);
                        self.events.give_back(e);
                    }
                }
            }
        }
        Ok(())
    }

    /// A counter slot of `job`, waiting for retreat writes to land if every
    /// slot waits for one.
    fn take_slot(&mut self, job: usize) -> Result<usize, GpuError> {
        self.land_retreats()?;
        let j = self.jobs[job].as_mut().expect("job made");
        if let Some(s) = j.ring.take() {
            return Ok(s);
        }
        // SAFETY: the side stream is live; only its retreat writes wait.
        unsafe {
            tally_gpu::cuda::driver::check("cuStreamSynchronize", sys::cuStreamSynchronize(j.side))?
        };
        self.land_retreats()?;
        let j = self.jobs[job].as_mut().expect("job made");
        j.ring.take().ok_or_else(|| {
            GpuError::Device(format!(
                "job {job} has {SLOTS_PER_JOB} preemptive launches in flight; the runner keeps one"
            ))
        })
    }

    fn enqueue_on(
        &mut self,
        job: usize,
        priority: u8,
        kernel: DeviceKernel,
        plan: &LaunchPlan,
    ) -> Result<Ticket, GpuError> {
        self.gpu.primary().make_current()?;
        let reference = self.reference()?;
        let stream = self.job(job, priority)?.stream;
        let slot = match plan.entry {
            Entry::Preempt => Some(self.take_slot(job)?),
            _ => None,
        };
        let j = self.jobs[job].as_ref().expect("job made");
        let launch = self
            .gpu
            .planned(kernel.0, plan, stream, slot.map(|s| (&j.slots, s)))?;
        launch.arm()?;
        let armed = match slot {
            Some(_) => Some(self.events.record(stream)?),
            None => None,
        };
        launch.launch_kernel()?;
        let end = self.events.record(stream)?;
        let done = match slot {
            Some(s) => {
                self.jobs[job]
                    .as_ref()
                    .expect("job made")
                    .slots
                    .copy_counter_back(s, stream)?;
                Some(self.events.record(stream)?)
            }
            None => None,
        };
        let now = self.now_us();
        let alone = self.gpu.known_alone_us(kernel.0, plan).unwrap_or(0.0);
        let j = self.jobs[job].as_mut().expect("job made");
        let earliest_end_us = pacing::earliest_end(now, j.free_at_us, alone);
        j.free_at_us = earliest_end_us;
        let ticket = Ticket(self.next_ticket);
        self.next_ticket += 1;
        self.launches.insert(
            ticket,
            InFlight {
                job,
                plan: plan.clone(),
                slot,
                armed,
                end,
                done,
                reference,
                earliest_end_us,
                retreated: false,
            },
        );
        Ok(ticket)
    }

    fn retreat_on(&mut self, ticket: Ticket) -> Result<(), GpuError> {
        let now = self.now_us();
        let Some(l) = self.launches.get_mut(&ticket) else {
            return Ok(());
        };
        let (Some(slot), Some(armed)) = (l.slot, l.armed) else {
            return Ok(());
        };
        if l.retreated {
            return Ok(());
        }
        l.retreated = true;
        // It may end at any moment now.
        l.earliest_end_us = now;
        let job = l.job;
        self.gpu.primary().make_current()?;
        let j = self.jobs[job].as_mut().expect("job made");
        stream_wait(j.side, armed)?;
        TaskSlot::set(j.slots.flag(slot), 1, j.side)?;
        let side = j.side;
        let written = self.events.record(side)?;
        let j = self.jobs[job].as_mut().expect("job made");
        j.ring.retreat_sent(slot);
        j.retreat_writes[slot] = Some(written);
        Ok(())
    }

    /// Stand-in blocks launch `l` ran (it has finished).
    fn blocks_run(&self, l: &InFlight) -> Result<u64, GpuError> {
        let bad = |e: tally_kernels::launch_plan::PlanError| GpuError::Device(e.to_string());
        let original = l.plan.original_grid.unwrap_or(l.plan.grid);
        Ok(match l.plan.entry {
            Entry::Original => u64::from(total_blocks(l.plan.grid).map_err(bad)?),
            Entry::Sliced => u64::from(l.plan.grid[0]),
            Entry::Ptb => u64::from(total_blocks(original).map_err(bad)?),
            Entry::Preempt => {
                let j = self.jobs[l.job].as_ref().expect("job made");
                let slot = l.slot.expect("a preemptive launch has a slot");
                let total = total_blocks(original).map_err(bad)?;
                u64::from(preempt_progress(
                    &l.plan,
                    j.slots.copied_counter(slot),
                    total,
                ))
            }
        })
    }

    fn poll_finished(&mut self, out: &mut Vec<Finished>) -> Result<(), GpuError> {
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        if self.launches.is_empty() {
            return Ok(());
        }
        self.gpu.primary().make_current()?;
        self.land_retreats()?;
        let now = self.now_us();
        let mut finished = Vec::new();
        for (&t, l) in &self.launches {
            if done(l.done.unwrap_or(l.end))? {
                finished.push(t);
            }
        }
        for t in finished {
            let l = self.launches.remove(&t).expect("listed above");
            let r = &self.references[l.reference];
            let end_us = (r.at_us + elapsed_us(r.event, l.end)?).min(now);
            let blocks_run = self.blocks_run(&l)?;
            if let Some(slot) = l.slot {
                self.jobs[l.job]
                    .as_mut()
                    .expect("job made")
                    .ring
                    .launch_finished(slot);
            }
            for e in [Some(l.end), l.done, l.armed].into_iter().flatten() {
                self.events.give_back(e);
            }
            out.push(Finished {
                ticket: t,
                end_us,
                blocks_run,
            });
        }
        Ok(())
    }
}

impl Device for CudaDevice {
    fn gpu(&self) -> &GpuSpec {
        self.gpu.spec()
    }

    fn now_us(&self) -> f64 {
        let origin = match self.origin.get() {
            Some(o) => o,
            None => {
                let o = Instant::now();
                self.origin.set(Some(o));
                o
            }
        };
        origin.elapsed().as_secs_f64() * 1e6
    }

    fn prepare(&mut self, spec: &KernelSpec) -> Result<(DeviceKernel, [u32; 3]), EngineError> {
        let (i, grid) = self.gpu.prepare(spec)?;
        Ok((DeviceKernel(i), grid))
    }

    fn alone_us(&self, kernel: DeviceKernel, plan: &LaunchPlan) -> Result<f64, EngineError> {
        Ok(self.gpu.alone_us(kernel.0, plan)?)
    }

    fn enqueue(
        &mut self,
        stream: usize,
        priority: u8,
        kernel: DeviceKernel,
        plan: &LaunchPlan,
    ) -> Result<Ticket, EngineError> {
        Ok(self.enqueue_on(stream, priority, kernel, plan)?)
    }

    fn retreat(&mut self, ticket: Ticket) {
        if let Err(e) = self.retreat_on(ticket) {
            self.deferred.get_or_insert(e);
        }
    }

    fn poll(&mut self, out: &mut Vec<Finished>) -> Result<(), EngineError> {
        Ok(self.poll_finished(out)?)
    }

    fn wait_until(&mut self, t: f64) -> Result<(), EngineError> {
        loop {
            let now = self.now_us();
            if now >= t {
                return Ok(());
            }
            match pacing::sleep_before(now, t) {
                Some(d) => std::thread::sleep(d),
                None => std::hint::spin_loop(),
            }
        }
    }

    fn next_check(&self) -> Option<f64> {
        pacing::next_check(
            self.now_us(),
            self.launches.values().map(|l| l.earliest_end_us),
        )
    }
}
