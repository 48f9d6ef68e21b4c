//! Queueing theory of qsim networks: what can be said about a
//! [`qsim_kernel::NetworkSpec`] without simulating it.
//!
//! * [`visits`] — the traffic equations (the one visit-ratio solver: fork
//!   sub-jobs and fixed sequences included).
//! * [`chains`] — class switching: a chain (classes joined by switching)
//!   as the one class that has its exact answers.
//! * [`kind`] — per station kind, its peak completion rate and the least and
//!   most time a visit can take; open-workload utilization.
//! * [`product_form`] — whether the exact methods apply, and why not.
//! * [`closed`] — a closed class as an MVA network, what exact MVA would
//!   cost (refused before allocating when too much), bistability.
//! * [`solution`] — figures of a whole network: MVA, open and mixed
//!   product-form networks, M/G/1.
//! * [`bounds`] — throughput and response-time bounds that hold for every
//!   station kind (batch and link included), or say why one is missing.
//! * [`relaxation`] — how long an open network of queues takes to forget
//!   its start, and whether a run measured long enough after it.
//!
//! The formulas themselves live in `qsim-analytic`, which knows nothing of
//! the kernel; this crate maps networks onto them.
//!
//! # Example
//!
//! A batch station (up to 4 jobs per 10 ms flush) with 2 jobs: at most 2
//! jobs can share a flush, so throughput is at most 2 / 10 ms = 200/s, not
//! the 400/s a full batch would give.
//!
//! ```
//! use qsim_kernel::{BatchSpec, ClassSpec, Dist, NetworkSpec, Routing, StationKind, StationSpec, Workload};
//!
//! let spec = NetworkSpec {
//!     stations: vec![StationSpec {
//!         name: "disk".into(),
//!         kind: StationKind::Batch(BatchSpec { max_batch: 4, max_wait_s: None, per_job_s: 0.0 }),
//!         service: vec![Some(Dist::deterministic(0.010)?)],
//!         speed: None,
//!     }],
//!     classes: vec![ClassSpec {
//!         name: "tx".into(),
//!         workload: Workload::Closed { population: 2, think: None },
//!         routing: Routing::Sequence(vec![0]),
//!         priority: 0,
//!     }],
//!     ..Default::default()
//! };
//! let b = qsim_theory::bounds::closed_bounds(&spec, 0, 2)?.expect("one closed class");
//! assert!((b.throughput_upper_per_s - 200.0).abs() < 1e-9);
//! assert!(!qsim_theory::product_form::reasons(&spec).is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod bounds;
pub mod chains;
pub mod closed;
pub mod kind;
pub mod product_form;
pub mod relaxation;
pub mod solution;
pub mod visits;

use thiserror::Error;

/// Why a network could not be solved.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// A formula refused its inputs.
    #[error(transparent)]
    Analytic(#[from] qsim_analytic::Error),
    /// A formula refused the inputs of one station.
    #[error("station {station}: {source}")]
    Station {
        /// The station.
        station: String,
        /// What the formula said.
        source: qsim_analytic::Error,
    },
    /// An open station with a speed curve has no steady state: its
    /// arrivals reach the curve's peak, or its rate with many jobs present.
    #[error("station {station}: no steady state: {why}")]
    NoSteadyState {
        /// The station.
        station: String,
        /// In words: the arrival rate against the curve's peak or limit.
        why: String,
    },
    /// The class's jobs never leave.
    #[error("class {class}: its routing never ends an interaction")]
    Trapped {
        /// The class.
        class: String,
    },
    /// A closed-class method was asked of an open class.
    #[error("class {class} is not closed")]
    NotClosed {
        /// The class.
        class: String,
    },
    /// The network is outside the exact methods.
    #[error("not product-form: {}", .0.join("; "))]
    NotProductForm(Vec<String>),
    /// Exact MVA would take too much memory or time.
    #[error(
        "population {population}: exact MVA would need about {} of memory and {:.1e} steps; the limits are {} and {:.1e} steps",
        human_bytes(cost.memory_bytes),
        cost.steps,
        human_bytes(*memory_limit_bytes),
        step_limit
    )]
    TooLarge {
        /// The population asked for.
        population: u32,
        /// The estimate.
        cost: closed::MvaCost,
        /// The memory limit, bytes.
        memory_limit_bytes: f64,
        /// The step limit.
        step_limit: f64,
    },
    /// Multi-class MVA would visit too many population vectors.
    #[error(
        "multi-class MVA would visit about {states:.1e} population vectors × stations; lower the populations"
    )]
    TooManyStates {
        /// Population vectors times stations.
        states: f64,
    },
}

/// Bytes in KiB, MiB, GiB or TiB for messages.
pub fn human_bytes(b: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", units[u])
}
