//! `queue` and `delay` stations: their parameters and range rules.

use super::{Check, Field, NetworkSpec, StationId, StationKind, Workload};

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

/// A finite waiting room: at most `limit` jobs present at a queue station
/// (queued and in service together).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    /// Most jobs present, at least the station's servers.
    pub limit: u32,
    /// What happens to a job that arrives when `limit` jobs are present.
    pub when_full: WhenFull,
}

/// What happens to a job arriving at a full station.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WhenFull {
    /// The job is lost: an open job leaves the network, a closed job goes
    /// back to think (its interaction is not counted as a completion), a
    /// fork sub-job goes straight to its join.
    #[default]
    Drop,
}

/// The rules of the capacity of station `s` in a whole network: a fixed-speed
/// queue that is not PS, at least as many places as servers, outside every
/// region, and visited by no closed class without a think time (a lost job
/// would start again at once, at the same instant, for ever).
pub(super) fn check_capacity(c: &mut Check<'_>, spec: &NetworkSpec, s: StationId, cap: Capacity) {
    let st = &spec.stations[s];
    let at = [Field::Key("capacity")];
    match st.kind {
        StationKind::Queue {
            servers,
            discipline,
        } if discipline != Discipline::Ps && st.speed.is_none() => {
            if cap.limit < servers {
                c.error(
                    &at,
                    format!(
                        "expected a capacity >= servers ({servers}), found {}: capacity counts the jobs in service too",
                        cap.limit
                    ),
                );
            }
        }
        _ => {
            c.error(
                &at,
                "capacity is supported on fixed-speed queue stations with discipline fcfs, lcfs or priority (not ps, not with a speed curve, not on other kinds)",
            );
            return;
        }
    }
    if let Some(r) = spec.regions.iter().find(|r| r.stations.contains(&s)) {
        c.error(
            &at,
            format!(
                "a station with a capacity cannot be inside a region (it is a member of `{}`): a lost job would have to leave the region too",
                r.name
            ),
        );
    }
    for (ci, class) in spec.classes.iter().enumerate() {
        if let Workload::Closed { think, .. } = &class.workload
            && think.as_ref().is_none_or(|d| d.mean() == 0.0)
            && spec.stations_reached(ci).get(s).copied().unwrap_or(false)
        {
            c.error(
                &at,
                format!(
                    "closed class `{}` has no think time and visits this station: a lost job would start again at the same instant for ever; give the class a think time",
                    class.name
                ),
            );
        }
    }
}
