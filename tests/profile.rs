//! `tally profile`: the full dataset on fresh directories, reproducible
//! sampling, CSV and Parquet agreeing, the run-directory claim, the kernel
//! library's real resources, and the CUDA backend's clear error without a
//! driver.

use std::path::Path;

use predicates::prelude::*;
use tally_datasets::{Dataset, PAIR_COLUMNS};
use tally_e2e::{fails_with, profile_cmd, profile_into, read_csv, tally};
use tally_gpu::NO_DRIVER;

#[test]
fn profile_llama_decode_writes_the_full_dataset() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("llama");
    assert!(
        profile_into(&out, &["--model", "llama2-7b-decode", "--gpu", "h100-sxm"])
            .contains("pair rows")
    );
    for f in ["ops.csv", "standalone.csv", "pairs.csv", "run.json"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let (header, rows) = read_csv(&out.join("standalone.csv"));
    let ncu = header.iter().filter(|h| h.contains("__")).count();
    assert!(ncu >= 20, "only {ncu} counter columns");
    assert!(header.contains(&"dram__throughput.avg.pct_of_peak_sustained_elapsed".to_string()));
    assert!(!rows.is_empty());
    let (header, rows) = read_csv(&out.join("pairs.csv"));
    assert_eq!(header[..PAIR_COLUMNS.len()], PAIR_COLUMNS.map(String::from));
    assert!(rows.len() >= 500, "{} pair rows", rows.len());
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).expect("read"))
            .expect("json");
    assert_eq!(run["schema_version"], 1);
    assert_eq!(run["gpu"]["name"], "h100-sxm");
    assert_eq!(run["backend"], "sim");
    let ds = Dataset::read(&out).expect("readable");
    assert_eq!(ds.pairs.len(), rows.len());
    // Splits at Hopper's 8-SM granularity.
    assert!(ds.pairs.iter().all(|p| p.sm_a % 8 == 0 && p.sm_b % 8 == 0));
    assert!(ds.pairs.iter().all(|p| p.sm_a + p.sm_b <= 132));
}

#[test]
fn sampled_pairs_are_reproducible_from_the_seed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = |name: &str, seed: &str| {
        let out = dir.path().join(name);
        tally()
            .args([
                "profile",
                "--model",
                "resnet50",
                "--gpu",
                "a100-40gb",
                "--pairs",
                "20",
            ])
            .args([
                "--seed",
                seed,
                "--sm-counts",
                "4,54,108",
                "--quiet",
                "--out",
            ])
            .arg(&out)
            .assert()
            .success();
        std::fs::read_to_string(out.join("pairs.csv")).expect("pairs")
    };
    let a = run("a", "3");
    assert_eq!(a, run("b", "3"));
    assert_ne!(a, run("c", "4"));
    assert_eq!(a.lines().count(), 1 + 20 * 3);
    let ds = Dataset::read(dir.path().join("a")).expect("readable");
    // The override plus the split sizes.
    assert_eq!(ds.info.sm_counts, vec![4, 26, 28, 54, 80, 82, 108]);
}

#[test]
fn parquet_and_csv_hold_the_same_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("both");
    profile_into(&out, &["--model", "bert-base", "--format", "both"]);
    assert!(out.join("pairs.parquet").is_file() && out.join("pairs.csv").is_file());
    let from_csv = Dataset::read(&out).expect("csv");
    std::fs::remove_file(out.join("pairs.csv")).expect("rm");
    std::fs::remove_file(out.join("ops.csv")).expect("rm");
    std::fs::remove_file(out.join("standalone.csv")).expect("rm");
    let mut info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).expect("read"))
            .expect("json");
    info["formats"] = serde_json::json!(["parquet"]);
    std::fs::write(out.join("run.json"), info.to_string()).expect("write");
    let from_parquet = Dataset::read(&out).expect("parquet");
    assert_eq!(from_csv.pairs, from_parquet.pairs);
    assert_eq!(from_csv.ops, from_parquet.ops);
    assert_eq!(from_csv.standalone, from_parquet.standalone);
}

#[test]
fn an_existing_run_is_not_overwritten_without_force() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("r");
    let profile = |force: bool| {
        let mut cmd = tally();
        cmd.args([
            "profile", "--model", "gpt2", "--pairs", "2", "--quiet", "--out",
        ])
        .arg(&out);
        if force {
            cmd.arg("--force");
        }
        cmd.assert()
    };
    profile(false).success();
    profile(false)
        .code(2)
        .stderr(predicate::str::contains("--force"));
    profile(true).success();
}

#[test]
fn profile_takes_the_kernel_librarys_real_resources() {
    // ptxas's figures for the library (NVRTC + ptxas, installed by
    // scripts/test.sh), then a profile whose kernels launch like them.
    let dir = tempfile::tempdir().unwrap();
    let kernels = dir.path().join("kernels");
    tally()
        .args([
            "kernels", "build", "--arch", "sm_90", "--format", "csv", "--out",
        ])
        .arg(&kernels)
        .assert()
        .success()
        .stdout(predicate::str::contains("gemm_f16_mma,gemm,preemptive-ptb"));
    let resources = kernels.join("resources.json");
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&resources).unwrap()).unwrap();
    let gemm = rows
        .iter()
        .find(|r| r["entry"] == "gemm_f16_mma" && r["variant"] == "original")
        .expect("gemm row");
    let registers = gemm["registers"].as_u64().unwrap().to_string();
    assert!(kernels.join("gemm.sm_90.ptx").is_file());
    let out = dir.path().join("bert");
    tally()
        .args([
            "profile",
            "--model",
            "bert-base",
            "--pairs",
            "20",
            "--quiet",
        ])
        .arg("--kernel-resources")
        .arg(&resources)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let (header, ops) = read_csv(&out.join("ops.csv"));
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let gemms: Vec<_> = ops.iter().filter(|r| &r[col("kind")] == "gemm").collect();
    assert!(!gemms.is_empty());
    for r in gemms {
        assert_eq!(&r[col("block_x")], "128");
        assert_eq!(r[col("registers_per_thread")], registers);
    }
}

#[test]
fn cuda_backend_is_a_clear_error() {
    // Without a driver every CUDA path says so, never panics inside cudarc,
    // and writes nothing. (Profiling on a real GPU is scripts/gpu-check.sh's:
    // this machine has none.)
    if Path::new("/proc/driver/nvidia").exists() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    fails_with(
        &mut profile_cmd(
            &dir.path().join("r"),
            &["--model", "bert-base", "--backend", "cuda"],
        ),
        &[NO_DRIVER],
    );
    // A preset spec too: the driver is checked before the device is opened.
    fails_with(
        tally()
            .args([
                "profile",
                "--model",
                "bert-base",
                "--backend",
                "cuda",
                "--gpu",
                "h200",
            ])
            .args(["--warmup", "1", "--reps", "5", "--device", "0", "--out"])
            .arg(dir.path().join("r")),
        &[NO_DRIVER],
    );
    assert!(
        !dir.path().join("r").exists(),
        "a failed profile wrote output"
    );
    fails_with(
        tally()
            .args(["profile", "--model", "bert-base", "--reps", "0", "--out"])
            .arg(dir.path().join("r")),
        &["timed repetitions (--reps) must be at least 1"],
    );
    tally()
        .args([
            "profile",
            "--model",
            "bert-base",
            "--counters",
            "ncu",
            "--out",
        ])
        .arg(dir.path().join("r"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--counters ncu needs --backend cuda",
        ));
    // The real device's own spec, and the device listing.
    fails_with(
        tally()
            .args(["profile", "--model", "bert-base", "--gpu", "auto", "--out"])
            .arg(dir.path().join("r")),
        &[NO_DRIVER],
    );
    fails_with(tally().args(["gpus", "--backend", "cuda"]), &[NO_DRIVER]);
    fails_with(
        tally().args(["gpus", "--backend", "cuda", "--try-split", "64,64"]),
        &[NO_DRIVER],
    );
    fails_with(
        tally().args(["gpus", "--try-split", "64,64"]),
        &["needs --backend cuda"],
    );
    assert!(!dir.path().join("r").exists(), "nothing written");
}

/// FP32 attention is PyTorch's memory-efficient kernel, which fits a V100:
/// BERT-large at sequence 512 and an FP32 training step profile there.
#[test]
fn fp32_attention_profiles_on_a_v100() {
    for model in ["bert-large:infer-fp32", "bert-base:train-fp32"] {
        let dir = tempfile::tempdir().unwrap();
        profile_into(
            dir.path(),
            &[
                "--model", model, "--seq", "512", "--gpu", "v100", "--pairs", "5",
            ],
        );
        let (_, ops) = read_csv(&dir.path().join("ops.csv"));
        assert!(
            ops.iter().any(|r| r[2].contains("fmha_cutlass")),
            "{model}: no memory-efficient attention kernel"
        );
        assert!(ops.iter().all(|r| !r[2].contains("flash_fwd_f32")));
    }
}
