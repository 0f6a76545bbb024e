//! MobileNetV2 (Sandler et al. 2018, torchvision): 3x3 stem, inverted
//! residual blocks (1x1 expansion by 6, depthwise 3x3, linear 1x1
//! projection, residual when shapes match) with the paper's widths, a
//! 1x1 conv to 1280, average pool and classifier. Trained with SGD.

use super::net::{Act, Activation, ConvCfg, Net};
use super::{Defaults, Param};
use crate::model::{ModelParams, Operator, OptimizerKind, Phase};

pub(crate) const DEFAULTS: Defaults = Defaults {
    batch: 32,
    seq: Param::Fixed("the input is a fixed 224x224 image"),
    kv: Param::Fixed("it has no KV cache"),
};

/// (expansion t, output channels c, repeats n, first stride s), Table 2.
const SETTINGS: [(u64, u64, u64, u64); 7] = [
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
];

pub(crate) fn build(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    let mut net = Net::new(phase);
    let b = u64::from(p.batch);
    let image = Act::image(b);
    let mut x = net.conv_bn(
        "features.0",
        image,
        ConvCfg::new(32, 3, 2, Activation::Relu6),
    );
    let mut index = 1;
    for &(t, c, n, s) in &SETTINGS {
        for i in 0..n {
            let prefix = format!("features.{index}");
            let stride = if i == 0 { s } else { 1 };
            let hidden = x.c * t;
            let mut y = x;
            if t != 1 {
                y = net.conv_bn(
                    &format!("{prefix}.expand"),
                    y,
                    ConvCfg::new(hidden, 1, 1, Activation::Relu6),
                );
            }
            y = net.conv_bn(
                &format!("{prefix}.depthwise"),
                y,
                ConvCfg {
                    groups: hidden,
                    ..ConvCfg::new(hidden, 3, stride, Activation::Relu6)
                },
            );
            y = net.conv_bn(
                &format!("{prefix}.project"),
                y,
                ConvCfg::new(c, 1, 1, Activation::None),
            );
            if stride == 1 && x.c == c {
                net.add(&format!("{prefix}.add"), y.elements());
            }
            x = y;
            index += 1;
        }
    }
    let x = net.conv_bn(
        &format!("features.{index}"),
        x,
        ConvCfg::new(1280, 1, 1, Activation::Relu6),
    );
    net.reduction("avgpool", b * x.c, x.h * x.w);
    net.dropout("classifier.dropout", b * x.c);
    net.linear("classifier.fc", b, x.c, 1000);
    net.cross_entropy(b, 1000);
    net.finish(OptimizerKind::Sgd, 0)
}
