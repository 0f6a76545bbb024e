//! `tally run`: policies compared on the simulated GPU, its output files,
//! bad input, kernel-trace replay.

use predicates::prelude::*;
use tally_e2e::{fails_with, read_csv, repo, tally};

#[test]
fn run_compares_policies_and_writes_its_tables() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let assert = tally()
        .args([
            "run",
            "--hp",
            "bert-base:infer",
            "--be",
            "resnet50:train",
            "--compare",
            "mps,tally,tally-predict",
            "--predictor",
            "oracle",
            "--hp-launch-us",
            "8.1",
            "--hp-gpu-util",
            "0.9",
            "--load",
            "0.5",
            "--duration",
            "300ms",
            "--format",
            "csv",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).expect("utf8");
    assert!(stdout.starts_with("policy,hp_p99_ms,p99_overhead_pct"));
    assert_eq!(stdout.lines().count(), 4, "{stdout}");
    let (header, rows) = read_csv(&out.join("summary.csv"));
    assert_eq!(header[0], "policy");
    assert_eq!(rows.len(), 3);
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    for row in &rows {
        let p99: f64 = row[col("hp_p99_ms")].parse().expect("p99");
        let alone: f64 = row[col("alone_p99_ms")].parse().expect("alone p99");
        // tally-predict moves each HP kernel onto the partition where it
        // runs alone within its tolerance (2 %) of the whole GPU, and a
        // kernel can be a little faster there (a last wave spread over
        // fewer SMs); the others launch HP as it is.
        let floor = if &row[0] == "tally-predict" {
            0.98
        } else {
            0.999
        };
        assert!(
            p99 >= alone * floor,
            "{}: co-location never beats alone: {p99} vs {alone}",
            &row[0]
        );
    }
    let (_, requests) = read_csv(&out.join("requests.csv"));
    assert!(requests.iter().any(|r| &r[0] == "alone"));
    assert!(requests.iter().any(|r| &r[0] == "tally"));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).expect("run.json"))
            .expect("json");
    assert_eq!(meta["hp"], "bert-base:infer");
    assert_eq!(meta["hp_launch_us"], 8.1);
    assert_eq!(meta["hp_gpu_util"], 0.9);
    // Launch-bound at 8.1 us per kernel, BERT-base's request (142 kernels)
    // takes at least 142 x 8.1 us alone.
    let alone_avg: f64 = rows[0][col("alone_service_avg_ms")].parse().expect("alone");
    assert!(alone_avg >= 142.0 * 8.1e-3, "alone {alone_avg} ms");
    // A second run into the same directory needs --force.
    fails_with(
        tally()
            .args([
                "run",
                "--hp",
                "bert-base:infer",
                "--duration",
                "10ms",
                "--out",
            ])
            .arg(&out),
        &["--force"],
    );
}

#[test]
fn run_rejects_bad_input_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let cases: [(&[&str], &str); 10] = [
        (
            &["--hp", "bert-base:infer", "--policy", "fifo"],
            "unknown policy `fifo`",
        ),
        (
            &["--hp", "bert-base:infer", "--policy", "tally-predict"],
            "needs --predictor",
        ),
        (&["--hp", "resnet50:train"], "--hp takes inference models"),
        (
            &["--hp", "bert-base:infer", "--duration", "soon"],
            "--duration `soon`",
        ),
        (
            &["--hp", "placeholder.csv", "--be", "resnet50:train"],
            "placeholder rows",
        ),
        (
            &["--hp", "bad-row.csv", "--be", "resnet50:train"],
            "bad-row.csv, line 3: field `SM_usage`",
        ),
        (
            &[
                "--hp",
                "bert-base:infer",
                "--be",
                "resnet50:train",
                "--be-gpu-util",
                "1.5",
            ],
            "--be-gpu-util 1.5: a GPU utilisation alone must be in (0, 1]",
        ),
        (
            &[
                "--hp",
                "bert-base:infer",
                "--be",
                "resnet50:train",
                "--be-gpu-util",
                "0.5,0.9",
            ],
            "--be-gpu-util: 2 values for 1 --be jobs",
        ),
        (
            &["--hp", "bert-base:infer", "--hp-launch-us=-2"],
            "--hp-launch-us -2: expected a host time per launch >= 0",
        ),
        (
            &["--hp", "bert-base:infer", "--hp-gpu-util", "0"],
            "--hp-gpu-util 0: a GPU utilisation alone must be in (0, 1]",
        ),
    ];
    let header = "Name,Profile,Memory_footprint,SM_usage,Duration\n";
    std::fs::write(
        dir.path().join("placeholder.csv"),
        format!("{header}Conv,-1,1,1,7\nBatchNorm,-1,1,1,7\n"),
    )
    .expect("write");
    std::fs::write(
        dir.path().join("bad-row.csv"),
        format!("{header}Conv,1,0,80,101183\nBatchNorm,0,0,many,40096\n"),
    )
    .expect("write");
    for (args, message) in cases {
        tally()
            .current_dir(dir.path())
            .arg("run")
            .args(args)
            .arg("--out")
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
        assert!(!out.join("run.json").exists());
    }
}

/// `--arrival-process fixed-count`: whatever the seed, the run holds the
/// load's count of requests, floor(duration x load / request alone); the
/// process is recorded in run.json; without `--load` it is refused.
#[test]
fn run_draws_the_loads_count_of_arrivals_when_asked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut counts = Vec::new();
    for seed in ["1", "2", "3"] {
        let out = dir.path().join(format!("run{seed}"));
        tally()
            .args(["run", "--hp", "bert-base:infer", "--policy", "mps"])
            .args(["--load", "0.5", "--arrival-process", "fixed-count"])
            .args(["--duration", "300ms", "--seed", seed, "--out"])
            .arg(&out)
            .assert()
            .success();
        let (header, rows) = read_csv(&out.join("summary.csv"));
        let col = |name: &str| header.iter().position(|h| h == name).expect(name);
        let alone_ms: f64 = rows[0][col("alone_service_avg_ms")]
            .parse()
            .expect("number");
        let want = (300.0 * 0.5 / alone_ms).floor() as usize;
        let (header, rows) = read_csv(&out.join("requests.csv"));
        let policy = header.iter().position(|h| h == "policy").expect("policy");
        let served = rows.iter().filter(|r| &r[policy] == "alone").count();
        // The last arrival may still be in service when the run ends.
        assert!(served == want || served + 1 == want, "{served} of {want}");
        counts.push(want);
        let run_json = std::fs::read_to_string(out.join("run.json")).expect("run.json");
        assert!(run_json.contains("FixedCount"), "{run_json}");
    }
    assert!(
        counts.iter().all(|&c| c == counts[0] && c > 50),
        "{counts:?}"
    );
    tally()
        .args([
            "run",
            "--hp",
            "bert-base:infer",
            "--arrival-process",
            "fixed-count",
        ])
        .arg("--out")
        .arg(dir.path().join("bad"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--load"));
}

/// A Tally benchmark arrival trace (tally-bench's `infer_trace/*.json`: a
/// JSON array of seconds) replays request for request: each request of
/// the run arrives at the trace's time, in ms; a bad entry is refused by
/// its position.
#[test]
fn run_replays_a_tally_bench_arrival_trace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = dir.path().join("trace.json");
    std::fs::write(&trace, "[0.01, 0.0125, 0.05, 0.2, 0.2004, 5.0]").expect("write");
    let out = dir.path().join("run");
    tally()
        .args(["run", "--hp", "bert-base:infer", "--be", "resnet50:train"])
        .args(["--policy", "tally", "--duration", "300ms", "--arrivals"])
        .arg(&trace)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let (header, rows) = read_csv(&out.join("requests.csv"));
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let (policy, arrival) = (col("policy"), col("arrival_ms"));
    // The HP-alone reference replays the same arrivals; the policy's rows.
    let arrivals: Vec<f64> = rows
        .iter()
        .filter(|r| &r[policy] == "tally")
        .map(|r| r[arrival].parse().expect("number"))
        .collect();
    // The arrival at 5 s falls after the 300 ms run.
    let want = [10.0, 12.5, 50.0, 200.0, 200.4];
    assert_eq!(arrivals.len(), want.len(), "{arrivals:?}");
    for (got, want) in arrivals.iter().zip(want) {
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
    }
    std::fs::write(&trace, "[0.01, 0.005]").expect("write");
    tally()
        .args(["run", "--hp", "bert-base:infer", "--arrivals"])
        .arg(&trace)
        .arg("--out")
        .arg(dir.path().join("bad"))
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("trace.json entry 2")
                .and(predicate::str::contains("must not decrease")),
        );
}

/// A real kernel trace (the shipped ResNet-50 forward pass) as the HP job:
/// the run completes and HP alone takes the trace's measured time scaled
/// to the GPU it runs on (between a third of the V100 time and 1.2 times
/// it: the default GPU is faster, and small kernels do not speed up).
#[test]
fn run_replays_a_kernel_trace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let trace = repo().join("sched-runtime/tests/fixtures/traces/resnet50_4_fwd.csv");
    tally()
        .args(["run", "--hp"])
        .arg(&trace)
        .args([
            "--be",
            "resnet50:train",
            "--policy",
            "tally",
            "--duration",
            "300ms",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let summary = std::fs::read_to_string(out.join("summary.csv")).expect("summary");
    let mut lines = summary.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let row: Vec<&str> = lines.next().expect("row").split(',').collect();
    let col = |name: &str| -> f64 {
        let i = header.iter().position(|h| *h == name).expect(name);
        row[i].parse().expect("number")
    };
    // Closed loop: every request takes the standalone time alone.
    let alone_ms = col("alone_p50_ms");
    assert!(
        alone_ms > 6.498 / 3.0 && alone_ms < 6.498 * 1.2,
        "alone {alone_ms} ms"
    );
    assert!(col("p99_overhead_pct") < 15.0);
}

#[test]
fn side_by_side_puts_a_run_beside_the_published_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = dir.path().join("run");
    tally()
        .args([
            "run",
            "--hp",
            "bert-large:infer@1",
            "--be",
            "pointnet:train",
            "--compare",
            "mps,tally",
            "--load",
            "0.5",
            "--duration",
            "100ms",
            "--out",
        ])
        .arg(&run)
        .assert()
        .success();
    let published = repo().join("data/tally-bench-a100/per_pair_p99_and_throughput_derived.csv");
    let side = dir.path().join("side_by_side.csv");
    let side_by_side = |format: &str| {
        tally_e2e::stdout_of(
            tally()
                .arg("side-by-side")
                .arg(&run)
                .arg("--published")
                .arg(&published)
                .arg("--out")
                .arg(&side)
                .args(["--format", format]),
        )
    };
    let stdout = side_by_side("csv");
    assert!(stdout.starts_with("policy,pairs,p99_slowdown"), "{stdout}");
    let (header, rows) = read_csv(&side);
    assert_eq!(header[..7].join(","), "hp,be,policy,p99_slowdown,system_throughput,published_p99_slowdown,published_system_throughput");
    assert_eq!(rows.len(), 2);
    // The artifact's pointnet pair under MPS: 4.1371x, system 1.78.
    assert_eq!(&rows[0][2], "mps");
    assert_eq!(&rows[0][5], "4.1371");
    assert_eq!(&rows[0][6], "1.7800");
    // Its mean beside it: 7.134 ms against 4.05 ms alone; the simulated
    // mean slowdown of the service latency is there too.
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(&rows[0][column("published_mean_slowdown")], "1.7615");
    let mean: f64 = rows[0][column("mean_slowdown")].parse().unwrap();
    assert!(mean >= 0.95, "MPS mean slowdown {mean}");
    assert!(stdout
        .lines()
        .next()
        .unwrap()
        .contains("mean_ratio_geomean"));
    // The unit of both: BERT's request alone, 4.05 ms on the A100.
    assert_eq!(&rows[0][column("published_hp_alone_ms")], "4.0500");
    let alone: f64 = rows[0][column("hp_alone_ms")].parse().unwrap();
    assert!(
        alone > 0.5 && alone < 10.0,
        "simulated BERT-large request alone {alone} ms"
    );
    let table = side_by_side("table");
    let alone_line = table
        .lines()
        .find(|l| l.starts_with("bert-large:infer@1"))
        .unwrap_or_else(|| panic!("no HP alone line in\n{table}"));
    assert!(alone_line.contains("4.050"), "{alone_line}");

    // A directory that is not a run, and a damaged published table.
    fails_with(
        tally()
            .arg("side-by-side")
            .arg(dir.path())
            .arg("--published")
            .arg(&published)
            .arg("--out")
            .arg(&side),
        &["not a `tally run` directory"],
    );
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "hp_job,be_job\nx,y\n").unwrap();
    fails_with(
        tally()
            .arg("side-by-side")
            .arg(&run)
            .arg("--published")
            .arg(&bad)
            .arg("--out")
            .arg(&side),
        &["bad.csv:1", "missing column `time_sliced_p99_slowdown`"],
    );
}

/// `tally run --backend cuda` without a driver: the NO_DRIVER error, exit
/// 2, nothing written; what the device engine cannot do is refused with
/// the reason before the device is opened. (Running on a real GPU is
/// scripts/gpu-check.sh's: this machine has none.)
#[test]
fn run_on_a_real_gpu_is_a_clear_error_without_one_and_refuses_what_it_cannot_do() {
    if std::path::Path::new("/proc/driver/nvidia").exists() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let run = |extra: &[&str]| {
        let mut cmd = tally();
        cmd.args([
            "run",
            "--hp",
            "bert-base:infer",
            "--be",
            "resnet50:train",
            "--backend",
            "cuda",
            "--duration",
            "1s",
        ])
        .args(extra)
        .arg("--out")
        .arg(&out);
        cmd
    };
    // `--gpu auto` by default, and a preset: the driver is checked first.
    fails_with(&mut run(&[]), &[tally_gpu::cuda::NO_DRIVER]);
    fails_with(
        &mut run(&["--gpu", "a100-40gb", "--compare", "mps,tally"]),
        &[tally_gpu::cuda::NO_DRIVER],
    );
    fails_with(
        &mut run(&["--gpu", "a100-40gb", "--policy", "time-slicing"]),
        &[
            "--backend cuda cannot run time-slicing",
            "between processes",
        ],
    );
    fails_with(
        &mut run(&[
            "--gpu",
            "a100-40gb",
            "--compare",
            "tally,tally-predict",
            "--predictor",
            "oracle",
        ]),
        &["cannot run tally-predict", "green contexts"],
    );
    fails_with(
        &mut run(&["--gpu", "a100-40gb", "--timeline"]),
        &["--timeline needs --backend sim"],
    );
    fails_with(
        &mut run(&["--gpu", "a100-40gb", "--hp-launch-us", "8.1"]),
        &["--hp-launch-us is the simulator's model"],
    );
    fails_with(
        &mut run(&["--gpu", "a100-40gb", "--reps", "0"]),
        &["timed repetitions (--reps) must be at least 1"],
    );
    assert!(!out.exists(), "a failed run wrote output");
}
