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

#[cfg(test)]
mod tests {
    //! Mutation testing (cargo-mutants with every kernel test, unit and
    //! integration; see ARCHITECTURE.md): the rule's rounds worked out by
    //! hand, so that a rule that never stops, or aims for the wrong number
    //! of replications, fails here. Of the file's 38 mutants every kernel
    //! test missed 9 before this test (all in `next`: `n >= 2` flipped, the
    //! aim's products and quotient, the 4-fold cap, the `+ 1`); with it,
    //! none. 14 do not build; 3 (the first-round compare) time out, the
    //! run never ending.

    use super::*;

    /// Replications whose system throughput is `x` and mean response `r`.
    fn reps(x: &[f64], r: &[f64]) -> Vec<ReplicationResult> {
        x.iter()
            .zip(r)
            .map(|(&x, &r)| {
                let mut rep = ReplicationResult::default();
                rep.system.throughput_per_s = x;
                rep.system.response_time_s = r;
                rep
            })
            .collect()
    }

    fn rounds(first: u32, target: f64, max: u32) -> ReplicationRounds {
        ReplicationRounds {
            first,
            precision: Some(Precision {
                relative_half_width: target,
                max_replications: max,
            }),
        }
    }

    #[test]
    fn stops_at_the_target_and_otherwise_aims_for_it() {
        let (flat, spread) = ([2.0; 4], [1.0, 1.0, 3.0, 3.0]);
        let r = rounds(4, 0.5, 40);
        assert_eq!(r.first(), 0..4);
        assert_eq!(r.max(), 40);
        // The first round comes whole.
        assert_eq!(r.next(&reps(&flat[..2], &flat[..2])), Some(2..4));
        // Equal replications: a half-width of 0, within any target.
        assert_eq!(r.next(&reps(&flat, &flat)), None);
        // 1, 1, 3, 3: mean 2, standard error sqrt(4/3) / 2 and t(3) =
        // 3.182446 give a relative half-width of 0.9187, so the target 0.5
        // needs 4 (0.9187 / 0.5)^2 = 13.5 replications: 14. Either figure
        // out of its target keeps the run going.
        assert_eq!(r.next(&reps(&flat, &spread)), Some(4..14));
        assert_eq!(r.next(&reps(&spread, &flat)), Some(4..14));
        // At most four times as many per round, never past the maximum.
        assert_eq!(rounds(4, 0.1, 40).next(&reps(&flat, &spread)), Some(4..16));
        assert_eq!(rounds(4, 0.1, 10).next(&reps(&flat, &spread)), Some(4..10));
        assert_eq!(rounds(4, 0.1, 4).next(&reps(&flat, &spread)), None);
        // A target a hair (one ulp) below the figure asks for just one
        // more, whether 4 (w / target)^2 rounds to 4 or above it.
        let w = crate::results::estimate(spread).ci95 / 2.0;
        let hair = f64::from_bits(w.to_bits() - 1);
        assert_eq!(rounds(4, hair, 40).next(&reps(&flat, &spread)), Some(4..5));
        // A first round of none still starts, one replication at a time
        // (4 times none is none); two are needed before the spread counts.
        assert_eq!(rounds(0, 0.5, 40).next(&[]), Some(0..1));
        // One replication says nothing of the spread: one more.
        assert_eq!(rounds(1, 0.5, 40).next(&reps(&[2.0], &[2.0])), Some(1..2));
        // Without a target the first round is all.
        let plain = ReplicationRounds {
            first: 4,
            precision: None,
        };
        assert_eq!(
            (plain.max(), plain.next(&reps(&spread, &spread))),
            (4, None)
        );
    }
}
