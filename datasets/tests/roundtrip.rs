//! Writing a run and reading it back gives the same data, bit for bit, in
//! every format; interrupted writes are never read as data.

mod common;

use std::fs;

use proptest::prelude::*;
use tally_datasets::{
    temp_path, Dataset, Format, OpRecord, PairRow, RunDir, StandaloneRow, StandaloneTable,
    TableName, OPS_COLUMNS, PAIR_COLUMNS,
};
use tally_gpu::{Dim3, KernelKind, KernelSpec, MemoryUse, Work};

fn assert_round_trip(format: Format) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("runs").join("x");
    let ds = common::sample(&dir, format);
    ds.write(&dir, format).expect("write");
    let back = Dataset::read(&dir).expect("read");
    assert_eq!(back, ds);
    for (a, b) in back.ops.iter().zip(&ds.ops) {
        assert_eq!(
            a.kernel.memory.dram_read_bytes.to_bits(),
            b.kernel.memory.dram_read_bytes.to_bits()
        );
        assert_eq!(a.to_kernel().op_id(), a.op_id);
    }
    let run = RunDir::new(&dir);
    for table in TableName::ALL {
        assert_eq!(run.csv(table).is_file(), format.writes_csv());
        assert_eq!(run.parquet(table).is_file(), format.writes_parquet());
    }
    // No temporaries are left behind.
    let names: Vec<_> = fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
}

#[test]
fn round_trip_csv() {
    assert_round_trip(Format::Csv);
}

#[test]
fn round_trip_parquet() {
    assert_round_trip(Format::Parquet);
}

#[test]
fn round_trip_both() {
    assert_round_trip(Format::Both);
}

#[test]
fn csv_headers_are_in_schema_order() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let ds = common::sample(tmp.path(), Format::Csv);
    ds.write(tmp.path(), Format::Csv).expect("write");
    let first_line = |name: &str| {
        fs::read_to_string(tmp.path().join(name))
            .expect("read")
            .lines()
            .next()
            .expect("header")
            .to_string()
    };
    assert_eq!(first_line("ops.csv"), OPS_COLUMNS.join(","));
    assert_eq!(first_line("pairs.csv"), PAIR_COLUMNS.join(","));
    assert_eq!(
        first_line("standalone.csv"),
        format!("op_id,sm_count,duration_us,{}", common::COUNTERS.join(","))
    );
    let ops = fs::read_to_string(tmp.path().join("ops.csv")).expect("read");
    // Derived columns are written for people: flops = 0.3 + 2 * 7e9 + tensor.
    let k = &ds.ops[0].kernel;
    assert!(ops.contains(&format!(",{},", k.work.total_flops())));
    assert!(ops.contains(&format!(",{}\n", k.arithmetic_intensity())));
}

#[test]
fn rewriting_in_another_format_drops_stale_tables() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut ds = common::sample(tmp.path(), Format::Csv);
    ds.write(tmp.path(), Format::Csv).expect("write csv");
    ds.pairs.pop();
    ds.info.formats = Format::Parquet.encodings();
    ds.info.counts = ds.counts();
    ds.write(tmp.path(), Format::Parquet)
        .expect("write parquet");
    assert!(!RunDir::new(tmp.path()).pairs_csv().exists());
    assert_eq!(Dataset::read(tmp.path()).expect("read"), ds);
}

#[test]
fn interrupted_write_is_not_data() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let ds = common::sample(tmp.path(), Format::Csv);
    ds.write(tmp.path(), Format::Csv).expect("write");
    let run = RunDir::new(tmp.path());

    // A later run died while writing pairs: its temporary is ignored and the
    // finished run still reads as it was.
    let stray = temp_path(&run.pairs_csv());
    fs::write(&stray, "op_a,op_b\ngarbage").expect("stray");
    fs::write(tmp.path().join(".pairs.csv.tmp-1"), "half a fi").expect("stray");
    assert_eq!(Dataset::read(tmp.path()).expect("read"), ds);

    // A run that died before run.json: tables exist but the run is incomplete.
    fs::remove_file(run.run_json()).expect("rm");
    assert!(!run.is_complete());
    let err = Dataset::read(tmp.path())
        .expect_err("incomplete")
        .to_string();
    assert!(
        err.contains("run.json") && err.contains("not found"),
        "{err}"
    );
    assert!(err.contains("did not finish"), "{err}");
}

#[test]
fn rewrite_removes_old_run_json_first() {
    // A write that fails validation must not touch the directory; one that
    // fails mid-way leaves no run.json. Simulate the latter with a table path
    // that is a directory, so the rename over it fails.
    let tmp = tempfile::tempdir().expect("tempdir");
    let ds = common::sample(tmp.path(), Format::Csv);
    ds.write(tmp.path(), Format::Csv).expect("write");
    let run = RunDir::new(tmp.path());
    fs::remove_file(run.pairs_csv()).expect("rm");
    fs::create_dir(run.pairs_csv()).expect("mkdir");
    fs::write(run.pairs_csv().join("x"), "x").expect("block");
    let err = ds
        .write(tmp.path(), Format::Csv)
        .expect_err("blocked")
        .to_string();
    assert!(err.contains("pairs.csv"), "{err}");
    assert!(!run.is_complete());
    assert!(!temp_path(&run.pairs_csv()).exists());
}

fn finite() -> impl Strategy<Value = f64> {
    use proptest::num::f64::{NORMAL, SUBNORMAL, ZERO};
    (NORMAL | SUBNORMAL | ZERO).prop_map(f64::abs)
}

fn kind() -> impl Strategy<Value = KernelKind> {
    proptest::sample::select(KernelKind::ALL.to_vec())
}

fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_ ,;\"'\n.:<>é→-]{0,16}"
}

prop_compose! {
    fn op()(
        name in text(),
        model in text(),
        kind in kind(),
        launches in any::<u32>(),
        dims in proptest::array::uniform6(1u32..5000),
        ints in proptest::array::uniform3(any::<u32>()),
        f in proptest::array::uniform14(finite()),
    ) -> OpRecord {
        let kernel = KernelSpec {
            name,
            kind,
            grid: Dim3::new(dims[0], dims[1], dims[2]),
            block: Dim3::new(dims[3], dims[4], dims[5]),
            registers_per_thread: ints[0],
            shared_mem_static: ints[1],
            shared_mem_dynamic: ints[2],
            work: Work {
                fadd: f[0], fmul: f[1], ffma: f[2], hadd: f[3], hmul: f[4], hfma: f[5],
                tensor_flops: f[6], other_warp_insts: f[7],
            },
            memory: MemoryUse {
                l1_bytes: f[8], l2_bytes: f[9], dram_read_bytes: f[10],
                dram_write_bytes: f[11], l2_working_set: f[12], inflight_bytes_per_warp: f[13],
            },
        };
        OpRecord::from_kernel(model, launches, kernel)
    }
}

type Raw = (
    Vec<OpRecord>,
    Vec<(usize, u32, f64, Vec<f64>)>,
    Vec<(usize, usize, u32, u32, [f64; 6])>,
);

fn tables() -> impl Strategy<Value = Raw> {
    let ncounters = 0usize..4;
    (proptest::collection::vec(op(), 1..6), ncounters).prop_flat_map(|(ops, nc)| {
        let n = ops.len();
        let st = proptest::collection::vec(
            (
                0..n,
                1u32..=u32::MAX,
                finite(),
                proptest::collection::vec(
                    any::<f64>().prop_filter("finite", |x| x.is_finite()),
                    nc,
                ),
            ),
            0..12,
        );
        let pairs = proptest::collection::vec(
            (
                0..n,
                0..n,
                1u32..200,
                1u32..200,
                proptest::array::uniform6(finite()),
            ),
            0..12,
        );
        (Just(ops), st, pairs)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_rows_round_trip((mut ops, st, pr) in tables(), parquet in any::<bool>()) {
        // Random kernels may collide; op ids must be unique.
        let mut seen = std::collections::HashSet::new();
        ops.retain(|o| seen.insert(o.op_id.clone()));
        let id = |i: usize| ops[i % ops.len()].op_id.clone();
        let nc = st.first().map_or(0, |r| r.3.len());
        let mut standalone = StandaloneTable::new((0..nc).map(|i| format!("c.{i}__x")).collect());
        let mut keys = std::collections::HashSet::new();
        for (op, sm, d, counters) in st {
            if keys.insert((id(op), sm)) {
                standalone.rows.push(StandaloneRow { op_id: id(op), sm_count: sm, duration_us: d, counters });
            }
        }
        let pairs: Vec<PairRow> = pr.into_iter().map(|(a, b, sa, sb, f)| PairRow {
            op_a: id(a), op_b: id(b), sm_a: sa, sm_b: sb,
            duration_a_us: f[0], duration_b_us: f[1], solo_a_us: f[2], solo_b_us: f[3],
            slowdown_a: f[4], slowdown_b: f[5],
        }).collect();
        let format = if parquet { Format::Parquet } else { Format::Csv };
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut ds = common::sample(tmp.path(), format);
        ds.ops = ops;
        ds.standalone = standalone;
        ds.pairs = pairs;
        ds.info.counts = ds.counts();
        ds.write(tmp.path(), format).expect("write");
        let back = Dataset::read(tmp.path()).expect("read");
        let bits = |d: &Dataset| -> Vec<u64> {
            let mut v = Vec::new();
            for o in &d.ops {
                let k = &o.kernel;
                v.extend([k.work.fadd, k.work.hfma, k.memory.l2_working_set, k.memory.inflight_bytes_per_warp].map(f64::to_bits));
            }
            for r in &d.standalone.rows {
                v.push(r.duration_us.to_bits());
                v.extend(r.counters.iter().map(|c| c.to_bits()));
            }
            for p in &d.pairs {
                v.extend([p.duration_a_us, p.slowdown_b].map(f64::to_bits));
            }
            v
        };
        prop_assert_eq!(bits(&back), bits(&ds));
        prop_assert_eq!(back, ds);
    }
}
