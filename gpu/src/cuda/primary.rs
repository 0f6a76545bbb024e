//! The device's primary context, retained for as long as a measurement
//! session lasts, and a non-blocking stream in it. Buffers are allocated
//! here (green contexts share the primary context's memory: "for APIs
//! whose semantics are independent of green context resources, the
//! operation is performed identically to how it would perform with a
//! primary context", CUDA driver API, `cuCtxFromGreenCtx`), and a kernel
//! measured on the whole device runs on this stream.

use std::ffi::c_int;

use cudarc::driver::sys;

use crate::cuda::driver::{check, driver_present};
use crate::error::{GpuError, Result};

/// A retained primary context and its stream; released on drop.
#[derive(Debug)]
pub struct PrimaryContext {
    device: sys::CUdevice,
    context: sys::CUcontext,
    stream: sys::CUstream,
}

impl Drop for PrimaryContext {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: the stream and the retain were made by `retain` and are
        // released once, the stream first (it belongs to the context).
        unsafe {
            let _ = sys::cuCtxSetCurrent(self.context);
            if !self.stream.is_null() {
                let _ = sys::cuStreamSynchronize(self.stream);
                let _ = sys::cuStreamDestroy_v2(self.stream);
            }
            let _ = sys::cuDevicePrimaryCtxRelease_v2(self.device);
        }
    }
}

impl PrimaryContext {
    /// Retain device `ordinal`'s primary context and make it current.
    #[allow(unsafe_code)]
    pub fn retain(ordinal: usize) -> Result<PrimaryContext> {
        if !driver_present() {
            return Err(GpuError::NoDriver);
        }
        crate::cuda::driver_version()?; // cuInit
        let ordinal = c_int::try_from(ordinal).map_err(|_| {
            GpuError::Partition(format!("device ordinal {ordinal} is out of range"))
        })?;
        let mut device: sys::CUdevice = 0;
        let mut context: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: the driver is initialised; each call writes only its
        // out-parameter; the retain is handed to `p` before anything else
        // can fail, so an error releases it.
        unsafe {
            check("cuDeviceGet", sys::cuDeviceGet(&mut device, ordinal))?;
            check(
                "cuDevicePrimaryCtxRetain",
                sys::cuDevicePrimaryCtxRetain(&mut context, device),
            )?;
        }
        let mut p = PrimaryContext {
            device,
            context,
            stream: std::ptr::null_mut(),
        };
        // SAFETY: as above.
        unsafe {
            check("cuCtxSetCurrent", sys::cuCtxSetCurrent(context))?;
            check(
                "cuStreamCreate",
                sys::cuStreamCreate(
                    &mut p.stream,
                    sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
                ),
            )?;
        }
        Ok(p)
    }

    pub fn context(&self) -> sys::CUcontext {
        self.context
    }

    pub fn stream(&self) -> sys::CUstream {
        self.stream
    }

    /// Make the primary context current.
    #[allow(unsafe_code)]
    pub fn make_current(&self) -> Result<()> {
        // SAFETY: the context is retained for `self`'s lifetime.
        unsafe { check("cuCtxSetCurrent", sys::cuCtxSetCurrent(self.context)) }
    }

    /// Wait for the stream.
    #[allow(unsafe_code)]
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: the stream is live.
        unsafe { check("cuStreamSynchronize", sys::cuStreamSynchronize(self.stream)) }
    }
}
