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
