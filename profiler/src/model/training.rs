//! Turning a forward pass into a training iteration: forward operators,
//! their backward operators in reverse order (as autograd runs them), then
//! one optimizer step over all parameters.

use super::{OpKind, Operator, OptimizerKind};

/// Trainable parameters owned by `ops` (tied weights counted per use).
pub fn param_count(ops: &[Operator]) -> u64 {
    ops.iter()
        .filter(|o| !o.backward)
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
    let backward: Vec<Operator> = forward
        .iter()
        .rev()
        .filter_map(Operator::backward_op)
        .collect();
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
}
