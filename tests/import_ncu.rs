//! `tally import-ncu`: Nsight Compute exports of every layout into a
//! dataset the predictor reads (or a subset predictor, `tally train
//! --counters-from`), `--print-metrics`, the GPU derived from the export,
//! and bad exports named by file, line and field.

use predicates::prelude::*;
use tally_datasets::Dataset;
use tally_e2e::{fails_with, ncu_fixture, profile_small, stdout_of, tally};

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
    // Profiled on compute capability 9.0, imported as an A100.
    fails_with(
        tally()
            .args(["import-ncu"])
            .arg(ncu_fixture("raw-wide-2024.csv"))
            .args(["--gpu", "a100-40gb", "--out"])
            .arg(&out),
        &["compute capability 9.0"],
    );
    assert!(!out.exists(), "nothing written");
}

/// A spec file for a GPU no preset covers: the h100-sxm preset with the
/// given name, compute capability and SM count.
fn spec_file(dir: &std::path::Path, name: &str, cc: &str, sms: u32) -> std::path::PathBuf {
    let mut spec = tally_gpu::GpuSpec::preset("h100-sxm").expect("preset");
    spec.name = name.to_string();
    spec.compute_capability = cc.to_string();
    spec.sm_count = sms;
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, toml::to_string(&spec).expect("toml")).expect("write spec");
    path
}

/// Every layout's fixture imports, into exactly the counters it carries,
/// with `run.json` saying where each came from.
#[test]
fn every_layout_imports() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let b200 = spec_file(tmp.path(), "b200", "10.0", 148);
    let rtx = spec_file(tmp.path(), "rtx5090", "12.0", 170);
    let cases: [(&str, Option<&std::path::Path>, Option<&str>, usize); 6] = [
        ("details-full-2025.csv", None, None, 3),
        ("details-long-2024.csv", None, Some("h100-sxm"), 2),
        ("details-v100-2020.csv", None, Some("v100"), 2),
        ("details-b200-2025.csv", Some(&b200), None, 1),
        ("raw-rtx5090-2025.csv", Some(&rtx), None, 1),
        ("raw-wide-2021.csv", None, Some("a100-40gb"), 2),
    ];
    for (i, (fixture, spec, preset, kernels)) in cases.into_iter().enumerate() {
        let out = tmp.path().join(format!("ds{i}"));
        let mut cmd = tally();
        cmd.arg("import-ncu")
            .arg(ncu_fixture(fixture))
            .arg("--out")
            .arg(&out);
        if let Some(s) = spec {
            cmd.arg("--gpu").arg(s);
        }
        if let Some(p) = preset {
            cmd.args(["--gpu", p]);
        }
        let text = stdout_of(&mut cmd);
        assert!(text.contains("imported"), "{fixture}: {text}");
        let ds = Dataset::read(&out).unwrap_or_else(|e| panic!("{fixture}: {e}"));
        assert_eq!(ds.ops.len(), kernels, "{fixture}");
        assert!(ds.pairs.is_empty());
        // Every column is a counter of the file; run.json says from what.
        let mapped = &ds.info.params["counters"]["mapped_from"];
        for name in &ds.standalone.counter_names {
            assert!(
                mapped.get(name).is_some(),
                "{fixture}: {name} has no source"
            );
        }
        assert_eq!(
            ds.standalone.counter_names[0], "gpu__time_duration.sum",
            "{fixture}"
        );
    }
    // The 2020 export: the old labels, durations in nsecond, no SM count
    // (the whole V100), the repeated kernel's median.
    let v100 = Dataset::read(tmp.path().join("ds2")).expect("v100");
    assert_eq!(v100.info.sm_counts, vec![80]);
    assert!(!v100
        .standalone
        .counter_names
        .iter()
        .any(|n| n == "launch__sm_count"));
    let step = v100
        .ops
        .iter()
        .find(|o| o.kernel.name.starts_with("cuda_compute_step_factor"))
        .expect("op");
    assert_eq!(step.launches, 2);
    let row = v100.standalone.get(&step.op_id, 80).expect("row");
    assert!((row.duration_us - (8.992 + 9.152) / 2.0).abs() < 1e-9);
    assert_eq!(
        v100.info.params["counters"]["mapped_from"]
            ["sm__throughput.avg.pct_of_peak_sustained_elapsed"][0],
        "SM [%]"
    );
    // The --set full run: the GPU derived from the file.
    let full = Dataset::read(tmp.path().join("ds0")).expect("full");
    assert_eq!(
        full.info.gpu,
        tally_gpu::GpuSpec::preset("h100-sxm").expect("preset")
    );
    assert_eq!(full.info.params["gpu"]["preset"], "h100-sxm");
    assert_eq!(full.info.params["gpu"]["derived_from_export"], true);
    // The RTX export: sm__throughput n/a in one launch, measured in the
    // other: present, from the launch that has it.
    let rtx_ds = Dataset::read(tmp.path().join("ds4")).expect("rtx");
    let r = &rtx_ds.standalone.rows[0];
    assert_eq!(
        rtx_ds
            .standalone
            .counter(r, "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        Some(12.04)
    );
    assert!((r.duration_us - (9.89 + 9.93) / 2.0).abs() < 1e-9);
}

/// Without --gpu the spec comes from the export, or the error says what
/// the export lacks and how to give a spec.
#[test]
fn a_gpu_the_export_cannot_name_is_a_clear_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("r");
    fails_with(
        tally()
            .arg("import-ncu")
            .arg(ncu_fixture("details-v100-2020.csv"))
            .arg("--out")
            .arg(&out),
        &[
            "details-v100-2020.csv",
            "no compute capability",
            "--gpu my-gpu.toml",
        ],
    );
    fails_with(
        tally()
            .arg("import-ncu")
            .arg(ncu_fixture("details-b200-2025.csv"))
            .arg("--out")
            .arg(&out),
        &["compute capability 10.0", "no preset", "tally gpus --spec"],
    );
    assert!(!out.exists(), "nothing written");
}

/// Malformed and failed exports: exit 2, the file, the line, the field;
/// nothing written.
#[test]
fn malformed_exports_name_file_line_and_field() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("r");
    let cases: [(&str, &[&str]); 6] = [
        (
            "malformed-unit.csv",
            &["malformed-unit.csv` line 3", "`Duration (unit)`", "byte"],
        ),
        (
            "malformed-kernel.csv",
            &[
                "malformed-kernel.csv` line 3",
                "`Kernel Name`",
                "other_kernel",
            ],
        ),
        (
            "malformed-grid.csv",
            &["malformed-grid.csv` line 3", "`Grid Size`"],
        ),
        (
            "malformed-extra.csv",
            &["malformed-extra.csv` line 3", "`stray`"],
        ),
        (
            "no-duration.csv",
            &[
                "no-duration.csv` line 2",
                "`gpu__time_duration.sum`",
                "--metrics gpu__time_duration.sum",
            ],
        ),
        (
            "error-only.csv",
            &["error-only.csv", "==ERROR== ERR_NVGPUCTRPERM"],
        ),
    ];
    for (fixture, needles) in cases {
        fails_with(
            tally()
                .arg("import-ncu")
                .arg(ncu_fixture(fixture))
                .args(["--gpu", "h100-sxm", "--out"])
                .arg(&out),
            needles,
        );
        assert!(!out.exists(), "{fixture}: nothing written");
    }
}

#[test]
fn print_metrics_lists_what_each_kernel_lacks_and_how_to_collect_it() {
    let text = stdout_of(
        tally()
            .arg("import-ncu")
            .arg(ncu_fixture("details-full-2025.csv"))
            .arg("--print-metrics"),
    );
    assert!(text.contains("4 launches of 3 kernels"), "{text}");
    let gemm = text
        .lines()
        .find(|l| l.starts_with("sm90_xmma_gemm"))
        .expect("gemm line");
    assert!(
        gemm.contains(" 2 ") && gemm.contains("6/13") && gemm.contains("7 (set a)"),
        "{gemm}"
    );
    let set: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "set a:")
        .skip(1)
        .take_while(|l| l.starts_with("  ") && !l.trim_start().starts_with("ncu"))
        .map(str::trim)
        .collect();
    assert_eq!(set.len(), 7, "{text}");
    assert!(set.contains(&"dram__bytes_read.sum"), "{set:?}");
    assert!(
        !set.iter().any(|c| c.starts_with("sm__throughput")),
        "{set:?}"
    );
    let cmd = text
        .lines()
        .find(|l| l.trim_start().starts_with("ncu "))
        .expect("command line");
    assert!(
        cmd.contains("--csv --page raw --print-units base --metrics ")
            && cmd.contains("dram__throughput.avg.pct_of_peak_sustained_elapsed")
            && !cmd.contains("gpu__time_duration.sum"),
        "{cmd}"
    );
    // Without a file: the metric list for --metrics.
    let list = stdout_of(tally().args(["import-ncu", "--print-metrics"]));
    assert_eq!(list.trim().split(',').count(), 33);
}

/// An import with a subset of the counters: a predictor on every counter
/// refuses it, naming what is missing and the ncu flags; one trained with
/// --counters-from predicts on it.
#[test]
fn predict_on_a_subset_refuses_or_uses_a_subset_predictor() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (mlp, imported) = (tmp.path().join("mlp"), tmp.path().join("subset"));
    let (full, subset) = (tmp.path().join("full.json"), tmp.path().join("subset.json"));
    stdout_of(
        tally()
            .arg("import-ncu")
            .arg(ncu_fixture("raw-subset-2024.csv"))
            .args(["--out"])
            .arg(&imported),
    );
    profile_small("profiler/examples-models/tiny-mlp.toml", "30", &mlp);
    for (out, extra) in [(&full, None), (&subset, Some(&imported))] {
        let mut cmd = tally();
        cmd.args(["train", "--gbm-trees", "20", "--data"])
            .arg(&mlp)
            .arg("--out")
            .arg(out);
        if let Some(dir) = extra {
            cmd.arg("--counters-from").arg(dir);
        }
        let text = stdout_of(&mut cmd);
        if extra.is_some() {
            assert!(text.contains("counters from"), "{text}");
        }
    }
    let predict = |model: &std::path::Path| {
        let mut cmd = tally();
        cmd.args(["predict", "--format", "csv", "--predictor"])
            .arg(model)
            .arg("--data")
            .arg(&imported)
            .args(["--a", "sm90_xmma_gemm", "--b", "GeluCUDAKernelImpl"]);
        cmd
    };
    fails_with(
        &mut predict(&full),
        &[
            "lacks counters the predictor reads",
            "sm__inst_issued.avg.pct_of_peak_sustained_active",
            "--metrics ",
            "--counters-from",
        ],
    );
    let text = stdout_of(&mut predict(&subset));
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header = r.headers().expect("header").clone();
    let rows: Vec<csv::StringRecord> = r.records().map(|r| r.expect("row")).collect();
    assert_eq!(rows.len(), 1, "{text}");
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let slowdown: f64 = rows[0][col("slowdown_a")].parse().expect("number");
    assert!(slowdown.is_finite() && slowdown >= 1.0, "{slowdown}");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&subset).expect("read")).expect("json");
    let counters: Vec<&str> = file["counters"]
        .as_array()
        .expect("list")
        .iter()
        .map(|v| v.as_str().expect("name"))
        .collect();
    assert_eq!(
        counters,
        [
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "lts__t_sector_hit_rate.pct",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__bytes_read.sum",
            "dram__bytes_write.sum"
        ]
    );
}
