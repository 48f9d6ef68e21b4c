//! The simulation kernel of qsim: a discrete-event simulator for queueing
//! networks whose service centers slow down under contention.
//!
//! The kernel knows nothing of files, TOML or terminals. Build a
//! [`NetworkSpec`] (in code, or with `qsim-model` from TOML), validate it into
//! a [`Network`], and [`run`] it with a [`RunConfig`]; read the
//! [`RunResults`]. [`run_replication`] runs one replication, [`summarize`]
//! combines replications, [`ReplicationRounds`] decides which replications
//! a run needs (the precision rule, for programs that schedule replications
//! themselves, like sweeps), and [`Simulation`] runs one replication step by
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
//!   re-timed at the new rate. This holds for latches with a NUMA or spin
//!   mechanism too: the running critical section is re-timed when the
//!   number present at the latch or its cpu share changes (a NUMA hand-off
//!   is a fixed cost and is not re-timed).
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
//! * Latch with spin: a waiter that finds the latch held polls it after
//!   each wait of a whole number of units uniform on {0, …, d − 1}, a unit
//!   being pauses_per_unit·pause_cycles/clock_ghz ns (`PollDelay::Units`,
//!   InnoDB), or of U[0, d units) (`PollDelay::Uniform`), and
//!   takes it only when a poll finds it free (so a released latch sits idle
//!   until the next poll: hand-off gaps grow with d); after `spin_rounds`
//!   failed polls it sleeps (with `spin_rounds = 0` it sleeps at once). A
//!   release wakes the first sleeper (`Wake::One`) or all of them
//!   (`Wake::All`); a woken waiter takes `context_switch_s` to run again,
//!   then takes the latch if it is free; otherwise a `Wake::One` waiter
//!   spins again and a `Wake::All` waiter sleeps again (the herd: all pay
//!   the switch, one wins). A newcomer finding the latch free takes it at
//!   once, ahead of spinners and sleepers. Without a spin mechanism waiters
//!   sleep and are handed the latch in FIFO order, so `Wake::All` has
//!   nothing to do and behaves like `Wake::One`.
//! * Spinning costs CPU: at a latch whose `spin.cpu` names station S (a PS
//!   queue with c servers, checked by validation), a spinning waiter, a
//!   woken waiter being switched in and the holder during its critical
//!   section are threads on S: with n jobs and x such threads each gets
//!   min(1, c/(n + x)) of a server (with a speed curve, rate(n + x) shared
//!   by n + x). Poll waits, `context_switch_s` and critical sections are
//!   CPU time, measured on a per-latch thread clock that runs at that
//!   share; they and S's jobs are re-timed whenever n or x changes (on half
//!   a core a poll wait takes twice as long). S's `utilization` includes the
//!   threads (min(n + x, c)/c); its `mean_jobs`, `throughput_per_s` and
//!   `response_time_s` do not.
//! * A latch's `utilization` is the fraction of time it is held; its
//!   `occupancy` (latches with `numa` or
//!   `spin`) is the fraction of time anyone holds, waits for or is being
//!   handed it.
//! * Batch and link carry groups of jobs; a region's waiting jobs are
//!   counted in the region, not at the station.
//! * Fork and join: a fork's parent waits at the join (counted in its
//!   `mean_jobs`) for its sub-jobs. A sub-job leaving a station follows
//!   its class's routing row for that station, if the class has a routing
//!   table with such a row, so it may visit several stations (CPU work, a
//!   latch, CPU work again); it ends when routed to its fork's join. Without
//!   a row (and always with a sequence route) it goes straight to the join.
//!   A join's throughput counts parents released (X, not sub-jobs), and its
//!   response is the parent's time from the fork to the release.
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
//! let network = Network::new(spec)?;
//! let config = RunConfig { stop: Stop::Jobs(50_000), ..RunConfig::default() };
//! let results = run(&network, &config)?;
//! // Mean response of an M/M/1 is 1/(mu - lambda) = 2 s.
//! let r = results.system.response_time_s;
//! assert!((r.mean - 2.0).abs() < 3.0 * r.ci95.max(0.05));
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

#[cfg(feature = "bias")]
mod bias;
pub mod bistable;
pub mod budget;
pub mod config;
mod control;
pub mod dist;
pub mod ensemble;
mod error;
mod fel;
mod hist;
pub mod network;
pub mod number;
pub mod rare;
pub mod recovery;
pub mod results;
pub mod rng;
mod rounds;
mod run;
pub mod schedule;
mod sim;
pub mod steady;
pub mod time;
pub mod trace;

pub use bistable::Verdict;
pub use budget::{Budget, BudgetError};
pub use config::{DEFAULT_WARMUP, Precision, RunConfig, Stop, Warmup};
pub use control::Control;
pub use dist::{Dist, DistError, Family};
pub use error::RunError;
pub use network::*;
pub use number::{sig, sig_trimmed};
pub use results::*;
pub use rounds::ReplicationRounds;
pub use run::{
    MIN_TAIL_RESPONSES, PERCENTILES, responses_needed, run, run_replication, run_replication_with,
    run_with, summarize,
};
pub use sim::Simulation;
pub use steady::SEGMENTS;
pub use time::SimTime;
