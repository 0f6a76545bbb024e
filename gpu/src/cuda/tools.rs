//! Where the CUDA compiler tools are. `scripts/install-cuda-tools.sh`
//! installs NVRTC and ptxas from their PyPI packages into
//! `target/cuda-tools`; an environment variable overrides the location
//! (unless it names nothing: then it is stale and the rest is searched), a
//! CUDA toolkit install (`$CUDA_HOME`, `$CUDA_PATH`, `/usr/local/cuda`)
//! comes next, and `PATH` / the loader path is the last resort.

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

/// A CUDA toolkit's own install: `$CUDA_HOME`, `$CUDA_PATH`, then
/// `/usr/local/cuda` (where NVIDIA's installers and containers put it),
/// each with `rel` below it.
fn toolkit_candidates(rel: &str) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|v| std::env::var_os(v).filter(|p| !p.is_empty()))
        .map(PathBuf::from)
        .collect();
    roots.push(PathBuf::from("/usr/local/cuda"));
    roots.into_iter().map(|r| r.join(rel)).collect()
}

/// Where one tool is looked for, in order.
#[derive(Debug)]
struct Search<'a> {
    tool: &'static str,
    var: &'static str,
    /// The variable's value, when set and not empty.
    from_var: Option<PathBuf>,
    /// The installed tools' folder, then a toolkit install.
    candidates: Vec<PathBuf>,
    /// `PATH`'s folders and the file name to find in them.
    on_path: Option<(Vec<PathBuf>, &'a str)>,
}

impl Search<'_> {
    /// The variable wins when it names a file. A variable naming nothing
    /// is stale (an `env.sh` carried from another machine or checkout
    /// holds absolute paths), so the other places are searched instead;
    /// when none has the tool the error says the variable was stale.
    fn find(&self) -> Result<PathBuf, ToolError> {
        if let Some(p) = self.from_var.as_ref().filter(|p| p.is_file()) {
            return Ok(p.clone());
        }
        if let Some(found) = self.candidates.iter().find(|p| p.is_file()) {
            return Ok(found.clone());
        }
        if let Some((dirs, name)) = &self.on_path {
            if let Some(found) = dirs.iter().map(|d| d.join(name)).find(|p| p.is_file()) {
                return Ok(found);
            }
        }
        let stale = self
            .from_var
            .as_ref()
            .map(|p| format!("{}={} does not exist (stale?); ", self.var, p.display()))
            .unwrap_or_default();
        Err(ToolError::NotFound {
            tool: self.tool,
            var: self.var,
            tried: format!(
                "{stale}looked in {}{}",
                self.candidates
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                if self.on_path.is_some() {
                    " and PATH"
                } else {
                    ""
                }
            ),
        })
    }
}

fn locate(
    tool: &'static str,
    var: &'static str,
    rels: &[&str],
    on_path: Option<&str>,
) -> Result<PathBuf, ToolError> {
    let (tools_rel, toolkit_rels) = rels.split_first().expect("a tool has a location");
    let mut candidates = tool_candidates(tools_rel);
    for rel in toolkit_rels {
        candidates.extend(toolkit_candidates(rel));
    }
    Search {
        tool,
        var,
        from_var: std::env::var_os(var)
            .filter(|p| !p.is_empty())
            .map(PathBuf::from),
        candidates,
        on_path: on_path.map(|name| {
            let dirs = std::env::var_os("PATH")
                .map(|p| std::env::split_paths(&p).collect())
                .unwrap_or_default();
            (dirs, name)
        }),
    }
    .find()
}

/// The ptxas binary: `$TALLY_PTXAS`, the installed tools, a CUDA
/// toolkit's `bin/ptxas`, or `PATH`.
pub fn locate_ptxas() -> Result<PathBuf, ToolError> {
    // The same relative path in the installed tools and in a toolkit.
    locate(
        "ptxas",
        "TALLY_PTXAS",
        &["bin/ptxas", "bin/ptxas"],
        Some("ptxas"),
    )
}

/// The NVRTC library file: `$TALLY_NVRTC_LIB`, the installed tools, or a
/// CUDA 13 toolkit's `lib64` (`targets/x86_64-linux/lib` in the same
/// tree). When none exists the loader's own search (LD_LIBRARY_PATH) is
/// the caller's last resort.
pub fn locate_nvrtc() -> Result<PathBuf, ToolError> {
    locate(
        "NVRTC",
        "TALLY_NVRTC_LIB",
        &[
            "lib/libnvrtc.so.13",
            "lib64/libnvrtc.so.13",
            "targets/x86_64-linux/lib/libnvrtc.so.13",
        ],
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(from_var: Option<PathBuf>, candidates: Vec<PathBuf>) -> Search<'static> {
        Search {
            tool: "ptxas",
            var: "TALLY_PTXAS",
            from_var,
            candidates,
            on_path: None,
        }
    }

    #[test]
    fn a_variable_naming_a_file_wins() {
        let dir = tempfile::tempdir().unwrap();
        let (mine, other) = (dir.path().join("mine"), dir.path().join("other"));
        std::fs::write(&mine, "").unwrap();
        std::fs::write(&other, "").unwrap();
        assert_eq!(
            search(Some(mine.clone()), vec![other]).find().unwrap(),
            mine
        );
    }

    #[test]
    fn a_stale_variable_falls_back_to_the_tools_found_elsewhere() {
        // An env.sh carried from another checkout: its absolute path is
        // gone, the tools are where this checkout (or a toolkit) has them.
        let dir = tempfile::tempdir().unwrap();
        let here = dir.path().join("cuda-tools/bin/ptxas");
        std::fs::create_dir_all(here.parent().unwrap()).unwrap();
        std::fs::write(&here, "").unwrap();
        let stale = PathBuf::from("/elsewhere/target/cuda-tools/bin/ptxas");
        let missing = dir.path().join("missing");
        assert_eq!(
            search(Some(stale.clone()), vec![missing, here.clone()])
                .find()
                .unwrap(),
            here
        );
    }

    #[test]
    fn a_stale_variable_and_no_tool_is_said_to_be_stale() {
        let stale = PathBuf::from("/elsewhere/ptxas");
        let err = search(Some(stale), vec![PathBuf::from("/nowhere/ptxas")])
            .find()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("TALLY_PTXAS=/elsewhere/ptxas does not exist (stale?)"),
            "{err}"
        );
        assert!(err.contains("/nowhere/ptxas"), "{err}");
    }

    #[test]
    fn path_is_the_last_resort() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ptxas"), "").unwrap();
        let s = Search {
            on_path: Some((
                vec![PathBuf::from("/nowhere"), dir.path().to_path_buf()],
                "ptxas",
            )),
            ..search(None, vec![PathBuf::from("/nowhere/ptxas")])
        };
        assert_eq!(s.find().unwrap(), dir.path().join("ptxas"));
    }
}
