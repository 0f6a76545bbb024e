//! Model parameters: the values a model is instantiated with
//! (`ModelParams`), what a caller may override (`ParamsOverride`), and the
//! pass a model describes (`Phase`).

use serde::{Deserialize, Serialize};

/// Whether a model is one inference forward pass or one training iteration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    #[default]
    Inference,
    Training,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Inference => "inference",
            Phase::Training => "training",
        }
    }
}

/// The parameters a model was built with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelParams {
    pub batch: u32,
    /// Sequence length (transformers); `None` where it does not apply.
    pub seq_len: Option<u32>,
    /// Tokens already in the KV cache (decode); `None` where it does not apply.
    pub kv_len: Option<u32>,
}

/// Caller overrides of a zoo model's default parameters (`--batch`, `--seq`,
/// `--kv`); `None` keeps the default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParamsOverride {
    pub batch: Option<u32>,
    pub seq_len: Option<u32>,
    pub kv_len: Option<u32>,
}
