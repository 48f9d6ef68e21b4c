//! The data of the report page's interactive charts: the sweep's chart
//! series with every point's figure as the terminal prints it (value ± its
//! 95% half-width), and the summary's caveats under the chart they concern.

use super::figures::{ms_ci, rate};
use qsim_report::charts::{ChartPoint, SweepCharts};
use qsim_report::interactive::{Plot, PlotPoint, PlotSeries};
use qsim_sweep::SweepSummary;

/// The interactive version of chart `stem` (one of
/// [`qsim_report::charts::CHARTS`]), or `None` for an unknown stem.
pub(crate) fn plot(drawn: &SweepCharts, summary: &SweepSummary, stem: &str) -> Option<Plot> {
    // The load's key path, without the axis label's unit.
    let x_name = drawn
        .x_label
        .split(" (")
        .next()
        .unwrap_or_default()
        .to_string();
    let at = |p: &ChartPoint| format!("{x_name} = {}", p.x);
    let other = |p: &ChartPoint| match (p.bistable, p.other_end_throughput_per_s) {
        (true, Some(o)) => format!(
            " (bistable: one of two answers; the run from the other end gave {})",
            rate(o, None)
        ),
        (true, None) => " (bistable: one of two answers)".into(),
        _ => String::new(),
    };
    let series = |name: &str, dashed: bool, pts: Vec<PlotPoint>| PlotSeries {
        name: name.to_string(),
        dashed,
        points: pts,
    };
    let mut out = Plot {
        title: stem.replace('_', " "),
        x_label: drawn.x_label.clone(),
        ..Plot::default()
    };
    match stem {
        "throughput" => {
            out.y_label = "throughput (/s)".into();
            for s in &drawn.series {
                let pts = s
                    .points
                    .iter()
                    .map(|p| {
                        let text = format!(
                            "{}: {}{}",
                            at(p),
                            rate(p.throughput_per_s, Some(p.throughput_ci95)),
                            other(p)
                        );
                        let mut pt =
                            PlotPoint::with_ci(p.x, p.throughput_per_s, p.throughput_ci95, text);
                        pt.warn = p.bistable;
                        pt
                    })
                    .collect();
                out.series.push(series(&s.label, false, pts));
            }
            if let Some(p) = &summary.peak
                && p.tied > 0
            {
                let tied = match p.tied {
                    1 => "1 other point's interval overlaps it".to_string(),
                    n => format!("{n} other points' intervals overlap it"),
                };
                out.notes.push(format!(
                    "peak {} at {}: {tied}: run longer to tell them apart",
                    rate(p.throughput_per_s, p.ci95),
                    p.point,
                ));
            }
        }
        "response_time" => {
            out.y_label = "response time (ms)".into();
            for s in &drawn.series {
                let mean = s
                    .points
                    .iter()
                    .map(|p| {
                        let text = format!(
                            "{}: mean {}{}",
                            at(p),
                            ms_ci(p.response_time_s, Some(p.response_time_ci95)),
                            other(p)
                        );
                        let mut pt = PlotPoint::with_ci(
                            p.x,
                            p.response_time_s * 1e3,
                            p.response_time_ci95 * 1e3,
                            text,
                        );
                        pt.warn = p.bistable;
                        pt
                    })
                    .collect();
                let p99 = s
                    .points
                    .iter()
                    .map(|p| {
                        let text = format!(
                            "{}: p99 {}",
                            at(p),
                            ms_ci(p.response_time_p99_s, Some(p.response_time_p99_ci95))
                        );
                        PlotPoint::with_ci(
                            p.x,
                            p.response_time_p99_s * 1e3,
                            p.response_time_p99_ci95 * 1e3,
                            text,
                        )
                    })
                    .collect();
                let name = |what: &str| {
                    if s.label.is_empty() {
                        what.to_string()
                    } else {
                        format!("{} {what}", s.label)
                    }
                };
                out.series.push(series(&name("mean"), false, mean));
                out.series.push(series(&name("p99"), true, p99));
            }
        }
        "power" => {
            out.y_label = "power X/R (/s²)".into();
            for s in &drawn.series {
                let pts = s
                    .points
                    .iter()
                    .map(|p| {
                        let power = p.throughput_per_s / p.response_time_s;
                        PlotPoint {
                            x: p.x,
                            y: power,
                            lo: None,
                            hi: None,
                            text: format!(
                                "{}: X/R = {power:.4e}/s² from X = {} and R = {} (no interval of its own)",
                                at(p),
                                rate(p.throughput_per_s, Some(p.throughput_ci95)),
                                ms_ci(p.response_time_s, Some(p.response_time_ci95))
                            ),
                            warn: p.bistable,
                        }
                    })
                    .collect();
                out.series.push(series(&s.label, false, pts));
            }
            if let Some(k) = &summary.knee {
                out.notes.push(format!(
                    "knee (max X/R) at {}: {}, R = {}",
                    k.point,
                    rate(k.throughput_per_s, k.throughput_ci95),
                    ms_ci(k.response_time_s, k.response_time_ci95)
                ));
            }
        }
        "response_vs_utilization" => {
            out.x_label = "bottleneck utilization (%)".into();
            out.y_label = "response time (ms)".into();
            for s in &drawn.series {
                let pts = s
                    .points
                    .iter()
                    .filter_map(|p| {
                        let u = p.bottleneck_utilization? * 100.0;
                        let text = format!(
                            "{}, utilization {u:.1}%: mean {}",
                            at(p),
                            ms_ci(p.response_time_s, Some(p.response_time_ci95))
                        );
                        Some(PlotPoint::with_ci(
                            u,
                            p.response_time_s * 1e3,
                            p.response_time_ci95 * 1e3,
                            text,
                        ))
                    })
                    .collect();
                out.series.push(series(&s.label, false, pts));
            }
        }
        _ => return None,
    }
    // Analytic references (exact MVA, bounds) beside the simulation: exact
    // figures, so no interval.
    for r in &drawn.references {
        let (line, unit, k) = match stem {
            "throughput" => (&r.throughput, "/s", 1.0),
            "response_time" => (&r.response_time, " ms", 1e3),
            _ => continue,
        };
        if line.is_empty() {
            continue;
        }
        let pts = line
            .iter()
            .map(|&(x, y)| PlotPoint {
                x,
                y: y * k,
                lo: None,
                hi: None,
                text: format!("{x_name} = {x}: {:.4}{unit} ({}, exact)", y * k, r.label),
                warn: false,
            })
            .collect();
        out.series.push(series(&r.label, true, pts));
    }
    for b in &summary.bistable {
        out.notes.push(format!(
            "bistable from {} to {} ({} points): two operating points (fast, and collapsed at {}); the red points are one of two answers",
            b.from, b.to, b.points, b.station
        ));
    }
    Some(out)
}
