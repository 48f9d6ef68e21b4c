//! `qsim run` and `qsim check`.

use super::UsageError;
use anyhow::{Context, Result};
use clap::Args;
use qsim_kernel::budget::{self, human_bytes, human_duration};
use qsim_kernel::{
    Budget, Control, InitialState, Network, RunConfig, RunError, RunResults, Stop, Warmup,
};
use qsim_model::{Model, Override};
use qsim_report::DerivedResult;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Output formats of `qsim run` (defined beside `--export`, which shares them).
pub use super::export::Format;

/// Options shared by commands that load a model.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// The model file (TOML).
    pub model: PathBuf,
    /// Override a model value by key path, e.g. `--set workload.population=500`;
    /// `*` and `?` in a key set every match, e.g. `--set 'stations.cpu*.servers=2'`;
    /// a relative value changes the model's number: `*0.8`, `/2`, `+10%`, `-10%`.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
}

/// The most model warnings printed (each repeated problem of a generated
/// model would otherwise print a line).
const SHOWN_MODEL_WARNINGS: usize = 20;

impl ModelArgs {
    /// Loads the model with its overrides; errors are usage errors (exit 2).
    pub fn load(&self) -> Result<Model> {
        self.load_echoing(true)
    }

    /// [`ModelArgs::load`], printing the model's warnings on stderr only
    /// when `echo` (a command whose output shows them prints them once).
    pub fn load_echoing(&self, echo: bool) -> Result<Model> {
        let overrides = parse_overrides(&self.set)?;
        let model = qsim_model::load_file(&self.model, &overrides)?;
        if !echo {
            return Ok(model);
        }
        // A warning does not stop the model; it is said where it is found
        // (the first few: a generated model may repeat one thousands of times).
        for w in model.warnings.iter().take(SHOWN_MODEL_WARNINGS) {
            eprintln!("{w}");
        }
        if let Some(more) = model.warnings.len().checked_sub(SHOWN_MODEL_WARNINGS)
            && more > 0
        {
            eprintln!("... and {more} more model warnings not shown");
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

/// The most worker threads `--threads` accepts: far beyond any machine
/// qsim runs on, and below the count at which starting them fails.
const MAX_THREADS: usize = 4096;

impl RunOptions {
    /// Checks every option's range, naming the flag (a usage error, exit 2),
    /// so a value out of range is refused before the model is run.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(UsageError(m).into());
        if self.replications == Some(0) {
            return bad("--replications must be at least 1, found 0".into());
        }
        if self.jobs == Some(0) {
            return bad("--jobs must be at least 1, found 0".into());
        }
        if let Some(t) = self.time {
            if !(t.is_finite() && t > 0.0) {
                return bad(format!(
                    "--time must be a positive number of seconds, found {t}"
                ));
            }
            if t > qsim_kernel::dist::MAX_CLOCK_S {
                return bad(format!(
                    "--time must be at most 1e12 s (the latest time the simulation clock resolves to 1e-4 s), found {t}"
                ));
            }
        }
        if let Some(n) = self.threads
            && n > MAX_THREADS
        {
            return bad(format!(
                "--threads must be at most {MAX_THREADS} (0 or no --threads: one per core), found {n}"
            ));
        }
        Ok(())
    }

    /// Applies the options on top of the model's own run settings.
    pub fn apply(&self, config: &mut RunConfig) -> Result<()> {
        self.validate()?;
        if let Some(seed) = self.seed {
            config.seed = seed;
        }
        if let Some(r) = self.replications {
            config.replications = r;
        }
        if let Some(n) = self.jobs {
            config.stop = Stop::Jobs(n);
        }
        if let Some(t) = self.time {
            config.stop = Stop::Time(t);
        }
        if let Some(t) = self.threads {
            config.threads = t;
        }
        Ok(())
    }
}

/// Limits that refuse a run before anything is allocated.
#[derive(Args, Debug, Clone)]
pub struct GuardArgs {
    /// Most memory a run may need, e.g. `4G`, `512M`, `1T` (binary units;
    /// default: half of the memory available now, and of the address-space
    /// limit when one is set).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_memory: Option<u64>,
    /// Refuse a run estimated to need more events than this in all
    /// (default 3.6e10, about half an hour on two cores); --force lifts it.
    #[arg(long, value_name = "N", value_parser = parse_events)]
    pub max_events: Option<f64>,
    /// Go ahead where a safety check refuses: a run estimated above
    /// --max-events, or (sweep) an output directory that holds a different
    /// sweep, which is then replaced.
    #[arg(long)]
    pub force: bool,
}

/// Parses `--max-events`: a positive number such as `1e9`.
fn parse_events(text: &str) -> std::result::Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(n) if n.is_finite() && n >= 1.0 => Ok(n),
        _ => Err(format!(
            "expected a number of events such as 1e9, found `{text}`"
        )),
    }
}

impl GuardArgs {
    /// The limits these options set.
    pub fn budget(&self) -> Budget {
        Budget {
            max_memory_bytes: self.max_memory.unwrap_or_else(default_max_memory),
            max_events: if self.force {
                None
            } else {
                self.max_events.or(Budget::default().max_events)
            },
        }
    }

    /// Estimates the run of `model` and refuses it (usage error, exit 2)
    /// when it is beyond the limits, blaming what set the key at fault: the
    /// flag (`--jobs`, `--time`, `--replications`) or `--set` that gave it,
    /// else the key's line and column in the model file.
    pub fn check(
        &self,
        network: &Network,
        config: &RunConfig,
        model: &ModelArgs,
        options: Option<&RunOptions>,
    ) -> Result<budget::Estimate> {
        self.budget()
            .check(network, config, &class_visits(network))
            .map_err(|e| UsageError(blame_budget_key(&e, model, options)).into())
    }
}

/// The message of a budget refusal, led by where the key at fault was set.
fn blame_budget_key(
    e: &budget::BudgetError,
    model: &ModelArgs,
    options: Option<&RunOptions>,
) -> String {
    blame_budget(e, model, options, &[], "")
}

/// [`blame_budget_key`] for commands that set keys of their own: each of
/// `setters` is a key path and the argument that set it (`--vary SPEC`,
/// `--change PATH=VALUE`, most specific first), blamed before `--set` and
/// the model file; `context` (e.g. `at point 3 (...): `) leads the
/// refusal.
pub fn blame_budget(
    e: &budget::BudgetError,
    model: &ModelArgs,
    options: Option<&RunOptions>,
    setters: &[(String, String)],
    context: &str,
) -> String {
    let text = format!("{context}{e}");
    let key = match e {
        budget::BudgetError::Memory { key, .. }
        | budget::BudgetError::ReplicationEvents { key, .. }
        | budget::BudgetError::Events { key, .. } => key.clone(),
        _ => String::new(),
    };
    let flag = options.and_then(|o| match key.as_str() {
        "simulation.stop" => o
            .jobs
            .map(|n| ("--jobs", n.to_string()))
            .or(o.time.map(|t| ("--time", t.to_string()))),
        "simulation.replications" => o.replications.map(|r| ("--replications", r.to_string())),
        _ => None,
    });
    if let Some((flag, value)) = flag {
        let message = e.to_string().replace(&key, flag);
        return format!(
            "{flag} {value}: {context}{}",
            message.trim_start_matches(&format!("{flag}: "))
        );
    }
    let file = model.model.display();
    let related = |path: &str| {
        path == key || key.starts_with(&format!("{path}.")) || path.starts_with(&format!("{key}."))
    };
    if let Some((_, by)) = setters.iter().find(|(path, _)| related(path)) {
        return format!("{file}: {text} (set by {by})");
    }
    if let Some(set) = model.set.iter().find(|s| {
        let path = s.split_once('=').map_or(s.as_str(), |(p, _)| p.trim());
        related(path)
    }) {
        return format!("{file}: {text} (set by --set {set})");
    }
    match std::fs::read_to_string(&model.model)
        .ok()
        .and_then(|t| qsim_model::key_location(&t, &key))
    {
        Some((line, column)) => format!("{file}:{line}:{column}: {text}"),
        None => format!("{file}: {text}"),
    }
}

/// Each class's visits per interaction, for the budget's event count.
pub fn class_visits(network: &Network) -> Vec<Option<Vec<f64>>> {
    let spec = network.spec();
    (0..spec.classes.len())
        .map(|c| qsim_theory::visits::visit_ratios(spec, c).map(|v| v.parent))
        .collect()
}

/// Parses `SIZE`: a number of bytes with an optional K, M, G or T suffix
/// (powers of 1024; `KiB`, `MB`... are read the same way).
pub fn parse_size(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("expected a size such as 4G or 512M, found `{text}`"))?;
    let shift = match unit.trim().to_ascii_uppercase().trim_end_matches('B') {
        "" => 0,
        "K" | "KI" => 10,
        "M" | "MI" => 20,
        "G" | "GI" => 30,
        "T" | "TI" => 40,
        _ => return Err(format!("unknown size unit in `{text}`; use K, M, G or T")),
    };
    let bytes = value * (1u64 << shift) as f64;
    if !(bytes.is_finite() && bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(format!(
            "expected a size of at least 1 byte, found `{text}`"
        ));
    }
    Ok(bytes as u64)
}

/// Half of `MemAvailable` in /proc/meminfo (the other half is left to the
/// system and other programs), or 8 GiB where that file does not exist; and
/// at most half of the process's address-space limit (`ulimit -v`,
/// `prlimit --as`), beyond which an allocation would fail anyway.
pub fn default_max_memory() -> u64 {
    let limit = address_space_limit().map_or(u64::MAX, |b| b / 2);
    available_memory_half().min(limit)
}

/// The address-space limit of this process in bytes, if it has one.
fn address_space_limit() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn available_memory_half() -> u64 {
    let available_kib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|rest| {
                    rest.trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse::<u64>()
                        .ok()
                })
        });
    match available_kib {
        Some(kib) => kib.saturating_mul(1024) / 2,
        None => 8 << 30,
    }
}

/// A run stopped by Ctrl-C: the message says what was kept; exit code 130.
#[derive(Debug)]
pub struct Interrupted(pub String);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Interrupted {}

/// Runs `network` with a progress bar on a terminal (after the first
/// second) and stops at Ctrl-C with [`RunError::Cancelled`].
pub fn run_with_progress(network: &Network, config: &RunConfig) -> Result<RunResults, RunError> {
    let control = crate::interrupt_control();
    let per_rep = match (config.effective_warmup(), config.stop) {
        (Warmup::Jobs(w), Stop::Jobs(s)) => Some(w.saturating_add(s)),
        (Warmup::None, Stop::Jobs(s)) => Some(s),
        _ => None,
    };
    let total = per_rep.map(|n| n.saturating_mul(u64::from(config.replications)));
    with_progress(&control, total, || {
        qsim_kernel::run_with(network, config, &control)
    })
}

/// Runs `work` on a second thread while this one shows the jobs `control`
/// counts as done: a bar towards `total` (a spinner when it is unknown), on
/// a terminal only and only after the first second.
pub fn with_progress<T: Send>(
    control: &Control,
    total: Option<u64>,
    work: impl FnOnce() -> T + Send,
) -> T {
    let start_jobs = control.jobs_done();
    std::thread::scope(|scope| {
        let worker = scope.spawn(work);
        let started = Instant::now();
        let mut bar: Option<indicatif::ProgressBar> = None;
        while !worker.is_finished() {
            std::thread::sleep(Duration::from_millis(50));
            if bar.is_none() && started.elapsed() > Duration::from_secs(1) {
                bar = Some(progress_bar(total));
            }
            if let Some(b) = &bar {
                let done = control.jobs_done() - start_jobs;
                b.set_position(total.map_or(done, |t| done.min(t)));
            }
        }
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        worker
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

fn progress_bar(total: Option<u64>) -> indicatif::ProgressBar {
    let target = indicatif::ProgressDrawTarget::stderr();
    match total {
        Some(t) => {
            let b = indicatif::ProgressBar::with_draw_target(Some(t), target);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} jobs, {elapsed} elapsed, about {eta} left",
            ) {
                b.set_style(style);
            }
            b
        }
        None => {
            let b = indicatif::ProgressBar::with_draw_target(None, target);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{spinner} {pos} jobs, {elapsed} elapsed")
            {
                b.set_style(style);
            }
            b
        }
    }
}

/// Turns a cancelled run into the message of `qsim run`.
fn interrupted(err: RunError, config: &RunConfig) -> anyhow::Error {
    match err {
        RunError::Cancelled => Interrupted(format!(
            "interrupted: nothing written ({} of {} replications had finished)",
            crate::interrupt_control().replications_done(),
            config.replications
        ))
        .into(),
        e => e.into(),
    }
}

/// Arguments of `qsim run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    options: RunOptions,
    #[command(flatten)]
    guards: GuardArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Write the output to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Also write the results in FORMAT (a `--format` name) to FILE,
    /// repeatable: `--export json=run.json --export csv=run.csv`.
    #[arg(long, value_name = "FORMAT=FILE", value_parser = super::export::parse)]
    export: Vec<super::export::Export>,
    /// Skip the second run, started from the other end (all jobs at the
    /// station whose speed falls the most, or all thinking when the model
    /// starts at a station), that detects bistable (metastable) models.
    #[arg(long)]
    no_bistability_check: bool,
    #[command(flatten)]
    trace: super::trace::TraceArgs,
}

/// Arguments of `qsim check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    guards: GuardArgs,
}

/// `qsim check`: load and validate, print a one-line summary.
pub fn check(args: &CheckArgs) -> Result<ExitCode> {
    let model = args.model.load()?;
    let estimate = args
        .guards
        .check(&model.network, &model.run, &args.model, None)?;
    let spec = model.network.spec();
    println!(
        "{}: ok ({}, {}, {})",
        args.model.model.display(),
        super::count(spec.stations.len() as u64, "station"),
        super::count(spec.classes.len() as u64, "class"),
        super::count(spec.regions.len() as u64, "region")
    );
    println!("{}", estimate_line(&estimate));
    Ok(ExitCode::SUCCESS)
}

/// `qsim run`: simulate and report.
pub fn run(args: &RunArgs) -> Result<ExitCode> {
    if let Some(out) = &args.output {
        refuse_overwriting_input(out, &args.model.model)?;
        super::check_output("--output", out, super::Out::File, &[&args.model.model])?;
    }
    super::export::check_distinct(&args.export, args.output.as_ref())?;
    for e in &args.export {
        super::check_output("--export", &e.path, super::Out::File, &[&args.model.model])?;
    }
    args.trace.refuse_overwriting(&args.model.model)?;
    args.trace.check_outputs(&args.model.model)?;
    args.options.validate()?;
    // Figures that cannot be taken at face value, model warnings included:
    // said next to the figures, and on stderr too when the figures go to a
    // file or a pipe (on a terminal the output already shows them: once is
    // enough).
    use std::io::IsTerminal;
    let echo = args.output.is_some() || !std::io::stdout().is_terminal();
    let model = args.model.load_echoing(echo)?;
    let mut config = model.run.clone();
    args.options.apply(&mut config)?;
    config.trace = args.trace.plan(&model.network, &config)?;
    args.trace.check_memory(
        &model.network,
        &config,
        args.guards.budget().max_memory_bytes,
    )?;
    let model_name = args.model.model.display().to_string();
    args.guards
        .check(&model.network, &config, &args.model, Some(&args.options))?;
    let results = run_with_progress(&model.network, &config)
        .map_err(|e| interrupted(e, &config))
        .with_context(|| format!("simulating {model_name}"))?;
    // A metric that fails in some replication (a division by zero, say)
    // carries its reason; the run's other figures are kept.
    let derived: Vec<DerivedResult> = model
        .derived_values(&results)
        .into_iter()
        .map(|d| DerivedResult {
            name: d.name,
            value: d.value.map_err(|e| e.to_string()),
        })
        .collect();
    // Model warnings as the table shows them ("warning: FILE:L:C: ..."),
    // the first few of them, with the count of the rest.
    let mut warnings: Vec<String> = model
        .warnings
        .iter()
        .take(SHOWN_MODEL_WARNINGS)
        .map(|w| w.to_string().replacen(": warning: ", ": ", 1))
        .collect();
    if model.warnings.len() > SHOWN_MODEL_WARNINGS {
        warnings.push(format!(
            "{} more model warnings not shown",
            model.warnings.len() - SHOWN_MODEL_WARNINGS
        ));
    }
    warnings.extend(derived
        .iter()
        .filter_map(|d| {
            let why = d.value.as_ref().err()?;
            Some(format!(
                "derived metric {} could not be evaluated: {why}; the other figures stand (check its expression in [metrics])",
                d.name
            ))
        })
    );
    let mut new_warnings: Vec<String> = results.warnings.iter().map(|w| w.to_string()).collect();
    new_warnings.extend(above_bound_warning(&model.network, &results));
    new_warnings.extend(args.trace.write(&model.network, &results, &model_name)?);
    for w in new_warnings {
        if echo {
            eprintln!("warning: {w}");
        }
        warnings.push(w);
    }
    let mut checks = Vec::new();
    if !args.no_bistability_check
        && let Some((other, station)) = qsim_kernel::bistable::other_end(&model.network)
    {
        // The second run is not traced: the trace is of the model as given.
        let config = RunConfig {
            trace: None,
            ..config.clone()
        };
        args.guards
            .check(&other, &config, &args.model, Some(&args.options))?;
        let second = run_with_progress(&other, &config)
            .map_err(|e| interrupted(e, &config))
            .context("bistability check run")?;
        let verdict = qsim_kernel::bistable::compare(&model.network, station, &results, &second);
        if verdict.bistable {
            warnings.push(verdict.describe());
        } else {
            checks.push(verdict.describe());
        }
    }
    let report = qsim_report::Report {
        model: &model_name,
        config: &config,
        results: &results,
        derived,
        initial_state: initial_state(&model.network),
        open: model
            .network
            .spec()
            .classes
            .iter()
            .all(|c| matches!(c.workload, qsim_kernel::Workload::Open { .. })),
        offered_per_s: offered_per_s(&model.network, &config),
        warnings,
    };
    for e in &args.export {
        std::fs::write(&e.path, super::export::render(&report, &checks, e.format)?)
            .with_context(|| format!("writing {}", e.path.display()))?;
    }
    let text = super::export::render(&report, &checks, args.format)?;
    match &args.output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?
        }
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Refuses an output path that names the input file (compared as canonical
/// paths, so `./m.toml` and `m.toml` are the same file): writing the report
/// there would destroy the model.
pub fn refuse_overwriting_input(output: &std::path::Path, input: &std::path::Path) -> Result<()> {
    let (Ok(o), Ok(i)) = (std::fs::canonicalize(output), std::fs::canonicalize(input)) else {
        // An output that does not exist yet cannot be the input.
        return Ok(());
    };
    if o == i {
        return Err(UsageError(format!(
            "--output {} is the model file itself; write the report to another file",
            output.display()
        ))
        .into());
    }
    Ok(())
}

/// `qsim check`'s line about the cost of a run.
fn estimate_line(e: &budget::Estimate) -> String {
    let mut line = format!(
        "estimate: {} of memory ({} per replication × {} at once; key {})",
        human_bytes(e.bytes),
        human_bytes(e.replication_bytes),
        e.parallel,
        e.memory_key
    );
    if let (Some(events), Some(s)) = (e.events, e.seconds()) {
        line.push_str(&format!(
            ", at least {events:.2e} events ({} on {})",
            about_duration(s),
            super::count(e.threads, "thread")
        ));
    }
    line
}

/// "about 5 minutes", or "under a second" where rounding would say 0 s.
pub fn about_duration(seconds: f64) -> String {
    if seconds < 0.5 {
        "under a second".into()
    } else {
        format!("about {}", human_duration(seconds))
    }
}

/// A closed network cannot sustain more than its asymptotic throughput
/// bound (qsim-theory); a measured throughput above it, beyond its own
/// interval, was taken during a transient.
/// The completions per second a steady state of an open model has: the
/// arrival rates summed, when every class is open, no station loses jobs
/// and no load schedule changes the rates.
fn offered_per_s(network: &Network, config: &RunConfig) -> Option<f64> {
    let spec = network.spec();
    if !config.schedule.is_empty() || spec.capacity.iter().any(Option::is_some) {
        return None;
    }
    spec.classes
        .iter()
        .map(|c| match &c.workload {
            qsim_kernel::Workload::Open { interarrival } => Some(1.0 / interarrival.mean()),
            qsim_kernel::Workload::Closed { .. } => None,
        })
        .sum::<Option<f64>>()
        .filter(|x| x.is_finite())
}

fn above_bound_warning(network: &Network, results: &RunResults) -> Option<String> {
    let spec = network.spec();
    let qsim_kernel::Workload::Closed { population, .. } = spec.classes.first()?.workload else {
        return None;
    };
    let bound = qsim_theory::bounds::closed_bounds(spec, 0, population).ok()??;
    let x = results.system.throughput_per_s;
    let margin = if x.ci95.is_finite() { x.ci95 } else { 0.0 };
    let upper = bound.throughput_upper_per_s;
    (x.mean - margin > upper * (1.0 + 1e-9)).then(|| {
        format!(
            "not in steady state: the measured system throughput_per_s {:.4} is above {upper:.4}, the asymptotic bound of this closed network ({}), which no steady state can exceed; the run measured a transient: run longer (--jobs or --time) or discard more with an explicit warmup",
            x.mean, bound.throughput_upper_limited_by
        )
    })
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
        InitialState::Placed(ref list) => format!(
            "{} jobs placed at stations (the final state of a previous run), the rest thinking",
            list.iter().map(|p| u64::from(p.jobs)).sum::<u64>()
        ),
    }
}
