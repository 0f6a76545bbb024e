//! `Operator`: a named use of an `OpKind` in a model, repeated `repeat`
//! times back to back, in the forward or the backward pass; lowering it
//! yields the kernel launches a library would make for one instance.

use serde::{Deserialize, Serialize};
use tally_gpu::KernelSpec;

use super::{GemmLibrary, ModelError, OpKind};

fn one() -> u32 {
    1
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

fn is_false(v: &bool) -> bool {
    !*v
}

/// One operator of a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Operator {
    pub name: String,
    #[serde(flatten)]
    pub op: OpKind,
    /// Consecutive identical instances (e.g. a repeated layer op).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub repeat: u32,
    /// The gradient computation of `op` rather than `op` itself: lowered the
    /// way autograd launches it (dgrad + wgrad GEMMs, flash-attention-2
    /// backward, grad-and-saved-input reads for pointwise and norm ops).
    #[serde(default, skip_serializing_if = "is_false")]
    pub backward: bool,
    /// A forward operator run again in the backward pass (activation
    /// checkpointing): forward work that owns no parameters of its own.
    #[serde(default, skip_serializing_if = "is_false")]
    pub recompute: bool,
    /// The library its matrix products run in (a GEMM, or the GEMMs of a
    /// convolution PyTorch runs without cuDNN).
    #[serde(default, skip_serializing_if = "GemmLibrary::is_cublas")]
    pub gemm_library: GemmLibrary,
}

impl Operator {
    /// A forward operator that runs once.
    pub fn new(name: impl Into<String>, op: OpKind) -> Operator {
        Operator {
            name: name.into(),
            op,
            repeat: 1,
            backward: false,
            recompute: false,
            gemm_library: GemmLibrary::Cublas,
        }
    }

    /// The same operator repeated `n` times back to back.
    pub fn repeated(mut self, n: u32) -> Operator {
        self.repeat = n;
        self
    }

    /// The backward counterpart, named `<name>.bwd`; `None` for operators
    /// that have no gradient (the optimizer step) or already are backward.
    pub fn backward_op(&self) -> Option<Operator> {
        if self.backward || self.recompute || matches!(self.op, OpKind::Optimizer { .. }) {
            return None;
        }
        Some(Operator {
            name: format!("{}.bwd", self.name),
            op: self.op.clone(),
            repeat: self.repeat,
            backward: true,
            recompute: false,
            gemm_library: self.gemm_library,
        })
    }

    /// The kernels one instance launches, in launch order (`repeat` is
    /// expanded by `Model::launches`).
    pub fn lower(&self) -> Vec<KernelSpec> {
        crate::lower::lower(&self.name, &self.op, self.backward, self.gemm_library)
    }

    /// Check the shape and that every lowered kernel is a valid launch.
    pub fn validate(&self) -> Result<(), ModelError> {
        let invalid = |field: &str, reason: String| ModelError::InvalidOperator {
            operator: self.name.clone(),
            field: field.to_string(),
            reason,
        };
        if self.repeat == 0 {
            return Err(invalid("repeat", "must be > 0".into()));
        }
        self.op.check().map_err(|(f, r)| invalid(f, r))?;
        if self.backward && matches!(self.op, OpKind::Optimizer { .. }) {
            return Err(invalid(
                "backward",
                "an optimizer step has no backward pass".into(),
            ));
        }
        for k in self.lower() {
            k.validate().map_err(|reason| ModelError::InvalidKernel {
                operator: self.name.clone(),
                kernel: k.name.clone(),
                reason,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Dtype, OptimizerKind};

    fn gemm(m: u64) -> Operator {
        Operator::new(
            "fc",
            OpKind::Gemm {
                m,
                n: 64,
                k: 64,
                batch: 1,
                dtype: Dtype::F16,
            },
        )
    }

    #[test]
    fn validation_names_operator_and_field() {
        gemm(64).validate().unwrap();
        match gemm(0).validate() {
            Err(ModelError::InvalidOperator {
                operator, field, ..
            }) => assert_eq!((operator.as_str(), field.as_str()), ("fc", "m")),
            other => panic!("{other:?}"),
        }
        let step = Operator::new(
            "opt",
            OpKind::Optimizer {
                params: 10,
                kind: OptimizerKind::Adam,
            },
        );
        assert!(step.backward_op().is_none());
        let bad = Operator {
            backward: true,
            ..step
        };
        assert!(bad.validate().is_err());
    }

    #[test]
    fn backward_op_lowers_differently() {
        let fwd = gemm(256);
        let bwd = fwd.backward_op().unwrap();
        assert_eq!(bwd.name, "fc.bwd");
        assert!(bwd.backward);
        assert_eq!(fwd.lower().len(), 1);
        assert_eq!(bwd.lower().len(), 2);
        assert!(bwd.backward_op().is_none());
    }

    #[test]
    fn serde_round_trip_uses_the_op_tag() {
        let op = gemm(128).repeated(2);
        let json = serde_json::to_string(&op).unwrap();
        assert!(json.contains("\"op\":\"gemm\""), "{json}");
        let back: Operator = serde_json::from_str(&json).unwrap();
        assert_eq!(back, op);
        let kind: OpKind = serde_json::from_str(r#"{"op":"copy","bytes":16}"#).unwrap();
        assert_eq!(kind, OpKind::Copy { bytes: 16 });
        assert!(serde_json::from_str::<OpKind>(r#"{"op":"copy","bytes":16,"x":1}"#).is_err());
    }
}
