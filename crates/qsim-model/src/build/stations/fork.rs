//! `fork` and `join` stations' keys.

use crate::build::{Names, Table};
use crate::ctx::{Ctx, child};
use crate::tree::{Node, V};
use qsim_kernel::{ForkSpec, JoinSpec, Spread};

pub(super) const FORK_KEYS: &[&str] = &["fan_out", "to", "spread", "join"];
pub(super) const JOIN_KEYS: &[&str] = &["quorum"];

pub(super) fn read_join(ctx: &mut Ctx<'_>, t: Table<'_, '_>) -> Option<JoinSpec> {
    let quorum = t.opt(ctx, "quorum", None, |ctx, n, p| {
        ctx.count(n, p, "a quorum").map(Some)
    });
    Some(JoinSpec { quorum: quorum? })
}

pub(super) fn read_fork(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    t: Table<'_, '_>,
) -> Option<ForkSpec> {
    let fan_out = t.req(
        ctx,
        "fan_out",
        "the number of sub-jobs per job (>= 1)",
        |ctx, n, p| ctx.count(n, p, "a number of sub-jobs"),
    );
    let targets = t.req(
        ctx,
        "to",
        "the target stations: [\"a\", \"b\"] or { a = 0.5, b = 0.5 }",
        |ctx, n, p| targets(ctx, names, n, p),
    );
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
    })
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
