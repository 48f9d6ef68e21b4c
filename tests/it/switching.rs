//! Class switching: simulation against the traffic equations solved by
//! hand and against exact MVA of the chain's aggregated demands.

use crate::support::{assert_close, mean_of, model, run};
use qsim_analytic::mva;

/// Reads that turn into writes: at the cpu a read goes on to the disk
/// (0.7) or to the disk as a write (0.3); a write goes disk, cpu, sink.
/// By hand: read visits the cpu 1/0.3 times and the disk 0.7/0.3 times,
/// a write each once.
const TX: &str = r#"
[stations.cpu]
kind = "queue"
discipline = "ps"
service_by_class.read = { dist = "exponential", mean = 0.004 }
service_by_class.write = { dist = "exponential", mean = 0.006 }

[stations.disk]
kind = "queue"
discipline = "ps"
service_by_class.read = { dist = "exponential", mean = 0.005 }
service_by_class.write = { dist = "exponential", mean = 0.009 }

[classes.read]
WORKLOAD
[classes.read.routing]
source = { cpu = 1.0 }
cpu = { disk = 0.7, "write:disk" = 0.3 }
disk = { cpu = 1.0 }

[classes.write.routing]
disk = { cpu = 1.0 }
cpu = { sink = 1.0 }
"#;

const V_READ_CPU: f64 = 1.0 / 0.3;
const V_READ_DISK: f64 = 0.7 / 0.3;

fn closed() -> String {
    TX.replace(
        "WORKLOAD",
        "type = \"closed\"\npopulation = 8\nthink = { dist = \"exponential\", mean = 0.05 }",
    )
}

#[test]
fn visit_ratios_per_class_are_the_hand_solution() {
    let m = model(&closed(), &[]);
    let spec = m.network.spec();
    let v = qsim_theory::visits::chain_visits(spec, 0).expect("read starts a chain");
    let hand = [[V_READ_CPU, V_READ_DISK], [1.0, 1.0]];
    for (k, row) in hand.iter().enumerate() {
        for (s, &x) in row.iter().enumerate() {
            assert!(
                (v[k][s] - x).abs() < 1e-9,
                "class {k} station {s}: {}",
                v[k][s]
            );
        }
    }
    assert_eq!(spec.chain_starts(), vec![0, 0]);
}

#[test]
fn closed_chain_matches_exact_mva_of_its_demands() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.13-0.5% of exact MVA, so a bias of about 0.5% fails in
    // every figure; the guards (at most 0.4% of the exact value, about 1.5 x
    // the widest measured) allow at most 0.8%.
    let m = model(&closed(), &[]);
    // The chain's demand at a station: the sum over its classes of visits
    // times mean service. PS stations at one server are MVA queues.
    let cpu = V_READ_CPU * 0.004 + 0.006;
    let disk = V_READ_DISK * 0.005 + 0.009;
    let sol = mva::exact(
        &[
            mva::Station::queue("cpu", cpu),
            mva::Station::queue("disk", disk),
        ],
        0.05,
        8,
    )
    .unwrap();
    let p = sol.at(8).unwrap();
    let reps = 10;
    let r = run(&m, reps, 150_000, 15_000);
    assert_close(
        "chain throughput",
        r.system.throughput_per_s,
        p.throughput_per_s,
        reps,
        0.0,
        0.004,
    );
    assert_close(
        "chain response",
        mean_of(&r.system.response_time_s),
        p.response_time_s,
        reps,
        0.0,
        0.004,
    );
    // Every interaction is counted for read, where it started.
    assert_close(
        "read throughput",
        r.classes[0].throughput_per_s,
        p.throughput_per_s,
        reps,
        0.0,
        0.004,
    );
    for (s, d) in [cpu, disk].iter().enumerate() {
        assert_close(
            "utilization",
            r.stations[s].utilization,
            p.throughput_per_s * d,
            reps,
            0.0,
            0.004,
        );
        assert_close(
            "mean jobs",
            r.stations[s].mean_jobs,
            p.stations[s].mean_jobs,
            reps,
            0.0,
            0.004,
        );
    }
    // `qsim solve`'s figures: the chain as one class gives the same exact
    // numbers.
    let (merged, why) = qsim_theory::chains::merge(m.network.spec())
        .unwrap()
        .unwrap();
    assert!(why.is_empty(), "{why:?}");
    let f = qsim_theory::solution::solve_within(&merged, 1e9).unwrap();
    assert!((f.throughput_per_s - p.throughput_per_s).abs() < 1e-9 * p.throughput_per_s);
    assert!((f.response_time_s - p.response_time_s).abs() < 1e-9 * p.response_time_s);
    for s in 0..2 {
        assert!((f.stations[s].mean_jobs - p.stations[s].mean_jobs).abs() < 1e-9);
    }
}

#[test]
fn open_chain_flow_balance() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.5-0.8% of the traffic equations' figures, so a bias of
    // about 0.8% fails in every figure; the guards (at most 0.6% of the exact
    // value, about 1.5 x the widest measured) allow at most 1.3%.
    // 20 reads per second: the cpu completes 20 * (1/0.3 + 1) per second,
    // the disk 20 * (0.7/0.3 + 1).
    let m = model(
        &TX.replace(
            "WORKLOAD",
            "type = \"open\"\narrival = { dist = \"exponential\", mean = 0.05 }",
        ),
        &[],
    );
    let reps = 10;
    let r = run(&m, reps, 100_000, 10_000);
    let lambda = 20.0;
    for (s, v) in [V_READ_CPU + 1.0, V_READ_DISK + 1.0].iter().enumerate() {
        assert_close(
            "station throughput",
            r.stations[s].throughput_per_s,
            lambda * v,
            reps,
            0.0,
            0.006,
        );
    }
    // An open product-form network of PS stations: the chain's response
    // time is the sum over stations of D / (1 - lambda D), D its demand.
    let demands = [V_READ_CPU * 0.004 + 0.006, V_READ_DISK * 0.005 + 0.009];
    let exact: f64 = demands.iter().map(|d| d / (1.0 - lambda * d)).sum();
    assert_close(
        "open chain response",
        mean_of(&r.system.response_time_s),
        exact,
        reps,
        0.0,
        0.006,
    );
    let (merged, why) = qsim_theory::chains::merge(m.network.spec())
        .unwrap()
        .unwrap();
    assert!(why.is_empty(), "{why:?}");
    let f = qsim_theory::solution::solve_within(&merged, 1e9).unwrap();
    assert!(
        (f.response_time_s - exact).abs() < 1e-9 * exact,
        "{}",
        f.response_time_s
    );
    assert_close(
        "read throughput",
        r.classes[0].throughput_per_s,
        lambda,
        reps,
        0.0,
        0.006,
    );
    // Per class at each station, the traffic equations: reads visit the
    // cpu 1/0.3 and the disk 0.7/0.3 times per interaction, writes each
    // once.
    for (s, read_visits) in [V_READ_CPU, V_READ_DISK].into_iter().enumerate() {
        let by = &r.stations[s].classes;
        let class = |name: &str| {
            by.iter()
                .find(|c| c.name == name)
                .expect("class at station")
        };
        for (name, v) in [("read", read_visits), ("write", 1.0)] {
            assert_close(
                &format!("{name} departures at station {s}"),
                class(name).throughput_per_s,
                lambda * v,
                reps,
                0.0,
                0.006,
            );
        }
    }
    // Writes complete no interaction of their own: undefined, not 0.
    assert!(r.classes[1].throughput_per_s.mean.is_nan());
    assert!(r.classes[1].response_time_s.mean.is_nan());
}

#[test]
fn switching_errors_are_located() {
    let err = |text: &str| {
        qsim_model::load_str("m.toml", text, &[])
            .unwrap_err()
            .to_string()
    };
    let e = err(&closed().replace("\"write:disk\"", "\"wrte:disk\""));
    assert!(
        e.contains("m.toml:20:21:") && e.contains("no class named `wrte`"),
        "{e}"
    );
    let e = err(&closed().replace("cpu = { sink = 1.0 }", ""));
    assert!(
        e.contains("class write has no routing row for cpu") || e.contains("no routing row"),
        "{e}"
    );
    let open_write = closed().replace(
        "[classes.write.routing]",
        "[classes.write]\ntype = \"open\"\narrival = { dist = \"exponential\", mean = 1.0 }\n[classes.write.routing]\nsource = { cpu = 1.0 }",
    );
    let e = err(&open_write);
    assert!(e.contains("both open or both closed"), "{e}");
    let own = |think: f64| {
        closed().replace(
            "[classes.write.routing]",
            &format!("[classes.write]\ntype = \"closed\"\npopulation = 3\nthink = {{ dist = \"exponential\", mean = {think} }}\n[classes.write.routing]\nsource = {{ cpu = 1.0 }}"),
        )
    };
    let e = err(&own(0.05));
    assert!(
        e.contains("classes.write.routing.source: classes read and write both start interactions"),
        "{e}"
    );
    let e = err(&own(0.07));
    assert!(
        e.contains("m.toml:20:") && e.contains("different think times"),
        "{e}"
    );
    let e = err(&closed().replace("source = { cpu = 1.0 }", "source = { \"write:cpu\" = 1.0 }"));
    assert!(
        e.contains("m.toml:19:") && e.contains("starts in its own class"),
        "{e}"
    );
    let e = err(&closed().replace("\"write:disk\" = 0.3", "sink = 0.3"));
    assert!(e.starts_with("m.toml:23:10: classes.write: class write has no workload and no class switches jobs into it"), "{e}");
}
