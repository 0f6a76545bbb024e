//! One real set of `tally real-contention` (`real_contention.csv`): the
//! simulator's and the predictor's figure against the real measurement,
//! one point per measurement, the diagonal where they agree, each
//! estimate's MAPE and Pearson r in the legend beside the best constant's.

use plotters::coord::Shift;
use plotters::prelude::*;
use tally_sched::real_sets::real_output::SetSummary;
use tally_sched::real_sets::{RealRow, SETS};

use crate::canvas::{
    chart_builder, draw_axes, draw_diagonal, draw_legend, msg, series_color, DrawResult, Figure,
};

/// The figure's file name for each set of [`SETS`], in its order.
const NAMES: [&str; 6] = [
    "real-gpulet-pairs",
    "real-gpulet-solo-scaling",
    "real-gpulet-solo-absolute",
    "real-muxserve-scaling",
    "real-v100-bandwidth",
    "real-v100-l2",
];

#[derive(Debug)]
pub struct RealParity {
    name: &'static str,
    title: String,
    /// (legend label, (real, estimate) points).
    series: Vec<(String, Vec<(f64, f64)>)>,
}

impl RealParity {
    /// The figure of `summary`'s set from `rows` (every set's rows).
    pub fn new(summary: &SetSummary, rows: &[RealRow]) -> RealParity {
        let of: Vec<&RealRow> = rows.iter().filter(|r| r.set == summary.set).collect();
        let name = SETS
            .iter()
            .position(|s| *s == summary.set)
            .map_or("real-set", |i| NAMES[i]);
        let mut series = Vec::new();
        for (label, score, pick) in [
            (
                "simulated",
                &summary.simulated,
                (|r: &RealRow| r.simulated) as fn(&RealRow) -> Option<f64>,
            ),
            ("predicted", &summary.predicted, |r: &RealRow| r.predicted),
        ] {
            let Some(s) = score else { continue };
            let r = s
                .pearson_r
                .map_or_else(|| "-".to_string(), |r| format!("{r:.2}"));
            series.push((
                format!("{label}: MAPE {:.1} %, r {r}", s.mape),
                of.iter()
                    .filter_map(|x| pick(x).map(|e| (x.real, e)))
                    .collect(),
            ));
        }
        RealParity {
            name,
            title: format!(
                "{}: {} real measurements (best constant MAPE {:.1} %)",
                summary.set, summary.rows, summary.constant_mape
            ),
            series,
        }
    }
}

impl Figure for RealParity {
    fn name(&self) -> &'static str {
        self.name
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        let all = self.series.iter().flat_map(|s| s.1.iter());
        let (lo, hi) = all.fold((f64::INFINITY, 0.0f64), |(lo, hi), &(a, b)| {
            (lo.min(a).min(b), hi.max(a).max(b))
        });
        let (lo, hi) = if lo.is_finite() && hi > lo {
            (lo * 0.9, hi * 1.1)
        } else {
            (0.0, 2.0)
        };
        let mut chart = chart_builder(area, &self.title)
            .build_cartesian_2d(lo..hi, lo..hi)
            .map_err(msg)?;
        draw_axes(&mut chart, "real", "estimate")?;
        draw_diagonal(&mut chart, lo, hi)?;
        for (i, (label, points)) in self.series.iter().enumerate() {
            let color = series_color(i);
            chart
                .draw_series(points.iter().map(|&xy| Circle::new(xy, 3, color.filled())))
                .map_err(msg)?
                .label(label.as_str())
                .legend(move |(x, y)| Circle::new((x + 10, y), 5, color.filled()));
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)
    }
}
