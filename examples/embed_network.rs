//! Example: building a network in code and checking it against theory.
//!
//! Demonstrates:
//! - describing a network with `qsim_kernel` types, without a model file;
//! - running replications and reading the results as plain structs;
//! - comparing with the exact answer from `qsim_analytic`.
//!
//! ```text
//!   arrivals (Poisson, 3.2/s) ──▶ [ cpu: 4 servers, FCFS, exp 1 s ] ──▶ exit
//! ```
//!
//! An M/M/4 at utilization 0.8. The program asserts that the exact mean
//! response time lies within the simulation's 99.9% confidence interval.

use qsim::analytic::single;
use qsim::kernel::{
    ClassSpec, Discipline, Dist, Network, NetworkSpec, Routing, RunConfig, StationKind,
    StationSpec, Stop, Warmup, Workload, run,
};

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let spec = NetworkSpec {
        stations: vec![StationSpec {
            name: "cpu".into(),
            kind: StationKind::Queue {
                servers: 4,
                discipline: Discipline::Fcfs,
            },
            service: vec![Some(Dist::exponential(1.0)?)],
            speed: None,
        }],
        classes: vec![ClassSpec {
            name: "requests".into(),
            workload: Workload::Open {
                interarrival: Dist::exponential(1.0 / 3.2)?,
            },
            routing: Routing::Sequence(vec![0]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    };
    let network = Network::new(spec)?;
    let config = RunConfig {
        seed: 7,
        replications: 10,
        stop: Stop::Jobs(500_000),
        warmup: Warmup::Jobs(20_000),
        ..RunConfig::default()
    };
    let results = run(&network, &config)?;
    let exact = single::mmc(3.2, 1.0, 4)?;
    let r = &results.system.response_time_s;
    println!(
        "M/M/4 at rho 0.8: simulated mean response {:.4} ± {:.4} s, exact {:.4} s; p99 {:.3} s",
        r.mean, r.ci95, exact.response_time_s, r.p99.mean
    );
    // 10 replications: widen the 95% half-width to 99.9% with t quantiles (4.781 / 2.262).
    let half = r.ci95 * 4.781 / 2.262;
    assert!(
        (r.mean - exact.response_time_s).abs() <= half,
        "simulation disagrees with Erlang C"
    );
    // Results are looked up by the names the network gives its parts.
    let u = results.station("cpu").ok_or("no station cpu")?.utilization;
    assert!(
        (u.mean - 0.8).abs() <= u.ci95 * 4.781 / 2.262,
        "utilization {u:?}"
    );
    Ok(())
}
