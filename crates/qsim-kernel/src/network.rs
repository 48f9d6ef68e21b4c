//! The description of a queueing network, and its validation.
//!
//! A [`NetworkSpec`] is plain data with public fields, built in code or by
//! `qsim-model` from TOML. [`Network::new`] checks it and returns a
//! [`Network`], the only thing the simulator accepts. Stations, classes and
//! regions are referred to by their index in the spec's vectors.

use crate::dist::Dist;
use thiserror::Error;

/// Index of a station in [`NetworkSpec::stations`].
pub type StationId = usize;
/// Index of a job class in [`NetworkSpec::classes`].
pub type ClassId = usize;
/// Index of a region in [`NetworkSpec::regions`].
pub type RegionId = usize;

/// A whole network as plain data; see [`Network::new`] for the rules it must obey.
#[derive(Clone, Debug, Default)]
pub struct NetworkSpec {
    /// Service centers.
    pub stations: Vec<StationSpec>,
    /// Job classes, each with its workload and routing.
    pub classes: Vec<ClassSpec>,
    /// Admission-controlled regions (throttles).
    pub regions: Vec<RegionSpec>,
    /// Where closed-workload jobs are when a replication starts.
    pub initial: InitialState,
}

/// Where the jobs of closed workloads start a replication.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum InitialState {
    /// Every job starts thinking (default).
    #[default]
    Thinking,
    /// Every job starts queued at this station (used to detect bistability).
    AtStation(StationId),
}

/// One service center.
#[derive(Clone, Debug)]
pub struct StationSpec {
    /// Unique name, used in reports.
    pub name: String,
    /// What kind of center it is.
    pub kind: StationKind,
    /// Service time per class at nominal speed, indexed by [`ClassId`]; must
    /// have one entry per class. `None` means the class never visits (it is
    /// an error to route it here). For a `batch` station it is the service of
    /// one batch before the per-job cost; for a `link` the round-trip time;
    /// `fork` and `join` take no service (all `None`).
    pub service: Vec<Option<Dist>>,
    /// Contention-dependent speed; `None` means the nominal speed always.
    pub speed: Option<Speed>,
}

/// The kind of a station and its kind-specific parameters.
#[derive(Clone, Debug)]
pub enum StationKind {
    /// Infinite servers: every job is served at once, no queueing.
    Delay,
    /// `servers` identical servers sharing one queue.
    Queue {
        /// Number of servers, at least 1.
        servers: u32,
        /// Queueing discipline.
        discipline: Discipline,
    },
    /// Mutual exclusion: one holder at a time, FIFO hand-off, optional mechanisms.
    Latch(LatchSpec),
    /// Group commit: up to `max_batch` jobs served together.
    Batch(BatchSpec),
    /// A serial channel with a round-trip time (the station's service).
    Link(LinkSpec),
    /// Splits each arriving job into sub-jobs.
    Fork(ForkSpec),
    /// Collects the sub-jobs of a fork and releases the parent.
    Join(JoinSpec),
}

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
    /// Non-preemptive priority by [`ClassSpec::priority`] (higher first),
    /// FCFS within a priority.
    Priority,
}

/// Contention-dependent speed: the completion rate of the whole station as a
/// function of the number of jobs present, n (queued and in service).
///
/// With a speed, a station's service distribution only gives the shape of the
/// work: a job's work is its sample divided by the distribution's mean, so a
/// job needs 1 unit on average, and the station completes `rate(n)` units per
/// second in total while n jobs are present (shared among the jobs in service
/// as the discipline says). When n changes, the remaining work of every job in
/// service is re-timed at the new speed.
#[derive(Clone, Debug, PartialEq)]
pub enum Speed {
    /// Points `(n, rate)`, n strictly increasing, rates > 0; linear
    /// interpolation between points, constant outside them.
    Table(Vec<(f64, f64)>),
    /// Universal Scalability Law: rate(n) = lambda·n / (1 + sigma·(n−1) + kappa·n·(n−1)).
    Usl {
        /// Contention coefficient, >= 0.
        sigma: f64,
        /// Coherency coefficient, >= 0.
        kappa: f64,
        /// Rate with one job present, > 0.
        lambda: f64,
    },
}

impl Speed {
    /// The completion rate with `n` jobs present (n >= 1).
    pub fn rate(&self, n: f64) -> f64 {
        match self {
            Speed::Table(points) => {
                let first = points[0];
                if n <= first.0 {
                    return first.1;
                }
                for w in points.windows(2) {
                    let (n0, r0) = w[0];
                    let (n1, r1) = w[1];
                    if n <= n1 {
                        return r0 + (r1 - r0) * (n - n0) / (n1 - n0);
                    }
                }
                points[points.len() - 1].1
            }
            Speed::Usl {
                sigma,
                kappa,
                lambda,
            } => lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0)),
        }
    }
}

/// Parameters of a `latch` station.
#[derive(Clone, Debug, Default)]
pub struct LatchSpec {
    /// NUMA hand-off costs; `None` for a plain latch.
    pub numa: Option<NumaSpec>,
    /// Spin-then-sleep waiting; `None` means waiters sleep at once and are
    /// handed the latch in FIFO order.
    pub spin: Option<SpinSpec>,
    /// Whom a release wakes.
    pub wake: Wake,
}

/// NUMA contention: the latch's cache line moves between cores and nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct NumaSpec {
    /// NUMA nodes, at least 1.
    pub nodes: u32,
    /// Cores per node, at least 1.
    pub cores_per_node: u32,
    /// Extra time to hand the latch to a thread on the same node, seconds.
    pub local_handoff_s: f64,
    /// Extra time to hand the latch to a thread on another node, seconds.
    pub remote_handoff_s: f64,
    /// Extra time when the next holder had been migrated off its core (its
    /// cache is cold), seconds.
    pub migration_s: f64,
}

/// Spin-wait before sleeping (InnoDB-style `spin_wait_delay`).
#[derive(Clone, Debug, PartialEq)]
pub struct SpinSpec {
    /// `spin_wait_delay` d: a poll waits uniform [0, d·pauses_per_unit·pause_cycles/clock_ghz) ns.
    pub spin_wait_delay: f64,
    /// Cycles per PAUSE instruction (10 on Broadwell, 140 on Skylake).
    pub pause_cycles: f64,
    /// PAUSE instructions per unit of delay (50 in InnoDB).
    pub pauses_per_unit: f64,
    /// Clock rate in GHz.
    pub clock_ghz: f64,
    /// Polls before the waiter gives up and sleeps.
    pub spin_rounds: u32,
    /// Cost of a sleep and wake-up (context switch), seconds of CPU.
    pub context_switch_s: f64,
    /// The CPU the waiters spin on, if any: a PS queue. While spinning,
    /// being switched back in or holding the latch, a thread counts as one
    /// more job there for sharing and utilization, and its poll waits,
    /// switch-in and critical section go at its share of a server.
    pub cpu: Option<StationId>,
}

/// Whom a latch release wakes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Wake {
    /// The first sleeper only.
    #[default]
    One,
    /// Every sleeper (thundering herd): all wake, one wins, the rest sleep
    /// again. Only meaningful with a spin mechanism: without one, waiters
    /// are handed the latch in FIFO order and this behaves like `One`.
    All,
}

/// Parameters of a `batch` (group commit) station.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchSpec {
    /// Largest number of jobs served together, at least 1.
    pub max_batch: u32,
    /// When the server is free and fewer than `max_batch` wait, how long to
    /// wait for more before starting; `None` starts at once.
    pub max_wait_s: Option<f64>,
    /// Service time added per job in the batch, seconds (>= 0).
    pub per_job_s: f64,
}

/// Parameters of a `link` station.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    /// Round trips in flight at once, at least 1.
    pub pipeline: u32,
    /// Jobs carried per round trip, at least 1.
    pub max_batch: u32,
}

/// Parameters of a `fork` station.
#[derive(Clone, Debug, PartialEq)]
pub struct ForkSpec {
    /// Sub-jobs per arriving job, at least 1.
    pub fan_out: u32,
    /// Stations the sub-jobs go to, with weights.
    pub targets: Vec<(StationId, f64)>,
    /// How sub-jobs are spread over the targets.
    pub spread: Spread,
    /// The join station that collects them.
    pub join: StationId,
}

/// How a fork spreads its sub-jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Spread {
    /// Round-robin over the targets (k = 256 over 32 targets gives 8 each).
    #[default]
    Even,
    /// Each sub-job picks a target at random with the given weights.
    Random,
}

/// Parameters of a `join` station.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct JoinSpec {
    /// Release the parent after this many sub-jobs; `None` waits for all.
    pub quorum: Option<u32>,
}

/// A class of jobs: its workload and its route.
#[derive(Clone, Debug)]
pub struct ClassSpec {
    /// Unique name.
    pub name: String,
    /// Closed or open.
    pub workload: Workload,
    /// How jobs move between stations.
    pub routing: Routing,
    /// Priority at `priority` queues (higher is served first).
    pub priority: i32,
}

/// Where jobs come from.
#[derive(Clone, Debug)]
pub enum Workload {
    /// A fixed population cycling between thinking and the network.
    Closed {
        /// Number of jobs, at least 1.
        population: u32,
        /// Think time between interactions; `None` is zero think time.
        think: Option<Dist>,
    },
    /// Arrivals from outside.
    Open {
        /// Time between arrivals.
        interarrival: Dist,
    },
}

/// Where a job goes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A station.
    Station(StationId),
    /// End of the interaction: a closed job goes back to thinking, an open
    /// job leaves.
    Exit,
}

/// How the jobs of a class move.
#[derive(Clone, Debug)]
pub enum Routing {
    /// Markov routing: `entry` is where a job goes after thinking or arriving;
    /// `from[s]` where it goes after station `s` (one entry per station; an
    /// empty list for stations the class never visits). Probabilities of each
    /// list sum to 1.
    Probabilistic {
        /// Branches taken by a new interaction.
        entry: Vec<(Target, f64)>,
        /// Branches taken on leaving each station.
        from: Vec<Vec<(Target, f64)>>,
    },
    /// A fixed sequence of stations, then exit.
    Sequence(Vec<StationId>),
}

/// A throttle: at most `limit` jobs inside a set of stations.
#[derive(Clone, Debug)]
pub struct RegionSpec {
    /// Unique name.
    pub name: String,
    /// Member stations.
    pub stations: Vec<StationId>,
    /// Most jobs inside at once; `None` is unlimited (the region only measures).
    pub limit: Option<u32>,
}

/// Why a [`NetworkSpec`] was rejected. Names refer to the spec's names.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{path}: {message}")]
pub struct NetworkError {
    /// Where the problem is, e.g. `stations.cpu.servers`.
    pub path: String,
    /// What is wrong, with what was found and what was expected.
    pub message: String,
}

/// A validated network, ready to simulate.
#[derive(Clone, Debug)]
pub struct Network {
    spec: NetworkSpec,
}

impl Network {
    /// Checks `spec` and wraps it; returns every problem found.
    pub fn new(spec: NetworkSpec) -> Result<Network, Vec<NetworkError>> {
        let errors = validate(&spec);
        if errors.is_empty() {
            Ok(Network { spec })
        } else {
            Err(errors)
        }
    }

    /// The checked description.
    pub fn spec(&self) -> &NetworkSpec {
        &self.spec
    }

    /// Looks up a station by name.
    pub fn station_id(&self, name: &str) -> Option<StationId> {
        self.spec.stations.iter().position(|s| s.name == name)
    }
}

fn err(errors: &mut Vec<NetworkError>, path: String, message: String) {
    errors.push(NetworkError { path, message });
}

fn validate(spec: &NetworkSpec) -> Vec<NetworkError> {
    let mut e = Vec::new();
    let ns = spec.stations.len();
    let nc = spec.classes.len();
    if nc == 0 {
        err(
            &mut e,
            "classes".into(),
            "a network needs at least one job class, found none".into(),
        );
    }
    let mut names = std::collections::HashSet::new();
    for st in &spec.stations {
        let p = format!("stations.{}", st.name);
        if !names.insert(st.name.as_str()) {
            err(&mut e, p.clone(), "duplicate station name".into());
        }
        if st.service.len() != nc {
            err(
                &mut e,
                format!("{p}.service"),
                format!(
                    "expected one entry per class ({nc}), found {}",
                    st.service.len()
                ),
            );
        }
        if let Some(speed) = &st.speed {
            check_speed(&mut e, &format!("{p}.speed"), speed);
        }
        match &st.kind {
            StationKind::Queue { servers, .. } if *servers == 0 => err(
                &mut e,
                format!("{p}.servers"),
                "expected at least 1 server, found 0".into(),
            ),
            StationKind::Latch(l) => {
                if let Some(n) = &l.numa {
                    if n.nodes == 0 || n.cores_per_node == 0 {
                        err(
                            &mut e,
                            format!("{p}.numa"),
                            "nodes and cores_per_node must be at least 1".into(),
                        );
                    }
                    for (k, v) in [
                        ("local_handoff_s", n.local_handoff_s),
                        ("remote_handoff_s", n.remote_handoff_s),
                        ("migration_s", n.migration_s),
                    ] {
                        if !(v.is_finite() && v >= 0.0) {
                            err(
                                &mut e,
                                format!("{p}.numa.{k}"),
                                format!("expected a finite time >= 0, found {v}"),
                            );
                        }
                    }
                }
                if let Some(s) = &l.spin {
                    for (k, v) in [
                        ("spin_wait_delay", s.spin_wait_delay),
                        ("pause_cycles", s.pause_cycles),
                        ("pauses_per_unit", s.pauses_per_unit),
                        ("context_switch_s", s.context_switch_s),
                    ] {
                        if !(v.is_finite() && v >= 0.0) {
                            err(
                                &mut e,
                                format!("{p}.spin.{k}"),
                                format!("expected a finite number >= 0, found {v}"),
                            );
                        }
                    }
                    if !(s.clock_ghz.is_finite() && s.clock_ghz > 0.0) {
                        err(
                            &mut e,
                            format!("{p}.spin.clock_ghz"),
                            format!("expected a positive clock rate, found {}", s.clock_ghz),
                        );
                    }
                    match s.cpu.map(|c| spec.stations.get(c)) {
                        None => {}
                        Some(None) => err(
                            &mut e,
                            format!("{p}.spin.cpu"),
                            format!("no station with index {}", s.cpu.unwrap_or_default()),
                        ),
                        // Spinners take a processor-sharing slice of the
                        // cpu; other disciplines have no slice to give.
                        Some(Some(StationSpec {
                            kind:
                                StationKind::Queue {
                                    discipline: Discipline::Ps,
                                    ..
                                },
                            ..
                        })) => {}
                        Some(Some(c)) => err(
                            &mut e,
                            format!("{p}.spin.cpu"),
                            format!(
                                "station {} is not a PS queue; spinning waiters share a cpu's capacity with its jobs, so spin.cpu must name a queue with discipline = \"ps\"",
                                c.name
                            ),
                        ),
                    }
                }
            }
            StationKind::Batch(b) => {
                if b.max_batch == 0 {
                    err(
                        &mut e,
                        format!("{p}.max_batch"),
                        "expected at least 1, found 0".into(),
                    );
                }
                if let Some(w) = b.max_wait_s
                    && !(w.is_finite() && w >= 0.0)
                {
                    err(
                        &mut e,
                        format!("{p}.max_wait_s"),
                        format!("expected a finite time >= 0, found {w}"),
                    );
                }
                if !(b.per_job_s.is_finite() && b.per_job_s >= 0.0) {
                    err(
                        &mut e,
                        format!("{p}.per_job_s"),
                        format!("expected a finite time >= 0, found {}", b.per_job_s),
                    );
                }
            }
            StationKind::Link(l) => {
                if l.pipeline == 0 {
                    err(
                        &mut e,
                        format!("{p}.pipeline"),
                        "expected at least 1, found 0".into(),
                    );
                }
                if l.max_batch == 0 {
                    err(
                        &mut e,
                        format!("{p}.max_batch"),
                        "expected at least 1, found 0".into(),
                    );
                }
            }
            StationKind::Fork(f) => {
                if f.fan_out == 0 {
                    err(
                        &mut e,
                        format!("{p}.fan_out"),
                        "expected at least 1, found 0".into(),
                    );
                }
                if f.targets.is_empty() {
                    err(
                        &mut e,
                        format!("{p}.to"),
                        "expected at least one target station, found none".into(),
                    );
                }
                for &(t, w) in &f.targets {
                    if t >= ns {
                        err(
                            &mut e,
                            format!("{p}.to"),
                            format!("no station with index {t}"),
                        );
                    }
                    if !(w.is_finite() && w > 0.0) {
                        err(
                            &mut e,
                            format!("{p}.to"),
                            format!("weights must be positive, found {w}"),
                        );
                    }
                }
                match spec.stations.get(f.join) {
                    Some(StationSpec {
                        kind: StationKind::Join(j),
                        ..
                    }) => {
                        if let Some(q) = j.quorum
                            && (q == 0 || q > f.fan_out)
                        {
                            err(
                                &mut e,
                                format!("stations.{}.quorum", spec.stations[f.join].name),
                                format!(
                                    "expected a quorum between 1 and the fan-out {}, found {q}",
                                    f.fan_out
                                ),
                            );
                        }
                    }
                    _ => err(
                        &mut e,
                        format!("{p}.join"),
                        "expected the index of a join station".into(),
                    ),
                }
            }
            _ => {}
        }
    }
    for (ci, class) in spec.classes.iter().enumerate() {
        let p = format!("classes.{}", class.name);
        match &class.workload {
            Workload::Closed { population, .. } if *population == 0 => err(
                &mut e,
                format!("{p}.population"),
                "expected at least 1 job, found 0".into(),
            ),
            _ => {}
        }
        let target_ok = |t: &Target| match t {
            Target::Exit => true,
            Target::Station(s) => *s < ns,
        };
        let visits_ok = |e: &mut Vec<NetworkError>, s: StationId, path: &str| {
            if let Some(st) = spec.stations.get(s) {
                let needs = !matches!(st.kind, StationKind::Fork(_) | StationKind::Join(_));
                if needs && st.service.get(ci).is_none_or(|x| x.is_none()) {
                    err(
                        e,
                        path.to_string(),
                        format!(
                            "class {} is routed to station {} which has no service time for it",
                            class.name, st.name
                        ),
                    );
                }
            }
        };
        match &class.routing {
            Routing::Probabilistic { entry, from } => {
                check_branches(&mut e, &format!("{p}.routing.entry"), entry, &target_ok);
                for &(t, _) in entry {
                    if let Target::Station(s) = t {
                        visits_ok(&mut e, s, &format!("{p}.routing.entry"));
                    }
                }
                if from.len() != ns {
                    err(
                        &mut e,
                        format!("{p}.routing"),
                        format!(
                            "expected one branch list per station ({ns}), found {}",
                            from.len()
                        ),
                    );
                }
                for (s, branches) in from.iter().enumerate() {
                    if branches.is_empty() {
                        continue;
                    }
                    let name = spec.stations.get(s).map_or("?", |x| x.name.as_str());
                    check_branches(&mut e, &format!("{p}.routing.{name}"), branches, &target_ok);
                    for &(t, _) in branches {
                        if let Target::Station(s2) = t {
                            visits_ok(&mut e, s2, &format!("{p}.routing.{name}"));
                        }
                    }
                }
            }
            Routing::Sequence(seq) => {
                if seq.is_empty() {
                    err(
                        &mut e,
                        format!("{p}.route"),
                        "expected at least one station, found an empty route".into(),
                    );
                }
                for &s in seq {
                    if s >= ns {
                        err(
                            &mut e,
                            format!("{p}.route"),
                            format!("no station with index {s}"),
                        );
                    } else {
                        visits_ok(&mut e, s, &format!("{p}.route"));
                    }
                }
            }
        }
    }
    for class in &spec.classes {
        if let Routing::Probabilistic { entry, from } = &class.routing
            && from.len() == ns
        {
            check_sub_routes(&mut e, spec, &class.name, entry, from);
        }
    }
    for r in &spec.regions {
        let p = format!("regions.{}", r.name);
        if r.stations.is_empty() {
            err(
                &mut e,
                format!("{p}.stations"),
                "expected at least one station, found none".into(),
            );
        }
        for &s in &r.stations {
            if s >= ns {
                err(
                    &mut e,
                    format!("{p}.stations"),
                    format!("no station with index {s}"),
                );
            }
        }
        if r.limit == Some(0) {
            err(
                &mut e,
                format!("{p}.limit"),
                "expected a limit of at least 1 (or none), found 0".into(),
            );
        }
    }
    if let InitialState::AtStation(s) = spec.initial
        && s >= ns
    {
        err(
            &mut e,
            "initial".into(),
            format!("no station with index {s}"),
        );
    }
    e
}

/// Checks the routes of fork sub-jobs of one class with a routing table.
///
/// A sub-job follows its class's row for each station it leaves (stations
/// without a row send it straight to its fork's join), so every station a
/// sub-job can reach must not route to the sink, and must be able to reach
/// the join. Only forks the class can reach are checked: another class may
/// route the same stations differently.
fn check_sub_routes(
    e: &mut Vec<NetworkError>,
    spec: &NetworkSpec,
    class: &str,
    entry: &[(Target, f64)],
    from: &[Vec<(Target, f64)>],
) {
    let ns = spec.stations.len();
    let fork_of = |s: usize| match spec.stations.get(s).map(|x| &x.kind) {
        Some(StationKind::Fork(f)) if f.join < ns => Some(f),
        _ => None,
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
        let join = f.join;
        let fname = &spec.stations[fs].name;
        let jname = &spec.stations[join].name;
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
                err(
                    e,
                    format!("classes.{class}.routing.{}", spec.stations[s].name),
                    format!(
                        "sub-jobs of fork {fname} reach station {} whose row routes to the sink; a sub-job ends at its join {jname}, so route it there instead",
                        spec.stations[s].name
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
            err(
                e,
                format!("classes.{class}.routing.{}", spec.stations[s].name),
                format!(
                    "sub-jobs of fork {fname} that reach station {} can never get to its join {jname}; expected a route from {} that ends at {jname}",
                    spec.stations[s].name, spec.stations[s].name
                ),
            );
        }
    }
}

fn check_speed(e: &mut Vec<NetworkError>, p: &str, speed: &Speed) {
    match speed {
        Speed::Table(points) => {
            if points.is_empty() {
                err(
                    e,
                    p.into(),
                    "expected at least one (n, rate) point, found none".into(),
                );
            }
            for (i, &(n, r)) in points.iter().enumerate() {
                if !(n.is_finite() && n >= 1.0) {
                    err(
                        e,
                        format!("{p}.table[{i}].n"),
                        format!("expected n >= 1, found {n}"),
                    );
                }
                if !(r.is_finite() && r > 0.0) {
                    err(
                        e,
                        format!("{p}.table[{i}].rate"),
                        format!("expected a positive rate, found {r}"),
                    );
                }
                if i > 0 && n <= points[i - 1].0 {
                    err(
                        e,
                        format!("{p}.table[{i}].n"),
                        format!(
                            "expected n to increase, found {n} after {}",
                            points[i - 1].0
                        ),
                    );
                }
            }
        }
        Speed::Usl {
            sigma,
            kappa,
            lambda,
        } => {
            for (k, v) in [("sigma", *sigma), ("kappa", *kappa)] {
                if !(v.is_finite() && v >= 0.0) {
                    err(
                        e,
                        format!("{p}.usl.{k}"),
                        format!("expected a finite number >= 0, found {v}"),
                    );
                }
            }
            if !(lambda.is_finite() && *lambda > 0.0) {
                err(
                    e,
                    format!("{p}.usl.lambda"),
                    format!("expected a positive rate, found {lambda}"),
                );
            }
        }
    }
}

fn check_branches(
    e: &mut Vec<NetworkError>,
    p: &str,
    branches: &[(Target, f64)],
    target_ok: &dyn Fn(&Target) -> bool,
) {
    let mut sum = 0.0;
    for &(t, prob) in branches {
        if !target_ok(&t) {
            err(
                e,
                p.into(),
                format!("route to a station that does not exist ({t:?})"),
            );
        }
        if !(prob.is_finite() && (0.0..=1.0).contains(&prob)) {
            err(
                e,
                p.into(),
                format!("expected a probability in [0, 1], found {prob}"),
            );
        }
        sum += prob;
    }
    if !branches.is_empty() && (sum - 1.0).abs() > 1e-9 {
        err(
            e,
            p.into(),
            format!("probabilities must sum to 1, found {sum}"),
        );
    }
    if branches.is_empty() {
        err(
            e,
            p.into(),
            "expected at least one branch, found none".into(),
        );
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

impl Network {
    /// Mean visits per interaction of `class` to each station (the solution
    /// of the traffic equations v = entry + v·P), or `None` when the routing
    /// never exits (a closed loop without `Exit`) or the class does not exist.
    /// Fork sub-jobs are not counted: the fork and join stations get the
    /// parent's visits.
    pub fn visit_ratios(&self, class: ClassId) -> Option<Vec<f64>> {
        let spec = &self.spec;
        let n = spec.stations.len();
        match &spec.classes.get(class)?.routing {
            Routing::Sequence(seq) => {
                let mut v = vec![0.0; n];
                for &s in seq {
                    v[s] += 1.0;
                }
                Some(v)
            }
            Routing::Probabilistic { entry, from } => {
                // Solve (I - P^T) v = e by Gaussian elimination with partial pivoting.
                let mut a = vec![vec![0.0; n + 1]; n];
                for (i, row) in a.iter_mut().enumerate() {
                    row[i] = 1.0;
                }
                for &(t, p) in entry {
                    if let Target::Station(s) = t {
                        a[s][n] += p;
                    }
                }
                for (s, branches) in from.iter().enumerate() {
                    for &(t, p) in branches {
                        if let Target::Station(d) = t {
                            a[d][s] -= p;
                        }
                    }
                }
                for col in 0..n {
                    let pivot =
                        (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
                    if a[pivot][col].abs() < 1e-12 {
                        return None;
                    }
                    a.swap(col, pivot);
                    let pivot_row = a[col].clone();
                    for (row, r) in a.iter_mut().enumerate() {
                        if row != col {
                            let f = r[col] / pivot_row[col];
                            if f != 0.0 {
                                for (x, p) in r[col..].iter_mut().zip(&pivot_row[col..]) {
                                    *x -= f * p;
                                }
                            }
                        }
                    }
                }
                let v: Vec<f64> = (0..n).map(|i| a[i][n] / a[i][i]).collect();
                v.iter()
                    .all(|x| x.is_finite() && *x >= -1e-9)
                    .then(|| v.into_iter().map(|x| x.max(0.0)).collect())
            }
        }
    }
}
