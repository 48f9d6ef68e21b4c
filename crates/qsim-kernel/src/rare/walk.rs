//! The walk of service minus interarrival times of a single FCFS server,
//! under the exponential tilt that makes it drift up (see `tail.rs` for
//! how the tails use it, and `tandem.rs` for its use per station).
use crate::dist::{Dist, Tilted};
use crate::rng::SimRng;

/// The walk of service minus interarrival times under the tilt that makes
/// it drift up.
pub(super) struct Walk {
    pub(super) service: Tilted,
    pub(super) interarrival: Tilted,
    pub(super) theta: f64,
    /// ln M_B(theta) + ln M_A(-theta) at the theta used (0 up to the
    /// root's last bits), carried in the ratio.
    drift_log: f64,
}

impl Walk {
    /// The tilt theta > 0 with M_B(theta) M_A(-theta) = 1, by bisection,
    /// or why there is none.
    pub(super) fn new(service: &Dist, interarrival: &Dist) -> Result<Walk, String> {
        let f = |theta: f64| -> Option<f64> {
            Some(service.log_mgf(theta)? + interarrival.log_mgf(-theta)?)
        };
        let scale = 1.0 / service.mean().max(interarrival.mean());
        if service.log_mgf(1e-12 * scale).is_none() {
            return Err("the service time is lognormal: its tail is heavier than any exponential, and the tilt this method needs does not exist".into());
        }
        if interarrival.log_mgf(-1e-12 * scale).is_none() {
            return Err(
                "the interarrival time is lognormal, whose tilt has no closed form here".into(),
            );
        }
        // Above the root: f positive, or beyond the service's decay rate.
        let above = |theta: f64| f(theta).is_none_or(|v| v > 0.0);
        // Past 1e9 per mean time the sums lose their precision.
        let (mut lo, mut hi) = (0.0, scale);
        while !above(hi) {
            lo = hi;
            hi *= 2.0;
            if hi > 1e9 * scale {
                return Err("a customer never waits (no service time is longer than an interarrival time), or so rarely that the tilt exceeds 1e9 per mean time: P(wait > t) is 0 or nearly".into());
            }
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if above(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let (Some(drift_log), Some(s), Some(a)) =
            (f(lo), service.tilted(lo), interarrival.tilted(-lo))
        else {
            return Err("the tilt of the service and interarrival times could not be found".into());
        };
        if lo <= 0.0 {
            return Err("the tilt of the service and interarrival times could not be found".into());
        }
        Ok(Walk {
            service: s,
            interarrival: a,
            theta: lo,
            drift_log,
        })
    }

    /// One sample of the weighted first passage above `x` (>= 0), and its
    /// events (two per customer).
    pub(super) fn passage(&self, x: f64, rng: &mut SimRng) -> (f64, u64) {
        let (mut s, mut n) = (0.0, 0u64);
        while s <= x {
            s += self.service.sample(rng) - self.interarrival.sample(rng);
            n += 1;
        }
        ((n as f64 * self.drift_log - self.theta * s).exp(), 2 * n)
    }

    /// One sample of the weighted P(W + B > t), B the customer's own
    /// service drawn from the tilted law.
    pub(super) fn response(&self, t: f64, rng: &mut SimRng) -> (f64, u64) {
        let b = self.service.sample(rng);
        let ratio = (self.service.log_mgf() - self.theta * b).exp();
        if b > t {
            (ratio, 1)
        } else {
            let (w, e) = self.passage(t - b, rng);
            (ratio * w, e + 1)
        }
    }
}
