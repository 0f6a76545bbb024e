//! Nsight Compute CSV import: the exports users have — the wide raw page
//! (`ncu --csv --page raw`, one launch per row) and the long details page
//! (`--page details`, what `--set full` and `--section` runs print, one
//! metric per row, metrics under their section display names), from
//! current and older ncu releases — read into the same counter columns the
//! simulator writes, so a profile measured by `ncu` on any machine feeds
//! the predictor like one measured by tally; the GPU spec an export implies;
//! and running ncu on one stand-in for `tally profile --counters ncu`.

mod assemble;
mod collect;
mod coverage;
mod display_names;
mod error;
mod line;
mod parse;
mod read;
mod run;
mod spec;
mod units;

pub use collect::{metrics_list, ncu_command_for, ncu_flags_for, ncu_metrics_arg};
pub use coverage::KernelCoverage;
pub use display_names::display_name;
pub use error::NcuCsvError;
pub use read::{parse_ncu_csv, read_ncu_csv};
pub use run::{counters_of, locate_ncu, NcuRunner};
pub use spec::{spec_from_report, DerivedSpec, SpecNotDerived};

use std::collections::BTreeMap;

use crate::counters::Counter;
use crate::kernel::Dim3;

/// Which of the CSV layouts a file used (informational).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NcuLayout {
    /// One launch per row, one column per metric, units in the second row.
    Wide,
    /// One metric per row (`Metric Name`, `Metric Unit`, `Metric Value`).
    Long,
}

impl NcuLayout {
    pub fn as_str(&self) -> &'static str {
        match self {
            NcuLayout::Wide => "wide",
            NcuLayout::Long => "long",
        }
    }
}

/// One profiled kernel launch.
#[derive(Debug, Clone, PartialEq)]
pub struct NcuLaunch {
    /// The `ID` column: ncu's launch number.
    pub id: String,
    /// 1-based line of the launch's first row in the file, for messages.
    pub line: usize,
    pub kernel_name: String,
    /// From the `Grid Size` column, else `launch__grid_size` (as a 1-D
    /// grid); `None` when the file has neither.
    pub grid: Option<Dim3>,
    /// Likewise from `Block Size` / `launch__block_size`.
    pub block: Option<Dim3>,
    /// The `Device` column, when the file has one.
    pub device: Option<u32>,
    /// The `CC` column (`9.0`), when the file has one.
    pub compute_capability: Option<String>,
    /// Values in tally's units (ns, bytes, percent), indexed by `Counter::index`.
    values: Vec<Option<f64>>,
    /// `device__attribute_*` values the file printed for the launch.
    pub device_attributes: BTreeMap<String, f64>,
}

impl NcuLaunch {
    /// Counter `c`, if the file measured it for this launch.
    pub fn counter(&self, c: Counter) -> Option<f64> {
        self.values[c.index()]
    }

    /// Counters of `Counter::ALL` this launch has.
    pub fn present(&self) -> Vec<Counter> {
        Counter::ALL
            .iter()
            .copied()
            .filter(|c| self.counter(*c).is_some())
            .collect()
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

/// Every launch of one ncu CSV, in launch (`ID`) order.
#[derive(Debug, Clone, PartialEq)]
pub struct NcuReport {
    pub layout: NcuLayout,
    pub launches: Vec<NcuLaunch>,
    /// Metric names in the file that are not tally counters (ignored), sorted.
    pub ignored_metrics: Vec<String>,
    /// For each counter present, the names in the file it was read from
    /// (a raw metric name, or section display names), in `Counter::ALL` order.
    pub mapped_from: Vec<(Counter, Vec<String>)>,
    /// Lines after the header that were not CSV rows (the program's output).
    pub skipped_lines: Vec<usize>,
    /// ncu's `==ERROR==` lines.
    pub ncu_errors: Vec<String>,
}
