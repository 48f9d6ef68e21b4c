//! Figures of clients and servers under overload (see
//! [`crate::network::Overload`]) and their rows of the metric table.

use super::{ClassResults, Estimate, ReplicationClass, ReplicationStation, StationResults};
use super::{Metric, MetricScope, Read, Unit, row};
use serde::Serialize;

/// One replication's client figures of a class.
#[derive(Clone, Debug, PartialEq, Serialize, Default)]
pub struct ReplicationClient {
    /// Interactions that ended (succeeded or failed).
    pub interactions: u64,
    /// Attempts started.
    pub attempts: u64,
    /// Interactions that succeeded within the class's deadline, per second.
    pub goodput_per_s: f64,
    /// Attempts per interaction that ended (the amplification).
    pub attempts_per_interaction: f64,
    /// Attempts that timed out, per attempt started.
    pub timeout_probability: f64,
    /// Interactions that ended without success, per interaction ended.
    pub failure_probability: f64,
    /// Fraction of the measured time the class's circuit breaker was open
    /// (`None` without a breaker).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breaker_open_fraction: Option<f64>,
    /// Attempts an open circuit breaker failed at once, per attempt
    /// (`None` without a breaker).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fast_failed_fraction: Option<f64>,
}

/// Client figures of a class across replications.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ClientResults {
    /// See [`ReplicationClient::goodput_per_s`].
    pub goodput_per_s: Estimate,
    /// See [`ReplicationClient::attempts_per_interaction`].
    pub attempts_per_interaction: Estimate,
    /// See [`ReplicationClient::timeout_probability`].
    pub timeout_probability: Estimate,
    /// See [`ReplicationClient::failure_probability`].
    pub failure_probability: Estimate,
    /// See [`ReplicationClient::breaker_open_fraction`].
    pub breaker_open_fraction: Option<Estimate>,
    /// See [`ReplicationClient::fast_failed_fraction`].
    pub fast_failed_fraction: Option<Estimate>,
}

/// One replication's overload figures of a station.
#[derive(Clone, Debug, PartialEq, Serialize, Default)]
pub struct ReplicationOverload {
    /// Arrivals at the station.
    pub arrivals: u64,
    /// Server time of the visits that ended, seconds.
    pub work_s: f64,
    /// Waiting jobs that left after their patience, per arrival.
    pub abandonment_probability: f64,
    /// Arrivals that did not join, per arrival.
    pub balking_probability: f64,
    /// Jobs dropped at the start of service for a wait past the
    /// shedding deadline, per arrival.
    pub shed_probability: f64,
    /// Fraction of the server time spent on requests whose client had
    /// given up.
    pub wasted_work_fraction: f64,
}

/// Overload figures of a station across replications (`None` where the
/// station has no such behaviour).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct OverloadResults {
    /// See [`ReplicationOverload::abandonment_probability`].
    pub abandonment_probability: Option<Estimate>,
    /// See [`ReplicationOverload::balking_probability`].
    pub balking_probability: Option<Estimate>,
    /// See [`ReplicationOverload::shed_probability`].
    pub shed_probability: Option<Estimate>,
    /// See [`ReplicationOverload::wasted_work_fraction`].
    pub wasted_work_fraction: Option<Estimate>,
}

/// Names of the client and overload metrics.
pub mod overload_names {
    /// Interactions that succeed within their deadline, per second.
    pub const GOODPUT_PER_S: &str = "goodput_per_s";
    /// Attempts per interaction (the amplification of retries).
    pub const ATTEMPTS_PER_INTERACTION: &str = "attempts_per_interaction";
    /// Attempts that timed out, per attempt.
    pub const TIMEOUT_PROBABILITY: &str = "timeout_probability";
    /// Interactions that ended without success, per interaction.
    pub const FAILURE_PROBABILITY: &str = "failure_probability";
    /// Arrivals that left a queue after their patience, per arrival.
    pub const ABANDONMENT_PROBABILITY: &str = "abandonment_probability";
    /// Arrivals that did not join, per arrival.
    pub const BALKING_PROBABILITY: &str = "balking_probability";
    /// Jobs dropped at service start for a wait past the deadline, per arrival.
    pub const SHED_PROBABILITY: &str = "shed_probability";
    /// Fraction of server time spent on requests whose client had gone.
    pub const WASTED_WORK_FRACTION: &str = "wasted_work_fraction";
    /// Fraction of the time a class's circuit breaker is open.
    pub const BREAKER_OPEN_FRACTION: &str = "breaker_open_fraction";
    /// Attempts an open circuit breaker fails at once, per attempt.
    pub const FAST_FAILED_FRACTION: &str = "fast_failed_fraction";
    /// The class metrics of a client, in report order.
    pub const ALL_CLIENT: [&str; 4] = [
        GOODPUT_PER_S,
        ATTEMPTS_PER_INTERACTION,
        TIMEOUT_PROBABILITY,
        FAILURE_PROBABILITY,
    ];
    /// The class metrics of a circuit breaker, in report order.
    pub const ALL_BREAKER: [&str; 2] = [BREAKER_OPEN_FRACTION, FAST_FAILED_FRACTION];
}
use overload_names::*;

fn client(c: &ClassResults) -> Option<&ClientResults> {
    c.client.as_ref()
}
fn rep_client(c: &ReplicationClass) -> ReplicationClient {
    c.client.clone().unwrap_or_default()
}
fn over(s: &StationResults) -> Option<&OverloadResults> {
    s.overload.as_deref()
}
fn rep_over(s: &ReplicationStation) -> ReplicationOverload {
    s.overload.clone().unwrap_or_default()
}

/// Classes with a `client` table (the last two: with a circuit breaker).
pub(super) const CLIENT: [Metric; 6] = [
    row(
        MetricScope::Class,
        GOODPUT_PER_S,
        Unit::PerSecond,
        "goodput",
        "interactions that succeed within the class's `client.deadline_s` (its SLA, else any success), per second (classes with a client)",
        Read::Class {
            summary: |c| client(c).map(|x| x.goodput_per_s),
            replication: |c| rep_client(c).goodput_per_s,
        },
    ),
    row(
        MetricScope::Class,
        ATTEMPTS_PER_INTERACTION,
        Unit::Attempts,
        "attempts/interaction",
        "attempts per interaction that ended, the first included: the load amplification of retries (classes with a client)",
        Read::Class {
            summary: |c| client(c).map(|x| x.attempts_per_interaction),
            replication: |c| rep_client(c).attempts_per_interaction,
        },
    ),
    row(
        MetricScope::Class,
        TIMEOUT_PROBABILITY,
        Unit::Fraction,
        "timeouts",
        "fraction of attempts the client gave up on after its timeout (classes with a client)",
        Read::Class {
            summary: |c| client(c).map(|x| x.timeout_probability),
            replication: |c| rep_client(c).timeout_probability,
        },
    ),
    row(
        MetricScope::Class,
        FAILURE_PROBABILITY,
        Unit::Fraction,
        "failed",
        "fraction of interactions that ended without success, all attempts failed or not retried (classes with a client)",
        Read::Class {
            summary: |c| client(c).map(|x| x.failure_probability),
            replication: |c| rep_client(c).failure_probability,
        },
    ),
    row(
        MetricScope::Class,
        BREAKER_OPEN_FRACTION,
        Unit::Fraction,
        "breaker open",
        "fraction of the measured time the class's circuit breaker was open, failing its attempts at once (classes with `breaker_window`)",
        Read::Class {
            summary: |c| client(c).and_then(|x| x.breaker_open_fraction),
            replication: |c| rep_client(c).breaker_open_fraction.unwrap_or(0.0),
        },
    ),
    row(
        MetricScope::Class,
        FAST_FAILED_FRACTION,
        Unit::Fraction,
        "fast-failed",
        "fraction of attempts an open (or half-open, probe out) circuit breaker failed at once, without sending them (classes with `breaker_window`)",
        Read::Class {
            summary: |c| client(c).and_then(|x| x.fast_failed_fraction),
            replication: |c| rep_client(c).fast_failed_fraction.unwrap_or(0.0),
        },
    ),
];

/// Stations with patience, balking or shedding, and the queues of a model
/// whose clients time out.
pub(super) const OVERLOAD: [Metric; 4] = [
    row(
        MetricScope::Station,
        ABANDONMENT_PROBABILITY,
        Unit::Fraction,
        "abandoned",
        "fraction of arrivals that left the queue after their patience, unserved (stations with `patience`)",
        Read::Station {
            summary: |s| over(s).and_then(|x| x.abandonment_probability),
            replication: |s| rep_over(s).abandonment_probability,
        },
    ),
    row(
        MetricScope::Station,
        BALKING_PROBABILITY,
        Unit::Fraction,
        "balked",
        "fraction of arrivals that did not join (stations with `balk_at` or `balk_probabilities`)",
        Read::Station {
            summary: |s| over(s).and_then(|x| x.balking_probability),
            replication: |s| rep_over(s).balking_probability,
        },
    ),
    row(
        MetricScope::Station,
        SHED_PROBABILITY,
        Unit::Fraction,
        "shed",
        "fraction of arrivals dropped when their service would start, their wait past `shed_after_s` (stations with it)",
        Read::Station {
            summary: |s| over(s).and_then(|x| x.shed_probability),
            replication: |s| rep_over(s).shed_probability,
        },
    ),
    row(
        MetricScope::Station,
        WASTED_WORK_FRACTION,
        Unit::Fraction,
        "wasted work",
        "fraction of the server time of visits ended spent on requests whose client had already given up (queues of models whose clients time out)",
        Read::Station {
            summary: |s| over(s).and_then(|x| x.wasted_work_fraction),
            replication: |s| rep_over(s).wasted_work_fraction,
        },
    ),
];
