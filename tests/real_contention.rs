//! `tally real-contention` end to end on the repository's real sets: one
//! row per measurement with the simulator's figure, each set scored, the
//! launch-bound regime of the host side, and bad input refused with its
//! file and line.

use std::path::Path;

use tally_e2e::{fails_with, read_csv, repo, stdout_of, tally};

/// Run the given sets into `out`; the rows of real_contention.csv as
/// (set, case, real, simulated).
fn run(out: &Path, sets: &[&str], extra: &[&str]) -> Vec<(String, String, f64, Option<f64>)> {
    let mut cmd = tally();
    cmd.arg("real-contention").arg("--out").arg(out).args(extra);
    for s in sets {
        cmd.args(["--set", s]);
    }
    stdout_of(&mut cmd);
    let (header, rows) = read_csv(&out.join("real_contention.csv"));
    assert_eq!(header, ["set", "case", "real", "simulated", "predicted"]);
    rows.iter()
        .map(|r| {
            (
                r[0].to_string(),
                r[1].to_string(),
                r[2].parse().expect("real"),
                (!r[3].is_empty()).then(|| r[3].parse().expect("simulated")),
            )
        })
        .collect()
}

#[test]
fn every_measurement_of_a_set_gets_a_row_and_the_sets_are_scored() {
    let dir = tempfile::tempdir().unwrap();
    let rows = run(
        dir.path(),
        &["gpulet-solo-absolute", "v100-bandwidth", "v100-l2"],
        &[],
    );
    let count = |set: &str| rows.iter().filter(|r| r.0 == set).count();
    // inference.csv: 10 models x 7 batches at p = 100; the bandwidth log:
    // 4 block counts alone and paired; the L2 sweep: 6 sizes x 2.
    assert_eq!(count("gpulet-solo-absolute"), 70);
    assert_eq!(count("v100-bandwidth"), 8);
    assert_eq!(count("v100-l2"), 12);
    assert!(rows
        .iter()
        .all(|r| r.2 > 0.0 && r.3.is_some_and(|s| s > 0.0)));
    let (header, summary) = read_csv(&dir.path().join("summary.csv"));
    assert_eq!(header[0], "set");
    let sets: Vec<&str> = summary.iter().map(|r| &r[0]).collect();
    assert_eq!(sets, ["gpulet-solo-absolute", "v100-bandwidth", "v100-l2"]);
    // A set's best constant is scored on the same rows.
    let constant = header
        .iter()
        .position(|h| h == "constant_mape_pct")
        .unwrap();
    assert!(summary
        .iter()
        .all(|r| r[constant].parse::<f64>().unwrap() > 0.0));
}

#[test]
fn an_eager_host_makes_small_batches_launch_bound() {
    let solo = |framework: &str| {
        let dir = tempfile::tempdir().unwrap();
        run(
            dir.path(),
            &["gpulet-solo-absolute"],
            &["--framework", framework],
        )
        .into_iter()
        .filter(|r| r.1.starts_with("resnet50@"))
        .map(|r| (r.1, r.3.unwrap()))
        .collect::<Vec<_>>()
    };
    let eager = solo("eager");
    let ahead = solo("host-ahead");
    let at = |rows: &[(String, f64)], batch: u32| {
        rows.iter()
            .find(|r| r.0.starts_with(&format!("resnet50@{batch} ")))
            .unwrap()
            .1
    };
    // Eager: batch 1 to 4 cost the host's launches, not the GPU's work.
    let flat = at(&eager, 4) / at(&eager, 1);
    assert!((0.97..1.03).contains(&flat), "batch 4 / batch 1 = {flat}");
    assert!(at(&eager, 1) > 2.0 * at(&ahead, 1), "{eager:?} {ahead:?}");
    // With the host ahead, latency follows the GPU's work.
    assert!(at(&ahead, 4) > 1.2 * at(&ahead, 1), "{ahead:?}");
    // At batch 64 the GPU's work dominates either way.
    let big = at(&eager, 64) / at(&ahead, 64);
    assert!((1.0..1.1).contains(&big), "batch 64 eager / ahead = {big}");
}

/// A copy of the real-contention folder with `file` replaced by `text`.
fn broken_copy(file: &str, text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = repo().join("data/real-contention");
    for entry in walk(&src) {
        let rel = entry.strip_prefix(&src).unwrap();
        let dst = dir.path().join(rel);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &dst).unwrap();
    }
    std::fs::write(dir.path().join(file), text).unwrap();
    dir
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn bad_input_is_refused_with_its_file_line_and_field() {
    let data = broken_copy(
        "Gpulet/inference.csv",
        "resnet50,1,100,throughput,210,latency,0.0047,1\nresnet50,1,100,throughput,210,latency,soon,1\n",
    );
    let out = tempfile::tempdir().unwrap();
    fails_with(
        tally()
            .arg("real-contention")
            .arg("--data")
            .arg(data.path())
            .arg("--out")
            .arg(out.path())
            .args(["--set", "gpulet-solo-absolute"]),
        &["inference.csv:2", "field 7 (latency)", "`soon`"],
    );
    assert!(
        !out.path().join("real_contention.csv").exists(),
        "nothing is written when the input is bad"
    );
    fails_with(
        tally()
            .arg("real-contention")
            .arg("--out")
            .arg(out.path())
            .args(["--set", "gpulet"]),
        &["--set `gpulet`", "gpulet-pairs"],
    );
    fails_with(
        tally()
            .arg("real-contention")
            .arg("--data")
            .arg(out.path())
            .arg("--out")
            .arg(out.path()),
        &["not the real-contention folder"],
    );
}

#[test]
fn an_existing_result_is_kept_without_force() {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path(), &["v100-l2"], &[]);
    fails_with(
        tally()
            .arg("real-contention")
            .arg("--out")
            .arg(dir.path())
            .args(["--set", "v100-l2"]),
        &["already holds a result", "--force"],
    );
    run(dir.path(), &["v100-l2"], &["--force"]);
}
