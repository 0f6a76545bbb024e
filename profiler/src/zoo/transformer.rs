//! The transformer encoder/decoder layer shared by BERT (post-LN), ViT and
//! GPT-2 (pre-LN): fused QKV projection, flash attention, output
//! projection, residual adds, layer norms and a GELU MLP, with dropout in
//! training.

use super::net::Net;
use crate::model::OpKind;

/// Shape of one layer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layer {
    pub batch: u64,
    pub seq: u64,
    pub hidden: u64,
    pub heads: u64,
    pub ffn: u64,
    pub causal: bool,
    /// Layer norm before each sub-block (ViT, GPT-2) or after (BERT).
    pub pre_ln: bool,
    /// FP32 FLOPs per element of the GELU (erf ~8, tanh approximation ~14).
    pub gelu_flops: u64,
}

impl Layer {
    pub fn tokens(&self) -> u64 {
        self.batch * self.seq
    }
}

/// Emit the operators of layer `prefix`.
pub(crate) fn layer(net: &mut Net, prefix: &str, l: &Layer) {
    let t = l.tokens();
    let act = t * l.hidden;
    let dtype = net.dtype;
    if l.pre_ln {
        net.layer_norm(&format!("{prefix}.ln_1"), t, l.hidden);
    }
    net.linear(&format!("{prefix}.attn.qkv"), t, l.hidden, 3 * l.hidden);
    net.push(
        format!("{prefix}.attn.core"),
        OpKind::Attention {
            batch: l.batch,
            heads: l.heads,
            kv_heads: l.heads,
            q_len: l.seq,
            kv_len: l.seq,
            head_dim: l.hidden / l.heads,
            causal: l.causal,
            dtype,
        },
    );
    net.linear(&format!("{prefix}.attn.out"), t, l.hidden, l.hidden);
    net.dropout(&format!("{prefix}.attn.dropout"), act);
    net.add(&format!("{prefix}.attn.residual"), act);
    net.layer_norm(
        &format!("{prefix}.{}", if l.pre_ln { "ln_2" } else { "attn.ln" }),
        t,
        l.hidden,
    );
    net.linear(&format!("{prefix}.mlp.fc1"), t, l.hidden, l.ffn);
    net.pointwise(
        &format!("{prefix}.mlp.gelu"),
        t * l.ffn,
        (1, 1),
        l.gelu_flops,
    );
    net.linear(&format!("{prefix}.mlp.fc2"), t, l.ffn, l.hidden);
    net.dropout(&format!("{prefix}.mlp.dropout"), act);
    net.add(&format!("{prefix}.mlp.residual"), act);
    if !l.pre_ln {
        net.layer_norm(&format!("{prefix}.mlp.ln"), t, l.hidden);
    }
}
