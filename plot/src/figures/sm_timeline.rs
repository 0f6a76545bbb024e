//! SM occupancy timeline of a `tally run --timeline`: for each policy, how
//! many SMs each job's blocks hold over the recorded window, as step lines
//! (one panel per policy, at most [`MAX_PANELS`]), from the block-level
//! engine's own residency (`timeline.csv`).

use plotters::coord::Shift;
use plotters::prelude::*;
use tally_sched::run_output::{RunTitle, TimelineRow};

use crate::canvas::{draw_legend, font, legend_line, msg, series_color, DrawResult, Figure};
use crate::figures::run_latency_cdf::run_subject;

/// Policies drawn at most (the first ones of the file): more panels than
/// this are too thin to read at 1200x800.
pub const MAX_PANELS: usize = 4;

/// One job's SM count as a step function: `(time ms, SMs)` at each change.
type Steps = Vec<(f64, f64)>;

#[derive(Debug)]
pub struct SmTimeline {
    pub title: String,
    pub sm_count: f64,
    pub end_ms: f64,
    /// Per policy, per job: its steps.
    pub panels: Vec<(String, Vec<(String, Steps)>)>,
}

impl SmTimeline {
    pub fn new(title: &RunTitle, sm_count: u32, rows: &[TimelineRow]) -> SmTimeline {
        let mut panels: Vec<(String, Vec<(String, Steps)>)> = Vec::new();
        let mut end_ms = 0.0f64;
        for r in rows {
            end_ms = end_ms.max(r.time_ms);
            let panel = match panels.iter().position(|p| p.0 == r.policy) {
                Some(i) => &mut panels[i],
                None => {
                    if panels.len() == MAX_PANELS {
                        continue;
                    }
                    panels.push((r.policy.clone(), Vec::new()));
                    panels.last_mut().expect("just pushed")
                }
            };
            let job = match panel.1.iter().position(|j| j.0 == r.job) {
                Some(i) => &mut panel.1[i],
                None => {
                    panel.1.push((r.job.clone(), Vec::new()));
                    panel.1.last_mut().expect("just pushed")
                }
            };
            job.1.push((r.time_ms, r.sm_count));
        }
        SmTimeline {
            title: format!("SMs held by each job, {}", run_subject(title)),
            sm_count: f64::from(sm_count),
            end_ms: if end_ms > 0.0 { end_ms } else { 1.0 },
            panels,
        }
    }

    /// The step line of `steps` up to `end`: each value holds until the next
    /// change.
    fn stairs(steps: &[(f64, f64)], end: f64) -> Vec<(f64, f64)> {
        let mut out = Vec::with_capacity(steps.len() * 2 + 1);
        for (i, &(t, v)) in steps.iter().enumerate() {
            out.push((t, v));
            let next = steps.get(i + 1).map_or(end, |s| s.0);
            out.push((next, v));
        }
        out
    }
}

impl Figure for SmTimeline {
    fn name(&self) -> &'static str {
        "sm-timeline"
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        let area = area.titled(&self.title, font(22)).map_err(msg)?;
        let rows = area.split_evenly((self.panels.len().max(1), 1));
        for ((policy, jobs), panel) in self.panels.iter().zip(rows.iter()) {
            let mut chart = ChartBuilder::on(panel)
                .caption(policy, font(18))
                .margin(8)
                .x_label_area_size(40)
                .y_label_area_size(70)
                .build_cartesian_2d(0.0..self.end_ms, 0.0..self.sm_count * 1.05)
                .map_err(msg)?;
            chart
                .configure_mesh()
                .x_desc("time since the run's start (ms)")
                .y_desc("SMs holding blocks")
                .label_style(font(14))
                .axis_desc_style(font(15))
                .draw()
                .map_err(msg)?;
            for (i, (job, steps)) in jobs.iter().enumerate() {
                let color = series_color(i);
                chart
                    .draw_series(LineSeries::new(
                        SmTimeline::stairs(steps, self.end_ms),
                        color.stroke_width(2),
                    ))
                    .map_err(msg)?
                    .label(job.clone())
                    .legend(legend_line(color));
            }
            draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_holds_until_the_next_change() {
        let s = SmTimeline::stairs(&[(0.0, 10.0), (2.0, 4.0)], 5.0);
        assert_eq!(s, vec![(0.0, 10.0), (2.0, 10.0), (2.0, 4.0), (5.0, 4.0)]);
    }

    #[test]
    fn panels_group_rows_by_policy_and_job() {
        let row = |policy: &str, t: f64, job: &str, n: f64| TimelineRow {
            policy: policy.into(),
            time_ms: t,
            job: job.into(),
            sm_count: n,
        };
        let title = RunTitle {
            engine: "sim".into(),
            hp: "hp".into(),
            be: vec!["be".into()],
            gpu_name: "a100-40gb".into(),
        };
        let rows = [
            row("mps", 0.0, "be", 108.0),
            row("mps", 0.5, "hp", 20.0),
            row("mps", 0.5, "be", 88.0),
            row("tally", 0.0, "hp", 30.0),
        ];
        let t = SmTimeline::new(&title, 108, &rows);
        assert_eq!(t.panels.len(), 2);
        assert_eq!(t.panels[0].1.len(), 2);
        assert_eq!(t.panels[0].1[0].1, vec![(0.0, 108.0), (0.5, 88.0)]);
        assert_eq!(t.end_ms, 0.5);
    }
}
