//! Lowering: how libraries (cuBLAS / CUTLASS, cuDNN, PyTorch, Apex,
//! flash-attention) launch each operator, as `KernelSpec`s whose launch
//! configuration, work and memory behaviour are physically consistent and
//! independent of the GPU. One file per operator family; shared builders in
//! `builder`.

mod attention;
mod builder;
mod conv;
mod conv_native;
mod elementwise;
mod gemm;
mod optimizer;
mod rowwise;

use tally_gpu::{KernelKind, KernelSpec};

use crate::model::{ConvBackend, GemmLibrary, OpKind};
use attention::AttnShape;
use conv::ConvShape;
use gemm::GemmShape;
use rowwise::RowOp;

/// The kernels one instance of `op` launches, forward or backward, named
/// `<operator>/<library kernel>`, its matrix products in `gemm_library`.
pub(crate) fn lower(
    name: &str,
    op: &OpKind,
    backward: bool,
    gemm_library: GemmLibrary,
) -> Vec<KernelSpec> {
    // Shapes are converted to floats once: traffic and FLOP arithmetic can
    // then never overflow, and absurd sizes surface as validation errors.
    let f = |v: u64| v as f64;
    match *op {
        OpKind::Gemm {
            m,
            n,
            k,
            batch,
            dtype,
        } => {
            let s = GemmShape {
                m: f(m),
                n: f(n),
                k: f(k),
                batch: f(batch),
                dtype,
                library: gemm_library,
            };
            if backward {
                gemm::lower_gemm_backward(name, s)
            } else {
                gemm::lower_gemm(name, KernelKind::Gemm, s)
            }
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
            dtype,
            backend,
            ..
        } => {
            let (ho, wo) = op.conv_output().unwrap_or((1, 1));
            let c = ConvShape {
                n: f(n),
                c_in: f(c_in),
                h: f(h),
                w: f(w),
                c_out: f(c_out),
                kh: f(kh),
                kw: f(kw),
                stride: f(stride.max(1)),
                groups: f(groups.max(1)),
                ho: f(ho),
                wo: f(wo),
                dtype,
                gemm_library,
            };
            // PyTorch's own depthwise kernels run with or without cuDNN.
            let native = backend == ConvBackend::Native && !c.is_depthwise();
            match (native, backward) {
                (true, true) => conv_native::backward(name, &c),
                (true, false) => conv_native::forward(name, &c),
                (false, true) => conv::lower_conv_backward(name, c),
                (false, false) => conv::lower_conv(name, c),
            }
        }
        OpKind::Elementwise {
            elements,
            inputs,
            outputs,
            flops_per_element,
            dtype,
        } => {
            let (el, io, fl) = (f(elements), (f(inputs), f(outputs)), f(flops_per_element));
            vec![if backward {
                elementwise::lower_elementwise_backward(name, el, io, fl, dtype.size())
            } else {
                elementwise::lower_elementwise(name, el, io, fl, dtype.size())
            }]
        }
        OpKind::Reduction { rows, cols, dtype } => rowwise(
            name,
            RowOp::Reduction,
            f(rows),
            f(cols),
            dtype.size(),
            backward,
        ),
        OpKind::Softmax { rows, cols, dtype } => rowwise(
            name,
            RowOp::Softmax,
            f(rows),
            f(cols),
            dtype.size(),
            backward,
        ),
        OpKind::LayerNorm { rows, cols, dtype } => rowwise(
            name,
            RowOp::LayerNorm,
            f(rows),
            f(cols),
            dtype.size(),
            backward,
        ),
        OpKind::Attention {
            batch,
            heads,
            kv_heads,
            q_len,
            kv_len,
            head_dim,
            causal,
            dtype,
        } => {
            let a = AttnShape {
                batch: f(batch),
                heads: f(heads),
                kv_heads: f(kv_heads.max(1)),
                q: f(q_len),
                kv: f(kv_len),
                d: f(head_dim),
                causal,
                dtype,
            };
            if backward {
                attention::lower_attention_backward(name, a)
            } else {
                attention::lower_attention(name, a)
            }
        }
        OpKind::Embedding {
            tokens,
            hidden,
            vocab,
            dtype,
        } => {
            if backward {
                elementwise::lower_embedding_backward(
                    name,
                    f(tokens),
                    f(hidden),
                    f(vocab),
                    dtype.size(),
                )
            } else {
                vec![elementwise::lower_embedding(
                    name,
                    f(tokens),
                    f(hidden),
                    dtype.size(),
                )]
            }
        }
        // An optimizer step has no backward; `Operator::validate` rejects it.
        OpKind::Optimizer { params, kind } => optimizer::lower_optimizer(name, f(params), kind),
        // The gradient of a copy is a copy of the same size.
        OpKind::Copy { bytes } => vec![elementwise::lower_copy(name, f(bytes))],
    }
}

fn rowwise(name: &str, op: RowOp, rows: f64, cols: f64, e: f64, backward: bool) -> Vec<KernelSpec> {
    if backward {
        rowwise::lower_rowwise_backward(name, op, rows, cols, e)
    } else {
        vec![rowwise::lower_rowwise(name, op, rows, cols, e)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ConvBackend, Dtype};
    use proptest::prelude::*;

    fn dtype() -> impl Strategy<Value = Dtype> {
        prop_oneof![Just(Dtype::F16), Just(Dtype::Bf16), Just(Dtype::F32)]
    }

    fn check(kernels: &[KernelSpec]) -> Result<(), TestCaseError> {
        prop_assert!(!kernels.is_empty());
        for k in kernels {
            prop_assert!(k.validate().is_ok(), "{}: {:?}", k.name, k.validate());
            let m = &k.memory;
            prop_assert!(
                m.dram_read_bytes + m.dram_write_bytes <= m.l2_bytes + m.dram_write_bytes,
                "{}: DRAM reads exceed L2 traffic",
                k.name
            );
            prop_assert!(k.shared_mem_per_block() <= 228 * 1024);
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn any_gemm_lowers_to_valid_kernels(
            m in 1u64..20_000, n in 1u64..20_000, k in 1u64..20_000,
            batch in 1u64..64, dtype in dtype(), backward: bool, cutlass: bool,
        ) {
            let op = OpKind::Gemm { m, n, k, batch, dtype };
            let library = if cutlass { GemmLibrary::TallyCutlass } else { GemmLibrary::Cublas };
            check(&lower("g", &op, backward, library))?;
        }

        #[test]
        fn any_elementwise_lowers_to_valid_kernels(
            elements in 1u64..2_000_000_000, inputs in 0u64..5, outputs in 1u64..4,
            flops in 0u64..40, dtype in dtype(), backward: bool,
        ) {
            let op = OpKind::Elementwise { elements, inputs, outputs, flops_per_element: flops, dtype };
            check(&lower("e", &op, backward, GemmLibrary::Cublas))?;
        }

        #[test]
        fn any_conv_or_attention_lowers_to_valid_kernels(
            n in 1u64..64, c in 1u64..512, hw in 7u64..128, k in prop_oneof![Just(1u64), Just(3), Just(5), Just(7)],
            stride in 1u64..3, depthwise: bool, heads in 1u64..32, q in 1u64..4096, extra in 0u64..4096,
            backward: bool, native: bool,
        ) {
            let conv = OpKind::Conv2d {
                n, c_in: c, h: hw, w: hw, c_out: c, kh: k, kw: k, stride, pad: k / 2,
                groups: if depthwise { c } else { 1 }, dtype: Dtype::F16,
                backend: if native { ConvBackend::Native } else { ConvBackend::Cudnn },
            };
            check(&lower("c", &conv, backward, GemmLibrary::TallyCutlass))?;
            let attn = OpKind::Attention {
                batch: n, heads, kv_heads: heads, q_len: q, kv_len: q + extra,
                head_dim: 64, causal: true, dtype: Dtype::Bf16,
            };
            check(&lower("a", &attn, backward, GemmLibrary::Cublas))?;
        }
    }
}
