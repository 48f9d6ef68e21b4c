//! Finite capacity (`capacity`, `when_full`) against exact answers: M/M/1/K,
//! Erlang B (M/M/c/c), and a finite-source loss queue (closed class whose
//! lost jobs go back to think).

use crate::support::{assert_close, mean_of, model, qsim, run};
use qsim_analytic::single;

fn open_finite(rate: f64, servers: u32, capacity: u32) -> String {
    format!(
        r#"
[workload]
type = "open"
rate_per_s = {rate}
route = ["server"]

[stations.server]
kind = "queue"
servers = {servers}
service = {{ dist = "exponential", mean = 1.0 }}
capacity = {capacity}
when_full = "drop"
"#
    )
}

#[test]
fn mm1k_overloaded_matches_exact_loss_jobs_and_throughput() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.3-0.9% of the exact values, so a bias of about 0.9% fails;
    // the guards (at most 0.7% of the exact value, about 1.5 x the widest
    // measured) allow at most 1.5%.
    // rho = 1.5: an infinite queue would grow for ever; K = 4 keeps it finite.
    let m = model(&open_finite(1.5, 1, 4), &[]);
    let r = run(&m, 10, 100_000, 5_000);
    let exact = single::mmck(1.5, 1.0, 1, 4).unwrap();
    let st = &r.stations[0];
    let loss = st
        .loss_probability
        .expect("a finite station reports its loss");
    assert_close("M/M/1/4 loss", loss, exact.loss_probability, 10, 0.0, 0.007);
    let dropped = st.dropped_per_s.expect("and its losses per second");
    assert_close(
        "M/M/1/4 dropped per second",
        dropped,
        1.5 * exact.loss_probability,
        10,
        0.0,
        0.007,
    );
    assert_close(
        "M/M/1/4 mean jobs",
        st.mean_jobs,
        exact.mean_jobs,
        10,
        0.0,
        0.007,
    );
    assert_close(
        "M/M/1/4 throughput",
        r.system.throughput_per_s,
        exact.throughput_per_s,
        10,
        0.0,
        0.007,
    );
    // The response time is that of the completed (admitted) jobs.
    assert_close(
        "M/M/1/4 response",
        mean_of(&r.system.response_time_s),
        exact.response_time_s,
        10,
        0.0,
        0.007,
    );
}

#[test]
fn erlang_b_blocking_from_a_plain_model() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 1.3% (blocking) and 0.25% (utilization), so biases of about
    // those sizes fail; the guards (at most 0.9% of the exact value, about 1.5
    // x the widest measured) allow at most 1.9%.
    // M/M/5/5 offered 4 erlangs: no waiting room, blocking B(5, 4).
    let m = model(&open_finite(4.0, 5, 5), &[]);
    let r = run(&m, 10, 100_000, 5_000);
    let b = single::erlang_b(5, 4.0).unwrap();
    let st = &r.stations[0];
    let loss = st.loss_probability.unwrap();
    assert_close("Erlang B(5, 4) blocking", loss, b, 10, 0.0, 0.009);
    // Nobody waits in a loss system.
    assert_eq!(st.wait_time_s.mean, 0.0);
    assert_close(
        "M/M/5/5 utilization",
        st.utilization,
        4.0 * (1.0 - b) / 5.0,
        10,
        0.0,
        0.009,
    );
}

#[test]
fn closed_class_lost_jobs_think_again_finite_source_chain() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.2-0.34% of the exact values, so a bias of about 0.35%
    // fails; the guards (at most 0.3% of the exact value, about 1.5 x the
    // widest measured) allow at most 0.6%.
    // N = 6 users thinking 2 s (exponential) in front of an M/M/1/3 queue:
    // with n at the station, N - n think, so arrivals come at (N - n)/Z while
    // n < K, a birth-death chain; a lost job thinks again.
    let text = r#"
[workload]
type = "closed"
population = 6
think = { dist = "exponential", mean = 2.0 }
route = ["server"]

[stations.server]
kind = "queue"
service = { dist = "exponential", mean = 1.0 }
capacity = 3
when_full = "drop"
"#;
    let m = model(text, &[]);
    let r = run(&m, 10, 100_000, 5_000);
    let (n_users, z, k) = (6.0, 2.0, 3usize);
    let mut p = vec![1.0];
    for n in 1..=k {
        let up = (n_users - (n - 1) as f64) / z;
        p.push(p[n - 1] * up / 1.0);
    }
    let total: f64 = p.iter().sum();
    p.iter_mut().for_each(|x| *x /= total);
    let arrivals: Vec<f64> = (0..=k).map(|n| (n_users - n as f64) / z * p[n]).collect();
    let offered: f64 = arrivals.iter().sum();
    let loss = arrivals[k] / offered;
    let throughput = offered - arrivals[k];
    let mean_jobs: f64 = p.iter().enumerate().map(|(n, q)| n as f64 * q).sum();
    let st = &r.stations[0];
    assert_close(
        "finite source loss",
        st.loss_probability.unwrap(),
        loss,
        10,
        0.0,
        0.003,
    );
    assert_close(
        "finite source throughput",
        r.system.throughput_per_s,
        throughput,
        10,
        0.0,
        0.003,
    );
    assert_close(
        "finite source mean jobs",
        st.mean_jobs,
        mean_jobs,
        10,
        0.0,
        0.003,
    );
}

#[test]
fn capacity_rules_are_located_errors() {
    let dir = std::env::temp_dir().join(format!("qsim-capacity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.toml");
    std::fs::write(&path, open_finite(1.0, 2, 1)).unwrap();
    let out = qsim(&["check", path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains(
            "m.toml:11:12: stations.server.capacity: expected a capacity >= servers (2), found 1"
        ),
        "{err}"
    );
    // A closed class without a think time would retry a lost job at the
    // same instant for ever.
    let text = r#"
[workload]
type = "closed"
population = 3
route = ["server"]

[stations.server]
kind = "queue"
service = { dist = "exponential", mean = 1.0 }
capacity = 2
"#;
    std::fs::write(&path, text).unwrap();
    let out = qsim(&["check", path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("stations.server.capacity: closed class"),
        "{err}"
    );
    assert!(err.contains("give the class a think time"), "{err}");
    // when_full without a capacity.
    let text = open_finite(1.0, 1, 2).replace("capacity = 2\n", "");
    std::fs::write(&path, text).unwrap();
    let out = qsim(&["check", path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("stations.server.when_full: when_full applies"),
        "{err}"
    );
    // PS is not supported.
    let text = open_finite(0.5, 1, 2).replace("servers = 1", "servers = 1\ndiscipline = \"ps\"");
    std::fs::write(&path, text).unwrap();
    let out = qsim(&["check", path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("capacity is supported on fixed-speed queue"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn solve_prints_exact_mmck_and_erlang_b_and_nothing_it_cannot_know() {
    let dir = std::env::temp_dir().join(format!("qsim-capacity-solve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.toml");
    let p = path.to_str().unwrap();
    std::fs::write(&path, open_finite(1.5, 1, 4)).unwrap();
    let out = qsim(&["solve", p, "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let exact = single::mmck(1.5, 1.0, 1, 4).unwrap();
    assert_eq!(v["method"], "M/M/1/4 at station server");
    let loss = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "stations.server.loss_probability")
        .and_then(|r| r["analytic"].as_f64())
        .expect("solve reports the loss probability");
    assert!((loss - exact.loss_probability).abs() < 1e-12, "{loss}");
    // K = c: Erlang B.
    std::fs::write(&path, open_finite(4.0, 5, 5)).unwrap();
    let out = qsim(&["solve", p]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Erlang B (M/M/5/5)"), "{text}");
    let b = single::erlang_b(5, 4.0).unwrap();
    assert!(text.contains(&format!("{b:.6}")), "{text}");
    // A second station after the finite one: no exact method, and no
    // Jackson figures that would ignore the losses.
    let two = open_finite(1.5, 1, 4).replace(
        "route = [\"server\"]",
        "route = [\"server\", \"disk\"]\n\n[stations.disk]\nkind = \"queue\"\nservice = { dist = \"exponential\", mean = 0.5 }",
    );
    std::fs::write(&path, two).unwrap();
    let out = qsim(&["solve", p]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("outside the exact methods"), "{text}");
    assert!(text.contains("station server: finite capacity 4"), "{text}");
    // A closed class: the bounds do not allow for lost jobs, so none.
    let closed = r#"
[workload]
type = "closed"
population = 6
think = { dist = "exponential", mean = 2.0 }
route = ["server"]

[stations.server]
kind = "queue"
service = { dist = "exponential", mean = 1.0 }
capacity = 3
"#;
    std::fs::write(&path, closed).unwrap();
    let out = qsim(&["solve", p]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("no bounds"), "{text}");
    assert!(!text.contains("throughput  <="), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn station_tails_match_mm1_and_jackson_tandem() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.5-4.3% of the exact values (the p99 wait and the variance
    // of n, widest; quantiles with 1% for the buckets), so a bias of about 4.3%
    // fails in every figure; the guards (at most 3% of the exact value, about
    // 1.5 x the widest measured) allow at most 7.3%.
    // M/M/1 (mu 1) then M/M/1 (mu 2) at lambda 0.7: by Jackson each
    // station is an M/M/1 of its own, so its wait W has P(W > t) =
    // rho e^{-mu(1-rho)t}, its time R is exponential with rate mu - lambda,
    // P(n >= k) = rho^k and Var n = rho/(1-rho)^2.
    let text = r#"
[simulation]
station_tails = true
jobs_tail_k = 3

[workload]
type = "open"
rate_per_s = 0.7
route = ["first", "second"]

[stations.first]
kind = "queue"
service = { dist = "exponential", mean = 1.0 }

[stations.second]
kind = "queue"
service = { dist = "exponential", mean = 0.5 }
"#;
    let m = model(text, &[]);
    let r = run(&m, 10, 200_000, 10_000);
    let lambda = 0.7;
    for (i, mu) in [(0usize, 1.0f64), (1, 2.0)] {
        let rho = lambda / mu;
        let t = r.stations[i]
            .tails
            .as_ref()
            .expect("station tails were asked for");
        let name = &r.stations[i].name;
        let label = |what: &str| format!("{name} {what}");
        assert_close(
            &label("P(wait > 0)"),
            t.wait_probability,
            rho,
            10,
            0.0,
            0.02,
        );
        assert_close(
            &label("P(n >= 3)"),
            t.jobs_tail_probability,
            rho.powi(3),
            10,
            0.0,
            0.03,
        );
        assert_close(
            &label("variance of n"),
            t.jobs_variance,
            rho / (1.0 - rho).powi(2),
            10,
            0.0,
            0.03,
        );
        // Wait quantile q (q > 1 - rho): ln(rho / (1 - q)) / (mu (1 - rho));
        // the histogram's buckets are at most 1% wide.
        let w = |q: f64| (rho / (1.0 - q)).ln() / (mu * (1.0 - rho));
        assert_close(
            &label("wait p90"),
            t.wait_time_p90_s,
            w(0.9),
            10,
            0.01,
            0.03,
        );
        assert_close(
            &label("wait p99"),
            t.wait_time_p99_s,
            w(0.99),
            10,
            0.01,
            0.03,
        );
        let resp = |q: f64| single::mm1_response_time_percentile_s(lambda, mu, q).unwrap();
        assert_close(
            &label("response p50"),
            t.response_time_p50_s,
            resp(0.5),
            10,
            0.01,
            0.03,
        );
        assert_close(
            &label("response p90"),
            t.response_time_p90_s,
            resp(0.9),
            10,
            0.01,
            0.03,
        );
    }
    // At the second station (rho 0.35) more than half the jobs do not wait:
    // the median wait is 0 (the histogram's lowest bucket, below 1e-9 s).
    let t = r.stations[1].tails.as_ref().unwrap();
    assert!(t.wait_time_p50_s.mean < 1e-8, "{:?}", t.wait_time_p50_s);
}

#[test]
fn wait_probability_is_erlang_c_at_mm3() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.9% of Erlang C, so a bias of about 0.9% fails; the guards
    // (at most 0.7% of the exact value, about 1.5 x the widest measured) allow
    // at most 1.5%.
    let text = r#"
[simulation]
station_tails = true

[workload]
type = "open"
rate_per_s = 2.4
route = ["server"]

[stations.server]
kind = "queue"
servers = 3
service = { dist = "exponential", mean = 1.0 }
"#;
    let m = model(text, &[]);
    let r = run(&m, 10, 200_000, 10_000);
    let c = single::erlang_c(3, 2.4).unwrap();
    let t = r.stations[0].tails.as_ref().unwrap();
    assert_close("M/M/3 P(wait > 0)", t.wait_probability, c, 10, 0.0, 0.007);
    // Without the key, no station tails are reported.
    let m = model(&text.replace("station_tails = true", ""), &[]);
    let r = run(&m, 2, 1_000, 100);
    assert!(r.stations[0].tails.is_none());
}

#[test]
fn per_class_sla_at_a_shared_fcfs_queue() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.8-2.4% of the exact probabilities, so a bias of about 2.4%
    // fails in every figure; the guards (at most 1.7% of the exact value, about
    // 1.5 x the widest measured) allow at most 3.6%.
    // Two Poisson classes (0.2/s and 0.4/s) share an exponential FCFS
    // server (mean 1 s): FCFS does not look at classes, so each class's
    // response time is that of the M/M/1 at lambda 0.6, exponential with
    // rate 0.4, and P(R > s) = e^{-0.4 s} for each class's own SLA s.
    let text = r#"
[simulation]
sla_s = 3.0

[classes.a]
type = "open"
rate_per_s = 0.2
route = ["server"]
sla_s = 2.0

[classes.b]
type = "open"
rate_per_s = 0.4
route = ["server"]
sla_s = 5.0

[stations.server]
kind = "queue"
service = { dist = "exponential", mean = 1.0 }
"#;
    let m = model(text, &[]);
    let r = run(&m, 10, 200_000, 10_000);
    let tail = |s: f64| (-0.4 * s).exp();
    let a = r.classes[0].sla_violation.expect("class a has an SLA");
    let b = r.classes[1].sla_violation.expect("class b has an SLA");
    assert_close("class a P(R > 2)", a, tail(2.0), 10, 0.0, 0.017);
    assert_close("class b P(R > 5)", b, tail(5.0), 10, 0.0, 0.017);
    let sys = r.system.sla_violation.expect("the system has an SLA");
    assert_close("system P(R > 3)", sys, tail(3.0), 10, 0.0, 0.017);
    let exact = single::mm1(0.6, 1.0).unwrap().response_time_s;
    for c in &r.classes {
        assert_close(&c.name, mean_of(&c.response_time_s), exact, 10, 0.0, 0.017);
    }
    // Without its own SLA a class is measured against the run's.
    let m = model(&text.replace("sla_s = 5.0\n", ""), &[]);
    let r = run(&m, 10, 200_000, 10_000);
    let b = r.classes[1].sla_violation.unwrap();
    assert_close("class b P(R > 3)", b, tail(3.0), 10, 0.0, 0.017);
}

#[test]
fn connection_pool_model_matches_mmck() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 4.4% (loss), 3.6% (P(n >= 16)) and 0.5% (mean jobs) of the
    // exact values, so biases of about those sizes fail; the guards (at most
    // 3.2% of the exact value, about 1.5 x the widest measured) allow at most
    // 6.8%.
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/connection_pool.toml"
    ));
    let m = qsim_model::load_file(path, &[]).expect("models/connection_pool.toml loads");
    let r = run(&m, 10, 200_000, 5_000);
    let exact = single::mmck(90.0, 1.0 / 0.08, 8, 16).unwrap();
    let st = &r.stations[0];
    assert_close(
        "pool loss",
        st.loss_probability.unwrap(),
        exact.loss_probability,
        10,
        0.0,
        0.032,
    );
    assert_close(
        "pool mean jobs",
        st.mean_jobs,
        exact.mean_jobs,
        10,
        0.0,
        0.02,
    );
    // Poisson arrivals see time averages: P(n >= 16) is the loss probability.
    let t = st.tails.as_ref().expect("the model keeps station tails");
    assert_close(
        "pool P(n >= 16)",
        t.jobs_tail_probability,
        exact.loss_probability,
        10,
        0.0,
        0.032,
    );
}
