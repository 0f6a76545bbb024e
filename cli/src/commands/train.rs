//! `tally train`: fit the contention predictor and write its model file.

use std::io::Write;
use std::time::Instant;

use anyhow::{Context, Result};
use tally_datasets::time::now_rfc3339;
use tally_predictor::train::{train, TrainRequest};
use tally_predictor::{CounterSubset, Method};

use crate::args::TrainArgs;
use crate::commands::{read_datasets, read_distinct_datasets, refuse_output_over, train_config};

pub fn run(args: &TrainArgs) -> Result<()> {
    let methods = Method::learned_set(&args.method)?;
    let config = train_config(&args.learner)?;
    let mut inputs = args.data.clone();
    inputs.extend(args.counters_from.iter().cloned());
    refuse_output_over(&args.out, &inputs)?;
    let datasets = read_distinct_datasets(&args.data)?;
    let counters = match &args.counters_from {
        Some(dir) => CounterSubset::of_dataset(&read_datasets(std::slice::from_ref(dir))?[0]),
        None => CounterSubset::all(),
    };
    let clock = Instant::now();
    let request = TrainRequest {
        methods,
        config,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        trained_at: now_rfc3339(),
        counters: counters.clone(),
    };
    let model = train(&datasets, &request)?;
    let elapsed = clock.elapsed().as_secs_f64();
    model
        .save(&args.out)
        .with_context(|| format!("writing the model file `{}`", args.out.display()))?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "trained on {} samples from {} dataset(s) on {} in {elapsed:.2} s",
        model.training_samples,
        model.training_data.len(),
        model.gpu.name
    )?;
    if let Some(dir) = &args.counters_from {
        let absent = counters.absent();
        writeln!(
            out,
            "counters from `{}`: {} of {} ({} of the features); without {}",
            dir.display(),
            counters.counters().len(),
            counters.counters().len() + absent.len(),
            counters.mask().usable_count(),
            if absent.is_empty() {
                "none".to_string()
            } else {
                absent
                    .iter()
                    .map(|c| c.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )?;
    }
    for v in &model.validation {
        writeln!(
            out,
            "  {:<7} held-out MAPE {:.2} %  p90 {:.2} %",
            v.method.as_str(),
            v.mape_pct,
            v.p90_ape_pct
        )?;
    }
    writeln!(
        out,
        "default method: {}\nwrote {}",
        model.default_method.as_str(),
        args.out.display()
    )?;
    Ok(())
}
