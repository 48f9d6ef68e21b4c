//! Deep waiting and response-time tails of a single queue by importance
//! sampling.
//!
//! One server (GI/G/1). The wait W of a FCFS queue in steady state is the
//! maximum of the random walk S_n = sum of (service - interarrival) over n
//! customers, a walk that drifts down when the queue is stable. Sampled
//! with the service law tilted by theta and the interarrival law by
//! -theta ([`Dist::tilted`]), where theta > 0 solves M_B(theta) M_A(-theta)
//! = 1, the walk drifts up and passes any level t; the likelihood ratio of
//! the path up to that first passage tau is exp(-theta S_tau), and its
//! mean is P(W > t). P(R > t), R = W + the customer's own service B,
//! samples B from the tilted service law too (ratio M_B(theta)
//! exp(-theta B)) and then the walk to t - B. Every sample is one
//! passage, whatever the depth of the tail: the relative error stays
//! bounded as t grows. With exponential times the tilt exchanges the two
//! rates. The root theta is found by bisection to the last bits of a
//! double; the ratio carries exp(n f(theta)) with f = ln M_B + ln M_A(-.)
//! at the theta used, so what is left of the root's error costs nothing in
//! bias. Every family with a moment generating function is taken; a
//! lognormal time is refused (its tail is heavier than any exponential, so
//! the wait's tail does not decay like e^-theta t and no tilt of this kind
//! exists).
//!
//! Several classes at one FCFS server, each with Poisson arrivals: they
//! arrive together as one Poisson stream, and an arbitrary customer's
//! service is the mix of the classes' laws by their arrival rates
//! (`walk::Mix`, tilted part by part, the parts' weights moved by their
//! M(theta)); every class sees the same wait (Poisson arrivals see time
//! averages), and one class's response adds its own service, tilted by
//! the same theta ([`class_tail_probability`]).
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
//! service does not fit the walk (it is not the busy-period service rate);
//! so is any c > 1 queue whose times are not exponential (the argument
//! needs memoryless servers).
use super::tandem::{Layout, Tandem};
use super::walk::{Mix, Walk};
use super::{
    Estimand, MAX_WEIGHT_SHARE, Method, RareConfig, RareError, RareEstimate, RareWarning, TailOf,
    check_config,
};
use crate::dist::Dist;
use crate::network::{ClassId, Discipline, Network, Routing, Spread, StationKind, Workload};
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

/// The laws of a single FCFS queue a tail is computed for.
struct Queue {
    /// An arbitrary customer's service: the classes' laws, in class order,
    /// with their shares of the arrivals.
    service: Mix,
    /// The time between arrivals of any class.
    interarrival: Dist,
    servers: u32,
}

/// What a tail is computed for.
enum Shape {
    /// One queue.
    Queue(Queue),
    /// Single-server FCFS queues in tandem, possibly ending in a fork to
    /// parallel tandems and their join; and the interarrival law.
    Paths(Layout, Dist),
}

/// The stations of a route, prefix then fork branches, in layout order,
/// with each one's parent; or why the route has no such shape.
fn route_paths(
    network: &Network,
    route: &[usize],
) -> Result<(Vec<usize>, Vec<Option<usize>>), String> {
    let spec = network.spec();
    let fork_at = route
        .iter()
        .position(|&s| spec.stations[s].kind.as_fork().is_some());
    let prefix = &route[..fork_at.unwrap_or(route.len())];
    let mut stations: Vec<usize> = prefix.to_vec();
    let mut parent: Vec<Option<usize>> = (0..prefix.len()).map(|i| i.checked_sub(1)).collect();
    if let Some(p) = fork_at {
        let fork = spec.stations[route[p]].kind.as_fork().expect("a fork");
        let quorum = match &spec.stations[fork.join].kind {
            StationKind::Join(j) => j.quorum,
            _ => None,
        };
        if !(route[p + 1..].is_empty() || route[p + 1..] == [fork.join]) {
            return Err("the route goes on after the fork and its join (a join releases jobs out of their order, which the method needs kept)".into());
        }
        if quorum.is_some_and(|q| q != fork.fan_out) {
            return Err(
                "the join has a quorum (only a join that waits for every sub-job is taken)".into(),
            );
        }
        if fork.spread != Spread::Even || fork.fan_out as usize != fork.targets.len() {
            return Err(format!(
                "fork {} does not send exactly one sub-job to each of its targets",
                spec.stations[route[p]].name
            ));
        }
        for (i, &(target, _)) in fork.targets.iter().enumerate() {
            let mut branch = vec![target];
            branch.extend(fork.routes.get(i).into_iter().flatten());
            let mut up = prefix.len().checked_sub(1);
            for s in branch {
                parent.push(up);
                up = Some(stations.len());
                stations.push(s);
            }
        }
    }
    if (1..stations.len()).any(|i| stations[..i].contains(&stations[i])) {
        return Err(
            "a station is visited twice (by the route or by two sub-jobs of a fork)".into(),
        );
    }
    Ok((stations, parent))
}

/// The single queue, tandem or fork-join of `network`, or why the network
/// is none of them.
fn shape(network: &Network) -> Result<Shape, String> {
    let spec = network.spec();
    if !spec.regions.is_empty() || network.overload().is_some() {
        return Err("the model has a region, or client or overload behaviour (timeouts, retries, shedding), which changes the queues' law".into());
    }
    if spec.classes.len() > 1 {
        return classes_at_one_queue(network);
    }
    let [cl] = spec.classes.as_slice() else {
        return Err("the model has no class".into());
    };
    let Workload::Open { interarrival } = &cl.workload else {
        return Err("the workload is not open".into());
    };
    let route =
        match &cl.routing {
            Routing::Sequence(r) if !r.is_empty() => r.as_slice(),
            _ => return Err(
                "the route is not a fixed sequence of stations (a random route has no method here)"
                    .into(),
            ),
        };
    let (stations, parent) = route_paths(network, route)?;
    let several = stations.len() > 1 || stations.len() < route.len();
    let mut services = Vec::new();
    let mut servers = 1;
    for &s in &stations {
        let st = &spec.stations[s];
        let c = fcfs_servers(network, s)?;
        if c > 1 && several {
            return Err(format!(
                "station {} has {c} servers; a route through several stations needs one server at each",
                st.name
            ));
        }
        let Some(service) = st.service.first().and_then(Option::as_ref) else {
            return Err(format!("the class does not visit {}", st.name));
        };
        let (lambda, mu) = (1.0 / interarrival.mean(), 1.0 / service.mean());
        if lambda >= f64::from(c) * mu {
            return Err(format!(
                "station {} is not stable (arrival rate {lambda} >= {c} servers x service rate {mu})",
                st.name
            ));
        }
        servers = c;
        services.push(service.clone());
    }
    if several {
        return Ok(Shape::Paths(
            Layout { services, parent },
            interarrival.clone(),
        ));
    }
    let service = services.remove(0);
    if servers > 1 && !(service.is_exponential() && interarrival.is_exponential()) {
        return Err(format!(
            "with {servers} servers the service and interarrival times must be exponential (one server takes any law but the lognormal)"
        ));
    }
    Ok(Shape::Queue(Queue {
        service: Mix::one(service),
        interarrival: interarrival.clone(),
        servers,
    }))
}

/// The servers of FCFS queue `s` at a fixed speed without a capacity, or
/// why it is not one.
fn fcfs_servers(network: &Network, s: usize) -> Result<u32, String> {
    let st = &network.spec().stations[s];
    match st.kind.as_queue() {
        Some((c, Discipline::Fcfs))
            if c >= 1 && st.speed.is_none() && network.capacity(s).is_none() =>
        {
            Ok(c)
        }
        _ => Err(format!(
            "station {} is not a FCFS queue at a fixed speed without a capacity",
            st.name
        )),
    }
}

/// Several classes at one FCFS server, each with Poisson arrivals (so that
/// together they are Poisson, and every class sees the same wait): an
/// arbitrary customer's service is the classes' laws mixed by their
/// arrival rates.
fn classes_at_one_queue(network: &Network) -> Result<Shape, String> {
    let spec = network.spec();
    let why = "several classes are taken at one FCFS server only, every class open with Poisson arrivals (exponential interarrival times) and routed to that server alone";
    let mut station = None;
    let mut parts = Vec::new();
    for (k, cl) in spec.classes.iter().enumerate() {
        let (Workload::Open { interarrival }, Routing::Sequence(r)) = (&cl.workload, &cl.routing)
        else {
            return Err(format!("{why}; class {} is not", cl.name));
        };
        if !interarrival.is_exponential() || r.len() != 1 || station.is_some_and(|s| s != r[0]) {
            return Err(format!("{why}; class {} is not", cl.name));
        }
        station = Some(r[0]);
        parts.push((1.0 / interarrival.mean(), k));
    }
    let s = station.expect("a class");
    let st = &spec.stations[s];
    if fcfs_servers(network, s) != Ok(1) {
        return Err(format!(
            "{why}; station {} is not one FCFS server at a fixed speed without a capacity",
            st.name
        ));
    }
    let rate: f64 = parts.iter().map(|(l, _)| l).sum();
    let mut mix = Vec::new();
    for &(l, k) in &parts {
        let Some(service) = st.service.get(k).and_then(Option::as_ref) else {
            return Err(format!(
                "class {} does not visit {}",
                spec.classes[k].name, st.name
            ));
        };
        mix.push((l / rate, service.clone()));
    }
    let mix = Mix(mix);
    if rate * mix.mean() >= 1.0 {
        return Err(format!(
            "station {} is not stable (load {} >= 1)",
            st.name,
            rate * mix.mean()
        ));
    }
    let interarrival = Dist::exponential(1.0 / rate).map_err(|e| e.to_string())?;
    Ok(Shape::Queue(Queue {
        service: mix,
        interarrival,
        servers: 1,
    }))
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

/// P(wait > t_s) or P(response > t_s) in steady state of an arbitrary
/// customer (of any class) at a single FCFS queue with one server (any
/// times but lognormal ones; several classes with Poisson arrivals), or
/// P(wait > t_s) of a single M/M/c queue, or P(response > t_s) through
/// single-server FCFS queues in tandem or a fork-join of them, by
/// importance sampling (see the module docs); other models are refused
/// with the reason.
pub fn tail_probability(
    network: &Network,
    of: TailOf,
    t_s: f64,
    cfg: &RareConfig,
) -> Result<RareEstimate, RareError> {
    tail_of(network, None, of, t_s, cfg)
}

/// The same for the customers of one class. At a single FCFS server whose
/// classes all arrive as Poisson streams, every class sees the same wait,
/// and a class's response is that wait plus its own service.
pub fn class_tail_probability(
    network: &Network,
    class: ClassId,
    of: TailOf,
    t_s: f64,
    cfg: &RareConfig,
) -> Result<RareEstimate, RareError> {
    if class >= network.spec().classes.len() {
        return Err(RareError::Config(format!("there is no class {class}")));
    }
    tail_of(network, Some(class), of, t_s, cfg)
}

fn tail_of(
    network: &Network,
    class: Option<ClassId>,
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
    let refused = |why: String| {
        RareError::Config(format!(
            "a tail by importance sampling needs a single FCFS queue (GI/G/1, or M/M/c for the wait), or for the response single-server FCFS queues in tandem or a fork-join of them: {why}"
        ))
    };
    let queue = match shape(network).map_err(refused)? {
        Shape::Queue(q) => q,
        Shape::Paths(layout, interarrival) => {
            if of == TailOf::Wait {
                return Err(refused("the wait tail of a route through several stations is not offered; the response tail (response_time_s>T) is".into()));
            }
            let tandem = Tandem::new(layout, interarrival, t_s).map_err(refused)?;
            let reps = replicate(
                cfg,
                |rng| tandem.response(t_s, rng),
                |tail, _| Ok((tail, 0)),
            )?;
            return Ok(tail_estimate((of, t_s, class), cfg, &reps));
        }
    };
    let c = queue.servers;
    if c > 1 && of == TailOf::Response {
        return Err(RareError::Config(format!(
            "the response-time tail by importance sampling needs one server; this queue has {c} (the wait tail, wait_time_s>T, is available)"
        )));
    }
    // Beyond c jobs an M/M/c queue moves as an M/M/1 with service rate c mu.
    let busy = if c == 1 {
        queue.service.clone()
    } else {
        Mix::one(
            Dist::exponential(queue.service.mean() / f64::from(c))
                .map_err(|e| refused(e.to_string()))?,
        )
    };
    let walk = Walk::new(&busy, &queue.interarrival).map_err(refused)?;
    let rho_1 = busy.mean() / queue.interarrival.mean();
    // A class's own service, tilted as the walk's (every class's law has a
    // finite M(theta) there: the mix's does).
    let own = match class {
        Some(k) if queue.service.0.len() > 1 => Some(
            queue.service.0[k]
                .1
                .tilted(walk.theta)
                .ok_or_else(|| refused("a class's service has no tilt at the walk's".into()))?,
        ),
        _ => None,
    };
    let reps = replicate(
        cfg,
        |rng| match of {
            TailOf::Wait => walk.passage(t_s, rng),
            TailOf::Response => walk.response(own.as_ref(), t_s, rng),
        },
        |tail, r| {
            if c == 1 {
                return Ok((tail, 0));
            }
            // P(wait) times P(W_1 > t | W_1 > 0) = tail / rho_1.
            let (waits, run_events) = wait_fraction(network, cfg, c, r)?;
            Ok((waits * tail / rho_1, run_events))
        },
    )?;
    Ok(tail_estimate((of, t_s, class), cfg, &reps))
}

/// One replication: its estimate, its events, and the largest share one
/// sample had of its sum of weights.
type Replication = (f64, u64, f64);

/// Replications of `effort` samples each: their mean, turned into the
/// replication's estimate (and any events beside the samples') by
/// `finish`, with the events and the largest weight's share.
fn replicate(
    cfg: &RareConfig,
    sample: impl Fn(&mut SimRng) -> (f64, u64) + Sync,
    finish: impl Fn(f64, u32) -> Result<(f64, u64), RareError> + Sync,
) -> Result<Vec<Replication>, RareError> {
    (0..cfg.replications)
        .into_par_iter()
        .map(|r| -> Result<Replication, RareError> {
            let mut rng = stream(cfg.seed, r, TAIL_STREAM);
            let (mut sum, mut top, mut events) = (0.0, 0.0f64, 0u64);
            for _ in 0..cfg.effort {
                let (w, e) = sample(&mut rng);
                sum += w;
                top = top.max(w);
                events += e;
                if events > cfg.max_events {
                    return Err(RareError::EventLimit {
                        limit: cfg.max_events,
                    });
                }
            }
            let (value, more) = finish(sum / f64::from(cfg.effort), r)?;
            let share = if sum > 0.0 { top / sum } else { 0.0 };
            Ok((value, events + more, share))
        })
        .collect()
}

/// The estimate from the replications, warned about where one sample
/// carried too much of a replication.
fn tail_estimate(
    (of, t_s, class): (TailOf, f64, Option<ClassId>),
    cfg: &RareConfig,
    reps: &[Replication],
) -> RareEstimate {
    let share = reps.iter().map(|r| r.2).fold(0.0, f64::max);
    let warnings = if share > MAX_WEIGHT_SHARE {
        vec![RareWarning::HeavyWeights { share }]
    } else {
        Vec::new()
    };
    RareEstimate {
        estimand: Estimand::Tail { of, t_s, class },
        method: Method::ImportanceSampling,
        level: None,
        start: None,
        value: estimate(reps.iter().map(|r| r.0)),
        cycle_s: None,
        cycle_probability: None,
        replications: cfg.replications,
        events: reps.iter().map(|r| r.1).sum(),
        stages: Vec::new(),
        warnings,
    }
}
