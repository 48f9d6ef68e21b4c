//! Deep waiting and response-time tails of an M/M/c queue by importance
//! sampling.
//!
//! M/M/1. The wait W of a FCFS queue in steady state is the maximum of the
//! random walk S_n = sum of (service - interarrival) over n customers.
//! Sampled with the two rates exchanged (interarrival ~ Exp(mu), service
//! ~ Exp(lambda)) the walk drifts up and passes any level t; the
//! likelihood ratio of the path up to that first passage is
//! exp(-theta S_tau) with theta = mu - lambda, and its mean is
//! P(W > t) = rho exp(-theta t). P(R > t), R = W + the customer's own
//! service B, samples B with the same exchange (ratio (mu/lambda)
//! exp(-theta B)) and then the walk to t - B. Every sample is one
//! passage, whatever the depth of the tail: the relative error stays
//! bounded as t grows.
//!
//! M/M/c, c > 1, wait only. A customer who finds all c servers busy waits
//! while they stay busy, and the jobs beyond c then move like an M/M/1
//! queue with arrival rate lambda and service rate c mu: given that it
//! waits, its wait is that M/M/1's wait given that it waits. So P(W > t)
//! is P(wait) times P(W_1 > t) / rho_1 of that M/M/1 (rho_1 = lambda /
//! (c mu)). Each replication measures P(wait), the fraction of arrivals
//! that find every server busy, on a plain run of the model itself
//! ([`WAIT_ARRIVALS`] arrivals after [`WAIT_WARMUP`]; not rare, a few
//! tenths at usual loads), and the second factor by the walk above; the
//! two are independent, so their product is unbiased and the replications
//! give the interval. The response tail of c > 1 is refused: its own
//! service does not fit the walk (it is not the busy-period service rate).
use super::{Estimand, Method, RareConfig, RareError, RareEstimate, TailOf, check_config};
use crate::dist::exp1;
use crate::network::{Discipline, Network, Routing, Workload};
use crate::results::estimate;
use crate::rng::{SimRng, stream};
use crate::sim::Simulation;
use rayon::prelude::*;

/// Stream id of the importance-sampling draws (apart from the model's).
const TAIL_STREAM: u64 = 6 << 32;

/// Arrivals of the plain run that measures P(wait) of an M/M/c queue, per
/// replication, after the warm-up.
pub const WAIT_ARRIVALS: u64 = 100_000;
/// Arrivals of that run's warm-up (from empty), not counted.
pub const WAIT_WARMUP: u64 = 10_000;

/// The arrival and service rates and the servers of a single M/M/c
/// queue, or why the network is not one.
pub(super) fn mmc_rates(network: &Network) -> Result<(f64, f64, u32), String> {
    let spec = network.spec();
    let (st, cl) = match (spec.stations.as_slice(), spec.classes.as_slice()) {
        ([st], [cl]) => (st, cl),
        _ => return Err("the model has more than one station or class (a tandem or a fork-join has no method here)".into()),
    };
    let c = match st.kind.as_queue() {
        Some((servers, Discipline::Fcfs)) if servers >= 1 && st.speed.is_none() => servers,
        _ => 0,
    };
    if c == 0 || !spec.regions.is_empty() || spec.capacity.iter().any(Option::is_some) {
        return Err(format!(
            "station {} is not a FCFS queue at a fixed speed without a capacity",
            st.name
        ));
    }
    let Workload::Open { interarrival } = &cl.workload else {
        return Err("the workload is not open".into());
    };
    let service = st.service.first().and_then(Option::as_ref);
    let Some(service) = service.filter(|d| d.is_exponential()) else {
        return Err(format!("the service of {} is not exponential", st.name));
    };
    if !interarrival.is_exponential() {
        return Err("the interarrival time is not exponential".into());
    }
    if !matches!(&cl.routing, Routing::Sequence(r) if r.as_slice() == [0]) {
        return Err("the route is not one visit to the queue".into());
    }
    let (lambda, mu) = (1.0 / interarrival.mean(), 1.0 / service.mean());
    if lambda >= f64::from(c) * mu {
        return Err(format!(
            "the queue is not stable (arrival rate {lambda} >= {c} servers x service rate {mu})"
        ));
    }
    Ok((lambda, mu, c))
}

/// The fraction of arrivals that find all `c` servers busy, on a plain
/// run of replication `r` of the model, and the events it took.
fn wait_fraction(
    network: &Network,
    cfg: &RareConfig,
    c: u32,
    r: u32,
) -> Result<(f64, u64), RareError> {
    let run = super::split::particle_config(cfg);
    let mut sim = Simulation::new(network, &run, r)?;
    let (mut arrivals, mut waited) = (0u64, 0u64);
    let mut n = sim.jobs_at(0).unwrap_or(0);
    while arrivals < WAIT_WARMUP + WAIT_ARRIVALS {
        if !sim.step()? {
            return Err(RareError::Config(
                "the run measuring P(wait) ended before its arrivals".into(),
            ));
        }
        if sim.events() > cfg.max_events {
            return Err(RareError::EventLimit {
                limit: cfg.max_events,
            });
        }
        let now = sim.jobs_at(0).unwrap_or(0);
        if now > n {
            arrivals += 1;
            if arrivals > WAIT_WARMUP && n >= c {
                waited += 1;
            }
        }
        n = now;
    }
    Ok((waited as f64 / WAIT_ARRIVALS as f64, sim.events()))
}

/// One sample of the weighted first passage above `x` (>= 0) of the walk
/// with exchanged rates, and its events (two per customer).
fn passage(x: f64, lambda: f64, mu: f64, rng: &mut SimRng) -> (f64, u64) {
    let theta = mu - lambda;
    let mut s = 0.0;
    let mut events = 0;
    while s <= x {
        s += exp1(rng) / lambda - exp1(rng) / mu;
        events += 2;
    }
    ((-theta * s).exp(), events)
}

/// P(wait > t_s) or P(response > t_s) in steady state of a single M/M/1
/// queue, or P(wait > t_s) of a single M/M/c queue, by importance
/// sampling (see the module docs); other models are refused with the
/// reason.
pub fn tail_probability(
    network: &Network,
    of: TailOf,
    t_s: f64,
    cfg: &RareConfig,
) -> Result<RareEstimate, RareError> {
    check_config(network, cfg)?;
    if !(t_s.is_finite() && t_s >= 0.0) {
        return Err(RareError::Config(format!(
            "the threshold must be a number of seconds >= 0, found {t_s}"
        )));
    }
    let (lambda, mu, c) = mmc_rates(network).map_err(|why| {
        RareError::Config(format!(
            "a tail by importance sampling needs a single M/M/c queue: {why}"
        ))
    })?;
    if c > 1 && of == TailOf::Response {
        return Err(RareError::Config(format!(
            "the response-time tail by importance sampling needs one server; this queue has {c} (the wait tail, wait_time_s>T, is available)"
        )));
    }
    // Beyond c jobs the queue moves as an M/M/1 with service rate c mu.
    let busy = f64::from(c) * mu;
    let theta = busy - lambda;
    let reps: Vec<(f64, u64)> = (0..cfg.replications)
        .into_par_iter()
        .map(|r| -> Result<(f64, u64), RareError> {
            let mut rng = stream(cfg.seed, r, TAIL_STREAM);
            let (mut sum, mut events) = (0.0, 0u64);
            for _ in 0..cfg.effort {
                let (w, e) = match of {
                    TailOf::Wait => passage(t_s, lambda, busy, &mut rng),
                    TailOf::Response => {
                        let b = exp1(&mut rng) / lambda;
                        let ratio = mu / lambda * (-theta * b).exp();
                        if b > t_s {
                            (ratio, 1)
                        } else {
                            let (w, e) = passage(t_s - b, lambda, mu, &mut rng);
                            (ratio * w, e + 1)
                        }
                    }
                };
                sum += w;
                events += e;
            }
            let tail = sum / f64::from(cfg.effort);
            if c == 1 {
                return Ok((tail, events));
            }
            // P(wait) times P(W_1 > t | W_1 > 0) = tail / rho_1.
            let (waits, run_events) = wait_fraction(network, cfg, c, r)?;
            Ok((waits * tail * busy / lambda, events + run_events))
        })
        .collect::<Result<_, _>>()?;
    Ok(RareEstimate {
        estimand: Estimand::Tail { of, t_s },
        method: Method::ImportanceSampling,
        level: None,
        start: None,
        value: estimate(reps.iter().map(|r| r.0)),
        cycle_s: None,
        cycle_probability: None,
        replications: cfg.replications,
        events: reps.iter().map(|r| r.1).sum(),
        stages: Vec::new(),
        warnings: Vec::new(),
    })
}
