//! Sweep throughput (points per second) at 1 and 2 threads on a small grid:
//! a central-server model (CPU and two disks, closed), 12 populations × 2
//! replications, no output files. The ratio of the two is the parallel
//! speed-up of `qsim sweep`.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use qsim_sweep::{Sweep, SweepOptions, VarySpec};
use std::hint::black_box;

const MODEL: &str = r#"
[simulation]
replications = 2
seed = 1
stop = { jobs = 20000 }
warmup = { jobs = 2000 }

[workload]
type = "closed"
population = 10
think = { dist = "exponential", mean = 1.0 }

[workload.routing]
source = { cpu = 1.0 }
cpu = { disk1 = 0.45, disk2 = 0.45, sink = 0.1 }
disk1 = { cpu = 1.0 }
disk2 = { cpu = 1.0 }

[stations.cpu]
kind = "queue"
service = { dist = "exponential", mean = 0.005 }

[stations.disk1]
kind = "queue"
service = { dist = "exponential", mean = 0.030 }

[stations.disk2]
kind = "queue"
service = { dist = "exponential", mean = 0.027 }
"#;

const GRID: &str = "workload.population=2..24:2";

fn sweep(c: &mut Criterion) {
    let mut group = c.benchmark_group("sweep");
    group.sample_size(10);
    let points = VarySpec::parse(GRID).unwrap().values().len() as u64;
    group.throughput(Throughput::Elements(points));
    for threads in [1usize, 2] {
        let sweep = Sweep::with_source(
            "central_server.toml",
            |ov: &[qsim_model::Override]| qsim_model::load_str("central_server.toml", MODEL, ov),
            &[],
            vec![VarySpec::parse(GRID).unwrap()],
            SweepOptions {
                threads,
                ..SweepOptions::default()
            },
        )
        .unwrap();
        group.bench_with_input(BenchmarkId::from_parameter(threads), &sweep, |b, s| {
            b.iter(|| black_box(s.run(&mut ()).unwrap().records.len()))
        });
    }
    group.finish();
}

criterion_group!(benches, sweep);
criterion_main!(benches);
