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

/// Most servers a queue may have: the simulator counts busy servers in
/// f64 sums and keeps `u32::MAX` for a delay station's "infinitely many",
/// so counts stay far below both (2^24, exact in an f32 as well).
pub const MAX_SERVERS: u32 = 1 << 24;

/// The range rules of a queue: at least one server, at most [`MAX_SERVERS`].
pub(super) fn check(c: &mut Check<'_>, servers: u32) {
    if servers == 0 {
        c.error(
            &[Field::Key("servers")],
            "expected a number of servers >= 1, found 0",
        );
    } else if servers > MAX_SERVERS {
        c.error(
            &[Field::Key("servers")],
            format!(
                "expected at most {MAX_SERVERS} servers, found {servers} (for that many, use a delay station)"
            ),
        );
    }
}
