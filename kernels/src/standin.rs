//! Stand-ins: the library launch that runs in place of a `KernelSpec` on a
//! real GPU. A spec describes what a kernel does (its kind, FLOPs and
//! compulsory DRAM bytes), not which code does it, so the CUDA backend
//! runs the library entry of the same kind sized to reproduce those
//! figures: a GEMM's `m, n, k` are solved from its FLOPs and its input and
//! output bytes, memory-bound kernels get the element count that moves the
//! same bytes. Works for every spec (zoo lowerings, kernel traces, ncu
//! imports) because it reads only the spec's own figures.
//!
//! Grids follow each entry's rule (kernels/cuda/README.md); a test checks
//! every rule here against the manifest's test launches. The kernels index
//! with 32-bit ints and have no grid-stride loops, so sizes are capped to
//! what they can address and launch; a capped stand-in does less work than
//! its spec, and its `flops` / `bytes` say how much.

use crate::library::{self, LibraryKernel, Param, Role};
use tally_gpu::{Dim3, KernelKind, KernelSpec};

/// Largest buffer (elements) and scalar the library's `int` indexing takes.
const MAX_ELEMS: f64 = 2_147_483_647.0;
/// CUDA's limit on `gridDim.y` / `gridDim.z`.
const MAX_GRID_YZ: f64 = 65_535.0;
/// Below this many FLOPs per compulsory byte a matrix kernel is a stream
/// over its operand (a GEMV, a depthwise convolution), not a tiled product.
const MATRIX_MIN_INTENSITY: f64 = 4.0;
/// Reduction length of a GEMV stand-in (a multiple of 8: the vector path).
const GEMV_K: f64 = 4096.0;
/// Channels and width of a depthwise stand-in (multiples of 8).
const DEPTHWISE_C: f64 = 64.0;
const DEPTHWISE_W: f64 = 64.0;
/// Row length of an embedding stand-in (one block column per 1024).
const EMBEDDING_DIM: f64 = 1024.0;
/// Image width of a 3x3 convolution stand-in (its height follows).
const CONV_WIDTH: f64 = 32.0;
/// Head dimension the flash-attention entry is compiled for.
const HEAD_DIM: f64 = 64.0;

/// A sized library launch and the work it does.
#[derive(Debug, Clone, PartialEq)]
pub struct StandIn {
    /// The manifest entry with this launch's grid and parameters.
    pub launch: LibraryKernel,
    /// FLOPs of the stand-in (2 per multiply-add; 0 for streams).
    pub flops: f64,
    /// Compulsory bytes: every input buffer read once, every output written
    /// once (in-out buffers both).
    pub bytes: f64,
}

impl StandIn {
    /// The kernel that really launches: the stand-in's grid and block, with
    /// the registers per thread and static shared memory ptxas gives its
    /// entry (no entry uses dynamic shared memory).
    pub fn launched(&self, registers: u32, shared_bytes: u32) -> KernelSpec {
        let [gx, gy, gz] = self.launch.grid;
        let [bx, by, bz] = self.launch.block;
        KernelSpec {
            name: self.launch.entry.clone(),
            kind: self.launch.kind,
            grid: Dim3 {
                x: gx,
                y: gy,
                z: gz,
            },
            block: Dim3 {
                x: bx,
                y: by,
                z: bz,
            },
            registers_per_thread: registers.max(1),
            shared_mem_static: shared_bytes,
            shared_mem_dynamic: 0,
            work: Default::default(),
            memory: Default::default(),
        }
    }
}

/// Why a spec has no stand-in.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("kernel `{kernel}` has no library stand-in: {problem}")]
pub struct StandInError {
    pub kernel: String,
    pub problem: String,
}

/// The stand-in of `k`.
pub fn stand_in(k: &KernelSpec) -> Result<StandIn, StandInError> {
    let err = |problem: String| StandInError {
        kernel: k.name.clone(),
        problem,
    };
    let read = k.memory.dram_read_bytes.max(0.0);
    let write = k.memory.dram_write_bytes.max(0.0);
    let bytes = read + write;
    if !(bytes.is_finite() && bytes > 0.0) {
        return Err(err("it moves no DRAM bytes to size a stand-in by".into()));
    }
    let tensor = k.work.tensor_flops;
    let flops = if tensor > 0.0 {
        tensor
    } else {
        k.work.fp32_flops() + k.work.fp16_flops()
    };
    let sized = match k.kind {
        KernelKind::Gemm | KernelKind::Gemv | KernelKind::Conv
            if k.kind == KernelKind::Gemv || flops / bytes < MATRIX_MIN_INTENSITY =>
        {
            if k.kind == KernelKind::Conv {
                depthwise(bytes)
            } else if write > read {
                // An outer product (the gradient of a projection to a few
                // outputs): its output is the traffic.
                unary_stream(bytes)
            } else {
                gemv(read.max(2.0))
            }
        }
        KernelKind::Gemm | KernelKind::Gemv | KernelKind::Conv => {
            let half = tensor > 0.0;
            let (m, n, kk) = solve_gemm(flops, read, write, if half { 2.0 } else { 4.0 });
            match (k.kind, half) {
                (KernelKind::Conv, true) => match solve_conv_3x3(flops, read, write) {
                    // Reads too small for a 1x1 product of these FLOPs: the
                    // filter taps reuse each input pixel (a 3x3 convolution).
                    Some((pixels, c, out))
                        if solve_gemm_exact(flops, read, write, 2.0).is_none() =>
                    {
                        conv_3x3(pixels, c, out)
                    }
                    _ => conv_1x1(m, n, kk),
                },
                (_, true) => gemm("gemm_f16_mma", m, n, kk),
                (_, false) => gemm("gemm_f32", m, n, kk),
            }
        }
        KernelKind::Elementwise if read >= 1.5 * write => {
            let n = cap(bytes / 6.0);
            entry(
                "add_f16",
                [blocks(n, 2048.0), 1, 1],
                &[("a", n), ("b", n), ("c", n), ("n", n)],
            )
        }
        KernelKind::Elementwise => unary_stream(bytes),
        KernelKind::Reduction => {
            // One f32 sum per output element, over rows of f32.
            let mut rows = cap((write / 4.0).max(1.0));
            if read < 4.0 * rows {
                // Writes at least its reads (a scan, a sort): rows of one
                // element, reading and writing the spec's bytes.
                rows = cap(bytes / 8.0);
            }
            let cols = cap((read / 4.0 / rows).max(1.0)).min(cap(MAX_ELEMS / rows));
            let grid = [rows as u32, 1, 1];
            entry(
                "row_sum_f32",
                grid,
                &[
                    ("x", rows * cols),
                    ("out", rows),
                    ("rows", rows),
                    ("cols", cols),
                ],
            )
        }
        KernelKind::Softmax | KernelKind::LayerNorm => rowwise(k, bytes),
        KernelKind::Attention if tensor > 0.0 => attention(tensor, read, write),
        KernelKind::Attention => rowwise(k, bytes),
        KernelKind::Embedding => {
            // Each element is read from the table and written out once.
            let elems = (bytes / 4.0).max(1.0);
            let tokens_at = |dim: f64| (elems / dim).ceil().max(1.0);
            let mut dim = EMBEDDING_DIM;
            if tokens_at(dim) > MAX_GRID_YZ {
                dim = (elems / MAX_GRID_YZ / 8.0).ceil() * 8.0;
            }
            let tokens = tokens_at(dim).min(MAX_GRID_YZ);
            let dim = dim.min(cap(MAX_ELEMS / tokens));
            let mut s = entry(
                "embedding_gather_f16",
                [blocks(dim, 1024.0), tokens as u32, 1],
                &[
                    ("ids", tokens),
                    ("table", tokens * dim),
                    ("out", tokens * dim),
                    ("n_tokens", tokens),
                    ("dim", dim),
                    ("vocab", tokens),
                ],
            );
            if let Ok(s) = &mut s {
                set_index_range(&mut s.launch, "ids", tokens);
            }
            s
        }
        KernelKind::Optimizer => {
            // Adam reads param, grad, both moments and writes three back.
            let n = cap(bytes / 28.0);
            entry(
                "adam_step_f32",
                [blocks(n, 1024.0), 1, 1],
                &[
                    ("param", n),
                    ("grad", n),
                    ("exp_avg", n),
                    ("exp_avg_sq", n),
                    ("n", n),
                ],
            )
        }
        KernelKind::Copy => {
            let n = cap(bytes / 8.0);
            entry(
                "copy_f32_vec",
                [blocks(n, 4096.0), 1, 1],
                &[("src", n), ("dst", n), ("n", n)],
            )
        }
    };
    sized.map_err(err)
}

/// `m, n, k` of a product with `flops` FLOPs that reads `read` and writes
/// `write` bytes of `e`-byte elements: `m n = write / e`, `k = flops /
/// (2 m n)`, `m + n = read / (e k)`. Traffic that no real product of these
/// FLOPs could have (the quadratic has no real root) gives a square tile.
fn solve_gemm(flops: f64, read: f64, write: f64, e: f64) -> (f64, f64, f64) {
    let mn = (write / e).max(1.0);
    let k = (flops / (2.0 * mn)).max(1.0);
    let sum = read / (e * k);
    let disc = sum * sum - 4.0 * mn;
    let (m, n) = if disc >= 0.0 && sum > 0.0 {
        let m = (sum + disc.sqrt()) / 2.0;
        (m, mn / m)
    } else {
        (mn.sqrt(), mn.sqrt())
    };
    let (m, n) = (m.round().max(1.0), n.round().max(1.0));
    let k = (flops / (2.0 * m * n)).round().max(1.0);
    // Every operand must stay addressable; shrink m (the grid's y) first.
    let limit = MAX_ELEMS.min(MAX_GRID_YZ * 64.0);
    let k = k.min(MAX_ELEMS / n.max(1.0)).floor().max(1.0);
    let m = m
        .min(limit)
        .min(MAX_ELEMS / k)
        .min(MAX_ELEMS / n)
        .floor()
        .max(1.0);
    (m, n.min(MAX_ELEMS / k).floor().max(1.0), k)
}

/// `m, n` of an exact product (the quadratic of [`solve_gemm`] has a real
/// root), `None` when no product of these FLOPs moves so few bytes.
fn solve_gemm_exact(flops: f64, read: f64, write: f64, e: f64) -> Option<(f64, f64)> {
    let mn = (write / e).max(1.0);
    let k = (flops / (2.0 * mn)).max(1.0);
    let sum = read / (e * k);
    let disc = sum * sum - 4.0 * mn;
    (disc >= 0.0 && sum > 0.0).then(|| {
        let m = (sum + disc.sqrt()) / 2.0;
        (m, mn / m)
    })
}

/// Output pixels, input channels and output channels of a 3x3, stride-1,
/// same-padded f16 convolution with `flops` FLOPs that reads `read` bytes
/// (input `pixels x c`, weights `9 c x out`) and writes `write` (`pixels x
/// out`): `pixels out = write / 2`, `c = flops / (18 pixels out)`,
/// `pixels + 9 out = read / (2 c)`. The larger-pixel root of the two.
fn solve_conv_3x3(flops: f64, read: f64, write: f64) -> Option<(f64, f64, f64)> {
    let product = (write / 2.0).max(1.0);
    let c = flops / (18.0 * product);
    if c.is_nan() || c < 1.0 {
        return None;
    }
    let sum = read / (2.0 * c);
    let disc = sum * sum - 36.0 * product;
    if disc < 0.0 {
        return None;
    }
    let out = ((sum - disc.sqrt()) / 18.0).max(1.0);
    Some((product / out, c, out))
}

/// A 3x3, stride-1, pad-1 implicit-GEMM convolution over one image of
/// `pixels` pixels (rows of [`CONV_WIDTH`]), `c` in and `k` out channels.
fn conv_3x3(pixels: f64, c: f64, k: f64) -> Result<StandIn, String> {
    let c = c.round().max(1.0);
    let k = k.round().max(1.0);
    let w = CONV_WIDTH.min(pixels.ceil());
    let max_pixels = (MAX_GRID_YZ * 64.0).min(MAX_ELEMS / c.max(k));
    let h = (pixels / w).round().clamp(1.0, (max_pixels / w).floor());
    let m = h * w;
    let mut s = entry(
        "conv2d_implicit_gemm_f16",
        [blocks(k, 64.0), blocks(m, 64.0), 1],
        &[
            ("input", m * c),
            ("weight", 9.0 * k * c),
            ("output", m * k),
            ("n", 1.0),
            ("h", h),
            ("w", w),
            ("c", c),
            ("k", k),
            ("r", 3.0),
            ("s", 3.0),
            ("p", h),
            ("q", w),
            ("stride_h", 1.0),
            ("stride_w", 1.0),
            ("pad_h", 1.0),
            ("pad_w", 1.0),
        ],
    )?;
    s.flops = 18.0 * m * k * c;
    Ok(s)
}

fn gemm(name: &str, m: f64, n: f64, k: f64) -> Result<StandIn, String> {
    let grid = [blocks(n, 64.0), blocks(m, 64.0), 1];
    let mut s = entry(
        name,
        grid,
        &[
            ("a", m * k),
            ("b", k * n),
            ("c", m * n),
            ("m", m),
            ("n", n),
            ("k", k),
        ],
    )?;
    s.flops = 2.0 * m * n * k;
    Ok(s)
}

/// A GEMM as a 1x1, stride-1 implicit-GEMM convolution: one image of `m`
/// pixels in a column, `k` input and `n` output channels.
fn conv_1x1(m: f64, n: f64, k: f64) -> Result<StandIn, String> {
    let mut s = entry(
        "conv2d_implicit_gemm_f16",
        [blocks(n, 64.0), blocks(m, 64.0), 1],
        &[
            ("input", m * k),
            ("weight", n * k),
            ("output", m * n),
            ("n", 1.0),
            ("h", m),
            ("w", 1.0),
            ("c", k),
            ("k", n),
            ("r", 1.0),
            ("s", 1.0),
            ("p", m),
            ("q", 1.0),
            ("stride_h", 1.0),
            ("stride_w", 1.0),
            ("pad_h", 0.0),
            ("pad_w", 0.0),
        ],
    )?;
    s.flops = 2.0 * m * n * k;
    Ok(s)
}

/// One f16 tensor in, one out, `bytes` in all.
fn unary_stream(bytes: f64) -> Result<StandIn, String> {
    let n = cap(bytes / 4.0);
    entry(
        "gelu_tanh_f16",
        [blocks(n, 2048.0), 1, 1],
        &[("x", n), ("y", n), ("n", n)],
    )
}

/// A weight stream: `y[m] = A[m, k] x`, `A` of `read` bytes.
fn gemv(read: f64) -> Result<StandIn, String> {
    let k = GEMV_K.min((read / 2.0).max(1.0)).floor();
    let m = cap((read / 2.0 / k).ceil()).min(cap(MAX_ELEMS / k));
    let mut s = entry(
        "gemv_f16",
        [blocks(m, 8.0), 1, 1],
        &[("a", m * k), ("x", k), ("y", m), ("m", m), ("k", k)],
    )?;
    s.flops = 2.0 * m * k;
    Ok(s)
}

/// A 3x3 depthwise convolution moving `bytes` (input and output, f16).
fn depthwise(bytes: f64) -> Result<StandIn, String> {
    let pixels = (bytes / 4.0 / DEPTHWISE_C).max(1.0);
    let rows = (pixels / DEPTHWISE_W).ceil().max(1.0);
    let images = (rows / MAX_GRID_YZ).ceil().clamp(1.0, MAX_GRID_YZ);
    let h = (rows / images).ceil().min(MAX_GRID_YZ);
    let images = images.min(cap(MAX_ELEMS / (h * DEPTHWISE_W * DEPTHWISE_C)));
    let elems = images * h * DEPTHWISE_W * DEPTHWISE_C;
    let mut s = entry(
        "conv2d_depthwise_f16",
        [
            blocks(DEPTHWISE_W * DEPTHWISE_C, 256.0),
            h as u32,
            images as u32,
        ],
        &[
            ("input", elems),
            ("weight", 9.0 * DEPTHWISE_C),
            ("output", elems),
            ("n", images),
            ("h", h),
            ("w", DEPTHWISE_W),
            ("c", DEPTHWISE_C),
            ("r", 3.0),
            ("s", 3.0),
            ("p", h),
            ("q", DEPTHWISE_W),
            ("stride_h", 1.0),
            ("stride_w", 1.0),
            ("pad_h", 1.0),
            ("pad_w", 1.0),
        ],
    )?;
    s.flops = 18.0 * elems;
    Ok(s)
}

/// A row-wise kernel (softmax, LayerNorm) with one block per row of the
/// spec's grid, the rows long enough to move the spec's bytes.
fn rowwise(k: &KernelSpec, bytes: f64) -> Result<StandIn, String> {
    let rows = cap(k.blocks() as f64).min(MAX_ELEMS);
    let cols = cap((bytes / 4.0 / rows).max(1.0)).min(cap(MAX_ELEMS / rows));
    let grid = [rows as u32, 1, 1];
    if k.kind == KernelKind::LayerNorm {
        entry(
            "layer_norm_f16",
            grid,
            &[
                ("x", rows * cols),
                ("gamma", cols),
                ("beta", cols),
                ("y", rows * cols),
                ("rows", rows),
                ("cols", cols),
            ],
        )
    } else {
        entry(
            "softmax_rows_f16",
            grid,
            &[
                ("x", rows * cols),
                ("y", rows * cols),
                ("rows", rows),
                ("cols", cols),
            ],
        )
    }
}

/// Non-causal flash attention with `flops` tensor FLOPs: `Q` and `O` are
/// `write` bytes (`bh * q_len * 64` halves), `K` and `V` the rest of `read`.
fn attention(flops: f64, read: f64, write: f64) -> Result<StandIn, String> {
    let row = HEAD_DIM * 2.0;
    let q_rows = (write / row).max(1.0);
    let kv_rows = ((read - write) / (2.0 * row)).max(1.0);
    // QK^T and PV: 4 * d FLOPs per (query, key) pair.
    let kv_len = (flops / (4.0 * HEAD_DIM * q_rows)).round().max(1.0);
    let bh = (kv_rows / kv_len).round().clamp(1.0, MAX_GRID_YZ);
    let q_len = (q_rows / bh).round().max(1.0);
    let kv_len = kv_len.min(cap(MAX_ELEMS / (bh * HEAD_DIM)));
    let q_len = q_len.min(cap(MAX_ELEMS / (bh * HEAD_DIM)));
    let mut s = entry(
        "flash_attn_fwd_f16",
        [blocks(q_len, 16.0), bh as u32, 1],
        &[
            ("q", bh * q_len * HEAD_DIM),
            ("k", bh * kv_len * HEAD_DIM),
            ("v", bh * kv_len * HEAD_DIM),
            ("o", bh * q_len * HEAD_DIM),
            ("q_len", q_len),
            ("kv_len", kv_len),
            ("causal", 0.0),
        ],
    )?;
    s.flops = 4.0 * HEAD_DIM * bh * q_len * kv_len;
    Ok(s)
}

/// A count as a whole number the kernels can index.
fn cap(v: f64) -> f64 {
    v.ceil().clamp(1.0, MAX_ELEMS)
}

/// `ceil(n / per)` blocks.
fn blocks(n: f64, per: f64) -> u32 {
    (n / per).ceil().clamp(1.0, MAX_ELEMS) as u32
}

/// Indices into a table of `rows` rows.
fn set_index_range(k: &mut LibraryKernel, buffer: &str, rows: f64) {
    for p in &mut k.params {
        if let Param::Ptr { name, max, .. } = p {
            if name == buffer {
                *max = Some(rows as u32);
            }
        }
    }
}

/// Manifest entry `name` launched on `grid` with `sizes` (buffer element
/// counts and scalar values by parameter name; scalars not named keep the
/// manifest's value, every buffer must be named).
fn entry(name: &str, grid: [u32; 3], sizes: &[(&str, f64)]) -> Result<StandIn, String> {
    let template = library::kernels()
        .map_err(|e| e.to_string())?
        .iter()
        .find(|k| k.entry == name)
        .ok_or_else(|| format!("the library has no entry `{name}`"))?;
    let mut launch = template.clone();
    launch.grid = grid;
    if grid[1] as f64 > MAX_GRID_YZ || grid[2] as f64 > MAX_GRID_YZ {
        return Err(format!("`{name}` would need a grid of {grid:?}"));
    }
    let size_of = |param: &str| sizes.iter().find(|(n, _)| *n == param).map(|(_, v)| *v);
    if let Some((unknown, _)) = sizes
        .iter()
        .find(|(n, _)| !template.params.iter().any(|p| p.name() == *n))
    {
        return Err(format!("`{name}` has no parameter `{unknown}`"));
    }
    let mut bytes = 0.0;
    for p in &mut launch.params {
        let Some(v) = size_of(p.name()) else {
            if let Param::Ptr { name: buffer, .. } = p {
                return Err(format!("`{name}`: buffer `{buffer}` is not sized"));
            }
            continue;
        };
        if !(v.is_finite() && (0.0..=MAX_ELEMS).contains(&v)) {
            return Err(format!("`{name}`: `{}` = {v} is out of range", p.name()));
        }
        match p {
            Param::Ptr {
                elems, dtype, role, ..
            } => {
                *elems = v as u64;
                let once = v * dtype.bytes() as f64;
                bytes += if *role == Role::Inout {
                    2.0 * once
                } else {
                    once
                };
            }
            Param::I32 { value, .. } => *value = v as i64,
            Param::U32 { value, .. } => *value = v as u64,
            Param::F32 { value, .. } => *value = v,
        }
    }
    Ok(StandIn {
        launch,
        flops: 0.0,
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(name: &str) -> LibraryKernel {
        library::kernels()
            .expect("manifest")
            .iter()
            .find(|k| k.entry == name)
            .expect("entry")
            .clone()
    }

    /// The sizing rules give exactly the manifest's test launches (grid and
    /// every parameter) when fed the test shapes.
    #[test]
    fn grid_rules_reproduce_the_manifest_test_launches() {
        let cases = [
            gemm("gemm_f16_mma", 500.0, 328.0, 200.0),
            gemm("gemm_f32", 450.0, 300.0, 77.0),
            entry(
                "add_f16",
                [blocks(100000.0, 2048.0), 1, 1],
                &[("a", 1e5), ("b", 1e5), ("c", 1e5), ("n", 1e5)],
            ),
            entry(
                "copy_f32_vec",
                [blocks(1000003.0, 4096.0), 1, 1],
                &[("src", 1000003.0), ("dst", 1000003.0), ("n", 1000003.0)],
            ),
            entry(
                "adam_step_f32",
                [blocks(1e5, 1024.0), 1, 1],
                &[
                    ("param", 1e5),
                    ("grad", 1e5),
                    ("exp_avg", 1e5),
                    ("exp_avg_sq", 1e5),
                    ("n", 1e5),
                ],
            ),
            entry(
                "flash_attn_fwd_f16",
                [blocks(100.0, 16.0), 8, 1],
                &[
                    ("q", 51200.0),
                    ("k", 81920.0),
                    ("v", 81920.0),
                    ("o", 51200.0),
                    ("q_len", 100.0),
                    ("kv_len", 160.0),
                ],
            ),
        ];
        for case in cases {
            let s = case.expect("sized");
            assert_eq!(s.launch, manifest(&s.launch.entry), "{}", s.launch.entry);
        }
        let m = manifest("gemv_f16");
        assert_eq!(m.grid, [blocks(1000.0, 8.0), 1, 1]);
        let d = manifest("conv2d_depthwise_f16");
        assert_eq!(d.grid, [blocks(20.0 * 40.0, 256.0), 20, 2]);
        let c = manifest("conv2d_implicit_gemm_f16");
        assert_eq!(
            c.grid,
            [blocks(80.0, 64.0), blocks(4.0 * 15.0 * 15.0, 64.0), 1]
        );
    }

    #[test]
    fn a_gemm_is_solved_back_from_its_flops_and_bytes() {
        let (m, n, k) = (1024.0, 768.0, 3072.0);
        let e = 2.0;
        let (sm, sn, sk) = solve_gemm(2.0 * m * n * k, (m * k + k * n) * e, m * n * e, e);
        assert_eq!((sm, sn, sk), (m, n, k));
        // Impossible traffic (less than the operands) falls back to square.
        let (sm, sn, _) = solve_gemm(2.0 * m * n * k, 10.0, m * n * e, e);
        assert_eq!(sm, sn);
    }

    #[test]
    fn a_3x3_convolution_is_solved_back_from_its_flops_and_bytes() {
        // 56x56 pixels, 64 -> 64 channels (a ResNet stage-1 conv).
        let (m, c, k) = (3136.0, 64.0, 64.0);
        let read = 2.0 * (m * c + 9.0 * c * k);
        let (flops, write) = (18.0 * m * c * k, 2.0 * m * k);
        assert!(solve_gemm_exact(flops, read, write, 2.0).is_none());
        let (sm, sc, sk) = solve_conv_3x3(flops, read, write).expect("a 3x3 solution");
        assert!((sm - m).abs() < 1e-6 * m && (sc - c).abs() < 1e-9 && (sk - k).abs() < 1e-6);
        let s = conv_3x3(sm, sc, sk).expect("sized");
        assert!((s.flops / flops - 1.0).abs() < 0.02, "{}", s.flops / flops);
        assert!((s.bytes / (read + write) - 1.0).abs() < 0.02);
    }

    #[test]
    fn buffers_must_be_sized_and_names_must_exist() {
        let e = entry("copy_f32_vec", [1, 1, 1], &[("src", 4.0), ("n", 4.0)]).unwrap_err();
        assert!(e.contains("`dst` is not sized"), "{e}");
        let e = entry("copy_f32_vec", [1, 1, 1], &[("nope", 4.0)]).unwrap_err();
        assert!(e.contains("no parameter `nope`"), "{e}");
        let e = entry(
            "copy_f32_vec",
            [1, 1, 1],
            &[("src", 1e12), ("dst", 1.0), ("n", 1.0)],
        )
        .unwrap_err();
        assert!(e.contains("out of range"), "{e}");
    }
}
