//! What each station kind can do, decided in one exhaustive `match` per
//! question: a new [`StationKind`] variant makes the compiler point to
//! every answer it must give, instead of a `matches!` that silently counts
//! it in or out.

use super::{Discipline, ForkSpec, LatchSpec, StationKind};

impl StationKind {
    /// Whether it takes a service time (a fork and a join take none: they
    /// do no work, so they cannot be sped up or slowed).
    pub fn takes_service(&self) -> bool {
        match self {
            StationKind::Delay
            | StationKind::Queue { .. }
            | StationKind::Latch(_)
            | StationKind::Batch(_)
            | StationKind::Link(_) => true,
            StationKind::Fork(_) | StationKind::Join(_) => false,
        }
    }

    /// Whether a speed curve applies: the simulator times a batch or a
    /// round trip from its service alone, and a fork or join takes no time.
    pub fn takes_speed_curve(&self) -> bool {
        match self {
            StationKind::Delay | StationKind::Queue { .. } | StationKind::Latch(_) => true,
            StationKind::Batch(_)
            | StationKind::Link(_)
            | StationKind::Fork(_)
            | StationKind::Join(_) => false,
        }
    }

    /// Whether every job's service ends with its own event (batches and
    /// links serve groups, forks and joins are instant): the budget counts
    /// one event per visit for these.
    pub fn event_per_visit(&self) -> bool {
        match self {
            StationKind::Delay | StationKind::Queue { .. } | StationKind::Latch(_) => true,
            StationKind::Batch(_)
            | StationKind::Link(_)
            | StationKind::Fork(_)
            | StationKind::Join(_) => false,
        }
    }

    /// Whether it is a plain station, a queue or a delay: no hand-off
    /// costs, round trips, timers or sub-jobs, so its figures are per-job
    /// sums and overload behaviour (clients, patience, balking) runs on it.
    pub fn is_plain(&self) -> bool {
        match self {
            StationKind::Delay | StationKind::Queue { .. } => true,
            StationKind::Latch(_)
            | StationKind::Batch(_)
            | StationKind::Link(_)
            | StationKind::Fork(_)
            | StationKind::Join(_) => false,
        }
    }

    /// Whether clients (timeouts, retries, circuit breakers) run through
    /// it: a job visits it as one job, with or without a speed curve.
    /// Batches and links serve groups, and forks split a request into
    /// sub-jobs that no one attempt owns.
    pub fn takes_clients(&self) -> bool {
        match self {
            StationKind::Delay | StationKind::Queue { .. } | StationKind::Latch(_) => true,
            StationKind::Batch(_)
            | StationKind::Link(_)
            | StationKind::Fork(_)
            | StationKind::Join(_) => false,
        }
    }

    /// Whether a `capacity` (and `when_full`) may be set: on a queue only
    /// (`Network::new` adds that it must be fixed-speed and not PS).
    pub fn takes_capacity(&self) -> bool {
        self.as_queue().is_some()
    }

    /// Whether a station's own overload keys (patience, balking, shedding)
    /// apply: on a queue only.
    pub fn takes_overload(&self) -> bool {
        self.as_queue().is_some()
    }

    /// Whether it is a fork or a join, the two kinds that split and collect
    /// sub-jobs and whose routing is their own.
    pub fn is_fork_or_join(&self) -> bool {
        match self {
            StationKind::Fork(_) | StationKind::Join(_) => true,
            StationKind::Delay
            | StationKind::Queue { .. }
            | StationKind::Latch(_)
            | StationKind::Batch(_)
            | StationKind::Link(_) => false,
        }
    }

    /// Whether it is an infinite-server station (no queueing, so no
    /// utilization of servers).
    pub fn is_delay(&self) -> bool {
        match self {
            StationKind::Delay => true,
            StationKind::Queue { .. }
            | StationKind::Latch(_)
            | StationKind::Batch(_)
            | StationKind::Link(_)
            | StationKind::Fork(_)
            | StationKind::Join(_) => false,
        }
    }

    /// Whether it serves jobs in groups (a batch, or a link's round trips):
    /// it reports a mean group size and groups per second.
    pub fn serves_groups(&self) -> bool {
        match self {
            StationKind::Batch(_) | StationKind::Link(_) => true,
            StationKind::Delay
            | StationKind::Queue { .. }
            | StationKind::Latch(_)
            | StationKind::Fork(_)
            | StationKind::Join(_) => false,
        }
    }

    /// A queue's servers and discipline.
    pub fn as_queue(&self) -> Option<(u32, Discipline)> {
        match self {
            StationKind::Queue {
                servers,
                discipline,
            } => Some((*servers, *discipline)),
            StationKind::Delay
            | StationKind::Latch(_)
            | StationKind::Batch(_)
            | StationKind::Link(_)
            | StationKind::Fork(_)
            | StationKind::Join(_) => None,
        }
    }

    /// A latch's parameters.
    pub fn as_latch(&self) -> Option<&LatchSpec> {
        match self {
            StationKind::Latch(l) => Some(l),
            StationKind::Delay
            | StationKind::Queue { .. }
            | StationKind::Batch(_)
            | StationKind::Link(_)
            | StationKind::Fork(_)
            | StationKind::Join(_) => None,
        }
    }

    /// A latch with a contention mechanism (NUMA hand-off or spinning):
    /// the kind whose speed can fall with the crowd without a speed curve.
    pub fn is_contended_latch(&self) -> bool {
        self.as_latch()
            .is_some_and(|l| l.numa.is_some() || l.spin.is_some())
    }

    /// A fork's parameters.
    pub fn as_fork(&self) -> Option<&ForkSpec> {
        match self {
            StationKind::Fork(f) => Some(f),
            StationKind::Delay
            | StationKind::Queue { .. }
            | StationKind::Latch(_)
            | StationKind::Batch(_)
            | StationKind::Link(_)
            | StationKind::Join(_) => None,
        }
    }
}
