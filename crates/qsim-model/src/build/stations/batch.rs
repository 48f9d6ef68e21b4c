//! A `batch` (group commit) station's own keys.

use crate::build::{Names, Table};
use crate::ctx::Ctx;
use crate::format::Bound::{Inclusive, None as Open};
use crate::format::{KindDescriptor, ServiceKeys, Shape, Supports, key};
use qsim_kernel::names as metric_names;
use qsim_kernel::{BatchSpec, StationKind};

pub(crate) static KIND: KindDescriptor = KindDescriptor {
    name: "batch",
    doc: "one server that serves waiting jobs in groups (group commit)",
    service: ServiceKeys::Service,
    keys: &[
        key("max_batch", Shape::Count(1), Some("1"), "largest group"),
        key(
            "max_wait_s",
            Shape::Number(Inclusive(0.0), Open),
            None,
            "wait for a fuller group, s",
        ),
        key(
            "per_job_s",
            Shape::Number(Inclusive(0.0), Open),
            Some("0"),
            "time added per job in a group, s",
        ),
    ],
    supports: Supports {
        capacity: false,
        speed_curve: false,
        speedup: "service and per_job_s divided by f",
        exact_theory: false,
        budget: "one event per group",
        tails: true,
        overload: false,
    },
    metrics: &[metric_names::MEAN_BATCH_SIZE, metric_names::BATCHES_PER_S],
};

fn read(ctx: &mut Ctx<'_>, t: Table<'_, '_>) -> Option<BatchSpec> {
    let max_batch = t.opt(ctx, "max_batch", 1, |ctx, n, p| {
        ctx.count(n, p, "a batch size")
    });
    let max_wait_s = t.opt(ctx, "max_wait_s", None, |ctx, n, p| ctx.f64(n, p).map(Some));
    let per_job_s = t.opt(ctx, "per_job_s", 0.0, |ctx, n, p| ctx.f64(n, p));
    Some(BatchSpec {
        max_batch: max_batch?,
        max_wait_s: max_wait_s?,
        per_job_s: per_job_s?,
    })
}

/// Reads the kind for the registry.
pub(super) fn read_kind(ctx: &mut Ctx<'_>, _: &Names<'_>, t: Table<'_, '_>) -> Option<StationKind> {
    read(ctx, t).map(StationKind::Batch)
}
