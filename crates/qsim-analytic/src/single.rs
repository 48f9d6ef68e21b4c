//! Closed-form results for single queues: M/M/1, M/M/c (Erlang C), M/M/c/K,
//! Erlang B, M/G/1 (Pollaczek–Khinchine) and M/M/∞.
//!
//! Rates are per second, times in seconds. Erlang B and C are computed with
//! the recursion `B(k) = a·B(k−1) / (k + a·B(k−1))`, which never forms a
//! factorial or a power, so it is exact to rounding for thousands of servers.

use serde::Serialize;

use crate::error::{Error, Result, invalid, non_negative, positive};

/// Steady-state figures of one queue with an infinite (or finite) waiting room.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct QueueMetrics {
    /// Rate of jobs that enter and complete service (jobs per second).
    pub throughput_per_s: f64,
    /// Busy fraction of each server (0..1), the simulator's `utilization`;
    /// for M/M/∞ the mean number of busy servers λ/μ, where the simulator
    /// reports 0 for a delay station (compare `mean_jobs` there).
    pub utilization: f64,
    /// Probability that an arriving (admitted) job has to wait.
    pub wait_probability: f64,
    /// Mean time spent waiting before service starts (seconds).
    pub wait_time_s: f64,
    /// Mean time from arrival to departure (seconds).
    pub response_time_s: f64,
    /// Mean number of jobs waiting (not in service).
    pub mean_waiting: f64,
    /// Mean number of jobs present, waiting or in service.
    pub mean_jobs: f64,
    /// Probability that an arrival is turned away (only M/M/c/K; 0 otherwise).
    pub loss_probability: f64,
}

fn check_stable(rho: f64, what: &str) -> Result<()> {
    if rho >= 1.0 {
        Err(Error::Unstable {
            station: what.to_string(),
            utilization: rho,
        })
    } else {
        Ok(())
    }
}

fn check_servers(servers: u32) -> Result<()> {
    if servers == 0 {
        Err(invalid("servers", servers, "at least 1"))
    } else {
        Ok(())
    }
}

/// M/M/1: Poisson arrivals, one exponential server.
///
/// Returns [`Error::Unstable`] when `arrival_rate_per_s ≥ service_rate_per_s`.
pub fn mm1(arrival_rate_per_s: f64, service_rate_per_s: f64) -> Result<QueueMetrics> {
    mmc(arrival_rate_per_s, service_rate_per_s, 1)
}

/// The `p`-quantile of the M/M/1 response time, which is exponential with
/// rate `μ − λ`: `−ln(1 − p) / (μ − λ)`. `p` must be in [0, 1).
pub fn mm1_response_time_percentile_s(
    arrival_rate_per_s: f64,
    service_rate_per_s: f64,
    p: f64,
) -> Result<f64> {
    let m = mm1(arrival_rate_per_s, service_rate_per_s)?;
    check_quantile(p)?;
    Ok(-(1.0 - p).ln() * m.response_time_s)
}

fn check_quantile(p: f64) -> Result<()> {
    if p.is_finite() && (0.0..1.0).contains(&p) {
        Ok(())
    } else {
        Err(invalid("p", p, "a probability in [0, 1)"))
    }
}

/// Erlang B: probability that an arrival finds all `servers` busy in an
/// M/M/c/c loss system offered `offered_load` Erlangs (λ/μ).
pub fn erlang_b(servers: u32, offered_load: f64) -> Result<f64> {
    non_negative("offered_load", offered_load)?;
    let mut b = 1.0;
    for k in 1..=servers {
        let ab = offered_load * b;
        b = ab / (f64::from(k) + ab);
        // Once B underflows to 0 every later step gives 0 exactly: stop, so
        // a huge `servers` with a modest load costs O(load), not O(servers).
        if b == 0.0 {
            break;
        }
    }
    Ok(b)
}

/// Erlang C: probability that an arrival has to wait in an M/M/c queue offered
/// `offered_load` Erlangs (λ/μ) with `servers` servers. Requires
/// `offered_load < servers`.
pub fn erlang_c(servers: u32, offered_load: f64) -> Result<f64> {
    check_servers(servers)?;
    let c = f64::from(servers);
    check_stable(non_negative("offered_load", offered_load)? / c, "m/m/c")?;
    let b = erlang_b(servers, offered_load)?;
    Ok(c * b / (c - offered_load * (1.0 - b)))
}

/// M/M/c: Poisson arrivals, `servers` identical exponential servers, FCFS.
pub fn mmc(arrival_rate_per_s: f64, service_rate_per_s: f64, servers: u32) -> Result<QueueMetrics> {
    non_negative("arrival_rate_per_s", arrival_rate_per_s)?;
    positive("service_rate_per_s", service_rate_per_s)?;
    check_servers(servers)?;
    let c = f64::from(servers);
    let a = arrival_rate_per_s / service_rate_per_s;
    let rho = a / c;
    check_stable(rho, if servers == 1 { "m/m/1" } else { "m/m/c" })?;
    let pw = erlang_c(servers, a)?;
    let wait_time_s = pw / (c * service_rate_per_s - arrival_rate_per_s);
    let response_time_s = wait_time_s + 1.0 / service_rate_per_s;
    Ok(QueueMetrics {
        throughput_per_s: arrival_rate_per_s,
        utilization: rho,
        wait_probability: pw,
        wait_time_s,
        response_time_s,
        mean_waiting: arrival_rate_per_s * wait_time_s,
        mean_jobs: arrival_rate_per_s * response_time_s,
        loss_probability: 0.0,
    })
}

/// M/M/c waiting-time tail `P(W > t)`: `C · exp(−(cμ − λ)·t)`, where C is the
/// Erlang C probability of waiting.
pub fn mmc_wait_time_exceeds_probability(
    arrival_rate_per_s: f64,
    service_rate_per_s: f64,
    servers: u32,
    t_s: f64,
) -> Result<f64> {
    let m = mmc(arrival_rate_per_s, service_rate_per_s, servers)?;
    non_negative("t_s", t_s)?;
    let theta = f64::from(servers) * service_rate_per_s - arrival_rate_per_s;
    Ok(m.wait_probability * (-theta * t_s).exp())
}

/// The `p`-quantile of the M/M/c waiting time: 0 when `p ≤ 1 − C`, else
/// `ln(C / (1 − p)) / (cμ − λ)`.
pub fn mmc_wait_time_percentile_s(
    arrival_rate_per_s: f64,
    service_rate_per_s: f64,
    servers: u32,
    p: f64,
) -> Result<f64> {
    let m = mmc(arrival_rate_per_s, service_rate_per_s, servers)?;
    check_quantile(p)?;
    let theta = f64::from(servers) * service_rate_per_s - arrival_rate_per_s;
    if 1.0 - p >= m.wait_probability {
        Ok(0.0)
    } else {
        Ok((m.wait_probability / (1.0 - p)).ln() / theta)
    }
}

/// M/M/c response-time tail `P(R > t)`, R = W + S with S ~ Exp(μ) and W as in
/// [`mmc_wait_time_exceeds_probability`]:
/// `(1 − C)e^{−μt} + C(θe^{−μt} − μe^{−θt})/(θ − μ)` with θ = cμ − λ
/// (and `C·e^{−μt}(1 + μt)` for the second term when θ = μ).
pub fn mmc_response_time_exceeds_probability(
    arrival_rate_per_s: f64,
    service_rate_per_s: f64,
    servers: u32,
    t_s: f64,
) -> Result<f64> {
    let m = mmc(arrival_rate_per_s, service_rate_per_s, servers)?;
    non_negative("t_s", t_s)?;
    let mu = service_rate_per_s;
    let theta = f64::from(servers) * mu - arrival_rate_per_s;
    let es = (-mu * t_s).exp();
    let waited = if ((theta - mu) / mu).abs() < 1e-9 {
        es * (1.0 + mu * t_s)
    } else {
        (theta * es - mu * (-theta * t_s).exp()) / (theta - mu)
    };
    Ok(((1.0 - m.wait_probability) * es + m.wait_probability * waited).clamp(0.0, 1.0))
}

/// The `p`-quantile of the M/M/c response time, found by bisection on
/// [`mmc_response_time_exceeds_probability`] (relative accuracy about 1e-12).
pub fn mmc_response_time_percentile_s(
    arrival_rate_per_s: f64,
    service_rate_per_s: f64,
    servers: u32,
    p: f64,
) -> Result<f64> {
    check_quantile(p)?;
    let tail = |t: f64| {
        mmc_response_time_exceeds_probability(arrival_rate_per_s, service_rate_per_s, servers, t)
    };
    let target = 1.0 - p;
    let mut hi = 1.0 / service_rate_per_s;
    while tail(hi)? > target {
        hi *= 2.0;
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if tail(mid)? > target {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-13 * hi {
            break;
        }
    }
    Ok(0.5 * (lo + hi))
}

/// M/M/c/K: `servers` servers and room for `capacity` jobs in total
/// (`capacity ≥ servers`); arrivals that find the system full are lost.
///
/// Solved as a birth–death chain with terms kept in logarithms, so large
/// capacities and loads do not overflow. Stable at any load.
pub fn mmck(
    arrival_rate_per_s: f64,
    service_rate_per_s: f64,
    servers: u32,
    capacity: u32,
) -> Result<QueueMetrics> {
    positive("arrival_rate_per_s", arrival_rate_per_s)?;
    positive("service_rate_per_s", service_rate_per_s)?;
    check_servers(servers)?;
    if capacity < servers {
        return Err(invalid(
            "capacity",
            capacity,
            &format!("at least the number of servers ({servers})"),
        ));
    }
    let probs = mmck_distribution(arrival_rate_per_s, service_rate_per_s, servers, capacity)?;
    let c = f64::from(servers);
    let blocking = probs[capacity as usize];
    let throughput = arrival_rate_per_s * (1.0 - blocking);
    let mut mean_jobs = 0.0;
    let mut waiting = 0.0;
    let mut busy_or_more = 0.0;
    for (n, p) in probs.iter().enumerate() {
        let n = n as f64;
        mean_jobs += n * p;
        waiting += (n - c).max(0.0) * p;
        if n >= c {
            busy_or_more += p;
        }
    }
    // Admitted arrivals see the time-average distribution restricted to n < K.
    let wait_probability = if blocking < 1.0 {
        ((busy_or_more - blocking) / (1.0 - blocking)).max(0.0)
    } else {
        1.0
    };
    Ok(QueueMetrics {
        throughput_per_s: throughput,
        utilization: throughput / (c * service_rate_per_s),
        wait_probability,
        wait_time_s: waiting / throughput,
        response_time_s: mean_jobs / throughput,
        mean_waiting: waiting,
        mean_jobs,
        loss_probability: blocking,
    })
}

/// Stationary distribution `p(n)`, n = 0..=capacity, of the M/M/c/K queue.
pub fn mmck_distribution(
    arrival_rate_per_s: f64,
    service_rate_per_s: f64,
    servers: u32,
    capacity: u32,
) -> Result<Vec<f64>> {
    positive("arrival_rate_per_s", arrival_rate_per_s)?;
    positive("service_rate_per_s", service_rate_per_s)?;
    check_servers(servers)?;
    let mut log_terms = Vec::with_capacity(capacity as usize + 1);
    let mut acc = 0.0;
    log_terms.push(0.0);
    for n in 1..=capacity {
        let rate_out = f64::from(n.min(servers)) * service_rate_per_s;
        acc += (arrival_rate_per_s / rate_out).ln();
        log_terms.push(acc);
    }
    Ok(normalize_logs(&log_terms))
}

/// Turns log-weights into probabilities that sum to 1.
pub(crate) fn normalize_logs(log_terms: &[f64]) -> Vec<f64> {
    let max = log_terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut probs: Vec<f64> = log_terms.iter().map(|l| (l - max).exp()).collect();
    let total: f64 = probs.iter().sum();
    for p in &mut probs {
        *p /= total;
    }
    probs
}

/// M/G/1 by the Pollaczek–Khinchine formula: mean wait
/// `ρ·(1 + scv)/2 · E[S]/(1 − ρ)`, where `scv` is the squared coefficient of
/// variation of the service time (1 for exponential, 0 for deterministic).
pub fn mg1(arrival_rate_per_s: f64, mean_service_s: f64, service_scv: f64) -> Result<QueueMetrics> {
    non_negative("arrival_rate_per_s", arrival_rate_per_s)?;
    positive("mean_service_s", mean_service_s)?;
    non_negative("service_scv", service_scv)?;
    let rho = arrival_rate_per_s * mean_service_s;
    check_stable(rho, "m/g/1")?;
    let wait_time_s = rho * (1.0 + service_scv) / 2.0 * mean_service_s / (1.0 - rho);
    let response_time_s = wait_time_s + mean_service_s;
    Ok(QueueMetrics {
        throughput_per_s: arrival_rate_per_s,
        utilization: rho,
        wait_probability: rho,
        wait_time_s,
        response_time_s,
        mean_waiting: arrival_rate_per_s * wait_time_s,
        mean_jobs: arrival_rate_per_s * response_time_s,
        loss_probability: 0.0,
    })
}

/// M/M/∞ (a pure delay): nobody waits, the number present is Poisson with
/// mean λ/μ. `utilization` is that mean (the mean number of busy servers),
/// not the simulator's 0 for a delay station.
pub fn mminf(arrival_rate_per_s: f64, service_rate_per_s: f64) -> Result<QueueMetrics> {
    non_negative("arrival_rate_per_s", arrival_rate_per_s)?;
    positive("service_rate_per_s", service_rate_per_s)?;
    let a = arrival_rate_per_s / service_rate_per_s;
    Ok(QueueMetrics {
        throughput_per_s: arrival_rate_per_s,
        utilization: a,
        wait_probability: 0.0,
        wait_time_s: 0.0,
        response_time_s: 1.0 / service_rate_per_s,
        mean_waiting: 0.0,
        mean_jobs: a,
        loss_probability: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn mm1_closed_form() {
        let m = mm1(8.0, 10.0).unwrap();
        assert!(close(m.utilization, 0.8, 1e-12));
        assert!(close(m.response_time_s, 1.0 / 2.0, 1e-12));
        assert!(close(m.mean_jobs, 4.0, 1e-12));
        assert!(close(m.wait_time_s, 0.8 / 2.0, 1e-12));
        assert!(close(m.wait_probability, 0.8, 1e-12));
        let p99 = mm1_response_time_percentile_s(8.0, 10.0, 0.99).unwrap();
        assert!(close(p99, 100f64.ln() / 2.0, 1e-12));
    }

    #[test]
    fn erlang_b_known_values() {
        // B(1 server, 1 Erlang) = 1/2; B(2, 1) = (1/2)/(1 + 1 + 1/2) = 1/5.
        assert!(close(erlang_b(1, 1.0).unwrap(), 0.5, 1e-14));
        assert!(close(erlang_b(2, 1.0).unwrap(), 0.2, 1e-14));
        // Erlang B tables: 10 circuits offered 5 Erlangs block about 1.84%.
        assert!((erlang_b(10, 5.0).unwrap() - 0.018385).abs() < 5e-6);
    }

    #[test]
    fn erlang_c_matches_factorial_formula() {
        // Direct formula with factorials, fine for small c.
        fn direct(c: u32, a: f64) -> f64 {
            let mut sum = 0.0;
            let mut term = 1.0;
            for k in 0..c {
                if k > 0 {
                    term *= a / f64::from(k);
                }
                sum += term;
            }
            let top = term * a / f64::from(c) * f64::from(c) / (f64::from(c) - a);
            top / (sum + top)
        }
        assert!(close(erlang_c(2, 1.0).unwrap(), 1.0 / 3.0, 1e-13));
        for (c, a) in [(1, 0.5), (3, 2.2), (10, 8.0), (20, 19.5)] {
            assert!(close(erlang_c(c, a).unwrap(), direct(c, a), 1e-11));
        }
        // M/M/1: C = ρ.
        assert!(close(erlang_c(1, 0.7).unwrap(), 0.7, 1e-13));
    }

    #[test]
    fn erlang_c_thousands_of_servers() {
        let c = erlang_c(5000, 4950.0).unwrap();
        assert!(c.is_finite() && c > 0.0 && c < 1.0);
    }

    #[test]
    fn mmc_response_tail_and_percentile() {
        // c = 1 must reduce to the exponential R ~ Exp(μ − λ).
        let t = 0.3;
        let tail = mmc_response_time_exceeds_probability(8.0, 10.0, 1, t).unwrap();
        assert!(close(tail, (-2.0 * t).exp(), 1e-9));
        let q = mmc_response_time_percentile_s(8.0, 10.0, 1, 0.9).unwrap();
        assert!(close(q, 10f64.ln() / 2.0, 1e-9));
        // θ = μ special case: c = 2, μ = 1, λ = 1.
        let tail = mmc_response_time_exceeds_probability(1.0, 1.0, 2, 1.0).unwrap();
        let cw = erlang_c(2, 1.0).unwrap();
        let expect = (1.0 - cw) * (-1f64).exp() + cw * (-1f64).exp() * 2.0;
        assert!(close(tail, expect, 1e-8));
        let w = mmc_wait_time_percentile_s(1.0, 1.0, 2, 0.5).unwrap();
        assert_eq!(w, 0.0);
    }

    #[test]
    fn mmck_matches_birth_death_sum() {
        let (lam, mu, c, k) = (5.0, 2.0, 2u32, 6u32);
        let mut w = vec![1.0];
        for n in 1..=k {
            let last = *w.last().unwrap();
            w.push(last * lam / (f64::from(n.min(c)) * mu));
        }
        let g: f64 = w.iter().sum();
        let p: Vec<f64> = w.iter().map(|x| x / g).collect();
        let l: f64 = p.iter().enumerate().map(|(n, x)| n as f64 * x).sum();
        let x = lam * (1.0 - p[k as usize]);
        let m = mmck(lam, mu, c, k).unwrap();
        assert!(close(m.loss_probability, p[k as usize], 1e-12));
        assert!(close(m.throughput_per_s, x, 1e-12));
        assert!(close(m.mean_jobs, l, 1e-12));
        assert!(close(m.response_time_s, l / x, 1e-12));
        // Large K at low load tends to M/M/c.
        let big = mmck(3.0, 2.0, 2, 2000).unwrap();
        let inf = mmc(3.0, 2.0, 2).unwrap();
        assert!(close(big.mean_jobs, inf.mean_jobs, 1e-9));
    }

    #[test]
    fn mg1_reduces_to_mm1_and_md1() {
        let g = mg1(8.0, 0.1, 1.0).unwrap();
        let m = mm1(8.0, 10.0).unwrap();
        assert!(close(g.response_time_s, m.response_time_s, 1e-12));
        let d = mg1(8.0, 0.1, 0.0).unwrap();
        assert!(close(d.wait_time_s, m.wait_time_s / 2.0, 1e-12));
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(matches!(mm1(10.0, 10.0), Err(Error::Unstable { .. })));
        assert!(mm1(f64::NAN, 1.0).is_err());
        assert!(mmc(1.0, -1.0, 2).is_err());
        assert!(mmc(1.0, 1.0, 0).is_err());
        assert!(mmck(1.0, 1.0, 3, 2).is_err());
        assert!(mm1_response_time_percentile_s(1.0, 2.0, 1.0).is_err());
        let msg = mm1(12.0, 10.0).unwrap_err().to_string();
        assert!(msg.contains("utilization 1.2000"), "{msg}");
    }
}
