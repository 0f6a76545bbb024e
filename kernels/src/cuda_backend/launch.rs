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
        let [gx, gy, gz] = self.grid;
        let [bx, by, bz] = self.block;
        // SAFETY: `kernel` comes from a loaded library (a `CUkernel`, which
        // `cuLaunchKernel` accepts in place of a `CUfunction` and launches
        // in the current context); the argument array has one entry per
        // parameter of the entry, in the manifest's order and types; the
        // buffers live as long as `args`; no dynamic shared memory (no
        // library entry uses any).
        unsafe {
            check(
                "cuLaunchKernel",
                sys::cuLaunchKernel(
                    self.kernel.cast(),
                    gx,
                    gy,
                    gz,
                    bx,
                    by,
                    bz,
                    0,
                    self.stream,
                    self.args.params(),
                    std::ptr::null_mut(),
                ),
            )
        }
    }
}
