//! What the dataset figures read of a profile dataset: each kernel's
//! memory-path demand, roofline class and kind, computed once.

use std::collections::HashMap;

use tally_datasets::Dataset;
use tally_gpu::{bound, Bound};

/// One kernel of the dataset as the figures see it.
#[derive(Debug, Clone, PartialEq)]
pub struct OpView {
    pub op_id: String,
    pub kind: &'static str,
    pub bound: Bound,
    /// DRAM bytes per microsecond alone on the most SMs profiled (MB/s):
    /// how hard the kernel leans on the shared memory path.
    pub demand: f64,
}

/// A dataset with its kernels ordered by memory-path demand.
#[derive(Debug)]
pub struct DatasetView<'a> {
    pub dataset: &'a Dataset,
    /// Kernels, least demanding first.
    pub ops: Vec<OpView>,
    /// `op_id` -> position in `ops` (the demand rank).
    pub rank: HashMap<&'a str, usize>,
}

impl<'a> DatasetView<'a> {
    pub fn new(dataset: &'a Dataset) -> DatasetView<'a> {
        let max_sm = dataset
            .standalone
            .rows
            .iter()
            .map(|r| r.sm_count)
            .max()
            .unwrap_or(0);
        let index = dataset.standalone.index();
        let mut ops: Vec<OpView> = dataset
            .ops
            .iter()
            .map(|op| {
                let bytes = op.kernel.memory.dram_read_bytes + op.kernel.memory.dram_write_bytes;
                let demand = index
                    .get(&op.op_id, max_sm)
                    .filter(|r| r.duration_us > 0.0)
                    .map_or(0.0, |r| bytes / r.duration_us);
                OpView {
                    op_id: op.op_id.clone(),
                    kind: op.kernel.kind.as_str(),
                    bound: bound(&op.kernel, &dataset.info.gpu),
                    demand,
                }
            })
            .collect();
        ops.sort_by(|a, b| a.demand.total_cmp(&b.demand).then(a.op_id.cmp(&b.op_id)));
        let rank = dataset
            .ops
            .iter()
            .map(|op| {
                let r = ops.iter().position(|v| v.op_id == op.op_id).unwrap_or(0);
                (op.op_id.as_str(), r)
            })
            .collect();
        DatasetView { dataset, ops, rank }
    }

    /// "bert-base on H100 SXM (sim)": what was profiled, where.
    pub fn subject(&self) -> String {
        let info = &self.dataset.info;
        format!("{} on {} ({})", info.model, info.gpu.name, info.backend)
    }

    pub fn bound_of(&self, op_id: &str) -> Option<Bound> {
        self.rank.get(op_id).map(|&r| self.ops[r].bound)
    }
}

/// The pair class of two roofline labels, order-free.
pub fn pair_class(a: Bound, b: Bound) -> PairClass {
    match (a, b) {
        (Bound::Compute, Bound::Compute) => PairClass::ComputeCompute,
        (Bound::Memory, Bound::Memory) => PairClass::MemoryMemory,
        _ => PairClass::ComputeMemory,
    }
}

/// compute+compute, compute+memory, memory+memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PairClass {
    ComputeCompute,
    ComputeMemory,
    MemoryMemory,
}

impl PairClass {
    pub const ALL: [PairClass; 3] = [
        PairClass::ComputeCompute,
        PairClass::ComputeMemory,
        PairClass::MemoryMemory,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            PairClass::ComputeCompute => "compute+compute",
            PairClass::ComputeMemory => "compute+memory",
            PairClass::MemoryMemory => "memory+memory",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_class_ignores_order() {
        assert_eq!(
            pair_class(Bound::Compute, Bound::Memory),
            pair_class(Bound::Memory, Bound::Compute)
        );
        assert_eq!(
            pair_class(Bound::Memory, Bound::Memory),
            PairClass::MemoryMemory
        );
    }
}
