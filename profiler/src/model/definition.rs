//! `Model`: an ordered operator list with its phase and parameters, and the
//! views the profiler needs — every launch of one iteration, and the unique
//! kernels (by `op_id`) with their launch counts.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use tally_gpu::KernelSpec;

use super::{ModelError, ModelParams, Operator, Phase};

/// A model: one inference forward pass or one training iteration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub name: String,
    pub phase: Phase,
    pub params: ModelParams,
    pub operators: Vec<Operator>,
}

impl Model {
    /// Every kernel launch of one iteration, in order, repeats expanded.
    pub fn launches(&self) -> Vec<KernelSpec> {
        let mut out = Vec::new();
        for op in &self.operators {
            let kernels = op.lower();
            for _ in 0..op.repeat {
                out.extend(kernels.iter().cloned());
            }
        }
        out
    }

    /// Unique kernels by `KernelSpec::op_id` in first-seen order, the first
    /// occurrence's name kept, each with its launches per iteration.
    pub fn unique_kernels(&self) -> Vec<(KernelSpec, u32)> {
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut out: Vec<(KernelSpec, u32)> = Vec::new();
        for k in self.launches() {
            let id = k.op_id();
            match index.get(&id) {
                Some(&i) => out[i].1 += 1,
                None => {
                    index.insert(id, out.len());
                    out.push((k, 1));
                }
            }
        }
        out
    }

    /// Check every operator's shape and lowered kernels.
    pub fn validate(&self) -> Result<(), ModelError> {
        self.operators.iter().try_for_each(Operator::validate)
    }

    /// Trainable parameters owned by the forward operators.
    pub fn param_count(&self) -> u64 {
        super::training::param_count(&self.operators)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Dtype, OpKind};

    fn add(name: &str, elements: u64) -> Operator {
        Operator::new(
            name,
            OpKind::Elementwise {
                elements,
                inputs: 2,
                outputs: 1,
                flops_per_element: 1,
                dtype: Dtype::F16,
            },
        )
    }

    #[test]
    fn launches_expand_repeats_and_unique_kernels_dedupe_in_order() {
        let model = Model {
            name: "m".into(),
            phase: Phase::Inference,
            params: ModelParams {
                batch: 1,
                seq_len: None,
                kv_len: None,
            },
            operators: vec![
                add("first", 1024).repeated(3),
                add("other", 2048),
                add("second", 1024),
            ],
        };
        assert_eq!(model.launches().len(), 5);
        let unique = model.unique_kernels();
        assert_eq!(unique.len(), 2);
        assert!(unique[0].0.name.starts_with("first/"));
        assert_eq!(unique[0].1, 4);
        assert!(unique[1].0.name.starts_with("other/"));
        assert_eq!(unique[1].1, 1);
        model.validate().unwrap();
    }
}
