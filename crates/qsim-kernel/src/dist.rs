//! Probability distributions for service, think and inter-arrival times.
//!
//! Every constructor validates its parameters and returns [`DistError`] with
//! what was found and what was expected; a constructed [`Dist`] always samples
//! finite, non-negative values.

use rand::Rng;
use rand_distr::{Distribution, Exp1, Gamma, LogNormal};
use std::sync::Arc;
use thiserror::Error;

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

fn positive(name: &str, x: f64) -> Result<f64, DistError> {
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(DistError::new(format!(
            "{name} must be a positive finite number, found {x}"
        )))
    }
}

fn non_negative(name: &str, x: f64) -> Result<f64, DistError> {
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err(DistError::new(format!(
            "{name} must be a finite number >= 0, found {x}"
        )))
    }
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
        let mean = positive("exponential mean", mean)?;
        Ok(Dist {
            kind: Kind::Exponential { mean },
        })
    }

    /// Always `value` (which may be 0: an instantaneous step).
    pub fn deterministic(value: f64) -> Result<Dist, DistError> {
        let value = non_negative("deterministic value", value)?;
        Ok(Dist {
            kind: Kind::Deterministic { value },
        })
    }

    /// Uniform on `[min, max)`.
    pub fn uniform(min: f64, max: f64) -> Result<Dist, DistError> {
        let min = non_negative("uniform min", min)?;
        let max = non_negative("uniform max", max)?;
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
        let mean = positive("erlang mean", mean)?;
        Ok(Dist {
            kind: Kind::Erlang {
                k,
                phase_mean: mean / f64::from(k),
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
        let mean1 = positive("hyperexponential mean1", mean1)?;
        let mean2 = positive("hyperexponential mean2", mean2)?;
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
        Ok(Dist {
            kind: Kind::LogNormal { inner, mu, sigma },
        })
    }

    /// Gamma with shape `k` and scale `theta` (mean k·theta).
    pub fn gamma(shape: f64, scale: f64) -> Result<Dist, DistError> {
        let shape = positive("gamma shape", shape)?;
        let scale = positive("gamma scale", scale)?;
        let inner = Gamma::new(shape, scale).map_err(|e| DistError::new(format!("gamma: {e}")))?;
        Ok(Dist {
            kind: Kind::Gamma {
                inner,
                shape,
                scale,
            },
        })
    }

    /// Resampling uniformly from a list of observed durations.
    pub fn empirical(samples: &[f64]) -> Result<Dist, DistError> {
        if samples.is_empty() {
            return Err(DistError::new(
                "empirical needs at least one sample, found an empty list",
            ));
        }
        for (i, &x) in samples.iter().enumerate() {
            if !(x.is_finite() && x >= 0.0) {
                return Err(DistError::new(format!(
                    "empirical sample {i} must be a finite number >= 0, found {x}"
                )));
            }
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
                let mean = non_negative("uniform mean", mean)?;
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
                let mean = positive("hyperexponential mean", mean)?;
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
                let mean = positive("lognormal mean", mean)?;
                let s2 = (1.0 + scv).ln();
                Dist::lognormal(mean.ln() - s2 / 2.0, s2.sqrt())
            }
            Family::Gamma => {
                let mean = positive("gamma mean", mean)?;
                let scv = positive("gamma scv", scv)?;
                Dist::gamma(1.0 / scv, mean * scv)
            }
        }
    }

    /// The mean in seconds.
    pub fn mean(&self) -> f64 {
        match &self.kind {
            Kind::Exponential { mean } => *mean,
            Kind::Deterministic { value } => *value,
            Kind::Uniform { min, width } => min + width / 2.0,
            Kind::Erlang { k, phase_mean } => f64::from(*k) * phase_mean,
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
            Kind::Erlang { k, phase_mean } => f64::from(*k) * phase_mean * phase_mean,
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
            Kind::Exponential { mean } => {
                let e: f64 = Exp1.sample(rng);
                e * mean
            }
            Kind::Deterministic { value } => *value,
            Kind::Uniform { min, width } => min + width * unit(rng),
            Kind::Erlang { k, phase_mean } => {
                let mut s = 0.0;
                for _ in 0..*k {
                    let e: f64 = Exp1.sample(rng);
                    s += e;
                }
                s * phase_mean
            }
            Kind::HyperExp { p, mean1, mean2 } => {
                let m = if unit(rng) < *p { *mean1 } else { *mean2 };
                let e: f64 = Exp1.sample(rng);
                e * m
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
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn check_moments(d: &Dist) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let n = 400_000;
        let (mut s, mut s2) = (0.0, 0.0);
        for _ in 0..n {
            let x = d.sample(&mut rng);
            assert!(x.is_finite() && x >= 0.0);
            s += x;
            s2 += x * x;
        }
        let m = s / n as f64;
        let v = s2 / n as f64 - m * m;
        // The sample mean has standard error sqrt(var/n); allow 5 of them.
        let se = (d.variance() / n as f64).sqrt();
        assert!(
            (m - d.mean()).abs() <= 5.0 * se + 1e-12,
            "{d:?}: sample mean {m} vs {}",
            d.mean()
        );
        if d.variance() > 0.0 {
            assert!(
                (v / d.variance() - 1.0).abs() < 0.05,
                "{d:?}: sample variance {v} vs {}",
                d.variance()
            );
        }
    }

    #[test]
    fn samples_match_mean_and_variance() {
        check_moments(&Dist::exponential(2.0).unwrap());
        check_moments(&Dist::deterministic(0.5).unwrap());
        check_moments(&Dist::uniform(1.0, 3.0).unwrap());
        check_moments(&Dist::erlang(4, 1.0).unwrap());
        check_moments(&Dist::from_mean_scv(Family::HyperExponential, 1.0, 4.0).unwrap());
        check_moments(&Dist::from_mean_scv(Family::LogNormal, 1.0, 0.5).unwrap());
        check_moments(&Dist::from_mean_scv(Family::Gamma, 2.0, 0.25).unwrap());
        check_moments(&Dist::empirical(&[1.0, 2.0, 4.0]).unwrap());
    }

    #[test]
    fn mean_scv_constructors_hit_their_targets() {
        for (fam, scv) in [
            (Family::Exponential, 1.0),
            (Family::Deterministic, 0.0),
            (Family::Uniform, 0.2),
            (Family::Erlang, 0.25),
            (Family::HyperExponential, 3.0),
            (Family::LogNormal, 2.0),
            (Family::Gamma, 0.5),
        ] {
            let d = Dist::from_mean_scv(fam, 0.7, scv).unwrap();
            assert!((d.mean() - 0.7).abs() < 1e-12, "{fam:?}");
            assert!((d.scv() - scv).abs() < 1e-9, "{fam:?}: {}", d.scv());
        }
    }

    #[test]
    fn bad_parameters_are_rejected() {
        assert!(Dist::exponential(-1.0).is_err());
        assert!(Dist::exponential(0.0).is_err());
        assert!(Dist::exponential(f64::NAN).is_err());
        assert!(Dist::deterministic(-0.1).is_err());
        assert!(Dist::uniform(2.0, 1.0).is_err());
        assert!(Dist::erlang(0, 1.0).is_err());
        assert!(Dist::hyperexponential(1.5, 1.0, 1.0).is_err());
        assert!(Dist::empirical(&[]).is_err());
        assert!(Dist::empirical(&[1.0, -1.0]).is_err());
        assert!(Dist::from_mean_scv(Family::Erlang, 1.0, 0.3).is_err());
        assert!(Dist::from_mean_scv(Family::HyperExponential, 1.0, 0.5).is_err());
        assert!(Dist::from_mean_scv(Family::Uniform, 1.0, 0.5).is_err());
        let e = Dist::exponential(-1.0).unwrap_err().to_string();
        assert!(e.contains("found -1"), "{e}");
    }
}
