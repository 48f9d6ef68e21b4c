//! The simulation kernel of qsim: a discrete-event simulator for queueing
//! networks whose service centers slow down under contention.
//!
//! The kernel knows nothing of files, TOML or terminals. Build a
//! [`NetworkSpec`] (in code, or with `qsim-model` from TOML), validate it into
//! a [`Network`], and [`run`] it with a [`RunConfig`]; read the
//! [`RunResults`]. [`run_replication`] runs one replication, [`summarize`]
//! combines replications, and [`Simulation`] runs one replication step by
//! step ([`Simulation::step`], [`Simulation::run_until`],
//! [`Simulation::time`]) for programs that want to watch it.
//!
//! Build and test: `cargo build -p qsim-kernel --release`,
//! `cargo test -p qsim-kernel --release`, benchmarks with
//! `cargo bench -p qsim-kernel --bench kernel` (events per second), a long
//! run with `cargo run -p qsim-kernel --release --example kernel_speed -- mm1 100000000`.
//!
//! # Rules
//!
//! * **Simultaneous events** are processed in the order they were scheduled
//!   (FIFO by a sequence number kept in the event list). Within one event,
//!   everything that happens at the same instant without a new event (a
//!   departing job routed on, a zero think time, a fork spawning sub-jobs)
//!   is done before any station re-evaluates its speed, so a job that leaves
//!   a station and comes straight back is counted there when the new speed
//!   is computed.
//! * **Determinism**: a replication is a pure function of (network, config,
//!   replication index). Every random stream is a `Xoshiro256PlusPlus` seeded
//!   from (root seed, replication index, stream id) through SplitMix64 (see
//!   [`rng`]); there is one stream per station for service, one per station
//!   for its mechanisms (latch, fork spread), one per class for arrivals or
//!   think times, and one for routing. Replications are collected in index
//!   order, so results are bit-identical at any thread count.
//! * **Events**: an event is an arrival, a think-time end, a service
//!   completion, or another scheduled state change (a latch hand-off, poll or
//!   wake-up, a batch timer). Stale events (a completion re-timed by a speed
//!   change) and control events (end of warm-up, end of run) are not
//!   counted.
//! * **Speed** (contention-dependent service rate) is applied continuously:
//!   each affected station runs a virtual-work clock, so when the number of
//!   jobs present changes, the remaining work of every job in service is
//!   re-timed at the new rate. Exception: a latch with a NUMA or spin
//!   mechanism applies its speed curve at the start of each critical section.
//! * **Memory** does not grow with run length: statistics are running sums,
//!   time integrals and log-linear histograms (percentiles within 1%).
//!
//! # Mechanisms, briefly (details on the types in [`network`])
//!
//! * Latch with NUMA: thread i is placed on node i mod nodes; with T jobs in
//!   the network and C = nodes × cores, the next holder has been migrated
//!   (random node, plus `migration_s`) with probability max(0, (T − C)/T);
//!   each contended hand-off costs `local_handoff_s` or `remote_handoff_s`
//!   depending on the previous holder's node. An uncontended acquire is free.
//! * Latch with spin: waiters poll every U[0, d·pauses·cycles/GHz) ns and
//!   take the latch only when a poll finds it free; after `spin_rounds` polls
//!   they sleep; a release wakes one (or all) sleepers, each after
//!   `context_switch_s`. Spinning and context switches are charged as busy
//!   time to the `cpu` station (it is not blocked by them). A latch's
//!   utilization is the fraction of time anyone holds, waits for or is being
//!   handed it.
//! * Batch and link carry groups of jobs; a fork's parent waits at the join
//!   (counted there) for its sub-jobs; a region's waiting jobs are counted in
//!   the region, not at the station.
//!
//! ```
//! use qsim_kernel::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // M/M/1 with arrival rate 0.5/s and service rate 1/s.
//! let spec = NetworkSpec {
//!     stations: vec![StationSpec {
//!         name: "server".into(),
//!         kind: StationKind::Queue { servers: 1, discipline: Discipline::Fcfs },
//!         service: vec![Some(Dist::exponential(1.0)?)],
//!         speed: None,
//!     }],
//!     classes: vec![ClassSpec {
//!         name: "default".into(),
//!         workload: Workload::Open { interarrival: Dist::exponential(2.0)? },
//!         routing: Routing::Sequence(vec![0]),
//!         priority: 0,
//!     }],
//!     ..NetworkSpec::default()
//! };
//! let network = Network::new(spec).map_err(|e| format!("{e:?}"))?;
//! let config = RunConfig { stop: Stop::Jobs(50_000), ..RunConfig::default() };
//! let results = run(&network, &config)?;
//! // Mean response of an M/M/1 is 1/(mu - lambda) = 2 s.
//! let r = results.system.response_time_s;
//! assert!((r.mean - 2.0).abs() < 3.0 * r.ci95.max(0.05));
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

pub mod config;
pub mod dist;
mod fel;
mod hist;
pub mod network;
pub mod results;
pub mod rng;
mod run;
mod sim;
pub mod time;

pub use config::{Precision, RunConfig, Stop, Warmup};
pub use dist::{Dist, DistError, Family};
pub use network::*;
pub use results::*;
pub use run::{RunError, run, run_replication, summarize};
pub use sim::Simulation;
pub use time::SimTime;
