//! The walk of service minus interarrival times of a single FCFS server,
//! under the exponential tilt that makes it drift up (see `tail.rs` for
//! how the tails use it, and `tandem.rs` for its use per station).
use crate::dist::{Dist, Tilted, ln_sum_exp, unit};
use crate::rng::SimRng;

/// One draw from a tilted law, as every rare-event tail takes it (the
/// `tilt` bias scales it here).
pub(super) fn draw(t: &Tilted, rng: &mut SimRng) -> f64 {
    let x = t.sample(rng);
    #[cfg(feature = "bias")]
    let x = crate::bias::tilted_draw(x);
    x
}

/// The service law of an arbitrary customer: each class's law with its
/// share of the arrivals (one law with share 1 for one class).
#[derive(Clone, Debug)]
pub(super) struct Mix(pub(super) Vec<(f64, Dist)>);

impl Mix {
    /// One law.
    pub(super) fn one(d: Dist) -> Mix {
        Mix(vec![(1.0, d)])
    }

    /// The mean.
    pub(super) fn mean(&self) -> f64 {
        self.0.iter().map(|(p, d)| p * d.mean()).sum()
    }

    /// ln of sum_k p_k M_k(theta), or `None` where a part's is.
    pub(super) fn log_mgf(&self, theta: f64) -> Option<f64> {
        let logs: Vec<f64> = self
            .0
            .iter()
            .map(|(p, d)| Some(p.ln() + d.log_mgf(theta)?))
            .collect::<Option<_>>()?;
        Some(ln_sum_exp(&logs))
    }

    /// The mix tilted by theta: part k with weight p_k M_k(theta) /
    /// M(theta), itself tilted.
    fn tilted(&self, theta: f64) -> Option<TiltedMix> {
        let log_mgf = self.log_mgf(theta)?;
        let mut acc = 0.0;
        let mut cumulative = Vec::new();
        let mut parts = Vec::new();
        for (p, d) in &self.0 {
            let t = d.tilted(theta)?;
            acc += (p.ln() + t.log_mgf() - log_mgf).exp();
            cumulative.push(acc);
            parts.push(t);
        }
        Some(TiltedMix {
            cumulative,
            parts,
            log_mgf,
        })
    }
}

/// A [`Mix`] tilted by theta.
pub(super) struct TiltedMix {
    cumulative: Vec<f64>,
    parts: Vec<Tilted>,
    log_mgf: f64,
}

impl TiltedMix {
    /// ln M(theta) of the mix.
    pub(super) fn log_mgf(&self) -> f64 {
        self.log_mgf
    }

    /// One draw: a part by its tilted weight (no draw for one part), then
    /// its tilted law.
    pub(super) fn sample(&self, rng: &mut SimRng) -> f64 {
        if self.parts.len() == 1 {
            return draw(&self.parts[0], rng);
        }
        let u = unit(rng) * self.cumulative[self.cumulative.len() - 1];
        let k = self
            .cumulative
            .partition_point(|&c| c <= u)
            .min(self.parts.len() - 1);
        draw(&self.parts[k], rng)
    }
}

/// The walk of service minus interarrival times under the tilt that makes
/// it drift up.
pub(super) struct Walk {
    pub(super) service: TiltedMix,
    pub(super) interarrival: Tilted,
    pub(super) theta: f64,
    /// ln M_B(theta) + ln M_A(-theta) at the theta used (0 up to the
    /// root's last bits), carried in the ratio.
    drift_log: f64,
}

impl Walk {
    /// The tilt theta > 0 with M_B(theta) M_A(-theta) = 1, by bisection,
    /// or why there is none.
    pub(super) fn new(service: &Mix, interarrival: &Dist) -> Result<Walk, String> {
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
            s += self.service.sample(rng) - draw(&self.interarrival, rng);
            n += 1;
        }
        ((n as f64 * self.drift_log - self.theta * s).exp(), 2 * n)
    }

    /// One sample of the weighted P(W + B > t), B the customer's own
    /// service drawn from the tilted law: an arbitrary customer's, or
    /// (`own`) one class's tilted by the walk's theta.
    pub(super) fn response(&self, own: Option<&Tilted>, t: f64, rng: &mut SimRng) -> (f64, u64) {
        let (b, log_mgf) = match own {
            Some(own) => (draw(own, rng), own.log_mgf()),
            None => (self.service.sample(rng), self.service.log_mgf()),
        };
        let ratio = (log_mgf - self.theta * b).exp();
        if b > t {
            (ratio, 1)
        } else {
            let (w, e) = self.passage(t - b, rng);
            (ratio * w, e + 1)
        }
    }
}
