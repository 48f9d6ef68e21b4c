//! Per-class figures at each station of a multi-class model against exact
//! answers (M/M/1 with two classes, multi-class PS, non-preemptive priority,
//! exact multi-class MVA), and the per-class figures adding up to the
//! station's.

use crate::support::{Toml, assert_close, model, open_pair, run};
use qsim_analytic::mva::{self, CenterKind, ClassedStation, ClosedClass};
use qsim_kernel::{Estimate, RunResults, StationClassResults, StationResults};

fn station<'a>(r: &'a RunResults, name: &str) -> &'a StationResults {
    r.stations.iter().find(|s| s.name == name).unwrap()
}

fn at<'a>(r: &'a RunResults, st: &str, class: &str) -> &'a StationClassResults {
    station(r, st)
        .classes
        .iter()
        .find(|c| c.name == class)
        .unwrap_or_else(|| panic!("no class {class} at {st}"))
}

/// Two open classes `a` (priority 1) and `b` at one single-server
/// station, each with its own arrival rate (`rates`) and service mean
/// (`means`).
fn open_two(discipline: &str, rates: [f64; 2], means: [f64; 2]) -> String {
    open_pair(["a", "b"], discipline, 1, rates, means).0
}

/// `assert_close` with no bias allowance over 10 replications, as the
/// per-class means here.
fn close(label: &str, sim: Estimate, exact: f64, max_rel_ci: f64) {
    assert_close(label, sim, exact, 10, 0.0, max_rel_ci);
}

/// In every replication, the per-class throughputs, mean jobs and
/// utilizations of each station that has them add up to the station's
/// (to rounding: both come from the same events).
fn assert_sums_match(r: &RunResults) {
    for rep in &r.replication_results {
        for (i, st) in rep.stations.iter().enumerate() {
            if st.classes.is_empty() {
                continue;
            }
            let close = |what: &str, parts: f64, total: f64| {
                assert!(
                    (parts - total).abs() <= 1e-9 * total.abs().max(1.0),
                    "{} {what}: classes add to {parts}, station {total}",
                    r.stations[i].name
                );
            };
            let sum = |f: fn(&qsim_kernel::ReplicationStationClass) -> f64| {
                st.classes.iter().map(f).sum::<f64>()
            };
            close(
                "throughput",
                sum(|c| c.throughput_per_s),
                st.throughput_per_s,
            );
            close("mean jobs", sum(|c| c.mean_jobs), st.mean_jobs);
            if r.stations[i]
                .classes
                .iter()
                .all(|c| c.utilization.is_some())
            {
                close("utilization", sum(|c| c.utilization), st.utilization);
            }
        }
    }
}

#[test]
fn two_class_fcfs_mm1_matches_the_pooled_mm1() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.4-2% of the exact per-class figures, so a bias of about 2%
    // fails in every figure; the guards (at most 1.5% of the exact value, about
    // 1.5 x the widest measured) allow at most 3.2%.
    // Same exponential service for both classes: the station is an M/M/1
    // with lambda = l1 + l2, and a job's class does not change its delay.
    let (l1, l2, mu) = (0.3, 0.4, 1.0);
    let m = model(&open_two("fcfs", [l1, l2], [1.0, 1.0]), &[]);
    let r = run(&m, 10, 200_000, 20_000);
    let rho = (l1 + l2) / mu;
    let resp = 1.0 / (mu - l1 - l2);
    let wait = rho / (mu - l1 - l2);
    for (class, l) in [("a", l1), ("b", l2)] {
        let c = at(&r, "server", class);
        let label = |what: &str| format!("M/M/1 two classes, class {class} {what}");
        close(&label("throughput"), c.throughput_per_s, l, 0.015);
        close(&label("response"), c.response_time_s, resp, 0.015);
        close(&label("wait"), c.wait_time_s, wait, 0.015);
        close(&label("mean jobs"), c.mean_jobs, l * resp, 0.015);
        let u = c.utilization.expect("a queue has a utilization per class");
        close(&label("utilization"), u, l / mu, 0.015);
        let v = c.visits.expect("one visit per interaction");
        close(&label("visits"), v, 1.0, 0.01);
    }
    assert_sums_match(&r);
}

#[test]
fn two_class_ps_response_is_service_over_one_minus_rho() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.75-2.4% of the exact per-class figures, so a bias of about
    // 2.4% fails in every figure; the guards (at most 1.8% of the exact value,
    // about 1.5 x the widest measured) allow at most 3.8%.
    // M/M/1-PS with class service means s1, s2: R_c = s_c / (1 - rho),
    // N_c = l_c R_c, and each class holds rho_c of the server.
    let (l, s) = ([0.6, 0.2], [0.5, 2.0]);
    let m = model(&open_two("ps", l, s), &[]);
    let r = run(&m, 10, 200_000, 20_000);
    let rho = l[0] * s[0] + l[1] * s[1];
    for (k, class) in ["a", "b"].into_iter().enumerate() {
        let c = at(&r, "server", class);
        let label = |what: &str| format!("two-class PS, class {class} {what}");
        let resp = s[k] / (1.0 - rho);
        close(&label("response"), c.response_time_s, resp, 0.018);
        close(&label("mean jobs"), c.mean_jobs, l[k] * resp, 0.018);
        let u = c
            .utilization
            .expect("a PS queue has a utilization per class");
        close(&label("utilization"), u, l[k] * s[k], 0.018);
        assert_eq!(c.wait_time_s.mean, 0.0, "PS serves every job at once");
    }
    assert_sums_match(&r);
}

#[test]
fn non_preemptive_priority_waits_follow_cobham() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.6-2.1% of Cobham's figures, so a bias of about 2.1% fails
    // in every figure; the guards (at most 1.5% of the exact value, about 1.5 x
    // the widest measured) allow at most 3.2%.
    // M/G/1 non-preemptive priority (Cobham): with W0 = sum l_i E[S_i^2]/2
    // the mean residual work, class k waits W0 / ((1 - s_{k-1})(1 - s_k)),
    // s_k the load of classes 1..=k. Exponential service of mean 1 gives
    // E[S^2] = 2, so W0 = rho. Class a has the higher priority.
    let (l1, l2) = (0.3, 0.4);
    let m = model(&open_two("priority", [l1, l2], [1.0, 1.0]), &[]);
    let r = run(&m, 10, 200_000, 20_000);
    let rho = l1 + l2;
    let w = [rho / (1.0 - l1), rho / ((1.0 - l1) * (1.0 - rho))];
    for (k, class) in ["a", "b"].into_iter().enumerate() {
        let c = at(&r, "server", class);
        let label = |what: &str| format!("priority M/M/1, class {class} {what}");
        let l = [l1, l2][k];
        close(&label("wait"), c.wait_time_s, w[k], 0.015);
        close(&label("response"), c.response_time_s, w[k] + 1.0, 0.015);
        close(&label("mean jobs"), c.mean_jobs, l * (w[k] + 1.0), 0.015);
    }
    assert_sums_match(&r);
}

#[test]
fn closed_two_class_network_matches_exact_mva_per_class_and_station() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.4-1.2% of exact multi-class MVA, so a bias of about 1.2%
    // fails in every figure; the guards (at most 0.9% of the exact value, about
    // 1.5 x the widest measured) allow at most 1.9%.
    // Product form: a PS cpu with class-dependent means, an FCFS disk with
    // one mean for both classes, a delay only class b visits. Class a
    // visits the cpu twice per interaction.
    let text = Toml::default()
        .closed("classes.a", 3, 1.0, &["cpu", "disk", "cpu"])
        .closed("classes.b", 2, 0.5, &["cpu", "net", "disk"])
        .station("cpu", "queue", 0.1)
        .with("discipline", "\"ps\"")
        .with(
            "service_by_class",
            "{ b = { dist = \"exponential\", mean = 0.15 } }",
        )
        .station("disk", "queue", 0.2)
        .station("net", "delay", 0.3);
    let m = model(text.text(), &[]);
    let r = run(&m, 10, 100_000, 10_000);
    let exact = mva::exact_multiclass(
        &[
            ClassedStation::new("cpu", CenterKind::Queue, vec![0.2, 0.15]),
            ClassedStation::new("disk", CenterKind::Queue, vec![0.2, 0.2]),
            ClassedStation::new("net", CenterKind::Delay, vec![0.0, 0.3]),
        ],
        &[ClosedClass::new("a", 3, 1.0), ClosedClass::new("b", 2, 0.5)],
    )
    .unwrap();
    for (s, name) in ["cpu", "disk", "net"].into_iter().enumerate() {
        for (k, class) in ["a", "b"].into_iter().enumerate() {
            let e = exact.stations[s].per_class[k];
            if e.mean_jobs == 0.0 {
                assert!(
                    station(&r, name).classes.iter().all(|c| c.name != class),
                    "class {class} never visits {name}"
                );
                continue;
            }
            let visits = if (name, class) == ("cpu", "a") {
                2.0
            } else {
                1.0
            };
            let x = exact.classes[k].throughput_per_s;
            let c = at(&r, name, class);
            let label = |what: &str| format!("closed MVA, class {class} at {name} {what}");
            close(&label("throughput"), c.throughput_per_s, x * visits, 0.009);
            close(&label("mean jobs"), c.mean_jobs, e.mean_jobs, 0.009);
            // MVA's residence is per interaction: visits times the mean
            // time of one visit.
            let visit_time = e.residence_time_s / visits;
            close(&label("response"), c.response_time_s, visit_time, 0.009);
            if name != "net" {
                let u = c.utilization.expect("queues have a utilization per class");
                close(&label("utilization"), u, e.utilization, 0.009);
            } else {
                assert!(c.utilization.is_none(), "a delay has no servers to share");
            }
            let v = c.visits.expect("visits per interaction");
            close(&label("visits"), v, visits, 0.009);
        }
    }
    assert_sums_match(&r);
}

#[test]
fn single_class_models_have_no_per_class_figures() {
    let text = Toml::default()
        .open("workload", 0.5, &["server"])
        .station("server", "queue", 1.0);
    let m = model(text.text(), &[]);
    let r = run(&m, 2, 2_000, 200);
    assert!(r.stations[0].classes.is_empty());
    assert!(r.replication_results[0].stations[0].classes.is_empty());
}

/// [`open_two`] with the station tails (and so the per-class percentiles)
/// kept.
fn open_two_tails(discipline: &str, rates: [f64; 2], means: [f64; 2]) -> String {
    open_two(discipline, rates, means) + "\n[simulation]\nstation_tails = true\n"
}

#[test]
fn two_class_fcfs_mm1_percentiles_per_class_are_exponential() {
    // FCFS M/M/1 with both classes served at rate mu: a job's time there
    // does not depend on its class, R ~ Exp(mu - lambda), so
    // R_p = -ln(1 - p) / (mu - lambda); the wait has the atom
    // P(W = 0) = 1 - rho and above it P(W > t) = rho e^{-(mu - lambda) t},
    // W_p = ln(rho / (1 - p)) / (mu - lambda) for p > 1 - rho.
    let (l1, l2, mu) = (0.3, 0.4, 1.0);
    let m = model(&open_two_tails("fcfs", [l1, l2], [1.0, 1.0]), &[]);
    let r = run(&m, 10, 200_000, 20_000);
    let (rate, rho) = (mu - l1 - l2, (l1 + l2) / mu);
    for class in ["a", "b"] {
        let t = at(&r, "server", class)
            .tails
            .clone()
            .expect("per-class percentiles kept with station tails");
        for (p, resp, wait) in [
            (0.5_f64, t.response_time_p50_s, t.wait_time_p50_s),
            (0.9, t.response_time_p90_s, t.wait_time_p90_s),
            (0.99, t.response_time_p99_s, t.wait_time_p99_s),
        ] {
            let label = |what: &str| format!("M/M/1 two classes, class {class} {what} p{p}");
            // The exact quantile within the 99.9% interval plus the 0.8%
            // bucket width; width guards of 5% (p50, p90) and 10% (p99) make
            // a bias of about 5% (p50, p90) and 10% (p99) fail.
            let guard = if p < 0.95 { 0.05 } else { 0.10 };
            let exact_r = -(1.0 - p).ln() / rate;
            let exact_w = (rho / (1.0 - p)).ln() / rate;
            println!(
                "class {class} p{p}: time {} ± {} (exact {exact_r}), wait {} ± {} (exact {exact_w})",
                resp.mean, resp.ci95, wait.mean, wait.ci95
            );
            assert_close(&label("time"), resp, exact_r, 10, 0.008, guard);
            assert_close(&label("wait"), wait, exact_w, 10, 0.008, guard);
        }
    }
}

#[test]
fn a_priority_class_wait_atom_at_zero_gives_a_p50_of_zero() {
    // Non-preemptive priority M/M/1: a job of either class that arrives
    // to an idle server starts at once, so P(W = 0) = 1 - rho (PASTA).
    // At rho = 0.4 the atom holds 60% of the waits, far enough above 50%
    // that every replication's median, and the pooled one with its
    // interval, are inside it: exactly 0, not a point of the atom's bucket.
    let m = model(&open_two_tails("priority", [0.2, 0.2], [1.0, 1.0]), &[]);
    let r = run(&m, 10, 50_000, 5_000);
    for class in ["a", "b"] {
        let t = at(&r, "server", class).tails.clone().unwrap();
        let p50 = t.wait_time_p50_s;
        assert_eq!((p50.mean, p50.ci95), (0.0, 0.0), "class {class} wait p50");
        for rep in &r.replication_results {
            let c = &rep.stations[0].classes[if class == "a" { 0 } else { 1 }];
            assert_eq!(c.tails.as_ref().unwrap().wait_time_s[0], 0.0);
        }
    }
    // JSON (and so CSV and the table, through the metric table) has 0.
    let json = serde_json::to_value(&r).unwrap();
    let p50 = &json["stations"]["server"]["classes"]["a"]["wait_time_p50_s"];
    assert_eq!(p50["mean"], 0.0, "{p50}");
}

#[test]
fn per_class_percentiles_are_kept_only_with_station_tails_where_a_class_goes() {
    // Without station tails no class keeps percentiles; with them, class b
    // (which never visits `a_only`) has none there and the budget counts
    // one (class, station) pair per class at each station it reaches.
    let text = |tails: bool| {
        Toml::default()
            .open("classes.a", 0.2, &["shared", "a_only"])
            .open("classes.b", 0.2, &["shared"])
            .station("shared", "queue", 1.0)
            .station("a_only", "queue", 1.0)
            .table("simulation")
            .with("station_tails", tails)
            .0
    };
    let off = model(&text(false), &[]);
    let r = run(&off, 2, 2_000, 200);
    assert!(
        r.stations
            .iter()
            .flat_map(|s| &s.classes)
            .all(|c| c.tails.is_none())
    );
    let on = model(&text(true), &[]);
    let r = run(&on, 2, 2_000, 200);
    assert!(at(&r, "shared", "a").tails.is_some() && at(&r, "shared", "b").tails.is_some());
    assert!(at(&r, "a_only", "a").tails.is_some());
    assert!(station(&r, "a_only").classes.iter().all(|c| c.name != "b"));
    let rep = &r.replication_results[0].stations[1];
    assert!(rep.classes[1].tails.is_none(), "b never visits a_only");
    use qsim_kernel::budget;
    assert_eq!(budget::class_tail_pairs(&on.network, &on.run), 3);
    assert_eq!(budget::class_tail_pairs(&off.network, &off.run), 0);
    let visits = vec![None; 2];
    let bytes = |m: &qsim_model::Model| budget::estimate(&m.network, &m.run, &visits);
    let (b_on, b_off) = (bytes(&on), bytes(&off));
    // Each pair: once in the running replication, once in each kept result.
    let per = 3 * budget::CLASS_TAIL_BYTES;
    let parallel = u64::from(b_on.parallel);
    let reps = u64::from(on.run.replications.max(1));
    assert!(
        b_on.bytes - b_off.bytes >= per * (parallel + reps),
        "the budget counts {} more bytes with station tails, less than the pairs' {}",
        b_on.bytes - b_off.bytes,
        per * (parallel + reps)
    );
}
