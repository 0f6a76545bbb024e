//! `tally plot DIR`: read what `DIR` holds and render every figure of its
//! kind into the output directory.

use std::path::{Path, PathBuf};

use tally_datasets::Dataset;
use tally_predictor::eval_output::{read_eval_info, read_predictions, EVAL_JSON, PREDICTIONS_CSV};
use tally_sched::real_sets::real_output::{self, summarise};
use tally_sched::run_output::{
    read_requests, read_run_gpu, read_run_title, read_summary, read_timeline, REQUESTS_CSV,
    SUMMARY_CSV, TIMELINE_CSV,
};
use tally_sched::side_by_side::read_side_by_side;

use crate::canvas::{render, ImageFormat};
use crate::detect::{detect, DirKind, SIDE_BY_SIDE_CSV};
use crate::error::{PlotError, Result};
use crate::figures::dataset_view::DatasetView;
use crate::figures::eval_error_cdf::ErrorCdf;
use crate::figures::eval_parity::Parity;
use crate::figures::heatmap::Heatmap;
use crate::figures::policy_bars::PolicyBars;
use crate::figures::real_parity::RealParity;
use crate::figures::run_latency_cdf::LatencyCdf;
use crate::figures::scaling::Scaling;
use crate::figures::slowdown_classes::SlowdownClasses;
use crate::figures::sm_timeline::SmTimeline;
use crate::figures::table_parity::TableParity;

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
        DirKind::Table => {
            let rows = read_side_by_side(&dir.join(SIDE_BY_SIDE_CSV))?;
            vec![render(&TableParity::new(&rows), out, format)?]
        }
        DirKind::RealContention => {
            let path = dir.join(real_output::FILE);
            let rows = real_output::read_rows(&path)?;
            if rows.is_empty() {
                return Err(PlotError::Empty {
                    path,
                    msg: "holds no measurement".to_string(),
                });
            }
            summarise(&rows)
                .iter()
                .map(|s| render(&RealParity::new(s, &rows), out, format))
                .collect::<Result<_>>()?
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
            let mut files = vec![
                render(&LatencyCdf::new(&title, &requests), out, format)?,
                render(&PolicyBars::new(&title, &summary), out, format)?,
            ];
            let timeline_path = dir.join(TIMELINE_CSV);
            if timeline_path.is_file() {
                let rows = read_timeline(&timeline_path)?;
                let sm_count = read_run_gpu(&tally_datasets::RunDir::new(dir).run_json())?.sm_count;
                files.push(render(
                    &SmTimeline::new(&title, sm_count, &rows),
                    out,
                    format,
                )?);
            }
            files
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
