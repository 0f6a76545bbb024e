//! Where the CUDA compiler tools are. `scripts/install-cuda-tools.sh`
//! installs NVRTC and ptxas from their PyPI packages into
//! `target/cuda-tools`; an environment variable overrides the location,
//! and a system install on `PATH` / the loader path is the last resort.

use std::path::{Path, PathBuf};

/// The tools' folder below the build output, relative to the workspace.
pub const TOOLS_DIR: &str = "target/cuda-tools";
/// Inside it, where the PyPI packages put the CUDA 13 tree.
const CUDA_TREE: &str = "py/nvidia/cu13";
/// The CUDA major release of those tools (`scripts/install-cuda-tools.sh`
/// pins 13.5): what a driver must support to load the cubins they make.
pub const TOOLKIT_MAJOR: u32 = 13;

/// Why a tool could not be found or run.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error(
        "{tool} not found ({tried}): run scripts/install-cuda-tools.sh, or set {var} to its path"
    )]
    NotFound {
        tool: &'static str,
        var: &'static str,
        tried: String,
    },
    #[error("failed to run {tool} `{path}`: {source}")]
    Spawn {
        tool: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("NVRTC could not compile `{name}` for {arch}:\n{log}")]
    Compile {
        name: String,
        arch: String,
        log: String,
    },
    #[error("NVRTC failed on `{name}`: {message}")]
    Nvrtc { name: String, message: String },
    #[error("ptxas rejected `{name}` for {arch}:\n{log}")]
    Assemble {
        name: String,
        arch: String,
        log: String,
    },
    #[error("unexpected ptxas output, line {line}: `{text}`")]
    PtxasOutput { line: usize, text: String },
    #[error("failed to write `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Candidate locations of `rel` inside the tools folder: next to the
/// running executable's build folder (`target/release/tally` and test
/// binaries in `target/release/deps` both find `target/cuda-tools`), then
/// relative to the current directory (the workspace root).
fn tool_candidates(rel: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe.ancestors().skip(1).take(4) {
            out.push(dir.join("cuda-tools").join(CUDA_TREE).join(rel));
        }
    }
    out.push(Path::new(TOOLS_DIR).join(CUDA_TREE).join(rel));
    out
}

fn locate(
    tool: &'static str,
    var: &'static str,
    rel: &str,
    on_path: Option<&str>,
) -> Result<PathBuf, ToolError> {
    if let Some(p) = std::env::var_os(var).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(ToolError::NotFound {
                tool,
                var,
                tried: format!("{var}={} does not exist", p.display()),
            })
        };
    }
    let candidates = tool_candidates(rel);
    if let Some(found) = candidates.iter().find(|p| p.is_file()) {
        return Ok(found.clone());
    }
    if let Some(name) = on_path {
        if let Some(paths) = std::env::var_os("PATH") {
            if let Some(found) = std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
            {
                return Ok(found);
            }
        }
    }
    Err(ToolError::NotFound {
        tool,
        var,
        tried: format!(
            "looked in {}{}",
            candidates
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            if on_path.is_some() { " and PATH" } else { "" }
        ),
    })
}

/// The ptxas binary: `$TALLY_PTXAS`, the installed tools, or `PATH`.
pub fn locate_ptxas() -> Result<PathBuf, ToolError> {
    locate("ptxas", "TALLY_PTXAS", "bin/ptxas", Some("ptxas"))
}

/// The NVRTC library file: `$TALLY_NVRTC_LIB` or the installed tools.
/// When neither exists the loader's own search (LD_LIBRARY_PATH, a system
/// CUDA) is the caller's last resort.
pub fn locate_nvrtc() -> Result<PathBuf, ToolError> {
    locate("NVRTC", "TALLY_NVRTC_LIB", "lib/libnvrtc.so.13", None)
}
