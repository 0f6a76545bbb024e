//! `ConvBackend`: which library runs a convolution — cuDNN's implicit-GEMM
//! kernels (PyTorch's default) or PyTorch's own per-sample im2col and GEMM,
//! which is what a PyTorch built without cuDNN runs. The Tally artifact's
//! image builds PyTorch 2.2 and torchvision with `USE_CUDNN=0` (tally-bench
//! `docker/Dockerfile.base`), so that every kernel its jobs launch is one
//! Tally can transform.

use serde::{Deserialize, Serialize};

/// The library a convolution runs in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConvBackend {
    /// cuDNN: implicit-GEMM kernels over the whole batch.
    #[default]
    Cudnn,
    /// PyTorch without cuDNN (`at::native::slow_conv2d`, ATen's
    /// `ConvolutionMM2d.cu`): for each sample of the batch, an im2col
    /// kernel (skipped for 1x1 stride-1 convolutions) and a GEMM through
    /// cuBLAS; backward, per sample, the data-gradient GEMM and col2im, then
    /// per sample im2col and the weight-gradient GEMM.
    Native,
}

impl ConvBackend {
    pub(crate) fn is_cudnn(&self) -> bool {
        *self == ConvBackend::Cudnn
    }
}
