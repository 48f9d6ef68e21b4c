//! `qsim man`: the manual page, generated from the clap definition.

use anyhow::{Context, Result};
use clap::Args;
use clap_mangen::Man;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// The sections clap does not generate: EXIT STATUS and EXAMPLES (roff).
pub const TRAILER: &str = r#".SH "EXIT STATUS"
.TP
.B 0
Success.
.TP
.B 1
A failure other than bad input: a run error (an unstable open workload, the
event limit), every point of a sweep failed, an output file that could not be
written.
.TP
.B 2
A bad model or bad arguments: the message names the file, line, column and
key path, or the option at fault.
.TP
.B 130
Interrupted (Ctrl-C); a sweep keeps the points it finished (\fB\-\-resume\fR
continues it).
.SH EXAMPLES
.TP
.B qsim check models/cpu_two_disks.toml
Validate a model and estimate its run's cost.
.TP
.B qsim run models/latch_numa.toml \-\-set workload.population=500
Simulate with one value overridden; figures with 95% confidence intervals.
.TP
.B qsim run models/mm1.toml \-\-format json \-\-seed 7
Machine-readable output; the same seed gives the same bytes at any thread count.
.TP
.B qsim sweep models/latch_numa.toml \-\-vary workload.population=10..600:10 \-\-report
Run a grid in parallel, find the peak, knee and saturation point, draw charts
and write report.html.
.TP
.B qsim solve models/cpu_two_disks.toml \-\-compare
Exact MVA beside simulation.
.TP
.B qsim fit examples/data/measurements.csv \-\-x threads \-\-y tps
Fit the Universal Scalability Law to measurements.
"#;

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
            let main = dir.join("qsim.1");
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&main)
                .with_context(|| format!("opening {}", main.display()))?;
            f.write_all(TRAILER.as_bytes())
                .with_context(|| format!("writing {}", main.display()))?;
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
            page.extend_from_slice(TRAILER.as_bytes());
            std::io::stdout().lock().write_all(&page)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
