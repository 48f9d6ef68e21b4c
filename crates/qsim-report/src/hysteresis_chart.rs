//! The chart of a hysteresis sweep: system throughput of the up and down
//! branches against the swept value, with their 95% intervals.

use crate::fit_chart::{ChartError, ChartFormat, chart_format, err, upper_right_legend};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// One branch: its name and its `(value, mean, ci95)` points.
pub struct Branch<'a> {
    /// Legend text.
    pub name: &'a str,
    /// Points.
    pub points: Vec<(f64, f64, f64)>,
}

/// Draws the branches to `path` (`.svg` or `.png`).
pub fn hysteresis_chart(
    path: &Path,
    title: &str,
    x_label: &str,
    branches: &[Branch<'_>],
) -> Result<(), ChartError> {
    match chart_format(path)? {
        ChartFormat::Svg => draw(
            SVGBackend::new(path, (900, 600)).into_drawing_area(),
            title,
            x_label,
            branches,
        ),
        ChartFormat::Png => draw(
            BitMapBackend::new(path, (900, 600)).into_drawing_area(),
            title,
            x_label,
            branches,
        ),
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    branches: &[Branch<'_>],
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let all = || branches.iter().flat_map(|b| b.points.iter());
    let x_min = all().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x_max = all().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let y_max = all()
        .map(|p| p.1 + if p.2.is_finite() { p.2 } else { 0.0 })
        .fold(0.0, f64::max)
        * 1.1;
    let (x_min, x_max) = if x_min.is_finite() && x_max > x_min {
        (x_min, x_max)
    } else {
        (0.0, 1.0)
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(x_min..x_max, 0.0..y_max.max(1e-9))
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc("system throughput_per_s (95% CI bars)")
        .label_style(("sans-serif", 16))
        .draw()
        .map_err(err)?;
    let colors = [BLUE, RED];
    for (k, b) in branches.iter().enumerate() {
        let color = colors[k % 2];
        let mut pts = b.points.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(
                pts.iter().map(|p| (p.0, p.1)),
                color.stroke_width(2),
            ))
            .map_err(err)?
            .label(b.name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(pts.iter().filter(|p| p.2.is_finite()).map(|p| {
                PathElement::new(
                    vec![(p.0, p.1 - p.2), (p.0, p.1 + p.2)],
                    color.stroke_width(1),
                )
            }))
            .map_err(err)?;
    }
    upper_right_legend(&mut chart, 16)?;
    root.present().map_err(err)?;
    Ok(())
}
