//! Reading a CSV file by column name, with errors that name the file, the
//! line and the column: the one reader behind the run directory's
//! `summary.csv` and the published table.

use std::path::Path;

use crate::error::RunError;

/// A CSV file's header and records, read whole.
#[derive(Debug)]
pub struct CsvColumns {
    path: String,
    header: Vec<String>,
    records: Vec<(u64, csv::StringRecord)>,
}

/// One record, with what it needs to name itself in an error.
#[derive(Debug, Clone, Copy)]
pub struct CsvRow<'a> {
    table: &'a CsvColumns,
    line: u64,
    record: &'a csv::StringRecord,
}

impl CsvColumns {
    /// Read `path`, requiring every column of `required`.
    pub fn read(path: &Path, required: &[&str]) -> Result<CsvColumns, RunError> {
        let shown = path.display().to_string();
        let bad = |line: u64, reason: String| RunError::Input {
            what: format!("{shown}:{line}"),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| RunError::Input {
            what: shown.clone(),
            reason: e.to_string(),
        })?;
        let mut reader = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .from_reader(text.as_bytes());
        let header: Vec<String> = reader
            .headers()
            .map_err(|e| bad(1, e.to_string()))?
            .iter()
            .map(str::to_string)
            .collect();
        for name in required {
            if !header.iter().any(|h| h == name) {
                return Err(bad(
                    1,
                    format!(
                        "missing column `{name}` (expected at least: {})",
                        required.join(",")
                    ),
                ));
            }
        }
        let mut records = Vec::new();
        for (i, record) in reader.records().enumerate() {
            let line = i as u64 + 2;
            let record = record.map_err(|e| bad(line, e.to_string()))?;
            records.push((line, record));
        }
        Ok(CsvColumns {
            path: shown,
            header,
            records,
        })
    }

    pub fn rows(&self) -> impl Iterator<Item = CsvRow<'_>> {
        self.records.iter().map(move |(line, record)| CsvRow {
            table: self,
            line: *line,
            record,
        })
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }
}

impl<'a> CsvRow<'a> {
    /// `file:line` of this row.
    pub fn location(&self) -> String {
        format!("{}:{}", self.table.path, self.line)
    }

    /// An error about this row's `column`.
    pub fn error(&self, column: &str, reason: String) -> RunError {
        RunError::Input {
            what: format!("{}:{} column `{column}`", self.table.path, self.line),
            reason,
        }
    }

    /// The text of `column` (empty when the row is short).
    pub fn text(&self, column: &str) -> &'a str {
        self.table
            .index(column)
            .and_then(|i| self.record.get(i))
            .unwrap_or("")
    }

    /// `column` as a count (a non-negative integer).
    pub fn count(&self, column: &str) -> Result<usize, RunError> {
        let text = self.text(column);
        text.parse::<usize>()
            .map_err(|_| self.error(column, format!("expected a count, found `{text}`")))
    }

    /// `column` as a finite number, `None` where it is empty or absent (a
    /// column newer than the file).
    pub fn optional_number(&self, column: &str) -> Result<Option<f64>, RunError> {
        if self.text(column).is_empty() {
            Ok(None)
        } else {
            self.number(column).map(Some)
        }
    }

    /// `column` as a finite number.
    pub fn number(&self, column: &str) -> Result<f64, RunError> {
        let text = self.text(column);
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.error(column, format!("expected a number, found `{text}`"))),
        }
    }
}
