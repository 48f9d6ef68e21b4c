//! What the charts of a sweep show (series, knees, analytic reference
//! lines), shared by `qsim sweep`, `qsim plot`, `qsim merge` and
//! `qsim report`.

use super::run::parse_overrides;
use qsim_kernel::names;
use qsim_report::charts::{self, ChartPoint, Marker, Series, SweepCharts};
use qsim_sweep::knee::{self, CurvePoint};
use qsim_sweep::{Axes, Point, PointRecord, SavedSweep};
use std::path::Path;

/// What the charts of a saved sweep show: its series, knees and analytic
/// reference lines.
pub(crate) fn sweep_charts(saved: &SavedSweep) -> SweepCharts {
    let title = Path::new(&saved.manifest.model)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut chart = chart_data(&title, &saved.manifest.axes, &saved.records);
    chart.references = references(saved);
    chart
}

/// Largest population the exact-MVA reference curve is computed up to
/// (its cost grows with the population; beyond this it is left out).
const MAX_REFERENCE_POPULATION: u32 = 1_000_000;

/// Analytic lines for a sweep over the population of a single closed class:
/// exact MVA when the model is product-form, and the asymptotic bounds
/// (throughput at most min(N/(D+Z), 1/Dmax), response at least
/// max(D, N·Dmax − Z)) in any case. Empty for other sweeps, or when the
/// model can no longer be loaded from where the sweep ran.
fn references(saved: &SavedSweep) -> Vec<charts::Reference> {
    let m = &saved.manifest;
    let Some(load) = m.axes.load.as_deref() else {
        return Vec::new();
    };
    if m.vary.len() != 1 || !load.ends_with("population") {
        return Vec::new();
    }
    let Ok(base) = parse_overrides(&m.set) else {
        return Vec::new();
    };
    let Ok(model) = qsim_model::load_file(Path::new(&m.model), &base) else {
        return Vec::new();
    };
    let network = &model.network;
    let spec = network.spec();
    if spec.classes.len() != 1
        || !matches!(
            spec.classes[0].workload,
            qsim_kernel::Workload::Closed { .. }
        )
    {
        return Vec::new();
    }
    let mut loads: Vec<u32> = saved
        .records
        .iter()
        // Only points that ran: a point refused by the budget (population
        // 10^9) would make MVA allocate per population up to it.
        .filter(|r| r.error.is_none())
        .filter_map(|r| r.point.get(load).and_then(|v| v.text().parse::<u32>().ok()))
        .filter(|&n| n > 0)
        .collect();
    loads.sort_unstable();
    loads.dedup();
    let Some(&max) = loads.last() else {
        return Vec::new();
    };
    if max > MAX_REFERENCE_POPULATION {
        return Vec::new();
    }
    let mut out = Vec::new();
    if qsim_theory::product_form::reasons(network.spec()).is_empty()
        && qsim_theory::product_form::policy_reasons(network).is_empty()
        && let Ok(sol) = qsim_theory::closed::mva_single(network.spec(), 0, max)
    {
        let pts: Vec<_> = loads
            .iter()
            .filter_map(|&n| sol.at(n).map(|p| (n, p)))
            .collect();
        out.push(charts::Reference {
            label: "exact MVA".into(),
            throughput: pts
                .iter()
                .map(|(n, p)| (f64::from(*n), p.throughput_per_s))
                .collect(),
            response_time: pts
                .iter()
                .map(|(n, p)| (f64::from(*n), p.response_time_s))
                .collect(),
        });
    }
    // Bounds are straight lines between their corners, so every load from 1
    // to the largest makes them exact on the chart.
    let bounds: Vec<_> = (1..=max)
        .filter_map(|n| {
            qsim_theory::bounds::network_bounds(network, 0, n)
                .ok()
                .flatten()
                .map(|a| (n, a))
        })
        .collect();
    if !bounds.is_empty() {
        out.push(charts::Reference {
            label: "asymptotic bound".into(),
            throughput: bounds
                .iter()
                .map(|(n, a)| (f64::from(*n), a.throughput_upper_per_s))
                .collect(),
            response_time: bounds
                .iter()
                .map(|(n, a)| (f64::from(*n), a.response_lower_s))
                .collect(),
        });
    }
    out
}

/// One series per combination of the values other than the load's, in
/// order of first appearance; each series' knee from [`knee::analyze`].
pub(crate) fn chart_data(title: &str, axes: &Axes, records: &[PointRecord]) -> SweepCharts {
    let load = axes.load.as_deref();
    let mut series: Vec<(Point, Series)> = Vec::new();
    for r in records {
        let Some(m) = &r.results else { continue };
        let fixed = Point(
            r.point
                .0
                .iter()
                .filter(|(p, _)| Some(p.as_str()) != load)
                .cloned()
                .collect(),
        );
        let x = load
            .and_then(|p| r.point.get(p))
            .and_then(|v| v.number())
            .unwrap_or(r.index as f64);
        let cp = ChartPoint {
            x,
            throughput_per_s: m.system(names::THROUGHPUT_PER_S).mean,
            throughput_ci95: m.system(names::THROUGHPUT_PER_S).ci95,
            response_time_s: m.system(names::RESPONSE_TIME_S).mean,
            response_time_ci95: m.system(names::RESPONSE_TIME_S).ci95,
            response_time_p99_s: m.system(names::RESPONSE_TIME_P99_S).mean,
            response_time_p99_ci95: m.system(names::RESPONSE_TIME_P99_S).ci95,
            bottleneck_utilization: m.bottleneck_utilization(),
            bistable: qsim_sweep::bistable::is_bistable(r),
            other_end_throughput_per_s: m
                .bistability
                .as_ref()
                .map(|b| b.other_end_throughput_per_s.mean)
                .filter(|x| x.is_finite()),
        };
        match series.iter_mut().find(|(f, _)| *f == fixed) {
            Some((_, s)) => s.points.push(cp),
            None => series.push((
                fixed.clone(),
                Series {
                    label: fixed.to_string(),
                    points: vec![cp],
                },
            )),
        }
    }
    let knees = series
        .iter()
        .enumerate()
        .filter_map(|(i, (_, s))| {
            let curve: Vec<CurvePoint> = s
                .points
                .iter()
                .map(|p| CurvePoint {
                    load: p.x,
                    throughput_per_s: p.throughput_per_s,
                    response_time_s: p.response_time_s,
                })
                .collect();
            let k = knee::analyze(&curve)?;
            Some(Marker {
                series: i,
                x: curve[k.knee].load,
            })
        })
        .collect();
    let x_label = match load {
        Some(p) => {
            let last = p.rsplit('.').next().unwrap_or(p);
            if ["population", "clients", "threads", "users", "concurrency"].contains(&last) {
                format!("{p} (jobs)")
            } else {
                p.to_string()
            }
        }
        None => "point".into(),
    };
    SweepCharts {
        title: title.to_string(),
        x_label,
        series: series.into_iter().map(|(_, s)| s).collect(),
        knees,
        references: Vec::new(),
    }
}
