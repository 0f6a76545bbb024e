//! The zoo entries of the Tally benchmark's jobs against their published
//! sizes: parameter counts, FLOPs per iteration, the shape of a Llama-2
//! generation request, and `@BATCH` suffixes through `build` and
//! `resolve_model`.

use tally_gpu::KernelKind;
use tally_profiler::model::{ModelError, OpKind, ParamsOverride, Phase};
use tally_profiler::{zoo, Model};

fn model(name: &str) -> Model {
    zoo::build(name, &ParamsOverride::default()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn flops(m: &Model) -> f64 {
    m.launches().iter().map(|k| k.work.total_flops()).sum()
}

/// Parameters the optimizer updates (tied and shared weights once).
fn optimized(m: &Model) -> f64 {
    match m.operators.last().map(|o| &o.op) {
        Some(OpKind::Optimizer { params, .. }) => *params as f64,
        other => panic!("{}: last operator {other:?}", m.name),
    }
}

fn within(value: f64, target: f64, tolerance: f64) -> bool {
    (value / target - 1.0).abs() <= tolerance
}

#[test]
fn parameter_counts_match_the_published_models() {
    for (name, published, tolerance) in [
        ("whisper-large-v3:train", 1.55e9, 0.02),
        ("whisper-small:train", 242e6, 0.02),
        ("bert-base-squad:train", 109.5e6, 0.02),
        ("pegasus-x-base:train", 272e6, 0.02),
        ("gpt2-large:train", 774e6, 0.02),
        ("pointnet:train", 3.5e6, 0.05),
    ] {
        let m = model(name);
        let n = optimized(&m);
        println!("{name}: {n:e} parameters");
        assert!(within(n, published, tolerance), "{name}: {n:e}");
        assert_eq!(m.phase, Phase::Training);
    }
}

#[test]
fn default_batches_are_the_benchmarks() {
    for (name, batch) in [
        ("whisper-large-v3:train", 16),
        ("whisper-small:train", 16),
        ("bert-base-squad:train", 32),
        ("pegasus-x-base:train", 4),
        ("pointnet:train", 128),
        ("gpt2-large:train", 1),
        ("llama2-7b", 1),
        ("bert-large", 1),
    ] {
        assert_eq!(model(name).params.batch, batch, "{name}");
    }
}

#[test]
fn bert_large_is_two_flops_per_parameter_and_token() {
    // 335M parameters in the encoder and embeddings (Devlin et al.); the
    // forward pass applies the ~302M of the layers and the span head to
    // each of the 128 tokens, plus attention.
    let m = model("bert-large");
    let tokens = 128.0;
    let f = m
        .launches()
        .iter()
        .map(|k| k.work.tensor_flops)
        .sum::<f64>();
    assert!(within(f, 2.0 * 302e6 * tokens, 0.15), "{f:e}");
    assert_eq!(m.phase, Phase::Inference);
    assert!(zoo::build("bert-large:train", &ParamsOverride::default()).is_err());
}

/// A training iteration is ~6 FLOPs per parameter per token it is applied
/// to, plus attention (which the ratio's upper bound leaves room for).
#[test]
fn training_flops_are_six_per_parameter_and_token() {
    let d = |h: f64| h * h;
    // GPT-2 large: 774M on 512 tokens; causal attention adds ~5 %.
    let gpt = flops(&model("gpt2-large:train")) / (6.0 * 774e6 * 512.0);
    // Whisper: the encoder (32 x 12 d^2 and the stem) and the decoder's
    // cross-attention k/v (32 x 2 d^2) run on 1500 positions, the rest of
    // the decoder and the output projection on 64 labels; batch 16.
    let (enc, xkv) = (32.0 * 12.0 * d(1280.0) + 5.4e6, 32.0 * 2.0 * d(1280.0));
    let whisper_tokens = 16.0 * ((enc + xkv) * 1500.0 + (1.55e9 - enc - xkv) * 64.0);
    let whisper = flops(&model("whisper-large-v3:train")) / (6.0 * whisper_tokens);
    // Pegasus-X: the encoder on 2048 + 128 global tokens, cross k/v on
    // 2048, the decoder rest and the LM head on 64 targets; batch 4.
    let (enc, xkv) = (12.0 * 12.0 * d(768.0), 12.0 * 2.0 * d(768.0));
    let pegasus_tokens = 4.0 * (enc * 2176.0 + xkv * 2048.0 + (272e6 - enc - xkv) * 64.0);
    let pegasus = flops(&model("pegasus-x-base:train")) / (6.0 * pegasus_tokens);
    println!("gpt2-large {gpt:.3} whisper {whisper:.3} pegasus-x {pegasus:.3}");
    assert!((1.0..1.15).contains(&gpt), "{gpt}");
    // 1500-position attention: 32 layers x 12 B S^2 d is ~17 % more.
    assert!((1.05..1.3).contains(&whisper), "{whisper}");
    // Block-local attention (512 x 640 scores per block) and the odd
    // layers' extra half blocks at both ends add ~20 %.
    assert!((1.05..1.3).contains(&pegasus), "{pegasus}");
}

/// The Tally benchmark's whisper job (whisper-small with gradient
/// checkpointing): every encoder and decoder layer's forward runs twice, so
/// the layers cost ~8 FLOPs per parameter and token (forward, recomputed
/// forward, backward at twice the forward), the rest ~6.
#[test]
fn checkpointed_whisper_small_recomputes_every_layer_once() {
    let m = model("whisper-small:train");
    let recomputed = |prefix: &str| {
        m.operators
            .iter()
            .filter(|o| o.recompute && o.name.starts_with(prefix))
            .map(|o| o.name.split('.').nth(2).unwrap_or_default().to_string())
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    };
    assert_eq!(recomputed("encoder.layers."), 12);
    assert_eq!(recomputed("decoder.layers."), 12);
    // Nothing outside the layers is recomputed, and no parameter counts
    // twice.
    assert!(m
        .operators
        .iter()
        .filter(|o| o.recompute)
        .all(|o| o.name.contains(".layers.")));
    assert!(within(m.param_count() as f64, optimized(&m), 0.25));
    let d = |h: f64| h * h;
    let (enc, xkv, stem) = (12.0 * 12.0 * d(768.0), 12.0 * 2.0 * d(768.0), 2.0e6);
    let dec = 12.0 * 8.0 * d(768.0);
    let head = 768.0 * 51865.0;
    let per_token_flops = 16.0
        * (8.0 * (enc + xkv) * 1500.0 + 6.0 * stem * 1500.0 + 8.0 * dec * 64.0 + 6.0 * head * 64.0);
    let ratio = flops(&m) / per_token_flops;
    println!("whisper-small {ratio:.3}");
    // 1500-position attention adds S / 6d = 1500 / 4608 = ~33 % to the
    // encoder's layers, which dominate.
    assert!((1.2..1.45).contains(&ratio), "{ratio}");
    // Without checkpointing (large-v3) no operator is recomputed.
    assert!(!model("whisper-large-v3:train")
        .operators
        .iter()
        .any(|o| o.recompute));
}

/// The benchmark's BERT training job: SQuAD fine-tuning of bert-base at
/// sequence 384, ~6 FLOPs per parameter and token plus attention.
#[test]
fn bert_base_squad_trains_on_384_token_sequences() {
    let m = model("bert-base-squad:train");
    assert_eq!(m.params.seq_len, Some(384));
    // The 85M parameters of the layers apply to every token; attention
    // (4 S d per token and layer forward) adds S / 6d = 384 / 4608.
    let tokens = 32.0 * 384.0;
    let ratio = flops(&m) / (6.0 * 85e6 * tokens);
    println!("bert-base-squad {ratio:.3}");
    assert!((1.0..1.2).contains(&ratio), "{ratio}");
}

#[test]
fn pointnet_forward_is_430k_macs_per_point() {
    let m = zoo::build(
        "pointnet:train",
        &ParamsOverride {
            batch: Some(2),
            ..ParamsOverride::default()
        },
    )
    .unwrap();
    let forward: f64 = m
        .operators
        .iter()
        .filter(|o| !o.backward && matches!(o.op, OpKind::Conv2d { .. }))
        .flat_map(|o| o.lower())
        .map(|k| k.work.total_flops())
        .sum();
    // Shared MLPs per point: T-Net 3-64-128-1024, 3-64-64, T-Net
    // 64-64-128-1024, 64-64-128-1024.
    let macs = (3 * 64 + 64 * 128 + 128 * 1024)
        + (3 * 64 + 64 * 64)
        + (64 * 64 + 64 * 128 + 128 * 1024)
        + (64 * 64 + 64 * 128 + 128 * 1024);
    let per_point = forward / 2.0 / (2.0 * 2500.0);
    assert!(
        within(per_point, macs as f64, 0.05),
        "{per_point:e} vs {macs}"
    );
}

/// The attention operators of a generation request: (q_len, kv_len) of
/// each step's first layer.
fn attention_steps(m: &Model) -> Vec<(u64, u64)> {
    m.operators
        .iter()
        .filter(|o| o.name.ends_with(".layers.0.self_attn.attention"))
        .map(|o| match o.op {
            OpKind::Attention { q_len, kv_len, .. } => (q_len, kv_len),
            _ => panic!("{}", o.name),
        })
        .collect()
}

#[test]
fn llama_generation_is_one_prefill_then_a_decode_step_per_token() {
    let m = model("llama2-7b");
    assert_eq!(m.phase, Phase::Inference);
    assert_eq!(m.params.seq_len, Some(29));
    let steps = attention_steps(&m);
    // 29 prompt tokens, 128 in all: 1 prefill and 99 decode steps.
    assert_eq!(steps.len(), 1 + (128 - 29));
    assert_eq!(steps[0], (29, 29));
    for (i, &(q, kv)) in steps.iter().enumerate().skip(1) {
        assert_eq!((q, kv), (1, 29 + i as u64), "step {i}");
    }
    assert_eq!(steps.last(), Some(&(1, 128)));
    assert_eq!(m.operators[0].name, "prefill.embed_tokens");
    assert_eq!(
        m.operators.last().map(|o| o.name.as_str()),
        Some("decode.99.generate.unfinished_sequences")
    );

    // Each step is the step the prefill and decode entries build, then
    // the decode entry's token selection.
    let strip = |m: &Model, from: usize, to: usize| -> Vec<OpKind> {
        m.operators[from..to].iter().map(|o| o.op.clone()).collect()
    };
    let o = |seq_len, kv_len| ParamsOverride {
        batch: Some(1),
        seq_len,
        kv_len,
    };
    let prefill = zoo::build("llama2-7b-prefill", &o(Some(29), None)).unwrap();
    let decode = zoo::build("llama2-7b-decode", &o(None, Some(40))).unwrap();
    let n = prefill.operators.len();
    assert_eq!(strip(&m, 0, n), strip(&prefill, 0, n));
    let step = decode.operators.len();
    let tail = step - n;
    // Decode step 12 attends to 29 + 12 = 41 keys: a cache of 40.
    let start = n + tail + 11 * step;
    assert_eq!(strip(&m, start, start + step), strip(&decode, 0, step));
    assert_eq!(m.operators.len(), (n + tail) + 99 * step);

    // --seq sets the prompt.
    let short = zoo::build("llama2-7b", &o(Some(100), None)).unwrap();
    assert_eq!(attention_steps(&short).len(), 1 + 28);
    let launches = m.launches();
    assert!(launches.iter().all(|k| k.kind != KernelKind::Optimizer));
    println!("llama2-7b: {} launches", launches.len());
}

#[test]
fn batch_suffix_sets_the_batch_and_stays_in_the_name() {
    for (arg, name, batch) in [
        ("resnet50:train@128", "resnet50:train@128", 128),
        ("bert-base:train@32", "bert-base:train@32", 32),
        ("bert-base:infer@1", "bert-base@1", 1),
        ("llama2-7b@1", "llama2-7b@1", 1),
        ("llama2-7b:infer@2", "llama2-7b@2", 2),
        ("gpt2-large:train@2", "gpt2-large:train@2", 2),
    ] {
        let m = zoo::resolve_model(arg, &ParamsOverride::default()).unwrap();
        assert_eq!((m.name.as_str(), m.params.batch), (name, batch), "{arg}");
        m.validate().unwrap();
    }
    // The defaults of resnet50:train and bert-base:train stay.
    assert_eq!(model("resnet50:train").params.batch, 32);
    assert_eq!(model("bert-base:train").params.batch, 8);
    // BERT's server request: batch 1 at its default 128 tokens.
    let bert = model("bert-base:infer@1");
    assert_eq!(bert.params.seq_len, Some(128));
    let eighth = flops(&bert) * 8.0 / flops(&model("bert-base"));
    assert!(
        within(eighth, 1.0, 0.01),
        "batch 1 is an eighth of batch 8: {eighth}"
    );
}

#[test]
fn malformed_or_conflicting_suffixes_are_errors() {
    let none = ParamsOverride::default();
    for arg in ["resnet50@0", "resnet50:train@abc", "bert-base@", "@4"] {
        let err = zoo::resolve_model(arg, &none).unwrap_err();
        assert!(
            matches!(err, ModelError::InvalidName { .. }),
            "{arg}: {err:?}"
        );
        assert!(err.to_string().contains(&format!("`{arg}`")), "{err}");
    }
    let eight = ParamsOverride {
        batch: Some(8),
        ..none
    };
    let err = zoo::build("resnet50:train@128", &eight).unwrap_err();
    assert!(
        matches!(
            err,
            ModelError::BatchConflict {
                suffix: 128,
                batch: 8,
                ..
            }
        ),
        "{err:?}"
    );
    let same = ParamsOverride {
        batch: Some(128),
        ..none
    };
    assert_eq!(
        zoo::build("resnet50:train@128", &same)
            .unwrap()
            .params
            .batch,
        128
    );
    // Training-only and inference-only families.
    for arg in ["whisper-large-v3", "pointnet:infer@4", "llama2-7b:train"] {
        assert!(
            matches!(zoo::build(arg, &none), Err(ModelError::NoVariant { .. })),
            "{arg}"
        );
    }
    // A model file's shapes are fixed: its suffix is a rejected override.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.toml");
    std::fs::write(&path, "").unwrap();
    let arg = format!("{}@4", path.display());
    assert!(matches!(
        zoo::resolve_model(&arg, &none),
        Err(ModelError::ParamNotApplicable { param: "batch", .. })
    ));
}
