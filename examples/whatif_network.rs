//! Example: a capacity question on a network built in code, with typed
//! operating points.
//!
//! Demonstrates:
//! - building a closed network with `qsim::kernel` types (no model file),
//!   running it and reading a station's results by name;
//! - `qsim::sweep::what_if_network`: operating points and changes given as
//!   typed `Setting`s (a population, a station's servers, its mean service
//!   time), not key-path strings;
//! - checking the run and every paired difference against exact MVA.
//!
//! ```text
//!            +-------------------------------------------------+
//!            v                                                 |
//!   [ N users, think 0.5 s ] --> [ cpu: 10 ms ] --> [ disk: 6 ms ]
//! ```
//!
//! Question: a second CPU, or a disk 20% quicker (4.8 ms)? At 20 users
//! both help a little; at 80 the single CPU is saturated (N* = (0.5 +
//! 0.016) / 0.01 ≈ 52) and only the second CPU pays. The network is
//! product-form (exponential service, FCFS, a delay for thinking), so
//! exact MVA, with the two-server CPU as a load-dependent station, gives
//! every throughput: each simulated figure must agree within 4 of its 95%
//! half-widths plus 0.3% of the throughput for the bias a finite warm-up
//! leaves.

use qsim::analytic::mva::{Station, exact};
use qsim::kernel::{
    ClassSpec, Discipline, Dist, Network, NetworkSpec, Routing, RunConfig, StationKind,
    StationSpec, Stop, Warmup, Workload, run,
};
use qsim::sweep::{Change, Setting, WhatIfOptions, what_if_network};

/// Exact throughput with `cpus` CPUs of 10 ms and a disk of `disk_s`.
fn mva(cpus: u32, disk_s: f64, n: u32) -> f64 {
    let stations = [
        Station::multi_server("cpu", cpus, 0.010),
        Station::queue("disk", disk_s),
    ];
    exact(&stations, 0.5, n)
        .expect("a valid network")
        .at(n)
        .expect("solved")
        .throughput_per_s
}

fn queue(name: &str, mean_s: f64) -> Result<StationSpec, Box<dyn std::error::Error>> {
    Ok(StationSpec {
        name: name.into(),
        kind: StationKind::Queue {
            servers: 1,
            discipline: Discipline::Fcfs,
        },
        service: vec![Some(Dist::exponential(mean_s)?)],
        speed: None,
    })
}

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let spec = NetworkSpec {
        stations: vec![queue("cpu", 0.010)?, queue("disk", 0.006)?],
        classes: vec![ClassSpec {
            name: "users".into(),
            workload: Workload::Closed {
                population: 20,
                think: Some(Dist::exponential(0.5)?),
            },
            routing: Routing::Sequence(vec![0, 1]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    };
    let network = Network::new(spec)?;
    let config = RunConfig {
        seed: 11,
        replications: 6,
        stop: Stop::Jobs(40_000),
        warmup: Warmup::Jobs(5_000),
        ..RunConfig::default()
    };

    // The network as built: 20 users.
    let results = run(&network, &config)?;
    let x = results.system.throughput_per_s;
    let exact_x = mva(1, 0.006, 20);
    let cpu = results.station("cpu").expect("a station named cpu");
    println!(
        "N = 20: X {:.2} ± {:.2}/s (exact {exact_x:.2}), cpu utilization {:.3}",
        x.mean, x.ci95, cpu.utilization.mean
    );
    assert!((x.mean - exact_x).abs() <= 4.0 * x.ci95 + 0.003 * exact_x);
    // Utilization law: U = X × S at the CPU.
    let u = cpu.utilization;
    assert!((u.mean - exact_x * 0.010).abs() <= 4.0 * u.ci95 + 0.003);

    // Two operating points and two upgrades, all typed.
    let loads = [20, 80];
    let points: Vec<Vec<Setting>> = loads
        .iter()
        .map(|&jobs| vec![Setting::Population { class: None, jobs }])
        .collect();
    let second_cpu = Change::Settings(vec![Setting::Servers {
        station: "cpu".into(),
        servers: 2,
    }]);
    let quicker_disk = Change::Settings(vec![Setting::ServiceMean {
        station: "disk".into(),
        mean_s: 0.0048,
    }]);
    let report = what_if_network(
        &network,
        &config,
        &[quicker_disk, second_cpu],
        &points,
        &WhatIfOptions::default(),
    )?;
    for (k, b) in report.baseline.iter().enumerate() {
        let exact_x = mva(1, 0.006, loads[k]);
        let x = b.throughput_per_s;
        assert!(
            (x.mean - exact_x).abs() <= 4.0 * x.ci95 + 0.003 * exact_x,
            "baseline at {}: X {} ± {}, exact {exact_x}",
            b.point,
            x.mean,
            x.ci95
        );
    }
    for change in &report.changes {
        for (k, p) in change.points.iter().enumerate() {
            let n = loads[k];
            let base = mva(1, 0.006, n);
            let exact_gain = if change.change.contains("servers") {
                mva(2, 0.006, n) - base
            } else {
                mva(1, 0.0048, n) - base
            };
            let d = &p.throughput_per_s;
            println!(
                "{:34} {}: ΔX {:+7.2} ± {:.2}/s (exact {exact_gain:+7.2})",
                change.change, p.point, d.mean, d.ci95
            );
            assert!(
                (d.mean - exact_gain).abs() <= 4.0 * d.ci95 + 0.003 * base,
                "{} at {}: simulated ΔX {} ± {}, exact {exact_gain}",
                change.change,
                p.point,
                d.mean,
                d.ci95
            );
        }
    }
    // Ranked by the gain at the highest load: the second CPU first.
    assert_eq!(report.changes[0].change, "stations.cpu.servers=2");
    assert_eq!(report.baseline[1].point, "population=80");
    Ok(())
}
