//! The human-readable table of one run.

use crate::{Report, bottleneck_line};
use qsim_kernel::number::{mean_ci, num};
use qsim_kernel::{
    Estimate, Metric, MetricScope, Stop, Unit, Warmup, metrics, names, station_class_index,
};
use std::fmt::Write;

/// A duration in seconds with a readable unit.
pub(crate) fn time_unit(max_s: f64) -> (&'static str, f64) {
    let a = max_s.abs();
    if a >= 1.0 || a == 0.0 || !a.is_finite() {
        ("s", 1.0)
    } else if a >= 1e-3 {
        ("ms", 1e3)
    } else if a >= 1e-6 {
        ("us", 1e6)
    } else {
        ("ns", 1e9)
    }
}

fn dur(x: f64) -> String {
    let (u, k) = time_unit(x);
    format!("{} {u}", num(x * k))
}

fn pm(e: &Estimate) -> String {
    mean_ci(e.mean, e.ci95)
}

pub(crate) fn pm_dur(e: &Estimate) -> String {
    if e.mean.is_nan() {
        return "n/a".into();
    }
    let (u, k) = time_unit(e.mean);
    format!("{} {u}", mean_ci(e.mean * k, e.ci95 * k))
}

pub(crate) fn pct(e: &Estimate) -> String {
    if e.mean.is_nan() {
        return "n/a".into();
    }
    if e.ci95.is_nan() {
        return format!("{:.1}% ± n/a", 100.0 * e.mean);
    }
    format!("{:.1}% ± {:.1}", 100.0 * e.mean, 100.0 * e.ci95)
}

/// An estimate formatted for its unit.
fn cell(m: &Metric, e: &Estimate) -> String {
    match m.unit {
        Unit::Seconds => pm_dur(e),
        Unit::Fraction => pct(e),
        Unit::PerSecond | Unit::Jobs | Unit::Visits | Unit::Attempts => pm(e),
    }
}

pub(crate) fn columns(out: &mut String, rows: &[Vec<String>]) {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    // Columns of names and kinds align left, columns of figures right; the
    // header row follows its column.
    let is_text = |c: &String| {
        c.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
            && !c.starts_with(|c: char| c.is_ascii_digit())
    };
    let left: Vec<bool> = (0..n)
        .map(|i| i == 0 || rows.iter().skip(1).filter_map(|r| r.get(i)).all(is_text))
        .collect();
    for r in rows {
        let mut line = String::from("  ");
        for (i, cell) in r.iter().enumerate() {
            let pad = widths[i] - cell.chars().count();
            let text = left[i];
            if i > 0 {
                line.push_str("  ");
            }
            if text {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

/// The rows of a class-at-a-station section: its means, or with `tails`
/// its percentiles (`simulation.station_tails`), for each class at each
/// station that keeps them.
fn station_class_rows(r: &qsim_kernel::RunResults, tails: bool) -> Vec<Vec<String>> {
    let nc = r.classes.len();
    let shown: Vec<&Metric> = metrics(MetricScope::StationClass)
        .filter(|m| m.is_station_tail() == tails)
        .collect();
    let mut header = vec!["station".to_string(), "class".to_string()];
    header.extend(shown.iter().map(|m| m.label.to_string()));
    let mut rows = vec![header];
    for (i, st) in r.stations.iter().enumerate() {
        for cl in st.classes.iter().filter(|c| !tails || c.tails.is_some()) {
            let item = station_class_index(i, cl.class, nc);
            let mut row = vec![st.name.clone(), cl.name.clone()];
            for m in &shown {
                row.push(m.summary(r, item).map_or("-".into(), |e| cell(m, &e)));
            }
            rows.push(row);
        }
    }
    rows
}

/// Renders a report as an aligned text table (per system, station, class,
/// region and derived metric, each with its 95% CI) and a bottleneck line.
pub fn to_table(report: &Report) -> String {
    let r = report.results;
    let c = report.config;
    let mut out = String::new();
    let stop = match c.stop {
        Stop::Jobs(n) => format!("{n} jobs"),
        Stop::Time(t) => format!("{} simulated", dur(t)),
    };
    let warmup = match c.effective_warmup() {
        Warmup::None => "no warm-up".to_string(),
        Warmup::Jobs(n) => format!("warm-up {n} jobs"),
        Warmup::Time(t) => format!("warm-up {}", dur(t)),
        Warmup::Mser5 => format!("warm-up MSER-5 (mean {})", dur(r.warmup_time_s)),
        Warmup::Fraction(f) => format!("warm-up {}% of the stop", f * 100.0),
    };
    let _ = writeln!(out, "model {}", report.model);
    let _ = writeln!(
        out,
        "  {} replication{} x {stop}, {warmup}, seed {}, initial state: {}, {} events",
        r.replications,
        if r.replications == 1 { "" } else { "s" },
        c.seed,
        report.initial_state,
        r.events
    );
    let _ = writeln!(out, "  (± is the half-width of a 95% confidence interval)");
    for w in &report.warnings {
        let _ = writeln!(out, "warning: {w}");
    }

    let _ = writeln!(out, "\nsystem");
    let mut rows = Vec::new();
    for m in metrics(MetricScope::System) {
        let Some(e) = m.summary(r, 0) else { continue };
        let label = if m.name == names::SLA_VIOLATION {
            format!("P(R > {})", c.sla_s.map(dur).unwrap_or_default())
        } else if m.is_percentile() {
            format!("  {}", m.label)
        } else {
            m.label.to_string()
        };
        let value = match m.unit {
            Unit::PerSecond => format!("{} /s", pm(&e)),
            _ => cell(m, &e),
        };
        rows.push(vec![label, value]);
    }
    columns(&mut out, &rows);

    if !r.stations.is_empty() {
        let _ = writeln!(out, "\nstations");
        // A column per station metric that applies to some station.
        let shown: Vec<&Metric> = metrics(MetricScope::Station)
            .filter(|m| !m.is_station_tail())
            .filter(|m| (0..r.stations.len()).any(|i| m.summary(r, i).is_some()))
            .collect();
        let mut header = vec!["name".to_string(), "kind".to_string()];
        header.extend(shown.iter().map(|m| m.label.to_string()));
        let mut rows = vec![header];
        for (i, st) in r.stations.iter().enumerate() {
            let mut row = vec![st.name.clone(), st.kind.to_string()];
            for m in &shown {
                row.push(match m.summary(r, i) {
                    // Delays, forks and joins have no busy servers to count.
                    Some(_) if m.name == names::UTILIZATION && !st.kind.can_saturate() => {
                        "-".into()
                    }
                    Some(e) => cell(m, &e),
                    None => "-".into(),
                });
            }
            rows.push(row);
        }
        columns(&mut out, &rows);
    }

    if r.stations.iter().any(|s| !s.classes.is_empty()) {
        let _ = writeln!(out, "\nstations by class");
        columns(&mut out, &station_class_rows(r, false));
    }

    if r.stations.iter().any(|s| s.tails.is_some()) {
        let _ = writeln!(out, "\nstation tails (k = {} for P(n >= k))", c.jobs_tail_k);
        let shown: Vec<&Metric> = metrics(MetricScope::Station)
            .filter(|m| m.is_station_tail())
            .collect();
        let mut header = vec!["name".to_string()];
        header.extend(shown.iter().map(|m| m.label.to_string()));
        let mut rows = vec![header];
        for (i, st) in r.stations.iter().enumerate() {
            let mut row = vec![st.name.clone()];
            for m in &shown {
                row.push(m.summary(r, i).map_or("-".into(), |e| cell(m, &e)));
            }
            rows.push(row);
        }
        columns(&mut out, &rows);
    }

    if r.stations
        .iter()
        .flat_map(|s| &s.classes)
        .any(|c| c.tails.is_some())
    {
        let _ = writeln!(out, "\nstation tails by class");
        columns(&mut out, &station_class_rows(r, true));
    }

    // Client figures are per class: a single class with a client shows them.
    let clients = r.classes.iter().any(|c| c.client.is_some());
    let breakers = r.classes.iter().any(|c| {
        c.client
            .as_ref()
            .is_some_and(|k| k.breaker_open_fraction.is_some())
    });
    if r.classes.len() > 1 || clients {
        let _ = writeln!(out, "\nclasses");
        let sla = r.classes.iter().any(|c| c.sla_violation.is_some());
        let shown: Vec<&Metric> = [
            names::THROUGHPUT_PER_S,
            names::RESPONSE_TIME_S,
            names::RESPONSE_TIME_P99_S,
        ]
        .into_iter()
        .chain(sla.then_some(names::SLA_VIOLATION))
        .chain(
            clients
                .then_some(qsim_kernel::overload_names::ALL_CLIENT)
                .into_iter()
                .flatten(),
        )
        .chain(
            breakers
                .then_some(qsim_kernel::overload_names::ALL_BREAKER)
                .into_iter()
                .flatten(),
        )
        .map(|n| Metric::get(MetricScope::Class, n))
        .collect();
        let mut header = vec!["name".to_string()];
        header.extend(shown.iter().map(|m| match m.unit {
            Unit::PerSecond => format!("{} /s", m.label),
            _ => m.label.to_string(),
        }));
        let mut rows = vec![header];
        for (i, cl) in r.classes.iter().enumerate() {
            let mut row = vec![cl.name.clone()];
            for m in &shown {
                row.push(m.summary(r, i).map_or("-".into(), |e| cell(m, &e)));
            }
            rows.push(row);
        }
        columns(&mut out, &rows);
    }

    if !r.regions.is_empty() {
        let _ = writeln!(out, "\nregions");
        let shown: Vec<&Metric> = metrics(MetricScope::Region).collect();
        let mut header = vec!["name".to_string()];
        header.extend(shown.iter().map(|m| m.label.to_string()));
        let mut rows = vec![header];
        for (i, g) in r.regions.iter().enumerate() {
            let mut row = vec![g.name.clone()];
            for m in &shown {
                row.push(m.summary(r, i).map_or("-".into(), |e| cell(m, &e)));
            }
            rows.push(row);
        }
        columns(&mut out, &rows);
    }

    if !report.derived.is_empty() {
        let _ = writeln!(out, "\nderived");
        let rows: Vec<Vec<String>> = report
            .derived
            .iter()
            .map(|d| match &d.value {
                Ok(e) => vec![d.name.clone(), pm(e)],
                Err(why) => vec![d.name.clone(), format!("error: {why}")],
            })
            .collect();
        columns(&mut out, &rows);
    }
    let _ = writeln!(
        out,
        "\n{}",
        bottleneck_line(r, report.open, report.offered_per_s)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_units_read_well() {
        assert_eq!(num(1998.26), "1998");
        assert_eq!(num(0.49871), "0.4987");
        assert_eq!(num(12.3456), "12.35");
        assert_eq!(dur(0.0481), "48.10 ms");
        assert_eq!(dur(2.5e-5), "25.00 us");
        assert_eq!(time_unit(3.0).0, "s");
    }
}
