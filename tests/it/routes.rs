//! Fixed routes with `repeat`, fork sub-job routes and station groups,
//! simulated and checked against exact answers: visit counts that hold per
//! job, and Kelly's product form for fixed routes through exponential FCFS
//! stations.

use crate::support::{assert_close, model, run};
use qsim_theory::visits::visit_ratios;

/// One job at a time (population 1): measurement starts and stops at the
/// end of an interaction, when no job or sub-job is inside, so departures
/// over completions is the exact number of visits per interaction.
const FANOUT: &str = r#"
[workload]
type = "closed"
population = 1
think = { dist = "exponential", mean = 0.01 }
route = ["split", "gather"]

[stations.split]
kind = "fork"
fan_out = 4
route = [{ route = ["node[i].a", "node[i].b"], repeat = 3 }, "node[i].c"]
repeat = 2
join = "gather"

[stations.gather]
kind = "join"

[stations.node]
count = 2

[stations.node.a]
kind = "queue"
servers = 2
service = { dist = "exponential", mean = 0.001 }

[stations.node.b]
kind = "latch"
service = { dist = "exponential", mean = 0.0002 }

[stations.node.c]
kind = "delay"
service = { dist = "uniform", min = 0.0, max = 0.002 }
"#;

#[test]
fn fork_sub_jobs_on_a_fixed_route_visit_each_station_exactly_as_often_as_written() {
    let m = model(FANOUT, &[]);
    let names: Vec<&str> = m
        .network
        .spec()
        .stations
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "split",
            "gather",
            "node[0].a",
            "node[0].b",
            "node[0].c",
            "node[1].a",
            "node[1].b",
            "node[1].c"
        ]
    );
    // 4 sub-jobs spread evenly over 2 members: 2 per member, each visiting
    // a and b 3 x 2 = 6 times and c twice.
    let per_job = [1.0, 1.0, 12.0, 12.0, 4.0, 12.0, 12.0, 4.0];
    let v = visit_ratios(m.network.spec(), 0).expect("visits");
    assert_eq!(v.total, per_job);
    let r = run(&m, 2, 2_000, 100);
    for rep in &r.replication_results {
        let done = rep.system.completions as f64;
        let tput = rep.system.throughput_per_s;
        for (s, want) in rep.stations.iter().zip(per_job) {
            let visits = s.throughput_per_s / tput;
            assert!(
                (visits - want).abs() < 1e-9 * want,
                "replication {}: {visits} visits per job, expected {want} ({done} jobs)",
                rep.index
            );
        }
    }
}

/// An open class on a fixed route `(a, b) x 2, c` through exponential FCFS
/// single servers: by Kelly's theorem each station holds ρ/(1 − ρ) jobs on
/// average, with ρ = λ · visits · S (0.6, 0.4, 0.7).
#[test]
fn fixed_route_through_exponential_fcfs_queues_has_kellys_product_form() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.4% (utilizations), 0.7-2% (mean jobs) and 1.3% (response)
    // of Kelly's figures, so a bias of about 2% fails in every figure; the
    // guards (at most 1.5% of the exact value, about 1.5 x the widest measured)
    // allow at most 3.2%.
    let m = model(
        r#"
[workload]
type = "open"
rate_per_s = 2.0
route = [{ route = ["a", "b"], repeat = 2 }, "c"]

[stations.a]
kind = "queue"
service = { dist = "exponential", mean = 0.15 }

[stations.b]
kind = "queue"
service = { dist = "exponential", mean = 0.1 }

[stations.c]
kind = "queue"
service = { dist = "exponential", mean = 0.35 }
"#,
        &[],
    );
    let rho = [0.6, 0.4, 0.7];
    let v = visit_ratios(m.network.spec(), 0).expect("visits");
    assert_eq!(v.total, [2.0, 2.0, 1.0]);
    let r = run(&m, 10, 200_000, 20_000);
    for (st, &p) in r.stations.iter().zip(&rho) {
        assert_close(
            &format!("{} utilization", st.name),
            st.utilization,
            p,
            10,
            0.0,
            0.015,
        );
        assert_close(
            &format!("{} mean jobs", st.name),
            st.mean_jobs,
            p / (1.0 - p),
            10,
            0.0,
            0.015,
        );
    }
    // Little's law over the route: R = sum of L / λ.
    let l: f64 = rho.iter().map(|p| p / (1.0 - p)).sum();
    assert_close(
        "response time",
        crate::support::mean_of(&r.system.response_time_s),
        l / 2.0,
        10,
        0.0,
        0.015,
    );
}

#[test]
fn a_group_override_sets_every_member_and_a_member_override_wins() {
    let m = model(
        FANOUT,
        &["stations.node[1].a.servers=7", "stations.node.a.servers=3"],
    );
    let servers: Vec<u32> = m
        .network
        .spec()
        .stations
        .iter()
        .filter_map(|s| match s.kind {
            qsim_kernel::StationKind::Queue { servers, .. } => Some(servers),
            _ => None,
        })
        .collect();
    assert_eq!(servers, [3, 7]);
}
