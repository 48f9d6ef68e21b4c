//! From the spanned tree to a kernel [`NetworkSpec`]'s parts, a
//! [`RunConfig`] and derived metrics, reporting every problem with its
//! location.
//!
//! The reader checks shape and type (a table, a number, a known key, a
//! known name) and builds the spec; range rules (servers >= 1, probabilities
//! in [0, 1]...) are the kernel's, and its located errors are mapped back to
//! keys by `lib.rs`. One file per table: `stations/` (one file per kind),
//! `classes` (with `workload`), `routing`, `regions`, `simulation`,
//! `metrics`; `speed` is shared by the station kinds.

mod classes;
mod metrics;
mod overload;
mod policy;
pub(crate) mod regions;
mod route;
mod routing;
mod simulation;
mod speed;
pub(crate) mod stations;
pub(crate) mod workload;

use crate::ctx::{Ctx, child};
use crate::tree::{Node, Origin, V};
use crate::{DerivedMetric, did_you_mean};
use qsim_kernel::{
    Capacity, ClassSpec, ForkSpec, InitialState, NetworkError, NetworkSpec, RegionSpec, RunConfig,
    StationSpec, Workload,
};
use std::collections::HashMap;
use std::path::Path;

/// A table of the model with its key path: each read names its key once.
#[derive(Clone, Copy)]
pub(crate) struct Table<'n, 'p> {
    pub node: &'n Node,
    pub path: &'p str,
}

impl<'n> Table<'n, '_> {
    /// Key `key`, if present.
    pub fn get(&self, key: &str) -> Option<&'n Node> {
        self.node.get(key)
    }

    /// Reads key `key` with `read` (given the node and its path) if present;
    /// `default` if absent.
    pub fn opt<T>(
        &self,
        ctx: &mut Ctx<'_>,
        key: &str,
        default: T,
        read: impl FnOnce(&mut Ctx<'_>, &'n Node, &str) -> Option<T>,
    ) -> Option<T> {
        match self.node.get(key) {
            Some(n) => read(ctx, n, &child(self.path, key)),
            None => Some(default),
        }
    }

    /// Reads required key `key` with `read`; a missing key is reported at
    /// the table, saying that `what` was expected.
    pub fn req<T>(
        &self,
        ctx: &mut Ctx<'_>,
        key: &str,
        what: &str,
        read: impl FnOnce(&mut Ctx<'_>, &'n Node, &str) -> Option<T>,
    ) -> Option<T> {
        let n = ctx.required(self.node, self.path, key, what)?;
        read(ctx, n, &child(self.path, key))
    }
}

/// What the reader produced: every part it could build (by the index it
/// has in the network), and what the later checks need.
pub(crate) struct Built {
    pub stations: Vec<Option<StationSpec>>,
    pub classes: Vec<Option<ClassSpec>>,
    pub regions: Vec<Option<RegionSpec>>,
    pub initial: Option<InitialState>,
    /// Per station, its capacity (all `None`: no station has one).
    pub capacity: Vec<Option<Capacity>>,
    /// Per station, its PS weights per class (all empty: none has any).
    pub weights: Vec<Vec<f64>>,
    pub run: Option<RunConfig>,
    pub derived: Option<Vec<DerivedMetric>>,
    /// Per class: where its arrival is given (open classes) and the key path.
    pub arrival_at: Vec<Option<(Origin, String)>>,
    /// The key path prefix of each class (`workload` or `classes.NAME`).
    pub class_paths: Vec<String>,
    /// The kernel's range rules on pieces of parts that could not be built
    /// whole (the workload of a class whose route is wrong), so that they
    /// are reported with the reader's errors.
    pub piece_errors: Vec<NetworkError>,
    /// Per class, the steps of its `schedule` (empty when it has none).
    pub schedules: Vec<Vec<qsim_kernel::schedule::Step>>,
    /// Per station, the steps of its capacity `schedule` (empty when it
    /// has none).
    pub station_schedules: Vec<Vec<qsim_kernel::schedule::CapacityStep>>,
    /// Client behaviour per class and overload behaviour per station.
    pub overload: qsim_kernel::Overload,
    /// The routing policies of the classes' rows.
    pub policies: Vec<qsim_kernel::RowPolicy>,
}

impl Built {
    /// The whole spec, if every part could be built.
    pub fn spec(&mut self) -> Option<NetworkSpec> {
        let all = self.stations.iter().all(Option::is_some)
            && self.classes.iter().all(Option::is_some)
            && self.regions.iter().all(Option::is_some)
            && self.initial.is_some();
        all.then(|| NetworkSpec {
            stations: std::mem::take(&mut self.stations)
                .into_iter()
                .flatten()
                .collect(),
            classes: std::mem::take(&mut self.classes)
                .into_iter()
                .flatten()
                .collect(),
            regions: std::mem::take(&mut self.regions)
                .into_iter()
                .flatten()
                .collect(),
            initial: self.initial.take().unwrap_or_default(),
            capacity: if self.capacity.iter().any(Option::is_some) {
                std::mem::take(&mut self.capacity)
            } else {
                Vec::new()
            },
            weights: if self.weights.iter().any(|w| !w.is_empty()) {
                std::mem::take(&mut self.weights)
            } else {
                Vec::new()
            },
        })
    }
}

pub(crate) struct ClassIn<'n> {
    pub name: String,
    pub node: &'n Node,
    pub path: String,
}

pub(crate) struct Names<'n> {
    pub stations: Vec<(String, &'n Node)>,
    pub ids: HashMap<String, usize>,
    pub classes: Vec<ClassIn<'n>>,
}

impl Names<'_> {
    pub fn station_list(&self) -> Vec<&str> {
        self.stations.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// Resolves a station name, reporting an unknown one with the known names.
    pub fn station(
        &self,
        ctx: &mut Ctx<'_>,
        node: &Node,
        path: &str,
        extra: &[&str],
    ) -> Option<usize> {
        let name = ctx.str(node, path, "a station name")?;
        if let Some(&id) = self.ids.get(name) {
            return Some(id);
        }
        let mut known = self.station_list();
        known.extend_from_slice(extra);
        let hint = did_you_mean(name, &known).map(|s| format!("did you mean `{s}`?"));
        ctx.error_hint(
            &node.origin,
            path,
            format!(
                "no station named `{name}`; expected one of: {}",
                list_or_none(&known)
            ),
            hint,
        );
        None
    }

    /// A station named by a table key (a routing row or branch, a fork target).
    pub fn station_key(
        &self,
        ctx: &mut Ctx<'_>,
        e: &crate::tree::Entry,
        path: &str,
        extra: &[&str],
    ) -> Option<usize> {
        let key_node = Node {
            v: V::Str(e.key.clone()),
            origin: e.key_origin.clone(),
        };
        self.station(ctx, &key_node, path, extra)
    }

    /// How many members station group `group` has: its stations are named
    /// `group[0].x`, `group[1].x`, ... (0 when there is no such group).
    pub fn group_size(&self, group: &str) -> usize {
        let prefix = format!("{group}[");
        self.stations
            .iter()
            .filter_map(|(n, _)| {
                let rest = n.strip_prefix(&prefix)?;
                let (k, _) = rest.split_once("].")?;
                k.parse::<usize>().ok()
            })
            .max()
            .map_or(0, |k| k + 1)
    }

    /// Kind of a station as written (even if the station itself had errors).
    pub fn kind_of(&self, id: usize) -> &str {
        match self.stations[id].1.get("kind").map(|k| &k.v) {
            Some(V::Str(k)) => k,
            _ => "?",
        }
    }
}

fn list_or_none(v: &[&str]) -> String {
    if v.is_empty() {
        "(no stations defined)".into()
    } else {
        v.join(", ")
    }
}

/// The fork parameters of station `id`, if it is a fork that was built.
pub(crate) fn fork_info(stations: &[Option<StationSpec>], id: usize) -> Option<&ForkSpec> {
    stations.get(id)?.as_ref()?.kind.as_fork()
}

/// The items of a non-empty array at `node`, or a located error saying
/// that `of` (e.g. "station names") was expected, or that the array was
/// empty (`empty` completes "expected at least one ...").
pub(crate) fn non_empty_array<'n>(
    ctx: &mut Ctx<'_>,
    node: &'n Node,
    path: &str,
    of: &str,
    empty: &str,
) -> Option<&'n [Node]> {
    let V::Array(items) = &node.v else {
        ctx.error(
            &node.origin,
            path,
            format!("expected an array of {of}, found {}", node.v.describe()),
        );
        return None;
    };
    if items.is_empty() {
        ctx.error(&node.origin, path, format!("expected at least one {empty}"));
        return None;
    }
    Some(items)
}

/// The names of the stations and classes, each with its table, in file
/// order (so that every reference can be resolved whatever the order).
fn read_names<'n>(ctx: &mut Ctx<'_>, root: &'n Node) -> Names<'n> {
    let mut names = Names {
        stations: Vec::new(),
        ids: HashMap::new(),
        classes: Vec::new(),
    };
    match root.get("stations") {
        Some(st) => {
            if let Some(entries) = ctx.table(st, "stations", "the stations") {
                for e in entries {
                    if e.key == "source" || e.key == "sink" {
                        ctx.error(
                            &e.key_origin,
                            &child("stations", &e.key),
                            format!(
                                "`{}` is reserved in routing tables (source = start of an interaction, sink = its end); expected another station name",
                                e.key
                            ),
                        );
                    }
                    names.ids.insert(e.key.clone(), names.stations.len());
                    names.stations.push((e.key.clone(), &e.node));
                }
                if entries.is_empty() {
                    ctx.error(
                        &st.origin,
                        "stations",
                        "expected at least one station, found none",
                    );
                }
            }
        }
        None => ctx.error(
            &root.origin,
            "stations",
            "missing section [stations.NAME]; a model needs at least one station",
        ),
    }
    match (root.get("workload"), root.get("classes")) {
        (Some(w), None) => names.classes.push(ClassIn {
            name: "default".into(),
            node: w,
            path: "workload".into(),
        }),
        (None, Some(c)) => {
            if let Some(entries) = ctx.table(c, "classes", "the job classes") {
                for e in entries {
                    names.classes.push(ClassIn {
                        name: e.key.clone(),
                        node: &e.node,
                        path: child("classes", &e.key),
                    });
                }
                if entries.is_empty() {
                    ctx.error(&c.origin, "classes", "expected at least one class, found none");
                }
            }
        }
        (Some(w), Some(_)) => ctx.error(
            &w.origin,
            "workload",
            "found both [workload] and [classes.NAME]; expected one of them ([workload] is the single-class form)",
        ),
        (None, None) => ctx.error(
            &root.origin,
            "workload",
            "missing the workload; expected a [workload] section or [classes.NAME] sections",
        ),
    }
    names
}

pub(crate) fn build(ctx: &mut Ctx<'_>, root: &Node, base: &Path) -> Built {
    ctx.check_keys(root, "", &crate::format::TOP.names(), "the top level");

    // Names first, so every reference can be resolved whatever the order.
    let names = read_names(ctx, root);
    let class_names: Vec<&str> = names.classes.iter().map(|c| c.name.as_str()).collect();

    let mut stations = Vec::new();
    let mut capacity = Vec::new();
    let mut weights = Vec::new();
    let mut overload = qsim_kernel::Overload::default();
    let mut station_schedules = Vec::new();
    // For each station and class: whether some service key covers the class
    // (even if its value was wrong, so one mistake is reported once).
    let mut covered: Vec<Vec<bool>> = Vec::new();
    for (name, node) in &names.stations {
        let mut cap = None;
        let (spec, cov) = stations::station(ctx, &names, &class_names, name, node, base, &mut cap);
        let is_queue = spec.as_ref().is_some_and(|s| s.kind.as_queue().is_some());
        stations.push(spec);
        capacity.push(cap);
        covered.push(cov);
        let t = Table {
            node,
            path: &child("stations", name),
        };
        overload
            .stations
            .push(overload::station(ctx, t, base).flatten());
        station_schedules.push(workload::station_schedule(ctx, t).unwrap_or_default());
        // Only a queue declares `weights`; other kinds report it unknown.
        weights.push(if is_queue {
            stations::queue::weights(ctx, t, &class_names).unwrap_or_default()
        } else {
            Vec::new()
        });
    }

    let mut classes = Vec::new();
    let mut class_sla = Vec::new();
    let mut arrival_at = Vec::new();
    let mut piece_errors = Vec::new();
    let mut policies = Vec::new();
    for (ci, c) in names.classes.iter().enumerate() {
        let mut sla = None;
        let class = routing::Class {
            names: &names,
            stations: &stations,
            covered: &covered,
            ci,
            c,
        };
        let (spec, arr) = classes::class(ctx, &class, base, &mut piece_errors, &mut sla);
        class_sla.push(sla);
        classes.push(spec);
        let t = Table {
            node: c.node,
            path: &c.path,
        };
        // Without a deadline of its own a client's is its class's SLA.
        let client = overload::client(ctx, t, base).flatten().map(|mut k| {
            k.deadline_s = k.deadline_s.or(sla);
            k
        });
        overload.classes.push(client);
        policies.extend(policy::policies(ctx, &names, ci, c));
        arrival_at.push(arr);
    }
    chain_workloads(ctx, &names, &mut classes);

    let schedules = names
        .classes
        .iter()
        .map(|c| {
            let t = Table {
                node: c.node,
                path: &c.path,
            };
            workload::schedule(ctx, t).unwrap_or_default()
        })
        .collect();
    let regions = regions::regions(ctx, &names, root, &mut piece_errors);
    let (mut run, initial) = simulation::simulation(ctx, &names, root);
    if let Some(run) = &mut run
        && class_sla.iter().any(Option::is_some)
    {
        run.class_sla_s = class_sla;
    }
    let derived = metrics::metrics(ctx, &names, root);
    Built {
        stations,
        classes,
        regions,
        initial,
        capacity,
        weights,
        run,
        derived,
        arrival_at,
        class_paths: names.classes.iter().map(|c| c.path.clone()).collect(),
        piece_errors,
        schedules,
        station_schedules,
        overload,
        policies,
    }
}

/// Gives each class that jobs only switch into the workload of its chain's
/// start class (population 0: the jobs are counted in the start class), or
/// says that no class switches jobs into it.
fn chain_workloads(ctx: &mut Ctx<'_>, names: &Names<'_>, classes: &mut [Option<ClassSpec>]) {
    let switched: Vec<bool> = names
        .classes
        .iter()
        .map(|c| c.path != "workload" && classes::switched_in(c.node))
        .collect();
    if !switched.contains(&true) {
        return;
    }
    if classes.iter().any(Option::is_none) {
        // A class that failed may be the chain's start: the classes that
        // take its jobs are not checked alone (their errors would only
        // follow from it).
        for (c, &sw) in classes.iter_mut().zip(&switched) {
            if sw {
                *c = None;
            }
        }
        return;
    }
    let spec = qsim_kernel::NetworkSpec {
        classes: classes.iter().flatten().cloned().collect(),
        ..Default::default()
    };
    let starts = spec.chain_starts();
    for (ci, c) in names.classes.iter().enumerate() {
        if !switched[ci] {
            continue;
        }
        let s = starts[ci];
        if s == ci || switched[s] {
            ctx.error_hint(
                &c.node.origin,
                &c.path,
                format!(
                    "class {} has no workload and no class switches jobs into it; expected type = \"open\" with arrival or type = \"closed\" with population, and a source row",
                    c.name
                ),
                Some(format!(
                    "or switch jobs into it from another class's row, e.g. disk = {{ \"{}:disk\" = 1.0 }}",
                    c.name
                )),
            );
            // Its kernel checks would only repeat this.
            classes[ci] = None;
            continue;
        }
        let w = match &spec.classes[s].workload {
            Workload::Closed { think, .. } => Workload::Closed {
                population: 0,
                think: think.clone(),
            },
            open => open.clone(),
        };
        if let Some(cl) = &mut classes[ci] {
            cl.workload = w;
        }
        let first = &names.classes[s].name;
        ctx.warn(
            &c.node.origin,
            &c.path,
            format!(
                "class {} takes its jobs from class {first} by switching: their interactions are counted for {first} (where they start), so {}'s own throughput and response time are not defined (n/a); its figures at each station are under the station",
                c.name, c.name
            ),
        );
    }
}
