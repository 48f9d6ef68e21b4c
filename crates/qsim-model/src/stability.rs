//! Offered load of open workloads: traffic equations and utilization.

use qsim_kernel::{NetworkSpec, Workload};

/// Mean visits per job of a class to each station (sub-jobs of forks
/// included), by qsim-theory's traffic equations. `None` when the routing
/// never lets jobs leave.
pub(crate) fn visits(spec: &NetworkSpec, class: usize) -> Option<Vec<f64>> {
    qsim_theory::visits::visit_ratios(spec, class).map(|v| v.total)
}

/// The offered utilization of one station by one open class arriving at
/// `rate` jobs per second with visit ratio `v` (its peak rate from
/// qsim-theory's per-kind law); `None` if the station cannot saturate (a
/// delay without a speed curve, a fork or a join).
pub(crate) fn utilization(
    spec: &NetworkSpec,
    s: usize,
    class: usize,
    rate: f64,
    v: f64,
) -> Option<f64> {
    let peak = qsim_theory::kind::law(&spec.stations[s], class, None)?.peak_rate_per_s?;
    Some(rate * v / peak)
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
/// every class whose jobs cannot leave (by index). `pools` are the
/// stations of rows that pick by the queues (`Network::pooled_rows`):
/// their weights are not their split, so a member is not unstable alone
/// while the pool as a whole keeps up (its jobs per second below the sum
/// of its members' peak rates, with one open class loading it; with more,
/// each member is judged alone).
pub(crate) fn check(spec: &NetworkSpec, pools: &[Vec<usize>]) -> (Vec<Unstable>, Vec<usize>) {
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
    // The load of the pool `s` is in, as (utilization, class, rate): its
    // jobs per second over the sum of its members' peak rates, with one
    // open class loading it (infinite peaks: utilization 0).
    let pool_load = |s: usize| -> Option<(&[usize], f64, usize, f64)> {
        let pool = pools.iter().find(|p| p.contains(&s))?;
        let loading: Vec<&(usize, f64, Vec<Option<f64>>)> = per_class
            .iter()
            .filter(|(_, _, u)| pool.iter().any(|&m| u[m].is_some_and(|x| x > 0.0)))
            .collect();
        let [(ci, rate, _)] = loading.as_slice() else {
            return None;
        };
        let v = visits(spec, *ci)?;
        let (mut jobs, mut peak) = (0.0, 0.0);
        for &m in pool {
            match qsim_theory::kind::law(&spec.stations[m], *ci, None)
                .and_then(|l| l.peak_rate_per_s)
            {
                Some(p) => peak += p,
                None => peak = f64::INFINITY,
            }
            jobs += rate * v[m];
        }
        Some((pool.as_slice(), jobs / peak, *ci, *rate))
    };
    let mut pooled_seen: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    for s in 0..ns {
        // A station with a capacity loses what it cannot take: never
        // unstable. (Stations after it are checked at the offered rate,
        // losses ignored: an upper bound of their load.)
        if spec.capacity.get(s).is_some_and(Option::is_some) {
            continue;
        }
        if let Some((pool, u, class, rate)) = pool_load(s) {
            // One refusal per pool, named by its first member.
            let first = pool[0];
            if u >= 1.0 && !pooled_seen.contains(&first) {
                pooled_seen.push(first);
                let others: Vec<&str> = pool[1..]
                    .iter()
                    .map(|&m| spec.stations[m].name.as_str())
                    .collect();
                out.push(Unstable {
                    station: format!(
                        "{} (with {}: their row picks by their queues, so they share the load)",
                        spec.stations[first].name,
                        others.join(", ")
                    ),
                    utilization: u,
                    class,
                    rate,
                    limit: if rate.is_finite() { rate / u } else { 0.0 },
                    shared: false,
                });
            }
            continue;
        }
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

/// A station whose speed curve keeps up with its open arrivals at its
/// peak but not with many jobs present: no steady state in the long run
/// (see [`qsim_theory::kind::collapse`]).
pub(crate) struct Metastable {
    pub station: String,
    /// The class whose arrivals contribute most there.
    pub class: usize,
    /// Visits per second offered by the open classes.
    pub offered: f64,
    /// The curve's peak and its rate with many jobs present.
    pub peak: f64,
    pub limit: f64,
    pub collapse: qsim_theory::kind::Collapse,
}

/// Every station with a speed curve, no capacity and open arrivals below
/// the curve's peak but not below its limit (stations at or above the
/// peak are [`check`]'s).
pub(crate) fn metastable(spec: &NetworkSpec) -> Vec<Metastable> {
    let ns = spec.stations.len();
    let mut offered = vec![0.0; ns];
    let mut top: Vec<(usize, f64)> = vec![(0, 0.0); ns];
    for (ci, c) in spec.classes.iter().enumerate() {
        let Workload::Open { interarrival } = &c.workload else {
            continue;
        };
        let rate = 1.0 / interarrival.mean();
        let Some(v) = visits(spec, ci) else { continue };
        for s in 0..ns {
            let x = rate * v[s];
            offered[s] += x;
            if x > top[s].1 {
                top[s] = (ci, x);
            }
        }
    }
    let mut out = Vec::new();
    for (s, st) in spec.stations.iter().enumerate() {
        // Group kinds time a whole group (no curve); a capacity loses
        // what it cannot take.
        let Some(speed) = &st.speed else { continue };
        if !st.kind.takes_speed_curve() || spec.capacity.get(s).is_some_and(Option::is_some) {
            continue;
        }
        let peak = qsim_theory::kind::peak_rate(speed, None);
        let limit = qsim_theory::kind::limit_rate(speed);
        let o = offered[s];
        if !(o.is_finite() && o > 0.0 && o < peak && o >= limit) {
            continue;
        }
        if let Some(collapse) = qsim_theory::kind::collapse(speed, o) {
            // A throttled region that never lets that many in keeps the
            // station below the point of collapse.
            let held = spec.regions.iter().any(|r| {
                r.stations.contains(&s) && r.limit.is_some_and(|l| u64::from(l) < collapse.at_jobs)
            });
            if held {
                continue;
            }
            out.push(Metastable {
                station: st.name.clone(),
                class: top[s].0,
                offered: o,
                peak,
                limit,
                collapse,
            });
        }
    }
    out
}
