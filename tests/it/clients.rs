//! Clients and servers under overload against exact answers, each a
//! continuous-time Markov chain solved here: M/M/1 with exponential
//! patience (reneging), M/M/c with balking, and an open queue whose
//! clients time out, are refused when it is full, and retry after an
//! exponential backoff (a chain on jobs at the server, whether the job in
//! service is still wanted, and clients waiting to retry).
//!
//! Tolerance: `assert_close`, the 95% interval widened to 99.9% (Student t
//! over the replications), plus a guard that the interval is narrow enough
//! to test anything.

use crate::support::{assert_close, mean_of, model, qsim, qsim_json, run};
use qsim_kernel::overload_names::*;
use qsim_kernel::{Estimate, MetricScope, RunResults, metrics};

/// [`assert_close`], printing the figures compared (`--nocapture`).
fn close(label: &str, sim: Estimate, exact: f64, reps: u32, bias: f64, max_rel_ci: f64) {
    eprintln!(
        "{label}: simulated {} ± {}, exact {exact}",
        sim.mean, sim.ci95
    );
    assert_close(label, sim, exact, reps, bias, max_rel_ci);
}

/// The metrics that only models with client or overload behaviour report
/// (tests/it/names.rs leaves them to the test below).
pub const OVERLOAD_METRICS: [&str; 10] = [
    GOODPUT_PER_S,
    ATTEMPTS_PER_INTERACTION,
    TIMEOUT_PROBABILITY,
    FAILURE_PROBABILITY,
    BREAKER_OPEN_FRACTION,
    FAST_FAILED_FRACTION,
    ABANDONMENT_PROBABILITY,
    BALKING_PROBABILITY,
    SHED_PROBABILITY,
    WASTED_WORK_FRACTION,
];

#[test]
fn every_overload_metric_is_in_the_table_json_and_csv() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("clients");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("overload.toml");
    std::fs::write(
        &path,
        r#"
[simulation]
# Three replications: with two, the mixed-run detector has no spread
# within a group to judge a gap by, and a 20% gap between two short,
# noisy replications splits them into two modes (the JSON then has
# `modes` instead of one `classes`); this test is about the metrics.
replications = 3
seed = 3
stop = { jobs = 3000 }

[workload]
type = "open"
rate_per_s = 0.9
route = ["server"]

[workload.client]
timeout = { dist = "deterministic", mean = 3 }
max_attempts = 3
backoff_base_s = 0.5
backoff_jitter = 1
retry_budget = 0.5
breaker_window = 20
breaker_failure_ratio = 0.5
breaker_cool_down_s = 2

[stations.server]
kind = "queue"
service = { dist = "exponential", mean = 1 }
patience = { dist = "exponential", mean = 20 }
balk_at = 12
shed_after_s = 10
"#,
    )
    .unwrap();
    let path = path.to_str().unwrap();
    let out = qsim(&["run", path, "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let csv = qsim(&["run", path, "--format", "csv"]);
    let csv = String::from_utf8(csv.stdout).unwrap();
    let table = qsim(&["run", path]);
    let table = String::from_utf8(table.stdout).unwrap();
    for name in OVERLOAD_METRICS {
        let m = metrics(MetricScope::Class)
            .chain(metrics(MetricScope::Station))
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("{name} is not in the metric table"));
        let item = match m.scope {
            MetricScope::Class => &v["classes"]["default"],
            _ => &v["stations"]["server"],
        };
        let e = &item[name];
        assert!(
            e["mean"].is_number(),
            "{name} missing from the JSON: {item}"
        );
        assert!(
            csv.lines().any(|l| l.split(',').nth(2) == Some(name)),
            "{name} missing from the CSV:\n{csv}"
        );
        assert!(
            table.contains(m.label),
            "{name}'s label {} missing from the table:\n{table}",
            m.label
        );
    }
}

/// The stationary distribution of a birth-death chain on 0..=n_max with
/// birth rates `birth(n)` and death rates `death(n)` (n >= 1).
fn birth_death(
    n_max: usize,
    birth: impl Fn(usize) -> f64,
    death: impl Fn(usize) -> f64,
) -> Vec<f64> {
    let mut p = vec![1.0];
    for n in 1..=n_max {
        let prev = p[n - 1];
        p.push(prev * birth(n - 1) / death(n));
    }
    let total: f64 = p.iter().sum();
    p.iter().map(|x| x / total).collect()
}

/// The stationary distribution of a CTMC given by its rates `q[i][j]`
/// (i != j): pi Q = 0 with sum pi = 1, by Gaussian elimination with
/// partial pivoting (the last balance equation replaced by the sum).
fn stationary(q: &[Vec<f64>]) -> Vec<f64> {
    let n = q.len();
    // a x = b with a = Q^T, its last row all ones.
    let mut a = vec![vec![0.0; n + 1]; n];
    for i in 0..n {
        let out: f64 = (0..n).filter(|&j| j != i).map(|j| q[i][j]).sum();
        for (j, row) in a.iter_mut().enumerate() {
            row[i] = if i == j { -out } else { q[i][j] };
        }
    }
    for x in a[n - 1].iter_mut().take(n) {
        *x = 1.0;
    }
    a[n - 1][n] = 1.0;
    for col in 0..n {
        let piv = (col..n)
            .max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))
            .unwrap();
        a.swap(col, piv);
        let pivot_row = a[col].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != col && row[col] != 0.0 {
                let f = row[col] / pivot_row[col];
                for (x, v) in row.iter_mut().zip(&pivot_row).skip(col) {
                    *x -= f * v;
                }
            }
        }
    }
    (0..n).map(|i| a[i][n] / a[i][i]).collect()
}

fn station_figure(
    r: &RunResults,
    f: impl Fn(&qsim_kernel::OverloadResults) -> Option<Estimate>,
) -> Estimate {
    f(r.stations[0].overload.as_deref().expect("overload figures")).expect("the figure applies")
}

#[test]
fn mm1_with_exponential_patience_matches_its_birth_death_chain() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.5-1.6% of the exact values, so a bias of about 1.6% fails
    // in every figure; the guards (at most 1.2% of the exact value, about 1.5 x
    // the widest measured) allow at most 2.5%.
    // Overloaded (lambda > mu): patience alone keeps the queue finite.
    let (lambda, mu, theta) = (1.2, 1.0, 0.5);
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
patience = {{ dist = "exponential", mean = {} }}
"#,
            1.0 / mu,
            1.0 / theta
        ),
        &[],
    );
    let r = run(&m, 10, 40_000, 2_000);
    // n jobs present: served at mu, the n - 1 waiting renege at theta each.
    let pi = birth_death(300, |_| lambda, |n| mu + (n as f64 - 1.0) * theta);
    let abandon: f64 = pi
        .iter()
        .enumerate()
        .skip(1)
        .map(|(n, p)| p * (n as f64 - 1.0) * theta)
        .sum::<f64>()
        / lambda;
    // A tagged arrival that finds n present (PASTA) waits behind k = n
    // jobs; it leaves that state at mu + k theta: to k - 1 (a service or a
    // reneging ahead of it) or it reneges itself. p[k]: it is served;
    // w[k]: E[wait; served].
    let (mut p, mut w) = (vec![1.0], vec![0.0]);
    for k in 1..300 {
        let out = mu + k as f64 * theta;
        let on = (mu + (k as f64 - 1.0) * theta) / out;
        p.push(on * p[k - 1]);
        w.push(on * (p[k - 1] / out + w[k - 1]));
    }
    let served: f64 = pi.iter().zip(&p).map(|(a, b)| a * b).sum();
    let wait_served = pi.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() / served;
    let mean_jobs: f64 = pi.iter().enumerate().map(|(n, p)| n as f64 * p).sum();
    // The two ways of counting those who leave agree.
    assert!(
        (abandon - (1.0 - served)).abs() < 1e-9,
        "{abandon} vs {}",
        1.0 - served
    );
    let ab = station_figure(&r, |o| o.abandonment_probability);
    close("M/M/1+M abandonment", ab, abandon, 10, 0.0, 0.012);
    close(
        "M/M/1+M wait of the served",
        r.stations[0].wait_time_s,
        wait_served,
        10,
        0.0,
        0.012,
    );
    close(
        "M/M/1+M mean jobs",
        r.stations[0].mean_jobs,
        mean_jobs,
        10,
        0.0,
        0.012,
    );
    close(
        "M/M/1+M throughput",
        r.system.throughput_per_s,
        lambda * (1.0 - abandon),
        10,
        0.0,
        0.012,
    );
}

#[test]
fn mmc_with_balking_matches_its_birth_death_chain() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.2-1.2% of the exact values, so a bias of about 1.2% fails
    // in every figure; the guards (at most 0.9% of the exact value, about 1.5 x
    // the widest measured) allow at most 1.9%.
    let (lambda, c) = (2.5, 2usize);
    let b = [0.0, 0.0, 0.3, 0.6, 0.8, 1.0];
    let m = model(
        &format!(
            r#"
[workload]
type = "open"
rate_per_s = {lambda}
route = ["server"]

[stations.server]
kind = "queue"
servers = {c}
service = {{ dist = "exponential", mean = 1.0 }}
balk_probabilities = [0.0, 0.0, 0.3, 0.6, 0.8, 1.0]
"#
        ),
        &[],
    );
    let r = run(&m, 10, 60_000, 2_000);
    let bn = |n: usize| b[n.min(b.len() - 1)];
    let pi = birth_death(b.len(), |n| lambda * (1.0 - bn(n)), |n| n.min(c) as f64);
    let balk: f64 = pi.iter().enumerate().map(|(n, p)| p * bn(n)).sum();
    let mean_jobs: f64 = pi.iter().enumerate().map(|(n, p)| n as f64 * p).sum();
    let bk = station_figure(&r, |o| o.balking_probability);
    close("M/M/2 balking probability", bk, balk, 10, 0.0, 0.009);
    close(
        "M/M/2 balking mean jobs",
        r.stations[0].mean_jobs,
        mean_jobs,
        10,
        0.0,
        0.009,
    );
    close(
        "M/M/2 balking throughput",
        r.system.throughput_per_s,
        lambda * (1.0 - balk),
        10,
        0.0,
        0.009,
    );
    // balk_at = k is the M/M/c/k loss queue.
    let m = model(
        &format!(
            r#"
[workload]
type = "open"
rate_per_s = {lambda}
route = ["server"]

[stations.server]
kind = "queue"
servers = {c}
service = {{ dist = "exponential", mean = 1.0 }}
balk_at = 4
"#
        ),
        &[],
    );
    let r = run(&m, 10, 60_000, 2_000);
    let exact = qsim_analytic::single::mmck(lambda, 1.0, c as u32, 4).unwrap();
    let bk = station_figure(&r, |o| o.balking_probability);
    close(
        "M/M/2 balk_at 4",
        bk,
        exact.loss_probability,
        10,
        0.0,
        0.009,
    );
}

#[test]
fn retries_after_timeouts_and_refusals_match_their_markov_chain() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.6-1.3% of the exact values, so a bias of about 1.3% fails
    // in every figure; the guards (at most 1% of the exact value, about 1.5 x
    // the widest measured) allow at most 2.1%.
    // One server (mu), room for K; clients give up after an exponential
    // timeout (tau), cancelling a request still queued (one in service
    // goes on, wasted); a timed-out or refused attempt is retried with
    // probability p after an exponential backoff (nu).
    let (lambda, mu, k, tau, p, nu) = (0.8, 1.0, 3usize, 0.5, 0.6, 2.0);
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
retry_probability = {p}
backoff = {{ dist = "exponential", mean = {} }}

[stations.server]
kind = "queue"
service = {{ dist = "exponential", mean = {} }}
capacity = {k}
when_full = "drop"
"#,
            1.0 / tau,
            1.0 / nu,
            1.0 / mu
        ),
        &[],
    );
    let r = run(&m, 10, 40_000, 2_000);
    // States (n, o, m): n jobs at the server, o = 1 when the one in
    // service is an orphan, m clients backing off (truncated at m_max).
    let m_max = 60;
    let idx = |n: usize, o: usize, m: usize| (n * 2 + o) * (m_max + 1) + m;
    let size = (k + 1) * 2 * (m_max + 1);
    let mut q = vec![vec![0.0; size]; size];
    let mut add = |from: usize, to: usize, rate: f64| {
        if from != to && rate > 0.0 {
            q[from][to] += rate;
        }
    };
    for n in 0..=k {
        for o in 0..2 {
            for m in 0..=m_max {
                let s = idx(n, o, m);
                if o == 1 && n == 0 {
                    // Not a state: it leaves at once, so its probability is 0.
                    add(s, idx(0, 0, m), 1.0);
                    continue;
                }
                let up = (m + 1).min(m_max);
                // A new attempt: joins, or is refused and retried (p).
                let attempt =
                    |rate: f64, add: &mut dyn FnMut(usize, usize, f64), leaving: usize| {
                        if n < k {
                            add(s, idx(n + 1, o, leaving), rate);
                        } else {
                            add(s, idx(n, o, (leaving + 1).min(m_max)), rate * p);
                            add(s, idx(n, o, leaving), rate * (1.0 - p));
                        }
                    };
                attempt(lambda, &mut add, m);
                if m > 0 {
                    attempt(m as f64 * nu, &mut add, m - 1);
                }
                if n > 0 {
                    // Service: the next job in service is wanted.
                    add(s, idx(n - 1, 0, m), mu);
                    // Timeouts of the n - 1 waiting: cancelled.
                    let w = (n - 1) as f64 * tau;
                    add(s, idx(n - 1, o, up), w * p);
                    add(s, idx(n - 1, o, m), w * (1.0 - p));
                    if o == 0 {
                        // The one in service: its work goes on, wasted.
                        add(s, idx(n, 1, up), tau * p);
                        add(s, idx(n, 1, m), tau * (1.0 - p));
                    }
                }
            }
        }
    }
    let pi = stationary(&q);
    let (mut x, mut busy, mut wasted, mut orbit, mut timeouts, mut tail) =
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for n in 0..=k {
        for o in 0..2 {
            for m in 0..=m_max {
                let v = pi[idx(n, o, m)];
                if n > 0 {
                    busy += v;
                    if o == 0 {
                        x += mu * v;
                        timeouts += tau * v;
                    } else {
                        wasted += v;
                    }
                    timeouts += (n - 1) as f64 * tau * v;
                }
                orbit += m as f64 * v;
                if m == m_max {
                    tail += v;
                }
            }
        }
    }
    assert!(tail < 1e-12, "the truncation at {m_max} matters: {tail}");
    let attempts = lambda + nu * orbit;
    let c = r.classes[0].client.as_ref().expect("client figures");
    close(
        "retry throughput",
        r.system.throughput_per_s,
        x,
        10,
        0.0,
        0.01,
    );
    close("retry goodput", c.goodput_per_s, x, 10, 0.0, 0.01);
    close(
        "attempts per interaction",
        c.attempts_per_interaction,
        attempts / lambda,
        10,
        0.0,
        0.01,
    );
    close(
        "timeout probability",
        c.timeout_probability,
        timeouts / attempts,
        10,
        0.0,
        0.01,
    );
    close(
        "failure probability",
        c.failure_probability,
        1.0 - x / lambda,
        10,
        0.0,
        0.01,
    );
    let w = station_figure(&r, |o| o.wasted_work_fraction);
    close("wasted work", w, wasted / busy, 10, 0.0, 0.01);
}

#[test]
fn mm1_retrial_queue_response_matches_its_closed_form() {
    // The M/M/1 retrial queue: one server (mu) with no room to wait, so
    // an attempt that finds it busy is refused and its client always
    // retries after an exponential backoff (theta per client waiting to
    // retry; qsim wants a bound on the attempts, and 1000 are never
    // reached where an interaction makes 2.1 on average). Its orbit
    // (clients waiting to retry) has the closed-form mean
    // E[R] = rho^2 / (1 - rho) + lambda rho / (theta (1 - rho)) (Falin and
    // Templeton's M/G/1 retrial queue with exponential service; a truncated
    // chain on (server busy, R) gives the same to 1e-15), so by Little's
    // law an interaction takes
    // E[T] = 1/mu + E[R] / lambda = 1/mu + rho / (1 - rho) (1/mu + 1/theta)
    // and makes 1 + theta E[R] / lambda attempts. With a mean backoff nine
    // times the service, 9/11 of E[T] is backoff. Tolerance: the 99.9%
    // interval (Student t, 10 replications, 2.1 times the 95% one) with a
    // 1% width guard on the 95% half-width. Measured half-widths (95%):
    // 0.4% of E[T], 0.3% of the attempts, 0.2% of the goodput, so a bias
    // of about 0.9% in E[T] (a backoff 1.1% off) fails; at the guard's
    // limit, 2.1% (a backoff 2.6% off).
    let (lambda, mu, backoff) = (0.5f64, 1.0f64, 9.0f64);
    let m = model(
        &format!(
            r#"
[workload]
type = "open"
rate_per_s = {lambda}
route = ["server"]

[workload.client]
max_attempts = 1000
backoff = {{ dist = "exponential", mean = {backoff} }}

[stations.server]
kind = "queue"
service = {{ dist = "exponential", mean = {} }}
capacity = 1
when_full = "drop"
"#,
            1.0 / mu
        ),
        &[],
    );
    let r = run(&m, 10, 200_000, 20_000);
    let (rho, theta) = (lambda / mu, 1.0 / backoff);
    let orbit = rho * rho / (1.0 - rho) + lambda * rho / (theta * (1.0 - rho));
    close(
        "retrial queue: mean response",
        mean_of(&r.system.response_time_s),
        1.0 / mu + orbit / lambda,
        10,
        0.0,
        0.01,
    );
    let c = r.classes[0].client.as_ref().expect("client figures");
    close(
        "retrial queue: attempts per interaction",
        c.attempts_per_interaction,
        1.0 + theta * orbit / lambda,
        10,
        0.0,
        0.01,
    );
    close(
        "retrial queue: goodput",
        c.goodput_per_s,
        lambda,
        10,
        0.0,
        0.01,
    );
}

/// A model's text with `client` lines in its `[workload.client]` table
/// (line 6 on) and `station` lines in its station.
fn with_client(client: &str, station: &str) -> String {
    format!(
        "[workload]\ntype = \"open\"\nrate_per_s = 1\nroute = [\"s\"]\n\n[workload.client]\n{client}\n\n[stations.s]\n{station}\nservice = {{ dist = \"exponential\", mean = 0.5 }}\n"
    )
}

#[test]
fn bad_client_and_overload_keys_are_refused_where_they_are() {
    let cases = [
        (
            with_client("max_attempts = 0", "kind = \"queue\""),
            "bad.toml:7:16: workload.client.max_attempts",
        ),
        (
            with_client("retry_probability = 1.5", "kind = \"queue\""),
            "bad.toml:7:21: workload.client.retry_probability",
        ),
        (
            with_client("backoff_base_s = 0.1", "kind = \"queue\""),
            "bad.toml:7:18: workload.client.backoff_base_s: backoff_base_s applies to retries",
        ),
        (
            with_client("on_timeout = \"drop\"", "kind = \"queue\""),
            "bad.toml:7:14: workload.client.on_timeout",
        ),
        (
            with_client(
                "timeout = { dist = \"exponential\", mean = 1 }\non_timeout = \"cancel\"",
                "kind = \"latch\"",
            ),
            "bad.toml:8:14: workload.client.on_timeout: on_timeout = \"cancel\" takes a request out of a fixed-speed queue; station s is a latch",
        ),
        (
            with_client(
                "max_attempts = 2",
                "kind = \"queue\"\ndiscipline = \"ps\"\npatience = { dist = \"exponential\", mean = 1 }",
            ),
            "bad.toml:10:8: stations.s.kind: patience, balking, shedding and adaptive LIFO apply to a queue station at a fixed speed",
        ),
        (
            with_client(
                "max_attempts = 2",
                "kind = \"queue\"\nbalk_at = 3\nbalk_probabilities = [0.5]",
            ),
            "bad.toml:12:22: stations.s.balk_probabilities: expected one way of balking",
        ),
        (
            with_client("max_attempts = 2", "kind = \"queue\"\nshed_after_s = -1"),
            "bad.toml:11:16: stations.s.shed_after_s",
        ),
    ];
    for (text, expected) in cases {
        let e = match qsim_model::load_str("bad.toml", &text, &[]) {
            Ok(_) => panic!("accepted:\n{text}"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains(expected),
            "expected `{expected}` in:\n{e}\nfor:\n{text}"
        );
    }
}

/// Cancelling at two latches is one error naming both, not one per latch.
#[test]
fn cancel_at_several_latches_is_one_error() {
    let text = "[workload]\ntype = \"open\"\nrate_per_s = 1\nroute = [\"a\", \"b\"]\n\n[workload.client]\ntimeout = { dist = \"exponential\", mean = 1 }\non_timeout = \"cancel\"\n\n[stations.a]\nkind = \"latch\"\nservice = { dist = \"exponential\", mean = 0.1 }\n\n[stations.b]\nkind = \"latch\"\nservice = { dist = \"exponential\", mean = 0.1 }\n";
    let e = match qsim_model::load_str("bad.toml", text, &[]) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("stations a, b are latches or have speed curves"),
        "{e}"
    );
    assert_eq!(e.matches("on_timeout = \"cancel\" takes").count(), 1, "{e}");
}

#[test]
fn a_job_counted_run_ends_when_every_interaction_fails() {
    // Every attempt times out (0.01 s) before its 0.5 s service ends, and
    // clients do not retry: goodput is exactly 0 and every interaction
    // fails. `--jobs` counts ended interactions, failures included, so 2000
    // of them end the run after about 2000 s of arrivals at 1/s (about
    // 8000 events: arrival, timeout, start and end of the orphaned
    // service). Counting successes only, the run would never end: the event
    // limit below turns that into an error instead of a hang.
    let m = model(
        r#"
[workload]
type = "open"
rate_per_s = 1
route = ["server"]

[workload.client]
timeout = { dist = "deterministic", mean = 0.01 }
max_attempts = 1

[stations.server]
kind = "queue"
service = { dist = "deterministic", mean = 0.5 }
"#,
        &[],
    );
    let config = qsim_kernel::RunConfig {
        seed: 7,
        replications: 2,
        stop: qsim_kernel::Stop::Jobs(2000),
        warmup: qsim_kernel::Warmup::Jobs(100),
        max_events: 1_000_000,
        ..m.run.clone()
    };
    let r = qsim_kernel::run(&m.network, &config).expect("the run ends");
    let c = r.classes[0].client.as_ref().expect("client figures");
    assert_eq!(c.failure_probability.mean, 1.0);
    assert_eq!(c.goodput_per_s.mean, 0.0);
    assert_eq!(r.system.throughput_per_s.mean, 0.0);
}

#[test]
fn latch_retry_claims_hold() {
    // models/latch_retry.toml's header. The fast state: no attempt times
    // out there (its p99 is far below the 30 ms timeout), so it is the
    // closed latch alone, a birth-death chain on the threads at the latch
    // (think rate (N - n)/Z in, the curve's rate r(n) out), solved here.
    // 99.9% interval over 10 replications (t) with a 3% width guard: the
    // half-width is about 1%, so a bias of about 2.5% is caught. The collapsed state: bistable, with its queue growing
    // ("not steady"); a 0.5 s timeout: one operating point.
    let (n, z) = (100usize, 0.15f64);
    let rate = |k: usize| match k {
        0..=50 => 1000.0,
        51..=99 => 1000.0 - (k - 50) as f64 * 19.0,
        _ => 50.0,
    };
    let (mut p, mut sum, mut x) = (1.0f64, 1.0f64, 0.0f64);
    for k in 1..=n {
        p *= ((n - k + 1) as f64 / z) / rate(k);
        sum += p;
        x += p * rate(k);
    }
    let exact = x / sum;
    let v = qsim_json(&[
        "run",
        "models/latch_retry.toml",
        "--replications",
        "10",
        "--format",
        "json",
    ]);
    let sim = Estimate {
        mean: v["system"]["throughput_per_s"]["mean"].as_f64().unwrap(),
        ci95: v["system"]["throughput_per_s"]["ci95"].as_f64().unwrap(),
    };
    close("latch_retry: fast state", sim, exact, 10, 0.0, 0.03);
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("the model is bistable") && warnings.contains("not steady"),
        "{warnings}"
    );
    let out = qsim(&[
        "run",
        "models/latch_retry.toml",
        "--set",
        "workload.client.timeout={dist=\"deterministic\",mean=0.5}",
    ]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("one operating point"), "{text}");
}
