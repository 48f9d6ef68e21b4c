//! `[regions.NAME]`: throttles over a set of stations.

use super::{Names, Table, non_empty_array};
use crate::ctx::{Ctx, child};
use crate::tree::{Entry, Node, V};
use qsim_kernel::{NetworkError, RegionSpec};

/// Every region, by index (`None` for one that could not be read).
pub(super) fn regions(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    root: &Node,
    piece_errors: &mut Vec<NetworkError>,
) -> Vec<Option<RegionSpec>> {
    let Some(r) = root.get("regions") else {
        return Vec::new();
    };
    let Some(entries) = ctx.table(r, "regions", "the regions") else {
        return Vec::new();
    };
    entries
        .iter()
        .enumerate()
        .map(|(r, Entry { key, node, .. })| region(ctx, names, r, key, node, piece_errors))
        .collect()
}

fn region(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    r: usize,
    key: &str,
    node: &Node,
    piece_errors: &mut Vec<NetworkError>,
) -> Option<RegionSpec> {
    let p = child("regions", key);
    ctx.table(node, &p, "a region")?;
    ctx.check_keys(node, &p, &crate::format::REGION.names(), "a region");
    let t = Table { node, path: &p };
    let stations = t.req(
        ctx,
        "stations",
        "the member stations: [\"a\", \"b\"]",
        |ctx, s, sp| {
            let items = non_empty_array(ctx, s, sp, "station names", "station, found none")?;
            let ids: Vec<Option<usize>> = items
                .iter()
                .enumerate()
                .map(|(i, it)| names.station(ctx, it, &format!("{sp}[{i}]"), &[]))
                .collect();
            ids.into_iter().collect::<Option<Vec<_>>>()
        },
    );
    let limit = t.opt(ctx, "limit", None, |ctx, l, lp| match &l.v {
        V::Str(s) if s == "none" => Some(None),
        _ => ctx.count(l, lp, "a limit (or \"none\")").map(Some),
    });
    let Some(stations) = stations else {
        if let Some(limit) = limit {
            piece_errors.extend(qsim_kernel::check_region_limit(r, limit));
        }
        return None;
    };
    Some(RegionSpec {
        name: key.to_string(),
        stations,
        limit: limit?,
    })
}

/// Warns, at a region's table, of regions with limits that routes take in
/// opposite orders: a job holding one while it waits to enter the other,
/// and another job the other way round, can deadlock (the run stops with
/// an error when it happens). Regions nested one inside the other are
/// always taken outer first, so they never warn.
pub(crate) fn order_warnings(ctx: &mut Ctx<'_>, network: &qsim_kernel::Network, root: &Node) {
    let spec = network.spec();
    let nr = spec.regions.len();
    if nr < 2 {
        return;
    }
    let member: Vec<Vec<bool>> = spec
        .regions
        .iter()
        .map(|g| {
            let mut m = vec![false; spec.stations.len()];
            g.stations.iter().for_each(|&s| m[s] = true);
            m
        })
        .collect();
    let size: Vec<usize> = member
        .iter()
        .map(|m| m.iter().filter(|&&x| x).count())
        .collect();
    let inside = |r: usize, s: Option<usize>| s.is_some_and(|s| member[r][s]);
    // edge[a][b]: a move that holds a while it waits for b, as (class, from, to).
    let mut edge = vec![vec![None; nr]; nr];
    for (ci, class) in spec.classes.iter().enumerate() {
        for (from, to) in moves(&class.routing) {
            let mut entering: Vec<usize> = (0..nr)
                .filter(|&r| spec.regions[r].limit.is_some() && inside(r, to) && !inside(r, from))
                .collect();
            entering.sort_by_key(|&r| (std::cmp::Reverse(size[r]), r));
            let mut held: Vec<usize> = (0..nr)
                .filter(|&r| spec.regions[r].limit.is_some() && inside(r, to) && inside(r, from))
                .collect();
            for &b in &entering {
                for &a in &held {
                    edge[a][b].get_or_insert((ci, from, to));
                }
                held.push(b);
            }
        }
    }
    let entries = root.get("regions").and_then(|t| t.table()).unwrap_or(&[]);
    let mut reported = vec![false; nr];
    for r in 0..nr {
        if reported[r] {
            continue;
        }
        let Some(cycle) = cycle_from(&edge, r) else {
            continue;
        };
        let station =
            |s: Option<usize>| s.map_or("outside".to_string(), |s| spec.stations[s].name.clone());
        let steps: Vec<String> = cycle
            .windows(2)
            .map(|w| {
                let (ci, from, to) = edge[w[0]][w[1]].unwrap_or((0, None, None));
                format!(
                    "class {} holds {} while it waits for {} (moving from {} to {})",
                    spec.classes[ci].name,
                    spec.regions[w[0]].name,
                    spec.regions[w[1]].name,
                    station(from),
                    station(to)
                )
            })
            .collect();
        cycle.iter().for_each(|&x| reported[x] = true);
        let origin = entries
            .get(r)
            .filter(|e| e.key == spec.regions[r].name)
            .map_or(crate::tree::Origin::File(0..0), |e| e.key_origin.clone());
        ctx.warn(
            &origin,
            &child("regions", &spec.regions[r].name),
            format!(
                "regions {} are taken in opposite orders, so jobs can deadlock (the run then stops with an error): {}; take overlapping regions in one order on every route, or nest one inside the other",
                cycle[..cycle.len() - 1]
                    .iter()
                    .map(|&x| spec.regions[x].name.as_str())
                    .collect::<Vec<_>>()
                    .join(" and "),
                steps.join("; ")
            ),
        );
    }
}

/// Every move a class's routing can make, `None` standing for outside
/// (thinking or not yet arrived).
fn moves(routing: &qsim_kernel::Routing) -> Vec<(Option<usize>, Option<usize>)> {
    use qsim_kernel::{Routing, Target};
    let at = |t: &Target| match *t {
        Target::Station(s) | Target::Switch { station: s, .. } => Some(s),
        Target::Exit => None,
    };
    match routing {
        Routing::Sequence(route) => {
            let stops: Vec<Option<usize>> = std::iter::once(None)
                .chain(route.iter().map(|&s| Some(s)))
                .chain(std::iter::once(None))
                .collect();
            stops.windows(2).map(|w| (w[0], w[1])).collect()
        }
        Routing::Probabilistic { entry, from } => {
            let rows = std::iter::once((None, entry))
                .chain(from.iter().enumerate().map(|(s, row)| (Some(s), row)));
            rows.flat_map(|(s, row)| {
                row.iter()
                    .filter(|(_, p)| *p > 0.0)
                    .map(move |(t, _)| (s, at(t)))
            })
            .collect()
        }
    }
}

/// The shortest cycle of `edge` through `r` and regions after it, its
/// first region repeated at the end.
fn cycle_from<T>(edge: &[Vec<Option<T>>], r: usize) -> Option<Vec<usize>> {
    // Breadth first from r over regions numbered above it.
    let n = edge.len();
    let mut parent = vec![usize::MAX; n];
    let mut queue = std::collections::VecDeque::from([r]);
    while let Some(x) = queue.pop_front() {
        for y in 0..n {
            if edge[x][y].is_none() {
                continue;
            }
            if y == r {
                // Back from x to r along the parents, then reversed.
                let mut back = Vec::new();
                let mut z = x;
                while z != r {
                    back.push(z);
                    z = parent[z];
                }
                back.reverse();
                return Some([vec![r], back, vec![r]].concat());
            }
            if y > r && parent[y] == usize::MAX {
                parent[y] = x;
                queue.push_back(y);
            }
        }
    }
    None
}
