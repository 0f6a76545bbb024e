//! The model zoo: published architectures with their default parameters,
//! looked up by name (`resnet50`, `bert-base:train`, ...), and
//! `resolve_model`, which also accepts a user model file path.
//!
//! Names: a family name is its inference forward pass (`NAME:infer` is an
//! alias); `NAME:train` is one training iteration (forward, loss, backward
//! in reverse order, optimizer step) where the family has one. Families
//! modelled after a published training job only (the Tally benchmark's
//! Whisper, Pegasus-X, PointNet and GPT-2 large) have no inference variant.
//! Any name may end in `@BATCH` (`resnet50:train@128`), which sets the
//! batch and stays in the canonical name. Parameters that do not apply to
//! a family (`seq_len` for a CNN, `kv_len` outside decode) are rejected
//! rather than ignored.

mod bert;
mod densenet;
mod gpt2;
mod inception;
mod llama;
mod mobilenet;
mod name;
mod net;
mod pegasus_x;
mod pointnet;
mod resnet;
mod seq2seq;
mod transformer;
mod vgg;
mod vit;
mod whisper;

pub use name::ModelArg;

use crate::model::{
    ConvBackend, GemmLibrary, Model, ModelError, ModelParams, OpKind, Operator, ParamsOverride,
    Phase,
};

/// Every accepted zoo name (`:infer` aliases and `@BATCH` suffixes aside).
pub const NAMES: [&str; 28] = [
    "resnet50",
    "resnet50:train",
    "mobilenetv2",
    "mobilenetv2:train",
    "bert-base",
    "bert-base:train",
    "bert-large",
    "bert-base-squad:train",
    "vit-b16",
    "vit-b16:train",
    "gpt2",
    "gpt2:train",
    "llama2-7b-prefill",
    "llama2-7b-decode",
    "llama2-7b",
    "whisper-large-v3:train",
    "whisper-small:train",
    "pegasus-x-base:train",
    "pointnet:train",
    "gpt2-large:train",
    "resnet101",
    "resnet152",
    "vgg16",
    "vgg19",
    "densenet121",
    "densenet169",
    "densenet201",
    "inception-v3",
];

/// Whether and how a parameter applies to a family.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Param {
    /// Not a parameter of the family, with the reason.
    Fixed(&'static str),
    Range {
        default: u32,
        max: u32,
    },
}

/// A family's default parameters.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Defaults {
    pub batch: u32,
    pub seq: Param,
    pub kv: Param,
}

type BuildFn = fn(Phase, &ModelParams) -> Vec<Operator>;

/// Which passes a family models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variants {
    InferOnly,
    TrainOnly,
    Both,
}

impl Variants {
    fn has(self, phase: Phase) -> bool {
        match (self, phase) {
            (Variants::Both, _) => true,
            (Variants::InferOnly, p) => p == Phase::Inference,
            (Variants::TrainOnly, p) => p == Phase::Training,
        }
    }
}

/// A zoo family: name, defaults, the variants it has, builder.
struct Family {
    name: &'static str,
    defaults: Defaults,
    variants: Variants,
    build: BuildFn,
}

const FAMILIES: [Family; 23] = [
    Family {
        name: "resnet50",
        defaults: resnet::DEFAULTS,
        variants: Variants::Both,
        build: resnet::build,
    },
    Family {
        name: "mobilenetv2",
        defaults: mobilenet::DEFAULTS,
        variants: Variants::Both,
        build: mobilenet::build,
    },
    Family {
        name: "bert-base",
        defaults: bert::DEFAULTS,
        variants: Variants::Both,
        build: bert::build,
    },
    Family {
        name: "bert-large",
        defaults: bert::LARGE_DEFAULTS,
        variants: Variants::InferOnly,
        build: bert::build_large,
    },
    Family {
        name: "bert-base-squad",
        defaults: bert::SQUAD_DEFAULTS,
        variants: Variants::TrainOnly,
        build: bert::build_squad,
    },
    Family {
        name: "vit-b16",
        defaults: vit::DEFAULTS,
        variants: Variants::Both,
        build: vit::build,
    },
    Family {
        name: "gpt2",
        defaults: gpt2::DEFAULTS,
        variants: Variants::Both,
        build: gpt2::build,
    },
    Family {
        name: "llama2-7b-prefill",
        defaults: llama::PREFILL_DEFAULTS,
        variants: Variants::InferOnly,
        build: llama::build_prefill,
    },
    Family {
        name: "llama2-7b-decode",
        defaults: llama::DECODE_DEFAULTS,
        variants: Variants::InferOnly,
        build: llama::build_decode,
    },
    Family {
        name: "llama2-7b",
        defaults: llama::GENERATION_DEFAULTS,
        variants: Variants::InferOnly,
        build: llama::build_generation,
    },
    Family {
        name: "whisper-large-v3",
        defaults: whisper::DEFAULTS,
        variants: Variants::TrainOnly,
        build: whisper::build_large_v3,
    },
    Family {
        name: "whisper-small",
        defaults: whisper::DEFAULTS,
        variants: Variants::TrainOnly,
        build: whisper::build_small,
    },
    Family {
        name: "pegasus-x-base",
        defaults: pegasus_x::DEFAULTS,
        variants: Variants::TrainOnly,
        build: pegasus_x::build,
    },
    Family {
        name: "pointnet",
        defaults: pointnet::DEFAULTS,
        variants: Variants::TrainOnly,
        build: pointnet::build,
    },
    Family {
        name: "gpt2-large",
        defaults: gpt2::LARGE_DEFAULTS,
        variants: Variants::TrainOnly,
        build: gpt2::build_large,
    },
    Family {
        name: "resnet101",
        defaults: resnet::DEFAULTS,
        variants: Variants::InferOnly,
        build: resnet::build_101,
    },
    Family {
        name: "resnet152",
        defaults: resnet::DEFAULTS,
        variants: Variants::InferOnly,
        build: resnet::build_152,
    },
    Family {
        name: "vgg16",
        defaults: vgg::DEFAULTS,
        variants: Variants::InferOnly,
        build: vgg::build_16,
    },
    Family {
        name: "vgg19",
        defaults: vgg::DEFAULTS,
        variants: Variants::InferOnly,
        build: vgg::build_19,
    },
    Family {
        name: "densenet121",
        defaults: densenet::DEFAULTS,
        variants: Variants::InferOnly,
        build: densenet::build_121,
    },
    Family {
        name: "densenet169",
        defaults: densenet::DEFAULTS,
        variants: Variants::InferOnly,
        build: densenet::build_169,
    },
    Family {
        name: "densenet201",
        defaults: densenet::DEFAULTS,
        variants: Variants::InferOnly,
        build: densenet::build_201,
    },
    Family {
        name: "inception-v3",
        defaults: inception::DEFAULTS,
        variants: Variants::InferOnly,
        build: inception::build,
    },
];

fn unknown(name: &str) -> ModelError {
    ModelError::UnknownModel {
        name: name.to_string(),
        valid: NAMES.join(", "),
    }
}

/// One optional parameter: the default, the override checked against the
/// family's limit, or an error if it does not apply.
fn resolve_param(
    model: &str,
    param: &'static str,
    spec: Param,
    value: Option<u32>,
) -> Result<Option<u32>, ModelError> {
    match (spec, value) {
        (Param::Fixed(_), None) => Ok(None),
        (Param::Fixed(reason), Some(_)) => Err(ModelError::ParamNotApplicable {
            model: model.to_string(),
            param,
            reason: reason.to_string(),
        }),
        (Param::Range { default, .. }, None) => Ok(Some(default)),
        (Param::Range { max, .. }, Some(v)) if v == 0 || v > max => Err(ModelError::InvalidParam {
            model: model.to_string(),
            param,
            value: u64::from(v),
            reason: format!("must be between 1 and {max}"),
        }),
        (Param::Range { .. }, Some(v)) => Ok(Some(v)),
    }
}

fn resolve_params(model: &str, d: Defaults, o: &ParamsOverride) -> Result<ModelParams, ModelError> {
    let batch = o.batch.unwrap_or(d.batch);
    if batch == 0 {
        return Err(ModelError::InvalidParam {
            model: model.to_string(),
            param: "batch",
            value: 0,
            reason: "must be at least 1".into(),
        });
    }
    Ok(ModelParams {
        batch,
        seq_len: resolve_param(model, "seq_len", d.seq, o.seq_len)?,
        kv_len: resolve_param(model, "kv_len", d.kv, o.kv_len)?,
    })
}

/// Build a zoo model by name: `NAME`, `NAME:infer` or `NAME:train`, the
/// variant optionally with `-fp32` (`NAME:train-fp32`: no mixed precision),
/// `-nocudnn` (`NAME:train-fp32-nocudnn`: convolutions as a PyTorch
/// built without cuDNN runs them, `ConvBackend::Native`) and `-cutlass`
/// (`NAME:infer-cutlass`: GEMMs as the Tally client's CUTLASS kernels,
/// `GemmLibrary::TallyCutlass`), each optionally followed by `@BATCH`.
pub fn build(arg: &str, params: &ParamsOverride) -> Result<Model, ModelError> {
    let parsed = ModelArg::parse(arg)?;
    let params = parsed.overrides(arg, params)?;
    let name = parsed.name;
    let (base, variant) = match name.split_once(':') {
        Some((b, v)) => (b, Some(v)),
        None => (name, None),
    };
    let family = FAMILIES
        .iter()
        .find(|f| f.name == base)
        .ok_or_else(|| unknown(name))?;
    // `-fp32`: the model as PyTorch runs it without autocast (FP32 tensors,
    // convolutions in TF32; `Dtype::in_fp32_model`), as the Tally
    // artifact's training jobs do (`amp: False`).
    // `-nocudnn`: PyTorch without cuDNN, as the Tally artifact builds it
    // (`ConvBackend` docs): per-sample im2col and cuBLAS GEMMs, which an
    // FP32 model runs in FP32 (cuBLAS's default; cuDNN's TF32 default
    // does not apply).
    // `-cutlass`: every cuBLAS GEMM as the Tally client's CUTLASS kernel,
    // as every job of the published Tally table ran (`GemmLibrary` docs).
    let (mut variant, mut fp32, mut native, mut cutlass) = (variant, false, false, false);
    while let Some(v) = variant {
        if let Some(rest) = v.strip_suffix("-fp32") {
            (variant, fp32) = (Some(rest), true);
        } else if let Some(rest) = v.strip_suffix("-nocudnn") {
            (variant, native) = (Some(rest), true);
        } else if let Some(rest) = v.strip_suffix("-cutlass") {
            (variant, cutlass) = (Some(rest), true);
        } else {
            break;
        }
    }
    let phase = match variant {
        None | Some("infer") => Phase::Inference,
        Some("train") => Phase::Training,
        Some(v) => return Err(no_variant(family, v)),
    };
    if !family.variants.has(phase) {
        return Err(no_variant(family, phase.as_str()));
    }
    let mut canonical = match (phase, family.variants) {
        (Phase::Training, Variants::Both) | (Phase::Training, Variants::TrainOnly) => {
            format!("{}:train", family.name)
        }
        _ => family.name.to_string(),
    };
    if (fp32 || native || cutlass) && phase == Phase::Inference {
        canonical.push_str(":infer");
    }
    if fp32 {
        canonical.push_str("-fp32");
    }
    if native {
        canonical.push_str("-nocudnn");
    }
    if cutlass {
        canonical.push_str("-cutlass");
    }
    if let Some(b) = parsed.batch {
        canonical.push_str(&format!("@{b}"));
    }
    let params = resolve_params(&canonical, family.defaults, &params)?;
    let mut operators = (family.build)(phase, &params);
    if fp32 {
        for op in &mut operators {
            let convolution = matches!(op.op, OpKind::Conv2d { .. }) && !native;
            if let Some(d) = op.op.dtype_mut() {
                *d = d.in_fp32_model(convolution);
            }
        }
    }
    if native {
        for op in &mut operators {
            if let OpKind::Conv2d { backend, .. } = &mut op.op {
                *backend = ConvBackend::Native;
            }
        }
    }
    if cutlass {
        for op in &mut operators {
            op.gemm_library = GemmLibrary::TallyCutlass;
        }
    }
    Ok(Model {
        operators,
        name: canonical,
        phase,
        params,
    })
}

fn no_variant(family: &Family, variant: &str) -> ModelError {
    ModelError::NoVariant {
        model: family.name.to_string(),
        variant: variant.to_string(),
        valid: NAMES.join(", "),
    }
}

fn is_model_file(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".toml") || lower.ends_with(".json")
}

/// A zoo model by name, or a user model file for a path ending in `.toml`
/// or `.json` (a file's `@BATCH` suffix reaches the file loader as a batch
/// override, which it rejects: a file's shapes are fixed).
pub fn resolve_model(name_or_path: &str, params: &ParamsOverride) -> Result<Model, ModelError> {
    if is_model_file(name_or_path) {
        return crate::model_file::load_model_file(std::path::Path::new(name_or_path), params);
    }
    let parsed = ModelArg::parse(name_or_path)?;
    if is_model_file(parsed.name) {
        let params = parsed.overrides(name_or_path, params)?;
        crate::model_file::load_model_file(std::path::Path::new(parsed.name), &params)
    } else {
        build(name_or_path, params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Dtype;
    use tally_gpu::KernelKind;

    fn default(name: &str) -> Model {
        build(name, &ParamsOverride::default()).unwrap()
    }

    fn total(m: &Model, f: impl Fn(&tally_gpu::KernelSpec) -> f64) -> f64 {
        m.launches().iter().map(f).sum()
    }

    fn within(value: f64, target: f64, tolerance: f64) -> bool {
        (value / target - 1.0).abs() <= tolerance
    }

    #[test]
    fn every_zoo_model_lowers_to_valid_kernels() {
        for name in NAMES {
            let m = default(name);
            assert_eq!(m.name, name);
            m.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
            let launches = m.launches();
            assert!(!launches.is_empty(), "{name}");
            let counted: u32 = m.unique_kernels().iter().map(|(_, c)| c).sum();
            assert_eq!(counted as usize, launches.len(), "{name}");
        }
    }

    #[test]
    fn resnet50_forward_is_4_1_gmac_per_image() {
        let m = default("resnet50");
        // torchvision's "4.09 GFLOPS" counts multiply-accumulates.
        let macs = total(&m, |k| k.work.tensor_flops) / 2.0 / 32.0;
        assert!(within(macs, 4.1e9, 0.15), "{macs:e}");
        let convs = m
            .operators
            .iter()
            .filter(|o| matches!(o.op, OpKind::Conv2d { .. }))
            .count();
        assert_eq!(convs, 53);
        assert!(within(m.param_count() as f64, 25.5e6, 0.02));
    }

    #[test]
    fn fp32_variant_runs_matmuls_on_ffma_and_convolutions_in_tf32() {
        let amp = default("resnet50:train@8");
        let fp32 = default("resnet50:train-fp32@8");
        assert_eq!(fp32.name, "resnet50:train-fp32@8");
        assert_eq!(amp.operators.len(), fp32.operators.len());
        for o in &fp32.operators {
            let mut op = o.op.clone();
            let conv = matches!(op, OpKind::Conv2d { .. });
            if let Some(d) = op.dtype_mut() {
                let want = if conv { Dtype::Tf32 } else { Dtype::F32 };
                assert_eq!(*d, want, "{}", o.name);
            }
        }
        // TF32 products cost twice the FP16 tensor work, FP32 bytes twice
        // the traffic of the implicit-GEMM operands.
        let conv_tensor = |m: &Model| {
            total(m, |k| {
                if k.kind == KernelKind::Conv {
                    k.work.tensor_flops
                } else {
                    0.0
                }
            })
        };
        let ratio = conv_tensor(&fp32) / conv_tensor(&amp);
        assert!(within(ratio, 2.0, 0.05), "{ratio}");
        // A transformer's linear layers leave the tensor cores.
        let bert = default("bert-base:train-fp32@8");
        assert_eq!(total(&bert, |k| k.work.tensor_flops), 0.0);
        let amp_flops = total(&default("bert-base:train@8"), |k| k.work.tensor_flops);
        let ffma = total(&bert, |k| k.work.ffma);
        assert!(ffma * 2.0 >= 0.95 * amp_flops, "{ffma:e} vs {amp_flops:e}");
        // Inference keeps its variant in the canonical name.
        assert_eq!(default("bert-base:infer-fp32").name, "bert-base:infer-fp32");
        assert!(matches!(
            build("bert-base:train-fp16", &ParamsOverride::default()),
            Err(ModelError::NoVariant { .. })
        ));
    }

    #[test]
    fn cutlass_variant_runs_every_gemm_as_the_tally_clients_kernel() {
        let m = default("bert-large:infer-cutlass@1");
        assert_eq!(m.name, "bert-large:infer-cutlass@1");
        assert!(m
            .operators
            .iter()
            .all(|o| o.gemm_library == GemmLibrary::TallyCutlass));
        let gemms: Vec<tally_gpu::KernelSpec> = m
            .operators
            .iter()
            .flat_map(|o| o.lower())
            .filter(|k| k.kind == KernelKind::Gemm)
            .collect();
        assert!(!gemms.is_empty());
        assert!(gemms
            .iter()
            .all(|k| k.name.contains("tally_cutlass_gemm_f16_128x128x16")));
        // The library composes with the other suffixes, in any order, and
        // reaches the GEMMs of a convolution run without cuDNN.
        let cnn = default("resnet50:train-fp32-nocudnn-cutlass@2");
        assert_eq!(
            default("resnet50:train-cutlass-fp32-nocudnn@2").name,
            cnn.name
        );
        let conv_gemms = cnn
            .operators
            .iter()
            .filter(|o| matches!(o.op, OpKind::Conv2d { .. }))
            .flat_map(|o| o.lower())
            .filter(|k| k.kind == KernelKind::Gemm)
            .count();
        assert!(conv_gemms > 0);
        assert!(cnn
            .operators
            .iter()
            .filter(|o| matches!(o.op, OpKind::Conv2d { .. }))
            .flat_map(|o| o.lower())
            .filter(|k| k.kind == KernelKind::Gemm)
            .all(|k| k.name.contains("tally_cutlass")));
    }

    #[test]
    fn nocudnn_variant_runs_each_sample_as_im2col_and_an_ffma_gemm() {
        let cudnn = default("resnet50:train-fp32@4");
        let native = default("resnet50:train-fp32-nocudnn@4");
        assert_eq!(native.name, "resnet50:train-fp32-nocudnn@4");
        // Either suffix order names the same model.
        assert_eq!(default("resnet50:train-nocudnn-fp32@4").name, native.name);
        let kernels = |m: &Model| -> Vec<tally_gpu::KernelSpec> {
            m.operators.iter().flat_map(|o| o.lower()).collect()
        };
        let (k_cudnn, k_native) = (kernels(&cudnn), kernels(&native));
        // No cuDNN kernel is left: every convolution is GEMMs (and the
        // column kernels), none on the tensor cores.
        assert!(k_native.iter().all(|k| k.kind != KernelKind::Conv));
        assert!(k_cudnn.iter().any(|k| k.kind == KernelKind::Conv));
        let conv_ops: Vec<&Operator> = native
            .operators
            .iter()
            .filter(|o| matches!(o.op, OpKind::Conv2d { .. }))
            .collect();
        assert_eq!(conv_ops.len(), 53 * 2, "forward and backward");
        for o in &conv_ops {
            if let OpKind::Conv2d { backend, dtype, .. } = o.op {
                assert_eq!(
                    (backend, dtype),
                    (ConvBackend::Native, Dtype::F32),
                    "{}",
                    o.name
                );
            }
            let ks = o.lower();
            assert!(ks.iter().all(|k| k.work.tensor_flops == 0.0), "{}", o.name);
            // One batch of 4: the per-sample kernels come 4 times (twice,
            // data then weight gradient, backward).
            let least = if o.backward { 8 } else { 4 };
            assert!(
                ks.len() % 4 == 0 && ks.len() >= least,
                "{}: {}",
                o.name,
                ks.len()
            );
        }
        // The same multiply-accumulates, on the FFMA pipe, in small GEMMs.
        let macs = |ks: &[tally_gpu::KernelSpec], f: fn(&tally_gpu::KernelSpec) -> f64| {
            ks.iter().map(f).sum::<f64>()
        };
        let cudnn_macs = macs(&k_cudnn, |k| {
            if k.kind == KernelKind::Conv {
                k.work.tensor_flops / 2.0 / 2.0
            } else {
                0.0
            }
        });
        let native_macs = macs(&k_native, |k| {
            if k.kind == KernelKind::Gemm {
                k.work.ffma
            } else {
                0.0
            }
        });
        let linear_macs = macs(&k_cudnn, |k| {
            if k.kind == KernelKind::Gemm {
                k.work.ffma
            } else {
                0.0
            }
        });
        let ratio = (native_macs - linear_macs) / cudnn_macs;
        assert!(within(ratio, 1.0, 0.1), "{ratio}");
        assert!(
            k_native.len() > 4 * k_cudnn.len() / 2,
            "{} vs {}",
            k_native.len(),
            k_cudnn.len()
        );
    }

    #[test]
    fn bert_base_forward_is_two_flops_per_parameter_and_token() {
        let m = default("bert-base");
        let tokens = 8.0 * 128.0;
        let flops = total(&m, |k| k.work.tensor_flops);
        assert!(within(flops, 2.0 * 110e6 * tokens, 0.25), "{flops:e}");
    }

    #[test]
    fn other_forward_totals_match_published_figures() {
        let mac =
            |name: &str, batch: f64| total(&default(name), |k| k.work.tensor_flops) / 2.0 / batch;
        // MobileNetV2: 300M multiply-adds; ViT-B/16: 17.6 GMACs.
        assert!(within(mac("mobilenetv2", 32.0) + 0.0, 300e6, 0.15));
        assert!(within(mac("vit-b16", 32.0), 17.6e9, 0.1));
        // GPT-2 small: 2 x 124M params x tokens plus causal attention.
        let gpt2 = total(&default("gpt2"), |k| k.work.tensor_flops) / (8.0 * 512.0);
        assert!(within(gpt2, 2.0 * 124e6, 0.25), "{gpt2:e}");
        let prefill = total(&default("llama2-7b-prefill"), |k| k.work.tensor_flops) / 512.0;
        assert!(within(prefill, 2.0 * 6.5e9, 0.1), "{prefill:e}");
    }

    #[test]
    fn training_iteration_is_about_three_forward_passes() {
        for name in ["resnet50", "mobilenetv2", "bert-base", "vit-b16", "gpt2"] {
            let infer = total(&default(name), |k| k.work.total_flops());
            let train_model = default(&format!("{name}:train"));
            let train = total(&train_model, |k| k.work.total_flops());
            let ratio = train / infer;
            assert!((2.6..3.6).contains(&ratio), "{name}: {ratio}");
            let last = train_model.launches().pop().unwrap();
            assert_eq!(last.kind, KernelKind::Optimizer, "{name}");
            assert!(train_model.operators.iter().any(|o| o.backward));
        }
    }

    #[test]
    fn llama_decode_streams_the_weights_once() {
        let m = default("llama2-7b-decode");
        let launches = m.launches();
        assert!(
            launches.iter().all(|k| k.kind != KernelKind::Gemm),
            "decode projections are GEMVs"
        );
        let weights: f64 = launches
            .iter()
            .filter(|k| k.kind == KernelKind::Gemv)
            .map(|k| k.memory.dram_read_bytes)
            .sum();
        assert!(within(weights, 13.5e9, 0.10), "{weights:e}");
        // The KV cache (2 x 8 x 32 x 2049 x 128 x 2 bytes per layer) is read once.
        let kv: f64 = launches
            .iter()
            .filter(|k| k.kind == KernelKind::Attention)
            .map(|k| k.memory.dram_read_bytes)
            .sum();
        assert!(within(
            kv,
            32.0 * 2.0 * 8.0 * 32.0 * 2049.0 * 128.0 * 2.0,
            0.01
        ));
    }

    #[test]
    fn llama_decode_has_enough_unique_kernels_for_pairs() {
        let unique = default("llama2-7b-decode").unique_kernels();
        assert!(unique.len() >= 18, "{}", unique.len());
        // Unordered pairs with self-pairs, three SM splits each.
        let n = unique.len();
        assert!(n * (n + 1) / 2 * 3 >= 500);
        // q, k, v and o projections share one kernel, first name kept.
        let (qkvo, count) = &unique[3];
        assert!(
            qkvo.name.starts_with("layers.0.self_attn.q_proj/"),
            "{}",
            qkvo.name
        );
        assert_eq!(*count, 128);
    }

    #[test]
    fn parameters_apply_or_are_rejected() {
        let o = |batch, seq_len, kv_len| ParamsOverride {
            batch,
            seq_len,
            kv_len,
        };
        let bert = build("bert-base", &o(Some(2), Some(64), None)).unwrap();
        assert_eq!(bert.params.batch, 2);
        assert_eq!(bert.params.seq_len, Some(64));
        let d = build("llama2-7b-decode", &o(None, None, Some(100))).unwrap();
        assert_eq!(d.params.kv_len, Some(100));
        assert!(matches!(
            build("resnet50", &o(None, Some(128), None)),
            Err(ModelError::ParamNotApplicable {
                param: "seq_len",
                ..
            })
        ));
        assert!(matches!(
            build("llama2-7b-decode", &o(None, Some(4), None)),
            Err(ModelError::ParamNotApplicable {
                param: "seq_len",
                ..
            })
        ));
        assert!(matches!(
            build("gpt2", &o(None, None, Some(4))),
            Err(ModelError::ParamNotApplicable {
                param: "kv_len",
                ..
            })
        ));
        assert!(matches!(
            build("gpt2", &o(None, Some(2048), None)),
            Err(ModelError::InvalidParam {
                param: "seq_len",
                ..
            })
        ));
        assert!(matches!(
            build("bert-base", &o(Some(0), None, None)),
            Err(ModelError::InvalidParam { param: "batch", .. })
        ));
    }

    #[test]
    fn names_aliases_and_unknowns() {
        assert_eq!(default("resnet50:infer"), default("resnet50"));
        assert_eq!(default("bert-base:train").phase, Phase::Training);
        let err = build("resnet", &ParamsOverride::default()).unwrap_err();
        assert!(
            err.to_string().contains("resnet50, resnet50:train"),
            "{err}"
        );
        assert!(matches!(
            build("llama2-7b-decode:train", &ParamsOverride::default()),
            Err(ModelError::NoVariant { .. })
        ));
        assert!(matches!(
            build("gpt2:eval", &ParamsOverride::default()),
            Err(ModelError::NoVariant { .. })
        ));
        assert!(resolve_model("gpt2", &ParamsOverride::default()).is_ok());
        assert!(matches!(
            resolve_model("/nonexistent/model.toml", &ParamsOverride::default()),
            Err(ModelError::Io { .. })
        ));
    }
}
