//! GPT-2 small (Radford et al. 2019, HF `GPT2LMHeadModel`): token and
//! position embeddings, 12 pre-LN causal layers of hidden 768, 12 heads,
//! FFN 3072 with the tanh GELU, final LN and the LM head over the 50257
//! vocabulary on every token (tied to the token embedding). Trained with
//! Adam; the loss shifts the logits by one token (a contiguous copy).

use super::net::Net;
use super::transformer::{layer, Layer};
use super::{Defaults, Param};
use crate::model::{ModelParams, OpKind, Operator, OptimizerKind, Phase};

pub(crate) const DEFAULTS: Defaults = Defaults {
    batch: 8,
    seq: Param::Range {
        default: 512,
        max: 1024,
    },
    kv: Param::Fixed("it models a full forward pass without a KV cache"),
};

const HIDDEN: u64 = 768;
const VOCAB: u64 = 50257;

pub(crate) fn build(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    let mut net = Net::new(phase);
    let l = Layer {
        batch: u64::from(p.batch),
        seq: u64::from(p.seq_len.unwrap_or(512)),
        hidden: HIDDEN,
        heads: 12,
        ffn: 3072,
        causal: true,
        pre_ln: true,
        gelu_flops: 14,
    };
    let t = l.tokens();
    net.embedding("wte", t, HIDDEN, VOCAB);
    net.embedding("wpe", t, HIDDEN, 1024);
    net.add("embed.add", t * HIDDEN);
    net.dropout("embed.dropout", t * HIDDEN);
    for i in 0..12 {
        layer(&mut net, &format!("h.{i}"), &l);
    }
    net.layer_norm("ln_f", t, HIDDEN);
    net.linear("lm_head", t, HIDDEN, VOCAB);
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
    net.finish(OptimizerKind::Adam, HIDDEN * VOCAB)
}
