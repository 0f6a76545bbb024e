//! Convolutions as PyTorch runs them without cuDNN (`ConvBackend::Native`:
//! ATen's `ConvolutionMM2d.cu`, `slow_conv2d`): a loop over the samples of
//! the batch, each an im2col kernel gathering the sample's input windows
//! into a `(C_in / groups x kh x kw) x (Ho x Wo)` column buffer (skipped
//! for 1x1 stride-1 convolutions, whose input already is that matrix) and
//! one GEMM through cuBLAS, `weight x columns`. Backward, two loops over
//! the samples: the data gradient (`weight^T x grad_out`, then col2im
//! summing the columns back into the input's shape) and then the weight
//! gradient (im2col again, then `grad_out x columns^T` accumulated into the
//! weight gradient). The GEMMs are the ordinary GEMM lowering (FP32 on the
//! FFMA pipe unless the dtype says otherwise, as cuBLAS runs PyTorch's
//! FP32 matmuls by default), so a batch of 128 turns one convolution into
//! 128 small GEMMs that each fill only part of the GPU.

use tally_gpu::{KernelKind, KernelSpec, Work};

use super::builder::{streaming_kernel, Stream};
use super::conv::ConvShape;
use super::gemm::{lower_gemm, GemmShape};

/// Threads per block of ATen's im2col / col2im kernels (`CUDA_NUM_THREADS`).
const COLUMN_THREADS: u32 = 1024;

impl ConvShape {
    /// Whether the native path gathers columns: all but 1x1 stride-1.
    fn needs_columns(&self) -> bool {
        !(self.kh == 1.0 && self.kw == 1.0 && self.stride == 1.0)
    }

    /// Rows of one group's column buffer: `C_in / groups x kh x kw`.
    fn column_rows(&self) -> f64 {
        self.c_in / self.groups * self.kh * self.kw
    }

    /// Elements of one sample's column buffer, all groups.
    fn column_elements(&self) -> f64 {
        self.column_rows() * self.groups * self.ho * self.wo
    }

    fn sample_input_bytes(&self) -> f64 {
        self.c_in * self.h * self.w * self.dtype.size()
    }

    fn gemm(&self, m: f64, n: f64, k: f64) -> GemmShape {
        GemmShape {
            m,
            n,
            k,
            batch: self.groups,
            dtype: self.dtype,
            library: self.gemm_library,
        }
    }
}

/// One sample's im2col: reads the sample's input (each pixel once from
/// DRAM, the overlapping windows from cache) and writes its columns.
fn im2col(name: &str, c: &ConvShape) -> KernelSpec {
    let columns = c.column_elements() * c.dtype.size();
    streaming_kernel(
        format!("{name}/im2col_kernel_{}", c.dtype),
        KernelKind::Elementwise,
        Stream {
            elements: c.column_elements(),
            read: c.sample_input_bytes().min(columns),
            write: columns,
            work: Work::default(),
            threads: COLUMN_THREADS,
            regs: 32,
        },
    )
}

/// One sample's col2im: each input pixel sums the column entries of the
/// windows that cover it.
fn col2im(name: &str, c: &ConvShape) -> KernelSpec {
    let columns = c.column_elements() * c.dtype.size();
    streaming_kernel(
        format!("{name}/col2im_kernel_{}", c.dtype),
        KernelKind::Elementwise,
        Stream {
            elements: c.c_in * c.h * c.w,
            read: columns,
            write: c.sample_input_bytes(),
            work: Work {
                fadd: c.column_elements(),
                ..Work::default()
            },
            threads: COLUMN_THREADS,
            regs: 32,
        },
    )
}

/// `per_sample` launched once for each sample of the batch, in order.
fn each_sample(c: &ConvShape, per_sample: Vec<KernelSpec>) -> Vec<KernelSpec> {
    let samples = c.n.max(1.0) as usize;
    let mut out = Vec::with_capacity(per_sample.len() * samples);
    for _ in 0..samples {
        out.extend(per_sample.iter().cloned());
    }
    out
}

/// Forward: per sample, im2col (where needed) and `weight x columns`.
pub(crate) fn forward(name: &str, c: &ConvShape) -> Vec<KernelSpec> {
    let mut per_sample = Vec::new();
    if c.needs_columns() {
        per_sample.push(im2col(name, c));
    }
    let gemm = c.gemm(c.c_out / c.groups, c.ho * c.wo, c.column_rows());
    per_sample.extend(lower_gemm(name, KernelKind::Gemm, gemm));
    each_sample(c, per_sample)
}

/// Backward: the data-gradient loop, then the weight-gradient loop.
pub(crate) fn backward(name: &str, c: &ConvShape) -> Vec<KernelSpec> {
    let dgrad_name = format!("{name}.dgrad");
    let mut dgrad = lower_gemm(
        &dgrad_name,
        KernelKind::Gemm,
        c.gemm(c.column_rows(), c.ho * c.wo, c.c_out / c.groups),
    );
    if c.needs_columns() {
        dgrad.push(col2im(&dgrad_name, c));
    }
    let wgrad_name = format!("{name}.wgrad");
    let mut wgrad = Vec::new();
    if c.needs_columns() {
        wgrad.push(im2col(&wgrad_name, c));
    }
    wgrad.extend(lower_gemm(
        &wgrad_name,
        KernelKind::Gemm,
        c.gemm(c.c_out / c.groups, c.column_rows(), c.ho * c.wo),
    ));
    let mut out = each_sample(c, dgrad);
    out.extend(each_sample(c, wgrad));
    out
}
