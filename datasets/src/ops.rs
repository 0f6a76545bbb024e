//! `OpRecord` and the `ops` table: one row per unique kernel, with every
//! field needed to rebuild its `KernelSpec` exactly, plus two derived
//! columns (`flops`, `arithmetic_intensity`) for people and plotting tools.

use tally_gpu::{Dim3, KernelKind, KernelSpec, MemoryUse, Work};

use crate::error::{DatasetError, Result};
use crate::table::{OutTable, RawTable};

/// Column order of `ops.csv` / `ops.parquet`.
pub const OPS_COLUMNS: [&str; 30] = [
    "op_id",
    "model",
    "name",
    "kind",
    "launches",
    "grid_x",
    "grid_y",
    "grid_z",
    "block_x",
    "block_y",
    "block_z",
    "registers_per_thread",
    "shared_mem_static",
    "shared_mem_dynamic",
    "flops",
    "fadd",
    "fmul",
    "ffma",
    "hadd",
    "hmul",
    "hfma",
    "tensor_flops",
    "other_warp_insts",
    "l1_bytes",
    "l2_bytes",
    "dram_read_bytes",
    "dram_write_bytes",
    "l2_working_set",
    "inflight_bytes_per_warp",
    "arithmetic_intensity",
];

/// Columns computed from the others: written, not read back (the kernel
/// recomputes them), so they are not required on read.
const DERIVED: [&str; 2] = ["flops", "arithmetic_intensity"];

/// Number of `u32` launch-configuration columns (`launches` .. `shared_mem_dynamic`).
const INT_FIELDS: usize = 10;
/// Number of `f64` work and memory columns (`fadd` .. `inflight_bytes_per_warp`).
pub(crate) const FLOAT_FIELDS: usize = 14;

/// One unique kernel of a model.
#[derive(Debug, Clone, PartialEq)]
pub struct OpRecord {
    /// `KernelSpec::op_id()` when built by `from_kernel`.
    pub op_id: String,
    pub model: String,
    /// Launches per training/inference iteration.
    pub launches: u32,
    pub kernel: KernelSpec,
}

impl OpRecord {
    pub fn from_kernel(model: impl Into<String>, launches: u32, kernel: KernelSpec) -> OpRecord {
        OpRecord {
            op_id: kernel.op_id(),
            model: model.into(),
            launches,
            kernel,
        }
    }

    pub fn to_kernel(&self) -> KernelSpec {
        self.kernel.clone()
    }

    fn ints(&self) -> [u32; INT_FIELDS] {
        let k = &self.kernel;
        [
            self.launches,
            k.grid.x,
            k.grid.y,
            k.grid.z,
            k.block.x,
            k.block.y,
            k.block.z,
            k.registers_per_thread,
            k.shared_mem_static,
            k.shared_mem_dynamic,
        ]
    }

    /// Work and memory fields in column order, with their column names.
    pub(crate) fn floats(&self) -> [(&'static str, f64); FLOAT_FIELDS] {
        let fields = self.kernel.numeric_fields();
        debug_assert!(fields.iter().zip(float_columns()).all(|(f, c)| f.0 == *c));
        fields
    }
}

fn int_columns() -> &'static [&'static str] {
    &OPS_COLUMNS[4..4 + INT_FIELDS]
}

fn float_columns() -> &'static [&'static str] {
    &OPS_COLUMNS[15..15 + FLOAT_FIELDS]
}

pub(crate) fn encode(ops: &[OpRecord]) -> OutTable {
    let mut t = OutTable::new(ops.len());
    let strs = |f: fn(&OpRecord) -> String| ops.iter().map(f).collect::<Vec<_>>();
    t.str("op_id", strs(|o| o.op_id.clone()));
    t.str("model", strs(|o| o.model.clone()));
    t.str("name", strs(|o| o.kernel.name.clone()));
    t.str("kind", strs(|o| o.kernel.kind.as_str().to_string()));
    let ints: Vec<_> = ops.iter().map(OpRecord::ints).collect();
    for (i, name) in int_columns().iter().enumerate() {
        t.u32(name, ints.iter().map(|r| r[i]).collect());
    }
    t.f64(
        "flops",
        ops.iter().map(|o| o.kernel.work.total_flops()).collect(),
    );
    let floats: Vec<_> = ops.iter().map(OpRecord::floats).collect();
    for (i, name) in float_columns().iter().enumerate() {
        t.f64(name, floats.iter().map(|r| r[i].1).collect());
    }
    t.f64(
        "arithmetic_intensity",
        ops.iter()
            .map(|o| o.kernel.arithmetic_intensity())
            .collect(),
    );
    debug_assert!(t.columns.iter().map(|c| c.0.as_str()).eq(OPS_COLUMNS));
    t
}

pub(crate) fn decode(t: &RawTable) -> Result<Vec<OpRecord>> {
    // Look every column up first so a missing column is reported before any
    // value in a column that is present.
    let mut idx = [0usize; OPS_COLUMNS.len()];
    for (slot, name) in idx.iter_mut().zip(OPS_COLUMNS) {
        *slot = if DERIVED.contains(&name) {
            usize::MAX
        } else {
            t.require(name)?
        };
    }
    let (op_id, model, name, kind) = (idx[0], idx[1], idx[2], idx[3]);
    let ints = &idx[4..4 + INT_FIELDS];
    let floats = &idx[15..15 + FLOAT_FIELDS];
    let mut out = Vec::with_capacity(t.len());
    for row in 0..t.len() {
        let kind_text = t.string(row, kind)?;
        let kind = KernelKind::parse(&kind_text).ok_or_else(|| DatasetError::Value {
            path: t.path().to_path_buf(),
            location: t.location(row),
            column: "kind".to_string(),
            problem: format!(
                "unknown kernel kind `{kind_text}` (expected one of {})",
                KernelKind::ALL.map(|k| k.as_str()).join(", ")
            ),
        })?;
        let mut i = [0u32; INT_FIELDS];
        for (v, &col) in i.iter_mut().zip(ints) {
            *v = t.u32(row, col)?;
        }
        let mut f = [0f64; FLOAT_FIELDS];
        for (v, &col) in f.iter_mut().zip(floats) {
            *v = t.f64(row, col)?;
        }
        out.push(OpRecord {
            op_id: t.string(row, op_id)?,
            model: t.string(row, model)?,
            launches: i[0],
            kernel: KernelSpec {
                name: t.string(row, name)?,
                kind,
                grid: Dim3::new(i[1], i[2], i[3]),
                block: Dim3::new(i[4], i[5], i[6]),
                registers_per_thread: i[7],
                shared_mem_static: i[8],
                shared_mem_dynamic: i[9],
                work: Work {
                    fadd: f[0],
                    fmul: f[1],
                    ffma: f[2],
                    hadd: f[3],
                    hmul: f[4],
                    hfma: f[5],
                    tensor_flops: f[6],
                    other_warp_insts: f[7],
                },
                memory: MemoryUse {
                    l1_bytes: f[8],
                    l2_bytes: f[9],
                    dram_read_bytes: f[10],
                    dram_write_bytes: f[11],
                    l2_working_set: f[12],
                    inflight_bytes_per_warp: f[13],
                },
            },
        });
    }
    Ok(out)
}
