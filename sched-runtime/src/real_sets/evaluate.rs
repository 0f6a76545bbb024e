//! Each real measurement beside what the simulator (and, for the model
//! pairs, the predictor) says of the same case: one [`RealRow`] per
//! measurement, `simulated` empty where the zoo has no model for it.
//!
//! How each set is simulated:
//! - **Shares.** An MPS share of p % is `p / 100 x SMs` SMs, rounded to
//!   the nearest partition size the GPU allows (the MPS guide defines the
//!   limit as that fraction of the SMs; the rounding to the GPU's
//!   allocation steps is ours), and a Gpulet co-runner, whose share is not
//!   recorded, `100 - p` % (Gpulet splits a GPU as (p, 100 - p)). The
//!   shares are placed by [`Evaluation::sharing`]: under `mps` (the
//!   command's default, as the sources ran) each job may hold at most its
//!   share of SMs at once, any SMs (`tally_gpu::Sharing`); under
//!   `green-context` the shares are disjoint partitions.
//! - **Latency** of a job is one iteration composed on the block-level
//!   engine (`colocation::compose`) with the job's host side
//!   (`JobSpec::launch_interval_us`, set by the [`JobSource`]); a pair
//!   composes both jobs on their SMs until each has run three iterations.
//! - **V100 microbenchmarks** are the benchmark's own `copy_kernel`
//!   (`gpu_util_bench_lib/kernels.cu` of the source repository): a
//!   grid-stride float copy, one 4-byte load and one store per thread per
//!   element, `in` and `out` each `num_bytes`, looped `itrs` times inside
//!   one launch; the bandwidth figure is `2 x itrs x num_bytes / 2^30` over
//!   the seconds, as the program prints it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use tally_gpu::{Backend, Dim3, GpuSpec, KernelKind, KernelSpec, MemoryUse, Sharing, Work};
use tally_predictor::CounterSubset;

use super::gpulet::{read_pairs, read_solo, SoloIndex};
use super::muxserve::read_llama;
use super::v100_micro::{read_bandwidth, read_l2};
use crate::colocation::compose::{compose, Side, MIN_ITERATIONS};
use crate::colocation::kernel_profiles::{KernelProfiles, Need};
use crate::colocation::pair_slowdown::PairSlowdown;
use crate::colocation::predicted_contention::PredictedContention;
use crate::engine::sim::SimEngine;
use crate::engine::Engine;
use crate::error::RunError;
use crate::workload::JobSpec;

/// The sets, in the order they are reported.
pub const SETS: [&str; 6] = [
    "gpulet-pairs",
    "gpulet-solo-scaling",
    "gpulet-solo-absolute",
    "muxserve-scaling",
    "v100-bandwidth",
    "v100-l2",
];

/// One real measurement and the estimates of the same case.
#[derive(Debug, Clone, PartialEq)]
pub struct RealRow {
    pub set: &'static str,
    pub case: String,
    pub real: f64,
    pub simulated: Option<f64>,
    pub predicted: Option<f64>,
}

/// A LLaMA phase as MuxServe measures it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlamaPhase {
    /// The whole prompt of `seq_len` tokens for each of `batch` requests.
    Prefill,
    /// One decode step of `batch` requests at a context of `seq_len`.
    Decode,
}

/// The jobs that model the real ones, built by the caller (the zoo lives
/// in a crate this one does not depend on). `None`: no model for it.
pub trait JobSource {
    /// A Gpulet model (`resnet50`, `mobilenet`, ...) at `batch`, as its
    /// benchmark ran it.
    fn cnn(&self, model: &str, batch: u32) -> Result<Option<JobSpec>, RunError>;
    /// A MuxServe LLaMA (`llama-7b`, ...) phase.
    fn llama(
        &self,
        model: &str,
        phase: LlamaPhase,
        batch: u32,
        seq_len: u32,
    ) -> Result<Option<JobSpec>, RunError>;
}

/// The predictor's side of the model pairs: its pair slowdown, read on
/// standalone profiles measured on `backend` through `counters`.
pub struct Predicted<'a> {
    pub pairs: Arc<dyn PairSlowdown>,
    pub counters: CounterSubset,
    pub backend: &'a dyn Backend,
}

impl std::fmt::Debug for Predicted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Predicted")
            .field("pairs", &self.pairs.name())
            .finish_non_exhaustive()
    }
}

/// What to evaluate.
pub struct Evaluation<'a> {
    /// `data/real-contention`.
    pub data: &'a Path,
    /// Gpulet's compute-capability-8.0 GPU.
    pub gpulet_gpu: &'a GpuSpec,
    /// MuxServe's A100 80GB.
    pub muxserve_gpu: &'a GpuSpec,
    pub v100: &'a GpuSpec,
    pub jobs: &'a dyn JobSource,
    pub predicted: Option<Predicted<'a>>,
    /// Names from [`SETS`].
    pub sets: Vec<&'static str>,
    /// How the Gpulet and MuxServe sets' MPS shares are placed (the V100
    /// microbenchmarks ran on disjoint SMs and keep them).
    pub sharing: Sharing,
}

impl std::fmt::Debug for Evaluation<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluation")
            .field("data", &self.data)
            .field("sets", &self.sets)
            .field("predicted", &self.predicted)
            .finish_non_exhaustive()
    }
}

/// The SMs of an MPS share of `pct` percent: the allowed partition size
/// nearest `pct / 100 x SMs` (SMs come in the GPU's allocation steps, TPCs
/// of two SMs on the A100).
pub fn share_sms(gpu: &GpuSpec, pct: u32) -> u32 {
    let want = f64::from(pct) / 100.0 * f64::from(gpu.sm_count);
    gpu.partition
        .sizes(gpu.sm_count)
        .into_iter()
        .min_by(|a, b| {
            (f64::from(*a) - want)
                .abs()
                .total_cmp(&(f64::from(*b) - want).abs())
        })
        .unwrap_or(gpu.sm_count)
}

fn register(
    engine: &mut SimEngine,
    job: &JobSpec,
) -> Result<Vec<crate::engine::KernelId>, RunError> {
    job.kernels
        .iter()
        .map(|k| engine.add_kernel(k).map_err(RunError::from))
        .collect()
}

/// `jobs[i]` on its share `jobs[i].1` placed by `sharing` on `gpu`, on
/// `engine`, until each ran `iterations`; each one's mean iteration,
/// microseconds.
fn composed(
    mut engine: SimEngine,
    gpu: &GpuSpec,
    sharing: Sharing,
    jobs: &[(&JobSpec, u32)],
    iterations: usize,
) -> Result<Vec<f64>, RunError> {
    let ids = jobs
        .iter()
        .map(|(j, _)| register(&mut engine, j))
        .collect::<Result<Vec<_>, _>>()?;
    let shares: Vec<u32> = jobs.iter().map(|(_, sms)| *sms).collect();
    let sides: Vec<Side<'_>> = jobs
        .iter()
        .zip(&ids)
        .zip(sharing.placements(gpu, &shares))
        .map(|(((job, _), ids), place)| Side {
            kernels: ids,
            sms: place.sms,
            max_sms: place.max_sms,
            launch_interval_us: job.launch_interval_us,
        })
        .collect();
    Ok(compose(&mut engine, &sides, iterations)?
        .iter()
        .map(|i| i.mean_us)
        .collect())
}

/// Jobs by key, built once.
struct Jobs<'a> {
    source: &'a dyn JobSource,
    cnn: HashMap<(String, u32), Option<JobSpec>>,
}

impl Jobs<'_> {
    fn cnn(&mut self, model: &str, batch: u32) -> Result<Option<&JobSpec>, RunError> {
        let key = (model.to_string(), batch);
        if !self.cnn.contains_key(&key) {
            let job = self.source.cnn(model, batch)?;
            self.cnn.insert(key.clone(), job);
        }
        Ok(self.cnn[&key].as_ref())
    }
}

/// Solo latencies by (job key, SMs), for one way of pacing.
#[derive(Default)]
struct SoloCache(HashMap<(String, u32), f64>);

impl SoloCache {
    fn get(
        &mut self,
        key: &str,
        job: &JobSpec,
        sms: u32,
        engine: impl FnOnce() -> SimEngine,
        placed: (&GpuSpec, Sharing),
    ) -> Result<f64, RunError> {
        if let Some(&t) = self.0.get(&(key.to_string(), sms)) {
            return Ok(t);
        }
        let t = composed(engine(), placed.0, placed.1, &[(job, sms)], 1)?[0];
        self.0.insert((key.to_string(), sms), t);
        Ok(t)
    }
}

impl Evaluation<'_> {
    /// Every row of every set asked for.
    pub fn run(&self) -> Result<Vec<RealRow>, RunError> {
        let mut rows = Vec::new();
        let mut jobs = Jobs {
            source: self.jobs,
            cnn: HashMap::new(),
        };
        let want = |s: &str| self.sets.contains(&s);
        let gpulet = self.data.join("Gpulet");
        if want("gpulet-solo-absolute") || want("gpulet-solo-scaling") || want("gpulet-pairs") {
            let solo = read_solo(&gpulet.join("inference.csv"))?;
            let index = SoloIndex::new(&solo);
            let mut sim = SoloCache::default();
            let gpu = self.gpulet_gpu;
            for r in &solo {
                let key = format!("{}@{}", r.model, r.batch);
                let job = jobs.cnn(&r.model, r.batch)?.cloned();
                let mut solo_at = |pct: u32| -> Result<Option<f64>, RunError> {
                    match &job {
                        Some(j) => Ok(Some(
                            sim.get(
                                &key,
                                j,
                                share_sms(gpu, pct),
                                || SimEngine::new(gpu),
                                (gpu, self.sharing),
                            )? / 1e3,
                        )),
                        None => Ok(None),
                    }
                };
                if r.share_pct == 100 && want("gpulet-solo-absolute") {
                    rows.push(RealRow {
                        set: "gpulet-solo-absolute",
                        case: format!("{key} p100 ms"),
                        real: r.latency_ms,
                        simulated: solo_at(100)?,
                        predicted: None,
                    });
                }
                if r.share_pct < 100 && want("gpulet-solo-scaling") {
                    if let Some(full) = index.latency_ms(&r.model, r.batch, 100) {
                        let simulated = match (solo_at(r.share_pct)?, solo_at(100)?) {
                            (Some(p), Some(f)) => Some(p / f),
                            _ => None,
                        };
                        rows.push(RealRow {
                            set: "gpulet-solo-scaling",
                            case: format!("{key} p{} / p100", r.share_pct),
                            real: r.latency_ms / full,
                            simulated,
                            predicted: None,
                        });
                    }
                }
            }
            if want("gpulet-pairs") {
                rows.extend(self.gpulet_pairs(&gpulet, &index, &mut jobs)?);
            }
        }
        if want("muxserve-scaling") {
            rows.extend(self.muxserve()?);
        }
        if want("v100-bandwidth") {
            rows.extend(self.v100_bandwidth()?);
        }
        if want("v100-l2") {
            rows.extend(self.v100_l2()?);
        }
        Ok(rows)
    }

    fn gpulet_pairs(
        &self,
        dir: &Path,
        index: &SoloIndex,
        jobs: &mut Jobs<'_>,
    ) -> Result<Vec<RealRow>, RunError> {
        let gpu = self.gpulet_gpu;
        let pairs = read_pairs(&dir.join("interference.csv"))?;
        // Every job and share first, so the predictor's standalone
        // profiles are measured once for all of them.
        let mut sides: Vec<(String, u32, u32)> = Vec::new();
        for r in &pairs {
            let v = share_sms(gpu, r.share_pct);
            for (m, b, sms) in [
                (&r.victim, r.batch, v),
                (&r.co_runner, r.co_batch, gpu.sm_count - v),
            ] {
                if jobs.cnn(m, b)?.is_some() {
                    sides.push((m.clone(), b, sms));
                }
            }
        }
        sides.sort();
        sides.dedup();
        let profiles = match &self.predicted {
            Some(p) => {
                let needs: Vec<Need<'_>> = sides
                    .iter()
                    .map(|(m, b, sms)| {
                        let job = jobs.cnn[&(m.clone(), *b)].as_ref().expect("listed above");
                        Need {
                            task: &job.name,
                            kernels: &job.kernels,
                            sm_count: *sms,
                        }
                    })
                    .collect();
                Some(Arc::new(KernelProfiles::from_backend(
                    p.backend,
                    &p.counters,
                    &needs,
                )?))
            }
            None => None,
        };
        let predicted_engine = || -> Option<SimEngine> {
            let p = self.predicted.as_ref()?;
            Some(SimEngine::with_contention(
                gpu,
                Box::new(PredictedContention::new(
                    gpu,
                    profiles.clone().expect("profiles with the predictor"),
                    p.pairs.clone(),
                )),
            ))
        };
        let mut solo_sim = SoloCache::default();
        let mut solo_pred = SoloCache::default();
        let mut out = Vec::new();
        for r in &pairs {
            let Some(real) = index.slowdown(r) else {
                continue;
            };
            let v_sms = share_sms(gpu, r.share_pct);
            let c_sms = gpu.sm_count - v_sms;
            let case = format!(
                "{}@{} p{} | {}@{} p{}",
                r.victim,
                r.batch,
                r.share_pct,
                r.co_runner,
                r.co_batch,
                100 - r.share_pct
            );
            let victim = jobs.cnn(&r.victim, r.batch)?.cloned();
            let co = jobs.cnn(&r.co_runner, r.co_batch)?.cloned();
            let (simulated, predicted) = match (victim, co) {
                (Some(v), Some(c)) => {
                    let key = format!("{}@{}", r.victim, r.batch);
                    let pair = [(&v, v_sms), (&c, c_sms)];
                    let co_sim = composed(
                        SimEngine::new(gpu),
                        gpu,
                        self.sharing,
                        &pair,
                        MIN_ITERATIONS,
                    )?[0];
                    let alone = solo_sim.get(
                        &key,
                        &v,
                        v_sms,
                        || SimEngine::new(gpu),
                        (gpu, self.sharing),
                    )?;
                    let predicted = match predicted_engine() {
                        Some(engine) => {
                            let co_pred =
                                composed(engine, gpu, self.sharing, &pair, MIN_ITERATIONS)?[0];
                            let alone = solo_pred.get(
                                &key,
                                &v,
                                v_sms,
                                || predicted_engine().expect("a predictor"),
                                (gpu, self.sharing),
                            )?;
                            Some(co_pred / alone)
                        }
                        None => None,
                    };
                    (Some(co_sim / alone), predicted)
                }
                _ => (None, None),
            };
            out.push(RealRow {
                set: "gpulet-pairs",
                case,
                real,
                simulated,
                predicted,
            });
        }
        Ok(out)
    }

    fn muxserve(&self) -> Result<Vec<RealRow>, RunError> {
        let gpu = self.muxserve_gpu;
        let points = read_llama(&self.data.join("MuxServe/llama.json"))?;
        let full: HashMap<PointKey, (Option<f64>, Option<f64>)> = points
            .iter()
            .filter(|p| p.sm_pct == 100)
            .map(|p| {
                (
                    (p.model.clone(), p.tensor_parallel, p.batch, p.seq_len),
                    (p.prefill_ms, p.decode_ms),
                )
            })
            .collect();
        let mut cache: HashMap<(String, bool, u32, u32, u32), Option<f64>> = HashMap::new();
        let mut latency = |model: &str, phase: LlamaPhase, batch, seq, sms| {
            let key = (
                model.to_string(),
                phase == LlamaPhase::Prefill,
                batch,
                seq,
                sms,
            );
            if let Some(v) = cache.get(&key) {
                return Ok::<_, RunError>(*v);
            }
            let v = match self.jobs.llama(model, phase, batch, seq)? {
                Some(job) => {
                    Some(composed(SimEngine::new(gpu), gpu, self.sharing, &[(&job, sms)], 1)?[0])
                }
                None => None,
            };
            cache.insert(key, v);
            Ok(v)
        };
        let mut out = Vec::new();
        // Tensor parallelism spreads a model over GPUs, which one
        // simulated GPU does not model: TP 1 only.
        for p in points
            .iter()
            .filter(|p| p.tensor_parallel == 1 && p.sm_pct < 100)
        {
            let Some(&(full_prefill, full_decode)) =
                full.get(&(p.model.clone(), 1, p.batch, p.seq_len))
            else {
                continue;
            };
            for (phase, name, at, at_full) in [
                (LlamaPhase::Prefill, "prefill", p.prefill_ms, full_prefill),
                (LlamaPhase::Decode, "decode", p.decode_ms, full_decode),
            ] {
                let (Some(at), Some(at_full)) = (at, at_full) else {
                    continue;
                };
                let part = latency(
                    &p.model,
                    phase,
                    p.batch,
                    p.seq_len,
                    share_sms(gpu, p.sm_pct),
                )?;
                let whole = latency(&p.model, phase, p.batch, p.seq_len, gpu.sm_count)?;
                out.push(RealRow {
                    set: "muxserve-scaling",
                    case: format!(
                        "{} {name} batch {} seq {} sm{} / sm100",
                        p.model, p.batch, p.seq_len, p.sm_pct
                    ),
                    real: at / at_full,
                    simulated: part.zip(whole).map(|(a, b)| a / b),
                    predicted: None,
                });
            }
        }
        Ok(out)
    }

    fn v100_bandwidth(&self) -> Result<Vec<RealRow>, RunError> {
        let gpu = self.v100;
        let dir = self
            .data
            .join("gpu-util-interference-V100/inter_sm/memory_bandwidth");
        let runs = read_bandwidth(&dir.join("output.md"))?;
        // From `run_membw_experiment.sh`: 2 GiB, 50 iterations, 50 % each.
        let (bytes, itrs, sms) = (2.0 * GIB, 50.0, share_sms(gpu, 50));
        let mut out = Vec::new();
        let mut by_config: Vec<(u32, u32, bool, Vec<f64>)> = Vec::new();
        for r in &runs {
            match by_config
                .iter_mut()
                .find(|c| (c.0, c.1, c.2) == (r.blocks, r.threads, r.paired))
            {
                Some(c) => c.3.push(r.gib_per_s),
                None => by_config.push((r.blocks, r.threads, r.paired, vec![r.gib_per_s])),
            }
        }
        for (blocks, threads, paired, values) in by_config {
            let real = values.iter().sum::<f64>() / values.len() as f64;
            let job = JobSpec::gpu_bound(
                "copy_kernel",
                vec![copy_kernel(blocks, threads, bytes, itrs, false)],
            );
            let us = if paired {
                composed(
                    SimEngine::new(gpu),
                    gpu,
                    Sharing::GreenContext,
                    &[(&job, sms), (&job, sms)],
                    1,
                )?[0]
            } else {
                composed(
                    SimEngine::new(gpu),
                    gpu,
                    Sharing::GreenContext,
                    &[(&job, sms)],
                    1,
                )?[0]
            };
            let gib_per_s = 2.0 * itrs * bytes / GIB / (us / 1e6);
            out.push(RealRow {
                set: "v100-bandwidth",
                case: format!(
                    "{blocks}x{threads} {} GiB/s",
                    if paired { "each of two" } else { "alone" }
                ),
                real,
                simulated: Some(gib_per_s),
                predicted: None,
            });
        }
        Ok(out)
    }

    fn v100_l2(&self) -> Result<Vec<RealRow>, RunError> {
        let gpu = self.v100;
        let dir = self
            .data
            .join("gpu-util-interference-V100/inter_sm/l2_cache");
        let points = read_l2(&dir.join("output.md"))?;
        // From `run_l2_experiment.sh`: 40 blocks of 1024 threads, 10,000
        // iterations; the two copies are streams of one process, their
        // blocks on disjoint SMs (one block per SM each).
        let (blocks, threads, itrs) = (40, 1024, 10_000.0);
        let half = gpu.sm_count / 2;
        let mut out = Vec::new();
        for p in &points {
            let job = JobSpec::gpu_bound(
                "copy_kernel",
                vec![copy_kernel(
                    blocks,
                    threads,
                    p.working_set_mb * MIB,
                    itrs,
                    true,
                )],
            );
            let alone = composed(
                SimEngine::new(gpu),
                gpu,
                Sharing::GreenContext,
                &[(&job, half)],
                1,
            )?[0]
                / 1e3;
            let pair = [(&job, half), (&job, half)];
            let both =
                composed(SimEngine::new(gpu), gpu, Sharing::GreenContext, &pair, 1)?[0] / 1e3;
            for (what, real, simulated) in [
                ("alone", p.alone_ms, alone),
                ("colocated", p.colocated_ms, both),
            ] {
                out.push(RealRow {
                    set: "v100-l2",
                    case: format!("{} MB {what} ms", p.working_set_mb),
                    real,
                    simulated: Some(simulated),
                    predicted: None,
                });
            }
        }
        Ok(out)
    }
}

/// (model, tensor-parallel GPUs, batch, sequence length) of a MuxServe point.
type PointKey = (String, u32, u32, u32);

const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * MIB;

/// The benchmark's `copy_kernel`: `out[i] = in[i]` over `bytes` of floats
/// with a grid stride, `itrs` times in one launch. Each thread has one
/// 4-byte load in flight (the store depends on it, and `in` and `out` may
/// alias, so the compiler cannot hoist the next load): 128 bytes per warp.
/// Where the two buffers fit in L2 (`reuse`), only the first pass reads
/// DRAM; otherwise every pass streams from it.
fn copy_kernel(blocks: u32, threads: u32, bytes: f64, itrs: f64, reuse: bool) -> KernelSpec {
    let elements = bytes / 4.0;
    let traffic = 2.0 * bytes * itrs;
    let (dram_read, dram_write, working_set) = if reuse {
        (bytes, bytes, 2.0 * bytes)
    } else {
        (bytes * itrs, bytes * itrs, 0.0)
    };
    KernelSpec {
        name: "copy_kernel".into(),
        kind: KernelKind::Copy,
        grid: Dim3::linear(blocks),
        block: Dim3::linear(threads),
        registers_per_thread: 16,
        shared_mem_static: 0,
        shared_mem_dynamic: 0,
        work: Work {
            // Per element and warp: the load, the store, the index
            // update, the compare and the branch.
            other_warp_insts: 5.0 * elements * itrs / 32.0,
            ..Work::default()
        },
        memory: MemoryUse {
            l1_bytes: traffic,
            l2_bytes: traffic,
            dram_read_bytes: dram_read,
            dram_write_bytes: dram_write,
            l2_working_set: working_set,
            inflight_bytes_per_warp: 128.0,
        },
    }
}
