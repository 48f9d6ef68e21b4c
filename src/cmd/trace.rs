//! `qsim run --trace FILE.csv [--trace-interval S] [--plot FILE]`: the
//! figures of each interval of each replication, as a tidy long CSV and a
//! chart.

use super::UsageError;
use anyhow::{Context, Result};
use clap::Args;
use qsim_kernel::names::{MEAN_JOBS, RESPONSE_TIME_S, THROUGHPUT_PER_S, UTILIZATION};
use qsim_kernel::trace::{Trace, TracePlan};
use qsim_kernel::{
    MetricScope, Network, RunConfig, RunResults, StationKind, Stop, Warmup, Workload,
};
use std::path::{Path, PathBuf};

/// Intervals a trace aims at when no interval is given.
const DEFAULT_INTERVALS: f64 = 200.0;
/// Most intervals kept per phase with the default interval (merged
/// pairwise beyond, so a poor guess of the run's length still gives
/// 200 to 400 intervals).
const DEFAULT_MAX: u32 = 400;
/// Most intervals kept per phase with an explicit `--trace-interval`.
const EXPLICIT_MAX: u32 = 100_000;
/// The most bytes a trace file may hold: past what a chart or a
/// spreadsheet reads (a 441 MB trace of M/M/1 was a typo in the interval).
const MAX_TRACE_FILE_BYTES: u64 = 64 << 20;
/// Bytes of one trace CSV line at most (index, interval ends, phase,
/// scope, a quoted station name, metric and a 17-digit value).
const CSV_LINE_BYTES: u64 = 100;

/// The CSV header of a trace.
pub const TRACE_HEADER: &str = "replication,start_s,end_s,phase,scope,name,metric,value,ci95";

/// The `replication` of the rows that give the mean over the replications
/// (with `ci95`, the half-width of its 95% interval).
pub const ENSEMBLE_REPLICATION: &str = "mean";

/// Trace options of `qsim run`.
#[derive(Args, Debug, Clone)]
pub struct TraceArgs {
    /// Record the system over time: per interval and replication, each
    /// station's mean_jobs, throughput_per_s and utilization, and the
    /// system's throughput_per_s and response_time_s, as a long CSV.
    #[arg(long, value_name = "FILE.csv")]
    pub trace: Option<PathBuf>,
    /// Length of a trace interval in seconds (default: about 1/200 of the
    /// run, warm-up included).
    #[arg(long, value_name = "SECONDS", requires = "trace")]
    pub trace_interval: Option<f64>,
    /// Draw the trace (system throughput and number present per station
    /// over time) to this .png or .svg file.
    #[arg(long, value_name = "FILE", requires = "trace")]
    pub plot: Option<PathBuf>,
    /// For a run with a schedule: the fraction of the system throughput
    /// before the trigger below which a replication has collapsed and at
    /// or above which it has recovered.
    #[arg(long, value_name = "FRACTION", default_value_t = qsim_kernel::recovery::DEFAULT_RECOVERY_FRACTION)]
    pub recovery_fraction: f64,
}

impl TraceArgs {
    /// Refuses trace and chart paths that cannot be written, before the run.
    pub fn check_outputs(&self, inputs: &[&Path]) -> Result<()> {
        if let Some(t) = &self.trace {
            super::check_output("--trace", t, super::Out::File, inputs)?;
        }
        if let Some(p) = &self.plot {
            super::check_output("--plot", p, super::Out::Chart, inputs)?;
        }
        Ok(())
    }

    /// Refuses trace outputs that name the model file.
    pub fn refuse_overwriting(&self, model: &Path) -> Result<()> {
        for (flag, out) in [("--trace", &self.trace), ("--plot", &self.plot)] {
            if let Some(o) = out
                && model.exists()
                && super::same_file(o, model)
            {
                return Err(UsageError(format!(
                    "{flag} {} is the model file itself; write the trace to another file",
                    o.display()
                ))
                .into());
            }
        }
        Ok(())
    }

    /// The trace plan of this run, if tracing: when asked, and always for
    /// a run with a schedule (its phases and recovery are read from it).
    pub fn plan(&self, network: &Network, config: &RunConfig) -> Result<Option<TracePlan>> {
        if !(self.recovery_fraction > 0.0 && self.recovery_fraction < 1.0) {
            return Err(UsageError(format!(
                "--recovery-fraction must be between 0 and 1 (exclusive), found {}",
                self.recovery_fraction
            ))
            .into());
        }
        if self.trace.is_none() && !config.has_schedule() {
            return Ok(None);
        }
        if let Some(dt) = self.trace_interval {
            if !(dt.is_finite() && dt > 0.0) {
                return Err(UsageError(format!(
                    "--trace-interval must be a positive number of seconds, found {dt}"
                ))
                .into());
            }
            return Ok(Some(TracePlan {
                interval_s: dt,
                max_intervals: EXPLICIT_MAX,
            }));
        }
        Ok(Some(TracePlan {
            interval_s: round_down(run_length_guess(network, config) / DEFAULT_INTERVALS),
            max_intervals: DEFAULT_MAX,
        }))
    }

    /// Refuses a trace that would not fit in `max_memory_bytes` (every
    /// replication's trace is kept until the run ends), saying what to
    /// change.
    pub fn check_memory(
        &self,
        network: &Network,
        config: &RunConfig,
        max_memory_bytes: u64,
    ) -> Result<()> {
        let per = qsim_kernel::budget::trace_bytes(config, network.spec().stations.len());
        let reps = config.precision.map_or(config.replications, |p| {
            p.max_replications.max(config.replications)
        });
        let total = per.saturating_mul(u64::from(reps));
        // The CSV is written from a text built in memory: its size bounds
        // the file and counts against the memory limit too.
        let stations = network.spec().stations.len();
        let per_interval = (stations * std::mem::size_of::<qsim_kernel::trace::TraceStation>()
            + std::mem::size_of::<qsim_kernel::trace::TraceInterval>())
            as u64;
        // Intervals at most what the memory estimate allows, and at most
        // the run's guessed length over the interval (the guess errs short
        // for a closed model, so a refusal is certain).
        let guessed = config.trace.map_or(0.0, |plan| {
            run_length_guess(network, config) / plan.interval_s + 3.0
        });
        let intervals = ((per / per_interval.max(1)) as f64).min(guessed.max(0.0)) as u64;
        let lines = intervals.saturating_mul(2 + 4 * stations as u64);
        let text = lines
            .saturating_mul(CSV_LINE_BYTES)
            .saturating_mul(u64::from(reps));
        if text > MAX_TRACE_FILE_BYTES {
            return Err(UsageError(format!(
                "--trace: the trace file would be about {} ({} lines per replication × {reps}), more than the {} a trace file may be; raise --trace-interval or run fewer replications or a shorter run",
                qsim_kernel::budget::human_bytes(text),
                lines,
                qsim_kernel::budget::human_bytes(MAX_TRACE_FILE_BYTES)
            ))
            .into());
        }
        let total = total.saturating_add(text);
        if total > max_memory_bytes {
            return Err(UsageError(format!(
                "--trace: the traces would hold about {} ({} per replication × {reps}), more than the limit of {}; raise --trace-interval, run fewer replications or raise --max-memory",
                qsim_kernel::budget::human_bytes(total),
                qsim_kernel::budget::human_bytes(per),
                qsim_kernel::budget::human_bytes(max_memory_bytes)
            ))
            .into());
        }
        Ok(())
    }

    /// Writes the CSV and the chart of a traced run; returns warnings.
    pub fn write(
        &self,
        network: &Network,
        config: &RunConfig,
        results: &RunResults,
        model_name: &str,
    ) -> Result<Vec<String>> {
        let Some(path) = &self.trace else {
            return Ok(Vec::new());
        };
        let traces: Vec<&Trace> = results
            .replication_results
            .iter()
            .filter_map(|r| r.trace.as_deref())
            .collect();
        std::fs::write(path, trace_csv(network, results))
            .with_context(|| format!("writing {}", path.display()))?;
        let mut warnings = Vec::new();
        let ens = qsim_kernel::ensemble::ensemble(&traces);
        if ens.left_out > 0 {
            warnings.push(format!(
                "the trace's mean over the replications covers the {} intervals every replication has; {} later intervals of some replications (a run stopped by a count of jobs ends each at its own time) are only in their own rows",
                ens.intervals.len(),
                ens.left_out
            ));
        }
        if let (Some(asked), Some(t)) = (self.trace_interval, traces.iter().find(|t| t.widened)) {
            warnings.push(format!(
                "the trace interval was widened from {asked} s to {} s to keep at most {EXPLICIT_MAX} intervals per phase",
                t.interval_s
            ));
        }
        if let Some(plot) = &self.plot {
            let names: Vec<String> = network
                .spec()
                .stations
                .iter()
                .map(|s| s.name.clone())
                .collect();
            let title = format!("{model_name}: the system over time");
            let trigger =
                qsim_kernel::recovery::run_trigger_window(config).map(|w| (w.start_s, w.end_s));
            qsim_report::trace_chart::trace_chart(plot, &title, &traces, &names, trigger)
                .with_context(|| format!("drawing {}", plot.display()))?;
        }
        Ok(warnings)
    }
}

/// The largest 1, 2, 2.5 or 5 times a power of ten at most `x`: interval
/// ends that read well (0.25 s rather than 0.3 s, whose multiples print as
/// 18.299999999999997).
fn round_down(x: f64) -> f64 {
    let p = 10f64.powf(x.log10().floor());
    [5.0, 2.5, 2.0, 1.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&v| v <= x * (1.0 + 1e-12))
        .unwrap_or(p)
}

/// A guess of a replication's simulated length (warm-up included), for
/// the default interval: exact for timed runs; for runs counted in jobs,
/// the jobs over a throughput estimate (the closed bound, or the open
/// arrival rates), which the trace's merging corrects when it is off.
fn run_length_guess(network: &Network, config: &RunConfig) -> f64 {
    let warm_time = match config.effective_warmup() {
        Warmup::Time(t) => t,
        _ => 0.0,
    };
    let jobs = |n: u64| {
        let warm = match config.effective_warmup() {
            Warmup::Jobs(w) => w as f64,
            _ => 0.0,
        };
        let spec = network.spec();
        let mut x = 0.0;
        for (c, class) in spec.classes.iter().enumerate() {
            x += match &class.workload {
                Workload::Open { interarrival } => 1.0 / interarrival.mean().max(1e-300),
                Workload::Closed { population, .. } => {
                    qsim_theory::bounds::network_bounds(network, c, *population)
                        .ok()
                        .flatten()
                        .map_or(0.0, |b| b.throughput_upper_per_s)
                }
            };
        }
        let x = if x.is_finite() && x > 0.0 { x } else { 1.0 };
        (warm + n as f64) / x
    };
    let t = match config.stop {
        Stop::Time(t) => warm_time + t,
        Stop::Jobs(n) => warm_time + jobs(n),
    };
    if t.is_finite() && t > 0.0 { t } else { 1.0 }
}

/// The long CSV of every replication's trace: one row per interval, scope,
/// name and metric; `phase` is `warmup` or `measured`; a response time is
/// left empty for an interval in which no interaction finished (it does
/// not exist), and utilization is not written for stations without
/// servers (delay, fork, join), as in the run's own output. After the
/// replications' rows, rows with `replication` = `mean` give each figure's
/// mean over the replications in the intervals they share, with `ci95` the
/// half-width of its 95% interval (empty with one replication; a mean
/// response time is over the replications in which some interaction
/// finished).
pub fn trace_csv(network: &Network, results: &RunResults) -> String {
    let spec = network.spec();
    let system = MetricScope::System.key();
    let stations = MetricScope::Station.key();
    let mut out = qsim_report::CsvRows::new();
    out.line(TRACE_HEADER);
    let has_utilization = |k: &StationKind| k.takes_service() && !k.is_delay();
    let head = |rep: &str, start: f64, end: f64, measured: bool| {
        let phase = if measured { "measured" } else { "warmup" };
        [
            rep.to_string(),
            boundary(start),
            boundary(end),
            phase.to_string(),
        ]
    };
    // A row: the interval's head, then scope, name, metric and figures.
    let mut row =
        |head: &[String; 4], scope: &str, name: &str, metric: &str, figures: [String; 2]| {
            let fields = head.iter().map(String::as_str);
            out.row(fields.chain([scope, name, metric, &figures[0], &figures[1]]));
        };
    let traces: Vec<&Trace> = results
        .replication_results
        .iter()
        .filter_map(|r| r.trace.as_deref())
        .collect();
    for rep in &results.replication_results {
        let Some(t) = rep.trace.as_deref() else {
            continue;
        };
        for iv in &t.intervals {
            let head = head(&rep.index.to_string(), iv.start_s, iv.end_s, iv.measured);
            let one = |x: f64| [x.to_string(), String::new()];
            row(
                &head,
                system,
                "",
                THROUGHPUT_PER_S,
                one(iv.throughput_per_s()),
            );
            let r = iv
                .response_time_s()
                .map_or(String::new(), |r| r.to_string());
            row(&head, system, "", RESPONSE_TIME_S, [r, String::new()]);
            for (s, st) in spec.stations.iter().enumerate() {
                let name = &st.name;
                row(&head, stations, name, MEAN_JOBS, one(iv.mean_jobs(s)));
                row(
                    &head,
                    stations,
                    name,
                    THROUGHPUT_PER_S,
                    one(iv.station_throughput_per_s(s)),
                );
                if has_utilization(&st.kind) {
                    row(&head, stations, name, UTILIZATION, one(iv.utilization(s)));
                }
            }
        }
    }
    let num = |x: f64| {
        if x.is_finite() {
            x.to_string()
        } else {
            String::new()
        }
    };
    let est = |e: &qsim_kernel::Estimate| [num(e.mean), num(e.ci95)];
    for iv in &qsim_kernel::ensemble::ensemble(&traces).intervals {
        let head = head(ENSEMBLE_REPLICATION, iv.start_s, iv.end_s, iv.measured);
        row(
            &head,
            system,
            "",
            THROUGHPUT_PER_S,
            est(&iv.throughput_per_s),
        );
        let r = iv
            .response_time_s
            .as_ref()
            .map_or([String::new(), String::new()], est);
        row(&head, system, "", RESPONSE_TIME_S, r);
        for (s, st) in spec.stations.iter().enumerate() {
            let name = &st.name;
            row(&head, stations, name, MEAN_JOBS, est(&iv.mean_jobs[s]));
            row(
                &head,
                stations,
                name,
                THROUGHPUT_PER_S,
                est(&iv.station_throughput_per_s[s]),
            );
            if has_utilization(&st.kind) {
                row(&head, stations, name, UTILIZATION, est(&iv.utilization[s]));
            }
        }
    }
    out.finish()
}

/// An interval boundary, a multiple of the interval computed in floating
/// point, to 12 significant digits: 0.15, not 0.15000000000000002 (the
/// rounding error of k·dt, not a time the run distinguishes).
fn boundary(t: f64) -> String {
    format!("{t:.11e}")
        .parse::<f64>()
        .map_or_else(|_| t.to_string(), |x| x.to_string())
}
