//! A `delay` station: every job served at once (an infinite-server
//! station); it has no keys of its own.

use crate::build::{Names, Table};
use crate::ctx::Ctx;
use crate::format::{KindDescriptor, ServiceKeys, Supports};
use qsim_kernel::StationKind;

pub(crate) static KIND: KindDescriptor = KindDescriptor {
    name: "delay",
    doc: "every job served at once, no waiting (think time, network latency)",
    service: ServiceKeys::Service,
    keys: &[],
    supports: Supports {
        capacity: false,
        speed_curve: true,
        speedup: "service times divided by f (a speed curve's rates multiplied)",
        exact_theory: true,
        budget: "one event per visit",
        tails: true,
        overload: false,
    },
    metrics: &[],
};

pub(super) fn read_kind(_: &mut Ctx<'_>, _: &Names<'_>, _: Table<'_, '_>) -> Option<StationKind> {
    Some(StationKind::Delay)
}
