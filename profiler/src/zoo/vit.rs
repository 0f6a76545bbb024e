//! ViT-B/16 (Dosovitskiy et al. 2021): 16x16 stride-16 patch embedding
//! conv (224x224 -> 196 patches), class token (197 tokens), position
//! embedding, 12 pre-LN layers like BERT-base, final LN and a 1000-class
//! head on the class token. Trained with Adam.

use super::net::Net;
use super::transformer::{layer, Layer};
use super::{Defaults, Param};
use crate::model::{ConvBackend, ModelParams, OpKind, Operator, OptimizerKind, Phase};

pub(crate) const DEFAULTS: Defaults = Defaults {
    batch: 32,
    seq: Param::Fixed("the sequence is fixed by the 224x224 image (197 tokens)"),
    kv: Param::Fixed("it is an encoder without a KV cache"),
};

const HIDDEN: u64 = 768;

pub(crate) fn build(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    let mut net = Net::new(phase);
    let b = u64::from(p.batch);
    let l = Layer {
        batch: b,
        seq: 197,
        hidden: HIDDEN,
        heads: 12,
        ffn: 3072,
        causal: false,
        pre_ln: true,
        gelu_flops: 8,
    };
    let t = l.tokens();
    let dtype = net.dtype;
    // The patch embedding is a plain conv with bias (no BN or activation).
    net.push(
        "patch_embed",
        OpKind::Conv2d {
            n: b,
            c_in: 3,
            h: 224,
            w: 224,
            c_out: HIDDEN,
            kh: 16,
            kw: 16,
            stride: 16,
            pad: 0,
            groups: 1,
            dtype,
            backend: ConvBackend::Cudnn,
        },
    );
    let patches = b * 196 * HIDDEN;
    net.push(
        "patch_embed.flatten_transpose",
        OpKind::Copy { bytes: patches * 2 },
    );
    net.push(
        "cls_token.cat",
        OpKind::Copy {
            bytes: t * HIDDEN * 2,
        },
    );
    net.add("pos_embed.add", t * HIDDEN);
    net.dropout("pos_embed.dropout", t * HIDDEN);
    for i in 0..12 {
        layer(&mut net, &format!("encoder.{i}"), &l);
    }
    net.layer_norm("encoder.ln", t, HIDDEN);
    net.linear("head", b, HIDDEN, 1000);
    net.cross_entropy(b, 1000);
    net.finish(OptimizerKind::Adam, 0)
}
