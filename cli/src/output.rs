//! Printing tables as aligned text, CSV or JSON (`--format`).

use std::io::{self, Write};

use crate::args::TableFormat;

/// A table of strings with a header.
#[derive(Debug, Default)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// Write in `format` to `out`.
    pub fn write(&self, format: TableFormat, out: &mut dyn Write) -> io::Result<()> {
        match format {
            TableFormat::Table => self.write_text(out),
            TableFormat::Csv => self.write_csv(out),
            TableFormat::Json => self.write_json(out),
        }
    }

    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: &[String]| {
            cells
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_string()
        };
        writeln!(out, "{}", line(&self.header))?;
        for row in &self.rows {
            writeln!(out, "{}", line(row))?;
        }
        Ok(())
    }

    fn write_csv(&self, out: &mut dyn Write) -> io::Result<()> {
        let escape = |c: &str| {
            if c.contains([',', '"', '\n']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c.to_string()
            }
        };
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let cells: Vec<String> = row.iter().map(|c| escape(c)).collect();
            writeln!(out, "{}", cells.join(","))?;
        }
        Ok(())
    }

    fn write_json(&self, out: &mut dyn Write) -> io::Result<()> {
        let records: Vec<serde_json::Map<String, serde_json::Value>> = self
            .rows
            .iter()
            .map(|row| {
                self.header
                    .iter()
                    .zip(row)
                    .map(|(h, c)| (h.clone(), json_value(c)))
                    .collect()
            })
            .collect();
        serde_json::to_writer_pretty(&mut *out, &records)?;
        writeln!(out)
    }
}

/// Numbers stay numbers in JSON.
fn json_value(cell: &str) -> serde_json::Value {
    if let Ok(i) = cell.parse::<i64>() {
        return serde_json::Value::from(i);
    }
    match cell.parse::<f64>() {
        Ok(v) if v.is_finite() => serde_json::Number::from_f64(v)
            .map(serde_json::Value::Number)
            .unwrap_or_else(|| serde_json::Value::String(cell.to_string())),
        _ => serde_json::Value::String(cell.to_string()),
    }
}

/// Human-readable count with an SI suffix: 1.2G, 350M, 12k.
pub fn si(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e12 {
        (v / 1e12, "T")
    } else if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    if suffix.is_empty() {
        format!("{scaled:.0}")
    } else {
        format!("{scaled:.1}{suffix}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let mut t = Table::new(&["name", "value"]);
        t.push(vec!["a,b".into(), "1.5".into()]);
        let mut out = Vec::new();
        t.write(TableFormat::Csv, &mut out).expect("write");
        assert_eq!(String::from_utf8_lossy(&out), "name,value\n\"a,b\",1.5\n");
        let mut out = Vec::new();
        t.write(TableFormat::Json, &mut out).expect("write");
        let v: serde_json::Value = serde_json::from_slice(&out).expect("json");
        assert_eq!(v[0]["value"], 1.5);
        assert_eq!(si(1.5e9), "1.5G");
        assert_eq!(si(12.0), "12");
    }
}
