//! `tally compare`: two runs matched row by row.

use std::collections::HashMap;
use std::path::Path;

use predicates::prelude::*;
use tally_e2e::{fails_with, read_csv, stdout_of, tally};

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
        let out = stdout_of(
            tally()
                .args(["compare", "--show", "summary", "--format", "csv"])
                .arg(x)
                .arg(y),
        );
        let mut r = csv::Reader::from_reader(out.as_bytes());
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
    let out = stdout_of(
        tally()
            .args(["compare", "--show", "pairs", "--format", "csv"])
            .arg(&a)
            .arg(&b),
    );
    let mut r = csv::Reader::from_reader(out.as_bytes());
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
    fails_with(
        tally()
            .arg("compare")
            .arg(&a)
            .arg(dir.path().join("missing")),
        &["missing"],
    );
}
