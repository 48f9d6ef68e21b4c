//! Time averages of plain queue and delay stations in awkward places.
//!
//! Plain stations compute mean jobs and utilization from per-job sums; debug
//! builds (the test profile keeps debug assertions on) also integrate them
//! at every change and assert in `result` that both agree. This test drives
//! every path a job can take into, through and out of such stations — two
//! classes with priorities, LCFS, a two-server queue, a delay, fork
//! sub-jobs joined on a quorum, a latch, two regions with limits, open and
//! closed work, jobs starting at a station, deterministic ties — under every
//! warm-up and stopping rule, and calls `result` mid-run through the
//! steppable API, so that a path that forgets the sums fails here.

use qsim_kernel::*;

fn exp(m: f64) -> Dist {
    Dist::exponential(m).unwrap()
}

fn det(v: f64) -> Dist {
    Dist::deterministic(v).unwrap()
}

fn st(name: &str, kind: StationKind, service: Vec<Option<Dist>>) -> StationSpec {
    StationSpec {
        name: name.into(),
        kind,
        service,
        speed: None,
    }
}

fn queue(servers: u32, discipline: Discipline) -> StationKind {
    StationKind::Queue {
        servers,
        discipline,
    }
}

fn spec(initial: InitialState, ties: bool) -> NetworkSpec {
    let s = |m: f64| if ties { det(m) } else { exp(m) };
    let both = |m: f64| vec![Some(s(m)), Some(s(m * 0.7))];
    use Target::{Exit, Station};
    let a = ClassSpec {
        name: "a".into(),
        workload: Workload::Closed {
            population: 6,
            think: Some(s(0.5)),
        },
        routing: Routing::Probabilistic {
            entry: vec![(Station(0), 1.0)],
            from: vec![
                vec![(Station(1), 0.6), (Station(6), 0.4)],
                vec![(Station(2), 1.0)],
                vec![(Exit, 0.7), (Station(0), 0.3)],
                vec![],
                vec![],
                vec![],
                vec![(Exit, 1.0)],
            ],
        },
        priority: 0,
    };
    let b = ClassSpec {
        name: "b".into(),
        workload: Workload::Open {
            interarrival: s(1.3),
        },
        routing: Routing::Sequence(vec![3, 5, 1, 6]),
        priority: 1,
    };
    NetworkSpec {
        stations: vec![
            st("q_prio", queue(2, Discipline::Priority), both(0.3)),
            st("q_lcfs", queue(1, Discipline::Lcfs), both(0.2)),
            st("delay", StationKind::Delay, both(0.5)),
            st(
                "fork",
                StationKind::Fork(ForkSpec {
                    fan_out: 3,
                    targets: vec![(4, 1.0), (2, 1.0)],
                    spread: Spread::Random,
                    join: 5,
                    routes: Vec::new(),
                }),
                vec![None, None],
            ),
            st("q_fcfs", queue(1, Discipline::Fcfs), both(0.25)),
            st(
                "join",
                StationKind::Join(JoinSpec { quorum: Some(2) }),
                vec![None, None],
            ),
            st("latch", StationKind::Latch(LatchSpec::default()), both(0.1)),
        ],
        classes: vec![a, b],
        regions: vec![
            RegionSpec {
                name: "r1".into(),
                stations: vec![0, 1],
                limit: Some(3),
            },
            RegionSpec {
                name: "r2".into(),
                stations: vec![6, 2],
                limit: Some(2),
            },
        ],
        initial,
        capacity: Vec::new(),
        weights: Vec::new(),
    }
}

#[test]
fn plain_station_averages_agree_with_integration_on_every_path() {
    for ties in [false, true] {
        for initial in [InitialState::Thinking, InitialState::AtStation(0)] {
            let n = Network::new(spec(initial, ties)).unwrap();
            for warmup in [
                Warmup::None,
                Warmup::Jobs(500),
                Warmup::Time(37.3),
                Warmup::Mser5,
                Warmup::Time(0.0),
            ] {
                for stop in [Stop::Jobs(2000), Stop::Time(800.0)] {
                    let c = RunConfig {
                        replications: 3,
                        stop,
                        warmup,
                        ..RunConfig::default()
                    };
                    let r = run(&n, &c).unwrap();
                    for s in &r.stations {
                        let u = s.utilization.mean;
                        assert!(
                            (0.0..=1.0 + 1e-9).contains(&u) || !s.kind.can_saturate(),
                            "{s:?}"
                        );
                        assert!(s.mean_jobs.mean >= 0.0, "{s:?}");
                    }
                    assert!(r.stations[0].utilization.mean > 0.0);
                    // The delay station never reports a utilization (it
                    // has none: not defined, not 0).
                    assert!(r.stations[2].utilization.mean.is_nan());
                    // `result` mid-run, during the warm-up too.
                    let mut sim = Simulation::new(&n, &c, 0).unwrap();
                    let mut t = 0.0;
                    while sim.run_until(SimTime::new(t).unwrap()).unwrap() {
                        let _ = sim.result();
                        t += 0.37;
                        for _ in 0..3 {
                            if !sim.step().unwrap() {
                                break;
                            }
                            let _ = sim.result();
                        }
                    }
                    let _ = sim.result();
                }
            }
        }
    }
}
