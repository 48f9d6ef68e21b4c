//! The CSV form of one run: one row per metric, long format. Scopes and
//! metric names come from the one table (`qsim_kernel::METRICS`).

use crate::Report;
use qsim_kernel::{
    Estimate, MetricScope, RunResults, metrics, station_class_index, station_class_item,
};
use std::fmt::Write;

/// The `scope` of derived-metric rows (their `metric` is [`DERIVED_METRIC`]).
pub const DERIVED_SCOPE: &str = "derived";
/// The `metric` of derived-metric rows.
pub const DERIVED_METRIC: &str = "value";
/// The header of the run CSV.
pub const CSV_HEADER: &str = "scope,name,metric,mean,ci95,error";

fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        String::new()
    }
}

fn row(out: &mut String, scope: &str, name: &str, metric: &str, e: &Estimate) {
    let _ = writeln!(
        out,
        "{scope},{},{metric},{},{},",
        quote(name),
        num(e.mean),
        num(e.ci95)
    );
}

/// A CSV field: quoted when it holds a comma, a quote or a line break.
pub fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The names of the items of `scope` (`system` for the system;
/// `cpu.classes.web` for a class at a station) with their indices for
/// [`qsim_kernel::Metric::summary`].
pub(crate) fn items(r: &RunResults, scope: MetricScope) -> Vec<(String, usize)> {
    let named = |names: Vec<&str>| -> Vec<(String, usize)> {
        names
            .into_iter()
            .enumerate()
            .map(|(i, n)| (n.to_string(), i))
            .collect()
    };
    match scope {
        MetricScope::System => named(vec![MetricScope::System.key()]),
        MetricScope::Station => named(r.stations.iter().map(|s| s.name.as_str()).collect()),
        MetricScope::StationClass => r
            .stations
            .iter()
            .enumerate()
            .flat_map(|(i, s)| {
                s.classes.iter().map(move |c| {
                    (
                        station_class_item(&s.name, &c.name),
                        station_class_index(i, c.class, r.classes.len()),
                    )
                })
            })
            .collect(),
        MetricScope::Class => named(r.classes.iter().map(|c| c.name.as_str()).collect()),
        MetricScope::Region => named(r.regions.iter().map(|g| g.name.as_str()).collect()),
    }
}

/// The `scope` column of a scope's rows: a class at a station is written
/// under `stations`, its name `cpu.classes.web`, so that scope, name and
/// metric joined by dots are its key path.
fn scope_column(scope: MetricScope) -> &'static str {
    match scope {
        MetricScope::StationClass => MetricScope::Station.key(),
        s => s.key(),
    }
}

/// Renders a report as CSV with the header `scope,name,metric,mean,ci95,error`:
/// every metric that applies (the system's rows with an empty name), then the derived metrics (scope `derived`,
/// metric `value`); a derived metric that could not be evaluated has an empty
/// mean and ci95 and says why in `error`. A figure that is not a finite
/// number is left empty.
pub fn to_csv(report: &Report) -> String {
    let r = report.results;
    let mut out = format!("{CSV_HEADER}\n");
    for scope in MetricScope::ALL {
        for (name, i) in items(r, scope) {
            for m in metrics(scope) {
                // The system is one item: its name is left empty, as in
                // the CSV of `qsim solve` and of a trace.
                let name = if scope == MetricScope::System {
                    ""
                } else {
                    name.as_str()
                };
                if let Some(e) = m.summary(r, i) {
                    row(&mut out, scope_column(scope), name, m.name, &e);
                }
            }
        }
    }
    for d in &report.derived {
        match &d.value {
            Ok(e) => row(&mut out, DERIVED_SCOPE, &d.name, DERIVED_METRIC, e),
            Err(error) => {
                let _ = writeln!(
                    out,
                    "{DERIVED_SCOPE},{},{DERIVED_METRIC},,,{}",
                    quote(&d.name),
                    quote(error)
                );
            }
        }
    }
    // Comment lines, so the figures above stay one table for CSV readers.
    for w in &report.warnings {
        let _ = writeln!(out, "# warning: {w}");
    }
    out
}
