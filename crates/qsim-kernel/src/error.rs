//! Why a run could not produce results.

use thiserror::Error;

/// Why a run could not produce results.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum RunError {
    /// The number of jobs present grew past the configured bound: the model
    /// is unstable (an open workload faster than the network can serve).
    #[error(
        "the model is unstable: {jobs} jobs present at {time_s:.3} s (limit {limit}), most of them at station {station}; lower the arrival rate or add capacity"
    )]
    Unstable {
        /// Jobs present when the run was stopped.
        jobs: u64,
        /// The configured limit.
        limit: u64,
        /// Station holding most of them.
        station: String,
        /// Simulated time of the stop.
        time_s: f64,
    },
    /// The event limit was reached before the stopping rule.
    #[error(
        "replication {replication} reached the limit of {limit} events before its stopping rule; shorten the run or raise the limit"
    )]
    EventLimit {
        /// Replication index.
        replication: u32,
        /// The configured limit.
        limit: u64,
    },
    /// The simulated clock passed [`MAX_CLOCK_S`](crate::dist::MAX_CLOCK_S):
    /// a heavy-tailed draw (or a very long run) reached times at which f64
    /// can no longer resolve the model's durations.
    #[error(
        "replication {replication}: the simulated clock reached {time_s:.6e} s, past the 1e12 s an f64 clock resolves to 1e-4 s; a heavy-tailed distribution drew a huge time, or the run is too long (lower the means or the number of jobs)"
    )]
    ClockLimit {
        /// Replication index.
        replication: u32,
        /// Time of the first event beyond the limit, seconds.
        time_s: f64,
    },
    /// Stations with blocking (`when_full = "block"`) reached a state no
    /// job can leave: every server of each is held by a job blocked on a
    /// full station of the same set.
    #[error(
        "replication {replication} deadlocked at {time_s:.6} s: every server of station{s} {list} holds a job blocked on a full station of that set, so none can move again; raise a capacity or break the cycle of blocking stations",
        s = if stations.len() == 1 { "" } else { "s" },
        list = stations.join(", ")
    )]
    Deadlock {
        /// Replication index.
        replication: u32,
        /// The stations of the deadlock, in spec order.
        stations: Vec<String>,
        /// Simulated time at which it formed.
        time_s: f64,
    },
    /// Regions with limits reached a state no job can leave: each is full,
    /// and every job inside waits to enter another region of the set
    /// (routes that take overlapping regions in opposite orders).
    #[error(
        "replication {replication} deadlocked at {time_s:.6} s: region{s} {list} {are} full and every job inside waits to enter another of them (cycle {path}: a job inside each waits for the next), so none can move again; make every route take these regions in the same order (nest one inside the other) or raise a limit",
        s = if regions.len() == 1 { "" } else { "s" },
        list = regions.join(", "),
        are = if regions.len() == 1 { "is" } else { "are" },
        path = cycle.join(" -> ")
    )]
    RegionDeadlock {
        /// Replication index.
        replication: u32,
        /// The regions of the deadlock, in spec order.
        regions: Vec<String>,
        /// One cycle through them, its first region repeated at the end.
        cycle: Vec<String>,
        /// Simulated time at which it formed.
        time_s: f64,
    },
    /// The run was cancelled through its [`crate::Control`] (e.g. Ctrl-C).
    #[error("the run was cancelled")]
    Cancelled,
    /// The run configuration is invalid.
    #[error("invalid run configuration: {0}")]
    Config(String),
}
