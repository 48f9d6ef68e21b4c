//! `qsim run` and `qsim check`.

use super::UsageError;
use anyhow::{Context, Result};
use clap::Args;
use qsim_kernel::budget::{self, human_bytes, human_duration};
use qsim_kernel::{Budget, InitialState, Network, RunConfig, RunError, RunResults, Stop, Warmup};
use qsim_model::{Model, Override};
use qsim_report::DerivedResult;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Output formats of `qsim run` (defined beside `--export`, which shares them).
pub use super::export::Format;
use super::progress::decide_with_progress;
/// The progress bar, Ctrl-C and the runs they wrap (in `progress`).
pub use super::progress::{Interrupted, run_with_progress};

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

/// The most worker threads `--threads` accepts: a replication or point
/// runs on one thread, so threads beyond the cores only take turns, and
/// each costs its stack and its start (4096 turned a 0.1 s run into 17 s);
/// 1024 is past the cores of any machine qsim runs on.
const MAX_THREADS: usize = 1024;

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
            max_memory_bytes: self.memory_limit().0,
            max_events: if self.force {
                None
            } else {
                self.max_events.or(Budget::default().max_events)
            },
        }
    }

    /// The most bytes a run may need and where that limit comes from: a
    /// `--max-memory` at most this machine's memory and swap (a larger one
    /// would let through a run the system cannot hold, which then dies
    /// in the allocator instead of being refused), else the default of
    /// [`default_max_memory`].
    pub fn memory_limit(&self) -> (u64, String) {
        match (self.max_memory, machine_memory()) {
            (Some(m), Some(total)) if m > total => (
                total,
                format!(
                    "this machine's memory and swap ({}), which --max-memory {} exceeds",
                    human_bytes(total),
                    human_bytes(m)
                ),
            ),
            (Some(m), _) => (m, format!("--max-memory {}", human_bytes(m))),
            (None, _) => (
                default_max_memory(),
                "the default: half of the memory available on this machine now; --max-memory sets it"
                    .into(),
            ),
        }
    }

    /// Phases measured in simulated time of a closed model: the kernel's
    /// estimate counts no events for them (a closed class's throughput
    /// has no lower bound from the spec alone), but where qsim-theory gives
    /// one, each interaction is at least one event, so `seconds ×
    /// throughput_lower_per_s` events are certain (a warm-up of 1e10 s
    /// otherwise ran to the per-replication event limit).
    fn check_closed_time(
        &self,
        network: &Network,
        config: &RunConfig,
    ) -> std::result::Result<(), budget::BudgetError> {
        let warm = match config.effective_warmup() {
            Warmup::Time(w) => w,
            _ => 0.0,
        };
        let stop = match config.stop {
            Stop::Time(t) => t,
            Stop::Jobs(_) => 0.0,
        };
        if warm + stop <= 0.0 || config.has_schedule() {
            return Ok(());
        }
        let spec = network.spec();
        let per_s: f64 = (0..spec.classes.len())
            .filter_map(|c| match spec.classes[c].workload {
                qsim_kernel::Workload::Closed { population, .. } => {
                    qsim_theory::bounds::network_bounds(network, c, population)
                        .ok()
                        .flatten()
                        .and_then(|b| b.throughput_lower_per_s)
                }
                qsim_kernel::Workload::Open { .. } => None,
            })
            .filter(|x| x.is_finite() && *x > 0.0)
            .sum();
        if per_s <= 0.0 {
            return Ok(());
        }
        let key = if warm > stop {
            "simulation.warmup"
        } else {
            "simulation.stop"
        };
        let events = (warm + stop) * per_s;
        if events > config.max_events as f64 {
            return Err(budget::BudgetError::ReplicationEvents {
                key: key.into(),
                events,
                limit: config.max_events as f64,
            });
        }
        let most = config.precision.map_or(config.replications, |p| {
            p.max_replications.max(config.replications)
        });
        let total = events * f64::from(most);
        if let Some(limit) = self.budget().max_events
            && total > limit
        {
            let e = budget::estimate(network, config, &class_visits(network));
            return Err(budget::BudgetError::Events {
                key: key.into(),
                events: total,
                limit,
                seconds: total / (budget::EVENTS_PER_S_PER_THREAD * f64::from(e.threads.max(1))),
                threads: e.threads,
            });
        }
        Ok(())
    }

    /// [`GuardArgs::budget`] without a memory limit (`qsim check` without
    /// `--max-memory`: see [`check`]).
    fn budget_unlimited_memory(&self) -> Budget {
        Budget {
            max_memory_bytes: u64::MAX,
            ..self.budget()
        }
    }

    /// Holds each replication of the run to its share of `--max-events`
    /// (the limit over the most replications the run may have), so a run
    /// whose length the estimate cannot bound from the spec (a closed
    /// model stopped by time, say) still stops within the budget, with
    /// [`RunError::EventLimit`]. A run within its share is unchanged.
    pub fn cap_events(&self, config: &mut RunConfig) {
        let Some(limit) = self.budget().max_events else {
            return;
        };
        let most = config.precision.map_or(config.replications, |p| {
            p.max_replications.max(config.replications)
        });
        let share = (limit / f64::from(most.max(1))).ceil();
        if share < config.max_events as f64 {
            config.max_events = share.max(1.0) as u64;
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
            .and_then(|e| self.check_closed_time(network, config).map(|()| e))
            .map_err(|e| {
                let mut text = blame_budget_key(&e, model, options);
                if matches!(e, budget::BudgetError::Memory { .. }) {
                    text.push_str(&format!(" (the limit is {})", self.memory_limit().1));
                }
                UsageError(text).into()
            })
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

/// `MemTotal + SwapTotal` of /proc/meminfo: the most memory this machine
/// could ever give a run, if known.
fn machine_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<u64> {
        let rest = text.lines().find_map(|l| l.strip_prefix(name))?;
        rest.trim()
            .trim_end_matches("kB")
            .trim()
            .parse::<u64>()
            .ok()
    };
    let kib = field("MemTotal:")?.saturating_add(field("SwapTotal:").unwrap_or(0));
    Some(kib.saturating_mul(1024))
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

/// Turns a cancelled run into the message of `qsim run`.
fn interrupted(err: RunError, config: &RunConfig) -> anyhow::Error {
    match err {
        RunError::Cancelled => Interrupted(format!(
            "interrupted: nothing written ({} of {} replications had finished)",
            crate::interrupt_control().replications_done(),
            config.replications
        ))
        .into(),
        RunError::EventLimit { replication, limit } => anyhow::anyhow!(
            "replication {replication} reached its {limit:.3e} events (its share of --max-events over {}) before its stopping rule; shorten the run (--jobs or --time), or raise --max-events (--force lifts it)",
            super::count(config.replications, "replication")
        ),
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
    // Validity is the model's own: without --max-memory the memory figure
    // is compared with this machine's free memory only in a note, so the
    // verdict is the same on every machine (an explicit --max-memory, and
    // the event limits, which do not depend on the machine, still refuse).
    let estimate = if args.guards.max_memory.is_some() {
        args.guards
            .check(&model.network, &model.run, &args.model, None)?
    } else {
        args.guards
            .budget_unlimited_memory()
            .check(&model.network, &model.run, &class_visits(&model.network))
            .and_then(|e| {
                args.guards
                    .check_closed_time(&model.network, &model.run)
                    .map(|()| e)
            })
            .map_err(|e| UsageError(blame_budget_key(&e, &args.model, None)))?
    };
    let spec = model.network.spec();
    println!(
        "{}: ok ({}, {}, {})",
        args.model.model.display(),
        super::count(spec.stations.len() as u64, "station"),
        super::count(spec.classes.len() as u64, "class"),
        super::count(spec.regions.len() as u64, "region")
    );
    println!("{}", estimate_line(&estimate));
    let (limit, source) = args.guards.memory_limit();
    if args.guards.max_memory.is_none() && estimate.bytes > limit {
        println!(
            "note: on this machine now, `qsim run` would refuse it: {} is more than the limit of {} ({source})",
            human_bytes(estimate.bytes),
            human_bytes(limit)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `qsim run`: simulate and report.
pub fn run(args: &RunArgs) -> Result<ExitCode> {
    let inputs = super::model_inputs(&args.model.model);
    let inputs: Vec<&std::path::Path> = inputs.iter().map(|p| p.as_path()).collect();
    if let Some(out) = &args.output {
        refuse_overwriting_input(out, &args.model.model)?;
        super::check_output("--output", out, super::Out::File, &inputs)?;
    }
    super::export::check_distinct(&args.export, args.output.as_ref())?;
    for e in &args.export {
        super::check_output("--export", &e.path, super::Out::File, &inputs)?;
    }
    args.trace.refuse_overwriting(&args.model.model)?;
    args.trace.check_outputs(&inputs)?;
    // Every file this run writes is a different file (hard links and
    // symlinks included), --export ones too.
    let mut outputs = vec![
        ("--output", args.output.as_deref()),
        ("--trace", args.trace.trace.as_deref()),
        ("--plot", args.trace.plot.as_deref()),
    ];
    outputs.extend(
        args.export
            .iter()
            .map(|e| ("--export", Some(e.path.as_path()))),
    );
    super::refuse_same_outputs(&outputs)?;
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
    // A precision target with no length given: each replication runs long
    // enough for its interval to be trusted (a length the user fixed with
    // --jobs or --time is kept, and warned about after the run).
    let mut lengthened = None;
    if args.options.jobs.is_none()
        && args.options.time.is_none()
        && let Some(stop) =
            qsim_theory::relaxation::stop_for_precision(model.network.spec(), &config)
    {
        lengthened = Some(format!(
            "each replication was lengthened from {} to {} for the precision target: this model needs about {} relaxation times per replication before its intervals can be trusted",
            describe_stop(config.stop),
            describe_stop(stop),
            qsim_theory::relaxation::RELAXATIONS_NEEDED
        ));
        config.stop = stop;
    }
    config.trace = args.trace.plan(&model.network, &config)?;
    args.trace.check_memory(
        &model.network,
        &config,
        args.guards.budget().max_memory_bytes,
    )?;
    let model_name = args.model.model.display().to_string();
    args.guards
        .check(&model.network, &config, &args.model, Some(&args.options))?;
    args.guards.cap_events(&mut config);
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
    new_warnings.extend(lengthened);
    // A schedule changes the load or capacity, so neither the model's own
    // bound nor its steady-state relaxation time speaks for the run as a
    // whole.
    if !config.has_schedule() {
        new_warnings.extend(above_bound_warning(&model.network, &results));
        new_warnings.extend(
            qsim_theory::relaxation::short_run(model.network.spec(), &results)
                .map(|s| s.to_string()),
        );
    }
    new_warnings.extend(
        args.trace
            .write(&model.network, &config, &results, &model_name)?,
    );
    for w in new_warnings {
        if echo {
            eprintln!("warning: {w}");
        }
        warnings.push(w);
    }
    let mut checks = Vec::new();
    let mut state = initial_state(&model.network);
    if !args.no_bistability_check
        && let Some((other, _)) = qsim_kernel::bistable::other_end(&model.network)
    {
        // The other end is not traced: the trace is of the model as given.
        let config = RunConfig {
            trace: None,
            ..config.clone()
        };
        args.guards
            .check(&other, &config, &args.model, Some(&args.options))?;
        let verdict = decide_with_progress(&model.network, &config, &results)
            .map_err(|e| interrupted(e, &config))
            .context("bistability check run")?;
        if let Some(v) = verdict {
            if v.bistable {
                warnings.push(v.describe());
                state = v.state_of_given();
            } else {
                checks.push(v.describe());
            }
        }
    }
    // Replications in different modes are said so, with each mode's
    // figures, whether or not the two-ended check ran (in a model with a
    // state-dependent mechanism: elsewhere an outlier is not a state).
    let modes = match qsim_kernel::bistable::collapse_candidate(&model.network) {
        Some(_) => qsim_kernel::bistable::modes_of(&results),
        None => Vec::new(),
    };
    if modes.len() > 1 {
        warnings.push(super::verdict::mixed_warning(
            &model.network,
            &config,
            &modes,
        ));
    }
    let transient = super::transient::of(
        &model.network,
        &config,
        &results,
        args.trace.recovery_fraction,
    );
    let report = qsim_report::Report {
        model: &model_name,
        config: &config,
        results: &results,
        derived,
        initial_state: state,
        open: model
            .network
            .spec()
            .classes
            .iter()
            .all(|c| matches!(c.workload, qsim_kernel::Workload::Open { .. })),
        offered_per_s: offered_per_s(&model.network, &config),
        warnings,
    };
    // One rendering for the main output and every --export: a run whose
    // replications fell into different modes is given mode by mode; a run
    // with a schedule adds its trigger phases and recovery figures.
    let render = |format: Format| -> Result<String> {
        if modes.len() > 1 {
            return super::verdict::mixed_output(
                &report,
                &model.network,
                &modes,
                format == Format::Json,
                format == Format::Csv,
            );
        }
        if let (Format::Json, Some(tr)) = (format, &transient) {
            let mut json = super::export::json_value(&report, &checks);
            if let Some(obj) = json.as_object_mut() {
                let (phases, recovery) = tr.view().json();
                obj.insert("phases".into(), phases);
                obj.insert("recovery".into(), recovery);
            }
            return super::export::json_text(&json);
        }
        let mut text = super::export::render(&report, &checks, format)?;
        match format {
            Format::Table => {
                if let Some(tr) = &transient {
                    text.push_str(&tr.view().table());
                }
            }
            Format::Json => {}
            Format::Csv => {
                // Where the model is bistable, the state the figures belong
                // to, as a comment line like the warnings (the rows stay one
                // table for CSV readers).
                if report.initial_state != initial_state(&model.network) {
                    text.push_str(&format!("# state: {}\n", report.initial_state));
                }
                if let Some(tr) = &transient {
                    text.push_str(&tr.view().csv());
                }
            }
        }
        Ok(text)
    };
    for e in &args.export {
        std::fs::write(&e.path, render(e.format)?)
            .with_context(|| format!("writing {}", e.path.display()))?;
    }
    let text = render(args.format)?;
    match &args.output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?
        }
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Refuses an output path that names the input file (the same device and
/// inode, so `./m.toml`, a symbolic link and a hard link to it are all the
/// same file): writing the report there would destroy the model.
pub fn refuse_overwriting_input(output: &std::path::Path, input: &std::path::Path) -> Result<()> {
    // An output that does not exist yet cannot be the input; one that
    // does is compared by device and inode (a hard link is the same file).
    if input.exists() && super::same_file(output, input) {
        return Err(UsageError(format!(
            "--output {} is the model file itself; write the report to another file",
            output.display()
        ))
        .into());
    }
    Ok(())
}

/// A stop rule in words: "200000 jobs", "1000 s".
fn describe_stop(stop: Stop) -> String {
    match stop {
        Stop::Jobs(n) => format!("{n} jobs"),
        Stop::Time(t) => format!("{t} s"),
    }
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
    let bound = qsim_theory::bounds::network_bounds(network, 0, population).ok()??;
    let x = results.system.throughput_per_s;
    let margin = if x.ci95.is_finite() { x.ci95 } else { 0.0 };
    let upper = bound.throughput_upper_per_s;
    (x.mean - margin > upper * (1.0 + 1e-9)).then(|| {
        format!(
            "not in steady state: the measured system throughput_per_s {} is above {}, the asymptotic bound of this closed network ({}), which no steady state can exceed; the run measured a transient: run longer (--jobs or --time) or discard more with an explicit warmup",
            qsim_kernel::number::mean_ci(x.mean, x.ci95),
            qsim_kernel::sig(upper, 4),
            bound.throughput_upper_limited_by
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
        // "empty (open arrivals)", or a backlog placed at the start.
        return qsim_kernel::bistable::start_label(network);
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
