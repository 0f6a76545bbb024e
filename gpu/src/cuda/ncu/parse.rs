//! The file around the CSV: where the header is, which later lines are CSV
//! rows, and how a short or long row lines up with the header. ncu prints
//! its `==PROF==` / `==WARNING==` / `==ERROR==` messages and lets the
//! program print its own output before, and sometimes between, the CSV
//! lines; the details page ends rows that carry no rule right after
//! `Metric Value` (often with a trailing comma), so a row may have fewer
//! fields than the header, or extra empty ones. What the rows mean is
//! `assemble.rs`'s business.

use std::path::Path;

use super::error::NcuCsvError;
use super::line::split_record;

/// The CSV part of a file, rows padded to the header's width.
#[derive(Debug)]
pub(crate) struct CsvTable {
    pub(crate) header_line: usize,
    pub(crate) header: Vec<String>,
    /// `(line, fields)` of every CSV row, each exactly `header.len()` long.
    pub(crate) rows: Vec<(usize, Vec<String>)>,
    /// Lines after the header that are not CSV rows (the program's output).
    pub(crate) skipped_lines: Vec<usize>,
    /// ncu's `==ERROR==` lines, in file order.
    pub(crate) ncu_errors: Vec<String>,
}

impl CsvTable {
    /// Position of column `name` in the header.
    pub(crate) fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }
}

fn syntax(path: &Path, line: usize, problem: String) -> NcuCsvError {
    NcuCsvError::Syntax {
        path: path.to_path_buf(),
        line,
        problem,
    }
}

/// A header line: ncu's first column is always `ID`.
fn is_header(line: &str) -> bool {
    line.starts_with("\"ID\",") || line.starts_with("ID,")
}

/// Split `text` into its header and CSV rows.
pub(crate) fn split_table(text: &str, path: &Path) -> Result<CsvTable, NcuCsvError> {
    let mut ncu_errors = Vec::new();
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
    let mut note = |l: &str| {
        if l.starts_with("==ERROR==") {
            ncu_errors.push(l.trim().to_string());
        }
    };
    let (header_line, header_text) = loop {
        match lines.next() {
            None => {
                return Err(NcuCsvError::NoHeader {
                    path: path.to_path_buf(),
                    ncu_error: ncu_errors.first().cloned(),
                })
            }
            Some((n, l)) if is_header(l) => break (n, l),
            Some((_, l)) => note(l),
        }
    };
    let header = split_record(header_text).map_err(|e| syntax(path, header_line, e))?;
    // ncu quotes every field; under a quoted header a line that does not
    // open with a quote is the program's output, not a row.
    let quoted = header_text.starts_with('"');
    let mut rows = Vec::new();
    let mut skipped_lines = Vec::new();
    for (n, l) in lines {
        if l.trim().is_empty() {
            continue;
        }
        if l.starts_with("==") {
            note(l);
            continue;
        }
        if l == header_text {
            // A repeated header (one per profiled process).
            continue;
        }
        if is_header(l) {
            return Err(syntax(
                path,
                n,
                format!("a second header that differs from the first (line {header_line})"),
            ));
        }
        if quoted && !l.starts_with('"') {
            skipped_lines.push(n);
            continue;
        }
        let fields = split_record(l).map_err(|e| syntax(path, n, e))?;
        rows.push((n, fit(fields, &header, n, header_line, path)?));
    }
    Ok(CsvTable {
        header_line,
        header,
        rows,
        skipped_lines,
        ncu_errors,
    })
}

/// `fields` made exactly as long as the header: missing trailing fields are
/// empty (the details page stops a rule-less row after `Metric Value`),
/// extra ones must be empty (trailing commas).
fn fit(
    mut fields: Vec<String>,
    header: &[String],
    line: usize,
    header_line: usize,
    path: &Path,
) -> Result<Vec<String>, NcuCsvError> {
    if fields.len() > header.len() {
        if let Some(extra) = fields[header.len()..].iter().find(|f| !f.trim().is_empty()) {
            return Err(syntax(
                path,
                line,
                format!(
                    "{} fields, but the header (line {header_line}) has {}; the extra field \
                     `{extra}` is not empty",
                    fields.len(),
                    header.len()
                ),
            ));
        }
        fields.truncate(header.len());
    }
    fields.resize(header.len(), String::new());
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preambles_program_output_and_ragged_rows() {
        let text = "step 0\n==PROF== Connected\n\"ID\",\"Kernel Name\",\"Metric Value\",\"Rule Name\"\n\
                    \"0\",\"k\",\"1\"\nloss 0.5\n\"0\",\"k\",\"2\",\n==ERROR== lost\n\
                    \"ID\",\"Kernel Name\",\"Metric Value\",\"Rule Name\"\n\"1\",\"k\",\"3\",\"r\",,\n";
        let t = split_table(text, Path::new("x.csv")).expect("splits");
        assert_eq!(t.header_line, 3);
        assert_eq!(t.rows.len(), 3);
        assert!(t.rows.iter().all(|(_, f)| f.len() == 4));
        assert_eq!(t.rows[0].1[3], "");
        assert_eq!(t.rows[2].1[3], "r");
        assert_eq!(t.skipped_lines, [5]);
        assert_eq!(t.ncu_errors, ["==ERROR== lost"]);
        let e = split_table(
            "\"ID\",\"Kernel Name\"\n\"0\",\"k\",\"x\"\n",
            Path::new("x.csv"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("line 2") && e.contains("`x`"), "{e}");
        let e = split_table("==ERROR== no kernels were profiled\n", Path::new("x.csv"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("==ERROR== no kernels were profiled"), "{e}");
    }
}
