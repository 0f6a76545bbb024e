//! `tally completions SHELL` and `tally man`: generated from the argument
//! definitions, so they name every subcommand and the flags it really has.

use std::process::Command as Process;

use tally_e2e::{stdout_of, tally};

#[test]
fn bash_completions_name_every_subcommand_and_are_valid_bash() {
    let script = stdout_of(tally().args(["completions", "bash"]));
    for sub in [
        "profile",
        "train",
        "predict",
        "run",
        "plot",
        "import-ncu",
        "completions",
        "man",
    ] {
        assert!(script.contains(sub), "no `{sub}` in the bash completions");
    }
    // A flag of a subcommand, not only the names.
    assert!(script.contains("--predictor"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tally.bash");
    std::fs::write(&file, &script).unwrap();
    let check = Process::new("bash").arg("-n").arg(&file).output().unwrap();
    assert!(
        check.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn zsh_and_fish_completions_are_written_for_their_shells() {
    let zsh = stdout_of(tally().args(["completions", "zsh"]));
    assert!(
        zsh.starts_with("#compdef tally"),
        "{}",
        &zsh[..zsh.len().min(80)]
    );
    let fish = stdout_of(tally().args(["completions", "fish"]));
    assert!(fish.contains("complete -c tally"));
    assert!(fish.contains("import-ncu"));
}

#[test]
fn an_unknown_shell_is_refused_with_the_ones_supported() {
    let out = tally().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bash") && err.contains("zsh") && err.contains("fish"),
        "{err}"
    );
}

#[test]
fn the_man_page_is_roff_with_every_subcommand() {
    let page = stdout_of(tally().arg("man"));
    assert!(
        page.contains(".TH tally 1"),
        "{}",
        &page[..page.len().min(200)]
    );
    for sub in ["profile", "run", "import\\-ncu", "completions"] {
        assert!(page.contains(sub), "no `{sub}` in the man page");
    }
}

#[test]
fn man_out_dir_writes_one_page_per_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man");
    let said = stdout_of(tally().arg("man").arg("--out-dir").arg(&out));
    assert!(said.contains("man pages"), "{said}");
    for page in [
        "tally.1",
        "tally-profile.1",
        "tally-run.1",
        "tally-ptx-transform.1",
    ] {
        let text =
            std::fs::read_to_string(out.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.contains(".TH"), "{page} is not roff");
    }
    // The hidden helper that ncu runs is no user command.
    assert!(!out.join("tally-ncu-target.1").exists());
}
