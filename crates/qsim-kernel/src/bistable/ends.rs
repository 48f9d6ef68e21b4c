//! The other end of a run: which station a mechanism can collapse (or
//! where an open class's retries hold a backlog), and the start a check
//! runs from there.

use super::{COLLAPSE_RATIO, Mechanism};
use crate::network::{
    ClassId, InitialState, Network, Placement, StationId, StationKind, Wake, Workload,
};

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
pub(super) fn untried_starts(network: &Network, station: StationId) -> Vec<String> {
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
pub(super) const BACKLOG: &str = "a backlog of";

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
