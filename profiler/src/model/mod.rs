//! Models and their operators: element types, operator kinds and shapes,
//! operators, models with their parameters, the derivation of a training
//! iteration from a forward pass, and the error type of all of it.

mod conv_backend;
mod definition;
mod dtype;
mod error;
mod gemm_library;
mod op;
mod operator;
mod params;
mod training;

pub use conv_backend::ConvBackend;
pub use definition::Model;
pub use dtype::Dtype;
pub use error::ModelError;
pub use gemm_library::GemmLibrary;
pub use op::{OpKind, OptimizerKind};
pub use operator::Operator;
pub use params::{ModelParams, ParamsOverride, Phase};
pub use training::{checkpointed_training_iteration, param_count, training_iteration};
