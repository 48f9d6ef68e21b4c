//! The per-phase figures and the recovery figures of a run with a trigger
//! (a load schedule), in the three forms of a run's output: a table
//! section, a JSON value and CSV rows (see `qsim_kernel::recovery`).

use crate::csv_out::{CsvRows, num};
use crate::table::{pct, pm_dur};
use qsim_kernel::Estimate;
use qsim_kernel::names::{MEAN_JOBS, RESPONSE_TIME_S, THROUGHPUT_PER_S, UTILIZATION};
use qsim_kernel::number::mean_ci;
use qsim_kernel::recovery::{PhaseFigures, Recovery, RecoveryFigure};
use serde_json::{Value, json};
use std::fmt::Write;

/// CSV `metric` of the time from the trigger's start to the collapse.
pub const TIME_TO_COLLAPSE_S: &str = "time_to_collapse_s";
/// CSV `metric` of the time from the trigger's end to the recovery.
pub const TIME_TO_RECOVER_S: &str = "time_to_recover_s";
/// CSV `metric` of the fraction of collapsed replications that recovered.
pub const RECOVERED_FRACTION: &str = "recovered_fraction";

/// CSV `metric` of the low end of its 95% (Wilson) interval.
pub const RECOVERED_FRACTION_LOW: &str = "recovered_fraction_low";
/// CSV `metric` of the high end of its 95% (Wilson) interval.
pub const RECOVERED_FRACTION_HIGH: &str = "recovered_fraction_high";

/// What a run with a trigger adds to its report.
#[derive(Clone, Debug)]
pub struct Transient<'a> {
    /// The phases with measured time.
    pub phases: &'a [PhaseFigures],
    /// The recovery figures, or why there are none.
    pub recovery: &'a Result<Recovery, String>,
    /// Station names, in spec order.
    pub stations: &'a [String],
}

fn figure_text(f: &RecoveryFigure) -> String {
    match f {
        RecoveryFigure::Estimate(e) => pm_dur(e),
        RecoveryFigure::Refused { reason, at_least_s } => match at_least_s {
            Some(b) => format!("n/a ({reason}; the mean is at least {b:.3} s)"),
            None => format!("n/a ({reason})"),
        },
    }
}

impl Transient<'_> {
    /// The table section.
    pub fn table(&self) -> String {
        let mut out = String::from(
            "\nphases (a schedule changes the run: figures before, during and after)\n",
        );
        let mut rows = vec![vec![
            "phase".to_string(),
            "from s".into(),
            "to s".into(),
            "throughput /s".into(),
            "response".into(),
        ]];
        for p in self.phases {
            rows.push(vec![
                p.phase.name().into(),
                format!("{}", p.start_s),
                format!("{}", p.end_s),
                mean_ci(p.throughput_per_s.mean, p.throughput_per_s.ci95),
                pm_dur(&p.response_time_s),
            ]);
        }
        crate::table::columns(&mut out, &rows);
        let mut rows = vec![vec![
            "station".to_string(),
            "phase".into(),
            "mean jobs".into(),
            "utilization".into(),
        ]];
        for (s, name) in self.stations.iter().enumerate() {
            for p in self.phases {
                rows.push(vec![
                    name.clone(),
                    p.phase.name().into(),
                    mean_ci(p.mean_jobs[s].mean, p.mean_jobs[s].ci95),
                    pct(&p.utilization[s]),
                ]);
            }
        }
        crate::table::columns(&mut out, &rows);
        match self.recovery {
            Err(why) => {
                let _ = writeln!(out, "\nrecovery: n/a ({why})");
            }
            Ok(r) => {
                let _ = writeln!(
                    out,
                    "\nrecovery (system {} against {:.0}% of its level before the trigger; times to within {:.3} s)",
                    r.metric.name(),
                    100.0 * r.fraction,
                    r.resolution_s
                );
                let _ = writeln!(
                    out,
                    "  collapsed          {} of {} replications",
                    r.collapsed, r.replications
                );
                let _ = writeln!(
                    out,
                    "  time to collapse   {}",
                    figure_text(&r.time_to_collapse_s)
                );
                let _ = writeln!(
                    out,
                    "  time to recover    {}",
                    figure_text(&r.time_to_recover_s)
                );
                match r.recovered_fraction {
                    Some((p, lo, hi)) => {
                        let _ = writeln!(
                            out,
                            "  recovered          {} of {} collapsed: {:.0}% (95% interval {:.0}% to {:.0}%)",
                            r.recovered,
                            r.collapsed,
                            100.0 * p,
                            100.0 * lo,
                            100.0 * hi
                        );
                    }
                    None => {
                        let _ =
                            writeln!(out, "  recovered          n/a (no replication collapsed)");
                    }
                }
            }
        }
        out
    }

    /// The JSON value (`phases` and `recovery` of the run's object).
    pub fn json(&self) -> (Value, Value) {
        let est = |e: &Estimate| {
            let n = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
            json!({"mean": n(e.mean), "ci95": n(e.ci95)})
        };
        let phases: Vec<Value> = self
            .phases
            .iter()
            .map(|p| {
                let stations: Vec<Value> = self
                    .stations
                    .iter()
                    .enumerate()
                    .map(|(s, name)| {
                        json!({
                            "name": name,
                            MEAN_JOBS: est(&p.mean_jobs[s]),
                            THROUGHPUT_PER_S: est(&p.station_throughput_per_s[s]),
                            UTILIZATION: est(&p.utilization[s]),
                        })
                    })
                    .collect();
                json!({
                    "phase": p.phase.name(),
                    "start_s": p.start_s,
                    "end_s": p.end_s,
                    "replications": p.replications,
                    "system": {
                        THROUGHPUT_PER_S: est(&p.throughput_per_s),
                        RESPONSE_TIME_S: est(&p.response_time_s),
                    },
                    "stations": stations,
                })
            })
            .collect();
        let fig = |f: &RecoveryFigure| match f {
            RecoveryFigure::Estimate(e) => est(e),
            RecoveryFigure::Refused { reason, at_least_s } => {
                json!({"mean": Value::Null, "ci95": Value::Null, "error": reason, "at_least_s": at_least_s})
            }
        };
        let recovery = match self.recovery {
            Err(why) => json!({"error": why}),
            Ok(r) => json!({
                "metric": r.metric.name(),
                "fraction": r.fraction,
                "trigger_start_s": r.window.start_s,
                "trigger_end_s": r.window.end_s,
                "replications": r.replications,
                "collapsed": r.collapsed,
                "recovered": r.recovered,
                "resolution_s": r.resolution_s,
                TIME_TO_COLLAPSE_S: fig(&r.time_to_collapse_s),
                TIME_TO_RECOVER_S: fig(&r.time_to_recover_s),
                RECOVERED_FRACTION: r.recovered_fraction.map(|(p, lo, hi)| json!({"mean": p, "low": lo, "high": hi})),
            }),
        };
        (Value::Array(phases), recovery)
    }

    /// CSV rows in the run CSV's columns (`scope,name,metric,mean,ci95,error`):
    /// scope `phases.PHASE.system` and `phases.PHASE.stations`, and scope
    /// `recovery`.
    pub fn csv(&self) -> String {
        let mut out = CsvRows::new();
        let mut row = |scope: &str, name: &str, metric: &str, e: &Estimate, error: &str| {
            out.row([scope, name, metric, &num(e.mean), &num(e.ci95), error]);
        };
        for p in self.phases {
            let sys = format!("phases.{}.system", p.phase.name());
            row(&sys, "", THROUGHPUT_PER_S, &p.throughput_per_s, "");
            row(&sys, "", RESPONSE_TIME_S, &p.response_time_s, "");
            let st = format!("phases.{}.stations", p.phase.name());
            for (s, name) in self.stations.iter().enumerate() {
                row(&st, name, MEAN_JOBS, &p.mean_jobs[s], "");
                row(
                    &st,
                    name,
                    THROUGHPUT_PER_S,
                    &p.station_throughput_per_s[s],
                    "",
                );
                row(&st, name, UTILIZATION, &p.utilization[s], "");
            }
        }
        let none = Estimate {
            mean: f64::NAN,
            ci95: f64::NAN,
        };
        match self.recovery {
            Err(why) => row("recovery", "", TIME_TO_RECOVER_S, &none, why),
            Ok(r) => {
                let name = r.metric.name();
                for (metric, f) in [
                    (TIME_TO_COLLAPSE_S, &r.time_to_collapse_s),
                    (TIME_TO_RECOVER_S, &r.time_to_recover_s),
                ] {
                    match f {
                        RecoveryFigure::Estimate(e) => row("recovery", name, metric, e, ""),
                        RecoveryFigure::Refused { reason, at_least_s } => {
                            let why = match at_least_s {
                                Some(b) => format!("{reason}; the mean is at least {b} s"),
                                None => reason.clone(),
                            };
                            row("recovery", name, metric, &none, &why)
                        }
                    }
                }
                match r.recovered_fraction {
                    Some((p, lo, hi)) => {
                        // The Wilson interval is not symmetric: its ends
                        // as rows of their own.
                        let one = |x: f64| Estimate {
                            mean: x,
                            ci95: f64::NAN,
                        };
                        row("recovery", name, RECOVERED_FRACTION, &one(p), "");
                        row("recovery", name, RECOVERED_FRACTION_LOW, &one(lo), "");
                        row("recovery", name, RECOVERED_FRACTION_HIGH, &one(hi), "");
                    }
                    None => row(
                        "recovery",
                        name,
                        RECOVERED_FRACTION,
                        &none,
                        "no replication collapsed",
                    ),
                }
            }
        }
        out.finish()
    }
}
