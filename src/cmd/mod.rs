//! One module per subcommand; each turns its parsed arguments into work and
//! prints the outcome. Only this layer prints.

pub mod charts;
pub mod completions;
pub mod fit;
pub mod hysteresis;
pub mod man;
pub mod report;
pub mod run;
pub mod schema;
pub mod solve;
pub mod sweep;
pub mod trace;
pub mod whatif;

use std::io::ErrorKind;
use std::process::ExitCode;

/// `n` and `noun` agreeing in number: "1 point", "2 points", "1 class",
/// "3 classes" (the nouns qsim counts take `s` or, after `s`, `es`).
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else if noun.ends_with('s') {
        format!("{n} {noun}es")
    } else {
        format!("{n} {noun}s")
    }
}

/// An error that means "bad model or arguments": exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Prints an error chain once and picks the exit code: 2 for bad models or
/// arguments, 0 for a closed output pipe, 1 for anything else.
pub fn report_error(err: &anyhow::Error) -> ExitCode {
    for cause in err.chain() {
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && io.kind() == ErrorKind::BrokenPipe
        {
            return ExitCode::SUCCESS;
        }
    }
    let usage = err.chain().any(|c| {
        c.downcast_ref::<UsageError>().is_some()
            || c.downcast_ref::<qsim_model::ModelErrors>().is_some()
    });
    let mut msg = format!("{err}");
    for cause in err.chain().skip(1) {
        msg.push_str(&format!("\n  caused by: {cause}"));
    }
    eprintln!("error: {}", msg.trim_end());
    if usage {
        ExitCode::from(2)
    } else {
        ExitCode::from(1)
    }
}
