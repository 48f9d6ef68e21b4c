//! Watching and stopping a run from another thread.
//!
//! A [`Control`] is shared (behind an `Arc`) between the caller and the
//! replications of [`crate::run_with`]. The replications add the jobs they
//! complete every 2^16 events and stop at that point when the caller has
//! called [`Control::cancel`] (e.g. from a Ctrl-C handler), so a progress
//! bar and an interrupt cost one compare the event loop already makes.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Progress counters and a cancel flag shared with a running simulation.
#[derive(Debug, Default)]
pub struct Control {
    jobs_done: AtomicU64,
    replications_done: AtomicU32,
    replications_planned: AtomicU32,
    cancel: AtomicBool,
}

impl Control {
    /// A control with zero progress, not cancelled.
    pub fn new() -> Control {
        Control::default()
    }

    /// Asks every replication watching this control to stop at its next
    /// check (within 2^16 events).
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// True once [`Control::cancel`] has been called.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// Completed jobs (warm-up included) over all replications so far;
    /// updated every 2^16 events, so it lags a little.
    pub fn jobs_done(&self) -> u64 {
        self.jobs_done.load(Ordering::Relaxed)
    }

    /// Replications that have finished.
    pub fn replications_done(&self) -> u32 {
        self.replications_done.load(Ordering::Relaxed)
    }

    /// Replications of the rounds started so far (see
    /// [`crate::ReplicationRounds`]): it grows when a precision target
    /// adds a round, so a progress bar can say which round runs.
    pub fn replications_planned(&self) -> u32 {
        self.replications_planned.load(Ordering::Relaxed)
    }

    pub(crate) fn plan_replications(&self, n: u32) {
        self.replications_planned.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn add_jobs(&self, n: u64) {
        self.jobs_done.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn replication_finished(&self) {
        self.replications_done.fetch_add(1, Ordering::Relaxed);
    }
}
