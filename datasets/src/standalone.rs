//! `StandaloneTable`: each op run alone on each SM count — its duration and
//! the Nsight Compute counters measured — and lookups by op and by counter
//! name.

use std::collections::HashMap;

use crate::error::Result;
use crate::table::{OutTable, RawTable};

/// Fixed leading columns of `standalone.csv`; every later column is a counter.
pub const STANDALONE_FIXED_COLUMNS: [&str; 3] = ["op_id", "sm_count", "duration_us"];

/// One op measured alone on `sm_count` SMs.
#[derive(Debug, Clone, PartialEq)]
pub struct StandaloneRow {
    pub op_id: String,
    pub sm_count: u32,
    pub duration_us: f64,
    /// Values in the order of `StandaloneTable::counter_names`.
    pub counters: Vec<f64>,
}

/// All standalone measurements of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StandaloneTable {
    /// Counter column names, exactly as Nsight Compute names them.
    pub counter_names: Vec<String>,
    pub rows: Vec<StandaloneRow>,
}

impl StandaloneTable {
    pub fn new(counter_names: Vec<String>) -> StandaloneTable {
        StandaloneTable {
            counter_names,
            rows: Vec::new(),
        }
    }

    /// The row of `op_id` on `sm_count` SMs. A linear scan; use `index` for
    /// many lookups.
    pub fn get(&self, op_id: &str, sm_count: u32) -> Option<&StandaloneRow> {
        self.rows
            .iter()
            .find(|r| r.sm_count == sm_count && r.op_id == op_id)
    }

    /// Position of counter `name` in every row's `counters`.
    pub fn counter_index(&self, name: &str) -> Option<usize> {
        self.counter_names.iter().position(|n| n == name)
    }

    /// Counter `name` of `row`.
    pub fn counter(&self, row: &StandaloneRow, name: &str) -> Option<f64> {
        self.counter_index(name)
            .and_then(|i| row.counters.get(i).copied())
    }

    /// A hash index over (op_id, sm_count) for repeated lookups. It borrows
    /// the table, so it cannot go stale while it lives.
    pub fn index(&self) -> StandaloneIndex<'_> {
        let mut map = HashMap::with_capacity(self.rows.len());
        for row in &self.rows {
            // Keep the first row of a duplicate key, as `get` does.
            map.entry((row.op_id.as_str(), row.sm_count)).or_insert(row);
        }
        StandaloneIndex { map }
    }
}

/// Fast (op_id, sm_count) lookups into a `StandaloneTable`.
#[derive(Debug)]
pub struct StandaloneIndex<'a> {
    map: HashMap<(&'a str, u32), &'a StandaloneRow>,
}

impl<'a> StandaloneIndex<'a> {
    pub fn get(&self, op_id: &str, sm_count: u32) -> Option<&'a StandaloneRow> {
        self.map.get(&(op_id, sm_count)).copied()
    }
}

pub(crate) fn encode(table: &StandaloneTable) -> OutTable {
    let rows = &table.rows;
    let mut t = OutTable::new(rows.len());
    t.str("op_id", rows.iter().map(|r| r.op_id.clone()).collect());
    t.u32("sm_count", rows.iter().map(|r| r.sm_count).collect());
    t.f64("duration_us", rows.iter().map(|r| r.duration_us).collect());
    for (i, name) in table.counter_names.iter().enumerate() {
        // Validation before writing guarantees every row has every counter.
        t.f64(
            name,
            rows.iter()
                .map(|r| r.counters.get(i).copied().unwrap_or(f64::NAN))
                .collect(),
        );
    }
    t
}

pub(crate) fn decode(t: &RawTable) -> Result<StandaloneTable> {
    let op_id = t.require("op_id")?;
    let sm_count = t.require("sm_count")?;
    let duration = t.require("duration_us")?;
    let counters: Vec<usize> = (0..t.names().len())
        .filter(|&i| ![op_id, sm_count, duration].contains(&i))
        .collect();
    let counter_names = counters.iter().map(|&i| t.names()[i].clone()).collect();
    let mut rows = Vec::with_capacity(t.len());
    for row in 0..t.len() {
        rows.push(StandaloneRow {
            op_id: t.string(row, op_id)?,
            sm_count: t.u32(row, sm_count)?,
            duration_us: t.f64(row, duration)?,
            counters: counters
                .iter()
                .map(|&col| t.f64(row, col))
                .collect::<Result<_>>()?,
        });
    }
    Ok(StandaloneTable {
        counter_names,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups() {
        let mut t = StandaloneTable::new(vec!["a".into(), "b".into()]);
        t.rows.push(StandaloneRow {
            op_id: "x".into(),
            sm_count: 8,
            duration_us: 1.0,
            counters: vec![10.0, 20.0],
        });
        let row = t.get("x", 8).expect("row");
        assert_eq!(t.counter(row, "b"), Some(20.0));
        assert_eq!(t.counter(row, "c"), None);
        assert!(t.get("x", 16).is_none());
        assert_eq!(t.index().get("x", 8), Some(row));
    }
}
