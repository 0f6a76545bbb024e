//! Row-wise kernels — reductions, softmax and layer/RMS norm, forward and
//! backward — launched as PyTorch / Apex do: a warp per row for short rows,
//! a block per row for long ones (split over several blocks for the few-row
//! long reductions), the row read once when it fits in registers and twice
//! otherwise.

use tally_gpu::{Dim3, KernelKind, KernelSpec, MemoryUse, Work};

use super::builder::{ceil_div, dim, kernel, streaming_kernel, Launch, Stream};

/// Rows up to this many elements are handled a warp per row.
const WARP_ROW_MAX_COLS: f64 = 1024.0;
/// A row up to this size stays in registers (one read); beyond, it is read
/// again for the second pass.
const REGISTER_ROW_BYTES: f64 = 8192.0;
/// A re-read row up to this size still hits in L1.
const L1_ROW_BYTES: f64 = 16384.0;
/// Rows in flight on a large GPU at once: the part of the input that must
/// stay in L2 for second-pass re-reads to hit.
const CONCURRENT_ROWS: f64 = 512.0;

/// One row-wise pass over `rows` x `cols` tensors.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowPass {
    pub rows: f64,
    pub cols: f64,
    /// Bytes per element.
    pub e: f64,
    /// Full `rows x cols` tensors read (input, grad, saved output).
    pub tensors: f64,
    /// Small side reads (gamma, saved mean / rstd).
    pub extra_read: f64,
    pub write: f64,
    /// FADD, FMUL, FFMA per element.
    pub flops: [f64; 3],
    /// Whether a long row needs a second pass (softmax, norms).
    pub two_pass: bool,
}

pub(crate) fn rowwise_kernel(name: String, kind: KernelKind, r: RowPass) -> KernelSpec {
    let elements = r.rows * r.cols;
    let row_bytes = r.cols * r.e * r.tensors;
    let passes = if r.two_pass && row_bytes > REGISTER_ROW_BYTES {
        2.0
    } else {
        1.0
    };
    let l2_passes = if row_bytes > L1_ROW_BYTES {
        passes
    } else {
        1.0
    };
    let launch = if r.cols <= WARP_ROW_MAX_COLS {
        Launch::simple(Dim3::linear(dim(ceil_div(r.rows, 4.0))), 128, 48)
    } else {
        let threads = (r.cols / 8.0)
            .max(1.0)
            .log2()
            .ceil()
            .exp2()
            .clamp(128.0, 1024.0);
        // Few long rows: split each row over blocks (PyTorch reduce_kernel).
        let col_blocks = if kind == KernelKind::Reduction && r.rows < 256.0 {
            ceil_div(r.cols, threads * 16.0).clamp(1.0, 64.0)
        } else {
            1.0
        };
        Launch {
            smem_static: 256,
            ..Launch::simple(Dim3::linear(dim(r.rows * col_blocks)), threads as u32, 40)
        }
    };
    let read = elements * r.e * r.tensors + r.extra_read;
    let [fadd, fmul, ffma] = r.flops;
    kernel(
        name,
        kind,
        launch,
        Work {
            fadd: fadd * elements,
            fmul: fmul * elements,
            ffma: ffma * elements,
            other_warp_insts: (elements / 32.0 * 4.0 * passes).ceil(),
            ..Work::default()
        },
        MemoryUse {
            l1_bytes: read * passes + r.write,
            l2_bytes: read * l2_passes + r.write,
            dram_read_bytes: read,
            dram_write_bytes: r.write,
            l2_working_set: r.rows.min(CONCURRENT_ROWS) * row_bytes,
            inflight_bytes_per_warp: 512.0,
        },
    )
}

/// Which row-wise operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowOp {
    Reduction,
    Softmax,
    LayerNorm,
}

impl RowPass {
    /// One read of a `rows x cols` tensor, no math, no writes.
    pub fn read_once(rows: f64, cols: f64, e: f64) -> RowPass {
        RowPass {
            rows,
            cols,
            e,
            tensors: 1.0,
            extra_read: 0.0,
            write: 0.0,
            flops: [0.0; 3],
            two_pass: false,
        }
    }
}

fn pass(rows: f64, cols: f64, e: f64) -> RowPass {
    RowPass {
        rows,
        cols,
        e,
        tensors: 1.0,
        extra_read: 0.0,
        write: rows * cols * e,
        flops: [0.0; 3],
        two_pass: true,
    }
}

/// Forward: a sum/max reduction writes one value per row; softmax ~5 FP32
/// instructions per element (max, subtract, exp as FMUL+FFMA, sum,
/// scale); layer norm ~8 (mean, variance, normalize, affine) and also
/// writes the per-row mean and rstd autograd saves.
pub(crate) fn lower_rowwise(name: &str, op: RowOp, rows: f64, cols: f64, e: f64) -> KernelSpec {
    let base = pass(rows, cols, e);
    match op {
        RowOp::Reduction => rowwise_kernel(
            format!("{name}/reduce_kernel"),
            KernelKind::Reduction,
            RowPass {
                write: rows * e,
                flops: [1.0, 0.0, 0.0],
                two_pass: false,
                ..base
            },
        ),
        RowOp::Softmax => rowwise_kernel(
            format!("{name}/softmax_fwd"),
            KernelKind::Softmax,
            RowPass {
                flops: [2.0, 2.0, 1.0],
                ..base
            },
        ),
        RowOp::LayerNorm => rowwise_kernel(
            format!("{name}/layer_norm_fwd"),
            KernelKind::LayerNorm,
            RowPass {
                extra_read: 2.0 * cols * e,
                write: rows * cols * e + rows * 8.0,
                flops: [3.0, 2.0, 3.0],
                ..base
            },
        ),
    }
}

/// Backward: a reduction's gradient is a broadcast; softmax backward reads
/// the gradient and the saved output; layer norm backward reads the
/// gradient and the saved input (plus mean/rstd) for the input gradient,
/// then reduces over rows for the gamma/beta gradients.
pub(crate) fn lower_rowwise_backward(
    name: &str,
    op: RowOp,
    rows: f64,
    cols: f64,
    e: f64,
) -> Vec<KernelSpec> {
    let base = RowPass {
        tensors: 2.0,
        ..pass(rows, cols, e)
    };
    match op {
        RowOp::Reduction => vec![streaming_kernel(
            format!("{name}/expand_grad"),
            KernelKind::Elementwise,
            Stream {
                elements: rows * cols,
                read: rows * e,
                write: rows * cols * e,
                work: Work {
                    fmul: rows * cols,
                    ..Work::default()
                },
                threads: 256,
                regs: 16,
            },
        )],
        RowOp::Softmax => vec![rowwise_kernel(
            format!("{name}/softmax_bwd"),
            KernelKind::Softmax,
            RowPass {
                flops: [1.0, 1.0, 1.0],
                ..base
            },
        )],
        RowOp::LayerNorm => vec![
            rowwise_kernel(
                format!("{name}/layer_norm_bwd_input"),
                KernelKind::LayerNorm,
                RowPass {
                    extra_read: rows * 8.0 + cols * e,
                    flops: [3.0, 3.0, 2.0],
                    ..base
                },
            ),
            rowwise_kernel(
                format!("{name}/layer_norm_bwd_gamma_beta"),
                KernelKind::Reduction,
                RowPass {
                    rows: cols,
                    cols: rows,
                    write: 2.0 * cols * 4.0,
                    flops: [1.0, 0.0, 1.0],
                    two_pass: false,
                    ..base
                },
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_rows_are_a_warp_each_long_rows_a_block() {
        let short = lower_rowwise("s", RowOp::Softmax, 4096.0, 512.0, 2.0);
        assert_eq!(short.grid.x, 1024);
        assert_eq!(short.block.x, 128);
        let long = lower_rowwise("s", RowOp::Softmax, 64.0, 32000.0, 4.0);
        assert_eq!(long.grid.x, 64);
        assert_eq!(long.block.x, 1024);
        // A 128 KB row is read twice (max/sum pass, then normalize), from L2.
        assert_eq!(
            long.memory.l2_bytes,
            2.0 * 64.0 * 32000.0 * 4.0 + 64.0 * 32000.0 * 4.0
        );
        assert_eq!(long.memory.dram_read_bytes, 64.0 * 32000.0 * 4.0);
        assert_eq!(
            short.work.fp32_flops(),
            4096.0 * 512.0 * 5.0 + 4096.0 * 512.0
        );
        for k in [short, long] {
            k.validate().unwrap();
        }
    }

    #[test]
    fn layer_norm_rereads_rows_that_do_not_fit_registers() {
        let small = lower_rowwise("ln", RowOp::LayerNorm, 1024.0, 768.0, 2.0);
        let big = lower_rowwise("ln", RowOp::LayerNorm, 1024.0, 8192.0, 2.0);
        let reads = |k: &KernelSpec| {
            (k.memory.l1_bytes - k.memory.dram_write_bytes) / k.memory.dram_read_bytes
        };
        assert!((reads(&small) - 1.0).abs() < 1e-9);
        assert!((reads(&big) - 2.0).abs() < 1e-9);
    }

    #[test]
    fn few_long_reductions_split_rows_over_blocks() {
        let k = lower_rowwise("r", RowOp::Reduction, 8.0, 1_000_000.0, 2.0);
        assert!(k.grid.x > 8);
        assert_eq!(k.memory.dram_write_bytes, 16.0);
        k.validate().unwrap();
    }

    #[test]
    fn backward_reads_grad_and_saved_tensor() {
        let sm = lower_rowwise_backward("s", RowOp::Softmax, 1024.0, 512.0, 2.0);
        assert_eq!(sm[0].memory.dram_read_bytes, 2.0 * 1024.0 * 512.0 * 2.0);
        let ln = lower_rowwise_backward("ln", RowOp::LayerNorm, 1024.0, 768.0, 2.0);
        assert_eq!(ln.len(), 2);
        assert_eq!(ln[1].kind, KernelKind::Reduction);
        let red = lower_rowwise_backward("r", RowOp::Reduction, 64.0, 49.0, 2.0);
        assert_eq!(red[0].memory.dram_write_bytes, 64.0 * 49.0 * 2.0);
        for k in sm.iter().chain(&ln).chain(&red) {
            k.validate().unwrap();
        }
    }
}
