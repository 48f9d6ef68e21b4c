//! The workload of a class (or of `[workload]`, the single-class form):
//! open with an arrival process, or closed with a population.

use super::Table;
use crate::ctx::{Ctx, child};
use crate::dists::dist;
use crate::tree::{Node, Origin, subtree_origin};
use qsim_kernel::Workload;
use std::path::Path;

/// The keys that describe a workload, in every class and in `[workload]`.
pub(super) const KEYS: &[&str] = &[
    "type",
    "arrival",
    "rate_per_s",
    "population",
    "think",
    "route",
    "repeat",
    "routing",
];

/// What was read of a workload.
pub(super) struct Read {
    /// The workload, if every key could be read.
    pub workload: Option<Workload>,
    /// As much of it as the kernel's range rules can check when a key could
    /// not be read (a population whose think time is wrong).
    pub partial: Option<Workload>,
    /// For an open workload: where its arrivals are given, and the key path.
    pub arrival_at: Option<(Origin, String)>,
}

/// The workload at `t`.
pub(super) fn read(ctx: &mut Ctx<'_>, t: Table<'_, '_>, base: &Path) -> Read {
    let (node, path) = (t.node, t.path);
    // The type may be left out when the other keys make it obvious.
    let ty = match t.get("type") {
        Some(n) => ctx.choice(n, &child(path, "type"), &["open", "closed"]),
        None if t.get("population").is_some() => Some("closed"),
        None if t.get("arrival").is_some() || t.get("rate_per_s").is_some() => Some("open"),
        None => {
            ctx.error(
                &node.origin,
                path,
                "missing key `type`; expected \"open\" (with arrival) or \"closed\" (with population)",
            );
            None
        }
    };
    let mut out = Read {
        workload: None,
        partial: None,
        arrival_at: None,
    };
    match ty {
        Some("open") => {
            not_for(ctx, t, &["population", "think"], "closed", "open");
            (out.workload, out.arrival_at) = open(ctx, t, base);
        }
        Some(_) => {
            not_for(ctx, t, &["arrival", "rate_per_s"], "open", "closed");
            let population = t.req(
                ctx,
                "population",
                "the number of jobs (>= 1)",
                |ctx, n, p| ctx.count(n, p, "a number of jobs"),
            );
            let think = t.opt(ctx, "think", None, |ctx, n, p| {
                dist(ctx, n, p, base).map(Some)
            });
            match (population, think) {
                (Some(population), Some(think)) => {
                    out.workload = Some(Workload::Closed { population, think })
                }
                (Some(population), None) => {
                    out.partial = Some(Workload::Closed {
                        population,
                        think: None,
                    })
                }
                _ => {}
            }
        }
        None => {}
    }
    out
}

/// Reports keys of the other type of workload.
fn not_for(ctx: &mut Ctx<'_>, t: Table<'_, '_>, keys: &[&str], is_for: &str, this: &str) {
    for k in keys {
        if let Some(n) = t.get(k) {
            ctx.error(
                &n.origin,
                &child(t.path, k),
                format!("`{k}` is for {is_for} workloads; this workload has type = \"{this}\""),
            );
        }
    }
}

fn open(
    ctx: &mut Ctx<'_>,
    t: Table<'_, '_>,
    base: &Path,
) -> (Option<Workload>, Option<(Origin, String)>) {
    let at = |n: &Node, key: &str| Some((subtree_origin(n), child(t.path, key)));
    match (t.get("arrival"), t.get("rate_per_s")) {
        (Some(a), None) => {
            let p = child(t.path, "arrival");
            let w = dist(ctx, a, &p, base).map(|d| Workload::Open { interarrival: d });
            (w, at(a, "arrival"))
        }
        (None, Some(r)) => {
            // The shorthand for exponential inter-arrival times; the
            // distribution's own rule would speak of a mean, so the rate is
            // checked here, in its own terms.
            let p = child(t.path, "rate_per_s");
            let w = ctx.positive(r, &p, "arrival rate").and_then(|r| {
                qsim_kernel::Dist::exponential(1.0 / r)
                    .ok()
                    .map(|d| Workload::Open { interarrival: d })
            });
            (w, at(r, "rate_per_s"))
        }
        (Some(_), Some(r)) => {
            ctx.error(
                &r.origin,
                &child(t.path, "rate_per_s"),
                "found both arrival and rate_per_s; expected one of them (rate_per_s is the shorthand for exponential inter-arrival times)",
            );
            (None, None)
        }
        (None, None) => {
            ctx.error(
                &t.node.origin,
                t.path,
                "missing key `arrival`; an open workload needs arrival = { dist = \"exponential\", mean = ... } or rate_per_s = ...",
            );
            (None, None)
        }
    }
}
