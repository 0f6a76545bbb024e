//! Bad input to the dataset readers: malformed model and GPU files and
//! corrupted datasets are named by file, line and field, exit 2.

use predicates::prelude::*;
use tally_e2e::{fails_with, profile_cmd, profile_into, tally};

#[test]
fn malformed_inputs_name_file_line_and_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("bad.toml");
    std::fs::write(
        &model,
        "name = \"bad\"\n\n[[operators]]\nname = \"fc\"\nop = \"gemm\"\nm = 64\nn = \"wide\"\nk = 64\n",
    )
    .expect("write");
    fails_with(
        tally()
            .args(["profile", "--model"])
            .arg(&model)
            .args(["--out"])
            .arg(dir.path().join("r")),
        &["bad.toml:7", "`n`"],
    );

    let gpu = dir.path().join("gpu.toml");
    std::fs::write(&gpu, "name = \"x\"\nsm_count = 0\n").expect("write");
    fails_with(
        tally()
            .args(["profile", "--model", "bert-base", "--gpu"])
            .arg(&gpu)
            .args(["--out"])
            .arg(dir.path().join("r")),
        &["gpu.toml"],
    );

    fails_with(
        &mut profile_cmd(
            &dir.path().join("r"),
            &["--model", "bert-base", "--sm-counts", "12"],
        ),
        &["not a partition size"],
    );

    fails_with(
        tally()
            .args(["profile", "--model", "resnet50", "--seq", "128", "--out"])
            .arg(dir.path().join("r")),
        &["seq"],
    );
    assert!(!dir.path().join("r").exists(), "failed runs write nothing");
}

#[test]
fn corrupted_dataset_is_reported_with_file_line_and_column() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("r");
    profile_into(&out, &["--model", "bert-base", "--pairs", "5"]);
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
