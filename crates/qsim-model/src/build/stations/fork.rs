//! `fork` and `join` stations' keys.

use crate::build::{Names, Table, route};
use crate::ctx::{Ctx, child};
use crate::format::Bound::{Inclusive, None as Open};
use crate::format::{KindDescriptor, ServiceKeys, Shape, Supports, key};
use crate::tree::{Node, V};
use qsim_kernel::{ForkSpec, JoinSpec, Spread, StationKind};

pub(crate) static FORK: KindDescriptor = KindDescriptor {
    name: "fork",
    doc: "splits a job into sub-jobs that a join collects",
    service: ServiceKeys::None,
    keys: &[
        key("fan_out", Shape::Count(1), None, "sub-jobs per job"),
        key(
            "to",
            Shape::OneOf(&[
                Shape::Names,
                Shape::MapOf(&Shape::Number(Inclusive(0.0), Open)),
            ]),
            None,
            "targets, or target = weight",
        ),
        key(
            "route",
            Shape::Def("route"),
            None,
            "the fixed route of every sub-job; [i] names one per group member",
        ),
        key(
            "repeat",
            Shape::Count(1),
            Some("1"),
            "times the sub-job route is followed",
        ),
        key(
            "spread",
            Shape::Words(&["even", "random"]),
            Some("\"even\""),
            "how sub-jobs pick targets",
        ),
        key("join", Shape::Text, None, "the join station"),
    ],
    supports: Supports {
        capacity: false,
        speed_curve: false,
        speedup: "none: a fork does no work (refused)",
        exact_theory: false,
        budget: "no event; its sub-jobs' memory and visits",
        tails: true,
        overload: false,
    },
    metrics: &[],
};

pub(crate) static JOIN: KindDescriptor = KindDescriptor {
    name: "join",
    doc: "releases a forked job once a quorum of its sub-jobs has arrived",
    service: ServiceKeys::None,
    keys: &[key(
        "quorum",
        Shape::Count(1),
        Some("all"),
        "sub-jobs that release the job",
    )],
    supports: Supports {
        capacity: false,
        speed_curve: false,
        speedup: "none: a join does no work (refused)",
        exact_theory: false,
        budget: "no event",
        tails: true,
        overload: false,
    },
    metrics: &[],
};

fn read_join(ctx: &mut Ctx<'_>, t: Table<'_, '_>) -> Option<JoinSpec> {
    let quorum = t.opt(ctx, "quorum", None, |ctx, n, p| {
        ctx.count(n, p, "a quorum").map(Some)
    });
    Some(JoinSpec { quorum: quorum? })
}

fn read_fork(ctx: &mut Ctx<'_>, names: &Names<'_>, t: Table<'_, '_>) -> Option<ForkSpec> {
    let fan_out = t.req(
        ctx,
        "fan_out",
        "the number of sub-jobs per job (>= 1)",
        |ctx, n, p| ctx.count(n, p, "a number of sub-jobs"),
    );
    let (targets, routes) = match (t.get("to"), t.get("route")) {
        (_, Some(r)) => {
            if let Some(to) = t.get("to") {
                ctx.error(
                    &to.origin,
                    &child(t.path, "to"),
                    "found both to and route; expected one of them (route is the fixed route of every sub-job, and its first station the target)",
                );
            }
            let repeat = t.get("repeat").map(|n| (n, child(t.path, "repeat")));
            match sub_routes(ctx, names, r, &child(t.path, "route"), repeat) {
                Some((targets, routes)) if t.get("to").is_none() => (Some(targets), routes),
                _ => (None, Vec::new()),
            }
        }
        (_, None) => {
            if let Some(rn) = t.get("repeat") {
                ctx.error(
                    &rn.origin,
                    &child(t.path, "repeat"),
                    "`repeat` repeats the fork's sub-job route; expected route = [...] with it",
                );
            }
            let targets = t.req(
                ctx,
                "to",
                "the target stations: [\"a\", \"b\"] or { a = 0.5, b = 0.5 }, or a sub-job route = [...]",
                |ctx, n, p| targets(ctx, names, n, p),
            );
            (targets, Vec::new())
        }
    };
    let spread = t.opt(ctx, "spread", Spread::Even, |ctx, n, p| {
        ctx.choice(n, p, &["even", "random"]).map(|s| match s {
            "random" => Spread::Random,
            _ => Spread::Even,
        })
    });
    let join = t.req(
        ctx,
        "join",
        "the name of the join station that collects the sub-jobs",
        |ctx, j, p| {
            let id = names.station(ctx, j, p, &[])?;
            if names.kind_of(id) != "join" {
                ctx.error(
                    &j.origin,
                    p,
                    format!(
                        "station `{}` is not a join station; expected the name of a station with kind = \"join\"",
                        names.stations[id].0
                    ),
                );
                return None;
            }
            Some(id)
        },
    );
    Some(ForkSpec {
        fan_out: fan_out?,
        targets: targets?,
        spread: spread?,
        join: join?,
        routes,
    })
}

/// The fork's `route`: one fixed route for every sub-job, or, when its
/// names index a station group with `[i]` (`instance[i].cpu`), one route
/// per member; the first station of each is a target (equal weights) and
/// the rest its kernel route.
#[allow(clippy::type_complexity)]
fn sub_routes(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    r: &Node,
    rp: &str,
    repeat: Option<(&Node, String)>,
) -> Option<(Vec<(usize, f64)>, Vec<Vec<usize>>)> {
    let mut groups = Vec::new();
    route::indexed_groups(r, &mut groups);
    let counts: Vec<usize> = groups.iter().map(|g| names.group_size(g)).collect();
    let members = match counts.first() {
        None => None,
        Some(&n) => {
            if let Some(k) = counts.iter().position(|&c| c != n || c == 0) {
                let g = &groups[k];
                let msg = if counts[k] == 0 {
                    format!(
                        "`{g}[i]` names no station group; `[i]` in a fork's route stands for each member of a group defined with count"
                    )
                } else {
                    format!(
                        "the groups indexed with [i] have different sizes ({} has {n} members, {g} has {}); expected groups of one size",
                        groups[0], counts[k]
                    )
                };
                ctx.error(&r.origin, rp, msg);
                return None;
            }
            Some(n)
        }
    };
    let mut targets = Vec::new();
    let mut routes = Vec::new();
    let indices: Vec<Option<String>> = match members {
        None => vec![None],
        Some(n) => (0..n).map(|k| Some(format!("[{k}]"))).collect(),
    };
    for ix in indices {
        let flat = route::read(ctx, names, r, rp, repeat.clone(), ix.as_deref())?;
        let (first, rest) = flat.seq.split_first()?;
        targets.push((*first, 1.0));
        routes.push(rest.to_vec());
    }
    Some((targets, routes))
}

/// `to = ["a", "b"]` (equal weights) or `to = { a = 3, b = 1 }`.
fn targets(ctx: &mut Ctx<'_>, names: &Names<'_>, t: &Node, tp: &str) -> Option<Vec<(usize, f64)>> {
    let mut out = Vec::new();
    let mut ok = true;
    match &t.v {
        V::Array(items) => {
            for (i, it) in items.iter().enumerate() {
                match names.station(ctx, it, &format!("{tp}[{i}]"), &[]) {
                    Some(id) => out.push((id, 1.0)),
                    None => ok = false,
                }
            }
        }
        V::Table(entries) => {
            for e in entries {
                let kp = child(tp, &e.key);
                let id = names.station_key(ctx, e, &kp, &[]);
                let w = ctx.f64(&e.node, &kp);
                match (id, w) {
                    (Some(id), Some(w)) => out.push((id, w)),
                    _ => ok = false,
                }
            }
        }
        other => {
            ctx.error(
                &t.origin,
                tp,
                format!(
                    "expected an array of station names or a table of station = weight, found {}",
                    other.describe()
                ),
            );
            return None;
        }
    }
    if ok && out.is_empty() {
        ctx.error(
            &t.origin,
            tp,
            "expected at least one target station, found none",
        );
        return None;
    }
    ok.then_some(out)
}

/// Reads a fork for the registry.
pub(super) fn read_fork_kind(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    t: Table<'_, '_>,
) -> Option<StationKind> {
    read_fork(ctx, names, t).map(StationKind::Fork)
}

/// Reads a join for the registry.
pub(super) fn read_join_kind(
    ctx: &mut Ctx<'_>,
    _: &Names<'_>,
    t: Table<'_, '_>,
) -> Option<StationKind> {
    read_join(ctx, t).map(StationKind::Join)
}
