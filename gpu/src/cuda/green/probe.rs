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
use crate::cuda::driver::check;
use crate::cuda::nvrtc::{compile_to_ptx, Arch};
use crate::cuda::ptxas::assemble_cubin;
use crate::cuda::timer::Launch;
use crate::error::{GpuError, Result};
use crate::kernel::{Dim3, KernelKind, KernelSpec, MemoryUse, Work};

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

/// A copy kernel loaded into one partition's green context, with its
/// buffers (timed by a `Timer`). Released in reverse order of creation.
#[derive(Debug)]
pub struct CopyProbe<'p> {
    part: &'p GreenPartition,
    module: sys::CUmodule,
    function: sys::CUfunction,
    buffers: [sys::CUdeviceptr; 2],
    elems: c_uint,
    blocks: u32,
}

impl Drop for CopyProbe<'_> {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: each handle is null/zero or was created by `new` and is
        // owned only here; released in reverse order of creation, in the
        // partition's context.
        unsafe {
            let _ = sys::cuCtxSetCurrent(self.part.context());
            let _ = sys::cuStreamSynchronize(self.part.stream());
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

impl<'p> CopyProbe<'p> {
    /// Load the copy of `bytes` (rounded down to 16-byte elements) into
    /// `part`, launched with `blocks` blocks (enough to fill the device).
    #[allow(unsafe_code)]
    pub fn new(part: &'p GreenPartition, arch: Arch, bytes: usize, blocks: u32) -> Result<Self> {
        crate::cuda::driver::require_cubin_driver()?;
        let tool = |e: crate::cuda::ToolError| GpuError::Library(e.to_string());
        let ptx = compile_to_ptx(SOURCE, "probe.cu", arch).map_err(tool)?;
        let (_, cubin) = assemble_cubin(&ptx, "probe.cu", arch).map_err(tool)?;
        let elems = c_uint::try_from(bytes / 16)
            .map_err(|_| GpuError::Partition(format!("{bytes} bytes is too large a probe")))?;
        let mut p = CopyProbe {
            part,
            module: std::ptr::null_mut(),
            function: std::ptr::null_mut(),
            buffers: [0; 2],
            elems,
            blocks,
        };
        let entry = CString::new(ENTRY).expect("no NUL in the entry name");
        // SAFETY: the green context is live (borrowed from `part`); every
        // call writes only its out-parameter, which `p` then owns (so an
        // early return releases it); the cubin outlives the load call.
        unsafe {
            check("cuCtxSetCurrent", sys::cuCtxSetCurrent(part.context()))?;
            check(
                "cuModuleLoadData",
                sys::cuModuleLoadData(&mut p.module, cubin.as_ptr().cast()),
            )?;
            check(
                "cuModuleGetFunction",
                sys::cuModuleGetFunction(&mut p.function, p.module, entry.as_ptr()),
            )?;
            for b in &mut p.buffers {
                check("cuMemAlloc", sys::cuMemAlloc_v2(b, elems as usize * 16))?;
            }
        }
        Ok(p)
    }

    /// Bytes moved per launch (read and written).
    pub fn bytes_moved(&self) -> f64 {
        2.0 * 16.0 * f64::from(self.elems)
    }
}

impl Launch for CopyProbe<'_> {
    fn context(&self) -> sys::CUcontext {
        self.part.context()
    }

    fn stream(&self) -> sys::CUstream {
        self.part.stream()
    }

    #[allow(unsafe_code)]
    fn enqueue(&self) -> Result<()> {
        let (mut src, mut dst, mut len) = (self.buffers[0], self.buffers[1], self.elems);
        let mut params: [*mut c_void; 3] = [
            (&mut src as *mut sys::CUdeviceptr).cast(),
            (&mut dst as *mut sys::CUdeviceptr).cast(),
            (&mut len as *mut c_uint).cast(),
        ];
        // SAFETY: the driver copies the parameter values at launch time, so
        // pointers to these locals need only live through the call; the
        // buffers hold `elems` float4s each.
        unsafe {
            check(
                "cuLaunchKernel",
                sys::cuLaunchKernel(
                    self.function,
                    self.blocks,
                    1,
                    1,
                    THREADS,
                    1,
                    1,
                    0,
                    self.part.stream(),
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                ),
            )
        }
    }
}

/// The probe as the simulator sees it, so a real pair measurement can be
/// printed beside the simulated one: a streaming copy, each byte read once
/// and written once, one float4 load in flight per thread.
pub fn probe_kernel_spec(bytes: usize, blocks: u32) -> KernelSpec {
    let moved = 2.0 * (bytes / 16 * 16) as f64;
    KernelSpec {
        name: ENTRY.to_string(),
        kind: KernelKind::Copy,
        grid: Dim3::linear(blocks),
        block: Dim3::linear(THREADS),
        registers_per_thread: PROBE_REGISTERS,
        shared_mem_static: 0,
        shared_mem_dynamic: 0,
        work: Work {
            // Load, store, index update, compare, branch: about 8 warp
            // instructions per 32 float4 elements.
            other_warp_insts: (bytes / 16) as f64 / 32.0 * 8.0,
            ..Work::default()
        },
        memory: MemoryUse {
            l1_bytes: moved,
            l2_bytes: moved,
            dram_read_bytes: moved / 2.0,
            dram_write_bytes: moved / 2.0,
            l2_working_set: moved,
            inflight_bytes_per_warp: 16.0 * 32.0,
        },
    }
}

/// Registers per thread of the probe: an upper bound of what ptxas gives
/// (18 with CUDA 13 for sm_90; checked for every architecture in the tests).
/// Occupancy is limited by threads either way (8 blocks of 256 per SM).
const PROBE_REGISTERS: u32 = 24;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::{locate_nvrtc, locate_ptxas};
    use crate::{Backend, GpuSpec, Partition, SimBackend};

    #[test]
    fn the_simulated_probe_is_a_dram_stream_that_slows_beside_itself() {
        let h100 = GpuSpec::preset("h100-sxm").expect("preset");
        let k = probe_kernel_spec(256 << 20, 132 * 8);
        k.validate().expect("a launchable spec");
        let sim = SimBackend::new(h100, 0, 0.0);
        let (pa, pb) = (Partition::first(64), Partition::first(64).after(64));
        let solo = sim.standalone(&k, pa).expect("runs").duration_us;
        let (a, b) = sim.co_run(&k, pa, &k, pb).expect("runs");
        // Two DRAM streams on half the GPU each share the DRAM bandwidth.
        assert!(a.duration_us > solo * 1.2, "{} vs {solo}", a.duration_us);
        assert!((a.duration_us - b.duration_us).abs() < 1e-6 * solo);
    }

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
            assert!(entry.registers <= PROBE_REGISTERS, "{}", entry.registers);
        }
    }
}
