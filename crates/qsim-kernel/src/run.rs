//! Running replications and summarizing them.

use crate::config::{RunConfig, Stop, Warmup};
use crate::network::Network;
use crate::results::*;
use crate::sim::{Simulation, StopPlan, WarmPlan};
use rayon::prelude::*;
use thiserror::Error;

/// Why a run could not produce results.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum RunError {
    /// The number of jobs present grew past the configured bound: the model
    /// is unstable (an open workload faster than the network can serve).
    #[error(
        "the model is unstable: {jobs} jobs present at {time_s:.3} s (limit {limit}), most of them at station {station}; lower the arrival rate or add capacity"
    )]
    Unstable {
        /// Jobs present when the run was stopped.
        jobs: u64,
        /// The configured limit.
        limit: u64,
        /// Station holding most of them.
        station: String,
        /// Simulated time of the stop.
        time_s: f64,
    },
    /// The event limit was reached before the stopping rule.
    #[error(
        "replication {replication} reached the limit of {limit} events before its stopping rule; shorten the run or raise the limit"
    )]
    EventLimit {
        /// Replication index.
        replication: u32,
        /// The configured limit.
        limit: u64,
    },
    /// The run configuration is invalid.
    #[error("invalid run configuration: {0}")]
    Config(String),
}

/// Rejects configurations the engine cannot run.
pub(crate) fn check_config(config: &RunConfig) -> Result<(), RunError> {
    let bad = |m: String| Err(RunError::Config(m));
    if config.replications == 0 {
        return bad("replications must be at least 1, found 0".into());
    }
    match config.stop {
        Stop::Jobs(0) => return bad("stop.jobs must be at least 1, found 0".into()),
        Stop::Time(t) if !(t.is_finite() && t > 0.0) => {
            return bad(format!(
                "stop.time must be a positive finite number of seconds, found {t}"
            ));
        }
        _ => {}
    }
    if let Warmup::Time(t) = config.warmup
        && !(t.is_finite() && t >= 0.0)
    {
        return bad(format!(
            "warmup.time must be a finite number of seconds >= 0, found {t}"
        ));
    }
    if let Some(s) = config.sla_s
        && !(s.is_finite() && s >= 0.0)
    {
        return bad(format!(
            "sla_s must be a finite number of seconds >= 0, found {s}"
        ));
    }
    if let Some(p) = config.precision
        && !(p.relative_half_width.is_finite() && p.relative_half_width > 0.0)
    {
        return bad(format!(
            "precision.relative_half_width must be positive, found {}",
            p.relative_half_width
        ));
    }
    Ok(())
}

/// Runs all replications of `network` (in parallel, results independent of
/// the thread count) and summarizes them.
///
/// Replications run on a local rayon pool of `config.threads` threads (0:
/// one per core) and are collected in index order. With a
/// [`crate::Precision`] target, further replications are added in
/// deterministic rounds (the size of a round depends only on the results so
/// far) until both the system throughput and mean response time reach the
/// target relative half-width or `max_replications` have run.
pub fn run(network: &Network, config: &RunConfig) -> Result<RunResults, RunError> {
    check_config(config)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.threads)
        .build()
        .map_err(|e| RunError::Config(format!("cannot start {} threads: {e}", config.threads)))?;
    let mut reps: Vec<ReplicationResult> = Vec::new();
    let mut target = config.replications;
    loop {
        let start = reps.len() as u32;
        let batch: Vec<Result<ReplicationResult, RunError>> = pool.install(|| {
            (start..target)
                .into_par_iter()
                .map(|i| run_replication(network, config, i))
                .collect()
        });
        for r in batch {
            reps.push(r?);
        }
        let Some(p) = config.precision else { break };
        let max = p.max_replications.max(config.replications);
        let n = reps.len() as u32;
        if n >= max {
            break;
        }
        let rel = |xs: Vec<f64>| {
            let e = estimate(xs);
            if e.mean != 0.0 {
                e.ci95 / e.mean.abs()
            } else {
                0.0
            }
        };
        let worst = rel(reps.iter().map(|r| r.system.throughput_per_s).collect())
            .max(rel(reps.iter().map(|r| r.system.mean_response_s).collect()));
        if n >= 2 && worst <= p.relative_half_width {
            break;
        }
        // The half-width shrinks like 1/sqrt(n): aim for the n that would
        // reach the target, growing at most 4-fold per round.
        let wanted = if n >= 2 {
            (f64::from(n) * (worst / p.relative_half_width).powi(2)).ceil() as u64
        } else {
            2
        };
        target = (wanted.min(u64::from(n) * 4).max(u64::from(n) + 1) as u32).min(max);
    }
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
    check_config(config)?;
    let mut sim = Simulation::new(network, config, index)?;
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
        let m = est(&|r| f(r).mean_response_s);
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
                let m = estimate(reps.iter().map(|r| pick(r).mean_response_s));
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
