//! `qsim rare`: probabilities and times too rare for a plain run (the
//! kernel's `rare` module): the per-cycle or within-horizon probability of
//! reaching a level, the mean escape time to it, and deep tails of a
//! single GI/G/1 or M/M/c queue, a tandem of single servers or a
//! fork-join of such tandems. Only parsing and printing live here.

use super::UsageError;
use super::progress::{Phase, with_spinner};
use super::run::ModelArgs;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use qsim_kernel::rare::{
    Estimand, Level, LevelOf, Method, RareConfig, RareEstimate, TailOf, class_tail_probability,
    escape_time, reach_probability, tail_probability,
};
use qsim_kernel::{ClassId, NetworkSpec};
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Output formats of `qsim rare`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned text for people.
    Table,
    /// One JSON object, with the splitting's stages.
    Json,
    /// One row: estimand,level,start_level,horizon_s,method,estimate,ci95,relative_half_width,replications,events,warnings.
    Csv,
}

/// What to estimate about the level.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum What {
    // Mean time from the start level until the level first reaches the
    // target, seconds (listed inline in --help: only formats get a list).
    Escape,
    // Probability that the level reaches the target before it returns to
    // the start level.
    Cycle,
}

/// Arguments of `qsim rare`.
#[derive(Args, Debug)]
pub struct RareArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// The rare set, by splitting: `stations.NAME.jobs>=K` (jobs at a
    /// station), `system.jobs>=K` (jobs in the network),
    /// `system.retrying>=K` (clients waiting out a backoff), or a weighted sum
    /// of station counts, `2*stations.A.jobs+stations.B.jobs>=K`.
    #[arg(
        long,
        value_name = "LEVEL>=K",
        conflicts_with = "tail",
        required_unless_present = "tail"
    )]
    level: Option<String>,
    /// With --level: `escape` (mean first-passage time) or `cycle`
    /// (probability per cycle from the start level); --within-s instead
    /// gives the probability of reaching it within a horizon.
    #[arg(long, value_enum, default_value_t = What::Escape, conflicts_with = "within_s")]
    estimate: What,
    /// With --level: the probability of reaching it within this many
    /// seconds of the start state.
    #[arg(long, value_name = "SECONDS")]
    within_s: Option<f64>,
    /// The start level (default: the level of the model's initial state);
    /// a run from the initial state goes until the level equals it.
    #[arg(long, value_name = "K")]
    from: Option<u32>,
    /// Distance between the splitting's levels.
    #[arg(long, default_value_t = 1)]
    step: u32,
    /// A steady-state tail by importance sampling: `wait_time_s>T` or
    /// `response_time_s>T` of a single FCFS queue with one server and any
    /// times but lognormal ones (GI/G/1), `response_time_s>T` of such
    /// queues in tandem (possibly ending in a fork to such tandems and
    /// their join), `wait_time_s>T` of a single M/M/c queue; with
    /// `classes.NAME.` before it, of one class's customers (several
    /// Poisson classes at one FCFS server).
    #[arg(long, value_name = "METRIC>T")]
    tail: Option<String>,
    /// Copies per splitting stage, or samples per replication of a tail.
    #[arg(long, default_value_t = 1000)]
    effort: u32,
    /// Independent replications of the whole estimate (its interval).
    #[arg(long, default_value_t = 20)]
    replications: u32,
    /// Root seed (default: the model's).
    #[arg(long)]
    seed: Option<u64>,
    /// Worker threads (default: one per core); never changes the results.
    #[arg(long)]
    threads: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Write the output to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Parses `stations.NAME.jobs>=K`, `system.jobs>=K`, `system.retrying>=K`
/// (clients waiting to retry), or a weighted sum
/// of station counts, `W*stations.A.jobs+stations.B.jobs>=K` (whole-number
/// weights, 1 when left out).
fn parse_level(text: &str, names: &[&str]) -> Result<Level> {
    let bad = |why: String| {
        UsageError(format!(
            "--level {text}: {why}; expected stations.NAME.jobs>=K, system.jobs>=K, system.retrying>=K or a weighted sum such as 2*stations.A.jobs+stations.B.jobs>=K"
        ))
    };
    let Some((what, k)) = text.split_once(">=") else {
        return Err(bad("no `>=`".into()).into());
    };
    let at_least: u32 = k
        .trim()
        .parse()
        .map_err(|_| bad(format!("{} is not a whole number of jobs", k.trim())))?;
    let what = what.trim();
    match what {
        "system.jobs" => {
            return Ok(Level {
                of: LevelOf::System,
                at_least,
            });
        }
        "system.retrying" => {
            return Ok(Level {
                of: LevelOf::Retrying,
                at_least,
            });
        }
        _ => {}
    }
    let mut terms = Vec::new();
    for term in what.split('+').map(str::trim) {
        let (weight, count) = match term.split_once('*') {
            Some((w, c)) => {
                let w: u32 = w.trim().parse().ok().filter(|&w| w >= 1).ok_or_else(|| {
                    bad(format!("{} is not a whole-number weight >= 1", w.trim()))
                })?;
                (Some(w), c.trim())
            }
            None => (None, term),
        };
        let Some(name) = count
            .strip_prefix("stations.")
            .and_then(|r| r.strip_suffix(".jobs"))
        else {
            return Err(bad(format!("{count} is not a level")).into());
        };
        let Some(s) = names.iter().position(|n| *n == name) else {
            return Err(bad(format!(
                "the model has no station {name} (it has {})",
                names.join(", ")
            ))
            .into());
        };
        if terms.iter().any(|&(t, _, _)| t == s) {
            return Err(bad(format!("station {name} appears twice: add its weights")).into());
        }
        terms.push((s, weight.unwrap_or(1), weight.is_some()));
    }
    let of = match terms.as_slice() {
        &[(s, 1, false)] => LevelOf::Station(s),
        _ => LevelOf::Weighted(terms.iter().map(|&(s, w, _)| (s, w)).collect()),
    };
    Ok(Level { of, at_least })
}

/// Parses `wait_time_s>T` or `response_time_s>T`, with `classes.NAME.`
/// before it for one class's customers.
fn parse_tail(text: &str, spec: &NetworkSpec) -> Result<(Option<ClassId>, TailOf, f64)> {
    let bad = |why: String| {
        UsageError(format!(
            "--tail {text}: {why}; expected wait_time_s>T or response_time_s>T, or classes.NAME. before either"
        ))
    };
    let Some((what, t)) = text.split_once('>') else {
        return Err(bad("no `>`".into()).into());
    };
    let (class, figure) = match what.trim().strip_prefix("classes.") {
        Some(rest) => {
            let Some((name, figure)) = rest.rsplit_once('.') else {
                return Err(bad("no figure after the class".into()).into());
            };
            let Some(k) = spec.classes.iter().position(|c| c.name == name) else {
                let known: Vec<&str> = spec.classes.iter().map(|c| c.name.as_str()).collect();
                return Err(bad(format!(
                    "no class named `{name}` (the classes: {})",
                    known.join(", ")
                ))
                .into());
            };
            (Some(k), figure)
        }
        None => (None, what.trim()),
    };
    let of = match figure {
        "wait_time_s" => TailOf::Wait,
        "response_time_s" => TailOf::Response,
        w => return Err(bad(format!("{w} is not a tail this command estimates")).into()),
    };
    let t: f64 = t
        .trim()
        .parse()
        .ok()
        .filter(|t: &f64| t.is_finite() && *t >= 0.0)
        .ok_or_else(|| bad(format!("{} is not a number of seconds >= 0", t.trim())))?;
    Ok((class, of, t))
}

fn level_text(level: &Level, names: &[&str]) -> String {
    match &level.of {
        &LevelOf::Station(s) => format!("stations.{}.jobs>={}", names[s], level.at_least),
        LevelOf::System => format!("system.jobs>={}", level.at_least),
        LevelOf::Retrying => format!("system.retrying>={}", level.at_least),
        LevelOf::Weighted(terms) => {
            let sum: Vec<String> = terms
                .iter()
                .map(|&(s, w)| match w {
                    1 => format!("stations.{}.jobs", names[s]),
                    w => format!("{w}*stations.{}.jobs", names[s]),
                })
                .collect();
            format!("{}>={}", sum.join("+"), level.at_least)
        }
    }
}

/// The estimand's name in every output (the `estimand` column).
fn estimand_name(e: &Estimand) -> &'static str {
    match e {
        Estimand::Cycle => "cycle_probability",
        Estimand::Within { .. } => "within_probability",
        Estimand::EscapeTime => "escape_time_s",
        Estimand::Tail {
            of: TailOf::Wait, ..
        } => "wait_time_tail_probability",
        Estimand::Tail {
            of: TailOf::Response,
            ..
        } => "response_time_tail_probability",
    }
}

/// What the estimate is about, as the flags name it: a level, or a tail
/// (`classes.NAME.` before it for one class's customers).
fn subject(est: &RareEstimate, names: &[&str], classes: &[&str]) -> String {
    match (&est.estimand, &est.level) {
        (Estimand::Tail { of, t_s, class }, _) => {
            let figure = match of {
                TailOf::Wait => format!("wait_time_s>{t_s}"),
                TailOf::Response => format!("response_time_s>{t_s}"),
            };
            match class {
                Some(k) => format!("classes.{}.{figure}", classes[*k]),
                None => figure,
            }
        }
        (_, Some(l)) => level_text(l, names),
        _ => String::new(),
    }
}

fn method_name(m: Method) -> &'static str {
    match m {
        Method::Splitting => "splitting",
        Method::ImportanceSampling => "importance_sampling",
    }
}

fn table(est: &RareEstimate, subject: &str) -> String {
    let v = est.value;
    let mut t = String::new();
    let what = match est.estimand {
        Estimand::Cycle => format!(
            "P(reach {} before returning to level {})",
            subject,
            est.start.unwrap_or(0)
        ),
        Estimand::Within { horizon_s } => format!(
            "P(reach {} within {horizon_s} s of level {})",
            subject,
            est.start.unwrap_or(0)
        ),
        Estimand::EscapeTime => format!(
            "mean time from level {} to {}, s",
            est.start.unwrap_or(0),
            subject
        ),
        Estimand::Tail { .. } => format!("P({subject}) in steady state"),
    };
    t.push_str(&format!("{what}\n"));
    t.push_str(&format!(
        "  estimate   {:.4e} ± {:.2e}  (95%, ±{:.1}%)\n",
        v.mean,
        v.ci95,
        100.0 * est.relative_half_width()
    ));
    if let (Some(c), Some(p)) = (est.cycle_s, est.cycle_probability) {
        t.push_str(&format!(
            "  = mean cycle {:.4e} ± {:.2e} s / P(reach per cycle) {:.4e} ± {:.2e}\n",
            c.mean, c.ci95, p.mean, p.ci95
        ));
    }
    t.push_str(&format!(
        "  method     {}, {} replications, {} events\n",
        method_name(est.method),
        est.replications,
        est.events
    ));
    if !est.stages.is_empty() {
        let worst = est
            .stages
            .iter()
            .min_by(|a, b| a.fraction.mean.total_cmp(&b.fraction.mean));
        if let Some(w) = worst {
            t.push_str(&format!(
                "  levels     {}, hardest {} (fraction {:.3}), fewest survivors {}\n",
                est.stages.len(),
                w.level,
                w.fraction.mean,
                est.stages
                    .iter()
                    .map(|s| s.fewest_survivors)
                    .min()
                    .unwrap_or(0)
            ));
        }
    }
    for w in &est.warnings {
        t.push_str(&format!("warning: {w}\n"));
    }
    t
}

fn to_json(est: &RareEstimate, subject: &str) -> Value {
    let num = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
    let pair = |e: Option<qsim_kernel::Estimate>| {
        e.map_or(
            Value::Null,
            |e| json!({"mean": num(e.mean), "ci95": num(e.ci95)}),
        )
    };
    json!({
        "estimand": estimand_name(&est.estimand),
        "subject": subject,
        "start_level": est.start,
        "horizon_s": match est.estimand { Estimand::Within { horizon_s } => json!(horizon_s), _ => Value::Null },
        "method": method_name(est.method),
        "estimate": num(est.value.mean),
        "ci95": num(est.value.ci95),
        "relative_half_width": num(est.relative_half_width()),
        "cycle_s": pair(est.cycle_s),
        "cycle_probability": pair(est.cycle_probability),
        "replications": est.replications,
        "events": est.events,
        "stages": est.stages.iter().map(|s| json!({
            "level": s.level,
            "fraction": num(s.fraction.mean),
            "fraction_ci95": num(s.fraction.ci95),
            "fewest_survivors": s.fewest_survivors,
        })).collect::<Vec<_>>(),
        "warnings": est.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
    })
}

fn to_csv(est: &RareEstimate, subject: &str) -> String {
    let opt = |x: Option<String>| x.unwrap_or_default();
    let warnings: Vec<String> = est.warnings.iter().map(|w| w.to_string()).collect();
    let mut out = qsim_report::CsvRows::new();
    out.line(
        "estimand,subject,start_level,horizon_s,method,estimate,ci95,relative_half_width,replications,events,warnings",
    );
    out.row([
        estimand_name(&est.estimand).to_string(),
        subject.to_string(),
        opt(est.start.map(|s| s.to_string())),
        match est.estimand {
            Estimand::Within { horizon_s } => horizon_s.to_string(),
            _ => String::new(),
        },
        method_name(est.method).to_string(),
        format!("{:e}", est.value.mean),
        format!("{:e}", est.value.ci95),
        est.relative_half_width().to_string(),
        est.replications.to_string(),
        est.events.to_string(),
        warnings.join("; "),
    ]);
    out.finish()
}

/// `qsim rare`.
pub fn rare(args: &RareArgs) -> Result<ExitCode> {
    if let Some(out) = &args.output {
        super::check_output("--output", out, super::Out::File, &[&args.model.model])?;
    }
    if let Some(h) = args.within_s
        && !(h.is_finite() && h > 0.0)
    {
        return Err(UsageError(format!(
            "--within-s {h}: expected a positive number of seconds"
        ))
        .into());
    }
    let model = args.model.load()?;
    if model.run.has_schedule() {
        return Err(UsageError(format!(
            "{}: qsim rare does not apply load or capacity schedules (its cycles assume a load and capacity that do not change); remove the schedule or use qsim run",
            args.model.model.display()
        ))
        .into());
    }
    let spec = model.network.spec();
    let names: Vec<&str> = spec.stations.iter().map(|s| s.name.as_str()).collect();
    let cfg = RareConfig {
        seed: args.seed.unwrap_or(model.run.seed),
        replications: args.replications,
        effort: args.effort,
        step: args.step,
        start: args.from,
        ..RareConfig::default()
    };
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(n) = args.threads {
        pool = pool.num_threads(n);
    }
    let pool = pool.build().context("starting the worker threads")?;
    let est = with_spinner(Phase::Rare, || {
        pool.install(|| -> Result<RareEstimate> {
            let usage = |e: qsim_kernel::rare::RareError| -> anyhow::Error {
                match e {
                    qsim_kernel::rare::RareError::Run(r) => r.into(),
                    e => UsageError(format!("{}: {e}", args.model.model.display())).into(),
                }
            };
            if let Some(tail) = &args.tail {
                let (class, of, t) = parse_tail(tail, spec)?;
                return match class {
                    Some(k) => class_tail_probability(&model.network, k, of, t, &cfg),
                    None => tail_probability(&model.network, of, t, &cfg),
                }
                .map_err(usage);
            }
            let level = parse_level(args.level.as_deref().unwrap_or(""), &names)?;
            match (args.within_s, args.estimate) {
                (Some(h), _) => reach_probability(&model.network, level, Some(h), &cfg),
                (None, What::Cycle) => reach_probability(&model.network, level, None, &cfg),
                (None, What::Escape) => escape_time(&model.network, level, &cfg),
            }
            .map_err(usage)
        })
    })?;
    let classes: Vec<&str> = spec.classes.iter().map(|c| c.name.as_str()).collect();
    let subject = subject(&est, &names, &classes);
    let text = match args.format {
        Format::Table => table(&est, &subject),
        Format::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&to_json(&est, &subject))?
        ),
        Format::Csv => to_csv(&est, &subject),
    };
    match &args.output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?
        }
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}
