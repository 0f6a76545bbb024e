//! Profiling campaigns: the standalone sweep of every unique kernel of a
//! model over partition sizes, and the pair sweep that co-locates operator
//! pairs on disjoint partitions at several SM splits.

use std::collections::HashMap;

use tally_datasets::{
    Dataset, OpRecord, PairRow, RunCounts, RunInfo, StandaloneRow, StandaloneTable,
};
use tally_gpu::rng::SplitMix64;
use tally_gpu::{Backend, GpuError, GpuSpec, KernelSpec, Partition};

use crate::model::Model;
use tally_kernels::KernelResources;

/// The default SM splits, as the fraction of the GPU given to the first
/// operator of a pair.
pub const DEFAULT_SPLITS: [f64; 3] = [0.25, 0.5, 0.75];

/// Which operator pairs to co-locate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairSelection {
    /// Every unordered pair of unique kernels, a kernel with itself included.
    All,
    /// This many distinct pairs drawn with the campaign's seed.
    Sample(usize),
}

/// What a campaign measures.
#[derive(Debug, Clone, PartialEq)]
pub struct CampaignConfig {
    /// Partition sizes of the standalone sweep; `None` = every size the
    /// GPU's partition granularity allows. The split sizes are always added,
    /// so that each pair side has its standalone profile.
    pub sm_counts: Option<Vec<u32>>,
    /// Fractions of the GPU given to the first operator of each pair.
    pub split_fractions: Vec<f64>,
    pub pairs: PairSelection,
    pub seed: u64,
    /// The kernel library's real resources, applied to every kernel first
    /// (`tally profile --kernel-resources`).
    pub kernel_resources: Option<KernelResources>,
}

impl Default for CampaignConfig {
    fn default() -> Self {
        CampaignConfig {
            sm_counts: None,
            split_fractions: DEFAULT_SPLITS.to_vec(),
            pairs: PairSelection::All,
            seed: 0,
            kernel_resources: None,
        }
    }
}

/// Errors of a campaign.
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("{0}")]
    Config(String),
}

/// Where a campaign is, for progress bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub stage: Stage,
    pub done: u64,
    pub total: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Standalone,
    Pairs,
}

impl Stage {
    pub fn as_str(&self) -> &'static str {
        match self {
            Stage::Standalone => "standalone",
            Stage::Pairs => "pairs",
        }
    }
}

/// Everything a campaign measured.
#[derive(Debug, Clone, PartialEq)]
pub struct CampaignOutput {
    pub ops: Vec<OpRecord>,
    pub standalone: StandaloneTable,
    pub pairs: Vec<PairRow>,
    pub sm_counts: Vec<u32>,
    pub splits: Vec<(u32, u32)>,
    /// The spread of every measurement, in row order (a real GPU's).
    pub spreads: Spreads,
    /// The backend's `Backend::settings`.
    pub settings: Vec<(&'static str, String)>,
}

/// Interquartile range over the median (percent) of each row's repeated
/// timings: one per standalone row, one per side of each pair row; `None`
/// for a backend that does not repeat (the simulator).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spreads {
    pub standalone: Vec<Option<f64>>,
    pub pairs: Vec<[Option<f64>; 2]>,
}

impl Spreads {
    /// Whether any row was timed repeatedly.
    pub fn measured(&self) -> bool {
        self.standalone.iter().any(Option::is_some)
            || self.pairs.iter().flatten().any(Option::is_some)
    }

    /// Median and maximum over every timed row.
    pub fn median_and_max(&self) -> Option<(f64, f64)> {
        let mut v: Vec<f64> = self
            .standalone
            .iter()
            .chain(self.pairs.iter().flatten())
            .flatten()
            .copied()
            .collect();
        if v.is_empty() {
            return None;
        }
        v.sort_unstable_by(f64::total_cmp);
        Some((v[v.len() / 2], v[v.len() - 1]))
    }
}

/// Provenance the caller knows and the campaign does not.
#[derive(Debug, Clone, PartialEq)]
pub struct RunMeta {
    pub tool_version: String,
    pub command_line: Vec<String>,
    pub backend: String,
    pub seed: u64,
    pub noise_sigma: f64,
    pub started_at: String,
    pub finished_at: String,
}

impl RunMeta {
    /// The provenance of a run of this process that started at `started`
    /// and finishes now: tool version, command line, times.
    pub fn finished_now(
        backend: &str,
        seed: u64,
        noise_sigma: f64,
        started: std::time::SystemTime,
    ) -> RunMeta {
        RunMeta {
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            command_line: std::env::args().collect(),
            backend: backend.to_string(),
            seed,
            noise_sigma,
            started_at: tally_datasets::time::rfc3339(started),
            finished_at: tally_datasets::time::rfc3339(std::time::SystemTime::now()),
        }
    }
}

/// SM splits `(sm_a, sm_b)` for the given fractions: each side rounded
/// down to the partition granularity, both sides disjoint.
pub fn splits_for(gpu: &GpuSpec, fractions: &[f64]) -> Result<Vec<(u32, u32)>, CampaignError> {
    let total = gpu.sm_count;
    let rule = gpu.partition;
    let mut out = Vec::new();
    for &f in fractions {
        if !(f > 0.0 && f < 1.0) {
            return Err(CampaignError::Config(format!(
                "split fraction {f} must be strictly between 0 and 1"
            )));
        }
        let a = rule.round_down((f * f64::from(total)).round() as u32, total);
        let rest = total.saturating_sub(a);
        if rest < rule.min_sms {
            return Err(CampaignError::Config(format!(
                "split {f} leaves {rest} SMs for the co-runner on {} (minimum partition {})",
                gpu.name, rule.min_sms
            )));
        }
        let b = rule.round_down(rest, total).min(rest);
        if !out.contains(&(a, b)) {
            out.push((a, b));
        }
    }
    Ok(out)
}

/// The standalone sweep's partition sizes: the override (each checked
/// against the GPU's granularity) or every allowed size, plus the split
/// sizes, ascending.
pub fn sweep_sizes(
    gpu: &GpuSpec,
    requested: Option<&[u32]>,
    splits: &[(u32, u32)],
) -> Result<Vec<u32>, CampaignError> {
    let mut sizes = match requested {
        None => gpu.partition.sizes(gpu.sm_count),
        Some(list) => {
            for &s in list {
                Partition::first(s).check(gpu)?;
            }
            list.to_vec()
        }
    };
    sizes.extend(splits.iter().flat_map(|&(a, b)| [a, b]));
    sizes.sort_unstable();
    sizes.dedup();
    Ok(sizes)
}

/// The `i <= j` pairs of `n` kernels to measure, in ascending order.
fn select_pairs(n: usize, selection: PairSelection, seed: u64) -> Vec<(usize, usize)> {
    let all: Vec<(usize, usize)> = (0..n).flat_map(|i| (i..n).map(move |j| (i, j))).collect();
    match selection {
        PairSelection::Sample(k) if k < all.len() => {
            // Partial Fisher-Yates: the first k of a seeded shuffle.
            let mut rng = SplitMix64::keyed(seed, &[0x7061_6972]);
            let mut pool = all;
            for i in 0..k {
                let j = i + rng.below((pool.len() - i) as u64) as usize;
                pool.swap(i, j);
            }
            pool.truncate(k);
            pool.sort_unstable();
            pool
        }
        _ => all,
    }
}

/// The default campaign for `model` on the simulated `gpu` (seed and
/// measurement noise as given), run in this process with no progress
/// report: the dataset benches and tests start from.
pub fn simulated_dataset(
    model: &Model,
    gpu: &GpuSpec,
    seed: u64,
    noise_sigma: f64,
) -> Result<Dataset, CampaignError> {
    let backend = tally_gpu::SimBackend::new(gpu.clone(), seed, noise_sigma);
    let started = std::time::SystemTime::now();
    let out = run(&backend, model, &CampaignConfig::default(), &mut |_| {})?;
    let meta = RunMeta::finished_now("sim", seed, noise_sigma, started);
    Ok(out.into_dataset(model, gpu, meta))
}

/// Run the campaign for `model` on `backend`.
pub fn run(
    backend: &dyn Backend,
    model: &Model,
    config: &CampaignConfig,
    progress: &mut dyn FnMut(Progress),
) -> Result<CampaignOutput, CampaignError> {
    let gpu = backend.spec().clone();
    let splits = splits_for(&gpu, &config.split_fractions)?;
    let sm_counts = sweep_sizes(&gpu, config.sm_counts.as_deref(), &splits)?;
    let mut kernels: Vec<(KernelSpec, u32)> = model.unique_kernels();
    if let Some(resources) = &config.kernel_resources {
        for (k, _) in &mut kernels {
            resources.apply(k);
        }
    }
    if kernels.is_empty() {
        return Err(CampaignError::Config(format!(
            "model `{}` has no kernels",
            model.name
        )));
    }

    let ops: Vec<OpRecord> = kernels
        .iter()
        .map(|(k, launches)| OpRecord::from_kernel(model.name.clone(), *launches, k.clone()))
        .collect();

    // Standalone sweep: the columns are the counters the backend measures.
    let columns = backend.counters();
    let counter_names: Vec<String> = columns.iter().map(|c| c.name().to_string()).collect();
    let mut standalone = StandaloneTable::new(counter_names);
    let mut spreads = Spreads::default();
    let mut solo: HashMap<(usize, u32), f64> = HashMap::new();
    let total = (kernels.len() * sm_counts.len()) as u64;
    let mut done = 0;
    for (i, ((kernel, _), op)) in kernels.iter().zip(&ops).enumerate() {
        for &sms in &sm_counts {
            let m = backend.standalone(kernel, Partition::first(sms))?;
            solo.insert((i, sms), m.duration_us);
            spreads.standalone.push(m.spread_pct);
            standalone.rows.push(StandaloneRow {
                op_id: op.op_id.clone(),
                sm_count: sms,
                duration_us: m.duration_us,
                counters: columns.iter().map(|&c| m.counters.get(c)).collect(),
            });
            done += 1;
            progress(Progress {
                stage: Stage::Standalone,
                done,
                total,
            });
        }
    }

    // Pair sweep.
    let chosen = select_pairs(kernels.len(), config.pairs, config.seed);
    let total = (chosen.len() * splits.len()) as u64;
    let mut done = 0;
    let mut pairs = Vec::with_capacity(total as usize);
    for &(i, j) in &chosen {
        for &(sa, sb) in &splits {
            let pa = Partition::first(sa);
            let (ma, mb) = backend.co_run(&kernels[i].0, pa, &kernels[j].0, pa.after(sb))?;
            let (solo_a, solo_b) = (solo[&(i, sa)], solo[&(j, sb)]);
            spreads.pairs.push([ma.spread_pct, mb.spread_pct]);
            pairs.push(PairRow {
                op_a: ops[i].op_id.clone(),
                op_b: ops[j].op_id.clone(),
                sm_a: sa,
                sm_b: sb,
                duration_a_us: ma.duration_us,
                duration_b_us: mb.duration_us,
                solo_a_us: solo_a,
                solo_b_us: solo_b,
                slowdown_a: ma.duration_us / solo_a,
                slowdown_b: mb.duration_us / solo_b,
            });
            done += 1;
            progress(Progress {
                stage: Stage::Pairs,
                done,
                total,
            });
        }
    }

    Ok(CampaignOutput {
        ops,
        standalone,
        pairs,
        sm_counts,
        splits,
        spreads,
        settings: backend.settings(),
    })
}

impl RunMeta {
    /// The `run.json` of a run with this provenance. Row counts are left at
    /// zero: `Dataset::write` records the real ones.
    pub fn into_info(
        self,
        gpu: &GpuSpec,
        model: &str,
        phase: &str,
        params: serde_json::Value,
        sm_counts: Vec<u32>,
        splits: Vec<(u32, u32)>,
    ) -> RunInfo {
        RunInfo {
            schema_version: tally_datasets::SCHEMA_VERSION,
            tool: RunInfo::TOOL.to_string(),
            tool_version: self.tool_version,
            command_line: self.command_line,
            backend: self.backend,
            gpu: gpu.clone(),
            model: model.to_string(),
            phase: phase.to_string(),
            params,
            seed: self.seed,
            noise_sigma: self.noise_sigma,
            sm_counts,
            splits,
            formats: Vec::new(),
            started_at: self.started_at,
            finished_at: self.finished_at,
            counts: RunCounts::default(),
        }
    }
}

impl CampaignOutput {
    /// `params.measurement` of `run.json`: the backend's settings and the
    /// spread of every row (standalone rows, then `[a, b]` per pair row).
    fn measurement_params(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        for (key, value) in &self.settings {
            m.insert((*key).to_string(), serde_json::Value::String(value.clone()));
        }
        m.insert(
            "spread_pct".into(),
            serde_json::json!({
                "what": "interquartile range of the timed repetitions over their median",
                "standalone": self.spreads.standalone,
                "pairs": self.spreads.pairs,
            }),
        );
        serde_json::Value::Object(m)
    }

    /// The dataset of this campaign with its provenance.
    pub fn into_dataset(self, model: &Model, gpu: &GpuSpec, meta: RunMeta) -> Dataset {
        let mut params = serde_json::to_value(model.params).unwrap_or(serde_json::Value::Null);
        if let (Some(obj), true) = (
            params.as_object_mut(),
            self.spreads.measured() || !self.settings.is_empty(),
        ) {
            obj.insert("measurement".into(), self.measurement_params());
        }
        let info = meta.into_info(
            gpu,
            &model.name,
            model.phase.as_str(),
            params,
            self.sm_counts,
            self.splits,
        );
        let mut dataset = Dataset {
            dir: std::path::PathBuf::new(),
            info,
            ops: self.ops,
            standalone: self.standalone,
            pairs: self.pairs,
        };
        dataset.info.counts = dataset.counts();
        dataset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hopper_splits_round_to_eight_sm_groups() {
        let h100 = GpuSpec::preset("h100-sxm").expect("preset");
        let splits = splits_for(&h100, &DEFAULT_SPLITS).expect("valid");
        assert_eq!(splits, vec![(32, 96), (64, 64), (96, 32)]);
        let a100 = GpuSpec::preset("a100-40gb").expect("preset");
        assert_eq!(
            splits_for(&a100, &DEFAULT_SPLITS).expect("valid"),
            vec![(26, 82), (54, 54), (80, 28)]
        );
        assert!(splits_for(&h100, &[1.0]).is_err());
        assert!(splits_for(&h100, &[0.99]).is_err());
    }

    #[test]
    fn sweep_sizes_validate_overrides_and_add_split_sizes() {
        let h100 = GpuSpec::preset("h100-sxm").expect("preset");
        let splits = [(32, 96)];
        let sizes = sweep_sizes(&h100, Some(&[8, 132]), &splits).expect("valid");
        assert_eq!(sizes, vec![8, 32, 96, 132]);
        let err = sweep_sizes(&h100, Some(&[12]), &splits).expect_err("unaligned");
        assert!(err.to_string().contains("not a partition size"), "{err}");
        assert_eq!(sweep_sizes(&h100, None, &splits).expect("valid").len(), 17);
    }

    #[test]
    fn pair_sampling_is_seeded_and_distinct() {
        assert_eq!(select_pairs(3, PairSelection::All, 0).len(), 6);
        let a = select_pairs(40, PairSelection::Sample(50), 7);
        let b = select_pairs(40, PairSelection::Sample(50), 7);
        let c = select_pairs(40, PairSelection::Sample(50), 8);
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut d = a.clone();
        d.dedup();
        assert_eq!(d.len(), 50);
        assert!(a.iter().all(|&(i, j)| i <= j && j < 40));
        assert_eq!(select_pairs(3, PairSelection::Sample(100), 0).len(), 6);
    }
}
