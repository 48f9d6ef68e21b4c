//! Rare events: the time to a ±10% interval (95%) with splitting or
//! importance sampling against the time a plain run would need.
//!
//! Cases (the exact answers are checked in `tests/rare.rs`):
//! * `wait_tail_1e6`: P(W > t) = 1e-6 in an M/M/1 at rho 0.5, importance
//!   sampling; a plain run needs about 384 (1 - p)/p waits (independent
//!   samples assumed, which favours the plain run), timed per job on a
//!   plain run of the same queue;
//! * `mmc_wait_tail_1e6`: P(W > t) = 1e-6 in an M/M/4 at 75% load, P(wait)
//!   from a plain run times importance sampling; a plain run needs about
//!   384 (1 - p)/p waits, timed per job on a plain run of the same queue;
//! * `md1_wait_tail_2e6`: P(W > 10 s) = 2.31e-6 in an M/D/1 at rho 0.5
//!   (service 1 s), importance sampling with tilted laws; a plain run
//!   needs about 384 (1 - p)/p waits, timed per job on a plain run of the
//!   same queue;
//! * `tandem_tail_1e6`: P(R > 0.9 s) = 9.18e-7 through the three-tier
//!   Jackson tandem of examples/data/three_tier.toml (50 requests/s; mean
//!   services 10, 15, 12 ms), the switching mixture of tilts; a plain run
//!   needs about 384 (1 - p)/p responses, timed per request (4 events) on
//!   a plain run of the same tandem;
//! * `fanout_256_tail_1e6`: P(R > 38.7 s) = 1.0e-6 for a query fanned
//!   out to 256 exponential FCFS servers (rate 1/s behind 0.5 queries/s;
//!   one server alone 3.9e-9), the mixture over the 256 branches; a
//!   plain run needs about 384 (1 - p)/p queries, timed per query (514
//!   events) on a plain run of the same fork-join;
//! * `busy_period_40`: P(a busy period of that M/M/1 reaches 40 jobs) =
//!   1/(2^40 - 1), splitting; a plain run needs 384/p busy periods of 2
//!   jobs on average;
//! * `escape_50`: the mean time from all thinking to 40 jobs at the slow
//!   queue of a 50-job metastable chain (1.82e7 s, 1.8e8 mean service
//!   times),
//!   splitting; a plain run needs about 384 escapes (the escape time is
//!   close to exponential, coefficient of variation 1), each as many events
//!   as the chain makes in that time, timed per event on a plain run.
//!
//! The report (printed before criterion's own measurements) scales the
//! measured time of one estimate by (half-width / 10%)^2 and gives the
//! ratio. Criterion then times one estimate of each case.

use criterion::Criterion;
use qsim_kernel::rare::*;
use qsim_kernel::*;
use std::hint::black_box;
use std::time::{Duration, Instant};

fn exp(m: f64) -> Dist {
    Dist::exponential(m).unwrap()
}

fn mm1(lambda: f64) -> Network {
    mmc(lambda, 1)
}

/// M/M/c with arrival rate `lambda` and service rate 1 per server.
fn mmc(lambda: f64, servers: u32) -> Network {
    queue(lambda, servers, exp(1.0))
}

/// M/D/1 with arrival rate 0.5 and a constant 1 s service.
fn md1() -> Network {
    queue(0.5, 1, Dist::deterministic(1.0).unwrap())
}

/// The three-tier tandem: arrivals 50/s, exponential services of mean 10,
/// 15 and 12 ms.
fn three_tier() -> Network {
    let station = |name: &str, mean: f64| StationSpec {
        name: name.into(),
        kind: StationKind::Queue {
            servers: 1,
            discipline: Discipline::Fcfs,
        },
        service: vec![Some(exp(mean))],
        speed: None,
    };
    Network::new(NetworkSpec {
        stations: vec![
            station("web", 0.010),
            station("app", 0.015),
            station("db", 0.012),
        ],
        classes: vec![ClassSpec {
            name: "default".into(),
            workload: Workload::Open {
                interarrival: exp(0.02),
            },
            routing: Routing::Sequence(vec![0, 1, 2]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    })
    .unwrap()
}

/// A fork of each query to 256 exponential FCFS servers (rate 1/s) and
/// the join, behind 0.5 queries/s.
fn fanout_256() -> Network {
    let k = 256;
    let mut stations = vec![StationSpec {
        name: "fork".into(),
        kind: StationKind::Fork(ForkSpec {
            fan_out: k as u32,
            targets: (1..=k).map(|i| (i, 1.0)).collect(),
            spread: Spread::Even,
            join: k + 1,
            routes: Vec::new(),
        }),
        service: vec![None],
        speed: None,
    }];
    stations.extend((0..k).map(|i| StationSpec {
        name: format!("s{i}"),
        kind: StationKind::Queue {
            servers: 1,
            discipline: Discipline::Fcfs,
        },
        service: vec![Some(exp(1.0))],
        speed: None,
    }));
    stations.push(StationSpec {
        name: "join".into(),
        kind: StationKind::Join(JoinSpec::default()),
        service: vec![None],
        speed: None,
    });
    Network::new(NetworkSpec {
        stations,
        classes: vec![ClassSpec {
            name: "default".into(),
            workload: Workload::Open {
                interarrival: exp(2.0),
            },
            routing: Routing::Sequence(vec![0, k + 1]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    })
    .unwrap()
}

/// The t of P(R > t) near 1e-6 for `fanout_256`: 256 times one server's
/// tail e^{-t/2} (the union bound, which it sits at this deep).
fn fanout_t() -> f64 {
    2.0 * (256e6f64).ln()
}

/// One FCFS queue with Poisson arrivals at rate `lambda`.
fn queue(lambda: f64, servers: u32, service: Dist) -> Network {
    Network::new(NetworkSpec {
        stations: vec![StationSpec {
            name: "server".into(),
            kind: StationKind::Queue {
                servers,
                discipline: Discipline::Fcfs,
            },
            service: vec![Some(service)],
            speed: None,
        }],
        classes: vec![ClassSpec {
            name: "default".into(),
            workload: Workload::Open {
                interarrival: exp(1.0 / lambda),
            },
            routing: Routing::Sequence(vec![0]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    })
    .unwrap()
}

/// 50 jobs think 10 s and visit one queue whose speed is 10/s up to 12
/// jobs, falling to 1/s at 25.
fn chain() -> Network {
    Network::new(NetworkSpec {
        stations: vec![StationSpec {
            name: "queue".into(),
            kind: StationKind::Queue {
                servers: 1,
                discipline: Discipline::Fcfs,
            },
            service: vec![Some(exp(0.1))],
            speed: Some(Speed::Table(vec![(12.0, 10.0), (25.0, 1.0)])),
        }],
        classes: vec![ClassSpec {
            name: "default".into(),
            workload: Workload::Closed {
                population: 50,
                think: Some(exp(10.0)),
            },
            routing: Routing::Sequence(vec![0]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    })
    .unwrap()
}

/// Seconds per event and events per simulated second of a plain run.
fn plain_cost(net: &Network, time_s: f64) -> (f64, f64) {
    let cfg = RunConfig {
        replications: 1,
        stop: Stop::Time(time_s),
        warmup: Warmup::None,
        threads: 1,
        ..RunConfig::default()
    };
    let mut sim = Simulation::new(net, &cfg, 0).unwrap();
    let t = Instant::now();
    sim.run().unwrap();
    let dt = t.elapsed().as_secs_f64();
    let events = sim.events() as f64;
    (dt / events, events / time_s)
}

fn timed(f: impl Fn() -> RareEstimate) -> (RareEstimate, f64) {
    let t = Instant::now();
    let e = f();
    (e, t.elapsed().as_secs_f64())
}

/// Seconds to a ±10% interval, from one estimate's time and half-width.
fn to_ten_percent(e: &RareEstimate, secs: f64) -> f64 {
    secs * (e.relative_half_width() / 0.1).powi(2)
}

fn cfg(effort: u32, replications: u32) -> RareConfig {
    RareConfig {
        seed: 1,
        replications,
        effort,
        ..RareConfig::default()
    }
}

/// The t of P(W > t) = 1e-6 in the M/M/4 at 75% load: Erlang C(4, 3) =
/// 27/53, and the conditional wait is exponential at rate 4 - 3.
fn mmc_t() -> f64 {
    (27.0 / 53.0 / 1e-6f64).ln()
}

fn report() {
    let m = mm1(0.5);
    let (per_event, events_per_s) = plain_cost(&m, 2e6);
    // Two events (arrival, completion) per job.
    let per_job = 2.0 * per_event;
    let t = 2.0 * (0.5f64 / 1e-6).ln();
    let (e, s) = timed(|| tail_probability(&m, TailOf::Wait, t, &cfg(2000, 10)).unwrap());
    let p = e.value.mean;
    let brute = 384.0 * (1.0 - p) / p * per_job;
    let fast = to_ten_percent(&e, s);
    println!(
        "wait_tail_1e6: p = {p:.3e} ± {:.1}%; to ±10%: {fast:.3e} s by importance sampling, {brute:.3e} s plain; ratio {:.0}",
        100.0 * e.relative_half_width(),
        brute / fast
    );
    let d = md1();
    let (per_event, _) = plain_cost(&d, 2e6);
    let (e, s) = timed(|| tail_probability(&d, TailOf::Wait, 10.0, &cfg(2000, 10)).unwrap());
    let p = e.value.mean;
    let brute = 384.0 * (1.0 - p) / p * 2.0 * per_event;
    let fast = to_ten_percent(&e, s);
    println!(
        "md1_wait_tail_2e6: p = {p:.3e} ± {:.1}%; to ±10%: {fast:.3e} s by importance sampling, {brute:.3e} s plain; ratio {:.0}",
        100.0 * e.relative_half_width(),
        brute / fast
    );
    let tier = three_tier();
    let (per_event, _) = plain_cost(&tier, 2e4);
    let (e, s) = timed(|| tail_probability(&tier, TailOf::Response, 0.9, &cfg(4000, 10)).unwrap());
    let p = e.value.mean;
    let brute = 384.0 * (1.0 - p) / p * 4.0 * per_event;
    let fast = to_ten_percent(&e, s);
    println!(
        "tandem_tail_1e6: p = {p:.3e} ± {:.1}%; to ±10%: {fast:.3e} s by importance sampling, {brute:.3e} s plain; ratio {:.0}",
        100.0 * e.relative_half_width(),
        brute / fast
    );
    let fan = fanout_256();
    let (per_event, _) = plain_cost(&fan, 2e3);
    let (e, s) =
        timed(|| tail_probability(&fan, TailOf::Response, fanout_t(), &cfg(200, 10)).unwrap());
    let p = e.value.mean;
    let brute = 384.0 * (1.0 - p) / p * 514.0 * per_event;
    let fast = to_ten_percent(&e, s);
    println!(
        "fanout_256_tail_1e6: p = {p:.3e} ± {:.1}%; to ±10%: {fast:.3e} s by importance sampling, {brute:.3e} s plain; ratio {:.0}",
        100.0 * e.relative_half_width(),
        brute / fast
    );
    let level = Level {
        of: LevelOf::Station(0),
        at_least: 40,
    };
    let (e, s) = timed(|| reach_probability(&m, level.clone(), None, &cfg(300, 10)).unwrap());
    let p = e.value.mean;
    let brute = 384.0 / p * 2.0 * per_job;
    let fast = to_ten_percent(&e, s);
    println!(
        "busy_period_40: p = {p:.3e} ± {:.1}%; to ±10%: {fast:.3e} s by splitting, {brute:.3e} s plain; ratio {:.0} (plain: {:.1e} events/s simulated)",
        100.0 * e.relative_half_width(),
        brute / fast,
        events_per_s
    );
    let q = mmc(3.0, 4);
    let (per_event, _) = plain_cost(&q, 2e5);
    let (e, s) = timed(|| tail_probability(&q, TailOf::Wait, mmc_t(), &cfg(1000, 10)).unwrap());
    let p = e.value.mean;
    let brute = 384.0 * (1.0 - p) / p * 2.0 * per_event;
    let fast = to_ten_percent(&e, s);
    println!(
        "mmc_wait_tail_1e6: p = {p:.3e} ± {:.1}%; to ±10%: {fast:.3e} s by importance sampling, {brute:.3e} s plain; ratio {:.0}",
        100.0 * e.relative_half_width(),
        brute / fast
    );
    let c = chain();
    let (per_event, events_per_s) = plain_cost(&c, 2e5);
    let level = Level {
        of: LevelOf::Station(0),
        at_least: 40,
    };
    let (e, s) = timed(|| escape_time(&c, level.clone(), &cfg(200, 10)).unwrap());
    let escape = e.value.mean;
    let brute = 384.0 * escape * events_per_s * per_event;
    let fast = to_ten_percent(&e, s);
    println!(
        "escape_50: mean escape {escape:.3e} s ± {:.1}%; to ±10%: {fast:.3e} s by splitting, {brute:.3e} s plain; ratio {:.0}",
        100.0 * e.relative_half_width(),
        brute / fast
    );
}

fn benches(c: &mut Criterion) {
    let m = mm1(0.5);
    let t = 2.0 * (0.5f64 / 1e-6).ln();
    let mut g = c.benchmark_group("rare");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("wait_tail_1e6", |b| {
        b.iter(|| black_box(tail_probability(&m, TailOf::Wait, t, &cfg(2000, 10)).unwrap()))
    });
    let d = md1();
    g.bench_function("md1_wait_tail_2e6", |b| {
        b.iter(|| black_box(tail_probability(&d, TailOf::Wait, 10.0, &cfg(2000, 10)).unwrap()))
    });
    let tier = three_tier();
    g.bench_function("tandem_tail_1e6", |b| {
        b.iter(|| {
            black_box(tail_probability(&tier, TailOf::Response, 0.9, &cfg(4000, 10)).unwrap())
        })
    });
    let fan = fanout_256();
    g.bench_function("fanout_256_tail_1e6", |b| {
        b.iter(|| {
            black_box(tail_probability(&fan, TailOf::Response, fanout_t(), &cfg(200, 10)).unwrap())
        })
    });
    let level = Level {
        of: LevelOf::Station(0),
        at_least: 40,
    };
    g.bench_function("busy_period_40", |b| {
        b.iter(|| black_box(reach_probability(&m, level.clone(), None, &cfg(300, 10)).unwrap()))
    });
    let q = mmc(3.0, 4);
    g.bench_function("mmc_wait_tail_1e6", |b| {
        b.iter(|| black_box(tail_probability(&q, TailOf::Wait, mmc_t(), &cfg(1000, 10)).unwrap()))
    });
    let ch = chain();
    let level = Level {
        of: LevelOf::Station(0),
        at_least: 40,
    };
    g.bench_function("escape_50", |b| {
        b.iter(|| black_box(escape_time(&ch, level.clone(), &cfg(200, 10)).unwrap()))
    });
    g.finish();
}

fn main() {
    report();
    let mut c = Criterion::default().configure_from_args();
    benches(&mut c);
    c.final_summary();
}
