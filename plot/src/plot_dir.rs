//! `tally plot DIR`: read what `DIR` holds and render every figure of its
//! kind into the output directory.

use std::path::{Path, PathBuf};

use tally_datasets::Dataset;
use tally_predictor::eval_output::{read_eval_info, read_predictions, EVAL_JSON, PREDICTIONS_CSV};
use tally_sched::run_output::{
    read_requests, read_run_title, read_summary, REQUESTS_CSV, SUMMARY_CSV,
};

use crate::canvas::{render, ImageFormat};
use crate::detect::{detect, DirKind};
use crate::error::{PlotError, Result};
use crate::figures::dataset_view::DatasetView;
use crate::figures::eval_error_cdf::ErrorCdf;
use crate::figures::eval_parity::Parity;
use crate::figures::heatmap::Heatmap;
use crate::figures::policy_bars::PolicyBars;
use crate::figures::run_latency_cdf::LatencyCdf;
use crate::figures::scaling::Scaling;
use crate::figures::slowdown_classes::SlowdownClasses;

/// What `plot_dir` did: the kind it found and the files it wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Plotted {
    pub kind: DirKind,
    pub files: Vec<PathBuf>,
}

/// Draw every figure that fits `dir` into `out` (created if missing).
pub fn plot_dir(dir: &Path, out: &Path, format: ImageFormat) -> Result<Plotted> {
    let kind = detect(dir)?;
    std::fs::create_dir_all(out).map_err(|source| PlotError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    let files = match kind {
        DirKind::Dataset => plot_dataset(&Dataset::read(dir)?, out, format)?,
        DirKind::Eval => {
            let predictions = read_predictions(&dir.join(PREDICTIONS_CSV))?;
            let info = read_eval_info(&dir.join(EVAL_JSON))?;
            vec![
                render(&Parity::new(&info, &predictions), out, format)?,
                render(&ErrorCdf::new(&info, &predictions), out, format)?,
            ]
        }
        DirKind::Run => {
            let summary_path = dir.join(SUMMARY_CSV);
            let summary = read_summary(&summary_path)?;
            if summary.is_empty() {
                return Err(PlotError::Empty {
                    path: summary_path,
                    msg: "holds no policy".to_string(),
                });
            }
            let requests = read_requests(&dir.join(REQUESTS_CSV))?;
            let title = read_run_title(&tally_datasets::RunDir::new(dir).run_json())?;
            vec![
                render(&LatencyCdf::new(&title, &requests), out, format)?,
                render(&PolicyBars::new(&title, &summary), out, format)?,
            ]
        }
    };
    Ok(Plotted { kind, files })
}

/// The three dataset figures of `dataset`, written into `out`.
pub fn plot_dataset(dataset: &Dataset, out: &Path, format: ImageFormat) -> Result<Vec<PathBuf>> {
    if dataset.pairs.is_empty() || dataset.standalone.rows.is_empty() {
        return Err(PlotError::Empty {
            path: dataset.dir.clone(),
            msg: "the dataset has no pairs or no standalone rows to draw".to_string(),
        });
    }
    let view = DatasetView::new(dataset);
    Ok(vec![
        render(&Heatmap::new(&view), out, format)?,
        render(&Scaling::new(&view), out, format)?,
        render(&SlowdownClasses::new(&view), out, format)?,
    ])
}
