//! Progress bars on stderr for long work: shown only on a terminal and
//! without `--quiet`.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};
use tally_profiler::campaign::{Progress, Stage};

/// One bar per campaign stage.
#[derive(Debug)]
pub struct CampaignBar {
    bar: Option<ProgressBar>,
    stage: Option<Stage>,
}

impl CampaignBar {
    pub fn new(quiet: bool) -> CampaignBar {
        let enabled = !quiet && std::io::stderr().is_terminal();
        CampaignBar {
            bar: enabled.then(ProgressBar::hidden),
            stage: None,
        }
    }

    pub fn update(&mut self, p: Progress) {
        let Some(bar) = &mut self.bar else { return };
        if self.stage != Some(p.stage) {
            bar.finish_and_clear();
            *bar = ProgressBar::new(p.total);
            let style = ProgressStyle::with_template(
                "{prefix:>10} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            bar.set_style(style);
            bar.set_prefix(p.stage.as_str());
            self.stage = Some(p.stage);
        }
        // Redraws are rate-limited by indicatif; setting every step is cheap.
        bar.set_position(p.done);
    }

    pub fn finish(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
