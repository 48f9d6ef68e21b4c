//! The TOML model format of qsim: read a model file, report every problem
//! with its location, apply `--set` overrides, and build a validated kernel
//! [`Network`] with its [`RunConfig`].
//!
//! This is the only crate of qsim that reads TOML. The format is documented
//! for users in `docs/model-format.md`.
//!
//! - [`load_file`] / [`load_str`] give a [`Model`] or [`ModelErrors`]: every
//!   problem at once, each a [`ModelError`] with file, line, column, key path,
//!   what was found and what was expected, and sometimes a hint.
//! - [`Override`] is one `--set PATH=VALUE`, applied to the TOML tree before
//!   the model is read, so an overridden value is checked like any other; a
//!   key with `*` or `?` (`stations.latch*.servers`) sets every match.
//! - [`DerivedMetric`] and [`Expr`]: metrics declared in `[metrics]`,
//!   computed from simulation results.
//! - Open workloads are checked for stability: a station offered a
//!   utilization of 1 or more is an error that says the highest stable
//!   arrival rate.
//!
//! ```
//! use qsim_model::{Override, load_str};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let text = r#"
//! ## M/M/1 at rho = 0.9.
//! [workload]
//! type = "open"
//! arrival = { dist = "exponential", rate_per_s = 0.9 }
//! route = ["server"]
//!
//! [stations.server]
//! kind = "queue"
//! service = { dist = "exponential", mean = 1.0 }
//! "#;
//! let model = load_str("mm1.toml", text, &[])?;
//! assert_eq!(model.description, "M/M/1 at rho = 0.9.");
//! assert_eq!(model.network.spec().stations.len(), 1);
//!
//! // Overrides are checked like the file: rho = 1.1 is unstable.
//! let faster = Override::parse("workload.arrival.rate_per_s=1.1")?;
//! let err = load_str("mm1.toml", text, &[faster]).unwrap_err();
//! assert!(err.to_string().contains("lower the arrival rate below 1/s"), "{err}");
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

mod arrays;
mod build;
mod ctx;
mod derived;
mod dists;
mod error;
pub mod expr;
mod files;
pub mod format;
mod keys;
pub use build::stations::{all_station_keys, station_kind, station_kind_names, station_kinds};
pub mod relative;
mod stability;
mod tree;

pub use derived::{DerivedError, DerivedValue};
pub use error::{ModelError, ModelErrors, Severity};
pub use expr::{EvalError, Expr, ExprError};
pub use files::{MAX_MODEL_FILE_BYTES, read_model_text, sample_files};
pub use keys::key_paths;
pub use relative::Relative;

use ctx::Ctx;
use qsim_kernel::{Field, Network, NetworkError, RunConfig, Scope, Target, Workload};
use std::path::Path;
use tree::{Node, Origin};

/// A loaded model: a validated network, how to run it, and derived metrics.
#[derive(Clone, Debug)]
pub struct Model {
    /// The validated network. The single class of a `[workload]` model is
    /// named `default`.
    pub network: Network,
    /// How to run it (from `[simulation]`, with defaults).
    pub run: RunConfig,
    /// Derived metrics from `[metrics]`, in file order.
    pub derived: Vec<DerivedMetric>,
    /// The header comment of the file (its first comment block, without `#`).
    pub description: String,
    /// The file name as given.
    pub path: String,
    /// Problems that do not stop the model from running (e.g. one replication).
    pub warnings: Vec<ModelError>,
}

impl Model {
    /// A model of a network built in code, to run and report like a loaded
    /// one: `name` stands for the file name in its errors and
    /// [`path`](Model::path); it has no description, derived metrics
    /// (push [`DerivedMetric`]s to [`derived`](Model::derived)) or
    /// warnings.
    ///
    /// The network passes the checks of a model file: the kernel's rules
    /// ([`Network::new`]) and then the stability of its open workloads (no
    /// station offered a utilization of 1 or more, every open job able to
    /// leave). Each problem is a [`ModelError`] at the key path of the
    /// value (`stations.cpu.servers`, `classes.web` for the arrivals of an
    /// unstable class), with no line or column.
    ///
    /// ```
    /// use qsim_kernel::*;
    /// use qsim_model::Model;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// // M/M/1 with arrival rate `lambda` and service rate 1/s.
    /// let mm1 = |lambda: f64| -> Result<NetworkSpec, DistError> {
    ///     Ok(NetworkSpec {
    ///         stations: vec![StationSpec {
    ///             name: "server".into(),
    ///             kind: StationKind::Queue { servers: 1, discipline: Discipline::Fcfs },
    ///             service: vec![Some(Dist::exponential(1.0)?)],
    ///             speed: None,
    ///         }],
    ///         classes: vec![ClassSpec {
    ///             name: "web".into(),
    ///             workload: Workload::Open { interarrival: Dist::exponential(1.0 / lambda)? },
    ///             routing: Routing::Sequence(vec![0]),
    ///             priority: 0,
    ///         }],
    ///         ..NetworkSpec::default()
    ///     })
    /// };
    /// let model = Model::from_spec("mm1", mm1(0.5)?, RunConfig::default())?;
    /// assert_eq!(model.path, "mm1");
    ///
    /// // Twice the work the server can do: refused, with the highest stable rate.
    /// let err = Model::from_spec("mm1", mm1(2.0)?, RunConfig::default()).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "mm1: classes.web: utilization 2 at station server: the open workload is \
    ///      unstable; lower the arrival rate below 1/s\n  hint: the arrival rate is 2/s; \
    ///      add servers or capacity at server to keep it"
    /// );
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_spec(
        name: &str,
        spec: qsim_kernel::NetworkSpec,
        run: RunConfig,
    ) -> Result<Model, ModelErrors> {
        let error = |key_path: String, message: String, hint: Option<String>| ModelError {
            file: name.to_string(),
            line: 0,
            column: 0,
            key_path,
            message,
            hint,
            severity: Severity::Error,
        };
        let network = Network::new(spec).map_err(|errs| ModelErrors {
            errors: errs
                .iter()
                .map(|e| error(e.path.clone(), e.message.clone(), None))
                .collect(),
        })?;
        let spec = network.spec();
        let class_path = |c: usize| format!("classes.{}", quote_key(&spec.classes[c].name));
        let (unstable, trapped) = stability::check(spec, &network.pooled_rows());
        let mut errors: Vec<ModelError> = trapped
            .into_iter()
            .map(|c| error(class_path(c), trapped_message(spec, c), None))
            .collect();
        for u in &unstable {
            let (message, hint) = unstable_message(spec, u);
            errors.push(error(class_path(u.class), message, Some(hint)));
        }
        if !errors.is_empty() {
            return Err(ModelErrors { errors });
        }
        Ok(Model {
            network,
            run,
            derived: Vec::new(),
            description: String::new(),
            path: name.to_string(),
            warnings: Vec::new(),
        })
    }
}

/// A metric computed from simulation results, declared in `[metrics]`.
#[derive(Clone, Debug, PartialEq)]
pub struct DerivedMetric {
    /// Its name (the key in `[metrics]`).
    pub name: String,
    /// Its formula; the variables it may use are [`metric_variables`].
    pub expr: Expr,
}

/// One `--set PATH=VALUE` override (or the same given by another flag:
/// `--change`, `--at`, `--vary`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Override {
    /// Dotted key path, e.g. `workload.population` or `stations.l.speed.table[1].rate`.
    /// An unquoted key with `*` or `?` is a pattern that sets every existing
    /// key it matches, in sorted key order: `stations.latch*.spin.spin_wait_delay`.
    pub path: String,
    /// The value as typed: a TOML value (`500`, `0.5`, `true`, `{ ... }`,
    /// `[ ... ]`, `"text"`), a relative change of the number the model
    /// gives (`*0.8`, `/2`, `+10%`, `-10%`; see [`Relative`]), or else a
    /// bare word taken as a string (`none`).
    pub value: String,
    /// The command-line flag that gave it, which messages name: `--set`
    /// unless made by [`Override::parse_as`] or [`Override::new`].
    pub flag: &'static str,
}

impl Override {
    /// An override of `path` with `value`, given by `flag` (`--set`,
    /// `--change`, `--at`, `--vary`).
    pub fn new(path: impl Into<String>, value: impl Into<String>, flag: &'static str) -> Override {
        Override {
            path: path.into(),
            value: value.into(),
            flag,
        }
    }

    /// Parses `PATH=VALUE` given by `--set`.
    pub fn parse(s: &str) -> Result<Override, ModelErrors> {
        Override::parse_as(s, "--set")
    }

    /// Parses `PATH=VALUE` given by `flag`, which messages about it name.
    pub fn parse_as(s: &str, flag: &'static str) -> Result<Override, ModelErrors> {
        match s.split_once('=') {
            Some((p, v)) if !p.trim().is_empty() && !v.trim().is_empty() => {
                let o = Override::new(p.trim(), v.trim(), flag);
                if let Err(m) = tree::split_path(&o.path) {
                    return Err(ModelErrors::one(ModelError::at_override(
                        &format!("{flag} {s}"),
                        format!("malformed key path {}: {m}", o.path),
                    )));
                }
                Ok(o)
            }
            _ => Err(ModelErrors::one(ModelError::at_override(
                &format!("{flag} {s}"),
                "expected PATH=VALUE, e.g. workload.population=500".into(),
            ))),
        }
    }
}

impl Override {
    /// The flag and the override as typed: `--set PATH=VALUE`.
    pub fn label(&self) -> String {
        format!("{} {self}", self.flag)
    }
}

impl std::fmt::Display for Override {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.path, self.value)
    }
}

impl std::str::FromStr for Override {
    type Err = ModelErrors;
    fn from_str(s: &str) -> Result<Override, ModelErrors> {
        Override::parse(s)
    }
}

/// Reads and loads a model file (at most [`MAX_MODEL_FILE_BYTES`]). Sample
/// files of `empirical` distributions are found relative to the model file.
pub fn load_file(path: &Path, overrides: &[Override]) -> Result<Model, ModelErrors> {
    let name = path.display().to_string();
    match read_model_text(path) {
        Ok(text) => load_str(&name, &text, overrides),
        Err(message) => Err(ModelErrors::one(ModelError::at_override(&name, message))),
    }
}

/// Loads a model from its text; `name` is the file name used in messages
/// (and the directory of `name` is where `empirical` sample files are found).
pub fn load_str(name: &str, text: &str, overrides: &[Override]) -> Result<Model, ModelErrors> {
    let base = Path::new(name).parent().unwrap_or(Path::new(""));
    let mut ctx = Ctx::new(name, text, overrides);
    let mut root = match tree::parse_document(text) {
        Ok(root) => root,
        Err((message, offset)) => {
            let (line, column) = ctx.line_col(offset);
            return Err(ModelErrors::one(ModelError {
                file: name.to_string(),
                line,
                column,
                key_path: String::new(),
                message: format!("malformed TOML: {message}"),
                hint: None,
                severity: Severity::Error,
            }));
        }
    };
    let mut member_sets = Vec::new();
    for (i, ov) in overrides.iter().enumerate() {
        for e in tree::apply(&mut root, ov, i, &mut member_sets) {
            let label = ctx.override_label(i);
            ctx.problems.push(ModelError {
                hint: e.hint,
                ..ModelError::at_override(&label, e.message)
            });
        }
    }
    for p in arrays::expand(&mut root, member_sets) {
        match p.ov {
            Some(i) => {
                let label = ctx.override_label(i);
                ctx.problems.push(ModelError {
                    hint: p.hint,
                    ..ModelError::at_override(&label, p.message)
                });
            }
            None => ctx.error_hint(&p.origin, &p.path, p.message, p.hint),
        }
    }
    let mut built = build::build(&mut ctx, &root, base);
    let mut network = None;
    let mut schedule = Vec::new();
    let mut station_schedule = Vec::new();
    let reader_ok = !ctx.has_errors();
    // The kernel's range rules, located at the keys that hold the values:
    // on the whole network when every part could be built, else on the
    // parts that could, so every problem is reported at once.
    let kernel_errors = match built.spec() {
        Some(spec) => match Network::new(spec)
            .and_then(|n| n.with_overload(std::mem::take(&mut built.overload)))
            .and_then(|n| n.with_policies(std::mem::take(&mut built.policies)))
        {
            Ok(n) => {
                if reader_ok {
                    stability_errors(&mut ctx, &n, &built.arrival_at, &built.class_paths);
                    unvisited_warnings(&mut ctx, &n, &root);
                    build::regions::order_warnings(&mut ctx, &n, &root);
                    schedule = build::workload::check_schedules(
                        &mut ctx,
                        &n,
                        &root,
                        &built.class_paths,
                        std::mem::take(&mut built.schedules),
                    );
                    station_schedule = build::workload::check_station_schedules(
                        &mut ctx,
                        &n,
                        &root,
                        std::mem::take(&mut built.station_schedules),
                    );
                }
                network = Some(n);
                Vec::new()
            }
            Err(errs) => errs.errors,
        },
        None => qsim_kernel::check_parts(&built.stations, &built.classes, &built.regions),
    };
    for e in kernel_errors.iter().chain(&built.piece_errors) {
        let (origin, path) = locate(&root, &built.class_paths, e);
        ctx.error(&origin, &path, e.message.clone());
    }
    let (run, derived) = match (built.run, built.derived) {
        (Some(run), Some(derived)) => (
            RunConfig {
                schedule,
                station_schedule,
                ..run
            },
            derived,
        ),
        _ => (RunConfig::default(), Vec::new()),
    };
    name_causing_overrides(&mut ctx.problems, name, overrides);
    let mut problems = merge_member_copies(std::mem::take(&mut ctx.problems));
    // Overrides first, then in file order.
    problems.sort_by_key(|p| (p.line != 0, p.line, p.column));
    match network {
        Some(network) if !problems.iter().any(|p| p.severity == Severity::Error) => Ok(Model {
            network,
            run,
            derived,
            description: header_comment(text),
            path: name.to_string(),
            warnings: problems,
        }),
        _ => Err(ModelErrors { errors: problems }),
    }
}

/// Why an open network cannot reach a steady state: one message per
/// station offered a utilization of 1 or more, in the words of the model
/// check (`utilization 1.8 at station server: ...`); empty when stable.
/// For networks built outside a model file, such as a station sped up or
/// slowed down, which must pass the same check as a loaded model.
pub fn instability(network: &Network) -> Vec<String> {
    let spec = network.spec();
    stability::check(spec, &network.pooled_rows())
        .0
        .iter()
        .map(|u| {
            format!(
                "utilization {} at station {}: the open workload is unstable (arrival rate {}/s, at most {}/s is stable)",
                sig(u.utilization),
                u.station,
                sig(u.rate),
                sig(u.limit)
            )
        })
        .collect()
}

/// The 1-based line and column of the value at key `path`
/// (`workload.population`, `stations.cpu.servers`) in model text, or `None`
/// when the text does not write that key (it has its default) or is not
/// valid TOML: for locating a problem found after loading, such as a run
/// refused by its memory or event budget.
pub fn key_location(text: &str, path: &str) -> Option<(usize, usize)> {
    let root = tree::parse_document(text).ok()?;
    let mut node = &root;
    for seg in tree::split_path(path).ok()? {
        node = node.get(&seg.key)?;
        for ix in seg.indices {
            node = match &node.v {
                tree::V::Array(items) => items.get(ix)?,
                _ => return None,
            };
        }
    }
    let Origin::File(span) = &node.origin else {
        return None;
    };
    Some(Ctx::new("", text, &[]).line_col(span.start))
}

/// The names a derived metric may use for this network: every metric of
/// the one table (`qsim_kernel::METRICS`) under its key path, e.g.
/// `throughput_per_s`, `stations.cpu.utilization`,
/// `classes.web.response_time_p99_s`, and in a multi-class model
/// `stations.cpu.classes.web.mean_jobs` for each class that reaches a queue
/// or delay station (see [`expr::variable_names`]).
pub fn metric_variables(network: &Network) -> Vec<String> {
    let spec = network.spec();
    let s: Vec<&str> = spec.stations.iter().map(|s| s.name.as_str()).collect();
    let c: Vec<&str> = spec.classes.iter().map(|c| c.name.as_str()).collect();
    let mut pairs = Vec::new();
    if c.len() > 1 {
        let reached: Vec<Vec<bool>> = (0..c.len()).map(|k| spec.stations_reached(k)).collect();
        for (i, st) in spec.stations.iter().enumerate() {
            if !st.kind.is_plain() {
                continue;
            }
            for (k, class) in c.iter().enumerate() {
                if reached[k][i] {
                    pairs.push(qsim_kernel::station_class_item(&st.name, class));
                }
            }
        }
    }
    expr::variable_names(&s, &c, &pairs, false)
}

/// The value of a name of the derived-metric language (see
/// [`metric_variables`]; older spellings are accepted too) in one
/// replication's results; `None` for a name that does not exist.
pub fn metric_value(
    network: &Network,
    rep: &qsim_kernel::ReplicationResult,
    name: &str,
) -> Option<f64> {
    let (scope, item, metric) = expr::resolve_variable(name)?;
    let spec = network.spec();
    let index = match (scope, item) {
        (qsim_kernel::MetricScope::Station, Some(item)) => {
            spec.stations.iter().position(|s| s.name == item)?
        }
        (qsim_kernel::MetricScope::Class, Some(item)) => {
            spec.classes.iter().position(|c| c.name == item)?
        }
        (qsim_kernel::MetricScope::StationClass, Some(item)) => {
            let (station, class) = item.split_once(".classes.")?;
            let s = spec.stations.iter().position(|s| s.name == station)?;
            let c = spec.classes.iter().position(|c| c.name == class)?;
            // A class that never comes to the station has no figures there.
            if !spec.stations_reached(c)[s] {
                return None;
            }
            qsim_kernel::station_class_index(s, c, spec.classes.len())
        }
        _ => 0,
    };
    metric.replication(rep, index)
}

/// The offered utilization of each station by the open classes of a network
/// (0 for stations only closed classes visit, `None` for stations that
/// cannot saturate: delays without a speed curve, forks and joins).
pub fn open_utilization(network: &Network) -> Vec<Option<f64>> {
    let spec = network.spec();
    let mut out: Vec<Option<f64>> = spec
        .stations
        .iter()
        .map(|st| {
            let saturates = st.kind.takes_service() && !(st.kind.is_delay() && st.speed.is_none());
            saturates.then_some(0.0)
        })
        .collect();
    for (ci, c) in spec.classes.iter().enumerate() {
        let Workload::Open { interarrival } = &c.workload else {
            continue;
        };
        let rate = 1.0 / interarrival.mean();
        let Some(v) = stability::visits(spec, ci) else {
            continue;
        };
        for (s, slot) in out.iter_mut().enumerate() {
            if let (Some(acc), Some(u)) = (
                slot.as_mut(),
                stability::utilization(spec, s, ci, rate, v[s]),
            ) {
                *acc += u;
            }
        }
    }
    out
}

fn stability_errors(
    ctx: &mut Ctx<'_>,
    network: &Network,
    arrival_at: &[Option<(Origin, String)>],
    class_paths: &[String],
) {
    let spec = network.spec();
    let (unstable, trapped) = stability::check(spec, &network.pooled_rows());
    let at = |ci: usize| {
        arrival_at
            .get(ci)
            .cloned()
            .flatten()
            .unwrap_or((Origin::File(0..0), class_paths[ci].clone()))
    };
    metastable_warnings(ctx, spec, at);
    for ci in trapped {
        let (o, p) = at(ci);
        ctx.error(&o, &p, trapped_message(spec, ci));
    }
    // Reneging, balking and shedding keep a queue finite at any load, and
    // so do timeouts that cancel queued requests, when every open class
    // served there has them.
    let bounded = |name: &str| {
        network.overload().is_some_and(|ov| {
            let Some(s) = network.station_id(name) else {
                return false;
            };
            let cancels = spec
                .classes
                .iter()
                .enumerate()
                .filter(|(c, cl)| {
                    matches!(cl.workload, qsim_kernel::Workload::Open { .. })
                        && spec.stations[s]
                            .service
                            .get(*c)
                            .is_some_and(Option::is_some)
                })
                .all(|(c, _)| {
                    ov.classes.get(c).and_then(Option::as_ref).is_some_and(|k| {
                        k.timeout.is_some() && k.on_timeout == qsim_kernel::OnTimeout::Cancel
                    })
                });
            cancels || ov.stations[s].as_ref().is_some_and(|x| x.bounds_queue())
        })
    };
    for u in unstable.into_iter().filter(|u| !bounded(&u.station)) {
        let (mut o, p) = at(u.class);
        // The utilization comes from the station as much as the arrivals:
        // an override of the station's service or servers caused it.
        let station = format!("stations.{}", quote_key(&u.station));
        if let (Origin::File(span), Some(i)) = (
            &o,
            ctx.overrides
                .iter()
                .position(|ov| paths_related(&ov.path, &station)),
        ) {
            o = Origin::Set(i, Some(span.clone()));
        }
        let (message, hint) = unstable_message(spec, &u);
        ctx.error_hint(&o, &p, message, Some(hint));
    }
}

/// The message and hint of a saturated station, the same for a model file
/// and a network built in code.
fn unstable_message(spec: &qsim_kernel::NetworkSpec, u: &stability::Unstable) -> (String, String) {
    let cname = &spec.classes[u.class].name;
    let advice = if u.limit <= 0.0 {
        "the other open classes alone saturate it; lower their arrival rates".to_string()
    } else if u.shared || spec.classes.len() > 1 {
        format!(
            "lower the arrival rate of class {cname} below {}/s",
            sig(u.limit)
        )
    } else {
        format!("lower the arrival rate below {}/s", sig(u.limit))
    };
    (
        format!(
            "utilization {} at station {}: the open workload is unstable; {advice}",
            sig(u.utilization),
            u.station
        ),
        format!(
            "the arrival rate is {}/s; add servers or capacity at {} to keep it",
            sig(u.rate),
            u.station
        ),
    )
}

fn trapped_message(spec: &qsim_kernel::NetworkSpec, class: usize) -> String {
    format!(
        "jobs of class {} never leave the network; expected a route that ends at sink",
        spec.classes[class].name
    )
}

/// The arrivals before an expected collapse past which a metastable
/// station is not worth a warning: no run gets that far.
const COLLAPSE_UNSEEN_ARRIVALS: f64 = 1e12;

/// Warnings for stations with no steady state in the long run although
/// their speed curve's peak keeps up with the arrivals (see
/// [`stability::metastable`]), located where the arrivals are set.
fn metastable_warnings(
    ctx: &mut Ctx<'_>,
    spec: &qsim_kernel::NetworkSpec,
    at: impl Fn(usize) -> (Origin, String),
) {
    for m in stability::metastable(spec) {
        let c = m.collapse;
        if c.expected_s * m.offered >= COLLAPSE_UNSEEN_ARRIVALS {
            continue;
        }
        let (o, p) = at(m.class);
        let advice = if m.limit > 0.0 {
            format!(
                "for a steady state, lower the arrival rate below {}/s or raise the curve's last rate to at least {}/s",
                sig(m.limit),
                sig(m.offered)
            )
        } else {
            "a curve whose rate falls towards 0 as jobs pile up has a steady state only with a bound on the jobs present: give the station a capacity or put it in a throttled region".to_string()
        };
        ctx.warn(
            &o,
            &p,
            format!(
                "station {} has no steady state: its arrivals ({}/s) are below its speed curve's peak ({}/s) but not below the curve's rate with many jobs present ({}/s); from empty it is expected to reach {} jobs, past which the curve never keeps up, after {} s (exact for Poisson arrivals and exponential work), and the queue then grows without bound, so figures of a longer run describe that collapse; {advice}",
                m.station,
                sig(m.offered),
                sig(m.peak),
                sig(m.limit),
                c.at_jobs,
                sig(c.expected_s),
            ),
        );
    }
}

/// Whether a key path and an override path name the same value or one
/// lies inside the other (segment by segment; the override's segments may
/// be glob patterns).
fn paths_related(override_path: &str, key_path: &str) -> bool {
    let strip = |s: &str| s.trim_matches('"').to_string();
    let o: Vec<String> = override_path.split('.').map(strip).collect();
    let k: Vec<String> = key_path.split('.').map(strip).collect();
    !key_path.is_empty() && o.iter().zip(&k).all(|(a, b)| tree::glob_match(a, b))
}

/// Adds "(set by --set ...)" to every error in the file at a key an
/// override set or changed inside, unless the message already names it:
/// a value checked at its table (a distribution, say) is located at the
/// table, which the file wrote, though the override made it wrong.
fn name_causing_overrides(problems: &mut [ModelError], file: &str, overrides: &[Override]) {
    for p in problems.iter_mut() {
        if p.severity != Severity::Error || p.file != file || p.message.contains("(set by -") {
            continue;
        }
        if let Some(ov) = overrides
            .iter()
            .find(|ov| paths_related(&ov.path, &p.key_path))
        {
            p.message.push_str(&format!(" (set by {})", ov.label()));
        }
    }
}

fn unvisited_warnings(ctx: &mut Ctx<'_>, network: &Network, root: &Node) {
    let spec = network.spec();
    let mut used = vec![false; spec.stations.len()];
    for ci in 0..spec.classes.len() {
        // Reachability, not visit ratios: linear in the routes, where
        // solving the traffic equations is cubic in the stations.
        for (u, r) in used.iter_mut().zip(spec.stations_reached(ci)) {
            *u |= r;
        }
    }
    for st in &spec.stations {
        if let Some(l) = st.kind.as_latch()
            && let Some(s) = l.spin.as_ref().and_then(|s| s.cpu)
        {
            used[s] = true;
        }
    }
    // The spec's stations are the entries of [stations] in file order.
    let entries = root.get("stations").and_then(|t| t.table()).unwrap_or(&[]);
    for (s, st) in spec.stations.iter().enumerate() {
        if !used[s] {
            let path = ctx::child("stations", &st.name);
            let origin = entries
                .get(s)
                .filter(|e| e.key == st.name)
                .map_or(Origin::File(0..0), |e| e.key_origin.clone());
            ctx.warn(
                &origin,
                &path,
                format!("station {} is never visited by any class", st.name),
            );
        }
    }
}

/// Where a kernel error points in the file: its typed location walked down
/// the tree (scope, then each field), as far as the keys exist; the origin
/// of the deepest node found and the key path of the whole location.
fn locate(root: &Node, class_paths: &[String], e: &NetworkError) -> (Origin, String) {
    let entry = |section: &str, i: usize| {
        let t = root.get(section).and_then(Node::table)?;
        t.get(i).map(|e| (&e.node, ctx::child(section, &e.key)))
    };
    let scope = match e.scope {
        Scope::Network => Some((root, String::new())),
        Scope::Station(s) => entry("stations", s),
        Scope::Class(c) if class_paths.get(c).is_some_and(|p| p == "workload") => {
            root.get("workload").map(|n| (n, "workload".to_string()))
        }
        Scope::Class(c) => entry("classes", c),
        Scope::Region(r) => entry("regions", r),
        Scope::Initial => root
            .get("simulation")
            .and_then(|s| s.get("initial"))
            .map(|n| (n, "simulation.initial".to_string())),
    };
    let Some((mut node, mut path)) = scope else {
        return (root.origin.clone(), String::new());
    };
    let station = |s: usize| {
        root.get("stations")
            .and_then(Node::table)
            .and_then(|t| t.get(s))
            .map_or(format!("#{s}"), |e| e.key.clone())
    };
    let mut found = true;
    for f in &e.field {
        let key = match *f {
            Field::Index(i) => {
                let next = match &node.v {
                    tree::V::Array(items) => items.get(i).map(|n| (n, format!("{path}[{i}]"))),
                    tree::V::Table(t) => t.get(i).map(|e| (&e.node, ctx::child(&path, &e.key))),
                    _ => None,
                };
                match next {
                    Some((n, p)) if found => (node, path) = (n, p),
                    _ => {
                        found = false;
                        path = format!("{path}[{i}]");
                    }
                }
                continue;
            }
            // A link's service may be spelled `rtt`.
            Field::Key("service") if node.get("service").is_none() && node.get("rtt").is_some() => {
                "rtt".to_string()
            }
            Field::Key(k) => k.to_string(),
            Field::From(None) => "source".into(),
            Field::To(Target::Exit) => "sink".into(),
            Field::From(Some(s)) | Field::To(Target::Station(s)) => station(s),
            Field::To(Target::Switch { station: s, class }) => {
                let cname = root
                    .get("classes")
                    .and_then(Node::table)
                    .and_then(|t| t.get(class))
                    .map_or(format!("#{class}"), |e| e.key.clone());
                format!("{cname}:{}", station(s))
            }
        };
        match node.get(&key) {
            Some(n) if found => node = n,
            _ => found = false,
        }
        path = ctx::child(&path, &key);
    }
    (node.origin.clone(), path)
}

/// One problem in a station group's template is found in each member
/// (same place, same message, key paths that differ only in the member's
/// index): it is reported once, for the first member, saying how many more
/// share it.
fn merge_member_copies(problems: Vec<ModelError>) -> Vec<ModelError> {
    // `db[2].cpu` -> `db[#].cpu`.
    let shape = |p: &str| {
        let mut out = String::with_capacity(p.len());
        let mut digits = false;
        for c in p.chars() {
            if c.is_ascii_digit() && out.ends_with('[') {
                digits = true;
                out.push('#');
            } else if !(digits && c.is_ascii_digit()) {
                digits = false;
                out.push(c);
            }
        }
        out
    };
    let mut out: Vec<ModelError> = Vec::with_capacity(problems.len());
    let mut first: std::collections::HashMap<(usize, usize, String, String), (usize, usize)> =
        std::collections::HashMap::new();
    for p in problems {
        let same = p.line != 0 && p.key_path.contains('[');
        let key = (p.line, p.column, shape(&p.key_path), shape(&p.message));
        if same && let Some((at, n)) = first.get_mut(&key) {
            *n += 1;
            let more = *n;
            let e = &mut out[*at];
            let base = e
                .message
                .split(" (and in ")
                .next()
                .unwrap_or("")
                .to_string();
            let s = if more == 1 { "" } else { "s" };
            e.message = format!("{base} (and in {more} more member{s} of the group)");
            continue;
        }
        if same {
            first.insert(key, (out.len(), 0));
        }
        out.push(p);
    }
    out
}

/// The first comment block of a file, without the `#` marks.
fn header_comment(text: &str) -> String {
    let mut lines = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        // Blank lines and editor directives such as `#:schema URL` before
        // the description are not part of it.
        if (t.is_empty() || t.starts_with("#:")) && lines.is_empty() {
            continue;
        }
        match t.strip_prefix('#') {
            Some(rest) => lines.push(rest.strip_prefix(' ').unwrap_or(rest).trim_end()),
            None => break,
        }
    }
    lines.join("\n").trim().to_string()
}

/// A number as it reads best in a message: `-5`, `0.0004`, `1.02`.
pub(crate) fn num(x: f64) -> String {
    if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x}")
    }
}

/// Three significant digits, without trailing zeros: 1.0204 -> 1.02, 50 -> 50.
pub(crate) fn sig(x: f64) -> String {
    qsim_kernel::sig_trimmed(x, 3)
}

/// A key as written in a path: bare when it can be, quoted otherwise.
pub(crate) fn quote_key(k: &str) -> String {
    let bare = |k: &str| {
        !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    // A member of a station group, `instance[3].cpu`, reads as the path it is.
    let member = k.split_once('[').is_some_and(|(g, rest)| {
        rest.split_once("].").is_some_and(|(ix, m)| {
            bare(g) && bare(m) && !ix.is_empty() && ix.chars().all(|c| c.is_ascii_digit())
        })
    });
    if bare(k) || member {
        k.to_string()
    } else {
        format!("\"{k}\"")
    }
}

/// The longest word a "did you mean" hint is looked for: names are short,
/// and the comparison costs the product of the two lengths, so a megabyte
/// of unknown name gets no hint instead of minutes of comparing.
const MAX_HINT_CHARS: usize = 64;

/// The closest of `candidates` to `word` within edit distance 2, if any,
/// for "did you mean" hints; case is ignored (`FIFO` is two edits from
/// `fcfs`). Every such hint of qsim comes from here. Only candidates
/// within two characters of the word's length are compared (more differ
/// by more than two edits), and a word over 64 characters gets none.
pub fn did_you_mean<S: AsRef<str>>(word: &str, candidates: &[S]) -> Option<String> {
    let n = word.chars().count();
    if n > MAX_HINT_CHARS {
        return None;
    }
    let word = word.to_lowercase();
    candidates
        .iter()
        .map(AsRef::as_ref)
        .filter(|c| c.chars().count().abs_diff(n) <= 2)
        .map(|c| (edit_distance(&word, &c.to_lowercase()), c))
        .filter(|(d, c)| *d <= 2 && *d < n.max(c.chars().count()))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.to_string())
}

/// Optimal string alignment distance: insertions, deletions, substitutions
/// and adjacent transpositions each count as one edit (`strsim`'s, which
/// clap already links for its own suggestions).
fn edit_distance(a: &str, b: &str) -> usize {
    strsim::osa_distance(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(num(-5.0), "-5");
        assert_eq!(num(0.0004), "0.0004");
        assert_eq!(sig(1.0204), "1.02");
        assert_eq!(sig(50.0), "50");
        assert_eq!(sig(0.011111), "0.0111");
        assert_eq!(edit_distance("popultion", "population"), 1);
        assert_eq!(edit_distance("sevrers", "servers"), 1);
        assert_eq!(
            did_you_mean("sevrers", &["servers", "service"]).as_deref(),
            Some("servers")
        );
        assert_eq!(did_you_mean("zzz", &["servers"]), None);
        // A long word is not compared at all, and neither is a candidate
        // whose length differs by more than two.
        let long = "s".repeat(1 << 20);
        assert_eq!(did_you_mean(&long, &["servers"]), None);
        assert_eq!(did_you_mean("servers", &[long.as_str()]), None);
        assert_eq!(header_comment("\n# a\n#b\n\n# c\nx=1"), "a\nb");
        assert_eq!(quote_key("my disk"), "\"my disk\"");
    }
}
