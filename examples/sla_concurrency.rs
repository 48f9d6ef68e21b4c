//! Example: the highest concurrency that meets a p99 response-time SLA.
//!
//! Demonstrates:
//! - embedding a sweep with the library API (`qsim_sweep::Sweep`), no CLI;
//! - reading per-point results (p99 with its CI) and the knee analysis;
//! - checking the answer against theory.
//!
//! ```text
//!            +-----------------------------+
//!            v                             |
//!   [ N users, think 1 s ] --> [ db: FCFS, 1 server, 10 ms exp. ]
//! ```
//!
//! The SLA: 99% of requests answered within 200 ms. Which is the largest
//! number of users the database can serve within it?
//!
//! Theory: this is the machine-repairman model. By the arrival theorem a
//! request finds the queue as it is in steady state with N−1 users, where
//! P(k) ∝ (N−1)!/(N−1−k)! · (D/Z)^k, and its response time is then the sum
//! of k+1 exponential services: Erlang(k+1, 1/D). So
//! P(R > t) = Σ_k P(k) · P(Erlang(k+1) > t), whose 1% point is the exact
//! p99: 197.3 ms at N = 88 and 202.8 ms at N = 89. The exact answer is 88;
//! the simulation's p99 is an estimate, so the example accepts 88 ± 1.

use qsim_kernel::names;
use qsim_sweep::{Sweep, SweepOptions, VarySpec};

const MODEL: &str = r#"
[simulation]
replications = 8
seed = 11
stop = { jobs = 150000 }
warmup = { jobs = 15000 }

[workload]
type = "closed"
population = 50
think = { dist = "exponential", mean = 1.0 }
route = ["db"]

[stations.db]
kind = "queue"
service = { dist = "exponential", mean = 0.010 }
"#;

const SLA_S: f64 = 0.200;
const D: f64 = 0.010;
const Z: f64 = 1.0;

/// Exact p99 of the response time with `n` users (see the module docs).
fn exact_p99(n: u32) -> f64 {
    let m = (n - 1) as usize;
    let mut w = vec![1.0f64];
    for k in 1..=m {
        w.push(w[k - 1] * (m - k + 1) as f64 * D / Z);
    }
    let total: f64 = w.iter().sum();
    // P(Erlang(k+1, 1/D) > t) = e^{-t/D} Σ_{j≤k} (t/D)^j / j!
    let tail = |t: f64| {
        let x = t / D;
        let mut term = (-x).exp();
        let mut acc = 0.0;
        let mut out = 0.0;
        for (k, wk) in w.iter().enumerate() {
            acc += term;
            term *= x / (k + 1) as f64;
            out += wk / total * acc;
        }
        out
    };
    let (mut lo, mut hi) = (0.0, 10.0);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if tail(mid) > 0.01 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let vary = vec![VarySpec::parse("workload.population=70..110:1")?];
    let source = |ov: &[qsim_model::Override]| qsim_model::load_str("users_and_db.toml", MODEL, ov);
    let sweep = Sweep::with_source(
        "users_and_db.toml",
        source,
        &[],
        vary,
        SweepOptions::default(),
    )?;
    let outcome = sweep.run(&mut ())?;

    // The highest N such that every swept population up to it meets the SLA.
    let mut answer = None;
    for r in &outcome.records {
        let n = r
            .point
            .get("workload.population")
            .and_then(|v| v.number())
            .unwrap_or(0.0) as u32;
        let m = r.results.as_ref().ok_or("a point failed")?;
        let p99 = m.system(names::RESPONSE_TIME_P99_S);
        if n.is_multiple_of(5) || (86..=91).contains(&n) {
            println!(
                "N = {n:3}: X = {:6.1}/s, p99 = {:6.1} ms ± {:4.1} (exact {:6.1} ms)",
                m.system(names::THROUGHPUT_PER_S).mean,
                p99.mean * 1e3,
                p99.ci95 * 1e3,
                exact_p99(n) * 1e3
            );
        }
        if p99.mean > SLA_S {
            break;
        }
        answer = Some(n);
    }
    let answer = answer.ok_or("even the smallest population misses the SLA")?;
    let exact = (2..200)
        .take_while(|&n| exact_p99(n) <= SLA_S)
        .last()
        .unwrap_or(1);
    println!(
        "highest concurrency with p99 <= {} ms: {answer} users (exact: {exact})",
        SLA_S * 1e3
    );
    if let Some(k) = outcome.summary.as_ref().and_then(|s| s.knee.as_ref()) {
        println!("for reference, the knee (max X/R) is at {}", k.point);
    }

    assert_eq!(
        exact, 88,
        "the arrival-theorem p99 crosses 200 ms between 88 and 89 users"
    );
    assert!(
        answer.abs_diff(exact) <= 1,
        "simulated answer {answer}, exact {exact}"
    );
    Ok(())
}
