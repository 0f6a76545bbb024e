//! Degenerate runs and misused outputs, as a demanding user meets them: a
//! run in which no HP request completes is refused (exit 2, nothing
//! written) rather than reported as perfect; an output that would
//! overwrite one of the command's own inputs is refused before anything is
//! read or written; the same dataset given twice is refused.

use std::path::Path;

use tally_e2e::{fails_with, profile_small, stdout_of, tally};

fn run_args(out: &std::path::Path, extra: &[&str]) -> assert_cmd::Command {
    let mut cmd = tally();
    cmd.args(["run", "--hp", "bert-base:infer", "--be", "resnet50:train"])
        .args(["--gpu", "a100-40gb", "--compare", "mps,tally"])
        .args(extra)
        .arg("--out")
        .arg(out);
    cmd
}

#[test]
fn a_run_with_no_hp_completion_is_refused_not_perfect() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, extra) in [
        // Too short for the first arrival at this load.
        &["--load", "0.5", "--duration", "1ms"][..],
        // An HP launch cost no request survives.
        &[
            "--load",
            "0.5",
            "--duration",
            "100ms",
            "--hp-launch-us",
            "1e12",
        ][..],
        // A closed loop too short for one request.
        &["--duration", "1ms"][..],
    ]
    .iter()
    .enumerate()
    {
        let out = tmp.path().join(format!("z{i}"));
        fails_with(
            &mut run_args(&out, extra),
            &["--duration", "lengthen --duration"],
        );
        assert!(!out.exists(), "{extra:?}: nothing may be written");
    }
}

/// Every file of `dir` with its bytes, to show a refused command left it
/// as it was.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (p.display().to_string(), std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_dataset_twice_or_a_copy_is_refused_for_learning() {
    let tmp = tempfile::tempdir().unwrap();
    let r50 = tmp.path().join("R50");
    profile_small("resnet50", "30", &r50);
    let copy = tmp.path().join("R50b");
    std::fs::create_dir(&copy).unwrap();
    for (name, bytes) in snapshot(&r50) {
        let file = Path::new(&name).file_name().unwrap().to_owned();
        std::fs::write(copy.join(file), bytes).unwrap();
    }
    let model = tmp.path().join("m.json");
    let dotted = r50.join("..").join("R50");
    for (second, why) in [
        (&r50, "the same directory"),
        (&dotted, "the same directory"),
        (&copy, "a copy"),
    ] {
        for cmd in ["train", "eval"] {
            let mut c = tally();
            c.args([cmd, "--data"]).arg(&r50).arg("--data").arg(second);
            if cmd == "train" {
                c.arg("--out").arg(&model);
            }
            fails_with(&mut c, &[why, "give each dataset once"]);
        }
    }
    assert!(!model.exists());
}

#[test]
fn a_repeated_pair_row_is_refused_naming_both_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("R");
    profile_small("resnet50", "20", &dir);
    let pairs = dir.join("pairs.csv");
    let text = std::fs::read_to_string(&pairs).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // The second data row again, as written and with its sides swapped.
    let f: Vec<&str> = lines[2].split(',').collect();
    let swapped = [f[1], f[0], f[3], f[2], f[5], f[4], f[7], f[6], f[9], f[8]].join(",");
    for (extra, at) in [
        (lines[2].to_string(), "first at line 3"),
        (swapped, "first at line 3"),
    ] {
        std::fs::write(&pairs, format!("{text}{extra}\n")).unwrap();
        fails_with(
            tally().args(["summary", "--data"]).arg(&dir),
            &[
                "pairs.csv",
                &format!("line {}", lines.len() + 1),
                "measured again",
                at,
            ],
        );
    }
}

#[test]
fn an_output_over_an_input_dataset_is_refused_and_the_dataset_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("D");
    profile_small("resnet50", "20", &d);
    let before = snapshot(&d);
    let mut cases: Vec<assert_cmd::Command> = Vec::new();
    let mut train = tally();
    train
        .args(["train", "--data"])
        .arg(&d)
        .arg("--out")
        .arg(d.join("run.json"));
    cases.push(train);
    let mut export = tally();
    export
        .arg("export")
        .arg(&d)
        .args(["--to", "orion", "--out"])
        .arg(d.join("standalone.csv"));
    cases.push(export);
    let mut eval = tally();
    eval.args(["eval", "--data"]).arg(&d).arg("--out").arg(&d);
    cases.push(eval);
    for mut c in cases {
        fails_with(&mut c, &["one of its files, which this command reads"]);
    }
    assert_eq!(snapshot(&d), before, "the dataset is untouched");
    // Beside the dataset's files is fine: export's default orion.csv.
    stdout_of(tally().arg("export").arg(&d).args(["--to", "orion"]));
    assert!(d.join("orion.csv").is_file());
}

#[test]
fn a_second_writer_into_the_same_out_is_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("R");
    std::fs::create_dir(&out).unwrap();
    // Another writer holds the directory (as a concurrent profile would).
    let lock = std::fs::File::create(out.join(".tally.lock")).unwrap();
    lock.try_lock().unwrap();
    fails_with(
        tally()
            .args([
                "profile", "--model", "resnet50", "--pairs", "5", "--quiet", "--out",
            ])
            .arg(&out),
        &["another tally command is writing"],
    );
    assert!(!out.join("run.json").exists() && !out.join("pairs.csv").exists());
    drop(lock);
    stdout_of(
        tally()
            .args([
                "profile", "--model", "resnet50", "--pairs", "5", "--quiet", "--out",
            ])
            .arg(&out),
    );
    assert!(out.join("run.json").is_file());
}
