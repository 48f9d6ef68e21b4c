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
use crate::network::{
    ClassId, InitialState, Network, Placement, StationId, StationKind, Wake, Workload,
};
use crate::results::{Estimate, ReplicationResult, RunResults, estimate};
use serde::Serialize;
use std::sync::Arc;

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
        format!(
            "{} /s with {:.1} jobs at the station ({shares} replications)",
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
        match self.other_end_leaves {
            Some((lo, hi)) => format!(
                "; the replications from {} range from {} to {} /s: some leave that state within the run, so it lasts about as long as a run (its mean escape time: qsim rare, docs/rare-events.md)",
                self.starts[1],
                crate::number::sig(lo, 4),
                crate::number::sig(hi, 4)
            ),
            None => String::new(),
        }
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

fn closed_jobs(network: &Network) -> u32 {
    network
        .spec()
        .classes
        .iter()
        .map(|c| match c.workload {
            Workload::Closed { population, .. } => population,
            Workload::Open { .. } => 0,
        })
        .fold(0, u32::saturating_add)
}

/// The station whose speed curve falls furthest below its peak at the full
/// closed population, when some station's speed falls by more than 5%
/// and there are at least two closed jobs.
pub fn collapsing_station(network: &Network) -> Option<StationId> {
    collapse_candidate(network).map(|(s, _)| s)
}

/// Where the check applies, decided from the spec: the station a collapse
/// would crowd and the mechanism, for a closed population of at least two.
/// A falling speed curve (below 95% of its peak at the full population)
/// comes first, the one that falls most; else the latch with a NUMA,
/// spin or wake-all mechanism and the longest mean critical section.
pub fn collapse_candidate(network: &Network) -> Option<(StationId, Mechanism)> {
    closed_candidate(network)
        .or_else(|| retry_candidate(network).map(|r| (r.station, Mechanism::Retries)))
}

/// [`collapse_candidate`]'s closed mechanisms: speed curves and latches.
/// The station whose speed curve falls furthest, else the latch with a
/// mechanism and the longest critical section.
fn closed_candidate(network: &Network) -> Option<(StationId, Mechanism)> {
    let c = closed_candidates(network);
    let falling = c
        .iter()
        .filter(|x| x.1 == Mechanism::FallingSpeed)
        .min_by(|a, b| a.2.total_cmp(&b.2));
    // First of the longest critical sections, as the scan always chose.
    let latch = c.iter().filter(|x| x.1 != Mechanism::FallingSpeed).fold(
        None::<&(usize, Mechanism, f64)>,
        |best, x| match best {
            Some(b) if x.2 <= b.2 => Some(b),
            _ => Some(x),
        },
    );
    falling.or(latch).map(|&(i, m, _)| (i, m))
}

/// Every station a closed mechanism could collapse: each with a speed
/// curve that falls below [`COLLAPSE_RATIO`] of its peak at full population
/// (with its drop, the rate there over the peak), then each latch with
/// NUMA, spin or wake-all (with its longest mean critical section).
fn closed_candidates(network: &Network) -> Vec<(StationId, Mechanism, f64)> {
    let spec = network.spec();
    let jobs = closed_jobs(network);
    let mut out = Vec::new();
    if jobs < 2 {
        return out;
    }
    for (i, st) in spec.stations.iter().enumerate() {
        let Some(speed) = &st.speed else { continue };
        // The peak of a table or USL curve lies at small n; scanning the
        // first 100,000 populations bounds the cost for huge ones.
        let peak = (1..=jobs.min(100_000))
            .map(|n| speed.rate(f64::from(n)))
            .fold(0.0, f64::max);
        let drop = speed.rate(f64::from(jobs)) / peak;
        if drop < COLLAPSE_RATIO {
            out.push((i, Mechanism::FallingSpeed, drop));
        }
    }
    for (i, st) in spec.stations.iter().enumerate() {
        let Some(l) = st.kind.as_latch() else {
            continue;
        };
        let mechanism = if l.numa.is_some() {
            Mechanism::Numa
        } else if l.spin.is_some() && l.wake == Wake::All {
            Mechanism::WakeAll
        } else if l.spin.is_some() {
            Mechanism::Spin
        } else {
            continue;
        };
        let mean = st
            .service
            .iter()
            .flatten()
            .map(|d| d.mean())
            .fold(0.0, f64::max);
        out.push((i, mechanism, mean));
    }
    out
}

/// The other stations a closed mechanism could collapse, besides
/// `station`: the check starts from none of them, and all jobs at one of
/// them may be an operating point of its own (two latches fed equal flows,
/// each with a falling curve: either can hold the crowd, not both).
fn untried_starts(network: &Network, station: StationId) -> Vec<String> {
    let spec = network.spec();
    let mut names: Vec<String> = closed_candidates(network)
        .into_iter()
        .filter(|c| c.0 != station)
        .map(|c| spec.stations[c.0].name.clone())
        .collect();
    names.dedup();
    names
}

/// Where a class's own retries could hold a station in overload (see
/// [`retry_candidate`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryCandidate {
    /// The class whose clients time out and retry.
    pub class: ClassId,
    /// Its busiest queue (largest mean service per server).
    pub station: StationId,
    /// Whether the class is open (its other end is a backlog) or closed
    /// (all its jobs at the station).
    pub open: bool,
    /// The backlog of an open class's other end: the station's capacity,
    /// or (without one) enough requests that the last waits twice the
    /// class's mean timeout.
    pub backlog: u32,
}

/// How the start label of an open class's backlog begins.
const BACKLOG: &str = "a backlog of";

/// Most requests of an open class's backlog start when the station has no
/// capacity.
pub const MAX_BACKLOG: u32 = 1_000_000;

/// The first class (in index order) whose clients time out and retry (a
/// timeout, and retries with at least two attempts and a positive
/// probability), at its busiest queue station (the largest mean service
/// time per server among the queues it visits), a closed class only with
/// at least two jobs.
pub fn retry_candidate(network: &Network) -> Option<RetryCandidate> {
    let spec = network.spec();
    let overload = network.overload()?;
    for (c, client) in overload.classes.iter().enumerate() {
        let Some(client) = client else { continue };
        let (Some(timeout), Some(retry)) = (&client.timeout, &client.retry) else {
            continue;
        };
        if retry.max_attempts < 2 || retry.probability <= 0.0 {
            continue;
        }
        let open = match spec.classes[c].workload {
            Workload::Open { .. } => true,
            Workload::Closed { population, .. } => {
                if population < 2 {
                    continue;
                }
                false
            }
        };
        let busiest = spec
            .stations
            .iter()
            .enumerate()
            .filter_map(|(s, st)| match st.kind {
                StationKind::Queue { servers, .. } => st
                    .service
                    .get(c)
                    .cloned()
                    .flatten()
                    .map(|d| (s, d.mean() / f64::from(servers.max(1)))),
                _ => None,
            })
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let Some((station, per_server)) = busiest else {
            continue;
        };
        let backlog = match network.capacity(station) {
            Some(cap) => cap.limit,
            None if per_server > 0.0 => (2.0 * timeout.mean() / per_server)
                .ceil()
                .clamp(1.0, f64::from(MAX_BACKLOG)) as u32,
            None => continue,
        };
        return Some(RetryCandidate {
            class: c,
            station,
            open,
            backlog,
        });
    }
    None
}

/// The backlog start of an open class: one placement of `jobs` of an open
/// class at a station, nothing else.
fn backlog_start(network: &Network) -> Option<Placement> {
    let spec = network.spec();
    match &spec.initial {
        InitialState::Placed(list) => match list.as_slice() {
            [p] if matches!(
                spec.classes.get(p.class).map(|c| &c.workload),
                Some(Workload::Open { .. })
            ) =>
            {
                Some(*p)
            }
            _ => None,
        },
        _ => None,
    }
}

/// The other end of an open retry class: its backlog from the empty start,
/// the empty start from a backlog start.
fn open_other_end(network: &Network, r: RetryCandidate) -> Option<(Network, StationId)> {
    let mut spec = network.spec().clone();
    let station = match (&spec.initial, backlog_start(network)) {
        (InitialState::Placed(_), Some(p)) => {
            spec.initial = InitialState::Thinking;
            p.station
        }
        (InitialState::Placed(_), None) => return None,
        _ => {
            spec.initial = InitialState::Placed(vec![Placement {
                class: r.class,
                station: r.station,
                jobs: r.backlog,
            }]);
            r.station
        }
    };
    network.rebuilt(spec).ok().map(|n| (n, station))
}

/// Why the check does not apply to `network`, for people; `None` when it
/// applies.
pub fn not_applicable(network: &Network) -> Option<String> {
    let open_retries = retry_candidate(network).is_some_and(|r| r.open);
    let backlog = open_retries && backlog_start(network).is_some();
    if matches!(network.spec().initial, InitialState::Placed(_)) && !backlog {
        return Some("the run starts from a placed state, which is neither end".into());
    }
    if closed_candidate(network).is_none() && retry_candidate(network).is_some() {
        return None;
    }
    if closed_jobs(network) < 2 {
        return Some(
            if network
                .spec()
                .classes
                .iter()
                .any(|c| matches!(c.workload, Workload::Open { .. }))
            {
                "an open workload is checked only where its clients time out and retry (the other end is then a backlog at its busiest queue)".into()
            } else {
                "fewer than two closed jobs cannot crowd a station".into()
            },
        );
    }
    collapse_candidate(network).is_none().then(|| {
        "no state-dependent mechanism (falling speed curve, NUMA, spin or wake-all latch)".into()
    })
}

/// The network started from the other end, and the collapse station: all
/// jobs at the collapsing station when `network` starts with them
/// thinking, all thinking when it starts at a station; for an open class
/// whose clients retry ([`retry_candidate`]), its backlog when `network`
/// starts empty and empty when it starts from that backlog. `None` when
/// the check does not apply (see [`not_applicable`]).
pub fn other_end(network: &Network) -> Option<(Network, StationId)> {
    let mut spec = network.spec().clone();
    let (candidate, mechanism) = collapse_candidate(network)?;
    if mechanism == Mechanism::Retries
        && let Some(r) = retry_candidate(network).filter(|r| r.open)
    {
        return open_other_end(network, r);
    }
    let station = match spec.initial {
        InitialState::Placed(_) => return None,
        InitialState::Thinking => {
            spec.initial = InitialState::AtStation(candidate);
            candidate
        }
        InitialState::AtStation(s) => {
            spec.initial = InitialState::Thinking;
            s
        }
    };
    network.rebuilt(spec).ok().map(|n| (n, station))
}

/// The start state of a network, as `qsim run` names it.
pub fn start_label(network: &Network) -> String {
    if let Some(p) = backlog_start(network) {
        return format!(
            "{BACKLOG} {} requests at {}",
            p.jobs,
            network.spec().stations[p.station].name
        );
    }
    match &network.spec().initial {
        _ if closed_jobs(network) == 0 => "empty (open arrivals)".into(),
        InitialState::Thinking => "all jobs thinking".into(),
        InitialState::AtStation(s) => format!("all jobs at {}", network.spec().stations[*s].name),
        InitialState::Placed(_) => "a placed state".into(),
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
    if split(&xs).is_some() || o.iter().any(|&x| apart_from(&g, x)) {
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
    let sd = {
        let n = o.len() as f64;
        (o.iter().map(|x| (x - b.mean) * (x - b.mean)).sum::<f64>() / (n - 1.0)).sqrt()
    };
    let precise = sd <= AGREE_WIDTH * a.mean.abs().max(b.mean.abs());
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
/// "bistable"; a mean of the other end within the sum of the two 95%
/// half-widths, with its replications' standard deviation at most
/// [`AGREE_WIDTH`] of the larger mean, decides "one operating point". Undecided
/// after as many replications as the run as given had, the full check
/// decides: [`split`] on all of them. (Two means a little apart without two
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
        Mode {
            throughput_per_s: x,
            jobs_at_station: j,
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
mod tests {
    use super::*;

    #[test]
    fn two_clusters_split_between_them() {
        // Four replications near 2000/s and one near 220/s: the run from
        // all jobs at a latch where one replication stayed collapsed.
        let t = split(&[1990.0, 2011.0, 219.0, 2003.0, 1985.0]).expect("two modes");
        assert!(t > 219.0 && t < 1985.0);
        // Two modes of two values each.
        assert!(split(&[10.0, 11.0, 50.0, 52.0]).is_some());
    }

    #[test]
    fn a_mixed_run_is_split_into_its_modes() {
        // Replications 1 and 3 collapsed (about 50/s), the rest fast.
        let xs = [780.0, 51.0, 775.0, 49.5, 790.0];
        let results = RunResults {
            replication_results: reps(&xs),
            ..RunResults::default()
        };
        let modes = modes_of(&results);
        let idx = |m: &Vec<ReplicationResult>| m.iter().map(|r| r.index).collect::<Vec<_>>();
        assert_eq!(modes.len(), 2);
        assert_eq!(idx(&modes[0]), [1, 3]);
        assert_eq!(idx(&modes[1]), [0, 2, 4]);
        // The same values without the collapsed ones are one mode.
        let one = RunResults {
            replication_results: results
                .replication_results
                .iter()
                .filter(|r| r.system.throughput_per_s > 100.0)
                .cloned()
                .collect(),
            ..RunResults::default()
        };
        assert_eq!(modes_of(&one).len(), 1);
    }

    #[test]
    fn one_cluster_does_not_split() {
        // Spread of a steady run: a few percent.
        assert_eq!(split(&[100.0, 103.0, 97.0, 101.0, 99.5]), None);
        // Evenly spread values have no gap that stands out.
        assert_eq!(split(&[100.0, 110.0, 121.0, 133.0, 146.0]), None);
        // A gap over 20% but within the groups' own noise.
        assert_eq!(split(&[10.0, 30.0, 5.0, 60.0, 90.0, 40.0]), None);
        assert_eq!(split(&[5.0]), None);
        assert_eq!(split(&[]), None);
    }

    fn reps(xs: &[f64]) -> Vec<ReplicationResult> {
        xs.iter()
            .enumerate()
            .map(|(i, &x)| {
                let mut r = ReplicationResult {
                    index: i as u32,
                    ..ReplicationResult::default()
                };
                r.system.throughput_per_s = x;
                r
            })
            .collect()
    }

    #[test]
    fn a_wide_other_end_does_not_agree_early() {
        // models/latch_bistable.toml run for 3e6 jobs: the run as given is
        // fast and tight; from all jobs at the latch one replication stays
        // collapsed most of its run and one leaves early. Their mean,
        // 297 ± 2658/s, "agrees" with 779/s only through its width: the
        // slow replication lies far outside the fast state's own noise.
        let given = reps(&[778.8, 778.7, 778.9, 778.75]);
        let other = reps(&[88.0, 506.3]);
        assert_eq!(split(&[778.8, 778.7, 778.9, 778.75, 88.0, 506.3]), None);
        assert_eq!(decided(&given, &other, false), Some(true));
        assert_eq!(leaves_within_run(&other), Some((88.0, 506.3)));
        // Two replications that agree but only within a wide interval
        // decide nothing early; a tight agreement decides one state.
        let noisy = reps(&[100.0, 104.0, 96.0, 101.0]);
        assert_eq!(decided(&noisy, &reps(&[85.0, 117.0]), false), None);
        assert_eq!(decided(&noisy, &reps(&[99.0, 101.5]), false), Some(false));
        assert_eq!(leaves_within_run(&reps(&[99.0, 101.5])), None);
    }
}
