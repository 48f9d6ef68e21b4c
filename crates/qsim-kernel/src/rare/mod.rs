//! Rare events: probabilities and times that a plain run cannot reach.
//!
//! Three questions, each answered with an interval from independent
//! replications of the whole estimate (so the interval is valid however
//! skewed one replication's estimate is) and with the events it took:
//!
//! * [`reach_probability`]: the probability that the level (jobs at a
//!   station, or in the network) reaches a target before it comes back to
//!   where it started (per cycle, [`Estimand::Cycle`]), or within a
//!   horizon ([`Estimand::Within`]); by fixed-effort multilevel splitting
//!   (`split`): a stage starts `effort` copies of the replication
//!   ([`Simulation::snapshot`](crate::Simulation::snapshot), each with
//!   streams of its own) from the states that reached the previous level,
//!   and the estimate is the product of the stages' fractions;
//! * [`escape_time`]: the mean first-passage time from the start level to
//!   the target, as the mean cycle length (plain simulation) over the
//!   per-cycle probability (splitting);
//! * [`tail_probability`]: P(wait > t) or P(response > t) of a single
//!   FCFS queue with one server (GI/G/1, any times but lognormal ones;
//!   several Poisson classes, per class with [`class_tail_probability`]), or
//!   P(wait > t) of a single M/M/c queue, by importance sampling (`tail`):
//!   the service and interarrival laws exponentially tilted
//!   ([`Dist::tilted`](crate::Dist::tilted)) so that the walk of their
//!   difference drifts up, each path weighted by its likelihood ratio (for
//!   M/M/c, times P(wait) measured on a plain run); and P(response > t) of
//!   single-server FCFS queues in tandem, possibly ending in a fork (one
//!   sub-job per target) to such tandems and the join that waits for all,
//!   by a switching mixture of those tilts, one per station (`tandem`).
//!   Quorum joins, several classes and several servers on a route have no
//!   method and are refused.
//!
//! Assumptions that fail are reported: a target the start state already
//! meets, or a start level a run never reaches, is refused; a level no copy
//! reaches in a stage is refused (raise the effort or lower the step); a
//! stage with few survivors and an escape time whose cycles are not
//! regenerations are warned about ([`RareWarning`]).

mod split;
mod tail;
mod tandem;
mod walk;

use crate::error::RunError;
use crate::network::{ClassId, Network, StationId};
use crate::results::Estimate;
use std::fmt;

pub use split::{escape_time, reach_probability};
pub use tail::{class_tail_probability, tail_probability};

/// What the level counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LevelOf {
    /// Jobs present at a station (queued and in service).
    Station(StationId),
    /// Jobs in the network (not thinking, not yet arrived).
    System,
    /// Clients waiting out a backoff before they retry (a class's
    /// `client` with retries): the level that tells a retry storm's
    /// collapsed state from its fast one when the queue alone does not.
    Retrying,
    /// A weighted sum of the jobs present at stations: `(station, weight)`
    /// pairs, whole-number weights of at least 1 (a job at a station
    /// nearer the rare set can count for more than one upstream). The
    /// level jumps by a station's weight when a job arrives there; a
    /// stage's copy counts as reaching a level when it is at or above it.
    Weighted(Vec<(StationId, u32)>),
}

/// The rare set: the level at or above `at_least`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Level {
    /// What is counted.
    pub of: LevelOf,
    /// The target: the set is reached when the count is at least this.
    pub at_least: u32,
}

/// Which response figure a tail is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TailOf {
    /// Time queued before service starts (`wait_time_s`).
    Wait,
    /// Time from arrival to the end of service (`response_time_s`).
    Response,
}

/// How a rare-event estimate is computed.
#[derive(Clone, Debug, PartialEq)]
pub struct RareConfig {
    /// Root seed.
    pub seed: u64,
    /// Independent replications of the whole estimate (at least 2).
    pub replications: u32,
    /// Copies started per stage of the splitting, or samples per
    /// replication for importance sampling.
    pub effort: u32,
    /// Distance between successive levels of the splitting (1: every
    /// whole number between the start and the target).
    pub step: u32,
    /// The start level: a run from the model's initial state goes until
    /// the level equals it, and that state is where every cycle starts.
    /// `None`: the level of the initial state.
    pub start: Option<u32>,
    /// Most events one replication may take, a guard against a target that
    /// the splitting cannot approach.
    pub max_events: u64,
}

impl Default for RareConfig {
    fn default() -> RareConfig {
        RareConfig {
            seed: 1,
            replications: 20,
            effort: 1000,
            step: 1,
            start: None,
            max_events: 2_000_000_000,
        }
    }
}

/// What was estimated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Estimand {
    /// P(the level reaches the target before it returns to the start
    /// level), from the start state.
    Cycle,
    /// P(the level reaches the target within `horizon_s` seconds), from
    /// the start state.
    Within {
        /// The horizon, seconds.
        horizon_s: f64,
    },
    /// Mean time from the start state until the level first reaches the
    /// target, seconds.
    EscapeTime,
    /// P(the figure > `t_s`) in steady state.
    Tail {
        /// The figure.
        of: TailOf,
        /// The threshold, seconds.
        t_s: f64,
        /// The class whose customers it is about; `None`: any customer.
        class: Option<ClassId>,
    },
}

/// How the estimate was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Fixed-effort multilevel splitting.
    Splitting,
    /// Importance sampling with a likelihood ratio.
    ImportanceSampling,
}

/// One stage of a splitting estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    /// The level this stage's copies had to reach.
    pub level: u32,
    /// The fraction of copies that reached it, over the replications.
    pub fraction: Estimate,
    /// The fewest copies that reached it in any replication.
    pub fewest_survivors: u32,
}

/// Why an estimate should be read with care.
#[derive(Clone, Debug, PartialEq)]
pub enum RareWarning {
    /// Some replication had fewer than [`MIN_SURVIVORS`] copies reach a
    /// level: the next stage starts from few states, and the interval
    /// may be too narrow.
    FewSurvivors {
        /// The level.
        level: u32,
        /// The fewest copies that reached it.
        survivors: u32,
    },
    /// The cycles of an escape time start from whatever state the level
    /// returns to; they are regenerations (and the estimate exact in
    /// expectation) only when the level determines the whole state.
    NotRegenerative {
        /// Why the level does not determine the state.
        reason: String,
    },
    /// In some replication of an importance-sampling estimate one sample
    /// carried more than [`MAX_WEIGHT_SHARE`] of the replication's sum:
    /// the weights are heavy-tailed there (or the effort is small), and
    /// the interval may be too narrow.
    HeavyWeights {
        /// The largest share one sample had of its replication's sum.
        share: f64,
    },
}

/// Fewer survivors than this at a level is warned about.
pub const MIN_SURVIVORS: u32 = 10;

/// One importance-sampling weight above this share of its replication's
/// sum is warned about.
pub const MAX_WEIGHT_SHARE: f64 = 0.1;

impl fmt::Display for RareWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RareWarning::FewSurvivors { level, survivors } => write!(
                f,
                "only {survivors} copies reached level {level} in some replication (fewer than {MIN_SURVIVORS}): the interval may be too narrow; raise --effort or lower --step"
            ),
            RareWarning::NotRegenerative { reason } => write!(
                f,
                "the escape time treats every return to the start level as a fresh start, which holds only when the level determines the state; here {reason}, so the figure is approximate beyond its interval"
            ),
            RareWarning::HeavyWeights { share } => write!(
                f,
                "one sample carried {:.0}% of its replication's estimate (more than {:.0}%): the weights are heavy-tailed or the effort is small, and the interval may be too narrow; raise --effort",
                100.0 * share,
                100.0 * MAX_WEIGHT_SHARE
            ),
        }
    }
}

/// A rare-event estimate with its interval and cost.
#[derive(Clone, Debug, PartialEq)]
pub struct RareEstimate {
    /// What was estimated.
    pub estimand: Estimand,
    /// How.
    pub method: Method,
    /// The level (splitting estimates).
    pub level: Option<Level>,
    /// The start level (splitting estimates).
    pub start: Option<u32>,
    /// The estimate: mean of the replications' estimates and its 95%
    /// half-width.
    pub value: Estimate,
    /// For an escape time: the mean cycle length, seconds.
    pub cycle_s: Option<Estimate>,
    /// For an escape time: the per-cycle probability of reaching the
    /// target.
    pub cycle_probability: Option<Estimate>,
    /// Replications.
    pub replications: u32,
    /// Events simulated (for importance sampling, two per customer of the
    /// walk, an arrival and a completion, plus for M/M/c the plain run
    /// that measures P(wait)).
    pub events: u64,
    /// The splitting's stages.
    pub stages: Vec<Stage>,
    /// Reasons to read the figure with care.
    pub warnings: Vec<RareWarning>,
}

impl RareEstimate {
    /// The 95% half-width over the estimate.
    pub fn relative_half_width(&self) -> f64 {
        self.value.ci95 / self.value.mean.abs()
    }
}

/// Why no estimate could be given.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RareError {
    /// A replication failed.
    Run(RunError),
    /// A configuration or question the method cannot answer.
    Config(String),
    /// The start state is already at or above the target.
    StartAtTarget {
        /// The start level.
        start: u32,
        /// The target.
        target: u32,
    },
    /// A run from the initial state did not reach the start level.
    StartUnreached {
        /// The start level.
        start: u32,
        /// Events run before giving up.
        events: u64,
    },
    /// No copy reached a level in some replication.
    NoSurvivors {
        /// The level.
        level: u32,
        /// The replication.
        replication: u32,
    },
    /// A replication took more than [`RareConfig::max_events`].
    EventLimit {
        /// The limit.
        limit: u64,
    },
}

impl fmt::Display for RareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RareError::Run(e) => write!(f, "{e}"),
            RareError::Config(m) => write!(f, "{m}"),
            RareError::StartAtTarget { start, target } => write!(
                f,
                "the start level {start} already meets the target (>= {target}): nothing is rare; choose a start level below the target"
            ),
            RareError::StartUnreached { start, events } => write!(
                f,
                "a run from the initial state did not reach the start level {start} within {events} events; choose a level the model visits"
            ),
            RareError::NoSurvivors { level, replication } => write!(
                f,
                "no copy reached level {level} in replication {replication}: the probability cannot be estimated with this effort; raise --effort, lower --step, or check that the level moves toward the target"
            ),
            RareError::EventLimit { limit } => write!(
                f,
                "a replication took more than {limit} events; lower --effort or choose a nearer target"
            ),
        }
    }
}

impl std::error::Error for RareError {}

impl From<RunError> for RareError {
    fn from(e: RunError) -> RareError {
        RareError::Run(e)
    }
}

/// Checks what every method needs.
fn check_config(network: &Network, cfg: &RareConfig) -> Result<(), RareError> {
    if cfg.replications < 2 {
        return Err(RareError::Config(format!(
            "replications must be at least 2 for an interval, found {}",
            cfg.replications
        )));
    }
    if cfg.effort == 0 || cfg.step == 0 {
        return Err(RareError::Config(
            "effort and step must be at least 1".into(),
        ));
    }
    let _ = network;
    Ok(())
}
