//! `qsim sweep MODEL --vary PATH=SPEC --hysteresis`: the values up and
//! then down, each point from the previous point's final state; a table,
//! `hysteresis.json` and a chart of both branches in the output directory
//! (by default `sweep-out/<model stem>-hysteresis`, apart from the model's
//! plain sweeps, whose files it never shares a directory with unless
//! `--force` is given).

use super::UsageError;
use super::progress::{Phase, with_spinner};
use super::run::parse_overrides;
use super::sweep::{SweepArgs, SweepFormat};
use anyhow::{Context, Result};
use qsim_kernel::Stop;
use qsim_report::hysteresis_chart::{Branch, hysteresis_chart};
use qsim_sweep::output::{HYSTERESIS_FILE, MANIFEST_FILE};
use qsim_sweep::{HysteresisOptions, ModelFile, SweepError, VarySpec, run_hysteresis};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Flags of `qsim sweep` that a hysteresis run has no use for, refused
/// rather than silently ignored.
fn refuse_unused(args: &SweepArgs) -> Result<()> {
    let unused = [
        (args.report, "--report"),
        (args.limit_axis.is_some(), "--limit-axis"),
        (args.load_axis.is_some(), "--load-axis"),
        (args.no_bistability_check, "--no-bistability-check"),
    ];
    let given: Vec<&str> = unused
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, name)| *name)
        .collect();
    if given.is_empty() {
        return Ok(());
    }
    Err(UsageError(format!(
        "{} {} no use with --hysteresis, which writes {HYSTERESIS_FILE} and hysteresis.png/.svg (no knee analysis, recommended limit, report page or bistability check); drop {}",
        given.join(", "),
        if given.len() == 1 { "has" } else { "have" },
        if given.len() == 1 { "it" } else { "them" }
    ))
    .into())
}

/// The default directory: apart from the model's plain sweep.
fn default_output(model: &Path) -> PathBuf {
    let plain = super::sweep::default_output(model, None);
    let name = plain
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    plain.with_file_name(format!("{name}-hysteresis"))
}

/// Refuses a directory that holds another run's results: a plain sweep,
/// or a hysteresis run of another model or parameter (without `--force`).
fn check_directory(out: &Path, model: &Path, parameter: &str, force: bool) -> Result<()> {
    if force {
        return Ok(());
    }
    if out.join(MANIFEST_FILE).exists() {
        return Err(UsageError(format!(
            "{} holds a sweep's results; a hysteresis run there would mix two runs' files: give another --output, or --force",
            out.display()
        ))
        .into());
    }
    let Ok(text) = std::fs::read_to_string(out.join(HYSTERESIS_FILE)) else {
        return Ok(());
    };
    let saved: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let model_now = model.display().to_string();
    for (field, now) in [("model", model_now.as_str()), ("parameter", parameter)] {
        let was = saved.get(field).and_then(|v| v.as_str());
        if was != Some(now) {
            return Err(UsageError(format!(
                "{} holds the hysteresis run of another {field} ({}, now {now}); give another --output, or --force to replace it",
                out.display(),
                was.unwrap_or("unknown")
            ))
            .into());
        }
    }
    Ok(())
}

/// Runs a hysteresis sweep for `qsim sweep --hysteresis`.
pub fn sweep(args: &SweepArgs) -> Result<ExitCode> {
    if let Some(out) = &args.output {
        super::check_output("--output", out, super::Out::Dir, &[&args.model.model])?;
    }
    refuse_unused(args)?;
    let base = parse_overrides(&args.model.set)?;
    let [spec] = args.vary.as_slice() else {
        return Err(UsageError(format!(
            "--hysteresis runs one parameter up and down; found {} --vary options",
            args.vary.len()
        ))
        .into());
    };
    if args.shard.is_some() || args.resume {
        return Err(UsageError(
            "--hysteresis runs its points in a chain, one after the other: it cannot be sharded or resumed".into(),
        )
        .into());
    }
    let spec = VarySpec::parse(spec).map_err(|e| UsageError(format!("--vary: {e}")))?;
    let r = &args.run;
    r.validate()?;
    let out = args
        .output
        .clone()
        .unwrap_or_else(|| default_output(&args.model.model));
    check_directory(&out, &args.model.model, spec.path(), args.guards.force)?;
    let options = HysteresisOptions {
        seed: r.seed,
        replications: r.replications,
        stop: match (r.jobs, r.time) {
            (Some(j), _) => Some(Stop::Jobs(j)),
            (None, Some(t)) => Some(Stop::Time(t)),
            (None, None) => None,
        },
        threads: r.threads.unwrap_or(0),
        budget: Some(args.guards.budget()),
    };
    let source = ModelFile::read(&args.model.model).map_err(|e| UsageError(e.to_string()))?;
    let h = with_spinner(Phase::Hysteresis, || {
        run_hysteresis(&source, &base, &spec, &options)
    })
    .map_err(|e| match e {
        SweepError::Budget {
            index,
            point,
            error,
        } => anyhow::Error::from(UsageError(super::run::blame_budget(
            &error,
            &args.model,
            Some(&args.run),
            &[(spec.path().to_string(), format!("--vary {}", spec.source()))],
            &format!("at point {index} ({point}): "),
        ))),
        e if e.is_usage() => anyhow::Error::from(UsageError(e.to_string())),
        e => e.into(),
    })?;
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let mut value = serde_json::to_value(&h)?;
    value["verdict"] = h.verdict().into();
    value["model"] = args.model.model.display().to_string().into();
    let json = serde_json::to_string_pretty(&value)? + "\n";
    let summary = out.join(HYSTERESIS_FILE);
    std::fs::write(&summary, &json).with_context(|| format!("writing {}", summary.display()))?;
    if !args.no_charts {
        let pts = |b: &[qsim_sweep::hysteresis::BranchPoint]| {
            b.iter()
                .map(|p| (p.value, p.throughput_per_s.mean, p.throughput_per_s.ci95))
                .collect()
        };
        let branches = [
            Branch {
                name: "up (load rising)",
                points: pts(&h.up),
            },
            Branch {
                name: "down (load falling)",
                points: pts(&h.down),
            },
        ];
        let title = format!("{}: hysteresis", args.model.model.display());
        for ext in ["png", "svg"] {
            let path = out.join(format!("hysteresis.{ext}"));
            hysteresis_chart(&path, &title, &h.parameter, &branches)
                .with_context(|| format!("drawing {}", path.display()))?;
        }
    }
    match args.format {
        SweepFormat::Json => print!("{json}"),
        SweepFormat::Table => {
            // The verdict first: it is the answer; the table is its evidence.
            println!("{}", h.verdict());
            println!(
                "{:>12}  {:>22}  {:>22}  differ",
                h.parameter, "up throughput /s", "down throughput /s"
            );
            for p in &h.up {
                let down = h.down.iter().find(|d| d.value == p.value);
                // The half-width to the decimal place of the mean, as in the
                // other tables (four places would claim digits the CI denies).
                let fmt = |e: qsim_kernel::Estimate| {
                    let d = super::whatif::decimals(e.mean);
                    if e.ci95.is_finite() {
                        format!("{:.d$} ± {:.d$}", e.mean, e.ci95)
                    } else {
                        format!("{:.d$} ± n/a", e.mean)
                    }
                };
                println!(
                    "{:>12}  {:>22}  {:>22}  {}",
                    p.value,
                    fmt(p.throughput_per_s),
                    down.map_or(String::new(), |d| fmt(d.throughput_per_s)),
                    if h.differ_at.contains(&p.value) {
                        "yes"
                    } else {
                        ""
                    }
                );
            }
            // Warnings grouped: each text once, with the points it concerns.
            let mut grouped: Vec<(&str, Vec<String>)> = Vec::new();
            for (branch, points) in [("up", &h.up), ("down", &h.down)] {
                for p in points.iter() {
                    for w in &p.warnings {
                        let at = format!("{} {branch}", p.value);
                        match grouped.iter_mut().find(|(t, _)| *t == w.as_str()) {
                            Some((_, ats)) => ats.push(at),
                            None => grouped.push((w.as_str(), vec![at])),
                        }
                    }
                }
            }
            if !grouped.is_empty() {
                println!("warnings, each with the points (and branches) it concerns:");
            }
            for (w, ats) in &grouped {
                println!("  {} = {}: {w}", h.parameter, ats.join(", "));
            }
            println!("written to {}", out.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
