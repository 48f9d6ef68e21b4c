//! The chart of a USL fit: measured points, the fitted curve named with its
//! coefficients, and the 95% prediction band around it.

use plotters::prelude::*;
use std::path::Path;

/// Why a chart could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ChartError(String);

impl ChartError {
    /// An error with this message.
    pub fn new(message: String) -> ChartError {
        ChartError(message)
    }
}

/// A plotters error as a [`ChartError`].
pub(crate) fn err<E: std::fmt::Display>(e: E) -> ChartError {
    ChartError(e.to_string())
}

/// The file formats a chart is written in.
pub(crate) enum ChartFormat {
    Svg,
    Png,
}

/// The format `path`'s extension asks for (`.svg` or `.png`, any case),
/// with the bundled fonts registered: the one start of every chart file.
pub(crate) fn chart_format(path: &Path) -> Result<ChartFormat, ChartError> {
    crate::charts::register_fonts().map_err(ChartError)?;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "svg" => Ok(ChartFormat::Svg),
        "png" => Ok(ChartFormat::Png),
        _ => Err(ChartError(format!(
            "cannot tell the chart format from {}: expected a .svg or .png file name",
            path.display()
        ))),
    }
}

/// The series legend of the trace and hysteresis charts: upper right,
/// framed, text of `font_size` points.
pub(crate) fn upper_right_legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    font_size: u32,
) -> Result<(), ChartError>
where
    DB: DrawingBackend + 'a,
    CT: plotters::coord::CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", font_size))
        .draw()
        .map_err(err)
}

/// What the fit chart shows besides the measured points.
pub struct FitLines<'a> {
    /// The fitted curve.
    pub curve: &'a dyn Fn(f64) -> f64,
    /// The half-width of the 95% prediction band at x, when known.
    pub band: Option<&'a dyn Fn(f64) -> f64>,
    /// The curve's legend text, naming its coefficients.
    pub label: &'a str,
}

/// Draws measured `(x, y)` points, the fitted curve and its prediction band
/// to `path`; the extension (`.svg` or `.png`) picks the format.
pub fn usl_fit_chart(
    path: &Path,
    measured: &[(f64, f64)],
    lines: &FitLines,
    x_label: &str,
    y_label: &str,
) -> Result<(), ChartError> {
    match chart_format(path)? {
        ChartFormat::Svg => draw(
            SVGBackend::new(path, (900, 600)).into_drawing_area(),
            measured,
            lines,
            x_label,
            y_label,
        ),
        ChartFormat::Png => draw(
            BitMapBackend::new(path, (900, 600)).into_drawing_area(),
            measured,
            lines,
            x_label,
            y_label,
        ),
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    measured: &[(f64, f64)],
    lines: &FitLines,
    x_label: &str,
    y_label: &str,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let x_max = measured.iter().map(|p| p.0).fold(0.0, f64::max) * 1.1;
    let steps = 200;
    let line: Vec<(f64, f64)> = (1..=steps)
        .map(|i| x_max * f64::from(i) / f64::from(steps))
        .map(|x| (x, (lines.curve)(x)))
        .collect();
    let band: Vec<(f64, f64, f64)> = match lines.band {
        Some(b) => line
            .iter()
            .map(|&(x, y)| (x, y - b(x), y + b(x)))
            .filter(|(_, lo, hi)| lo.is_finite() && hi.is_finite())
            .collect(),
        None => Vec::new(),
    };
    let y_max = measured
        .iter()
        .map(|p| p.1)
        .chain(line.iter().map(|p| p.1))
        .chain(band.iter().map(|p| p.2))
        .fold(0.0, f64::max)
        * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .caption("Universal Scalability Law fit", ("sans-serif", 26))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(0.0..x_max.max(1.0), 0.0..y_max.max(1e-9))
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .label_style(("sans-serif", 16))
        .draw()
        .map_err(err)?;
    if !band.is_empty() {
        let outline: Vec<(f64, f64)> = band
            .iter()
            .map(|&(x, _, hi)| (x, hi))
            .chain(band.iter().rev().map(|&(x, lo, _)| (x, lo.max(0.0))))
            .collect();
        chart
            .draw_series(std::iter::once(Polygon::new(
                outline,
                RED.mix(0.15).filled(),
            )))
            .map_err(err)?
            .label("95% prediction band")
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], RED.mix(0.15).filled()));
    }
    chart
        .draw_series(
            measured
                .iter()
                .map(|&(x, y)| Circle::new((x, y), 3, BLUE.mix(0.6).filled())),
        )
        .map_err(err)?
        .label("measured")
        .legend(|(x, y)| Circle::new((x, y), 4, BLUE.filled()));
    chart
        .draw_series(LineSeries::new(line, RED.stroke_width(2)))
        .map_err(err)?
        .label(lines.label)
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(2)));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 16))
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}
