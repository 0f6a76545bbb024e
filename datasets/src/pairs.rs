//! `PairRow` and the `pairs` table: two ops co-located on disjoint SM
//! partitions, their durations together and alone, and the slowdowns.

use crate::error::Result;
use crate::table::{OutTable, RawTable};

/// Column order of `pairs.csv` / `pairs.parquet`.
pub const PAIR_COLUMNS: [&str; 10] = [
    "op_a",
    "op_b",
    "sm_a",
    "sm_b",
    "duration_a_us",
    "duration_b_us",
    "solo_a_us",
    "solo_b_us",
    "slowdown_a",
    "slowdown_b",
];

/// One co-location measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct PairRow {
    pub op_a: String,
    pub op_b: String,
    pub sm_a: u32,
    pub sm_b: u32,
    pub duration_a_us: f64,
    pub duration_b_us: f64,
    /// Each op alone on the same partition.
    pub solo_a_us: f64,
    pub solo_b_us: f64,
    /// `duration / solo`.
    pub slowdown_a: f64,
    pub slowdown_b: f64,
}

impl PairRow {
    /// The six numeric fields with their column names, in column order.
    pub(crate) fn floats(&self) -> [(&'static str, f64); 6] {
        [
            ("duration_a_us", self.duration_a_us),
            ("duration_b_us", self.duration_b_us),
            ("solo_a_us", self.solo_a_us),
            ("solo_b_us", self.solo_b_us),
            ("slowdown_a", self.slowdown_a),
            ("slowdown_b", self.slowdown_b),
        ]
    }
}

pub(crate) fn encode(pairs: &[PairRow]) -> OutTable {
    let mut t = OutTable::new(pairs.len());
    t.str("op_a", pairs.iter().map(|p| p.op_a.clone()).collect());
    t.str("op_b", pairs.iter().map(|p| p.op_b.clone()).collect());
    t.u32("sm_a", pairs.iter().map(|p| p.sm_a).collect());
    t.u32("sm_b", pairs.iter().map(|p| p.sm_b).collect());
    for i in 0..6 {
        let name = PAIR_COLUMNS[4 + i];
        t.f64(name, pairs.iter().map(|p| p.floats()[i].1).collect());
    }
    debug_assert!(t.columns.iter().map(|c| c.0.as_str()).eq(PAIR_COLUMNS));
    t
}

/// Decode by column name; columns beyond `PAIR_COLUMNS` are ignored, so
/// other tools may annotate the file.
pub(crate) fn decode(t: &RawTable) -> Result<Vec<PairRow>> {
    let mut idx = [0usize; PAIR_COLUMNS.len()];
    for (slot, name) in idx.iter_mut().zip(PAIR_COLUMNS) {
        *slot = t.require(name)?;
    }
    let mut out = Vec::with_capacity(t.len());
    for row in 0..t.len() {
        out.push(PairRow {
            op_a: t.string(row, idx[0])?,
            op_b: t.string(row, idx[1])?,
            sm_a: t.u32(row, idx[2])?,
            sm_b: t.u32(row, idx[3])?,
            duration_a_us: t.f64(row, idx[4])?,
            duration_b_us: t.f64(row, idx[5])?,
            solo_a_us: t.f64(row, idx[6])?,
            solo_b_us: t.f64(row, idx[7])?,
            slowdown_a: t.f64(row, idx[8])?,
            slowdown_b: t.f64(row, idx[9])?,
        });
    }
    Ok(out)
}
