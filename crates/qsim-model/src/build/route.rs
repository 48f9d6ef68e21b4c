//! Fixed routes: `route = ["cpu", "disk"]`, repeated with `repeat = N`,
//! whose items may themselves be repeated routes
//! (`{ route = ["cpu", "latch"], repeat = 200 }`). A route is read once and
//! then written out step by step, after its length is known to fit.

use super::Names;
use crate::ctx::{Ctx, child};
use crate::tree::{Node, Origin, V};
use qsim_kernel::MAX_ROUTE_STEPS;

/// A fixed route, flattened.
pub(super) struct Flat {
    /// The stations in visit order.
    pub seq: Vec<usize>,
    /// For each step, which written name it comes from (an index into `at`).
    pub item: Vec<u32>,
    /// Where each station name of the route is written, and its key path.
    pub at: Vec<(Origin, String)>,
}

enum Step {
    Station(usize, u32),
    Repeat(Vec<Step>, u64),
}

/// The route at `node` (an array), repeated `repeat` times, with `[i]` in
/// names replaced by `index` when given (`[3]`). `None` after reporting.
pub(super) fn read(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    node: &Node,
    path: &str,
    repeat: Option<(&Node, String)>,
    index: Option<&str>,
) -> Option<Flat> {
    let mut at = Vec::new();
    let times = match &repeat {
        Some((n, p)) => u64::from(ctx.count(n, p, "a number of repetitions")?),
        None => 1,
    };
    if times == 0 {
        let (n, p) = repeat.as_ref()?;
        ctx.error(
            &n.origin,
            p,
            "expected a number of repetitions >= 1, found 0",
        );
        return None;
    }
    let steps = items(ctx, names, node, path, index, &mut at)?;
    let len = length(&steps).saturating_mul(times);
    if len > MAX_ROUTE_STEPS as u64 {
        ctx.error_hint(
            &node.origin,
            path,
            format!(
                "this route has {len} steps with its repetitions; expected at most {MAX_ROUTE_STEPS}"
            ),
            Some(
                "a fixed route is stored step by step; use a routing table for very long loops"
                    .into(),
            ),
        );
        return None;
    }
    let mut out = Flat {
        seq: Vec::with_capacity(len as usize),
        item: Vec::with_capacity(len as usize),
        at,
    };
    for _ in 0..times {
        flatten(&steps, &mut out);
    }
    Some(out)
}

fn items(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    node: &Node,
    path: &str,
    index: Option<&str>,
    at: &mut Vec<(Origin, String)>,
) -> Option<Vec<Step>> {
    let list = super::non_empty_array(
        ctx,
        node,
        path,
        "station names",
        "station, found an empty route",
    )?;
    let mut out = Vec::new();
    let mut ok = true;
    for (i, it) in list.iter().enumerate() {
        let ip = format!("{path}[{i}]");
        match &it.v {
            V::Table(_) => {
                ctx.check_keys(it, &ip, &["route", "repeat"], "a repeated part of a route");
                let Some(inner) = ctx.required(it, &ip, "route", "the stations to repeat") else {
                    ok = false;
                    continue;
                };
                let rp = child(&ip, "repeat");
                let Some(rn) = ctx.required(it, &ip, "repeat", "a number of repetitions >= 1")
                else {
                    ok = false;
                    continue;
                };
                let times = match ctx.count(rn, &rp, "a number of repetitions") {
                    Some(0) => {
                        ctx.error(
                            &rn.origin,
                            &rp,
                            "expected a number of repetitions >= 1, found 0",
                        );
                        None
                    }
                    t => t,
                };
                let steps = items(ctx, names, inner, &child(&ip, "route"), index, at);
                match (steps, times) {
                    (Some(s), Some(t)) => out.push(Step::Repeat(s, u64::from(t))),
                    _ => ok = false,
                }
            }
            V::Str(name) if index.is_some() && name.contains("[i]") => {
                let concrete = Node {
                    v: V::Str(name.replace("[i]", index.unwrap_or_default())),
                    origin: it.origin.clone(),
                };
                match names.station(ctx, &concrete, &ip, &[]) {
                    Some(id) => {
                        out.push(Step::Station(id, at.len() as u32));
                        at.push((it.origin.clone(), ip));
                    }
                    None => ok = false,
                }
            }
            _ => match names.station(ctx, it, &ip, &[]) {
                Some(id) => {
                    out.push(Step::Station(id, at.len() as u32));
                    at.push((it.origin.clone(), ip));
                }
                None => ok = false,
            },
        }
    }
    ok.then_some(out)
}

fn length(steps: &[Step]) -> u64 {
    steps.iter().fold(0u64, |acc, s| {
        acc.saturating_add(match s {
            Step::Station(..) => 1,
            Step::Repeat(inner, n) => length(inner).saturating_mul(*n),
        })
    })
}

fn flatten(steps: &[Step], out: &mut Flat) {
    for s in steps {
        match s {
            Step::Station(id, item) => {
                out.seq.push(*id);
                out.item.push(*item);
            }
            Step::Repeat(inner, n) => {
                for _ in 0..*n {
                    flatten(inner, out);
                }
            }
        }
    }
}

/// The station groups a route's names index with `[i]` (`instance[i].cpu`
/// names group `instance`), in the order first written.
pub(super) fn indexed_groups(node: &Node, out: &mut Vec<String>) {
    match &node.v {
        V::Str(s) => {
            if let Some(k) = s.find("[i]") {
                let g = s[..k].to_string();
                if !out.contains(&g) {
                    out.push(g);
                }
            }
        }
        V::Array(items) => items.iter().for_each(|n| indexed_groups(n, out)),
        V::Table(_) => {
            if let Some(r) = node.get("route") {
                indexed_groups(r, out);
            }
        }
        _ => {}
    }
}
