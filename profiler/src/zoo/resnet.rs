//! ResNet-50, -101 and -152 (v1.5, torchvision): 7x7 stem, max pool,
//! bottleneck stages of 3-4-6-3 (50), 3-4-23-3 (101) or 3-8-36-3 (152)
//! blocks (stride on the 3x3 conv), global average pool and a 2048 -> 1000
//! classifier; conv, BN and ReLU as separate eager launches. Trained with
//! SGD + momentum.

use super::net::{Act, Activation, ConvCfg, Net};
use super::{Defaults, Param};
use crate::model::{ModelParams, Operator, OptimizerKind, Phase};

pub(crate) const DEFAULTS: Defaults = Defaults {
    batch: 32,
    seq: Param::Fixed("the input is a fixed 224x224 image"),
    kv: Param::Fixed("it has no KV cache"),
};

/// Bottleneck widths and first strides of the four stages.
const STAGE_SHAPES: [(u64, u64); 4] = [(64, 1), (128, 2), (256, 2), (512, 2)];

pub(crate) fn build(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    build_with(phase, p, [3, 4, 6, 3])
}

pub(crate) fn build_101(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    build_with(phase, p, [3, 4, 23, 3])
}

pub(crate) fn build_152(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    build_with(phase, p, [3, 8, 36, 3])
}

fn build_with(phase: Phase, p: &ModelParams, blocks_per_stage: [u64; 4]) -> Vec<Operator> {
    let mut net = Net::new(phase);
    let b = u64::from(p.batch);
    let image = Act::image(b);
    let stem = net.conv_bn("conv1", image, ConvCfg::new(64, 7, 2, Activation::Relu));
    // 3x3 / 2 max pool with indices (one thread per output, 4 inputs per
    // output on average; the int64 index counts as 4 f16 words).
    let mut x = Act {
        h: stem.h / 2,
        w: stem.w / 2,
        ..stem
    };
    net.pointwise("maxpool", x.elements(), (4, 5), 9);
    for (stage, (&blocks, &(width, stride))) in
        blocks_per_stage.iter().zip(&STAGE_SHAPES).enumerate()
    {
        for block in 0..blocks {
            let prefix = format!("layer{}.{block}", stage + 1);
            let s = if block == 0 { stride } else { 1 };
            let y = net.conv_bn(
                &format!("{prefix}.conv1"),
                x,
                ConvCfg::new(width, 1, 1, Activation::Relu),
            );
            let y = net.conv_bn(
                &format!("{prefix}.conv2"),
                y,
                ConvCfg::new(width, 3, s, Activation::Relu),
            );
            let y = net.conv_bn(
                &format!("{prefix}.conv3"),
                y,
                ConvCfg::new(width * 4, 1, 1, Activation::None),
            );
            if block == 0 {
                net.conv_bn(
                    &format!("{prefix}.downsample"),
                    x,
                    ConvCfg::new(width * 4, 1, s, Activation::None),
                );
            }
            net.add(&format!("{prefix}.add"), y.elements());
            net.pointwise(&format!("{prefix}.relu"), y.elements(), (1, 1), 1);
            x = y;
        }
    }
    net.reduction("avgpool", b * x.c, x.h * x.w);
    net.linear("fc", b, x.c, 1000);
    net.cross_entropy(b, 1000);
    net.finish(OptimizerKind::Sgd, 0)
}
