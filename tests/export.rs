//! `tally export DIR --to orion`: Orion's per-kernel profile CSV from a
//! simulated and an imported dataset, read back by `tally run`'s trace
//! reader and replayed by `tally run`.

use tally_datasets::Dataset;
use tally_e2e::{fails_with, ncu_fixture, profile_small, stdout_of, tally};
use tally_sched::trace::read_trace_rows;

/// Export `dir` to `out`, read it back with the trace reader, and check
/// every row against the dataset: one row per launch of each op, in op
/// order, with the op's duration on its widest partition.
fn round_trip(dir: &std::path::Path, out: &std::path::Path) -> Vec<tally_sched::trace::TraceRow> {
    let text = stdout_of(
        tally()
            .arg("export")
            .arg(dir)
            .args(["--to", "orion", "--out"])
            .arg(out),
    );
    assert!(text.contains("wrote"), "{text}");
    let header = std::fs::read_to_string(out).expect("read");
    assert!(header.starts_with("Name,Profile,Memory_footprint,SM_usage,Duration\n"));
    let rows = read_trace_rows(out).expect("the trace reader reads the export");
    let ds = Dataset::read(dir).expect("dataset");
    let expected: usize = ds.ops.iter().map(|o| o.launches.max(1) as usize).sum();
    assert_eq!(rows.len(), expected);
    let mut at = 0;
    for op in &ds.ops {
        let widest = ds
            .standalone
            .rows
            .iter()
            .filter(|r| r.op_id == op.op_id)
            .max_by_key(|r| r.sm_count)
            .expect("row");
        for _ in 0..op.launches.max(1) {
            let r = &rows[at];
            at += 1;
            assert!(
                op.kernel.name.starts_with(&r.name),
                "{} vs {}",
                r.name,
                op.kernel.name
            );
            assert!(!r.name.contains('<'));
            assert!(
                (r.duration_ns - widest.duration_us * 1e3).abs() < 1e-3,
                "{}: {} vs {}",
                r.name,
                r.duration_ns,
                widest.duration_us
            );
            assert!([1, 0, -1].contains(&r.profile));
            // SM usage: the grid over the blocks an SM holds.
            let get = |n: &str| ds.standalone.counter(widest, n).expect(n);
            let per_sm = [
                "launch__occupancy_limit_registers",
                "launch__occupancy_limit_shared_mem",
                "launch__occupancy_limit_warps",
                "launch__occupancy_limit_blocks",
            ]
            .iter()
            .map(|n| get(n))
            .fold(f64::INFINITY, f64::min);
            let blocks = get("launch__grid_size");
            assert_eq!(
                f64::from(r.sm_usage),
                (blocks / per_sm).ceil(),
                "{}",
                r.name
            );
        }
    }
    rows
}

#[test]
fn a_simulated_dataset_round_trips_and_replays() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (mlp, trace) = (tmp.path().join("mlp"), tmp.path().join("mlp-orion.csv"));
    profile_small("profiler/examples-models/tiny-mlp.toml", "4", &mlp);
    let rows = round_trip(&mlp, &trace);
    // The simulator's GEMMs run on tensor cores (no FP32 instructions):
    // every label comes from the throughput rule or is unknown, and a
    // DRAM-bound elementwise kernel is memory-bound.
    assert!(rows.iter().any(|r| r.profile != -1), "{rows:?}");
    // `tally run` replays the exported trace as the HP job.
    let out = tmp.path().join("run");
    tally()
        .args(["run", "--hp"])
        .arg(&trace)
        .args([
            "--trace-gpu",
            "h100-sxm",
            "--be",
            "resnet50:train",
            "--policy",
            "tally",
            "--duration",
            "50ms",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    assert!(out.join("summary.csv").is_file());
}

#[test]
fn an_imported_dataset_round_trips() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (ds, trace) = (tmp.path().join("ncu"), tmp.path().join("ncu-orion.csv"));
    stdout_of(
        tally()
            .arg("import-ncu")
            .arg(ncu_fixture("raw-wide-2024.csv"))
            .arg("--out")
            .arg(&ds),
    );
    let rows = round_trip(&ds, &trace);
    // The template name, cut at its arguments as Orion writes it.
    assert!(rows
        .iter()
        .any(|r| r.name == "void at::native::vectorized_elementwise_kernel"));
    // The GEMM (ffma 131,072 over 33.5 MB of DRAM traffic) is below the
    // knee; the GELU kernel has FP32 work too: both labelled by intensity.
    assert!(rows.iter().all(|r| r.profile == 0), "{rows:?}");
}

#[test]
fn an_export_without_launch_counters_names_them() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let ds = tmp.path().join("b200");
    let mut spec = tally_gpu::GpuSpec::preset("h100-sxm").expect("preset");
    spec.compute_capability = "10.0".into();
    spec.sm_count = 148;
    spec.name = "b200".into();
    let spec_path = tmp.path().join("b200.toml");
    std::fs::write(&spec_path, toml::to_string(&spec).expect("toml")).expect("write");
    stdout_of(
        tally()
            .arg("import-ncu")
            .arg(ncu_fixture("details-b200-2025.csv"))
            .arg("--gpu")
            .arg(&spec_path)
            .arg("--out")
            .arg(&ds),
    );
    let out = tmp.path().join("b200-orion.csv");
    fails_with(
        tally()
            .arg("export")
            .arg(&ds)
            .args(["--to", "orion", "--out"])
            .arg(&out),
        &["launch__occupancy_limit_registers", "--metrics"],
    );
    assert!(!out.exists(), "nothing written");
    fails_with(
        tally().arg("export").arg(&ds).args(["--to", "nsys"]),
        &["`nsys`", "orion"],
    );
}
