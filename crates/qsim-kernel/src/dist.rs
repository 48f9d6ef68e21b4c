//! Probability distributions for service, think and inter-arrival times.
//!
//! Every constructor validates its parameters and returns [`DistError`] with
//! what was found and what was expected; a constructed [`Dist`] always samples
//! finite, non-negative values.
//!
//! Ranges: every time-valued parameter and the mean lie in
//! `[0, MAX_TIME_S]` (1e9 s), and the standard deviation is at most
//! [`MAX_STD_DEV_S`] (1e12 s). An f64 event time resolves about 1e-7 s at
//! 1e9 s; past these bounds sums of times lose the small terms and the
//! statistics would be silently wrong.

use rand::Rng;
use rand_distr::{Distribution, Gamma, LogNormal};
use std::sync::Arc;
use thiserror::Error;

mod tilt;
pub use tilt::Tilted;
pub(crate) use tilt::ln_sum_exp;

/// A parameter of a distribution was out of range.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{message}")]
pub struct DistError {
    message: String,
}

impl DistError {
    fn new(message: impl Into<String>) -> DistError {
        DistError {
            message: message.into(),
        }
    }
}

/// Largest mean or time-valued parameter of a distribution, in seconds: an
/// f64 time still resolves about 1e-7 s at 1e9 s (2^-53 relative).
pub const MAX_TIME_S: f64 = 1e9;

/// Largest standard deviation of a distribution, in seconds: beyond it the
/// tail draws times whose sums f64 cannot resolve (and the variance of a
/// heavier tail may not even be finite).
pub const MAX_STD_DEV_S: f64 = 1e12;

/// Latest simulated time a run may reach, in seconds: a thousand times
/// [`MAX_TIME_S`], where an f64 time still resolves about 1e-4 s. A run whose
/// next event lies beyond fails with
/// [`RunError::ClockLimit`](crate::RunError::ClockLimit) rather than
/// integrating statistics over times it cannot resolve.
pub const MAX_CLOCK_S: f64 = 1e12;

/// Most phases of an Erlang distribution drawn as a sum of exponentials;
/// above it a draw is one gamma variate of integer shape k (the same
/// distribution, O(1) per draw).
const ERLANG_SUM_MAX_K: u32 = 32;

/// A number as a message shows it: `1e300` rather than 301 digits.
fn num(x: f64) -> String {
    if x.is_finite() && x != 0.0 && !(1e-4..1e15).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

fn positive(name: &str, x: f64) -> Result<f64, DistError> {
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(DistError::new(format!(
            "{name} must be a positive finite number, found {}",
            num(x)
        )))
    }
}

fn non_negative(name: &str, x: f64) -> Result<f64, DistError> {
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err(DistError::new(format!(
            "{name} must be a finite number >= 0, found {}",
            num(x)
        )))
    }
}

/// A time in seconds: finite, positive and at most [`MAX_TIME_S`].
fn positive_time(name: &str, x: f64) -> Result<f64, DistError> {
    at_most_max_time(name, positive(name, x)?)
}

/// A time in seconds: finite, `>= 0` and at most [`MAX_TIME_S`].
fn time(name: &str, x: f64) -> Result<f64, DistError> {
    at_most_max_time(name, non_negative(name, x)?)
}

fn at_most_max_time(name: &str, x: f64) -> Result<f64, DistError> {
    if x <= MAX_TIME_S {
        Ok(x)
    } else {
        Err(DistError::new(format!(
            "{name} must be at most 1e9 s (an f64 simulation clock cannot resolve short times next to longer ones), found {}",
            num(x)
        )))
    }
}

/// The mean and standard deviation of a built distribution are in range.
fn in_range(name: &str, d: Dist) -> Result<Dist, DistError> {
    let (mean, var) = (d.mean(), d.variance());
    if !mean.is_finite() || mean > MAX_TIME_S {
        return Err(DistError::new(format!(
            "{name} has a mean of {} s; at most 1e9 s can be simulated",
            num(mean)
        )));
    }
    if !var.is_finite() || var.sqrt() > MAX_STD_DEV_S {
        return Err(DistError::new(format!(
            "{name} has a standard deviation of {} s; at most 1e12 s can be simulated (its tail would draw times the simulation clock cannot resolve)",
            num(var.sqrt())
        )));
    }
    Ok(d)
}

/// A validated distribution of a non-negative duration in seconds.
#[derive(Clone, Debug)]
pub struct Dist {
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    Exponential {
        mean: f64,
    },
    Deterministic {
        value: f64,
    },
    Uniform {
        min: f64,
        width: f64,
    },
    Erlang {
        k: u32,
        phase_mean: f64,
        /// The same law as one gamma variate, for k above `ERLANG_SUM_MAX_K`.
        gamma: Option<Gamma<f64>>,
    },
    HyperExp {
        p: f64,
        mean1: f64,
        mean2: f64,
    },
    LogNormal {
        inner: LogNormal<f64>,
        mu: f64,
        sigma: f64,
    },
    Gamma {
        inner: Gamma<f64>,
        shape: f64,
        scale: f64,
    },
    Empirical {
        samples: Arc<[f64]>,
        mean: f64,
        var: f64,
    },
}

impl Dist {
    /// Exponential with the given mean (rate = 1/mean).
    pub fn exponential(mean: f64) -> Result<Dist, DistError> {
        let mean = positive_time("exponential mean", mean)?;
        Ok(Dist {
            kind: Kind::Exponential { mean },
        })
    }

    /// Always `value` (which may be 0: an instantaneous step).
    pub fn deterministic(value: f64) -> Result<Dist, DistError> {
        let value = time("deterministic value", value)?;
        Ok(Dist {
            kind: Kind::Deterministic { value },
        })
    }

    /// Uniform on `[min, max)`.
    pub fn uniform(min: f64, max: f64) -> Result<Dist, DistError> {
        let min = time("uniform min", min)?;
        let max = time("uniform max", max)?;
        if max < min {
            return Err(DistError::new(format!(
                "uniform max must be >= min, found min {min} and max {max}"
            )));
        }
        Ok(Dist {
            kind: Kind::Uniform {
                min,
                width: max - min,
            },
        })
    }

    /// Erlang with `k` phases and the given overall mean (SCV = 1/k).
    pub fn erlang(k: u32, mean: f64) -> Result<Dist, DistError> {
        if k == 0 {
            return Err(DistError::new("erlang k must be at least 1, found 0"));
        }
        let mean = positive_time("erlang mean", mean)?;
        let phase_mean = mean / f64::from(k);
        let gamma = if k > ERLANG_SUM_MAX_K {
            Some(
                Gamma::new(f64::from(k), phase_mean)
                    .map_err(|e| DistError::new(format!("erlang: {e}")))?,
            )
        } else {
            None
        };
        Ok(Dist {
            kind: Kind::Erlang {
                k,
                phase_mean,
                gamma,
            },
        })
    }

    /// Two-phase hyperexponential: with probability `p` exponential with mean
    /// `mean1`, otherwise exponential with mean `mean2`.
    pub fn hyperexponential(p: f64, mean1: f64, mean2: f64) -> Result<Dist, DistError> {
        if !(p.is_finite() && (0.0..=1.0).contains(&p)) {
            return Err(DistError::new(format!(
                "hyperexponential p must be in [0, 1], found {p}"
            )));
        }
        let mean1 = positive_time("hyperexponential mean1", mean1)?;
        let mean2 = positive_time("hyperexponential mean2", mean2)?;
        Ok(Dist {
            kind: Kind::HyperExp { p, mean1, mean2 },
        })
    }

    /// Lognormal from the mean and standard deviation of the underlying normal.
    pub fn lognormal(mu: f64, sigma: f64) -> Result<Dist, DistError> {
        if !mu.is_finite() {
            return Err(DistError::new(format!(
                "lognormal mu must be finite, found {mu}"
            )));
        }
        let sigma = non_negative("lognormal sigma", sigma)?;
        let inner =
            LogNormal::new(mu, sigma).map_err(|e| DistError::new(format!("lognormal: {e}")))?;
        let mean = (mu + sigma * sigma / 2.0).exp();
        if !mean.is_finite() || mean > MAX_TIME_S {
            return Err(DistError::new(format!(
                "lognormal with mu {} and sigma {} has the mean exp(mu + sigma^2/2) = {} s; at most 1e9 s can be simulated (lower mu or sigma)",
                num(mu),
                num(sigma),
                num(mean)
            )));
        }
        in_range(
            "lognormal",
            Dist {
                kind: Kind::LogNormal { inner, mu, sigma },
            },
        )
    }

    /// Gamma with shape `k` and scale `theta` (mean k·theta).
    pub fn gamma(shape: f64, scale: f64) -> Result<Dist, DistError> {
        let shape = positive("gamma shape", shape)?;
        let scale = positive_time("gamma scale", scale)?;
        let inner = Gamma::new(shape, scale).map_err(|e| DistError::new(format!("gamma: {e}")))?;
        in_range(
            "gamma",
            Dist {
                kind: Kind::Gamma {
                    inner,
                    shape,
                    scale,
                },
            },
        )
    }

    /// Resampling uniformly from a list of observed durations.
    pub fn empirical(samples: &[f64]) -> Result<Dist, DistError> {
        if samples.is_empty() {
            return Err(DistError::new(
                "empirical needs at least one sample, found an empty list",
            ));
        }
        for (i, &x) in samples.iter().enumerate() {
            time(&format!("empirical sample {i}"), x)?;
        }
        let n = samples.len() as f64;
        let mean = samples.iter().sum::<f64>() / n;
        let var = samples.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        Ok(Dist {
            kind: Kind::Empirical {
                samples: samples.into(),
                mean,
                var,
            },
        })
    }

    /// A distribution of the given family with this mean and squared
    /// coefficient of variation (variance / mean²).
    ///
    /// Families: `exponential` (scv must be 1), `deterministic` (scv 0),
    /// `uniform` (scv <= 1/3), `erlang` (scv = 1/k for an integer k),
    /// `hyperexponential` (scv >= 1, balanced means), `lognormal`, `gamma`.
    pub fn from_mean_scv(family: Family, mean: f64, scv: f64) -> Result<Dist, DistError> {
        let scv = non_negative("scv", scv)?;
        if mean.is_finite() && mean > 0.0 {
            let sd = mean * scv.sqrt();
            if sd > MAX_STD_DEV_S {
                return Err(DistError::new(format!(
                    "mean {} s with scv {} gives a standard deviation of {} s; at most 1e12 s can be simulated (its tail would draw times the simulation clock cannot resolve)",
                    num(mean),
                    num(scv),
                    num(sd)
                )));
            }
        }
        match family {
            Family::Exponential => {
                if (scv - 1.0).abs() > 1e-9 {
                    return Err(DistError::new(format!(
                        "an exponential distribution has scv 1, found scv {scv}"
                    )));
                }
                Dist::exponential(mean)
            }
            Family::Deterministic => {
                if scv != 0.0 {
                    return Err(DistError::new(format!(
                        "a deterministic distribution has scv 0, found scv {scv}"
                    )));
                }
                Dist::deterministic(mean)
            }
            Family::Uniform => {
                let mean = time("uniform mean", mean)?;
                if scv > 1.0 / 3.0 + 1e-12 {
                    return Err(DistError::new(format!(
                        "a uniform distribution on non-negative values has scv <= 1/3, found scv {scv}"
                    )));
                }
                let half = mean * (3.0 * scv).sqrt();
                Dist::uniform((mean - half).max(0.0), mean + half)
            }
            Family::Erlang => {
                positive("erlang scv", scv)?;
                let k = (1.0 / scv).round();
                if (k * scv - 1.0).abs() > 1e-6 || k < 1.0 || k > f64::from(u32::MAX) {
                    return Err(DistError::new(format!(
                        "an erlang distribution has scv 1/k for a whole k >= 1, found scv {scv}"
                    )));
                }
                Dist::erlang(k as u32, mean)
            }
            Family::HyperExponential => {
                let mean = positive_time("hyperexponential mean", mean)?;
                if scv < 1.0 {
                    return Err(DistError::new(format!(
                        "a hyperexponential distribution has scv >= 1, found scv {scv}"
                    )));
                }
                // Balanced means: p·mean1 = (1-p)·mean2 = mean/2.
                let p = 0.5 * (1.0 + ((scv - 1.0) / (scv + 1.0)).sqrt());
                Dist::hyperexponential(p, mean / (2.0 * p), mean / (2.0 * (1.0 - p)))
            }
            Family::LogNormal => {
                let mean = positive_time("lognormal mean", mean)?;
                let s2 = (1.0 + scv).ln();
                Dist::lognormal(mean.ln() - s2 / 2.0, s2.sqrt())
            }
            Family::Gamma => {
                let mean = positive_time("gamma mean", mean)?;
                let scv = positive("gamma scv", scv)?;
                Dist::gamma(1.0 / scv, mean * scv)
            }
        }
    }

    /// The same law with every duration multiplied by `k` (> 0): the mean
    /// times k, the SCV unchanged. A draw of the scaled law from a stream is
    /// the draw of this law from the same stream times k, so a run of a
    /// model with a scaled station consumes the same random numbers (common
    /// random numbers for what-if comparisons).
    pub fn scaled(&self, k: f64) -> Result<Dist, DistError> {
        if !(k.is_finite() && k > 0.0) {
            return Err(DistError::new(format!(
                "a duration scale must be a positive number, found {k}"
            )));
        }
        match &self.kind {
            Kind::Exponential { mean } => Dist::exponential(mean * k),
            Kind::Deterministic { value } => Dist::deterministic(value * k),
            Kind::Uniform { min, width } => Dist::uniform(min * k, (min + width) * k),
            Kind::Erlang {
                k: phases,
                phase_mean,
                ..
            } => Dist::erlang(*phases, f64::from(*phases) * phase_mean * k),
            Kind::HyperExp { p, mean1, mean2 } => Dist::hyperexponential(*p, mean1 * k, mean2 * k),
            Kind::LogNormal { mu, sigma, .. } => Dist::lognormal(mu + k.ln(), *sigma),
            Kind::Gamma { shape, scale, .. } => Dist::gamma(*shape, scale * k),
            Kind::Empirical { samples, .. } => {
                Dist::empirical(&samples.iter().map(|x| x * k).collect::<Vec<_>>())
            }
        }
    }

    /// The mean in seconds.
    pub fn mean(&self) -> f64 {
        match &self.kind {
            Kind::Exponential { mean } => *mean,
            Kind::Deterministic { value } => *value,
            Kind::Uniform { min, width } => min + width / 2.0,
            Kind::Erlang { k, phase_mean, .. } => f64::from(*k) * phase_mean,
            Kind::HyperExp { p, mean1, mean2 } => p * mean1 + (1.0 - p) * mean2,
            Kind::LogNormal { mu, sigma, .. } => (mu + sigma * sigma / 2.0).exp(),
            Kind::Gamma { shape, scale, .. } => shape * scale,
            Kind::Empirical { mean, .. } => *mean,
        }
    }

    /// The variance in seconds².
    pub fn variance(&self) -> f64 {
        match &self.kind {
            Kind::Exponential { mean } => mean * mean,
            Kind::Deterministic { .. } => 0.0,
            Kind::Uniform { width, .. } => width * width / 12.0,
            Kind::Erlang { k, phase_mean, .. } => f64::from(*k) * phase_mean * phase_mean,
            Kind::HyperExp { p, mean1, mean2 } => {
                let m2 = 2.0 * (p * mean1 * mean1 + (1.0 - p) * mean2 * mean2);
                let m = self.mean();
                m2 - m * m
            }
            Kind::LogNormal { mu, sigma, .. } => {
                let s2 = sigma * sigma;
                (s2.exp() - 1.0) * (2.0 * mu + s2).exp()
            }
            Kind::Gamma { shape, scale, .. } => shape * scale * scale,
            Kind::Empirical { var, .. } => *var,
        }
    }

    /// Squared coefficient of variation, variance / mean² (0 when the mean is 0).
    pub fn scv(&self) -> f64 {
        let m = self.mean();
        if m > 0.0 {
            self.variance() / (m * m)
        } else {
            0.0
        }
    }

    /// True for the exponential distribution (memoryless).
    pub fn is_exponential(&self) -> bool {
        matches!(self.kind, Kind::Exponential { .. })
    }

    /// Draws one value (seconds, finite and >= 0).
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match &self.kind {
            Kind::Exponential { mean } => exp1(rng) * mean,
            Kind::Deterministic { value } => *value,
            Kind::Uniform { min, width } => min + width * unit(rng),
            Kind::Erlang { gamma: Some(g), .. } => g.sample(rng),
            Kind::Erlang { k, phase_mean, .. } => {
                let mut s = 0.0;
                for _ in 0..*k {
                    s += exp1(rng);
                }
                s * phase_mean
            }
            Kind::HyperExp { p, mean1, mean2 } => {
                let m = if unit(rng) < *p { *mean1 } else { *mean2 };
                exp1(rng) * m
            }
            Kind::LogNormal { inner, .. } => inner.sample(rng).min(f64::MAX),
            Kind::Gamma { inner, .. } => inner.sample(rng).min(f64::MAX),
            Kind::Empirical { samples, .. } => {
                let i = (unit(rng) * samples.len() as f64) as usize;
                samples[i.min(samples.len() - 1)]
            }
        }
    }
}

/// A uniform draw in `[0, 1)` with 53 random bits.
#[inline]
pub fn unit<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

// ---------------------------------------------------------------------------
// Exponential ziggurat (Marsaglia & Tsang 2000), 256 layers, tables built at
// compile time.
// ---------------------------------------------------------------------------

/// Start of the tail of the 256-layer exponential ziggurat.
const ZIG_R: f64 = 7.697_117_470_131_05;
/// Area of each layer (and of the base strip including the tail).
const ZIG_V: f64 = 0.003_949_659_822_581_557;

/// `e^x` in a const context: range reduction by ln 2, then a Taylor series
/// (|r| <= ln2/2, 27 terms: error below an ulp).
const fn c_exp(x: f64) -> f64 {
    // ln 2 split into a high part with trailing zero bits (so k·LN2_HI is
    // exact) and the rest; the bit patterns are the usual fdlibm ones.
    const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);
    let kf = x * core::f64::consts::LOG2_E;
    let k = if kf >= 0.0 {
        (kf + 0.5) as i64
    } else {
        (kf - 0.5) as i64
    };
    let r = (x - k as f64 * LN2_HI) - k as f64 * LN2_LO;
    let mut term = 1.0;
    let mut sum = 1.0;
    let mut n = 1;
    while n < 28 {
        term = term * r / n as f64;
        sum += term;
        n += 1;
    }
    // Multiply by 2^k (k stays well inside the normal exponent range here).
    sum * f64::from_bits(((1023 + k) as u64) << 52)
}

/// `ln y` for `y > 0` in a const context: Halley iterations on `c_exp`.
const fn c_ln(y: f64) -> f64 {
    let bits = y.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52));
    let mut x = e as f64 * core::f64::consts::LN_2 + (m - 1.0);
    let mut i = 0;
    while i < 8 {
        let ex = c_exp(x);
        x += 2.0 * (y - ex) / (y + ex);
        i += 1;
    }
    x
}

/// Ziggurat tables: layer right edges `x` (x[0] is the base strip's virtual
/// width v/f(r), x[1] = r, x[256] = 0), densities `f = e^-x`, the fast-path
/// acceptance bounds `k[i] = ⌊x[i+1]/x[i] · 2^53⌋` for a 53-bit uniform
/// integer, and the scales `w[i] = x[i] / 2^53`.
struct ZigTables {
    f: [f64; 257],
    k: [u64; 256],
    w: [f64; 256],
}

const fn zig_tables() -> ZigTables {
    let mut x = [0.0f64; 257];
    let mut f = [0.0f64; 257];
    x[0] = ZIG_V / c_exp(-ZIG_R);
    x[1] = ZIG_R;
    let mut i = 1;
    while i < 255 {
        x[i + 1] = -c_ln(ZIG_V / x[i] + c_exp(-x[i]));
        i += 1;
    }
    x[256] = 0.0;
    let mut i = 0;
    while i < 257 {
        f[i] = c_exp(-x[i]);
        i += 1;
    }
    let two53 = (1u64 << 53) as f64;
    let mut k = [0u64; 256];
    let mut w = [0.0f64; 256];
    let mut i = 0;
    while i < 256 {
        k[i] = (x[i + 1] / x[i] * two53) as u64;
        w[i] = x[i] / two53;
        i += 1;
    }
    ZigTables { f, k, w }
}

static ZIG: ZigTables = zig_tables();

/// One draw from the standard exponential distribution (mean 1), by a
/// 256-layer ziggurat: one 64-bit draw, an integer compare and a multiply
/// in about 98.9% of calls; exact in distribution (rejection in the wedges,
/// memoryless restart in the tail).
#[inline(always)]
pub fn exp1<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let bits = rng.next_u64();
    // Layer from the low 8 bits, position from the high 53 (disjoint).
    let i = (bits & 0xff) as usize;
    let u = bits >> 11;
    if u < ZIG.k[i] {
        return u as f64 * ZIG.w[i];
    }
    exp1_slow(rng, i, u)
}

/// The rare part of [`exp1`]: the first draw `(i, u)` fell in a wedge or in
/// the base strip's tail part.
#[cold]
#[inline(never)]
fn exp1_slow<R: Rng + ?Sized>(rng: &mut R, mut i: usize, mut u: u64) -> f64 {
    let mut r = 0.0;
    loop {
        if u < ZIG.k[i] {
            return r + u as f64 * ZIG.w[i];
        }
        let x = u as f64 * ZIG.w[i];
        if i == 0 {
            // Beyond r: the tail is r plus another exponential.
            r += ZIG_R;
        } else {
            // Wedge: accept with probability (e^-x − f[i]) / (f[i+1] − f[i]).
            let y = ZIG.f[i] + (ZIG.f[i + 1] - ZIG.f[i]) * unit(rng);
            if y < (-x).exp() {
                return r + x;
            }
        }
        let bits = rng.next_u64();
        i = (bits & 0xff) as usize;
        u = bits >> 11;
    }
}

/// Distribution families that can be built from a mean and an SCV.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Exponential (SCV 1).
    Exponential,
    /// Deterministic (SCV 0).
    Deterministic,
    /// Uniform (SCV at most 1/3).
    Uniform,
    /// Erlang-k (SCV 1/k).
    Erlang,
    /// Two-phase hyperexponential with balanced means (SCV at least 1).
    HyperExponential,
    /// Lognormal.
    LogNormal,
    /// Gamma.
    Gamma,
}

#[cfg(test)]
mod tests;
