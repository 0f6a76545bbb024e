//! The published table beside the simulated one (`tally side-by-side`,
//! scripts/tally-table.sh): simulated against published p99 slowdown and
//! system throughput, one point per pair and policy, the diagonal where
//! they agree.

use plotters::coord::Shift;
use plotters::prelude::*;
use tally_sched::side_by_side::SideRow;

use crate::canvas::{draw_diagonal, draw_legend, font, msg, series_color, DrawResult, Figure};

#[derive(Debug)]
pub struct TableParity {
    pub title: String,
    /// Policies in first-seen order, each with its (published, simulated)
    /// p99 slowdown and system throughput points.
    pub policies: Vec<PolicyPoints>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PolicyPoints {
    pub policy: String,
    pub p99: Vec<(f64, f64)>,
    pub throughput: Vec<(f64, f64)>,
}

impl TableParity {
    pub fn new(rows: &[SideRow]) -> TableParity {
        let mut policies: Vec<PolicyPoints> = Vec::new();
        for r in rows {
            let i = match policies.iter().position(|p| p.policy == r.policy) {
                Some(i) => i,
                None => {
                    policies.push(PolicyPoints {
                        policy: r.policy.clone(),
                        p99: Vec::new(),
                        throughput: Vec::new(),
                    });
                    policies.len() - 1
                }
            };
            if let Some(p) = r.published_p99_slowdown {
                policies[i].p99.push((p, r.p99_slowdown));
            }
            if let Some(p) = r.published_system_throughput {
                policies[i].throughput.push((p, r.system_throughput));
            }
        }
        policies.retain(|p| !p.p99.is_empty() || !p.throughput.is_empty());
        let mut pairs: Vec<(&str, &str)> = rows
            .iter()
            .map(|r| (r.hp.as_str(), r.be.as_str()))
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        TableParity {
            title: format!(
                "Simulated beside published: {} pairs, {} policies with published figures",
                pairs.len(),
                policies.len()
            ),
            policies,
        }
    }

    fn panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        caption: &str,
        unit: &str,
        points: impl Fn(&PolicyPoints) -> &[(f64, f64)],
    ) -> DrawResult {
        let all = self.policies.iter().flat_map(|p| points(p).iter());
        let (lo, hi) = all.fold((f64::INFINITY, 0.0f64), |(lo, hi), &(a, b)| {
            (lo.min(a).min(b), hi.max(a).max(b))
        });
        let (lo, hi) = if lo.is_finite() && hi > lo {
            (lo * 0.9, hi * 1.1)
        } else {
            (0.0, 2.0)
        };
        let mut chart = ChartBuilder::on(area)
            .caption(caption, font(20))
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d(lo..hi, lo..hi)
            .map_err(msg)?;
        chart
            .configure_mesh()
            .x_desc(format!("published {unit}"))
            .y_desc(format!("simulated {unit}"))
            .label_style(font(15))
            .axis_desc_style(font(17))
            .draw()
            .map_err(msg)?;
        draw_diagonal(&mut chart, lo, hi)?;
        for (i, p) in self.policies.iter().enumerate() {
            let color = series_color(i);
            chart
                .draw_series(
                    points(p)
                        .iter()
                        .map(|&xy| Circle::new(xy, 6, color.filled())),
                )
                .map_err(msg)?
                .label(p.policy.as_str())
                .legend(move |(x, y)| Circle::new((x + 10, y), 6, color.filled()));
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)
    }
}

impl Figure for TableParity {
    fn name(&self) -> &'static str {
        "table-parity"
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        let area = area.titled(&self.title, font(24)).map_err(msg)?;
        let halves = area.split_evenly((1, 2));
        self.panel(&halves[0], "HP p99 slowdown", "p99 slowdown (x)", |p| {
            &p.p99
        })?;
        self.panel(&halves[1], "System throughput", "system throughput", |p| {
            &p.throughput
        })
    }
}
