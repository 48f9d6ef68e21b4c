//! A `queue` station's own keys.

use crate::build::Table;
use crate::ctx::Ctx;
use qsim_kernel::{Capacity, Discipline, StationKind, WhenFull};

pub(super) const KEYS: &[&str] = &[
    "servers",
    "discipline",
    "capacity",
    "when_full",
    // Overload (see `build::overload`).
    "patience",
    "balk_at",
    "balk_probabilities",
    "shed_after_s",
];
const WHEN_FULL: &[&str] = &["drop", "block"];
const DISCIPLINES: &[&str] = &["fcfs", "ps", "lcfs", "priority"];

pub(super) fn read(ctx: &mut Ctx<'_>, t: Table<'_, '_>) -> Option<StationKind> {
    let servers = t.opt(ctx, "servers", 1, |ctx, n, p| {
        ctx.count(n, p, "a number of servers")
    });
    let discipline = t.opt(ctx, "discipline", Discipline::Fcfs, |ctx, n, p| {
        ctx.choice(n, p, DISCIPLINES).map(|d| match d {
            "ps" => Discipline::Ps,
            "lcfs" => Discipline::Lcfs,
            "priority" => Discipline::Priority,
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
