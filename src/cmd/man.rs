//! `qsim man`: the manual page, generated from the clap definition.

use anyhow::{Context, Result};
use clap::Args;
use clap_mangen::Man;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `qsim man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write one page per command (qsim.1, qsim-run.1, ...) into this
    /// directory instead of printing a single page to standard output.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub output: Option<PathBuf>,
}

/// Prints `qsim.1` (every subcommand's synopsis and options included) or
/// writes one page per command into `--output`.
pub fn man(args: &ManArgs, cli: clap::Command) -> Result<ExitCode> {
    let mut cli = cli.disable_help_subcommand(true);
    // Building fills in each subcommand's full name ("qsim run") for its synopsis.
    cli.build();
    match &args.output {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            clap_mangen::generate_to(cli.clone(), dir)
                .with_context(|| format!("writing manual pages into {}", dir.display()))?;
            let mut out = std::io::stdout().lock();
            let mut names = vec!["qsim".to_string()];
            names.extend(
                cli.get_subcommands()
                    .map(|s| format!("qsim-{}", s.get_name())),
            );
            for n in names {
                writeln!(out, "{}", dir.join(format!("{n}.1")).display())?;
            }
        }
        None => {
            let mut page = Vec::new();
            Man::new(cli.clone()).render(&mut page)?;
            for sub in cli.get_subcommands() {
                // Each subcommand becomes a section of the one page; its own
                // sections (synopsis, options) become subsections.
                let mut part = Vec::new();
                let m = Man::new(sub.clone());
                m.render_synopsis_section(&mut part)?;
                m.render_description_section(&mut part)?;
                m.render_options_section(&mut part)?;
                writeln!(page, ".SH \"QSIM {}\"", sub.get_name().to_uppercase())?;
                for line in String::from_utf8_lossy(&part).lines() {
                    match line.strip_prefix(".SH ") {
                        Some(rest) => writeln!(page, ".SS {rest}")?,
                        None => writeln!(page, "{line}")?,
                    }
                }
            }
            std::io::stdout().lock().write_all(&page)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
