//! `tally eval`: every method's error on the random, leave-one-model-out
//! and few-shot splits.

use anyhow::Result;
use tally_predictor::eval::{evaluate, Split};
use tally_predictor::eval_output::{write_eval_dir, EvalInfo};
use tally_predictor::{Method, Samples};

use crate::args::EvalArgs;
use crate::commands::{read_distinct_datasets, refuse_output_over, train_config};
use crate::output::Table;

pub fn run(args: &EvalArgs) -> Result<()> {
    let splits = Split::parse_set(&args.split)?;
    let mut methods = Method::learned_set(&args.method)?;
    methods.extend(Method::ALL.into_iter().filter(|m| !m.is_learned()));
    let config = train_config(&args.learner)?;
    if let Some(dir) = &args.out {
        refuse_output_over(dir, &args.data)?;
    }
    let datasets = read_distinct_datasets(&args.data)?;
    let samples = Samples::from_datasets(&datasets)?;
    let evaluation = evaluate(&samples, &methods, &splits, &config)?;
    let rows = &evaluation.rows;
    if let Some(dir) = &args.out {
        let info = EvalInfo {
            gpu: samples.gpu.name.clone(),
            models: samples.groups.clone(),
            datasets: args.data.iter().map(|d| d.display().to_string()).collect(),
            command_line: std::env::args().collect(),
        };
        write_eval_dir(dir, &info, rows, &evaluation.predictions)?;
    }
    let mut table = Table::new(&[
        "split",
        "held_out",
        "k",
        "method",
        "test_samples",
        "mape_pct",
        "p90_ape_pct",
    ]);
    for r in rows.iter().filter(|r| !args.brief || r.held_out == "all") {
        table.push(vec![
            r.split.clone(),
            r.held_out.clone(),
            r.k.to_string(),
            r.method.clone(),
            r.test_samples.to_string(),
            format!("{:.2}", r.mape_pct),
            format!("{:.2}", r.p90_ape_pct),
        ]);
    }
    table.write(args.output.format, &mut std::io::stdout().lock())?;
    Ok(())
}
