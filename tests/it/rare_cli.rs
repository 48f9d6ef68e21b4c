//! `qsim rare --tail` end to end on the three-tier tandem of
//! examples/data/three_tier.toml (its header's exact figures, and the
//! refusal of a tandem's wait tail) and the 32-shard fan-out of
//! examples/data/shard_fanout.toml (its header's bounds), and one class of
//! two at a shared FCFS server.

use crate::support::{qsim_json, refused};

/// P(R > t) of the three-tier Jackson tandem (sojourn rates 50, 100/3 and
/// 50/3 per s), as its header gives it.
fn exact(t: f64) -> f64 {
    (-50.0 * t).exp() - 3.0 * (-100.0 / 3.0 * t).exp() + 3.0 * (-50.0 / 3.0 * t).exp()
}

/// The header's P(R > 0.8 s) = 4.86e-6 and P(R > 1.2 s) = 6.2e-9. With
/// 10 replications of 4,000 samples the intervals come out near ±1.2% and
/// ±1.5%; within 2.5 half-widths and a 4% guard each catches a bias of
/// about 4% (10% at most). The bottleneck is the middle station and the last
/// one's tilt is twice its own (a path's excess at the last station then
/// has a weight of infinite variance unless the mixture covers it).
#[test]
fn three_tier_tandem_tail_matches_its_header() {
    for (t, seed, header) in [(0.8, "3", 4.86e-6), (1.2, "4", 6.2e-9)] {
        let exact = exact(t);
        assert!(
            (exact / header - 1.0).abs() < 0.01,
            "header {header} vs {exact}"
        );
        let tail = format!("response_time_s>{t}");
        let got = qsim_json(&[
            "rare",
            "examples/data/three_tier.toml",
            "--tail",
            &tail,
            "--effort",
            "4000",
            "--replications",
            "10",
            "--seed",
            seed,
            "--format",
            "json",
        ]);
        let (v, ci) = (
            got["estimate"].as_f64().unwrap(),
            got["ci95"].as_f64().unwrap(),
        );
        assert_eq!(got["method"], "importance_sampling");
        assert!(
            (v - exact).abs() <= 2.5 * ci,
            "P(R > {t}): {v:e} ± {ci:e} misses the exact {exact:e}"
        );
        assert!(ci <= 0.04 * exact, "P(R > {t}): ± {ci:e} too wide");
    }
    refused(
        &[
            "rare",
            "examples/data/three_tier.toml",
            "--tail",
            "wait_time_s>1",
        ],
        &[
            "wait tail of a route through several stations",
            "response_time_s>T",
        ],
    );
}

/// The 32-shard fan-out of examples/data/shard_fanout.toml: at t = 0.43 s
/// one shard's tail is e^(-40t) = 3.39e-8, and the query's lies between
/// that and 32 times it (1.085e-6), as its header says. The estimate (±1.5%
/// at 10 replications of 1,000 samples) must reach into that band within
/// 2.5 half-widths, with the interval within 3%.
#[test]
fn shard_fanout_tail_lies_within_its_bounds() {
    let shard = (-40.0f64 * 0.43).exp();
    let got = qsim_json(&[
        "rare",
        "examples/data/shard_fanout.toml",
        "--tail",
        "response_time_s>0.43",
        "--effort",
        "1000",
        "--replications",
        "10",
        "--format",
        "json",
    ]);
    let (v, ci) = (
        got["estimate"].as_f64().unwrap(),
        got["ci95"].as_f64().unwrap(),
    );
    assert!(
        v + 2.5 * ci >= shard && v - 2.5 * ci <= 32.0 * shard,
        "{v:e} ± {ci:e} outside [{shard:e}, {:e}]",
        32.0 * shard
    );
    assert!(ci <= 0.03 * v, "± {ci:e} too wide");
}

/// One class's tail at a FCFS server shared by two Poisson classes:
/// models/oltp_reports_priority.toml made FCFS (OLTP 200/s of 2 ms, reports
/// 2/s of 150 ms, both exponential). An OLTP transaction's response is the
/// common wait plus its own service; by the Pollaczek-Khinchine transform
/// with the mixed service (its two poles r1, r2), P(R_oltp > t) = (1 - rho)
/// sum_i M_i/r_i e^{-r_i t}, M_i = a (b - r_i)/(r_j - r_i), a = 500/s and b
/// = 6.67/s the two service rates: 8.73e-7 at t = 4 s. Within 2.5
/// half-widths (about ±1% here) and a 3% guard: catches a bias of about
/// 2.5% (7.5% at most). A class the model lacks, and the priority
/// discipline the model has, are refused with the reason.
#[test]
fn one_class_tail_at_a_shared_fcfs_server() {
    let (lambda, a, b, p) = (202.0f64, 500.0f64, 1.0 / 0.15, 200.0 / 202.0);
    let rho = lambda * (p / a + (1.0 - p) / b);
    let (lin, con) = (a + b - lambda, a * b - lambda * ((1.0 - p) * a + p * b));
    let disc = (lin * lin - 4.0 * con).sqrt();
    let (r1, r2) = ((lin - disc) / 2.0, (lin + disc) / 2.0);
    let m = |ri: f64, rj: f64| a * (b - ri) / (rj - ri);
    let tail = |t: f64| {
        (1.0 - rho) * (m(r1, r2) / r1 * (-r1 * t).exp() + m(r2, r1) / r2 * (-r2 * t).exp())
    };
    assert!((tail(0.0) - 1.0).abs() < 1e-12);
    let exact = tail(4.0);
    let args = [
        "rare",
        "models/oltp_reports_priority.toml",
        "--set",
        "stations.db_cpu.discipline=fcfs",
        "--tail",
        "classes.oltp.response_time_s>4",
        "--effort",
        "2000",
        "--replications",
        "10",
        "--format",
        "json",
    ];
    let got = qsim_json(&args);
    let (v, ci) = (
        got["estimate"].as_f64().unwrap(),
        got["ci95"].as_f64().unwrap(),
    );
    assert_eq!(got["subject"], "classes.oltp.response_time_s>4");
    assert!(
        (v - exact).abs() <= 2.5 * ci,
        "{v:e} ± {ci:e} misses {exact:e}"
    );
    assert!(ci <= 0.03 * exact, "± {ci:e} too wide");
    refused(
        &[
            "rare",
            "models/oltp_reports_priority.toml",
            "--tail",
            "classes.nobody.response_time_s>4",
        ],
        &["no class named `nobody`", "oltp, report"],
    );
    refused(
        &[
            "rare",
            "models/oltp_reports_priority.toml",
            "--tail",
            "classes.oltp.response_time_s>4",
        ],
        &["not one FCFS server"],
    );
}
