//! The kernel library and the fill kernels on a device: each file compiled
//! with NVRTC and assembled with ptxas for the device's architecture the
//! first time one of its entries is asked for (a campaign needs a few of
//! the files, the `--counters ncu` child one), and loaded as a cubin with
//! `cuLibraryLoadData`. A library is
//! context-independent (CUDA 12.0+): its kernels (`CUkernel`) launch in
//! whichever context is current, so one load serves the primary context and
//! every green-context partition. ptxas's resource report gives each
//! entry's real registers and shared memory (what the launch counters and
//! the occupancy calculation use).
//!
//! A library made `with_variants` loads each library file as its
//! transformed module (`build::build_file`: the original entries and their
//! sliced, PTB and preemptive-PTB variants, those the transformer refused
//! left out and named when asked for), what the real-GPU engine launches.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::CString;

use cudarc::driver::sys;

use super::fill;
use crate::library;
use tally_gpu::cuda::driver::check;
use tally_gpu::cuda::nvrtc::{compile_to_ptx, Arch};
use tally_gpu::cuda::ptxas::{assemble_cubin, EntryResources};
use tally_gpu::{GpuError, Result};

/// One loaded entry.
#[derive(Debug, Clone)]
pub struct LoadedKernel {
    pub kernel: sys::CUkernel,
    pub resources: EntryResources,
}

/// The library files and fill kernels loaded so far. Unloaded on drop.
#[derive(Debug)]
pub struct LoadedLibrary {
    arch: Arch,
    /// Library files loaded as their transformed modules.
    variants: bool,
    libraries: RefCell<Vec<sys::CUlibrary>>,
    kernels: RefCell<HashMap<String, LoadedKernel>>,
}

impl Drop for LoadedLibrary {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        for &l in self.libraries.borrow().iter() {
            // SAFETY: loaded by `load_file`, owned only here, unloaded once;
            // the backend drains every stream before it drops the library.
            unsafe {
                let _ = sys::cuLibraryUnload(l);
            }
        }
    }
}

impl LoadedLibrary {
    /// Nothing loaded yet; files load for `arch` on first use.
    pub fn new(arch: Arch) -> LoadedLibrary {
        LoadedLibrary {
            arch,
            variants: false,
            libraries: RefCell::new(Vec::new()),
            kernels: RefCell::new(HashMap::new()),
        }
    }

    /// Nothing loaded yet; library files load for `arch` as their
    /// transformed modules, so every variant's entry can be asked for
    /// (`launch_plan::Entry::name`).
    pub fn with_variants(arch: Arch) -> LoadedLibrary {
        let mut library = LoadedLibrary::new(arch);
        library.variants = true;
        library
    }

    /// Entry `name` (a library entry, with `with_variants` a variant's
    /// entry too, or a fill kernel), loading its file if it is not loaded
    /// yet (the driver initialised).
    pub fn kernel(&self, name: &str) -> Result<LoadedKernel> {
        if let Some(k) = self.kernels.borrow().get(name) {
            return Ok(k.clone());
        }
        let (file, source) = file_of(original_entry(name))?;
        let refusals = self.load_file(file, source)?;
        self.kernels.borrow().get(name).cloned().ok_or_else(|| {
            GpuError::Library(
                match refusals.iter().find(|r| r.contains(original_entry(name))) {
                    Some(why) => format!("`{name}` is not in the transformed `{file}`: {why}"),
                    None => format!("`{file}` has no entry `{name}` after assembly"),
                },
            )
        })
    }

    /// Load `file`; returns the transformer's refusals (with variants).
    #[allow(unsafe_code)]
    fn load_file(&self, file: &str, source: &str) -> Result<Vec<String>> {
        let tool = |e: tally_gpu::cuda::ToolError| GpuError::Library(format!("{file}: {e}"));
        let (resources, cubin, refusals) = if self.variants && file != fill::FILE {
            let built = crate::build::build_file(file, source, self.arch)
                .map_err(|e| GpuError::Library(format!("{file}: {e}")))?;
            let refusals = built.refusals.iter().map(|r| r.to_string()).collect();
            (built.resources, built.cubin, refusals)
        } else {
            let ptx = compile_to_ptx(source, file, self.arch).map_err(tool)?;
            let (resources, cubin) = assemble_cubin(&ptx, file, self.arch).map_err(tool)?;
            (resources, cubin, Vec::new())
        };
        let mut lib: sys::CUlibrary = std::ptr::null_mut();
        // SAFETY: the cubin outlives the call (the driver copies it); no JIT
        // or library options (null arrays of length 0); the handle is owned
        // by `self` from the next statement on, so it is unloaded on drop.
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
        self.libraries.borrow_mut().push(lib);
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
            self.kernels.borrow_mut().insert(
                r.name.clone(),
                LoadedKernel {
                    kernel,
                    resources: r,
                },
            );
        }
        Ok(refusals)
    }
}

/// The library entry a variant's entry was made from (`name` itself for
/// an original entry).
fn original_entry(name: &str) -> &str {
    use crate::ptx::transform::{preempt, ptb, sliced};
    [sliced::SUFFIX, ptb::SUFFIX, preempt::SUFFIX]
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(name)
}

/// The file (name and source) that defines entry `name`.
pub fn file_of(name: &str) -> Result<(&'static str, &'static str)> {
    if fill::ENTRIES.contains(&name) {
        return Ok((fill::FILE, fill::SOURCE));
    }
    let entry = library::kernels()?
        .iter()
        .find(|k| k.entry == name)
        .ok_or_else(|| GpuError::Library(format!("the kernel library has no entry `{name}`")))?;
    // The manifest names only files of `SOURCES` (checked when it is read).
    library::SOURCES
        .iter()
        .copied()
        .find(|(f, _)| *f == entry.file)
        .ok_or_else(|| GpuError::Library(format!("`{name}`: unknown file `{}`", entry.file)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_found_in_its_file() {
        for k in library::kernels().expect("manifest") {
            let (file, source) = file_of(&k.entry).expect("found");
            assert_eq!(file, k.file);
            assert!(source.contains(&format!("{}(", k.entry)));
        }
        for entry in fill::ENTRIES {
            assert_eq!(file_of(entry).expect("found").0, fill::FILE);
        }
        let variant = crate::launch_plan::Entry::Preempt.name("gemm_f32");
        assert_eq!(original_entry(&variant), "gemm_f32");
        assert_eq!(original_entry("gemm_f32"), "gemm_f32");
        let e = file_of("nope").unwrap_err();
        assert!(e.to_string().contains("no entry `nope`"), "{e}");
    }
}
