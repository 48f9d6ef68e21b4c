//! Kernel throughput in events per second: one replication of ~1e6 jobs.
//!
//! `mm1_rho09`: an M/M/1 at utilization 0.9 with full statistics.
//! `closed_3station`: a CPU and two disks, 20 users with think time.
//!
//! Group `hand_loop` (per event): the same M/M/1 as `kernel/mm1_rho09`
//! written as a single-purpose loop (two pending times, exponential draws
//! from the kernel's generator and sampler, no statistics): the yardstick
//! for the kernel's end-to-end cost.
//!
//! Group `latch_loop` (per job through the latch): N threads looping
//! through one latch whose speed falls with contention (the latch of
//! `models/latch_numa.toml`), N = 100 and 500; every arrival and departure
//! re-times the holder, which should cost the same at any N.
//!
//! Group `large_population` (per event): 10^6 users thinking in front of
//! one server, ~10^6 pending events.
//!
//! Times are the CPU time of the benchmark thread (Linux; wall-clock
//! elsewhere): on a machine shared with other work, wall time mostly
//! measures the other work.

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use qsim_kernel::dist::exp1;
use qsim_kernel::rng::{class_stream, service_stream, stream};
use qsim_kernel::*;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// CPU time of the calling thread, where the platform gives it.
#[cfg(target_os = "linux")]
fn thread_cpu() -> Option<Duration> {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    unsafe extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `ts` is a valid timespec (two 64-bit fields on 64-bit Linux)
    // that the call fills in.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0 && cfg!(target_pointer_width = "64"))
        .then(|| Duration::new(ts.sec as u64, ts.nsec as u32))
}

#[cfg(not(target_os = "linux"))]
fn thread_cpu() -> Option<Duration> {
    None
}

/// Criterion measurement: the thread's CPU time (wall time where it is
/// not available), shown like wall time.
struct CpuTime;

static WALL: WallTime = WallTime;

impl Measurement for CpuTime {
    type Intermediate = (Option<Duration>, Instant);
    type Value = Duration;
    fn start(&self) -> Self::Intermediate {
        (thread_cpu(), Instant::now())
    }
    fn end(&self, i: Self::Intermediate) -> Duration {
        match (i.0, thread_cpu()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => i.1.elapsed(),
        }
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, v: &Duration) -> f64 {
        v.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        WALL.formatter()
    }
}

type C = Criterion<CpuTime>;

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

fn latch_loop(n: u32) -> Network {
    let table = [
        (100.0, 2000.0),
        (200.0, 1125.0),
        (300.0, 632.0),
        (400.0, 356.0),
        (500.0, 200.0),
        (1000.0, 100.0),
    ];
    let spec = NetworkSpec {
        stations: vec![StationSpec {
            name: "latch1".into(),
            kind: StationKind::Latch(LatchSpec::default()),
            service: vec![Some(Dist::exponential(0.0005).unwrap())],
            speed: Some(Speed::Table(table.to_vec())),
        }],
        classes: vec![ClassSpec {
            name: "threads".into(),
            workload: Workload::Closed {
                population: n,
                think: Some(Dist::exponential(0.005).unwrap()),
            },
            routing: Routing::Sequence(vec![0]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    };
    Network::new(spec).unwrap()
}

/// 10^6 users, 1000 s think, 0.5 ms service: ~1000 interactions/s, the
/// server about half busy, nearly every user thinking.
fn think_1m() -> Network {
    let spec = NetworkSpec {
        stations: vec![StationSpec {
            name: "server".into(),
            kind: StationKind::Queue {
                servers: 1,
                discipline: Discipline::Fcfs,
            },
            service: vec![Some(Dist::exponential(0.0005).unwrap())],
            speed: None,
        }],
        classes: vec![ClassSpec {
            name: "users".into(),
            workload: Workload::Closed {
                population: 1_000_000,
                think: Some(Dist::exponential(1000.0).unwrap()),
            },
            routing: Routing::Sequence(vec![0]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    };
    Network::new(spec).unwrap()
}

fn config(jobs: u64) -> RunConfig {
    RunConfig {
        replications: 1,
        stop: Stop::Jobs(jobs),
        warmup: Warmup::None,
        threads: 1,
        ..RunConfig::default()
    }
}

/// The M/M/1 of `mm1_rho09` by hand: the next arrival and the next
/// departure are the whole event list; returns the events processed
/// and the last departure time (so nothing is optimized away).
fn hand_mm1(jobs: u64) -> (u64, f64) {
    let (ia, s) = (1.0 / 0.9, 1.0);
    let mut arr = stream(0, 0, class_stream(0));
    let mut svc = stream(0, 0, service_stream(0));
    let mut t_arr = exp1(&mut arr) * ia;
    let mut t_dep = f64::INFINITY;
    let (mut n, mut done, mut events, mut now) = (0u64, 0u64, 0u64, 0.0);
    while done < jobs {
        events += 1;
        if t_arr <= t_dep {
            now = t_arr;
            n += 1;
            if n == 1 {
                t_dep = now + exp1(&mut svc) * s;
            }
            t_arr = now + exp1(&mut arr) * ia;
        } else {
            now = t_dep;
            n -= 1;
            done += 1;
            t_dep = if n > 0 {
                now + exp1(&mut svc) * s
            } else {
                f64::INFINITY
            };
        }
    }
    (events, now)
}

fn hand_loop(c: &mut C) {
    let jobs = 1_000_000;
    let mut g = c.benchmark_group("hand_loop");
    g.throughput(Throughput::Elements(hand_mm1(jobs).0));
    g.sample_size(10);
    g.bench_function("mm1_rho09", |b| b.iter(|| black_box(hand_mm1(jobs))));
    g.finish();
}

fn latch(c: &mut C) {
    let jobs = 1_000_000;
    let config = config(jobs);
    let mut g = c.benchmark_group("latch_loop");
    g.throughput(Throughput::Elements(jobs));
    g.sample_size(10);
    for n in [100, 500] {
        let net = latch_loop(n);
        g.bench_with_input(BenchmarkId::from_parameter(n), &net, |b, net| {
            b.iter(|| black_box(run_replication(net, &config, 0).unwrap()))
        });
    }
    g.finish();
}

fn large_population(c: &mut C) {
    let net = think_1m();
    // The simulation is built (10^6 first think times scheduled) outside
    // the timed part; the timing covers 2·10^6 events with ~10^6 pending.
    let config = config(u64::MAX);
    let events = 2_000_000;
    let mut g = c.benchmark_group("large_population");
    g.throughput(Throughput::Elements(events));
    g.sample_size(10);
    g.bench_function("think_1m", |b| {
        b.iter_batched(
            || Simulation::new(&net, &config, 0).unwrap(),
            |mut sim| {
                for _ in 0..events {
                    sim.step().unwrap();
                }
                sim
            },
            criterion::BatchSize::PerIteration,
        )
    });
    g.finish();
}

fn bench(c: &mut C, name: &str, net: &Network, jobs: u64) {
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

fn kernel(c: &mut C) {
    bench(c, "mm1_rho09", &mm1(), 1_000_000);
    // One interaction is ~20 station visits: 1e5 interactions ~ 2e6 jobs.
    bench(c, "closed_3station", &closed3(), 100_000);
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(CpuTime);
    targets = kernel, hand_loop, latch, large_population
}
criterion_main!(benches);
