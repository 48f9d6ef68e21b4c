//! Simulation time: a non-negative, finite number of seconds.

use serde::Serialize;
use std::fmt;

/// A point in simulated time, in seconds since the start of a replication.
///
/// The invariant (finite and `>= 0`) is enforced by the constructor, so the
/// event list can order times by their bit patterns.
#[derive(Clone, Copy, Debug, PartialEq, Default, Serialize)]
#[serde(transparent)]
pub struct SimTime(f64);

impl SimTime {
    /// Time zero.
    pub const ZERO: SimTime = SimTime(0.0);

    /// Returns `None` when `seconds` is NaN, infinite or negative.
    pub fn new(seconds: f64) -> Option<SimTime> {
        (seconds.is_finite() && seconds >= 0.0).then_some(SimTime(seconds + 0.0))
    }

    /// The time in seconds.
    #[inline]
    pub fn seconds(self) -> f64 {
        self.0
    }

    /// This time plus a non-negative, finite duration.
    ///
    /// Callers guarantee `duration_s >= 0` (it comes from a validated
    /// distribution); the result saturates at `f64::MAX` rather than becoming
    /// infinite.
    #[inline]
    pub fn after(self, duration_s: f64) -> SimTime {
        debug_assert!(duration_s >= 0.0, "negative duration {duration_s}");
        SimTime((self.0 + duration_s).min(f64::MAX))
    }

    /// The bit pattern of the time; for non-negative finite floats the integer
    /// order equals the numeric order.
    #[inline]
    pub fn to_bits(self) -> u64 {
        self.0.to_bits()
    }
}

impl Eq for SimTime {}

impl PartialOrd for SimTime {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SimTime {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.to_bits().cmp(&other.to_bits())
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}s", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_nan_negative_and_infinite() {
        assert!(SimTime::new(f64::NAN).is_none());
        assert!(SimTime::new(-1e-9).is_none());
        assert!(SimTime::new(f64::INFINITY).is_none());
        assert_eq!(SimTime::new(-0.0).unwrap().to_bits(), 0);
    }

    #[test]
    fn bit_order_matches_numeric_order() {
        let xs = [0.0, 1e-300, 1e-9, 0.5, 1.0, 3.25, 1e12];
        for w in xs.windows(2) {
            let a = SimTime::new(w[0]).unwrap();
            let b = SimTime::new(w[1]).unwrap();
            assert!(a.to_bits() < b.to_bits());
            assert!(a < b);
        }
    }
}
