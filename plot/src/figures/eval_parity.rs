//! Parity plot of an evaluation: predicted against measured co-located
//! latency, one panel per method, the diagonal where they agree.

use plotters::coord::Shift;
use plotters::prelude::*;
use tally_predictor::eval_output::{EvalInfo, Prediction};

use crate::canvas::{draw_diagonal, font, msg, series_color, DrawResult, Figure};

/// Points drawn per panel at most (evenly picked beyond that).
const MAX_POINTS: usize = 4000;

#[derive(Debug)]
pub struct Parity {
    pub title: String,
    /// Per method, its (measured, predicted) points in µs.
    pub methods: Vec<(String, Vec<(f64, f64)>)>,
}

/// The split the eval figures draw: the random split when it was run (all
/// models, one test set), else leave-one-model-out.
pub fn chosen_split(predictions: &[Prediction]) -> &'static str {
    if predictions.iter().any(|p| p.split == "random") {
        "random"
    } else {
        "loo"
    }
}

/// Methods in first-seen order with their predictions on `split`.
pub fn by_method<'a>(
    predictions: &'a [Prediction],
    split: &str,
) -> Vec<(String, Vec<&'a Prediction>)> {
    let mut out: Vec<(String, Vec<&Prediction>)> = Vec::new();
    for p in predictions.iter().filter(|p| p.split == split) {
        match out.iter_mut().find(|m| m.0 == p.method) {
            Some(m) => m.1.push(p),
            None => out.push((p.method.clone(), vec![p])),
        }
    }
    out
}

/// "bert-base, gpt2 on H100 SXM, random split".
pub fn subject(info: &EvalInfo, split: &str) -> String {
    let split = if split == "random" {
        "random 20 % split"
    } else {
        "leave-one-model-out"
    };
    format!("{} on {}, {split}", info.models.join(", "), info.gpu)
}

impl Parity {
    pub fn new(info: &EvalInfo, predictions: &[Prediction]) -> Parity {
        let split = chosen_split(predictions);
        let methods = by_method(predictions, split)
            .into_iter()
            .map(|(m, ps)| {
                let step = ps.len().div_ceil(MAX_POINTS).max(1);
                let pts = ps
                    .iter()
                    .step_by(step)
                    .map(|p| (p.measured_us, p.predicted_us))
                    .collect();
                (m, pts)
            })
            .collect();
        Parity {
            title: format!(
                "Predicted vs measured co-located latency, {}",
                subject(info, split)
            ),
            methods,
        }
    }
}

impl Figure for Parity {
    fn name(&self) -> &'static str {
        "eval-parity"
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        let area = area.titled(&self.title, font(24)).map_err(msg)?;
        let all = self.methods.iter().flat_map(|m| m.1.iter());
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        for &(a, b) in all {
            for v in [a, b] {
                if v > 0.0 && v.is_finite() {
                    lo = lo.min(v);
                    hi = hi.max(v);
                }
            }
        }
        if !lo.is_finite() {
            (lo, hi) = (1.0, 10.0);
        }
        let (lo, hi) = (lo * 0.8, hi * 1.25);
        let cols = self.methods.len().clamp(1, 3);
        let rows = self.methods.len().div_ceil(cols).max(1);
        for (i, (sub, (method, pts))) in area
            .split_evenly((rows, cols))
            .iter()
            .zip(&self.methods)
            .enumerate()
        {
            let mut chart = ChartBuilder::on(sub)
                .caption(method, font(18))
                .margin(8)
                .x_label_area_size(40)
                .y_label_area_size(60)
                .build_cartesian_2d((lo..hi).log_scale(), (lo..hi).log_scale())
                .map_err(msg)?;
            chart
                .configure_mesh()
                .x_desc("measured (µs)")
                .y_desc("predicted (µs)")
                .x_labels(5)
                .y_labels(5)
                .label_style(font(12))
                .axis_desc_style(font(14))
                .draw()
                .map_err(msg)?;
            draw_diagonal(&mut chart, lo, hi)?;
            let color = series_color(i);
            chart
                .draw_series(
                    pts.iter()
                        .filter(|(a, b)| *a > 0.0 && *b > 0.0)
                        .map(|&(a, b)| Circle::new((a, b), 2, color.mix(0.5).filled())),
                )
                .map_err(msg)?;
        }
        Ok(())
    }
}
