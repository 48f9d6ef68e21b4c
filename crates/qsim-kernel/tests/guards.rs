//! Guards of the kernel: the budget refuses before allocating, a Control
//! reports progress and cancels, and watching a run never changes it.

use qsim_kernel::*;
use std::sync::Arc;

/// A closed network of one exponential queue (`mean` s) and think time 1 s.
fn closed(population: u32) -> Network {
    Network::new(NetworkSpec {
        stations: vec![StationSpec {
            name: "cpu".into(),
            kind: StationKind::Queue {
                servers: 1,
                discipline: Discipline::Fcfs,
            },
            service: vec![Some(Dist::exponential(0.01).unwrap())],
            speed: None,
        }],
        classes: vec![ClassSpec {
            name: "default".into(),
            workload: Workload::Closed {
                population,
                think: Some(Dist::exponential(1.0).unwrap()),
            },
            routing: Routing::Sequence(vec![0]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    })
    .unwrap()
}

fn config(jobs: u64) -> RunConfig {
    RunConfig {
        replications: 2,
        stop: Stop::Jobs(jobs),
        warmup: Warmup::Jobs(1000),
        threads: 2,
        ..RunConfig::default()
    }
}

#[test]
fn budget_names_the_population_and_counts_events() {
    let visits = [Some(vec![1.0])];
    let e = budget::estimate(&closed(1_000_000_000), &config(10_000), &visits);
    assert_eq!(e.memory_key, "workload.population");
    // At least one slab entry per job.
    assert!(e.replication_bytes > 1_000_000_000 * 32, "{e:?}");
    // One think and one service event per interaction, 11,000 per replication.
    assert_eq!(e.replication_events, Some(22_000.0));
    let err = Budget::default()
        .check(&closed(1_000_000_000), &config(10_000), &visits)
        .unwrap_err();
    assert!(matches!(err, BudgetError::Memory { .. }), "{err}");
    assert!(
        Budget::default()
            .check(&closed(20), &config(10_000), &visits)
            .is_ok()
    );
}

#[test]
fn a_cancelled_control_stops_the_run() {
    let control = Arc::new(Control::new());
    control.cancel();
    // Long enough to pass a check (2^16 events) well before its end.
    let r = run_with(&closed(20), &config(10_000_000), &control);
    assert_eq!(r.unwrap_err(), RunError::Cancelled);
    assert_eq!(control.replications_done(), 0);
}

#[test]
fn watching_a_run_reports_its_jobs_and_changes_nothing() {
    let control = Arc::new(Control::new());
    let watched = run_with(&closed(20), &config(100_000), &control).unwrap();
    let plain = run(&closed(20), &config(100_000)).unwrap();
    assert_eq!(
        watched.system.throughput_per_s,
        plain.system.throughput_per_s
    );
    assert_eq!(watched.events, plain.events);
    assert_eq!(control.replications_done(), 2);
    // Every completed job, warm-up included, of both replications.
    assert_eq!(control.jobs_done(), 2 * 101_000);
}
