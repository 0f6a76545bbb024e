//! GPT-2 (Radford et al. 2019, HF `GPT2LMHeadModel`): token and position
//! embeddings, pre-LN causal layers with FFN 4 x hidden and the tanh GELU,
//! final LN and the LM head over the 50257 vocabulary on every token (tied
//! to the token embedding). Trained with Adam; the loss shifts the logits
//! by one token (a contiguous copy).
//!
//! * `gpt2`: GPT-2 small, 12 layers of hidden 768, 12 heads (124M).
//! * `gpt2-large`: 36 layers of hidden 1280, 20 heads (774M, HF
//!   `gpt2-large` config), as the Tally benchmark trains it (tally-bench
//!   `python/workloads/training/pytorch/gpt2/train_gpt2.py`): BookCorpus
//!   grouped into `block_size = 512` token blocks, so sequence 512, and
//!   batch 1 (`python/configs/train_config.py`).

use super::net::Net;
use super::transformer::{layer, Layer};
use super::{Defaults, Param};
use crate::model::{ModelParams, OpKind, Operator, OptimizerKind, Phase};

const VOCAB: u64 = 50257;
const CONTEXT: u32 = 1024;
const SEQ: u32 = 512;

const fn defaults(batch: u32) -> Defaults {
    Defaults {
        batch,
        seq: Param::Range {
            default: SEQ,
            max: CONTEXT,
        },
        kv: Param::Fixed("it models a full forward pass without a KV cache"),
    }
}

pub(crate) const DEFAULTS: Defaults = defaults(8);
pub(crate) const LARGE_DEFAULTS: Defaults = defaults(1);

/// The sizes that set one GPT-2 apart from another.
struct Config {
    layers: u64,
    hidden: u64,
    heads: u64,
}

const SMALL: Config = Config {
    layers: 12,
    hidden: 768,
    heads: 12,
};

const LARGE: Config = Config {
    layers: 36,
    hidden: 1280,
    heads: 20,
};

pub(crate) fn build(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    build_config(&SMALL, phase, p)
}

pub(crate) fn build_large(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    build_config(&LARGE, phase, p)
}

fn build_config(c: &Config, phase: Phase, p: &ModelParams) -> Vec<Operator> {
    let mut net = Net::new(phase);
    let hidden = c.hidden;
    let l = Layer {
        batch: u64::from(p.batch),
        seq: u64::from(p.seq_len.unwrap_or(SEQ)),
        hidden,
        heads: c.heads,
        ffn: 4 * hidden,
        causal: true,
        pre_ln: true,
        gelu_flops: 14,
    };
    let t = l.tokens();
    net.embedding("wte", t, hidden, VOCAB);
    net.embedding("wpe", t, hidden, u64::from(CONTEXT));
    net.add("embed.add", t * hidden);
    net.dropout("embed.dropout", t * hidden);
    for i in 0..c.layers {
        layer(&mut net, &format!("h.{i}"), &l);
    }
    net.layer_norm("ln_f", t, hidden);
    net.linear("lm_head", t, hidden, VOCAB);
    if net.training() {
        let shifted = l.batch * (l.seq - 1).max(1);
        net.push(
            "loss.shift_logits",
            OpKind::Copy {
                bytes: shifted * VOCAB * 2,
            },
        );
        net.cross_entropy(shifted, VOCAB);
    }
    net.finish(OptimizerKind::Adam, hidden * VOCAB)
}
