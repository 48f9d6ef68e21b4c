//! A hysteresis sweep: one parameter's values run up and then down, each
//! point starting from where the previous one ended.
//!
//! Replication `i` of a point starts from the final state of replication
//! `i` of the point before it (the closed jobs at each station, the rest
//! thinking; see `qsim_kernel::InitialState::Placed`), so each replication
//! index is one chain through the whole sweep. Points run one after the
//! other; the replications of a point run in parallel and are combined in
//! index order, so results do not depend on the thread count. The down
//! branch starts at the top value from the up branch's last state.
//!
//! When the population changes between two points, the jobs that are added
//! start thinking; the jobs removed are taken from the thinking ones first,
//! then from the stations in proportion to the jobs there. Open jobs are
//! not carried over.
//!
//! Where both branches have a point, they *differ* when their system
//! throughput intervals (95%) do not overlap.

use crate::error::SweepError;
use crate::grid::point_seed;
use crate::run::ModelSource;
use crate::spec::VarySpec;
use qsim_kernel::{
    Estimate, InitialState, Network, Placement, ReplicationResult, RunConfig, RunResults, Stop,
    Workload, run_replication, summarize,
};
use qsim_model::Override;
use rayon::prelude::*;
use serde::Serialize;

/// How to run a hysteresis sweep (the model's own settings where `None`).
#[derive(Clone, Debug, Default)]
pub struct HysteresisOptions {
    /// Root seed.
    pub seed: Option<u64>,
    /// Replications (chains).
    pub replications: Option<u32>,
    /// Length of each replication.
    pub stop: Option<Stop>,
    /// Worker threads; 0 means one per core. Never changes results.
    pub threads: usize,
    /// Limits each point must stay within, checked for every value before
    /// the first runs.
    pub budget: Option<qsim_kernel::Budget>,
}

/// One point of a branch.
#[derive(Clone, Debug, Serialize)]
pub struct BranchPoint {
    /// The value of the swept parameter.
    pub value: f64,
    /// System throughput.
    pub throughput_per_s: Estimate,
    /// System mean response time.
    pub response_time_s: Estimate,
    /// Why the point's figures cannot be taken at face value (not in
    /// steady state, no interval...), each with its remedy.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The outcome: both branches and where they differ.
#[derive(Clone, Debug, Serialize)]
pub struct Hysteresis {
    /// The swept key path.
    pub parameter: String,
    /// Points of the up branch, in increasing order of the values given.
    pub up: Vec<BranchPoint>,
    /// Points of the down branch, in the order they ran (decreasing).
    pub down: Vec<BranchPoint>,
    /// The values at which the branches' throughput intervals do not overlap.
    pub differ_at: Vec<f64>,
    /// `differ_at` as contiguous ranges of the swept values `[from, to]`.
    pub differ_ranges: Vec<[f64; 2]>,
}

impl Hysteresis {
    /// One sentence: where the branches differ, or that they agree.
    pub fn verdict(&self) -> String {
        if self.differ_ranges.is_empty() {
            return format!(
                "the up and down branches agree at every {} (throughput intervals overlap): no hysteresis",
                self.parameter
            );
        }
        let ranges: Vec<String> = self
            .differ_ranges
            .iter()
            .map(|[a, b]| {
                if a == b {
                    format!("{a}")
                } else {
                    format!("{a}..{b}")
                }
            })
            .collect();
        format!(
            "the branches differ (non-overlapping throughput intervals) at {} = {}: the network's state depends on the path of the load (hysteresis)",
            self.parameter,
            ranges.join(", ")
        )
    }
}

/// `state` (jobs at stations of a previous point) fitted to `network`'s
/// closed populations: thinking jobs go first, then jobs at stations in
/// proportion.
fn fit(network: &Network, state: &[Placement]) -> Vec<Placement> {
    let spec = network.spec();
    let mut out = Vec::new();
    for (c, class) in spec.classes.iter().enumerate() {
        let Workload::Closed { population, .. } = class.workload else {
            continue;
        };
        let mine: Vec<&Placement> = state
            .iter()
            .filter(|p| p.class == c && p.station < spec.stations.len())
            .collect();
        let total: u64 = mine.iter().map(|p| u64::from(p.jobs)).sum();
        let pop = u64::from(population);
        if total <= pop {
            out.extend(mine.into_iter().copied());
            continue;
        }
        // Largest remainders, ties by station order: deterministic.
        let mut shares: Vec<(Placement, u64, u64)> = mine
            .iter()
            .map(|p| {
                let exact = u64::from(p.jobs) * pop;
                (**p, exact / total, exact % total)
            })
            .collect();
        let mut left = pop - shares.iter().map(|s| s.1).sum::<u64>();
        let mut order: Vec<usize> = (0..shares.len()).collect();
        order.sort_by(|&a, &b| shares[b].2.cmp(&shares[a].2).then(a.cmp(&b)));
        for i in order {
            if left == 0 {
                break;
            }
            shares[i].1 += 1;
            left -= 1;
        }
        out.extend(
            shares
                .into_iter()
                .filter(|s| s.1 > 0)
                .map(|(p, n, _)| Placement {
                    jobs: n as u32,
                    ..p
                }),
        );
    }
    out
}

/// Runs `spec`'s numeric values up and then down on the model of `source`
/// with the `base` overrides.
pub fn run_hysteresis(
    source: &dyn ModelSource,
    base: &[Override],
    spec: &VarySpec,
    options: &HysteresisOptions,
) -> Result<Hysteresis, SweepError> {
    let mut values: Vec<f64> = Vec::new();
    for v in spec.values() {
        match v.number() {
            Some(x) => values.push(x),
            None => {
                return Err(SweepError::Option(format!(
                    "--hysteresis needs numeric values; {} has `{}`",
                    spec.path(),
                    v.text()
                )));
            }
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads)
        .build()
        .map_err(|e| SweepError::Option(format!("cannot start threads: {e}")))?;
    let overrides_at = |value: &str| -> Result<Vec<Override>, SweepError> {
        let mut overrides = base.to_vec();
        overrides.push(Override::new(spec.path(), value, "--vary"));
        Ok(overrides)
    };
    // The model's error at a value names the whole --vary that set it.
    let load_at = |value: &str| {
        source.load(&overrides_at(value)?).map_err(|e| {
            let text = crate::run::as_vary(spec, value, e.to_string());
            SweepError::Model(format!("{} = {value}: {text}", spec.path()))
        })
    };
    let config_of = |model: &qsim_model::Model| {
        let mut config: RunConfig = model.run.clone();
        if let Some(r) = options.replications {
            config.replications = r;
        }
        if let Some(s) = options.stop {
            config.stop = s;
        }
        config.precision = None;
        config.trace = None;
        config
    };
    // Every value is loaded and estimated before the first runs: a value
    // the model rejects or a run beyond the budget is refused at once.
    for (k, value) in spec.values().iter().enumerate() {
        let model = load_at(value.text())?;
        if let Some(b) = &options.budget {
            let at_once = RunConfig {
                threads: options.threads,
                ..config_of(&model)
            };
            b.check(
                &model.network,
                &at_once,
                &crate::run::class_visits(&model.network),
            )
            .map_err(|error| SweepError::Budget {
                index: k,
                point: format!("{}={}", spec.path(), value.text()),
                error,
            })?;
        }
    }
    let order: Vec<(usize, bool)> = (0..values.len())
        .map(|k| (k, true))
        .chain((0..values.len()).rev().map(|k| (k, false)))
        .collect();
    let mut states: Vec<Vec<Placement>> = Vec::new();
    let (mut up, mut down) = (Vec::new(), Vec::new());
    let mut up_x: Vec<Option<Estimate>> = vec![None; values.len()];
    let mut differ_at = Vec::new();
    for (step, &(k, rising)) in order.iter().enumerate() {
        let value = &spec.values()[k];
        let model = load_at(value.text())?;
        let mut config = config_of(&model);
        config.seed = point_seed(options.seed.unwrap_or(config.seed), step);
        let reps = config.replications as usize;
        states.resize(reps, Vec::new());
        let networks: Vec<Network> = (0..reps)
            .map(|i| {
                if step == 0 {
                    return Ok(model.network.clone());
                }
                let mut s = model.network.spec().clone();
                s.initial = InitialState::Placed(fit(&model.network, &states[i]));
                model.network.rebuilt(s).map_err(|e| {
                    SweepError::Model(format!("carrying the state to {}: {e}", value.text()))
                })
            })
            .collect::<Result<_, _>>()?;
        let results: Vec<ReplicationResult> = pool
            .install(|| {
                (0..reps)
                    .into_par_iter()
                    .map(|i| run_replication(&networks[i], &config, i as u32))
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| SweepError::Model(format!("{} = {}: {e}", spec.path(), value.text())))?;
        for (i, r) in results.iter().enumerate() {
            states[i] = r.final_state.clone();
        }
        let summary: RunResults = summarize(&model.network, &config, &results);
        let point = BranchPoint {
            value: values[k],
            throughput_per_s: summary.system.throughput_per_s,
            response_time_s: Estimate {
                mean: summary.system.response_time_s.mean,
                ci95: summary.system.response_time_s.ci95,
            },
            warnings: summary.warnings.iter().map(|w| w.to_string()).collect(),
        };
        if rising {
            up_x[k] = Some(point.throughput_per_s);
            up.push(point);
        } else {
            if let Some(a) = up_x[k] {
                let b = point.throughput_per_s;
                if (a.mean - b.mean).abs() > a.ci95 + b.ci95 {
                    differ_at.push(values[k]);
                }
            }
            down.push(point);
        }
    }
    differ_at.sort_by(f64::total_cmp);
    // Contiguous runs in the order of the swept values.
    let mut sorted = values.clone();
    sorted.sort_by(f64::total_cmp);
    let mut differ_ranges: Vec<[f64; 2]> = Vec::new();
    let mut prev_in = false;
    for v in &sorted {
        let inside = differ_at.contains(v);
        match (inside, prev_in, differ_ranges.last_mut()) {
            (true, true, Some(r)) => r[1] = *v,
            (true, _, _) => differ_ranges.push([*v, *v]),
            _ => {}
        }
        prev_in = inside;
    }
    Ok(Hysteresis {
        parameter: spec.path().to_string(),
        up,
        down,
        differ_at,
        differ_ranges,
    })
}
