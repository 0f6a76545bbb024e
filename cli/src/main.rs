//! `tally`: the command-line front end. Parses arguments, dispatches to one
//! module per subcommand and maps failures to exit codes: 0 ok, 2 bad usage
//! or input, 1 a finding (a check that failed). A closed pipe (`tally ... | head`) ends quietly.

mod args;
mod commands;
mod env;
mod output;
mod progress;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Gpus(a) => commands::gpus::run(a),
        Command::Models(a) => commands::models::run(a),
        Command::Profile(a) => commands::profile::run(a),
        Command::Summary(a) => commands::summary::run(a),
        Command::Compare(a) => commands::compare::run(a),
        Command::Train(a) => commands::train::run(a),
        Command::Eval(a) => commands::eval::run(a),
        // `--task`: the task-level prediction; otherwise operator pairs.
        Command::Predict(a) if !a.task.is_empty() => commands::predict_tasks::run(a),
        Command::Predict(a) => commands::predict::run(a),
        Command::Run(a) => commands::run::run(a),
        Command::SideBySide(a) => commands::side_by_side::run(a),
        Command::RealContention(a) => commands::real_contention::run(a),
        Command::Ptx(c) => commands::ptx::run(c),
        Command::Kernels(c) => commands::kernels::run(c),
        Command::ImportNcu(a) => commands::import_ncu::run(a),
        Command::Export(a) => commands::export::run(a),
        Command::Plot(a) => commands::plot::run(a),
        Command::NcuTarget(a) => commands::ncu_target::run(a),
        Command::Completions(a) => commands::shell::completions(a),
        Command::Man(a) => commands::shell::man(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) if e.downcast_ref::<commands::Finding>().is_some() => {
            eprintln!("{e:#}");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
