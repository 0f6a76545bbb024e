//! Every pair of tasks at every split asked for: each task's latency alone
//! on its partition and beside the other, from the composition on the
//! engine paced by each method's contention model; the split that
//! minimises the larger of the two slowdowns; the simulator's own
//! composition as the reference where asked; and the few-shot correction
//! of the predictor's rows from the user's measurements.

use std::collections::HashMap;
use std::sync::Arc;

use tally_gpu::{GpuSpec, Partition, Sharing};
use tally_predictor::predict::allowed_splits;

use super::compose::{compose, Side, MIN_ITERATIONS};
use super::kernel_profiles::{KernelProfiles, Need};
use super::measured::{MeasuredRow, TaskCorrection};
use super::pair_slowdown::PairSlowdown;
use super::predicted_contention::PredictedContention;
use crate::engine::sim::SimEngine;
use crate::engine::{Engine, KernelId};
use crate::error::RunError;
use crate::workload::JobSpec;

/// What paces the running kernels of a composition.
#[derive(Debug, Clone)]
pub enum Rates {
    /// The simulator's own contention model: the ground truth on the
    /// simulated GPU.
    Simulator,
    /// A kernel-pair slowdown on standalone profiles.
    Predicted {
        profiles: Arc<KernelProfiles>,
        pairs: Arc<dyn PairSlowdown>,
    },
}

impl Rates {
    pub fn name(&self) -> &str {
        match self {
            Rates::Simulator => "simulator",
            Rates::Predicted { pairs, .. } => pairs.name(),
        }
    }

    fn engine(&self, gpu: &GpuSpec) -> SimEngine {
        match self {
            Rates::Simulator => SimEngine::new(gpu),
            Rates::Predicted { profiles, pairs } => SimEngine::with_contention(
                gpu,
                Box::new(PredictedContention::new(
                    gpu,
                    profiles.clone(),
                    pairs.clone(),
                )),
            ),
        }
    }
}

/// Both tasks' latencies at one split, microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitLatency {
    pub sm_a: u32,
    pub sm_b: u32,
    pub solo_a_us: f64,
    pub solo_b_us: f64,
    pub co_a_us: f64,
    pub co_b_us: f64,
}

impl SplitLatency {
    /// The larger of the two slowdowns (co-located over solo).
    pub fn worst_slowdown(&self) -> f64 {
        (self.co_a_us / self.solo_a_us).max(self.co_b_us / self.solo_b_us)
    }
}

/// The splits `splits` if each is legal on `gpu` under `sharing`, or
/// every split the GPU allows. Green-context shares are partition sizes
/// that fit the GPU together; MPS shares are each a partition size and may
/// together exceed the GPU (MPS lets percentages sum past 100, and the
/// clients then share SMs); full sharing has one split, the whole GPU for
/// each task (the only one it accepts).
pub fn resolve_splits(
    gpu: &GpuSpec,
    splits: &[(u32, u32)],
    sharing: Sharing,
) -> Result<Vec<(u32, u32)>, RunError> {
    let bad = |a: u32, b: u32, e: String| RunError::Input {
        what: format!("--sm {a},{b}"),
        reason: e,
    };
    match sharing {
        Sharing::Full => {
            let whole = (gpu.sm_count, gpu.sm_count);
            if let Some(&(a, b)) = splits.iter().find(|&&s| s != whole) {
                return Err(bad(
                    a,
                    b,
                    "with --sharing full every task may use every SM; a split has no meaning"
                        .into(),
                ));
            }
            return Ok(vec![whole]);
        }
        _ if splits.is_empty() => return Ok(allowed_splits(gpu)),
        Sharing::GreenContext => {
            for &(a, b) in splits {
                let first = Partition::first(a);
                first.check(gpu).map_err(|e| bad(a, b, e.to_string()))?;
                first
                    .after(b)
                    .check(gpu)
                    .map_err(|e| bad(a, b, e.to_string()))?;
            }
        }
        Sharing::Mps => {
            for &(a, b) in splits {
                for n in [a, b] {
                    Partition::first(n)
                        .check(gpu)
                        .map_err(|e| bad(a, b, e.to_string()))?;
                }
            }
        }
    }
    Ok(splits.to_vec())
}

/// What the standalone profiles must hold for tasks `a` and `b` at `splits`.
pub fn needs<'a>(a: &'a JobSpec, b: &'a JobSpec, splits: &[(u32, u32)]) -> Vec<Need<'a>> {
    let mut out = Vec::new();
    for &(sa, sb) in splits {
        for (task, sms) in [(a, sa), (b, sb)] {
            out.push(Need {
                task: &task.name,
                kernels: &task.kernels,
                sm_count: sms,
            });
        }
    }
    out
}

fn register(engine: &mut SimEngine, task: &JobSpec) -> Result<Vec<KernelId>, RunError> {
    if task.kernels.is_empty() {
        return Err(RunError::Input {
            what: format!("task `{}`", task.name),
            reason: "has no kernels".into(),
        });
    }
    task.kernels
        .iter()
        .map(|k| engine.add_kernel(k).map_err(RunError::from))
        .collect()
}

/// Tasks `a` (share `sm_a`) and `b` (share `sm_b`) at each split, placed
/// by `sharing` (green contexts: the first `sm_a` SMs and the next
/// `sm_b`), paced by `rates` on `gpu`. Each task alone runs on its share
/// placed the same way.
pub fn task_pair(
    gpu: &GpuSpec,
    a: &JobSpec,
    b: &JobSpec,
    splits: &[(u32, u32)],
    rates: &Rates,
    sharing: Sharing,
) -> Result<Vec<SplitLatency>, RunError> {
    let mut solo: HashMap<(bool, u32), f64> = HashMap::new();
    let mut solo_us = |is_a: bool, sms: u32| -> Result<f64, RunError> {
        if let Some(&t) = solo.get(&(is_a, sms)) {
            return Ok(t);
        }
        let mut engine = rates.engine(gpu);
        let ids = register(&mut engine, if is_a { a } else { b })?;
        let task = if is_a { a } else { b };
        let place = sharing.placements(gpu, &[sms])[0];
        let side = Side {
            kernels: &ids,
            sms: place.sms,
            max_sms: place.max_sms,
            launch_interval_us: task.launch_interval_us,
        };
        let t = compose(&mut engine, &[side], 1)?[0].mean_us;
        solo.insert((is_a, sms), t);
        Ok(t)
    };
    let mut out = Vec::with_capacity(splits.len());
    for &(sm_a, sm_b) in splits {
        let mut engine = rates.engine(gpu);
        let ids_a = register(&mut engine, a)?;
        let ids_b = register(&mut engine, b)?;
        let place = sharing.placements(gpu, &[sm_a, sm_b]);
        let sides = [
            Side {
                kernels: &ids_a,
                sms: place[0].sms,
                max_sms: place[0].max_sms,
                launch_interval_us: a.launch_interval_us,
            },
            Side {
                kernels: &ids_b,
                sms: place[1].sms,
                max_sms: place[1].max_sms,
                launch_interval_us: b.launch_interval_us,
            },
        ];
        let co = compose(&mut engine, &sides, MIN_ITERATIONS)?;
        out.push(SplitLatency {
            sm_a,
            sm_b,
            solo_a_us: solo_us(true, sm_a)?,
            solo_b_us: solo_us(false, sm_b)?,
            co_a_us: co[0].mean_us,
            co_b_us: co[1].mean_us,
        });
    }
    Ok(out)
}

/// Index of the split minimising the larger of the two slowdowns.
pub fn best_split(rows: &[SplitLatency]) -> Option<usize> {
    rows.iter()
        .enumerate()
        .min_by(|x, y| x.1.worst_slowdown().total_cmp(&y.1.worst_slowdown()))
        .map(|(i, _)| i)
}

/// One task's latency at one split, as `tally predict --task` reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRow {
    pub task: String,
    pub partner: String,
    pub method: String,
    pub sm_count: u32,
    pub partner_sm_count: u32,
    pub solo_us: f64,
    pub colocated_us: f64,
    /// Whether the user's measurements corrected it.
    pub corrected: bool,
    /// Whether its split is the pair's best for this method.
    pub best: bool,
    /// The reference's co-located latency at the same split, if asked.
    pub reference_us: Option<f64>,
}

impl TaskRow {
    pub fn slowdown(&self) -> f64 {
        self.colocated_us / self.solo_us
    }
}

/// What to predict.
#[derive(Debug)]
pub struct TaskQuery<'a> {
    pub gpu: &'a GpuSpec,
    /// Every pair of these (in the order given).
    pub tasks: &'a [JobSpec],
    /// Empty: every split the GPU allows.
    pub splits: Vec<(u32, u32)>,
    pub methods: Vec<Rates>,
    /// The reference each row is compared with (its `reference_us`).
    pub reference: Option<Rates>,
    /// The user's measurements, correcting the rows of the method named
    /// `corrected_method`.
    pub measured: &'a [MeasuredRow],
    pub corrected_method: &'a str,
    /// How the tasks share the SMs.
    pub sharing: Sharing,
}

/// Rows for every pair of tasks, method and split.
pub fn predict_tasks(query: &TaskQuery<'_>) -> Result<Vec<TaskRow>, RunError> {
    let gpu = query.gpu;
    let splits = resolve_splits(gpu, &query.splits, query.sharing)?;
    let task_named = |name: &str, at: &str| {
        query
            .tasks
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| RunError::Input {
                what: at.to_string(),
                reason: format!(
                    "task `{name}` is not among the --task arguments ({})",
                    query
                        .tasks
                        .iter()
                        .map(|t| t.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
    };
    let correction = match query
        .methods
        .iter()
        .find(|m| m.name() == query.corrected_method)
    {
        Some(rates) if !query.measured.is_empty() => Some(TaskCorrection::fit(
            query.measured,
            |r| {
                let task = task_named(&r.task, &r.at)?;
                let partner = task_named(&r.partner, &r.at)?;
                let split = allowed_splits(gpu)
                    .into_iter()
                    .find(|&(a, _)| a == r.sm_count)
                    .ok_or_else(|| RunError::Input {
                        what: r.at.clone(),
                        reason: format!(
                            "{} SMs is not a partition size of {} with room for the partner",
                            r.sm_count, gpu.name
                        ),
                    })?;
                Ok(task_pair(gpu, task, partner, &[split], rates, query.sharing)?[0].co_a_us)
            },
            gpu.sm_count,
        )?),
        _ => None,
    };
    let mut rows = Vec::new();
    for (i, a) in query.tasks.iter().enumerate() {
        for b in &query.tasks[i + 1..] {
            let reference = match &query.reference {
                Some(rates) => Some(task_pair(gpu, a, b, &splits, rates, query.sharing)?),
                None => None,
            };
            for rates in &query.methods {
                let lat = task_pair(gpu, a, b, &splits, rates, query.sharing)?;
                let best = best_split(&lat);
                let fix = correction
                    .as_ref()
                    .filter(|_| rates.name() == query.corrected_method);
                for (k, s) in lat.iter().enumerate() {
                    let sim = reference.as_ref().map(|r| &r[k]);
                    for (task, partner, sms, other_sms, solo, co, sim_co) in [
                        (
                            a,
                            b,
                            s.sm_a,
                            s.sm_b,
                            s.solo_a_us,
                            s.co_a_us,
                            sim.map(|r| r.co_a_us),
                        ),
                        (
                            b,
                            a,
                            s.sm_b,
                            s.sm_a,
                            s.solo_b_us,
                            s.co_b_us,
                            sim.map(|r| r.co_b_us),
                        ),
                    ] {
                        let factor = fix.and_then(|c| c.factor(&task.name, &partner.name, sms));
                        rows.push(TaskRow {
                            task: task.name.clone(),
                            partner: partner.name.clone(),
                            method: rates.name().to_string(),
                            sm_count: sms,
                            partner_sm_count: other_sms,
                            solo_us: solo,
                            colocated_us: co * factor.unwrap_or(1.0),
                            corrected: factor.is_some(),
                            best: best == Some(k),
                            reference_us: sim_co,
                        });
                    }
                }
            }
        }
    }
    Ok(rows)
}
