//! Running replications and summarizing them.

use crate::config::{RunConfig, Stop, Warmup, check_config};
use crate::control::Control;
use crate::error::RunError;
use crate::network::Network;
use crate::results::*;
use crate::rounds::ReplicationRounds;
use crate::sim::{Simulation, StopPlan, WarmPlan};
use rayon::prelude::*;
use std::sync::Arc;

/// Runs all replications of `network` (in parallel, results independent of
/// the thread count) and summarizes them.
///
/// Replications run on a local rayon pool of `config.threads` threads (0:
/// one per core) and are collected in index order. With a
/// [`crate::Precision`] target, further replications are added in the
/// deterministic rounds of [`ReplicationRounds`] until both the system
/// throughput and mean response time reach the target relative half-width
/// or `max_replications` have run.
pub fn run(network: &Network, config: &RunConfig) -> Result<RunResults, RunError> {
    run_inner(network, config, None)
}

/// [`run`] with a [`Control`]: progress is published to it and the run
/// stops with [`RunError::Cancelled`] soon after [`Control::cancel`].
pub fn run_with(
    network: &Network,
    config: &RunConfig,
    control: &Arc<Control>,
) -> Result<RunResults, RunError> {
    run_inner(network, config, Some(control))
}

fn run_inner(
    network: &Network,
    config: &RunConfig,
    control: Option<&Arc<Control>>,
) -> Result<RunResults, RunError> {
    check_config(config)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.threads)
        .build()
        .map_err(|e| RunError::Config(format!("cannot start {} threads: {e}", config.threads)))?;
    let reps = ReplicationRounds::new(config).run(|round| {
        pool.install(|| {
            round
                .into_par_iter()
                .map(|i| replication(network, config, i, control))
                .collect::<Result<Vec<ReplicationResult>, RunError>>()
        })
    })?;
    Ok(summarize(network, config, &reps))
}

/// Runs replication `index` alone. Its random streams depend only on
/// `config.seed`, `index` and the stream ids, never on the thread.
///
/// With [`Warmup::Mser5`] the replication runs its full length (the stopping
/// rule counted from time zero) while keeping bounded batch means of the
/// system response time; MSER-5 picks the truncation point d (in
/// completions). The replication is then replayed from the same seed — a
/// replication is a pure function of its streams, so the replay follows the
/// identical trajectory — with a warm-up of d completions and the same end,
/// which subtracts the truncated prefix exactly from every statistic
/// (histograms included) without storing snapshots.
pub fn run_replication(
    network: &Network,
    config: &RunConfig,
    index: u32,
) -> Result<ReplicationResult, RunError> {
    replication(network, config, index, None)
}

/// [`run_replication`] reporting to `control`, and stopping with
/// [`RunError::Cancelled`] soon after it is cancelled.
pub fn run_replication_with(
    network: &Network,
    config: &RunConfig,
    index: u32,
    control: &Arc<Control>,
) -> Result<ReplicationResult, RunError> {
    replication(network, config, index, Some(control))
}

/// [`run_replication`] reporting to `control` when given.
pub(crate) fn replication(
    network: &Network,
    config: &RunConfig,
    index: u32,
    control: Option<&Arc<Control>>,
) -> Result<ReplicationResult, RunError> {
    let r = replication_inner(network, config, index, control)?;
    if let Some(c) = control {
        c.replication_finished();
    }
    Ok(r)
}

fn replication_inner(
    network: &Network,
    config: &RunConfig,
    index: u32,
    control: Option<&Arc<Control>>,
) -> Result<ReplicationResult, RunError> {
    check_config(config)?;
    let mut sim = Simulation::new(network, config, index)?;
    if let Some(c) = control {
        sim.set_control(Arc::clone(c));
    }
    sim.run()?;
    if config.warmup != Warmup::Mser5 {
        return Ok(sim.result());
    }
    let d = sim.mser_truncation().unwrap_or(0);
    if d == 0 {
        return Ok(sim.result());
    }
    let stop = match config.stop {
        Stop::Jobs(_) => StopPlan::Jobs(sim.completions().saturating_sub(d).max(1)),
        Stop::Time(_) => StopPlan::AbsTime(sim.time().seconds()),
    };
    let mut replay = Simulation::with_plan(network, config, index, WarmPlan::Jobs(d), stop, false);
    if let Some(c) = control {
        replay.set_control(Arc::clone(c));
    }
    replay.run()?;
    Ok(replay.result())
}

/// Summarizes replications (in index order) into means and 95% CIs.
///
/// Means and rates are averaged across replications with a Student t
/// interval; each percentile is computed per replication and then averaged
/// the same way.
pub fn summarize(network: &Network, config: &RunConfig, reps: &[ReplicationResult]) -> RunResults {
    let spec = network.spec();
    let est = |f: &dyn Fn(&ReplicationResult) -> f64| estimate(reps.iter().map(f));
    let response = |f: &dyn Fn(&ReplicationResult) -> &ReplicationClass| {
        let m = est(&|r| f(r).response_time_s);
        let p = |k: usize| est(&|r| f(r).percentiles_s[k]);
        ResponseEstimate {
            mean: m.mean,
            ci95: m.ci95,
            p50: p(0),
            p90: p(1),
            p95: p(2),
            p99: p(3),
            p999: p(4),
        }
    };
    let system = SystemResults {
        throughput_per_s: est(&|r| r.system.throughput_per_s),
        response_time_s: response(&|r| &r.system),
        sla_violation: config.sla_s.map(|_| est(&|r| r.system.sla_violation)),
    };
    let stations = spec
        .stations
        .iter()
        .enumerate()
        .map(|(i, st)| {
            let grouped = matches!(
                st.kind,
                crate::network::StationKind::Batch(_) | crate::network::StationKind::Link(_)
            );
            let spin =
                matches!(&st.kind, crate::network::StationKind::Latch(l) if l.spin.is_some());
            let e = |f: &dyn Fn(&ReplicationStation) -> f64| {
                estimate(reps.iter().filter_map(|r| r.stations.get(i)).map(f))
            };
            StationResults {
                name: st.name.clone(),
                kind: KindTag::from(&st.kind),
                throughput_per_s: e(&|s| s.throughput_per_s),
                utilization: e(&|s| s.utilization),
                mean_jobs: e(&|s| s.mean_jobs),
                response_time_s: e(&|s| s.response_time_s),
                wait_time_s: e(&|s| s.wait_time_s),
                mean_batch_size: grouped.then(|| e(&|s| s.mean_batch_size)),
                batches_per_s: grouped.then(|| e(&|s| s.batches_per_s)),
                mean_spinning: spin.then(|| e(&|s| s.mean_spinning)),
                mean_sleeping: spin.then(|| e(&|s| s.mean_sleeping)),
            }
        })
        .collect();
    let classes = spec
        .classes
        .iter()
        .enumerate()
        .map(|(i, c)| ClassResults {
            name: c.name.clone(),
            throughput_per_s: estimate(
                reps.iter()
                    .filter_map(|r| r.classes.get(i))
                    .map(|c| c.throughput_per_s),
            ),
            response_time_s: {
                let pick = |r: &ReplicationResult| r.classes.get(i).cloned().unwrap_or_default();
                let m = estimate(reps.iter().map(|r| pick(r).response_time_s));
                let p = |k: usize| estimate(reps.iter().map(|r| pick(r).percentiles_s[k]));
                ResponseEstimate {
                    mean: m.mean,
                    ci95: m.ci95,
                    p50: p(0),
                    p90: p(1),
                    p95: p(2),
                    p99: p(3),
                    p999: p(4),
                }
            },
        })
        .collect();
    let regions = spec
        .regions
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let e = |f: &dyn Fn(&ReplicationRegion) -> f64| {
                estimate(reps.iter().filter_map(|r| r.regions.get(i)).map(f))
            };
            RegionResults {
                name: g.name.clone(),
                wait_time_s: e(&|r| r.wait_time_s),
                mean_waiting: e(&|r| r.mean_waiting),
                mean_inside: e(&|r| r.mean_inside),
            }
        })
        .collect();
    let n = reps.len().max(1) as f64;
    RunResults {
        system,
        stations,
        classes,
        regions,
        replications: reps.len() as u32,
        events: reps.iter().map(|r| r.events).sum(),
        measured_time_s: reps.iter().map(|r| r.measured_time_s).sum(),
        warmup_time_s: reps.iter().map(|r| r.warmup_time_s).sum::<f64>() / n,
        replication_results: reps.to_vec(),
    }
}
