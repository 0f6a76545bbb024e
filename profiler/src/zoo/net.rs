//! `Net`: the builder the zoo families describe their architectures with —
//! layer helpers that emit the operators eager PyTorch launches for a
//! layer (conv + BN + activation, linear, norms, dropout in training only,
//! cross-entropy loss), tracking CNN activation shapes.

use std::ops::Range;

use crate::model::{
    checkpointed_training_iteration, param_count, ConvBackend, Dtype, OpKind, Operator,
    OptimizerKind, Phase,
};

/// Activation of a CNN layer (NCHW).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Act {
    pub n: u64,
    pub c: u64,
    pub h: u64,
    pub w: u64,
}

impl Act {
    /// A batch of 224x224 RGB images (the ImageNet input).
    pub fn image(n: u64) -> Act {
        Act {
            n,
            c: 3,
            h: 224,
            w: 224,
        }
    }

    pub fn elements(&self) -> u64 {
        self.n * self.c * self.h * self.w
    }
}

/// Activation after a convolution's batch norm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Activation {
    None,
    Relu,
    /// ReLU6 (clamp: two comparisons).
    Relu6,
}

/// A convolution layer's hyper-parameters.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConvCfg {
    pub c_out: u64,
    pub k: u64,
    pub stride: u64,
    pub pad: u64,
    pub groups: u64,
    pub act: Activation,
}

impl ConvCfg {
    /// A square convolution with "same"-style padding `k / 2`.
    pub fn new(c_out: u64, k: u64, stride: u64, act: Activation) -> ConvCfg {
        ConvCfg {
            c_out,
            k,
            stride,
            pad: k / 2,
            groups: 1,
            act,
        }
    }
}

/// The output of a `k`x`k` pooling window of `stride` over `x`.
fn pooled(x: Act, k: u64, stride: u64, pad: u64) -> Act {
    let out = |d: u64| ((d + 2 * pad).saturating_sub(k)) / stride.max(1) + 1;
    Act {
        h: out(x.h),
        w: out(x.w),
        ..x
    }
}

/// Operator list under construction.
#[derive(Debug)]
pub(crate) struct Net {
    pub ops: Vec<Operator>,
    pub phase: Phase,
    pub dtype: Dtype,
    /// Ranges of `ops` whose activations are checkpointed (recomputed in
    /// the backward pass).
    checkpointed: Vec<Range<usize>>,
}

impl Net {
    pub fn new(phase: Phase) -> Net {
        Net {
            ops: Vec::new(),
            phase,
            dtype: Dtype::F16,
            checkpointed: Vec::new(),
        }
    }

    pub fn training(&self) -> bool {
        self.phase == Phase::Training
    }

    /// Checkpoint the operators pushed since `first` (one
    /// `torch.utils.checkpoint` segment, e.g. a transformer layer): in
    /// training they run again right before their backward pass.
    pub fn checkpoint(&mut self, first: usize) {
        if self.training() && first < self.ops.len() {
            self.checkpointed.push(first..self.ops.len());
        }
    }

    pub fn push(&mut self, name: impl Into<String>, op: OpKind) {
        self.ops.push(Operator::new(name, op));
    }

    /// A pointwise op with `inputs` and `outputs` tensors of `elements`.
    pub fn pointwise(&mut self, name: &str, elements: u64, io: (u64, u64), flops: u64) {
        let dtype = self.dtype;
        self.push(
            name,
            OpKind::Elementwise {
                elements,
                inputs: io.0,
                outputs: io.1,
                flops_per_element: flops,
                dtype,
            },
        );
    }

    pub fn add(&mut self, name: &str, elements: u64) {
        self.pointwise(name, elements, (2, 1), 1);
    }

    /// Dropout (training only): writes the output and the keep mask, with
    /// Philox random numbers (~6 FLOPs and integer work per element).
    pub fn dropout(&mut self, name: &str, elements: u64) {
        if self.training() {
            self.pointwise(name, elements, (1, 2), 6);
        }
    }

    /// `nn.Linear` on `tokens` rows (bias fused in the cuBLASLt epilogue).
    pub fn linear(&mut self, name: &str, tokens: u64, inputs: u64, outputs: u64) {
        let dtype = self.dtype;
        self.push(
            name,
            OpKind::Gemm {
                m: tokens,
                n: outputs,
                k: inputs,
                batch: 1,
                dtype,
            },
        );
    }

    pub fn layer_norm(&mut self, name: &str, rows: u64, cols: u64) {
        let dtype = self.dtype;
        self.push(name, OpKind::LayerNorm { rows, cols, dtype });
    }

    pub fn embedding(&mut self, name: &str, tokens: u64, hidden: u64, vocab: u64) {
        let dtype = self.dtype;
        self.push(
            name,
            OpKind::Embedding {
                tokens,
                hidden,
                vocab,
                dtype,
            },
        );
    }

    pub fn reduction(&mut self, name: &str, rows: u64, cols: u64) {
        let dtype = self.dtype;
        self.push(name, OpKind::Reduction { rows, cols, dtype });
    }

    /// A convolution alone (no bias, norm or activation); its output.
    pub fn conv(&mut self, name: &str, x: Act, c: ConvCfg) -> Act {
        let dtype = self.dtype;
        let op = OpKind::Conv2d {
            n: x.n,
            c_in: x.c,
            h: x.h,
            w: x.w,
            c_out: c.c_out,
            kh: c.k,
            kw: c.k,
            stride: c.stride,
            pad: c.pad,
            groups: c.groups,
            dtype,
            backend: ConvBackend::Cudnn,
        };
        let (h, w) = op.conv_output().unwrap_or((1, 1));
        self.push(name, op);
        Act {
            n: x.n,
            c: c.c_out,
            h,
            w,
        }
    }

    /// The activation `act` over `elements` as its own launch.
    pub fn activation(&mut self, name: &str, elements: u64, act: Activation) {
        match act {
            Activation::None => {}
            Activation::Relu => self.pointwise(&format!("{name}.relu"), elements, (1, 1), 1),
            Activation::Relu6 => self.pointwise(&format!("{name}.relu6"), elements, (1, 1), 2),
        }
    }

    /// Batch norm over `x` as eager PyTorch runs it: inference BN is a
    /// per-channel scale and shift; training BN first reduces batch
    /// statistics per channel.
    pub fn batch_norm(&mut self, name: &str, x: Act) {
        if self.training() {
            self.reduction(&format!("{name}.bn_stats"), x.c, x.n * x.h * x.w);
        }
        self.pointwise(&format!("{name}.bn"), x.elements(), (1, 1), 2);
    }

    /// Conv, batch norm and activation as separate launches (eager
    /// PyTorch).
    pub fn conv_bn(&mut self, name: &str, x: Act, c: ConvCfg) -> Act {
        let y = self.conv(&format!("{name}.conv"), x, c);
        self.batch_norm(name, y);
        self.activation(name, y.elements(), c.act);
        y
    }

    /// Conv with a bias and its activation (a network without batch norm:
    /// VGG): cuDNN adds the bias as its own launch after the convolution.
    pub fn conv_bias(&mut self, name: &str, x: Act, c: ConvCfg) -> Act {
        let y = self.conv(&format!("{name}.conv"), x, c);
        self.pointwise(&format!("{name}.bias"), y.elements(), (1, 1), 1);
        self.activation(name, y.elements(), c.act);
        y
    }

    /// A `k`x`k` max pool of stride `stride` (padding `pad`) as CUDA
    /// PyTorch runs it (`max_pool2d_with_indices`: the int64 index of each
    /// output is written beside it, four f16 words); its output.
    pub fn max_pool(&mut self, name: &str, x: Act, k: u64, stride: u64, pad: u64) -> Act {
        let y = pooled(x, k, stride, pad);
        self.pointwise(name, y.elements(), (k * k, 5), k * k);
        y
    }

    /// A `k`x`k` average pool (one read per window element, one output).
    pub fn avg_pool(&mut self, name: &str, x: Act, k: u64, stride: u64, pad: u64) -> Act {
        let y = pooled(x, k, stride, pad);
        self.pointwise(name, y.elements(), (k * k, 1), k * k);
        y
    }

    /// `torch.cat` of `parts` along channels: one launch copying them all.
    pub fn concat(&mut self, name: &str, parts: &[Act]) -> Act {
        let first = parts[0];
        let c = parts.iter().map(|p| p.c).sum();
        let y = Act { c, ..first };
        self.pointwise(name, y.elements(), (1, 1), 0);
        y
    }

    /// Cross-entropy loss over `rows` x `classes` logits (training only):
    /// AMP casts the logits to f32, then log-softmax and NLL.
    pub fn cross_entropy(&mut self, rows: u64, classes: u64) {
        if !self.training() {
            return;
        }
        // f16 in, f32 out: the output is two f16-sized words per element.
        self.pointwise("loss.cast_f32", rows * classes, (1, 2), 0);
        self.push(
            "loss.log_softmax",
            OpKind::Softmax {
                rows,
                cols: classes,
                dtype: Dtype::F32,
            },
        );
        self.push(
            "loss.nll",
            OpKind::Reduction {
                rows: 1,
                cols: rows,
                dtype: Dtype::F32,
            },
        );
    }
}

impl Net {
    /// The operator list: the forward pass, or for training the whole
    /// iteration with `optimizer` over the parameters (less `tied` weights
    /// shared between an embedding and an output projection).
    pub fn finish(self, optimizer: OptimizerKind, tied: u64) -> Vec<Operator> {
        if self.training() {
            let params = param_count(&self.ops).saturating_sub(tied);
            checkpointed_training_iteration(self.ops, &self.checkpointed, optimizer, params)
        } else {
            self.ops
        }
    }
}
