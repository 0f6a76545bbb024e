//! GEMM lowering the way cuBLAS / CUTLASS launch it: a tile size picked by
//! shape, split-K (plus a reduce kernel) when the tile grid cannot fill the
//! GPU and K is long, and a weight-streaming GEMV kernel for skinny
//! products (M <= 16, the LLM decode case). Also used by the implicit-GEMM
//! convolutions. Under [`GemmLibrary::TallyCutlass`] every product is
//! instead the Tally client's fixed CUTLASS kernel and split rule (the
//! module docs of `GemmLibrary` give the source), skinny ones included,
//! its tiles computed whole.

use tally_gpu::{Dim3, KernelKind, KernelSpec, MemoryUse, Work};

use super::builder::{ceil_div, dim, dim_yz, kernel, smem, streaming_kernel, Launch, Stream};
use crate::model::{Dtype, GemmLibrary};

/// Tile count a tile size must reach to be chosen: about one wave of a
/// large GPU, so big tiles are used only where they still fill the machine.
const MIN_TILES: f64 = 120.0;
/// Split-K is used below this many output tiles ...
const SPLIT_K_MAX_TILES: f64 = 100.0;
/// ... when K is at least this long.
const SPLIT_K_MIN_K: f64 = 2048.0;
/// Products with a dimension this small are GEMVs.
const SKINNY: f64 = 16.0;
/// GEMV kernels split K beyond this length.
const GEMV_SPLIT_K: f64 = 8192.0;

/// Shape of a (batched) matrix product `C[m,n] = A[m,k] B[k,n]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GemmShape {
    pub m: f64,
    pub n: f64,
    pub k: f64,
    pub batch: f64,
    pub dtype: Dtype,
    pub library: GemmLibrary,
}

/// A CTA tile configuration.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tile {
    pub bm: f64,
    pub bn: f64,
    pub bk: f64,
    threads: u32,
    stages: f64,
    regs: u32,
}

const fn tile(bm: f64, bn: f64, bk: f64, threads: u32, stages: f64, regs: u32) -> Tile {
    Tile {
        bm,
        bn,
        bk,
        threads,
        stages,
        regs,
    }
}

/// Tensor-core tiles, largest first (cuBLAS / CUTLASS Ampere-style kernels).
const TENSOR_TILES: [Tile; 4] = [
    tile(256.0, 128.0, 32.0, 256, 4.0, 232),
    tile(128.0, 128.0, 32.0, 256, 3.0, 168),
    tile(128.0, 64.0, 32.0, 128, 3.0, 128),
    tile(64.0, 64.0, 32.0, 128, 3.0, 128),
];

/// The SGEMM tile (FFMA pipe, no tensor cores).
const FFMA_TILE: Tile = tile(128.0, 128.0, 8.0, 256, 2.0, 128);

/// The Tally client's 16-bit tensor-op tile: 128x128x16, four warps of
/// 64x64 (the register footprint of our other 64x64-per-warp tile), 4
/// stages (`CUTLASS_GEMM_TENSOR_OP_BASE`).
const TALLY_TENSOR_TILE: Tile = tile(128.0, 128.0, 16.0, 128, 4.0, 232);
/// The Tally client splits K when the grid has fewer output tiles than
/// this ...
const TALLY_SPLIT_K_MAX_TILES: f64 = 60.0;
/// ... into slices this deep (and K must be at least this long).
const TALLY_SPLIT_K_DEPTH: f64 = 128.0;

/// Whether the product runs on the tensor cores: under the Tally client
/// only 16-bit products do (its FP32 replacement is SIMT, TF32 included).
fn on_tensor_cores(s: &GemmShape) -> bool {
    match s.library {
        GemmLibrary::Cublas => s.dtype.uses_tensor_cores(),
        GemmLibrary::TallyCutlass => s.dtype.uses_tensor_cores() && s.dtype.size() == 2.0,
    }
}

/// The chosen tiling of a GEMM.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    pub tile: Tile,
    pub tiles_m: f64,
    pub tiles_n: f64,
    /// Split-K slices (1 = no split).
    pub splits: f64,
}

/// The Tally client's plan: its fixed tile, and ceil(K / 128) slices for a
/// single product of fewer than 60 output tiles.
fn tally_plan(s: &GemmShape) -> Plan {
    let tile = if on_tensor_cores(s) {
        TALLY_TENSOR_TILE
    } else {
        FFMA_TILE
    };
    let (tiles_m, tiles_n) = (ceil_div(s.m, tile.bm), ceil_div(s.n, tile.bn));
    let splits = if s.batch <= 1.0
        && tiles_m * tiles_n < TALLY_SPLIT_K_MAX_TILES
        && s.k >= TALLY_SPLIT_K_DEPTH
    {
        ceil_div(s.k, TALLY_SPLIT_K_DEPTH)
    } else {
        1.0
    };
    Plan {
        tile,
        tiles_m,
        tiles_n,
        splits,
    }
}

/// Choose tile and split-K for a shape.
pub(crate) fn plan(s: &GemmShape) -> Plan {
    if s.library == GemmLibrary::TallyCutlass {
        return tally_plan(s);
    }
    let count = |t: &Tile| ceil_div(s.m, t.bm) * ceil_div(s.n, t.bn) * s.batch;
    let tile = if s.dtype.uses_tensor_cores() {
        let t = *TENSOR_TILES
            .iter()
            .find(|t| count(t) >= MIN_TILES)
            .unwrap_or(&TENSOR_TILES[TENSOR_TILES.len() - 1]);
        // 4-byte operands halve the K depth of a stage, so a stage holds
        // the bytes of the 16-bit tile (CUTLASS's TF32 tiles, e.g.
        // 256x128x16, against 256x128x32 for FP16).
        Tile {
            bk: t.bk * 2.0 / s.dtype.size(),
            ..t
        }
    } else {
        FFMA_TILE
    };
    let tiles = count(&tile);
    let splits = if tiles < SPLIT_K_MAX_TILES && s.k >= SPLIT_K_MIN_K {
        // Enough slices to reach ~128 CTAs, each slice at least 512 deep.
        ceil_div(128.0, tiles)
            .min((s.k / 512.0).floor())
            .clamp(2.0, 16.0)
    } else {
        1.0
    };
    Plan {
        tile,
        tiles_m: ceil_div(s.m, tile.bm),
        tiles_n: ceil_div(s.n, tile.bn),
        splits,
    }
}

/// Lower a GEMM-shaped product: under cuBLAS a GEMV for skinny shapes of a
/// plain GEMM, else a tiled kernel (`kind` is `Conv` for implicit-GEMM
/// convolutions).
pub(crate) fn lower_gemm(name: &str, kind: KernelKind, s: GemmShape) -> Vec<KernelSpec> {
    if kind == KernelKind::Gemm && s.m.min(s.n) <= SKINNY && s.library == GemmLibrary::Cublas {
        gemv(name, s)
    } else {
        tiled(name, kind, s, "gemm")
    }
}

/// A tiled (tensor-core or SGEMM) kernel, plus the split-K reduce.
pub(crate) fn tiled(name: &str, kind: KernelKind, s: GemmShape, label: &str) -> Vec<KernelSpec> {
    let label = match s.library {
        GemmLibrary::Cublas => label.to_string(),
        GemmLibrary::TallyCutlass => format!("tally_cutlass_{label}"),
    };
    let p = plan(&s);
    let t = p.tile;
    let e = s.dtype.size();
    let tiles = p.tiles_m * p.tiles_n * s.batch;
    let warps = f64::from(t.threads / 32);
    let stage_bytes = t.stages * (t.bm + t.bn) * t.bk * e;
    // ldmatrix / cp.async / address math per warp per K step.
    let other = tiles * ceil_div(s.k, t.bk) * warps * 12.0;
    // CUTLASS computes its tiles whole (loads past the matrix edge are
    // predicated to zero; the MMAs run regardless); cuBLAS's tile choice
    // keeps that waste small, so it counts the product itself.
    let mnk = match s.library {
        GemmLibrary::Cublas => s.m * s.n * s.k * s.batch,
        GemmLibrary::TallyCutlass => p.tiles_m * t.bm * p.tiles_n * t.bn * s.k * s.batch,
    };
    let work = if on_tensor_cores(&s) {
        Work {
            tensor_flops: 2.0 * mnk * s.dtype.tensor_flop_cost(),
            other_warp_insts: other,
            ..Work::default()
        }
    } else {
        Work {
            ffma: mnk,
            other_warp_insts: other,
            ..Work::default()
        }
    };
    let outputs = s.m * s.n * s.batch;
    // Split-K slices write fp32 partials to a workspace; else the output.
    let stores = if p.splits > 1.0 {
        outputs * 4.0 * p.splits
    } else {
        outputs * e
    };
    // Each CTA streams its A and B panels over all of K through L2
    // (cp.async bypasses L1, so L1 and L2 see the same requests).
    let panel_reads = tiles * (t.bm + t.bn) * s.k * e;
    let dram_read = (s.m * s.k + s.k * s.n) * e * s.batch;
    let window = 2.0 * tiles.min(128.0).sqrt() * t.bm.max(t.bn) * s.k.min(512.0) * e;
    let split_tag = if p.splits > 1.0 {
        format!("_splitk{}", p.splits)
    } else {
        String::new()
    };
    let kname = format!(
        "{name}/{label}_{}_{}x{}x{}_{}stage{split_tag}",
        s.dtype, t.bm, t.bn, t.bk, t.stages
    );
    let main = kernel(
        kname,
        kind,
        Launch {
            grid: Dim3::new(
                dim(p.tiles_m),
                dim_yz(p.tiles_n),
                dim_yz(s.batch * p.splits),
            ),
            threads: t.threads,
            regs: t.regs,
            smem_static: 0,
            smem_dynamic: smem(stage_bytes),
        },
        work,
        MemoryUse {
            l1_bytes: panel_reads + stores,
            l2_bytes: panel_reads + stores,
            dram_read_bytes: dram_read,
            dram_write_bytes: stores,
            l2_working_set: dram_read.min(window),
            inflight_bytes_per_warp: stage_bytes / warps,
        },
    );
    let mut out = vec![main];
    if p.splits > 1.0 {
        out.push(split_k_reduce(name, outputs, p.splits, e));
    }
    out
}

/// The reduce kernel after split-K: sums the fp32 partials into the output.
fn split_k_reduce(name: &str, outputs: f64, splits: f64, e: f64) -> KernelSpec {
    streaming_kernel(
        format!("{name}/splitk_reduce"),
        KernelKind::Elementwise,
        Stream {
            elements: outputs,
            read: outputs * 4.0 * splits,
            write: outputs * e,
            work: Work {
                fadd: outputs * splits,
                ..Work::default()
            },
            threads: 256,
            regs: 32,
        },
    )
}

/// A skinny product: the large operand (the weights) is streamed once by
/// 128-thread blocks, one output row per warp, with 16-byte vector loads
/// four deep; the small operand stays in L1/L2.
fn gemv(name: &str, s: GemmShape) -> Vec<KernelSpec> {
    let (skinny, long) = if s.m <= s.n { (s.m, s.n) } else { (s.n, s.m) };
    let e = s.dtype.size();
    let splits = if s.k >= GEMV_SPLIT_K {
        ceil_div(s.k, 4096.0)
    } else {
        1.0
    };
    let weights = long * s.k * s.batch;
    let mut work = Work {
        // One vector load, its address and the conversions per 16 bytes.
        other_warp_insts: (weights * e / 16.0 / 32.0 * 4.0).ceil(),
        ..Work::default()
    };
    match (s.dtype.uses_tensor_cores(), skinny <= 1.0) {
        (true, true) => work.hfma = weights,
        (true, false) => work.tensor_flops = 2.0 * skinny * weights * s.dtype.tensor_flop_cost(),
        (false, _) => work.ffma = skinny * weights,
    }
    let outputs = skinny * long * s.batch;
    let write = if splits > 1.0 {
        outputs * 4.0 * splits
    } else {
        outputs * e
    };
    let read = (weights + skinny * s.k * s.batch) * e;
    let split_tag = if splits > 1.0 {
        format!("_splitk{splits}")
    } else {
        String::new()
    };
    let main = kernel(
        format!("{name}/gemv_{}_m{skinny}{split_tag}", s.dtype),
        KernelKind::Gemv,
        Launch::simple(
            Dim3::new(dim(long / 4.0), dim_yz(splits), dim_yz(s.batch)),
            128,
            64,
        ),
        work,
        MemoryUse {
            l1_bytes: read + write,
            l2_bytes: read + write,
            dram_read_bytes: read,
            dram_write_bytes: write,
            l2_working_set: skinny * s.k * e,
            inflight_bytes_per_warp: 2048.0,
        },
    );
    let mut out = vec![main];
    if splits > 1.0 {
        out.push(split_k_reduce(name, outputs, splits, e));
    }
    out
}

/// Backward of `C = A B`: dgrad `dA = dC B^T` (m x k, reducing over n) and
/// wgrad `dB = A^T dC` (k x n, reducing over m), as autograd launches them.
pub(crate) fn lower_gemm_backward(name: &str, s: GemmShape) -> Vec<KernelSpec> {
    let dgrad = GemmShape {
        m: s.m,
        n: s.k,
        k: s.n,
        ..s
    };
    let wgrad = GemmShape {
        m: s.k,
        n: s.n,
        k: s.m,
        ..s
    };
    let mut out = lower_gemm(&format!("{name}.dgrad"), KernelKind::Gemm, dgrad);
    out.extend(lower_gemm(
        &format!("{name}.wgrad"),
        KernelKind::Gemm,
        wgrad,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(m: f64, n: f64, k: f64, dtype: Dtype) -> GemmShape {
        GemmShape {
            m,
            n,
            k,
            batch: 1.0,
            dtype,
            library: GemmLibrary::Cublas,
        }
    }

    #[test]
    fn large_f16_gemm_uses_256x128_tiles() {
        let ks = lower_gemm(
            "g",
            KernelKind::Gemm,
            shape(4096.0, 4096.0, 4096.0, Dtype::F16),
        );
        assert_eq!(ks.len(), 1);
        let k = &ks[0];
        k.validate().unwrap();
        assert_eq!(k.grid, Dim3::new(16, 32, 1));
        assert_eq!(k.block, Dim3::linear(256));
        assert_eq!(k.shared_mem_dynamic, 4 * (256 + 128) * 32 * 2);
        assert_eq!(k.work.tensor_flops, 2.0 * 4096f64.powi(3));
        assert_eq!(k.memory.dram_read_bytes, 2.0 * 4096.0 * 4096.0 * 2.0);
        assert_eq!(k.memory.dram_write_bytes, 4096.0 * 4096.0 * 2.0);
        let panels = 512.0 * 384.0 * 4096.0 * 2.0;
        assert_eq!(k.memory.l2_bytes, panels + 4096.0 * 4096.0 * 2.0);
        assert_eq!(k.memory.l1_bytes, k.memory.l2_bytes);
        let window = 2.0 * 128f64.sqrt() * 256.0 * 512.0 * 2.0;
        assert!((k.memory.l2_working_set - window).abs() < 1.0);
        assert_eq!(
            k.memory.inflight_bytes_per_warp,
            4.0 * 384.0 * 32.0 * 2.0 / 8.0
        );
        assert_eq!(k.work.other_warp_insts, 512.0 * 128.0 * 8.0 * 12.0);
    }

    fn tally(m: f64, n: f64, k: f64, dtype: Dtype) -> GemmShape {
        GemmShape {
            library: GemmLibrary::TallyCutlass,
            ..shape(m, n, k, dtype)
        }
    }

    #[test]
    fn the_tally_client_splits_k_into_128_deep_slices_below_60_tiles() {
        // bert-base's attention-output weight gradient at 12,288 tokens:
        // 6 x 6 tiles, so 96 slices of 128 and the reduce.
        let ks = lower_gemm(
            "g",
            KernelKind::Gemm,
            tally(768.0, 768.0, 12288.0, Dtype::F32),
        );
        assert_eq!(ks.len(), 2);
        assert_eq!(ks[0].grid, Dim3::new(6, 6, 96));
        assert_eq!(ks[0].block, Dim3::linear(256));
        assert!(ks[0].name.contains("tally_cutlass_gemm_f32_128x128x8"));
        assert!(ks[1].name.ends_with("splitk_reduce"));
        // Its FC1 weight gradient has 6 x 24 = 144 tiles: no split, every
        // block runs all 12,288 of K (cuBLAS's rule splits neither).
        let wide = lower_gemm(
            "g",
            KernelKind::Gemm,
            tally(768.0, 3072.0, 12288.0, Dtype::F32),
        );
        assert_eq!((wide.len(), wide[0].grid), (1, Dim3::new(6, 24, 1)));
        // 60 tiles exactly: no split; a batched product never splits.
        assert_eq!(plan(&tally(768.0, 1280.0, 4096.0, Dtype::F32)).splits, 1.0);
        let batched = GemmShape {
            batch: 12.0,
            ..tally(128.0, 128.0, 4096.0, Dtype::F16)
        };
        assert_eq!(plan(&batched).splits, 1.0);
        // Where cuBLAS's rule takes fewer, deeper slices.
        let cublas = plan(&shape(768.0, 768.0, 12288.0, Dtype::F32));
        assert_eq!(cublas.splits, 4.0);
    }

    #[test]
    fn the_tally_client_runs_16_bit_products_on_whole_128x128x16_tiles() {
        // A decode step's projection: one token, so cuBLAS streams the
        // weights as a GEMV, and the Tally client runs a 128-row tile of
        // which one row is the product, 32 K slices deep.
        let s = tally(1.0, 4096.0, 4096.0, Dtype::F16);
        let cublas = lower_gemm(
            "g",
            KernelKind::Gemm,
            GemmShape {
                library: GemmLibrary::Cublas,
                ..s
            },
        );
        assert_eq!(cublas[0].kind, KernelKind::Gemv);
        let ks = lower_gemm("g", KernelKind::Gemm, s);
        assert_eq!(ks[0].kind, KernelKind::Gemm);
        assert_eq!(ks[0].grid, Dim3::new(1, 32, 32));
        assert_eq!(ks[0].block, Dim3::linear(128));
        assert_eq!(ks[0].shared_mem_dynamic, 4 * (128 + 128) * 16 * 2);
        assert_eq!(
            ks[0].work.tensor_flops,
            2.0 * 128.0 * 4096.0 * 4096.0 * Dtype::F16.tensor_flop_cost()
        );
        // FP32 stays on the FFMA pipe even where cuBLAS would use TF32.
        let tf32 = plan(&tally(4096.0, 4096.0, 4096.0, Dtype::Tf32));
        assert_eq!(
            (tf32.tile.bm, tf32.tile.bk, tf32.tile.threads),
            (128.0, 8.0, 256)
        );
    }

    #[test]
    fn tile_shrinks_with_the_problem() {
        let t = |m, n| plan(&shape(m, n, 1024.0, Dtype::F16)).tile.bm;
        assert_eq!(t(4096.0, 4096.0), 256.0);
        assert_eq!(t(1024.0, 2304.0), 128.0);
        assert_eq!(t(128.0, 128.0), 64.0);
        let f32 = plan(&shape(1024.0, 1024.0, 1024.0, Dtype::F32));
        assert_eq!((f32.tile.bm, f32.tile.bk), (128.0, 8.0));
    }

    #[test]
    fn small_output_with_long_k_splits_k() {
        let ks = lower_gemm(
            "g",
            KernelKind::Gemm,
            shape(128.0, 128.0, 8192.0, Dtype::F16),
        );
        assert_eq!(ks.len(), 2);
        // 2x2 tiles of 64x64: split into 16 slices of 512.
        assert_eq!(ks[0].grid, Dim3::new(2, 2, 16));
        assert_eq!(ks[0].memory.dram_write_bytes, 128.0 * 128.0 * 4.0 * 16.0);
        assert!(ks[1].name.ends_with("splitk_reduce"));
        assert_eq!(ks[1].memory.dram_read_bytes, ks[0].memory.dram_write_bytes);
        for k in &ks {
            k.validate().unwrap();
        }
    }

    #[test]
    fn f32_gemm_runs_on_ffma() {
        let k = &lower_gemm(
            "g",
            KernelKind::Gemm,
            shape(512.0, 512.0, 512.0, Dtype::F32),
        )[0];
        assert_eq!(k.work.tensor_flops, 0.0);
        assert_eq!(k.work.ffma, 512f64.powi(3));
        assert_eq!(k.work.total_flops(), 2.0 * 512f64.powi(3));
    }

    #[test]
    fn skinny_gemm_is_a_weight_streaming_gemv() {
        let k = &lower_gemm(
            "g",
            KernelKind::Gemm,
            shape(8.0, 4096.0, 4096.0, Dtype::F16),
        )[0];
        k.validate().unwrap();
        assert_eq!(k.kind, KernelKind::Gemv);
        assert_eq!(k.grid, Dim3::new(1024, 1, 1));
        assert_eq!(k.block, Dim3::linear(128));
        assert_eq!(k.work.tensor_flops, 2.0 * 8.0 * 4096.0 * 4096.0);
        let read = (4096.0 * 4096.0 + 8.0 * 4096.0) * 2.0;
        assert_eq!(k.memory.dram_read_bytes, read);
        assert_eq!(k.memory.l2_bytes, read + 8.0 * 4096.0 * 2.0);
        assert_eq!(k.memory.l2_working_set, 8.0 * 4096.0 * 2.0);
        assert_eq!(k.memory.inflight_bytes_per_warp, 2048.0);
        // A single row uses HFMA; a long K splits.
        let one = &lower_gemm(
            "g",
            KernelKind::Gemm,
            shape(1.0, 4096.0, 4096.0, Dtype::F16),
        )[0];
        assert_eq!(one.work.hfma, 4096.0 * 4096.0);
        let long = lower_gemm(
            "g",
            KernelKind::Gemm,
            shape(8.0, 4096.0, 11008.0, Dtype::F16),
        );
        assert_eq!(long.len(), 2);
        assert_eq!(long[0].grid.y, 3);
    }

    #[test]
    fn backward_is_dgrad_and_wgrad_with_transposed_shapes() {
        let s = shape(1024.0, 3072.0, 768.0, Dtype::F16);
        let fwd = lower_gemm("fc", KernelKind::Gemm, s)[0].work.tensor_flops;
        let bwd = lower_gemm_backward("fc", s);
        assert_eq!(bwd.len(), 2);
        assert!(bwd[0].name.starts_with("fc.dgrad/"));
        assert!(bwd[1].name.starts_with("fc.wgrad/"));
        // dA = dC B^T is m x k; dB = A^T dC is k x n.
        assert_eq!(bwd[0].memory.dram_write_bytes, 1024.0 * 768.0 * 2.0);
        assert_eq!(bwd[1].memory.dram_write_bytes, 768.0 * 3072.0 * 2.0);
        for k in &bwd {
            assert_eq!(k.work.tensor_flops, fwd);
        }
    }
}
