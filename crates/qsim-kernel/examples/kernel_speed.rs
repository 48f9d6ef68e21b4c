//! Example: events per second of the kernel on an M/M/1 (ρ = 0.9) or a
//! closed CPU + 2 disks network, and a long run to check that memory stays
//! flat (run it under `/usr/bin/time -v`).
//!
//! Usage: `cargo run -p qsim-kernel --release --example kernel_speed -- mm1 10000000`
//! or `... -- closed3 1000000` (model, then completed interactions); `batch3`
//! is `closed3` without think time. `latch100` and `latch500`: N threads
//! looping through one latch whose speed falls with contention (every
//! arrival and departure re-times the holder). `think1m`: 10^6 users
//! thinking (~10^6 pending events) in front of one server. `mm1x2`: the
//! M/M/1 with its arrivals split between two classes.

use qsim_kernel::*;

fn q(name: &str, mean: f64) -> Result<StationSpec, DistError> {
    Ok(StationSpec {
        name: name.into(),
        kind: StationKind::Queue {
            servers: 1,
            discipline: Discipline::Fcfs,
        },
        service: vec![Some(Dist::exponential(mean)?)],
        speed: None,
    })
}

/// The latch of `models/latch_numa.toml` (2000/s at 100 threads present,
/// 200/s at 500), alone in a loop of `n` threads with 5 ms of think time.
fn latch_loop(n: u32) -> Result<NetworkSpec, DistError> {
    let table = [
        (100.0, 2000.0),
        (200.0, 1125.0),
        (300.0, 632.0),
        (400.0, 356.0),
        (500.0, 200.0),
        (1000.0, 100.0),
    ];
    Ok(NetworkSpec {
        stations: vec![StationSpec {
            name: "latch1".into(),
            kind: StationKind::Latch(LatchSpec::default()),
            service: vec![Some(Dist::exponential(0.0005)?)],
            speed: Some(Speed::Table(table.to_vec())),
        }],
        classes: vec![ClassSpec {
            name: "threads".into(),
            workload: Workload::Closed {
                population: n,
                think: Some(Dist::exponential(0.005)?),
            },
            routing: Routing::Sequence(vec![0]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = std::env::args().nth(1).unwrap_or_else(|| "mm1".into());
    let jobs: u64 = std::env::args()
        .nth(2)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(10_000_000);
    let spec = match model.as_str() {
        "mm1" => NetworkSpec {
            stations: vec![q("server", 1.0)?],
            classes: vec![ClassSpec {
                name: "default".into(),
                workload: Workload::Open {
                    interarrival: Dist::exponential(1.0 / 0.9)?,
                },
                routing: Routing::Sequence(vec![0]),
                priority: 0,
            }],
            ..NetworkSpec::default()
        },
        // Two open classes of the M/M/1 above, λ = 0.45 each: the cost of
        // a multi-class model's per-class station figures.
        "mm1x2" => NetworkSpec {
            stations: vec![StationSpec {
                service: vec![Some(Dist::exponential(1.0)?), Some(Dist::exponential(1.0)?)],
                ..q("server", 1.0)?
            }],
            classes: ["a", "b"]
                .into_iter()
                .map(|name| {
                    Ok(ClassSpec {
                        name: name.into(),
                        workload: Workload::Open {
                            interarrival: Dist::exponential(1.0 / 0.45)?,
                        },
                        routing: Routing::Sequence(vec![0]),
                        priority: 0,
                    })
                })
                .collect::<Result<_, DistError>>()?,
            ..NetworkSpec::default()
        },
        "latch100" => latch_loop(100)?,
        "latch500" => latch_loop(500)?,
        // 10^6 users, 1000 s think, 0.5 ms service: ~1000 interactions/s,
        // server utilization ~0.5, nearly every user thinking.
        "think1m" => NetworkSpec {
            stations: vec![q("server", 0.0005)?],
            classes: vec![ClassSpec {
                name: "users".into(),
                workload: Workload::Closed {
                    population: 1_000_000,
                    think: Some(Dist::exponential(1000.0)?),
                },
                routing: Routing::Sequence(vec![0]),
                priority: 0,
            }],
            ..NetworkSpec::default()
        },
        _ => NetworkSpec {
            stations: vec![q("cpu", 0.005)?, q("disk1", 0.01)?, q("disk2", 0.01)?],
            classes: vec![ClassSpec {
                name: "users".into(),
                workload: Workload::Closed {
                    population: 20,
                    // `batch3`: the same network without terminals.
                    think: if model == "batch3" {
                        None
                    } else {
                        Some(Dist::exponential(0.5)?)
                    },
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
        },
    };
    let network = Network::new(spec).map_err(|e| format!("{e:?}"))?;
    let config = RunConfig {
        stop: Stop::Jobs(jobs),
        warmup: Warmup::None,
        ..RunConfig::default()
    };
    let t = std::time::Instant::now();
    let r = run_replication(&network, &config, 0)?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{model} {jobs} interactions: {} events in {secs:.2} s = {:.1} M events/s; mean response {:.4} s, p99 {:.4} s",
        r.events,
        r.events as f64 / secs / 1e6,
        r.system.response_time_s,
        r.system.percentiles_s[3],
    );
    if model == "mm1" || model == "mm1x2" {
        // M/M/1 at ρ = 0.9: R = 1/(μ−λ) = 10 s.
        assert!((r.system.response_time_s - 10.0).abs() < 2.0);
    }
    Ok(())
}
