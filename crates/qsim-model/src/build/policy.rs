//! A class's routing policies, `[classes.NAME.routing_policy]`: for a row
//! of its routing table (`source` or a station), how the row picks among
//! its stations: `{ policy = "round_robin" }`, `{ policy =
//! "shortest_queue" }` or `{ policy = "power_of_d", d = 2 }`. The row's
//! probabilities are then the stations' weights. Whether the row exists and
//! suits the policy is the kernel's rule.

use super::{ClassIn, Names};
use crate::ctx::{Ctx, child};
use qsim_kernel::{RoutingPolicy, RowPolicy};

/// The policy names of the model format.
pub(crate) const POLICIES: &[&str] = &["round_robin", "shortest_queue", "power_of_d"];

/// The policies of class `ci` (empty without a `routing_policy` table or
/// after an error, which is reported).
pub(super) fn policies(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    ci: usize,
    c: &ClassIn<'_>,
) -> Vec<RowPolicy> {
    let Some(node) = c.node.get("routing_policy") else {
        return Vec::new();
    };
    let path = child(&c.path, "routing_policy");
    if c.node.get("routing").is_none() {
        ctx.error(
            &node.origin,
            &path,
            "a routing policy chooses among the stations of a routing row; expected a routing table ([...routing]) with it",
        );
        return Vec::new();
    }
    let Some(entries) = ctx.table(node, &path, "a table of row = { policy = ... }") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries {
        let rp = child(&path, &e.key);
        let row = if e.key == "source" {
            None
        } else {
            match names.station_key(ctx, e, &rp, &["source"]) {
                Some(id) => Some(id),
                None => continue,
            }
        };
        if ctx
            .table(&e.node, &rp, "a row's policy: { policy = ... }")
            .is_none()
        {
            continue;
        }
        ctx.check_keys(
            &e.node,
            &rp,
            &crate::format::ROUTING_POLICY.names(),
            "a routing policy",
        );
        let Some(pn) = ctx.required(
            &e.node,
            &rp,
            "policy",
            &format!("one of {}", POLICIES.join(", ")),
        ) else {
            continue;
        };
        let Some(name) = ctx.choice(pn, &child(&rp, "policy"), POLICIES) else {
            continue;
        };
        let d = e.node.get("d");
        let policy = match (name, d) {
            ("power_of_d", Some(dn)) => {
                match ctx.count(dn, &child(&rp, "d"), "a number of stations sampled") {
                    Some(d) => RoutingPolicy::PowerOfD { d },
                    None => continue,
                }
            }
            ("power_of_d", None) => {
                ctx.error_hint(
                    &e.node.origin,
                    &rp,
                    "missing key `d`; expected how many stations power_of_d samples",
                    Some("add d = 2".to_string()),
                );
                continue;
            }
            (_, Some(dn)) => {
                ctx.error(
                    &dn.origin,
                    &child(&rp, "d"),
                    format!("`d` is the sample size of power_of_d; {name} takes no d"),
                );
                continue;
            }
            ("round_robin", None) => RoutingPolicy::RoundRobin,
            _ => RoutingPolicy::ShortestQueue,
        };
        out.push(RowPolicy {
            class: ci,
            row,
            policy,
        });
    }
    out
}
