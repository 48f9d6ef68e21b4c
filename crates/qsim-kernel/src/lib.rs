//! The simulation kernel of qsim: a discrete-event simulator for queueing
//! networks whose service centers slow down under contention.
//!
//! The kernel knows nothing of files, TOML or terminals. Build a
//! [`NetworkSpec`] (in code, or with `qsim-model` from TOML), validate it into
//! a [`Network`], and [`run`] it with a [`RunConfig`]; read the
//! [`RunResults`].
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
