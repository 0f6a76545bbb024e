//! HP latency CDF of a `tally run`: one curve per policy, and the HP job
//! alone (dashed) as the reference every policy is measured against.

use plotters::coord::Shift;
use plotters::prelude::*;
use tally_sched::run_output::{RequestRow, RunTitle};

use crate::canvas::{
    cdf, chart_builder, draw_axes, draw_legend, legend_line, msg, series_color, thin, DrawResult,
    Figure,
};

const CURVE_POINTS: usize = 2000;
/// The policy name of the HP job run alone in `requests.csv`.
pub const ALONE: &str = "alone";

#[derive(Debug)]
pub struct LatencyCdf {
    pub title: String,
    /// Per policy (alone first when present), the CDF of HP latency (ms).
    pub policies: Vec<(String, Vec<(f64, f64)>)>,
}

/// "bert-base:infer beside resnet50:train on H100 SXM (sim engine)".
pub fn run_subject(t: &RunTitle) -> String {
    format!(
        "HP {} beside {} on {} ({} engine)",
        t.hp,
        t.be.join(" + "),
        t.gpu_name,
        t.engine
    )
}

impl LatencyCdf {
    pub fn new(title: &RunTitle, requests: &[RequestRow]) -> LatencyCdf {
        let mut policies: Vec<(String, Vec<f64>)> = Vec::new();
        for r in requests {
            match policies.iter_mut().find(|p| p.0 == r.policy) {
                Some(p) => p.1.push(r.latency_ms),
                None => policies.push((r.policy.clone(), vec![r.latency_ms])),
            }
        }
        policies.sort_by_key(|p| p.0 != ALONE);
        LatencyCdf {
            title: format!("HP latency, {}", run_subject(title)),
            policies: policies
                .into_iter()
                .map(|(p, v)| (p, thin(&cdf(v), CURVE_POINTS)))
                .collect(),
        }
    }
}

impl Figure for LatencyCdf {
    fn name(&self) -> &'static str {
        "hp-latency-cdf"
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        let values = self.policies.iter().flat_map(|p| p.1.iter().map(|q| q.0));
        let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let (lo, hi) = if lo.is_finite() && hi > 0.0 {
            (lo.max(1e-3) * 0.9, hi * 1.1)
        } else {
            (0.1, 10.0)
        };
        let mut chart = chart_builder(area, &self.title)
            .build_cartesian_2d((lo..hi).log_scale(), 0.0..1.0)
            .map_err(msg)?;
        draw_axes(
            &mut chart,
            "HP request latency (ms, log scale)",
            "fraction of HP requests (CDF)",
        )?;
        let mut color_index = 0;
        for (policy, points) in &self.policies {
            let (color, style) = if policy == ALONE {
                (BLACK, BLACK.stroke_width(2))
            } else {
                let c = series_color(color_index);
                color_index += 1;
                (c, c.stroke_width(3))
            };
            let label = if policy == ALONE {
                "HP alone (reference)".to_string()
            } else {
                policy.clone()
            };
            let series = if policy == ALONE {
                chart
                    .draw_series(DashedLineSeries::new(points.iter().copied(), 8, 5, style))
                    .map_err(msg)?
            } else {
                chart
                    .draw_series(LineSeries::new(points.iter().copied(), style))
                    .map_err(msg)?
            };
            series.label(label).legend(legend_line(color));
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    }
}
