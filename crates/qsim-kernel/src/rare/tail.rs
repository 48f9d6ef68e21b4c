//! Deep response-time tails of an M/M/1 queue by importance sampling.
//!
//! The wait W of a FCFS queue in steady state is the maximum of the random
//! walk S_n = sum of (service - interarrival) over n customers. Sampled
//! with the two rates exchanged (interarrival ~ Exp(mu), service ~
//! Exp(lambda)) the walk drifts up and passes any level t; the likelihood
//! ratio of the path up to that first passage is exp(-theta S_tau) with
//! theta = mu - lambda, and its mean is P(W > t) = rho exp(-theta t).
//! P(R > t), R = W + the customer's own service B, samples B with the same
//! exchange (ratio (mu/lambda) exp(-theta B)) and then the walk to t - B.
//! Every sample is one passage, whatever the depth of the tail: the
//! relative error stays bounded as t grows.

use super::{Estimand, Method, RareConfig, RareError, RareEstimate, TailOf, check_config};
use crate::dist::exp1;
use crate::network::{Discipline, Network, Routing, Workload};
use crate::results::estimate;
use crate::rng::{SimRng, stream};
use rayon::prelude::*;

/// Stream id of the importance-sampling draws (apart from the model's).
const TAIL_STREAM: u64 = 6 << 32;

/// The arrival and service rates of a single M/M/1 queue, or why the
/// network is not one.
pub(super) fn mm1_rates(network: &Network) -> Result<(f64, f64), String> {
    let spec = network.spec();
    let (st, cl) = match (spec.stations.as_slice(), spec.classes.as_slice()) {
        ([st], [cl]) => (st, cl),
        _ => return Err("the model has more than one station or class".into()),
    };
    if st.kind.as_queue() != Some((1, Discipline::Fcfs))
        || st.speed.is_some()
        || !spec.regions.is_empty()
        || spec.capacity.iter().any(Option::is_some)
    {
        return Err(format!(
            "station {} is not one FCFS server at a fixed speed without a capacity",
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
    if lambda >= mu {
        return Err(format!(
            "the queue is not stable (arrival rate {lambda} >= service rate {mu})"
        ));
    }
    Ok((lambda, mu))
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
/// queue, by importance sampling; other models are refused with the reason.
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
    let (lambda, mu) = mm1_rates(network).map_err(|why| {
        RareError::Config(format!(
            "a tail by importance sampling needs a single M/M/1 queue: {why}"
        ))
    })?;
    let theta = mu - lambda;
    let reps: Vec<(f64, u64)> = (0..cfg.replications)
        .into_par_iter()
        .map(|r| {
            let mut rng = stream(cfg.seed, r, TAIL_STREAM);
            let (mut sum, mut events) = (0.0, 0u64);
            for _ in 0..cfg.effort {
                let (w, e) = match of {
                    TailOf::Wait => passage(t_s, lambda, mu, &mut rng),
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
            (sum / f64::from(cfg.effort), events)
        })
        .collect();
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
