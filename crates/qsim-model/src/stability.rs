//! Offered load of open workloads: traffic equations and utilization.

use qsim_kernel::{NetworkSpec, Routing, Speed, StationKind, Target, Workload};

/// Mean visits per job of a class to each station (sub-jobs of forks included).
/// `None` when the routing never lets jobs leave.
pub(crate) fn visits(spec: &NetworkSpec, class: usize) -> Option<Vec<f64>> {
    let ns = spec.stations.len();
    let fork = |s: usize| match &spec.stations[s].kind {
        StationKind::Fork(f) => Some(f),
        _ => None,
    };
    // Sub-job visits created by `u` visits to each fork.
    let sub_visits = |u: &[f64]| {
        let mut v = u.to_vec();
        for (s, &us) in u.iter().enumerate() {
            if let Some(f) = fork(s) {
                let total: f64 = f.targets.iter().map(|t| t.1).sum();
                for &(t, w) in &f.targets {
                    v[t] += us * f64::from(f.fan_out) * w / total;
                }
            }
        }
        v
    };
    match &spec.classes[class].routing {
        Routing::Sequence(seq) => {
            let mut u = vec![0.0; ns];
            for &s in seq {
                u[s] += 1.0;
            }
            Some(sub_visits(&u))
        }
        Routing::Probabilistic { entry, from } => {
            // u = e + Pᵀu, where a fork passes its job on to its join.
            let mut a = vec![vec![0.0; ns + 1]; ns];
            for (i, row) in a.iter_mut().enumerate() {
                row[i] = 1.0;
            }
            for &(t, p) in entry {
                if let Target::Station(t) = t {
                    a[t][ns] += p;
                }
            }
            for s in 0..ns {
                if let Some(f) = fork(s) {
                    a[f.join][s] -= 1.0;
                    continue;
                }
                for &(t, p) in &from[s] {
                    if let Target::Station(t) = t {
                        a[t][s] -= p;
                    }
                }
            }
            let u = solve(a)?;
            if u.iter().any(|x| !x.is_finite() || *x < -1e-9 || *x > 1e12) {
                return None;
            }
            Some(sub_visits(&u))
        }
    }
}

/// Gaussian elimination with partial pivoting on an augmented matrix.
fn solve(mut a: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let n = a.len();
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, piv);
        let pivot_row = a[col].clone();
        for r in 0..n {
            if r != col {
                let f = a[r][col] / a[col][col];
                if f != 0.0 {
                    for (x, p) in a[r].iter_mut().zip(&pivot_row).skip(col) {
                        *x -= f * p;
                    }
                }
            }
        }
    }
    Some((0..n).map(|i| a[i][n] / a[i][i]).collect())
}

/// Highest completion rate a speed curve reaches.
pub(crate) fn max_rate(speed: &Speed) -> f64 {
    match speed {
        Speed::Table(points) => points.iter().map(|p| p.1).fold(0.0, f64::max),
        Speed::Usl {
            sigma,
            kappa,
            lambda,
        } => {
            if *kappa > 0.0 {
                let nstar = ((1.0 - sigma).max(0.0) / kappa).sqrt();
                [1.0, nstar.floor().max(1.0), nstar.ceil().max(1.0)]
                    .iter()
                    .map(|&n| speed.rate(n))
                    .fold(0.0, f64::max)
            } else if *sigma > 0.0 {
                lambda.max(lambda / sigma)
            } else {
                f64::INFINITY
            }
        }
    }
}

/// The offered utilization of one station by one open class arriving at
/// `rate` jobs per second with visit ratio `v`; `None` if the station cannot
/// saturate (a delay without a speed curve, a fork or a join).
pub(crate) fn utilization(
    spec: &NetworkSpec,
    s: usize,
    class: usize,
    rate: f64,
    v: f64,
) -> Option<f64> {
    let st = &spec.stations[s];
    if let Some(speed) = &st.speed {
        return Some(rate * v / max_rate(speed));
    }
    let mean = st.service.get(class)?.as_ref()?.mean();
    let demand = match &st.kind {
        StationKind::Delay | StationKind::Fork(_) | StationKind::Join(_) => return None,
        StationKind::Queue { servers, .. } => mean / f64::from(*servers),
        StationKind::Latch(_) => mean,
        StationKind::Batch(b) => mean / f64::from(b.max_batch) + b.per_job_s,
        StationKind::Link(l) => mean / (f64::from(l.max_batch) * f64::from(l.pipeline)),
    };
    Some(rate * v * demand)
}

/// A saturated station found by [`check`].
pub(crate) struct Unstable {
    pub station: String,
    pub utilization: f64,
    /// The class whose arrivals contribute most there.
    pub class: usize,
    /// Its arrival rate, per second.
    pub rate: f64,
    /// The arrival rate of that class that would bring the utilization to 1.
    pub limit: f64,
    /// Whether more than one open class loads the station.
    pub shared: bool,
}

/// Every station whose offered utilization from open classes is >= 1, and
/// every class whose jobs cannot leave (by index).
pub(crate) fn check(spec: &NetworkSpec) -> (Vec<Unstable>, Vec<usize>) {
    let ns = spec.stations.len();
    let mut per_class: Vec<(usize, f64, Vec<Option<f64>>)> = Vec::new();
    let mut trapped = Vec::new();
    for (ci, c) in spec.classes.iter().enumerate() {
        let Workload::Open { interarrival } = &c.workload else {
            continue;
        };
        let rate = 1.0 / interarrival.mean();
        if !rate.is_finite() {
            // Zero mean inter-arrival time: infinitely many arrivals.
            per_class.push((ci, f64::INFINITY, vec![Some(f64::INFINITY); ns]));
            continue;
        }
        let Some(v) = visits(spec, ci) else {
            trapped.push(ci);
            continue;
        };
        let u = (0..ns)
            .map(|s| utilization(spec, s, ci, rate, v[s]))
            .collect();
        per_class.push((ci, rate, u));
    }
    let mut out = Vec::new();
    for s in 0..ns {
        let parts: Vec<(usize, f64, f64)> = per_class
            .iter()
            .filter_map(|(ci, rate, u)| u[s].filter(|x| *x > 0.0).map(|x| (*ci, *rate, x)))
            .collect();
        let total: f64 = parts.iter().map(|p| p.2).sum();
        if total >= 1.0 {
            let Some(&(class, rate, mine)) = parts.iter().max_by(|a, b| a.2.total_cmp(&b.2)) else {
                continue;
            };
            let others = total - mine;
            let limit = if rate.is_finite() {
                (rate * (1.0 - others) / mine).max(0.0)
            } else {
                0.0
            };
            out.push(Unstable {
                station: spec.stations[s].name.clone(),
                utilization: total,
                class,
                rate,
                limit,
                shared: parts.len() > 1,
            });
        }
    }
    (out, trapped)
}
