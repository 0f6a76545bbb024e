//! DenseNet-121, -169 and -201 (Huang et al. 2017, torchvision): a 7x7
//! stem with BN, ReLU and a 3x3 max pool; four dense blocks whose every
//! layer concatenates all earlier outputs (`torch.cat`, its own launch),
//! then BN, ReLU, a 1x1 conv to 4 x 32 channels, BN, ReLU and a 3x3 conv
//! to 32 (growth rate 32); transitions of BN, ReLU, a 1x1 conv halving the
//! channels and a 2x2 average pool; a final BN, ReLU, global average pool
//! and the classifier. Inference only.

use super::net::{Act, Activation, ConvCfg, Net};
use super::{Defaults, Param};
use crate::model::{ModelParams, Operator, OptimizerKind, Phase};

pub(crate) const DEFAULTS: Defaults = Defaults {
    batch: 32,
    seq: Param::Fixed("the input is a fixed 224x224 image"),
    kv: Param::Fixed("it has no KV cache"),
};

const GROWTH: u64 = 32;
const BN_SIZE: u64 = 4;

/// Pre-activation: BN and ReLU over `x`, then the convolution.
fn bn_relu_conv(net: &mut Net, name: &str, x: Act, c: ConvCfg) -> Act {
    net.batch_norm(&format!("{name}.norm"), x);
    net.activation(&format!("{name}.norm"), x.elements(), Activation::Relu);
    net.conv(&format!("{name}.conv"), x, c)
}

fn build_with(phase: Phase, p: &ModelParams, blocks: [u64; 4]) -> Vec<Operator> {
    let mut net = Net::new(phase);
    let b = u64::from(p.batch);
    let stem = net.conv_bn(
        "features.conv0",
        Act::image(b),
        ConvCfg::new(64, 7, 2, Activation::Relu),
    );
    let mut x = net.max_pool("features.pool0", stem, 3, 2, 1);
    for (i, &layers) in blocks.iter().enumerate() {
        let mut parts = vec![x];
        for l in 0..layers {
            let name = format!("features.denseblock{}.denselayer{}", i + 1, l + 1);
            // torchvision concatenates even the first layer's single input.
            let input = net.concat(&format!("{name}.cat"), &parts);
            let y = bn_relu_conv(
                &mut net,
                &format!("{name}.1"),
                input,
                ConvCfg::new(BN_SIZE * GROWTH, 1, 1, Activation::None),
            );
            let y = bn_relu_conv(
                &mut net,
                &format!("{name}.2"),
                y,
                ConvCfg::new(GROWTH, 3, 1, Activation::None),
            );
            parts.push(y);
        }
        x = net.concat(&format!("features.denseblock{}.out", i + 1), &parts);
        if i + 1 < blocks.len() {
            let name = format!("features.transition{}", i + 1);
            let y = bn_relu_conv(
                &mut net,
                &name,
                x,
                ConvCfg::new(x.c / 2, 1, 1, Activation::None),
            );
            x = net.avg_pool(&format!("{name}.pool"), y, 2, 2, 0);
        }
    }
    net.batch_norm("features.norm5", x);
    net.activation("features.norm5", x.elements(), Activation::Relu);
    net.reduction("avgpool", b * x.c, x.h * x.w);
    net.linear("classifier", b, x.c, 1000);
    net.cross_entropy(b, 1000);
    net.finish(OptimizerKind::Sgd, 0)
}

pub(crate) fn build_121(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    build_with(phase, p, [6, 12, 24, 16])
}

pub(crate) fn build_169(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    build_with(phase, p, [6, 12, 32, 32])
}

pub(crate) fn build_201(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    build_with(phase, p, [6, 12, 48, 32])
}
