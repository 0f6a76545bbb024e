//! The kernel library: the CUDA C sources under `kernels/cuda/`, embedded in
//! the binary with `prelude.cuh` (the definitions the files share) prepended
//! to each, and their manifest (`manifest.toml`) — every entry's kind,
//! block size, parameters and a test launch with seeded inputs. The CUDA
//! backend compiles these with NVRTC; `tally kernels build` transforms and
//! assembles every entry; the GPU check runs each test launch.

use std::sync::OnceLock;

use serde::Deserialize;

use tally_gpu::KernelKind;
use tally_gpu::{GpuError, Result};

/// The complete text NVRTC compiles for library file `$file`:
/// `prelude.cuh` (typedefs, f16 conversions and the tensor-core helpers the
/// files share), then the file. NVRTC gets no include path, so the files
/// cannot `#include` the prelude; it is prepended here instead.
macro_rules! with_prelude {
    ($file:literal) => {
        concat!(
            include_str!("../cuda/prelude.cuh"),
            include_str!(concat!("../cuda/", $file))
        )
    };
}

/// The library's source files, by name, each as NVRTC compiles it: the
/// shared `prelude.cuh` followed by the file.
pub const SOURCES: [(&str, &str); 10] = [
    ("attention.cu", with_prelude!("attention.cu")),
    ("conv.cu", with_prelude!("conv.cu")),
    ("copy.cu", with_prelude!("copy.cu")),
    ("elementwise.cu", with_prelude!("elementwise.cu")),
    ("embedding.cu", with_prelude!("embedding.cu")),
    ("gemm.cu", with_prelude!("gemm.cu")),
    ("layer_norm.cu", with_prelude!("layer_norm.cu")),
    ("optimizer.cu", with_prelude!("optimizer.cu")),
    ("reduction.cu", with_prelude!("reduction.cu")),
    ("softmax.cu", with_prelude!("softmax.cu")),
];

const MANIFEST: &str = include_str!("../cuda/manifest.toml");

/// Element type of a buffer parameter (a buffer's, not a network tensor's:
/// that is `tally_profiler::model::Dtype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElemType {
    F16,
    Bf16,
    F32,
    I32,
}

impl ElemType {
    pub fn bytes(&self) -> usize {
        match self {
            ElemType::F16 | ElemType::Bf16 => 2,
            ElemType::F32 | ElemType::I32 => 4,
        }
    }
}

/// Whether the kernel reads or writes a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    In,
    Out,
    Inout,
}

/// One parameter of an entry, in order.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum Param {
    /// A device buffer.
    Ptr {
        name: String,
        dtype: ElemType,
        elems: u64,
        role: Role,
        /// Integer buffers: seeded values in `[0, max)` (indices).
        max: Option<u32>,
        /// Float buffers: seeded values in `[lo, hi)`, default `[-1, 1)`.
        lo: Option<f64>,
        hi: Option<f64>,
    },
    I32 {
        name: String,
        value: i64,
    },
    U32 {
        name: String,
        value: u64,
    },
    F32 {
        name: String,
        value: f64,
    },
}

impl Param {
    pub fn name(&self) -> &str {
        match self {
            Param::Ptr { name, .. }
            | Param::I32 { name, .. }
            | Param::U32 { name, .. }
            | Param::F32 { name, .. } => name,
        }
    }
}

/// One entry of the library.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LibraryKernel {
    pub entry: String,
    pub file: String,
    pub kind: KernelKind,
    /// Lowest compute capability, major * 10 + minor.
    pub min_arch: u32,
    pub block: [u32; 3],
    /// Grid of the test launch.
    pub grid: [u32; 3],
    pub params: Vec<Param>,
}

impl LibraryKernel {
    /// The source of this entry's file.
    pub fn source(&self) -> &'static str {
        source_of(&self.file).unwrap_or("")
    }

    /// Blocks of the test launch.
    pub fn test_blocks(&self) -> u64 {
        self.grid.iter().map(|&g| u64::from(g)).product()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    kernel: Vec<LibraryKernel>,
}

/// The source of library file `file`.
pub fn source_of(file: &str) -> Option<&'static str> {
    SOURCES.iter().find(|(f, _)| *f == file).map(|(_, s)| *s)
}

/// Every entry of the library, in manifest order.
pub fn kernels() -> Result<&'static [LibraryKernel]> {
    static PARSED: OnceLock<std::result::Result<Vec<LibraryKernel>, String>> = OnceLock::new();
    PARSED
        .get_or_init(|| parse_manifest(MANIFEST))
        .as_deref()
        .map_err(|m| GpuError::Library(m.clone()))
}

/// Parse and check a manifest: known files, non-empty launches, limits.
fn parse_manifest(text: &str) -> std::result::Result<Vec<LibraryKernel>, String> {
    let m: Manifest = toml::from_str(text).map_err(|e| format!("manifest.toml: {e}"))?;
    for k in &m.kernel {
        let bad = |what: String| Err(format!("manifest.toml, entry `{}`: {what}", k.entry));
        if source_of(&k.file).is_none() {
            return bad(format!("unknown file `{}`", k.file));
        }
        if k.block.contains(&0) || k.grid.contains(&0) {
            return bad("block and grid dimensions must be positive".into());
        }
        if k.block.iter().map(|&b| u64::from(b)).product::<u64>() > 1024 {
            return bad("more than 1024 threads per block".into());
        }
        if !k.source().contains(&format!("{}(", k.entry)) {
            return bad(format!("`{}` does not define it", k.file));
        }
    }
    let mut names: Vec<&str> = m.kernel.iter().map(|k| k.entry.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("manifest.toml: entry `{}` listed twice", w[0]));
    }
    Ok(m.kernel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_parses_and_covers_every_file_and_kind() {
        let ks = kernels().unwrap();
        for (file, _) in SOURCES {
            assert!(ks.iter().any(|k| k.file == file), "{file} has no entry");
        }
        for kind in KernelKind::ALL {
            assert!(ks.iter().any(|k| k.kind == kind), "no {kind:?} kernel");
        }
        // Every test launch has outputs to compare.
        for k in ks {
            assert!(
                k.params.iter().any(|p| matches!(
                    p,
                    Param::Ptr {
                        role: Role::Out | Role::Inout,
                        ..
                    }
                )),
                "{} writes nothing",
                k.entry
            );
        }
    }

    #[test]
    fn bad_manifests_are_refused_with_the_entry() {
        let unknown = "[[kernel]]\nentry = \"x\"\nfile = \"nope.cu\"\nkind = \"gemm\"\nmin_arch = 80\nblock = [1,1,1]\ngrid = [1,1,1]\nparams = []\n";
        let e = parse_manifest(unknown).unwrap_err();
        assert!(e.contains("`x`") && e.contains("nope.cu"), "{e}");
        let field = unknown.replace("min_arch", "min_archh");
        assert!(parse_manifest(&field).unwrap_err().contains("min_archh"));
    }
}
