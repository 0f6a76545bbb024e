//! Kernel configurations: how a kernel is launched (original, sliced,
//! persistent thread blocks, preemptive PTB), and the launches each makes.

/// How a kernel is launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(tag = "config", rename_all = "kebab-case")]
pub enum KernelConfig {
    Original,
    /// The grid as sub-grids of `blocks` blocks, one launch each.
    Sliced {
        blocks: u64,
    },
    /// Persistent workers (per SM) that take blocks until none are left.
    Ptb {
        workers_per_sm: u32,
    },
    /// PTB whose workers stop taking blocks when told to retreat.
    PreemptivePtb {
        workers_per_sm: u32,
    },
    /// Preemptive PTB with `workers` workers in all, one per SM, fewer than
    /// the SMs: Tally's choice for a kernel whose every configuration
    /// preempts slower than its limit (`config_choice.rs`), so that the
    /// blocks an HP arrival waits for hold only a few SMs.
    CappedPtb {
        workers: u32,
    },
}

impl KernelConfig {
    /// The next launch for `remaining` blocks: `(blocks, workers per SM,
    /// preemptible)`.
    pub fn next_launch(&self, remaining: u64) -> (u64, Option<u32>, bool) {
        match *self {
            KernelConfig::Original => (remaining, None, false),
            KernelConfig::Sliced { blocks } => (remaining.min(blocks.max(1)), None, false),
            KernelConfig::Ptb { workers_per_sm } => (remaining, Some(workers_per_sm), false),
            KernelConfig::PreemptivePtb { workers_per_sm } => {
                (remaining, Some(workers_per_sm), true)
            }
            KernelConfig::CappedPtb { .. } => (remaining, Some(1), true),
        }
    }

    /// The most workers a launch of this configuration has in all, where
    /// that is fewer than its workers per SM on every SM.
    pub fn max_workers(&self) -> Option<u32> {
        match *self {
            KernelConfig::CappedPtb { workers } => Some(workers),
            _ => None,
        }
    }

    pub fn label(&self) -> String {
        match self {
            KernelConfig::Original => "original".into(),
            KernelConfig::Sliced { blocks } => format!("sliced({blocks} blocks)"),
            KernelConfig::Ptb { workers_per_sm } => format!("ptb({workers_per_sm}/SM)"),
            KernelConfig::PreemptivePtb { workers_per_sm } => {
                format!("preemptive-ptb({workers_per_sm}/SM)")
            }
            KernelConfig::CappedPtb { workers } => format!("preemptive-ptb({workers} workers)"),
        }
    }
}
