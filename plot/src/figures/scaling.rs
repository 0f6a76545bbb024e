//! Standalone scaling curves: a kernel's duration against the SMs it runs
//! on, a few representative kernels (shortest, median, longest) per kind.

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::canvas::{
    chart_builder, draw_axes, draw_legend, legend_line, msg, series_color, DrawResult, Figure,
};
use crate::figures::dataset_view::DatasetView;

/// Kernels drawn per kind.
const PER_KIND: usize = 3;

/// Duration (µs) by SM count, in SM order.
pub type SmCurve = Vec<(u32, f64)>;

#[derive(Debug)]
pub struct Scaling {
    pub title: String,
    /// Kind -> curves of its representative kernels, (SMs, µs) by SMs.
    pub kinds: Vec<(&'static str, Vec<SmCurve>)>,
}

/// Shortest, median and longest of `sorted` (fewer when there are fewer).
pub fn representatives<T: Clone>(sorted: &[T]) -> Vec<T> {
    let n = sorted.len();
    let mut idx = vec![0, n / 2, n.saturating_sub(1)];
    idx.dedup();
    idx.truncate(PER_KIND);
    idx.into_iter()
        .filter(|&i| i < n)
        .map(|i| sorted[i].clone())
        .collect()
}

impl Scaling {
    pub fn new(view: &DatasetView) -> Scaling {
        let mut curves: BTreeMap<&str, Vec<(u32, f64)>> = BTreeMap::new();
        for r in &view.dataset.standalone.rows {
            curves
                .entry(r.op_id.as_str())
                .or_default()
                .push((r.sm_count, r.duration_us));
        }
        let mut by_kind: BTreeMap<&'static str, Vec<Vec<(u32, f64)>>> = BTreeMap::new();
        for op in &view.ops {
            if let Some(c) = curves.get_mut(op.op_id.as_str()) {
                c.sort_by_key(|p| p.0);
                by_kind.entry(op.kind).or_default().push(c.clone());
            }
        }
        let kinds = by_kind
            .into_iter()
            .map(|(kind, mut cs)| {
                // Ordered by the duration on the most SMs.
                cs.sort_by(|a, b| {
                    let last = |c: &Vec<(u32, f64)>| c.last().map_or(0.0, |p| p.1);
                    last(a).total_cmp(&last(b))
                });
                (kind, representatives(&cs))
            })
            .collect();
        Scaling {
            title: format!("Standalone scaling, {}", view.subject()),
            kinds,
        }
    }
}

impl Figure for Scaling {
    fn name(&self) -> &'static str {
        "standalone-scaling"
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        let points = self.kinds.iter().flat_map(|k| k.1.iter().flatten());
        let (mut x_max, mut y_min, mut y_max) = (1u32, f64::INFINITY, 0.0f64);
        for &(x, y) in points {
            x_max = x_max.max(x);
            if y > 0.0 {
                y_min = y_min.min(y);
                y_max = y_max.max(y);
            }
        }
        if !y_min.is_finite() {
            (y_min, y_max) = (1.0, 10.0);
        }
        let mut chart = chart_builder(area, &self.title)
            .build_cartesian_2d(0u32..x_max + 1, (y_min * 0.8..y_max * 1.25).log_scale())
            .map_err(msg)?;
        draw_axes(
            &mut chart,
            "SMs the kernel runs on",
            "duration alone (µs, log scale)",
        )?;
        for (i, (kind, curves)) in self.kinds.iter().enumerate() {
            let color = series_color(i);
            for (j, c) in curves.iter().enumerate() {
                let series = chart
                    .draw_series(LineSeries::new(
                        c.iter().map(|&(x, y)| (x, y)),
                        color.stroke_width(2),
                    ))
                    .map_err(msg)?;
                if j == 0 {
                    series.label(*kind).legend(legend_line(color));
                }
                chart
                    .draw_series(
                        c.iter()
                            .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
                    )
                    .map_err(msg)?;
            }
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn representatives_are_ends_and_middle() {
        assert_eq!(representatives(&[1, 2, 3, 4, 5]), vec![1, 3, 5]);
        assert_eq!(representatives(&[1, 2]), vec![1, 2]);
        assert_eq!(representatives(&[7]), vec![7]);
        assert!(representatives::<u8>(&[]).is_empty());
    }
}
