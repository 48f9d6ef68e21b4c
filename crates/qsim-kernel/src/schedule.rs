//! Load that changes during a run: a closed class's population, or an open
//! class's arrival rate, following steps (and, for rates, linear ramps);
//! and capacity that changes during a run: a queue station's servers or
//! speed following steps ([`StationSchedule`]: an outage, a failover, a
//! fail-slow disk).
//!
//! Step times are absolute simulated seconds from the start of a
//! replication (warm-up included). A population step up adds jobs that
//! start thinking (or start an interaction at once when the class has no
//! think time); a step down by `k` makes the next `k` jobs of the class
//! that finish an interaction leave instead of thinking again. An open
//! class with a schedule has Poisson arrivals whose rate is the piecewise
//! linear function of time the steps define; its arrival times are drawn
//! exactly by inverting the integrated rate (no thinning, no
//! discretization).

use crate::dist::MAX_CLOCK_S;
use crate::network::{ClassId, ClassSpec, Network, StationId, StationSpec, Workload, fmt_num};
use serde::Serialize;

/// The schedule of one class.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassSchedule {
    /// The class whose load changes.
    pub class: ClassId,
    /// The changes, in time order.
    pub steps: Vec<Step>,
}

/// One change of load.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Step {
    /// When the change starts (absolute simulated seconds).
    pub at_s: f64,
    /// What changes.
    pub change: Change,
}

/// What a [`Step`] changes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// A closed class's population becomes this (at least 1).
    Population(u32),
    /// An open class's arrival rate becomes this (per second, > 0).
    RatePerS(f64),
    /// An open class's arrival rate moves linearly from the rate in force
    /// at the step to `rate_per_s`, reached at `until_s`, and stays there.
    Ramp {
        /// The rate at the end of the ramp (per second, > 0).
        rate_per_s: f64,
        /// When the ramp ends (absolute seconds, after the step's time).
        until_s: f64,
    },
}

/// A rule a schedule breaks: the class, the step (if one) and the key.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduleError {
    /// Index of the schedule in the list given to [`check`].
    pub schedule: usize,
    /// The step, when the problem is one step's.
    pub step: Option<usize>,
    /// The key of the step (`at`, `population`, `rate_per_s`, `until`), or
    /// `schedule` for the whole list.
    pub key: &'static str,
    /// What is wrong, with what was found and what was expected.
    pub message: String,
}

impl std::fmt::Display for ScheduleError {
    /// `schedule[I].steps[K].KEY: MESSAGE` (without the step for a problem
    /// of the whole list), `I` being the index in the list given to
    /// [`check`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "schedule[{}]", self.schedule)?;
        if let Some(step) = self.step {
            write!(f, ".steps[{step}]")?;
        }
        write!(f, ".{}: {}", self.key, self.message)
    }
}

impl std::error::Error for ScheduleError {}

/// Checks `schedule` against `network`: every rule at once.
pub fn check(network: &Network, schedule: &[ClassSchedule]) -> Vec<ScheduleError> {
    let spec = network.spec();
    let (items, name) = (&spec.classes, |c: &ClassSpec| c.name.clone());
    each_schedule(
        schedule,
        items,
        "class",
        |cs| cs.class,
        name,
        |cs, class, err| {
            let open = match &class.workload {
                Workload::Closed { .. } => false,
                Workload::Open { interarrival } => {
                    if !interarrival.is_exponential() {
                        err(
                        None,
                        "schedule",
                        "an arrival-rate schedule needs Poisson arrivals (rate_per_s, or an exponential arrival); this class's arrival is not exponential".into(),
                    );
                    }
                    true
                }
            };
            let mut free_from = 0.0f64;
            for (k, step) in cs.steps.iter().enumerate() {
                let at = step.at_s;
                if !step_time(err, k, at, free_from, " (a ramp's until included)") {
                    continue;
                }
                free_from = free_from.max(at);
                let rate_ok = |r: f64| r.is_finite() && r > 0.0;
                match step.change {
                    Change::Population(p) => {
                        if open {
                            err(
                            Some(k),
                            "population",
                            "`population` is for closed workloads; an open workload's schedule sets rate_per_s".into(),
                        );
                        } else if p == 0 {
                            err(
                                Some(k),
                                "population",
                                "expected a number of jobs >= 1, found 0".into(),
                            );
                        }
                    }
                    Change::RatePerS(r) | Change::Ramp { rate_per_s: r, .. } if !open => {
                        let _ = r;
                        err(
                        Some(k),
                        "rate_per_s",
                        "`rate_per_s` is for open workloads; a closed workload's schedule sets population".into(),
                    );
                    }
                    Change::RatePerS(r) => {
                        if !rate_ok(r) {
                            err(
                                Some(k),
                                "rate_per_s",
                                format!("expected a positive arrival rate, found {}", fmt_num(r)),
                            );
                        }
                    }
                    Change::Ramp {
                        rate_per_s,
                        until_s,
                    } => {
                        if !rate_ok(rate_per_s) {
                            err(
                                Some(k),
                                "rate_per_s",
                                format!(
                                    "expected a positive arrival rate, found {}",
                                    fmt_num(rate_per_s)
                                ),
                            );
                        }
                        if !(until_s.is_finite() && until_s > at && until_s <= MAX_CLOCK_S) {
                            err(
                                Some(k),
                                "until",
                                format!(
                                    "expected the end of the ramp after its start ({} s) and at most 1e12 s, found {}",
                                    fmt_num(at),
                                    fmt_num(until_s)
                                ),
                            );
                        } else {
                            free_from = until_s;
                        }
                    }
                }
            }
        },
    )
}

/// The largest population a closed class reaches (its own and every
/// scheduled one), for memory estimates.
pub fn peak_population(population: u32, class: ClassId, schedule: &[ClassSchedule]) -> u32 {
    schedule
        .iter()
        .filter(|cs| cs.class == class)
        .flat_map(|cs| cs.steps.iter())
        .filter_map(|s| match s.change {
            Change::Population(p) => Some(p),
            _ => None,
        })
        .fold(population, u32::max)
}

/// The capacity schedule of one queue station: its servers or its speed
/// from given times on (`[[stations.NAME.schedule]]` in a model file).
///
/// A step down in servers lets the services in progress finish; no
/// waiting job starts until fewer than the new number are busy. A step
/// up starts waiting jobs at once. A speed-up `f` divides the service
/// times drawn from the step on by `f` (`f < 1` is a slow-down); a
/// service in progress keeps the time it drew. Utilization stays relative
/// to the station's own `servers`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StationSchedule {
    /// The station whose capacity changes.
    pub station: StationId,
    /// The changes, in time order.
    pub steps: Vec<CapacityStep>,
}

/// One change of a station's capacity: servers, speed, or both.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CapacityStep {
    /// When the change happens (absolute simulated seconds).
    pub at_s: f64,
    /// The station's servers from `at_s` on (0: an outage).
    pub servers: Option<u32>,
    /// The station's speed from `at_s` on, as a factor of its own (service
    /// times divided by it; 1 is the model's speed).
    pub speedup: Option<f64>,
}

/// Checks the capacity schedules `schedule` against `network`: every rule
/// at once (errors name the schedule's index in `schedule`).
pub fn check_stations(network: &Network, schedule: &[StationSchedule]) -> Vec<ScheduleError> {
    let spec = network.spec();
    let (items, name) = (&spec.stations, |st: &StationSpec| st.name.clone());
    each_schedule(
        schedule,
        items,
        "station",
        |ss| ss.station,
        name,
        |ss, st, err| {
            let queue = st
                .kind
                .as_queue()
                .is_some_and(|(_, d)| d.serves_to_completion());
            if !queue || st.speed.is_some() {
                err(
                    None,
                    "schedule",
                    format!(
                        "a capacity schedule applies to a queue station (fcfs, lcfs or priority) without a speed curve; {} is not one",
                        st.name
                    ),
                );
            }
            let mut last = 0.0f64;
            for (k, step) in ss.steps.iter().enumerate() {
                let at = step.at_s;
                if !step_time(err, k, at, last, "") {
                    continue;
                }
                last = last.max(at);
                if step.servers.is_none() && step.speedup.is_none() {
                    err(
                        Some(k),
                        "at",
                        "a step changes something: give servers = N, speedup = F or both".into(),
                    );
                }
                if let Some(f) = step.speedup
                    && !(f.is_finite() && f > 0.0)
                {
                    err(
                        Some(k),
                        "speedup",
                        format!(
                            "expected a positive factor of the station's speed (0.2: five times slower), found {}",
                            fmt_num(f)
                        ),
                    );
                }
            }
        },
    )
}

/// Where an error of a schedule goes: the step (if any), the key, the
/// message.
type Sink<'a> = dyn FnMut(Option<usize>, &'static str, String) + 'a;

/// The rules every list of schedules shares: each schedule names an
/// existing `what` (a class or a station) by index, at most one schedule
/// per item; `rest` checks the rest of one schedule with its item. Every
/// error is kept, with the schedule's index.
fn each_schedule<S, T>(
    schedule: &[S],
    items: &[T],
    what: &str,
    index: impl Fn(&S) -> usize,
    name: impl Fn(&T) -> String,
    mut rest: impl FnMut(&S, &T, &mut Sink<'_>),
) -> Vec<ScheduleError> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, sch) in schedule.iter().enumerate() {
        let mut err = |step: Option<usize>, key: &'static str, message: String| {
            out.push(ScheduleError {
                schedule: i,
                step,
                key,
                message,
            })
        };
        let Some(item) = items.get(index(sch)) else {
            err(
                None,
                "schedule",
                format!("no {what} with index {}", index(sch)),
            );
            continue;
        };
        if !seen.insert(index(sch)) {
            err(
                None,
                "schedule",
                format!("{what} {} has two schedules; give it one list", name(item)),
            );
        }
        rest(sch, item, &mut err);
    }
    out
}

/// Checks step `k`'s time `at`: false (with its error) when it is not a
/// clock reading; an error too when it comes before `after`, the time the
/// steps before it reach (`note` says what that time counts).
fn step_time(err: &mut Sink<'_>, k: usize, at: f64, after: f64, note: &str) -> bool {
    if !(at.is_finite() && (0.0..=MAX_CLOCK_S).contains(&at)) {
        err(
            Some(k),
            "at",
            format!(
                "expected a time in seconds between 0 and 1e12, found {}",
                fmt_num(at)
            ),
        );
        return false;
    }
    if at < after {
        err(
            Some(k),
            "at",
            format!(
                "steps must be in time order{note}: this step at {} s comes before {} s",
                fmt_num(at),
                fmt_num(after)
            ),
        );
    }
    true
}

/// A piece of a piecewise linear arrival rate: `rate(t) = rate0 + slope *
/// (t - start)` on `[start, end)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Segment {
    pub start: f64,
    pub end: f64,
    pub rate0: f64,
    pub slope: f64,
}

/// The arrival rate of an open class under its steps, from `base` (the
/// workload's own rate) at time 0; the last segment never ends.
pub(crate) fn rate_segments(base: f64, steps: &[Step]) -> Vec<Segment> {
    let mut segs = Vec::with_capacity(steps.len() * 2 + 1);
    let (mut t, mut rate) = (0.0f64, base);
    let flat = |segs: &mut Vec<Segment>, from: f64, to: f64, rate: f64| {
        if to > from {
            segs.push(Segment {
                start: from,
                end: to,
                rate0: rate,
                slope: 0.0,
            });
        }
    };
    for s in steps {
        match s.change {
            Change::RatePerS(r) => {
                flat(&mut segs, t, s.at_s, rate);
                t = t.max(s.at_s);
                rate = r;
            }
            Change::Ramp {
                rate_per_s,
                until_s,
            } => {
                flat(&mut segs, t, s.at_s, rate);
                segs.push(Segment {
                    start: s.at_s,
                    end: until_s,
                    rate0: rate,
                    slope: (rate_per_s - rate) / (until_s - s.at_s),
                });
                t = until_s;
                rate = rate_per_s;
            }
            Change::Population(_) => {}
        }
    }
    segs.push(Segment {
        start: t,
        end: f64::INFINITY,
        rate0: rate,
        slope: 0.0,
    });
    segs
}

/// The time at which the integrated rate, from `now`, reaches `e` (an
/// Exp(1) draw): the next arrival of a Poisson process with the rate of
/// `segs`. `cursor` is the segment holding `now` (moved forward).
pub(crate) fn next_arrival(segs: &[Segment], cursor: &mut usize, now: f64, mut e: f64) -> f64 {
    let mut s = now;
    loop {
        let seg = segs[*cursor];
        if s >= seg.end && *cursor + 1 < segs.len() {
            *cursor += 1;
            continue;
        }
        let rate = (seg.rate0 + seg.slope * (s.max(seg.start) - seg.start)).max(0.0);
        s = s.max(seg.start);
        let len = seg.end - s;
        // Integral of the rate over [s, s + x]: rate·x + slope·x²/2.
        let whole = if len.is_finite() {
            rate * len + 0.5 * seg.slope * len * len
        } else {
            f64::INFINITY
        };
        if whole >= e {
            let x = if seg.slope == 0.0 {
                e / rate
            } else {
                // The root of slope/2·x² + rate·x − e = 0 in [0, len], in
                // the form that does not cancel when slope is small.
                let disc = (rate * rate + 2.0 * seg.slope * e).max(0.0);
                2.0 * e / (rate + disc.sqrt())
            };
            return (s + x.min(len)).min(f64::MAX);
        }
        e -= whole;
        s = seg.end;
        *cursor += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inversion_of_a_ramp_and_of_steps() {
        // Rate 2 until 10, then a ramp to 4 at 20, then 4.
        let steps = [Step {
            at_s: 10.0,
            change: Change::Ramp {
                rate_per_s: 4.0,
                until_s: 20.0,
            },
        }];
        let segs = rate_segments(2.0, &steps);
        assert_eq!(segs.len(), 3);
        let mut c = 0;
        // Integral over [0, 10] is 20: e = 20 lands exactly at 10.
        assert!((next_arrival(&segs, &mut c, 0.0, 20.0) - 10.0).abs() < 1e-12);
        // Integral over [10, 20] is 30: from 10, e = 30 lands at 20.
        let mut c = 0;
        assert!((next_arrival(&segs, &mut c, 10.0, 30.0) - 20.0).abs() < 1e-9);
        // Half-way into the ramp: rate 2 + 0.2x, integral 2x + 0.1x² = 11 at x = 5.
        let mut c = 0;
        assert!((next_arrival(&segs, &mut c, 10.0, 12.5) - 15.0).abs() < 1e-9);
        // Past the ramp: rate 4.
        let mut c = 0;
        assert!((next_arrival(&segs, &mut c, 25.0, 2.0) - 25.5).abs() < 1e-12);
        assert_eq!(c, 2);
        // A falling step: rate 2 then 0.5 from 1.
        let steps = [Step {
            at_s: 1.0,
            change: Change::RatePerS(0.5),
        }];
        let segs = rate_segments(2.0, &steps);
        let mut c = 0;
        assert!((next_arrival(&segs, &mut c, 0.0, 3.0) - 3.0).abs() < 1e-12);
    }
}
