//! A `queue` station's own keys.

use crate::build::{Names, Table};
use crate::ctx::Ctx;
use crate::format::Bound::{Exclusive, Inclusive, None as Open};
use crate::format::{CAPACITY_STEP, KindDescriptor, ServiceKeys, Shape, Supports, key};
use qsim_kernel::names as metric_names;
use qsim_kernel::{Capacity, Discipline, StationKind, WhenFull};

const WHEN_FULL: &[&str] = &["drop", "block"];
const DISCIPLINES: &[&str] = &["fcfs", "ps", "lcfs", "priority", "preemptive_priority"];

pub(crate) static KIND: KindDescriptor = KindDescriptor {
    name: "queue",
    doc: "servers sharing one queue, served by a discipline",
    service: ServiceKeys::Service,
    keys: &[
        key("servers", Shape::Count(1), Some("1"), "identical servers"),
        key(
            "discipline",
            Shape::Words(DISCIPLINES),
            Some("\"fcfs\""),
            "queue discipline",
        ),
        key(
            "capacity",
            Shape::Count(1),
            None,
            "most jobs present, in service included",
        ),
        key(
            "when_full",
            Shape::Words(WHEN_FULL),
            Some("\"drop\""),
            "a job arriving at a full station is lost (drop) or its sender holds it until there is room (block, blocking after service); needs capacity",
        ),
        key(
            "weights",
            Shape::MapOf(&Shape::Number(Exclusive(0.0), Open)),
            None,
            "discriminatory PS (discipline = \"ps\"): each class's weight, by class name (CLASS = w, 1 for a class not named); a job runs at its class's weight over the weights of the jobs present",
        ),
        // Overload (read in `build::overload`).
        key(
            "patience",
            Shape::Def("distribution"),
            None,
            "a waiting job leaves unserved after this long (reneging)",
        ),
        key(
            "balk_at",
            Shape::Count(1),
            None,
            "an arrival does not join when at least this many jobs are present",
        ),
        key(
            "balk_probabilities",
            Shape::ArrayOf(&Shape::Number(Inclusive(0.0), Inclusive(1.0)), 1),
            None,
            "probability of not joining with n jobs present, by n; the last for any larger n",
        ),
        key(
            "shed_after_s",
            Shape::Number(Exclusive(0.0), Open),
            None,
            "a job whose wait passed this when its service would start is dropped",
        ),
        key(
            "lcfs_from",
            Shape::Count(1),
            None,
            "adaptive LIFO (fcfs queue): with at least this many jobs present, a free server takes the newest waiting job",
        ),
        // Capacity over time (read in `build::workload::station_schedule`).
        key(
            "schedule",
            Shape::ArrayOf(&Shape::Table(&CAPACITY_STEP), 1),
            None,
            "servers or speed over time ([[stations.NAME.schedule]]): an outage, a failover, a fail-slow disk",
        ),
    ],
    supports: Supports {
        capacity: true,
        speed_curve: true,
        speedup: "service times divided by f (a speed curve's rates multiplied)",
        exact_theory: true,
        budget: "one event per visit",
        tails: true,
        overload: true,
    },
    metrics: &[
        metric_names::DROPPED_PER_S,
        metric_names::LOSS_PROBABILITY,
        metric_names::BLOCKING_PROBABILITY,
    ],
};

pub(super) fn read_kind(ctx: &mut Ctx<'_>, _: &Names<'_>, t: Table<'_, '_>) -> Option<StationKind> {
    let servers = t.opt(ctx, "servers", 1, |ctx, n, p| {
        ctx.count(n, p, "a number of servers")
    });
    let discipline = t.opt(ctx, "discipline", Discipline::Fcfs, |ctx, n, p| {
        ctx.choice(n, p, DISCIPLINES).map(|d| match d {
            "ps" => Discipline::Ps,
            "lcfs" => Discipline::Lcfs,
            "priority" => Discipline::Priority,
            "preemptive_priority" => Discipline::PreemptivePriority,
            _ => Discipline::Fcfs,
        })
    });
    Some(StationKind::Queue {
        servers: servers?,
        discipline: discipline?,
    })
}

/// A queue's `capacity` and `when_full`: `Some(None)` when it has no
/// capacity, `None` after an error.
pub(super) fn capacity(ctx: &mut Ctx<'_>, t: Table<'_, '_>) -> Option<Option<Capacity>> {
    let limit = match t.get("capacity") {
        Some(n) => Some(ctx.count(
            n,
            &crate::ctx::child(t.path, "capacity"),
            "a number of jobs",
        )?),
        None => None,
    };
    let when_full = match t.get("when_full") {
        Some(n) => {
            let p = crate::ctx::child(t.path, "when_full");
            let when_full = match ctx.choice(n, &p, WHEN_FULL)? {
                "block" => WhenFull::Block,
                _ => WhenFull::Drop,
            };
            if limit.is_none() {
                ctx.error(
                    &n.origin,
                    &p,
                    "when_full applies to a station with a capacity; expected a `capacity` key next to it",
                );
                return None;
            }
            when_full
        }
        None => WhenFull::Drop,
    };
    Some(limit.map(|limit| Capacity { limit, when_full }))
}

/// A queue's `weights` (discriminatory PS), one per class with 1 for a
/// class not named: empty without the key, `None` after an error.
pub(crate) fn weights(
    ctx: &mut Ctx<'_>,
    t: Table<'_, '_>,
    class_names: &[&str],
) -> Option<Vec<f64>> {
    let Some(node) = t.get("weights") else {
        return Some(Vec::new());
    };
    let p = crate::ctx::child(t.path, "weights");
    let entries = ctx.table(node, &p, "a table of class = weight")?;
    let mut w = vec![1.0; class_names.len()];
    let mut ok = true;
    for e in entries {
        let at = crate::ctx::child(&p, &e.key);
        let Some(ci) = super::class_of(ctx, class_names, e, &at) else {
            ok = false;
            continue;
        };
        match ctx.positive(&e.node, &at, "a weight") {
            Some(x) if x.is_finite() => w[ci] = x,
            Some(_) => {
                ctx.error(&e.node.origin, &at, "expected a finite weight");
                ok = false;
            }
            None => ok = false,
        }
    }
    ok.then_some(w)
}
