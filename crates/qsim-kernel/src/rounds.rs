//! Which replications a run needs: the one rule, shared by [`crate::run`]
//! and by sweeps, for adding replications until a precision target is met.

use crate::config::{Precision, RunConfig};
use crate::results::{ReplicationResult, estimate};
use std::ops::Range;

/// The replications of one run, in deterministic rounds.
///
/// The first round is replications `0..config.replications`. Without a
/// [`Precision`] target that is all. With one, [`ReplicationRounds::next`]
/// looks at the replications so far and either stops (both the system
/// throughput and the mean response time have a 95% CI half-width of at
/// most `relative_half_width` of their mean, with at least 2
/// replications, or the maximum is reached) or names the next round. A
/// round's size depends only on the results so far (the half-width shrinks
/// like 1/√n: aim for the n that would reach the target, growing at most
/// 4-fold per round), so any program that runs the same rounds, on any
/// number of threads, runs the same replications and gets the same numbers.
///
/// ```
/// use qsim_kernel::*;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let spec = NetworkSpec {
/// #     stations: vec![StationSpec {
/// #         name: "server".into(),
/// #         kind: StationKind::Queue { servers: 1, discipline: Discipline::Fcfs },
/// #         service: vec![Some(Dist::exponential(1.0)?)],
/// #         speed: None,
/// #     }],
/// #     classes: vec![ClassSpec {
/// #         name: "default".into(),
/// #         workload: Workload::Open { interarrival: Dist::exponential(2.0)? },
/// #         routing: Routing::Sequence(vec![0]),
/// #         priority: 0,
/// #     }],
/// #     ..NetworkSpec::default()
/// # };
/// # let network = Network::new(spec)?;
/// let config = RunConfig {
///     stop: Stop::Jobs(2_000),
///     replications: 2,
///     precision: Some(Precision { relative_half_width: 0.05, max_replications: 30 }),
///     ..RunConfig::default()
/// };
/// // Run each round one replication after the other (any parallel runner
/// // that returns the round in index order gives the same results).
/// let reps = ReplicationRounds::new(&config).run(|round| {
///     round.map(|i| run_replication(&network, &config, i)).collect::<Result<Vec<_>, _>>()
/// })?;
/// // Compared as printed: a percentile the run is too short for is NaN
/// // in both, and NaN != NaN.
/// assert_eq!(
///     format!("{:?}", summarize(&network, &config, &reps)),
///     format!("{:?}", run(&network, &config)?)
/// );
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReplicationRounds {
    first: u32,
    precision: Option<Precision>,
}

impl ReplicationRounds {
    /// The rounds `config` asks for (its `replications` and `precision`).
    pub fn new(config: &RunConfig) -> ReplicationRounds {
        ReplicationRounds {
            first: config.replications,
            precision: config.precision,
        }
    }

    /// The first round: replications `0..config.replications`.
    pub fn first(&self) -> Range<u32> {
        0..self.first
    }

    /// The most replications the run may need.
    pub fn max(&self) -> u32 {
        match self.precision {
            Some(p) => p.max_replications.max(self.first),
            None => self.first,
        }
    }

    /// After replications `0..done.len()` (`done` in index order), the next
    /// round, or `None` when the run is complete.
    pub fn next(&self, done: &[ReplicationResult]) -> Option<Range<u32>> {
        let n = done.len() as u32;
        if n < self.first {
            return Some(n..self.first);
        }
        let p = self.precision?;
        let max = self.max();
        if n >= max {
            return None;
        }
        let rel = |xs: Vec<f64>| {
            let e = estimate(xs);
            if e.mean != 0.0 {
                e.ci95 / e.mean.abs()
            } else {
                0.0
            }
        };
        let worst = rel(done.iter().map(|r| r.system.throughput_per_s).collect())
            .max(rel(done.iter().map(|r| r.system.response_time_s).collect()));
        if n >= 2 && worst <= p.relative_half_width {
            return None;
        }
        let wanted = if n >= 2 {
            (f64::from(n) * (worst / p.relative_half_width).powi(2)).ceil() as u64
        } else {
            2
        };
        let target = (wanted.min(u64::from(n) * 4).max(u64::from(n) + 1) as u32).min(max);
        Some(n..target)
    }

    /// Runs every round with `run_round`, which must return the
    /// replications of the range it is given, in index order, and returns
    /// them all (in index order). The first error stops the run.
    pub fn run<E>(
        &self,
        mut run_round: impl FnMut(Range<u32>) -> Result<Vec<ReplicationResult>, E>,
    ) -> Result<Vec<ReplicationResult>, E> {
        let mut done: Vec<ReplicationResult> = Vec::new();
        while let Some(round) = self.next(&done) {
            let expected = round.len();
            let finished = run_round(round)?;
            debug_assert_eq!(finished.len(), expected, "a round returns its replications");
            done.extend(finished);
        }
        Ok(done)
    }
}
