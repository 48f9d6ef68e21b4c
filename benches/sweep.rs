//! Sweep throughput (points per second) at 1 and 2 threads on a small grid:
//! a central-server model (CPU and two disks, closed), 12 populations × 2
//! replications, no output files. The ratio of the two is the parallel
//! speed-up of `qsim sweep`.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use qsim_sweep::{Sweep, SweepOptions, VarySpec};
use std::hint::black_box;
use std::path::Path;

/// The central-server model of models/cpu_two_disks.toml, shortened.
const SHORTER: [&str; 3] = [
    "simulation.replications=2",
    "simulation.stop.jobs=20000",
    "simulation.warmup.jobs=2000",
];

const GRID: &str = "workload.population=2..24:2";

fn sweep(c: &mut Criterion) {
    let mut group = c.benchmark_group("sweep");
    group.sample_size(10);
    let points = VarySpec::parse(GRID).unwrap().values().len() as u64;
    group.throughput(Throughput::Elements(points));
    for threads in [1usize, 2] {
        let base: Vec<qsim_model::Override> = SHORTER.iter().map(|o| o.parse().unwrap()).collect();
        let sweep = Sweep::new(
            Path::new(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/models/cpu_two_disks.toml"
            )),
            &base,
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
