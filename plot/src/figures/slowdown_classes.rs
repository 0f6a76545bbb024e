//! Slowdown distribution by pair class (compute+compute, compute+memory,
//! memory+memory by the roofline label of each kernel): one CDF per class.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::canvas::{
    cdf, chart_builder, draw_axes, draw_legend, legend_line, msg, series_color, thin, Curve,
    DrawResult, Figure,
};
use crate::figures::dataset_view::{pair_class, DatasetView, PairClass};

/// Points per curve drawn (the CDF is thinned beyond that).
const CURVE_POINTS: usize = 2000;

#[derive(Debug)]
pub struct SlowdownClasses {
    pub title: String,
    /// Per class, the CDF of both sides' slowdowns.
    pub classes: Vec<(PairClass, usize, Curve)>,
}

impl SlowdownClasses {
    pub fn new(view: &DatasetView) -> SlowdownClasses {
        let mut values: Vec<Vec<f64>> = vec![Vec::new(); PairClass::ALL.len()];
        for p in &view.dataset.pairs {
            let (Some(a), Some(b)) = (view.bound_of(&p.op_a), view.bound_of(&p.op_b)) else {
                continue;
            };
            let c = PairClass::ALL
                .iter()
                .position(|&c| c == pair_class(a, b))
                .unwrap_or(0);
            values[c].extend([p.slowdown_a, p.slowdown_b]);
        }
        let classes = PairClass::ALL
            .into_iter()
            .zip(values)
            .filter(|(_, v)| !v.is_empty())
            .map(|(c, v)| {
                let n = v.len();
                (c, n, thin(&cdf(v), CURVE_POINTS))
            })
            .collect();
        SlowdownClasses {
            title: format!("Slowdown by pair class, {}", view.subject()),
            classes,
        }
    }
}

impl Figure for SlowdownClasses {
    fn name(&self) -> &'static str {
        "slowdown-by-class"
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        let mut hi = self
            .classes
            .iter()
            .flat_map(|c| c.2.iter().map(|p| p.0))
            .fold(1.0f64, f64::max);
        hi = hi.clamp(1.1, 10.0);
        let lo = self
            .classes
            .iter()
            .flat_map(|c| c.2.iter().map(|p| p.0))
            .fold(1.0f64, f64::min)
            .max(0.5);
        let mut chart = chart_builder(area, &self.title)
            .build_cartesian_2d(lo..hi * 1.02, 0.0..1.0)
            .map_err(msg)?;
        draw_axes(
            &mut chart,
            "slowdown (latency beside the co-runner / alone on the same SMs)",
            "fraction of kernel runs (CDF)",
        )?;
        for (i, (class, n, points)) in self.classes.iter().enumerate() {
            let color = series_color(i);
            chart
                .draw_series(LineSeries::new(
                    points.iter().copied(),
                    color.stroke_width(3),
                ))
                .map_err(msg)?
                .label(format!("{} (n = {n})", class.as_str()))
                .legend(legend_line(color));
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    }
}
