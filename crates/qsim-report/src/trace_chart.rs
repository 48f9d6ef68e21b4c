//! The chart of a trace (`qsim run --trace ... --plot FILE`): system
//! throughput over time (the mean over the replications with its 95%
//! band, every replication faint behind it) above the mean number present
//! at each station over time (with its band). The warm-up is shaded and
//! labelled (its intervals are not part of the run's figures), and so is
//! a schedule's trigger window.

use crate::fit_chart::{ChartError, ChartFormat, chart_format, err, upper_right_legend};
use plotters::coord::Shift;
use plotters::prelude::*;
use qsim_kernel::ensemble::{Ensemble, EnsembleInterval, ensemble};
use qsim_kernel::trace::{Trace, TraceInterval};
use std::path::Path;

/// Most stations drawn in the lower panel (those with the most jobs on
/// average); the chart says how many were left out.
const MAX_STATIONS: usize = 8;

/// Draws `traces` (one per replication, in index order) of a network whose
/// stations are `stations` to `path` (`.svg` or `.png`), with `trigger`
/// (a schedule's window, absolute seconds) shaded.
pub fn trace_chart(
    path: &Path,
    title: &str,
    traces: &[&Trace],
    stations: &[String],
    trigger: Option<(f64, f64)>,
) -> Result<(), ChartError> {
    let size = (1000, 760);
    match chart_format(path)? {
        ChartFormat::Svg => draw(
            SVGBackend::new(path, size).into_drawing_area(),
            title,
            traces,
            stations,
            trigger,
        ),
        ChartFormat::Png => draw(
            BitMapBackend::new(path, size).into_drawing_area(),
            title,
            traces,
            stations,
            trigger,
        ),
    }
}

/// A tick label: whole numbers without a decimal point (1000, not
/// 1000.0), others with up to three significant decimals.
pub fn tick(v: f64) -> String {
    if v == v.round() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// The band of one figure over the ensemble's intervals: (time, low,
/// high) at each interval's midpoint, where the interval exists.
fn band(
    e: &Ensemble,
    f: &dyn Fn(&EnsembleInterval) -> qsim_kernel::Estimate,
) -> Vec<(f64, f64, f64)> {
    e.intervals
        .iter()
        .filter_map(|i| {
            let x = f(i);
            (x.ci95.is_finite()).then(|| {
                (
                    0.5 * (i.start_s + i.end_s),
                    (x.mean - x.ci95).max(0.0),
                    x.mean + x.ci95,
                )
            })
        })
        .collect()
}

fn mid(i: &TraceInterval) -> f64 {
    0.5 * (i.start_s + i.end_s)
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    traces: &[&Trace],
    stations: &[String],
    trigger: Option<(f64, f64)>,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let Some(first) = traces.first() else {
        return Err(ChartError::new("no trace to draw".into()));
    };
    let ens = ensemble(traces);
    let n = traces.len();
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
    let over = if n > 1 {
        format!("mean of {n} replications, 95% band")
    } else {
        "one replication, no band".to_string()
    };

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
        .y_desc("system throughput (interactions/s)")
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(err)?;
    shade_warmup(&mut chart, warm_end, x_max)?;
    shade_trigger(&mut chart, trigger, x_max, t_end)?;
    for (r, t) in traces.iter().enumerate().rev() {
        let pts: Vec<(f64, f64)> = t
            .intervals
            .iter()
            .map(|i| (mid(i), i.throughput_per_s()))
            .collect();
        let s = chart
            .draw_series(LineSeries::new(pts, BLUE.mix(0.15).stroke_width(1)))
            .map_err(err)?;
        if r == 0 {
            s.label("each replication")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.mix(0.25)));
        }
    }
    draw_band(&mut chart, &band(&ens, &|i| i.throughput_per_s), BLUE)?;
    let mean: Vec<(f64, f64)> = ens
        .intervals
        .iter()
        .map(|i| (0.5 * (i.start_s + i.end_s), i.throughput_per_s.mean))
        .collect();
    chart
        .draw_series(LineSeries::new(mean, BLUE.stroke_width(2)))
        .map_err(err)?
        .label(over.clone())
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
    upper_right_legend(&mut chart, 14)?;

    // Lower panel: mean number present per station.
    let mut order: Vec<usize> = (0..stations.len()).collect();
    let avg = |s: usize| {
        ens.intervals
            .iter()
            .map(|i| i.mean_jobs[s].mean)
            .sum::<f64>()
    };
    order.sort_by(|&a, &b| avg(b).total_cmp(&avg(a)).then(a.cmp(&b)));
    let shown = &order[..order.len().min(MAX_STATIONS)];
    let n_max = ens
        .intervals
        .iter()
        .flat_map(|i| {
            shown.iter().map(|&s| {
                let e = i.mean_jobs[s];
                e.mean + if e.ci95.is_finite() { e.ci95 } else { 0.0 }
            })
        })
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
        format!("number present (jobs; {left_out} stations not shown)")
    } else {
        "number present (jobs)".to_string()
    };
    chart
        .configure_mesh()
        .x_desc(format!("time (s); {over}"))
        .y_desc(y_desc)
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(err)?;
    shade_warmup(&mut chart, warm_end, n_max)?;
    shade_trigger(&mut chart, trigger, n_max, t_end)?;
    for (k, &s) in shown.iter().enumerate() {
        let color = Palette99::pick(k).to_rgba();
        draw_band(&mut chart, &band(&ens, &|i| i.mean_jobs[s]), color)?;
        let pts: Vec<(f64, f64)> = ens
            .intervals
            .iter()
            .map(|i| (0.5 * (i.start_s + i.end_s), i.mean_jobs[s].mean))
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

type Chart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Fills the area between a band's low and high ends.
fn draw_band<DB: DrawingBackend, C: Color>(
    chart: &mut Chart<'_, DB>,
    band: &[(f64, f64, f64)],
    color: C,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    if band.len() < 2 {
        return Ok(());
    }
    let mut outline: Vec<(f64, f64)> = band.iter().map(|&(t, _, hi)| (t, hi)).collect();
    outline.extend(band.iter().rev().map(|&(t, lo, _)| (t, lo)));
    chart
        .draw_series(std::iter::once(Polygon::new(
            outline,
            color.mix(0.2).filled(),
        )))
        .map_err(err)?;
    Ok(())
}

/// Shades a schedule's trigger window and labels it "trigger".
fn shade_trigger<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    trigger: Option<(f64, f64)>,
    y_max: f64,
    t_end: f64,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    let Some((a, b)) = trigger else {
        return Ok(());
    };
    let y = y_max.max(1e-9);
    // A window of one step is drawn as a thin band, so it stays visible.
    let b = if b > a { b } else { a + 0.003 * t_end };
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(a, 0.0), (b, y)],
            RED.mix(0.10).filled(),
        )))
        .map_err(err)?;
    chart
        .draw_series(std::iter::once(Text::new(
            "trigger",
            (a, y * 0.97),
            ("sans-serif", 14).into_font().color(&RED.mix(0.7)),
        )))
        .map_err(err)?;
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
