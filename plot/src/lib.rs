//! tally-plot: the figures of `tally plot`. Detects what a directory holds
//! (`detect`), reads it with the owning crate's reader (datasets, eval
//! files, run files) and draws the figures that fit (`figures/`), as PNG
//! or SVG at 1200x800 with a bundled font (`canvas`).

mod canvas;
mod detect;
mod error;
pub mod figures;
mod plot_dir;

pub use canvas::{render, Figure, ImageFormat, SIZE};
pub use detect::{detect, DirKind};
pub use error::{PlotError, Result};
pub use plot_dir::{plot_dataset, plot_dir, Plotted};
