//! Optimizer lowering as apex / PyTorch `multi_tensor_apply` launches it:
//! 65536-parameter chunks, one 512-thread block per chunk, at most 320
//! chunks per launch (the kernel-argument limit), so a large model's step is
//! several full launches and a remainder.

use tally_gpu::{Dim3, KernelKind, KernelSpec, Work};

use super::builder::{dim, streaming_kernel, Stream};
use crate::model::OptimizerKind;

const CHUNK: f64 = 65_536.0;
const CHUNKS_PER_LAUNCH: f64 = 320.0;

/// Bytes read, bytes written and FP32 work per parameter.
fn per_param(kind: OptimizerKind) -> (f64, f64, Work) {
    match kind {
        // fp32 param, grad, m, v in; param, m, v and the fp16 model copy out;
        // ~15 FLOPs (moments, bias correction, sqrt, division, decay).
        OptimizerKind::Adam => (
            16.0,
            14.0,
            Work {
                fadd: 2.0,
                fmul: 3.0,
                ffma: 5.0,
                ..Work::default()
            },
        ),
        // fp32 param, grad, momentum in; param and momentum out.
        OptimizerKind::Sgd => (
            12.0,
            8.0,
            Work {
                ffma: 2.0,
                ..Work::default()
            },
        ),
    }
}

fn launch(name: &str, kind: OptimizerKind, chunks: f64, params: f64) -> KernelSpec {
    let (read, write, w) = per_param(kind);
    let label = match kind {
        OptimizerKind::Adam => "multi_tensor_adam",
        OptimizerKind::Sgd => "multi_tensor_sgd",
    };
    let mut k = streaming_kernel(
        format!("{name}/{label}"),
        KernelKind::Optimizer,
        Stream {
            elements: params,
            read: read * params,
            write: write * params,
            work: Work {
                fadd: w.fadd * params,
                fmul: w.fmul * params,
                ffma: w.ffma * params,
                ..Work::default()
            },
            threads: 512,
            regs: 64,
        },
    );
    // One block per chunk, not per 2048 elements: each block loops over
    // its chunk.
    k.grid = Dim3::linear(dim(chunks));
    k
}

/// One optimizer step over `params` parameters.
pub(crate) fn lower_optimizer(name: &str, params: f64, kind: OptimizerKind) -> Vec<KernelSpec> {
    let chunks = (params / CHUNK).ceil().max(1.0);
    let full = (chunks / CHUNKS_PER_LAUNCH).floor();
    let per_launch = CHUNKS_PER_LAUNCH * CHUNK;
    let mut out: Vec<KernelSpec> = Vec::new();
    if full >= 1.0 {
        let k = launch(name, kind, CHUNKS_PER_LAUNCH, per_launch);
        // Launch counts of real models are small; cap for absurd inputs.
        out.extend(std::iter::repeat_n(k, full.min(10_000.0) as usize));
    }
    let rest = params - full * per_launch;
    if rest > 0.0 {
        out.push(launch(name, kind, chunks - full * CHUNKS_PER_LAUNCH, rest));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adam_is_chunked_into_launches_of_320_blocks() {
        let ks = lower_optimizer("opt", 110e6, OptimizerKind::Adam);
        // 1679 chunks: five full launches and one of 79 chunks.
        assert_eq!(ks.len(), 6);
        assert_eq!(ks[0].grid.x, 320);
        assert_eq!(ks[0], ks[4]);
        assert_eq!(ks[5].grid.x, 79);
        let read: f64 = ks.iter().map(|k| k.memory.dram_read_bytes).sum();
        let write: f64 = ks.iter().map(|k| k.memory.dram_write_bytes).sum();
        assert!((read - 16.0 * 110e6).abs() < 1.0);
        assert!((write - 14.0 * 110e6).abs() < 1.0);
        let flops: f64 = ks.iter().map(|k| k.work.fp32_flops()).sum();
        assert!((flops / 110e6 - 15.0).abs() < 1e-9);
        for k in &ks {
            k.validate().unwrap();
            assert_eq!(k.block.x, 512);
        }
    }

    #[test]
    fn sgd_moves_fewer_bytes() {
        let ks = lower_optimizer("opt", 1000.0, OptimizerKind::Sgd);
        assert_eq!(ks.len(), 1);
        assert_eq!(ks[0].grid.x, 1);
        assert_eq!(ks[0].memory.compulsory_bytes(), 20.0 * 1000.0);
    }
}
