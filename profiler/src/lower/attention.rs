//! Attention lowering as flash-attention-2 launches it: the fused forward
//! kernel (128-row query tiles, K/V streamed per tile), flash-decoding for
//! single-token queries (split-KV kernel + combine), and the backward pass
//! (dot(dO, O) preprocess, the fused backward kernel with fp32 dQ
//! accumulation, the dQ conversion, and the GQA dK/dV group sum).
//!
//! FP32 attention is never flash attention: PyTorch's
//! `scaled_dot_product_attention` dispatch admits the flash kernel for
//! fp16 / bf16 only, and takes the memory-efficient kernel (the cutlass
//! `fmha_cutlassF_f32_aligned_64x64_rf` family, 64 queries and 64 keys per
//! step, one stage, on the SIMT pipe) for FP32 on every architecture from
//! sm_50 (`sdp_utils.cpp`: `check_tensor_dtype` for flash, the
//! mem-efficient kernel's sm50-sm90 dtype lists). Its tiles fit every
//! preset's shared memory; the flash tile would not on a V100 at FP32.

use tally_gpu::{Dim3, KernelKind, KernelSpec, MemoryUse, Work};

use super::builder::{ceil_div, dim, dim_yz, kernel, smem, streaming_kernel, Launch, Stream};
use super::rowwise::{rowwise_kernel, RowPass};
use crate::model::Dtype;

/// Query rows per forward CTA (and key rows per backward CTA).
const Q_TILE: f64 = 128.0;
/// Query rows per CTA of the FP32 memory-efficient kernel.
const MEM_EFFICIENT_Q_TILE: f64 = 64.0;
/// Key/value rows per inner-loop step.
const KV_TILE: f64 = 64.0;
/// Keys per flash-decoding split.
const DECODE_SPLIT: f64 = 256.0;
/// (batch, head) pairs whose K/V are in use at once on a large GPU.
const CONCURRENT_HEADS: f64 = 64.0;

/// Attention shape as floats.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AttnShape {
    pub batch: f64,
    pub heads: f64,
    pub kv_heads: f64,
    pub q: f64,
    pub kv: f64,
    pub d: f64,
    pub causal: bool,
    pub dtype: Dtype,
}

impl AttnShape {
    fn e(&self) -> f64 {
        self.dtype.size()
    }
    fn bh(&self) -> f64 {
        self.batch * self.heads
    }
    /// Q (and O) bytes.
    fn q_bytes(&self) -> f64 {
        self.bh() * self.q * self.d * self.e()
    }
    /// K (and V) bytes.
    fn k_bytes(&self) -> f64 {
        self.batch * self.kv_heads * self.kv * self.d * self.e()
    }
    /// Visible (query, key) pairs per head: causal masking with the queries
    /// aligned to the end of the keys.
    fn scores(&self) -> f64 {
        if self.causal {
            self.q * (self.kv - self.q) + self.q * (self.q + 1.0) / 2.0
        } else {
            self.q * self.kv
        }
    }
    /// Key rows read per head over all query tiles (each tile re-reads the
    /// keys it can see; causal tiles stop at the diagonal).
    fn kv_rows_read_with(&self, q_tile: f64) -> f64 {
        let tiles = ceil_div(self.q, q_tile);
        if self.causal {
            tiles * (self.kv - self.q) + q_tile * tiles * (tiles - 1.0) / 2.0 + self.q
        } else {
            tiles * self.kv
        }
    }
    /// The matrix products' `flops`: on the tensor cores for 16-bit types
    /// (flash attention), as FFMA for FP32, which PyTorch runs in its
    /// memory-efficient kernel on the SIMT pipe (no FP32 flash kernel).
    fn products(&self, work: &mut Work, flops: f64) {
        if self.dtype.uses_tensor_cores() {
            work.tensor_flops = flops * self.dtype.tensor_flop_cost();
        } else {
            work.ffma += flops / 2.0;
        }
    }

    fn softmax_work(&self, scale: f64) -> Work {
        // Scale, exp2 argument and running sum per visible score.
        let s = self.bh() * self.scores() * scale;
        Work {
            fmul: s,
            ffma: s,
            fadd: s,
            ..Work::default()
        }
    }
}

/// Forward attention (flash-decoding when the query is a single token).
pub(crate) fn lower_attention(name: &str, a: AttnShape) -> Vec<KernelSpec> {
    if a.q <= 1.0 {
        return decode(name, a);
    }
    let e = a.e();
    let flash = a.dtype.uses_tensor_cores();
    let warps = if a.d <= 128.0 || !flash { 4.0 } else { 8.0 };
    let stages = if a.d <= 64.0 && flash { 2.0 } else { 1.0 };
    let q_tile = if flash { Q_TILE } else { MEM_EFFICIENT_Q_TILE };
    let q_tiles = ceil_div(a.q, q_tile);
    let kv_rows = a.kv_rows_read_with(q_tile);
    let kv_reads = a.bh() * kv_rows * a.d * e * 2.0;
    let lse = a.bh() * a.q * 4.0;
    let mut work = a.softmax_work(1.0);
    a.products(&mut work, 4.0 * a.bh() * a.scores() * a.d);
    work.other_warp_insts = a.bh() * ceil_div(kv_rows, KV_TILE) * warps * 16.0;
    let name = if flash {
        format!("{name}/flash_fwd_{}_hdim{}", a.dtype, a.d)
    } else {
        format!("{name}/fmha_cutlassF_f32_aligned_64x64_rf_hdim{}", a.d)
    };
    let traffic = a.q_bytes() + kv_reads + a.q_bytes() + lse;
    let pairs = a.batch * a.kv_heads;
    vec![kernel(
        name,
        KernelKind::Attention,
        Launch {
            grid: Dim3::new(dim(q_tiles), dim_yz(a.heads), dim_yz(a.batch)),
            threads: (warps * 32.0) as u32,
            regs: if a.d > 64.0 { 255 } else { 192 },
            smem_static: 0,
            smem_dynamic: smem((q_tile + 2.0 * KV_TILE) * a.d * e * stages),
        },
        work,
        MemoryUse {
            l1_bytes: traffic,
            l2_bytes: traffic,
            dram_read_bytes: a.q_bytes() + 2.0 * a.k_bytes(),
            dram_write_bytes: a.q_bytes() + lse,
            l2_working_set: 2.0 * a.k_bytes() / pairs * pairs.min(CONCURRENT_HEADS),
            inflight_bytes_per_warp: 2.0 * KV_TILE * a.d * e / warps,
        },
    )]
}

/// Flash-decoding: the KV cache is split into 256-key chunks, each CTA
/// streams one chunk once (memory bound) and writes an fp32 partial output
/// and log-sum-exp; a combine kernel merges the splits. GQA query heads of
/// a group share their CTA, so the grid is over KV heads.
fn decode(name: &str, a: AttnShape) -> Vec<KernelSpec> {
    let e = a.e();
    let splits = ceil_div(a.kv, DECODE_SPLIT);
    let mut work = a.softmax_work(1.0);
    a.products(&mut work, 4.0 * a.bh() * a.scores() * a.d);
    work.other_warp_insts = splits * a.batch * a.kv_heads * (DECODE_SPLIT / KV_TILE) * 4.0 * 16.0;
    let partial_rows = a.bh() * splits;
    let write = if splits > 1.0 {
        partial_rows * (a.d + 1.0) * 4.0
    } else {
        a.q_bytes()
    };
    let read = a.q_bytes() + 2.0 * a.k_bytes();
    let traffic = read + a.q_bytes() * (splits - 1.0) + write;
    let mut out = vec![kernel(
        format!("{name}/flash_fwd_splitkv_{}_hdim{}", a.dtype, a.d),
        KernelKind::Attention,
        Launch {
            grid: Dim3::new(dim(splits), dim_yz(a.kv_heads), dim_yz(a.batch)),
            threads: 128,
            regs: 96,
            smem_static: 0,
            smem_dynamic: smem((KV_TILE + 2.0 * KV_TILE) * a.d * e),
        },
        work,
        MemoryUse {
            l1_bytes: traffic,
            l2_bytes: traffic,
            dram_read_bytes: read,
            dram_write_bytes: write,
            l2_working_set: a.q_bytes(),
            inflight_bytes_per_warp: 1024.0,
        },
    )];
    if splits > 1.0 {
        out.push(rowwise_kernel(
            format!("{name}/flash_fwd_splitkv_combine"),
            KernelKind::Reduction,
            RowPass {
                write: a.q_bytes(),
                flops: [1.0, 1.0, 1.0],
                ..RowPass::read_once(a.bh(), splits * (a.d + 1.0), 4.0)
            },
        ));
    }
    out
}

/// Flash-attention-2 backward: ~2.5x the forward tensor FLOPs (recompute
/// S and P, then dV, dP, dS, dQ, dK), one CTA per 128-key tile re-reading
/// the queries and output gradients it sees and accumulating dQ in fp32
/// with atomics in L2. FP32 runs the memory-efficient backward instead
/// (module docs): 64-key tiles, so its shared memory fits every preset.
pub(crate) fn lower_attention_backward(name: &str, a: AttnShape) -> Vec<KernelSpec> {
    let e = a.e();
    let flash = a.dtype.uses_tensor_cores();
    let k_tile = if flash { Q_TILE } else { MEM_EFFICIENT_Q_TILE };
    let bhq = a.bh() * a.q;
    let mut out = vec![rowwise_kernel(
        format!("{name}/flash_bwd_dot_do_o"),
        KernelKind::Reduction,
        RowPass {
            tensors: 2.0,
            write: bhq * 4.0,
            flops: [0.0, 0.0, 1.0],
            ..RowPass::read_once(bhq, a.d, e)
        },
    )];
    let kv_tiles = ceil_div(a.kv, k_tile);
    let visible = a.scores() / (a.q * a.kv);
    let q_rows_read = a.bh() * (kv_tiles * a.q * visible).max(a.q);
    let dq_acc = bhq * a.d * 4.0;
    let q_side = q_rows_read * a.d * (2.0 * e + 2.0 * 4.0) + q_rows_read * 8.0;
    let expanded_kv = a.bh() * a.kv * a.d * e;
    let dkv_write = 2.0 * expanded_kv;
    let traffic = 2.0 * expanded_kv + q_side + dkv_write;
    let mut work = a.softmax_work(2.0);
    a.products(&mut work, 2.5 * 4.0 * a.bh() * a.scores() * a.d);
    work.other_warp_insts = a.bh() * kv_tiles * ceil_div(a.q * visible, KV_TILE) * 8.0 * 24.0;
    let per_head = a.q * a.d * (2.0 * e + 4.0);
    let kernel_name = if flash {
        format!("{name}/flash_bwd_{}_hdim{}", a.dtype, a.d)
    } else {
        format!("{name}/fmha_cutlassB_f32_aligned_64x64_k{}", a.d)
    };
    out.push(kernel(
        kernel_name,
        KernelKind::Attention,
        Launch {
            grid: Dim3::new(dim(kv_tiles), dim_yz(a.heads), dim_yz(a.batch)),
            threads: 256,
            regs: 255,
            smem_static: 0,
            smem_dynamic: smem((2.0 * k_tile + 3.0 * KV_TILE) * a.d * e),
        },
        work,
        MemoryUse {
            l1_bytes: traffic,
            l2_bytes: traffic,
            dram_read_bytes: 2.0 * a.q_bytes() + 2.0 * a.k_bytes() + bhq * 8.0,
            dram_write_bytes: dkv_write + dq_acc,
            l2_working_set: per_head * a.bh().min(CONCURRENT_HEADS),
            inflight_bytes_per_warp: 2.0 * KV_TILE * a.d * e / 8.0,
        },
    ));
    out.push(streaming_kernel(
        format!("{name}/flash_bwd_convert_dq"),
        KernelKind::Elementwise,
        Stream {
            elements: bhq * a.d,
            read: dq_acc,
            write: a.q_bytes(),
            work: Work {
                fmul: bhq * a.d,
                ..Work::default()
            },
            threads: 256,
            regs: 32,
        },
    ));
    if a.heads > a.kv_heads {
        // dK and dV were computed per query head: sum each GQA group.
        let group = a.heads / a.kv_heads;
        out.push(rowwise_kernel(
            format!("{name}/gqa_sum_dkv"),
            KernelKind::Reduction,
            RowPass {
                write: 2.0 * a.k_bytes(),
                flops: [1.0, 0.0, 0.0],
                ..RowPass::read_once(2.0 * a.batch * a.kv_heads * a.kv * a.d, group, e)
            },
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(q: f64, kv: f64, causal: bool) -> AttnShape {
        AttnShape {
            batch: 2.0,
            heads: 16.0,
            kv_heads: 16.0,
            q,
            kv,
            d: 128.0,
            causal,
            dtype: Dtype::F16,
        }
    }

    #[test]
    fn forward_grid_flops_and_bytes() {
        let k = &lower_attention("a", shape(1024.0, 1024.0, false))[0];
        k.validate().unwrap();
        assert_eq!(k.grid, Dim3::new(8, 16, 2));
        assert_eq!(k.block, Dim3::linear(128));
        assert_eq!(k.work.tensor_flops, 4.0 * 32.0 * 1024.0 * 1024.0 * 128.0);
        let qkv = 32.0 * 1024.0 * 128.0 * 2.0;
        assert_eq!(k.memory.dram_read_bytes, 3.0 * qkv);
        // Every one of the 8 query tiles re-reads K and V through L2.
        assert_eq!(
            k.memory.l2_bytes,
            qkv + 8.0 * 2.0 * qkv + qkv + 32.0 * 1024.0 * 4.0
        );
    }

    #[test]
    fn causal_masking_halves_the_work() {
        let full = &lower_attention("a", shape(4096.0, 4096.0, false))[0];
        let causal = &lower_attention("a", shape(4096.0, 4096.0, true))[0];
        let ratio = causal.work.tensor_flops / full.work.tensor_flops;
        assert!((ratio - 0.5).abs() < 0.001, "{ratio}");
        assert!((causal.work.fmul / full.work.fmul - 0.5).abs() < 0.001);
        assert!(causal.memory.l2_bytes < full.memory.l2_bytes);
        causal.validate().unwrap();
    }

    #[test]
    fn fp32_attention_is_the_memory_efficient_kernel_and_fits_a_v100() {
        let shape = AttnShape {
            batch: 1.0,
            heads: 16.0,
            kv_heads: 16.0,
            q: 512.0,
            kv: 512.0,
            d: 64.0,
            causal: false,
            dtype: Dtype::F32,
        };
        let v100_smem = 96 * 1024;
        let mut kernels = lower_attention("attn", shape);
        kernels.extend(lower_attention_backward("attn.bwd", shape));
        for k in &kernels {
            if k.kind == KernelKind::Attention {
                assert!(!k.name.contains("flash"), "{}", k.name);
            }
            assert!(
                k.shared_mem_per_block() <= v100_smem,
                "{}: {}",
                k.name,
                k.shared_mem_per_block()
            );
        }
        let half = lower_attention(
            "attn",
            AttnShape {
                dtype: Dtype::F16,
                ..shape
            },
        );
        assert!(half[0].name.contains("flash_fwd"), "{}", half[0].name);
    }

    #[test]
    fn decode_is_flash_decoding_plus_combine() {
        let a = AttnShape {
            batch: 8.0,
            heads: 32.0,
            kv_heads: 8.0,
            q: 1.0,
            kv: 2048.0,
            d: 128.0,
            causal: false,
            dtype: Dtype::F16,
        };
        let ks = lower_attention("a", a);
        assert_eq!(ks.len(), 2);
        assert_eq!(ks[0].grid, Dim3::new(8, 8, 8));
        let cache = 2.0 * 8.0 * 8.0 * 2048.0 * 128.0 * 2.0;
        assert_eq!(
            ks[0].memory.dram_read_bytes,
            cache + 8.0 * 32.0 * 128.0 * 2.0
        );
        assert_eq!(ks[0].memory.inflight_bytes_per_warp, 1024.0);
        assert_eq!(ks[1].kind, KernelKind::Reduction);
        assert!(ks[1].memory.dram_read_bytes < ks[0].memory.dram_read_bytes / 20.0);
        for k in &ks {
            k.validate().unwrap();
        }
        // A short cache needs no split and no combine.
        let short = AttnShape { kv: 200.0, ..a };
        assert_eq!(lower_attention("a", short).len(), 1);
    }

    #[test]
    fn backward_is_two_and_a_half_forwards() {
        let a = shape(512.0, 512.0, true);
        let fwd = lower_attention("a", a)[0].work.tensor_flops;
        let bwd = lower_attention_backward("a", a);
        let main = bwd
            .iter()
            .find(|k| k.kind == KernelKind::Attention)
            .unwrap();
        assert_eq!(main.work.tensor_flops, 2.5 * fwd);
        assert_eq!(bwd.len(), 3);
        let gqa = lower_attention_backward("a", AttnShape { kv_heads: 4.0, ..a });
        assert_eq!(gqa.len(), 4);
        for k in bwd.iter().chain(&gqa) {
            k.validate().unwrap();
        }
    }
}
