//! Per-policy bars of a `tally run`: the HP p99 latency overhead over the
//! HP job alone, and the system throughput (HP + BE, each relative to its
//! job alone).

use plotters::coord::Shift;
use plotters::prelude::*;
use tally_sched::run_output::{RunTitle, SummaryRow};

use crate::canvas::{font, msg, series_color, DrawResult, Figure};
use crate::figures::run_latency_cdf::run_subject;

#[derive(Debug)]
pub struct PolicyBars {
    pub title: String,
    /// (policy, p99 overhead %, system throughput).
    pub policies: Vec<(String, f64, f64)>,
}

impl PolicyBars {
    pub fn new(title: &RunTitle, summary: &[SummaryRow]) -> PolicyBars {
        PolicyBars {
            title: format!("Policies, {}", run_subject(title)),
            policies: summary
                .iter()
                .map(|s| (s.policy.clone(), s.p99_overhead_pct, s.system_throughput))
                .collect(),
        }
    }

    fn panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        caption: &str,
        y_desc: &str,
        value: impl Fn(&(String, f64, f64)) -> f64,
    ) -> DrawResult {
        let n = self.policies.len().max(1);
        let values: Vec<f64> = self.policies.iter().map(&value).collect();
        let top = values
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max);
        let bottom = values
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::min);
        let top = if top > 0.0 { top * 1.15 } else { 1.0 };
        let names: Vec<String> = self.policies.iter().map(|p| p.0.clone()).collect();
        let mut chart = ChartBuilder::on(area)
            .caption(caption, font(20))
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(75)
            // A segmented range 0..k holds k + 1 slots.
            .build_cartesian_2d((0..(n - 1).max(1)).into_segmented(), bottom * 1.15..top)
            .map_err(msg)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc("policy")
            .y_desc(y_desc)
            .x_label_formatter(&|x| match x {
                SegmentValue::CenterOf(i) => names.get(*i).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .label_style(font(15))
            .axis_desc_style(font(17))
            .draw()
            .map_err(msg)?;
        chart
            .draw_series(values.iter().enumerate().map(|(i, &v)| {
                let v = if v.is_finite() { v } else { 0.0 };
                let mut bar = Rectangle::new(
                    [
                        (SegmentValue::Exact(i), 0.0),
                        (SegmentValue::Exact(i + 1), v),
                    ],
                    series_color(i).filled(),
                );
                bar.set_margin(0, 0, 12, 12);
                bar
            }))
            .map_err(msg)?;
        Ok(())
    }
}

impl Figure for PolicyBars {
    fn name(&self) -> &'static str {
        "policy-bars"
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        let area = area.titled(&self.title, font(22)).map_err(msg)?;
        let halves = area.split_evenly((1, 2));
        self.panel(
            &halves[0],
            "HP p99 latency overhead",
            "p99 overhead over HP alone (%)",
            |p| p.1,
        )?;
        self.panel(
            &halves[1],
            "System throughput",
            "HP + BE throughput (each relative to alone)",
            |p| p.2,
        )
    }
}
