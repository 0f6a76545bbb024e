//! `tally train`, `tally eval` and `tally predict` on a small dataset.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use tally_datasets::Dataset;
use tally_e2e::{fails_with, profile_into, profile_small, stdout_of, tally};

#[test]
fn train_eval_predict_on_a_small_dataset() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (r50, bert, mlp) = (
        tmp.path().join("r50"),
        tmp.path().join("bert"),
        tmp.path().join("mlp"),
    );
    profile_small("resnet50", "60", &r50);
    profile_small("bert-base", "60", &bert);
    profile_small("profiler/examples-models/tiny-mlp.toml", "30", &mlp);
    let model = tmp.path().join("model.json");
    tally()
        .args(["train", "--gbm-trees", "60", "--data"])
        .args([&r50, &bert, &mlp])
        .arg("--out")
        .arg(&model)
        .assert()
        .success()
        .stdout(
            predicate::str::contains("default method:")
                .and(predicate::str::contains("held-out MAPE")),
        );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).expect("model file")).expect("json");
    assert_eq!(file["format"], "tally-predictor");
    assert_eq!(file["gpu"]["name"], "h100-sxm");
    assert_eq!(
        file["training_data"].as_array().expect("provenance").len(),
        3
    );

    // Evaluation: every method on every split, as JSON.
    let out = stdout_of(
        tally()
            .args(["eval", "--gbm-trees", "60", "--format", "json", "--data"])
            .args([&r50, &bert, &mlp]),
    );
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out).expect("json");
    let find = |split: &str, held: &str, k: u64, method: &str| {
        rows.iter()
            .find(|r| {
                r["split"] == split && r["held_out"] == held && r["k"] == k && r["method"] == method
            })
            .and_then(|r| r["mape_pct"].as_f64())
            .unwrap_or_else(|| panic!("no row {split}/{held}/{k}/{method}"))
    };
    let gbm = find("random", "all", 0, "gbm");
    let rule = find("random", "all", 0, "intensity-rule");
    assert!(
        gbm < rule,
        "learned {gbm} % must beat the intensity rule {rule} %"
    );
    for held in ["resnet50", "bert-base", "tiny-mlp", "all"] {
        find("loo", held, 0, "linear");
        for k in [5, 10, 20] {
            assert!(find("fewshot", held, k, "gbm").is_finite());
        }
    }

    // One pair over every split, with the linear model's explanation.
    let mut out = tally();
    out.args(["predict", "--predictor"])
        .arg(&model)
        .arg("--data")
        .arg(&r50)
        .args([
            "--a",
            "conv1.conv",
            "--b",
            "maxpool",
            "--explain",
            "--format",
            "csv",
        ]);
    let text = stdout_of(&mut out);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    assert!(
        header.contains(&"co_a_us") && header.contains(&"l2_bandwidth") && header.contains(&"dram")
    );
    let body: Vec<&str> = lines.collect();
    assert!(body.len() >= 10, "every allowed split: {body:?}");
    assert_eq!(
        body.iter().filter(|l| l.contains(",*,")).count(),
        1,
        "one best split"
    );

    // A pairs file with fixed splits.
    let pairs = tmp.path().join("pairs.csv");
    let ops = Dataset::read(&r50).expect("dataset").ops;
    let (a, b) = (&ops[0].op_id, &ops[3].op_id);
    std::fs::write(
        &pairs,
        format!("op_a,op_b,sm_a,sm_b\n{a},{b},64,64\n{b},{a},32,96\n"),
    )
    .expect("write");
    let mut out = tally();
    out.args(["predict", "--format", "csv", "--predictor"])
        .arg(&model)
        .arg("--data")
        .arg(&r50)
        .arg("--pairs")
        .arg(&pairs);
    assert_eq!(stdout_of(&mut out).lines().count(), 3);

    // Bad input: a pairs file with a broken row, data from another GPU, a
    // file that is not a model.
    std::fs::write(
        &pairs,
        format!("op_a,op_b,sm_a,sm_b\n{a},{b},64,64\n{a},{b},lots,64\n"),
    )
    .expect("write");
    fails_with(
        tally()
            .args(["predict", "--predictor"])
            .arg(&model)
            .arg("--data")
            .arg(&r50)
            .arg("--pairs")
            .arg(&pairs),
        &["pairs.csv", "line 3"],
    );
    let a100 = tmp.path().join("a100");
    profile_into(
        &a100,
        &["--model", "resnet50", "--gpu", "a100-40gb", "--pairs", "5"],
    );
    fails_with(
        &mut predict_conv1_maxpool(&model, &a100),
        &["trained for `h100-sxm`"],
    );
    fails_with(
        tally()
            .args(["train", "--data"])
            .args([&r50, &a100])
            .arg("--out")
            .arg(tmp.path().join("mixed.json")),
        &["different GPUs"],
    );
    assert!(!tmp.path().join("mixed.json").exists());
    fails_with(
        &mut predict_conv1_maxpool(&pairs, &r50),
        &["pairs.csv", "not JSON"],
    );
}

/// `tally predict` for ResNet-50's first convolution beside its max-pool.
fn predict_conv1_maxpool(predictor: &Path, data: &Path) -> Command {
    let mut cmd = tally();
    cmd.args([
        "predict",
        "--a",
        "conv1.conv",
        "--b",
        "maxpool",
        "--predictor",
    ])
    .arg(predictor)
    .arg("--data")
    .arg(data);
    cmd
}
