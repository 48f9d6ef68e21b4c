//! Why a sweep, a resume or a merge could not go on.

use crate::grid::ShardError;
use crate::spec::SpecError;
use std::path::PathBuf;
use thiserror::Error;

/// An error that stops a sweep (a point that fails does not: it is recorded).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SweepError {
    /// A `--vary` spec that does not parse.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A `--shard` that does not parse.
    #[error(transparent)]
    Shard(#[from] ShardError),
    /// The model, with the base overrides only, does not load.
    #[error("{0}")]
    Model(String),
    /// A `--vary` whose path or value the model rejects.
    #[error(
        "invalid --vary `{spec}`: the model accepts none of its values; with {path}={value}:\n{message}"
    )]
    VaryRejected {
        /// The spec as typed.
        spec: String,
        /// Its path.
        path: String,
        /// The value tried.
        value: String,
        /// The model's errors.
        message: String,
    },
    /// A point beyond the budget (memory or events), found while every
    /// point is estimated, before any runs.
    #[error("at point {index} ({point}): {error}")]
    Budget {
        /// The point's position in the grid.
        index: usize,
        /// Its swept values, e.g. `workload.population=1000000`.
        point: String,
        /// Why, with the model key at fault.
        error: qsim_kernel::budget::BudgetError,
    },
    /// An option that makes no sense (e.g. 0 replications).
    #[error("invalid sweep option: {0}")]
    Option(String),
    /// `--resume` on a directory whose sweep has other settings.
    #[error(
        "cannot resume the sweep in {dir}: it was run with different settings ({field} differs: {was} there, {now} now); use --force instead of --resume to replace it, or choose another --output"
    )]
    ResumeMismatch {
        /// The output directory.
        dir: PathBuf,
        /// The first setting that differs.
        field: String,
        /// Its value in the directory.
        was: String,
        /// Its value now.
        now: String,
    },
    /// An output directory that holds a different sweep (without `--force`).
    #[error(
        "{dir} holds a different sweep ({field} differs: {was} there, {now} now); its points would be lost: use --force to replace it, or choose another --output"
    )]
    OutputInUse {
        /// The output directory.
        dir: PathBuf,
        /// The first setting that differs.
        field: String,
        /// Its value in the directory.
        was: String,
        /// Its value now.
        now: String,
    },
    /// Shard outputs that do not form one sweep.
    #[error("cannot merge: {0}")]
    Merge(String),
    /// A directory or file that is not a sweep output.
    #[error("{path}: {message}")]
    NotASweep {
        /// The file or directory.
        path: PathBuf,
        /// What is missing or wrong.
        message: String,
    },
    /// Reading or writing a file.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl SweepError {
    /// Whether the error is in the user's input (model, `--vary`, `--set`,
    /// options, directories that do not fit together) rather than in running
    /// or in the file system. The CLI exits with status 2 for these.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            SweepError::Spec(_)
                | SweepError::Shard(_)
                | SweepError::Model(_)
                | SweepError::VaryRejected { .. }
                | SweepError::Budget { .. }
                | SweepError::Option(_)
                | SweepError::ResumeMismatch { .. }
                | SweepError::OutputInUse { .. }
                | SweepError::Merge(_)
                | SweepError::NotASweep { .. }
        )
    }
}

pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> SweepError {
    let path = path.into();
    move |source| SweepError::Io { path, source }
}
