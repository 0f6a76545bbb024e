//! A library entry launched with its stand-in's grid and device arguments
//! on one stream: the unit a [`Timer`](tally_gpu::cuda::timer::Timer) times.

use cudarc::driver::sys;

use super::args::DeviceArgs;
use tally_gpu::cuda::driver::check;
use tally_gpu::cuda::timer::Launch;
use tally_gpu::Result;

/// One stand-in launch on a stream of a context (the primary context, or a
/// green-context partition).
pub struct KernelLaunch<'a> {
    pub kernel: sys::CUkernel,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub args: &'a DeviceArgs,
    pub context: sys::CUcontext,
    pub stream: sys::CUstream,
}

impl KernelLaunch<'_> {
    /// Launch once and wait for it (what a profiler run under ncu does).
    #[allow(unsafe_code)]
    pub fn run_once(&self) -> Result<()> {
        // SAFETY: the context and stream are live for `self`'s lifetime.
        unsafe { check("cuCtxSetCurrent", sys::cuCtxSetCurrent(self.context))? };
        self.enqueue()?;
        // SAFETY: as above.
        unsafe { check("cuStreamSynchronize", sys::cuStreamSynchronize(self.stream)) }
    }
}

impl Launch for KernelLaunch<'_> {
    fn context(&self) -> sys::CUcontext {
        self.context
    }

    fn stream(&self) -> sys::CUstream {
        self.stream
    }

    #[allow(unsafe_code)]
    fn enqueue(&self) -> Result<()> {
        // SAFETY: the argument array has one entry per parameter of the
        // entry, in the manifest's order and types; the buffers live as
        // long as `args`.
        unsafe {
            launch_on_stream(
                self.kernel,
                self.grid,
                self.block,
                self.stream,
                self.args.params(),
            )
        }
    }
}

/// Queue library kernel `kernel` (a `CUkernel`, which `cuLaunchKernel`
/// takes in place of a `CUfunction` and launches in the current context)
/// on `stream` with `params`; no dynamic shared memory (no library entry
/// uses any).
///
/// # Safety
/// `params` points to one pointer per parameter of the entry, in order,
/// each to a value of the parameter's type that lives through the call
/// (the driver copies them); the device buffers they name live until the
/// launch has completed; `stream` belongs to the current context.
#[allow(unsafe_code)]
pub unsafe fn launch_on_stream(
    kernel: sys::CUkernel,
    grid: [u32; 3],
    block: [u32; 3],
    stream: sys::CUstream,
    params: *mut *mut std::ffi::c_void,
) -> Result<()> {
    let [gx, gy, gz] = grid;
    let [bx, by, bz] = block;
    // SAFETY: the caller's contract above.
    unsafe {
        check(
            "cuLaunchKernel",
            sys::cuLaunchKernel(
                kernel.cast(),
                gx,
                gy,
                gz,
                bx,
                by,
                bz,
                0,
                stream,
                params,
                std::ptr::null_mut(),
            ),
        )
    }
}
