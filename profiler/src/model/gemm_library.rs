//! `GemmLibrary`: which kernels run a model's matrix products — cuBLAS's
//! own (the default), or the CUTLASS kernels the Tally client swaps in for
//! every cuBLAS and cuBLASLt GEMM when `REPLACE_CUBLAS` is set.
//!
//! The published Tally table ran every job that way, under every system:
//! tally-bench (commit aaa359a) sets `REPLACE_CUBLAS` for every benchmark
//! (`python/bench_utils/bench.py`, `Benchmark.replace_cublas = True`, put
//! in each process's environment) and preloads the Tally client into every
//! job, the local build of it under MPS and time-slicing and for the
//! single-stream baseline (`scripts/start_client_local.sh`:
//! `libtally_client_local.so`, the same client compiled with
//! `RUN_LOCALLY`). The client replaces `cublasSgemm_v2`, `cublasGemmEx`,
//! `cublasLtMatmul` and the strided-batched calls with Tally's kernels
//! before it forwards anything (tally commit de153caf,
//! `src/tally/preload/tally_client.cpp`), and those are
//! (`src/tally/cutlass/cutlass.cu`): FP32 as CUTLASS SIMT 128x128x8 tiles;
//! FP16 as tensor-op 128x128x16 tiles, 4 warps of 64x64, 4 stages; a grid
//! of fewer than 60 output tiles with K >= 128 split into ceil(K / 128)
//! slices of K (`GemmSplitKParallel`: partial sums, then a reduce), else
//! no split; batched products never split. A tile is computed whole,
//! whatever part of it the matrix fills.

use serde::{Deserialize, Serialize};

/// The library that runs a model's GEMMs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GemmLibrary {
    /// cuBLAS: a tile chosen by shape, split-K for small grids over long
    /// K, a weight-streaming GEMV for skinny products.
    #[default]
    Cublas,
    /// The Tally client's CUTLASS replacement (`REPLACE_CUBLAS`).
    TallyCutlass,
}

impl GemmLibrary {
    pub fn is_cublas(&self) -> bool {
        *self == GemmLibrary::Cublas
    }
}
