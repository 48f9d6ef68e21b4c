//! Reporting for qsim: results as text tables, JSON and CSV, and sweep
//! charts as SVG and PNG. Formatting only; the binary decides where output
//! goes.
//!
//! A [`Report`] bundles a run's [`RunResults`] with what a reader needs
//! beside them (model name, derived metrics, run settings); [`to_json`],
//! [`to_table`] and [`to_csv`] render it.
#![warn(missing_docs)]

pub mod boundary_chart;
pub mod charts;
mod csv_out;
pub mod fit_chart;
pub mod html;
pub mod hysteresis_chart;
pub mod interactive;
mod json;
pub mod phases;
mod table;
pub mod trace_chart;

pub use csv_out::{CSV_HEADER, CsvRows, DERIVED_METRIC, DERIVED_SCOPE, quote, to_csv};
pub use json::to_json;
pub use table::to_table;

use qsim_kernel::{Estimate, RunConfig, RunResults};
use serde::Serialize;

/// A run's results with the context needed to read them.
#[derive(Clone, Debug)]
pub struct Report<'a> {
    /// Model file as given on the command line.
    pub model: &'a str,
    /// The run settings that produced the results.
    pub config: &'a RunConfig,
    /// The results.
    pub results: &'a RunResults,
    /// Derived metrics declared in the model, in declaration order.
    pub derived: Vec<DerivedResult>,
    /// Where closed jobs started (`thinking` or `at station X`).
    pub initial_state: String,
    /// Every class is open: throughput is the arrival rate, which no
    /// station limits (a busy station limits the rate the model can take).
    pub open: bool,
    /// The rate at which the open arrivals would complete in a steady
    /// state, per second, when that is known (every class open, no station
    /// that loses jobs, no load schedule): a throughput well below it
    /// means a saturated station.
    pub offered_per_s: Option<f64>,
    /// Warnings to show with the results.
    pub warnings: Vec<String>,
}

/// The value of one derived metric (`[metrics]` in the model).
#[derive(Clone, Debug, PartialEq)]
pub struct DerivedResult {
    /// The metric's name.
    pub name: String,
    /// Its mean and CI across replications, or why it could not be
    /// evaluated (e.g. a division by zero in one replication): the run's
    /// other figures stand, and this one is reported as an error.
    pub value: Result<Estimate, String>,
}

/// The busiest station (highest utilization): in a closed model, the one
/// that limits throughput once it saturates.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bottleneck {
    /// Station name.
    pub station: String,
    /// Its utilization (busy fraction).
    pub utilization: f64,
}

/// Names the station that limits throughput: the one with the highest
/// utilization (busy fraction of its servers; for a station with a speed
/// curve, the fraction of time it is working at the curve's rate). Delay
/// stations never limit throughput. `None` when no station qualifies.
pub fn bottleneck(results: &RunResults) -> Option<Bottleneck> {
    results
        .stations
        .iter()
        .filter(|s| s.kind.can_saturate())
        .filter(|s| s.utilization.mean.is_finite())
        .max_by(|a, b| a.utilization.mean.total_cmp(&b.utilization.mean))
        .map(|s| Bottleneck {
            station: s.name.clone(),
            utilization: s.utilization.mean,
        })
}

/// One line naming the bottleneck, e.g. `bottleneck: latch1 (utilization
/// 99.7%)`; `open` when every class is open (see [`Report::open`]). With
/// blocking, also the stations whose servers are occupied (serving or
/// blocked) at least 90% of the time, since `utilization` leaves their
/// blocked time out.
pub fn bottleneck_line(results: &RunResults, open: bool, offered_per_s: Option<f64>) -> String {
    let mut line = utilization_line(results, open, offered_per_s);
    for s in &results.stations {
        let Some(blocked) = s.blocked_fraction.map(|b| b.mean) else {
            continue;
        };
        let occupied = s.utilization.mean + blocked;
        if blocked > 0.0 && occupied >= 0.9 {
            line.push_str(&format!(
                "; station {} is occupied {:.1}% (serving {:.1}%, blocked {:.1}% by a full station downstream)",
                s.name,
                100.0 * occupied,
                100.0 * s.utilization.mean,
                100.0 * blocked
            ));
        }
    }
    line
}

/// [`bottleneck_line`] from utilization alone.
fn utilization_line(results: &RunResults, open: bool, offered_per_s: Option<f64>) -> String {
    // An open model is saturated when it completes clearly fewer jobs than
    // arrive (the whole 95% interval below, by more than 5%); a run that
    // drifted between the halves of its window cannot say either way.
    let x = results.system.throughput_per_s;
    // Clients that give up, and queues that lose work (patience, balking,
    // shedding), complete fewer interactions than arrive in a steady state.
    let loses = results.classes.iter().any(|c| c.client.is_some())
        || results.stations.iter().any(|s| s.overload.is_some());
    let falls_behind = offered_per_s
        .filter(|o| x.mean < 0.95 * o && x.mean + x.ci95.max(0.0) < *o)
        .filter(|_| open && !loses);
    let drifting = open
        && results
            .warnings
            .iter()
            .any(|w| matches!(w, qsim_kernel::RunWarning::NotSteady { .. }));
    let grouped = |name: &str| {
        results
            .stations
            .iter()
            .any(|s| s.name == name && s.kind.serves_groups())
    };
    match bottleneck(results) {
        // A busy batch or link station serves larger groups as load grows,
        // so being busy does not cap throughput as it does elsewhere.
        Some(b) if b.utilization >= 0.9 && grouped(&b.station) => format!(
            "bottleneck: busiest station {} (utilization {:.1}%), a batch or link station: its groups grow with load, so it may not limit throughput",
            b.station,
            100.0 * b.utilization
        ),
        Some(b) if falls_behind.is_some() => format!(
            "bottleneck: {} is saturated (utilization {:.1}%): the network completes {}/s of the {}/s that arrive, so jobs pile up without bound and the figures describe a transient, not a steady state",
            b.station,
            100.0 * b.utilization,
            short(x.mean),
            short(falls_behind.unwrap_or(f64::NAN)),
        ),
        Some(b) if drifting => format!(
            "bottleneck: busiest station {} (utilization {:.1}%); the run did not reach a steady state (see the warning), so it may be saturated: these figures cannot tell",
            b.station,
            100.0 * b.utilization
        ),
        // Open arrivals set the throughput; the busiest station caps the
        // arrival rate the model can take, not the throughput measured.
        Some(b) if open => format!(
            "bottleneck: busiest station {} (utilization {:.1}%); the arrivals set the throughput, and this station would saturate first if they grew",
            b.station,
            100.0 * b.utilization
        ),
        Some(b) if b.utilization >= 0.9 => format!(
            "bottleneck: {} (utilization {:.1}%): it limits throughput",
            b.station,
            100.0 * b.utilization
        ),
        Some(b) => format!(
            "bottleneck: none saturated; busiest station {} (utilization {:.1}%)",
            b.station,
            100.0 * b.utilization
        ),
        None => "bottleneck: none (only delay stations)".to_string(),
    }
}

/// Four significant digits.
fn short(x: f64) -> String {
    qsim_kernel::sig(x, 4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use qsim_kernel::StationResults;

    fn station(name: &str, utilization: f64, blocked: Option<f64>) -> StationResults {
        let e = |mean| Estimate { mean, ci95: 0.0 };
        StationResults {
            name: name.into(),
            kind: qsim_kernel::KindTag::Queue,
            utilization: e(utilization),
            blocked_fraction: blocked.map(e),
            ..StationResults::default()
        }
    }

    #[test]
    fn a_station_occupied_by_blocked_servers_is_named_beside_the_utilization() {
        let results = RunResults {
            stations: vec![station("app", 0.55, Some(0.40)), station("db", 0.80, None)],
            ..RunResults::default()
        };
        let line = bottleneck_line(&results, false, None);
        assert!(
            line.starts_with("bottleneck: none saturated; busiest station db (utilization 80.0%)")
                && line.ends_with(
                    "; station app is occupied 95.0% (serving 55.0%, blocked 40.0% by a full station downstream)"
                ),
            "{line}"
        );
        // Occupied below 90%: nothing to add.
        let results = RunResults {
            stations: vec![station("app", 0.55, Some(0.30)), station("db", 0.80, None)],
            ..RunResults::default()
        };
        assert!(!bottleneck_line(&results, false, None).contains("occupied"));
    }
}
