//! Kernel throughput in events per second: one replication of ~1e6 jobs.
//!
//! `mm1_rho09`: an M/M/1 at utilization 0.9 with full statistics.
//! `closed_3station`: a CPU and two disks, 20 users with think time.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use qsim_kernel::*;
use std::hint::black_box;

fn mm1() -> Network {
    let spec = NetworkSpec {
        stations: vec![StationSpec {
            name: "server".into(),
            kind: StationKind::Queue {
                servers: 1,
                discipline: Discipline::Fcfs,
            },
            service: vec![Some(Dist::exponential(1.0).unwrap())],
            speed: None,
        }],
        classes: vec![ClassSpec {
            name: "default".into(),
            workload: Workload::Open {
                interarrival: Dist::exponential(1.0 / 0.9).unwrap(),
            },
            routing: Routing::Sequence(vec![0]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    };
    Network::new(spec).unwrap()
}

fn closed3() -> Network {
    let q = |name: &str, mean: f64| StationSpec {
        name: name.into(),
        kind: StationKind::Queue {
            servers: 1,
            discipline: Discipline::Fcfs,
        },
        service: vec![Some(Dist::exponential(mean).unwrap())],
        speed: None,
    };
    let spec = NetworkSpec {
        stations: vec![q("cpu", 0.005), q("disk1", 0.01), q("disk2", 0.01)],
        classes: vec![ClassSpec {
            name: "users".into(),
            workload: Workload::Closed {
                population: 20,
                think: Some(Dist::exponential(0.5).unwrap()),
            },
            routing: Routing::Probabilistic {
                entry: vec![(Target::Station(0), 1.0)],
                from: vec![
                    vec![
                        (Target::Station(1), 0.45),
                        (Target::Station(2), 0.45),
                        (Target::Exit, 0.1),
                    ],
                    vec![(Target::Station(0), 1.0)],
                    vec![(Target::Station(0), 1.0)],
                ],
            },
            priority: 0,
        }],
        ..NetworkSpec::default()
    };
    Network::new(spec).unwrap()
}

fn bench(c: &mut Criterion, name: &str, net: &Network, jobs: u64) {
    let config = RunConfig {
        replications: 1,
        stop: Stop::Jobs(jobs),
        warmup: Warmup::None,
        threads: 1,
        ..RunConfig::default()
    };
    let events = run_replication(net, &config, 0).unwrap().events;
    let mut g = c.benchmark_group("kernel");
    g.throughput(Throughput::Elements(events));
    g.sample_size(10);
    g.bench_function(name, |b| {
        b.iter(|| black_box(run_replication(net, &config, 0).unwrap()))
    });
    g.finish();
}

fn kernel(c: &mut Criterion) {
    bench(c, "mm1_rho09", &mm1(), 1_000_000);
    // One interaction is ~20 station visits: 1e5 interactions ~ 2e6 jobs.
    bench(c, "closed_3station", &closed3(), 100_000);
}

criterion_group!(benches, kernel);
criterion_main!(benches);
