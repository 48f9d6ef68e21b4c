//! The system over time: per-interval figures of one replication.
//!
//! With [`RunConfig::trace`](crate::RunConfig::trace) set, each replication
//! cuts its run into intervals of [`TracePlan::interval_s`] and records, per
//! interval, the area under each station's number present and busy
//! servers, its departures, and the interactions that finished in it with
//! the sum of their response times. The intervals tile the whole run: the
//! warm-up from time 0, then the measured window from its start (one
//! interval ends exactly where the measurement starts, so the measured
//! intervals tile the measured window exactly and their length-weighted
//! means are the run's figures). A trace costs nothing when off: it is a
//! control event every interval, scheduled only when tracing.
//!
//! Memory is bounded: when a phase reaches [`TracePlan::max_intervals`],
//! neighbouring intervals are merged pairwise and the interval doubles
//! ([`Trace::widened`] says so), so a trace holds at most that many
//! intervals per phase whatever the run length.

use serde::Serialize;

/// How to trace a run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TracePlan {
    /// Length of an interval, seconds (> 0).
    pub interval_s: f64,
    /// Most intervals kept per phase (warm-up, measured) before pairs are
    /// merged (at least 2).
    pub max_intervals: u32,
}

/// One station in one interval: sums over the interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TraceStation {
    /// Area under the number present (job-seconds).
    pub area_jobs: f64,
    /// Area under busy servers divided by the servers (0 for stations
    /// without servers, whose utilization is not reported).
    pub area_utilization: f64,
    /// Departures in the interval.
    pub departures: u64,
}

/// One interval of a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceInterval {
    /// Start, absolute seconds.
    pub start_s: f64,
    /// End, absolute seconds.
    pub end_s: f64,
    /// True in the measured window, false in the warm-up.
    pub measured: bool,
    /// Interactions finished in the interval.
    pub completions: u64,
    /// Sum of their response times, seconds.
    pub sum_response_s: f64,
    /// In a model with clients, interactions that succeeded within their
    /// deadline in the interval (the goodput's count, warm-up included);
    /// `None` without clients.
    pub good: Option<u64>,
    /// Per station, in spec order.
    pub stations: Vec<TraceStation>,
}

impl TraceInterval {
    /// Length, seconds.
    pub fn length_s(&self) -> f64 {
        self.end_s - self.start_s
    }

    fn per_s(&self, x: f64) -> f64 {
        let t = self.length_s();
        if t > 0.0 { x / t } else { 0.0 }
    }

    /// Interactions finished per second.
    pub fn throughput_per_s(&self) -> f64 {
        self.per_s(self.completions as f64)
    }

    /// Interactions that succeeded within their deadline per second, in a
    /// model with clients.
    pub fn goodput_per_s(&self) -> Option<f64> {
        self.good.map(|g| self.per_s(g as f64))
    }

    /// Mean response time of the interactions finished in the interval;
    /// `None` when none finished (the figure does not exist).
    pub fn response_time_s(&self) -> Option<f64> {
        (self.completions > 0).then(|| self.sum_response_s / self.completions as f64)
    }

    /// Time-average number present at station `s`.
    pub fn mean_jobs(&self, s: usize) -> f64 {
        self.per_s(self.stations[s].area_jobs)
    }

    /// Departures per second at station `s`.
    pub fn station_throughput_per_s(&self, s: usize) -> f64 {
        self.per_s(self.stations[s].departures as f64)
    }

    /// Busy fraction of station `s`'s servers.
    pub fn utilization(&self, s: usize) -> f64 {
        self.per_s(self.stations[s].area_utilization)
    }

    /// Adds `next` (the interval after this one) into this one.
    fn absorb(&mut self, next: &TraceInterval) {
        self.end_s = next.end_s;
        self.completions += next.completions;
        self.sum_response_s += next.sum_response_s;
        self.good = match (self.good, next.good) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        for (a, b) in self.stations.iter_mut().zip(&next.stations) {
            a.area_jobs += b.area_jobs;
            a.area_utilization += b.area_utilization;
            a.departures += b.departures;
        }
    }
}

/// The trace of one replication.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    /// The intervals in time order (warm-up first).
    pub intervals: Vec<TraceInterval>,
    /// The interval length at the end of the run (the plan's, doubled once
    /// per merge).
    pub interval_s: f64,
    /// True when intervals were merged to stay within the plan's bound.
    pub widened: bool,
}

impl Trace {
    /// Appends a closed interval of the phase that starts at index `from`,
    /// merging that phase's intervals pairwise when it reaches `max`;
    /// returns true when it merged (the interval doubles).
    pub(crate) fn push(&mut self, from: usize, iv: TraceInterval, max: u32) -> bool {
        self.intervals.push(iv);
        if self.intervals.len() - from <= max as usize {
            return false;
        }
        let phase: Vec<TraceInterval> = self.intervals.drain(from..).collect();
        for pair in phase.chunks(2) {
            let mut a = pair[0].clone();
            if let Some(b) = pair.get(1) {
                a.absorb(b);
            }
            self.intervals.push(a);
        }
        self.widened = true;
        true
    }
}
