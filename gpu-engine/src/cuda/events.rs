//! CUDA events and streams as the real-GPU engine uses them: events made
//! once and reused (a record replaces the last one), queried without
//! blocking, and read as device times; streams made at a priority.
#![allow(unsafe_code)]

use std::ffi::c_uint;

use cudarc::driver::sys;
use tally_gpu::cuda::driver::check;
use tally_gpu::Result;

/// Events made so far and free for reuse; destroyed on drop (after the
/// owner has drained its streams).
#[derive(Debug, Default)]
pub struct EventPool {
    free: Vec<sys::CUevent>,
    made: Vec<sys::CUevent>,
}

impl Drop for EventPool {
    fn drop(&mut self) {
        for &e in &self.made {
            // SAFETY: made by `take`, destroyed once; no stream refers to it
            // any more (the owner synchronised them).
            unsafe {
                let _ = sys::cuEventDestroy_v2(e);
            }
        }
    }
}

impl EventPool {
    /// A timing event recorded on `stream` now.
    pub fn record(&mut self, stream: sys::CUstream) -> Result<sys::CUevent> {
        let e = match self.free.pop() {
            Some(e) => e,
            None => {
                let mut e: sys::CUevent = std::ptr::null_mut();
                // SAFETY: a context is current; writes only `e`, owned by
                // the pool from the next line on.
                unsafe {
                    check(
                        "cuEventCreate",
                        sys::cuEventCreate(&mut e, sys::CUevent_flags::CU_EVENT_DEFAULT as c_uint),
                    )?
                };
                self.made.push(e);
                e
            }
        };
        // SAFETY: the event and stream are live and of the current context.
        unsafe { check("cuEventRecord", sys::cuEventRecord(e, stream))? };
        Ok(e)
    }

    /// Give `e` back for reuse (its record has completed or no longer
    /// matters: a later record replaces it).
    pub fn give_back(&mut self, e: sys::CUevent) {
        self.free.push(e);
    }
}

/// Whether `e`'s last record has completed.
pub fn done(e: sys::CUevent) -> Result<bool> {
    // SAFETY: the event is live; a query only reads its state.
    match unsafe { sys::cuEventQuery(e) } {
        sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
        other => check("cuEventQuery", other).map(|()| true),
    }
}

/// Wait for `e` (used only where it completes at once: a record on an
/// idle stream).
pub fn wait(e: sys::CUevent) -> Result<()> {
    // SAFETY: the event is live.
    unsafe { check("cuEventSynchronize", sys::cuEventSynchronize(e)) }
}

/// Microseconds from `start` to `end` (both completed).
pub fn elapsed_us(start: sys::CUevent, end: sys::CUevent) -> Result<f64> {
    let mut ms: f32 = 0.0;
    // SAFETY: both events are live timing events that have completed.
    unsafe {
        check(
            "cuEventElapsedTime",
            sys::cuEventElapsedTime_v2(&mut ms, start, end),
        )?
    };
    Ok(f64::from(ms) * 1000.0)
}

/// A non-blocking stream at `priority` in the current context.
pub fn stream_at(priority: i32) -> Result<sys::CUstream> {
    let mut s: sys::CUstream = std::ptr::null_mut();
    // SAFETY: a context is current; writes only `s`, which the caller owns.
    unsafe {
        check(
            "cuStreamCreateWithPriority",
            sys::cuStreamCreateWithPriority(
                &mut s,
                sys::CUstream_flags::CU_STREAM_NON_BLOCKING as c_uint,
                priority,
            ),
        )?
    };
    Ok(s)
}

/// Make `stream` wait for `e`'s last record.
pub fn stream_wait(stream: sys::CUstream, e: sys::CUevent) -> Result<()> {
    // SAFETY: both live and of the current context.
    unsafe { check("cuStreamWaitEvent", sys::cuStreamWaitEvent(stream, e, 0)) }
}

/// Drain and destroy `stream`.
pub fn destroy_stream(stream: sys::CUstream) {
    // SAFETY: the caller made it with `stream_at` and destroys it once.
    unsafe {
        let _ = sys::cuStreamSynchronize(stream);
        let _ = sys::cuStreamDestroy_v2(stream);
    }
}
