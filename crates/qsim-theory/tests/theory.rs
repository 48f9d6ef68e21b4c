//! qsim-theory against hand-derived answers.

use qsim_kernel::{
    BatchSpec, ClassSpec, Dist, ForkSpec, JoinSpec, LinkSpec, NetworkSpec, Routing, Speed, Spread,
    StationKind, StationSpec, Target, Workload,
};
use qsim_theory::{bounds::closed_bounds, closed, kind, solution, visits::visit_ratios};

fn station(name: &str, kind: StationKind, mean: Option<f64>) -> StationSpec {
    StationSpec {
        name: name.into(),
        kind,
        service: vec![mean.map(|m| Dist::exponential(m).unwrap())],
        speed: None,
    }
}

fn closed_class(n: u32, think: Option<f64>, routing: Routing) -> ClassSpec {
    ClassSpec {
        name: "c".into(),
        workload: Workload::Closed {
            population: n,
            think: think.map(|z| Dist::exponential(z).unwrap()),
        },
        routing,
        priority: 0,
    }
}

#[test]
fn visits_count_fork_sub_jobs_apart_from_the_job() {
    // a -> fork (4 sub-jobs, weights 1:3 over b, c) -> join -> a again with
    // probability 1/2, else done: the job visits a twice on average.
    let spec = NetworkSpec {
        stations: vec![
            station(
                "a",
                StationKind::Queue {
                    servers: 1,
                    discipline: Default::default(),
                },
                Some(0.1),
            ),
            station(
                "f",
                StationKind::Fork(ForkSpec {
                    fan_out: 4,
                    targets: vec![(2, 1.0), (3, 3.0)],
                    spread: Spread::Even,
                    join: 4,
                    routes: Vec::new(),
                }),
                None,
            ),
            station("b", StationKind::Delay, Some(0.1)),
            station("c", StationKind::Delay, Some(0.1)),
            station("j", StationKind::Join(JoinSpec { quorum: None }), None),
        ],
        classes: vec![closed_class(
            1,
            None,
            Routing::Probabilistic {
                entry: vec![(Target::Station(0), 1.0)],
                from: vec![
                    vec![(Target::Station(1), 1.0)],
                    vec![],
                    vec![(Target::Station(4), 1.0)],
                    vec![(Target::Station(4), 1.0)],
                    vec![(Target::Station(0), 0.5), (Target::Exit, 0.5)],
                ],
            },
        )],
        ..Default::default()
    };
    let v = visit_ratios(&spec, 0).unwrap();
    let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12);
    assert!(close(&v.parent, &[2.0, 2.0, 0.0, 0.0, 2.0]), "{v:?}");
    assert!(close(&v.total, &[2.0, 2.0, 2.0, 6.0, 2.0]), "{v:?}");
}

#[test]
fn batch_and_link_laws() {
    let b = station(
        "b",
        StationKind::Batch(BatchSpec {
            max_batch: 8,
            max_wait_s: Some(0.5),
            per_job_s: 0.25,
        }),
        Some(1.0),
    );
    // 3 jobs: at most 3 per group of 1 + 3/4 s.
    let l = kind::law(&b, 0, Some(3)).unwrap();
    assert!((l.peak_rate_per_s.unwrap() - 3.0 / 1.75).abs() < 1e-12);
    assert!((l.min_residence_s - 1.25).abs() < 1e-12);
    assert!((l.max_residence_s.unwrap() - 3.0 * 1.75).abs() < 1e-12);
    // Open: a full group of 8 in 1 + 2 s.
    let l = kind::law(&b, 0, None).unwrap();
    assert!((l.peak_rate_per_s.unwrap() - 8.0 / 3.0).abs() < 1e-12);
    let link = station(
        "l",
        StationKind::Link(LinkSpec {
            pipeline: 2,
            max_batch: 4,
        }),
        Some(0.01),
    );
    assert!(
        (kind::law(&link, 0, Some(5))
            .unwrap()
            .peak_rate_per_s
            .unwrap()
            - 500.0)
            .abs()
            < 1e-9
    );
    assert!(
        (kind::law(&link, 0, Some(50))
            .unwrap()
            .peak_rate_per_s
            .unwrap()
            - 800.0)
            .abs()
            < 1e-9
    );
}

#[test]
fn usl_peak_and_least_time_per_job() {
    let usl = Speed::Usl {
        sigma: 0.1,
        kappa: 0.01,
        lambda: 100.0,
    };
    // Peak at n* = sqrt(0.9 / 0.01) = sqrt(90) (a real n bounds the integer peak).
    let n = 90f64.sqrt();
    let expect = 100.0 * n / (1.0 + 0.1 * (n - 1.0) + 0.01 * n * (n - 1.0));
    assert!((kind::peak_rate(&usl, None) - expect).abs() < 1e-9);
    // Before the peak only the end counts.
    assert!((kind::peak_rate(&usl, Some(3)) - usl.rate(3.0)).abs() < 1e-9);
    assert!((kind::min_rate(&usl, 50) - usl.rate(1.0).min(usl.rate(50.0))).abs() < 1e-12);
}

#[test]
fn product_form_bounds_bracket_exact_mva() {
    // Two queues and a 2-server queue, think 1 s: exact MVA lies within the bounds.
    let spec = NetworkSpec {
        stations: vec![
            station(
                "a",
                StationKind::Queue {
                    servers: 1,
                    discipline: Default::default(),
                },
                Some(0.05),
            ),
            station(
                "b",
                StationKind::Queue {
                    servers: 2,
                    discipline: Default::default(),
                },
                Some(0.2),
            ),
        ],
        classes: vec![closed_class(1, Some(1.0), Routing::Sequence(vec![0, 1, 0]))],
        ..Default::default()
    };
    for n in [1, 2, 5, 10, 40] {
        let mut s = spec.clone();
        s.classes[0].workload = Workload::Closed {
            population: n,
            think: Some(Dist::exponential(1.0).unwrap()),
        };
        let f = solution::solve(&s).unwrap();
        let b = closed_bounds(&s, 0, n).unwrap().unwrap();
        assert!(
            f.throughput_per_s <= b.throughput_upper_per_s * (1.0 + 1e-12),
            "{n}: {f:?} {b:?}"
        );
        assert!(
            f.throughput_per_s >= b.throughput_lower_per_s.unwrap() * (1.0 - 1e-12),
            "{n}"
        );
        assert!(
            f.response_time_s >= b.response_lower_s * (1.0 - 1e-12),
            "{n}"
        );
    }
}

#[test]
fn huge_mva_is_refused_without_allocating() {
    let spec = NetworkSpec {
        stations: vec![station(
            "a",
            StationKind::Queue {
                servers: 1,
                discipline: Default::default(),
            },
            Some(0.05),
        )],
        classes: vec![closed_class(
            1_000_000_000,
            None,
            Routing::Sequence(vec![0]),
        )],
        ..Default::default()
    };
    let cost = closed::mva_cost(&spec, 1_000_000_000);
    assert!(!cost.affordable());
    let e = closed::mva_single(&spec, 0, 1_000_000_000).unwrap_err();
    assert!(matches!(e, qsim_theory::Error::TooLarge { .. }));
    assert!(e.to_string().contains("GiB"), "{e}");
}
