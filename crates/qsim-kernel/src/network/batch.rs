//! `batch` (group commit) stations: parameters and range rules.

use super::{Check, Field, fmt_num};
use crate::dist::MAX_TIME_S;

/// Parameters of a `batch` (group commit) station.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchSpec {
    /// Largest number of jobs served together, at least 1.
    pub max_batch: u32,
    /// When the server is free and fewer than `max_batch` wait, how long to
    /// wait for more before starting; `None` starts at once.
    pub max_wait_s: Option<f64>,
    /// Service time added per job in the batch, seconds (>= 0).
    pub per_job_s: f64,
}

impl BatchSpec {
    pub(super) fn check(&self, c: &mut Check<'_>) {
        if self.max_batch == 0 {
            c.error(
                &[Field::Key("max_batch")],
                "expected a batch size >= 1, found 0",
            );
        }
        if let Some(w) = self.max_wait_s {
            c.time(&[Field::Key("max_wait_s")], w);
        }
        c.time(&[Field::Key("per_job_s")], self.per_job_s);
    }
}

/// `expected a time in seconds >= 0, found -1` unless `v` is one, within
/// [`MAX_TIME_S`] (the longest time the simulation clock resolves finely).
pub(super) fn time_message(v: f64) -> Option<String> {
    if !(v.is_finite() && v >= 0.0) {
        Some(format!(
            "expected a time in seconds >= 0, found {}",
            fmt_num(v)
        ))
    } else if v > MAX_TIME_S {
        Some(format!(
            "expected a time of at most 1e9 s (an f64 simulation clock cannot resolve short times next to longer ones), found {}",
            fmt_num(v)
        ))
    } else {
        None
    }
}
