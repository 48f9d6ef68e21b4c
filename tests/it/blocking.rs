//! Blocking after service (`when_full = "block"`) against exact answers:
//! the continuous-time Markov chains of small blocking networks, built
//! here state by state and solved with `qsim_analytic::ctmc`; a deadlock
//! stopped with its stations named; located errors for what cannot block.

use crate::support::{assert_close, model, qsim, run};
use qsim_analytic::ctmc::steady_state;
use qsim_theory::bounds::closed_bounds;
use std::collections::HashMap;

/// The stationary distribution of a chain given by its states and a
/// function listing each state's outgoing (rate, next state) moves.
fn solve<S: Copy + Eq + std::hash::Hash>(
    states: &[S],
    moves: impl Fn(S) -> Vec<(f64, S)>,
) -> HashMap<S, f64> {
    let index: HashMap<S, usize> = states.iter().enumerate().map(|(i, &s)| (s, i)).collect();
    let mut q = vec![vec![0.0; states.len()]; states.len()];
    for (i, &s) in states.iter().enumerate() {
        for (rate, t) in moves(s) {
            q[i][index[&t]] += rate;
        }
    }
    let pi = steady_state(&q).expect("an irreducible chain");
    states.iter().copied().zip(pi).collect()
}

const TANDEM: &str = r#"
[workload]
type = "open"
rate_per_s = 1.0
route = ["a", "b"]

[stations.a]
kind = "queue"
service = { dist = "exponential", mean = 0.8 }
capacity = 5
when_full = "drop"

[stations.b]
kind = "queue"
service = { dist = "exponential", mean = 1.0 }
capacity = 2
when_full = "block"
"#;

#[test]
fn open_tandem_with_blocking_matches_its_markov_chain() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.3-2% of the exact values (the loss, widest), so a bias of
    // about 2% fails in every figure; the guards (at most 1.5% of the exact
    // value, about 1.5 x the widest measured) allow at most 3.2%.
    let (lambda, mu1, mu2, k1, k2) = (1.0, 1.25, 1.0, 5u32, 2u32);
    // State (n1, n2, blocked): n1 jobs at a (a blocked one included), n2
    // at b, and whether a's server holds a finished job waiting for b.
    let mut states = Vec::new();
    for n1 in 0..=k1 {
        for n2 in 0..=k2 {
            states.push((n1, n2, false));
            if n1 >= 1 && n2 == k2 {
                states.push((n1, n2, true));
            }
        }
    }
    let pi = solve(&states, |(n1, n2, blocked)| {
        let mut m = Vec::new();
        if n1 < k1 {
            m.push((lambda, (n1 + 1, n2, blocked)));
        }
        if n1 >= 1 && !blocked {
            // A finished job at a moves on, or waits for room at b.
            let next = if n2 < k2 {
                (n1 - 1, n2 + 1, false)
            } else {
                (n1, n2, true)
            };
            m.push((mu1, next));
        }
        if n2 >= 1 {
            // b's departure lets the blocked job in at once.
            let next = if blocked {
                (n1 - 1, n2, false)
            } else {
                (n1, n2 - 1, false)
            };
            m.push((mu2, next));
        }
        m
    });
    let p = |f: &dyn Fn(u32, u32, bool) -> f64| -> f64 {
        pi.iter().map(|(&(a, b, k), &x)| f(a, b, k) * x).sum()
    };
    let throughput = mu2 * p(&|_, n2, _| f64::from(u8::from(n2 >= 1)));
    let jobs_a = p(&|n1, _, _| f64::from(n1));
    let jobs_b = p(&|_, n2, _| f64::from(n2));
    let blocked = p(&|_, _, k| f64::from(u8::from(k)));
    let serving = p(&|n1, _, k| f64::from(u8::from(n1 >= 1 && !k)));
    // Jobs finishing at a while b is full, over all that finish at a.
    let finish_full = p(&|n1, n2, k| f64::from(u8::from(n1 >= 1 && !k && n2 == k2)));
    let loss = p(&|n1, _, _| f64::from(u8::from(n1 == k1)));

    let m = model(TANDEM, &[]);
    let reps = 10;
    let r = run(&m, reps, 100_000, 10_000);
    let (a, b) = (&r.stations[0], &r.stations[1]);
    assert_close(
        "tandem throughput",
        r.system.throughput_per_s,
        throughput,
        reps,
        0.0,
        0.015,
    );
    assert_close("jobs at a", a.mean_jobs, jobs_a, reps, 0.0, 0.015);
    assert_close("jobs at b", b.mean_jobs, jobs_b, reps, 0.0, 0.015);
    assert_close(
        "a's blocked fraction",
        a.blocked_fraction.expect("a sends to a blocking station"),
        blocked,
        reps,
        0.0,
        0.015,
    );
    assert_close(
        "a's utilization (serving only)",
        a.utilization,
        serving,
        reps,
        0.0,
        0.015,
    );
    assert_close(
        "b's blocking probability",
        b.blocking_probability.expect("b blocks"),
        finish_full / serving,
        reps,
        0.0,
        0.015,
    );
    assert_close(
        "a's loss",
        a.loss_probability.expect("a has a capacity"),
        loss,
        reps,
        0.0,
        0.015,
    );
    // While a job waits, b is full and serving: the wait ends at b's next
    // exponential completion.
    assert_close(
        "blocking time at a",
        a.blocking_time_s.expect("a sends to a blocking station"),
        1.0 / mu2,
        reps,
        0.0,
        0.015,
    );
    assert!(b.blocked_fraction.is_none() && a.blocking_probability.is_none());
}

#[test]
fn closed_jobs_blocked_at_a_queue_and_at_their_think_time_match_the_chain() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.4-0.9% of the exact values, so a bias of about 0.9% fails
    // in every figure; the guards (at most 0.7% of the exact value, about 1.5 x
    // the widest measured) allow at most 1.5%.
    // Three users think (exp, mean 2 s), then use a (exp, 0.5 s), then b
    // (exp, 1 s, room for 1, blocking); a user whose think time ends while
    // a's single place is taken waits outside, and so does a's finished job
    // while b is busy.
    let text = r#"
[workload]
type = "closed"
population = 3
think = { dist = "exponential", mean = 2.0 }
route = ["a", "b"]

[stations.a]
kind = "queue"
service = { dist = "exponential", mean = 0.5 }
capacity = 1
when_full = "block"

[stations.b]
kind = "queue"
service = { dist = "exponential", mean = 1.0 }
capacity = 1
when_full = "block"
"#;
    let (n, z, mu1, mu2) = (3u32, 2.0, 2.0, 1.0);
    // State (w, a, blocked, b): users waiting outside for a, a job at a
    // (0/1), whether it is finished and blocked, a job at b (0/1); the
    // rest think.
    let mut states = Vec::new();
    for w in 0..=n {
        for a in 0..=1u32 {
            for b in 0..=1u32 {
                for blocked in [false, true] {
                    let ok =
                        w + a + b <= n && (!blocked || (a == 1 && b == 1)) && (w == 0 || a == 1);
                    if ok {
                        states.push((w, a, blocked, b));
                    }
                }
            }
        }
    }
    let pi = solve(&states, |(w, a, blocked, b)| {
        let thinking = n - w - a - b;
        let mut m = Vec::new();
        if thinking > 0 {
            let next = if a == 0 {
                (w, 1, false, b)
            } else {
                (w + 1, a, blocked, b)
            };
            m.push((f64::from(thinking) / z, next));
        }
        // a's completion: on to b, or blocked; a's place then goes to the
        // first user waiting outside.
        if a == 1 && !blocked {
            if b == 0 {
                let next = if w > 0 {
                    (w - 1, 1, false, 1)
                } else {
                    (0, 0, false, 1)
                };
                m.push((mu1, next));
            } else {
                m.push((mu1, (w, 1, true, 1)));
            }
        }
        if b == 1 {
            let next = if blocked {
                // The blocked job enters b; a's place goes to a waiter.
                if w > 0 {
                    (w - 1, 1, false, 1)
                } else {
                    (0, 0, false, 1)
                }
            } else {
                (w, a, false, 0)
            };
            m.push((mu2, next));
        }
        m
    });
    let p = |f: &dyn Fn(u32, u32, bool, u32) -> f64| -> f64 {
        pi.iter().map(|(&(w, a, k, b), &x)| f(w, a, k, b) * x).sum()
    };
    let throughput = mu2 * p(&|_, _, _, b| f64::from(b));
    let blocked = p(&|_, _, k, _| f64::from(u8::from(k)));
    let in_network = p(&|w, a, _, b| f64::from(w + a + b));
    let jobs_a = p(&|_, a, _, _| f64::from(a));

    let m = model(text, &[]);
    let reps = 10;
    let r = run(&m, reps, 100_000, 10_000);
    assert_close(
        "closed throughput",
        r.system.throughput_per_s,
        throughput,
        reps,
        0.0,
        0.007,
    );
    assert_close(
        "a's blocked fraction",
        r.stations[0].blocked_fraction.expect("a sends to b"),
        blocked,
        reps,
        0.0,
        0.007,
    );
    assert_close(
        "jobs at a",
        r.stations[0].mean_jobs,
        jobs_a,
        reps,
        0.0,
        0.007,
    );
    // Little's law over the interaction: waiting outside counts in the
    // response time.
    let response = crate::support::mean_of(&r.system.response_time_s);
    assert_close(
        "response time (waits outside included)",
        response,
        in_network / throughput,
        reps,
        0.0,
        0.007,
    );
    // Blocking only slows a cycle: the upper throughput and lower response
    // bounds still hold (exactly, so also for the chain's figures), the
    // lower throughput bound is withheld with its reason.
    let b = closed_bounds(m.network.spec(), 0, n)
        .unwrap()
        .expect("bounds with blocking stations");
    assert!(
        throughput <= b.throughput_upper_per_s && in_network / throughput >= b.response_lower_s
    );
    assert!(b.throughput_lower_per_s.is_none() && b.response_upper_s.is_none());
    let why = b.lower_unavailable.expect("a reason");
    assert!(why.contains("station a: blocks its senders"), "{why}");
}

#[test]
fn a_cycle_of_full_blocking_stations_stops_with_a_deadlock_error() {
    // Two single-place stations sending to each other with two jobs: once
    // both hold a finished job, neither can ever move.
    let text = r#"
[workload]
type = "closed"
population = 2

[stations.left]
kind = "queue"
service = { dist = "exponential", mean = 1.0 }
capacity = 1
when_full = "block"

[stations.right]
kind = "queue"
service = { dist = "exponential", mean = 1.0 }
capacity = 1
when_full = "block"

[workload.routing]
source = { left = 1.0 }
left = { right = 1.0 }
right = { left = 0.5, sink = 0.5 }
"#;
    let dir = std::env::temp_dir().join(format!("qsim-deadlock-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("deadlock.toml");
    std::fs::write(&path, text).unwrap();
    let started = std::time::Instant::now();
    let out = qsim(&["run", path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a deadlocked run must fail: {err}");
    assert!(
        err.contains("deadlocked") && err.contains("stations left, right"),
        "the error names the deadlock and its stations: {err}"
    );
    assert!(
        started.elapsed().as_secs() < 20,
        "the deadlock is found at once, not by running out of events"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The first error line of loading `text`.
fn load_error(text: &str) -> String {
    let e = qsim_model::load_str("m.toml", text, &[]).expect_err("the model is refused");
    e.to_string()
}

#[test]
fn stations_that_cannot_hold_a_blocked_job_are_refused_where_blocking_is_asked() {
    let ps_sender = r#"
[workload]
type = "open"
rate_per_s = 0.5
route = ["cpu", "db"]

[stations.cpu]
kind = "queue"
discipline = "ps"
service = { dist = "exponential", mean = 0.5 }

[stations.db]
kind = "queue"
service = { dist = "exponential", mean = 1.0 }
capacity = 2
when_full = "block"
"#;
    let e = load_error(ps_sender);
    assert!(
        e.contains("m.toml:16:")
            && e.contains("stations.db.when_full")
            && e.contains("station cpu sends jobs here"),
        "{e}"
    );
    let ps_blocking = r#"
[workload]
type = "open"
rate_per_s = 0.5
route = ["db"]

[stations.db]
kind = "queue"
discipline = "ps"
service = { dist = "exponential", mean = 1.0 }
capacity = 2
when_full = "block"
"#;
    let e = load_error(ps_blocking);
    assert!(
        e.contains("stations.db.capacity") && e.contains("not ps"),
        "{e}"
    );
    let unknown = ps_blocking.replace("\"block\"", "\"wait\"");
    let e = load_error(&unknown);
    assert!(
        e.contains("stations.db.when_full") && e.contains("block"),
        "{e}"
    );
}

#[test]
fn fork_sub_jobs_block_at_their_station_and_wait_outside_like_the_chain() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.3-0.7% of the exact values, so a bias of about 0.7% fails
    // in every figure; the guards (at most 0.6% of the exact value, about 1.5 x
    // the widest measured) allow at most 1.3%.
    // One user (think exp, mean 1 s) forks two sub-jobs along cpu -> db;
    // db has room for one (blocking): the second sub-job, done at cpu
    // while db is busy, holds cpu's server until db is free.
    let text = r#"
[workload]
type = "closed"
population = 1
think = { dist = "exponential", mean = 1.0 }
route = ["split", "gather"]

[stations.split]
kind = "fork"
fan_out = 2
route = ["cpu", "db"]
join = "gather"

[stations.gather]
kind = "join"

[stations.cpu]
kind = "queue"
service = { dist = "exponential", mean = 0.5 }

[stations.db]
kind = "queue"
service = { dist = "exponential", mean = 0.5 }
capacity = 1
when_full = "block"
"#;
    let (z, mu_c, mu_d) = (1.0, 2.0, 2.0);
    // States: thinking, then (at cpu, at db, cpu blocked, at the join).
    #[derive(Clone, Copy, PartialEq, Eq, Hash)]
    enum S {
        Think,
        At(u32, u32, bool, u32),
    }
    let states = [
        S::Think,
        S::At(2, 0, false, 0),
        S::At(1, 1, false, 0),
        S::At(1, 1, true, 0),
        S::At(1, 0, false, 1),
        S::At(0, 1, false, 1),
    ];
    let pi = solve(&states, |s| match s {
        S::Think => vec![(1.0 / z, S::At(2, 0, false, 0))],
        S::At(2, 0, false, 0) => vec![(mu_c, S::At(1, 1, false, 0))],
        S::At(1, 1, false, 0) => vec![(mu_c, S::At(1, 1, true, 0)), (mu_d, S::At(1, 0, false, 1))],
        S::At(1, 1, true, 0) => vec![(mu_d, S::At(0, 1, false, 1))],
        S::At(1, 0, false, 1) => vec![(mu_c, S::At(0, 1, false, 1))],
        _ => vec![(mu_d, S::Think)],
    });
    let throughput = mu_d * pi[&S::At(0, 1, false, 1)];
    let blocked = pi[&S::At(1, 1, true, 0)];
    let m = model(text, &[]);
    let reps = 10;
    let r = run(&m, reps, 100_000, 10_000);
    let cpu = r.stations.iter().find(|s| s.name == "cpu").unwrap();
    let db = r.stations.iter().find(|s| s.name == "db").unwrap();
    assert_close(
        "fork throughput",
        r.system.throughput_per_s,
        throughput,
        reps,
        0.0,
        0.006,
    );
    assert_close(
        "cpu's blocked fraction",
        cpu.blocked_fraction.expect("cpu sends to db"),
        blocked,
        reps,
        0.0,
        0.006,
    );
    // Of the two sub-jobs of a job, the second blocks when cpu finishes it
    // before db finishes the first: mu_c / (mu_c + mu_d) of the time.
    assert_close(
        "db's blocking probability",
        db.blocking_probability.expect("db blocks"),
        0.5 * mu_c / (mu_c + mu_d),
        reps,
        0.0,
        0.006,
    );
    assert_close(
        "blocking time at cpu",
        cpu.blocking_time_s.expect("cpu sends to db"),
        1.0 / mu_d,
        reps,
        0.0,
        0.006,
    );

    // Sent straight from the fork, the second sub-job waits outside: half
    // of db's arrivals wait, and the job takes two db services.
    let direct = text.replace(r#"route = ["cpu", "db"]"#, r#"to = ["db"]"#);
    let m = model(&direct, &[]);
    let r = run(&m, reps, 100_000, 10_000);
    let db = r.stations.iter().find(|s| s.name == "db").unwrap();
    let p = db.blocking_probability.expect("db blocks").mean;
    assert!(
        (p - 0.5).abs() < 1e-3,
        "blocking probability {p}, expected 1/2"
    );
    assert_close(
        "fork response time",
        crate::support::mean_of(&r.system.response_time_s),
        2.0 / mu_d,
        reps,
        0.0,
        0.006,
    );
}

/// models/app_db_blocking.toml: the database is always full (8 admitted, 4
/// serving), so it completes exactly 4 / 10 ms = 400 queries/s, and the app
/// tier serves 400 x 2 x 2 ms of work on 16 threads (10% of their time);
/// with blocking every other moment of those threads is blocked (90%), and
/// without the admission limit the same throughput leaves them idle instead.
#[test]
fn app_db_blocking_moves_the_queue_into_the_app_tier() {
    // Power: 99.9% tolerances measured at 0.9% (throughputs, app serving) and
    // 0.1% (blocked) of the exact figures, so a bias of about 0.9% fails; the
    // guards (about 1.5 x the measured widths) allow at most 1.5% and 0.2%.
    let text = include_str!("../../models/app_db_blocking.toml");
    let app = |r: &qsim_kernel::RunResults| {
        r.stations
            .iter()
            .find(|s| s.name == "app")
            .cloned()
            .expect("station app")
    };
    let r = run(&model(text, &[]), 10, 50_000, 5_000);
    assert_close(
        "throughput",
        r.system.throughput_per_s,
        400.0,
        10,
        0.0,
        0.0065,
    );
    let blocking = app(&r);
    assert_close("app serving", blocking.utilization, 0.1, 10, 0.0, 0.007);
    let blocked = blocking
        .blocked_fraction
        .expect("app sends to a blocking station");
    assert_close("app blocked", blocked, 0.9, 10, 0.0, 0.001);
    let without = ["stations.db.capacity=64", "stations.db.when_full=\"drop\""];
    let open = run(&model(text, &without), 10, 50_000, 5_000);
    assert_close(
        "throughput without a binding limit",
        open.system.throughput_per_s,
        400.0,
        10,
        0.0,
        0.0065,
    );
    assert!(app(&open).mean_jobs.mean < blocking.mean_jobs.mean / 5.0);
}
