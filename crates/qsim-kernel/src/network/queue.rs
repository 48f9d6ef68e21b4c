//! `queue` and `delay` stations: their parameters and range rules.

use super::{Check, Field};

/// Order in which a `queue` station serves its jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Discipline {
    /// First come, first served.
    #[default]
    Fcfs,
    /// Processor sharing: all present jobs share the capacity equally
    /// (with c servers, each job gets min(1, c/n) of a server).
    Ps,
    /// Last come, first served, non-preemptive.
    Lcfs,
    /// Non-preemptive priority by [`ClassSpec::priority`](super::ClassSpec::priority)
    /// (higher first), FCFS within a priority.
    Priority,
}

/// The range rules of a queue: at least one server.
pub(super) fn check(c: &mut Check<'_>, servers: u32) {
    if servers == 0 {
        c.error(
            &[Field::Key("servers")],
            "expected a number of servers >= 1, found 0",
        );
    }
}
