//! A job class (`[classes.NAME]`, or `[workload]` for a single class): its
//! workload, priority and route.

use super::{Table, routing, workload};
use crate::ctx::Ctx;
use crate::tree::Origin;
use qsim_kernel::{ClassSpec, NetworkError};
use std::path::Path;

pub(super) fn class(
    ctx: &mut Ctx<'_>,
    class: &routing::Class<'_, '_>,
    base: &Path,
    piece_errors: &mut Vec<NetworkError>,
    sla_s: &mut Option<f64>,
) -> (Option<ClassSpec>, Option<(Origin, String)>) {
    let (c, ci) = (class.c, class.ci);
    let path = c.path.as_str();
    let node = c.node;
    if ctx.table(node, path, "a workload").is_none() {
        return (None, None);
    }
    let t = Table { node, path };
    let is_single = path == "workload";
    let keys = if is_single {
        crate::format::WORKLOAD.names()
    } else {
        crate::format::CLASS.names()
    };
    ctx.check_keys(
        node,
        path,
        &keys,
        if is_single { "[workload]" } else { "a class" },
    );
    let switched = !is_single && switched_in(node);
    let workload::Read {
        workload,
        partial,
        arrival_at,
    } = if switched {
        // Its chain's workload, filled in once every class is read.
        workload::Read {
            workload: Some(qsim_kernel::Workload::Closed {
                population: 0,
                think: None,
            }),
            partial: None,
            arrival_at: None,
        }
    } else {
        workload::read(ctx, t, base)
    };
    let priority = if is_single {
        Some(0)
    } else {
        t.opt(ctx, "priority", 0, |ctx, n, p| {
            ctx.int(n, p, i64::from(i32::MIN), i64::from(i32::MAX), "a priority")
                .map(|v| v as i32)
        })
    };
    if !is_single {
        // An error is reported where it is; the class is built without it.
        *sla_s = t
            .opt(ctx, "sla_s", None, |ctx, n, p| {
                ctx.positive(n, p, "time in seconds").map(Some)
            })
            .flatten();
    }
    let routing = routing::routing(ctx, class);
    let spec = match (workload, routing, priority) {
        (Some(workload), Some(routing), Some(priority)) => Some(ClassSpec {
            name: c.name.clone(),
            workload,
            routing,
            priority,
        }),
        (workload, ..) => {
            if let Some(w) = workload.or(partial) {
                piece_errors.extend(qsim_kernel::check_workload(ci, &w));
            }
            None
        }
    };
    (spec, arrival_at)
}

/// A class jobs only switch into: no workload keys and no `source` row
/// (its jobs come from the class their interaction started in).
pub(super) fn switched_in(node: &crate::tree::Node) -> bool {
    let no_workload = [
        "type",
        "arrival",
        "rate_per_s",
        "population",
        "think",
        "schedule",
    ]
    .iter()
    .all(|k| node.get(k).is_none());
    let no_source = node
        .get("routing")
        .is_some_and(|r| r.get("source").is_none());
    no_workload && no_source
}
