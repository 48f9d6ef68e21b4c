//! Confidence intervals for a Universal Scalability Law fit, as R's `usl`
//! package users know them: an interval on each coefficient, on the peak,
//! and confidence and prediction bands around the fitted curve.
//!
//! Asymptotic (Wald) intervals of nonlinear least squares: the covariance of
//! (σ, κ, λ) is `s²·(JᵀJ)⁻¹`, with J the Jacobian of the curve at the
//! measured concurrencies and s the residual standard error; a function g of
//! the coefficients (the peak, the curve at N) gets the variance `∇gᵀ C ∇g`
//! (delta method). The half-widths use Student's t with n − 3 degrees of
//! freedom, which the caller supplies (`t`), so this module needs no table.
//! A coefficient at its bound (σ = 0 or κ = 0) makes the interval only
//! approximate; intervals are refused (`None`) when JᵀJ is singular.

use crate::usl::{Point, UslModel};
use serde::Serialize;

/// A figure with the half-width of its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// The point estimate.
    pub value: f64,
    /// Half-width of the interval (`value ± half_width`).
    pub half_width: f64,
}

impl Interval {
    /// Whether `x` lies inside `value ± half_width`.
    pub fn covers(&self, x: f64) -> bool {
        (x - self.value).abs() <= self.half_width
    }
}

/// The intervals of a fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UslIntervals {
    /// σ.
    pub sigma: Interval,
    /// κ.
    pub kappa: Interval,
    /// λ.
    pub lambda: Interval,
    /// The peak's concurrency √((1−σ)/κ), when the curve has a peak.
    pub peak_concurrency: Option<Interval>,
    /// The throughput at the peak.
    pub peak_throughput: Option<Interval>,
    /// Covariance of (σ, κ, λ).
    pub covariance: [[f64; 3]; 3],
    /// Residual standard error.
    pub residual_std_error: f64,
    /// The t quantile the half-widths use.
    pub t: f64,
}

fn theta(m: &UslModel) -> [f64; 3] {
    [m.sigma, m.kappa, m.lambda]
}

fn model(t: [f64; 3]) -> UslModel {
    UslModel {
        sigma: t[0],
        kappa: t[1],
        lambda: t[2],
    }
}

/// ∂X(n)/∂(σ, κ, λ).
fn gradient(m: &UslModel, n: f64) -> [f64; 3] {
    let d = 1.0 + m.sigma * (n - 1.0) + m.kappa * n * (n - 1.0);
    [
        -m.lambda * n * (n - 1.0) / (d * d),
        -m.lambda * n * n * (n - 1.0) / (d * d),
        n / d,
    ]
}

/// A numerical gradient of `f` at `m` (central differences).
fn numeric_gradient(m: &UslModel, f: impl Fn(&UslModel) -> Option<f64>) -> Option<[f64; 3]> {
    let t = theta(m);
    let mut g = [0.0; 3];
    for i in 0..3 {
        let h = 1e-6 * t[i].abs().max(1e-12);
        let (mut up, mut down) = (t, t);
        up[i] += h;
        down[i] -= h;
        g[i] = (f(&model(up))? - f(&model(down))?) / (2.0 * h);
    }
    Some(g)
}

/// The inverse of a symmetric positive semi-definite 3×3 matrix, scaled to
/// unit diagonal first (the coefficients' derivatives differ by orders of
/// magnitude), or `None` when it is singular.
fn inverse(a: [[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let d: Vec<f64> = (0..3).map(|i| a[i][i].sqrt()).collect();
    if d.iter().any(|x| !x.is_finite() || *x <= 0.0) {
        return None;
    }
    let r = |i: usize, j: usize| a[i][j] / (d[i] * d[j]);
    let c = |i: usize, j: usize| {
        let (r0, r1) = ((i + 1) % 3, (i + 2) % 3);
        let (c0, c1) = ((j + 1) % 3, (j + 2) % 3);
        r(r0, c0) * r(r1, c1) - r(r0, c1) * r(r1, c0)
    };
    let det = r(0, 0) * c(0, 0) + r(0, 1) * c(0, 1) + r(0, 2) * c(0, 2);
    if !det.is_finite() || det <= 1e-12 {
        return None;
    }
    let mut inv = [[0.0; 3]; 3];
    for (i, row) in inv.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            *x = c(j, i) / det / (d[i] * d[j]);
        }
    }
    Some(inv)
}

fn quad(g: &[f64; 3], c: &[[f64; 3]; 3]) -> f64 {
    (0..3)
        .map(|i| (0..3).map(|j| g[i] * c[i][j] * g[j]).sum::<f64>())
        .sum()
}

/// The intervals of the fit `m` to `points` with residual standard error
/// `s`, at the t quantile `t` (e.g. the 97.5% quantile with n − 3 degrees of
/// freedom for 95% intervals). `None` when fewer than 4 points or JᵀJ is
/// singular (all points at one or two concurrencies).
pub fn intervals(m: &UslModel, points: &[Point], s: f64, t: f64) -> Option<UslIntervals> {
    if points.len() < 4 || !s.is_finite() || !t.is_finite() {
        return None;
    }
    let mut jtj = [[0.0; 3]; 3];
    for p in points {
        let g = gradient(m, p.concurrency);
        for i in 0..3 {
            for j in 0..3 {
                jtj[i][j] += g[i] * g[j];
            }
        }
    }
    let mut cov = inverse(jtj)?;
    for row in &mut cov {
        for x in row.iter_mut() {
            *x *= s * s;
        }
    }
    let hw = |var: f64| t * var.max(0.0).sqrt();
    let coef = |i: usize| Interval {
        value: theta(m)[i],
        half_width: hw(cov[i][i]),
    };
    let of = |f: fn(&UslModel) -> Option<f64>| -> Option<Interval> {
        let value = f(m)?;
        let g = numeric_gradient(m, f)?;
        Some(Interval {
            value,
            half_width: hw(quad(&g, &cov)),
        })
    };
    Some(UslIntervals {
        sigma: coef(0),
        kappa: coef(1),
        lambda: coef(2),
        peak_concurrency: of(UslModel::peak_concurrency),
        peak_throughput: of(UslModel::peak_throughput),
        covariance: cov,
        residual_std_error: s,
        t,
    })
}

impl UslIntervals {
    /// Half-widths at concurrency `n` of the confidence band (where the
    /// curve itself lies) and the prediction band (where a new measurement
    /// would fall: the curve's uncertainty plus the residual scatter).
    pub fn band(&self, m: &UslModel, n: f64) -> (f64, f64) {
        let v = quad(&gradient(m, n), &self.covariance).max(0.0);
        let s2 = self.residual_std_error * self.residual_std_error;
        (self.t * v.sqrt(), self.t * (v + s2).sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usl::fit;

    /// A small deterministic normal generator (SplitMix64 and Box–Muller),
    /// so the test needs no RNG crate.
    struct Normal(u64);
    impl Normal {
        fn uniform(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        fn next(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
    }

    /// Data from known coefficients with known Gaussian noise, fitted many
    /// times: each 95% interval covers the truth in about 95% of the fits
    /// (binomial: over 400 fits, 95% gives 380 ± 13 at 3 standard
    /// deviations), the prediction band covers about 95% of fresh
    /// measurements, and the intervals are narrow enough to say something.
    #[test]
    fn intervals_cover_the_true_coefficients_about_95_percent_of_the_time() {
        let truth = UslModel::new(0.03, 0.0005, 1000.0).unwrap();
        let (true_peak_n, true_peak_x) = (
            truth.peak_concurrency().unwrap(),
            truth.peak_throughput().unwrap(),
        );
        let ns: Vec<f64> = [1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 80, 96]
            .iter()
            .map(|&n| f64::from(n))
            .collect();
        let noise = 150.0; // standard deviation of a measurement
        let t = 2.201; // Student's t, 97.5%, 11 degrees of freedom (14 - 3)
        let mut rng = Normal(7);
        let runs = 400;
        let mut cover = [0usize; 6];
        let mut widest_lambda: f64 = 0.0;
        for _ in 0..runs {
            let points: Vec<Point> = ns
                .iter()
                .map(|&n| Point {
                    concurrency: n,
                    throughput_per_s: truth.throughput(n) + noise * rng.next(),
                })
                .collect();
            let f = fit(&points).unwrap();
            let ci = intervals(&f.model, &points, f.residual_std_error, t).unwrap();
            widest_lambda = widest_lambda.max(ci.lambda.half_width / truth.lambda);
            cover[0] += usize::from(ci.sigma.covers(truth.sigma));
            cover[1] += usize::from(ci.kappa.covers(truth.kappa));
            cover[2] += usize::from(ci.lambda.covers(truth.lambda));
            cover[3] += usize::from(ci.peak_concurrency.unwrap().covers(true_peak_n));
            cover[4] += usize::from(ci.peak_throughput.unwrap().covers(true_peak_x));
            // A fresh measurement at a concurrency not measured.
            let n = 70.0;
            let (_, pred) = ci.band(&f.model, n);
            let fresh = truth.throughput(n) + noise * rng.next();
            cover[5] += usize::from((fresh - f.model.throughput(n)).abs() <= pred);
        }
        for (name, c) in ["sigma", "kappa", "lambda", "peak N", "peak X", "prediction"]
            .iter()
            .zip(cover)
        {
            assert!(
                (367..=393).contains(&c),
                "{name}: {c} of {runs} intervals cover the truth (95%: 380 ± 13)"
            );
        }
        eprintln!("covered, of {runs}: {cover:?}; widest λ half-width {widest_lambda:.4} of λ");
        // Narrow enough to be useful: λ within 15% of itself at this noise.
        assert!(widest_lambda < 0.15, "λ half-width up to {widest_lambda}");
    }

    #[test]
    fn singular_or_too_few_points_give_no_interval() {
        let m = UslModel::new(0.1, 0.001, 100.0).unwrap();
        let same: Vec<Point> = (0..5)
            .map(|_| Point {
                concurrency: 4.0,
                throughput_per_s: 300.0,
            })
            .collect();
        assert!(intervals(&m, &same, 1.0, 2.0).is_none());
        assert!(intervals(&m, &same[..3], 1.0, 2.0).is_none());
    }
}
