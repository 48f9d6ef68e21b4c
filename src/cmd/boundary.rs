//! `qsim boundary MODEL --vary PATH=LO..HI`: the metastability boundary,
//! the smallest trigger that tips a model with a schedule into a collapse
//! it does not leave within the run (`qsim_sweep::boundary`): a table or
//! JSON of every value tried and the bracket, and a chart.

use super::UsageError;
use super::progress::Phase;
use super::run::{ModelArgs, parse_overrides};
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use qsim_kernel::recovery::{RecoveryMetric, recovery, run_trigger_window};
use qsim_kernel::trace::Trace;
use qsim_sweep::boundary::{Boundary, BoundaryVerdict, search};
use std::path::PathBuf;
use std::process::ExitCode;

/// Output formats of `qsim boundary`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum BoundaryFormat {
    /// Aligned text for people.
    Table,
    /// One JSON object: `path`, `points`, `verdict`, `describe`.
    Json,
}

/// Arguments of `qsim boundary`.
#[derive(Args, Debug)]
pub struct BoundaryArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// The trigger's size or length to search, as PATH=LO..HI, e.g.
    /// `workload.schedule[0].population=121..300` (whole numbers when LO
    /// and HI are).
    #[arg(long, value_name = "PATH=LO..HI")]
    vary: String,
    /// Values on the first, even grid (at least 2).
    #[arg(long, default_value_t = 5)]
    points: usize,
    /// Halvings of the gap between the last value that held and the first
    /// that tipped.
    #[arg(long, default_value_t = 4)]
    refine: usize,
    /// Replications at each value (default: the model's).
    #[arg(long)]
    replications: Option<u32>,
    /// The fraction of the system throughput before the trigger below
    /// which a replication has collapsed (see `qsim run`).
    #[arg(long, value_name = "FRACTION", default_value_t = qsim_kernel::recovery::DEFAULT_RECOVERY_FRACTION)]
    recovery_fraction: f64,
    /// Draw the fraction tipped against the value to this .png or .svg.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = BoundaryFormat::Table)]
    format: BoundaryFormat,
}

/// `PATH=LO..HI` as (path, lo, hi, whole numbers).
fn parse_vary(s: &str) -> Result<(String, f64, f64, bool)> {
    let bad = |why: &str| {
        UsageError(format!(
            "--vary {s}: {why}; expected PATH=LO..HI, e.g. workload.schedule[0].population=121..300"
        ))
    };
    let (path, range) = s.split_once('=').ok_or_else(|| bad("no `=`"))?;
    let (lo, hi) = range.split_once("..").ok_or_else(|| bad("no `..` range"))?;
    let num = |x: &str| x.trim().parse::<f64>().ok().filter(|v| v.is_finite());
    let (Some(a), Some(b)) = (num(lo), num(hi)) else {
        return Err(bad("the ends are not numbers").into());
    };
    if a >= b {
        return Err(bad("LO must be below HI").into());
    }
    let whole = lo.trim().parse::<i64>().is_ok() && hi.trim().parse::<i64>().is_ok();
    Ok((path.trim().to_string(), a, b, whole))
}

fn value_text(v: f64, whole: bool) -> String {
    if whole {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// Runs the model at `PATH = v`: (replications, tipped).
fn tipped_at(args: &BoundaryArgs, path: &str, v: f64, whole: bool) -> Result<(u32, u32)> {
    let mut sets = args.model.set.clone();
    sets.push(format!("{path}={}", value_text(v, whole)));
    let overrides = parse_overrides(&sets)?;
    let model = qsim_model::load_file(&args.model.model, &overrides)?;
    let mut config = model.run.clone();
    if let Some(r) = args.replications {
        config.replications = r;
    }
    let Some(window) = run_trigger_window(&config) else {
        return Err(UsageError(format!(
            "{}: no schedule, so no trigger to search; add [[workload.schedule]] or [[stations.NAME.schedule]] steps (see docs/model-format.md)",
            args.model.model.display()
        ))
        .into());
    };
    let trace = super::trace::TraceArgs {
        trace: None,
        trace_interval: None,
        plot: None,
        recovery_fraction: args.recovery_fraction,
    };
    config.trace = trace.plan(&model.network, &config)?;
    let at = format!("{path}={}", value_text(v, whole));
    let results = super::progress::run_phase(&model.network, &config, Phase::Boundary { at })
        .with_context(|| format!("simulating at {path} = {}", value_text(v, whole)))?;
    let traces: Vec<&Trace> = results
        .replication_results
        .iter()
        .filter_map(|r| r.trace.as_deref())
        .collect();
    let r = recovery(
        window,
        &traces,
        RecoveryMetric::of_network(&model.network),
        args.recovery_fraction,
    )
    .map_err(|why| UsageError(format!("at {path} = {}: {why}", value_text(v, whole))))?;
    let tipped = r
        .per_replication
        .iter()
        .filter(|x| x.collapse_s.is_some() && x.recover_s.is_none())
        .count() as u32;
    Ok((r.replications, tipped))
}

/// `qsim boundary`.
pub fn boundary(args: &BoundaryArgs) -> Result<ExitCode> {
    let (path, lo, hi, whole) = parse_vary(&args.vary)?;
    if args.points < 2 {
        return Err(UsageError("--points must be at least 2".into()).into());
    }
    if let Some(p) = &args.plot {
        super::check_output("--plot", p, super::Out::Chart, &[&args.model.model])?;
    }
    let found: Boundary = search(lo, hi, args.points, args.refine, whole, |v| {
        tipped_at(args, &path, v, whole)
    })?;
    let words = found.verdict.describe(&path);
    let text = match args.format {
        BoundaryFormat::Table => {
            let mut t = format!(
                "boundary search: {path} from {} to {} ({} values), a replication tips when it collapses below {:.0}% of its throughput before the trigger and does not recover within the run\n",
                value_text(lo, whole),
                value_text(hi, whole),
                found.points.len(),
                100.0 * args.recovery_fraction
            );
            t.push_str("  value  tipped    fraction (95% interval)\n");
            for p in &found.points {
                let (f, a, b) = p.fraction;
                t.push_str(&format!(
                    "  {:>5}  {:>2} of {:<2}  {:>3.0}% ({:.0}% to {:.0}%)\n",
                    value_text(p.value, whole),
                    p.tipped,
                    p.replications,
                    100.0 * f,
                    100.0 * a,
                    100.0 * b
                ));
            }
            t.push_str(&format!("verdict: {words}\n"));
            t
        }
        BoundaryFormat::Json => {
            let v = serde_json::json!({
                "path": path,
                "points": found.points,
                "verdict": found.verdict,
                "describe": words,
            });
            let mut s = serde_json::to_string_pretty(&v)?;
            s.push('\n');
            s
        }
    };
    print!("{text}");
    if let Some(plot) = &args.plot {
        let pts: Vec<(f64, f64, f64, f64)> = found
            .points
            .iter()
            .map(|p| (p.value, p.fraction.0, p.fraction.1, p.fraction.2))
            .collect();
        let bracket = match found.verdict {
            BoundaryVerdict::Between { below, above } => Some((below, above)),
            _ => None,
        };
        let title = format!(
            "{}: the smallest trigger that tips it",
            args.model.model.display()
        );
        qsim_report::boundary_chart::boundary_chart(plot, &title, &path, &pts, bracket)
            .with_context(|| format!("drawing {}", plot.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
