//! qsim: a discrete-event simulator for queueing networks whose service
//! centers slow down under contention.
//!
//! This facade re-exports the crates so a capacity-planning program needs one
//! dependency: [`kernel`] (networks, runs, results), [`model`] (the TOML
//! format), [`analytic`] (exact and approximate solutions), [`theory`]
//! (those solutions and bounds applied to a network) and [`report`]
//! (tables, JSON, CSV, charts).
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
//! let config = qsim::kernel::RunConfig { stop: qsim::kernel::Stop::Jobs(20_000), ..model.run.clone() };
//! let results = qsim::kernel::run(&model.network, &config)?;
//! let u = results.stations[0].utilization.mean;
//! assert!((u - 0.5).abs() < 0.05);
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

pub use qsim_analytic as analytic;
pub use qsim_kernel as kernel;
pub use qsim_model as model;
pub use qsim_report as report;
pub use qsim_theory as theory;
