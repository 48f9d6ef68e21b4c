//! A log-linear histogram of durations for percentiles with bounded memory.
//!
//! Buckets follow the binary exponent of the value with 128 linear
//! sub-buckets per power of two, read straight from the bits of the `f64`
//! (exponent and top 7 mantissa bits), so recording is a shift, a subtract,
//! a clamp and an increment. A bucket spans at most 1/128 < 0.8% of its
//! lower bound, so a percentile interpolated inside its bucket is within
//! 0.8% of the exact sample quantile. Range: 2^-30 s (0.93 ns) to 2^20 s
//! (12 days); smaller values fall in an underflow bucket read as [0, 2^-30),
//! larger ones in an overflow bucket capped at the largest value seen.
//!
//! The smallest value is kept exactly, with how many times it was recorded:
//! a distribution with an atom at its least value (a wait that is 0 for
//! every job that finds a free server, a response that is exactly the
//! deterministic service time for every job that does not queue) has its
//! quantiles inside the atom at that exact value, and the rest of the atom's
//! bucket is interpolated from it, never from the bucket's lower edge.

const SUB_BITS: u32 = 7;
const SUBS: usize = 1 << SUB_BITS;
const MIN_EXP: i64 = -30;
const MAX_EXP: i64 = 20;
const OCTAVES: usize = (MAX_EXP - MIN_EXP) as usize;
/// Underflow bucket, the log-linear buckets, overflow bucket.
const BUCKETS: usize = OCTAVES * SUBS + 2;
/// `bits >> (52 - SUB_BITS)` of 2^MIN_EXP.
const BASE: i64 = (1023 + MIN_EXP) << SUB_BITS;

/// Counts of durations in log-linear buckets.
#[derive(Clone, PartialEq)]
pub(crate) struct Histogram {
    /// A fixed-size array, so that the clamped index needs no bounds check.
    counts: Box<[u64; BUCKETS]>,
    max: f64,
    /// The least value recorded (+inf when empty).
    min: f64,
    /// How many recorded values equal `min` exactly (part of its bucket's
    /// count).
    at_min: u64,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Histogram {{ {} values, max {} }}",
            self.count(),
            self.max
        )
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new()
    }
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Histogram {
        Histogram {
            counts: vec![0; BUCKETS]
                .into_boxed_slice()
                .try_into()
                .expect("BUCKETS long"),
            max: 0.0,
            min: f64::INFINITY,
            at_min: 0,
        }
    }

    /// Records one duration (seconds, finite and >= 0).
    #[inline(always)]
    pub fn record(&mut self, x: f64) {
        let i = Histogram::index(x);
        // No running total: recording is the hot path, reading is once
        // per replication (`count` sums the buckets).
        self.counts[i] += 1;
        // x is never NaN: a plain compare, no NaN handling.
        if x > self.max {
            self.max = x;
        }
        if x <= self.min {
            self.note_min(x);
        }
    }

    /// The rare part of `record` (except for waits that are often 0): a
    /// value at or below the least so far.
    #[inline(never)]
    fn note_min(&mut self, x: f64) {
        if x < self.min {
            self.min = x;
            self.at_min = 0;
        }
        self.at_min += 1;
    }

    /// Forgets everything recorded.
    pub fn clear(&mut self) {
        self.counts.fill(0);
        self.max = 0.0;
        self.min = f64::INFINITY;
        self.at_min = 0;
    }

    /// Adds the counts of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.max = self.max.max(other.max);
        if other.min < self.min {
            self.min = other.min;
            self.at_min = other.at_min;
        } else if other.min == self.min {
            self.at_min += other.at_min;
        }
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    fn bounds(i: usize) -> (f64, f64) {
        if i == 0 {
            return (0.0, (MIN_EXP as f64).exp2());
        }
        if i == BUCKETS - 1 {
            let lo = (MAX_EXP as f64).exp2();
            return (lo, lo);
        }
        let k = i - 1;
        let e = (k / SUBS) as i64 + MIN_EXP;
        let sub = (k % SUBS) as f64;
        let base = (e as f64).exp2();
        let w = base / SUBS as f64;
        (base + sub * w, base + (sub + 1.0) * w)
    }

    /// The bucket a value falls in.
    #[inline(always)]
    fn index(x: f64) -> usize {
        let b = (x.to_bits() >> (52 - SUB_BITS)) as i64 - BASE + 1;
        b.clamp(0, BUCKETS as i64 - 1) as usize
    }

    /// Where bucket `i`'s values lie, for interpolation: its bounds (the
    /// overflow bucket reaching up to the largest value seen; the least
    /// value's bucket starting at that value), and how many of its values
    /// sit exactly at its lower bound (the least value's atom).
    fn span(&self, i: usize) -> (f64, f64, u64) {
        let (lo, hi) = Histogram::bounds(i);
        let hi = if i == BUCKETS - 1 {
            self.max.max(lo)
        } else {
            hi
        };
        if self.at_min > 0 && i == Histogram::index(self.min) {
            (self.min, hi.max(self.min), self.at_min)
        } else {
            (lo, hi, 0)
        }
    }

    /// The fraction of values at most `x`, interpolated linearly inside
    /// the bucket holding `x` (the inverse of [`Histogram::quantiles`]); 0
    /// when empty.
    pub fn cdf(&self, x: f64) -> f64 {
        let total = self.count();
        if total == 0 || x < self.min {
            return 0.0;
        }
        if x >= self.max {
            return 1.0;
        }
        let i = Histogram::index(x.max(0.0));
        let below: u64 = self.counts[..i].iter().sum();
        let (lo, hi, atom) = self.span(i);
        let frac = if hi > lo {
            ((x - lo) / (hi - lo)).clamp(0.0, 1.0)
        } else {
            1.0
        };
        let spread = (self.counts[i] - atom) as f64;
        (below as f64 + atom as f64 + frac * spread) / total as f64
    }

    /// The quantiles `qs` (ascending, in [0, 1]), interpolated linearly
    /// inside the bucket holding each rank (a rank inside the least value's
    /// atom is that value exactly); 0 when empty.
    pub fn quantiles<const N: usize>(&self, qs: [f64; N]) -> [f64; N] {
        let mut out = [0.0; N];
        let total = self.count();
        if total == 0 {
            return out;
        }
        let n = total as f64;
        let mut cum = 0.0;
        let mut k = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let c = c as f64;
            while k < N && qs[k] * n <= cum + c {
                let (lo, hi, atom) = self.span(i);
                let rank = qs[k] * n - cum;
                let atom = atom as f64;
                out[k] = if rank <= atom {
                    lo
                } else {
                    let frac = ((rank - atom) / (c - atom)).clamp(0.0, 1.0);
                    (lo + frac * (hi - lo)).min(self.max)
                };
                k += 1;
            }
            cum += c;
            if k == N {
                break;
            }
        }
        for v in out.iter_mut().skip(k) {
            *v = self.max;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    //! Mutation testing (cargo-mutants, see ARCHITECTURE.md): these tests
    //! catch 164 of the 171 mutants of this file and time out 1 (3 do not
    //! build). The 3 left are equivalent: `>=` for `>` when `record` keeps
    //! the largest value (an equal value leaves it as it is), in `span`
    //! (`at_min` is 0 only in an empty histogram, which is never read) and
    //! in `cdf`'s interpolation (a bucket of zero width is only the
    //! overflow bucket at the largest value, which returns 1 before it).

    use super::*;

    #[test]
    fn quantiles_within_one_percent() {
        let mut h = Histogram::new();
        // 1..=100000 microseconds, uniform.
        let n = 100_000;
        for i in 1..=n {
            h.record(i as f64 * 1e-6);
        }
        let qs = h.quantiles([0.5, 0.9, 0.99, 0.999]);
        for (q, v) in [0.5, 0.9, 0.99, 0.999].iter().zip(qs) {
            let exact = q * n as f64 * 1e-6;
            assert!((v / exact - 1.0).abs() < 0.01, "q{q}: {v} vs {exact}");
        }
    }

    #[test]
    fn cdf_inverts_quantiles() {
        let mut h = Histogram::new();
        for i in 1..=100_000 {
            h.record(f64::from(i) * 1e-6);
        }
        for q in [0.01, 0.5, 0.9, 0.99, 0.999] {
            let [x] = h.quantiles([q]);
            assert!((h.cdf(x) - q).abs() < 1e-9, "q{q}: cdf({x}) = {}", h.cdf(x));
        }
        assert_eq!(h.cdf(1.0), 1.0);
        assert_eq!(Histogram::new().cdf(1.0), 0.0);
    }

    #[test]
    fn extremes_are_clamped() {
        let mut h = Histogram::new();
        h.record(0.0);
        h.record(1e-12);
        h.record(5e7);
        let [a, b] = h.quantiles([0.0, 1.0]);
        assert!((0.0..1e-9).contains(&a));
        assert_eq!(b, 5e7);
    }

    #[test]
    fn an_atom_at_zero_is_zero() {
        // 90% of the waits are 0 (M/M/1 at rho 0.1): p50 and p90 are 0
        // exactly, not a point inside the underflow bucket.
        let mut h = Histogram::new();
        for i in 0..1000 {
            h.record(if i % 10 == 0 {
                1e-3 * f64::from(i + 1)
            } else {
                0.0
            });
        }
        assert_eq!(h.quantiles([0.0, 0.5, 0.9]), [0.0; 3]);
        assert!(h.quantiles([0.95])[0] > 1e-3);
        assert!((h.cdf(0.0) - 0.9).abs() < 1e-12, "{}", h.cdf(0.0));
        // The atom survives merging, in either order.
        let mut a = Histogram::new();
        a.record(0.0);
        a.record(0.5);
        let mut b = Histogram::new();
        b.record(0.25);
        b.record(0.0);
        b.record(0.0);
        let mut ab = a.clone();
        ab.merge(&b);
        let mut ba = b.clone();
        ba.merge(&a);
        for m in [ab, ba] {
            assert_eq!(m.quantiles([0.6]), [0.0]);
            assert!(m.quantiles([0.7])[0] > 0.0);
        }
    }

    #[test]
    fn an_atom_at_the_least_value_is_exact() {
        // Half the responses are exactly the deterministic service time 10
        // ms (no queueing), the rest spread above it in the same bucket.
        let mut h = Histogram::new();
        for i in 0..1000 {
            let x = if i % 2 == 0 {
                0.01
            } else {
                0.01 + 1e-7 * f64::from(i)
            };
            h.record(x);
        }
        assert_eq!(h.quantiles([0.1, 0.5]), [0.01, 0.01]);
        let [p75] = h.quantiles([0.75]);
        assert!(p75 > 0.01 && p75 < 0.01 + 1e-4, "{p75}");
        assert_eq!(h.cdf(0.0099), 0.0);
        assert!((h.cdf(0.01) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn buckets_are_read_from_the_bits() {
        // 1.0 = 2^0 is the first sub-bucket of the 31st octave above 2^-30
        // (after the underflow bucket); it spans 1/128 of its octave.
        let i = Histogram::index(1.0);
        assert_eq!(i, 1 + 30 * SUBS);
        assert_eq!(Histogram::bounds(i), (1.0, 1.0 + 1.0 / 128.0));
        assert_eq!(Histogram::index(1.5), i + 64);
        assert_eq!(Histogram::bounds(i + 64), (1.5, 1.5 + 1.0 / 128.0));
        // The underflow bucket holds [0, 2^-30), the overflow bucket 2^20 s
        // and beyond.
        assert_eq!(Histogram::index(0.0), 0);
        assert_eq!(Histogram::index(0.9 * 2f64.powi(-30)), 0);
        assert_eq!(Histogram::index(2f64.powi(-30)), 1);
        assert_eq!(Histogram::bounds(0), (0.0, 2f64.powi(-30)));
        assert_eq!(Histogram::index(2f64.powi(20)), BUCKETS - 1);
        assert_eq!(Histogram::index(1e300), BUCKETS - 1);
        assert_eq!(
            Histogram::bounds(BUCKETS - 1),
            (2f64.powi(20), 2f64.powi(20))
        );
        assert_eq!(Histogram::index(2f64.powi(20) * 0.999), BUCKETS - 2);
    }

    #[test]
    fn clear_forgets_everything_and_debug_counts() {
        let mut h = Histogram::new();
        for x in [0.5, 0.25, 0.25] {
            h.record(x);
        }
        assert_eq!(format!("{h:?}"), "Histogram { 3 values, max 0.5 }");
        assert_eq!((h.count(), h.max, h.min, h.at_min), (3, 0.5, 0.25, 2));
        h.clear();
        assert_eq!(h, Histogram::new());
        assert_eq!(h, Histogram::default());
        assert_eq!(h.count(), 0);
        assert_eq!(h.quantiles([0.5]), [0.0]);
    }

    #[test]
    fn merging_keeps_counts_largest_and_least() {
        let of = |xs: &[f64]| {
            let mut h = Histogram::new();
            for &x in xs {
                h.record(x);
            }
            h
        };
        let mut a = of(&[0.1, 0.5]);
        a.merge(&of(&[0.1, 0.1, 2.0]));
        assert_eq!((a.count(), a.max, a.min, a.at_min), (5, 2.0, 0.1, 3));
        assert_eq!(a.quantiles([1.0]), [2.0]);
        // A smaller least value replaces the atom; a larger one leaves it.
        a.merge(&of(&[0.05]));
        assert_eq!((a.min, a.at_min), (0.05, 1));
        a.merge(&of(&[0.07, 0.07]));
        assert_eq!((a.count(), a.min, a.at_min, a.max), (8, 0.05, 1, 2.0));
        // Merging an empty histogram changes nothing.
        let before = a.clone();
        a.merge(&Histogram::new());
        assert_eq!(a, before);
    }

    #[test]
    fn cdf_is_one_at_the_largest_value_inside_its_bucket() {
        // 1.3 lies inside its bucket: the interpolation alone would give
        // less than 1.
        let mut h = Histogram::new();
        for x in [1.0, 1.3] {
            h.record(x);
        }
        assert_eq!(h.cdf(1.3), 1.0);
        assert_eq!(h.cdf(0.99), 0.0);
        assert_eq!(h.cdf(1.0), 0.5);
        // A quarter into the span of 1.3's bucket: 1/2 + 1/4 · 1/2.
        let (lo, hi) = Histogram::bounds(Histogram::index(1.3));
        let x = lo + (hi - lo) / 4.0;
        assert!(x < 1.3);
        assert!((h.cdf(x) - 0.625).abs() < 1e-12, "{}", h.cdf(x));
        // The largest quantile is the largest value, never beyond it.
        assert_eq!(h.quantiles([0.999, 1.0]), [1.3, 1.3]);
    }

    #[test]
    fn an_atom_shares_its_bucket_in_proportion() {
        // 1.0 twice (the atom at the least value) and 1.004 once, all in the
        // bucket [1, 1 + 1/128): halfway through it the cdf is (2 + 1/2)/3,
        // and the 0.8 quantile (rank 2.4) lies 0.4 of the way through it.
        let mut h = Histogram::new();
        for x in [1.0, 1.0, 1.004] {
            h.record(x);
        }
        let w = 1.0 / 128.0;
        assert!((h.cdf(1.0 + w / 2.0) - 2.5 / 3.0).abs() < 1e-12);
        let [q] = h.quantiles([0.8]);
        assert!((q - (1.0 + 0.4 * w)).abs() < 1e-12, "{q}");
        // Below the least value in its own bucket: nothing yet.
        let mut g = Histogram::new();
        for x in [1.3, 2.0] {
            g.record(x);
        }
        assert_eq!(Histogram::index(1.299), Histogram::index(1.3));
        assert_eq!(g.cdf(1.299), 0.0);
    }
}
