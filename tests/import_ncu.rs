//! `tally import-ncu`: Nsight Compute CSV into a dataset the predictor
//! reads, and bad exports named by file and line.

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
