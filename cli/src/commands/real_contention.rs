//! `tally real-contention`: every real measurement of `data/real-contention`
//! beside the simulator's figure for the same case (and the predictor's,
//! with `--predictor`), written to `OUT/real_contention.csv`, each set's
//! scores printed and written to `OUT/summary.csv`. The jobs are the zoo's
//! models as the sources ran them (FP32 with TF32 convolutions for
//! Gpulet's torchvision models, FP16 LLaMA for MuxServe).

use std::io::Write;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use tally_gpu::{GpuSpec, Sharing, SimBackend};
use tally_predictor::PredictorFile;
use tally_profiler::model::ParamsOverride;
use tally_profiler::zoo;
use tally_sched::colocation::pair_slowdown::PredictorPairs;
use tally_sched::error::RunError;
use tally_sched::host_side::Framework;
use tally_sched::real_sets::few_shot::few_shot;
use tally_sched::real_sets::real_output::{
    few_shot_cells, summarise, write_few_shot, write_rows, write_summary, SetSummary,
    FEW_SHOT_FILE, FEW_SHOT_HEADER, FILE, SUMMARY_FILE, SUMMARY_HEADER,
};
use tally_sched::real_sets::{Evaluation, JobSource, LlamaPhase, Predicted, SETS};
use tally_sched::workload::JobSpec;

use crate::args::RealContentionArgs;
use crate::output::Table;

/// Zoo models for the sources' jobs.
struct ZooJobs {
    framework: Framework,
}

impl ZooJobs {
    fn job(&self, name: &str, params: &ParamsOverride) -> Result<JobSpec, RunError> {
        let model = zoo::resolve_model(name, params).map_err(|e| RunError::Input {
            what: format!("zoo model `{name}`"),
            reason: e.to_string(),
        })?;
        let mut job = JobSpec::gpu_bound(name, model.launches());
        job.launch_interval_us = self.framework.launch_interval_us();
        Ok(job)
    }
}

impl JobSource for ZooJobs {
    fn cnn(&self, model: &str, batch: u32) -> Result<Option<JobSpec>, RunError> {
        // Gpulet's names for torchvision's models.
        let zoo_name = match model {
            "resnet50" | "resnet101" | "resnet152" | "vgg16" | "vgg19" | "densenet121"
            | "densenet169" | "densenet201" => model,
            "mobilenet" => "mobilenetv2",
            "inception" => "inception-v3",
            _ => return Ok(None),
        };
        // PyTorch's default precision: FP32 tensors, TF32 convolutions.
        let name = format!("{zoo_name}:infer-fp32@{batch}");
        self.job(&name, &ParamsOverride::default()).map(Some)
    }

    fn llama(
        &self,
        model: &str,
        phase: LlamaPhase,
        batch: u32,
        seq_len: u32,
    ) -> Result<Option<JobSpec>, RunError> {
        // The zoo has LLaMA-2 7B (the architecture of LLaMA 7B); no other size.
        if model != "llama-7b" {
            return Ok(None);
        }
        let (name, params) = match phase {
            LlamaPhase::Prefill => (
                "llama2-7b-prefill",
                ParamsOverride {
                    batch: Some(batch),
                    seq_len: Some(seq_len),
                    kv_len: None,
                },
            ),
            LlamaPhase::Decode => (
                "llama2-7b-decode",
                ParamsOverride {
                    batch: Some(batch),
                    seq_len: None,
                    kv_len: Some(seq_len),
                },
            ),
        };
        self.job(name, &params).map(Some)
    }
}

fn preset(name: &str) -> Result<GpuSpec> {
    GpuSpec::preset(name).with_context(|| format!("GPU preset `{name}`"))
}

pub fn run(args: &RealContentionArgs) -> Result<()> {
    let framework = Framework::parse(&args.framework).context("--framework")?;
    let sharing: Sharing = args
        .sharing
        .parse()
        .map_err(anyhow::Error::msg)
        .context("--sharing")?;
    let sets: Vec<&'static str> = if args.set.is_empty() {
        SETS.to_vec()
    } else {
        args.set
            .iter()
            .map(|s| {
                SETS.iter()
                    .copied()
                    .find(|k| k == s)
                    .with_context(|| format!("--set `{s}`: expected one of {}", SETS.join(", ")))
            })
            .collect::<Result<_>>()?
    };
    if !args.data.join("README.md").is_file() {
        bail!(
            "--data `{}`: not the real-contention folder (no README.md); the repository's copy is data/real-contention",
            args.data.display()
        );
    }
    let out_file = args.out.join(FILE);
    if out_file.exists() && !args.force {
        bail!(
            "`{}` already holds a result; pass --force to replace it",
            out_file.display()
        );
    }
    // Gpulet's GPU is compute capability 8.0, part not recorded: the 40 GB A100.
    let gpulet_gpu = preset("a100-40gb")?;
    let muxserve_gpu = preset("a100-80gb")?;
    let v100 = preset("v100")?;
    let jobs = ZooJobs { framework };
    let backend = SimBackend::noiseless(gpulet_gpu.clone());
    let predicted = match &args.predictor {
        Some(path) => {
            let file = PredictorFile::load(path)?;
            file.check_gpu(&gpulet_gpu, &format!("`{}`", path.display()))?;
            let predictor = tally_predictor::RuntimePredictor::from_model(&file, None)
                .with_context(|| format!("`{}`: no learned model", path.display()))?;
            Some(Predicted {
                pairs: Arc::new(PredictorPairs(predictor)),
                counters: file.counter_subset(),
                backend: &backend,
            })
        }
        None => None,
    };
    let rows = Evaluation {
        data: &args.data,
        gpulet_gpu: &gpulet_gpu,
        muxserve_gpu: &muxserve_gpu,
        v100: &v100,
        jobs: &jobs,
        predicted,
        sets,
        sharing,
    }
    .run()?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating `{}`", args.out.display()))?;
    let summary = summarise(&rows);
    write_rows(&out_file, &rows)?;
    write_summary(&args.out.join(SUMMARY_FILE), &summary)?;
    print_summary(args, &summary)?;
    if args.predictor.is_some() && summary.iter().any(|s| s.set == "gpulet-pairs") {
        let figures = few_shot(&rows)?;
        write_few_shot(&args.out.join(FEW_SHOT_FILE), &figures)?;
        println!("\ngpulet-pairs, the predictor corrected by K measured sides of each model pair:");
        let mut table = Table::new(&FEW_SHOT_HEADER);
        for f in &figures {
            table.push(few_shot_cells(f));
        }
        let mut stdout = std::io::stdout().lock();
        table.write(args.output.format, &mut stdout)?;
        stdout.flush()?;
    }
    Ok(())
}

fn print_summary(args: &RealContentionArgs, summary: &[SetSummary]) -> Result<()> {
    let mut table = Table::new(&SUMMARY_HEADER);
    for s in summary {
        table.push(s.cells());
    }
    let mut stdout = std::io::stdout().lock();
    table.write(args.output.format, &mut stdout)?;
    stdout.flush()?;
    Ok(())
}
