//! `resources.json`, the record of a kernel-library build, owned here
//! (writer and reader): `tally kernels build --out DIR` writes each
//! module's PTX and `DIR/resources.json`, ptxas's registers and shared
//! memory for every library entry and variant. On the CUDA backend a kernel
//! runs as its stand-in (`crate::standin`, the one kind -> entry mapping),
//! so `tally profile --kernel-resources DIR/resources.json` gives each
//! kernel its stand-in entry's block size, registers per thread and static
//! shared memory, with the grid resized to keep the same number of threads;
//! the work and bytes stay the kernel's. The simulator then sees the
//! occupancy the real kernel has.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use tally_gpu::cuda::Arch;
use tally_gpu::{Dim3, KernelSpec};

use crate::build::LibraryBuild;
use crate::library;
use crate::standin::stand_in;

/// The file name a build directory holds its resources in.
pub const RESOURCES_FILE: &str = "resources.json";

/// A resources file (or a build directory) that cannot be read or written.
#[derive(Debug, thiserror::Error)]
#[error("`{path}`: {problem}")]
pub struct ResourcesError {
    pub path: PathBuf,
    pub problem: String,
}

/// Write a build's modules (`<file>.<sm>.ptx`) and `resources.json` into
/// `dir`, each through a temporary file renamed into place, resources
/// last; returns the paths written.
pub fn write_build(
    dir: &Path,
    arch: Arch,
    built: &LibraryBuild,
) -> Result<Vec<PathBuf>, ResourcesError> {
    let fail = |path: &Path, e: &dyn std::fmt::Display| ResourcesError {
        path: path.to_path_buf(),
        problem: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(|e| fail(dir, &e))?;
    let mut written = Vec::new();
    let mut put = |name: String, bytes: &[u8]| -> Result<(), ResourcesError> {
        let path = dir.join(name);
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| fail(&path, &e))?;
        tmp.write_all(bytes).map_err(|e| fail(&path, &e))?;
        tmp.persist(&path).map_err(|e| fail(&path, &e.error))?;
        written.push(path);
        Ok(())
    };
    for m in &built.modules {
        let stem = m.file.trim_end_matches(".cu");
        put(format!("{stem}.{}.ptx", arch.sm()), m.ptx.as_bytes())?;
    }
    let json = serde_json::to_string_pretty(&built.rows)
        .map_err(|e| fail(&dir.join(RESOURCES_FILE), &e))?;
    put(RESOURCES_FILE.to_string(), json.as_bytes())?;
    Ok(written)
}

/// One row of resources.json (only what is used here).
#[derive(Debug, Deserialize)]
struct Row {
    entry: String,
    variant: String,
    status: String,
    registers: Option<u32>,
    shared_bytes: Option<u32>,
}

/// What a library entry launches with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Launch {
    block: Dim3,
    registers: u32,
    shared_bytes: u32,
}

/// Resources by library entry, for the original (untransformed) kernels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelResources {
    by_entry: HashMap<String, Launch>,
}

impl KernelResources {
    /// Read `tally kernels build`'s resources.json.
    pub fn read(path: &Path) -> Result<KernelResources, ResourcesError> {
        let bad = |problem: String| ResourcesError {
            path: path.to_path_buf(),
            problem,
        };
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let rows: Vec<Row> = serde_json::from_str(&text).map_err(|e| {
            bad(format!(
                "{e} (expected the resources.json of `tally kernels build --out DIR`)"
            ))
        })?;
        let kernels = library::kernels().map_err(|e| bad(e.to_string()))?;
        let mut by_entry = HashMap::new();
        for (i, r) in rows.iter().enumerate() {
            if r.variant != "original" || r.status != "ok" {
                continue;
            }
            let k = kernels.iter().find(|k| k.entry == r.entry).ok_or_else(|| {
                bad(format!(
                    "row {}: unknown library entry `{}`",
                    i + 1,
                    r.entry
                ))
            })?;
            let (Some(registers), Some(shared_bytes)) = (r.registers, r.shared_bytes) else {
                return Err(bad(format!(
                    "row {}: entry `{}` has no registers / shared_bytes",
                    i + 1,
                    r.entry
                )));
            };
            let [x, y, z] = k.block;
            by_entry.insert(
                r.entry.clone(),
                Launch {
                    block: Dim3 { x, y, z },
                    registers,
                    shared_bytes,
                },
            );
        }
        Ok(KernelResources { by_entry })
    }

    /// Give `k` the launch of its stand-in's library entry; false
    /// (unchanged) if it has no stand-in or the file holds no resources for
    /// that entry.
    pub fn apply(&self, k: &mut KernelSpec) -> bool {
        let Ok(standin) = stand_in(k) else {
            return false;
        };
        let Some(l) = self.by_entry.get(&standin.launch.entry) else {
            return false;
        };
        let threads = k.grid.count() * k.block.count();
        let per_block = l.block.count().max(1);
        k.block = l.block;
        k.grid = Dim3 {
            x: u32::try_from(threads.div_ceil(per_block).max(1)).unwrap_or(u32::MAX),
            y: 1,
            z: 1,
        };
        k.registers_per_thread = l.registers;
        k.shared_mem_static = l.shared_bytes;
        k.shared_mem_dynamic = 0;
        true
    }
}
