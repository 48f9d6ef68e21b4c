//! Example: which upgrade pays, at today's load and at next year's.
//!
//! Demonstrates:
//! - embedding `qsim whatif` with the library API (`qsim_sweep::what_if`):
//!   a model from text, station speed-ups as changes, two operating points;
//! - reading the paired differences (Δ throughput with its 95% interval)
//!   and the ranking at the highest load;
//! - checking the differences against exact MVA.
//!
//! ```text
//!            +------------------------------------------------+
//!            v                                                |
//!   [ N users, think 0.5 s ] --> [ cpu: 10 ms ] --> [ disk: 6 ms ]
//! ```
//!
//! Question: a 25% faster CPU or a 25% faster disk? At 20 users both help
//! a little; at 80 users the CPU is saturated (N* = (0.5 + 0.016) / 0.01 ≈
//! 52) and only the CPU upgrade pays. This network is product-form, so
//! exact MVA gives every throughput, and the simulated difference of each
//! change must agree with MVA's within its paired 95% interval (4 half-widths,
//! plus 0.3% of the throughput for the bias left by a finite warm-up).

use qsim_analytic::mva::{Station, exact};
use qsim_model::{Model, ModelErrors, Override, load_str};
use qsim_sweep::{Change, RunSettings, WhatIfOptions, what_if};

const MODEL: &str = r#"
[simulation]
replications = 6
seed = 5
stop = { jobs = 40000 }
warmup = { jobs = 5000 }

[workload]
type = "closed"
population = 20
think = { dist = "exponential", mean = 0.5 }
route = ["cpu", "disk"]

[stations.cpu]
kind = "queue"
service = { dist = "exponential", mean = 0.010 }

[stations.disk]
kind = "queue"
service = { dist = "exponential", mean = 0.006 }
"#;

/// Exact throughput with the given CPU and disk service times.
fn mva(cpu_s: f64, disk_s: f64, n: u32) -> f64 {
    let stations = [Station::queue("cpu", cpu_s), Station::queue("disk", disk_s)];
    exact(&stations, 0.5, n)
        .expect("a valid network")
        .at(n)
        .expect("solved")
        .throughput_per_s
}

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let source =
        |ov: &[Override]| -> Result<Model, ModelErrors> { load_str("capacity", MODEL, ov) };
    let changes = ["cpu", "disk"].map(|s| Change::SpeedUp {
        station: s.to_string(),
        factor: 1.25,
    });
    let loads = [20, 80];
    let points: Vec<Vec<Override>> = loads
        .iter()
        .map(|n| vec![Override::parse(&format!("workload.population={n}")).expect("valid")])
        .collect();
    let options = WhatIfOptions {
        settings: RunSettings::default(),
        ..WhatIfOptions::default()
    };
    let report = what_if(&source, &[], &changes, &points, &options)?;

    for change in &report.changes {
        for (k, p) in change.points.iter().enumerate() {
            let d = &p.throughput_per_s;
            let n = loads[k];
            let base = mva(0.010, 0.006, n);
            let exact_gain = if change.change.contains("cpu") {
                mva(0.008, 0.006, n) - base
            } else {
                mva(0.010, 0.0048, n) - base
            };
            println!(
                "{:20} N = {n:3}: ΔX {:+7.2} ± {:.2}/s (exact {exact_gain:+7.2}), paired CI {:.1}x narrower than unpaired",
                change.change, d.mean, d.ci95, d.ci_narrowing
            );
            let tolerance = 4.0 * d.ci95 + 0.003 * base;
            assert!(
                (d.mean - exact_gain).abs() <= tolerance,
                "{} at N = {n}: simulated ΔX {} ± {}, exact {exact_gain}",
                change.change,
                d.mean,
                d.ci95
            );
        }
    }
    // Ranked at the highest load: the CPU upgrade first.
    assert_eq!(report.changes[0].change, "speedup cpu x1.25");
    let disk_at_80 = &report.changes[1].points[1].throughput_per_s;
    assert!(
        disk_at_80.relative < 0.02,
        "a faster disk barely helps at 80 users"
    );
    Ok(())
}
