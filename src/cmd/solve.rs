//! `qsim solve`: analytic figures (MVA, M/M/c, M/G/1, Jackson, bounds) from
//! qsim-theory, optionally side by side with simulation. Only parsing and
//! printing live here.

use super::UsageError;
use super::run::{GuardArgs, ModelArgs, RunOptions};
use clap::ValueEnum;

/// Output formats of `qsim solve` (the words of `qsim run --format`; the
/// CSV has its own columns: analytic and simulated side by side).
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned text for people.
    Table,
    /// One JSON object.
    Json,
    /// One row per figure: scope,name,metric,kind,analytic,mean,ci95,inside_ci
    /// (mean, ci95 and inside_ci filled with --compare); with
    /// --population-range one row per population:
    /// population,throughput_per_s,response_time_s,throughput_upper_bound_per_s,response_lower_bound_s.
    Csv,
}
use anyhow::{Context, Result};
use clap::Args;
use qsim_kernel::{Estimate, KindTag, NetworkSpec, RunResults, Workload};
use qsim_theory::bounds::{ClosedBounds, closed_bounds};
use qsim_theory::closed::{Bistability, mva_single_within};
use qsim_theory::solution::{Exactness, Solution, figures_at, solve_within};
use serde_json::{Value, json};
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `qsim solve`.
#[derive(Args, Debug)]
pub struct SolveArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// For a single closed class: solve every population in `a..b:step`.
    #[arg(long, value_name = "a..b:step")]
    population_range: Option<String>,
    /// Also simulate and show both side by side, with whether the analytic
    /// value lies inside the simulation's 95% confidence interval.
    #[arg(long)]
    compare: bool,
    #[command(flatten)]
    options: RunOptions,
    /// Limits on exact MVA's memory (`--max-memory`) and on the
    /// simulation of `--compare`.
    #[command(flatten)]
    guards: GuardArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Skip the simulated bistability check (runs from both ends, and a
    /// short run from each exact operating point) that a model with a
    /// state-dependent mechanism gets.
    #[arg(long)]
    no_bistability_check: bool,
}

/// The model key that sets a closed class's population.
fn population_key(spec: &NetworkSpec, class: usize) -> String {
    if spec.classes.len() == 1 {
        "workload.population".into()
    } else {
        format!("workload.classes.{}.population", spec.classes[class].name)
    }
}

/// Turns a theory error into a usage error that names what to change: for
/// MVA beyond `--max-memory`, the key, the estimate and the limit, in the
/// form of `run`'s memory refusal.
fn usage(
    spec: &NetworkSpec,
    name: &str,
    flag: Option<&str>,
    e: qsim_theory::Error,
) -> anyhow::Error {
    match e {
        qsim_theory::Error::TooLarge {
            cost,
            memory_limit_bytes,
            ..
        } if cost.memory_bytes > memory_limit_bytes => {
            let at = flag.map_or_else(|| population_key(spec, 0), str::to_string);
            UsageError(format!(
                "{name}: {at}: exact MVA would need about {} of memory, more than the limit of {}; lower {at}, simulate (`qsim run`) instead, or raise --max-memory",
                qsim_theory::human_bytes(cost.memory_bytes),
                qsim_theory::human_bytes(memory_limit_bytes)
            ))
            .into()
        }
        qsim_theory::Error::TooLarge { .. } => {
            let at = flag.map_or_else(|| population_key(spec, 0), str::to_string);
            UsageError(format!(
                "{name}: {at}: {e}; lower it, or simulate (`qsim run`) instead"
            ))
            .into()
        }
        e => UsageError(format!("{name}: {e}")).into(),
    }
}

/// Populations of `--population-range`, in the sweep's range syntax
/// (`a..b:step`, `a..b:x2`, or a list); each a whole number of at least 1.
fn parse_range(spec: &str) -> Result<Vec<u32>> {
    let bad = |why: String| {
        UsageError(format!(
            "--population-range {spec}: {why}; expected e.g. 1..200:10"
        ))
    };
    // The range syntax is --vary's; its messages name the --vary spec,
    // which was not typed here.
    let typed = format!("invalid --vary `population={spec}`: ");
    let vary = qsim_sweep::VarySpec::parse(&format!("population={spec}"))
        .map_err(|e| bad(e.to_string().replacen(&typed, "", 1)))?;
    vary.values()
        .iter()
        .map(|v| match v.number() {
            Some(n) if n.fract() == 0.0 && (1.0..=f64::from(u32::MAX)).contains(&n) => Ok(n as u32),
            _ => Err(bad(format!("{} is not a whole number of jobs >= 1", v.text())).into()),
        })
        .collect()
}

/// `qsim solve`.
pub fn run(args: &SolveArgs) -> Result<ExitCode> {
    args.options.validate()?;
    let mut model = args.model.load()?;
    // Theory has no time: a load schedule is in neither the figures nor
    // the simulation they are compared with.
    if !model.run.schedule.is_empty() {
        eprintln!(
            "warning: the model's load schedule is not applied: the figures are for the workload's own population or arrival rate (the load at time 0), and --compare simulates that load"
        );
        model.run.schedule.clear();
    }
    if !model.run.station_schedule.is_empty() {
        eprintln!(
            "warning: the stations' capacity schedules are not applied: the figures are for the stations' own servers and speed, and --compare simulates those"
        );
        model.run.station_schedule.clear();
    }
    let name = args.model.model.display().to_string();
    if model.network.overload().is_some() {
        return Err(UsageError(format!(
            "{name}: qsim solve has no method for client or overload behaviour (timeouts, retries, patience, balking, shedding), and figures without it would describe another system; simulate it with `qsim run` (which also runs the bistability check where clients time out and retry)"
        ))
        .into());
    }
    // Class switching: each chain is solved as the one class with its
    // visits and demands; stations where that is not exact are reasons.
    let (spec, chain_reasons) = match qsim_theory::chains::merge(model.network.spec()) {
        Ok(Some((merged, why))) => (std::borrow::Cow::Owned(merged), why),
        Ok(None) => (std::borrow::Cow::Borrowed(model.network.spec()), Vec::new()),
        Err(e) => return Err(usage(model.network.spec(), &name, None, e)),
    };
    // Routing policies: no exact method; bounds only.
    let mut chain_reasons = chain_reasons;
    chain_reasons.extend(qsim_theory::product_form::policy_reasons(&model.network));
    let spec: &NetworkSpec = &spec;
    let population = match &spec.classes[..] {
        [c] => match c.workload {
            Workload::Closed { population, .. } => Some(population),
            Workload::Open { .. } => None,
        },
        _ => None,
    };
    let mut out = std::io::stdout().lock();
    let memory_limit = args.guards.budget().max_memory_bytes as f64;
    let simulate = || -> Result<RunResults> {
        let mut config = model.run.clone();
        args.options.apply(&mut config)?;
        args.guards
            .check(&model.network, &config, &args.model, Some(&args.options))?;
        qsim_kernel::run(&model.network, &config).with_context(|| format!("simulating {name}"))
    };

    let outside = |out: &mut std::io::StdoutLock<'_>, reasons: Vec<String>| -> Result<ExitCode> {
        let blocked = qsim_theory::bounds::policy_blocks_bounds(&model.network);
        let bounds = match population {
            Some(_) if blocked.is_some() => None,
            Some(n) => closed_bounds(spec, 0, n).map_err(|e| usage(spec, &name, None, e))?,
            None => None,
        };
        let sim = match (&bounds, args.compare) {
            (Some(_), true) => Some(simulate()?),
            _ => None,
        };
        print_outside(
            out,
            &name,
            &reasons,
            (bounds.as_ref(), blocked.as_deref()),
            sim.as_ref(),
            args.format,
        )?;
        Ok(ExitCode::SUCCESS)
    };

    if let Some(range) = &args.population_range {
        let ns = parse_range(range)?;
        if args.compare {
            return Err(UsageError(format!(
                "--compare does not apply to --population-range {range}: it simulates one population; to compare at one of them, run `qsim solve --compare --set workload.population=N`"
            ))
            .into());
        }
        if population.is_none() {
            return Err(UsageError(
                "--population-range needs a model with one closed class".into(),
            )
            .into());
        }
        let mut reasons = qsim_theory::product_form::reasons(spec);
        reasons.extend(chain_reasons.iter().cloned());
        if !reasons.is_empty() {
            return outside(&mut out, reasons);
        }
        let max = *ns.iter().max().expect("non-empty range");
        let flag = format!("--population-range {range}");
        let sol = mva_single_within(spec, 0, max, memory_limit)
            .map_err(|e| usage(spec, &name, Some(&flag), e))?;
        let mut rows = Vec::new();
        for &n in &ns {
            let f = figures_at(spec, &sol, n);
            let b = closed_bounds(spec, 0, n).map_err(|e| usage(spec, &name, None, e))?;
            rows.push((n, f, b));
        }
        print_range(&mut out, &name, &rows, args.format)?;
        return Ok(ExitCode::SUCCESS);
    }

    if !chain_reasons.is_empty() {
        return outside(&mut out, chain_reasons);
    }
    let mut figures = match solve_within(spec, memory_limit) {
        Ok(f) => f,
        Err(qsim_theory::Error::NotProductForm(reasons)) => return outside(&mut out, reasons),
        Err(e) => return Err(usage(spec, &name, None, e)),
    };

    // The one verdict on operating points: a model with a state-dependent
    // mechanism is simulated from both ends, and each exact operating
    // point is listed only when a run started there stays in it.
    let check =
        !args.no_bistability_check && qsim_kernel::bistable::other_end(&model.network).is_some();
    let sim = if args.compare || check {
        Some(simulate()?)
    } else {
        None
    };
    let verdict = match (&sim, check) {
        (Some(first), true) => {
            let mut config = model.run.clone();
            args.options.apply(&mut config)?;
            super::verdict::solve_verdict(
                &model.network,
                &config,
                figures.bistability.as_ref(),
                first,
            )?
        }
        _ => super::verdict::SolveVerdict {
            confirmed: figures.bistability.clone(),
            ..Default::default()
        },
    };
    figures.bistability = verdict.confirmed.clone();
    // Simulated only for the check: no comparison columns.
    let sim = sim.filter(|_| args.compare);
    // M/G/1 and finite-capacity stations are solved exactly without being
    // product-form networks: the JSON says which.
    let product_form =
        qsim_theory::product_form::reasons(spec).is_empty() && chain_reasons.is_empty();
    print_figures(
        &mut out,
        spec,
        &name,
        &figures,
        product_form,
        (sim.as_ref(), &verdict),
        args.format,
    )?;
    Ok(ExitCode::SUCCESS)
}

fn kind_name(e: Exactness) -> &'static str {
    match e {
        Exactness::Exact => "exact",
        Exactness::Approximate => "approximate",
        Exactness::Bound => "bound",
    }
}

/// Whether a simulated figure exists to compare with (a figure the run
/// could not compute is neither an agreement nor a disagreement).
fn comparable(sim: &Estimate) -> bool {
    sim.mean.is_finite()
}

/// Whether an analytic value lies inside a simulation's CI. A zero-width
/// CI (a figure that never varies, such as a utilization of exactly 1)
/// holds an exact match, to a relative 1e-9.
pub fn inside_ci(analytic: f64, sim: Estimate) -> bool {
    let d = (sim.mean - analytic).abs();
    d <= sim.ci95 || d <= 1e-9 * analytic.abs().max(sim.mean.abs())
}

/// One figure: metric, analytic value, simulation estimate.
struct Row {
    scope: &'static str,
    name: String,
    metric: &'static str,
    analytic: f64,
    sim: Option<Estimate>,
}

impl Row {
    fn label(&self) -> String {
        if self.scope == "system" {
            format!("system.{}", self.metric)
        } else {
            format!("{}.{}.{}", self.scope, self.name, self.metric)
        }
    }
}

fn rows(spec: &NetworkSpec, f: &Solution, sim: Option<&RunResults>) -> Vec<Row> {
    let mut rows = vec![
        Row {
            scope: "system",
            name: String::new(),
            metric: "throughput_per_s",
            analytic: f.throughput_per_s,
            sim: sim.map(|r| r.system.throughput_per_s),
        },
        Row {
            scope: "system",
            name: String::new(),
            metric: "response_time_s",
            analytic: f.response_time_s,
            sim: sim.map(|r| Estimate {
                mean: r.system.response_time_s.mean,
                ci95: r.system.response_time_s.ci95,
            }),
        },
    ];
    if let Some(p) = f.response_percentiles_s {
        let names = [
            "response_time_p50_s",
            "response_time_p90_s",
            "response_time_p95_s",
            "response_time_p99_s",
            "response_time_p999_s",
        ];
        for (k, (metric, analytic)) in names.into_iter().zip(p).enumerate() {
            rows.push(Row {
                scope: "system",
                name: String::new(),
                metric,
                analytic,
                sim: sim.map(|r| {
                    let rt = &r.system.response_time_s;
                    [rt.p50, rt.p90, rt.p95, rt.p99, rt.p999][k]
                }),
            });
        }
    }
    for c in &f.classes {
        let sc = sim.and_then(|r| r.classes.iter().find(|x| x.name == c.name));
        for (metric, analytic, est) in [
            (
                "throughput_per_s",
                c.throughput_per_s,
                sc.map(|x| x.throughput_per_s),
            ),
            (
                "response_time_s",
                c.response_time_s,
                sc.map(|x| Estimate {
                    mean: x.response_time_s.mean,
                    ci95: x.response_time_s.ci95,
                }),
            ),
        ] {
            rows.push(Row {
                scope: "classes",
                name: c.name.clone(),
                metric,
                analytic,
                // A class the run has no figures for is not compared.
                sim: sim.map(|_| est.unwrap_or(Estimate::UNKNOWN)),
            });
        }
    }
    for (i, s) in f.stations.iter().enumerate() {
        let st = sim.map(|r| &r.stations[i]);
        // A delay, fork or join has no servers: no utilization to give or
        // to agree on (a 0 against a 0 would count as an agreement).
        let busy = spec
            .stations
            .get(i)
            .is_none_or(|x| KindTag::from(&x.kind).can_saturate());
        for (metric, analytic, est) in [
            (
                "throughput_per_s",
                s.throughput_per_s,
                st.map(|x| x.throughput_per_s),
            ),
            ("utilization", s.utilization, st.map(|x| x.utilization)),
            ("mean_jobs", s.mean_jobs, st.map(|x| x.mean_jobs)),
        ] {
            if metric == "utilization" && !busy {
                continue;
            }
            rows.push(Row {
                scope: "stations",
                name: s.name.clone(),
                metric,
                analytic,
                sim: est,
            });
        }
        if let Some(loss) = s.loss_probability {
            rows.push(Row {
                scope: "stations",
                name: s.name.clone(),
                metric: "loss_probability",
                analytic: loss,
                sim: st.and_then(|x| x.loss_probability),
            });
        }
    }
    rows
}

/// The sentence that says a model is bistable, where its figures are printed.
fn bistability_warning(b: &Bistability) -> String {
    format!(
        "the model is bistable: the falling speed curve of {} gives {} stable operating points ({}); the exact figures are the long-run mean over all of them, and a run stays near the one it starts in, so no single figure is the answer",
        b.station,
        b.operating_points.len(),
        b.points_text()
    )
}

fn print_figures(
    out: &mut impl Write,
    spec: &NetworkSpec,
    name: &str,
    f: &Solution,
    product_form: bool,
    // The simulation of `--compare`, and the bistability verdict.
    (sim, verdict): (Option<&RunResults>, &super::verdict::SolveVerdict),
    format: Format,
) -> Result<()> {
    let rows = rows(spec, f, sim);
    let kind = kind_name(f.exactness);
    let mut warnings: Vec<String> = f.bistability.iter().map(bistability_warning).collect();
    warnings.extend(verdict.dropped.iter().cloned());
    warnings.extend(
        verdict
            .verdict
            .iter()
            .filter(|v| v.bistable)
            .map(|v| v.describe()),
    );
    match format {
        Format::Json => {
            let rows: Vec<Value> = rows
                .iter()
                .map(|r| match r.sim {
                    Some(e) if !comparable(&e) => json!({
                        "metric": r.label(), "kind": kind, "analytic": r.analytic,
                        "simulation": null, "inside_ci": null,
                    }),
                    Some(e) => json!({
                        "metric": r.label(), "kind": kind, "analytic": r.analytic,
                        "simulation": { "mean": e.mean, "ci95": e.ci95 },
                        "difference": e.mean - r.analytic, "inside_ci": inside_ci(r.analytic, e),
                    }),
                    None => json!({ "metric": r.label(), "kind": kind, "analytic": r.analytic }),
                })
                .collect();
            let v = json!({
                "model": name, "product_form": product_form, "method": f.method, "exactness": kind,
                "population": f.population, "bistability": f.bistability,
                "verdict": verdict.verdict, "unconfirmed_operating_points": verdict.dropped,
                "warnings": warnings, "rows": rows,
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        }
        Format::Csv => {
            let mut csv = qsim_report::CsvRows::new();
            csv.line("scope,name,metric,kind,analytic,mean,ci95,inside_ci");
            for r in &rows {
                let (m, c, inside) = r.sim.filter(comparable).map_or(
                    (String::new(), String::new(), String::new()),
                    |e| {
                        (
                            e.mean.to_string(),
                            e.ci95.to_string(),
                            inside_ci(r.analytic, e).to_string(),
                        )
                    },
                );
                csv.row([
                    r.scope.to_string(),
                    r.name.to_string(),
                    r.metric.to_string(),
                    kind.to_string(),
                    r.analytic.to_string(),
                    m,
                    c,
                    inside,
                ]);
            }
            if let Some(b) = &f.bistability {
                for p in &b.operating_points {
                    csv.row([
                        "operating_point",
                        &b.station,
                        "throughput_per_s",
                        "exact",
                        &p.throughput_per_s.to_string(),
                        "",
                        "",
                        "",
                    ]);
                }
            }
            write!(out, "{}", csv.finish())?;
            for w in &warnings {
                eprintln!("warning: {w}");
            }
        }
        Format::Table => {
            writeln!(
                out,
                "{name}: {} ({kind}){}",
                f.method,
                f.population
                    .map_or(String::new(), |n| format!(" at N = {n}"))
            )?;
            for w in &warnings {
                writeln!(out, "warning: {w}")?;
            }
            let width = rows.iter().map(|r| r.label().len()).max().unwrap_or(10);
            if sim.is_some() {
                writeln!(
                    out,
                    "  {:<width$}  {:>12}  {:>24}  {:>11}  inside CI",
                    "metric", "analytic", "simulation ± 95% CI", "difference"
                )?;
            } else {
                writeln!(out, "  {:<width$}  {:>12}", "metric", "analytic")?;
            }
            let mut outside = 0;
            let compared = rows
                .iter()
                .filter(|r| r.sim.is_some_and(|e| comparable(&e)))
                .count();
            for r in &rows {
                let label = r.label();
                match r.sim {
                    Some(e) if !comparable(&e) => writeln!(
                        out,
                        "  {label:<width$}  {:>12.6}  {:>24}  {:>11}  n/a",
                        r.analytic, "n/a", ""
                    )?,
                    Some(e) => {
                        let inside = inside_ci(r.analytic, e);
                        outside += usize::from(!inside);
                        writeln!(
                            out,
                            "  {label:<width$}  {:>12.6}  {:>24}  {:>+11.3e}  {}",
                            r.analytic,
                            format!("{:.6} ± {:.2e}", e.mean, e.ci95),
                            e.mean - r.analytic,
                            if inside { "yes" } else { "no" }
                        )?;
                    }
                    None => writeln!(out, "  {label:<width$}  {:>12.6}", r.analytic)?,
                }
            }
            if sim.is_some() {
                writeln!(
                    out,
                    "\n{} of {} analytic values lie inside the simulation's 95% CI (about 1 in 20 falls outside by chance{})",
                    compared - outside,
                    compared,
                    if f.bistability.is_some() {
                        "; more here: the model is bistable, see the warning above"
                    } else {
                        ""
                    }
                )?;
            }
        }
    }
    Ok(())
}

fn print_outside(
    out: &mut impl Write,
    name: &str,
    reasons: &[String],
    (b, blocked): (Option<&ClosedBounds>, Option<&str>),
    sim: Option<&RunResults>,
    format: Format,
) -> Result<()> {
    // The simulated throughput against the bounds: outside only when the
    // whole 95% CI is beyond a bound (1e-9 relative for rounding).
    let check = b.zip(sim).map(|(b, r)| {
        let x = r.system.throughput_per_s;
        let slack = x.ci95 + 1e-9 * x.mean;
        let within = x.mean - slack <= b.throughput_upper_per_s
            && b.throughput_lower_per_s.is_none_or(|l| x.mean + slack >= l);
        (x, within)
    });
    match format {
        Format::Json => {
            let mut v =
                json!({ "model": name, "product_form": false, "reasons": reasons, "bounds": b });
            if let Some(why) = blocked {
                v["bounds_unavailable"] = json!(why);
            }
            if let Some((x, within)) = check {
                // System figures under `system`, as in every other JSON.
                v["simulation"] = json!({
                    "system": { "throughput_per_s": x },
                    "within_bounds": within,
                });
            }
            writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        }
        Format::Csv => {
            let mut csv = qsim_report::CsvRows::new();
            csv.line("scope,name,metric,kind,analytic,mean,ci95,inside_ci");
            if let Some(b) = b {
                let opt = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
                let bound = |csv: &mut qsim_report::CsvRows, metric: &str, value: String| {
                    csv.row(["system", "", metric, "bound", &value, "", "", ""]);
                };
                bound(
                    &mut csv,
                    "throughput_upper_per_s",
                    b.throughput_upper_per_s.to_string(),
                );
                bound(
                    &mut csv,
                    "throughput_lower_per_s",
                    opt(b.throughput_lower_per_s),
                );
                bound(&mut csv, "response_lower_s", b.response_lower_s.to_string());
                bound(&mut csv, "response_upper_s", opt(b.response_upper_s));
                if let Some((x, within)) = check {
                    csv.row([
                        "system",
                        "",
                        "throughput_per_s",
                        "simulation",
                        "",
                        &x.mean.to_string(),
                        &x.ci95.to_string(),
                        &within.to_string(),
                    ]);
                }
                if let Some(why) = &b.lower_unavailable {
                    eprintln!("warning: no lower throughput bound: {why}");
                }
            }
            write!(out, "{}", csv.finish())?;
            for r in reasons {
                eprintln!("warning: not product-form: {r}");
            }
        }
        Format::Table => {
            writeln!(
                out,
                "{name} is outside the exact methods (not product-form):"
            )?;
            for r in reasons {
                writeln!(out, "  - {r}")?;
            }
            match b {
                Some(b) => {
                    writeln!(
                        out,
                        "\nbounds at N = {} (they hold for any service distribution; not estimates):",
                        b.population
                    )?;
                    writeln!(
                        out,
                        "  throughput  <= {:.4} /s ({})",
                        b.throughput_upper_per_s, b.throughput_upper_limited_by
                    )?;
                    match (b.throughput_lower_per_s, &b.lower_unavailable) {
                        (Some(x), _) => writeln!(out, "  throughput  >= {x:.4} /s")?,
                        (None, why) => writeln!(
                            out,
                            "  throughput  lower bound not available: {}",
                            why.as_deref().unwrap_or("unknown")
                        )?,
                    }
                    writeln!(out, "  response    >= {:.6} s", b.response_lower_s)?;
                    if let Some(r) = b.response_upper_s {
                        writeln!(out, "  response    <= {r:.6} s")?;
                    }
                    if let Some((x, within)) = check {
                        writeln!(
                            out,
                            "  simulation  {} /s: {}",
                            qsim_kernel::number::mean_ci(x.mean, x.ci95),
                            if within {
                                "within the bounds"
                            } else {
                                "OUTSIDE the bounds (a bound or the simulator is wrong)"
                            }
                        )?;
                    }
                }
                None => match blocked {
                    Some(why) => writeln!(out, "\nno bounds: {why}")?,
                    None => writeln!(
                        out,
                        "\nno bounds: they need a single closed class without stations that lose jobs when full"
                    )?,
                },
            }
            writeln!(out, "\nsimulate it with: qsim run {name}")?;
        }
    }
    Ok(())
}

fn print_range(
    out: &mut impl Write,
    name: &str,
    rows: &[(u32, Solution, Option<ClosedBounds>)],
    format: Format,
) -> Result<()> {
    let upper = |b: &Option<ClosedBounds>| b.as_ref().map(|b| b.throughput_upper_per_s);
    let r_lower = |b: &Option<ClosedBounds>| b.as_ref().map(|b| b.response_lower_s);
    match format {
        Format::Json => {
            let points: Vec<Value> = rows
                .iter()
                .map(|(n, f, b)| {
                    json!({
                        "population": n,
                        "throughput_per_s": f.throughput_per_s,
                        "response_time_s": f.response_time_s,
                        "throughput_upper_bound_per_s": upper(b),
                        "response_lower_bound_s": r_lower(b),
                    })
                })
                .collect();
            let v = json!({ "model": name, "method": "exact MVA", "exactness": "exact", "points": points });
            writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        }
        Format::Csv => {
            let mut csv = qsim_report::CsvRows::new();
            csv.line(
                "population,throughput_per_s,response_time_s,throughput_upper_bound_per_s,response_lower_bound_s",
            );
            let opt = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
            for (n, f, b) in rows {
                csv.row([
                    n.to_string(),
                    f.throughput_per_s.to_string(),
                    f.response_time_s.to_string(),
                    opt(upper(b)),
                    opt(r_lower(b)),
                ]);
            }
            write!(out, "{}", csv.finish())?;
        }
        Format::Table => {
            writeln!(
                out,
                "exact MVA of {name} (X and R exact; bounds are bounds)"
            )?;
            writeln!(
                out,
                "  {:>8}  {:>14}  {:>14}  {:>14}  {:>14}",
                "N", "X /s", "R s", "X bound /s", "R bound s"
            )?;
            for (n, f, b) in rows {
                writeln!(
                    out,
                    "  {n:>8}  {:>14.6}  {:>14.6}  {:>14.6}  {:>14.6}",
                    f.throughput_per_s,
                    f.response_time_s,
                    upper(b).unwrap_or(f64::NAN),
                    r_lower(b).unwrap_or(f64::NAN)
                )?;
            }
        }
    }
    Ok(())
}
