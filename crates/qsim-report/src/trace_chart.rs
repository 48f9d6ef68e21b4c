//! The chart of a trace (`qsim run --trace ... --plot FILE`): system
//! throughput over time (every replication, the first drawn bold) above
//! the number present at each station over time (the first replication).
//! The warm-up is shaded and labelled: its intervals are not part of the
//! run's figures.

use crate::fit_chart::{ChartError, ChartFormat, chart_format, err, upper_right_legend};
use plotters::coord::Shift;
use plotters::prelude::*;
use qsim_kernel::trace::{Trace, TraceInterval};
use std::path::Path;

/// Most stations drawn in the lower panel (those with the most jobs on
/// average); the chart says how many were left out.
const MAX_STATIONS: usize = 8;

/// Draws `traces` (one per replication, in index order) of a network whose
/// stations are `stations` to `path` (`.svg` or `.png`).
pub fn trace_chart(
    path: &Path,
    title: &str,
    traces: &[&Trace],
    stations: &[String],
) -> Result<(), ChartError> {
    let size = (1000, 760);
    match chart_format(path)? {
        ChartFormat::Svg => draw(
            SVGBackend::new(path, size).into_drawing_area(),
            title,
            traces,
            stations,
        ),
        ChartFormat::Png => draw(
            BitMapBackend::new(path, size).into_drawing_area(),
            title,
            traces,
            stations,
        ),
    }
}

fn mid(i: &TraceInterval) -> f64 {
    0.5 * (i.start_s + i.end_s)
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    traces: &[&Trace],
    stations: &[String],
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let Some(first) = traces.first() else {
        return Err(ChartError::new("no trace to draw".into()));
    };
    let root = root.titled(title, ("sans-serif", 22)).map_err(err)?;
    let (top, bottom) = root.split_vertically(360);
    let t_end = traces
        .iter()
        .filter_map(|t| t.intervals.last())
        .map(|i| i.end_s)
        .fold(0.0, f64::max)
        .max(1e-9);
    let warm_end = first
        .intervals
        .iter()
        .filter(|i| !i.measured)
        .map(|i| i.end_s)
        .fold(0.0, f64::max);

    // Upper panel: system throughput.
    let x_max = traces
        .iter()
        .flat_map(|t| t.intervals.iter().map(TraceInterval::throughput_per_s))
        .fold(0.0, f64::max)
        * 1.1;
    let mut chart = ChartBuilder::on(&top)
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..t_end, 0.0..x_max.max(1e-9))
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("system throughput_per_s")
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(err)?;
    shade_warmup(&mut chart, warm_end, x_max)?;
    for (r, t) in traces.iter().enumerate().rev() {
        let pts: Vec<(f64, f64)> = t
            .intervals
            .iter()
            .map(|i| (mid(i), i.throughput_per_s()))
            .collect();
        let style = if r == 0 {
            BLUE.stroke_width(2)
        } else {
            BLUE.mix(0.25).stroke_width(1)
        };
        let s = chart
            .draw_series(LineSeries::new(pts, style))
            .map_err(err)?;
        if r == 0 {
            s.label("replication 0")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
        } else if r == 1 {
            s.label("other replications")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.mix(0.25)));
        }
    }
    upper_right_legend(&mut chart, 14)?;

    // Lower panel: number present per station, replication 0.
    let mut order: Vec<usize> = (0..stations.len()).collect();
    let avg = |s: usize| {
        first
            .intervals
            .iter()
            .map(|i| i.stations[s].area_jobs)
            .sum::<f64>()
    };
    order.sort_by(|&a, &b| avg(b).total_cmp(&avg(a)).then(a.cmp(&b)));
    let shown = &order[..order.len().min(MAX_STATIONS)];
    let n_max = first
        .intervals
        .iter()
        .flat_map(|i| shown.iter().map(|&s| i.mean_jobs(s)))
        .fold(0.0, f64::max)
        * 1.1;
    let mut chart = ChartBuilder::on(&bottom)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..t_end, 0.0..n_max.max(1e-9))
        .map_err(err)?;
    let left_out = stations.len() - shown.len();
    let y_desc = if left_out > 0 {
        format!("mean_jobs, replication 0 ({left_out} stations not shown)")
    } else {
        "mean_jobs (number present), replication 0".to_string()
    };
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc(y_desc)
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(err)?;
    shade_warmup(&mut chart, warm_end, n_max)?;
    for (k, &s) in shown.iter().enumerate() {
        let color = Palette99::pick(k).to_rgba();
        let pts: Vec<(f64, f64)> = first
            .intervals
            .iter()
            .map(|i| (mid(i), i.mean_jobs(s)))
            .collect();
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(err)?
            .label(stations[s].as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    upper_right_legend(&mut chart, 14)?;
    root.present().map_err(err)?;
    Ok(())
}

/// Shades `[0, warm_end]` and labels it "warm-up" (nothing when there is
/// no warm-up).
fn shade_warmup<DB: DrawingBackend>(
    chart: &mut ChartContext<
        '_,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    warm_end: f64,
    y_max: f64,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    if warm_end <= 0.0 {
        return Ok(());
    }
    let y = y_max.max(1e-9);
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(0.0, 0.0), (warm_end, y)],
            BLACK.mix(0.08).filled(),
        )))
        .map_err(err)?;
    chart
        .draw_series(std::iter::once(Text::new(
            "warm-up",
            (0.0, y * 0.97),
            ("sans-serif", 14).into_font().color(&BLACK.mix(0.6)),
        )))
        .map_err(err)?;
    Ok(())
}
