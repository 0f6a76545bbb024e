//! The kernel library and the fill kernels on a device: every file compiled
//! with NVRTC and assembled with ptxas for the device's architecture, and
//! loaded as a cubin with `cuLibraryLoadData`. A library is
//! context-independent (CUDA 12.0+): its kernels (`CUkernel`) launch in
//! whichever context is current, so one load serves the primary context and
//! every green-context partition. ptxas's resource report gives each
//! entry's real registers and shared memory (what the launch counters and
//! the occupancy calculation use).

use std::collections::HashMap;
use std::ffi::CString;

use cudarc::driver::sys;

use super::fill;
use crate::cuda::driver::check;
use crate::cuda::nvrtc::{compile_to_ptx, Arch};
use crate::cuda::ptxas::{assemble_cubin, EntryResources};
use crate::error::{GpuError, Result};
use crate::library;

/// One loaded entry.
#[derive(Debug, Clone)]
pub struct LoadedKernel {
    pub kernel: sys::CUkernel,
    pub resources: EntryResources,
}

/// Every library file and the fill kernels, loaded. Unloaded on drop.
#[derive(Debug)]
pub struct LoadedLibrary {
    libraries: Vec<sys::CUlibrary>,
    kernels: HashMap<String, LoadedKernel>,
}

impl Drop for LoadedLibrary {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        for &l in &self.libraries {
            // SAFETY: loaded by `load`, owned only here, unloaded once;
            // the backend drains every stream before it drops the library.
            unsafe {
                let _ = sys::cuLibraryUnload(l);
            }
        }
    }
}

impl LoadedLibrary {
    /// Build and load everything for `arch` (the driver initialised).
    #[allow(unsafe_code)]
    pub fn load(arch: Arch) -> Result<LoadedLibrary> {
        let mut out = LoadedLibrary {
            libraries: Vec::new(),
            kernels: HashMap::new(),
        };
        let files = library::SOURCES
            .iter()
            .copied()
            .chain([(fill::FILE, fill::SOURCE)]);
        for (file, source) in files {
            let tool = |e: crate::cuda::ToolError| GpuError::Library(format!("{file}: {e}"));
            let ptx = compile_to_ptx(source, file, arch).map_err(tool)?;
            let (resources, cubin) = assemble_cubin(&ptx, file, arch).map_err(tool)?;
            let mut lib: sys::CUlibrary = std::ptr::null_mut();
            // SAFETY: the cubin outlives the call (the driver copies it); no
            // JIT or library options (null arrays of length 0); the handle
            // is owned by `out` from here on, so an error below unloads it.
            unsafe {
                check(
                    "cuLibraryLoadData",
                    sys::cuLibraryLoadData(
                        &mut lib,
                        cubin.as_ptr().cast(),
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        0,
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        0,
                    ),
                )?;
            }
            out.libraries.push(lib);
            for r in resources.into_iter().filter(|r| r.is_entry) {
                let name = CString::new(r.name.as_str())
                    .map_err(|_| GpuError::Library(format!("{file}: entry name with a NUL")))?;
                let mut kernel: sys::CUkernel = std::ptr::null_mut();
                // SAFETY: `lib` is live; writes only `kernel`.
                unsafe {
                    check(
                        "cuLibraryGetKernel",
                        sys::cuLibraryGetKernel(&mut kernel, lib, name.as_ptr()),
                    )?;
                }
                out.kernels.insert(
                    r.name.clone(),
                    LoadedKernel {
                        kernel,
                        resources: r,
                    },
                );
            }
        }
        Ok(out)
    }

    /// Entry `name`.
    pub fn kernel(&self, name: &str) -> Result<&LoadedKernel> {
        self.kernels
            .get(name)
            .ok_or_else(|| GpuError::Library(format!("no loaded entry `{name}`")))
    }
}
