//! How jobs move: routing tables and fixed sequences, their rules (branches
//! that exist, probabilities in [0, 1] that sum to 1, sub-jobs that reach
//! their join), reachability and visit ratios.

use super::{Check, ClassId, ClassSpec, Field, NetworkSpec, StationId};
use super::{ForkSpec, View, fmt_num};

/// Where a job goes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A station.
    Station(StationId),
    /// End of the interaction: a closed job goes back to thinking, an open
    /// job leaves (the model format's `sink`).
    Exit,
    /// A station, where the job arrives as a job of another class (class
    /// switching, the model format's `"CLASS:STATION"`): from then on it is
    /// served with that class's service times and follows its routing.
    Switch {
        /// The station.
        station: StationId,
        /// The class the job has from then on.
        class: ClassId,
    },
}

impl Target {
    /// The station a branch leads to, if any (switching or not).
    pub fn station(self) -> Option<StationId> {
        match self {
            Target::Station(s) | Target::Switch { station: s, .. } => Some(s),
            Target::Exit => None,
        }
    }
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
            if !(entry.is_empty() && switched_into(c.view, ci)) {
                check_row(c, ci, class, &[routing, Field::From(None)], entry);
            }
            for &(t, _) in entry {
                if let Target::Switch { .. } = t {
                    c.error(
                        &[routing, Field::From(None), Field::To(t)],
                        "a new interaction starts in its own class; switch the class on a station's row instead",
                    );
                }
            }
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

/// Whether some other class's routing switches jobs into class `ci`.
fn switched_into(view: &View<'_>, ci: ClassId) -> bool {
    view.classes.iter().enumerate().any(|(k, cl)| {
        k != ci
            && cl.is_some_and(|cl| match &cl.routing {
                Routing::Probabilistic { from, .. } => from
                    .iter()
                    .flatten()
                    .any(|b| matches!(b.0, Target::Switch { class, .. } if class == ci)),
                Routing::Sequence(_) => false,
            })
    })
}

/// Whether the network has class switching anywhere.
pub(super) fn has_switching(view: &View<'_>) -> bool {
    view.classes.iter().flatten().any(|cl| match &cl.routing {
        Routing::Probabilistic { entry, from } => entry
            .iter()
            .chain(from.iter().flatten())
            .any(|b| matches!(b.0, Target::Switch { .. })),
        Routing::Sequence(_) => false,
    })
}

/// A job switches only between classes of the same kind of workload with
/// the same think time: it keeps its place in the population (or stream)
/// of the class its interaction started in, and returns to it at the end.
fn check_switch(c: &mut Check<'_>, from: &ClassSpec, to: &ClassSpec, at: &[Field]) {
    use super::Workload::{Closed, Open};
    let why = match (&from.workload, &to.workload) {
        (Open { .. }, Closed { .. }) | (Closed { .. }, Open { .. }) => Some(format!(
            "class {} is {} and class {} is {}; a job switches only between classes that are both open or both closed",
            from.name,
            kind(&from.workload),
            to.name,
            kind(&to.workload)
        )),
        (Closed { think: a, .. }, Closed { think: b, .. })
            if a.as_ref().map(super::Dist::mean) != b.as_ref().map(super::Dist::mean) =>
        {
            Some(format!(
                "classes {} and {} have different think times; a job switching between them would not know which to take",
                from.name, to.name
            ))
        }
        _ => None,
    };
    if let Some(why) = why {
        c.error(at, why);
    }
}

fn kind(w: &super::Workload) -> &'static str {
    match w {
        super::Workload::Open { .. } => "open",
        super::Workload::Closed { .. } => "closed",
    }
}

/// A class routed to a station must have a service time there (forks and
/// joins take none).
fn check_served(c: &mut Check<'_>, ci: ClassId, class: &ClassSpec, s: StationId, at: &[Field]) {
    let Ok(Some(st)) = c.station(s) else { return };
    let needs = st.kind.takes_service();
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
        match t {
            Target::Station(s) => {
                if c.station(s).is_err() {
                    c.error(&at, format!("no station with index {s}"));
                } else {
                    check_served(c, ci, class, s, &at);
                }
            }
            Target::Switch { station, class: to } => {
                match c.view.classes.get(to).copied().flatten() {
                    None => c.error(&at, format!("no class with index {to}")),
                    Some(_) if c.station(station).is_err() => {
                        c.error(&at, format!("no station with index {station}"));
                    }
                    Some(other) => {
                        check_switch(c, class, other, &at);
                        check_served(c, to, other, station, &at);
                    }
                }
            }
            Target::Exit => {}
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
        view.stations
            .get(s)
            .copied()
            .flatten()
            .and_then(|x| x.kind.as_fork())
            .filter(|f| f.join < ns)
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
                .filter_map(|b| b.0.station().filter(|&t| t < ns))
                .collect(),
        }
    };
    // Every station the class reaches, as a job or a sub-job.
    let mut reached = vec![false; ns];
    let mut stack: Vec<usize> = entry
        .iter()
        .filter_map(|b| b.0.station().filter(|&t| t < ns))
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

/// With switching, a job's next move depends on its class and station: the
/// (class, station) pairs a chain reaches must each have a row, and lead
/// to the sink.
fn pair_walk(c: &mut Check<'_>, start: &[ClassId]) {
    let view = c.view;
    let (ns, nc) = (view.stations.len(), view.classes.len());
    let rows = |k: usize| match view.classes[k].map(|x| &x.routing) {
        Some(Routing::Probabilistic { entry, from }) => Some((entry, from)),
        _ => None,
    };
    let pair = |k: usize, t: Target| match t {
        Target::Station(s) if s < ns => Some((k, s)),
        Target::Switch { station, class } if station < ns && class < nc => Some((class, station)),
        _ => None,
    };
    // Each reached pair and the branch (class, from station) that first
    // led there.
    let mut by: Vec<Option<(usize, Option<usize>, Target)>> = vec![None; ns * nc];
    let mut stack = Vec::new();
    for k in (0..nc).filter(|&k| start[k] == k) {
        let Some((entry, _)) = rows(k) else { continue };
        for &(t, _) in entry.iter().filter(|b| b.1 > 0.0) {
            if let Some((k2, s)) = pair(k, t)
                && by[k2 * ns + s].is_none()
            {
                by[k2 * ns + s] = Some((k, None, t));
                stack.push((k2, s));
            }
        }
    }
    let fork = |s: usize| view.stations[s].is_some_and(|st| st.kind.is_fork_or_join());
    let mut exits = vec![false; ns * nc];
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); ns * nc];
    let mut back = Vec::new();
    while let Some((k, s)) = stack.pop() {
        if fork(s) {
            continue;
        }
        let row = rows(k)
            .and_then(|(_, from)| from.get(s))
            .filter(|r| !r.is_empty());
        let Some(row) = row else {
            let Some((k0, s0, t)) = by[k * ns + s] else {
                continue;
            };
            if k0 == k && start[k] == k {
                // Rows of a start class's own walk are the model reader's
                // to check.
                continue;
            }
            c.scope = super::Scope::Class(k0);
            let (kn, sn) = (
                view.classes[k].map_or("?", |x| x.name.as_str()),
                c.station_name(s),
            );
            c.error(
                &[Field::Key("routing"), Field::From(s0), Field::To(t)],
                format!(
                    "jobs switch to class {kn} at station {sn}, but class {kn} has no routing row for {sn}; expected where they go after {sn}"
                ),
            );
            continue;
        };
        for &(t, _) in row.iter().filter(|b| b.1 > 0.0) {
            if t == Target::Exit && !exits[k * ns + s] {
                exits[k * ns + s] = true;
                back.push(k * ns + s);
            }
            if let Some((k2, s2)) = pair(k, t) {
                preds[k2 * ns + s2].push(k * ns + s);
                if by[k2 * ns + s2].is_none() {
                    by[k2 * ns + s2] = Some((k, Some(s), t));
                    stack.push((k2, s2));
                }
            }
        }
    }
    while let Some(x) = back.pop() {
        for &y in &preds[x] {
            if !std::mem::replace(&mut exits[y], true) {
                back.push(y);
            }
        }
    }
    for x in 0..ns * nc {
        let (k, s) = (x / ns, x % ns);
        if by[x].is_some()
            && !exits[x]
            && !fork(s)
            && rows(k)
                .and_then(|(_, f)| f.get(s))
                .is_some_and(|r| !r.is_empty())
        {
            c.scope = super::Scope::Class(k);
            let kn = view.classes[k].map_or("?", |x| x.name.as_str());
            let sn = c.station_name(s);
            c.error(
                &[Field::Key("routing"), Field::From(Some(s))],
                format!(
                    "jobs of class {kn} at station {sn} can never get to sink, in any class they switch to; expected a route from {sn} that ends at sink"
                ),
            );
            return;
        }
    }
}

/// Whether class `ci` takes no jobs of its own: an empty source row, and
/// some other class switches jobs into it.
pub(super) fn jobs_switch_in_only(view: &View<'_>, ci: ClassId) -> bool {
    let empty = view.classes.get(ci).copied().flatten().is_some_and(
        |cl| matches!(&cl.routing, Routing::Probabilistic { entry, .. } if entry.is_empty()),
    );
    empty && switched_into(view, ci)
}

/// The class whose interactions each class's jobs belong to (see
/// [`NetworkSpec::chain_starts`]), over classes that may be missing.
fn starts(classes: &[Option<&ClassSpec>]) -> Vec<ClassId> {
    let n = classes.len();
    let mut root: Vec<usize> = (0..n).collect();
    fn find(root: &mut [usize], mut x: usize) -> usize {
        while root[x] != x {
            root[x] = root[root[x]];
            x = root[x];
        }
        x
    }
    for (ci, cl) in classes.iter().enumerate() {
        let Some(Routing::Probabilistic { from, .. }) = cl.map(|cl| &cl.routing) else {
            continue;
        };
        for b in from.iter().flatten() {
            if let Target::Switch { class, .. } = b.0
                && class < n
            {
                let (a, b) = (find(&mut root, ci), find(&mut root, class));
                root[a] = b;
            }
        }
    }
    // The start of a chain: its first class that takes jobs of its own.
    let mut start_of: Vec<Option<usize>> = vec![None; n];
    for (ci, cl) in classes.iter().enumerate() {
        let own = cl.is_some_and(|cl| match &cl.routing {
            Routing::Probabilistic { entry, .. } => !entry.is_empty(),
            Routing::Sequence(_) => true,
        });
        let r = find(&mut root, ci);
        if own && start_of[r].is_none() {
            start_of[r] = Some(ci);
        }
    }
    (0..n)
        .map(|ci| start_of[find(&mut root, ci)].unwrap_or(ci))
        .collect()
}

/// Chains (classes joined by switching) have one class where jobs start,
/// switching classes have routing tables, and a network with switching has
/// no forks (a sub-job's class is its parent's).
pub(super) fn check_chains(c: &mut Check<'_>) {
    let view = c.view;
    if !has_switching(view) {
        return;
    }
    let start = starts(&view.classes);
    for (ci, cl) in view.classes.iter().enumerate() {
        let Some(cl) = cl else { continue };
        c.scope = super::Scope::Class(ci);
        let own = match &cl.routing {
            Routing::Probabilistic { entry, .. } => !entry.is_empty(),
            Routing::Sequence(_) => true,
        };
        let s = start[ci];
        if own && s != ci {
            let first = view.classes[s].map_or("?", |x| x.name.as_str());
            c.error(
                &[Field::Key("routing"), Field::From(None)],
                format!(
                    "classes {first} and {} both start interactions and are joined by class switching; a chain of classes has one class where jobs start, and the others take jobs only by switching (no source row, no workload of their own)",
                    cl.name
                ),
            );
        }
        if s != ci
            && !own
            && let (Some(first), super::Workload::Closed { population, .. }) =
                (view.classes[s], &cl.workload)
            && *population != 0
        {
            c.error(
                &[Field::Key("population")],
                format!(
                    "class {} takes its jobs from class {} by switching; its population is that of {}, so expected 0 here, found {population}",
                    cl.name, first.name, first.name
                ),
            );
        }
        if let Routing::Sequence(_) = cl.routing
            && switched_into(view, ci)
        {
            c.error(
                &[Field::Key("route")],
                format!(
                    "jobs switch into class {}, which has a fixed route; a class that jobs switch into needs a routing table (its rows say where a switched job goes next)",
                    cl.name
                ),
            );
        }
    }
    pair_walk(c, &start);
    if let Some((s, st)) = view.stations.iter().enumerate().find_map(|(s, st)| {
        st.filter(|st| st.kind.as_fork().is_some())
            .map(|st| (s, st))
    }) {
        c.scope = super::Scope::Station(s);
        c.error(
            &[],
            format!(
                "fork {} and class switching in one network are not supported (a sub-job would not know whose class to take)",
                st.name
            ),
        );
    }
}

impl NetworkSpec {
    /// The class each class's interactions belong to: the class itself,
    /// or, for a class that jobs only switch into (an empty `source`
    /// row), the one class of its chain (the classes joined by switching)
    /// where jobs start. A job's completion is counted for that class, and
    /// a closed job thinks and starts again as a job of it.
    pub fn chain_starts(&self) -> Vec<ClassId> {
        starts(&self.classes.iter().map(Some).collect::<Vec<_>>())
    }

    /// Whether some class's routing switches the class of its jobs.
    pub fn has_switching(&self) -> bool {
        self.classes.iter().any(|cl| match &cl.routing {
            Routing::Probabilistic { from, .. } => from
                .iter()
                .flatten()
                .any(|b| matches!(b.0, Target::Switch { .. })),
            Routing::Sequence(_) => false,
        })
    }

    /// For each class, the stations where jobs are of that class: with
    /// class switching, the stations a chain's jobs reach after switching
    /// into it (walked from every class's entry); otherwise
    /// [`NetworkSpec::stations_reached`] of each class.
    pub fn class_stations(&self) -> Vec<Vec<bool>> {
        let nc = self.classes.len();
        if !self.has_switching() {
            return (0..nc).map(|c| self.stations_reached(c)).collect();
        }
        let ns = self.stations.len();
        let mut out = vec![vec![false; ns]; nc];
        for c in 0..nc {
            let seen = self.walk(c).1;
            for (k, row) in out.iter_mut().enumerate() {
                for (s, r) in row.iter_mut().enumerate() {
                    *r |= seen[k * ns + s];
                }
            }
        }
        out
    }

    /// Which stations the jobs of `class` can reach (over branches of
    /// positive probability), their fork sub-jobs and joins included; all
    /// false for a class that does not exist. Linear in the routes.
    pub fn stations_reached(&self, class: ClassId) -> Vec<bool> {
        self.walk(class).0
    }

    /// The walk of [`NetworkSpec::stations_reached`]: the stations reached,
    /// and the (class, station) pairs seen, `class * stations + station`
    /// (one row, class 0, without switching).
    fn walk(&self, class: ClassId) -> (Vec<bool>, Vec<bool>) {
        let ns = self.stations.len();
        let nc = self.classes.len();
        let mut reached = vec![false; ns];
        let Some(c) = self.classes.get(class) else {
            return (reached, Vec::new());
        };
        // Walked over (class, station) pairs: a switching branch carries
        // the job on in another class's rows (without switching, the class
        // is always `class`: one row of pairs).
        let width = if self.has_switching() { nc } else { 1 };
        let mut seen = vec![false; ns * width];
        let pair = |k: usize, t: &(Target, f64)| match *t {
            (Target::Station(s), p) if p > 0.0 && s < ns => Some((k, s)),
            (Target::Switch { station, class }, p) if p > 0.0 && station < ns && class < nc => {
                Some((class, station))
            }
            _ => None,
        };
        let mut stack: Vec<(ClassId, StationId)> = match &c.routing {
            Routing::Sequence(seq) => seq
                .iter()
                .copied()
                .filter(|&s| s < ns)
                .map(|s| (class, s))
                .collect(),
            Routing::Probabilistic { entry, .. } => {
                entry.iter().filter_map(|t| pair(class, t)).collect()
            }
        };
        while let Some((k, s)) = stack.pop() {
            if std::mem::replace(&mut seen[(k % width) * ns + s], true) {
                continue;
            }
            reached[s] = true;
            if let Some(f) = self.stations[s].kind.as_fork() {
                stack.extend(
                    f.targets
                        .iter()
                        .map(|t| t.0)
                        .chain([f.join])
                        .chain(f.routes.iter().flatten().copied())
                        .filter(|&t| t < ns)
                        .map(|t| (k, t)),
                );
            }
            if let Routing::Probabilistic { from, .. } = &self.classes[k].routing
                && let Some(row) = from.get(s)
            {
                stack.extend(row.iter().filter_map(|t| pair(k, t)));
            }
        }
        (reached, seen)
    }
}
