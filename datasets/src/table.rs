//! Tables in transit. `RawTable` is a decoded file before its rows are
//! typed — the same shape for CSV (all text) and Parquet (typed columns) — so
//! each table's decoder and every error message is written once. `OutTable`
//! is a typed table about to be encoded.

use std::path::{Path, PathBuf};

use crate::error::{DatasetError, Location, Result};

/// One column's cells as the file stored them; `None` is a Parquet null.
#[derive(Debug, Clone)]
pub(crate) enum Cells {
    Text(Vec<Option<String>>),
    UInt(Vec<Option<u64>>),
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
}

/// A table read from `path`, columns in file order.
#[derive(Debug)]
pub(crate) struct RawTable {
    path: PathBuf,
    names: Vec<String>,
    columns: Vec<Cells>,
    len: usize,
    /// CSV line of each row (a quoted field can span lines, so this is not
    /// simply `row + 2`); `None` for Parquet, which has rows, not lines.
    lines: Option<Vec<u64>>,
}

impl RawTable {
    pub(crate) fn new(
        path: &Path,
        names: Vec<String>,
        columns: Vec<Cells>,
        len: usize,
        lines: Option<Vec<u64>>,
    ) -> Result<RawTable> {
        // A repeated name would make lookups by name silently pick one.
        for (i, name) in names.iter().enumerate() {
            if names[..i].contains(name) {
                return Err(DatasetError::DuplicateColumn {
                    path: path.to_path_buf(),
                    column: name.clone(),
                });
            }
        }
        Ok(RawTable {
            path: path.to_path_buf(),
            names,
            columns,
            len,
            lines,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    pub(crate) fn lines(&self) -> Option<&[u64]> {
        self.lines.as_deref()
    }

    pub(crate) fn location(&self, row: usize) -> Location {
        location(self.lines(), row)
    }

    pub(crate) fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Index of a column the table must have.
    pub(crate) fn require(&self, name: &str) -> Result<usize> {
        self.find(name).ok_or_else(|| DatasetError::MissingColumn {
            path: self.path.clone(),
            column: name.to_string(),
            found: if self.names.is_empty() {
                "no columns".to_string()
            } else {
                self.names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        })
    }

    fn bad(&self, row: usize, col: usize, expected: &str, found: String) -> DatasetError {
        DatasetError::Value {
            path: self.path.clone(),
            location: self.location(row),
            column: self.names[col].clone(),
            problem: format!("expected {expected}, found {found}"),
        }
    }

    pub(crate) fn string(&self, row: usize, col: usize) -> Result<String> {
        const WHAT: &str = "a string";
        match &self.columns[col] {
            Cells::Text(v) => v[row]
                .clone()
                .ok_or_else(|| self.bad(row, col, WHAT, "null".into())),
            Cells::UInt(v) => Err(self.bad(row, col, WHAT, shown(&v[row]))),
            Cells::Int(v) => Err(self.bad(row, col, WHAT, shown(&v[row]))),
            Cells::Float(v) => Err(self.bad(row, col, WHAT, shown(&v[row]))),
        }
    }

    pub(crate) fn u32(&self, row: usize, col: usize) -> Result<u32> {
        const WHAT: &str = "an unsigned integer";
        let found = match &self.columns[col] {
            Cells::Text(v) => match &v[row] {
                Some(s) => match s.parse::<u32>() {
                    Ok(x) => return Ok(x),
                    Err(_) => format!("`{s}`"),
                },
                None => "null".into(),
            },
            Cells::UInt(v) => match v[row].map(u32::try_from) {
                Some(Ok(x)) => return Ok(x),
                _ => shown(&v[row]),
            },
            Cells::Int(v) => match v[row].map(u32::try_from) {
                Some(Ok(x)) => return Ok(x),
                _ => shown(&v[row]),
            },
            Cells::Float(v) => shown(&v[row]),
        };
        Err(self.bad(row, col, WHAT, found))
    }

    pub(crate) fn f64(&self, row: usize, col: usize) -> Result<f64> {
        const WHAT: &str = "a number";
        let found = match &self.columns[col] {
            Cells::Text(v) => match &v[row] {
                Some(s) => match s.parse::<f64>() {
                    Ok(x) => return Ok(x),
                    Err(_) => format!("`{s}`"),
                },
                None => "null".into(),
            },
            // Integer columns from other tools are fine as numbers.
            Cells::UInt(v) => match v[row] {
                Some(x) => return Ok(x as f64),
                None => "null".into(),
            },
            Cells::Int(v) => match v[row] {
                Some(x) => return Ok(x as f64),
                None => "null".into(),
            },
            Cells::Float(v) => match v[row] {
                Some(x) => return Ok(x),
                None => "null".into(),
            },
        };
        Err(self.bad(row, col, WHAT, found))
    }
}

fn shown<T: std::fmt::Debug>(v: &Option<T>) -> String {
    match v {
        Some(x) => format!("`{x:?}`"),
        None => "null".into(),
    }
}

/// Location of `row` (0-based) given a table's CSV lines, if any.
pub(crate) fn location(lines: Option<&[u64]>, row: usize) -> Location {
    match lines.and_then(|l| l.get(row)) {
        Some(&line) => Location::Line(line),
        None => Location::Row(row as u64 + 1),
    }
}

/// One typed column to be written.
#[derive(Debug, Clone)]
pub(crate) enum Values {
    Str(Vec<String>),
    U32(Vec<u32>),
    F64(Vec<f64>),
}

impl Values {
    /// Cell `row` as CSV text. `f64` uses `Display`, which prints the
    /// shortest decimal that parses back to the same bits, so CSV loses
    /// nothing.
    pub(crate) fn text(&self, row: usize) -> String {
        match self {
            Values::Str(v) => v[row].clone(),
            Values::U32(v) => v[row].to_string(),
            Values::F64(v) => format!("{}", v[row]),
        }
    }
}

/// A table ready to encode: named typed columns of equal length.
#[derive(Debug, Clone)]
pub(crate) struct OutTable {
    pub(crate) columns: Vec<(String, Values)>,
    pub(crate) height: usize,
}

impl OutTable {
    pub(crate) fn new(height: usize) -> OutTable {
        OutTable {
            columns: Vec::new(),
            height,
        }
    }

    pub(crate) fn str(&mut self, name: &str, v: Vec<String>) {
        self.columns.push((name.to_string(), Values::Str(v)));
    }

    pub(crate) fn u32(&mut self, name: &str, v: Vec<u32>) {
        self.columns.push((name.to_string(), Values::U32(v)));
    }

    pub(crate) fn f64(&mut self, name: &str, v: Vec<f64>) {
        self.columns.push((name.to_string(), Values::F64(v)));
    }
}
