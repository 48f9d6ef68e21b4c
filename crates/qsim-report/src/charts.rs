//! Sweep charts (SVG and PNG) drawn with plotters.
//!
//! The input is plain data ([`SweepCharts`]): one [`Series`] per value of a
//! second swept parameter (e.g. one per throttle limit), each a list of
//! [`ChartPoint`]s along the load axis. [`write_charts`] draws
//! - `throughput`: throughput against load with its 95% CI band, knees marked;
//!   a bistable point gets a red triangle, and a red cross at the
//!   throughput of the run started from the other end;
//! - `response_time`: mean (solid) and p99 (dashed) response time against load;
//! - `power`: power X/R against load, the knee (its maximum) marked;
//! - `response_vs_utilization`: mean response time against the utilization of
//!   the bottleneck station.

use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// One point of a series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChartPoint {
    /// Load (population, clients...).
    pub x: f64,
    /// Throughput, per second.
    pub throughput_per_s: f64,
    /// Half-width of its 95% confidence interval.
    pub throughput_ci95: f64,
    /// Mean response time, seconds.
    pub response_time_s: f64,
    /// Half-width of its 95% confidence interval (NaN when unknown).
    pub response_time_ci95: f64,
    /// 99th percentile of the response time, seconds.
    pub response_time_p99_s: f64,
    /// Half-width of its 95% confidence interval (NaN when unknown).
    pub response_time_p99_ci95: f64,
    /// Utilization of the bottleneck station (0..1), if known.
    pub bottleneck_utilization: Option<f64>,
    /// The point is bistable: its figures are one of two operating points.
    pub bistable: bool,
    /// Throughput of the run started from the other end, where the
    /// bistability check ran.
    pub other_end_throughput_per_s: Option<f64>,
}

/// A line: the points sharing every swept value but the load.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Series {
    /// Legend text, e.g. `throttle.limit=100`; empty for a single series.
    pub label: String,
    /// Points along the load axis.
    pub points: Vec<ChartPoint>,
}

/// A point to mark on a series (its knee).
#[derive(Clone, Debug, PartialEq)]
pub struct Marker {
    /// Index of the series.
    pub series: usize,
    /// Load at the mark.
    pub x: f64,
}

/// What to draw.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SweepCharts {
    /// Title prefix, e.g. the model name.
    pub title: String,
    /// Load-axis label with its unit, e.g. `workload.population (jobs)`.
    pub x_label: String,
    /// The lines.
    pub series: Vec<Series>,
    /// Knee (max X/R) of each series that has one.
    pub knees: Vec<Marker>,
    /// Analytic curves and bounds drawn beside the simulation (thin, dashed).
    pub references: Vec<Reference>,
}

/// A theoretical line drawn for comparison: exact MVA, an asymptotic bound.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Reference {
    /// Legend text, e.g. `exact MVA` or `asymptotic bound`.
    pub label: String,
    /// `(load, throughput per s)` points; empty when it has no throughput line.
    pub throughput: Vec<(f64, f64)>,
    /// `(load, mean response s)` points; empty when it has no response line.
    pub response_time: Vec<(f64, f64)>,
}

/// Grey shades for reference lines, darkest first.
const REFERENCE_SHADES: [RGBColor; 3] = [
    RGBColor(40, 40, 40),
    RGBColor(120, 120, 120),
    RGBColor(170, 170, 170),
];

/// An image format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageFormat {
    /// Scalable vector graphics.
    Svg,
    /// Portable network graphics.
    Png,
}

impl ImageFormat {
    /// File extension.
    pub fn extension(self) -> &'static str {
        match self {
            ImageFormat::Svg => "svg",
            ImageFormat::Png => "png",
        }
    }
}

/// A chart that could not be drawn or written.
#[derive(Debug, Error)]
#[error("cannot draw {path}: {message}")]
pub struct ChartError {
    /// The file being written.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

/// The charts [`write_charts`] draws, by file stem.
pub const CHARTS: [&str; 4] = [
    "throughput",
    "response_time",
    "power",
    "response_vs_utilization",
];

/// Image size in pixels.
const SIZE: (u32, u32) = (1100, 680);

/// Tableau 10: distinguishable, and readable on white.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// DejaVu Sans, bundled so text needs no system fonts (licence in
/// `crates/qsim-report/fonts/`).
static FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

/// Registers the bundled font as the `sans-serif` family every chart asks
/// for. Runs once per process; later calls only report the first outcome.
pub(crate) fn register_fonts() -> Result<(), String> {
    static DONE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    DONE.get_or_init(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
            .map_err(|_| "the bundled chart font cannot be read".to_string())
    })
    .clone()
}

/// Draws every chart of [`CHARTS`] in each format into `dir` and returns
/// the files written.
pub fn write_charts(
    charts: &SweepCharts,
    dir: &Path,
    formats: &[ImageFormat],
) -> Result<Vec<PathBuf>, ChartError> {
    register_fonts().map_err(|message| ChartError {
        path: dir.to_path_buf(),
        message,
    })?;
    std::fs::create_dir_all(dir).map_err(|e| ChartError {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut written = Vec::new();
    for stem in CHARTS {
        for &f in formats {
            let path = dir.join(format!("{stem}.{}", f.extension()));
            let result = match f {
                ImageFormat::Svg => draw(
                    stem,
                    charts,
                    SVGBackend::new(&path, SIZE).into_drawing_area(),
                ),
                ImageFormat::Png => draw(
                    stem,
                    charts,
                    BitMapBackend::new(&path, SIZE).into_drawing_area(),
                ),
            };
            result.map_err(|message| ChartError {
                path: path.clone(),
                message,
            })?;
            written.push(path);
        }
    }
    Ok(written)
}

/// Draws one chart of [`CHARTS`] (by stem) as SVG text, for embedding in a
/// page rather than writing a file.
pub fn render_svg(charts: &SweepCharts, stem: &str) -> Result<String, ChartError> {
    let err = |message| ChartError {
        path: PathBuf::from(format!("{stem}.svg")),
        message,
    };
    if !CHARTS.contains(&stem) {
        return Err(err(format!(
            "no chart named {stem}; expected one of {}",
            CHARTS.join(", ")
        )));
    }
    register_fonts().map_err(err)?;
    let mut svg = String::new();
    // The backend borrows the string until it is dropped at the end of draw.
    draw(
        stem,
        charts,
        SVGBackend::with_string(&mut svg, SIZE).into_drawing_area(),
    )
    .map_err(err)?;
    Ok(svg)
}

fn draw<DB: DrawingBackend>(
    stem: &str,
    c: &SweepCharts,
    root: DrawingArea<DB, Shift>,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let r = match stem {
        "throughput" => throughput(c, &root),
        "response_time" => response_time(c, &root),
        "power" => power(c, &root),
        _ => response_vs_utilization(c, &root),
    };
    r.map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

fn finite(x: f64) -> bool {
    x.is_finite()
}

/// Range of `xs` padded by 3% each side; (0, 1) when empty.
fn x_range(xs: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = xs
        .filter(|x| finite(*x))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    if !lo.is_finite() {
        return 0.0..1.0;
    }
    let pad = ((hi - lo) * 0.03).max(if hi == lo { 0.5 } else { 0.0 });
    (lo - pad)..(hi + pad)
}

/// From 0 to 8% above the largest finite value; (0, 1) when there is none.
fn y_range(ys: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let hi = ys.filter(|y| finite(*y)).fold(0.0, f64::max);
    if hi <= 0.0 { 0.0..1.0 } else { 0.0..hi * 1.08 }
}

/// Seconds shown in ms below one second, else in s.
fn time_unit(max_s: f64) -> (f64, &'static str) {
    if max_s < 1.0 { (1e3, "ms") } else { (1.0, "s") }
}

fn series_label(c: &SweepCharts, i: usize, what: &str) -> String {
    let l = &c.series[i].label;
    match (l.is_empty(), what.is_empty()) {
        (true, true) => "simulation".into(),
        (true, false) => what.into(),
        (false, true) => l.clone(),
        (false, false) => format!("{what}, {l}"),
    }
}

fn title(c: &SweepCharts, what: &str) -> String {
    if c.title.is_empty() {
        what.to_string()
    } else {
        format!("{} — {what}", c.title)
    }
}

/// Decimals that tell the ticks of `r` apart (about ten ticks per axis).
fn decimals(r: &std::ops::Range<f64>) -> usize {
    let step = (r.end - r.start) / 10.0;
    if step.is_nan() || step <= 0.0 || !step.is_finite() {
        return 2;
    }
    (-step.log10().floor()).clamp(0.0, 6.0) as usize
}

/// Tick text for a log axis: three significant digits, no trailing zeros
/// (0.01, 0.25, 1, 40000).
fn axis_fmt(v: &f64) -> String {
    if *v == 0.0 || !v.is_finite() {
        return "0".into();
    }
    let rounded: f64 = format!("{v:.2e}").parse().unwrap_or(*v);
    format!("{rounded}")
}

macro_rules! mesh {
    ($chart:ident, $xl:expr, $yl:expr, $xf:expr, $yf:expr) => {
        $chart
            .configure_mesh()
            .x_desc($xl)
            .y_desc($yl)
            .axis_desc_style(("sans-serif", 22))
            .label_style(("sans-serif", 18))
            .x_label_formatter($xf)
            .y_label_formatter($yf)
            .light_line_style(RGBColor(235, 235, 235))
            .bold_line_style(RGBColor(205, 205, 205))
            .draw()?;
    };
}

macro_rules! builder {
    ($root:expr, $title:expr) => {
        ChartBuilder::on($root)
            .caption($title, ("sans-serif", 28))
            .margin(18)
            .x_label_area_size(58)
            .y_label_area_size(92)
    };
}

/// A chart with linear axes.
macro_rules! chart {
    ($root:expr, $title:expr, $x:expr, $y:expr, $xl:expr, $yl:expr) => {{
        let (xr, yr) = ($x, $y);
        let (dx, dy) = (decimals(&xr), decimals(&yr));
        let xf = move |v: &f64| format!("{v:.dx$}");
        let yf = move |v: &f64| format!("{v:.dy$}");
        let mut chart = builder!($root, $title).build_cartesian_2d(xr, yr)?;
        mesh!(chart, $xl, $yl, &xf, &yf);
        chart
    }};
}

/// Runs `$body` with `$chart` bound to a chart whose y axis is logarithmic
/// when `$log`, linear otherwise (the two are different types).
macro_rules! chart_log_y {
    ($root:expr, $title:expr, $x:expr, $y:expr, $log:expr, $xl:expr, $yl:expr, |$chart:ident| $body:block) => {{
        let (xr, yr) = ($x, $y);
        let dx = decimals(&xr);
        let xf = move |v: &f64| format!("{v:.dx$}");
        if $log {
            let mut $chart = builder!($root, $title).build_cartesian_2d(xr, yr.log_scale())?;
            mesh!($chart, $xl, $yl, &xf, &axis_fmt);
            $body
        } else {
            let dy = decimals(&yr);
            let yf = move |v: &f64| format!("{v:.dy$}");
            let mut $chart = builder!($root, $title).build_cartesian_2d(xr, yr)?;
            mesh!($chart, $xl, $yl, &xf, &yf);
            $body
        }
    }};
}

/// Whether values spanning `lo..hi` (positive) read better on a log axis.
fn wants_log(values: impl Iterator<Item = f64>) -> Option<std::ops::Range<f64>> {
    let (lo, hi) = values
        .filter(|v| finite(*v) && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    (lo.is_finite() && hi / lo > 100.0).then(|| lo / 1.5..hi * 1.5)
}

/// The legend corner that hides the fewest points: each point is placed in
/// the unit square of the axes (log-scaled when `log`).
fn corner(
    pts: &[(f64, f64)],
    xr: &std::ops::Range<f64>,
    yr: &std::ops::Range<f64>,
    log: bool,
) -> SeriesLabelPosition {
    let ny = |y: f64| {
        if log {
            (y.ln() - yr.start.ln()) / (yr.end.ln() - yr.start.ln())
        } else {
            (y - yr.start) / (yr.end - yr.start)
        }
    };
    let unit: Vec<(f64, f64)> = pts
        .iter()
        .filter(|(x, y)| finite(*x) && finite(*y))
        .map(|&(x, y)| ((x - xr.start) / (xr.end - xr.start), ny(y)))
        .collect();
    let count = |right: bool, upper: bool| {
        unit.iter()
            .filter(|(x, y)| {
                (if right { *x > 0.55 } else { *x < 0.45 })
                    && (if upper { *y > 0.6 } else { *y < 0.4 })
            })
            .count()
    };
    [
        (SeriesLabelPosition::UpperRight, count(true, true)),
        (SeriesLabelPosition::UpperLeft, count(false, true)),
        (SeriesLabelPosition::LowerRight, count(true, false)),
        (SeriesLabelPosition::LowerLeft, count(false, false)),
    ]
    .into_iter()
    .fold(
        None::<(SeriesLabelPosition, usize)>,
        |best, (p, n)| match best {
            Some((_, m)) if m <= n => best,
            _ => Some((p, n)),
        },
    )
    .map_or(SeriesLabelPosition::UpperRight, |(p, _)| p)
}

fn legend<'a, DB: DrawingBackend + 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    pos: SeriesLabelPosition,
) -> DrawResult<DB> {
    chart
        .configure_series_labels()
        .position(pos)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(160, 160, 160))
        .label_font(("sans-serif", 18))
        .margin(12)
        .draw()
}

fn points(s: &Series, y: impl Fn(&ChartPoint) -> f64) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64)> = s
        .points
        .iter()
        .map(|p| (p.x, y(p)))
        .filter(|(x, y)| finite(*x) && finite(*y))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

/// The throughput axis: every mode on it, the other end's throughput of a
/// bistable point too (its cross would otherwise be clipped off the top).
fn throughput_y_range(c: &SweepCharts) -> std::ops::Range<f64> {
    let all = || c.series.iter().flat_map(|s| s.points.iter());
    y_range(
        all()
            .map(|p| p.throughput_per_s + p.throughput_ci95.max(0.0))
            .chain(all().filter_map(|p| p.other_end_throughput_per_s)),
    )
}

fn throughput<DB: DrawingBackend>(
    c: &SweepCharts,
    root: &DrawingArea<DB, Shift>,
) -> DrawResult<DB> {
    let all = || c.series.iter().flat_map(|s| s.points.iter());
    let xr = x_range(all().map(|p| p.x));
    let yr = throughput_y_range(c);
    let plotted: Vec<(f64, f64)> = all().map(|p| (p.x, p.throughput_per_s)).collect();
    let pos = corner(&plotted, &xr, &yr, false);
    let mut chart = chart!(
        root,
        title(c, "throughput"),
        xr,
        yr,
        c.x_label.as_str(),
        "throughput (per s)"
    );
    for (i, s) in c.series.iter().enumerate() {
        let col = color(i);
        let band_hi = points(s, |p| p.throughput_per_s + p.throughput_ci95.max(0.0));
        let band_lo = points(s, |p| {
            (p.throughput_per_s - p.throughput_ci95.max(0.0)).max(0.0)
        });
        if band_hi.len() > 1 {
            let poly: Vec<(f64, f64)> = band_hi
                .iter()
                .copied()
                .chain(band_lo.iter().rev().copied())
                .collect();
            chart.draw_series(std::iter::once(Polygon::new(poly, col.mix(0.18).filled())))?;
        }
        let line = points(s, |p| p.throughput_per_s);
        chart
            .draw_series(LineSeries::new(line.clone(), col.stroke_width(3)))?
            .label(series_label(c, i, ""))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], col.stroke_width(3)));
        chart.draw_series(line.iter().map(|&p| Circle::new(p, 3, col.filled())))?;
    }
    for (i, r) in c
        .references
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.throughput.is_empty())
    {
        let col = REFERENCE_SHADES[i % REFERENCE_SHADES.len()];
        // Clip to the simulated range: a bound such as N/(D+Z) grows without limit.
        let top = chart.y_range().end;
        let (lo, hi) = (chart.x_range().start, chart.x_range().end);
        let line: Vec<(f64, f64)> = r
            .throughput
            .iter()
            .filter(|(x, y)| finite(*y) && *x >= lo && *x <= hi)
            .map(|&(x, y)| (x, y.min(top)))
            .collect();
        chart
            .draw_series(DashedLineSeries::new(line, 7, 5, col.stroke_width(2)))?
            .label(r.label.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], col.stroke_width(2)));
    }
    draw_knee_marks(c, &mut chart, |p| p.throughput_per_s)?;
    draw_bistable_marks(c, &mut chart, |p| Some((p.x, p.throughput_per_s)), true)?;
    legend(&mut chart, pos)
}

/// Marks for bistable points.
const BISTABLE_COLOR: RGBColor = RGBColor(200, 0, 0);

/// A red triangle on every bistable point (where `xy` places it), with one
/// legend entry; with `other_end` (the throughput chart), also a red cross
/// at the other end's throughput, joined to the point by a thin
/// dotted line.
fn draw_bistable_marks<'a, DB, CT>(
    c: &SweepCharts,
    chart: &mut ChartContext<'a, DB, CT>,
    xy: impl Fn(&ChartPoint) -> Option<(f64, f64)>,
    other_end: bool,
) -> DrawResult<DB>
where
    DB: DrawingBackend + 'a,
    CT: plotters::coord::CoordTranslate<From = (f64, f64)>,
{
    let marks: Vec<(&ChartPoint, (f64, f64))> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|p| p.bistable)
        .filter_map(|p| Some((p, xy(p)?)))
        .filter(|(_, (x, y))| finite(*x) && finite(*y))
        .collect();
    if marks.is_empty() {
        return Ok(());
    }
    let style = BISTABLE_COLOR.filled();
    if other_end {
        let others: Vec<(f64, f64, f64)> = marks
            .iter()
            .filter_map(|(p, (x, y))| Some((*x, *y, p.other_end_throughput_per_s?)))
            .filter(|(_, _, o)| finite(*o))
            .collect();
        for &(x, a, b) in &others {
            chart.draw_series(DashedLineSeries::new(
                [(x, a), (x, b)],
                3,
                3,
                BISTABLE_COLOR.mix(0.6).stroke_width(1),
            ))?;
        }
        chart
            .draw_series(
                others
                    .iter()
                    .map(|&(x, _, b)| Cross::new((x, b), 6, BISTABLE_COLOR.stroke_width(3))),
            )?
            .label("bistable: started from the other end")
            .legend(|(x, y)| Cross::new((x + 12, y), 6, BISTABLE_COLOR.stroke_width(3)));
    }
    chart
        .draw_series(
            marks
                .iter()
                .map(|&(_, at)| TriangleMarker::new(at, 8, style)),
        )?
        .label("bistable point (two operating points)")
        .legend(move |(x, y)| TriangleMarker::new((x + 12, y), 8, style));
    Ok(())
}

type Xy =
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>;

fn draw_knee_marks<'a, DB: DrawingBackend + 'a>(
    c: &SweepCharts,
    chart: &mut ChartContext<'a, DB, Xy>,
    y: impl Fn(&ChartPoint) -> f64,
) -> DrawResult<DB> {
    let mut labelled = false;
    for m in &c.knees {
        let Some(s) = c.series.get(m.series) else {
            continue;
        };
        let Some(p) = s.points.iter().find(|p| p.x == m.x) else {
            continue;
        };
        let (px, py) = (p.x, y(p));
        if !finite(py) {
            continue;
        }
        let col = color(m.series);
        let drawn = chart.draw_series(std::iter::once(
            EmptyElement::at((px, py))
                + Circle::new((0, 0), 9, ShapeStyle::from(&BLACK).stroke_width(2))
                + Circle::new((0, 0), 5, col.filled()),
        ))?;
        if !labelled {
            drawn.label("knee (max X/R)").legend(|(x, y)| {
                EmptyElement::at((x + 12, y))
                    + Circle::new((0, 0), 7, ShapeStyle::from(&BLACK).stroke_width(2))
            });
            labelled = true;
        }
    }
    Ok(())
}

fn response_time<DB: DrawingBackend>(
    c: &SweepCharts,
    root: &DrawingArea<DB, Shift>,
) -> DrawResult<DB> {
    let all = || c.series.iter().flat_map(|s| s.points.iter());
    let values = || all().flat_map(|p| [p.response_time_s, p.response_time_p99_s]);
    let top = values().filter(|v| finite(*v)).fold(0.0, f64::max);
    let (k, unit) = time_unit(top);
    let xr = x_range(all().map(|p| p.x));
    let log = wants_log(values().map(|v| v * k));
    let (yr, scale) = match &log {
        Some(r) => (r.clone(), ", log scale"),
        None => (y_range(std::iter::once(top * k)), ""),
    };
    let plotted: Vec<(f64, f64)> = all()
        .flat_map(|p| {
            [
                (p.x, p.response_time_s * k),
                (p.x, p.response_time_p99_s * k),
            ]
        })
        .collect();
    let pos = corner(&plotted, &xr, &yr, log.is_some());
    chart_log_y!(
        root,
        title(c, "response time"),
        xr,
        yr,
        log.is_some(),
        c.x_label.as_str(),
        format!("response time ({unit}{scale})"),
        |chart| {
            for (i, s) in c.series.iter().enumerate() {
                let col = color(i);
                let mean = points(s, |p| p.response_time_s * k);
                chart
                    .draw_series(LineSeries::new(mean.clone(), col.stroke_width(3)))?
                    .label(series_label(c, i, "mean"))
                    .legend(move |(x, y)| {
                        PathElement::new([(x, y), (x + 24, y)], col.stroke_width(3))
                    });
                chart.draw_series(mean.iter().map(|&p| Circle::new(p, 3, col.filled())))?;
                let p99 = points(s, |p| p.response_time_p99_s * k);
                chart
                    .draw_series(DashedLineSeries::new(p99, 9, 6, col.stroke_width(2)))?
                    .label(series_label(c, i, "p99"))
                    .legend(move |(x, y)| {
                        EmptyElement::at((x, y))
                            + PathElement::new([(0, 0), (9, 0)], col.stroke_width(2))
                            + PathElement::new([(15, 0), (24, 0)], col.stroke_width(2))
                    });
            }
            draw_bistable_marks(c, &mut chart, |p| Some((p.x, p.response_time_s * k)), false)?;
            for (i, r) in c
                .references
                .iter()
                .enumerate()
                .filter(|(_, r)| !r.response_time.is_empty())
            {
                let col = REFERENCE_SHADES[i % REFERENCE_SHADES.len()];
                let (ylo, yhi) = (chart.y_range().start, chart.y_range().end);
                let (xlo, xhi) = (chart.x_range().start, chart.x_range().end);
                let line: Vec<(f64, f64)> = r
                    .response_time
                    .iter()
                    .map(|&(x, y)| (x, y * k))
                    .filter(|(x, y)| finite(*y) && *y >= ylo && *x >= xlo && *x <= xhi)
                    .map(|(x, y)| (x, y.min(yhi)))
                    .collect();
                chart
                    .draw_series(DashedLineSeries::new(line, 7, 5, col.stroke_width(2)))?
                    .label(r.label.clone())
                    .legend(move |(x, y)| {
                        PathElement::new([(x, y), (x + 24, y)], col.stroke_width(2))
                    });
            }
            legend(&mut chart, pos)
        }
    )
}

fn power<DB: DrawingBackend>(c: &SweepCharts, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
    let pw = |p: &ChartPoint| {
        if p.response_time_s > 0.0 {
            p.throughput_per_s / p.response_time_s
        } else {
            f64::NAN
        }
    };
    let all = || c.series.iter().flat_map(|s| s.points.iter());
    let xr = x_range(all().map(|p| p.x));
    let log = wants_log(all().map(pw));
    let (yr, scale) = match &log {
        Some(r) => (r.clone(), ", log scale"),
        None => (y_range(all().map(pw)), ""),
    };
    let (y_bottom, y_top) = (yr.start, yr.end);
    let plotted: Vec<(f64, f64)> = all().map(|p| (p.x, pw(p))).collect();
    let pos = corner(&plotted, &xr, &yr, log.is_some());
    chart_log_y!(
        root,
        title(c, "power X/R (the knee is its maximum)"),
        xr,
        yr,
        log.is_some(),
        c.x_label.as_str(),
        format!("power X/R (per s²{scale})"),
        |chart| {
            for (i, s) in c.series.iter().enumerate() {
                let col = color(i);
                let line = points(s, pw);
                chart
                    .draw_series(LineSeries::new(line.clone(), col.stroke_width(3)))?
                    .label(series_label(c, i, ""))
                    .legend(move |(x, y)| {
                        PathElement::new([(x, y), (x + 24, y)], col.stroke_width(3))
                    });
                chart.draw_series(line.iter().map(|&p| Circle::new(p, 3, col.filled())))?;
            }
            draw_bistable_marks(c, &mut chart, |p| Some((p.x, pw(p))), false)?;
            for m in &c.knees {
                let Some(s) = c.series.get(m.series) else {
                    continue;
                };
                let Some(p) = s.points.iter().find(|p| p.x == m.x) else {
                    continue;
                };
                let col = color(m.series);
                chart.draw_series(DashedLineSeries::new(
                    [(m.x, y_bottom), (m.x, y_top)],
                    6,
                    5,
                    col.mix(0.7).stroke_width(1),
                ))?;
                let label = format!("knee {}", value_text(m.x));
                chart.draw_series(std::iter::once(
                    EmptyElement::at((m.x, pw(p)))
                        + Circle::new((0, 0), 9, ShapeStyle::from(&BLACK).stroke_width(2))
                        + Text::new(
                            label,
                            (12, -26),
                            ("sans-serif", 18).into_font().color(&BLACK),
                        ),
                ))?;
            }
            legend(&mut chart, pos)
        }
    )
}

/// A load value as text: integers without decimals.
fn value_text(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x}")
    }
}

fn response_vs_utilization<DB: DrawingBackend>(
    c: &SweepCharts,
    root: &DrawingArea<DB, Shift>,
) -> DrawResult<DB> {
    let all = || c.series.iter().flat_map(|s| s.points.iter());
    let top = all()
        .map(|p| p.response_time_s)
        .filter(|v| finite(*v))
        .fold(0.0, f64::max);
    let (k, unit) = time_unit(top);
    let umax = all()
        .filter_map(|p| p.bottleneck_utilization)
        .filter(|u| finite(*u))
        .fold(1.0, f64::max);
    let (xr, yr) = (0.0..umax * 100.0 * 1.02, y_range(std::iter::once(top * k)));
    let plotted: Vec<(f64, f64)> = all()
        .filter_map(|p| Some((p.bottleneck_utilization? * 100.0, p.response_time_s * k)))
        .collect();
    let pos = corner(&plotted, &xr, &yr, false);
    let mut chart = chart!(
        root,
        title(c, "response time vs bottleneck utilization"),
        xr,
        yr,
        "utilization of the bottleneck station (%)",
        format!("mean response time ({unit})")
    );
    for (i, s) in c.series.iter().enumerate() {
        let col = color(i);
        // Joined in load order: a curve that turns back (utilization falling
        // as a collapse sets in) stays readable.
        let mut by_load: Vec<&ChartPoint> = s.points.iter().collect();
        by_load.sort_by(|a, b| a.x.total_cmp(&b.x));
        let pts: Vec<(f64, f64)> = by_load
            .iter()
            .filter_map(|p| Some((p.bottleneck_utilization? * 100.0, p.response_time_s * k)))
            .filter(|(u, r)| finite(*u) && finite(*r))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), col.mix(0.5).stroke_width(2)))?
            .label(series_label(c, i, ""))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], col.stroke_width(3)));
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, col.filled())))?;
    }
    draw_bistable_marks(
        c,
        &mut chart,
        |p| Some((p.bottleneck_utilization? * 100.0, p.response_time_s * k)),
        false,
    )?;
    legend(&mut chart, pos)
}

#[cfg(test)]
mod tests;
