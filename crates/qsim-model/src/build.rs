//! From the spanned tree to a kernel [`NetworkSpec`], a [`RunConfig`] and
//! derived metrics, reporting every problem with its location.

use crate::ctx::{Ctx, child};
use crate::dists::dist;
use crate::tree::{Entry, Node, Origin, V};
use crate::{DerivedMetric, Expr, did_you_mean, num};
use qsim_kernel::{
    BatchSpec, ClassSpec, Discipline, ForkSpec, InitialState, JoinSpec, LatchSpec, LinkSpec,
    NetworkSpec, NumaSpec, Precision, RegionSpec, Routing, RunConfig, Speed, SpinSpec, Spread,
    StationKind, StationSpec, Stop, Target, Wake, Warmup, Workload,
};
use std::collections::HashMap;
use std::path::Path;

pub(crate) const TOP_KEYS: &[&str] = &[
    "simulation",
    "workload",
    "classes",
    "stations",
    "regions",
    "metrics",
];
const SIM_KEYS: &[&str] = &[
    "replications",
    "seed",
    "stop",
    "warmup",
    "precision",
    "sla_s",
    "initial",
    "max_jobs_present",
    "max_events",
];
const WORKLOAD_KEYS: &[&str] = &[
    "type",
    "arrival",
    "rate_per_s",
    "population",
    "think",
    "route",
    "routing",
];
const CLASS_KEYS: &[&str] = &[
    "type",
    "arrival",
    "rate_per_s",
    "population",
    "think",
    "route",
    "routing",
    "priority",
];
pub(crate) const KINDS: &[&str] = &["delay", "queue", "latch", "batch", "link", "fork", "join"];
const DISCIPLINES: &[&str] = &["fcfs", "ps", "lcfs", "priority"];
const NUMA_KEYS: &[&str] = &[
    "nodes",
    "cores_per_node",
    "local_handoff_s",
    "remote_handoff_s",
    "migration_s",
];
const SPIN_KEYS: &[&str] = &[
    "spin_wait_delay",
    "pause_cycles",
    "pauses_per_unit",
    "clock_ghz",
    "spin_rounds",
    "context_switch_s",
    "cpu",
];

/// The keys a station of this kind accepts.
pub(crate) fn station_keys(kind: &str) -> &'static [&'static str] {
    match kind {
        "delay" => &["kind", "service", "service_by_class", "speed"],
        "queue" => &[
            "kind",
            "service",
            "service_by_class",
            "speed",
            "servers",
            "discipline",
        ],
        "latch" => &[
            "kind",
            "service",
            "service_by_class",
            "speed",
            "numa",
            "spin",
            "wake",
        ],
        "batch" => &[
            "kind",
            "service",
            "service_by_class",
            "speed",
            "max_batch",
            "max_wait_s",
            "per_job_s",
        ],
        "link" => &[
            "kind",
            "service",
            "rtt",
            "service_by_class",
            "speed",
            "pipeline",
            "max_batch",
        ],
        "fork" => &["kind", "fan_out", "to", "spread", "join"],
        "join" => &["kind", "quorum"],
        _ => &[
            "kind",
            "service",
            "rtt",
            "service_by_class",
            "speed",
            "servers",
            "discipline",
            "numa",
            "spin",
            "wake",
            "max_batch",
            "max_wait_s",
            "per_job_s",
            "pipeline",
            "fan_out",
            "to",
            "spread",
            "join",
            "quorum",
        ],
    }
}

/// What the builder produced, plus what the later checks need.
pub(crate) struct Built {
    pub spec: NetworkSpec,
    pub run: RunConfig,
    pub derived: Vec<DerivedMetric>,
    /// Per class: where its arrival is given (open classes) and the key path.
    pub arrival_at: Vec<Option<(Origin, String)>>,
    /// The key path prefix of each class (`workload` or `classes.NAME`).
    pub class_paths: Vec<String>,
}

struct ClassIn<'n> {
    name: String,
    node: &'n Node,
    path: String,
}

struct Names<'n> {
    stations: Vec<(String, &'n Node)>,
    ids: HashMap<String, usize>,
    classes: Vec<ClassIn<'n>>,
}

impl Names<'_> {
    fn station_list(&self) -> Vec<&str> {
        self.stations.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// Resolves a station name, reporting an unknown one with the known names.
    fn station(&self, ctx: &mut Ctx<'_>, node: &Node, path: &str, extra: &[&str]) -> Option<usize> {
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
}

fn list_or_none(v: &[&str]) -> String {
    if v.is_empty() {
        "(no stations defined)".into()
    } else {
        v.join(", ")
    }
}

pub(crate) fn build(ctx: &mut Ctx<'_>, root: &Node, base: &Path) -> Option<Built> {
    ctx.check_keys(root, "", TOP_KEYS, "the top level");

    // Names first, so every reference can be resolved whatever the order.
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
    let class_names: Vec<&str> = names.classes.iter().map(|c| c.name.as_str()).collect();

    // Stations.
    let mut stations = Vec::new();
    // For each station and class: whether some service key covers the class
    // (even if its value was wrong, so one mistake is reported once).
    let mut covered: Vec<Vec<bool>> = Vec::new();
    for (name, node) in &names.stations {
        let (spec, cov) = station(ctx, &names, &class_names, name, node, base);
        stations.push(spec);
        covered.push(cov);
    }

    // Classes.
    let mut classes = Vec::new();
    let mut arrival_at = Vec::new();
    for (ci, c) in names.classes.iter().enumerate() {
        let (spec, arr) = class(ctx, &names, &stations, &covered, ci, c, base);
        classes.push(spec);
        arrival_at.push(arr);
    }

    let regions = regions(ctx, &names, root);
    let (run, initial) = simulation(ctx, &names, root);
    let derived = metrics(ctx, &names, root);

    let spec = NetworkSpec {
        stations: stations.into_iter().collect::<Option<Vec<_>>>()?,
        classes: classes.into_iter().collect::<Option<Vec<_>>>()?,
        regions: regions?,
        initial: initial?,
    };
    Some(Built {
        spec,
        run: run?,
        derived: derived?,
        arrival_at,
        class_paths: names.classes.iter().map(|c| c.path.clone()).collect(),
    })
}

fn station(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    class_names: &[&str],
    name: &str,
    node: &Node,
    base: &Path,
) -> (Option<StationSpec>, Vec<bool>) {
    let path = child("stations", name);
    let nc = class_names.len();
    let mut covered = vec![false; nc];
    if ctx.table(node, &path, "a station").is_none() {
        return (None, covered);
    }
    let kind = ctx
        .required(
            node,
            &path,
            "kind",
            &format!("the station kind, one of: {}", KINDS.join(", ")),
        )
        .and_then(|k| ctx.choice(k, &child(&path, "kind"), KINDS));
    let kind_name = kind.unwrap_or("?");
    ctx.check_keys(
        node,
        &path,
        station_keys(kind_name),
        &if kind.is_some() {
            format!("a {kind_name} station")
        } else {
            "a station".to_string()
        },
    );
    let mut ok = kind.is_some();

    // Service times.
    let takes_service = !matches!(kind_name, "fork" | "join");
    let mut service: Vec<Option<qsim_kernel::Dist>> = vec![None; nc];
    if takes_service {
        let svc_key = match (node.get("service"), node.get("rtt")) {
            (Some(_), Some(r)) => {
                ctx.error(
                    &r.origin,
                    &child(&path, "rtt"),
                    "rtt is another name for service; expected only one of them",
                );
                ok = false;
                None
            }
            (Some(s), None) => Some(("service", s)),
            (None, Some(r)) => Some(("rtt", r)),
            (None, None) => None,
        };
        if let Some((key, s)) = svc_key {
            match dist(ctx, s, &child(&path, key), base) {
                Some(d) => service.iter_mut().for_each(|x| *x = Some(d.clone())),
                None => ok = false,
            }
            covered.iter_mut().for_each(|c| *c = true);
        }
        if let Some(by) = node.get("service_by_class") {
            let p = child(&path, "service_by_class");
            if let Some(entries) = ctx.table(by, &p, "a table of class = distribution") {
                for e in entries {
                    let Some(ci) = class_names.iter().position(|c| *c == e.key) else {
                        let hint = did_you_mean(&e.key, class_names)
                            .map(|s| format!("did you mean `{s}`?"));
                        ctx.error_hint(
                            &e.key_origin,
                            &child(&p, &e.key),
                            format!(
                                "no class named `{}`; expected one of: {}",
                                e.key,
                                class_names.join(", ")
                            ),
                            hint,
                        );
                        ok = false;
                        continue;
                    };
                    covered[ci] = true;
                    match dist(ctx, &e.node, &child(&p, &e.key), base) {
                        Some(d) => service[ci] = Some(d),
                        None => ok = false,
                    }
                }
            } else {
                ok = false;
            }
        }
    }

    let speed = match node.get("speed") {
        Some(s) if takes_service => {
            let sp = speed(ctx, s, &child(&path, "speed"));
            if sp.is_none() {
                ok = false;
            }
            sp
        }
        _ => None,
    };

    let kind = match kind_name {
        "delay" => Some(StationKind::Delay),
        "queue" => {
            let servers = match node.get("servers") {
                Some(n) => ctx.u32(n, &child(&path, "servers"), 1, "a number of servers"),
                None => Some(1),
            };
            let discipline = match node.get("discipline") {
                Some(n) => {
                    ctx.choice(n, &child(&path, "discipline"), DISCIPLINES)
                        .map(|d| match d {
                            "ps" => Discipline::Ps,
                            "lcfs" => Discipline::Lcfs,
                            "priority" => Discipline::Priority,
                            _ => Discipline::Fcfs,
                        })
                }
                None => Some(Discipline::Fcfs),
            };
            match (servers, discipline) {
                (Some(servers), Some(discipline)) => Some(StationKind::Queue {
                    servers,
                    discipline,
                }),
                _ => None,
            }
        }
        "latch" => latch(ctx, names, node, &path).map(StationKind::Latch),
        "batch" => {
            let max_batch = opt_u32(ctx, node, &path, "max_batch", 1, "a batch size", 1);
            let max_wait_s = match node.get("max_wait_s") {
                Some(n) => ctx
                    .non_negative(n, &child(&path, "max_wait_s"), "time in seconds")
                    .map(Some),
                None => Some(None),
            };
            let per_job_s = match node.get("per_job_s") {
                Some(n) => ctx.non_negative(n, &child(&path, "per_job_s"), "time in seconds"),
                None => Some(0.0),
            };
            match (max_batch, max_wait_s, per_job_s) {
                (Some(max_batch), Some(max_wait_s), Some(per_job_s)) => {
                    Some(StationKind::Batch(BatchSpec {
                        max_batch,
                        max_wait_s,
                        per_job_s,
                    }))
                }
                _ => None,
            }
        }
        "link" => {
            let pipeline = opt_u32(ctx, node, &path, "pipeline", 1, "a pipeline depth", 1);
            let max_batch = opt_u32(ctx, node, &path, "max_batch", 1, "a batch size", 1);
            match (pipeline, max_batch) {
                (Some(pipeline), Some(max_batch)) => Some(StationKind::Link(LinkSpec {
                    pipeline,
                    max_batch,
                })),
                _ => None,
            }
        }
        "fork" => fork(ctx, names, node, &path).map(StationKind::Fork),
        "join" => {
            let quorum = match node.get("quorum") {
                Some(n) => ctx.u32(n, &child(&path, "quorum"), 1, "a quorum").map(Some),
                None => Some(None),
            };
            quorum.map(|quorum| StationKind::Join(JoinSpec { quorum }))
        }
        _ => None,
    };
    if !ok {
        return (None, covered);
    }
    let spec = kind.map(|kind| StationSpec {
        name: name.to_string(),
        kind,
        service,
        speed,
    });
    (spec, covered)
}

fn opt_u32(
    ctx: &mut Ctx<'_>,
    node: &Node,
    path: &str,
    key: &str,
    min: u32,
    what: &str,
    default: u32,
) -> Option<u32> {
    match node.get(key) {
        Some(n) => ctx.u32(n, &child(path, key), min, what),
        None => Some(default),
    }
}

/// The items of a non-empty array at `node`, or a located error saying
/// that `of` (e.g. "station names") was expected, or that the array was
/// empty (`empty` completes "expected at least one ...").
fn non_empty_array<'n>(
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

fn speed(ctx: &mut Ctx<'_>, node: &Node, path: &str) -> Option<Speed> {
    let form = "{ table = [ { n = 100, rate = 2000 }, ... ] } or { usl = { sigma = 0.02, kappa = 0.0001, lambda = 90 } }";
    ctx.table(node, path, form)?;
    ctx.check_keys(node, path, &["table", "usl"], "a speed");
    match (node.get("table"), node.get("usl")) {
        (Some(t), None) => {
            let p = child(path, "table");
            let items = non_empty_array(
                ctx,
                t,
                &p,
                "{ n, rate } points",
                "{ n, rate } point, found none",
            )?;
            let mut points = Vec::new();
            let mut ok = true;
            let mut prev: Option<f64> = None;
            for (i, it) in items.iter().enumerate() {
                let ip = format!("{p}[{i}]");
                if ctx
                    .table(it, &ip, "a point { n = 100, rate = 2000 }")
                    .is_none()
                {
                    ok = false;
                    continue;
                }
                ctx.check_keys(it, &ip, &["n", "rate"], "a speed point");
                let n = ctx
                    .required(it, &ip, "n", "the number of jobs present (>= 1)")
                    .and_then(|n| {
                        let v = ctx.f64(n, &child(&ip, "n"))?;
                        if v < 1.0 {
                            ctx.error(
                                &n.origin,
                                &child(&ip, "n"),
                                format!("expected a number of jobs >= 1, found {}", num(v)),
                            );
                            return None;
                        }
                        if let Some(pv) = prev
                            && v <= pv
                        {
                            ctx.error(
                                &n.origin,
                                &child(&ip, "n"),
                                format!(
                                    "expected n to increase from point to point, found {} after {}",
                                    num(v),
                                    num(pv)
                                ),
                            );
                            return None;
                        }
                        Some(v)
                    });
                if let Some(v) = n {
                    prev = Some(v);
                }
                let rate = ctx
                    .required(it, &ip, "rate", "the completion rate per second (> 0)")
                    .and_then(|r| ctx.positive(r, &child(&ip, "rate"), "rate"));
                match (n, rate) {
                    (Some(n), Some(r)) => points.push((n, r)),
                    _ => ok = false,
                }
            }
            ok.then_some(Speed::Table(points))
        }
        (None, Some(u)) => {
            let p = child(path, "usl");
            ctx.table(u, &p, "the USL coefficients { sigma, kappa, lambda }")?;
            ctx.check_keys(u, &p, &["sigma", "kappa", "lambda"], "a usl speed");
            let sigma = ctx
                .required(u, &p, "sigma", "the contention coefficient (>= 0)")
                .and_then(|n| ctx.non_negative(n, &child(&p, "sigma"), "coefficient"));
            let kappa = ctx
                .required(u, &p, "kappa", "the coherency coefficient (>= 0)")
                .and_then(|n| ctx.non_negative(n, &child(&p, "kappa"), "coefficient"));
            let lambda = ctx
                .required(u, &p, "lambda", "the rate with one job present, per second")
                .and_then(|n| ctx.positive(n, &child(&p, "lambda"), "rate"));
            Some(Speed::Usl {
                sigma: sigma?,
                kappa: kappa?,
                lambda: lambda?,
            })
        }
        _ => {
            ctx.error(
                &node.origin,
                path,
                format!("expected exactly one of table or usl: {form}"),
            );
            None
        }
    }
}

fn latch(ctx: &mut Ctx<'_>, names: &Names<'_>, node: &Node, path: &str) -> Option<LatchSpec> {
    let mut ok = true;
    let numa = match node.get("numa") {
        None => None,
        Some(n) => {
            let p = child(path, "numa");
            if ctx.table(n, &p, "the NUMA parameters").is_some() {
                ctx.check_keys(n, &p, NUMA_KEYS, "numa");
                let nodes = ctx
                    .required(n, &p, "nodes", "the number of NUMA nodes (>= 1)")
                    .and_then(|v| ctx.u32(v, &child(&p, "nodes"), 1, "a number of nodes"));
                let cores = ctx
                    .required(n, &p, "cores_per_node", "the cores per node (>= 1)")
                    .and_then(|v| ctx.u32(v, &child(&p, "cores_per_node"), 1, "a number of cores"));
                let time = |ctx: &mut Ctx<'_>, k: &str, required: bool| -> Option<f64> {
                    match n.get(k) {
                        Some(v) => ctx.non_negative(v, &child(&p, k), "time in seconds"),
                        None if required => {
                            ctx.required(n, &p, k, "a time in seconds (>= 0)");
                            None
                        }
                        None => Some(0.0),
                    }
                };
                let local = time(ctx, "local_handoff_s", true);
                let remote = time(ctx, "remote_handoff_s", true);
                let migration = time(ctx, "migration_s", false);
                match (nodes, cores, local, remote, migration) {
                    (Some(nodes), Some(cores_per_node), Some(l), Some(r), Some(m)) => {
                        Some(NumaSpec {
                            nodes,
                            cores_per_node,
                            local_handoff_s: l,
                            remote_handoff_s: r,
                            migration_s: m,
                        })
                    }
                    _ => {
                        ok = false;
                        None
                    }
                }
            } else {
                ok = false;
                None
            }
        }
    };
    let spin = match node.get("spin") {
        None => None,
        Some(n) => {
            let p = child(path, "spin");
            if ctx.table(n, &p, "the spin-wait parameters").is_some() {
                ctx.check_keys(n, &p, SPIN_KEYS, "spin");
                let number = |ctx: &mut Ctx<'_>, k: &str, default: Option<f64>, what: &str| match (
                    n.get(k),
                    default,
                ) {
                    (Some(v), _) => ctx.non_negative(v, &child(&p, k), what),
                    (None, Some(d)) => Some(d),
                    (None, None) => {
                        ctx.required(n, &p, k, &format!("a {what} (>= 0)"));
                        None
                    }
                };
                let delay = number(ctx, "spin_wait_delay", None, "delay in units");
                let cycles = number(ctx, "pause_cycles", None, "number of cycles");
                let per_unit = number(ctx, "pauses_per_unit", Some(50.0), "number of pauses");
                let cs = number(ctx, "context_switch_s", None, "time in seconds");
                let ghz = ctx
                    .required(n, &p, "clock_ghz", "the clock rate in GHz (> 0)")
                    .and_then(|v| ctx.positive(v, &child(&p, "clock_ghz"), "clock rate"));
                let rounds = opt_u32(ctx, n, &p, "spin_rounds", 0, "a number of polls", 30);
                let cpu = match n.get("cpu") {
                    Some(c) => names.station(ctx, c, &child(&p, "cpu"), &[]).map(Some),
                    None => Some(None),
                };
                match (delay, cycles, per_unit, cs, ghz, rounds, cpu) {
                    (Some(d), Some(c), Some(u), Some(cs), Some(g), Some(r), Some(cpu)) => {
                        Some(SpinSpec {
                            spin_wait_delay: d,
                            pause_cycles: c,
                            pauses_per_unit: u,
                            clock_ghz: g,
                            spin_rounds: r,
                            context_switch_s: cs,
                            cpu,
                        })
                    }
                    _ => {
                        ok = false;
                        None
                    }
                }
            } else {
                ok = false;
                None
            }
        }
    };
    let wake = match node.get("wake") {
        Some(w) => match ctx.choice(w, &child(path, "wake"), &["one", "all"]) {
            Some("all") => Wake::All,
            Some(_) => Wake::One,
            None => {
                ok = false;
                Wake::One
            }
        },
        None => Wake::One,
    };
    ok.then_some(LatchSpec { numa, spin, wake })
}

fn fork(ctx: &mut Ctx<'_>, names: &Names<'_>, node: &Node, path: &str) -> Option<ForkSpec> {
    let fan_out = ctx
        .required(
            node,
            path,
            "fan_out",
            "the number of sub-jobs per job (>= 1)",
        )
        .and_then(|n| ctx.u32(n, &child(path, "fan_out"), 1, "a number of sub-jobs"));
    let tp = child(path, "to");
    let targets = ctx
        .required(node, path, "to", "the target stations: [\"a\", \"b\"] or { a = 0.5, b = 0.5 }")
        .and_then(|t| {
            let mut out = Vec::new();
            let mut ok = true;
            match &t.v {
                V::Array(items) => {
                    for (i, it) in items.iter().enumerate() {
                        match names.station(ctx, it, &format!("{tp}[{i}]"), &[]) {
                            Some(id) => out.push((id, 1.0)),
                            None => ok = false,
                        }
                    }
                }
                V::Table(entries) => {
                    for e in entries {
                        let kp = child(&tp, &e.key);
                        let key_node = Node {
                            v: V::Str(e.key.clone()),
                            origin: e.key_origin.clone(),
                        };
                        let id = names.station(ctx, &key_node, &kp, &[]);
                        let w = ctx.positive(&e.node, &kp, "weight");
                        match (id, w) {
                            (Some(id), Some(w)) => out.push((id, w)),
                            _ => ok = false,
                        }
                    }
                }
                other => {
                    ctx.error(
                        &t.origin,
                        &tp,
                        format!(
                            "expected an array of station names or a table of station = weight, found {}",
                            other.describe()
                        ),
                    );
                    return None;
                }
            }
            if ok && out.is_empty() {
                ctx.error(&t.origin, &tp, "expected at least one target station, found none");
                return None;
            }
            ok.then_some(out)
        });
    let spread = match node.get("spread") {
        Some(s) => ctx
            .choice(s, &child(path, "spread"), &["even", "random"])
            .map(|s| {
                if s == "random" {
                    Spread::Random
                } else {
                    Spread::Even
                }
            }),
        None => Some(Spread::Even),
    };
    let join = ctx
        .required(node, path, "join", "the name of the join station that collects the sub-jobs")
        .and_then(|j| {
            let id = names.station(ctx, j, &child(path, "join"), &[])?;
            let jn = names.stations[id].1;
            let is_join = matches!(jn.get("kind").map(|k| &k.v), Some(V::Str(k)) if k == "join");
            if !is_join {
                ctx.error(
                    &j.origin,
                    &child(path, "join"),
                    format!(
                        "station `{}` is not a join station; expected the name of a station with kind = \"join\"",
                        names.stations[id].0
                    ),
                );
                return None;
            }
            // The quorum is checked here, where both numbers are known.
            if let (Some(fo), Some(q)) = (fan_out, jn.get("quorum"))
                && let V::Int(qv) = q.v
                && qv > i64::from(fo)
            {
                ctx.error(
                    &q.origin,
                    &child(&child("stations", &names.stations[id].0), "quorum"),
                    format!(
                        "expected a quorum between 1 and the fan-out {fo} of fork `{}`, found {qv}",
                        path.trim_start_matches("stations.")
                    ),
                );
                return None;
            }
            Some(id)
        });
    Some(ForkSpec {
        fan_out: fan_out?,
        targets: targets?,
        spread: spread?,
        join: join?,
    })
}

#[allow(clippy::too_many_arguments)]
fn class(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    stations: &[Option<StationSpec>],
    covered: &[Vec<bool>],
    ci: usize,
    c: &ClassIn<'_>,
    base: &Path,
) -> (Option<ClassSpec>, Option<(Origin, String)>) {
    let path = c.path.as_str();
    let node = c.node;
    if ctx.table(node, path, "a workload").is_none() {
        return (None, None);
    }
    let is_single = path == "workload";
    ctx.check_keys(
        node,
        path,
        if is_single { WORKLOAD_KEYS } else { CLASS_KEYS },
        if is_single { "[workload]" } else { "a class" },
    );
    // The type may be left out when the other keys make it obvious.
    let ty = match node.get("type") {
        Some(t) => ctx.choice(t, &child(path, "type"), &["open", "closed"]),
        None if node.get("population").is_some() => Some("closed"),
        None if node.get("arrival").is_some() || node.get("rate_per_s").is_some() => Some("open"),
        None => {
            ctx.error(
                &node.origin,
                path,
                "missing key `type`; expected \"open\" (with arrival) or \"closed\" (with population)",
            );
            None
        }
    };
    let mut arrival_at = None;
    let workload = match ty {
        Some("open") => {
            for k in ["population", "think"] {
                if let Some(n) = node.get(k) {
                    ctx.error(
                        &n.origin,
                        &child(path, k),
                        format!("`{k}` is for closed workloads; this workload has type = \"open\""),
                    );
                }
            }
            match (node.get("arrival"), node.get("rate_per_s")) {
                (Some(a), None) => {
                    let p = child(path, "arrival");
                    arrival_at = Some((crate::tree::subtree_origin(a), p.clone()));
                    dist(ctx, a, &p, base).map(|d| Workload::Open { interarrival: d })
                }
                (None, Some(r)) => {
                    let p = child(path, "rate_per_s");
                    arrival_at = Some((crate::tree::subtree_origin(r), p.clone()));
                    ctx.positive(r, &p, "arrival rate").and_then(|r| {
                        qsim_kernel::Dist::exponential(1.0 / r)
                            .ok()
                            .map(|d| Workload::Open { interarrival: d })
                    })
                }
                (Some(_), Some(r)) => {
                    ctx.error(
                        &r.origin,
                        &child(path, "rate_per_s"),
                        "found both arrival and rate_per_s; expected one of them (rate_per_s is the shorthand for exponential inter-arrival times)",
                    );
                    None
                }
                (None, None) => {
                    ctx.error(
                        &node.origin,
                        path,
                        "missing key `arrival`; an open workload needs arrival = { dist = \"exponential\", mean = ... } or rate_per_s = ...",
                    );
                    None
                }
            }
        }
        Some(_) => {
            for k in ["arrival", "rate_per_s"] {
                if let Some(n) = node.get(k) {
                    ctx.error(
                        &n.origin,
                        &child(path, k),
                        format!("`{k}` is for open workloads; this workload has type = \"closed\""),
                    );
                }
            }
            let population = ctx
                .required(node, path, "population", "the number of jobs (>= 1)")
                .and_then(|n| ctx.u32(n, &child(path, "population"), 1, "a number of jobs"));
            let think = match node.get("think") {
                Some(t) => dist(ctx, t, &child(path, "think"), base).map(Some),
                None => Some(None),
            };
            match (population, think) {
                (Some(population), Some(think)) => Some(Workload::Closed { population, think }),
                _ => None,
            }
        }
        None => None,
    };
    let priority = match node.get("priority") {
        Some(p) if !is_single => ctx
            .int(
                p,
                &child(path, "priority"),
                i64::from(i32::MIN),
                i64::from(i32::MAX),
                "a priority",
            )
            .map(|v| v as i32),
        _ => Some(0),
    };
    let routing = routing(ctx, names, stations, covered, ci, c);
    let spec = match (workload, routing, priority) {
        (Some(workload), Some(routing), Some(priority)) => Some(ClassSpec {
            name: c.name.clone(),
            workload,
            routing,
            priority,
        }),
        _ => None,
    };
    (spec, arrival_at)
}

/// Kind of a station as written (even if the station itself had errors).
fn kind_of<'n>(names: &'n Names<'_>, id: usize) -> &'n str {
    match names.stations[id].1.get("kind").map(|k| &k.v) {
        Some(V::Str(k)) => k,
        _ => "?",
    }
}

fn fork_info(names: &Names<'_>, stations: &[Option<StationSpec>], id: usize) -> Option<ForkSpec> {
    match stations.get(id)?.as_ref()?.kind {
        StationKind::Fork(ref f) => Some(f.clone()),
        _ => {
            let _ = names;
            None
        }
    }
}

fn routing(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    stations: &[Option<StationSpec>],
    covered: &[Vec<bool>],
    ci: usize,
    c: &ClassIn<'_>,
) -> Option<Routing> {
    let path = c.path.as_str();
    let node = c.node;
    let ns = names.stations.len();
    // Reports a visit to a station that has no service time for the class.
    let check_service = |ctx: &mut Ctx<'_>, id: usize, origin: &Origin, p: &str| -> bool {
        let k = kind_of(names, id);
        if matches!(k, "fork" | "join" | "?") || covered[id][ci] {
            return true;
        }
        let sname = &names.stations[id].0;
        ctx.error_hint(
            origin,
            p,
            format!(
                "class {} is routed to station {sname}, which has no service time for it",
                c.name
            ),
            Some(format!(
                "add service = {{ ... }} or service_by_class.{} to [stations.{sname}]",
                c.name
            )),
        );
        false
    };
    match (node.get("route"), node.get("routing")) {
        (Some(r), None) => {
            let p = child(path, "route");
            let items =
                non_empty_array(ctx, r, &p, "station names", "station, found an empty route")?;
            let mut seq = Vec::new();
            let mut ok = true;
            for (i, it) in items.iter().enumerate() {
                let ip = format!("{p}[{i}]");
                match names.station(ctx, it, &ip, &[]) {
                    Some(id) => {
                        ok &= check_service(ctx, id, &it.origin, &ip);
                        seq.push(id);
                    }
                    None => ok = false,
                }
            }
            if !ok {
                return None;
            }
            // A fork must be followed by its join, where the parent waits.
            for (i, &id) in seq.iter().enumerate() {
                if let Some(f) = fork_info(names, stations, id) {
                    for &(t, _) in &f.targets {
                        ok &= check_service(ctx, t, &items[i].origin, &format!("{p}[{i}]"));
                    }
                    if seq.get(i + 1) != Some(&f.join) {
                        ctx.error(
                            &items[i].origin,
                            &format!("{p}[{i}]"),
                            format!(
                                "fork {} must be followed in the route by its join {}, where the job waits for its sub-jobs",
                                names.stations[id].0, names.stations[f.join].0
                            ),
                        );
                        ok = false;
                    }
                }
            }
            ok.then_some(Routing::Sequence(seq))
        }
        (None, Some(rt)) => {
            let p = child(path, "routing");
            let entries = ctx.table(rt, &p, "a routing table: from = { to = probability }")?;
            let mut entry = None;
            let mut from: Vec<Vec<(Target, f64)>> = vec![Vec::new(); ns];
            let mut row_given = vec![false; ns];
            // Where each station is first routed to, for located service errors.
            let mut first_ref: Vec<Option<(Origin, String)>> = vec![None; ns];
            let mut ok = true;
            for e in entries {
                let rp = child(&p, &e.key);
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
                    let key_node = Node {
                        v: V::Str(e.key.clone()),
                        origin: e.key_origin.clone(),
                    };
                    match names.station(ctx, &key_node, &rp, &["source"]) {
                        Some(id) => Some(id),
                        None => {
                            ok = false;
                            continue;
                        }
                    }
                };
                if let Some(id) = from_id
                    && kind_of(names, id) == "fork"
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
                let Some(branches) = row(ctx, names, &e.node, &rp, &mut first_ref) else {
                    ok = false;
                    continue;
                };
                match from_id {
                    None => entry = Some(branches),
                    Some(id) => {
                        from[id] = branches;
                        row_given[id] = true;
                    }
                }
            }
            if !ok {
                return None;
            }
            let Some(entry) = entry else {
                ctx.error(
                    &rt.origin,
                    &p,
                    "missing key `source`; expected where a new interaction goes, e.g. source = { cpu = 1.0 }",
                );
                return None;
            };
            // Walk the stations the class reaches.
            let mut seen = vec![false; ns];
            let mut stack: Vec<usize> = entry
                .iter()
                .filter(|b| b.1 > 0.0)
                .filter_map(|b| match b.0 {
                    Target::Station(s) => Some(s),
                    Target::Exit => None,
                })
                .collect();
            let mut sub_only = vec![false; ns];
            while let Some(s) = stack.pop() {
                if seen[s] {
                    continue;
                }
                seen[s] = true;
                let (o, rp) = first_ref[s]
                    .clone()
                    .unwrap_or((rt.origin.clone(), p.clone()));
                ok &= check_service(ctx, s, &o, &rp);
                if let Some(f) = fork_info(names, stations, s) {
                    for &(t, _) in &f.targets {
                        ok &= check_service(ctx, t, &o, &rp);
                        if !seen[t] {
                            sub_only[t] = true;
                        }
                    }
                    stack.push(f.join);
                    continue;
                }
                sub_only[s] = false;
                if !row_given[s] {
                    ctx.error_hint(
                        &rt.origin,
                        &p,
                        format!(
                            "class {} reaches station {} but the routing has no row for it; expected where jobs go after {}",
                            c.name, names.stations[s].0, names.stations[s].0
                        ),
                        Some(format!("add {} = {{ sink = 1.0 }} or similar", names.stations[s].0)),
                    );
                    ok = false;
                    continue;
                }
                for b in &from[s] {
                    if let (Target::Station(t), true) = (b.0, b.1 > 0.0) {
                        stack.push(t);
                    }
                }
            }
            if !ok {
                return None;
            }
            // Every reached station must be able to reach the sink.
            let mut leaves = vec![false; ns];
            loop {
                let mut changed = false;
                for s in 0..ns {
                    if leaves[s] {
                        continue;
                    }
                    let l = if let Some(f) = fork_info(names, stations, s) {
                        leaves[f.join]
                    } else {
                        from[s].iter().any(|b| {
                            b.1 > 0.0
                                && match b.0 {
                                    Target::Exit => true,
                                    Target::Station(t) => leaves[t],
                                }
                        })
                    };
                    if l {
                        leaves[s] = true;
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
            for s in 0..ns {
                if seen[s] && !leaves[s] && fork_info(names, stations, s).is_none() {
                    ctx.error(
                        &rt.origin,
                        &p,
                        format!(
                            "jobs of class {} that reach station {} can never get to sink; expected a route from {} that ends at sink",
                            c.name, names.stations[s].0, names.stations[s].0
                        ),
                    );
                    return None;
                }
            }
            Some(Routing::Probabilistic { entry, from })
        }
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

/// One routing row: `{ to = probability, ... }`.
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
    let mut sum = 0.0;
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
        } else {
            let key_node = Node {
                v: V::Str(e.key.clone()),
                origin: e.key_origin.clone(),
            };
            names
                .station(ctx, &key_node, &bp, &["sink"])
                .map(Target::Station)
        };
        let p = ctx.f64(&e.node, &bp).and_then(|p| {
            if (0.0..=1.0).contains(&p) {
                Some(p)
            } else {
                ctx.error(
                    &e.node.origin,
                    &bp,
                    format!("expected a probability between 0 and 1, found {}", num(p)),
                );
                None
            }
        });
        match (target, p) {
            (Some(t), Some(p)) => {
                if let Target::Station(s) = t
                    && first_ref[s].is_none()
                {
                    first_ref[s] = Some((e.key_origin.clone(), bp.clone()));
                }
                sum += p;
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
    if (sum - 1.0).abs() > 1e-9 {
        ctx.error(
            &node.origin,
            path,
            format!("probabilities must sum to 1, found {}", num(sum)),
        );
        return None;
    }
    Some(out)
}

fn regions(ctx: &mut Ctx<'_>, names: &Names<'_>, root: &Node) -> Option<Vec<RegionSpec>> {
    let Some(r) = root.get("regions") else {
        return Some(Vec::new());
    };
    let entries = ctx.table(r, "regions", "the regions")?;
    let mut out = Vec::new();
    let mut ok = true;
    for Entry { key, node, .. } in entries {
        let p = child("regions", key);
        if ctx.table(node, &p, "a region").is_none() {
            ok = false;
            continue;
        }
        ctx.check_keys(node, &p, &["stations", "limit"], "a region");
        let stations = ctx
            .required(node, &p, "stations", "the member stations: [\"a\", \"b\"]")
            .and_then(|s| {
                let sp = child(&p, "stations");
                let items = non_empty_array(ctx, s, &sp, "station names", "station, found none")?;
                let ids: Vec<Option<usize>> = items
                    .iter()
                    .enumerate()
                    .map(|(i, it)| names.station(ctx, it, &format!("{sp}[{i}]"), &[]))
                    .collect();
                ids.into_iter().collect::<Option<Vec<_>>>()
            });
        let limit = match node.get("limit") {
            None => Some(None),
            Some(l) => match &l.v {
                V::Str(s) if s == "none" => Some(None),
                _ => ctx
                    .u32(l, &child(&p, "limit"), 1, "a limit (or \"none\")")
                    .map(Some),
            },
        };
        match (stations, limit) {
            (Some(stations), Some(limit)) => out.push(RegionSpec {
                name: key.clone(),
                stations,
                limit,
            }),
            _ => ok = false,
        }
    }
    ok.then_some(out)
}

fn simulation(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    root: &Node,
) -> (Option<RunConfig>, Option<InitialState>) {
    let mut run = RunConfig::default();
    let Some(s) = root.get("simulation") else {
        return (Some(run), Some(InitialState::Thinking));
    };
    if ctx
        .table(s, "simulation", "the simulation settings")
        .is_none()
    {
        return (None, None);
    }
    ctx.check_keys(s, "simulation", SIM_KEYS, "[simulation]");
    let mut ok = true;
    let p = |k: &str| child("simulation", k);
    if let Some(n) = s.get("replications") {
        match ctx.u32(n, &p("replications"), 1, "a number of replications") {
            Some(r) => {
                run.replications = r;
                if r < 2 {
                    ctx.warn(
                        &n.origin,
                        &p("replications"),
                        "one replication gives no confidence interval; expected 2 or more (5 is the default)",
                    );
                }
            }
            None => ok = false,
        }
    }
    if let Some(n) = s.get("seed") {
        match ctx.int(n, &p("seed"), 0, i64::MAX, "a seed") {
            Some(v) => run.seed = v as u64,
            None => ok = false,
        }
    }
    if let Some(n) = s.get("stop") {
        match jobs_or_time(ctx, n, &p("stop"), false) {
            Some(JobsOrTime::Jobs(j)) => run.stop = Stop::Jobs(j),
            Some(JobsOrTime::Time(t)) => run.stop = Stop::Time(t),
            None => ok = false,
        }
    }
    match s.get("warmup") {
        Some(n) => {
            let wp = p("warmup");
            match &n.v {
                V::Str(_) => match ctx.choice(n, &wp, &["mser5", "none"]) {
                    Some("mser5") => run.warmup = Warmup::Mser5,
                    Some(_) => run.warmup = Warmup::None,
                    None => ok = false,
                },
                _ => match jobs_or_time(ctx, n, &wp, true) {
                    Some(JobsOrTime::Jobs(j)) => run.warmup = Warmup::Jobs(j),
                    Some(JobsOrTime::Time(t)) => run.warmup = Warmup::Time(t),
                    None => ok = false,
                },
            }
        }
        // No warm-up given: 10% of whatever stop the run ends up with
        // (`--jobs`/`--time` may replace the file's), resolved at run start.
        None => run.warmup = qsim_kernel::DEFAULT_WARMUP,
    }
    if let Some(n) = s.get("precision") {
        let pp = p("precision");
        if ctx
            .table(
                n,
                &pp,
                "{ relative_half_width = 0.01, max_replications = 50 }",
            )
            .is_some()
        {
            ctx.check_keys(
                n,
                &pp,
                &["relative_half_width", "max_replications"],
                "precision",
            );
            let rhw = ctx
                .required(
                    n,
                    &pp,
                    "relative_half_width",
                    "the target CI half-width / mean, e.g. 0.01",
                )
                .and_then(|v| {
                    let x = ctx.positive(v, &child(&pp, "relative_half_width"), "fraction")?;
                    if x >= 1.0 {
                        ctx.error(
                            &v.origin,
                            &child(&pp, "relative_half_width"),
                            format!(
                                "expected a fraction below 1 (e.g. 0.01 for 1%), found {}",
                                num(x)
                            ),
                        );
                        return None;
                    }
                    Some(x)
                });
            let maxr = opt_u32(
                ctx,
                n,
                &pp,
                "max_replications",
                2,
                "a number of replications",
                50,
            );
            match (rhw, maxr) {
                (Some(r), Some(m)) => {
                    if m < run.replications {
                        ctx.warn(
                            &n.origin,
                            &child(&pp, "max_replications"),
                            format!(
                                "max_replications {m} is below replications {}; no replications will be added",
                                run.replications
                            ),
                        );
                    }
                    run.precision = Some(Precision {
                        relative_half_width: r,
                        max_replications: m,
                    })
                }
                _ => ok = false,
            }
        } else {
            ok = false;
        }
    }
    if let Some(n) = s.get("sla_s") {
        match ctx.positive(n, &p("sla_s"), "time in seconds") {
            Some(v) => run.sla_s = Some(v),
            None => ok = false,
        }
    }
    for (k, slot) in [
        ("max_jobs_present", &mut run.max_jobs_present),
        ("max_events", &mut run.max_events),
    ] {
        if let Some(n) = s.get(k) {
            match ctx.int(n, &p(k), 1, i64::MAX, "a count") {
                Some(v) => *slot = v as u64,
                None => ok = false,
            }
        }
    }
    let initial = match s.get("initial") {
        None => Some(InitialState::Thinking),
        Some(n) => {
            let ip = p("initial");
            match &n.v {
                V::Str(x) if x == "thinking" => Some(InitialState::Thinking),
                V::Table(_) => {
                    ctx.check_keys(n, &ip, &["station"], "initial");
                    ctx.required(n, &ip, "station", "the station where every job starts")
                        .and_then(|st| names.station(ctx, st, &child(&ip, "station"), &[]))
                        .map(InitialState::AtStation)
                }
                other => {
                    ctx.error(
                        &n.origin,
                        &ip,
                        format!(
                            "expected \"thinking\" or {{ station = \"name\" }}, found {}",
                            other.describe()
                        ),
                    );
                    None
                }
            }
        }
    };
    (ok.then_some(run), initial)
}

enum JobsOrTime {
    Jobs(u64),
    Time(f64),
}

fn jobs_or_time(ctx: &mut Ctx<'_>, n: &Node, path: &str, zero_ok: bool) -> Option<JobsOrTime> {
    let form = if zero_ok {
        "{ jobs = 10000 }, { time_s = 10.0 }, \"mser5\" or \"none\""
    } else {
        "{ jobs = 100000 } or { time_s = 1000.0 }"
    };
    let V::Table(_) = &n.v else {
        ctx.error(
            &n.origin,
            path,
            format!("expected {form}, found {}", n.v.describe()),
        );
        return None;
    };
    ctx.check_keys(n, path, &["jobs", "time_s"], path);
    match (n.get("jobs"), n.get("time_s")) {
        (Some(j), None) => {
            let min = if zero_ok { 0 } else { 1 };
            ctx.int(j, &child(path, "jobs"), min, i64::MAX, "a number of jobs")
                .map(|v| JobsOrTime::Jobs(v as u64))
        }
        (None, Some(t)) => {
            let v = if zero_ok {
                ctx.non_negative(t, &child(path, "time_s"), "time in seconds")
            } else {
                ctx.positive(t, &child(path, "time_s"), "time in seconds")
            };
            v.map(JobsOrTime::Time)
        }
        _ => {
            ctx.error(
                &n.origin,
                path,
                format!("expected exactly one of jobs or time_s: {form}"),
            );
            None
        }
    }
}

/// The variable names a derived metric may use.
pub(crate) fn metric_names(stations: &[&str], classes: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "throughput",
        "response_time",
        "p50",
        "p90",
        "p95",
        "p99",
        "p999",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for s in stations {
        for m in [
            "throughput",
            "utilization",
            "mean_jobs",
            "response_time",
            "wait_time",
            "mean_batch_size",
            "batches_per_s",
            "mean_spinning",
            "mean_sleeping",
        ] {
            v.push(format!("stations.{s}.{m}"));
        }
    }
    for c in classes {
        for m in ["throughput", "response_time"] {
            v.push(format!("classes.{c}.{m}"));
        }
    }
    v
}

fn metrics(ctx: &mut Ctx<'_>, names: &Names<'_>, root: &Node) -> Option<Vec<DerivedMetric>> {
    let Some(m) = root.get("metrics") else {
        return Some(Vec::new());
    };
    let entries = ctx.table(m, "metrics", "a table of name = \"expression\"")?;
    let stations = names.station_list();
    let classes: Vec<&str> = names.classes.iter().map(|c| c.name.as_str()).collect();
    let known = metric_names(&stations, &classes);
    let known_ref: Vec<&str> = known.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    let mut ok = true;
    for e in entries {
        let p = child("metrics", &e.key);
        let Some(text) = ctx.str(
            &e.node,
            &p,
            "an expression such as \"0.45 * 60 * throughput\"",
        ) else {
            ok = false;
            continue;
        };
        match Expr::parse(text) {
            Ok(expr) => {
                for v in expr.variables() {
                    if !known.contains(&v) {
                        let hint =
                            did_you_mean(&v, &known_ref).map(|s| format!("did you mean {s}?"));
                        ctx.error_hint(
                            &e.node.origin,
                            &p,
                            format!(
                                "unknown variable {v}; expected throughput, response_time, p50, p90, p95, p99, p999, stations.NAME.{{throughput,utilization,mean_jobs,response_time,wait_time,mean_batch_size,batches_per_s,mean_spinning,mean_sleeping}} or classes.NAME.{{throughput,response_time}}"
                            ),
                            hint,
                        );
                        ok = false;
                    }
                }
                out.push(DerivedMetric {
                    name: e.key.clone(),
                    expr,
                });
            }
            Err(err) => {
                // Point at the character when the string is written plainly.
                let origin = match &e.node.origin {
                    Origin::File(span) => {
                        let raw = ctx.text.get(span.clone()).unwrap_or("");
                        if raw.starts_with('"') && !raw.contains('\\') && !raw.starts_with("\"\"\"")
                        {
                            let at = span.start + 1 + err.offset;
                            Origin::File(at..at)
                        } else {
                            e.node.origin.clone()
                        }
                    }
                    o => o.clone(),
                };
                ctx.error(&origin, &p, format!("{err}"));
                ok = false;
            }
        }
    }
    ok.then_some(out)
}
