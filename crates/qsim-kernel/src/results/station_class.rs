//! Figures of one class at one station of a multi-class model: one line
//! per metric (see [`metric_family!`]) gives the field of
//! [`ReplicationStationClass`] and of [`StationClassResults`] and the row of
//! the metric table; the per-class percentiles (with
//! `simulation.station_tails`) and their rows.

use super::names::*;
use super::{Estimate, Metric, MetricScope, Read, Unit, row};
use crate::hist::Histogram;
use serde::Serialize;
use std::sync::Arc;

/// One replication's percentiles of one class at one station
/// (`simulation.station_tails`, multi-class models).
#[derive(Clone, Debug, PartialEq, Serialize, Default)]
pub struct ReplicationClassTails {
    /// p50, p90, p99 of the class's time at the station, seconds (0 in
    /// checkpoints).
    pub response_time_s: [f64; 3],
    /// p50, p90, p99 of the class's wait before service, seconds (0 in
    /// checkpoints).
    pub wait_time_s: [f64; 3],
    /// The times recorded, which [`crate::summarize`] pools across
    /// replications (absent in checkpoints).
    #[serde(skip)]
    pub(crate) response: Option<Arc<Histogram>>,
    /// The waits recorded, pooled likewise.
    #[serde(skip)]
    pub(crate) wait: Option<Arc<Histogram>>,
}

/// Percentiles of one class at one station across replications
/// (`simulation.station_tails`, multi-class models): the station tails'
/// percentiles over the class's visits alone.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ClassTailResults {
    /// Median time at the station.
    pub response_time_p50_s: Estimate,
    /// 90th percentile of the time at the station.
    pub response_time_p90_s: Estimate,
    /// 99th percentile of the time at the station.
    pub response_time_p99_s: Estimate,
    /// Median wait before service.
    pub wait_time_p50_s: Estimate,
    /// 90th percentile of the wait before service.
    pub wait_time_p90_s: Estimate,
    /// 99th percentile of the wait before service.
    pub wait_time_p99_s: Estimate,
}

fn rep_tail(c: &ReplicationStationClass, f: fn(&ReplicationClassTails) -> f64) -> f64 {
    c.tails.as_ref().map_or(0.0, f)
}

/// A class's percentiles at a station, present with
/// `simulation.station_tails` in a multi-class model (the station tails'
/// names, over the class's visits).
pub(super) const CLASS_TAILS: [Metric; 6] = [
    station_class(
        RESPONSE_TIME_P50_S,
        Unit::Seconds,
        "p50",
        "median time from arrival at the station to departure, over the class's visits (with `simulation.station_tails` in a multi-class model)",
        |c| c.tails.as_ref().map(|t| t.response_time_p50_s),
        |c| rep_tail(c, |t| t.response_time_s[0]),
    ),
    station_class(
        RESPONSE_TIME_P90_S,
        Unit::Seconds,
        "p90",
        "90th percentile of the class's time at the station (with `simulation.station_tails` in a multi-class model)",
        |c| c.tails.as_ref().map(|t| t.response_time_p90_s),
        |c| rep_tail(c, |t| t.response_time_s[1]),
    ),
    station_class(
        RESPONSE_TIME_P99_S,
        Unit::Seconds,
        "p99",
        "99th percentile of the class's time at the station (with `simulation.station_tails` in a multi-class model)",
        |c| c.tails.as_ref().map(|t| t.response_time_p99_s),
        |c| rep_tail(c, |t| t.response_time_s[2]),
    ),
    station_class(
        WAIT_TIME_P50_S,
        Unit::Seconds,
        "wait p50",
        "median wait before service, over the class's visits (with `simulation.station_tails` in a multi-class model)",
        |c| c.tails.as_ref().map(|t| t.wait_time_p50_s),
        |c| rep_tail(c, |t| t.wait_time_s[0]),
    ),
    station_class(
        WAIT_TIME_P90_S,
        Unit::Seconds,
        "wait p90",
        "90th percentile of the class's wait before service (with `simulation.station_tails` in a multi-class model)",
        |c| c.tails.as_ref().map(|t| t.wait_time_p90_s),
        |c| rep_tail(c, |t| t.wait_time_s[1]),
    ),
    station_class(
        WAIT_TIME_P99_S,
        Unit::Seconds,
        "wait p99",
        "99th percentile of the class's wait before service (with `simulation.station_tails` in a multi-class model)",
        |c| c.tails.as_ref().map(|t| t.wait_time_p99_s),
        |c| rep_tail(c, |t| t.wait_time_s[2]),
    ),
];

const fn station_class(
    name: &'static str,
    unit: Unit,
    label: &'static str,
    doc: &'static str,
    summary: fn(&StationClassResults) -> Option<Estimate>,
    replication: fn(&ReplicationStationClass) -> f64,
) -> Metric {
    row(
        MetricScope::StationClass,
        name,
        unit,
        label,
        doc,
        Read::StationClass {
            summary,
            replication,
        },
    )
}

/// Which of a class's metrics at a station apply there: the `when` flags
/// below.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StationClassFlags {
    /// The class's part of the busy servers is defined (not at a delay, nor
    /// at a cpu that spin-latch threads run on).
    pub(crate) utilization: bool,
    /// Departures per completed interaction are a visit count (no capacity
    /// loses jobs, no schedule sends them away) and every replication
    /// completed an interaction of the class.
    pub(crate) visits: bool,
}

/// What one replication's value of a class's figure at a station is
/// weighed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StationClassWeight {
    /// Measured time: rates and time averages.
    Time,
    /// The class's departures there: means over its visits.
    Departures,
    /// The class's completed interactions: ratios per interaction.
    Completions,
}

metric_family! {
    scope: StationClass,
    read: StationClass,
    table: STATION_CLASS,
    applies: StationClassFlags,
    weights: StationClassWeight,
    /// One replication's figures for one class at one station (NaN where a
    /// figure is not defined there).
    #[derive(Clone, Debug, PartialEq, Serialize, Default)]
    replication: ReplicationStationClass {
        /// Percentiles of the class's time and wait, with `station_tails`.
        pub tails: Option<ReplicationClassTails>,
    },
    /// Figures of one class at one station (the station figures of the same
    /// name, over that class's visits), those that apply there.
    #[derive(Clone, Debug, PartialEq, Default)]
    summary: StationClassResults {
        /// Class name.
        pub name: String,
        /// Class index in spec order.
        pub class: usize,
    } {
        /// Percentiles of the class's time and wait there (with
        /// `station_tails`, at the stations where the class keeps them).
        pub tails: Option<ClassTailResults>,
    },
    metrics: {
        throughput_per_s: Estimate, PerSecond, "throughput /s", false, [], Time,
            "departures of the class per second";
        utilization: Option<Estimate> [when utilization], Fraction, "utilization", false, [], Time,
            "the class's part of the station's utilization (each job in service holds an equal part of the busy servers; they add up to the station's); absent at a delay station and at a cpu that spin-latch threads run on";
        mean_jobs: Estimate, Jobs, "mean jobs", false, [], Time,
            "time-average number of the class's jobs present, queued and in service";
        response_time_s: Estimate, Seconds, "response", false, [], Departures,
            "mean time from arrival at the station to departure, over the class's visits";
        wait_time_s: Estimate, Seconds, "wait", false, [], Departures,
            "mean time from arrival at the station to the start of service, over the class's visits";
        visits: Option<Estimate> [when visits], Visits, "visits", false, [], Completions,
            "departures of the class from the station per completed interaction of the class (not when a capacity loses jobs or a schedule sends jobs away)";
    }
}
