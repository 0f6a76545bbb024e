//! Pointwise and data-movement kernels: PyTorch's vectorized elementwise
//! kernels (forward and the grad-and-saved-input backward), copies, and the
//! embedding gather with its scatter-add backward — all streaming.

use tally_gpu::{KernelKind, KernelSpec, Work};

use super::builder::{fp32_work, streaming_kernel, Stream};
use super::rowwise::{rowwise_kernel, RowPass};

/// Element counts from which a 512-thread block is used.
const LARGE_ELEMENTWISE: f64 = 4_194_304.0;

/// A pointwise kernel over `elements` with the given bytes and FLOPs.
fn pointwise(name: String, elements: f64, tensors: (f64, f64), e: f64, flops: f64) -> KernelSpec {
    let (inputs, outputs) = tensors;
    let threads = if elements >= LARGE_ELEMENTWISE {
        512
    } else {
        256
    };
    // More operands, more live registers (16..32).
    let regs = (16.0 + 4.0 * (inputs + outputs)).min(32.0) as u32;
    streaming_kernel(
        name,
        KernelKind::Elementwise,
        Stream {
            elements,
            read: inputs * elements * e,
            write: outputs * elements * e,
            work: fp32_work(elements, flops),
            threads,
            regs,
        },
    )
}

/// Forward pointwise op.
pub(crate) fn lower_elementwise(
    name: &str,
    elements: f64,
    tensors: (f64, f64),
    flops: f64,
    e: f64,
) -> KernelSpec {
    pointwise(
        format!("{name}/vectorized_elementwise_kernel"),
        elements,
        tensors,
        e,
        flops,
    )
}

/// Backward pointwise op: reads the output gradients and the saved inputs,
/// writes one gradient per input, about twice the forward math.
pub(crate) fn lower_elementwise_backward(
    name: &str,
    elements: f64,
    tensors: (f64, f64),
    flops: f64,
    e: f64,
) -> KernelSpec {
    let (inputs, outputs) = tensors;
    pointwise(
        format!("{name}/vectorized_elementwise_kernel_bwd"),
        elements,
        (inputs + outputs, inputs.max(1.0)),
        e,
        2.0 * flops,
    )
}

/// A device copy of `bytes` (treated as 16-bit items for the grid).
pub(crate) fn lower_copy(name: &str, bytes: f64) -> KernelSpec {
    streaming_kernel(
        format!("{name}/copy_kernel"),
        KernelKind::Copy,
        Stream {
            elements: bytes / 2.0,
            read: bytes,
            write: bytes,
            work: Work::default(),
            threads: 256,
            regs: 16,
        },
    )
}

/// Embedding gather: reads the token ids and `tokens` rows of the table,
/// writes them out. The gathered rows are the L2 working set (repeated
/// tokens hit).
pub(crate) fn lower_embedding(name: &str, tokens: f64, hidden: f64, e: f64) -> KernelSpec {
    let rows = tokens * hidden * e;
    let mut k = streaming_kernel(
        format!("{name}/index_select_kernel"),
        KernelKind::Embedding,
        Stream {
            elements: tokens * hidden,
            read: rows + tokens * 8.0,
            write: rows,
            work: Work::default(),
            threads: 128,
            regs: 24,
        },
    );
    k.memory.l2_working_set = rows;
    k
}

/// Embedding backward (`embedding_dense_backward`): zero the weight
/// gradient, sort the token ids, then scatter-add the gradient rows.
pub(crate) fn lower_embedding_backward(
    name: &str,
    tokens: f64,
    hidden: f64,
    vocab: f64,
    e: f64,
) -> Vec<KernelSpec> {
    let rows = tokens * hidden * e;
    let zero = streaming_kernel(
        format!("{name}/fill_zero"),
        KernelKind::Elementwise,
        Stream {
            elements: vocab * hidden,
            read: 0.0,
            write: vocab * hidden * e,
            work: Work::default(),
            threads: 512,
            regs: 16,
        },
    );
    let sort = rowwise_kernel(
        format!("{name}/sort_indices"),
        KernelKind::Reduction,
        RowPass {
            write: tokens * 16.0,
            ..RowPass::read_once(1.0, tokens, 8.0)
        },
    );
    let mut scatter = streaming_kernel(
        format!("{name}/embedding_backward_feature_kernel"),
        KernelKind::Embedding,
        Stream {
            elements: tokens * hidden,
            read: 2.0 * rows + tokens * 16.0,
            write: rows,
            work: Work {
                fadd: tokens * hidden,
                ..Work::default()
            },
            threads: 256,
            regs: 32,
        },
    );
    scatter.memory.l2_working_set = rows;
    vec![zero, sort, scatter]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectorized_elementwise_launch_and_bytes() {
        let k = lower_elementwise("add", 1_048_576.0, (2.0, 1.0), 1.0, 2.0);
        k.validate().unwrap();
        assert_eq!(k.grid.x, 1024);
        assert_eq!(k.block.x, 256);
        assert_eq!(k.memory.dram_read_bytes, 2.0 * 1_048_576.0 * 2.0);
        assert_eq!(k.memory.dram_write_bytes, 1_048_576.0 * 2.0);
        assert_eq!(k.memory.l2_bytes, k.memory.compulsory_bytes());
        assert_eq!(k.memory.l2_working_set, 0.0);
        assert_eq!(k.work.fadd, 1_048_576.0);
        assert_eq!(k.work.other_warp_insts, 1_048_576.0 / 32.0 * 6.0);
        let big = lower_elementwise("gelu", 1e8, (1.0, 1.0), 8.0, 2.0);
        assert_eq!(big.block.x, 512);
        assert_eq!(big.work.fp32_flops(), 8e8);
    }

    #[test]
    fn backward_reads_grad_and_saved_input() {
        let k = lower_elementwise_backward("gelu", 1000.0, (1.0, 1.0), 8.0, 2.0);
        assert_eq!(k.memory.dram_read_bytes, 2.0 * 1000.0 * 2.0);
        assert_eq!(k.memory.dram_write_bytes, 1000.0 * 2.0);
        assert_eq!(k.work.fp32_flops(), 16.0 * 1000.0);
    }

    #[test]
    fn copy_and_embedding() {
        let c = lower_copy("kv", 65536.0);
        assert_eq!(c.memory.compulsory_bytes(), 131072.0);
        assert_eq!(c.work.total_flops(), 0.0);
        let e = lower_embedding("wte", 512.0, 768.0, 2.0);
        assert_eq!(e.memory.l2_working_set, 512.0 * 768.0 * 2.0);
        assert_eq!(e.memory.inflight_bytes_per_warp, 512.0);
        let b = lower_embedding_backward("wte", 512.0, 768.0, 50257.0, 2.0);
        assert_eq!(b.len(), 3);
        assert_eq!(b[0].memory.dram_write_bytes, 50257.0 * 768.0 * 2.0);
        for k in b.iter().chain([&c, &e]) {
            k.validate().unwrap();
        }
    }
}
