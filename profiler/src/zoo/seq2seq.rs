//! The pre-LN encoder-decoder blocks of HF's Whisper and Pegasus(-X)
//! layers as eager PyTorch launches them: separate q, k and v projections
//! (cross-attention projects k and v from the encoder output in every
//! decoder layer), one fused attention kernel, the output projection,
//! residual adds, and an MLP whose activation and dropouts the model sets.

use super::net::Net;
use crate::model::OpKind;

/// Widths shared by every layer of a stack.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stack {
    pub batch: u64,
    pub hidden: u64,
    pub heads: u64,
    pub ffn: u64,
    /// FP32 FLOPs per element of the MLP activation (ReLU 1, erf GELU 8).
    pub act_flops: u64,
    /// Whether the config's dropouts are non-zero (a zero-probability
    /// dropout launches nothing).
    pub dropout: bool,
}

impl Stack {
    /// Attention of `q_len` queries per sequence over `kv_len` keys
    /// projected from `kv_len` tokens (the decoder's own or the encoder's).
    pub fn attention(&self, net: &mut Net, prefix: &str, q_len: u64, kv_len: u64, causal: bool) {
        let (b, h) = (self.batch, self.hidden);
        let dtype = net.dtype;
        net.linear(&format!("{prefix}.q_proj"), b * q_len, h, h);
        net.linear(&format!("{prefix}.k_proj"), b * kv_len, h, h);
        net.linear(&format!("{prefix}.v_proj"), b * kv_len, h, h);
        net.push(
            format!("{prefix}.core"),
            OpKind::Attention {
                batch: b,
                heads: self.heads,
                kv_heads: self.heads,
                q_len,
                kv_len,
                head_dim: h / self.heads,
                causal,
                dtype,
            },
        );
        net.linear(&format!("{prefix}.out_proj"), b * q_len, h, h);
    }

    /// Dropout (where the config has it) and the residual add of `tokens`.
    pub fn residual(&self, net: &mut Net, prefix: &str, tokens: u64) {
        if self.dropout {
            net.dropout(&format!("{prefix}.dropout"), tokens * self.hidden);
        }
        net.add(&format!("{prefix}.residual"), tokens * self.hidden);
    }

    /// fc1, activation (and its dropout), fc2 over `tokens` rows.
    pub fn mlp(&self, net: &mut Net, prefix: &str, tokens: u64) {
        net.linear(&format!("{prefix}.fc1"), tokens, self.hidden, self.ffn);
        net.pointwise(
            &format!("{prefix}.act"),
            tokens * self.ffn,
            (1, 1),
            self.act_flops,
        );
        if self.dropout {
            net.dropout(&format!("{prefix}.act_dropout"), tokens * self.ffn);
        }
        net.linear(&format!("{prefix}.fc2"), tokens, self.ffn, self.hidden);
    }

    /// A full-attention encoder layer over `len` positions per sequence.
    pub fn encoder_layer(&self, net: &mut Net, prefix: &str, len: u64) {
        let t = self.batch * len;
        net.layer_norm(&format!("{prefix}.self_attn_layer_norm"), t, self.hidden);
        self.attention(net, &format!("{prefix}.self_attn"), len, len, false);
        self.residual(net, &format!("{prefix}.self_attn"), t);
        net.layer_norm(&format!("{prefix}.final_layer_norm"), t, self.hidden);
        self.mlp(net, &format!("{prefix}.mlp"), t);
        self.residual(net, &format!("{prefix}.mlp"), t);
    }

    /// A decoder layer over `len` target positions attending to `enc_len`
    /// encoder positions.
    pub fn decoder_layer(&self, net: &mut Net, prefix: &str, len: u64, enc_len: u64) {
        let t = self.batch * len;
        net.layer_norm(&format!("{prefix}.self_attn_layer_norm"), t, self.hidden);
        self.attention(net, &format!("{prefix}.self_attn"), len, len, true);
        self.residual(net, &format!("{prefix}.self_attn"), t);
        net.layer_norm(&format!("{prefix}.encoder_attn_layer_norm"), t, self.hidden);
        self.attention(net, &format!("{prefix}.encoder_attn"), len, enc_len, false);
        self.residual(net, &format!("{prefix}.encoder_attn"), t);
        net.layer_norm(&format!("{prefix}.final_layer_norm"), t, self.hidden);
        self.mlp(net, &format!("{prefix}.mlp"), t);
        self.residual(net, &format!("{prefix}.mlp"), t);
    }
}
