//! Clients and servers under overload: a class's client behaviour (a
//! timeout per attempt, retries with backoff, a retry budget) and a
//! station's (reneging after a patience, balking, shedding late work).
//!
//! These are attached to a checked [`Network`] with
//! [`Network::with_overload`]; a network without them runs exactly as
//! before (the simulator decides once, when it builds a replication).

use super::{Discipline, Field, Network, NetworkError, Scope};
use crate::dist::Dist;

/// What happens to the server's work when a client's attempt times out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnTimeout {
    /// The request goes on through the network; the server time it still
    /// takes is wasted work (most real systems).
    #[default]
    Continue,
    /// The request is cancelled if it is still queued (not yet in
    /// service); once in service it goes on as with `Continue`.
    Cancel,
}

/// The delay before a retry.
#[derive(Clone, Debug)]
pub enum Backoff {
    /// Retry at once.
    None,
    /// A delay drawn from a distribution, the same for every retry.
    Dist(Dist),
    /// The doubling schedule: `base_s · 2^(k-1)` before the k-th retry,
    /// capped at `cap_s`, with `jitter` (0 to 1) of it drawn away
    /// uniformly (1 is "full jitter": uniform on [0, delay]).
    Doubling {
        /// Delay before the first retry, seconds.
        base_s: f64,
        /// Largest delay, seconds.
        cap_s: f64,
        /// Fraction of the delay drawn away at random, in [0, 1].
        jitter: f64,
    },
}

/// A retry budget (a token bucket): every first attempt deposits `ratio`
/// tokens, every retry takes one whole token, and a retry without one is
/// not made. The bucket holds at most `cap` tokens and starts full.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryBudget {
    /// Retries allowed per first attempt, over time, in (0, 1].
    pub ratio: f64,
    /// Most tokens saved up (the largest burst of retries), at least 1.
    pub cap: f64,
}

/// When a failed attempt (a timeout, or a refusal by a full station that
/// drops) is tried again.
#[derive(Clone, Debug)]
pub struct RetrySpec {
    /// Most attempts of one interaction, the first included (at least 1).
    pub max_attempts: u32,
    /// Probability that a failed attempt is retried (within `max_attempts`).
    pub probability: f64,
    /// Delay before a retry.
    pub backoff: Backoff,
    /// Retry budget, if any.
    pub budget: Option<RetryBudget>,
}

/// A circuit breaker on a class's attempts. Closed, it records the
/// outcome of each attempt (success, or failure: a timeout, a refusal,
/// reneging, balking, shedding) in a window of the last `window`; once
/// the window is full and at least `failure_ratio` of it failed, it
/// opens. Open, every attempt the class starts fails at once (its
/// interaction fails, without retries) for `cool_down_s`; then it is half
/// open: the next attempt goes through as a probe and the others fail
/// fast while it is out. The probe's success closes the breaker (with an
/// empty window), its failure opens it again.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Breaker {
    /// Failures per attempt in the window at which it opens, in (0, 1].
    pub failure_ratio: f64,
    /// Attempts in the window (at least 1).
    pub window: u32,
    /// Time it stays open before a probe, seconds (> 0).
    pub cool_down_s: f64,
}

/// The client behaviour of one class.
#[derive(Clone, Debug)]
pub struct ClientSpec {
    /// Time after which the client gives up on an attempt; `None`: never.
    pub timeout: Option<Dist>,
    /// What happens to the work of an attempt given up.
    pub on_timeout: OnTimeout,
    /// An interaction that succeeds within this many seconds counts in
    /// the goodput; `None`: every success does.
    pub deadline_s: Option<f64>,
    /// Retries after a failed attempt; `None`: a failed attempt fails the
    /// interaction.
    pub retry: Option<RetrySpec>,
    /// A circuit breaker on the class's attempts, if any.
    pub breaker: Option<Breaker>,
}

/// Balking: an arrival that does not join a station.
#[derive(Clone, Debug)]
pub enum Balk {
    /// It does not join when at least this many jobs are present.
    AtLeast(u32),
    /// With `n` jobs present it does not join with probability `p[n]`
    /// (the last entry for any larger `n`).
    Probabilities(Vec<f64>),
}

/// The overload behaviour of one plain queue station.
#[derive(Clone, Debug, Default)]
pub struct StationOverload {
    /// A waiting job leaves the queue after a patience drawn from this
    /// distribution (reneging); in service it stays.
    pub patience: Option<Dist>,
    /// Balking on arrival.
    pub balk: Option<Balk>,
    /// Shedding: a job whose wait already exceeds this many seconds when
    /// its service would start is dropped instead.
    pub shed_after_s: Option<f64>,
    /// Adaptive LIFO (LIFO under overload) at an `fcfs` queue: a server
    /// that picks its next job while at least this many jobs are present
    /// (in service included) picks the newest waiting one instead of the
    /// oldest, so under overload the requests whose clients still wait go
    /// first.
    pub lcfs_from: Option<u32>,
}

impl StationOverload {
    /// Whether the station keeps its queue finite whatever the load:
    /// waiting jobs renege, arrivals balk with certainty beyond some
    /// length, or late work is shed.
    pub fn bounds_queue(&self) -> bool {
        self.patience.is_some()
            || self.shed_after_s.is_some()
            || match &self.balk {
                Some(Balk::AtLeast(_)) => true,
                Some(Balk::Probabilities(p)) => p.last().is_some_and(|&x| x >= 1.0),
                None => false,
            }
    }
}

/// Client behaviour per class and overload behaviour per station (one
/// entry each, `None` where there is none).
#[derive(Clone, Debug, Default)]
pub struct Overload {
    /// Per class, indexed by [`ClassId`](super::ClassId).
    pub classes: Vec<Option<ClientSpec>>,
    /// Per station, indexed by [`StationId`](super::StationId).
    pub stations: Vec<Option<StationOverload>>,
}

impl Overload {
    /// True when no class or station has any of it.
    pub fn is_empty(&self) -> bool {
        self.classes.iter().all(Option::is_none) && self.stations.iter().all(Option::is_none)
    }

    /// Checks the behaviour against `network`: one entry per class and per
    /// station, values in range, and a network the simulator runs these
    /// on (queue and delay stations at a fixed speed, no regions, class
    /// switching or blocking; patience, balking and shedding on queues).
    /// A class's keys are located under its `client` table, a station's
    /// in the station.
    pub fn check(&self, network: &Network) -> Vec<NetworkError> {
        let spec = network.spec();
        let mut out = Vec::new();
        if self.is_empty() {
            return out;
        }
        let mut err = |scope: Scope, field: &[&'static str], msg: &str| {
            let base = match scope {
                Scope::Station(s) => format!("stations.{}", spec.stations[s].name),
                Scope::Class(c) => format!("classes.{}", spec.classes[c].name),
                _ => String::new(),
            };
            let path = field.iter().fold(base, |p, k| {
                if p.is_empty() {
                    k.to_string()
                } else {
                    format!("{p}.{k}")
                }
            });
            out.push(NetworkError {
                scope,
                field: field.iter().map(|&k| Field::Key(k)).collect(),
                path,
                message: msg.to_string(),
            });
        };
        if self.classes.len() != spec.classes.len() || self.stations.len() != spec.stations.len() {
            err(
                Scope::Network,
                &[],
                "expected one overload entry per class and one per station",
            );
            return out;
        }
        if self.is_empty() {
            return out;
        }
        let cancelling = self.classes.iter().position(|k| {
            k.as_ref()
                .is_some_and(|k| k.on_timeout == OnTimeout::Cancel)
        });
        // Stations where a request given up goes on (latches, speed
        // curves): one error for all of them.
        let mut goes_on: Vec<&str> = Vec::new();
        for (s, st) in spec.stations.iter().enumerate() {
            let at = Scope::Station(s);
            // A preempted job would leave its server and queue again,
            // which client mode (cancelling queued attempts) does not follow.
            let preempts = st
                .kind
                .as_queue()
                .is_some_and(|(_, d)| d == Discipline::PreemptivePriority);
            if !st.kind.takes_clients() || preempts {
                err(
                    at,
                    &["kind"],
                    "client and overload behaviour (timeouts, retries, patience, balking, shedding) run on networks of queue, delay and latch stations, not preemptive_priority; this station is a batch, link, fork or join, or preempts",
                );
            }
            if st.speed.is_some() || st.kind.as_latch().is_some() {
                goes_on.push(st.name.as_str());
            }
            if spec.blocks(s) {
                err(
                    at,
                    &["when_full"],
                    "client and overload behaviour do not combine with when_full = \"block\"",
                );
            }
            let Some(o) = &self.stations[s] else { continue };
            let waits = st
                .kind
                .as_queue()
                .is_some_and(|(_, d)| d.serves_to_completion());
            if !st.kind.takes_overload() || !waits || st.speed.is_some() {
                err(
                    at,
                    &["kind"],
                    "patience, balking, shedding and adaptive LIFO apply to a queue station at a fixed speed whose jobs wait for a server (not ps, no speed curve)",
                );
            }
            if let Some(Balk::Probabilities(p)) = &o.balk
                && (p.is_empty() || p.iter().any(|&x| !(0.0..=1.0).contains(&x)))
            {
                err(
                    at,
                    &["balk_probabilities"],
                    "expected a non-empty list of probabilities in [0, 1]",
                );
            }
            if let Some(Balk::AtLeast(0)) = &o.balk {
                err(at, &["balk_at"], "expected at least 1 job");
            }
            if o.shed_after_s.is_some_and(|d| !(d > 0.0 && d.is_finite())) {
                err(at, &["shed_after_s"], "expected a positive time in seconds");
            }
            if let Some(k) = o.lcfs_from {
                if k == 0 {
                    err(at, &["lcfs_from"], "expected at least 1 job");
                }
                if st.kind.as_queue().map(|(_, d)| d) != Some(Discipline::Fcfs) {
                    err(
                        at,
                        &["lcfs_from"],
                        "adaptive LIFO applies to a queue with discipline = \"fcfs\" (discipline = \"lcfs\" serves the newest first always)",
                    );
                }
            }
        }
        if let (Some(c), Some(why)) = (cancelling, cancel_refusal(&goes_on)) {
            err(Scope::Class(c), &["client", "on_timeout"], &why);
        }
        if !spec.regions.is_empty() {
            err(
                Scope::Region(0),
                &[],
                "client and overload behaviour do not combine with regions",
            );
        }
        for c in 0..spec.classes.len() {
            let at = Scope::Class(c);
            if spec.chain_starts()[c] != c {
                err(
                    at,
                    &[],
                    "client and overload behaviour do not combine with class switching",
                );
            }
            let Some(k) = &self.classes[c] else { continue };
            if k.deadline_s.is_some_and(|d| !(d > 0.0 && d.is_finite())) {
                err(
                    at,
                    &["client", "deadline_s"],
                    "expected a positive time in seconds",
                );
            }
            if let Some(b) = k.breaker {
                check_breaker(b, &mut |field, msg| err(at, field, msg));
            }
            if let Some(r) = &k.retry {
                check_retry(r, &mut |field, msg| err(at, field, msg));
            }
        }
        out
    }
}

/// Why `on_timeout = "cancel"` cannot apply, given the stations where a
/// request given up goes on (latches, speed curves), or `None` when
/// there are none.
fn cancel_refusal(goes_on: &[&str]) -> Option<String> {
    let (what, verb) = match goes_on.len() {
        0 => return None,
        1 => ("station", "is a latch or has a speed curve"),
        _ => ("stations", "are latches or have speed curves"),
    };
    Some(format!(
        "on_timeout = \"cancel\" takes a request out of a fixed-speed queue; {what} {} {verb}, where a request given up goes on: use on_timeout = \"continue\"",
        goes_on.join(", ")
    ))
}

/// The checks of a class's circuit breaker; `err` reports a problem at a
/// key of the class.
fn check_breaker(b: Breaker, err: &mut dyn FnMut(&[&'static str], &str)) {
    if !(b.failure_ratio > 0.0 && b.failure_ratio <= 1.0) {
        err(
            &["client", "breaker_failure_ratio"],
            "expected a fraction in (0, 1]",
        );
    }
    if b.window == 0 {
        err(&["client", "breaker_window"], "expected at least 1 attempt");
    }
    if !(b.cool_down_s > 0.0 && b.cool_down_s.is_finite()) {
        err(
            &["client", "breaker_cool_down_s"],
            "expected a positive time in seconds",
        );
    }
}

/// The checks of a class's retry policy; `err` reports a problem at a key
/// of the class.
fn check_retry(r: &RetrySpec, err: &mut dyn FnMut(&[&'static str], &str)) {
    if r.max_attempts == 0 {
        err(&["client", "max_attempts"], "expected at least 1");
    }
    if !(0.0..=1.0).contains(&r.probability) {
        err(
            &["client", "retry_probability"],
            "expected a probability in [0, 1]",
        );
    }
    if r.max_attempts == u32::MAX && r.probability >= 1.0 {
        err(
            &["client"],
            "retries without end: give max_attempts, or a retry_probability below 1",
        );
    }
    if let Backoff::Doubling {
        base_s,
        cap_s,
        jitter,
    } = r.backoff
    {
        if !(base_s > 0.0 && base_s.is_finite()) {
            err(
                &["client", "backoff_base_s"],
                "expected a positive time in seconds",
            );
        }
        if !(cap_s >= base_s && cap_s.is_finite()) {
            err(
                &["client", "backoff_cap_s"],
                "expected a time in seconds at least backoff_base_s",
            );
        }
        if !(0.0..=1.0).contains(&jitter) {
            err(
                &["client", "backoff_jitter"],
                "expected a fraction in [0, 1]",
            );
        }
    }
    if let Some(b) = r.budget {
        if !(b.ratio > 0.0 && b.ratio <= 1.0) {
            err(&["client", "retry_budget"], "expected a fraction in (0, 1]");
        }
        if !(b.cap >= 1.0 && b.cap.is_finite()) {
            err(&["client", "retry_budget_cap"], "expected at least 1 token");
        }
    }
}
