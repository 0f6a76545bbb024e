//! NVRTC: CUDA C to PTX at run time, through cudarc with dynamic loading,
//! so the one binary runs (and reports a clear error) without CUDA.
//!
//! The library is found by `tools::locate_nvrtc` and loaded by its full
//! path before cudarc looks for it by name: the dynamic loader then hands
//! cudarc the library already loaded (same soname), so neither
//! `LD_LIBRARY_PATH` nor a system CUDA is needed.

use std::sync::OnceLock;

use super::tools::{locate_nvrtc, ToolError};

/// A target architecture (the virtual `compute_XY` for NVRTC, the real
/// `sm_XY` for ptxas).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arch {
    Sm80,
    Sm86,
    Sm89,
    Sm90,
}

impl Arch {
    pub const ALL: [Arch; 4] = [Arch::Sm80, Arch::Sm86, Arch::Sm89, Arch::Sm90];

    /// `sm_80`, ...
    pub fn sm(&self) -> &'static str {
        match self {
            Arch::Sm80 => "sm_80",
            Arch::Sm86 => "sm_86",
            Arch::Sm89 => "sm_89",
            Arch::Sm90 => "sm_90",
        }
    }

    /// `compute_80`, ...
    pub fn compute(&self) -> &'static str {
        match self {
            Arch::Sm80 => "compute_80",
            Arch::Sm86 => "compute_86",
            Arch::Sm89 => "compute_89",
            Arch::Sm90 => "compute_90",
        }
    }

    /// Compute capability as a number: 80, 86, 89, 90.
    pub fn number(&self) -> u32 {
        match self {
            Arch::Sm80 => 80,
            Arch::Sm86 => 86,
            Arch::Sm89 => 89,
            Arch::Sm90 => 90,
        }
    }

    /// From `sm_90`, `compute_90` or `90`.
    pub fn parse(s: &str) -> Option<Arch> {
        let digits = s
            .strip_prefix("sm_")
            .or_else(|| s.strip_prefix("compute_"))
            .unwrap_or(s);
        Arch::ALL
            .into_iter()
            .find(|a| a.number().to_string() == digits)
    }

    /// The architecture of compute capability `major.minor`, if supported.
    pub fn from_capability(major: u32, minor: u32) -> Option<Arch> {
        Arch::ALL
            .into_iter()
            .find(|a| a.number() == major * 10 + minor)
    }
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.sm())
    }
}

/// The options every library kernel is compiled with; the golden PTX
/// fixtures were produced with the same ones.
pub const NVRTC_OPTIONS: [&str; 1] = ["-std=c++17"];

/// Compile CUDA C `source` (named `name` in messages) to PTX for `arch`.
pub fn compile_to_ptx(source: &str, name: &str, arch: Arch) -> Result<String, ToolError> {
    ensure_loaded()?;
    if source.contains('\0') {
        return Err(ToolError::Nvrtc {
            name: name.to_string(),
            message: "the source contains a NUL byte".into(),
        });
    }
    let opts = cudarc::nvrtc::CompileOptions {
        arch: Some(arch.compute()),
        name: Some(name.to_string()),
        options: NVRTC_OPTIONS.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    match cudarc::nvrtc::compile_ptx_with_opts(source, opts) {
        Ok(ptx) => Ok(ptx.to_src()),
        Err(cudarc::nvrtc::CompileError::CompileError { log, .. }) => Err(ToolError::Compile {
            name: name.to_string(),
            arch: arch.compute().to_string(),
            log: log.to_string_lossy().into_owned(),
        }),
        Err(other) => Err(ToolError::Nvrtc {
            name: name.to_string(),
            message: format!("{other:?}"),
        }),
    }
}

/// Load NVRTC once; an error says how to install it.
fn ensure_loaded() -> Result<(), ToolError> {
    static LOADED: OnceLock<Result<(), String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let located = locate_nvrtc();
            if let Ok(path) = &located {
                preload(path)?;
            }
            if nvrtc_present() {
                Ok(())
            } else {
                Err(match located {
                    Err(e) => e.to_string(),
                    Ok(path) => format!("NVRTC at `{}` could not be loaded", path.display()),
                })
            }
        })
        .clone()
        .map_err(|message| ToolError::Nvrtc {
            name: "libnvrtc".into(),
            message,
        })
}

// Loading a shared library runs its initialisers; libnvrtc's are trusted
// the same way cudarc trusts them when it loads the library itself.
#[allow(unsafe_code)]
fn preload(path: &std::path::Path) -> Result<(), String> {
    // SAFETY: libnvrtc is NVIDIA's library with no load-time side effects
    // beyond its own initialisation; it stays loaded for the process.
    let lib = unsafe { libloading::Library::new(path) }
        .map_err(|e| format!("failed to load `{}`: {e}", path.display()))?;
    std::mem::forget(lib);
    Ok(())
}

#[allow(unsafe_code)]
fn nvrtc_present() -> bool {
    // SAFETY: only probes whether cudarc can open the library by name.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_names_round_trip() {
        for a in Arch::ALL {
            assert_eq!(Arch::parse(a.sm()), Some(a));
            assert_eq!(Arch::parse(a.compute()), Some(a));
            assert_eq!(Arch::parse(&a.number().to_string()), Some(a));
        }
        assert_eq!(Arch::parse("sm_75"), None);
        assert_eq!(Arch::from_capability(9, 0), Some(Arch::Sm90));
    }
}
