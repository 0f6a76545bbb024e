//! Error CDF of an evaluation: the absolute percentage error of the
//! co-located latency, one curve per method, its MAPE in the legend.

use plotters::coord::Shift;
use plotters::prelude::*;
use tally_predictor::eval_output::{EvalInfo, Prediction};

use crate::canvas::{
    cdf, chart_builder, draw_axes, draw_legend, legend_line, msg, series_color, thin, Curve,
    DrawResult, Figure,
};
use crate::figures::eval_parity::{by_method, chosen_split, subject};

const CURVE_POINTS: usize = 2000;

#[derive(Debug)]
pub struct ErrorCdf {
    pub title: String,
    /// Per method: MAPE (%) and the CDF of its APE.
    pub methods: Vec<(String, f64, Curve)>,
}

impl ErrorCdf {
    pub fn new(info: &EvalInfo, predictions: &[Prediction]) -> ErrorCdf {
        let split = chosen_split(predictions);
        let methods = by_method(predictions, split)
            .into_iter()
            .map(|(m, ps)| {
                let ape: Vec<f64> = ps.iter().map(|p| p.ape_pct()).collect();
                let mape = ape.iter().sum::<f64>() / ape.len().max(1) as f64;
                (m, mape, thin(&cdf(ape), CURVE_POINTS))
            })
            .collect();
        ErrorCdf {
            title: format!("Prediction error, {}", subject(info, split)),
            methods,
        }
    }
}

impl Figure for ErrorCdf {
    fn name(&self) -> &'static str {
        "eval-error-cdf"
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        // The x range stops at the worst method's 95th percentile: the tail
        // of a bad baseline would squash every other curve.
        let hi = self
            .methods
            .iter()
            .filter_map(|m| m.2.iter().find(|p| p.1 >= 0.95).map(|p| p.0))
            .fold(1.0f64, f64::max);
        let mut chart = chart_builder(area, &self.title)
            .build_cartesian_2d(0.0..hi * 1.05, 0.0..1.0)
            .map_err(msg)?;
        draw_axes(
            &mut chart,
            "absolute error of the co-located latency (%)",
            "fraction of test samples (CDF)",
        )?;
        for (i, (method, mape, points)) in self.methods.iter().enumerate() {
            let color = series_color(i);
            chart
                .draw_series(LineSeries::new(
                    points.iter().copied(),
                    color.stroke_width(3),
                ))
                .map_err(msg)?
                .label(format!("{method} (MAPE {mape:.1} %)"))
                .legend(legend_line(color));
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    }
}
