//! `OpKind`: what an operator computes and its shape — the serde-visible
//! vocabulary shared by the zoo and user model files — plus shape checks
//! and the derived quantities (parameter count, conv output size).

use serde::{Deserialize, Serialize};

use super::{ConvBackend, Dtype};

fn one() -> u64 {
    1
}

fn is_one(v: &u64) -> bool {
    *v == 1
}

/// Optimizer algorithm of an `Optimizer` operator.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OptimizerKind {
    /// Adam(W) with fp32 master weights, m and v (apex / torch fused).
    #[default]
    Adam,
    /// SGD with momentum, fp32 parameters.
    Sgd,
}

/// An operator's computation and shape. Dimensions are element counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum OpKind {
    /// `C[m,n] = A[m,k] B[k,n]`, `batch` independent products. For a linear
    /// layer `B` is the weight (`k` inputs, `n` outputs, `m` tokens).
    Gemm {
        m: u64,
        n: u64,
        k: u64,
        #[serde(default = "one", skip_serializing_if = "is_one")]
        batch: u64,
        #[serde(default)]
        dtype: Dtype,
    },
    /// 2-D convolution, NCHW semantics.
    Conv2d {
        n: u64,
        c_in: u64,
        h: u64,
        w: u64,
        c_out: u64,
        kh: u64,
        kw: u64,
        #[serde(default = "one")]
        stride: u64,
        #[serde(default)]
        pad: u64,
        #[serde(default = "one", skip_serializing_if = "is_one")]
        groups: u64,
        #[serde(default)]
        dtype: Dtype,
        /// The library that runs it (default cuDNN).
        #[serde(default, skip_serializing_if = "ConvBackend::is_cudnn")]
        backend: ConvBackend,
    },
    /// Pointwise map over `elements`: relu, add, gelu, silu*mul, bias,
    /// dropout, cast, batch-norm inference. `flops_per_element` counts FP32
    /// FLOPs (PyTorch computes in f32 even for f16 tensors).
    Elementwise {
        elements: u64,
        inputs: u64,
        outputs: u64,
        flops_per_element: u64,
        #[serde(default)]
        dtype: Dtype,
    },
    /// Sum / mean / max of each of `rows` rows over `cols` (pooling, loss).
    Reduction {
        rows: u64,
        cols: u64,
        #[serde(default)]
        dtype: Dtype,
    },
    /// Softmax (or log-softmax) of each row.
    Softmax {
        rows: u64,
        cols: u64,
        #[serde(default)]
        dtype: Dtype,
    },
    /// LayerNorm or RMSNorm of each row.
    LayerNorm {
        rows: u64,
        cols: u64,
        #[serde(default)]
        dtype: Dtype,
    },
    /// Fused (flash) attention; `q_len == 1` is the decode case.
    Attention {
        batch: u64,
        heads: u64,
        kv_heads: u64,
        q_len: u64,
        kv_len: u64,
        head_dim: u64,
        #[serde(default)]
        causal: bool,
        #[serde(default)]
        dtype: Dtype,
    },
    /// Embedding lookup (gather) of `tokens` rows of a `vocab` x `hidden` table.
    Embedding {
        tokens: u64,
        hidden: u64,
        vocab: u64,
        #[serde(default)]
        dtype: Dtype,
    },
    /// One optimizer step over `params` parameters (fused multi-tensor apply).
    Optimizer {
        params: u64,
        #[serde(default)]
        kind: OptimizerKind,
    },
    /// A device-to-device copy of `bytes` (KV-cache append, transpose, concat).
    Copy { bytes: u64 },
}

impl OpKind {
    /// The serde tag of this kind (`"gemm"`, `"conv2d"`, ...).
    pub fn tag(&self) -> &'static str {
        match self {
            OpKind::Gemm { .. } => "gemm",
            OpKind::Conv2d { .. } => "conv2d",
            OpKind::Elementwise { .. } => "elementwise",
            OpKind::Reduction { .. } => "reduction",
            OpKind::Softmax { .. } => "softmax",
            OpKind::LayerNorm { .. } => "layer_norm",
            OpKind::Attention { .. } => "attention",
            OpKind::Embedding { .. } => "embedding",
            OpKind::Optimizer { .. } => "optimizer",
            OpKind::Copy { .. } => "copy",
        }
    }

    /// The element type of the operator's tensors, where it has one.
    pub fn dtype_mut(&mut self) -> Option<&mut Dtype> {
        match self {
            OpKind::Gemm { dtype, .. }
            | OpKind::Conv2d { dtype, .. }
            | OpKind::Elementwise { dtype, .. }
            | OpKind::Reduction { dtype, .. }
            | OpKind::Softmax { dtype, .. }
            | OpKind::LayerNorm { dtype, .. }
            | OpKind::Attention { dtype, .. }
            | OpKind::Embedding { dtype, .. } => Some(dtype),
            OpKind::Optimizer { .. } | OpKind::Copy { .. } => None,
        }
    }

    /// Trainable parameters the operator owns. A batched GEMM multiplies two
    /// activations (no weight); an unbatched one is a linear layer whose
    /// weight is `B`. Norm scale/shift are counted; BN expressed as an
    /// elementwise op carries no parameter count (negligible).
    pub fn param_count(&self) -> u64 {
        match *self {
            OpKind::Gemm { n, k, batch: 1, .. } => n * k,
            OpKind::Conv2d {
                c_in,
                c_out,
                kh,
                kw,
                groups,
                ..
            } => c_out * (c_in / groups.max(1)) * kh * kw,
            OpKind::LayerNorm { cols, .. } => 2 * cols,
            OpKind::Embedding { hidden, vocab, .. } => hidden * vocab,
            _ => 0,
        }
    }

    /// Output height and width of a convolution (`None` for other kinds).
    pub fn conv_output(&self) -> Option<(u64, u64)> {
        match *self {
            OpKind::Conv2d {
                h,
                w,
                kh,
                kw,
                stride,
                pad,
                ..
            } => {
                let s = stride.max(1);
                let ho = (h + 2 * pad).checked_sub(kh)? / s + 1;
                let wo = (w + 2 * pad).checked_sub(kw)? / s + 1;
                Some((ho, wo))
            }
            _ => None,
        }
    }

    /// Check the shape describes a computation that exists: every dimension
    /// positive and the fields consistent. The error is `(field, reason)`.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        for (field, v) in self.positive_fields() {
            if v == 0 {
                return Err((field, "must be > 0".into()));
            }
        }
        match *self {
            OpKind::Conv2d {
                c_in,
                c_out,
                groups,
                ..
            } => {
                if c_in % groups != 0 || c_out % groups != 0 {
                    return Err((
                        "groups",
                        format!("({groups}) must divide c_in ({c_in}) and c_out ({c_out})"),
                    ));
                }
                if self.conv_output().is_none() {
                    return Err((
                        "kh",
                        "kernel is larger than the padded input (h + 2*pad < kh or w + 2*pad < kw)"
                            .into(),
                    ));
                }
            }
            OpKind::Attention {
                heads,
                kv_heads,
                q_len,
                kv_len,
                causal,
                ..
            } => {
                if heads % kv_heads != 0 {
                    return Err((
                        "kv_heads",
                        format!("({kv_heads}) must divide heads ({heads})"),
                    ));
                }
                if causal && kv_len < q_len {
                    return Err((
                        "kv_len",
                        format!("({kv_len}) must be >= q_len ({q_len}) for causal attention"),
                    ));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The fields that must be positive, by name.
    fn positive_fields(&self) -> Vec<(&'static str, u64)> {
        match *self {
            OpKind::Gemm { m, n, k, batch, .. } => {
                vec![("m", m), ("n", n), ("k", k), ("batch", batch)]
            }
            OpKind::Conv2d {
                n,
                c_in,
                h,
                w,
                c_out,
                kh,
                kw,
                stride,
                groups,
                ..
            } => vec![
                ("n", n),
                ("c_in", c_in),
                ("h", h),
                ("w", w),
                ("c_out", c_out),
                ("kh", kh),
                ("kw", kw),
                ("stride", stride),
                ("groups", groups),
            ],
            OpKind::Elementwise {
                elements, outputs, ..
            } => vec![("elements", elements), ("outputs", outputs)],
            OpKind::Reduction { rows, cols, .. }
            | OpKind::Softmax { rows, cols, .. }
            | OpKind::LayerNorm { rows, cols, .. } => vec![("rows", rows), ("cols", cols)],
            OpKind::Attention {
                batch,
                heads,
                kv_heads,
                q_len,
                kv_len,
                head_dim,
                ..
            } => vec![
                ("batch", batch),
                ("heads", heads),
                ("kv_heads", kv_heads),
                ("q_len", q_len),
                ("kv_len", kv_len),
                ("head_dim", head_dim),
            ],
            OpKind::Embedding {
                tokens,
                hidden,
                vocab,
                ..
            } => vec![("tokens", tokens), ("hidden", hidden), ("vocab", vocab)],
            OpKind::Optimizer { params, .. } => vec![("params", params)],
            OpKind::Copy { bytes } => vec![("bytes", bytes)],
        }
    }
}
