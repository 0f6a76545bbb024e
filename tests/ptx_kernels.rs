//! `tally ptx` and `tally kernels`: transformed variants assembled, PTX
//! errors by file, line and construct, the GPU check without a driver.

use std::path::Path;

use predicates::prelude::*;
use tally_e2e::{fails_with, ptx_fixture, tally};

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
fn a_stale_tools_variable_from_a_carried_env_sh_still_finds_the_tools() {
    // env.sh holds absolute paths: carried to another checkout or machine,
    // they name nothing, and the tools installed here are used instead.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("copy.tally.ptx");
    tally()
        .args(["ptx", "transform"])
        .arg(ptx_fixture("ptx/copy.sm_90.ptx"))
        .args(["--variant", "ptb", "-o"])
        .arg(&out)
        .assert()
        .success();
    tally()
        .env(
            "TALLY_PTXAS",
            "/elsewhere/target/cuda-tools/py/nvidia/cu13/bin/ptxas",
        )
        .args(["ptx", "check"])
        .arg(&out)
        .args(["--arch", "sm_90"])
        .assert()
        .success();
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
    fails_with(
        tally()
            .args(["ptx", "transform"])
            .arg(&bad)
            .arg("-o")
            .arg(&out),
        &["bad.ptx", "7:1"],
    );
    assert!(!out.exists(), "no output on failure");
    fails_with(
        tally()
            .args(["ptx", "transform"])
            .arg(ptx_fixture("ptx/unsupported_cluster.sm_90.ptx"))
            .arg("-o")
            .arg(&out),
        &["%cluster"],
    );
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
    fails_with(
        tally().args(["ptx", "check", "--arch", "sm_75"]).arg(&out),
        &["sm_90"],
    );
}

#[test]
fn kernels_verify_without_a_driver_is_a_clear_error() {
    // This machine and CI have no NVIDIA driver: the GPU check must say so,
    // not panic inside cudarc. (On a GPU machine this test is not run:
    // scripts/gpu-check.sh runs the check itself.)
    if Path::new("/proc/driver/nvidia").exists() {
        return;
    }
    for args in [
        &["kernels", "verify"][..],
        &["kernels", "verify", "--under-profiler"],
    ] {
        tally()
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("no NVIDIA driver found"))
            .stderr(predicate::str::contains("panicked").not());
    }
}
