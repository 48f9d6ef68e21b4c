//! qsim: a discrete-event simulator for queueing networks whose service
//! centers slow down under contention. This facade re-exports the crates.
pub use qsim_kernel as kernel;
