//! Rare-event estimates against exact answers: each exact value inside a
//! stated number of 95% half-widths, and each interval narrower than a
//! stated share of the value (so a wide interval cannot pass by itself).

mod support;

use qsim_kernel::rare::*;
use qsim_kernel::*;

fn exp(m: f64) -> Dist {
    Dist::exponential(m).unwrap()
}

/// M/M/1 with arrival rate `lambda` and service rate 1.
fn mm1(lambda: f64) -> Network {
    Network::new(NetworkSpec {
        stations: vec![StationSpec {
            name: "server".into(),
            kind: StationKind::Queue {
                servers: 1,
                discipline: Discipline::Fcfs,
            },
            service: vec![Some(exp(1.0))],
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

/// Checks `got` against `exact`: within `k` half-widths, and the interval
/// narrower than `max_rel` of the exact value.
fn check(got: &RareEstimate, exact: f64, k: f64, max_rel: f64) {
    support::check_rare("estimate", got, exact, k, max_rel);
}

/// The estimand is per regeneration cycle: the probability that a busy
/// period of the M/M/1 (started by an arrival to the empty queue) reaches
/// 40 jobs before the queue empties again. With up-moves at rate lambda =
/// 0.5 and down-moves at rate 1, the jump chain goes up with p = 1/3; the
/// gambler's-ruin probability from 1 of reaching 40 before 0 is
/// (r - 1)/(r^40 - 1) with r = q/p = 2, i.e. 1/(2^40 - 1) = 9.095e-13
/// (the stationary P(N >= 40) = 0.5^40 = 9.09e-13 is a different quantity
/// of about the same size).
#[test]
fn mm1_busy_period_reaches_40() {
    let net = mm1(0.5);
    let cfg = RareConfig {
        seed: 7,
        replications: 20,
        effort: 300,
        ..RareConfig::default()
    };
    let level = Level {
        of: LevelOf::Station(0),
        at_least: 40,
    };
    let got = reach_probability(&net, level, None, &cfg).unwrap();
    let exact = 1.0 / (2f64.powi(40) - 1.0);
    check(&got, exact, 2.5, 0.3);
    assert_eq!(got.stages.len(), 40);
    assert!(got.warnings.is_empty(), "{:?}", got.warnings);
    assert!(got.events > 0);
}

/// P(W > t) = rho exp(-(mu - lambda) t) at about 1e-6, and P(R > t) =
/// exp(-(mu - lambda) t).
#[test]
fn mm1_wait_and_response_tails_at_1e6() {
    let net = mm1(0.5);
    let t = 2.0 * (0.5f64 / 1e-6).ln();
    let cfg = RareConfig {
        seed: 3,
        replications: 10,
        effort: 2000,
        ..RareConfig::default()
    };
    let w = tail_probability(&net, TailOf::Wait, t, &cfg).unwrap();
    check(&w, 0.5 * (-0.5 * t).exp(), 2.5, 0.05);
    let r = tail_probability(&net, TailOf::Response, t, &cfg).unwrap();
    check(&r, (-0.5 * t).exp(), 2.5, 0.05);
}

/// M/M/4 at 75% load (arrivals 3/s, service rate 1/s per server): P(W >
/// t) = C(4, 3) exp(-(4 - 3) t), with C the Erlang C probability of
/// waiting (0.5094), at t = ln(C / 1e-6), i.e. 1e-6. The estimate is
/// P(wait) from a plain run times the conditional tail by importance
/// sampling; with its interval (about ±0.7%) and the 2% width guard, 2.5
/// half-widths catch a bias of about 2% (5% at most): P(wait) counted
/// over the wrong arrivals (those finding c - 1 busy: 25% off), or the
/// walk run at one server's rate, fail by far. The response tail of
/// c > 1 is refused.
#[test]
fn mmc_wait_tail_at_1e6() {
    let (lambda, mu, c) = (3.0, 1.0, 4u32);
    let net = Network::new(NetworkSpec {
        stations: vec![StationSpec {
            name: "server".into(),
            kind: StationKind::Queue {
                servers: c,
                discipline: Discipline::Fcfs,
            },
            service: vec![Some(exp(1.0 / mu))],
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
    .unwrap();
    // Erlang C: a^c/c! * c/(c - a) over sum_{k<c} a^k/k! + that.
    let a: f64 = lambda / mu;
    let fact = |k: u32| (1..=k).map(f64::from).product::<f64>();
    let top = a.powi(c as i32) / fact(c) * f64::from(c) / (f64::from(c) - a);
    let erlang_c = top / ((0..c).map(|k| a.powi(k as i32) / fact(k)).sum::<f64>() + top);
    let theta = f64::from(c) * mu - lambda;
    let t = (erlang_c / 1e-6).ln() / theta;
    let cfg = RareConfig {
        seed: 5,
        replications: 10,
        effort: 2000,
        ..RareConfig::default()
    };
    let got = tail_probability(&net, TailOf::Wait, t, &cfg).unwrap();
    let exact = erlang_c * (-theta * t).exp();
    eprintln!(
        "M/M/4 wait tail: {:e} ± {:e} (exact {exact:e}, C = {erlang_c}), {} events",
        got.value.mean, got.value.ci95, got.events
    );
    check(&got, exact, 2.5, 0.02);
    assert!(matches!(
        tail_probability(&net, TailOf::Response, t, &cfg),
        Err(RareError::Config(_))
    ));
}

/// A closed model with two operating points: 30 jobs think 5 s (exp) and
/// visit one FCFS queue whose speed is 10/s up to 10 jobs present,
/// falling linearly to 1/s at 16 and staying there. The jobs at the queue
/// form a birth-death chain (up (30 - n)/5, down rate(n)) with modes at 0
/// and 25. The mean first-passage time from 0 (all thinking) to 25 is
/// solved exactly below; it is about 1.9e5 mean service times (0.1 s).
#[test]
fn escape_time_of_a_metastable_chain() {
    let (n_jobs, think, target) = (30u32, 5.0, 25u32);
    let rate = |n: f64| {
        if n <= 10.0 {
            10.0
        } else if n >= 16.0 {
            1.0
        } else {
            10.0 - 9.0 * (n - 10.0) / 6.0
        }
    };
    let net = Network::new(NetworkSpec {
        stations: vec![StationSpec {
            name: "latch".into(),
            kind: StationKind::Queue {
                servers: 1,
                discipline: Discipline::Fcfs,
            },
            service: vec![Some(exp(0.1))],
            speed: Some(Speed::Table(vec![(10.0, 10.0), (16.0, 1.0)])),
        }],
        classes: vec![ClassSpec {
            name: "default".into(),
            workload: Workload::Closed {
                population: n_jobs,
                think: Some(exp(think)),
            },
            routing: Routing::Sequence(vec![0]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    })
    .unwrap();
    // Exact: m_n = E[time from n to the target], m_target = 0, solved as
    // the tridiagonal system (lam_n + mu_n) m_n - lam_n m_{n+1} - mu_n
    // m_{n-1} = 1 for n = 0..target-1 (Thomas algorithm).
    let b = target as usize;
    let lam: Vec<f64> = (0..b)
        .map(|n| f64::from(n_jobs - n as u32) / think)
        .collect();
    let mu: Vec<f64> = (0..b)
        .map(|n| if n == 0 { 0.0 } else { rate(n as f64) })
        .collect();
    let (mut c, mut d) = (vec![0.0; b], vec![0.0; b]);
    for n in 0..b {
        let (lower, diag, upper) = (-mu[n], lam[n] + mu[n], -lam[n]);
        let den = diag - if n > 0 { lower * c[n - 1] } else { 0.0 };
        c[n] = upper / den;
        d[n] = (1.0 - if n > 0 { lower * d[n - 1] } else { 0.0 }) / den;
    }
    let mut m = vec![0.0; b + 1];
    for n in (0..b).rev() {
        m[n] = d[n] - c[n] * m[n + 1];
    }
    let exact = m[0];
    assert!(exact >= 1e5 * 0.1, "the chain is not rare enough: {exact}");
    let cfg = RareConfig {
        seed: 11,
        replications: 10,
        effort: 400,
        ..RareConfig::default()
    };
    let level = Level {
        of: LevelOf::Station(0),
        at_least: target,
    };
    let got = escape_time(&net, level, &cfg).unwrap();
    assert!(got.warnings.is_empty(), "{:?}", got.warnings);
    check(&got, exact, 2.5, 0.3);
}

/// A copy follows the original until reseeded; copies reseeded with the
/// same key agree, with different keys they part.
#[test]
fn snapshot_and_reseed() {
    let net = mm1(0.5);
    let cfg = RunConfig {
        stop: Stop::Time(1e6),
        warmup: Warmup::None,
        ..RunConfig::default()
    };
    let mut sim = Simulation::new(&net, &cfg, 0).unwrap();
    for _ in 0..100 {
        sim.step().unwrap();
    }
    let run = |mut s: Simulation| {
        for _ in 0..1000 {
            s.step().unwrap();
        }
        (s.time().seconds(), s.jobs_in_network())
    };
    let same = run(sim.snapshot());
    let (mut a, mut b, mut c) = (sim.snapshot(), sim.snapshot(), sim.snapshot());
    a.reseed(5);
    b.reseed(5);
    c.reseed(6);
    assert_eq!(run(sim), same);
    let (a, b, c) = (run(a), run(b), run(c));
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_ne!(a, same);
}

/// A start level at or above the target is refused; so is a single
/// replication (no interval), and a tail of a model that is not an M/M/1.
#[test]
fn refusals() {
    let net = mm1(0.5);
    let level = Level {
        of: LevelOf::System,
        at_least: 3,
    };
    let cfg = RareConfig {
        start: Some(3),
        ..RareConfig::default()
    };
    assert!(matches!(
        reach_probability(&net, level.clone(), None, &cfg),
        Err(RareError::StartAtTarget { .. })
    ));
    let one = RareConfig {
        replications: 1,
        ..RareConfig::default()
    };
    assert!(reach_probability(&net, level, None, &one).is_err());
    let few = RareConfig {
        effort: 1,
        replications: 2,
        ..RareConfig::default()
    };
    let deep = Level {
        of: LevelOf::System,
        at_least: 60,
    };
    assert!(matches!(
        reach_probability(&net, deep, None, &few),
        Err(RareError::NoSurvivors { .. })
    ));
}

/// Two exponential FCFS queues in tandem (arrivals 0.5/s, service rates 1
/// and 1.5/s) and a weighted level, jobs at the first plus twice the jobs
/// at the second (a job past the first queue is nearer the exit's
/// backlog). The per-cycle probability that a busy period started by an
/// arrival to the empty network reaches 30 before the network empties is
/// solved exactly on the jump chain of (n1, n2) below the target: about
/// 7.2e-7. With the interval it gets (about ±11%) and 2.5 half-widths,
/// it catches a bias of about 30% (at most 50%, the width guard's limit).
#[test]
fn tandem_weighted_level_reaches_30() {
    let (lambda, mu1, mu2, target) = (0.5, 1.0, 1.5, 30usize);
    let queue = |name: &str, rate: f64| StationSpec {
        name: name.into(),
        kind: StationKind::Queue {
            servers: 1,
            discipline: Discipline::Fcfs,
        },
        service: vec![Some(exp(1.0 / rate))],
        speed: None,
    };
    let net = Network::new(NetworkSpec {
        stations: vec![queue("first", mu1), queue("second", mu2)],
        classes: vec![ClassSpec {
            name: "default".into(),
            workload: Workload::Open {
                interarrival: exp(1.0 / lambda),
            },
            routing: Routing::Sequence(vec![0, 1]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    })
    .unwrap();
    let level_of = |n1: usize, n2: usize| n1 + 2 * n2;
    // h(x) = P(reach the target before (0, 0) | x), on states below it.
    let states: Vec<(usize, usize)> = (0..target)
        .flat_map(|a| (0..target).map(move |b| (a, b)))
        .filter(|&(a, b)| level_of(a, b) < target && (a, b) != (0, 0))
        .collect();
    let at = |x: (usize, usize)| states.iter().position(|&s| s == x);
    let n = states.len();
    let mut m = vec![vec![0.0; n + 1]; n];
    for (i, &(a, b)) in states.iter().enumerate() {
        m[i][i] = 1.0;
        let mut moves = vec![((a + 1, b), lambda)];
        if a > 0 {
            moves.push(((a - 1, b + 1), mu1));
        }
        if b > 0 {
            moves.push(((a, b - 1), mu2));
        }
        let total: f64 = moves.iter().map(|m| m.1).sum();
        for (y, r) in moves {
            if level_of(y.0, y.1) >= target {
                m[i][n] += r / total;
            } else if let Some(j) = at(y) {
                m[i][j] -= r / total;
            }
        }
    }
    let exact = gauss(m)[at((1, 0)).unwrap()];
    assert!((5e-7..1e-6).contains(&exact), "{exact:e}");
    let cfg = RareConfig {
        seed: 11,
        replications: 20,
        effort: 1000,
        ..RareConfig::default()
    };
    let level = Level {
        of: LevelOf::Weighted(vec![(0, 1), (1, 2)]),
        at_least: target as u32,
    };
    let got = reach_probability(&net, level, None, &cfg).unwrap();
    eprintln!(
        "tandem, weighted level: {:e} ± {:e} (exact {exact:e}), {} events",
        got.value.mean, got.value.ci95, got.events
    );
    check(&got, exact, 2.5, 0.2);
    assert_eq!(got.stages.len(), target);
    // A weight of 0, a station named twice, or an empty sum is refused.
    for of in [
        LevelOf::Weighted(vec![(0, 1), (1, 0)]),
        LevelOf::Weighted(vec![(0, 1), (0, 2)]),
        LevelOf::Weighted(vec![]),
        LevelOf::Weighted(vec![(2, 1)]),
    ] {
        let level = Level { of, at_least: 5 };
        assert!(matches!(
            reach_probability(&net, level, None, &cfg),
            Err(RareError::Config(_))
        ));
    }
}

/// Solves the augmented system `m` (n rows of n + 1) by Gaussian
/// elimination with partial pivoting.
fn gauss(mut m: Vec<Vec<f64>>) -> Vec<f64> {
    let n = m.len();
    for c in 0..n {
        let p = (c..n)
            .max_by(|&i, &j| m[i][c].abs().total_cmp(&m[j][c].abs()))
            .unwrap();
        m.swap(c, p);
        let (top, rest) = m.split_at_mut(c + 1);
        let pivot = &top[c];
        for row in rest {
            let f = row[c] / pivot[c];
            if f != 0.0 {
                for (x, p) in row[c..].iter_mut().zip(&pivot[c..]) {
                    *x -= f * p;
                }
            }
        }
    }
    let mut x = vec![0.0; n];
    for c in (0..n).rev() {
        let s: f64 = (c + 1..n).map(|k| m[c][k] * x[k]).sum();
        x[c] = (m[c][n] - s) / m[c][c];
    }
    x
}

/// The per-cycle probability that the clients waiting to retry of an
/// M/M/1 retrial queue reach `target` before none waits again: with room
/// for one job, an attempt that finds the server busy is refused and its
/// client retries with probability `p` after an exponential backoff (rate
/// `beta` per waiting client), otherwise gives up. (n at the server, r
/// waiting to retry) is a Markov chain; a cycle leaves r = 0 by a refused
/// first attempt, so it starts at (1, 1), and h(n, r), the probability of
/// reaching `target` before r = 0, solves the linear system
/// q(x) h(x) = sum_y q(x, y) h(y) with h = 1 at `target` and 0 at r = 0
/// (Gaussian elimination with partial pivoting, 2 (target - 1) unknowns).
fn retrial_cycle_probability(lambda: f64, mu: f64, beta: f64, p: f64, target: usize) -> f64 {
    let m = 2 * (target - 1);
    let at = |n: usize, r: usize| 2 * (r - 1) + n;
    let mut a = vec![vec![0.0f64; m]; m];
    let mut b = vec![0.0f64; m];
    for r in 1..target {
        for n in 0..2 {
            let i = at(n, r);
            let moves: Vec<(usize, usize, f64)> = if n == 0 {
                vec![(1, r, lambda), (1, r - 1, r as f64 * beta)]
            } else {
                vec![
                    (1, r + 1, lambda * p),
                    (1, r - 1, r as f64 * beta * (1.0 - p)),
                    (0, r, mu),
                ]
            };
            for (n2, r2, q) in moves {
                a[i][i] += q;
                if r2 >= target {
                    b[i] += q;
                } else if r2 > 0 {
                    a[i][at(n2, r2)] -= q;
                }
            }
        }
    }
    for c in 0..m {
        let piv = (c..m)
            .max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs()))
            .unwrap();
        a.swap(c, piv);
        b.swap(c, piv);
        let pivot = a[c].clone();
        for i in c + 1..m {
            let f = a[i][c] / pivot[c];
            if f != 0.0 {
                for (x, p) in a[i][c..].iter_mut().zip(&pivot[c..]) {
                    *x -= f * p;
                }
                b[i] -= f * b[c];
            }
        }
    }
    let mut h = vec![0.0f64; m];
    for i in (0..m).rev() {
        let s: f64 = (i + 1..m).map(|j| a[i][j] * h[j]).sum();
        h[i] = (b[i] - s) / a[i][i];
    }
    h[at(1, 1)]
}

/// The level of clients waiting to retry (`LevelOf::Retrying`) on the
/// M/M/1 retrial queue above, at arrivals 0.7/s, service 1/s, backoff rate
/// 0.3/s, retry probability 0.85: reaching 20 clients waiting to retry
/// before none waits has probability 4.16e-6 per cycle (solved in the
/// test). With the 12% width guard, 2.5 half-widths catch any bias above
/// 30% (less when the interval is narrower: about ±8% at this seed): a retry probability of 0.8
/// instead of 0.85 (exact 1.9e-7), a backoff 10% faster (1.66e-6), or a
/// level counted one too high (1.2e-5 for 19) fail by far. A model without
/// retries is refused.
#[test]
fn retrial_queue_reaches_20_waiting_to_retry() {
    let (lambda, mu, beta, p) = (0.7, 1.0, 0.3, 0.85);
    let spec = NetworkSpec {
        capacity: vec![Some(Capacity {
            limit: 1,
            when_full: WhenFull::Drop,
        })],
        ..mm1(lambda).spec().clone()
    };
    let plain = Network::new(spec).unwrap();
    let client = ClientSpec {
        timeout: None,
        on_timeout: OnTimeout::Continue,
        deadline_s: None,
        retry: Some(RetrySpec {
            max_attempts: u32::MAX,
            probability: p,
            backoff: Backoff::Dist(exp(1.0 / beta)),
            budget: None,
        }),
        breaker: None,
    };
    let level = Level {
        of: LevelOf::Retrying,
        at_least: 20,
    };
    let cfg = RareConfig {
        seed: 11,
        replications: 20,
        effort: 500,
        ..RareConfig::default()
    };
    let refused = reach_probability(&plain, level.clone(), None, &cfg).unwrap_err();
    assert!(
        refused.to_string().contains("no class"),
        "a level of clients waiting to retry in a model without retries: {refused}"
    );
    let net = plain
        .with_overload(Overload {
            classes: vec![Some(client)],
            stations: vec![None],
        })
        .unwrap();
    let got = reach_probability(&net, level, None, &cfg).unwrap();
    let exact = retrial_cycle_probability(lambda, mu, beta, p, 20);
    eprintln!(
        "retrial queue: P(20 waiting to retry per cycle) {:e} ± {:e}, exact {exact:e}",
        got.value.mean, got.value.ci95
    );
    check(&got, exact, 2.5, 0.12);
    assert_eq!(got.stages.len(), 20);
}
