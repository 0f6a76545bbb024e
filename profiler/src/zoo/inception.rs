//! Inception v3 (Szegedy et al. 2016, torchvision's `inception_v3` at its
//! 299x299 input, eval mode: no auxiliary classifier): the stem of five
//! BasicConv2d (conv, BN, ReLU) and two max pools, three InceptionA, an
//! InceptionB, four InceptionC (7x7 factorised into 1x7 and 7x1), an
//! InceptionD, two InceptionE, then the global average pool and the
//! classifier. Every branch is its own sequence of launches and a block's
//! branches are joined by one `torch.cat`. Inference only.
//!
//! A 1x7 convolution with padding (0, 3) is written as a 1x7 convolution
//! without padding over an input 6 columns wider (the model vocabulary has
//! one padding for both dimensions): the same output shape and FLOPs.

use super::net::{Act, Activation, ConvCfg, Net};
use super::{Defaults, Param};
use crate::model::{ConvBackend, ModelParams, OpKind, Operator, OptimizerKind, Phase};

pub(crate) const DEFAULTS: Defaults = Defaults {
    batch: 32,
    seq: Param::Fixed("the input is a fixed 299x299 image"),
    kv: Param::Fixed("it has no KV cache"),
};

/// BasicConv2d: a square conv (padding `pad`), BN and ReLU.
fn basic(net: &mut Net, name: &str, x: Act, c_out: u64, k: u64, stride: u64, pad: u64) -> Act {
    net.conv_bn(
        name,
        x,
        ConvCfg {
            pad,
            ..ConvCfg::new(c_out, k, stride, Activation::Relu)
        },
    )
}

/// BasicConv2d with a `kh`x`kw` kernel padded to keep the map's size.
fn factorised(net: &mut Net, name: &str, x: Act, c_out: u64, kh: u64, kw: u64) -> Act {
    let dtype = net.dtype;
    net.push(
        format!("{name}.conv"),
        OpKind::Conv2d {
            n: x.n,
            c_in: x.c,
            h: x.h + kh - 1,
            w: x.w + kw - 1,
            c_out,
            kh,
            kw,
            stride: 1,
            pad: 0,
            groups: 1,
            dtype,
            backend: ConvBackend::Cudnn,
        },
    );
    let y = Act { c: c_out, ..x };
    net.batch_norm(name, y);
    net.activation(name, y.elements(), Activation::Relu);
    y
}

fn inception_a(net: &mut Net, name: &str, x: Act, pool_features: u64) -> Act {
    let b1 = basic(net, &format!("{name}.branch1x1"), x, 64, 1, 1, 0);
    let b5 = basic(net, &format!("{name}.branch5x5_1"), x, 48, 1, 1, 0);
    let b5 = basic(net, &format!("{name}.branch5x5_2"), b5, 64, 5, 1, 2);
    let d = basic(net, &format!("{name}.branch3x3dbl_1"), x, 64, 1, 1, 0);
    let d = basic(net, &format!("{name}.branch3x3dbl_2"), d, 96, 3, 1, 1);
    let d = basic(net, &format!("{name}.branch3x3dbl_3"), d, 96, 3, 1, 1);
    let p = net.avg_pool(&format!("{name}.branch_pool.avg"), x, 3, 1, 1);
    let p = basic(
        net,
        &format!("{name}.branch_pool"),
        p,
        pool_features,
        1,
        1,
        0,
    );
    net.concat(&format!("{name}.cat"), &[b1, b5, d, p])
}

fn inception_b(net: &mut Net, name: &str, x: Act) -> Act {
    let b3 = basic(net, &format!("{name}.branch3x3"), x, 384, 3, 2, 0);
    let d = basic(net, &format!("{name}.branch3x3dbl_1"), x, 64, 1, 1, 0);
    let d = basic(net, &format!("{name}.branch3x3dbl_2"), d, 96, 3, 1, 1);
    let d = basic(net, &format!("{name}.branch3x3dbl_3"), d, 96, 3, 2, 0);
    let p = net.max_pool(&format!("{name}.branch_pool"), x, 3, 2, 0);
    net.concat(&format!("{name}.cat"), &[b3, d, p])
}

fn inception_c(net: &mut Net, name: &str, x: Act, c7: u64) -> Act {
    let b1 = basic(net, &format!("{name}.branch1x1"), x, 192, 1, 1, 0);
    let s = basic(net, &format!("{name}.branch7x7_1"), x, c7, 1, 1, 0);
    let s = factorised(net, &format!("{name}.branch7x7_2"), s, c7, 1, 7);
    let s = factorised(net, &format!("{name}.branch7x7_3"), s, 192, 7, 1);
    let d = basic(net, &format!("{name}.branch7x7dbl_1"), x, c7, 1, 1, 0);
    let d = factorised(net, &format!("{name}.branch7x7dbl_2"), d, c7, 7, 1);
    let d = factorised(net, &format!("{name}.branch7x7dbl_3"), d, c7, 1, 7);
    let d = factorised(net, &format!("{name}.branch7x7dbl_4"), d, c7, 7, 1);
    let d = factorised(net, &format!("{name}.branch7x7dbl_5"), d, 192, 1, 7);
    let p = net.avg_pool(&format!("{name}.branch_pool.avg"), x, 3, 1, 1);
    let p = basic(net, &format!("{name}.branch_pool"), p, 192, 1, 1, 0);
    net.concat(&format!("{name}.cat"), &[b1, s, d, p])
}

fn inception_d(net: &mut Net, name: &str, x: Act) -> Act {
    let b3 = basic(net, &format!("{name}.branch3x3_1"), x, 192, 1, 1, 0);
    let b3 = basic(net, &format!("{name}.branch3x3_2"), b3, 320, 3, 2, 0);
    let b7 = basic(net, &format!("{name}.branch7x7x3_1"), x, 192, 1, 1, 0);
    let b7 = factorised(net, &format!("{name}.branch7x7x3_2"), b7, 192, 1, 7);
    let b7 = factorised(net, &format!("{name}.branch7x7x3_3"), b7, 192, 7, 1);
    let b7 = basic(net, &format!("{name}.branch7x7x3_4"), b7, 192, 3, 2, 0);
    let p = net.max_pool(&format!("{name}.branch_pool"), x, 3, 2, 0);
    net.concat(&format!("{name}.cat"), &[b3, b7, p])
}

fn inception_e(net: &mut Net, name: &str, x: Act) -> Act {
    let b1 = basic(net, &format!("{name}.branch1x1"), x, 320, 1, 1, 0);
    let s = basic(net, &format!("{name}.branch3x3_1"), x, 384, 1, 1, 0);
    let sa = factorised(net, &format!("{name}.branch3x3_2a"), s, 384, 1, 3);
    let sb = factorised(net, &format!("{name}.branch3x3_2b"), s, 384, 3, 1);
    let s = net.concat(&format!("{name}.branch3x3.cat"), &[sa, sb]);
    let d = basic(net, &format!("{name}.branch3x3dbl_1"), x, 448, 1, 1, 0);
    let d = basic(net, &format!("{name}.branch3x3dbl_2"), d, 384, 3, 1, 1);
    let da = factorised(net, &format!("{name}.branch3x3dbl_3a"), d, 384, 1, 3);
    let db = factorised(net, &format!("{name}.branch3x3dbl_3b"), d, 384, 3, 1);
    let d = net.concat(&format!("{name}.branch3x3dbl.cat"), &[da, db]);
    let p = net.avg_pool(&format!("{name}.branch_pool.avg"), x, 3, 1, 1);
    let p = basic(net, &format!("{name}.branch_pool"), p, 192, 1, 1, 0);
    net.concat(&format!("{name}.cat"), &[b1, s, d, p])
}

pub(crate) fn build(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    let mut net = Net::new(phase);
    let b = u64::from(p.batch);
    let image = Act {
        h: 299,
        w: 299,
        ..Act::image(b)
    };
    let x = basic(&mut net, "Conv2d_1a_3x3", image, 32, 3, 2, 0);
    let x = basic(&mut net, "Conv2d_2a_3x3", x, 32, 3, 1, 0);
    let x = basic(&mut net, "Conv2d_2b_3x3", x, 64, 3, 1, 1);
    let x = net.max_pool("maxpool1", x, 3, 2, 0);
    let x = basic(&mut net, "Conv2d_3b_1x1", x, 80, 1, 1, 0);
    let x = basic(&mut net, "Conv2d_4a_3x3", x, 192, 3, 1, 0);
    let mut x = net.max_pool("maxpool2", x, 3, 2, 0);
    for (name, pool) in [("Mixed_5b", 32), ("Mixed_5c", 64), ("Mixed_5d", 64)] {
        x = inception_a(&mut net, name, x, pool);
    }
    x = inception_b(&mut net, "Mixed_6a", x);
    for (name, c7) in [
        ("Mixed_6b", 128),
        ("Mixed_6c", 160),
        ("Mixed_6d", 160),
        ("Mixed_6e", 192),
    ] {
        x = inception_c(&mut net, name, x, c7);
    }
    x = inception_d(&mut net, "Mixed_7a", x);
    x = inception_e(&mut net, "Mixed_7b", x);
    x = inception_e(&mut net, "Mixed_7c", x);
    net.reduction("avgpool", b * x.c, x.h * x.w);
    net.linear("fc", b, x.c, 1000);
    net.cross_entropy(b, 1000);
    net.finish(OptimizerKind::Sgd, 0)
}
