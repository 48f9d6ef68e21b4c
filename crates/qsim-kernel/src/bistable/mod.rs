//! One verdict on a model's operating points: [`decide`].
//!
//! A state-dependent mechanism can give a network more than one stable
//! state, fast and collapsed, and a run stays in the one it starts in: a
//! speed curve that falls as jobs crowd a station, and a latch whose NUMA
//! hand-offs, spinning or wake-all waiting cost more the more threads wait.
//! Where the spec has such a mechanism ([`collapse_candidate`]), [`decide`]
//! runs the model again from the other end (all jobs at the collapsing
//! station when it started with all jobs thinking, all thinking when it
//! started at a station) and sorts the replications of both ends into
//! modes by their system throughput ([`split`]): two modes, from the two
//! ends or within one end's replications (a mixed run), make the model
//! bistable, and each mode carries its own figures and the start states
//! its replications came from.
//!
//! The other end runs replication by replication and stops as soon as its
//! answer is decided (the sequential rule of [`decide`], in
//! docs/glossary.md under "bistable"), so a model costs little more than
//! one run where the other end clearly stays apart or clearly agrees.
//!
//! Open workloads: a class whose clients time out and retry can be held
//! in overload by its own retries (every timed-out request comes back),
//! so the other end of an open class's empty start is a backlog at its
//! busiest station (`backlog_start`: the station full when it has a capacity,
//! else enough requests that the last one waits twice the mean timeout),
//! placed at time 0 as first attempts (`InitialState::Placed`), and the
//! other end of that backlog is the empty start. A closed class with
//! retries is checked like the other mechanisms, from all its jobs at that
//! station.

use crate::config::RunConfig;
use crate::control::Control;
use crate::error::RunError;
use crate::network::Network;
use crate::results::{Estimate, ReplicationResult, RunResults, estimate};
use serde::Serialize;
use std::sync::Arc;

mod ends;

use ends::{BACKLOG, untried_starts};
pub use ends::{
    MAX_BACKLOG, RetryCandidate, collapse_candidate, collapsing_station, not_applicable, other_end,
    retry_candidate, start_label,
};

/// A speed that drops below this share of its peak at full population
/// makes a station a collapse candidate.
const COLLAPSE_RATIO: f64 = 0.95;

/// Two groups of replications are two modes when the slower group's
/// fastest replication is below this share of the faster group's slowest.
pub const SPLIT_RATIO: f64 = 0.8;

/// ... and their gap is wider than this many pooled within-group standard
/// deviations.
pub const SPLIT_SDS: f64 = 6.0;

/// What state-dependent mechanism can make a model collapse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mechanism {
    /// A speed curve that falls as jobs crowd the station.
    FallingSpeed,
    /// A latch with NUMA hand-offs.
    Numa,
    /// A latch with spin-waiting.
    Spin,
    /// A latch whose release wakes every sleeper.
    WakeAll,
    /// Clients that time out and retry: each timed-out request comes back
    /// (and, unless cancelled, is still served, wasted).
    Retries,
}

impl Mechanism {
    /// The mechanism for people.
    pub fn describe(self) -> &'static str {
        match self {
            Mechanism::FallingSpeed => "falling speed curve",
            Mechanism::Numa => "NUMA hand-offs",
            Mechanism::Spin => "spin-waiting",
            Mechanism::WakeAll => "wake-all",
            Mechanism::Retries => "client timeouts and retries",
        }
    }
}

/// The replications of one start state that fell into a mode.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModeShare {
    /// The start state, as `qsim run` names it ("all jobs thinking").
    pub start: String,
    /// Indices of its replications in this mode.
    pub replications: Vec<u32>,
    /// Replications of this start state that ran.
    pub of: u32,
}

/// One operating point seen by the runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mode {
    /// System throughput over the replications in this mode.
    pub throughput_per_s: Estimate,
    /// Mean jobs at the collapsing station over them.
    pub jobs_at_station: Estimate,
    /// Which start states' replications are in it.
    pub starts: Vec<ModeShare>,
    /// The mean jobs at the collapsing station in the first and the second
    /// half of the measured window, when they drift apart (the steady-state
    /// check of a run, on this mode's replications): the mode is not a
    /// steady state but a queue that grows (or drains) through the run,
    /// and its figures hold only for this run's length.
    pub not_steady: Option<(f64, f64)>,
}

impl Mode {
    /// "1987.1 ± 12.3 /s (all jobs thinking: 5 of 5 replications)".
    pub fn describe(&self) -> String {
        let shares = self
            .starts
            .iter()
            .filter(|s| !s.replications.is_empty())
            .map(|s| format!("{}: {} of {}", s.start, s.replications.len(), s.of))
            .collect::<Vec<_>>()
            .join(", ");
        let drift = match self.not_steady {
            Some((a, b)) => format!(
                "; not steady: the jobs at the station go from {} in the first half of the run to {} in the second, so this state's figures hold only for this run's length",
                crate::number::sig(a, 4),
                crate::number::sig(b, 4)
            ),
            None => String::new(),
        };
        format!(
            "{} /s with {:.1} jobs at the station ({shares} replications{drift})",
            fmt_est(self.throughput_per_s),
            self.jobs_at_station.mean
        )
    }
}

fn fmt_est(e: Estimate) -> String {
    if e.ci95.is_finite() {
        crate::number::mean_ci(e.mean, e.ci95)
    } else {
        format!(
            "{} (one replication, no interval)",
            crate::number::sig(e.mean, 4)
        )
    }
}

/// The verdict of [`decide`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// The collapsing station.
    pub station: String,
    /// What can make it collapse.
    pub mechanism: Mechanism,
    /// The operating points the runs found, slowest first: one, or two
    /// when the model is bistable.
    pub modes: Vec<Mode>,
    /// More than one operating point.
    pub bistable: bool,
    /// The run as given mixes modes: its replications are in more than one
    /// (its averages are of no state).
    pub mixed: bool,
    /// System throughput of the run as given.
    pub given: Estimate,
    /// System throughput of the other end over the replications it ran.
    pub other_end: Estimate,
    /// The start state of the run as given and of the other end.
    pub starts: [String; 2],
    /// Replications the other end ran before its answer was decided.
    pub other_end_replications: u32,
    /// Replications the full check would have run.
    pub full_replications: u32,
    /// Other stations a mechanism could collapse, not tried as starts:
    /// all jobs at one of them may be another operating point.
    pub untried_starts: Vec<String>,
    /// The slowest and fastest throughput of the other end's replications
    /// when they spread wider than one state: some left the state they
    /// started in within the run, so it lasts about as long as a run
    /// (`qsim rare` estimates its mean escape time).
    pub other_end_leaves: Option<(f64, f64)>,
    /// The same for the run as given: the range of its replications'
    /// throughputs when they spread wider than one state without splitting
    /// into modes (each left its start state at its own time).
    pub run_leaves: Option<(f64, f64)>,
}

impl Verdict {
    /// One line for people: the verdict with every mode's figures.
    pub fn describe(&self) -> String {
        let modes = self
            .modes
            .iter()
            .enumerate()
            .map(|(i, m)| format!("mode {} of {}: {}", i + 1, self.modes.len(), m.describe()))
            .collect::<Vec<_>>()
            .join("; ");
        let ran = format!(
            "the other end ({}) ran {} of {} replications before the answer was decided",
            self.starts[1], self.other_end_replications, self.full_replications
        );
        if self.bistable {
            let mixed = if self.mixed {
                format!(
                    "; the run from {} itself mixes the modes, so its averaged figures are of neither state",
                    self.starts[0]
                )
            } else {
                String::new()
            };
            // An open workload's backlog start is the check's own: there
            // is no key to choose it.
            let choose = if self.starts.iter().any(|s| s.starts_with(BACKLOG)) {
                ""
            } else {
                "set simulation.initial to choose, or "
            };
            format!(
                "the model is bistable ({} at {}): {modes}{mixed}; the network stays in the state it starts in (metastable collapse), so no single figure is the answer ({choose}--no-bistability-check to skip this check; {ran}){}{}",
                self.mechanism.describe(),
                self.station,
                self.leaves_note(),
                self.untried_note()
            )
        } else {
            format!(
                "bistability check passed ({} at {}): {} gives {} /s, {} gives {} /s, one operating point ({ran}){}{}",
                self.mechanism.describe(),
                self.station,
                self.starts[0],
                fmt_est(self.given),
                self.starts[1],
                fmt_est(self.other_end),
                self.leaves_note(),
                self.untried_note()
            )
        }
    }

    /// How long the other end's state lasts, when its replications show it:
    /// "" when they form one group.
    fn leaves_note(&self) -> String {
        let note = |start: &str, leaves: Option<(f64, f64)>| match leaves {
            Some((lo, hi)) => format!(
                "; the replications from {start} range from {} to {} /s: some leave that state within the run, so it lasts about as long as a run (its mean escape time: qsim rare, docs/rare-events.md)",
                crate::number::sig(lo, 4),
                crate::number::sig(hi, 4)
            ),
            None => String::new(),
        };
        let run = if self.mixed { None } else { self.run_leaves };
        note(&self.starts[0], run) + &note(&self.starts[1], self.other_end_leaves)
    }

    /// What the check did not try: "" when it tried every station a
    /// mechanism could collapse.
    fn untried_note(&self) -> String {
        match self.untried_starts.as_slice() {
            [] => String::new(),
            names => {
                // A replicated model (spin_fanout's 32 instances) has a
                // candidate per replica: name a few and count the rest.
                const NAMED: usize = 3;
                let mut list = names[..names.len().min(NAMED)].join(", all jobs at ");
                if names.len() > NAMED {
                    list.push_str(&format!(" and {} more stations", names.len() - NAMED));
                }
                format!(
                    "; not tried as starts: all jobs at {list}, where a mechanism could hold a collapse of its own, so there may be more operating points than these (set simulation.initial = {{ station = \"{}\" }} to run one)",
                    names[0]
                )
            }
        }
    }

    /// The mode most of the run's own replications are in.
    fn given_mode(&self) -> Option<usize> {
        let count = |m: &Mode| {
            m.starts
                .iter()
                .filter(|s| s.start == self.starts[0])
                .map(|s| s.replications.len())
                .sum::<usize>()
        };
        (0..self.modes.len()).max_by_key(|&i| count(&self.modes[i]))
    }

    /// The system throughput of the other operating point: the mode the
    /// run as given is not (mostly) in; the other end's throughput when
    /// there is one mode.
    pub fn other_mode_throughput(&self) -> Estimate {
        match (self.bistable, self.given_mode()) {
            (true, Some(g)) if self.modes.len() > 1 => self
                .modes
                .iter()
                .enumerate()
                .find(|&(i, _)| i != g)
                .map_or(self.other_end, |(_, m)| m.throughput_per_s),
            _ => self.other_end,
        }
    }

    /// Which state the figures of the run as given belong to: "all jobs
    /// thinking (mode 2 of 2)", or a sentence saying they mix modes.
    pub fn state_of_given(&self) -> String {
        if self.mixed {
            return format!(
                "{} (replications in {} modes: the averages are of no state)",
                self.starts[0],
                self.modes.len()
            );
        }
        match self.given_mode() {
            Some(i) if self.modes.len() > 1 => {
                format!(
                    "{} (mode {} of {})",
                    self.starts[0],
                    i + 1,
                    self.modes.len()
                )
            }
            _ => self.starts[0].clone(),
        }
    }
}

/// The mixed-mode detector: where sorted values `xs` fall into two modes,
/// the threshold between them (values above it are the upper mode).
///
/// The split is at the largest relative gap between neighbours in sorted
/// order; it is two modes when the lower group's largest value is below
/// [`SPLIT_RATIO`] times the upper group's smallest and the gap is wider
/// than [`SPLIT_SDS`] pooled within-group standard deviations (with no
/// spread to pool, as with two values, the ratio alone decides).
pub fn split(xs: &[f64]) -> Option<f64> {
    let mut s: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if s.len() < 2 {
        return None;
    }
    s.sort_by(f64::total_cmp);
    let (i, _) = (1..s.len())
        .map(|i| (i, s[i - 1].max(0.0) / s[i].max(f64::MIN_POSITIVE)))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    let (lo, hi) = (&s[..i], &s[i..]);
    if lo[lo.len() - 1] >= SPLIT_RATIO * hi[0] {
        return None;
    }
    let ss = |g: &[f64]| {
        let m = g.iter().sum::<f64>() / g.len() as f64;
        g.iter().map(|x| (x - m) * (x - m)).sum::<f64>()
    };
    let df = s.len() - 2;
    if df > 0 {
        let sd = ((ss(lo) + ss(hi)) / df as f64).sqrt();
        if hi[0] - lo[lo.len() - 1] <= SPLIT_SDS * sd {
            return None;
        }
    }
    Some(0.5 * (lo[lo.len() - 1] + hi[0]))
}

/// One replication of one end.
struct Rep<'a> {
    end: usize,
    r: &'a ReplicationResult,
}

/// How close the other end's replications must be to each other (their
/// standard deviation, relative to the larger of the two ends' means)
/// before their agreement with the run as given can decide "one operating
/// point" early: two replications whose throughputs differ by half (one
/// that left the collapsed state within the run, one that did not) give a
/// mean whose wide interval "agrees" with anything.
pub const AGREE_WIDTH: f64 = 0.1;

/// Whether a replication's throughput `x` lies apart from every
/// replication of one tight state `group`: beyond [`SPLIT_RATIO`] of its
/// slowest (or fastest) and more than [`SPLIT_SDS`] of the group's own
/// standard deviations away. The group's spread measures one state's
/// noise, so a replication of the other end that spent much of its run in
/// another state is seen even when the other end's replications are
/// themselves spread (some left that state within the run, some did not)
/// and so pool to a deviation too wide for [`split`].
fn apart_from(group: &[f64], x: f64) -> bool {
    if group.len() < 2 || split(group).is_some() {
        return false;
    }
    let n = group.len() as f64;
    let m = group.iter().sum::<f64>() / n;
    let sd = (group.iter().map(|g| (g - m) * (g - m)).sum::<f64>() / (n - 1.0)).sqrt();
    let lo = group.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = group.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (x < SPLIT_RATIO * lo && lo - x > SPLIT_SDS * sd)
        || (SPLIT_RATIO * x > hi && x - hi > SPLIT_SDS * sd)
}

/// The sequential rule's answer on a prefix of the other end, if decided:
/// `Some(true)` two modes, `Some(false)` one.
fn decided(given: &[ReplicationResult], other: &[ReplicationResult], full: bool) -> Option<bool> {
    let tp = |rs: &[ReplicationResult]| -> Vec<f64> {
        rs.iter().map(|r| r.system.throughput_per_s).collect()
    };
    let (g, o) = (tp(given), tp(other));
    let xs: Vec<f64> = g.iter().chain(&o).copied().collect();
    // Apart either way: a replication of the other end outside the run's
    // tight group, or, once the other end has all its replications (a
    // group of two measures no noise), one of the run outside the other
    // end's (a run whose replications left the fast state at different
    // times is spread, while the collapsed end sits still).
    if split(&xs).is_some()
        || o.iter().any(|&x| apart_from(&g, x))
        || (full && g.iter().any(|&x| apart_from(&o, x)))
    {
        return Some(true);
    }
    if other.len() < 2 && !full {
        return None;
    }
    if full {
        return Some(false);
    }
    // One mode as soon as the other end's replications (two at least)
    // agree with the run as given within their intervals, and with each
    // other closely enough to mean it.
    let a = estimate(g.iter().copied());
    let b = estimate(o.iter().copied());
    let apart = (a.mean - b.mean).abs() > a.ci95 + b.ci95;
    let sd = |xs: &[f64], m: f64| {
        let n = xs.len() as f64;
        if n < 2.0 {
            return 0.0;
        }
        (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0)).sqrt()
    };
    // Both ends tight: a wide interval on either side "agrees" with
    // anything.
    let width = AGREE_WIDTH * a.mean.abs().max(b.mean.abs());
    let precise = sd(&o, b.mean) <= width && sd(&g, a.mean) <= width;
    (!apart && precise).then_some(false)
}

/// The other end's replications when they spread over more than one
/// state's noise: some left their start state within the run and some did
/// not (or left it at very different times), so the state they started in
/// lasts about as long as a run. `(slowest, fastest)` throughput, or
/// `None` when they form one tight group.
fn leaves_within_run(other: &[ReplicationResult]) -> Option<(f64, f64)> {
    let o: Vec<f64> = other.iter().map(|r| r.system.throughput_per_s).collect();
    let lo = o.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = o.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (o.len() >= 2 && lo.is_finite() && lo < SPLIT_RATIO * hi).then_some((lo, hi))
}

/// Decides whether `network` under `config` has more than one operating
/// point, given `first`, its run as given; `Ok(None)` when the check does
/// not apply (see [`not_applicable`]).
///
/// The sequential rule: the other end runs replications 0, 1, … in order
/// (in rounds as wide as the run's threads; the answer depends only on the
/// replications in index order, never on the thread count), and after each
/// one the pooled throughputs of the run as given and of the other end so
/// far are tested, from two replications of the other end on (or all, when
/// the run has fewer): two modes by [`split`], or a replication of the
/// other end apart from the run's own tight group (`apart_from`), decide
/// "bistable"; a mean of the
/// other end within the sum of the two 95% half-widths, with the standard
/// deviation of each end's replications at most [`AGREE_WIDTH`] of the
/// larger mean, decides "one operating point". Undecided
/// after as many replications as the run as given had, the full check
/// decides: [`split`] on all of them, or a replication of the run apart
/// from the other end's tight group. (Two means a little apart without two
/// modes are a start's transient, not a second state: models/pgo.toml
/// started at its latch leaves the shallow basin there within a second.)
pub fn decide(
    network: &Network,
    config: &RunConfig,
    first: &RunResults,
    control: Option<&Arc<Control>>,
) -> Result<Option<Verdict>, RunError> {
    decide_with(network, config, first, control, true)
}

/// [`decide`] with the sequential rule (`early`) or the full check (every
/// replication of the other end): the two must agree (tests/verdict.rs).
pub fn decide_with(
    network: &Network,
    config: &RunConfig,
    first: &RunResults,
    control: Option<&Arc<Control>>,
    early: bool,
) -> Result<Option<Verdict>, RunError> {
    let Some((other, station)) = other_end(network) else {
        return Ok(None);
    };
    let (_, mechanism) = collapse_candidate(network).expect("other_end found one");
    let given = &first.replication_results;
    let total = given.len().max(1) as u32;
    let width = match config.threads {
        0 => rayon::current_num_threads(),
        t => t,
    }
    .max(1) as u32;
    let config = RunConfig {
        trace: None,
        ..config.clone()
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.threads)
        .build()
        .map_err(|e| RunError::Config(format!("cannot start {} threads: {e}", config.threads)))?;
    let mut reps: Vec<ReplicationResult> = Vec::new();
    let mut used = None;
    'rounds: while (reps.len() as u32) < total {
        let from = reps.len() as u32;
        let to = if early {
            (from + width).min(total)
        } else {
            total
        };
        let round: Vec<ReplicationResult> = pool.install(|| {
            use rayon::prelude::*;
            (from..to)
                .into_par_iter()
                .map(|i| crate::run::replication(&other, &config, i, control))
                .collect::<Result<Vec<_>, RunError>>()
        })?;
        reps.extend(round);
        if early {
            // At least two replications of the other end (one round on two
            // threads), so that each mode it shows has an interval.
            for k in (from as usize + 1).max(2.min(total as usize))..=reps.len() {
                if decided(given, &reps[..k], false).is_some() {
                    used = Some(k);
                    break 'rounds;
                }
            }
        }
    }
    let k = used.unwrap_or(reps.len());
    reps.truncate(k);
    let bistable = decided(given, &reps, used.is_none()).unwrap_or(false);
    let all: Vec<Rep> = given
        .iter()
        .map(|r| Rep { end: 0, r })
        .chain(reps.iter().map(|r| Rep { end: 1, r }))
        .collect();
    let xs: Vec<f64> = all.iter().map(|x| x.r.system.throughput_per_s).collect();
    let starts = [start_label(network), start_label(&other)];
    let counts = [given.len() as u32, reps.len() as u32];
    let mode_of = |members: Vec<&Rep>| {
        let x = estimate(members.iter().map(|m| m.r.system.throughput_per_s));
        let j = estimate(members.iter().map(|m| m.r.stations[station].mean_jobs));
        let reps: Vec<ReplicationResult> = members.iter().map(|m| m.r.clone()).collect();
        let jobs = |r: &ReplicationResult| r.stations.get(station).map_or(0.0, |s| s.mean_jobs);
        let time = |r: &ReplicationResult| r.measured_time_s;
        let fig = crate::steady::Figure {
            value: &jobs,
            weight: &time,
        };
        Mode {
            throughput_per_s: x,
            jobs_at_station: j,
            not_steady: crate::steady::drift(&fig, &reps),
            starts: (0..2)
                .map(|e| ModeShare {
                    start: starts[e].clone(),
                    replications: members
                        .iter()
                        .filter(|m| m.end == e)
                        .map(|m| m.r.index)
                        .collect(),
                    of: counts[e],
                })
                .collect(),
        }
    };
    let modes: Vec<Mode> = match (bistable, split(&xs)) {
        (true, Some(t)) => vec![
            mode_of(
                all.iter()
                    .filter(|m| m.r.system.throughput_per_s <= t)
                    .collect(),
            ),
            mode_of(
                all.iter()
                    .filter(|m| m.r.system.throughput_per_s > t)
                    .collect(),
            ),
        ],
        (true, None) => {
            let mut m: Vec<Mode> = (0..2)
                .map(|e| mode_of(all.iter().filter(|m| m.end == e).collect()))
                .collect();
            m.sort_by(|a, b| a.throughput_per_s.mean.total_cmp(&b.throughput_per_s.mean));
            m
        }
        (false, _) => vec![mode_of(all.iter().collect())],
    };
    let given_xs: Vec<f64> = given.iter().map(|r| r.system.throughput_per_s).collect();
    Ok(Some(Verdict {
        station: network.spec().stations[station].name.clone(),
        mechanism,
        modes,
        bistable,
        mixed: split(&given_xs).is_some(),
        given: first.system.throughput_per_s,
        other_end: estimate(reps.iter().map(|r| r.system.throughput_per_s)),
        starts,
        other_end_replications: k as u32,
        full_replications: total,
        untried_starts: untried_starts(network, station),
        other_end_leaves: leaves_within_run(&reps),
        run_leaves: leaves_within_run(given),
    }))
}

/// The replications of `results` in each mode of its own (the mixed-mode
/// detector on its replications' system throughputs), slowest first; one
/// group when they do not split.
pub fn modes_of(results: &RunResults) -> Vec<Vec<ReplicationResult>> {
    let reps = &results.replication_results;
    let xs: Vec<f64> = reps.iter().map(|r| r.system.throughput_per_s).collect();
    match split(&xs) {
        Some(t) => vec![
            reps.iter()
                .filter(|r| r.system.throughput_per_s <= t)
                .cloned()
                .collect(),
            reps.iter()
                .filter(|r| r.system.throughput_per_s > t)
                .cloned()
                .collect(),
        ],
        None => vec![reps.clone()],
    }
}

#[cfg(test)]
mod tests;
