//! A library launch's arguments on the device: one allocation per buffer
//! parameter (inputs filled with seeded data by the fill kernels, outputs
//! zeroed), the scalars, and the argument array `cuLaunchKernel` reads.
//! Freed on drop.

use std::ffi::c_void;

use cudarc::driver::sys;

use super::fill::{buffer_seed, fill_blocks, fill_of, Fill, THREADS};
use super::loaded::LoadedLibrary;
use crate::library::{LibraryKernel, Param};
use tally_gpu::cuda::driver::check;
use tally_gpu::cuda::primary::PrimaryContext;
use tally_gpu::{GpuError, Result};

/// Device buffers and scalar values of one launch.
#[derive(Debug)]
pub struct DeviceArgs {
    /// Freed in the primary context on drop.
    context: sys::CUcontext,
    buffers: Vec<sys::CUdeviceptr>,
    /// One 8-byte slot per parameter, in order: a device pointer, or a
    /// 4-byte scalar in its low bytes (every CUDA host is little-endian, so
    /// a pointer to the slot is a pointer to the scalar).
    slots: Box<[u64]>,
    /// A pointer to each slot: the argument array of every launch.
    pointers: Box<[*mut c_void]>,
    /// Bytes allocated.
    pub bytes: u64,
}

impl Drop for DeviceArgs {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: each buffer was allocated by `new` in `context`, which the
        // backend keeps retained longer than any `DeviceArgs`; freed once.
        unsafe {
            let _ = sys::cuCtxSetCurrent(self.context);
            let _ = sys::cuCtxSynchronize();
            for &b in &self.buffers {
                let _ = sys::cuMemFree_v2(b);
            }
        }
    }
}

impl DeviceArgs {
    /// Allocate and fill the arguments of `launch`, seeded by `seed`.
    #[allow(unsafe_code)]
    pub fn new(
        launch: &LibraryKernel,
        library: &LoadedLibrary,
        primary: &PrimaryContext,
        seed: u64,
    ) -> Result<DeviceArgs> {
        primary.make_current()?;
        let mut args = DeviceArgs {
            context: primary.context(),
            buffers: Vec::new(),
            slots: vec![0u64; launch.params.len()].into_boxed_slice(),
            pointers: Box::new([]),
            bytes: 0,
        };
        for (i, p) in launch.params.iter().enumerate() {
            args.slots[i] = match p {
                Param::Ptr { elems, dtype, .. } => {
                    // 16-byte rounding: the vector paths read whole 16-byte
                    // groups (the kernels guard the tail; this only keeps
                    // every allocation at least one group).
                    let bytes = (elems.saturating_mul(dtype.bytes() as u64)).max(16);
                    let bytes_usize = usize::try_from(bytes).map_err(|_| too_large(launch, p))?;
                    let mut ptr: sys::CUdeviceptr = 0;
                    // SAFETY: the primary context is current; writes `ptr`,
                    // which `args` owns from the next line on.
                    unsafe {
                        check("cuMemAlloc", sys::cuMemAlloc_v2(&mut ptr, bytes_usize))
                            .map_err(|e| out_of_memory(launch, p, bytes, e))?;
                    }
                    args.buffers.push(ptr);
                    args.bytes += bytes;
                    match fill_of(p) {
                        Some(fill) => {
                            args.fill(library, primary, fill, ptr, *elems, buffer_seed(seed, i))?
                        }
                        // SAFETY: `ptr` holds `bytes` bytes; the memset is
                        // queued on the primary stream like the fills.
                        None => unsafe {
                            check(
                                "cuMemsetD8Async",
                                sys::cuMemsetD8Async(ptr, 0, bytes_usize, primary.stream()),
                            )?
                        },
                    }
                    ptr
                }
                Param::I32 { value, .. } => u64::from(scalar_i32(launch, p, *value)? as u32),
                Param::U32 { value, .. } => u64::from(
                    u32::try_from(*value).map_err(|_| out_of_range(launch, p, *value as f64))?,
                ),
                Param::F32 { value, .. } => u64::from((*value as f32).to_bits()),
            };
        }
        primary.synchronize()?;
        // The slots are on the heap and never move (nor are they written
        // again), so pointers taken once stay valid for `args`' lifetime.
        args.pointers = args
            .slots
            .iter()
            .map(|s| (s as *const u64).cast_mut().cast())
            .collect();
        Ok(args)
    }

    /// Queue the fill of `elems` elements at `ptr`.
    #[allow(unsafe_code)]
    fn fill(
        &self,
        library: &LoadedLibrary,
        primary: &PrimaryContext,
        fill: Fill,
        ptr: sys::CUdeviceptr,
        elems: u64,
        seed: u64,
    ) -> Result<()> {
        let kernel = library.kernel(fill.entry())?;
        let (mut p, mut n, mut s) = (ptr, elems, seed);
        let (mut lo, mut hi, mut max) = match fill {
            Fill::Float { lo, hi, .. } => (lo, hi, 0u32),
            Fill::Index { max } => (0.0f32, 0.0f32, max),
        };
        let mut float_params: [*mut c_void; 5] = [
            (&mut p as *mut sys::CUdeviceptr).cast(),
            (&mut n as *mut u64).cast(),
            (&mut s as *mut u64).cast(),
            (&mut lo as *mut f32).cast(),
            (&mut hi as *mut f32).cast(),
        ];
        let mut index_params: [*mut c_void; 4] = [
            float_params[0],
            float_params[1],
            float_params[2],
            (&mut max as *mut u32).cast(),
        ];
        let params = match fill {
            Fill::Float { .. } => float_params.as_mut_ptr(),
            Fill::Index { .. } => index_params.as_mut_ptr(),
        };
        // SAFETY: the parameter array matches the fill entry's signature
        // (pointer, u64, u64, then two floats or one unsigned); the driver
        // copies the values during the call; `ptr` holds `elems` elements.
        unsafe {
            check(
                "cuLaunchKernel",
                sys::cuLaunchKernel(
                    kernel.kernel.cast(),
                    fill_blocks(elems),
                    1,
                    1,
                    THREADS,
                    1,
                    1,
                    0,
                    primary.stream(),
                    params,
                    std::ptr::null_mut(),
                ),
            )
        }
    }

    /// The argument array of a launch (`cuLaunchKernel`'s `kernelParams`,
    /// which the driver only reads).
    pub fn params(&self) -> *mut *mut c_void {
        self.pointers.as_ptr().cast_mut()
    }

    /// The argument array as a slice, one pointer per parameter: a
    /// transformed variant's launch appends its own parameters to it.
    pub fn param_pointers(&self) -> &[*mut c_void] {
        &self.pointers
    }
}

fn scalar_i32(launch: &LibraryKernel, p: &Param, v: i64) -> Result<i32> {
    i32::try_from(v).map_err(|_| out_of_range(launch, p, v as f64))
}

fn out_of_range(launch: &LibraryKernel, p: &Param, v: f64) -> GpuError {
    GpuError::Library(format!(
        "`{}`: parameter `{}` = {v} does not fit its type",
        launch.entry,
        p.name()
    ))
}

fn too_large(launch: &LibraryKernel, p: &Param) -> GpuError {
    GpuError::Library(format!(
        "`{}`: buffer `{}` is larger than this host can address",
        launch.entry,
        p.name()
    ))
}

fn out_of_memory(launch: &LibraryKernel, p: &Param, bytes: u64, e: GpuError) -> GpuError {
    GpuError::Library(format!(
        "`{}`: allocating buffer `{}` ({:.1} MiB) failed: {e}",
        launch.entry,
        p.name(),
        bytes as f64 / (1 << 20) as f64
    ))
}
