//! `tally predict --task A --task B`: each task's latency alone and beside
//! the other, on zoo models and model files, from standalone profiles
//! measured on the fly or read from datasets; every bad input exits 2.

use std::path::{Path, PathBuf};

use tally_e2e::{fails_with, parse_csv, profile_small, stdout_of, tally};

const MLP: &str = "profiler/examples-models/tiny-mlp.toml";

/// A predictor trained on small tiny-mlp and bert-base datasets
/// (h100-sxm), and the datasets.
struct Trained {
    _tmp: tempfile::TempDir,
    model: PathBuf,
    mlp: PathBuf,
    bert: PathBuf,
}

fn trained() -> Trained {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (mlp, bert) = (tmp.path().join("mlp"), tmp.path().join("bert"));
    profile_small(MLP, "30", &mlp);
    profile_small("bert-base", "40", &bert);
    let model = tmp.path().join("model.json");
    stdout_of(
        tally()
            .args(["train", "--gbm-trees", "60", "--data"])
            .args([&mlp, &bert])
            .arg("--out")
            .arg(&model),
    );
    Trained {
        _tmp: tmp,
        model,
        mlp,
        bert,
    }
}

fn predict(model: &Path) -> assert_cmd::Command {
    let mut cmd = tally();
    cmd.args(["predict", "--predictor"]).arg(model);
    cmd
}

/// Run `cmd` (with `--format csv`), require success, parse its stdout.
fn csv_of(cmd: &mut assert_cmd::Command) -> (Vec<String>, Vec<csv::StringRecord>) {
    parse_csv(stdout_of(cmd).as_bytes())
}

fn num(row: &csv::StringRecord, header: &[String], column: &str) -> f64 {
    let i = header
        .iter()
        .position(|h| h == column)
        .unwrap_or_else(|| panic!("no column {column} in {header:?}"));
    row[i]
        .parse()
        .unwrap_or_else(|_| panic!("{column}: `{}`", &row[i]))
}

fn text<'a>(row: &'a csv::StringRecord, header: &[String], column: &str) -> &'a str {
    let i = header
        .iter()
        .position(|h| h == column)
        .unwrap_or_else(|| panic!("no column {column} in {header:?}"));
    &row[i]
}

#[test]
fn task_latencies_on_every_split_as_table_csv_and_json() {
    let t = trained();

    // Every split the GPU allows, profiled on the fly; the best one marked.
    let (header, rows) = csv_of(
        predict(&t.model)
            .args(["--task", MLP, "--task", "bert-base:infer", "--best"])
            .args(["--format", "csv"]),
    );
    for c in [
        "task",
        "partner",
        "sm_count",
        "solo_ms",
        "colocated_ms",
        "slowdown",
        "best",
    ] {
        assert!(header.iter().any(|h| h == c), "{c} missing from {header:?}");
    }
    assert!(
        rows.len() >= 6 && rows.len() % 2 == 0,
        "{} rows",
        rows.len()
    );
    let mut splits = Vec::new();
    for r in &rows {
        let (sms, other) = (
            num(r, &header, "sm_count"),
            num(r, &header, "partner_sm_count"),
        );
        assert!(sms + other <= 132.0, "{sms}+{other} SMs on an H100");
        let (solo, co, s) = (
            num(r, &header, "solo_ms"),
            num(r, &header, "colocated_ms"),
            num(r, &header, "slowdown"),
        );
        assert!(solo > 0.0 && co >= solo * 0.999, "{r:?}");
        assert!((s - co / solo).abs() < 2e-3 * s, "{r:?}");
        if text(r, &header, "task") != "bert-base:infer" {
            splits.push(sms as u32);
        }
    }
    splits.dedup();
    assert_eq!(splits.len() * 2, rows.len(), "one row per task and split");
    let best: Vec<_> = rows
        .iter()
        .filter(|r| text(r, &header, "best") == "*")
        .collect();
    assert_eq!(best.len(), 2, "the best split marks both of its rows");
    let worst = |sm_mlp: f64| {
        rows.iter()
            .filter(|r| {
                let mine = text(r, &header, "task") == "tiny-mlp";
                let sms = num(
                    r,
                    &header,
                    if mine { "sm_count" } else { "partner_sm_count" },
                );
                sms == sm_mlp
            })
            .map(|r| num(r, &header, "slowdown"))
            .fold(0.0, f64::max)
    };
    let best_sm = if text(best[0], &header, "task") == "tiny-mlp" {
        num(best[0], &header, "sm_count")
    } else {
        num(best[0], &header, "partner_sm_count")
    };
    for &s in &splits {
        assert!(
            worst(best_sm) <= worst(f64::from(s)) + 1e-3,
            "best {best_sm} vs {s}"
        );
    }

    // One split, as JSON and as a table; the same numbers.
    let json = stdout_of(
        predict(&t.model)
            .args(["--task", MLP, "--task", "bert-base:infer", "--sm", "64,64"])
            .args(["--format", "json"]),
    );
    let v: Vec<serde_json::Value> = serde_json::from_str(&json).expect("json");
    assert_eq!(v.len(), 2);
    assert_eq!(v[0]["task"], "tiny-mlp");
    assert_eq!(v[1]["task"], "bert-base:infer");
    assert_eq!(v[0]["sm_count"], 64);
    let table = stdout_of(predict(&t.model).args([
        "--task",
        MLP,
        "--task",
        "bert-base:infer",
        "--sm",
        "64,64",
    ]));
    assert!(
        table.contains("colocated_ms") && table.contains("tiny-mlp"),
        "{table}"
    );
    let co = format!("{:.4}", v[0]["colocated_ms"].as_f64().expect("number"));
    assert!(table.contains(&co), "{table} lacks {co}");
}

#[test]
fn datasets_baselines_and_the_users_measurements() {
    let t = trained();
    let dir = tempfile::tempdir().expect("tempdir");

    // From the profiled datasets, beside the baselines and the oracle.
    let (header, rows) = csv_of(
        predict(&t.model)
            .args(["--task", MLP, "--task", "bert-base:infer", "--data"])
            .arg(&t.mlp)
            .arg("--data")
            .arg(&t.bert)
            .args(["--sm", "64,64", "--versus-sim", "--format", "csv"])
            .args(["--methods", "predictor,scaling,intensity-rule,oracle"]),
    );
    assert_eq!(rows.len(), 8, "2 tasks x 4 methods");
    for r in &rows {
        let e = num(r, &header, "error_pct");
        match text(r, &header, "method") {
            // The oracle is the reference itself.
            "oracle" => assert!(e < 1e-6, "{r:?}"),
            "scaling" => assert!((num(r, &header, "slowdown") - 1.0).abs() < 1e-3, "{r:?}"),
            _ => assert!(e.is_finite()),
        }
    }

    // The user measured tiny-mlp at 64 SMs beside BERT at twice the
    // predicted latency: its rows are corrected towards that, BERT's not.
    let predicted = rows
        .iter()
        .find(|r| {
            text(r, &header, "method") == "predictor" && text(r, &header, "task") == "tiny-mlp"
        })
        .map(|r| num(r, &header, "colocated_ms"))
        .expect("tiny-mlp row");
    let measured = dir.path().join("measured.csv");
    std::fs::write(
        &measured,
        format!(
            "task,partner,sm_count,colocated_ms\ntiny-mlp,bert-base:infer,64,{}\n",
            2.0 * predicted
        ),
    )
    .expect("write");
    let (header, rows) = csv_of(
        predict(&t.model)
            .args(["--task", MLP, "--task", "bert-base:infer", "--data"])
            .arg(&t.mlp)
            .arg("--data")
            .arg(&t.bert)
            .args(["--sm", "64,64", "--format", "csv", "--measured"])
            .arg(&measured),
    );
    let mlp = rows
        .iter()
        .find(|r| text(r, &header, "task") == "tiny-mlp")
        .expect("row");
    let bert = rows
        .iter()
        .find(|r| text(r, &header, "task") != "tiny-mlp")
        .expect("row");
    assert_eq!(text(mlp, &header, "corrected"), "yes");
    assert_eq!(text(bert, &header, "corrected"), "no");
    let fixed = num(mlp, &header, "colocated_ms");
    assert!(
        fixed > 1.5 * predicted && fixed <= 2.0 * predicted * 1.001,
        "{predicted} -> {fixed}"
    );
}

#[test]
fn bad_inputs_exit_2_naming_them() {
    let t = trained();
    let dir = tempfile::tempdir().expect("tempdir");
    let pair = ["--task", MLP, "--task", "bert-base:infer"];

    fails_with(
        predict(&t.model).args(["--task", MLP, "--task", "no-such-model"]),
        &["no-such-model"],
    );
    fails_with(
        predict(&t.model).args(pair).args(["--sm", "96,96"]),
        &["--sm 96,96"],
    );
    fails_with(predict(&t.model).args(pair).args(["--sm", "66"]), &["66"]);
    fails_with(
        predict(&t.model).args(pair).args(["--gpu", "a100-40gb"]),
        &["a100-40gb", "h100-sxm"],
    );
    // BERT's kernels are not in the tiny-mlp dataset.
    fails_with(
        predict(&t.model)
            .args(pair)
            .arg("--data")
            .arg(&t.mlp)
            .args(["--sm", "64,64"]),
        &["bert-base:infer", "no standalone profile", "64 SMs"],
    );
    let measured = dir.path().join("measured.csv");
    std::fs::write(
        &measured,
        "task,partner,sm_count,colocated_ms\ntiny-mlp,bert-base:infer,sixty,1.0\n",
    )
    .expect("write");
    fails_with(
        predict(&t.model)
            .args(pair)
            .args(["--sm", "64,64", "--measured"])
            .arg(&measured),
        &["measured.csv:2", "sm_count"],
    );
    std::fs::write(
        &measured,
        "task,partner,sm_count,colocated_ms\nresnet50,bert-base:infer,64,1.0\n",
    )
    .expect("write");
    fails_with(
        predict(&t.model)
            .args(pair)
            .args(["--sm", "64,64", "--measured"])
            .arg(&measured),
        &["measured.csv:2", "resnet50"],
    );
}

/// `--sharing`: MPS shares that fit the GPU together land on disjoint SMs
/// (the green-context figures), shares that overlap are allowed under MPS
/// only and slow both tasks more, full sharing is one whole-GPU split.
#[test]
fn sharing_places_the_tasks_as_each_mechanism_does() {
    let t = trained();
    let rows_for = |extra: &[&str]| {
        csv_of(
            predict(&t.model)
                .args(["--task", "bert-base:infer", "--task", "bert-base:train"])
                .args(extra)
                .args(["--format", "csv"]),
        )
    };
    let slowdowns = |(h, rows): &(Vec<String>, Vec<csv::StringRecord>)| {
        rows.iter()
            .map(|r| num(r, h, "slowdown"))
            .collect::<Vec<f64>>()
    };
    let green = rows_for(&["--sm", "64,64"]);
    let mps = rows_for(&["--sm", "64,64", "--sharing", "mps"]);
    assert_eq!(slowdowns(&green), slowdowns(&mps));
    let overlap = rows_for(&["--sm", "96,96", "--sharing", "mps"]);
    let full = rows_for(&["--sharing", "full"]);
    for r in &full.1 {
        assert_eq!(num(r, &full.0, "sm_count"), 132.0);
        assert_eq!(num(r, &full.0, "partner_sm_count"), 132.0);
    }
    for (o, g) in slowdowns(&overlap).iter().zip(slowdowns(&green)) {
        assert!(*o > g, "overlapping MPS shares {o} against disjoint {g}");
    }
    let both = || {
        let mut cmd = predict(&t.model);
        cmd.args(["--task", "bert-base:infer", "--task", "bert-base:train"]);
        cmd
    };
    fails_with(both().args(["--sm", "96,96"]), &["--sm 96,96"]);
    fails_with(
        both().args(["--sm", "64,64", "--sharing", "full"]),
        &["--sharing full"],
    );
    fails_with(
        both().args(["--sharing", "streams"]),
        &["--sharing", "green-context, mps, full"],
    );
}
