//! Bad input gives an error naming the file, the line and the column.

mod common;

use std::fs;
use std::path::Path;

use tally_datasets::{Dataset, DatasetError, Format, RunDir};

/// A valid CSV run in a fresh directory.
fn run() -> (tempfile::TempDir, Dataset) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let ds = common::sample(tmp.path(), Format::Csv);
    ds.write(tmp.path(), Format::Csv).expect("write");
    (tmp, ds)
}

fn read_err(dir: &Path) -> String {
    Dataset::read(dir).expect_err("should fail").to_string()
}

/// Replace field `col` (0-based) of 1-based `line` in a CSV without quotes
/// spanning lines (pairs and standalone are such files).
fn set_field(path: &Path, line: usize, col: usize, value: &str) {
    let text = fs::read_to_string(path).expect("read");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut fields: Vec<&str> = lines[line - 1].split(',').collect();
    fields[col] = value;
    lines[line - 1] = fields.join(",");
    fs::write(path, lines.join("\n") + "\n").expect("write");
}

fn edit(path: &Path, f: impl FnOnce(String) -> String) {
    let text = fs::read_to_string(path).expect("read");
    fs::write(path, f(text)).expect("write");
}

#[test]
fn missing_run_json() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let err = read_err(&tmp.path().join("nothing"));
    assert!(err.contains("nothing/run.json` not found"), "{err}");
}

#[test]
fn wrong_schema_version() {
    let (tmp, _) = run();
    let dir = tmp.path().join("runs").join("x");
    fs::create_dir_all(dir.parent().expect("parent")).expect("mkdir");
    fs::rename(tmp.path().join("run.json"), tmp.path().join("keep.json")).expect("mv");
    fs::create_dir_all(&dir).expect("mkdir");
    let json = fs::read_to_string(tmp.path().join("keep.json")).expect("read");
    fs::write(
        dir.join("run.json"),
        json.replace("\"schema_version\": 1", "\"schema_version\": 7"),
    )
    .expect("write");
    let err = Dataset::read(&dir).expect_err("version");
    assert!(matches!(err, DatasetError::SchemaVersion { found: 7, .. }));
    let msg = err.to_string();
    assert!(
        msg.ends_with("runs/x/run.json`: schema version 7, this tally reads 1"),
        "{msg}"
    );
}

#[test]
fn run_json_without_version_or_garbled() {
    let (tmp, _) = run();
    let path = RunDir::new(tmp.path()).run_json();
    edit(&path, |t| t.replace("\"schema_version\": 1,", ""));
    assert!(read_err(tmp.path()).contains("no `schema_version` field"));
    fs::write(&path, "{ not json").expect("write");
    let err = read_err(tmp.path());
    assert!(err.contains("run.json`: invalid run description"), "{err}");
}

#[test]
fn missing_column_lists_what_was_found() {
    let (tmp, _) = run();
    let path = RunDir::new(tmp.path()).pairs_csv();
    edit(&path, |t| t.replacen("sm_b", "sm_bee", 1));
    let err = read_err(tmp.path());
    assert!(err.contains("pairs.csv`: missing column `sm_b`"), "{err}");
    assert!(
        err.contains("found: `op_a`, `op_b`, `sm_a`, `sm_bee`,"),
        "{err}"
    );
}

#[test]
fn unparsable_unsigned() {
    let (tmp, _) = run();
    let path = RunDir::new(tmp.path()).pairs_csv();
    set_field(&path, 3, 2, "abc");
    let err = read_err(tmp.path());
    assert!(
        err.ends_with(
            "pairs.csv` line 3, column `sm_a`: expected an unsigned integer, found `abc`"
        ),
        "{err}"
    );
    set_field(&path, 3, 2, "-4");
    assert!(read_err(tmp.path()).contains("found `-4`"));
}

#[test]
fn unparsable_number() {
    let (tmp, _) = run();
    let path = RunDir::new(tmp.path()).standalone_csv();
    set_field(&path, 5, 3, "12%");
    let err = read_err(tmp.path());
    assert!(
        err.contains("standalone.csv` line 5, column `dram__throughput.avg.pct_of_peak_sustained_elapsed`: expected a number, found `12%`"),
        "{err}"
    );
}

#[test]
fn negative_and_non_finite_durations() {
    let (tmp, _) = run();
    let path = RunDir::new(tmp.path()).pairs_csv();
    set_field(&path, 2, 4, "-1.5");
    let err = read_err(tmp.path());
    assert!(
        err.ends_with("pairs.csv` line 2, column `duration_a_us`: expected a finite duration >= 0, found `-1.5`"),
        "{err}"
    );
    set_field(&path, 2, 4, "1");
    set_field(&path, 3, 7, "inf");
    let err = read_err(tmp.path());
    assert!(err.contains("line 3, column `solo_b_us`"), "{err}");
    assert!(err.contains("found `inf`"), "{err}");

    let (tmp, _) = run();
    let path = RunDir::new(tmp.path()).standalone_csv();
    set_field(&path, 4, 2, "NaN");
    let err = read_err(tmp.path());
    assert!(
        err.contains("standalone.csv` line 4, column `duration_us`"),
        "{err}"
    );
}

#[test]
fn unknown_kind() {
    let (tmp, _) = run();
    let path = RunDir::new(tmp.path()).ops_csv();
    edit(&path, |t| {
        t.replacen(",layer_norm,layer_norm,", ",layer_norm,warp_shuffle,", 1)
    });
    let err = read_err(tmp.path());
    // The second op's name holds a quoted newline, so the third op is on line 5.
    assert!(
        err.contains("ops.csv` line 5, column `kind`: unknown kernel kind `warp_shuffle`"),
        "{err}"
    );
    assert!(err.contains("gemm, gemv"), "{err}");
}

#[test]
fn rows_must_refer_to_known_ops() {
    let (tmp, _) = run();
    let path = RunDir::new(tmp.path()).standalone_csv();
    set_field(&path, 6, 0, "deadbeefdeadbeef");
    let err = read_err(tmp.path());
    assert!(
        err.ends_with(
            "standalone.csv` line 6, column `op_id`: op `deadbeefdeadbeef` is not in ops.csv"
        ),
        "{err}"
    );

    let (tmp, _) = run();
    let path = RunDir::new(tmp.path()).pairs_csv();
    set_field(&path, 3, 1, "feedface");
    let err = read_err(tmp.path());
    assert!(
        err.contains("pairs.csv` line 3, column `op_b`: op `feedface`"),
        "{err}"
    );
}

#[test]
fn wrong_number_of_fields() {
    let (tmp, _) = run();
    let path = RunDir::new(tmp.path()).pairs_csv();
    edit(&path, |t| {
        let mut lines: Vec<&str> = t.lines().collect();
        let short = lines[2].rsplit_once(',').expect("comma").0.to_string();
        lines[2] = &short;
        lines.join("\n") + "\n"
    });
    let err = read_err(tmp.path());
    assert!(
        err.ends_with("pairs.csv` line 3: expected 10 fields, found 9"),
        "{err}"
    );
}

#[test]
fn extra_pair_columns_are_ignored() {
    let (tmp, ds) = run();
    let path = RunDir::new(tmp.path()).pairs_csv();
    edit(&path, |t| {
        t.lines()
            .enumerate()
            .map(|(i, l)| {
                if i == 0 {
                    format!("note,{l}\n")
                } else {
                    format!("\"x,y\",{l}\n")
                }
            })
            .collect()
    });
    assert_eq!(Dataset::read(tmp.path()).expect("read"), ds);
}

#[test]
fn truncated_table_disagrees_with_run_json() {
    let (tmp, _) = run();
    let path = RunDir::new(tmp.path()).pairs_csv();
    edit(&path, |t| {
        let lines: Vec<&str> = t.lines().collect();
        lines[..2].join("\n") + "\n"
    });
    let err = read_err(tmp.path());
    assert!(err.contains("pairs.csv`: has 1 rows but"), "{err}");
}

#[test]
fn missing_table_file() {
    let (tmp, _) = run();
    fs::remove_file(RunDir::new(tmp.path()).standalone_csv()).expect("rm");
    let err = read_err(tmp.path());
    assert!(err.contains("standalone.csv` not found"), "{err}");
}

#[test]
fn parquet_errors_name_rows() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut ds = common::sample(tmp.path(), Format::Parquet);
    ds.write(tmp.path(), Format::Parquet).expect("write");
    // Write a bad pairs table by hand: the writer itself refuses bad rows.
    ds.pairs[1].op_a = "nope".into();
    let err = ds
        .write(tmp.path(), Format::Parquet)
        .expect_err("invalid")
        .to_string();
    assert!(
        err.contains("pairs.parquet` row 2, column `op_a`: op `nope` is not in ops.parquet"),
        "{err}"
    );
    // The failed write did not touch the finished run.
    ds.pairs[1].op_a = ds.ops[1].op_id.clone();
    assert_eq!(Dataset::read(tmp.path()).expect("read"), ds);
}

#[test]
fn writer_rejects_inconsistent_tables() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut ds = common::sample(tmp.path(), Format::Csv);
    ds.standalone.rows[2].counters.pop();
    let err = ds.validate().expect_err("short").to_string();
    assert!(
        err.contains("standalone.csv` row 3: expected 5 fields, found 4"),
        "{err}"
    );
    ds.standalone.rows[2].counters.push(1.0);
    ds.standalone.counter_names[1] = "duration_us".into();
    let err = ds.validate().expect_err("clash").to_string();
    assert!(
        err.contains("column `duration_us` appears more than once"),
        "{err}"
    );
    ds.standalone.counter_names[1] = "x".into();
    ds.ops.push(ds.ops[0].clone());
    let err = ds.validate().expect_err("dup").to_string();
    assert!(err.contains("ops.csv` row 4, column `op_id`"), "{err}");
    assert!(err.contains("already appears at row 1"), "{err}");
    assert!(!RunDir::new(tmp.path()).is_complete());
}

#[test]
fn format_parse_error_is_clear() {
    let err = "json".parse::<Format>().expect_err("bad").to_string();
    assert_eq!(
        err,
        "unknown format `json` (expected `csv`, `parquet` or `both`)"
    );
}
