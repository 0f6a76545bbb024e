//! Pair slowdown heatmap: the slowdown of a kernel (row) beside a co-runner
//! (column), kernels ordered by memory-path demand, one panel per SM split.

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::canvas::{font, heat_color, msg, DrawResult, Figure};
use crate::figures::dataset_view::DatasetView;

/// Beyond this many kernels, neighbours in demand order share a cell, so a
/// large dataset stays readable and an SVG stays small.
const MAX_CELLS: usize = 48;
/// Panels drawn at most (splits evenly picked beyond that).
const MAX_PANELS: usize = 4;

/// Per (kernel bin, co-runner bin): the sum and count of slowdowns.
type CellSums = BTreeMap<(usize, usize), (f64, u32)>;

/// Mean slowdown per (victim bin, co-runner bin) of one split.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// (SMs of the kernel, SMs of its co-runner).
    pub split: (u32, u32),
    pub cells: Vec<(usize, usize, f64)>,
}

#[derive(Debug)]
pub struct Heatmap {
    pub title: String,
    pub bins: usize,
    pub panels: Vec<Panel>,
    /// Colour scale's top: the 99th percentile slowdown.
    pub top: f64,
}

/// The bin of demand rank `r` among `n` kernels split into `bins` cells.
pub fn bin_of(r: usize, n: usize, bins: usize) -> usize {
    if n <= bins {
        r
    } else {
        r * bins / n
    }
}

impl Heatmap {
    pub fn new(view: &DatasetView) -> Heatmap {
        let n = view.ops.len();
        let bins = n.clamp(1, MAX_CELLS);
        let mut sums: BTreeMap<(u32, u32), CellSums> = BTreeMap::new();
        let mut all = Vec::new();
        for p in &view.dataset.pairs {
            let (Some(&ra), Some(&rb)) = (
                view.rank.get(p.op_a.as_str()),
                view.rank.get(p.op_b.as_str()),
            ) else {
                continue;
            };
            let (ba, bb) = (bin_of(ra, n, bins), bin_of(rb, n, bins));
            for (split, cell, s) in [
                ((p.sm_a, p.sm_b), (ba, bb), p.slowdown_a),
                ((p.sm_b, p.sm_a), (bb, ba), p.slowdown_b),
            ] {
                if !s.is_finite() {
                    continue;
                }
                let e = sums.entry(split).or_default().entry(cell).or_default();
                e.0 += s;
                e.1 += 1;
                all.push(s);
            }
        }
        all.sort_by(f64::total_cmp);
        let top = all
            .get(((all.len() as f64 * 0.99) as usize).min(all.len().saturating_sub(1)))
            .copied()
            .unwrap_or(1.0)
            .max(1.05);
        let splits: Vec<(u32, u32)> = sums.keys().copied().collect();
        let chosen: Vec<(u32, u32)> = if splits.len() <= MAX_PANELS {
            splits
        } else {
            (0..MAX_PANELS)
                .map(|i| splits[i * (splits.len() - 1) / (MAX_PANELS - 1)])
                .collect()
        };
        let panels = chosen
            .into_iter()
            .map(|split| Panel {
                split,
                cells: sums[&split]
                    .iter()
                    .map(|(&(a, b), &(s, c))| (a, b, s / f64::from(c)))
                    .collect(),
            })
            .collect();
        Heatmap {
            title: format!("Pair slowdown, {}", view.subject()),
            bins,
            panels,
            top,
        }
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        panel: &Panel,
    ) -> DrawResult {
        let n = self.bins;
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!(
                    "kernel on {} SMs beside co-runner on {} SMs",
                    panel.split.0, panel.split.1
                ),
                font(18),
            )
            .margin(8)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0..n, 0..n)
            .map_err(msg)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("co-runner (memory-path demand rank, low to high)")
            .y_desc("kernel (demand rank)")
            .label_style(font(13))
            .axis_desc_style(font(14))
            .draw()
            .map_err(msg)?;
        chart
            .draw_series(panel.cells.iter().map(|&(a, b, s)| {
                let t = (s - 1.0) / (self.top - 1.0);
                Rectangle::new([(b, a), (b + 1, a + 1)], heat_color(t).filled())
            }))
            .map_err(msg)?;
        Ok(())
    }
}

impl Figure for Heatmap {
    fn name(&self) -> &'static str {
        "pair-slowdown-heatmap"
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        let area = area.titled(&self.title, font(26)).map_err(msg)?;
        let (plots, bar) = area.split_horizontally(area.dim_in_pixel().0 - 130);
        let cols = if self.panels.len() > 1 { 2 } else { 1 };
        let rows = self.panels.len().div_ceil(cols).max(1);
        for (sub, panel) in plots.split_evenly((rows, cols)).iter().zip(&self.panels) {
            self.draw_panel(sub, panel)?;
        }
        draw_color_bar(&bar, self.top)
    }
}

/// The slowdown scale beside the panels: 1.0 (no slowdown) at the bottom.
fn draw_color_bar<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, top: f64) -> DrawResult {
    let mut chart = ChartBuilder::on(area)
        .margin_top(60)
        .margin_bottom(60)
        .margin_right(10)
        .y_label_area_size(0)
        .right_y_label_area_size(60)
        .caption("slowdown (x)", font(14))
        .build_cartesian_2d(0.0..1.0, 1.0..top)
        .map_err(msg)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .label_style(font(13))
        .y_label_formatter(&|v| format!("{v:.2}"))
        .draw()
        .map_err(msg)?;
    let steps = 64;
    chart
        .draw_series((0..steps).map(|i| {
            let lo = 1.0 + (top - 1.0) * i as f64 / steps as f64;
            let hi = 1.0 + (top - 1.0) * (i + 1) as f64 / steps as f64;
            Rectangle::new(
                [(0.0, lo), (1.0, hi)],
                heat_color(i as f64 / (steps - 1) as f64).filled(),
            )
        }))
        .map_err(msg)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_keep_order_and_stay_in_range() {
        assert_eq!(bin_of(3, 10, 48), 3);
        assert_eq!(bin_of(0, 1000, 48), 0);
        assert_eq!(bin_of(999, 1000, 48), 47);
        assert!(bin_of(500, 1000, 48) <= bin_of(501, 1000, 48));
    }
}
