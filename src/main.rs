//! The `qsim` command: parse options, load the model, run, report.

use clap::{CommandFactory, Parser, Subcommand};
use qsim_kernel::Control;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};

mod cmd;

/// Discrete-event simulator for queueing networks whose service centers
/// slow down under contention.
#[derive(Parser, Debug)]
#[command(name = "qsim", version = cmd::version::SHORT, long_version = cmd::version::LONG, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Simulate a model and print per-station and system figures with 95% CIs.
    Run(cmd::run::RunArgs),
    /// Validate a model: report every problem with file:line:column.
    Check(cmd::run::CheckArgs),
    /// Fit the Universal Scalability Law to measured (concurrency, throughput) rows.
    Fit(cmd::fit::FitArgs),
    /// Exact analytic figures (MVA, M/M/c, bounds) where the model allows; --compare adds simulation.
    Solve(cmd::solve::SolveArgs),
    /// Run a grid of points in parallel, find the knee, write CSV/JSON and charts.
    Sweep(cmd::sweep::SweepArgs),
    /// Redraw the charts of a saved sweep (its directory or points.csv).
    Plot(cmd::sweep::PlotArgs),
    /// Write DIR/report.html: one self-contained page with a sweep's charts, knee summary, model and settings.
    Report(cmd::report::ReportArgs),
    /// Find the smallest trigger (a schedule's size or length) that tips a model into a lasting collapse.
    Boundary(cmd::boundary::BoundaryArgs),
    /// Compare changes (station speed-ups, overrides) with the baseline at operating points, with common random numbers.
    Whatif(cmd::whatif::WhatIfArgs),
    /// Rare events by splitting or importance sampling: escape times, probabilities of reaching a level, deep tails.
    Rare(cmd::rare::RareArgs),
    /// Combine the outputs of `qsim sweep --shard` into one sweep.
    Merge(cmd::sweep::MergeArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    Completions(cmd::completions::CompletionsArgs),
    /// List the key paths of a model for shell completion (called by the scripts of `qsim completions`).
    #[command(hide = true)]
    CompleteKeys(cmd::completions::CompleteKeysArgs),
    /// Print the manual page (roff), or write one page per command to a directory.
    Man(cmd::man::ManArgs),
    /// Print a JSON Schema (draft 2020-12) of the model format.
    Schema(cmd::schema::SchemaArgs),
}

/// The control every run and sweep watches; the first Ctrl-C cancels it.
static INTERRUPT: OnceLock<Arc<Control>> = OnceLock::new();

/// The process-wide control cancelled by Ctrl-C.
pub(crate) fn interrupt_control() -> Arc<Control> {
    Arc::clone(INTERRUPT.get_or_init(|| Arc::new(Control::new())))
}

/// First Ctrl-C: cancel, so runs stop at their next check and sweeps keep
/// their finished points; a second one exits at once.
fn install_interrupt_handler() {
    let control = interrupt_control();
    // Without a handler Ctrl-C still ends the process (nothing half-written
    // is ever renamed into place), so a failure here is not fatal.
    let _ = ctrlc::set_handler(move || {
        if control.cancelled() {
            std::process::exit(130);
        }
        control.cancel();
    });
}

/// A reader that closes our output early (`qsim ... | head`) is a normal
/// end, not a crash: `println!` panics on EPIPE, so such a panic exits 0
/// quietly, whichever command was writing; any other failure to print
/// exits 1 with a one-line error. Errors returned through `?`
/// are handled the same way by `cmd::report_error`.
fn end_quietly_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to std") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        // Any other failure to print (a full disk: `> /dev/full`) is an
        // error said in one line with exit code 1, not a crash report.
        if let Some(reason) = msg.strip_prefix("failed printing to ") {
            eprintln!("error: cannot write to {reason}");
            std::process::exit(1);
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    end_quietly_on_broken_pipe();
    let cli = Cli::parse();
    if matches!(
        cli.command,
        Command::Run(_) | Command::Sweep(_) | Command::Whatif(_)
    ) {
        install_interrupt_handler();
    }
    let result = match &cli.command {
        Command::Run(args) => cmd::run::run(args),
        Command::Check(args) => cmd::run::check(args),
        Command::Fit(args) => cmd::fit::fit(args),
        Command::Solve(args) => cmd::solve::run(args),
        Command::Sweep(args) if args.hysteresis => cmd::hysteresis::sweep(args),
        Command::Sweep(args) => cmd::sweep::sweep(args),
        Command::Plot(args) => cmd::sweep::plot(args),
        Command::Merge(args) => cmd::sweep::merge(args),
        Command::Whatif(args) => cmd::whatif::whatif(args),
        Command::Boundary(args) => cmd::boundary::boundary(args),
        Command::Report(args) => cmd::report::report(args),
        Command::Rare(args) => cmd::rare::rare(args),
        Command::Completions(args) => cmd::completions::completions(args, Cli::command()),
        Command::CompleteKeys(args) => cmd::completions::complete_keys(args),
        Command::Man(args) => cmd::man::man(args, Cli::command()),
        Command::Schema(args) => cmd::schema::schema(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => match err
            .chain()
            .find_map(|c| c.downcast_ref::<cmd::run::Interrupted>())
        {
            Some(i) => {
                eprintln!("{i}");
                ExitCode::from(130)
            }
            None => cmd::report_error(&err),
        },
    }
}
