//! How long a network takes to forget where it started, and whether a run
//! measured long enough after that for its intervals to be trusted.
//!
//! A replication starts from a fixed state (empty, for open arrivals) and
//! approaches the steady state over a time of the order of the network's
//! relaxation time. A run whose measured window is not many relaxation
//! times long gives means pulled towards the start, and replications whose
//! means are skewed (most low, a few very high), so a t interval of them
//! is too narrow and misses low: M/M/1 at ρ = 0.9 measured over 50 jobs
//! (55 s, the relaxation time is 380 s) gave R = 3.4 ± 1.8 s against the
//! exact 10 s.
//!
//! Where theory gives the relaxation time (open networks of fixed-speed
//! queues and delays, no capacities or regions), [`relaxation_time`] sums
//! it over the stations a job visits, and [`short_run`] compares it with a
//! run's measured window; elsewhere the kernel's own check of the data (a
//! drift between the halves of the window) is what warns.

use qsim_kernel::{NetworkSpec, RunResults, StationKind, Workload};

/// How many relaxation times a replication must measure for its interval
/// to be trusted. For M/M/1 with service rate μ, a window of `T` from an
/// empty start has a relative bias of about `τ'/T`, with
/// `τ' = 1/(μ(1-ρ)²)` (near ρ = 1 a quarter of the relaxation time `τ`
/// used here), and over `R` replications a relative standard error of
/// about `sqrt(2(1+ρ) τ' / (ρ R T))`; their ratio,
/// `sqrt(ρ R τ' / (2(1+ρ) T))`, stays below a quarter (which keeps a 95%
/// interval's coverage above 94%) with ten replications from `T ≈ 10 τ`
/// on. 50 leaves room for the skewness of a few replications' means and
/// for networks of several queues.
pub const RELAXATIONS_NEEDED: f64 = 50.0;

/// The relaxation time of a network and the station that contributes most.
#[derive(Clone, Debug, PartialEq)]
pub struct Relaxation {
    /// Seconds, summed over the visited stations.
    pub time_s: f64,
    /// The station with the longest relaxation time.
    pub station: String,
    /// That station's utilization per server.
    pub utilization: f64,
    /// The arrivals per second of all classes.
    pub arrivals_per_s: f64,
}

/// The relaxation time of `spec` when theory gives it: every class open
/// and unscheduled, every visited station a fixed-speed queue or delay
/// without a capacity, no regions, every queue below saturation. A queue
/// of `c` servers at utilization ρ with mean service `s` relaxes in about
/// `s / (c (1-√ρ)²)` (exactly `1/(μ(1-√ρ)²)` for M/M/1), times
/// `(ca² + cs²)/2` for other variabilities (ca², cs²: the squared
/// coefficients of variation of interarrival and service times); a delay in
/// its mean service time. `None` elsewhere.
pub fn relaxation_time(spec: &NetworkSpec) -> Option<Relaxation> {
    if !spec.regions.is_empty() || spec.capacity.iter().any(Option::is_some) {
        return None;
    }
    let ns = spec.stations.len();
    // Per station: load (λ·v·s summed), arrival rate (λ·v), and the
    // load-weighted service scv; the largest interarrival scv.
    let mut load = vec![0.0f64; ns];
    let mut rate = vec![0.0f64; ns];
    let mut scv = vec![0.0f64; ns];
    let mut ca2 = 0.0f64;
    let mut arrivals = 0.0f64;
    for (c, class) in spec.classes.iter().enumerate() {
        let Workload::Open { interarrival } = &class.workload else {
            return None;
        };
        let lambda = 1.0 / interarrival.mean();
        if !lambda.is_finite() {
            return None;
        }
        arrivals += lambda;
        ca2 = ca2.max(interarrival.scv());
        let visits = crate::visits::visit_ratios(spec, c)?.total;
        for (s, &v) in visits.iter().enumerate() {
            if v <= 0.0 {
                continue;
            }
            let d = spec.stations[s].service.get(c)?.as_ref()?;
            load[s] += lambda * v * d.mean();
            rate[s] += lambda * v;
            scv[s] += lambda * v * d.mean() * d.scv();
        }
    }
    let mut total = 0.0;
    let mut worst: Option<(f64, usize, f64)> = None;
    for (s, st) in spec.stations.iter().enumerate() {
        if rate[s] <= 0.0 {
            continue;
        }
        if st.speed.is_some() {
            return None;
        }
        let mean = load[s] / rate[s];
        let cs2 = scv[s] / load[s].max(f64::MIN_POSITIVE);
        let (tau, rho) = match st.kind {
            StationKind::Delay => (mean, 0.0),
            StationKind::Queue { servers, .. } => {
                let c = f64::from(servers);
                let rho = load[s] / c;
                if rho >= 1.0 {
                    return None;
                }
                let gap = 1.0 - rho.sqrt();
                let variability = ((ca2 + cs2) / 2.0).max(0.05);
                (variability * mean / (c * gap * gap), rho)
            }
            StationKind::Latch(_)
            | StationKind::Batch(_)
            | StationKind::Link(_)
            | StationKind::Fork(_)
            | StationKind::Join(_) => return None,
        };
        total += tau;
        if worst.is_none_or(|(t, _, _)| tau > t) {
            worst = Some((tau, s, rho));
        }
    }
    let (_, s, utilization) = worst?;
    Some(Relaxation {
        time_s: total,
        station: spec.stations[s].name.clone(),
        utilization,
        arrivals_per_s: arrivals,
    })
}

/// A run too short for its intervals: what it measured and what it needed.
#[derive(Clone, Debug, PartialEq)]
pub struct ShortRun {
    /// The network's relaxation time.
    pub relaxation: Relaxation,
    /// Simulated seconds each replication measured (their mean).
    pub measured_s: f64,
    /// [`RELAXATIONS_NEEDED`] relaxation times.
    pub needed_s: f64,
}

impl std::fmt::Display for ShortRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = &self.relaxation;
        let jobs = (self.needed_s * r.arrivals_per_s).ceil();
        write!(
            f,
            "too short for its intervals: each replication measured {} s of simulated time, but this model needs about {} s to forget its start (its relaxation time, mostly station {} at utilization {:.3}), and an interval is trusted from {} times that on, {} s; the means may lean towards the empty start with intervals too narrow to show it: run longer (--time {} or --jobs {jobs:.0})",
            sig(self.measured_s),
            sig(r.time_s),
            r.station,
            r.utilization,
            RELAXATIONS_NEEDED,
            sig(self.needed_s),
            sig(self.needed_s),
        )
    }
}

/// The run of `spec` that gave `results`, when its replications measured
/// fewer than [`RELAXATIONS_NEEDED`] relaxation times each (see
/// [`relaxation_time`]); `None` when long enough or when theory does not
/// give the relaxation time.
pub fn short_run(spec: &NetworkSpec, results: &RunResults) -> Option<ShortRun> {
    let relaxation = relaxation_time(spec)?;
    let measured_s = results.measured_time_s / f64::from(results.replications.max(1));
    let needed_s = RELAXATIONS_NEEDED * relaxation.time_s;
    (measured_s < needed_s).then_some(ShortRun {
        relaxation,
        measured_s,
        needed_s,
    })
}

/// The stop rule a run with a precision target needs so that each
/// replication measures [`RELAXATIONS_NEEDED`] relaxation times, when the
/// configured one is shorter and theory gives the time (the target asks
/// for intervals that can be trusted, which more replications of a run too
/// short never give: they narrow the interval around a biased mean).
pub fn stop_for_precision(
    spec: &NetworkSpec,
    config: &qsim_kernel::RunConfig,
) -> Option<qsim_kernel::Stop> {
    use qsim_kernel::Stop;
    config.precision?;
    let r = relaxation_time(spec)?;
    let needed_s = RELAXATIONS_NEEDED * r.time_s;
    match config.stop {
        Stop::Jobs(n) => {
            let jobs = (needed_s * r.arrivals_per_s).ceil();
            (jobs > n as f64 && jobs < 1e15).then_some(Stop::Jobs(jobs as u64))
        }
        Stop::Time(t) => (needed_s > t && needed_s < 1e12).then_some(Stop::Time(needed_s)),
    }
}

/// Three significant figures.
fn sig(x: f64) -> String {
    qsim_kernel::sig(x, 3)
}

#[cfg(test)]
mod tests {
    use super::*;
    use qsim_kernel::{ClassSpec, Discipline, Dist, Routing, StationSpec};

    fn mm1(rho: f64) -> NetworkSpec {
        NetworkSpec {
            stations: vec![StationSpec {
                name: "server".into(),
                kind: StationKind::Queue {
                    servers: 1,
                    discipline: Discipline::Fcfs,
                },
                service: vec![Some(Dist::exponential(1.0).unwrap())],
                speed: None,
            }],
            classes: vec![ClassSpec {
                name: "default".into(),
                workload: Workload::Open {
                    interarrival: Dist::exponential(1.0 / rho).unwrap(),
                },
                routing: Routing::Sequence(vec![0]),
                priority: 0,
            }],
            ..NetworkSpec::default()
        }
    }

    #[test]
    fn mm1_relaxation_is_the_closed_form() {
        for rho in [0.5, 0.9, 0.99] {
            let r = relaxation_time(&mm1(rho)).unwrap();
            let exact = 1.0 / (1.0 - f64::sqrt(rho)).powi(2);
            assert!((r.time_s - exact).abs() < 1e-9 * exact, "{r:?} vs {exact}");
            assert_eq!(r.station, "server");
        }
    }
}
