//! The files of `tally eval --out DIR`: `predictions.csv` (every test
//! sample's measured and predicted co-located latency per method),
//! `metrics.csv` (the error table) and `eval.json` (what was evaluated);
//! writers (atomic) and readers.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tally_datasets::{write_atomic, DatasetError};

use crate::error::{PredictorError, Result};
use crate::eval::EvalRow;
pub use crate::eval::Prediction;

pub const PREDICTIONS_CSV: &str = "predictions.csv";
pub const METRICS_CSV: &str = "metrics.csv";
pub const EVAL_JSON: &str = "eval.json";

/// What `eval.json` records: enough to title a figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalInfo {
    pub gpu: String,
    pub models: Vec<String>,
    pub datasets: Vec<String>,
    pub command_line: Vec<String>,
}

/// The paths of an eval directory's files.
pub fn eval_files(dir: &Path) -> [PathBuf; 3] {
    [
        dir.join(PREDICTIONS_CSV),
        dir.join(METRICS_CSV),
        dir.join(EVAL_JSON),
    ]
}

/// Write the three files of an eval directory (created if missing).
pub fn write_eval_dir(
    dir: &Path,
    info: &EvalInfo,
    rows: &[EvalRow],
    predictions: &[Prediction],
) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| DatasetError::io(dir, e))?;
    let [pred_path, metrics_path, info_path] = eval_files(dir);
    write_csv(&pred_path, predictions)?;
    write_csv(&metrics_path, rows)?;
    let io = |source: std::io::Error| DatasetError::Io {
        path: info_path.clone(),
        source,
    };
    write_atomic(&info_path, |w| {
        serde_json::to_writer_pretty(&mut *w, info).map_err(|e| io(e.into()))?;
        std::io::Write::write_all(w, b"\n").map_err(io)
    })?;
    Ok(())
}

fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> Result<()> {
    let io = |source: std::io::Error| DatasetError::Io {
        path: path.to_path_buf(),
        source,
    };
    write_atomic(path, |w| {
        let mut out = csv::Writer::from_writer(w);
        for r in rows {
            out.serialize(r).map_err(|e| io(e.into()))?;
        }
        out.flush().map_err(io)
    })?;
    Ok(())
}

/// Read `predictions.csv`; a missing column, a bad number or an empty file
/// is an error naming the file.
pub fn read_predictions(path: &Path) -> Result<Vec<Prediction>> {
    let bad = |message: String| PredictorError::EvalFile {
        path: path.to_path_buf(),
        message,
    };
    let mut r = csv::Reader::from_path(path).map_err(|e| bad(e.to_string()))?;
    let rows = r
        .deserialize()
        .enumerate()
        .map(|(i, row)| row.map_err(|e| bad(format!("row {}: {e}", i + 1))))
        .collect::<Result<Vec<Prediction>>>()?;
    if rows.is_empty() {
        return Err(bad("holds no prediction".to_string()));
    }
    if let Some(p) = rows
        .iter()
        .find(|p| !(p.measured_us > 0.0 && p.predicted_us.is_finite()))
    {
        return Err(bad(format!(
            "method {} has measured {} µs, predicted {} µs: expected a positive measurement \
             and a finite prediction",
            p.method, p.measured_us, p.predicted_us
        )));
    }
    Ok(rows)
}

/// Read `eval.json`.
pub fn read_eval_info(path: &Path) -> Result<EvalInfo> {
    let bad = |message: String| PredictorError::EvalFile {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| bad(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Prediction {
        Prediction {
            method: "linear".into(),
            split: "random".into(),
            held_out: "all".into(),
            model: "bert-base".into(),
            pair: 3,
            memory_bound: true,
            co_memory_bound: false,
            solo_us: 10.0,
            measured_us: 12.0,
            predicted_us: 11.0,
        }
    }

    #[test]
    fn predictions_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let info = EvalInfo {
            gpu: "H100".into(),
            models: vec!["bert-base".into()],
            datasets: vec!["d".into()],
            command_line: vec![],
        };
        write_eval_dir(dir.path(), &info, &[], &[sample()]).unwrap();
        let back = read_predictions(&dir.path().join(PREDICTIONS_CSV)).unwrap();
        assert_eq!(back, vec![sample()]);
        assert_eq!(read_eval_info(&dir.path().join(EVAL_JSON)).unwrap(), info);
        assert!((back[0].ape_pct() - 100.0 / 12.0).abs() < 1e-12);
    }

    #[test]
    fn a_damaged_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(PREDICTIONS_CSV);
        std::fs::write(&path, "method,split\nlinear").unwrap();
        let e = read_predictions(&path).unwrap_err().to_string();
        assert!(e.contains("predictions.csv"), "{e}");
    }
}
