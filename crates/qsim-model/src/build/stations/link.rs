//! A `link` station's own keys (its round-trip time is the common `service`,
//! also spelled `rtt`).

use crate::build::{Names, Table};
use crate::ctx::Ctx;
use crate::format::{KindDescriptor, ServiceKeys, Shape, Supports, key};
use qsim_kernel::names as metric_names;
use qsim_kernel::{LinkSpec, StationKind};

pub(crate) static KIND: KindDescriptor = KindDescriptor {
    name: "link",
    doc: "a connection with round trips in flight, each carrying a group of jobs",
    service: ServiceKeys::ServiceOrRtt,
    keys: &[
        key(
            "pipeline",
            Shape::Count(1),
            Some("1"),
            "round trips in flight",
        ),
        key(
            "max_batch",
            Shape::Count(1),
            Some("1"),
            "jobs carried per round trip",
        ),
    ],
    supports: Supports {
        capacity: false,
        speed_curve: false,
        speedup: "round-trip time divided by f",
        exact_theory: true,
        budget: "one event per round trip",
        tails: true,
        overload: false,
    },
    metrics: &[metric_names::MEAN_BATCH_SIZE, metric_names::BATCHES_PER_S],
};

fn read(ctx: &mut Ctx<'_>, t: Table<'_, '_>) -> Option<LinkSpec> {
    let pipeline = t.opt(ctx, "pipeline", 1, |ctx, n, p| {
        ctx.count(n, p, "a pipeline depth")
    });
    let max_batch = t.opt(ctx, "max_batch", 1, |ctx, n, p| {
        ctx.count(n, p, "a batch size")
    });
    Some(LinkSpec {
        pipeline: pipeline?,
        max_batch: max_batch?,
    })
}

/// Reads the kind for the registry.
pub(super) fn read_kind(ctx: &mut Ctx<'_>, _: &Names<'_>, t: Table<'_, '_>) -> Option<StationKind> {
    read(ctx, t).map(StationKind::Link)
}
