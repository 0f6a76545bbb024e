//! Rows into launches. Both layouts share the identifying columns; which one
//! a file uses is told by its header (`Metric Name` and `Metric Value` mean
//! one metric per row). Rows of one launch (one `ID`) may come in any
//! order and from several passes; a counter given more than once for a
//! launch takes the median of its values, raw metric names (`--metrics`)
//! winning over section display names, so the result does not depend on
//! the order of the rows. Launches come out in `ID` order, ncu's launch
//! order.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use super::display_names::{counter_named, NameKind};
use super::error::NcuCsvError;
use super::parse::CsvTable;
use super::units::factor;
use super::{NcuLaunch, NcuLayout, NcuReport};
use crate::counters::Counter;
use crate::kernel::Dim3;

/// Prefix of the device attributes ncu can print beside the metrics.
const DEVICE_ATTRIBUTE: &str = "device__attribute_";

/// Columns that identify a launch or describe a row, never a metric.
const IDENTITY_COLUMNS: [&str; 21] = [
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
    "Rule Name",
    "Rule Type",
    "Rule Description",
    "Estimated Speedup Type",
    "Estimated Speedup",
];

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
    fn new(t: &CsvTable, path: &Path) -> Result<Columns, NcuCsvError> {
        let need = |column: &'static str| {
            t.column(column).ok_or_else(|| NcuCsvError::MissingColumn {
                path: path.to_path_buf(),
                line: t.header_line,
                column,
            })
        };
        Ok(Columns {
            id: need("ID")?,
            kernel: need("Kernel Name")?,
            grid: t.column("Grid Size"),
            block: t.column("Block Size"),
            device: t.column("Device"),
            cc: t.column("CC"),
            metric_name: t.column("Metric Name"),
            metric_unit: t.column("Metric Unit"),
            metric_value: t.column("Metric Value"),
        })
    }
}

/// One value of a counter as a row gave it.
#[derive(Debug, Clone)]
struct Candidate {
    kind: NameKind,
    value: f64,
    source: String,
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
    candidates: Vec<Vec<Candidate>>,
    device_attributes: BTreeMap<String, f64>,
}

struct Assembler<'a> {
    path: &'a Path,
    cols: Columns,
}

/// Turn the rows of `t` (read from `path`) into launches.
pub(crate) fn assemble(t: &CsvTable, path: &Path) -> Result<NcuReport, NcuCsvError> {
    let a = Assembler {
        path,
        cols: Columns::new(t, path)?,
    };
    let long = a.cols.metric_name.is_some() && a.cols.metric_value.is_some();
    let mut launches: Vec<Partial> = Vec::new();
    let mut by_id: HashMap<String, usize> = HashMap::new();
    let mut ignored: BTreeSet<String> = BTreeSet::new();
    // The wide page's units row has an empty ID and comes first.
    let (units, rows) = match t.rows.first() {
        Some((_, f)) if !long && f[a.cols.id].trim().is_empty() => {
            (Some(&t.rows[0].1), &t.rows[1..])
        }
        _ => (None, &t.rows[..]),
    };
    for (line, f) in rows {
        let at = a.launch_of(&mut launches, &mut by_id, *line, f)?;
        let launch = &mut launches[at];
        if long {
            let (name_col, value_col) = (
                a.cols.metric_name.unwrap_or_default(),
                a.cols.metric_value.unwrap_or_default(),
            );
            let name = f[name_col].trim();
            // A rule's row (empty metric) carries advice, not a value.
            if name.is_empty() {
                continue;
            }
            let unit = a.cols.metric_unit.map_or("", |u| f[u].as_str());
            if !a.take(launch, *line, name, unit, &f[value_col])? {
                ignored.insert(name.to_string());
            }
        } else {
            for (i, name) in t.header.iter().enumerate() {
                if IDENTITY_COLUMNS.contains(&name.as_str()) {
                    continue;
                }
                let unit = units.map_or("", |u| u[i].as_str());
                if !a.take(launch, *line, name, unit, &f[i])? {
                    ignored.insert(name.clone());
                }
            }
        }
    }
    if launches.is_empty() {
        return Err(NcuCsvError::Empty {
            path: path.to_path_buf(),
            ncu_error: t.ncu_errors.first().cloned(),
        });
    }
    // ncu numbers launches in launch order; the file's row order is not
    // part of the data.
    launches
        .sort_by(|x, y| (x.id.parse::<u64>().ok(), &x.id).cmp(&(y.id.parse::<u64>().ok(), &y.id)));
    let mut mapped_from: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    let launches = launches
        .into_iter()
        .map(|p| finish(p, &mut mapped_from))
        .collect();
    Ok(NcuReport {
        layout: if long {
            NcuLayout::Long
        } else {
            NcuLayout::Wide
        },
        launches,
        ignored_metrics: ignored.into_iter().collect(),
        mapped_from: mapped_from
            .into_iter()
            .map(|(i, s)| (Counter::ALL[i], s.into_iter().collect()))
            .collect(),
        skipped_lines: t.skipped_lines.clone(),
        ncu_errors: t.ncu_errors.clone(),
    })
}

impl Assembler<'_> {
    fn field(&self, line: usize, field: &str, expected: &str, found: &str) -> NcuCsvError {
        NcuCsvError::Field {
            path: self.path.to_path_buf(),
            line,
            field: field.to_string(),
            expected: expected.to_string(),
            found: found.to_string(),
        }
    }

    /// Index of the launch row `f` belongs to, created on its first row;
    /// a later row must agree with the first on the kernel.
    fn launch_of(
        &self,
        launches: &mut Vec<Partial>,
        by_id: &mut HashMap<String, usize>,
        line: usize,
        f: &[String],
    ) -> Result<usize, NcuCsvError> {
        let row = self.identity(line, f)?;
        match by_id.get(&row.id) {
            Some(&at) => {
                let first = &mut launches[at];
                if first.kernel_name != row.kernel_name {
                    return Err(self.field(
                        line,
                        "Kernel Name",
                        &format!(
                            "`{}`, the kernel of launch {} (line {})",
                            first.kernel_name, first.id, first.line
                        ),
                        &row.kernel_name,
                    ));
                }
                first.line = first.line.min(line);
                Ok(at)
            }
            None => {
                by_id.insert(row.id.clone(), launches.len());
                launches.push(row);
                Ok(launches.len() - 1)
            }
        }
    }

    /// The identifying fields of a row.
    fn identity(&self, line: usize, f: &[String]) -> Result<Partial, NcuCsvError> {
        let cell = |col: Option<usize>| col.map(|c| f[c].trim()).filter(|s| !s.is_empty());
        let dims = |col: Option<usize>, name: &str| -> Result<Option<Dim3>, NcuCsvError> {
            cell(col)
                .map(|s| {
                    parse_dim3(s)
                        .ok_or_else(|| self.field(line, name, "a dimension `(x, y, z)`", s))
                })
                .transpose()
        };
        let device = cell(self.cols.device)
            .map(|s| {
                s.parse()
                    .map_err(|_| self.field(line, "Device", "a device ordinal", s))
            })
            .transpose()?;
        let id = f[self.cols.id].trim().to_string();
        if id.is_empty() {
            return Err(self.field(line, "ID", "a launch ID", ""));
        }
        Ok(Partial {
            id,
            line,
            kernel_name: f[self.cols.kernel].clone(),
            grid: dims(self.cols.grid, "Grid Size")?,
            block: dims(self.cols.block, "Block Size")?,
            device,
            compute_capability: cell(self.cols.cc).map(str::to_string),
            candidates: vec![Vec::new(); Counter::ALL.len()],
            device_attributes: BTreeMap::new(),
        })
    }

    /// Take metric `name` printed as `raw` in `unit` into `launch`; false
    /// when it is no counter tally keeps (nor a device attribute).
    fn take(
        &self,
        launch: &mut Partial,
        line: usize,
        name: &str,
        unit: &str,
        raw: &str,
    ) -> Result<bool, NcuCsvError> {
        if name.starts_with(DEVICE_ATTRIBUTE) {
            if let Ok(Some(v)) = parse_value(raw) {
                launch.device_attributes.insert(name.to_string(), v);
            }
            return Ok(true);
        }
        let Some((c, kind)) = counter_named(name) else {
            return Ok(false);
        };
        let value = parse_value(raw).map_err(|_| self.field(line, name, "a number", raw))?;
        let Some(v) = value else {
            return Ok(true);
        };
        let k = factor(c, unit)
            .map_err(|want| self.field(line, &format!("{name} (unit)"), want, unit))?;
        launch.candidates[c.index()].push(Candidate {
            kind,
            value: v * k,
            source: name.to_string(),
        });
        Ok(true)
    }
}

/// Resolve a launch's candidate values and fill its launch configuration
/// from the `launch__*` counters when the file has no `Grid Size` /
/// `Block Size` columns (older ncu releases). Which names fed which counter
/// is added to `mapped_from`.
fn finish(p: Partial, mapped_from: &mut BTreeMap<usize, BTreeSet<String>>) -> NcuLaunch {
    let values: Vec<Option<f64>> = p
        .candidates
        .iter()
        .enumerate()
        .map(|(i, cands)| {
            let best = cands.iter().map(|c| c.kind).min()?;
            let chosen: Vec<&Candidate> = cands.iter().filter(|c| c.kind == best).collect();
            let sources = mapped_from.entry(i).or_default();
            sources.extend(chosen.iter().map(|c| c.source.clone()));
            Some(median(chosen.iter().map(|c| c.value).collect()))
        })
        .collect();
    let linear = |c: Counter| {
        values[c.index()]
            .filter(|v| *v >= 1.0 && v.fract() == 0.0 && *v <= f64::from(u32::MAX))
            .map(|v| Dim3::linear(v as u32))
    };
    NcuLaunch {
        grid: p.grid.or_else(|| linear(Counter::GridSize)),
        block: p.block.or_else(|| linear(Counter::BlockSize)),
        id: p.id,
        line: p.line,
        kernel_name: p.kernel_name,
        device: p.device,
        compute_capability: p.compute_capability,
        values,
        device_attributes: p.device_attributes,
    }
}

/// The median of a non-empty list (the mean of the middle two for an even count).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_unstable_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
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
/// separators (`"13,485"`) removed.
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
    fn values_dimensions_and_medians() {
        assert_eq!(parse_value("1,234,567"), Ok(Some(1_234_567.0)));
        assert_eq!(parse_value("13,485"), Ok(Some(13_485.0)));
        assert_eq!(parse_value(" 12.5 "), Ok(Some(12.5)));
        assert_eq!(parse_value("n/a"), Ok(None));
        assert_eq!(parse_value("N/A"), Ok(None));
        assert_eq!(parse_value(""), Ok(None));
        assert!(parse_value("12 %").is_err());
        assert!(parse_value("inf").is_err());
        assert_eq!(parse_dim3("(128, 2, 1)"), Some(Dim3::new(128, 2, 1)));
        assert_eq!(parse_dim3("(64,1,1)"), Some(Dim3::linear(64)));
        assert_eq!(parse_dim3("(0, 1, 1)"), None);
        assert_eq!(parse_dim3("128"), None);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
