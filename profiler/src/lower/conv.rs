//! Convolution lowering as cuDNN launches it: implicit-GEMM kernels for
//! dense and grouped convolutions (forward, dgrad and wgrad), whose im2col
//! operand is gathered through L1 so overlapping windows partly hit there,
//! and direct memory-bound kernels for depthwise convolutions (as PyTorch's
//! `conv_depthwise2d_*` kernels).

use tally_gpu::{Dim3, KernelKind, KernelSpec, MemoryUse, Work};

use super::builder::{ceil_div, clamp_memory, dim, kernel, Launch};
use super::gemm::{plan, tiled, GemmShape};
use crate::model::{Dtype, GemmLibrary};

/// A convolution's shape, output size included, as floats for traffic math.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConvShape {
    pub n: f64,
    pub c_in: f64,
    pub h: f64,
    pub w: f64,
    pub c_out: f64,
    pub kh: f64,
    pub kw: f64,
    pub stride: f64,
    pub groups: f64,
    pub ho: f64,
    pub wo: f64,
    pub dtype: Dtype,
    /// The library of the GEMMs PyTorch's own (cuDNN-less) convolution
    /// calls; cuDNN's kernels are cuDNN's whatever it is.
    pub gemm_library: GemmLibrary,
}

impl ConvShape {
    fn e(&self) -> f64 {
        self.dtype.size()
    }
    fn input_bytes(&self) -> f64 {
        self.n * self.c_in * self.h * self.w * self.e()
    }
    fn output_bytes(&self) -> f64 {
        self.n * self.c_out * self.ho * self.wo * self.e()
    }
    fn weight_bytes(&self) -> f64 {
        self.c_out * self.c_in / self.groups * self.kh * self.kw * self.e()
    }
    /// Input bytes the windows actually touch (a strided 1x1 conv skips
    /// pixels).
    fn touched_input_bytes(&self) -> f64 {
        let im2col = self.n * self.ho * self.wo * self.c_in * self.kh * self.kw * self.e();
        self.input_bytes().min(im2col)
    }
    /// How many windows read each input pixel.
    fn overlap(&self) -> f64 {
        (self.kh * self.kw / (self.stride * self.stride)).max(1.0)
    }
    pub(super) fn is_depthwise(&self) -> bool {
        self.groups > 1.0 && self.groups == self.c_in
    }
}

/// Compulsory traffic of an implicit-GEMM pass and which operand is the
/// im2col gather.
struct ConvTraffic {
    dram_read: f64,
    dram_write: f64,
    im2col_is_a: bool,
}

/// An implicit GEMM: the tiled GEMM lowering with conv-specific memory
/// behaviour. Overlapping windows make neighbouring im2col rows share input
/// pixels, so part of the gathered operand hits in L1 (up to half of it for
/// large overlaps) and L2 sees less than L1.
fn implicit_gemm(name: &str, s: GemmShape, overlap: f64, t: ConvTraffic) -> Vec<KernelSpec> {
    let p = plan(&s);
    let e = s.dtype.size();
    let tiles = p.tiles_m * p.tiles_n * s.batch;
    let gathered = if t.im2col_is_a {
        tiles * p.tile.bm * s.k * e
    } else {
        tiles * p.tile.bn * s.k * e
    };
    let mut kernels = tiled(name, KernelKind::Conv, s, "implicit_gemm");
    let m = &mut kernels[0].memory;
    m.l2_bytes -= gathered * 0.5 * (1.0 - 1.0 / overlap);
    m.dram_read_bytes = t.dram_read;
    if p.splits <= 1.0 {
        m.dram_write_bytes = t.dram_write;
    }
    m.l2_working_set = m.l2_working_set.min(t.dram_read);
    clamp_memory(m);
    kernels
}

/// A direct (non-GEMM) convolution kernel: one thread per `items`, or an
/// explicit grid.
struct Direct {
    grid: f64,
    l1: f64,
    read: f64,
    write: f64,
    ffma: f64,
    working_set: f64,
}

fn direct(name: String, d: Direct) -> KernelSpec {
    kernel(
        name,
        KernelKind::Conv,
        Launch::simple(Dim3::linear(dim(d.grid)), 256, 32),
        Work {
            ffma: d.ffma,
            // Index math and one load per tap.
            other_warp_insts: (d.ffma / 32.0 * 3.0).ceil(),
            ..Work::default()
        },
        MemoryUse {
            l1_bytes: d.l1 + d.write,
            l2_bytes: d.read + d.write,
            dram_read_bytes: d.read,
            dram_write_bytes: d.write,
            l2_working_set: d.working_set,
            inflight_bytes_per_warp: 512.0,
        },
    )
}

/// Forward convolution.
pub(crate) fn lower_conv(name: &str, c: ConvShape) -> Vec<KernelSpec> {
    let taps = c.kh * c.kw;
    let outputs = c.n * c.c_out * c.ho * c.wo;
    if c.is_depthwise() {
        // Each output reads its kh*kw window through L1.
        return vec![direct(
            format!("{name}/conv_depthwise2d_fwd_{}", c.dtype),
            Direct {
                grid: ceil_div(outputs, 256.0),
                l1: outputs * taps * c.e() + c.weight_bytes(),
                read: c.input_bytes() + c.weight_bytes(),
                write: c.output_bytes(),
                ffma: outputs * taps,
                working_set: c.weight_bytes(),
            },
        )];
    }
    // cuDNN's kernels, which the Tally client does not replace.
    let s = GemmShape {
        m: c.n * c.ho * c.wo,
        n: c.c_out / c.groups,
        k: c.c_in / c.groups * taps,
        batch: c.groups,
        dtype: c.dtype,
        library: GemmLibrary::Cublas,
    };
    implicit_gemm(
        name,
        s,
        c.overlap(),
        ConvTraffic {
            dram_read: c.touched_input_bytes() + c.weight_bytes(),
            dram_write: c.output_bytes(),
            im2col_is_a: true,
        },
    )
}

/// Backward convolution: data gradient then weight gradient.
pub(crate) fn lower_conv_backward(name: &str, c: ConvShape) -> Vec<KernelSpec> {
    let taps = c.kh * c.kw;
    let macs = c.n * c.c_out * c.ho * c.wo * taps;
    if c.is_depthwise() {
        let inputs = c.n * c.c_in * c.h * c.w;
        // wgrad: one block per weight tap reducing over batch and space;
        // blocks of one channel run together and share its slices in L2.
        let per_weight = c.n * c.ho * c.wo * 2.0 * c.e();
        let per_channel = (c.input_bytes() + c.output_bytes()) / c.c_out;
        return vec![
            direct(
                format!("{name}.dgrad/conv_depthwise2d_bwd_{}", c.dtype),
                Direct {
                    grid: ceil_div(inputs, 256.0),
                    l1: inputs * (taps / (c.stride * c.stride)).max(1.0) * c.e(),
                    read: c.output_bytes() + c.weight_bytes(),
                    write: c.input_bytes(),
                    ffma: macs,
                    working_set: c.weight_bytes(),
                },
            ),
            direct(
                format!("{name}.wgrad/conv_depthwise2d_grad_weight_{}", c.dtype),
                Direct {
                    grid: c.c_out * taps,
                    l1: c.c_out * taps * per_weight,
                    read: c.input_bytes() + c.output_bytes(),
                    write: c.weight_bytes(),
                    ffma: macs,
                    working_set: per_channel * c.c_out.min(64.0),
                },
            ),
        ];
    }
    // Strided dgrad is decomposed into stride^2 dense sub-problems (as
    // cuDNN does), so it does the forward's MACs, not stride^2 times more.
    let dgrad = GemmShape {
        m: c.n * c.h * c.w,
        n: c.c_in / c.groups,
        k: (c.c_out / c.groups * taps * (c.ho * c.wo) / (c.h * c.w)).ceil(),
        batch: c.groups,
        dtype: c.dtype,
        library: GemmLibrary::Cublas,
    };
    let wgrad = GemmShape {
        m: c.c_out / c.groups,
        n: c.c_in / c.groups * taps,
        k: c.n * c.ho * c.wo,
        batch: c.groups,
        dtype: c.dtype,
        library: GemmLibrary::Cublas,
    };
    let mut out = implicit_gemm(
        &format!("{name}.dgrad"),
        dgrad,
        c.overlap(),
        ConvTraffic {
            dram_read: c.output_bytes() + c.weight_bytes(),
            dram_write: c.input_bytes(),
            im2col_is_a: true,
        },
    );
    out.extend(implicit_gemm(
        &format!("{name}.wgrad"),
        wgrad,
        c.overlap(),
        ConvTraffic {
            dram_read: c.touched_input_bytes() + c.output_bytes(),
            dram_write: c.weight_bytes(),
            im2col_is_a: false,
        },
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ConvBackend, OpKind};

    fn conv(c_in: u64, c_out: u64, k: u64, stride: u64, groups: u64) -> (OpKind, ConvShape) {
        let op = OpKind::Conv2d {
            n: 32,
            c_in,
            h: 56,
            w: 56,
            c_out,
            kh: k,
            kw: k,
            stride,
            pad: k / 2,
            groups,
            dtype: Dtype::F16,
            backend: ConvBackend::Cudnn,
        };
        let (ho, wo) = op.conv_output().unwrap();
        let f = |v: u64| v as f64;
        let shape = ConvShape {
            n: 32.0,
            c_in: f(c_in),
            h: 56.0,
            w: 56.0,
            c_out: f(c_out),
            kh: f(k),
            kw: f(k),
            stride: f(stride),
            groups: f(groups),
            ho: f(ho),
            wo: f(wo),
            dtype: Dtype::F16,
            gemm_library: GemmLibrary::Cublas,
        };
        (op, shape)
    }

    #[test]
    fn output_size_arithmetic() {
        let stem = OpKind::Conv2d {
            n: 1,
            c_in: 3,
            h: 224,
            w: 224,
            c_out: 64,
            kh: 7,
            kw: 7,
            stride: 2,
            pad: 3,
            groups: 1,
            dtype: Dtype::F16,
            backend: ConvBackend::Cudnn,
        };
        assert_eq!(stem.conv_output(), Some((112, 112)));
        assert_eq!(conv(64, 64, 3, 2, 1).0.conv_output(), Some((28, 28)));
        assert_eq!(conv(64, 256, 1, 1, 1).0.conv_output(), Some((56, 56)));
    }

    #[test]
    fn dense_conv_is_an_implicit_gemm() {
        let (_, c) = conv(64, 64, 3, 1, 1);
        let ks = lower_conv("c", c);
        let k = &ks[0];
        k.validate().unwrap();
        assert_eq!(k.kind, KernelKind::Conv);
        let m = 32.0 * 56.0 * 56.0;
        assert_eq!(k.work.tensor_flops, 2.0 * m * 64.0 * 64.0 * 9.0);
        let input = 32.0 * 64.0 * 56.0 * 56.0 * 2.0;
        assert_eq!(k.memory.dram_read_bytes, input + 64.0 * 64.0 * 9.0 * 2.0);
        assert_eq!(k.memory.dram_write_bytes, input);
        // Overlapping 3x3 windows hit in L1: L2 sees less than L1.
        assert!(k.memory.l2_bytes < k.memory.l1_bytes);
        let (_, pointwise) = conv(64, 256, 1, 1, 1);
        let p = &lower_conv("c", pointwise)[0];
        assert_eq!(p.memory.l2_bytes, p.memory.l1_bytes);
    }

    #[test]
    fn depthwise_conv_is_a_direct_memory_bound_kernel() {
        let (_, c) = conv(96, 96, 3, 1, 96);
        let ks = lower_conv("dw", c);
        assert_eq!(ks.len(), 1);
        let k = &ks[0];
        k.validate().unwrap();
        assert_eq!(k.block, Dim3::linear(256));
        assert_eq!(k.work.tensor_flops, 0.0);
        assert_eq!(k.work.ffma, 32.0 * 96.0 * 56.0 * 56.0 * 9.0);
        assert!(k.arithmetic_intensity() < 10.0);
        assert_eq!(k.memory.inflight_bytes_per_warp, 512.0);
    }

    #[test]
    fn backward_has_dgrad_and_wgrad_with_forward_macs() {
        for (c_in, c_out, k, stride, groups) in
            [(64, 64, 3, 1, 1), (64, 128, 1, 2, 1), (96, 96, 3, 2, 96)]
        {
            let (_, c) = conv(c_in, c_out, k, stride, groups);
            let fwd: f64 = lower_conv("c", c)
                .iter()
                .map(|k| k.work.total_flops())
                .sum();
            let bwd = lower_conv_backward("c", c);
            assert!(bwd.iter().any(|k| k.name.starts_with("c.dgrad/")));
            assert!(bwd.iter().any(|k| k.name.starts_with("c.wgrad/")));
            let main: Vec<f64> = bwd
                .iter()
                .filter(|k| k.kind == KernelKind::Conv)
                .map(|k| k.work.total_flops())
                .collect();
            assert_eq!(main.len(), 2);
            for f in main {
                assert!((f / fwd - 1.0).abs() < 0.05, "{f} vs {fwd}");
            }
            for k in &bwd {
                k.validate().unwrap();
            }
        }
    }
}
