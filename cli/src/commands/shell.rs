//! `tally completions SHELL` and `tally man`: shell completion scripts and
//! roff man pages, generated from the same clap definitions that parse the
//! arguments, so they cannot drift from the real flags.

use std::io::Write;

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::args::{Cli, CompletionsArgs, ManArgs};

pub fn completions(args: &CompletionsArgs) -> Result<()> {
    let mut cmd = Cli::command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(args.shell, &mut cmd, "tally", &mut out);
    out.flush()?;
    Ok(())
}

pub fn man(args: &ManArgs) -> Result<()> {
    let cmd = Cli::command();
    match &args.out_dir {
        None => {
            let mut out = std::io::stdout().lock();
            clap_mangen::Man::new(cmd).render(&mut out)?;
            out.flush()?;
        }
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating man directory `{}`", dir.display()))?;
            // `generate_to` writes tally.1 and tally-<sub>.1 for every
            // visible subcommand, nested ones (tally-ptx-transform.1) too.
            clap_mangen::generate_to(cmd, dir)
                .with_context(|| format!("writing man pages into `{}`", dir.display()))?;
            let mut pages: Vec<_> = std::fs::read_dir(dir)?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("tally") && n.ends_with(".1"))
                .collect();
            pages.sort();
            println!("wrote {} man pages into {}", pages.len(), dir.display());
        }
    }
    Ok(())
}
