//! The `qsim` command: parse options, load the model, run, report.

use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

mod cmd;

/// Discrete-event simulator for queueing networks whose service centers
/// slow down under contention.
#[derive(Parser, Debug)]
#[command(name = "qsim", version, about, long_about = None)]
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
    /// Combine the outputs of `qsim sweep --shard` into one sweep.
    Merge(cmd::sweep::MergeArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    Completions(cmd::completions::CompletionsArgs),
    /// Print the manual page (roff), or write one page per command to a directory.
    Man(cmd::man::ManArgs),
    /// Print a JSON Schema (draft 2020-12) of the model format.
    Schema(cmd::schema::SchemaArgs),
}

/// A reader that closes our output early (`qsim ... | head`) is a normal
/// end, not a crash: `println!` panics on EPIPE, so such a panic exits 0
/// quietly, whichever command was writing. Errors returned through `?`
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
        default(info);
    }));
}

fn main() -> ExitCode {
    end_quietly_on_broken_pipe();
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Run(args) => cmd::run::run(args),
        Command::Check(args) => cmd::run::check(args),
        Command::Fit(args) => cmd::fit::fit(args),
        Command::Solve(args) => cmd::solve::run(args),
        Command::Sweep(args) => cmd::sweep::sweep(args),
        Command::Plot(args) => cmd::sweep::plot(args),
        Command::Merge(args) => cmd::sweep::merge(args),
        Command::Report(args) => cmd::report::report(args),
        Command::Completions(args) => cmd::completions::completions(args, Cli::command()),
        Command::Man(args) => cmd::man::man(args, Cli::command()),
        Command::Schema(args) => cmd::schema::schema(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => cmd::report_error(&err),
    }
}
