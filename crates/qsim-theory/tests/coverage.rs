//! Coverage of the 95% interval of the mean response time of M/M/1 against
//! its exact value `1/(μ - λ)`, over many seeds: at ρ = 0.5, 0.9 and 0.99
//! with the default run settings, and on short runs (50 jobs, 5
//! replications). A run either covers the exact mean or warns that its
//! figures cannot be trusted (the theory's short-run check or the
//! kernel's own steady-state warnings); a short run must never miss in
//! silence.
//!
//! The threshold: with `n` seeds and a true coverage of 95%, the number
//! covered is binomial(n, 0.95), of standard deviation sqrt(n·0.95·0.05);
//! for n = 80 that is 1.95 seeds, so 92% (73.6 seeds) is 1.4 standard
//! deviations below the 76 expected, a level an honest interval falls
//! under by chance about once in twelve seed sets, while the 87% of the
//! unfixed ρ = 0.99 runs (69.6) is 3.3 standard deviations under 76 and
//! fails it. The seeds are fixed, so the test itself is deterministic.
//! Warned runs count as honest: the figure is said to be unreliable where
//! it is printed.

use qsim_kernel::{
    ClassSpec, Discipline, Dist, Network, NetworkSpec, Routing, RunConfig, StationKind,
    StationSpec, Stop, Workload,
};
use qsim_theory::relaxation::short_run;

fn mm1(rho: f64) -> Network {
    Network::new(NetworkSpec {
        stations: vec![StationSpec {
            name: "server".into(),
            kind: StationKind::Queue {
                servers: 1,
                discipline: Discipline::Fcfs,
            },
            service: vec![Some(Dist::exponential(1.0).unwrap())],
            speed: None,
        }],
        classes: vec![ClassSpec {
            name: "default".into(),
            workload: Workload::Open {
                interarrival: Dist::exponential(1.0 / rho).unwrap(),
            },
            routing: Routing::Sequence(vec![0]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    })
    .unwrap()
}

#[derive(Default, Debug)]
struct Tally {
    covered: u32,
    warned: u32,
    silent_misses: u32,
    widest_relative: f64,
}

/// Runs `seeds` seeds of M/M/1 at `rho` with `config` and counts the
/// seeds whose interval covers `1/(1-ρ)`, those that warn, and the misses
/// that do not warn.
fn tally(rho: f64, config: &RunConfig, seeds: u64) -> Tally {
    let network = mm1(rho);
    let exact = 1.0 / (1.0 - rho);
    let mut t = Tally::default();
    for seed in 1..=seeds {
        let config = RunConfig {
            seed,
            ..config.clone()
        };
        let r = qsim_kernel::run(&network, &config).unwrap();
        let est = r.system.response_time_s;
        let warned = short_run(network.spec(), &r).is_some() || !r.warnings.is_empty();
        let covered = (est.mean - exact).abs() <= est.ci95;
        t.covered += u32::from(covered);
        t.warned += u32::from(warned);
        t.silent_misses += u32::from(!covered && !warned);
        if !warned {
            t.widest_relative = t.widest_relative.max(est.ci95 / est.mean);
        }
    }
    t
}

const SEEDS: u64 = 80;
/// 92% of the seeds, rounded up.
const NEEDED: u32 = 74;

#[test]
fn default_runs_cover_the_exact_mean_or_warn() {
    for rho in [0.5, 0.9, 0.99] {
        let t = tally(rho, &RunConfig::default(), SEEDS);
        eprintln!("rho {rho}, default settings: {t:?}");
        let honest = SEEDS as u32 - t.silent_misses;
        assert!(
            honest >= NEEDED,
            "rho {rho}: {} of {SEEDS} covered, {} warned, {} silent misses",
            t.covered,
            t.warned,
            t.silent_misses
        );
        // An interval that covers by being wide is no promise either: the
        // runs that do not warn must be precise (5 x 100,000 jobs give a
        // relative half-width of a few percent even at rho = 0.9).
        assert!(t.widest_relative < 0.2, "rho {rho}: {t:?}");
    }
}

#[test]
fn short_runs_never_miss_in_silence() {
    let config = RunConfig {
        replications: 5,
        stop: Stop::Jobs(50),
        ..RunConfig::default()
    };
    for rho in [0.5, 0.9, 0.99] {
        let t = tally(rho, &config, SEEDS);
        eprintln!("rho {rho}, 5 x 50 jobs: {t:?}");
        assert_eq!(t.silent_misses, 0, "rho {rho}: {t:?}");
        // At rho 0.9 the run is far shorter than the 380 s relaxation
        // time: every seed must warn, covered or not.
        if rho >= 0.9 {
            assert_eq!(t.warned, SEEDS as u32, "rho {rho}: {t:?}");
        }
    }
}
