//! `real_contention.csv`: one row per real measurement,
//! `set,case,real,simulated,predicted` (an estimate left empty where none
//! applies), and each set's scores. This module owns the file: its writer,
//! its reader (for `tally plot`), the per-set summary (`summary.csv`) and
//! the few-shot figures (`few_shot.csv`).

use std::io::Write;
use std::path::Path;

use super::evaluate::{RealRow, SETS};
use super::few_shot::FewShot;
use super::score::{constant_mape, score, Score};
use crate::csv_columns::CsvColumns;
use crate::error::RunError;

/// The file's name in an output directory.
pub const FILE: &str = "real_contention.csv";

/// The per-set scores' file beside it.
pub const SUMMARY_FILE: &str = "summary.csv";

/// The few-shot figures' file (with a predictor only).
pub const FEW_SHOT_FILE: &str = "few_shot.csv";

/// Columns of [`FEW_SHOT_FILE`], one row per K.
pub const FEW_SHOT_HEADER: [&str; 3] = ["k", "held_out_rows", "mape_pct"];

/// Columns of [`SUMMARY_FILE`], one row per set.
pub const SUMMARY_HEADER: [&str; 9] = [
    "set",
    "rows",
    "simulated_rows",
    "simulated_mape_pct",
    "simulated_r",
    "predicted_rows",
    "predicted_mape_pct",
    "predicted_r",
    "constant_mape_pct",
];

const HEADER: [&str; 5] = ["set", "case", "real", "simulated", "predicted"];

fn io(path: &Path, e: impl std::fmt::Display) -> RunError {
    RunError::Input {
        what: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// Write `rows` to `path` whole (a temporary file renamed into place, so a
/// reader never sees half of it).
pub fn write_rows(path: &Path, rows: &[RealRow]) -> Result<(), RunError> {
    let cell = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.6}"));
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.set.to_string(),
                r.case.clone(),
                format!("{:.6}", r.real),
                cell(r.simulated),
                cell(r.predicted),
            ]
        })
        .collect();
    write_table(path, &HEADER, &cells)
}

impl SetSummary {
    /// The row of [`SUMMARY_HEADER`] (`-` for what was not estimated).
    pub fn cells(&self) -> Vec<String> {
        let r = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"));
        let score = |s: &Option<Score>| match s {
            Some(x) => [x.rows.to_string(), format!("{:.2}", x.mape), r(x.pearson_r)],
            None => ["0".into(), "-".into(), "-".into()],
        };
        let mut out = vec![self.set.to_string(), self.rows.to_string()];
        out.extend(score(&self.simulated));
        out.extend(score(&self.predicted));
        out.push(format!("{:.2}", self.constant_mape));
        out
    }
}

/// Write `header` and `rows` to `path` whole (a temporary file renamed
/// into place).
fn write_table(path: &Path, header: &[&str], rows: &[Vec<String>]) -> Result<(), RunError> {
    let tmp = path.with_extension("csv.tmp");
    {
        let file = std::fs::File::create(&tmp).map_err(|e| io(&tmp, e))?;
        let mut w = csv::Writer::from_writer(std::io::BufWriter::new(file));
        w.write_record(header).map_err(|e| io(&tmp, e))?;
        for r in rows {
            w.write_record(r).map_err(|e| io(&tmp, e))?;
        }
        let mut inner = w.into_inner().map_err(|e| io(&tmp, e))?;
        inner.flush().map_err(|e| io(&tmp, e))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| io(path, e))
}

/// Write the per-set scores to `path` whole.
pub fn write_summary(path: &Path, summary: &[SetSummary]) -> Result<(), RunError> {
    let rows: Vec<Vec<String>> = summary.iter().map(SetSummary::cells).collect();
    write_table(path, &SUMMARY_HEADER, &rows)
}

/// The row of [`FEW_SHOT_HEADER`] for one K.
pub fn few_shot_cells(f: &FewShot) -> Vec<String> {
    vec![
        f.k.to_string(),
        f.rows.to_string(),
        format!("{:.2}", f.mape),
    ]
}

/// Write the few-shot figures to `path` whole.
pub fn write_few_shot(path: &Path, figures: &[FewShot]) -> Result<(), RunError> {
    let rows: Vec<Vec<String>> = figures.iter().map(few_shot_cells).collect();
    write_table(path, &FEW_SHOT_HEADER, &rows)
}

/// Read a file [`write_rows`] wrote.
pub fn read_rows(path: &Path) -> Result<Vec<RealRow>, RunError> {
    let table = CsvColumns::read(path, &HEADER)?;
    let mut out = Vec::new();
    for row in table.rows() {
        let name = row.text("set");
        let set = SETS.iter().find(|s| **s == name).ok_or_else(|| {
            row.error(
                "set",
                format!("unknown set `{name}` (known: {})", SETS.join(", ")),
            )
        })?;
        out.push(RealRow {
            set,
            case: row.text("case").to_string(),
            real: row.number("real")?,
            simulated: row.optional_number("simulated")?,
            predicted: row.optional_number("predicted")?,
        });
    }
    Ok(out)
}

/// One set's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct SetSummary {
    pub set: &'static str,
    /// Real measurements in the set.
    pub rows: usize,
    pub simulated: Option<Score>,
    pub predicted: Option<Score>,
    /// The best constant's MAPE on the rows the simulator covers.
    pub constant_mape: f64,
}

/// Per set (in [`SETS`] order, the sets present only): each estimate
/// scored on the rows it covers.
pub fn summarise(rows: &[RealRow]) -> Vec<SetSummary> {
    let mut out = Vec::new();
    for set in SETS {
        let of: Vec<&RealRow> = rows.iter().filter(|r| r.set == set).collect();
        if of.is_empty() {
            continue;
        }
        let scored = |pick: fn(&RealRow) -> Option<f64>| {
            let (real, est): (Vec<f64>, Vec<f64>) = of
                .iter()
                .filter_map(|r| pick(r).map(|e| (r.real, e)))
                .unzip();
            (!real.is_empty()).then(|| score(&real, &est))
        };
        let covered: Vec<f64> = of
            .iter()
            .filter(|r| r.simulated.is_some())
            .map(|r| r.real)
            .collect();
        out.push(SetSummary {
            set,
            rows: of.len(),
            simulated: scored(|r| r.simulated),
            predicted: scored(|r| r.predicted),
            constant_mape: constant_mape(&covered),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_and_empty_estimates_stay_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let rows = vec![
            RealRow {
                set: "gpulet-pairs",
                case: "resnet50@1 p20 | vgg19@4 p80".into(),
                real: 1.5,
                simulated: Some(1.25),
                predicted: None,
            },
            RealRow {
                set: "v100-l2",
                case: "1 MB alone ms".into(),
                real: 8.9,
                simulated: None,
                predicted: None,
            },
        ];
        write_rows(&path, &rows).unwrap();
        assert_eq!(read_rows(&path).unwrap(), rows);
        let s = summarise(&rows);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].rows, 1);
        assert!(s[0].predicted.is_none());
        assert!(
            s[1].simulated.is_none(),
            "nothing simulated, nothing scored"
        );
    }

    #[test]
    fn an_unknown_set_is_refused_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(&path, "set,case,real,simulated,predicted\nnope,x,1,,\n").unwrap();
        let e = read_rows(&path).unwrap_err().to_string();
        assert!(e.contains(":2") && e.contains("unknown set `nope`"), "{e}");
    }
}
