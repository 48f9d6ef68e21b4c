//! The one bistability verdict in the outputs: a run whose replications
//! fall into different modes, reported mode by mode instead of averaged,
//! and `qsim solve`'s operating points confirmed by short runs.

use anyhow::Result;
use qsim_kernel::bistable::Verdict;
use qsim_kernel::{Network, ReplicationResult, RunConfig, RunError, RunResults, Stop};

fn indices(reps: &[ReplicationResult]) -> String {
    reps.iter()
        .map(|r| r.index.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The warning of a run whose replications fall into `modes` (slowest
/// first), with each mode's system throughput.
pub fn mixed_warning(
    network: &Network,
    config: &RunConfig,
    modes: &[Vec<ReplicationResult>],
) -> String {
    let parts: Vec<String> = modes
        .iter()
        .enumerate()
        .map(|(i, reps)| {
            let r = qsim_kernel::summarize(network, config, reps);
            let x = r.system.throughput_per_s;
            let x = if x.ci95.is_finite() {
                qsim_kernel::number::mean_ci(x.mean, x.ci95)
            } else {
                format!(
                    "{} (one replication, no interval)",
                    qsim_kernel::sig(x.mean, 4)
                )
            };
            format!(
                "mode {} of {}: {x} /s (replications {})",
                i + 1,
                modes.len(),
                indices(reps)
            )
        })
        .collect();
    format!(
        "the replications fall into {} modes (different operating points from the same start): {}; their average is of no state, so the figures are given mode by mode",
        modes.len(),
        parts.join("; ")
    )
}

/// The output of a run whose replications fall into `modes`: each mode's
/// figures, from its own replications, in the format asked. A table per
/// mode; JSON with a `modes` list (each with its state, replications and
/// results); CSV with one block of rows per mode, each after a comment
/// line naming the mode (the header once).
pub fn mixed_output(
    report: &qsim_report::Report<'_>,
    network: &Network,
    modes: &[Vec<ReplicationResult>],
    json: bool,
    csv: bool,
) -> Result<String> {
    let results: Vec<RunResults> = modes
        .iter()
        .map(|reps| qsim_kernel::summarize(network, report.config, reps))
        .collect();
    let start = qsim_kernel::bistable::start_label(network);
    let label = |i: usize| {
        format!(
            "{start}, mode {} of {} (replications {})",
            i + 1,
            modes.len(),
            indices(&modes[i])
        )
    };
    let sub = |i: usize| qsim_report::Report {
        model: report.model,
        config: report.config,
        results: &results[i],
        derived: Vec::new(),
        initial_state: label(i),
        open: report.open,
        offered_per_s: report.offered_per_s,
        warnings: if i == 0 {
            report.warnings.clone()
        } else {
            Vec::new()
        },
    };
    if json {
        let list: Vec<serde_json::Value> = (0..modes.len())
            .map(|i| {
                serde_json::json!({
                    "mode": i + 1,
                    "state": label(i),
                    "replications": modes[i].iter().map(|r| r.index).collect::<Vec<_>>(),
                    "results": qsim_report::to_json(&sub(i)),
                })
            })
            .collect();
        let v = serde_json::json!({
            "model": report.model,
            "mixed_modes": true,
            "warnings": report.warnings,
            "modes": list,
        });
        let mut s = serde_json::to_string_pretty(&v)?;
        s.push('\n');
        return Ok(s);
    }
    let mut out = String::new();
    for i in 0..modes.len() {
        if csv {
            let block = qsim_report::to_csv(&sub(i));
            let mut lines = block.lines();
            let header = lines.next().unwrap_or_default();
            if i == 0 {
                out.push_str(header);
                out.push('\n');
            }
            out.push_str(&format!("# {}\n", label(i)));
            for l in lines {
                out.push_str(l);
                out.push('\n');
            }
        } else {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&qsim_report::to_table(&sub(i)));
        }
    }
    Ok(out)
}

/// Longest run, in jobs per replication, that confirms an operating point
/// of `qsim solve`.
pub const CONFIRM_JOBS: u64 = 20_000;

/// A run stays in an operating point of `qsim solve` when each of its
/// replications' system throughput is within this share of the point's
/// (and nearer it than any other point).
pub const CONFIRM_TOLERANCE: f64 = 0.2;

/// `qsim solve`'s operating points after their runs, and the verdict.
#[derive(Debug, Default)]
pub struct SolveVerdict {
    /// The one verdict (simulated from both ends), where it applies.
    pub verdict: Option<Verdict>,
    /// The exact operating points a run started there stays in (two or
    /// more), `None` otherwise.
    pub confirmed: Option<qsim_theory::closed::Bistability>,
    /// Why each exact operating point that is not listed was dropped.
    pub dropped: Vec<String>,
}

/// Runs `network` from `jobs` jobs at `station` (the rest thinking) under
/// a short `config` (two replications of at most [`CONFIRM_JOBS`] jobs).
fn run_from(
    network: &Network,
    config: &RunConfig,
    station: usize,
    jobs: u32,
) -> Result<RunResults, RunError> {
    let mut spec = network.spec().clone();
    spec.initial = qsim_kernel::InitialState::Placed(vec![qsim_kernel::Placement {
        class: 0,
        station,
        jobs,
    }]);
    // The same routing policies: the start moved, not the balancer.
    let net = Network::new(spec)
        .and_then(|n| n.with_policies(network.policies().to_vec()))
        .map_err(|e| RunError::Config(e.to_string()))?;
    let config = RunConfig {
        replications: 2,
        precision: None,
        trace: None,
        stop: match config.stop {
            Stop::Jobs(n) => Stop::Jobs(n.min(CONFIRM_JOBS)),
            s => s,
        },
        ..config.clone()
    };
    qsim_kernel::run(&net, &config)
}

/// `qsim solve`'s verdict: the exact operating points confirmed by a short
/// run started at each (its replications' throughputs must stay within
/// [`CONFIRM_TOLERANCE`] of that point's, and nearer it than any other's), and the one verdict of
/// [`qsim_kernel::bistable::decide`] from `first`, a run of the model as
/// given.
pub fn solve_verdict(
    network: &Network,
    config: &RunConfig,
    exact: Option<&qsim_theory::closed::Bistability>,
    first: &RunResults,
) -> Result<SolveVerdict> {
    let verdict = qsim_kernel::bistable::decide(network, config, first, None)?;
    let mut out = SolveVerdict {
        verdict,
        ..SolveVerdict::default()
    };
    let Some(b) = exact else {
        return Ok(out);
    };
    let Some(station) = network
        .spec()
        .stations
        .iter()
        .position(|s| s.name == b.station)
    else {
        return Ok(out);
    };
    let population = match network.spec().classes.first().map(|c| &c.workload) {
        Some(qsim_kernel::Workload::Closed { population, .. }) => *population,
        _ => return Ok(out),
    };
    let nearest = |x: f64| {
        b.operating_points
            .iter()
            .enumerate()
            .min_by(|(_, p), (_, q)| {
                (x / p.throughput_per_s)
                    .ln()
                    .abs()
                    .total_cmp(&(x / q.throughput_per_s).ln().abs())
            })
            .map(|(i, _)| i)
    };
    let mut kept = Vec::new();
    for (i, p) in b.operating_points.iter().enumerate() {
        let jobs = (p.jobs_at_station.round() as u32).min(population);
        let r = run_from(network, config, station, jobs)?;
        let xs: Vec<f64> = r
            .replication_results
            .iter()
            .map(|r| r.system.throughput_per_s)
            .collect();
        let near = |x: f64| (x / p.throughput_per_s - 1.0).abs() <= CONFIRM_TOLERANCE;
        if xs.iter().all(|&x| nearest(x) == Some(i) && near(x)) {
            kept.push(p.clone());
        } else {
            out.dropped.push(format!(
                "the exact analysis of {} finds an operating point of {:.4} /s with {:.1} jobs there, but runs started with {jobs} jobs there leave it ({} /s per replication): not listed",
                b.station,
                p.throughput_per_s,
                p.jobs_at_station,
                xs.iter()
                    .map(|x| format!("{x:.4}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    if kept.len() >= 2 {
        out.confirmed = Some(qsim_theory::closed::Bistability {
            station: b.station.clone(),
            operating_points: kept,
        });
    } else {
        for p in kept {
            out.dropped.push(format!(
                "the exact analysis of {} finds an operating point of {:.4} /s with {:.1} jobs there, which a run started there stays in, but no other that a run stays in",
                b.station, p.throughput_per_s, p.jobs_at_station
            ));
        }
    }
    Ok(out)
}
