//! Helpers shared by the kernel's integration tests.

// Each test file uses its own part of this module.
#![allow(dead_code)]

use qsim_kernel::*;

/// Runs `spec` for `reps` replications of `jobs` completed jobs each,
/// after a warm-up of a tenth of that.
pub fn run_net(spec: NetworkSpec, reps: u32, jobs: u64) -> RunResults {
    let n = Network::new(spec).unwrap();
    let c = RunConfig {
        replications: reps,
        stop: Stop::Jobs(jobs),
        warmup: Warmup::Jobs(jobs / 10),
        ..RunConfig::default()
    };
    run(&n, &c).unwrap()
}

/// Two estimates of the same figure agree: their difference is within
/// twice the root sum of squares of their 95% half-widths. For independent
/// runs that is about 5 standard errors of the difference (half-width ≈
/// 2.6 se at 6 replications); runs that share random streams only make the
/// difference smaller.
pub fn agree(what: &str, a: Estimate, reference: Estimate) {
    let tol = 2.0 * (a.ci95 * a.ci95 + reference.ci95 * reference.ci95).sqrt();
    assert!(
        tol.is_finite() && (a.mean - reference.mean).abs() <= tol,
        "{what}: {} ± {} vs reference {} ± {} (tolerance {tol})",
        a.mean,
        a.ci95,
        reference.mean,
        reference.ci95
    );
}

/// Checks a rare-event estimate against `exact`: within `k` of its 95%
/// half-widths, and the interval narrower than `max_rel` of the exact
/// value (so a wide interval cannot pass by itself).
pub fn check_rare(what: &str, got: &rare::RareEstimate, exact: f64, k: f64, max_rel: f64) {
    let v = got.value;
    eprintln!(
        "{what}: {:.4e} ± {:.4e} ({:.1}%), exact {exact:.4e}, {} events",
        v.mean,
        v.ci95,
        100.0 * v.ci95 / exact,
        got.events
    );
    assert!(
        (v.mean - exact).abs() <= k * v.ci95,
        "{what}: estimate {:e} ± {:e} misses the exact {exact:e} by more than {k} half-widths",
        v.mean,
        v.ci95
    );
    assert!(
        v.ci95 <= max_rel * exact,
        "{what}: interval ± {:e} wider than {max_rel} of {exact:e}",
        v.ci95
    );
}

/// |mean − exact| ≤ 4·ci95 (about 6 standard errors at 4-6 replications),
/// with ci95 ≤ `guard`·exact so the check can fail: a bias above 4 × guard
/// always does.
pub fn within_4(what: &str, e: Estimate, exact: f64, guard: f64) {
    assert!(
        e.ci95.is_finite() && (e.mean - exact).abs() <= 4.0 * e.ci95,
        "{what}: {} ± {} vs exact {exact}",
        e.mean,
        e.ci95
    );
    assert!(
        e.ci95 <= guard * exact.abs(),
        "{what}: half-width {} is over the guard {}% of {exact}",
        e.ci95,
        guard * 100.0
    );
}
