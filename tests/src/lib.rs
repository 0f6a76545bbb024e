//! Shared support for the end-to-end tests (one file per command beside
//! this crate): finding and running the `tally` binary on the repository,
//! reading its CSV output, and the one check every bad input gets: exit 2,
//! the message names what is wrong, never a panic.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The repository root (this crate lives in `tests/`).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

/// The `tally` binary of the profile these tests were built in: cargo does
/// not build another package's binary for `cargo test`, so scripts/test.sh
/// builds it first.
pub fn tally_binary() -> PathBuf {
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

pub fn tally() -> Command {
    let mut cmd = Command::new(tally_binary());
    cmd.current_dir(repo())
        .env_remove("TALLY_GPU")
        .env_remove("TALLY_BACKEND");
    cmd
}

pub fn read_csv(path: &Path) -> (Vec<String>, Vec<csv::StringRecord>) {
    parse_csv(std::fs::File::open(path).expect("csv file"))
}

/// Header and records of CSV text.
pub fn parse_csv(text: impl std::io::Read) -> (Vec<String>, Vec<csv::StringRecord>) {
    let mut r = csv::Reader::from_reader(text);
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
pub fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Profile `model` on h100-sxm with `pairs` sampled pairs into `dir`.
pub fn profile_small(model: &str, pairs: &str, dir: &Path) {
    profile_into(dir, &["--model", model, "--pairs", pairs]);
}

/// `tally profile ARGS --out OUT`, to run.
pub fn profile_cmd(out: &Path, args: &[&str]) -> Command {
    let mut cmd = tally();
    cmd.arg("profile").args(args).arg("--out").arg(out);
    cmd
}

/// Run `tally profile ARGS --quiet --out OUT`, require success, return its
/// stdout.
pub fn profile_into(out: &Path, args: &[&str]) -> String {
    stdout_of(
        tally()
            .arg("profile")
            .args(args)
            .args(["--quiet", "--out"])
            .arg(out),
    )
}

/// A fixture of the PTX transformer's tests.
pub fn ptx_fixture(name: &str) -> PathBuf {
    repo().join("kernels/tests/fixtures").join(name)
}

pub fn ncu_fixture(name: &str) -> PathBuf {
    repo().join("gpu/tests/fixtures/ncu").join(name)
}

/// Run `cmd` and require the exit code of bad input (2), a message on
/// stderr holding every one of `needles`, and no panic; returns stderr.
pub fn fails_with(cmd: &mut Command, needles: &[&str]) -> String {
    let out = cmd.output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(2),
        "expected exit 2; stderr: {stderr}"
    );
    for n in needles {
        assert!(stderr.contains(n), "stderr lacks `{n}`: {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}
