//! BERT (Devlin et al. 2019): word, position and token-type embeddings,
//! post-LN encoder layers, and a task head.
//!
//! * `bert-base` as `BertForMaskedLM`: 12 layers of hidden 768, 12 heads,
//!   FFN 3072, and the MLM head (768 transform, GELU, LN, decoder to the
//!   30522 vocabulary, tied to the word embedding). Trained with Adam.
//! * `bert-large` as `BertForQuestionAnswering`: 24 layers of hidden 1024,
//!   16 heads, FFN 4096, and the span head (a linear layer to the start and
//!   end logits). Inference only, batch 1 and sequence 128 by default: the
//!   Tally benchmark's HP BERT server runs
//!   `bert-large-uncased-whole-word-masking-finetuned-squad` at
//!   `max_seq_length = 128`, one request at a time (tally-bench
//!   `python/workloads/inference/onnxruntime/bert/`).
//! * `bert-base-squad` as `BertForQuestionAnswering` on bert-base: the
//!   Tally benchmark's BERT training job (tally-bench
//!   `workloads/training/pytorch/bert/train_bert.py`) fine-tunes
//!   `bert-base-uncased` on SQuAD v2 at `max_seq_length = 384` with AdamW
//!   (batch 32 in its training config); the span loss is a cross-entropy
//!   of the start and of the end logits over the sequence positions.

use super::net::Net;
use super::transformer::{layer, Layer};
use super::{Defaults, Param};
use crate::model::{ModelParams, Operator, OptimizerKind, Phase};

const fn defaults(batch: u32, seq: u32) -> Defaults {
    Defaults {
        batch,
        seq: Param::Range {
            default: seq,
            max: 512,
        },
        kv: Param::Fixed("it is an encoder without a KV cache"),
    }
}

pub(crate) const DEFAULTS: Defaults = defaults(8, 128);
pub(crate) const LARGE_DEFAULTS: Defaults = defaults(1, 128);
pub(crate) const SQUAD_DEFAULTS: Defaults = defaults(32, 384);

const VOCAB: u64 = 30522;

/// What sets one BERT apart from another.
struct Config {
    layers: u64,
    hidden: u64,
    heads: u64,
    head: Head,
}

enum Head {
    MaskedLm,
    QuestionAnswering,
}

fn build_with(c: &Config, phase: Phase, p: &ModelParams) -> Vec<Operator> {
    let mut net = Net::new(phase);
    let hidden = c.hidden;
    let l = Layer {
        batch: u64::from(p.batch),
        seq: u64::from(p.seq_len.unwrap_or(128)),
        hidden,
        heads: c.heads,
        ffn: 4 * hidden,
        causal: false,
        pre_ln: false,
        gelu_flops: 8,
    };
    let t = l.tokens();
    net.embedding("embeddings.word", t, hidden, VOCAB);
    net.embedding("embeddings.token_type", t, hidden, 2);
    net.add("embeddings.add_token_type", t * hidden);
    net.embedding("embeddings.position", t, hidden, 512);
    net.add("embeddings.add_position", t * hidden);
    net.layer_norm("embeddings.ln", t, hidden);
    net.dropout("embeddings.dropout", t * hidden);
    for i in 0..c.layers {
        layer(&mut net, &format!("encoder.{i}"), &l);
    }
    match c.head {
        Head::MaskedLm => {
            net.linear("mlm.transform", t, hidden, hidden);
            net.pointwise("mlm.gelu", t * hidden, (1, 1), 8);
            net.layer_norm("mlm.ln", t, hidden);
            net.linear("mlm.decoder", t, hidden, VOCAB);
            net.cross_entropy(t, VOCAB);
        }
        Head::QuestionAnswering => {
            net.linear("qa_outputs", t, hidden, 2);
            // Start and end positions: one row of `seq` logits each.
            net.cross_entropy(2 * l.batch, l.seq);
        }
    }
    // The MLM decoder shares the word embedding's weights.
    let tied = match c.head {
        Head::MaskedLm => hidden * VOCAB,
        Head::QuestionAnswering => 0,
    };
    net.finish(OptimizerKind::Adam, tied)
}

/// BERT-base with the MLM head.
const BASE: Config = Config {
    layers: 12,
    hidden: 768,
    heads: 12,
    head: Head::MaskedLm,
};

/// BERT-base with the SQuAD span head (the Tally benchmark's training job).
const BASE_SQUAD: Config = Config {
    head: Head::QuestionAnswering,
    ..BASE
};

/// BERT-large with the SQuAD span head.
const LARGE_SQUAD: Config = Config {
    layers: 24,
    hidden: 1024,
    heads: 16,
    head: Head::QuestionAnswering,
};

pub(crate) fn build(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    build_with(&BASE, phase, p)
}

pub(crate) fn build_squad(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    build_with(&BASE_SQUAD, phase, p)
}

pub(crate) fn build_large(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    build_with(&LARGE_SQUAD, phase, p)
}
