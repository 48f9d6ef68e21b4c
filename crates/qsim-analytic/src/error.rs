//! The error type shared by every solver in this crate.

use thiserror::Error;

/// Why an analytic computation could not be carried out.
///
/// Every message says what was found and what was expected, so it can be
/// shown to a user as it is.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum Error {
    /// A numeric input is out of range (negative rate, NaN, ...).
    #[error("invalid {name}: found {found}, expected {expected}")]
    InvalidParameter {
        /// Name of the parameter, e.g. `arrival_rate_per_s` or `stations[2].demand_s`.
        name: String,
        /// The offending value, formatted.
        found: String,
        /// What a valid value looks like.
        expected: String,
    },
    /// Two inputs that must agree in size do not.
    #[error("size mismatch in {what}: found {found}, expected {expected}")]
    SizeMismatch {
        /// What was being compared.
        what: String,
        /// Size that was found.
        found: usize,
        /// Size that was expected.
        expected: usize,
    },
    /// A queue is saturated: the offered load is at or above its capacity.
    #[error(
        "station {station} is unstable: utilization {utilization:.4}, expected below 1; lower the arrival rate or add servers"
    )]
    Unstable {
        /// Name (or index) of the saturated station.
        station: String,
        /// Offered utilization per server (at least 1).
        utilization: f64,
    },
    /// Too few data points for a fit.
    #[error("too few points for {what}: found {found}, expected at least {needed}")]
    TooFewPoints {
        /// What was being fitted.
        what: String,
        /// Number of usable points found.
        found: usize,
        /// Minimum number of points needed.
        needed: usize,
    },
    /// A column named on the command line or by default is not in the CSV header.
    #[error("column `{column}` not found in the header; available columns: {}", available.join(", "))]
    MissingColumn {
        /// The requested column.
        column: String,
        /// The columns that the header does have.
        available: Vec<String>,
    },
    /// A CSV cell could not be used.
    #[error("line {line}, column `{column}`: found `{found}`, expected {expected}")]
    BadCell {
        /// 1-based line number in the input text.
        line: usize,
        /// Column name from the header.
        column: String,
        /// The cell as written.
        found: String,
        /// What the cell should contain.
        expected: String,
    },
    /// A CSV row is malformed (wrong number of fields, unclosed quote, ...).
    #[error("line {line}: {problem}")]
    BadRow {
        /// 1-based line number in the input text.
        line: usize,
        /// What is wrong with the row.
        problem: String,
    },
    /// An iterative method did not converge.
    #[error(
        "{method} did not converge after {iterations} iterations (last change {last_change:e}, expected below {tolerance:e})"
    )]
    NoConvergence {
        /// The method, e.g. `schweitzer-bard mva`.
        method: String,
        /// Iterations performed.
        iterations: usize,
        /// Size of the last update.
        last_change: f64,
        /// Requested tolerance.
        tolerance: f64,
    },
    /// A linear system has no unique solution.
    #[error("singular system in {what}: {hint}")]
    Singular {
        /// Which computation hit the singular matrix.
        what: String,
        /// What is likely wrong with the input.
        hint: String,
    },
    /// The problem is too large for an exact method.
    #[error("{what} is too large: found {found} states, expected at most {limit}")]
    TooLarge {
        /// What was being built.
        what: String,
        /// Its size.
        found: usize,
        /// The limit.
        limit: usize,
    },
}

/// Shorthand for results in this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Checks that `value` is finite and strictly positive.
pub(crate) fn positive(name: &str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(invalid(name, value, "a finite number above 0"))
    }
}

/// Checks that `value` is finite and not negative.
pub(crate) fn non_negative(name: &str, value: f64) -> Result<f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(invalid(name, value, "a finite number at least 0"))
    }
}

/// Checks that `value` lies in the closed interval [0, 1].
pub(crate) fn fraction(name: &str, value: f64) -> Result<f64> {
    if value.is_finite() && (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(invalid(name, value, "a number between 0 and 1"))
    }
}

/// Builds an [`Error::InvalidParameter`].
pub(crate) fn invalid(name: &str, value: impl std::fmt::Display, expected: &str) -> Error {
    Error::InvalidParameter {
        name: name.to_string(),
        found: value.to_string(),
        expected: expected.to_string(),
    }
}
