//! `queue` and `delay` stations: their parameters and range rules.

use super::{
    Check, Field, InitialState, NetworkSpec, Routing, StationId, StationKind, Target, Workload,
};

/// Order in which a `queue` station serves its jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Discipline {
    /// First come, first served.
    #[default]
    Fcfs,
    /// Processor sharing: all present jobs share the capacity equally
    /// (with c servers, each job gets min(1, c/n) of a server).
    Ps,
    /// Last come, first served, non-preemptive.
    Lcfs,
    /// Non-preemptive priority by [`ClassSpec::priority`](super::ClassSpec::priority)
    /// (higher first), FCFS within a priority.
    Priority,
    /// Preemptive-resume priority, the preemptive form of
    /// [`Discipline::Priority`]: a job that arrives when every server is
    /// busy takes the server of the lowest-priority job in service if that
    /// job's priority is lower than its own (of several such, the one that
    /// arrived last). The preempted job goes back to the head of its
    /// priority's queue and later resumes with the work it had left. Runs
    /// on the virtual-work clock: a speed curve applies as for the other
    /// queue disciplines; a capacity, a capacity schedule, blocking and
    /// overload behaviour do not.
    PreemptivePriority,
}

impl Discipline {
    /// Whether each job keeps its server until its service ends (fcfs,
    /// lcfs, priority): only these run as fixed-speed plain stations, so
    /// only these take a capacity, a capacity schedule, blocking senders
    /// and overload behaviour.
    pub fn serves_to_completion(self) -> bool {
        match self {
            Discipline::Fcfs | Discipline::Lcfs | Discipline::Priority => true,
            Discipline::Ps | Discipline::PreemptivePriority => false,
        }
    }
}

/// Most servers a queue may have: the simulator counts busy servers in
/// f64 sums and keeps `u32::MAX` for a delay station's "infinitely many",
/// so counts stay far below both (2^24, exact in an f32 as well).
pub const MAX_SERVERS: u32 = 1 << 24;

/// The range rules of a queue: at least one server, at most [`MAX_SERVERS`].
pub(super) fn check(c: &mut Check<'_>, servers: u32) {
    if servers == 0 {
        c.error(
            &[Field::Key("servers")],
            "expected a number of servers >= 1, found 0",
        );
    } else if servers > MAX_SERVERS {
        c.error(
            &[Field::Key("servers")],
            format!(
                "expected at most {MAX_SERVERS} servers, found {servers} (for that many, use a delay station)"
            ),
        );
    }
}

/// A finite waiting room: at most `limit` jobs present at a queue station
/// (queued and in service together).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    /// Most jobs present, at least the station's servers.
    pub limit: u32,
    /// What happens to a job that arrives when `limit` jobs are present.
    pub when_full: WhenFull,
}

/// What happens to a job arriving at a full station.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WhenFull {
    /// The job is lost: an open job leaves the network, a closed job goes
    /// back to think (its interaction is not counted as a completion), a
    /// fork sub-job goes straight to its join.
    #[default]
    Drop,
    /// Blocking after service: a job that finishes service elsewhere and
    /// is routed here while the station is full stays where it is, holding
    /// its server there, until a place frees; jobs blocked on one station
    /// enter in the order they became blocked. An open class's arrival from
    /// outside cannot wait and is lost (as with [`WhenFull::Drop`]); a
    /// closed job coming from its think time, or a fork's sub-job, waits
    /// outside every station.
    Block,
}

/// The rules of the capacity of station `s` in a whole network: a fixed-speed
/// queue that is not PS, at least as many places as servers, outside every
/// region, and visited by no closed class without a think time (a lost job
/// would start again at once, at the same instant, for ever).
pub(super) fn check_capacity(c: &mut Check<'_>, spec: &NetworkSpec, s: StationId, cap: Capacity) {
    let st = &spec.stations[s];
    let at = [Field::Key("capacity")];
    match st.kind {
        StationKind::Queue {
            servers,
            discipline,
        } if discipline.serves_to_completion() && st.speed.is_none() => {
            if cap.limit < servers {
                c.error(
                    &at,
                    format!(
                        "expected a capacity >= servers ({servers}), found {}: capacity counts the jobs in service too",
                        cap.limit
                    ),
                );
            }
        }
        StationKind::Queue { .. }
        | StationKind::Delay
        | StationKind::Latch(_)
        | StationKind::Batch(_)
        | StationKind::Link(_)
        | StationKind::Fork(_)
        | StationKind::Join(_) => {
            c.error(
                &at,
                "capacity is supported on fixed-speed queue stations with discipline fcfs, lcfs or priority (not ps or preemptive_priority, not with a speed curve, not on other kinds)",
            );
            return;
        }
    }
    if let Some(r) = spec.regions.iter().find(|r| r.stations.contains(&s)) {
        c.error(
            &at,
            format!(
                "a station with a capacity cannot be inside a region (it is a member of `{}`): a lost job would have to leave the region too",
                r.name
            ),
        );
    }
    if cap.when_full == WhenFull::Block {
        check_senders(c, spec, s);
        return;
    }
    for (ci, class) in spec.classes.iter().enumerate() {
        if let Workload::Closed { think, .. } = &class.workload
            && think.as_ref().is_none_or(|d| d.mean() == 0.0)
            && spec.stations_reached(ci).get(s).copied().unwrap_or(false)
        {
            c.error(
                &at,
                format!(
                    "closed class `{}` has no think time and visits this station: a lost job would start again at the same instant for ever; give the class a think time",
                    class.name
                ),
            );
        }
    }
}

/// The rules of the weights `w` of station `s` (discriminatory PS): one
/// weight > 0 per class, at a PS queue without a speed curve (whose rate
/// belongs to the jobs present, not to shares) that no latch spins on (a
/// spinning thread belongs to no class).
pub(super) fn check_weights(c: &mut Check<'_>, spec: &NetworkSpec, s: StationId, w: &[f64]) {
    let at = [Field::Key("weights")];
    let st = &spec.stations[s];
    if st.kind.as_queue().is_none_or(|(_, d)| d != Discipline::Ps) {
        c.error(
            &at,
            "weights apply to a queue with discipline = \"ps\" (discriminatory processor sharing); for priority between classes use discipline = \"priority\" or \"preemptive_priority\"",
        );
    }
    if st.speed.is_some() {
        c.error(
            &at,
            "weights do not combine with a speed curve; give the station servers instead",
        );
    }
    if let Some(l) = spec.stations.iter().find(|l| {
        l.kind
            .as_latch()
            .is_some_and(|l| l.spin.as_ref().is_some_and(|p| p.cpu == Some(s)))
    }) {
        c.error(
            &at,
            format!(
                "latch {} spins on this cpu, and a spinning thread belongs to no class; remove the weights or the latch's spin.cpu",
                l.name
            ),
        );
    }
    if w.len() != spec.classes.len() {
        c.error(
            &at,
            format!(
                "expected one weight per class ({}), found {}",
                spec.classes.len(),
                w.len()
            ),
        );
        return;
    }
    for (class, &x) in spec.classes.iter().zip(w) {
        if !(x > 0.0 && x.is_finite()) {
            c.error(
                &at,
                format!("class {}: expected a weight > 0, found {x}", class.name),
            );
        }
    }
}

/// The stations that can send a job to blocking station `s`: they hold a
/// blocked job, so each must be a fixed-speed queue (not PS) or delay, or a
/// fork (its sub-jobs wait outside every station), and outside every region
/// (a blocked job keeps its place in the sender).
fn check_senders(c: &mut Check<'_>, spec: &NetworkSpec, s: StationId) {
    let at = [Field::Key("when_full")];
    for x in spec.senders_to(s) {
        let st = &spec.stations[x];
        let holds = match st.kind {
            StationKind::Queue { discipline, .. } => {
                discipline.serves_to_completion() && st.speed.is_none()
            }
            StationKind::Delay => st.speed.is_none(),
            StationKind::Fork(_) => true,
            StationKind::Latch(_)
            | StationKind::Batch(_)
            | StationKind::Link(_)
            | StationKind::Join(_) => false,
        };
        if !holds {
            c.error(
                &at,
                format!(
                    "station {} sends jobs here and would have to hold one while this station is full; only fixed-speed queue (fcfs, lcfs, priority) and delay stations and forks can send to a station with when_full = \"block\" (use when_full = \"drop\", or put a queue in between)",
                    st.name
                ),
            );
        }
        if let Some(r) = spec.regions.iter().find(|r| r.stations.contains(&x)) {
            c.error(
                &at,
                format!(
                    "station {} sends jobs here but is a member of region `{}`: a job blocked there would hold its region place too; move it out of the region or use when_full = \"drop\"",
                    st.name, r.name
                ),
            );
        }
    }
}

impl NetworkSpec {
    /// Whether station `s` has a capacity that blocks its senders
    /// ([`WhenFull::Block`]).
    pub fn blocks(&self, s: StationId) -> bool {
        matches!(
            self.capacity.get(s),
            Some(Some(Capacity {
                when_full: WhenFull::Block,
                ..
            }))
        )
    }

    /// The stations other than `s` from which a job (or a fork sub-job) can
    /// go straight to station `s`, in index order: the pairs of a sequence
    /// route, the routing rows of the stations a class reaches (a station
    /// without a row continues with the class's entry row), a fork's
    /// targets and its fixed sub-job routes.
    pub fn senders_to(&self, s: StationId) -> Vec<StationId> {
        let ns = self.stations.len();
        let mut from = vec![false; ns];
        let mut mark = |x: StationId, to: StationId| {
            if to == s && x != s && x < ns {
                from[x] = true;
            }
        };
        let has =
            |row: &[(Target, f64)]| row.iter().any(|&(t, p)| t == Target::Station(s) && p > 0.0);
        for (ci, class) in self.classes.iter().enumerate() {
            match &class.routing {
                Routing::Sequence(seq) => {
                    for w in seq.windows(2) {
                        mark(w[0], w[1]);
                    }
                }
                Routing::Probabilistic { entry, from: rows } => {
                    let mut reached = self.stations_reached(ci);
                    // Jobs placed at a station initially leave it by its row.
                    match &self.initial {
                        InitialState::AtStation(a) if *a < ns => reached[*a] = true,
                        InitialState::Placed(list) => {
                            for p in list.iter().filter(|p| p.station < ns) {
                                reached[p.station] = true;
                            }
                        }
                        _ => {}
                    }
                    for x in (0..ns).filter(|&x| reached[x]) {
                        let row = match rows.get(x) {
                            Some(r) if !r.is_empty() => r.as_slice(),
                            _ => entry.as_slice(),
                        };
                        if has(row) {
                            mark(x, s);
                        }
                    }
                }
            }
        }
        for (x, st) in self.stations.iter().enumerate() {
            if let Some(f) = st.kind.as_fork() {
                for &(t, _) in &f.targets {
                    mark(x, t);
                }
                for (k, route) in f.routes.iter().enumerate() {
                    if let (Some(&(t, _)), Some(&first)) = (f.targets.get(k), route.first()) {
                        mark(t, first);
                    }
                    for w in route.windows(2) {
                        mark(w[0], w[1]);
                    }
                }
            }
        }
        (0..ns).filter(|&x| from[x]).collect()
    }

    /// Per station, whether it can send a job straight to a station whose
    /// capacity blocks (all false when none does).
    pub fn blocking_senders(&self) -> Vec<bool> {
        let ns = self.stations.len();
        let mut out = vec![false; ns];
        for b in (0..ns).filter(|&b| self.blocks(b)) {
            for x in self.senders_to(b) {
                out[x] = true;
            }
        }
        out
    }
}
