//! Nested pools (regions inside regions): against exact answers where the
//! pools reduce to something solvable (pools that never bind give the plain
//! network's exact MVA; a pool of one place around a station makes it a
//! single server; a thread pool of 2 around a connection pool of 1 is a
//! small Markov chain solved here), and the deadlock of pools taken in
//! opposite orders, found at load time and stopped at run time.

use crate::support::{Toml, assert_close, mean_of, model, run};
use qsim_analytic::{ctmc, mva};
use qsim_kernel::{Estimate, RegionResults, RunConfig, RunError, Stop, Warmup};

/// Three pools of 8 places nested around a three-tier route (thread >
/// connection > latch).
fn tiers() -> Toml {
    Toml::default()
        .closed("workload", 8, 0.5, &["app", "db", "disk"])
        .station("app", "queue", 0.02)
        .station("db", "queue", 0.03)
        .station("disk", "queue", 0.025)
        // Declared inner first: the order of taking comes from nesting,
        // not the file.
        .region("latch", &["disk"], 8)
        .region("conns", &["db", "disk"], 8)
        .region("threads", &["app", "db", "disk"], 8)
}

/// `assert_close` with no bias allowance, as every comparison here.
fn close(label: &str, sim: Estimate, exact: f64, reps: u32, max_rel_ci: f64) {
    assert_close(label, sim, exact, reps, 0.0, max_rel_ci);
}

fn region<'a>(r: &'a qsim_kernel::RunResults, name: &str) -> &'a RegionResults {
    r.regions.iter().find(|g| g.name == name).expect("region")
}

fn exactly_zero(label: &str, e: Estimate) {
    assert!(e.mean == 0.0 && e.ci95 == 0.0, "{label}: {e:?}, expected 0");
}

#[test]
fn pools_that_never_bind_give_the_plain_networks_exact_mva() {
    // Limits equal to the population never make anyone wait: throughput,
    // response and each pool's figures are the MVA's (mean inside: the
    // jobs at its stations; time inside: their residence times). 10 x
    // 200k jobs give 95% half-widths of 0.17% (throughput), 0.14%
    // (response) and 0.14-0.31% (pool figures): widened to 99.9%, a bias of
    // 0.4% in throughput or response, or 0.7% in a pool's figure, fails.
    let n = 8;
    let stations = [
        mva::Station::queue("app", 0.02),
        mva::Station::queue("db", 0.03),
        mva::Station::queue("disk", 0.025),
    ];
    let exact = mva::exact(&stations, 0.5, n).unwrap();
    let e = exact.at(n).unwrap();
    let m = model(tiers().text(), &[]);
    assert!(m.warnings.is_empty(), "nested pools warn: {:?}", m.warnings);
    let r = run(&m, 10, 200_000, 10_000);
    let reps = 10;
    let response = mean_of(&r.system.response_time_s);
    close(
        "throughput",
        r.system.throughput_per_s,
        e.throughput_per_s,
        reps,
        0.01,
    );
    close("response", response, e.response_time_s, reps, 0.02);
    for (name, from) in [("threads", 0), ("conns", 1), ("latch", 2)] {
        let g = region(&r, name);
        let inside: f64 = e.stations[from..].iter().map(|s| s.mean_jobs).sum();
        let time: f64 = e.stations[from..].iter().map(|s| s.residence_time_s).sum();
        let label = |what: &str| format!("{name} {what}");
        close(&label("mean inside"), g.mean_inside, inside, reps, 0.02);
        close(&label("time inside"), g.inside_time_s, time, reps, 0.02);
        let u = g
            .utilization
            .expect("a pool with a limit has a utilization");
        close(&label("utilization"), u, inside / f64::from(n), reps, 0.02);
        exactly_zero(&format!("{name} admission wait"), g.wait_time_s);
        exactly_zero(&format!("{name} mean waiting"), g.mean_waiting);
    }
}

/// p(k) of the closed birth-death chain of `n` users thinking `z` in front
/// of one exponential server of mean `s` (the machine-repairman model).
fn repairman(n: u32, z: f64, s: f64) -> Vec<f64> {
    let mut p = vec![1.0];
    for k in 1..=n {
        let prev = p[k as usize - 1];
        p.push(prev * f64::from(n - k + 1) * s / z);
    }
    let total: f64 = p.iter().sum();
    p.iter().map(|x| x / total).collect()
}

#[test]
fn a_pool_of_one_around_a_multi_server_station_makes_it_a_single_server() {
    // Closed: 5 users thinking Exp(2 s) before a 4-server station of
    // Exp(0.5 s) inside a pool of 1 place: the station serves one at a
    // time, the others wait for the pool. Exact: the repairman chain with
    // one server. 10 x 100k jobs: 95% half-widths 0.13% (throughput),
    // 0.31% (pool wait), 0.11% (utilization): a bias of 0.3% in
    // throughput or utilization, or 0.7% in the pool wait, fails.
    let text = Toml::default()
        .closed("workload", 5, 2.0, &["db"])
        .station("db", "queue", 0.5)
        .with("servers", 4)
        .region("session", &["db"], 1);
    let (n, z, s) = (5, 2.0, 0.5);
    let p = repairman(n, z, s);
    let x = (1.0 - p[0]) / s;
    let waiting: f64 = p
        .iter()
        .enumerate()
        .map(|(k, q)| (k.saturating_sub(1)) as f64 * q)
        .sum();
    let r = run(&model(text.text(), &[]), 10, 100_000, 5_000);
    let g = region(&r, "session");
    close("throughput", r.system.throughput_per_s, x, 10, 0.01);
    close("pool waiting", g.mean_waiting, waiting, 10, 0.03);
    close("pool wait", g.wait_time_s, waiting / x, 10, 0.03);
    close(
        "pool utilization",
        g.utilization.unwrap(),
        1.0 - p[0],
        10,
        0.01,
    );
    close("time inside", g.inside_time_s, s, 10, 0.01);
    // The station never has more than the one job the pool lets in.
    close(
        "station jobs",
        r.stations[0].mean_jobs,
        1.0 - p[0],
        10,
        0.01,
    );
}

#[test]
fn a_pool_of_one_around_a_delay_is_an_mm1_queue() {
    // Open: Poisson 0.6/s into an Exp(1 s) delay inside a pool of 1: the
    // M/M/1 queue at rho 0.6, whose wait is rho S / (1 - rho) = 1.5 s.
    // 10 x 200k jobs: 95% half-widths 0.83% (pool wait), 0.19%
    // (utilization), 0.49% (response): a bias of 1.8%, 0.4% or 1.1% fails.
    let text = Toml::default()
        .open("workload", 0.6, &["work"])
        .station("work", "delay", 1.0)
        .region("one", &["work"], 1);
    let r = run(&model(text.text(), &[]), 10, 200_000, 10_000);
    let g = region(&r, "one");
    close("pool wait", g.wait_time_s, 1.5, 10, 0.03);
    close("pool waiting", g.mean_waiting, 0.6 * 1.5, 10, 0.03);
    close("pool utilization", g.utilization.unwrap(), 0.6, 10, 0.01);
    close(
        "response",
        mean_of(&r.system.response_time_s),
        2.5,
        10,
        0.02,
    );
}

/// The exact figures of the nested pair: (throughput, threads waiting,
/// conns waiting, threads inside, conns inside).
/// A state of the nested pair: jobs at `app`, jobs waiting for a
/// connection (holding a thread), jobs at `query`, jobs waiting for a thread.
type PairState = (usize, usize, usize, usize);

fn nested_pair_chain(n: usize, z: f64, a: f64, b: f64) -> [f64; 5] {
    // State: (at a, waiting for conns holding a thread, at b, waiting for a
    // thread); threads limit 2, conns limit 1; the rest think.
    let (lt, lc) = (2, 1);
    let mut states = Vec::new();
    for na in 0..=n {
        for wc in 0..=n {
            for nb in 0..=lc {
                for wt in 0..=n {
                    let inside = na + wc + nb;
                    let valid = inside <= lt
                        && inside + wt <= n
                        && (wt == 0 || inside == lt)
                        && (wc == 0 || nb == lc);
                    if valid {
                        states.push((na, wc, nb, wt));
                    }
                }
            }
        }
    }
    let index = |s: PairState| states.iter().position(|&t| t == s).unwrap();
    let mut q = vec![vec![0.0; states.len()]; states.len()];
    for (i, &(na, wc, nb, wt)) in states.iter().enumerate() {
        let thinking = n - na - wc - nb - wt;
        if thinking > 0 {
            let to = if na + wc + nb < lt {
                (na + 1, wc, nb, wt)
            } else {
                (na, wc, nb, wt + 1)
            };
            q[i][index(to)] += thinking as f64 / z;
        }
        if na > 0 {
            let to = if nb < lc {
                (na - 1, wc, nb + 1, wt)
            } else {
                (na - 1, wc + 1, nb, wt)
            };
            q[i][index(to)] += na as f64 / a;
        }
        if nb > 0 {
            // Leaving b frees a connection (the next waiter takes it) and
            // a thread (the next waiter goes to a).
            let (mut na2, mut wc2, mut nb2, mut wt2) = (na, wc, nb - 1, wt);
            if wc2 > 0 {
                wc2 -= 1;
                nb2 += 1;
            }
            if wt2 > 0 {
                wt2 -= 1;
                na2 += 1;
            }
            q[i][index((na2, wc2, nb2, wt2))] += nb as f64 / b;
        }
    }
    let p = ctmc::steady_state(&q).unwrap();
    let mean = |f: &dyn Fn(&PairState) -> f64| -> f64 {
        states.iter().zip(&p).map(|(s, p)| f(s) * p).sum()
    };
    [
        mean(&|s| s.2 as f64 / b),
        mean(&|s| s.3 as f64),
        mean(&|s| s.1 as f64),
        mean(&|s| (s.0 + s.1 + s.2) as f64),
        mean(&|s| s.2 as f64),
    ]
}

#[test]
fn a_thread_pool_of_two_around_a_connection_pool_of_one_matches_its_markov_chain() {
    // 3 users think Exp(1 s), then use a thread (pool of 2) for Exp(0.5 s)
    // of work at `app` and, still holding it, a connection (pool of 1) for
    // Exp(0.4 s) at `query`. Both pools bind; each pool's wait is its own
    // queue over the throughput (Little). 10 x 100k jobs: 95% half-widths
    // 0.15% (throughput), 0.56% (each pool's wait), 0.14-0.30% (pool
    // utilization and time inside): a bias of 0.4% in throughput, 1.2% in
    // a pool's wait or 0.7% in its utilization fails.
    let text = Toml::default()
        .closed("workload", 3, 1.0, &["app", "query"])
        .station("app", "delay", 0.5)
        .station("query", "delay", 0.4)
        .region("threads", &["app", "query"], 2)
        .region("conns", &["query"], 1);
    let [x, wt, wc, it, ic] = nested_pair_chain(3, 1.0, 0.5, 0.4);
    let r = run(&model(text.text(), &[]), 10, 100_000, 5_000);
    let response = mean_of(&r.system.response_time_s);
    close("throughput", r.system.throughput_per_s, x, 10, 0.01);
    close("response", response, 3.0 / x - 1.0, 10, 0.01);
    let (t, c) = (region(&r, "threads"), region(&r, "conns"));
    close("threads waiting", t.mean_waiting, wt, 10, 0.03);
    close("threads wait", t.wait_time_s, wt / x, 10, 0.03);
    close("conns waiting", c.mean_waiting, wc, 10, 0.03);
    close("conns wait", c.wait_time_s, wc / x, 10, 0.03);
    close(
        "threads utilization",
        t.utilization.unwrap(),
        it / 2.0,
        10,
        0.01,
    );
    close("conns utilization", c.utilization.unwrap(), ic, 10, 0.01);
    // A thread is held through the connection wait: time inside is the
    // work at app, the wait for a connection and the query.
    close("threads time inside", t.inside_time_s, it / x, 10, 0.01);
    close("conns time inside", c.inside_time_s, 0.4, 10, 0.01);
}

#[test]
fn a_move_into_nested_pools_takes_the_outer_one_first() {
    // `batch` enters all three pools in one move; taking the latch first
    // (the file's order) would hold it while waiting for a thread that a
    // `web` job holds while waiting for the latch.
    let text = Toml::default()
        .closed("classes.web", 6, 1.0, &["app", "sql", "hot"])
        .closed("classes.batch", 6, 1.0, &["hot", "app"])
        .station("app", "delay", 0.1)
        .station("sql", "delay", 0.1)
        .station("hot", "queue", 0.05)
        .region("latch", &["hot"], 1)
        .region("conns", &["sql", "hot"], 2)
        .region("threads", &["app", "sql", "hot"], 3);
    let m = model(text.text(), &[]);
    assert!(m.warnings.is_empty(), "nested pools warn: {:?}", m.warnings);
    let r = run(&m, 5, 50_000, 2_000);
    let g = region(&r, "latch");
    // The latch is held exactly while `hot` serves (one at a time).
    let held = r.stations[2].utilization.mean;
    close("latch utilization", g.utilization.unwrap(), held, 5, 0.01);
}

/// Two pools that overlap on `s2`, taken in opposite orders by two classes.
fn crossed() -> Toml {
    Toml::default()
        .closed("classes.up", 2, 1.0, &["s1", "s2", "s3"])
        .closed("classes.down", 2, 1.0, &["s3", "s2", "s1"])
        .station("s1", "delay", 0.1)
        .station("s2", "delay", 0.1)
        .station("s3", "delay", 0.1)
        .region("a", &["s1", "s2"], 1)
        .region("b", &["s2", "s3"], 1)
}

#[test]
fn pools_taken_in_opposite_orders_warn_at_load_and_stop_the_run_with_a_named_deadlock() {
    let m = model(crossed().text(), &[]);
    let w: Vec<_> = m
        .warnings
        .iter()
        .filter(|w| w.key_path == "regions.a")
        .collect();
    assert_eq!(w.len(), 1, "one warning at regions.a: {:?}", m.warnings);
    let msg = &w[0].message;
    assert!(
        msg.contains("regions a and b are taken in opposite orders")
            && msg.contains("class up holds a while it waits for b (moving from s1 to s2)")
            && msg.contains("class down holds b while it waits for a (moving from s3 to s2)"),
        "{msg}"
    );
    assert!(w[0].line > 0, "the warning is located in the file");
    let config = RunConfig {
        seed: 1,
        replications: 1,
        stop: Stop::Jobs(1_000_000),
        warmup: Warmup::Jobs(0),
        ..m.run.clone()
    };
    let started = std::time::Instant::now();
    match qsim_kernel::run(&m.network, &config) {
        Err(RunError::RegionDeadlock { regions, cycle, .. }) => {
            assert_eq!(regions, ["a", "b"]);
            assert_eq!(cycle, ["a", "b", "a"]);
        }
        other => panic!("expected a region deadlock, got {other:?}"),
    }
    assert!(
        started.elapsed().as_secs() < 20,
        "found at once, not by running out of events"
    );
    // The message names the regions and the cycle.
    let e = qsim_kernel::run(&m.network, &config)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("regions a, b are full") && e.contains("cycle a -> b -> a"),
        "{e}"
    );
    // With room for everyone the same routes cannot deadlock.
    let roomy = model(
        crossed().text(),
        &["regions.a.limit=4", "regions.b.limit=4"],
    );
    let short = RunConfig {
        stop: Stop::Jobs(20_000),
        ..config
    };
    assert!(qsim_kernel::run(&roomy.network, &short).is_ok());
}

#[test]
fn app_pools_model_needs_about_two_threads_per_connection() {
    // The header's claim: with one thread per connection the threads run
    // out first; from two per connection on, throughput is what the
    // connections pass (8 places over the time each is held) and a larger
    // thread pool only moves the wait to the connection pool.
    let text = include_str!("../../models/app_pools.toml");
    let at = |threads: u32| {
        let m = model(text, &[&format!("regions.threads.limit={threads}")]);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        run(&m, 5, 20_000, 2_000)
    };
    let (one, two, four) = (at(8), at(16), at(32));
    let x = |r: &qsim_kernel::RunResults| r.system.throughput_per_s.mean;
    assert!(
        x(&one) < 0.75 * x(&two),
        "8 threads: {} vs 16: {}",
        x(&one),
        x(&two)
    );
    assert!(
        x(&two) > 0.97 * x(&four),
        "16 threads: {} vs 32: {}",
        x(&two),
        x(&four)
    );
    for r in [&two, &four] {
        let c = region(r, "connections");
        let bound = 8.0 / c.inside_time_s.mean;
        assert!(
            x(r) <= bound * 1.005 && x(r) > 0.97 * bound,
            "{} vs {bound}",
            x(r)
        );
    }
    let wait = |r: &qsim_kernel::RunResults, name: &str| region(r, name).wait_time_s.mean;
    assert!(wait(&four, "threads") < wait(&two, "threads"));
    assert!(wait(&four, "connections") > wait(&two, "connections"));
}
