//! Llama-2-7B (Touvron et al. 2023) as HF `LlamaForCausalLM` runs it in
//! fp16: 32 layers, hidden 4096, 32 heads of 128, RMSNorm, RoPE, separate
//! q/k/v/o projections, SwiGLU MLP of 11008 (gate, up, SiLU, multiply,
//! down), vocabulary 32000.
//!
//! * `llama2-7b-prefill`: the prompt pass of `generate` — the KV cache is
//!   filled and logits are computed for the **last token only** (HF's
//!   `logits_to_keep = 1`).
//! * `llama2-7b-decode`: one decode step per sequence — every projection a
//!   weight-streaming GEMV, flash-decoding attention over the cache,
//!   KV-cache append, and sampling (f32 cast, temperature, softmax,
//!   multinomial) plus `generate`'s attention-mask and EOS bookkeeping.
//! * `llama2-7b`: one whole generation request, as the Tally benchmark's
//!   ONNX Runtime Llama-2 server job (tally-bench
//!   `python/workloads/inference/onnxruntime/llama/llama.py`) makes it: a
//!   fixed prompt, `I liked "Breaking Bad" and "Band of Brothers". Do you
//!   have any recommendations of other shows I might like?\n`, which the
//!   Llama-2 SentencePiece tokenizer makes 29 tokens with BOS (counted with
//!   the 32000-token Llama vocabulary), and `max_length = 128` (prompt plus
//!   generated). Its loop runs while `current_length <= max_length`, so a
//!   request is one prefill step of the prompt and then one decode step per
//!   generated token, 128 - 29 = 99 of them, the KV length growing by one
//!   each step from 30 to 128. Every step is the step the two entries above
//!   build followed by the decode entry's token selection (the script picks
//!   greedily; a softmax-and-draw costs the same handful of tiny launches).
//!   `--seq` sets the prompt length.

use super::net::Net;
use super::{Defaults, Param};
use crate::model::{Dtype, ModelParams, OpKind, Operator, OptimizerKind, Phase};

const HIDDEN: u64 = 4096;
const HEADS: u64 = 32;
const HEAD_DIM: u64 = 128;
const FFN: u64 = 11008;
const VOCAB: u64 = 32000;
const LAYERS: u64 = 32;
const CONTEXT: u32 = 4096;

pub(crate) const PREFILL_DEFAULTS: Defaults = Defaults {
    batch: 1,
    seq: Param::Range {
        default: 512,
        max: CONTEXT,
    },
    kv: Param::Fixed("prefill starts from an empty KV cache"),
};

pub(crate) const DECODE_DEFAULTS: Defaults = Defaults {
    batch: 8,
    seq: Param::Fixed("a decode step processes one token per sequence"),
    kv: Param::Range {
        default: 2048,
        max: CONTEXT - 1,
    },
};

/// Prompt plus generated tokens of one benchmark request (`max_length`).
pub(crate) const GENERATION_LENGTH: u32 = 128;
/// Tokens of the benchmark's prompt, BOS included.
pub(crate) const BENCHMARK_PROMPT: u32 = 29;

pub(crate) const GENERATION_DEFAULTS: Defaults = Defaults {
    batch: 1,
    seq: Param::Range {
        default: BENCHMARK_PROMPT,
        max: GENERATION_LENGTH,
    },
    kv: Param::Fixed("a generation grows its KV cache from the prompt to 128 tokens, one per step"),
};

/// A small f32 pointwise op (RoPE tables, sampling bookkeeping).
fn f32_pointwise(net: &mut Net, name: &str, elements: u64, io: (u64, u64), flops: u64) {
    net.push(
        name,
        OpKind::Elementwise {
            elements,
            inputs: io.0,
            outputs: io.1,
            flops_per_element: flops,
            dtype: Dtype::F32,
        },
    );
}

/// The decoder stack over `batch` sequences of `q_len` new tokens each,
/// attending to `kv_len` keys (cache included).
fn decoder(net: &mut Net, batch: u64, q_len: u64, kv_len: u64) {
    let t = batch * q_len;
    let dtype = net.dtype;
    net.embedding("embed_tokens", t, HIDDEN, VOCAB);
    // cos/sin tables for the positions: inv_freq x positions, cos and sin.
    f32_pointwise(net, "rotary_emb.cos_sin", t * HEAD_DIM, (1, 2), 20);
    for i in 0..LAYERS {
        let p = format!("layers.{i}");
        net.layer_norm(&format!("{p}.input_layernorm"), t, HIDDEN);
        for proj in ["q_proj", "k_proj", "v_proj"] {
            net.linear(&format!("{p}.self_attn.{proj}"), t, HIDDEN, HIDDEN);
        }
        // x * cos + rotate_half(x) * sin, for q then k.
        net.pointwise(&format!("{p}.self_attn.rotary_q"), t * HIDDEN, (2, 1), 3);
        net.pointwise(&format!("{p}.self_attn.rotary_k"), t * HIDDEN, (2, 1), 3);
        for cache in ["k_cache", "v_cache"] {
            net.push(
                format!("{p}.self_attn.{cache}.append"),
                OpKind::Copy {
                    bytes: t * HIDDEN * dtype.bytes(),
                },
            );
        }
        net.push(
            format!("{p}.self_attn.attention"),
            OpKind::Attention {
                batch,
                heads: HEADS,
                kv_heads: HEADS,
                q_len,
                kv_len,
                head_dim: HEAD_DIM,
                causal: q_len > 1,
                dtype,
            },
        );
        net.linear(&format!("{p}.self_attn.o_proj"), t, HIDDEN, HIDDEN);
        net.add(&format!("{p}.attn_residual"), t * HIDDEN);
        net.layer_norm(&format!("{p}.post_attention_layernorm"), t, HIDDEN);
        net.linear(&format!("{p}.mlp.gate_proj"), t, HIDDEN, FFN);
        net.linear(&format!("{p}.mlp.up_proj"), t, HIDDEN, FFN);
        net.pointwise(&format!("{p}.mlp.act_fn"), t * FFN, (1, 1), 4);
        net.pointwise(&format!("{p}.mlp.mul"), t * FFN, (2, 1), 1);
        net.linear(&format!("{p}.mlp.down_proj"), t, FFN, HIDDEN);
        net.add(&format!("{p}.mlp_residual"), t * HIDDEN);
    }
    net.layer_norm("norm", t, HIDDEN);
}

/// One forward step of `generate`: `q_len` new tokens per sequence
/// attending to `kv_len` keys (cache included), then the LM head on the
/// last token of each sequence.
fn step(net: &mut Net, batch: u64, q_len: u64, kv_len: u64) {
    decoder(net, batch, q_len, kv_len);
    net.linear("lm_head", batch, HIDDEN, VOCAB);
}

/// Picking the next token from the logits of a step that attended to
/// `kv_len` keys, and `generate`'s bookkeeping.
fn select_token(net: &mut Net, batch: u64, kv_len: u64) {
    let logits = batch * VOCAB;
    // logits.float(): f16 in, f32 out (two f16-sized words).
    net.pointwise("logits.float", logits, (1, 2), 0);
    f32_pointwise(net, "sample.temperature", logits, (1, 1), 1);
    net.push(
        "sample.softmax",
        OpKind::Softmax {
            rows: batch,
            cols: VOCAB,
            dtype: Dtype::F32,
        },
    );
    net.push(
        "sample.multinomial",
        OpKind::Reduction {
            rows: batch,
            cols: VOCAB,
            dtype: Dtype::F32,
        },
    );
    net.push(
        "generate.attention_mask.cat",
        OpKind::Copy {
            bytes: batch * kv_len * 8,
        },
    );
    f32_pointwise(net, "generate.unfinished_sequences", batch, (2, 1), 2);
}

pub(crate) fn build_prefill(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    let mut net = Net::new(phase);
    let seq = u64::from(p.seq_len.unwrap_or(512));
    step(&mut net, u64::from(p.batch), seq, seq);
    net.finish(OptimizerKind::Adam, 0)
}

pub(crate) fn build_decode(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    let mut net = Net::new(phase);
    let batch = u64::from(p.batch);
    let kv = u64::from(p.kv_len.unwrap_or(2048)) + 1;
    step(&mut net, batch, 1, kv);
    select_token(&mut net, batch, kv);
    net.finish(OptimizerKind::Adam, 0)
}

/// The (new tokens, KV length) of every step of a request with a
/// `prompt`-token prompt: the prefill, then one token per decode step
/// until the sequence holds `GENERATION_LENGTH` tokens.
pub(crate) fn generation_steps(prompt: u64) -> Vec<(u64, u64)> {
    let total = u64::from(GENERATION_LENGTH);
    std::iter::once((prompt, prompt))
        .chain((prompt + 1..=total).map(|kv| (1, kv)))
        .collect()
}

pub(crate) fn build_generation(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    let batch = u64::from(p.batch);
    let prompt = u64::from(p.seq_len.unwrap_or(BENCHMARK_PROMPT));
    let mut ops = Vec::new();
    for (i, (q_len, kv_len)) in generation_steps(prompt).into_iter().enumerate() {
        let mut net = Net::new(phase);
        step(&mut net, batch, q_len, kv_len);
        select_token(&mut net, batch, kv_len);
        let prefix = if i == 0 {
            "prefill".to_string()
        } else {
            format!("decode.{i}")
        };
        ops.extend(net.ops.into_iter().map(|mut o| {
            o.name = format!("{prefix}.{}", o.name);
            o
        }));
    }
    ops
}
