//! `qsim completions`: shell completion scripts generated from the clap
//! definition, so they never drift from the real options.

use anyhow::Result;
use clap::Args;
use clap_complete::Shell;
use std::process::ExitCode;

/// Arguments of `qsim completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Prints the completion script for `args.shell` to standard output.
pub fn completions(args: &CompletionsArgs, mut cli: clap::Command) -> Result<ExitCode> {
    let name = cli.get_name().to_string();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(args.shell, &mut cli, name, &mut out);
    Ok(ExitCode::SUCCESS)
}
