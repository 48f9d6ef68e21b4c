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
    /// The run configuration is invalid.
    #[error("invalid run configuration: {0}")]
    Config(String),
}
