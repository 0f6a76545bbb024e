//! PEGASUS-X base (Phang, Zhao and Liu 2022, "Investigating Efficiently
//! Extending Transformers for Long Input Summarization"; HF
//! `google/pegasus-x-base` config: d_model 768, 12 encoder and 12 decoder
//! layers, 12 heads, FFN 3072 with ReLU, vocabulary 96103, pre-LN, scaled
//! embeddings with sinusoidal positions, dropout 0.1, `block_size` 512,
//! `num_global_tokens` 128, `stagger_local_blocks`; 272M parameters) as HF
//! `PegasusXForConditionalGeneration` trains it.
//!
//! Encoder: 128 learned global tokens ride beside the input. In every
//! layer the input and the global tokens each get their own layer norm and
//! projections (same weights for all but the global LN); the global tokens
//! attend to all tokens, each 512-token block of the input to itself and
//! the global tokens; odd layers first pad the input by half a block at
//! both ends, so their blocks straddle the even layers' (one block more).
//! Each attention is one fused kernel, as everywhere in the zoo. The MLP
//! runs on the input and on the global tokens. Decoder: 12 pre-LN layers
//! with causal self-attention and cross-attention over the encoder output,
//! then the LM head tied to the shared embedding. Trained with AdamW.
//!
//! The Tally benchmark's job (tally-bench
//! `python/workloads/training/pytorch/pegasus/train_pegasus.py`, batch 4 in
//! `python/configs/train_config.py`) tokenizes the first 1000 XSum
//! documents and summaries with `padding=True, truncation=True` in one
//! call, so every sample is padded to the longest of the 1000; the script
//! fixes no number. Defaults: 2048 input tokens (four local blocks; our
//! estimate of the longest of 1000 XSum articles, which average 431 words)
//! and 64 target tokens (the XSum target length of PEGASUS, Zhang et al.
//! 2020); `--seq` sets the input length, padded up to whole blocks as HF
//! does. Note the script loads the checkpoint with
//! `PegasusForConditionalGeneration`, which would run full attention with
//! these widths; this entry is the PEGASUS-X architecture the job names.

use super::net::Net;
use super::seq2seq::Stack;
use super::{Defaults, Param};
use crate::model::{ModelParams, OpKind, Operator, OptimizerKind, Phase};

pub(crate) const DEFAULTS: Defaults = Defaults {
    batch: 4,
    seq: Param::Range {
        default: INPUT,
        max: 16384,
    },
    kv: Param::Fixed("training runs the decoder over all targets without a KV cache"),
};

const HIDDEN: u64 = 768;
const HEADS: u64 = 12;
const FFN: u64 = 3072;
const LAYERS: u64 = 12;
const VOCAB: u64 = 96103;
const BLOCK: u64 = 512;
const GLOBAL: u64 = 128;
const INPUT: u32 = 2048;
pub(crate) const TARGET: u64 = 64;

/// Sinusoidal positions computed on the fly (arange, exp, sin, cos).
fn positions(net: &mut Net, name: &str, elements: u64) {
    net.pointwise(name, elements, (0, 1), 20);
}

/// The global-local encoder layer `i` over `len` input tokens (a whole
/// number of blocks). Returns the parameters its global-token path reuses
/// from the input path.
fn encoder_layer(net: &mut Net, s: &Stack, i: u64, len: u64) -> u64 {
    let p = format!("encoder.layers.{i}");
    let b = s.batch;
    let dtype = net.dtype;
    let stagger = i % 2 == 1;
    net.layer_norm(&format!("{p}.self_attn_layer_norm"), b * len, HIDDEN);
    net.layer_norm(
        &format!("{p}.global_self_attn_layer_norm"),
        b * GLOBAL,
        HIDDEN,
    );
    let padded = if stagger { len + BLOCK } else { len };
    if stagger {
        net.push(
            format!("{p}.stagger_pad"),
            OpKind::Copy {
                bytes: b * padded * HIDDEN * dtype.bytes(),
            },
        );
    }
    for proj in ["q_proj", "k_proj", "v_proj"] {
        net.linear(&format!("{p}.self_attn.{proj}"), b * padded, HIDDEN, HIDDEN);
        net.linear(
            &format!("{p}.self_attn.global.{proj}"),
            b * GLOBAL,
            HIDDEN,
            HIDDEN,
        );
    }
    let attention = |batch, q_len, kv_len| OpKind::Attention {
        batch,
        heads: HEADS,
        kv_heads: HEADS,
        q_len,
        kv_len,
        head_dim: HIDDEN / HEADS,
        causal: false,
        dtype,
    };
    net.push(
        format!("{p}.self_attn.global_core"),
        attention(b, GLOBAL, GLOBAL + padded),
    );
    net.push(
        format!("{p}.self_attn.local_core"),
        attention(b * (padded / BLOCK), BLOCK, BLOCK + GLOBAL),
    );
    net.linear(
        &format!("{p}.self_attn.out_proj"),
        b * padded,
        HIDDEN,
        HIDDEN,
    );
    net.linear(
        &format!("{p}.self_attn.global.out_proj"),
        b * GLOBAL,
        HIDDEN,
        HIDDEN,
    );
    s.residual(net, &format!("{p}.self_attn"), b * len);
    s.residual(net, &format!("{p}.self_attn.global"), b * GLOBAL);
    net.layer_norm(&format!("{p}.final_layer_norm"), b * len, HIDDEN);
    s.mlp(net, &format!("{p}.mlp"), b * len);
    s.residual(net, &format!("{p}.mlp"), b * len);
    net.layer_norm(&format!("{p}.global.final_layer_norm"), b * GLOBAL, HIDDEN);
    s.mlp(net, &format!("{p}.global.mlp"), b * GLOBAL);
    s.residual(net, &format!("{p}.global.mlp"), b * GLOBAL);
    // Global q, k, v, out and MLP weights, and the final LN, are the input's.
    4 * HIDDEN * HIDDEN + 2 * HIDDEN * FFN + 2 * HIDDEN
}

pub(crate) fn build(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    let mut net = Net::new(phase);
    let b = u64::from(p.batch);
    let input = u64::from(p.seq_len.unwrap_or(INPUT)).div_ceil(BLOCK) * BLOCK;
    let s = Stack {
        batch: b,
        hidden: HIDDEN,
        heads: HEADS,
        ffn: FFN,
        act_flops: 1,
        dropout: true,
    };
    let scale = |net: &mut Net, name: &str, tokens: u64| {
        net.pointwise(name, tokens * HIDDEN, (1, 1), 1);
    };
    let t_in = b * input;
    net.embedding("encoder.embed_tokens", t_in, HIDDEN, VOCAB);
    scale(&mut net, "encoder.embed_scale", t_in);
    positions(&mut net, "encoder.embed_positions", t_in * HIDDEN);
    net.add("encoder.embed.add", t_in * HIDDEN);
    net.dropout("encoder.embed.dropout", t_in * HIDDEN);
    net.embedding("encoder.embed_global", GLOBAL, HIDDEN, GLOBAL);
    let mut shared = 0;
    for i in 0..LAYERS {
        shared += encoder_layer(&mut net, &s, i, input);
    }
    net.layer_norm("encoder.layer_norm", t_in, HIDDEN);
    let t = b * TARGET;
    net.embedding("decoder.embed_tokens", t, HIDDEN, VOCAB);
    scale(&mut net, "decoder.embed_scale", t);
    positions(&mut net, "decoder.embed_positions", t * HIDDEN);
    net.add("decoder.embed.add", t * HIDDEN);
    net.dropout("decoder.embed.dropout", t * HIDDEN);
    for i in 0..LAYERS {
        s.decoder_layer(&mut net, &format!("decoder.layers.{i}"), TARGET, input);
    }
    net.layer_norm("decoder.layer_norm", t, HIDDEN);
    net.linear("lm_head", t, HIDDEN, VOCAB);
    net.cross_entropy(t, VOCAB);
    // One shared embedding for encoder, decoder and LM head.
    net.finish(OptimizerKind::Adam, shared + 2 * HIDDEN * VOCAB)
}
