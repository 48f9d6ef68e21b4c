//! `qsim whatif`: which change pays, at which load (common random numbers).

use super::UsageError;
use super::progress::Phase;
use super::run::{GuardArgs, ModelArgs, RunOptions, parse_overrides};
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use qsim_kernel::{RunError, Stop};
use qsim_model::Override;
use qsim_sweep::{
    Change, Difference, Grid, ModelFile, RunSettings, VarySpec, WhatIfError, WhatIfOptions,
    WhatIfReport, what_if,
};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Output formats of `qsim whatif`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum WhatIfFormat {
    /// Aligned text for people.
    Table,
    /// One JSON object: the baseline per point and each change's
    /// differences with paired and unpaired intervals.
    Json,
    /// Long-format CSV: change,point,metric,baseline,baseline_ci95,difference,ci95,unpaired_ci95,relative,significant,baseline_bistable,bistable,baseline_state,state (bistable and state empty where the two-ended check does not apply; state is the start state the figures belong to, with its mode where there are two).
    Csv,
}

/// Arguments of `qsim whatif`.
#[derive(Args, Debug)]
pub struct WhatIfArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// Speed stations up by this much: `25%` (1.25 times as fast) or `x1.25`;
    /// each station of --stations is one change.
    #[arg(long, value_name = "AMOUNT", allow_hyphen_values = true)]
    speedup: Option<String>,
    /// The stations to speed up, comma-separated, or `all` (default: all
    /// that do work).
    #[arg(long, value_name = "NAMES", requires = "speedup")]
    stations: Option<String>,
    /// A change given as an override, e.g. `stations.cpu.service.mean=*0.75`;
    /// repeat for more changes (each compared on its own).
    #[arg(long = "change", value_name = "PATH=VALUE")]
    change: Vec<String>,
    /// Operating points: a key path and its values, e.g.
    /// `workload.population=20,150` (a list or range as in sweep --vary;
    /// repeat for a grid). Changes are ranked at the last point: list
    /// points from low to high load.
    #[arg(long = "at", value_name = "PATH=SPEC")]
    at: Vec<String>,
    #[command(flatten)]
    options: RunOptions,
    #[command(flatten)]
    guards: GuardArgs,
    /// Skip the second run, from the other end, of each model with a
    /// falling speed curve at each point (the check that says when a
    /// figure depends on the state the run starts in).
    #[arg(long)]
    no_bistability_check: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = WhatIfFormat::Table)]
    format: WhatIfFormat,
    /// Write the output to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Parses `--speedup`: `25%` or `x1.25` into a factor (> 0).
fn speedup_factor(text: &str) -> Result<f64> {
    let t = text.trim();
    let f = if let Some(p) = t.strip_suffix('%') {
        p.trim().parse::<f64>().ok().map(|p| 1.0 + p / 100.0)
    } else if let Some(x) = t.strip_prefix('x') {
        x.trim().parse::<f64>().ok()
    } else {
        None
    };
    match f {
        // Factor 1 compares the model with itself: every difference is 0.
        Some(1.0) => Err(UsageError(format!(
            "--speedup {text} is a factor of 1, which changes nothing\n  hint: give a speed-up such as 25% (x1.25) or a slow-down such as -20% (x0.8)"
        ))
        .into()),
        // Beyond a thousandfold a service time vanishes or dominates
        // everything: no what-if question needs that, and a typo is likelier.
        Some(f) if (1e-3..=1e3).contains(&f) => Ok(f),
        Some(f) if f.is_finite() && f <= 0.0 => Err(UsageError(format!(
            "--speedup {text} is a factor of {f}: the station would never finish; a slow-down is between 0% and -99.9%"
        ))
        .into()),
        Some(f) if f.is_finite() && f > 0.0 => Err(UsageError(format!(
            "--speedup {text} is a factor of {f:e}, beyond the range x0.001 to x1000 a what-if can mean"
        ))
        .into()),
        _ => Err(UsageError(format!(
            "--speedup expects a percentage such as 25% (1.25 times as fast) or a factor such as x1.25, found `{text}`"
        ))
        .into()),
    }
}

/// Runs `qsim whatif`.
pub fn whatif(args: &WhatIfArgs) -> Result<ExitCode> {
    if let Some(out) = &args.output {
        super::check_output("--output", out, super::Out::File, &[&args.model.model])?;
    }
    args.options.validate()?;
    let base = parse_overrides(&args.model.set)?;
    // The model as given: station names and a check that it loads.
    let model = args.model.load()?;
    let mut changes = Vec::new();
    if let Some(s) = &args.speedup {
        let factor = speedup_factor(s)?;
        let spec = model.network.spec();
        let names: Vec<String> = match args.stations.as_deref().map(str::trim) {
            None | Some("all") => spec
                .stations
                .iter()
                .filter(|s| s.kind.takes_service())
                .map(|s| s.name.clone())
                .collect(),
            Some(list) => {
                let names: Vec<String> = list.split(',').map(|n| n.trim().to_string()).collect();
                if let Some((k, n)) = names
                    .iter()
                    .enumerate()
                    .find(|(k, n)| names[..*k].contains(n))
                {
                    return Err(UsageError(format!(
                        "--stations names {n} twice (items {} and {}): each station is one change",
                        names.iter().position(|m| m == n).unwrap_or(0) + 1,
                        k + 1
                    ))
                    .into());
                }
                names
            }
        };
        changes.extend(
            names
                .into_iter()
                .map(|station| Change::SpeedUp { station, factor }),
        );
    }
    for c in &args.change {
        let ov = Override::parse_as(c, "--change").map_err(|e| UsageError(e.to_string()))?;
        changes.push(Change::Set(vec![ov]));
    }
    if changes.is_empty() {
        return Err(UsageError(
            "nothing to compare: give --speedup AMOUNT (with --stations) or --change PATH=VALUE"
                .into(),
        )
        .into());
    }
    let (at_specs, points) = operating_points(&args.at)?;
    let r = &args.options;
    r.validate()?;
    let stop = match (r.jobs, r.time) {
        (Some(j), _) => Some(Stop::Jobs(j)),
        (None, Some(t)) => Some(Stop::Time(t)),
        (None, None) => None,
    };
    let options = WhatIfOptions {
        threads: r.threads.unwrap_or(0),
        settings: RunSettings {
            seed: r.seed,
            replications: r.replications,
            stop,
        },
        budget: Some(args.guards.budget()),
        control: Some(crate::interrupt_control()),
        no_bistability_check: args.no_bistability_check,
    };
    let source = ModelFile::read(&args.model.model).map_err(|e| UsageError(e.to_string()))?;
    // The number of replications (precision rounds) and each model's stop
    // are known only once the models are loaded: a spinner counts jobs.
    let control = crate::interrupt_control();
    let outcome = super::progress::with_progress(&control, Phase::WhatIf, None, || {
        what_if(&source, &base, &changes, &points, &options)
    });
    let report = match outcome {
        Ok(r) => r,
        Err(WhatIfError::Run(RunError::Cancelled)) => {
            return Err(super::run::Interrupted("interrupted: nothing written".into()).into());
        }
        Err(WhatIfError::Run(e)) => return Err(e.into()),
        Err(WhatIfError::Budget {
            point,
            change,
            error,
        }) => {
            // Most specific first: the change's own overrides, then the
            // operating point's, then --set and the model file.
            let mut setters: Vec<(String, String)> = Vec::new();
            if let Some(Change::Set(ov)) = changes
                .iter()
                .find(|c| change.as_deref() == Some(c.label().as_str()))
            {
                setters.extend(ov.iter().map(|o| (o.path.clone(), format!("--change {o}"))));
            }
            setters.extend(
                at_specs
                    .iter()
                    .map(|s| (s.path().to_string(), format!("--at {}", s.source()))),
            );
            let context = qsim_sweep::whatif::budget_context(&point, change.as_deref());
            return Err(UsageError(super::run::blame_budget(
                &error,
                &args.model,
                Some(&args.options),
                &setters,
                &context,
            ))
            .into());
        }
        Err(e) => {
            // An operating point's override is named as the whole --at
            // that made it, as a sweep names its --vary.
            let mut text = e.to_string();
            for point in &points {
                for ov in point {
                    if let Some(spec) = at_specs.iter().find(|s| s.path() == ov.path) {
                        let label = format!("--at {}", spec.source());
                        text = text
                            .replace(
                                &format!("(set by {})", ov.label()),
                                &format!("(set by {label})"),
                            )
                            .replace(&format!("{}: ", ov.label()), &format!("{label}: "));
                    }
                }
            }
            return Err(UsageError(text).into());
        }
    };
    let text = match args.format {
        WhatIfFormat::Table => table(&args.model.model.display().to_string(), &report),
        WhatIfFormat::Json => serde_json::to_string_pretty(&report)? + "\n",
        WhatIfFormat::Csv => csv(&report),
    };
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => std::io::stdout().write_all(text.as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The `--at` specs and their operating points (their grid, first
/// outermost).
fn operating_points(at: &[String]) -> Result<(Vec<VarySpec>, Vec<Vec<Override>>)> {
    if at.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let specs = at
        .iter()
        .map(|s| VarySpec::parse(s).map_err(|e| UsageError(format!("--at: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    let grid = Grid::new(specs.clone()).map_err(|e| UsageError(format!("--at: {e}")))?;
    let points = (0..grid.len())
        .map(|k| {
            grid.overrides(k)
                .into_iter()
                .map(|(path, value)| Override::new(path, value, "--at"))
                .collect()
        })
        .collect();
    Ok((specs, points))
}

/// With a sign and `decimals` decimals.
fn signed(x: f64, decimals: usize) -> String {
    if x.is_finite() {
        format!("{x:+.decimals$}")
    } else {
        format!("{x}")
    }
}

/// Decimals that show about four significant digits of `scale`.
pub(crate) fn decimals(scale: f64) -> usize {
    let a = scale.abs();
    if !(a.is_finite() && a > 0.0) {
        return 3;
    }
    (3 - a.log10().floor() as i32).clamp(0, 9) as usize
}

/// `+12.3 ± 0.4 (+5.6%)` or `+1.2 ± 3.4 no significant change`; `k`
/// converts seconds to the shown unit.
fn diff_cell(d: &Difference, k: f64) -> String {
    // Three significant digits of the difference or its interval, whichever
    // is larger, so that a small difference is not rounded to zero.
    let size = if d.ci95.is_finite() {
        d.mean.abs().max(d.ci95)
    } else {
        d.mean.abs()
    };
    let dec = decimals(size * k).saturating_sub(1);
    let ci = if d.ci95.is_finite() {
        format!("{:.dec$}", d.ci95 * k)
    } else {
        "n/a".into()
    };
    let verdict = match d.significant {
        Some(true) => {
            // A significant change is never shown as 0.0%.
            let pct = d.relative * 100.0;
            let dec = match pct.abs() {
                a if a >= 1.0 => 1,
                a if a >= 0.1 => 2,
                _ => 3,
            };
            format!("({pct:+.dec$}%)")
        }
        Some(false) => "no significant change".into(),
        None => "(no interval: one replication)".into(),
    };
    format!("{} ± {ci} {verdict}", signed(d.mean * k, dec))
}

fn table(model: &str, report: &WhatIfReport) -> String {
    let mut out = String::new();
    let reps = report.baseline.first().map_or(0, |b| b.replications);
    let n = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    out.push_str(&format!(
        "what-if {model}: {} at {}, {} each (common random numbers)\n",
        n(report.changes.len(), "change", "changes"),
        n(report.baseline.len(), "operating point", "operating points"),
        n(reps as usize, "paired replication", "paired replications"),
    ));
    out.push_str(
        "  (Δ = changed − baseline; ± is the half-width of the paired 95% confidence interval)\n\n",
    );
    let label = |p: &str| {
        if p.is_empty() {
            "(model)".to_string()
        } else {
            p.to_string()
        }
    };
    let width = report
        .baseline
        .iter()
        .map(|b| label(&b.point).len())
        .max()
        .unwrap_or(5)
        .max(5);
    out.push_str(&format!(
        "baseline\n  {:width$}  {:>22}  {:>22}  {:>22}\n",
        "point", "throughput /s", "response ms", "p99 ms"
    ));
    for b in &report.baseline {
        let e = |m: f64, c: f64, k: f64| {
            let d = decimals(m * k);
            if c.is_finite() {
                format!("{:.d$} ± {:.d$}", m * k, c * k)
            } else {
                // One replication: no interval.
                format!("{:.d$} ± n/a", m * k)
            }
        };
        out.push_str(&format!(
            "  {:width$}  {:>22}  {:>22}  {:>22}\n",
            label(&b.point),
            e(b.throughput_per_s.mean, b.throughput_per_s.ci95, 1.0),
            e(b.response_time_s.mean, b.response_time_s.ci95, 1e3),
            e(b.response_time_p99_s.mean, b.response_time_p99_s.ci95, 1e3),
        ));
        if b.bistable == Some(true) {
            out.push_str(&format!("    state: {}\n", b.state));
        }
        for w in &b.warnings {
            out.push_str(&format!("    warning: {w}\n"));
        }
    }
    out.push_str("\nchanges, ranked by Δ throughput at the last point\n");
    for c in &report.changes {
        out.push_str(&format!(
            "\n  {}\n    {:width$}  {:>40}  {:>40}  {:>40}\n",
            c.change, "point", "Δ throughput /s", "Δ response ms", "Δ p99 ms"
        ));
        for p in &c.points {
            out.push_str(&format!(
                "    {:width$}  {:>40}  {:>40}  {:>40}\n",
                label(&p.point),
                diff_cell(&p.throughput_per_s, 1.0),
                diff_cell(&p.response_time_s, 1e3),
                diff_cell(&p.response_time_p99_s, 1e3),
            ));
            if p.bistable == Some(true) || b_bistable(report, &p.point) {
                out.push_str(&format!("      state: {}\n", p.state));
            }
            for w in &p.warnings {
                out.push_str(&format!("      warning: {w}\n"));
            }
        }
    }
    out
}

/// Whether the baseline is bistable at `point`: the difference there is
/// between two states' figures.
fn b_bistable(report: &WhatIfReport, point: &str) -> bool {
    report
        .baseline
        .iter()
        .any(|b| b.point == point && b.bistable == Some(true))
}

fn csv(report: &WhatIfReport) -> String {
    let mut out = qsim_report::CsvRows::new();
    out.line(
        "change,point,metric,baseline,baseline_ci95,difference,ci95,unpaired_ci95,relative,significant,baseline_bistable,bistable,baseline_state,state",
    );
    let opt = |v: Option<bool>| v.map_or(String::new(), |v| v.to_string());
    // A value that is not finite (no interval) is empty.
    let f = |x: f64| {
        if x.is_finite() {
            x.to_string()
        } else {
            String::new()
        }
    };
    for c in &report.changes {
        for (p, b) in c.points.iter().zip(&report.baseline) {
            for (metric, base, d) in [
                ("throughput_per_s", b.throughput_per_s, &p.throughput_per_s),
                ("response_time_s", b.response_time_s, &p.response_time_s),
                (
                    "response_time_p99_s",
                    b.response_time_p99_s,
                    &p.response_time_p99_s,
                ),
            ] {
                out.row([
                    c.change.as_str(),
                    &p.point,
                    metric,
                    &f(base.mean),
                    &f(base.ci95),
                    &f(d.mean),
                    &f(d.ci95),
                    &f(d.unpaired_ci95),
                    &f(d.relative),
                    &opt(d.significant),
                    &opt(b.bistable),
                    &opt(p.bistable),
                    &b.state,
                    &p.state,
                ]);
            }
        }
    }
    out.finish()
}
