//! The one table of metric names: every figure qsim reports, with its
//! scope, JSON/CSV name, unit and how to read it from results.

use super::*;

/// What a metric describes: the whole network, one station, one class at
/// one station, one class or one region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MetricScope {
    /// The whole network.
    System,
    /// One station.
    Station,
    /// One class at one station (multi-class models).
    StationClass,
    /// One job class.
    Class,
    /// One region (throttle).
    Region,
}

impl MetricScope {
    /// Every scope, in report order.
    pub const ALL: [MetricScope; 5] = [
        MetricScope::System,
        MetricScope::Station,
        MetricScope::StationClass,
        MetricScope::Class,
        MetricScope::Region,
    ];

    /// The word that names the scope in JSON objects, CSV `scope` columns,
    /// sweep columns and derived-metric variables: `system`, `stations`,
    /// `classes`, `regions` (the TOML tables of the same name). A class at
    /// a station is `stations.classes`: its figures sit under the station,
    /// at `stations.NAME.classes.CLASS` (CSV: scope `stations`, name
    /// `NAME.classes.CLASS`).
    pub fn key(self) -> &'static str {
        match self {
            MetricScope::System => "system",
            MetricScope::Station => "stations",
            MetricScope::StationClass => "stations.classes",
            MetricScope::Class => "classes",
            MetricScope::Region => "regions",
        }
    }
}

/// The unit of a metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Per second (names end in `_per_s`).
    PerSecond,
    /// Seconds (names end in `_s`).
    Seconds,
    /// A fraction between 0 and 1.
    Fraction,
    /// A number of jobs (or threads).
    Jobs,
    /// Visits to a station per completed interaction.
    Visits,
    /// Attempts per interaction (clients that retry).
    Attempts,
}

impl Unit {
    /// The unit as written in docs: `1/s`, `s`, `fraction`, `jobs`.
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::PerSecond => "1/s",
            Unit::Seconds => "s",
            Unit::Fraction => "fraction",
            Unit::Jobs => "jobs",
            Unit::Visits => "visits",
            Unit::Attempts => "attempts",
        }
    }
}

/// How a metric is read from results. Each reader gets the part of the
/// results its scope names.
#[derive(Clone, Copy)]
pub(super) enum Read {
    /// A system or class figure, from the throughput and response estimates.
    Flow {
        summary: fn(&Estimate, &ResponseEstimate) -> Estimate,
        replication: fn(&ReplicationClass) -> f64,
    },
    /// P(R > SLA) of the system or a class, present when an SLA applies.
    Sla,
    /// A station figure; `None` when it does not apply to the station.
    Station {
        summary: fn(&StationResults) -> Option<Estimate>,
        replication: fn(&ReplicationStation) -> f64,
    },
    /// A figure of one class at one station; `None` when it does not
    /// apply there.
    StationClass {
        summary: fn(&StationClassResults) -> Option<Estimate>,
        replication: fn(&ReplicationStationClass) -> f64,
    },
    /// A class figure that may not apply (client figures).
    Class {
        summary: fn(&ClassResults) -> Option<Estimate>,
        replication: fn(&ReplicationClass) -> f64,
    },
    /// A region figure; `None` when it does not apply to the region.
    Region {
        summary: fn(&RegionResults) -> Option<Estimate>,
        replication: fn(&ReplicationRegion) -> f64,
    },
}

/// One metric qsim reports: its scope, its one name, its unit, the label of
/// tables and charts, and how to read it.
///
/// The same name is the JSON key, the run CSV `metric`, the sweep column
/// (`stations.NAME.` + name for a station metric) and the derived-metric
/// variable (`stations.NAME.` + name).
#[derive(Clone, Copy)]
pub struct Metric {
    /// What the metric describes.
    pub scope: MetricScope,
    /// Its name, units included (`throughput_per_s`, `response_time_p99_s`).
    pub name: &'static str,
    /// Its unit.
    pub unit: Unit,
    /// Short label for tables and charts.
    pub label: &'static str,
    /// One sentence on what it measures.
    pub doc: &'static str,
    /// Whether sweeps write it as a column of `points.csv` (every metric of
    /// the point's scopes goes to `points.jsonl`).
    pub sweep_column: bool,
    /// Older derived-metric spellings still accepted (see CHANGELOG.md).
    pub aliases: &'static [&'static str],
    pub(super) read: Read,
}

/// A row of the metric table with no sweep column and no aliases: the
/// arguments are the row's columns.
pub(super) const fn row(
    scope: MetricScope,
    name: &'static str,
    unit: Unit,
    label: &'static str,
    doc: &'static str,
    read: Read,
) -> Metric {
    Metric {
        scope,
        name,
        unit,
        label,
        doc,
        sweep_column: false,
        aliases: &[],
        read,
    }
}

impl std::fmt::Debug for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.scope.key(), self.name)
    }
}

impl PartialEq for Metric {
    fn eq(&self, other: &Metric) -> bool {
        self.scope == other.scope && self.name == other.name
    }
}

/// Metric names that other code refers to (the table below uses them too).
pub mod names {
    /// Completions (departures for a station) per second.
    pub const THROUGHPUT_PER_S: &str = "throughput_per_s";
    /// Mean response time, seconds.
    pub const RESPONSE_TIME_S: &str = "response_time_s";
    /// Median response time, seconds.
    pub const RESPONSE_TIME_P50_S: &str = "response_time_p50_s";
    /// 90th-percentile response time, seconds.
    pub const RESPONSE_TIME_P90_S: &str = "response_time_p90_s";
    /// 95th-percentile response time, seconds.
    pub const RESPONSE_TIME_P95_S: &str = "response_time_p95_s";
    /// 99th-percentile response time, seconds.
    pub const RESPONSE_TIME_P99_S: &str = "response_time_p99_s";
    /// 99.9th-percentile response time, seconds.
    pub const RESPONSE_TIME_P999_S: &str = "response_time_p999_s";
    /// Fraction of interactions slower than the SLA.
    pub const SLA_VIOLATION: &str = "sla_violation";
    /// Busy fraction of a station.
    pub const UTILIZATION: &str = "utilization";
    /// Mean jobs present at a station.
    pub const MEAN_JOBS: &str = "mean_jobs";
    /// Mean wait before service (station) or for admission (region), seconds.
    pub const WAIT_TIME_S: &str = "wait_time_s";
    /// Mean jobs per batch.
    pub const MEAN_BATCH_SIZE: &str = "mean_batch_size";
    /// Batches started per second.
    pub const BATCHES_PER_S: &str = "batches_per_s";
    /// Mean threads spinning on a latch.
    pub const MEAN_SPINNING: &str = "mean_spinning";
    /// Mean threads asleep on a latch.
    pub const MEAN_SLEEPING: &str = "mean_sleeping";
    /// Fraction of time anyone is at a latch with mechanisms.
    pub const OCCUPANCY: &str = "occupancy";
    /// Polls per second at a spin latch.
    pub const POLLS_PER_S: &str = "polls_per_s";
    /// Mean poll delay at a spin latch, seconds of CPU.
    pub const MEAN_POLL_DELAY_S: &str = "mean_poll_delay_s";
    /// Mean jobs waiting for admission to a region.
    pub const MEAN_WAITING: &str = "mean_waiting";
    /// Mean jobs inside a region.
    pub const MEAN_INSIDE: &str = "mean_inside";
    /// Mean time inside a region per admission.
    pub const INSIDE_TIME_S: &str = "inside_time_s";
    /// Whether the two-ended check found two operating points (a sweep
    /// point's verdict from two runs, so not a row of [`METRICS`]).
    ///
    /// [`METRICS`]: super::METRICS
    pub const BISTABLE: &str = "bistable";
    /// System throughput of the run started from the other end (all jobs
    /// at the collapsing station, or all thinking), beside the point's own;
    /// at a bistable point, that of the other operating point (the mode the
    /// point's own figures are not in).
    pub const OTHER_END_THROUGHPUT_PER_S: &str = "other_end_throughput_per_s";
    /// The start state a figure belongs to, and its mode where the model
    /// has two ("all jobs thinking (mode 2 of 2)").
    pub const STATE: &str = "state";
    /// Arrivals lost per second at a full station.
    pub const DROPPED_PER_S: &str = "dropped_per_s";
    /// Fraction of arrivals lost at a full station.
    pub const LOSS_PROBABILITY: &str = "loss_probability";
    /// Fraction of arrivals that waited for room at a blocking station.
    pub const BLOCKING_PROBABILITY: &str = "blocking_probability";
    /// Fraction of a sender's server time blocked.
    pub const BLOCKED_FRACTION: &str = "blocked_fraction";
    /// Mean time blocked per blocked job at a sender, seconds.
    pub const BLOCKING_TIME_S: &str = "blocking_time_s";
    /// Median wait before service at a station, seconds.
    pub const WAIT_TIME_P50_S: &str = "wait_time_p50_s";
    /// 90th-percentile wait before service at a station, seconds.
    pub const WAIT_TIME_P90_S: &str = "wait_time_p90_s";
    /// 99th-percentile wait before service at a station, seconds.
    pub const WAIT_TIME_P99_S: &str = "wait_time_p99_s";
    /// Fraction of jobs that waited before service at a station.
    pub const WAIT_PROBABILITY: &str = "wait_probability";
    /// Variance of the number present at a station.
    pub const JOBS_VARIANCE: &str = "jobs_variance";
    /// Fraction of time with at least `simulation.jobs_tail_k` jobs present.
    pub const JOBS_TAIL_PROBABILITY: &str = "jobs_tail_probability";
    /// Visits of a class to a station per completed interaction of the class.
    pub const VISITS: &str = "visits";
}

use names::*;

// One table row per call: the arguments are the row's columns.
#[allow(clippy::too_many_arguments)]
const fn flow(
    scope: MetricScope,
    name: &'static str,
    unit: Unit,
    label: &'static str,
    doc: &'static str,
    aliases: &'static [&'static str],
    summary: fn(&Estimate, &ResponseEstimate) -> Estimate,
    replication: fn(&ReplicationClass) -> f64,
) -> Metric {
    Metric {
        sweep_column: matches!(scope, MetricScope::System),
        aliases,
        ..row(
            scope,
            name,
            unit,
            label,
            doc,
            Read::Flow {
                summary,
                replication,
            },
        )
    }
}

macro_rules! flow_metrics {
    // $a: accept the old mean names; $p: accept the old percentile names.
    ($scope:expr, $a:expr, $p:expr) => {
        [
            flow(
                $scope,
                THROUGHPUT_PER_S,
                Unit::PerSecond,
                "throughput",
                "completed interactions per second",
                if $a { &["throughput"] } else { &[] },
                |x, _| *x,
                |r| r.throughput_per_s,
            ),
            flow(
                $scope,
                RESPONSE_TIME_S,
                Unit::Seconds,
                "response time",
                "mean time from the start of an interaction (leaving think, or arriving) to its end",
                if $a { &["response_time"] } else { &[] },
                |_, r| Estimate {
                    mean: r.mean,
                    ci95: r.ci95,
                },
                |r| r.response_time_s,
            ),
            flow(
                $scope,
                RESPONSE_TIME_P50_S,
                Unit::Seconds,
                "p50",
                "median response time",
                if $p { &["p50"] } else { &[] },
                |_, r| r.p50,
                |r| r.percentiles_s[0],
            ),
            flow(
                $scope,
                RESPONSE_TIME_P90_S,
                Unit::Seconds,
                "p90",
                "90th percentile of the response time",
                if $p { &["p90"] } else { &[] },
                |_, r| r.p90,
                |r| r.percentiles_s[1],
            ),
            flow(
                $scope,
                RESPONSE_TIME_P95_S,
                Unit::Seconds,
                "p95",
                "95th percentile of the response time",
                if $p { &["p95"] } else { &[] },
                |_, r| r.p95,
                |r| r.percentiles_s[2],
            ),
            flow(
                $scope,
                RESPONSE_TIME_P99_S,
                Unit::Seconds,
                "p99",
                "99th percentile of the response time",
                if $p { &["p99"] } else { &[] },
                |_, r| r.p99,
                |r| r.percentiles_s[3],
            ),
            flow(
                $scope,
                RESPONSE_TIME_P999_S,
                Unit::Seconds,
                "p99.9",
                "99.9th percentile of the response time",
                if $p { &["p999"] } else { &[] },
                |_, r| r.p999,
                |r| r.percentiles_s[4],
            ),
        ]
    };
}

const SYSTEM_FLOW: [Metric; 7] = flow_metrics!(MetricScope::System, true, true);
const CLASS_FLOW: [Metric; 7] = flow_metrics!(MetricScope::Class, true, false);

const SLA: Metric = Metric {
    scope: MetricScope::System,
    name: SLA_VIOLATION,
    unit: Unit::Fraction,
    label: "P(R > SLA)",
    doc: "fraction of interactions slower than `simulation.sla_s` (present when it is set)",
    sweep_column: true,
    aliases: &[],
    read: Read::Sla,
};

// One table row per call: the arguments are the row's columns.
#[allow(clippy::too_many_arguments)]
const CLASS_SLA: Metric = Metric {
    scope: MetricScope::Class,
    name: SLA_VIOLATION,
    unit: Unit::Fraction,
    label: "P(R > SLA)",
    doc: "fraction of the class's interactions slower than its `sla_s`, or `simulation.sla_s` when it has none (present when one is set)",
    sweep_column: false,
    aliases: &[],
    read: Read::Sla,
};

/// One per-station distribution figure (`simulation.station_tails`).
const fn tail(
    name: &'static str,
    unit: Unit,
    label: &'static str,
    doc: &'static str,
    summary: fn(&StationResults) -> Option<Estimate>,
    replication: fn(&ReplicationStation) -> f64,
) -> Metric {
    row(
        MetricScope::Station,
        name,
        unit,
        label,
        doc,
        Read::Station {
            summary,
            replication,
        },
    )
}

fn rep_tail(s: &ReplicationStation, f: fn(&ReplicationTails) -> f64) -> f64 {
    s.tails.as_ref().map_or(0.0, f)
}

/// Per-station distributions, present with `simulation.station_tails`.
const TAILS: [Metric; 9] = [
    tail(
        RESPONSE_TIME_P50_S,
        Unit::Seconds,
        "p50",
        "median time from arrival at the station to departure (with `simulation.station_tails`)",
        |s| s.tails.as_ref().map(|t| t.response_time_p50_s),
        |s| rep_tail(s, |t| t.response_time_s[0]),
    ),
    tail(
        RESPONSE_TIME_P90_S,
        Unit::Seconds,
        "p90",
        "90th percentile of the time at the station (with `simulation.station_tails`)",
        |s| s.tails.as_ref().map(|t| t.response_time_p90_s),
        |s| rep_tail(s, |t| t.response_time_s[1]),
    ),
    tail(
        RESPONSE_TIME_P99_S,
        Unit::Seconds,
        "p99",
        "99th percentile of the time at the station (with `simulation.station_tails`)",
        |s| s.tails.as_ref().map(|t| t.response_time_p99_s),
        |s| rep_tail(s, |t| t.response_time_s[2]),
    ),
    tail(
        WAIT_TIME_P50_S,
        Unit::Seconds,
        "wait p50",
        "median wait before service (with `simulation.station_tails`)",
        |s| s.tails.as_ref().map(|t| t.wait_time_p50_s),
        |s| rep_tail(s, |t| t.wait_time_s[0]),
    ),
    tail(
        WAIT_TIME_P90_S,
        Unit::Seconds,
        "wait p90",
        "90th percentile of the wait before service (with `simulation.station_tails`)",
        |s| s.tails.as_ref().map(|t| t.wait_time_p90_s),
        |s| rep_tail(s, |t| t.wait_time_s[1]),
    ),
    tail(
        WAIT_TIME_P99_S,
        Unit::Seconds,
        "wait p99",
        "99th percentile of the wait before service (with `simulation.station_tails`)",
        |s| s.tails.as_ref().map(|t| t.wait_time_p99_s),
        |s| rep_tail(s, |t| t.wait_time_s[2]),
    ),
    tail(
        WAIT_PROBABILITY,
        Unit::Fraction,
        "P(wait > 0)",
        "fraction of the jobs that left the station that had waited for service (with `simulation.station_tails`)",
        |s| s.tails.as_ref().map(|t| t.wait_probability),
        |s| rep_tail(s, |t| t.wait_probability),
    ),
    tail(
        JOBS_VARIANCE,
        Unit::Jobs,
        "var jobs",
        "time-average variance of the number present, in jobs squared (with `simulation.station_tails`)",
        |s| s.tails.as_ref().map(|t| t.jobs_variance),
        |s| rep_tail(s, |t| t.jobs_variance),
    ),
    tail(
        JOBS_TAIL_PROBABILITY,
        Unit::Fraction,
        "P(n >= k)",
        "fraction of time with at least k jobs present, k = `simulation.jobs_tail_k` (with `simulation.station_tails`)",
        |s| s.tails.as_ref().map(|t| t.jobs_tail_probability),
        |s| rep_tail(s, |t| t.jobs_tail_probability),
    ),
];

/// The metric table's parts, by scope and then in report order.
const PARTS: [&[Metric]; 11] = [
    &SYSTEM_FLOW,
    &[SLA],
    super::station::STATION,
    &TAILS,
    &super::overload::OVERLOAD,
    super::station_class::STATION_CLASS,
    &super::station_class::CLASS_TAILS,
    &CLASS_FLOW,
    &[CLASS_SLA],
    &super::overload::CLIENT,
    super::region::REGION,
];

/// How many metrics the table holds.
pub const METRIC_COUNT: usize = {
    let mut n = 0;
    let mut p = 0;
    while p < PARTS.len() {
        n += PARTS[p].len();
        p += 1;
    }
    n
};

/// Every metric, by scope and then in report order.
pub static METRICS: [Metric; METRIC_COUNT] = {
    let mut all = [SLA; METRIC_COUNT];
    let mut k = 0;
    let mut p = 0;
    while p < PARTS.len() {
        let mut j = 0;
        while j < PARTS[p].len() {
            all[k] = PARTS[p][j];
            k += 1;
            j += 1;
        }
        p += 1;
    }
    all
};

/// The metrics of one scope, in report order.
pub fn metrics(scope: MetricScope) -> impl Iterator<Item = &'static Metric> {
    METRICS.iter().filter(move |m| m.scope == scope)
}

/// The metric of `scope` called `name`, or one of its older spellings.
pub fn metric(scope: MetricScope, name: &str) -> Option<&'static Metric> {
    metrics(scope).find(|m| m.name == name || m.aliases.contains(&name))
}

impl Metric {
    /// Whether it is a response-time percentile (`response_time_p99_s`).
    pub fn is_percentile(&self) -> bool {
        matches!(
            self.name,
            RESPONSE_TIME_P50_S
                | RESPONSE_TIME_P90_S
                | RESPONSE_TIME_P95_S
                | RESPONSE_TIME_P99_S
                | RESPONSE_TIME_P999_S
        )
    }

    /// The metric of `scope` called `name` (canonical names only); panics on
    /// a name the table does not hold, so it is for names taken from
    /// [`names`].
    pub fn get(scope: MetricScope, name: &str) -> &'static Metric {
        metrics(scope)
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no {} metric {name}", scope.key()))
    }

    /// Whether it is a per-station distribution figure, of the station or
    /// of one class there, reported only with `simulation.station_tails`
    /// (tables show them in their own sections).
    pub fn is_station_tail(&self) -> bool {
        matches!(self.scope, MetricScope::Station | MetricScope::StationClass)
            && (self.is_percentile()
                || matches!(
                    self.name,
                    WAIT_TIME_P50_S
                        | WAIT_TIME_P90_S
                        | WAIT_TIME_P99_S
                        | WAIT_PROBABILITY
                        | JOBS_VARIANCE
                        | JOBS_TAIL_PROBABILITY
                ))
    }

    /// Its key path for one item: `throughput_per_s` for a system metric,
    /// `stations.cpu.utilization` for a station metric of `cpu`,
    /// `stations.cpu.classes.web.utilization` for the class metric of item
    /// `cpu.classes.web` (see [`station_class_item`]).
    pub fn path(&self, item: &str) -> String {
        match self.scope {
            MetricScope::System => self.name.to_string(),
            MetricScope::StationClass => format!("stations.{item}.{}", self.name),
            s => format!("{}.{item}.{}", s.key(), self.name),
        }
    }

    /// The metric's estimate in a run summary, for item `index` of its scope
    /// (ignored for system metrics); `None` when it does not apply.
    pub fn summary(&self, r: &RunResults, index: usize) -> Option<Estimate> {
        match (self.read, self.scope) {
            (Read::Flow { summary, .. }, MetricScope::System) => Some(summary(
                &r.system.throughput_per_s,
                &r.system.response_time_s,
            )),
            (Read::Flow { summary, .. }, _) => r
                .classes
                .get(index)
                .map(|c| summary(&c.throughput_per_s, &c.response_time_s)),
            (Read::Sla, MetricScope::System) => r.system.sla_violation,
            (Read::Sla, _) => r.classes.get(index).and_then(|c| c.sla_violation),
            (Read::Station { summary, .. }, _) => r.stations.get(index).and_then(summary),
            (Read::StationClass { summary, .. }, _) => {
                let (s, c) = split_station_class(index, r.classes.len())?;
                r.stations
                    .get(s)?
                    .classes
                    .iter()
                    .find(|x| x.class == c)
                    .and_then(summary)
            }
            (Read::Class { summary, .. }, _) => r.classes.get(index).and_then(summary),
            (Read::Region { summary, .. }, _) => r.regions.get(index).and_then(summary),
        }
    }

    /// The metric's value in one replication, for item `index` of its scope;
    /// `None` when the item does not exist. Metrics that do not apply to an
    /// item read 0.
    pub fn replication(&self, rep: &ReplicationResult, index: usize) -> Option<f64> {
        match (self.read, self.scope) {
            (Read::Flow { replication, .. }, MetricScope::System) => Some(replication(&rep.system)),
            (Read::Flow { replication, .. }, _) => rep.classes.get(index).map(replication),
            (Read::Sla, MetricScope::System) => Some(rep.system.sla_violation),
            (Read::Sla, _) => rep.classes.get(index).map(|c| c.sla_violation),
            (Read::Station { replication, .. }, _) => rep.stations.get(index).map(replication),
            (Read::StationClass { replication, .. }, _) => {
                let (s, c) = split_station_class(index, rep.classes.len())?;
                // NaN marks a figure not defined there (see
                // `ReplicationStationClass`).
                let x = replication(rep.stations.get(s)?.classes.get(c)?);
                (!x.is_nan()).then_some(x)
            }
            (Read::Class { replication, .. }, _) => rep.classes.get(index).map(replication),
            (Read::Region { replication, .. }, _) => rep.regions.get(index).map(replication),
        }
    }
}

/// The item index of class `class` at station `station` in a model of
/// `classes` classes, for [`Metric::summary`] and [`Metric::replication`]
/// of [`MetricScope::StationClass`] metrics.
pub fn station_class_index(station: usize, class: usize, classes: usize) -> usize {
    station * classes + class
}

fn split_station_class(index: usize, classes: usize) -> Option<(usize, usize)> {
    (classes > 0).then(|| (index / classes, index % classes))
}

/// The item name of class `class` at station `station`: `cpu.classes.web`,
/// as in its key path `stations.cpu.classes.web.utilization`.
pub fn station_class_item(station: &str, class: &str) -> String {
    format!("{station}.classes.{class}")
}
