//! How a transient looks across replications, against exact answers:
//! the ensemble trace of an M/M/∞ station started empty (whose mean
//! number present is known in closed form at every time), and the time a
//! birth–death chain started at its top takes to drain (its mean
//! first-passage time, solved here), read by the recovery figures.
//! Tolerances are 4 half-widths of a 95% Student interval (a chance
//! below 1e-3 of a false failure each; the seeds are fixed anyway), with a
//! guard on each interval's width so a wide interval cannot pass.

use qsim_kernel::recovery::{RecoveryFigure, RecoveryMetric, TriggerWindow, recovery_to};
use qsim_kernel::trace::{Trace, TracePlan};
use qsim_kernel::*;

fn exp(m: f64) -> Dist {
    Dist::exponential(m).unwrap()
}

fn traces(r: &RunResults) -> Vec<&Trace> {
    r.replication_results
        .iter()
        .map(|rep| rep.trace.as_deref().expect("traced"))
        .collect()
}

#[test]
fn mm_inf_started_empty_ensemble_covers_the_exact_mean_curve() {
    // Poisson arrivals at 20/s to an infinite-server station with
    // exponential service of mean 0.5 s, empty at 0: E[N(t)] = λs(1 −
    // e^(−t/s)), whose average over [a, b] is λs(1 − s(e^(−a/s) −
    // e^(−b/s))/(b − a)). 480 replications (60 before): the half-widths
    // are 2.6-3.8% of the level (of 3 jobs where the level is lower),
    // guarded at 6%, so a bias of about 15% in one interval's mean jobs
    // fails (at most 24%), and one of about a half-width across the curve
    // (3%) takes the coverage below 16 of 20; the departure rates'
    // half-widths are 4-7% of theirs, guarded at 10% (a bias of about 28%
    // in one interval fails). (At 4000 replications every interval lies
    // within 1.05 half-widths of the exact curve.)
    let (lambda, s) = (20.0, 0.5);
    let network = Network::new(NetworkSpec {
        stations: vec![StationSpec {
            name: "pool".into(),
            kind: StationKind::Delay,
            service: vec![Some(exp(s))],
            speed: None,
        }],
        classes: vec![ClassSpec {
            name: "c".into(),
            workload: Workload::Open {
                interarrival: exp(1.0 / lambda),
            },
            routing: Routing::Sequence(vec![0]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    })
    .unwrap();
    let config = RunConfig {
        replications: 480,
        stop: Stop::Time(4.0),
        warmup: Warmup::None,
        seed: 7,
        trace: Some(TracePlan {
            interval_s: 0.2,
            max_intervals: 1000,
        }),
        ..RunConfig::default()
    };
    let results = run(&network, &config).unwrap();
    let e = ensemble::ensemble(&traces(&results));
    assert_eq!(e.replications, 480);
    assert_eq!(e.left_out, 0);
    assert_eq!(e.intervals.len(), 20);
    let mut covered = 0;
    for iv in &e.intervals {
        let (a, b) = (iv.start_s, iv.end_s);
        let exact = lambda * s * (1.0 - s * ((-a / s).exp() - (-b / s).exp()) / (b - a));
        let got = iv.mean_jobs[0];
        assert!(
            (got.mean - exact).abs() <= 4.0 * got.ci95,
            "[{a}, {b}]: {} ± {} against {exact}",
            got.mean,
            got.ci95
        );
        // The guard: an interval of a few percent of the level.
        assert!(
            got.ci95 < 0.06 * exact.max(3.0),
            "[{a}, {b}]: half-width {} too wide for {exact}",
            got.ci95
        );
        if (got.mean - exact).abs() <= got.ci95 {
            covered += 1;
        }
        // Departures per second are E[N]/s on average: the same check.
        let x = iv.station_throughput_per_s[0];
        assert!(
            x.ci95 < 0.1 * exact.max(3.0) / s && (x.mean - exact / s).abs() <= 4.0 * x.ci95,
            "[{a}, {b}]: throughput {} ± {} against {}",
            x.mean,
            x.ci95,
            exact / s
        );
    }
    // At the nominal 95%, fewer than 16 of 20 covered has a chance of
    // about 0.003.
    assert!(
        covered >= 16,
        "{covered} of 20 intervals cover the exact mean"
    );
}

/// The rate of the table [(200, 10000), (400, 1500)] at n.
fn rate(n: usize) -> f64 {
    match n {
        0 => 0.0,
        1..=200 => 10000.0,
        201..=399 => 10000.0 - 8500.0 * (n as f64 - 200.0) / 200.0,
        _ => 1500.0,
    }
}

#[test]
fn recovery_time_of_a_chain_started_at_its_top_is_its_first_passage_time() {
    // 600 threads (think time exponential, 0.2 s) at one station whose
    // rate falls from 10000/s with 200 present to 1500/s with 400, all at
    // the station at time 0: a birth–death chain on n (births (600 −
    // n)/0.2, deaths rate(n), which exceed the births at every n, so the
    // chain has one basin and drains). The run starts collapsed
    // (throughput 1500/s) and drains towards its stationary level near
    // 3000/s; it has recovered once intervals show at least 0.9 of that
    // level, i.e. once n is at or below the first state whose rate
    // reaches it.
    let (pop, think) = (600usize, 0.2);
    let births = |n: usize| (pop - n) as f64 / think;
    // Stationary distribution, in logs (p_n spans hundreds of orders of
    // magnitude).
    let mut lp = vec![0.0f64];
    for n in 1..=pop {
        lp.push(lp[n - 1] + births(n - 1).ln() - rate(n).ln());
    }
    let m = lp.iter().cloned().fold(f64::MIN, f64::max);
    let w: Vec<f64> = lp.iter().map(|x| (x - m).exp()).collect();
    let total: f64 = w.iter().sum();
    let level: f64 = (0..=pop).map(|n| w[n] / total * rate(n)).sum();
    // Mean first passage from the top down to `target`: the sum over k >
    // target of P(n >= k) / (rate(k) p_k).
    let passage = |target: usize| -> f64 {
        (target + 1..=pop)
            .map(|k| (k..=pop).map(|j| (lp[j] - lp[k]).exp()).sum::<f64>() / rate(k))
            .sum()
    };
    let fraction = 0.9;
    let target = (0..=pop)
        .rev()
        .find(|&n| rate(n) >= fraction * level)
        .unwrap();
    let network = Network::new(NetworkSpec {
        stations: vec![StationSpec {
            name: "latch".into(),
            kind: StationKind::Queue {
                servers: 1,
                discipline: Discipline::Fcfs,
            },
            service: vec![Some(exp(0.001))],
            speed: Some(Speed::Table(vec![(200.0, 10000.0), (400.0, 1500.0)])),
        }],
        classes: vec![ClassSpec {
            name: "c".into(),
            workload: Workload::Closed {
                population: pop as u32,
                think: Some(exp(think)),
            },
            routing: Routing::Sequence(vec![0]),
            priority: 0,
        }],
        initial: InitialState::AtStation(0),
        ..NetworkSpec::default()
    })
    .unwrap();
    let config = RunConfig {
        replications: 200,
        stop: Stop::Time(1.0),
        warmup: Warmup::None,
        seed: 11,
        trace: Some(TracePlan {
            interval_s: 0.01,
            max_intervals: 100_000,
        }),
        ..RunConfig::default()
    };
    let results = run(&network, &config).unwrap();
    // The trigger is the initial state: a window at time 0.
    let w = TriggerWindow {
        start_s: 0.0,
        end_s: 0.0,
    };
    let r = recovery_to(
        w,
        &traces(&results),
        RecoveryMetric::Throughput,
        fraction,
        Some(level),
    )
    .unwrap();
    assert_eq!(r.collapsed, 200, "every replication starts collapsed");
    let stuck: Vec<String> = r
        .per_replication
        .iter()
        .zip(traces(&results))
        .filter(|(x, _)| x.recover_s.is_none())
        .map(|(x, t)| {
            let best = t
                .intervals
                .iter()
                .map(|i| i.throughput_per_s())
                .fold(0.0, f64::max);
            let last = t.intervals.last().map(|i| i.mean_jobs(0));
            format!("{x:?} best {best} last n {last:?}")
        })
        .collect();
    assert_eq!(
        r.recovered, 200,
        "every replication drains within 1 s: {stuck:?}"
    );
    let (_, lo, _) = r.recovered_fraction.unwrap();
    assert!(lo > 0.98, "{lo}");
    let RecoveryFigure::Estimate(t) = r.time_to_recover_s else {
        panic!("{:?}", r.time_to_recover_s);
    };
    // The throughput of an interval passes the level around the state
    // `target`; 15 states either side (crossed in about 10 ms) bracket
    // where noisy intervals first show it, the interval's midpoint is
    // within half an interval of the time, and the first interval wholly
    // past the crossing can come one interval later.
    let (early, late) = (passage(target + 15), passage(target - 15));
    let ci = 4.0 * t.ci95;
    assert!(
        t.mean >= early - ci - r.resolution_s && t.mean <= late + ci + 3.0 * r.resolution_s,
        "time to recover {} ± {} s against the first passage to n = {} .. {}: {early} .. {late} s (exact, level {level}/s)",
        t.mean,
        t.ci95,
        target + 15,
        target - 15
    );
    // The exact passage to the level's own state, for the record.
    let exact = passage(target);
    assert!((early..=late).contains(&exact), "{early} {exact} {late}");
    // Power: the half-width is 1.7% of the time (0.254 ± 0.0043 s against
    // the exact 0.251 s), guarded at 2.5%; with the bracket of ±15 states
    // and the interval resolution, a recovery time off by about 14% low or
    // 16% high fails (at most 17% and 19% at the guard).
    assert!(t.ci95 < 0.025 * t.mean, "half-width {} too wide", t.ci95);
}
