//! PointNet classification (Qi et al. 2017, "PointNet: Deep Learning on
//! Point Sets for 3D Classification and Segmentation", Fig. 2): an input
//! T-Net predicts a 3x3 transform applied to the points (a batched
//! matmul), shared MLP (64, 64), a feature T-Net predicts a 64x64
//! transform, shared MLP (64, 128, 1024), max pool over the points, then
//! FC 512 -> 256 (dropout 0.3) -> k and log-softmax. A shared MLP is a 1x1
//! convolution over the N points (the `Conv1d` of the common PyTorch
//! port), each followed by batch norm and ReLU (none on the last); a T-Net
//! is convs 64-128-1024, max pool, FC 512-256 with BN and ReLU, FC to
//! k x k plus the identity. About 3.5M parameters. Trained with Adam on
//! cross-entropy plus 0.001 x the feature transform's orthogonality loss
//! `mean ||I - A A^T||`.
//!
//! The Tally benchmark's job (tally-bench
//! `python/workloads/training/pytorch/pointnet/train_pointnet.py`, batch
//! 128 in `python/configs/train_config.py`) samples `num_points=2500`
//! points per shape of ShapeNet-part with `classification=True`, whose 16
//! object categories are the classes, with `feature_transform=True`.

use super::net::{Act, Activation, ConvCfg, Net};
use super::{Defaults, Param};
use crate::model::{ModelParams, OpKind, Operator, OptimizerKind, Phase};

pub(crate) const DEFAULTS: Defaults = Defaults {
    batch: 128,
    seq: Param::Fixed("the input is a fixed 2500-point cloud"),
    kv: Param::Fixed("it has no KV cache"),
};

pub(crate) const POINTS: u64 = 2500;
const CLASSES: u64 = 16;

/// A shared MLP layer: a 1x1 convolution over the points, BN, activation.
fn shared(net: &mut Net, name: &str, x: Act, c_out: u64, act: Activation) -> Act {
    net.conv_bn(name, x, ConvCfg::new(c_out, 1, 1, act))
}

/// Linear, batch norm over the batch (statistics first in training), ReLU.
fn fc_bn_relu(net: &mut Net, name: &str, b: u64, inputs: u64, outputs: u64) {
    net.linear(&format!("{name}.fc"), b, inputs, outputs);
    if net.training() {
        net.reduction(&format!("{name}.bn_stats"), outputs, b);
    }
    net.pointwise(&format!("{name}.bn"), b * outputs, (1, 1), 2);
    net.pointwise(&format!("{name}.relu"), b * outputs, (1, 1), 1);
}

/// Max over the points of each channel (values and indices).
fn max_pool(net: &mut Net, name: &str, x: Act) {
    net.reduction(name, x.n * x.c, x.h * x.w);
}

/// A T-Net on `x` (k channels) predicting a k x k transform per cloud,
/// then the batched matmul applying it to the points.
fn tnet(net: &mut Net, name: &str, x: Act) {
    let (b, k) = (x.n, x.c);
    let y = shared(net, &format!("{name}.conv1"), x, 64, Activation::Relu);
    let y = shared(net, &format!("{name}.conv2"), y, 128, Activation::Relu);
    let y = shared(net, &format!("{name}.conv3"), y, 1024, Activation::Relu);
    max_pool(net, &format!("{name}.max"), y);
    fc_bn_relu(net, &format!("{name}.fc1"), b, 1024, 512);
    fc_bn_relu(net, &format!("{name}.fc2"), b, 512, 256);
    net.linear(&format!("{name}.fc3"), b, 256, k * k);
    net.pointwise(&format!("{name}.add_identity"), b * k * k, (2, 1), 1);
    let dtype = net.dtype;
    net.push(
        format!("{name}.apply"),
        OpKind::Gemm {
            m: x.h * x.w,
            n: k,
            k,
            batch: b,
            dtype,
        },
    );
}

pub(crate) fn build(phase: Phase, p: &ModelParams) -> Vec<Operator> {
    let mut net = Net::new(phase);
    let b = u64::from(p.batch);
    let points = Act {
        n: b,
        c: 3,
        h: POINTS,
        w: 1,
    };
    tnet(&mut net, "feat.stn", points);
    let x = shared(&mut net, "feat.mlp1.0", points, 64, Activation::Relu);
    let x = shared(&mut net, "feat.mlp1.1", x, 64, Activation::Relu);
    tnet(&mut net, "feat.fstn", x);
    let x = shared(&mut net, "feat.mlp2.0", x, 64, Activation::Relu);
    let x = shared(&mut net, "feat.mlp2.1", x, 128, Activation::Relu);
    let x = shared(&mut net, "feat.mlp2.2", x, 1024, Activation::None);
    max_pool(&mut net, "feat.max", x);
    fc_bn_relu(&mut net, "cls.fc1", b, 1024, 512);
    net.linear("cls.fc2", b, 512, 256);
    net.dropout("cls.dropout", b * 256);
    if net.training() {
        net.reduction("cls.bn2.bn_stats", 256, b);
    }
    net.pointwise("cls.bn2", b * 256, (1, 1), 2);
    net.pointwise("cls.relu2", b * 256, (1, 1), 1);
    net.linear("cls.fc3", b, 256, CLASSES);
    let dtype = net.dtype;
    net.push(
        "cls.log_softmax",
        OpKind::Softmax {
            rows: b,
            cols: CLASSES,
            dtype,
        },
    );
    net.cross_entropy(b, CLASSES);
    if net.training() {
        // ||A A^T - I|| per cloud, its mean, scaled and added to the loss.
        net.push(
            "loss.reg.bmm",
            OpKind::Gemm {
                m: 64,
                n: 64,
                k: 64,
                batch: b,
                dtype,
            },
        );
        net.pointwise("loss.reg.sub_identity", b * 64 * 64, (2, 1), 1);
        net.reduction("loss.reg.norm", b, 64 * 64);
        net.reduction("loss.reg.mean", 1, b);
        net.pointwise("loss.reg.add", 1, (2, 1), 2);
    }
    net.finish(OptimizerKind::Adam, 0)
}
