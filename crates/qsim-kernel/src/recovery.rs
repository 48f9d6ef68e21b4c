//! A run with a trigger (a load schedule, or a station's capacity
//! schedule): its figures per phase (before, during and after the
//! trigger) and how long a collapse lasts.
//!
//! The trigger window runs from the first change of the schedules to the
//! last one (a ramp's end included; see [`run_trigger_window`]). A traced run with a schedule ends a
//! trace interval at each edge of the window (see [`cuts`]), so the phases
//! are exact sums of whole intervals: [`phases`] gives each phase's figures
//! per replication and their mean over the replications with a 95%
//! interval.
//!
//! [`recovery`] reads each replication's trace as a time series of one
//! named metric ([`RecoveryMetric`]): its level before the trigger is the
//! baseline; the replication has collapsed at the first interval after the
//! trigger starts that begins [`HOLD`] intervals in a row below `fraction`
//! of the baseline, and has recovered at the first interval after both the
//! trigger's end and the collapse that begins [`HOLD`] intervals in a row
//! at `fraction` of it or above. Times are
//! those intervals' midpoints, so they are known to within half an
//! interval ([`Recovery::resolution_s`]).

use crate::results::{Estimate, estimate};
use crate::schedule::{Change, ClassSchedule};
use crate::trace::{Trace, TraceInterval};
use serde::Serialize;

/// When a schedule's load differs from the model's own: from its first
/// change to its last (absolute seconds).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TriggerWindow {
    /// The first change.
    pub start_s: f64,
    /// The last change (a ramp's end); equal to `start_s` for one step.
    pub end_s: f64,
}

/// The trigger window of `schedule`, if it has any step.
pub fn trigger_window(schedule: &[ClassSchedule]) -> Option<TriggerWindow> {
    let steps = schedule.iter().flat_map(|cs| cs.steps.iter());
    let start = steps.clone().map(|s| s.at_s).reduce(f64::min)?;
    let end = steps
        .map(|s| match s.change {
            Change::Ramp { until_s, .. } => until_s,
            _ => s.at_s,
        })
        .fold(start, f64::max);
    Some(TriggerWindow {
        start_s: start,
        end_s: end,
    })
}

/// The trigger window of a run: from the first change of its load
/// schedule or of a station's capacity schedule to the last.
pub fn run_trigger_window(config: &crate::RunConfig) -> Option<TriggerWindow> {
    let load = trigger_window(&config.schedule);
    let capacity = config
        .station_schedule
        .iter()
        .flat_map(|s| s.steps.iter().map(|k| k.at_s))
        .fold(None, |w: Option<(f64, f64)>, t| {
            Some(w.map_or((t, t), |(a, b)| (a.min(t), b.max(t))))
        });
    match (load, capacity) {
        (w, None) => w,
        (None, Some((a, b))) => Some(TriggerWindow {
            start_s: a,
            end_s: b,
        }),
        (Some(w), Some((a, b))) => Some(TriggerWindow {
            start_s: w.start_s.min(a),
            end_s: w.end_s.max(b),
        }),
    }
}

/// The times at which a traced run ends an interval off its grid: the
/// edges of the trigger window.
pub fn cuts(config: &crate::RunConfig) -> Vec<f64> {
    let Some(w) = run_trigger_window(config) else {
        return Vec::new();
    };
    if w.end_s > w.start_s {
        vec![w.start_s, w.end_s]
    } else {
        vec![w.start_s]
    }
}

/// A part of a run with a trigger.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// From the start of the measured window to the trigger.
    Before,
    /// The trigger window.
    During,
    /// From the end of the trigger to the end of the run.
    After,
}

impl Phase {
    /// The name used in every output (`before`, `during`, `after`).
    pub fn name(self) -> &'static str {
        match self {
            Phase::Before => "before",
            Phase::During => "during",
            Phase::After => "after",
        }
    }
}

/// One phase's figures over the replications.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseFigures {
    /// Which phase.
    pub phase: Phase,
    /// Start of the phase (the measured part of it), absolute seconds.
    pub start_s: f64,
    /// End of the phase (the longest replication's, for `after`).
    pub end_s: f64,
    /// Replications with measured time in the phase.
    pub replications: u32,
    /// System throughput.
    pub throughput_per_s: Estimate,
    /// Mean response time of the interactions finished in the phase (over
    /// the replications in which some did; NaN when none did).
    pub response_time_s: Estimate,
    /// Per station, in spec order: time-average number present.
    pub mean_jobs: Vec<Estimate>,
    /// Per station: departures per second.
    pub station_throughput_per_s: Vec<Estimate>,
    /// Per station: busy fraction of its servers.
    pub utilization: Vec<Estimate>,
}

/// The measured intervals of `t` whose midpoints lie in `[a, b)`.
fn within(t: &Trace, a: f64, b: f64) -> impl Iterator<Item = &TraceInterval> {
    t.intervals.iter().filter(move |i| {
        let m = 0.5 * (i.start_s + i.end_s);
        i.measured && m >= a && m < b
    })
}

/// One replication's sums over a phase: (length, completions, sum of
/// responses, per station (area of jobs, area of utilization, departures)).
struct Sums {
    length: f64,
    completions: u64,
    sum_response: f64,
    /// Successes within the deadline (completions without clients).
    good: u64,
    stations: Vec<(f64, f64, u64)>,
}

fn sums<'a>(ivs: impl Iterator<Item = &'a TraceInterval>) -> Option<Sums> {
    let mut s: Option<Sums> = None;
    for i in ivs {
        let acc = s.get_or_insert_with(|| Sums {
            length: 0.0,
            completions: 0,
            sum_response: 0.0,
            good: 0,
            stations: vec![(0.0, 0.0, 0); i.stations.len()],
        });
        acc.length += i.length_s();
        acc.completions += i.completions;
        acc.sum_response += i.sum_response_s;
        acc.good += i.good.unwrap_or(i.completions);
        for (a, st) in acc.stations.iter_mut().zip(&i.stations) {
            a.0 += st.area_jobs;
            a.1 += st.area_utilization;
            a.2 += st.departures;
        }
    }
    s.filter(|s| s.length > 0.0)
}

/// The phases of a run with trigger window `w`, from its replications'
/// traces: those with measured time, in order.
pub fn phases(w: TriggerWindow, traces: &[&Trace]) -> Vec<PhaseFigures> {
    let end = traces
        .iter()
        .filter_map(|t| t.intervals.last())
        .map(|i| i.end_s)
        .fold(0.0, f64::max);
    let start = traces
        .iter()
        .filter_map(|t| t.intervals.iter().find(|i| i.measured))
        .map(|i| i.start_s)
        .fold(f64::INFINITY, f64::min);
    let mut out = Vec::new();
    for (phase, a, b) in [
        (Phase::Before, f64::NEG_INFINITY, w.start_s),
        (Phase::During, w.start_s, w.end_s),
        (Phase::After, w.end_s, f64::INFINITY),
    ] {
        let per: Vec<Sums> = traces
            .iter()
            .filter_map(|t| sums(within(t, a, b)))
            .collect();
        let Some(first) = per.first() else {
            continue;
        };
        let ns = first.stations.len();
        let per_station = |f: &dyn Fn(&Sums, usize) -> f64| {
            (0..ns)
                .map(|s| estimate(per.iter().map(|x| f(x, s))))
                .collect::<Vec<_>>()
        };
        let responses = per
            .iter()
            .filter(|x| x.completions > 0)
            .map(|x| x.sum_response / x.completions as f64);
        out.push(PhaseFigures {
            phase,
            start_s: a.max(start),
            end_s: b.min(end),
            replications: per.len() as u32,
            throughput_per_s: estimate(per.iter().map(|x| x.completions as f64 / x.length)),
            response_time_s: {
                let e = estimate(responses);
                if e == Estimate::default() {
                    Estimate {
                        mean: f64::NAN,
                        ci95: f64::NAN,
                    }
                } else {
                    e
                }
            },
            mean_jobs: per_station(&|x, s| x.stations[s].0 / x.length),
            station_throughput_per_s: per_station(&|x, s| x.stations[s].2 as f64 / x.length),
            utilization: per_station(&|x, s| x.stations[s].1 / x.length),
        });
    }
    out
}

/// The figure a recovery is judged on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryMetric {
    /// System throughput (interactions finished per second).
    #[default]
    Throughput,
    /// Goodput: interactions that succeed within their deadline per
    /// second (a model with clients, where a busy server may serve
    /// requests nobody waits for).
    Goodput,
}

impl RecoveryMetric {
    /// The metric's name as every output writes it.
    pub fn name(self) -> &'static str {
        match self {
            RecoveryMetric::Throughput => crate::names::THROUGHPUT_PER_S,
            RecoveryMetric::Goodput => crate::overload_names::GOODPUT_PER_S,
        }
    }

    /// The metric a recovery of `network` is judged on: goodput where a
    /// class has client behaviour, throughput otherwise.
    pub fn of_network(network: &crate::network::Network) -> RecoveryMetric {
        if network
            .overload()
            .is_some_and(|o| o.classes.iter().any(Option::is_some))
        {
            RecoveryMetric::Goodput
        } else {
            RecoveryMetric::Throughput
        }
    }

    /// The metric over one trace interval (goodput of a trace without
    /// clients: its throughput, every success being good).
    fn of(self, i: &TraceInterval) -> f64 {
        match self {
            RecoveryMetric::Throughput => i.throughput_per_s(),
            RecoveryMetric::Goodput => i.goodput_per_s().unwrap_or_else(|| i.throughput_per_s()),
        }
    }
}

/// Intervals in a row on one side of the level that make a collapse or a
/// recovery (or all the intervals left, when fewer): one noisy interval
/// is neither.
pub const HOLD: usize = 3;

/// The default fraction of the level before the trigger that counts as
/// recovered (and below which the system has collapsed).
pub const DEFAULT_RECOVERY_FRACTION: f64 = 0.9;

/// One replication's path through a trigger.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ReplicationRecovery {
    /// The metric over the measured time before the trigger.
    pub baseline: f64,
    /// Seconds from the trigger's start to the collapse, if it collapsed.
    pub collapse_s: Option<f64>,
    /// Seconds from the trigger's end to the recovery, if it collapsed and
    /// recovered within the run.
    pub recover_s: Option<f64>,
    /// Seconds from the trigger's end to the end of the replication (what
    /// a replication that did not recover was watched for).
    pub watched_s: f64,
}

/// A figure of a recovery: its estimate, or why it has none.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryFigure {
    /// Mean with its 95% interval (NaN half-width from one replication).
    Estimate(Estimate),
    /// No interval can be computed: the reason, and a lower bound of the
    /// figure where one is known.
    Refused {
        /// Why, in words.
        reason: String,
        /// The figure is at least this (seconds), when known.
        at_least_s: Option<f64>,
    },
}

/// How long a collapse lasts, over a run's replications.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Recovery {
    /// The metric judged.
    pub metric: RecoveryMetric,
    /// The fraction of the baseline that separates collapsed from
    /// recovered.
    pub fraction: f64,
    /// The trigger window.
    pub window: TriggerWindow,
    /// Replications read.
    pub replications: u32,
    /// Replications that collapsed.
    pub collapsed: u32,
    /// Collapsed replications that recovered within the run.
    pub recovered: u32,
    /// The fraction of collapsed replications that recovered, with its
    /// 95% (Wilson) interval as (low, high); `None` when none collapsed.
    pub recovered_fraction: Option<(f64, f64, f64)>,
    /// Seconds from the trigger's start to the collapse, over the
    /// replications that collapsed.
    pub time_to_collapse_s: RecoveryFigure,
    /// Seconds from the trigger's end to the recovery, over the
    /// replications that collapsed.
    pub time_to_recover_s: RecoveryFigure,
    /// The times are known to within this (half the widest interval).
    pub resolution_s: f64,
    /// Per replication.
    pub per_replication: Vec<ReplicationRecovery>,
}

/// The Wilson 95% interval of `k` successes in `n` trials: (estimate,
/// low, high); with no trials, no estimate (NaN) and the whole of [0, 1].
pub fn wilson(k: u32, n: u32) -> (f64, f64, f64) {
    if n == 0 {
        return (f64::NAN, 0.0, 1.0);
    }
    let (k, n) = (f64::from(k), f64::from(n));
    let z = 1.959_963_984_540_054;
    let p = k / n;
    let d = 1.0 + z * z / n;
    let c = (p + z * z / (2.0 * n)) / d;
    let h = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / d;
    (p, (c - h).max(0.0), (c + h).min(1.0))
}

/// One replication's recovery, or `None` when it has no measured time
/// before the trigger (no baseline).
fn replication(
    t: &Trace,
    w: TriggerWindow,
    metric: RecoveryMetric,
    fraction: f64,
    level: Option<f64>,
) -> Option<ReplicationRecovery> {
    let baseline = match level {
        Some(b) => b,
        None => {
            let before = sums(within(t, f64::NEG_INFINITY, w.start_s))?;
            match metric {
                RecoveryMetric::Throughput => before.completions as f64 / before.length,
                RecoveryMetric::Goodput => before.good as f64 / before.length,
            }
        }
    };
    let level = fraction * baseline;
    let mid = |i: &TraceInterval| 0.5 * (i.start_s + i.end_s);
    let ivs = &t.intervals;
    // The first interval from `from` on at or after `after` that starts
    // HOLD intervals in a row (or all the rest) on the side `below`.
    let first_run = |from: usize, after: f64, below: bool| {
        (from..ivs.len()).find(|&k| {
            mid(&ivs[k]) >= after
                && ivs[k..(k + HOLD).min(ivs.len())]
                    .iter()
                    .all(|i| (metric.of(i) < level) == below)
        })
    };
    let fell = first_run(0, w.start_s, true);
    let end = ivs.last().map_or(w.end_s, |i| i.end_s);
    let recover_s = fell
        .and_then(|k| first_run(k, w.end_s, false))
        .map(|k| mid(&ivs[k]) - w.end_s);
    Some(ReplicationRecovery {
        baseline,
        collapse_s: fell.map(|k| mid(&ivs[k]) - w.start_s),
        recover_s,
        watched_s: (end - w.end_s).max(0.0),
    })
}

/// How long the collapse after trigger `w` lasts in `traces` (one per
/// replication), judged on `metric` with `fraction` of its level before
/// the trigger; `Err` with the reason when it cannot be judged.
pub fn recovery(
    w: TriggerWindow,
    traces: &[&Trace],
    metric: RecoveryMetric,
    fraction: f64,
) -> Result<Recovery, String> {
    recovery_to(w, traces, metric, fraction, None)
}

/// As [`recovery`], judged against `level` (the same for every
/// replication) instead of each replication's own level before the
/// trigger when `level` is given: for a run that starts collapsed (its
/// initial state is the trigger) and a level known otherwise.
pub fn recovery_to(
    w: TriggerWindow,
    traces: &[&Trace],
    metric: RecoveryMetric,
    fraction: f64,
    level: Option<f64>,
) -> Result<Recovery, String> {
    let per: Vec<ReplicationRecovery> = traces
        .iter()
        .filter_map(|t| replication(t, w, metric, fraction, level))
        .collect();
    if per.is_empty() {
        return Err(format!(
            "no measured time before the trigger at {} s, so no level to recover to: start measuring before it (a shorter warm-up)",
            crate::network::fmt_num(w.start_s)
        ));
    }
    let resolution_s = traces
        .iter()
        .flat_map(|t| t.intervals.iter())
        .map(|i| 0.5 * i.length_s())
        .fold(0.0, f64::max);
    let collapsed: Vec<&ReplicationRecovery> =
        per.iter().filter(|r| r.collapse_s.is_some()).collect();
    let recovered = collapsed.iter().filter(|r| r.recover_s.is_some()).count() as u32;
    let n = collapsed.len() as u32;
    let none = |what: &str| RecoveryFigure::Refused {
        reason: format!("no replication collapsed, so there is no time {what}"),
        at_least_s: None,
    };
    let time_to_collapse_s = if collapsed.is_empty() {
        none("to collapse")
    } else {
        RecoveryFigure::Estimate(estimate(collapsed.iter().filter_map(|r| r.collapse_s)))
    };
    let time_to_recover_s = if collapsed.is_empty() {
        none("to recover")
    } else if recovered == n {
        RecoveryFigure::Estimate(estimate(collapsed.iter().filter_map(|r| r.recover_s)))
    } else {
        // Each replication that did not recover would have recovered after
        // the end of its run: the mean is at least the mean of the times
        // known (those, or the time watched).
        let at_least = collapsed
            .iter()
            .map(|r| r.recover_s.unwrap_or(r.watched_s))
            .sum::<f64>()
            / f64::from(n);
        let reason = if recovered == 0 {
            format!("no replication of the {n} that collapsed recovered within the run")
        } else {
            format!(
                "{} of the {n} replications that collapsed did not recover within the run, so their times are unknown",
                n - recovered
            )
        };
        RecoveryFigure::Refused {
            reason: format!("{reason}: run longer to see more recoveries"),
            at_least_s: Some(at_least),
        }
    };
    Ok(Recovery {
        metric,
        fraction,
        window: w,
        replications: per.len() as u32,
        collapsed: n,
        recovered,
        recovered_fraction: (n > 0).then(|| wilson(recovered, n)),
        time_to_collapse_s,
        time_to_recover_s,
        resolution_s,
        per_replication: per,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_of_known_cases() {
        // 0 of 10: the upper end is z²/(n + z²) = 0.2775.
        let (p, lo, hi) = wilson(0, 10);
        assert_eq!((p, lo), (0.0, 0.0));
        assert!((hi - 0.277_533).abs() < 1e-5, "{hi}");
        // 5 of 10: symmetric about 1/2.
        let (_, lo, hi) = wilson(5, 10);
        assert!((lo + hi - 1.0).abs() < 1e-12);
        assert!((lo - 0.236_593).abs() < 1e-5, "{lo}");
    }
}
