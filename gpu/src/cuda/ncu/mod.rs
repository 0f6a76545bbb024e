//! Nsight Compute CSV import: `ncu --csv --page raw --print-units base
//! --metrics ...` output (and the one-metric-per-row long form) read into
//! the same counter columns the simulator writes, so a profile measured by
//! `ncu` on any machine feeds the predictor like one measured by tally;
//! and running ncu on one stand-in for `tally profile --counters ncu`.

mod error;
mod line;
mod parse;
mod run;
mod units;

pub use error::NcuCsvError;
pub use parse::{parse_ncu_csv, read_ncu_csv};
pub use run::{counters_of, locate_ncu, NcuRunner};

use crate::counters::Counter;
use crate::kernel::Dim3;

/// The `--metrics` list to give `ncu` so that its CSV holds every counter
/// tally's datasets carry.
pub fn ncu_metrics_arg() -> String {
    Counter::ALL
        .iter()
        .map(Counter::name)
        .collect::<Vec<_>>()
        .join(",")
}

/// Which of the CSV layouts a file used (informational).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NcuLayout {
    /// One launch per row, one column per metric, units in the second row.
    Wide,
    /// One metric per row (`Metric Name`, `Metric Unit`, `Metric Value`).
    Long,
}

/// One profiled kernel launch.
#[derive(Debug, Clone, PartialEq)]
pub struct NcuLaunch {
    /// The `ID` column: ncu's launch number.
    pub id: String,
    /// 1-based line of the launch's (first) row, for messages.
    pub line: usize,
    pub kernel_name: String,
    pub grid: Dim3,
    pub block: Dim3,
    /// The `Device` column, when the file has one.
    pub device: Option<u32>,
    /// The `CC` column (`9.0`), when the file has one.
    pub compute_capability: Option<String>,
    /// Values in tally's units (ns, bytes, percent), indexed by `Counter::index`.
    values: Vec<Option<f64>>,
}

impl NcuLaunch {
    /// Counter `c`, if the file measured it for this launch.
    pub fn counter(&self, c: Counter) -> Option<f64> {
        self.values[c.index()]
    }

    /// Counters of `Counter::ALL` this launch lacks.
    pub fn missing(&self) -> Vec<Counter> {
        Counter::ALL
            .iter()
            .copied()
            .filter(|c| self.counter(*c).is_none())
            .collect()
    }

    /// `gpu__time_duration.sum` in microseconds.
    pub fn duration_us(&self) -> Option<f64> {
        self.counter(Counter::DurationNs).map(|ns| ns / 1000.0)
    }
}

/// Every launch of one ncu CSV, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct NcuReport {
    pub layout: NcuLayout,
    pub launches: Vec<NcuLaunch>,
    /// Metric names in the file that are not tally counters (ignored).
    pub ignored_metrics: Vec<String>,
}
