//! Parameter sweeps for qsim: run a model over a grid of values of any
//! overridable key path, in parallel and reproducibly, and find the knee.
//!
//! - [`VarySpec`] parses `PATH=SPEC` (`10..600:10`, `1..1024:x2`,
//!   `none,50,100`); several form a [`Grid`] (first spec outermost).
//! - [`Sweep`] checks the specs against the model, then runs points ×
//!   replications on a local rayon pool. Point k's replications use a seed
//!   derived from (root seed, k) only ([`point_seed`]), so the numbers are the
//!   same at any thread count and any [`Shard`] split.
//! - With an output directory, each finished point is appended (in grid
//!   order) to `points.csv` and `points.jsonl`; `resume` skips the points
//!   already there; [`merge`] joins shard outputs into exactly the unsharded
//!   output; see [`output`].
//! - Where a closed model's speed curve falls, each point also runs from the
//!   other end and records whether it is bistable ([`bistable`]); the
//!   summary says over which points.
//! - [`knee::analyze`] finds the peak, knee (max X/R) and saturation point of
//!   a curve; [`SweepSummary`] applies it to a whole sweep and recommends a
//!   throttle limit.
//! - [`what_if`] compares changes (a station sped up, any overrides) with
//!   the baseline at operating points, with common random numbers: paired
//!   replications and paired-difference intervals ([`whatif`]);
//!   [`what_if_network`] does it on a network built in code, its operating
//!   points and changes given as typed [`Setting`]s.
//!
//! The crate prints nothing; progress comes through an [`Observer`].
//!
//! ```
//! use qsim_kernel::*;
//! use qsim_model::{Model, ModelErrors, Override};
//! use qsim_sweep::{Sweep, SweepOptions, VarySpec};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A closed network built in code: N jobs think 1 s, then visit a CPU
//! // (10 ms). The override `population=N` sets N.
//! let model = |ov: &[Override]| -> Result<Model, ModelErrors> {
//!     let n: u32 = ov.iter().find(|o| o.path == "population").map_or(1, |o| o.value.parse().unwrap());
//!     let spec = NetworkSpec {
//!         stations: vec![StationSpec {
//!             name: "cpu".into(),
//!             kind: StationKind::Queue { servers: 1, discipline: Discipline::Fcfs },
//!             service: vec![Some(Dist::exponential(0.01).unwrap())],
//!             speed: None,
//!         }],
//!         classes: vec![ClassSpec {
//!             name: "user".into(),
//!             workload: Workload::Closed { population: n, think: Some(Dist::exponential(1.0).unwrap()) },
//!             routing: Routing::Sequence(vec![0]),
//!             priority: 0,
//!         }],
//!         ..NetworkSpec::default()
//!     };
//!     Ok(Model {
//!         network: Network::new(spec).unwrap(),
//!         run: RunConfig { stop: Stop::Jobs(20_000), warmup: Warmup::Jobs(2_000), replications: 3, ..RunConfig::default() },
//!         derived: vec![], description: String::new(), path: "code".into(), warnings: vec![],
//!     })
//! };
//! let vary = vec![VarySpec::parse("population=20..200:20")?];
//! let sweep = Sweep::with_source("cpu", model, &[], vary, SweepOptions::default())?;
//! let outcome = sweep.run(&mut ())?;
//! let summary = outcome.summary.unwrap();
//! // Exact MVA puts the maximum of X/R at N = 53 (below N* = (D + Z)/D =
//! // 101, where the CPU saturates at 100/s).
//! let knee = summary.knee.unwrap();
//! let n = knee.point.get("population").unwrap().number().unwrap();
//! assert!((40.0..=60.0).contains(&n), "knee at {n}");
//! assert!(summary.peak.unwrap().throughput_per_s > 95.0);
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

pub mod bistable;
pub mod boundary;
pub mod edge;
pub mod error;
pub mod grid;
pub mod hysteresis;
mod keyed;
pub mod knee;
pub mod output;
pub mod record;
mod run;
pub mod setting;
pub mod spec;
pub mod summary;
pub mod whatif;

pub use bistable::BistableRange;
pub use error::SweepError;
pub use grid::{Grid, Shard, ShardError, point_seed};
pub use hysteresis::{Hysteresis, HysteresisOptions, run_hysteresis};
pub use knee::{Candidate, CurvePoint, KneeReport};
pub use output::{Manifest, SavedSweep, merge};
pub use record::{ItemMetrics, MetricValues, Point, PointBistability, PointMetrics, PointRecord};
pub use run::{ModelFile, ModelSource, Observer, Progress, Sweep, SweepOptions, SweepOutcome};
pub use setting::Setting;
pub use spec::{SpecError, VarySpec, VaryValue};
pub use summary::{Axes, SweepSummary, Workload};
pub use whatif::{
    Baseline, Change, ChangeResult, Difference, PointDifference, RunSettings, WhatIfError,
    WhatIfOptions, WhatIfReport, what_if, what_if_network,
};
