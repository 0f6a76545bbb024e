//! Where a figure is drawn: the output format, the canvas size, the
//! bundled font and the one function that opens a PNG or SVG backend,
//! hands its drawing area to a figure and writes the file.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use crate::error::{PlotError, Result};

/// Every figure's size in pixels: readable on a laptop screen and in a paper.
pub const SIZE: (u32, u32) = (1200, 800);

/// The family name figures ask for; the bundled DejaVu Sans answers it, so
/// no system font (nor fontconfig) is needed on a fresh machine.
pub const FONT: &str = "sans-serif";
static DEJAVU_SANS: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

fn register_bundled_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are a known-good font compiled in: failing here is a
        // build defect, not an input error.
        register_font(FONT, FontStyle::Normal, DEJAVU_SANS)
            .unwrap_or_else(|_| panic!("bundled DejaVuSans.ttf is not a font"));
    });
}

/// The image format of the files written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Png,
    Svg,
}

impl ImageFormat {
    pub fn extension(&self) -> &'static str {
        match self {
            ImageFormat::Png => "png",
            ImageFormat::Svg => "svg",
        }
    }
}

/// A figure: draws itself on any plotters backend.
pub trait Figure {
    /// File stem of the figure (`pair-slowdown-heatmap`).
    fn name(&self) -> &'static str;
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult;
}

/// What drawing code returns; the message is wrapped with the file path.
pub type DrawResult = std::result::Result<(), String>;

/// Turn any plotters error into the message `DrawResult` carries.
pub fn msg<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Draw `figure` into `dir/<name>.<ext>` and return the path written.
pub fn render<F: Figure>(figure: &F, dir: &Path, format: ImageFormat) -> Result<PathBuf> {
    register_bundled_font();
    let path = dir.join(format!("{}.{}", figure.name(), format.extension()));
    let draw_err = |m: String| PlotError::Draw {
        path: path.clone(),
        msg: m,
    };
    match format {
        ImageFormat::Png => {
            let area = BitMapBackend::new(&path, SIZE).into_drawing_area();
            area.fill(&WHITE).map_err(|e| draw_err(msg(e)))?;
            figure.draw(&area).map_err(draw_err)?;
            area.present().map_err(|e| draw_err(msg(e)))?;
        }
        ImageFormat::Svg => {
            let area = SVGBackend::new(&path, SIZE).into_drawing_area();
            area.fill(&WHITE).map_err(|e| draw_err(msg(e)))?;
            figure.draw(&area).map_err(draw_err)?;
            area.present().map_err(|e| draw_err(msg(e)))?;
        }
    }
    Ok(path)
}

/// Text style of titles, axis descriptions and labels.
pub fn font(size: u32) -> TextStyle<'static> {
    (FONT, size).into_font().into()
}

/// A chart with room for axis labels and a title: what every single-panel
/// figure starts from.
pub fn chart_builder<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    title: &'b str,
) -> ChartBuilder<'a, 'b, DB> {
    let mut b = ChartBuilder::on(area);
    b.caption(title, font(22))
        .margin(16)
        .x_label_area_size(55)
        .y_label_area_size(80);
    b
}

/// Mesh, tick labels and axis descriptions of a single-panel figure.
pub fn draw_axes<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    x_desc: &str,
    y_desc: &str,
) -> DrawResult
where
    DB: DrawingBackend + 'a,
    X: Ranged + ValueFormatter<X::ValueType>,
    Y: Ranged + ValueFormatter<Y::ValueType>,
{
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(font(16))
        .axis_desc_style(font(18))
        .draw()
        .map_err(msg)
}

/// The diagonal `y = x` from `lo` to `hi` of a parity chart: where an
/// estimate equals what it estimates.
pub fn draw_diagonal<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    lo: f64,
    hi: f64,
) -> DrawResult
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .draw_series(LineSeries::new(
            vec![(lo, lo), (hi, hi)],
            BLACK.stroke_width(1),
        ))
        .map(|_| ())
        .map_err(msg)
}

/// The legend sample of a line series of `color`.
pub fn legend_line(color: RGBColor) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3))
}

/// The series legend, boxed on a translucent white ground.
pub fn draw_legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> DrawResult
where
    DB: DrawingBackend + 'a,
    CT: plotters::coord::CoordTranslate,
{
    chart
        .configure_series_labels()
        .label_font(font(17))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(position)
        .draw()
        .map_err(msg)
}

/// Distinct colours for series, in order (a colour-blind-safe palette).
pub fn series_color(i: usize) -> RGBColor {
    const PALETTE: [RGBColor; 8] = [
        RGBColor(0, 114, 178),
        RGBColor(213, 94, 0),
        RGBColor(0, 158, 115),
        RGBColor(204, 121, 167),
        RGBColor(230, 159, 0),
        RGBColor(86, 180, 233),
        RGBColor(120, 120, 120),
        RGBColor(240, 228, 66),
    ];
    PALETTE[i % PALETTE.len()]
}

/// Sequential colour of `t` in [0, 1]: pale yellow through orange to dark red.
pub fn heat_color(t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let stops = [
        (255.0, 255.0, 204.0),
        (253.0, 141.0, 60.0),
        (128.0, 0.0, 38.0),
    ];
    let (a, b, u) = if t < 0.5 {
        (stops[0], stops[1], t * 2.0)
    } else {
        (stops[1], stops[2], (t - 0.5) * 2.0)
    };
    let mix = |x: f64, y: f64| (x + (y - x) * u).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Points of a curve, (x, y) in data units.
pub type Curve = Vec<(f64, f64)>;

/// Sorted values and their empirical CDF points (value, fraction <= value).
pub fn cdf(mut values: Vec<f64>) -> Curve {
    values.retain(|v| v.is_finite());
    values.sort_by(f64::total_cmp);
    let n = values.len() as f64;
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| (v, (i + 1) as f64 / n))
        .collect()
}

/// At most `max` points of a CDF, evenly spaced in rank, keeping the last:
/// a 100k-sample curve draws as fast as a 2k one and looks the same.
pub fn thin<T: Copy>(points: &[T], max: usize) -> Vec<T> {
    if points.len() <= max || max < 2 {
        return points.to_vec();
    }
    let step = (points.len() - 1) as f64 / (max - 1) as f64;
    (0..max)
        .map(|i| points[((i as f64 * step).round() as usize).min(points.len() - 1)])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_ends_at_one_and_is_sorted() {
        let c = cdf(vec![3.0, 1.0, f64::NAN, 2.0]);
        assert_eq!(c, vec![(1.0, 1.0 / 3.0), (2.0, 2.0 / 3.0), (3.0, 1.0)]);
    }

    #[test]
    fn thinning_keeps_both_ends() {
        let v: Vec<usize> = (0..1000).collect();
        let t = thin(&v, 10);
        assert_eq!(t.len(), 10);
        assert_eq!((t[0], t[9]), (0, 999));
    }

    #[test]
    fn heat_runs_from_pale_to_dark() {
        assert_eq!(heat_color(0.0), RGBColor(255, 255, 204));
        assert_eq!(heat_color(1.0), RGBColor(128, 0, 38));
    }
}
