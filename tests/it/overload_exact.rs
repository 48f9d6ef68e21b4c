//! Cancelled timeouts and shedding against exact answers (issue 22).
//!
//! - `on_timeout = "cancel"` with an exponential timeout and no retries: a
//!   birth-death chain on the jobs present (the one in service finishes
//!   at mu whether its client still waits or not; each waiting one is
//!   cancelled at theta), and the memoryless timeout gives what happens
//!   to those that reach service.
//! - `shed_after_s = d` at an M/M/1: the work of the requests that will be
//!   served is a Markov process whose density is known in closed form
//!   (a level-crossing argument, below).
//!
//! Tolerance: `assert_close` (the 95% interval widened to 99.9%, Student t
//! over 10 replications) with a guard on the interval's width. Measured
//! half-widths (95%) are about 0.2% of each probability and 0.5% of the
//! mean jobs and waits, so a bias of about 0.5% in a probability (1% in
//! a mean) is caught.

use crate::support::{assert_close, model, run};
use qsim_kernel::{Estimate, RunResults};

fn close(label: &str, sim: Estimate, exact: f64, bias: f64, max_rel_ci: f64) {
    eprintln!(
        "{label}: simulated {} ± {}, exact {exact}",
        sim.mean, sim.ci95
    );
    assert_close(label, sim, exact, 10, bias, max_rel_ci);
}

fn overload(r: &RunResults) -> &qsim_kernel::OverloadResults {
    r.stations[0].overload.as_deref().expect("overload figures")
}

#[test]
fn cancelled_timeouts_match_their_birth_death_chain() {
    // Overloaded (lambda > mu): only the cancellations keep it finite.
    let (lambda, mu, theta) = (1.2, 1.0, 0.4);
    let m = model(
        &format!(
            r#"
[workload]
type = "open"
rate_per_s = {lambda}
route = ["server"]

[workload.client]
timeout = {{ dist = "exponential", mean = {} }}
on_timeout = "cancel"

[stations.server]
kind = "queue"
service = {{ dist = "exponential", mean = {} }}
"#,
            1.0 / theta,
            1.0 / mu
        ),
        &[],
    );
    let r = run(&m, 10, 40_000, 2_000);
    // n present: the one in service leaves at mu, each of the n - 1
    // waiting is cancelled at theta.
    let n_max = 400;
    let mut p = vec![1.0f64];
    for n in 1..=n_max {
        p.push(p[n - 1] * lambda / (mu + (n as f64 - 1.0) * theta));
    }
    let total: f64 = p.iter().sum();
    let pi: Vec<f64> = p.iter().map(|x| x / total).collect();
    let cancelled: f64 = pi
        .iter()
        .enumerate()
        .skip(1)
        .map(|(n, p)| p * (n as f64 - 1.0) * theta)
        .sum::<f64>()
        / lambda;
    let reach = 1.0 - cancelled;
    // In service the remaining timeout is exponential again: the client
    // gives up first with probability theta / (theta + mu), and the
    // server's time after that is wasted: E[(S - T)+] / E[S] =
    // theta / (theta + mu).
    let gone_in_service = theta / (theta + mu);
    let timeout = cancelled + reach * gone_in_service;
    let success = reach * mu / (theta + mu);
    let mean_jobs: f64 = pi.iter().enumerate().map(|(n, p)| n as f64 * p).sum();
    let class = r.classes[0].client.as_ref().expect("client figures");
    close(
        "cancel: timeout probability",
        class.timeout_probability,
        timeout,
        0.0,
        0.02,
    );
    close(
        "cancel: goodput",
        class.goodput_per_s,
        lambda * success,
        0.0,
        0.02,
    );
    close(
        "cancel: failure probability",
        class.failure_probability,
        1.0 - success,
        0.0,
        0.02,
    );
    close(
        "cancel: wasted work",
        overload(&r).wasted_work_fraction.expect("wasted work"),
        gone_in_service,
        0.0,
        0.05,
    );
    close(
        "cancel: mean jobs",
        r.stations[0].mean_jobs,
        mean_jobs,
        0.0,
        0.05,
    );
}

#[test]
fn shedding_matches_the_workload_density_of_mm1_with_a_wait_deadline() {
    // FCFS M/M/1 whose requests that would start service after waiting
    // more than d are shed. A request's wait is V, the work then present
    // of the requests that will be served (shed ones take no service), and
    // an arrival adds its service to V only when V <= d. Level crossing
    // with exponential service gives V's density
    //   f(x) = lambda p0 e^{-(mu - lambda) x}     for 0 < x <= d,
    //   f(x) = lambda p0 e^{(lambda - mu) d} e^{-mu (x - d)}  for x > d,
    // p0 = P(V = 0) from the total mass, and P(shed) = P(V > d) (PASTA).
    let (lambda, mu, d) = (1.2f64, 1.0f64, 2.0f64);
    let m = model(
        &format!(
            r#"
[workload]
type = "open"
rate_per_s = {lambda}
route = ["server"]

[stations.server]
kind = "queue"
service = {{ dist = "exponential", mean = {} }}
shed_after_s = {d}
"#,
            1.0 / mu
        ),
        &[],
    );
    let r = run(&m, 10, 40_000, 2_000);
    let k = mu - lambda;
    let below = lambda * (1.0 - (-k * d).exp()) / k;
    let tail = lambda * (-k * d).exp() / mu;
    let p0 = 1.0 / (1.0 + below + tail);
    let shed = p0 * tail;
    // The mean wait of the served: E[V; V <= d] / P(V <= d), with
    // E[V; V <= d] = lambda p0 ∫_0^d x e^{-k x} dx.
    let int_x = (1.0 - (-k * d).exp() * (1.0 + k * d)) / (k * k);
    let wait_served = lambda * p0 * int_x / (1.0 - shed);
    close(
        "shed: shed probability",
        overload(&r).shed_probability.expect("shed probability"),
        shed,
        0.0,
        0.02,
    );
    close(
        "shed: throughput",
        r.system.throughput_per_s,
        lambda * (1.0 - shed),
        0.0,
        0.02,
    );
    close(
        "shed: wait of the served",
        r.stations[0].wait_time_s,
        wait_served,
        0.0,
        0.05,
    );
}
