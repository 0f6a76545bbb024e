//! Few-shot correction at task level: the user's own co-located
//! measurements (`--measured FILE.csv`, columns `task,partner,sm_count,
//! colocated_ms`) correct the predictions for those tasks.
//!
//! As the operator-level few-shot correction does (`tally_predictor::adapt`),
//! the correction of a query is a kernel-weighted mean of the measured
//! log residuals (log measured minus log predicted co-located latency) of
//! the same task, shrunk towards no correction: a measurement with the same
//! partner at the same split says most, one at another split or with
//! another partner less, and with none of the task's the prediction stands.

use std::path::Path;

use crate::csv_columns::CsvColumns;
use crate::error::RunError;

/// Width of the split kernel, as a fraction of the GPU's SMs: measurements
/// a quarter of the GPU apart weigh e^-1/2 of a same-split one (the task
/// slowdown changes smoothly with the split).
const SPLIT_BANDWIDTH: f64 = 0.25;
/// Weight of a measurement with another partner than the query's, against
/// one with the same partner: part of a task's residual is its own (the
/// predictor's error on its kernels), part is the pair's.
const OTHER_PARTNER_WEIGHT: f64 = 0.5;
/// Pseudo-weight of "no correction": a single far or foreign measurement
/// corrects only part of the way.
const PRIOR_WEIGHT: f64 = 0.25;

/// One measured co-located latency.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredRow {
    pub task: String,
    pub partner: String,
    pub sm_count: u32,
    pub colocated_us: f64,
    /// `file:line`, for errors.
    pub at: String,
}

/// Read `path`: columns `task,partner,sm_count,colocated_ms`.
pub fn read_measured(path: &Path) -> Result<Vec<MeasuredRow>, RunError> {
    let table = CsvColumns::read(path, &["task", "partner", "sm_count", "colocated_ms"])?;
    let mut out = Vec::new();
    for row in table.rows() {
        let text = |c: &str| -> Result<String, RunError> {
            let t = row.text(c);
            if t.is_empty() {
                return Err(row.error(c, "expected a task name, found nothing".into()));
            }
            Ok(t.to_string())
        };
        let sm = row.number("sm_count")?;
        if !(sm >= 1.0 && sm.fract() == 0.0 && sm <= f64::from(u32::MAX)) {
            return Err(row.error("sm_count", format!("expected an SM count, found `{sm}`")));
        }
        let ms = row.number("colocated_ms")?;
        if ms <= 0.0 {
            return Err(row.error(
                "colocated_ms",
                format!("expected a positive latency, found `{ms}`"),
            ));
        }
        out.push(MeasuredRow {
            task: text("task")?,
            partner: text("partner")?,
            sm_count: sm as u32,
            colocated_us: ms * 1e3,
            at: row.location(),
        });
    }
    if out.is_empty() {
        return Err(RunError::Input {
            what: path.display().to_string(),
            reason: "no measured rows".into(),
        });
    }
    Ok(out)
}

/// Measured log residuals, ready to correct predictions.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskCorrection {
    /// `(task, partner, sm_count, log residual)`.
    points: Vec<(String, String, u32, f64)>,
    gpu_sms: u32,
}

impl TaskCorrection {
    /// From measured rows and the prediction at each of them.
    pub fn fit(
        rows: &[MeasuredRow],
        mut predicted_us: impl FnMut(&MeasuredRow) -> Result<f64, RunError>,
        gpu_sms: u32,
    ) -> Result<TaskCorrection, RunError> {
        let mut points = Vec::with_capacity(rows.len());
        for r in rows {
            let p = predicted_us(r)?;
            points.push((
                r.task.clone(),
                r.partner.clone(),
                r.sm_count,
                (r.colocated_us / p).ln(),
            ));
        }
        Ok(TaskCorrection { points, gpu_sms })
    }

    /// Factor to multiply the predicted co-located latency of `task` beside
    /// `partner` on `sm_count` SMs by; `None` when no measurement is of
    /// `task`.
    pub fn factor(&self, task: &str, partner: &str, sm_count: u32) -> Option<f64> {
        let width = SPLIT_BANDWIDTH * f64::from(self.gpu_sms.max(1));
        let (mut sum, mut weight) = (0.0, 0.0);
        for (t, p, sm, residual) in &self.points {
            if t != task {
                continue;
            }
            let d = (f64::from(*sm) - f64::from(sm_count)) / width;
            let w = (-0.5 * d * d).exp()
                * if p == partner {
                    1.0
                } else {
                    OTHER_PARTNER_WEIGHT
                };
            sum += w * residual;
            weight += w;
        }
        (weight > 0.0).then(|| (sum / (weight + PRIOR_WEIGHT)).exp())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(task: &str, partner: &str, sm: u32, us: f64) -> MeasuredRow {
        MeasuredRow {
            task: task.into(),
            partner: partner.into(),
            sm_count: sm,
            colocated_us: us,
            at: "m.csv:2".into(),
        }
    }

    #[test]
    fn a_measurement_pulls_its_own_point_most_and_leaves_other_tasks_alone() {
        // Predicted 100 us everywhere; measured 150 us for a beside b on 40 SMs.
        let c = TaskCorrection::fit(&[row("a", "b", 40, 150.0)], |_| Ok(100.0), 108).unwrap();
        let here = c.factor("a", "b", 40).unwrap();
        let far = c.factor("a", "b", 100).unwrap();
        let other = c.factor("a", "c", 40).unwrap();
        assert!(here > 1.3 && here < 1.5, "{here}");
        assert!(far > 1.0 && far < here, "{far}");
        assert!(other > 1.0 && other < here, "{other}");
        assert_eq!(c.factor("b", "a", 40), None);
    }

    #[test]
    fn a_malformed_file_names_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.csv");
        std::fs::write(
            &path,
            "task,partner,sm_count,colocated_ms\na,b,40,1.5\na,b,x,2\n",
        )
        .unwrap();
        let err = read_measured(&path).unwrap_err().to_string();
        assert!(err.contains("m.csv:3") && err.contains("sm_count"), "{err}");
        std::fs::write(&path, "task,partner,colocated_ms\na,b,1.5\n").unwrap();
        let err = read_measured(&path).unwrap_err().to_string();
        assert!(err.contains("m.csv:1") && err.contains("sm_count"), "{err}");
    }
}
