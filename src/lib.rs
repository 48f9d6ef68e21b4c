//! qsim: a discrete-event simulator for queueing networks whose service
//! centers slow down under contention.
//!
//! Describe a system as stations (queues, delays, latches, group-commit
//! batches, links, fork/join) visited by classes of jobs, run it, and read
//! throughput, utilization, queue lengths and response-time percentiles,
//! each with a 95% confidence interval. A run is a pure function of the
//! network, its run settings and the root seed: the same seed gives the
//! same numbers at any thread count.
//!
//! This crate is a facade: one dependency gives a capacity-planning program
//! every part of qsim, each re-exported as a module.
//!
//! | module | crate | what it holds |
//! |---|---|---|
//! | [`kernel`] | `qsim-kernel` | [`NetworkSpec`](kernel::NetworkSpec) checked into a [`Network`](kernel::Network), [`RunConfig`](kernel::RunConfig), [`run`](kernel::run), and the plain [`RunResults`](kernel::RunResults) |
//! | [`model`] | `qsim-model` | the TOML model format: [`load_file`](model::load_file), [`load_str`](model::load_str), `--set` overrides, located errors |
//! | [`analytic`] | `qsim-analytic` | exact and approximate answers: M/M/c, Pollaczek–Khinchine, MVA, bounds, the USL fit |
//! | [`theory`] | `qsim-theory` | those answers applied to a network: visit ratios, product-form test, MVA mapping, bounds, bistability |
//! | [`sweep`] | `qsim-sweep` | grids of overrides run in parallel, sharding, merging, knee analysis |
//! | [`report`] | `qsim-report` | tables, JSON, CSV and charts of results |
//!
//! The `qsim` command-line tool is built on the same modules.
//!
//! # A network built in code
//!
//! An M/M/1 queue at utilization 0.5, built from kernel types, run for ten
//! replications and checked against its exact mean response time
//! 1/(μ − λ) = 2 s from [`analytic`]:
//!
//! ```
//! use qsim::kernel::{
//!     ClassSpec, Discipline, Dist, Network, NetworkSpec, Routing, RunConfig, StationKind,
//!     StationSpec, Stop, Warmup, Workload,
//! };
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let spec = NetworkSpec {
//!     stations: vec![StationSpec {
//!         name: "server".into(),
//!         kind: StationKind::Queue { servers: 1, discipline: Discipline::Fcfs },
//!         service: vec![Some(Dist::exponential(1.0)?)], // mean 1 s, one entry per class
//!         speed: None,
//!     }],
//!     classes: vec![ClassSpec {
//!         name: "jobs".into(),
//!         workload: Workload::Open { interarrival: Dist::exponential(2.0)? },
//!         routing: Routing::Sequence(vec![0]), // station indices
//!         priority: 0,
//!     }],
//!     ..NetworkSpec::default()
//! };
//! let network = Network::new(spec)?;
//! // The kernel runs any valid network, even one offered more work than a
//! // station can do, whose queue grows without end (its figures then depend
//! // on the run's length). A model file with such a workload is refused;
//! // a network built in code passes the same check here:
//! assert!(qsim::model::instability(&network).is_empty());
//! let config = RunConfig {
//!     seed: 1,
//!     replications: 10,
//!     stop: Stop::Jobs(20_000),
//!     warmup: Warmup::Jobs(2_000),
//!     ..RunConfig::default()
//! };
//! let results = qsim::kernel::run(&network, &config)?;
//!
//! let exact = qsim::analytic::single::mmc(0.5, 1.0, 1)?;
//! let r = &results.system.response_time_s;
//! // Widen the 95% half-width to 99.9% (t quantiles for 9 degrees of
//! // freedom) so a correct simulator fails this one time in a thousand.
//! assert!((r.mean - exact.response_time_s).abs() <= r.ci95 * 4.781 / 2.262);
//! let u = results.stations[0].utilization;
//! assert!((u.mean - 0.5).abs() <= u.ci95 * 4.781 / 2.262);
//! # Ok(())
//! # }
//! ```
//!
//! # A model from TOML
//!
//! The same queue in the model format of `docs/model-format.md`; error
//! messages name the given file name. The model's own `[simulation]` table
//! (absent here, so defaults) gives the run settings, which a program may
//! change before running:
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let text = r#"
//! [workload]
//! arrival = { dist = "exponential", mean = 2.0 }
//! route = ["server"]
//!
//! [stations.server]
//! kind = "queue"
//! service = { dist = "exponential", mean = 1.0 }
//! "#;
//! let model = qsim::model::load_str("mm1.toml", text, &[])?;
//! let config = qsim::kernel::RunConfig {
//!     replications: 10,
//!     stop: qsim::kernel::Stop::Jobs(20_000),
//!     ..model.run.clone()
//! };
//! let results = qsim::kernel::run(&model.network, &config)?;
//! let station = &results.stations[0];
//! assert_eq!(station.name, "server");
//! // 99.9% interval as above: utilization = arrival rate x mean service = 0.5.
//! let u = station.utilization;
//! assert!((u.mean - 0.5).abs() <= u.ci95 * 4.781 / 2.262);
//! # Ok(())
//! # }
//! ```
//!
//! A bad model is not a panic: [`model::load_str`] returns every problem
//! with its line, column and key path.
//!
//! # A model built in code, with derived metrics
//!
//! [`model::Model::from_spec`] makes a model of a network built in code, with
//! the checks of a model file (the kernel's rules, then stability); its
//! derived metrics, like a file's `[metrics]`, are evaluated by
//! [`model::Model::derived_values`], each with its value or the reason it
//! has none:
//!
//! ```
//! use qsim::kernel::{
//!     ClassSpec, Discipline, Dist, NetworkSpec, Routing, RunConfig, StationKind, StationSpec,
//!     Stop, Workload,
//! };
//! use qsim::model::{DerivedMetric, Expr, Model};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let spec = NetworkSpec {
//!     stations: vec![StationSpec {
//!         name: "server".into(),
//!         kind: StationKind::Queue { servers: 1, discipline: Discipline::Fcfs },
//!         service: vec![Some(Dist::exponential(1.0)?)],
//!         speed: None,
//!     }],
//!     classes: vec![ClassSpec {
//!         name: "jobs".into(),
//!         workload: Workload::Open { interarrival: Dist::exponential(2.0)? },
//!         routing: Routing::Sequence(vec![0]),
//!         priority: 0,
//!     }],
//!     ..NetworkSpec::default()
//! };
//! let run = RunConfig { replications: 4, stop: Stop::Jobs(10_000), ..RunConfig::default() };
//! let mut model = Model::from_spec("mm1", spec, run)?;
//! model.derived.push(DerivedMetric {
//!     name: "idle_fraction".into(),
//!     expr: Expr::parse("1 - stations.server.utilization")?,
//! });
//! model.derived.push(DerivedMetric {
//!     name: "per_idle".into(),
//!     expr: Expr::parse("1 / (1 - 1)")?,
//! });
//! let results = qsim::kernel::run(&model.network, &model.run)?;
//! let values = model.derived_values(&results);
//! let idle = values[0].value.clone()?;
//! let u = results.stations[0].utilization;
//! assert!((idle.mean - (1.0 - u.mean)).abs() < 1e-12);
//! let why = values[1].value.as_ref().unwrap_err();
//! assert_eq!(why.to_string(), "division by zero in replication 0");
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

pub use qsim_analytic as analytic;
pub use qsim_kernel as kernel;
pub use qsim_model as model;
pub use qsim_report as report;
pub use qsim_sweep as sweep;
pub use qsim_theory as theory;
