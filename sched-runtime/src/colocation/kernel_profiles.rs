//! The standalone inputs of a task prediction: every kernel of both tasks
//! on the partition size it will run on (duration and the predictor's
//! counters), read from profiled datasets (`tally profile`, `tally
//! import-ncu`) or measured on the fly on a backend. Gathered before the
//! composition starts, so a kernel the data lacks is an error naming it,
//! never a silent guess.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use tally_datasets::Dataset;
use tally_gpu::{bound, Backend, Bound, Counter, GpuSpec, KernelSpec, Partition};
use tally_predictor::samples::ProfileTable;
use tally_predictor::{CounterSubset, PredictorError, SideProfile};

use super::pair_slowdown::KernelFacts;
use crate::error::RunError;

/// What is needed: a task's kernels on one partition size.
#[derive(Debug, Clone, Copy)]
pub struct Need<'a> {
    pub task: &'a str,
    pub kernels: &'a [KernelSpec],
    pub sm_count: u32,
}

/// Kernel facts by (op id, partition size).
#[derive(Debug, Default, Clone)]
pub struct KernelProfiles {
    facts: HashMap<(String, u32), KernelFacts>,
}

impl KernelProfiles {
    /// The facts of `kernel` on `sm_count` SMs, if gathered.
    pub fn get(&self, kernel: &KernelSpec, sm_count: u32) -> Option<&KernelFacts> {
        self.facts.get(&(kernel.op_id(), sm_count))
    }

    /// How many (kernel, partition size) profiles it holds.
    pub fn len(&self) -> usize {
        self.facts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.facts.is_empty()
    }

    /// From datasets profiled on `gpu`, read through `counters` (the
    /// predictor's). Each kernel is looked up by its op id in every
    /// dataset in turn.
    pub fn from_datasets(
        datasets: &[Dataset],
        counters: &CounterSubset,
        gpu: &GpuSpec,
        needs: &[Need<'_>],
    ) -> Result<KernelProfiles, RunError> {
        let tables = datasets
            .iter()
            .map(|d| ProfileTable::with_counters(d, counters))
            .collect::<Result<Vec<_>, _>>()
            .map_err(predictor_err)?;
        KernelProfiles::gather(gpu, needs, |need, k| {
            let op = k.op_id();
            for t in &tables {
                match t.profile(&op, need.sm_count) {
                    Ok(p) => return Ok(p),
                    Err(PredictorError::MissingProfile { .. }) => continue,
                    Err(e) => return Err(predictor_err(e)),
                }
            }
            Err(RunError::Input {
                what: format!("task `{}`", need.task),
                reason: format!(
                    "kernel `{}` (op {op}) has no standalone profile on {} SMs in {}; \
                     profile the model there (`tally profile --model ...`), or leave \
                     out --data to profile on the fly",
                    k.name,
                    need.sm_count,
                    datasets
                        .iter()
                        .map(|d| format!("`{}`", d.dir.display()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
        })
    }

    /// Measured now on `backend`, each kernel alone on the first
    /// `sm_count` SMs, read through `counters`.
    pub fn from_backend(
        backend: &dyn Backend,
        counters: &CounterSubset,
        needs: &[Need<'_>],
    ) -> Result<KernelProfiles, RunError> {
        KernelProfiles::gather(backend.spec(), needs, |need, k| {
            let m = backend
                .standalone(k, Partition::first(need.sm_count))
                .map_err(|e| RunError::Input {
                    what: format!("task `{}`, kernel `{}`", need.task, k.name),
                    reason: format!("standalone on {} SMs: {e}", need.sm_count),
                })?;
            SideProfile::from_available(
                need.sm_count,
                m.duration_us,
                |name| Counter::from_name(name).map(|c| m.counters.get(c)),
                &format!("kernel `{}` on {} SMs", k.name, need.sm_count),
                counters,
            )
            .map_err(predictor_err)
        })
    }

    /// Every kernel of `needs` on its partition size, once each, from
    /// `profile`.
    fn gather(
        gpu: &GpuSpec,
        needs: &[Need<'_>],
        mut profile: impl FnMut(&Need<'_>, &KernelSpec) -> Result<SideProfile, RunError>,
    ) -> Result<KernelProfiles, RunError> {
        let mut out = KernelProfiles::default();
        for need in needs {
            for k in need.kernels {
                if let Entry::Vacant(slot) = out.facts.entry((k.op_id(), need.sm_count)) {
                    slot.insert(facts(k, gpu, profile(need, k)?));
                }
            }
        }
        Ok(out)
    }

    /// From facts given directly (tests, callers with their own source).
    pub fn insert(&mut self, kernel: &KernelSpec, sm_count: u32, facts: KernelFacts) {
        self.facts.insert((kernel.op_id(), sm_count), facts);
    }
}

fn facts(k: &KernelSpec, gpu: &GpuSpec, profile: SideProfile) -> KernelFacts {
    KernelFacts {
        profile,
        memory_bound: bound(k, gpu) == Bound::Memory,
    }
}

fn predictor_err(e: PredictorError) -> RunError {
    RunError::Input {
        what: "standalone profiles".into(),
        reason: e.to_string(),
    }
}
