//! `tally plot DIR`: the figures that fit what DIR holds, one path a line.

use std::io::Write;

use anyhow::Result;
use tally_plot::{plot_dir, ImageFormat};

use crate::args::PlotArgs;

pub fn run(args: &PlotArgs) -> Result<()> {
    let format = if args.svg {
        ImageFormat::Svg
    } else {
        ImageFormat::Png
    };
    let out = args.out.clone().unwrap_or_else(|| args.dir.join("plots"));
    let plotted = plot_dir(&args.dir, &out, format)?;
    let mut stdout = std::io::stdout().lock();
    for f in &plotted.files {
        writeln!(stdout, "{}", f.display())?;
    }
    Ok(())
}
