//! Command-line arguments of `tally` (clap derive). Parsing only: values are
//! turned into library objects by the command modules.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::env;

#[derive(Debug, Parser)]
#[command(
    name = "tally",
    version,
    about = "Share one GPU between deep-learning jobs without losing performance isolation",
    long_about = "Profile operators standalone and in SM-partitioned pairs, on a simulated GPU \
                  (default) or a real one, and export the datasets as CSV / Parquet."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List GPU presets (and, with --backend cuda, real devices).
    #[command(
        after_help = "Examples:\n  tally gpus\n  tally gpus --format json\n  tally gpus --spec h100-sxm > my-gpu.toml"
    )]
    Gpus(GpusArgs),
    /// List zoo models, or show one model's operators and kernels.
    #[command(
        after_help = "Examples:\n  tally models\n  tally models bert-base --seq 256\n  \
                            tally models profiler/examples-models/tiny-mlp.toml\n  \
                            tally models bert-base --stand-ins"
    )]
    Models(ModelsArgs),
    /// Profile a model's kernels standalone and in SM-partitioned pairs.
    #[command(
        after_help = "Examples:\n  tally profile --model resnet50 --out runs/r50\n  \
                            tally profile --model llama2-7b-decode --gpu h100-sxm --kv 4096 --out runs/llama\n  \
                            tally profile --model my-model.toml --pairs 200 --format both --out runs/mine"
    )]
    Profile(ProfileArgs),
    /// Summarise the interference in profiled datasets (slowdowns, intensity-rule error).
    #[command(after_help = "Examples:\n  tally summary --data runs/r50 --data runs/bert")]
    Summary(SummaryArgs),
    /// Compare two datasets of one model row by row (a real GPU against the simulator).
    #[command(
        after_help = "Examples:\n  tally compare runs/bert-sim runs/bert-cuda\n  \
                            tally compare runs/a runs/b --show pairs --format csv > pairs.csv"
    )]
    Compare(CompareArgs),
    /// Train the contention predictor on profiled datasets and write a model file.
    #[command(
        after_help = "Examples:\n  tally train --data runs/r50 --data runs/bert --out r50-bert.json\n  \
                            tally train --data runs/zoo/* --method linear --out linear.json\n  \
                            tally train --data runs/zoo/* --counters-from runs/imported --out subset.json"
    )]
    Train(TrainArgs),
    /// Evaluate every method on random, leave-one-model-out and few-shot splits.
    #[command(
        after_help = "Examples:\n  tally eval --data runs/r50 --data runs/bert\n  \
                            tally eval --data runs/zoo/* --split loo --format csv > loo.csv"
    )]
    Eval(EvalArgs),
    /// Predict co-located latencies of operator pairs over the GPU's SM splits.
    #[command(
        after_help = "Examples:\n  tally predict --predictor model.json --data runs/r50 --a 0 --b 3 --explain\n  \
                            tally predict --predictor model.json --data runs/r50 --pairs pairs.csv --format csv"
    )]
    Predict(PredictArgs),
    /// Co-execute an HP inference job with BE training jobs under a scheduling policy.
    #[command(
        after_help = "Examples:\n  tally run --hp bert-base:infer --be resnet50:train --policy tally --load 0.5 --out runs/run1\n  \
                            tally run --hp llama2-7b-decode:infer --be bert-base:train --compare all --duration 10s --out runs/cmp\n  \
                            tally run --hp bert-base:infer --be gpt2:train --policy tally-predict --predictor model.json --out runs/tp"
    )]
    Run(RunArgs),
    /// Put `tally run` results beside the published A100 table (p99 slowdown, system throughput).
    #[command(
        after_help = "Examples:\n  tally side-by-side runs/table/pairs/* --out runs/table/side_by_side.csv\n  \
                            tally side-by-side runs/cmp --published my-table.csv --out side.csv --format csv"
    )]
    SideBySide(SideBySideArgs),
    /// Put the simulator and the predictor beside real GPU-sharing measurements (data/real-contention).
    #[command(after_help = "Examples:\n  tally real-contention --out runs/real\n  \
                            tally real-contention --set v100-bandwidth --set v100-l2 --out runs/micro\n  \
                            tally real-contention --predictor runs/zoo/model.json --out runs/real")]
    RealContention(RealContentionArgs),
    /// Transform PTX kernels for slicing and preemption, or check them with ptxas.
    #[command(subcommand)]
    Ptx(PtxCommand),
    /// The CUDA C kernel library: compile (NVRTC), transform, assemble (ptxas).
    #[command(subcommand)]
    Kernels(KernelsCommand),
    /// Launch one kernel's stand-in once on a partition (what `--counters ncu` runs under ncu).
    #[command(hide = true)]
    NcuTarget(NcuTargetArgs),
    /// Turn an Nsight Compute CSV export (raw or details page) into a standalone dataset.
    #[command(
        after_help = "Examples:\n  ncu --csv --page raw --print-units base --metrics \"$(tally import-ncu --print-metrics)\" \\\n      python train.py > prof.csv\n  \
                            tally import-ncu prof.csv --gpu h100-sxm --out runs/prof\n  \
                            ncu --csv --page details --set full python train.py > full.csv\n  \
                            tally import-ncu full.csv --print-metrics\n  \
                            tally import-ncu full.csv --out runs/full"
    )]
    ImportNcu(ImportNcuArgs),
    /// Export a dataset for another tool (Orion's per-kernel profile CSV).
    #[command(after_help = "Examples:\n  tally export runs/r50 --to orion --out r50-orion.csv")]
    Export(ExportArgs),
    /// Draw the figures of a profile dataset, an eval result or a `tally run` directory.
    #[command(after_help = "Examples:\n  tally plot runs/bert -o figs\n  \
                            tally eval --data runs/bert runs/gpt2 --out runs/eval && tally plot runs/eval --svg")]
    Plot(PlotArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell).
    #[command(
        after_help = "Examples:\n  tally completions bash > ~/.local/share/bash-completion/completions/tally\n  \
                            tally completions zsh > ~/.zfunc/_tally\n  \
                            tally completions fish > ~/.config/fish/completions/tally.fish"
    )]
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one page per subcommand into a directory.
    #[command(after_help = "Examples:\n  tally man | man -l -\n  tally man --out-dir target/man")]
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write `tally.1` and one `tally-COMMAND.1` per subcommand here instead of printing `tally.1`.
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum PtxCommand {
    /// Add sliced, PTB and preemptive-PTB variants of every entry to a PTX module.
    #[command(
        after_help = "Examples:\n  tally ptx transform kernel.ptx --variant all -o kernel.tally.ptx\n  \
                            tally ptx transform kernel.ptx --variant preemptive-ptb --skip-unsupported -o out.ptx"
    )]
    Transform(PtxTransformArgs),
    /// Assemble a PTX module with ptxas and report each function's resources.
    #[command(after_help = "Examples:\n  tally ptx check kernel.tally.ptx --arch sm_90")]
    Check(PtxCheckArgs),
}

#[derive(Debug, Args)]
pub struct PtxTransformArgs {
    /// The PTX module to transform.
    pub input: PathBuf,
    /// Which variants to add: sliced, ptb, preemptive-ptb or all.
    #[arg(long, default_value = "all")]
    pub variant: String,
    /// Output PTX file (the original entries plus the variants).
    #[arg(short = 'o', long = "out")]
    pub out: PathBuf,
    /// Skip entries that cannot be transformed (reported on stderr) instead of failing.
    #[arg(long)]
    pub skip_unsupported: bool,
}

#[derive(Debug, Args)]
pub struct PtxCheckArgs {
    /// The PTX module to assemble.
    pub input: PathBuf,
    /// Target architecture: sm_80, sm_86, sm_89 or sm_90.
    #[arg(long, default_value = "sm_90")]
    pub arch: String,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Subcommand)]
pub enum KernelsCommand {
    /// Compile every library kernel, transform it, assemble every variant; one table.
    #[command(after_help = "Examples:\n  tally kernels build --arch sm_90\n  \
                            tally kernels build --arch sm_80 --format csv --out runs/kernels-sm80")]
    Build(KernelsBuildArgs),
    /// On a real GPU: run every kernel and each variant on the same inputs,
    /// compare outputs byte for byte, measure preemption latency.
    #[command(
        after_help = "Examples:\n  tally kernels verify\n  tally kernels verify --device 1 --format json\n\n\
                      Needs an NVIDIA driver (CUDA 13) and a GPU of compute capability 8.0-9.0;\n\
                      scripts/gpu-check.sh runs it."
    )]
    Verify(KernelsVerifyArgs),
}

#[derive(Debug, Args)]
pub struct KernelsVerifyArgs {
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Seed of the input data.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Running under a profiler (`ncu`, which replays every launch to
    /// completion): leave out the retreat-and-resume runs and the
    /// preemption latency, which no replayed kernel can show.
    #[arg(long)]
    pub under_profiler: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct KernelsBuildArgs {
    /// Target architecture: sm_80, sm_86, sm_89 or sm_90.
    #[arg(long, default_value = "sm_90")]
    pub arch: String,
    /// Also write the transformed PTX of every file and resources.json here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// How `tally run --load` draws HP arrivals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ArrivalProcess {
    /// A Poisson process at the load.
    Poisson,
    /// The load's count of requests over the run, at uniform times.
    FixedCount,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TableFormat {
    Table,
    Csv,
    Json,
}

#[derive(Debug, Args)]
pub struct OutputArgs {
    /// How to print tables.
    #[arg(long, value_enum, default_value_t = TableFormat::Table)]
    pub format: TableFormat,
}

#[derive(Debug, Args)]
pub struct SideBySideArgs {
    /// `tally run` directories (each holds summary.csv).
    #[arg(required = true)]
    pub runs: Vec<PathBuf>,
    /// The published per-pair table (the Tally artifact's A100 results).
    #[arg(
        long,
        default_value = "data/tally-bench-a100/per_pair_p99_and_throughput_derived.csv"
    )]
    pub published: PathBuf,
    /// Where to write side_by_side.csv (one row per pair and policy).
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct RealContentionArgs {
    /// The real sets (the repository's copy, provenance in its README).
    #[arg(long, default_value = "data/real-contention")]
    pub data: PathBuf,
    /// Where to write real_contention.csv and summary.csv.
    #[arg(long)]
    pub out: PathBuf,
    /// Only these sets (repeat; default: all).
    #[arg(long, value_name = "NAME")]
    pub set: Vec<String>,
    /// A predictor file trained on the simulated zoo (`tally train`): its
    /// task-level prediction of every model pair fills the `predicted` column.
    #[arg(long)]
    pub predictor: Option<PathBuf>,
    /// The jobs' host side: eager (the sources ran PyTorch eagerly),
    /// cuda-graphs or host-ahead (no host time).
    #[arg(long, default_value = "eager")]
    pub framework: String,
    /// How the Gpulet and MuxServe shares sit on the SMs: mps (each job
    /// capped at its share of SMs, any SMs, as the sources ran),
    /// green-context (disjoint partitions) or full.
    #[arg(long, default_value = "mps")]
    pub sharing: String,
    /// Replace an existing real_contention.csv.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct GpusArgs {
    /// Print this preset's full spec as TOML (a starting point for `--gpu FILE.toml`).
    #[arg(long, value_name = "NAME")]
    pub spec: Option<String>,
    /// Backend whose devices to list.
    #[arg(long, default_value = "sim", env = env::TALLY_BACKEND)]
    pub backend: String,
    /// With --backend cuda: create green-context partitions of these SM
    /// counts on the device and report what the driver gave (a GPU check).
    #[arg(long, value_delimiter = ',', value_name = "SMS")]
    pub try_split: Option<Vec<u32>>,
    /// With --try-split: the CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct ModelParamArgs {
    /// Batch size (default: the model's, or the model argument's `@BATCH`
    /// suffix; when both are given they must agree).
    #[arg(long)]
    pub batch: Option<u32>,
    /// Sequence length, for transformers.
    #[arg(long)]
    pub seq: Option<u32>,
    /// Tokens in the KV cache, for decode models.
    #[arg(long)]
    pub kv: Option<u32>,
}

#[derive(Debug, Args)]
pub struct ModelsArgs {
    /// A zoo model, `NAME[:VARIANT][@BATCH]` (`bert-base`, `resnet50:train@128`,
    /// ...; the variant may end in `-fp32`, FP32 without autocast, and
    /// `-nocudnn`, convolutions as a PyTorch without cuDNN runs them:
    /// `resnet50:train-fp32-nocudnn@128`), or a model file (.toml / .json).
    pub name: Option<String>,
    #[command(flatten)]
    pub params: ModelParamArgs,
    /// Show, per unique kernel, the library launch `--backend cuda` runs in its place.
    #[arg(long, requires = "name")]
    pub stand_ins: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Where and how a real GPU measures (`--backend cuda`): the device, and
/// the launches of each measurement (a profile's every row, a run's
/// kernel configurations alone).
#[derive(Debug, Args)]
pub struct CudaMeasureArgs {
    /// CUDA device ordinal (--backend cuda).
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Launches before timing starts, per measurement (--backend cuda).
    #[arg(long, default_value_t = tally_gpu::cuda::TimingConfig::default().warmup)]
    pub warmup: u32,
    /// Timed repetitions per measurement; the median is recorded (--backend cuda).
    #[arg(long, default_value_t = tally_gpu::cuda::TimingConfig::default().repetitions)]
    pub reps: u32,
}

impl CudaMeasureArgs {
    /// The timing configuration the arguments give.
    pub fn timing(&self) -> tally_gpu::Result<tally_gpu::cuda::TimingConfig> {
        tally_gpu::cuda::TimingConfig::new(self.warmup, self.reps)
    }
}

#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// A zoo model, `NAME[:VARIANT][@BATCH]` (see `tally models`), or a model
    /// file (.toml / .json).
    #[arg(long)]
    pub model: String,
    #[command(flatten)]
    pub params: ModelParamArgs,
    /// GPU preset, a GPU spec .toml file (see `tally gpus`), or `auto` (CUDA device 0's own
    /// spec) [default: h100-sxm with --backend sim, auto with --backend cuda].
    #[arg(long, env = env::TALLY_GPU)]
    pub gpu: Option<String>,
    /// `sim` (the simulated GPU) or `cuda` (a real NVIDIA GPU).
    #[arg(long, default_value = "sim", env = env::TALLY_BACKEND)]
    pub backend: String,
    /// Seed of measurement noise and pair sampling.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Log-standard-deviation of the simulator's measurement noise.
    #[arg(long, default_value_t = tally_gpu::sim::DEFAULT_NOISE_SIGMA)]
    pub noise: f64,
    #[command(flatten)]
    pub cuda: CudaMeasureArgs,
    /// Where a real GPU's counters come from: `launch` (duration and launch counters)
    /// or `ncu` (every counter, each standalone row re-run under Nsight Compute).
    #[arg(long, value_enum, default_value_t = CounterSource::Launch)]
    pub counters: CounterSource,
    /// Measure this many operator pairs, sampled with the seed (default: all pairs).
    #[arg(long)]
    pub pairs: Option<usize>,
    /// Partition sizes of the standalone sweep, comma-separated (default: every allowed size).
    #[arg(long, value_delimiter = ',')]
    pub sm_counts: Option<Vec<u32>>,
    /// Fractions of the GPU given to the first operator of a pair, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = tally_profiler::campaign::DEFAULT_SPLITS)]
    pub splits: Vec<f64>,
    /// Table format: csv, parquet or both.
    #[arg(long, default_value = "csv")]
    pub format: String,
    /// Output directory (created; must not hold an earlier run unless --force).
    #[arg(long)]
    pub out: PathBuf,
    /// Replace an earlier run in --out.
    #[arg(long)]
    pub force: bool,
    /// No progress bar.
    #[arg(long, short, env = env::TALLY_QUIET)]
    pub quiet: bool,
    /// Give each kernel the real launch of its library kernel (block, registers,
    /// shared memory) from `tally kernels build --out DIR`'s DIR/resources.json.
    #[arg(long, value_name = "FILE")]
    pub kernel_resources: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SummaryArgs {
    /// A dataset directory written by `tally profile` (repeatable).
    #[arg(long, required = true)]
    pub data: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct NcuTargetArgs {
    /// The kernel, a serialised KernelSpec (.toml).
    #[arg(long)]
    pub kernel: PathBuf,
    #[arg(long)]
    pub sm_count: u32,
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The reference dataset (for example the simulator's).
    pub a: PathBuf,
    /// The dataset compared with it (for example the real GPU's).
    pub b: PathBuf,
    /// Which table to print.
    #[arg(long, value_enum, default_value_t = CompareShow::All)]
    pub show: CompareShow,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `tally profile --counters`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CounterSource {
    Launch,
    Ncu,
}

/// The tables of `tally compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareShow {
    /// Summary, standalone rows and pair sides (as text, one after another).
    All,
    Summary,
    Standalone,
    Pairs,
}

#[derive(Debug, Args)]
pub struct LearnerArgs {
    /// Seed of the validation split and the learners.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Boosting rounds of the gradient-boosted trees (default 40).
    #[arg(long)]
    pub gbm_trees: Option<usize>,
    /// Depth of each boosted tree (default 8).
    #[arg(long)]
    pub gbm_depth: Option<usize>,
    /// Shrinkage of each boosted tree, in (0, 1] (default 0.5).
    #[arg(long)]
    pub gbm_learning_rate: Option<f32>,
}

#[derive(Debug, Args)]
pub struct TrainArgs {
    /// A dataset directory written by `tally profile` (repeatable; all from one GPU).
    #[arg(long, required = true, num_args = 1..)]
    pub data: Vec<PathBuf>,
    /// `pairsight` (both learned models, the better one by validation is the
    /// default), `linear`, `gbm`, or `all` (same as pairsight). The baselines
    /// are always fitted.
    #[arg(long, default_value = "pairsight")]
    pub method: String,
    #[command(flatten)]
    pub learner: LearnerArgs,
    /// Read only the counters this dataset has (an `import-ncu` of an
    /// export without every counter), so the model predicts on it.
    #[arg(long)]
    pub counters_from: Option<PathBuf>,
    /// Model file to write (JSON).
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// A dataset directory written by `tally profile` (repeatable; all from one GPU).
    #[arg(long, required = true, num_args = 1..)]
    pub data: Vec<PathBuf>,
    /// `random` (seeded 20 % of pair rows held out), `loo` (each model held
    /// out), `fewshot` (held out, K = 0, 5, 10, 20 pair rows measured) or `all`.
    #[arg(long, default_value = "all")]
    pub split: String,
    /// Learned methods to evaluate: `pairsight`, `linear`, `gbm` or `all`
    /// (the baselines always are).
    #[arg(long, default_value = "all")]
    pub method: String,
    /// Print only the means over held-out models, not one row per model.
    #[arg(long)]
    pub brief: bool,
    /// Also write the error table, every test sample's prediction and what
    /// was evaluated into this directory (what `tally plot` draws).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub learner: LearnerArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct PredictArgs {
    /// Model file written by `tally train`.
    #[arg(long)]
    pub predictor: PathBuf,
    /// Dataset(s) holding the standalone profiles: one for operator pairs;
    /// with --task, any number (default: profile the tasks' kernels on the
    /// fly on --backend).
    #[arg(long)]
    pub data: Vec<PathBuf>,
    /// CSV of pairs to predict: columns `op_a,op_b` and optionally `sm_a,sm_b`.
    #[arg(long, conflicts_with_all = ["a", "b", "task"])]
    pub pairs: Option<PathBuf>,
    /// The latency-critical operator (op_id, kernel name, or part of one).
    #[arg(long, requires = "b", required_unless_present_any = ["pairs", "task"], conflicts_with = "task")]
    pub a: Option<String>,
    /// The co-runner.
    #[arg(long, requires = "a")]
    pub b: Option<String>,
    /// A task: a zoo model (`bert-base:infer@1`, `resnet50:train@32`), a
    /// model file, or a kernel-trace CSV, run back to back on its own SM
    /// partition. Give two (or more: every pair); predicts each task's
    /// latency beside the other.
    #[arg(long, num_args = 1)]
    pub task: Vec<String>,
    /// Only these splits, each as SM_A,SM_B; repeat for several (default:
    /// every split the GPU allows).
    #[arg(long, value_name = "SM_A,SM_B")]
    pub sm: Vec<String>,
    /// Bound on A's co-located latency over A alone on the whole GPU when
    /// choosing the best split of an operator pair.
    #[arg(long, default_value_t = 1.5)]
    pub max_slowdown: f64,
    /// Show the linear model's per-resource terms of A's slowdown.
    #[arg(long, conflicts_with = "task")]
    pub explain: bool,
    /// Learned method to predict with (default: the model file's).
    #[arg(long)]
    pub method: Option<String>,
    /// With --task: mark (`best` column) the split that minimises the
    /// larger of the two tasks' slowdowns.
    #[arg(long, requires = "task")]
    pub best: bool,
    /// With --task: the GPU (default: the predictor's; another is refused).
    #[arg(long, requires = "task")]
    pub gpu: Option<String>,
    /// With --task: compose with these, comma-separated: `predictor`,
    /// `scaling`, `intensity-rule` (the baselines), `oracle` (the
    /// simulator's kernel-pair contention model in the same composition),
    /// `simulator` (the block-level simulated GPU's own rates and timing).
    #[arg(long, requires = "task", default_value = "predictor")]
    pub methods: String,
    /// With --task: the oracle composition (the simulator's own pair
    /// contention) beside every row (`sim_colocated_ms`, `error_pct`) and
    /// each method's error on stderr: how good the prediction is where the
    /// simulator is the truth.
    #[arg(long, requires = "task")]
    pub versus_sim: bool,
    /// With --task: the user's own co-located latencies (CSV columns
    /// `task,partner,sm_count,colocated_ms`) correct the predictor's rows
    /// of those tasks.
    #[arg(long, requires = "task")]
    pub measured: Option<PathBuf>,
    /// With --task and no --data: where the kernels are profiled on the fly,
    /// `sim` (noiseless simulated GPU) or `cuda`.
    #[arg(long, requires = "task", default_value = "sim")]
    pub backend: String,
    /// The tasks' host side: host-ahead (no host time per launch), eager
    /// (PyTorch eager: each launch costs the host its operator's dispatch,
    /// so short kernels leave the GPU idle) or cuda-graphs.
    #[arg(long, requires = "task", default_value = "host-ahead")]
    pub framework: String,
    /// With --task: how the two tasks share the SMs. green-context (each on
    /// its own SMs), mps (each capped at its share, on any SMs, so blocks of
    /// both may share an SM; shares may sum past the GPU) or full (both on
    /// every SM; no --sm).
    #[arg(long, requires = "task", default_value = "green-context")]
    pub sharing: String,
    /// CUDA device ordinal (--backend cuda).
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// High-priority inference job: a zoo model (`bert-base:infer@1`,
    /// `llama2-7b`, ...; `@BATCH` sets the batch), a
    /// model file, or a kernel-trace CSV (Orion format).
    #[arg(long)]
    pub hp: String,
    /// Best-effort training job: a zoo training variant (`resnet50:train@128`,
    /// `whisper-large-v3:train`, ...), a training model
    /// file, or a kernel-trace CSV; repeat for several.
    #[arg(long)]
    pub be: Vec<String>,
    /// Each BE job's GPU utilisation alone, in (0, 1]: one value for every
    /// --be, or one per --be in order (comma-separated or repeated). A job
    /// below 1 spends the rest of each iteration off the GPU (input
    /// pipeline, Python); its throughput is normalised to what it reaches
    /// alone [default: 1]
    #[arg(long, value_delimiter = ',')]
    pub be_gpu_util: Vec<f64>,
    /// The HP server's GPU utilisation alone, back to back, in (0, 1]: below
    /// 1, each request spends the rest on the host after its kernels
    /// (output copies, Python post-processing), (1 / U - 1) times its
    /// kernels' time alone, which no co-runner slows
    #[arg(long, default_value_t = 1.0, value_name = "U")]
    pub hp_gpu_util: f64,
    /// Host time the HP server spends issuing each kernel, microseconds: a
    /// framework that launches every operator from the CPU (ONNX Runtime's
    /// own A100 benchmark at batch 1 implies about 8.1) cannot start kernel i of a
    /// request before i+1 of these have passed; 0 lets the GPU set the pace
    #[arg(long, default_value_t = 0.0, value_name = "US")]
    pub hp_launch_us: f64,
    /// GPU that kernel traces were measured on: their kernels are
    /// calibrated to the measured durations there.
    #[arg(long, default_value = "v100")]
    pub trace_gpu: String,
    /// Scheduling policy: time-slicing, mps, mps-priority, tgs, orion, tally, tally-predict.
    #[arg(long, default_value = "tally", conflicts_with = "compare")]
    pub policy: String,
    /// Run the same workload under several policies: `all` or a comma-separated list.
    #[arg(long)]
    pub compare: Option<String>,
    /// tally-predict's slowdown model: a model file from `tally train`, or
    /// `oracle` for the simulator's own contention model.
    #[arg(long)]
    pub predictor: Option<String>,
    /// tally-predict: largest predicted HP slowdown accepted (0.02 = 2 %).
    #[arg(long, default_value_t = 0.02)]
    pub tolerance: f64,
    /// Tally's turnaround-latency limit for BE kernel configurations, ms.
    #[arg(long, default_value_t = 0.0316)]
    pub turnaround_ms: f64,
    /// HP arrivals at this fraction of the HP job's standalone capacity
    /// (default: a single-stream closed loop), as `--arrival-process` says.
    #[arg(long, conflicts_with = "arrivals")]
    pub load: Option<f64>,
    /// How `--load` arrivals are drawn: `poisson`, or `fixed-count`
    /// (exactly the load's requests over the run at uniform times, as the
    /// Tally benchmark builds its server traces).
    #[arg(long, value_enum, default_value_t = ArrivalProcess::Poisson, requires = "load")]
    pub arrival_process: ArrivalProcess,
    /// HP arrival times from a file: one time in ms per line, or a Tally
    /// benchmark trace (`infer_trace/*.json`: a JSON array of seconds).
    #[arg(long)]
    pub arrivals: Option<PathBuf>,
    /// Run time: `30s`, `500ms`, `2m` (simulated time on the simulator).
    #[arg(long, default_value = "30s", env = env::TALLY_DURATION)]
    pub duration: String,
    /// Seed of the arrival process.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// GPU preset name, spec file, or `auto` (the CUDA device's own spec)
    /// [default: a100-40gb with --backend sim, auto with --backend cuda].
    #[arg(long, env = env::TALLY_GPU)]
    pub gpu: Option<String>,
    /// `sim` (the simulated GPU) or `cuda` (co-execute on a real NVIDIA
    /// GPU: mps, mps-priority, tgs, orion and tally; the HP job alone is
    /// measured on the device on the same arrivals).
    #[arg(long, default_value = "sim", env = env::TALLY_BACKEND)]
    pub backend: String,
    #[command(flatten)]
    pub cuda: CudaMeasureArgs,
    /// Output directory (requests.csv, summary.csv, run.json).
    #[arg(long)]
    pub out: PathBuf,
    /// Also write timeline.csv: how many SMs each job's blocks hold, at
    /// every change, over the first MS milliseconds of each policy's run
    /// (default 5; `tally plot` draws it).
    #[arg(long, value_name = "MS", num_args = 0..=1, default_missing_value = "5")]
    pub timeline: Option<f64>,
    /// Replace an existing run in --out.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

// ---- CUDA backend and ncu import (branch `cuda`): new argument structs ----

#[derive(Debug, Args)]
pub struct ImportNcuArgs {
    /// The ncu CSV file: the raw page (`--page raw`) or the details page
    /// (`--page details`, `--set full`, `--section ...`), any ncu release.
    #[arg(required_unless_present = "print_metrics")]
    pub input: Option<PathBuf>,
    /// GPU preset or spec file the profile was measured on (see `tally
    /// gpus`); omitted: derived from the export (its compute capability and
    /// SM count, the rest from the closest preset of that compute capability).
    #[arg(long, env = env::TALLY_GPU)]
    pub gpu: Option<String>,
    /// Model name recorded in the dataset (default: the file name without extension).
    #[arg(long)]
    pub model: Option<String>,
    /// Table format: csv, parquet or both.
    #[arg(long, default_value = "csv")]
    pub format: String,
    /// Output directory (created; must not hold an earlier run unless --force).
    #[arg(long, required_unless_present = "print_metrics")]
    pub out: Option<PathBuf>,
    /// Replace an earlier run in --out.
    #[arg(long)]
    pub force: bool,
    /// Without FILE: print the comma-separated metric list to give `ncu
    /// --metrics`. With FILE: per kernel, which counters the predictor
    /// needs it has and lacks, and the ncu command that collects the rest.
    #[arg(long, conflicts_with = "out")]
    pub print_metrics: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A dataset directory (written by `tally profile` or `tally import-ncu`).
    pub dir: PathBuf,
    /// What to write: `orion` (Orion's per-kernel profile CSV,
    /// `Name,Profile,Memory_footprint,SM_usage,Duration`).
    #[arg(long)]
    pub to: String,
    /// File to write (default: DIR/orion.csv).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PlotArgs {
    /// A profile dataset, a `tally eval --out` directory or a `tally run` directory.
    pub dir: PathBuf,
    /// Where to write the figures (default: DIR/plots).
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
    /// Write SVG instead of PNG.
    #[arg(long)]
    pub svg: bool,
}
