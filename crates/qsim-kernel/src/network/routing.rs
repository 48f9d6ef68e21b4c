//! How jobs move: routing tables and fixed sequences, their rules (branches
//! that exist, probabilities in [0, 1] that sum to 1, sub-jobs that reach
//! their join), reachability and visit ratios.

use super::{Check, ClassId, ClassSpec, Field, NetworkSpec, StationId, StationKind};
use super::{ForkSpec, View, fmt_num};

/// Where a job goes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A station.
    Station(StationId),
    /// End of the interaction: a closed job goes back to thinking, an open
    /// job leaves (the model format's `sink`).
    Exit,
}

/// How the jobs of a class move.
#[derive(Clone, Debug)]
pub enum Routing {
    /// Markov routing: `entry` is where a job goes after thinking or arriving
    /// (the model format's `source` row); `from[s]` where it goes after
    /// station `s` (one entry per station; an empty list for stations the
    /// class never visits). Probabilities of each list sum to 1.
    Probabilistic {
        /// Branches taken by a new interaction.
        entry: Vec<(Target, f64)>,
        /// Branches taken on leaving each station.
        from: Vec<Vec<(Target, f64)>>,
    },
    /// A fixed sequence of stations, then exit.
    Sequence(Vec<StationId>),
}

/// The routing rules of one class (its scope is set by the caller).
pub(super) fn check(c: &mut Check<'_>, ci: ClassId, class: &ClassSpec) {
    let ns = c.view.stations.len();
    let routing = Field::Key("routing");
    match &class.routing {
        Routing::Probabilistic { entry, from } => {
            check_row(c, ci, class, &[routing, Field::From(None)], entry);
            if from.len() != ns {
                c.error(
                    &[routing],
                    format!(
                        "expected one branch list per station ({ns}), found {}",
                        from.len()
                    ),
                );
                return;
            }
            for (s, row) in from.iter().enumerate() {
                if !row.is_empty() {
                    check_row(c, ci, class, &[routing, Field::From(Some(s))], row);
                }
            }
            check_sub_routes(c, entry, from);
        }
        Routing::Sequence(seq) => {
            let route = Field::Key("route");
            if seq.is_empty() {
                c.error(
                    &[route],
                    "expected at least one station, found an empty route",
                );
            }
            for (i, &s) in seq.iter().enumerate() {
                let at = [route, Field::Index(i)];
                if c.station(s).is_err() {
                    c.error(&at, format!("no station with index {s}"));
                } else {
                    check_served(c, ci, class, s, &at);
                }
            }
        }
    }
}

/// A class routed to a station must have a service time there (forks and
/// joins take none).
fn check_served(c: &mut Check<'_>, ci: ClassId, class: &ClassSpec, s: StationId, at: &[Field]) {
    let Ok(Some(st)) = c.station(s) else { return };
    let needs = !matches!(st.kind, StationKind::Fork(_) | StationKind::Join(_));
    if needs && st.service.get(ci).is_none_or(|x| x.is_none()) {
        let msg = format!(
            "class {} is routed to station {}, which has no service time for it",
            class.name, st.name
        );
        c.error(at, msg);
    }
}

fn check_row(
    c: &mut Check<'_>,
    ci: ClassId,
    class: &ClassSpec,
    row_at: &[Field],
    branches: &[(super::Target, f64)],
) {
    let mut sum = 0.0;
    let mut all_probabilities = true;
    for &(t, prob) in branches {
        let mut at = row_at.to_vec();
        at.push(Field::To(t));
        if let Target::Station(s) = t {
            if c.station(s).is_err() {
                c.error(&at, format!("no station with index {s}"));
            } else {
                check_served(c, ci, class, s, &at);
            }
        }
        if !(prob.is_finite() && (0.0..=1.0).contains(&prob)) {
            all_probabilities = false;
            c.error(
                &at,
                format!(
                    "expected a probability between 0 and 1, found {}",
                    fmt_num(prob)
                ),
            );
        }
        sum += prob;
    }
    if branches.is_empty() {
        c.error(row_at, "expected at least one destination, found none");
    } else if all_probabilities && (sum - 1.0).abs() > 1e-9 {
        // (A wrong branch already says why the sum is off.)
        c.error(
            row_at,
            format!("probabilities must sum to 1, found {}", fmt_num(sum)),
        );
    }
}

/// Checks the routes of fork sub-jobs of one class with a routing table.
///
/// A sub-job follows its class's row for each station it leaves (stations
/// without a row send it straight to its fork's join), so every station a
/// sub-job can reach must not route to the sink, and must be able to reach
/// the join. Only forks the class can reach are checked: another class may
/// route the same stations differently.
fn check_sub_routes(c: &mut Check<'_>, entry: &[(Target, f64)], from: &[Vec<(Target, f64)>]) {
    let view: &View<'_> = c.view;
    let ns = view.stations.len();
    let fork_of = |s: usize| -> Option<&ForkSpec> {
        match view.stations.get(s).copied().flatten().map(|x| &x.kind) {
            Some(StationKind::Fork(f)) if f.join < ns => Some(f),
            _ => None,
        }
    };
    let next = |s: usize| -> Vec<usize> {
        match fork_of(s) {
            Some(f) => f
                .targets
                .iter()
                .map(|t| t.0)
                .chain([f.join])
                .filter(|&t| t < ns)
                .collect(),
            None => from[s]
                .iter()
                .filter(|b| b.1 > 0.0)
                .filter_map(|b| match b.0 {
                    Target::Station(t) if t < ns => Some(t),
                    _ => None,
                })
                .collect(),
        }
    };
    // Every station the class reaches, as a job or a sub-job.
    let mut reached = vec![false; ns];
    let mut stack: Vec<usize> = entry
        .iter()
        .filter_map(|b| match b.0 {
            Target::Station(t) if t < ns => Some(t),
            _ => None,
        })
        .collect();
    while let Some(s) = stack.pop() {
        if !std::mem::replace(&mut reached[s], true) {
            stack.extend(next(s));
        }
    }
    for fs in (0..ns).filter(|&s| reached[s]) {
        let Some(f) = fork_of(fs) else { continue };
        if !f.routes.is_empty() {
            // Sub-jobs on fixed routes do not follow the rows.
            continue;
        }
        let join = f.join;
        let fname = c.station_name(fs);
        let jname = c.station_name(join);
        let mut seen = vec![false; ns];
        let mut stack: Vec<usize> = f.targets.iter().map(|t| t.0).filter(|&t| t < ns).collect();
        while let Some(s) = stack.pop() {
            if s == join || std::mem::replace(&mut seen[s], true) {
                continue;
            }
            if let Some(g) = fork_of(s) {
                // A nested fork: the sub-job waits at that fork's join.
                stack.push(g.join);
                continue;
            }
            if from[s].iter().any(|b| b.1 > 0.0 && b.0 == Target::Exit) {
                let sname = c.station_name(s);
                c.error(
                    &[Field::Key("routing"), Field::From(Some(s))],
                    format!(
                        "sub-jobs of fork {fname} reach station {sname} whose row routes to the sink; a sub-job ends at its join {jname}, so route it there instead"
                    ),
                );
            }
            stack.extend(next(s));
        }
        // Which of those can get to the join (a station without a row sends
        // the sub-job there directly): a walk back from the join over the
        // reversed edges, linear in the routes.
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); ns];
        let mut ok = vec![false; ns];
        let mut stack = vec![join];
        ok[join] = true;
        for s in (0..ns).filter(|&s| seen[s]) {
            match fork_of(s) {
                Some(g) => preds[g.join].push(s),
                None if from[s].is_empty() => {
                    ok[s] = true;
                    stack.push(s);
                }
                None => next(s).into_iter().for_each(|t| preds[t].push(s)),
            }
        }
        while let Some(t) = stack.pop() {
            for &s in &preds[t] {
                if !std::mem::replace(&mut ok[s], true) {
                    stack.push(s);
                }
            }
        }
        for s in (0..ns).filter(|&s| seen[s] && !ok[s]) {
            let sname = c.station_name(s);
            c.error(
                &[Field::Key("routing"), Field::From(Some(s))],
                format!(
                    "sub-jobs of fork {fname} that reach station {sname} can never get to its join {jname}; expected a route from {sname} that ends at {jname}"
                ),
            );
        }
    }
}

impl NetworkSpec {
    /// Which stations the jobs of `class` can reach (over branches of
    /// positive probability), their fork sub-jobs and joins included; all
    /// false for a class that does not exist. Linear in the routes.
    pub fn stations_reached(&self, class: ClassId) -> Vec<bool> {
        let ns = self.stations.len();
        let mut reached = vec![false; ns];
        let Some(c) = self.classes.get(class) else {
            return reached;
        };
        let station = |t: &(Target, f64)| match *t {
            (Target::Station(s), p) if p > 0.0 && s < ns => Some(s),
            _ => None,
        };
        let mut stack: Vec<StationId> = match &c.routing {
            Routing::Sequence(seq) => seq.iter().copied().filter(|&s| s < ns).collect(),
            Routing::Probabilistic { entry, .. } => entry.iter().filter_map(station).collect(),
        };
        while let Some(s) = stack.pop() {
            if std::mem::replace(&mut reached[s], true) {
                continue;
            }
            if let StationKind::Fork(f) = &self.stations[s].kind {
                stack.extend(
                    f.targets
                        .iter()
                        .map(|t| t.0)
                        .chain([f.join])
                        .chain(f.routes.iter().flatten().copied())
                        .filter(|&t| t < ns),
                );
            }
            if let Routing::Probabilistic { from, .. } = &c.routing
                && let Some(row) = from.get(s)
            {
                stack.extend(row.iter().filter_map(station));
            }
        }
        reached
    }
}
