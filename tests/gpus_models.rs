//! `tally gpus` and `tally models`: listings in every format (one golden),
//! clear errors for unknown names, user model and GPU files, stand-ins.

use predicates::prelude::*;
use tally_datasets::Dataset;
use tally_e2e::{fails_with, repo, stdout_of, tally};

#[test]
fn gpus_lists_every_preset_in_every_format() {
    tally()
        .arg("gpus")
        .assert()
        .success()
        .stdout(predicate::str::contains("h100-sxm").and(predicate::str::contains("a100-40gb")));
    let out = tally()
        .args(["gpus", "--format", "json"])
        .output()
        .expect("runs");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v.as_array().expect("array").len(), 6);
    assert_eq!(v[3]["sms"], 132);
}

#[test]
fn models_golden_listing_of_bert_base() {
    let out = tally()
        .args(["models", "bert-base", "--format", "csv"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let golden = repo().join("tests/golden/models-bert-base.csv");
    let text = String::from_utf8(out.stdout).expect("utf8");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &text).expect("write golden");
    }
    let expected = std::fs::read_to_string(&golden).expect("golden file present");
    assert_eq!(
        text, expected,
        "regenerate with UPDATE_GOLDEN=1 if the change is intended"
    );
}

#[test]
fn unknown_names_list_the_valid_ones() {
    fails_with(
        tally().args(["models", "resnet5"]),
        &["resnet50", "bert-base"],
    );
    let dir = tempfile::tempdir().expect("tempdir");
    fails_with(
        tally()
            .args(["profile", "--model", "bert-base", "--gpu", "b300", "--out"])
            .arg(dir.path().join("r")),
        &["h100-sxm"],
    );
}

/// `tally models M --stand-ins`: the library launch the CUDA backend runs
/// for each unique kernel, doing about the kernel's work.
#[test]
fn models_show_each_kernels_stand_in() {
    let out = stdout_of(tally().args(["models", "bert-base", "--stand-ins", "--format", "csv"]));
    let mut r = csv::Reader::from_reader(out.as_bytes());
    let header = r.headers().expect("header").clone();
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.expect("row")).collect();
    // bert-base has 11 unique kernels (`tally models`).
    assert_eq!(rows.len(), 11);
    let entries = tally_kernels::library::kernels().expect("manifest");
    for row in &rows {
        let entry = &row[col("stand_in")];
        assert!(entries.iter().any(|k| k.entry == entry), "{entry}");
        let bytes: f64 = row[col("bytes_ratio")].parse().expect("a ratio");
        assert!((0.8..1.25).contains(&bytes), "{row:?}");
    }
    assert!(rows.iter().any(|r| &r[col("stand_in")] == "gemm_f16_mma"));
    fails_with(tally().args(["models", "--stand-ins"]), &["--stand-ins"]);
}

#[test]
fn user_model_and_gpu_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Start from a preset's full spec, as the README suggests.
    let out = tally()
        .args(["gpus", "--spec", "a100-40gb"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let mut spec: toml::Table =
        toml::from_str(&String::from_utf8(out.stdout).expect("utf8")).expect("spec is TOML");
    spec.insert("name".into(), "my-a100-half".into());
    spec.insert("sm_count".into(), 54.into());
    let gpu_file = dir.path().join("gpu.toml");
    std::fs::write(&gpu_file, toml::to_string(&spec).expect("toml")).expect("write");
    let out = dir.path().join("mlp");
    tally()
        .args([
            "profile",
            "--model",
            "profiler/examples-models/tiny-mlp.toml",
            "--gpu",
        ])
        .arg(&gpu_file)
        .args(["--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    let ds = Dataset::read(&out).expect("readable");
    assert_eq!(ds.info.gpu.sm_count, 54);
    assert_eq!(ds.info.model, "tiny-mlp");
    assert!(ds.pairs.iter().all(|p| p.sm_a + p.sm_b <= 54));
}
