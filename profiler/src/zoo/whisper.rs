//! Whisper (Radford et al. 2022, "Robust Speech Recognition via
//! Large-Scale Weak Supervision") as HF `WhisperForConditionalGeneration`
//! trains it, in two sizes from their HF configs:
//!
//! * `whisper-large-v3` (`openai/whisper-large-v3`): d_model 1280, 32
//!   encoder and 32 decoder layers, 20 heads, FFN 5120, 128 mel bins,
//!   vocabulary 51866; 1.55B parameters. Plain training.
//! * `whisper-small` (`openai/whisper-small`): d_model 768, 12 + 12 layers,
//!   12 heads, FFN 3072, 80 mel bins, vocabulary 51865; 242M parameters.
//!   This is the model the Tally benchmark's whisper job actually trains:
//!   its script (tally-bench
//!   `python/workloads/training/pytorch/whisper/train_whisper.py`, batch 16
//!   in `python/configs/train_config.py`) sets `model_name =
//!   "openai/whisper-small"` whatever the job is called (its published key
//!   says whisper-large-v3; the 9.7 GB it used in `single-job-perf.csv` is
//!   too little for large-v3's 25 GB of FP32 weights, gradients and Adam
//!   state), and trains with `gradient_checkpointing=True`: every encoder
//!   and decoder layer's forward pass runs again just before its backward
//!   pass (`model::training_iteration`'s recomputed segments).
//!
//! Encoder: 30 s of audio is 3000 log-mel frames; two convolutions of
//! width 3 (mels -> d_model, then d_model -> d_model with stride 2, each +
//! GELU) leave 1500 positions, as the implicit GEMMs cuDNN runs for them
//! (`C_in x 3` inputs per output); the fixed sinusoidal positions are added
//! (a frozen table, no gather), then the pre-LN layers and a final LN.
//! Decoder: token and learned position embeddings, pre-LN layers with
//! causal self-attention and cross-attention over the 1500 encoder
//! positions, final LN and the output projection (tied to the token
//! embedding) on every label position, then the loss. The configs'
//! dropouts are all zero, so no dropout launches. Trained with AdamW.
//!
//! The benchmark's job fine-tunes on Common Voice 11 Hindi; its collator
//! pads each batch's labels to the longest transcript of the batch, so the
//! script fixes no label length. The default of 64 label tokens is our
//! estimate of that longest tokenized Hindi sentence (four task prefix
//! tokens, the transcript, end of text); `--seq` sets it (up to the 448
//! positions).

use super::net::Net;
use super::seq2seq::Stack;
use super::{Defaults, Param};
use crate::model::{ModelParams, Operator, OptimizerKind, Phase};

pub(crate) const DEFAULTS: Defaults = Defaults {
    batch: 16,
    seq: Param::Range {
        default: LABELS,
        max: 448,
    },
    kv: Param::Fixed("training runs the decoder over all labels without a KV cache"),
};

const FRAMES: u64 = 3000;
/// Encoder positions after the stride-2 convolution.
pub(crate) const POSITIONS: u64 = FRAMES / 2;
const LABELS: u32 = 64;
/// GELU with erf.
const GELU_FLOPS: u64 = 8;

/// What sets one Whisper size apart from another (HF config fields).
struct Config {
    hidden: u64,
    layers: u64,
    heads: u64,
    ffn: u64,
    mels: u64,
    vocab: u64,
    /// The training script's `gradient_checkpointing`.
    checkpointing: bool,
}

const LARGE_V3: Config = Config {
    hidden: 1280,
    layers: 32,
    heads: 20,
    ffn: 5120,
    mels: 128,
    vocab: 51866,
    checkpointing: false,
};

const SMALL: Config = Config {
    hidden: 768,
    layers: 12,
    heads: 12,
    ffn: 3072,
    mels: 80,
    vocab: 51865,
    checkpointing: true,
};

pub(crate) fn build_large_v3(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    build(&LARGE_V3, phase, p)
}

pub(crate) fn build_small(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    build(&SMALL, phase, p)
}

fn build(c: &Config, phase: Phase, p: &ModelParams) -> Vec<Operator> {
    let mut net = Net::new(phase);
    let b = u64::from(p.batch);
    let labels = u64::from(p.seq_len.unwrap_or(LABELS));
    let hidden = c.hidden;
    let stack = Stack {
        batch: b,
        hidden,
        heads: c.heads,
        ffn: c.ffn,
        act_flops: GELU_FLOPS,
        dropout: false,
    };
    net.linear("encoder.conv1", b * FRAMES, c.mels * 3, hidden);
    net.pointwise(
        "encoder.conv1.gelu",
        b * FRAMES * hidden,
        (1, 1),
        GELU_FLOPS,
    );
    net.linear("encoder.conv2", b * POSITIONS, hidden * 3, hidden);
    net.pointwise(
        "encoder.conv2.gelu",
        b * POSITIONS * hidden,
        (1, 1),
        GELU_FLOPS,
    );
    net.add("encoder.embed_positions.add", b * POSITIONS * hidden);
    for i in 0..c.layers {
        let first = net.ops.len();
        stack.encoder_layer(&mut net, &format!("encoder.layers.{i}"), POSITIONS);
        if c.checkpointing {
            net.checkpoint(first);
        }
    }
    net.layer_norm("encoder.layer_norm", b * POSITIONS, hidden);
    let t = b * labels;
    net.embedding("decoder.embed_tokens", t, hidden, c.vocab);
    net.embedding("decoder.embed_positions", t, hidden, 448);
    net.add("decoder.embed.add", t * hidden);
    for i in 0..c.layers {
        let first = net.ops.len();
        stack.decoder_layer(&mut net, &format!("decoder.layers.{i}"), labels, POSITIONS);
        if c.checkpointing {
            net.checkpoint(first);
        }
    }
    net.layer_norm("decoder.layer_norm", t, hidden);
    net.linear("proj_out", t, hidden, c.vocab);
    net.cross_entropy(t, c.vocab);
    net.finish(OptimizerKind::Adam, hidden * c.vocab)
}
