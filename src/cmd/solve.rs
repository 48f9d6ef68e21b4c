//! `qsim solve`: analytic figures (MVA, M/M/c, Jackson, bounds) for the
//! models that are within reach of exact methods, optionally side by side
//! with simulation.

use super::UsageError;
use super::run::{Format, ModelArgs, RunOptions};
use anyhow::{Context, Result};
use clap::Args;
use qsim_analytic::{bounds, jackson, mva, single, usl};
use qsim_kernel::{Discipline, Network, RunResults, Speed, StationKind, Workload};
use serde::Serialize;
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
    /// Output format (table or json).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// Analytic figures of one station.
#[derive(Clone, Debug, Serialize)]
pub struct StationFigures {
    /// Station name.
    pub name: String,
    /// Completions per second.
    pub throughput_per_s: f64,
    /// Busy fraction per server.
    pub utilization: f64,
    /// Mean number present.
    pub mean_jobs: f64,
}

/// Analytic figures of a model at one population.
#[derive(Clone, Debug, Serialize)]
pub struct Figures {
    /// Method used.
    pub method: String,
    /// Closed population (single closed class), if any.
    pub population: Option<u32>,
    /// System throughput, per second.
    pub throughput_per_s: f64,
    /// System response time (think excluded), seconds.
    pub response_time_s: f64,
    /// Per station, in model order.
    pub stations: Vec<StationFigures>,
}

/// Reasons a network is outside the exact methods; empty when it is within.
pub fn not_product_form(network: &Network) -> Vec<String> {
    let spec = network.spec();
    let mut why = Vec::new();
    let multi = spec.classes.len() > 1;
    for st in &spec.stations {
        let name = &st.name;
        let dists: Vec<_> = st.service.iter().flatten().collect();
        let all_exp = dists.iter().all(|d| d.is_exponential());
        let same_mean = dists
            .windows(2)
            .all(|w| (w[0].mean() - w[1].mean()).abs() <= 1e-12 * w[0].mean());
        match &st.kind {
            StationKind::Delay => {}
            StationKind::Queue {
                servers,
                discipline,
            } => {
                match discipline {
                    // PS with c servers serves min(n, c) jobs' worth at any
                    // service distribution: a product-form load-dependent station.
                    Discipline::Ps => {}
                    Discipline::Priority => {
                        why.push(format!("station {name}: priority scheduling"))
                    }
                    Discipline::Fcfs | Discipline::Lcfs => {
                        if !all_exp && st.speed.is_none() {
                            why.push(
                                format!(
                                    "station {name}: {discipline:?} with non-exponential service",
                                    discipline = discipline
                                )
                                .to_lowercase(),
                            );
                        }
                        if !same_mean {
                            why.push(format!(
                                "station {name}: FCFS with class-dependent service times"
                            ));
                        }
                    }
                }
                if multi && *servers > 1 {
                    why.push(format!(
                        "station {name}: several servers in a multi-class model"
                    ));
                }
            }
            StationKind::Latch(l) => {
                if l.numa.is_some() || l.spin.is_some() {
                    why.push(format!("station {name}: latch with a contention mechanism"));
                } else if !all_exp && st.speed.is_none() {
                    why.push(format!(
                        "station {name}: latch with non-exponential hold time"
                    ));
                }
            }
            StationKind::Batch(_) => {
                why.push(format!("station {name}: batch (group commit) service"))
            }
            StationKind::Link(l) if l.pipeline > 1 || l.max_batch > 1 => {
                why.push(format!("station {name}: link with pipelining or batching"))
            }
            StationKind::Link(_) if !all_exp => why.push(format!(
                "station {name}: link with a non-exponential round trip"
            )),
            StationKind::Link(_) => {}
            StationKind::Fork(_) | StationKind::Join(_) => {
                why.push(format!("station {name}: fork/join"))
            }
        }
        if st.speed.is_some() && multi {
            why.push(format!(
                "station {name}: a speed curve in a multi-class model"
            ));
        }
    }
    for r in &spec.regions {
        if r.limit.is_some() {
            why.push(format!("region {}: admission limit", r.name));
        }
    }
    for (i, c) in spec.classes.iter().enumerate() {
        if network.visit_ratios(i).is_none() {
            why.push(format!(
                "class {}: its routing never ends an interaction",
                c.name
            ));
        }
    }
    why
}

/// Mean service time of station `s` for class `c` (0 when the class does not visit).
fn mean_service(network: &Network, s: usize, c: usize) -> f64 {
    network.spec().stations[s]
        .service
        .get(c)
        .and_then(|d| d.as_ref())
        .map_or(0.0, |d| d.mean())
}

fn servers_of(kind: &StationKind) -> Option<u32> {
    match kind {
        StationKind::Delay => None,
        StationKind::Queue { servers, .. } => Some(*servers),
        _ => Some(1),
    }
}

/// Solves a single closed class at populations 1..=`max_n` by exact (load-dependent) MVA.
pub(crate) fn closed_single(network: &Network, max_n: u32) -> Result<(mva::MvaSolution, f64)> {
    let spec = network.spec();
    let visits = network.visit_ratios(0).context("visit ratios")?;
    let think = match &spec.classes[0].workload {
        Workload::Closed { think, .. } => think.as_ref().map_or(0.0, |d| d.mean()),
        Workload::Open { .. } => unreachable!("closed_single is only called for closed classes"),
    };
    let mut stations = Vec::new();
    for (s, st) in spec.stations.iter().enumerate() {
        let v = visits[s];
        let mean = mean_service(network, s, 0);
        let service = match (&st.speed, &st.kind) {
            (Some(Speed::Table(points)), _) => {
                mva::Service::Table(mva::RateTable::new(points.clone())?)
            }
            (
                Some(Speed::Usl {
                    sigma,
                    kappa,
                    lambda,
                }),
                _,
            ) => mva::Service::Usl(usl::UslModel::new(*sigma, *kappa, *lambda)?),
            (None, StationKind::Delay) => mva::Service::Delay {
                service_time_s: mean,
            },
            (None, kind) => match servers_of(kind) {
                Some(c) if c > 1 => mva::Service::MultiServer {
                    servers: c,
                    service_time_s: mean,
                },
                _ => mva::Service::Queue {
                    service_time_s: mean,
                },
            },
        };
        let mut station = mva::Station::with_service(st.name.clone(), service);
        station.visits = v;
        stations.push(station);
    }
    Ok((mva::exact(&stations, think, max_n)?, think))
}

fn figures_from_mva(network: &Network, sol: &mva::MvaSolution, n: u32, method: &str) -> Figures {
    let p = sol.at(n).expect("population solved");
    Figures {
        method: method.into(),
        population: Some(n),
        throughput_per_s: p.throughput_per_s,
        response_time_s: p.response_s,
        stations: sol
            .station_names
            .iter()
            .zip(&p.stations)
            .zip(&network.spec().stations)
            .map(|((name, s), st)| StationFigures {
                name: name.clone(),
                throughput_per_s: s.throughput_per_s,
                // Like the simulator, a delay station has no utilization.
                utilization: if matches!(st.kind, StationKind::Delay) {
                    0.0
                } else {
                    s.utilization
                },
                mean_jobs: s.queue_length,
            })
            .collect(),
    }
}

/// Analytic figures for a product-form network.
pub fn solve(network: &Network) -> Result<Figures> {
    let spec = network.spec();
    let closed: Vec<usize> = (0..spec.classes.len())
        .filter(|&c| matches!(spec.classes[c].workload, Workload::Closed { .. }))
        .collect();
    let open: Vec<usize> = (0..spec.classes.len())
        .filter(|&c| matches!(spec.classes[c].workload, Workload::Open { .. }))
        .collect();
    let visits: Vec<Vec<f64>> = (0..spec.classes.len())
        .map(|c| network.visit_ratios(c).unwrap_or_default())
        .collect();
    if open.is_empty() && closed.len() == 1 {
        let Workload::Closed { population, .. } = spec.classes[0].workload else {
            unreachable!()
        };
        let (sol, _) = closed_single(network, population)?;
        return Ok(figures_from_mva(
            network,
            &sol,
            population,
            "exact MVA (load-dependent where needed)",
        ));
    }
    if closed.is_empty() {
        // Open classes: every station is an M/M/c (or M/M/inf) fed by the
        // sum of the classes' flows (BCMP product form).
        let rates: Vec<f64> = open
            .iter()
            .map(|&c| match &spec.classes[c].workload {
                Workload::Open { interarrival } => 1.0 / interarrival.mean(),
                Workload::Closed { .. } => 0.0,
            })
            .collect();
        let mut stations = Vec::new();
        let mut response = 0.0;
        let total_rate: f64 = rates.iter().sum();
        for (s, st) in spec.stations.iter().enumerate() {
            let lam: f64 = open
                .iter()
                .zip(&rates)
                .map(|(&c, r)| r * visits[c][s])
                .sum();
            let mean = open
                .iter()
                .map(|&c| mean_service(network, s, c))
                .fold(0.0, f64::max);
            let visit_total: f64 = open
                .iter()
                .zip(&rates)
                .map(|(&c, r)| r * visits[c][s])
                .sum::<f64>()
                / total_rate;
            let (util, jobs, resp) = if lam == 0.0 || mean == 0.0 {
                (0.0, 0.0, 0.0)
            } else {
                match servers_of(&st.kind) {
                    None => {
                        let m = single::mminf(lam, 1.0 / mean)?;
                        (0.0, m.mean_number, m.mean_response_s)
                    }
                    Some(c) => {
                        let m = single::mmc(lam, 1.0 / mean, c)
                            .map_err(|e| UsageError(format!("station {}: {e}", st.name)))?;
                        (m.utilization, m.mean_number, m.mean_response_s)
                    }
                }
            };
            response += visit_total * resp;
            stations.push(StationFigures {
                name: st.name.clone(),
                throughput_per_s: lam,
                utilization: util,
                mean_jobs: jobs,
            });
        }
        return Ok(Figures {
            method: "open product-form network (M/M/c per station)".into(),
            population: None,
            throughput_per_s: total_rate,
            response_time_s: response,
            stations,
        });
    }
    // Several closed classes, or a mixed network: multi-class MVA over
    // delays and single-server queues.
    let classed: Vec<mva::ClassedStation> = spec
        .stations
        .iter()
        .enumerate()
        .map(|(s, st)| {
            let kind = if matches!(st.kind, StationKind::Delay) {
                mva::CenterKind::Delay
            } else {
                mva::CenterKind::Queue
            };
            let demands = (0..spec.classes.len())
                .map(|c| visits[c][s] * mean_service(network, s, c))
                .collect();
            mva::ClassedStation::new(st.name.clone(), kind, demands)
        })
        .collect();
    let classes: Vec<jackson::Class> = spec
        .classes
        .iter()
        .map(|c| jackson::Class {
            name: c.name.clone(),
            workload: match &c.workload {
                Workload::Closed { population, think } => jackson::Workload::Closed {
                    population: *population,
                    think_time_s: think.as_ref().map_or(0.0, |d| d.mean()),
                },
                Workload::Open { interarrival } => jackson::Workload::Open {
                    arrival_rate_per_s: 1.0 / interarrival.mean(),
                },
            },
        })
        .collect();
    let sol = jackson::solve_mixed(&classed, &classes)?;
    let throughput: f64 = sol.classes.iter().map(|c| c.throughput_per_s).sum();
    let response = sol
        .classes
        .iter()
        .map(|c| c.throughput_per_s * c.response_s)
        .sum::<f64>()
        / throughput;
    Ok(Figures {
        method: if open.is_empty() {
            "exact multi-class MVA"
        } else {
            "mixed product-form network (MVA)"
        }
        .into(),
        population: None,
        throughput_per_s: throughput,
        response_time_s: response,
        stations: sol
            .stations
            .iter()
            .enumerate()
            .map(|(s, st)| StationFigures {
                name: st.name.clone(),
                throughput_per_s: (0..spec.classes.len())
                    .map(|c| sol.classes[c].throughput_per_s * visits[c][s])
                    .sum(),
                utilization: if matches!(spec.stations[s].kind, StationKind::Delay) {
                    0.0
                } else {
                    st.utilization
                },
                mean_jobs: st.queue_length,
            })
            .collect(),
    })
}

/// Asymptotic and balanced-job bounds for a single closed class, treating
/// every non-delay station as one server with demand visits × mean service
/// (a speed-curve station: visits / its highest rate).
pub(crate) fn closed_bounds(network: &Network, n: u32) -> Option<(bounds::Bounds, bounds::Bounds)> {
    let spec = network.spec();
    let closed: Vec<_> = spec
        .classes
        .iter()
        .filter(|c| matches!(c.workload, Workload::Closed { .. }))
        .collect();
    if spec.classes.len() != 1 || closed.len() != 1 {
        return None;
    }
    let visits = network.visit_ratios(0)?;
    let Workload::Closed { think, .. } = &spec.classes[0].workload else {
        return None;
    };
    let mut z = think.as_ref().map_or(0.0, |d| d.mean());
    let mut demands = Vec::new();
    for (s, st) in spec.stations.iter().enumerate() {
        let d = match &st.speed {
            Some(Speed::Table(points)) => {
                visits[s] / points.iter().map(|p| p.1).fold(0.0, f64::max)
            }
            Some(sp @ Speed::Usl { .. }) => {
                visits[s]
                    / (1..=n.max(1))
                        .map(|k| sp.rate(f64::from(k)))
                        .fold(0.0, f64::max)
            }
            None => {
                let mean = mean_service(network, s, 0);
                match &st.kind {
                    StationKind::Delay => {
                        z += visits[s] * mean;
                        continue;
                    }
                    StationKind::Queue { servers, .. } => visits[s] * mean / f64::from(*servers),
                    StationKind::Batch(b) => {
                        visits[s] * (mean / f64::from(b.max_batch) + b.per_job_s)
                    }
                    StationKind::Link(l) => visits[s] * mean / f64::from(l.pipeline * l.max_batch),
                    StationKind::Fork(_) | StationKind::Join(_) => continue,
                    StationKind::Latch(_) => visits[s] * mean,
                }
            }
        };
        demands.push(d);
    }
    if demands.is_empty() {
        return None;
    }
    Some((
        bounds::asymptotic(&demands, z, n).ok()?,
        bounds::balanced_job(&demands, z, n).ok()?,
    ))
}

/// Populations of `--population-range`, in the sweep's range syntax
/// (`a..b:step`, `a..b:x2`, or a list); each a whole number of at least 1.
fn parse_range(spec: &str) -> Result<Vec<u32>> {
    let bad = |why: String| {
        UsageError(format!(
            "--population-range {spec}: {why}; expected e.g. 1..200:10"
        ))
    };
    let vary = qsim_sweep::VarySpec::parse(&format!("population={spec}"))
        .map_err(|e| bad(e.to_string()))?;
    vary.values()
        .iter()
        .map(|v| match v.text().parse::<u32>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(bad(format!("{} is not a whole number of jobs >= 1", v.text())).into()),
        })
        .collect()
}

/// `qsim solve`.
pub fn run(args: &SolveArgs) -> Result<ExitCode> {
    let model = args.model.load()?;
    let network = &model.network;
    let reasons = not_product_form(network);
    let name = args.model.model.display().to_string();
    let population = match (&network.spec().classes[..], network.spec().classes.len()) {
        ([c], 1) => match c.workload {
            Workload::Closed { population, .. } => Some(population),
            Workload::Open { .. } => None,
        },
        _ => None,
    };

    if !reasons.is_empty() {
        let mut out =
            serde_json::json!({ "model": name, "product_form": false, "reasons": reasons });
        let b = population.and_then(|n| closed_bounds(network, n));
        if args.format == Format::Json {
            if let Some((a, bj)) = b {
                out["asymptotic_bounds"] = serde_json::to_value(a)?;
                out["balanced_job_bounds"] = serde_json::to_value(bj)?;
            }
            println!("{}", serde_json::to_string_pretty(&out)?);
        } else {
            println!("{name} is outside the exact methods (not product-form):");
            for r in &reasons {
                println!("  - {r}");
            }
            match b {
                Some((a, bj)) => {
                    println!(
                        "\nbounds at N = {} (each station as one server with its demand):",
                        a.population
                    );
                    println!(
                        "  throughput  asymptotic {:.4} .. {:.4} /s, balanced-job {:.4} .. {:.4} /s",
                        a.throughput_lower_per_s,
                        a.throughput_upper_per_s,
                        bj.throughput_lower_per_s,
                        bj.throughput_upper_per_s
                    );
                    println!(
                        "  response    asymptotic >= {:.6} s, balanced-job {:.6} .. {:.6} s",
                        a.response_lower_s, bj.response_lower_s, bj.response_upper_s
                    );
                }
                None => println!("\nno bounds: they need a single closed class"),
            }
            println!("\nsimulate it with: qsim run {name}");
        }
        return Ok(ExitCode::SUCCESS);
    }

    if let Some(range) = &args.population_range {
        let ns = parse_range(range)?;
        let Some(_) = population else {
            return Err(UsageError(
                "--population-range needs a model with one closed class".into(),
            )
            .into());
        };
        let max = *ns.iter().max().expect("non-empty range");
        let (sol, _) = closed_single(network, max)?;
        let rows: Vec<serde_json::Value> = ns
            .iter()
            .map(|&n| {
                let f = figures_from_mva(network, &sol, n, "exact MVA");
                let b = closed_bounds(network, n);
                serde_json::json!({
                    "population": n,
                    "throughput_per_s": f.throughput_per_s,
                    "response_time_s": f.response_time_s,
                    "throughput_upper_bound_per_s": b.map(|(a, _)| a.throughput_upper_per_s),
                    "response_lower_bound_s": b.map(|(a, _)| a.response_lower_s),
                })
            })
            .collect();
        if args.format == Format::Json {
            println!(
                "{}",
                serde_json::to_string_pretty(
                    &serde_json::json!({ "model": name, "method": "exact MVA", "points": rows })
                )?
            );
        } else {
            println!("exact MVA of {name}");
            println!(
                "  {:>8}  {:>14}  {:>14}  {:>14}  {:>14}",
                "N", "X /s", "R s", "X bound /s", "R bound s"
            );
            for r in &rows {
                println!(
                    "  {:>8}  {:>14.6}  {:>14.6}  {:>14.6}  {:>14.6}",
                    r["population"].as_u64().unwrap_or(0),
                    r["throughput_per_s"].as_f64().unwrap_or(f64::NAN),
                    r["response_time_s"].as_f64().unwrap_or(f64::NAN),
                    r["throughput_upper_bound_per_s"]
                        .as_f64()
                        .unwrap_or(f64::NAN),
                    r["response_lower_bound_s"].as_f64().unwrap_or(f64::NAN)
                );
            }
        }
        return Ok(ExitCode::SUCCESS);
    }

    let figures = solve(network).map_err(|e| match e.downcast::<UsageError>() {
        Ok(u) => anyhow::Error::from(u),
        Err(e) => UsageError(format!("{name}: {e:#}")).into(),
    })?;
    let sim = if args.compare {
        let mut config = model.run.clone();
        args.options.apply(&mut config)?;
        Some(qsim_kernel::run(network, &config).with_context(|| format!("simulating {name}"))?)
    } else {
        None
    };
    print_figures(&name, &figures, sim.as_ref(), args.format)?;
    Ok(ExitCode::SUCCESS)
}

/// One comparison row: analytic value, simulation mean and CI, inside or not.
fn row(label: String, exact: f64, sim: Option<qsim_kernel::Estimate>) -> serde_json::Value {
    match sim {
        Some(e) => serde_json::json!({
            "metric": label, "analytic": exact, "simulation": { "mean": e.mean, "ci95": e.ci95 },
            "difference": e.mean - exact, "inside_ci": (e.mean - exact).abs() <= e.ci95,
        }),
        None => serde_json::json!({ "metric": label, "analytic": exact }),
    }
}

fn print_figures(name: &str, f: &Figures, sim: Option<&RunResults>, format: Format) -> Result<()> {
    let mut rows = vec![
        row(
            "system.throughput_per_s".into(),
            f.throughput_per_s,
            sim.map(|r| r.system.throughput_per_s),
        ),
        row(
            "system.response_time_s".into(),
            f.response_time_s,
            sim.map(|r| qsim_kernel::Estimate {
                mean: r.system.response_time_s.mean,
                ci95: r.system.response_time_s.ci95,
            }),
        ),
    ];
    for (i, s) in f.stations.iter().enumerate() {
        let st = sim.map(|r| &r.stations[i]);
        rows.push(row(
            format!("stations.{}.throughput_per_s", s.name),
            s.throughput_per_s,
            st.map(|x| x.throughput_per_s),
        ));
        rows.push(row(
            format!("stations.{}.utilization", s.name),
            s.utilization,
            st.map(|x| x.utilization),
        ));
        rows.push(row(
            format!("stations.{}.mean_jobs", s.name),
            s.mean_jobs,
            st.map(|x| x.mean_jobs),
        ));
    }
    if format == Format::Json {
        let v = serde_json::json!({ "model": name, "product_form": true, "method": f.method, "population": f.population, "rows": rows });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "{name}: {}{}",
        f.method,
        f.population
            .map_or(String::new(), |n| format!(" at N = {n}"))
    );
    let width = rows
        .iter()
        .map(|r| r["metric"].as_str().unwrap_or("").len())
        .max()
        .unwrap_or(10);
    if sim.is_some() {
        println!(
            "  {:<width$}  {:>12}  {:>24}  {:>11}  inside CI",
            "metric", "analytic", "simulation ± 95% CI", "difference"
        );
    } else {
        println!("  {:<width$}  {:>12}", "metric", "analytic");
    }
    let mut outside = 0;
    for r in &rows {
        let metric = r["metric"].as_str().unwrap_or("");
        let exact = r["analytic"].as_f64().unwrap_or(f64::NAN);
        if let Some(s) = r.get("simulation") {
            let inside = r["inside_ci"].as_bool().unwrap_or(false);
            outside += usize::from(!inside);
            println!(
                "  {metric:<width$}  {exact:>12.6}  {:>24}  {:>+11.3e}  {}",
                format!(
                    "{:.6} ± {:.2e}",
                    s["mean"].as_f64().unwrap_or(f64::NAN),
                    s["ci95"].as_f64().unwrap_or(f64::NAN)
                ),
                r["difference"].as_f64().unwrap_or(f64::NAN),
                if inside { "yes" } else { "no" }
            );
        } else {
            println!("  {metric:<width$}  {exact:>12.6}");
        }
    }
    if sim.is_some() {
        println!(
            "\n{} of {} analytic values lie inside the simulation's 95% CI (about 1 in 20 falls outside by chance)",
            rows.len() - outside,
            rows.len()
        );
    }
    Ok(())
}
