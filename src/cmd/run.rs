//! `qsim run` and `qsim check`.

use super::UsageError;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use qsim_kernel::{Estimate, InitialState, Network, RunConfig, RunResults, Stop, estimate};
use qsim_model::{Model, Override};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Output formats of `qsim run`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned text for people.
    Table,
    /// One JSON object (schema in README.md).
    Json,
    /// Long-format CSV: scope,name,metric,mean,ci95.
    Csv,
}

/// Options shared by commands that load a model.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// The model file (TOML).
    pub model: PathBuf,
    /// Override a model value by key path, e.g. `--set workload.population=500`;
    /// `*` and `?` in a key set every match, e.g. `--set 'stations.cpu*.servers=2'`.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
}

impl ModelArgs {
    /// Loads the model with its overrides; errors are usage errors (exit 2).
    pub fn load(&self) -> Result<Model> {
        let overrides = parse_overrides(&self.set)?;
        let model = qsim_model::load_file(&self.model, &overrides)?;
        // A warning does not stop the model; it is said where it is found.
        for w in &model.warnings {
            eprintln!("{w}");
        }
        Ok(model)
    }
}

/// Parses `--set` arguments.
pub fn parse_overrides(set: &[String]) -> Result<Vec<Override>> {
    set.iter()
        .map(|s| Override::parse(s).map_err(anyhow::Error::from))
        .collect()
}

/// Options that change how a model is run (not what it is).
#[derive(Args, Debug, Clone)]
pub struct RunOptions {
    /// Root seed of the random streams.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Independent replications (confidence intervals need at least 2).
    #[arg(long)]
    pub replications: Option<u32>,
    /// Stop each replication after this many completed jobs (after warm-up).
    #[arg(long, conflicts_with = "time")]
    pub jobs: Option<u64>,
    /// Stop each replication after this many simulated seconds (after warm-up).
    #[arg(long)]
    pub time: Option<f64>,
    /// Worker threads (default: one per core); never changes the results.
    #[arg(long)]
    pub threads: Option<usize>,
}

impl RunOptions {
    /// Applies the options on top of the model's own run settings.
    pub fn apply(&self, config: &mut RunConfig) -> Result<()> {
        if let Some(seed) = self.seed {
            config.seed = seed;
        }
        if let Some(r) = self.replications {
            if r == 0 {
                return Err(UsageError("--replications must be at least 1, found 0".into()).into());
            }
            config.replications = r;
        }
        if let Some(n) = self.jobs {
            if n == 0 {
                return Err(UsageError("--jobs must be at least 1, found 0".into()).into());
            }
            config.stop = Stop::Jobs(n);
        }
        if let Some(t) = self.time {
            if !(t.is_finite() && t > 0.0) {
                return Err(UsageError(format!(
                    "--time must be a positive number of seconds, found {t}"
                ))
                .into());
            }
            config.stop = Stop::Time(t);
        }
        if let Some(t) = self.threads {
            config.threads = t;
        }
        Ok(())
    }
}

/// Arguments of `qsim run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    options: RunOptions,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Write the output to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Skip the second run, started with all jobs at the station whose speed
    /// falls the most, that detects bistable (metastable) models.
    #[arg(long)]
    no_bistability_check: bool,
}

/// Arguments of `qsim check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    model: ModelArgs,
}

/// `qsim check`: load and validate, print a one-line summary.
pub fn check(args: &CheckArgs) -> Result<ExitCode> {
    let model = args.model.load()?;
    let spec = model.network.spec();
    println!(
        "{}: ok ({} stations, {} classes, {} regions)",
        args.model.model.display(),
        spec.stations.len(),
        spec.classes.len(),
        spec.regions.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// `qsim run`: simulate and report.
pub fn run(args: &RunArgs) -> Result<ExitCode> {
    let model = args.model.load()?;
    let mut config = model.run.clone();
    args.options.apply(&mut config)?;
    let results = qsim_kernel::run(&model.network, &config)
        .with_context(|| format!("simulating {}", args.model.model.display()))?;
    let derived = derived_metrics(&model, &results)?;
    let model_name = args.model.model.display().to_string();
    let mut warnings: Vec<String> = model.warnings.iter().map(|w| w.to_string()).collect();
    // Figures that cannot be taken at face value: said on stderr as well
    // as next to the figures, since the output may go to a file.
    for w in &results.warnings {
        eprintln!("warning: {w}");
        warnings.push(w.to_string());
    }
    if !args.no_bistability_check
        && let Some(w) = bistability_warning(&model.network, &config, &results)?
    {
        warnings.push(w);
    }
    let report = qsim_report::Report {
        model: &model_name,
        config: &config,
        results: &results,
        derived,
        initial_state: initial_state(&model.network),
        warnings,
    };
    let text = match args.format {
        Format::Table => qsim_report::to_table(&report),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&qsim_report::to_json(&report))?;
            s.push('\n');
            s
        }
        Format::Csv => qsim_report::to_csv(&report),
    };
    match &args.output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?
        }
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The station whose speed curve falls furthest below its peak, if any
/// station's speed falls with contention.
fn collapsing_station(network: &Network) -> Option<usize> {
    let spec = network.spec();
    let closed_jobs: u32 = spec
        .classes
        .iter()
        .map(|c| match c.workload {
            qsim_kernel::Workload::Closed { population, .. } => population,
            qsim_kernel::Workload::Open { .. } => 0,
        })
        .sum();
    if closed_jobs < 2 {
        return None;
    }
    let mut best: Option<(usize, f64)> = None;
    for (i, st) in spec.stations.iter().enumerate() {
        let Some(speed) = &st.speed else { continue };
        let n_max = f64::from(closed_jobs);
        let peak = (1..=closed_jobs.min(100_000))
            .map(|n| speed.rate(f64::from(n)))
            .fold(0.0, f64::max);
        let at_full = speed.rate(n_max);
        let drop = at_full / peak;
        if drop < 0.95 && best.is_none_or(|(_, d)| drop < d) {
            best = Some((i, drop));
        }
    }
    best.map(|(i, _)| i)
}

/// Runs the model again with every closed job starting at the collapsing
/// station; when the two throughputs disagree beyond their confidence
/// intervals the model has two operating points, and the warning says so
/// with both answers.
fn bistability_warning(
    network: &Network,
    config: &RunConfig,
    results: &RunResults,
) -> Result<Option<String>> {
    if network.spec().initial != InitialState::Thinking {
        return Ok(None);
    }
    let Some(station) = collapsing_station(network) else {
        return Ok(None);
    };
    let mut spec = network.spec().clone();
    spec.initial = InitialState::AtStation(station);
    let Ok(other) = Network::new(spec) else {
        return Ok(None);
    };
    let second = qsim_kernel::run(&other, config).context("bistability check run")?;
    let a = results.system.throughput_per_s;
    let b = second.system.throughput_per_s;
    let name = &network.spec().stations[station].name;
    if (a.mean - b.mean).abs() > a.ci95 + b.ci95 {
        Ok(Some(format!(
            "the model is bistable: starting with all jobs thinking gives {:.4} ± {:.4} /s, starting with all jobs at {name} gives {:.4} ± {:.4} /s; the network stays in the state it starts in (metastable collapse), so neither figure alone is the answer (set simulation.initial to choose, or --no-bistability-check to skip this check)",
            a.mean, a.ci95, b.mean, b.ci95
        )))
    } else {
        Ok(None)
    }
}

/// Describes where closed jobs start.
pub fn initial_state(network: &Network) -> String {
    let any_closed = network
        .spec()
        .classes
        .iter()
        .any(|c| matches!(c.workload, qsim_kernel::Workload::Closed { .. }));
    if !any_closed {
        return "empty (open arrivals)".into();
    }
    match network.spec().initial {
        InitialState::Thinking => "all jobs thinking".into(),
        InitialState::AtStation(s) => format!("all jobs at {}", network.spec().stations[s].name),
    }
}

/// Evaluates the model's derived metrics on every replication and returns
/// their means with 95% CIs.
pub fn derived_metrics(model: &Model, results: &RunResults) -> Result<Vec<(String, Estimate)>> {
    let mut out = Vec::new();
    for metric in &model.derived {
        let mut values = Vec::with_capacity(results.replication_results.len());
        for rep in &results.replication_results {
            let lookup = |name: &str| qsim_model::metric_value(&model.network, rep, name);
            let v = metric
                .expr
                .eval(&lookup)
                .map_err(|e| UsageError(format!("derived metric {}: {e}", metric.name)))?;
            values.push(v);
        }
        out.push((metric.name.clone(), estimate(values)));
    }
    Ok(out)
}
