//! A class's route: a fixed sequence (`route = [...]`) or a routing table
//! (`[classes.NAME.routing]`, rows `from = { to = probability }`). The
//! reader resolves names and checks that the class's jobs reach a row at
//! every station and can leave; probabilities are the kernel's rules.

use super::{ClassIn, Names, fork_info};
use crate::ctx::{Ctx, child};
use crate::tree::{Node, Origin, V};
use qsim_kernel::{Routing, StationSpec, Target};

pub(super) fn routing(ctx: &mut Ctx<'_>, class: &Class<'_, '_>) -> Option<Routing> {
    let c = class.c;
    let path = c.path.as_str();
    let node = c.node;
    match (node.get("route"), node.get("routing")) {
        (Some(r), None) => class.sequence(ctx, r),
        (None, Some(_)) if node.get("repeat").is_some() => {
            let p = child(path, "repeat");
            ctx.error(
                &node.get("repeat")?.origin,
                &p,
                "`repeat` repeats a fixed route; expected route = [...] with it, or a routing table without it",
            );
            None
        }
        (None, Some(rt)) => class.table(ctx, rt),
        (Some(r), Some(_)) => {
            ctx.error(
                &r.origin,
                &child(path, "route"),
                "found both route and routing; expected one of them (route is a fixed sequence, routing a table of probabilities)",
            );
            None
        }
        (None, None) => {
            ctx.error(
                &node.origin,
                path,
                "missing the route; expected route = [\"station\", ...] or a routing table",
            );
            None
        }
    }
}

/// A routing table's rows: where new interactions go (`source`), where
/// jobs go from each station, which stations have a row, and where each
/// station is first routed to (for located errors).
struct Rows {
    entry: Option<Vec<(Target, f64)>>,
    from: Vec<Vec<(Target, f64)>>,
    row_given: Vec<bool>,
    first_ref: Vec<Option<(Origin, String)>>,
}

/// One class as it is read (class `ci`, its table `c`), with the model's
/// names, its stations and, per station and class, whether a service key
/// covers the class (`covered`): what the class's reader and every
/// routing check need.
pub(super) struct Class<'a, 'n> {
    pub names: &'a Names<'n>,
    pub stations: &'a [Option<StationSpec>],
    pub covered: &'a [Vec<bool>],
    pub ci: usize,
    pub c: &'a ClassIn<'n>,
}

impl Class<'_, '_> {
    /// Reports a visit to a station that has no service time for the class.
    fn check_service(&self, ctx: &mut Ctx<'_>, id: usize, origin: &Origin, p: &str) -> bool {
        let names = self.names;
        // A kind without service keys (fork, join) takes no time of its
        // own; an unknown kind ("?") was reported where it was read.
        let timeless = super::stations::station_kind(names.kind_of(id))
            .is_none_or(|d| matches!(d.service, crate::format::ServiceKeys::None));
        if timeless || self.covered[id][self.ci] {
            return true;
        }
        let sname = &names.stations[id].0;
        ctx.error_hint(
            origin,
            p,
            format!(
                "class {} is routed to station {sname}, which has no service time for it",
                self.c.name
            ),
            Some(format!(
                "add service = {{ ... }} or service_by_class.{} to [stations.{sname}]",
                self.c.name
            )),
        );
        false
    }

    /// A fixed route, `route = [...]`.
    fn sequence(&self, ctx: &mut Ctx<'_>, r: &Node) -> Option<Routing> {
        let (names, path, node) = (self.names, self.c.path.as_str(), self.c.node);
        let p = child(path, "route");
        let repeat = node.get("repeat").map(|n| (n, child(path, "repeat")));
        let flat = super::route::read(ctx, names, r, &p, repeat, None)?;
        // Each station named is checked once, at its first mention.
        let mut ok = true;
        let mut checked = vec![false; names.stations.len()];
        for (&id, &item) in flat.seq.iter().zip(&flat.item) {
            if !std::mem::replace(&mut checked[id], true) {
                let (o, ip) = &flat.at[item as usize];
                ok &= self.check_service(ctx, id, o, ip);
            }
        }
        if !ok {
            return None;
        }
        // A fork must be followed by its join, where the parent waits.
        let mut told = vec![false; flat.at.len()];
        for (i, &id) in flat.seq.iter().enumerate() {
            if let Some(f) = fork_info(self.stations, id) {
                let item = flat.item[i] as usize;
                let (o, ip) = &flat.at[item];
                let first = !std::mem::replace(&mut told[item], true);
                if first {
                    for t in fork_visits(f) {
                        ok &= self.check_service(ctx, t, o, ip);
                    }
                }
                if flat.seq.get(i + 1) != Some(&f.join) {
                    ok = false;
                    if first {
                        ctx.error(
                            o,
                            ip,
                            format!(
                                "fork {} must be followed in the route by its join {}, where the job waits for its sub-jobs",
                                names.stations[id].0, names.stations[f.join].0
                            ),
                        );
                    }
                }
            }
        }
        ok.then_some(Routing::Sequence(flat.seq))
    }

    /// A routing table, `[classes.NAME.routing]`.
    fn table(&self, ctx: &mut Ctx<'_>, rt: &Node) -> Option<Routing> {
        let node = self.c.node;
        let p = child(&self.c.path, "routing");
        let rows = self.rows(ctx, rt, &p)?;
        let switched = node.get("population").is_none()
            && node.get("arrival").is_none()
            && node.get("rate_per_s").is_none()
            && node.get("type").is_none();
        let entry = match rows.entry.clone() {
            None if switched => Some(Vec::new()),
            e => e,
        };
        let Some(entry) = entry else {
            ctx.error(
                &rt.origin,
                &p,
                "missing key `source`; expected where a new interaction goes, e.g. source = { cpu = 1.0 }",
            );
            return None;
        };
        let seen = self.reached(ctx, rt, &p, &entry, &rows)?;
        self.check_sink(ctx, rt, &p, &rows.from, &seen);
        Some(Routing::Probabilistic {
            entry,
            from: rows.from,
        })
    }

    /// Reads the rows of the routing table `rt` at `p`.
    fn rows(&self, ctx: &mut Ctx<'_>, rt: &Node, p: &str) -> Option<Rows> {
        let names = self.names;
        let ns = names.stations.len();
        let entries = ctx.table(rt, p, "a routing table: from = { to = probability }")?;
        let mut rows = Rows {
            entry: None,
            from: vec![Vec::new(); ns],
            row_given: vec![false; ns],
            first_ref: vec![None; ns],
        };
        let mut ok = true;
        for e in entries {
            let rp = child(p, &e.key);
            let from_id = if e.key == "source" {
                None
            } else if e.key == "sink" {
                ctx.error(
                    &e.key_origin,
                    &rp,
                    "`sink` is the end of an interaction and has no outgoing routes; expected `source` or a station name",
                );
                ok = false;
                continue;
            } else {
                match names.station_key(ctx, e, &rp, &["source"]) {
                    Some(id) => Some(id),
                    None => {
                        ok = false;
                        continue;
                    }
                }
            };
            if let Some(id) = from_id
                && names.kind_of(id) == "fork"
            {
                let join = names.stations[id]
                    .1
                    .get("join")
                    .and_then(|j| match &j.v {
                        V::Str(s) => Some(s.as_str()),
                        _ => None,
                    })
                    .unwrap_or("(its join)");
                ctx.error(
                    &e.key_origin,
                    &rp,
                    format!(
                        "a fork has no routing row: its sub-jobs go to its `to` stations and the job continues from its join; expected a row for {join} instead"
                    ),
                );
                ok = false;
                continue;
            }
            let Some(branches) = row(ctx, names, &e.node, &rp, &mut rows.first_ref) else {
                ok = false;
                continue;
            };
            match from_id {
                None => rows.entry = Some(branches),
                Some(id) => {
                    rows.from[id] = branches;
                    rows.row_given[id] = true;
                }
            }
        }
        ok.then_some(rows)
    }

    /// Walks the stations the class reaches from `entry`, checking that
    /// each has service for it and a row: which are reached, or None
    /// after an error.
    fn reached(
        &self,
        ctx: &mut Ctx<'_>,
        rt: &Node,
        p: &str,
        entry: &[(Target, f64)],
        rows: &Rows,
    ) -> Option<Vec<bool>> {
        let names = self.names;
        let ns = names.stations.len();
        let mut ok = true;
        let mut seen = vec![false; ns];
        let mut stack: Vec<usize> = entry
            .iter()
            .filter(|b| b.1 > 0.0)
            .filter_map(|b| match b.0 {
                Target::Station(s) => Some(s),
                Target::Exit | Target::Switch { .. } => None,
            })
            .collect();
        let mut sub_only = vec![false; ns];
        while let Some(s) = stack.pop() {
            if seen[s] {
                continue;
            }
            seen[s] = true;
            let (o, rp) = rows.first_ref[s]
                .clone()
                .unwrap_or((rt.origin.clone(), p.to_string()));
            ok &= self.check_service(ctx, s, &o, &rp);
            if let Some(f) = fork_info(self.stations, s) {
                for t in fork_visits(f) {
                    ok &= self.check_service(ctx, t, &o, &rp);
                    if !seen[t] && t < ns {
                        sub_only[t] = true;
                    }
                }
                stack.push(f.join);
                continue;
            }
            sub_only[s] = false;
            if !rows.row_given[s] {
                ctx.error_hint(
                    &rt.origin,
                    p,
                    format!(
                        "class {} reaches station {} but the routing has no row for it; expected where jobs go after {}",
                        self.c.name, names.stations[s].0, names.stations[s].0
                    ),
                    Some(format!("add {} = {{ sink = 1.0 }} or similar", names.stations[s].0)),
                );
                ok = false;
                continue;
            }
            for b in &rows.from[s] {
                if let (Target::Station(t), true) = (b.0, b.1 > 0.0) {
                    stack.push(t);
                }
            }
        }
        ok.then_some(seen)
    }

    /// Every reached station must be able to reach the sink: a walk back
    /// from the sink over the reversed edges (linear, where repeated sweeps
    /// would be quadratic on a long chain). Reports the first that cannot.
    fn check_sink(
        &self,
        ctx: &mut Ctx<'_>,
        rt: &Node,
        p: &str,
        from: &[Vec<(Target, f64)>],
        seen: &[bool],
    ) {
        let names = self.names;
        let ns = names.stations.len();
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); ns];
        let mut leaves = vec![false; ns];
        let mut stack = Vec::new();
        for s in 0..ns {
            if let Some(f) = fork_info(self.stations, s) {
                preds[f.join].push(s);
                continue;
            }
            for b in from[s].iter().filter(|b| b.1 > 0.0) {
                match b.0 {
                    Target::Exit if !leaves[s] => {
                        leaves[s] = true;
                        stack.push(s);
                    }
                    Target::Exit => {}
                    Target::Station(t) => preds[t].push(s),
                    // Where a switched job goes from there is checked over
                    // (class, station) pairs by the kernel.
                    Target::Switch { .. } if !leaves[s] => {
                        leaves[s] = true;
                        stack.push(s);
                    }
                    Target::Switch { .. } => {}
                }
            }
        }
        while let Some(t) = stack.pop() {
            for &s in &preds[t] {
                if !std::mem::replace(&mut leaves[s], true) {
                    stack.push(s);
                }
            }
        }
        for s in 0..ns {
            if seen[s] && !leaves[s] && fork_info(self.stations, s).is_none() {
                ctx.error(
                    &rt.origin,
                    p,
                    format!(
                        "jobs of class {} that reach station {} can never get to sink; expected a route from {} that ends at sink",
                        self.c.name, names.stations[s].0, names.stations[s].0
                    ),
                );
                // The routing is still given to the kernel, whose rules may
                // say why (a negative probability, say).
                break;
            }
        }
    }
}

/// One routing row: `{ to = probability, ... }` (that they sum to 1 is
/// the kernel's rule).
fn row(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    node: &Node,
    path: &str,
    first_ref: &mut [Option<(Origin, String)>],
) -> Option<Vec<(Target, f64)>> {
    let entries = ctx.table(node, path, "a table of destination = probability")?;
    let mut out = Vec::new();
    let mut ok = true;
    for e in entries {
        let bp = child(path, &e.key);
        let target = if e.key == "sink" {
            Some(Target::Exit)
        } else if e.key == "source" {
            ctx.error(
                &e.key_origin,
                &bp,
                "`source` is where interactions start and cannot be routed to; expected a station name or sink",
            );
            None
        } else if !names.ids.contains_key(&e.key)
            && let Some((cname, sname)) = e.key.split_once(':')
        {
            switch_target(ctx, names, e, &bp, cname, sname)
        } else {
            names
                .station_key(ctx, e, &bp, &["sink"])
                .map(Target::Station)
        };
        // Whether it is a probability is the kernel's rule.
        let p = ctx.f64(&e.node, &bp);
        match (target, p) {
            (Some(t), Some(p)) => {
                if let Target::Station(s) = t
                    && first_ref[s].is_none()
                {
                    first_ref[s] = Some((e.key_origin.clone(), bp.clone()));
                }
                out.push((t, p));
            }
            _ => ok = false,
        }
    }
    if !ok {
        return None;
    }
    if out.is_empty() {
        ctx.error(
            &node.origin,
            path,
            "expected at least one destination, found none",
        );
        return None;
    }
    Some(out)
}

/// A branch `"CLASS:STATION"`: the job goes to STATION as a job of CLASS.
fn switch_target(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    e: &crate::tree::Entry,
    path: &str,
    cname: &str,
    sname: &str,
) -> Option<Target> {
    let Some(class) = names.classes.iter().position(|c| c.name == cname) else {
        let known: Vec<&str> = names.classes.iter().map(|c| c.name.as_str()).collect();
        let hint =
            crate::did_you_mean(cname, &known).map(|s| format!("did you mean `{s}:{sname}`?"));
        ctx.error_hint(
            &e.key_origin,
            path,
            format!(
                "no class named `{cname}` (a branch \"CLASS:STATION\" switches the job to CLASS at STATION); expected one of: {}",
                known.join(", ")
            ),
            hint,
        );
        return None;
    };
    let node = Node {
        v: V::Str(sname.to_string()),
        origin: e.key_origin.clone(),
    };
    let station = names.station(ctx, &node, path, &[])?;
    Some(Target::Switch { station, class })
}

/// The stations a fork's sub-jobs visit: its targets and the stations of
/// its fixed sub-job routes (each once).
fn fork_visits(f: &qsim_kernel::ForkSpec) -> Vec<usize> {
    let mut out: Vec<usize> = f.targets.iter().map(|t| t.0).collect();
    out.extend(f.routes.iter().flatten());
    out.sort_unstable();
    out.dedup();
    out
}
