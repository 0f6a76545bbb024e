//! End-to-end tests of the `tally` binary, each on a fresh temporary
//! directory: what a user runs, what lands on disk, and how bad input fails.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use tally_datasets::{Dataset, PAIR_COLUMNS};

/// The repository root (this crate lives in `tests/`).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

/// The `tally` binary of the profile these tests were built in: cargo does
/// not build another package's binary for `cargo test`, so scripts/test.sh
/// builds it first.
fn tally_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>");
    let bin = profile_dir.join(format!("tally{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "`{}` is missing: build it first with `cargo build -p tally-cli` in the same profile \
         as the tests (scripts/test.sh does)",
        bin.display()
    );
    bin
}

fn tally() -> Command {
    let mut cmd = Command::new(tally_binary());
    cmd.current_dir(repo())
        .env_remove("TALLY_GPU")
        .env_remove("TALLY_BACKEND");
    cmd
}

fn read_csv(path: &Path) -> (Vec<String>, Vec<csv::StringRecord>) {
    let mut r = csv::Reader::from_path(path).expect("csv");
    let header = r
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    let rows = r.records().map(|r| r.expect("row")).collect();
    (header, rows)
}

/// Run `cmd`, require success (showing its stderr otherwise), return stdout.
fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

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
    tally()
        .args(["models", "resnet5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("resnet50").and(predicate::str::contains("bert-base")));
    let dir = tempfile::tempdir().expect("tempdir");
    tally()
        .args(["profile", "--model", "bert-base", "--gpu", "b300", "--out"])
        .arg(dir.path().join("r"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("h100-sxm"));
}

#[test]
fn profile_llama_decode_writes_the_full_dataset() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("llama");
    tally()
        .args([
            "profile",
            "--model",
            "llama2-7b-decode",
            "--gpu",
            "h100-sxm",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("pair rows"));
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
    tally()
        .args([
            "profile",
            "--model",
            "bert-base",
            "--format",
            "both",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
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
fn cuda_backend_is_a_clear_error() {
    // Without a driver every CUDA path says so, never panics inside cudarc,
    // and writes nothing. (Profiling on a real GPU is scripts/gpu-check.sh's:
    // this machine has none.)
    if Path::new("/proc/driver/nvidia").exists() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let no_driver = || {
        predicate::str::contains("no NVIDIA driver found")
            .and(predicate::str::contains("--backend sim"))
            .and(predicate::str::contains("panicked").not())
    };
    tally()
        .args([
            "profile",
            "--model",
            "bert-base",
            "--backend",
            "cuda",
            "--out",
        ])
        .arg(dir.path().join("r"))
        .assert()
        .code(2)
        .stderr(no_driver());
    // A preset spec too: the driver is checked before the device is opened.
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
        .arg(dir.path().join("r"))
        .assert()
        .code(2)
        .stderr(no_driver());
    assert!(
        !dir.path().join("r").exists(),
        "a failed profile wrote output"
    );
    tally()
        .args(["profile", "--model", "bert-base", "--reps", "0", "--out"])
        .arg(dir.path().join("r"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--reps must be at least 1"));
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
    tally()
        .args(["profile", "--model", "bert-base", "--gpu", "auto", "--out"])
        .arg(dir.path().join("r"))
        .assert()
        .code(2)
        .stderr(no_driver());
    tally()
        .args(["gpus", "--backend", "cuda"])
        .assert()
        .code(2)
        .stderr(no_driver());
    tally()
        .args(["gpus", "--backend", "cuda", "--try-split", "64,64"])
        .assert()
        .code(2)
        .stderr(no_driver());
    tally()
        .args(["gpus", "--try-split", "64,64"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("needs --backend cuda"));
    assert!(!dir.path().join("r").exists(), "nothing written");
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

#[test]
fn malformed_inputs_name_file_line_and_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("bad.toml");
    std::fs::write(
        &model,
        "name = \"bad\"\n\n[[operators]]\nname = \"fc\"\nop = \"gemm\"\nm = 64\nn = \"wide\"\nk = 64\n",
    )
    .expect("write");
    tally()
        .args(["profile", "--model"])
        .arg(&model)
        .args(["--out"])
        .arg(dir.path().join("r"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.toml:7").and(predicate::str::contains("`n`")));

    let gpu = dir.path().join("gpu.toml");
    std::fs::write(&gpu, "name = \"x\"\nsm_count = 0\n").expect("write");
    tally()
        .args(["profile", "--model", "bert-base", "--gpu"])
        .arg(&gpu)
        .args(["--out"])
        .arg(dir.path().join("r"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("gpu.toml"));

    tally()
        .args([
            "profile",
            "--model",
            "bert-base",
            "--sm-counts",
            "12",
            "--out",
        ])
        .arg(dir.path().join("r"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a partition size"));

    tally()
        .args(["profile", "--model", "resnet50", "--seq", "128", "--out"])
        .arg(dir.path().join("r"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("seq"));
    assert!(!dir.path().join("r").exists(), "failed runs write nothing");
}

#[test]
fn corrupted_dataset_is_reported_with_file_line_and_column() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("r");
    tally()
        .args([
            "profile",
            "--model",
            "bert-base",
            "--pairs",
            "5",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    tally()
        .arg("summary")
        .arg("--data")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("intensity_rule_mape_pct"));
    let pairs = out.join("pairs.csv");
    let text = std::fs::read_to_string(&pairs).expect("read");
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut fields: Vec<&str> = lines[2].split(',').collect();
    fields[2] = "abc";
    lines[2] = fields.join(",");
    std::fs::write(&pairs, lines.join("\n") + "\n").expect("write");
    tally()
        .arg("summary")
        .arg("--data")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("pairs.csv")
                .and(predicate::str::contains("line 3"))
                .and(predicate::str::contains("sm_a")),
        );
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

/// Profile `model` on h100-sxm with `pairs` sampled pairs into `dir`.
fn profile_small(model: &str, pairs: &str, dir: &Path) {
    tally()
        .args([
            "profile", "--model", model, "--pairs", pairs, "--quiet", "--out",
        ])
        .arg(dir)
        .assert()
        .success();
}

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
    tally()
        .args(["predict", "--predictor"])
        .arg(&model)
        .arg("--data")
        .arg(&r50)
        .arg("--pairs")
        .arg(&pairs)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("pairs.csv").and(predicate::str::contains("line 3")));
    let a100 = tmp.path().join("a100");
    tally()
        .args([
            "profile",
            "--model",
            "resnet50",
            "--gpu",
            "a100-40gb",
            "--pairs",
            "5",
            "--quiet",
            "--out",
        ])
        .arg(&a100)
        .assert()
        .success();
    tally()
        .args([
            "predict",
            "--a",
            "conv1.conv",
            "--b",
            "maxpool",
            "--predictor",
        ])
        .arg(&model)
        .arg("--data")
        .arg(&a100)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("trained for `h100-sxm`"));
    tally()
        .args(["train", "--data"])
        .args([&r50, &a100])
        .arg("--out")
        .arg(tmp.path().join("mixed.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("different GPUs"));
    assert!(!tmp.path().join("mixed.json").exists());
    tally()
        .args([
            "predict",
            "--a",
            "conv1.conv",
            "--b",
            "maxpool",
            "--predictor",
        ])
        .arg(&pairs)
        .arg("--data")
        .arg(&r50)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("pairs.csv").and(predicate::str::contains("not JSON")));
}

/// A fixture of the PTX transformer's tests.
fn ptx_fixture(name: &str) -> PathBuf {
    repo().join("sched-runtime/tests/fixtures").join(name)
}

#[test]
fn ptx_transform_writes_every_variant_and_check_assembles_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("barrier_loop.tally.ptx");
    tally()
        .args(["ptx", "transform"])
        .arg(ptx_fixture("ptx/barrier_loop.sm_90.ptx"))
        .args(["--variant", "all", "-o"])
        .arg(&out)
        .assert()
        .success()
        .stderr(predicate::str::contains("variants added"));
    let text = std::fs::read_to_string(&out).unwrap();
    for suffix in ["__tally_sliced(", "__tally_ptb(", "__tally_preempt("] {
        assert!(text.contains(suffix), "{suffix} missing");
    }
    // ptxas (installed by scripts/test.sh) assembles the result; the table
    // lists the original entry and its three variants.
    let check = tally()
        .args(["ptx", "check"])
        .arg(&out)
        .args(["--arch", "sm_90", "--format", "csv"])
        .assert()
        .success();
    let csv = String::from_utf8(check.get_output().stdout.clone()).unwrap();
    let entries = csv.lines().filter(|l| l.contains(",entry,")).count();
    assert_eq!(entries % 4, 0, "{csv}");
    assert!(entries >= 4, "{csv}");
}

#[test]
fn ptx_errors_name_the_file_line_and_construct() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.ptx");
    let bad = dir.path().join("bad.ptx");
    std::fs::write(
        &bad,
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tret\n}\n",
    )
    .unwrap();
    tally()
        .args(["ptx", "transform"])
        .arg(&bad)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.ptx").and(predicate::str::contains("7:1")));
    assert!(!out.exists(), "no output on failure");
    tally()
        .args(["ptx", "transform"])
        .arg(ptx_fixture("ptx/unsupported_cluster.sm_90.ptx"))
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("%cluster"));
    // Skipping keeps the module usable and says what was skipped.
    tally()
        .args(["ptx", "transform", "--skip-unsupported"])
        .arg(ptx_fixture("ptx/multi_entry.sm_90.ptx"))
        .arg("-o")
        .arg(&out)
        .assert()
        .success()
        .stderr(predicate::str::contains("skipped"));
    assert!(out.exists());
    tally()
        .args(["ptx", "check", "--arch", "sm_75"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("sm_90"));
}

#[test]
fn kernels_verify_without_a_driver_is_a_clear_error() {
    // This machine and CI have no NVIDIA driver: the GPU check must say so,
    // not panic inside cudarc. (On a GPU machine this test is not run:
    // scripts/gpu-check.sh runs the check itself.)
    if Path::new("/proc/driver/nvidia").exists() {
        return;
    }
    tally()
        .args(["kernels", "verify"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no NVIDIA driver found"))
        .stderr(predicate::str::contains("panicked").not());
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
fn run_compares_policies_and_writes_its_tables() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let assert = tally()
        .args([
            "run",
            "--hp",
            "bert-base:infer",
            "--be",
            "resnet50:train",
            "--compare",
            "mps,tally,tally-predict",
            "--predictor",
            "oracle",
            "--load",
            "0.5",
            "--duration",
            "300ms",
            "--format",
            "csv",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).expect("utf8");
    assert!(stdout.starts_with("policy,hp_p99_ms,p99_overhead_pct"));
    assert_eq!(stdout.lines().count(), 4, "{stdout}");
    let (header, rows) = read_csv(&out.join("summary.csv"));
    assert_eq!(header[0], "policy");
    assert_eq!(rows.len(), 3);
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    for row in &rows {
        let p99: f64 = row[col("hp_p99_ms")].parse().expect("p99");
        let alone: f64 = row[col("alone_p99_ms")].parse().expect("alone p99");
        assert!(
            p99 >= alone * 0.999,
            "co-location never beats alone: {p99} vs {alone}"
        );
    }
    let (_, requests) = read_csv(&out.join("requests.csv"));
    assert!(requests.iter().any(|r| &r[0] == "alone"));
    assert!(requests.iter().any(|r| &r[0] == "tally"));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).expect("run.json"))
            .expect("json");
    assert_eq!(meta["hp"], "bert-base:infer");
    // A second run into the same directory needs --force.
    tally()
        .args([
            "run",
            "--hp",
            "bert-base:infer",
            "--duration",
            "10ms",
            "--out",
        ])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--force"));
}

#[test]
fn run_rejects_bad_input_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let cases: [(&[&str], &str); 6] = [
        (
            &["--hp", "bert-base:infer", "--policy", "fifo"],
            "unknown policy `fifo`",
        ),
        (
            &["--hp", "bert-base:infer", "--policy", "tally-predict"],
            "needs --predictor",
        ),
        (&["--hp", "resnet50:train"], "--hp takes inference models"),
        (
            &["--hp", "bert-base:infer", "--duration", "soon"],
            "--duration `soon`",
        ),
        (
            &["--hp", "placeholder.csv", "--be", "resnet50:train"],
            "placeholder rows",
        ),
        (
            &["--hp", "bad-row.csv", "--be", "resnet50:train"],
            "bad-row.csv, line 3: field `SM_usage`",
        ),
    ];
    let header = "Name,Profile,Memory_footprint,SM_usage,Duration\n";
    std::fs::write(
        dir.path().join("placeholder.csv"),
        format!("{header}Conv,-1,1,1,7\nBatchNorm,-1,1,1,7\n"),
    )
    .expect("write");
    std::fs::write(
        dir.path().join("bad-row.csv"),
        format!("{header}Conv,1,0,80,101183\nBatchNorm,0,0,many,40096\n"),
    )
    .expect("write");
    for (args, message) in cases {
        tally()
            .current_dir(dir.path())
            .arg("run")
            .args(args)
            .arg("--out")
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
        assert!(!out.join("run.json").exists());
    }
}

/// A real kernel trace (the shipped ResNet-50 forward pass) as the HP job:
/// the run completes and HP alone takes the trace's measured time scaled
/// to the GPU it runs on (between a third of the V100 time and 1.2 times
/// it: the default GPU is faster, and small kernels do not speed up).
#[test]
fn run_replays_a_kernel_trace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let trace = repo().join("sched-runtime/tests/fixtures/traces/resnet50_4_fwd.csv");
    tally()
        .args(["run", "--hp"])
        .arg(&trace)
        .args([
            "--be",
            "resnet50:train",
            "--policy",
            "tally",
            "--duration",
            "300ms",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let summary = std::fs::read_to_string(out.join("summary.csv")).expect("summary");
    let mut lines = summary.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let row: Vec<&str> = lines.next().expect("row").split(',').collect();
    let col = |name: &str| -> f64 {
        let i = header.iter().position(|h| *h == name).expect(name);
        row[i].parse().expect("number")
    };
    // Closed loop: every request takes the standalone time alone.
    let alone_ms = col("alone_p50_ms");
    assert!(
        alone_ms > 6.498 / 3.0 && alone_ms < 6.498 * 1.2,
        "alone {alone_ms} ms"
    );
    assert!(col("p99_overhead_pct") < 15.0);
}

fn ncu_fixture(name: &str) -> PathBuf {
    repo().join("gpu/tests/fixtures/ncu").join(name)
}

#[test]
fn import_ncu_then_predict_on_the_imported_profiles() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (mlp, imported, model) = (
        tmp.path().join("mlp"),
        tmp.path().join("imported"),
        tmp.path().join("model.json"),
    );
    tally()
        .args(["import-ncu"])
        .arg(ncu_fixture("raw-wide-2024.csv"))
        .args(["--gpu", "h100-sxm", "--out"])
        .arg(&imported)
        .assert()
        .success()
        .stdout(predicate::str::contains("imported 6 launches of 2 kernels"));
    let ds = Dataset::read(&imported).expect("a valid dataset");
    assert_eq!(ds.info.backend, "ncu");
    assert_eq!(ds.info.sm_counts, vec![64, 132]);
    assert_eq!(ds.ops.len(), 2);
    assert_eq!(ds.standalone.rows.len(), 4);
    assert!(ds.pairs.is_empty());
    // Three launches of the GELU kernel on 132 SMs: the median is kept.
    let gelu = ds
        .ops
        .iter()
        .find(|o| o.kernel.name.contains("GeluCUDAKernelImpl"))
        .expect("gelu op");
    assert_eq!(gelu.launches, 3);
    let row = ds.standalone.get(&gelu.op_id, 132).expect("row");
    assert_eq!(row.duration_us, 21.344);
    assert_eq!(ds.standalone.counter(row, "launch__sm_count"), Some(132.0));

    // A predictor trained on simulated h100-sxm profiles predicts the
    // imported kernels' co-located latencies at the one split both have.
    profile_small("profiler/examples-models/tiny-mlp.toml", "30", &mlp);
    tally()
        .args(["train", "--gbm-trees", "20", "--data"])
        .arg(&mlp)
        .arg("--out")
        .arg(&model)
        .assert()
        .success();
    let mut out = tally();
    out.args(["predict", "--format", "csv", "--predictor"])
        .arg(&model)
        .arg("--data")
        .arg(&imported)
        .args(["--a", "sm90_xmma_gemm", "--b", "GeluCUDAKernelImpl"]);
    let text = stdout_of(&mut out);
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header = r.headers().expect("header").clone();
    let rows: Vec<csv::StringRecord> = r.records().map(|r| r.expect("row")).collect();
    assert_eq!(rows.len(), 1, "{text}");
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    assert_eq!(&rows[0][col("sm_a")], "64");
    assert_eq!(&rows[0][col("sm_b")], "64");
    assert_eq!(&rows[0][col("solo_a_us")], "78.016");
    let slowdown: f64 = rows[0][col("slowdown_a")].parse().expect("number");
    assert!(slowdown.is_finite() && slowdown >= 0.9, "{slowdown}");
}

#[test]
fn import_ncu_bad_input_names_file_and_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("r");
    tally()
        .args(["import-ncu"])
        .arg(ncu_fixture("malformed.csv"))
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("malformed.csv")
                .and(predicate::str::contains("line 9"))
                .and(predicate::str::contains("dram__bytes_read.sum"))
                .and(predicate::str::contains("panicked").not()),
        );
    assert!(!out.exists(), "nothing written");
    // A file without the metrics tally needs: which launch, which metrics.
    tally()
        .args(["import-ncu"])
        .arg(ncu_fixture("raw-wide-2021.csv"))
        .args(["--gpu", "a100-40gb", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("raw-wide-2021.csv` line 4").and(
            predicate::str::contains(
                "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
            ),
        ));
    // Profiled on compute capability 9.0, imported as an A100.
    tally()
        .args(["import-ncu"])
        .arg(ncu_fixture("raw-wide-2024.csv"))
        .args(["--gpu", "a100-40gb", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("compute capability 9.0"));
    assert!(!out.exists(), "nothing written");
}

/// `tally compare`: a dataset against itself matches every row exactly;
/// against a noisier run of the same campaign every row still matches and
/// the durations differ by about the noise; datasets with nothing in
/// common are an error.
#[test]
fn compare_matches_rows_of_two_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = |name: &str, model: &str, noise: &str| {
        let out = dir.path().join(name);
        tally()
            .args([
                "profile",
                "--model",
                model,
                "--gpu",
                "h200",
                "--sm-counts",
                "32,64",
            ])
            .args(["--pairs", "5", "--noise", noise, "-q", "--out"])
            .arg(&out)
            .assert()
            .success();
        out
    };
    let (a, b) = (run("a", "bert-base", "0"), run("b", "bert-base", "0.1"));
    let summary = |x: &Path, y: &Path| -> HashMap<String, String> {
        let out = tally()
            .args(["compare", "--show", "summary", "--format", "csv"])
            .arg(x)
            .arg(y)
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut r = csv::Reader::from_reader(out.stdout.as_slice());
        r.records()
            .map(|rec| {
                let rec = rec.expect("row");
                (rec[0].to_string(), rec[1].to_string())
            })
            .collect()
    };
    let same = summary(&a, &a);
    let rows: usize = same["standalone_rows"].parse().expect("count");
    let (_, standalone) = read_csv(&a.join("standalone.csv"));
    assert_eq!(rows, standalone.len());
    assert_eq!(same["standalone_median_ape_pct"], "0.00");
    assert_eq!(same["slowdown_mae"], "0.0000");
    assert_eq!(same["unmatched_rows"], "0 standalone, 0 pair");
    // The same seed samples the same pairs; noise of sigma 0.1 moves each
    // duration by a few percent, never by half.
    let noisy = summary(&a, &b);
    assert_eq!(noisy["standalone_rows"], same["standalone_rows"]);
    // 5 pairs x 3 splits x 2 sides.
    assert_eq!(noisy["pair_sides"], "30");
    let median: f64 = noisy["standalone_median_ape_pct"].parse().expect("number");
    assert!(median > 0.5 && median < 50.0, "{median}");
    // Row tables: one line per matched row.
    let out = tally()
        .args(["compare", "--show", "pairs", "--format", "csv"])
        .arg(&a)
        .arg(&b)
        .output()
        .expect("runs");
    let mut r = csv::Reader::from_reader(out.stdout.as_slice());
    assert_eq!(r.records().count(), 30);
    // A different model shares nothing.
    let other = run("c", "mobilenetv2", "0");
    tally()
        .arg("compare")
        .arg(&a)
        .arg(&other)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no standalone row or pair in common",
        ));
    tally()
        .arg("compare")
        .arg(&a)
        .arg(dir.path().join("missing"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing"));
}

/// `tally models M --stand-ins`: the library launch the CUDA backend runs
/// for each unique kernel, doing about the kernel's work.
#[test]
fn models_show_each_kernels_stand_in() {
    let out = tally()
        .args(["models", "bert-base", "--stand-ins", "--format", "csv"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut r = csv::Reader::from_reader(out.stdout.as_slice());
    let header = r.headers().expect("header").clone();
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.expect("row")).collect();
    // bert-base has 11 unique kernels (`tally models`).
    assert_eq!(rows.len(), 11);
    let entries = tally_gpu::library::kernels().expect("manifest");
    for row in &rows {
        let entry = &row[col("stand_in")];
        assert!(entries.iter().any(|k| k.entry == entry), "{entry}");
        let bytes: f64 = row[col("bytes_ratio")].parse().expect("a ratio");
        assert!((0.8..1.25).contains(&bytes), "{row:?}");
    }
    assert!(rows.iter().any(|r| &r[col("stand_in")] == "gemm_f16_mma"));
    tally()
        .args(["models", "--stand-ins"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--stand-ins"));
}
