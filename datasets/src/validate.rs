//! Checks on typed tables that parsing alone cannot make: values in range,
//! unique keys, and rows of `standalone` and `pairs` that refer to ops that
//! exist. Run on read (with file line numbers) and before write (with row
//! numbers), so a run that writes cleanly also reads back.

use std::collections::HashMap;
use std::path::Path;

use crate::error::{DatasetError, Location, Result};
use crate::ops::OpRecord;
use crate::pairs::PairRow;
use crate::standalone::{StandaloneTable, STANDALONE_FIXED_COLUMNS};
use crate::table::location;

/// Which file a table came from (or is going to), for messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Origin<'a> {
    pub(crate) path: &'a Path,
    pub(crate) lines: Option<&'a [u64]>,
}

impl Origin<'_> {
    fn at(&self, row: usize) -> Location {
        location(self.lines, row)
    }

    fn value(&self, row: usize, column: &str, problem: String) -> DatasetError {
        DatasetError::Value {
            path: self.path.to_path_buf(),
            location: self.at(row),
            column: column.to_string(),
            problem,
        }
    }

    fn file_name(&self) -> String {
        self.path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    }
}

fn non_negative(o: &Origin, row: usize, column: &str, what: &str, v: f64) -> Result<()> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(o.value(row, column, format!("expected {what} >= 0, found `{v}`")))
    }
}

fn sm_count(o: &Origin, row: usize, column: &str, v: u32) -> Result<()> {
    if v >= 1 {
        Ok(())
    } else {
        Err(o.value(
            row,
            column,
            format!("expected an SM count >= 1, found `{v}`"),
        ))
    }
}

pub(crate) struct Tables<'a> {
    pub(crate) ops: (&'a [OpRecord], Origin<'a>),
    pub(crate) standalone: (&'a StandaloneTable, Origin<'a>),
    pub(crate) pairs: (&'a [PairRow], Origin<'a>),
}

pub(crate) fn check(t: &Tables) -> Result<()> {
    let ops = check_ops(t.ops.0, &t.ops.1)?;
    let known = |o: &Origin, row: usize, column: &str, id: &str| -> Result<()> {
        if ops.contains_key(id) {
            Ok(())
        } else {
            Err(o.value(
                row,
                column,
                format!("op `{id}` is not in {}", t.ops.1.file_name()),
            ))
        }
    };
    check_standalone(t.standalone.0, &t.standalone.1, &known)?;
    check_pairs(t.pairs.0, &t.pairs.1, &known)
}

fn check_ops<'a>(ops: &'a [OpRecord], o: &Origin) -> Result<HashMap<&'a str, usize>> {
    let mut seen: HashMap<&str, usize> = HashMap::with_capacity(ops.len());
    for (row, op) in ops.iter().enumerate() {
        if op.op_id.is_empty() {
            return Err(o.value(
                row,
                "op_id",
                "expected an op id, found an empty value".into(),
            ));
        }
        if let Some(&first) = seen.get(op.op_id.as_str()) {
            return Err(o.value(
                row,
                "op_id",
                format!("op `{}` already appears at {}", op.op_id, o.at(first)),
            ));
        }
        seen.insert(&op.op_id, row);
        for (column, v) in op.floats() {
            non_negative(o, row, column, "a finite number", v)?;
        }
    }
    Ok(seen)
}

type Known<'k> = dyn Fn(&Origin, usize, &str, &str) -> Result<()> + 'k;

fn check_standalone(t: &StandaloneTable, o: &Origin, known: &Known) -> Result<()> {
    for (i, name) in t.counter_names.iter().enumerate() {
        if STANDALONE_FIXED_COLUMNS.contains(&name.as_str()) || t.counter_names[..i].contains(name)
        {
            return Err(DatasetError::DuplicateColumn {
                path: o.path.to_path_buf(),
                column: name.clone(),
            });
        }
    }
    let fixed = STANDALONE_FIXED_COLUMNS.len();
    let mut seen: HashMap<(&str, u32), usize> = HashMap::with_capacity(t.rows.len());
    for (row, r) in t.rows.iter().enumerate() {
        if r.counters.len() != t.counter_names.len() {
            return Err(DatasetError::FieldCount {
                path: o.path.to_path_buf(),
                location: o.at(row),
                expected: fixed + t.counter_names.len(),
                found: fixed + r.counters.len(),
            });
        }
        known(o, row, "op_id", &r.op_id)?;
        sm_count(o, row, "sm_count", r.sm_count)?;
        non_negative(o, row, "duration_us", "a finite duration", r.duration_us)?;
        if let Some(&first) = seen.get(&(r.op_id.as_str(), r.sm_count)) {
            return Err(o.value(
                row,
                "sm_count",
                format!(
                    "op `{}` on {} SMs already appears at {}",
                    r.op_id,
                    r.sm_count,
                    o.at(first)
                ),
            ));
        }
        seen.insert((&r.op_id, r.sm_count), row);
    }
    Ok(())
}

fn check_pairs(pairs: &[PairRow], o: &Origin, known: &Known) -> Result<()> {
    // One measurement per kernel pair and split, either way round: a
    // repeated row is a copy, and copies would leak across a validation
    // split. (A kernel beside itself is measured at both 25/75 and 75/25,
    // so its rows are keyed as written.)
    let mut seen: HashMap<(&str, &str, u32, u32), usize> = HashMap::new();
    for (row, p) in pairs.iter().enumerate() {
        let key = if p.op_a <= p.op_b {
            (p.op_a.as_str(), p.op_b.as_str(), p.sm_a, p.sm_b)
        } else {
            (p.op_b.as_str(), p.op_a.as_str(), p.sm_b, p.sm_a)
        };
        if let Some(first) = seen.insert(key, row) {
            return Err(o.value(
                row,
                "op_a",
                format!(
                    "the pair `{}` on {} SMs with `{}` on {} is measured again (first at {})",
                    p.op_a,
                    p.sm_a,
                    p.op_b,
                    p.sm_b,
                    o.at(first)
                ),
            ));
        }
        known(o, row, "op_a", &p.op_a)?;
        known(o, row, "op_b", &p.op_b)?;
        sm_count(o, row, "sm_a", p.sm_a)?;
        sm_count(o, row, "sm_b", p.sm_b)?;
        for (column, v) in p.floats() {
            let what = if column.starts_with("slowdown") {
                "a finite slowdown"
            } else {
                "a finite duration"
            };
            non_negative(o, row, column, what, v)?;
        }
    }
    Ok(())
}
