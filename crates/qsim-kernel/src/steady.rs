//! Can the figures be trusted? Segment means within a replication (an
//! interval from one replication), steady-state checks on the segment series
//! and across replications, which give [`crate::RunWarning`]s.

use crate::results::{Estimate, ReplicationResult, t975};

/// Equal parts of each replication's measured window whose cumulative
/// figures are recorded (see [`ReplicationResult::checkpoints`]).
pub const SEGMENTS: usize = 32;

/// Segment means whose lag-1 autocorrelation is at least this are merged
/// pairwise (at most twice) before they give an interval.
const MAX_LAG1: f64 = 0.3;

/// A drift between the two halves of the measured window smaller than this
/// (relative to the mean) is not reported, however significant: long runs
/// make tiny, harmless drifts significant.
const MIN_DRIFT: f64 = 0.02;

/// A figure of a replication and the weight that makes it additive: the
/// figure times its weight is a sum that grows over the run (time for rates
/// and time averages, completions or departures for response times).
pub(crate) struct Figure<'a> {
    pub value: &'a dyn Fn(&ReplicationResult) -> f64,
    pub weight: &'a dyn Fn(&ReplicationResult) -> f64,
}

impl Figure<'_> {
    /// The figure over the part between cumulative checkpoints `a` (None:
    /// the start) and `b`; None when that part has no weight.
    fn between(&self, a: Option<&ReplicationResult>, b: &ReplicationResult) -> Option<f64> {
        let (va, wa) = a.map_or((0.0, 0.0), |a| ((self.value)(a), (self.weight)(a)));
        let (vb, wb) = ((self.value)(b), (self.weight)(b));
        let w = wb - wa;
        (w > 0.0 && w.is_finite()).then(|| (vb * wb - va * wa) / w)
    }

    /// The segment series of `r` in segments of `k` checkpoints each.
    fn segments(&self, r: &ReplicationResult, k: usize) -> Option<Vec<f64>> {
        let cps = &r.checkpoints;
        if cps.len() != SEGMENTS {
            return None;
        }
        (0..SEGMENTS / k)
            .map(|j| {
                let a = (j > 0).then(|| &cps[j * k - 1]);
                self.between(a, &cps[(j + 1) * k - 1])
            })
            .collect()
    }

    /// The figure over the first and the second half of the window.
    fn halves(&self, r: &ReplicationResult) -> Option<(f64, f64)> {
        let cps = &r.checkpoints;
        if cps.len() != SEGMENTS {
            return None;
        }
        let mid = &cps[SEGMENTS / 2 - 1];
        Some((
            self.between(None, mid)?,
            self.between(Some(mid), &cps[SEGMENTS - 1])?,
        ))
    }
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, v)
}

fn lag1(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let den: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    if den == 0.0 {
        return 0.0;
    }
    xs.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum::<f64>() / den
}

/// The segment series of `r` with the fewest merges (1, 2 or 4 checkpoints
/// per segment) whose lag-1 autocorrelation is below [`MAX_LAG1`].
fn uncorrelated_segments(fig: &Figure<'_>, r: &ReplicationResult) -> Option<Vec<f64>> {
    [1, 2, 4]
        .into_iter()
        .filter_map(|k| fig.segments(r, k))
        .find(|xs| lag1(xs) < MAX_LAG1)
}

/// The estimate of a figure from one replication: its value with a Student
/// t interval over uncorrelated segment means, or no interval (NaN) and
/// `false` when the segments stay correlated or there are none.
pub(crate) fn segment_estimate(fig: &Figure<'_>, r: &ReplicationResult) -> (Estimate, bool) {
    let mean = (fig.value)(r);
    match uncorrelated_segments(fig, r) {
        Some(xs) => {
            let (_, var) = mean_var(&xs);
            let n = xs.len();
            let ci95 = t975(n as u32 - 1) * (var / n as f64).sqrt();
            (Estimate { mean, ci95 }, true)
        }
        None => (
            Estimate {
                mean,
                ci95: f64::NAN,
            },
            false,
        ),
    }
}

/// Whether `fig` drifts between the halves of the measured windows: with
/// several replications, the paired difference (second half − first half)
/// across them; with one, the two halves' uncorrelated segment means. A
/// drift is reported when its 95% interval excludes 0 and it exceeds
/// [`MIN_DRIFT`] of the mean. Returns the two halves' means when it does.
pub(crate) fn drift(fig: &Figure<'_>, reps: &[ReplicationResult]) -> Option<(f64, f64)> {
    let (diff, half_width, first, second) = if reps.len() >= 2 {
        let halves: Vec<(f64, f64)> = reps.iter().map(|r| fig.halves(r)).collect::<Option<_>>()?;
        let d: Vec<f64> = halves.iter().map(|(a, b)| b - a).collect();
        let (m, v) = mean_var(&d);
        let n = d.len();
        let first = halves.iter().map(|h| h.0).sum::<f64>() / n as f64;
        let second = halves.iter().map(|h| h.1).sum::<f64>() / n as f64;
        (m, t975(n as u32 - 1) * (v / n as f64).sqrt(), first, second)
    } else {
        let r = reps.first()?;
        let (first, second) = fig.halves(r)?;
        // Segments that stay correlated make any test overconfident: take
        // the most merged series then, 4 segments per half.
        let xs = uncorrelated_segments(fig, r).or_else(|| fig.segments(r, 4))?;
        let h = xs.len() / 2;
        let (m1, v1) = mean_var(&xs[..h]);
        let (m2, v2) = mean_var(&xs[h..]);
        let se = (v1 / h as f64 + v2 / (xs.len() - h) as f64).sqrt();
        (m2 - m1, t975(xs.len() as u32 - 2) * se, first, second)
    };
    let scale = (first.abs() + second.abs()) / 2.0;
    // Twice the 95% half-width: the checks run on two figures of every
    // run, and a false alarm costs trust too (about a 0.5% level).
    (diff.abs() > 2.0 * half_width && diff.abs() > MIN_DRIFT * scale).then_some((first, second))
}
