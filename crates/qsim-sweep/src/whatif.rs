//! What-if comparisons with common random numbers: which change pays, at
//! which load.
//!
//! For each operating point (a set of overrides, e.g.
//! `workload.population=20`) the baseline model runs its replications; each
//! [`Change`] (a station sped up by the law of its kind, see
//! [`qsim_kernel::StationSpec::sped_up`], or any overrides) runs the same
//! replication indices under the same seed. Every random stream is derived
//! from (seed, replication, stream id) and there is one stream per station
//! for service and routing and per class for arrivals, so replication i of
//! the baseline and of the change draw the same numbers for the same
//! purposes (common random numbers). The differences changed − baseline are
//! then strongly correlated with nothing but the change, and their
//! t-interval over replications (paired) is much narrower than the
//! interval of two independent runs, which is also given
//! ([`Difference::unpaired_ci95`]) so the gain can be seen.
//!
//! Replications run on a local rayon pool; each depends only on its index,
//! so results are identical at any thread count.

use crate::run::{ModelSource, class_visits};
use crate::setting::{Setting, adjusted};
use qsim_kernel::{
    Budget, Control, Estimate, Network, ReplicationResult, ReplicationRounds, RunConfig, RunError,
    estimate, run_replication_with, summarize, t975,
};
use qsim_model::{Model, Override};
use rayon::prelude::*;
use serde::Serialize;
use std::sync::Arc;
use thiserror::Error;

/// One change to compare with the baseline.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// Station `station` `factor` times as fast (1.25: a 25% speed-up), by
    /// the speed-up law of its kind.
    SpeedUp {
        /// The station's name.
        station: String,
        /// How many times as fast, > 0.
        factor: f64,
    },
    /// Overrides applied after the operating point's, e.g.
    /// `stations.cpu.service.mean=*0.75` (a model from a [`ModelSource`]).
    Set(Vec<Override>),
    /// Typed settings applied to the point's network, in order: a change
    /// to a network built in code, no key paths.
    Settings(Vec<Setting>),
}

impl Change {
    /// How the change reads in reports: `speedup cpu x1.25`, or the
    /// overrides joined by spaces.
    pub fn label(&self) -> String {
        match self {
            Change::SpeedUp { station, factor } => {
                format!("speedup {station} x{factor}")
            }
            Change::Set(ov) => ov
                .iter()
                .map(|o| o.to_string())
                .collect::<Vec<_>>()
                .join(" "),
            Change::Settings(settings) => label(settings),
        }
    }
}

/// How to run a what-if.
#[derive(Clone, Debug, Default)]
pub struct WhatIfOptions {
    /// Worker threads; 0 means one per core. Never changes results.
    pub threads: usize,
    /// Run settings that replace the model's (the baseline's settings,
    /// so changed, are used for every run of a point).
    pub settings: RunSettings,
    /// Limits each model must stay within (checked before anything runs).
    pub budget: Option<Budget>,
    /// Cancelled (e.g. by Ctrl-C): the runs stop at their next check with
    /// [`RunError::Cancelled`].
    pub control: Option<Arc<Control>>,
    /// Skip the two-ended run of models with a falling speed curve (see
    /// [`qsim_kernel::bistable`]); without it, each such model (baseline
    /// or changed) runs a second time at each point from its other end.
    pub no_bistability_check: bool,
}

/// Run settings that replace the model's own, each when given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunSettings {
    /// Root seed.
    pub seed: Option<u64>,
    /// Replications (a precision target in the model may add more).
    pub replications: Option<u32>,
    /// Length of each replication.
    pub stop: Option<qsim_kernel::Stop>,
}

impl RunSettings {
    fn apply(&self, c: &mut RunConfig) {
        if let Some(s) = self.seed {
            c.seed = s;
        }
        if let Some(r) = self.replications {
            c.replications = r;
        }
        if let Some(s) = self.stop {
            c.stop = s;
        }
    }
}

/// Why a what-if could not run.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum WhatIfError {
    /// A model, change or operating point that does not load or make sense.
    #[error("{0}")]
    Usage(String),
    /// A run beyond the budget, found while every model at every point is
    /// estimated, before any runs.
    #[error("{}", budget_text(point, change.as_deref(), error))]
    Budget {
        /// The operating point (empty: the model as given).
        point: String,
        /// The change's label, or `None` for the baseline.
        change: Option<String>,
        /// Why, with the model key at fault.
        error: qsim_kernel::budget::BudgetError,
    },
    /// A replication failed or was cancelled.
    #[error(transparent)]
    Run(#[from] RunError),
}

/// changed − baseline of one figure over paired replications.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Difference {
    /// Mean of the per-replication differences.
    pub mean: f64,
    /// 95% half-width of the paired t-interval (NaN with one replication).
    pub ci95: f64,
    /// 95% half-width had the two runs been independent (pooled
    /// two-sample t-interval from the same replications).
    pub unpaired_ci95: f64,
    /// `unpaired_ci95 / ci95`: how many times narrower common random
    /// numbers made the interval (its square is the variance reduction).
    pub ci_narrowing: f64,
    /// The difference relative to the baseline mean (0.05: 5% higher).
    pub relative: f64,
    /// The interval excludes zero; `None` when there is no interval.
    pub significant: Option<bool>,
}

impl Difference {
    fn of(base: &[f64], changed: &[f64]) -> Difference {
        let d = estimate(changed.iter().zip(base).map(|(c, b)| c - b));
        let b = estimate(base.iter().copied());
        let n = base.len();
        let var = |xs: &[f64], m: f64| {
            xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() as f64 - 1.0)
        };
        let unpaired = if n >= 2 {
            let mc = changed.iter().sum::<f64>() / n as f64;
            let pooled = (var(base, b.mean) + var(changed, mc)) / 2.0;
            t975(2 * n as u32 - 2) * (2.0 * pooled / n as f64).sqrt()
        } else {
            f64::NAN
        };
        Difference {
            mean: d.mean,
            ci95: d.ci95,
            unpaired_ci95: unpaired,
            ci_narrowing: unpaired / d.ci95,
            relative: if b.mean != 0.0 { d.mean / b.mean } else { 0.0 },
            significant: d.ci95.is_finite().then(|| d.mean.abs() > d.ci95),
        }
    }
}

/// The baseline's figures at one operating point; in JSON the figures are
/// under `system`, by their metric names, as in a run's JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct Baseline {
    /// The operating point, e.g. `workload.population=20` (empty: the model
    /// as given).
    pub point: String,
    /// Replications run (the same indices for every change).
    pub replications: u32,
    /// System throughput, jobs/s.
    pub throughput_per_s: Estimate,
    /// Mean response time, seconds.
    pub response_time_s: Estimate,
    /// 99th percentile of the response time, seconds.
    pub response_time_p99_s: Estimate,
    /// Whether the baseline has two operating points here, so that its
    /// figures are those of the state the runs start in: decided by
    /// [`qsim_kernel::bistable::decide`], the one verdict of every
    /// command; `None` when the check does not apply (no state-dependent
    /// mechanism) or was skipped.
    pub bistable: Option<bool>,
    /// The start state the figures belong to, and its mode where the model
    /// has two ("all jobs thinking (mode 2 of 2)"); empty where the check
    /// does not apply or was skipped.
    pub state: String,
    /// Why the baseline's figures cannot be taken at face value (not in
    /// steady state, precision not reached, two operating points...), each
    /// with a remedy.
    pub warnings: Vec<String>,
}

/// One change at one operating point; in JSON the differences are under
/// `system`, by their metric names.
#[derive(Clone, Debug, PartialEq)]
pub struct PointDifference {
    /// The operating point.
    pub point: String,
    /// Δ system throughput, jobs/s.
    pub throughput_per_s: Difference,
    /// Δ mean response time, seconds.
    pub response_time_s: Difference,
    /// Δ p99 of the response time, seconds.
    pub response_time_p99_s: Difference,
    /// Whether the changed model has two operating points here (as
    /// [`Baseline::bistable`]).
    pub bistable: Option<bool>,
    /// The start state the changed model's figures belong to (as
    /// [`Baseline::state`]).
    pub state: String,
    /// Why the changed model's figures cannot be taken at face value.
    pub warnings: Vec<String>,
}

/// The system figures of a what-if point as JSON: `{"throughput_per_s":
/// ..., "response_time_s": ..., "response_time_p99_s": ...}`.
#[derive(Serialize)]
struct System<'a, T> {
    #[serde(rename = "throughput_per_s")]
    throughput: &'a T,
    #[serde(rename = "response_time_s")]
    response: &'a T,
    #[serde(rename = "response_time_p99_s")]
    p99: &'a T,
}

/// The fields of a what-if point around its system figures.
#[derive(Serialize)]
struct PointJson<'a, T> {
    point: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    replications: Option<u32>,
    system: System<'a, T>,
    bistable: Option<bool>,
    state: &'a str,
    warnings: &'a [String],
}

impl Serialize for Baseline {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        PointJson {
            point: &self.point,
            replications: Some(self.replications),
            system: System {
                throughput: &self.throughput_per_s,
                response: &self.response_time_s,
                p99: &self.response_time_p99_s,
            },
            bistable: self.bistable,
            state: &self.state,
            warnings: &self.warnings,
        }
        .serialize(s)
    }
}

impl Serialize for PointDifference {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        PointJson {
            point: &self.point,
            replications: None,
            system: System {
                throughput: &self.throughput_per_s,
                response: &self.response_time_s,
                p99: &self.response_time_p99_s,
            },
            bistable: self.bistable,
            state: &self.state,
            warnings: &self.warnings,
        }
        .serialize(s)
    }
}

/// One change at every operating point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChangeResult {
    /// How the change reads (see [`Change::label`]).
    pub change: String,
    /// Per operating point, in the order given.
    pub points: Vec<PointDifference>,
}

/// The outcome of a what-if.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WhatIfReport {
    /// The baseline at each operating point, in the order given.
    pub baseline: Vec<Baseline>,
    /// The changes, best first: ranked by Δ throughput at the last
    /// operating point (list points from low to high load).
    pub changes: Vec<ChangeResult>,
}

/// Compares each change with the baseline at each operating point (an
/// empty list means the model as loaded), with common random numbers.
/// `base` overrides apply to every model first.
pub fn what_if(
    source: &dyn ModelSource,
    base: &[Override],
    changes: &[Change],
    points: &[Vec<Override>],
    options: &WhatIfOptions,
) -> Result<WhatIfReport, WhatIfError> {
    each_point(changes, points, options, |point| {
        let label = point
            .iter()
            .map(|o| o.to_string())
            .collect::<Vec<_>>()
            .join(" ");
        let mut ov = base.to_vec();
        ov.extend(point.iter().cloned());
        let model = load(source, &ov, &label)?;
        let mut config = model.run.clone();
        options.settings.apply(&mut config);
        let models = changes
            .iter()
            .map(|c| changed(Some((source, &ov)), &model.network, &model.run, c, &label))
            .collect::<Result<Vec<Network>, _>>()?;
        Ok((label, model.network, config, models))
    })
}

/// [`what_if`] on a network built in code: each operating point is a list
/// of typed [`Setting`]s applied to `network` (an empty list of points
/// means `network` as given), run with `config` (changed by
/// `options.settings`). A change may not be [`Change::Set`], whose key
/// paths need a model file.
pub fn what_if_network(
    network: &Network,
    config: &RunConfig,
    changes: &[Change],
    points: &[Vec<Setting>],
    options: &WhatIfOptions,
) -> Result<WhatIfReport, WhatIfError> {
    let mut config = config.clone();
    options.settings.apply(&mut config);
    each_point(changes, points, options, |point| {
        let at = label(point);
        let base_net = adjusted(network, point, &format!("the operating point {at}"), "", "")
            .map_err(WhatIfError::Usage)?;
        let models = changes
            .iter()
            .map(|c| changed(None, &base_net, &config, c, &at))
            .collect::<Result<Vec<Network>, _>>()?;
        Ok((at, base_net, config.clone(), models))
    })
}

/// One operating point made ready to run: its label, its baseline, its
/// run settings and the changed networks, one per change.
type Prepared = (String, Network, RunConfig, Vec<Network>);

/// The frame both what-ifs share: refuses an empty list of changes, takes
/// the whole model when no point is given, prepares every point and checks
/// it against the budget before anything runs (a bad or too costly point
/// or change is refused at once, not after the points before it have run),
/// then runs them and ranks the changes.
fn each_point<P>(
    changes: &[Change],
    points: &[Vec<P>],
    options: &WhatIfOptions,
    mut prepare: impl FnMut(&[P]) -> Result<Prepared, WhatIfError>,
) -> Result<WhatIfReport, WhatIfError> {
    if changes.is_empty() {
        return Err(WhatIfError::Usage(
            "nothing to compare: give at least one change".into(),
        ));
    }
    let pool = pool(options)?;
    let mut prepared = Vec::with_capacity(points.len().max(1));
    let each: Vec<&[P]> = if points.is_empty() {
        vec![&[]]
    } else {
        points.iter().map(Vec::as_slice).collect()
    };
    for point in each {
        let p = prepare(point)?;
        check_budget(options, &p.0, &p.1, &p.2, changes, &p.3)?;
        prepared.push(p);
    }
    compare(prepared, changes, options, &pool)
}

/// Settings as a report shows them: joined by spaces.
fn label(settings: &[Setting]) -> String {
    settings
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The what-if's own pool of `options.threads` threads.
fn pool(options: &WhatIfOptions) -> Result<rayon::ThreadPool, WhatIfError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads)
        .build()
        .map_err(|e| WhatIfError::Usage(format!("cannot start {} threads: {e}", options.threads)))
}

/// Checks the baseline and every changed network of a point against the
/// budget, if there is one.
fn check_budget(
    options: &WhatIfOptions,
    label: &str,
    base: &Network,
    config: &RunConfig,
    changes: &[Change],
    models: &[Network],
) -> Result<(), WhatIfError> {
    let Some(b) = &options.budget else {
        return Ok(());
    };
    let at_once = RunConfig {
        threads: options.threads,
        ..config.clone()
    };
    let labels = std::iter::once(None).chain(changes.iter().map(|c| Some(c.label())));
    for (n, change) in std::iter::once(base).chain(models).zip(labels) {
        b.check(n, &at_once, &class_visits(n))
            .map_err(|error| WhatIfError::Budget {
                point: label.to_string(),
                change,
                error,
            })?;
    }
    Ok(())
}

/// Runs the prepared points (label, baseline, run settings, changed
/// networks) and ranks the changes.
fn compare(
    prepared: Vec<Prepared>,
    changes: &[Change],
    options: &WhatIfOptions,
    pool: &rayon::ThreadPool,
) -> Result<WhatIfReport, WhatIfError> {
    let mut baselines = Vec::new();
    let mut diffs: Vec<Vec<PointDifference>> = vec![Vec::new(); changes.len()];
    for (label, base_net, config, models) in prepared {
        let config = &config;
        let run = |net: &Network, i: u32| {
            let control = options.control.clone().unwrap_or_default();
            run_replication_with(net, config, i, &control)
        };
        // Every replication `net` needs (the precision target's rounds).
        let all_reps = |net: &Network| {
            ReplicationRounds::new(config).run(|round| {
                pool.install(|| {
                    round
                        .into_par_iter()
                        .map(|i| run(net, i))
                        .collect::<Result<Vec<_>, RunError>>()
                })
            })
        };
        let base_reps = all_reps(&base_net)?;
        let n = base_reps.len() as u32;
        let tasks: Vec<(usize, u32)> = (0..models.len())
            .flat_map(|c| (0..n).map(move |i| (c, i)))
            .collect();
        let changed_reps = pool.install(|| {
            tasks
                .into_par_iter()
                .map(|(c, i)| run(&models[c], i))
                .collect::<Result<Vec<_>, RunError>>()
        })?;
        let fig = |reps: &[ReplicationResult], f: fn(&ReplicationResult) -> f64| {
            reps.iter().map(f).collect::<Vec<f64>>()
        };
        let x = |r: &ReplicationResult| r.system.throughput_per_s;
        let rt = |r: &ReplicationResult| r.system.response_time_s;
        let p99 = |r: &ReplicationResult| r.system.percentiles_s[3];
        // Each model's warnings, and its two-ended verdict: a model with a
        // falling speed curve runs again from its other end with the same
        // replication indices.
        let verdict = |net: &Network,
                       reps: &[ReplicationResult]|
         -> Result<(Vec<String>, Option<bool>, String), RunError> {
            let first = summarize(net, config, reps);
            let mut warnings: Vec<String> = first.warnings.iter().map(|w| w.to_string()).collect();
            if options.no_bistability_check {
                return Ok((warnings, None, String::new()));
            }
            // The one verdict (`qsim_kernel::bistable::decide`): the
            // other end runs with the same replication indices.
            let Some(v) = qsim_kernel::bistable::decide(net, config, &first, None)? else {
                return Ok((warnings, None, String::new()));
            };
            if v.bistable {
                warnings.push(v.describe());
            }
            Ok((warnings, Some(v.bistable), v.state_of_given()))
        };
        // The baseline's and every change's verdicts at once, on the pool
        // (each second run's replications depend on their index only, so
        // the verdicts are the same at any thread count).
        let runs: Vec<(&Network, &[ReplicationResult])> =
            std::iter::once((&base_net, base_reps.as_slice()))
                .chain(models.iter().zip(changed_reps.chunks(n as usize)))
                .collect();
        let mut verdicts = pool
            .install(|| {
                runs.into_par_iter()
                    .map(|(net, reps)| verdict(net, reps))
                    .collect::<Result<Vec<_>, RunError>>()
            })?
            .into_iter();
        let (base_warnings, base_bistable, base_state) =
            verdicts.next().expect("the baseline's verdict");
        baselines.push(Baseline {
            warnings: base_warnings,
            bistable: base_bistable,
            state: base_state,
            point: label.clone(),
            replications: n,
            throughput_per_s: estimate(fig(&base_reps, x)),
            response_time_s: estimate(fig(&base_reps, rt)),
            response_time_p99_s: estimate(fig(&base_reps, p99)),
        });
        for ((c, reps), (warnings, bistable, state)) in
            changed_reps.chunks(n as usize).enumerate().zip(verdicts)
        {
            diffs[c].push(PointDifference {
                point: label.clone(),
                throughput_per_s: Difference::of(&fig(&base_reps, x), &fig(reps, x)),
                response_time_s: Difference::of(&fig(&base_reps, rt), &fig(reps, rt)),
                response_time_p99_s: Difference::of(&fig(&base_reps, p99), &fig(reps, p99)),
                bistable,
                state,
                warnings,
            });
        }
    }
    let mut results: Vec<ChangeResult> = changes
        .iter()
        .zip(diffs)
        .map(|(c, points)| ChangeResult {
            change: c.label(),
            points,
        })
        .collect();
    let last = |r: &ChangeResult| r.points.last().map_or(0.0, |p| p.throughput_per_s.mean);
    // Stable: equal gains keep the order given.
    results.sort_by(|a, b| last(b).total_cmp(&last(a)));
    Ok(WhatIfReport {
        baseline: baselines,
        changes: results,
    })
}

fn load(source: &dyn ModelSource, ov: &[Override], label: &str) -> Result<Model, WhatIfError> {
    source.load(ov).map_err(|e| {
        WhatIfError::Usage(if label.is_empty() {
            e.to_string()
        } else {
            format!("at {label}:\n{e}")
        })
    })
}

/// The network of `change` applied to the point's network, whose model
/// was loaded from `source` with `ov` when there is one, and which runs
/// with `run` (a change may not change it).
fn changed(
    source: Option<(&dyn ModelSource, &[Override])>,
    network: &Network,
    run: &RunConfig,
    change: &Change,
    label: &str,
) -> Result<Network, WhatIfError> {
    match change {
        Change::SpeedUp { station, factor } => {
            let speed_up = Setting::SpeedUp {
                station: station.clone(),
                factor: *factor,
            };
            // The same stability rule as a model loaded with overrides: a
            // slowed-down station that saturates has no steady state to
            // compare with.
            adjusted(
                network,
                &[speed_up],
                &format!("{station} sped up x{factor}"),
                label,
                "\n  hint: a smaller slow-down, or a lower arrival rate with --at",
            )
            .map_err(WhatIfError::Usage)
        }
        Change::Settings(settings) => adjusted(
            network,
            settings,
            &format!("the change {}", change.label()),
            label,
            "",
        )
        .map_err(WhatIfError::Usage),
        Change::Set(extra) => {
            let Some((source, ov)) = source else {
                return Err(WhatIfError::Usage(format!(
                    "the change {} is written as key paths, which need a model file; on a network built in code give it as Change::Settings",
                    change.label()
                )));
            };
            let mut all = ov.to_vec();
            all.extend(extra.iter().cloned());
            let m = load(source, &all, label)?;
            if &m.run != run {
                return Err(WhatIfError::Usage(format!(
                    "the change {} changes how the model is run ([simulation]); a change must change the model only, so that both runs use the same replications and streams",
                    change.label()
                )));
            }
            Ok(m.network)
        }
    }
}

/// A budget refusal led by where it happens (see [`budget_context`]).
fn budget_text(
    point: &str,
    change: Option<&str>,
    error: &qsim_kernel::budget::BudgetError,
) -> String {
    format!("{}{error}", budget_context(point, change))
}

/// Where a what-if's budget refusal happens, to lead its message: the
/// operating point (empty: the model as given) and the change (`None`:
/// the baseline), e.g. `at workload.population=150, the change X: `.
pub fn budget_context(point: &str, change: Option<&str>) -> String {
    match (point.is_empty(), change) {
        (true, None) => String::new(),
        (true, Some(c)) => format!("the change {c}: "),
        (false, None) => format!("at {point}: "),
        (false, Some(c)) => format!("at {point}, the change {c}: "),
    }
}
