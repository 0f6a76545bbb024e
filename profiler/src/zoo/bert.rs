//! BERT-base (Devlin et al. 2019) as `BertForMaskedLM`: word, position and
//! token-type embeddings, 12 post-LN layers of hidden 768, 12 heads, FFN
//! 3072, and the MLM head (768 transform, GELU, LN, decoder to the 30522
//! vocabulary, tied to the word embedding). Trained with Adam.

use super::net::Net;
use super::transformer::{layer, Layer};
use super::{Defaults, Param};
use crate::model::{ModelParams, Operator, OptimizerKind, Phase};

pub(crate) const DEFAULTS: Defaults = Defaults {
    batch: 8,
    seq: Param::Range {
        default: 128,
        max: 512,
    },
    kv: Param::Fixed("it is an encoder without a KV cache"),
};

const HIDDEN: u64 = 768;
const VOCAB: u64 = 30522;

pub(crate) fn build(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    let mut net = Net::new(phase);
    let l = Layer {
        batch: u64::from(p.batch),
        seq: u64::from(p.seq_len.unwrap_or(128)),
        hidden: HIDDEN,
        heads: 12,
        ffn: 3072,
        causal: false,
        pre_ln: false,
        gelu_flops: 8,
    };
    let t = l.tokens();
    net.embedding("embeddings.word", t, HIDDEN, VOCAB);
    net.embedding("embeddings.token_type", t, HIDDEN, 2);
    net.add("embeddings.add_token_type", t * HIDDEN);
    net.embedding("embeddings.position", t, HIDDEN, 512);
    net.add("embeddings.add_position", t * HIDDEN);
    net.layer_norm("embeddings.ln", t, HIDDEN);
    net.dropout("embeddings.dropout", t * HIDDEN);
    for i in 0..12 {
        layer(&mut net, &format!("encoder.{i}"), &l);
    }
    net.linear("mlm.transform", t, HIDDEN, HIDDEN);
    net.pointwise("mlm.gelu", t * HIDDEN, (1, 1), 8);
    net.layer_norm("mlm.ln", t, HIDDEN);
    net.linear("mlm.decoder", t, HIDDEN, VOCAB);
    net.cross_entropy(t, VOCAB);
    net.finish(OptimizerKind::Adam, HIDDEN * VOCAB)
}
