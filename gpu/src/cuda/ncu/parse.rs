//! The parser. Both layouts share the identifying columns; which one a file
//! uses is told by its header (`Metric Name` and `Metric Value` mean one
//! metric per row). Lines before the header (`==PROF==` messages, the
//! program's own output) and `==...==` lines after it are skipped.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::error::NcuCsvError;
use super::line::split_record;
use super::units::factor;
use super::{NcuLaunch, NcuLayout, NcuReport};
use crate::counters::Counter;
use crate::kernel::Dim3;

/// Columns that identify a launch or describe a row, never a metric.
const IDENTITY_COLUMNS: [&str; 16] = [
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Kernel Time",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
    "Section Name",
    "Metric Name",
    "Metric Unit",
    "Metric Value",
];

/// Names the details page gives some of tally's counters in the long form.
const DETAIL_NAMES: [(&str, Counter); 21] = [
    ("Duration", Counter::DurationNs),
    ("Compute (SM) Throughput", Counter::SmThroughputPct),
    ("Issue Slots Busy", Counter::IssueActivePct),
    ("Executed Ipc Active", Counter::IpcActive),
    ("Achieved Occupancy", Counter::AchievedOccupancyPct),
    ("L1/TEX Hit Rate", Counter::L1HitRatePct),
    ("L1/TEX Cache Throughput", Counter::L1ThroughputPct),
    ("L2 Cache Throughput", Counter::L2ThroughputPct),
    ("L2 Hit Rate", Counter::L2HitRatePct),
    ("DRAM Throughput", Counter::DramThroughputPct),
    ("Grid Size", Counter::GridSize),
    ("Block Size", Counter::BlockSize),
    ("Registers Per Thread", Counter::RegistersPerThread),
    ("Static Shared Memory Per Block", Counter::SharedMemStatic),
    ("Dynamic Shared Memory Per Block", Counter::SharedMemDynamic),
    ("# SMs", Counter::SmCount),
    ("Waves Per SM", Counter::WavesPerSm),
    ("Block Limit Registers", Counter::OccLimitRegisters),
    ("Block Limit Shared Mem", Counter::OccLimitSharedMem),
    ("Block Limit Warps", Counter::OccLimitWarps),
    ("Block Limit SM", Counter::OccLimitBlocks),
];

fn counter_named(name: &str) -> Option<Counter> {
    Counter::from_name(name).or_else(|| {
        DETAIL_NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, c)| *c)
    })
}

/// Read and parse the ncu CSV at `path`.
pub fn read_ncu_csv(path: &Path) -> Result<NcuReport, NcuCsvError> {
    let text = std::fs::read_to_string(path).map_err(|source| NcuCsvError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_ncu_csv(&text, path)
}

/// Parse ncu CSV `text`; `path` names it in errors.
pub fn parse_ncu_csv(text: &str, path: &Path) -> Result<NcuReport, NcuCsvError> {
    let p = Parser {
        path: path.to_path_buf(),
    };
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
    let (header_line, header) = loop {
        match lines.next() {
            None => return Err(NcuCsvError::NoHeader { path: p.path }),
            Some((n, l)) if l.starts_with("\"ID\",") || l.starts_with("ID,") => {
                break (n, split_record(l).map_err(|e| p.syntax(n, e))?)
            }
            Some(_) => {}
        }
    };
    let cols = Columns::new(&header, header_line, &p)?;
    let mut rows = Vec::new();
    for (n, l) in lines {
        if l.trim().is_empty() || l.starts_with("==") {
            continue;
        }
        let fields = split_record(l).map_err(|e| p.syntax(n, e))?;
        if fields.len() != header.len() {
            return Err(p.syntax(
                n,
                format!(
                    "{} fields, but the header (line {header_line}) has {}",
                    fields.len(),
                    header.len()
                ),
            ));
        }
        rows.push((n, fields));
    }
    let report = match (cols.metric_name, cols.metric_value) {
        (Some(name), Some(value)) => p.long(&cols, name, value, &rows)?,
        _ => p.wide(&cols, &header, &rows)?,
    };
    if report.launches.is_empty() {
        return Err(NcuCsvError::Empty { path: p.path });
    }
    Ok(report)
}

/// Positions of the identifying columns.
struct Columns {
    id: usize,
    kernel: usize,
    grid: Option<usize>,
    block: Option<usize>,
    device: Option<usize>,
    cc: Option<usize>,
    metric_name: Option<usize>,
    metric_unit: Option<usize>,
    metric_value: Option<usize>,
}

impl Columns {
    fn new(header: &[String], line: usize, p: &Parser) -> Result<Columns, NcuCsvError> {
        let find = |name: &str| header.iter().position(|h| h == name);
        let need = |column: &'static str| {
            find(column).ok_or_else(|| NcuCsvError::MissingColumn {
                path: p.path.clone(),
                line,
                column,
            })
        };
        Ok(Columns {
            id: need("ID")?,
            kernel: need("Kernel Name")?,
            grid: find("Grid Size"),
            block: find("Block Size"),
            device: find("Device"),
            cc: find("CC"),
            metric_name: find("Metric Name"),
            metric_unit: find("Metric Unit"),
            metric_value: find("Metric Value"),
        })
    }
}

/// A launch being assembled.
struct Partial {
    id: String,
    line: usize,
    kernel_name: String,
    grid: Option<Dim3>,
    block: Option<Dim3>,
    device: Option<u32>,
    compute_capability: Option<String>,
    values: Vec<Option<f64>>,
}

struct Parser {
    path: PathBuf,
}

impl Parser {
    fn syntax(&self, line: usize, problem: String) -> NcuCsvError {
        NcuCsvError::Syntax {
            path: self.path.clone(),
            line,
            problem,
        }
    }

    fn field(&self, line: usize, field: &str, expected: &str, found: &str) -> NcuCsvError {
        NcuCsvError::Field {
            path: self.path.clone(),
            line,
            field: field.to_string(),
            expected: expected.to_string(),
            found: found.to_string(),
        }
    }

    /// The identifying fields of a row.
    fn identity(&self, cols: &Columns, line: usize, f: &[String]) -> Result<Partial, NcuCsvError> {
        let dims = |col: Option<usize>, name: &str| -> Result<Option<Dim3>, NcuCsvError> {
            match col.map(|c| f[c].trim()).filter(|s| !s.is_empty()) {
                None => Ok(None),
                Some(s) => parse_dim3(s)
                    .map(Some)
                    .ok_or_else(|| self.field(line, name, "a dimension `(x, y, z)`", s)),
            }
        };
        let device = match cols.device.map(|c| f[c].trim()).filter(|s| !s.is_empty()) {
            None => None,
            Some(s) => Some(
                s.parse()
                    .map_err(|_| self.field(line, "Device", "a device ordinal", s))?,
            ),
        };
        let id = f[cols.id].trim().to_string();
        if id.is_empty() {
            return Err(self.field(line, "ID", "a launch ID", ""));
        }
        Ok(Partial {
            id,
            line,
            kernel_name: f[cols.kernel].clone(),
            grid: dims(cols.grid, "Grid Size")?,
            block: dims(cols.block, "Block Size")?,
            device,
            compute_capability: cols
                .cc
                .map(|c| f[c].trim().to_string())
                .filter(|s| !s.is_empty()),
            values: vec![None; Counter::ALL.len()],
        })
    }

    /// Store `raw` (printed in `unit`) as counter `c` of `launch`.
    fn store(
        &self,
        launch: &mut Partial,
        line: usize,
        c: Counter,
        unit: &str,
        raw: &str,
    ) -> Result<(), NcuCsvError> {
        let Some(v) = parse_value(raw).map_err(|_| self.field(line, c.name(), "a number", raw))?
        else {
            return Ok(());
        };
        let k = factor(c, unit).map_err(|want| self.field(line, c.name(), want, unit))?;
        let slot = &mut launch.values[c.index()];
        // A metric listed in two sections of the long form: keep the first.
        if slot.is_none() {
            *slot = Some(v * k);
        }
        Ok(())
    }

    fn wide(
        &self,
        cols: &Columns,
        header: &[String],
        rows: &[(usize, Vec<String>)],
    ) -> Result<NcuReport, NcuCsvError> {
        let metrics: Vec<(usize, Option<Counter>)> = header
            .iter()
            .enumerate()
            .filter(|(_, h)| !IDENTITY_COLUMNS.contains(&h.as_str()))
            .map(|(i, h)| (i, Counter::from_name(h)))
            .collect();
        let ignored_metrics = metrics
            .iter()
            .filter(|(_, c)| c.is_none())
            .map(|&(i, _)| header[i].clone())
            .collect();
        // The units row has an empty ID; without one, values are in base units.
        let (units, data) = match rows.first() {
            Some((_, f)) if f[cols.id].trim().is_empty() => (Some(&rows[0].1), &rows[1..]),
            _ => (None, rows),
        };
        let mut launches = Vec::with_capacity(data.len());
        for (line, f) in data {
            let mut launch = self.identity(cols, *line, f)?;
            for &(i, c) in &metrics {
                if let Some(c) = c {
                    let unit = units.map_or("", |u| u[i].as_str());
                    self.store(&mut launch, *line, c, unit, &f[i])?;
                }
            }
            launches.push(self.finish(launch)?);
        }
        Ok(NcuReport {
            layout: NcuLayout::Wide,
            launches,
            ignored_metrics,
        })
    }

    fn long(
        &self,
        cols: &Columns,
        name_col: usize,
        value_col: usize,
        rows: &[(usize, Vec<String>)],
    ) -> Result<NcuReport, NcuCsvError> {
        let mut order: Vec<Partial> = Vec::new();
        let mut by_id: HashMap<String, usize> = HashMap::new();
        let mut ignored_metrics: Vec<String> = Vec::new();
        for (line, f) in rows {
            let id = f[cols.id].trim();
            let at = match by_id.get(id) {
                Some(&at) => at,
                None => {
                    order.push(self.identity(cols, *line, f)?);
                    by_id.insert(id.to_string(), order.len() - 1);
                    order.len() - 1
                }
            };
            let name = f[name_col].trim();
            match counter_named(name) {
                Some(c) => {
                    let unit = cols.metric_unit.map_or("", |u| f[u].as_str());
                    self.store(&mut order[at], *line, c, unit, &f[value_col])?;
                }
                None => {
                    if !ignored_metrics.iter().any(|m| m == name) {
                        ignored_metrics.push(name.to_string());
                    }
                }
            }
        }
        let launches = order
            .into_iter()
            .map(|p| self.finish(p))
            .collect::<Result<_, _>>()?;
        Ok(NcuReport {
            layout: NcuLayout::Long,
            launches,
            ignored_metrics,
        })
    }

    /// Fill the launch configuration from the `launch__*` metrics when the
    /// file has no `Grid Size` / `Block Size` columns (older ncu releases).
    fn finish(&self, p: Partial) -> Result<NcuLaunch, NcuCsvError> {
        let linear = |c: Counter| {
            p.values[c.index()]
                .filter(|v| *v >= 1.0 && v.fract() == 0.0 && *v <= f64::from(u32::MAX))
                .map(|v| Dim3::linear(v as u32))
        };
        let grid = p.grid.or_else(|| linear(Counter::GridSize));
        let block = p.block.or_else(|| linear(Counter::BlockSize));
        let (Some(grid), Some(block)) = (grid, block) else {
            return Err(self.syntax(
                p.line,
                format!(
                    "launch {} has no launch configuration: neither `Grid Size` / `Block Size` \
                     columns nor the {} and {} metrics",
                    p.id,
                    Counter::GridSize.name(),
                    Counter::BlockSize.name()
                ),
            ));
        };
        Ok(NcuLaunch {
            id: p.id,
            line: p.line,
            kernel_name: p.kernel_name,
            grid,
            block,
            device: p.device,
            compute_capability: p.compute_capability,
            values: p.values,
        })
    }
}

/// `(128, 1, 1)` (spaces optional).
fn parse_dim3(s: &str) -> Option<Dim3> {
    let inner = s.trim().strip_prefix('(')?.strip_suffix(')')?;
    let v: Vec<u32> = inner
        .split(',')
        .map(|x| x.trim().parse().ok())
        .collect::<Option<_>>()?;
    match v[..] {
        [x, y, z] if x > 0 && y > 0 && z > 0 => Some(Dim3::new(x, y, z)),
        _ => None,
    }
}

/// A printed value: `None` when not measured (`n/a`, empty); thousands
/// separators removed.
fn parse_value(raw: &str) -> Result<Option<f64>, ()> {
    let s = raw.trim();
    if s.is_empty() || s.eq_ignore_ascii_case("n/a") {
        return Ok(None);
    }
    let digits: String = s.chars().filter(|c| *c != ',').collect();
    match digits.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Some(v)),
        _ => Err(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_dimensions() {
        assert_eq!(parse_value("1,234,567"), Ok(Some(1_234_567.0)));
        assert_eq!(parse_value(" 12.5 "), Ok(Some(12.5)));
        assert_eq!(parse_value("n/a"), Ok(None));
        assert_eq!(parse_value(""), Ok(None));
        assert!(parse_value("12 %").is_err());
        assert!(parse_value("inf").is_err());
        assert_eq!(parse_dim3("(128, 2, 1)"), Some(Dim3::new(128, 2, 1)));
        assert_eq!(parse_dim3("(64,1,1)"), Some(Dim3::linear(64)));
        assert_eq!(parse_dim3("(0, 1, 1)"), None);
        assert_eq!(parse_dim3("128"), None);
    }
}
