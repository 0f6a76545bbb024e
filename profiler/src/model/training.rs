//! Turning a forward pass into a training iteration: forward operators,
//! their backward operators in reverse order (as autograd runs them), then
//! one optimizer step over all parameters; with activation (gradient)
//! checkpointing, a checkpointed segment's forward operators run again
//! just before its backward operators, as `torch.utils.checkpoint` does
//! (it keeps only the segment's input and recomputes the rest).

use std::ops::Range;

use super::{OpKind, Operator, OptimizerKind};

/// Trainable parameters owned by `ops` (tied weights counted per use).
pub fn param_count(ops: &[Operator]) -> u64 {
    ops.iter()
        .filter(|o| !o.backward && !o.recompute)
        .map(|o| o.op.param_count())
        .sum()
}

/// The operators of one training iteration whose forward pass (loss
/// included) is `forward`, with an optimizer step over `params` parameters
/// (usually `param_count(&forward)`, less weights tied between operators).
pub fn training_iteration(
    forward: Vec<Operator>,
    optimizer: OptimizerKind,
    params: u64,
) -> Vec<Operator> {
    checkpointed_training_iteration(forward, &[], optimizer, params)
}

/// As [`training_iteration`], the operators in each of `segments` (ranges
/// of `forward`, disjoint) checkpointed: recomputed, named
/// `<name>.recompute`, right before the segment's first backward operator.
pub fn checkpointed_training_iteration(
    forward: Vec<Operator>,
    segments: &[Range<usize>],
    optimizer: OptimizerKind,
    params: u64,
) -> Vec<Operator> {
    let mut backward = Vec::with_capacity(forward.len() + segments.len());
    for i in (0..forward.len()).rev() {
        if let Some(seg) = segments.iter().find(|s| s.end == i + 1 && !s.is_empty()) {
            backward.extend(forward[seg.clone()].iter().map(|o| Operator {
                name: format!("{}.recompute", o.name),
                recompute: true,
                ..o.clone()
            }));
        }
        backward.extend(forward[i].backward_op());
    }
    let mut ops = forward;
    ops.extend(backward);
    if params > 0 {
        ops.push(Operator::new(
            "optimizer.step",
            OpKind::Optimizer {
                params,
                kind: optimizer,
            },
        ));
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Dtype;

    #[test]
    fn backward_runs_in_reverse_then_the_optimizer() {
        let fwd = vec![
            Operator::new(
                "embed",
                OpKind::Embedding {
                    tokens: 8,
                    hidden: 16,
                    vocab: 100,
                    dtype: Dtype::F16,
                },
            ),
            Operator::new(
                "norm",
                OpKind::LayerNorm {
                    rows: 8,
                    cols: 16,
                    dtype: Dtype::F16,
                },
            ),
        ];
        let params = param_count(&fwd);
        assert_eq!(params, 1600 + 32);
        let ops = training_iteration(fwd, OptimizerKind::Adam, params);
        let names: Vec<&str> = ops.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(
            names,
            ["embed", "norm", "norm.bwd", "embed.bwd", "optimizer.step"]
        );
    }

    #[test]
    fn a_checkpointed_segment_runs_its_forward_again_before_its_backward() {
        let op = |name: &str| {
            Operator::new(
                name,
                OpKind::LayerNorm {
                    rows: 8,
                    cols: 16,
                    dtype: Dtype::F16,
                },
            )
        };
        let fwd = vec![op("a"), op("b"), op("c"), op("d")];
        let ops = checkpointed_training_iteration(fwd, &[1..3, 3..4], OptimizerKind::Sgd, 0);
        let names: Vec<&str> = ops.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "a",
                "b",
                "c",
                "d",
                "d.recompute",
                "d.bwd",
                "b.recompute",
                "c.recompute",
                "c.bwd",
                "b.bwd",
                "a.bwd"
            ]
        );
        // Recomputed operators are forward work (no gradient of their own).
        assert!([4, 6, 7]
            .iter()
            .all(|&i| !ops[i].backward && ops[i].recompute));
        assert_eq!(ops[6].op, ops[1].op);
        // ... and owns no parameters of its own.
        assert_eq!(param_count(&ops), param_count(&ops[..4]));
    }
}
