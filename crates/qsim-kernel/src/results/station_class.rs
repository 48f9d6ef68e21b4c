//! Figures of one class at one station of a multi-class model: the
//! per-class percentiles (with `simulation.station_tails`) and the rows of
//! the metric table for a class at a station.

use super::names::*;
use super::{Estimate, Metric, MetricScope, Read, Unit, row};
use super::{ReplicationStationClass, StationClassResults};
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
        "median time from arrival at the station to departure, over the class's visits (with `simulation.station_tails`)",
        |c| c.tails.as_ref().map(|t| t.response_time_p50_s),
        |c| rep_tail(c, |t| t.response_time_s[0]),
    ),
    station_class(
        RESPONSE_TIME_P90_S,
        Unit::Seconds,
        "p90",
        "90th percentile of the class's time at the station (with `simulation.station_tails`)",
        |c| c.tails.as_ref().map(|t| t.response_time_p90_s),
        |c| rep_tail(c, |t| t.response_time_s[1]),
    ),
    station_class(
        RESPONSE_TIME_P99_S,
        Unit::Seconds,
        "p99",
        "99th percentile of the class's time at the station (with `simulation.station_tails`)",
        |c| c.tails.as_ref().map(|t| t.response_time_p99_s),
        |c| rep_tail(c, |t| t.response_time_s[2]),
    ),
    station_class(
        WAIT_TIME_P50_S,
        Unit::Seconds,
        "wait p50",
        "median wait before service, over the class's visits (with `simulation.station_tails`)",
        |c| c.tails.as_ref().map(|t| t.wait_time_p50_s),
        |c| rep_tail(c, |t| t.wait_time_s[0]),
    ),
    station_class(
        WAIT_TIME_P90_S,
        Unit::Seconds,
        "wait p90",
        "90th percentile of the class's wait before service (with `simulation.station_tails`)",
        |c| c.tails.as_ref().map(|t| t.wait_time_p90_s),
        |c| rep_tail(c, |t| t.wait_time_s[1]),
    ),
    station_class(
        WAIT_TIME_P99_S,
        Unit::Seconds,
        "wait p99",
        "99th percentile of the class's wait before service (with `simulation.station_tails`)",
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

/// Per-class figures at the plain queue, delay, PS and speed-curve stations
/// of a multi-class model: the station metrics of the same name, counted
/// over one class's visits.
pub(super) const STATION_CLASS: [Metric; 6] = [
    station_class(
        THROUGHPUT_PER_S,
        Unit::PerSecond,
        "throughput /s",
        "departures of the class per second",
        |c| Some(c.throughput_per_s),
        |c| c.throughput_per_s,
    ),
    station_class(
        UTILIZATION,
        Unit::Fraction,
        "utilization",
        "the class's part of the station's utilization (each job in service holds an equal part of the busy servers; they add up to the station's); absent at a delay station and at a cpu that spin-latch threads run on",
        |c| c.utilization,
        |c| c.utilization,
    ),
    station_class(
        MEAN_JOBS,
        Unit::Jobs,
        "mean jobs",
        "time-average number of the class's jobs present, queued and in service",
        |c| Some(c.mean_jobs),
        |c| c.mean_jobs,
    ),
    station_class(
        RESPONSE_TIME_S,
        Unit::Seconds,
        "response",
        "mean time from arrival at the station to departure, over the class's visits",
        |c| Some(c.response_time_s),
        |c| c.response_time_s,
    ),
    station_class(
        WAIT_TIME_S,
        Unit::Seconds,
        "wait",
        "mean time from arrival at the station to the start of service, over the class's visits",
        |c| Some(c.wait_time_s),
        |c| c.wait_time_s,
    ),
    station_class(
        VISITS,
        Unit::Visits,
        "visits",
        "departures of the class from the station per completed interaction of the class",
        |c| c.visits,
        |c| c.visits,
    ),
];
