//! One module per subcommand; each turns its parsed arguments into work and
//! prints the outcome. Only this layer prints.

pub mod boundary;
pub mod charts;
pub mod completions;
pub mod export;
pub mod figures;
pub mod fit;
pub mod hysteresis;
pub mod man;
pub mod progress;
pub mod rare;
pub mod report;
pub mod report_plots;
pub mod run;
pub mod schema;
pub mod solve;
pub mod sweep;
pub mod trace;
pub mod transient;
pub mod verdict;
pub mod version;
pub mod whatif;

use std::io::ErrorKind;
use std::path::Path;
use std::process::ExitCode;

/// What an output flag names.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Out {
    /// A file written whole (a report, CSV, JSON).
    File,
    /// A chart file: `.svg` or `.png`.
    Chart,
    /// A directory, created with its parents when missing.
    Dir,
}

/// Refuses an output path that cannot be written, before any work is done
/// (a usage error naming the flag, exit 2): a chart name without `.svg` or
/// `.png`, a file in a directory that does not exist or a path that is a
/// directory, a directory path that is a file, or one of `inputs`.
pub fn check_output(flag: &str, path: &Path, kind: Out, inputs: &[&Path]) -> anyhow::Result<()> {
    let shown = path.display();
    let bad = |why: String| Err(UsageError(format!("{flag} {shown}: {why}")).into());
    if kind == Out::Chart {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        if ext != "svg" && ext != "png" {
            return bad("cannot tell the chart format; expected a .svg or .png file name".into());
        }
    }
    match kind {
        Out::File | Out::Chart => {
            if path.is_dir() {
                return bad("is a directory; expected a file name".into());
            }
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
            if let Some(dir) = parent {
                if !dir.exists() {
                    return bad(format!(
                        "the directory {} does not exist; create it first",
                        dir.display()
                    ));
                }
                if !dir.is_dir() {
                    return bad(format!("{} is not a directory", dir.display()));
                }
            }
        }
        Out::Dir => {
            // The nearest part of the path that exists must be a directory
            // for the rest to be created under it.
            if let Some(file) = path.ancestors().find(|a| a.exists() && !a.is_dir()) {
                return bad(format!(
                    "{} is a file; expected a directory",
                    file.display()
                ));
            }
        }
    }
    if let Some(input) = inputs.iter().find(|i| same_file(path, i)) {
        return bad(format!(
            "is the input {} itself; write to another file",
            input.display()
        ));
    }
    Ok(())
}

/// Whether `a` and `b` name the same file: the same device and inode when
/// both exist (so a hard link, a symbolic link or `./x` and `x` are caught,
/// which comparing path strings misses), else the same canonical parent
/// directory and file name (two outputs not yet written).
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    if let (Ok(x), Ok(y)) = (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        return x == y;
    }
    let place = |p: &Path| {
        let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
        let dir = std::fs::canonicalize(parent.unwrap_or(Path::new(".")));
        (dir.ok(), p.file_name().map(ToOwned::to_owned))
    };
    let (x, y) = (place(a), place(b));
    x.0.is_some() && x.1.is_some() && x == y
}

/// Refuses two output flags that name the same file (`--trace X -o X`):
/// the second written would replace the first.
pub fn refuse_same_outputs(outputs: &[(&str, Option<&Path>)]) -> anyhow::Result<()> {
    let given: Vec<(&str, &Path)> = outputs
        .iter()
        .filter_map(|&(flag, p)| p.map(|p| (flag, p)))
        .collect();
    for (i, (fa, a)) in given.iter().enumerate() {
        if let Some((fb, _)) = given[i + 1..].iter().find(|(_, b)| same_file(a, b)) {
            return Err(UsageError(format!(
                "{fa} {} and {fb} name the same file; one would overwrite the other: give each its own file",
                a.display()
            ))
            .into());
        }
    }
    Ok(())
}

/// The files a model reads: the model file and the samples files it
/// names, for the outputs that must not replace any of them.
pub fn model_inputs(model: &Path) -> Vec<std::path::PathBuf> {
    let mut files = vec![model.to_path_buf()];
    if let Ok(text) = qsim_model::read_model_text(model) {
        files.extend(qsim_model::sample_files(
            &model.display().to_string(),
            &text,
        ));
    }
    files
}

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
