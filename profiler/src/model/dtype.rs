//! `Dtype`: the element type of an operator's tensors, which sets bytes per
//! element and which arithmetic pipe a GEMM-class kernel uses.

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
}

impl Dtype {
    /// Bytes per element.
    pub fn bytes(self) -> u64 {
        match self {
            Dtype::F16 | Dtype::Bf16 => 2,
            Dtype::F32 => 4,
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

    pub fn as_str(self) -> &'static str {
        match self {
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
            Dtype::F32 => "f32",
        }
    }
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
