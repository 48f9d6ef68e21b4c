//! `qsim completions`: shell completion scripts generated from the clap
//! definition, so they never drift from the real options.

use anyhow::{Context, Result};
use clap::Args;
use clap_complete::Shell;
use std::io::Write;
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
    // Generated into memory first: `clap_complete` panics when its writer
    // fails, and a closed pipe (`| head -c 1`, exit 0) or a full disk
    // (exit 1) must end as `report_error` says, not with a panic.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cli, name, &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)
        .and_then(|()| out.flush())
        .context("writing the completion script to standard output")?;
    Ok(ExitCode::SUCCESS)
}
