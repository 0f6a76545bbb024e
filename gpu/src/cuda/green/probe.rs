//! A check that a green-context partition really confines work to its SMs:
//! a grid-stride copy with enough blocks to fill the whole device, timed
//! with CUDA events on the partition's stream. Fewer SMs move the same
//! bytes more slowly, so timings across partitions of different sizes show
//! whether the partitions hold (`tally gpus --backend cuda --try-split`).
//!
//! The kernel is compiled with NVRTC and assembled with ptxas for the
//! device's architecture and loaded as a cubin (no PTX JIT). Not run on a
//! GPU in this repository's CI: none is available there.

use std::ffi::{c_uint, c_void, CString};

use cudarc::driver::sys;

use super::partition::GreenPartition;
use crate::cuda::driver::{check, require_driver};
use crate::cuda::nvrtc::{compile_to_ptx, Arch};
use crate::cuda::ptxas::assemble_cubin;
use crate::cuda::timing::{summarize, Timing, TimingConfig};
use crate::error::{GpuError, Result};

const ENTRY: &str = "tally_probe_copy";
const SOURCE: &str = r#"
extern "C" __global__ void tally_probe_copy(const float4* __restrict__ a,
                                            float4* __restrict__ b, unsigned n) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += gridDim.x * blockDim.x) {
        b[i] = a[i];
    }
}
"#;
const THREADS: u32 = 256;
/// The first driver release with `cuEventElapsedTime_v2` (CUDA 12.8).
const EVENT_TIMING_DRIVER: u32 = 12080;

/// Driver objects of one probe, released in reverse order of creation.
struct Probe {
    module: sys::CUmodule,
    buffers: [sys::CUdeviceptr; 2],
    events: [sys::CUevent; 2],
}

impl Drop for Probe {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: each handle is null/zero or was created by `time_copy`
        // and is owned only here; destroying in reverse order of creation.
        unsafe {
            for e in self.events {
                if !e.is_null() {
                    let _ = sys::cuEventDestroy_v2(e);
                }
            }
            for b in self.buffers {
                if b != 0 {
                    let _ = sys::cuMemFree_v2(b);
                }
            }
            if !self.module.is_null() {
                let _ = sys::cuModuleUnload(self.module);
            }
        }
    }
}

/// Time a copy of `bytes` (rounded down to 16-byte elements) on `part`,
/// with `blocks` blocks (enough to fill the whole device).
#[allow(unsafe_code)]
pub fn time_copy(
    part: &GreenPartition,
    arch: Arch,
    bytes: usize,
    blocks: u32,
    cfg: TimingConfig,
) -> Result<Timing> {
    // cudarc's CUDA 13 bindings time events with cuEventElapsedTime_v2,
    // which drivers before 12.8 lack (calling it would panic in cudarc).
    require_driver("event timing", EVENT_TIMING_DRIVER)?;
    let tool = |e: crate::cuda::ToolError| GpuError::Library(e.to_string());
    let ptx = compile_to_ptx(SOURCE, "probe.cu", arch).map_err(tool)?;
    let (_, cubin) = assemble_cubin(&ptx, "probe.cu", arch).map_err(tool)?;
    let n = c_uint::try_from(bytes / 16)
        .map_err(|_| GpuError::Partition(format!("{bytes} bytes is too large a probe")))?;
    let mut p = Probe {
        module: std::ptr::null_mut(),
        buffers: [0; 2],
        events: [std::ptr::null_mut(); 2],
    };
    let mut function: sys::CUfunction = std::ptr::null_mut();
    let entry = CString::new(ENTRY).expect("no NUL in the entry name");
    // SAFETY: the green context is live (owned by `part`); every call
    // writes only its out-parameter, which `p` then owns; the cubin outlives
    // the load call; kernel parameters point at locals that outlive the
    // launches, whose completion is awaited before they go out of scope.
    unsafe {
        check("cuCtxSetCurrent", sys::cuCtxSetCurrent(part.context()))?;
        check(
            "cuModuleLoadData",
            sys::cuModuleLoadData(&mut p.module, cubin.as_ptr().cast()),
        )?;
        check(
            "cuModuleGetFunction",
            sys::cuModuleGetFunction(&mut function, p.module, entry.as_ptr()),
        )?;
        for b in &mut p.buffers {
            check("cuMemAlloc", sys::cuMemAlloc_v2(b, n as usize * 16))?;
        }
        for e in &mut p.events {
            check(
                "cuEventCreate",
                sys::cuEventCreate(e, sys::CUevent_flags::CU_EVENT_DEFAULT as c_uint),
            )?;
        }
        let (mut src, mut dst, mut len) = (p.buffers[0], p.buffers[1], n);
        let mut params: [*mut c_void; 3] = [
            (&mut src as *mut sys::CUdeviceptr).cast(),
            (&mut dst as *mut sys::CUdeviceptr).cast(),
            (&mut len as *mut c_uint).cast(),
        ];
        let stream = part.stream();
        let mut samples = Vec::with_capacity(cfg.repetitions as usize);
        for i in 0..cfg.warmup + cfg.repetitions {
            check("cuEventRecord", sys::cuEventRecord(p.events[0], stream))?;
            check(
                "cuLaunchKernel",
                sys::cuLaunchKernel(
                    function,
                    blocks,
                    1,
                    1,
                    THREADS,
                    1,
                    1,
                    0,
                    stream,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                ),
            )?;
            check("cuEventRecord", sys::cuEventRecord(p.events[1], stream))?;
            check("cuEventSynchronize", sys::cuEventSynchronize(p.events[1]))?;
            let mut ms: f32 = 0.0;
            check(
                "cuEventElapsedTime",
                sys::cuEventElapsedTime_v2(&mut ms, p.events[0], p.events[1]),
            )?;
            if i >= cfg.warmup {
                samples.push(f64::from(ms) * 1000.0);
            }
        }
        summarize(&samples).ok_or_else(|| GpuError::Driver {
            call: "cuEventElapsedTime",
            code: "no valid timings".to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::{locate_nvrtc, locate_ptxas};

    #[test]
    fn the_probe_kernel_builds_for_every_architecture() {
        // Needs NVRTC and ptxas (scripts/install-cuda-tools.sh), not a GPU.
        if locate_nvrtc().is_err() || locate_ptxas().is_err() {
            eprintln!("NVRTC / ptxas not installed: probe build not checked");
            return;
        }
        for arch in Arch::ALL {
            let ptx = compile_to_ptx(SOURCE, "probe.cu", arch).expect("compiles");
            assert!(ptx.contains(ENTRY));
            let (resources, cubin) = assemble_cubin(&ptx, "probe.cu", arch).expect("assembles");
            assert!(!cubin.is_empty());
            let entry = resources.iter().find(|r| r.name == ENTRY).expect("entry");
            assert!(entry.is_entry && entry.shared_bytes == 0);
        }
    }
}
