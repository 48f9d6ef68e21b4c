//! `[stations.NAME]`: what every station has (kind, service, speed), then
//! the kind's own keys, read in the kind's file.

mod batch;
mod delay;
mod fork;
mod latch;
mod link;
pub(super) mod queue;

use super::{Names, Table, speed::speed};
use crate::ctx::{Ctx, child};
use crate::did_you_mean;
use crate::dists::dist;
use crate::format::{KindDescriptor, STATION_COMMON};
use crate::tree::{Entry, Node, Origin, subtree_origin};
use qsim_kernel::{Capacity, StationKind, StationSpec};
use std::path::Path;

/// Reads a kind's own keys into its `StationKind`.
type ReadKind = fn(&mut Ctx<'_>, &Names<'_>, Table<'_, '_>) -> Option<StationKind>;

/// Reads a kind's capacity: `Some(None)` without one, `None` after an error.
type ReadCapacity = fn(&mut Ctx<'_>, Table<'_, '_>) -> Option<Option<Capacity>>;

/// A registered kind: its descriptor and its readers.
pub(crate) struct Registered {
    kind: &'static KindDescriptor,
    read: ReadKind,
    capacity: Option<ReadCapacity>,
}

/// Every station kind: its descriptor is the one place that declares it
/// (keys, what it supports, metrics), beside its reader. A new kind is a
/// file here with its `KIND` and `read_kind`, and one line in this list.
#[rustfmt::skip]
static KINDS: &[Registered] = &[
    Registered { kind: &delay::KIND, read: delay::read_kind, capacity: None },
    Registered { kind: &queue::KIND, read: queue::read_kind, capacity: Some(queue::capacity) },
    Registered { kind: &latch::KIND, read: latch::read_kind, capacity: None },
    Registered { kind: &batch::KIND, read: batch::read_kind, capacity: None },
    Registered { kind: &link::KIND, read: link::read_kind, capacity: None },
    Registered { kind: &fork::FORK, read: fork::read_fork_kind, capacity: None },
    Registered { kind: &fork::JOIN, read: fork::read_join_kind, capacity: None },
];

/// Every station kind, in the order the docs and messages list them.
pub fn station_kinds() -> Vec<&'static KindDescriptor> {
    KINDS.iter().map(|r| r.kind).collect()
}

/// The descriptor of kind `name`.
pub fn station_kind(name: &str) -> Option<&'static KindDescriptor> {
    registered(name).map(|r| r.kind)
}

fn registered(name: &str) -> Option<&'static Registered> {
    KINDS.iter().find(|r| r.kind.name == name)
}

/// The names of every station kind.
pub fn station_kind_names() -> Vec<&'static str> {
    KINDS.iter().map(|r| r.kind.name).collect()
}

/// Every key any station kind accepts (for a station whose kind is unknown).
pub fn all_station_keys() -> Vec<&'static str> {
    let mut all: Vec<&str> = STATION_COMMON.iter().map(|k| k.name).collect();
    for r in KINDS {
        for k in r.kind.keys {
            if !all.contains(&k.name) {
                all.push(k.name);
            }
        }
    }
    all
}

pub(super) fn station(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    class_names: &[&str],
    name: &str,
    node: &Node,
    base: &Path,
    capacity: &mut Option<qsim_kernel::Capacity>,
) -> (Option<StationSpec>, Vec<bool>) {
    let path = child("stations", name);
    let t = Table { node, path: &path };
    let nc = class_names.len();
    let mut covered = vec![false; nc];
    if ctx.table(node, &path, "a station").is_none() {
        return (None, covered);
    }
    let kind_names = station_kind_names();
    let kind = t.req(
        ctx,
        "kind",
        &format!("the station kind, one of: {}", kind_names.join(", ")),
        |ctx, k, p| ctx.choice(k, p, &kind_names),
    );
    let kind_name = kind.unwrap_or("?");
    let registered = kind.and_then(registered);
    let descriptor = registered.map(|r| r.kind);
    ctx.check_keys(
        node,
        &path,
        &descriptor.map_or_else(all_station_keys, KindDescriptor::key_names),
        &if kind.is_some() {
            format!("a {kind_name} station")
        } else {
            "a station".to_string()
        },
    );
    let mut ok = kind.is_some();

    // Service times.
    let takes_service = descriptor.is_none_or(KindDescriptor::takes_service);
    let mut service: Vec<Option<qsim_kernel::Dist>> = vec![None; nc];
    if takes_service {
        let svc_key = match (t.get("service"), t.get("rtt")) {
            (Some(_), Some(r)) => {
                ctx.error(
                    &r.origin,
                    &child(&path, "rtt"),
                    "rtt is another name for service; expected only one of them",
                );
                ok = false;
                None
            }
            (Some(s), None) => Some(("service", s)),
            (None, Some(r)) => Some(("rtt", r)),
            (None, None) => None,
        };
        if let Some((key, s)) = svc_key {
            match dist(ctx, s, &child(&path, key), base) {
                Some(d) => service.iter_mut().for_each(|x| *x = Some(d.clone())),
                None => ok = false,
            }
            covered.iter_mut().for_each(|c| *c = true);
        }
        if let Some(by) = t.get("service_by_class") {
            let p = child(&path, "service_by_class");
            if let Some(entries) = ctx.table(by, &p, "a table of class = distribution") {
                for e in entries {
                    let Some(ci) = class_of(ctx, class_names, e, &child(&p, &e.key)) else {
                        ok = false;
                        continue;
                    };
                    covered[ci] = true;
                    match dist(ctx, &e.node, &child(&p, &e.key), base) {
                        Some(d) => service[ci] = Some(d),
                        None => ok = false,
                    }
                }
                let named = |c: &&str| entries.iter().any(|e| e.key == *c);
                if let Some((key, s)) = svc_key
                    && class_names.iter().all(named)
                {
                    // Every class has its own service: `service` is read by none.
                    ctx.warn(
                        &s.origin,
                        &child(&path, key),
                        format!(
                            "{key} has no effect: service_by_class gives every class its own; remove {key} or a class from service_by_class"
                        ),
                    );
                }
            } else {
                ok = false;
            }
        }
    }

    let speed = match t.get("speed") {
        Some(s) if takes_service => {
            let sp = speed(ctx, s, &child(&path, "speed"));
            if sp.is_none() {
                ok = false;
            }
            sp
        }
        _ => None,
    };

    if speed.is_some() {
        ignored_service_override(ctx, node, &path);
    }

    let kind = registered.and_then(|r| (r.read)(ctx, names, t));
    if !ok {
        return (None, covered);
    }
    if let Some(read_capacity) = registered.and_then(|r| r.capacity) {
        match read_capacity(ctx, t) {
            Some(cap) => *capacity = cap,
            None => return (None, covered),
        }
    }
    let spec = kind.map(|kind| StationSpec {
        name: name.to_string(),
        kind,
        service,
        speed,
    });
    (spec, covered)
}

/// With a speed curve the curve's rates set how fast a station serves and
/// its service distribution only gives the shape of the work (each draw is
/// divided by the mean), so an override of the service alone changes
/// nothing: refused, with what to change instead. (A whole station set by
/// one override is not refused: its curve is new too.)
/// The index of the class that the entry `e` (at `at`) of a table keyed
/// by class names; an unknown name is reported, with the closest one.
fn class_of(ctx: &mut Ctx<'_>, class_names: &[&str], e: &Entry, at: &str) -> Option<usize> {
    let ci = class_names.iter().position(|c| *c == e.key);
    if ci.is_none() {
        let hint = did_you_mean(&e.key, class_names).map(|s| format!("did you mean `{s}`?"));
        ctx.error_hint(
            &e.key_origin,
            at,
            format!(
                "no class named `{}`; expected one of: {}",
                e.key,
                class_names.join(", ")
            ),
            hint,
        );
    }
    ci
}

fn ignored_service_override(ctx: &mut Ctx<'_>, node: &Node, path: &str) {
    let station_set = matches!(node.origin, Origin::Set(..));
    for key in ["service", "rtt", "service_by_class"] {
        let Some(svc) = node.get(key) else { continue };
        let origin = subtree_origin(svc);
        if station_set || !matches!(origin, Origin::Set(..)) || !only_scale_set(svc) {
            continue;
        }
        ctx.error_hint(
            &origin,
            &child(path, key),
            format!(
                "changing {key} of a station with a speed curve has no effect: the curve's rates set how fast {path} serves, its {key} only gives the shape of the work"
            ),
            Some(format!(
                "to make it faster scale the curve's rates ({}=*1.25 for a USL curve, each table point's rate for a table), or compare with qsim whatif MODEL --speedup 25% --stations {}",
                child(&child(&child(path, "speed"), "usl"), "lambda"),
                path.trim_start_matches("stations.")
            )),
        );
    }
}

/// Keys of a distribution that scale it without changing its shape.
const SCALE_KEYS: &[&str] = &["mean", "value", "scale", "mu", "rate_per_s"];

/// True when every part of `svc` set by an override is a scale key (an
/// override that changes the shape, e.g. `dist` or `scv`, has an effect).
fn only_scale_set(svc: &Node) -> bool {
    let Some(entries) = svc.table() else {
        return false;
    };
    entries.iter().all(|e| {
        let set = matches!(subtree_origin(&e.node), Origin::Set(..));
        if !set {
            return true;
        }
        if e.node.table().is_some() {
            // service_by_class: one distribution per class.
            only_scale_set(&e.node)
        } else {
            SCALE_KEYS.contains(&e.key.as_str())
        }
    })
}
