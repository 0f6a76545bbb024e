//! CSV encoding of a table: header line, then one record per row, with line
//! numbers kept for error messages.

use std::fs::File;
use std::path::Path;

use crate::atomic::write_atomic;
use crate::error::{DatasetError, Result};
use crate::table::{Cells, OutTable, RawTable};

/// Read `path` into a text-only `RawTable`.
pub(crate) fn read_csv(path: &Path) -> Result<RawTable> {
    let file = File::open(path).map_err(|e| DatasetError::io(path, e))?;
    let csv_err = |e: csv::Error| DatasetError::Csv {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    // Flexible so that a short or long row reaches our own check, which
    // reports it in the same words as every other problem.
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(file);
    let names: Vec<String> = reader
        .headers()
        .map_err(csv_err)?
        .iter()
        .map(str::to_string)
        .collect();
    let mut columns: Vec<Vec<Option<String>>> = vec![Vec::new(); names.len()];
    let mut lines = Vec::new();
    let mut record = csv::StringRecord::new();
    while reader.read_record(&mut record).map_err(csv_err)? {
        let line = record.position().map_or(0, |p| p.line());
        if record.len() != names.len() {
            return Err(DatasetError::FieldCount {
                path: path.to_path_buf(),
                location: crate::error::Location::Line(line),
                expected: names.len(),
                found: record.len(),
            });
        }
        for (column, field) in columns.iter_mut().zip(record.iter()) {
            column.push(Some(field.to_string()));
        }
        lines.push(line);
    }
    let len = lines.len();
    let columns = columns.into_iter().map(Cells::Text).collect();
    RawTable::new(path, names, columns, len, Some(lines))
}

/// Write `table` to `path` atomically.
pub(crate) fn write_csv(path: &Path, table: &OutTable) -> Result<()> {
    write_atomic(path, |w| {
        let csv_err = |e: csv::Error| DatasetError::Csv {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let mut writer = csv::Writer::from_writer(&mut *w);
        writer
            .write_record(table.columns.iter().map(|(name, _)| name.as_str()))
            .map_err(csv_err)?;
        let mut record = Vec::with_capacity(table.columns.len());
        for row in 0..table.height {
            record.clear();
            record.extend(table.columns.iter().map(|(_, v)| v.text(row)));
            writer.write_record(&record).map_err(csv_err)?;
        }
        writer.flush().map_err(|e| DatasetError::io(path, e))
    })
}
