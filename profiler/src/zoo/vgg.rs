//! VGG-16 and VGG-19 (Simonyan & Zisserman 2015, configurations D and E;
//! torchvision's `vgg16` / `vgg19`, no batch norm): 3x3 convolutions with
//! bias and ReLU in five stages separated by 2x2 max pools, then the
//! adaptive 7x7 average pool and the 25088 -> 4096 -> 4096 -> 1000
//! classifier (dropout only in training). Inference only.

use super::net::{Act, Activation, ConvCfg, Net};
use super::{Defaults, Param};
use crate::model::{ModelParams, Operator, OptimizerKind, Phase};

pub(crate) const DEFAULTS: Defaults = Defaults {
    batch: 32,
    seq: Param::Fixed("the input is a fixed 224x224 image"),
    kv: Param::Fixed("it has no KV cache"),
};

/// Convolutions per stage (64, 128, 256, 512, 512 channels).
const VGG16: [u64; 5] = [2, 2, 3, 3, 3];
const VGG19: [u64; 5] = [2, 2, 4, 4, 4];
const WIDTHS: [u64; 5] = [64, 128, 256, 512, 512];

fn build_with(phase: Phase, p: &ModelParams, convs: [u64; 5]) -> Vec<Operator> {
    let mut net = Net::new(phase);
    let b = u64::from(p.batch);
    let mut x = Act::image(b);
    let mut index = 0;
    for (stage, (&n, &width)) in convs.iter().zip(&WIDTHS).enumerate() {
        for _ in 0..n {
            x = net.conv_bias(
                &format!("features.{index}"),
                x,
                ConvCfg::new(width, 3, 1, Activation::Relu),
            );
            index += 2;
        }
        x = net.max_pool(&format!("features.{index}.pool{stage}"), x, 2, 2, 0);
        index += 1;
    }
    // AdaptiveAvgPool2d((7, 7)) on the 7x7 map still launches its kernel.
    x = net.avg_pool("avgpool", x, 1, 1, 0);
    let features = x.c * x.h * x.w;
    for (i, (inputs, outputs)) in [(features, 4096), (4096, 4096), (4096, 1000)]
        .into_iter()
        .enumerate()
    {
        net.linear(&format!("classifier.{}", 3 * i), b, inputs, outputs);
        if outputs == 4096 {
            net.pointwise(
                &format!("classifier.{}.relu", 3 * i + 1),
                b * outputs,
                (1, 1),
                1,
            );
            net.dropout(&format!("classifier.{}.dropout", 3 * i + 2), b * outputs);
        }
    }
    net.cross_entropy(b, 1000);
    net.finish(OptimizerKind::Sgd, 0)
}

pub(crate) fn build_16(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    build_with(phase, p, VGG16)
}

pub(crate) fn build_19(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    build_with(phase, p, VGG19)
}
