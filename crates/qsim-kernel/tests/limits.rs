//! Range rules: the kernel refuses what it cannot simulate correctly (times
//! past what an f64 clock resolves, infinite means or variances, counts it
//! cannot represent), each refusal saying what and where, and a run whose
//! clock runs past the limit fails instead of printing wrong figures.

use qsim_kernel::dist::{MAX_CLOCK_S, MAX_STD_DEV_S, MAX_TIME_S};
use qsim_kernel::*;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The message of a refused distribution, which must contain each of `want`.
#[track_caller]
fn refused(d: Result<Dist, DistError>, want: &[&str]) {
    let e = d.expect_err("expected a refusal").to_string();
    for w in want {
        assert!(e.contains(w), "expected {w:?} in {e:?}");
    }
}

#[test]
fn times_past_the_clock_resolution_are_refused() {
    // The bound itself is accepted, the next float above it is not.
    assert!(Dist::exponential(MAX_TIME_S).is_ok());
    assert!(Dist::deterministic(MAX_TIME_S).is_ok());
    let above = f64::from_bits(MAX_TIME_S.to_bits() + 1);
    refused(
        Dist::exponential(above),
        &["exponential mean", "at most 1e9 s"],
    );
    refused(
        Dist::deterministic(1e300),
        &["deterministic value", "at most 1e9 s", "found 1e300"],
    );
    refused(Dist::exponential(2_147_483_647.0), &["found 2147483647"]);
    refused(Dist::uniform(0.0, 2e9), &["uniform max", "at most 1e9 s"]);
    refused(
        Dist::hyperexponential(0.5, 1.0, 1e10),
        &["hyperexponential mean2", "at most 1e9 s"],
    );
    refused(Dist::gamma(0.5, 1e10), &["gamma scale", "at most 1e9 s"]);
    refused(
        Dist::empirical(&[1.0, 1e12]),
        &["empirical sample 1", "at most 1e9 s"],
    );
    refused(
        Dist::erlang(4, f64::INFINITY),
        &["erlang mean", "positive finite"],
    );
}

#[test]
fn lognormal_with_an_overflowing_mean_or_variance_is_refused() {
    // mu = 700, sigma = 1000: exp(mu + sigma²/2) overflows.
    refused(
        Dist::lognormal(700.0, 1000.0),
        &["exp(mu + sigma^2/2)", "= inf s", "lower mu or sigma"],
    );
    // A tiny mean (exp(-1000 + 450) ≈ 1e-239) but variance
    // (e^900 − 1)·e^(2·mu + 900) with e^900 = inf.
    refused(Dist::lognormal(-1000.0, 30.0), &["standard deviation"]);
    // Within range: mean e^(0 + 1/2), finite variance.
    let d = Dist::lognormal(0.0, 1.0).unwrap();
    assert!((d.mean() - 0.5f64.exp()).abs() < 1e-12);
}

#[test]
fn a_standard_deviation_past_the_limit_is_refused() {
    // Hyperexponential with balanced means: scv 1e30 at mean 1 is a
    // standard deviation of 1e15 s.
    refused(
        Dist::from_mean_scv(Family::HyperExponential, 1.0, 1e30),
        &["standard deviation of 1e15 s", "at most 1e12 s"],
    );
    // Inside: sd = mean·sqrt(scv) = 1e3·sqrt(1e17) ≈ 3.2e11 s.
    let d = Dist::from_mean_scv(Family::LogNormal, 1e3, 1e17).unwrap();
    assert!(d.variance().sqrt() <= MAX_STD_DEV_S);
    // A gamma of that scv would need a scale of 1e20 s: refused as a time.
    refused(
        Dist::from_mean_scv(Family::Gamma, 1e3, 1e17),
        &["gamma scale", "at most 1e9 s"],
    );
}

#[test]
fn erlang_of_huge_k_samples_in_constant_time_with_the_right_law() {
    // k = 2^32 − 1 once took O(k) per draw; now one gamma variate. Mean 1,
    // variance 1/k: 10^5 draws have a mean within 5 standard errors of 1.
    let d = Dist::erlang(u32::MAX, 1.0).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let n = 100_000;
    let m = (0..n).map(|_| d.sample(&mut rng)).sum::<f64>() / f64::from(n);
    let se = (d.variance() / f64::from(n)).sqrt();
    assert!((m - 1.0).abs() <= 5.0 * se, "mean {m}, se {se}");
    // k = 100 (past the sum-of-exponentials path): mean 2, variance 4/100.
    // Sample mean within 5 standard errors, sample variance within 5 of its
    // standard errors (sd of s² ≈ σ²·sqrt(2/n) for a near-normal law).
    // The standard errors are the law's, not estimated, so no guard is
    // needed: a mean off by 0.11% or a variance off by 1.6% fails (and at
    // k = 2^32 − 1 a mean off by 2.4e-7).
    let d = Dist::erlang(100, 2.0).unwrap();
    let n = 200_000;
    let xs: Vec<f64> = (0..n).map(|_| d.sample(&mut rng)).collect();
    let m = xs.iter().sum::<f64>() / f64::from(n);
    let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / f64::from(n);
    assert!((m - 2.0).abs() <= 5.0 * (0.04 / f64::from(n)).sqrt(), "{m}");
    assert!(
        (v - 0.04).abs() <= 5.0 * 0.04 * (2.0 / f64::from(n)).sqrt(),
        "{v}"
    );
}

fn station(kind: StationKind, service: Option<Dist>) -> StationSpec {
    StationSpec {
        name: "s".into(),
        kind,
        service: vec![service],
        speed: None,
    }
}

fn closed(population: u32, think: Option<Dist>) -> ClassSpec {
    ClassSpec {
        name: "c".into(),
        workload: Workload::Closed { population, think },
        routing: Routing::Sequence(vec![0]),
        priority: 0,
    }
}

fn network(st: StationSpec) -> Result<Network, NetworkErrors> {
    Network::new(NetworkSpec {
        stations: vec![st],
        classes: vec![closed(1, None)],
        ..NetworkSpec::default()
    })
}

/// The single error of `st`, which must be at station 0 under `field`.
#[track_caller]
fn located(st: StationSpec, field: &[Field], want: &str) {
    let e = network(st).expect_err("expected a refusal");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].scope, Scope::Station(0));
    assert_eq!(e[0].field, field);
    assert!(e[0].message.contains(want), "{want:?} in {}", e[0]);
}

#[test]
fn counts_and_times_of_stations_are_bounded_and_located() {
    let exp = || Some(Dist::exponential(1.0).unwrap());
    let q = |servers| StationKind::Queue {
        servers,
        discipline: Discipline::Fcfs,
    };
    assert!(network(station(q(MAX_SERVERS), exp())).is_ok());
    located(
        station(q(MAX_SERVERS + 1), exp()),
        &[Field::Key("servers")],
        "at most 16777216 servers, found 16777217",
    );
    let link = |pipeline| {
        StationKind::Link(LinkSpec {
            pipeline,
            max_batch: 1,
        })
    };
    assert!(network(station(link(MAX_PIPELINE), exp())).is_ok());
    located(
        station(link(u32::MAX), exp()),
        &[Field::Key("pipeline")],
        "at most 1048576, found 4294967295",
    );
    located(
        station(
            StationKind::Batch(BatchSpec {
                max_batch: 4,
                max_wait_s: Some(1e300),
                per_job_s: 0.0,
            }),
            exp(),
        ),
        &[Field::Key("max_wait_s")],
        "at most 1e9 s",
    );
    located(
        station(
            StationKind::Batch(BatchSpec {
                max_batch: 4,
                max_wait_s: None,
                per_job_s: 2e9,
            }),
            exp(),
        ),
        &[Field::Key("per_job_s")],
        "found 2000000000",
    );
}

#[test]
fn a_run_whose_clock_passes_the_limit_fails_with_a_clear_error() {
    // One job, a 1e9 s service: 2000 completions reach 2e12 s > 1e12 s.
    let net = network(station(
        StationKind::Queue {
            servers: 1,
            discipline: Discipline::Fcfs,
        },
        Some(Dist::deterministic(MAX_TIME_S).unwrap()),
    ))
    .unwrap();
    let config = RunConfig {
        replications: 2,
        stop: Stop::Jobs(2000),
        warmup: Warmup::Jobs(0),
        threads: 1,
        ..RunConfig::default()
    };
    match run(&net, &config) {
        Err(e @ RunError::ClockLimit { time_s, .. }) => {
            assert!(time_s > MAX_CLOCK_S, "{time_s}");
            let m = e.to_string();
            assert!(m.contains("past the 1e12 s"), "{m}");
        }
        other => panic!("expected ClockLimit, got {other:?}"),
    }
    // 900 completions end at 9e11 s, inside the limit: the run succeeds and
    // its throughput is exactly one job per 1e9 s.
    let ok = RunConfig {
        stop: Stop::Jobs(900),
        ..config.clone()
    };
    let r = run(&net, &ok).unwrap();
    let x = r.system.throughput_per_s.mean;
    assert!((x * MAX_TIME_S - 1.0).abs() < 1e-9, "{x}");
    // A stop time past the clock limit is refused before running.
    let long = RunConfig {
        stop: Stop::Time(2e12),
        ..config
    };
    assert!(matches!(run(&net, &long), Err(RunError::Config(m)) if m.contains("at most 1e12 s")));
}
