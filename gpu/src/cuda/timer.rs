//! Timing launches with CUDA events, alone and beside a co-runner.
//!
//! A [`Launch`] is anything that queues one kernel on a stream of its
//! context (a library stand-in, the green-context copy probe). A [`Timer`]
//! owns the events that time one: `warmup` launches thrown away, then
//! `repetitions` each bracketed by a start and a stop event.
//!
//! Beside a co-runner, the co-runner must be busy for the whole measured
//! window, however long or short each side's kernel is. Queuing a fixed
//! number of co-runner launches up front cannot do that (the launch queue
//! holds about a thousand launches and a short kernel beside a long one
//! would need far more), so the co-runner is fed in chunks from the host:
//! two chunks are queued, each ending in its own event, and whenever the
//! older one completes another is queued behind the newer one. If both are
//! found complete while a timed repetition runs, the co-runner's queue ran
//! empty in the window: that happens when its kernels are shorter than the
//! host takes to launch them (a few microseconds), which is also how such
//! a job runs for real, so the repetition is kept and counted, and the
//! count is reported with the measurement.

use std::ffi::c_uint;

use cudarc::driver::sys;

use crate::cuda::driver::{check, require_driver};
use crate::cuda::timing::{summarize, Timing, TimingConfig};
use crate::error::{GpuError, Result};

/// The first driver release with `cuEventElapsedTime_v2` (CUDA 12.8), which
/// cudarc's CUDA 13 bindings call (an older driver would make cudarc panic).
pub const EVENT_TIMING_DRIVER: u32 = 12080;

/// Co-runner work kept queued per chunk, microseconds of its solo time:
/// long enough that the host, polling, always tops up in time.
const CHUNK_US: f64 = 2000.0;
/// Most launches per chunk (the driver's launch queue is about 1024 deep,
/// and two chunks are queued at once).
const MAX_CHUNK: u32 = 256;
const _: () = assert!(2 * MAX_CHUNK < 1024, "two chunks must fit the launch queue");

/// One kernel launch, queued on a stream of a context.
pub trait Launch {
    /// The context the launch belongs to (made current before queuing).
    fn context(&self) -> sys::CUcontext;
    /// The stream it is queued on.
    fn stream(&self) -> sys::CUstream;
    /// Queue one launch on [`Launch::stream`]; the caller has made
    /// [`Launch::context`] current.
    fn enqueue(&self) -> Result<()>;
}

/// Launches per co-runner chunk for a co-runner that takes `solo_us` alone.
pub fn chunk_launches(solo_us: f64) -> u32 {
    if !(solo_us.is_finite() && solo_us > 0.0) {
        return MAX_CHUNK;
    }
    ((CHUNK_US / solo_us).ceil() as u32).clamp(1, MAX_CHUNK)
}

const START: usize = 0;
const STOP: usize = 1;
/// The two co-runner chunk events.
const CHUNKS: [usize; 2] = [2, 3];

/// Events timing one [`Launch`], created in its context.
pub struct Timer<'l> {
    work: &'l dyn Launch,
    events: [sys::CUevent; 4],
}

impl std::fmt::Debug for Timer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timer")
            .field("stream", &self.work.stream())
            .field("events", &self.events)
            .finish()
    }
}

impl Drop for Timer<'_> {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: the events are null or were created by `new` in the
        // launch's context and are owned only here; the stream is drained
        // first so no queued record still refers to them.
        unsafe {
            let _ = sys::cuCtxSetCurrent(self.work.context());
            let _ = sys::cuStreamSynchronize(self.work.stream());
            for e in self.events {
                if !e.is_null() {
                    let _ = sys::cuEventDestroy_v2(e);
                }
            }
        }
    }
}

impl<'l> Timer<'l> {
    #[allow(unsafe_code)]
    pub fn new(work: &'l dyn Launch) -> Result<Timer<'l>> {
        require_driver("event timing", EVENT_TIMING_DRIVER)?;
        let mut t = Timer {
            work,
            events: [std::ptr::null_mut(); 4],
        };
        t.current()?;
        for e in &mut t.events {
            // SAFETY: writes only the out-parameter, which `t` then owns.
            unsafe {
                check(
                    "cuEventCreate",
                    sys::cuEventCreate(e, sys::CUevent_flags::CU_EVENT_DEFAULT as c_uint),
                )?
            };
        }
        Ok(t)
    }

    #[allow(unsafe_code)]
    fn current(&self) -> Result<()> {
        // SAFETY: the launch's context is live for the timer's lifetime.
        unsafe { check("cuCtxSetCurrent", sys::cuCtxSetCurrent(self.work.context())) }
    }

    #[allow(unsafe_code)]
    fn record(&self, i: usize) -> Result<()> {
        // SAFETY: the event and the stream are live and of one context.
        unsafe {
            check(
                "cuEventRecord",
                sys::cuEventRecord(self.events[i], self.work.stream()),
            )
        }
    }

    /// Whether event `i` has completed (an event never recorded has).
    #[allow(unsafe_code)]
    fn done(&self, i: usize) -> Result<bool> {
        // SAFETY: the event is live; a query only reads its state.
        match unsafe { sys::cuEventQuery(self.events[i]) } {
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            other => check("cuEventQuery", other).map(|()| true),
        }
    }

    /// Queue one launch between the start and stop events.
    fn queue_timed(&self) -> Result<()> {
        self.current()?;
        self.record(START)?;
        self.work.enqueue()?;
        self.record(STOP)
    }

    /// Microseconds between the start and stop events (both complete).
    #[allow(unsafe_code)]
    fn elapsed_us(&self) -> Result<f64> {
        let mut ms: f32 = 0.0;
        // SAFETY: both events are live and were recorded on this stream.
        unsafe {
            check(
                "cuEventElapsedTime",
                sys::cuEventElapsedTime_v2(&mut ms, self.events[START], self.events[STOP]),
            )?
        };
        Ok(f64::from(ms) * 1000.0)
    }

    /// Wait for the stop event.
    #[allow(unsafe_code)]
    fn wait(&self) -> Result<()> {
        // SAFETY: the event is live.
        unsafe {
            check(
                "cuEventSynchronize",
                sys::cuEventSynchronize(self.events[STOP]),
            )
        }
    }

    /// Queue `launches` launches and record chunk event `event` after them.
    fn queue_chunk(&self, launches: u32, event: usize) -> Result<()> {
        self.current()?;
        for _ in 0..launches {
            self.work.enqueue()?;
        }
        self.record(event)
    }

    /// Wait for everything queued on the stream.
    #[allow(unsafe_code)]
    fn drain(&self) -> Result<()> {
        self.current()?;
        // SAFETY: the stream is live.
        unsafe {
            check(
                "cuStreamSynchronize",
                sys::cuStreamSynchronize(self.work.stream()),
            )
        }
    }

    /// `cfg.warmup` launches, then `cfg.repetitions` timed ones, alone;
    /// microseconds.
    pub fn series(&self, cfg: TimingConfig) -> Result<Vec<f64>> {
        let mut samples = Vec::with_capacity(cfg.repetitions as usize);
        for i in 0..cfg.warmup + cfg.repetitions {
            self.queue_timed()?;
            self.wait()?;
            if i >= cfg.warmup {
                samples.push(self.elapsed_us()?);
            }
        }
        Ok(samples)
    }

    /// The launch timed alone.
    pub fn time(&self, cfg: TimingConfig) -> Result<Timing> {
        summarize(&self.series(cfg)?).map_err(no_timings)
    }

    /// The launch timed while `co` runs continuously on its own stream, fed
    /// `chunk` launches at a time (see [`chunk_launches`]), and how many
    /// timed repetitions found the co-runner's queue empty. Both directions
    /// of a pair are two calls with the roles swapped.
    pub fn beside(&self, cfg: TimingConfig, co: &Timer<'_>, chunk: u32) -> Result<(Timing, u32)> {
        let chunk = chunk.max(1);
        co.queue_chunk(chunk, CHUNKS[0])?;
        co.queue_chunk(chunk, CHUNKS[1])?;
        // The chunk that completes first.
        let mut older = 0;
        let mut samples = Vec::with_capacity(cfg.repetitions as usize);
        let mut idle_reps = 0;
        let result: Result<()> = (|| {
            for i in 0..cfg.warmup + cfg.repetitions {
                self.queue_timed()?;
                let mut idle = false;
                loop {
                    if co.done(CHUNKS[older])? {
                        // Both complete: the co-runner had nothing queued.
                        idle |= co.done(CHUNKS[1 - older])?;
                        co.queue_chunk(chunk, CHUNKS[older])?;
                        older = 1 - older;
                    }
                    if self.done(STOP)? {
                        break;
                    }
                    std::hint::spin_loop();
                }
                if i >= cfg.warmup {
                    idle_reps += u32::from(idle);
                    samples.push(self.elapsed_us()?);
                }
            }
            Ok(())
        })();
        // Let the co-runner finish before anything else is measured, on
        // success and failure alike.
        let drained = co.drain();
        result?;
        drained?;
        Ok((summarize(&samples).map_err(no_timings)?, idle_reps))
    }
}

fn no_timings(e: crate::cuda::timing::TimingError) -> GpuError {
    GpuError::Device(format!("event timing: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_top_up_interval_within_the_queue_depth() {
        // A 5 us kernel: 400 launches would be 2 ms, capped at 256.
        assert_eq!(chunk_launches(5.0), MAX_CHUNK);
        assert_eq!(chunk_launches(100.0), 20);
        // A kernel longer than the interval: one launch per chunk.
        assert_eq!(chunk_launches(15_000.0), 1);
        assert_eq!(chunk_launches(0.0), MAX_CHUNK);
        assert_eq!(chunk_launches(f64::NAN), MAX_CHUNK);
    }
}
