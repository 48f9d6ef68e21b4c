//! The chart of a boundary search (`qsim boundary`): the fraction of
//! replications that tipped at each value tried, with its 95% (Wilson)
//! interval, and the bracket of the boundary shaded.

use crate::fit_chart::{ChartError, ChartFormat, chart_format, err};
use crate::trace_chart::tick;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// Draws `(value, fraction, low, high)` points to `path` (`.svg` or
/// `.png`), with `bracket` (below, above) shaded when there is one.
pub fn boundary_chart(
    path: &Path,
    title: &str,
    x_label: &str,
    points: &[(f64, f64, f64, f64)],
    bracket: Option<(f64, f64)>,
) -> Result<(), ChartError> {
    match chart_format(path)? {
        ChartFormat::Svg => draw(
            SVGBackend::new(path, (900, 560)).into_drawing_area(),
            title,
            x_label,
            points,
            bracket,
        ),
        ChartFormat::Png => draw(
            BitMapBackend::new(path, (900, 560)).into_drawing_area(),
            title,
            x_label,
            points,
            bracket,
        ),
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    points: &[(f64, f64, f64, f64)],
    bracket: Option<(f64, f64)>,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    if points.is_empty() {
        return Err(ChartError::new("no point to draw".into()));
    }
    let (x0, x1) = points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.0), b.max(p.0))
        });
    let pad = ((x1 - x0) * 0.05).max(0.5);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d((x0 - pad)..(x1 + pad), 0.0..1.05)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc("replications tipped (fraction, 95% interval)")
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(err)?;
    if let Some((a, b)) = bracket {
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(a, 0.0), (b, 1.05)],
                RED.mix(0.12).filled(),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(Text::new(
                "boundary",
                (a, 1.02),
                ("sans-serif", 14).into_font().color(&RED.mix(0.8)),
            )))
            .map_err(err)?;
    }
    chart
        .draw_series(points.iter().map(|&(x, _, lo, hi)| {
            PathElement::new(vec![(x, lo), (x, hi)], BLUE.mix(0.6).stroke_width(2))
        }))
        .map_err(err)?;
    chart
        .draw_series(
            points
                .iter()
                .map(|&(x, p, _, _)| Circle::new((x, p), 5, BLUE.filled())),
        )
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}
