//! Exact and approximate analytic solutions of queueing models, for checking
//! qsim's simulations against known answers and for the `qsim solve` and
//! `qsim fit` commands.
//!
//! This crate stands alone: it knows nothing of the simulation kernel or of
//! the model file format. Inputs are plain numbers and small structs, every
//! input is validated (bad input gives an [`Error`], never a panic) and every
//! result is a plain struct that implements `serde::Serialize`. Rates are per
//! second and times in seconds, as the names say.
//!
//! # Overview
//!
//! * [`single`] — one queue: M/M/1, M/M/c (Erlang C, waiting and response
//!   time distributions), M/M/c/K, Erlang B, M/G/1 (Pollaczek–Khinchine), M/M/∞.
//! * [`mva`] — closed networks: exact single-class MVA with multi-server and
//!   load-dependent stations ([`mva::exact`]), exact multi-class MVA
//!   ([`mva::exact_multiclass`]) and the Schweitzer–Bard approximation
//!   ([`mva::schweitzer`]).
//! * [`bounds`] — asymptotic and balanced job bounds.
//! * [`jackson`] — open Jackson networks and mixed open/closed networks.
//! * [`usl`] — the Universal Scalability Law: model, least-squares fit with
//!   standard errors, CSV measurements, a TOML speed snippet for a model.
//! * [`amdahl`] — Amdahl's and Gustafson's laws.
//! * [`ctmc`] — a small Markov-chain solver and exact solutions of small
//!   closed networks by state enumeration (used to cross-check MVA).
//!
//! # Example
//!
//! An M/M/1 queue at 80% load, and the same server seen as a closed network:
//!
//! ```
//! use qsim_analytic::{mva, single};
//!
//! let q = single::mm1(8.0, 10.0)?;
//! assert!((q.response_time_s - 0.5).abs() < 1e-12);
//! assert!((q.mean_jobs - 4.0).abs() < 1e-12);
//! let p99 = single::mm1_response_time_percentile_s(8.0, 10.0, 0.99)?;
//! assert!((p99 - 100f64.ln() / 2.0).abs() < 1e-12);
//!
//! // One job alone in a closed loop with 0.9 s think time: X = 1 / (0.1 + 0.9).
//! let net = [mva::Station::queue("cpu", 0.1)];
//! let solution = mva::exact(&net, 0.9, 5)?;
//! assert!((solution.points[0].throughput_per_s - 1.0).abs() < 1e-12);
//! # Ok::<(), qsim_analytic::Error>(())
//! ```

#![warn(missing_docs)]

pub mod amdahl;
pub mod bounds;
pub mod ctmc;
mod error;
pub mod jackson;
pub mod mva;
pub mod single;
pub mod usl;
pub mod usl_ci;

pub use error::{Error, Result};
