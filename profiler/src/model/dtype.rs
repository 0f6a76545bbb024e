//! `Dtype`: the element type of an operator's tensors, which sets bytes per
//! element and which arithmetic pipe a GEMM-class kernel uses.
//!
//! `Tf32` is FP32 storage whose products run on the tensor cores in
//! TensorFloat-32 at half the FP16 rate: 156 against 312 dense TFLOPS on
//! A100 (NVIDIA A100 Tensor Core GPU Architecture whitepaper, table 1),
//! 495 against 989 on H100 SXM (H100 whitepaper, table 2). It is what an
//! FP32 PyTorch model's convolutions run as on Ampere and later:
//! `torch.backends.cudnn.allow_tf32` defaults to true, while
//! `torch.backends.cuda.matmul.allow_tf32` defaults to false since PyTorch
//! 1.12, so FP32 matmuls stay on the FFMA pipe (PyTorch docs, "CUDA
//! semantics: TensorFloat-32 (TF32) on Ampere (and later) devices").

use serde::{Deserialize, Serialize};

/// Tensor element type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// IEEE half precision; the mixed-precision default.
    #[default]
    F16,
    Bf16,
    F32,
    /// FP32 tensors, products in TensorFloat-32 on the tensor cores.
    Tf32,
}

impl Dtype {
    /// Bytes per element.
    pub fn bytes(self) -> u64 {
        match self {
            Dtype::F16 | Dtype::Bf16 => 2,
            Dtype::F32 | Dtype::Tf32 => 4,
        }
    }

    /// Bytes per element as a float, for traffic arithmetic.
    pub(crate) fn size(self) -> f64 {
        self.bytes() as f64
    }

    /// Whether GEMM-class kernels of this type run on tensor cores (F32
    /// GEMMs without TF32 run on the FFMA pipe, as cuBLAS does by default).
    pub fn uses_tensor_cores(self) -> bool {
        !matches!(self, Dtype::F32)
    }

    /// Tensor-core work of one product FLOP in FP16-rate FLOPs: TF32 runs
    /// at half the FP16 rate (module docs), the 16-bit types at the rate
    /// the GPU spec's `tensor_flops_per_cycle` gives.
    pub fn tensor_flop_cost(self) -> f64 {
        match self {
            Dtype::Tf32 => 2.0,
            _ => 1.0,
        }
    }

    /// The type an operator of an FP32 PyTorch model runs in: 16-bit types
    /// become FP32, and convolutions TF32 (module docs).
    pub fn in_fp32_model(self, convolution: bool) -> Dtype {
        match (self, convolution) {
            (Dtype::F16 | Dtype::Bf16 | Dtype::F32, true) => Dtype::Tf32,
            (Dtype::F16 | Dtype::Bf16, false) => Dtype::F32,
            (d, _) => d,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
            Dtype::F32 => "f32",
            Dtype::Tf32 => "tf32",
        }
    }
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
