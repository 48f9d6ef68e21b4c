//! Knee analysis over a throughput–response curve: pure functions.
//!
//! On a curve of throughput X and mean response time R against load N
//! (e.g. a closed population):
//! - the **peak** is the point of highest X (the lowest N on a tie);
//! - the **knee** is the point of highest *power* X/R, Kleinrock's balance of
//!   throughput against delay (the lowest N on a tie);
//! - the **saturation** point is the smallest N whose X is at least
//!   [`SATURATION_FRACTION`] of the peak X.
//!
//! Points whose X or R is not finite, or whose R is not positive, are ignored.

/// Fraction of peak throughput that defines the saturation point.
pub const SATURATION_FRACTION: f64 = 0.95;

/// Relative throughput difference under which two candidates of a throttle
/// recommendation count as tied (and the lower response time wins), when
/// their 95% intervals do not make the tie wider.
pub const TIE_TOLERANCE: f64 = 0.01;

/// One point of a curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CurvePoint {
    /// Load: population, clients, arrival rate...
    pub load: f64,
    /// Throughput, per second.
    pub throughput_per_s: f64,
    /// Mean response time, seconds.
    pub response_time_s: f64,
}

impl CurvePoint {
    /// Power X/R, per second squared.
    pub fn power(&self) -> f64 {
        self.throughput_per_s / self.response_time_s
    }

    fn usable(&self) -> bool {
        self.load.is_finite()
            && self.throughput_per_s.is_finite()
            && self.response_time_s.is_finite()
            && self.response_time_s > 0.0
    }
}

/// Where the peak, knee and saturation are: indices into the analyzed slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KneeReport {
    /// Highest throughput.
    pub peak: usize,
    /// Highest power X/R.
    pub knee: usize,
    /// Smallest load with throughput ≥ 95% of the peak.
    pub saturation: usize,
}

/// Finds the peak, knee and saturation point of `curve` (any order of
/// loads). `None` when no point is usable.
pub fn analyze(curve: &[CurvePoint]) -> Option<KneeReport> {
    let usable = || curve.iter().enumerate().filter(|(_, p)| p.usable());
    // Strictly greater value wins; equal value goes to the lower load.
    let best_by = |key: &dyn Fn(&CurvePoint) -> f64| {
        usable()
            .fold(None::<(usize, &CurvePoint)>, |best, (i, p)| match best {
                Some((_, b)) if key(b) > key(p) || (key(b) == key(p) && b.load <= p.load) => best,
                _ => Some((i, p)),
            })
            .map(|(i, _)| i)
    };
    let peak = best_by(&|p| p.throughput_per_s)?;
    let knee = best_by(&|p| p.power())?;
    let threshold = SATURATION_FRACTION * curve[peak].throughput_per_s;
    let saturation = usable()
        .filter(|(_, p)| p.throughput_per_s >= threshold)
        .min_by(|(_, a), (_, b)| a.load.total_cmp(&b.load))
        .map(|(i, _)| i)?;
    Some(KneeReport {
        peak,
        knee,
        saturation,
    })
}

/// A candidate of a recommendation: one setting (e.g. a throttle limit) at
/// the highest load swept.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// Throughput, per second.
    pub throughput_per_s: f64,
    /// Half-width of the 95% interval of the throughput (NaN: none).
    pub throughput_ci95: f64,
    /// Mean response time, seconds.
    pub response_time_s: f64,
}

/// The best candidate: the highest throughput; candidates within
/// [`TIE_TOLERANCE`] of it, or whose 95% interval overlaps its own, are
/// tied (the runs cannot tell them apart), and the lowest response time
/// among them wins (then the first). `None` when none is finite.
pub fn recommend(candidates: &[Candidate]) -> Option<usize> {
    let ok = |c: &Candidate| c.throughput_per_s.is_finite() && c.response_time_s.is_finite();
    let best = candidates
        .iter()
        .filter(|c| ok(c))
        .max_by(|a, b| a.throughput_per_s.total_cmp(&b.throughput_per_s))?;
    let best_x = best.throughput_per_s;
    let ci = |c: &Candidate| {
        if c.throughput_ci95.is_finite() {
            c.throughput_ci95
        } else {
            0.0
        }
    };
    let tied = |c: &Candidate| {
        best_x - c.throughput_per_s <= (TIE_TOLERANCE * best_x.abs()).max(ci(best) + ci(c))
    };
    candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| ok(c) && tied(c))
        .fold(None::<(usize, &Candidate)>, |best, (i, c)| match best {
            Some((_, b)) if b.response_time_s <= c.response_time_s => best,
            _ => Some((i, c)),
        })
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(loads: impl Iterator<Item = f64>, f: impl Fn(f64) -> (f64, f64)) -> Vec<CurvePoint> {
        loads
            .map(|n| {
                let (x, r) = f(n);
                CurvePoint {
                    load: n,
                    throughput_per_s: x,
                    response_time_s: r,
                }
            })
            .collect()
    }

    /// Asymptotic bounds of a closed network: X = min(N/(D+Z), 1/Dmax),
    /// R = N/X − Z. Power rises as N/((D+Z)·D) up to N* = (D+Z)/Dmax and then
    /// falls as 1/(Dmax·(N·Dmax − Z)): the knee is exactly N*.
    #[test]
    fn bounds_curve_has_its_knee_at_n_star() {
        let (d, dmax, z) = (0.010, 0.005, 0.1); // N* = 22
        let c = curve((1..=100).map(f64::from), |n| {
            let x = (n / (d + z)).min(1.0 / dmax);
            (x, n / x - z)
        });
        let k = analyze(&c).unwrap();
        assert_eq!(c[k.knee].load, 22.0);
        assert_eq!(c[k.peak].load, 22.0);
        // 95% of 200/s is 190/s, reached first at N = 190·0.11 = 20.9 → 21.
        assert_eq!(c[k.saturation].load, 21.0);
    }

    /// USL with think time 0: X = N/(1+σ(N−1)+κN(N−1)), R = N/X, power =
    /// X²/N. Setting d/dN = 0 gives 3κN² + (σ−κ)N − (1−σ) = 0, and the peak
    /// of X is at sqrt((1−σ)/κ).
    #[test]
    fn usl_curve_knee_and_peak_match_closed_forms() {
        let (s, k) = (0.05, 0.0001);
        let usl = |n: f64| n / (1.0 + s * (n - 1.0) + k * n * (n - 1.0));
        let c = curve((1..=300).map(f64::from), |n| (usl(n), n / usl(n)));
        let rep = analyze(&c).unwrap();
        let n_knee = (-(s - k) + ((s - k).powi(2) + 12.0 * k * (1.0 - s)).sqrt()) / (6.0 * k);
        let n_peak = ((1.0 - s) / k).sqrt();
        let near = |got: f64, want: f64| (got - want).abs() <= 0.5 + 1e-9;
        assert!(
            near(c[rep.knee].load, n_knee),
            "{} vs {n_knee}",
            c[rep.knee].load
        );
        assert!(
            near(c[rep.peak].load, n_peak),
            "{} vs {n_peak}",
            c[rep.peak].load
        );
        let x_peak = usl(c[rep.peak].load);
        let sat = c[rep.saturation].load;
        assert!(usl(sat) >= 0.95 * x_peak && usl(sat - 1.0) < 0.95 * x_peak);
    }

    /// Exact MVA of a CPU and two disks with think time. Throughput never
    /// falls, so the peak is the last point. Beyond N* = (D+Z)/Dmax the
    /// throughput is capped at 1/Dmax while R keeps growing, so power falls
    /// there: the knee is at most N* (Kleinrock's "keep the pipe just full"
    /// is the deterministic limit; with exponential service queueing starts
    /// earlier, so the knee comes before N*). Cross-checked with a plain
    /// argmax over the MVA figures.
    #[test]
    fn mva_curve_knee_is_near_n_star() {
        use qsim_analytic::mva::{Station, exact};
        let stations = [
            Station::queue("cpu", 0.005),
            Station::queue("disk1", 0.003),
            Station::queue("disk2", 0.002),
        ];
        let z = 0.1;
        let sol = exact(&stations, z, 80).unwrap();
        let c: Vec<CurvePoint> = sol
            .points
            .iter()
            .map(|p| CurvePoint {
                load: f64::from(p.population),
                throughput_per_s: p.throughput_per_s,
                response_time_s: p.response_time_s,
            })
            .collect();
        let rep = analyze(&c).unwrap();
        let n_star = (0.010 + z) / 0.005;
        let knee_n = c[rep.knee].load;
        assert!(
            knee_n <= n_star && knee_n >= n_star / 2.0,
            "knee {knee_n} vs N* {n_star}"
        );
        let mut best = 0;
        for (i, p) in sol.points.iter().enumerate() {
            let pw =
                |q: &qsim_analytic::mva::PopulationPoint| q.throughput_per_s / q.response_time_s;
            if pw(p) > pw(&sol.points[best]) {
                best = i;
            }
        }
        assert_eq!(rep.knee, best);
        assert_eq!(rep.peak, c.len() - 1);
        assert!(c[rep.saturation].load > c[rep.knee].load);
        assert!(c[rep.saturation].load < c[rep.peak].load);
    }

    #[test]
    fn ties_go_to_the_lower_load_and_unusable_points_are_skipped() {
        let c = vec![
            CurvePoint {
                load: 3.0,
                throughput_per_s: 10.0,
                response_time_s: 1.0,
            },
            CurvePoint {
                load: 1.0,
                throughput_per_s: 10.0,
                response_time_s: 1.0,
            },
            CurvePoint {
                load: 2.0,
                throughput_per_s: f64::NAN,
                response_time_s: 1.0,
            },
            CurvePoint {
                load: 0.5,
                throughput_per_s: 50.0,
                response_time_s: 0.0,
            },
        ];
        let rep = analyze(&c).unwrap();
        assert_eq!((rep.peak, rep.knee, rep.saturation), (1, 1, 1));
        assert_eq!(analyze(&c[2..3]), None);
        assert_eq!(analyze(&[]), None);
    }

    #[test]
    fn recommendation_prefers_throughput_then_response() {
        let c = |x, r| Candidate {
            throughput_per_s: x,
            throughput_ci95: f64::NAN,
            response_time_s: r,
        };
        // No limit collapses; 100 and 200 are tied on X, 100 answers faster.
        assert_eq!(
            recommend(&[
                c(200.0, 5.0),
                c(1990.0, 0.2),
                c(2000.0, 0.3),
                c(1500.0, 0.1)
            ]),
            Some(1)
        );
        assert_eq!(recommend(&[c(10.0, 1.0), c(20.0, 9.0)]), Some(1));
        assert_eq!(recommend(&[c(f64::NAN, 1.0)]), None);
    }

    /// Throughputs whose 95% intervals overlap are tied, whatever their
    /// means say: the faster answer wins among them.
    #[test]
    fn recommendation_ties_overlapping_intervals() {
        let c = |x, ci, r| Candidate {
            throughput_per_s: x,
            throughput_ci95: ci,
            response_time_s: r,
        };
        // 2016.8 ± 378.6 and 2009.3 ± 206.4 cannot be told apart.
        let wide = [c(2016.8, 378.6, 0.5), c(2009.3, 206.4, 0.4)];
        assert_eq!(recommend(&wide), Some(1));
        // Narrow intervals that do not overlap: the higher throughput wins.
        let narrow = [c(2016.8, 3.0, 0.5), c(1990.0, 3.0, 0.4)];
        assert_eq!(recommend(&narrow), Some(0));
    }
}
