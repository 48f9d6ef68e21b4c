//! The description of a queueing network, and its validation.
//!
//! A [`NetworkSpec`] is plain data with public fields, built in code or by
//! `qsim-model` from TOML. [`Network::new`] checks it and returns a
//! [`Network`], the only thing the simulator accepts. Stations, classes and
//! regions are referred to by their index in the spec's vectors.
//!
//! Every range rule of a network (servers >= 1, probabilities in [0, 1],
//! positive rates...) lives here, next to the data it constrains: one file
//! per station kind (`queue`, `latch`, `batch`, `link`, `fork`), `speed` and
//! `routing`. A rule that fails gives a [`NetworkError`] whose location is
//! typed ([`Scope`] and [`Field`]s), so a reader can point at the key that
//! holds the value. [`check_parts`] checks the parts of a network that could
//! be built when others could not, so every problem is reported at once.

mod batch;
mod fork;
mod kind;
mod latch;
mod link;
mod overload;
mod policy;
mod queue;
mod routing;
mod speed;
mod speedup;
mod timeless;

pub use batch::BatchSpec;
pub use fork::{ForkSpec, JoinSpec, MAX_ROUTE_STEPS, Spread};
pub use latch::{LatchSpec, NumaSpec, PollDelay, SpinSpec, Wake};
pub use link::{LinkSpec, MAX_PIPELINE};
pub use overload::{
    Backoff, Balk, Breaker, ClientSpec, OnTimeout, Overload, RetryBudget, RetrySpec,
    StationOverload,
};
pub use policy::{RoutingPolicy, RowPolicy};
pub use queue::{Capacity, Discipline, MAX_SERVERS, WhenFull};
pub use routing::{Routing, Target};
pub use speed::Speed;
pub use speedup::SpeedUpError;

use crate::dist::Dist;
use thiserror::Error;

/// Index of a station in [`NetworkSpec::stations`].
pub type StationId = usize;
/// Index of a job class in [`NetworkSpec::classes`].
pub type ClassId = usize;
/// Index of a region in [`NetworkSpec::regions`].
pub type RegionId = usize;

/// Most stations a network may have: the simulator packs a station's index
/// into 24 bits of an event (the `a` operand of `sim::ev`), so ids must be
/// below 2^24. Simulation code should assert against this constant.
pub const MAX_STATIONS: usize = 1 << 24;
/// Most job classes a network may have: a class index shares the same
/// 24-bit event operand as a station index (arrival events).
pub const MAX_CLASSES: usize = 1 << 24;
/// Most regions a network may have (region ids are kept in `u32`s).
pub const MAX_REGIONS: usize = u32::MAX as usize;

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
    /// Finite capacity per station, indexed by [`StationId`]: empty when no
    /// station has one, else one entry per station (`None`: unlimited).
    pub capacity: Vec<Option<Capacity>>,
    /// Weights of discriminatory processor sharing, indexed by
    /// [`StationId`]: empty when no station has any, else one entry per
    /// station, each empty (plain PS, or not PS) or one weight > 0 per
    /// class. At a PS queue with weights a job of class k runs at
    /// min(1, a * w_k) of a server, `a` such that the rates of the jobs
    /// present add up to min(n, c): w_k over the weights of the jobs
    /// present with one server.
    pub weights: Vec<Vec<f64>>,
}

/// Where the jobs of closed workloads start a replication.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum InitialState {
    /// Every job starts thinking (default).
    #[default]
    Thinking,
    /// Every job starts queued at this station (used to detect bistability).
    AtStation(StationId),
    /// These jobs start at these stations, the rest of each closed class
    /// thinking (the final state of another run, see
    /// [`crate::ReplicationResult::final_state`]). A job placed at a station
    /// continues its route from there (in a sequence route, after the
    /// station's first occurrence). Jobs of an open class placed at a
    /// station are a backlog: requests (first attempts, in client mode)
    /// that arrived at time 0, beside the class's own arrivals (the
    /// bistability check's other end of an open workload).
    Placed(Vec<Placement>),
}

/// Jobs of one closed class at one station (see [`InitialState::Placed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The class (closed).
    pub class: ClassId,
    /// The station.
    pub station: StationId,
    /// How many jobs.
    pub jobs: u32,
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

/// The part of a network a [`NetworkError`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The network as a whole (its lists of stations, classes, regions).
    Network,
    /// A station, by index.
    Station(StationId),
    /// A job class, by index.
    Class(ClassId),
    /// A region, by index.
    Region(RegionId),
    /// The initial state.
    Initial,
}

/// One step of the path from a [`Scope`] to the value a rule is about. Keys
/// are the parameter names of the model format (`servers`, `spin`,
/// `clock_ghz`, `to` for a fork's targets), which the spec's fields share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// A parameter by name.
    Key(&'static str),
    /// The i-th element of a list (a speed point, a fork target, a route step).
    Index(usize),
    /// A routing row: the branches taken on leaving this station, or by a
    /// new interaction (`None`, the model format's `source`).
    From(Option<StationId>),
    /// A branch of a routing row, by where it leads.
    To(Target),
}

/// Why a [`NetworkSpec`] was rejected: where ([`scope`](Self::scope) and
/// [`field`](Self::field), typed) and what (found and expected).
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{path}: {message}")]
pub struct NetworkError {
    /// The part of the network.
    pub scope: Scope,
    /// The path from the scope to the value, e.g. `[Key("spin"), Key("cpu")]`.
    pub field: Vec<Field>,
    /// The location spelled with the spec's names, e.g.
    /// `stations.cpu.servers`, for display only: to find the value, read
    /// `scope` and `field`.
    pub path: String,
    /// What is wrong, with what was found and what was expected.
    pub message: String,
}

/// Every problem [`Network::new`] found in a [`NetworkSpec`], in the
/// order of the spec (one [`NetworkError`] each).
///
/// It reads as a slice of [`NetworkError`] (`errors.iter()`, `errors[0]`,
/// `errors.len()`). Its [`Display`](std::fmt::Display) writes every problem on a line of
/// its own, located by its key path (`stations.cpu.servers: ...`), so a
/// program can hand it to `?` and print it as it is.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkErrors {
    /// The problems, never empty.
    pub errors: Vec<NetworkError>,
}

impl std::fmt::Display for NetworkErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for NetworkErrors {}

impl std::ops::Deref for NetworkErrors {
    type Target = [NetworkError];
    fn deref(&self) -> &[NetworkError] {
        &self.errors
    }
}

impl IntoIterator for NetworkErrors {
    type Item = NetworkError;
    type IntoIter = std::vec::IntoIter<NetworkError>;
    fn into_iter(self) -> Self::IntoIter {
        self.errors.into_iter()
    }
}

impl<'a> IntoIterator for &'a NetworkErrors {
    type Item = &'a NetworkError;
    type IntoIter = std::slice::Iter<'a, NetworkError>;
    fn into_iter(self) -> Self::IntoIter {
        self.errors.iter()
    }
}

/// A validated network, ready to simulate.
#[derive(Clone, Debug)]
pub struct Network {
    spec: NetworkSpec,
    /// Client and overload behaviour, if any (see [`Network::with_overload`]).
    overload: Option<std::sync::Arc<Overload>>,
    /// Routing policies of rows, if any (see [`Network::with_policies`]).
    policies: std::sync::Arc<[RowPolicy]>,
}

impl Network {
    /// Checks `spec` and wraps it; returns every problem found.
    ///
    /// The rules are those of each part and of the whole (routes that
    /// end, capacities that fit). Whether an open workload can be served
    /// at all is not one of them: a network offered more work than a
    /// station can do is valid, and a run of it measures a queue that
    /// grows without end (its figures depend on the run's length, and
    /// [`run`](crate::run) warns that they are not steady). Check that
    /// first with `qsim_model::instability`, or build a model with
    /// `qsim_model::Model::from_spec`, which refuses such a network as a
    /// model file would be refused.
    pub fn new(spec: NetworkSpec) -> Result<Network, NetworkErrors> {
        let errors = validate(&spec);
        if !errors.is_empty() {
            return Err(NetworkErrors { errors });
        }
        // Rules on the whole network (its visit ratios) come last, on a
        // network whose parts are valid.
        let network = Network {
            spec,
            overload: None,
            policies: std::sync::Arc::new([]),
        };
        let view = View::of(&network.spec);
        let mut c = Check::new(&view, Scope::Network);
        timeless::check(&network, &mut c);
        let spec = &network.spec;
        if c.one_per_station("capacity", spec.capacity.len()) {
            for (s, cap) in spec.capacity.iter().enumerate() {
                if let Some(cap) = cap {
                    c.scope = Scope::Station(s);
                    queue::check_capacity(&mut c, spec, s, *cap);
                }
            }
        }
        if c.one_per_station("weights", spec.weights.len()) {
            for (s, w) in spec.weights.iter().enumerate() {
                if !w.is_empty() {
                    c.scope = Scope::Station(s);
                    queue::check_weights(&mut c, spec, s, w);
                }
            }
        }
        let errors = c.out;
        if errors.is_empty() {
            Ok(network)
        } else {
            Err(NetworkErrors { errors })
        }
    }

    /// The checked description.
    pub fn spec(&self) -> &NetworkSpec {
        &self.spec
    }

    /// Attaches client behaviour per class and overload behaviour per
    /// station ([`Overload`]), checked against the network; an empty
    /// `overload` leaves the network as it is.
    pub fn with_overload(mut self, overload: Overload) -> Result<Network, NetworkErrors> {
        let errors = overload.check(&self);
        if !errors.is_empty() {
            return Err(NetworkErrors { errors });
        }
        self.overload = (!overload.is_empty()).then(|| std::sync::Arc::new(overload));
        Ok(self)
    }

    /// A network of `spec` (this one changed: another start, a station
    /// sped up) with this one's client and overload behaviour and routing
    /// policies.
    pub fn rebuilt(&self, spec: NetworkSpec) -> Result<Network, NetworkErrors> {
        Network::new(spec)?
            .with_overload(self.overload().cloned().unwrap_or_default())?
            .with_policies(self.policies().to_vec())
    }

    /// Attaches routing policies to rows of the classes' routing tables
    /// ([`RowPolicy`]), checked against the network; rows without one
    /// stay Markov.
    pub fn with_policies(mut self, policies: Vec<RowPolicy>) -> Result<Network, NetworkErrors> {
        let errors = policy::check(&self, &policies);
        if !errors.is_empty() {
            return Err(NetworkErrors { errors });
        }
        self.policies = policies.into();
        Ok(self)
    }

    /// The routing policies of rows (empty: every row is Markov).
    pub fn policies(&self) -> &[RowPolicy] {
        &self.policies
    }

    /// The client and overload behaviour, if the network has any.
    pub fn overload(&self) -> Option<&Overload> {
        self.overload.as_deref()
    }

    /// The capacity of station `s`, if it has one.
    pub fn capacity(&self, s: StationId) -> Option<Capacity> {
        self.spec.capacity.get(s).copied().flatten()
    }

    /// Looks up a station by name.
    pub fn station_id(&self, name: &str) -> Option<StationId> {
        self.spec.stations.iter().position(|s| s.name == name)
    }
}

/// The parts of a network, some of which may be missing (a reader could
/// not build them); indices are those the whole spec would have.
pub(crate) struct View<'a> {
    pub stations: Vec<Option<&'a StationSpec>>,
    pub classes: Vec<Option<&'a ClassSpec>>,
    pub regions: Vec<Option<&'a RegionSpec>>,
}

impl<'a> View<'a> {
    /// Every part of `spec`, all present.
    pub fn of(spec: &'a NetworkSpec) -> View<'a> {
        View {
            stations: spec.stations.iter().map(Some).collect(),
            classes: spec.classes.iter().map(Some).collect(),
            regions: spec.regions.iter().map(Some).collect(),
        }
    }
}

/// Collects the errors of one validation, at a current scope.
pub(crate) struct Check<'a> {
    pub view: &'a View<'a>,
    pub scope: Scope,
    pub out: Vec<NetworkError>,
}

impl<'a> Check<'a> {
    /// No errors yet, at `scope`.
    pub fn new(view: &'a View<'a>, scope: Scope) -> Check<'a> {
        Check {
            view,
            scope,
            out: Vec::new(),
        }
    }

    /// Station `s`: `Err` if there is no such index, `Ok(None)` if the
    /// station exists but could not be built.
    pub fn station(&self, s: StationId) -> Result<Option<&'a StationSpec>, ()> {
        self.view.stations.get(s).copied().ok_or(())
    }

    pub fn station_name(&self, s: StationId) -> String {
        match self.view.stations.get(s).copied().flatten() {
            Some(st) => st.name.clone(),
            None => format!("#{s}"),
        }
    }

    /// Whether a per-station list of `entries` under `key` fits the
    /// network: empty (none given) or one entry per station; reports the
    /// mismatch at the network's `key` otherwise.
    pub fn one_per_station(&mut self, key: &'static str, entries: usize) -> bool {
        let stations = self.view.stations.len();
        if entries == 0 || entries == stations {
            return true;
        }
        self.scope = Scope::Network;
        self.error(
            &[Field::Key(key)],
            format!("expected one {key} entry per station ({stations}), found {entries}"),
        );
        false
    }

    pub fn error(&mut self, field: &[Field], message: impl Into<String>) {
        let mut path = match self.scope {
            Scope::Network => String::new(),
            Scope::Station(s) => format!("stations.{}", self.station_name(s)),
            Scope::Class(c) => match self.view.classes.get(c).copied().flatten() {
                Some(class) => format!("classes.{}", class.name),
                None => format!("classes.#{c}"),
            },
            Scope::Region(r) => match self.view.regions.get(r).copied().flatten() {
                Some(region) => format!("regions.{}", region.name),
                None => format!("regions.#{r}"),
            },
            Scope::Initial => "initial".into(),
        };
        for f in field {
            let part = match *f {
                Field::Key(k) => k.to_string(),
                Field::Index(i) => {
                    path.push_str(&format!("[{i}]"));
                    continue;
                }
                Field::From(None) => "source".into(),
                Field::From(Some(s)) | Field::To(Target::Station(s)) => self.station_name(s),
                Field::To(Target::Exit) => "sink".into(),
                Field::To(Target::Switch { station, class }) => {
                    let cname = self.view.classes.get(class).copied().flatten();
                    let cname = cname.map_or_else(|| format!("#{class}"), |x| x.name.clone());
                    format!("{cname}:{}", self.station_name(station))
                }
            };
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&part);
        }
        self.out.push(NetworkError {
            scope: self.scope,
            field: field.to_vec(),
            path,
            message: message.into(),
        });
    }

    /// A time in seconds must be finite and >= 0.
    pub fn time(&mut self, field: &[Field], v: f64) {
        if let Some(m) = batch::time_message(v) {
            self.error(field, m);
        }
    }
}

/// A number as it reads best in a message: `-5`, `0.0004`, `1.5`.
pub(crate) fn fmt_num(x: f64) -> String {
    if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else if x.is_finite() && x.abs() >= 1e15 {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

fn validate(spec: &NetworkSpec) -> Vec<NetworkError> {
    let view = View::of(spec);
    let mut c = Check::new(&view, Scope::Network);
    if spec.classes.is_empty() {
        c.error(
            &[Field::Key("classes")],
            "a network needs at least one job class, found none",
        );
    }
    let mut names = std::collections::HashSet::new();
    for (s, st) in spec.stations.iter().enumerate() {
        if !names.insert(st.name.as_str()) {
            c.scope = Scope::Station(s);
            c.error(&[], "duplicate station name");
        }
    }
    check_view(&mut c, Some(&spec.initial));
    c.out
}

/// Checks the parts of a network that could be built, by the index each has
/// in the whole network (`None` for a part that could not be built): every
/// rule that the present parts alone decide. A reader calls it when some
/// parts are missing, so their errors come with the reader's own; when all
/// are present, [`Network::new`] checks the same rules and the whole.
pub fn check_parts(
    stations: &[Option<StationSpec>],
    classes: &[Option<ClassSpec>],
    regions: &[Option<RegionSpec>],
) -> Vec<NetworkError> {
    let view = View {
        stations: stations.iter().map(Option::as_ref).collect(),
        classes: classes.iter().map(Option::as_ref).collect(),
        regions: regions.iter().map(Option::as_ref).collect(),
    };
    let mut c = Check::new(&view, Scope::Network);
    check_view(&mut c, None);
    c.out
}

fn check_view(c: &mut Check<'_>, initial: Option<&InitialState>) {
    let view = c.view;
    let (ns, nc, nr) = (view.stations.len(), view.classes.len(), view.regions.len());
    c.scope = Scope::Network;
    for (key, n, max, what) in [
        ("stations", ns, MAX_STATIONS, "stations"),
        ("classes", nc, MAX_CLASSES, "classes"),
        ("regions", nr, MAX_REGIONS, "regions"),
    ] {
        if n > max {
            c.error(
                &[Field::Key(key)],
                format!(
                    "found {n} {what}; the simulator can index at most {max} (its events carry the index in a fixed number of bits)"
                ),
            );
        }
    }
    for (s, st) in view.stations.iter().enumerate() {
        let Some(st) = st else { continue };
        c.scope = Scope::Station(s);
        if st.service.len() != nc {
            c.error(
                &[Field::Key("service")],
                format!(
                    "expected one entry per class ({nc}), found {}",
                    st.service.len()
                ),
            );
        }
        if let Some(speed) = &st.speed {
            speed.check(c);
            if !st.kind.takes_speed_curve() {
                // The simulator times a batch or a round trip from its
                // service alone, and a fork or join takes no time: a speed
                // curve there would be ignored.
                c.error(
                    &[Field::Key("speed")],
                    "a speed curve applies to delay, queue and latch stations only; a batch or link is timed by its service (and per_job_s), so scale those instead",
                );
            }
        }
        match &st.kind {
            StationKind::Delay => {}
            StationKind::Queue { servers, .. } => queue::check(c, *servers),
            StationKind::Latch(l) => l.check(c),
            StationKind::Batch(b) => b.check(c),
            StationKind::Link(l) => l.check(c),
            StationKind::Fork(f) => f.check(c, s),
            StationKind::Join(j) => j.check(c),
        }
    }
    for (ci, class) in view.classes.iter().enumerate() {
        let Some(class) = class else { continue };
        c.scope = Scope::Class(ci);
        if !routing::jobs_switch_in_only(view, ci) {
            workload_rules(c, &class.workload);
        }
        routing::check(c, ci, class);
    }
    routing::check_chains(c);
    for (r, region) in view.regions.iter().enumerate() {
        let Some(region) = region else { continue };
        c.scope = Scope::Region(r);
        let stations = Field::Key("stations");
        if region.stations.is_empty() {
            c.error(&[stations], "expected at least one station, found none");
        }
        for (i, &s) in region.stations.iter().enumerate() {
            if s >= ns {
                c.error(
                    &[stations, Field::Index(i)],
                    format!("no station with index {s}"),
                );
            }
        }
        limit_rules(c, region.limit);
    }
    if let Some(InitialState::AtStation(s)) = initial
        && *s >= ns
    {
        c.scope = Scope::Initial;
        c.error(
            &[Field::Key("station")],
            format!("no station with index {s}"),
        );
    }
    if let Some(InitialState::Placed(list)) = initial {
        placed_rules(c, list);
    }
}

/// Placed jobs: existing stations and classes, no more jobs of a closed
/// class than it has (an open class's are a backlog, any number).
fn placed_rules(c: &mut Check<'_>, list: &[Placement]) {
    let view = c.view;
    c.scope = Scope::Initial;
    let mut per_class = std::collections::BTreeMap::<ClassId, u64>::new();
    for (i, p) in list.iter().enumerate() {
        if p.station >= view.stations.len() {
            c.error(
                &[Field::Index(i), Field::Key("station")],
                format!("no station with index {}", p.station),
            );
        }
        *per_class.entry(p.class).or_default() += u64::from(p.jobs);
    }
    for (class, n) in per_class {
        match view.classes.get(class).copied().flatten() {
            None => c.error(
                &[Field::Key("class")],
                format!("no class with index {class}"),
            ),
            Some(cl) => match cl.workload {
                Workload::Closed { population, .. } if n > u64::from(population) => c.error(
                    &[Field::Key("class")],
                    format!(
                        "{n} jobs of class {} placed, more than its population {population}",
                        cl.name
                    ),
                ),
                // An open class's placed jobs are a backlog: requests
                // that arrived before the start (see `InitialState::Placed`).
                Workload::Closed { .. } | Workload::Open { .. } => {}
            },
        }
    }
}

fn workload_rules(c: &mut Check<'_>, w: &Workload) {
    if let Workload::Closed { population: 0, .. } = w {
        c.error(
            &[Field::Key("population")],
            "expected a number of jobs >= 1, found 0",
        );
    }
}

fn limit_rules(c: &mut Check<'_>, limit: Option<u32>) {
    if limit == Some(0) {
        c.error(
            &[Field::Key("limit")],
            "expected a limit >= 1 (or \"none\"), found 0",
        );
    }
}

/// Runs `rules` at `scope` with nothing else of the network known.
fn alone(scope: Scope, rules: impl FnOnce(&mut Check<'_>)) -> Vec<NetworkError> {
    let view = View {
        stations: Vec::new(),
        classes: Vec::new(),
        regions: Vec::new(),
    };
    let mut c = Check::new(&view, scope);
    rules(&mut c);
    c.out
}

/// The range rules of the workload of class `class` alone, for a reader
/// that could read the workload but not the rest of the class (whose
/// [`check_parts`] therefore cannot see it).
pub fn check_workload(class: ClassId, workload: &Workload) -> Vec<NetworkError> {
    alone(Scope::Class(class), |c| workload_rules(c, workload))
}

/// The range rules of the limit of region `region` alone (see
/// [`check_workload`]).
pub fn check_region_limit(region: RegionId, limit: Option<u32>) -> Vec<NetworkError> {
    alone(Scope::Region(region), |c| limit_rules(c, limit))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The errors of `check_view` on `n` stations, none of them built
    /// (cheap even at the limit: a view is one pointer per station).
    fn count_errors(n: usize) -> Vec<NetworkError> {
        let view = View {
            stations: vec![None; n],
            classes: Vec::new(),
            regions: Vec::new(),
        };
        let mut c = Check::new(&view, Scope::Network);
        check_view(&mut c, None);
        c.out
    }

    #[test]
    fn station_count_is_limited_by_the_event_encoding() {
        // Station ids travel in 24 bits of an event: 2^24 stations fit, one
        // more does not, and the error says so at the stations.
        assert_eq!(MAX_STATIONS, 1 << 24);
        assert!(count_errors(MAX_STATIONS).is_empty());
        let e = count_errors(MAX_STATIONS + 1);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(
            (e[0].scope, e[0].field.as_slice()),
            (Scope::Network, &[Field::Key("stations")][..])
        );
        assert!(e[0].message.contains("found 16777217 stations"), "{}", e[0]);
        assert!(e[0].message.contains("at most 16777216"), "{}", e[0]);
    }
}
